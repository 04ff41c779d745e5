r"""Algorithms 1 and 2 over out-of-core or distributed data: reduce the sums, noise once, post-process.

:func:`algorithm2` and :func:`algorithm1` are the in-memory :func:`dpkme.release.algorithm2` and
:func:`dpkme.release.algorithm1` with the private step replaced by a Dask reduction
(:mod:`dpkme.distributed.sums`): the same parameters, the same random streams, the same calibration
(:func:`~dpkme.privacy.calibration.calibrate_gaussian`), noise sampler
(:func:`~dpkme.privacy.calibration.add_gaussian_noise`) and post-processing (:func:`dpkme.reduced_set.reduce`;
:class:`~dpkme.release.subspace.SubspaceBasis` weights, shrinkage and projections). With the same integer
``random_state`` they give the in-memory release up to float64 rounding of the additions in another order.

Data flow. The public parts (random frequencies, points drawn from q, the Gram–Schmidt basis) are made on
the client without the data. The tasks on the cluster read the partitions and return one partial sum each;
a tree of additions on the cluster reduces them to :math:`S = \sum_n g(x_n)` and the row count, which
come back to the client, where the noise is added **once**. Only the noisy vector is handed to the
post-processing; the client drops every reference to the data and the sums before it runs, so nothing
after the noise can read the data again (``tests/distributed/test_release.py`` checks this with a source that
refuses to be read after the reduction).

The row count N (``n_private``), one of :data:`N_POLICIES`:

``"public"`` (``n_private=None``, replace-one only)
    Under replace-one (the paper's Definition 1) neighbouring tables have the same number of rows, so
    :math:`N` is the same for every neighbour: it is public by the neighbouring relation and is counted
    in the reduction; the release records it (and says so in ``params["n_policy"]``).
``"declared"`` (``n_private=N``, an int)
    A size known publicly. Under replace-one it must equal the count (else a ValueError, as in memory);
    under add/remove the sum is normalised by the declared :math:`N` (sensitivity :math:`b/N`), whatever
    the true count, exactly like :func:`dpkme._validation.public_size`.
``"private"`` (``n_private="private"``, add/remove only)
    Under add/remove the count differs between neighbours and is never read silently: a share
    ``count_share`` of :math:`\varepsilon` releases :math:`\tilde N = N + \mathrm{Lap}(1/\varepsilon_N)`
    (sensitivity 1, pure :math:`\varepsilon_N`-DP), the **sum** gets Gaussian noise calibrated to
    :math:`(\varepsilon - \varepsilon_N, \delta)` at its add/remove sensitivity (:math:`b` for the features,
    :math:`\sqrt a` for the kernel row sums: :math:`N = 1` in the usual formulas), and the normalised
    vector :math:`\tilde S/\max(\tilde N, 1)` is post-processing (the two shares are rounded so that
    :math:`\varepsilon_N + \varepsilon_S \le \varepsilon` in floating point, the Laplace scale up). An empty
    table is released like any other (under add/remove it is a neighbour of every one-row table, so a refusal
    would tell them apart); under replace-one it is refused (N is public). By basic composition the release is
    :math:`(\varepsilon, \delta)`-DP; the charge it reports is that composed total
    (``mechanism="approx-dp"``), and it records :math:`\tilde N` (rounded) as its size.

Without an ``n_private`` under add/remove the functions refuse to run (a ValueError saying which to choose).
"""

from __future__ import annotations

import math
import time
from typing import Callable

import numpy as np

from .. import reduced_set
from .._validation import (
    check_array,
    check_in,
    check_positive_int,
    noise_rng,
    public_size,
    spawn_streams,
)
from ..kernels.kernel import Kernel
from ..kernels.random_features import RandomFourierFeatures
from ..privacy.accounting import PrivacyCharge
from ..privacy.sensitivity import check_release_args, feature_mean_sensitivity, kme_sensitivity
from ..reduced_set import DEFAULT_SOLVER, SOLVERS
from ..release.random_features import _algorithm2_charge_of
from ..release.result import Release
from ..release.subspace import (
    DEFAULT_TOL,
    SubspaceBasis,
    _algorithm1_charge_of,
    draw_points_from_q,
    project_weights,
    shrink_coordinates,
)
from .sources import open_source
from .sums import feature_sums, kernel_row_sums

__all__ = ["N_POLICIES", "algorithm2", "algorithm1"]

#: How a release gets its row count N (module docstring).
N_POLICIES = ("public", "declared", "private")

_POLICY_NOTES = {
    "public": "N counted in the reduction: public under replace-one (neighbouring tables have the same size)",
    "declared": "N declared by the owner (public knowledge), not read from the rows",
    "private": "N released privately: a Laplace count with a declared share of epsilon, composed with the sum",
}


def _n_policy(n_private, neighbouring: str, count_share: float, noise: str) -> str:
    if isinstance(n_private, str):
        if n_private != "private":
            raise ValueError(f"n_private must be None, an int or 'private', got {n_private!r}.")
        if neighbouring != "add-remove":
            raise ValueError("n_private='private' is for add-remove: under replace-one N is public by the "
                             "neighbouring relation (counted at no cost); pass n_private=None.")
        if isinstance(count_share, bool) or not isinstance(count_share, (int, float)) or not 0 < count_share < 1:
            raise ValueError(f"count_share must be a number in (0, 1) (the share of epsilon spent on the count), "
                             f"got {count_share!r}.")
        if noise != "numpy":
            raise ValueError("n_private='private' draws its Laplace count with numpy; with noise='opendp' declare "
                             "n_private=N instead.")
        return "private"
    if n_private is None:
        if neighbouring == "add-remove":
            raise ValueError("under add-remove the row count differs between neighbours and is not read silently: "
                             "declare n_private=N (a size known publicly) or pass n_private='private' to release a "
                             "noisy count with a share count_share of epsilon.")
        return "public"
    check_positive_int(n_private, name="n_private")
    return "declared"


def _split_epsilon(epsilon: float, share: float) -> tuple[float, float, float]:
    r"""(:math:`\varepsilon_N`, :math:`\varepsilon_S`, Laplace scale): the count's and the sum's shares of
    :math:`\varepsilon`, rounded so that :math:`\varepsilon_N + \varepsilon_S \le \varepsilon` holds in floating
    point, and the scale :math:`b \ge 1/\varepsilon_N` rounded up (toward more noise)."""
    eps_n = float(share) * float(epsilon)
    eps_s = float(epsilon) - eps_n
    while eps_n + eps_s > epsilon:
        eps_s = math.nextafter(eps_s, 0.0)
    from ..privacy.calibration import _ratio_up

    return eps_n, eps_s, _ratio_up(1.0, eps_n)      # b >= 1/eps_N exactly (the real quotient), not in floats


def _private_count(count: int, *, epsilon: float, share: float, rng: np.random.Generator
                   ) -> tuple[float, float, float]:
    """(noisy count, its epsilon, the sum's epsilon): N + Lap(1/eps_N), sensitivity 1 under add/remove."""
    from ..privacy.calibration import laplace_noise

    eps_n, eps_s, scale = _split_epsilon(epsilon, share)
    return float(count) + float(laplace_noise((), scale=scale, rng=rng)), eps_n, eps_s


def _counted_size(count: int, n_private, neighbouring: str) -> int:
    """The public N of the "public" and "declared" policies; the count is read under replace-one only."""
    if n_private is None and count == 0:   # replace-one: N is public, and nothing can be released for 0 rows
        raise ValueError("the data has no rows.")
    return public_size(count if neighbouring == "replace-one" else 0, n_private, neighbouring=neighbouring)


def _composed_count_charge(label: str, mechanism: str, *, epsilon: float, delta: float, neighbouring: str,
                           count_epsilon: float, sum_epsilon: float) -> PrivacyCharge:
    """The charge of a Laplace count composed with the Gaussian sum (basic composition): ``"approx-dp"``, so that
    the accountants do not treat the whole release as one Gaussian mechanism."""
    return PrivacyCharge(label=label, mechanism="approx-dp", epsilon=epsilon, delta=delta, relation=neighbouring,
                         details={"mechanism": mechanism, "count_epsilon": count_epsilon, "sum_epsilon": sum_epsilon})


def _policy_params(policy: str, record: dict, **extra) -> dict:
    return {"n_policy": policy, "n_policy_note": _POLICY_NOTES[policy], "source": record, **extra}


def algorithm2(
    data,
    *,
    kernel: Kernel,
    epsilon: float,
    delta: float,
    n_points: int,
    n_features: int = 10000,
    solver: str = DEFAULT_SOLVER,
    calibration: str = "analytic",
    neighbouring: str = "replace-one",
    n_private=None,
    count_share: float = 0.1,
    initial_points=None,
    q_scale: float = 500.0,
    q_loc=0.0,
    random_state=None,
    feature_dtype: str = "float32",
    progress: Callable[[float, str], object] | None = None,
    solver_options: dict | None = None,
    preset: str = "accurate",
    noise: str = "numpy",
    domain=None,
    columns=None,
    bounds=None,
    clip: bool = False,
    client=None,
) -> Release:
    r"""Algorithm 2 of Balog et al. (2018) over a Dask source: reduced feature sum, noise once, reduced set.

    Guarantee: :math:`(\varepsilon,\delta)`-DP with respect to ``neighbouring``, as
    :func:`dpkme.release.algorithm2`: :math:`\tilde\mu = \frac1N\sum_n\phi(x_n) + \mathcal N(0,\sigma^2 I_J)`
    with unit-norm features (sensitivity :math:`2b/N` replace-one, :math:`b/N` add/remove), the sum
    computed partition by partition (:func:`~dpkme.distributed.sums.feature_sums`); the solver is
    post-processing. The row count follows ``n_private`` (:data:`N_POLICIES`, module docstring).

    Parameters
    ----------
    data : DataSource, ndarray, DataFrame, dask collection, or a Parquet / CSV path
        The private rows (:func:`~dpkme.distributed.sources.open_source`).
    kernel : Kernel
        Translation-invariant kernel with amplitude :math:`\le 1`.
    epsilon, delta : float
        Privacy parameters (:math:`\varepsilon > 0`, :math:`0<\delta<1`).
    n_points : int
        Number of synthetic points :math:`M`.
    n_features : int, default=10000
        :math:`J` (even).
    solver : str, default="pursuit-joint"
        A key of :data:`dpkme.reduced_set.SOLVERS`.
    calibration : {"analytic", "classic"}, default="analytic"
        Gaussian calibration.
    neighbouring : {"replace-one", "add-remove"}, default="replace-one"
        Neighbouring relation of the guarantee.
    n_private : None, int or "private"
        The row-count policy: ``None`` counts N (replace-one: public), an int declares it, ``"private"``
        releases a Laplace count (add/remove).
    count_share : float, default=0.1
        Share of :math:`\varepsilon` spent on the count with ``n_private="private"``.
    initial_points : array (K, D), optional
        Public points for the solver (default: draws from q).
    q_scale, q_loc
        Parameters of q (public).
    random_state : None, int or numpy.random.Generator
        As :func:`dpkme.release.algorithm2` (streams 0, 1, 2: frequencies, noise, solver; stream 3: the
        private count).
    feature_dtype : {"float32", "float64"}
        Precision of the feature evaluation.
    progress : callable, optional
        ``progress(fraction, message)``: the reduction (to 0.6), then the solver.
    solver_options : dict, optional
        Passed to the solver; overrides ``preset``.
    preset : {"accurate", "interactive"}
        Named solver options.
    noise : {"numpy", "opendp"}, default="numpy"
        Sampler of the Gaussian noise.
    domain : EmbeddedDomain, optional
        A declared domain for the solver's points (as in memory).
    columns : sequence of str, optional
        Declared columns (:func:`~dpkme.distributed.sources.open_source`).
    bounds : (lower, upper), optional
        Declared box; every partition is checked against it.
    clip : bool, default=False
        Clip rows to ``bounds`` instead of refusing values outside it (recorded).
    client : None, distributed.Client or str, default=None
        Where the partial sums run (:mod:`dpkme.distributed.sums`).

    Returns
    -------
    Release
        ``mechanism="algorithm2"``; ``params`` adds ``n_policy``, ``n_policy_note`` and ``source``
        (origin, declared columns, bounds, clip).

    Examples
    --------
    >>> import numpy as np
    >>> from dpkme.kernels import GaussianKernel
    >>> X = np.random.default_rng(0).normal(size=(2000, 2))
    >>> rel = algorithm2(X, kernel=GaussianKernel(lengthscale=1.0), epsilon=1.0, delta=1e-6, n_points=5,
    ...                  n_features=200, bounds=(-10.0, 10.0), preset="interactive")
    >>> rel.n_points, rel.n_private, rel.params["n_policy"]
    (5, 2000, 'public')
    """
    from ..privacy.calibration import add_gaussian_noise, calibrate_gaussian, check_noise_source

    t0 = time.perf_counter()
    epsilon, delta = check_release_args(kernel, epsilon, delta, calibration=calibration, neighbouring=neighbouring)
    policy = _n_policy(n_private, neighbouring, count_share, noise)
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
    rng, seed, noise_source = noise_rng(random_state)
    streams = spawn_streams(rng, 4 if policy == "private" else 3, fresh=noise_source == "os-entropy")
    rng_features, rng_noise, rng_solver = streams[:3]
    if noise == "opendp":
        rng_noise, seed, noise_source = None, None, "opendp"
    reporter = reduced_set.Progress(progress)
    reporter(0.0, "drawing random features", force=True)
    src = open_source(data, columns=columns, bounds=bounds, clip=clip)
    del data
    dim, record = src.dim, src.public_record()
    domain = reduced_set.check_domain_object(domain, dim)
    features = RandomFourierFeatures(kernel, n_components=n_features, random_state=rng_features,
                                     dtype=feature_dtype).fit(dim)

    # Stage 1 -- the only access to the private data: the reduced sum, noised once here.
    sums = feature_sums(src, features, client=client, progress=reporter.sub(0.0, 0.6))
    extra = {}
    if policy == "private":
        n_tilde, eps_n, eps_s = _private_count(sums.count, epsilon=epsilon, share=count_share, rng=streams[3])
        norm = max(n_tilde, 1.0)
        sens_sum = feature_mean_sensitivity(n=1, norm_bound=features.norm_bound, neighbouring=neighbouring)
        cal = calibrate_gaussian(epsilon=eps_s, delta=delta, sensitivity=sens_sum, method=calibration)
        mu_tilde = add_gaussian_noise(sums.total, sigma=cal.sigma, rng=rng_noise, noise=noise) / norm
        sigma, sens, n_pub = cal.sigma / norm, sens_sum / norm, max(int(round(n_tilde)), 1)
        extra = {"count_epsilon": eps_n, "sum_epsilon": eps_s, "count_share": float(count_share)}
        charge = _composed_count_charge("Algorithm 2", "algorithm2", epsilon=epsilon, delta=delta,
                                        neighbouring=neighbouring, count_epsilon=eps_n, sum_epsilon=eps_s)
    else:
        n_pub = _counted_size(sums.count, n_private, neighbouring)
        sens = feature_mean_sensitivity(n=n_pub, norm_bound=features.norm_bound, neighbouring=neighbouring)
        cal = calibrate_gaussian(epsilon=epsilon, delta=delta, sensitivity=sens, method=calibration)
        mu_tilde = add_gaussian_noise(sums.total / n_pub, sigma=cal.sigma, rng=rng_noise, noise=noise)
        sigma = cal.sigma
        charge = _algorithm2_charge_of(cal, neighbouring)
    del sums, src  # nothing below may read the private data (or its unnoised sums)
    reporter(0.6, "noisy mean feature vector computed", force=True)

    # Stage 2 -- post-processing of mu_tilde with public inputs only (sigma is public).
    if spec.accepts("noise_sigma"):
        options.setdefault("noise_sigma", sigma)
    result = reduced_set.reduce(
        mu_tilde, features, n_points=n_points, solver=spec.name, initial_points=initial_points,
        q_scale=q_scale, q_loc=q_loc, random_state=rng_solver, progress=reporter.sub(0.6, 1.0), domain=domain,
        **options)
    reporter.finish("release ready")
    return Release(
        points=result.points, weights=result.weights, mechanism="algorithm2", epsilon=epsilon, delta=delta,
        sigma=sigma, sensitivity=sens, neighbouring=neighbouring, calibration=calibration, kernel=kernel, seed=seed,
        n_private=n_pub, seconds=time.perf_counter() - t0, noise_source=noise_source,
        params={"n_points": n_points, "n_features": n_features, "solver": spec.name, "solver_options": options,
                "residual_norm": result.residual_norm, "achieved_delta": cal.achieved_delta,
                "calibration_proven": cal.proven, "q_scale": q_scale,
                "initial": "public points" if initial_points is not None else "domain" if domain is not None
                else "q",
                **({"domain": "declared"} if domain is not None else {}),
                "feature_dtype": feature_dtype, "solver_seconds": result.seconds,
                **_policy_params(policy, record, **extra)},
        charge=charge,
    )


def algorithm1(
    data,
    Z=None,
    *,
    kernel: Kernel,
    epsilon: float,
    delta: float,
    n_points: int | None = None,
    q_scale: float | None = None,
    q_center=None,
    points_are_sample: bool = False,
    calibration: str = "analytic",
    neighbouring: str = "replace-one",
    sensitivity: str = "tight",
    basis: str = "full",
    tol: float = DEFAULT_TOL,
    weights: str = "free",
    l1_radius: float = 1.0,
    n_private=None,
    count_share: float = 0.1,
    random_state=None,
    basis_cache: SubspaceBasis | None = None,
    noise: str = "numpy",
    point_domain=None,
    columns=None,
    bounds=None,
    clip: bool = False,
    client=None,
    progress: Callable[[float, str], object] | None = None,
) -> Release:
    r"""Algorithm 1 of Balog et al. (2018) over a Dask source: reduced kernel row sums, noise once, weights.

    Guarantee: :math:`(\varepsilon,\delta)`-DP with respect to ``neighbouring``, as
    :func:`dpkme.release.algorithm1`: Gaussian noise on the coordinates
    :math:`\alpha = L^{-1}\bar k_A` of the projected KME, :math:`\bar k_m = \frac1N\sum_n k(z_m, x_n)`
    summed partition by partition (:func:`~dpkme.distributed.sums.kernel_row_sums`), :math:`\sigma`
    calibrated to :func:`~dpkme.privacy.sensitivity.kme_sensitivity` (with the declared ``bounds`` as its
    box, like the in-memory ``domain``). Points, basis, weights and shrinkage are public or
    post-processing. The row count follows ``n_private`` (:data:`N_POLICIES`).

    Parameters
    ----------
    data : DataSource, ndarray, DataFrame, dask collection, or a Parquet / CSV path
        The private rows (:func:`~dpkme.distributed.sources.open_source`).
    Z : array (M, D), optional
        Public synthetic points; default: ``n_points`` draws from q (or ``point_domain``).
    kernel : Kernel
        Bounded kernel, :math:`k(x,x) \le 1`.
    epsilon, delta : float
        Privacy parameters.
    n_points : int, optional
        :math:`M` when ``Z`` is drawn.
    q_scale : float, optional
        Standard deviation of q.
    q_center : float or array (D,), optional
        Mean of q (public; default 0).
    points_are_sample : bool, default=False
        ``Z`` is a publishable subset.
    calibration : {"analytic", "classic"}, default="analytic"
        Gaussian calibration.
    neighbouring : {"replace-one", "add-remove"}, default="replace-one"
        Neighbouring relation.
    sensitivity : {"tight", "paper"}, default="tight"
        Sensitivity mode (:func:`~dpkme.privacy.sensitivity.kme_sensitivity`).
    basis : {"full", "auto"}, default="full"
        ``"auto"`` adds the public shrinkage of :func:`dpkme.release.algorithm1`.
    tol : float, default=DEFAULT_TOL
        Gram–Schmidt threshold.
    weights : {"free", "simplex", "l1"}, default="free"
        Projection of the weights (post-processing).
    l1_radius : float, default=1.0
        Radius of the L1 ball.
    n_private : None, int or "private"
        The row-count policy (:data:`N_POLICIES`).
    count_share : float, default=0.1
        Share of :math:`\varepsilon` spent on the count with ``n_private="private"``.
    random_state : None, int or numpy.random.Generator
        As :func:`dpkme.release.algorithm1` (streams 0, 1: points, noise; stream 2: the private count).
    basis_cache : SubspaceBasis, optional
        A basis already fitted on ``Z``.
    noise : {"numpy", "opendp"}, default="numpy"
        Sampler of the Gaussian noise.
    point_domain : EmbeddedDomain, optional
        Declared domain to draw the points from (instead of q).
    columns : sequence of str, optional
        Declared columns.
    bounds : (lower, upper), optional
        Declared box: every partition is checked against it, and it tightens the replace-one sensitivity.
    clip : bool, default=False
        Clip rows to ``bounds`` instead of refusing values outside it (recorded).
    client : None, distributed.Client or str, default=None
        Where the partial sums run.
    progress : callable, optional
        ``progress(fraction, message)`` during the reduction.

    Returns
    -------
    Release
        ``mechanism="algorithm1"``; ``params`` adds ``n_policy``, ``n_policy_note`` and ``source``.

    Examples
    --------
    >>> import numpy as np
    >>> from dpkme.kernels import GaussianKernel
    >>> X = np.random.default_rng(0).uniform(size=(2000, 2))
    >>> rel = algorithm1(X, kernel=GaussianKernel(lengthscale=0.5), epsilon=1.0, delta=1e-6, n_points=20,
    ...                  q_scale=1.0, bounds=(0.0, 1.0))
    >>> rel.n_points, rel.params["n_policy"], rel.params["domain"]
    (20, 'public', [[0.0, 0.0], [1.0, 1.0]])
    """
    from ..privacy.calibration import add_gaussian_noise, calibrate_gaussian, check_noise_source

    t0 = time.perf_counter()
    epsilon, delta = check_release_args(kernel, epsilon, delta, calibration=calibration, neighbouring=neighbouring,
                                        sensitivity=sensitivity)
    check_in(basis, {"full", "auto"}, name="basis")
    check_in(weights, {"free", "simplex", "l1"}, name="weights")
    policy = _n_policy(n_private, neighbouring, count_share, noise)
    src = open_source(data, columns=columns, bounds=bounds, clip=clip)
    del data
    dim, record, domain = src.dim, src.public_record(), src.bounds
    check_noise_source(noise, random_state)
    rng, seed, noise_source = noise_rng(random_state)
    streams = spawn_streams(rng, 3 if policy == "private" else 2, fresh=noise_source == "os-entropy")
    rng_public, rng_noise = streams[:2]
    if noise == "opendp":
        seed, noise_source = None, "opendp"
    if Z is not None and point_domain is not None:
        raise ValueError("give either public points Z or a point_domain to draw them from, not both.")
    if Z is None and point_domain is not None:
        if n_points is None:
            raise ValueError("give n_points to draw the points from point_domain.")
        m = check_positive_int(n_points, name="n_points")
        Z = reduced_set.PointSource(dim, domain=point_domain).take(m, rng_public)
        source = "domain"
    elif Z is None:
        if n_points is None or q_scale is None:
            raise ValueError("give public points Z, or n_points and q_scale to draw them from q.")
        Z = draw_points_from_q(n_points, dim, scale=q_scale, rng=rng_public, center=q_center)
        source = "q"
    else:
        Z = check_array(Z, name="Z", n_features=dim)
        source = "public"
    if basis_cache is not None:
        if basis_cache.points.shape != Z.shape or not np.array_equal(basis_cache.points, Z) \
                or basis_cache.kernel != kernel or basis_cache.tol != tol:
            raise ValueError("basis_cache was fitted on different points, kernel or tol.")
        B = basis_cache
    else:
        B = SubspaceBasis.fit(Z, kernel=kernel, tol=tol)

    # --- the only access to the private data: the reduced row sums, noised once here ---
    sums = kernel_row_sums(src, Z, kernel=kernel, client=client, progress=progress)
    extra = {}
    if policy == "private":
        n_tilde, eps_n, eps_s = _private_count(sums.count, epsilon=epsilon, share=count_share, rng=streams[2])
        norm = max(n_tilde, 1.0)
        sens_sum = kme_sensitivity(n=1, kernel=kernel, neighbouring=neighbouring, mode=sensitivity, domain=domain)
        cal = calibrate_gaussian(epsilon=eps_s, delta=delta, sensitivity=sens_sum, method=calibration)
        beta = add_gaussian_noise(B.coordinates(sums.total), sigma=cal.sigma,
                                  rng=rng_noise if noise == "numpy" else None, noise=noise) / norm
        sigma, sens, n_pub = cal.sigma / norm, sens_sum / norm, max(int(round(n_tilde)), 1)
        extra = {"count_epsilon": eps_n, "sum_epsilon": eps_s, "count_share": float(count_share)}
        charge = _composed_count_charge("Algorithm 1", "algorithm1", epsilon=epsilon, delta=delta,
                                        neighbouring=neighbouring, count_epsilon=eps_n, sum_epsilon=eps_s)
    else:
        n_pub = _counted_size(sums.count, n_private, neighbouring)
        if source == "public" and points_are_sample and Z.shape[0] > n_pub:   # the public N, never the count
            raise ValueError(f"a publishable subset cannot have more rows (M={Z.shape[0]}) than the private data "
                             f"(N={n_pub}); use fewer public points.")
        sens = kme_sensitivity(n=n_pub, kernel=kernel, neighbouring=neighbouring, mode=sensitivity, domain=domain)
        cal = calibrate_gaussian(epsilon=epsilon, delta=delta, sensitivity=sens, method=calibration)
        beta = add_gaussian_noise(B.coordinates(sums.total / n_pub), sigma=cal.sigma,
                                  rng=rng_noise if noise == "numpy" else None, noise=noise)
        sigma = cal.sigma
        charge = _algorithm1_charge_of(cal, neighbouring)
    del sums, src  # nothing below may read the private data (or its unnoised sums)

    # --- post-processing of beta with public inputs only ---
    if basis == "auto":
        beta = shrink_coordinates(B, beta, sigma, points_are_sample=points_are_sample and source == "public")
    w = B.weights(beta)
    if weights != "free":
        w = project_weights(w, kernel.gram(Z), constraint="simplex" if weights == "simplex" else "l1",
                            radius=l1_radius)
    return Release(
        points=Z, weights=w, mechanism="algorithm1", epsilon=epsilon, delta=delta, sigma=sigma,
        sensitivity=sens, neighbouring=neighbouring, calibration=calibration, kernel=kernel, seed=seed,
        n_private=n_pub, seconds=time.perf_counter() - t0, noise_source=noise_source,
        params={"n_points": int(Z.shape[0]), "basis_dim": B.dim, "basis": basis, "tol": tol,
                "points_source": source, "q_scale": q_scale, "weights": weights,
                "sensitivity_mode": sensitivity, "achieved_delta": cal.achieved_delta,
                "calibration_proven": cal.proven,
                "domain": None if domain is None else [domain[0].tolist(), domain[1].tolist()], "clip": bool(clip),
                **_policy_params(policy, record, **extra)},
        charge=charge,
    )
