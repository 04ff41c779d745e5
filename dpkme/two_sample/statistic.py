r"""Moments, noise and the Hotelling-type statistics of the analytic two-sample tests.

Paired design (Chwialkowski et al. 2015): rows :math:`z_i = \phi(x_i)-\phi(y_i)`,
mean :math:`w`, second moment :math:`\Lambda = \frac1n\sum z_iz_i^\top`, covariance
:math:`\Sigma_n = \frac{n}{n-1}(\Lambda - ww^\top)` and

.. math:: s_n = n\,w^\top(\Sigma_n + \gamma_n I)^{-1}w \;\xrightarrow{H_0}\; \chi^2_J .

Every statistic here is written as :math:`s = w^\top V^{-1} w` with :math:`V`
an estimate of :math:`\operatorname{Cov}(w)`:

* paired: :math:`V = \Sigma_+/n + (\sigma_w^2 + \gamma/n) I`, where
  :math:`\Sigma_+` is the PSD projection of the (possibly noisy) covariance and
  :math:`\sigma_w` the standard deviation of the Gaussian noise on the mean
  (0 for the non-private test, where :math:`s = s_n`);
* two samples of sizes :math:`n_x, n_y` (unpaired, or held by two parties):
  :math:`V = \Sigma_{x+}/n_x + \Sigma_{y+}/n_y + (\sigma_x^2+\sigma_y^2+\gamma/n_{\rm eff})I`
  with :math:`n_{\rm eff} = n_xn_y/(n_x+n_y)`.

Adding the mean-noise variance to :math:`V` ("noise-aware regularisation") makes
:math:`V` an estimate of the actual covariance of the *noisy* mean. It is public
(a function of n, J, epsilon, delta) and costs nothing; the paper's statistic is the
special case without it (``noise_aware=False`` in :mod:`dpkme.two_sample.private`).
"""

from __future__ import annotations

import numpy as np

from .._validation import check_array

__all__ = [
    "paired_moments",
    "sample_moments",
    "covariance_from_moments",
    "psd_project",
    "symmetric_noise",
    "quadratic_statistic",
    "paired_statistic",
    "two_sample_statistic",
]


def paired_moments(Z) -> tuple[np.ndarray, np.ndarray]:
    r"""Mean :math:`w` and second moment :math:`\Lambda` of the rows of ``Z``.

    .. math:: w = \frac1n\sum_{i=1}^n z_i, \qquad \Lambda = \frac1n\sum_{i=1}^n z_iz_i^\top .

    Also exported as :func:`sample_moments` (the same function applied to one
    sample's feature rows :math:`\phi(x_i)`).

    Parameters
    ----------
    Z : array-like of shape (n, J)
        Finite rows: the paired differences :math:`z_i = \phi(x_i)-\phi(y_i)`, or
        the features :math:`\phi(x_i)` of one sample.

    Returns
    -------
    mean : ndarray of shape (J,)
        :math:`w`.
    second : ndarray of shape (J, J)
        :math:`\Lambda` (the raw second moment, not centred; divided by n, not n-1).

    Examples
    --------
    >>> import numpy as np
    >>> from dpkme.two_sample.statistic import paired_moments
    >>> w, Lam = paired_moments(np.array([[1.0, 0.0], [-1.0, 2.0]]))
    >>> w
    array([0., 1.])
    >>> Lam
    array([[ 1., -1.],
           [-1.,  2.]])
    """
    Z = check_array(Z, name="Z")
    n = Z.shape[0]
    return Z.mean(axis=0), (Z.T @ Z) / n


sample_moments = paired_moments


def covariance_from_moments(mean, second, n: int) -> np.ndarray:
    r"""Unbiased covariance :math:`\frac{n}{n-1}(\Lambda - \mu\mu^\top)` (works on stacks ``(..., J)``).

    Post-processing of the (possibly privatised) mean and second moment; with noisy
    inputs the result need not be PSD (see :func:`psd_project`).

    Parameters
    ----------
    mean : array-like of shape (..., J)
        :math:`\mu`, the mean of the rows.
    second : array-like of shape (..., J, J)
        :math:`\Lambda = \frac1n\sum_i z_iz_i^\top`, the second moment of the same rows.
    n : int
        Number of rows the moments were computed from. For ``n <= 1`` the
        factor :math:`\frac{n}{n-1}` is dropped (the biased covariance is returned).

    Returns
    -------
    ndarray of shape (..., J, J)
        The covariance estimate :math:`\Sigma_n`.

    Examples
    --------
    >>> import numpy as np
    >>> from dpkme.two_sample.statistic import covariance_from_moments, paired_moments
    >>> Z = np.array([[1.0, 0.0], [-1.0, 2.0], [0.0, 1.0]])
    >>> np.allclose(covariance_from_moments(*paired_moments(Z), 3), np.cov(Z.T))
    True
    """
    mean = np.asarray(mean, dtype=float)
    cov = np.asarray(second, dtype=float) - mean[..., :, None] * mean[..., None, :]
    return cov * (n / (n - 1.0)) if n > 1 else cov


def psd_project(M, floor: float = 0.0) -> np.ndarray:
    r"""Symmetrise and clip the eigenvalues of ``M`` (or of a stack of matrices) at ``floor``.

    With :math:`S = (M + M^\top)/2 = U\operatorname{diag}(\lambda)U^\top`, returns
    :math:`U\operatorname{diag}(\max(\lambda, \texttt{floor}))U^\top`: the
    Frobenius-nearest PSD matrix to :math:`M` for ``floor=0``. Works on ``(..., J, J)``.

    Parameters
    ----------
    M : array-like of shape (..., J, J)
        Square matrix or stack of square matrices (e.g. a noisy covariance).
    floor : float, default 0.0
        Lower bound for the eigenvalues of the result.

    Returns
    -------
    ndarray of shape (..., J, J)
        Symmetric matrices with all eigenvalues :math:`\ge` ``floor``.

    Examples
    --------
    >>> import numpy as np
    >>> from dpkme.two_sample.statistic import psd_project
    >>> np.round(psd_project(np.array([[1.0, 0.0], [0.0, -2.0]])), 12) + 0.0
    array([[1., 0.],
           [0., 0.]])
    """
    M = np.asarray(M, dtype=float)
    S = 0.5 * (M + np.swapaxes(M, -1, -2))
    w, U = np.linalg.eigh(S)
    w = np.maximum(w, floor)
    return (U * w[..., None, :]) @ np.swapaxes(U, -1, -2)


def symmetric_noise(J: int, sigma: float, rng: np.random.Generator, size: int | None = None) -> np.ndarray:
    r"""Symmetric Gaussian noise for a Frobenius-sensitivity release of a symmetric matrix.

    Diagonal :math:`\mathcal N(0,\sigma^2)`, off-diagonal :math:`\mathcal N(0,\sigma^2/2)`
    (independent up to symmetry). This is :math:`\sigma` times a standard
    Gaussian vector in the orthonormal coordinates
    :math:`\{E_{ii}\}\cup\{(E_{ij}+E_{ji})/\sqrt2\}_{i<j}` of the symmetric
    matrices with the Frobenius inner product, so adding it is the Gaussian
    mechanism for the Frobenius (L2) sensitivity -- with half the
    off-diagonal variance of noise :math:`\sigma` on every upper-triangular
    entry (Analyze Gauss), which has the same sensitivity bound.

    Parameters
    ----------
    J : int
        Side of the matrix (number of features).
    sigma : float
        Noise scale :math:`\sigma \ge 0` (the Gaussian mechanism's
        :math:`\sigma` for the Frobenius sensitivity of the released matrix).
    rng : numpy.random.Generator
        Source of the noise.
    size : int, optional
        Number of independent noise matrices to draw; ``None`` (default) draws one.

    Returns
    -------
    ndarray of shape (J, J) or (size, J, J)
        Symmetric noise matrix (or stack of them).

    Examples
    --------
    >>> import numpy as np
    >>> from dpkme.two_sample.statistic import symmetric_noise
    >>> E = symmetric_noise(3, 0.5, np.random.default_rng(0), size=2)
    >>> E.shape, bool(np.array_equal(E, np.swapaxes(E, -1, -2)))
    ((2, 3, 3), True)
    """
    shape = (J, J) if size is None else (size, J, J)
    G = rng.standard_normal(shape)
    G = (G + np.swapaxes(G, -1, -2)) * (0.5 * sigma)
    # off-diagonal: sigma^2/4 * 2 = sigma^2/2; diagonal: (2 g)^2 sigma^2/4 = sigma^2
    return G


def quadratic_statistic(w, V) -> np.ndarray:
    r""":math:`w^\top V^{-1}w` for a vector or a stack (``w`` (..., J), ``V`` (..., J, J) positive definite).

    Solved through the eigendecomposition of the symmetrised :math:`V`, whose
    eigenvalues are clipped at the smallest positive float, so stacks and
    near-singular :math:`V` are handled without a Cholesky failure.

    Parameters
    ----------
    w : array-like of shape (..., J)
        Vector (or stack of vectors), e.g. a mean difference.
    V : array-like of shape (..., J, J)
        Symmetric positive definite matrix (or stack), e.g. an estimate of
        :math:`\operatorname{Cov}(w)`; broadcast against ``w``'s leading dimensions.

    Returns
    -------
    ndarray of shape (...)
        The quadratic form (a 0-d array for a single vector).

    Examples
    --------
    >>> import numpy as np
    >>> from dpkme.two_sample.statistic import quadratic_statistic
    >>> float(quadratic_statistic(np.array([1.0, 2.0]), np.diag([1.0, 4.0])))
    2.0
    """
    w = np.asarray(w, dtype=float)
    V = np.asarray(V, dtype=float)
    # Cholesky-free symmetric solve through eigh keeps stacks and near-singular V stable.
    lam, U = np.linalg.eigh(0.5 * (V + np.swapaxes(V, -1, -2)))
    lam = np.maximum(lam, np.finfo(float).tiny)
    proj = np.einsum("...ji,...j->...i", U, w)
    return np.einsum("...i,...i->...", proj * proj, 1.0 / lam)


def paired_statistic(mean, second, n: int, *, mean_noise_var: float = 0.0, gamma: float) -> np.ndarray:
    r"""Paired statistic :math:`w^\top(\Sigma_+/n + (\sigma_w^2+\gamma/n)I)^{-1}w` (vectorised over stacks).

    ``mean`` (..., J) and ``second`` (..., J, J) are the (noisy) mean and second
    moment; the covariance is :func:`covariance_from_moments` projected to PSD.
    With ``mean_noise_var=0`` and exact moments this is the statistic of
    Chwialkowski et al. (2015) with :math:`\gamma_n = \gamma`, since
    :math:`s_n = n\,w^\top(\Sigma_n+\gamma I)^{-1}w = w^\top(\Sigma_n/n+\gamma I/n)^{-1}w`
    (when :math:`\Sigma_n` is already PSD).

    Parameters
    ----------
    mean : array-like of shape (..., J)
        :math:`w`, the (noisy) mean of the paired differences.
    second : array-like of shape (..., J, J)
        :math:`\Lambda`, the (noisy) second moment of the paired differences.
    n : int
        Number of pairs (public).
    mean_noise_var : float, default 0.0
        :math:`\sigma_w^2`, the per-coordinate variance of the Gaussian noise on
        ``mean`` (noise-aware regularisation); 0 for the paper's statistic and the
        non-private test.
    gamma : float
        Regularisation :math:`\gamma \ge 0`: :math:`\gamma/n` is added to the
        diagonal of :math:`V`.

    Returns
    -------
    ndarray of shape (...)
        The statistic :math:`s = w^\top V^{-1}w`, under :math:`H_0` approximately
        :math:`\chi^2_J` for the non-private test.

    Examples
    --------
    >>> import numpy as np
    >>> from dpkme.two_sample.statistic import paired_moments, paired_statistic
    >>> Z = np.random.default_rng(0).normal(size=(500, 3))
    >>> s = paired_statistic(*paired_moments(Z), 500, gamma=1e-5)
    >>> s.shape, bool(0.0 <= s < 20.0)
    ((), True)
    """
    mean = np.asarray(mean, dtype=float)
    J = mean.shape[-1]
    cov = psd_project(covariance_from_moments(mean, second, n))
    V = cov / n + (mean_noise_var + gamma / n) * np.eye(J)
    return quadratic_statistic(mean, V)


def two_sample_statistic(mean_x, second_x, n_x: int, mean_y, second_y, n_y: int, *,
                         mean_noise_var: float = 0.0, gamma: float) -> np.ndarray:
    r"""Two-sample statistic :math:`w^\top(\Sigma_{x+}/n_x+\Sigma_{y+}/n_y+(\sigma^2+\gamma/n_{\rm eff})I)^{-1}w`.

    :math:`w = \mu_x-\mu_y`; ``mean_noise_var`` is :math:`\sigma_x^2+\sigma_y^2`.
    Vectorised over leading stack dimensions.

    Parameters
    ----------
    mean_x, mean_y : array-like of shape (..., J)
        :math:`\mu_x, \mu_y`, the (noisy) feature means of the two samples.
    second_x, second_y : array-like of shape (..., J, J)
        The (noisy) feature second moments :math:`\frac1{n_x}\sum_i\phi(x_i)\phi(x_i)^\top`
        and its Y counterpart.
    n_x, n_y : int
        Sample sizes (public); :math:`n_{\rm eff} = n_xn_y/(n_x+n_y)`.
    mean_noise_var : float, default 0.0
        :math:`\sigma_x^2+\sigma_y^2`, the summed per-coordinate variances of the
        Gaussian noise on the two means (noise-aware regularisation); 0 without it.
    gamma : float
        Regularisation :math:`\gamma \ge 0`: :math:`\gamma/n_{\rm eff}` is added to
        the diagonal of :math:`V`.

    Returns
    -------
    ndarray of shape (...)
        The statistic :math:`s = w^\top V^{-1}w`.

    Examples
    --------
    >>> import numpy as np
    >>> from dpkme.two_sample.statistic import sample_moments, two_sample_statistic
    >>> rng = np.random.default_rng(0)
    >>> mx, Sx = sample_moments(rng.normal(size=(400, 2)))
    >>> my, Sy = sample_moments(rng.normal(size=(300, 2)) + 1.0)
    >>> bool(two_sample_statistic(mx, Sx, 400, my, Sy, 300, gamma=1e-5) > 100.0)   # shifted means
    True
    """
    mean_x = np.asarray(mean_x, dtype=float)
    mean_y = np.asarray(mean_y, dtype=float)
    J = mean_x.shape[-1]
    n_eff = n_x * n_y / (n_x + n_y)
    cx = psd_project(covariance_from_moments(mean_x, second_x, n_x))
    cy = psd_project(covariance_from_moments(mean_y, second_y, n_y))
    V = cx / n_x + cy / n_y + (mean_noise_var + gamma / n_eff) * np.eye(J)
    return quadratic_statistic(mean_x - mean_y, V)


def _sqrt_psd(M: np.ndarray) -> np.ndarray:
    """A square root L with L L^T = M for a PSD matrix (or stack), via eigh."""
    w, U = np.linalg.eigh(0.5 * (M + np.swapaxes(M, -1, -2)))
    return U * np.sqrt(np.maximum(w, 0.0))[..., None, :]
