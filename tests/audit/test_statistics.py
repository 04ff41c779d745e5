"""Statistical core of dpkme.audit: Clopper-Pearson bounds, the ε lower bound, threshold selection, curves.

Stochastic tests use fixed seeds; each states the probability with which it
would fail for an unlucky seed (``false-failure``).
"""

from __future__ import annotations

import math

import numpy as np
import pytest
from scipy.stats import binom

from dpkme.audit import (
    AnalyticCurve,
    audit_scores,
    clopper_pearson_lower,
    clopper_pearson_upper,
    curve_from_delta_function,
    epsilon_lower_bound,
    gaussian_curve,
    pure_dp_curve,
)
from dpkme.audit.bounds import privacy_loss_histogram
from dpkme.privacy.calibration import analytic_sigma, gaussian_delta


# --------------------------------------------------------------------------- Clopper-Pearson
def test_clopper_pearson_closed_forms():
    # k = 0: upper = 1 - alpha^(1/n); k = n: lower = alpha^(1/n)
    assert clopper_pearson_upper(0, 100, 0.05) == pytest.approx(1 - 0.05 ** (1 / 100), rel=1e-12)
    assert clopper_pearson_lower(100, 100, 0.05) == pytest.approx(0.05 ** (1 / 100), rel=1e-12)
    assert clopper_pearson_upper(100, 100, 0.05) == 1.0
    assert clopper_pearson_lower(0, 100, 0.05) == 0.0
    up = clopper_pearson_upper(np.array([0, 5, 10]), np.array([10, 10, 10]), 0.1)
    lo = clopper_pearson_lower(np.array([0, 5, 10]), np.array([10, 10, 10]), 0.1)
    assert np.all(lo <= np.array([0, 5, 10]) / 10) and np.all(up >= np.array([0, 5, 10]) / 10)


@pytest.mark.parametrize("n", [7, 40])
@pytest.mark.parametrize("alpha", [0.05, 0.2])
def test_clopper_pearson_coverage_is_exact_or_conservative(n, alpha):
    """Exact check (no sampling): for every p on a grid, P_p[upper(K) < p] <= alpha and P_p[lower(K) > p] <= alpha."""
    ks = np.arange(n + 1)
    up = clopper_pearson_upper(ks, np.full(n + 1, n), alpha)
    lo = clopper_pearson_lower(ks, np.full(n + 1, n), alpha)
    for p in np.linspace(0.001, 0.999, 97):
        pmf = binom.pmf(ks, n, p)
        assert pmf[up < p].sum() <= alpha + 1e-12
        assert pmf[lo > p].sum() <= alpha + 1e-12


@pytest.mark.parametrize("bad", [(-1, 10), (11, 10), (1.5, 10), (1, 0), (np.nan, 10)])
def test_clopper_pearson_rejects_bad_counts(bad):
    with pytest.raises(ValueError):
        clopper_pearson_upper(*bad, 0.05)
    with pytest.raises(ValueError):
        clopper_pearson_lower(*bad, 0.05)


@pytest.mark.parametrize("alpha", [0, 1, -0.1, float("nan"), "0.1"])
def test_alpha_is_validated(alpha):
    with pytest.raises(ValueError, match="alpha"):
        clopper_pearson_upper(1, 10, alpha)


# --------------------------------------------------------------------------- one event
def test_epsilon_lower_bound_formula():
    k0, n0, k1, n1, d, a = 900, 1000, 50, 1000, 0.01, 0.05
    p = clopper_pearson_lower(k0, n0, a / 2)
    q = clopper_pearson_upper(k1, n1, a / 2)
    assert epsilon_lower_bound(k0, n0, k1, n1, delta=d, alpha=a) == pytest.approx(math.log((p - d) / q))
    # no evidence: p - delta <= q gives 0
    assert epsilon_lower_bound(10, 1000, 10, 1000, delta=0.0, alpha=a) == 0.0
    assert epsilon_lower_bound(5, 1000, 0, 1000, delta=0.01, alpha=a) == 0.0


# --------------------------------------------------------------------------- the audit on scores
def _gaussian_scores(mu, n, seed):
    rng = np.random.default_rng(seed)
    return rng.standard_normal(n) + mu, rng.standard_normal(n)


def test_audit_scores_is_valid_on_tight_gaussian_pairs():
    """The bound exceeds the true ε in at most an alpha fraction of repetitions.

    The scalar is exactly a Gaussian mechanism at (2, 1e-2) (the pair attains the
    claim). With alpha = 0.05 and 300 repetitions the expected number of
    violations is at most 15; the test allows 30 (false-failure probability
    P[Bin(300, 0.05) > 30] < 1e-4).
    """
    eps, delta = 2.0, 1e-2
    mu = 1.0 / analytic_sigma(epsilon=eps, delta=delta, sensitivity=1.0)
    over = 0
    for seed in range(300):
        sd, sp = _gaussian_scores(mu, 400, seed)
        res = audit_scores(sd, sp, epsilon=eps, delta=delta, alpha=0.05)
        over += res.epsilon_lower_bound > eps
    assert over <= 30


def test_audit_scores_detects_a_large_violation_and_reports_the_event():
    # mu = 3: true eps at delta=1e-2 is about 6.9; claimed 1 (false-failure < 1e-6: the bound is ~3.5 here)
    sd, sp = _gaussian_scores(3.0, 3000, 0)
    res = audit_scores(sd, sp, epsilon=1.0, delta=1e-2, alpha=1e-3)
    assert res.epsilon_lower_bound > 2.5 and res.violation and not res.passed
    assert res.region in ("s > t", "s <= t") and res.numerator in ("D", "D'")
    assert 0 <= res.q_upper <= 1 and res.p_lower <= res.p_hat + 0.05
    assert res.runs == res.runs_neighbour == 3000
    # the same audit at other deltas: monotone in delta up to selection noise, all finite and >= 0
    lb = res.lower_bounds["epsilons"]
    assert np.all(np.isfinite(lb)) and np.all(lb >= 0)
    row = res.summary()
    assert row["epsilon_lower_bound"] == res.epsilon_lower_bound and row["passed"] is False


def test_bonferroni_selection_uses_all_runs_and_a_fixed_grid():
    sd, sp = _gaussian_scores(3.0, 3000, 1)
    res = audit_scores(sd, sp, epsilon=1.0, delta=1e-2, alpha=1e-3, selection="bonferroni",
                       thresholds=np.linspace(-2, 6, 33))
    assert res.selection == "bonferroni" and res.epsilon_lower_bound > 2.5
    with pytest.raises(ValueError, match="thresholds"):
        audit_scores(sd, sp, epsilon=1.0, delta=1e-2, selection="bonferroni")


def test_identical_distributions_give_no_evidence():
    """Same distribution on both sides: the bound at delta=0.01 is 0 except with small probability.

    Any positive bound would be a false violation of every epsilon; it happens
    with probability at most alpha = 1e-3 by validity (fixed seed here).
    """
    rng = np.random.default_rng(3)
    res = audit_scores(rng.standard_normal(2000), rng.standard_normal(2000), epsilon=0.01, delta=0.01, alpha=1e-3)
    assert res.epsilon_lower_bound == 0.0 and res.passed


def test_discrete_scores_and_both_directions():
    # a two-point mechanism: randomized response with p = e^2 / (1 + e^2); exact eps = 2
    p = math.exp(2) / (1 + math.exp(2))
    rng = np.random.default_rng(4)
    sd = (rng.random(20000) < p).astype(float)
    sp = (rng.random(20000) < 1 - p).astype(float)
    res = audit_scores(sd, sp, epsilon=2.0, delta=0.0, alpha=1e-3)
    # valid (<= 2 with prob >= 1 - 1e-3) and tight: the best event has ratio e^2, so the bound is close (> 1.7)
    assert 1.7 < res.epsilon_lower_bound <= 2.0
    # swapping the datasets gives the same bound (the test tries both directions)
    res2 = audit_scores(sp, sd, epsilon=2.0, delta=0.0, alpha=1e-3)
    assert res2.epsilon_lower_bound == pytest.approx(res.epsilon_lower_bound, abs=0.15)


@pytest.mark.parametrize("kwargs, match", [
    ({"epsilon": 0}, "epsilon"),
    ({"epsilon": 1, "delta": 1.0}, "delta"),
    ({"epsilon": 1, "selection": "magic"}, "selection"),
    ({"epsilon": 1, "selection_fraction": 1.0}, "selection_fraction"),
    ({"epsilon": 1, "deltas": [0.5, 2.0]}, "deltas"),
])
def test_audit_scores_validates_arguments(kwargs, match):
    sd, sp = _gaussian_scores(1.0, 100, 0)
    with pytest.raises(ValueError, match=match):
        audit_scores(sd, sp, **kwargs)


@pytest.mark.parametrize("bad", [[1.0], [1.0, np.nan, 2.0], np.ones((3, 2)), ["a", "b"]])
def test_audit_scores_rejects_bad_scores(bad):
    with pytest.raises(ValueError):
        audit_scores(bad, [0.0, 1.0, 2.0], epsilon=1.0)


# --------------------------------------------------------------------------- curves and privacy loss
def test_gaussian_curve_matches_balle_wang():
    c = gaussian_curve(0.8, 0.5, deltas=[1e-5, 1e-3, 0.1])
    for d, e in zip(c.deltas, c.epsilon_pair):
        assert gaussian_delta(sigma=1.0, epsilon=e, sensitivity=0.8) <= d * (1 + 1e-9)
    assert np.all(c.epsilon_claimed <= c.epsilon_pair)
    assert c.pair_epsilon_at(1e-3) == pytest.approx(c.epsilon_pair[1])


def test_pure_dp_curve_is_randomized_response():
    eps = 1.5
    d = np.array([1e-6, 0.1, 0.5, 0.9])
    out = pure_dp_curve(eps, d)
    e = math.exp(eps)
    assert out[0] == pytest.approx(math.log(e - 1e-6 * (1 + e)))
    assert out[-1] == 0.0 and np.all(np.diff(out) <= 0) and out[0] <= eps


def test_curve_from_delta_function_rounds_up():
    # delta(eps) of randomized response: inverting it reproduces pure_dp_curve within the grid step
    eps = 2.0
    e = math.exp(eps)

    def delta_of(x):
        return np.maximum(0.0, (e - np.exp(np.minimum(x, eps))) / (1 + e))

    d = np.array([1e-4, 0.05, 0.3])
    inv = curve_from_delta_function(delta_of, d)
    exact = pure_dp_curve(eps, d)
    assert np.all(inv >= exact - 1e-12) and np.all(inv <= exact + 0.01)


def test_privacy_loss_histogram_exact_and_binned():
    mu = 1.2
    sd, sp = _gaussian_scores(mu, 20000, 7)

    def llr(s):
        return mu * s - mu * mu / 2

    h = privacy_loss_histogram(sd, sp, llr, mu=mu)
    assert h.exact and h.analytic_mean == pytest.approx(mu * mu / 2) and h.analytic_std == pytest.approx(mu)
    # E_D[L] = mu^2/2, sd mu: tolerance 5 standard errors (false-failure ~ 6e-7)
    assert abs(h.loss_d.mean() - mu * mu / 2) < 5 * mu / math.sqrt(20000)
    assert h.counts_d.sum() == 20000 and h.edges.shape[0] == h.counts_d.shape[0] + 1
    # plug-in delta(eps) close to the exact Gaussian curve (Monte-Carlo error ~ 0.005)
    for e in (0.5, 1.5):
        assert h.empirical_delta([e])[0] == pytest.approx(gaussian_delta(sigma=1, epsilon=e, sensitivity=mu),
                                                           abs=0.02)
    hb = privacy_loss_histogram(sd, sp)
    assert not hb.exact and abs(hb.loss_d.mean() - mu * mu / 2) < 0.15


def test_curve_test_flags_an_undernoised_gaussian():
    """A Gaussian with twice the claimed mu violates the claimed curve somewhere (false-failure < 1e-4 here)."""
    eps, delta = 1.0, 1e-5
    mu = 1.0 / analytic_sigma(epsilon=eps, delta=delta, sensitivity=1.0)
    sd, sp = _gaussian_scores(2 * mu, 20000, 11)
    res = audit_scores(sd, sp, epsilon=eps, delta=delta, alpha=1e-3, analytic=gaussian_curve(2 * mu, mu))
    assert res.curve_violation and res.curve_margin > 0 and 0 < res.curve_delta < 1
    ok = audit_scores(*_gaussian_scores(mu, 20000, 12), epsilon=eps, delta=delta, alpha=1e-3,
                      analytic=gaussian_curve(mu, mu))
    assert not ok.curve_violation


def test_analytic_curve_dataclass():
    c = AnalyticCurve(np.array([1e-3, 1e-1]), np.array([2.0, 1.0]), np.array([3.0, 2.0]), "x")
    assert c.pair_epsilon_at(1e-2) == pytest.approx(1.5)


def test_clopper_pearson_bounds_stay_valid_at_extreme_alpha():
    """Regression (property test): at alpha = 6.9e-258 scipy's Beta quantile gave up (a RuntimeWarning) and
    returned 2.4e-33 for k = 3, n = 1000, far above the true quantile (~3.5e-89): an invalid lower bound."""
    import warnings

    from scipy.special import betaln

    from dpkme.audit.bounds import clopper_pearson_lower, clopper_pearson_upper

    with warnings.catch_warnings():
        warnings.simplefilter("error")
        lo = clopper_pearson_lower(3, 1000, 6.9e-258)
        up = clopper_pearson_upper(3, 1000, 6.9e-258)
    exact_order = math.exp((math.log(6.9e-258) + math.log(3) + betaln(3, 998)) / 3)   # I_x <= x^a/(a B)
    assert 0 < lo <= exact_order * (1 + 1e-12) and lo > exact_order * 0.5
    from scipy.stats import beta

    assert 0 < up < 1 and beta.logsf(up, 4, 997) <= math.log(6.9e-258) + 1e-9      # P[p > up] <= alpha
    # ordinary alphas: scipy's exact quantiles
    assert clopper_pearson_lower(3, 1000, 0.05) == pytest.approx(beta.ppf(0.05, 3, 998), rel=1e-12)
    assert clopper_pearson_upper(3, 1000, 0.05) == pytest.approx(beta.ppf(0.95, 4, 997), rel=1e-12)
