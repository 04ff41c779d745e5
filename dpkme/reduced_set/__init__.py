r"""Reduced-set solvers: turn a privatised mean feature vector into weighted points.

Step 6 of Algorithm 2 of Balog et al. (2018): given the
:math:`(\varepsilon,\delta)`-DP vector :math:`\tilde\mu \in \mathbb R^J` and
the public random-feature map :math:`\phi`, find synthetic points and weights
:math:`(z_m, w_m)_{m=1}^M` with

.. math::
    \Bigl\|\sum_{m=1}^M w_m\phi(z_m) - \tilde\mu\Bigr\|_2 \ \text{small}, \qquad
    \text{e.g. } \sum_m |w_m| \le C \quad \text{(eq. (5))}.

**Everything here is post-processing**: a solver receives only
:math:`\tilde\mu`, the public feature map (frequencies and amplitude), public
initial points or the parameters of the data-independent distribution
:math:`q = \mathcal N(\text{loc}, \text{scale}^2 I)`, options and a random
generator. It never sees the private data, so its output is as private as
:math:`\tilde\mu` (post-processing property of differential privacy).

Solvers (:data:`SOLVERS`, :func:`list_solvers`):

``"pursuit-joint"`` (default, most accurate)
    Greedy Frank–Wolfe selection from a pool of public candidates, then joint
    L-BFGS on all locations and non-negative weights with :math:`\sum w \le 1`
    (:mod:`.pursuit`, :mod:`.joint`).
``"preimage"``
    The paper's iterated approximate pre-images with an L1 refit (:mod:`.preimage`).
``"joint"``
    Joint L-BFGS from draws of q (:mod:`.joint`).
``"pursuit"``
    The greedy alone (fast; weights on the simplex).
``"herding"``
    Kernel herding plus L-BFGS on locations: equal weights :math:`1/M`, i.e. a
    plain (unweighted) synthetic dataset.

Declared domains: :func:`reduce` takes an optional ``domain`` (a
:class:`dpkme.schema.EmbeddedDomain`, or any object with its attributes; see
:func:`check_domain_object`). Initial points and pools are then uniform draws
from it, and ``"pursuit-joint"``, ``"joint"`` and ``"herding"`` optimise the
locations under L-BFGS-B bounds from ``domain.bounds_for``: continuous
coordinates stay in their declared box and discrete ones (integer levels,
one-hot categories) keep the declared values of the candidates chosen from the
pool. The released points lie in the domain by construction. ``"preimage"``
cannot honour a domain and refuses one. Without a domain every solver behaves
exactly as before.

Progress and cancellation: every solver accepts ``progress(fraction, message)``;
it is called with strictly increasing fractions in [0, 1], the last one exactly
1.0. Any exception raised by the callback (e.g. :class:`Cancelled`) stops the
solver and propagates to the caller.
"""

from __future__ import annotations

import inspect
import time
from collections.abc import Callable
from dataclasses import dataclass

from .._blocked import single_threaded_blas
from .._validation import check_array, check_positive_int, check_random_state
from ._common import Cancelled, PointSource, Problem, Progress, ReducedSetResult, check_domain_object
from ._fourier import FourierMap
from .joint import JOINT_WEIGHTS, joint, refine
from .preimage import preimage
from .pursuit import greedy_select, herding, pursuit, pursuit_joint
from .resample import resample
from .weights import WEIGHT_CONSTRAINTS, fit_weights, project_l1_ball, project_simplex

__all__ = [
    "SOLVERS", "DEFAULT_SOLVER", "SolverSpec", "list_solvers", "get_solver", "reduce",
    "ReducedSetResult", "Problem", "PointSource", "Progress", "Cancelled", "FourierMap",
    "fit_weights", "project_simplex", "project_l1_ball", "refine", "greedy_select", "resample",
    "WEIGHT_CONSTRAINTS", "JOINT_WEIGHTS", "PRESETS", "preset_options", "check_domain_object",
]


@dataclass(frozen=True)
class SolverSpec:
    """A registered solver: ``fn(problem, *, n_points, source, rng, progress, report_at, **options)``.

    Parameters
    ----------
    name : str
        Key in :data:`SOLVERS`.
    fn : callable
        The solver function.
    description : str
        One paragraph for user interfaces.
    weighted : bool
        Whether the weights are optimised (``False``: equal weights).
    uses_pool : bool
        Whether it selects from a candidate pool (takes ``pool_size``).
    honours_domain : bool, default=True
        Whether it keeps its points in a declared domain (``False``: it refuses one).
    """

    name: str
    fn: Callable[..., ReducedSetResult]
    description: str
    weighted: bool
    uses_pool: bool
    honours_domain: bool = True

    def accepts(self, option: str) -> bool:
        """Whether the solver takes the keyword ``option``.

        Parameters
        ----------
        option : str
            A keyword argument name.

        Returns
        -------
        bool
        """
        return option in inspect.signature(self.fn).parameters


SOLVERS: dict[str, SolverSpec] = {
    "pursuit-joint": SolverSpec(
        "pursuit-joint", pursuit_joint,
        "Greedy Frank-Wolfe over a pool of public candidates, then joint L-BFGS of all locations and "
        "non-negative weights summing to at most 1. Most accurate (default).", True, True),
    "preimage": SolverSpec(
        "preimage", preimage,
        "The paper's iterated approximate pre-images (Adam per point, greedy weight, deflation), then an "
        "L1-constrained refit of the weights (eq. 5).", True, False, honours_domain=False),
    "joint": SolverSpec(
        "joint", joint,
        "Joint L-BFGS of all locations and weights from random draws of q (no greedy start).", True, False),
    "pursuit": SolverSpec(
        "pursuit", pursuit,
        "Greedy Frank-Wolfe selection from the candidate pool only; fast, weights on the simplex.", True, True),
    "herding": SolverSpec(
        "herding", herding,
        "Kernel herding over the pool, then L-BFGS on the locations: equal weights 1/M, a plain "
        "synthetic dataset.", False, True),
}
DEFAULT_SOLVER = "pursuit-joint"


#: Named option sets. ``"accurate"`` = each solver's defaults (tuned on the paper's
#: N = 10^5, J = 10^4, M up to 10^4). ``"interactive"`` = a smaller candidate pool,
#: fewer L-BFGS iterations and a shorter shortlist, for sub-second releases at the
#: app's sizes (J <= 2000, M <= a few hundred), where it loses little accuracy
#: (benchmarks/results/app.md).
PRESETS: dict[str, dict] = {
    "accurate": {},
    "interactive": {"pool_size": 2000, "max_iter": 20, "shortlist": 256},
}


def preset_options(solver: str, preset: str = "accurate") -> dict:
    """The options of ``preset`` that ``solver`` accepts (others are dropped).

    Parameters
    ----------
    solver : str
        A key of :data:`SOLVERS`.
    preset : str, default="accurate"
        A key of :data:`PRESETS`.

    Returns
    -------
    dict
    """
    if preset not in PRESETS:
        raise ValueError(f"unknown preset {preset!r}; choose one of {sorted(PRESETS)}.")
    spec = get_solver(solver)
    return {k: v for k, v in PRESETS[preset].items() if spec.accepts(k)}


def list_solvers() -> list[dict]:
    """``[{"name", "description", "weighted", "default"}]`` for every registered solver."""
    return [{"name": s.name, "description": s.description, "weighted": s.weighted,
             "default": s.name == DEFAULT_SOLVER} for s in SOLVERS.values()]


def get_solver(name: str) -> SolverSpec:
    """The registered solver called ``name`` (ValueError listing the choices otherwise).

    Parameters
    ----------
    name : str
        A key of :data:`SOLVERS`.

    Returns
    -------
    SolverSpec
    """
    if name not in SOLVERS:
        raise ValueError(f"unknown solver {name!r}; choose one of {sorted(SOLVERS)}.")
    return SOLVERS[name]


def reduce(
    mu_tilde,
    features,
    *,
    n_points: int,
    solver: str = DEFAULT_SOLVER,
    initial_points=None,
    q_scale: float = 500.0,
    q_loc=0.0,
    random_state=None,
    progress: Callable[[float, str], object] | None = None,
    report_at=(),
    domain=None,
    **options,
) -> ReducedSetResult:
    r"""Approximate :math:`\tilde\mu` by ``n_points`` weighted synthetic points.

    Parameters
    ----------
    mu_tilde : array (J,)
        The privatised mean feature vector (from
        :func:`dpkme.release.random_features.privatise_feature_mean`).
    features : RandomFourierFeatures
        The fitted, public feature map used to compute ``mu_tilde``.
    n_points : int
        :math:`M \ge 1`.
    solver : str
        A key of :data:`SOLVERS`.
    initial_points : array (K, D), optional
        Public points (chosen without the private data): initial locations
        (first ``n_points`` rows) or candidate pool (all rows). Default: draws
        from :math:`q = \mathcal N(\text{q\_loc}, \text{q\_scale}^2 I_D)`.
    q_scale : float, default=500.0
        Standard deviation of q (the paper's :math:`\sigma_q = 500`).
    q_loc : float or array (D,), default=0.0
        Mean of q (public).
    random_state : None, int or numpy.random.Generator
        Draws from q and the pool.
    progress : callable, optional
        ``progress(fraction, message)``; raise from it to cancel.
    report_at : iterable of int
        Intermediate sizes whose solutions are stored in ``result.checkpoints``.
    domain : EmbeddedDomain, optional
        A declared (public) domain of the points (:func:`check_domain_object`):
        initial points and pools are drawn from it (public ``initial_points``
        are projected onto it; ``q_loc``/``q_scale`` are unused) and every
        solver except ``"preimage"`` (which refuses it) keeps the points
        inside it. ``None``: unconstrained, as before.
    **options
        Solver options (see each solver's docstring).

    Returns
    -------
    ReducedSetResult
    """
    spec = get_solver(solver)
    if not hasattr(features, "frequencies_"):
        raise ValueError("features must be a fitted RandomFourierFeatures (call fit(dim)).")
    fmap = FourierMap.from_features(features)
    target = check_array(mu_tilde, name="mu_tilde", ndim=1)
    if target.shape[0] != fmap.n_components:
        raise ValueError(f"mu_tilde has length {target.shape[0]} but the features have J={fmap.n_components}.")
    n_points = check_positive_int(n_points, name="n_points")
    rng, _ = check_random_state(random_state)
    if domain is not None and not spec.honours_domain:
        raise ValueError(f"solver {solver!r} cannot honour a declared domain; use one of "
                         f"{sorted(n for n, s in SOLVERS.items() if s.honours_domain)}.")
    source = PointSource(fmap.dim, public=initial_points, loc=q_loc, scale=q_scale, domain=domain)
    reporter = Progress(progress)
    reporter(0.0, f"{solver}: start", force=True)
    t0 = time.perf_counter()
    # One BLAS thread: the solver's products are small (atoms x features), so this is faster here (penguins:
    # 0.7 s against 1.3 s), and a multi-threaded BLAS splits some reductions by thread count: the same seeded
    # release differed by up to 1e-4 between a process whose BLAS had one thread and one whose BLAS had two.
    with single_threaded_blas():
        result = spec.fn(Problem(target, fmap), n_points=n_points, source=source, rng=rng, progress=reporter,
                         report_at=tuple(report_at), **options)
    result.seconds = time.perf_counter() - t0
    reporter.finish(f"{solver}: done")
    return result
