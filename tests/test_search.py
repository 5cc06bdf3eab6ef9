"""alphabeta's search pieces: the exact round solver and the time manager.

The compiled solver is checked against plain exhaustive minimax on positions near a
round's end (found by random play, kept when the full tree is small). The time
manager is checked on its own and through the real arena: a bot on a short
clock must never forfeit and must spend a sane share of its time.
"""

from __future__ import annotations

import random
import time

import pytest
from arena.bots import kamisado_eval, timeman
from arena.bots.compiled_search import CompiledSearcher
from arena.bots.kamisado_eval import (
    POINT,
    WIN_BOUND,
    WIN_MATCH,
    WIN_ROUND,
    evaluate,
    protocol_score,
)

from arena.engine.bot import Engine
from arena.engine.config import EngineConfig
from arena.games import get_game
from arena.games.kamisado.notation import text_to_position
from arena.games.kamisado.position import PLAY, Position
from arena.match.clock import TimeControl
from arena.match.record import FAULT_REASONS
from arena.match.referee import play_game
from arena.plan.builtins import resolve_builtin
from arena.protocol.messages import ClockInfo


class TooBig(Exception):
    pass


def exhaustive(pos: Position, budget: list[int]) -> bool:
    """Plain minimax for "does the side to move win the round": no table, no cut
    but stopping at the first winning move. ``budget[0]`` nodes, then ``TooBig``."""
    budget[0] -= 1
    if budget[0] < 0:
        raise TooBig
    side = pos.side
    for m in pos.legal_moves():
        pos.make(m)
        try:
            if pos.phase != PLAY:
                won = pos.last_winner == side
            elif pos.side == side:
                won = exhaustive(pos, budget)
            else:
                won = not exhaustive(pos, budget)
        finally:
            pos.unmake()
        if won:
            return True
    return False


# Single-round positions without an immediate win near a round's end, found by
# random play (walking back from the end while plain minimax solved them within
# 20 000 nodes, seed 7); the comment is minimax's verdict for the side to move,
# recomputed by the test.
LATE_POSITIONS = [
    "o5g1/bv3ONB/R6n/8/5r2/4y3/3p4/1G1YPV2 g g single 0-0 1 -",  # loss
    "3p3n/1G3g2/4rVO1/2R3B1/YPv1o3/N5b1/7y/8 g n single 0-0 1 -",  # win
    "4yr2/4O1Y1/G7/1o1g4/3p1V2/6P1/1Nb1v1Bn/2R5 b r single 0-0 1 -",  # win
    "ob1py3/N2YP3/8/7n/6g1/2vV4/1G3r2/2R3BO g b single 0-0 1 -",  # loss
    "8/3p2rG/1N3n2/2RoP3/6g1/1Y4Vy/vb5O/6B1 g p single 0-0 1 -",  # win
    "1b2y3/N1O3g1/1V6/P1po4/3Y2Bn/3v4/GRr5/8 g p single 0-0 1 -",  # loss
    "1b2y2n/P5gO/V4N2/2r5/4o1v1/6p1/6B1/1GRY4 g n single 0-0 1 -",  # loss
    "1b2y3/1OvY2nG/1P3p2/6B1/1Ng5/1o6/7r/2R2V2 b r single 0-0 1 -",  # win
    "2v3g1/4y1r1/5NG1/2R5/pP3b2/1Y4B1/4oV1n/7O g y single 0-0 1 -",  # win
    "6g1/8/2o1G1O1/2N1n3/v2Rp2B/8/1rY2bVy/4P3 b p single 0-0 1 -",  # win
    "3py2n/No5O/8/8/6B1/rg2v1b1/3RP3/1G1Y1V2 b y single 0-0 1 -",  # win
    "2v1yr2/3pV3/PR6/3YG3/8/8/g2o2nb/N5BO b b single 0-0 1 -",  # loss
    "1bvp4/2O5/2y3B1/5V2/2G5/5g1n/or6/N1RYP3 g p single 0-0 1 -",  # win
    "8/ob1Br3/7P/pGvY3O/N2n4/1R4y1/6g1/5V2 g b single 0-0 1 -",  # loss
    "3pyrg1/1v2P1BG/2R5/4b3/2VN4/5O1n/o7/3Y4 g g single 0-0 1 -",  # loss
    "o3y1gn/1b5O/N4r2/6p1/8/R3B3/3v4/1G1YPV2 g g single 0-0 1 -",  # win
    "1bv5/2O1R3/o7/1y4n1/N7/1gPp1V2/1GY2r2/6B1 g b single 0-0 1 -",  # loss
    "ob6/1B5G/3Y2gn/N7/2RP1r2/6p1/4y2v/5V1O g o single 0-0 1 -",  # loss
    "o3y3/7Y/5O1n/3b4/1G3B2/Npv2r2/g2R1V2/4P3 g b single 0-0 1 -",  # win
    "3p4/5y2/3rYN2/2v4n/4O3/1b4gV/o2P3B/1GR5 b r single 0-0 1 -",  # win
    "1b5n/7O/8/2vg4/G1o1y1B1/r2pPV2/8/N1RY4 g v single 0-0 1 -",  # loss
    "2v1yr2/bOVR4/6g1/8/3B4/8/oG1p3n/N2YP3 b y single 0-0 1 -",  # win
    "7n/Nv5O/2o1R3/Y3y1P1/1b2g3/1r2p3/8/1G3VB1 g v single 0-0 1 -",  # loss
    "2vpyr2/8/3b4/3g4/2R1OV2/8/oG5n/N2YP1B1 b r single 0-0 1 -",  # loss
    "1bv2r1n/1N5B/1G6/4yV2/8/o7/1g1pY3/2R1P2O g v single 0-0 1 -",  # win
    "4y3/8/vG1Y3P/N2on1O1/6V1/3b2r1/1Rg2Bp1/8 g r single 0-0 1 -",  # loss
    "o4rgn/Nv4OG/8/3p4/8/4b3/2R1yV2/3YP1B1 g r single 0-0 1 -",  # win
    "2v5/Y4RB1/1Nor4/4gG2/2Vy3p/1b5O/7n/4P3 b p single 0-0 1 -",  # win
    "5r2/1bN1G3/o4n2/6g1/2v5/7O/1R1py1B1/3YPV2 b b single 0-0 1 -",  # loss
    "1b5n/2G4O/N1Yvr3/1o4R1/6V1/1g3p2/4y3/4P1B1 g r single 0-0 1 -",  # loss
]


def test_solver_agrees_with_exhaustive_search() -> None:
    wins = 0
    for text in LATE_POSITIONS:
        pos = text_to_position(text)
        expected = exhaustive(pos, [10**6])
        before = pos.key()
        result, move = CompiledSearcher().solve(pos, time.monotonic() + 60)
        assert result == int(expected), pos.key()
        assert pos.key() == before
        if result == 1:
            wins += 1
            side = pos.side
            pos.make(move)  # the move it gives must itself win
            if pos.phase != PLAY:
                assert pos.last_winner == side
            elif pos.side == side:
                assert exhaustive(pos, [10**7])
            else:
                assert not exhaustive(pos, [10**7])
            pos.unmake()
    assert 5 < wins < len(LATE_POSITIONS) - 5  # both outcomes were tested


def test_solver_gives_up_cleanly_at_its_deadline() -> None:
    pos = Position.start()
    pos.make(pos.legal_moves()[3])  # the whole round ahead: no proof in 50 ms
    start = time.monotonic()
    result, move = CompiledSearcher().solve(pos, start + 0.05)
    assert result == -1 and move in pos.legal_moves()
    assert time.monotonic() - start < 1.0


def test_decisions_left_shrink_as_round_and_match_go_on() -> None:
    start = text_to_position("obvpyrgn/8/8/8/8/8/8/NGRYPVBO b - standard 0-0 1 -")
    late = text_to_position("o+bvpyrgn/8/8/8/3R4/8/8/NG1YPVBO+ g y standard 1-1 3 -")
    assert timeman.decisions_left(start, 0) > timeman.decisions_left(start, 12)
    assert timeman.decisions_left(start, 0) > timeman.decisions_left(late, 0)
    single = text_to_position("obvpyrgn/8/8/8/8/8/8/NGRYPVBO b - single 0-0 1 -")
    assert timeman.decisions_left(single, 0) == timeman.ROUND_LEFT[0]


def test_round_ply_counts_since_the_regroup_and_from_the_board() -> None:
    pos = text_to_position("obvpyrgn/8/8/2R5/8/8/8/NG1YPVBO g b standard 0-0 1 -")
    assert timeman.round_ply(pos, []) == 1  # one tower off its home row
    assert timeman.round_ply(pos, ["a1-a2", "b8-b7", "right", "c1-c5"]) == 1
    assert timeman.round_ply(pos, ["c1-c5", "b8-b7", "a1-a2"]) == 3


def clock(bank_ms: int, inc_ms: int = 0, movetime_ms: int | None = None) -> ClockInfo:
    return ClockInfo(
        control="x",
        remaining_ms=[bank_ms, bank_ms],
        increment_ms=inc_ms,
        movetime_ms=movetime_ms,
        budget_ms=bank_ms,
        margin_ms=50,
    )


@pytest.mark.parametrize("bank_ms", [1, 20, 200, 5000, 20000])
@pytest.mark.parametrize("left", [1.0, 8.0, 40.0])
def test_budget_stays_inside_the_bank(bank_ms: int, left: float) -> None:
    b = timeman.budget(clock(bank_ms, 100), left)
    assert 0 < b.soft <= b.hard
    assert b.hard <= max(bank_ms / 1000 * timeman.HARD_SHARE + 0.05, 0.002)
    assert b.hard <= max(bank_ms / 1000 - timeman.RESERVE, 0.002)


def test_budget_uses_increment_and_movetime() -> None:
    assert timeman.budget(clock(5000, 100), 30).soft > timeman.budget(clock(5000, 0), 30).soft
    assert timeman.budget(clock(5000), 10).soft > timeman.budget(clock(5000), 30).soft
    fixed = timeman.budget(clock(0, movetime_ms=500), 30)
    assert fixed.soft == fixed.hard == pytest.approx(0.5 * 0.85 - timeman.RESERVE)
    short = timeman.budget(clock(0, movetime_ms=30), 30)  # a quarter of it, not nothing
    assert short.soft == short.hard == pytest.approx(0.0075)


def test_think_stops_early_on_a_soft_limit() -> None:
    pos = text_to_position("obvpyrgn/8/8/2R5/8/8/8/NG1YPVBO g b standard 0-0 1 -")
    start = time.monotonic()
    move, value, depth = CompiledSearcher().think(pos, start + 30, soft=start + 0.3)
    assert time.monotonic() - start < 3  # far below the hard limit
    assert depth >= 2 and abs(value) < WIN_BOUND


@pytest.mark.parametrize("name", ["alphabeta", "mcts"])
async def test_short_clock_never_forfeits_and_uses_a_sane_share(name: str) -> None:
    """Standard matches at 2+0.02 against greedy, both colours: no fault, and the
    bot spends a real share of what it had but never comes near the flag."""
    game = get_game("kamisado")
    control = TimeControl.parse("2+0.02")
    shares = []
    async with (
        Engine(EngineConfig(name=name, command=[*resolve_builtin(name), "--seed", "1"])) as bot,
        Engine(EngineConfig(name="greedy", command=resolve_builtin("greedy"))) as other,
    ):
        for i in range(2):
            opening = game.random_opening("standard", 2, random.Random(i))
            engines = [bot, other] if i == 0 else [other, bot]
            record = await play_game(game, opening, engines, [control, control], variant="standard")
            assert record.reason not in FAULT_REASONS, (record.reason, record.detail)
            me = record.players.index(name)
            mine = [a for a in record.actions if a.player == me and not a.forced]
            used = sum(a.ms for a in mine) / 1000
            had = control.base + control.increment * len(mine)
            shares.append(used / had)
    assert all(s < 0.8 for s in shares), shares
    assert max(shares) > 0.1, shares


def test_scores_are_reported_in_the_protocols_units() -> None:
    """protocol.md §2.2: forced results as ±(10000 - plies), heuristics below 9000."""
    assert protocol_score(WIN_MATCH - 3) == 9997
    assert protocol_score(-(WIN_ROUND + 2 * POINT - 5)) == -9995  # a Sumo round lost in 5
    assert protocol_score(WIN_ROUND - 1) == 9999
    assert protocol_score(WIN_BOUND) == 8999 and protocol_score(-37) == -37


@pytest.mark.parametrize("name", ["alphabeta", "mcts"])
async def test_builtin_bots_send_scores_in_the_protocols_units(name: str) -> None:
    game = get_game("kamisado")
    control = TimeControl.parse("1+0.02")
    async with (
        Engine(EngineConfig(name=name, command=[*resolve_builtin(name), "--seed", "1"])) as bot,
        Engine(EngineConfig(name="greedy", command=resolve_builtin("greedy"))) as other,
    ):
        opening = game.random_opening("single", 2, random.Random(3))
        record = await play_game(game, opening, [bot, other], [control, control], variant="single")
    scores = [
        a.info["score"] for a in record.actions if a.player == 0 and a.info and "score" in a.info
    ]
    assert scores and all(abs(s) < 10_000 for s in scores), scores
    if name == "alphabeta" and record.score == 1.0:  # the search proves its win at the end
        assert scores[-1] >= 9000, scores
    if name == "mcts":  # a win rate p as 100 * (2p - 1)
        assert all(abs(s) <= 100 or s == 9999 for s in scores), scores
    # protocol.md §7: a Monte-Carlo bot counts playouts, not nodes, and its depth is
    # its principal line's length; a tree searcher counts nodes.
    infos = [a.info for a in record.actions if a.player == 0 and a.info]
    counted, other = ("playouts", "nodes") if name == "mcts" else ("nodes", "playouts")
    assert any(counted in i for i in infos) and not any(other in i for i in infos), infos
    if name == "mcts":
        assert all(i["depth"] == len(i["pv"]) for i in infos), infos


def test_an_open_sumo_is_worth_the_points_its_win_would_score(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    # Gold to move; its Sumo (b+ on e4) can reach rank 1, Black has no open tower.
    pos = text_to_position("1ovp1rgn/3y4/6O1/1G6/4b+3/N7/8/2YPVB1R g v standard 0-1 2 -")
    plain = evaluate(pos)
    monkeypatch.setattr(kamisado_eval, "OPEN_POINTS_WEIGHT", 50)
    assert evaluate(pos) == plain + 50  # a Sumo's win scores 2: one point beyond a plain win
    assert kamisado_eval.EXTRA_POINTS == (0, 1, 3, 7, 0)
