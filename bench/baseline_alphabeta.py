"""The frozen baseline: ``bots/alphabeta_bot.py`` and its evaluation as of issue 15's start.

Kept self-contained (its own copy of ``bots/kamisado_eval.py``'s values,
evaluation, hashing and time rule) so that work on the built-in bots never
moves the yardstick: SPRTs of the new alphabeta run against this file.

python bench/baseline_alphabeta.py [--seed N]
"""

from __future__ import annotations

import argparse
import random
import time
from functools import reduce
from operator import getitem, xor
from typing import Any

from arena.games.kamisado.board import (
    FIRST_STEPS,
    GOAL_RANK,
    LIMITED_RAYS,
    MATCH_TARGET,
    RANK_VALUE,
    SQUARE_COLOUR,
)
from arena.games.kamisado.notation import move_to_text, text_to_position
from arena.games.kamisado.position import FREE, OVER, PLAY, Position
from arena.protocol.messages import ClockInfo, NewGame
from arena.sdk import Bot, Request, run

# ---------------------------------------------------------------- values

WIN_MATCH = 50_000
"""Value of winning the whole match (minus plies to get there)."""
WIN_ROUND = 20_000
"""Base value of winning a round that does not end the match."""
POINT = 100
"""Per point of the score difference after a round win: a round that leaves us
further ahead (a Sumo scoring 2) is better than one that scores 1."""
LIKELY_LOSS = 8_000
"""A static verdict that the side to move must hand the opponent a win."""
WIN_BOUND = 15_000
"""Values above this are (ply-adjusted) proven round or match wins."""
INF = 1_000_000

# ---------------------------------------------------------------- geometry


def _goal_rays() -> tuple:
    """``GOAL_RAYS[player][rank][square]``: the in-range rays that end on the goal row.

    A tower is *open* (threatens to win) when one of these rays is empty: it can
    then move onto the opponent's home row on its next turn.
    """
    out = []
    for p in (0, 1):
        per_rank = []
        for k in range(5):
            per_sq = []
            for s in range(64):
                rays = tuple(
                    ray for ray in LIMITED_RAYS[p][k][s] if ray and ray[-1] >> 3 == GOAL_RANK[p]
                )
                per_sq.append(rays)
            per_rank.append(tuple(per_sq))
        out.append(tuple(per_rank))
    return tuple(out)


GOAL_RAYS = _goal_rays()

# Rows of progress towards the goal, per player and square (0 on the home row).
PROGRESS = tuple(tuple((s >> 3) if p == 0 else 7 - (s >> 3) for s in range(64)) for p in (0, 1))


def is_open(at: list[int], player: int, rank: int, square: int) -> bool:
    """Whether a tower of ``player`` and ``rank`` on ``square`` can reach the goal row now."""
    for ray in GOAL_RAYS[player][rank][square]:
        for sq in ray:
            if at[sq] >= 0:
                break
        else:
            return True
    return False


def open_after(at: list[int], player: int, rank: int, square: int, frm: int, to: int) -> bool:
    """:func:`is_open` on the board where one tower has moved ``frm`` -> ``to``.

    Used to ask "does this move of mine hand the opponent a winning tower?"
    without making the move: the mover may block the path or clear it.
    """
    for ray in GOAL_RAYS[player][rank][square]:
        for sq in ray:
            if sq == to or (at[sq] >= 0 and sq != frm):
                break
        else:
            return True
    return False


def winning_move(pos: Position) -> int:
    """A move of the side to move that reaches the goal row at once, or -1.

    Reaching the opponent's home row ends the round at once (no deadlock test
    follows), so such a move always wins the round.
    """
    if pos.phase != PLAY:
        return -1
    at = pos.at
    sq_of = pos.square_of
    rank = pos.rank
    side = pos.side
    towers = range(side * 8, side * 8 + 8) if pos.required == FREE else (side * 8 + pos.required,)
    rays = GOAL_RAYS[side]
    for t in towers:
        s = sq_of[t]
        for ray in rays[rank[t]][s]:
            for sq in ray:
                if at[sq] >= 0:
                    break
            else:
                return s | ray[-1] << 6
    return -1


def round_end_value(pos: Position, player: int, ply: int) -> int:
    """Value for ``player`` of a position where a round (or the match) just ended.

    A match win is best, a round win good and better the further ahead it leaves
    us; quicker wins and slower losses are preferred through ``ply``.
    """
    winner = pos.last_winner
    if pos.phase == OVER:
        v = WIN_MATCH - ply
    else:
        v = WIN_ROUND + POINT * (pos.score(winner) - pos.score(winner ^ 1)) - ply
    return v if winner == player else -v


def win_now_value(pos: Position, ply: int) -> int:
    """Value for the side to move, which has a winning move (see :func:`winning_move`).

    Computed without making the move: the tower that wins is the required one
    (or, on a free choice, any open one: we assume rank 0 for the points).
    """
    side = pos.side
    t = side * 8 + pos.required if pos.required != FREE else -1
    k = pos.rank[t] if t >= 0 else 0
    mine = pos.score(side) + RANK_VALUE[k + 1] - RANK_VALUE[k]
    if mine >= MATCH_TARGET[pos.kind]:
        return WIN_MATCH - ply - 1
    return WIN_ROUND + POINT * (mine - pos.score(side ^ 1)) - ply - 1


# ---------------------------------------------------------------- evaluation

OPEN_WEIGHT = 40
SAFE_WEIGHT = 12
SAFE_CAP = 5
PROGRESS_WEIGHT = 2
PUSH_WEIGHT = 15
BLOCKED_WEIGHT = 6
SCORE_WEIGHT = 30


def evaluate(pos: Position) -> int:
    """Static value for the side to move, in a position without an immediate win.

    What matters in Kamisado: open towers (threats to reach the home row), how
    many moves the required tower has that do not hand the opponent an open
    tower of the destination's colour (none at all means the round is lost),
    Sumo towers able to push, blocked towers, advancement and the match score.
    """
    at = pos.at
    sq_of = pos.square_of
    rank = pos.rank
    side = pos.side
    opp = side ^ 1
    goal = GOAL_RAYS
    value = SCORE_WEIGHT * (pos.score(side) - pos.score(opp))
    req = pos.required
    if req != FREE:
        tower = side * 8 + req
        frm = sq_of[tower]
        moves: list[int] = []
        pos.tower_moves(tower, moves)
        obase = opp * 8
        if not moves:
            c = SQUARE_COLOUR[frm]
            u = obase + c
            if is_open(at, opp, rank[u], sq_of[u]):
                return -LIKELY_LOSS
        else:
            safe = 0
            pushes = 0
            for m in moves:
                to = m >> 6
                if at[to] >= 0:
                    pushes += 1  # a push: the follow-up is ours again, call it safe
                    continue
                u = obase + SQUARE_COLOUR[to]
                us = sq_of[u]
                # Inline open_after for speed.
                for ray in goal[opp][rank[u]][us]:
                    for sq in ray:
                        if sq == to or (at[sq] >= 0 and sq != frm):
                            break
                    else:
                        break  # u would be open: this move loses
                else:
                    safe += 1
            if not safe and not pushes:
                return -LIKELY_LOSS
            value += SAFE_WEIGHT * min(safe + pushes, SAFE_CAP)
    # Threats, advancement, Sumo push power and blocked towers, both sides.
    for p, sign in ((side, 1), (opp, -1)):
        prog = PROGRESS[p]
        g = goal[p]
        first = FIRST_STEPS[p]
        score = 0
        for t in range(p * 8, p * 8 + 8):
            s = sq_of[t]
            k = rank[t]
            score += PROGRESS_WEIGHT * prog[s]
            for ray in g[k][s]:
                for sq in ray:
                    if at[sq] >= 0:
                        break
                else:
                    score += OPEN_WEIGHT
                    break
            blocked = True
            for sq in first[s]:
                if at[sq] < 0:
                    blocked = False
                    break
            if blocked:
                score -= BLOCKED_WEIGHT
            if k and pos._can_push(p, s, k):
                score += PUSH_WEIGHT
        value += sign * score
    return value


# ---------------------------------------------------------------- hashing

_rng = random.Random(0x4B414D49)
ZOBRIST_TOWER = tuple(tuple(_rng.getrandbits(64) for _ in range(64)) for _ in range(16))
ZOBRIST_RANK = tuple(tuple(_rng.getrandbits(64) for _ in range(5)) for _ in range(16))
ZOBRIST_REQUIRED = tuple(_rng.getrandbits(64) for _ in range(9))
ZOBRIST_SIDE = _rng.getrandbits(64)
ZOBRIST_PHASE = tuple(_rng.getrandbits(64) for _ in range(3))


def rank_hash(pos: Position) -> int:
    """The part of the key that only changes between rounds (computed once per search)."""
    r = pos.rank
    return reduce(xor, (ZOBRIST_RANK[t][r[t]] for t in range(16)))


def zobrist(pos: Position, ranks: int) -> int:
    """Zobrist key of ``pos`` given its precomputed :func:`rank_hash`.

    Recomputed from ``square_of`` (16 table look-ups done in C by ``map``)
    rather than updated in ``make``: the rules core is not ours to instrument,
    and pushes move several towers at once.
    """
    h = reduce(xor, map(getitem, ZOBRIST_TOWER, pos.square_of), ranks)
    h ^= ZOBRIST_REQUIRED[pos.required + 1] ^ ZOBRIST_PHASE[pos.phase]
    return h ^ ZOBRIST_SIDE if pos.side else h


# ---------------------------------------------------------------- time


def think_time(clock: ClockInfo, share: int = 18, reserve: float = 0.02) -> float:
    """Seconds to spend on this decision, never near the forfeit line.

    A match has a few dozen own decisions; spending ``1/share`` of the bank plus
    most of the increment keeps the bank from draining, and ``reserve`` covers
    decoding, answering and scheduling jitter (the margin is not ours to use).
    """
    if clock.movetime_ms is not None:
        budget = clock.movetime_ms / 1000
        t = budget * 0.8 - reserve
    else:
        budget = clock.budget_ms / 1000
        moves = clock.moves_to_go or share
        t = budget / max(1, min(moves, share)) + clock.increment_ms / 1000 * 0.75
        t = min(t, budget * 0.3) - reserve
    return max(t, 0.001)


def deadline_for(clock: ClockInfo, received_at: float, share: int = 18) -> float:
    """``time.monotonic()`` by which the search must stop (see :func:`think_time`)."""
    return received_at + think_time(clock, share)


def now() -> float:
    return time.monotonic()


EXACT, LOWER, UPPER = 0, 1, 2
MAX_PLY = 128
TT_LIMIT = 1_500_000


class Timeout(Exception):
    """Raised inside the search when the deadline passes; the root catches it."""


class Searcher:
    """One search tree's state: the table, killers and history persist across moves."""

    def __init__(self) -> None:
        self.tt: dict[int, tuple[int, int, int, int]] = {}
        self.history = [0] * 4096
        self.killers = [[-1, -1] for _ in range(MAX_PLY + 1)]
        self.nodes = 0
        self.deadline = float("inf")
        self.pos: Position = Position.start()
        self.ranks = 0

    def reset(self) -> None:
        """Forget everything (a new game)."""
        self.tt.clear()
        self.history = [0] * 4096

    # ------------------------------------------------------------ the tree

    def search(self, depth: int, alpha: int, beta: int, ply: int) -> int:
        """Negamax value of the current position for the side to move."""
        pos = self.pos
        self.nodes += 1
        if not self.nodes & 1023 and time.monotonic() > self.deadline:
            raise Timeout
        if winning_move(pos) >= 0:
            return win_now_value(pos, ply)
        if depth <= 0 or ply >= MAX_PLY:
            return evaluate(pos)

        key = zobrist(pos, self.ranks)
        entry = self.tt.get(key)
        tt_move = -1
        if entry is not None:
            e_depth, e_flag, e_value, tt_move = entry
            if e_depth >= depth:
                if e_value > WIN_BOUND:
                    e_value -= ply
                elif e_value < -WIN_BOUND:
                    e_value += ply
                if e_flag == EXACT:
                    return e_value
                if e_flag == LOWER:
                    if e_value >= beta:
                        return e_value
                elif e_value <= alpha:
                    return e_value

        moves = pos.legal_moves()
        side = pos.side
        if len(moves) > 1:
            moves = self.order(moves, tt_move, ply)
            next_depth = depth - 1
        else:
            next_depth = depth  # a forced action costs no depth

        make = pos.make
        unmake = pos.unmake
        search = self.search
        alpha0 = alpha
        best = -INF
        best_move = moves[0]
        for m in moves:
            make(m)
            if pos.phase != PLAY:
                v = round_end_value(pos, side, ply + 1)
            elif pos.side == side:
                v = search(next_depth, alpha, beta, ply + 1)
            else:
                v = -search(next_depth, -beta, -alpha, ply + 1)
            unmake()
            if v > best:
                best = v
                best_move = m
                if v > alpha:
                    alpha = v
                    if v >= beta:
                        if m < 4096 and pos.at[m >> 6] < 0:
                            k = self.killers[ply]
                            if k[0] != m:
                                k[1] = k[0]
                                k[0] = m
                        self.history[m & 4095] += depth * depth
                        break

        flag = EXACT if alpha0 < best < beta else (LOWER if best >= beta else UPPER)
        stored = best
        if stored > WIN_BOUND:
            stored += ply
        elif stored < -WIN_BOUND:
            stored -= ply
        if len(self.tt) > TT_LIMIT:
            self.tt.clear()
        self.tt[key] = (depth, flag, stored, best_move)
        return best

    def order(self, moves: list[int], tt_move: int, ply: int) -> list[int]:
        """Moves sorted best-first by cheap static knowledge.

        A move whose destination colour hands the opponent an open tower
        (checked on the board after the move) goes last: it almost always loses.
        """
        pos = self.pos
        at = pos.at
        sq_of = pos.square_of
        rank = pos.rank
        opp = pos.side ^ 1
        obase = opp * 8
        goal = GOAL_RAYS[opp]
        history = self.history
        k0, k1 = self.killers[ply]
        scored = []
        for m in moves:
            if m == tt_move:
                s = 1 << 40
            else:
                frm = m & 63
                to = m >> 6
                s = history[m & 4095]
                if m == k0:
                    s += 1 << 30
                elif m == k1:
                    s += 1 << 29
                if m < 4096 and frm != to and at[to] < 0:
                    u = obase + SQUARE_COLOUR[to]
                    for ray in goal[rank[u]][sq_of[u]]:
                        for sq in ray:
                            if sq == to or (at[sq] >= 0 and sq != frm):
                                break
                        else:
                            s -= 1 << 35
                            break
            scored.append((s, m))
        scored.sort(reverse=True)
        return [m for _, m in scored]

    # ------------------------------------------------------------ the root

    def pv(self, first: int, depth: int) -> list[int]:
        """The principal variation, read back from the table."""
        pos = self.pos
        line = [first]
        pos.make(first)
        made = 1
        while len(line) < depth and pos.phase == PLAY:
            entry = self.tt.get(zobrist(pos, self.ranks))
            if entry is None or entry[3] not in pos.legal_moves():
                break
            line.append(entry[3])
            pos.make(entry[3])
            made += 1
        for _ in range(made):
            pos.unmake()
        return line

    def think(
        self,
        pos: Position,
        deadline: float,
        max_depth: int = 64,
        on_iteration: Any = None,
    ) -> tuple[int, int, int]:
        """Iterative deepening until ``deadline``; returns (move, value, depth reached)."""
        self.pos = pos
        self.deadline = deadline
        self.nodes = 0
        self.ranks = rank_hash(pos)
        self.killers = [[-1, -1] for _ in range(MAX_PLY + 1)]
        side = pos.side
        moves = pos.legal_moves()
        win = winning_move(pos)
        if win >= 0:
            return win, win_now_value(pos, 0) + 1, 0
        if len(moves) == 1:
            return moves[0], 0, 0
        order = self.order(moves, -1, 0)
        best_move, best_value, reached = order[0], 0, 0
        base = pos.made
        start = time.monotonic()
        for depth in range(1, max_depth + 1):
            alpha = -INF
            iter_best, iter_value = -1, -INF
            try:
                for m in order:
                    pos.make(m)
                    try:
                        if pos.phase != PLAY:
                            v = round_end_value(pos, side, 1)
                        elif pos.side == side:
                            v = self.search(depth - 1, alpha, INF, 1)
                        else:
                            v = -self.search(depth - 1, -INF, -alpha, 1)
                    finally:
                        pos.unmake()
                    if v > iter_value:
                        iter_best, iter_value = m, v
                        alpha = max(alpha, v)
            except Timeout:
                # The search stopped deep in the tree: take back what it made.
                pos.unmake_to(base)
                # The previous best was searched first, so a move that beat it
                # in the unfinished iteration is at least as good.
                if iter_best >= 0 and iter_best != best_move and iter_value > best_value:
                    best_move, best_value = iter_best, iter_value
                break
            best_move, best_value, reached = iter_best, iter_value, depth
            order.remove(best_move)
            order.insert(0, best_move)
            if on_iteration is not None:
                on_iteration(depth, best_value, self.pv(best_move, depth), self.nodes)
            if abs(best_value) > WIN_BOUND:
                break  # a proven result: deeper search changes nothing
            elapsed = time.monotonic() - start
            if start + elapsed * 4 > deadline:
                break  # the next iteration would not finish
        return best_move, best_value, reached


class AlphaBetaBot(Bot):
    name = "baseline-alphabeta"
    author = "Kamisado Arena"
    version = "1"

    def __init__(self, seed: int | None = None) -> None:
        self.searcher = Searcher()
        self.rng = random.Random(seed)

    def new_game(self, message: NewGame) -> None:
        self.searcher.reset()

    def choose(self, request: Request) -> tuple[str, dict[str, Any]]:
        deadline = request.received_at + think_time(request.clock)
        pos = text_to_position(request.position)
        move, value, depth = self.searcher.think(pos, deadline)
        pv = [move_to_text(m) for m in self.searcher.pv(move, max(depth, 1))]
        text = pv[0]
        if text not in request.legal:  # cannot happen; never forfeit over it
            text = self.rng.choice(request.legal)
            pv = [text]
        info = {"depth": depth, "score": value, "pv": pv, "nodes": self.searcher.nodes}
        return text, info


def main() -> None:
    parser = argparse.ArgumentParser(description="baseline alpha-beta Kamisado bot")
    parser.add_argument("--seed", type=int, default=None)
    args = parser.parse_args()
    run(AlphaBetaBot(args.seed))


if __name__ == "__main__":
    main()
