"""The compiled search core against the rules core and plain Python references.

Every kernel the bots' search uses re-implements something the rules core or
``bots/kamisado_eval.py`` already defines, so each is checked against its
original on positions from random matches of every kind (Sumo ranks, pushes,
deadlocks, late rounds): move generation (the rules package's compiled
kernels, ``arena/games/kamisado/solver.py``) by perft, make/unmake move by
move, the evaluation term for term, the search's value at a fixed depth
against plain negamax, and (in test_solver.py) the exact solver against plain
exhaustive search.
"""

from __future__ import annotations

import random
import threading
import time
from pathlib import Path

import needs
import numpy as np
import pytest
from arena.bots import jit_cache, kamisado_eval
from arena.bots.compiled_search import Board, CompiledSearcher, warm_up, weights
from arena.bots.compiled_search import K as kernels
from arena.bots.kamisado_eval import (
    INF,
    round_end_value,
    win_now_value,
    winning_move,
)
from kamisado_helpers import state

from arena.engine.bot import Engine
from arena.engine.config import EngineConfig
from arena.engine.sandbox import Sandbox
from arena.games.kamisado import GAME, KamisadoState
from arena.games.kamisado.notation import move_to_text, text_to_move, text_to_position
from arena.games.kamisado.position import OVER, PLAY, REGROUP, Position, perft
from arena.plan.builtins import resolve_builtin


def random_positions(
    count: int, seed: int, kinds: tuple[int, ...] = (0, 1, 2, 3)
) -> list[Position]:
    """In-play positions from random matches: any round, any ranks."""
    rng = random.Random(seed)
    out: list[Position] = []
    while len(out) < count:
        pos = Position.start(kind=rng.choice(kinds))
        for _ in range(rng.randint(0, 160)):
            if pos.phase == OVER:
                break
            pos.make(rng.choice(pos.legal_moves()))
        if pos.phase == PLAY:
            out.append(pos.copy())
    return out


def worked_example() -> KamisadoState:
    s = GAME.new_state("standard")
    s.apply_action("c1-a3")
    s.apply_action("b8-h2")
    return s


# Aligned by hand: a table reads better in rows.
# fmt: off
_BLOCKED = {"h2": "b", "g1": "O", "h1": "B", "e7": "R", "d8": "v", "e8": "p", "f8": "g",
            "d1": "G", "a8": "o"}
# fmt: on
"""Black's d1-d2 ends on blue: Gold's blue is blocked on red, Black's red on blue."""


def occ(board: Board) -> int:
    return kernels.occupancy(board.at)


def test_perft_agrees_with_the_rules_core() -> None:
    buf = np.zeros((kernels.MAX_PLY + 1, kernels.MAX_MOVES), dtype=np.int64)
    start = Board(Position.start())
    assert [
        kernels.perft(start.at, start.sq, start.rank, occ(start), 0, -1, d, buf, 0)
        for d in (1, 2, 3, 4)
    ] == [102, 1150, 11182, 105020]
    for pos in random_positions(150, 1):
        b = Board(pos)
        for depth in (1, 2, 3):
            assert kernels.perft(b.at, b.sq, b.rank, occ(b), b.side, b.req, depth, buf, 0) == perft(
                pos, depth
            ), (pos.key(), depth)


def check_make(pos: Position, move: int) -> str:
    """Make ``move`` in the kernels and in ``pos`` (which keeps it) and compare
    them; take it back in the kernels. The round's end reason, or ''."""
    b = Board(pos)
    side = pos.side
    at, sq = b.at.copy(), b.sq.copy()
    ended, nside, nreq, nocc, delta, pushed, winner, promoted = kernels.make(
        b.at, b.sq, b.rank, occ(b), side, move
    )
    rank_before = pos.rank[:]
    pos.make(move)
    assert list(b.at) == pos.at and list(b.sq) == pos.square_of
    assert nocc == kernels.occupancy(b.at)
    assert kernels.board_key(b.sq) == kernels.board_key(sq) ^ delta
    assert ended == (pos.phase != PLAY)
    assert (pushed > 0) == (at[move >> 6] >= 0 and move & 63 != move >> 6)
    if ended:
        assert winner == pos.last_winner
        assert [promoted] == [t for t in range(16) if pos.rank[t] != rank_before[t]]
    else:
        assert (nside, nreq) == (pos.side, pos.required)
    kernels.unmake(b.at, b.sq, side, move, pushed)
    assert (b.at == at).all() and (b.sq == sq).all()
    return pos.last_reason if ended else ""


# Aligned by hand: a table reads better in rows.
# fmt: off
DEADLOCKS = [  # (position, the move that deadlocks), from tests/test_kamisado_rules.py
    (state(_BLOCKED, required="g", kind="standard").pos, "d1-d2"),
    (state({"d4": "G+", "d5": "y", "h7": "R", "g8": "o", "h8": "n", "h2": "v", "g1": "O",
            "h1": "B"}, required="g").pos, "d4-d5"),  # a push that deadlocks
    (worked_example().pos, "a3-e7"),
]
# fmt: on


def test_make_and_unmake_agree_with_the_rules_core_move_by_move() -> None:
    rng = random.Random(2)
    seen = {"home-row": 0, "push": 0}
    for pos in random_positions(60, 3):
        while pos.phase == PLAY:
            legal = sorted(pos.legal_moves())
            assert sorted(CompiledSearcher().legal(Board(pos)).tolist()) == legal
            move = rng.choice(legal)
            seen["push"] += pos.at[move >> 6] >= 0 and move & 63 != move >> 6
            reason = check_make(pos, move)
            if reason:
                seen[reason] = seen.get(reason, 0) + 1
    assert seen["home-row"] > 20 and seen["push"] > 0  # both were exercised
    for pos, text in DEADLOCKS:
        assert check_make(pos.copy(), text_to_move(text)) == "deadlock"


def test_winning_move_and_evaluation_agree_with_the_python_originals() -> None:
    rng = random.Random(4)
    buf = np.zeros(kernels.MAX_MOVES, dtype=np.int64)
    saved = weights()[: len(kernels.WEIGHT_NAMES)]
    try:
        for n, pos in enumerate(random_positions(400, 5)):
            b = Board(pos)
            win = kernels.winning_move(b.at, b.sq, b.rank, occ(b), b.side, b.req)
            assert (win >= 0) == (winning_move(pos) >= 0)
            if win >= 0:
                assert win in pos.legal_moves()
                continue
            if n % 2:  # other weights too: each term is weighted, not hard-wired
                for name in kernels.WEIGHT_NAMES:
                    setattr(kamisado_eval, name, rng.randint(0, 50))
            value = kernels.evaluate(
                b.at, b.sq, b.rank, occ(b), b.side, b.req, weights(), b.match, buf
            )
            assert value == kamisado_eval.evaluate(pos), pos.key()
    finally:
        for name, value in zip(kernels.WEIGHT_NAMES, saved, strict=True):
            setattr(kamisado_eval, name, int(value))


def negamax(pos: Position, depth: int, ply: int) -> int:
    """Plain negamax with the search's conventions (forced actions are free)."""
    if winning_move(pos) >= 0:
        return win_now_value(pos, ply)
    if depth <= 0:
        return kamisado_eval.evaluate(pos)
    moves = pos.legal_moves()
    next_depth = depth - 1 if len(moves) > 1 else depth
    side = pos.side
    best = -INF
    for m in moves:
        pos.make(m)
        if pos.phase != PLAY:
            v = round_end_value(pos, side, ply + 1)
        elif pos.side == side:
            v = negamax(pos, next_depth, ply + 1)
        else:
            v = -negamax(pos, next_depth, ply + 1)
        pos.unmake()
        best = max(best, v)
    return best


def test_search_value_at_a_fixed_depth_is_plain_negamax() -> None:
    """PVS with null windows and move ordering is exact; with the table's
    values ignored it must give plain negamax's value at every depth."""
    checked = 0
    for pos in random_positions(40, 6, kinds=(1, 2)):
        if winning_move(pos) >= 0:
            continue
        searcher = CompiledSearcher(tt_bits=12)
        b = Board(pos)
        order = searcher.ordered(b)
        for depth in (1, 2, 3):
            searcher.ctl[:] = 0
            searcher.ctl[kernels.C_NO_TT] = 1
            move, value = searcher.iteration(b, order, depth, -kernels.INF, kernels.INF, weights())
            expected = max(
                (v for v in (root_child(pos, m, depth) for m in pos.legal_moves())), default=-INF
            )
            assert value == expected, (pos.key(), depth)
            assert root_child(pos, move, depth) == value  # the move has the value
        checked += 1
    assert checked > 25


def root_child(pos: Position, move: int, depth: int) -> int:
    side = pos.side
    pos.make(move)
    if pos.phase != PLAY:
        v = round_end_value(pos, side, 1)
    elif pos.side == side:
        v = negamax(pos, depth - 1, 1)
    else:
        v = -negamax(pos, depth - 1, 1)
    pos.unmake()
    return v


@pytest.mark.parametrize("seconds", [0.0, 0.001, 0.01, 0.05])
def test_a_search_cut_off_anywhere_leaves_its_board_intact(seconds: float) -> None:
    """The watchdog stops the kernel deep in the tree; every move it made must
    be taken back (the principal variation is read from the same arrays)."""
    for pos in random_positions(8, 7, kinds=(1, 2)):
        searcher = CompiledSearcher(tt_bits=16)
        move, _, depth = searcher.think(pos, time.monotonic() + seconds)
        assert move in pos.legal_moves()
        board = searcher.board
        if board is not None:
            fresh = Board(pos)
            assert (board.at == fresh.at).all() and (board.sq == fresh.sq).all()
        assert searcher.pv(move, max(depth, 1))[0] == move


FORCED_WIN = "2vpyrgn/4P3/3b4/o7/8/5V2/8/NGRY2BO b r single 0-0 1 -"
"""Black cannot win at once, but c1-c7 (and only it) leaves Gold only replies
that hand Black a tower with a free path to rank 8."""


def test_search_finds_a_forced_win_in_three_plies() -> None:
    pos = text_to_position(FORCED_WIN)
    move, value, depth = CompiledSearcher().think(pos, time.monotonic() + 30, max_depth=3)
    assert move_to_text(move) == "c1-c7"
    assert value > kernels.WIN_BOUND
    assert depth <= 3


def test_regroup_choice_is_searched() -> None:
    """The regroup choice is searched, and the search stops at its deadline.

    How soon after the deadline depends on the machine: the watchdog that stops
    the kernel is a thread, which a loaded machine wakes late. A thread sleeping
    until the same deadline measures how late, now; the search may overrun by
    that and 0.2 s more (left alone, it would run for many seconds). What a bot
    does once before its first move is not timed: loading the kernels into the
    process (``warm_up``) and making the searcher (its transposition table
    alone takes up to half a second to allocate on a loaded machine).
    """
    pos = text_to_position("1b3r1n/1R1v1G2/6g1/P5p1/8/1Y1o4/4Vy2/N5BO b p standard 0-0 1 -")
    pos.make(text_to_move("a5-a8"))
    assert pos.phase == REGROUP
    warm_up()
    searcher = CompiledSearcher()
    start = time.monotonic()
    deadline = start + 0.2
    woke: list[float] = []

    def sleeper() -> None:
        time.sleep(max(0.0, deadline - time.monotonic()))
        woke.append(time.monotonic())

    alarm = threading.Thread(target=sleeper)
    alarm.start()
    move, _, _ = searcher.think(pos, deadline)
    took = time.monotonic() - start
    alarm.join()
    late = woke[0] - deadline
    bound = 0.2 + 0.2 + late
    print(f"searched {took:.3f} s for a 0.200 s deadline; a thread woke {late:.3f} s late")
    assert took < bound, f"{took:.3f} s, bound {bound:.3f} s (a thread woke {late:.3f} s late)"
    assert move_to_text(move) in ("left", "right")


async def test_a_sandboxed_alphabeta_loads_its_search_from_the_cache() -> None:
    """In bwrap the cache folder is read-only: the bot must still find the
    machine code the arena built before the game, not compile it again (about
    15 s: the handshake would time out)."""
    needs.sandbox()
    config = EngineConfig(
        name="alphabeta", command=resolve_builtin("alphabeta"), sandbox=Sandbox(mode="bwrap")
    )
    async with Engine(config) as engine:
        await engine.start("kamisado", "single")
        assert engine.sandbox_mode == "bwrap"
        tail = engine.stderr_tail()
    assert "compiled" not in tail, tail


def test_a_cache_built_from_another_solver_is_dropped(tmp_path: Path) -> None:
    """numba checks a cached kernel against kamisado_jit.py alone; the move
    generation compiled into it comes from the rules package's solver.py (which
    pins board.py's tables), so a change there must drop it."""
    kept = tmp_path / "kamisado_jit.search-1.py311.nbi"
    other = tmp_path / "other.nbi"
    kept.write_text("x")
    other.write_text("y")
    (tmp_path / "kamisado_jit.tables").write_text("built with another solver.py\n")
    jit_cache.drop_stale(tmp_path)
    assert not kept.exists() and other.exists()  # only the kernels' files go
    kept.write_text("x")
    jit_cache.drop_stale(tmp_path)  # now stamped with this board.py: kept
    assert kept.exists()
    assert (tmp_path / "kamisado_jit.tables").read_text().strip() == jit_cache.tables_digest()


def test_the_kernels_value_scale_is_kamisado_evals() -> None:
    """The kernels keep their own copies of the value constants (numba freezes
    a module's globals, and checks only kamisado_jit.py for changes); the
    driver and protocol_score read kamisado_eval's, so the two must agree."""
    for name in ("WIN_MATCH", "WIN_ROUND", "POINT", "LIKELY_LOSS", "WIN_BOUND", "INF"):
        assert getattr(kernels, name) == getattr(kamisado_eval, name), name
