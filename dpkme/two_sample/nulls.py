r"""Null distributions of the (private) two-sample statistics.

Three nulls are offered; all but the first use only released (privatised) quantities and public
constants, so computing them is post-processing and costs no privacy.

``"chi2"`` -- asymptotic :math:`\chi^2_J`
    Correct for the non-private test. On a private statistic it ignores the noise and inflates the
    type-I error (kept as a contrast for the lab).

``"weighted-chi2"`` -- the paper's null
    Given the released covariance, :math:`w` is approximately
    :math:`\mathcal N(0, C)` with :math:`C = \Sigma/n + \sigma_w^2 I` under :math:`H_0`, so
    :math:`s = w^\top V^{-1}w \approx \sum_k\lambda_k\chi^2_{1,k}` with :math:`\lambda` the
    eigenvalues of :math:`V^{-1/2}\hat CV^{-1/2}` and :math:`\hat C` the plug-in of C from the
    noisy covariance. It treats the noisy covariance as exact.

``"bootstrap"`` -- parametric bootstrap (default)
    Re-runs the whole pipeline under :math:`H_0` many times: data moments drawn from a Gaussian
    model with the plug-in covariance :math:`\hat\Sigma` (mean :math:`\bar z^*\sim\mathcal
    N(0,\hat\Sigma/n)`, scatter :math:`S^*\sim W_J(\hat\Sigma, n-1)` independent of it, second
    moment :math:`S^*/n+\bar z^*\bar z^{*\top}`), then **both** noises (mean and second moment, at
    the released standard deviations), then the same PSD projection and regularisation, then the
    statistic. Unlike the weighted :math:`\chi^2` it reproduces the randomness of :math:`V` itself,
    which matters when the covariance noise is comparable to the covariance (small n or small
    epsilon, where the noisy covariance is often indefinite before projection). For two samples each
    side is simulated with its own plug-in covariance around a common plug-in mean (the null is
    "equal feature means", not "equal distributions").

The p-value of a simulated null with B draws is :math:`(1 + \#\{s^*_b \ge s\})/(B+1)`.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

import numpy as np
from scipy import stats

from .._validation import check_positive_int
from .statistic import (
    _sqrt_psd,
    paired_statistic,
    psd_project,
    symmetric_noise,
    two_sample_statistic,
)

__all__ = [
    "NULL_KINDS",
    "NullDistribution",
    "chi2_null",
    "weighted_chi2_null",
    "paired_bootstrap_null",
    "two_sample_bootstrap_null",
]

NULL_KINDS = ("bootstrap", "weighted-chi2", "chi2")

# Bootstrap draws simulated per chunk (bounds the (chunk, J, J) work arrays).
_CHUNK = 4096


@dataclass
class NullDistribution:
    r"""A null distribution of a test statistic, ready to plot and to turn into p-values.

    For the simulated nulls the p-value of :math:`s` with :math:`B` draws is
    :math:`(1 + \#\{s^*_b \ge s\})/(B+1)`; for ``"chi2"`` it is the exact
    :math:`\chi^2_{\rm df}` survival function.

    Parameters
    ----------
    kind : {"bootstrap", "weighted-chi2", "chi2"}
        Which null (see the module docstring).
    description : str
        One sentence for the UI.
    samples : ndarray of shape (B,)
        Draws from the null (for histograms). For ``"chi2"`` they are only for
        display; p-values use the exact survival function.
    df : int or None, default None
        Degrees of freedom (``"chi2"``).
    weights : ndarray or None, default None
        Weights of the weighted chi-square (``"weighted-chi2"``).
    params : dict, optional
        Everything the simulation used (plug-in sizes, noise levels, seed).

    Examples
    --------
    >>> import numpy as np
    >>> from dpkme.two_sample.nulls import NullDistribution
    >>> null = NullDistribution(kind="bootstrap", description="toy", samples=np.arange(1.0, 20.0))
    >>> null.p_value(18.5)                    # (1 + #{s_b >= 18.5}) / (19 + 1)
    0.1
    """

    kind: str
    description: str
    samples: np.ndarray
    df: int | None = None
    weights: np.ndarray | None = None
    params: dict[str, Any] = field(default_factory=dict)

    def p_value(self, statistic: float) -> float:
        """P-value of ``statistic`` under this null."""
        s = float(statistic)
        if self.kind == "chi2":
            return float(stats.chi2.sf(s, self.df))
        return float((1 + np.count_nonzero(self.samples >= s)) / (self.samples.size + 1))

    def critical_value(self, alpha: float) -> float:
        """Smallest value whose p-value is at most ``alpha`` (the rejection threshold)."""
        if self.kind == "chi2":
            return float(stats.chi2.isf(alpha, self.df))
        s = np.sort(self.samples)
        B = s.size
        # reject iff 1 + #{s_b >= t} <= alpha (B + 1), i.e. #{s_b >= t} <= k
        k = int(np.floor(alpha * (B + 1) - 1))
        if k < 0:
            return float("inf")
        return float(np.nextafter(s[B - k - 1], np.inf)) if k < B else float(-np.inf)

    def to_dict(self, *, max_samples: int = 2000) -> dict[str, Any]:
        """JSON-friendly summary (at most ``max_samples`` evenly spaced sorted samples)."""
        s = np.sort(self.samples)
        if s.size > max_samples:
            s = s[np.linspace(0, s.size - 1, max_samples).round().astype(int)]
        return {
            "kind": self.kind,
            "description": self.description,
            "n_samples": int(self.samples.size),
            "samples_sorted": s.tolist(),
            "df": self.df,
            "weights": None if self.weights is None else np.asarray(self.weights).tolist(),
            "params": dict(self.params),
        }


def chi2_null(df: int, *, n_samples: int = 2000, rng: np.random.Generator) -> NullDistribution:
    r"""The asymptotic :math:`\chi^2_J` null (samples for display only).

    The null of the non-private statistic :math:`s_n` (Chwialkowski et al. 2015);
    on a private statistic it ignores the noise.

    Parameters
    ----------
    df : int
        Degrees of freedom :math:`J` (the number of features, >= 1).
    n_samples : int, default 2000
        Number of draws kept for display.
    rng : numpy.random.Generator
        Source of the display draws (p-values do not use them).

    Returns
    -------
    NullDistribution
        ``kind="chi2"`` with ``df`` set.

    Examples
    --------
    >>> import numpy as np
    >>> from dpkme.two_sample.nulls import chi2_null
    >>> null = chi2_null(3, rng=np.random.default_rng(0))
    >>> round(null.critical_value(0.05), 4), round(null.p_value(7.8147), 4)
    (7.8147, 0.05)
    """
    df = check_positive_int(df, name="df")
    return NullDistribution(
        kind="chi2",
        description=f"asymptotic chi-square with {df} degrees of freedom (ignores any privacy noise)",
        samples=rng.chisquare(df, size=check_positive_int(n_samples, name="n_samples")),
        df=df,
    )


def weighted_chi2_null(V, C, *, n_samples: int = 2000, rng: np.random.Generator) -> NullDistribution:
    r"""Null :math:`\sum_k\lambda_k\chi^2_1` with :math:`\lambda = \operatorname{eig}(V^{-1/2}CV^{-1/2})`.

    ``V`` is the matrix of the statistic, ``C`` the (plug-in) covariance of the
    noisy mean under :math:`H_0`: if :math:`w\sim\mathcal N(0, C)` then
    :math:`w^\top V^{-1}w` has exactly this distribution. ``C`` is projected to PSD
    first; the weights are clipped at 0.

    Parameters
    ----------
    V : array-like of shape (J, J)
        Symmetric positive definite matrix of the statistic :math:`s = w^\top V^{-1}w`.
    C : array-like of shape (J, J)
        Plug-in covariance of the (noisy) mean under :math:`H_0`, e.g.
        :math:`\hat\Sigma/n + \sigma_w^2 I`, from released quantities only.
    n_samples : int, default 2000
        Number of draws :math:`B`.
    rng : numpy.random.Generator
        Randomness of the simulation (post-processing).

    Returns
    -------
    NullDistribution
        ``kind="weighted-chi2"`` with the weights :math:`\lambda` (ascending).

    Examples
    --------
    >>> import numpy as np
    >>> from dpkme.two_sample.nulls import weighted_chi2_null
    >>> null = weighted_chi2_null(np.eye(2), np.diag([2.0, 0.5]), n_samples=100, rng=np.random.default_rng(0))
    >>> null.weights, null.samples.shape
    (array([0.5, 2. ]), (100,))
    """
    V = np.asarray(V, dtype=float)
    C = psd_project(C)
    lam_v, U = np.linalg.eigh(0.5 * (V + V.T))
    Vih = (U / np.sqrt(np.maximum(lam_v, np.finfo(float).tiny))) @ U.T
    lam = np.clip(np.linalg.eigvalsh(Vih @ C @ Vih), 0.0, None)
    B = check_positive_int(n_samples, name="n_samples")
    samples = (rng.standard_normal((B, lam.size)) ** 2) @ lam
    return NullDistribution(
        kind="weighted-chi2",
        description="weighted sum of chi-square(1) variables, weights from the released covariance "
                    "(Raj et al. 2019); treats the noisy covariance as exact",
        samples=samples,
        weights=lam,
    )


def _wishart_scatter(root: np.ndarray, df: int, size: int, rng: np.random.Generator) -> np.ndarray:
    """``size`` draws of :math:`S \\sim W_J(LL^\\top, df)` by Bartlett's decomposition (any square root L)."""
    J = root.shape[-1]
    T = np.zeros((size, J, J))
    il = np.tril_indices(J, -1)
    T[:, il[0], il[1]] = rng.standard_normal((size, il[0].size))
    T[:, np.arange(J), np.arange(J)] = np.sqrt(rng.chisquare(df - np.arange(J), size=(size, J)))
    LT = root @ T
    return LT @ np.swapaxes(LT, -1, -2)


def _simulate_sample_moments(mean, cov_root, n: int, size: int, rng):
    """Gaussian-model mean and second moment of one sample of size n (``size`` draws)."""
    J = cov_root.shape[-1]
    zbar = mean + (rng.standard_normal((size, J)) @ cov_root.T) / np.sqrt(n)
    if n > J:
        S = _wishart_scatter(cov_root, n - 1, size, rng)
    else:  # explicit rows (tiny n): scatter of n Gaussian rows around their mean
        G = rng.standard_normal((size, n, J)) @ cov_root.T
        G -= G.mean(axis=1, keepdims=True)
        S = np.swapaxes(G, 1, 2) @ G
    second = S / n + zbar[:, :, None] * zbar[:, None, :]
    return zbar, second


def paired_bootstrap_null(
    *,
    n: int,
    cov_plugin,
    sigma_mean: float,
    sigma_second: float,
    gamma: float,
    noise_aware: bool = True,
    n_samples: int = 2000,
    rng: np.random.Generator,
) -> NullDistribution:
    r"""Parametric-bootstrap null of :func:`~dpkme.two_sample.statistic.paired_statistic`.

    Parameters
    ----------
    n : int
        Number of pairs.
    cov_plugin : array (J, J)
        Plug-in covariance of z, computed from *released* quantities only
        (PSD-projected).
    sigma_mean, sigma_second : float
        Standard deviations of the noise on the mean and on the second moment
        (0 and 0 for a non-private bootstrap).
    gamma : float
        The public regularisation used by the statistic.
    noise_aware : bool
        Whether the statistic adds :math:`\sigma_w^2` to V (as the observed one did).
    n_samples : int
        B.
    rng : numpy Generator
        Randomness of the simulation (post-processing; its seed can be published).

    Returns
    -------
    NullDistribution
        ``kind="bootstrap"`` with the :math:`B` simulated statistics.
    """
    n = check_positive_int(n, name="n", minimum=2)
    B = check_positive_int(n_samples, name="n_samples")
    cov = psd_project(cov_plugin)
    J = cov.shape[0]
    root = _sqrt_psd(cov)
    out = np.empty(B)
    mnv = sigma_mean**2 if noise_aware else 0.0
    for b0 in range(0, B, _CHUNK):
        m = min(_CHUNK, B - b0)
        zbar, second = _simulate_sample_moments(np.zeros(J), root, n, m, rng)
        if sigma_mean > 0:
            zbar = zbar + sigma_mean * rng.standard_normal((m, J))
        if sigma_second > 0:
            second = second + symmetric_noise(J, sigma_second, rng, size=m)
        out[b0:b0 + m] = paired_statistic(zbar, second, n, mean_noise_var=mnv, gamma=gamma)
    return NullDistribution(
        kind="bootstrap",
        description=(f"parametric bootstrap ({B} draws): Gaussian data moments with the released covariance, "
                     "plus fresh mean and second-moment noise, PSD projection and regularisation as in the test"),
        samples=out,
        params={"n": n, "sigma_mean": sigma_mean, "sigma_second": sigma_second, "gamma": gamma,
                "noise_aware": noise_aware, "n_samples": B},
    )


def two_sample_bootstrap_null(
    *,
    n_x: int,
    n_y: int,
    mean_plugin,
    cov_x,
    cov_y,
    sigma_mean_x: float,
    sigma_second_x: float,
    sigma_mean_y: float,
    sigma_second_y: float,
    gamma: float,
    noise_aware: bool = True,
    n_samples: int = 2000,
    rng: np.random.Generator,
) -> NullDistribution:
    r"""Parametric-bootstrap null of :func:`~dpkme.two_sample.statistic.two_sample_statistic`.

    Both samples are simulated around the common plug-in mean ``mean_plugin``
    (the null) with their own plug-in covariances, each gets its own holder's
    noise (0 for a public side), and the statistic is recomputed.

    Parameters
    ----------
    n_x, n_y : int
        Sample sizes (each >= 2).
    mean_plugin : array-like of shape (J,)
        The common feature mean both samples are simulated around (e.g. the
        size-weighted average of the released means).
    cov_x, cov_y : array-like of shape (J, J)
        Plug-in feature covariances of the two samples, from released quantities
        only (projected to PSD here).
    sigma_mean_x, sigma_mean_y : float
        Standard deviations of the noise on each released mean (0 for a public side).
    sigma_second_x, sigma_second_y : float
        Standard deviations of the symmetric noise on each released second moment
        (0 for a public side).
    gamma : float
        The public regularisation used by the statistic.
    noise_aware : bool, default True
        Whether the statistic adds :math:`\sigma_x^2+\sigma_y^2` to V (as the observed one did).
    n_samples : int, default 2000
        Number of draws :math:`B`.
    rng : numpy.random.Generator
        Randomness of the simulation (post-processing; its seed can be published).

    Returns
    -------
    NullDistribution
        ``kind="bootstrap"`` with the :math:`B` simulated statistics.

    Examples
    --------
    Without noise the null is close to :math:`\chi^2_J` (mean J = 2):

    >>> import numpy as np
    >>> from dpkme.two_sample.nulls import two_sample_bootstrap_null
    >>> null = two_sample_bootstrap_null(n_x=200, n_y=300, mean_plugin=np.zeros(2), cov_x=np.eye(2),
    ...                                  cov_y=np.eye(2), sigma_mean_x=0.0, sigma_second_x=0.0, sigma_mean_y=0.0,
    ...                                  sigma_second_y=0.0, gamma=1e-5, rng=np.random.default_rng(0))
    >>> bool(1.8 < null.samples.mean() < 2.2)
    True
    """
    n_x = check_positive_int(n_x, name="n_x", minimum=2)
    n_y = check_positive_int(n_y, name="n_y", minimum=2)
    B = check_positive_int(n_samples, name="n_samples")
    m0 = np.asarray(mean_plugin, dtype=float)
    J = m0.shape[0]
    rx, ry = _sqrt_psd(psd_project(cov_x)), _sqrt_psd(psd_project(cov_y))
    mnv = (sigma_mean_x**2 + sigma_mean_y**2) if noise_aware else 0.0
    out = np.empty(B)
    for b0 in range(0, B, _CHUNK):
        m = min(_CHUNK, B - b0)
        sides = []
        for root, nn, sm, ss in ((rx, n_x, sigma_mean_x, sigma_second_x), (ry, n_y, sigma_mean_y, sigma_second_y)):
            mu, second = _simulate_sample_moments(m0, root, nn, m, rng)
            if sm > 0:
                mu = mu + sm * rng.standard_normal((m, J))
            if ss > 0:
                second = second + symmetric_noise(J, ss, rng, size=m)
            sides.append((mu, second))
        (mx, sx), (my, sy) = sides
        out[b0:b0 + m] = two_sample_statistic(mx, sx, n_x, my, sy, n_y, mean_noise_var=mnv, gamma=gamma)
    return NullDistribution(
        kind="bootstrap",
        description=(f"parametric bootstrap ({B} draws): both samples' Gaussian moments around a common mean with "
                     "their released covariances, fresh noise for every privatised side, PSD projection and "
                     "regularisation as in the test"),
        samples=out,
        params={"n_x": n_x, "n_y": n_y, "sigma_mean_x": sigma_mean_x, "sigma_second_x": sigma_second_x,
                "sigma_mean_y": sigma_mean_y, "sigma_second_y": sigma_second_y, "gamma": gamma,
                "noise_aware": noise_aware, "n_samples": B},
    )
