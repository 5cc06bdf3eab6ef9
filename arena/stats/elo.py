"""Head-to-head Elo, as fastchess computes it: from a win/loss/draw tally or from
pentanomial pair counts, with normalised Elo, 95 % errors and the likelihood of
superiority, so numbers can be compared with the chess world's tools.

Also the plain values every statistic here returns (:class:`Tally`,
:class:`Estimate`); the joint fit (``rating.py``) and the SPRT (``sprt.py``)
build on them. Pure functions on counts; only numpy.

Conventions: Elo differences use the logistic scale (an expected score of
``1 / (1 + 10**(-d/400))``); draws count as half points; every ``error`` is the
half-width of a 95 % interval.
"""

from __future__ import annotations

import math
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from typing import NamedTuple

import numpy as np

Z95 = 1.959963984540054
"""Two-sided 95 % normal quantile (the value fastchess uses)."""

NELO_SCALE = 800 / math.log(10)
"""Normalised Elo per unit of ``(score - 0.5) / sd``, fastchess's convention."""

TRINOMIAL_SCORES = np.array([0.0, 0.5, 1.0])
PENTANOMIAL_SCORES = np.array([0.0, 0.25, 0.5, 0.75, 1.0])


class Tally(NamedTuple):
    """Wins, losses and draws of one side (fastchess's ``Stats`` order: W, L, D)."""

    wins: int = 0
    losses: int = 0
    draws: int = 0

    @property
    def games(self) -> int:
        return self.wins + self.losses + self.draws

    @property
    def points(self) -> float:
        return self.wins + 0.5 * self.draws


@dataclass(frozen=True, slots=True)
class Estimate:
    """A value with the half-width of its 95 % interval: ``value ± error``."""

    value: float
    error: float

    @property
    def low(self) -> float:
        return self.value - self.error

    @property
    def high(self) -> float:
        return self.value + self.error

    def __str__(self) -> str:
        return f"{self.value:.2f} +/- {self.error:.2f}"


@dataclass(frozen=True, slots=True)
class MatchStats:
    """Head-to-head statistics as fastchess reports them.

    ``n`` is the number of games (trinomial) or game pairs (pentanomial); ``score``
    the mean score per game; ``elo`` the logistic Elo difference whose error is half
    the Elo distance between the ends of the score's 95 % interval; ``nelo`` the
    normalised Elo (score excess over its standard deviation, scaled so that it
    matches Elo near 0 for a draw-free game); ``los`` the likelihood of superiority.
    """

    n: int
    score: float
    elo: Estimate
    nelo: Estimate
    los: float


def score_to_elo(score: float) -> float:
    """Logistic Elo difference for a mean score (±inf at 1 and 0)."""
    if score >= 1.0:
        return math.inf
    if score <= 0.0:
        return -math.inf
    return -400.0 * math.log10(1.0 / score - 1.0)


def elo_to_score(elo: float) -> float:
    """Expected score for a logistic Elo difference."""
    return 1.0 / (1.0 + math.pow(10.0, -elo / 400.0))


def trinomial_elo(wins: int, losses: int, draws: int) -> MatchStats:
    """Head-to-head Elo from game counts (fastchess ``EloWDL``).

    Treats games as independent; when games are played in pairs with swapped sides,
    prefer :func:`pentanomial_elo`, whose error accounts for the pairing.
    """
    return _match_stats(TRINOMIAL_SCORES, (losses, draws, wins), nelo_factor=1.0)


def pentanomial_elo(pairs: Sequence[int]) -> MatchStats:
    """Head-to-head Elo from game-pair counts (fastchess ``EloPentanomial``).

    ``pairs`` is ``(LL, LD, WL + DD, WD, WW)``: how many pairs scored 0, ½, 1, 1½
    and 2 points. Pairs from the same opening with sides swapped are correlated, so
    counting pairs rather than games gives the honest (usually smaller) error.
    """
    return _match_stats(PENTANOMIAL_SCORES, five_counts(pairs), nelo_factor=2.0)


def pentanomial_counts(pair_scores: Iterable[float]) -> tuple[int, int, int, int, int]:
    """Bin each pair's total score (0, 0.5, 1, 1.5 or 2) into ``(LL, LD, WL+DD, WD, WW)``."""
    counts = [0] * 5
    for total in pair_scores:
        k = float(total) * 2
        if k not in (0.0, 1.0, 2.0, 3.0, 4.0):
            raise ValueError(f"a pair scores 0, 0.5, 1, 1.5 or 2 points, not {total!r}")
        counts[int(k)] += 1
    return counts[0], counts[1], counts[2], counts[3], counts[4]


def five_counts(pairs: Sequence[int]) -> tuple[int, ...]:
    """Pentanomial counts checked for their length (the SPRT reads them too)."""
    values = tuple(pairs)
    if len(values) != 5:
        raise ValueError("pentanomial counts are (LL, LD, WL+DD, WD, WW)")
    return values


def _match_stats(scores: np.ndarray, counts: Sequence[int], *, nelo_factor: float) -> MatchStats:
    c = np.asarray(counts, dtype=float)
    if np.any(c < 0):
        raise ValueError(f"counts must be non-negative: {tuple(counts)}")
    n = float(c.sum())
    if n == 0:
        raise ValueError("no games to compare")
    p = c / n
    score = float(p @ scores)
    variance = float(p @ (scores - score) ** 2)
    sd = math.sqrt(variance / n)
    up = min(score + Z95 * sd, 1.0)
    low = max(score - Z95 * sd, 0.0)
    elo = score_to_elo(score)
    elo_error = (score_to_elo(up) - score_to_elo(low)) / 2.0
    if variance > 0:
        unit = NELO_SCALE / math.sqrt(nelo_factor * variance)
        nelo = Estimate((score - 0.5) * unit, Z95 * sd * unit)
        los = 0.5 * math.erfc(-(score - 0.5) / sd / math.sqrt(2.0))
    else:  # every game (pair) ended the same way: no spread to normalise by
        nelo = Estimate(0.0 if score == 0.5 else math.copysign(math.inf, score - 0.5), math.inf)
        los = 0.5 if score == 0.5 else float(score > 0.5)
    return MatchStats(int(n), score, Estimate(elo, elo_error), nelo, los)


__all__ = [
    "NELO_SCALE",
    "Z95",
    "Estimate",
    "MatchStats",
    "Tally",
    "elo_to_score",
    "pentanomial_counts",
    "pentanomial_elo",
    "score_to_elo",
    "trinomial_elo",
]
