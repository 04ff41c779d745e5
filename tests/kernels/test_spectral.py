"""dpkme.kernels.spectral: Gaussian-kernel sums through the spectrum (trapezoidal rule + characteristic function).

References are independent: the closed form e^{-a^2/2} for the rule, and brute-force pairwise sums
(scipy's cdist) for the kernel sums. Tolerances: the quadrature bound is 1e-17 per kernel value, so the
comparisons are at float64 rounding level (1e-14 relative for means of ~10^7 terms, 1e-15 absolute for
row means of values <= 1).
"""

import math

import numpy as np
import pytest
from scipy.spatial.distance import cdist

from dpkme.kernels.kernel import GaussianKernel, Kernel
from dpkme.kernels.spectral import (
    MAX_NODES_PER_AXIS,
    TOL,
    spectral_mean_gram,
    spectral_order,
    spectral_row_means,
    trapezoid_rule,
)


def _brute_mean(X, ls):
    return float(np.exp(-cdist(X, X, "sqeuclidean") / (2 * ls**2)).mean())


@pytest.mark.parametrize("a_max,dim", [(0.0, 1), (1.0, 1), (8.8, 2), (25.0, 2), (60.0, 1)])
def test_rule_error_bound_holds_on_a_dense_grid(a_max, dim):
    rule = trapezoid_rule(a_max, dim)
    assert rule.error_bound <= TOL
    k = np.arange(-rule.half_width, rule.half_width + 1)
    a = np.linspace(-a_max, a_max, 4001)
    approx = (rule.weights[None, :] * np.cos(np.outer(a, k * rule.step))).sum(axis=1)
    # the quadrature error itself is <= 1e-17; what is left is float64 rounding of the sum of ~50-300 terms
    assert np.max(np.abs(approx - np.exp(-a**2 / 2))) <= 2e-15


def test_rule_grows_with_the_spread_and_refuses_bad_input():
    n = [trapezoid_rule(a, 2).n_nodes for a in (1, 5, 10, 20)]
    assert n == sorted(n) and n[0] >= 3
    with pytest.raises(ValueError, match="a_max"):
        trapezoid_rule(-1.0, 1)
    with pytest.raises(ValueError, match="a_max"):
        trapezoid_rule(math.inf, 1)
    with pytest.raises(ValueError, match="tol"):
        trapezoid_rule(1.0, 1, tol=0.0)


@pytest.mark.parametrize("dim,scale,ls", [(1, 3.0, 1.0), (1, 0.01, 1.0), (2, 1.0, 0.7), (2, 150.0, 100.0)])
def test_mean_gram_matches_brute_force(dim, scale, ls):
    rng = np.random.default_rng(dim)
    X = rng.normal(size=(2500, dim)) * scale + 40.0 * scale      # off-centre data
    assert spectral_mean_gram(X, lengthscale=ls) == pytest.approx(_brute_mean(X, ls), rel=1e-14)


@pytest.mark.parametrize("dim", [1, 2])
def test_row_means_match_brute_force(dim):
    rng = np.random.default_rng(10 + dim)
    X = rng.normal(size=(3000, dim)) * 2.0
    Z = rng.uniform(-6, 6, size=(700, dim))                          # points outside the data too
    ref = np.exp(-cdist(Z, X, "sqeuclidean") / 2.0).mean(axis=1)
    assert np.max(np.abs(spectral_row_means(Z, X, lengthscale=1.0) - ref)) <= 1e-15


def test_gaussian_kernel_dispatches_to_the_spectral_sums_and_agrees_with_the_direct_ones():
    rng = np.random.default_rng(3)
    X = np.vstack([rng.normal(size=(15000, 2)), rng.normal(size=(15000, 2)) * 0.5 + 4.0])
    k = GaussianKernel(lengthscale=0.8, amplitude=0.9)
    assert k.spectral_sums_available(X) and k.spectral_sums_available(X[:3000], X)
    direct = Kernel.mean_gram(k, X)                               # the base class: blocked pairwise sums
    assert k.mean_gram(X) == pytest.approx(direct, rel=1e-13)
    assert np.max(np.abs(k.row_means(X[:3000], X) - Kernel.row_means(k, X[:3000], X))) <= 1e-15
    # not for small problems, 3-D data or other kernels
    assert not k.spectral_sums_available(X[:100])
    assert not k.spectral_sums_available(rng.normal(size=(30000, 3)))
    from dpkme.kernels.kernel import LaplacianKernel
    assert not LaplacianKernel(lengthscale=1.0).spectral_sums_available(X)


def test_spectral_order_and_refusals():
    rng = np.random.default_rng(0)
    X = rng.normal(size=(10000, 2))
    assert spectral_order(2, 1.0, X) is not None
    assert spectral_order(2, 1.0, X[:10]) is None                  # too few pairs: the direct sums are fast
    assert spectral_order(3, 1.0, rng.normal(size=(10000, 3))) is None
    wide = X * 1000.0                                              # thousands of length scales: too many nodes
    assert spectral_order(2, 1.0, wide) is None
    with pytest.raises(ValueError, match="length scales"):
        spectral_mean_gram(wide, lengthscale=1.0)
    with pytest.raises(ValueError, match="1-D or 2-D"):
        spectral_mean_gram(rng.normal(size=(10, 3)), lengthscale=1.0)
    with pytest.raises(ValueError):
        spectral_mean_gram(np.array([[np.nan, 0.0]]), lengthscale=1.0)
    with pytest.raises(ValueError, match="lengthscale"):
        spectral_row_means(X[:5], X, lengthscale=-1.0)
    assert trapezoid_rule(0.5, 2).n_nodes <= MAX_NODES_PER_AXIS
