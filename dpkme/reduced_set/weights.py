r"""Weights of a reduced-set expansion for fixed points: constrained least squares.

For fixed synthetic points :math:`z_1,\dots,z_M` with feature matrix
:math:`\Phi = \Phi(Z) \in \mathbb R^{M\times J}` the weights solve

.. math::
    \min_{w\in\mathcal C}\ \|\Phi^\top w - \tilde\mu\|_2^2 + \lambda\|w\|_1

with one of the feasible sets

* ``"simplex"``: :math:`w\ge0,\ \sum_m w_m = 1` (``radius`` scales the sum) —
  a probability measure, like the empirical KME itself;
* ``"sub-simplex"``: :math:`w\ge0,\ \sum_m w_m \le C` (the non-negative part
  of the L1 ball: a sub-probability measure, which may shrink towards 0);
* ``"nonnegative"``: :math:`w \ge 0`;
* ``"l1-ball"``: :math:`\sum_m|w_m| \le C` — equation (5) of Balog et al. (2018)
  (with :math:`C=1`) and Theorem 11, which bounds the effect of the noise by
  :math:`C` times its dual norm;
* ``"lasso"``: :math:`\mathcal C = \mathbb R^M` with penalty :math:`\lambda > 0`
  (the authors' code: scikit-learn ``Lasso(alpha=100/(2NJ))``, i.e.
  :math:`\lambda = 100/N` in this scaling);
* ``"free"``: unconstrained least squares.

Solved by FISTA (Beck & Teboulle 2009) with function-value adaptive restart
(O'Donoghue & Candès 2015); step :math:`1/L`, :math:`L = 2\|\Phi\|_2^2` from a
power iteration. Projections: Euclidean projection onto the simplex and the L1
ball by sorting (Duchi et al. 2008), soft thresholding for the penalty. These
functions see only public quantities (points, frequencies, the privatised
vector); they are post-processing.
"""

from __future__ import annotations

import numpy as np

from .._validation import check_in, check_positive_float

__all__ = ["WEIGHT_CONSTRAINTS", "project_simplex", "project_l1_ball", "project", "fit_weights"]

WEIGHT_CONSTRAINTS = ("simplex", "sub-simplex", "nonnegative", "l1-ball", "lasso", "free")


def project_simplex(v: np.ndarray, radius: float = 1.0) -> np.ndarray:
    r"""Euclidean projection onto :math:`\{w \ge 0, \sum w = C\}` (Duchi et al. 2008, Fig. 1).

    Parameters
    ----------
    v : ndarray (M,)
        The vector to project.
    radius : float, default=1.0
        :math:`C > 0`.

    Returns
    -------
    ndarray (M,)
    """
    v = np.asarray(v, dtype=np.float64)
    if v.size == 0:
        return v.copy()
    u = np.sort(v)[::-1]
    css = np.cumsum(u) - radius
    idx = np.arange(1, v.size + 1)
    cond = u - css / idx > 0
    rho = int(np.nonzero(cond)[0][-1])
    theta = css[rho] / (rho + 1)
    return np.maximum(v - theta, 0.0)


def project_l1_ball(v: np.ndarray, radius: float = 1.0) -> np.ndarray:
    r"""Euclidean projection onto :math:`\{\sum |w| \le C\}` (Duchi et al. 2008, Fig. 1).

    Parameters
    ----------
    v : ndarray (M,)
        The vector to project.
    radius : float, default=1.0
        :math:`C > 0`.

    Returns
    -------
    ndarray (M,)
    """
    v = np.asarray(v, dtype=np.float64)
    if np.abs(v).sum() <= radius:
        return v.copy()
    return np.sign(v) * project_simplex(np.abs(v), radius)


def project(v: np.ndarray, constraint: str, radius: float = 1.0) -> np.ndarray:
    """Projection onto the feasible set of ``constraint`` (identity for lasso/free).

    Parameters
    ----------
    v : ndarray (M,)
        The vector to project.
    constraint : str
        One of :data:`WEIGHT_CONSTRAINTS`.
    radius : float, default=1.0
        :math:`C` of the simplex, sub-simplex or L1 ball.

    Returns
    -------
    ndarray (M,)
    """
    if constraint == "simplex":
        return project_simplex(v, radius)
    if constraint == "l1-ball":
        return project_l1_ball(v, radius)
    if constraint == "sub-simplex":
        pos = np.maximum(np.asarray(v, dtype=np.float64), 0.0)
        return pos if pos.sum() <= radius else project_simplex(v, radius)
    if constraint == "nonnegative":
        return np.maximum(v, 0.0)
    return np.asarray(v, dtype=np.float64).copy()


def _prox(v, constraint, radius, step_penalty):
    if constraint == "lasso":
        return np.sign(v) * np.maximum(np.abs(v) - step_penalty, 0.0)
    return project(v, constraint, radius)


def _spectral_norm_sq(Phi: np.ndarray, rng: np.random.Generator, iters: int = 30) -> float:
    """:math:`\\|\\Phi\\|_2^2` by power iteration on :math:`\\Phi\\Phi^\\top` (slightly overestimated)."""
    x = rng.standard_normal(Phi.shape[0]).astype(Phi.dtype)
    x /= np.linalg.norm(x)
    lam = 0.0
    for _ in range(iters):
        y = Phi @ (Phi.T @ x)
        lam = float(np.linalg.norm(y))
        if lam == 0.0:
            return 0.0
        x = (y / lam).astype(Phi.dtype)
    return 1.05 * lam


def fit_weights(
    Phi: np.ndarray,
    target: np.ndarray,
    *,
    constraint: str = "simplex",
    radius: float = 1.0,
    penalty: float = 0.0,
    w0: np.ndarray | None = None,
    max_iter: int = 500,
    tol: float = 1e-7,
    rng: np.random.Generator | None = None,
) -> tuple[np.ndarray, dict]:
    r"""Weights for fixed points by FISTA (see module docstring).

    Parameters
    ----------
    Phi : ndarray (M, J)
        Feature matrix of the points (float32 or float64).
    target : ndarray (J,)
        :math:`\tilde\mu`.
    constraint : {"simplex", "nonnegative", "l1-ball", "lasso", "free"}
    radius : float
        :math:`C` of the simplex / L1 ball.
    penalty : float
        :math:`\lambda \ge 0` (used by ``"lasso"``; ignored otherwise).
    w0 : ndarray (M,), optional
        Warm start (projected onto the feasible set).
    max_iter : int
    tol : float
        Stop when :math:`\|w_k - w_{k-1}\|_2 \le \text{tol}\cdot\max(1, \|w_k\|_2)`.
    rng : numpy.random.Generator, optional
        Start of the power iteration (a fixed default makes the result deterministic).

    Returns
    -------
    w : ndarray (M,)
        Feasible weights.
    info : dict
        ``objective`` (the penalised objective), ``iterations``, ``lipschitz``.
    """
    check_in(constraint, WEIGHT_CONSTRAINTS, name="constraint")
    radius = check_positive_float(radius, name="radius")
    penalty = check_positive_float(penalty, name="penalty", allow_zero=True)
    M = Phi.shape[0]
    t64 = np.asarray(target, dtype=np.float64)
    rng = np.random.default_rng(0) if rng is None else rng

    def residual(w):
        r = (Phi.T @ w.astype(Phi.dtype)).astype(np.float64)
        r -= t64
        return r

    def objective(w, r):
        return float(r @ r) + (penalty * float(np.abs(w).sum()) if constraint == "lasso" else 0.0)

    L = 2.0 * _spectral_norm_sq(Phi, rng)
    if L <= 0.0:
        L = 1.0
    step = 1.0 / L
    if w0 is None:
        w0 = np.full(M, radius / M) if constraint in ("simplex", "sub-simplex", "l1-ball") else np.zeros(M)
    # Residuals are affine in w, so the residual of the extrapolated point y is
    # extrapolated too: two matrix-vector products per iteration.
    x = _prox(np.asarray(w0, dtype=np.float64), constraint, radius, 0.0)
    r_x = residual(x)
    f_x = objective(x, r_x)
    y, r_y, t = x.copy(), r_x.copy(), 1.0
    it = 0
    for it in range(1, max_iter + 1):  # noqa: B007 (the count after the loop is reported)
        g = 2.0 * (Phi @ r_y.astype(Phi.dtype)).astype(np.float64)
        x_new = _prox(y - step * g, constraint, radius, step * penalty)
        r_new = residual(x_new)
        f_new = objective(x_new, r_new)
        if f_new > f_x:  # adaptive restart: drop the momentum, retry from x
            if t == 1.0:
                break
            t, y, r_y = 1.0, x.copy(), r_x.copy()
            continue
        t_new = 0.5 * (1.0 + np.sqrt(1.0 + 4.0 * t * t))
        mom = (t - 1.0) / t_new
        y = x_new + mom * (x_new - x)
        r_y = r_new + mom * (r_new - r_x)
        change = float(np.linalg.norm(x_new - x))
        x, r_x, f_x, t = x_new, r_new, f_new, t_new
        if change <= tol * max(1.0, float(np.linalg.norm(x))):
            break
    f_final = f_x
    return x, {"objective": f_final, "iterations": it, "lipschitz": L}
