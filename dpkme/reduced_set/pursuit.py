r"""Greedy selection from a public candidate pool (Frank–Wolfe / kernel herding).

Over a pool :math:`P = \{p_1,\dots,p_K\}` of public candidates (draws from
:math:`q` or public points) the greedy builds :math:`y_t = \sum_{k\le t}
w_k\phi(z_k)` inside the convex hull of :math:`\{\phi(p)\}` (so the weights stay
on the probability simplex). At step :math:`t` it adds the candidate with the
largest Frank–Wolfe score

.. math::
    p^* = \arg\max_{p\in P\setminus\{z_1..z_t\}}\ \langle\phi(p), \tilde\mu - y_t\rangle
        = c_p - h_p, \qquad c_p = \langle\phi(p),\tilde\mu\rangle,\ h_p = \langle\phi(p), y_t\rangle,

and moves :math:`y_{t+1} = (1-\gamma)y_t + \gamma\phi(p^*)` with either

* ``step="line-search"``: the exact minimiser of :math:`\|y_{t+1}-\tilde\mu\|^2`,
  :math:`\gamma = \mathrm{clip}\bigl(\langle\tilde\mu - y_t, \phi^* - y_t\rangle /
  \|\phi^* - y_t\|^2, 0, 1\bigr)` (weighted points), or
* ``step="uniform"``: :math:`\gamma = 1/(t+1)`, i.e. equal weights — kernel
  herding (Chen, Welling & Smola 2010; Bach, Lacoste-Julien & Obozinski 2012
  show herding is Frank–Wolfe with this step).

Cost. :math:`c` is computed once; :math:`h` needs a pass over the pool
(:math:`K\times J` trigonometric values, streamed in blocks — the
:math:`K\times J` matrix is never stored). The pass is repeated on a geometric
schedule (``refresh``: after :math:`\max(1, \lfloor\texttt{refresh}\cdot t\rfloor)`
steps, at most half the shortlist); in between, :math:`h` is updated exactly for a shortlist of the
``shortlist`` best-scoring candidates (their features are held) and the choice is
made among them. With ``shortlist >= K`` and ``refresh = 0`` the greedy is exact.

With a declared domain on the :class:`._common.PointSource` the pool is drawn
uniformly from the domain (so the greedy searches the discrete part -- integer
levels, categories -- over the declared values) and the refinement moves only
the continuous coordinates, within their box (:func:`.joint.refine`).
"""

from __future__ import annotations

import math
import time
from typing import Any

import numpy as np

from .._validation import check_in, check_positive_float, check_positive_int
from ._common import PointSource, Problem, Progress, ReducedSetResult
from .joint import JOINT_WEIGHTS, refine
from .refit import refit_pool

__all__ = ["greedy_select", "pursuit", "pursuit_joint", "herding", "revive_zero_weights"]

STEPS = ("line-search", "uniform")


def greedy_select(
    problem: Problem,
    pool: np.ndarray,
    *,
    n_points: int,
    step: str = "line-search",
    shortlist: int = 512,
    refresh: float = 0.25,
    report_at=(),
    progress: Progress | None = None,
) -> tuple[np.ndarray, np.ndarray, dict[int, np.ndarray], list[float]]:
    r"""Greedy Frank–Wolfe selection of ``n_points`` distinct pool candidates.

    Parameters
    ----------
    problem : Problem
        The privatised target and the public feature map.
    pool : ndarray (K, D)
        Public candidates.
    n_points : int
        :math:`M \le K`.
    step : {"line-search", "uniform"}, default="line-search"
        Frank–Wolfe step (see the module docstring).
    shortlist : int, default=512
        Candidates whose scores are updated exactly between refreshes.
    refresh : float, default=0.25
        Geometric refresh schedule of the full pass over the pool (0: every step).
    report_at : iterable of int
        Steps at which to store the weights.
    progress : Progress, optional
        Reporter.

    Returns
    -------
    indices : ndarray (M,)
        Selected pool rows, in order.
    weights : ndarray (M,)
        Simplex weights after the last step.
    weights_at : dict
        ``{t: weights of the first t atoms after step t}`` for ``t`` in
        ``report_at``.
    history : list of float
        :math:`\|y_t - \tilde\mu\|_2` after every step.
    """
    fmap, target = problem.fmap, np.asarray(problem.target, dtype=np.float64)
    check_in(step, STEPS, name="step")
    K = pool.shape[0]
    M = check_positive_int(n_points, name="n_points")
    if M > K:
        raise ValueError(f"n_points={M} exceeds the candidate pool size {K}; use a larger pool.")
    shortlist = check_positive_int(shortlist, name="shortlist")
    refresh = check_positive_float(refresh, name="refresh", allow_zero=True)
    progress = progress or Progress(None)
    reports = {int(t) for t in report_at}
    a = fmap.amplitude
    tnorm2 = float(target @ target)

    c = fmap.correlations(pool, target)           # <phi(p), mu~>, fixed
    h = np.zeros(K)                               # <phi(p), y_t>, refreshed
    y = np.zeros(fmap.n_components)               # explicit y_t
    available = np.ones(K, dtype=bool)
    chosen: list[int] = []
    w = np.zeros(0)
    weights_at: dict[int, np.ndarray] = {}
    history: list[float] = []
    my, yy = 0.0, 0.0                             # <mu~, y>, ||y||^2
    S = np.zeros(0, dtype=np.intp)
    PhiS = np.zeros((0, fmap.n_components), dtype=fmap.dtype)
    next_refresh = 0

    for t in range(M):
        if t >= next_refresh or not available[S].any():
            if t > 0:
                h = fmap.correlations(pool, y)
            score = np.where(available, c - h, -np.inf)
            T = min(shortlist, int(available.sum()))
            S = np.argpartition(-score, T - 1)[:T] if T < K else np.nonzero(available)[0]
            PhiS = fmap.features(pool[S], dtype=fmap.dtype)
            hS = h[S].copy()
            # never longer than half the shortlist, so it cannot run out in between
            next_refresh = t + min(max(1, int(math.floor(refresh * t))), max(1, T // 2))
        scoreS = np.where(available[S], c[S] - hS, -np.inf)
        j = int(np.argmax(scoreS))
        k = int(S[j])
        phi32 = PhiS[j]
        phi = phi32.astype(np.float64)
        ck, hk = float(c[k]), float(hS[j])
        if t == 0:
            gamma = 1.0
        elif step == "uniform":
            gamma = 1.0 / (t + 1)
        else:
            num = (ck - hk) - (my - yy)           # <mu~ - y, phi - y>
            den = a - 2.0 * hk + yy               # ||phi - y||^2
            gamma = min(max(num / den, 0.0), 1.0) if den > 0 else 0.0
        w = np.append((1.0 - gamma) * w, gamma)
        y *= 1.0 - gamma
        y += gamma * phi
        my = (1.0 - gamma) * my + gamma * ck
        yy = float(y @ y)
        hS = (1.0 - gamma) * hS + gamma * (PhiS @ phi32).astype(np.float64)
        available[k] = False
        chosen.append(k)
        history.append(math.sqrt(max(tnorm2 - 2.0 * my + yy, 0.0)))
        if (t + 1) in reports:
            weights_at[t + 1] = w.copy()
        progress((t + 1) / M, f"greedy {t + 1}/{M}")
    return np.asarray(chosen), w, weights_at, history


def revive_zero_weights(Z: np.ndarray, w: np.ndarray, *, scale: float, rng: np.random.Generator,
                        domain=None) -> tuple[np.ndarray, np.ndarray, int]:
    r"""Move every atom of weight 0 to a perturbed copy of a weighted atom, splitting that atom's mass.

    A refinement by L-BFGS cannot revive an atom whose weight is 0 (the gradient with respect to its
    location is proportional to its weight), so atoms that the greedy left at weight 0 are wasted. Here
    each such atom :math:`m` becomes a copy of a *parent* :math:`p(m)`, drawn among the atoms with
    :math:`w > 0` with probability proportional to :math:`w`, moved by a normal draw,

    .. math:: z_m = \Pi\bigl(z_{p(m)} + s\,\xi_m\bigr), \qquad \xi_m \sim \mathcal N(0, I_D),

    (:math:`s` = ``scale`` in the points' units, :math:`\Pi` = ``domain.project``: continuous coordinates
    clipped to their box, integer and declared levels and one-hot categories moved to the nearest valid
    value; no projection without a domain), and every parent's weight is shared evenly between it and its
    copies, :math:`w_p \leftarrow w_p / (1 + c_p)` for :math:`c_p` copies. The total weight and the
    weighted mean of the parents' locations are unchanged, so a following refinement starts from about
    the same objective with every atom able to move.

    Post-processing: only the current atoms and weights (computed from the privatised vector), the
    public domain and the given (public) randomness are used, never the private data.

    Parameters
    ----------
    Z : ndarray (M, D)
        Atoms (inside ``domain`` when one is given).
    w : ndarray (M,)
        Their weights; those :math:`\le 10^{-12}\sum_m |w_m|` count as 0.
    scale : float
        Standard deviation :math:`s \ge 0` of the perturbation.
    rng : numpy.random.Generator
        Public randomness (the solver's stream).
    domain : EmbeddedDomain, optional
        Declared domain (:func:`._common.check_domain_object`) onto which the copies are projected.

    Returns
    -------
    Z : ndarray (M, D)
        The atoms, re-seeded ones replaced (a new array).
    w : ndarray (M,)
        The weights after the split (a new array, same total).
    n_revived : int
        Number of atoms moved (0 when none has weight 0 or none has weight).

    Examples
    --------
    >>> import numpy as np
    >>> Z = np.array([[0.0, 0.0], [1.0, 1.0], [5.0, 5.0]])
    >>> Zr, wr, k = revive_zero_weights(Z, np.array([0.6, 0.4, 0.0]), scale=0.1,
    ...                                 rng=np.random.default_rng(0))
    >>> k, float(wr.sum()), bool(np.all(wr > 0))
    (1, 1.0, True)
    """
    scale = check_positive_float(scale, name="scale", allow_zero=True)
    Z = np.array(Z, dtype=np.float64)
    w = np.array(w, dtype=np.float64)
    total = float(np.abs(w).sum())
    dead = np.flatnonzero(w <= 1e-12 * total)
    alive = np.flatnonzero(w > 1e-12 * total)
    if dead.size == 0 or alive.size == 0:
        return Z, w, 0
    parents = alive[rng.choice(alive.size, size=dead.size, p=w[alive] / w[alive].sum())]
    new = Z[parents] + scale * rng.standard_normal((dead.size, Z.shape[1]))
    if domain is not None:
        new = np.asarray(domain.project(new), dtype=np.float64)
    Z[dead] = new
    copies = np.bincount(parents, minlength=w.shape[0])
    share = w / (1.0 + copies)
    w[alive] = share[alive]
    w[dead] = share[parents]
    return Z, w, int(dead.size)


def _pursuit(
    problem, *, n_points, source, rng, progress, report_at, name, step, refine_weights,
    pool_size, shortlist, refresh, max_iter, l1_radius, greedy_share, noise_sigma=None, nest_from=100,
    revive=None, refit=None,
):
    M = check_positive_int(n_points, name="n_points")
    pool_size = check_positive_int(pool_size, name="pool_size")
    if revive is not None:
        revive = check_positive_float(revive, name="revive", allow_zero=True)
    if refine_weights is not None:
        check_in(refine_weights, JOINT_WEIGHTS, name="weights")
    refit = _check_refit(refit)
    t0 = time.perf_counter()
    pool = source.pool(max(pool_size, M), rng)
    sizes = sorted({int(m) for m in report_at if 1 <= int(m) <= M} | {M})
    share = greedy_share if refine_weights is not None else 1.0
    idx, _w, weights_at, history = greedy_select(
        problem, pool, n_points=M, step=step, shortlist=shortlist, refresh=refresh,
        report_at=sizes, progress=progress.sub(0.0, share),
    )
    t_greedy = time.perf_counter() - t0
    checkpoints, infos, checkpoint_seconds = {}, {}, {}
    total, done = float(sum(sizes)), 0.0
    top = 0.8 if refit is not None else 1.0      # the re-fit's share of the progress range
    prev = None
    for size in sizes:
        fw = weights_at[size] * l1_radius if step == "line-search" else np.full(size, l1_radius / size)
        if prev is None or refine_weights is None or prev[1].shape[0] < nest_from:
            Z0, w0 = pool[idx[:size]], fw
            nested = False
        else:
            # nested warm start: the refined previous size plus the next greedy atoms,
            # which keep the total mass they have after the greedy's step `size`
            Zp, wp = prev
            sp = wp.shape[0]
            nested = True
            Z0 = np.vstack([Zp, pool[idx[sp:size]]])
            if step == "line-search":
                lam = float(fw[sp:].sum()) / l1_radius
                w0 = np.concatenate([wp * (1.0 - lam), fw[sp:]])
            else:
                w0 = fw
        if refine_weights is None:
            checkpoints[size] = (Z0.copy(), w0)
            checkpoint_seconds[size] = time.perf_counter() - t0
            continue
        sub = progress.sub(share + (top - share) * done / total, share + (top - share) * (done + size) / total)
        n_revived = 0
        if revive is not None:
            Z0, w0, n_revived = revive_zero_weights(Z0, w0, scale=revive, rng=rng, domain=source.domain)
        Z, wr, infos[size] = refine(problem, Z0, w0, weights=refine_weights, radius=l1_radius,
                                    max_iter=max_iter, progress=sub, label=f"M={size}: ",
                                    noise_sigma=noise_sigma, min_iter=0 if nested else 20, domain=source.domain)
        infos[size]["revived"] = n_revived
        checkpoints[size] = (Z, wr)
        checkpoint_seconds[size] = time.perf_counter() - t0
        prev = (Z, wr)
        done += size
    Z, wf = checkpoints[M]
    refit_info = None
    if refit is not None:
        Z, wf, refit_info = refit_pool(problem, Z, wf, rng=rng, domain=source.domain, noise_sigma=noise_sigma,
                                       max_atoms=M, progress=progress.sub(top, 1.0), **refit)
        refit_info["seconds"] = time.perf_counter() - t0 - checkpoint_seconds[M]
        checkpoints[M] = (Z, wf)
    r = problem.fmap.residual(Z, wf, problem.target)
    return ReducedSetResult(
        points=Z, weights=wf, solver=name, residual_norm=float(np.linalg.norm(r)),
        checkpoints=checkpoints, history=history, seconds=time.perf_counter() - t0,
        info={"pool_size": int(pool.shape[0]), "shortlist": shortlist, "refresh": refresh, "step": step,
              "weights": refine_weights or "simplex", "max_iter": max_iter, "l1_radius": l1_radius,
              "seconds_greedy": t_greedy, "refine": {int(k): v for k, v in infos.items()},
              "initial": source.description, "checkpoint_seconds": checkpoint_seconds, "revive": revive,
              "refit": refit_info},
    )


#: Options of ``pursuit_joint(refit={...})``: the keyword arguments of :func:`.refit.refit_pool` that a caller
#: may set (the problem, atoms, stream, domain, noise level and ``max_atoms`` = M come from the solver).
REFIT_OPTIONS = ("pool_size", "scales", "uniform_share", "cross_share", "max_iter", "discrepancy", "screen_every",
                 "block_rows", "max_bytes")


def _check_refit(refit: object) -> dict[str, Any] | None:
    if refit is None:
        return None
    if not isinstance(refit, dict):
        raise ValueError(f"refit must be None or a dict of refit_pool options {list(REFIT_OPTIONS)}, got {refit!r:.80}.")
    unknown = sorted(set(refit) - set(REFIT_OPTIONS))
    if unknown:
        raise ValueError(f"refit: unknown option(s) {unknown}; use some of {list(REFIT_OPTIONS)}.")
    return dict(refit)


def pursuit(problem: Problem, *, n_points: int, source: PointSource, rng, progress: Progress, report_at=(),
            pool_size: int = 20000, shortlist: int = 512, refresh: float = 0.25,
            l1_radius: float = 1.0) -> ReducedSetResult:
    """Greedy Frank–Wolfe selection from the pool only (weights on the simplex), no refinement.

    Parameters
    ----------
    problem : Problem
        The privatised target and the public feature map.
    n_points : int
        :math:`M`.
    source : PointSource
        The candidate pool: public points, draws from the declared domain, or from q.
    rng : numpy.random.Generator
        Draws of the pool.
    progress : Progress
        Reporter.
    report_at : iterable of int
        Intermediate sizes stored in ``checkpoints``.
    pool_size : int, default=20000
        Candidates drawn (public points: all of them).
    shortlist : int, default=512
        See :func:`greedy_select`.
    refresh : float, default=0.25
        See :func:`greedy_select`.
    l1_radius : float, default=1.0
        Total weight :math:`C`.

    Returns
    -------
    ReducedSetResult
    """
    return _pursuit(problem, n_points=n_points, source=source, rng=rng, progress=progress, report_at=report_at,
                    name="pursuit", step="line-search", refine_weights=None, pool_size=pool_size,
                    shortlist=shortlist, refresh=refresh, max_iter=0, l1_radius=l1_radius, greedy_share=1.0)


def pursuit_joint(problem: Problem, *, n_points: int, source: PointSource, rng, progress: Progress, report_at=(),
                  pool_size: int = 20000, shortlist: int = 512, refresh: float = 0.25, max_iter: int = 100,
                  weights: str = "sub-simplex", l1_radius: float = 1.0,
                  noise_sigma: float | None = None, nest_from: int = 100,
                  revive: float | None = None, refit: dict | None = None) -> ReducedSetResult:
    r"""Greedy Frank–Wolfe over the pool, then joint L-BFGS of locations and weights.

    The greedy gives every reported size :math:`M'` a starting configuration
    (its first :math:`M'` atoms and their simplex weights); :func:`.joint.refine`
    then moves all locations and weights together, weights constrained by
    ``weights``. The default ``"sub-simplex"`` (:math:`w \ge 0`,
    :math:`\sum w \le 1`) keeps the release a (sub-)probability measure and
    bounds how much of the noise it can fit (Theorem 11); unlike the simplex it
    may shrink the total mass, which is what the RKHS-optimal answer does for
    very few points (paper's D = 5 data, M = 1: 0.27 instead of 0.74 with
    :math:`\sum w = 1`; from M = 31 on both agree to within 1-10%, sub-simplex
    never worse in our runs). Use ``weights="simplex"`` for an exact
    probability measure.

    Reported sizes are solved in increasing order. A size is refined from its
    greedy start (at least 20 L-BFGS iterations) unless the previous reported
    size is ``>= nest_from``; then it is warm-started from that refined solution
    plus the next greedy atoms (which keep their greedy mass), so that
    iterations accumulate where the signal allows it (ε = 1: 0.0080 at M = 100,
    0.0051 at M = 1000 on the paper's D = 5 data). With ``noise_sigma`` (the
    public noise level of the release) L-BFGS stops by the discrepancy principle
    (:func:`.joint.refine`), and a warm start that is already within the bound
    is kept unchanged — so larger M does not fit more of the noise.

    With ``revive`` (opt-in; :func:`~dpkme.release.tabular.release_table` turns it on) every atom that
    enters a refinement with weight 0 -- the greedy's line search gives later atoms weight 0 once the
    projection of :math:`\tilde\mu` onto the pool's hull is reached, and L-BFGS cannot revive them -- is
    first moved to a copy of a weighted atom perturbed by ``revive`` (in the points' units) and projected
    onto the declared domain, sharing that atom's mass (:func:`revive_zero_weights`). This is
    post-processing of :math:`\tilde\mu`: it uses the current atoms, the public domain and the solver's
    (public) random stream.

    With ``refit`` (opt-in; :func:`~dpkme.release.tabular.release_table` turns it on) the final atoms are
    followed by a convex re-fit of simplex weights over a pool of candidates around them
    (:func:`.refit.refit_pool`: the atoms, jittered copies and column crossovers of weighted atoms projected
    onto the declared domain, uniform draws from it),

    .. math:: \min_{v \ge 0,\ \sum_k v_k = C}\ \Bigl\|\sum_k v_k\phi(p_k) - \tilde\mu\Bigr\|_2^2,

    stopped by the discrepancy principle at the public ``noise_sigma``; the ``n_points`` largest weights
    are kept. Also post-processing of :math:`\tilde\mu` (atoms, public domain, the solver's stream).

    Parameters
    ----------
    problem : Problem
        The privatised target and the public feature map.
    n_points : int
        :math:`M`.
    source : PointSource
        The candidate pool: public points, draws from the declared domain, or from q.
    rng : numpy.random.Generator
        Draws of the pool.
    progress : Progress
        Reporter.
    report_at : iterable of int
        Intermediate sizes stored in ``checkpoints``.
    pool_size : int, default=20000
        Candidates drawn (public points: all of them).
    shortlist : int, default=512
        See :func:`greedy_select`.
    refresh : float, default=0.25
        See :func:`greedy_select`.
    max_iter : int, default=100
        L-BFGS iterations per refined size.
    weights : str, default="sub-simplex"
        Weight constraint of the refinement (:data:`.joint.JOINT_WEIGHTS`).
    l1_radius : float, default=1.0
        :math:`C` of the constraint.
    noise_sigma : float, optional
        Public noise level; discrepancy-principle stop (:func:`.joint.refine`).
    nest_from : int, default=100
        Reported sizes after one of at least this many atoms are warm-started from it.
    revive : float, optional
        Re-seed the atoms of weight 0 before each refinement, perturbed with this standard deviation
        (:func:`revive_zero_weights`; ``None``, the default: no re-seeding). ``info["refine"][M]["revived"]``
        counts them.
    refit : dict, optional
        Re-fit the weights over a pool around the final atoms with these options of
        :func:`.refit.refit_pool` (:data:`REFIT_OPTIONS`; ``{}`` for its defaults; ``None``, the default:
        no re-fit). ``info["refit"]`` holds its diagnostics.

    Returns
    -------
    ReducedSetResult
    """
    return _pursuit(problem, n_points=n_points, source=source, rng=rng, progress=progress, report_at=report_at,
                    name="pursuit-joint", step="line-search", refine_weights=weights, pool_size=pool_size,
                    shortlist=shortlist, refresh=refresh, max_iter=max_iter, l1_radius=l1_radius,
                    greedy_share=0.25, noise_sigma=noise_sigma, nest_from=nest_from, revive=revive, refit=refit)


def herding(problem: Problem, *, n_points: int, source: PointSource, rng, progress: Progress, report_at=(),
            pool_size: int = 20000, shortlist: int = 512, refresh: float = 0.25, max_iter: int = 100,
            l1_radius: float = 1.0, noise_sigma: float | None = None,
            nest_from: int = 100) -> ReducedSetResult:
    r"""Unweighted synthetic data: kernel herding over the pool, then L-BFGS on locations.

    All weights are :math:`1/M` (times ``l1_radius``), so the output is a plain
    synthetic dataset of :math:`M` rows.

    Parameters
    ----------
    problem : Problem
        The privatised target and the public feature map.
    n_points : int
        :math:`M`.
    source : PointSource
        The candidate pool: public points, draws from the declared domain, or from q.
    rng : numpy.random.Generator
        Draws of the pool.
    progress : Progress
        Reporter.
    report_at : iterable of int
        Intermediate sizes stored in ``checkpoints``.
    pool_size : int, default=20000
        Candidates drawn (public points: all of them).
    shortlist : int, default=512
        See :func:`greedy_select`.
    refresh : float, default=0.25
        See :func:`greedy_select`.
    max_iter : int, default=100
        L-BFGS iterations per refined size.
    l1_radius : float, default=1.0
        Total weight :math:`C`.
    noise_sigma : float, optional
        Public noise level; discrepancy-principle stop (:func:`.joint.refine`).
    nest_from : int, default=100
        Reported sizes after one of at least this many atoms are warm-started from it.

    Returns
    -------
    ReducedSetResult
    """
    return _pursuit(problem, n_points=n_points, source=source, rng=rng, progress=progress, report_at=report_at,
                    name="herding", step="uniform", refine_weights="uniform", pool_size=pool_size,
                    shortlist=shortlist, refresh=refresh, max_iter=max_iter, l1_radius=l1_radius,
                    greedy_share=0.25, noise_sigma=noise_sigma, nest_from=nest_from)
