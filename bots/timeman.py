"""Time management for the searching bots: how long to think on this decision.

The clock runs across every round of a match, so a fair share of it is the
time left divided by the decisions still to come. That count is not guessed:
``ROUND_LEFT`` and ``ROUNDS_AFTER`` are measured by ``bench/decisions.py``
(alphabeta self-play, decisions the arena actually asks for; forced actions
cost nothing). A search gets two limits:

* ``soft``: the planned time. An iterative search stops starting new
  iterations once about half of it is gone (the next one would overrun), and
  may stretch it up to ``hard`` while its best move keeps changing.
* ``hard``: never crossed; the search is abandoned there. It stays well inside
  the forfeit line (a share of the bank, less a reserve for answering).

Dividing by the expected count and stopping early makes a bot use roughly
30-50 % of its clock over a match: the rest is the insurance that a round
lasting longer than usual never loses on time.
"""

from __future__ import annotations

from dataclasses import dataclass

from arena.games.kamisado.board import HOME_RANK, MATCH_TARGET
from arena.games.kamisado.position import Position
from arena.protocol.messages import ClockInfo

# Measured by bench/decisions.py --matches 20 --time 0.03: 446 rounds of
# alphabeta self-play over the four match kinds (2026-12-01).
ROUND_BUCKET = 4
ROUND_LEFT = {0: 8.2, 4: 6.4, 8: 4.6, 12: 3.3, 16: 2.3, 20: 1.7, 24: 1.4}
"""Own decisions left in the round (this one included), by plies already played
in the round (bucket start)."""
# Aligned by hand: a table reads better in rows.
# fmt: off
ROUNDS_AFTER = {
    1: 0.39, 2: 2.08, 3: 3.48, 4: 5.38, 5: 6.54, 6: 8.14, 7: 9.40, 8: 7.88,
    9: 9.29, 10: 10.88, 11: 12.00, 12: 14.56, 13: 15.56, 14: 17.27, 15: 18.17,
}
# fmt: on
"""Rounds still to come after the current one, by the points the leader misses."""
ROUNDS_PER_POINT = 1.4
"""Beyond the table: rounds per point the leader still needs."""

SAFETY = 2.0
"""Extra decisions assumed in the divisor: a long round must not drain the bank."""
SPREAD = 1.5
"""The divisor is the expectation times this: round lengths have a long tail, and
a bank spent early leaves the last, decisive decisions of a match with nothing."""
INCREMENT_SHARE = 0.6
"""Share of the increment spent at once; the rest builds the bank back up."""
RESERVE = 0.03
"""Seconds kept for decoding, answering and scheduling jitter under load."""
HARD_SHARE = 0.25
"""At most this share of the bank on one decision, however unstable."""


@dataclass(frozen=True, slots=True)
class Budget:
    """Seconds from when the request was read: the planned and the absolute limit."""

    soft: float
    hard: float


def round_ply(pos: Position, history: list[str]) -> int:
    """Plies played in the current round.

    From the history (actions after the last regroup choice); a game started
    from an openings file has a short history, so the board gives a lower
    bound as well: each tower off its home row took at least one ply.
    """
    since = 0
    for action in reversed(history):
        if action in ("left", "right"):
            break
        since += 1
    moved = 0
    for t in range(16):
        if pos.square_of[t] >> 3 != HOME_RANK[t >> 3]:
            moved += 1
    return max(since, moved)


def decisions_left(pos: Position, ply: int) -> float:
    """Expected own decisions to come in the match, this one included."""
    bucket = min(ply // ROUND_BUCKET * ROUND_BUCKET, max(ROUND_LEFT))
    in_round = ROUND_LEFT[bucket]
    target = MATCH_TARGET[pos.kind]
    missing = max(target - max(pos.score(0), pos.score(1)), 1)
    if target - min(pos.score(0), pos.score(1)) <= 1:
        rounds = 0.0  # whoever wins this round wins the match (always so in a single round)
    else:
        rounds = ROUNDS_AFTER.get(missing, missing * ROUNDS_PER_POINT)
    return in_round + rounds * ROUND_LEFT[0]


def budget(clock: ClockInfo, left: float) -> Budget:
    """The soft and hard limits for one decision given ``left`` expected decisions."""
    if clock.movetime_ms is not None:
        movetime = clock.movetime_ms / 1000
        # Nothing banks: use what is given. A very short move time cannot keep
        # the whole reserve; the arena's margin absorbs the answering then.
        t = max(movetime * 0.85 - RESERVE, movetime * 0.25, 0.002)
        return Budget(t, t)
    bank = clock.budget_ms / 1000
    inc = clock.increment_ms / 1000
    if clock.moves_to_go:
        left = min(left, clock.moves_to_go)
    soft = bank / (left * SPREAD + SAFETY) + inc * INCREMENT_SHARE
    hard = min(soft * 3, bank * HARD_SHARE + inc * 0.5, bank - RESERVE)
    hard = max(hard, 0.002)
    return Budget(min(soft, hard), hard)


def plan(clock: ClockInfo, pos: Position, history: list[str]) -> Budget:
    """:func:`budget` for a Kamisado decision in ``pos`` after ``history``."""
    return budget(clock, decisions_left(pos, round_ply(pos, history)))
