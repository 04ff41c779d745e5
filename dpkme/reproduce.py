r"""Reproductions of Figures 1 and 2 (Algorithms 1 and 2) of Balog et al. (2018).

Settings default to the paper's own (Appendix B; the authors' code):
Gaussian kernel :math:`\exp(-\gamma\|x-y\|^2)` with :math:`\gamma = 10^{-4}/D`,
:math:`\delta = 10^{-6}`, :math:`\varepsilon \in \{0.01, 0.1, 1\}`, classic
calibration with :math:`\Delta = 2/N` (noise variance :math:`8\ln(1.25/\delta)/(N^2\varepsilon^2)`),
the full Gram–Schmidt basis with the paper's threshold :math:`10^{-5}`, and the
M grid ``int(exp(t))`` for ``t`` in ``linspace(0, ln max_m, 100)``.

* Figure 1 (publishable subset): the first M rows of the private data are the
  public points.
* Figure 2 (no publishable subset, Algorithm 1 part): points
  :math:`z_m \sim \mathcal N(0, 500^2 I)` drawn with the given seed.

The data is read from a path given by the caller (the paper's files are
``mixture_of_Gaussians_N100000_D{2,5}.npz`` with key ``X_private``).

* Figure 2, Algorithm 2 part (:func:`fig2_alg2`), setting of Appendix B: private data :math:`X` (N × D), Gaussian kernel
  :math:`k(x,y) = \exp(-\gamma\|x-y\|^2)` with :math:`\gamma = 10^{-4}/D`,
  :math:`J` unit-norm random Fourier features (drawn once), for each
  :math:`\varepsilon` a fresh noisy mean feature vector (classic calibration with
  :math:`\Delta = 2/N` by default, :math:`\delta = 10^{-6}`), then a reduced-set
  solver initialised from :math:`q = \mathcal N(0, 500^2 I)` (the same public
  draws for every :math:`\varepsilon`). Reported: the RKHS distance under the
  **exact** kernel between the private empirical KME and the release, at
  :math:`M \in \{1, 3, 10, 31, 100, 316, 1000, 3162, 10000\}` (those
  :math:`\le` ``max_m``), as in Figure 2 (right).

This module reads the private data twice: once in the private step of every
release, and once for evaluation (:math:`\overline{K_{XX}}` and the row means),
which is what a reproduction is for; the evaluation is never part of a release.
"""

from __future__ import annotations

import time
import warnings
from collections.abc import Callable
from contextlib import contextmanager

import numpy as np

from . import reduced_set
from ._blocked import single_threaded_blas
from ._validation import check_array, check_in, check_positive_float, check_positive_int, check_random_state
from .curves import paper_m_grid, subspace_curves
from .io import load_npz
from .kernels.engine import use_engine
from .kernels.kernel import GaussianKernel
from .kernels.random_features import RandomFourierFeatures
from .metrics import rkhs_distance
from .release.random_features import CALIBRATIONS, privatise_feature_mean
from .release.subspace import DEFAULT_TOL

__all__ = ["paper_kernel", "load_private_npz", "fig1", "fig2_alg1", "FIG2_M", "fig2_alg2"]


def paper_kernel(dim: int) -> GaussianKernel:
    r"""The paper's kernel: :math:`\gamma = 10^{-4}/D` (lengthscale :math:`100\sqrt D` in the authors' code).

    :math:`k(x, y) = \exp(-\gamma\|x - y\|^2)`, i.e. :class:`GaussianKernel`
    with :math:`\ell = 1/\sqrt{2\gamma} = 100\sqrt{D/2}` (Balog et al. 2018,
    Appendix B).

    Parameters
    ----------
    dim : int
        Number of columns :math:`D` of the data (>= 1).

    Returns
    -------
    GaussianKernel
        With amplitude 1.

    Examples
    --------
    >>> paper_kernel(2)
    GaussianKernel(lengthscale=100.0, amplitude=1.0)
    """
    return GaussianKernel(gamma=1e-4 / check_positive_int(dim, name="dim"))



def load_private_npz(path, *, key: str = "X_private") -> np.ndarray:
    """Load the paper's data file (``.npz`` with key ``X_private``) from a path.

    Parameters
    ----------
    path : str or os.PathLike
        The ``.npz`` file (the paper's ``mixture_of_Gaussians_N100000_D{2,5}.npz``).
    key : str, default="X_private"
        Name of the array inside the archive.

    Returns
    -------
    X : ndarray (N, D), float64
        Read by :func:`dpkme.io.load_npz` (the one ``.npz`` reader); a missing file is reported as
        ``data file not found``.
    """
    from pathlib import Path

    if not Path(path).is_file():
        raise ValueError(f"data file not found: {path}")
    return load_npz(path, key=key)


@contextmanager
def _collect_warnings(sink: list):
    """Record calibration warnings (e.g. classic at epsilon = 1) into the result instead of stderr noise."""
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        yield
    sink.extend(sorted({str(w.message) for w in caught}))


def _result(curves, *, scenario: str, seconds: float, extra: dict) -> dict:
    return {
        "figure": scenario,
        "M": curves.m_grid,
        "epsilons": curves.epsilons,
        "delta": curves.delta,
        "baseline": curves.baseline,
        "projection": curves.projection,
        "alg1": curves.alg1,
        "alg1_reps": curves.alg1_reps,
        "sigmas": curves.sigmas,
        "basis_dims": curves.basis_dims,
        "mean_kxx": curves.mean_kxx,
        "seconds": seconds,
        "seconds_parts": curves.seconds,
        **extra,
    }


def fig1(X, *, max_m: int = 10000, epsilons=(0.01, 0.1, 1.0), delta: float = 1e-6, reps: int = 1, seed: int = 0,
         calibration: str = "classic", sensitivity: str = "paper", basis: str = "full", tol: float = DEFAULT_TOL,
         mean_kxx: float | None = None, progress: Callable | None = None) -> dict:
    r"""Figure 1: publishable subset (the first M rows are public), every M on the paper's grid.

    Runs :func:`dpkme.curves.subspace_curves` with ``Z = X[:max_m]``,
    ``points_are_sample=True`` and :func:`paper_kernel`; reads the private data
    for evaluation (a reproduction, not a release).

    Parameters
    ----------
    X : array (N, D)
        The private data (e.g. ``mixture_of_Gaussians_N100000_D2.npz``, key
        ``X_private``, via :func:`load_private_npz`).
    max_m : int, default=10000
        Largest number of synthetic points :math:`M`, at most :math:`N` (they are
        the first rows of ``X``); the curves are evaluated on
        :func:`dpkme.curves.paper_m_grid` of ``max_m`` (about 100 values).
    epsilons : sequence of float, default=(0.01, 0.1, 1.0)
        Privacy parameters :math:`\varepsilon` of the curves (the paper's three).
    delta : float, default=1e-6
        Privacy parameter :math:`\delta` (the paper's).
    reps : int, default=1
        Independent noise draws per (ε, M); ``alg1`` is their mean and
        ``alg1_reps`` keeps each.
    seed : int, default=0
        Seeds the noise (:func:`dpkme.curves.subspace_curves`), so a
        reproduction is repeatable.
    calibration : {"classic", "analytic"}, default="classic"
        Gaussian calibration; the paper uses the classic
        :math:`\sigma = \Delta\sqrt{2\ln(1.25/\delta)}/\varepsilon` (at
        :math:`\varepsilon \ge 1` outside its theorem: the exact check's warning
        is recorded under ``"warnings"``).
    sensitivity : {"paper", "tight"}, default="paper"
        ``"paper"``: :math:`\Delta = 2/N` (Lemma 13); ``"tight"``:
        :math:`\sqrt 2/N` (:func:`dpkme.privacy.sensitivity.kme_sensitivity`).
    basis : {"full", "auto"}, default="full"
        ``"full"``: the paper's Gram–Schmidt basis; ``"auto"``: the same basis
        with James–Stein shrinkage of the noisy coordinates
        (:func:`dpkme.release.subspace.algorithm1`).
    tol : float, default=DEFAULT_TOL
        Gram–Schmidt acceptance threshold (the paper's :math:`10^{-5}`).
    mean_kxx : float, optional
        A known :math:`\overline{K_{XX}}` of ``X`` under :func:`paper_kernel`
        (skips its exact :math:`O(N^2)` computation, about 4 s at
        :math:`N = 10^5`, :math:`D = 5`).
    progress : callable, optional
        ``progress(fraction, message)``; raising inside it cancels the run.

    Returns
    -------
    dict
        JSON-serialisable: ``figure`` (``"fig1"``), ``M`` (the grid),
        ``epsilons``, ``delta``, the distances ``baseline``, ``projection``,
        ``alg1`` (per ε) and ``alg1_reps`` (per ε and repetition), ``sigmas``
        (per ε), ``basis_dims`` (:math:`F(M)`), ``mean_kxx``, ``seconds``,
        ``seconds_parts``, the settings (``N``, ``D``, ``kernel``,
        ``calibration``, ``sensitivity``, ``basis``, ``tol``, ``reps``,
        ``seed``) and ``warnings`` (calibration warnings, as text).
        Distances are in the RKHS norm of :func:`paper_kernel`; see
        :class:`dpkme.curves.SubspaceCurves`.

    Examples
    --------
    >>> import numpy as np
    >>> X = 100.0 * np.random.default_rng(0).normal(size=(500, 2))
    >>> r = fig1(X, max_m=50)
    >>> r["M"][-3:], [len(curve) == len(r["M"]) for curve in r["alg1"]]
    ([48, 49, 50], [True, True, True])
    """
    t0 = time.perf_counter()
    X = check_array(X, name="X")
    max_m = check_positive_int(max_m, name="max_m", maximum=X.shape[0])
    kernel = paper_kernel(X.shape[1])
    notes: list[str] = []
    n = X.shape[0]
    t_mean = 0.0
    if mean_kxx is None and not kernel.spectral_sums_available(X) and use_engine(kernel, n * (n - 1) // 2):
        # On the fused engine the mean of K_XX alone takes one fused pass per tile (upper row sums only), about
        # 1.6x cheaper than the lower and upper row sums that subspace_curves would otherwise take from one
        # triangular pass; the row means of the M <= N/10 public points are then an extra M N pairs.
        t = time.perf_counter()
        mean_kxx = kernel.mean_gram(X)
        t_mean = time.perf_counter() - t
    # One BLAS thread: the basis's GEMMs are small panels (256 x F x 256), where OpenBLAS's threads cost more
    # than they give (measured 1.3 s on one thread against 5.2 s on two for the D = 5 basis, wall time).
    with _collect_warnings(notes), single_threaded_blas():
        curves = subspace_curves(
            X, X[:max_m], kernel=kernel, epsilons=epsilons, delta=delta, m_grid=paper_m_grid(max_m), reps=reps,
            calibration=calibration, sensitivity=sensitivity, basis=basis, tol=tol, points_are_sample=True,
            z_is_prefix_of_x=True, mean_kxx=mean_kxx, random_state=seed, progress=progress)
    curves.seconds["kernel_sums"] = curves.seconds.get("kernel_sums", 0.0) + t_mean
    return _result(curves, scenario="fig1", seconds=time.perf_counter() - t0,
                   extra={"N": X.shape[0], "D": X.shape[1], "kernel": kernel.to_dict(), "calibration": calibration,
                          "sensitivity": sensitivity, "basis": basis, "tol": tol, "reps": reps, "seed": seed,
                          "warnings": notes})


def fig2_alg1(X, *, max_m: int = 10000, epsilons=(0.01, 0.1, 1.0), delta: float = 1e-6, reps: int = 1, seed: int = 0,
              calibration: str = "classic", sensitivity: str = "paper", basis: str = "full", tol: float = DEFAULT_TOL,
              q_scale: float = 500.0, mean_kxx: float | None = None, progress: Callable | None = None) -> dict:
    r"""Figure 2, Algorithm 1: points drawn from q = N(0, q_scale² I) with ``seed``.

    No publishable subset: ``max_m`` points :math:`z_m \sim \mathcal N(0, \text{q\_scale}^2 I_D)`
    are drawn from the generator seeded with ``seed`` (public: they do not
    depend on ``X``), then :func:`dpkme.curves.subspace_curves` evaluates every
    prefix with :func:`paper_kernel`. Reads the private data for evaluation.

    Parameters
    ----------
    X : array (N, D)
        The private data (e.g. ``mixture_of_Gaussians_N100000_D5.npz``, key
        ``X_private``).
    max_m : int, default=10000
        Largest number of synthetic points :math:`M`; the curves are evaluated
        on :func:`dpkme.curves.paper_m_grid` of ``max_m`` (about 100 values).
    epsilons : sequence of float, default=(0.01, 0.1, 1.0)
        Privacy parameters :math:`\varepsilon` of the curves (the paper's three).
    delta : float, default=1e-6
        Privacy parameter :math:`\delta` (the paper's).
    reps : int, default=1
        Independent noise draws per (ε, M); ``alg1`` is their mean and
        ``alg1_reps`` keeps each.
    seed : int, default=0
        Seeds one generator that draws the points and then the noise
        (:func:`dpkme.curves.subspace_curves`), so a reproduction is repeatable.
    calibration : {"classic", "analytic"}, default="classic"
        Gaussian calibration; the paper uses the classic
        :math:`\sigma = \Delta\sqrt{2\ln(1.25/\delta)}/\varepsilon` (at
        :math:`\varepsilon \ge 1` outside its theorem: the exact check's warning
        is recorded under ``"warnings"``).
    sensitivity : {"paper", "tight"}, default="paper"
        ``"paper"``: :math:`\Delta = 2/N` (Lemma 13); ``"tight"``:
        :math:`\sqrt 2/N` (:func:`dpkme.privacy.sensitivity.kme_sensitivity`).
    basis : {"full", "auto"}, default="full"
        ``"full"``: the paper's Gram–Schmidt basis; ``"auto"``: the same basis
        with James–Stein shrinkage of the noisy coordinates
        (:func:`dpkme.release.subspace.algorithm1`).
    tol : float, default=DEFAULT_TOL
        Gram–Schmidt acceptance threshold (the paper's :math:`10^{-5}`).
    q_scale : float, default=500.0
        Standard deviation :math:`\sigma_q` of the public distribution
        :math:`q` of the points (the paper's 500, in data units).
    mean_kxx : float, optional
        A known :math:`\overline{K_{XX}}` of ``X`` under :func:`paper_kernel`
        (skips its exact :math:`O(N^2)` computation, about 4 s at
        :math:`N = 10^5`, :math:`D = 5`).
    progress : callable, optional
        ``progress(fraction, message)``; raising inside it cancels the run.

    Returns
    -------
    dict
        JSON-serialisable: ``figure`` (``"fig2-alg1"``), ``M`` (the grid),
        ``epsilons``, ``delta``, the distances ``baseline``, ``projection``,
        ``alg1`` (per ε) and ``alg1_reps`` (per ε and repetition), ``sigmas``
        (per ε), ``basis_dims`` (:math:`F(M)`), ``mean_kxx``, ``seconds``,
        ``seconds_parts``, the settings (``N``, ``D``, ``kernel``,
        ``calibration``, ``sensitivity``, ``basis``, ``tol``, ``reps``,
        ``seed``, ``q_scale``) and ``warnings`` (calibration warnings, as text).
        Distances are in the RKHS norm of :func:`paper_kernel`; see
        :class:`dpkme.curves.SubspaceCurves`.

    Examples
    --------
    >>> import numpy as np
    >>> X = 100.0 * np.random.default_rng(0).normal(size=(500, 2))
    >>> r = fig2_alg1(X, max_m=50, epsilons=[0.5])
    >>> r["figure"], r["M"][-1], r["basis_dims"][-1], r["warnings"]
    ('fig2-alg1', 50, 50, [])
    """
    t0 = time.perf_counter()
    X = check_array(X, name="X")
    max_m = check_positive_int(max_m, name="max_m")
    q_scale = check_positive_float(q_scale, name="q_scale")
    rng, _ = check_random_state(seed)
    Z = q_scale * rng.standard_normal((max_m, X.shape[1]))
    kernel = paper_kernel(X.shape[1])
    notes: list[str] = []
    with _collect_warnings(notes):
        curves = subspace_curves(
            X, Z, kernel=kernel, epsilons=epsilons, delta=delta, m_grid=paper_m_grid(max_m), reps=reps,
            calibration=calibration, sensitivity=sensitivity, basis=basis, tol=tol, points_are_sample=False,
            mean_kxx=mean_kxx, random_state=rng, progress=progress)
    return _result(curves, scenario="fig2-alg1", seconds=time.perf_counter() - t0,
                   extra={"N": X.shape[0], "D": X.shape[1], "kernel": kernel.to_dict(), "calibration": calibration,
                          "sensitivity": sensitivity, "basis": basis, "tol": tol, "q_scale": q_scale, "reps": reps,
                          "seed": seed, "warnings": notes})

#: Sizes reported (Figure 2 uses a log grid up to 10 000).
FIG2_M = (1, 3, 10, 31, 100, 316, 1000, 3162, 10000)
SENSITIVITIES = ("paper", "add-remove")



def fig2_alg2(
    X,
    *,
    n_features: int = 10000,
    max_m: int = 10000,
    epsilons=(0.01, 0.1, 1.0),
    delta: float = 1e-6,
    seed: int = 0,
    calibration: str = "classic",
    sensitivity: str = "paper",
    solver: str = reduced_set.DEFAULT_SOLVER,
    q_scale: float = 500.0,
    progress: Callable[[float, str], object] | None = None,
    kernel=None,
    mean_kxx: float | None = None,
    solver_options: dict | None = None,
) -> dict:
    r"""RKHS distance of Algorithm 2 releases versus M, for several ε (Figure 2).

    Parameters
    ----------
    X : array (N, D)
        The private data (e.g. ``mixture_of_Gaussians_N100000_D5.npz``,
        key ``X_private``).
    n_features : int, default=10000
        :math:`J`.
    max_m : int, default=10000
        Largest M; reported sizes are :data:`FIG2_M` up to ``max_m`` (plus
        ``max_m`` itself).
    epsilons : sequence of float
    delta : float, default=1e-6
    seed : int, default=0
        Seeds the frequencies, the noise (one stream per ε) and the solver.
    calibration : {"classic", "analytic"}, default="classic"
        The paper uses the classic Gaussian mechanism.
    sensitivity : {"paper", "add-remove"}, default="paper"
        ``"paper"``: replace-one, :math:`\Delta = 2/N` (Proposition 9);
        ``"add-remove"``: :math:`\Delta = 1/N`.
    solver : str
        A key of :data:`dpkme.reduced_set.SOLVERS`.
    q_scale : float, default=500.0
    progress : callable, optional
        ``progress(fraction, message)``.
    kernel : Kernel, optional
        Default :func:`paper_kernel`.
    mean_kxx : float, optional
        Precomputed :math:`\overline{K_{XX}}` (about 4 s for N = 10^5).
    solver_options : dict, optional
        Passed to the solver. For ``solver="preimage"`` with ``refit="lasso"``
        the paper's penalty :math:`\lambda = 100/N` is the default.

    Returns
    -------
    dict
        ``M``, ``epsilons``, ``alg2`` (one list of distances per ε), ``solver``,
        ``seconds`` and details: ``delta``, ``J``, ``sigma`` (per ε),
        ``sensitivity``, ``seconds_per_epsilon``, ``seconds_feature_mean``,
        ``seconds_solver``, ``seconds_at_M`` (solver time until each M),
        ``residual_norm`` (at ``max_m``, in :math:`\mathcal H_\phi`), ``weight_l1``,
        ``n_effective`` (points with :math:`|w_m| > 10^{-6}\sum|w|`: at small ε
        the best solver leaves extra points at ~zero weight rather than fit noise),
        ``mean_kxx``, ``kernel``, ``n_private``, ``dim``.
    """
    t_start = time.perf_counter()
    X = check_array(X, name="X")
    n, dim = X.shape
    n_features = check_positive_int(n_features, name="n_features", minimum=2)
    if n_features % 2:
        raise ValueError(f"n_features must be even (paired cos/sin features), got {n_features}.")
    max_m = check_positive_int(max_m, name="max_m")
    eps_list = [check_positive_float(e, name="epsilon") for e in np.atleast_1d(np.asarray(epsilons, dtype=float))]
    if not eps_list:
        raise ValueError("epsilons is empty; give at least one epsilon > 0.")
    check_in(calibration, CALIBRATIONS, name="calibration")
    check_in(sensitivity, SENSITIVITIES, name="sensitivity")
    spec = reduced_set.get_solver(solver)
    kernel = paper_kernel(dim) if kernel is None else kernel
    sizes = sorted({m for m in FIG2_M if m <= max_m} | {max_m})
    options = dict(solver_options or {})
    if spec.name == "preimage" and options.get("refit") == "lasso":
        options.setdefault("l1_penalty", 100.0 / n)
    if spec.uses_pool:
        options.setdefault("pool_size", max(20000, 2 * max_m))
    neighbouring = "replace-one" if sensitivity == "paper" else "add-remove"
    reporter = reduced_set.Progress(progress)

    reporter(0.0, "exact mean of K_XX (evaluation only)", force=True)
    if mean_kxx is None:
        mean_kxx = kernel.mean_gram(X)
    seq = np.random.SeedSequence(seed)
    s_features, s_solver, *s_noise = seq.spawn(2 + len(eps_list))
    features = RandomFourierFeatures(kernel, n_components=n_features, random_state=np.random.default_rng(s_features),
                                     dtype="float32").fit(dim)
    out = {
        "figure": "fig2-alg2", "M": sizes, "epsilons": eps_list, "alg2": [], "solver": spec.name,
        "solver_options": options, "delta": float(delta), "J": n_features, "n_private": int(n), "dim": int(dim),
        "kernel": kernel.to_dict(), "calibration": calibration, "sensitivity": sensitivity,
        "neighbouring": neighbouring, "seed": seed, "q_scale": q_scale, "mean_kxx": float(mean_kxx),
        "sigma": [], "sensitivity_value": None, "calibration_proven": [], "seconds_per_epsilon": [],
        "seconds_feature_mean": [], "seconds_solver": [], "seconds_at_M": [], "residual_norm": [],
        "weight_l1": [], "n_effective": [], "warnings": [],
    }
    n_eps = len(eps_list)
    for i, eps in enumerate(eps_list):
        t_eps = time.perf_counter()
        base = 0.02 + 0.98 * i / n_eps
        reporter(base, f"epsilon={eps:g}: private step", force=True)
        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("always")
            mu_tilde, cal = privatise_feature_mean(
                X, features, epsilon=eps, delta=delta, calibration=calibration, neighbouring=neighbouring,
                rng=np.random.default_rng(s_noise[i]), n_private=n)
        out["warnings"] += [f"epsilon={eps:g}: {w.message}" for w in caught]
        t_mean = time.perf_counter() - t_eps
        sub = reporter.sub(base + 0.01 / n_eps, base + 0.9 * 0.98 / n_eps)
        opts = dict(options)
        if spec.accepts("noise_sigma"):
            opts.setdefault("noise_sigma", cal.sigma)  # public: part of the release
        result = reduced_set.reduce(
            mu_tilde, features, n_points=max_m, solver=spec.name, q_scale=q_scale,
            random_state=np.random.default_rng(s_solver), progress=sub, report_at=sizes, **opts)
        dists, l1, n_eff = [], [], []
        for m in sizes:
            Z, w = result.checkpoints[m]
            dists.append(rkhs_distance(X, Z, w, kernel=kernel, mean_kxx=mean_kxx))
            l1.append(float(np.abs(w).sum()))
            n_eff.append(int(np.count_nonzero(np.abs(w) > 1e-6 * np.abs(w).sum())))
        cps = result.info.get("checkpoint_seconds", {})
        out["alg2"].append(dists)
        out["sigma"].append(cal.sigma)
        out["sensitivity_value"] = cal.sensitivity
        out["calibration_proven"].append(bool(cal.proven))
        out["seconds_feature_mean"].append(t_mean)
        out["seconds_solver"].append(result.seconds)
        out["seconds_at_M"].append([cps.get(m) for m in sizes])
        out["residual_norm"].append(result.residual_norm)
        out["weight_l1"].append(l1)
        out["n_effective"].append(n_eff)
        out["seconds_per_epsilon"].append(time.perf_counter() - t_eps)
        reporter(0.02 + 0.98 * (i + 1) / n_eps, f"epsilon={eps:g}: M={max_m} distance {dists[-1]:.4g}",
                 force=True)
    out["seconds"] = time.perf_counter() - t_start
    reporter.finish("fig2-alg2 done")
    return out
