"""The Analysis section of the reports and the web view, as plain values.

Built from the games (read-only) and ``analysis.sqlite``: per bot its blunders
and missed wins per 100 decisions in proven positions, the proven-won parts
it converted, the parts it won from a proven-lost position; the latest
mistakes; and for each replayed game the solver's value per position with the
decisive moves and the mistakes marked. The definitions are in
:mod:`arena.analysis.figures`; :data:`DEFINITIONS` says them to the reader.
"""

from __future__ import annotations

from collections import deque
from collections.abc import Iterable
from dataclasses import dataclass, field

from arena.analysis.figures import BotFigures, Figures, GameCalls, game_calls
from arena.analysis.store import AnalysisStore
from arena.analysis.values import UNKNOWN, GameValues
from arena.match.record import GameRecord

LIST_MISTAKES = 50
"""Mistakes the section lists (the latest); every one counts in the figures."""

DEFINITIONS = (
    "A blunder is a move that turned a position the solver proves won for the mover "
    "into one it proves lost (a round has no draws); a missed win is a move in a "
    "proven-won position after which the win is no longer proven (every blunder, and "
    "moves into positions the solver could not prove within its budget). Only decisions "
    "count: a forced move, a single legal move and the regroup choice are not. A round is "
    "decided at the first position from which every later one is proven won for the "
    "round's winner; the move into it is the decisive move. Rates are per 100 decisions "
    "in proven positions; a round is proven won for a bot once any of its positions is."
)


@dataclass(frozen=True, slots=True)
class BotAnalysis:
    """One bot's row of the Analysis table."""

    player: str
    decisions: int
    proven_decisions: int
    blunders: int
    missed: int
    blunder_rate: float | None
    missed_rate: float | None
    won_parts: int
    converted: int
    conversion: float | None
    wins_from_lost: int

    @classmethod
    def of(cls, b: BotFigures) -> BotAnalysis:
        return cls(
            b.name,
            b.decisions,
            b.proven_decisions,
            b.blunders,
            b.missed,
            b.blunder_rate,
            b.missed_rate,
            b.parts_won_proven,
            b.converted,
            b.conversion,
            b.wins_from_lost,
        )

    @property
    def proven_share(self) -> float | None:
        return self.proven_decisions / self.decisions if self.decisions else None


@dataclass(frozen=True, slots=True)
class MistakeRow:
    """One listed mistake: game (1-based index and key), 1-based ply, who, what
    was played and a move the solver proves winning."""

    index: int
    key: str
    players: tuple[str, str]
    ply: int
    player: str
    played: str
    best: str
    blunder: bool


@dataclass(frozen=True, slots=True)
class GameMarks:
    """What a replay shows of one game's analysis."""

    values: list[tuple[int, int]]
    """Per position: (winner or -1, distance)."""
    decisive: list[int]
    """0-based plies of the decisive moves (one per decided part at most)."""
    blunders: list[int]
    missed: list[int]
    """Missed wins that are not blunders."""
    best: dict[int, str]
    """A winning move at each mistake's ply."""

    def replay_json(self, solves: str = "round") -> dict[str, object]:
        """The replay's ``an`` field (see replay.js): ``v`` per position [winner,
        distance], ``d`` decisive plies, ``b`` blunders, ``m`` missed wins,
        ``w`` the winning moves at the mistakes, ``s`` what is solved."""
        return {
            "s": solves,
            "v": [list(v) for v in self.values],
            "d": self.decisive,
            "b": self.blunders,
            "m": self.missed,
            "w": {str(k): v for k, v in self.best.items()},
        }


def marks_of(calls: GameCalls, values: GameValues) -> GameMarks:
    return GameMarks(
        [(v.winner, v.distance) for v in values.values],
        [p.decisive for p in calls.parts if p.decisive is not None],
        [m.ply for m in calls.mistakes if m.blunder],
        [m.ply for m in calls.mistakes if not m.blunder],
        {m.ply: m.best for m in calls.mistakes},
    )


@dataclass(frozen=True)
class AnalysisSection:
    """The tournament's analysis, for every report and the web view."""

    solves: str
    """What the solver proves (``round``): the reports' word for a part."""
    games: int
    """Games analysed (matching the stored record)."""
    total: int
    budgets: tuple[float, float]
    """Smallest and largest budget per position (ms) among the analysed games."""
    positions: int
    proven: int
    parts: int
    """Parts that ended."""
    decided_at_start: int
    """... decided from their first position on."""
    plies_after: float | None
    """Mean plies a part went on after it was decided."""
    blunders: int
    missed: int
    bots: tuple[BotAnalysis, ...]
    mistakes: tuple[MistakeRow, ...]
    """The latest :data:`LIST_MISTAKES`, newest last."""
    marks: dict[str, GameMarks] = field(default_factory=dict)
    """For the games a page replays."""
    definitions: str = DEFINITIONS

    @property
    def proven_share(self) -> float | None:
        return self.proven / self.positions if self.positions else None

    @property
    def with_blunders(self) -> set[str]:
        """Keys of the listed games with a blunder."""
        return {k for k, m in self.marks.items() if m.blunders}


def build_analysis(
    records: Iterable[tuple[int, str, GameRecord]],
    store: AnalysisStore,
    order: Iterable[str],
    *,
    solves: str = "round",
    marked: set[str] | None = None,
) -> AnalysisSection | None:
    """The section from ``(index, key, record)`` of every game, or ``None`` when
    no game is analysed. ``order`` is the standings order of the bots;
    ``marked`` the games whose replays are shown (all if ``None``)."""
    figures = Figures()
    total = 0
    budgets: list[float] = []
    mistakes: deque[MistakeRow] = deque(maxlen=LIST_MISTAKES)
    marks: dict[str, GameMarks] = {}
    for index, key, record in records:
        total += 1
        values = store.values(key)
        if values is None or len(values.values) != len(record.actions) + 1:
            continue  # not analysed, or analysed from another record
        budgets.append(values.budget_ms)
        calls = game_calls(record, values.values)
        figures.add(record, calls, values.values)
        for m in calls.mistakes:
            mistakes.append(
                MistakeRow(
                    index,
                    key,
                    (record.players[0], record.players[1]),
                    m.ply + 1,
                    record.players[m.player],
                    record.actions[m.ply].action,
                    m.best,
                    m.blunder,
                )
            )
        if marked is None or key in marked:
            marks[key] = marks_of(calls, values)
    if not figures.games:
        return None
    ranked = list(order)
    bots = [figures.bots[p] for p in ranked if p in figures.bots]
    bots += [b for name, b in figures.bots.items() if name not in ranked]
    return AnalysisSection(
        solves=solves,
        games=figures.games,
        total=total,
        budgets=(min(budgets), max(budgets)),
        positions=figures.positions,
        proven=figures.proven,
        parts=figures.parts,
        decided_at_start=figures.decided_at_start,
        plies_after=figures.plies_after,
        blunders=figures.blunders,
        missed=figures.missed,
        bots=tuple(BotAnalysis.of(b) for b in bots),
        mistakes=tuple(mistakes),
        marks=marks,
    )


def value_text(winner: int, distance: int, names: tuple[str, str]) -> str:
    """A position's value in words: ``black wins in 7``, or ``unproven``."""
    if winner == UNKNOWN:
        return "unproven" + (f" within {distance} plies" if distance else "")
    if distance == 0:
        return f"{names[winner]} won"
    return f"{names[winner]} wins in {distance}"
