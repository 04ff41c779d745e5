"""The fused JAX/XLA kernel-sum engine (dpkme.kernels.engine) against the blocked numpy path.

Tolerances: every sum here is of positive terms, each evaluated to a few ulps in float64 by both paths (the
factorised Gaussian form of either path to <= 1e-13 relative by construction), and summed in different orders;
so sums agree to ~1e-13 relative, single kernel values to ~1e-13 absolute (values <= 1).
"""

from __future__ import annotations

import subprocess
import sys

import numpy as np
import pytest

from dpkme.kernels import (
    AdditiveKernel,
    GaussianKernel,
    InverseMultiquadricKernel,
    LaplacianKernel,
    MaternKernel,
    engine,
)

pytest.importorskip("jax")

RTOL = 1e-13
KERNELS = [
    GaussianKernel(lengthscale=2.0),
    GaussianKernel(lengthscale=0.3, amplitude=0.7),
    LaplacianKernel(lengthscale=3.0),
    MaternKernel(nu=0.5, lengthscale=2.0),
    MaternKernel(nu=1.5, lengthscale=2.0, amplitude=0.5),
    MaternKernel(nu=2.5, lengthscale=1.0),
    InverseMultiquadricKernel(lengthscale=1.5),
    InverseMultiquadricKernel(lengthscale=1.5, beta=1.3),
]
# Sizes that span several tiles with a partial last one (fixed, so that the compiled shapes are reused).
N, M, D = engine.TILE * 2 + 277, engine.TILE + 88, 3


def _data(seed=0):
    rng = np.random.default_rng(seed)
    return 2.0 * rng.normal(size=(N, D)), 2.0 * rng.normal(size=(M, D))


def _both(monkeypatch, fn):
    monkeypatch.setenv(engine.ENGINE_ENV, "numpy")
    ref = fn()
    monkeypatch.setenv(engine.ENGINE_ENV, "jax")
    return ref, fn()


@pytest.mark.parametrize("kernel", KERNELS, ids=repr)
def test_sums_agree_with_the_numpy_path(monkeypatch, kernel):
    X, Z = _data()
    ref, new = _both(monkeypatch, lambda: (kernel.row_means(Z, X), kernel.triangular_row_sums(X),
                                           kernel.mean_gram(X), kernel.mean_gram(Z, X)))
    np.testing.assert_allclose(new[0], ref[0], rtol=RTOL, atol=0)
    for got, want in zip(new[1], ref[1]):  # strict lower and upper row sums (0 at the ends)
        np.testing.assert_allclose(got, want, rtol=RTOL, atol=1e-300)
    assert new[1][0][0] == 0.0 and new[1][1][-1] == 0.0
    assert new[2] == pytest.approx(ref[2], rel=RTOL, abs=0)
    assert new[3] == pytest.approx(ref[3], rel=RTOL, abs=0)


@pytest.mark.parametrize("kernel", KERNELS, ids=repr)
def test_gram_matrices_agree_and_are_exactly_symmetric(monkeypatch, kernel):
    X, Z = _data(1)
    ref, new = _both(monkeypatch, lambda: (kernel.cross(Z, X), kernel.gram(X)))
    np.testing.assert_allclose(new[0], ref[0], rtol=0, atol=1e-13)
    np.testing.assert_allclose(new[1], ref[1], rtol=0, atol=1e-13)
    K = new[1]
    assert np.array_equal(K, K.T)
    assert np.all(np.diag(K) == kernel.amplitude)


def _exact(kernel, A, B):
    diff = A[:, None, :] - B[None, :, :]  # coordinate differences of the raw points
    return kernel.value_at_distance(np.sqrt(np.einsum("ijk,ijk->ij", diff, diff)))


def test_far_points_keep_full_relative_precision(monkeypatch):
    """Far from the public centre (R^2 / l^2 >> 1e3) the engine uses coordinate differences, not the GEMM forms.

    A cluster of spread 1 at distance R = 1e3 from the bulk: centring leaves an absolute error of about
    R * eps = 1e-13 in each coordinate, hence a relative error of ~1e-13 in kernel values within the cluster (tolerance
    1e-12); GEMM squared distances would be off by ~eps * R^2 = 1e-10 absolute, i.e. ~1e-10 relative.
    """
    rng = np.random.default_rng(2)
    X = rng.normal(size=(N, D))
    X[:40] = 1e3 + rng.normal(size=(40, D))  # the far cluster: its own tile (mixed with near points)
    Z = rng.normal(size=(M, D))
    Z[:3] = X[:3] + 0.5  # public points in the cluster too; Z's median (the centre) stays in the bulk
    monkeypatch.setenv(engine.ENGINE_ENV, "jax")
    for kernel in (GaussianKernel(lengthscale=1.0), InverseMultiquadricKernel(lengthscale=1.0, beta=2.0)):
        exact = _exact(kernel, X, X)
        lower, upper = kernel.triangular_row_sums(X)
        np.testing.assert_allclose(lower, np.tril(exact, -1).sum(1), rtol=1e-12, atol=1e-300)
        np.testing.assert_allclose(upper, np.triu(exact, 1).sum(1), rtol=1e-12, atol=1e-300)
        np.testing.assert_allclose(kernel.row_means(Z, X), _exact(kernel, Z, X).mean(1), rtol=1e-12, atol=1e-300)
        monkeypatch.setenv(engine.ENGINE_ENV, "numpy")  # same safeguard as the numpy path (cdist when far)
        ref_lower, _ = kernel.triangular_row_sums(X)
        monkeypatch.setenv(engine.ENGINE_ENV, "jax")
        np.testing.assert_allclose(lower, ref_lower, rtol=RTOL, atol=1e-300)


@pytest.mark.slow  # compiles the row sums for four pairs of shapes
@pytest.mark.parametrize("kernel", [KERNELS[0], KERNELS[4]], ids=repr)
def test_mmd_and_rkhs_distance_agree_with_the_numpy_path(monkeypatch, kernel):
    from dpkme.metrics import mmd, rkhs_distance_squared, weighted_mean_gram

    X, Z = _data(6)
    w = np.random.default_rng(6).dirichlet(np.ones(M))
    wx = np.random.default_rng(7).normal(size=N)
    wx /= np.abs(wx).sum()  # signed weights with sum |w| = 1, as w has
    ref, new = _both(monkeypatch, lambda: (
        mmd(X, Z, kernel=kernel) ** 2, mmd(X, Z, kernel=kernel, weights_x=wx, weights_y=w) ** 2,
        mmd(X, Z, kernel=kernel, unbiased=True), weighted_mean_gram(Z, w, kernel),
        rkhs_distance_squared(X, Z, w, kernel=kernel)))
    # squared MMDs are differences of sums of size <= amplitude * (sum |w|)^2 <= 1: agreement to ~1e-13 absolute
    np.testing.assert_allclose(new, ref, rtol=0, atol=1e-13)


@pytest.mark.slow  # three compilations
def test_many_dimensions_use_the_coordinate_loop(monkeypatch):
    """Beyond engine._UNROLL_DIM coordinates the differences are summed in a loop; same values."""
    rng = np.random.default_rng(8)
    X = rng.normal(size=(700, engine._UNROLL_DIM + 8))
    X[:3] += 40.0  # far points: the Gaussian kernel's tiles with them use coordinate differences
    for kernel in (LaplacianKernel(lengthscale=20.0), MaternKernel(nu=1.5, lengthscale=5.0),
                   GaussianKernel(lengthscale=3.0)):
        ref, new = _both(monkeypatch, lambda kernel=kernel: kernel.triangular_row_sums(X))
        for got, want in zip(new, ref):
            np.testing.assert_allclose(got, want, rtol=RTOL, atol=1e-300)


def test_tiny_lengthscale_and_infinite_scaled_distances_give_zeros_not_nan(monkeypatch):
    monkeypatch.setenv(engine.ENGINE_ENV, "jax")
    X, _ = _data(3)
    for kernel in (GaussianKernel(lengthscale=1e-100), MaternKernel(nu=2.5, lengthscale=1e-100),
                   InverseMultiquadricKernel(lengthscale=1e-100, beta=2.0)):
        lower, upper = kernel.triangular_row_sums(X)
        assert np.all(lower == 0.0) and np.all(upper == 0.0)
        assert kernel.mean_gram(X) == pytest.approx(kernel.amplitude / N, rel=1e-15)


def test_compiled_blocks_are_reused_across_sizes_and_parameters(monkeypatch):
    monkeypatch.setenv(engine.ENGINE_ENV, "jax")
    X, _ = _data(4)
    GaussianKernel(lengthscale=1.0).triangular_row_sums(X)
    fn = engine._compiled("triangle", ("gaussian", None, "fast"))
    before = fn._cache_size()
    GaussianKernel(lengthscale=5.0, amplitude=0.5).triangular_row_sums(X[: N - 100])  # same padded shape
    assert fn._cache_size() == before


def test_the_global_jax_dtype_setting_is_left_alone(monkeypatch):
    import jax

    monkeypatch.setenv(engine.ENGINE_ENV, "jax")
    before = jax.config.read("jax_enable_x64")
    X, Z = _data(5)
    GaussianKernel(lengthscale=1.0).row_means(Z, X)
    assert jax.config.read("jax_enable_x64") == before


def test_which_engine_runs(monkeypatch):
    k = GaussianKernel(lengthscale=1.0)
    monkeypatch.delenv(engine.ENGINE_ENV, raising=False)
    assert engine.engine_mode() == "auto"
    assert not engine.use_engine(k, engine.MIN_PAIRS - 1)
    assert engine.use_engine(k, engine.MIN_PAIRS)
    additive = AdditiveKernel(dim=2, blocks=[[0], [1]])
    assert not engine.use_engine(additive, 10 * engine.MIN_PAIRS)  # subclasses keep their own numpy code
    monkeypatch.setattr(engine, "_jax_available", lambda: False)
    assert not engine.use_engine(k, 10 * engine.MIN_PAIRS)
    monkeypatch.undo()
    monkeypatch.setenv(engine.ENGINE_ENV, "numpy")
    assert not engine.use_engine(k, 10 * engine.MIN_PAIRS)
    monkeypatch.setenv(engine.ENGINE_ENV, "JAX")
    assert engine.use_engine(k, 1)
    monkeypatch.setenv(engine.ENGINE_ENV, "fast")
    with pytest.raises(ValueError, match=r"DPKME_KERNEL_ENGINE='fast'.*numpy"):
        engine.use_engine(k, 1)


def test_importing_dpkme_does_not_import_jax():
    code = "import sys, dpkme, dpkme.kernels, dpkme.metrics, dpkme.reproduce; assert 'jax' not in sys.modules"
    subprocess.run([sys.executable, "-c", code], check=True)


@pytest.mark.parametrize("kernel", [KERNELS[0], KERNELS[2], KERNELS[6]], ids=repr)
def test_lower_sums_of_a_prefix_only(monkeypatch, kernel):
    """``lower_rows``: the lower sums of the first rows (the rest NaN) and every upper sum, as without it.

    On the engine the column tiles beyond the prefix take the fused row-only pass (no kept tile), so this checks
    that path, its masked diagonal tile, and the seam between the two loops (a prefix ending inside a tile).
    """
    X, _ = _data(9)
    ref, new = _both(monkeypatch, lambda: [kernel.triangular_row_sums(X, lower_rows=k)
                                           for k in (None, 0, engine.TILE + 5, N)])
    full_lower, full_upper = ref[0]
    for k, (lower, upper), (ref_lower, ref_upper) in zip((N, 0, engine.TILE + 5, N), new, ref):
        assert np.isnan(lower[k:]).all() and np.isnan(ref_lower[k:]).all()
        np.testing.assert_allclose(lower[:k], full_lower[:k], rtol=RTOL, atol=1e-300)
        np.testing.assert_array_equal(ref_lower[:k], full_lower[:k])
        np.testing.assert_allclose(upper, full_upper, rtol=RTOL, atol=1e-300)
        np.testing.assert_array_equal(ref_upper, full_upper)


def test_mean_gram_takes_the_upper_sums_only(monkeypatch):
    """On the engine, the mean of K_XX is (2 sum(upper) + N a) / N^2 from the row-only pass; same value."""
    X, _ = _data(10)
    kernel = GaussianKernel(lengthscale=2.0, amplitude=0.8)
    calls = []
    original = engine.triangular_sums
    monkeypatch.setattr(engine, "triangular_sums", lambda *a, **kw: calls.append(kw) or original(*a, **kw))
    ref, new = _both(monkeypatch, lambda: kernel.mean_gram(X))
    assert [kw.get("lower_rows") for kw in calls] == [0]
    assert new == pytest.approx(ref, rel=RTOL, abs=0)


@pytest.mark.slow  # four compilations and two Figure 1 runs
def test_fig1_on_the_engine_agrees_with_the_numpy_path(monkeypatch):
    """``reproduce.fig1`` takes the mean of K_XX from the row-only pass and the row means from the engine."""
    from dpkme.reproduce import fig1

    X = 300.0 * np.random.default_rng(11).normal(size=(1500, 5))
    ref, new = _both(monkeypatch, lambda: fig1(X, max_m=300))
    assert new["mean_kxx"] == pytest.approx(ref["mean_kxx"], rel=RTOL, abs=0)
    assert new["basis_dims"] == ref["basis_dims"]
    # distances are square roots of differences of sums of size <= 1: ~1e-13 absolute in the squares
    for key in ("baseline", "projection"):
        np.testing.assert_allclose(np.square(new[key]), np.square(ref[key]), rtol=0, atol=1e-12)
    np.testing.assert_allclose(np.square(new["alg1"]), np.square(ref["alg1"]), rtol=0, atol=1e-12)
