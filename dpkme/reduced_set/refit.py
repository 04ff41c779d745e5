r"""Convex re-fit of simplex weights over a large pool of candidates around a solver's atoms.

After a reduced-set solver has placed atoms :math:`(z_m, w_m)_{m\le M}`, :func:`refit_pool` builds a
*pool* :math:`P = \{p_1, \dots, p_K\}` of candidate rows -- the atoms themselves, copies of weighted atoms
(drawn with probability proportional to :math:`w`) moved by normal draws at a few ``scales``, copies whose
column blocks are taken from other weighted atoms (crossovers: rows that combine the point masses of
several columns, which local moves never reach), all projected onto the declared domain (integer and
declared levels, one-hot categories; as :func:`~dpkme.reduced_set.pursuit.revive_zero_weights` does), and
uniform draws from the domain -- and
solves the convex problem

.. math::
    \min_{v \in \Delta_C}\ f(v) = \Bigl\|\sum_{k=1}^K v_k\,\phi(p_k) - \tilde\mu\Bigr\|_2^2
    = \|\Phi_P^\top v - \tilde\mu\|_2^2, \qquad
    \Delta_C = \Bigl\{v \ge 0,\ \sum_k v_k = C\Bigr\},

with :math:`C = \sum_m w_m` (the solver's total mass) and the solver's weights on its own atoms as the
start, so the result is never worse than the solver's in :math:`f`. The solver is a spectral projected
gradient method (Birgin, Martínez & Raydan 2000) with an exact line search along each projected step:

.. math::
    d_t = \Pi_{\Delta_C}\bigl(v_t - \alpha_t \nabla f(v_t)\bigr) - v_t, \qquad
    v_{t+1} = v_t + \lambda_t d_t, \quad
    \lambda_t = \mathrm{clip}\Bigl(-\frac{\langle r_t, \Phi_P^\top d_t\rangle}{\|\Phi_P^\top d_t\|^2}, 0, 1\Bigr),

:math:`r_t = \Phi_P^\top v_t - \tilde\mu`, :math:`\nabla f = 2\Phi_P r_t`, and the Barzilai–Borwein step
:math:`\alpha_{t+1} = \|s_t\|^2 / \langle s_t, y_t\rangle = \|d_t\|^2 / (2\lambda_t\|\Phi_P^\top d_t\|^2)`
(:math:`s_t = \lambda_t d_t`, :math:`y_t = \nabla f(v_{t+1}) - \nabla f(v_t)`). It stops by Morozov's
discrepancy principle, :math:`\|r_t\| \le \tau\sigma\sqrt J` with the public noise level :math:`\sigma`
(a fit closer to :math:`\tilde\mu` than its noise only fits the noise; a start already within the bound is
returned unchanged), when the objective stalls, or after ``max_iter`` iterations. The pool's features
:math:`\Phi_P` are held in float32 row blocks (:math:`4KJ` bytes, checked against ``max_bytes``); every
product with them is accumulated in float64. Every ``screen_every`` iterations only the candidates with
weight and the ones with the smallest gradient (the only ones a step can give weight to) are kept in the
working set, which is re-checked against the whole pool at the end of each period.

The atoms with the ``max_atoms`` largest weights are returned: when the solution has more, the rest are
dropped and the kept atoms' weights re-fitted on their own (the same problem on that support, at most
``screen_every`` iterations; a solution spread over many candidates loses too much when merely rescaled), and
a result worse than the solver's atoms is never returned. Everything here is **post-processing** of the
privatised vector: :math:`\tilde\mu`, the public feature map, the solver's atoms (themselves computed from
:math:`\tilde\mu`), the public domain and a public random stream; never the private rows.
"""

from __future__ import annotations

import math

import numpy as np

from .._validation import check_positive_float, check_positive_int
from ._common import Problem, Progress
from .weights import project_simplex

__all__ = ["refit_pool", "REFIT_SCALES"]

#: Default ``scales`` of :func:`refit_pool`, in the points' units: about a quarter and a half of the finest
#: length scale of :func:`dpkme.kernels.additive.table_kernel` at its defaults (0.041--0.043 embedded units
#: on ``benchmarks/bench_tabular.py``'s tables).
REFIT_SCALES = (0.01, 0.02)


def _check_scales(scales) -> tuple[float, ...]:
    try:
        out = tuple(float(s) for s in scales)
    except TypeError:
        raise ValueError(f"scales must be a sequence of non-negative numbers, got {scales!r}.") from None
    if not out or not all(math.isfinite(s) and s >= 0 for s in out):
        raise ValueError(f"scales must be a non-empty sequence of finite numbers >= 0, got {scales!r}.")
    return out


def _pool(Z, w, *, domain, rng, size, scales, uniform_share, cross_share):
    """The candidates: the atoms, jittered copies, column crossovers of weighted atoms, uniform domain draws."""
    M, D = Z.shape
    alive = np.flatnonzero(w > 0)
    p = w[alive] / w[alive].sum()
    blocks = [np.arange(sl.start, sl.stop) for sl in getattr(domain, "blocks", {}).values()] if domain is not None \
        else []
    n_new = max(size - M, 0)
    n_uniform = int(round(uniform_share * n_new)) if domain is not None else 0
    n_cross = int(round(cross_share * n_new)) if len(blocks) > 1 else 0
    n_jitter = n_new - n_uniform - n_cross
    parts = [Z]

    def draw(n):
        return alive[rng.choice(alive.size, size=n, p=p)]

    per = [n_jitter // len(scales) + (1 if i < n_jitter % len(scales) else 0) for i in range(len(scales))]
    for n, s in zip(per, scales):
        if n:
            new = Z[draw(n)] + s * rng.standard_normal((n, D))
            parts.append(np.asarray(domain.project(new), dtype=np.float64) if domain is not None else new)
    if n_cross:
        # half: one column's block taken from a second weighted atom; half: every block from its own atom
        n_one = n_cross // 2
        C = Z[draw(n_cross)]
        which = rng.integers(0, len(blocks), size=n_one)
        donors = draw(n_one)
        for b, cols in enumerate(blocks):
            rows = np.flatnonzero(which == b)
            C[np.ix_(rows, cols)] = Z[np.ix_(donors[rows], cols)]
            rows = np.arange(n_one, n_cross)
            C[np.ix_(rows, cols)] = Z[np.ix_(draw(rows.size), cols)]
        parts.append(np.asarray(domain.project(C), dtype=np.float64))
    if n_uniform:
        parts.append(np.asarray(domain.sample(n_uniform, rng), dtype=np.float64))
    return np.vstack(parts)


def _check_blocks(blocks, n: int) -> list[tuple[int, int]]:
    try:
        out = [(int(a), int(b)) for a, b in blocks]
    except (TypeError, ValueError):
        raise ValueError(f"noise_blocks must be a sequence of (start, stop) index pairs, got {blocks!r:.80}.") from None
    edges = [0]
    for a, b in out:
        if a != edges[-1] or b <= a:
            raise ValueError(f"noise_blocks must partition 0..{n} into consecutive ranges, got {out}.")
        edges.append(b)
    if edges[-1] != n:
        raise ValueError(f"noise_blocks must partition 0..{n} into consecutive ranges, got {out}.")
    return out


class _BlockedFeatures:
    """:math:`\\Phi_P` held as float32 row blocks; products accumulated in float64."""

    def __init__(self, fmap, P, block_rows):
        self.blocks = [(a, min(a + block_rows, P.shape[0])) for a in range(0, P.shape[0], block_rows)]
        self.data = [fmap.features(P[a:b], dtype=np.float32) for a, b in self.blocks]
        self.n = P.shape[0]

    def rows(self, idx):
        """The float32 features of rows ``idx`` (sorted), as one array."""
        out = []
        for (a, b), F in zip(self.blocks, self.data):
            sel = idx[(idx >= a) & (idx < b)]
            if sel.size:
                out.append(F[sel - a])
        return np.vstack(out) if out else np.zeros((0, self.data[0].shape[1]), dtype=np.float32)

    def gradient_all(self, r):
        """:math:`2\\Phi_P r` over the whole pool."""
        r32 = r.astype(np.float32)
        return 2.0 * np.concatenate([(F @ r32).astype(np.float64) for F in self.data])


def _within(r, f, stop_below, blocks) -> bool:
    """The discrepancy test: the whole residual, or every block's, within its noise bound."""
    if stop_below is None:
        return False
    if blocks is None:
        return f <= stop_below
    return all(float(r[a:b] @ r[a:b]) <= bound for a, b, bound in blocks)


def _spg(F, v, target, *, radius, stop_below, max_iter, tol, progress, it0, total, alpha=None, blocks=None):
    """Spectral projected gradient with exact line search on the rows ``F`` (float32); returns v, f, its, alpha."""
    r = (F.T @ v.astype(np.float32)).astype(np.float64) - target
    g = 2.0 * (F @ r.astype(np.float32)).astype(np.float64)
    f = f_start = float(r @ r)
    if alpha is None:
        alpha = 1.0 / max(float(np.abs(g).max()), 1e-300)
    recent = [f]
    it = 0
    for it in range(1, max_iter + 1):
        if _within(r, f, stop_below, blocks):
            break
        d = project_simplex(v - alpha * g, radius) - v
        gd = float(g @ d)
        if not gd < 0.0:
            break
        q = (F.T @ d.astype(np.float32)).astype(np.float64)
        qq = float(q @ q)
        lam = min(1.0, max(0.0, -float(r @ q) / qq)) if qq > 0 else 1.0
        if lam == 0.0:
            break
        v = np.maximum(v + lam * d, 0.0)
        r = r + lam * q
        g = 2.0 * (F @ r.astype(np.float32)).astype(np.float64)
        alpha = min(max(float(d @ d) / (2.0 * lam * qq), 1e-12), 1e12) if qq > 0 else alpha * 10.0
        f = float(r @ r)
        recent.append(f)
        if len(recent) > 50 and recent[-51] - f < tol * f_start:
            break
        progress(min((it0 + it) / total, 1.0), f"re-fit {it0 + it}/{total}: residual {math.sqrt(max(f, 0.0)):.3g}")
    return v, f, it, alpha


def refit_pool(
    problem: Problem,
    points: np.ndarray,
    weights: np.ndarray,
    *,
    rng: np.random.Generator,
    domain=None,
    pool_size: int = 12000,
    scales=REFIT_SCALES,
    uniform_share: float = 0.1,
    cross_share: float = 0.5,
    max_iter: int = 1000,
    max_atoms: int | None = None,
    noise_sigma: float | None = None,
    discrepancy: float = 1.0,
    noise_blocks=None,
    candidates=None,
    screen_every: int = 100,
    block_rows: int = 2048,
    max_bytes: int = 1 << 30,
    progress: Progress | None = None,
) -> tuple[np.ndarray, np.ndarray, dict]:
    r"""Re-fit simplex weights over a pool of candidates around the atoms (see the module docstring).

    Parameters
    ----------
    problem : Problem
        The privatised target :math:`\tilde\mu` and the public feature map.
    points : ndarray (M, D)
        The solver's atoms (inside ``domain`` when one is given).
    weights : ndarray (M,)
        Their weights, :math:`w \ge 0` with :math:`C = \sum_m w_m > 0`.
    rng : numpy.random.Generator
        Public randomness of the pool (the solver's stream).
    domain : EmbeddedDomain, optional
        Declared domain (:func:`~dpkme.reduced_set.check_domain_object`): copies are projected onto it and
        a ``uniform_share`` of the pool is drawn from it. Without one the copies are not projected.
    pool_size : int, default=12000
        Candidates :math:`K \ge M` (the atoms included).
    scales : sequence of float, default=REFIT_SCALES
        Standard deviations of the normal moves of the copies, in the points' units (the copies are split
        evenly between them).
    uniform_share : float, default=0.1
        Share of the :math:`K - M` new candidates drawn uniformly from ``domain`` (in :math:`[0, 1]`).
    cross_share : float, default=0.5
        Share of the new candidates made by crossing weighted atoms (``domain`` with two or more column
        blocks only): half of them a weighted atom with one column's block taken from another weighted atom,
        half with every block from its own weighted atom (a draw from the product of the atoms' column
        marginals). ``uniform_share + cross_share <= 1``; the rest are the jittered copies.
    max_iter : int, default=1000
        Iterations of the spectral projected gradient.
    max_atoms : int, optional
        Most atoms returned (default ``M``): the largest weights are kept, rescaled to :math:`C`.
    noise_sigma : float, optional
        Public noise level :math:`\sigma` of the release: discrepancy stop at
        :math:`\|r\| \le \tau\sigma\sqrt J`.
    discrepancy : float, default=1.0
        :math:`\tau` of the discrepancy stop.
    noise_blocks : sequence of (int, int), optional
        Index ranges :math:`[a, b)` that partition the features (e.g. the kernel and marginal blocks of
        :class:`dpkme.kernels.marginal.JointMap`): the discrepancy stop then needs *every* block within
        its own bound, :math:`\|r_{a:b}\| \le \tau\sigma\sqrt{b - a}`, so a small block with a strong
        signal is fitted even when the large one's noise dominates the whole residual.
    candidates : array (K', D), optional
        Further candidate rows, public or computed from the privatised vector only (e.g. draws from the
        released marginals, :meth:`dpkme.kernels.marginal.MarginalFeatures.sample`), in the domain; they take
        ``K'`` of the ``pool_size`` places (the atoms are always kept).
    screen_every : int, default=100
        Iterations between reductions of the working set (see the module docstring).
    block_rows : int, default=2048
        Rows per float32 block of the pool's features.
    max_bytes : int, default=2**30
        Largest memory allowed for the pool's features, :math:`4KJ` bytes.
    progress : Progress, optional
        Reporter (raise from its callback to cancel).

    Returns
    -------
    points : ndarray (M', D)
        The re-fitted atoms, :math:`M' \le` ``max_atoms``.
    weights : ndarray (M',)
        Their weights (:math:`\ge 0`, sum :math:`C`).
    info : dict
        ``pool_size``, ``iterations``, ``residual_before``, ``residual_after``, ``skipped`` (True when the
        start was already within the discrepancy bound), ``feature_bytes``.

    Examples
    --------
    >>> import numpy as np
    >>> from dpkme.kernels import GaussianKernel
    >>> from dpkme.kernels.random_features import RandomFourierFeatures
    >>> from dpkme.reduced_set import FourierMap, Problem
    >>> rng = np.random.default_rng(0)
    >>> feats = RandomFourierFeatures(GaussianKernel(lengthscale=1.0), n_components=200, random_state=0).fit(2)
    >>> fmap = FourierMap.from_features(feats)
    >>> target = fmap.features(rng.normal(size=(300, 2))).mean(axis=0)
    >>> Z0 = rng.normal(size=(20, 2)); w0 = np.full(20, 1 / 20)
    >>> Z, w, info = refit_pool(Problem(target, fmap), Z0, w0, rng=rng, pool_size=500, scales=(0.3,))
    >>> bool(info["residual_after"] <= info["residual_before"]), bool(np.isclose(w.sum(), 1.0)), Z.shape[0] <= 20
    (True, True, True)
    """
    fmap = problem.fmap
    target = np.asarray(problem.target, dtype=np.float64)
    Z = np.array(points, dtype=np.float64)
    w = np.array(weights, dtype=np.float64)
    if Z.ndim != 2 or Z.shape[1] != fmap.dim or w.shape != (Z.shape[0],) or Z.shape[0] == 0:
        raise ValueError(f"points must be (M, {fmap.dim}) with M >= 1 and weights (M,), got {Z.shape} and {w.shape}.")
    if not (np.all(np.isfinite(Z)) and np.all(np.isfinite(w)) and np.all(w >= 0)) or w.sum() <= 0:
        raise ValueError("weights must be finite, >= 0 and not all 0 (and points finite); re-fit a weighted "
                         "release (simplex or sub-simplex weights).")
    M = Z.shape[0]
    pool_size = check_positive_int(pool_size, name="pool_size")
    if pool_size < M:
        raise ValueError(f"pool_size={pool_size} is below the number of atoms {M}; give pool_size >= {M}.")
    scales = _check_scales(scales)
    if candidates is not None:
        candidates = np.asarray(candidates, dtype=np.float64)
        if candidates.ndim != 2 or candidates.shape[1] != fmap.dim or not np.all(np.isfinite(candidates)):
            raise ValueError(f"candidates must be a finite (K', {fmap.dim}) array, got shape {candidates.shape}.")
    uniform_share = check_positive_float(uniform_share, name="uniform_share", allow_zero=True)
    cross_share = check_positive_float(cross_share, name="cross_share", allow_zero=True)
    if uniform_share + cross_share > 1:
        raise ValueError(f"uniform_share + cross_share must be at most 1 (the rest are jittered copies), got "
                         f"{uniform_share!r} + {cross_share!r}.")
    max_iter = check_positive_int(max_iter, name="max_iter", minimum=0)
    max_atoms = M if max_atoms is None else check_positive_int(max_atoms, name="max_atoms")
    discrepancy = check_positive_float(discrepancy, name="discrepancy")
    screen_every = check_positive_int(screen_every, name="screen_every")
    block_rows = check_positive_int(block_rows, name="block_rows")
    max_bytes = check_positive_int(max_bytes, name="max_bytes")
    feature_bytes = 4 * pool_size * fmap.n_components
    if feature_bytes > max_bytes:
        raise ValueError(f"a pool of {pool_size} candidates x J={fmap.n_components} float32 features needs "
                         f"{feature_bytes} bytes, above max_bytes={max_bytes}; lower pool_size or raise max_bytes.")
    progress = progress or Progress(None)
    radius = float(w.sum())
    stop_below = None
    blocks = None
    if noise_sigma is not None:
        noise_sigma = check_positive_float(noise_sigma, name="noise_sigma", allow_zero=True)
        stop_below = discrepancy**2 * fmap.n_components * noise_sigma**2
    if noise_blocks is not None:
        blocks = _check_blocks(noise_blocks, fmap.n_components)
        if noise_sigma is not None:
            blocks = [(a, b, discrepancy**2 * (b - a) * noise_sigma**2) for a, b in blocks]
        else:
            blocks = None
    r0 = fmap.residual(Z, w, target)
    f0 = float(r0 @ r0)
    info = {"pool_size": 0, "iterations": 0, "residual_before": math.sqrt(f0), "residual_after": math.sqrt(f0),
            "skipped": False, "feature_bytes": 0}
    if _within(r0, f0, stop_below, blocks) or max_iter == 0:
        info["skipped"] = True
        progress(1.0, "re-fit: the atoms already fit within the noise", force=True)
        return Z, w, info

    n_extra = 0 if candidates is None else int(candidates.shape[0])
    P = _pool(Z, w, domain=domain, rng=rng, size=max(pool_size - n_extra, M), scales=scales,
              uniform_share=uniform_share, cross_share=cross_share)
    if n_extra:
        P = np.vstack([P, candidates])
    progress(0.0, f"re-fit: features of {P.shape[0]} candidates", force=True)
    feats = _BlockedFeatures(fmap, P, block_rows)
    info.update(pool_size=int(P.shape[0]), feature_bytes=int(sum(F.nbytes for F in feats.data)))
    v = np.zeros(P.shape[0])
    v[:M] = w
    done, _f, alpha = 0, f0, None
    while done < max_iter:
        # working set: the candidates with weight and the smallest gradients (the only ones a step can enter)
        support = np.flatnonzero(v > 0)
        res = (feats.rows(support).T @ v[support].astype(np.float32)).astype(np.float64) - target
        g = feats.gradient_all(res)
        n_extra = min(P.shape[0] - support.size, max(2 * support.size, 2000))
        rest = np.setdiff1d(np.arange(P.shape[0]), support, assume_unique=True)
        extra = rest[np.argpartition(g[rest], n_extra - 1)[:n_extra]] if 0 < n_extra < rest.size else rest
        work = np.sort(np.concatenate([support, extra]))
        steps = min(screen_every, max_iter - done)
        vw, _f, it, alpha = _spg(feats.rows(work), v[work], target, radius=radius, stop_below=stop_below,
                                max_iter=steps, tol=1e-4, progress=progress, it0=done, total=max_iter, alpha=alpha,
                                blocks=blocks)
        v = np.zeros(P.shape[0])
        v[work] = vw
        done += max(it, 1)
        if it < steps:          # converged, stalled or within the discrepancy bound
            break
    keep = np.flatnonzero(v > 0)
    vk = None
    if keep.size > max_atoms:
        keep = np.sort(keep[np.argpartition(-v[keep], max_atoms - 1)[:max_atoms]])
        # the dropped candidates' mass: re-fit the kept ones' weights (same problem on their support)
        vk, _, it_k, _ = _spg(feats.rows(keep), v[keep] * (radius / v[keep].sum()), target, radius=radius,
                              stop_below=stop_below, max_iter=min(max_iter, screen_every), tol=1e-4,
                              progress=progress, it0=min(done, max_iter - 1), total=max_iter, blocks=blocks)
        info["support_refit_iterations"] = int(it_k)
    keep = np.sort(keep)
    Zn, wn = P[keep], (v[keep] if vk is None else vk)
    wn = wn * (radius / wn.sum())
    rn = fmap.residual(Zn, wn, target)
    fn = float(rn @ rn)
    if fn >= f0:                 # never worse than the solver's atoms
        Zn, wn, fn = Z, w, f0
    info.update(iterations=int(done), residual_after=math.sqrt(fn))
    progress(1.0, f"re-fit: residual {math.sqrt(f0):.3g} -> {math.sqrt(fn):.3g}", force=True)
    return Zn, wn, info
