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
  tower, then killers and history.

python bots/alphabeta_bot.py [--seed N]
"""

from __future__ import annotations

import argparse
import random
import time
from typing import Any

from arena.games.kamisado.board import SQUARE_COLOUR
from arena.games.kamisado.notation import move_to_text, text_to_position
from arena.games.kamisado.position import PLAY, Position
from arena.protocol import NewGame
from arena.sdk import Bot, Request, run
from bots.kamisado_eval import (
    GOAL_RAYS,
    INF,
    WIN_BOUND,
    evaluate,
    rank_hash,
    round_end_value,
    think_time,
    win_now_value,
    winning_move,
    zobrist,
)

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
    name = "alphabeta"
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
    parser = argparse.ArgumentParser(description="alpha-beta Kamisado bot")
    parser.add_argument("--seed", type=int, default=None)
    args = parser.parse_args()
    run(AlphaBetaBot(args.seed))


if __name__ == "__main__":
    main()
