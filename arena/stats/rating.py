"""The joint rating fit: pure functions on result counts.

Nothing here reads the store or prints; every function takes plain values (game
triples, win/loss/draw tallies, pentanomial pair counts) and returns small frozen
values, so the reports, the live views, the rating list and ``arena sprt`` all call
the same code.

* :func:`joint_fit` — one Bradley–Terry (logistic Elo) maximum-likelihood fit over
  every player at once, with a fitted *first-move advantage* (an Elo bonus added to
  whoever moves first, like chess's "white advantage"). A joint fit uses every game,
  including indirect ones (A beat B, B beat C says something about A v C), and its
  covariance gives honest intervals and a likelihood-of-superiority matrix.

Beside it, as fastchess splits them: head-to-head Elo and LOS (``elo.py``) and
the SPRT (``sprt.py``).

Only numpy is imported here (scipy only inside the SPRT's root finder), so a
program that just fits ratings starts fast.

Conventions: Elo differences use the logistic scale (an expected score of
``1 / (1 + 10**(-d/400))``); draws count as half points; every ``error`` is the
half-width of a 95 % interval.
"""

from __future__ import annotations

import functools
import math
from collections.abc import Hashable, Iterable, Mapping, Sequence
from dataclasses import dataclass
from typing import TypeAlias

import numpy as np
from numpy.typing import NDArray
from threadpoolctl import threadpool_limits

from arena.stats.elo import Z95, Estimate, Tally

Player: TypeAlias = Hashable
"""A player's name (usually a ``str``) or index; anything hashable works."""

NATS_PER_ELO = math.log(10) / 400
"""One Elo point in natural-log odds: ``p = expit(NATS_PER_ELO * d)``."""


@dataclass(frozen=True, slots=True)
class RatedRow:
    """What every rated table's row has: a report's standings, a rating list's rows.

    ``rating``/``error`` are the joint fit's Elo and the half-width of its 95 %
    interval (``None`` when no game could be rated). ``los_next`` is the
    likelihood that this player is stronger than the next-ranked one (``None``
    for the last).
    """

    rank: int
    player: str
    rating: float | None
    error: float | None
    games: int
    wins: int
    losses: int
    draws: int
    los_next: float | None

    @property
    def points(self) -> float:
        return self.wins + 0.5 * self.draws

    @property
    def score_pct(self) -> float | None:
        """Points per game in percent; ``None`` without games (not 0: nothing is known)."""
        return None if self.games == 0 else 100.0 * self.points / self.games


@dataclass(frozen=True, eq=False)
class JointFit:
    """The result of :func:`joint_fit`.

    ``ratings[i]`` and ``errors[i]`` belong to ``players[i]``; ``covariance`` is the
    ``(n + 1) × (n + 1)`` covariance (Elo²) of the ratings followed by the first-move
    advantage; ``los[i, j]`` is the probability that ``players[i]`` is stronger than
    ``players[j]`` (0.5 on the diagonal), computed when first asked for (a list of
    hundreds of players needs only its neighbours', :meth:`superiority`). Arrays
    are read-only.
    """

    players: tuple[Player, ...]
    ratings: tuple[float, ...]
    errors: tuple[float, ...]
    first_move: float
    first_move_error: float
    covariance: np.ndarray
    games: int
    anchor: Player | None = None

    @functools.cached_property
    def los(self) -> np.ndarray:
        everyone = np.arange(len(self.players))
        los = _los(np.array(self.ratings), self.covariance, everyone, everyone)
        los.setflags(write=False)
        return los

    def index(self, player: Player) -> int:
        try:
            return self.players.index(player)
        except ValueError:
            raise KeyError(f"unknown player {player!r}") from None

    def rating(self, player: Player) -> Estimate:
        i = self.index(player)
        return Estimate(self.ratings[i], self.errors[i])

    @property
    def first_move_advantage(self) -> Estimate:
        return Estimate(self.first_move, self.first_move_error)

    def difference(self, a: Player, b: Player) -> Estimate:
        """``rating(a) - rating(b)`` with its interval (which uses their covariance)."""
        i, j = self.index(a), self.index(b)
        c = self.covariance
        var = max(c[i, i] + c[j, j] - 2.0 * c[i, j], 0.0)
        return Estimate(self.ratings[i] - self.ratings[j], Z95 * math.sqrt(var))

    def superiority(self, a: Player, b: Player) -> float:
        """Likelihood that ``a`` is stronger than ``b`` (``los``'s entry, alone)."""
        return self.superiorities([(a, b)])[0]

    def superiorities(self, pairs: Sequence[tuple[Player, Player]]) -> list[float]:
        """:meth:`superiority` of each ``(a, b)``, without the whole matrix."""
        index = {p: i for i, p in enumerate(self.players)}
        try:
            rows = np.array([index[a] for a, _ in pairs], dtype=np.intp)
            cols = np.array([index[b] for _, b in pairs], dtype=np.intp)
        except KeyError as exc:
            raise KeyError(f"unknown player {exc.args[0]!r}") from None
        los: list[float] = _los(
            np.array(self.ratings), self.covariance, rows, cols, outer=False
        ).tolist()
        return los


def _los(
    ratings: np.ndarray, cov: np.ndarray, rows: np.ndarray, cols: np.ndarray, *, outer: bool = True
) -> np.ndarray:
    """``P(rating[row] > rating[col])`` from the normal approximation of the
    difference: for every row and column index (``outer``), or index by index."""
    variances = np.clip(np.diag(cov), 0.0, None)
    if outer:
        rows, cols = rows[:, None], cols[None, :]
    diff = ratings[rows] - ratings[cols]
    var_diff = variances[rows] + variances[cols] - 2.0 * cov[rows, cols]
    with np.errstate(divide="ignore", invalid="ignore"):
        los = _normal_cdf(diff / np.sqrt(np.clip(var_diff, 0.0, None)))
    los[np.broadcast_to(rows == cols, los.shape)] = 0.5
    return los


GameTriple: TypeAlias = tuple[Player, Player, float]
"""``(first mover, second mover, first mover's score)`` with score 1, 0.5 or 0."""

PairTallies: TypeAlias = Mapping[tuple[Player, Player], Tally | Sequence[int]]
"""Aggregated results: ``(first mover, second mover) -> (wins, losses, draws)`` of the
first mover."""


def tally_games(games: Iterable[GameTriple]) -> dict[tuple[Player, Player], Tally]:
    """Aggregate game triples into first-mover tallies per ordered pair.

    Raises ``ValueError`` for a score other than 1, ½ or 0 or a player facing itself,
    so that bad data fails here and not as a silently wrong rating.
    """
    counts: dict[tuple[Player, Player], list[int]] = {}
    for first, second, score in games:
        if first == second:
            raise ValueError(f"player {first!r} cannot play itself")
        slot = {1.0: 0, 0.0: 1, 0.5: 2}.get(float(score))
        if slot is None:
            raise ValueError(f"score must be 1, 0.5 or 0, not {score!r}")
        counts.setdefault((first, second), [0, 0, 0])[slot] += 1
    return {key: Tally(*value) for key, value in counts.items()}


@dataclass(frozen=True, eq=False)
class PairCounts:
    """First-mover results per ordered pairing as arrays: pairing ``k`` is
    ``players[first[k]]`` moving first against ``players[second[k]]``, with the first
    mover's ``wins[k]``, ``losses[k]`` and ``draws[k]``.

    The rating list holds tens of thousands of pairings as arrays already; handing
    them over as a dict of tuples (and back) cost more than the fit itself.
    """

    first: np.ndarray
    second: np.ndarray
    wins: np.ndarray
    losses: np.ndarray
    draws: np.ndarray


def joint_fit(
    results: Iterable[GameTriple] | PairTallies | PairCounts,
    *,
    players: Sequence[Player] | None = None,
    anchor: tuple[Player, float] | None = None,
    prior_draws: float = 1.0,
    start: Mapping[Player, float] | None = None,
) -> JointFit:
    """Fit every player's Elo and the first-move advantage in one Bradley–Terry model.

    The model: a game where ``i`` moves first against ``j`` gives ``i`` an expected
    score of ``1 / (1 + 10**(-(r_i + a - r_j) / 400))``, with ``a`` the first-move
    advantage; draws count as half a win (the usual "half points" quasi-likelihood).
    The maximum is found by Newton's method with the exact Hessian and a
    backtracking line search (the objective is strictly concave, so it converges,
    quadratically near the end).

    ``results`` is an iterable of ``(first, second, score)`` triples, a mapping
    ``(first, second) -> (wins, losses, draws)`` of the first mover, or
    :class:`PairCounts` (whose indices need ``players``). Players are ordered as in
    ``players`` when given (players without games are allowed and get the prior's
    rating), otherwise by first appearance.

    Ratings are only defined up to a common shift. By default the pool average is 0;
    ``anchor=(name, rating)`` fixes one bot instead (its error is then 0 and every
    other error is that of the difference to the anchor). The shift is pinned by a
    penalty on the ratings' sum, which moves nothing else: the likelihood is flat
    along that direction, so the penalised Hessian's inverse is the exact inverse
    Fisher information of the identified parameters plus a known term along the
    shift, which is taken off. Anchoring is a linear map of that covariance.

    Regularisation (why: a bot that won or lost every game has an infinite maximum
    likelihood rating, and a perfect first-mover record an infinite advantage):
    each player gets ``prior_draws`` virtual draws against a phantom rated at the pool
    average, and the first-move advantage gets ``prior_draws`` virtual draws between
    equals. This is a weak prior (BayesElo uses the same idea), negligible once a
    player has dozens of games, that keeps every estimate and error finite. The
    reported covariance is that of this penalised fit. ``prior_draws=0`` gives the
    plain MLE and a ``ValueError`` if the data do not identify it.

    ``start`` (Elo by player, any shift) only sets where the optimiser begins, for a
    refit after a few more games (the rating list): the maximum is the same.

    With draws the half-point likelihood over-states the variance of a game's
    score, so intervals are then slightly conservative (wider than 95 %).

    Only numpy is used: the rating list refits within a second of starting, and
    importing scipy.optimize alone would take most of that.
    """
    if prior_draws < 0:
        raise ValueError("prior_draws must be >= 0")
    if isinstance(results, PairCounts):
        if players is None:
            raise ValueError("PairCounts index `players`: give them")
        names = list(players)
        if len(set(names)) != len(names):
            raise ValueError("players must be distinct")
        first, second, wins, losses, draws = _check_counts(results, len(names))
    else:
        tallies = _as_tallies(results)
        names = _player_order(tallies, players)
        where = {name: k for k, name in enumerate(names)}
        kept = [(key, t) for key, t in tallies.items() if t.games]
        first = np.array([where[a] for (a, _), _ in kept], dtype=np.intp)
        second = np.array([where[b] for (_, b), _ in kept], dtype=np.intp)
        wins, losses, draws = (
            np.array([t[i] for _, t in kept], dtype=float).reshape(len(kept)) for i in range(3)
        )
    n = len(names)
    games = wins + losses + draws
    total = int(games.sum())
    if total == 0:
        raise ValueError("no games to rate")
    if n < 2:
        raise ValueError("a rating needs at least two players")
    used = games > 0
    problem = _Problem(
        first[used], second[used], games[used], (wins + draws / 2)[used], n, prior_draws
    )
    # One BLAS thread: a few hundred players make matrices too small to share out,
    # and on a busy machine OpenBLAS's threads made each solve ten times slower.
    with threadpool_limits(1, user_api="blas"):
        x = problem.maximise(_start_point(start, names))
        try:
            inverse = np.linalg.inv(np.linalg.cholesky(problem.hessian(x)))
        except np.linalg.LinAlgError:
            raise ValueError(
                "ratings are not identified by these games (use prior_draws > 0)"
            ) from None
    # (H + c u u^T)^-1 = H^+ + u u^T / (c n^2): take the shift's term off.
    shift = np.zeros(n + 1)
    shift[:n] = 1.0
    cov = inverse.T @ inverse - np.outer(shift, shift) / (_SHIFT_PENALTY * n * n)

    eta = x / NATS_PER_ELO
    cov = cov / NATS_PER_ELO**2
    anchor_name = None
    if anchor is not None:
        anchor_name, anchor_rating = anchor
        if anchor_name not in names:
            raise ValueError(f"anchor {anchor_name!r} is not among the players")
        k = names.index(anchor_name)
        move = np.eye(n + 1)
        move[:n, k] -= 1.0
        eta = move @ eta
        eta[:n] += anchor_rating
        cov = move @ cov @ move.T
    cov = (cov + cov.T) / 2.0
    variances = np.clip(np.diag(cov), 0.0, None)
    ratings = eta[:n]
    cov.setflags(write=False)

    errors = Z95 * np.sqrt(variances)
    return JointFit(
        players=tuple(names),
        ratings=tuple(float(r) for r in ratings),
        errors=tuple(float(e) for e in errors[:n]),
        first_move=float(eta[n]),
        first_move_error=float(errors[n]),
        covariance=cov,
        games=total,
        anchor=anchor_name,
    )


_SHIFT_PENALTY = 1.0
"""``c`` of the penalty ``c/2 (sum of ratings)^2`` (in nats) that pins the shift."""

_erfc = np.frompyfunc(math.erfc, 1, 1)


def _normal_cdf(x: np.ndarray) -> NDArray[np.float64]:
    return 0.5 * np.asarray(_erfc(-x / math.sqrt(2.0)), dtype=float)


def _expit(x: NDArray[np.float64]) -> NDArray[np.float64]:
    """``1 / (1 + exp(-x))`` without overflow, accurate in both tails."""
    return np.exp(-np.logaddexp(0.0, -x))


class _Problem:
    """The penalised negative log-likelihood in ``x = (r_1..r_n, a)`` (nats).

    Rows are pairings (``count`` games, ``points`` for the first mover, ``eta =
    r_first - r_second + a``) and, with a prior, a virtual row per player (``eta =
    r_k - mean(r)``) and one for the first move (``eta = a``). Everything is a
    bincount over the pairings, O(pairings + n^2) per Hessian, so a list of a few
    hundred players and tens of thousands of pairings fits in tens of milliseconds.
    """

    def __init__(
        self,
        first: np.ndarray,
        second: np.ndarray,
        count: np.ndarray,
        points: np.ndarray,
        n: int,
        prior_draws: float,
    ) -> None:
        self.first = first.astype(np.intp)
        self.second = second.astype(np.intp)
        self.count = count.astype(float)
        self.points = points.astype(float)
        self.n = n
        self.prior = float(prior_draws)
        self.pair_cell = self.first * n + self.second

    def _etas(self, x: np.ndarray) -> tuple[np.ndarray, np.ndarray, float]:
        r, a = x[: self.n], x[self.n]
        return r[self.first] - r[self.second] + a, r - r.mean(), a

    def value(self, x: np.ndarray) -> float:
        eta, eta_p, a = self._etas(x)
        f = float(np.sum(self.count * np.logaddexp(0.0, eta) - self.points * eta))
        if self.prior:
            half = self.prior / 2
            f += float(np.sum(self.prior * np.logaddexp(0.0, eta_p) - half * eta_p))
            f += self.prior * float(np.logaddexp(0.0, a)) - half * a
        return f + _SHIFT_PENALTY / 2 * float(x[: self.n].sum()) ** 2

    def gradient(self, x: np.ndarray) -> np.ndarray:
        n = self.n
        eta, eta_p, a = self._etas(x)
        v = self.count * _expit(eta) - self.points
        g = np.empty(n + 1)
        g[:n] = np.bincount(self.first, v, n) - np.bincount(self.second, v, n)
        g[n] = v.sum()
        if self.prior:
            vp = self.prior * (_expit(eta_p) - 0.5)
            g[:n] += vp - vp.mean()
            g[n] += self.prior * (float(_expit(np.array(a))) - 0.5)
        g[:n] += _SHIFT_PENALTY * x[:n].sum()
        return g

    def hessian(self, x: np.ndarray) -> np.ndarray:
        n = self.n
        eta, eta_p, a = self._etas(x)
        w = self.count * _expit(eta) * _expit(-eta)
        h = np.zeros((n + 1, n + 1))
        cross = np.bincount(self.pair_cell, w, n * n).reshape(n, n)
        h[:n, :n] = -(cross + cross.T)
        as_first, as_second = np.bincount(self.first, w, n), np.bincount(self.second, w, n)
        h[np.arange(n), np.arange(n)] += as_first + as_second
        h[:n, n] = h[n, :n] = as_first - as_second
        h[n, n] = w.sum()
        if self.prior:
            wk = self.prior * _expit(eta_p) * _expit(-eta_p)
            h[:n, :n] += np.diag(wk) - (wk[:, None] + wk[None, :]) / n + wk.sum() / n**2
            h[n, n] += self.prior * float(_expit(np.array(a)) * _expit(np.array(-a)))
        h[:n, :n] += _SHIFT_PENALTY
        return h

    def maximise(self, x: np.ndarray) -> np.ndarray:
        """Newton steps until the step is below 1e-10 nats. A step is halved while
        it does not decrease the objective enough (Armijo), except once the
        predicted decrease is tiny: there the full step is right and the objective's
        rounding would only mislead the test."""
        for _ in range(_MAX_NEWTON_STEPS):
            g = self.gradient(x)
            try:
                step = np.linalg.solve(self.hessian(x), -g)
            except np.linalg.LinAlgError:
                raise ValueError(
                    "ratings are not identified by these games (use prior_draws > 0)"
                ) from None
            if not np.all(np.isfinite(step)):
                break
            slope = float(g @ step)
            if -slope > 1e-6:
                f, t = self.value(x), 1.0
                while t > 1e-6 and self.value(x + t * step) > f + 1e-4 * t * slope:
                    t /= 2
                step = t * step
            x = x + step
            if float(np.max(np.abs(step))) < 1e-10:
                return x
        raise ValueError(
            "rating fit did not converge; the games may not identify the ratings "
            "(a bot that won or lost everything needs prior_draws > 0)"
        )


_MAX_NEWTON_STEPS = 200


def _start_point(start: Mapping[Player, float] | None, names: Sequence[Player]) -> np.ndarray:
    """``start``'s ratings (mean zero, nats) and a first-move advantage of 0."""
    n = len(names)
    x = np.zeros(n + 1)
    if not start:
        return x
    r = np.array([float(start.get(p, 0.0)) for p in names])
    if np.all(np.isfinite(r)):
        x[:n] = (r - r.mean()) * NATS_PER_ELO
    return x


def _check_counts(counts: PairCounts, n: int) -> tuple[np.ndarray, ...]:
    first = np.asarray(counts.first, dtype=np.intp)
    second = np.asarray(counts.second, dtype=np.intp)
    arrays = [np.asarray(x, dtype=float) for x in (counts.wins, counts.losses, counts.draws)]
    if not all(len(x) == len(first) for x in (second, *arrays)):
        raise ValueError("PairCounts arrays differ in length")
    if len(first) and (min(first.min(), second.min()) < 0 or max(first.max(), second.max()) >= n):
        raise ValueError("PairCounts index a player not in `players`")
    if any(np.any(x < 0) for x in arrays):
        raise ValueError("PairCounts hold a negative count")
    if np.any((first == second) & (sum(arrays) > 0)):
        raise ValueError("a player cannot play itself")
    return first, second, *arrays


def _as_tallies(results: Iterable[GameTriple] | PairTallies) -> dict[tuple[Player, Player], Tally]:
    if not isinstance(results, Mapping):
        return tally_games(results)
    tallies: dict[tuple[Player, Player], Tally] = {}
    for (first, second), value in results.items():
        t = Tally(*value)
        if min(t) < 0:
            raise ValueError(f"negative count for {first!r} v {second!r}: {t}")
        if first == second and t.games:
            raise ValueError(f"player {first!r} cannot play itself")
        tallies[(first, second)] = t
    return tallies


def _player_order(
    tallies: Mapping[tuple[Player, Player], Tally], players: Sequence[Player] | None
) -> list[Player]:
    seen: dict[Player, None] = {}
    for (first, second), t in tallies.items():
        if t.games:
            seen.setdefault(first)
            seen.setdefault(second)
    if players is None:
        return list(seen)
    names = list(players)
    if len(set(names)) != len(names):
        raise ValueError("players must be distinct")
    known = set(names)
    missing = [p for p in seen if p not in known]
    if missing:
        raise ValueError(f"results name players not in `players`: {missing!r}")
    return names
