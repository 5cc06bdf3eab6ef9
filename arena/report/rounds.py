"""A Swiss's or knockout's rounds as the reports show them: the round-by-round
results, the Swiss standings with their tie-breaks, the bracket.

Drawn from ``rounds.json`` (the draw, :mod:`arena.storage.rounds`) and the stored
games; a results folder from elsewhere may hold a ``rounds.json`` that does not
fit its games, so every name and key is looked up, never trusted to exist.

Swiss standings: points are game points (a win 1, a draw ½) plus the byes'
points (a bye scores as a won pairing); then, to separate equal points,
Buchholz (the sum of the opponents' points), Sonneborn–Berger (the sum, over
games, of the opponent's points times the points scored against it) and the
direct encounter (points in the games among the entrants still tied).
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Mapping
from dataclasses import dataclass

from arena.storage.rounds import RoundsRecord

__all__ = ["BoardResult", "RoundTable", "RoundsSection", "SwissRow", "build_rounds", "stage"]


@dataclass(frozen=True, slots=True)
class BoardResult:
    """One pairing of a round with its game points so far (``b`` ``None``: a bye,
    or a knockout side not known yet). ``seeds`` are the knockout seeds of the two."""

    a: str | None
    b: str | None
    points: tuple[float, float]
    games: int
    planned: int
    winner: str | None
    how: str
    seeds: tuple[int | None, int | None] = (None, None)

    @property
    def bye(self) -> bool:
        return self.how == "bye"


@dataclass(frozen=True, slots=True)
class RoundTable:
    number: int
    boards: tuple[BoardResult, ...]

    @property
    def settled(self) -> bool:
        """Every pairing played (a knockout: decided); a side not known yet is not."""
        return all(
            b.winner is not None or (b.a is not None and b.b is not None and b.games == b.planned)
            for b in self.boards
        )


@dataclass(frozen=True, slots=True)
class SwissRow:
    rank: int
    player: str
    points: float
    buchholz: float
    sonneborn_berger: float
    direct: float | None
    """Points among the entrants tied on points, Buchholz and Sonneborn–Berger (None: no tie)."""
    byes: int
    games: int
    rating: float | None
    error: float | None
    withdrawn: bool


@dataclass(frozen=True, slots=True)
class RoundsSection:
    format: str
    rounds_total: int
    rounds: tuple[RoundTable, ...]
    swiss: tuple[SwissRow, ...]
    champion: str | None
    bye_points: float
    pairs: int
    extra_pairs: int

    @property
    def current(self) -> int:
        """The round being played or last played: the last one drawn with a side known
        (a Swiss draws a round, a knockout fills one in, once the one before is settled)."""
        known = [r.number for r in self.rounds if any(b.a or b.b for b in r.boards)]
        return known[-1] if known else 1


def stage(number: int, total: int) -> str:
    """A knockout round's name: final, semi-finals, quarter-finals, else round N."""
    left = total - number
    return {0: "final", 1: "semi-finals", 2: "quarter-finals"}.get(left, f"round {number}")


Game = tuple[str, str, float]
"""(player 0, player 1, player 0's score) of a stored game."""


def build_rounds(
    record: RoundsRecord,
    games: Mapping[str, Game],
    ratings: Mapping[str, tuple[float | None, float | None]],
) -> RoundsSection:
    """The section for ``record``, with results from ``games`` (game key -> game)."""
    seed = {name: i + 1 for i, name in enumerate(record.entrants)}
    tables = []
    # Per player: (opponent, my score) of each game; byes; opponents per board.
    scored: dict[str, list[tuple[str, float]]] = defaultdict(list)
    byes: dict[str, int] = defaultdict(int)
    for drawn in record.drawn:
        boards = []
        for board in drawn.boards:
            pts = [0.0, 0.0]
            count = 0
            for pair in board.pair_keys:
                for n in (1, 2):
                    g = games.get(f"{pair}/{n}")
                    if g is None or {g[0], g[1]} != {board.a, board.b}:
                        continue
                    mine = g[2] if g[0] == board.a else 1.0 - g[2]
                    pts[0] += mine
                    pts[1] += 1.0 - mine
                    count += 1
                    if board.a is not None and board.b is not None:
                        scored[board.a].append((board.b, mine))
                        scored[board.b].append((board.a, 1.0 - mine))
            if board.how == "bye" and board.a is not None:
                byes[board.a] += 1
            boards.append(
                BoardResult(
                    a=board.a,
                    b=board.b,
                    points=(pts[0], pts[1]),
                    games=count,
                    planned=2 * len(board.pair_keys),
                    winner=board.winner,
                    how=board.how,
                    seeds=(seed.get(board.a or ""), seed.get(board.b or "")),
                )
            )
        tables.append(RoundTable(drawn.number, tuple(boards)))
    swiss: tuple[SwissRow, ...] = ()
    if record.format == "swiss":
        swiss = _swiss_rows(record, scored, byes, ratings)
    return RoundsSection(
        format=record.format,
        rounds_total=record.rounds,
        rounds=tuple(tables),
        swiss=swiss,
        champion=record.champion,
        bye_points=record.bye_points,
        pairs=record.pairs,
        extra_pairs=record.extra_pairs,
    )


def _swiss_rows(
    record: RoundsRecord,
    scored: Mapping[str, list[tuple[str, float]]],
    byes: Mapping[str, int],
    ratings: Mapping[str, tuple[float | None, float | None]],
) -> tuple[SwissRow, ...]:
    names = list(record.entrants)
    points = {
        p: sum(s for _, s in scored.get(p, [])) + byes.get(p, 0) * record.bye_points for p in names
    }
    buchholz = {}
    sb = {}
    for p in names:
        opponents = {o for o, _ in scored.get(p, [])}
        buchholz[p] = sum(points.get(o, 0.0) for o in opponents)
        sb[p] = sum(points.get(o, 0.0) * s for o, s in scored.get(p, []))
    groups: dict[tuple[float, float, float], list[str]] = defaultdict(list)
    for p in names:
        groups[(points[p], buchholz[p], sb[p])].append(p)
    direct: dict[str, float | None] = {}
    for tied in groups.values():
        for p in tied:
            if len(tied) == 1:
                direct[p] = None
            else:
                direct[p] = sum(s for o, s in scored.get(p, []) if o in tied)
    order = {p: i for i, p in enumerate(names)}
    ranked = sorted(
        names,
        key=lambda p: (-points[p], -buchholz[p], -sb[p], -(direct[p] or 0.0), order[p]),
    )
    out = []
    withdrawn = set(record.withdrawn)
    for i, p in enumerate(ranked):
        rating, error = ratings.get(p, (None, None))
        out.append(
            SwissRow(
                rank=i + 1,
                player=p,
                points=points[p],
                buchholz=buchholz[p],
                sonneborn_berger=sb[p],
                direct=direct[p],
                byes=byes.get(p, 0),
                games=len(scored.get(p, [])),
                rating=rating,
                error=error,
                withdrawn=p in withdrawn,
            )
        )
    return tuple(out)
