"""Tests for dpkme.release.gp: Gaussian-process release of the KME / KDE (Hall, Rinaldo & Wasserman).

Statistical tests use fixed seeds; each states its false-failure rate (the
probability of failing for a correct implementation with a random seed).
"""

from __future__ import annotations

import json
import math

import numpy as np
import pytest
from scipy import stats

from dpkme.kernels.kernel import GaussianKernel, InverseMultiquadricKernel, LaplacianKernel, MaternKernel
from dpkme.privacy.accounting import BudgetLedger
from dpkme.privacy.calibration import calibrate_gaussian, gaussian_delta
from dpkme.release.gp import (
    DEFAULT_MAX_DENSE_POINTS,
    NOTES,
    GPRelease,
    calibrate_gp,
    evaluate_on_grid,
    gp_expected_l2_error,
    gp_release,
    gp_sampler,
    gp_sensitivity,
    grid_axes,
    grid_points,
    hall_constant,
    kde_normaliser,
    l2_error_on_grid,
    mahalanobis_sensitivity,
    trapezoid_weights,
    true_function,
)
from dpkme.release.subspace import algorithm1

GAUSS = GaussianKernel(lengthscale=0.7)
LAPL = LaplacianKernel(lengthscale=0.7)
MATERN = MaternKernel(nu=1.5, lengthscale=0.7)


def _data(n=40, dim=2, seed=0):
    return np.random.default_rng(seed).normal(size=(n, dim))


# --------------------------------------------------------------------------- grids and quadrature
def test_grid_helpers():
    axes = grid_axes([0, -1], [1, 1], [3, 2])
    assert [a.tolist() for a in axes] == [[0, 0.5, 1], [-1, 1]]
    assert grid_points(axes).tolist() == [[0, -1], [0, 1], [0.5, -1], [0.5, 1], [1, -1], [1, 1]]
    w = trapezoid_weights(axes)
    assert w.shape == (3, 2) and w.sum() == pytest.approx(2.0)  # box volume
    assert w.tolist() == [[0.25, 0.25], [0.5, 0.5], [0.25, 0.25]]
    with pytest.raises(ValueError, match="points_per_axis must be >= 2"):
        grid_axes([0], [1], 1)
    with pytest.raises(ValueError, match=r"coordinate 0 has lower=1.0, upper=0.0"):
        grid_axes([1], [0], 5)
    with pytest.raises(ValueError, match="strictly increasing"):
        gp_sampler(GAUSS, grid=(np.array([0.0, 0.0, 1.0]),))


def test_l2_error_on_grid():
    axes = grid_axes([0], [1], 1001)
    x = axes[0]
    # int_0^1 (x^2 - 0)^2 dx = 1/5
    assert l2_error_on_grid(x**2, np.zeros_like(x), axes) == pytest.approx(math.sqrt(0.2), rel=1e-5)
    assert l2_error_on_grid(np.ones(4), np.zeros(4), kind="rms") == 1.0
    with pytest.raises(ValueError, match="needs the grid"):
        l2_error_on_grid(np.ones(4), np.zeros(4))
    with pytest.raises(ValueError, match="values have 3 entries but reference has 4"):
        l2_error_on_grid(np.ones(3), np.zeros(4), kind="rms")


# --------------------------------------------------------------------------- the sampler
@pytest.mark.parametrize("kernel", [GAUSS, LAPL])
def test_kronecker_covariance_is_the_kernel_matrix_and_dominates_it(kernel):
    for axes in (grid_axes([-1], [2], 7), grid_axes([-1, 0], [1, 2], [4, 5]), grid_axes([0, 0, 0], [1, 2, 1], [3, 2, 4])):
        s = gp_sampler(kernel, grid=axes)
        assert s.method == "kronecker"
        K = kernel.gram(grid_points(axes))
        np.testing.assert_allclose(s.kernel_matrix(), K, atol=1e-15)
        C = s.covariance()
        assert np.abs(C - K).max() < 1e-12
        assert np.linalg.eigvalsh(C - K).min() > -1e-14   # C >= K up to the rounding of this check
        np.testing.assert_allclose(s.pointwise_variance().reshape(-1), np.diag(C), rtol=1e-13)


def test_near_singular_kernel_matrices_are_factorised_with_a_dominating_jitter():
    """A Gaussian kernel on a fine grid is numerically singular; the jitter keeps L L^T >= K."""
    k = GaussianKernel(lengthscale=0.5)
    axes = grid_axes([0], [1], 60)
    K = k.gram(grid_points(axes))
    assert np.linalg.eigvalsh(K).min() < 1e-14  # numerically singular
    for s in (gp_sampler(k, grid=axes), gp_sampler(k, query_points=grid_points(axes))):
        C = s.covariance()
        tau = s.jitters[0]
        assert 0 < tau < 1e-9  # relative extra variance below 1e-9
        # C - K = tau*I plus rounding: every eigenvalue of C - K is close to tau, none is negative
        ev = np.linalg.eigvalsh(C - K)
        assert ev.min() > 0.0 and ev.max() < 10 * tau
        np.testing.assert_allclose(s.pointwise_variance(), 1.0 + tau, rtol=1e-12)


def _lrt_pvalue(samples: np.ndarray, sigma0: np.ndarray) -> float:
    """Likelihood-ratio test of H0: cov = sigma0 for zero-mean Gaussian samples (asymptotically chi-square)."""
    n, p = samples.shape
    S = samples.T @ samples / n
    M = np.linalg.solve(sigma0, S)
    _sign, logdet = np.linalg.slogdet(M)
    stat = n * (np.trace(M) - logdet - p)
    return float(stats.chi2.sf(stat, p * (p + 1) // 2))


@pytest.mark.parametrize("which", ["kronecker-gauss", "kronecker-laplace", "dense-matern", "dense-points"])
def test_gp_samples_have_the_kernel_covariance(which):
    """LRT of cov = K on 20 000 samples at 6 points, rejecting at p < 1e-4: false-failure rate 1e-4."""
    if which == "dense-points":
        P = np.array([[0.0, 0.0], [1.0, 0.2], [0.3, 1.1], [1.5, 1.4], [-0.8, 0.6], [0.5, -0.9]])
        s = gp_sampler(GAUSS, query_points=P)
    else:
        kernel = {"kronecker-gauss": GAUSS, "kronecker-laplace": LAPL, "dense-matern": MATERN}[which]
        s = gp_sampler(kernel, grid=grid_axes([0, 0], [1.4, 0.7], [3, 2]))
    assert s.method == ("dense" if which.startswith("dense") else "kronecker")
    K = s.kernel_matrix()
    Y = s.sample(np.random.default_rng(2024), size=20_000).reshape(20_000, -1)
    assert _lrt_pvalue(Y, K) > 1e-4
    # power: the same test rejects a 5 % larger scale and a wrong length scale
    assert _lrt_pvalue(1.05 * Y, K) < 1e-4
    wrong = type(s.kernel)(**{**s.kernel.get_params(), "lengthscale": 0.8})
    assert _lrt_pvalue(Y, wrong.gram(s.points)) < 1e-4


def test_sample_shapes_and_rng_checks():
    s = gp_sampler(GAUSS, grid=grid_axes([0, 0], [1, 1], [4, 3]))
    assert s.sample(np.random.default_rng(0)).shape == (4, 3)
    assert s.sample(np.random.default_rng(0), size=5).shape == (5, 4, 3)
    d = gp_sampler(MATERN, grid=grid_axes([0, 0], [1, 1], [4, 3]))
    assert d.method == "dense" and d.sample(np.random.default_rng(0), size=2).shape == (2, 4, 3)
    with pytest.raises(ValueError, match=r"numpy.random.Generator"):
        s.sample(0)
    with pytest.raises(ValueError, match="exactly one of grid"):
        gp_sampler(GAUSS)


def test_dense_limit_refusal_quotes_counts():
    P = np.random.default_rng(0).uniform(size=(50, 2))
    with pytest.raises(ValueError, match=r"50 points.*50 x 50 Cholesky.*max_dense_points = 40"):
        gp_sampler(GAUSS, query_points=P, max_dense_points=40)
    axes = grid_axes([0, 0], [1, 1], [70, 70])
    with pytest.raises(ValueError, match=r"4,900 points.*max_dense_points = 4,000.*Kronecker"):
        gp_sampler(MATERN, grid=axes)
    assert DEFAULT_MAX_DENSE_POINTS == 4000


# --------------------------------------------------------------------------- finite-point sensitivity
def _neighbour_h(kernel, X, X2, P, c=1.0):
    h = true_function(X, kernel=kernel, query_points=P) - true_function(X2, kernel=kernel, query_points=P)
    x, x2 = X[0], X2[0]
    g_norm = math.sqrt(max(2 * kernel.diag_value - 2 * float(kernel(x[None], x2[None])[0, 0]), 0.0)) / X.shape[0]
    return c * h, math.sqrt(c) * g_norm


@pytest.mark.parametrize("kernel", [GAUSS, LAPL, MATERN, InverseMultiquadricKernel(lengthscale=0.7)])
def test_mahalanobis_bound_holds_on_random_cases(kernel):
    r"""h^T K^+ h <= ||f_D - f_D'||_H^2 <= Delta^2 on 60 random (data, neighbour, points) cases."""
    rng = np.random.default_rng(7)
    delta_h = gp_sensitivity(n=6, kernel=kernel)
    worst = 0.0
    for case in range(60):
        X = rng.uniform(-2, 2, size=(6, 2))
        X2 = X.copy()
        X2[0] = rng.uniform(-2, 2, size=2)
        P = rng.uniform(-2.5, 2.5, size=(int(rng.integers(1, 25)), 2))
        h, g_norm = _neighbour_h(kernel, X, X2, P)
        K = kernel.gram(P)
        m = mahalanobis_sensitivity(h, K, rcond=1e-13)
        assert m <= g_norm * (1 + 1e-6) + 1e-12, (case, m, g_norm)
        assert g_norm <= delta_h * (1 + 1e-12)
        worst = max(worst, m / g_norm if g_norm > 0 else 0.0)
    assert worst > 0.5  # the bound is approached, the check is not vacuous


@pytest.mark.parametrize("kernel", [GAUSS, LAPL])
def test_mahalanobis_bound_is_attained_when_the_records_are_among_the_points(kernel):
    rng = np.random.default_rng(3)
    X = rng.uniform(-2, 2, size=(5, 2))
    X2 = X.copy()
    X2[0] = [2.5, -2.5]
    P = np.vstack([X[0], X2[0], [[0.0, 0.0], [1.0, 1.0]]])
    h, g_norm = _neighbour_h(kernel, X, X2, P)
    assert mahalanobis_sensitivity(h, kernel.gram(P), rcond=1e-14) == pytest.approx(g_norm, rel=1e-8)


def test_the_jittered_covariance_never_increases_the_mahalanobis_sensitivity():
    rng = np.random.default_rng(11)
    axes = grid_axes([-2, -2], [2, 2], [5, 5])
    s = gp_sampler(GAUSS, grid=axes)
    C, K = s.covariance(), s.kernel_matrix()
    P = grid_points(axes)
    for _ in range(20):
        X = rng.uniform(-2, 2, size=(4, 2))
        X2 = X.copy()
        X2[0] = rng.uniform(-2, 2, size=2)
        h, g_norm = _neighbour_h(GAUSS, X, X2, P)
        used = math.sqrt(float(h @ np.linalg.solve(C, h)))
        assert used <= mahalanobis_sensitivity(h, K, rcond=1e-15) * (1 + 1e-9) <= g_norm * (1 + 1e-6)


def test_kde_bound_in_its_own_rkhs():
    """KDE: h^T (cK)^+ h <= c ||g||^2_{H(k)} = Delta_kde-style bound."""
    rng = np.random.default_rng(5)
    c = kde_normaliser(GAUSS, 2)
    for _ in range(20):
        X = rng.uniform(-2, 2, size=(6, 2))
        X2 = X.copy()
        X2[0] = rng.uniform(-2, 2, size=2)
        P = rng.uniform(-2, 2, size=(8, 2))
        h, g_norm = _neighbour_h(GAUSS, X, X2, P, c=c)
        assert mahalanobis_sensitivity(h, c * GAUSS.gram(P), rcond=1e-13) <= g_norm * (1 + 1e-6)
        assert g_norm <= gp_sensitivity(n=6, kernel=GAUSS, dim=2, normalisation="kde") * (1 + 1e-12)


# --------------------------------------------------------------------------- sensitivity and calibration
def test_sensitivities():
    assert gp_sensitivity(n=50, kernel=GAUSS) == pytest.approx(math.sqrt(2) / 50)
    assert gp_sensitivity(n=50, kernel=GAUSS, mode="paper") == pytest.approx(2 / 50)
    assert gp_sensitivity(n=50, kernel=GAUSS, neighbouring="add-remove") == pytest.approx(1 / 50)
    # Hall et al.'s KDE example: 2 / (n (sqrt(2 pi) sigma)^{d/2})
    for d in (1, 2, 3):
        paper = gp_sensitivity(n=50, kernel=GAUSS, dim=d, normalisation="kde", mode="paper")
        assert paper == pytest.approx(2 / (50 * (math.sqrt(2 * math.pi) * 0.7) ** (d / 2)))


@pytest.mark.parametrize("kernel,dim", [(GAUSS, 1), (GAUSS, 2), (LAPL, 1), (LAPL, 2),
                                         (GaussianKernel(lengthscale=0.3, amplitude=0.5), 1)])
def test_kde_normaliser_makes_a_density(kernel, dim):
    L = 12 * kernel.lengthscale
    axes = grid_axes([-L] * dim, [L] * dim, 1201 if dim == 1 else 401)
    vals = kde_normaliser(kernel, dim) * kernel.cross(grid_points(axes), np.zeros((1, dim)))[:, 0]
    assert float(trapezoid_weights(axes).reshape(-1) @ vals) == pytest.approx(1.0, rel=2e-3)


def test_kde_refused_for_other_kernels():
    with pytest.raises(ValueError, match="normalisation='kde' is implemented for the Gaussian and Laplacian"):
        gp_release(_data(), kernel=MATERN, epsilon=1, delta=1e-5, grid=grid_axes([0, 0], [1, 1], 3),
                   normalisation="kde")


def test_calibrations():
    a = calibrate_gp(epsilon=1.0, delta=1e-5, sensitivity=0.1)
    h = calibrate_gp(epsilon=1.0, delta=1e-5, sensitivity=0.1, calibration="hall")
    assert a.sigma == calibrate_gaussian(epsilon=1.0, delta=1e-5, sensitivity=0.1).sigma
    assert h.sigma == pytest.approx(0.1 * math.sqrt(2 * math.log(2e5)))
    assert h.method == "hall" and h.achieved_delta == pytest.approx(
        gaussian_delta(sigma=h.sigma, epsilon=1.0, sensitivity=0.1)) and h.achieved_delta <= 1e-5
    assert 0.2 < 1 - a.sigma / h.sigma < 0.3      # 24 % less noise at eps = 1, delta = 1e-5
    small = calibrate_gp(epsilon=0.1, delta=1e-3, sensitivity=1.0)
    assert 1 - small.sigma / calibrate_gp(epsilon=0.1, delta=1e-3, sensitivity=1.0, calibration="hall").sigma > 0.5
    assert hall_constant(1e-5) == pytest.approx(math.sqrt(2 * math.log(2e5)))
    # Hall's constant fails the exact condition for large epsilon: refused with the true delta
    with pytest.raises(ValueError, match=r"epsilon=12, delta=1e-05 gives a true delta=.* > 1e-05"):
        calibrate_gp(epsilon=12.0, delta=1e-5, sensitivity=1.0, calibration="hall")
    assert calibrate_gp(epsilon=9.0, delta=1e-5, sensitivity=1.0, calibration="hall").achieved_delta <= 1e-5
    assert calibrate_gp(epsilon=50.0, delta=1e-5, sensitivity=1.0).achieved_delta <= 1e-5


# --------------------------------------------------------------------------- the release
def test_release_on_a_2d_grid():
    X = _data(300)
    axes = grid_axes([-3, -3], [3, 3], [40, 30])
    r = gp_release(X, kernel=GAUSS, epsilon=1.0, delta=1e-5, grid=axes, random_state=5)
    assert isinstance(r, GPRelease) and r.values.shape == r.true_values.shape == (40, 30)
    np.testing.assert_allclose(r.true_values.reshape(-1), GAUSS.row_means(grid_points(axes), X), atol=1e-14)
    assert r.sensitivity == pytest.approx(math.sqrt(2) / 300)
    assert r.scale == calibrate_gaussian(epsilon=1.0, delta=1e-5, sensitivity=r.sensitivity).sigma
    assert r.noise_std == pytest.approx(r.scale)
    assert r.params["sampler"] == "kronecker" and r.params["noise_reduction_vs_hall"] == pytest.approx(0.2449, abs=1e-3)
    assert r.achieved_delta <= 1e-5 and r.seed == 5 and r.noise_source == "seeded"
    # replay with the same seed; a different seed gives different noise
    again = gp_release(X, kernel=GAUSS, epsilon=1.0, delta=1e-5, grid=axes, random_state=5)
    np.testing.assert_array_equal(again.values, r.values)
    assert not np.array_equal(gp_release(X, kernel=GAUSS, epsilon=1.0, delta=1e-5, grid=axes,
                                         random_state=6).values, r.values)
    assert r.l2_error() > 0 and r.expected_l2_error() == pytest.approx(r.scale * 6.0, rel=1e-8)  # sqrt(vol) = 6


def test_release_exports_never_contain_the_true_values():
    X = _data(50)
    axes = grid_axes([-2, -2], [2, 2], 5)
    r = gp_release(X, kernel=GAUSS, epsilon=1.0, delta=1e-5, grid=axes, random_state=0)
    d = json.loads(r.to_json())
    assert d["values"] == r.values.tolist() and "true_values" not in d and "seed_warning" in d
    assert "noise_variance" not in d["params"]
    assert len(json.dumps(d)) < 20_000
    r2 = gp_release(X, kernel=GAUSS, epsilon=1.0, delta=1e-5, grid=axes, keep_true_values=False)
    assert r2.true_values is None and r2.seed is None and r2.noise_source == "os-entropy"
    with pytest.raises(ValueError, match="carries no true values"):
        r2.l2_error()


def test_kde_release_is_c_times_the_kme_release():
    X = _data(80)
    axes = grid_axes([-3, -3], [3, 3], 12)
    kme = gp_release(X, kernel=GAUSS, epsilon=0.5, delta=1e-6, grid=axes, random_state=1)
    kde = gp_release(X, kernel=GAUSS, epsilon=0.5, delta=1e-6, grid=axes, random_state=1, normalisation="kde")
    c = kde_normaliser(GAUSS, 2)
    assert kde.normaliser == c and kde.sensitivity == pytest.approx(math.sqrt(c) * kme.sensitivity)
    np.testing.assert_allclose(kde.values, c * kme.values, rtol=1e-12, atol=1e-15)
    np.testing.assert_allclose(kde.true_values, c * kme.true_values, rtol=1e-12, atol=1e-15)
    assert kde.l2_error() / np.abs(kde.true_values).max() == pytest.approx(
        kme.l2_error() / np.abs(kme.true_values).max(), rel=1e-10)


def test_query_points_and_non_product_kernels():
    X = _data(60)
    P = np.random.default_rng(1).uniform(-2, 2, size=(30, 2))
    r = gp_release(X, kernel=MATERN, epsilon=1.0, delta=1e-5, query_points=P, random_state=0)
    assert r.values.shape == (30,) and r.axes is None and r.params["sampler"] == "dense"
    np.testing.assert_allclose(r.true_values, MATERN.row_means(P, X), atol=1e-14)
    assert r.l2_error() == l2_error_on_grid(r.values, r.true_values, kind="rms")
    axes = grid_axes([-2, -2], [2, 2], [6, 5])
    g = gp_release(X, kernel=MATERN, epsilon=1.0, delta=1e-5, grid=axes, random_state=0)
    assert g.values.shape == (6, 5) and g.params["sampler"] == "dense"
    np.testing.assert_allclose(g.true_values.reshape(-1), MATERN.row_means(grid_points(axes), X), atol=1e-14)


def test_one_dimensional_and_add_remove():
    X = _data(20, dim=1)
    axes = grid_axes([-3], [3], 500)
    r = gp_release(X, kernel=LAPL, epsilon=2.0, delta=1e-5, grid=axes, neighbouring="add-remove", n_private=25,
                   random_state=0)
    assert r.values.shape == (500,) and r.sensitivity == pytest.approx(1 / 25) and r.n_private == 25
    np.testing.assert_allclose(r.true_values, LAPL.row_means(grid_points(axes), X) * 20 / 25, atol=1e-14)
    with pytest.raises(ValueError, match="n_private=25 for 20 rows"):
        gp_release(X, kernel=LAPL, epsilon=2.0, delta=1e-5, grid=axes, n_private=25)


def test_sampler_reuse_and_mismatch():
    X = _data(30)
    axes = grid_axes([-2, -2], [2, 2], 8)
    s = gp_sampler(GAUSS, grid=axes)
    a = gp_release(X, kernel=GAUSS, epsilon=1.0, delta=1e-5, grid=axes, sampler=s, random_state=4)
    b = gp_release(X, kernel=GAUSS, epsilon=1.0, delta=1e-5, grid=axes, random_state=4)
    np.testing.assert_array_equal(a.values, b.values)
    with pytest.raises(ValueError, match="different points"):
        gp_release(X, kernel=GAUSS, epsilon=1.0, delta=1e-5, grid=grid_axes([-2, -2], [2, 2], 9), sampler=s)
    with pytest.raises(ValueError, match="same kernel"):
        gp_release(X, kernel=LAPL, epsilon=1.0, delta=1e-5, grid=axes, sampler=s)


def test_progress_callback():
    seen = []
    gp_release(_data(), kernel=GAUSS, epsilon=1.0, delta=1e-5, grid=grid_axes([0, 0], [1, 1], 4),
               progress=lambda f, msg: seen.append((f, msg)))
    fractions = [f for f, _ in seen]
    assert fractions[0] == 0.0 and fractions[-1] == 1.0 and fractions == sorted(fractions)
    with pytest.raises(ValueError, match="progress must be callable"):
        gp_release(_data(), kernel=GAUSS, epsilon=1.0, delta=1e-5, grid=grid_axes([0, 0], [1, 1], 4), progress=3)


def test_large_grid_runs_with_kronecker_structure():
    X = _data(1000)
    r = gp_release(X, kernel=GAUSS, epsilon=1.0, delta=1e-5, grid=grid_axes([-3, -3], [3, 3], 200), random_state=0)
    assert r.values.shape == (200, 200) and r.params["sampler"] == "kronecker"


@pytest.mark.parametrize("kwargs,match", [
    ({"epsilon": -1}, "epsilon must be a finite number > 0"),
    ({"delta": 0}, "delta must lie in"),
    ({"calibration": "classic"}, "calibration must be one of"),
    ({"normalisation": "pdf"}, "normalisation must be one of"),
    ({"grid": None}, "exactly one of grid"),
    ({"grid": (np.linspace(0, 1, 3),)}, "grid has 1 axes but the data has 2 columns"),
    ({"kernel": GaussianKernel(lengthscale=1.0, amplitude=1.5)}, "k\\(x, x\\) <= 1"),
])
def test_bad_arguments(kwargs, match):
    args = {"kernel": GAUSS, "epsilon": 1.0, "delta": 1e-5, "grid": grid_axes([0, 0], [1, 1], 3)}
    args.update(kwargs)
    with pytest.raises(ValueError, match=match):
        gp_release(_data(), **args)


# --------------------------------------------------------------------------- comparisons, curves, ledger
def test_expected_l2_error_matches_monte_carlo():
    """Mean of the squared L2 noise over 4000 draws vs the closed form; |z| < 3.9 (false-failure rate 1e-4)."""
    axes = grid_axes([-2], [3], 60)
    s = gp_sampler(GAUSS, grid=axes)
    eps, delta, n = 0.8, 1e-5, 100
    expected = gp_expected_l2_error(epsilon=eps, delta=delta, n=n, kernel=GAUSS, grid=axes)
    scale = calibrate_gp(epsilon=eps, delta=delta, sensitivity=gp_sensitivity(n=n, kernel=GAUSS)).sigma
    assert expected == pytest.approx(scale * math.sqrt(5.0), rel=1e-12)
    w = trapezoid_weights(axes)
    sq = ((scale * s.sample(np.random.default_rng(99), size=4000)) ** 2 @ w)
    z = (sq.mean() - expected**2) / (sq.std(ddof=1) / math.sqrt(sq.size))
    assert abs(z) < 3.9
    curve = gp_expected_l2_error(epsilon=[0.1, 1.0, 10.0], delta=delta, n=n, kernel=GAUSS, grid=axes)
    assert curve.shape == (3,) and np.all(np.diff(curve) < 0)
    hall = gp_expected_l2_error(epsilon=[0.1, 1.0], delta=delta, n=n, kernel=GAUSS, grid=axes, calibration="hall")
    assert np.all(hall > curve[:2])


def test_evaluate_other_releases_on_the_same_grid():
    X = _data(200)
    axes = grid_axes([-3, -3], [3, 3], 25)
    Z = np.random.default_rng(1).normal(size=(40, 2))
    alg1 = algorithm1(X, Z, kernel=GAUSS, epsilon=1.0, delta=1e-5, random_state=0)
    vals = evaluate_on_grid(alg1, axes)
    assert vals.shape == (25, 25)
    np.testing.assert_allclose(vals.reshape(-1), alg1.evaluate(grid_points(axes)), atol=1e-14)
    c = kde_normaliser(GAUSS, 2)
    np.testing.assert_allclose(evaluate_on_grid(alg1, axes, normalisation="kde"), c * vals, rtol=1e-14)
    gp = gp_release(X, kernel=GAUSS, epsilon=1.0, delta=1e-5, grid=axes, random_state=0)
    err = l2_error_on_grid(vals, gp.true_values, axes)
    assert err > 0 and math.isfinite(err)
    P = grid_points(axes)[:7]
    np.testing.assert_allclose(evaluate_on_grid(alg1, query_points=P), alg1.evaluate(P), atol=1e-15)


def test_privacy_charge_in_the_ledger():
    X = _data(50)
    r = gp_release(X, kernel=GAUSS, epsilon=1.0, delta=1e-5, grid=grid_axes([-2, -2], [2, 2], 5), random_state=0)
    charge = r.privacy_charge()
    assert charge.mechanism == "gaussian" and charge.epsilon == 1.0 and charge.delta == 1e-5
    assert charge.noise_multiplier == pytest.approx(r.scale / r.sensitivity)
    assert charge.details["neighbouring"] == "replace-one" and charge.details["mechanism"] == "gp-release"
    ledger = BudgetLedger(epsilon_budget=3.0, delta_budget=1e-4)
    ledger.add(charge)
    ledger.add(r.privacy_charge("second"))
    assert ledger.totals()["basic"][0] == pytest.approx(2.0)
    hall = gp_release(X, kernel=GAUSS, epsilon=1.0, delta=1e-5, grid=grid_axes([-2, -2], [2, 2], 5),
                      calibration="hall", random_state=0)
    assert hall.privacy_charge().details["calibration"] == "hall"


def test_notes_for_the_app():
    assert {"not_in_rkhs", "finite_points", "hall_constant", "jitter"} <= set(NOTES)
    assert all(isinstance(v, str) and len(v) > 50 for v in NOTES.values())
