r"""Private selection of a norm bound (Algorithm 3, "DPNorm", of Acs et al.).

For feature maps **without** an a-priori bound on :math:`\|z(x)\|_2` (e.g. the
cosine-with-offset map :math:`\sqrt{2/J}\cos(\omega^\top x + b)` of their
Algorithm 2, whose norm ranges over :math:`[0, \sqrt2]`), a clipping threshold
:math:`C_s` is chosen privately as the **noisy mode of the histogram of
norms**: with :math:`C_j = jC_{\max}/w`,

.. math::
    t_j = |\{x : C_{j-1} < \|z(x)\|_2 \le C_j\}|, \qquad
    C_s = C_{\hat\jmath},\quad \hat\jmath = \arg\max_{j\ge1}\ t_j + \mathcal N(0, \sigma^2).

The noisy histogram is a Gaussian mechanism with L2 sensitivity 1
(add/remove) or :math:`\sqrt2` (replace-one); the arg-max is post-processing.
Rows are then clipped, :math:`\hat z(x) = z(x)/\max(1, \|z(x)\|_2/C_s)`.

**Our random Fourier features do not need this step**:
:class:`dpkme.kernels.random_features.RandomFourierFeatures` uses paired cosines and sines,
so :math:`\|z(x)\|_2^2 = \frac{2a}{J}\sum_j(\cos^2 + \sin^2) = a \le 1` for
every x -- an exact, data-independent bound (the paper's Theorem 2 only
bounds the *expected* norm of the unpaired map). Spending budget on the norm
would be waste; :func:`dpkme.clustering.dp_kernel_kmeans` skips it unless
``norm_bound="private"`` is asked for explicitly.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from .._validation import check_array, check_in, check_positive_float, check_positive_int
from ..privacy.calibration import gaussian_noise
from ..privacy.sensitivity import NEIGHBOURING
from .sensitivity import histogram_sensitivity

__all__ = ["NormSelection", "norm_histogram", "private_norm_bound"]


@dataclass(frozen=True)
class NormSelection:
    """Output of Algorithm 3: the selected bound and the released noisy histogram.

    Everything here is released (a Gaussian mechanism on the histogram, then
    post-processing); it is built by :func:`private_norm_bound`.

    Parameters
    ----------
    norm_bound : float
        :math:`C_s`, the upper edge of the bin with the largest noisy count: the
        clipping bound used for the sensitivities afterwards.
    edges : ndarray (w + 1,)
        :math:`C_0 = 0, C_1, \\dots, C_w = C_{\\max}` with :math:`C_j = jC_{\\max}/w` (public).
    noisy_counts : ndarray (w,)
        Released noisy counts of the bins :math:`(C_{j-1}, C_j]`.
    sigma : float
        Noise std per bin (the paper's :math:`\\sqrt2\\sigma_C`).
    mu : float
        Sensitivity in noise units, :math:`\\mu = \\Delta_2/\\sigma` with
        :math:`\\Delta_2` = :func:`~dpkme.clustering.sensitivity.histogram_sensitivity`;
        the step is :math:`\\mu`-GDP.
    neighbouring : {"replace-one", "add-remove"}
        Neighbouring relation :math:`\\Delta_2` (hence ``mu``) refers to.
    """

    norm_bound: float
    edges: np.ndarray
    noisy_counts: np.ndarray
    sigma: float
    mu: float
    neighbouring: str


def norm_histogram(norms, *, c_max: float, n_bins: int) -> tuple[np.ndarray, np.ndarray]:
    r"""Exact counts :math:`t_j = |\{C_{j-1} < \|z\| \le C_j\}|`, :math:`j = 1..w` (private; for the mechanism and tests).

    The bins are :math:`(C_{j-1}, C_j]` with :math:`C_j = jC_{\max}/w`; a norm
    of exactly 0 or above :math:`C_{\max}` falls in no bin (which can only lower
    the sensitivity). The counts are **not** private: only
    :func:`private_norm_bound` adds the noise.

    Parameters
    ----------
    norms : array (N,)
        :math:`\|z(x_n)\|_2 \ge 0` of the rows.
    c_max : float
        :math:`C_{\max} > 0`, public upper end of the searched range.
    n_bins : int
        :math:`w \ge 1`, the number of bins (candidate bounds).

    Returns
    -------
    counts : ndarray (w,) of float64
        :math:`t_1, \dots, t_w`.
    edges : ndarray (w + 1,)
        :math:`C_0 = 0, \dots, C_w = C_{\max}`.

    Examples
    --------
    >>> counts, edges = norm_histogram([0.1, 0.45, 0.5, 0.9, 1.2], c_max=1.0, n_bins=4)
    >>> counts
    array([1., 2., 0., 1.])
    >>> edges
    array([0.  , 0.25, 0.5 , 0.75, 1.  ])
    """
    norms = check_array(norms, name="norms", ndim=1, min_rows=0)
    c_max = check_positive_float(c_max, name="c_max")
    w = check_positive_int(n_bins, name="n_bins")
    edges = c_max * np.arange(w + 1) / w
    # bin j (1-based) holds C_{j-1} < v <= C_j: searchsorted with side="left" gives j for such v
    idx = np.searchsorted(edges, norms, side="left")
    inside = (idx >= 1) & (idx <= w)
    counts = np.bincount(idx[inside] - 1, minlength=w).astype(np.float64)
    return counts, edges


def private_norm_bound(norms, *, c_max: float, n_bins: int = 50, sigma: float, rng: np.random.Generator,
                       neighbouring: str = "replace-one") -> NormSelection:
    r"""Algorithm 3: the noisy mode of the norm histogram as a clipping bound.

    Guarantee: the returned :class:`NormSelection` (noisy histogram and the
    bound derived from it) is a Gaussian mechanism with sensitivity
    :math:`\mu = \Delta_2/\sigma` in noise units, :math:`\Delta_2` =
    :func:`~dpkme.clustering.sensitivity.histogram_sensitivity` under
    ``neighbouring``; charge it with noise multiplier :math:`1/\mu`.

    Parameters
    ----------
    norms : array (N,)
        :math:`\|z(x_n)\|_2` of the private rows (before clipping).
    c_max : float
        Public upper end :math:`C_{\max}` of the searched range.
    n_bins : int
        :math:`w`, the number of candidate bounds.
    sigma : float
        Noise std per bin (the paper's :math:`\sqrt2\sigma_C`).
    rng : numpy.random.Generator
        Source of the privacy noise (pass an OS-entropy generator for a real release).
    neighbouring : {"replace-one", "add-remove"}, default="replace-one"
        Neighbouring relation of the guarantee (sets :math:`\Delta_2`, hence ``mu``).

    Returns
    -------
    NormSelection
        The bound :math:`C_s`, the public edges, the noisy counts and
        :math:`\mu`, all released.
    """
    check_in(neighbouring, NEIGHBOURING, name="neighbouring")
    sigma = check_positive_float(sigma, name="sigma")
    counts, edges = norm_histogram(norms, c_max=c_max, n_bins=n_bins)
    noisy = counts + gaussian_noise(counts.shape, sigma=sigma, rng=rng)
    j = int(np.argmax(noisy))  # 0-based bin j holds (C_j, C_{j+1}]
    return NormSelection(float(edges[j + 1]), edges, noisy, sigma, histogram_sensitivity(neighbouring) / sigma,
                         neighbouring)
