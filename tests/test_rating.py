"""Tests for arena.stats.rating: fastchess's published vectors, and the joint fit's calibration."""

from __future__ import annotations

import math
import subprocess
import sys

import numpy as np
import pytest
from scipy import special

from arena.stats.elo import (
    Estimate,
    Tally,
    elo_to_score,
    pentanomial_counts,
    pentanomial_elo,
    score_to_elo,
    trinomial_elo,
)
from arena.stats.rating import NATS_PER_ELO, PairCounts, joint_fit, tally_games
from arena.stats.sprt import (
    SprtDecision,
    SprtModel,
    llr_pentanomial,
    llr_trinomial,
    sprt_bounds,
    sprt_decision,
)

# ------------------------------------------------------------- fastchess test vectors
# From fastchess app/tests/elo_test.cpp and sprt_test.cpp (checked there to ±1 %, here
# to the printed two decimals).


def test_trinomial_vector():
    s = trinomial_elo(136, 96, 111)
    assert s.n == 343
    assert s.elo.value == pytest.approx(40.70, abs=0.005)
    assert s.elo.error == pytest.approx(30.43, abs=0.005)
    assert s.nelo.value == pytest.approx(49.77, abs=0.005)
    assert s.nelo.error == pytest.approx(36.77, abs=0.005)
    assert f"{s.los * 100:.2f} %" == "99.60 %"
    assert str(s.elo) == "40.70 +/- 30.43"


def test_trinomial_vector_losing_side():
    s = trinomial_elo(76, 89, 123)
    assert s.nelo.value == pytest.approx(-20.76, abs=0.005)
    assert s.nelo.error == pytest.approx(40.13, abs=0.005)
    assert f"{s.los * 100:.2f} %" == "15.53 %"
    s = trinomial_elo(34, 356, 0)
    assert s.nelo.value == pytest.approx(-508.44, abs=0.005)
    assert s.nelo.error == pytest.approx(34.48, abs=0.005)


@pytest.mark.parametrize(
    ("pairs", "elo", "nelo", "los"),
    [
        ((34, 54, 31 + 32, 64, 75), (55.58, 27.65), (57.94, 28.28), "100.00 %"),
        ((332, 433, 457 + 41, 333, 334), (-8.64, 10.33), (-9.17, 10.96), "5.05 %"),
        ((7895, 8757, 5485 + 200, 568, 9999), (-21.04, 2.95), (-19.01, 2.65), "0.00 %"),
    ],
)
def test_pentanomial_vectors(pairs, elo, nelo, los):
    s = pentanomial_elo(pairs)
    assert s.n == sum(pairs)
    assert (s.elo.value, s.elo.error) == pytest.approx(elo, abs=0.005)
    assert (s.nelo.value, s.nelo.error) == pytest.approx(nelo, abs=0.005)
    assert f"{s.los * 100:.2f} %" == los


@pytest.mark.parametrize(
    ("counts", "elo0", "elo1", "model", "llr"),
    [
        ((21404, 21184, 40708), 0.5, 2.5, "logistic", -1.57),
        ((57433, 57030, 106593), 0.0, 2.0, "logistic", -2.59),
        ((36433, 36027, 68692), 0.0, 2.0, "normalized", 0.92),
        ((10871, 10650, 20431), -1.75, 0.25, "normalized", 2.30),
    ],
)
def test_sprt_trinomial_vectors(counts, elo0, elo1, model, llr):
    assert llr_trinomial(*counts, elo0, elo1, model) == pytest.approx(llr, abs=0.005)


@pytest.mark.parametrize(
    ("pairs", "elo0", "elo1", "model", "llr"),
    [
        ((365, 16618, 36029 + 200, 16974, 390), 0.0, 2.0, "normalized", 2.25),
        ((127, 4883, 10311 + 401, 5150, 104), -1.75, 0.25, "normalized", 3.01),
        ((223, 9863, 20279 + 1000, 10037, 246), 0.5, 2.5, "logistic", -3.07),
        ((871, 26175, 55003 + 980, 26678, 821), 0.0, 2.0, "logistic", -4.98),
    ],
)
def test_sprt_pentanomial_vectors(pairs, elo0, elo1, model, llr):
    assert llr_pentanomial(pairs, elo0, elo1, SprtModel(model)) == pytest.approx(llr, abs=0.005)


def test_sprt_bounds_and_decision():
    lower, upper = sprt_bounds(0.05, 0.05)
    assert lower == pytest.approx(-2.944, abs=5e-4)
    assert upper == pytest.approx(2.944, abs=5e-4)
    assert sprt_bounds(0.05, 0.1) == pytest.approx((math.log(0.1 / 0.95), math.log(0.9 / 0.05)))
    assert sprt_decision(3.0) is SprtDecision.H1
    assert sprt_decision(-3.0) is SprtDecision.H0
    assert sprt_decision(0.0) is SprtDecision.CONTINUE
    assert sprt_decision(2.25) is SprtDecision.CONTINUE


def test_sprt_rejects_bad_parameters():
    with pytest.raises(ValueError):
        sprt_bounds(0.0, 0.05)
    with pytest.raises(ValueError):
        sprt_bounds(0.6, 0.5)
    with pytest.raises(ValueError):
        llr_trinomial(10, 5, 5, 2.0, 0.0)
    with pytest.raises(ValueError):
        llr_pentanomial((1, 2, 3), 0.0, 2.0)


def test_sprt_one_sided_record_is_finite_and_points_the_right_way():
    # Zero counts are regularised as in fastchess, so these stay finite.
    assert 0 < llr_trinomial(300, 0, 0, 0.0, 5.0, "logistic") < math.inf
    assert -math.inf < llr_trinomial(0, 300, 0, 0.0, 5.0, "logistic") < 0
    # Data exactly at elo0 = 0 in the normalised model: H0's distribution is the
    # empirical one, so the ratio cannot favour H1.
    assert llr_trinomial(100, 100, 300, 0.0, 5.0) < 0


# ------------------------------------------------------------------- head to head


def test_score_elo_round_trip():
    for elo in (-400.0, -35.5, 0.0, 12.0, 250.0):
        assert score_to_elo(elo_to_score(elo)) == pytest.approx(elo)
    assert score_to_elo(1.0) == math.inf
    assert score_to_elo(0.0) == -math.inf


def test_pentanomial_counts():
    assert pentanomial_counts([0, 0.5, 1, 1, 1.5, 2, 2, 2]) == (1, 1, 2, 1, 3)
    with pytest.raises(ValueError):
        pentanomial_counts([0.75])


def test_head_to_head_degenerate_inputs():
    with pytest.raises(ValueError, match="no games"):
        trinomial_elo(0, 0, 0)
    with pytest.raises(ValueError):
        trinomial_elo(-1, 3, 0)
    clean = trinomial_elo(10, 0, 0)
    assert clean.elo.value == math.inf and clean.los == 1.0
    draws = pentanomial_elo((0, 0, 7, 0, 0))
    assert draws.elo.value == 0.0 and draws.los == 0.5


# ---------------------------------------------------------------------- joint fit

TRUE = np.array([-150.0, -60.0, 0.0, 70.0, 140.0])  # mean zero, like the fit
FIRST_MOVE = 35.0
NAMES = ["A", "B", "C", "D", "E"]


def simulate(seed: int, games_per_ordered_pair: int = 150) -> dict[tuple[str, str], Tally]:
    """A round robin (3000 games) drawn from the Bradley–Terry model itself."""
    rng = np.random.default_rng(seed)
    counts = {}
    for i, first in enumerate(NAMES):
        for j, second in enumerate(NAMES):
            if i != j:
                p = special.expit(NATS_PER_ELO * (TRUE[i] + FIRST_MOVE - TRUE[j]))
                wins = int(rng.binomial(games_per_ordered_pair, p))
                counts[(first, second)] = Tally(wins, games_per_ordered_pair - wins, 0)
    return counts


def test_joint_fit_intervals_cover_the_truth_about_95_percent():
    # 80 seeds x 6 intervals. Observed: 0.966. Intervals 1.4x too wide give ~0.99,
    # 0.7x too narrow ~0.85, so these bounds catch a broken covariance while leaving
    # several standard errors of room around the nominal 0.95.
    hits = total = 0
    for seed in range(80):
        fit = joint_fit(simulate(seed))
        assert fit.players == tuple(NAMES)
        assert sum(fit.ratings) == pytest.approx(0.0, abs=1e-6)
        hits += int(np.sum(np.abs(np.array(fit.ratings) - TRUE) <= np.array(fit.errors)))
        hits += int(abs(fit.first_move - FIRST_MOVE) <= fit.first_move_error)
        total += len(NAMES) + 1
    assert 0.90 <= hits / total <= 0.985


def test_joint_fit_accepts_game_triples_with_draws():
    rng = np.random.default_rng(7)
    games = []
    for _ in range(4000):
        i, j = rng.choice(5, size=2, replace=False)
        p = elo_to_score(TRUE[i] + FIRST_MOVE - TRUE[j])
        # many draws, but the expected score is still the model's p
        draw = 0.6 * min(p, 1 - p)
        u = rng.random()
        score = 1.0 if u < p - draw / 2 else 0.5 if u < p + draw / 2 else 0.0
        games.append((NAMES[i], NAMES[j], score))
    fit = joint_fit(games, players=NAMES)
    assert fit.games == 4000
    assert np.all(np.abs(np.array(fit.ratings) - TRUE) <= 2 * np.array(fit.errors))
    assert abs(fit.first_move - FIRST_MOVE) <= 2 * fit.first_move_error
    assert fit.superiority("E", "A") > 0.999


def test_two_players_match_head_to_head_elo():
    # Sides balanced and no first-move effect in the data: the joint fit reduces to
    # the head-to-head Elo, up to the prior's slight pull towards the mean.
    counts = {("A", "B"): (50, 30, 20), ("B", "A"): (30, 50, 20)}
    fit = joint_fit(counts)
    h2h = trinomial_elo(100, 60, 40)
    assert fit.first_move == pytest.approx(0.0, abs=1e-6)
    diff = fit.difference("A", "B")
    assert diff.value == pytest.approx(h2h.elo.value, rel=0.02)
    assert diff.value < h2h.elo.value  # shrunk, not inflated
    assert fit.rating("A").value == pytest.approx(-fit.rating("B").value)


def test_first_move_advantage_between_equals():
    counts = {("A", "B"): (60, 40, 0), ("B", "A"): (60, 40, 0)}
    fit = joint_fit(counts, prior_draws=0)
    assert fit.first_move == pytest.approx(score_to_elo(0.6), abs=1e-4)
    assert fit.rating("A").value == pytest.approx(0.0, abs=1e-6)
    # one parameter, 200 games: the Fisher interval of a logit
    sd = 1 / math.sqrt(200 * 0.6 * 0.4) / NATS_PER_ELO
    assert fit.first_move_error == pytest.approx(1.959963984540054 * sd, rel=1e-4)


def test_anchor_fixes_one_rating_and_keeps_differences():
    free = joint_fit(simulate(3))
    fixed = joint_fit(simulate(3), anchor=("C", 1500.0))
    assert fixed.anchor == "C"
    assert fixed.rating("C") == Estimate(1500.0, 0.0)
    assert fixed.first_move == pytest.approx(free.first_move)
    assert fixed.first_move_error == pytest.approx(free.first_move_error)
    for name in NAMES:
        assert fixed.rating(name).value - 1500.0 == pytest.approx(
            free.difference(name, "C").value, abs=1e-9
        )
        # the anchored error of a bot is the error of its difference to the anchor
        assert fixed.rating(name).error == pytest.approx(free.difference(name, "C").error)
        for other in NAMES:
            assert fixed.difference(name, other).error == pytest.approx(
                free.difference(name, other).error
            )
    np.testing.assert_allclose(fixed.los, free.los)
    with pytest.raises(ValueError, match="anchor"):
        joint_fit(simulate(3), anchor=("Z", 0.0))


def test_los_matrix_is_complementary():
    fit = joint_fit(simulate(11))
    los = fit.los
    np.testing.assert_allclose(los + los.T, 1.0, atol=1e-12)
    np.testing.assert_array_equal(np.diag(los), 0.5)
    assert fit.superiority("E", "D") > 0.5 > fit.superiority("D", "E")
    pairs = [(a, b) for a in NAMES for b in NAMES]  # entry by entry, the same numbers
    assert fit.superiorities(pairs) == [los[NAMES.index(a), NAMES.index(b)] for a, b in pairs]
    with pytest.raises(ValueError):
        los[0, 0] = 1.0  # read-only: a fit is a value


def test_player_who_won_everything_gets_a_finite_rating():
    games = [("A", "B", 1.0)] * 20 + [("C", "A", 0.0)] * 20 + [("B", "C", 0.5)] * 10
    fit = joint_fit(games)
    assert all(math.isfinite(x) for x in (*fit.ratings, *fit.errors))
    assert math.isfinite(fit.first_move) and math.isfinite(fit.first_move_error)
    assert fit.rating("A").value > fit.rating("B").value + 200
    assert fit.superiority("A", "C") > 0.95


def test_first_mover_always_wins_gives_a_finite_advantage():
    fit = joint_fit([("A", "B", 1.0), ("B", "A", 1.0)] * 15)
    assert math.isfinite(fit.first_move) and fit.first_move > 200
    assert fit.rating("A").value == pytest.approx(0.0, abs=1e-6)


def test_bad_inputs_raise_clear_errors():
    with pytest.raises(ValueError, match="no games"):
        joint_fit([])
    with pytest.raises(ValueError, match="no games"):
        joint_fit({("A", "B"): (0, 0, 0)})
    with pytest.raises(ValueError, match="score"):
        joint_fit([("A", "B", 0.7)])
    with pytest.raises(ValueError, match="itself"):
        joint_fit([("A", "A", 1.0)])
    with pytest.raises(ValueError, match="not in"):
        joint_fit([("A", "B", 1.0)], players=["A"])
    with pytest.raises(ValueError, match="prior_draws"):
        joint_fit([("A", "B", 1.0)], prior_draws=0)


def test_tally_games_and_indices_as_players():
    assert tally_games([(0, 1, 1.0), (0, 1, 0.5), (1, 0, 0.0)]) == {
        (0, 1): Tally(1, 0, 1),
        (1, 0): Tally(0, 1, 0),
    }
    fit = joint_fit([(0, 1, 1.0), (1, 0, 0.0), (0, 1, 0.5)] * 5, players=[0, 1, 2])
    assert fit.players == (0, 1, 2)
    assert fit.rating(2).value == pytest.approx(-(fit.ratings[0] + fit.ratings[1]))
    with pytest.raises(KeyError):
        fit.rating(3)


def test_a_start_point_changes_where_the_fit_begins_not_where_it_ends():
    rng = np.random.default_rng(5)
    truth = rng.normal(0, 150, 12)
    games = []
    for _ in range(600):
        a, b = rng.choice(12, 2, replace=False)
        p = special.expit(NATS_PER_ELO * (truth[a] - truth[b] + 20))
        games.append((int(a), int(b), float(rng.random() < p)))
    plain = joint_fit(games, players=list(range(12)))
    started = joint_fit(
        games, players=list(range(12)), start={k: 500.0 + 40 * k for k in range(12)}
    )
    assert started.ratings == pytest.approx(plain.ratings, abs=1e-4)
    assert started.errors == pytest.approx(plain.errors, abs=1e-4)
    assert started.first_move == pytest.approx(plain.first_move, abs=1e-4)


def test_pair_counts_give_the_mappings_fit():
    counts = simulate(4)
    players = [*NAMES, "idle"]  # a player without games gets the prior's rating
    index = {p: i for i, p in enumerate(players)}
    arrays = PairCounts(
        first=np.array([index[a] for a, _ in counts]),
        second=np.array([index[b] for _, b in counts]),
        wins=np.array([t.wins for t in counts.values()]),
        losses=np.array([t.losses for t in counts.values()]),
        draws=np.array([t.draws for t in counts.values()]),
    )
    mapped = joint_fit(counts, players=players, anchor=("C", 100.0))
    fitted = joint_fit(arrays, players=players, anchor=("C", 100.0))
    assert fitted.players == mapped.players
    np.testing.assert_allclose(fitted.ratings, mapped.ratings, atol=1e-9)
    np.testing.assert_allclose(fitted.errors, mapped.errors, atol=1e-9)
    np.testing.assert_allclose(fitted.los, mapped.los, atol=1e-12)
    assert fitted.first_move == pytest.approx(mapped.first_move, abs=1e-9)
    assert fitted.rating("idle").error > 500  # only its prior's virtual draws
    one = np.array([1])
    with pytest.raises(ValueError, match="give them"):
        joint_fit(arrays)
    with pytest.raises(ValueError, match="not in `players`"):
        joint_fit(PairCounts(np.array([0]), np.array([9]), one, one, one), players=["a", "b"])
    with pytest.raises(ValueError, match="itself"):
        joint_fit(PairCounts(np.array([1]), np.array([1]), one, one, one), players=["a", "b"])
    with pytest.raises(ValueError, match="negative"):
        joint_fit(PairCounts(np.array([0]), np.array([1]), -one, one, one), players=["a", "b"])


def test_the_joint_fit_imports_no_scipy():
    # A rating list refits within a second of starting; scipy.optimize's import
    # alone took longer on a loaded machine.
    code = (
        "import sys; from arena.stats.rating import joint_fit;"
        "joint_fit([('a', 'b', 1.0), ('b', 'a', 0.5)]);"
        "print(sorted(m for m in sys.modules if m.startswith('scipy')))"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.strip() == "[]"
