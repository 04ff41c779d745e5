"""Private discovery of a schema's domain (dpkme.privacy.discovery): DP quantile bounds, thresholded categories.

The statistical checks compare empirical frequencies with exact probabilities by two-sided binomial
acceptance intervals; each test's total false-failure probability is at most 1e-6 (Bonferroni over its
checks), so the suite does not flake.
"""

from __future__ import annotations

import math

import numpy as np
import pandas as pd
import pytest
from scipy import stats

from dpkme.privacy.accounting import BudgetLedger
from dpkme.privacy.calibration import gaussian_delta
from dpkme.privacy.discovery import (
    PrivateBounds,
    PrivateCategories,
    _dp_quantile,
    category_threshold,
    private_bounds,
    private_categories,
)

FALSE_FAILURE = 1e-6


def _binomial_ok(k: int, n: int, p: float, alpha: float) -> bool:
    """Is k successes in n trials inside the two-sided (1 - alpha) acceptance region of Binomial(n, p)?"""
    lo, hi = stats.binom.ppf(alpha / 2, n, p), stats.binom.isf(alpha / 2, n, p)
    return bool(lo - 1 <= k <= hi + 1)


# --------------------------------------------------------------------------- bounds
def test_private_bounds_lie_in_the_declared_range_and_charge_pure_dp():
    x = np.random.default_rng(0).normal(50, 10, size=5000)
    x[:7] = np.nan
    b = private_bounds(x, epsilon=2.0, lower=-100, upper=200, random_state=3)
    assert isinstance(b, PrivateBounds)
    assert -100 <= b.lower < b.upper <= 200
    assert 10 < b.lower < 50 < b.upper < 90                      # near the 1 % / 99 % quantiles (20.7, 79.3)
    c = b.charge
    assert c.mechanism == "exponential" and c.delta == 0.0 and c.count == 2
    assert c.epsilon == pytest.approx(1.0) and c.details["neighbouring"] == "replace-one"
    assert b.seed == 3 and b.noise_source == "seeded"
    d = b.to_dict()
    assert d["declared"] == [-100.0, 200.0] and d["quantiles"] == [0.01, 0.99]
    # replayable with a seed, fresh without
    assert private_bounds(x, epsilon=2.0, lower=-100, upper=200, random_state=3).lower == b.lower
    real = private_bounds(x, epsilon=2.0, lower=-100, upper=200)
    assert real.seed is None and real.noise_source == "os-entropy"
    # values outside the declared range are clipped: the bounds stay inside it
    wild = private_bounds([1e9, -1e9, 5.0], epsilon=0.1, lower=0, upper=10, quantiles=(0.0, 1.0), random_state=1)
    assert 0 <= wild.lower < wild.upper <= 10
    # an empty (all missing) column gives uniform draws in the declared range, still DP
    empty = private_bounds([np.nan, np.nan], epsilon=1.0, lower=0, upper=1, random_state=2)
    assert 0 <= empty.lower < empty.upper <= 1
    ledger = BudgetLedger()
    ledger.add(b.charge)
    assert ledger.totals()["basic"][0] == pytest.approx(2.0)


@pytest.mark.parametrize("kwargs, message", [
    (dict(epsilon=1.0, lower=5, upper=5), r"declare a finite coarse range lower < upper"),
    (dict(epsilon=1.0, lower=0, upper=float("inf")), r"declare a finite coarse range"),
    (dict(epsilon=1.0, lower="a", upper=3), r"declare a finite coarse range"),
    (dict(epsilon=0.0, lower=0, upper=1), r"epsilon must be a finite number > 0"),
    (dict(epsilon=1.0, lower=0, upper=1, quantiles=(0.9, 0.1)), r"0 <= q1 < q2 <= 1"),
    (dict(epsilon=1.0, lower=0, upper=1, neighbouring="swap"), r"neighbouring must be one of"),
])
def test_private_bounds_validation(kwargs, message):
    with pytest.raises(ValueError, match=message):
        private_bounds([0.1, 0.2, 0.3], **kwargs)


def test_private_bounds_refuses_text_and_dates():
    with pytest.raises(ValueError, match="values must be numbers"):
        private_bounds(["a", "b"], epsilon=1.0, lower=0, upper=1)
    with pytest.raises(ValueError, match="convert dates to days first"):
        private_bounds(pd.Series(pd.to_datetime(["2020-01-01"])), epsilon=1.0, lower=0, upper=1)


def _rank_utility(x: np.ndarray, o: float, q: float) -> float:
    """The utility of the module docstring, computed directly: -|#{x < o} - q n| (missing values dropped)."""
    x = x[~np.isnan(x)]
    return -abs(float(np.sum(x < o)) - q * x.shape[0])


def test_quantile_utility_has_sensitivity_one_under_both_relations():
    rng = np.random.default_rng(4)
    grid = np.linspace(-0.5, 10.5, 221)
    for _ in range(200):
        n = int(rng.integers(1, 12))
        x = np.where(rng.random(n) < 0.2, np.nan, rng.integers(0, 11, size=n).astype(float))
        q = float(rng.random())
        replaced = x.copy()
        replaced[rng.integers(0, n)] = np.nan if rng.random() < 0.3 else float(rng.integers(0, 11))
        removed = np.delete(x, rng.integers(0, n))
        for other in (replaced, removed):
            for o in grid:
                assert abs(_rank_utility(x, o, q) - _rank_utility(other, o, q)) <= 1.0 + 1e-12


def test_dp_quantile_samples_its_exact_distribution():
    """Empirical CDF of 20 000 draws vs the exact CDF of the density exp(eps u(o) / 2) on [a, b]."""
    x = np.array([1.0, 2.0, 2.0, 3.0, 7.0])
    a, b, q, eps = 0.0, 10.0, 0.5, 1.5
    edges = np.concatenate(([a], x, [b]))
    lengths = np.diff(edges)
    weights = lengths * np.exp(eps * -np.abs(np.arange(len(x) + 1) - q * len(x)) / 2)
    weights /= weights.sum()

    def cdf(t):
        inside = np.clip((t - edges[:-1]) / np.where(lengths > 0, lengths, 1.0), 0.0, 1.0)
        return float(np.sum(weights * np.where(lengths > 0, inside, (t >= edges[:-1]).astype(float))))

    rng = np.random.default_rng(12)
    n = 20_000
    draws = np.array([_dp_quantile(x, q=q, epsilon=eps, lower=a, upper=b, rng=rng) for _ in range(n)])
    assert ((draws >= a) & (draws <= b)).all()
    checkpoints = [0.5, 1.5, 2.5, 4.0, 6.0, 8.0]
    for t in checkpoints:
        assert _binomial_ok(int(np.sum(draws <= t)), n, cdf(t), FALSE_FAILURE / len(checkpoints)), t


# --------------------------------------------------------------------------- categories
def test_thresholds_meet_their_formulas():
    for neighbouring, l1, l2 in (("replace-one", 2.0, math.sqrt(2.0)), ("add-remove", 1.0, 1.0)):
        for eps, delta in ((0.3, 1e-6), (1.0, 1e-9), (5.0, 1e-3)):
            b, tau = category_threshold(epsilon=eps, delta=delta, mechanism="laplace", neighbouring=neighbouring)
            assert b == pytest.approx(l1 / eps, rel=1e-15)
            # P[Lap(b) > tau] = exp(-tau / b) / 2 must not exceed delta / (1 + e^eps)
            assert 0.5 * math.exp(-tau / b) <= delta / (1 + math.exp(eps))
            assert 0.5 * math.exp(-tau / b) == pytest.approx(delta / (1 + math.exp(eps)), rel=1e-9)
            sigma, tau = category_threshold(epsilon=eps, delta=delta, mechanism="gaussian", neighbouring=neighbouring)
            assert gaussian_delta(sigma=sigma, epsilon=eps, sensitivity=l2) <= delta / 2
            p0 = stats.norm.sf(tau / sigma)
            assert p0 <= delta / (2 * (1 + math.exp(eps)))
            assert p0 == pytest.approx(delta / (2 * (1 + math.exp(eps))), rel=1e-6)
    with pytest.raises(ValueError, match="mechanism must be one of"):
        category_threshold(epsilon=1.0, delta=1e-6, mechanism="exponential")
    with pytest.raises(ValueError, match="delta must lie in"):
        category_threshold(epsilon=1.0, delta=0.0)


def test_private_categories_releases_frequent_ones_and_never_absent_ones():
    values = ["Adelie"] * 5000 + [" Gentoo "] * 3000 + ["Chinstrap"] * 2000 + [None, np.nan, ""] + ["Rockhopper"]
    for mech in ("gaussian", "laplace"):
        r = private_categories(values, epsilon=1.0, delta=1e-6, mechanism=mech, random_state=5)
        assert isinstance(r, PrivateCategories)
        assert r.categories == ("Adelie", "Gentoo", "Chinstrap")          # stripped, most frequent first
        assert all(c > r.threshold for c in r.noisy_counts)
        assert list(r.noisy_counts) == sorted(r.noisy_counts, reverse=True)
        c = r.charge
        assert (c.mechanism, c.epsilon, c.delta, c.details["neighbouring"]) == ("approx-dp", 1.0, 1e-6, "replace-one")
        d = r.to_dict()
        assert d["categories"] == ["Adelie", "Gentoo", "Chinstrap"] and "counts" not in d
    # whole-number floats are the integers a schema reads
    r = private_categories(pd.Series([1.0] * 400 + [2.0] * 400), epsilon=1.0, delta=1e-6, random_state=0)
    assert sorted(r.categories) == [1, 2] and all(isinstance(v, int) for v in r.categories)
    ledger = BudgetLedger()
    ledger.add(r.charge)
    assert ledger.totals()["basic"] == pytest.approx((1.0, 1e-6))
    with pytest.raises(ValueError, match="not one string"):
        private_categories("abc", epsilon=1.0, delta=1e-6)
    with pytest.raises(ValueError, match="not a DataFrame"):
        private_categories(pd.DataFrame({"a": [1]}), epsilon=1.0, delta=1e-6)


@pytest.mark.parametrize("mechanism", ["laplace", "gaussian"])
def test_release_probability_of_a_rare_category_matches_the_threshold(mechanism):
    """A category held by one row is released with probability P[1 + Z > tau], and one held by tau rows with
    probability 1/2; 3000 runs each at a large delta (so the probabilities are measurable)."""
    eps, delta = 1.0, 0.05
    scale, tau = category_threshold(epsilon=eps, delta=delta, mechanism=mechanism)
    dist = stats.laplace(scale=scale) if mechanism == "laplace" else stats.norm(scale=scale)
    k_mid = int(round(tau))
    values = ["common"] * 500 + ["single"] + ["middle"] * k_mid
    rng = np.random.default_rng(8)
    n = 3000
    hits = {"single": 0, "middle": 0}
    for _ in range(n):
        r = private_categories(values, epsilon=eps, delta=delta, mechanism=mechanism, random_state=rng)
        for key in hits:
            hits[key] += key in r.categories
    p_single = float(dist.sf(tau - 1))
    p_middle = float(dist.sf(tau - k_mid))
    assert p_single <= delta                                  # the stability argument's event is rare
    assert _binomial_ok(hits["single"], n, p_single, FALSE_FAILURE / 2)
    assert _binomial_ok(hits["middle"], n, p_middle, FALSE_FAILURE / 2)


# --------------------------------------------------------------------------- review findings
def test_private_categories_keeps_bool_and_int_labels_apart():
    """C5: True == 1, so a Counter merged them and the first one's type was released -- one row (True first vs 2
    first) decided whether the label 1 came out as the bool True or the int 1: an infinite privacy loss."""
    for first in (True, 2, np.True_, 1.0):
        values = [first] + [1] * 2000 + ["x"] * 2000
        for mech in ("gaussian", "laplace"):
            r = private_categories(values, epsilon=1.0, delta=1e-6, mechanism=mech, random_state=0)
            assert sorted(map(repr, r.categories)) == ["'x'", "1"], (first, mech)
            assert [type(c) for c in r.categories if c != "x"] == [int]
    r = private_categories([True] * 500 + [1] * 500 + [1.0] * 500, epsilon=1.0, delta=1e-6, random_state=1)
    assert sorted(map(repr, r.categories)) == ["1", "True"]
    assert sorted(round(c, -2) for c in r.noisy_counts) == [500.0, 1000.0]


def test_private_bounds_needs_a_range_of_finite_width():
    """m1: lower=-1e308, upper=1e308 are finite but hi - lo overflows to inf (the interval lengths break)."""
    with pytest.raises(ValueError, match=r"upper - lower.*-1e\+308.*1e\+308.*finite"):
        private_bounds([0.1, 0.2], epsilon=1.0, lower=-1e308, upper=1e308)
    b = private_bounds([0.1, 0.2], epsilon=1.0, lower=-1e300, upper=1e300, random_state=0)
    assert -1e300 <= b.lower < b.upper <= 1e300


def test_discovery_charges_say_where_the_noise_came_from():
    """m2: a seeded discovery is a replayable teaching run, not a private release; its charge says so."""
    x = np.arange(100.0)
    cats = ["a"] * 300 + ["b"] * 300
    seeded = [private_bounds(x, epsilon=1.0, lower=0, upper=200, random_state=3),
              private_categories(cats, epsilon=1.0, delta=1e-6, random_state=3)]
    for out in seeded:
        assert out.charge.details["noise_source"] == "seeded"
        assert "not private" in out.charge.details["not_private_because"]
    fresh = [private_bounds(x, epsilon=1.0, lower=0, upper=200),
             private_categories(cats, epsilon=1.0, delta=1e-6)]
    for out in fresh:
        assert out.charge.details["noise_source"] == "os-entropy" and "not_private_because" not in out.charge.details
    gen = private_bounds(x, epsilon=1.0, lower=0, upper=200, random_state=np.random.default_rng(0))
    assert gen.charge.details["noise_source"] == "generator" and gen.charge.details["not_private_because"]
