"""Swiss pairing: each round pairs entrants of equal or near score who have not met.

A Swiss of a few rounds ranks a large field at a fraction of a round robin's cost.
The pairing of a round is one maximum-weight perfect matching (networkx's
blossom algorithm, exact on integer weights) over every active entrant, plus a
"bye" node when their number is odd. The weight of an edge encodes, in strict
order of importance (each term scaled past the largest total of the next):

1. the bye goes to someone with the fewest byes so far (nobody gets a second
   bye while someone has none);
2. as few rematches as possible (a pairing that has met is only repeated when
   no matching of fresh pairings exists);
3. the smallest total score difference over the pairings (the bye counts as a
   pairing against the lowest score in the field, so it goes to a low scorer);
4. the smallest total distance in the pairing order (points, then the seeded
   initial order): within a score group the first meets the second, the third
   the fourth (Monrad pairing), so that a clear best rises fast.

A matching is a function of the scores, the meetings so far and the initial
order, which the seed draws: a resumed run draws every round again from the
stored results and gets the same pairings as an uninterrupted one.
"""

from __future__ import annotations

import math
import random
from collections import Counter
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field

import networkx as nx

__all__ = [
    "BYE",
    "Drawn",
    "SwissScores",
    "default_rounds",
    "initial_order",
    "pair_round",
]

BYE = ""
"""The bye's node in the matching graph (no entrant's name is empty)."""


def default_rounds(entrants: int) -> int:
    """⌈log₂ n⌉ + 2 rounds, at most n − 1 (where fresh pairings run out)."""
    if entrants < 2:
        return 0
    return max(1, min(math.ceil(math.log2(entrants)) + 2, entrants - 1))


def initial_order(entrants: Sequence[str], seed: int) -> list[str]:
    """The seeded draw that orders entrants of equal score (round 1's order too)."""
    order = list(entrants)
    random.Random(f"swiss:{seed}").shuffle(order)
    return order


class Points(dict[str, float]):
    """Points by entrant, read as a ``Counter`` reads: 0 for one not yet seen,
    without adding it. (A ``Counter`` holds floats as well, but its type says int.)"""

    def __missing__(self, key: str) -> float:
        return 0  # an int, as a Counter's: 0 + a whole number of points stays whole


@dataclass
class SwissScores:
    """What the pairing of the next round needs from the rounds before it.

    ``points`` are game points (a won game is 1, a draw ½) plus the bye's points;
    ``met`` counts the rounds each unordered pair of entrants was paired in.
    """

    points: Points = field(default_factory=Points)
    byes: Counter[str] = field(default_factory=Counter)
    met: Counter[frozenset[str]] = field(default_factory=Counter)

    def pairing(self, a: str, b: str) -> None:
        self.met[frozenset((a, b))] += 1

    def bye(self, name: str, points: float) -> None:
        self.byes[name] += 1
        self.points[name] += points

    def game(self, player0: str, player1: str, score: float) -> None:
        self.points[player0] += score
        self.points[player1] += 1.0 - score


@dataclass(frozen=True)
class Drawn:
    """One round's draw: the pairings in board order (``a`` ranked above ``b``) and the bye."""

    pairings: tuple[tuple[str, str], ...]
    bye: str | None


def _half(points: float) -> int:
    return round(2 * points)


def pair_round(active: Sequence[str], order: Sequence[str], scores: SwissScores) -> Drawn:
    """The next round's pairings of the ``active`` entrants (see the module docstring).

    ``order`` is :func:`initial_order` (every entrant, active or not).
    """
    seat = {name: i for i, name in enumerate(order)}
    ranked = sorted(active, key=lambda p: (-scores.points[p], seat[p]))
    n = len(ranked)
    if n < 2:
        return Drawn((), ranked[0] if ranked else None)
    rank = {p: i for i, p in enumerate(ranked)}
    half = {p: _half(scores.points[p]) for p in ranked}
    low = min(half.values())
    spread = max(half.values()) - low
    odd = n % 2 == 1
    fewest = min(scores.byes[p] for p in ranked)
    pairs = n // 2 + 1
    # Scales: each term's largest possible total stays below one unit of the term above.
    c_diff = n * pairs + 1
    c_meet = c_diff * (spread * pairs + 1)
    most_met = max([scores.met[frozenset((a, b))] for a in ranked for b in ranked if a < b] or [0])
    c_bye = c_meet * (most_met * pairs + 1)
    top = c_bye * (max(scores.byes.values(), default=0) + 1) * pairs + 1

    graph = nx.Graph()
    for i, a in enumerate(ranked):
        for b in ranked[i + 1 :]:
            cost = (
                c_meet * scores.met[frozenset((a, b))]
                + c_diff * abs(half[a] - half[b])
                + abs(rank[a] - rank[b])
            )
            graph.add_edge(a, b, weight=top - cost)
        if odd:
            cost = c_bye * (scores.byes[a] - fewest) + c_diff * (half[a] - low) + (n - 1 - rank[a])
            graph.add_edge(a, BYE, weight=top - cost)
    matching = nx.max_weight_matching(graph, maxcardinality=True)
    bye = None
    boards = []
    for x, y in matching:
        if BYE in (x, y):
            bye = y if x == BYE else x
            continue
        a, b = (x, y) if rank[x] < rank[y] else (y, x)
        boards.append((a, b))
    boards.sort(key=lambda ab: rank[ab[0]])
    return Drawn(tuple(boards), bye)


def matching_cost(
    drawn: Drawn, scores: SwissScores, active: Iterable[str]
) -> tuple[int, int, float]:
    """(second byes, rematches, total score difference) of a draw: what the matching
    minimises, in that order (for tests and for the report's notes)."""
    active = list(active)
    fewest = min((scores.byes[p] for p in active), default=0)
    low = min((scores.points[p] for p in active), default=0.0)
    extra_byes = 0 if drawn.bye is None else scores.byes[drawn.bye] - fewest
    rematches = sum(scores.met[frozenset(ab)] for ab in drawn.pairings)
    diff: float = sum(abs(scores.points[a] - scores.points[b]) for a, b in drawn.pairings)
    if drawn.bye is not None:
        diff += scores.points[drawn.bye] - low
    return extra_byes, rematches, diff
