r"""Joint optimisation of all synthetic locations and weights by L-BFGS.

Minimises the reduced-set objective (5) of Balog et al. (2018) over all
:math:`M` points and weights at once,

.. math::
    f(Z, w) = \Bigl\|\sum_{m=1}^M w_m\phi(z_m) - \tilde\mu\Bigr\|_2^2,

with the analytic, fully vectorised gradient of
:meth:`FourierMap.objective` and scipy's L-BFGS-B. The weight constraint is
handled by a smooth parameterisation (so that plain L-BFGS applies) or by
L-BFGS-B bounds:

* ``"simplex"``: :math:`w = C\,\mathrm{softmax}(\theta)`, so :math:`w_m > 0`,
  :math:`\sum_m w_m = C`; :math:`\partial f/\partial\theta = w\odot(g -
  \langle w, g\rangle/C)` with :math:`g = \partial f/\partial w`.
* ``"sub-simplex"``: :math:`w = C\,\mathrm{softmax}(\theta, \theta_0)_{1:M}`
  (one slack logit), so :math:`w \ge 0`, :math:`\sum_m w_m \le C`.
* ``"l1-ball"``: :math:`w = C(p^+ - p^-)` with
  :math:`(p^+, p^-, p_0) = \mathrm{softmax}(\theta^+, \theta^-, \theta_0)`
  (:math:`2M+1` logits, one slack), so :math:`\sum|w| \le C\sum(p^++p^-) \le C`;
  every point of the ball is reachable.
* ``"nonnegative"`` and ``"free"``: the weights themselves, with bounds
  :math:`w \ge 0` (L-BFGS-B) or none.
* ``"uniform"``: :math:`w_m = C/M` fixed (an unweighted synthetic dataset);
  only the locations move.

Locations are optimised in units of the map's length scale
(:math:`z = \hat\ell u`), which makes location and weight gradients comparable.
After L-BFGS the weights are *polished* for the final locations by the convex
solver of :mod:`.weights` (same feasible set; not for ``"uniform"``).
"""

from __future__ import annotations

import math
import time

import numpy as np
from scipy.optimize import minimize

from .._validation import check_in, check_positive_float, check_positive_int
from ._common import PointSource, Problem, Progress, ReducedSetResult
from .weights import fit_weights, project

__all__ = ["JOINT_WEIGHTS", "refine", "joint", "Parameterisation"]

JOINT_WEIGHTS = ("simplex", "sub-simplex", "l1-ball", "nonnegative", "free", "uniform")
_FLOOR = 1e-12


def _softmax(theta: np.ndarray) -> np.ndarray:
    e = np.exp(theta - theta.max())
    return e / e.sum()


class Parameterisation:
    """Map between unconstrained optimisation variables and feasible weights."""

    def __init__(self, constraint: str, m: int, radius: float = 1.0):
        self.constraint = check_in(constraint, JOINT_WEIGHTS, name="weights")
        self.m = m
        self.radius = check_positive_float(radius, name="radius")

    @property
    def size(self) -> int:
        return {"simplex": self.m, "sub-simplex": self.m + 1, "l1-ball": 2 * self.m + 1,
                "uniform": 0}.get(self.constraint, self.m)

    def bounds(self):
        if self.constraint == "nonnegative":
            return [(0.0, None)] * self.m
        return [(None, None)] * self.size

    def encode(self, w: np.ndarray) -> np.ndarray:
        """Variables representing (the projection of) ``w``; zero weights get a tiny floor."""
        C, c = self.radius, self.constraint
        w = project(np.asarray(w, dtype=np.float64), "free" if c == "uniform" else c, C)
        if c == "simplex":
            return np.log(np.maximum(w / C, _FLOOR))
        if c == "sub-simplex":
            slack = max(1.0 - w.sum() / C, 0.0)
            return np.log(np.maximum(np.append(w / C, slack), _FLOOR))
        if c == "l1-ball":
            pos, neg = np.maximum(w, 0.0) / C, np.maximum(-w, 0.0) / C
            slack = max(1.0 - pos.sum() - neg.sum(), 0.0)
            return np.log(np.maximum(np.concatenate([pos, neg, [slack]]), _FLOOR))
        if c == "uniform":
            return np.zeros(0)
        return w

    def decode(self, theta: np.ndarray) -> np.ndarray:
        C, c, m = self.radius, self.constraint, self.m
        if c == "simplex":
            return C * _softmax(theta)
        if c == "sub-simplex":
            return C * _softmax(theta)[:m]
        if c == "l1-ball":
            p = _softmax(theta)
            return C * (p[:m] - p[m:2 * m])
        if c == "uniform":
            return np.full(m, C / m)
        return theta.copy()

    def pullback(self, theta: np.ndarray, w: np.ndarray, g: np.ndarray) -> np.ndarray:
        """Chain rule: gradient w.r.t. the variables from :math:`g = \\partial f/\\partial w`."""
        C, c = self.radius, self.constraint
        if c == "simplex":
            return w * (g - float(w @ g) / C)
        if c == "sub-simplex":
            p = _softmax(theta)
            gp = C * np.append(g, 0.0)
            return p * (gp - float(p @ gp))
        if c == "l1-ball":
            p = _softmax(theta)
            gp = C * np.concatenate([g, -g, [0.0]])
            return p * (gp - float(p @ gp))
        if c == "uniform":
            return np.zeros(0)
        return g


def refine(
    problem: Problem,
    Z0: np.ndarray,
    w0: np.ndarray,
    *,
    weights: str = "simplex",
    radius: float = 1.0,
    max_iter: int = 300,
    polish: bool = True,
    progress: Progress | None = None,
    label: str = "",
    noise_sigma: float | None = None,
    discrepancy: float = 1.0,
    min_iter: int = 20,
) -> tuple[np.ndarray, np.ndarray, dict]:
    r"""L-BFGS on all locations and weights from ``(Z0, w0)`` (see module docstring).

    Early stopping (Morozov's discrepancy principle). With the public noise
    level ``noise_sigma`` :math:`=\sigma` of the Gaussian mechanism, the noise
    has :math:`\mathbb E\|n\|_2^2 = J\sigma^2`; once the residual satisfies
    :math:`\|r\|_2 \le \tau\sqrt J\sigma` (``discrepancy`` :math:`=\tau`) the
    fit explains :math:`\tilde\mu` down to its noise, and further iterations
    fit the noise (observed: the exact-kernel error rises again at ε = 0.1).
    L-BFGS then stops, after at least ``min_iter`` iterations. ``noise_sigma``
    is part of the release (public), so this is post-processing.

    Returns the final points, feasible weights and a dict of diagnostics
    (``objective``, ``iterations``, ``evaluations``, ``message``).
    """
    fmap, target = problem.fmap, np.asarray(problem.target, dtype=np.float64)
    Z0 = np.asarray(Z0, dtype=np.float64)
    M, D = Z0.shape
    par = Parameterisation(weights, M, radius)
    ell = fmap.lengthscale
    x0 = np.concatenate([(Z0 / ell).ravel(), par.encode(w0)])
    nz = M * D
    progress = progress or Progress(None)
    state = {"it": 0, "nfev": 0}

    def fun(x):
        Z = x[:nz].reshape(M, D) * ell
        theta = x[nz:]
        w = par.decode(theta)
        f, gZ, gw = fmap.objective(Z, w, target)
        state["nfev"] += 1
        return f, np.concatenate([(gZ * ell).ravel(), par.pullback(theta, w, gw)])

    stop_below = None if noise_sigma is None else (discrepancy**2) * fmap.n_components * float(noise_sigma) ** 2

    def callback(intermediate_result):
        state["it"] += 1
        progress(state["it"] / max(1, max_iter), f"{label}L-BFGS iteration {state['it']}/{max_iter}")
        if stop_below is not None and state["it"] >= min_iter and intermediate_result.fun <= stop_below:
            state["stopped"] = True
            raise StopIteration

    bounds = [(None, None)] * nz + par.bounds() if weights == "nonnegative" else None
    f0 = fun(x0)[0]
    if stop_below is not None and min_iter == 0 and f0 <= stop_below:
        # already explains the target down to its noise: keep the start as it is
        progress(1.0, f"{label}at the noise level; no refinement")
        return Z0.copy(), par.decode(x0[nz:]), {
            "objective_start": float(f0), "objective_lbfgs": float(f0), "objective": float(f0),
            "iterations": 0, "evaluations": 1, "message": "start within the discrepancy bound",
            "discrepancy_stop": True}
    res = minimize(fun, x0, jac=True, method="L-BFGS-B", bounds=bounds, callback=callback,
                   options={"maxiter": int(max_iter), "maxcor": 20, "ftol": 1e-13, "gtol": 1e-12,
                            "maxfun": int(2 * max_iter + 20)})
    x = res.x if res.fun <= f0 else x0
    Z = x[:nz].reshape(M, D) * ell
    w = par.decode(x[nz:])
    info = {"objective_start": float(f0), "objective_lbfgs": float(min(res.fun, f0)),
            "iterations": int(res.nit), "evaluations": int(state["nfev"]), "message": str(res.message),
            "discrepancy_stop": bool(state.get("stopped", False))}
    if polish and weights != "uniform":
        Phi = fmap.features(Z, dtype=np.float32 if M * fmap.n_components > (1 << 26) else np.float64)
        w_pol, winfo = fit_weights(Phi, target, constraint=weights, radius=radius, w0=w, max_iter=500)
        r_old = fmap.residual(Z, w, target)
        if winfo["objective"] <= float(r_old @ r_old):
            w = w_pol
        info["objective"] = min(winfo["objective"], float(r_old @ r_old))
    else:
        info["objective"] = info["objective_lbfgs"]
    progress(1.0, f"{label}L-BFGS done")
    return Z, w, info


def joint(
    problem: Problem,
    *,
    n_points: int,
    source: PointSource,
    rng: np.random.Generator,
    progress: Progress,
    report_at=(),
    weights: str = "simplex",
    l1_radius: float = 1.0,
    max_iter: int = 300,
    noise_sigma: float | None = None,
) -> ReducedSetResult:
    r"""Joint L-BFGS on locations and weights from public initial points.

    Initial locations: ``n_points`` draws from q or the first public points;
    initial weights :math:`C/M`. Each reported size :math:`M'` is solved
    separately from the first :math:`M'` initial points.

    Parameters
    ----------
    weights : {"simplex", "l1-ball", "nonnegative", "free", "uniform"}
    l1_radius : float
        :math:`C` (sum of the simplex weights, radius of the L1 ball, total
        weight for ``"uniform"``).
    max_iter : int
        L-BFGS iterations per solve.
    noise_sigma : float, optional
        Public noise level of the release; enables discrepancy-principle early
        stopping (:func:`refine`).
    """
    M = check_positive_int(n_points, name="n_points")
    check_in(weights, JOINT_WEIGHTS, name="weights")
    t0 = time.perf_counter()
    Z0 = source.take(M, rng)
    sizes = sorted({int(m) for m in report_at if 1 <= int(m) <= M} | {M})
    total = float(sum(sizes))
    done = 0.0
    checkpoints, checkpoint_seconds = {}, {}
    info = {}
    for size in sizes:
        sub = progress.sub(done / total, (done + size) / total)
        w0 = np.full(size, l1_radius / size)
        Z, w, info = refine(problem, Z0[:size], w0, weights=weights, radius=l1_radius,
                            max_iter=max_iter, progress=sub, label=f"M={size}: ", noise_sigma=noise_sigma)
        checkpoints[size] = (Z, w)
        checkpoint_seconds[size] = time.perf_counter() - t0
        done += size
    Z, w = checkpoints[M]
    return ReducedSetResult(
        points=Z, weights=w, solver="joint", residual_norm=math.sqrt(max(info["objective"], 0.0)),
        checkpoints=checkpoints, seconds=time.perf_counter() - t0,
        info={**info, "weights": weights, "l1_radius": l1_radius, "max_iter": max_iter,
              "initial": source.description, "checkpoint_seconds": checkpoint_seconds},
    )
