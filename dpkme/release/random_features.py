r"""Algorithm 2 of Balog et al. (2018): release through a random-features RKHS.

The release has exactly two stages, and only the first reads the private data:

1. **Private step** (:func:`privatise_feature_mean`, lines 1–4 of Algorithm 2).
   With a public random-feature map :math:`\phi:\mathbb R^D\to\mathbb R^J`
   (:class:`dpkme.kernels.random_features.RandomFourierFeatures`, frequencies drawn without
   the data, :math:`\|\phi(x)\|_2 = \sqrt a \le 1` for every x),

   .. math::
       \tilde\mu^\phi_X = \frac1N\sum_{n=1}^N\phi(x_n) + \mathcal N(0, \sigma^2 I_J).

   The L2 sensitivity of the mean is :math:`\Delta = 2b/N` for replace-one
   neighbours (:math:`\|\phi(x)-\phi(x')\|_2 \le 2b`, Proposition 9, eq. 25–27)
   and :math:`b/N` for add/remove with a public normaliser :math:`N`, where
   :math:`b \ge \|\phi(x)\|_2` is the feature-norm bound
   (:func:`dpkme.privacy.sensitivity.feature_mean_sensitivity`). :math:`\sigma` is
   calibrated by the Gaussian mechanism (:func:`dpkme.privacy.calibration.calibrate_gaussian`):
   ``"classic"`` :math:`\sigma = \Delta\sqrt{2\ln(1.25/\delta)}/\varepsilon` — the
   paper's variance :math:`8\ln(1.25/\delta)/(N^2\varepsilon^2)` with
   :math:`\Delta = 2/N` — or ``"analytic"`` (Balle & Wang 2018, smaller
   :math:`\sigma`). The noisy vector is :math:`(\varepsilon,\delta)`-DP.

2. **Post-processing** (:mod:`dpkme.reduced_set`, lines 5–7). A reduced-set
   solver turns :math:`\tilde\mu` into weighted synthetic points using only
   :math:`\tilde\mu`, the public feature map and public initial points (draws
   from :math:`q = \mathcal N(\text{q\_loc}, \text{q\_scale}^2 I)`, uniform
   draws from a declared ``domain``, or user-supplied public points). By the
   post-processing property, the released points and weights are
   :math:`(\varepsilon,\delta)`-DP as well.

:func:`algorithm2` composes the two; it drops its reference to the data right
after stage 1, and stage 2 receives no argument derived from it other than
:math:`\tilde\mu`.
"""

from __future__ import annotations

import time
from collections.abc import Callable
from typing import TYPE_CHECKING, Any

import numpy as np
import numpy.typing as npt

from .. import reduced_set
from .._validation import check_array, check_in, check_positive_int, noise_rng, spawn_streams
from ..kernels.kernel import Kernel
from ..kernels.marginal import JointFeatures
from ..kernels.random_features import RandomFourierFeatures
from ..privacy.accounting import PrivacyCharge, gaussian_charge
from ..privacy.sensitivity import check_release_args, feature_mean_sensitivity
from ..privacy.spec import PrivacySpec, resolve, resolve_noise
from ..reduced_set import DEFAULT_SOLVER, SOLVERS, list_solvers, resample  # re-exported
from .core import InMemoryRows, Privatised, RowSums, is_row_sums, n_policy, policy_params, privatise, shape_of
from .result import Release

if TYPE_CHECKING:
    from ..kernels.marginal import MarginalFeatures
    from ..privacy.calibration import GaussianCalibration
    from ..reduced_set import ReducedSetResult
    from ..schema import EmbeddedDomain

__all__ = ["CALIBRATIONS", "privatise_feature_mean", "algorithm2", "list_solvers", "resample", "SOLVERS",
           "DEFAULT_SOLVER"]

CALIBRATIONS = ("analytic", "classic")


def privatise_feature_mean(
    X: npt.ArrayLike,
    features: RandomFourierFeatures | JointFeatures,
    *,
    epsilon: float,
    delta: float,
    calibration: str = "analytic",
    neighbouring: str = "replace-one",
    rng: np.random.Generator | None = None,
    n_private: int | str | None = None,
    noise: str = "numpy",
    count_share: float = 0.1,
    count_rng: np.random.Generator | None = None,
    progress: Callable[[float, str], object] | None = None,
    record: dict[str, Any] | None = None,
) -> tuple[npt.NDArray[np.float64], GaussianCalibration]:
    r"""The private step of Algorithm 2: the noisy mean feature vector (in memory or on a Dask cluster).

    Guarantee
    ---------
    :math:`(\varepsilon,\delta)`-differential privacy of the returned vector with
    respect to ``neighbouring``:

    * ``"replace-one"`` (the paper's Definition 1): datasets of the same public
      size :math:`N` differing in one row; sensitivity :math:`\Delta = 2b/N`
      (Proposition 9);
    * ``"add-remove"``: one row added or removed, the sum normalised by the
      declared public size ``n_private``; :math:`\Delta = b/N`.

    Here :math:`b = \sqrt{a}\,(1+10^{-12}) \ge \|\phi(x)\|_2` (the features have
    norm exactly :math:`\sqrt a`, :math:`a = k(x,x) \le 1`; the margin covers
    float64 rounding). The mechanism is

    .. math::
        \tilde\mu = \frac1N\sum_n\phi(x_n) + \mathcal N(0,\sigma^2 I_J),\qquad
        \sigma = \frac{\Delta\sqrt{2\ln(1.25/\delta)}}{\varepsilon}\ (\text{classic})

    or the analytic Gaussian mechanism's smallest valid :math:`\sigma`.
    ``features`` may also be a :class:`dpkme.kernels.marginal.JointFeatures`
    (the random features stacked with a declared table's marginal cells,
    :math:`\|\chi(x)\|_2^2 = (1-h)a + h \le 1`): the same bound with its
    ``norm_bound``, one mechanism for both blocks.
    Everything computed from the returned vector alone is post-processing.
    With ``noise="numpy"`` floating-point noise is assumed to behave like ideal
    Gaussian noise (as in most implementations of the Gaussian mechanism);
    ``noise="opendp"`` removes that assumption.

    Parameters
    ----------
    X : array (N, D) or RowSums
        Private data (finite values; read once, in blocks), or a
        :class:`~dpkme.release.core.RowSums` that computes the feature sum elsewhere (a Dask cluster's
        partitions, :class:`dpkme.distributed.DaskRows`).
    features : RandomFourierFeatures or JointFeatures
        Fitted, public feature map with :math:`k(x,x) \le 1`.
    epsilon : float
        > 0.
    delta : float
        In (0, 1).
    calibration : {"analytic", "classic"}
    neighbouring : {"replace-one", "add-remove"}
    rng : numpy.random.Generator
        Source of the noise for ``noise="numpy"`` (required then); must be
        ``None`` for ``noise="opendp"``.
    n_private : int or "private", optional
        Public size :math:`N` used for normalisation and sensitivity. Must equal
        the number of rows under replace-one (the default); required to be
        declared for add-remove, or ``"private"`` (add-remove): a Laplace count
        with a share ``count_share`` of :math:`\varepsilon`, composed with the sum
        (:mod:`dpkme.release.core`; the returned calibration is then the sum's).
    noise : {"numpy", "opendp"}, default="numpy"
        Sampler of the Gaussian noise (:func:`dpkme.privacy.calibration.add_gaussian_noise`):
        numpy's generator (assumes idealised floating-point numerics, Mironov
        2012) or OpenDP's exact, floating-point-safe sampler given exactly
        :math:`\sigma` (not seedable).
    count_share : float, default=0.1
        Share of :math:`\varepsilon` spent on the count with ``n_private="private"``.
    count_rng : numpy.random.Generator, optional
        The count's generator (required with ``n_private="private"``).
    progress : callable, optional
        ``progress(fraction, message)`` during the pass over the rows.
    record : dict, optional
        Filled with ``"noisy"``: the :class:`~dpkme.release.core.Privatised` result (public: the size,
        :math:`\sigma`, the sensitivity and the charge the release records).

    Returns
    -------
    mu_tilde : ndarray (J,)
    calibration : dpkme.privacy.calibration.GaussianCalibration
        :math:`\sigma`, the sensitivity and the achieved :math:`\delta`.
    """
    from ..privacy.calibration import NOISE_SOURCES  # local: avoids import cycles

    if not isinstance(features, (RandomFourierFeatures, JointFeatures)):
        raise ValueError(
            f"features must be dpkme RandomFourierFeatures (unit-norm paired features) or JointFeatures (stacked with a "
            f"table's marginal cells, norm <= 1), got "
            f"{type(features).__name__}; other maps may break the sensitivity bound."
        )
    features._check_fitted()
    epsilon, delta = check_release_args(features.kernel, epsilon, delta, calibration=calibration,
                                        neighbouring=neighbouring)
    check_in(noise, NOISE_SOURCES, name="noise")
    if noise == "numpy" and not isinstance(rng, np.random.Generator):
        raise ValueError(f"rng must be a numpy.random.Generator (noise='numpy'), got {rng!r}.")
    if noise == "opendp" and rng is not None:
        raise ValueError("noise='opendp' draws from OpenDP's own generator: pass rng=None, not both (the generator "
                         "would be ignored and the result cannot be replayed).")
    if is_row_sums(X):
        rows: Any = X
        if rows.dim != features.n_features_in_:
            raise ValueError(f"the feature map was fitted for {features.n_features_in_} columns but the rows have "
                             f"{rows.dim}.")
    else:
        rows = InMemoryRows(check_array(X, name="X", n_features=features.n_features_in_,
                                        min_rows=0 if neighbouring == "add-remove" else 1), allow_empty=True)
    del X
    policy = n_policy(n_private, neighbouring, count_share, noise)
    if policy == "private" and not isinstance(count_rng, np.random.Generator):
        raise ValueError(f"count_rng must be a numpy.random.Generator (n_private='private'), got {count_rng!r}.")
    stat = rows.feature_sums(features, progress=progress)
    rows.close()
    noisy = privatise(stat, policy=policy, n_private=n_private, neighbouring=neighbouring, epsilon=epsilon,
                      delta=delta, calibration=calibration, count_share=count_share,
                      sensitivity_at=lambda n: feature_mean_sensitivity(n=n, norm_bound=features.norm_bound,
                                                                        neighbouring=neighbouring),
                      rng_noise=rng, rng_count=count_rng, noise=noise, label="Algorithm 2", mechanism="algorithm2")
    if record is not None:
        record["noisy"] = noisy
    return noisy.vector, noisy.calibration


def algorithm2(
    X: npt.ArrayLike,
    *,
    kernel: Kernel,
    epsilon: float | None = None,
    delta: float | None = None,
    n_points: int,
    n_features: int = 10000,
    solver: str = DEFAULT_SOLVER,
    calibration: str | None = None,
    neighbouring: str | None = None,
    n_private: int | None = None,
    initial_points: npt.ArrayLike | None = None,
    q_scale: float = 500.0,
    q_loc: npt.ArrayLike = 0.0,
    random_state: int | np.random.Generator | None = None,
    feature_dtype: str = "float32",
    progress: Callable[[float, str], object] | None = None,
    solver_options: dict[str, Any] | None = None,
    preset: str = "accurate",
    noise: str | None = None,
    domain: EmbeddedDomain | None = None,
    marginals: MarginalFeatures | None = None,
    marginal_share: float | None = None,
    privacy: PrivacySpec | None = None,
) -> Release:
    r"""Release a DP weighted synthetic dataset by Algorithm 2 (random-features RKHS).

    Guarantee: :math:`(\varepsilon,\delta)`-DP with respect to ``neighbouring``
    (see :func:`privatise_feature_mean`: Gaussian mechanism on the mean of
    unit-norm features, sensitivity :math:`2/N` replace-one or :math:`1/N`
    add-remove, Proposition 9), provided ``initial_points`` are public (not
    derived from X) and :math:`k(x,x)\le1`. The solver is post-processing.

    Parameters
    ----------
    X : array (N, D)
        Private data.
    kernel : Kernel
        Translation-invariant kernel with amplitude :math:`\le 1`.
    epsilon, delta : float, optional
        Privacy parameters (:math:`\varepsilon > 0`, :math:`0<\delta<1`); required unless ``privacy`` gives
        them.
    n_points : int
        Number of synthetic points :math:`M \ge 1`.
    n_features : int, default=10000
        :math:`J` (even).
    solver : str, default="pursuit-joint"
        A key of :data:`dpkme.reduced_set.SOLVERS` (:func:`list_solvers`).
    calibration : {"analytic", "classic"}, optional
        The Gaussian calibration (default ``"analytic"``, or ``privacy.calibration``).
    neighbouring : {"replace-one", "add-remove"}, optional
        The neighbouring relation (default ``"replace-one"``, or ``privacy.relation``).
    n_private : int, optional
        Public size N (see :func:`privatise_feature_mean`).
    initial_points : array (K, D), optional
        Public points for initialisation / the candidate pool. Default: draws
        from :math:`q = \mathcal N(\text{q\_loc}, \text{q\_scale}^2 I)`.
    q_scale, q_loc
        Parameters of q (public; the paper uses :math:`\mathcal N(0, 500^2 I)`).
    random_state : None, int or numpy.random.Generator
        Seeds the frequencies, the noise and the solver: independent child
        streams 0, 1 and 2 (:func:`dpkme._validation.spawn_streams`; for an int
        ``seed``, ``SeedSequence(seed).spawn(3)[i]``). An int makes the release replayable (``noise_source="seeded"``,
        teaching only: the seed removes the noise); ``None`` uses OS entropy and
        records no seed (``"os-entropy"``, a real release).
    feature_dtype : {"float32", "float64"}
        Precision of the feature evaluation.
    progress : callable, optional
        ``progress(fraction, message)``, strictly increasing fractions ending
        at 1.0; raising from it cancels the release (nothing is returned).
    solver_options : dict, optional
        Passed to the solver (e.g. ``{"pool_size": 20000, "max_iter": 100}``);
        overrides ``preset``.
    preset : {"accurate", "interactive"}
        Named solver options (:data:`dpkme.reduced_set.PRESETS`).
    noise : {"numpy", "opendp"}, optional
        Sampler of the Gaussian noise (:func:`privatise_feature_mean`; default ``"numpy"``, or
        ``"opendp"`` when ``privacy.noise == "opendp"``).
        ``"opendp"`` cannot be seeded (an int ``random_state`` is a ValueError);
        the release records ``noise_source="opendp"`` and no seed, and
        ``random_state`` (None or a Generator) then drives only the
        frequencies and the solver.
    domain : EmbeddedDomain, optional
        A declared, public domain of the rows (``TableSchema(...).domain`` of
        :mod:`dpkme.schema`, or any object with its attributes, see
        :func:`dpkme.reduced_set.check_domain_object`). The solver draws its
        initial points and pool from it (instead of q) and keeps every released
        point inside it: continuous coordinates within their box, discrete ones
        on their declared levels. The data is not checked against it (that is
        the encoder's job). Not for ``solver="preimage"`` (ValueError).
    marginals : MarginalFeatures, optional
        Public marginal cells of a declared table (:class:`dpkme.kernels.marginal.MarginalFeatures`, built
        from the same schema as ``domain``). The mechanism then privatises the mean of the joint map
        :math:`\chi = [\sqrt{1-h}\,\phi;\ \sqrt h\,\psi]` (:class:`~dpkme.kernels.marginal.JointFeatures`,
        norm :math:`\le 1`: the same sensitivity :math:`2/N` and charge) instead of :math:`\phi` alone; the
        solver fits the kernel block (noise :math:`\sigma/\sqrt{1-h}`) and a weight re-fit over a pool of
        candidates (:func:`dpkme.reduced_set.refit.refit_pool`, options from ``solver_options["refit"]``)
        then fits both blocks, stopping when the kernel features, the columns' cells and the pairs' cells
        are each within their own noise norm, over a pool of which a quarter are rows drawn from the
        released 1-way cells. Needs a solver with a ``refit`` option and non-negative weights
        (``pursuit-joint``, simplex or sub-simplex).
    marginal_share : float, optional
        :math:`h \in (0, 1)` (public; required with ``marginals``).
    privacy : PrivacySpec, optional
        The typed alternative to ``epsilon``, ``delta``, ``neighbouring``, ``calibration`` and ``noise``
        (:class:`~dpkme.privacy.spec.PrivacySpec`, resolved by :func:`~dpkme.privacy.spec.resolve`): its fields
        are used, and a loose argument that disagrees is a ValueError naming both. Its noise source must be
        honoured (:func:`~dpkme.privacy.spec.resolve_noise`): ``"os-entropy"`` needs ``random_state=None``,
        ``"opendp"`` is ``noise="opendp"``, and ``"seeded"`` needs an int ``random_state`` (the release is then
        a replayable demo labelled not private, exactly as with that ``random_state`` alone).

    Returns
    -------
    Release
        ``mechanism="algorithm2"``; ``params`` records J, the solver and its
        options, the feature seed stream and the residual norm in
        :math:`\mathcal H_\phi`.

    Examples
    --------
    A real release (fresh OS-entropy noise) asked for with a typed spec; it spends what its companion charge
    says:

    >>> import numpy as np
    >>> from dpkme.kernels import GaussianKernel
    >>> from dpkme.privacy.spec import PrivacySpec
    >>> from dpkme.release import algorithm2, algorithm2_charge
    >>> X = np.random.default_rng(0).normal(size=(500, 2))
    >>> spec = PrivacySpec(epsilon=1.0, delta=1e-6)
    >>> rel = algorithm2(X, kernel=GaussianKernel(lengthscale=1.0), n_points=10, n_features=200, privacy=spec)
    >>> rel.epsilon, rel.delta, rel.neighbouring, rel.noise_source, rel.metadata()["differentially_private"]
    (1.0, 1e-06, 'replace-one', 'os-entropy', True)
    >>> rel.charge.noise_multiplier == algorithm2_charge(n_private=500, privacy=spec).noise_multiplier
    True
    """
    epsilon, delta, neighbouring, calibration = resolve(privacy, epsilon=epsilon, delta=delta,
                                                        neighbouring=neighbouring, calibration=calibration)
    noise = resolve_noise(privacy, noise=noise, random_state=random_state, function="algorithm2")
    return run_algorithm2(   # the one orchestration (dpkme.release.core); X is summed in blocks in memory
        X, kernel=kernel, epsilon=epsilon, delta=delta, n_points=n_points, n_features=n_features, solver=solver, calibration=calibration,
        neighbouring=neighbouring, n_private=n_private, initial_points=initial_points, q_scale=q_scale,
        q_loc=q_loc, random_state=random_state, feature_dtype=feature_dtype, progress=progress,
        solver_options=solver_options, preset=preset, noise=noise, domain=domain, marginals=marginals,
        marginal_share=marginal_share)


def run_algorithm2(
    rows: RowSums | npt.ArrayLike | Callable[[], RowSums],
    *,
    kernel: Kernel,
    epsilon: float,
    delta: float,
    n_points: int,
    n_features: int,
    solver: str,
    calibration: str,
    neighbouring: str,
    n_private: int | str | None,
    count_share: float = 0.1,
    initial_points: npt.ArrayLike | None,
    q_scale: float,
    q_loc: npt.ArrayLike,
    random_state: int | np.random.Generator | None,
    feature_dtype: str,
    progress: Callable[[float, str], object] | None,
    solver_options: dict[str, Any] | None,
    preset: str,
    noise: str,
    domain: EmbeddedDomain | None,
    marginals: MarginalFeatures | None,
    marginal_share: float | None,
) -> Release:
    r"""Algorithm 2 over any :class:`RowSums`: the whole orchestration of :func:`dpkme.release.algorithm2`.

    Guarantee: :math:`(\varepsilon,\delta)`-DP with respect to ``neighbouring``: the Gaussian mechanism on
    the mean of unit-norm features (sensitivity :math:`2b/N` replace-one, :math:`b/N` add/remove; with
    ``marginals`` the joint map of :class:`~dpkme.kernels.marginal.JointFeatures`, norm :math:`\le 1`),
    the row count by ``n_private`` (:data:`N_POLICIES`); the solver and the weight re-fit are
    post-processing. Public arguments are validated before the rows are read.

    Parameters
    ----------
    rows : RowSums, array (N, D) or callable
        The private rows (an array in memory is summed by :class:`InMemoryRows`), or a function that opens
        them (called after the public arguments are validated).
    kernel, epsilon, delta, n_points, n_features, solver, calibration, neighbouring
        As :func:`dpkme.release.algorithm2` (``epsilon`` and ``delta`` resolved).
    n_private : None, int or "private"
        The row-count policy.
    count_share : float, default=0.1
        Share of :math:`\varepsilon` spent on the count with ``n_private="private"``.
    initial_points, q_scale, q_loc, random_state, feature_dtype, progress, solver_options, preset, noise
        As :func:`dpkme.release.algorithm2` (``noise`` resolved).
    domain, marginals, marginal_share
        As :func:`dpkme.release.algorithm2`.

    Returns
    -------
    Release
    """
    from ..privacy.calibration import check_noise_source

    t0 = time.perf_counter()
    epsilon, delta = check_release_args(kernel, epsilon, delta, calibration=calibration, neighbouring=neighbouring)
    policy = n_policy(n_private, neighbouring, count_share, noise)
    n_points = check_positive_int(n_points, name="n_points")
    n_features = check_positive_int(n_features, name="n_features", minimum=2)
    if n_features % 2:
        raise ValueError(f"n_features must be even (paired cos/sin features), got {n_features}.")
    spec = reduced_set.get_solver(solver)
    if domain is not None and not spec.honours_domain:
        raise ValueError(f"solver {spec.name!r} cannot honour a declared domain; use one of "
                         f"{sorted(n for n, s in SOLVERS.items() if s.honours_domain)}.")
    options = {**reduced_set.preset_options(spec.name, preset), **(solver_options or {})}
    check_noise_source(noise, random_state)
    rng, seed, noise_source = noise_rng(random_state)  # OS entropy: no seed recorded (not replayable)
    streams = spawn_streams(rng, 4 if policy == "private" else 3, fresh=noise_source == "os-entropy")
    rng_features, rng_solver = streams[0], streams[2]
    rng_noise: np.random.Generator | None = streams[1]
    if noise == "opendp":
        rng_noise, seed, noise_source = None, None, "opendp"  # OpenDP's own generator: not replayable
    reporter = reduced_set.Progress(progress)
    reporter(0.0, "drawing random features", force=True)
    src: Any = rows() if callable(rows) else rows
    dim, stage = shape_of(src)
    source_record = src.record if is_row_sums(src) else None
    domain = reduced_set.check_domain_object(domain, dim)  # public: validated before the data is read
    joint: float | JointFeatures | None   # the marginal share, then the joint map
    joint, refit_options = _check_marginals(marginals, marginal_share, spec=spec, options=options, dim=dim,
                                            domain=domain)
    features = RandomFourierFeatures(kernel, n_components=n_features, random_state=rng_features,
                                     dtype=feature_dtype).fit(dim)
    if joint is not None:
        assert marginals is not None           # _check_marginals: a share only with marginals
        joint = JointFeatures(features, marginals, share=joint)
    fmap: RandomFourierFeatures | JointFeatures = features if joint is None else joint

    # Stage 1 -- the only access to the private data: one sum over the rows, noised once here
    # (privatise_feature_mean: the one private step of Algorithm 2, in memory and on a cluster).
    record: dict[str, Any] = {}
    mu_tilde, _ = privatise_feature_mean(
        src, fmap, epsilon=epsilon, delta=delta, calibration=calibration, neighbouring=neighbouring, rng=rng_noise,
        n_private=n_private, noise=noise, count_share=count_share,
        count_rng=streams[3] if policy == "private" else None, progress=reporter.sub(0.0, stage), record=record)
    noisy: Privatised = record["noisy"]
    del src, rows, record["noisy"]  # nothing below may read the private data (or its unnoised sum)
    reporter(stage, "noisy mean feature vector computed", force=True)

    # Stage 2 -- post-processing of mu_tilde with public inputs only (sigma is public).
    sigma_kernel = noisy.sigma
    if joint is not None:
        mu_joint = mu_tilde
        mu_tilde, _, sigma_kernel, sigma_marginal = joint.split(mu_joint, noisy.sigma)
    if spec.accepts("noise_sigma"):
        options.setdefault("noise_sigma", sigma_kernel)
    solved = 1.0 if joint is None else max(0.8, stage + 0.75 * (1.0 - stage))   # then the joint re-fit
    sub = reporter.sub(stage, solved)
    result = reduced_set.reduce(
        mu_tilde, features, n_points=n_points, solver=spec.name, initial_points=initial_points,
        q_scale=q_scale, q_loc=q_loc, random_state=rng_solver, progress=sub, domain=domain, **options)
    extra: dict[str, Any] = {}
    refit_info = (getattr(result, "info", None) or {}).get("refit")
    if isinstance(refit_info, dict):   # pursuit-joint's pool re-fit: its diagnostics (pool, iterations, residuals)
        extra["refit"] = {k: v for k, v in refit_info.items() if isinstance(v, (bool, int, float, str))}
    if joint is not None:
        assert refit_options is not None       # _check_marginals: re-fit options with every share
        points, weights, extra = _joint_refit(result, joint, mu_joint, mu_tilde, noisy.sigma, sigma_kernel,
                                              sigma_marginal, rng=rng_solver, domain=domain, n_points=n_points,
                                              options=refit_options,
                                              progress=reporter.sub(solved, 1.0))
        result.points, result.weights = points, weights
        result.residual_norm = extra["marginals"]["kernel_residual"]
        options["refit"] = refit_options
    reporter.finish("release ready")
    return Release(
        points=result.points, weights=result.weights, mechanism="algorithm2", epsilon=epsilon, delta=delta,
        sigma=noisy.sigma, sensitivity=noisy.sensitivity, neighbouring=neighbouring, calibration=calibration,
        kernel=kernel, seed=seed, n_private=noisy.n_private, seconds=time.perf_counter() - t0,
        noise_source=noise_source,
        params={"n_points": n_points, "n_features": n_features, "solver": spec.name, "solver_options": options,
                "residual_norm": result.residual_norm, "achieved_delta": noisy.calibration.achieved_delta,
                "calibration_proven": noisy.calibration.proven, "q_scale": q_scale,
                "initial": "public points" if initial_points is not None else "domain" if domain is not None
                else "q",
                **({"domain": "declared"} if domain is not None else {}),
                "feature_dtype": feature_dtype, "solver_seconds": result.seconds, **extra,
                **policy_params(policy, source_record, noisy.params)},
        charge=noisy.charge,
    )



def _algorithm2_charge_of(cal: GaussianCalibration, neighbouring: str, label: str | None = None) -> PrivacyCharge:
    """The charge of Algorithm 2's Gaussian noise ``cal`` (the release's own and :func:`algorithm2_charge`'s)."""
    return gaussian_charge(label or "Algorithm 2", cal, relation=neighbouring, details={"mechanism": "algorithm2"})


def _check_marginals(marginals: MarginalFeatures | None, share: float | None, *, spec: reduced_set.SolverSpec,
                     options: dict[str, Any], dim: int, domain: EmbeddedDomain | None,
                     ) -> tuple[float | None, dict[str, Any] | None]:
    """Validate ``marginals``/``marginal_share`` (public); return the share (or None) and the re-fit options."""
    from ..kernels.marginal import MarginalFeatures, _check_share

    if marginals is None:
        if share is not None:
            raise ValueError(f"marginal_share={share!r} needs marginals=MarginalFeatures(schema); give both or neither.")
        return None, None
    if not isinstance(marginals, MarginalFeatures):
        raise ValueError(f"marginals must be a dpkme.kernels.marginal.MarginalFeatures, got {type(marginals).__name__}.")
    if share is None:
        raise ValueError("marginals need marginal_share (the public share h of the marginal block, 0 < h < 1).")
    h = _check_share(share)
    if marginals.n_features_in_ != dim:
        raise ValueError(f"the marginal cells are built for {marginals.n_features_in_} embedded coordinates but the "
                         f"rows have {dim}; build MarginalFeatures from the schema that encoded them.")
    if not spec.accepts("refit"):
        raise ValueError(f"marginals need a solver with a weight re-fit (pursuit-joint), not {spec.name!r}.")
    if options.get("weights", "simplex") not in ("simplex", "sub-simplex"):
        raise ValueError(f"marginals need non-negative weights (simplex or sub-simplex), got {options['weights']!r}.")
    if domain is None:
        raise ValueError("marginals need the declared domain of the same schema (domain=schema.domain).")
    if "refit" in options and options["refit"] is None:
        raise ValueError("marginals need the solver's weight re-fit, but solver_options has refit=None; drop it "
                         "(or give refit options) to use the marginal block, or leave marginals out.")
    refit = options.pop("refit", None)
    from ..reduced_set.pursuit import _check_refit

    return h, _check_refit({} if refit is None else refit)


def _joint_refit(result: ReducedSetResult, joint: JointFeatures, mu_joint: npt.NDArray[np.float64],
                 mu_kernel: npt.NDArray[np.float64], sigma: float, sigma_kernel: float, sigma_marginal: float, *,
                 rng: np.random.Generator, domain: EmbeddedDomain | None, n_points: int, options: dict[str, Any],
                 progress: reduced_set.Progress,
                 ) -> tuple[npt.NDArray[np.float64], npt.NDArray[np.float64], dict[str, Any]]:
    """Re-fit the solver's atoms' weights to both blocks of the joint vector (post-processing)."""
    from ..kernels.marginal import JointMap
    from ..reduced_set import FourierMap, Problem
    from ..reduced_set.refit import refit_pool

    fmap = FourierMap.from_features(joint.features)
    jmap = JointMap(fmap, joint.marginals, share=joint.share)
    w0 = np.asarray(result.weights, dtype=np.float64)
    if np.any(w0 < 0):
        raise ValueError("the solver returned negative weights; marginals need simplex or sub-simplex weights.")
    J = joint.n_kernel
    options = dict(options)
    max_bytes = int(options.get("max_bytes", 1 << 30))
    pool = int(options.get("pool_size", 12000))
    if 4 * pool * jmap.n_components > max_bytes:      # more cells than the default pool fits: a smaller pool
        options["pool_size"] = max(len(w0), max_bytes // (4 * jmap.n_components))
    # the discrepancy stop per block: the kernel features, the columns' cells and the pairs' cells, each within its
    # own noise norm (the many pair cells' noise would otherwise hide a poor fit of the few 1-way cells)
    H1 = joint.marginals.n_column_cells
    blocks = [(0, J), (J, J + H1)] + ([(J + H1, joint.n_components)] if joint.n_components > J + H1 else [])
    # a quarter of the pool drawn from the product of the *released* 1-way cells (post-processing): plausible rows
    # where uniform domain draws are not (many columns with a declared missing level, rare categories)
    pool = int(options.get("pool_size", 12000))
    cand = joint.marginals.sample(joint.marginals.histograms(joint.split(mu_joint)[1]), max(1, pool // 4), rng)
    # JointMap has the interface of a FourierMap that a weight re-fit needs (Problem is annotated with the latter)
    problem = Problem(mu_joint, jmap)  # type: ignore[arg-type]
    Z, w, info = refit_pool(problem, result.points, w0, rng=rng, domain=domain, noise_sigma=sigma,
                            max_atoms=n_points, noise_blocks=blocks, progress=progress, candidates=cand, **options)
    info["marginal_candidates"] = int(cand.shape[0])
    rk = fmap.residual(Z, w, mu_kernel)
    hist = joint.marginals.mean_embedding(Z, weights=w) - joint.split(mu_joint)[1]
    info = {**info, "kernel_residual": float(np.linalg.norm(rk)), "marginal_residual": float(np.linalg.norm(hist)),
            "share": joint.share, "kernel_block_sigma": sigma_kernel, "marginal_block_sigma": sigma_marginal,
            **joint.marginals.to_dict()}
    return Z, w, {"marginals": info}
