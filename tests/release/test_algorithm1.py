"""Algorithm 1: basis vs brute-force Gram–Schmidt, guarantees, statistics of the noise, bad input."""

import math

import numpy as np
import pytest
from scipy import stats

from dpkme.kernels.kernel import GaussianKernel, LaplacianKernel, MaternKernel
from dpkme.metrics import rkhs_distance
from dpkme.privacy.calibration import calibrate_gaussian
from dpkme.privacy.sensitivity import kme_sensitivity
from dpkme.release.subspace import (
    SubspaceBasis,
    algorithm1,
    james_stein_shrink,
    project_weights,
    uniform_baseline,
)

RNG = np.random.default_rng(1234)
KERNEL = GaussianKernel(lengthscale=1.0)


def brute_force_gram_schmidt(K, tol):
    """Modified Gram–Schmidt in order with skipping, as in the paper's code (coefficient form)."""
    Q, acc = [], []
    for f in range(K.shape[0]):
        v = np.zeros(K.shape[0])
        v[f] = 1.0
        for q in Q:
            v -= (q @ K @ v) * q
        nrm2 = v @ K @ v
        if nrm2 > tol:
            Q.append(v / math.sqrt(nrm2))
            acc.append(f)
    return np.array(Q), np.array(acc)


@pytest.mark.parametrize("kernel", [KERNEL, LaplacianKernel(lengthscale=1.0), MaternKernel(nu=2.5, lengthscale=0.7)],
                         ids=repr)
def test_basis_matches_brute_force_gram_schmidt(kernel):
    Z = RNG.normal(size=(250, 2)) * 1.5  # rank-deficient numerically: points are skipped
    X = RNG.normal(size=(2000, 2)) * 2 + 0.3
    tol = 1e-5
    B = SubspaceBasis.fit(Z, kernel=kernel, tol=tol)
    K = kernel.gram(Z)
    Q, acc = brute_force_gram_schmidt(K, tol)
    np.testing.assert_array_equal(B.accepted, acc)
    kbar = kernel.row_means(Z, X)
    alpha = B.coordinates(kbar)
    np.testing.assert_allclose(alpha, Q @ kbar, rtol=1e-7, atol=1e-9)
    np.testing.assert_allclose(B.weights(alpha), alpha @ Q, rtol=1e-6, atol=1e-6 * np.abs(alpha @ Q).max())
    # G[m, f] = b_f(z_m) for every point at or after the creator of b_f
    G_ref = K @ Q.T
    for f, a in enumerate(B.accepted[:50]):
        np.testing.assert_allclose(B.features[a:, f], G_ref[a:, f], atol=1e-8)


def test_basis_is_orthonormal_and_prefix_consistent():
    Z = RNG.normal(size=(400, 3)) * 1.5
    B = SubspaceBasis.fit(Z, kernel=KERNEL, tol=1e-8)
    K = KERNEL.gram(Z)
    W = np.zeros((B.dim, Z.shape[0]))  # coefficients of b_f in terms of k(z_m, .)
    for f in range(B.dim):
        e = np.zeros(B.dim)
        e[f] = 1.0
        W[f] = B.weights(e)
    np.testing.assert_allclose(W @ K @ W.T, np.eye(B.dim), atol=1e-6)
    m = 150
    Bp = SubspaceBasis.fit(Z[:m], kernel=KERNEL, tol=1e-8)
    f = int(B.dim_for_prefix(m))
    np.testing.assert_array_equal(Bp.accepted, B.accepted[:f])
    np.testing.assert_allclose(Bp.factor, B.factor[:f, :f], atol=1e-12)


def test_duplicates_and_rank_deficiency_are_skipped():
    base = RNG.normal(size=(30, 2))
    Z = np.vstack([base, base, base[:5] + 1e-9])
    B = SubspaceBasis.fit(Z, kernel=KERNEL)
    assert B.dim <= 30 and set(B.accepted) <= set(range(30))
    w = B.weights(np.ones(B.dim))
    assert np.all(np.isfinite(w)) and np.all(w[30:] == 0)


def test_closed_form_distance_equals_direct_formula():
    Z = RNG.normal(size=(120, 2))
    X = RNG.normal(size=(3000, 2)) * 1.2
    rel = algorithm1(X, Z, kernel=KERNEL, epsilon=1.0, delta=1e-5, random_state=3)
    B = SubspaceBasis.fit(Z, kernel=KERNEL)
    alpha = B.coordinates(KERNEL.row_means(Z, X))
    kxx = KERNEL.mean_gram(X)
    beta = B.factor.T @ rel.weights[B.accepted]  # recover beta = L^T w_A from the released weights
    closed = math.sqrt(kxx - alpha @ alpha + np.sum((beta - alpha) ** 2))
    assert rkhs_distance(X, Z, rel.weights, kernel=KERNEL, mean_kxx=kxx) == pytest.approx(closed, rel=1e-6)


def test_release_records_calibration_and_tight_sensitivity():
    X = RNG.normal(size=(500, 2))
    Z = RNG.normal(size=(40, 2))
    rel = algorithm1(X, Z, kernel=KERNEL, epsilon=0.5, delta=1e-6, random_state=9)
    assert rel.sensitivity == pytest.approx(math.sqrt(2) / 500)
    assert rel.sigma == calibrate_gaussian(epsilon=0.5, delta=1e-6, sensitivity=rel.sensitivity).sigma
    assert (rel.mechanism, rel.seed, rel.neighbouring, rel.calibration) == ("algorithm1", 9, "replace-one", "analytic")
    paper = algorithm1(X, Z, kernel=KERNEL, epsilon=0.5, delta=1e-6, sensitivity="paper", calibration="classic",
                       random_state=9)
    assert paper.sensitivity == pytest.approx(2 / 500)
    assert paper.sigma == pytest.approx(2 / 500 * math.sqrt(2 * math.log(1.25e6)) / 0.5, rel=1e-12)
    ar = algorithm1(X, Z, kernel=KERNEL, epsilon=0.5, delta=1e-6, neighbouring="add-remove", n_private=X.shape[0],
                    random_state=9)
    assert ar.sensitivity == pytest.approx(1 / 500)


def test_seed_replays_and_points_from_q_are_data_independent():
    X = RNG.normal(size=(300, 2))
    a = algorithm1(X, kernel=KERNEL, epsilon=1, delta=1e-6, n_points=25, q_scale=3.0, random_state=5)
    b = algorithm1(X, kernel=KERNEL, epsilon=1, delta=1e-6, n_points=25, q_scale=3.0, random_state=5)
    c = algorithm1(X * 100, kernel=KERNEL, epsilon=1, delta=1e-6, n_points=25, q_scale=3.0, random_state=5)
    d = algorithm1(X, kernel=KERNEL, epsilon=1, delta=1e-6, n_points=25, q_scale=3.0, random_state=6)
    assert np.array_equal(a.weights, b.weights) and np.array_equal(a.points, b.points)
    assert np.array_equal(a.points, c.points)  # the points do not depend on X
    assert not np.array_equal(a.weights, d.weights)


def test_noise_norm_matches_its_closed_form_expectation():
    # ||beta - alpha||^2 ~ sigma^2 chi^2_F, so the mean over R releases of
    # (d^2 - projection^2)/sigma^2 is F in expectation with sd sqrt(2F/R).
    # Two-sided z-test at 1e-4 (false-failure rate 1e-4; fixed seeds -> deterministic).
    X = RNG.normal(size=(800, 2))
    Z = RNG.normal(size=(60, 2))
    B = SubspaceBasis.fit(Z, kernel=KERNEL)
    kxx = KERNEL.mean_gram(X)
    alpha = B.coordinates(KERNEL.row_means(Z, X))
    proj2 = kxx - alpha @ alpha
    R = 300
    vals = []
    for r in range(R):
        rel = algorithm1(X, Z, kernel=KERNEL, epsilon=2.0, delta=1e-5, random_state=1000 + r, basis_cache=B)
        d = rkhs_distance(X, Z, rel.weights, kernel=KERNEL, mean_kxx=kxx)
        vals.append((d**2 - proj2) / rel.sigma**2)
    F = B.dim
    z = (np.mean(vals) - F) / math.sqrt(2 * F / R)
    assert abs(z) < stats.norm.ppf(1 - 0.5e-4)


def test_auto_basis_shrinkage_never_worse_on_average():
    # James–Stein dominance: mean squared error of "auto" <= "full" in expectation.
    # Compared on 60 paired draws in a noise-dominated regime (small eps) where the
    # gain is large; a sign test of the paired differences at level 1e-4.
    X = RNG.normal(size=(600, 2))
    Z = X[:80]
    B = SubspaceBasis.fit(Z, kernel=KERNEL)
    kxx = KERNEL.mean_gram(X)
    wins = 0
    for r in range(60):
        full = algorithm1(X, Z, kernel=KERNEL, epsilon=0.05, delta=1e-6, random_state=r, basis_cache=B)
        auto = algorithm1(X, Z, kernel=KERNEL, epsilon=0.05, delta=1e-6, random_state=r, basis="auto",
                          points_are_sample=True, basis_cache=B)
        wins += rkhs_distance(X, Z, auto.weights, kernel=KERNEL, mean_kxx=kxx) < \
            rkhs_distance(X, Z, full.weights, kernel=KERNEL, mean_kxx=kxx)
    assert stats.binomtest(wins, 60, 0.5, alternative="greater").pvalue < 1e-4


def test_james_stein_properties():
    beta = np.array([1.0, -2.0, 0.5, 3.0])
    assert np.array_equal(james_stein_shrink(beta[:2], np.zeros(2), 1.0), beta[:2])  # < 3 coords: unchanged
    out = james_stein_shrink(beta, np.zeros(4), 1.0)
    factor = 1 - 2 / (beta @ beta)
    np.testing.assert_allclose(out, factor * beta)
    np.testing.assert_allclose(james_stein_shrink(beta, np.zeros(4), 100.0), 0.0)  # positive part


def test_weight_constraints_hold():
    X = RNG.normal(size=(400, 2))
    Z = RNG.normal(size=(50, 2))
    s = algorithm1(X, Z, kernel=KERNEL, epsilon=0.3, delta=1e-6, weights="simplex", random_state=1)
    assert s.weights.min() >= 0 and s.weights.sum() == pytest.approx(1.0, abs=1e-12)
    l1 = algorithm1(X, Z, kernel=KERNEL, epsilon=0.3, delta=1e-6, weights="l1", l1_radius=1.5, random_state=1)
    assert np.abs(l1.weights).sum() <= 1.5 + 1e-9
    # the projection is the RKHS-closest point: better than the simplex's uniform vertex mix
    free = algorithm1(X, Z, kernel=KERNEL, epsilon=0.3, delta=1e-6, random_state=1)
    K = KERNEL.gram(Z)
    u = np.full(50, 1 / 50)
    d = lambda v: (v - free.weights) @ K @ (v - free.weights)  # noqa: E731
    assert d(s.weights) <= d(u) + 1e-12
    w_proj = project_weights(free.weights, K, constraint="simplex")
    assert np.allclose(w_proj, s.weights, atol=1e-8)


def test_uniform_baseline():
    Z = RNG.normal(size=(10, 2))
    b = uniform_baseline(Z, kernel=KERNEL)
    assert np.allclose(b.weights, 0.1) and b.epsilon == 0.0


@pytest.mark.parametrize(
    "kwargs, message",
    [
        ({"epsilon": 0.0}, "epsilon"),
        ({"epsilon": -1.0}, "epsilon"),
        ({"epsilon": float("nan")}, "epsilon"),
        ({"delta": 0.0}, "delta"),
        ({"delta": 1.0}, "delta"),
        ({"kernel": GaussianKernel(lengthscale=1.0, amplitude=2.0)}, "k\\(x, x\\) = 2.0"),
        ({"calibration": "fast"}, "calibration"),
        ({"neighbouring": "swap"}, "neighbouring"),
        ({"basis": "eigen"}, "basis"),
        ({"weights": "positive"}, "weights"),
        ({"Z": np.zeros((5, 3))}, "3 column"),
        ({"Z": None}, "n_points and q_scale"),
        ({"Z": np.full((5, 2), np.inf)}, "inf"),
    ],
)
def test_bad_input_raises_value_error(kwargs, message):
    X = RNG.normal(size=(50, 2))
    args = dict(Z=RNG.normal(size=(5, 2)), kernel=KERNEL, epsilon=1.0, delta=1e-6)
    args.update(kwargs)
    Z = args.pop("Z")
    with pytest.raises(ValueError, match=message):
        algorithm1(X, Z, **args)


def test_publishable_subset_larger_than_data_is_refused():
    X = RNG.normal(size=(20, 2))
    with pytest.raises(ValueError, match="M=30"):
        algorithm1(X, RNG.normal(size=(30, 2)), kernel=KERNEL, epsilon=1, delta=1e-6, points_are_sample=True)


def test_nan_in_private_data_is_refused():
    X = RNG.normal(size=(50, 2))
    X[7, 0] = np.nan
    with pytest.raises(ValueError, match=r"nan at index \(7, 0\)"):
        algorithm1(X, X[:5] * 0, kernel=KERNEL, epsilon=1.0, delta=1e-6)


def test_sensitivity_of_coordinates_bounded_by_rkhs_sensitivity():
    # ||alpha(D) - alpha(D')|| <= ||mu_D - mu_D'||_H <= sqrt(2)/N: brute force over outliers
    n = 60
    X = RNG.normal(size=(n, 2))
    Z = RNG.normal(size=(25, 2))
    B = SubspaceBasis.fit(Z, kernel=KERNEL)
    a0 = B.coordinates(KERNEL.row_means(Z, X))
    worst = 0.0
    for scale in (0.3, 3, 300):
        for _ in range(30):
            X2 = X.copy()
            X2[RNG.integers(n)] = RNG.normal(size=2) * scale
            worst = max(worst, np.linalg.norm(B.coordinates(KERNEL.row_means(Z, X2)) - a0))
    assert worst <= kme_sensitivity(n=n, kernel=KERNEL) * (1 + 1e-9)


def test_sure_shrink_adapts_between_target_and_observation():
    from dpkme.release.subspace import sure_shrink

    rng = np.random.default_rng(8)
    F, sigma = 400, 0.1
    v = rng.uniform(0.5, 2.0, size=F)
    target = np.zeros(F)
    # truth equal to the target: shrinks (almost) all the way
    beta = sigma * rng.standard_normal(F)
    assert np.linalg.norm(sure_shrink(beta, target, sigma, v)) < 0.2 * np.linalg.norm(beta)
    # truth far from the target, small noise: keeps the observation
    alpha = rng.normal(size=F) * 10 * np.sqrt(v)
    beta = alpha + sigma * rng.standard_normal(F)
    out = sure_shrink(beta, target, sigma, v)
    assert np.linalg.norm(out - alpha) <= 1.02 * np.linalg.norm(beta - alpha)
    # in between: beats both the target and the raw observation on average (20 draws)
    alpha = rng.normal(size=F) * sigma * np.sqrt(v)
    err_out, err_beta, err_t = 0.0, 0.0, 0.0
    for r in range(20):
        beta = alpha + sigma * np.random.default_rng(r).standard_normal(F)
        out = sure_shrink(beta, target, sigma, v)
        err_out += np.sum((out - alpha) ** 2)
        err_beta += np.sum((beta - alpha) ** 2)
        err_t += np.sum(alpha**2)
    assert err_out < 0.8 * min(err_beta, err_t)


def test_noise_source_real_releases_record_no_seed():
    X = RNG.normal(size=(100, 2))
    Z = RNG.normal(size=(10, 2))
    seeded = algorithm1(X, Z, kernel=KERNEL, epsilon=1, delta=1e-6, random_state=3)
    real = algorithm1(X, Z, kernel=KERNEL, epsilon=1, delta=1e-6)
    other = algorithm1(X, Z, kernel=KERNEL, epsilon=1, delta=1e-6)
    assert (seeded.noise_source, seeded.seed) == ("seeded", 3)
    assert "seed_warning" in seeded.metadata()
    assert (real.noise_source, real.seed) == ("os-entropy", None)
    assert "seed_warning" not in real.metadata()
    assert not np.array_equal(real.weights, other.weights)


def test_project_weights_uses_the_one_simplex_and_l1_projection():
    """Algorithm 1's post-processing projects with dpkme.reduced_set.weights (it had its own copy): the copy's
    formulas (simplex of radius 1; L1 ball through the simplex of the rescaled |v|) agree with it."""
    import dpkme.release.subspace as sub
    from dpkme.reduced_set.weights import project_l1_ball, project_simplex

    assert sub.project_simplex is project_simplex and sub.project_l1_ball is project_l1_ball

    def old_simplex(v):
        u = np.sort(v)[::-1]
        css = np.cumsum(u) - 1.0
        rho = np.nonzero(u - css / np.arange(1, v.shape[0] + 1) > 0)[0][-1]
        return np.maximum(v - css[rho] / (rho + 1.0), 0.0)

    def old_l1(v, radius):
        return v.copy() if np.abs(v).sum() <= radius else np.sign(v) * old_simplex(np.abs(v) / radius) * radius

    rng = np.random.default_rng(7)
    for n in (1, 2, 5, 50, 400):
        for scale in (1e-3, 1.0, 30.0):
            v = scale * rng.standard_normal(n)
            np.testing.assert_array_equal(project_simplex(v), old_simplex(v))
            for radius in (0.1, 1.0, 7.5):
                np.testing.assert_allclose(project_l1_ball(v, radius), old_l1(v, radius), rtol=1e-12, atol=1e-14)
