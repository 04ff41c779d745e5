r"""RKHS distance to the private KME at any scale: exact when feasible, else unbiased with a CI.

The accuracy of a release :math:`\nu = \sum_m w_m k(z_m,\cdot)` is (Balog et al. 2018, Appendix B.1)

.. math::
    \Delta^2 = \|\hat\mu_X - \nu\|_{\mathcal H}^2
    = \overline{K_{XX}} - 2 w^\top \bar k + w^\top K_{ZZ} w,
    \qquad \bar k_m = \frac1N\sum_{n} k(z_m, x_n).

The cross term costs :math:`O(NM)` and :math:`w^\top K_{ZZ} w` costs :math:`O(M^2)`: both stay exact
(blocked; for a Dask array, per-partition sums). Only :math:`\overline{K_{XX}}`, the mean of all
:math:`N^2` kernel values, is :math:`O(N^2)`. Up to :data:`EXACT_MAX_ROWS` rows (or whenever the kernel
has exact spectral sums, :meth:`~dpkme.kernels.Kernel.spectral_sums_available`) it is computed exactly,
as :func:`dpkme.metrics.rkhs_distance` does. Beyond, it is *estimated without bias* by an incomplete
U-statistic: with :math:`a = k(x, x)`,

.. math::
    \overline{K_{XX}} = \frac aN + \frac{N-1}{N}\,U, \qquad
    U = \frac1{N(N-1)}\sum_{i\ne j} k(x_i, x_j),

and :math:`U` is the mean of :math:`P` kernel values at ordered pairs :math:`(i_p, j_p)` drawn
independently and uniformly among the :math:`N(N-1)` pairs with :math:`i \ne j`,
:math:`\hat U = \frac1P\sum_p k(x_{i_p}, x_{j_p})`. Given the data these are i.i.d. draws from the
finite population of off-diagonal kernel values, so :math:`\mathbb E\hat U = U` exactly and
:math:`\operatorname{Var}\hat U = \sigma^2/P` with :math:`\sigma^2` their population variance, estimated
by the sample variance :math:`s^2`. The squared distance estimate

.. math::
    \hat\Delta^2 = \frac aN + \frac{N-1}{N}\hat U - 2 w^\top \bar k + w^\top K_{ZZ} w

is unbiased, with standard error :math:`\mathrm{se} = \frac{N-1}{N}\, s/\sqrt P` and the central-limit
interval :math:`[\hat\Delta^2 - z\,\mathrm{se},\ \hat\Delta^2 + z\,\mathrm{se}]`,
:math:`z = \Phi^{-1}(\tfrac{1 + c}{2})` for confidence :math:`c` (kernel values are bounded, so the
CLT applies; :math:`P` is in the millions by default). The distance and its interval are the images under
the non-decreasing map :math:`t \mapsto \sqrt{\max(t, 0)}` (clipping at 0): since the map is monotone,
the distance interval covers :math:`\Delta` whenever the squared interval covers :math:`\Delta^2`, so its
coverage is at least as large. The distance itself, a square root, is not unbiased (Jensen); the squared
value is.

Everything here reads the private rows: it is the data owner's evaluation, never part of a release.
The pairs are drawn from an explicit ``rng`` (default: fresh OS entropy); nothing is released, so
no privacy budget is involved.
"""

from __future__ import annotations

import math
import threading
from dataclasses import asdict, dataclass
from statistics import NormalDist

import numpy as np

from ._blocked import n_workers, parallel_map
from ._validation import check_array, check_in, check_positive_int, check_random_state, check_weights
from .kernels.kernel import Kernel
from .metrics import rkhs_distance_squared, weighted_mean_gram

__all__ = ["DistanceReport", "MeanGramEstimate", "rkhs_distance_report", "estimate_mean_gram",
           "EXACT_MAX_ROWS", "DEFAULT_N_PAIRS"]

#: Largest N for which ``method="auto"`` computes the mean of :math:`K_{XX}` exactly (all N²/2 pairs).
#: Measured on the 2-core development machine (``benchmarks/bench_evaluation.py``, the paper's D = 5 data,
#: ``benchmarks/results/evaluation.md``): at N = 50 000 the exact mean costs about 2x (Gaussian) to 7x
#: (Laplacian) the estimate with :data:`DEFAULT_N_PAIRS` pairs -- roughly 1 s and 5 s on a quiet machine (the
#: Gaussian takes 4.3 s at N = 100 000, docs/benchmarks.md) -- paid once per data set and kernel when cached, with no
#: sampling error; beyond, it grows as N². A module constant, so that a faster kernel-sum engine can raise it.
EXACT_MAX_ROWS = 50_000
#: Default number of sampled pairs :math:`P` of the estimate (about 16.8 million): standard error at most
#: :math:`\frac a2/\sqrt P \approx 1.2\cdot10^{-4}\,a` on the squared distance, 7.9e-5 on the paper's D = 5 data.
DEFAULT_N_PAIRS = 1 << 24
# Pairs per batch: bounds the memory of a batch to ~2 * _BATCH * D floats (and the rows fetched from a
# Dask array per batch).
_BATCH = 1 << 18
# Largest size of the rows fetched from a Dask array in one pass (2 rows of D float64 per pair).
_DASK_GATHER_BYTES = 1 << 28
# Pairs per kernel call in the generic fallback (the diagonal of a small cross Gram matrix).
_FALLBACK_CHUNK = 64


@dataclass(frozen=True)
class MeanGramEstimate:
    r"""An unbiased estimate of :math:`\overline{K_{XX}}` and its standard error (module docstring).

    Parameters
    ----------
    value : float
        :math:`\frac aN + \frac{N-1}{N}\hat U`.
    std_error : float
        :math:`\frac{N-1}{N}\, s/\sqrt P`.
    n_rows : int
        :math:`N`.
    n_pairs : int
        :math:`P`, the number of sampled pairs.

    Examples
    --------
    >>> MeanGramEstimate(value=0.5, std_error=1e-3, n_rows=10, n_pairs=100).std_error
    0.001
    """

    value: float
    std_error: float
    n_rows: int
    n_pairs: int


@dataclass(frozen=True)
class DistanceReport:
    r"""The RKHS distance to the private KME, and how it was obtained.

    Parameters
    ----------
    distance : float
        :math:`\sqrt{\max(\hat\Delta^2, 0)}`.
    squared : float
        :math:`\hat\Delta^2`: exact (clamped at 0 like :func:`dpkme.metrics.rkhs_distance_squared`), or the
        unbiased estimate, which may be slightly negative when :math:`\Delta` is near 0.
    method : {"exact", "estimate"}
        Whether :math:`\overline{K_{XX}}` was computed exactly or estimated from sampled pairs.
    ci_low : float
        Lower end of the confidence interval of the distance (``distance`` when exact).
    ci_high : float
        Upper end of the confidence interval of the distance (``distance`` when exact).
    n_rows : int
        :math:`N`, the number of private rows.
    n_pairs : int
        :math:`P`, the number of sampled pairs (0 when exact).
    confidence : float
        Nominal coverage of the interval, e.g. 0.95.
    std_error : float, default=0.0
        Standard error of ``squared`` (0 when exact).

    Examples
    --------
    >>> r = DistanceReport(distance=0.1, squared=0.01, method="exact", ci_low=0.1, ci_high=0.1, n_rows=10,
    ...                    n_pairs=0, confidence=0.95)
    >>> r.label
    'exact'
    >>> r.to_dict()["method"]
    'exact'
    """

    distance: float
    squared: float
    method: str
    ci_low: float
    ci_high: float
    n_rows: int
    n_pairs: int
    confidence: float
    std_error: float = 0.0

    @property
    def label(self) -> str:
        """``"exact"`` or ``"estimate ± CI (95 %)"`` (with the report's confidence), for display."""
        if self.method == "exact":
            return "exact"
        return f"estimate ± CI ({100 * self.confidence:g} %)"

    def to_dict(self) -> dict:
        """The fields as a JSON-serialisable dict, plus ``"label"`` and an ``"owner_only"`` note.

        Returns
        -------
        dict
        """
        out = {k: (float(v) if isinstance(v, (float, np.floating)) else v) for k, v in asdict(self).items()}
        out["label"] = self.label
        out["owner_only"] = "computed from the private rows: for the data owner, not part of the release"
        return out


# --------------------------------------------------------------------------- helpers
def _is_dask(X) -> bool:
    return type(X).__module__.split(".")[0] == "dask" and hasattr(X, "map_blocks")


def _check_dask(X, name: str = "X"):
    if X.ndim != 2:
        raise ValueError(f"{name} must be a 2-D Dask array (rows x columns), got {X.ndim} dimension(s).")
    if any(math.isnan(c) for c in X.chunks[0]):
        raise ValueError(f"{name} has unknown chunk sizes; call {name}.compute_chunk_sizes() first.")
    if X.shape[0] < 1 or X.shape[1] < 1:
        raise ValueError(f"{name} must have at least one row and one column, got shape {X.shape}.")
    if X.dtype.kind not in "iuf":
        raise ValueError(f"{name} must hold real numbers, got dtype {X.dtype}.")
    return X.rechunk({1: -1}).astype(np.float64)


def _paired_values(kernel: Kernel, A: np.ndarray, B: np.ndarray, diff: np.ndarray | None = None) -> np.ndarray:
    """:math:`k(a_p, b_p)` for every row ``p`` (not the cross matrix); ``diff`` may hold ``A - B`` already."""
    from .kernels.additive import AdditiveKernel

    diff = A - B if diff is None else diff
    if isinstance(kernel, AdditiveKernel):
        sq = diff * diff
        out = np.zeros(A.shape[0])
        with np.errstate(over="ignore"):
            for w, block, c in zip(kernel.weights, kernel.blocks, kernel.scales):
                out += w * np.exp(-0.5 * c * c * sq[:, list(block)].sum(axis=1))
        return kernel.amplitude * out
    if type(kernel).value_at_distance is Kernel.value_at_distance and kernel.metric in (
            "sqeuclidean", "euclidean", "cityblock"):
        with np.errstate(over="ignore"):
            r = np.abs(diff).sum(axis=1) if kernel.metric == "cityblock" else np.sqrt(np.einsum("ij,ij->i", diff, diff))
        return kernel.value_at_distance(r)
    out = np.empty(A.shape[0])              # any other kernel: the diagonal of small cross Gram matrices
    for i in range(0, A.shape[0], _FALLBACK_CHUNK):
        out[i:i + _FALLBACK_CHUNK] = np.diagonal(kernel(A[i:i + _FALLBACK_CHUNK], B[i:i + _FALLBACK_CHUNK]))
    return out


_BUFFERS = threading.local()


def _batch_stats(kernel: Kernel, src: np.ndarray, i: np.ndarray, j: np.ndarray) -> tuple[int, float, float]:
    """(count, mean, sum of squared deviations) of :math:`k(x_i, x_j)` over one batch of pairs (thread-safe)."""
    b, d = i.size, src.shape[1]
    bufs = getattr(_BUFFERS, "arrays", None)
    if bufs is None or bufs[0].shape[0] < b or bufs[0].shape[1] != d:
        bufs = _BUFFERS.arrays = [np.empty((max(b, _BATCH), d)) for _ in range(3)]   # reused: no page faults
    A, B, diff = (buf[:b] for buf in bufs)
    np.take(src, i, axis=0, out=A)
    np.take(src, j, axis=0, out=B)
    v = _paired_values(kernel, A, B, np.subtract(A, B, out=diff))
    bm = float(v.mean())
    return b, bm, float(((v - bm) ** 2).sum())


def _gather(X, idx: np.ndarray) -> np.ndarray:
    """Rows ``X[idx]`` of a numpy or (fetching each distinct row once) a Dask array."""
    if not _is_dask(X):
        return X[idx]
    uniq, inv = np.unique(idx, return_inverse=True)
    rows = np.asarray(X[uniq].compute(), dtype=np.float64)
    if not np.isfinite(rows).all():
        raise ValueError("X contains NaN or infinite values; clean or drop those rows before evaluating.")
    return rows[inv]


def _z_value(confidence) -> float:
    try:
        c = float(confidence)
    except (TypeError, ValueError):
        raise ValueError(f"confidence must be a number in (0, 1), e.g. 0.95, got {confidence!r:.80}.") from None
    if not 0.0 < c < 1.0:
        raise ValueError(f"confidence must lie strictly between 0 and 1 (e.g. 0.95), got {confidence!r}.")
    return NormalDist().inv_cdf(0.5 + 0.5 * c)


# --------------------------------------------------------------------------- the estimate of mean(K_XX)
def estimate_mean_gram(X, *, kernel: Kernel, n_pairs: int = DEFAULT_N_PAIRS, rng=None) -> MeanGramEstimate:
    r"""Unbiased estimate of :math:`\overline{K_{XX}} = \frac1{N^2}\sum_{i,j} k(x_i, x_j)` from sampled pairs.

    :math:`\frac aN + \frac{N-1}{N}\hat U`, with :math:`\hat U` the mean of the kernel values at ``n_pairs``
    ordered pairs :math:`i \ne j` drawn independently and uniformly (module docstring); cost
    :math:`O(PD)`, memory bounded by batches of :math:`2^{18}` pairs. Evaluation only: it reads the
    private rows.

    Parameters
    ----------
    X : array (N, D) or dask.array.Array
        Private data, :math:`N \ge 2` rows. Of a Dask array only the sampled rows are fetched, in passes of at
        most 256 MiB.
    kernel : Kernel
        Kernel of the RKHS (any :class:`~dpkme.kernels.Kernel`, including the additive kernel of tables).
    n_pairs : int, default=DEFAULT_N_PAIRS
        :math:`P \ge 2`, the number of sampled pairs.
    rng : None, int or numpy.random.Generator, optional
        Source of the pairs; ``None`` draws fresh OS entropy.

    Returns
    -------
    MeanGramEstimate
        The estimate and its standard error :math:`\frac{N-1}{N}\,s/\sqrt P`.

    Raises
    ------
    ValueError
        If ``X`` has fewer than 2 rows or invalid values, or ``n_pairs < 2``.

    Examples
    --------
    >>> import numpy as np
    >>> from dpkme.kernels import GaussianKernel
    >>> k = GaussianKernel(lengthscale=1.0)
    >>> X = np.random.default_rng(0).normal(size=(500, 3))
    >>> est = estimate_mean_gram(X, kernel=k, n_pairs=200_000, rng=1)
    >>> bool(abs(est.value - k.mean_gram(X)) < 5 * est.std_error)
    True
    """
    n_pairs = check_positive_int(n_pairs, name="n_pairs", minimum=2)
    rng = check_random_state(rng)[0]
    X = _check_dask(X) if _is_dask(X) else check_array(X, name="X")
    n = int(X.shape[0])
    if n < 2:
        raise ValueError(f"estimating the mean of K_XX needs at least 2 rows, got {n}; with one row it is "
                         "k(x, x) exactly (use kernel.mean_gram).")
    sizes = [min(_BATCH, n_pairs - s) for s in range(0, n_pairs, _BATCH)]
    # The pairs are drawn in the calling thread, batch by batch, and the batches' statistics combined in order:
    # the result depends on the rng only (not on the threads, nor on numpy vs Dask input). A Dask array is read
    # once per group of batches (their rows fetched in one pass, within _DASK_GATHER_BYTES).
    dask_input = _is_dask(X)
    per_group = (max(1, _DASK_GATHER_BYTES // (16 * _BATCH * X.shape[1])) if dask_input
                 else 4 * n_workers())
    count, mean, m2 = 0, 0.0, 0.0                 # Chan et al.'s pairwise update: no cancellation
    for g in range(0, len(sizes), per_group):
        pairs = []
        for b in sizes[g:g + per_group]:
            i = rng.integers(0, n, size=b)
            j = rng.integers(0, n - 1, size=b)
            j += j >= i                           # uniform over the pairs with j != i
            pairs.append((i, j))
        src = X
        if dask_input:
            src, offset, local = _gather(X, np.concatenate([np.concatenate(p) for p in pairs])), 0, []
            for i, _ in pairs:
                b = i.size
                local.append((np.arange(offset, offset + b), np.arange(offset + b, offset + 2 * b)))
                offset += 2 * b
            pairs = local
        for b, bm, bm2 in parallel_map(lambda p, src=src: _batch_stats(kernel, src, *p), pairs):
            delta = bm - mean
            tot = count + b
            mean += delta * b / tot
            m2 += bm2 + delta * delta * count * b / tot
            count = tot
    s2 = m2 / (count - 1)
    frac = (n - 1) / n
    return MeanGramEstimate(value=kernel.diag_value / n + frac * mean, std_error=frac * math.sqrt(s2 / count),
                            n_rows=n, n_pairs=count)


# --------------------------------------------------------------------------- the report
def _cross_term_dask(X, points: np.ndarray, weights: np.ndarray, kernel: Kernel) -> float:
    r""":math:`w^\top\bar k` from per-partition sums :math:`\sum_{n \in B} k(z_m, x_n)` (one pass over ``X``)."""
    m = points.shape[0]

    def part(block):
        if block.shape[0] == 0:
            return np.zeros((1, m))
        return (kernel.row_means(points, block) * block.shape[0])[None, :]

    sums = X.map_blocks(part, chunks=((1,) * X.numblocks[0], (m,)), dtype=np.float64).sum(axis=0)
    return float(weights @ np.asarray(sums.compute())) / X.shape[0]


def rkhs_distance_report(X, points, weights, *, kernel: Kernel, method: str = "auto",
                         exact_max_rows: int = EXACT_MAX_ROWS, n_pairs: int = DEFAULT_N_PAIRS,
                         confidence: float = 0.95, rng=None,
                         mean_kxx: float | MeanGramEstimate | None = None,
                         row_means: np.ndarray | None = None) -> DistanceReport:
    r"""RKHS distance between the private KME and a weighted point set: exact, or unbiased with a CI.

    Computes :math:`\Delta = \|\frac1N\sum_n k(x_n,\cdot) - \sum_m w_m k(z_m,\cdot)\|_{\mathcal H}` with the
    cross term and :math:`w^\top K_{ZZ}w` exact, and :math:`\overline{K_{XX}}` exact (``"exact"``, the value
    of :func:`dpkme.metrics.rkhs_distance`) or estimated from ``n_pairs`` random pairs (``"estimate"``):
    :math:`\hat\Delta^2` is then unbiased, with the interval
    :math:`\hat\Delta^2 \pm z\,\mathrm{se}` mapped to the distance through
    :math:`t \mapsto \sqrt{\max(t, 0)}` (clipped at 0; monotone, so the coverage is at least kept). See the module
    docstring for the derivation. Evaluation only: it reads the private rows.

    Parameters
    ----------
    X : array (N, D) or dask.array.Array
        Private data. A Dask array (when dask is installed) is read in one pass for the cross term
        (per-partition sums) plus the sampled rows; it is loaded into memory only for an exact
        :math:`\overline{K_{XX}}`.
    points : array (M, D)
        The synthetic points :math:`z_m`, with the columns of ``X``.
    weights : array (M,)
        Their weights :math:`w_m` (any real values).
    kernel : Kernel
        The exact kernel.
    method : {"auto", "exact", "estimate"}, default="auto"
        ``"auto"``: exact when :math:`N \le` ``exact_max_rows``, or when ``X`` is a numpy array and the
        kernel has exact spectral sums for it (Gaussian, D <= 2); otherwise the estimate. A single row is
        always exact.
    exact_max_rows : int, default=EXACT_MAX_ROWS
        Threshold of ``"auto"`` (:data:`EXACT_MAX_ROWS`, measured on this project's machine).
    n_pairs : int, default=DEFAULT_N_PAIRS
        :math:`P \ge 2`, the number of sampled pairs of the estimate.
    confidence : float, default=0.95
        Nominal coverage of the interval, in (0, 1).
    rng : None, int or numpy.random.Generator, optional
        Source of the pairs; ``None`` (default) draws fresh OS entropy.
    mean_kxx : float or MeanGramEstimate, optional
        A precomputed :math:`\overline{K_{XX}}` for these rows and this kernel: a float is taken as exact
        (:meth:`~dpkme.kernels.Kernel.mean_gram`), a :class:`MeanGramEstimate`
        (:func:`estimate_mean_gram`) as an estimate; ``method`` and ``exact_max_rows`` are then ignored.
    row_means : array (M,), optional
        Precomputed :math:`\bar k_m = \frac1N\sum_n k(z_m, x_n)` (:meth:`~dpkme.kernels.Kernel.row_means`)
        for these points, to reuse a cached cross term.

    Returns
    -------
    DistanceReport
        ``distance``, ``squared``, ``method``, the interval ``ci_low``/``ci_high`` (both ``distance`` when
        exact), ``n_rows``, ``n_pairs``, ``confidence``, ``std_error``; ``to_dict()`` for JSON.

    Raises
    ------
    ValueError
        On invalid arrays, weights, ``method``, ``exact_max_rows``, ``n_pairs`` or ``confidence``.

    Examples
    --------
    >>> import numpy as np
    >>> from dpkme.kernels import GaussianKernel
    >>> from dpkme.metrics import rkhs_distance
    >>> k = GaussianKernel(lengthscale=1.0)
    >>> rng = np.random.default_rng(0)
    >>> X, Z = rng.normal(size=(2000, 3)), rng.normal(size=(20, 3))
    >>> w = np.full(20, 1 / 20)
    >>> exact = rkhs_distance_report(X, Z, w, kernel=k)
    >>> exact.method, exact.distance == rkhs_distance(X, Z, w, kernel=k)
    ('exact', True)
    >>> est = rkhs_distance_report(X, Z, w, kernel=k, exact_max_rows=1000, n_pairs=100_000, rng=1)
    >>> est.method, est.label, bool(est.ci_low <= est.distance <= est.ci_high)
    ('estimate', 'estimate ± CI (95 %)', True)
    """
    check_in(method, ("auto", "exact", "estimate"), name="method")
    exact_max_rows = check_positive_int(exact_max_rows, name="exact_max_rows", minimum=0)
    n_pairs = check_positive_int(n_pairs, name="n_pairs", minimum=2)
    z = _z_value(confidence)
    rng = check_random_state(rng)[0]
    dask_input = _is_dask(X)
    X = _check_dask(X) if dask_input else check_array(X, name="X")
    n = int(X.shape[0])
    points = check_array(points, name="points", n_features=X.shape[1])
    weights = check_weights(weights, n=points.shape[0])
    if row_means is not None:
        row_means = check_array(row_means, name="row_means", ndim=1)
        if row_means.shape[0] != points.shape[0]:
            raise ValueError(f"row_means has {row_means.shape[0]} entries but there are {points.shape[0]} points; "
                             "pass kernel.row_means(points, X).")
    if mean_kxx is not None and not isinstance(mean_kxx, MeanGramEstimate):
        try:
            mean_kxx = float(mean_kxx)
        except (TypeError, ValueError):
            raise ValueError(f"mean_kxx must be a float (exact) or a MeanGramEstimate, got {mean_kxx!r:.80}.") \
                from None
    if isinstance(mean_kxx, MeanGramEstimate) and mean_kxx.n_rows != n:
        raise ValueError(f"mean_kxx was estimated on {mean_kxx.n_rows} rows but X has {n}; estimate it on X.")

    if mean_kxx is None:
        if n < 2 or method == "exact":
            exact = True
        elif method == "estimate":
            exact = False
        else:
            exact = n <= exact_max_rows or (not dask_input and kernel.spectral_sums_available(X))
    else:
        exact = not isinstance(mean_kxx, MeanGramEstimate)

    if exact:
        if dask_input:
            X = np.asarray(X.compute())
        sq = rkhs_distance_squared(X, points, weights, kernel=kernel, mean_kxx=mean_kxx, row_means=row_means)
        d = math.sqrt(sq)
        return DistanceReport(distance=d, squared=sq, method="exact", ci_low=d, ci_high=d, n_rows=n, n_pairs=0,
                              confidence=float(confidence))

    if row_means is not None:
        cross = float(weights @ row_means)
    elif dask_input:                              # first: it validates every block of X
        cross = _cross_term_dask(X, points, weights, kernel)
    else:
        cross = float(weights @ kernel.row_means(points, X))
    est = mean_kxx if mean_kxx is not None else estimate_mean_gram(X, kernel=kernel, n_pairs=n_pairs, rng=rng)
    sq = est.value - 2.0 * cross + weighted_mean_gram(points, weights, kernel)
    half = z * est.std_error
    root = lambda t: math.sqrt(max(t, 0.0))  # noqa: E731 - the clipping map of the docstring
    return DistanceReport(distance=root(sq), squared=sq, method="estimate", ci_low=root(sq - half),
                          ci_high=root(sq + half), n_rows=n, n_pairs=est.n_pairs, confidence=float(confidence),
                          std_error=est.std_error)
