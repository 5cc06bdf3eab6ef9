"""Exact round solver: does the side to move win the current round by force?

Every Kamisado round ends (towers only move forward, and a deadlock ends it),
so once the rest of a round's tree is small the search can drop the evaluation
and prove the result. This is a boolean negamax with its own table of proven
positions (a proof never goes stale, so the table is kept for the whole
game) and two cuts that make late rounds tiny:

* a side with a move onto the goal row wins at once;
* a move after which the opponent can reach the goal row loses, and is
  refuted without making a single further move.

The solver runs under a node limit and a deadline; running out raises
:class:`Unsolved` and the caller falls back to the heuristic search.
"""

from __future__ import annotations

import time

from arena.games.kamisado.position import PLAY, Position
from bots.kamisado_eval import rank_hash, winning_move, zobrist

TABLE_LIMIT = 2_000_000


class Unsolved(Exception):
    """The node limit or the deadline was reached before a proof."""


class Solver:
    """Proves round results; the table of proven positions persists across calls."""

    def __init__(self) -> None:
        self.table: dict[int, bool] = {}
        self.nodes = 0
        self.limit = 0
        self.deadline = float("inf")
        self.pos = Position.start()
        self.ranks = 0

    def solve(
        self, pos: Position, node_limit: int, deadline: float = float("inf")
    ) -> tuple[bool, int]:
        """``(wins, move)``: whether the side to move wins this round, and a move
        that wins (or, in a lost round, the first legal move).

        ``pos`` must be in play; it is left as it was, also when :class:`Unsolved`
        is raised.
        """
        assert pos.phase == PLAY
        self.pos = pos
        self.nodes = 0
        self.limit = node_limit
        self.deadline = deadline
        self.ranks = rank_hash(pos)
        if len(self.table) > TABLE_LIMIT:
            self.table.clear()
        win = winning_move(pos)
        if win >= 0:
            return True, win
        base = pos.made
        side = pos.side
        moves = pos.legal_moves()
        try:
            for m in moves:
                pos.make(m)
                try:
                    if self._mover_wins(side):
                        return True, m
                finally:
                    pos.unmake()
        except Unsolved:
            pos.unmake_to(base)
            raise
        return False, moves[0]

    def _mover_wins(self, mover: int) -> bool:
        """After ``mover``'s move: does ``mover`` win the round?"""
        pos = self.pos
        if pos.phase != PLAY:
            return pos.last_winner == mover
        wins = self._wins()
        return wins if pos.side == mover else not wins

    def _wins(self) -> bool:
        """Whether the side to move (in play) wins the round by force."""
        pos = self.pos
        if winning_move(pos) >= 0:
            return True
        self.nodes += 1
        if self.nodes > self.limit or (not self.nodes & 255 and time.monotonic() > self.deadline):
            raise Unsolved
        key = zobrist(pos, self.ranks)
        known = self.table.get(key)
        if known is not None:
            return known
        side = pos.side
        result = False
        make = pos.make
        unmake = pos.unmake
        later: list[int] = []
        # First pass: moves that do not hand the opponent a win at once.
        for m in pos.legal_moves():
            make(m)
            if pos.phase != PLAY:
                won = pos.last_winner == side
            elif pos.side != side and winning_move(pos) >= 0:
                unmake()
                continue  # refuted: the opponent reaches the goal row next
            else:
                later.append(m)
                unmake()
                continue
            unmake()
            if won:
                result = True
                break
        if not result:
            for m in later:
                make(m)
                try:
                    won = self._mover_wins(side)
                finally:
                    unmake()
                if won:
                    result = True
                    break
        self.table[key] = result
        return result
