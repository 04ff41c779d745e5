"""Kernels against independent references (scikit-learn, closed forms, brute force)."""

import math
import tracemalloc

import numpy as np
import pytest
from scipy.spatial.distance import cdist
from sklearn.gaussian_process.kernels import Matern
from sklearn.metrics.pairwise import laplacian_kernel, rbf_kernel

from dpkme.kernels.kernel import (
    GaussianKernel,
    InverseMultiquadricKernel,
    LaplacianKernel,
    MaternKernel,
    kernel_from_dict,
    make_kernel,
)

RNG = np.random.default_rng(20261122)
A = RNG.normal(size=(300, 3)) * 2.0
B = RNG.normal(size=(170, 3)) * 2.0 + 0.7


def reference(kernel, P, Q):
    """Independent evaluation of each kernel (sklearn or an explicit formula)."""
    if isinstance(kernel, GaussianKernel):
        return kernel.amplitude * rbf_kernel(P, Q, gamma=kernel.gamma)
    if isinstance(kernel, LaplacianKernel):
        return kernel.amplitude * laplacian_kernel(P, Q, gamma=1.0 / kernel.lengthscale)
    if isinstance(kernel, MaternKernel):
        return kernel.amplitude * Matern(length_scale=kernel.lengthscale, nu=kernel.nu)(P, Q)
    if isinstance(kernel, InverseMultiquadricKernel):
        d2 = cdist(P, Q, "sqeuclidean")
        return kernel.amplitude * (1.0 + d2 / kernel.lengthscale**2) ** (-kernel.beta)
    raise AssertionError(kernel)


ALL_KERNELS = [
    GaussianKernel(lengthscale=1.3),
    GaussianKernel(gamma=0.05, amplitude=0.5),
    LaplacianKernel(lengthscale=2.0),
    MaternKernel(nu=0.5, lengthscale=1.5),
    MaternKernel(nu=1.5, lengthscale=1.5),
    MaternKernel(nu=2.5, lengthscale=0.8),
    InverseMultiquadricKernel(lengthscale=1.0),
    InverseMultiquadricKernel(lengthscale=2.0, beta=1.5),
]


@pytest.mark.parametrize("kernel", ALL_KERNELS, ids=repr)
def test_cross_matches_reference(kernel):
    np.testing.assert_allclose(kernel(A, B), reference(kernel, A, B), rtol=1e-12, atol=1e-13)


@pytest.mark.parametrize("kernel", ALL_KERNELS, ids=repr)
def test_gram_symmetric_exact_diagonal_and_psd(kernel):
    K = kernel.gram(A)
    assert np.array_equal(K, K.T)
    assert np.all(np.diag(K) == kernel.amplitude)
    assert K.max() <= kernel.amplitude
    assert np.linalg.eigvalsh(K).min() > -1e-10


@pytest.mark.parametrize("kernel", ALL_KERNELS, ids=repr)
def test_blocked_sums_match_brute_force(kernel):
    K_ab = reference(kernel, A, B)
    K_aa = reference(kernel, A, A)
    np.testing.assert_allclose(kernel.row_means(A, B), K_ab.mean(axis=1), rtol=1e-12)
    assert kernel.mean_gram(A) == pytest.approx(K_aa.mean(), rel=1e-12)
    assert kernel.mean_gram(A, B) == pytest.approx(K_ab.mean(), rel=1e-12)
    lower, upper = kernel.triangular_row_sums(A)
    np.testing.assert_allclose(lower, np.tril(K_aa, -1).sum(axis=1), rtol=1e-11, atol=1e-12)
    np.testing.assert_allclose(upper, np.triu(K_aa, 1).sum(axis=1), rtol=1e-11, atol=1e-12)
    np.testing.assert_allclose(kernel.row_sums_symmetric(A), K_aa.sum(axis=1), rtol=1e-12)


def test_gaussian_factorised_path_and_overflow_guard_agree_with_brute_force():
    # Far from the origin with a short lengthscale the factorised form would
    # overflow (2*gamma*|a||b| >> 709): the guard must switch to the direct formula.
    k = GaussianKernel(lengthscale=0.5)
    P = RNG.normal(size=(400, 2)) * 50 + 1e4
    Q = RNG.normal(size=(300, 2)) * 50 + 1e4
    prep = k._prepare(P, np.zeros(2))
    assert prep["sq"].min() * k.gamma > 300  # the guard must be active for these blocks
    # reference from direct coordinate differences (sklearn's GEMM-based distances
    # lose ~1e-8 relative at these coordinates; cdist does not)
    ref = np.exp(-k.gamma * cdist(P, Q, "sqeuclidean"))
    np.testing.assert_allclose(k.row_means(P, Q), ref.mean(1), rtol=1e-10, atol=1e-300)
    assert k.mean_gram(P) == pytest.approx(np.exp(-k.gamma * cdist(P, P, "sqeuclidean")).mean(), rel=1e-10)
    # a mixture of both: far outliers next to a bulk near the centre
    M = np.vstack([RNG.normal(size=(300, 2)), P[:5]])
    ref = np.exp(-k.gamma * cdist(M, M, "sqeuclidean"))
    np.testing.assert_allclose(k.row_sums_symmetric(M), ref.sum(1), rtol=1e-12)


def test_squared_distances_clamped_no_value_above_amplitude():
    # Nearly identical points with large coordinates: cancellation in |a|^2+|b|^2-2ab
    k = GaussianKernel(lengthscale=1e-3)
    P = 1e6 + RNG.normal(size=(50, 3)) * 1e-9
    K = k(P, P + 1e-12)
    assert np.all(np.isfinite(K)) and K.max() <= 1.0


@pytest.mark.parametrize("kernel", ALL_KERNELS[:1] + ALL_KERNELS[2:], ids=repr)
def test_spectral_measure_reproduces_kernel(kernel):
    # Bochner: kappa(r) = E[cos(w.r)]. With n draws the Monte-Carlo standard error
    # is at most sqrt(1/(2n)); a 5-sigma tolerance gives a false-failure rate
    # < 6e-7 per check (fixed seed: deterministic).
    n, dim = 200_000, 3
    w = kernel.sample_frequencies(n, dim, np.random.default_rng(7))
    for r in RNG.normal(size=(5, dim)) * kernel.lengthscale:
        mc = np.cos(w @ r).mean()
        exact = kernel(np.zeros((1, dim)), r[None, :])[0, 0] / kernel.amplitude
        assert abs(mc - exact) < 5 * math.sqrt(0.5 / n)


def test_gamma_and_lengthscale_parameterisations_agree():
    assert GaussianKernel(gamma=0.125) == GaussianKernel(lengthscale=2.0)
    assert GaussianKernel(gamma=1e-4 / 5).gamma == pytest.approx(2e-5)


def test_registry_and_round_trip():
    for kernel in ALL_KERNELS:
        assert kernel_from_dict(kernel.to_dict()) == kernel
    assert make_kernel("matern52", lengthscale=1.0).nu == 2.5
    assert make_kernel("rbf", gamma=1.0) == GaussianKernel(gamma=1.0)


def test_lower_bound_on_box_is_the_minimum_over_the_box():
    lo, hi = np.array([0.0, -1.0]), np.array([2.0, 1.0])
    for kernel in ALL_KERNELS:
        bound = kernel.lower_bound_on_box(lo, hi)
        corners = np.array([[0, -1], [2, 1], [0, 1], [2, -1]], dtype=float)
        grid = RNG.uniform(lo, hi, size=(500, 2))
        pts = np.vstack([corners, grid])
        assert kernel(pts, pts).min() >= bound - 1e-15
        assert kernel(corners[:1], corners[1:2])[0, 0] == pytest.approx(bound, rel=1e-12)


@pytest.mark.parametrize(
    "factory, message",
    [
        (lambda: GaussianKernel(lengthscale=0.0), "lengthscale"),
        (lambda: GaussianKernel(lengthscale=float("nan")), "nan"),
        (lambda: GaussianKernel(lengthscale=1.0, gamma=1.0), "exactly one"),
        (lambda: GaussianKernel(), "exactly one"),
        (lambda: MaternKernel(nu=1.0, lengthscale=1.0), "nu"),
        (lambda: InverseMultiquadricKernel(lengthscale=1.0, beta=-1), "beta"),
        (lambda: make_kernel("polynomial"), "polynomial"),
        (lambda: GaussianKernel(lengthscale=1.0, amplitude=-2), "amplitude"),
    ],
)
def test_bad_parameters_raise_value_error_naming_value(factory, message):
    with pytest.raises(ValueError, match=message):
        factory()


def test_bad_data_raises_value_error():
    k = GaussianKernel(lengthscale=1.0)
    X = A.copy()
    X[3, 1] = np.nan
    with pytest.raises(ValueError, match=r"non-finite value nan at index \(3, 1\)"):
        k.row_means(B, X)
    with pytest.raises(ValueError, match="2 column"):
        k.row_means(B, A[:, :2])  # "X has 2 column(s) but 3 were expected"
    with pytest.raises(ValueError, match="2-D"):
        k.gram(A[:, 0])
    with pytest.raises(ValueError, match="numeric"):
        k.gram(np.array([["a", "b"]]))


def test_row_means_memory_is_bounded():
    # M x N would be 40 x 400 000 x 8 B = 128 MB; the blocked sum must stay far below.
    k = GaussianKernel(lengthscale=1.0)
    X = RNG.normal(size=(400_000, 2))
    Z = RNG.normal(size=(40, 2))
    tracemalloc.start()
    try:
        k.row_means(Z, X)
        _, peak = tracemalloc.get_traced_memory()
    finally:
        tracemalloc.stop()
    assert peak < 40e6, f"peak {peak / 1e6:.1f} MB"


def test_points_near_the_float_limit_are_refused_without_overflow():
    """Regression (Hypothesis, thorough profile): the centring median of an even number of rows near 9e307
    overflowed (RuntimeWarning inside numpy) before the magnitude check refused the points."""
    import warnings

    from dpkme.kernels.kernel import make_kernel

    k = make_kernel("gaussian", lengthscale=1.0)
    Y = np.full((2, 2), 8.98846567e307)
    with warnings.catch_warnings():
        warnings.simplefilter("error", RuntimeWarning)
        for call in (lambda: k(Y), lambda: k.row_means(Y, np.zeros((3, 2))), lambda: k.triangular_row_sums(Y)):
            with pytest.raises(ValueError, match=r"8\.99e\+307 at index \(0, 0\)"):
                call()


def test_make_kernel_names_a_missing_parameter():
    """Regression (Hypothesis): kernel_from_dict({'name': 'laplacian'}) raised TypeError."""
    from dpkme.kernels.kernel import kernel_from_dict

    with pytest.raises(ValueError, match=r"laplacian kernel needs the parameter\(s\) \['lengthscale'\]"):
        kernel_from_dict({"name": "laplacian"})
