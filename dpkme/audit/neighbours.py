r"""Worst-case neighbouring datasets for the audits.

A DP guarantee is a statement about *every* pair of neighbours, so an audit
should use the pair on which the mechanism is most distinguishable. For kernel
mean embeddings the change caused by replacing :math:`x` by :math:`x'` is
:math:`\frac1N(k(x,\cdot) - k(x',\cdot))`, of RKHS norm
:math:`\frac1N\sqrt{2a - 2k(x,x')}`: largest when :math:`x'` is far from
:math:`x`. What the mechanism actually reveals may be a *projection* of that
difference (Algorithm 1: onto the span of the public points; a GP release: onto
the span of the evaluation points; random features: onto the feature space), so
the worst pair is found in that projection:

* :func:`outlier_neighbour`: replace one row by a far outlier (the generic
  worst case for the exact embedding);
* :func:`rff_antipodal_pair`: :math:`\phi(x') = -\phi(x)` for paired random
  Fourier features, i.e. :math:`\omega_j^\top(x'-x) \equiv \pi \pmod{2\pi}` for
  every frequency, so :math:`\|\phi(x)-\phi(x')\|_2 = 2\sqrt a` (the bound of
  Proposition 9 is attained); solved exactly when :math:`J/2 \le D`;
* :func:`rff_l1_pair`: the pair attaining :math:`\|\phi(x)-\phi(x')\|_1 = 2\sqrt{aJ}`
  (all angles at :math:`\pi/4 + k\pi/2`), the Cauchy-Schwarz bound that
  :func:`dpkme.privacy.calibration.l1_from_l2_sensitivity` uses;
* :func:`cosine_antipodal_pair`: for :class:`dpkme.kernels.random_features.CosineBiasFeatures`,
  :math:`\cos(\omega_j^\top x + b_j) = 1` and :math:`\cos(\omega_j^\top x' + b_j) = -1`,
  so :math:`\|\phi(x) - \phi(x')\|_2 = 2\sqrt{2a}`, beyond the assumed :math:`2\sqrt a`;
* :func:`best_pair`: exhaustive search over a public candidate set for any
  pair score (used for Algorithm 1, the GP release and the exponential mechanism).

Everything here works on public objects (feature maps, public points); the
datasets it builds are synthetic test inputs, not anyone's data.
"""

from __future__ import annotations

import math
from collections.abc import Callable

import numpy as np
from scipy.optimize import minimize

from .._validation import check_array, check_in, check_positive_float, check_positive_int
from ..kernels.random_features import CosineBiasFeatures, RandomFourierFeatures
from ..privacy.sensitivity import NEIGHBOURING

__all__ = [
    "outlier_neighbour",
    "neighbour_pair",
    "rff_antipodal_pair",
    "rff_l1_pair",
    "cosine_antipodal_pair",
    "best_pair",
]


def outlier_neighbour(X, *, index: int = 0, distance: float = 50.0, lengthscale: float = 1.0) -> np.ndarray:
    r"""``X`` with row ``index`` replaced by a far outlier (replace-one neighbour).

    The outlier is :math:`x_{\text{index}} + \text{distance}\cdot\ell\cdot e_1`; at 50
    length scales every translation-invariant kernel of :mod:`dpkme.kernels`
    is below :math:`10^{-20}` between the two rows, so
    :math:`\|k(x,\cdot)-k(x',\cdot)\|_{\mathcal H}` is :math:`\sqrt{2a}` up to rounding.

    Parameters
    ----------
    X : array-like of shape (n, d)
        The dataset :math:`D` (a synthetic test input; not modified).
    index : int
        Row to replace, :math:`0 \le` ``index`` :math:`< n` (default 0).
    distance : float > 0
        How far the outlier moves along the first coordinate, in length scales (default 50).
    lengthscale : float > 0
        The kernel's length scale :math:`\ell`, in the units of ``X`` (default 1).

    Returns
    -------
    ndarray of shape (n, d)
        A copy of ``X`` (float64) whose row ``index`` is moved by :math:`\text{distance}\cdot\ell` along
        :math:`e_1`: the replace-one neighbour :math:`D'`.

    Examples
    --------
    >>> import numpy as np
    >>> from dpkme.audit import outlier_neighbour
    >>> outlier_neighbour(np.zeros((3, 2)), index=1, distance=10.0)
    array([[ 0.,  0.],
           [10.,  0.],
           [ 0.,  0.]])
    """
    X = check_array(X, name="X")
    i = check_positive_int(index, name="index", minimum=0, maximum=X.shape[0] - 1)
    far = check_positive_float(distance, name="distance") * check_positive_float(lengthscale, name="lengthscale")
    out = X.copy()
    out[i, 0] = X[i, 0] + far
    if not np.isfinite(out).all():
        raise ValueError(f"the outlier {out[i]!r} is not finite; use a smaller distance.")
    return out


def neighbour_pair(X, x_new=None, *, index: int = 0,
                   neighbouring: str = "replace-one") -> tuple[np.ndarray, np.ndarray]:
    r"""``(D, D')``: replace row ``index`` of ``X`` by ``x_new`` (replace-one) or remove it (add-remove).

    Parameters
    ----------
    X : array-like of shape (n, d)
        The dataset :math:`D` (at least 2 rows for ``"add-remove"``; not modified).
    x_new : array-like of shape (d,), optional
        The replacing row; required for ``"replace-one"``, ignored for ``"add-remove"``.
    index : int
        Row to replace or remove, :math:`0 \le` ``index`` :math:`< n` (default 0).
    neighbouring : {"replace-one", "add-remove"}
        The neighbouring relation (default ``"replace-one"``).

    Returns
    -------
    D : ndarray of shape (n, d)
        ``X`` as a float64 array.
    D_neighbour : ndarray of shape (n, d) or (n - 1, d)
        The neighbour: a copy of ``X`` with row ``index`` replaced by ``x_new``, or without it.

    Examples
    --------
    >>> import numpy as np
    >>> from dpkme.audit import neighbour_pair
    >>> D, D2 = neighbour_pair(np.zeros((3, 2)), [1.0, 1.0], index=2)
    >>> D2
    array([[0., 0.],
           [0., 0.],
           [1., 1.]])
    >>> neighbour_pair(np.zeros((3, 2)), neighbouring="add-remove")[1].shape
    (2, 2)
    """
    X = check_array(X, name="X")
    check_in(neighbouring, NEIGHBOURING, name="neighbouring")
    i = check_positive_int(index, name="index", minimum=0, maximum=X.shape[0] - 1)
    if neighbouring == "add-remove":
        if X.shape[0] < 2:
            raise ValueError("an add-remove neighbour by removal needs at least 2 rows.")
        return X, np.delete(X, i, axis=0)
    if x_new is None:
        raise ValueError("a replace-one neighbour needs the replacing row x_new.")
    row = check_array(x_new, name="x_new", ndim=1)
    if row.shape[0] != X.shape[1]:
        raise ValueError(f"x_new has {row.shape[0]} entries but X has {X.shape[1]} columns.")
    Xn = X.copy()
    Xn[i] = row
    return X, Xn


def _solve_angles(W: np.ndarray, target: np.ndarray, rng: np.random.Generator) -> np.ndarray:
    r"""A point x with :math:`Wx \equiv \text{target} \pmod{2\pi}` if possible (least squares), else the best found.

    Exact when W has full row rank (at most D rows). Otherwise minimises
    :math:`\sum_j 1 - \cos(w_j^\top x - t_j)` from several starts.
    """
    x, *_ = np.linalg.lstsq(W, target, rcond=None)

    def loss(v):
        r = W @ v - target
        return float(np.sum(1.0 - np.cos(r))), W.T @ np.sin(r)

    best = x
    best_val = loss(x)[0]
    if best_val > 1e-10:
        for _ in range(30):
            start = rng.standard_normal(W.shape[1]) * (2.0 * math.pi / max(np.linalg.norm(W, axis=1).mean(), 1e-12))
            res = minimize(loss, start, jac=True, method="L-BFGS-B")
            if res.fun < best_val:
                best, best_val = res.x, float(res.fun)
    return best


def rff_antipodal_pair(features: RandomFourierFeatures, *, random_state=0) -> tuple[np.ndarray, np.ndarray]:
    r"""``(x, x')`` with :math:`\phi(x') \approx -\phi(x)`: :math:`\omega_j^\top x = 0`,
    :math:`\omega_j^\top x' \equiv \pi`.

    Exact (:math:`\|\phi(x)-\phi(x')\|_2 = 2\sqrt a`) when the number of
    frequencies :math:`J/2` is at most the input dimension; otherwise the best
    point found by a multi-start search.

    Parameters
    ----------
    features : RandomFourierFeatures
        Fitted paired (cos/sin) random Fourier features; their frequencies
        :math:`\omega_j` (rows of ``frequencies_``) are public.
    random_state : int, Generator or None
        Seed of the multi-start search, used only when the angles cannot be solved
        exactly (default 0: reproducible).

    Returns
    -------
    x, x_prime : ndarray of shape (d,)
        The two input points.
        ``x`` is the origin; ``x_prime`` solves :math:`\omega_j^\top x' \equiv \pi \pmod{2\pi}` (in
        least squares, or approximately).
    """
    if not isinstance(features, RandomFourierFeatures):
        raise ValueError(f"features must be RandomFourierFeatures, got {features!r}.")
    features._check_fitted()
    W = features.frequencies_
    rng = np.random.default_rng(random_state)
    x = np.zeros(W.shape[1])
    return x, _solve_angles(W, np.full(W.shape[0], math.pi), rng)


def rff_l1_pair(features: RandomFourierFeatures, *, random_state=0) -> tuple[np.ndarray, np.ndarray]:
    r"""``(x, x')`` maximising :math:`\|\phi(x) - \phi(x')\|_1` for paired features.

    With angles :math:`\omega_j^\top x \equiv \pi/4` and :math:`\omega_j^\top x' \equiv 5\pi/4`,
    each pair of coordinates differs by :math:`\sqrt{2a/J}\,(\sqrt2+\sqrt2)`, so
    :math:`\|\phi(x)-\phi(x')\|_1 = 2\sqrt{aJ} = \sqrt J\,\|\phi(x)-\phi(x')\|_2`:
    the Cauchy-Schwarz bound :math:`\Delta_1 \le \sqrt d\,\Delta_2` is attained. Exact when
    :math:`J/2 \le D`; otherwise the best points found by a multi-start search.

    Parameters
    ----------
    features : RandomFourierFeatures
        Fitted paired (cos/sin) random Fourier features; their frequencies
        :math:`\omega_j` (rows of ``frequencies_``) are public.
    random_state : int, Generator or None
        Seed of the multi-start search, used only when the angles cannot be solved
        exactly (default 0: reproducible).

    Returns
    -------
    x, x_prime : ndarray of shape (d,)
        The two input points.
        With all angles :math:`\equiv \pi/4` and :math:`\equiv 5\pi/4` respectively (exactly or
        approximately).
    """
    if not isinstance(features, RandomFourierFeatures):
        raise ValueError(f"features must be RandomFourierFeatures, got {features!r}.")
    features._check_fitted()
    W = features.frequencies_
    rng = np.random.default_rng(random_state)
    x = _solve_angles(W, np.full(W.shape[0], math.pi / 4.0), rng)
    return x, _solve_angles(W, np.full(W.shape[0], 5.0 * math.pi / 4.0), rng)


def cosine_antipodal_pair(features: CosineBiasFeatures, *, random_state=0) -> tuple[np.ndarray, np.ndarray]:
    r"""``(x, x')`` with :math:`\cos(\omega_j^\top x + b_j) = 1` and :math:`\cos(\omega_j^\top x' + b_j) = -1`.

    Then :math:`\|\phi(x)\|_2 = \|\phi(x')\|_2 = \sqrt{2a}` and
    :math:`\|\phi(x)-\phi(x')\|_2 = 2\sqrt{2a}`: :math:`\sqrt2` times the
    :math:`2\sqrt a` that a calibration to :math:`2/N` assumes. Exact when
    :math:`J \le D`; otherwise the best points found by a multi-start search.

    Parameters
    ----------
    features : CosineBiasFeatures
        Fitted :math:`\sqrt{2a/J}\cos(\omega_j^\top x + b_j)` features; their frequencies
        ``frequencies_`` and offsets ``offsets_`` are public.
    random_state : int, Generator or None
        Seed of the multi-start search, used only when the angles cannot be solved
        exactly (default 0: reproducible).

    Returns
    -------
    x, x_prime : ndarray of shape (d,)
        The two input points: :math:`\omega_j^\top x + b_j \equiv 0` and
        :math:`\omega_j^\top x' + b_j \equiv \pi \pmod{2\pi}` (exactly or approximately).
    """
    if not isinstance(features, CosineBiasFeatures) or not hasattr(features, "frequencies_"):
        raise ValueError(f"features must be fitted CosineBiasFeatures, got {features!r}.")
    W, b = features.frequencies_, features.offsets_
    rng = np.random.default_rng(random_state)
    x = _solve_angles(W, -b, rng)
    return x, _solve_angles(W, math.pi - b, rng)


def best_pair(candidates, score: Callable[[np.ndarray, np.ndarray], float], *,
              include_same: bool = False) -> tuple[int, int, float]:
    """Indices ``(i, j)`` of the candidate pair with the largest ``score(c_i, c_j)`` (exhaustive).

    ``score`` should be symmetric or the caller should want ordered pairs;
    all ordered pairs are tried (:math:`m^2` calls of ``score``); ties keep the first pair in
    row-major order.

    Parameters
    ----------
    candidates : array-like of shape (m, d)
        Public candidate rows, 2-D (at least two rows unless ``include_same``).
    score : callable
        ``score(c_i, c_j) -> float`` for two rows of shape (d,); larger is worse for privacy.
    include_same : bool
        Also try :math:`i = j` (default False).

    Returns
    -------
    i, j : int
        Row indices of the best ordered pair.
    best_score : float
        ``score(candidates[i], candidates[j])``.

    Examples
    --------
    >>> from dpkme.audit import best_pair
    >>> best_pair([[0.0], [1.0], [5.0]], lambda a, b: float(abs(a[0] - b[0])))
    (0, 2, 5.0)
    """
    C = check_array(candidates, name="candidates")
    best = (-1, -1, -math.inf)
    for i in range(C.shape[0]):
        for j in range(C.shape[0]):
            if i == j and not include_same:
                continue
            s = float(score(C[i], C[j]))
            if s > best[2]:
                best = (i, j, s)
    if best[0] < 0:
        raise ValueError("best_pair needs at least two candidates.")
    return best
