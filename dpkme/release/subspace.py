r"""Algorithm 1 of Balog et al. (2018): perturbation in the synthetic-data subspace.

Synthetic points :math:`z_1,\dots,z_M` are fixed **before** the private data is
touched (a publishable subset, or draws from a data-independent distribution
:math:`q`). Their feature maps span :math:`\mathcal H_M = \operatorname{span}
\{k(z_m,\cdot)\}`; an orthonormal basis :math:`b_1,\dots,b_F` of it is built
by Gram–Schmidt in the order of the points, skipping points whose feature map
is (numerically) in the span of the previous ones. In matrix form this is an
in-order *incomplete Cholesky* factorisation

.. math:: K_{AA} = L L^\top, \qquad b = L^{-1} k_A(\cdot),

over the accepted points :math:`A`, with :math:`G = K_{ZA} L^{-\top}` holding
:math:`b_f(z_m)` for every point. The algorithm (lines 5–8 of Algorithm 1):

.. math::
    \alpha = L^{-1}\bar k_A, \quad \bar k_m = \tfrac1N\sum_n k(z_m, x_n), \qquad
    \beta = \alpha + \mathcal N(0, \sigma^2 I_F), \qquad w_A = L^{-\top}\beta.

Because Gram–Schmidt is in order, the basis of the first :math:`M'` points is
a prefix of the basis of all :math:`M` points, and so are :math:`\alpha` and
:math:`L`: one factorisation serves every prefix (the paper's Figures 1 and 2
evaluate ~84 values of M).

Privacy (Proposition 3, tightened): :math:`\alpha` is the coordinate vector of
the orthogonal projection :math:`P\hat\mu_X`; a projection is 1-Lipschitz, so
:math:`\|\alpha(D) - \alpha(D')\|_2 \le \|\hat\mu_D - \hat\mu_{D'}\|_{\mathcal H}
\le \Delta` with :math:`\Delta` from :func:`dpkme.privacy.sensitivity.kme_sensitivity`
(:math:`\sqrt2/N` for replace-one with a non-negative kernel, the paper's
:math:`2/N` with ``sensitivity="paper"``). The Gaussian mechanism with
:math:`\sigma` calibrated to :math:`(\varepsilon, \delta, \Delta)` therefore
makes :math:`\beta` :math:`(\varepsilon,\delta)`-DP, and the weights are
post-processing. The points and the basis depend only on public inputs.

Beyond the paper, ``basis="auto"`` post-processes :math:`\beta` by shrinkage
toward a *public* target. For a publishable subset the target is the
coordinate vector of the public points' own KME (shrinking fully to it gives
the paper's uniform baseline) and the amount of shrinkage per coordinate
follows an empirical-Bayes model whose single scale is tuned by Stein's
unbiased risk estimate (:func:`sure_shrink`); for points drawn from
:math:`q` it is positive-part James–Stein toward 0 in groups of coordinates
(:func:`james_stein_shrink`), which never increases the expected error of a
group of three or more coordinates (James & Stein 1961). The release keeps the
full basis's behaviour where the private signal is strong and falls back to the
public estimate where the noise dominates (the paper's Figure 1 blow-up at
small ε). It uses only :math:`\beta`, :math:`\sigma` and public points: it is
post-processing and costs no privacy budget.
"""

from __future__ import annotations

import math
import time
from collections.abc import Callable
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

import numpy as np
import numpy.typing as npt
from scipy.linalg import solve_triangular

from .._validation import check_array, check_in, check_positive_float, check_positive_int, noise_rng, spawn_streams
from ..kernels.kernel import Kernel
from ..privacy.accounting import PrivacyCharge, gaussian_charge
from ..privacy.sensitivity import check_domain, check_release_args, enforce_domain, kme_sensitivity
from ..privacy.spec import PrivacySpec, resolve, resolve_noise
from ..reduced_set.weights import project_l1_ball, project_simplex  # the one simplex/L1-ball projection
from .core import InMemoryRows, RowSums, n_policy, policy_params, privatise
from .result import Release

if TYPE_CHECKING:
    from ..privacy.calibration import GaussianCalibration
    from ..schema import EmbeddedDomain

__all__ = [
    "SubspaceBasis",
    "algorithm1",
    "uniform_baseline",
    "james_stein_shrink",
    "sure_shrink",
    "shrink_coordinates",
    "project_weights",
    "DEFAULT_TOL",
]

#: Gram–Schmidt acceptance threshold on the squared residual norm of a new
#: feature map (relative to k(z, z)); the paper's code uses 1e-5.
DEFAULT_TOL = 1e-5
_PANEL = 256


@dataclass
class SubspaceBasis:
    r"""In-order orthonormal basis of :math:`\operatorname{span}\{k(z_m,\cdot)\}`.

    Built from public points only. ``factor`` is :math:`L` (F x F, lower
    triangular) and ``accepted`` the indices :math:`A` of the points that define
    basis vectors (increasing). :math:`G` (M x F) with ``G[m, f]``
    :math:`= b_f(z_m)` is stored as column blocks, one per panel of 256
    candidates, each holding only the rows from the panel's first point on
    (earlier rows are zero): ``blocks[p] = (row_start, col_start, array)``.
    For a skipped point that precedes :math:`a_f` within its panel the entry is
    left at 0 (its true value is at most :math:`\sqrt{\text{tol}}`).

    Parameters
    ----------
    points : ndarray (M, D)
        The public points :math:`z_m`.
    kernel : Kernel
        The kernel.
    tol : float
        Acceptance threshold (relative squared residual norm).
    accepted : ndarray (F,) of int
        Indices :math:`A` of the accepted points, increasing.
    factor : ndarray (F, F)
        :math:`L`, lower triangular.
    blocks : list of (int, int, ndarray)
        Column blocks of :math:`G` as ``(row_start, col_start, array)``.
    seconds : float, default=0.0
        Time taken by :meth:`fit`.
    """

    points: np.ndarray
    kernel: Kernel
    tol: float
    accepted: np.ndarray
    factor: np.ndarray
    blocks: list[tuple[int, int, np.ndarray]]
    seconds: float = 0.0

    @classmethod
    def fit(cls, Z: npt.ArrayLike, *, kernel: Kernel, tol: float = DEFAULT_TOL) -> SubspaceBasis:
        """Blocked in-order incomplete Cholesky of :math:`K_{ZZ}` (never stores it).

        A point is skipped when the squared RKHS distance of :math:`k(z_m,\\cdot)`
        to the span of the previously accepted ones is at most
        ``tol * k(z_m, z_m)``. Panels of 256 candidates: the panel's own residual
        block decides which candidates are accepted (a short Python loop with
        :math:`O(256 F)` vector work per candidate), then only the accepted
        columns are extended to the rows below with GEMMs against the earlier
        column blocks and one triangular solve. Work :math:`O(M F^2)`, memory
        :math:`O(M F)` (about half of it, since rows above a block are not stored).

        Parameters
        ----------
        Z : ndarray (M, D)
            Public points.
        kernel : Kernel
            The kernel.
        tol : float, default=DEFAULT_TOL
            Acceptance threshold.

        Returns
        -------
        SubspaceBasis
        """
        Z = check_array(Z, name="Z")
        tol = check_positive_float(tol, name="tol")
        t0 = time.perf_counter()
        m = Z.shape[0]
        thr = tol * kernel.diag_value
        blocks: list[tuple[int, int, np.ndarray]] = []
        F = 0
        accepted: list[int] = []
        for s in range(0, m, _PANEL):
            e = min(s + _PANEL, m)
            b = e - s
            # rows s:e of G over all earlier blocks (b x F, contiguous)
            R = np.hstack([blk[s - r0:e - r0] for r0, _, blk in blocks]) if blocks else np.zeros((b, 0))
            C = kernel.cross(Z[s:e], Z[s:e])
            if F:
                C -= R @ R.T  # residual of the panel given the accepted points
            # in-panel sequential Gram–Schmidt with skipping (left-looking, b x b)
            Lb = np.zeros((b, b))
            nb = 0
            acc_local: list[int] = []
            for j in range(b):
                v = C[j:, j] - Lb[j:, :nb] @ Lb[j, :nb] if nb else C[j:, j].copy()
                d = v[0]
                if d > thr:
                    Lb[j:, nb] = v / math.sqrt(d)
                    acc_local.append(j)
                    nb += 1
            if not nb:
                continue
            block = np.empty((m - s, nb))
            block[:b] = Lb[:, :nb]
            if e < m:
                cols = [s + j for j in acc_local]
                T = kernel.cross(Z[e:], Z[cols])  # (m - e) x nb, accepted columns only
                R_acc = R[acc_local]
                for r0, c0, blk in blocks:
                    T -= blk[e - r0:] @ R_acc[:, c0:c0 + blk.shape[1]].T
                L_aa = Lb[acc_local, :nb]
                block[b:] = solve_triangular(L_aa, T.T, lower=True, check_finite=False).T
            blocks.append((s, F, block))
            accepted.extend(s + j for j in acc_local)
            F += nb
        acc = np.asarray(accepted, dtype=np.intp)
        L = np.zeros((F, F))  # L = G[A]: gathered block by block (rows above a block are 0)
        for r0, c0, blk in blocks:
            first = int(np.searchsorted(acc, r0))
            L[first:, c0:c0 + blk.shape[1]] = blk[acc[first:] - r0]
        return cls(points=Z, kernel=kernel, tol=tol, accepted=acc, factor=L, blocks=blocks,
                   seconds=time.perf_counter() - t0)

    @property
    def features(self) -> np.ndarray:
        """:math:`G` assembled as one (M x F) array (memory M F; for diagnostics and tests)."""
        G = np.zeros((self.points.shape[0], self.dim))
        for r0, c0, blk in self.blocks:
            G[r0:, c0:c0 + blk.shape[1]] = blk
        return G

    def column_sums(self, m: int, f: int) -> tuple[np.ndarray, np.ndarray]:
        """Sums of :math:`G` and of :math:`G^2` over the first ``m`` rows, for the first ``f`` columns."""
        s1, s2 = np.zeros(f), np.zeros(f)
        for r0, c0, blk in self.blocks:
            if c0 >= f or r0 >= m:
                continue
            part = blk[: m - r0, : f - c0]
            s1[c0:c0 + part.shape[1]] = part.sum(axis=0)
            s2[c0:c0 + part.shape[1]] = np.einsum("ij,ij->j", part, part)
        return s1, s2

    @property
    def dim(self) -> int:
        """Number :math:`F` of basis vectors."""
        return int(self.accepted.shape[0])

    def dim_for_prefix(self, m: npt.ArrayLike) -> np.ndarray:
        """:math:`F(M')`: basis size of the first ``m`` points (vectorised)."""
        return np.searchsorted(self.accepted, np.asarray(m), side="left")

    def coordinates(self, row_means: np.ndarray) -> np.ndarray:
        r""":math:`\alpha = L^{-1}\bar k_A` (coordinates of the projected KME)."""
        kbar = np.asarray(row_means, dtype=np.float64)
        if kbar.shape != (self.points.shape[0],):
            raise ValueError(f"row_means must have shape ({self.points.shape[0]},), got {kbar.shape}.")
        if not self.dim:
            return np.zeros(0)
        alpha: np.ndarray = solve_triangular(self.factor, kbar[self.accepted], lower=True, check_finite=False)
        return alpha

    def weights(self, beta: np.ndarray, m: int | None = None) -> np.ndarray:
        r"""Weights on the first ``m`` points with :math:`w_A = L^{-\top}\beta`, zero elsewhere."""
        m = self.points.shape[0] if m is None else int(m)
        f = int(self.dim_for_prefix(m))
        beta = np.asarray(beta, dtype=np.float64)
        if beta.shape != (f,):
            raise ValueError(f"beta must have length F(M')={f}, got {beta.shape}.")
        w = np.zeros(m)
        if f:
            w[self.accepted[:f]] = solve_triangular(self.factor[:f, :f], beta, lower=True, trans="T",
                                                    check_finite=False)
        return w

    def public_target(self, m: int | None = None, *, points_are_sample: bool) -> tuple[np.ndarray, np.ndarray]:
        r"""Public shrinkage target for :math:`\alpha` on the first ``m`` points, and a grouping key.

        For a publishable subset (``points_are_sample=True``) the target is the
        coordinate vector of the public points' own KME,
        :math:`c_f = \langle b_f, \frac1{M'}\sum_{m\le M'} k(z_m,\cdot)\rangle
        = \frac1{M'}\sum_m b_f(z_m)`: shrinking all the way to it gives the
        paper's uniform baseline. The key is the sampling variance of
        :math:`b_f` over the public points after the one that created
        :math:`b_f` (an estimate of how far :math:`\alpha_f` may be from
        :math:`c_f`), used only to group coordinates of similar uncertainty.
        For points drawn from :math:`q` the target is 0 and the key is constant.
        """
        m = self.points.shape[0] if m is None else int(m)
        f = int(self.dim_for_prefix(m))
        if not points_are_sample:
            return np.zeros(f), np.full(f, np.inf)
        s1, s2 = self.column_sums(m, f)
        return _public_target(s1, s2, np.diag(self.factor)[:f], self.accepted[:f], m)


def _public_target(col_sums: np.ndarray, col_sq_sums: np.ndarray, own: np.ndarray, pos: np.ndarray,
                   m: int) -> tuple[np.ndarray, np.ndarray]:
    """Target (public KME coordinates) and grouping key from column sums of G over the first m rows."""
    counts = (m - 1 - pos).astype(np.float64)  # public points after the creator of b_f
    tot = col_sums - own  # rows before pos: 0 for accepted points, |value| <= sqrt(tol) for skipped ones
    sq = col_sq_sums - own**2
    with np.errstate(invalid="ignore", divide="ignore"):
        mean_after = np.where(counts > 0, tot / counts, 0.0)
        key = np.where(counts > 1, np.maximum(sq - counts * mean_after**2, 0.0) / (counts - 1) / counts, np.inf)
    return col_sums / m, key


def sure_shrink(beta: npt.ArrayLike, target: npt.ArrayLike, sigma: float, shape: npt.ArrayLike, *,
                grid: np.ndarray | None = None) -> np.ndarray:
    r"""Empirical-Bayes shrinkage toward a public target, tuned by Stein's unbiased risk estimate.

    Model: :math:`\alpha_f - t_f \sim \mathcal N(0, \tau v_f)` with a public
    shape :math:`v_f`, observed :math:`\beta_f = \alpha_f + \mathcal N(0, \sigma^2)`.
    The posterior mean is :math:`\tilde\alpha_f = t_f + g_f(\beta_f - t_f)`,
    :math:`g_f = \tau v_f/(\tau v_f + \sigma^2)`. The scale :math:`\tau` is
    chosen on a log grid (plus :math:`\tau = 0`, the target itself, and
    :math:`\tau = \infty`, no shrinkage) by minimising

    .. math:: \mathrm{SURE}(\tau) = \sum_f (1 - g_f)^2(\beta_f - t_f)^2 + \sigma^2(2g_f - 1),

    an unbiased estimate of :math:`\mathbb E\|\tilde\alpha - \alpha\|^2`
    (Stein 1981; Xie, Kou & Brown 2012 for this heteroscedastic family). Uses
    only :math:`\beta`, :math:`\sigma` and public inputs: post-processing.

    Parameters
    ----------
    beta : ndarray (F,)
        Noisy coordinates :math:`\beta`.
    target : ndarray (F,)
        Public target :math:`t`.
    sigma : float
        Noise standard deviation :math:`\sigma` (public).
    shape : ndarray (F,)
        Public prior shape :math:`v_f` (non-finite or non-positive entries get
        ten times the largest finite one).
    grid : ndarray, optional
        Values of :math:`\tau` to try (default: 161 points from
        :math:`10^{-8}` to :math:`10^{8}`).

    Returns
    -------
    ndarray (F,)
        The shrunk coordinates.
    """
    beta = np.asarray(beta, dtype=np.float64)
    d = beta - np.asarray(target, dtype=np.float64)
    v = np.asarray(shape, dtype=np.float64)
    if not beta.size:
        return beta.copy()
    finite = np.isfinite(v) & (v > 0)
    fill = v[finite].max() * 10.0 if finite.any() else 1.0
    v = np.where(finite, v, fill)
    s2 = float(sigma) ** 2
    taus = np.logspace(-8, 8, 161) if grid is None else np.asarray(grid, dtype=float)
    d2 = d * d
    best_g, best = np.ones_like(d), float(s2 * d.size)  # tau = inf: no shrinkage, risk F sigma^2
    for tau in np.concatenate([[0.0], taus]):
        g = tau * v / (tau * v + s2)
        risk = float(np.sum((1.0 - g) ** 2 * d2 + s2 * (2.0 * g - 1.0)))
        if risk < best:
            best, best_g = risk, g
    shrunk: np.ndarray = beta - (1.0 - best_g) * d
    return shrunk


def james_stein_shrink(beta: npt.ArrayLike, target: npt.ArrayLike, sigma: float, *, order: npt.ArrayLike | None = None,
                       group_size: int = 32) -> np.ndarray:
    r"""Positive-part James–Stein shrinkage of noisy coordinates toward a target, by groups.

    For each group :math:`g` of :math:`n_g \ge 3` coordinates,

    .. math:: \tilde\alpha_g = t_g + \Bigl(1 - \frac{(n_g - 2)\sigma^2}{\|\beta_g - t_g\|^2}\Bigr)_+ (\beta_g - t_g),

    which has smaller expected squared error than :math:`\beta_g` for any target
    independent of the noise (James & Stein 1961; positive part: Baranchik 1964).
    Groups of fewer than 3 coordinates are left unchanged. ``order`` (public)
    arranges coordinates so that groups hold coordinates of similar size.
    Pure post-processing of :math:`\beta`.

    Parameters
    ----------
    beta : ndarray (F,)
        Noisy coordinates.
    target : ndarray (F,)
        Public target :math:`t`.
    sigma : float
        Noise standard deviation.
    order : array of int, optional
        Public order of the coordinates before grouping (default: as given).
    group_size : int, default=32
        Coordinates per group.

    Returns
    -------
    ndarray (F,)
    """
    beta = np.asarray(beta, dtype=np.float64)
    target = np.asarray(target, dtype=np.float64)
    sigma = float(sigma)
    out = beta.copy()
    idx = np.arange(beta.shape[0]) if order is None else np.asarray(order)
    for start in range(0, idx.shape[0], group_size):
        g = idx[start:start + group_size]
        if g.shape[0] < 3:
            continue
        r = beta[g] - target[g]
        ss = float(r @ r)
        factor = max(0.0, 1.0 - (g.shape[0] - 2) * sigma**2 / ss) if ss > 0 else 0.0
        out[g] = target[g] + factor * r
    return out


def shrink_coordinates(B: SubspaceBasis, beta: npt.ArrayLike, sigma: float, *, points_are_sample: bool,
                       m: int | None = None, target: npt.ArrayLike | None = None,
                       key: npt.ArrayLike | None = None) -> np.ndarray:
    """The ``basis="auto"`` post-processing: SURE-tuned shrinkage toward the public
    KME's coordinates for a publishable subset, grouped James–Stein toward 0 otherwise.

    Parameters
    ----------
    B : SubspaceBasis
        The public basis.
    beta : ndarray (F,)
        Noisy coordinates.
    sigma : float
        Noise standard deviation.
    points_are_sample : bool
        Whether the points are a publishable subset (SURE toward their KME) or
        not (James–Stein toward 0).
    m : int, optional
        Use the first ``m`` points (default: all).
    target : ndarray (F,), optional
        A precomputed public target (with ``key``); default
        :meth:`SubspaceBasis.public_target`.
    key : ndarray (F,), optional
        The grouping key / prior shape that goes with ``target``.

    Returns
    -------
    ndarray (F,)
    """
    if target is None:
        target, key = B.public_target(m, points_are_sample=points_are_sample)
    if points_are_sample:
        # key comes with target (None only if a caller gives target alone: a constant prior shape then)
        return sure_shrink(beta, target, sigma, key)  # type: ignore[arg-type]
    return james_stein_shrink(beta, target, sigma)


def project_weights(w: npt.ArrayLike, K: np.ndarray, *, constraint: str = "simplex", radius: float = 1.0,
                    max_iter: int = 500, tol: float = 1e-10) -> np.ndarray:
    r"""Closest weights in RKHS norm within a constraint set (post-processing).

    Solves :math:`\min_u (u - w)^\top K (u - w)` over the probability simplex
    (``"simplex"``: :math:`u \ge 0, \sum u = 1`) or the L1 ball
    (``"l1"``: :math:`\sum|u| \le C`, Theorem 11 / eq. (15)), by accelerated
    projected gradient (FISTA) with step :math:`1/\lambda_{\max}(K)`.
    The result represents the element of the constraint set's span closest to
    the released :math:`\sum w_m k(z_m,\cdot)`; it reads no private data.

    Parameters
    ----------
    w : ndarray (M,)
        Released weights.
    K : ndarray (M, M)
        Gram matrix of the points.
    constraint : {"simplex", "l1"}, default="simplex"
        The constraint set.
    radius : float, default=1.0
        :math:`C` of the L1 ball.
    max_iter : int, default=500
        FISTA iterations.
    tol : float, default=1e-10
        Stop when no weight moves by more than this.

    Returns
    -------
    ndarray (M,)
    """
    w = np.asarray(w, dtype=np.float64)
    check_in(constraint, {"simplex", "l1"}, name="constraint")
    radius = check_positive_float(radius, name="radius")
    lam = float(np.linalg.eigvalsh(K)[-1]) if K.shape[0] <= 2000 else _power_iteration(K)
    step = 1.0 / max(lam, 1e-300)
    proj = project_simplex if constraint == "simplex" else (lambda v: project_l1_ball(v, radius))
    u = proj(w)
    y, t = u.copy(), 1.0
    for _ in range(max_iter):
        grad = K @ (y - w)
        u_new = proj(y - step * grad)
        t_new = 0.5 * (1 + math.sqrt(1 + 4 * t * t))
        y = u_new + ((t - 1) / t_new) * (u_new - u)
        if np.abs(u_new - u).max() <= tol:
            u = u_new
            break
        u, t = u_new, t_new
    return u


def _power_iteration(K: np.ndarray, n_iter: int = 50) -> float:
    v = np.ones(K.shape[0]) / math.sqrt(K.shape[0])
    lam = 0.0
    for _ in range(n_iter):
        v = K @ v
        lam = float(np.linalg.norm(v))
        v /= lam
    return lam * 1.01


def draw_points_from_q(m: int, dim: int, *, scale: float, rng: np.random.Generator,
                       center: npt.ArrayLike | None = None) -> np.ndarray:
    r"""Data-independent synthetic points :math:`z_m \sim \mathcal N(c, s^2 I_D)`.

    ``center`` must be public (declared), never a statistic of the private data.
    """
    m = check_positive_int(m, name="n_points")
    scale = check_positive_float(scale, name="q_scale")
    c = np.zeros(dim) if center is None else check_array(center, name="q_center", ndim=1)
    if c.shape[0] != dim:
        raise ValueError(f"q_center has length {c.shape[0]} but the data has {dim} columns.")
    return c + scale * rng.standard_normal((m, dim))


def algorithm1(
    X: npt.ArrayLike,
    Z: npt.ArrayLike | None = None,
    *,
    kernel: Kernel,
    epsilon: float | None = None,
    delta: float | None = None,
    n_points: int | None = None,
    q_scale: float | None = None,
    q_center: npt.ArrayLike | None = None,
    points_are_sample: bool = False,
    calibration: str | None = None,
    neighbouring: str | None = None,
    sensitivity: str = "tight",
    domain: tuple[npt.ArrayLike, npt.ArrayLike] | None = None,
    clip: bool = False,
    basis: str = "full",
    tol: float = DEFAULT_TOL,
    weights: str = "free",
    l1_radius: float = 1.0,
    n_private: int | None = None,
    random_state: int | np.random.Generator | None = None,
    basis_cache: SubspaceBasis | None = None,
    noise: str | None = None,
    point_domain: EmbeddedDomain | None = None,
    privacy: PrivacySpec | None = None,
) -> Release:
    r"""Release a DP weighted synthetic dataset by Algorithm 1 of Balog et al. (2018).

    Guarantee
    ---------
    :math:`(\varepsilon, \delta)`-DP with respect to ``neighbouring`` ("replace-one":
    same public size N, one row replaced; "add-remove": one row added or removed,
    embedding normalised by the public ``n_private``), provided ``Z`` is chosen
    independently of ``X`` (a publishable subset or draws from a public ``q``)
    and :math:`k(x,x)\le 1`. Mechanism: Gaussian noise on the F basis coordinates
    of the projected empirical KME, :math:`\sigma` calibrated to the L2 sensitivity
    :math:`\Delta` (:func:`dpkme.privacy.sensitivity.kme_sensitivity`: :math:`\sqrt2/N`
    "tight", :math:`2/N` "paper") by the analytic Gaussian mechanism (Balle &
    Wang 2018) or the classic :math:`\Delta\sqrt{2\ln(1.25/\delta)}/\varepsilon`.
    Everything after the noise (weights, shrinkage, constraints) is
    post-processing.

    Parameters
    ----------
    X : array (N, D)
        Private data.
    Z : array (M, D), optional
        Public synthetic points. If omitted, ``n_points`` points are drawn from
        :math:`q = \mathcal N(\text{q\_center}, \text{q\_scale}^2 I)` (or
        from ``point_domain``) with the release's public stream (see
        ``random_state``).
    kernel : Kernel
        Bounded kernel, :math:`k(x,x) \le 1`.
    epsilon : float, optional
        Privacy parameter :math:`\varepsilon > 0` (required unless ``privacy`` gives it).
    delta : float, optional
        Privacy parameter :math:`0 < \delta < 1` (required unless ``privacy`` gives it).
    n_points : int, optional
        Number :math:`M` of points to draw when ``Z`` is omitted.
    q_scale : float, optional
        Standard deviation of q (public; needed to draw from q).
    q_center : float or array (D,), optional
        Mean of q (public; default 0).
    calibration : {"analytic", "classic"}, optional
        Calibration of the Gaussian noise (default ``"analytic"``, or ``privacy.calibration``).
    neighbouring : {"replace-one", "add-remove"}, optional
        Neighbouring relation of the guarantee (default ``"replace-one"``, or ``privacy.relation``).
    sensitivity : {"tight", "paper"}, default="tight"
        :math:`\sqrt{2a - 2k_{\min}}/N` or the paper's :math:`2/N`
        (:func:`dpkme.privacy.sensitivity.kme_sensitivity`).
    domain : (lower, upper), optional
        A public box declared to contain every possible row; it lowers the
        "tight" replace-one sensitivity (:func:`dpkme.privacy.sensitivity.kme_sensitivity`).
        Data outside it is refused (ValueError giving the number of rows and
        the columns, not the values) unless ``clip=True``.
    clip : bool, default=False
        Clip every row to ``domain`` instead of refusing rows outside it
        (a per-row map: the guarantee holds; see
        :func:`dpkme.privacy.sensitivity.enforce_domain`).
    points_are_sample : bool
        Declare that ``Z`` is a publishable subset (a sample of the same
        population); enables the public shrinkage target of ``basis="auto"``.
    basis : {"full", "auto"}
        ``"full"``: the paper's Gram–Schmidt basis. ``"auto"``: the same basis with
        James–Stein shrinkage of the noisy coordinates toward a public target.
    tol : float, default=DEFAULT_TOL
        Gram–Schmidt acceptance threshold (:meth:`SubspaceBasis.fit`).
    weights : {"free", "simplex", "l1"}
        Optional post-processing of the released weights onto the simplex or the
        L1 ball of radius ``l1_radius`` (Theorem 11) — closest in RKHS norm.
    l1_radius : float, default=1.0
        :math:`C` of the L1 ball.
    n_private : int, optional
        Public size :math:`N` (must equal the number of rows under replace-one;
        the normaliser under add-remove).
    basis_cache : SubspaceBasis, optional
        A basis already fitted on the same ``Z``, kernel and ``tol`` (public work
        can be reused across releases).
    random_state : None, int or numpy.random.Generator
        Split into two independent child streams
        (:func:`dpkme._validation.spawn_streams`): child 0 draws the points from
        q, child 1 the privacy noise; for an int ``seed`` these are
        ``SeedSequence(seed).spawn(2)[0]`` and ``[1]``, so the noise does not
        depend on how many points were drawn. An int makes the release
        replayable (``noise_source="seeded"``, teaching only: the seed removes
        the noise); ``None`` uses OS entropy and records no seed
        (``"os-entropy"``, a real release).
    noise : {"numpy", "opendp"}, optional
        Sampler of the Gaussian noise (:func:`dpkme.privacy.calibration.add_gaussian_noise`; default
        ``"numpy"``, or ``"opendp"`` when ``privacy.noise == "opendp"``).
        ``"numpy"``: child 1 of ``random_state``; assumes idealised
        floating-point numerics (Mironov 2012). ``"opendp"``: OpenDP's exact
        sampler with exactly the calibrated :math:`\sigma`, resistant to
        floating-point attacks, from its own cryptographically secure generator:
        it cannot be seeded (an int ``random_state`` is a ValueError), the
        release records ``noise_source="opendp"`` and no seed.
    point_domain : EmbeddedDomain, optional
        A declared, public domain (:class:`dpkme.schema.EmbeddedDomain` or any
        object with ``sample(n, rng)``; see
        :func:`dpkme.reduced_set.check_domain_object`): when ``Z`` is omitted
        the ``n_points`` points are ``point_domain.sample(n_points, rng)``
        with the public stream, i.e. uniform over the declared domain, instead
        of draws from q (``q_scale`` is then not needed). Not to be confused
        with ``domain``, the box that tightens the sensitivity.
    privacy : PrivacySpec, optional
        The typed alternative to ``epsilon``, ``delta``, ``neighbouring``, ``calibration`` and ``noise``
        (:class:`~dpkme.privacy.spec.PrivacySpec`, resolved by :func:`~dpkme.privacy.spec.resolve`): its fields
        are used, and a loose argument that disagrees is a ValueError naming both. Its noise source must be
        honoured (:func:`~dpkme.privacy.spec.resolve_noise`): ``"os-entropy"`` needs ``random_state=None``,
        ``"opendp"`` is ``noise="opendp"``, and ``"seeded"`` needs an int ``random_state`` (a replayable demo
        labelled not private, exactly as with that ``random_state`` alone).

    Returns
    -------
    Release
    """
    epsilon, delta, neighbouring, calibration = resolve(privacy, epsilon=epsilon, delta=delta,
                                                        neighbouring=neighbouring, calibration=calibration)
    noise = resolve_noise(privacy, noise=noise, random_state=random_state, function="algorithm1")
    epsilon, delta = check_release_args(kernel, epsilon, delta, calibration=calibration, neighbouring=neighbouring,
                                        sensitivity=sensitivity)
    check_in(basis, {"full", "auto"}, name="basis")
    check_in(weights, {"free", "simplex", "l1"}, name="weights")
    X = check_array(X, name="X", min_rows=0 if neighbouring == "add-remove" else 1)
    X = enforce_domain(X, domain, clip=clip)  # the box sensitivity holds only for data inside the box
    if domain is not None:
        domain = check_domain(domain, X.shape[1])
    return run_algorithm1(   # the one orchestration (dpkme.release.core); X is summed in blocks in memory
        InMemoryRows(X, allow_empty=True), Z, kernel=kernel, epsilon=epsilon, delta=delta, n_points=n_points,
        q_scale=q_scale, q_center=q_center, points_are_sample=points_are_sample, calibration=calibration,
        neighbouring=neighbouring, sensitivity=sensitivity, domain=domain, clip=clip, basis=basis, tol=tol,
        weights=weights, l1_radius=l1_radius, n_private=n_private, random_state=random_state,
        basis_cache=basis_cache, noise=noise, point_domain=point_domain)


def run_algorithm1(
    rows: RowSums,
    Z: npt.ArrayLike | None,
    *,
    kernel: Kernel,
    epsilon: float,
    delta: float,
    n_points: int | None,
    q_scale: float | None,
    q_center: npt.ArrayLike | None,
    points_are_sample: bool,
    calibration: str,
    neighbouring: str,
    sensitivity: str,
    domain: tuple[npt.NDArray[np.float64], npt.NDArray[np.float64]] | None,
    clip: bool,
    basis: str,
    tol: float,
    weights: str,
    l1_radius: float,
    n_private: int | str | None,
    count_share: float = 0.1,
    random_state: int | np.random.Generator | None,
    basis_cache: Any,
    noise: str,
    point_domain: EmbeddedDomain | None,
    progress: Callable[[float, str], object] | None = None,
) -> Release:
    r"""Algorithm 1 over any :class:`RowSums`: the whole orchestration of :func:`dpkme.release.algorithm1`.

    Guarantee: :math:`(\varepsilon,\delta)`-DP with respect to ``neighbouring``: Gaussian noise on the
    coordinates :math:`\alpha = L^{-1}\bar k_A` of the projected KME, :math:`\sigma` calibrated to
    :func:`~dpkme.privacy.sensitivity.kme_sensitivity` (with ``domain``, a checked box, as its box); points,
    basis, weights and shrinkage are public or post-processing. The row count by ``n_private``.

    Parameters
    ----------
    rows : RowSums
        The private rows (already checked against ``domain`` where one is declared).
    Z, kernel, epsilon, delta, n_points, q_scale, q_center, points_are_sample, calibration, neighbouring
        As :func:`dpkme.release.algorithm1` (``epsilon`` and ``delta`` resolved).
    sensitivity, domain, clip, basis, tol, weights, l1_radius
        As :func:`dpkme.release.algorithm1` (``domain`` checked; ``clip`` recorded).
    n_private : None, int or "private"
        The row-count policy.
    count_share : float, default=0.1
        Share of :math:`\varepsilon` spent on the count with ``n_private="private"``.
    random_state, basis_cache, noise, point_domain
        As :func:`dpkme.release.algorithm1` (``noise`` resolved).
    progress : callable, optional
        ``progress(fraction, message)`` during the private pass.

    Returns
    -------
    Release
    """
    from ..privacy.calibration import check_noise_source

    t0 = time.perf_counter()
    epsilon, delta = check_release_args(kernel, epsilon, delta, calibration=calibration, neighbouring=neighbouring,
                                        sensitivity=sensitivity)
    check_in(basis, {"full", "auto"}, name="basis")
    check_in(weights, {"free", "simplex", "l1"}, name="weights")
    policy = n_policy(n_private, neighbouring, count_share, noise)
    dim = rows.dim
    check_noise_source(noise, random_state)
    rng, seed, noise_source = noise_rng(random_state)
    # independent streams: points from q, privacy noise (a real release: each from its own OS entropy)
    streams = spawn_streams(rng, 3 if policy == "private" else 2, fresh=noise_source == "os-entropy")
    rng_public, rng_noise = streams[:2]
    if noise == "opendp":
        seed, noise_source = None, "opendp"  # OpenDP's own generator: nothing recorded can replay the noise
    if Z is not None and point_domain is not None:
        raise ValueError("give either public points Z or a point_domain to draw them from, not both.")
    if Z is None and point_domain is not None:
        if n_points is None:
            raise ValueError("give n_points to draw the points from point_domain.")
        m = check_positive_int(n_points, name="n_points")
        from ..reduced_set import PointSource

        Z = PointSource(dim, domain=point_domain).take(m, rng_public)
        source = "domain"
    elif Z is None:
        if n_points is None or q_scale is None:
            raise ValueError("give public points Z, or n_points and q_scale to draw them from q.")
        Z = draw_points_from_q(n_points, dim, scale=q_scale, rng=rng_public, center=q_center)
        source = "q"
    else:
        Z = check_array(Z, name="Z", n_features=dim)
        source = "public"
    Z = np.asarray(Z, dtype=np.float64)
    # compared with the public size: under add/remove the true row count is private, and refusing by it would
    # tell a table from its neighbour with one row fewer
    if source == "public" and points_are_sample and policy == "declared" and isinstance(n_private, int) \
            and Z.shape[0] > n_private:
        raise ValueError(f"a publishable subset cannot have more rows (M={Z.shape[0]}) than the private data "
                         f"(public N={n_private}); use fewer public points.")
    if source == "public" and points_are_sample and policy == "public" and rows.n_rows is not None \
            and Z.shape[0] > rows.n_rows:
        raise ValueError(f"a publishable subset cannot have more rows (M={Z.shape[0]}) than the private data "
                         f"(public N={rows.n_rows}); use fewer public points.")
    if basis_cache is not None:
        if basis_cache.points.shape != Z.shape or not np.array_equal(basis_cache.points, Z) \
                or basis_cache.kernel != kernel or basis_cache.tol != tol:
            raise ValueError("basis_cache was fitted on different points, kernel or tol.")
        B = basis_cache
    else:
        B = SubspaceBasis.fit(Z, kernel=kernel, tol=tol)

    # --- the only access to the private data: the row sums against the public points, noised once here ---
    stat = rows.kernel_row_sums(Z, kernel, progress=progress)
    rows.close()
    if policy == "public" and source == "public" and points_are_sample and Z.shape[0] > stat.count:
        raise ValueError(f"a publishable subset cannot have more rows (M={Z.shape[0]}) than the private data "
                         f"(public N={stat.count}); use fewer public points.")   # N is public under replace-one
    noisy = privatise(
        stat, policy=policy, n_private=n_private, neighbouring=neighbouring, epsilon=epsilon, delta=delta,
        calibration=calibration, count_share=count_share,
        sensitivity_at=lambda n: kme_sensitivity(n=n, kernel=kernel, neighbouring=neighbouring, mode=sensitivity,
                                                 domain=domain),
        transform=B.coordinates, rng_noise=rng_noise if noise == "numpy" else None,
        rng_count=streams[2] if policy == "private" else None, noise=noise, label="Algorithm 1",
        mechanism="algorithm1")
    del stat  # nothing below may read the private data (or its unnoised sums)

    # --- post-processing of beta with public inputs only ---
    beta = noisy.vector
    if basis == "auto":
        beta = shrink_coordinates(B, beta, noisy.sigma, points_are_sample=points_are_sample and source == "public")
    w = B.weights(beta)
    if weights != "free":
        w = project_weights(w, kernel.gram(Z), constraint="simplex" if weights == "simplex" else "l1",
                            radius=l1_radius)
    return Release(
        points=Z, weights=w, mechanism="algorithm1", epsilon=epsilon, delta=delta, sigma=noisy.sigma,
        sensitivity=noisy.sensitivity, neighbouring=neighbouring, calibration=calibration, kernel=kernel, seed=seed,
        n_private=noisy.n_private, seconds=time.perf_counter() - t0, noise_source=noise_source,
        params={"n_points": int(Z.shape[0]), "basis_dim": B.dim, "basis": basis, "tol": tol,
                "points_source": source, "q_scale": q_scale, "weights": weights,
                "sensitivity_mode": sensitivity, "achieved_delta": noisy.calibration.achieved_delta,
                "calibration_proven": noisy.calibration.proven,
                "domain": None if domain is None else [domain[0].tolist(), domain[1].tolist()], "clip": clip,
                **policy_params(policy, rows.record, noisy.params)},
        charge=noisy.charge,
    )

def _algorithm1_charge_of(cal: GaussianCalibration, neighbouring: str, label: str | None = None) -> PrivacyCharge:
    """The charge of Algorithm 1's Gaussian noise ``cal`` (the release's own and :func:`algorithm1_charge`'s)."""
    return gaussian_charge(label or "Algorithm 1", cal, relation=neighbouring, details={"mechanism": "algorithm1"})


def uniform_baseline(Z: npt.ArrayLike, *, kernel: Kernel) -> Release:
    r"""The paper's baseline: public points weighted :math:`1/M` (no private data, no noise).

    It is a consistent estimator when the public points are a sample of the
    population (Proposition 6); ε = 0 is spent.

    Parameters
    ----------
    Z : array (M, D)
        Public points.
    kernel : Kernel
        The kernel of the release.

    Returns
    -------
    Release
    """
    Z = check_array(Z, name="Z")
    m = Z.shape[0]
    return Release(points=Z, weights=np.full(m, 1.0 / m), mechanism="uniform-baseline", epsilon=0.0,
                   delta=0.0, sigma=0.0, sensitivity=0.0, neighbouring="replace-one", calibration="none",
                   kernel=kernel, seed=None, n_private=0, params={"n_points": m})
