r"""Evaluation of private clusterings and cluster-wise releases (reads the private data: never released).

Everything here compares outputs with the private rows (their labels, their
non-private clustering, their exact kernel mean embedding). The numbers are
for the data owner, for teaching and for benchmarks; **they are not
differentially private** and must not be published as if they were.

Metrics
-------
* adjusted Rand index (Hubert & Arabie 1985) between two labelings, from the
  contingency table :math:`n_{ij}`:
  :math:`\mathrm{ARI} = \frac{\sum_{ij}\binom{n_{ij}}2 - E}{\frac12(\sum_i\binom{a_i}2 + \sum_j\binom{b_j}2) - E}`,
  :math:`E = \sum_i\binom{a_i}2\sum_j\binom{b_j}2/\binom n2`; 1 for identical
  partitions, about 0 for independent ones;
* purity: :math:`\frac1n\sum_i\max_j n_{ij}` (fraction of rows whose cluster's
  majority label is their own);
* within-cluster objective: :math:`\frac1N\sum_i\sum_{x\in D_i}\|z(x) - m_i\|^2`
  with :math:`m_i` the exact mean of cluster :math:`i` (the quality of the
  *partition* induced by the centres), computed in one pass as
  :math:`\frac1N(\sum_x\|z(x)\|^2 - \sum_i\|S_i\|^2/n_i)`.
"""

from __future__ import annotations

import math
import time
from collections.abc import Callable
from dataclasses import dataclass, field

import numpy as np

from .._validation import check_array, check_delta, check_positive_int
from ..kernels.random_features import RandomFourierFeatures
from ..reduced_set._common import Progress
from ._features import FeatureBlocks, lloyd_pass
from .kmeans import DPKMeansResult, _check_bounds, dp_kernel_kmeans, initial_points, kernel_kmeans

__all__ = [
    "adjusted_rand_index",
    "cluster_purity",
    "contingency_table",
    "partition_objective",
    "evaluate_clustering",
    "AccuracyCurve",
    "accuracy_curve",
    "compare_with_single_release",
]


def _labels(a, name):
    arr = np.asarray(a)
    if arr.ndim != 1:
        raise ValueError(f"{name} must be a 1-D label vector, got shape {arr.shape}.")
    if arr.dtype.kind not in "iub":
        raise ValueError(f"{name} must hold integer labels, got dtype {arr.dtype}.")
    return arr.astype(np.int64)


def contingency_table(a, b) -> np.ndarray:
    """Counts :math:`n_{ij}` of rows with label i in ``a`` and j in ``b`` (labels re-indexed).

    Parameters
    ----------
    a, b : array (n,) of int
        Two labelings of the same n rows; any integer values (the distinct
        values of each are mapped to ``0, 1, ...`` in increasing order).

    Returns
    -------
    ndarray (p, q) of int64
        :math:`n_{ij}`, with p and q the numbers of distinct labels in ``a`` and ``b``.

    Raises
    ------
    ValueError
        If a labeling is not a 1-D integer vector, or their lengths differ.

    Examples
    --------
    >>> contingency_table([0, 0, 1, 1], [1, 1, 0, 2])
    array([[0, 2, 0],
           [1, 0, 1]])
    """
    a, b = _labels(a, "a"), _labels(b, "b")
    if a.shape != b.shape:
        raise ValueError(f"label vectors differ in length: {a.shape[0]} and {b.shape[0]}.")
    _, ai = np.unique(a, return_inverse=True)
    _, bi = np.unique(b, return_inverse=True)
    table = np.zeros((ai.max(initial=-1) + 1, bi.max(initial=-1) + 1), dtype=np.int64)
    np.add.at(table, (ai, bi), 1)
    return table


def _comb2(x):
    x = np.asarray(x, dtype=np.float64)
    return x * (x - 1.0) / 2.0


def adjusted_rand_index(a, b) -> float:
    r"""Adjusted Rand index of two labelings (1: identical partitions; ~0: independent).

    Hubert & Arabie (1985), from the contingency table :math:`n_{ij}` with
    marginals :math:`a_i, b_j`:
    :math:`\mathrm{ARI} = (\sum_{ij}\binom{n_{ij}}2 - E)/(\frac12(\sum_i\binom{a_i}2 + \sum_j\binom{b_j}2) - E)`,
    :math:`E = \sum_i\binom{a_i}2\sum_j\binom{b_j}2/\binom n2`. Invariant to
    renaming the labels; 1 when both partitions are trivial or n < 2.

    Parameters
    ----------
    a, b : array (n,) of int
        Two labelings of the same n rows.

    Returns
    -------
    float
        The index, at most 1 (negative values: less agreement than chance).

    Examples
    --------
    >>> adjusted_rand_index([0, 0, 1, 1], [1, 1, 0, 0])
    1.0
    >>> round(adjusted_rand_index([0, 0, 1, 1, 2, 2], [0, 0, 1, 1, 1, 1]), 4)
    0.4444
    """
    t = contingency_table(a, b)
    n = t.sum()
    if n < 2:
        return 1.0
    sum_ij = _comb2(t).sum()
    sa, sb = _comb2(t.sum(axis=1)).sum(), _comb2(t.sum(axis=0)).sum()
    expected = sa * sb / _comb2(n)
    max_index = 0.5 * (sa + sb)
    if max_index == expected:  # both partitions trivial (one cluster, or all singletons)
        return 1.0
    return float((sum_ij - expected) / (max_index - expected))


def cluster_purity(pred, truth) -> float:
    r"""Fraction of rows whose predicted cluster's majority true label is their own.

    :math:`\frac1n\sum_i\max_j n_{ij}` with :math:`n_{ij}` the
    :func:`contingency_table` of ``pred`` and ``truth``. Not symmetric: many
    small clusters have high purity, so read it next to the ARI.

    Parameters
    ----------
    pred : array (n,) of int
        Predicted cluster of every row.
    truth : array (n,) of int
        True class of every row.

    Returns
    -------
    float
        Purity in :math:`(0, 1]`.

    Examples
    --------
    >>> cluster_purity([0, 0, 1, 1], [0, 1, 1, 1])
    0.75
    """
    t = contingency_table(pred, truth)
    return float(t.max(axis=1).sum() / max(1, t.sum()))


def partition_objective(features, X, centres, *, norm_bound: float | None = None) -> float:
    r"""Mean within-cluster squared distance in feature space of the partition induced by ``centres``.

    Rows are assigned to their nearest centre, then
    :math:`\frac1N\sum_i\sum_{x\in D_i}\|z(x) - m_i\|^2` is computed with
    :math:`m_i` the **exact** mean of cluster :math:`i` (module docstring), so
    it measures the partition, not the centres' noise. Reads the private rows:
    evaluation only, not DP.

    Parameters
    ----------
    features : RandomFourierFeatures or object with ``transform``
        The fitted feature map :math:`z` of the clustering.
    X : array (N, D)
        Rows to evaluate on.
    centres : array (k, J)
        Centres in feature space (e.g. ``result.centres``).
    norm_bound : float, optional
        Clipping bound for a map other than
        :class:`~dpkme.kernels.random_features.RandomFourierFeatures` (as in the
        clustering run: ``result.norm_bound``); ignored for those.

    Returns
    -------
    float
        The objective, :math:`\ge 0`, in squared feature units.

    Examples
    --------
    >>> from dpkme.kernels import GaussianKernel
    >>> from dpkme.kernels.random_features import RandomFourierFeatures
    >>> f = RandomFourierFeatures(GaussianKernel(lengthscale=1.0), n_components=50, random_state=0).fit(2)
    >>> X = np.zeros((4, 2))    # one point, repeated: no spread
    >>> partition_objective(f, X, f.transform(X[:1]))
    0.0
    """
    fb = FeatureBlocks(features, clip=None if isinstance(features, RandomFourierFeatures) else norm_bound)
    X = check_array(X, name="X", n_features=fb.dim)
    st = lloyd_pass(fb, X, np.asarray(centres, dtype=np.float64), sq_norms=True)
    nz = st["counts"] > 0
    between = float(np.sum(np.einsum("ij,ij->i", st["sums"][nz], st["sums"][nz]) / st["counts"][nz]))
    return max(st["sq_norm_total"] - between, 0.0) / X.shape[0]


def evaluate_clustering(result: DPKMeansResult, X, *, labels=None, reference: DPKMeansResult | None = None) -> dict:
    """Quality of a (DP) clustering on the private rows: objective, and ARI/purity if ``labels`` given.

    ``reference`` (e.g. :func:`~dpkme.clustering.kernel_kmeans` on the same
    features) adds ``ari_vs_reference`` and ``objective_ratio``. Reads the
    private rows: the numbers are not DP and must not be published as a release.

    Parameters
    ----------
    result : DPKMeansResult
        The clustering to evaluate (its released centres assign the rows).
    X : array (N, D)
        Rows to evaluate on (usually the private data).
    labels : array (N,) of int, optional
        True classes, for ``ari`` and ``purity``.
    reference : DPKMeansResult, optional
        A clustering to compare with, usually the non-private one.

    Returns
    -------
    dict
        ``objective`` (:func:`partition_objective`), ``n_nonempty`` (clusters
        with at least one row); with ``labels``: ``ari``, ``purity``; with
        ``reference``: ``ari_vs_reference`` and ``objective_ratio`` (objective
        / the reference's, ``inf`` if that is 0).

    Examples
    --------
    >>> from dpkme.clustering import kernel_kmeans
    >>> from dpkme.kernels import GaussianKernel
    >>> rng = np.random.default_rng(0)
    >>> X = np.concatenate([rng.normal(-2, 0.3, (50, 2)), rng.normal(2, 0.3, (50, 2))])
    >>> ref = kernel_kmeans(X, k=2, kernel=GaussianKernel(lengthscale=1.0), n_features=50,
    ...                     init=np.array([[-1.0, -1.0], [1.0, 1.0]]), preimages="none", random_state=0)
    >>> scores = evaluate_clustering(ref, X, labels=np.repeat([0, 1], 50))
    >>> scores["ari"], scores["purity"], scores["n_nonempty"]
    (1.0, 1.0, 2)
    """
    X = check_array(X, name="X")
    pred = result.assign(X)
    out = {"objective": partition_objective(result.features, X, result.centres, norm_bound=result.norm_bound),
           "n_nonempty": int(np.unique(pred).size)}
    if labels is not None:
        lab = _labels(labels, "labels")
        if lab.shape[0] != X.shape[0]:
            raise ValueError(f"labels has {lab.shape[0]} entries for {X.shape[0]} rows.")
        out["ari"] = adjusted_rand_index(pred, lab)
        out["purity"] = cluster_purity(pred, lab)
    if reference is not None:
        ref = reference.assign(X)
        out["ari_vs_reference"] = adjusted_rand_index(pred, ref)
        ref_obj = partition_objective(reference.features, X, reference.centres, norm_bound=reference.norm_bound)
        out["objective_ratio"] = out["objective"] / ref_obj if ref_obj > 0 else math.inf
    return out


# --------------------------------------------------------------------------- accuracy vs epsilon
@dataclass
class AccuracyCurve:
    r"""Clustering quality against :math:`\varepsilon`, with repetitions (evaluation on private data).

    Built by :func:`accuracy_curve`; not DP (the scores read the private rows).

    Parameters
    ----------
    epsilons : ndarray (E,)
        The :math:`\varepsilon` values, in the order given.
    delta : float
        The :math:`\delta` of every run.
    metrics : dict of name -> ndarray (E, R)
        Per :math:`\varepsilon` and repetition: ``objective``,
        ``objective_ratio`` (to the non-private run from the same
        initialisation), ``ari_vs_nonprivate``, and with labels ``ari``,
        ``purity``.
    nonprivate : dict of name -> ndarray (R,)
        The non-private kernel k-means per repetition (same initialisation).
    baseline : dict of name -> ndarray (R,)
        The data-independent initial centres alone ("random" centres).
    params : dict, optional
        Run settings (``k``, ``n_iter``, ``repetitions``, ``neighbouring``,
        ``n_features``, ``accountant``, ``note``).
    seconds : float, default=0.0
        Wall-clock time of the whole curve.
    """

    epsilons: np.ndarray
    delta: float
    metrics: dict
    nonprivate: dict
    baseline: dict
    params: dict = field(default_factory=dict)
    seconds: float = 0.0

    def summary(self, metric: str) -> dict:
        """Median and quartiles over repetitions for each epsilon, plus the two references' medians."""
        if metric not in self.metrics:
            raise ValueError(f"unknown metric {metric!r}; available: {sorted(self.metrics)}.")
        v = self.metrics[metric]
        out = {"epsilon": self.epsilons.tolist(), "median": np.median(v, axis=1).tolist(),
               "q25": np.quantile(v, 0.25, axis=1).tolist(), "q75": np.quantile(v, 0.75, axis=1).tolist()}
        for name, ref in (("nonprivate", self.nonprivate), ("baseline", self.baseline)):
            if metric in ref:
                out[name] = float(np.median(ref[metric]))
        return out

    def to_records(self) -> list[dict]:
        """Long format rows ``{epsilon, repetition, metric, value}`` (for plotting libraries)."""
        rows = []
        for name, v in self.metrics.items():
            for i, eps in enumerate(self.epsilons):
                for r in range(v.shape[1]):
                    rows.append({"epsilon": float(eps), "repetition": r, "metric": name, "value": float(v[i, r])})
        return rows


def accuracy_curve(
    X,
    *,
    k: int,
    epsilons,
    delta: float,
    labels=None,
    repetitions: int = 5,
    n_iter: int = 10,
    kernel=None,
    features=None,
    n_features: int = 1000,
    neighbouring: str = "replace-one",
    count_share: float | None = None,
    accountant: str = "pld",
    init: str = "box",
    public_data=None,
    bounds=None,
    q_loc=0.0,
    q_scale: float = 1.0,
    random_state=0,
    progress: Callable[[float, str], object] | None = None,
) -> AccuracyCurve:
    r"""Accuracy of DP kernel k-means for several :math:`\varepsilon`, repeated, with progress.

    The feature map is drawn once; repetition :math:`r` uses the same public
    initialisation for every :math:`\varepsilon` (common random numbers, so
    the curve's shape is not blurred by the initialisation) and fresh noise per
    run. For every repetition the non-private kernel k-means from the same
    initialisation and the initial centres alone are evaluated as references.

    **Evaluation on private data**: the returned numbers are not DP (see the
    module docstring); the runs use seeded noise and are not releases.

    ``progress(fraction, message)`` is called after every run; raising from it
    cancels.

    Parameters
    ----------
    X : array (N, D)
        Private rows.
    k : int
        Number of clusters.
    epsilons : array_like of float
        Total :math:`\varepsilon` of each DP run (finite, > 0).
    delta : float
        :math:`\delta` of every DP run.
    labels : array (N,) of int, optional
        True classes; adds the ``ari`` and ``purity`` metrics.
    repetitions : int, default=5
        :math:`R`, the number of initialisations (each with fresh noise per :math:`\varepsilon`).
    n_iter : int, default=10
        :math:`T`, Lloyd iterations of every run.
    kernel : Kernel, optional
        Kernel for which random Fourier features (``n_features``) are drawn once.
    features : RandomFourierFeatures, optional
        Instead of ``kernel``: fitted features shared by all runs.
    n_features : int, default=1000
        :math:`J` when ``kernel`` is given.
    neighbouring : {"replace-one", "add-remove"}, default="replace-one"
        Neighbouring relation of the DP runs.
    count_share : float in (0, 1), optional
        Share of each step's budget on the sizes (see :func:`~dpkme.clustering.dp_kernel_kmeans`).
    accountant : {"pld", "rdp"}, default="pld"
        Accountant used to calibrate each run.
    init : {"box", "gaussian", "public"}, default="box"
        Public initialisation method (:func:`~dpkme.clustering.initial_points`).
    public_data, bounds, q_loc, q_scale
        Inputs of the initialisation.
    random_state : int or None, default=0
        An int seeds the features, the initialisations and the noise (the runs
        are replayable: fine for an evaluation, not a release); anything else
        uses fresh OS entropy.
    progress : callable, optional
        ``progress(fraction, message)``.

    Returns
    -------
    AccuracyCurve

    Examples
    --------
    >>> from dpkme.kernels import GaussianKernel
    >>> rng = np.random.default_rng(0)
    >>> X = np.concatenate([rng.normal(-2, 0.3, (100, 2)), rng.normal(2, 0.3, (100, 2))])
    >>> curve = accuracy_curve(X, k=2, epsilons=[1.0, 4.0], delta=1e-6, labels=np.repeat([0, 1], 100),
    ...                        repetitions=2, n_iter=3, kernel=GaussianKernel(lengthscale=1.0),
    ...                        n_features=50, bounds=([-3, -3], [3, 3]))
    >>> curve.metrics["ari"].shape, sorted(curve.summary("ari"))
    ((2, 2), ['baseline', 'epsilon', 'median', 'nonprivate', 'q25', 'q75'])
    """
    t0 = time.perf_counter()
    eps = np.asarray(epsilons, dtype=np.float64).reshape(-1)
    if eps.size == 0 or not np.all(np.isfinite(eps)) or np.any(eps <= 0):
        raise ValueError(f"epsilons must be a non-empty list of finite numbers > 0, got {epsilons!r}.")
    delta = check_delta(delta)
    R = check_positive_int(repetitions, name="repetitions")
    k = check_positive_int(k, name="k")
    X = check_array(X, name="X")
    if labels is not None:
        labels = _labels(labels, "labels")
        if labels.shape[0] != X.shape[0]:
            raise ValueError(f"labels has {labels.shape[0]} entries for {X.shape[0]} rows.")
    ss = np.random.SeedSequence(random_state if isinstance(random_state, (int, np.integer)) else None)
    s_feat, s_init, s_noise = ss.spawn(3)
    if features is None:
        if kernel is None:
            raise ValueError("give a kernel or fitted features.")
        features = RandomFourierFeatures(kernel, n_components=n_features,
                                         random_state=np.random.default_rng(s_feat)).fit(X.shape[1])
    fb = FeatureBlocks(features)
    reporter = Progress(progress)
    total = R * (eps.size + 1)
    done = 0
    names = ["objective", "objective_ratio", "ari_vs_nonprivate"] + (["ari", "purity"] if labels is not None else [])
    metrics = {m: np.zeros((eps.size, R)) for m in names}
    nonpriv = {m: np.zeros(R) for m in names}
    base = {m: np.zeros(R) for m in names}
    init_rngs = [np.random.default_rng(s) for s in s_init.spawn(R)]
    noise_seeds = s_noise.spawn(R * eps.size)
    common = dict(k=k, features=features, preimages="none", local_view=True)

    def score(res_labels, centres, ref_labels, ref_obj):
        obj = partition_objective(features, X, centres)
        out = {"objective": obj, "objective_ratio": obj / ref_obj if ref_obj > 0 else math.inf,
               "ari_vs_nonprivate": adjusted_rand_index(res_labels, ref_labels)}
        if labels is not None:
            out["ari"] = adjusted_rand_index(res_labels, labels)
            out["purity"] = cluster_purity(res_labels, labels)
        return out

    reporter(0.0, "starting", force=True)
    for r in range(R):
        pts, _ = initial_points(k, X.shape[1], init=init, public_data=public_data, bounds=bounds, q_loc=q_loc,
                                q_scale=q_scale, features=fb, rng=init_rngs[r])
        ref = kernel_kmeans(X, n_iter=n_iter, init=pts, **common)
        ref_obj = partition_objective(features, X, ref.centres)
        for m, v in score(ref.local_view.labels, ref.centres, ref.local_view.labels, ref_obj).items():
            nonpriv[m][r] = v
        init_lab = lloyd_pass(fb, X, fb.transform(pts), sums=False, labels=True)["labels"]
        for m, v in score(init_lab, fb.transform(pts), ref.local_view.labels, ref_obj).items():
            base[m][r] = v
        done += 1
        reporter(done / total, f"repetition {r + 1}/{R}: non-private reference", force=True)
        for i, e in enumerate(eps):
            res = dp_kernel_kmeans(X, epsilon=float(e), delta=delta, n_iter=n_iter, init=pts,
                                   neighbouring=neighbouring, count_share=count_share, accountant=accountant,
                                   random_state=np.random.default_rng(noise_seeds[r * eps.size + i]), **common)
            for m, v in score(res.local_view.labels, res.centres, ref.local_view.labels, ref_obj).items():
                metrics[m][i, r] = v
            done += 1
            reporter(done / total, f"repetition {r + 1}/{R}: epsilon = {e:g}")
    reporter.finish("accuracy curve ready")
    return AccuracyCurve(eps, delta, metrics, nonpriv, base,
                         params={"k": k, "n_iter": n_iter, "repetitions": R, "neighbouring": neighbouring,
                                 "n_features": fb.n_components, "accountant": accountant,
                                 "note": "evaluated on the private data: not a DP release"},
                         seconds=time.perf_counter() - t0)


# --------------------------------------------------------------------------- cluster-wise vs single release
def compare_with_single_release(
    X,
    *,
    kernel,
    epsilon: float,
    delta: float,
    k: int,
    n_points: int,
    labels=None,
    n_iter: int = 10,
    n_features: int = 1000,
    release_share: float = 0.5,
    neighbouring: str = "replace-one",
    solver: str = "pursuit-joint",
    solver_options: dict | None = None,
    init: str = "box",
    public_data=None,
    bounds=None,
    q_loc=0.0,
    q_scale: float = 1.0,
    n_candidates: int = 2000,
    random_state=0,
    mean_kxx: float | None = None,
    progress: Callable[[float, str], object] | None = None,
) -> dict:
    r"""Cluster-wise release vs one Algorithm-2 release at the same total :math:`(\varepsilon,\delta)`.

    Both use the same kernel, :math:`J`, total number of points :math:`M`,
    solver and public candidate pool. Reported (evaluation on private data, not
    DP): RKHS distances under the exact kernel to the private KME
    (:func:`dpkme.metrics.rkhs_distance`), times, and for the clustering its
    ARI/purity against ``labels`` and against the non-private kernel k-means
    from the same initialisation.

    Parameters
    ----------
    X : array (N, D)
        Private rows.
    kernel : Kernel
        Kernel of both releases and of the evaluation.
    epsilon, delta : float
        Total privacy target of each of the two releases.
    k : int
        Number of clusters of the cluster-wise release.
    n_points : int
        :math:`M`, synthetic points of each release.
    labels : array (N,) of int, optional
        True classes, for the clustering's ARI and purity.
    n_iter : int, default=10
        :math:`T`, noisy Lloyd iterations of the cluster-wise release.
    n_features : int, default=1000
        :math:`J` of both releases.
    release_share : float in (0, 1), default=0.5
        Budget share of the cluster-wise release step (:func:`~dpkme.clustering.clusterwise_release`).
    neighbouring : {"replace-one", "add-remove"}, default="replace-one"
        Neighbouring relation of both releases.
    solver : str, default="pursuit-joint"
        Reduced-set solver of both releases.
    solver_options : dict, optional
        Extra keyword arguments of the solver.
    init : {"box", "gaussian", "public"}, default="box"
        Public initialisation of the clustering.
    public_data, bounds, q_loc, q_scale
        Inputs of the initialisation and of the public candidate pools (the
        single release's pool is ``public_data``, else
        :math:`\max(n_{\rm candidates}, 4M)` draws from the box ``bounds``, else
        from :math:`\mathcal N(\text{q\_loc}, \text{q\_scale}^2 I)`).
    n_candidates : int, default=2000
        Size of the drawn candidate pools.
    random_state : int or None, default=0
        An int seeds both releases and the pool (replayable: an evaluation, not a
        release); anything else uses fresh OS entropy.
    mean_kxx : float, optional
        Precomputed :math:`\frac1{N^2}\sum_{n,n'}k(x_n, x_{n'})`
        (:meth:`~dpkme.kernels.kernel.Kernel.mean_gram`), to save its
        :math:`O(N^2)` evaluation across calls.
    progress : callable, optional
        ``progress(fraction, message)``; raising from it cancels.

    Returns
    -------
    dict
        The settings (``epsilon``, ``delta``, ``k``, ``n_points``, ``n_iter``,
        ``n_features``, ``release_share``, ``neighbouring``); ``clusterwise``:
        ``rkhs_distance``, ``seconds``, ``n_components``, ``epsilon_spent``;
        ``single``: ``rkhs_distance``, ``seconds``; ``clustering`` and
        ``nonprivate_clustering``: :func:`evaluate_clustering` of the private
        clustering (against the non-private one) and of the non-private one;
        ``note``.
    """
    from ..metrics import rkhs_distance
    from ..release.random_features import algorithm2
    from .release import clusterwise_release

    X = check_array(X, name="X")
    reporter = Progress(progress)
    ss = np.random.SeedSequence(random_state if isinstance(random_state, (int, np.integer)) else None)
    s_cw, s_single, s_pool = ss.spawn(3)
    if mean_kxx is None:
        reporter(0.0, "exact mean kernel of the private data (evaluation)", force=True)
        mean_kxx = kernel.mean_gram(X)
    b = _check_bounds(bounds, X.shape[1])
    pool_rng = np.random.default_rng(s_pool)
    if public_data is not None:
        pool = check_array(public_data, name="public_data", n_features=X.shape[1])
    elif b is not None:
        pool = pool_rng.uniform(b[0], b[1], size=(max(n_candidates, 4 * n_points), X.shape[1]))
    else:
        pool = np.asarray(q_loc) + q_scale * pool_rng.standard_normal((max(n_candidates, 4 * n_points), X.shape[1]))

    reporter(0.05, "cluster-wise release", force=True)
    cw = clusterwise_release(
        X, k=k, n_points=n_points, epsilon=epsilon, delta=delta, n_iter=n_iter, release_share=release_share,
        kernel=kernel, n_features=n_features, neighbouring=neighbouring, solver=solver, solver_options=solver_options,
        init=init, public_data=public_data, bounds=bounds, q_loc=q_loc, q_scale=q_scale, n_candidates=n_candidates,
        random_state=np.random.default_rng(s_cw), progress=reporter.sub(0.05, 0.5), preimages="final")
    reporter(0.5, "single Algorithm-2 release", force=True)
    t = time.perf_counter()
    single = algorithm2(X, kernel=kernel, epsilon=epsilon, delta=delta, n_points=n_points, n_features=n_features,
                        solver=solver, neighbouring=neighbouring, initial_points=pool,
                        random_state=np.random.default_rng(s_single), solver_options=dict(solver_options or {}),
                        progress=reporter.sub(0.5, 0.9))
    t_single = time.perf_counter() - t
    reporter(0.9, "evaluation", force=True)
    d_cw = rkhs_distance(X, cw.release.points, cw.release.weights, kernel=kernel, mean_kxx=mean_kxx)
    d_single = rkhs_distance(X, single.points, single.weights, kernel=kernel, mean_kxx=mean_kxx)
    ref = kernel_kmeans(X, k=k, n_iter=n_iter, features=cw.clustering.features, init=cw.clustering.init_points,
                        preimages="none")
    out = {
        "epsilon": float(epsilon), "delta": float(delta), "k": k, "n_points": n_points, "n_iter": n_iter,
        "n_features": n_features, "release_share": release_share, "neighbouring": neighbouring,
        "clusterwise": {"rkhs_distance": d_cw, "seconds": cw.seconds, "n_components": len(cw.components),
                        "epsilon_spent": cw.plan.epsilon()},
        "single": {"rkhs_distance": d_single, "seconds": t_single},
        "clustering": evaluate_clustering(cw.clustering, X, labels=labels, reference=ref),
        "nonprivate_clustering": evaluate_clustering(ref, X, labels=labels),
        "note": "evaluated on the private data: not a DP release",
    }
    reporter.finish("comparison ready")
    return out
