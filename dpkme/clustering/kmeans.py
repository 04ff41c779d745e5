r"""Differentially private kernel k-means (Algorithm 2, "DPkmeans", of Acs et al.).

Rows are mapped with a public random-feature map :math:`z` (frequencies drawn
without the data), centres :math:`c_1,\dots,c_k \in \mathbb R^J` are
initialised from public points or data-independent draws, and then :math:`T`
noisy Lloyd iterations are run:

.. math::
    D_i = \{x : \arg\min_j \|z(x) - c_j\|_2^2 = i\},\quad
    \hat n_i = |D_i| + \mathcal N(0, \sigma_n^2),\quad
    \hat S_i = \sum_{x\in D_i} z(x) + \mathcal N(0, \sigma_s^2 I_J),\quad
    c_i \leftarrow \hat S_i / \hat n_i .

Privacy
-------
Each iteration releases :math:`(\hat n, \hat S)`, a Gaussian mechanism whose
sensitivity for the chosen neighbouring relation is derived in
:mod:`dpkme.clustering.sensitivity` (add/remove: 1 and :math:`C`; replace-one:
:math:`\sqrt2` and :math:`2C`, joint analysis); the centres of the next
iteration are post-processing of it, and the :math:`T` iterations (plus the
optional norm step of Algorithm 3) compose adaptively
(:mod:`dpkme.clustering.accounting`). Released: every iteration's noisy sizes
and centres (:attr:`DPKMeansResult.history`), the final centres, and their
pre-images in data space (post-processing). **Not** released: the assignment
of the private rows (:class:`PrivateLocalView`, for the data owner's own
screen), and any quality metric computed from the private rows.

Centre update (post-processing)
-------------------------------
A centre is updated only if :math:`\hat n_i \ge \max(1, 3\sigma_n)` (otherwise
the division is dominated by noise and the previous centre is kept, as in
standard DP Lloyd implementations); the noisy sum is shrunk by the positive-part
James-Stein factor :math:`1 - J\sigma_s^2/\|\hat S_i\|^2` (which removes the
:math:`J\sigma_s^2` bias of :math:`\|\hat S_i\|^2` that would otherwise push
points away from small clusters; a factor :math:`\le 0`, i.e. a sum that is
all noise, also keeps the previous centre), and the centre is projected onto the ball
of radius :math:`C` (means of vectors of norm :math:`\le C` lie in it). All of
this uses only released values and public constants.

Feature maps
------------
With :class:`dpkme.kernels.random_features.RandomFourierFeatures` (paired cos/sin),
:math:`\|z(x)\|_2 = \sqrt a \le 1` holds for every x, so no private norm
estimate is needed (Algorithm 3 exists for maps without such a bound and is
used with ``norm_bound="private"`` for them, see :mod:`dpkme.clustering.norm`).

The paper's neural generators
-----------------------------
In Acs et al. the clusters feed one generative model each (RBM or VAE trained
with DP-SGD, their Algorithms 1 and 4). That part is not implemented here;
it would plug in after :func:`dp_kernel_kmeans` exactly like the cluster-wise
kernel release of :mod:`dpkme.clustering.release`: partition the rows with
:meth:`DPKMeansResult.assign` (a public function of each row), train model
:math:`i` with DP-SGD on cluster :math:`i` (sampling rate :math:`L/N`, as
clusters are disjoint), weight the models by released noisy sizes, and add the
DP-SGD charges (a ``dp_accounting`` ``PoissonSampledDpEvent`` per step) to the
same :class:`~dpkme.privacy.accounting.BudgetLedger`, for the same neighbouring
relation.
"""

from __future__ import annotations

import json
import math
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from .._validation import (
    check_array,
    check_delta,
    check_epsilon,
    check_in,
    check_positive_float,
    check_positive_int,
    check_random_state,
    noise_rng,
    spawn_streams,
)
from ..kernels.kernel import Kernel
from ..kernels.random_features import RandomFourierFeatures
from ..privacy.accounting import PrivacyCharge
from ..privacy.calibration import gaussian_noise
from ..privacy.result import charge_record
from ..privacy.sensitivity import check_private_kernel
from ..reduced_set._common import Progress
from ._features import FeatureBlocks, feature_norms, lloyd_pass
from .accounting import ACCOUNTANTS, PrivacyPlan, plan_kmeans
from .norm import NormSelection, private_norm_bound
from .preimage import centre_preimages

__all__ = [
    "INIT_METHODS",
    "IterationRecord",
    "PrivateLocalView",
    "DPKMeansResult",
    "dp_kernel_kmeans",
    "kernel_kmeans",
    "initial_points",
]

INIT_METHODS = ("box", "gaussian", "public")
PREIMAGE_MODES = ("auto", "history", "final", "none")
# Largest candidate pool (rows x J) whose features are kept across iterations (64 MB in float32).
_POOL_FEATURE_LIMIT = 1 << 24

LOCAL_VIEW_NOTE = (
    "LOCAL VIEW - NOT RELEASED: cluster assignments of the private rows, computed on the data owner's machine "
    "from the released centres. Each label is a function of that row's private values; never publish, export "
    "or share it."
)


# --------------------------------------------------------------------------- records
@dataclass
class IterationRecord:
    """One iteration of (noisy) Lloyd, as released.

    Parameters
    ----------
    iteration : int
        0 for the initialisation, then 1..T.
    centres : ndarray (k, J)
        Centres after this iteration (feature space).
    noisy_counts : ndarray (k,) or None
        Released noisy cluster sizes of this iteration (exact sizes for a
        non-private run; ``None`` for iteration 0).
    updated : ndarray (k,) of bool
        Which centres were recomputed (the others kept their previous value).
    preimages : ndarray (k, D) or None, default=None
        Data-space representatives of ``centres`` (post-processing; ``None``
        where they were not computed, see ``preimages`` of :func:`dp_kernel_kmeans`).
    """

    iteration: int
    centres: np.ndarray
    noisy_counts: np.ndarray | None
    updated: np.ndarray
    preimages: np.ndarray | None = None


@dataclass
class PrivateLocalView:
    """Assignments of the private rows to the released centres. **Local view, never released.**

    Each label depends on the private row it belongs to; showing them to the
    data owner (e.g. colouring their own points) is fine, publishing them is not.
    ``counts`` are the exact (private) cluster sizes.

    Parameters
    ----------
    labels : ndarray (N,) of int64
        Index in ``0..k-1`` of the nearest released centre for every private row.
    counts : ndarray (k,) of int64
        Exact cluster sizes :math:`n_i = |D_i|` (private).
    note : str, optional
        Warning shown with the view (default: a fixed text saying it must not be
        published, exported or shared).

    Attributes
    ----------
    released : bool
        Always ``False``: a marker for code that checks what may be published.
    """

    labels: np.ndarray
    counts: np.ndarray
    note: str = LOCAL_VIEW_NOTE

    released: bool = field(default=False, init=False)


@dataclass
class DPKMeansResult:
    r"""Output of :func:`dp_kernel_kmeans` (or of the non-private :func:`kernel_kmeans`).

    Built by those functions, not by hand.

    Parameters
    ----------
    centres : ndarray (k, J)
        Final centres in feature space (released).
    noisy_counts : ndarray (k,)
        Noisy sizes :math:`\hat n_i` of the last iteration (released; the exact
        sizes for a non-private run, zeros when :math:`T = 0`).
    preimages : ndarray (k, D) or None
        Data-space representatives of the final centres (released, post-processing).
    history : list of IterationRecord
        Iteration 0 (initialisation) to T, for plotting the centres' paths.
    features : RandomFourierFeatures or other map
        The public feature map.
    norm_bound : float
        :math:`C` used for the sensitivities (a priori, declared or private).
    norm_selection : NormSelection or None
        Output of Algorithm 3 if it was run (released).
    plan : PrivacyPlan or None
        Noise and accounting (``None`` for a non-private run).
    init_points : ndarray (k, D)
        Public initial points.
    init : str
        How the initial points were obtained (e.g. ``"uniform draws from the
        declared box"``, see :func:`initial_points`).
    neighbouring : {"replace-one", "add-remove"}
        Neighbouring relation of the guarantee (the plan's).
    private : bool
        False for the non-private reference.
    seed : int or None
        Seed of the run's randomness, for replay; ``None`` for a private run
        with OS-entropy noise (a real release: deliberately not recorded) or
        when a Generator was passed.
    noise_source : str
        ``"seeded"``, ``"os-entropy"``, ``"generator"`` or
        ``"none (non-private)"`` (see :func:`dpkme.privacy.leaks.privacy_claim`).
    seconds : float
        Wall-clock time of the run.
    local_view : PrivateLocalView or None, default=None
        **Not released.** Excluded from :meth:`to_dict`.
    params : dict, optional
        Run parameters (``k``, ``n_iter``, ``n_features``, ``feature_map``,
        ``min_count``, ``shrink``).
    charge : PrivacyCharge or None, default=None
        The whole run as one exact Gaussian charge (:meth:`PrivacyPlan.total_charge`), computed once by
        the run before it drew any noise; ``None`` for a non-private run.

    Attributes
    ----------
    k : int
        Number of clusters.
    n_iter : int
        :math:`T`, the number of Lloyd iterations run.
    epsilon : float
        Total :math:`\varepsilon` of the plan at :attr:`delta` (``inf`` for a non-private run).
    delta : float
        The plan's :math:`\delta` (0 for a non-private run).
    """

    centres: np.ndarray
    noisy_counts: np.ndarray
    preimages: np.ndarray | None
    history: list
    features: Any
    norm_bound: float
    norm_selection: NormSelection | None
    plan: PrivacyPlan | None
    init_points: np.ndarray
    init: str
    neighbouring: str
    private: bool
    seed: int | None
    noise_source: str
    seconds: float
    local_view: PrivateLocalView | None = None
    params: dict = field(default_factory=dict)
    charge: PrivacyCharge | None = None

    @property
    def k(self) -> int:
        return int(self.centres.shape[0])

    @property
    def n_iter(self) -> int:
        return len(self.history) - 1

    @property
    def epsilon(self) -> float:
        """Total :math:`\\varepsilon` at :attr:`delta` (``inf`` for a non-private run)."""
        return math.inf if self.plan is None else float(self.plan.epsilon())

    @property
    def delta(self) -> float:
        return 0.0 if self.plan is None else self.plan.delta

    def _blocks(self) -> FeatureBlocks:
        return FeatureBlocks(self.features, clip=None if isinstance(self.features, RandomFourierFeatures)
                             else self.norm_bound)

    def assign(self, Y) -> np.ndarray:
        """Index of the nearest released centre for every row of ``Y``.

        A public function of the released centres. Applied to *public* points
        the result is public; applied to the private rows it is the local view
        (see :class:`PrivateLocalView`) and must not be released.
        """
        fb = self._blocks()
        Y = check_array(Y, name="Y", n_features=fb.dim)
        return lloyd_pass(fb, Y, self.centres, sums=False, labels=True)["labels"]

    def charges(self, prefix: str = "DP k-means") -> list[PrivacyCharge]:
        """Ledger charges, one per step (see :meth:`PrivacyPlan.charges`)."""
        if self.plan is None:
            raise ValueError("a non-private run has no privacy charges (and must not be released).")
        return self.plan.charges(prefix)

    def total_charge(self, label: str = "DP k-means") -> PrivacyCharge:
        """The whole run as one exact Gaussian charge (see :meth:`PrivacyPlan.total_charge`), a new one (new id)
        on every call; the run's own is :attr:`charge`."""
        if self.plan is None:
            raise ValueError("a non-private run has no privacy charge (and must not be released).")
        return self.plan.total_charge(label)

    def centre_path(self) -> np.ndarray:
        """Pre-images of the centres at every iteration, shape (T+1, k, D) (NaN where not computed)."""
        D = self.init_points.shape[1]
        out = np.full((len(self.history), self.k, D), np.nan)
        for t, rec in enumerate(self.history):
            if rec.preimages is not None:
                out[t] = rec.preimages
        return out

    def representatives(self, n_points: int = 10, *, solver: str = "pursuit-joint", initial_points=None,
                        q_scale: float = 1.0, q_loc=0.0, random_state=None, **options) -> list:
        """Weighted synthetic points per cluster fitted to the final centres (post-processing).

        Runs a reduced-set solver (:func:`dpkme.reduced_set.reduce`) on each
        centre. Returns a list of :class:`~dpkme.reduced_set.ReducedSetResult`.
        """
        from .. import reduced_set

        if not isinstance(self.features, RandomFourierFeatures):
            raise ValueError("representatives need dpkme RandomFourierFeatures.")
        rng, _ = check_random_state(random_state)
        out = []
        for i in range(self.k):
            out.append(reduced_set.reduce(self.centres[i], self.features, n_points=n_points, solver=solver,
                                          initial_points=initial_points, q_scale=q_scale, q_loc=q_loc,
                                          random_state=rng, **options))
        return out

    def to_dict(self, *, include_history: bool = True) -> dict:
        """JSON-friendly summary of everything **released** (never the local view); ``differentially_private`` is
        false for seeded (replayable) runs and non-private references (:func:`dpkme.privacy.leaks.privacy_claim`)."""
        from ..privacy.leaks import privacy_claim

        d = {
            "private": self.private,
            "k": self.k,
            "n_iter": self.n_iter,
            "neighbouring": self.neighbouring,
            "epsilon": self.epsilon,
            "delta": self.delta,
            "norm_bound": self.norm_bound,
            "init": self.init,
            "init_points": self.init_points.tolist(),
            "noisy_counts": self.noisy_counts.tolist(),
            "preimages": None if self.preimages is None else self.preimages.tolist(),
            "plan": None if self.plan is None else self.plan.to_dict(),
            "seed": self.seed,
            "noise_source": self.noise_source,
            "seconds": self.seconds,
            "params": self.params,
            **privacy_claim(self),
        }
        if self.norm_selection is not None:
            d["norm_selection"] = {"norm_bound": self.norm_selection.norm_bound,
                                   "noisy_counts": self.norm_selection.noisy_counts.tolist(),
                                   "edges": self.norm_selection.edges.tolist()}
        if include_history:
            d["history"] = [{"iteration": r.iteration,
                             "noisy_counts": None if r.noisy_counts is None else r.noisy_counts.tolist(),
                             "updated": r.updated.tolist(),
                             "preimages": None if r.preimages is None else r.preimages.tolist()}
                            for r in self.history]
        return d

    def metadata(self) -> dict:
        """Everything released (:meth:`to_dict` with the history) plus the record of :attr:`charge`."""
        return {**self.to_dict(), "charge": charge_record(self.charge)}

    def to_json(self) -> str:
        """:meth:`metadata` as JSON text (never the local view)."""
        return json.dumps(_jsonable(self.metadata()), indent=2, allow_nan=True)


def _jsonable(obj):
    if isinstance(obj, dict):
        return {str(k): _jsonable(v) for k, v in obj.items()}
    if isinstance(obj, (list, tuple)):
        return [_jsonable(v) for v in obj]
    if isinstance(obj, np.ndarray):
        return obj.tolist()
    if isinstance(obj, (np.floating, np.integer, np.bool_)):
        return obj.item()
    return obj


# --------------------------------------------------------------------------- initialisation
def _check_bounds(bounds, dim):
    if bounds is None:
        return None
    try:
        lower, upper = bounds
    except (TypeError, ValueError):
        raise ValueError(f"bounds must be a pair (lower, upper), got {bounds!r}.") from None
    lower = np.broadcast_to(check_array(np.atleast_1d(lower), name="bounds lower", ndim=1), (dim,)).astype(float)
    upper = np.broadcast_to(check_array(np.atleast_1d(upper), name="bounds upper", ndim=1), (dim,)).astype(float)
    if np.any(upper <= lower):
        raise ValueError(f"bounds need lower < upper in every coordinate, got {lower} and {upper}.")
    return lower, upper


def _kmeanspp(F: np.ndarray, k: int, rng: np.random.Generator) -> np.ndarray:
    """Indices of k rows chosen by k-means++ seeding (D^2 sampling) in feature space."""
    n = F.shape[0]
    idx = [int(rng.integers(n))]
    d2 = np.maximum(np.sum((F - F[idx[0]]) ** 2, axis=1), 0.0)
    for _ in range(1, k):
        total = d2.sum()
        j = int(rng.integers(n)) if total <= 0 else int(rng.choice(n, p=d2 / total))
        idx.append(j)
        d2 = np.minimum(d2, np.sum((F - F[j]) ** 2, axis=1))
    return np.asarray(idx)


def initial_points(k: int, dim: int, *, init="box", public_data=None, bounds=None, q_loc=0.0, q_scale=1.0,
                   features=None, rng: np.random.Generator) -> tuple[np.ndarray, str]:
    r"""Public initial points in data space (never derived from the private rows).

    ``init``:

    * an array (k, D): used as given (public points chosen by the user);
    * ``"box"``: k uniform draws from the declared box ``bounds=(lower, upper)``;
    * ``"gaussian"``: k draws from :math:`\mathcal N(\text{q\_loc}, \text{q\_scale}^2 I)`;
    * ``"public"``: k rows of ``public_data`` (a public sample, e.g. the
      publishable subset) picked by k-means++ seeding in feature space, as
      the paper suggests (footnote 3).

    Parameters
    ----------
    k : int
        Number of points (clusters), :math:`k \ge 1`.
    dim : int
        :math:`D`, the dimension of the data space.
    init : {"box", "gaussian", "public"} or array (k, D), default="box"
        Initialisation method, or the points themselves.
    public_data : array (P, D), optional
        Public sample (``init="public"``, :math:`P \ge k`); never the private rows.
    bounds : pair (lower, upper), optional
        Declared (public) box, scalars or arrays (D,), with lower < upper in
        every coordinate (``init="box"``).
    q_loc : float or array (D,), default=0.0
        Mean of the Gaussian draws (``init="gaussian"``).
    q_scale : float, default=1.0
        Standard deviation of the Gaussian draws (``init="gaussian"``), > 0.
    features : fitted feature map, optional
        Object with ``transform`` (e.g. a ``FeatureBlocks``) in whose space the
        k-means++ seeding of ``init="public"`` measures distances (data space if
        ``None``).
    rng : numpy.random.Generator
        Source of the (public) randomness of the draws.

    Returns
    -------
    points : ndarray (k, D)
        The initial points.
    description : str
        Short description of how they were obtained.

    Raises
    ------
    ValueError
        If the method's inputs are missing or invalid (e.g. ``"box"`` without
        ``bounds``, too few public rows, a wrong shape).

    Examples
    --------
    >>> pts, how = initial_points(3, 2, bounds=([0, 0], [1, 1]), rng=np.random.default_rng(0))
    >>> pts.shape, how
    ((3, 2), 'uniform draws from the declared box')
    """
    k = check_positive_int(k, name="k")
    if not isinstance(init, str):
        pts = check_array(init, name="init", n_features=dim)
        if pts.shape[0] != k:
            raise ValueError(f"init has {pts.shape[0]} rows but k={k} initial points are needed.")
        return pts.copy(), "user-supplied public points"
    check_in(init, INIT_METHODS, name="init")
    if init == "box":
        b = _check_bounds(bounds, dim)
        if b is None:
            raise ValueError("init='box' needs bounds=(lower, upper): a declared (public) box around the data.")
        return rng.uniform(b[0], b[1], size=(k, dim)), "uniform draws from the declared box"
    if init == "gaussian":
        scale = check_positive_float(q_scale, name="q_scale")
        loc = np.broadcast_to(np.asarray(q_loc, dtype=np.float64), (dim,))
        if not np.all(np.isfinite(loc)):
            raise ValueError(f"q_loc must be finite, got {q_loc!r}.")
        return loc + scale * rng.standard_normal((k, dim)), f"draws from N(q_loc, {scale:g}^2 I)"
    if public_data is None:
        raise ValueError("init='public' needs public_data (a public sample, never the private rows).")
    P = check_array(public_data, name="public_data", n_features=dim)
    if P.shape[0] < k:
        raise ValueError(f"public_data has {P.shape[0]} rows but k={k} initial points are needed.")
    F = features.transform(P) if features is not None else P
    return P[_kmeanspp(F, k, rng)].copy(), "k-means++ seeding on public data"


def _candidate_pool(init_pts, *, init, public_data, bounds, q_loc, q_scale, n, rng) -> np.ndarray:
    """Public candidates for pre-images: initial points plus public draws."""
    dim = init_pts.shape[1]
    parts = [init_pts]
    b = _check_bounds(bounds, dim)
    if public_data is not None:
        parts.append(check_array(public_data, name="public_data", n_features=dim))
    if b is not None:
        parts.append(rng.uniform(b[0], b[1], size=(n, dim)))
    elif public_data is None:
        loc = np.broadcast_to(np.asarray(q_loc, dtype=np.float64), (dim,))
        parts.append(loc + float(q_scale) * rng.standard_normal((n, dim)))
    return np.concatenate(parts, axis=0)


# --------------------------------------------------------------------------- the algorithm
def _update(sums, counts, prev, *, C, sigma_sum, sigma_count, min_count, shrink):
    """New centres from (noisy) sums and sizes; post-processing only."""
    k, J = sums.shape
    new = prev.copy()
    updated = np.zeros(k, dtype=bool)
    thr = max(1.0, 3.0 * sigma_count) if min_count is None else max(1.0, float(min_count))
    for i in range(k):
        if not counts[i] >= thr:
            continue
        S = sums[i]
        if shrink and sigma_sum > 0.0:
            ss = float(S @ S)
            factor = 1.0 - J * sigma_sum**2 / ss if ss > 0 else 0.0
            if factor <= 0.0:
                continue
            S = factor * S
        c = S / counts[i]
        norm = math.sqrt(float(c @ c))
        if norm > C:
            c = c * (C / norm)
        new[i] = c
        updated[i] = True
    return new, updated


def _resolve_features(X_shape, features, kernel, n_features, feature_dtype, rng):
    dim = X_shape[1]
    if features is not None:
        if kernel is not None:
            raise ValueError("give either features or kernel, not both.")
        if isinstance(features, RandomFourierFeatures):
            features._check_fitted()
            check_private_kernel(features.kernel)
        if getattr(features, "n_features_in_", dim) != dim:
            raise ValueError(f"the features were fitted for {features.n_features_in_} columns but X has {dim}.")
        return features
    if kernel is None:
        raise ValueError("give a kernel (random Fourier features are drawn for it) or fitted features.")
    if not isinstance(kernel, Kernel):
        raise ValueError(f"kernel must be a dpkme Kernel, got {kernel!r}.")
    check_private_kernel(kernel)
    return RandomFourierFeatures(kernel, n_components=n_features, random_state=rng, dtype=feature_dtype).fit(dim)


def _run(
    X, *, k, plan: PrivacyPlan | None, n_iter, features, kernel, n_features, feature_dtype, neighbouring,
    norm_bound, norm_bins, norm_max, init, public_data, bounds, q_loc, q_scale, n_candidates, min_count, shrink,
    preimages, local_view, random_state, progress, release_step: bool = False,
):
    t0 = time.perf_counter()
    k = check_positive_int(k, name="k")
    check_in(preimages, PREIMAGE_MODES, name="preimages")
    if plan is None:
        rng, seed = check_random_state(random_state)
        noise_source = "none (non-private)"
    else:
        rng, seed, noise_source = noise_rng(random_state)
    # features, initial points (published), noise, pre-image pool: four independent streams. A real release seeds
    # each with its own OS entropy (children of one OS seed are not cryptographically independent, and the
    # initial points are published); a seeded replay derives them from its seed (and is labelled not private).
    r_feat, r_init, r_noise, r_post = spawn_streams(rng, 4, fresh=noise_source == "os-entropy")
    # what the run spends, computed once from the plan before any noise is drawn
    charge = None if plan is None else plan.total_charge("cluster-wise release" if release_step else "DP k-means")
    reporter = Progress(progress)
    reporter(0.0, "preparing features", force=True)
    shape = np.shape(X)
    if len(shape) != 2:
        raise ValueError(f"X must be a 2-D array, got shape {tuple(shape)}.")
    features = _resolve_features(shape, features, kernel, n_features, feature_dtype, r_feat)
    rff = isinstance(features, RandomFourierFeatures)
    X = check_array(X, name="X", n_features=shape[1], min_rows=1)
    _n, dim = X.shape

    # ---- norm bound
    norm_sel = None
    norm_step = None if plan is None else plan.step("norm")
    if rff:
        if norm_bound is not None:
            raise ValueError(
                "RandomFourierFeatures have norm exactly sqrt(amplitude) for every x: an a-priori bound, so "
                "norm_bound must be None (a private norm step would only waste budget).")
        if norm_step is not None:
            raise ValueError("the plan has a norm step, but RandomFourierFeatures need none (their norm is exact).")
        fb = FeatureBlocks(features)
    elif isinstance(norm_bound, str):
        if norm_bound != "private":
            raise ValueError(f"norm_bound must be None, a number or 'private', got {norm_bound!r}.")
        if plan is None:
            raise ValueError("norm_bound='private' is a private step; a non-private run needs a numeric norm_bound.")
        if norm_step is None:
            raise ValueError("norm_bound='private' needs a plan with a norm step (plan_kmeans(norm_step=True)).")
        if norm_max is None:
            raise ValueError("norm_bound='private' needs norm_max: the public upper end C_max of the searched range.")
        reporter(0.01, "private norm bound (Algorithm 3)", force=True)
        norm_sel = private_norm_bound(feature_norms(features, X), c_max=norm_max, n_bins=norm_bins,
                                      sigma=norm_step.sigma_count, rng=r_noise, neighbouring=plan.neighbouring)
        fb = FeatureBlocks(features, clip=norm_sel.norm_bound)
    else:
        if norm_step is not None:
            raise ValueError("the plan has a norm step but norm_bound is not 'private'.")
        fb = FeatureBlocks(features, clip=norm_bound)
    C = fb.norm_bound
    J = fb.n_components

    # ---- initialisation (public)
    init_pts, init_desc = initial_points(k, dim, init=init, public_data=public_data, bounds=bounds, q_loc=q_loc,
                                         q_scale=q_scale, features=fb, rng=r_init)
    centres = fb.transform(init_pts)
    want_pre = rff and preimages != "none"
    every = rff and preimages in ("auto", "history")
    pool = _candidate_pool(init_pts, init=init, public_data=public_data, bounds=bounds, q_loc=q_loc,
                           q_scale=q_scale, n=n_candidates, rng=r_post) if want_pre else None
    b = _check_bounds(bounds, dim)
    pool_F = None
    if want_pre and pool.shape[0] * J <= _POOL_FEATURE_LIMIT:
        pool_F = fb.transform(pool).astype(np.float32)
    history = [IterationRecord(0, centres.copy(), None, np.ones(k, dtype=bool), init_pts.copy() if want_pre else None)]

    lloyd = None if plan is None else plan.step("lloyd")
    T = n_iter if plan is None else plan.n_iter
    sigma_n = 0.0 if lloyd is None else lloyd.sigma_count
    sigma_s = 0.0 if lloyd is None else lloyd.sigma_sum(C)
    last_pre = init_pts
    span = 0.85 if local_view or release_step else 0.9
    counts_hat = np.zeros(k)
    for t in range(1, T + 1):
        reporter(0.02 + span * (t - 1) / T, f"Lloyd iteration {t}/{T}", force=True)
        stats = lloyd_pass(fb, X, centres)
        counts_hat = stats["counts"].astype(np.float64)
        sums_hat = stats["sums"]
        if plan is not None:
            counts_hat = counts_hat + gaussian_noise(k, sigma=sigma_n, rng=r_noise)
            sums_hat = sums_hat + gaussian_noise(sums_hat.shape, sigma=sigma_s, rng=r_noise)
        del stats
        centres, updated = _update(sums_hat, counts_hat, centres, C=C, sigma_sum=sigma_s, sigma_count=sigma_n,
                                   min_count=min_count, shrink=shrink)
        rec = IterationRecord(t, centres.copy(), counts_hat.copy(), updated)
        if every or (want_pre and t == T):
            cand = np.concatenate([pool, last_pre], axis=0)
            cand_F = None if pool_F is None else np.concatenate([pool_F, fb.transform(last_pre)], axis=0)
            rec.preimages, _ = centre_preimages(centres, features, candidates=cand, bounds=b,
                                                candidate_features=cand_F)
            last_pre = rec.preimages
        history.append(rec)
    if T == 0 and want_pre:
        history[0].preimages = init_pts.copy()

    result = DPKMeansResult(
        centres=centres, noisy_counts=counts_hat, preimages=history[-1].preimages, history=history,
        features=features, norm_bound=C, norm_selection=norm_sel, plan=plan, init_points=init_pts,
        init=init_desc, neighbouring=neighbouring if plan is None else plan.neighbouring, private=plan is not None,
        seed=seed, noise_source=noise_source, seconds=0.0,
        params={"k": k, "n_iter": T, "n_features": J, "feature_map": fb.describe(), "min_count": min_count,
                "shrink": shrink},
        charge=charge,
    )
    extra = {}
    if release_step:
        reporter(0.02 + span, "cluster-wise release: sizes and sums", force=True)
        extra["release_stats"] = lloyd_pass(fb, X, centres, labels=local_view)
        if local_view:
            result.local_view = PrivateLocalView(extra["release_stats"].pop("labels"),
                                                 extra["release_stats"]["counts"].copy())
        extra.update(r_noise=r_noise, r_post=r_post, reporter=reporter, fb=fb)
    elif local_view:
        reporter(0.02 + span, "local view: assigning the private rows (not released)", force=True)
        st = lloyd_pass(fb, X, centres, sums=False, labels=True)
        result.local_view = PrivateLocalView(st["labels"], st["counts"])
    result.seconds = time.perf_counter() - t0
    if not release_step:
        reporter.finish("done")
    return result, extra


def _check_plan_args(epsilon, delta, plan, n_iter, neighbouring, norm_bound, count_share, norm_share, accountant,
                     n_features, features):
    if plan is not None:
        if epsilon is not None:
            raise ValueError("give either epsilon (and delta) or a plan, not both.")
        if not isinstance(plan, PrivacyPlan):
            raise ValueError(f"plan must be a PrivacyPlan (plan_kmeans / plan_from_noise / paper_plan), got {plan!r}.")
        if n_iter is not None and n_iter != plan.n_iter:
            raise ValueError(f"n_iter={n_iter} but the plan has {plan.n_iter} Lloyd iterations.")
        if neighbouring is not None and neighbouring != plan.neighbouring:
            raise ValueError(f"neighbouring={neighbouring!r} but the plan is for {plan.neighbouring!r}.")
        return plan
    if epsilon is None:
        raise ValueError("give the privacy target epsilon (and delta), or a plan with explicit noise scales.")
    epsilon = check_epsilon(epsilon)
    if delta is None:
        raise ValueError("delta is required (the Gaussian mechanism needs delta > 0), e.g. delta=1e-6.")
    delta = check_delta(delta)
    check_in(accountant, ACCOUNTANTS, name="accountant")
    J = getattr(features, "n_components", n_features) if features is not None else n_features
    return plan_kmeans(epsilon=epsilon, delta=delta, n_iter=10 if n_iter is None else n_iter,
                       neighbouring=neighbouring or "replace-one", n_features=J, count_share=count_share,
                       norm_step=isinstance(norm_bound, str) and norm_bound == "private", norm_share=norm_share,
                       accountant=accountant)


def dp_kernel_kmeans(
    X,
    *,
    k: int,
    epsilon: float | None = None,
    delta: float | None = None,
    n_iter: int | None = None,
    plan: PrivacyPlan | None = None,
    kernel: Kernel | None = None,
    features=None,
    n_features: int = 1000,
    feature_dtype: str = "float32",
    neighbouring: str | None = None,
    count_share: float | None = None,
    norm_bound=None,
    norm_share: float = 0.1,
    norm_bins: int = 50,
    norm_max: float | None = None,
    init="box",
    public_data=None,
    bounds=None,
    q_loc=0.0,
    q_scale: float = 1.0,
    n_candidates: int = 2000,
    accountant: str = "pld",
    min_count: float | None = None,
    shrink: bool = True,
    preimages: str = "auto",
    local_view: bool = True,
    random_state=None,
    progress: Callable[[float, str], object] | None = None,
) -> DPKMeansResult:
    r"""Differentially private kernel k-means with random Fourier features.

    Guarantee: :math:`(\varepsilon,\delta)`-DP for ``neighbouring`` (default
    replace-one) of everything in the result except ``local_view``, provided the
    initial points (``init``, ``public_data``, ``bounds``, ``q_loc``,
    ``q_scale``) and the kernel are public, i.e. not chosen by looking at the
    private rows. Sensitivities: :mod:`dpkme.clustering.sensitivity`;
    composition: :mod:`dpkme.clustering.accounting`.

    Parameters
    ----------
    X : array (N, D)
        Private rows.
    k : int
        Number of clusters.
    epsilon, delta : float
        Total privacy target; the noise is calibrated to it
        (:func:`~dpkme.clustering.plan_kmeans`). Alternatively pass ``plan``.
    n_iter : int, default=10
        :math:`T`, the number of noisy Lloyd iterations.
    plan : PrivacyPlan, optional
        Explicit noise (:func:`~dpkme.clustering.plan_from_noise`,
        :func:`~dpkme.clustering.paper_plan`); the :math:`\varepsilon` spent is
        ``result.epsilon``.
    kernel : Kernel, optional
        Translation-invariant kernel with :math:`k(x,x)\le1`; random Fourier
        features with ``n_features`` components are drawn for it.
    features : fitted feature map, optional
        Instead of ``kernel``: :class:`~dpkme.kernels.random_features.RandomFourierFeatures`
        (norm bound a priori), or any map with ``transform`` (then
        ``norm_bound`` is required).
    n_features : int, default=1000
        :math:`J` (even) when ``kernel`` is given.
    feature_dtype : {"float32", "float64"}, default="float32"
        Precision of the random-feature evaluation (sums are accumulated in
        float64; the norm bound has a margin for float32 rounding).
    neighbouring : {"replace-one", "add-remove"}, default="replace-one"
        Neighbouring relation of the guarantee (must match ``plan`` if given).
    count_share : float in (0, 1), optional
        Share of each iteration's budget on the sizes (default: see
        :func:`~dpkme.clustering.sensitivity.auto_count_share`).
    norm_bound : None, float or "private"
        ``None`` for random Fourier features. For other maps: a declared bound
        (rows are clipped to it) or ``"private"`` (Algorithm 3 with
        ``norm_share`` of the budget, ``norm_bins`` bins up to ``norm_max``).
    norm_share : float in (0, 1), default=0.1
        Part of :math:`\mu_{\rm tot}^2` spent on Algorithm 3 when
        ``norm_bound="private"`` and the plan is calibrated here (ignored otherwise).
    norm_bins : int, default=50
        :math:`w`, the number of histogram bins (candidate bounds) of Algorithm 3.
    norm_max : float, optional
        :math:`C_{\max}`, public upper end of Algorithm 3's search range
        (required with ``norm_bound="private"``).
    init : "box", "gaussian", "public" or array (k, D)
        Public initialisation (:func:`initial_points`).
    public_data, bounds, q_loc, q_scale
        Inputs of the initialisation and of the pre-image candidate pool.
    n_candidates : int
        Size of the public candidate pool for the pre-images.
    accountant : {"pld", "rdp"}
        Accountant used to calibrate to ``epsilon``.
    min_count : float, optional
        Smallest noisy size for which a centre is updated (default
        :math:`\max(1, 3\sigma_n)`).
    shrink : bool
        James-Stein shrinkage of the noisy sums (post-processing).
    preimages : {"auto", "history", "final", "none"}
        Data-space representatives of the centres at every iteration
        (``"history"``, the default for random Fourier features), only the final
        ones, or none.
    local_view : bool
        Also compute the (unreleased) assignments of the private rows.
    random_state : None, int or numpy.random.Generator
        ``None``: OS-entropy noise, no seed recorded (a real release); the
        features, the (published) initial points, the noise and the pre-image
        pool then come from four independent fresh OS-entropy generators. An
        int makes the run replayable (teaching; the noise can then be removed
        by anyone who knows the seed).
    progress : callable, optional
        ``progress(fraction, message)``; raising from it cancels the run.

    Returns
    -------
    DPKMeansResult

    Raises
    ------
    ValueError
        On invalid or inconsistent arguments (every message says what to change).

    Examples
    --------
    Two well-separated blobs; the seed makes the example replayable (a real
    release leaves ``random_state=None``):

    >>> from dpkme.kernels import GaussianKernel
    >>> rng = np.random.default_rng(0)
    >>> X = np.concatenate([rng.normal(-2, 0.3, (100, 2)), rng.normal(2, 0.3, (100, 2))])
    >>> res = dp_kernel_kmeans(X, k=2, epsilon=1.0, delta=1e-6, n_iter=3,
    ...                        kernel=GaussianKernel(lengthscale=1.0), n_features=100,
    ...                        init=np.array([[-1.0, -1.0], [1.0, 1.0]]), random_state=0)
    >>> round(res.epsilon, 6), res.centres.shape, res.preimages.shape
    (1.0, (2, 100), (2, 2))
    >>> res.assign([[-2.0, -2.0], [2.0, 2.0]])   # public points: a public result
    array([0, 1])
    """
    plan = _check_plan_args(epsilon, delta, plan, n_iter, neighbouring, norm_bound, count_share, norm_share,
                            accountant, n_features, features)
    if plan.step("release") is not None:
        raise ValueError("this plan has a cluster-wise release step: run it with clusterwise_release().")
    result, _ = _run(
        X, k=k, plan=plan, n_iter=plan.n_iter, features=features, kernel=kernel, n_features=n_features,
        feature_dtype=feature_dtype, neighbouring=plan.neighbouring, norm_bound=norm_bound, norm_bins=norm_bins,
        norm_max=norm_max, init=init, public_data=public_data, bounds=bounds, q_loc=q_loc, q_scale=q_scale,
        n_candidates=n_candidates, min_count=min_count, shrink=shrink, preimages=preimages, local_view=local_view,
        random_state=random_state, progress=progress)
    return result


def kernel_kmeans(
    X,
    *,
    k: int,
    n_iter: int = 10,
    kernel: Kernel | None = None,
    features=None,
    n_features: int = 1000,
    feature_dtype: str = "float32",
    norm_bound=None,
    init="box",
    public_data=None,
    bounds=None,
    q_loc=0.0,
    q_scale: float = 1.0,
    n_candidates: int = 2000,
    preimages: str = "final",
    local_view: bool = True,
    random_state=None,
    progress: Callable[[float, str], object] | None = None,
) -> DPKMeansResult:
    r"""**Non-private** kernel k-means (plain Lloyd on the same features): the reference for accuracy.

    Same initialisation, features and update rule as :func:`dp_kernel_kmeans`
    without noise (a centre with no points keeps its value). Its output is not
    differentially private: for evaluation and teaching only.

    Parameters
    ----------
    X : array (N, D)
        Data rows.
    k : int
        Number of clusters.
    n_iter : int, default=10
        :math:`T \ge 0`, the number of Lloyd iterations (0: the initial centres).
    kernel : Kernel, optional
        Translation-invariant kernel; random Fourier features with
        ``n_features`` components are drawn for it.
    features : fitted feature map, optional
        Instead of ``kernel`` (e.g. the ``features`` of a private run, to compare
        on the same map); a map other than
        :class:`~dpkme.kernels.random_features.RandomFourierFeatures` needs a
        numeric ``norm_bound``.
    n_features : int, default=1000
        :math:`J` (even) when ``kernel`` is given.
    feature_dtype : {"float32", "float64"}, default="float32"
        Precision of the random-feature evaluation.
    norm_bound : None or float
        ``None`` for random Fourier features; for other maps the bound rows are
        clipped to (as in the private run).
    init : "box", "gaussian", "public" or array (k, D), default="box"
        Initialisation (:func:`initial_points`); pass a private run's
        ``init_points`` to start from the same centres.
    public_data, bounds, q_loc, q_scale
        Inputs of the initialisation and of the pre-image candidate pool
        (:func:`initial_points`).
    n_candidates : int, default=2000
        Size of the public candidate pool for the pre-images.
    preimages : {"auto", "history", "final", "none"}, default="final"
        Which centres get data-space representatives (as in :func:`dp_kernel_kmeans`).
    local_view : bool, default=True
        Also return the assignments of the rows (``result.local_view``).
    random_state : None, int or numpy.random.Generator
        Randomness of the features, the initialisation and the candidate pool.
    progress : callable, optional
        ``progress(fraction, message)``; raising from it cancels the run.

    Returns
    -------
    DPKMeansResult
        With ``plan=None``, ``private=False``, ``epsilon = inf``; ``noisy_counts``
        are the exact sizes of the last iteration.

    Examples
    --------
    >>> from dpkme.kernels import GaussianKernel
    >>> rng = np.random.default_rng(0)
    >>> X = np.concatenate([rng.normal(-2, 0.3, (100, 2)), rng.normal(2, 0.3, (100, 2))])
    >>> ref = kernel_kmeans(X, k=2, kernel=GaussianKernel(lengthscale=1.0), n_features=100,
    ...                     init=np.array([[-1.0, -1.0], [1.0, 1.0]]), random_state=0)
    >>> ref.local_view.counts, ref.private, ref.epsilon
    (array([100, 100]), False, inf)
    >>> bool(np.abs(ref.preimages - [[-2, -2], [2, 2]]).max() < 0.5)
    True
    """
    n_iter = check_positive_int(n_iter, name="n_iter", minimum=0)
    result, _ = _run(
        X, k=k, plan=None, n_iter=n_iter, features=features, kernel=kernel, n_features=n_features,
        feature_dtype=feature_dtype, neighbouring="replace-one", norm_bound=norm_bound, norm_bins=1, norm_max=None,
        init=init, public_data=public_data, bounds=bounds, q_loc=q_loc, q_scale=q_scale, n_candidates=n_candidates,
        min_count=None, shrink=False, preimages=preimages, local_view=local_view, random_state=random_state,
        progress=progress)
    return result
