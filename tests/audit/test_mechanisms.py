"""Privacy audits of every dpkme mechanism, and proof that the audits can fail.

* Correct mechanisms: the audited lower bound stays at or below the claimed ε.
  The bound is valid, so each such test fails with probability at most
  alpha = 1e-3 for a random seed (the seeds are fixed, so the outcome is
  deterministic).
* Mis-calibrated variants must be caught: ε_lb > claimed ε at alpha = 1e-3.
  False-failure probabilities (the audit missing the violation for a random
  seed) are estimated in ``benchmarks/bench_audit.py --sections power``
  (simulating the exact distribution of each scalar, 500 repetitions) and are
  quoted per test (95 % upper bounds from 500 simulated audits).
* The worst-case pairs attain the sensitivities (exact ε of the pair = claim).

Runtime of the whole file: about 20 s on the 2-core reference machine.
"""

from __future__ import annotations

import itertools
import math

import numpy as np
import pytest

from dpkme.audit import (
    AUDITS,
    EXHIBITS,
    VARIANTS,
    AuditSettings,
    audit_algorithm1,
    audit_algorithm2,
    audit_exponential,
    audit_gaussian,
    audit_gp_release,
    audit_kmeans,
    audit_laplace,
    audit_two_sample,
    clipped_mean_release,
    cosine_antipodal_pair,
    cosine_feature_release,
    laplace_feature_release,
    neighbour_pair,
    outlier_neighbour,
    rff_antipodal_pair,
    rff_l1_pair,
    run_audit,
)
from dpkme.kernels.kernel import GaussianKernel, LaplacianKernel
from dpkme.kernels.random_features import CosineBiasFeatures, RandomFourierFeatures

ALPHA = 1e-3


# --------------------------------------------------------------------------- worst-case pairs
def test_rff_antipodal_pair_attains_the_sensitivity():
    f = RandomFourierFeatures(GaussianKernel(lengthscale=1.0), n_components=8, random_state=1, dtype="float64").fit(4)
    x, xp = rff_antipodal_pair(f)
    F = f.transform(np.vstack([x, xp]))
    assert np.linalg.norm(F[0] - F[1]) == pytest.approx(2.0, abs=1e-9)
    # more frequencies than dimensions: no exact solution, but a good pair is still found
    g = RandomFourierFeatures(GaussianKernel(lengthscale=1.0), n_components=8, random_state=2,
                              dtype="float64").fit(2)
    y, yp = rff_antipodal_pair(g)
    G = g.transform(np.vstack([y, yp]))
    assert np.linalg.norm(G[0] - G[1]) > 1.6


def test_rff_l1_pair_attains_the_cauchy_schwarz_bound():
    J = 8
    f = RandomFourierFeatures(LaplacianKernel(lengthscale=2.0), n_components=J, random_state=3,
                              dtype="float64").fit(4)
    x, xp = rff_l1_pair(f)
    F = f.transform(np.vstack([x, xp]))
    assert np.abs(F[0] - F[1]).sum() == pytest.approx(2.0 * math.sqrt(J), rel=1e-9)


def test_cosine_pair_exceeds_the_assumed_bound_by_sqrt2():
    c = CosineBiasFeatures(GaussianKernel(lengthscale=1.0), n_components=4, random_state=0).fit(4)
    x, xp = cosine_antipodal_pair(c)
    F = c.transform(np.vstack([x, xp]))
    assert np.linalg.norm(F[0]) == pytest.approx(math.sqrt(2.0), rel=1e-9)
    assert np.linalg.norm(F[0] - F[1]) == pytest.approx(2.0 * math.sqrt(2.0), rel=1e-9)


def test_outlier_and_neighbour_pair():
    X = np.zeros((4, 2))
    Xn = outlier_neighbour(X, index=2, lengthscale=0.5)
    assert np.count_nonzero(np.any(X != Xn, axis=1)) == 1 and Xn[2, 0] == pytest.approx(25.0)
    k = GaussianKernel(lengthscale=0.5)
    assert k(X[2:3], Xn[2:3])[0, 0] < 1e-100
    D, Dp = neighbour_pair(X, [1.0, 1.0], index=1)
    assert np.array_equal(Dp[1], [1.0, 1.0]) and np.array_equal(D, X)
    D, Dp = neighbour_pair(X, neighbouring="add-remove")
    assert Dp.shape == (3, 2)
    with pytest.raises(ValueError, match="x_new"):
        neighbour_pair(X)
    with pytest.raises(ValueError, match="index"):
        outlier_neighbour(X, index=4)
    with pytest.raises(ValueError):
        outlier_neighbour(X, distance=1e308, lengthscale=1e10)


# --------------------------------------------------------------------------- correct mechanisms pass
#: (audit, its settings, its own options); every audit runs with alpha = ALPHA and seed 11.
CORRECT = [
    ("gaussian", dict(runs=3000), {}),
    ("gaussian", dict(runs=1500), dict(neighbouring="add-remove")),
    ("laplace", dict(runs=3000), {}),
    ("algorithm1", dict(runs=1500), {}),
    ("algorithm1", dict(runs=800), dict(neighbouring="add-remove", sensitivity="paper")),
    ("algorithm2", dict(runs=2000), {}),
    ("algorithm2", dict(runs=1000, epsilon=0.9), dict(neighbouring="add-remove", calibration="classic")),
    ("exponential", dict(runs=5000), {}),
    ("exponential", dict(runs=3000), dict(neighbouring="add-remove", n=2)),
    ("gp", dict(runs=1000), {}),
    ("gp", dict(runs=600, epsilon=1.0, delta=1e-3), dict(calibration="hall")),
    ("kmeans", dict(runs=400), {}),
    ("two-sample", dict(runs=500), {}),
]


@pytest.mark.parametrize("name, settings, options", CORRECT, ids=[f"{n}-{i}" for i, (n, _, _) in enumerate(CORRECT)])
def test_correct_mechanisms_pass_the_audit(name, settings, options):
    """ε_lb <= claimed ε (false-failure probability <= alpha = 1e-3 by validity of the bound)."""
    res = run_audit(name, settings=AuditSettings(alpha=ALPHA, random_state=11, **settings), **options)
    assert res.passed, res.summary()
    assert res.epsilon_lower_bound <= res.claimed_epsilon
    assert not res.curve_violation, res.summary()
    assert res.runs == settings["runs"] and res.scores.shape == (settings["runs"],)
    # the pair's exact epsilon never exceeds the claim (up to the calibration's rounding)
    if res.pair_epsilon is not None:
        assert res.pair_epsilon <= res.claimed_epsilon * (1 + 1e-6)


@pytest.mark.parametrize("name", ["gaussian", "algorithm1", "algorithm2", "gp", "kmeans"])
def test_worst_case_pairs_are_tight(name):
    """The constructed neighbours attain the sensitivity: the pair's exact ε equals the claim."""
    res = run_audit(name, settings=AuditSettings(runs=10, alpha=0.5))
    assert res.pair_epsilon == pytest.approx(res.claimed_epsilon, rel=1e-6)
    a = res.analytic
    assert np.allclose(a.epsilon_pair, a.epsilon_claimed, rtol=1e-6, atol=1e-9)


def test_laplace_pair_is_tight():
    res = audit_laplace(settings=AuditSettings(runs=10, alpha=0.5))
    assert res.pair_epsilon == pytest.approx(res.claimed_epsilon, rel=1e-9)
    assert res.params["pair_l1_difference"] == pytest.approx(res.params["claimed_l1_sensitivity"], rel=1e-9)


# --------------------------------------------------------------------------- broken mechanisms are caught
def test_half_noise_gaussian_is_caught():
    """σ/2: true μ doubles. False-failure probability < 0.6 % (benchmark: 0 misses in 500; bound 2.99 ± 0.2)."""
    res = audit_gaussian(settings=AuditSettings(runs=6000, alpha=ALPHA, random_state=0), variant="half-noise")
    assert res.epsilon_lower_bound > res.claimed_epsilon and res.violation
    assert res.curve_violation
    assert res.pair_epsilon > 2 * res.claimed_epsilon


def test_l1_sensitivity_ignoring_the_dimension_is_caught():
    """Laplace with Δ1 = 2/√N for J = 8 > N = 1: true ε = √8 × the claim.

    False-failure probability < 0.6 % (benchmark: 0 misses in 500 simulated audits).
    """
    res = audit_laplace(settings=AuditSettings(runs=4000, alpha=ALPHA, random_state=0), variant="l1-ignores-dimension")
    assert res.epsilon_lower_bound > res.claimed_epsilon
    assert res.pair_epsilon == pytest.approx(res.claimed_epsilon * math.sqrt(8.0), rel=1e-9)


def test_cosine_features_calibrated_to_2_over_n_are_caught():
    """‖φ‖ up to √2: true sensitivity 2√2/N vs claimed 2/N.

    The gap is only √2 in μ, so this test uses the fixed 41-threshold grid with
    Bonferroni over all runs (less variable than the split). False-failure
    probability < 0.6 % (benchmark: 0 misses in 500 simulated audits; the
    bound is 2.38 ± 0.09 against the claimed 2).
    """
    res = audit_algorithm2(settings=AuditSettings(runs=20000, alpha=ALPHA, random_state=0, selection="bonferroni"),
                           variant="cosine-features")
    assert res.epsilon_lower_bound > res.claimed_epsilon
    assert res.params["pair_difference"] == pytest.approx(2 * math.sqrt(2) / res.params["n"], rel=1e-9)


def test_perturbed_two_sample_statistic_is_caught():
    """The published sensitivity is ~10^4 times too small: caught at any ε (false-failure < 1e-6)."""
    res = audit_two_sample(settings=AuditSettings(runs=1000, alpha=ALPHA, random_state=0),
                           variant="perturbed-statistic")
    assert res.epsilon_lower_bound > res.claimed_epsilon
    assert res.pair_epsilon > 10 * res.claimed_epsilon


# --------------------------------------------------------------------------- exhibit mechanisms
def test_clipped_mean_release_noise_scale():
    rng = np.random.default_rng(0)
    X = np.array([[3.0, 4.0], [0.0, 0.0]])  # first row clipped to norm 1
    v, cal = clipped_mean_release(X, epsilon=1.0, delta=1e-5, rng=rng, noise_factor=0.0)
    assert np.allclose(v, [0.3, 0.4]) and cal.sensitivity == pytest.approx(1.0)
    draws = np.array([clipped_mean_release(X, epsilon=1.0, delta=1e-5, rng=rng)[0] for _ in range(4000)])
    # sample std within 5 % of sigma (4000 draws: relative s.e. ~1.1 %, false-failure < 1e-5)
    assert draws.std(axis=0) == pytest.approx([cal.sigma, cal.sigma], rel=0.05)


def test_laplace_and_cosine_releases_scale():
    f = RandomFourierFeatures(GaussianKernel(lengthscale=1.0), n_components=8, random_state=0).fit(4)
    X = np.zeros((2, 4))
    _, cal = laplace_feature_release(X, f, epsilon=2.0, rng=np.random.default_rng(0))
    assert cal.l1_sensitivity == pytest.approx(math.sqrt(8) * 2 * f.norm_bound / 2)
    _, bad = laplace_feature_release(X, f, epsilon=2.0, l1="paper", rng=np.random.default_rng(0))
    assert bad.l1_sensitivity == pytest.approx(2 / math.sqrt(2))
    c = CosineBiasFeatures(GaussianKernel(lengthscale=1.0), n_components=4, random_state=0).fit(4)
    _, cc = cosine_feature_release(X, c, epsilon=1.0, delta=1e-5, rng=np.random.default_rng(0))
    assert cc.sensitivity == pytest.approx(1.0)  # 2/N with N = 2: the (wrong) assumed bound


# --------------------------------------------------------------------------- results, registry, errors
def test_result_contents_for_plots():
    res = audit_gaussian(settings=AuditSettings(runs=500, alpha=0.05))
    a = res.analytic
    assert a.deltas.shape == a.epsilon_pair.shape == a.epsilon_claimed.shape
    assert np.all(np.diff(a.epsilon_pair) <= 1e-9)  # epsilon decreases with delta
    lb = res.lower_bounds
    assert lb["deltas"].shape == lb["epsilons"].shape and np.any(np.isclose(lb["deltas"], res.claimed_delta))
    pl = res.privacy_loss
    assert pl.exact and pl.loss_d.shape == (500,) and pl.analytic_std == pytest.approx(res.params["mu_pair"])
    assert res.neighbours["rows_changed"] == [0] and res.neighbours["pair"] == "worst case"
    assert res.scalar and res.seconds > 0
    row = res.summary()
    assert set(row) >= {"mechanism", "claimed_epsilon", "epsilon_lower_bound", "runs", "passed"}


def test_given_pair_is_used():
    X = np.zeros((5, 2))
    Xn = outlier_neighbour(X)
    res = audit_gaussian(settings=AuditSettings(runs=200, alpha=0.05), X=X, X_neighbour=Xn)
    assert res.neighbours["pair"] == "given"
    assert res.params["mu_pair"] < res.params["mu_claimed"]  # |f(D)-f(D')| = 1/N < 2/N
    with pytest.raises(ValueError, match="both"):
        audit_gaussian(settings=AuditSettings(runs=100), X=X)
    with pytest.raises(ValueError, match="differ"):
        audit_gaussian(settings=AuditSettings(runs=100), X=X, X_neighbour=np.ones((5, 2)))
    with pytest.raises(ValueError, match="same statistic"):
        audit_gaussian(settings=AuditSettings(runs=100), X=X, X_neighbour=X)


def test_progress_is_reported_and_can_cancel():
    seen = []
    audit_gaussian(settings=AuditSettings(runs=300, progress=lambda f, m: seen.append(f)))
    assert seen[-1] == 1.0 and all(b > a for a, b in itertools.pairwise(seen))

    class Stop(Exception):
        pass

    def stop(f, m):
        if f > 0.2:
            raise Stop

    with pytest.raises(Stop):
        audit_algorithm1(settings=AuditSettings(runs=2000, progress=stop))


def test_registry_and_validation():
    assert set(AUDITS) == set(VARIANTS)
    for mech, variant, _claim in EXHIBITS:
        assert mech in AUDITS and variant in VARIANTS[mech]
    with pytest.raises(ValueError, match="mechanism"):
        run_audit("nope")
    with pytest.raises(ValueError, match="variant"):
        run_audit("gp", variant="half-noise")
    with pytest.raises(ValueError, match="runs"):
        audit_gaussian(settings=AuditSettings(runs=5))
    with pytest.raises(ValueError, match="delta"):
        audit_laplace(settings=AuditSettings(delta=1e-5))
    with pytest.raises(ValueError, match="epsilon"):
        audit_exponential(settings=AuditSettings(epsilon=-1))
    with pytest.raises(ValueError, match="random_state"):
        audit_gaussian(settings=AuditSettings(runs=20, random_state=-3))
    with pytest.raises(ValueError, match="alpha"):
        audit_kmeans(settings=AuditSettings(runs=20, alpha=2.0))


def test_audits_are_reproducible():
    a = audit_gp_release(settings=AuditSettings(runs=50, random_state=5))
    b = audit_gp_release(settings=AuditSettings(runs=50, random_state=5))
    c = audit_gp_release(settings=AuditSettings(runs=50, random_state=6))
    assert np.array_equal(a.scores, b.scores) and not np.array_equal(a.scores, c.scores)
