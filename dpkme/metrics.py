r"""Exact RKHS distances and MMD, always under the exact kernel.

The accuracy of a release :math:`\sum_m w_m k(z_m,\cdot)` is its RKHS distance
to the private empirical KME (Balog et al. 2018, Appendix B.1):

.. math::
    \Delta^2 = \Bigl\|\frac1N\sum_n k(x_n,\cdot) - \sum_m w_m k(z_m,\cdot)\Bigr\|_{\mathcal H}^2
    = \overline{K_{XX}} - 2 w^\top \bar k + w^\top K_{ZZ} w,

with :math:`\bar k_m = \frac1N\sum_n k(z_m, x_n)`. Every term is computed
blocked (memory :math:`O(N + M^2)`), so :math:`N = 10^6` is feasible; the
:math:`O(N^2)` term :math:`\overline{K_{XX}}` can be passed in when it is
reused across many releases. These functions read the private data: they are
for evaluation, never part of a release.
"""

from __future__ import annotations

import math

import numpy as np

from ._validation import check_array, check_weights
from .kernels.kernel import Kernel

__all__ = ["rkhs_distance", "rkhs_distance_squared", "mmd", "uniform_weights", "weighted_mean_gram"]


def uniform_weights(m: int) -> np.ndarray:
    r"""Weights :math:`1/M` (the paper's baseline).

    Parameters
    ----------
    m : int
        Number of points :math:`M \ge 1`.

    Returns
    -------
    ndarray (M,), float64
        Every entry :math:`1/M`: the empirical KME of the points themselves.

    Examples
    --------
    >>> uniform_weights(4)
    array([0.25, 0.25, 0.25, 0.25])
    """
    return np.full(int(m), 1.0 / int(m))


def weighted_mean_gram(points: np.ndarray, weights: np.ndarray, kernel: Kernel) -> float:
    r""":math:`w^\top K_{ZZ} w`, blocked over rows of ``Z``.

    This is :math:`\|\sum_m w_m k(z_m, \cdot)\|_{\mathcal H}^2`, the squared
    RKHS norm of a weighted embedding; memory :math:`O(M)` plus blocks of about
    :math:`4\times10^6` kernel values.

    Parameters
    ----------
    points : array (M, D)
        The points :math:`z_m`.
    weights : array (M,)
        The weights :math:`w_m` (any real values, see
        :func:`dpkme._validation.check_weights`).
    kernel : Kernel
        Kernel of the RKHS.

    Returns
    -------
    float
        :math:`\sum_{m, m'} w_m w_{m'} k(z_m, z_{m'}) \ge 0` (up to rounding).

    Examples
    --------
    >>> import numpy as np
    >>> from dpkme.kernels import GaussianKernel
    >>> weighted_mean_gram(np.zeros((2, 1)), np.array([0.5, 0.5]), GaussianKernel(lengthscale=1.0))
    1.0
    """
    points = check_array(points, name="points")
    weights = check_weights(weights, n=points.shape[0])
    fused = _fused_weighted_sum(points, weights, points, weights, kernel)
    if fused is not None:
        return fused
    m = points.shape[0]
    step = max(1, (1 << 22) // max(1, m))
    total = 0.0
    for i in range(0, m, step):
        total += float(weights[i:i + step] @ (kernel.cross(points[i:i + step], points) @ weights))
    return total


def rkhs_distance_squared(
    X, points, weights, *, kernel: Kernel, mean_kxx: float | None = None, row_means: np.ndarray | None = None
) -> float:
    r"""Squared RKHS distance :math:`\|\hat\mu_X - \sum_m w_m k(z_m,\cdot)\|^2` (clamped at 0).

    Parameters
    ----------
    X : array (N, D)
        Private data (evaluation only).
    points, weights : arrays (M, D), (M,)
        The weighted synthetic points.
    kernel : Kernel
    mean_kxx : float, optional
        Precomputed :math:`\overline{K_{XX}}` (:meth:`Kernel.mean_gram`).
    row_means : array (M,), optional
        Precomputed :math:`\bar k` (:meth:`Kernel.row_means`).

    Returns
    -------
    float
        :math:`\overline{K_{XX}} - 2 w^\top \bar k + w^\top K_{ZZ} w`, clamped at 0.
    """
    X = check_array(X, name="X")
    points = check_array(points, name="points", n_features=X.shape[1])
    weights = check_weights(weights, n=points.shape[0])
    kxx = kernel.mean_gram(X) if mean_kxx is None else float(mean_kxx)
    kbar = kernel.row_means(points, X) if row_means is None else np.asarray(row_means, dtype=float)
    value = kxx - 2.0 * float(weights @ kbar) + weighted_mean_gram(points, weights, kernel)
    return max(value, 0.0)


def rkhs_distance(X, points, weights, *, kernel: Kernel, mean_kxx: float | None = None,
                  row_means: np.ndarray | None = None) -> float:
    r"""RKHS distance between the private empirical KME and a weighted point set.

    The square root of :func:`rkhs_distance_squared`: the accuracy measure of
    Balog et al. (2018, Appendix B.1),
    :math:`\|\frac1N\sum_n k(x_n, \cdot) - \sum_m w_m k(z_m, \cdot)\|_{\mathcal H}`.
    Cancellation in the three terms limits the absolute accuracy to about
    :math:`\sqrt{\epsilon_\text{mach}} \approx 10^{-8}` near 0.

    Parameters
    ----------
    X : array (N, D)
        Private data (evaluation only).
    points : array (M, D)
        The synthetic points :math:`z_m`, with the columns of ``X``.
    weights : array (M,)
        Their weights :math:`w_m` (any real values; :func:`uniform_weights`
        for an unweighted set).
    kernel : Kernel
        The exact kernel (not a random-feature approximation).
    mean_kxx : float, optional
        Precomputed :math:`\overline{K_{XX}}` (:meth:`Kernel.mean_gram`); saves
        the :math:`O(N^2)` term when many releases are evaluated against ``X``.
    row_means : array (M,), optional
        Precomputed :math:`\bar k_m = \frac1N\sum_n k(z_m, x_n)` (:meth:`Kernel.row_means`).

    Returns
    -------
    float
        The distance, :math:`\ge 0`, in the units of the RKHS norm (at most
        :math:`\sqrt a (1 + \sum_m |w_m|)` for :math:`k(x, x) = a`).

    Examples
    --------
    An empty release (zero weights) is at distance :math:`\|\hat\mu_X\| = \sqrt{\overline{K_{XX}}}`:

    >>> import numpy as np
    >>> from dpkme.kernels import GaussianKernel
    >>> k = GaussianKernel(lengthscale=1.0)
    >>> X = np.random.default_rng(0).normal(size=(100, 2))
    >>> d = rkhs_distance(X, np.zeros((1, 2)), [0.0], kernel=k)
    >>> bool(abs(d - np.sqrt(k.mean_gram(X))) < 1e-12)
    True
    """
    return math.sqrt(rkhs_distance_squared(X, points, weights, kernel=kernel, mean_kxx=mean_kxx, row_means=row_means))


def mmd(X, Y, *, kernel: Kernel, unbiased: bool = False, weights_x=None, weights_y=None) -> float:
    r"""Maximum mean discrepancy between two (optionally weighted) samples.

    Biased (V-statistic): :math:`\|\hat\mu_X - \hat\mu_Y\|_{\mathcal H}` with the
    given weights (uniform by default); may use weighted releases as either side.

    Unbiased (U-statistic, Gretton et al. 2012, eq. 3), unweighted samples only:

    .. math::
        \widehat{\mathrm{MMD}}_u^2 = \frac{1}{n(n-1)}\sum_{i\ne j}k(x_i,x_j)
        + \frac{1}{m(m-1)}\sum_{i\ne j}k(y_i,y_j) - \frac{2}{nm}\sum_{i,j}k(x_i,y_j),

    returned as the (possibly negative) squared value, since its square root
    is undefined when negative.

    Parameters
    ----------
    X : array (N, D)
        First sample (or the points of a weighted release).
    Y : array (M, D)
        Second sample, with the columns of ``X``.
    kernel : Kernel
        Kernel of the RKHS the embeddings live in.
    unbiased : bool, default=False
        Return the unbiased estimate :math:`\widehat{\mathrm{MMD}}_u^2` (a squared
        value, possibly negative) instead of the biased distance. Needs at least
        2 points per sample and no weights.
    weights_x : array (N,), optional
        Weights of the rows of ``X`` in the biased statistic; default :math:`1/N`.
    weights_y : array (M,), optional
        Weights of the rows of ``Y`` in the biased statistic; default :math:`1/M`.

    Returns
    -------
    float
        Biased: :math:`\|\sum_i w^x_i k(x_i, \cdot) - \sum_j w^y_j k(y_j, \cdot)\|_{\mathcal H} \ge 0`.
        Unbiased: :math:`\widehat{\mathrm{MMD}}_u^2`.

    Raises
    ------
    ValueError
        On invalid arrays or weights, weights with ``unbiased=True``, or fewer
        than 2 points per sample for the unbiased statistic.

    Examples
    --------
    >>> import numpy as np
    >>> from dpkme.kernels import GaussianKernel
    >>> k = GaussianKernel(lengthscale=1.0)
    >>> rng = np.random.default_rng(0)
    >>> X, Y = rng.normal(size=(100, 2)), rng.normal(size=(100, 2))
    >>> bool(mmd(X, Y + 3.0, kernel=k) > mmd(X, Y, kernel=k))
    True
    >>> bool(mmd(X, Y + 3.0, kernel=k, unbiased=True) > 0.5)
    True
    """
    X = check_array(X, name="X")
    Y = check_array(Y, name="Y", n_features=X.shape[1])
    n, m = X.shape[0], Y.shape[0]
    if unbiased:
        if weights_x is not None or weights_y is not None:
            raise ValueError("the unbiased MMD is defined for unweighted samples only; use unbiased=False.")
        if n < 2 or m < 2:
            raise ValueError(f"the unbiased MMD needs at least 2 points per sample, got {n} and {m}.")
        sxx = kernel.row_sums_symmetric(X).sum() - n * kernel.diag_value
        syy = kernel.row_sums_symmetric(Y).sum() - m * kernel.diag_value
        sxy = kernel.row_means(X, Y).sum() * m
        return float(sxx / (n * (n - 1)) + syy / (m * (m - 1)) - 2.0 * sxy / (n * m))
    wx = uniform_weights(n) if weights_x is None else check_weights(weights_x, n=n, name="weights_x")
    wy = uniform_weights(m) if weights_y is None else check_weights(weights_y, n=m, name="weights_y")
    xx = kernel.mean_gram(X) if weights_x is None and n > 4096 else weighted_mean_gram(X, wx, kernel)
    yy = kernel.mean_gram(Y) if weights_y is None and m > 4096 else weighted_mean_gram(Y, wy, kernel)
    xy = _weighted_cross(X, wx, Y, wy, kernel)
    return math.sqrt(max(xx + yy - 2.0 * xy, 0.0))


def _fused_weighted_sum(A, wa, B, wb, kernel) -> float | None:
    r""":math:`w_a^\top K_{AB} w_b` on the fused engine (:mod:`dpkme.kernels.engine`), or None where it does not run."""
    from .kernels import engine
    from .kernels.kernel import _robust_center, check_magnitude

    if not engine.use_engine(kernel, A.shape[0] * B.shape[0]):
        return None
    sums = engine.row_sums(kernel, A, check_magnitude(B, "the points"), center=_robust_center(A), weights=wb)
    return float(wa @ sums)


def _weighted_cross(X, wx, Y, wy, kernel) -> float:
    fused = _fused_weighted_sum(X, wx, Y, wy, kernel)
    if fused is not None:
        return fused
    step = max(1, (1 << 22) // max(1, Y.shape[0]))
    total = 0.0
    for i in range(0, X.shape[0], step):
        total += float(wx[i:i + step] @ (kernel.cross(X[i:i + step], Y) @ wy))
    return total
