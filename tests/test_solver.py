"""The exact round solver of the rules package against plain exhaustive search.

``arena/games/kamisado/solver.py`` has its own compiled move generation and a
proof search with cuts, move ordering and a table; here every answer is
checked against a plain search over the pure-Python rules core (every move,
no table, no cut but the first winning move): who wins the round and in how
many plies (the quickest win, the longest defence), on late positions of
every match kind, pushes and deadlocks included; the move it names must
itself keep the value.
"""

from __future__ import annotations

import random
import re
import time

import numpy as np
import pytest
from click.testing import CliRunner
from plain_search import TooBig, plain_value
from test_compiled_search import DEADLOCKS

from arena.cli import main
from arena.games import GameError, get_game
from arena.games.kamisado import GAME
from arena.games.kamisado import round_solver as R
from arena.games.kamisado import solver as S
from arena.games.kamisado.notation import text_to_move
from arena.games.kamisado.position import OVER, PLAY, Position


def careful_move(pos: Position, rng: random.Random) -> int:
    """A move onto the goal row if there is one, else a random move that does not
    hand the opponent one (if any): rounds that last, unlike purely random ones."""
    side = pos.side
    moves = pos.legal_moves()
    safe = []
    for m in moves:
        pos.make(m)
        if pos.phase != PLAY:
            won = pos.last_winner == side
            pos.unmake()
            if won:
                return m
            continue
        handed = False
        if pos.side != side:
            for reply in pos.legal_moves():
                pos.make(reply)
                handed = pos.phase != PLAY and pos.last_winner != side
                pos.unmake()
                if handed:
                    break
        pos.unmake()
        if not handed:
            safe.append(m)
    return rng.choice(safe or moves)


def late_positions(kind: int, count: int, seed: int, nodes: int) -> list[tuple[Position, int, int]]:
    """``(position, winner, distance)``: in-play positions near a round's end in
    matches of ``kind`` (random play to reach later rounds, with more Sumo
    towers; then careful play to the round's end), walking back from the end
    while the plain search takes at most ``nodes``; at least 3 plies from the
    end, as many won as lost for the side to move."""
    rng = random.Random(seed)
    out: dict[bool, list[tuple[Position, int, int]]] = {True: [], False: []}
    seen = {"push": 0, "deadlock": 0}
    while min(len(v) for v in out.values()) < count // 2:
        pos = Position.start(kind=kind)
        for _ in range(rng.randint(0, 400)):
            if pos.phase == OVER:
                break
            pos.make(rng.choice(pos.legal_moves()))
        if pos.phase != PLAY:
            continue
        line: list[Position] = []
        while pos.phase == PLAY:
            line.append(pos.copy())
            pos.make(careful_move(pos, rng))
        for p in reversed(line[-10:]):
            try:
                winner, dist = plain_value(p, nodes, seen)
            except TooBig:
                break
            group = out[winner == p.side]
            if dist >= 3 and len(group) < count - count // 2 and rng.random() < 0.5:
                group.append((p, winner, dist))
    return out[True] + out[False]


def test_the_solver_agrees_with_plain_minimax_on_late_positions_of_every_kind() -> None:
    """Value and exact distance on 300 positions (75 per match kind, about half won)."""
    solver = R.Solver(16)
    seen = {"push": 0, "deadlock": 0}
    for kind in range(4):
        for pos, winner, dist in late_positions(kind, 75, 100 + kind, 2000):
            before = pos.key()
            v = solver.solve(pos.at, pos.square_of, pos.rank, pos.side, pos.required)
            assert pos.key() == before
            assert v.result == (S.WON if winner == pos.side else S.LOST), pos.key()
            assert v.distance == dist, pos.key()
            # The named move keeps the value: the quickest win, the longest defence.
            assert v.move in pos.legal_moves()
            pos.make(v.move)
            after = (pos.last_winner, 0) if pos.phase != PLAY else plain_value(pos, 10**6, seen)
            pos.unmake()
            assert after == (winner, dist - 1), pos.key()
    assert seen["push"] > 100 and seen["deadlock"] > 0  # both were exercised


def test_the_solver_and_the_rules_core_agree_move_by_move() -> None:
    """The solver's own move generation: perft and deadlocks as the rules core."""
    buf = np.zeros((S.MAX_PLY + 1, S.MAX_MOVES), dtype=np.int64)
    start = Position.start()
    at = np.array(start.at, dtype=np.int64)
    sq = np.array(start.square_of, dtype=np.int64)
    rank = np.array(start.rank, dtype=np.int64)
    assert [S.perft(at, sq, rank, S.occupancy(at), 0, -1, d, buf, 0) for d in (1, 2, 3)] == [
        102,
        1150,
        11182,
    ]
    for pos, text in DEADLOCKS:
        at = np.array(pos.at, dtype=np.int64)
        sq = np.array(pos.square_of, dtype=np.int64)
        rank = np.array(pos.rank, dtype=np.int64)
        ended, _, _, _, _, pushed, winner, _ = S.make(
            at, sq, rank, S.occupancy(at), pos.side, text_to_move(text)
        )
        assert ended and winner == pos.side ^ 1


def test_a_table_entry_holds_in_any_game() -> None:
    """The table is kept across calls (and games): the same position solved
    again is answered from it, with the same value and distance."""
    solver = R.Solver(16)
    pos, _, _ = late_positions(2, 2, 7, 2000)[0]
    args = (pos.at, pos.square_of, pos.rank, pos.side, pos.required)
    first = solver.solve(*args)
    again = solver.solve(*args)
    assert (again.result, again.distance) == (first.result, first.distance)
    assert again.nodes <= first.nodes


def test_a_budget_gives_an_unknown_value_with_the_depth_proven() -> None:
    pos = Position.start(kind=0)
    pos.make(text_to_move("h1-h2"))  # the whole round ahead: no proof in 2,000 nodes
    v = R.Solver(16).solve(pos.at, pos.square_of, pos.rank, pos.side, pos.required, max_nodes=2000)
    assert v.result == S.UNKNOWN and v.move in pos.legal_moves()
    assert 0 < v.distance < 16 and v.nodes < 4000
    start = time.monotonic()
    v = R.Solver(16).solve(
        pos.at, pos.square_of, pos.rank, pos.side, pos.required, deadline=start + 0.05
    )
    assert v.result == S.UNKNOWN
    assert time.monotonic() - start < 1.0
    # One alarm thread serves every call of a solver: a deadline already past
    # stops at once, and a later call is not stopped by an earlier deadline.
    solver = R.Solver(16)
    args = (pos.at, pos.square_of, pos.rank, pos.side, pos.required)
    assert solver.solve(*args, deadline=time.monotonic() - 1).result == S.UNKNOWN
    for _ in range(50):
        solver.solve(*args, deadline=time.monotonic() + 0.0005)
    late, _ = late_positions(1, 2, 9, 2000)[0][:2]
    value = solver.solve(
        late.at, late.square_of, late.rank, late.side, late.required, deadline=time.monotonic() + 60
    )
    assert value.result != S.UNKNOWN


def test_game_solve_speaks_actions_and_players() -> None:
    """``Game.solve``: the value for the player to move, the part (round) it is
    about, the move as an action; between rounds, the round just ended."""
    s = GAME.new_state("single")
    s.apply_action("g1-g7")  # Black's winning first move (see docs/ladder.md)
    solution = GAME.solve(s, 60_000)
    assert solution is not None
    assert (solution.winner, solution.player, solution.value) == (0, 1, "lost")
    assert solution.distance == 16 and solution.part == 1
    assert solution.move in s.legal_actions()
    rng = random.Random(3)
    s = GAME.new_state("standard")
    while s.pos.phase == PLAY:
        s.apply_action(rng.choice(s.legal_actions()))
    between = GAME.solve(s, 10)  # the regroup choice: the round is over
    assert between is not None
    assert (between.winner, between.distance, between.move) == (s.pos.last_winner, 0, None)
    assert between.part == 1


def test_sekigahara_says_why_it_has_no_solver() -> None:
    game = get_game("sekigahara")
    assert game.solves is None
    with pytest.raises(GameError, match="hidden information"):
        game.solve(game.new_state(), 10)
    assert get_game("kamisado").solves == "round"


def test_the_board_tables_are_pinned() -> None:
    """The kernels freeze board.py's tables; the digest in solver.py must follow
    them (the module refuses to load otherwise, see its docstring)."""
    assert S.board_digest() == S.BOARD_DIGEST


def test_arena_solve_prints_who_wins_in_how_many_plies() -> None:
    late = "1v+2g+1y1/4r3/n1V2b2/B7/5G+1N+/7o+/p7/R2Y+1PO1 g b long 3-3 7 -"
    result = CliRunner().invoke(main, ["solve", "-p", late, "--hash-mb", "16"])
    assert result.exit_code == 0, result.output
    assert "black wins the round within 3 plies with best play" in result.output
    assert "gold to move, best move f6-f5" in result.output
    assert re.search(r"^nodes [\d,]+ in [\d.]+ s", result.output, re.M)


def test_arena_solve_gives_up_at_its_time_limit() -> None:
    result = CliRunner().invoke(main, ["solve", "--time", "0.2", "--hash-mb", "16"])
    assert result.exit_code == 3  # not an error: no verdict
    assert "unknown: no round win within" in result.output and "--time ran out" in result.output


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (["--game", "sekigahara"], "sekigahara: no exact solver: hidden information"),
        (["--time", "0"], "'--time'"),
        (["-p", "7n/8/8/8/8/8/8/O7 b - single 0-0 1 -"], ""),
    ],
)
def test_arena_solve_bad_input_is_one_line(args: list[str], message: str) -> None:
    result = CliRunner().invoke(main, ["solve", *args])
    assert result.exit_code not in (0, 3)
    assert result.output.strip().count("\n") == 0 and "Traceback" not in result.output
    assert message in result.output
