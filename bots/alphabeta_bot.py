"""alphabeta: iterative-deepening negamax with alpha-beta and a transposition table.

The top rung of the ladder with mcts. Kamisado-specific points of the search:

* the sign follows ``pos.side``, not the ply parity: after a Sumo push the same
  side moves again, so a child is negated only when the turn really passed;
* zero-length moves are plies; a node with a single (forced) action does not
  use up depth, so forced chains never hide a threat behind the horizon;
* a round end is a terminal scored by the match situation (round win good,
  match win best), and a side to move with an open required tower is scored as
  the win it is without searching on;
* moves are ordered TT move, then moves that do not hand the opponent an open
  tower, then killers and history; every move after the first is searched
  with a null window (principal variation search) and the root iteration
  starts from an aspiration window around the previous value;
* once the rest of the round is small, :mod:`bots.solver` proves its result
  exactly and a proven win is played without further search;
* the clock is planned by :mod:`bots.timeman`: a soft limit from the measured
  number of decisions left, stretched while the best move keeps changing, and
  a hard limit that is never crossed.

The issue-15 starting version is kept as ``bench/baseline_alphabeta.py``.

python bots/alphabeta_bot.py [--seed N]
"""

from __future__ import annotations

import argparse
import random
import time
from typing import Any

from arena.games.kamisado.board import SQUARE_COLOUR
from arena.games.kamisado.notation import move_to_text, text_to_position
from arena.games.kamisado.position import FREE, PLAY, Position
from arena.protocol import NewGame
from arena.sdk import Bot, Request, run
from bots import kamisado_eval, timeman
from bots.kamisado_eval import (
    GOAL_RAYS,
    INF,
    WIN_BOUND,
    evaluate,
    protocol_score,
    rank_hash,
    round_end_value,
    win_now_value,
    winning_move,
    zobrist,
)
from bots.solver import Solver, Unsolved

EXACT, LOWER, UPPER = 0, 1, 2
MAX_PLY = 128
TT_LIMIT = 1_500_000
ASPIRATION = 60
UNSTABLE_CAP = 3.0  # most an unstable root may stretch the planned time (see think)
"""Half-width of the root window around the previous iteration's value."""
SOLVER_SHARE = 0.2
"""Share of the soft limit the exact solver may spend before the search runs."""


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
        self.candidate = -1
        """The best root move of the running iteration (see :meth:`root`)."""

    def reset(self) -> None:
        """Forget everything (a new game)."""
        self.tt.clear()
        self.history = [0] * 4096

    # ------------------------------------------------------------ the tree

    def search(self, depth: int, alpha: int, beta: int, ply: int) -> int:
        """Negamax value of the current position for the side to move."""
        pos = self.pos
        self.nodes += 1
        if not self.nodes & 63 and time.monotonic() > self.deadline:
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
        first = True
        for m in moves:
            make(m)
            if pos.phase != PLAY:
                v = round_end_value(pos, side, ply + 1)
            elif pos.side == side:  # a Sumo push: the same side moves again
                if first:
                    v = search(next_depth, alpha, beta, ply + 1)
                else:
                    v = search(next_depth, alpha, alpha + 1, ply + 1)
                    if alpha < v < beta:
                        v = search(next_depth, alpha, beta, ply + 1)
            elif first:
                v = -search(next_depth, -beta, -alpha, ply + 1)
            else:
                v = -search(next_depth, -alpha - 1, -alpha, ply + 1)
                if alpha < v < beta:
                    v = -search(next_depth, -beta, -alpha, ply + 1)
            unmake()
            first = False
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

    def root(self, order: list[int], depth: int, alpha: int, beta: int) -> tuple[int, int]:
        """One iteration at the root: (best move, value), fail-soft within (alpha, beta).

        The first move gets the whole window, the others a null window and a
        re-search when they beat it. ``self.candidate`` holds the best move
        seen so far, so an iteration cut off by the deadline still leaves a
        move that was shown to be better than the previous best.
        """
        pos = self.pos
        side = pos.side
        search = self.search
        best_move, best = order[0], -INF
        for n, m in enumerate(order):
            pos.make(m)
            try:
                if pos.phase != PLAY:
                    v = round_end_value(pos, side, 1)
                elif pos.side == side:
                    if n == 0:
                        v = search(depth - 1, alpha, beta, 1)
                    else:
                        v = search(depth - 1, alpha, alpha + 1, 1)
                        if alpha < v < beta:
                            self.candidate = m
                            v = search(depth - 1, alpha, beta, 1)
                elif n == 0:
                    v = -search(depth - 1, -beta, -alpha, 1)
                else:
                    v = -search(depth - 1, -alpha - 1, -alpha, 1)
                    if alpha < v < beta:
                        self.candidate = m
                        v = -search(depth - 1, -beta, -alpha, 1)
            finally:
                pos.unmake()
            if v > best:
                best_move, best = m, v
                self.candidate = m
                if v > alpha:
                    alpha = v
                    if v >= beta:
                        break
        return best_move, best

    def think(
        self,
        pos: Position,
        deadline: float,
        max_depth: int = 64,
        on_iteration: Any = None,
        soft: float | None = None,
    ) -> tuple[int, int, int]:
        """Iterative deepening; returns (move, value, depth reached).

        ``deadline`` is never crossed (the search is abandoned there). ``soft``
        is the planned stop: no new iteration starts once half of the time to
        it is gone, and it moves towards ``deadline`` each time the best move
        changes (an unstable root is worth more time). Without ``soft`` the
        search goes on until ``deadline`` cuts it off (a fixed-time search).
        """
        self.pos = pos
        self.deadline = deadline
        self.nodes = 0
        self.ranks = rank_hash(pos)
        self.killers = [[-1, -1] for _ in range(MAX_PLY + 1)]
        moves = pos.legal_moves()
        win = winning_move(pos)
        if win >= 0:
            return win, win_now_value(pos, 0) + 1, 0
        if len(moves) == 1:
            return moves[0], 0, 0
        start = time.monotonic()
        planned = (deadline if soft is None else min(soft, deadline)) - start
        limit = deadline - start
        if soft is not None:
            # An unstable root earns more time, but at most UNSTABLE_CAP times the
            # plan: a root that flips at every depth must not drift to ``deadline``
            # (1.6 per change compounds), and an iteration started late is cut off
            # there too rather than running on to the hard limit.
            limit = min(limit, planned * UNSTABLE_CAP)
            self.deadline = start + limit
        order = self.order(moves, -1, 0)
        best_move, best_value, reached = order[0], 0, 0
        base = pos.made
        for depth in range(1, max_depth + 1):
            self.candidate = -1
            try:
                if depth >= 3 and abs(best_value) < WIN_BOUND:
                    lo, hi = best_value - ASPIRATION, best_value + ASPIRATION
                    move, value = self.root(order, depth, lo, hi)
                    if not lo < value < hi:  # outside the window: search it whole
                        self.candidate = -1
                        move, value = self.root(order, depth, -INF, INF)
                else:
                    move, value = self.root(order, depth, -INF, INF)
            except Timeout:
                # The search stopped deep in the tree: take back what it made.
                pos.unmake_to(base)
                # The previous best was searched first, so a move that beat it
                # in the unfinished iteration is at least as good.
                if self.candidate >= 0:
                    best_move = self.candidate
                break
            if depth >= 3 and move != best_move:
                planned = min(planned * 1.6, limit)  # the root is unstable: think longer
            best_move, best_value, reached = move, value, depth
            order.remove(best_move)
            order.insert(0, best_move)
            if on_iteration is not None:
                on_iteration(depth, best_value, self.pv(best_move, depth), self.nodes)
            if abs(best_value) > WIN_BOUND:
                break  # a proven result: deeper search changes nothing
            if soft is not None and time.monotonic() - start > planned * 0.5:
                break  # the next iteration would not finish in time
        return best_move, best_value, reached


class AlphaBetaBot(Bot):
    name = "alphabeta"
    author = "Kamisado Arena"
    version = "2"

    def __init__(self, seed: int | None = None) -> None:
        self.searcher = Searcher()
        self.solver = Solver()
        self.rng = random.Random(seed)

    def new_game(self, message: NewGame) -> None:
        self.searcher.reset()
        self.solver = Solver()

    def choose(self, request: Request) -> tuple[str, dict[str, Any]]:
        pos = text_to_position(request.position)
        plan = timeman.plan(request.clock, pos, request.history)
        start = request.received_at
        soft, deadline = start + plan.soft, start + plan.hard
        if pos.phase == PLAY and pos.required != FREE and winning_move(pos) < 0:
            solved = self.solve(pos, start + plan.soft * SOLVER_SHARE)
            if solved is not None:
                return solved
        move, value, depth = self.searcher.think(pos, deadline, soft=soft)
        pv = [move_to_text(m) for m in self.searcher.pv(move, max(depth, 1))]
        text = pv[0]
        if text not in request.legal:  # cannot happen; never forfeit over it
            text = self.rng.choice(request.legal)
            pv = [text]
        info = {"depth": depth, "score": protocol_score(value), "pv": pv,
                "nodes": self.searcher.nodes}
        return text, info

    def solve(self, pos: Position, deadline: float) -> tuple[str, dict[str, Any]] | None:
        """A proven round win as the answer, or ``None`` to search as usual.

        A proven loss is left to the search, which picks the line that holds
        out longest (the opponent may still go wrong).
        """
        try:
            wins, move = self.solver.solve(pos, 1 << 30, deadline)
        except Unsolved:
            return None
        if not wins:
            return None
        text = move_to_text(move)
        # A proven win of unknown length: the weakest forced score (protocol.md §2.2).
        return text, {"depth": 0, "score": 9000, "pv": [text], "nodes": self.solver.nodes,
                      "text": "solved: the round is won"}  # fmt: skip


TUNABLE = ("OPEN_WEIGHT", "SAFE_WEIGHT", "SAFE_CAP", "PROGRESS_WEIGHT", "PUSH_WEIGHT",
           "BLOCKED_WEIGHT", "SCORE_WEIGHT", "OPEN_POINTS_WEIGHT")  # fmt: skip
"""Evaluation weights that ``--eval NAME=VALUE`` may change, for tuning by SPRT."""


def set_weights(pairs: list[str]) -> None:
    """Apply ``NAME=VALUE`` weight changes to the evaluation (read at every call)."""
    for pair in pairs:
        name, _, value = pair.partition("=")
        if name not in TUNABLE or not value.lstrip("-").isdigit():
            raise SystemExit(f"--eval {pair!r}: expected NAME=INTEGER, NAME one of {TUNABLE}")
        setattr(kamisado_eval, name, int(value))


def main() -> None:
    parser = argparse.ArgumentParser(description="alpha-beta Kamisado bot")
    parser.add_argument("--seed", type=int, default=None)
    parser.add_argument("--eval", action="append", default=[], metavar="NAME=VALUE",
                        help="change an evaluation weight (self-play tuning)")  # fmt: skip
    args = parser.parse_args()
    set_weights(args.eval)
    run(AlphaBetaBot(args.seed))


if __name__ == "__main__":
    main()
