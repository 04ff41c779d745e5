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
    """Mean :math:`w` and second moment :math:`\\Lambda` of the rows of ``Z`` (n, J)."""
    Z = check_array(Z, name="Z")
    n = Z.shape[0]
    return Z.mean(axis=0), (Z.T @ Z) / n


sample_moments = paired_moments


def covariance_from_moments(mean, second, n: int) -> np.ndarray:
    r"""Unbiased covariance :math:`\frac{n}{n-1}(\Lambda - \mu\mu^\top)` (works on stacks ``(..., J)``)."""
    mean = np.asarray(mean, dtype=float)
    cov = np.asarray(second, dtype=float) - mean[..., :, None] * mean[..., None, :]
    return cov * (n / (n - 1.0)) if n > 1 else cov


def psd_project(M, floor: float = 0.0) -> np.ndarray:
    """Symmetrise and clip the eigenvalues of ``M`` (or of a stack of matrices) at ``floor``.

    The Frobenius-nearest PSD matrix for ``floor=0``. Works on ``(..., J, J)``.
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
    """
    shape = (J, J) if size is None else (size, J, J)
    G = rng.standard_normal(shape)
    G = (G + np.swapaxes(G, -1, -2)) * (0.5 * sigma)
    # off-diagonal: sigma^2/4 * 2 = sigma^2/2; diagonal: (2 g)^2 sigma^2/4 = sigma^2
    return G


def quadratic_statistic(w, V) -> np.ndarray:
    r""":math:`w^\top V^{-1}w` for a vector or a stack (``w`` (..., J), ``V`` (..., J, J) positive definite)."""
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
