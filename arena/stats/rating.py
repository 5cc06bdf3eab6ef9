"""Ratings and match statistics: pure functions on result counts.

Nothing here reads the store or prints; every function takes plain values (game
triples, win/loss/draw tallies, pentanomial pair counts) and returns small frozen
values, so the reports, the live views, the rating list and ``arena sprt`` all call
the same code.

Three families of numbers are provided:

* :func:`joint_fit` — one Bradley–Terry (logistic Elo) maximum-likelihood fit over
  every player at once, with a fitted *first-move advantage* (an Elo bonus added to
  whoever moves first, like chess's "white advantage"). A joint fit uses every game,
  including indirect ones (A beat B, B beat C says something about A v C), and its
  covariance gives honest intervals and a likelihood-of-superiority matrix.
* :func:`trinomial_elo` / :func:`pentanomial_elo` — head-to-head Elo, normalised
  Elo, their 95 % errors and LOS, computed exactly as fastchess does, so numbers
  can be compared with the chess world's tools.
* :func:`llr_trinomial` / :func:`llr_pentanomial`, :func:`sprt_bounds` and
  :func:`sprt_decision` — the generalised SPRT (logistic and normalised models) of
  Michel Van den Bergh's "Comments on Normalized Elo", as used by fishtest and
  fastchess, to stop a match as soon as it has answered "is the new bot better?".

Conventions: Elo differences use the logistic scale (an expected score of
``1 / (1 + 10**(-d/400))``); draws count as half points; every ``error`` is the
half-width of a 95 % interval.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Hashable, Iterable, Mapping, Sequence
from dataclasses import dataclass
from enum import StrEnum
from typing import NamedTuple, TypeAlias

import numpy as np
from scipy import linalg, optimize, sparse, special

Player: TypeAlias = Hashable
"""A player's name (usually a ``str``) or index; anything hashable works."""

Z95 = 1.959963984540054
"""Two-sided 95 % normal quantile (the value fastchess uses)."""

NATS_PER_ELO = math.log(10) / 400
"""One Elo point in natural-log odds: ``p = expit(NATS_PER_ELO * d)``."""

NELO_SCALE = 800 / math.log(10)
"""Normalised Elo per unit of ``(score - 0.5) / sd``, fastchess's convention."""

_TRINOMIAL_SCORES = np.array([0.0, 0.5, 1.0])
_PENTANOMIAL_SCORES = np.array([0.0, 0.25, 0.5, 0.75, 1.0])


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


# --------------------------------------------------------------------------- joint fit


@dataclass(frozen=True, eq=False)
class JointFit:
    """The result of :func:`joint_fit`.

    ``ratings[i]`` and ``errors[i]`` belong to ``players[i]``; ``covariance`` is the
    ``(n + 1) × (n + 1)`` covariance (Elo²) of the ratings followed by the first-move
    advantage; ``los[i, j]`` is the probability that ``players[i]`` is stronger than
    ``players[j]`` (0.5 on the diagonal). Arrays are read-only.
    """

    players: tuple[Player, ...]
    ratings: tuple[float, ...]
    errors: tuple[float, ...]
    first_move: float
    first_move_error: float
    covariance: np.ndarray
    los: np.ndarray
    games: int
    anchor: Player | None = None

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
        """Likelihood that ``a`` is stronger than ``b``."""
        return float(self.los[self.index(a), self.index(b)])


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


def joint_fit(
    results: Iterable[GameTriple] | PairTallies,
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
    The maximum is found by ``scipy.optimize.minimize`` (trust-region Newton with the
    exact gradient and Hessian; the objective is strictly concave, so it converges).

    ``results`` is either an iterable of ``(first, second, score)`` triples or a
    mapping ``(first, second) -> (wins, losses, draws)`` of the first mover. Players
    are ordered as in ``players`` when given (players without games are allowed and
    get the prior's rating), otherwise by first appearance.

    Ratings are only defined up to a common shift. By default the pool average is 0;
    ``anchor=(name, rating)`` fixes one bot instead (its error is then 0 and every
    other error is that of the difference to the anchor). The fit is done in an
    orthonormal basis of the mean-zero subspace, so the Hessian is invertible and the
    covariance is the exact inverse Fisher information of the identified parameters;
    anchoring is a linear map of that covariance.

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
    """
    if prior_draws < 0:
        raise ValueError("prior_draws must be >= 0")
    tallies = _as_tallies(results)
    names = _player_order(tallies, players)
    n = len(names)
    total = sum(t.games for t in tallies.values())
    if total == 0:
        raise ValueError("no games to rate")
    if n < 2:
        raise ValueError("a rating needs at least two players")
    where = {name: k for k, name in enumerate(names)}

    # Each row of X is one "observation" on eta = (r_1..r_n, a) in log-odds units:
    # a pairing (first, second) seen `count` times with `points` for the first mover,
    # or a virtual draw of the prior. X is sparse (three entries per pairing): a
    # rating list of a few hundred players has tens of thousands of pairings, and a
    # dense X made every Hessian cost seconds.
    firsts: list[int] = []
    seconds: list[int] = []
    count: list[float] = []
    points: list[float] = []
    for (first, second), t in tallies.items():
        if t.games == 0:
            continue
        firsts.append(where[first])
        seconds.append(where[second])
        count.append(t.games)
        points.append(t.points)
    m = len(firsts)
    pairing_rows = np.arange(m)
    row_idx = [pairing_rows, pairing_rows, pairing_rows]
    col_idx = [
        np.array(firsts, dtype=np.intp),
        np.array(seconds, dtype=np.intp),
        np.full(m, n, dtype=np.intp),
    ]
    values = [np.ones(m), -np.ones(m), np.ones(m)]
    rows_total = m
    if prior_draws > 0:
        # Row m + k: player k against the pool average; row m + n: the first move
        # between equals.
        prior = np.full((n, n), -1.0 / n) + np.eye(n)
        grid_rows, grid_cols = np.divmod(np.arange(n * n), n)
        row_idx += [m + grid_rows, np.array([m + n])]
        col_idx += [grid_cols, np.array([n])]
        values += [prior.ravel(), np.ones(1)]
        count += [prior_draws] * (n + 1)
        points += [prior_draws / 2] * (n + 1)
        rows_total = m + n + 1
    X = sparse.csr_array(
        (np.concatenate(values), (np.concatenate(row_idx), np.concatenate(col_idx))),
        shape=(rows_total, n + 1),
    )
    N = np.array(count, dtype=float)
    S = np.array(points, dtype=float)

    # Identified parameters phi: ratings = B @ phi[:-1] (mean zero), a = phi[-1].
    basis = linalg.null_space(np.ones((1, n)))
    M = linalg.block_diag(basis, np.ones((1, 1)))

    def objective(phi: np.ndarray) -> tuple[float, np.ndarray]:
        eta = X @ (M @ phi)
        nll = float(np.sum(S * np.logaddexp(0.0, -eta) + (N - S) * np.logaddexp(0.0, eta)))
        grad = -(M.T @ (X.T @ (S - N * special.expit(eta))))
        return nll, grad

    first_idx, second_idx = col_idx[0], col_idx[1]
    size = n + 1

    def hessian(phi: np.ndarray) -> np.ndarray:
        # X.T diag(w) X summed pairing by pairing (x = e_first - e_second + e_a) and,
        # for the prior, in closed form: O(pairings + n^2) rather than a matrix product.
        p = special.expit(X @ (M @ phi))
        w = N * p * (1.0 - p)
        wp = w[:m]
        a = np.full(m, n)
        fisher = np.zeros(size * size)
        for r, c, sign in (
            (first_idx, first_idx, 1.0),
            (second_idx, second_idx, 1.0),
            (a, a, 1.0),
            (first_idx, second_idx, -1.0),
            (second_idx, first_idx, -1.0),
            (first_idx, a, 1.0),
            (a, first_idx, 1.0),
            (second_idx, a, -1.0),
            (a, second_idx, -1.0),
        ):
            fisher += np.bincount(r * size + c, weights=sign * wp, minlength=size * size)
        fisher = fisher.reshape(size, size)
        if prior_draws > 0:
            wk, wa = w[m : m + n], w[m + n]
            block = np.diag(wk) - (wk[:, None] + wk[None, :]) / n + wk.sum() / n**2
            fisher[:n, :n] += block
            fisher[n, n] += wa
        return M.T @ fisher @ M

    result = optimize.minimize(
        objective,
        _start_point(start, names, basis),
        jac=True,
        hess=hessian,
        method="trust-ncg",
        options={"gtol": 1e-9},
    )
    H = hessian(result.x)
    try:
        cho = linalg.cho_factor(H)
    except linalg.LinAlgError:
        raise ValueError(
            "ratings are not identified by these games (use prior_draws > 0)"
        ) from None
    # trust-exact may stop with "failure to predict improvement" when the remaining
    # gain is below floating-point noise; what matters is that the Newton step left
    # is negligible (here under 1e-6 nats, about 2e-4 Elo).
    newton_step = linalg.cho_solve(cho, objective(result.x)[1])
    if np.max(np.abs(newton_step)) > 1e-6:
        raise ValueError(
            "rating fit did not converge; the games may not identify the ratings "
            "(a bot that won or lost everything needs prior_draws > 0)"
        )

    eta = M @ result.x / NATS_PER_ELO
    cov = M @ linalg.cho_solve(cho, np.eye(n)) @ M.T / NATS_PER_ELO**2
    anchor_name = None
    if anchor is not None:
        anchor_name, anchor_rating = anchor
        if anchor_name not in where:
            raise ValueError(f"anchor {anchor_name!r} is not among the players")
        k = where[anchor_name]
        shift = np.eye(n + 1)
        shift[:n, k] -= 1.0
        eta = shift @ eta
        eta[:n] += anchor_rating
        cov = shift @ cov @ shift.T
    cov = (cov + cov.T) / 2.0
    variances = np.clip(np.diag(cov), 0.0, None)
    ratings = eta[:n]

    diff = ratings[:, None] - ratings[None, :]
    var_diff = variances[:n, None] + variances[None, :n] - 2.0 * cov[:n, :n]
    with np.errstate(divide="ignore", invalid="ignore"):
        los = special.ndtr(diff / np.sqrt(np.clip(var_diff, 0.0, None)))
    np.fill_diagonal(los, 0.5)
    cov.setflags(write=False)
    los.setflags(write=False)

    errors = Z95 * np.sqrt(variances)
    return JointFit(
        players=tuple(names),
        ratings=tuple(float(r) for r in ratings),
        errors=tuple(float(e) for e in errors[:n]),
        first_move=float(eta[n]),
        first_move_error=float(errors[n]),
        covariance=cov,
        los=los,
        games=total,
        anchor=anchor_name,
    )


def _start_point(
    start: Mapping[Player, float] | None, names: Sequence[Player], basis: np.ndarray
) -> np.ndarray:
    """``start``'s ratings as the optimiser's identified parameters (first move 0)."""
    n = len(names)
    if not start:
        return np.zeros(n)
    r = np.array([float(start.get(p, 0.0)) for p in names])
    if not np.all(np.isfinite(r)):
        return np.zeros(n)
    r = (r - r.mean()) * NATS_PER_ELO
    return np.concatenate([basis.T @ r, [0.0]])


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
    missing = [p for p in seen if p not in set(names)]
    if missing:
        raise ValueError(f"results name players not in `players`: {missing!r}")
    return names


# --------------------------------------------------------------------- head to head


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
    return 1.0 / (1.0 + 10.0 ** (-elo / 400.0))


def trinomial_elo(wins: int, losses: int, draws: int) -> MatchStats:
    """Head-to-head Elo from game counts (fastchess ``EloWDL``).

    Treats games as independent; when games are played in pairs with swapped sides,
    prefer :func:`pentanomial_elo`, whose error accounts for the pairing.
    """
    return _match_stats(_TRINOMIAL_SCORES, (losses, draws, wins), nelo_factor=1.0)


def pentanomial_elo(pairs: Sequence[int]) -> MatchStats:
    """Head-to-head Elo from game-pair counts (fastchess ``EloPentanomial``).

    ``pairs`` is ``(LL, LD, WL + DD, WD, WW)``: how many pairs scored 0, ½, 1, 1½
    and 2 points. Pairs from the same opening with sides swapped are correlated, so
    counting pairs rather than games gives the honest (usually smaller) error.
    """
    return _match_stats(_PENTANOMIAL_SCORES, _five(pairs), nelo_factor=2.0)


def pentanomial_counts(pair_scores: Iterable[float]) -> tuple[int, int, int, int, int]:
    """Bin each pair's total score (0, 0.5, 1, 1.5 or 2) into ``(LL, LD, WL+DD, WD, WW)``."""
    counts = [0] * 5
    for total in pair_scores:
        k = float(total) * 2
        if k not in (0.0, 1.0, 2.0, 3.0, 4.0):
            raise ValueError(f"a pair scores 0, 0.5, 1, 1.5 or 2 points, not {total!r}")
        counts[int(k)] += 1
    return counts[0], counts[1], counts[2], counts[3], counts[4]


def _five(pairs: Sequence[int]) -> tuple[int, ...]:
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
        los = float(special.ndtr((score - 0.5) / sd))
    else:  # every game (pair) ended the same way: no spread to normalise by
        nelo = Estimate(0.0 if score == 0.5 else math.copysign(math.inf, score - 0.5), math.inf)
        los = 0.5 if score == 0.5 else float(score > 0.5)
    return MatchStats(int(n), score, Estimate(elo, elo_error), nelo, los)


# ----------------------------------------------------------------------------- SPRT


class SprtModel(StrEnum):
    """How ``elo0``/``elo1`` are read: logistic Elo, or normalised Elo."""

    LOGISTIC = "logistic"
    NORMALIZED = "normalized"


class SprtDecision(StrEnum):
    H0 = "H0"
    """``elo0`` accepted: the candidate is not (enough) better."""
    H1 = "H1"
    """``elo1`` accepted: the candidate is better."""
    CONTINUE = "continue"


def sprt_bounds(alpha: float = 0.05, beta: float = 0.05) -> tuple[float, float]:
    """Wald's stopping bounds ``(log(beta/(1-alpha)), log((1-beta)/alpha))``."""
    _check_error_rates(alpha, beta)
    return math.log(beta / (1.0 - alpha)), math.log((1.0 - beta) / alpha)


def sprt_decision(llr: float, alpha: float = 0.05, beta: float = 0.05) -> SprtDecision:
    """Which hypothesis the log-likelihood ratio accepts, if any yet."""
    lower, upper = sprt_bounds(alpha, beta)
    if llr >= upper:
        return SprtDecision.H1
    if llr <= lower:
        return SprtDecision.H0
    return SprtDecision.CONTINUE


def llr_trinomial(
    wins: int,
    losses: int,
    draws: int,
    elo0: float,
    elo1: float,
    model: SprtModel | str = SprtModel.NORMALIZED,
) -> float:
    """Generalised-SPRT log-likelihood ratio of ``elo1`` against ``elo0`` from game counts.

    As fastchess: zero counts become 1e-3 (so a one-sided record still gives a finite
    LLR), and the distribution with the hypothesised Elo closest to the empirical one
    is found by the maximum-likelihood formulas of Van den Bergh's note.
    """
    return _llr(_TRINOMIAL_SCORES, (losses, draws, wins), elo0, elo1, SprtModel(model), 1.0)


def llr_pentanomial(
    pairs: Sequence[int],
    elo0: float,
    elo1: float,
    model: SprtModel | str = SprtModel.NORMALIZED,
) -> float:
    """Generalised-SPRT log-likelihood ratio from pair counts ``(LL, LD, WL+DD, WD, WW)``."""
    return _llr(_PENTANOMIAL_SCORES, _five(pairs), elo0, elo1, SprtModel(model), 2.0)


def _check_error_rates(alpha: float, beta: float) -> None:
    if not (0.0 < alpha < 1.0 and 0.0 < beta < 1.0):
        raise ValueError("alpha and beta must lie strictly between 0 and 1")
    if alpha + beta >= 1.0:
        raise ValueError("alpha + beta must be less than 1")


def _llr(
    scores: np.ndarray,
    counts: Sequence[int],
    elo0: float,
    elo1: float,
    model: SprtModel,
    nelo_factor: float,
) -> float:
    if not elo0 < elo1:
        raise ValueError("elo0 must be less than elo1")
    if any(c < 0 for c in counts):
        raise ValueError(f"counts must be non-negative: {tuple(counts)}")
    c = np.array([float(x) if x else 1e-3 for x in counts])
    total = float(c.sum())
    probs = c / total
    if model is SprtModel.NORMALIZED:
        t0 = math.sqrt(nelo_factor) * elo0 / NELO_SCALE
        t1 = math.sqrt(nelo_factor) * elo1 / NELO_SCALE
        p0 = _mle_normalized(scores, probs, 0.5, t0)
        p1 = _mle_normalized(scores, probs, 0.5, t1)
    else:
        p0 = _mle_expectation(scores, probs, elo_to_score(elo0))
        p1 = _mle_expectation(scores, probs, elo_to_score(elo1))
    return float(total * (probs @ (np.log(p1) - np.log(p0))))


def _mle_expectation(scores: np.ndarray, probs: np.ndarray, s: float) -> np.ndarray:
    """Most likely distribution on ``scores`` with mean ``s`` (Van den Bergh, prop. 1.1)."""
    d = scores - s
    theta = _decreasing_root(
        lambda x: float(probs @ (d / (1.0 + x * d))), -1.0 / d[-1], -1.0 / d[0]
    )
    return probs / (1.0 + theta * d)


def _mle_normalized(scores: np.ndarray, probs: np.ndarray, mu_ref: float, t: float) -> np.ndarray:
    """Most likely distribution with ``(mean - mu_ref) / sd = t`` (Van den Bergh, §4.1).

    A fixed-point iteration from the uniform distribution, each step solving the
    one-dimensional Lagrange equation for ``theta``.
    """
    p = np.full(len(scores), 1.0 / len(scores))
    with np.errstate(divide="ignore"):
        return _fixed_point(scores, probs, mu_ref, t, p)


def _fixed_point(
    scores: np.ndarray, probs: np.ndarray, mu_ref: float, t: float, p: np.ndarray
) -> np.ndarray:
    for _ in range(1000):
        mu = float(p @ scores)
        # Guard against rounding below zero when t asks for an extreme distribution.
        sigma = math.sqrt(max(float(p @ (scores - mu) ** 2), 1e-18))
        phi = scores - mu_ref - 0.5 * t * sigma * (1.0 + ((scores - mu) / sigma) ** 2)
        lo, hi = -1.0 / phi.max(), -1.0 / phi.min()
        theta = _decreasing_root(lambda x, phi=phi: float(probs @ (phi / (1.0 + x * phi))), lo, hi)
        new = probs / (1.0 + theta * phi)
        new = np.clip(new, 1e-300, None)
        new /= new.sum()
        change = float(np.max(np.abs(new - p)))
        p = new
        if change < 1e-12:
            break
    return p


def _decreasing_root(f: Callable[[float], float], lo: float, hi: float) -> float:
    """Root of ``f``, decreasing from +inf at ``lo`` to -inf at ``hi`` (open interval).

    The poles sit exactly on the ends, so step inside until the signs bracket the
    root, then let ``scipy.optimize.brentq`` finish.
    """
    width = hi - lo
    for k in range(1, 40):
        eps = width * 10.0**-k
        a, b = lo + eps, hi - eps
        if f(a) > 0 and f(b) < 0:
            return float(optimize.brentq(f, a, b, xtol=1e-15, rtol=1e-15, maxiter=500))
    raise ValueError("could not bracket the SPRT Lagrange multiplier")
