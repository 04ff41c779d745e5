r"""Privacy–utility curves of Algorithm 1 over every prefix of the synthetic points.

One in-order factorisation (:class:`dpkme.release.subspace.SubspaceBasis`) serves every
number of points :math:`M' \le M`, and the RKHS distances have closed forms in
the orthonormal coordinates, so a whole curve costs about as much as one
release. With :math:`\alpha` the coordinates of the projected KME and
:math:`F = F(M')` the basis size of the first :math:`M'` points:

.. math::
    \text{projection}^2 &= \overline{K_{XX}} - \|\alpha_{1:F}\|^2, \\
    \text{Algorithm 1}^2 &= \text{projection}^2 + \|\tilde\alpha_{1:F} - \alpha_{1:F}\|^2,
    \qquad \tilde\alpha = \beta \text{ (or its shrunk version)}, \\
    \text{baseline}^2 &= \overline{K_{XX}} - \frac{2}{M'}\sum_{m\le M'}\bar k_m
    + \frac{1}{M'^2}\mathbf 1^\top K_{Z_{:M'}Z_{:M'}}\mathbf 1 .

The first two use the orthonormality of the basis (they are checked against the
direct :math:`w^\top K w - 2w^\top\bar k + \overline{K_{XX}}` formula in the
tests). Every noisy value is an independent draw of the mechanism for that
:math:`M'` and ε. This module reads the private data: it is for evaluation,
teaching and reproductions, not for releases.
"""

from __future__ import annotations

import math
import time
from collections.abc import Callable
from dataclasses import dataclass, field

import numpy as np

from ._validation import check_array, check_in, check_positive_int, check_random_state
from .kernels.kernel import Kernel
from .privacy.sensitivity import kme_sensitivity
from .release.subspace import DEFAULT_TOL, SubspaceBasis, shrink_coordinates

__all__ = ["paper_m_grid", "SubspaceCurves", "subspace_curves", "RandomFeatureCurves", "alg2_curves"]


def paper_m_grid(max_m: int, n: int = 100) -> list[int]:
    """The paper's grid: ``int(exp(t))`` for ``t`` in ``linspace(0, ln max_m, n)``, deduplicated, plus ``max_m``.

    Parameters
    ----------
    max_m : int
        Largest number of synthetic points :math:`M` (>= 1); always the last
        entry of the grid.
    n : int, default=100
        Number of log-spaced values before rounding down and deduplication (the
        paper's figures use 100); the grid has at most ``n + 1`` entries and
        fewer for small ``max_m``, where the small values coincide.

    Returns
    -------
    list of int
        Increasing, distinct values in ``[1, max_m]``, roughly evenly spaced on
        a log scale.

    Examples
    --------
    >>> paper_m_grid(100, n=10)
    [1, 2, 4, 7, 12, 21, 35, 59, 100]
    """
    max_m = check_positive_int(max_m, name="max_m")
    ms = sorted({int(math.exp(t)) for t in np.linspace(0.0, math.log(max_m), n)} | {max_m})
    return [m for m in ms if 1 <= m <= max_m]


@dataclass
class SubspaceCurves:
    r"""RKHS distances on a grid of M for several ε (lists aligned with ``m_grid``).

    Made by :func:`subspace_curves`; every distance is
    :math:`\|\hat\mu_X - \sum_m w_m k(z_m, \cdot)\|_{\mathcal H}` in the units of
    the kernel's RKHS norm (the formulas are in the module docstring).

    Parameters
    ----------
    m_grid : list of int
        The numbers of points :math:`M'` evaluated (increasing); the first
        :math:`M'` public points are used for each.
    epsilons : list of float
        Privacy parameters :math:`\varepsilon`, one curve of ``alg1`` each.
    delta : float
        Privacy parameter :math:`\delta` shared by all curves.
    baseline : list of float
        Distance of the uniformly weighted first :math:`M'` points (no noise,
        no privacy: the paper's "baseline").
    projection : list of float
        Distance of the noise-free projection of :math:`\hat\mu_X` onto the span
        of the first :math:`M'` points: the floor Algorithm 1 approaches as
        :math:`\varepsilon \to \infty`. Non-increasing in :math:`M'`.
    alg1 : list of list of float
        Per ε, the Algorithm 1 distance at each :math:`M'`, averaged over the
        repetitions.
    alg1_reps : list of list of list of float
        Per ε and per repetition, the Algorithm 1 distance at each :math:`M'`
        (independent noise draws).
    sigmas : list of float
        Per ε, the calibrated noise standard deviation :math:`\sigma` of each
        basis coordinate.
    basis_dims : list of int
        Per :math:`M'`, the dimension :math:`F(M')` of the Gram–Schmidt basis of
        the first :math:`M'` points (points within ``tol`` of the span are skipped).
    mean_kxx : float
        :math:`\overline{K_{XX}} = \|\hat\mu_X\|^2_{\mathcal H}`, the mean of the
        private Gram matrix.
    seconds : dict of str to float, default={}
        Wall-clock seconds of the stages (``"kernel_sums"``, ``"basis"``,
        ``"sweep"``).
    """

    m_grid: list[int]
    epsilons: list[float]
    delta: float
    baseline: list[float]
    projection: list[float]
    alg1: list[list[float]]                      # per ε, mean over repetitions
    alg1_reps: list[list[list[float]]]           # per ε, per repetition
    sigmas: list[float]
    basis_dims: list[int]
    mean_kxx: float
    seconds: dict = field(default_factory=dict)


def _prefix_baseline(kbar: np.ndarray, lower: np.ndarray, a: float, mean_kxx: float, ms: list[int]) -> list[float]:
    csum_k = np.cumsum(kbar)
    csum_l = np.cumsum(lower)
    out = []
    for m in ms:
        zz = (2.0 * csum_l[m - 1] + m * a) / m**2
        out.append(math.sqrt(max(mean_kxx - 2.0 * csum_k[m - 1] / m + zz, 0.0)))
    return out


def subspace_curves(
    X,
    Z,
    *,
    kernel: Kernel,
    epsilons,
    delta: float,
    m_grid: list[int] | None = None,
    reps: int = 1,
    calibration: str = "analytic",
    sensitivity: str = "tight",
    neighbouring: str = "replace-one",
    basis: str = "full",
    tol: float = DEFAULT_TOL,
    points_are_sample: bool = False,
    z_is_prefix_of_x: bool = False,
    mean_kxx: float | None = None,
    random_state=None,
    progress: Callable[[float, str], None] | None = None,
) -> SubspaceCurves:
    r"""Baseline, noise-free projection and Algorithm 1 distances for every M on a grid.

    Parameters
    ----------
    X : array (N, D)
        Private data (read for evaluation).
    Z : array (M, D)
        Public points, in order; prefixes of it are evaluated.
    kernel : Kernel
        Kernel of the embedding, with :math:`k(x, x) \le 1` (the sensitivity
        assumes it).
    epsilons : iterable of float
        Privacy parameters :math:`\varepsilon`, one curve each.
    delta : float
        Privacy parameter :math:`\delta` in (0, 1), shared by all curves.
    m_grid : list of int, optional
        Numbers of points :math:`M'` to evaluate, each in ``[1, M]``
        (deduplicated and sorted). Default: :func:`paper_m_grid` of ``M``.
    reps : int, default=1
        Independent noise draws per (ε, :math:`M'`); ``alg1`` is their mean.
    calibration : {"analytic", "classic"}, default="analytic"
        Gaussian calibration of :math:`\sigma`
        (:func:`dpkme.privacy.calibration.calibrate_gaussian`); the paper used
        ``"classic"``.
    sensitivity : {"tight", "paper"}, default="tight"
        L2 sensitivity of the KME (:func:`dpkme.privacy.sensitivity.kme_sensitivity`):
        :math:`\sqrt{2a - 2k_{\min}}/N` or the paper's :math:`2\sqrt a/N`.
    neighbouring : {"replace-one", "add-remove"}, default="replace-one"
        Neighbouring relation of the guarantee the noise is calibrated for.
    basis : {"full", "auto"}
        See :func:`dpkme.release.subspace.algorithm1`.
    tol : float, default=DEFAULT_TOL
        Gram–Schmidt acceptance threshold on the squared residual norm of a new
        point, relative to :math:`k(z, z)` (the paper's code: :math:`10^{-5}`).
    points_are_sample : bool, default=False
        Declare ``Z`` a publishable subset of the population; with
        ``basis="auto"`` it enables the public shrinkage target.
    z_is_prefix_of_x : bool
        ``Z`` equals ``X[:M]`` (the paper's publishable subset). Then one
        symmetric pass over ``X`` yields :math:`\overline{K_{XX}}`, :math:`\bar k`
        and the baseline sums together.
    mean_kxx : float, optional
        A known :math:`\overline{K_{XX}}` (skips its :math:`O(N^2)` computation).
    random_state : None, int or numpy.random.Generator
        Source of the noise draws (one standard normal vector of length
        :math:`F(M')` per ε, repetition and :math:`M'`).
    progress : callable, optional
        ``progress(fraction, message)``; raising inside it cancels the sweep.

    Returns
    -------
    SubspaceCurves
        Baseline, projection and Algorithm 1 distances on the grid.

    Examples
    --------
    >>> import numpy as np
    >>> from dpkme.kernels import GaussianKernel
    >>> X = np.random.default_rng(0).normal(size=(200, 2))
    >>> c = subspace_curves(X, X[:20], kernel=GaussianKernel(lengthscale=1.0), epsilons=[1.0], delta=1e-6,
    ...                     m_grid=[5, 10, 20], z_is_prefix_of_x=True, random_state=0)
    >>> c.basis_dims
    [5, 10, 20]
    >>> bool(np.all(np.diff(c.projection) <= 0) and np.all(np.array(c.alg1[0]) >= c.projection))
    True
    """
    from .privacy.calibration import calibrate_gaussian

    X = check_array(X, name="X")
    Z = check_array(Z, name="Z", n_features=X.shape[1])
    check_in(basis, {"full", "auto"}, name="basis")
    reps = check_positive_int(reps, name="reps")
    n, m_max = X.shape[0], Z.shape[0]
    ms = paper_m_grid(m_max) if m_grid is None else sorted({check_positive_int(m, name="M", maximum=m_max) for m in m_grid})
    eps_list = [float(e) for e in epsilons]
    rng, _ = check_random_state(random_state)
    report = progress or (lambda f, msg: None)
    a = kernel.diag_value
    secs = {}

    t = time.perf_counter()
    report(0.0, "kernel sums over the private data")
    # One pass over the N^2/2 pairs gives everything when Z is a prefix of X, unless the spectral sums apply
    # (Gaussian kernel, D <= 2: mean of K_XX and the row means in O(N K^D)).
    if (z_is_prefix_of_x and m_max <= n and np.array_equal(Z, X[:m_max]) and mean_kxx is None
            and not kernel.spectral_sums_available(X)):
        # lower sums are needed only for the prefix Z = X[:m_max] (its row means and its own triangle);
        # 1' K 1 = 2 * sum(upper) + N a, so the column sums of the other rows are never formed
        lower, upper = kernel.triangular_row_sums(X, lower_rows=m_max)
        mean_kxx = float((2.0 * upper.sum() + n * a) / n**2)
        kbar = (lower[:m_max] + upper[:m_max] + a) / n
        lower_z = lower[:m_max]
    else:
        if mean_kxx is None:
            mean_kxx = kernel.mean_gram(X)
        kbar = kernel.row_means(Z, X)
        lower_z, _ = kernel.triangular_row_sums(Z)
    secs["kernel_sums"] = time.perf_counter() - t

    t = time.perf_counter()
    report(0.5, "orthonormal basis of the public points")
    B = SubspaceBasis.fit(Z, kernel=kernel, tol=tol)
    alpha = B.coordinates(kbar)
    secs["basis"] = time.perf_counter() - t

    t = time.perf_counter()
    fs = [int(f) for f in B.dim_for_prefix(ms)]
    csum_a2 = np.concatenate([[0.0], np.cumsum(alpha**2)])
    projection = [math.sqrt(max(mean_kxx - csum_a2[f], 0.0)) for f in fs]
    baseline = _prefix_baseline(kbar, lower_z, a, mean_kxx, ms)
    delta2 = kme_sensitivity(n=n, kernel=kernel, neighbouring=neighbouring, mode=sensitivity)
    cals = [calibrate_gaussian(epsilon=e, delta=delta, sensitivity=delta2, method=calibration) for e in eps_list]
    targets = _prefix_targets(B, ms, points_are_sample) if basis == "auto" else None
    alg1_reps = [[[0.0] * len(ms) for _ in range(reps)] for _ in eps_list]
    for i, (m, f) in enumerate(zip(ms, fs)):
        for e_idx, cal in enumerate(cals):
            for r in range(reps):
                noise = cal.sigma * rng.standard_normal(f)
                if basis == "auto":
                    target, key = targets[i]
                    shrunk = shrink_coordinates(B, alpha[:f] + noise, cal.sigma, points_are_sample=points_are_sample,
                                                target=target, key=key)
                    err2 = float(np.sum((shrunk - alpha[:f]) ** 2))
                else:
                    err2 = float(noise @ noise)
                alg1_reps[e_idx][r][i] = math.sqrt(projection[i] ** 2 + err2)
        report(0.6 + 0.4 * (i + 1) / len(ms), f"M = {m}")
    alg1 = [np.mean(np.asarray(per_eps), axis=0).tolist() for per_eps in alg1_reps]
    secs["sweep"] = time.perf_counter() - t
    return SubspaceCurves(m_grid=ms, epsilons=eps_list, delta=float(delta), baseline=baseline,
                          projection=projection, alg1=alg1, alg1_reps=alg1_reps,
                          sigmas=[c.sigma for c in cals], basis_dims=fs, mean_kxx=float(mean_kxx), seconds=secs)


def _prefix_targets(B: SubspaceBasis, ms: list[int], points_are_sample: bool):
    """Public shrinkage targets and uncertainty keys for every prefix (column sums of G per prefix)."""
    from .release.subspace import _public_target

    out = []
    if not points_are_sample:
        for m in ms:
            f = int(B.dim_for_prefix(m))
            out.append((np.zeros(f), np.full(f, np.inf)))
        return out
    pos = B.accepted
    own = np.diag(B.factor)
    for m in ms:
        f = int(B.dim_for_prefix(m))
        s1, s2 = B.column_sums(m, f)
        out.append(_public_target(s1, s2, own[:f], pos[:f], m))
    return out


@dataclass
class RandomFeatureCurves:
    r"""RKHS distances of Algorithm 2 releases on a grid of M for several ε.

    Made by :func:`alg2_curves`; distances are under the exact kernel (not its
    random-feature approximation), in the units of its RKHS norm.

    Parameters
    ----------
    m_grid : list of int
        The numbers of synthetic points :math:`M` evaluated (increasing).
    epsilons : list of float
        Privacy parameters :math:`\varepsilon`, one curve of ``alg2`` each.
    delta : float
        Privacy parameter :math:`\delta` shared by all curves.
    alg2 : list of list of float
        Per ε, the distance at each :math:`M`, averaged over the repetitions.
    alg2_reps : list of list of list of float
        Per ε and per repetition, the distance at each :math:`M` (the values of
        one repetition share its noisy :math:`\tilde\mu`).
    sigmas : list of float
        Per ε, the calibrated noise standard deviation of each feature.
    n_features : int
        Number of random features :math:`J`.
    solver : str
        Name of the reduced-set solver used (:mod:`dpkme.reduced_set`).
    mean_kxx : float
        :math:`\overline{K_{XX}} = \|\hat\mu_X\|^2_{\mathcal H}`.
    seconds : dict of str to float, default={}
        Wall-clock seconds (``"total"``).
    """

    m_grid: list[int]
    epsilons: list[float]
    delta: float
    alg2: list[list[float]]                      # per ε, mean over repetitions
    alg2_reps: list[list[list[float]]]           # per ε, per repetition
    sigmas: list[float]
    n_features: int
    solver: str
    mean_kxx: float
    seconds: dict = field(default_factory=dict)


def alg2_curves(
    X,
    *,
    kernel: Kernel,
    epsilons,
    delta: float,
    m_grid: list[int],
    reps: int = 1,
    n_features: int = 1000,
    solver: str | None = None,
    preset: str = "accurate",
    solver_options: dict | None = None,
    calibration: str = "analytic",
    neighbouring: str = "replace-one",
    initial_points=None,
    q_scale: float = 500.0,
    q_loc=0.0,
    domain=None,
    mean_kxx: float | None = None,
    random_state=None,
    progress: Callable[[float, str], None] | None = None,
) -> RandomFeatureCurves:
    r"""Exact-kernel RKHS distances of Algorithm 2 for every ε, repetition and M of ``m_grid``.

    One feature map (drawn once from ``random_state``), and per (ε, repetition)
    one privatised mean feature vector and one solver run that stores its
    solution at every M of the grid (``report_at``), so a curve costs one
    release of the largest M per (ε, repetition). Every value is an independent
    draw of the mechanism for that ε (the M values of one run share its noise,
    as nested releases of one :math:`\tilde\mu`). Distances are measured under
    the exact kernel against the private data: evaluation only.

    Parameters
    ----------
    X : array (N, D)
        Private data (privatised by the releases, read again for evaluation).
    kernel : Kernel
        Translation-invariant kernel with :math:`k(x, x) \le 1`; the features
        approximate it and the distances use it exactly.
    epsilons : iterable of float
        Privacy parameters :math:`\varepsilon` (at least one), one curve each.
    delta : float
        Privacy parameter :math:`\delta` in (0, 1), shared by all curves.
    m_grid : list of int
        Numbers of synthetic points :math:`M` (at least one, each >= 1;
        deduplicated and sorted). One solver run to the largest serves all.
    reps : int, default=1
        Independent releases per ε; ``alg2`` is their mean.
    n_features : int, default=1000
        Number of random Fourier features :math:`J` (even), see
        :class:`dpkme.kernels.RandomFourierFeatures`.
    solver : str or None, default=None
        Reduced-set solver (:func:`dpkme.reduced_set.list_solvers`); ``None`` is
        :data:`dpkme.reduced_set.DEFAULT_SOLVER`.
    preset : {"accurate", "interactive"}, default="accurate"
        Named option set of the solver (:data:`dpkme.reduced_set.PRESETS`).
    solver_options : dict, optional
        Further solver options; they override the preset.
    calibration : {"analytic", "classic"}, default="analytic"
        Gaussian calibration of :math:`\sigma`.
    neighbouring : {"replace-one", "add-remove"}, default="replace-one"
        Neighbouring relation of the guarantee; the sensitivity of the mean
        feature vector is :math:`2/N` or :math:`1/N` (Proposition 9).
    initial_points : array (K, D), optional
        Public initial locations or candidate pool of the solver; default: draws
        from :math:`q`.
    q_scale : float, default=500.0
        Standard deviation of :math:`q = \mathcal N(\text{q\_loc}, \text{q\_scale}^2 I)`
        (the paper's :math:`\sigma_q = 500`).
    q_loc : float or array (D,), default=0.0
        Mean of :math:`q` (public).
    domain : EmbeddedDomain, optional
        A declared (public) domain of the points, e.g. a schema's domain or
        :meth:`dpkme.preprocessing.DeclaredScaling.box_domain`: the solver's
        points are drawn uniformly from it and kept inside it
        (:func:`dpkme.reduced_set.reduce`); the solver must honour domains.
    mean_kxx : float, optional
        A known :math:`\overline{K_{XX}}` (skips its :math:`O(N^2)` computation).
    random_state : None, int or numpy.random.Generator
        One generator for the frequencies, the noise and the solver's draws, in
        that order.
    progress : callable, optional
        ``progress(fraction, message)``; raising inside it cancels the sweep.

    Returns
    -------
    RandomFeatureCurves
        Algorithm 2 distances per ε, repetition and :math:`M`.

    Raises
    ------
    ValueError
        On an empty ``m_grid`` or ``epsilons``, an unknown solver or preset, or
        invalid data or privacy parameters.

    Examples
    --------
    >>> import numpy as np
    >>> from dpkme.kernels import GaussianKernel
    >>> X = np.random.default_rng(0).normal(size=(200, 2))
    >>> c = alg2_curves(X, kernel=GaussianKernel(lengthscale=1.0), epsilons=[1.0], delta=1e-6, m_grid=[10, 5],
    ...                 n_features=100, preset="interactive", q_scale=2.0, random_state=0)
    >>> c.m_grid, len(c.alg2[0])
    ([5, 10], 2)
    """
    from . import reduced_set
    from .kernels.random_features import RandomFourierFeatures
    from .metrics import rkhs_distance
    from .release.random_features import privatise_feature_mean

    X = check_array(X, name="X")
    reps = check_positive_int(reps, name="reps")
    ms = sorted({check_positive_int(m, name="M") for m in m_grid})
    if not ms:
        raise ValueError("m_grid is empty; give at least one number of synthetic points.")
    eps_list = [float(e) for e in epsilons]
    if not eps_list:
        raise ValueError("epsilons is empty; give at least one epsilon.")
    spec = reduced_set.get_solver(solver or reduced_set.DEFAULT_SOLVER)
    if domain is not None:
        domain = reduced_set.check_domain_object(domain, X.shape[1])
        if not spec.honours_domain:
            raise ValueError(f"solver {spec.name!r} cannot keep its points in a declared domain; use one of "
                             f"{sorted(n for n, s in reduced_set.SOLVERS.items() if s.honours_domain)}.")
    options = {**reduced_set.preset_options(spec.name, preset), **(solver_options or {})}
    rng, _ = check_random_state(random_state)
    report = progress or (lambda f, msg: None)
    t0 = time.perf_counter()
    if mean_kxx is None:
        report(0.0, "mean of K_XX (evaluation)")
        mean_kxx = kernel.mean_gram(X)
    features = RandomFourierFeatures(kernel, n_components=n_features, random_state=rng).fit(X.shape[1])
    total = len(eps_list) * reps
    out = [[[0.0] * len(ms) for _ in range(reps)] for _ in eps_list]
    sigmas = []
    for i, eps in enumerate(eps_list):
        for r in range(reps):
            done = i * reps + r
            mu, cal = privatise_feature_mean(X, features, epsilon=eps, delta=delta, calibration=calibration,
                                             neighbouring=neighbouring, rng=rng)
            if r == 0:
                sigmas.append(cal.sigma)
            opts = dict(options)
            if spec.accepts("noise_sigma"):
                opts.setdefault("noise_sigma", cal.sigma)

            def sub(f, msg, done=done, eps=eps, r=r):
                report((done + 0.9 * f) / total, f"Algorithm 2, ε = {eps:g}, repetition {r + 1}: {msg}")

            res = reduced_set.reduce(mu, features, n_points=ms[-1], solver=spec.name,
                                     initial_points=initial_points, q_scale=q_scale, q_loc=q_loc,
                                     random_state=rng, progress=sub, report_at=ms,
                                     **({"domain": domain} if domain is not None else {}), **opts)
            for j, m in enumerate(ms):
                Z, w = res.checkpoints.get(m, (res.points, res.weights))
                out[i][r][j] = rkhs_distance(X, Z, w, kernel=kernel, mean_kxx=mean_kxx)
            report((done + 1) / total, f"Algorithm 2, ε = {eps:g}, repetition {r + 1} evaluated")
    means = [np.mean(np.asarray(per_eps), axis=0).tolist() for per_eps in out]
    return RandomFeatureCurves(m_grid=ms, epsilons=eps_list, delta=float(delta), alg2=means, alg2_reps=out,
                               sigmas=sigmas, n_features=int(n_features), solver=spec.name,
                               mean_kxx=float(mean_kxx), seconds={"total": time.perf_counter() - t0})
