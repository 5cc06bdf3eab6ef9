"""What the solver's values say about a game and about each bot.

Definitions (the report's Analysis section states them the same way):

* a **decision** is an action a bot chose inside a part of the game (a
  Kamisado round) among two or more legal actions; forced actions (played by
  the referee) and choices between rounds (regrouping) are not decisions;
* a **blunder** is a decision that turned a position proven won for the mover
  into one proven lost for it (in a round there are no draws);
* a **missed win** is a decision in a position proven won for the mover after
  which the solver no longer proves the win: every blunder, and the moves into
  positions it could not prove either way within the budget;
* a part is **decided** at the first position from which the solver proves
  every later position of the part won for the part's eventual winner; the
  action played into that position is the **decisive move** (none when the
  part's first position is already proven: the opening or the regroup
  decided it). A part that did not finish (a fault, an adjudication) is not
  decided;
* per bot, the rates count decisions in proven positions only; a part is
  *proven won* for a bot when any of its positions is, and *converted* when
  the bot then won it; a *win from a proven-lost position* is a part the bot
  won after a position proven lost for it.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from arena.analysis.values import UNKNOWN, PlyValue
from arena.match.record import ActionRecord, GameRecord


@dataclass(frozen=True, slots=True)
class PartCall:
    """One part (round) of a game: its positions ``first..end`` (indices into the
    values; ``end`` is where it ended, ``None`` if it never did), its winner, the
    position it was decided at and the decisive action's index (0-based ply)."""

    part: int
    first: int
    end: int | None
    winner: int | None
    decided: int | None
    decisive: int | None


@dataclass(frozen=True, slots=True)
class Mistake:
    """A decision at ``ply`` (0-based action index) by ``player``: a blunder, or
    a missed win that was not one (``blunder`` False)."""

    ply: int
    player: int
    blunder: bool
    best: str
    """A winning action the solver gave instead."""


@dataclass(slots=True)
class GameCalls:
    """The analysis of one game, from its values."""

    parts: list[PartCall]
    mistakes: list[Mistake]
    decisions: list[int]
    """Per player: decisions made."""
    proven_decisions: list[int]
    """Per player: decisions made in a proven position."""
    positions: int
    proven: int

    @property
    def blunders(self) -> int:
        return sum(m.blunder for m in self.mistakes)

    @property
    def missed(self) -> int:
        return len(self.mistakes)


def game_calls(record: GameRecord, values: list[PlyValue]) -> GameCalls:
    """Parts, decisions and mistakes of one game (``values`` from ``solve_game``)."""
    actions = record.actions
    decisions = [0, 0]
    proven_decisions = [0, 0]
    mistakes: list[Mistake] = []
    positions = proven = 0
    for i, v in enumerate(values):
        if not v.best:
            continue
        positions += 1
        proven += v.winner != UNKNOWN
        if i >= len(actions) or v.choices < 2 or actions[i].forced:
            continue
        p = actions[i].player
        decisions[p] += 1
        if v.winner == UNKNOWN:
            continue
        proven_decisions[p] += 1
        after = values[i + 1]
        if v.winner == p and after.winner != p:
            mistakes.append(Mistake(i, p, after.winner == 1 - p, v.best))
    return GameCalls(
        _parts(values, actions), mistakes, decisions, proven_decisions, positions, proven
    )


def _parts(values: list[PlyValue], actions: list[ActionRecord]) -> list[PartCall]:
    out: list[PartCall] = []
    i = 0
    n = len(values)
    while i < n:
        if not values[i].best:  # between parts, or the end
            i += 1
            continue
        first = i
        part = values[i].part
        while i < n and values[i].best and values[i].part == part:
            i += 1
        end = i if i < n and values[i].part == part else None
        if end is None:
            out.append(PartCall(part, first, None, None, None, None))
            continue
        winner = values[end].winner if values[end].winner != UNKNOWN else None
        decided = None
        if winner is not None:
            k = end
            while k > first and values[k - 1].winner == winner:
                k -= 1
            decided = k
        decisive = decided - 1 if decided is not None and decided > first else None
        out.append(PartCall(part, first, end, winner, decided, decisive))
        i = end + 1
    return out


@dataclass(slots=True)
class BotFigures:
    """One bot's figures over every analysed game it played."""

    name: str
    games: int = 0
    decisions: int = 0
    proven_decisions: int = 0
    blunders: int = 0
    missed: int = 0
    parts_won_proven: int = 0
    """Parts in which a position was proven won for the bot."""
    converted: int = 0
    """... of which the bot won."""
    wins_from_lost: int = 0
    """Parts the bot won after a position proven lost for it."""

    @property
    def blunder_rate(self) -> float | None:
        """Blunders per 100 decisions in proven positions."""
        return 100 * self.blunders / self.proven_decisions if self.proven_decisions else None

    @property
    def missed_rate(self) -> float | None:
        return 100 * self.missed / self.proven_decisions if self.proven_decisions else None

    @property
    def conversion(self) -> float | None:
        """Share (0..1) of parts proven won that the bot won."""
        return self.converted / self.parts_won_proven if self.parts_won_proven else None

    @property
    def proven_share(self) -> float | None:
        return self.proven_decisions / self.decisions if self.decisions else None


@dataclass(slots=True)
class Figures:
    """The whole tournament's analysis figures."""

    bots: dict[str, BotFigures] = field(default_factory=dict)
    games: int = 0
    positions: int = 0
    proven: int = 0
    parts: int = 0
    """Parts that ended."""
    decided_at_start: int = 0
    """... proven from their first position on (the opening or regroup decided them)."""
    plies_after_decision: int = 0
    """Plies played after the decisive point, summed over the parts that ended."""
    blunders: int = 0
    missed: int = 0
    budget_ms: set[float] = field(default_factory=set)

    @property
    def proven_share(self) -> float | None:
        return self.proven / self.positions if self.positions else None

    @property
    def plies_after(self) -> float | None:
        """Mean plies a part went on after it was decided."""
        return self.plies_after_decision / self.parts if self.parts else None

    def add(self, record: GameRecord, calls: GameCalls, values: list[PlyValue]) -> None:
        self.games += 1
        self.positions += calls.positions
        self.proven += calls.proven
        self.blunders += calls.blunders
        self.missed += calls.missed
        bots = [self.bots.setdefault(name, BotFigures(name)) for name in record.players]
        for p, bot in enumerate(bots):
            bot.games += 1
            bot.decisions += calls.decisions[p]
            bot.proven_decisions += calls.proven_decisions[p]
        for m in calls.mistakes:
            bots[m.player].missed += 1
            bots[m.player].blunders += m.blunder
        for part in calls.parts:
            if part.end is None or part.winner is None or part.decided is None:
                continue
            self.parts += 1
            self.decided_at_start += part.decided == part.first
            self.plies_after_decision += part.end - part.decided
            span = values[part.first : part.end]  # in play: not the part's end
            for p, bot in enumerate(bots):
                if any(v.winner == p for v in span):
                    bot.parts_won_proven += 1
                    bot.converted += part.winner == p
                if part.winner == p and any(v.winner == 1 - p for v in span):
                    bot.wins_from_lost += 1
