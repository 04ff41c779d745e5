r"""Differentially private analytic two-sample tests (one call = one test).

Four entry points, plus :func:`run_test` which dispatches on ``method``:

:func:`tcmc_test` -- trusted curator, paired design
    The curator computes :math:`z_i = \phi(x_i)-\phi(y_i)`, releases the mean
    :math:`w` and the second moment :math:`\Lambda` with Gaussian noise, and
    everything else (covariance, PSD projection, statistic, null, p-value) is
    post-processing. Raj et al.'s "TCMC".
:func:`nte_test` -- no trusted entity
    Each data holder releases the mean and second moment of its **own**
    features; the pooled two-sample statistic and its null are computed from
    the four releases. Every individual is in one holder's data, so the two
    releases compose in parallel: the union pays one holder's charges.
:func:`release_test` -- "is my synthetic data distinguishable from held-out private data?"
    The synthetic rows (resampled from a weighted release if needed) are public
    post-processing of an earlier release; only the held-out private part is
    privatised (mean and second moment) and charged.
:func:`nonprivate_test` -- the base test (Chwialkowski et al. 2015)
    Not private; for contrast.

Privacy
-------
Neighbouring relation: **replace one individual** (bounded DP, n public),
with the unit of the paired design declared by ``unit`` (``"pair"``: one
individual = one pair :math:`(x_i, y_i)`; ``"row"``: every individual is one row
of X or of Y, paired by index). Sensitivities: :mod:`dpkme.two_sample.sensitivity`.

Budget split. The mean and the second moment are two Gaussian releases of the
same data. ``calibration="joint"`` (default) treats them as **one** Gaussian
mechanism: with :math:`z = \sigma/\Delta` the analytic noise multiplier of
:math:`(\varepsilon,\delta)` (Balle & Wang 2018), the mean gets
:math:`z_w = z/\sqrt f` and the second moment :math:`z_\Lambda = z/\sqrt{1-f}`,
:math:`f` = ``mean_fraction``; since :math:`1/z_w^2 + 1/z_\Lambda^2 = 1/z^2`, the
pair is exactly :math:`(\varepsilon,\delta)`-DP (a Gaussian mechanism on the
concatenation with sensitivities scaled to 1; Dong, Roth & Su 2022). ``f`` is
the share of the Gaussian "precision" :math:`1/z^2` (the zCDP :math:`\rho`)
spent on the mean. ``calibration="split"`` is the paper's split: the mean is
:math:`(f\varepsilon, f\delta)`-DP and the second moment
:math:`((1-f)\varepsilon,(1-f)\delta)`-DP, each calibrated with the analytic
Gaussian mechanism, composed by basic composition (more noise for the same
budget). Either way the result carries two Gaussian
:class:`~dpkme.privacy.accounting.PrivacyCharge` objects; a
:class:`~dpkme.privacy.accounting.BudgetLedger` composes them (PLD: exactly the
requested :math:`(\varepsilon, \delta)` for the joint calibration).

Public choices. Feature maps (locations, frequencies, bandwidths) must come
from public or held-out data (:func:`~dpkme.two_sample.features.make_features`);
the regularisation :math:`\gamma` is a public constant; the noise-aware term
:math:`\sigma_w^2` depends on public quantities only. The noise uses
:func:`dpkme._validation.noise_rng` (an int seed gives a replayable teaching
release that is **not** private once the seed is known; ``None`` draws OS
entropy and records no seed). The null simulation has its own, recorded seed.
"""

from __future__ import annotations

import math
import time
from typing import Any

import numpy as np
from scipy import stats

from .._validation import (
    check_array,
    check_delta,
    check_epsilon,
    check_in,
    check_positive_float,
    check_positive_int,
    new_seed,
    noise_rng,
    round_up_until,
)
from ..privacy.accounting import PrivacyCharge, gaussian_charge, pld_epsilon
from ..privacy.calibration import (
    GaussianCalibration,
    _delta_unchecked,
    _delta_verified,
    analytic_sigma,
    calibrate_gaussian,
    gaussian_epsilon,
)
from .features import FeatureMap
from .nulls import (
    NULL_KINDS,
    NullDistribution,
    chi2_null,
    paired_bootstrap_null,
    two_sample_bootstrap_null,
    weighted_chi2_null,
)
from .result import TwoSampleResult, combined_charge
from .sensitivity import (
    UNITS,
    paired_mean_sensitivity,
    paired_second_moment_sensitivity,
    sample_mean_sensitivity,
    sample_second_moment_sensitivity,
)
from .statistic import (
    covariance_from_moments,
    paired_statistic,
    psd_project,
    symmetric_noise,
    two_sample_statistic,
)

__all__ = [
    "METHODS",
    "CALIBRATIONS",
    "DEFAULT_MEAN_FRACTION",
    "DEFAULT_REGULARIZATION",
    "MomentCalibration",
    "calibrate_moments",
    "tcmc_test",
    "nte_test",
    "release_test",
    "nonprivate_test",
    "run_test",
]

METHODS = ("tcmc", "nte", "release", "nonprivate")
CALIBRATIONS = ("joint", "split")
#: Default share of the Gaussian precision for the mean. The mean noise drives the power, the
#: second-moment noise the accuracy of the null; ``benchmarks/bench_two_sample.py --sections split``
#: (SG/GMD, n = 5000, epsilon = 1, ME) shows power rising from f = 0.5 to about 0.7-0.8 and then
#: flattening, with the bootstrap's type-I error unchanged.
DEFAULT_MEAN_FRACTION = 0.7
#: Default public ridge gamma added to the covariance (feature units squared).
DEFAULT_REGULARIZATION = 1e-5
NEIGHBOURING = "replace-one"


# --------------------------------------------------------------------------- calibration
class MomentCalibration:
    r"""Noise for a (mean, second moment) pair released from one data set.

    Made by :func:`calibrate_moments`; stored as given (no validation here).
    :meth:`charges` turns it into the two Gaussian
    :class:`~dpkme.privacy.accounting.PrivacyCharge` objects of the release.

    Parameters
    ----------
    mean, second : GaussianCalibration
        Calibrations of the two releases (``sigma``, ``sensitivity``, the
        ``(epsilon, delta)`` each one satisfies on its own).
    epsilon, delta : float
        Requested total :math:`(\varepsilon, \delta)` of the pair.
    mean_fraction : float
        :math:`f` in (0, 1): the share of the budget spent on the mean (of the
        Gaussian precision :math:`1/z^2` for ``"joint"``, of
        :math:`(\varepsilon, \delta)` for ``"split"``).
    calibration : {"joint", "split"}
        How the budget was split (see :func:`calibrate_moments`).
    """

    def __init__(self, mean: GaussianCalibration, second: GaussianCalibration, *, epsilon, delta,
                 mean_fraction, calibration):
        self.mean = mean
        self.second = second
        self.epsilon = epsilon
        self.delta = delta
        self.mean_fraction = mean_fraction
        self.calibration = calibration

    def charges(self, label: str, details: dict | None = None) -> tuple[PrivacyCharge, PrivacyCharge]:
        base = {"calibration_mode": self.calibration, "mean_fraction": self.mean_fraction, **(details or {})}
        return (
            gaussian_charge(f"{label}: mean", self.mean, details={**base, "release": "mean"}, relation=NEIGHBOURING),
            gaussian_charge(f"{label}: second moment", self.second, details={**base, "release": "second moment"},
                            relation=NEIGHBOURING),
        )

    def to_dict(self) -> dict[str, Any]:
        return {
            "calibration": self.calibration,
            "mean_fraction": self.mean_fraction,
            "epsilon": self.epsilon,
            "delta": self.delta,
            "sigma_mean": self.mean.sigma,
            "sigma_second": self.second.sigma,
            "sensitivity_mean": self.mean.sensitivity,
            "sensitivity_second": self.second.sensitivity,
            "noise_multiplier_mean": self.mean.noise_multiplier,
            "noise_multiplier_second": self.second.noise_multiplier,
            "epsilon_mean_alone": self.mean.epsilon,
            "delta_mean_alone": self.mean.delta,
            "epsilon_second_alone": self.second.epsilon,
            "delta_second_alone": self.second.delta,
        }


def union_charges(holder: dict[str, tuple[PrivacyCharge, ...]], label: str) -> tuple[PrivacyCharge, ...]:
    """What a ledger of all the holders' individuals pays: one holder's charges (parallel composition -- every
    individual is in exactly one holder's data and the holders use the same (epsilon, delta)).

    Parameters
    ----------
    holder : dict
        ``{"X": charges, "Y": charges}`` of the private holders.
    label : str
        The test's label.

    Returns
    -------
    tuple of PrivacyCharge
    """
    key = "Y" if "Y" in holder else "X"
    return tuple(
        PrivacyCharge(label=f"{label}: {c.details['release']}", mechanism=c.mechanism, epsilon=c.epsilon,
                      delta=c.delta, noise_multiplier=c.noise_multiplier, relation=c.relation,
                      details={**c.details, "holder": "+".join(sorted(holder)),
                               "composition": "parallel across holders" if len(holder) > 1 else "one holder"})
        for c in holder[key])


def _component(z: float, sensitivity: float, delta_part: float) -> GaussianCalibration:
    """Calibration record of one component of a jointly calibrated Gaussian pair."""
    sigma = z * sensitivity
    eps = gaussian_epsilon(sigma=sigma, delta=delta_part, sensitivity=sensitivity)
    eps = max(eps, 1e-12)  # a component is never exactly 0-DP; keep the charge valid
    return GaussianCalibration(sigma, eps, delta_part, sensitivity, "analytic",
                               _delta_unchecked(sigma, eps, sensitivity), True)


def calibrate_moments(*, epsilon, delta, sensitivity_mean, sensitivity_second,
                      mean_fraction: float = DEFAULT_MEAN_FRACTION, calibration: str = "joint") -> MomentCalibration:
    r"""Gaussian noise for releasing a mean and a second moment of one data set at total :math:`(\varepsilon,\delta)`.

    ``"joint"``: :math:`z = ` analytic multiplier of :math:`(\varepsilon,\delta)`,
    :math:`\sigma_w = \Delta_w z/\sqrt f`, :math:`\sigma_\Lambda = \Delta_\Lambda z/\sqrt{1-f}`
    (exactly :math:`(\varepsilon,\delta)` together). Each component's own
    :math:`(\varepsilon_i, \delta_i)` (recorded in its charge) uses
    :math:`\delta_i = f\delta` resp. :math:`(1-f)\delta`.
    ``"split"``: :math:`(f\varepsilon, f\delta)` and :math:`((1-f)\varepsilon, (1-f)\delta)`
    with :func:`~dpkme.privacy.calibration.calibrate_gaussian` (analytic).

    Parameters
    ----------
    epsilon : float
        Total :math:`\varepsilon > 0` of the pair of releases.
    delta : float
        Total :math:`\delta` in (0, 1).
    sensitivity_mean : float
        L2 sensitivity :math:`\Delta_w > 0` of the mean (see
        :mod:`dpkme.two_sample.sensitivity`).
    sensitivity_second : float
        Frobenius sensitivity :math:`\Delta_\Lambda > 0` of the second moment.
    mean_fraction : float, default :data:`DEFAULT_MEAN_FRACTION`
        :math:`f`, strictly between 0 and 1: the mean's share of the budget.
    calibration : {"joint", "split"}, default "joint"
        One Gaussian mechanism on the pair (exact) or the paper's basic-composition split.

    Returns
    -------
    MomentCalibration
        The two calibrations; the noise multipliers are rounded up until the joint
        guarantee is verified.

    Raises
    ------
    ValueError
        If ``epsilon``, ``delta``, a sensitivity or ``mean_fraction`` is out of range,
        or ``calibration`` is unknown.

    Examples
    --------
    >>> from dpkme.privacy.calibration import analytic_sigma
    >>> from dpkme.two_sample.private import calibrate_moments
    >>> cal = calibrate_moments(epsilon=1.0, delta=1e-5, sensitivity_mean=0.01, sensitivity_second=0.02)
    >>> z_w, z_l = cal.mean.sigma / 0.01, cal.second.sigma / 0.02
    >>> z = analytic_sigma(epsilon=1.0, delta=1e-5, sensitivity=1.0)
    >>> abs((z_w**-2 + z_l**-2) ** -0.5 / z - 1.0) < 1e-6     # together: exactly one (epsilon, delta) mechanism
    True
    >>> round(z_w**-2 / (z_w**-2 + z_l**-2), 6)                 # the mean's share of the precision
    0.7
    """
    epsilon = check_epsilon(epsilon)
    delta = check_delta(delta)
    s_w = check_positive_float(sensitivity_mean, name="sensitivity_mean")
    s_l = check_positive_float(sensitivity_second, name="sensitivity_second")
    f = check_positive_float(mean_fraction, name="mean_fraction")
    if not 0.0 < f < 1.0:
        raise ValueError(f"mean_fraction must lie strictly between 0 and 1, got {mean_fraction!r}.")
    check_in(calibration, CALIBRATIONS, name="calibration")
    if calibration == "split":
        cm = calibrate_gaussian(epsilon=f * epsilon, delta=f * delta, sensitivity=s_w)
        cs = calibrate_gaussian(epsilon=(1 - f) * epsilon, delta=(1 - f) * delta, sensitivity=s_l)
    else:
        z = analytic_sigma(epsilon=epsilon, delta=delta, sensitivity=1.0)
        # verify the joint guarantee at the multipliers actually used (rounding toward more noise):
        # a common factor c >= 1 scales both, and the joint multiplier is c (zw^-2 + zs^-2)^-1/2
        zw0, zs0 = z / math.sqrt(f), z / math.sqrt(1.0 - f)
        c = round_up_until(1.0, lambda c: _delta_verified(
            ((c * zw0) ** -2 + (c * zs0) ** -2) ** -0.5, epsilon, 1.0, delta)[0], name="noise factor")
        zw, zs = c * zw0, c * zs0
        cm = _component(zw, s_w, f * delta)
        cs = _component(zs, s_l, (1.0 - f) * delta)
    return MomentCalibration(cm, cs, epsilon=epsilon, delta=delta, mean_fraction=f, calibration=calibration)


# --------------------------------------------------------------------------- helpers
def _null_rng(null_random_state, noise_seed, noise_gen) -> tuple[np.random.Generator, int | None]:
    """Randomness of the null simulation: never the noise stream itself."""
    if null_random_state is not None:
        if isinstance(null_random_state, np.random.Generator):
            return null_random_state, None
        seed = check_positive_int(null_random_state, name="null_random_state", minimum=0)
        return np.random.default_rng(seed), seed
    if noise_seed is not None:  # derived, distinct stream; publishing it reveals nothing new
        seed = int(np.random.SeedSequence([noise_seed, 0x6E756C6C]).generate_state(2, np.uint64)[0] >> 1)
        return np.random.default_rng(seed), seed
    if noise_gen is not None:
        return noise_gen.spawn(1)[0], None
    seed = new_seed()
    return np.random.default_rng(seed), seed


def _check_features(features) -> FeatureMap:
    if not isinstance(features, FeatureMap):
        raise ValueError(
            "features must be a public FeatureMap (e.g. dpkme.two_sample.make_features('me', public_sample=...)); "
            f"got {features!r:.80}. Feature maps are never fitted on the data being tested."
        )
    return features


def _check_pair(X, Y, features: FeatureMap, *, paired: bool):
    X = check_array(X, name="X", n_features=features.dim, min_rows=2)
    Y = check_array(Y, name="Y", n_features=features.dim, min_rows=2)
    if paired and X.shape[0] != Y.shape[0]:
        raise ValueError(
            f"the paired design needs equally many rows in X and Y, got {X.shape[0]} and {Y.shape[0]}; "
            "use nte_test (two samples) or subsample with a public rule."
        )
    return X, Y


def _check_common(alpha, null, n_null, regularization):
    alpha = check_positive_float(alpha, name="alpha")
    if not alpha < 1:
        raise ValueError(f"alpha must lie in (0, 1), got {alpha!r}.")
    check_in(null, NULL_KINDS, name="null")
    n_null = check_positive_int(n_null, name="n_null", minimum=99)
    gamma = check_positive_float(regularization, name="regularization")
    return alpha, n_null, gamma


def _total_privacy(charges, delta) -> float:
    return float(pld_epsilon(charges, delta=delta)) if charges else math.inf


def _negative_eigs(M) -> int:
    return int(np.sum(np.linalg.eigvalsh(0.5 * (M + M.T)) < 0))


def _finish(*, method, design, statistic, null: NullDistribution, alpha, charges, delta_total, n_x, n_y, features,
            released, noise, gamma, noise_aware, noise_seed, noise_source, null_seed, t0, warns, params,
            holder_charges=None, label: str = "two-sample test") -> TwoSampleResult:
    p = null.p_value(statistic)
    naive = float(stats.chi2.sf(statistic, features.n_features))
    eps_total = _total_privacy(charges, delta_total) if charges else math.inf
    if noise_source == "seeded":
        warns = [*warns, "the privacy noise was seeded: anyone who knows the seed can remove it (teaching use only)"]
    return TwoSampleResult(
        method=method, design=design, statistic=float(statistic), p_value=p, alpha=alpha, reject=bool(p <= alpha),
        null=null, naive_p_value=naive, charges=tuple(charges), epsilon=eps_total,
        delta=float(delta_total) if charges else 0.0, n_x=n_x, n_y=n_y, features=features, released=released,
        noise=noise, regularization=gamma, noise_aware=noise_aware, noise_seed=noise_seed,
        noise_source=noise_source, null_seed=null_seed, seconds=time.perf_counter() - t0, warnings=warns,
        params=params, holder_charges=holder_charges,
        charge=combined_charge(charges, delta=float(delta_total), label=label) if charges else None,
    )


# --------------------------------------------------------------------------- paired (TCMC)
def tcmc_test(
    X,
    Y,
    *,
    features: FeatureMap,
    epsilon,
    delta,
    unit: str = "pair",
    mean_fraction: float = DEFAULT_MEAN_FRACTION,
    calibration: str = "joint",
    regularization: float = DEFAULT_REGULARIZATION,
    noise_aware: bool = True,
    null: str = "bootstrap",
    n_null: int = 2000,
    alpha: float = 0.05,
    random_state=None,
    null_random_state=None,
) -> TwoSampleResult:
    r"""Private paired test with a trusted curator: perturb the mean and the second moment.

    Parameters
    ----------
    X, Y : arrays (n, d)
        The paired samples (private). Row i of X is paired with row i of Y.
    features : FeatureMap
        Public feature map (:func:`~dpkme.two_sample.features.make_features`).
    epsilon, delta : float
        Total privacy budget of the test.
    unit : {"pair", "row"}
        ``"pair"``: one individual is one pair :math:`(x_i, y_i)` (e.g. two
        measurements of one person) -- sensitivities :math:`2B/n` and
        :math:`\sqrt2B^2/n`. ``"row"``: X and Y come from different people, every
        individual is one row of one sample, and the pairing is by index --
        :math:`B/n` and :math:`\sqrt{3/2}B^2/n`. The pairing (row order) must
        not depend on the data (e.g. collection order, or a public shuffle).
    mean_fraction : float in (0, 1)
        Share of the budget for the mean (see :func:`calibrate_moments`).
    calibration : {"joint", "split"}
    regularization : float
        Public ridge :math:`\gamma` added to the covariance.
    noise_aware : bool
        Add the mean-noise variance :math:`\sigma_w^2` to the statistic's
        covariance (default). ``False`` gives the paper's statistic.
    null : {"bootstrap", "weighted-chi2", "chi2"}
        ``"chi2"`` is invalid for a private statistic (for contrast only).
    n_null : int
        Draws of the simulated null.
    alpha : float
        Level.
    random_state : None, int or Generator
        Privacy noise (see :func:`dpkme._validation.noise_rng`).
    null_random_state : None, int or Generator
        Null simulation (derived from an int ``random_state`` if omitted).

    Returns
    -------
    TwoSampleResult
    """
    t0 = time.perf_counter()
    features = _check_features(features)
    X, Y = _check_pair(X, Y, features, paired=True)
    check_in(unit, UNITS, name="unit")
    alpha, n_null, gamma = _check_common(alpha, null, n_null, regularization)
    n = X.shape[0]
    B = features.diff_bound
    cal = calibrate_moments(
        epsilon=epsilon, delta=delta,
        sensitivity_mean=paired_mean_sensitivity(n=n, diff_bound=B, unit=unit),
        sensitivity_second=paired_second_moment_sensitivity(n=n, diff_bound=B, unit=unit),
        mean_fraction=mean_fraction, calibration=calibration,
    )
    rng, seed, source = noise_rng(random_state)
    nrng, nseed = _null_rng(null_random_state, seed, rng if source == "generator" else None)

    Z = features.transform(X)
    Z -= features.transform(Y)
    J = Z.shape[1]
    w = Z.mean(axis=0)
    second = (Z.T @ Z) / n
    second = 0.5 * (second + second.T)  # exactly symmetric: only the upper triangle carries information
    del Z
    sw, ss = cal.mean.sigma, cal.second.sigma
    w_priv = w + sw * rng.standard_normal(J)
    second_priv = second + symmetric_noise(J, ss, rng)
    del w, second  # nothing below touches the private data

    cov_raw = covariance_from_moments(w_priv, second_priv, n)
    cov_plugin = psd_project(cov_raw)
    mnv = sw**2 if noise_aware else 0.0
    s = float(paired_statistic(w_priv, second_priv, n, mean_noise_var=mnv, gamma=gamma))
    if null == "bootstrap":
        nd = paired_bootstrap_null(n=n, cov_plugin=cov_plugin, sigma_mean=sw, sigma_second=ss, gamma=gamma,
                                   noise_aware=noise_aware, n_samples=n_null, rng=nrng)
    elif null == "weighted-chi2":
        V = cov_plugin / n + (mnv + gamma / n) * np.eye(J)
        nd = weighted_chi2_null(V, cov_plugin / n + sw**2 * np.eye(J), n_samples=n_null, rng=nrng)
    else:
        nd = chi2_null(J, n_samples=n_null, rng=nrng)
    warns = []
    neg = _negative_eigs(cov_raw)
    if neg:
        warns.append(f"the noisy covariance had {neg} negative eigenvalue(s); they were set to 0 (PSD projection)")
    if null == "chi2":
        warns.append("the chi-square null ignores the privacy noise: its type-I error is not controlled")
    charges = cal.charges("TCMC two-sample test", {"test": "tcmc", "privacy_unit": unit, "n": n, "J": J})
    return _finish(
        method="tcmc", design="paired", statistic=s, null=nd, alpha=alpha, charges=charges, delta_total=cal.delta,
        label="TCMC two-sample test",
        n_x=n, n_y=n, features=features,
        released={"mean": w_priv, "second_moment": second_priv, "covariance_psd": cov_plugin},
        noise=cal.to_dict(), gamma=gamma, noise_aware=noise_aware, noise_seed=seed, noise_source=source,
        null_seed=nseed, t0=t0, warns=warns,
        params={"unit": unit, "null": null, "n_null": n_null, "negative_eigenvalues": neg},
    )


# --------------------------------------------------------------------------- two samples
def _two_sample(
    method: str,
    X,
    Y,
    *,
    features: FeatureMap,
    private_sides: tuple[bool, bool],
    epsilon,
    delta,
    mean_fraction,
    calibration,
    regularization,
    noise_aware,
    null,
    n_null,
    alpha,
    random_state,
    null_random_state,
    label: str,
    extra_params: dict | None = None,
) -> TwoSampleResult:
    t0 = time.perf_counter()
    features = _check_features(features)
    X, Y = _check_pair(X, Y, features, paired=False)
    alpha, n_null, gamma = _check_common(alpha, null, n_null, regularization)
    rng, seed, source = noise_rng(random_state)
    nrng, nseed = _null_rng(null_random_state, seed, rng if source == "generator" else None)
    J = features.n_features
    sides = {}
    cals = {}
    for name, data, is_private in (("X", X, private_sides[0]), ("Y", Y, private_sides[1])):
        nh = data.shape[0]
        F = features.transform(data)
        mu = F.mean(axis=0)
        second = (F.T @ F) / nh
        second = 0.5 * (second + second.T)
        del F
        if is_private:
            cal = calibrate_moments(
                epsilon=epsilon, delta=delta,
                sensitivity_mean=sample_mean_sensitivity(n=nh, diff_bound=features.diff_bound),
                sensitivity_second=sample_second_moment_sensitivity(n=nh, outer_diff_bound=features.outer_diff_bound),
                mean_fraction=mean_fraction, calibration=calibration,
            )
            mu = mu + cal.mean.sigma * rng.standard_normal(J)
            second = second + symmetric_noise(J, cal.second.sigma, rng)
            cals[name] = cal
        sides[name] = (nh, mu, second)
    (nx, mx, sx), (ny, my, sy) = sides["X"], sides["Y"]
    smx = cals["X"].mean.sigma if "X" in cals else 0.0
    ssx = cals["X"].second.sigma if "X" in cals else 0.0
    smy = cals["Y"].mean.sigma if "Y" in cals else 0.0
    ssy = cals["Y"].second.sigma if "Y" in cals else 0.0
    mnv = (smx**2 + smy**2) if noise_aware else 0.0
    s = float(two_sample_statistic(mx, sx, nx, my, sy, ny, mean_noise_var=mnv, gamma=gamma))
    cov_x_raw, cov_y_raw = covariance_from_moments(mx, sx, nx), covariance_from_moments(my, sy, ny)
    cx, cy = psd_project(cov_x_raw), psd_project(cov_y_raw)
    mean_plugin = (nx * mx + ny * my) / (nx + ny)
    n_eff = nx * ny / (nx + ny)
    if null == "bootstrap":
        nd = two_sample_bootstrap_null(
            n_x=nx, n_y=ny, mean_plugin=mean_plugin, cov_x=cx, cov_y=cy, sigma_mean_x=smx, sigma_second_x=ssx,
            sigma_mean_y=smy, sigma_second_y=ssy, gamma=gamma, noise_aware=noise_aware, n_samples=n_null, rng=nrng)
    elif null == "weighted-chi2":
        C = cx / nx + cy / ny + (smx**2 + smy**2) * np.eye(J)
        V = cx / nx + cy / ny + (mnv + gamma / n_eff) * np.eye(J)
        nd = weighted_chi2_null(V, C, n_samples=n_null, rng=nrng)
    else:
        nd = chi2_null(J, n_samples=n_null, rng=nrng)
    warns = []
    neg = {k: _negative_eigs(c) for k, c in (("X", cov_x_raw), ("Y", cov_y_raw)) if k in cals}
    for k, v in neg.items():
        if v:
            warns.append(f"the noisy covariance of {k} had {v} negative eigenvalue(s); they were set to 0")
    if null == "chi2" and cals:
        warns.append("the chi-square null ignores the privacy noise: its type-I error is not controlled")
    holder = {k: c.charges(f"{label} (holder {k})", {"test": method, "holder": k, "n": sides[k][0], "J": J})
              for k, c in cals.items()}
    # parallel composition: every individual is in exactly one holder's data, and the holders use
    # the same (epsilon, delta) -- the union pays one holder's charges.
    if cals:
        charges = union_charges(holder, label)
        delta_total = next(iter(cals.values())).delta
    else:
        charges, delta_total = (), 0.0
    released = {"mean_x": mx, "mean_y": my, "covariance_x_psd": cx, "covariance_y_psd": cy}
    if "X" in cals:
        released["second_moment_x"] = sx
    if "Y" in cals:
        released["second_moment_y"] = sy
    noise = {k: c.to_dict() for k, c in cals.items()}
    return _finish(
        method=method, design="two-sample", statistic=s, null=nd, alpha=alpha, charges=charges, label=label,
        delta_total=delta_total, n_x=nx, n_y=ny, features=features, released=released, noise=noise, gamma=gamma,
        noise_aware=noise_aware, noise_seed=seed if cals else None, noise_source=source if cals else "none",
        null_seed=nseed, t0=t0, warns=warns,
        params={"null": null, "n_null": n_null, "private_sides": [k for k in ("X", "Y") if k in cals],
                **(extra_params or {})},
        holder_charges=holder or None,
    )


def nte_test(
    X,
    Y,
    *,
    features: FeatureMap,
    epsilon,
    delta,
    mean_fraction: float = DEFAULT_MEAN_FRACTION,
    calibration: str = "joint",
    regularization: float = DEFAULT_REGULARIZATION,
    noise_aware: bool = True,
    null: str = "bootstrap",
    n_null: int = 2000,
    alpha: float = 0.05,
    random_state=None,
    null_random_state=None,
) -> TwoSampleResult:
    r"""Private two-sample test without a trusted entity (each holder privatises its own moments).

    Holder X releases :math:`\tilde\mu_x, \tilde\Lambda_x` (sensitivities
    :math:`B/n_x`, :math:`R/n_x`), holder Y likewise; each release is
    :math:`(\varepsilon,\delta)`-DP for its holder's data. The statistic is
    :math:`w^\top(\Sigma_{x+}/n_x+\Sigma_{y+}/n_y+(\sigma_x^2+\sigma_y^2+\gamma/n_{\rm eff})I)^{-1}w`
    with :math:`w = \tilde\mu_x-\tilde\mu_y`, and the bootstrap null simulates
    both holders. X and Y may have different sizes. ``charges`` is what a
    ledger of the union pays (parallel composition); ``holder_charges`` what
    each holder's own ledger pays.

    Parameters
    ----------
    X : array-like of shape (n_x, d)
        Holder X's private sample (at least 2 rows).
    Y : array-like of shape (n_y, d)
        Holder Y's private sample (at least 2 rows; ``n_y`` may differ from ``n_x``).
    features : FeatureMap
        Public feature map (:func:`~dpkme.two_sample.features.make_features`), the
        same for both holders.
    epsilon, delta : float
        Privacy budget of each holder's release (:math:`\varepsilon > 0`,
        :math:`\delta` in (0, 1)); by parallel composition also the total for the union.
    mean_fraction : float in (0, 1), default :data:`DEFAULT_MEAN_FRACTION`
        Share of each holder's budget for its mean (see :func:`calibrate_moments`).
    calibration : {"joint", "split"}, default "joint"
        Budget split between mean and second moment (see :func:`calibrate_moments`).
    regularization : float, default :data:`DEFAULT_REGULARIZATION`
        Public ridge :math:`\gamma > 0`; :math:`\gamma/n_{\rm eff}` is added to the
        diagonal of the statistic's matrix.
    noise_aware : bool, default True
        Add the mean-noise variances :math:`\sigma_x^2+\sigma_y^2` to the statistic's
        covariance. ``False`` gives the statistic without it.
    null : {"bootstrap", "weighted-chi2", "chi2"}, default "bootstrap"
        ``"chi2"`` is invalid for a private statistic (for contrast only).
    n_null : int, default 2000
        Draws of the simulated null (at least 99).
    alpha : float, default 0.05
        Level, in (0, 1).
    random_state : None, int or Generator
        Privacy noise of both holders (see :func:`dpkme._validation.noise_rng`): an
        int gives a replayable teaching release, **not** private once the seed is known.
    null_random_state : None, int or Generator
        Null simulation (derived from an int ``random_state`` if omitted).

    Returns
    -------
    TwoSampleResult
        ``design="two-sample"``; ``charges`` for the union, ``holder_charges`` per holder.

    Examples
    --------
    >>> from dpkme.two_sample import make_features
    >>> from dpkme.two_sample.lab import make_case
    >>> from dpkme.two_sample.private import nte_test
    >>> case = make_case("GMD", 2000, dim=5, random_state=0)
    >>> feats = make_features("scf", public_sample=case.public, n_features=3, random_state=0)
    >>> res = nte_test(case.X, case.Y[:1500], features=feats, epsilon=1.0, delta=1e-5, n_null=199, random_state=0)
    >>> res.n_x, res.n_y, sorted(res.holder_charges), len(res.charges)
    (2000, 1500, ['X', 'Y'], 2)
    """
    return _two_sample("nte", X, Y, features=features, private_sides=(True, True), epsilon=epsilon, delta=delta,
                       mean_fraction=mean_fraction, calibration=calibration, regularization=regularization,
                       noise_aware=noise_aware, null=null, n_null=n_null, alpha=alpha, random_state=random_state,
                       null_random_state=null_random_state, label="NTE two-sample test")


def _synthetic_rows(synthetic, n_synthetic, rng) -> tuple[np.ndarray, dict]:
    from ..reduced_set.resample import resample

    if isinstance(synthetic, tuple) or hasattr(synthetic, "weights"):
        if n_synthetic is None:
            raise ValueError("a weighted release needs n_synthetic= (how many rows to resample from its weights).")
        rows, info = resample(synthetic, n_synthetic, rng, return_info=True)
        return rows, {"resampled": True, "n_synthetic": int(n_synthetic),
                      "negative_mass_dropped": info["negative_mass"], "positive_mass": info["positive_mass"]}
    rows = check_array(synthetic, name="synthetic", min_rows=2)
    return rows, {"resampled": False, "n_synthetic": int(rows.shape[0])}


def release_test(
    synthetic,
    heldout,
    *,
    features: FeatureMap,
    epsilon,
    delta,
    n_synthetic: int | None = None,
    mean_fraction: float = DEFAULT_MEAN_FRACTION,
    calibration: str = "joint",
    regularization: float = DEFAULT_REGULARIZATION,
    noise_aware: bool = True,
    null: str = "bootstrap",
    n_null: int = 2000,
    alpha: float = 0.05,
    random_state=None,
    null_random_state=None,
    resample_random_state=0,
) -> TwoSampleResult:
    r"""DP test of a synthetic release against a held-out private part ("test my release").

    Parameters
    ----------
    synthetic : Release, (points, weights) or array (m, d)
        The released synthetic data. A weighted release is turned into
        ``n_synthetic`` unweighted rows with
        :func:`dpkme.reduced_set.resample.resample` (post-processing, free).
        These rows are public: no noise is added on their side.
    heldout : array (n, d)
        Private data *not used to make the release*. Only its mean and second
        moment are released (sensitivities :math:`B/n`, :math:`R/n`), so the
        charge applies to the held-out individuals. If they are disjoint from
        the individuals behind the release, the two releases compose in
        parallel; otherwise add both to the same ledger.
    features : FeatureMap
        Public feature map (:func:`~dpkme.two_sample.features.make_features`); it
        must not be built from ``heldout``.
    epsilon, delta : float
        Privacy budget of the held-out release (:math:`\varepsilon > 0`,
        :math:`\delta` in (0, 1)), charged to the held-out individuals.
    n_synthetic : int, optional
        Number of rows to resample from a weighted release (required for one;
        ignored for an array of rows).
    mean_fraction, calibration, regularization, noise_aware, null, n_null, alpha, random_state, null_random_state
        As in :func:`nte_test` (the noise is added on the held-out side only).
    resample_random_state : None, int or Generator
        Randomness of the resampling (public).

    Returns
    -------
    TwoSampleResult
        ``method="release"``; ``params`` records the resampling (``resampled``,
        ``n_synthetic``, ``resample_seed``, ...).

    Notes
    -----
    ``H0``: the synthetic and the held-out feature means are equal; a rejection
    says the release is distinguishable from real data through these features.
    """
    from .._validation import check_random_state

    features = _check_features(features)
    rrng, rseed = check_random_state(resample_random_state)
    rows, info = _synthetic_rows(synthetic, n_synthetic, rrng)
    info["resample_seed"] = rseed
    return _two_sample("release", rows, heldout, features=features, private_sides=(False, True), epsilon=epsilon,
                       delta=delta, mean_fraction=mean_fraction, calibration=calibration,
                       regularization=regularization, noise_aware=noise_aware, null=null, n_null=n_null, alpha=alpha,
                       random_state=random_state, null_random_state=null_random_state,
                       label="release vs held-out test", extra_params=info)


def nonprivate_test(
    X,
    Y,
    *,
    features: FeatureMap,
    design: str = "paired",
    regularization: float = DEFAULT_REGULARIZATION,
    null: str = "chi2",
    n_null: int = 2000,
    alpha: float = 0.05,
    null_random_state=None,
) -> TwoSampleResult:
    r"""The non-private base test (Chwialkowski et al. 2015): :math:`s_n = n w^\top(\Sigma_n+\gamma I)^{-1}w`, :math:`\chi^2_J` null.

    **No privacy guarantee** (no charges); for comparison and for public data.
    ``design="two-sample"`` gives the unpaired Hotelling-type statistic.

    Parameters
    ----------
    X, Y : array-like of shape (n, d)
        The samples (at least 2 rows each); for ``design="paired"`` row i of X is
        paired with row i of Y (equal sizes), for ``"two-sample"`` the sizes may differ.
    features : FeatureMap
        Feature map (:func:`~dpkme.two_sample.features.make_features`).
    design : {"paired", "two-sample"}, default "paired"
        Paired statistic on :math:`z_i = \phi(x_i)-\phi(y_i)`, or the two-sample
        statistic of :func:`~dpkme.two_sample.statistic.two_sample_statistic`.
    regularization : float, default :data:`DEFAULT_REGULARIZATION`
        Ridge :math:`\gamma > 0`.
    null : {"chi2", "bootstrap", "weighted-chi2"}, default "chi2"
        The asymptotic :math:`\chi^2_J` null is valid here (there is no noise).
    n_null : int, default 2000
        Draws of a simulated null (display samples for ``"chi2"``; at least 99).
    alpha : float, default 0.05
        Level, in (0, 1).
    null_random_state : None, int or Generator
        Null simulation; ``None`` draws a seed (recorded in ``null_seed``).

    Returns
    -------
    TwoSampleResult
        ``method="nonprivate"``, no charges, ``epsilon = inf``.

    Examples
    --------
    >>> from dpkme.two_sample import make_features
    >>> from dpkme.two_sample.lab import make_case
    >>> from dpkme.two_sample.private import nonprivate_test
    >>> case = make_case("GMD", 2000, dim=5, random_state=0)
    >>> feats = make_features("scf", public_sample=case.public, n_features=3, random_state=0)
    >>> res = nonprivate_test(case.X, case.Y, features=feats)
    >>> res.decision, res.charges, res.epsilon
    ('reject H0', (), inf)
    """
    check_in(design, ("paired", "two-sample"), name="design")
    if design == "two-sample":
        return _two_sample("nonprivate", X, Y, features=features, private_sides=(False, False), epsilon=None,
                           delta=None, mean_fraction=DEFAULT_MEAN_FRACTION, calibration="joint",
                           regularization=regularization, noise_aware=False, null=null, n_null=n_null, alpha=alpha,
                           random_state=None, null_random_state=null_random_state, label="non-private test")
    t0 = time.perf_counter()
    features = _check_features(features)
    X, Y = _check_pair(X, Y, features, paired=True)
    alpha, n_null, gamma = _check_common(alpha, null, n_null, regularization)
    nrng, nseed = _null_rng(null_random_state, None, None)
    n = X.shape[0]
    Z = features.transform(X)
    Z -= features.transform(Y)
    w = Z.mean(axis=0)
    second = (Z.T @ Z) / n
    J = Z.shape[1]
    s = float(paired_statistic(w, second, n, gamma=gamma))
    cov = psd_project(covariance_from_moments(w, second, n))
    if null == "bootstrap":
        nd = paired_bootstrap_null(n=n, cov_plugin=cov, sigma_mean=0.0, sigma_second=0.0, gamma=gamma,
                                   noise_aware=False, n_samples=n_null, rng=nrng)
    elif null == "weighted-chi2":
        V = cov / n + (gamma / n) * np.eye(J)
        nd = weighted_chi2_null(V, cov / n, n_samples=n_null, rng=nrng)
    else:
        nd = chi2_null(J, n_samples=n_null, rng=nrng)
    return _finish(
        method="nonprivate", design="paired", statistic=s, null=nd, alpha=alpha, charges=(), delta_total=0.0,
        n_x=n, n_y=n, features=features, released={}, noise={}, gamma=gamma, noise_aware=False, noise_seed=None,
        noise_source="none", null_seed=nseed, t0=t0,
        warns=["non-private test: no privacy guarantee"], params={"null": null, "n_null": n_null},
    )


def run_test(X, Y, *, method: str = "tcmc", **kwargs) -> TwoSampleResult:
    """Run one test: ``method`` in ``("tcmc", "nte", "release", "nonprivate")``; keyword arguments as in the test.

    For ``"release"``, ``X`` is the synthetic release and ``Y`` the held-out private data.

    Parameters
    ----------
    X, Y : array-like
        The two samples, passed positionally to the test (``synthetic`` and
        ``heldout`` for ``"release"``).
    method : {"tcmc", "nte", "release", "nonprivate"}, default "tcmc"
        Which test: :func:`tcmc_test`, :func:`nte_test`, :func:`release_test` or
        :func:`nonprivate_test` (:data:`METHODS`).
    **kwargs
        Keyword arguments of that test (``features`` always; ``epsilon`` and
        ``delta`` for the private ones).

    Returns
    -------
    TwoSampleResult
        The test's result.

    Raises
    ------
    ValueError
        If ``method`` is unknown, or from the test's own checks.

    Examples
    --------
    >>> from dpkme.two_sample import make_features
    >>> from dpkme.two_sample.lab import make_case
    >>> from dpkme.two_sample.private import run_test
    >>> case = make_case("GMD", 2000, dim=5, random_state=0)
    >>> feats = make_features("scf", public_sample=case.public, n_features=3, random_state=0)
    >>> res = run_test(case.X, case.Y, method="tcmc", features=feats, epsilon=1.0, delta=1e-5, n_null=199,
    ...                random_state=0)
    >>> res.method, res.decision, [c.label for c in res.charges]
    ('tcmc', 'reject H0', ['TCMC two-sample test: mean', 'TCMC two-sample test: second moment'])
    """
    check_in(method, METHODS, name="method")
    fn = {"tcmc": tcmc_test, "nte": nte_test, "release": release_test, "nonprivate": nonprivate_test}[method]
    return fn(X, Y, **kwargs)
