"""RKHS distance and MMD against brute-force Gram-matrix formulas."""

import math

import numpy as np
import pytest
from sklearn.metrics.pairwise import rbf_kernel

from dpkme.kernels.kernel import GaussianKernel, LaplacianKernel
from dpkme.metrics import mmd, rkhs_distance, rkhs_distance_squared, uniform_weights, weighted_mean_gram

RNG = np.random.default_rng(3)
K = GaussianKernel(gamma=0.3)


def brute(X, Z, w, gamma):
    return math.sqrt(max(rbf_kernel(X, X, gamma=gamma).mean() - 2 * w @ rbf_kernel(Z, X, gamma=gamma).mean(1)
                         + w @ rbf_kernel(Z, Z, gamma=gamma) @ w, 0.0))


def test_rkhs_distance_matches_brute_force():
    X = RNG.normal(size=(700, 3))
    Z = RNG.normal(size=(40, 3))
    w = RNG.normal(size=40) / 40
    assert rkhs_distance(X, Z, w, kernel=K) == pytest.approx(brute(X, Z, w, 0.3), rel=1e-10)
    # precomputed pieces give the same value
    kxx, kbar = K.mean_gram(X), K.row_means(Z, X)
    assert rkhs_distance(X, Z, w, kernel=K, mean_kxx=kxx, row_means=kbar) == pytest.approx(brute(X, Z, w, 0.3),
                                                                                           rel=1e-10)


def test_distance_of_the_private_points_themselves_is_zero():
    X = RNG.normal(size=(200, 2))
    assert rkhs_distance(X, X, uniform_weights(200), kernel=K) < 1e-7
    assert rkhs_distance_squared(X, X, uniform_weights(200), kernel=K) >= 0.0  # clamped


def test_weighted_mean_gram_blocked_equals_dense():
    Z = RNG.normal(size=(3000, 2))
    w = RNG.random(3000)
    assert weighted_mean_gram(Z, w, K) == pytest.approx(w @ rbf_kernel(Z, gamma=0.3) @ w, rel=1e-11)


def test_mmd_biased_and_unbiased_against_formulas():
    X = RNG.normal(size=(300, 2))
    Y = RNG.normal(size=(200, 2)) + 0.5
    kxx, kyy, kxy = (rbf_kernel(A, B, gamma=0.3) for A, B in ((X, X), (Y, Y), (X, Y)))
    biased = math.sqrt(kxx.mean() + kyy.mean() - 2 * kxy.mean())
    assert mmd(X, Y, kernel=K) == pytest.approx(biased, rel=1e-10)
    n, m = len(X), len(Y)
    unbiased = ((kxx.sum() - n) / (n * (n - 1)) + (kyy.sum() - m) / (m * (m - 1)) - 2 * kxy.mean())
    assert mmd(X, Y, kernel=K, unbiased=True) == pytest.approx(unbiased, rel=1e-9)
    # weighted samples: a release versus held-out data
    wx = RNG.random(300)
    wx /= wx.sum()
    weighted = math.sqrt(wx @ kxx @ wx + kyy.mean() - 2 * wx @ kxy.mean(1))
    assert mmd(X, Y, kernel=K, weights_x=wx) == pytest.approx(weighted, rel=1e-10)


def test_unbiased_mmd_is_unbiased_under_the_null():
    # E[MMD_u^2] = 0 when both samples come from the same law; the mean of 200
    # independent estimates is within 4 standard errors of 0 (false-failure ~6e-5).
    k = LaplacianKernel(lengthscale=1.0)
    vals = np.array([mmd(RNG.normal(size=(60, 2)), RNG.normal(size=(50, 2)), kernel=k, unbiased=True)
                     for _ in range(200)])
    assert abs(vals.mean()) < 4 * vals.std(ddof=1) / math.sqrt(len(vals))


def test_bad_input():
    X = RNG.normal(size=(10, 2))
    with pytest.raises(ValueError, match="length 3 but 10 points"):
        rkhs_distance(X, X, np.ones(3), kernel=K)
    with pytest.raises(ValueError, match="unweighted"):
        mmd(X, X, kernel=K, unbiased=True, weights_x=np.ones(10))
    with pytest.raises(ValueError, match="at least 2"):
        mmd(X[:1], X, kernel=K, unbiased=True)
    with pytest.raises(ValueError, match="3 column"):
        mmd(X, np.zeros((4, 3)), kernel=K)


@pytest.mark.parametrize("w", [[1e308, 1e308], [1e308, -1e308], [1.7e308, 1.7e308], [1e151, 0.0]])
def test_weights_whose_sums_would_overflow_are_refused(w):
    """Found by the property tests: ±1e308 weights gave an overflow warning, or a distance of 0 (inf - inf)."""
    from dpkme.kernels.kernel import GaussianKernel

    X, Y = np.zeros((3, 2)), np.ones((2, 2))
    with pytest.raises(ValueError, match="weights are too large"):
        rkhs_distance(X, Y, np.array(w), kernel=GaussianKernel(lengthscale=1.0))
