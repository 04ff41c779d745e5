r"""Sensitivities of kernel mean embeddings under an explicit neighbouring relation.

Neighbouring relations
----------------------
``"replace-one"`` (bounded DP, the paper's Definition 1): :math:`D \sim D'` if
they have the same size :math:`N` and differ in one row. :math:`N` is public.

``"add-remove"`` (unbounded DP): :math:`D'` is :math:`D` with one row added or
removed. The embedding is then normalised by a *public* size :math:`N`
(declared, not counted from the data), i.e. the released statistic is
:math:`\frac1N\sum_{x\in D} k(x,\cdot)`; its change is a single
:math:`k(x,\cdot)/N`.

RKHS sensitivity of the empirical KME (Lemma 13 of Balog et al. 2018, tightened)
----------------------------------------------------------------------------------
With :math:`k(x,x) \le a` for all x and :math:`k(x, x') \ge k_{\min}` for all x, x'
in the (declared) domain,

.. math::
    \|\hat\mu_D - \hat\mu_{D'}\|_{\mathcal H} = \frac1N\|k(x,\cdot) - k(x',\cdot)\|_{\mathcal H}
    = \frac1N\sqrt{k(x,x) + k(x',x') - 2k(x,x')} \le \frac{\sqrt{2a - 2k_{\min}}}{N}

under replace-one. For the non-negative kernels of :mod:`dpkme.kernels`
:math:`k_{\min}\ge 0`, so :math:`\Delta = \sqrt{2a}/N` (the paper's
triangle-inequality bound is :math:`2\sqrt a/N`, available as ``mode="paper"``).
On a declared box the minimum kernel value over the box gives a smaller
:math:`\Delta`. Under add/remove :math:`\Delta = \sqrt a/N`.

Projections (Algorithm 1) and random-feature maps with
:math:`\|\phi(x)\|_2 \le b` (Algorithm 2, Proposition 9) inherit these bounds:
a projection is 1-Lipschitz, and :math:`\|\phi(x) - \phi(x')\|_2 \le 2b`
(replace-one), :math:`\|\phi(x)\|_2 \le b` (add/remove).
"""

from __future__ import annotations

import math
from typing import Any

import numpy as np
import numpy.typing as npt

from .._validation import check_array, check_delta, check_epsilon, check_in, check_positive_float, check_positive_int
from ..kernels.kernel import Kernel

__all__ = ["NEIGHBOURING", "SENSITIVITY_MODES", "kme_sensitivity", "feature_mean_sensitivity", "check_private_kernel",
           "check_release_args", "check_domain", "enforce_domain"]

NEIGHBOURING = ("replace-one", "add-remove")
SENSITIVITY_MODES = ("tight", "paper")


def check_private_kernel(kernel: object) -> Kernel:
    r"""Refuse kernels that the privacy proofs do not cover (:math:`k(x,x) > 1`).

    Every sensitivity here assumes :math:`a = \sup_x k(x,x) \le 1` (Balog et al.
    2018, Lemma 13; :math:`\|\phi(x)\|_2 \le 1` for random features).

    Parameters
    ----------
    kernel : Kernel
        A :mod:`dpkme.kernels` kernel; its ``diag_value`` :math:`a` must be at
        most 1 (amplitude :math:`\le 1`).

    Returns
    -------
    Kernel
        ``kernel`` itself.

    Examples
    --------
    >>> from dpkme.kernels import GaussianKernel
    >>> from dpkme.privacy.sensitivity import check_private_kernel
    >>> check_private_kernel(GaussianKernel(lengthscale=1.0)).diag_value
    1.0
    """
    if not isinstance(kernel, Kernel):
        raise ValueError(f"kernel must be a dpkme Kernel, got {kernel!r}.")
    if kernel.diag_value > 1.0:
        raise ValueError(
            f"the privacy guarantee needs k(x, x) <= 1, but this kernel has k(x, x) = {kernel.diag_value}; "
            "use amplitude <= 1."
        )
    return kernel


def check_release_args(kernel: object, epsilon: float, delta: float, *, calibration: str, neighbouring: str,
                       sensitivity: str | None = None,
                       calibrations: tuple[str, ...] = ("analytic", "classic")) -> tuple[float, float]:
    r"""Preconditions shared by every Gaussian-noise release: returns validated ``(epsilon, delta)``.

    Refuses kernels with :math:`k(x,x) > 1`, :math:`\varepsilon \le 0`,
    :math:`\delta \notin (0, 1)`, and unknown calibration, neighbouring relation
    or sensitivity mode, each with a ValueError naming the value.

    Parameters
    ----------
    kernel : Kernel
        The release's kernel (:func:`check_private_kernel`).
    epsilon : float
        > 0 and finite.
    delta : float
        In (0, 1).
    calibration : str
        The release's calibration method; must be one of ``calibrations``.
    neighbouring : {"replace-one", "add-remove"}
        The neighbouring relation (:data:`NEIGHBOURING`).
    sensitivity : {"tight", "paper"} or None, optional
        The sensitivity mode (:data:`SENSITIVITY_MODES`); ``None`` skips the check.
    calibrations : tuple of str, default ("analytic", "classic")
        The calibration methods this release accepts (the GP release adds ``"hall"``).

    Returns
    -------
    epsilon, delta : float
        The validated privacy parameters.
    """
    check_private_kernel(kernel)
    epsilon = check_epsilon(epsilon)
    delta = check_delta(delta)
    check_in(calibration, calibrations, name="calibration")
    check_in(neighbouring, NEIGHBOURING, name="neighbouring")
    if sensitivity is not None:
        check_in(sensitivity, SENSITIVITY_MODES, name="sensitivity")
    return epsilon, delta


def check_domain(domain: tuple[npt.ArrayLike, npt.ArrayLike],
                 dim: int) -> tuple[npt.NDArray[np.float64], npt.NDArray[np.float64]]:
    """Validate a declared box ``(lower, upper)`` for data with ``dim`` columns.

    Each bound is a number (the same for every column) or a vector of ``dim``
    finite numbers, with ``lower <= upper`` in every column. ValueError
    otherwise, naming the problem. The box must be public (declared from
    outside knowledge, never read off the private data).

    Parameters
    ----------
    domain : (lower, upper)
        The declared box: two numbers or two vectors of length ``dim``.
    dim : int
        Number of data columns :math:`D \\ge 1`.

    Returns
    -------
    lower, upper : ndarray (dim,)
        The two bounds as float vectors.

    Examples
    --------
    >>> from dpkme.privacy.sensitivity import check_domain
    >>> check_domain((0.0, [1.0, 2.0]), 2)
    (array([0., 0.]), array([1., 2.]))
    """
    dim = check_positive_int(dim, name="dim")
    try:
        lower, upper = domain
    except (TypeError, ValueError):
        raise ValueError(f"domain must be a pair (lower, upper) of numbers or length-{dim} vectors, "
                         f"got {domain!r:.80}.") from None
    bounds = []
    b: Any  # a number (broadcast to a list of dim numbers below) or a vector
    for name, b in (("lower", lower), ("upper", upper)):
        if np.ndim(b) == 0:
            b = [b] * dim
        v = check_array(b, name=f"domain {name} bound", ndim=1)  # ValueError on text / non-finite values
        if v.shape[0] != dim:
            raise ValueError(f"the domain's {name} bound has {v.shape[0]} entries but X has {dim} columns.")
        bounds.append(v)
    lo, hi = bounds
    bad = np.flatnonzero(hi < lo)
    if bad.size:
        raise ValueError(f"the declared domain needs lower <= upper in every column; column {int(bad[0])} has "
                         f"lower={lo[bad[0]]!r} > upper={hi[bad[0]]!r}.")
    return lo, hi


def enforce_domain(X: npt.NDArray[np.float64], domain: tuple[npt.ArrayLike, npt.ArrayLike] | None, *,
                   clip: bool = False, name: str = "X") -> npt.NDArray[np.float64]:
    r"""Make the data satisfy the declared box that its sensitivity assumes: refuse it, or clip to it.

    A declared box :math:`[l, u]` lowers the replace-one sensitivity of
    :func:`kme_sensitivity` to :math:`\sqrt{2a - 2k_{\min}}/N` with
    :math:`k_{\min}` the smallest kernel value over the box. That bound holds
    only for datasets inside the box: one row outside can move the embedding
    by more, and the released noise is then too small. So every mechanism
    that accepts ``domain`` calls this where it reads ``X``:

    * ``clip=False`` (default): rows outside the box are refused with a
      ValueError that gives how many rows lie outside and in which columns,
      never their values;
    * ``clip=True``: every row is clipped to the box coordinate-wise,
      :math:`x \mapsto \min(\max(x, l), u)`. Clipping is applied to each row
      separately, so datasets that differ in one row still differ in one row
      after clipping and the mechanism on the clipped data is
      :math:`(\varepsilon,\delta)`-DP for the original data under the same
      neighbouring relation; the clipped values enter the release, which
      ``params`` records.

    The box must be public (declared, not read off the private data).

    Parameters
    ----------
    X : array (N, D)
        Private data, already validated.
    domain : (lower, upper) or None
        See :func:`check_domain`. ``None``: nothing to enforce (``X`` is returned as is).
    clip : bool
        Clip to the box instead of refusing (ValueError when no box is declared).
    name : str
        Name of the data in messages.

    Returns
    -------
    ndarray
        ``X`` itself when it lies in the box (or no box is declared), else a clipped copy.

    Examples
    --------
    >>> import numpy as np
    >>> from dpkme.privacy.sensitivity import enforce_domain
    >>> enforce_domain(np.array([[0.5, 2.0], [1.5, -1.0]]), (0.0, 1.0), clip=True)
    array([[0.5, 1. ],
           [1. , 0. ]])
    """
    if not isinstance(clip, (bool, np.bool_)):
        raise ValueError(f"clip must be True or False, got {clip!r:.80}.")
    if domain is None:
        if clip:
            raise ValueError("clip=True needs a declared domain (lower, upper) to clip to.")
        return X
    X = np.asarray(X)
    lo, hi = check_domain(domain, X.shape[1])
    outside = (X < lo) | (X > hi)
    if not outside.any():
        return X
    if clip:
        return np.clip(X, lo, hi)
    rows = int(outside.any(axis=1).sum())
    cols = np.flatnonzero(outside.any(axis=0))
    per_col = ", ".join(f"column {int(j)}: {int(outside[:, j].sum())} row(s)" for j in cols[:10])
    more = f", and {cols.size - 10} more column(s)" if cols.size > 10 else ""
    raise ValueError(
        f"{rows} of {X.shape[0]} rows of {name} lie outside the declared domain ({per_col}{more}); the sensitivity "
        "was lowered for that box, so the guarantee would not hold. Declare a box that contains every possible row "
        "(from public knowledge, not from the data), or pass clip=True to clip each row to the box.")


def kme_sensitivity(
    *,
    n: int,
    kernel: Kernel,
    neighbouring: str = "replace-one",
    mode: str = "tight",
    domain: tuple[npt.ArrayLike, npt.ArrayLike] | None = None,
) -> float:
    r"""L2 (RKHS-norm) sensitivity of :math:`\hat\mu_X = \frac1N\sum_n k(x_n, \cdot)`.

    Parameters
    ----------
    n : int
        Public dataset size :math:`N`.
    kernel : Kernel
        Must satisfy :math:`k(x,x) \le 1`.
    neighbouring : {"replace-one", "add-remove"}, default "replace-one"
        The neighbouring relation (module docstring).
    mode : {"tight", "paper"}, default "tight"
        ``"tight"``: :math:`\sqrt{2a - 2k_{\min}}/N` (replace-one) or
        :math:`\sqrt a/N` (add/remove). ``"paper"``: :math:`2\sqrt a/N`
        (Lemma 13 of Balog et al. 2018) regardless of the relation.
    domain : (lower, upper), optional
        A box declared by the user (public), used for :math:`k_{\min}`. The
        bound is only valid for data inside the box: the mechanisms enforce it
        where they read the data (:func:`enforce_domain`, refuse or
        ``clip=True``).

    Returns
    -------
    float
        :math:`\Delta_2`.

    Examples
    --------
    >>> from dpkme.kernels import GaussianKernel
    >>> from dpkme.privacy.sensitivity import kme_sensitivity
    >>> k = GaussianKernel(lengthscale=1.0)
    >>> kme_sensitivity(n=100, kernel=k), kme_sensitivity(n=100, kernel=k, mode="paper")   # sqrt(2)/N, 2/N
    (0.01414213562373095, 0.02)
    >>> round(kme_sensitivity(n=100, kernel=k, domain=([0.0], [1.0])), 6)   # sqrt(2 - 2 e^{-1/2}) / N on [0, 1]
    0.008871
    """
    n = check_positive_int(n, name="n")
    check_private_kernel(kernel)
    check_in(neighbouring, NEIGHBOURING, name="neighbouring")
    check_in(mode, SENSITIVITY_MODES, name="mode")
    a = kernel.diag_value
    if mode == "paper":
        return 2.0 * math.sqrt(a) / n
    if neighbouring == "add-remove":
        return math.sqrt(a) / n
    k_min = 0.0 if kernel.nonnegative else -a
    if domain is not None:
        lower, upper = domain
        k_min = max(k_min, kernel.lower_bound_on_box(lower, upper))
    return math.sqrt(max(2.0 * a - 2.0 * k_min, 0.0)) / n


def feature_mean_sensitivity(*, n: int, norm_bound: float = 1.0, neighbouring: str = "replace-one") -> float:
    r"""L2 sensitivity of the mean feature vector :math:`\frac1N\sum_n\phi(x_n)`.

    With :math:`\|\phi(x)\|_2 \le b`: :math:`2b/N` under replace-one (Proposition 9
    of Balog et al. 2018, eq. 25-27) and :math:`b/N` under add/remove. Unlike the
    exact kernel, the random-feature kernel :math:`\phi(x)^\top\phi(x')` takes
    negative values (down to about :math:`-b^2` for far-apart points), so the
    :math:`\sqrt2` improvement of :func:`kme_sensitivity` does not carry over.

    Parameters
    ----------
    n : int
        Public dataset size :math:`N \ge 1`.
    norm_bound : float, default 1.0
        :math:`b \ge \sup_x\|\phi(x)\|_2`, at most 1 (the paired cos/sin random
        features of Algorithm 2 have norm exactly 1).
    neighbouring : {"replace-one", "add-remove"}, default "replace-one"
        The neighbouring relation.

    Returns
    -------
    float
        :math:`\Delta_2 = 2b/N` (replace-one) or :math:`b/N` (add/remove).

    Examples
    --------
    >>> from dpkme.privacy.sensitivity import feature_mean_sensitivity
    >>> feature_mean_sensitivity(n=1000), feature_mean_sensitivity(n=1000, neighbouring="add-remove")
    (0.002, 0.001)
    """
    n = check_positive_int(n, name="n")
    b = check_positive_float(norm_bound, name="norm_bound")
    if b > 1.0 + 1e-9:
        raise ValueError(f"the privacy guarantee needs feature norms <= 1, got a bound of {b}.")
    check_in(neighbouring, NEIGHBOURING, name="neighbouring")
    return (2.0 * b if neighbouring == "replace-one" else b) / n
