"""Random Fourier features: exact unit norm, convergence to the kernel, streamed mean."""

import tracemalloc

import numpy as np
import pytest

from dpkme.kernels.kernel import GaussianKernel, InverseMultiquadricKernel, LaplacianKernel, MaternKernel
from dpkme.kernels.random_features import CosineBiasFeatures, RandomFourierFeatures

RNG = np.random.default_rng(11)
KERNELS = [
    GaussianKernel(lengthscale=1.0),
    GaussianKernel(lengthscale=2.0, amplitude=0.3),
    LaplacianKernel(lengthscale=1.0),
    MaternKernel(nu=0.5, lengthscale=1.0),
    MaternKernel(nu=1.5, lengthscale=1.0),
    MaternKernel(nu=2.5, lengthscale=1.0),
    InverseMultiquadricKernel(lengthscale=1.0),
]


@pytest.mark.parametrize("kernel", KERNELS, ids=repr)
@pytest.mark.parametrize("dtype", ["float32", "float64"])
def test_feature_norm_is_exactly_sqrt_amplitude_everywhere(kernel, dtype):
    f = RandomFourierFeatures(kernel, n_components=512, random_state=0, dtype=dtype).fit(3)
    # near the data, far away, and at huge coordinates where float32 arguments are coarse
    X = np.vstack([RNG.normal(size=(200, 3)), RNG.normal(size=(200, 3)) * 1e3, RNG.normal(size=(50, 3)) * 1e7])
    norms = np.linalg.norm(f.transform(X), axis=1)
    np.testing.assert_allclose(norms, np.sqrt(kernel.amplitude), rtol=1e-13)
    assert norms.max() <= f.norm_bound <= 1.0 + 1e-11


@pytest.mark.parametrize("kernel", KERNELS, ids=repr)
def test_random_feature_kernel_converges_to_exact_kernel(kernel):
    X = RNG.normal(size=(60, 2))
    K = kernel(X)
    errors = []
    for J in (200, 2_000, 20_000):
        f = RandomFourierFeatures(kernel, n_components=J, random_state=3, dtype="float64").fit(2)
        errors.append(np.abs(f.kernel_approximation(X) - K).mean())
    # the error scales like J^{-1/2}: a factor ~10 over a 100x range of J; require 4
    assert errors[2] < errors[1] < errors[0]
    assert errors[2] < errors[0] / 4
    assert errors[2] < 0.02 * kernel.amplitude


def test_streamed_mean_equals_dense_mean_and_float32_is_accurate():
    k = GaussianKernel(lengthscale=3.0)
    X = RNG.normal(size=(5000, 4)) * 5
    f64 = RandomFourierFeatures(k, n_components=1000, random_state=5, dtype="float64").fit(4)
    f32 = RandomFourierFeatures(k, n_components=1000, random_state=5, dtype="float32").fit(4)
    dense = f64.transform(X).mean(axis=0)
    np.testing.assert_allclose(f64.mean_embedding(X), dense, rtol=0, atol=1e-15)
    # float32 trigonometry: ~1e-7 per feature, far below any privacy noise
    np.testing.assert_allclose(f32.mean_embedding(X), dense, rtol=0, atol=2e-7)
    assert np.array_equal(f32.frequencies_, f64.frequencies_)


def test_mean_embedding_memory_is_bounded():
    # N x J would be 200 000 x 2 000 x 8 B = 3.2 GB
    k = GaussianKernel(lengthscale=1.0)
    f = RandomFourierFeatures(k, n_components=2000, random_state=1).fit(2)
    X = RNG.normal(size=(200_000, 2))
    tracemalloc.start()
    try:
        f.mean_embedding(X)
        _, peak = tracemalloc.get_traced_memory()
    finally:
        tracemalloc.stop()
    assert peak < 100e6, f"peak {peak / 1e6:.0f} MB"


def test_seeded_frequencies_replay():
    k = GaussianKernel(lengthscale=1.0)
    a = RandomFourierFeatures(k, n_components=10, random_state=42).fit(2)
    b = RandomFourierFeatures(k, n_components=10, random_state=42).fit(2)
    assert a.seed_ == 42 and np.array_equal(a.frequencies_, b.frequencies_)
    c = RandomFourierFeatures(k, n_components=10).fit(2)
    assert isinstance(c.seed_, int)  # an OS-entropy seed is recorded for replay


def test_common_cosine_map_violates_the_norm_bound():
    # The sqrt(2/J) cos(wx + b) map has |phi(x)|^2 = (2/J) sum cos^2 in [0, 2]:
    # with few features some x exceed norm 1 noticeably — Proposition 9 fails for it.
    f = CosineBiasFeatures(GaussianKernel(lengthscale=1.0), n_components=8, random_state=0).fit(1)
    norms = np.linalg.norm(f.transform(np.linspace(-50, 50, 20001)[:, None]), axis=1)
    assert norms.max() > 1.2


def test_bad_input():
    k = GaussianKernel(lengthscale=1.0)
    with pytest.raises(ValueError, match="even"):
        RandomFourierFeatures(k, n_components=11)
    with pytest.raises(ValueError, match="must not depend on data"):
        RandomFourierFeatures(k, n_components=10).fit(np.zeros((5, 2)))
    with pytest.raises(ValueError, match="not fitted"):
        RandomFourierFeatures(k, n_components=10).transform(np.zeros((5, 2)))
    f = RandomFourierFeatures(k, n_components=10, random_state=0).fit(2)
    with pytest.raises(ValueError, match="3 column"):
        f.mean_embedding(np.zeros((5, 3)))
    with pytest.raises(ValueError, match="inf"):
        f.mean_embedding(np.array([[0.0, np.inf]]))
    with pytest.raises(ValueError, match="dpkme Kernel"):
        RandomFourierFeatures("gaussian")
