"""The fast Kamisado position: mutable, with make/unmake, for the referee, bots and perft.

Moves are small integers so that search code in pure Python stays cheap:
``from_square | to_square << 6``. A zero-length move has ``from == to``; a Sumo
push is the pusher's one-square step onto an opponent tower, recognised from the
board when it is made. The two regroup choices are ``REGROUP_LEFT`` and
``REGROUP_RIGHT``. Text notation lives in ``notation.py``.

The position also carries the match: kind, round number and the phase
(playing, waiting for the round winner's regroup choice, or over). Scores are not
stored: by the rules a player's score is the sum of their towers' values, so it
is computed from the ranks and can never drift out of step with them.
"""

from __future__ import annotations

from typing import Any

from arena.games.kamisado.board import (
    DISTANCE_LIMIT,
    FIRST_STEPS,
    GOAL_RANK,
    HOME_RANK,
    LIMITED_RAYS,
    MATCH_MAX_RANK,
    MATCH_TARGET,
    RANK_VALUE,
    SQUARE_COLOUR,
    STRAIGHT,
)

PLAY, REGROUP, OVER = 0, 1, 2

# One undo record: (kind, move, saved (side, required, phase, last_winner,
# last_reason), data). The data slot depends on the kind (None, the promoted
# tower, (pushed count, promoted tower) or the regrouped board), which a tuple
# type cannot say per kind: ``unmake`` reads it by kind.
_Saved = tuple[int, int, int, int, str]
_UndoRecord = tuple[int, int, _Saved, Any]
PHASE_NAMES = ("play", "regroup", "over")

REGROUP_LEFT = 1 << 12
REGROUP_RIGHT = REGROUP_LEFT + 1

HOME_ROW = "home-row"
DEADLOCK = "deadlock"

FREE = -1
"""``required`` when the mover may choose any tower (first move of a round)."""

# Undo-record kinds.
_MOVE, _ZERO, _PUSH, _REGROUP = range(4)


class Position:
    """A Kamisado match position.

    Attributes are public for speed and for the notation module; treat them as
    read-only outside this class. ``at[square]`` is a tower id or -1,
    ``square_of[tower]`` the square of each of the 16 towers, ``rank[tower]``
    its Sumo rank.
    """

    __slots__ = (
        "at",
        "square_of",
        "rank",
        "side",
        "required",
        "kind",
        "round",
        "phase",
        "last_winner",
        "last_reason",
        "_undo",
    )

    def __init__(
        self,
        at: list[int],
        rank: list[int],
        side: int,
        required: int,
        kind: int,
        round_no: int = 1,
        phase: int = PLAY,
        last_winner: int = -1,
        last_reason: str = "",
    ) -> None:
        self.at = at
        self.square_of = [0] * 16
        for sq, t in enumerate(at):
            if t >= 0:
                self.square_of[t] = sq
        self.rank = rank
        self.side = side
        self.required = required
        self.kind = kind
        self.round = round_no
        self.phase = phase
        self.last_winner = last_winner
        self.last_reason = last_reason
        self._undo: list[_UndoRecord] = []

    @classmethod
    def start(cls, kind: int = 1) -> Position:
        """The first-round position: every tower on its own colour in its home row."""
        at = [-1] * 64
        for f in range(8):
            at[f] = SQUARE_COLOUR[f]
            at[56 + f] = 8 + SQUARE_COLOUR[56 + f]
        return cls(at, [0] * 16, 0, FREE, kind)

    def copy(self) -> Position:
        """An independent copy without the undo history."""
        p = Position.__new__(Position)
        p.at = self.at[:]
        p.square_of = self.square_of[:]
        p.rank = self.rank[:]
        p.side = self.side
        p.required = self.required
        p.kind = self.kind
        p.round = self.round
        p.phase = self.phase
        p.last_winner = self.last_winner
        p.last_reason = self.last_reason
        p._undo = []
        return p

    # ------------------------------------------------------------------ queries

    def score(self, player: int) -> int:
        value = RANK_VALUE
        rank = self.rank
        base = player * 8
        return sum(value[rank[t]] for t in range(base, base + 8))

    def rounds_won(self, player: int) -> int:
        """Each round won promotes one of the winner's towers by one rank, so the
        ranks add up to the rounds won (a score counts points, 3 for a Double Sumo)."""
        base = player * 8
        return sum(self.rank[base : base + 8])

    @property
    def target(self) -> int:
        return MATCH_TARGET[self.kind]

    def winner(self) -> int:
        """The match winner once the phase is ``OVER``, else -1."""
        if self.phase != OVER:
            return -1
        target = MATCH_TARGET[self.kind]
        for player in (0, 1):
            if self.score(player) >= target:
                return player
        return -1

    def tower_moves(self, tower: int, out: list[int]) -> None:
        """Append every ordinary move and push of ``tower`` to ``out``."""
        at = self.at
        player = tower >> 3
        s = self.square_of[tower]
        k = self.rank[tower]
        for ray in LIMITED_RAYS[player][k][s]:
            for sq in ray:
                if at[sq] >= 0:
                    break
                out.append(s | sq << 6)
        if k and self._can_push(player, s, k):
            out.append(s | STRAIGHT[player][s][0] << 6)

    def _can_push(self, player: int, s: int, k: int) -> bool:
        """Whether the rank-``k`` tower of ``player`` on ``s`` can push straight ahead."""
        at = self.at
        rank = self.rank
        for n, sq in enumerate(STRAIGHT[player][s]):
            t = at[sq]
            if t < 0:
                return n > 0
            if n == k or t >> 3 == player or rank[t] >= k:
                return False  # too many towers, one's own, or one of equal rank
        return False  # the line reaches the board edge: nothing may be pushed off

    def can_act(self, tower: int) -> bool:
        """Whether ``tower`` has any move or push (so it is not blocked)."""
        at = self.at
        player = tower >> 3
        s = self.square_of[tower]
        for sq in FIRST_STEPS[player][s]:
            if at[sq] < 0:
                return DISTANCE_LIMIT[self.rank[tower]] > 0
        k = self.rank[tower]
        return bool(k) and self._can_push(player, s, k)

    def legal_moves(self) -> list[int]:
        """Every legal action of the side to move (empty when the match is over)."""
        if self.phase != PLAY:
            return [REGROUP_LEFT, REGROUP_RIGHT] if self.phase == REGROUP else []
        out: list[int] = []
        if self.required >= 0:
            tower = self.side * 8 + self.required
            self.tower_moves(tower, out)
            if not out:
                s = self.square_of[tower]
                out.append(s | s << 6)
            return out
        base = self.side * 8
        for tower in range(base, base + 8):
            self.tower_moves(tower, out)
        if not out:  # unreachable in play, but keep hand-built positions total
            out = [s | s << 6 for s in sorted(self.square_of[base : base + 8])]
        return out

    def count_moves(self) -> int:
        """``len(self.legal_moves())`` without building the list (for perft leaves)."""
        if self.phase != PLAY:
            return 2 if self.phase == REGROUP else 0
        if self.required < 0:
            return len(self.legal_moves())
        tower = self.side * 8 + self.required
        at = self.at
        player = self.side
        s = self.square_of[tower]
        k = self.rank[tower]
        n = 0
        for ray in LIMITED_RAYS[player][k][s]:
            for sq in ray:
                if at[sq] >= 0:
                    break
                n += 1
        if k and self._can_push(player, s, k):
            n += 1
        return n or 1

    def chain_deadlocked(self, player: int, colour: int) -> bool:
        """Follow the forced zero-length moves from ``player`` having to move ``colour``.

        Ruling M8: if the same player would have to move the same blocked tower
        again with no real move in between, the chain repeats for ever.
        """
        seen = 0
        square_of = self.square_of
        while True:
            tower = player * 8 + colour
            if self.can_act(tower):
                return False
            bit = 1 << tower
            if seen & bit:
                return True
            seen |= bit
            colour = SQUARE_COLOUR[square_of[tower]]
            player ^= 1

    # ------------------------------------------------------------------ make / unmake

    def make(self, move: int) -> None:
        """Play ``move`` (assumed legal) for the side to move."""
        if move >= REGROUP_LEFT:
            self._regroup(move == REGROUP_RIGHT)
            return
        at = self.at
        square_of = self.square_of
        frm = move & 63
        to = move >> 6
        player = self.side
        tower = at[frm]
        saved = (self.side, self.required, self.phase, self.last_winner, self.last_reason)
        if frm == to:
            self._undo.append((_ZERO, move, saved, None))
            self.side = player ^ 1
            self.required = SQUARE_COLOUR[frm]
            return
        if at[to] >= 0:
            # Sumo push: shift the line one square away, farthest tower first.
            ray = STRAIGHT[player][frm]
            n = 0
            while at[ray[n]] >= 0:
                n += 1
            for i in range(n - 1, -1, -1):
                t = at[ray[i]]
                at[ray[i + 1]] = t
                square_of[t] = ray[i + 1]
            at[to] = tower
            at[frm] = -1
            square_of[tower] = to
            promoted = self._after_real_move(player, player, SQUARE_COLOUR[ray[n]], to)
            self._undo.append((_PUSH, move, saved, (n, promoted)))
            return
        at[to] = tower
        at[frm] = -1
        square_of[tower] = to
        if to >> 3 == GOAL_RANK[player]:
            promoted = tower
            self._end_round(player, HOME_ROW, tower)
        else:
            promoted = self._after_real_move(player, player ^ 1, SQUARE_COLOUR[to], to)
        self._undo.append((_MOVE, move, saved, promoted))

    def _after_real_move(self, mover: int, next_player: int, colour: int, to: int) -> int:
        """Hand the turn on, or end the round on a deadlock; return the promoted tower or -1.

        The deadlock winner promotes its tower of the colour of the square on which
        the loser's last move ended. After a Sumo push that move ended on ``to``,
        the pusher's new square (not the farthest pushed tower's, whose colour
        only chose the follow-up tower): the rules file's words taken literally,
        as it does not treat this case separately.
        """
        if self.chain_deadlocked(next_player, colour):
            winner = mover ^ 1
            promoted = winner * 8 + SQUARE_COLOUR[to]
            self._end_round(winner, DEADLOCK, promoted)
            return promoted
        self.side = next_player
        self.required = colour
        return -1

    def _end_round(self, winner: int, reason: str, promoted: int) -> None:
        self.rank[promoted] += 1
        self.last_winner = winner
        self.last_reason = reason
        self.required = FREE
        if self.score(winner) >= MATCH_TARGET[self.kind]:
            self.phase = OVER
            self.side = winner ^ 1
        else:
            self.phase = REGROUP
            self.side = winner

    def _regroup(self, from_right: bool) -> None:
        """Rules F1–F4: both players refill their home rows the same way.

        Each player takes their towers row by row, nearest row first, within a
        row from the chosen end (their own left or right), and places them in
        that order on their home row from the same end.
        """
        saved = (self.side, self.required, self.phase, self.last_winner, self.last_reason)
        self._undo.append((_REGROUP, 0, saved, (self.at[:], self.square_of[:], self.round)))
        at = self.at
        square_of = self.square_of
        order: list[list[int]] = [[], []]
        for player in (0, 1):
            # "Left" from a player's own point of view: a-file for Black, h-file for Gold.
            leftward = (player == 0) != from_right
            files = range(8) if leftward else range(7, -1, -1)
            ranks = range(8) if player == 0 else range(7, -1, -1)
            for r in ranks:
                for f in files:
                    t = at[f + 8 * r]
                    if t >= 0 and t >> 3 == player:
                        order[player].append(t)
        for sq in range(64):
            at[sq] = -1
        for player in (0, 1):
            leftward = (player == 0) != from_right
            home_files = range(8) if leftward else range(7, -1, -1)
            home = HOME_RANK[player] * 8
            for f, t in zip(home_files, order[player], strict=True):
                at[home + f] = t
                square_of[t] = home + f
        self.side ^= 1  # the loser of the round starts the next one
        self.required = FREE
        self.phase = PLAY
        self.round += 1

    def unmake(self) -> None:
        """Take back the last ``make``."""
        kind, move, saved, data = self._undo.pop()
        self.side, self.required, self.phase, self.last_winner, self.last_reason = saved
        if kind == _ZERO:
            return
        if kind == _REGROUP:
            at, square_of, round_no = data
            self.at[:] = at
            self.square_of[:] = square_of
            self.round = round_no
            return
        at = self.at
        square_of = self.square_of
        frm = move & 63
        to = move >> 6
        tower = at[to]
        at[frm] = tower
        square_of[tower] = frm
        if kind == _MOVE:
            at[to] = -1
            if data >= 0:
                self.rank[data] -= 1
            return
        n, promoted = data
        ray = STRAIGHT[saved[0]][frm]
        for i in range(n):
            t = at[ray[i + 1]]
            at[ray[i]] = t
            square_of[t] = ray[i]
        at[ray[n]] = -1
        if promoted >= 0:
            self.rank[promoted] -= 1

    @property
    def made(self) -> int:
        """How many ``make`` calls are not taken back yet."""
        return len(self._undo)

    def unmake_to(self, made: int) -> None:
        """Take back moves until ``made`` remain: unwinds a search abandoned mid-tree."""
        while len(self._undo) > made:
            self.unmake()

    # ------------------------------------------------------------------ misc

    def max_rank(self) -> int:
        return MATCH_MAX_RANK[self.kind]

    def key(self) -> tuple[tuple[int, ...], tuple[int, ...], int, int, int, int, int]:
        """A hashable value identifying the position (for tests and tables)."""
        return (
            tuple(self.at),
            tuple(self.rank),
            self.side,
            self.required,
            self.kind,
            self.round,
            self.phase,
        )


def perft(pos: Position, depth: int) -> int:
    """Number of distinct action sequences of exactly ``depth`` plies within the round.

    A round that ends before ``depth`` plies adds nothing; the last ply is counted,
    not played (bulk counting), as is usual for perft.
    """
    if depth <= 0:
        return 1
    if pos.phase != PLAY:
        return 0
    if depth == 1:
        return pos.count_moves()
    total = 0
    make = pos.make
    unmake = pos.unmake
    for move in pos.legal_moves():
        make(move)
        if pos.phase == PLAY:
            total += perft(pos, depth - 1)
        unmake()
    return total
