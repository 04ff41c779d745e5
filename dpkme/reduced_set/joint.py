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

With a declared domain (:func:`._common.check_domain_object`) the locations are
optimised under L-BFGS-B bounds from ``domain.bounds_for``: each free
(continuous) coordinate within its box, each fixed (integer or categorical)
coordinate held at its starting value, so the solution lies in the domain by
construction. Without a domain nothing changes.
"""

from __future__ import annotations

import math
import time

import numpy as np

from .._validation import check_in, check_positive_float, check_positive_int
from ._common import PointSource, Problem, Progress, ReducedSetResult, check_domain_object, clip_to_bounds
from .weights import fit_weights, project

__all__ = ["JOINT_WEIGHTS", "refine", "joint", "Parameterisation"]

JOINT_WEIGHTS = ("simplex", "sub-simplex", "l1-ball", "nonnegative", "free", "uniform")
_FLOOR = 1e-12


def _softmax(theta: np.ndarray) -> np.ndarray:
    e = np.exp(theta - theta.max())
    return e / e.sum()


class Parameterisation:
    """Map between unconstrained optimisation variables and feasible weights.

    Parameters
    ----------
    constraint : str
        One of :data:`JOINT_WEIGHTS` (see the module docstring).
    m : int
        Number of weights :math:`M`.
    radius : float, default=1.0
        :math:`C` (total weight, or radius of the L1 ball).
    """

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
    domain=None,
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

    Parameters
    ----------
    problem : Problem
        The privatised target and the public feature map.
    Z0 : ndarray (M, D)
        Starting locations (public, or computed from :math:`\tilde\mu` only).
    w0 : ndarray (M,)
        Starting weights (projected onto the feasible set).
    weights : str, default="simplex"
        Weight constraint, one of :data:`JOINT_WEIGHTS`.
    radius : float, default=1.0
        :math:`C` of the constraint.
    max_iter : int, default=300
        Most L-BFGS iterations.
    polish : bool, default=True
        Refit the weights for the final locations (:func:`.weights.fit_weights`).
    progress : Progress, optional
        Reporter (fractions of this solve).
    label : str
        Prefix of the progress messages.
    noise_sigma : float, optional
        Public noise level :math:`\sigma` (enables the discrepancy stop).
    discrepancy : float, default=1.0
        :math:`\tau` of the discrepancy principle.
    min_iter : int, default=20
        Iterations before the discrepancy stop may act (0: a start already
        within the bound is returned unchanged).
    domain : EmbeddedDomain, optional
        Declared domain: locations move under the L-BFGS-B bounds
        ``domain.bounds_for(Z0)`` (free coordinates in their box, fixed ones
        held). ``Z0`` must lie in it (e.g. drawn by ``domain.sample``).

    Returns
    -------
    Z : ndarray (M, D)
        Final locations.
    w : ndarray (M,)
        Feasible weights.
    info : dict
        Diagnostics (``objective``, ``iterations``, ``evaluations``, ``message``).
    """
    fmap, target = problem.fmap, np.asarray(problem.target, dtype=np.float64)
    Z0 = np.asarray(Z0, dtype=np.float64)
    M, D = Z0.shape
    par = Parameterisation(weights, M, radius)
    ell = fmap.lengthscale
    domain = check_domain_object(domain, D)
    if domain is not None:
        lo, hi = (np.broadcast_to(np.asarray(b, dtype=np.float64), (M, D)) for b in domain.bounds_for(Z0))
        if np.any(hi < lo) or not (np.all(np.isfinite(lo)) and np.all(np.isfinite(hi))):
            raise ValueError("domain.bounds_for returned non-finite bounds or lower > upper.")
        outside = int(np.count_nonzero(np.any((Z0 < lo) | (Z0 > hi), axis=1)))
        if outside:
            raise ValueError(f"{outside} of the {M} starting points lie outside the declared domain; start from "
                             "domain.sample(...) or domain.project(...) points.")
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

    if domain is not None:
        # scaled variables u = z / ell; a fixed coordinate has lo = hi = its value
        bounds = list(zip((lo / ell).ravel().tolist(), (hi / ell).ravel().tolist())) + par.bounds()
    else:
        bounds = [(None, None)] * nz + par.bounds() if weights == "nonnegative" else None
    f0 = fun(x0)[0]
    if stop_below is not None and min_iter == 0 and f0 <= stop_below:
        # already explains the target down to its noise: keep the start as it is
        progress(1.0, f"{label}at the noise level; no refinement")
        return Z0.copy(), par.decode(x0[nz:]), {
            "objective_start": float(f0), "objective_lbfgs": float(f0), "objective": float(f0),
            "iterations": 0, "evaluations": 1, "message": "start within the discrepancy bound",
            "discrepancy_stop": True}
    from scipy.optimize import minimize  # here, not at import: scipy.optimize costs ~0.3 s of start-up

    res = minimize(fun, x0, jac=True, method="L-BFGS-B", bounds=bounds, callback=callback,
                   options={"maxiter": int(max_iter), "maxcor": 20, "ftol": 1e-13, "gtol": 1e-12,
                            "maxfun": int(2 * max_iter + 20)})
    x = res.x if res.fun <= f0 else x0
    Z = x[:nz].reshape(M, D) * ell
    if domain is not None:
        Z = clip_to_bounds(Z, lo, hi)  # undo the rounding of z = ell * u: fixed coordinates exactly as they began
    w = par.decode(x[nz:])
    info = {"objective_start": float(f0), "objective_lbfgs": float(min(res.fun, f0)),
            # scipy's result has no "nit" when the bounds fix every variable (nothing to optimise)
            "iterations": int(res.get("nit", 0)), "evaluations": int(state["nfev"]), "message": str(res.message),
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

    Initial locations: ``n_points`` draws from q (or from the source's declared
    domain, which then bounds the locations) or the first public points;
    initial weights :math:`C/M`. Each reported size :math:`M'` is solved
    separately from the first :math:`M'` initial points.

    Parameters
    ----------
    problem : Problem
        The privatised target and the public feature map.
    n_points : int
        :math:`M`.
    source : PointSource
        Public initial points, the declared domain or q.
    rng : numpy.random.Generator
        Draws of the initial points.
    progress : Progress
        Reporter.
    report_at : iterable of int
        Intermediate sizes to solve and store in ``checkpoints``.
    weights : {"simplex", "l1-ball", "nonnegative", "free", "uniform"}
    l1_radius : float, default=1.0
        :math:`C` (sum of the simplex weights, radius of the L1 ball, total
        weight for ``"uniform"``).
    max_iter : int, default=300
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
                            max_iter=max_iter, progress=sub, label=f"M={size}: ", noise_sigma=noise_sigma,
                            domain=source.domain)
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
