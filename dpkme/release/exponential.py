r"""The exponential mechanism over synthetic databases (Balog et al. 2018, Section 3.4).

A synthetic database :math:`R` is a multiset of :math:`M` points drawn from a
finite, **public** candidate set :math:`G = \{g_1,\dots,g_{|G|}\}` (a grid over a
user-declared box, :func:`grid_candidates`, or public points). The mechanism
releases :math:`R` with probability

.. math::
    P_D(R) = \frac{\exp\bigl(-\varepsilon\,\|\mu_D - \mu_R\|_{\mathcal H} / (2\Delta_u)\bigr)}
                  {\sum_{R'} \exp\bigl(-\varepsilon\,\|\mu_D - \mu_{R'}\|_{\mathcal H} / (2\Delta_u)\bigr)},
    \qquad \mu_R = \frac1M\sum_{g\in R} k(g,\cdot),

i.e. the exponential mechanism of McSherry & Talwar (2007) with utility
:math:`u(D, R) = -\|\mu_D - \mu_R\|_{\mathcal H}` (the SmallDB algorithm of
Blum et al. 2008 with the RKHS distance as the similarity). It is **pure**
:math:`\varepsilon`-DP (:math:`\delta = 0`) under the neighbouring relation
:math:`\Delta_u` was computed for.

Score sensitivity
-----------------
By the reverse triangle inequality, for every fixed :math:`R`,

.. math::
    |u(D, R) - u(D', R)| = \bigl|\|\mu_D-\mu_R\| - \|\mu_{D'}-\mu_R\|\bigr|
    \le \|\mu_D - \mu_{D'}\|_{\mathcal H},

so :math:`\Delta_u` is the RKHS sensitivity of the empirical KME
(:func:`dpkme.privacy.sensitivity.kme_sensitivity`):

* ``"replace-one"`` (same public N, one row replaced):
  :math:`\|\mu_D-\mu_{D'}\| = \frac1N\sqrt{k(x,x)+k(x',x')-2k(x,x')}`
  :math:`\le \sqrt{2a - 2k_{\min}}/N`, i.e. :math:`\sqrt2/N` for a non-negative
  kernel with :math:`k(x,x) = a \le 1` (attained in the limit of two far-apart
  points, so it is tight). ``sensitivity="paper"`` gives the paper's general
  :math:`2\sqrt a/N` (Lemma 13), valid for any bounded kernel.
* ``"add-remove"`` with a public normaliser :math:`N` (``n_private``),
  :math:`\mu_D = \frac1N\sum_{x\in D}k(x,\cdot)`: the difference is a single
  :math:`k(x,\cdot)/N`, so :math:`\Delta_u = \sqrt a/N`.

The factor 2 in :math:`\varepsilon/(2\Delta_u)` is needed: the distance is not
monotone in the data (adding a point can move :math:`\mu_D` towards some
databases and away from others), so the normalising constant can change by
:math:`e^{\varepsilon/2}` as well (McSherry & Talwar 2007, Theorem 6; Dwork &
Roth 2014, Theorem 3.10). The ratio :math:`P_D(R)/P_{D'}(R)` is then at most
:math:`e^{\varepsilon/2}\cdot e^{\varepsilon/2} = e^{\varepsilon}`.

Scores
------
.. math::
    \|\mu_D - \mu_R\|^2 = \|\mu_D\|^2 - \frac2M\sum_{j}\bar k_{r_j}
    + \frac1{M^2}\sum_{j,l} k(g_{r_j}, g_{r_l}),\qquad
    \bar k_g = \frac1N\sum_n k(g, x_n).

:math:`\bar k` is one :math:`O(|G| N)` pass over the data. Note that
:math:`\|\mu_D\|^2 = \overline{K_{XX}}` does **not** cancel in the softmax: the
utility is the distance, not its square, so the constant sits under a square
root. It is computed exactly (an :math:`O(N^2)` blocked pass,
:meth:`dpkme.kernels.Kernel.mean_gram`; about 0.1 s for N = 10 000 and 1 s for
N = 30 000 on the 2-core reference machine).

Exact sampling, and why nothing else is offered
------------------------------------------------
Every multiset of size :math:`M` from :math:`G` is enumerated
(:func:`count_multisets` = :math:`\binom{|G|+M-1}{M}` of them) as a sorted index
tuple :math:`r_1\le\dots\le r_M`, in the *canonical order* of the key
:math:`(r_{M-1}, r_1, \dots, r_{M-2}, r_M)` (:func:`enumerate_multisets`,
:func:`multiset_from_rank`). In that order all databases sharing
:math:`r_{M-1} = l` form one contiguous block, a matrix (prefixes x last
element :math:`r_M \ge l`), so scores are computed block by block without
wasted work or scattered writes (2-3x faster than lexicographic order at
M = 3-5). One database is drawn by the Gumbel-max trick:
:math:`\arg\max_R (\log w_R + \text{Gumbel}_R)` is distributed exactly as
:math:`w_R/\sum w` and works on log-weights (no underflow); it is applied in two
stages (a block of databases by its log-sum-exp mass, then a database within
the block), which is exact and needs one ``exp`` per database instead of one
Gumbel draw. When the enumeration would exceed ``max_databases``
(:data:`DEFAULT_MAX_DATABASES`, visible and adjustable up to
:data:`HARD_MAX_DATABASES`), the mechanism refuses with the count. No
approximate sampler (MCMC, local search, sampling points independently) is
offered: the guarantee is a statement about the *exact* output distribution,
and a sampler whose distribution depends on the data through anything other
than these probabilities (for example an MCMC chain stopped after a fixed
number of steps, whose law depends on the starting point and on how the data
shape the energy landscape) can be arbitrarily far from them on some pair of
neighbours (the paper, Section 3.4).

Floating point: the scores and the Gumbel noise are double precision numpy; like
:mod:`dpkme.privacy.calibration`, this is adequate for teaching but not hardened against
floating-point attacks on the exponential mechanism (Ilvento, CCS 2020).

References
----------
F. McSherry and K. Talwar. Mechanism design via differential privacy. FOCS 2007.

A. Blum, K. Ligett, A. Roth. A learning theory approach to non-interactive
database privacy. STOC 2008.

M. Balog, I. Tolstikhin, B. Schölkopf. Differentially private database release
via kernel mean embeddings. ICML 2018, Section 3.4.
"""

from __future__ import annotations

import math
import time
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass, field
from typing import Any, cast, overload

import numpy as np
import numpy.typing as npt
from scipy.special import logsumexp

from .._validation import (
    check_array,
    check_box,
    check_epsilon,
    check_in,
    check_positive_int,
    noise_rng,
    public_size,
)
from ..kernels.kernel import Kernel
from ..privacy.accounting import PrivacyCharge, pure_dp_charge
from ..privacy.sensitivity import (
    NEIGHBOURING,
    SENSITIVITY_MODES,
    check_domain,
    check_private_kernel,
    enforce_domain,
    kme_sensitivity,
)
from ..privacy.spec import PrivacySpec, resolve, resolve_noise
from .result import Release

__all__ = [
    "DEFAULT_MAX_DATABASES",
    "HARD_MAX_DATABASES",
    "MAX_GRID_CANDIDATES",
    "MAX_COUNT_CANDIDATES",
    "MAX_COUNT_M",
    "MAX_M",
    "NOTES",
    "DatabaseScores",
    "ExponentialDiagnostics",
    "count_multisets",
    "count_table",
    "largest_m",
    "grid_candidates",
    "enumerate_multisets",
    "multiset_from_rank",
    "score_sensitivity",
    "database_scores",
    "exponential_probabilities",
    "exponential_mechanism",
    "exponential_charge",
]

#: Default limit on the number of candidate databases enumerated by one call.
#: From ``benchmarks/bench_exponential_gp.py`` (2-core machine shared with other
#: jobs): a whole release (all scores + one exact draw) at 5e6 databases took
#: 0.1-0.45 s (M = 2..8) on a lightly loaded machine (and 1.7 s at load average
#: 8 with an earlier, slower scoring loop), so interactive releases stay under 2 s.
DEFAULT_MAX_DATABASES = 5_000_000
#: No call enumerates more than this, whatever ``max_databases`` says: about the
#: largest size whose release stays under 2 s on a lightly loaded machine
#: (0.55 s at M = 2, 1.8 s at M = 8 for 1.8e7); memory ~160 MB for the scores.
HARD_MAX_DATABASES = 20_000_000
#: Largest synthetic-database size M the enumeration accepts (the work per
#: database grows with M, and the sorted index tuples of the parents take M bytes each).
MAX_M = 64
#: Largest candidate grid :func:`grid_candidates` builds.
MAX_GRID_CANDIDATES = 1_000_000
#: Limits of :func:`count_multisets` (the count is an exact big integer; beyond these it is astronomically
#: large anyway and computing it would take unbounded time and memory).
MAX_COUNT_CANDIDATES = 10**12
MAX_COUNT_M = 10_000

#: Short explanations for the app (plain text).
NOTES = {
    "approximate_sampling": (
        "The exponential mechanism is private only if the database is drawn from exactly these probabilities. "
        "An approximate sampler (MCMC stopped after a fixed number of steps, local search, greedy choices) has "
        "an output distribution that depends on the data in other, uncontrolled ways, and can differ by much "
        "more than a factor e^epsilon between neighbouring datasets; so only exact sampling (full enumeration) "
        "is offered."),
    "combinatorial_growth": (
        "A synthetic database is a multiset of M points from |G| candidates: there are C(|G|+M-1, M) of them, "
        "which grows like |G|^M / M!. Exact sampling must score every one, which is why the paper calls this "
        "algorithm infeasible beyond trivial sizes."),
    "sensitivity": (
        "Utility u(D, R) = -||mu_D - mu_R||_H. Changing one record moves mu_D by at most Delta (sqrt(2)/N for "
        "replace-one, 1/N for add-remove; the paper's 2/N), and by the triangle inequality every utility by at "
        "most Delta, so P(R) proportional to exp(-epsilon ||mu_D - mu_R|| / (2 Delta)) is epsilon-DP."),
}

_CHUNK_ELEMENTS = 1 << 20
_ROW_BLOCK = 256
_SAMPLE_BLOCK = 1 << 14


# --------------------------------------------------------------------------- counting
def count_multisets(n_candidates: int, m: int) -> int:
    r"""Number of synthetic databases: multisets of size ``m`` from ``n_candidates`` points.

    :math:`\binom{|G| + M - 1}{M}` (stars and bars). Exact Python integer.

    Parameters
    ----------
    n_candidates : int
        Number of public candidate points :math:`|G|`, between 1 and
        :data:`MAX_COUNT_CANDIDATES`.
    m : int
        Size :math:`M` of a synthetic database, between 1 and :data:`MAX_COUNT_M`.

    Returns
    -------
    int
        :math:`\binom{|G| + M - 1}{M}`.

    Examples
    --------
    >>> from dpkme.release.exponential import count_multisets
    >>> count_multisets(10, 3), count_multisets(100, 5)
    (220, 91962520)
    """
    n = check_positive_int(n_candidates, name="n_candidates", maximum=MAX_COUNT_CANDIDATES)
    m = check_positive_int(m, name="m", maximum=MAX_COUNT_M)
    return math.comb(n + m - 1, m)


def _as_float(count: int) -> float:
    """A count as float64 (``inf`` beyond the float range instead of an OverflowError)."""
    try:
        return float(count)
    except OverflowError:
        return math.inf


def count_table(n_candidates_list: Iterable[int], m_list: Iterable[int]) -> np.ndarray:
    """Table of :func:`count_multisets`: rows ``n_candidates_list``, columns ``m_list``.

    Returned as a float64 array (exact below 2**53, then rounded) so that a plot
    can use a log axis; the teaching point is how fast it grows.

    Parameters
    ----------
    n_candidates_list : sequence of int
        Candidate-set sizes :math:`|G| \\ge 1` (rows).
    m_list : sequence of int
        Database sizes :math:`M \\ge 1` (columns).

    Returns
    -------
    ndarray (len(n_candidates_list), len(m_list))
        The counts as float64 (``inf`` beyond the float range).

    Examples
    --------
    >>> from dpkme.release.exponential import count_table
    >>> count_table([5, 10], [1, 2, 3])
    array([[  5.,  15.,  35.],
           [ 10.,  55., 220.]])
    """
    ns = [check_positive_int(n, name="n_candidates") for n in n_candidates_list]
    ms = [check_positive_int(m, name="m") for m in m_list]
    return np.array([[_as_float(count_multisets(n, m)) for m in ms] for n in ns])


def largest_m(n_candidates: int, max_databases: int = DEFAULT_MAX_DATABASES) -> int:
    """Largest M (at most :data:`MAX_M`) whose enumeration over ``n_candidates`` points fits ``max_databases``.

    Parameters
    ----------
    n_candidates : int
        Number of public candidate points :math:`|G| \\ge 1`.
    max_databases : int, default DEFAULT_MAX_DATABASES
        The enumeration limit (number of candidate databases).

    Returns
    -------
    int
        The largest :math:`M` with :math:`\\binom{|G|+M-1}{M} \\le` ``max_databases``;
        0 if even M = 1 is too many (``n_candidates > max_databases``).

    Examples
    --------
    >>> from dpkme.release.exponential import largest_m
    >>> largest_m(10, 1000)                  # C(13, 4) = 715 fits, C(14, 5) = 2002 does not
    4
    """
    n = check_positive_int(n_candidates, name="n_candidates")
    limit = check_positive_int(max_databases, name="max_databases")
    m = 0
    while m < MAX_M and count_multisets(n, m + 1) <= limit:
        m += 1
    return m


def _check_limit(n: int, m: int, max_databases: int) -> tuple[int, int]:
    limit = check_positive_int(max_databases, name="max_databases", maximum=HARD_MAX_DATABASES)
    if m > MAX_M:
        raise ValueError(f"M = {m} synthetic points is more than the exact enumeration supports (MAX_M = {MAX_M}).")
    total = count_multisets(n, m)
    if total > limit:
        fits = largest_m(n, limit)
        raise ValueError(
            f"the exact exponential mechanism would enumerate C(|G|+M-1, M) = {total:,} candidate databases "
            f"(|G| = {n:,} candidates, M = {m}), more than the limit max_databases = {limit:,}; "
            + (f"with |G| = {n:,} at most M = {fits} fits. " if fits >= 1 else "")
            + "Use fewer candidates or a smaller M (an approximate sampler would not be differentially private)."
        )
    return total, limit


# --------------------------------------------------------------------------- candidates
def grid_candidates(lower: npt.ArrayLike, upper: npt.ArrayLike, points_per_axis: int | Sequence[int]) -> np.ndarray:
    """Candidate points on a regular grid over a **declared** box (public, never read off the data).

    Parameters
    ----------
    lower, upper : array-like (D,)
        Box corners, ``lower < upper`` in every coordinate.
    points_per_axis : int or sequence of int
        Grid points per coordinate (>= 1; one point sits at the box centre).

    Returns
    -------
    ndarray (prod(points_per_axis), D)
        Grid points in "ij" (C) order: the last coordinate varies fastest.

    Examples
    --------
    >>> from dpkme.release.exponential import grid_candidates
    >>> grid_candidates([0.0, 0.0], [1.0, 2.0], [2, 3]).tolist()
    [[0.0, 0.0], [0.0, 1.0], [0.0, 2.0], [1.0, 0.0], [1.0, 1.0], [1.0, 2.0]]
    """
    lo, hi = check_box(lower, upper)
    dim = lo.shape[0]
    if np.ndim(points_per_axis) == 0:
        ppa = [check_positive_int(points_per_axis, name="points_per_axis")] * dim
    else:
        ppa = [check_positive_int(p, name="points_per_axis") for p in cast("Sequence[int]", points_per_axis)]
        if len(ppa) != dim:
            raise ValueError(f"points_per_axis has {len(ppa)} entries for a {dim}-D box.")
    total = math.prod(ppa)
    if total > MAX_GRID_CANDIDATES:
        raise ValueError(f"the grid would have {total:,} points, more than {MAX_GRID_CANDIDATES:,}.")
    axes = [np.linspace(lo[d], hi[d], p) if p > 1 else np.array([(lo[d] + hi[d]) / 2.0])
            for d, p in enumerate(ppa)]
    mesh = np.meshgrid(*axes, indexing="ij")
    return np.column_stack([g.reshape(-1) for g in mesh])


# --------------------------------------------------------------------------- enumeration
def _index_dtype(n: int) -> type[np.integer[Any]]:
    return np.uint8 if n <= 256 else (np.uint16 if n <= 65536 else np.int32)


def _tuples(n: int, length: int) -> np.ndarray:
    """All nondecreasing index tuples of ``length`` over ``range(n)``, lexicographic order."""
    dtype = _index_dtype(n)
    idx = np.zeros((1, 0), dtype=dtype)
    last = np.zeros(1, dtype=np.int64)
    for _ in range(length):
        counts = n - last
        total = int(counts.sum())
        parent = np.repeat(np.arange(idx.shape[0]), counts)
        starts = np.cumsum(counts) - counts
        e = np.repeat(last - starts, counts) + np.arange(total)
        idx = np.concatenate([idx[parent], e[:, None].astype(dtype)], axis=1)
        last = e
    return idx


def _canonical_blocks(n: int, m: int) -> list[int]:
    """Sizes of the canonical blocks (``m >= 2``): block ``l`` holds ``C(l+m-2, m-2) * (n-l)`` databases."""
    return [math.comb(l + m - 2, m - 2) * (n - l) for l in range(n)]


def enumerate_multisets(n_candidates: int, m: int, *, max_databases: int = DEFAULT_MAX_DATABASES) -> np.ndarray:
    r"""Every synthetic database as a sorted index tuple, in canonical order.

    The canonical order sorts the tuples :math:`r_1\le\dots\le r_M` by the key
    :math:`(r_{M-1}, r_1, \dots, r_{M-2}, r_M)` (lexicographic for M <= 2).
    Row ``r`` is the database of rank ``r`` in :func:`exponential_probabilities`,
    :attr:`DatabaseScores.distances` and :func:`multiset_from_rank`.

    Parameters
    ----------
    n_candidates : int
        Number of public candidate points :math:`|G| \ge 1`.
    m : int
        Size :math:`M \ge 1` of a synthetic database (at most :data:`MAX_M`).
    max_databases : int, default DEFAULT_MAX_DATABASES
        Enumeration limit (<= :data:`HARD_MAX_DATABASES`); above it a ValueError
        quotes the count.

    Returns
    -------
    ndarray of int64, shape (count_multisets(n_candidates, m), m)
        One sorted index tuple per row, in canonical order.

    Examples
    --------
    >>> from dpkme.release.exponential import enumerate_multisets
    >>> enumerate_multisets(3, 2).tolist()
    [[0, 0], [0, 1], [0, 2], [1, 1], [1, 2], [2, 2]]
    """
    n = check_positive_int(n_candidates, name="n_candidates")
    m = check_positive_int(m, name="m")
    _check_limit(n, m, max_databases)
    if m == 1:
        return np.arange(n, dtype=np.int64)[:, None]
    blocks = []
    for l in range(n):
        pre = _tuples(l + 1, m - 2).astype(np.int64)
        w = n - l
        rows = np.empty((pre.shape[0], w, m), dtype=np.int64)
        rows[:, :, :m - 2] = pre[:, None, :]
        rows[:, :, m - 2] = l
        rows[:, :, m - 1] = np.arange(l, n)[None, :]
        blocks.append(rows.reshape(-1, m))
    return np.concatenate(blocks)


def _lex_unrank(r: int, n: int, m: int) -> list[int]:
    """Sorted tuple of lexicographic rank ``r`` among multisets of size ``m`` over ``range(n)``."""
    out = []
    lo = 0
    for pos in range(m):
        r_len = m - pos - 1  # length of the rest of the tuple
        # tuples (from value lo on) whose element here is < v, by the hockey-stick identity:
        # sum_{u=lo}^{v-1} C(n-u+r_len-1, r_len) = C(n-lo+r_len, r_len+1) - C(n-v+r_len, r_len+1)
        head = math.comb(n - lo + r_len, r_len + 1)
        a, b = lo, n - 1  # largest v in [lo, n-1] with before(v) <= r (bisection)
        while a < b:
            v = (a + b + 1) // 2
            if head - math.comb(n - v + r_len, r_len + 1) <= r:
                a = v
            else:
                b = v - 1
        r -= head - math.comb(n - a + r_len, r_len + 1)
        out.append(a)
        lo = a
    return out


def multiset_from_rank(rank: int, n_candidates: int, m: int) -> np.ndarray:
    """Sorted candidate indices of the database of canonical rank ``rank`` (inverse of the enumeration).

    Row ``rank`` of :func:`enumerate_multisets`, computed without enumerating
    (combinatorial unranking, exact big-integer arithmetic).

    Parameters
    ----------
    rank : int
        Canonical rank, ``0 <= rank < count_multisets(n_candidates, m)``.
    n_candidates : int
        Number of public candidate points :math:`|G|`, at most
        :data:`MAX_GRID_CANDIDATES`.
    m : int
        Size :math:`M` of a synthetic database, at most :data:`MAX_M`.

    Returns
    -------
    ndarray of int64, shape (m,)
        The sorted candidate indices :math:`r_1 \\le \\dots \\le r_M`.

    Examples
    --------
    >>> from dpkme.release.exponential import multiset_from_rank
    >>> multiset_from_rank(4, 3, 2).tolist()
    [1, 2]
    """
    n = check_positive_int(n_candidates, name="n_candidates", maximum=MAX_GRID_CANDIDATES)
    m = check_positive_int(m, name="m", maximum=MAX_M)
    total = count_multisets(n, m)
    r = check_positive_int(rank, name="rank", minimum=0, maximum=total - 1)
    if m == 1:
        return np.array([r], dtype=np.int64)
    for l, size in enumerate(_canonical_blocks(n, m)):  # noqa: B007 (the block found is used after the loop)
        if r < size:
            break
        r -= size
    p, e = divmod(r, n - l)
    return np.array([*_lex_unrank(p, l + 1, m - 2), l, l + e], dtype=np.int64)


def _distances(kbar: np.ndarray, K: Any, diag: np.ndarray, m: int, mu_sq: float,
               progress: Callable[[float, str], object] | None = None) -> np.ndarray:
    r"""RKHS distance :math:`\|\mu_D - \mu_R\|` of every database, in canonical order.

    :math:`d_R^2 = \|\mu_D\|^2 - \frac2M L_R + \frac1{M^2} Q_R` with
    :math:`L_R = \sum_j \bar k_{r_j}` and :math:`Q_R = \sum_{j,l} K_{r_j r_l}`.
    Block :math:`l` holds the databases :math:`(p, l, e)` with a prefix
    :math:`p` (sorted, values :math:`\le l`, length M-2) and :math:`e \ge l`:
    with the prefix's own sums and :math:`S = K_{l, l:} + \sum_j K_{p_j, l:}`,
    all of them get :math:`Q = Q_{(p,l)} + 2S_e + K_{ee}` and
    :math:`L = L_{(p,l)} + \bar k_e` at once, written contiguously (row-major
    prefixes x e is exactly the canonical order). Memory: the output (8 bytes per
    database) plus blocks of about 8 MB. ``K`` is the candidates' Gram matrix
    (M >= 3), a function ``K(l0, l1)`` returning its rows ``l0:l1`` (M = 2), or
    unused (M = 1).
    """
    n = kbar.shape[0]
    total = count_multisets(n, m)
    out = np.empty(total)
    inv_m = 1.0 / m
    col_term = (diag * inv_m - 2.0 * kbar) * inv_m       # per last element e
    if m == 1:
        d2 = col_term + mu_sq
        np.maximum(d2, 0.0, out=d2)
        np.sqrt(d2, out=out)
        return out
    pos = 0
    if m == 2:
        # block l = databases (l, e), e >= l: one kernel row each; rows computed in blocks
        # so that K (n x n, up to ~6000^2 here) is never held in memory
        for l0 in range(0, n, _ROW_BLOCK):
            R = K(l0, min(l0 + _ROW_BLOCK, n))
            for i in range(R.shape[0]):
                l = l0 + i
                seg = out[pos:pos + n - l]
                np.multiply(R[i, l:], 2.0 * inv_m * inv_m, out=seg)
                seg += col_term[l:]
                seg += (diag[l] * inv_m - 2.0 * kbar[l]) * inv_m + mu_sq
                np.maximum(seg, 0.0, out=seg)
                np.sqrt(seg, out=seg)
                pos += n - l
            if progress is not None:
                progress(0.2 + 0.75 * pos / total, f"scored {pos:,} of {total:,} databases")
        return out
    for l in range(n):
        pre = _tuples(l + 1, m - 2).astype(np.intp)
        w = n - l
        step = max(1, _CHUNK_ELEMENTS // w)
        for s in range(0, pre.shape[0], step):
            P = pre[s:s + step]
            g = P.shape[0]
            # sums of the parent (p, l)
            lin_p = np.full(g, kbar[l])
            quad_p = np.full(g, K[l, l])
            if m > 2:
                lin_p += kbar[P].sum(axis=1)
                quad_p += 2.0 * K[P, l].sum(axis=1)
                for a in range(m - 2):
                    quad_p += K[P[:, a], P[:, a]]
                    for b in range(a):
                        quad_p += 2.0 * K[P[:, a], P[:, b]]
                S = K[P[:, 0], l:]                       # a copy (fancy indexing)
                for j in range(1, m - 2):
                    S += K[P[:, j], l:]
                S += K[l, l:]
            else:  # pragma: no cover - m == 2 is handled above
                S = np.repeat(K[l:l + 1, l:], g, axis=0)
            # d^2 = mu_sq - (2/M)(L + kbar_e) + (Q + 2 S_e + K_ee)/M^2, in place in S
            S *= 2.0 * inv_m * inv_m
            S += ((quad_p * inv_m - 2.0 * lin_p) * inv_m + mu_sq)[:, None]
            S += col_term[l:]
            np.maximum(S, 0.0, out=S)
            np.sqrt(S, out=out[pos:pos + S.size].reshape(S.shape))
            pos += S.size
        if progress is not None:
            progress(0.2 + 0.75 * pos / total, f"scored {pos:,} of {total:,} databases")
    if pos != total:  # pragma: no cover - enumeration invariant
        raise RuntimeError(f"enumerated {pos} databases instead of {total}.")
    return out


def _sample_index(log_w: Callable[[int, int], np.ndarray], total: int, rng: np.random.Generator,
                  size: int = 1) -> np.ndarray:
    r"""``size`` independent exact draws of an index with probability :math:`\propto e^{\ell_i}`, in two stages.

    The indices are cut into blocks of :data:`_SAMPLE_BLOCK`; the log-mass of
    each block is a log-sum-exp. A block is drawn by Gumbel-max over the block
    log-masses, then an index within it by Gumbel-max over its log-weights:
    :math:`P(i) = P(\text{block})\,P(i \mid \text{block})` exactly. Cost: one
    ``exp`` per index (the log-sum-exps) plus a few thousand Gumbel draws,
    instead of one (slow) Gumbel draw per index. ``log_w(a, b)`` returns the
    log-weights of indices ``a:b``.
    """
    starts = list(range(0, total, _SAMPLE_BLOCK))
    masses = np.array([logsumexp(log_w(a, min(a + _SAMPLE_BLOCK, total))) for a in starts])
    blocks = np.argmax(masses + rng.gumbel(size=(size, masses.shape[0])), axis=1)
    out = np.empty(size, dtype=np.int64)
    for blk in np.unique(blocks):
        where = np.flatnonzero(blocks == blk)
        a = int(blk) * _SAMPLE_BLOCK
        lw = log_w(a, min(a + _SAMPLE_BLOCK, total))
        out[where] = a + np.argmax(lw + rng.gumbel(size=(where.shape[0], lw.shape[0])), axis=1)
    return out


# --------------------------------------------------------------------------- sensitivity
def score_sensitivity(*, n: int, kernel: Kernel, neighbouring: str = "replace-one", mode: str = "tight",
                      domain: tuple[npt.ArrayLike, npt.ArrayLike] | None = None) -> float:
    r"""Sensitivity :math:`\Delta_u` of the utility :math:`u(D,R) = -\|\mu_D - \mu_R\|_{\mathcal H}`.

    :math:`\sup_R |u(D,R) - u(D',R)| \le \|\mu_D - \mu_{D'}\|_{\mathcal H}`
    (reverse triangle inequality), hence the KME sensitivity: ``"tight"``
    :math:`\sqrt{2a - 2k_{\min}}/N` (replace-one, :math:`\sqrt2/N` for
    :math:`a = 1`) or :math:`\sqrt a/N` (add-remove, public N); ``"paper"``
    :math:`2\sqrt a/N`. ``domain`` (a declared box that contains the data)
    raises :math:`k_{\min}`.

    Parameters
    ----------
    n : int
        Public dataset size :math:`N \ge 1`.
    kernel : Kernel
        :math:`k(x, x) = a \le 1`.
    neighbouring : {"replace-one", "add-remove"}, default "replace-one"
        The neighbouring relation.
    mode : {"tight", "paper"}, default "tight"
        The bound (see above).
    domain : (lower, upper), optional
        Declared box containing the data (tightens ``"tight"`` replace-one).

    Returns
    -------
    float
        :math:`\Delta_u`.

    Examples
    --------
    >>> from dpkme.kernels import GaussianKernel
    >>> from dpkme.release.exponential import score_sensitivity
    >>> k = GaussianKernel(lengthscale=1.0)
    >>> score_sensitivity(n=100, kernel=k), score_sensitivity(n=100, kernel=k, neighbouring="add-remove")
    (0.01414213562373095, 0.01)
    """
    return kme_sensitivity(n=n, kernel=kernel, neighbouring=neighbouring, mode=mode, domain=domain)


# --------------------------------------------------------------------------- scores
@dataclass
class ExponentialDiagnostics:
    """**Private** facts about one draw, for the data owner's display only (never publish).

    Returned by :meth:`DatabaseScores.release` and :func:`exponential_mechanism`
    with ``return_diagnostics=True``.

    Parameters
    ----------
    distance : float
        RKHS distance :math:`\\|\\mu_D - \\mu_R\\|` of the released database
        (its utility is minus this). A function of the private data.
    probability : float
        Probability the mechanism gave to the released database.
    expected_distance : float
        :math:`\\mathbb E\\|\\mu_D - \\mu_R\\|` under the mechanism at this ε.
    best_distance : float
        Smallest distance over all candidate databases (what ε = ∞ would give).
    rank : int
        Canonical rank of the released database (:func:`multiset_from_rank`).
    """

    distance: float
    probability: float
    expected_distance: float
    best_distance: float
    rank: int


@dataclass
class DatabaseScores:
    r"""RKHS distances :math:`\|\mu_D - \mu_R\|` of every candidate database (computed from **private** data).

    Build it with :func:`database_scores`. It does not depend on ε, so one
    object serves a whole privacy–utility curve (:meth:`expected_distance`) and
    repeated releases (:meth:`release`). The distances are private: only the
    output of :meth:`release` (a sampled database) is differentially private.

    Parameters
    ----------
    candidates : ndarray (:math:`|G|`, D)
        Public candidate points.
    m : int
        Size M of every synthetic database.
    kernel : Kernel
        The kernel of the RKHS distance (:math:`k(x,x) \le 1`).
    distances : ndarray (T,)
        Distances in canonical order (:func:`enumerate_multisets`),
        :math:`T = \binom{|G|+M-1}{M}`. **Private.**
    sensitivity : float
        :math:`\Delta_u` of the utility under ``neighbouring`` / ``sensitivity_mode``.
    neighbouring : {"replace-one", "add-remove"}
        The neighbouring relation of the guarantee.
    sensitivity_mode : {"tight", "paper"}
        The bound :math:`\Delta_u` was computed with (:func:`score_sensitivity`).
    n_private : int
        Public size :math:`N` (normaliser of :math:`\mu_D`).
    max_databases : int
        The enumeration limit the scores were computed under.
    seconds : float, default 0.0
        Time spent computing the scores, in seconds.
    params : dict, default {}
        Extra parameters copied into every release's ``params`` (the declared
        ``domain`` and ``clip``).

    Attributes
    ----------
    n_candidates, n_databases : int
        :math:`|G|` and :math:`T` (derived).

    Examples
    --------
    >>> import numpy as np
    >>> from dpkme.kernels import GaussianKernel
    >>> from dpkme.release.exponential import database_scores, grid_candidates
    >>> X = np.random.default_rng(0).normal(size=(50, 1))                     # the private rows
    >>> scores = database_scores(X, grid_candidates([-2.0], [2.0], 5), kernel=GaussianKernel(lengthscale=1.0), m=2)
    >>> scores.n_databases, round(float(scores.probabilities(1.0).sum()), 12)
    (15, 1.0)
    >>> rel = scores.release(1.0, random_state=0)                                # seeded: a teaching replay
    >>> rel.mechanism, rel.delta, float(rel.weights.sum())
    ('exponential', 0.0, 1.0)
    """

    candidates: np.ndarray
    m: int
    kernel: Kernel
    distances: np.ndarray
    sensitivity: float
    neighbouring: str
    sensitivity_mode: str
    n_private: int
    max_databases: int
    seconds: float = 0.0
    params: dict[str, Any] = field(default_factory=dict)

    @property
    def n_candidates(self) -> int:
        return int(self.candidates.shape[0])

    @property
    def n_databases(self) -> int:
        return int(self.distances.shape[0])

    def log_weights(self, epsilon: float) -> np.ndarray:
        r"""Unnormalised log-probabilities :math:`-\varepsilon\,d_R/(2\Delta_u)`."""
        eps = check_epsilon(epsilon)
        return self.distances * (-eps / (2.0 * self.sensitivity))

    def probabilities(self, epsilon: float) -> np.ndarray:
        """The exact output distribution (softmax of :meth:`log_weights`, via log-sum-exp)."""
        lw = self.log_weights(epsilon)
        p: np.ndarray = np.exp(lw - logsumexp(lw))
        return p

    def expected_distance(self, epsilon: float | npt.ArrayLike) -> float | np.ndarray:
        r""":math:`\mathbb E_{R\sim P_D}\|\mu_D - \mu_R\|` at ``epsilon`` (scalar or array of ε). Exact; private."""
        if np.ndim(epsilon) == 0:
            return float(self.probabilities(cast(float, epsilon)) @ self.distances)
        return np.array([float(self.probabilities(e) @ self.distances) for e in np.asarray(epsilon).ravel()])

    def multiset(self, rank: int) -> np.ndarray:
        """Sorted candidate indices of database ``rank``."""
        return multiset_from_rank(rank, self.n_candidates, self.m)

    @overload
    def sample_rank(self, epsilon: float, rng: np.random.Generator, size: None = None) -> int: ...

    @overload
    def sample_rank(self, epsilon: float, rng: np.random.Generator, size: int) -> np.ndarray: ...

    def sample_rank(self, epsilon: float, rng: np.random.Generator, size: int | None = None) -> int | np.ndarray:
        """Exact draw(s) from :meth:`probabilities`: one rank (int), or ``size`` independent ranks (array).

        Two-stage Gumbel-max (see :func:`_sample_index`). Many draws at once
        are cheap (a histogram of the mechanism's outputs for teaching).
        """
        c = -check_epsilon(epsilon) / (2.0 * self.sensitivity)
        k = 1 if size is None else check_positive_int(size, name="size")
        ranks = _sample_index(lambda a, b: self.distances[a:b] * c, self.n_databases, rng, k)
        return int(ranks[0]) if size is None else ranks

    def release(self, epsilon: float, *, random_state: int | np.random.Generator | None = None,
                return_diagnostics: bool = False) -> Release | tuple[Release, ExponentialDiagnostics]:
        r"""Draw one synthetic database and return it as a :class:`~dpkme.release.Release`.

        Pure :math:`\varepsilon`-DP under ``neighbouring`` (see the module docstring).
        The release holds the **distinct** points of the multiset with weights
        ``count / M`` (so :meth:`Release.evaluate` is :math:`\mu_R`); ``params``
        records the sorted candidate indices (``multiset``) and their counts.
        ``random_state``: an int (seeded, replayable teaching release), ``None``
        (OS entropy, nothing recorded) or a Generator.

        With ``return_diagnostics=True`` returns ``(release, ExponentialDiagnostics)``;
        the diagnostics are private (distance of the chosen database etc.).
        """
        t0 = time.perf_counter()
        eps = check_epsilon(epsilon)
        rng, seed, noise_source = noise_rng(random_state)
        # what this draw spends (= exponential_mechanism_charge), with the public sizes of the run
        charge = _exponential_charge_of(
            eps, self.neighbouring, label=f"exponential mechanism (M={self.m}, |G|={self.n_candidates})",
            details={"score_sensitivity": self.sensitivity, "n_databases": self.n_databases, "m": self.m,
                     "n_candidates": self.n_candidates})
        rank = self.sample_rank(eps, rng)
        idx = self.multiset(rank)
        uniq, counts = np.unique(idx, return_counts=True)
        rel = Release(
            points=self.candidates[uniq], weights=counts / self.m, mechanism="exponential",
            epsilon=eps, delta=0.0, sigma=0.0, sensitivity=self.sensitivity, neighbouring=self.neighbouring,
            calibration="exponential", kernel=self.kernel, seed=seed, n_private=self.n_private,
            seconds=self.seconds + time.perf_counter() - t0, noise_source=noise_source,
            params={"m": self.m, "n_candidates": self.n_candidates, "n_databases": self.n_databases,
                    "max_databases": self.max_databases, "score_sensitivity": self.sensitivity,
                    "sensitivity_mode": self.sensitivity_mode, "sampler": "gumbel-max (exact)",
                    "utility": "-||mu_D - mu_R||_H", "multiset": idx.tolist(),
                    "candidate_indices": uniq.tolist(), "counts": counts.tolist(), **self.params},
            charge=charge,
        )
        if not return_diagnostics:
            return rel
        p = self.probabilities(eps)
        diag = ExponentialDiagnostics(
            distance=float(self.distances[rank]), probability=float(p[rank]),
            expected_distance=float(p @ self.distances), best_distance=float(self.distances.min()), rank=rank)
        return rel, diag


def _exponential_charge_of(epsilon: float, neighbouring: str, *, label: str | None = None,
                           details: dict[str, Any] | None = None) -> PrivacyCharge:
    """The pure-DP charge of one draw at ``epsilon`` (the release's own and :func:`exponential_mechanism_charge`'s)."""
    return pure_dp_charge(label or "exponential mechanism", epsilon=epsilon, mechanism="exponential",
                          relation=neighbouring, details={"mechanism": "exponential", **(details or {})})


def _row_means(kernel: Kernel, G: np.ndarray, X: np.ndarray) -> np.ndarray:
    """:math:`\\bar k_g` for every candidate; many candidates and few rows use blocked cross Gram matrices."""
    n = X.shape[0]
    if n >= 1024 or G.shape[0] <= 4096:
        return kernel.row_means(G, X)
    step = max(256, (1 << 22) // n)
    return np.concatenate([kernel.cross(G[i:i + step], X).mean(axis=1) for i in range(0, G.shape[0], step)])


def _throttled(progress: Callable[[float, str], object] | None) -> Callable[[float, str], None] | None:
    """Forward ``progress(fraction, message)`` only when the fraction grew by >= 1 % (and always at 0 and 1)."""
    if progress is None:
        return None
    if not callable(progress):
        raise ValueError(f"progress must be callable as progress(fraction, message), got {progress!r}.")
    last = [-1.0]

    def report(fraction: float, message: str) -> None:
        if fraction >= 1.0 or fraction - last[0] >= 0.01:
            last[0] = fraction
            progress(min(float(fraction), 1.0), message)

    return report


def _check_args(X: npt.ArrayLike, candidates: npt.ArrayLike, kernel: Kernel, m: int, neighbouring: str,
                sensitivity: str, n_private: int | None) -> tuple[np.ndarray, np.ndarray, int, int]:
    check_private_kernel(kernel)
    check_in(neighbouring, NEIGHBOURING, name="neighbouring")
    check_in(sensitivity, SENSITIVITY_MODES, name="sensitivity")
    X = check_array(X, name="X")
    G = check_array(candidates, name="candidates", n_features=X.shape[1])
    m = check_positive_int(m, name="m")
    n = X.shape[0]
    n_pub = public_size(n, n_private, neighbouring=neighbouring)
    return X, G, m, n_pub


def database_scores(
    X: npt.ArrayLike,
    candidates: npt.ArrayLike,
    *,
    kernel: Kernel,
    m: int,
    neighbouring: str = "replace-one",
    sensitivity: str = "tight",
    domain: tuple[npt.ArrayLike, npt.ArrayLike] | None = None,
    n_private: int | None = None,
    max_databases: int = DEFAULT_MAX_DATABASES,
    progress: Callable[[float, str], object] | None = None,
    clip: bool = False,
) -> DatabaseScores:
    r"""Distances :math:`\|\mu_D - \mu_R\|_{\mathcal H}` of all :math:`\binom{|G|+M-1}{M}` databases.

    Reads the private data (:math:`\bar k` in :math:`O(|G|N)`, and
    :math:`\|\mu_D\|^2` in :math:`O(N^2)`); the candidates must be public. Refuses
    (ValueError quoting the count and the limit) above ``max_databases``.

    Parameters
    ----------
    X : array (N, D)
        Private data (inside ``domain`` if one is declared).
    candidates : array (:math:`|G|`, D)
        Public candidate points (e.g. :func:`grid_candidates`).
    kernel : Kernel
        :math:`k(x, x) \le 1`.
    m : int
        Size M of the synthetic database.
    neighbouring : {"replace-one", "add-remove"}
    sensitivity : {"tight", "paper"}
        See :func:`score_sensitivity`.
    domain : (lower, upper), optional
        Declared box containing the data (tightens ``"tight"`` replace-one).
        Rows outside it are refused (ValueError with their count and columns,
        never their values) unless ``clip=True``
        (:func:`dpkme.privacy.sensitivity.enforce_domain`).
    n_private : int, optional
        Public normaliser N (add-remove); must equal ``len(X)`` for replace-one.
    max_databases : int
        Enumeration limit (<= :data:`HARD_MAX_DATABASES`).
    progress : callable, optional
        ``progress(fraction, message)`` with increasing fractions from 0 to 1
        (at most ~100 calls); exceptions it raises cancel the call.
    clip : bool
        Clip every row to ``domain`` instead of refusing rows outside it (a
        per-row map: the guarantee holds).

    Returns
    -------
    DatabaseScores
        The (private) distances of all databases, with everything needed to
        release one (:meth:`DatabaseScores.release`); see the example there.
    """
    t0 = time.perf_counter()
    progress = _throttled(progress)
    X, G, m, n_pub = _check_args(X, candidates, kernel, m, neighbouring, sensitivity, n_private)
    X = enforce_domain(X, domain, clip=clip)  # the box sensitivity holds only for data inside the box
    domain = None if domain is None else check_domain(domain, X.shape[1])
    n_cand = G.shape[0]
    total, limit = _check_limit(n_cand, m, max_databases)
    sens = score_sensitivity(n=n_pub, kernel=kernel, neighbouring=neighbouring, mode=sensitivity, domain=domain)
    if progress is not None:
        progress(0.0, f"{total:,} candidate databases; kernel means over the data")
    scale = X.shape[0] / n_pub
    kbar = _row_means(kernel, G, X) * scale            # <mu_D, k(g, .)>
    mu_sq = kernel.mean_gram(X) * scale * scale        # ||mu_D||^2 (does not cancel: under a square root)
    del X  # nothing below reads the private data except through kbar and mu_sq
    if progress is not None:
        progress(0.2, "scoring databases")
    diag = np.full(n_cand, kernel.diag_value)           # k(g, g) = a (translation-invariant kernels)
    K: Any   # None, a function of a row block, or the Gram matrix (see _distances)
    if m == 1:
        K = None
    elif m == 2:
        def K(l0: int, l1: int) -> np.ndarray:
            return kernel.cross(G[l0:l1], G)
    else:
        K = kernel.gram(G)
    dist = _distances(kbar, K, diag, m, mu_sq, progress)
    if progress is not None:
        progress(1.0, "scores ready")
    return DatabaseScores(
        candidates=G, m=m, kernel=kernel, distances=dist, sensitivity=sens, neighbouring=neighbouring,
        sensitivity_mode=sensitivity, n_private=n_pub, max_databases=limit, seconds=time.perf_counter() - t0,
        params={"domain": None if domain is None else [np.asarray(b, dtype=float).tolist() for b in domain],
                "clip": clip},
    )


def exponential_probabilities(
    X: npt.ArrayLike,
    candidates: npt.ArrayLike,
    *,
    kernel: Kernel,
    m: int,
    epsilon: float,
    neighbouring: str = "replace-one",
    sensitivity: str = "tight",
    domain: tuple[npt.ArrayLike, npt.ArrayLike] | None = None,
    n_private: int | None = None,
    max_databases: int = DEFAULT_MAX_DATABASES,
    clip: bool = False,
) -> tuple[np.ndarray, np.ndarray]:
    r"""The mechanism's full output distribution (teaching and tests; reads private data).

    :math:`P_D(R) \propto \exp(-\varepsilon\|\mu_D-\mu_R\|_{\mathcal H}/(2\Delta_u))`
    for every database :math:`R` (:func:`database_scores`, then
    :meth:`DatabaseScores.probabilities`). **Private**: it is the distribution,
    not a draw from it.

    Parameters
    ----------
    X : array (N, D)
        Private data (inside ``domain`` if one is declared).
    candidates : array (:math:`|G|`, D)
        Public candidate points (e.g. :func:`grid_candidates`), chosen without the data.
    kernel : Kernel
        :math:`k(x, x) \le 1`.
    m : int
        Size M of the synthetic database.
    epsilon : float
        :math:`\varepsilon > 0`.
    neighbouring : {"replace-one", "add-remove"}, default "replace-one"
        The neighbouring relation of the guarantee.
    sensitivity : {"tight", "paper"}, default "tight"
        The score-sensitivity bound (:func:`score_sensitivity`).
    domain : (lower, upper), optional
        Declared box containing the data (tightens ``"tight"`` replace-one);
        rows outside it are refused unless ``clip=True``.
    n_private : int, optional
        Public normaliser N (add-remove); must equal ``len(X)`` for replace-one
        (the default).
    max_databases : int, default DEFAULT_MAX_DATABASES
        Enumeration limit (<= :data:`HARD_MAX_DATABASES`).
    clip : bool, default False
        Clip every row to ``domain`` instead of refusing rows outside it.

    Returns
    -------
    probabilities : ndarray (T,)
        :math:`P_D(R)` for every database, canonical order.
    multisets : ndarray (T, M)
        Sorted candidate indices of each database (same order).
    """
    scores = database_scores(X, candidates, kernel=kernel, m=m, neighbouring=neighbouring,
                             sensitivity=sensitivity, domain=domain, n_private=n_private,
                             max_databases=max_databases, clip=clip)
    return scores.probabilities(epsilon), enumerate_multisets(scores.n_candidates, scores.m,
                                                              max_databases=max_databases)


def exponential_mechanism(
    X: npt.ArrayLike,
    candidates: npt.ArrayLike,
    *,
    kernel: Kernel,
    epsilon: float | None = None,
    m: int,
    neighbouring: str | None = None,
    sensitivity: str = "tight",
    domain: tuple[npt.ArrayLike, npt.ArrayLike] | None = None,
    n_private: int | None = None,
    random_state: int | np.random.Generator | None = None,
    max_databases: int = DEFAULT_MAX_DATABASES,
    progress: Callable[[float, str], object] | None = None,
    return_diagnostics: bool = False,
    clip: bool = False,
    privacy: PrivacySpec | None = None,
) -> Release | tuple[Release, ExponentialDiagnostics]:
    r"""Release a synthetic database of M points by the exact exponential mechanism.

    Guarantee: pure :math:`\varepsilon`-DP (:math:`\delta = 0`) with respect to
    ``neighbouring``, provided ``candidates`` are public (chosen without the
    data), :math:`k(x,x) \le 1`, and the data lie in ``domain`` if one is
    declared. :math:`P_D(R) \propto \exp(-\varepsilon\|\mu_D-\mu_R\|_{\mathcal H}/(2\Delta_u))`
    with :math:`\Delta_u` from :func:`score_sensitivity` (Balog et al. 2018,
    Section 3.4; McSherry & Talwar 2007). Sampling is exact (full enumeration,
    Gumbel-max).

    For many releases or a curve over ε on the same data, build
    :func:`database_scores` once and call its methods.

    Parameters
    ----------
    X : array (N, D)
        Private data (inside ``domain`` if one is declared).
    candidates : array (:math:`|G|`, D)
        Public candidate points (e.g. :func:`grid_candidates`), chosen without the data.
    kernel : Kernel
        :math:`k(x, x) \le 1`.
    epsilon : float, optional
        :math:`\varepsilon > 0`; the release is pure :math:`\varepsilon`-DP (required unless ``privacy``
        gives it).
    m : int
        Size M of the synthetic database (:math:`\binom{|G|+M-1}{M}` databases are scored).
    neighbouring : {"replace-one", "add-remove"}, optional
        The neighbouring relation of the guarantee (default ``"replace-one"``, or ``privacy.relation``).
    sensitivity : {"tight", "paper"}, default "tight"
        The score-sensitivity bound (:func:`score_sensitivity`).
    domain : (lower, upper), optional
        Declared box containing the data (tightens ``"tight"`` replace-one);
        rows outside it are refused unless ``clip=True``.
    n_private : int, optional
        Public normaliser N (add-remove); must equal ``len(X)`` for replace-one
        (the default).
    random_state : None, int or numpy.random.Generator, optional
        ``None`` (default): OS entropy, no seed recorded (a real release); an
        int: seeded and replayable (teaching only); a Generator: used as is.
    max_databases : int, default DEFAULT_MAX_DATABASES
        Enumeration limit (<= :data:`HARD_MAX_DATABASES`); above it a ValueError
        quotes the count and the largest M that fits.
    progress : callable, optional
        ``progress(fraction, message)`` while scoring; exceptions it raises
        cancel the call.
    return_diagnostics : bool, default False
        Also return the (private) :class:`ExponentialDiagnostics` of the draw.
    clip : bool, default False
        Clip every row to ``domain`` instead of refusing rows outside it (a
        per-row map: the guarantee holds).
    privacy : PrivacySpec, optional
        The typed alternative to ``epsilon`` and ``neighbouring`` (:func:`~dpkme.privacy.spec.resolve`): its
        fields are used, and a loose argument that disagrees is a ValueError naming both. The release is pure
        :math:`\varepsilon`-DP, which meets the spec's :math:`\delta` too (it records :math:`\delta = 0`); the
        calibration does not apply. Its noise source must be honoured
        (:func:`~dpkme.privacy.spec.resolve_noise`): ``"os-entropy"`` needs ``random_state=None``,
        ``"seeded"`` an int ``random_state`` (a replay labelled not private, as with that seed alone), and
        ``"opendp"`` is refused (no OpenDP sampler here).

    Returns
    -------
    Release
        ``mechanism="exponential"``, distinct points with weights count/M,
        ``delta = 0``; or ``(Release, ExponentialDiagnostics)`` with
        ``return_diagnostics=True`` (the diagnostics are private).

    Examples
    --------
    >>> import numpy as np
    >>> from dpkme.kernels import GaussianKernel
    >>> from dpkme.release.exponential import exponential_mechanism, grid_candidates
    >>> X = np.random.default_rng(0).normal(size=(50, 1))                     # the private rows
    >>> rel = exponential_mechanism(X, grid_candidates([-2.0], [2.0], 5), kernel=GaussianKernel(lengthscale=1.0),
    ...                             epsilon=1.0, m=3, random_state=0)            # seeded: a teaching replay
    >>> rel.mechanism, rel.epsilon, rel.delta, rel.params["m"]
    ('exponential', 1.0, 0.0, 3)
    """
    epsilon, _, neighbouring, _ = resolve(privacy, epsilon=epsilon, neighbouring=neighbouring, require_delta=False)
    resolve_noise(privacy, random_state=random_state, opendp=False, function="exponential_mechanism")
    eps = check_epsilon(epsilon)
    scores = database_scores(X, candidates, kernel=kernel, m=m, neighbouring=neighbouring,
                             sensitivity=sensitivity, domain=domain, n_private=n_private,
                             max_databases=max_databases, progress=progress, clip=clip)
    return scores.release(eps, random_state=random_state, return_diagnostics=return_diagnostics)


def exponential_charge(release: Release, label: str | None = None) -> PrivacyCharge:
    """Budget-ledger charge of an exponential-mechanism release (pure ε-DP).

    The release's own :attr:`~dpkme.release.Release.charge` (set where the draw was made; the same id, so a
    ledger counts it once), relabelled when ``label`` is given: a
    :func:`~dpkme.privacy.accounting.pure_dp_charge` with ``mechanism="exponential"`` and the typed
    ``relation``, so :class:`~dpkme.privacy.accounting.BudgetLedger` refuses to mix it with charges under
    another relation. A release without a stored charge (built by hand, or read from a file written before
    releases carried their charge) gets one rebuilt from its recorded ε and relation.

    Parameters
    ----------
    release : Release
        A release with ``mechanism="exponential"`` (:func:`exponential_mechanism`).
    label : str, optional
        The ledger's label; default ``"exponential mechanism (M=..., |G|=...)"``.

    Returns
    -------
    PrivacyCharge
        Pure charge at the release's ε, with the score sensitivity, M, :math:`|G|` and
        the number of databases in ``details``.

    Examples
    --------
    >>> import numpy as np
    >>> from dpkme.kernels import GaussianKernel
    >>> from dpkme.release.exponential import exponential_charge, exponential_mechanism, grid_candidates
    >>> X = np.random.default_rng(0).normal(size=(50, 1))
    >>> rel = exponential_mechanism(X, grid_candidates([-2.0], [2.0], 5), kernel=GaussianKernel(lengthscale=1.0),
    ...                             epsilon=1.0, m=3, random_state=0)
    >>> c = exponential_charge(rel)
    >>> c.label, c.epsilon, c.delta, c.relation.value, c is rel.charge
    ('exponential mechanism (M=3, |G|=5)', 1.0, 0.0, 'replace-one', True)
    """
    if not isinstance(release, Release) or release.mechanism != "exponential":
        raise ValueError(f"expected a Release with mechanism='exponential', got {release!r:.80}.")
    charge = release.charge
    if charge is None:
        p = release.params
        charge = _exponential_charge_of(
            release.epsilon, release.neighbouring,
            label=f"exponential mechanism (M={p.get('m')}, |G|={p.get('n_candidates')})",
            details={"score_sensitivity": release.sensitivity, "n_databases": p.get("n_databases"), "m": p.get("m"),
                     "n_candidates": p.get("n_candidates")})
    return charge if label is None else charge.with_(label=label)
