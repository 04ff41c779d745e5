r"""Cluster-wise release: DP kernel k-means, then an Algorithm-2 release per cluster.

Procedure
---------
1. :func:`~dpkme.clustering.dp_kernel_kmeans` with part of the budget
   (:math:`T` noisy Lloyd steps) gives public centres :math:`c_1..c_k`.
2. **Release step.** Every row is assigned to its nearest released centre (a
   public function of that row), and the per-cluster sizes and feature sums are
   released with Gaussian noise: :math:`\hat n_i = n_i + \mathcal N(0,\sigma_n^2)`,
   :math:`\hat S_i = S_i + \mathcal N(0, \sigma_s^2 I_J)`.
3. Post-processing: per cluster with :math:`\hat n_i \ge \max(1, 3\sigma_n)`,
   the Algorithm-2 target :math:`\tilde\mu_i = \hat S_i/\hat n_i` is turned into
   weighted synthetic points by a reduced-set solver (public pool only), and the
   components are mixed with weights :math:`\pi_i = \hat n_i/\sum_j\hat n_j`.
   The result is one :class:`~dpkme.release.Release` whose weights are
   :math:`\pi_i w_{im}`, plus per-component details.

Why the sums, not per-cluster means
-----------------------------------
Algorithm 2 on cluster :math:`i` alone would release
:math:`\frac1{n_i}\sum_{x\in D_i}z(x) + \mathcal N(0, (2C/n_i)^2\sigma^2 I)`.
Here :math:`n_i` is **private** (it depends on every row's assignment): the
noise scale itself would leak :math:`n_i`, and between neighbours the two
output distributions have *different variances*, so the Gaussian-mechanism
calibration does not apply at all (the tests compute the exact
:math:`\delta` of this naive scheme on a tiny example: it is orders of magnitude
above the claimed one). Releasing the **sum** (sensitivity independent of
:math:`n_i`) and a **noisy size**, and normalising by the noisy size, is a
valid mechanism; the normalisation is post-processing.

Parallel composition across disjoint clusters (what is actually true)
---------------------------------------------------------------------
The clusters partition the rows by a public rule, so the k per-cluster
releases act on disjoint data, and the release step is *one* Gaussian
mechanism on the stacked vector :math:`(\hat n_i, \hat S_i)_{i=1}^k`:

* add/remove: one row is in exactly one cluster, so exactly one block changes,
  by at most :math:`(1, C)`: the sensitivity of all k releases together is that
  of one, :math:`\mu^2 = 1/\sigma_n^2 + C^2/\sigma_s^2` -- parallel
  composition holds exactly;
* replace-one: the changed row may **leave cluster a and join cluster b**, so
  *two* blocks change, each by an add/remove-type change; or it stays and one
  block changes by :math:`z(x') - z(x)`. Then
  :math:`\mu^2 = \max(2/\sigma_n^2 + 2C^2/\sigma_s^2,\ 4C^2/\sigma_s^2)`.
  "Each per-cluster release is :math:`(\varepsilon,\delta)`-DP, hence the whole
  is" is therefore **false** under replace-one if each block is only calibrated
  to its own add/remove change (the joint cost is then that of
  :math:`\sqrt2\times` the sensitivity); it is true if each block is
  calibrated to :math:`\max(\sqrt2\times\text{add/remove}, \text{replace})`,
  which for the sums alone is :math:`\max(\sqrt2 C, 2C) = 2C` and with the sizes
  holds iff :math:`\sigma_n \ge \sigma_s/C`. The plan uses exactly this
  :math:`\mu` (:func:`~dpkme.clustering.sensitivity.step_mu`; the brute-force
  tests enumerate neighbours on tiny data sets).

The release step and the :math:`T` Lloyd steps compose adaptively (the
partition depends on the released centres), all Gaussian, so the total is
:math:`\sqrt{T\mu_{\rm iter}^2 + \mu_{\rm rel}^2}`-GDP
(:class:`~dpkme.clustering.PrivacyPlan`); ``release_share`` sets
:math:`\mu_{\rm rel}^2/\mu_{\rm tot}^2`.
"""

from __future__ import annotations

import json
import time
from collections.abc import Callable
from dataclasses import dataclass, field

import numpy as np

from .. import reduced_set
from .._validation import check_array, check_positive_int
from ..kernels.random_features import RandomFourierFeatures
from ..privacy.accounting import PrivacyCharge
from ..privacy.calibration import gaussian_noise
from ..privacy.result import charge_record
from ..release.result import Release
from .accounting import PrivacyPlan, plan_kmeans
from .kmeans import DPKMeansResult, PrivateLocalView, _candidate_pool, _check_plan_args, _jsonable, _run
from .sensitivity import lloyd_sensitivities

__all__ = ["ClusterComponent", "ClusterwiseRelease", "clusterwise_release", "allocate_points"]


@dataclass
class ClusterComponent:
    """One cluster's part of the mixture (all released).

    ``points``/``weights`` approximate the cluster's noisy mean embedding
    :math:`\\hat S_i/\\hat n_i` (weights from the solver, summing to at most 1);
    ``mixture_weight`` is :math:`\\pi_i`.

    Parameters
    ----------
    index : int
        Cluster index :math:`i` in ``0..k-1`` (the row of the released centres).
    points : ndarray (M_i, D)
        Synthetic points of the component (public pool, post-processing).
    weights : ndarray (M_i,)
        Their weights :math:`w_{im}` in the cluster's embedding
        :math:`\\sum_m w_{im} z(p_{im}) \\approx \\hat S_i/\\hat n_i`.
    mixture_weight : float
        :math:`\\pi_i = \\hat n_i/\\sum_j \\hat n_j` over the kept clusters.
    noisy_count : float
        :math:`\\hat n_i`, the released noisy size of the release step.
    residual_norm : float
        Feature-space distance between the fitted embedding and the target
        :math:`\\hat S_i/\\hat n_i`, as reported by the reduced-set solver.
    """

    index: int
    points: np.ndarray
    weights: np.ndarray
    mixture_weight: float
    noisy_count: float
    residual_norm: float


@dataclass
class ClusterwiseRelease:
    """Output of :func:`clusterwise_release`.

    Parameters
    ----------
    release : Release
        The mixture as one weighted point set (``mechanism="clusterwise-algorithm2"``;
        ``params["component_of_point"]`` gives each point's cluster).
    components : list of ClusterComponent
        Clusters with a usable noisy size (others are dropped, weight 0).
    clustering : DPKMeansResult
        The private clustering it was built on.
    plan : PrivacyPlan
        Lloyd steps + release step; ``plan.epsilon()`` is the total.
    noisy_counts : ndarray (k,)
        Noisy sizes of the release step (released).
    seconds : float, default=0.0
        Wall-clock time of the whole run.
    info : dict, optional
        Extra details for display (empty unless a caller adds some).

    Attributes
    ----------
    local_view : PrivateLocalView or None
        Assignments of the private rows used by the release step. **Not released.**
    charge : PrivacyCharge
        The whole run (clustering and release step) as one exact Gaussian charge, computed once by the run:
        the ``charge`` of ``release`` and of ``clustering`` (the same object, so a ledger counts it once).
    """

    release: Release
    components: list
    clustering: DPKMeansResult
    plan: PrivacyPlan
    noisy_counts: np.ndarray
    seconds: float = 0.0
    info: dict = field(default_factory=dict)

    @property
    def local_view(self) -> PrivateLocalView | None:
        """Assignments of the private rows used by the release step. **Not released.**"""
        return self.clustering.local_view

    @property
    def charge(self) -> PrivacyCharge | None:
        """The run's charge (the one of :attr:`release`)."""
        return self.release.charge

    def charges(self, prefix: str = "cluster-wise release") -> list[PrivacyCharge]:
        """Ledger charges, one per step of the plan (new ids on every call)."""
        return self.plan.charges(prefix)

    def total_charge(self, label: str = "cluster-wise release") -> PrivacyCharge:
        """The whole run as one exact Gaussian charge, a new one (new id) on every call; the run's own is
        :attr:`charge`."""
        return self.plan.total_charge(label)

    def metadata(self) -> dict:
        """The release's metadata (:meth:`~dpkme.release.Release.metadata`, with the charge) and the clustering's
        released summary (:meth:`~dpkme.clustering.DPKMeansResult.to_dict`, without the history); never the local
        view."""
        return {**self.release.metadata(), "kind": "clusterwise",
                "clustering": self.clustering.to_dict(include_history=False), "charge": charge_record(self.charge)}

    def to_json(self, *, include_points: bool = True) -> str:
        """:meth:`metadata` as JSON text, with the mixture's points and weights unless ``include_points=False``."""
        d = self.metadata()
        if include_points:
            d["points"] = self.release.points.tolist()
            d["weights"] = self.release.weights.tolist()
        return json.dumps(_jsonable(d), indent=2, allow_nan=True)


def allocate_points(n_points: int, weights) -> np.ndarray:
    r"""Split ``n_points`` over components proportionally to ``weights`` (largest remainder, >= 1 each).

    Every component gets one point, and the remaining :math:`M - m` are split
    by the largest-remainder (Hamilton) method on the shares
    :math:`w_i/\sum_j w_j\,(M - m)`; ties go to the earlier component. All
    weights zero means equal shares.

    Parameters
    ----------
    n_points : int
        :math:`M`, the total, with :math:`m \le M \le 2^{53}`.
    weights : array (m,)
        Non-negative weights (e.g. the mixture weights :math:`\pi_i`); need
        not be normalised.

    Returns
    -------
    ndarray (m,) of int64
        Points per component, each at least 1, summing to ``n_points``.

    Raises
    ------
    ValueError
        If a weight is negative, or ``n_points`` is smaller than the number of
        components or above :math:`2^{53}`.

    Examples
    --------
    >>> allocate_points(10, [0.5, 0.3, 0.2])
    array([5, 3, 2])
    >>> allocate_points(5, [1, 1, 1])
    array([2, 2, 1])
    """
    n_points = check_positive_int(n_points, name="n_points")
    if n_points > 2**53:   # shares are computed in float64: beyond 2**53 they are no longer exact integers
        raise ValueError(f"n_points={n_points} is too large (at most 2**53 synthetic points).")
    w = check_array(weights, name="weights", ndim=1, min_rows=0)
    if np.any(w < 0):
        raise ValueError(f"weights must be >= 0, got {float(w[np.argmax(w < 0)])}.")
    m = len(w)
    if m == 0:
        return np.zeros(0, dtype=np.int64)
    w = w / w.max() if w.max() > 0 else np.ones(m)  # all zero: equal shares; scaled: the sum cannot overflow
    if n_points < m:
        raise ValueError(f"n_points={n_points} is smaller than the number of components {m}; use at least {m}.")
    base = np.ones(m, dtype=np.int64)
    rest = n_points - m
    share = w / w.sum() * rest
    extra = np.floor(share).astype(np.int64)
    left = rest - extra.sum()
    order = np.argsort(-(share - extra), kind="stable")
    extra[order[:left]] += 1
    return base + extra


def clusterwise_release(
    X,
    *,
    k: int,
    n_points: int,
    epsilon: float | None = None,
    delta: float | None = None,
    plan: PrivacyPlan | None = None,
    n_iter: int | None = None,
    release_share: float = 0.5,
    kernel=None,
    features=None,
    n_features: int = 1000,
    feature_dtype: str = "float32",
    neighbouring: str | None = None,
    count_share: float | None = None,
    release_count_share: float | None = None,
    solver: str = reduced_set.DEFAULT_SOLVER,
    solver_options: dict | None = None,
    init="box",
    public_data=None,
    bounds=None,
    q_loc=0.0,
    q_scale: float = 1.0,
    n_candidates: int = 2000,
    accountant: str = "pld",
    min_count: float | None = None,
    preimages: str = "auto",
    local_view: bool = True,
    domain=None,
    random_state=None,
    progress: Callable[[float, str], object] | None = None,
) -> ClusterwiseRelease:
    r"""Private clustering, then one Algorithm-2 release per cluster, mixed by noisy sizes.

    Guarantee: :math:`(\varepsilon,\delta)`-DP (for ``neighbouring``) of the
    whole output except ``local_view``, with the budget split between the
    clustering (:math:`1-` ``release_share`` of :math:`\mu_{\rm tot}^2`) and the
    release step (module docstring: sensitivity, parallel composition,
    replace-one subtlety). Most inputs are as in
    :func:`~dpkme.clustering.dp_kernel_kmeans`.

    Parameters
    ----------
    X : array (N, D)
        Private rows.
    k : int
        Number of clusters.
    n_points : int
        Total number of synthetic points :math:`M \ge k` (split over clusters in
        proportion to their noisy sizes, at least one each: :func:`allocate_points`).
    epsilon, delta : float
        Total privacy target of clustering and release together; the noise is
        calibrated to it (:func:`~dpkme.clustering.plan_kmeans`). Alternatively
        pass ``plan``.
    plan : PrivacyPlan, optional
        Explicit noise with a ``"release"`` step (``plan_kmeans(release_share=...)``
        or ``plan_from_noise(release_sigma_count=..., release_sum_multiplier=...)``).
    n_iter : int, default=10
        :math:`T`, the number of noisy Lloyd iterations.
    release_share : float in (0, 1), default=0.5
        Part of :math:`\mu_{\rm tot}^2` spent on the release step (ignored with ``plan``).
    kernel : Kernel, optional
        Translation-invariant kernel with :math:`k(x,x)\le1`; random Fourier
        features with ``n_features`` components are drawn for it.
    features : RandomFourierFeatures, optional
        Instead of ``kernel``: fitted, public features (the reduced-set solvers
        need this map; other maps are refused).
    n_features : int, default=1000
        :math:`J` (even) when ``kernel`` is given.
    feature_dtype : {"float32", "float64"}, default="float32"
        Precision of the random-feature evaluation.
    neighbouring : {"replace-one", "add-remove"}, default="replace-one"
        Neighbouring relation of the guarantee (must match ``plan`` if given).
    count_share : float in (0, 1), optional
        Share of each Lloyd step's budget on the sizes (default:
        :func:`~dpkme.clustering.sensitivity.auto_count_share`).
    release_count_share : float, optional
        Share of the release step's budget on the sizes (default: ``count_share``).
    solver : str, default=dpkme.reduced_set.DEFAULT_SOLVER ("pursuit-joint")
        Reduced-set solver fitting each component
        (:func:`dpkme.reduced_set.list_solvers`).
    solver_options : dict, optional
        Extra keyword arguments of the solver (``noise_sigma`` defaults to
        :math:`\sigma_s/\hat n_i` for solvers that accept it).
    init : "box", "gaussian", "public" or array (k, D), default="box"
        Public initialisation of the clustering
        (:func:`~dpkme.clustering.initial_points`).
    public_data, bounds, q_loc, q_scale
        Inputs of the initialisation and of the public candidate pool: the pool
        is ``public_data`` or draws from the declared box ``bounds`` (else from
        :math:`\mathcal N(\text{q\_loc}, \text{q\_scale}^2 I)`).
    n_candidates : int, default=2000
        Size of the candidate pool (at least :math:`4M` for the release step).
    accountant : {"pld", "rdp"}, default="pld"
        Accountant used to calibrate to ``epsilon``.
    min_count : float, optional
        Smallest noisy size for which a centre is updated and a cluster gets a
        component (default :math:`\max(1, 3\sigma_n)` of the step).
    preimages : {"auto", "history", "final", "none"}, default="auto"
        Data-space representatives of the clustering's centres (as in
        :func:`~dpkme.clustering.dp_kernel_kmeans`).
    local_view : bool, default=True
        Also keep the (unreleased) assignments of the private rows.
    domain : EmbeddedDomain, optional
        A declared (public) domain of the synthetic points, e.g.
        :meth:`dpkme.preprocessing.DeclaredScaling.box_domain`: every
        cluster's solver starts from the candidate pool projected onto it and
        keeps its points inside it (:func:`dpkme.reduced_set.reduce`); the
        solver must honour domains.
    random_state : None, int or numpy.random.Generator
        ``None``: OS-entropy noise, no seed recorded (a real release). An int
        makes the run replayable (teaching only: the noise can then be removed
        by anyone who knows the seed).
    progress : callable, optional
        ``progress(fraction, message)``; raising from it cancels the run.

    Returns
    -------
    ClusterwiseRelease

    Raises
    ------
    ValueError
        On invalid arguments (before any private data is read), or -- after
        the private steps, so the budget **is spent** -- when no cluster has a
        usable noisy size in the release step (epsilon far too small for k).

    Examples
    --------
    >>> from dpkme.kernels import GaussianKernel
    >>> rng = np.random.default_rng(0)
    >>> X = np.concatenate([rng.normal(-2, 0.3, (100, 2)), rng.normal(2, 0.3, (100, 2))])
    >>> cw = clusterwise_release(X, k=2, n_points=4, epsilon=2.0, delta=1e-6, n_iter=3,
    ...                          kernel=GaussianKernel(lengthscale=1.0), n_features=50, n_candidates=200,
    ...                          init=np.array([[-1.0, -1.0], [1.0, 1.0]]), random_state=0)
    >>> cw.release.points.shape, len(cw.components), round(cw.plan.epsilon(), 6)
    ((4, 2), 2, 2.0)
    """
    t0 = time.perf_counter()
    if plan is None:
        if epsilon is None:
            raise ValueError("give the privacy target epsilon (and delta), or a plan with a release step.")
        base = _check_plan_args(epsilon, delta, None, n_iter, neighbouring, None, count_share, 0.0, accountant,
                                n_features, features)
        if not 0.0 < float(release_share) < 1.0:
            raise ValueError(f"release_share must lie in (0, 1), got {release_share}.")
        J = features.n_components if isinstance(features, RandomFourierFeatures) else n_features
        plan = plan_kmeans(epsilon=base.target_epsilon, delta=base.delta, n_iter=base.n_iter,
                           neighbouring=base.neighbouring, n_features=J, count_share=count_share,
                           release_share=release_share, release_count_share=release_count_share,
                           accountant=accountant)
    else:
        _check_plan_args(None, None, plan, n_iter, neighbouring, None, None, 0.0, accountant, n_features, features)
        if plan.step("release") is None:
            raise ValueError("the plan has no release step (plan_kmeans(release_share=...) or plan_from_noise("
                             "release_sigma_count=..., release_sum_multiplier=...)).")
    if features is not None and not isinstance(features, RandomFourierFeatures):
        raise ValueError("the cluster-wise release needs dpkme RandomFourierFeatures (reduced-set solvers).")
    n_points = check_positive_int(n_points, name="n_points")
    spec = reduced_set.get_solver(solver)
    if domain is not None:
        domain = reduced_set.check_domain_object(domain, np.shape(X)[1])
        if not spec.honours_domain:
            raise ValueError(f"solver {spec.name!r} cannot keep its points in a declared domain; use one of "
                             f"{sorted(n for n, s in reduced_set.SOLVERS.items() if s.honours_domain)}.")
    if n_points < k:
        raise ValueError(f"n_points={n_points} must be at least k={k} (one point per cluster).")

    clustering, extra = _run(
        X, k=k, plan=plan, n_iter=plan.n_iter, features=features, kernel=kernel, n_features=n_features,
        feature_dtype=feature_dtype, neighbouring=plan.neighbouring, norm_bound=None, norm_bins=1, norm_max=None,
        init=init, public_data=public_data, bounds=bounds, q_loc=q_loc, q_scale=q_scale,
        n_candidates=n_candidates, min_count=min_count, shrink=True, preimages=preimages, local_view=local_view,
        random_state=random_state, progress=progress, release_step=True)
    del X  # the release step's statistics are in `extra`; nothing below reads private rows
    stats, fb, r_noise, r_post, reporter = (extra["release_stats"], extra["fb"], extra["r_noise"],
                                            extra["r_post"], extra["reporter"])
    features = clustering.features
    step = plan.step("release")
    C = fb.norm_bound
    sigma_n, sigma_s = step.sigma_count, step.sigma_sum(C)
    counts_hat = stats["counts"] + gaussian_noise(k, sigma=sigma_n, rng=r_noise)
    sums_hat = stats["sums"] + gaussian_noise(stats["sums"].shape, sigma=sigma_s, rng=r_noise)
    del stats, extra

    # ---- post-processing only from here on
    thr = max(1.0, 3.0 * sigma_n) if min_count is None else max(1.0, float(min_count))
    keep = np.flatnonzero(counts_hat >= thr)
    if keep.size == 0:
        raise ValueError(
            "no cluster has a usable noisy size in the release step (all below max(1, 3 sigma_n) = "
            f"{thr:.3g}); increase epsilon or release_share, or use fewer clusters.")
    pi = counts_hat[keep] / counts_hat[keep].sum()
    m_alloc = allocate_points(n_points, pi)
    init_pts = clustering.init_points
    pool = _candidate_pool(init_pts, init=init, public_data=public_data, bounds=bounds, q_loc=q_loc,
                           q_scale=q_scale, n=max(n_candidates, 4 * n_points), rng=r_post)
    options = dict(solver_options or {})
    components = []
    span = (0.9, 1.0)
    for j, (i, m_i) in enumerate(zip(keep, m_alloc)):
        target = sums_hat[i] / counts_hat[i]
        opts = dict(options)
        if spec.accepts("noise_sigma"):
            opts.setdefault("noise_sigma", sigma_s / counts_hat[i])
        sub = reporter.sub(span[0] + (span[1] - span[0]) * j / len(keep),
                           span[0] + (span[1] - span[0]) * (j + 1) / len(keep))
        res = reduced_set.reduce(target, features, n_points=int(m_i), solver=spec.name, initial_points=pool,
                                 random_state=r_post, progress=sub,
                                 **({"domain": domain} if domain is not None else {}), **opts)
        components.append(ClusterComponent(int(i), res.points, res.weights, float(pi[j]), float(counts_hat[i]),
                                           float(res.residual_norm)))
    points = np.concatenate([c.points for c in components], axis=0)
    weights = np.concatenate([c.mixture_weight * c.weights for c in components])
    owner = np.concatenate([np.full(c.points.shape[0], c.index) for c in components])
    eps_total = plan.epsilon()
    sens = lloyd_sensitivities(norm_bound=C, neighbouring=plan.neighbouring)
    rel = Release(
        points=points, weights=weights, mechanism="clusterwise-algorithm2", epsilon=float(eps_total),
        delta=plan.delta, sigma=sigma_s, sensitivity=sens["sums"], neighbouring=plan.neighbouring,
        calibration="analytic" if plan.accountant == "pld" else "rdp", kernel=features.kernel,
        seed=clustering.seed, n_private=max(1, int(round(float(counts_hat[keep].sum())))),
        seconds=time.perf_counter() - t0, noise_source=clustering.noise_source, charge=clustering.charge,
        params={
            "k": k, "n_iter": plan.n_iter, "n_points": n_points, "n_features": fb.n_components,
            "solver": spec.name, "solver_options": options, "release_share": plan.info.get("release_share"),
            "n_private_note": "n_private is the released noisy total size (sum of kept noisy cluster sizes)",
            "component_of_point": owner.tolist(),
            "components": [{"cluster": c.index, "mixture_weight": c.mixture_weight, "noisy_count": c.noisy_count,
                            "n_points": int(c.points.shape[0]), "residual_norm": c.residual_norm}
                           for c in components],
            "release_step": {"sigma_count": sigma_n, "sigma_sum": sigma_s, "mu": step.mu,
                             "noisy_counts": counts_hat.tolist()},
            "plan": plan.to_dict(),
            "centre_preimages": None if clustering.preimages is None else clustering.preimages.tolist(),
        },
    )
    reporter.finish("cluster-wise release ready")
    return ClusterwiseRelease(release=rel, components=components, clustering=clustering, plan=plan,
                              noisy_counts=counts_hat, seconds=time.perf_counter() - t0)
