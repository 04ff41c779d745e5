r"""Audits of every dpkme mechanism, and of deliberately mis-calibrated variants.

Each ``audit_*`` function

1. builds public objects (kernel, features, public points) and a **worst-case
   pair of neighbouring datasets** (:mod:`dpkme.audit.neighbours`), unless
   ``X`` / ``X_neighbour`` are given;
2. runs the **library's own release function** ``runs`` times on each dataset
   with independent seeds (derived from ``random_state``);
3. maps every output to one scalar -- the direction of the log-likelihood ratio
   where it is known (table below) -- and calls
   :func:`dpkme.audit.bounds.audit_scores` for a Clopper-Pearson lower bound on ε;
4. attaches the exact privacy curves of the pair and of the claim, and the
   privacy-loss histogram, for plots.

===============  ====================================================================  =======================================
audit            released output -> scalar                                             exact curve of the pair
===============  ====================================================================  =======================================
``gaussian``     noisy clipped mean, projected on :math:`f(D)-f(D')`                   Gaussian, :math:`\mu=\|\Delta\|/\sigma`
``laplace``      noisy feature mean, Laplace log-likelihood ratio                      composed Laplace PLD
``algorithm1``   :math:`\beta = L^\top w_A` projected on :math:`\alpha(D)-\alpha(D')`  Gaussian
``algorithm2``   :math:`\tilde\mu` projected on :math:`\bar\phi(D)-\bar\phi(D')`       Gaussian
``exponential``  released database -> its exact log-likelihood ratio                   exact (finite outputs)
``gp``           values at the points, Mahalanobis direction :math:`\Sigma^{-1}h`      Gaussian
``kmeans``       noisy sizes and centres of one Lloyd step (approximate LLR)           Gaussian (of the raw step)
``two-sample``   TCMC: noisy mean and second moment (LLR); perturbed statistic         Gaussian
===============  ====================================================================  =======================================

Mis-calibrated variants (``variant=``), which an audit must catch:

* ``audit_gaussian(variant="half-noise")``: half the calibrated :math:`\sigma`;
* ``audit_laplace(variant="l1-ignores-dimension")``: L1 sensitivity :math:`2/\sqrt N`
  for a :math:`J`-dimensional feature mean (the code released with Balog et
  al. 2018; valid only for :math:`J \le N`);
* ``audit_algorithm2(variant="cosine-features")``: the map
  :math:`\sqrt{2/J}\cos(\omega^\top x + b)` (norm up to :math:`\sqrt2`) calibrated
  to :math:`2/N`;
* ``audit_two_sample(variant="perturbed-statistic")``: Raj et al.'s
  perturbed statistic with its published sensitivity
  (:mod:`dpkme.two_sample.audit`).

Sizes. Distinguishing a Gaussian mechanism's tails needs many runs; with a few
thousand runs per dataset the bound resolves probabilities of about
:math:`10^{-3}`, so the exhibits use a claimed :math:`\delta = 10^{-2}` (at
:math:`\delta = 10^{-5}` the same runs only certify smaller ε). ``runs`` and
``(epsilon, delta)`` are fields of the :class:`~dpkme.audit.settings.AuditSettings` every audit takes
(``settings=``, with the seed, the test's α and the progress callback); :data:`EXHIBITS` lists the settings of the
audit table of docs/audits.md. Seeded noise is used for the runs (``noise_source="seeded"``):
the audit needs reproducible, independent draws, not secret ones.
"""

from __future__ import annotations

import math
import time
from collections.abc import Callable

import numpy as np

from .._validation import (
    check_array,
    check_delta,
    check_epsilon,
    check_in,
    check_positive_float,
    check_positive_int,
)
from ..kernels.kernel import GaussianKernel, Kernel
from ..kernels.random_features import CosineBiasFeatures, RandomFourierFeatures
from ..privacy.calibration import (
    calibrate_gaussian,
    calibrate_laplace,
    gaussian_epsilon,
    gaussian_noise,
    l1_from_l2_sensitivity,
    laplace_noise,
)
from ..privacy.sensitivity import NEIGHBOURING, check_private_kernel, feature_mean_sensitivity
from ..privacy.spec import PrivacySpec, resolve
from ..reduced_set._common import Progress
from .bounds import (
    DEFAULT_DELTA_GRID,
    AnalyticCurve,
    AuditResult,
    audit_scores,
    curve_from_delta_function,
    gaussian_curve,
    pure_dp_curve,
)
from .neighbours import best_pair, cosine_antipodal_pair, neighbour_pair, rff_antipodal_pair, rff_l1_pair
from .settings import PURE_DP_AUDITS, AuditSettings, _as_settings, _unpack

__all__ = [
    "MAX_RUNS",
    "VARIANTS",
    "AUDITS",
    "EXHIBITS",
    "run_audit",
    "clipped_mean_release",
    "laplace_feature_release",
    "cosine_feature_release",
    "audit_gaussian",
    "audit_laplace",
    "audit_algorithm1",
    "audit_algorithm2",
    "audit_exponential",
    "audit_gp_release",
    "audit_kmeans",
    "audit_two_sample",
]

#: Largest number of runs per dataset one audit accepts.
MAX_RUNS = 1_000_000

VARIANTS = {
    "gaussian": ("correct", "half-noise"),
    "laplace": ("correct", "l1-ignores-dimension"),
    "algorithm1": ("correct",),
    "algorithm2": ("correct", "cosine-features"),
    "exponential": ("correct",),
    "gp": ("correct",),
    "kmeans": ("correct",),
    "two-sample": ("correct", "perturbed-statistic"),
}


# --------------------------------------------------------------------------- plumbing
def _check_common(epsilon, delta, runs, alpha, *, pure: bool = False):
    eps = check_epsilon(epsilon)
    dl = check_delta(delta, allow_zero=pure) if not pure else 0.0
    if pure and delta not in (None, 0, 0.0):
        raise ValueError(f"this mechanism is pure epsilon-DP; delta must be 0, got {delta!r}.")
    n = check_positive_int(runs, name="runs", minimum=10, maximum=MAX_RUNS)
    a = check_positive_float(alpha, name="alpha")
    if not a < 1.0:
        raise ValueError(f"alpha must lie in (0, 1), got {alpha!r}.")
    return eps, dl, n, a


def _seeds(random_state, count: int, stream: int = 0) -> np.ndarray:
    """``count`` independent non-negative int seeds from one audit seed (``stream`` 0: runs, 1: public objects)."""
    if isinstance(random_state, np.random.Generator):
        return random_state.integers(0, 2**62, size=count)
    if random_state is None:
        ss = np.random.SeedSequence(spawn_key=(stream,))
    else:
        if isinstance(random_state, (bool, np.bool_)):
            raise ValueError(f"random_state must be None, an int or a Generator, got {random_state!r}.")
        seed = check_positive_int(random_state, name="random_state", minimum=0)
        ss = np.random.SeedSequence(seed, spawn_key=(stream,))
    return (ss.generate_state(count, dtype=np.uint64) >> np.uint64(2)).astype(np.int64)


def _public_seed(random_state) -> int:
    """Seed of the public objects (features) of an audit, independent of the run seeds."""
    return int(_seeds(random_state, 1, stream=1)[0]) % 2**31


def _collect(run: Callable[[int, int], float], runs: int, random_state, progress, label: str):
    """Run ``run(which, seed)`` ``runs`` times on each dataset (which = 0: D, 1: D')."""
    reporter = Progress(progress)
    seeds = _seeds(random_state, 2 * runs)
    out = np.empty((2, runs))
    total = 2 * runs
    for which in (0, 1):
        for i in range(runs):
            k = which * runs + i
            out[which, i] = run(which, int(seeds[k]))
            if k % 64 == 0:
                reporter(k / total, f"{label}: run {k + 1:,} of {total:,}")
    reporter.finish(f"{label}: {total:,} runs done")
    if not np.isfinite(out).all():
        raise ValueError(f"{label}: a run produced a non-finite scalar; the mechanism output is unusable.")
    return out[0], out[1]


def _gaussian_llr(m_d: float, m_p: float, sigma: float) -> Callable:
    """Privacy loss log p_D(s)/p_D'(s) of s ~ N(m_d, sigma^2) vs N(m_p, sigma^2)."""
    def llr(s):
        s = np.asarray(s, dtype=np.float64)
        return (m_d - m_p) * (2.0 * s - m_d - m_p) / (2.0 * sigma * sigma)
    return llr


def _unit(v: np.ndarray) -> np.ndarray:
    n = float(np.linalg.norm(v))
    if not n > 0:
        raise ValueError("the two datasets give the same statistic: they are not a useful pair to audit.")
    return v / n


def _pair_eps(mu_pair: float, delta: float) -> float | None:
    if delta <= 0 or not mu_pair > 0:
        return None
    return gaussian_epsilon(sigma=1.0, delta=delta, sensitivity=mu_pair)


def _finish_gaussian(sd, sp, *, m_d, m_p, sigma, mu_pair, mu_claimed, eps, delta, alpha, selection,
                     selection_fraction, name, variant,
                     neighbouring, neighbours, scalar, t0, params, label):
    return audit_scores(
        sd, sp, epsilon=eps, delta=delta, alpha=alpha, selection=selection, selection_fraction=selection_fraction,
        thresholds=_default_thresholds(m_d, m_p, sigma) if selection == "bonferroni" else None,
        llr=_gaussian_llr(m_d, m_p, sigma), mu=mu_pair, mechanism=name, variant=variant,
        analytic=gaussian_curve(mu_pair, mu_claimed, label=label), pair_epsilon=_pair_eps(mu_pair, delta),
        neighbouring=neighbouring, neighbours=neighbours, scalar=scalar, seconds=time.perf_counter() - t0,
        params={**params, "sigma": sigma, "mu_pair": mu_pair, "mu_claimed": mu_claimed},
    )


def _default_thresholds(m_d, m_p, sigma) -> np.ndarray:
    """A fixed grid (chosen before the runs) for selection='bonferroni': 41 points over the two means +- 5 sigma."""
    lo, hi = min(m_d, m_p) - 5.0 * sigma, max(m_d, m_p) + 5.0 * sigma
    return np.linspace(lo, hi, 41)


def _pair_or_given(X, X_neighbour, default: Callable[[], tuple[np.ndarray, np.ndarray]], dim: int | None = None):
    if (X is None) != (X_neighbour is None):
        raise ValueError("give both X and X_neighbour (a neighbouring pair), or neither for the worst case.")
    if X is None:
        return (*default(), "worst case")
    A = check_array(X, name="X", n_features=dim)
    B = check_array(X_neighbour, name="X_neighbour", n_features=A.shape[1])
    return A, B, "given"


def _describe(D, Dn, neighbouring, how, extra=None) -> dict:
    d = {"n": int(D.shape[0]), "n_neighbour": int(Dn.shape[0]), "dim": int(D.shape[1]),
         "neighbouring": neighbouring, "pair": how}
    if D.shape == Dn.shape:
        diff = np.nonzero(np.any(D != Dn, axis=1))[0]
        d["rows_changed"] = diff.tolist()
        if diff.size == 1:
            i = int(diff[0])
            d["row"], d["row_neighbour"] = D[i].tolist(), Dn[i].tolist()
    return {**d, **(extra or {})}


def _check_neighbours(D, Dn, neighbouring):
    check_in(neighbouring, NEIGHBOURING, name="neighbouring")
    if neighbouring == "replace-one":
        if D.shape != Dn.shape or int(np.sum(np.any(D != Dn, axis=1))) > 1:
            raise ValueError("replace-one neighbours must have the same shape and differ in at most one row.")
    else:
        if abs(D.shape[0] - Dn.shape[0]) != 1:
            raise ValueError("add-remove neighbours must differ by exactly one row.")


# --------------------------------------------------------------------------- exhibit mechanisms
def clipped_mean_release(X, *, epsilon, delta, neighbouring="replace-one", n_private=None, rng,
                         noise_factor: float = 1.0, calibration=None):
    r"""Gaussian mechanism on the mean of rows clipped to the unit L2 ball: the generic vector release.

    :math:`f(D) = \frac1N\sum_n \mathrm{clip}_1(x_n)` with public :math:`N`, L2
    sensitivity :math:`2/N` (replace-one) or :math:`1/N` (add-remove), noise from
    :func:`dpkme.privacy.calibration.calibrate_gaussian` (analytic) and
    :func:`dpkme.privacy.calibration.gaussian_noise`. ``noise_factor`` < 1 deliberately
    under-noises it (**not private**; for the audit's ``"half-noise"`` exhibit).
    ``calibration``: the result of an earlier call with the same ε, δ and
    sensitivity, reused instead of calibrating again (an audit calibrates once
    for all its runs; the calibration is verified in high precision, so it
    costs more than a run).

    Parameters
    ----------
    X : array-like of shape (n, d)
        The dataset; each row is clipped to the unit L2 ball (a per-row map).
    epsilon, delta : float
        The guarantee the noise is calibrated to.
    neighbouring : {"replace-one", "add-remove"}
        Sets the sensitivity: :math:`2/N` or :math:`1/N` (default ``"replace-one"``).
    n_private : int, optional
        The public size :math:`N` that divides the sum and the sensitivity (default: the number of rows of
        ``X``; under add-remove both neighbours must use the same public :math:`N`).
    rng : numpy.random.Generator
        Source of the Gaussian noise (required).
    noise_factor : float
        Multiplier of the calibrated :math:`\sigma` (default 1; 0 gives the noiseless mean).
    calibration : GaussianCalibration, optional
        A calibration for the same ε, δ and sensitivity to reuse (a ``ValueError`` if it differs).

    Returns
    -------
    value : ndarray of shape (d,)
        The noisy clipped mean.
    calibration : GaussianCalibration
        :math:`\sigma` (before ``noise_factor``), the sensitivity and the achieved δ.

    Examples
    --------
    >>> import numpy as np
    >>> from dpkme.audit import clipped_mean_release
    >>> X = np.array([[3.0, 4.0], [0.0, 0.5]])          # the first row is clipped to (0.6, 0.8)
    >>> value, cal = clipped_mean_release(X, epsilon=1.0, delta=1e-5, rng=np.random.default_rng(0),
    ...                                   noise_factor=0.0)
    >>> value, cal.sensitivity, round(cal.sigma, 3)
    (array([0.3 , 0.65]), 1.0, 3.731)
    """
    X = check_array(X, name="X")
    n_pub = X.shape[0] if n_private is None else check_positive_int(n_private, name="n_private")
    check_in(neighbouring, NEIGHBOURING, name="neighbouring")
    norms = np.linalg.norm(X, axis=1)
    Xc = X * np.minimum(1.0, 1.0 / np.maximum(norms, 1e-300))[:, None]
    sens = (2.0 if neighbouring == "replace-one" else 1.0) / n_pub
    if calibration is None:
        cal = calibrate_gaussian(epsilon=epsilon, delta=delta, sensitivity=sens)
    else:
        cal = calibration
        if (cal.epsilon, cal.delta, cal.sensitivity) != (float(epsilon), float(delta), sens):
            raise ValueError(f"calibration is for (epsilon, delta, sensitivity) = ({cal.epsilon}, {cal.delta}, "
                             f"{cal.sensitivity}), not ({epsilon}, {delta}, {sens}).")
    value = Xc.sum(axis=0) / n_pub
    return value + gaussian_noise(value.shape, sigma=cal.sigma * float(noise_factor), rng=rng), cal


def laplace_feature_release(X, features: RandomFourierFeatures, *, epsilon, l1: str = "correct", rng):
    r"""Laplace mechanism on the mean random-feature vector (replace-one).

    ``l1="correct"``: :math:`\Delta_1 = \sqrt J\cdot 2b/N`
    (:func:`dpkme.privacy.calibration.l1_from_l2_sensitivity`), pure ε-DP.
    ``l1="paper"``: :math:`\Delta_1 = 2/\sqrt N`, the value in the code released
    with Balog et al. (2018) -- **not private** when :math:`J > N`.

    Parameters
    ----------
    X : array-like of shape (n, d)
        The dataset, with ``d = features.n_features_in_``; its size :math:`N = n` is treated as public.
    features : RandomFourierFeatures
        Fitted paired random Fourier features (public), :math:`J` = ``features.n_components`` of them.
    epsilon : float
        The claimed pure ε.
    l1 : {"correct", "paper"}
        Which L1 sensitivity the Laplace scale :math:`b = \Delta_1/\varepsilon` uses (default ``"correct"``).
    rng : numpy.random.Generator
        Source of the Laplace noise (required).

    Returns
    -------
    value : ndarray of shape (J,)
        The noisy mean feature vector.
    calibration : LaplaceCalibration
        The scale :math:`b` and the L1 sensitivity used.
    """
    check_in(l1, ("correct", "paper"), name="l1")
    X = check_array(X, name="X", n_features=features.n_features_in_)
    n = X.shape[0]
    l2 = feature_mean_sensitivity(n=n, norm_bound=features.norm_bound)
    sens = l1_from_l2_sensitivity(l2, features.n_components) if l1 == "correct" else 2.0 / math.sqrt(n)
    cal = calibrate_laplace(epsilon=epsilon, l1_sensitivity=sens)
    mean = features.mean_embedding(X)
    return mean + laplace_noise(mean.shape, scale=cal.scale, rng=rng), cal


def cosine_feature_release(X, features: CosineBiasFeatures, *, epsilon, delta, neighbouring="replace-one",
                           n_private=None, rng):
    r"""**Not private.** Algorithm 2's private step with :math:`\sqrt{2/J}\cos(\omega^\top x+b)` features.

    Calibrated as if :math:`\|\phi(x)\|\le 1` (sensitivity :math:`2/N`, or
    :math:`1/N` under add-remove), whereas these features reach norm
    :math:`\sqrt2`: the true sensitivity is :math:`\sqrt2` times larger. For the
    audit exhibit only.

    Parameters
    ----------
    X : array-like of shape (n, d)
        The dataset, with ``d = features.n_features_in_``.
    features : CosineBiasFeatures
        Fitted :math:`\sqrt{2/J}\cos(\omega^\top x + b)` features (public).
    epsilon, delta : float
        The claimed guarantee.
    neighbouring : {"replace-one", "add-remove"}
        Sets the (wrong) sensitivity :math:`2/N` or :math:`1/N` (default ``"replace-one"``).
    n_private : int, optional
        The public size :math:`N` (default: the number of rows of ``X``).
    rng : numpy.random.Generator
        Source of the Gaussian noise (required).

    Returns
    -------
    value : ndarray of shape (J,)
        The noisy mean feature vector.
    calibration : GaussianCalibration
        :math:`\sigma` and the (too small) sensitivity it was calibrated to.
    """
    X = check_array(X, name="X", n_features=features.n_features_in_)
    n_pub = X.shape[0] if n_private is None else check_positive_int(n_private, name="n_private")
    sens = feature_mean_sensitivity(n=n_pub, norm_bound=1.0, neighbouring=neighbouring)
    cal = calibrate_gaussian(epsilon=epsilon, delta=delta, sensitivity=sens)
    mean = features.transform(X).sum(axis=0) / n_pub
    return mean + gaussian_noise(mean.shape, sigma=cal.sigma, rng=rng), cal


# --------------------------------------------------------------------------- Gaussian / Laplace
def audit_gaussian(*, settings: AuditSettings | None = None, variant: str = "correct", n: int = 10, dim: int = 2,
                   neighbouring: str = "replace-one", X=None, X_neighbour=None) -> AuditResult:
    r"""Audit the Gaussian mechanism on a clipped mean (:func:`clipped_mean_release`).

    Worst case: row 0 is :math:`e_1` in :math:`D` and :math:`-e_1` in :math:`D'`
    (replace-one, :math:`\|f(D)-f(D')\| = 2/N`, the sensitivity) or is removed
    (add-remove, :math:`1/N`). Scalar: the release projected on
    :math:`f(D) - f(D')` (a sufficient statistic). ``variant="half-noise"``
    halves :math:`\sigma` (true :math:`\mu` doubles): must be caught.

    Parameters
    ----------
    settings : AuditSettings, optional
        The claim, the runs, the test and the seed, shared by every audit (:class:`AuditSettings`);
        fields left unset take this audit's defaults: ε = 2, δ = 1e-2, 5000 runs.
    variant : {"correct", "half-noise"}
        ``"half-noise"`` uses :math:`\sigma/2` (**not private**; default ``"correct"``).
    n : int
        Rows of the worst-case dataset, at least 2 (default 10); ignored when ``X`` is given.
    dim : int
        Number of columns :math:`d` (default 2); ``X`` must have it.
    neighbouring : {"replace-one", "add-remove"}
        The neighbouring relation of the claim and of the worst-case pair (default ``"replace-one"``).
    X, X_neighbour : array-like of shape (n, d) and (n', d), optional
        A neighbouring pair to audit instead of the worst case (both or neither; they must be neighbours
        under ``neighbouring``). Synthetic test inputs: the audit runs the mechanism thousands of times on
        them, so never pass data whose privacy matters.

    Returns
    -------
    AuditResult
        The lower bound :math:`\varepsilon_{\mathrm{lb}}` and its event, the scores of the runs, the
        audited and exact :math:`\varepsilon(\delta)` curves, the privacy-loss histogram, and a
        description of the pair (``neighbours``) and of the mechanism's settings (``params``).
    """
    epsilon, delta, runs, alpha, selection, selection_fraction, random_state, progress = _unpack(
        settings, audit="gaussian")
    t0 = time.perf_counter()
    eps, dl, runs, alpha = _check_common(epsilon, delta, runs, alpha)
    check_in(variant, VARIANTS["gaussian"], name="variant")
    n = check_positive_int(n, name="n", minimum=2)
    dim = check_positive_int(dim, name="dim")
    factor = 0.5 if variant == "half-noise" else 1.0

    def default():
        X0 = np.zeros((n, dim))
        X0[0, 0] = 1.0
        e = np.zeros(dim)
        e[0] = -1.0
        return neighbour_pair(X0, e, neighbouring=neighbouring)

    D, Dn, how = _pair_or_given(X, X_neighbour, default, dim)
    _check_neighbours(D, Dn, neighbouring)
    n_pub = D.shape[0] if neighbouring == "replace-one" else max(D.shape[0], Dn.shape[0])
    zero = np.random.default_rng(0)
    fd = clipped_mean_release(D, epsilon=eps, delta=dl, neighbouring=neighbouring, n_private=n_pub, rng=zero,
                              noise_factor=0.0)[0]
    fp, cal = clipped_mean_release(Dn, epsilon=eps, delta=dl, neighbouring=neighbouring, n_private=n_pub, rng=zero,
                                   noise_factor=0.0)
    u = _unit(fd - fp)
    sigma = cal.sigma * factor

    def run(which, seed):
        v, _ = clipped_mean_release(D if which == 0 else Dn, epsilon=eps, delta=dl, neighbouring=neighbouring,
                                    n_private=n_pub, rng=np.random.default_rng(seed), noise_factor=factor,
                                    calibration=cal)
        return float(v @ u)

    sd, sp = _collect(run, runs, random_state, progress, "Gaussian mechanism")
    m_d, m_p = float(fd @ u), float(fp @ u)
    return _finish_gaussian(
        sd, sp, m_d=m_d, m_p=m_p, sigma=sigma, mu_pair=(m_d - m_p) / sigma, mu_claimed=cal.sensitivity / cal.sigma,
        eps=eps, delta=dl, alpha=alpha, selection=selection, selection_fraction=selection_fraction,
        name="gaussian", variant=variant,
        neighbouring=neighbouring, neighbours=_describe(D, Dn, neighbouring, how), t0=t0,
        scalar="release projected on f(D) - f(D')", label="Gaussian mechanism (clipped mean)",
        params={"n": n_pub, "dim": int(D.shape[1]), "noise_factor": factor, "claimed_sensitivity": cal.sensitivity})


def _laplace_pair_curve(shifts: np.ndarray, scale: float, deltas) -> np.ndarray:
    """ε(δ) of independent Laplace coordinates with the given mean shifts (dp_accounting PLDs, pessimistic)."""
    from dp_accounting.pld import privacy_loss_distribution as pld_lib

    shifts = np.abs(shifts[np.abs(shifts) > 0])
    if shifts.size == 0:
        return np.zeros(np.shape(deltas))
    pld = None
    for s in shifts:
        part = pld_lib.from_laplace_mechanism(scale, sensitivity=float(s), value_discretization_interval=1e-3)
        pld = part if pld is None else pld.compose(part)
    return np.array([max(0.0, float(pld.get_epsilon_for_delta(float(d)))) for d in deltas])


def audit_laplace(*, settings: AuditSettings | None = None, variant: str = "correct", n: int = 1, n_features: int = 8,
                  dim: int | None = None, lengthscale: float = 1.0, X=None, X_neighbour=None) -> AuditResult:
    r"""Audit the Laplace mechanism on the mean random-feature vector (:func:`laplace_feature_release`).

    Worst case (:func:`~dpkme.audit.neighbours.rff_l1_pair`): the replaced row
    and its replacement differ by :math:`2\sqrt{aJ}/N` in L1 -- the correct
    :math:`\Delta_1` is attained. Scalar: the exact Laplace log-likelihood ratio.
    ``variant="l1-ignores-dimension"`` uses :math:`\Delta_1 = 2/\sqrt N`; with
    :math:`J = 8 > N = 1` the true ε is :math:`\sqrt{J/N} = 2.8` times the claim.
    Pure DP: ``delta`` must be 0 (the curve test covers the implied
    :math:`(\varepsilon',\delta')` profile).

    Parameters
    ----------
    settings : AuditSettings, optional
        The claim, the runs, the test and the seed, shared by every audit (:class:`AuditSettings`);
        fields left unset take this audit's defaults: ε = 2, δ = 0 (pure ε-DP: no other δ), 5000 runs.
    variant : {"correct", "l1-ignores-dimension"}
        ``"l1-ignores-dimension"`` uses :math:`\Delta_1 = 2/\sqrt N` (**not private** when :math:`J > N`;
        default ``"correct"``).
    n : int
        Rows of the worst-case dataset (default 1); ignored when ``X`` is given.
    n_features : int
        Number of random features :math:`J`, at least 2 (default 8).
    dim : int, optional
        Input dimension :math:`d` (default :math:`J/2`, so that the worst-case pair is exact).
    lengthscale : float
        Length scale of the Gaussian kernel of the features (default 1).
    X, X_neighbour : array-like of shape (n, d) and (n', d), optional
        A neighbouring pair to audit instead of the worst case (both or neither; replace-one
        neighbours: same shape, at most one row differs). Synthetic test inputs: the audit runs the mechanism thousands of times on
        them, so never pass data whose privacy matters.

    Returns
    -------
    AuditResult
        The lower bound :math:`\varepsilon_{\mathrm{lb}}` and its event, the scores of the runs, the
        audited and exact :math:`\varepsilon(\delta)` curves, the privacy-loss histogram, and a
        description of the pair (``neighbours``) and of the mechanism's settings (``params``).

    Examples
    --------
    >>> from dpkme.audit import AuditSettings, audit_laplace
    >>> audit_laplace(settings=AuditSettings(runs=1000, random_state=0), variant="l1-ignores-dimension").violation
    True
    """
    epsilon, delta, runs, alpha, selection, selection_fraction, random_state, progress = _unpack(
        settings, audit="laplace")
    t0 = time.perf_counter()
    eps, _dl, runs, alpha = _check_common(epsilon, delta, runs, alpha, pure=True)
    check_in(variant, VARIANTS["laplace"], name="variant")
    n = check_positive_int(n, name="n")
    J = check_positive_int(n_features, name="n_features", minimum=2)
    dim = J // 2 if dim is None else check_positive_int(dim, name="dim")
    kernel = GaussianKernel(lengthscale=lengthscale)
    feats = RandomFourierFeatures(kernel, n_components=J, random_state=_public_seed(random_state),
                                  dtype="float64").fit(dim)
    l1 = "paper" if variant == "l1-ignores-dimension" else "correct"

    def default():
        x, xp = rff_l1_pair(feats)
        return neighbour_pair(np.tile(x, (n, 1)), xp)

    D, Dn, how = _pair_or_given(X, X_neighbour, default, dim)
    _check_neighbours(D, Dn, "replace-one")
    md, mp = feats.mean_embedding(D), feats.mean_embedding(Dn)
    _, cal = laplace_feature_release(D, feats, epsilon=eps, l1=l1, rng=np.random.default_rng(0))
    b = cal.scale

    def llr(Y):
        return (np.abs(Y - mp).sum(axis=-1) - np.abs(Y - md).sum(axis=-1)) / b

    def run(which, seed):
        v, _ = laplace_feature_release(D if which == 0 else Dn, feats, epsilon=eps, l1=l1,
                                       rng=np.random.default_rng(seed))
        return float(llr(v))

    sd, sp = _collect(run, runs, random_state, progress, "Laplace mechanism")
    analytic = AnalyticCurve(DEFAULT_DELTA_GRID, _laplace_pair_curve(md - mp, b, DEFAULT_DELTA_GRID),
                             pure_dp_curve(eps), "Laplace mechanism (random-feature mean)")
    l1_pair = float(np.abs(md - mp).sum())
    return audit_scores(
        sd, sp, epsilon=eps, delta=0.0, alpha=alpha, selection=selection, selection_fraction=selection_fraction,
        thresholds=np.linspace(-l1_pair / b, l1_pair / b, 41) if selection == "bonferroni" else None,
        llr=lambda s: s, mechanism="laplace", variant=variant, analytic=analytic, pair_epsilon=l1_pair / b,
        neighbouring="replace-one", neighbours=_describe(D, Dn, "replace-one", how),
        scalar="Laplace log-likelihood ratio of the release", seconds=time.perf_counter() - t0,
        params={"n": int(D.shape[0]), "n_features": J, "dim": dim, "scale": b, "claimed_l1_sensitivity":
                cal.l1_sensitivity, "pair_l1_difference": l1_pair, "l1": l1},
    )


# --------------------------------------------------------------------------- Algorithm 1
def audit_algorithm1(*, settings: AuditSettings | None = None, n: int = 5, n_points: int = 7,
                     kernel: Kernel | None = None, points=None, neighbouring: str = "replace-one",
                     calibration: str = "analytic", sensitivity: str = "tight", X=None,
                     X_neighbour=None) -> AuditResult:
    r"""Audit :func:`dpkme.release.subspace.algorithm1` (Gaussian noise on the subspace coordinates).

    Public points :math:`Z` (default: ``n_points`` points on :math:`[-6, 6]`, 1-D,
    Gaussian kernel with length scale 1). Worst case: the replaced row and its
    replacement are the two points of :math:`Z` whose difference has the
    largest projected norm :math:`\|L^{-1}(k_A(z_i) - k_A(z_j))\|` (exhaustive
    search; add-remove: the single point with the largest :math:`\|L^{-1}k_A(z_i)\|`).
    Scalar: :math:`\beta = L^\top w_A` recovered from the released weights,
    projected on :math:`\alpha(D)-\alpha(D')`.

    Parameters
    ----------
    settings : AuditSettings, optional
        The claim, the runs, the test and the seed, shared by every audit (:class:`AuditSettings`);
        fields left unset take this audit's defaults: ε = 2, δ = 1e-2, 3000 runs.
    n : int
        Rows of the worst-case dataset, at least 2 (default 5); ignored when ``X`` is given.
    n_points : int
        Number of default public points, at least 2 (default 7); ignored when ``points`` is given.
    kernel : Kernel, optional
        Kernel with :math:`k(x, x) \le 1` (default :class:`~dpkme.kernels.GaussianKernel`, length scale 1).
    points : array-like of shape (M, d), optional
        Public points :math:`Z` (default: ``n_points`` points on :math:`[-6, 6]`).
    neighbouring : {"replace-one", "add-remove"}
        The neighbouring relation of the claim and of the worst-case pair (default ``"replace-one"``).
    calibration : {"analytic", "classic"}
        Gaussian calibration of :func:`~dpkme.release.subspace.algorithm1` (default ``"analytic"``).
    sensitivity : {"tight", "paper"}
        Sensitivity of :func:`~dpkme.release.subspace.algorithm1`: :math:`\sqrt2/N` or :math:`2/N` under
        replace-one (default ``"tight"``).
    X, X_neighbour : array-like of shape (n, d) and (n', d), optional
        A neighbouring pair to audit instead of the worst case (both or neither; they must be neighbours
        under ``neighbouring``). Synthetic test inputs: the audit runs the mechanism thousands of times on
        them, so never pass data whose privacy matters.

    Returns
    -------
    AuditResult
        The lower bound :math:`\varepsilon_{\mathrm{lb}}` and its event, the scores of the runs, the
        audited and exact :math:`\varepsilon(\delta)` curves, the privacy-loss histogram, and a
        description of the pair (``neighbours``) and of the mechanism's settings (``params``).
    """
    epsilon, delta, runs, alpha, selection, selection_fraction, random_state, progress = _unpack(
        settings, audit="algorithm1")
    from ..release.subspace import SubspaceBasis, algorithm1

    t0 = time.perf_counter()
    eps, dl, runs, alpha = _check_common(epsilon, delta, runs, alpha)
    check_in(neighbouring, NEIGHBOURING, name="neighbouring")
    kernel = GaussianKernel(lengthscale=1.0) if kernel is None else check_private_kernel(kernel)
    n = check_positive_int(n, name="n", minimum=2)
    Z = (np.linspace(-6.0, 6.0, check_positive_int(n_points, name="n_points", minimum=2))[:, None]
         if points is None else check_array(points, name="points"))
    B = SubspaceBasis.fit(Z, kernel=kernel)
    L, acc = B.factor, B.accepted
    if not B.dim:
        raise ValueError("the public points span nothing (empty basis).")

    def coords(rows: np.ndarray) -> np.ndarray:  # L^{-1} k_A(x) for each row (F x r)
        from scipy.linalg import solve_triangular
        return solve_triangular(L, kernel.cross(Z[acc], rows), lower=True)

    def default():
        base = np.tile(Z[len(Z) // 2], (n, 1))
        if neighbouring == "add-remove":
            c = coords(Z)
            i = int(np.argmax(np.linalg.norm(c, axis=0)))
            base[0] = Z[i]
            return neighbour_pair(base, neighbouring="add-remove")
        c = coords(Z)
        i, j, _ = best_pair(np.arange(Z.shape[0])[:, None].astype(float),
                            lambda a, b: float(np.linalg.norm(c[:, int(a[0])] - c[:, int(b[0])])))
        base[0] = Z[i]
        return neighbour_pair(base, Z[j])

    D, Dn, how = _pair_or_given(X, X_neighbour, default, Z.shape[1])
    _check_neighbours(D, Dn, neighbouring)
    n_pub = D.shape[0] if neighbouring == "replace-one" else max(D.shape[0], Dn.shape[0])
    ad = B.coordinates(kernel.row_means(Z, D) * (D.shape[0] / n_pub))
    ap = B.coordinates(kernel.row_means(Z, Dn) * (Dn.shape[0] / n_pub))
    u = _unit(ad - ap)
    kwargs = dict(kernel=kernel, epsilon=eps, delta=dl, neighbouring=neighbouring, calibration=calibration,
                  sensitivity=sensitivity, basis_cache=B,
                  n_private=n_pub if neighbouring == "add-remove" else None)
    LTu = L @ u  # beta . u = w_A . (L u)
    info = {}

    def run(which, seed):
        rel = algorithm1(D if which == 0 else Dn, Z, random_state=seed, **kwargs)
        info.setdefault("sigma", rel.sigma)
        info.setdefault("sensitivity", rel.sensitivity)
        return float(rel.weights[acc] @ LTu)

    sd, sp = _collect(run, runs, random_state, progress, "Algorithm 1")
    sigma = info["sigma"]
    m_d, m_p = float(ad @ u), float(ap @ u)
    return _finish_gaussian(
        sd, sp, m_d=m_d, m_p=m_p, sigma=sigma, mu_pair=(m_d - m_p) / sigma, mu_claimed=info["sensitivity"] / sigma,
        eps=eps, delta=dl, alpha=alpha, selection=selection, selection_fraction=selection_fraction,
        name="algorithm1", variant="correct",
        neighbouring=neighbouring, neighbours=_describe(D, Dn, neighbouring, how, {"n_points": int(Z.shape[0])}),
        t0=t0, scalar="beta = L^T w_A projected on alpha(D) - alpha(D')", label="Algorithm 1",
        params={"n": n_pub, "n_points": int(Z.shape[0]), "basis_dim": B.dim, "calibration": calibration,
                "sensitivity_mode": sensitivity, "claimed_sensitivity": info["sensitivity"],
                "pair_difference": float(np.linalg.norm(ad - ap))})


# --------------------------------------------------------------------------- Algorithm 2
def audit_algorithm2(*, settings: AuditSettings | None = None, variant: str = "correct", n: int = 5,
                     n_features: int = 8, dim: int | None = None, lengthscale: float = 1.0,
                     neighbouring: str = "replace-one", calibration: str = "analytic", X=None,
                     X_neighbour=None) -> AuditResult:
    r"""Audit the private step of Algorithm 2 (:func:`dpkme.release.random_features.privatise_feature_mean`).

    The rest of Algorithm 2 is post-processing of :math:`\tilde\mu`, so this
    is the whole privacy claim. Worst case
    (:func:`~dpkme.audit.neighbours.rff_antipodal_pair`): :math:`\phi(x') = -\phi(x)`,
    :math:`\|\phi(x)-\phi(x')\| = 2` -- the sensitivity :math:`2/N` is attained
    (add-remove: the row is removed, :math:`1/N`). Scalar: :math:`\tilde\mu`
    projected on :math:`\bar\phi(D) - \bar\phi(D')`.

    ``variant="cosine-features"`` replaces the features by
    :class:`~dpkme.kernels.random_features.CosineBiasFeatures` with the same calibration
    (:func:`cosine_feature_release`); its worst pair
    (:func:`~dpkme.audit.neighbours.cosine_antipodal_pair`) differs by
    :math:`2\sqrt2/N`. Requires ``dim >= n_features`` (default) for the exact pair.

    Parameters
    ----------
    settings : AuditSettings, optional
        The claim, the runs, the test and the seed, shared by every audit (:class:`AuditSettings`);
        fields left unset take this audit's defaults: ε = 2, δ = 1e-2, 3000 runs.
    variant : {"correct", "cosine-features"}
        ``"cosine-features"`` uses :func:`cosine_feature_release` (**not private**; default ``"correct"``).
    n : int
        Rows of the worst-case dataset, at least 2 (default 5); ignored when ``X`` is given.
    n_features : int
        Number of random features :math:`J`, at least 2 (default 8).
    dim : int, optional
        Input dimension :math:`d` (default :math:`J/2` for paired features and :math:`J` for cosine
        features, so that the worst-case pair is exact).
    lengthscale : float
        Length scale of the Gaussian kernel of the features (default 1).
    neighbouring : {"replace-one", "add-remove"}
        The neighbouring relation of the claim and of the worst-case pair (default ``"replace-one"``).
    calibration : {"analytic", "classic"}
        Gaussian calibration of :func:`~dpkme.release.random_features.privatise_feature_mean` (default
        ``"analytic"``; the ``"cosine-features"`` variant always uses the analytic one).
    X, X_neighbour : array-like of shape (n, d) and (n', d), optional
        A neighbouring pair to audit instead of the worst case (both or neither; they must be neighbours
        under ``neighbouring``). Synthetic test inputs: the audit runs the mechanism thousands of times on
        them, so never pass data whose privacy matters.

    Returns
    -------
    AuditResult
        The lower bound :math:`\varepsilon_{\mathrm{lb}}` and its event, the scores of the runs, the
        audited and exact :math:`\varepsilon(\delta)` curves, the privacy-loss histogram, and a
        description of the pair (``neighbours``) and of the mechanism's settings (``params``).
    """
    epsilon, delta, runs, alpha, selection, selection_fraction, random_state, progress = _unpack(
        settings, audit="algorithm2")
    from ..release.random_features import privatise_feature_mean

    t0 = time.perf_counter()
    eps, dl, runs, alpha = _check_common(epsilon, delta, runs, alpha)
    check_in(variant, VARIANTS["algorithm2"], name="variant")
    check_in(neighbouring, NEIGHBOURING, name="neighbouring")
    n = check_positive_int(n, name="n", minimum=2)
    J = check_positive_int(n_features, name="n_features", minimum=2)
    kernel = GaussianKernel(lengthscale=lengthscale)
    fseed = _public_seed(random_state)
    cosine = variant == "cosine-features"
    if cosine:
        dim = J if dim is None else check_positive_int(dim, name="dim")
        feats = CosineBiasFeatures(kernel, n_components=J, random_state=fseed).fit(dim)
        pair = cosine_antipodal_pair
    else:
        dim = max(1, J // 2) if dim is None else check_positive_int(dim, name="dim")
        feats = RandomFourierFeatures(kernel, n_components=J, random_state=fseed, dtype="float64").fit(dim)
        pair = rff_antipodal_pair

    def default():
        x, xp = pair(feats)
        base = np.tile(x, (n, 1))
        if neighbouring == "add-remove":  # remove a row of largest feature norm (cosine features: sqrt(2) at x)
            return neighbour_pair(base, neighbouring="add-remove")
        return neighbour_pair(base, xp)

    D, Dn, how = _pair_or_given(X, X_neighbour, default, dim)
    _check_neighbours(D, Dn, neighbouring)
    n_pub = D.shape[0] if neighbouring == "replace-one" else max(D.shape[0], Dn.shape[0])
    n_priv = n_pub if neighbouring == "add-remove" else None

    def mean(A):
        return feats.transform(A).sum(axis=0) / n_pub

    md, mp = mean(D), mean(Dn)
    u = _unit(md - mp)

    if cosine:
        def release(A, seed):
            return cosine_feature_release(A, feats, epsilon=eps, delta=dl, neighbouring=neighbouring,
                                          n_private=n_priv, rng=np.random.default_rng(seed))
    else:
        def release(A, seed):
            return privatise_feature_mean(A, feats, epsilon=eps, delta=dl, calibration=calibration,
                                          neighbouring=neighbouring, rng=np.random.default_rng(seed),
                                          n_private=n_priv)
    _, cal = release(D, 0)

    def run(which, seed):
        v, _ = release(D if which == 0 else Dn, seed)
        return float(v @ u)

    sd, sp = _collect(run, runs, random_state, progress, "Algorithm 2 (private step)")
    m_d, m_p = float(md @ u), float(mp @ u)
    return _finish_gaussian(
        sd, sp, m_d=m_d, m_p=m_p, sigma=cal.sigma, mu_pair=(m_d - m_p) / cal.sigma,
        mu_claimed=cal.sensitivity / cal.sigma, eps=eps, delta=dl, alpha=alpha, selection=selection,
        selection_fraction=selection_fraction,
        name="algorithm2", variant=variant, neighbouring=neighbouring,
        neighbours=_describe(D, Dn, neighbouring, how, {"n_features": J}), t0=t0,
        scalar="noisy mean feature vector projected on phi(D) - phi(D')",
        label="Algorithm 2" + (" with cos(wx+b) features" if cosine else ""),
        params={"n": n_pub, "n_features": J, "dim": dim, "features": type(feats).__name__,
                "claimed_sensitivity": cal.sensitivity, "pair_difference": float(np.linalg.norm(md - mp))})


# --------------------------------------------------------------------------- exponential mechanism
def _exact_pair_curve(p: np.ndarray, q: np.ndarray, deltas) -> np.ndarray:
    """ε(δ) of two finite distributions (hockey-stick divergence, both directions)."""
    def delta_of(eps):
        eps = np.asarray(eps, dtype=np.float64)
        e = np.exp(np.minimum(eps, 700.0))[:, None]
        return np.maximum(np.maximum(p[None] - e * q[None], 0.0).sum(axis=1),
                          np.maximum(q[None] - e * p[None], 0.0).sum(axis=1))
    return curve_from_delta_function(delta_of, deltas)


def _best_event_epsilon(p: np.ndarray, q: np.ndarray, runs: int) -> float:
    """Largest log P_D(S)/P_D'(S) over LLR-ordered events S with P_D'(S) >= 20/runs (a detectability score)."""
    best = 0.0
    for a, b in ((p, q), (q, p)):
        with np.errstate(divide="ignore"):
            order = np.argsort(-(np.log(a) - np.log(b)))
        ca, cb = np.cumsum(a[order]), np.cumsum(b[order])
        ok = cb >= 20.0 / runs
        if ok.any():
            best = max(best, float(np.max(np.log(ca[ok] / cb[ok]))))
    return best


def audit_exponential(*, settings: AuditSettings | None = None, n: int = 2, candidates=None, m: int = 1,
                      kernel: Kernel | None = None, neighbouring: str = "replace-one", sensitivity: str = "tight",
                      X=None, X_neighbour=None) -> AuditResult:
    r"""Audit the exact exponential mechanism (:func:`dpkme.release.exponential.database_scores` and its sampler).

    Public candidates (default: 3 points on :math:`[-2, 2]`, 1-D, Gaussian
    kernel, length scale 1), synthetic databases of ``m`` points. Worst case: an
    exhaustive search over datasets of ``n`` rows placed at the candidates or
    at a far outlier, for the neighbouring pair whose exact output
    distributions have the most detectable event at this number of runs.
    Runs: ``runs`` exact draws from :meth:`~dpkme.release.exponential.DatabaseScores.sample_rank`
    (the sampler of every release) per dataset. Scalar: the exact
    log-likelihood ratio of the drawn database.

    Parameters
    ----------
    settings : AuditSettings, optional
        The claim, the runs, the test and the seed, shared by every audit (:class:`AuditSettings`);
        fields left unset take this audit's defaults: ε = 2, δ = 0 (pure ε-DP: no other δ), 5000 runs.
    n : int
        Rows of the datasets searched for the worst case, 1 to 6 (default 2; at least 2 for add-remove).
    candidates : array-like of shape (G, d), optional
        Public candidate points of the synthetic databases (default: 3 points on :math:`[-2, 2]`).
    m : int
        Size of the synthetic database, 1 to 3 (default 1): the output space has
        :math:`\binom{G + m - 1}{m}` databases.
    kernel : Kernel, optional
        Kernel with :math:`k(x, x) \le 1` (default :class:`~dpkme.kernels.GaussianKernel`, length scale 1).
    neighbouring : {"replace-one", "add-remove"}
        The neighbouring relation of the claim and of the worst-case pair (default ``"replace-one"``).
    sensitivity : {"tight", "paper"}
        Sensitivity of the utility (:func:`dpkme.release.exponential.score_sensitivity`; default ``"tight"``).
    X, X_neighbour : array-like of shape (n, d) and (n', d), optional
        A neighbouring pair to audit instead of the worst case (both or neither; they must be neighbours
        under ``neighbouring``). Synthetic test inputs: the audit runs the mechanism thousands of times on
        them, so never pass data whose privacy matters.

    Returns
    -------
    AuditResult
        The lower bound :math:`\varepsilon_{\mathrm{lb}}` and its event, the scores of the runs, the
        audited and exact :math:`\varepsilon(\delta)` curves, the privacy-loss histogram, and a
        description of the pair (``neighbours``) and of the mechanism's settings (``params``).
    """
    epsilon, delta, runs, alpha, selection, selection_fraction, random_state, progress = _unpack(
        settings, audit="exponential")
    from itertools import combinations_with_replacement

    from ..release.exponential import database_scores

    t0 = time.perf_counter()
    eps, _, runs, alpha = _check_common(epsilon, delta, runs, alpha, pure=True)
    check_in(neighbouring, NEIGHBOURING, name="neighbouring")
    kernel = GaussianKernel(lengthscale=1.0) if kernel is None else check_private_kernel(kernel)
    n = check_positive_int(n, name="n", minimum=1, maximum=6)
    G = np.linspace(-2.0, 2.0, 3)[:, None] if candidates is None else check_array(candidates, name="candidates")
    m = check_positive_int(m, name="m", maximum=3)

    def scores(A, n_pub):
        return database_scores(A, G, kernel=kernel, m=m, neighbouring=neighbouring, sensitivity=sensitivity,
                               n_private=n_pub if neighbouring == "add-remove" else None)

    def default():
        far = G[0] + 50.0 * kernel.lengthscale
        pos = np.vstack([G, far[None, :]])
        best = None
        for rows in combinations_with_replacement(range(pos.shape[0]), n):
            A = pos[list(rows)]
            if neighbouring == "add-remove":
                if n < 2:
                    continue
                options = [np.delete(A, 0, axis=0)]
            else:
                options = [neighbour_pair(A, pos[j])[1] for j in range(pos.shape[0]) if j != rows[0]]
            pa = scores(A, n).probabilities(eps)
            for B in options:
                pb = scores(B, n).probabilities(eps)
                s = _best_event_epsilon(pa, pb, runs)
                if best is None or s > best[0]:
                    best = (s, A, B)
        if best is None:
            raise ValueError("add-remove audits need n >= 2 rows.")
        return best[1], best[2]

    D, Dn, how = _pair_or_given(X, X_neighbour, default, G.shape[1])
    _check_neighbours(D, Dn, neighbouring)
    n_pub = D.shape[0] if neighbouring == "replace-one" else max(D.shape[0], Dn.shape[0])
    sd_obj, sp_obj = scores(D, n_pub), scores(Dn, n_pub)
    p, q = sd_obj.probabilities(eps), sp_obj.probabilities(eps)
    with np.errstate(divide="ignore"):
        table = np.log(p) - np.log(q)
    table = np.nan_to_num(table, nan=0.0, posinf=1e3, neginf=-1e3)
    seeds = _seeds(random_state, 2)
    reporter = Progress(progress)
    reporter(0.0, "exponential mechanism: sampling", force=True)
    rd = sd_obj.sample_rank(eps, np.random.default_rng(int(seeds[0])), size=runs)
    rp = sp_obj.sample_rank(eps, np.random.default_rng(int(seeds[1])), size=runs)
    reporter.finish("exponential mechanism: sampled")
    analytic = AnalyticCurve(DEFAULT_DELTA_GRID, _exact_pair_curve(p, q, DEFAULT_DELTA_GRID), pure_dp_curve(eps),
                             "exponential mechanism (exact)")
    return audit_scores(
        table[rd], table[rp], epsilon=eps, delta=0.0, alpha=alpha, selection=selection,
        selection_fraction=selection_fraction,
        thresholds=np.unique(table) if selection == "bonferroni" else None, llr=lambda s: s,
        mechanism="exponential", variant="correct", analytic=analytic,
        pair_epsilon=float(np.max(np.abs(table))), neighbouring=neighbouring,
        neighbours=_describe(D, Dn, neighbouring, how, {"n_candidates": int(G.shape[0]), "m": m}),
        scalar="exact log-likelihood ratio of the released database", seconds=time.perf_counter() - t0,
        params={"n": n_pub, "m": m, "n_candidates": int(G.shape[0]), "n_databases": int(p.shape[0]),
                "score_sensitivity": sd_obj.sensitivity, "sensitivity_mode": sensitivity},
    )


# --------------------------------------------------------------------------- GP release
def audit_gp_release(*, settings: AuditSettings | None = None, n: int = 5, query_points=None,
                     kernel: Kernel | None = None, neighbouring: str = "replace-one", calibration: str = "analytic",
                     X=None, X_neighbour=None) -> AuditResult:
    r"""Audit :func:`dpkme.release.gp.gp_release` at a few public query points.

    Default: 4 query points on :math:`[-3, 3]` (1-D), Gaussian kernel with
    length scale 1. Worst case: the replaced row and its replacement among the
    query points and a far outlier, maximising the Mahalanobis norm
    :math:`\sqrt{h^\top\Sigma^{-1}h}` of :math:`h = f_D(P) - f_{D'}(P)` under the
    noise covariance actually sampled (:meth:`~dpkme.release.gp.GPSampler.covariance`).
    Scalar: :math:`(\Sigma^{-1}h)^\top Y` (the log-likelihood-ratio direction).

    Parameters
    ----------
    settings : AuditSettings, optional
        The claim, the runs, the test and the seed, shared by every audit (:class:`AuditSettings`);
        fields left unset take this audit's defaults: ε = 2, δ = 1e-2, 3000 runs.
    n : int
        Rows of the worst-case dataset, at least 2 (default 5); ignored when ``X`` is given.
    query_points : array-like of shape (Q, d), optional
        Public points :math:`P` where the release is evaluated (default: 4 points on :math:`[-3, 3]`).
    kernel : Kernel, optional
        Kernel with :math:`k(x, x) \le 1` (default :class:`~dpkme.kernels.GaussianKernel`, length scale 1).
    neighbouring : {"replace-one", "add-remove"}
        The neighbouring relation of the claim and of the worst-case pair (default ``"replace-one"``).
    calibration : {"analytic", "hall"}
        Calibration of :func:`~dpkme.release.gp.gp_release` (default ``"analytic"``).
    X, X_neighbour : array-like of shape (n, d) and (n', d), optional
        A neighbouring pair to audit instead of the worst case (both or neither; they must be neighbours
        under ``neighbouring``). Synthetic test inputs: the audit runs the mechanism thousands of times on
        them, so never pass data whose privacy matters.

    Returns
    -------
    AuditResult
        The lower bound :math:`\varepsilon_{\mathrm{lb}}` and its event, the scores of the runs, the
        audited and exact :math:`\varepsilon(\delta)` curves, the privacy-loss histogram, and a
        description of the pair (``neighbours``) and of the mechanism's settings (``params``).
    """
    epsilon, delta, runs, alpha, selection, selection_fraction, random_state, progress = _unpack(
        settings, audit="gp")
    from ..release.gp import gp_release, gp_sampler

    t0 = time.perf_counter()
    eps, dl, runs, alpha = _check_common(epsilon, delta, runs, alpha)
    check_in(neighbouring, NEIGHBOURING, name="neighbouring")
    kernel = GaussianKernel(lengthscale=1.0) if kernel is None else check_private_kernel(kernel)
    n = check_positive_int(n, name="n", minimum=2)
    P = np.linspace(-3.0, 3.0, 4)[:, None] if query_points is None else check_array(query_points,
                                                                                      name="query_points")
    sampler = gp_sampler(kernel, query_points=P)
    C = sampler.covariance()
    Cinv = np.linalg.inv(C)

    def maha(h):
        return float(h @ Cinv @ h)

    def default():
        far = P[0] + 50.0 * kernel.lengthscale
        pos = np.vstack([P, far[None, :]])
        kv = kernel.cross(pos, P)  # rows: candidate positions
        base = np.tile(pos[-1], (n, 1))
        if neighbouring == "add-remove":
            i = int(np.argmax([maha(kv[i]) for i in range(pos.shape[0])]))
            base[0] = pos[i]
            return neighbour_pair(base, neighbouring="add-remove")
        i, j, _ = best_pair(np.arange(pos.shape[0])[:, None].astype(float),
                            lambda a, b: maha(kv[int(a[0])] - kv[int(b[0])]))
        base[0] = pos[i]
        return neighbour_pair(base, pos[j])

    D, Dn, how = _pair_or_given(X, X_neighbour, default, P.shape[1])
    _check_neighbours(D, Dn, neighbouring)
    n_pub = D.shape[0] if neighbouring == "replace-one" else max(D.shape[0], Dn.shape[0])
    fd = kernel.row_means(P, D) * (D.shape[0] / n_pub)
    fp = kernel.row_means(P, Dn) * (Dn.shape[0] / n_pub)
    h = fd - fp
    v = Cinv @ h
    kwargs = dict(kernel=kernel, epsilon=eps, delta=dl, query_points=P, calibration=calibration,
                  neighbouring=neighbouring, sampler=sampler, keep_true_values=False,
                  n_private=n_pub if neighbouring == "add-remove" else None)
    info = {}

    def run(which, seed):
        rel = gp_release(D if which == 0 else Dn, random_state=seed, **kwargs)
        info.setdefault("scale", rel.scale)
        info.setdefault("sensitivity", rel.sensitivity)
        return float(rel.values @ v)

    sd, sp = _collect(run, runs, random_state, progress, "GP release")
    s = info["scale"]  # noise = s * GP(0, k): covariance s^2 C
    sigma_scalar = s * math.sqrt(float(h @ v))
    m_d, m_p = float(fd @ v), float(fp @ v)
    return _finish_gaussian(
        sd, sp, m_d=m_d, m_p=m_p, sigma=sigma_scalar, mu_pair=(m_d - m_p) / sigma_scalar,
        mu_claimed=info["sensitivity"] / s, eps=eps, delta=dl, alpha=alpha, selection=selection,
        selection_fraction=selection_fraction, name="gp",
        variant="correct", neighbouring=neighbouring,
        neighbours=_describe(D, Dn, neighbouring, how, {"n_query_points": int(P.shape[0])}), t0=t0,
        scalar="released values in the Mahalanobis direction Sigma^-1 h", label="GP release",
        params={"n": n_pub, "n_query_points": int(P.shape[0]), "calibration": calibration, "scale": s,
                "claimed_sensitivity": info["sensitivity"], "mahalanobis_difference": math.sqrt(maha(h))})


# --------------------------------------------------------------------------- DP k-means
def audit_kmeans(*, settings: AuditSettings | None = None, n: int = 10, n_features: int = 4, dim: int = 2,
                 lengthscale: float = 1.0) -> AuditResult:
    r"""Audit :func:`dpkme.clustering.dp_kernel_kmeans` (k = 2, one noisy Lloyd step, replace-one).

    Worst case for the joint (sizes, sums) release: a row moves between
    clusters. :math:`D` has ``n`` rows at the public initial point :math:`a`;
    :math:`D'` replaces one of them by a row at the other initial point
    :math:`b` (far away), so the sizes change by :math:`(-1, +1)` and the sums by
    :math:`(-\phi(a), +\phi(b))`: :math:`\mu^2 = 2/\sigma_n^2 + 2/\sigma_s^2`, the
    step's full sensitivity at the default budget split. Released per run:
    noisy sizes and the centres (``shrink=False``, ``min_count`` 1 -- public
    post-processing choices). Scalar: the log-likelihood ratio of the raw step
    with the sums estimated as ``centre * noisy size`` (exact when a centre was
    updated and not projected). It audits the released output, so the bound
    is typically well below the claim.

    Parameters
    ----------
    settings : AuditSettings, optional
        The claim, the runs, the test and the seed, shared by every audit (:class:`AuditSettings`);
        fields left unset take this audit's defaults: ε = 2, δ = 1e-2, 1000 runs.
    n : int
        Rows of :math:`D`, at least 2 (default 10).
    n_features : int
        Number of random features :math:`J`, at least 2 (default 4).
    dim : int
        Input dimension :math:`d` (default 2).
    lengthscale : float
        Length scale of the Gaussian kernel; the second initial point is 50 length scales away (default 1).

    Returns
    -------
    AuditResult
        The lower bound :math:`\varepsilon_{\mathrm{lb}}` and its event, the scores of the runs, the
        audited and exact :math:`\varepsilon(\delta)` curves, the privacy-loss histogram, and a
        description of the pair (``neighbours``) and of the mechanism's settings (``params``).
    """
    epsilon, delta, runs, alpha, selection, selection_fraction, random_state, progress = _unpack(
        settings, audit="kmeans")
    from ..clustering import dp_kernel_kmeans, plan_kmeans

    t0 = time.perf_counter()
    eps, dl, runs, alpha = _check_common(epsilon, delta, runs, alpha)
    n = check_positive_int(n, name="n", minimum=2)
    J = check_positive_int(n_features, name="n_features", minimum=2)
    dim = check_positive_int(dim, name="dim")
    kernel = GaussianKernel(lengthscale=lengthscale)
    feats = RandomFourierFeatures(kernel, n_components=J, random_state=_public_seed(random_state),
                                  dtype="float64").fit(dim)
    a = np.zeros(dim)
    b = np.zeros(dim)
    b[0] = 50.0 * lengthscale
    init = np.vstack([a, b])
    D, Dn = neighbour_pair(np.tile(a, (n, 1)), b)
    plan = plan_kmeans(epsilon=eps, delta=dl, n_iter=1, neighbouring="replace-one", n_features=J)
    step = plan.step("lloyd")
    sn, ss = step.sigma_count, step.sigma_sum(1.0)
    pa, pb = feats.transform(init)
    mu_pair = math.sqrt(2.0 / sn**2 + (float(pa @ pa) + float(pb @ pb)) / ss**2)

    def statistic(counts, centres, updated):
        s = (counts[1] - counts[0]) / sn**2
        sums = centres * counts[:, None] * updated[:, None]
        return s + (float(sums[1] @ pb) - float(sums[0] @ pa)) / ss**2

    def run(which, seed):
        res = dp_kernel_kmeans(D if which == 0 else Dn, k=2, plan=plan, features=feats, init=init,
                               preimages="none", local_view=False, shrink=False, min_count=1e-9,
                               random_state=seed)
        rec = res.history[1]
        return statistic(rec.noisy_counts, rec.centres, rec.updated.astype(float))

    sd, sp = _collect(run, runs, random_state, progress, "DP k-means")
    # means of the raw step's log-likelihood-ratio statistic under D and D' (for the fixed Bonferroni grid)
    m_d = -n / sn**2 - n * float(pa @ pa) / ss**2
    m_p = (2 - n) / sn**2 + (float(pb @ pb) - (n - 1) * float(pa @ pa)) / ss**2
    total_eps = float(plan.epsilon())
    return audit_scores(
        sd, sp, epsilon=eps, delta=dl, alpha=alpha, selection=selection, selection_fraction=selection_fraction,
        thresholds=_default_thresholds(m_d, m_p, mu_pair) if selection == "bonferroni" else None,
        mechanism="kmeans", variant="correct", analytic=gaussian_curve(mu_pair, step.mu, label="DP k-means (one step)"),
        pair_epsilon=_pair_eps(mu_pair, dl), neighbouring="replace-one",
        neighbours=_describe(D, Dn, "replace-one", "worst case", {"k": 2, "n_iter": 1}),
        scalar="approximate log-likelihood ratio of the released sizes and centres",
        seconds=time.perf_counter() - t0,
        params={"n": n, "n_features": J, "sigma_count": sn, "sigma_sum": ss, "mu_step": step.mu,
                "mu_pair": mu_pair, "plan_epsilon": total_eps},
    )


# --------------------------------------------------------------------------- two-sample tests
def audit_two_sample(*, settings: AuditSettings | None = None, variant: str = "correct", n: int = 20,
                     n_locations: int = 3, gamma: float = 1e-5) -> AuditResult:
    r"""Audit the private two-sample test (TCMC) or the paper's perturbed statistic.

    Neighbours: :func:`dpkme.two_sample.audit.statistic_sensitivity_counterexample`
    realised with ME features (``n_locations`` locations on a line, Gaussian
    kernel, length scale 1): every pair is :math:`(v_1, \text{far})`, the
    neighbour swaps one pair.

    ``variant="correct"``: :func:`dpkme.two_sample.tcmc_test` (noisy mean and
    second moment, calibrated jointly). Scalar: their log-likelihood ratio
    (Frobenius inner product for the symmetric matrix noise).
    ``variant="perturbed-statistic"``:
    :func:`dpkme.two_sample.audit.perturbed_statistic_release`, whose published
    sensitivity is far too small (scalar: the released statistic); it must be
    caught at any ε.

    Parameters
    ----------
    settings : AuditSettings, optional
        The claim, the runs, the test and the seed, shared by every audit (:class:`AuditSettings`);
        fields left unset take this audit's defaults: ε = 2, δ = 1e-2, 2000 runs.
    variant : {"correct", "perturbed-statistic"}
        ``"perturbed-statistic"`` audits Raj et al.'s statistic (**not private**; default ``"correct"``).
    n : int
        Number of sample pairs :math:`(x_i, y_i)`, at least 3 (default 20).
    n_locations : int
        Number of ME test locations :math:`J` (default 3), at :math:`0, 1, \dots, J-1`.
    gamma : float
        Regularisation :math:`\gamma` of the perturbed statistic (default :math:`10^{-5}`, their code's);
        used by ``"perturbed-statistic"`` only.

    Returns
    -------
    AuditResult
        The lower bound :math:`\varepsilon_{\mathrm{lb}}` and its event, the scores of the runs, the
        audited and exact :math:`\varepsilon(\delta)` curves, the privacy-loss histogram, and a
        description of the pair (``neighbours``) and of the mechanism's settings (``params``).
    """
    epsilon, delta, runs, alpha, selection, selection_fraction, random_state, progress = _unpack(
        settings, audit="two-sample")
    from ..two_sample import make_features, tcmc_test
    from ..two_sample.audit import perturbed_statistic_release, statistic_sensitivity_counterexample

    t0 = time.perf_counter()
    eps, dl, runs, alpha = _check_common(epsilon, delta, runs, alpha)
    check_in(variant, VARIANTS["two-sample"], name="variant")
    n = check_positive_int(n, name="n", minimum=3)
    J = check_positive_int(n_locations, name="n_locations")
    feats = make_features("me", locations=np.arange(J, dtype=float)[:, None], lengthscale=1.0)
    ce = statistic_sensitivity_counterexample(n=n, gamma=gamma, features=feats)
    pairs = ((ce["X"], ce["Y"]), (ce["X_neighbour"], ce["Y_neighbour"]))
    neighbours = {"n": n, "n_neighbour": n, "dim": 1, "neighbouring": "replace-one", "pair": "worst case",
                  "rows_changed": [0], "description": "every pair (v1, far); the neighbour swaps pair 0"}
    if variant == "perturbed-statistic":
        info = {}

        def run(which, seed):
            X, Y = pairs[which]
            rel = perturbed_statistic_release(X, Y, features=feats, epsilon=eps, delta=dl, gamma=gamma,
                                              random_state=seed)
            info.setdefault("sigma", rel.sigma)
            info.setdefault("claimed", rel.claimed_sensitivity)
            return rel.statistic

        sd, sp = _collect(run, runs, random_state, progress, "perturbed statistic")
        sigma = info["sigma"]
        m_d, m_p = ce["statistic"], ce["statistic_neighbour"]
        return _finish_gaussian(
            sd, sp, m_d=m_d, m_p=m_p, sigma=sigma, mu_pair=abs(m_d - m_p) / sigma, mu_claimed=info["claimed"] / sigma,
            eps=eps, delta=dl, alpha=alpha, selection=selection, selection_fraction=selection_fraction,
            name="two-sample", variant=variant,
            neighbouring="replace-one", neighbours=neighbours, t0=t0, scalar="the released statistic",
            label="perturbed two-sample statistic (Raj et al.)",
            params={"n": n, "n_features": J, "gamma": gamma, "statistic_change": abs(m_d - m_p),
                    "claimed_sensitivity": info["claimed"]})

    def moments(X, Y):
        Z = feats.transform(X) - feats.transform(Y)
        S = Z.T @ Z / Z.shape[0]
        return Z.mean(axis=0), 0.5 * (S + S.T)

    # worst pair for the joint (mean, second moment) release: every pair is (x0, y0) in D, and pair 0 becomes
    # (x1, y1) in D'; exhaustive over pairs of positions (the locations and a far point)
    from ..two_sample.private import DEFAULT_MEAN_FRACTION, calibrate_moments
    from ..two_sample.sensitivity import paired_mean_sensitivity, paired_second_moment_sensitivity

    cm = calibrate_moments(epsilon=eps, delta=dl, mean_fraction=DEFAULT_MEAN_FRACTION,
                           sensitivity_mean=paired_mean_sensitivity(n=n, diff_bound=feats.diff_bound),
                           sensitivity_second=paired_second_moment_sensitivity(n=n, diff_bound=feats.diff_bound))
    pos = np.vstack([feats.locations, feats.locations[:1] + 50.0])
    cand = [(i, j) for i in range(pos.shape[0]) for j in range(pos.shape[0]) if i != j]
    zc = np.array([feats.transform(pos[i:i + 1])[0] - feats.transform(pos[j:j + 1])[0] for i, j in cand])

    def mu2_of(z0, z1):
        d = z0 - z1
        O = np.outer(z0, z0) - np.outer(z1, z1)
        return float(d @ d) / cm.mean.sigma**2 + float(np.sum(O * O)) / cm.second.sigma**2

    a, b, _ = best_pair(np.arange(len(cand))[:, None].astype(float),
                        lambda u, v: mu2_of(zc[int(u[0])], zc[int(v[0])]))
    (i0, j0), (i1, j1) = cand[a], cand[b]
    Xd, Yd = np.tile(pos[i0], (n, 1)), np.tile(pos[j0], (n, 1))
    Xn, Yn = Xd.copy(), Yd.copy()
    Xn[0], Yn[0] = pos[i1], pos[j1]
    pairs = ((Xd, Yd), (Xn, Yn))
    neighbours = {**neighbours, "description": "every pair (x0, y0); the neighbour replaces pair 0 by (x1, y1), "
                  "chosen to maximise the joint mean/second-moment difference",
                  "row": [float(pos[i0, 0]), float(pos[j0, 0])], "row_neighbour": [float(pos[i1, 0]),
                                                                                  float(pos[j1, 0])]}

    (wd, Sd), (wp, Sp) = moments(*pairs[0]), moments(*pairs[1])
    info = {}

    def run(which, seed):
        X, Y = pairs[which]
        res = tcmc_test(X, Y, features=feats, epsilon=eps, delta=dl, null="chi2", n_null=99, random_state=seed)
        if not info:
            info.update(sw=res.noise["sigma_mean"], ss=res.noise["sigma_second"])
        w, S = res.released["mean"], res.released["second_moment"]
        return float((w @ (wd - wp)) / info["sw"] ** 2 + np.sum(S * (Sd - Sp)) / info["ss"] ** 2)

    sd, sp = _collect(run, runs, random_state, progress, "TCMC two-sample test")
    sw, ss = info["sw"], info["ss"]
    mu2 = float((wd - wp) @ (wd - wp)) / sw**2 + float(np.sum((Sd - Sp) ** 2)) / ss**2
    mu_pair = math.sqrt(mu2)
    # the scalar is N(m, mu2) under each dataset, means differing by mu2
    m_d = float(wd @ (wd - wp)) / sw**2 + float(np.sum(Sd * (Sd - Sp))) / ss**2
    m_p = float(wp @ (wd - wp)) / sw**2 + float(np.sum(Sp * (Sd - Sp))) / ss**2
    from ..privacy.calibration import analytic_sigma
    mu_claimed = 1.0 / analytic_sigma(epsilon=eps, delta=dl, sensitivity=1.0)
    return _finish_gaussian(
        sd, sp, m_d=m_d, m_p=m_p, sigma=mu_pair, mu_pair=mu_pair, mu_claimed=mu_claimed, eps=eps, delta=dl,
        alpha=alpha, selection=selection, selection_fraction=selection_fraction, name="two-sample", variant="correct",
        neighbouring="replace-one",
        neighbours=neighbours, t0=t0, scalar="log-likelihood ratio of the noisy mean and second moment",
        label="TCMC two-sample test", params={"n": n, "n_features": J, "sigma_mean": sw, "sigma_second": ss})


# --------------------------------------------------------------------------- registry
AUDITS: dict[str, Callable[..., AuditResult]] = {
    "gaussian": audit_gaussian,
    "laplace": audit_laplace,
    "algorithm1": audit_algorithm1,
    "algorithm2": audit_algorithm2,
    "exponential": audit_exponential,
    "gp": audit_gp_release,
    "kmeans": audit_kmeans,
    "two-sample": audit_two_sample,
}

#: The audit table of docs/audits.md: (mechanism, variant, the claim's settings; the runs, α and seed are the
#: benchmark's). Mis-calibrated variants are expected to be caught (epsilon_lower_bound > claimed epsilon).
EXHIBITS: list[tuple[str, str, AuditSettings]] = [
    ("gaussian", "correct", AuditSettings(epsilon=2.0, delta=1e-2)),
    ("gaussian", "half-noise", AuditSettings(epsilon=2.0, delta=1e-2)),
    ("laplace", "correct", AuditSettings(epsilon=2.0)),
    ("laplace", "l1-ignores-dimension", AuditSettings(epsilon=2.0)),
    ("algorithm1", "correct", AuditSettings(epsilon=2.0, delta=1e-2)),
    ("algorithm2", "correct", AuditSettings(epsilon=2.0, delta=1e-2)),
    ("algorithm2", "cosine-features", AuditSettings(epsilon=2.0, delta=1e-2)),
    ("exponential", "correct", AuditSettings(epsilon=2.0)),
    ("gp", "correct", AuditSettings(epsilon=2.0, delta=1e-2)),
    ("kmeans", "correct", AuditSettings(epsilon=2.0, delta=1e-2)),
    ("two-sample", "correct", AuditSettings(epsilon=2.0, delta=1e-2)),
    ("two-sample", "perturbed-statistic", AuditSettings(epsilon=2.0, delta=1e-2)),
]


def run_audit(mechanism: str, *, settings: AuditSettings | None = None, privacy: PrivacySpec | None = None,
              **options) -> AuditResult:
    r"""Run the audit named ``mechanism`` (a key of :data:`AUDITS`) with its settings and options.

    Every audit of :data:`AUDITS` takes keyword arguments only: the shared ``settings`` and its own options;
    ``variant`` is checked against :data:`VARIANTS`, and ``variant="correct"`` is accepted (and dropped) for the
    audits that have no other variant.

    Parameters
    ----------
    mechanism : {"gaussian", "laplace", "algorithm1", "algorithm2", "exponential", "gp", "kmeans", "two-sample"}
        Which audit to run (:func:`audit_gaussian`, :func:`audit_laplace`, ...).
    settings : AuditSettings, optional
        The claimed ε and δ, the runs, the test's α and event selection, the seed and the progress callback
        (:class:`~dpkme.audit.settings.AuditSettings`); unset fields take the audit's defaults.
    privacy : PrivacySpec, optional
        The claim to audit, typed (:class:`~dpkme.privacy.spec.PrivacySpec`, the one a release is made with):
        its ε, δ, relation and calibration become the settings' ``epsilon`` and ``delta`` and the audit's
        ``neighbouring`` and ``calibration`` options (:func:`~dpkme.privacy.spec.resolve`: one of these also given
        in ``settings`` or ``options`` must agree, else a ValueError naming both). An audit without a ``neighbouring`` option audits replace-one claims
        only, one without a ``calibration`` option the analytic calibration only (a spec asking otherwise is a
        ValueError); a pure ε-DP audit (``laplace``, ``exponential``) audits :math:`\delta = 0`, the claim such
        a release records, whatever the spec's δ. The spec's noise source is not used: an audit's runs are
        seeded simulations on synthetic neighbours (``random_state``), whatever the release's noise.
    **options
        The audit's own keyword arguments (``variant``, ``n``, ``neighbouring``, ``X``, ...); an unknown one is a
        ``TypeError`` of the audit function.

    Returns
    -------
    AuditResult
        The audit's result (:func:`~dpkme.audit.bounds.audit_scores`).

    Examples
    --------
    Half the calibrated noise is refuted at 95 % confidence; the correct mechanism is not:

    >>> from dpkme.audit import AuditSettings, run_audit
    >>> settings = AuditSettings(runs=2000, random_state=0)
    >>> res = run_audit("gaussian", settings=settings, variant="half-noise")
    >>> res.violation, res.claimed_epsilon < res.epsilon_lower_bound < res.pair_epsilon
    (True, True)
    >>> run_audit("gaussian", settings=settings).passed
    True

    The claim can be the typed spec a release is made with:

    >>> from dpkme.privacy.spec import PrivacySpec
    >>> run_audit("gaussian", privacy=PrivacySpec(epsilon=2.0, delta=1e-2), settings=settings).passed
    True
    """
    check_in(mechanism, tuple(AUDITS), name="mechanism")
    variant = options.get("variant", "correct")
    check_in(variant, VARIANTS[mechanism], name="variant")
    if "variant" in options and len(VARIANTS[mechanism]) == 1:
        options = {k: v for k, v in options.items() if k != "variant"}
    if privacy is not None:
        settings, options = _with_privacy(mechanism, privacy, settings, options)
    return AUDITS[mechanism](settings=settings, **options)


def _with_privacy(mechanism: str, privacy: PrivacySpec, settings: AuditSettings | None,
                  options: dict) -> tuple[AuditSettings, dict]:
    """The audit's settings and options with the claim of ``privacy`` (see :func:`run_audit`)."""
    import inspect
    from dataclasses import replace

    params = inspect.signature(AUDITS[mechanism]).parameters
    pure = mechanism in PURE_DP_AUDITS            # the pure ε-DP audits: they audit delta = 0
    s = _as_settings(settings)
    eps, dl, relation, calibration = resolve(
        privacy, epsilon=s.epsilon, delta=None if pure else s.delta,
        neighbouring=options.get("neighbouring"), calibration=options.get("calibration"))
    s = replace(s, epsilon=eps) if pure else replace(s, epsilon=eps, delta=dl)
    out = dict(options)
    if "neighbouring" in params:
        out["neighbouring"] = relation
    elif relation != "replace-one":
        raise ValueError(f"the {mechanism!r} audit audits replace-one claims only; privacy.relation={relation!r}.")
    if "calibration" in params:
        out["calibration"] = calibration
    elif not pure and calibration != "analytic":
        raise ValueError(f"the {mechanism!r} audit audits the analytic calibration only; "
                         f"privacy.calibration={calibration!r}.")
    return s, out
