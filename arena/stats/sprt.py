"""The generalised SPRT (logistic and normalised models) of Michel Van den Bergh's
"Comments on Normalized Elo", as used by fishtest and fastchess: stop a match as
soon as it has answered "is the new bot better?".

Works on the same counts as head-to-head Elo (``elo.py``): a win/loss/draw tally
or pentanomial pair counts. scipy is imported only inside the root finder.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Sequence
from enum import StrEnum

import numpy as np

from arena.stats.elo import (
    NELO_SCALE,
    PENTANOMIAL_SCORES,
    TRINOMIAL_SCORES,
    elo_to_score,
    five_counts,
)


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
    return _llr(TRINOMIAL_SCORES, (losses, draws, wins), elo0, elo1, SprtModel(model), 1.0)


def llr_pentanomial(
    pairs: Sequence[int],
    elo0: float,
    elo1: float,
    model: SprtModel | str = SprtModel.NORMALIZED,
) -> float:
    """Generalised-SPRT log-likelihood ratio from pair counts ``(LL, LD, WL+DD, WD, WW)``."""
    return _llr(PENTANOMIAL_SCORES, five_counts(pairs), elo0, elo1, SprtModel(model), 2.0)


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

        def tilted(x: float, phi: np.ndarray = phi) -> float:
            return float(probs @ (phi / (1.0 + x * phi)))

        theta = _decreasing_root(tilted, lo, hi)
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
    from scipy import optimize  # here, not above: the joint fit needs numpy only

    width = hi - lo
    for k in range(1, 40):
        eps = width * 10.0**-k
        a, b = lo + eps, hi - eps
        if f(a) > 0 and f(b) < 0:
            return float(optimize.brentq(f, a, b, xtol=1e-15, rtol=1e-15, maxiter=500))
    raise ValueError("could not bracket the SPRT Lagrange multiplier")


__all__ = [
    "SprtDecision",
    "SprtModel",
    "llr_pentanomial",
    "llr_trinomial",
    "sprt_bounds",
    "sprt_decision",
]
