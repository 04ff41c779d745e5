r"""Iterated approximate pre-images: the reduced-set method of Balog et al. (2018).

Starting from the residual :math:`\Psi_0 = \tilde\mu`, for :math:`m = 1,\dots,M`
(Schölkopf & Smola 2002, section 18.2; Appendix B.2 of the paper):

1. from the public initial location :math:`z_m^{(0)}` (a draw from :math:`q`
   or a public point) take ``n_steps`` Adam steps on

   .. math:: \ell(z) = -\frac{\langle\Psi_{m-1}, \phi(z)\rangle^2}{\|\phi(z)\|^2}
             = -\frac{\langle\Psi_{m-1}, \phi(z)\rangle^2}{a}

   (the features of :mod:`dpkme.kernels.random_features` have :math:`\|\phi(z)\|^2 = a` for
   every z), i.e. find the point whose feature line best explains the residual;
2. set its optimal weight :math:`\beta_m = \langle\Psi_{m-1},\phi(z_m)\rangle/a`
   and deflate :math:`\Psi_m = \Psi_{m-1} - \beta_m\phi(z_m)`, so that
   :math:`\|\Psi_m\|^2 = \|\Psi_{m-1}\|^2 - \langle\Psi_{m-1},\phi(z_m)\rangle^2/a`
   never increases;
3. at every reported size :math:`M'` refit all weights of
   :math:`z_1,\dots,z_{M'}` with an L1 constraint (eq. (5) of the paper,
   :math:`\sum|w| \le C`, the bound used by Theorem 11) or, as in the authors'
   code, an L1 penalty (``refit="lasso"``, scikit-learn ``Lasso`` with
   ``alpha = 100/(2NJ)``, i.e. :math:`\lambda = 100/N` here).

The outer loop is inherently sequential (each point depends on the residual
left by the previous ones); each Adam step is one vectorised pass over the
:math:`J` features (~30 µs for J = 10 000), so M = 10 000 points with 100 steps
take about a minute.
"""

from __future__ import annotations

import math
import time

import numpy as np

from .._validation import check_in, check_positive_float, check_positive_int
from ._common import PointSource, Problem, Progress, ReducedSetResult
from .weights import fit_weights

__all__ = ["preimage"]

REFITS = ("l1-ball", "simplex", "lasso", "none")


def preimage(
    problem: Problem,
    *,
    n_points: int,
    source: PointSource,
    rng: np.random.Generator,
    progress: Progress,
    report_at=(),
    n_steps: int = 100,
    learning_rate: float | None = None,
    refit: str = "l1-ball",
    l1_radius: float = 1.0,
    l1_penalty: float | None = None,
    refit_max_iter: int = 300,
) -> ReducedSetResult:
    r"""Iterated approximate pre-images followed by an L1 refit of the weights.

    Parameters
    ----------
    problem : Problem
        The privatised target and the public feature map.
    n_points : int
        :math:`M`.
    source : PointSource
        Initial locations :math:`z_m^{(0)}` (public or from q). A declared
        domain is refused: Adam moves every coordinate freely, so the
        pre-images cannot honour box bounds or discrete levels (use
        ``"pursuit-joint"``, ``"joint"``, ``"pursuit"`` or ``"herding"``).
    rng : numpy.random.Generator
        Draws from q.
    progress : Progress
        Reporter.
    report_at : iterable of int
        Sizes :math:`M' \le M` at which to refit and store a checkpoint.
    n_steps : int, default=100
        Adam steps per point (the authors' code: 100).
    learning_rate : float, optional
        Adam step size. Default :math:`0.632\,\hat\ell` with
        :math:`\hat\ell = 1/\mathrm{rms}(\omega)`, which is the authors' 100 for
        their D = 5 kernel (:math:`\hat\ell = 158`).
    refit : {"l1-ball", "simplex", "lasso", "none"}, default="l1-ball"
        Weight refit at each report: eq. (5) (:math:`\sum|w|\le C`), the
        probability simplex, the L1-penalised fit of the authors' code, or the
        greedy weights :math:`\beta` as they are.
    l1_radius : float, default=1.0
        :math:`C` of eq. (5).
    l1_penalty : float, optional
        :math:`\lambda` for ``refit="lasso"`` (required then; the paper's
        setting is ``100 / N``).
    refit_max_iter : int
        FISTA iterations per refit.
    """
    if source.domain is not None:
        raise ValueError("solver 'preimage' cannot honour a declared domain (its Adam steps move every coordinate "
                         "freely); use 'pursuit-joint', 'joint', 'pursuit' or 'herding' with a domain.")
    fmap, target = problem.fmap, np.asarray(problem.target, dtype=np.float64)
    M = check_positive_int(n_points, name="n_points")
    n_steps = check_positive_int(n_steps, name="n_steps", minimum=0)
    check_in(refit, REFITS, name="refit")
    if refit == "lasso":
        if l1_penalty is None:
            raise ValueError("refit='lasso' needs l1_penalty (the paper's code uses 100 / N).")
        l1_penalty = check_positive_float(l1_penalty, name="l1_penalty")
    lr = 0.6325 * fmap.lengthscale if learning_rate is None else check_positive_float(
        learning_rate, name="learning_rate")
    reports = sorted({int(m) for m in report_at if 1 <= int(m) <= M} | {M})
    t0 = time.perf_counter()

    Z0 = source.take(M, rng)
    a, h, s = fmap.amplitude, fmap.half, fmap.scale
    Z = np.empty_like(Z0)
    Phi = np.empty((M, fmap.n_components), dtype=np.float32 if M * fmap.n_components > (1 << 26) else np.float64)
    betas = np.empty(M)
    psi = target.copy()
    history = [float(np.linalg.norm(psi))]
    checkpoints: dict[int, tuple[np.ndarray, np.ndarray]] = {}
    checkpoint_seconds: dict[int, float] = {}
    b1, b2, eps = 0.9, 0.999, 1e-8  # torch.optim.Adam defaults
    refit_share = 0.15 if refit != "none" else 0.0
    loop_progress = progress.sub(0.0, 1.0 - refit_share)
    weights = betas

    for m in range(M):
        psi_c = (s * psi[:h]).astype(fmap.dtype)
        psi_s = (s * psi[h:]).astype(fmap.dtype)
        z = Z0[m].copy()
        mom = np.zeros(fmap.dim)
        vel = np.zeros(fmap.dim)
        for it in range(1, n_steps + 1):
            v, gv = fmap.point_value_grad(z, psi_c, psi_s)
            g = (-2.0 * v / a) * gv
            mom = b1 * mom + (1.0 - b1) * g
            vel = b2 * vel + (1.0 - b2) * g * g
            mhat = mom / (1.0 - b1**it)
            vhat = vel / (1.0 - b2**it)
            z -= lr * mhat / (np.sqrt(vhat) + eps)
        arg = fmap.W @ z
        phi = s * np.concatenate([np.cos(arg), np.sin(arg)])
        beta = float(psi @ phi) / a
        psi -= beta * phi
        Z[m], Phi[m], betas[m] = z, phi, beta
        history.append(float(np.linalg.norm(psi)))
        if (m + 1) in reports:
            if refit == "none":
                weights = betas[: m + 1].copy()
            else:
                constraint = "l1-ball" if refit == "l1-ball" else refit
                weights, _ = fit_weights(
                    Phi[: m + 1], target, constraint=constraint, radius=l1_radius,
                    penalty=l1_penalty or 0.0, w0=betas[: m + 1], max_iter=refit_max_iter,
                )
            checkpoints[m + 1] = (Z[: m + 1].copy(), weights.copy())
            checkpoint_seconds[m + 1] = time.perf_counter() - t0
        loop_progress((m + 1) / M, f"pre-image {m + 1}/{M}")

    r = Phi.T @ weights.astype(Phi.dtype) - target
    return ReducedSetResult(
        points=Z, weights=weights, solver="preimage",
        residual_norm=float(math.sqrt(float(r @ r))), checkpoints=checkpoints, history=history,
        seconds=time.perf_counter() - t0,
        info={"n_steps": n_steps, "learning_rate": lr, "refit": refit, "l1_radius": l1_radius,
              "l1_penalty": l1_penalty, "greedy_weights": betas, "initial": source.description,
              "checkpoint_seconds": checkpoint_seconds},
    )
