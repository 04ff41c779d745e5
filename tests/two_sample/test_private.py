"""Private two-sample tests: calibration, charges, noise, nulls, statistics, validation, type-I error.

Statistical assertions state their false-failure rate; all seeds are fixed, so
the suite is deterministic (the rate says how unlucky a seed would have to be).
"""

from __future__ import annotations

import json
import math

import numpy as np
import pytest
from scipy import stats

from dpkme.kernels.kernel import GaussianKernel
from dpkme.privacy.accounting import BudgetLedger, basic_composition, pld_epsilon
from dpkme.privacy.calibration import analytic_sigma
from dpkme.release.result import Release
from dpkme.two_sample import (
    MEFeatures,
    calibrate_moments,
    nonprivate_test,
    nte_test,
    release_test,
    run_test,
    tcmc_test,
)
from dpkme.two_sample.nulls import chi2_null, paired_bootstrap_null, weighted_chi2_null
from dpkme.two_sample.statistic import (
    covariance_from_moments,
    paired_statistic,
    psd_project,
    quadratic_statistic,
    symmetric_noise,
    two_sample_statistic,
)


@pytest.fixture(scope="module")
def feats():
    rng = np.random.default_rng(100)
    return MEFeatures(rng.standard_normal((3, 4)), GaussianKernel(lengthscale=2.5))


def _data(n, d=4, shift=0.0, seed=0):
    rng = np.random.default_rng(seed)
    X, Y = rng.standard_normal((n, d)), rng.standard_normal((n, d))
    Y[:, 0] += shift
    return X, Y


# ----------------------------------------------------------------------------- calibration and charges
@pytest.mark.parametrize("eps, delta, f", [(1.0, 1e-5, 0.7), (0.3, 1e-6, 0.5), (5.0, 1e-5, 0.9)])
def test_joint_calibration_is_exactly_the_budget(eps, delta, f):
    cal = calibrate_moments(epsilon=eps, delta=delta, sensitivity_mean=0.01, sensitivity_second=0.02, mean_fraction=f)
    z = analytic_sigma(epsilon=eps, delta=delta, sensitivity=1.0)
    zw, zs = cal.mean.noise_multiplier, cal.second.noise_multiplier
    assert zw == pytest.approx(z / math.sqrt(f), rel=1e-9) and zs == pytest.approx(z / math.sqrt(1 - f), rel=1e-9)
    assert (zw**-2 + zs**-2) ** -0.5 >= z * (1 - 1e-12)
    charges = cal.charges("t")
    # exact composition of the two Gaussian releases = the requested (epsilon, delta)
    assert pld_epsilon(charges, delta=delta) == pytest.approx(eps, rel=1e-6)
    assert pld_epsilon(charges, delta=delta) <= eps * (1 + 1e-9)
    led = BudgetLedger(epsilon_budget=eps, delta_budget=delta)
    for c in charges:
        led.add(c)
    assert not led.exceeds_budget()
    assert all(c.details["neighbouring"] == "replace-one" for c in charges)


def test_split_calibration_uses_basic_composition_and_more_noise():
    kw = dict(epsilon=1.0, delta=1e-5, sensitivity_mean=0.01, sensitivity_second=0.02, mean_fraction=0.6)
    split, joint = calibrate_moments(calibration="split", **kw), calibrate_moments(**kw)
    assert basic_composition(split.charges("s")) == pytest.approx((1.0, 1e-5))
    assert split.mean.epsilon == pytest.approx(0.6) and split.second.delta == pytest.approx(0.4e-5)
    assert joint.mean.sigma < split.mean.sigma and joint.second.sigma < split.second.sigma


@pytest.mark.parametrize("bad", [dict(mean_fraction=1.0), dict(mean_fraction=0.0), dict(calibration="rdp"),
                                 dict(epsilon=0.0), dict(delta=1.0), dict(sensitivity_mean=-1.0)])
def test_calibration_validation(bad):
    kw = dict(epsilon=1.0, delta=1e-5, sensitivity_mean=0.01, sensitivity_second=0.02)
    with pytest.raises(ValueError):
        calibrate_moments(**{**kw, **bad})


def test_tcmc_result_and_charges(feats):
    X, Y = _data(400)
    r = tcmc_test(X, Y, features=feats, epsilon=1.0, delta=1e-5, random_state=1, n_null=500)
    assert r.method == "tcmc" and r.design == "paired" and r.private
    assert r.epsilon == pytest.approx(1.0, rel=1e-6) and r.delta == 1e-5
    assert len(r.charges) == 2 and {c.details["release"] for c in r.charges} == {"mean", "second moment"}
    assert r.charges[0].details["privacy_unit"] == "pair"
    # sensitivities: 2B/n and sqrt(2)B^2/n
    B = feats.diff_bound
    assert r.noise["sensitivity_mean"] == pytest.approx(2 * B / 400)
    assert r.noise["sensitivity_second"] == pytest.approx(math.sqrt(2) * B**2 / 400)
    assert 0 < r.p_value <= 1 and r.reject == (r.p_value <= 0.05)
    assert r.null.kind == "bootstrap" and r.null.samples.size == 500
    assert r.noise_seed == 1 and r.noise_source == "seeded" and any("seed" in w for w in r.warnings)
    assert r.null_seed is not None
    assert "tcmc" in r.summary()
    json.dumps(r.to_dict())  # JSON-serialisable
    # row unit halves the mean sensitivity
    r2 = tcmc_test(X, Y, features=feats, epsilon=1.0, delta=1e-5, unit="row", random_state=1, n_null=200)
    assert r2.noise["sensitivity_mean"] == pytest.approx(B / 400)
    assert r2.noise["sensitivity_second"] == pytest.approx(math.sqrt(1.5) * B**2 / 400)


def test_reproducibility_and_os_entropy(feats):
    X, Y = _data(200)
    a = tcmc_test(X, Y, features=feats, epsilon=1.0, delta=1e-5, random_state=7, n_null=200)
    b = tcmc_test(X, Y, features=feats, epsilon=1.0, delta=1e-5, random_state=7, n_null=200)
    assert a.statistic == b.statistic and a.p_value == b.p_value
    c = tcmc_test(X, Y, features=feats, epsilon=1.0, delta=1e-5, n_null=200)
    assert c.noise_seed is None and c.noise_source == "os-entropy" and c.null_seed is not None
    d = tcmc_test(X, Y, features=feats, epsilon=1.0, delta=1e-5, random_state=np.random.default_rng(3), n_null=200)
    assert d.noise_source == "generator" and d.noise_seed is None


def test_noise_has_the_calibrated_distribution(feats):
    """Released mean / second moment minus the true ones: N(0, s_w^2) and symmetric N(0, s^2), N(0, s^2/2).

    400 releases; the variance ratios are checked within +-25% (chi-square spread for 400-1200
    draws: sd <= 7%, false-failure rate < 1e-3).
    """
    X, Y = _data(100)
    Z = feats.transform(X) - feats.transform(Y)
    w, L = Z.mean(0), Z.T @ Z / 100
    dw, dd, do = [], [], []
    for s in range(400):
        r = tcmc_test(X, Y, features=feats, epsilon=2.0, delta=1e-5, random_state=s, null="chi2", n_null=100)
        dw.append(r.released["mean"] - w)
        E = r.released["second_moment"] - L
        assert np.allclose(E, E.T)
        dd.append(np.diag(E))
        do.append(E[np.triu_indices(3, 1)])
    sw, ss = r.noise["sigma_mean"], r.noise["sigma_second"]
    assert np.var(dw) / sw**2 == pytest.approx(1.0, abs=0.25)
    assert np.var(dd) / ss**2 == pytest.approx(1.0, abs=0.25)
    assert np.var(do) / (ss**2 / 2) == pytest.approx(1.0, abs=0.25)
    assert abs(np.mean(dw)) < 4 * sw / math.sqrt(1200)


def test_nte_parallel_composition_and_unequal_sizes(feats):
    rng = np.random.default_rng(5)
    X, Y = rng.standard_normal((300, 4)), rng.standard_normal((500, 4))
    r = nte_test(X, Y, features=feats, epsilon=1.0, delta=1e-5, random_state=2, n_null=300)
    assert r.design == "two-sample" and (r.n_x, r.n_y) == (300, 500)
    assert set(r.holder_charges) == {"X", "Y"}
    assert r.noise["X"]["sensitivity_mean"] == pytest.approx(feats.diff_bound / 300)
    assert r.noise["Y"]["sensitivity_second"] == pytest.approx(feats.outer_diff_bound / 500)
    # the union pays one holder's pair of charges (parallel composition): exactly (1, 1e-5)
    assert len(r.charges) == 2 and r.epsilon == pytest.approx(1.0, rel=1e-6)
    assert all(c.details["composition"] == "parallel across holders" for c in r.charges)
    for k in "XY":
        assert pld_epsilon(r.holder_charges[k], delta=1e-5) == pytest.approx(1.0, rel=1e-6)


def test_release_test_inputs(feats):
    rng = np.random.default_rng(6)
    held = rng.standard_normal((300, 4))
    pts, wts = rng.standard_normal((40, 4)), rng.random(40)
    rel = Release(points=pts, weights=wts, mechanism="test", epsilon=1.0, delta=1e-5, sigma=0.1, sensitivity=0.1,
                  neighbouring="replace-one", calibration="analytic", kernel=GaussianKernel(lengthscale=1.0),
                  seed=0, n_private=300)
    a = release_test(rel, held, features=feats, epsilon=1.0, delta=1e-5, n_synthetic=1000, random_state=0,
                     n_null=300)
    b = release_test((pts, wts), held, features=feats, epsilon=1.0, delta=1e-5, n_synthetic=1000, random_state=0,
                     n_null=300)
    assert a.statistic == b.statistic and a.params["resampled"] and a.n_x == 1000
    assert set(a.holder_charges) == {"Y"} and len(a.charges) == 2
    assert a.noise.keys() == {"Y"} and "second_moment_x" not in a.released
    c = release_test(rng.standard_normal((500, 4)), held, features=feats, epsilon=1.0, delta=1e-5, random_state=0,
                     n_null=300)
    assert not c.params["resampled"]
    with pytest.raises(ValueError, match="n_synthetic"):
        release_test(rel, held, features=feats, epsilon=1.0, delta=1e-5)
    # far-off synthetic data is detected
    d = release_test(held[:200] + 3.0, held, features=feats, epsilon=1.0, delta=1e-5, random_state=0, n_null=300)
    assert d.reject


def test_nonprivate_matches_chwialkowski(feats):
    X, Y = _data(500, shift=0.3, seed=8)
    r = nonprivate_test(X, Y, features=feats, regularization=1e-5)
    Z = feats.transform(X) - feats.transform(Y)
    n = Z.shape[0]
    w = Z.mean(0)
    S = np.cov(Z, rowvar=False)
    s = n * w @ np.linalg.solve(S + 1e-5 * np.eye(3), w)
    assert r.statistic == pytest.approx(s, rel=1e-9)
    assert r.p_value == pytest.approx(stats.chi2.sf(s, 3), rel=1e-9)
    assert r.charges == () and math.isinf(r.epsilon) and not r.private
    t = nonprivate_test(X, Y, features=feats, design="two-sample")
    assert t.design == "two-sample" and t.charges == ()


def test_run_test_dispatch_and_validation(feats):
    X, Y = _data(60)
    assert run_test(X, Y, method="nonprivate", features=feats).method == "nonprivate"
    assert run_test(X, Y, method="nte", features=feats, epsilon=1, delta=1e-5, random_state=0, n_null=100).method == "nte"
    with pytest.raises(ValueError, match="method"):
        run_test(X, Y, method="mmd", features=feats)
    with pytest.raises(ValueError, match="FeatureMap"):
        tcmc_test(X, Y, features="me", epsilon=1, delta=1e-5)
    with pytest.raises(ValueError, match="equally many rows"):
        tcmc_test(X, Y[:50], features=feats, epsilon=1, delta=1e-5)
    with pytest.raises(ValueError, match="column"):
        tcmc_test(X[:, :3], Y[:, :3], features=feats, epsilon=1, delta=1e-5)
    with pytest.raises(ValueError, match="unit"):
        tcmc_test(X, Y, features=feats, epsilon=1, delta=1e-5, unit="person")
    with pytest.raises(ValueError, match="null"):
        tcmc_test(X, Y, features=feats, epsilon=1, delta=1e-5, null="permutation")
    with pytest.raises(ValueError, match="epsilon"):
        tcmc_test(X, Y, features=feats, epsilon=-1, delta=1e-5)
    with pytest.raises(ValueError, match="alpha"):
        tcmc_test(X, Y, features=feats, epsilon=1, delta=1e-5, alpha=1.5)
    with pytest.raises(ValueError, match="non-finite"):
        tcmc_test(np.full((60, 4), np.nan), Y, features=feats, epsilon=1, delta=1e-5)


def test_other_nulls_and_warnings(feats):
    X, Y = _data(300)
    w = tcmc_test(X, Y, features=feats, epsilon=1, delta=1e-5, null="weighted-chi2", random_state=0, n_null=300)
    c = tcmc_test(X, Y, features=feats, epsilon=1, delta=1e-5, null="chi2", random_state=0, n_null=300)
    assert w.null.kind == "weighted-chi2" and w.null.weights.shape == (3,)
    assert c.null.kind == "chi2" and c.p_value == pytest.approx(c.naive_p_value)
    assert any("not controlled" in m for m in c.warnings)
    assert w.statistic == c.statistic  # same noise, same statistic
    tiny = tcmc_test(X[:20], Y[:20], features=feats, epsilon=0.2, delta=1e-5, random_state=0, n_null=200)
    assert tiny.params["negative_eigenvalues"] >= 1 and any("negative" in m for m in tiny.warnings)


# ----------------------------------------------------------------------------- statistics and nulls
def test_statistic_helpers():
    rng = np.random.default_rng(9)
    A = rng.standard_normal((4, 4))
    M = A + A.T
    P = psd_project(M)
    assert np.linalg.eigvalsh(P).min() >= -1e-12
    lam, U = np.linalg.eigh(M)
    assert np.allclose(P, (U * np.maximum(lam, 0)) @ U.T)
    stack = psd_project(np.stack([M, -M]))
    assert stack.shape == (2, 4, 4) and np.allclose(stack[0], P)
    V = A @ A.T + np.eye(4)
    w = rng.standard_normal(4)
    assert quadratic_statistic(w, V) == pytest.approx(w @ np.linalg.solve(V, w))
    E = symmetric_noise(3, 2.0, rng, size=20000)
    assert np.allclose(E, np.swapaxes(E, 1, 2))
    assert np.var(E[:, 0, 0]) == pytest.approx(4.0, rel=0.05) and np.var(E[:, 0, 1]) == pytest.approx(2.0, rel=0.05)
    Z = rng.standard_normal((50, 3))
    mu, L = Z.mean(0), Z.T @ Z / 50
    assert np.allclose(covariance_from_moments(mu, L, 50), np.cov(Z, rowvar=False))
    # paired statistic with no noise = n w^T (S + gamma I)^{-1} w
    s = paired_statistic(mu, L, 50, gamma=0.1)
    assert s == pytest.approx(50 * mu @ np.linalg.solve(np.cov(Z, rowvar=False) + 0.1 * np.eye(3), mu))
    t = two_sample_statistic(mu, L, 50, np.zeros(3), L, 70, gamma=0.0 + 1e-12)
    Sx = np.cov(Z, rowvar=False)
    Sy = covariance_from_moments(np.zeros(3), L, 70)
    assert t == pytest.approx(mu @ np.linalg.solve(Sx / 50 + Sy / 70, mu), rel=1e-8)


def test_null_objects():
    rng = np.random.default_rng(10)
    c = chi2_null(4, rng=rng)
    assert c.p_value(stats.chi2.isf(0.05, 4)) == pytest.approx(0.05)
    assert c.critical_value(0.05) == pytest.approx(stats.chi2.isf(0.05, 4))
    w = weighted_chi2_null(np.eye(3), np.diag([1.0, 2.0, 3.0]), n_samples=20000, rng=rng)
    assert np.sort(w.weights) == pytest.approx([1, 2, 3]) and w.samples.mean() == pytest.approx(6.0, rel=0.05)
    crit = w.critical_value(0.05)
    assert w.p_value(crit) <= 0.05 < w.p_value(np.nextafter(crit, -np.inf) * (1 - 1e-9))
    json.dumps(w.to_dict())
    # noise-free bootstrap at large n reproduces chi2_J (KS test, false-failure rate 1e-3)
    b = paired_bootstrap_null(n=20000, cov_plugin=np.diag([1.0, 0.5, 0.1]), sigma_mean=0.0, sigma_second=0.0,
                              gamma=1e-9, n_samples=2000, rng=rng)
    assert stats.kstest(b.samples, stats.chi2(3).cdf).pvalue > 1e-3


def test_bootstrap_null_tracks_noise():
    """With noise on the mean only (noise-aware statistic), the null is chi2_J whatever the noise level."""
    rng = np.random.default_rng(11)
    b = paired_bootstrap_null(n=5000, cov_plugin=0.01 * np.eye(3), sigma_mean=0.05, sigma_second=0.0,
                              gamma=1e-9, n_samples=3000, rng=rng)
    assert stats.kstest(b.samples, stats.chi2(3).cdf).pvalue > 1e-3
    naive = paired_bootstrap_null(n=5000, cov_plugin=0.01 * np.eye(3), sigma_mean=0.05, sigma_second=0.0,
                                  gamma=1e-9, noise_aware=False, n_samples=3000, rng=rng)
    assert np.median(naive.samples) > 100 * stats.chi2(3).median()  # the paper's statistic explodes


# ----------------------------------------------------------------------------- type-I error and power
def test_type_one_error_is_controlled_small_study(feats):
    """SG with n = 300 pairs, d = 4, J = 3, epsilon = 1: 300 repetitions, 300 bootstrap draws each.

    The rejection count must lie in [3, 30] (rate 0.01-0.10). For a test with exact level 0.05 the
    false-failure probability is P(Bin(300, 0.05) < 3 or > 30) = 1.6e-4. The benchmark runs the large
    study (n = 5000, d = 50, 200+ repetitions).
    """
    rej = {"tcmc": 0, "nte": 0}
    for r in range(300):
        X, Y = _data(300, seed=1000 + r)
        rej["tcmc"] += tcmc_test(X, Y, features=feats, epsilon=1.0, delta=1e-5, random_state=r, n_null=300).reject
        if r < 150:
            rej["nte"] += nte_test(X, Y, features=feats, epsilon=1.0, delta=1e-5, random_state=r, n_null=300).reject
    lo, hi = stats.binom.cdf(2, 300, 0.05), stats.binom.sf(30, 300, 0.05)
    assert lo + hi < 2e-4
    assert 3 <= rej["tcmc"] <= 30, rej
    assert 1 <= rej["nte"] <= 16, rej  # 150 repetitions: P(Bin(150, .05) = 0 or > 16) < 1e-2


def test_power_on_a_clear_difference(feats):
    X, Y = _data(2000, shift=1.0, seed=12)
    for m in ("tcmc", "nte"):
        r = run_test(X, Y, method=m, features=feats, epsilon=2.0, delta=1e-5, random_state=0, n_null=500)
        assert r.reject and r.p_value < 0.01
