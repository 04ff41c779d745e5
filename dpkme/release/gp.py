r"""Gaussian-process release of the kernel mean embedding as a function (Hall, Rinaldo & Wasserman).

The released object is a *function*, observed on a public finite set of points
(a tensor grid over a declared box, or query points):

.. math::
    \tilde f = f_D + s\,G, \qquad G \sim \mathcal{GP}(0, k_f),

where :math:`f_D` is the empirical KME :math:`\hat\mu_D = \frac1N\sum_n k(x_n,\cdot)`
(``normalisation="kme"``, :math:`k_f = k`) or the kernel density estimate
(``normalisation="kde"``, below), :math:`s` is a noise multiplier and
:math:`\Delta` the sensitivity of :math:`f_D` in the RKHS :math:`\mathcal H(k_f)`.

Guarantee
---------
Hall, Rinaldo & Wasserman (Proposition 2.1 of the short version in the project's
papers, 003; the JMLR 2013 version states the same result) show that
:math:`f_D + s G` is :math:`(\varepsilon,\delta)`-DP (w.r.t. the cylinder
:math:`\sigma`-field of sample paths) if
:math:`\sup_{D\sim D'}\|f_D - f_{D'}\|_{\mathcal H} \le \Delta` and
:math:`s \ge \Delta\,c(\delta)/\varepsilon` with :math:`c(\delta) = \sqrt{2\log(2/\delta)}`.
That constant comes from the classic Gaussian-mechanism argument and **fails the
exact condition for large ε** (at δ = 1e-5 beyond ε ≈ 9.4; at δ = 1e-3 beyond
ε ≈ 8.5). Here the default is the analytic Gaussian mechanism:

*At a finite set of points* :math:`P = (p_1,\dots,p_Q)` the release is
:math:`Y = f_D(P) + s\,Z`, :math:`Z\sim\mathcal N(0, K)`, :math:`K = k_f(P, P)`.
With :math:`g = f_D - f_{D'}\in\mathcal H` and :math:`h = g(P) = (\langle g,
k_f(p_i,\cdot)\rangle)_i`, the vector :math:`h` lies in the range of :math:`K`
and

.. math:: h^\top K^{+} h = \|\Pi_P\, g\|_{\mathcal H}^2 \le \|g\|_{\mathcal H}^2 \le \Delta^2,

where :math:`\Pi_P` is the orthogonal projection onto
:math:`\operatorname{span}\{k_f(p_i,\cdot)\}` (:func:`mahalanobis_sensitivity`
computes the left-hand side; equality holds when the two differing records
are among the points). Whitening by :math:`K^{+1/2}` turns the release into
the spherical Gaussian mechanism with L2 sensitivity :math:`\le\Delta`, so
:math:`s = \sigma_{\text{analytic}}(\varepsilon,\delta,\Delta)` (Balle & Wang
2018, :func:`dpkme.privacy.calibration.calibrate_gaussian`) gives
:math:`(\varepsilon,\delta)`-DP for every ε; by the same limiting argument as
Hall et al. it extends to the whole path. At δ = 1e-5 it needs 38 % less
noise than :math:`c(\delta)` at ε = 0.1, 24 % at ε = 1 and 10 % at ε = 5
(55 % at δ = 1e-3, ε = 0.1). ``calibration="hall"`` uses :math:`c(\delta)`
and refuses (ValueError with the true δ from :func:`dpkme.privacy.calibration.gaussian_delta`)
where it fails the exact condition.

Sensitivities (:func:`gp_sensitivity`):

* ``"kme"``: :math:`\Delta = \|\hat\mu_D - \hat\mu_{D'}\|_{\mathcal H(k)}`, i.e.
  :func:`dpkme.privacy.sensitivity.kme_sensitivity`: :math:`\sqrt{2a}/N` (replace-one,
  non-negative kernel, ``"tight"``), :math:`\sqrt a/N` (add-remove, public N),
  or the paper's :math:`2\sqrt a/N` (``"paper"``), with :math:`a = k(x,x)\le 1`.
* ``"kde"``: Hall et al.'s example :math:`f_D(x) = \frac1N\sum_n K_h(x_n, x)`
  with the density kernel :math:`K_h = c\,k`, :math:`c = 1/\int k(0, u)\,du`
  (Gaussian: :math:`K_h(x,y) = (2\pi\ell^2)^{-D/2} e^{-\|x-y\|^2/(2\ell^2)}`;
  Laplacian: :math:`(2\ell)^{-D} e^{-\|x-y\|_1/\ell}`). Its RKHS is
  :math:`\mathcal H(ck)` with :math:`\|f\|^2_{\mathcal H(ck)} = \|f\|^2_{\mathcal H(k)}/c`,
  so :math:`\Delta_{\text{kde}} = \sqrt c\,\Delta_{\text{kme}}`; the paper's
  :math:`\frac2N\sup_x\|K_h(x,\cdot)\| = \frac{2}{N(\sqrt{2\pi}\ell)^{D/2}}` is the
  ``"paper"`` mode. The noise is :math:`s\,\mathcal{GP}(0, ck)`. The KDE release
  is exactly :math:`c` times the KME release (same privacy, same relative error).

Sampling :math:`\mathcal N(0, K)` exactly, and why the jitter is safe
---------------------------------------------------------------------
Kernel matrices on fine grids are numerically singular, so the square root is
taken of :math:`K + \tau I` (Cholesky), with :math:`\tau` chosen so that the
covariance actually used **dominates** :math:`K`: :math:`LL^\top \succeq K`.
Domination is what the analysis needs: if the noise covariance is
:math:`\Sigma\succeq K`, then :math:`h^\top\Sigma^{-1}h \le h^\top K^{+}h` for
:math:`h\in\operatorname{range}(K)`, so the Mahalanobis sensitivity can only
drop; more noise never hurts privacy. Clipping the tiny negative eigenvalues of
the *computed* :math:`K` to zero is not enough on its own: it dominates the
computed matrix, but that differs from the true :math:`K` by rounding errors,
so a direction in which the true :math:`K` has a tiny positive variance (and
:math:`h` a tiny component) could receive no noise at all, which no finite ε
covers. Adding :math:`\tau I` with :math:`\tau` above the error bounds closes
that gap: then :math:`LL^\top \succeq K_{\text{true}}`. :math:`\tau` is
:math:`2(n\gamma_{n+1}a + n\,\eta\,a)` with :math:`\gamma_{n+1}` the Cholesky
backward-error constant (:math:`|LL^\top - (K+\tau I)| \le \gamma_{n+1}|L||L^\top|`,
Higham 2002, Thm 10.3) and :math:`\eta` a bound on the relative error of the
kernel evaluation; it is multiplied by 10 until the factorisation succeeds.
At 200 points per axis :math:`\tau\approx 2\times10^{-11}`: the extra noise variance is
negligible.

For a product kernel (Gaussian, Laplacian) on a tensor grid,
:math:`K = a\bigotimes_d K_d` with 1-D factors :math:`K_d`, and
:math:`(L_1\otimes\cdots\otimes L_D)\,\mathrm{vec}(Z)` (applied axis by axis,
e.g. :math:`L_1 Z L_2^\top` in 2-D) samples :math:`\mathcal N(0, a\bigotimes_d L_dL_d^\top)`,
which dominates :math:`K` because :math:`A\succeq B\succeq0`, :math:`C\succeq E\succeq0`
imply :math:`A\otimes C\succeq B\otimes E`. A 200 x 200 grid then costs two
200 x 200 factorisations. Other kernels and scattered query points use one dense
Cholesky (at most :data:`DEFAULT_MAX_DENSE_POINTS` points).

The released function is not in the RKHS
-----------------------------------------
A sample path of :math:`\mathcal{GP}(0,k)` lies in :math:`\mathcal H(k)` with
probability 0 when :math:`\mathcal H(k)` is infinite-dimensional (Karhunen–Loève:
:math:`G = \sum_i\sqrt{\lambda_i}\xi_i e_i` has :math:`\|G\|^2_{\mathcal H} =
\sum_i\xi_i^2 = \infty`). So :math:`\|\tilde f - \hat\mu_D\|_{\mathcal H} = \infty`:
the release can only be compared in :math:`L_2` or on points
(:func:`l2_error_on_grid`), and it is not a weighted synthetic dataset. This is
why Balog et al. (2018) privatise a *finite-dimensional* projection instead
(Algorithms 1 and 2), whose RKHS error is finite and measurable.

References
----------
R. Hall, A. Rinaldo, L. Wasserman. Differential privacy for functions and
functional data. JMLR 14, 2013 (short version: the project's paper 003,
Proposition 2.1 and the kernel density example of Section 3).

B. Balle, Y.-X. Wang. Improving the Gaussian mechanism for differential privacy.
ICML 2018.

N. J. Higham. Accuracy and Stability of Numerical Algorithms, 2nd ed., 2002.
"""

from __future__ import annotations

import json
import math
import time
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass, field
from typing import Any, cast

import numpy as np
import numpy.typing as npt
from scipy.linalg import LinAlgError, cholesky

from .._blocked import parallel_map, single_threaded_blas
from .._validation import (
    check_array,
    check_box,
    check_delta,
    check_epsilon,
    check_in,
    check_positive_int,
    noise_rng,
    public_size,
)
from .._version import __version__
from ..kernels.kernel import GaussianKernel, Kernel, LaplacianKernel
from ..privacy.accounting import PrivacyCharge, gaussian_charge
from ..privacy.calibration import GaussianCalibration, calibrate_gaussian, gaussian_delta
from ..privacy.result import charge_record
from ..privacy.sensitivity import check_domain, check_release_args, enforce_domain, kme_sensitivity
from ..privacy.spec import PrivacySpec, resolve, resolve_noise
from .result import Release

__all__ = [
    "CALIBRATIONS",
    "NORMALISATIONS",
    "DEFAULT_MAX_DENSE_POINTS",
    "MAX_GRID_POINTS",
    "NOTES",
    "GPSampler",
    "GPRelease",
    "grid_axes",
    "grid_points",
    "trapezoid_weights",
    "l2_error_on_grid",
    "kde_normaliser",
    "gp_sensitivity",
    "hall_constant",
    "calibrate_gp",
    "gp_sampler",
    "true_function",
    "gp_release",
    "evaluate_on_grid",
    "gp_expected_l2_error",
    "mahalanobis_sensitivity",
]

CALIBRATIONS = ("analytic", "hall")
NORMALISATIONS = ("kme", "kde")
#: Largest number of points for the dense (non-Kronecker) path: one Cholesky of
#: a Q x Q kernel matrix (Q = 4000: ~1 s single-threaded, 128 MB).
DEFAULT_MAX_DENSE_POINTS = 4000
#: Largest tensor grid (values are Q float64; the factors are per axis).
MAX_GRID_POINTS = 4_000_000
#: Largest number of points on one grid axis (one n x n Cholesky per axis).
MAX_AXIS_POINTS = 4000
_EPS = float(np.finfo(float).eps)
#: Relative error bound of one kernel value: direct 1-D formula (per-axis factors)
#: and blocked GEMM-based evaluation (dense path, see dpkme.kernels).
_ETA_AXIS = 4.0 * _EPS
_ETA_DENSE = 1e-12

NOTES = {
    "not_in_rkhs": (
        "The released function f + s*G is not in the RKHS: a Gaussian-process sample path has infinite RKHS "
        "norm (Karhunen-Loeve: ||G||_H^2 = sum of xi_i^2 = infinity), so its RKHS distance to the true KME is "
        "infinite. It can be compared only pointwise or in L2 on a grid. Balog et al. privatise a "
        "finite-dimensional projection instead (Algorithms 1 and 2), whose RKHS error is finite."),
    "finite_points": (
        "At a finite set of points the release is a Gaussian mechanism with covariance K = k(P, P); the "
        "Mahalanobis sensitivity sqrt(h^T K^+ h) of h = f_D(P) - f_D'(P) is at most the RKHS sensitivity, "
        "so the analytic Gaussian calibration is valid for every epsilon."),
    "hall_constant": (
        "Hall et al.'s constant c(delta) = sqrt(2 log(2/delta)) comes from the classic Gaussian mechanism "
        "argument; it violates the exact (Balle-Wang) condition for large epsilon (about 9.4 at delta = 1e-5) "
        "and adds more noise than the analytic calibration everywhere."),
    "jitter": (
        "Noise is sampled with covariance L L^T >= K (a tiny jitter tau*I is added before the Cholesky "
        "factorisation, with tau above the rounding error): more noise than needed, never less, so the "
        "guarantee is kept."),
}


# --------------------------------------------------------------------------- grids
def _check_axes(grid: Iterable[npt.ArrayLike], dim: int | None = None) -> tuple[np.ndarray, ...]:
    if isinstance(grid, np.ndarray) and grid.ndim == 1:
        grid = (grid,)
    try:
        axes = tuple(grid)
    except TypeError:
        raise ValueError(f"grid must be a sequence of 1-D coordinate arrays (one per column), got {grid!r:.80}.") from None
    if not axes:
        raise ValueError("grid has no axes; give one 1-D coordinate array per data column.")
    out = []
    for d, a in enumerate(axes):
        arr = check_array(a, name=f"grid axis {d}", ndim=1)
        if arr.shape[0] > MAX_AXIS_POINTS:
            raise ValueError(f"grid axis {d} has {arr.shape[0]} points, more than {MAX_AXIS_POINTS}.")
        if arr.shape[0] > 1 and np.any(np.diff(arr) <= 0):
            raise ValueError(f"grid axis {d} must be strictly increasing.")
        out.append(arr)
    if dim is not None and len(out) != dim:
        raise ValueError(f"grid has {len(out)} axes but the data has {dim} columns.")
    q = math.prod(a.shape[0] for a in out)
    if q > MAX_GRID_POINTS:
        raise ValueError(f"the grid has {q:,} points, more than MAX_GRID_POINTS = {MAX_GRID_POINTS:,}.")
    return tuple(out)


def grid_axes(lower: npt.ArrayLike, upper: npt.ArrayLike,
              points_per_axis: int | Sequence[int]) -> tuple[np.ndarray, ...]:
    """Coordinates of a regular tensor grid over a **declared** (public) box.

    Parameters
    ----------
    lower, upper : array-like (D,)
        Box corners, ``lower < upper``.
    points_per_axis : int or sequence of D ints (>= 2)
        Grid points per coordinate, between 2 and ``MAX_AXIS_POINTS``.

    Returns
    -------
    tuple of D 1-D arrays
        ``np.linspace(lower[d], upper[d], n_d)`` for each coordinate.

    Examples
    --------
    >>> from dpkme.release.gp import grid_axes
    >>> grid_axes([0.0, 0.0], [1.0, 2.0], [2, 3])
    (array([0., 1.]), array([0., 1., 2.]))
    """
    lo, hi = check_box(lower, upper)
    if np.ndim(points_per_axis) == 0:
        ppa = [check_positive_int(points_per_axis, name="points_per_axis", minimum=2,
                                  maximum=MAX_AXIS_POINTS)] * lo.shape[0]
    else:
        ppa = [check_positive_int(p, name="points_per_axis", minimum=2, maximum=MAX_AXIS_POINTS)
               for p in cast("Sequence[int]", points_per_axis)]
        if len(ppa) != lo.shape[0]:
            raise ValueError(f"points_per_axis has {len(ppa)} entries for a {lo.shape[0]}-D box.")
    return _check_axes([np.linspace(lo[d], hi[d], p) for d, p in enumerate(ppa)])


def grid_points(grid: Iterable[npt.ArrayLike]) -> np.ndarray:
    """The points of a tensor grid as a ``(Q, D)`` array in C order (last coordinate fastest).

    Parameters
    ----------
    grid : sequence of D 1-D arrays
        Strictly increasing grid axes (:func:`grid_axes`); a single 1-D array
        is one axis.

    Returns
    -------
    ndarray (Q, D)
        The :math:`Q = \\prod_d n_d` grid points; row ``i`` is the point of
        flat index ``i`` of a grid-shaped array.

    Examples
    --------
    >>> from dpkme.release.gp import grid_axes, grid_points
    >>> grid_points(grid_axes([0.0, 0.0], [1.0, 2.0], [2, 3])).tolist()
    [[0.0, 0.0], [0.0, 1.0], [0.0, 2.0], [1.0, 0.0], [1.0, 1.0], [1.0, 2.0]]
    """
    axes = _check_axes(grid)
    mesh = np.meshgrid(*axes, indexing="ij")
    return np.column_stack([g.reshape(-1) for g in mesh])


def trapezoid_weights(grid: Iterable[npt.ArrayLike]) -> np.ndarray:
    """Product trapezoid-rule weights on a tensor grid, shaped like the grid.

    :math:`\\sum_i w_i f(p_i) \\approx \\int_{\\text{box}} f`. An axis with one
    point gets weight 1 (no integration along it).

    Parameters
    ----------
    grid : sequence of D 1-D arrays
        Strictly increasing grid axes (:func:`grid_axes`).

    Returns
    -------
    ndarray, shape (n_1, ..., n_D)
        Non-negative weights summing to the box's volume.

    Examples
    --------
    >>> from dpkme.release.gp import grid_axes, trapezoid_weights
    >>> trapezoid_weights(grid_axes([0.0, 0.0], [1.0, 2.0], [2, 3]))
    array([[0.25, 0.5 , 0.25],
           [0.25, 0.5 , 0.25]])
    """
    axes = _check_axes(grid)
    w = np.ones(())
    for a in axes:
        if a.shape[0] == 1:
            wd = np.ones(1)
        else:
            h = np.diff(a)
            wd = np.zeros(a.shape[0])
            wd[:-1] += h / 2.0
            wd[1:] += h / 2.0
        w = np.multiply.outer(w, wd)
    return w


def l2_error_on_grid(values: npt.ArrayLike, reference: npt.ArrayLike, grid: Iterable[npt.ArrayLike] | None = None, *,
                     kind: str = "integral") -> float:
    r"""L2 distance between two functions tabulated on the same points.

    ``kind="integral"``: :math:`\bigl(\int (f - g)^2\bigr)^{1/2}` over the grid's
    box by the product trapezoid rule (``grid`` required; ``values`` may be
    grid-shaped or flat in C order). ``kind="rms"``: root mean square over the
    points (no grid needed). Compare the GP release, Algorithm 1/2 releases
    (:func:`evaluate_on_grid`) and the true function with the same call.
    Reading the true function makes the result **private** (display only).

    Parameters
    ----------
    values, reference : array-like
        The two functions on the same points (the same number of finite
        entries, grid-shaped or flat in C order).
    grid : sequence of D 1-D arrays, optional
        The grid's axes; required for ``kind="integral"``.
    kind : {"integral", "rms"}, default "integral"
        Integral over the box (trapezoid rule) or root mean square over the points.

    Returns
    -------
    float
        The L2 distance (units of the function values, times
        :math:`\text{volume}^{1/2}` for ``"integral"``).

    Examples
    --------
    >>> from dpkme.release.gp import grid_axes, l2_error_on_grid
    >>> l2_error_on_grid([1.0] * 6, [0.0] * 6, grid_axes([0.0, 0.0], [1.0, 2.0], [2, 3]))  # sqrt(area 2)
    1.4142135623730951
    >>> l2_error_on_grid([1.0, 3.0], [0.0, 0.0], kind="rms")
    2.23606797749979
    """
    check_in(kind, ("integral", "rms"), name="kind")
    v = np.asarray(values, dtype=float)
    r = np.asarray(reference, dtype=float)
    if v.size != r.size:
        raise ValueError(f"values have {v.size} entries but reference has {r.size}.")
    diff2 = (v.reshape(-1) - r.reshape(-1)) ** 2
    if not np.isfinite(diff2).all():
        raise ValueError("values or reference contain non-finite entries.")
    if kind == "rms":
        return float(math.sqrt(diff2.mean()))
    if grid is None:
        raise ValueError("kind='integral' needs the grid (axes); use kind='rms' for scattered points.")
    w = trapezoid_weights(grid).reshape(-1)
    if w.size != diff2.size:
        raise ValueError(f"the grid has {w.size} points but {diff2.size} values were given.")
    return float(math.sqrt(max(float(w @ diff2), 0.0)))


# --------------------------------------------------------------------------- sensitivity and calibration
def kde_normaliser(kernel: Kernel, dim: int) -> float:
    r""":math:`c = 1/\int_{\mathbb R^D} k(0, u)\,du`, so that :math:`c\,k(x,\cdot)` is a probability density.

    Gaussian: :math:`1/(a(2\pi\ell^2)^{D/2})`; Laplacian (L1): :math:`1/(a(2\ell)^D)`.
    Other kernels are refused (their normalisers are not implemented).

    Parameters
    ----------
    kernel : GaussianKernel or LaplacianKernel
        The kernel, with amplitude :math:`a` and length scale :math:`\ell`.
    dim : int
        Dimension :math:`D \ge 1` of the data.

    Returns
    -------
    float
        :math:`c > 0` (units of :math:`\text{length}^{-D}`); a ValueError if it
        is outside the float range.

    Examples
    --------
    >>> from dpkme.kernels import GaussianKernel
    >>> from dpkme.release.gp import kde_normaliser
    >>> kde_normaliser(GaussianKernel(lengthscale=1.0), 1)      # 1 / sqrt(2 pi)
    0.3989422804014327
    """
    dim = check_positive_int(dim, name="dim")
    a, ell = kernel.diag_value, kernel.lengthscale
    if isinstance(kernel, GaussianKernel):
        log_c = -math.log(a) - (dim / 2.0) * math.log(2.0 * math.pi * ell * ell)
    elif isinstance(kernel, LaplacianKernel):
        log_c = -math.log(a) - dim * math.log(2.0 * ell)
    else:
        raise ValueError(
            f"normalisation='kde' is implemented for the Gaussian and Laplacian kernels, got {kernel!r}; "
            "use normalisation='kme'.")
    # computed in log space: (2 pi l^2)^(D/2) overflows or underflows for large D
    if not -700.0 < log_c < 700.0:
        raise ValueError(
            f"the KDE normaliser is e^{log_c:.4g} for D = {dim} and length scale {ell:g}, outside the float range; "
            "use normalisation='kme' (same privacy, same relative error) or rescale the data.")
    return math.exp(log_c)


def _normaliser(kernel: Kernel, dim: int, normalisation: str) -> float:
    check_in(normalisation, NORMALISATIONS, name="normalisation")
    return 1.0 if normalisation == "kme" else kde_normaliser(kernel, dim)


def gp_sensitivity(*, n: int, kernel: Kernel, dim: int = 1, normalisation: str = "kme",
                   neighbouring: str = "replace-one", mode: str = "tight",
                   domain: tuple[npt.ArrayLike, npt.ArrayLike] | None = None) -> float:
    r"""RKHS sensitivity :math:`\Delta` of :math:`f_D` in :math:`\mathcal H(k_f)`.

    ``"kme"``: :func:`dpkme.privacy.sensitivity.kme_sensitivity` (:math:`\sqrt{2a}/N`
    replace-one tight, :math:`\sqrt a/N` add-remove, :math:`2\sqrt a/N` paper).
    ``"kde"``: :math:`\sqrt c` times that, :math:`c` = :func:`kde_normaliser`
    (the paper's :math:`2/(N(\sqrt{2\pi}\ell)^{D/2})` for a Gaussian with
    ``mode="paper"``).

    Parameters
    ----------
    n : int
        Public dataset size :math:`N \ge 1`.
    kernel : Kernel
        :math:`k(x,x) = a \le 1`.
    dim : int, default 1
        Dimension :math:`D` of the data (used by ``"kde"`` only).
    normalisation : {"kme", "kde"}, default "kme"
        The released function :math:`f_D` (module docstring).
    neighbouring : {"replace-one", "add-remove"}, default "replace-one"
        The neighbouring relation.
    mode : {"tight", "paper"}, default "tight"
        The KME bound (:func:`dpkme.privacy.sensitivity.kme_sensitivity`).
    domain : (lower, upper), optional
        Declared box containing the data (tightens ``"tight"`` replace-one).

    Returns
    -------
    float
        :math:`\Delta = \sup_{D\sim D'}\|f_D - f_{D'}\|_{\mathcal H(k_f)}`.

    Examples
    --------
    >>> from dpkme.kernels import GaussianKernel
    >>> from dpkme.release.gp import gp_sensitivity
    >>> gp_sensitivity(n=100, kernel=GaussianKernel(lengthscale=1.0))   # sqrt(2) / N
    0.01414213562373095
    """
    base = kme_sensitivity(n=n, kernel=kernel, neighbouring=neighbouring, mode=mode, domain=domain)
    return base * math.sqrt(_normaliser(kernel, dim, normalisation))


def hall_constant(delta: float) -> float:
    r"""Hall et al.'s :math:`c(\delta) = \sqrt{2\log(2/\delta)}` (noise multiplier :math:`\Delta c(\delta)/\varepsilon`).

    Parameters
    ----------
    delta : float
        In (0, 1).

    Returns
    -------
    float
        :math:`c(\delta)`.

    Examples
    --------
    >>> from dpkme.release.gp import hall_constant
    >>> round(hall_constant(1e-5), 6)
    4.940865
    """
    d = check_delta(delta)
    return math.sqrt(2.0 * (math.log(2.0) - math.log(d)))  # log(2/d) without overflow for subnormal d


def calibrate_gp(*, epsilon: float, delta: float, sensitivity: float,
                 calibration: str = "analytic") -> GaussianCalibration:
    r"""Noise multiplier :math:`s` of the GP release.

    ``"analytic"``: the smallest :math:`s` meeting the exact Balle-Wang
    condition at Mahalanobis sensitivity :math:`\Delta` (valid for every ε).
    ``"hall"``: :math:`s = \Delta\sqrt{2\log(2/\delta)}/\varepsilon`; its exact
    :math:`\delta` is computed and a ValueError is raised when it exceeds the
    requested one (at δ = 1e-5 for ε ≳ 9.4). The returned record has
    ``method="hall"`` and ``proven=True`` (the exact condition was checked).

    Parameters
    ----------
    epsilon : float
        > 0 and finite.
    delta : float
        In (0, 1).
    sensitivity : float
        RKHS sensitivity :math:`\Delta > 0` (:func:`gp_sensitivity`), which
        bounds the Mahalanobis sensitivity at any finite set of points.
    calibration : {"analytic", "hall"}, default "analytic"
        The calibration (see above).

    Returns
    -------
    GaussianCalibration
        ``sigma`` is the multiplier :math:`s` of :math:`\mathcal{GP}(0, k_f)`;
        ``achieved_delta`` its exact :math:`\delta`.

    Examples
    --------
    >>> from dpkme.release.gp import calibrate_gp
    >>> a = calibrate_gp(epsilon=1.0, delta=1e-5, sensitivity=0.01)
    >>> h = calibrate_gp(epsilon=1.0, delta=1e-5, sensitivity=0.01, calibration="hall")
    >>> round(1.0 - a.sigma / h.sigma, 2)                       # the analytic multiplier is 24 % smaller
    0.24
    """
    eps = check_epsilon(epsilon)
    d = check_delta(delta)
    check_in(calibration, CALIBRATIONS, name="calibration")
    if calibration == "analytic":
        return calibrate_gaussian(epsilon=eps, delta=d, sensitivity=sensitivity, method="analytic")
    sigma = float(sensitivity) * hall_constant(d) / eps
    true_delta = gaussian_delta(sigma=sigma, epsilon=eps, sensitivity=sensitivity)
    if true_delta > d:
        raise ValueError(
            f"Hall et al.'s constant sqrt(2 log(2/delta)) at epsilon={eps:g}, delta={d:g} gives a true "
            f"delta={true_delta:.3g} > {d:g} (it only holds for moderate epsilon); use calibration='analytic'.")
    return GaussianCalibration(sigma, eps, d, float(sensitivity), "hall", true_delta, True)


# --------------------------------------------------------------------------- exact GP sampling
def _is_product(kernel: Kernel) -> bool:
    return isinstance(kernel, (GaussianKernel, LaplacianKernel))


def _axis_factor(kernel: Kernel, a: np.ndarray, b: np.ndarray) -> np.ndarray:
    """Unit-amplitude 1-D factor of a product kernel, by the direct formula (a few ulps per entry)."""
    d = a[:, None] - b[None, :]
    if isinstance(kernel, GaussianKernel):
        d *= d
        d *= -kernel.gamma
    else:
        np.abs(d, out=d)
        d *= -1.0 / kernel.lengthscale
    result: np.ndarray = np.exp(d, out=d)
    return result


def _dominating_cholesky(K: np.ndarray, amplitude: float, eta: float) -> tuple[np.ndarray, float]:
    r"""Lower :math:`L` with :math:`LL^\top \succeq K_{\text{true}}` (see the module docstring), and :math:`\tau`."""
    n = K.shape[0]
    gamma = (n + 1) * _EPS / (1.0 - (n + 1) * _EPS)
    tau = 2.0 * n * amplitude * (gamma * (1.0 + 1e-6) + eta)
    for _ in range(40):
        A = K.copy()
        A[np.diag_indices(n)] += tau
        try:
            return cholesky(A, lower=True, check_finite=False), tau
        except LinAlgError:
            tau *= 10.0
    raise ValueError(f"could not factorise the {n} x {n} kernel matrix (jitter up to {tau:.3g}).")  # pragma: no cover


@dataclass
class GPSampler:
    r"""Exact sampler of :math:`\mathcal{GP}(0, k)` at fixed public points (reusable; no private data).

    ``method="kronecker"``: product kernel on a tensor grid, noise
    :math:`\sqrt a\,(L_1\otimes\cdots\otimes L_D)\,z`; ``method="dense"``:
    :math:`Lz` with one Cholesky of the full kernel matrix. In both cases the
    covariance used, :meth:`covariance`, dominates the kernel matrix
    (:math:`\succeq K`, see the module docstring).

    Build it with :func:`gp_sampler` (the fields are stored as given).

    Parameters
    ----------
    kernel : Kernel
        The covariance kernel :math:`k` (amplitude :math:`a`).
    axes : tuple of arrays or None
        Grid coordinates (``None`` for scattered points).
    points : ndarray (Q, D)
        The public points, in C order for a grid.
    shape : tuple
        Shape of one sample (the grid shape, or ``(Q,)``).
    method : {"kronecker", "dense"}
        The factorisation (see above).
    factors : list of ndarrays
        Lower Cholesky factors (one per axis, unit amplitude; or one dense factor
        including the amplitude).
    jitters : list of float
        The :math:`\tau` added per factor.
    seconds : float, default 0.0
        Time spent preparing the factors, in seconds.

    Attributes
    ----------
    n_points : int
        :math:`Q` (derived).

    Examples
    --------
    >>> import numpy as np
    >>> from dpkme.kernels import GaussianKernel
    >>> from dpkme.release.gp import gp_sampler, grid_axes
    >>> s = gp_sampler(GaussianKernel(lengthscale=1.0), grid=grid_axes([-1.0], [1.0], 50))
    >>> s.method, s.shape, s.sample(np.random.default_rng(0), size=3).shape
    ('kronecker', (50,), (3, 50))
    >>> bool(np.linalg.eigvalsh(s.covariance() - s.kernel_matrix()).min() >= 0)   # dominates K
    True
    """

    kernel: Kernel
    axes: tuple[np.ndarray, ...] | None
    points: np.ndarray
    shape: tuple[int, ...]
    method: str
    factors: list[np.ndarray]
    jitters: list[float]
    seconds: float = 0.0

    @property
    def n_points(self) -> int:
        return int(self.points.shape[0])

    def sample(self, rng: np.random.Generator, size: int | None = None) -> np.ndarray:
        """Draw ``size`` (or one) samples, shaped ``(size, *shape)`` (or ``shape``)."""
        if not isinstance(rng, np.random.Generator):
            raise ValueError(f"rng must be a numpy.random.Generator, got {rng!r}.")
        lead = () if size is None else (check_positive_int(size, name="size"),)
        with single_threaded_blas():
            if self.method == "dense":
                z = rng.standard_normal((*lead, self.n_points))
                result: np.ndarray = (z @ self.factors[0].T).reshape(lead + tuple(self.shape))
                return result
            z = rng.standard_normal(lead + tuple(self.shape))
            off = len(lead)
            for d, L in enumerate(self.factors):
                z = np.moveaxis(np.tensordot(L, z, axes=([1], [off + d])), 0, off + d)
            return z * math.sqrt(self.kernel.diag_value)

    def pointwise_variance(self) -> np.ndarray:
        """Diagonal of :meth:`covariance` (shaped like a sample), without forming it."""
        if self.method == "dense":
            result: np.ndarray = np.einsum("ij,ij->i", self.factors[0], self.factors[0]).reshape(self.shape)
            return result
        v = np.ones(())
        for L in self.factors:
            v = np.multiply.outer(v, np.einsum("ij,ij->i", L, L))
        return v * self.kernel.diag_value

    def covariance(self) -> np.ndarray:
        """The (Q x Q) covariance actually sampled from (small cases: tests and teaching)."""
        if self.n_points > DEFAULT_MAX_DENSE_POINTS:
            raise ValueError(f"covariance() forms a {self.n_points} x {self.n_points} matrix; "
                             f"at most {DEFAULT_MAX_DENSE_POINTS} points.")
        if self.method == "dense":
            L = self.factors[0]
            result: np.ndarray = L @ L.T
            return result
        C = np.ones((1, 1))
        for L in self.factors:
            C = np.kron(C, L @ L.T)
        return C * self.kernel.diag_value

    def kernel_matrix(self) -> np.ndarray:
        """:math:`K = k(P, P)` evaluated directly (small cases: tests and teaching)."""
        if self.n_points > DEFAULT_MAX_DENSE_POINTS:
            raise ValueError(f"kernel_matrix() forms a {self.n_points} x {self.n_points} matrix; "
                             f"at most {DEFAULT_MAX_DENSE_POINTS} points.")
        return self.kernel.gram(self.points)


def gp_sampler(kernel: Kernel, *, grid: Iterable[npt.ArrayLike] | None = None,
               query_points: npt.ArrayLike | None = None,
               max_dense_points: int = DEFAULT_MAX_DENSE_POINTS) -> GPSampler:
    """Prepare an exact :math:`\\mathcal{GP}(0, k)` sampler at public points (grid axes or query points).

    Uses the Kronecker structure for Gaussian/Laplacian kernels on a grid
    (any number of points up to :data:`MAX_GRID_POINTS`); otherwise a dense
    Cholesky of at most ``max_dense_points`` points (ValueError quoting the count
    and the limit beyond it). Depends only on public inputs: cache it across
    releases (:func:`gp_release` accepts ``sampler=``).

    Parameters
    ----------
    kernel : Kernel
        The covariance kernel :math:`k`.
    grid : sequence of D 1-D arrays, optional
        Tensor-grid axes (:func:`grid_axes`); exclusive with ``query_points``.
    query_points : array (Q, D), optional
        Scattered public points; exclusive with ``grid``.
    max_dense_points : int, default DEFAULT_MAX_DENSE_POINTS
        Largest :math:`Q` for the dense Cholesky path.

    Returns
    -------
    GPSampler
        ``method="kronecker"`` or ``"dense"``, with covariance :math:`\\succeq K`.

    Examples
    --------
    >>> import numpy as np
    >>> from dpkme.kernels import GaussianKernel
    >>> from dpkme.release.gp import gp_sampler
    >>> s = gp_sampler(GaussianKernel(lengthscale=1.0), query_points=np.array([[0.0], [0.5], [1.0]]))
    >>> s.method, s.shape
    ('dense', (3,))
    """
    t0 = time.perf_counter()
    if not isinstance(kernel, Kernel):
        raise ValueError(f"kernel must be a dpkme Kernel, got {kernel!r}.")
    if (grid is None) == (query_points is None):
        raise ValueError("give exactly one of grid (a tuple of 1-D axes) and query_points (an (Q, D) array).")
    limit = check_positive_int(max_dense_points, name="max_dense_points")
    a = kernel.diag_value
    if grid is not None:
        axes = _check_axes(grid)
        shape = tuple(ax.shape[0] for ax in axes)
        points = grid_points(axes)
        if _is_product(kernel):
            factors, jitters = [], []
            for ax in axes:
                with single_threaded_blas():
                    L, tau = _dominating_cholesky(_axis_factor(kernel, ax, ax), 1.0, _ETA_AXIS)
                factors.append(L)
                jitters.append(tau)
            return GPSampler(kernel, axes, points, shape, "kronecker", factors, jitters,
                             time.perf_counter() - t0)
    else:
        axes = None
        points = check_array(query_points, name="query_points")
        shape = (points.shape[0],)
    q = points.shape[0]
    if q > limit:
        raise ValueError(
            f"exact GP sampling at {q:,} points needs a dense {q:,} x {q:,} Cholesky factorisation, more than "
            f"max_dense_points = {limit:,}; use fewer points"
            + (", or a Gaussian/Laplacian kernel on a grid (Kronecker structure, no limit)" if axes is not None
               or not _is_product(kernel) else "") + ".")
    K = kernel.gram(points)
    with single_threaded_blas():  # measured: far faster than threaded BLAS on a shared 2-core machine
        L, tau = _dominating_cholesky(K, a, _ETA_DENSE)
    return GPSampler(kernel, axes, points, shape, "dense", [L], [tau], time.perf_counter() - t0)


# --------------------------------------------------------------------------- the private function
def _true_on_grid_product(kernel: Kernel, axes: tuple[np.ndarray, ...], X: np.ndarray) -> np.ndarray:
    r""":math:`\sum_n \prod_d k_d(p_d, x_{nd})` on a tensor grid (sum, not mean), blocked over rows of X."""
    n, D = X.shape
    shape = tuple(ax.shape[0] for ax in axes)
    lead = math.prod(shape[:-1])
    step = max(256, (1 << 21) // max(lead, max(shape)))

    def block(s0: int) -> np.ndarray:
        xb = X[s0:s0 + step]
        F = np.ones((1, xb.shape[0]))
        for d in range(D - 1):
            E = _axis_factor(kernel, axes[d], xb[:, d])
            F = (F[:, None, :] * E[None, :, :]).reshape(-1, xb.shape[0])
        result: np.ndarray = F @ _axis_factor(kernel, axes[-1], xb[:, -1]).T
        return result

    parts = parallel_map(block, range(0, n, step))  # threads, single-threaded BLAS each; summed in order
    out = parts[0]
    for p in parts[1:]:
        out += p
    result: np.ndarray = out.reshape(shape) * kernel.diag_value
    return result


def true_function(X: npt.ArrayLike, *, kernel: Kernel, grid: Iterable[npt.ArrayLike] | None = None,
                  query_points: npt.ArrayLike | None = None, normalisation: str = "kme",
                  n_private: int | None = None) -> np.ndarray:
    r"""The non-private :math:`f_D` at the points: :math:`\frac cN\sum_n k(x_n, p)` (**private**; display only).

    Grid-shaped for a grid (Kronecker-structured sums for Gaussian/Laplacian
    kernels: two GEMMs on a 2-D grid), ``(Q,)`` for query points.

    Parameters
    ----------
    X : array (N, D)
        Private data.
    kernel : Kernel
        The kernel :math:`k`.
    grid : sequence of D 1-D arrays, optional
        Tensor-grid axes; exclusive with ``query_points``.
    query_points : array (Q, D), optional
        Scattered points; exclusive with ``grid``.
    normalisation : {"kme", "kde"}, default "kme"
        :math:`c = 1` (KME) or :func:`kde_normaliser` (KDE).
    n_private : int, optional
        Public normaliser :math:`N` (default ``len(X)``).

    Returns
    -------
    ndarray
        :math:`f_D` at the points, grid-shaped or ``(Q,)``. **Private.**

    Examples
    --------
    >>> import numpy as np
    >>> from dpkme.kernels import GaussianKernel
    >>> from dpkme.release.gp import true_function
    >>> X = np.array([[0.0], [2.0]])
    >>> true_function(X, kernel=GaussianKernel(lengthscale=1.0), query_points=np.array([[1.0]]))  # e^{-1/2}
    array([0.60653066])
    """
    X = check_array(X, name="X")
    n_pub = X.shape[0] if n_private is None else check_positive_int(n_private, name="n_private")
    c = _normaliser(kernel, X.shape[1], normalisation)
    if (grid is None) == (query_points is None):
        raise ValueError("give exactly one of grid and query_points.")
    if grid is not None:
        axes = _check_axes(grid, X.shape[1])
        if _is_product(kernel):
            return _true_on_grid_product(kernel, axes, X) * (c / n_pub)
        P = grid_points(axes)
        on_grid: np.ndarray = (kernel.row_means(P, X).reshape(tuple(ax.shape[0] for ax in axes))
                               * (c * X.shape[0] / n_pub))
        return on_grid
    P = check_array(query_points, name="query_points", n_features=X.shape[1])
    result: np.ndarray = kernel.row_means(P, X) * (c * X.shape[0] / n_pub)
    return result


# --------------------------------------------------------------------------- the release
@dataclass
class GPRelease:
    r"""A Gaussian-process release of :math:`f_D` at public points.

    Made by :func:`gp_release`; the fields are stored as given. Only
    ``values`` (with the points) and the public metadata are differentially
    private; ``true_values`` is not.

    Parameters
    ----------
    points : ndarray (Q, D)
        Public evaluation points (C order for a grid).
    axes : tuple of arrays or None
        Grid coordinates, or ``None`` for query points.
    values : ndarray
        The released (noisy) values :math:`\tilde f(p)`, grid-shaped or ``(Q,)``.
        This is the differentially private output.
    true_values : ndarray or None
        :math:`f_D(p)` — **private**, for the data owner's display only; never
        exported by :meth:`metadata` / :meth:`to_json`.
    scale : float
        Noise multiplier :math:`s` (noise :math:`s\,\mathcal{GP}(0, k_f)`).
    noise_std : float
        Pointwise standard deviation of the noise, :math:`s\sqrt{c\,a}`.
    sensitivity : float
        RKHS sensitivity :math:`\Delta` in :math:`\mathcal H(k_f)`.
    epsilon, delta, achieved_delta : float
        Guarantee and exact δ of the calibration (Balle–Wang).
    calibration : {"analytic", "hall"}
        How :math:`s` was calibrated (:func:`calibrate_gp`).
    normalisation : {"kme", "kde"}
        The released function :math:`f_D`: the KME or the kernel density estimate.
    normaliser : float
        :math:`c` (1 for the KME, :func:`kde_normaliser` for the KDE).
    neighbouring : {"replace-one", "add-remove"}
        The neighbouring relation of the guarantee.
    kernel : Kernel
        The kernel :math:`k` (:math:`k_f = c\,k`).
    seed : int or None
        Seed of the noise (``None`` for OS entropy or a caller's Generator).
    noise_source : {"seeded", "os-entropy", "generator"}
        Provenance of the noise; only ``"os-entropy"`` is a real release.
    n_private : int
        Public size :math:`N` (normaliser of :math:`f_D`).
    seconds : float, default 0.0
        Wall-clock time of the release, in seconds.
    params : dict, default {}
        Sampler method, jitters, Hall and analytic multipliers and the noise
        reduction of analytic over Hall, timings, the declared domain and the
        pointwise noise variance (public).
    version : str, default the installed dpkme version
        Version of dpkme that made the release.
    charge : PrivacyCharge or None, default None
        The charge of the noise, set by :func:`gp_release` where it was calibrated (equal to
        :func:`~dpkme.release.charges.gp_release_charge` of the same parameters); exported by :meth:`metadata`.

    Attributes
    ----------
    shape : tuple
        Shape of ``values`` (derived).
    dim : int
        :math:`D` (derived).
    """

    points: np.ndarray
    axes: tuple[np.ndarray, ...] | None
    values: np.ndarray
    true_values: np.ndarray | None
    scale: float
    noise_std: float
    sensitivity: float
    epsilon: float
    delta: float
    achieved_delta: float
    calibration: str
    normalisation: str
    normaliser: float
    neighbouring: str
    kernel: Kernel
    seed: int | None
    noise_source: str
    n_private: int
    seconds: float = 0.0
    params: dict[str, Any] = field(default_factory=dict)
    version: str = __version__
    charge: PrivacyCharge | None = None

    @property
    def shape(self) -> tuple[int, ...]:
        return tuple(self.values.shape)

    @property
    def dim(self) -> int:
        return int(self.points.shape[1])

    def l2_error(self, kind: str = "integral") -> float:
        """L2 distance released vs true on the grid (**private**: reads ``true_values``)."""
        if self.true_values is None:
            raise ValueError("this release carries no true values (e.g. it was loaded from JSON).")
        if kind == "integral" and self.axes is None:
            kind = "rms"
        return l2_error_on_grid(self.values, self.true_values, self.axes, kind=kind)

    def expected_l2_error(self, kind: str = "integral") -> float:
        r"""Root of the expected squared L2 noise: :math:`(\sum_i w_i \operatorname{Var}_i)^{1/2}` (public)."""
        var = self.params["noise_variance"]
        check_in(kind, ("integral", "rms"), name="kind")
        if kind == "rms" or self.axes is None:
            return float(math.sqrt(np.mean(var)))
        return float(math.sqrt(trapezoid_weights(self.axes).reshape(-1) @ np.asarray(var).reshape(-1)))

    def guarantee(self) -> GaussianCalibration:
        """The calibration record (Gaussian mechanism with this multiplier and sensitivity)."""
        return GaussianCalibration(self.scale, self.epsilon, self.delta, self.sensitivity, self.calibration,
                                   self.achieved_delta, True)

    def privacy_charge(self, label: str | None = None) -> PrivacyCharge:
        """A **new** spending of this release's cost (a copy of :attr:`charge` with a new id), e.g. to charge the
        same release to a ledger again; the release's own charge is :attr:`charge`. Built from :meth:`guarantee`
        when the release carries none (built by hand)."""
        base = self.charge
        if base is None:
            base = _gp_charge_of(self.guarantee(), self.neighbouring, self.normalisation,
                                 n_points=int(self.points.shape[0]))
        return base.renewed(**({} if label is None else {"label": label}))

    def metadata(self) -> dict[str, Any]:
        """JSON-serialisable description (no values, and never the private true values); ``differentially_private``
        is false for seeded (replayable) releases (:func:`dpkme.privacy.leaks.privacy_claim`)."""
        from ..privacy.leaks import privacy_claim

        d = {
            "library": "dpkme", "version": self.version, "mechanism": "gp-release",
            "epsilon": self.epsilon, "delta": self.delta, "achieved_delta": self.achieved_delta,
            "calibration": self.calibration, "scale": self.scale, "noise_std": self.noise_std,
            "sensitivity": self.sensitivity, "normalisation": self.normalisation, "normaliser": self.normaliser,
            "neighbouring": self.neighbouring, "kernel": self.kernel.to_dict(), "seed": self.seed,
            "noise_source": self.noise_source, "n_private": self.n_private, "n_points": int(self.points.shape[0]),
            "dim": self.dim, "shape": list(self.shape), "seconds": self.seconds,
            "params": {k: v for k, v in self.params.items() if k != "noise_variance"},
            **privacy_claim(self),
            "charge": charge_record(self.charge),
        }
        if self.noise_source == "seeded" and self.seed is not None:
            d["seed_warning"] = ("seeded noise (teaching/demo): anyone who knows this seed can regenerate and "
                                 "remove the noise, so this release is not private once the seed is shared")
        return d

    def to_json(self, *, include_values: bool = True) -> str:
        """The metadata plus the grid axes (or points) and the released values; never the true values."""
        d = self.metadata()
        if include_values:
            if self.axes is not None:
                d["axes"] = [a.tolist() for a in self.axes]
            else:
                d["points"] = self.points.tolist()
            d["values"] = self.values.tolist()
        return json.dumps(d, indent=2, allow_nan=True)


def _check_release_args(kernel: Kernel, epsilon: float, delta: float, calibration: str, normalisation: str,
                        neighbouring: str, sensitivity: str) -> tuple[float, float]:
    check_in(normalisation, NORMALISATIONS, name="normalisation")
    return check_release_args(kernel, epsilon, delta, calibration=calibration, neighbouring=neighbouring,
                              sensitivity=sensitivity, calibrations=CALIBRATIONS)


def gp_release(
    X: npt.ArrayLike,
    *,
    kernel: Kernel,
    epsilon: float | None = None,
    delta: float | None = None,
    grid: Iterable[npt.ArrayLike] | None = None,
    query_points: npt.ArrayLike | None = None,
    normalisation: str = "kme",
    calibration: str | None = None,
    neighbouring: str | None = None,
    sensitivity: str = "tight",
    domain: tuple[npt.ArrayLike, npt.ArrayLike] | None = None,
    n_private: int | None = None,
    random_state: int | np.random.Generator | None = None,
    sampler: GPSampler | None = None,
    keep_true_values: bool = True,
    progress: Callable[[float, str], object] | None = None,
    clip: bool = False,
    privacy: PrivacySpec | None = None,
) -> GPRelease:
    r"""Release :math:`f_D + s\,\mathcal{GP}(0, k_f)` at public points, :math:`(\varepsilon,\delta)`-DP.

    Guarantee: :math:`(\varepsilon,\delta)`-DP w.r.t. ``neighbouring``
    (replace-one with public N = len(X), or add-remove with the public
    normaliser ``n_private``), provided the grid / query points are public and
    :math:`k(x,x)\le1`; the data must lie in ``domain`` if one is declared.
    Gaussian mechanism with covariance :math:`\succeq K` and Mahalanobis
    sensitivity :math:`\le\Delta` = :func:`gp_sensitivity`; :math:`s` from
    :func:`calibrate_gp` (analytic Balle–Wang by default, or Hall et al.'s
    :math:`\Delta\sqrt{2\log(2/\delta)}/\varepsilon`). See the module docstring.

    Parameters
    ----------
    X : array (N, D)
        Private data.
    kernel : Kernel
        Amplitude :math:`\le 1`.
    epsilon, delta : float, optional
        The privacy parameters: :math:`\varepsilon > 0`, :math:`\delta \in (0, 1)` (required unless
        ``privacy`` gives them).
    grid : sequence of D 1-D arrays, optional
        Tensor-grid axes (:func:`grid_axes`); exclusive with ``query_points``.
    query_points : array (Q, D), optional
        Scattered public points (dense path, at most :data:`DEFAULT_MAX_DENSE_POINTS`).
    normalisation : {"kme", "kde"}
    calibration : {"analytic", "hall"}, optional
        Default ``"analytic"`` (:func:`calibrate_gp`), or ``privacy.calibration``.
    neighbouring : {"replace-one", "add-remove"}, optional
        Default ``"replace-one"``, or ``privacy.relation``.
    sensitivity : {"tight", "paper"}
    domain : (lower, upper), optional
        Declared box containing the data (tightens replace-one). Rows outside
        it are refused (ValueError with their count and columns, never their
        values) unless ``clip=True`` (:func:`dpkme.privacy.sensitivity.enforce_domain`).
    n_private : int, optional
        Public normaliser (add-remove); must equal len(X) for replace-one.
    random_state : None, int or Generator
        ``None``: OS entropy, no seed recorded (a real release); int: seeded and
        replayable (teaching only).
    sampler : GPSampler, optional
        A :func:`gp_sampler` prepared for the same kernel and points (public; reuse it).
    keep_true_values : bool
        Store the private :math:`f_D(p)` in ``true_values`` for display.
    progress : callable, optional
        ``progress(fraction, message)``; exceptions it raises cancel the release.
    clip : bool
        Clip every row to ``domain`` instead of refusing rows outside it (a
        per-row map: the guarantee holds).
    privacy : PrivacySpec, optional
        The typed alternative to ``epsilon``, ``delta``, ``neighbouring`` and ``calibration``
        (:func:`~dpkme.privacy.spec.resolve`): its fields are used, and a loose argument that disagrees is a
        ValueError naming both. A spec's ``"classic"`` calibration is refused (the GP release has
        ``"analytic"`` and Hall's). Its noise source must be honoured
        (:func:`~dpkme.privacy.spec.resolve_noise`): ``"os-entropy"`` needs ``random_state=None``,
        ``"seeded"`` an int ``random_state`` (a replay labelled not private, as with that seed alone), and
        ``"opendp"`` is refused (no OpenDP sampler for a Gaussian process).

    Returns
    -------
    GPRelease
        The noisy values at the points (``values``), the calibration and,
        with ``keep_true_values``, the private :math:`f_D` for display.

    Examples
    --------
    >>> import numpy as np
    >>> from dpkme.kernels import GaussianKernel
    >>> from dpkme.release.gp import gp_release, grid_axes
    >>> X = np.random.default_rng(0).normal(size=(100, 1))                    # the private rows
    >>> rel = gp_release(X, kernel=GaussianKernel(lengthscale=1.0), epsilon=1.0, delta=1e-5,
    ...                  grid=grid_axes([-3.0], [3.0], 50), random_state=0)   # seeded: a teaching replay
    >>> rel.values.shape, rel.params["sampler"], round(rel.params["noise_reduction_vs_hall"], 2)
    ((50,), 'kronecker', 0.24)
    >>> rel.metadata()["differentially_private"]                              # seeded, so not a real release
    False
    """
    t0 = time.perf_counter()
    epsilon, delta, neighbouring, calibration = resolve(privacy, epsilon=epsilon, delta=delta,
                                                        neighbouring=neighbouring, calibration=calibration)
    resolve_noise(privacy, random_state=random_state, opendp=False, function="gp_release")
    eps, dlt = _check_release_args(kernel, epsilon, delta, calibration, normalisation, neighbouring, sensitivity)
    if progress is not None and not callable(progress):
        raise ValueError(f"progress must be callable as progress(fraction, message), got {progress!r}.")
    X = check_array(X, name="X")
    n, dim = X.shape
    X = enforce_domain(X, domain, clip=clip)  # the box sensitivity holds only for data inside the box
    domain = None if domain is None else check_domain(domain, dim)
    n_pub = public_size(n, n_private, neighbouring=neighbouring)
    if (grid is None) == (query_points is None):
        raise ValueError("give exactly one of grid (a tuple of 1-D axes) and query_points (an (Q, D) array).")
    if grid is not None:
        grid = _check_axes(grid, dim)
    else:
        query_points = check_array(query_points, name="query_points", n_features=dim)
    if progress is not None:
        progress(0.0, "calibrating")
    c = _normaliser(kernel, dim, normalisation)
    delta_h = gp_sensitivity(n=n_pub, kernel=kernel, dim=dim, normalisation=normalisation,
                             neighbouring=neighbouring, mode=sensitivity, domain=domain)
    cal = calibrate_gp(epsilon=eps, delta=dlt, sensitivity=delta_h, calibration=calibration)
    s_analytic = cal.sigma if calibration == "analytic" else \
        calibrate_gp(epsilon=eps, delta=dlt, sensitivity=delta_h).sigma
    s_hall = delta_h * hall_constant(dlt) / eps
    rng, seed, noise_source = noise_rng(random_state)
    if sampler is None:
        if progress is not None:
            progress(0.1, "factorising the kernel matrix")
        sampler = gp_sampler(kernel, grid=grid, query_points=query_points)
    else:
        if not isinstance(sampler, GPSampler) or sampler.kernel != kernel:
            raise ValueError("sampler must be a GPSampler built for the same kernel.")
        same = (sampler.axes is not None and grid is not None and len(sampler.axes) == len(grid)
                and all(np.array_equal(a, b) for a, b in zip(sampler.axes, grid))) or \
               (sampler.axes is None and query_points is not None  # validated above when no grid is given
                and sampler.points.shape == cast(np.ndarray, query_points).shape
                and np.array_equal(sampler.points, query_points))
        if not same:
            raise ValueError("sampler was prepared for different points than this release.")
    # what this noise spends (= gp_release_charge), computed with the calibration, before the data is read
    charge = _gp_charge_of(cal, neighbouring, normalisation, n_points=int(sampler.points.shape[0]))
    if progress is not None:
        progress(0.4, "evaluating the private function")
    truth = true_function(X, kernel=kernel, grid=grid, query_points=query_points, normalisation=normalisation,
                          n_private=n_pub)
    del X  # nothing below reads the private data
    if progress is not None:
        progress(0.8, "sampling the Gaussian process")
    mult = cal.sigma * math.sqrt(c)  # s * GP(0, c k) = s sqrt(c) * GP(0, k)
    values = truth + mult * sampler.sample(rng)
    if progress is not None:
        progress(1.0, "release ready")
    var = sampler.pointwise_variance() * mult * mult
    return GPRelease(
        points=sampler.points, axes=sampler.axes, values=values, true_values=truth if keep_true_values else None,
        scale=cal.sigma, noise_std=cal.sigma * math.sqrt(c * kernel.diag_value), sensitivity=delta_h,
        epsilon=eps, delta=dlt, achieved_delta=cal.achieved_delta, calibration=calibration,
        normalisation=normalisation, normaliser=c, neighbouring=neighbouring, kernel=kernel, seed=seed,
        noise_source=noise_source, n_private=n_pub, seconds=time.perf_counter() - t0,
        params={"sampler": sampler.method, "jitters": list(sampler.jitters), "sampler_seconds": sampler.seconds,
                "sensitivity_mode": sensitivity, "analytic_scale": s_analytic, "hall_scale": s_hall,
                "noise_reduction_vs_hall": 1.0 - s_analytic / s_hall,
                "domain": None if domain is None else [np.asarray(b, dtype=float).tolist() for b in domain],
                "clip": clip, "noise_variance": var},
        charge=charge,
    )


def _gp_charge_of(cal: GaussianCalibration, neighbouring: str, normalisation: str, *, n_points: int | None = None,
                  label: str | None = None) -> PrivacyCharge:
    """The charge of the GP noise ``cal`` (the release's own and :func:`~dpkme.release.charges.gp_release_charge`'s)."""
    where = "" if n_points is None else f", {n_points} points"
    return gaussian_charge(label or f"GP release ({normalisation}{where})", cal, relation=neighbouring,
                           details={"mechanism": "gp-release", "normalisation": normalisation,
                                    **({} if n_points is None else {"n_points": int(n_points)})})


# --------------------------------------------------------------------------- comparisons and curves
def evaluate_on_grid(release: Release, grid: Iterable[npt.ArrayLike] | None = None, *,
                     query_points: npt.ArrayLike | None = None, normalisation: str = "kme") -> np.ndarray:
    r"""A weighted-points release (Algorithm 1/2, exponential mechanism) as a function on the same points.

    :math:`c\sum_m w_m k(z_m, p)` (:meth:`dpkme.release.Release.evaluate`),
    grid-shaped for a grid; :math:`c` = :func:`kde_normaliser` for ``"kde"``.
    Public (a post-processing of the release).

    Parameters
    ----------
    release : Release
        A weighted-points release.
    grid : sequence of D 1-D arrays, optional
        Tensor-grid axes; exclusive with ``query_points``.
    query_points : array (Q, D), optional
        Scattered points; exclusive with ``grid``.
    normalisation : {"kme", "kde"}, default "kme"
        Compare with a KME or a KDE GP release.

    Returns
    -------
    ndarray
        The released function at the points, grid-shaped or ``(Q,)``.

    Examples
    --------
    >>> import numpy as np
    >>> from dpkme.kernels import GaussianKernel
    >>> from dpkme.release import Release
    >>> from dpkme.release.gp import evaluate_on_grid, grid_axes
    >>> rel = Release(points=np.array([[0.0]]), weights=np.array([1.0]), mechanism="uniform-baseline",
    ...               epsilon=float("inf"), delta=0.0, sigma=0.0, sensitivity=0.0, neighbouring="replace-one",
    ...               calibration="none", kernel=GaussianKernel(lengthscale=1.0), seed=None, n_private=1)
    >>> evaluate_on_grid(rel, grid_axes([0.0], [1.0], 2))                # k(0, 0), k(0, 1) = 1, e^{-1/2}
    array([1.        , 0.60653066])
    """
    if not isinstance(release, Release):
        raise ValueError(f"release must be a dpkme Release, got {release!r:.80}.")
    c = _normaliser(release.kernel, release.dim, normalisation)
    if (grid is None) == (query_points is None):
        raise ValueError("give exactly one of grid and query_points.")
    if grid is not None:
        axes = _check_axes(grid, release.dim)
        shape = tuple(ax.shape[0] for ax in axes)
        P = grid_points(axes)
        step = max(1, (1 << 22) // max(1, release.n_points))
        vals = np.concatenate([release.evaluate(P[i:i + step]) for i in range(0, P.shape[0], step)])
        return vals.reshape(shape) * c
    return release.evaluate(cast("npt.ArrayLike", query_points)) * c  # given when grid is not (checked above)


def gp_expected_l2_error(*, epsilon: float | npt.ArrayLike, delta: float, n: int, kernel: Kernel,
                         grid: Iterable[npt.ArrayLike], normalisation: str = "kme", calibration: str = "analytic",
                         neighbouring: str = "replace-one", sensitivity: str = "tight",
                         domain: tuple[npt.ArrayLike, npt.ArrayLike] | None = None) -> float | np.ndarray:
    r"""Expected L2 error of the GP release on a grid, in closed form (public; for privacy–utility curves).

    :math:`\bigl(\mathbb E\!\int (\tilde f - f_D)^2\bigr)^{1/2} \approx s\sqrt{c\,a\,\mathrm{vol}}`
    (trapezoid rule over the grid's box; the jitter's extra variance, relative
    :math:`\sim 10^{-10}`, is ignored). Hall et al. (Section 2 remark):
    :math:`\lambda(T)\,c(\alpha,\beta,\Delta)\sup_x K(x,x)`. ``epsilon`` may be
    an array (returns an array).

    Parameters
    ----------
    epsilon : float or array-like of float
        :math:`\varepsilon > 0` (one or several).
    delta : float
        In (0, 1).
    n : int
        Public dataset size :math:`N`.
    kernel : Kernel
        :math:`k(x,x) = a \le 1`.
    grid : sequence of D 1-D arrays
        Tensor-grid axes of the release.
    normalisation : {"kme", "kde"}, default "kme"
        The released function.
    calibration : {"analytic", "hall"}, default "analytic"
        See :func:`calibrate_gp`.
    neighbouring : {"replace-one", "add-remove"}, default "replace-one"
        The neighbouring relation.
    sensitivity : {"tight", "paper"}, default "tight"
        The sensitivity mode (:func:`gp_sensitivity`).
    domain : (lower, upper), optional
        Declared box containing the data.

    Returns
    -------
    float or ndarray
        The expected L2 error for each ``epsilon``.

    Examples
    --------
    >>> from dpkme.kernels import GaussianKernel
    >>> from dpkme.release.gp import gp_expected_l2_error, grid_axes
    >>> err = gp_expected_l2_error(epsilon=[0.5, 1.0], delta=1e-5, n=100, kernel=GaussianKernel(lengthscale=1.0),
    ...                            grid=grid_axes([-1.0], [1.0], 50))
    >>> err.shape, bool(err[0] > err[1])
    ((2,), True)
    """
    axes = _check_axes(grid)
    dim = len(axes)
    c = _normaliser(kernel, dim, normalisation)
    delta_h = gp_sensitivity(n=n, kernel=kernel, dim=dim, normalisation=normalisation,
                             neighbouring=neighbouring, mode=sensitivity, domain=domain)
    vol = float(trapezoid_weights(axes).sum())
    root = math.sqrt(c * kernel.diag_value * vol)
    if np.ndim(epsilon) == 0:
        return calibrate_gp(epsilon=cast(float, epsilon), delta=delta, sensitivity=delta_h,
                            calibration=calibration).sigma * root
    return np.array([calibrate_gp(epsilon=e, delta=delta, sensitivity=delta_h, calibration=calibration).sigma * root
                     for e in np.asarray(epsilon, dtype=float).ravel()])


def mahalanobis_sensitivity(h: npt.ArrayLike, K: npt.ArrayLike, *, rcond: float = 1e-10) -> float:
    r""":math:`\sqrt{h^\top K^{+} h}` (pseudo-inverse by eigendecomposition, relative cutoff ``rcond``).

    For teaching and tests: with :math:`h = f_D(P) - f_{D'}(P)` this is the
    L2 sensitivity of the whitened finite release, bounded by
    :math:`\|f_D - f_{D'}\|_{\mathcal H}`. Ill-conditioned :math:`K` makes it
    numerically unreliable (the cutoff discards directions below ``rcond`` of
    the largest eigenvalue).

    Parameters
    ----------
    h : array (Q,)
        The difference :math:`f_D(P) - f_{D'}(P)` at the points.
    K : array (Q, Q)
        The kernel matrix :math:`k_f(P, P)` (symmetrised).
    rcond : float, default 1e-10
        Eigenvalues below ``rcond`` times the largest are treated as 0.

    Returns
    -------
    float
        :math:`\sqrt{h^\top K^{+} h} \ge 0`.

    Examples
    --------
    >>> import numpy as np
    >>> from dpkme.release.gp import mahalanobis_sensitivity
    >>> K = np.array([[1.0, 0.5], [0.5, 1.0]])
    >>> round(mahalanobis_sensitivity(K[:, 0], K), 12)     # h = k(p_1, .) at P: ||k(p_1, .)||_H = 1
    1.0
    """
    h = check_array(h, name="h", ndim=1)
    K = check_array(K, name="K", n_features=h.shape[0])
    if K.shape[0] != h.shape[0]:
        raise ValueError(f"K has shape {K.shape} but h has {h.shape[0]} entries.")
    w, U = np.linalg.eigh(0.5 * (K + K.T))
    keep = w > rcond * max(float(w.max()), 0.0)
    coef = U[:, keep].T @ h
    return float(math.sqrt(max(float(np.sum(coef * coef / w[keep])), 0.0)))
