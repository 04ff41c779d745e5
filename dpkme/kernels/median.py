r"""The median heuristic: a length scale from the median pairwise distance of a sample.

The heuristic is a kernel matter, so it lives with the kernels, below both the privacy guards
(:mod:`dpkme.privacy.bandwidth`, :mod:`dpkme.privacy.leaks`) and the applications that choose a
bandwidth from **public** data (:mod:`dpkme.two_sample.features`). This module imports only
:mod:`dpkme._validation` and numpy.

:func:`public_lengthscale`
    the median pairwise Euclidean distance of a *public* sample (what a release may use);
:func:`median_heuristic_values`
    the common median-heuristic values of a table, which :func:`dpkme.privacy.leaks.find_data_dependent_inputs`
    compares a declared length scale against (a declared value equal to one of them was computed from the
    private rows).
"""

from __future__ import annotations

import math

import numpy as np
import numpy.typing as npt

from .._validation import check_array, check_positive_int, check_random_state

__all__ = ["public_lengthscale", "median_heuristic_values"]


def _public_pool(public_sample) -> np.ndarray:
    """A public sample, or a tuple of public samples stacked (e.g. held-out parts of X and Y)."""
    if isinstance(public_sample, (tuple, list)) and public_sample and not np.isscalar(public_sample[0]) \
            and np.ndim(public_sample[0]) == 2:
        parts = [check_array(p, name=f"public_sample[{i}]") for i, p in enumerate(public_sample)]
        dims = {p.shape[1] for p in parts}
        if len(dims) != 1:
            raise ValueError(f"the public samples have different numbers of columns: {sorted(dims)}.")
        return np.concatenate(parts, axis=0)
    return check_array(public_sample, name="public_sample")


def public_lengthscale(public_sample, *, max_rows: int = 2000, random_state=0) -> float:
    r"""Median pairwise Euclidean distance of a **public** sample (median heuristic on public data).

    At most ``max_rows`` rows (a seeded subsample) are used. The result is a
    public constant; the same heuristic on the private test data would leak.

    .. math:: \ell = \operatorname{median}_{i<j}\|p_i - p_j\|_2 .

    Parameters
    ----------
    public_sample : array-like of shape (m, d), or tuple of such arrays
        Data that is not part of the private test data (a held-out split, a
        public reference sample); a tuple ``(X_public, Y_public)`` is pooled. At
        least 2 rows in all.
    max_rows : int, default 2000
        Largest number of rows used (at least 2); a larger sample is subsampled
        without replacement. The pairwise work is :math:`O(\texttt{max\_rows}^2 d)`.
    random_state : None, int or Generator, default 0
        Seed of the subsample (used only when the sample has more than ``max_rows`` rows).

    Returns
    -------
    float
        The length scale :math:`\ell > 0`, in the units of the data.

    Raises
    ------
    ValueError
        If the sample has fewer than 2 rows or a median pairwise distance of 0.

    Examples
    --------
    >>> import numpy as np
    >>> from dpkme.kernels.median import public_lengthscale
    >>> public_lengthscale(np.array([[0.0, 0.0], [3.0, 4.0], [0.0, 8.0]]))   # distances 5, 8, 5
    5.0
    """
    pool = _public_pool(public_sample)
    if pool.shape[0] < 2:
        raise ValueError("public_lengthscale needs at least 2 public rows.")
    max_rows = check_positive_int(max_rows, name="max_rows", minimum=2)
    if pool.shape[0] > max_rows:
        rng, _ = check_random_state(random_state)
        pool = pool[rng.choice(pool.shape[0], size=max_rows, replace=False)]
    sq = np.einsum("ij,ij->i", pool, pool)
    norms = sq[:, None] + sq[None, :]
    d2 = norms - 2.0 * pool @ pool.T
    d2[d2 <= 1e-12 * norms] = 0.0      # identical rows: rounding of |p|² + |q|² − 2p·q, not a distance
    iu = np.triu_indices(pool.shape[0], k=1)
    med = float(np.sqrt(max(np.median(np.maximum(d2[iu], 0.0)), 0.0)))
    if not med > 0:
        raise ValueError("the public sample has median pairwise distance 0; declare a length scale instead.")
    return med


def median_heuristic_values(X: npt.NDArray[np.float64], *, max_rows: int = 2000) -> list[float]:
    r"""Common median-heuristic length scales of ``X`` (for leak detection by :mod:`dpkme.privacy.leaks`; reads X).

    With :math:`m^2` the median squared pairwise distance of the rows (a seeded subsample of at most
    ``max_rows``), the values are :math:`m`, :math:`m^2`, :math:`m/\sqrt2`, :math:`\sqrt{m^2/2}`,
    :math:`1/m^2` and :math:`1/(2m^2)`: the forms in which a length scale or a precision computed from
    the rows is usually passed on. A declared length scale close to one of them was probably read off ``X``.

    Parameters
    ----------
    X : array of shape (N, D)
        The rows (at least 2). **Private** when called on the private table: the values are compared,
        never released.
    max_rows : int, default 2000
        Largest number of rows used; more are subsampled without replacement with seed 0.

    Returns
    -------
    list of float
        The six values above, or an empty list when the median distance is 0.

    Examples
    --------
    >>> import numpy as np
    >>> from dpkme.kernels.median import median_heuristic_values
    >>> [round(v, 6) for v in median_heuristic_values(np.array([[0.0, 0.0], [3.0, 4.0], [0.0, 8.0]]))][:2]
    [5.0, 25.0]
    """
    X = check_array(X, name="X", min_rows=2)
    out = []
    if X.shape[0] <= max_rows:
        cdf_rows = X
    else:
        cdf_rows = X[np.random.default_rng(0).choice(X.shape[0], size=max_rows, replace=False)]
    sq = np.einsum("ij,ij->i", cdf_rows, cdf_rows)
    d2 = np.maximum(sq[:, None] + sq[None, :] - 2.0 * cdf_rows @ cdf_rows.T, 0.0)
    iu = np.triu_indices(cdf_rows.shape[0], k=1)
    med2 = float(np.median(d2[iu]))
    if med2 > 0:
        med = math.sqrt(med2)
        out += [med, med2, med / math.sqrt(2.0), math.sqrt(med2 / 2.0), 1.0 / med2, 1.0 / (2.0 * med2)]
    return out
