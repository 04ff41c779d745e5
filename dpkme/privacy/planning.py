r"""Planning ε from the accuracy you need: the ε at which the privacy noise reaches a target error in expectation.

A data owner usually knows the accuracy a release must have ("the embedding within 0.05 in RKHS norm", "a
proportion within one percentage point") and asks which :math:`\varepsilon` gives it. For a Gaussian release
:math:`f(D) + \mathcal N(0, \sigma^2 I_J)` the expected error from the privacy noise is

.. math::
    \mathbb E\|\mathcal N(0, \sigma^2 I_J)\|_2 = \sigma\, c_J, \qquad
    c_J = \sqrt2\,\frac{\Gamma\bigl(\frac{J+1}2\bigr)}{\Gamma\bigl(\frac J2\bigr)}
        = \sqrt J\,\Bigl(1 - \frac1{4J} + O(J^{-2})\Bigr)

(the mean of a chi distribution, :func:`expected_noise_norm`; :math:`c_1 = \sqrt{2/\pi}`, the mean absolute
value of a standard normal), and :math:`\sigma = \sigma(\varepsilon, \delta, \Delta)` is the calibrated noise
(:func:`~dpkme.privacy.calibration.calibrate_gaussian`), decreasing in :math:`\varepsilon`. The target
:math:`t` is therefore met in expectation exactly when :math:`\sigma(\varepsilon) \le \sigma^\star = t/c_J`,
and the plan is the smallest such :math:`\varepsilon`:

* **analytic calibration** (default): :math:`\sigma(\varepsilon)` is the smallest :math:`\sigma` that meets the
  Balle-Wang condition, so :math:`\sigma(\varepsilon) \le \sigma^\star` if and only if :math:`\sigma^\star`
  meets it at :math:`\varepsilon`; the smallest such :math:`\varepsilon` is
  :func:`~dpkme.privacy.calibration.gaussian_epsilon` at :math:`\sigma^\star` (a bisection on the exact
  condition, verified in high precision, rounded up);
* **classic calibration**: :math:`\varepsilon = \Delta\sqrt{2\ln(1.25/\delta)}/\sigma^\star` in closed form
  (refused where the classic calibration is not :math:`(\varepsilon,\delta)`-DP).

Every plan is then checked with :func:`~dpkme.privacy.calibration.calibrate_gaussian` itself -- the function the
releases call -- at the recommended :math:`\varepsilon`.

Which way to round
------------------
The recommended :math:`\varepsilon` is shown to a few significant digits, and it is rounded **up**. The promise
of a plan is "at this ε the target is reached in expectation"; a larger :math:`\varepsilon` means less noise, so
rounding up keeps that promise (rounding down would give *more* privacy but miss the target). Rounding up costs
at most a relative :math:`10^{1-s}` of :math:`\varepsilon` (``significant`` :math:`= s`, 3 by default: under
1 %). Nothing is given away by it: a plan is a **recommendation, not a guarantee** and releases nothing. The
privacy guarantee is whatever :math:`\varepsilon` the release is then made with, calibrated and charged to the
ledger by the release itself.

What the error counts
---------------------
Only the privacy noise, in expectation (a single release is off by more about half of the time). For
Algorithm 2 it is the distance, in the random-feature space (an approximation of the RKHS), between the
privatised and the exact mean feature vector; the random-feature approximation and the reduced-set step of
Algorithm 2 add their own error, which does not depend on :math:`\varepsilon`. For Algorithm 1 pass its
sensitivity (:func:`~dpkme.privacy.sensitivity.kme_sensitivity`) and the subspace dimension :math:`F` as
``n_features``.

The mean of one bounded column, released alone by the Gaussian mechanism (:func:`epsilon_for_mean_error`), is
a **reference** of what an :math:`\varepsilon` buys for a plain statistic: with a declared range of width
:math:`R` the mean of :math:`N` rows moves by at most :math:`R/N` when one row is replaced, so the noise is
:math:`\sigma_{\text{mean}} = \sigma(\varepsilon, \delta, R/N)` and the expected absolute error
:math:`\sigma_{\text{mean}}\sqrt{2/\pi}` (its root-mean-square error is :math:`\sigma_{\text{mean}}`). A
proportion is the mean of a 0/1 column: :math:`R = 1`. It is not the error a third party gets from a kernel
mean embedding release, which spends the budget on the whole embedding.

Public inputs only
------------------
Every function here takes sizes and declared constants -- the public number of rows :math:`N` (public under
replace-one, declared under add-remove), :math:`\delta`, the number of features, a declared range -- and never
rows of data: planning reads nothing private and spends no budget.
"""

from __future__ import annotations

import math
import warnings
from dataclasses import dataclass

from scipy.special import poch

from .._validation import check_delta, check_epsilon, check_in, check_positive_float, check_positive_int
from .calibration import GAUSSIAN_METHODS, UnprovenCalibrationWarning, calibrate_gaussian, gaussian_epsilon
from .sensitivity import NEIGHBOURING, feature_mean_sensitivity
from .spec import PrivacySpec, resolve

__all__ = [
    "PLAN_STATISTICS",
    "EpsilonPlan",
    "expected_noise_norm",
    "expected_rkhs_error",
    "epsilon_for_rkhs_error",
    "expected_mean_error",
    "epsilon_for_mean_error",
]

# The releases' bound on the norm of unit-norm random features: 1 plus their float64 margin
# (dpkme.kernels.random_features.RandomFourierFeatures.norm_bound), so a plan's sigma is the release's.
_FEATURE_NORM_BOUND = 1.0 + 1e-12
#: What a plan can target: the RKHS (feature-space) distance of an embedding, or the error of one mean.
PLAN_STATISTICS = ("rkhs", "mean")


def _chi_mean(dim: int) -> float:
    r""":math:`c_J = \mathbb E\|\mathcal N(0, I_J)\|_2 = \sqrt2\,\Gamma((J+1)/2)/\Gamma(J/2)`, never below it.

    The Pochhammer symbol :math:`(J/2)_{1/2} = \Gamma(J/2 + 1/2)/\Gamma(J/2)` has no overflow and keeps a relative
    accuracy of about :math:`10^{-12}` even for :math:`J = 10^9` (a difference of log-gamma values loses
    :math:`10^{-6}` there); the result is raised by a relative :math:`10^{-12}` so that rounding never makes a
    planned error smaller than the exact one.
    """
    return math.sqrt(2.0) * float(poch(dim / 2.0, 0.5)) * (1.0 + 1e-12)


def expected_noise_norm(*, sigma: float, dim: int) -> float:
    r"""Exact :math:`\mathbb E\|Z\|_2` for :math:`Z \sim \mathcal N(0, \sigma^2 I_J)`.

    .. math::
        \mathbb E\|Z\|_2 = \sigma\sqrt2\,\frac{\Gamma\bigl(\frac{J+1}2\bigr)}{\Gamma\bigl(\frac J2\bigr)}
        = \sigma\sqrt J\,\Bigl(1 - \frac1{4J} + O(J^{-2})\Bigr),

    the mean of a chi distribution with :math:`J` degrees of freedom (computed with the Pochhammer symbol, to a
    relative :math:`10^{-12}`, and rounded up).
    Slightly below :math:`\sigma\sqrt J` (:math:`\sqrt{\mathbb E\|Z\|^2}`), by Jensen's inequality.

    Parameters
    ----------
    sigma : float
        Per-coordinate standard deviation :math:`\sigma > 0`.
    dim : int
        Dimension :math:`J \ge 1`.

    Returns
    -------
    float
        The expected Euclidean norm of the noise.

    Examples
    --------
    >>> import math
    >>> from dpkme.privacy.planning import expected_noise_norm
    >>> round(expected_noise_norm(sigma=1.0, dim=1), 6) == round(math.sqrt(2 / math.pi), 6)
    True
    >>> round(expected_noise_norm(sigma=1.0, dim=100) / math.sqrt(100), 5)   # 1 - 1/(4J) + ...
    0.9975
    """
    s = check_positive_float(sigma, name="sigma")
    J = check_positive_int(dim, name="dim")
    return s * _chi_mean(J)


@dataclass(frozen=True)
class EpsilonPlan:
    r"""A recommended ε for a target accuracy (:func:`epsilon_for_rkhs_error`, :func:`epsilon_for_mean_error`).

    A recommendation, not a guarantee: it releases nothing and spends no budget; the guarantee is the ε a
    release is then made with.

    Parameters
    ----------
    statistic : {"rkhs", "mean"}
        What the target is about (:data:`PLAN_STATISTICS`).
    target : float
        The expected error asked for.
    epsilon : float
        The recommended :math:`\varepsilon`: the smallest that reaches ``target`` in expectation, rounded **up**
        to ``significant`` digits (so the target is still met), and at least the floor ``min_epsilon``.
    epsilon_exact : float
        The smallest :math:`\varepsilon` before rounding (0 when every :math:`\varepsilon > 0` reaches the
        target).
    expected_error : float
        The expected error at ``epsilon`` (:math:`\le` ``target``).
    sigma : float
        The calibrated noise :math:`\sigma` at ``epsilon``.
    sensitivity : float
        The L2 sensitivity :math:`\Delta` the noise is calibrated to.
    dim : int
        Dimension :math:`J` of the noise (1 for a mean).
    n_private : int
        The public number of rows :math:`N`.
    delta : float
        :math:`\delta` of the calibration.
    calibration : str
        ``"analytic"`` or ``"classic"``.
    neighbouring : str
        ``"replace-one"`` or ``"add-remove"``.
    at_floor : bool
        ``True`` when the target is met below ``min_epsilon`` already: ``epsilon`` is the floor, and a smaller
        :math:`\varepsilon` would do too.

    Attributes
    ----------
    rmse : float
        Root-mean-square error at ``epsilon``, :math:`\sigma\sqrt J`.
    """

    statistic: str
    target: float
    epsilon: float
    epsilon_exact: float
    expected_error: float
    sigma: float
    sensitivity: float
    dim: int
    n_private: int
    delta: float
    calibration: str
    neighbouring: str
    at_floor: bool = False

    @property
    def rmse(self) -> float:
        r"""Root-mean-square error :math:`\sqrt{\mathbb E\|Z\|^2} = \sigma\sqrt J` at ``epsilon``."""
        return self.sigma * math.sqrt(self.dim)


def _sigma(eps: float, delta: float, sens: float, method: str) -> float:
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", UnprovenCalibrationWarning)   # a plan, not a release: no warning
        return calibrate_gaussian(epsilon=eps, delta=delta, sensitivity=sens, method=method).sigma


def _round_up(x: float, significant: int) -> float:
    """The smallest number with ``significant`` significant digits that is >= x."""
    exp = math.floor(math.log10(x))
    step = 10.0 ** (exp - significant + 1)
    r = math.ceil(x / step * (1.0 - 1e-15)) * step
    r = float(f"{r:.{significant}g}")
    while r < x:                                  # float formatting may land a hair below x
        r = float(f"{r + step:.{significant}g}")
    return r


def _plan(statistic: str, target: float, *, n_private: int, delta: float, dim: int, sensitivity: float,
          calibration: str, neighbouring: str, min_epsilon: float, max_epsilon: float,
          significant: int) -> EpsilonPlan:
    t = check_positive_float(target, name="target")
    lo = check_epsilon(min_epsilon, name="min_epsilon")
    hi = check_epsilon(max_epsilon, name="max_epsilon")
    if not hi > lo:
        raise ValueError(f"max_epsilon={max_epsilon!r} must be larger than min_epsilon={min_epsilon!r}.")
    s = check_positive_int(significant, name="significant", minimum=1, maximum=12)
    sigma_star = t / _chi_mean(dim)
    at_hi = None
    if calibration == "analytic":
        # reachable at all? (checked first: it also keeps gaussian_epsilon away from astronomically small sigma/Delta)
        at_hi = _chi_mean(dim) * _sigma(hi, delta, sensitivity, calibration)
        eps_star = (gaussian_epsilon(sigma=sigma_star, delta=delta, sensitivity=sensitivity) if at_hi <= t
                    else math.inf)
    else:
        eps_star = sensitivity * math.sqrt(2.0 * math.log(1.25 / delta)) / sigma_star
    if not eps_star <= hi:
        reach = f" (at ε = {hi:g} the expected error is still {at_hi:.3g})" if at_hi is not None else ""
        raise ValueError(
            f"target={t:g} is not reached at any ε up to max_epsilon={hi:g}{reach}: such an ε would protect "
            "little. Accept a larger target, or plan with more rows N or "
            + ("fewer features J." if statistic == "rkhs" else "a narrower declared range."))
    at_floor = eps_star < lo
    eps = lo if at_floor else _round_up(eps_star, s)
    try:
        sigma = _sigma(eps, delta, sensitivity, calibration)
    except ValueError as exc:   # the classic calibration fails at this ε
        raise ValueError(f"target={t:g} needs ε = {eps:g}, where the {calibration} calibration is not valid "
                         f"({exc}); use calibration='analytic'.") from None
    step = 10.0 ** (math.floor(math.log10(eps)) - s + 1)
    for _ in range(10):           # the release's own calibration is the judge: step up until it agrees
        if _chi_mean(dim) * sigma <= t:
            break
        eps = float(f"{eps + step:.{s}g}")
        sigma = _sigma(eps, delta, sensitivity, calibration)
    else:  # pragma: no cover - the inversion above is exact to ~1e-12
        raise ValueError(f"could not verify a plan for target={t:g}; report this as a bug.")
    return EpsilonPlan(statistic=statistic, target=t, epsilon=eps, epsilon_exact=float(eps_star),
                       expected_error=_chi_mean(dim) * sigma, sigma=sigma, sensitivity=sensitivity, dim=dim,
                       n_private=int(n_private), delta=delta, calibration=calibration, neighbouring=neighbouring,
                       at_floor=bool(at_floor))


def _rkhs_setting(n_private: int, delta: float, n_features: int, calibration: str, neighbouring: str,
                  sensitivity: float | None) -> tuple[int, float, int, float]:
    N = check_positive_int(n_private, name="n_private")
    dl = check_delta(delta)
    J = check_positive_int(n_features, name="n_features")
    check_in(calibration, GAUSSIAN_METHODS, name="calibration")
    check_in(neighbouring, NEIGHBOURING, name="neighbouring")
    sens = (feature_mean_sensitivity(n=N, norm_bound=_FEATURE_NORM_BOUND, neighbouring=neighbouring)
            if sensitivity is None else check_positive_float(sensitivity, name="sensitivity"))
    return N, dl, J, sens


def expected_rkhs_error(epsilon: float | None = None, *, n_private: int, delta: float | None = None,
                        n_features: int, calibration: str | None = None, neighbouring: str | None = None,
                        sensitivity: float | None = None, privacy: PrivacySpec | None = None) -> float:
    r"""Expected norm of the privacy noise of Algorithm 2's privatised mean feature vector at a given ε.

    .. math::
        \mathbb E\|\tilde\mu - \hat\mu\|_2 = \sigma(\varepsilon, \delta, \Delta)\,\sqrt2\,
        \frac{\Gamma\bigl(\frac{J+1}2\bigr)}{\Gamma\bigl(\frac J2\bigr)},
        \qquad \Delta = \frac2N\ (\text{replace-one}),\ \frac1N\ (\text{add-remove}),

    the distance, in the :math:`J`-dimensional random-feature space, between the privatised and the exact mean
    feature vector (:func:`~dpkme.release.random_features.privatise_feature_mean`). Public inputs only. The
    sensitivity is the release's own, :math:`2b/N` with :math:`b = 1 + 10^{-12}` (the float64 margin of the
    unit-norm features), so the :math:`\sigma` planned is the :math:`\sigma` released.

    Parameters
    ----------
    epsilon : float, optional
        :math:`\varepsilon > 0` (required unless ``privacy`` gives it).
    n_private : int
        Public number of rows :math:`N \ge 1`.
    delta : float, optional
        :math:`\delta \in (0, 1)` (required unless ``privacy`` gives it).
    n_features : int
        Number of random features :math:`J \ge 1` (for Algorithm 1: the subspace dimension :math:`F`).
    calibration : {"analytic", "classic"}
        The Gaussian calibration (default ``"analytic"``).
    neighbouring : {"replace-one", "add-remove"}
        The neighbouring relation (default ``"replace-one"``).
    sensitivity : float, optional
        The L2 sensitivity, to plan for another Gaussian release (default: Algorithm 2's :math:`2/N` or
        :math:`1/N`; for Algorithm 1 pass :func:`~dpkme.privacy.sensitivity.kme_sensitivity`).
    privacy : PrivacySpec, optional
        The typed alternative to ``epsilon``, ``delta``, ``calibration`` and ``neighbouring`` (:func:`~dpkme.privacy.spec.resolve`):
        its fields are used, and a loose argument that disagrees is a ValueError naming both.

    Returns
    -------
    float
        The expected error.

    Examples
    --------
    >>> from dpkme.privacy.planning import expected_rkhs_error
    >>> round(expected_rkhs_error(1.0, n_private=10_000, delta=1e-6, n_features=1000), 4)
    0.0267
    """
    epsilon, delta, neighbouring, calibration = resolve(privacy, epsilon=epsilon, delta=delta,
                                                        neighbouring=neighbouring, calibration=calibration)
    eps = check_epsilon(epsilon)
    _N, dl, J, sens = _rkhs_setting(n_private, delta, n_features, calibration, neighbouring, sensitivity)
    return _chi_mean(J) * calibrate_gaussian(epsilon=eps, delta=dl, sensitivity=sens, method=calibration).sigma


def epsilon_for_rkhs_error(target: float, *, n_private: int, delta: float | None = None, n_features: int,
                           calibration: str | None = None, neighbouring: str | None = None,
                           sensitivity: float | None = None, min_epsilon: float = 0.01,
                           max_epsilon: float = 100.0, significant: int = 3,
                           privacy: PrivacySpec | None = None) -> EpsilonPlan:
    r"""The smallest ε at which Algorithm 2's privatised embedding is within ``target`` in expectation.

    Solves :func:`expected_rkhs_error` :math:`(\varepsilon) \le t` for the smallest :math:`\varepsilon` (see the
    module docstring: the inverse of the calibration at :math:`\sigma^\star = t/c_J`), rounds it **up** to
    ``significant`` digits so that the target is still met, and checks the result with
    :func:`~dpkme.privacy.calibration.calibrate_gaussian`. A recommendation for planning, not a privacy
    guarantee; it reads no data and spends no budget.

    Parameters
    ----------
    target : float
        The expected RKHS (feature-space) error you need, > 0 (the mean feature vector has norm at most 1).
    n_private : int
        Public number of rows :math:`N \ge 1`.
    delta : float, optional
        :math:`\delta \in (0, 1)` of the release (required unless ``privacy`` gives it).
    n_features : int
        Number of random features :math:`J \ge 1` (for Algorithm 1: the subspace dimension :math:`F`).
    calibration : {"analytic", "classic"}
        The Gaussian calibration of the release (default ``"analytic"``).
    neighbouring : {"replace-one", "add-remove"}
        The neighbouring relation (default ``"replace-one"``).
    sensitivity : float, optional
        The L2 sensitivity, to plan for another Gaussian release (default: Algorithm 2's :math:`2/N` or
        :math:`1/N`).
    min_epsilon : float
        Smallest ε recommended, > 0 (default 0.01); a looser target gets this floor (``at_floor``).
    max_epsilon : float
        Largest ε recommended (default 100); a target that needs more is a ``ValueError``.
    significant : int
        Significant digits of the recommended ε, 1 to 12 (default 3).
    privacy : PrivacySpec, optional
        The typed alternative to ``delta``, ``calibration`` and ``neighbouring`` (:func:`~dpkme.privacy.spec.resolve`):
        its fields are used, and a loose argument that disagrees is a ValueError naming both; its ε is not used (the plan computes one).

    Returns
    -------
    EpsilonPlan
        The recommended ε (rounded up), the exact one, and the expected error and noise at the recommendation.

    Raises
    ------
    ValueError
        On an invalid input (named), or a target not reached up to ``max_epsilon``.

    Examples
    --------
    >>> from dpkme.privacy.planning import epsilon_for_rkhs_error, expected_rkhs_error
    >>> plan = epsilon_for_rkhs_error(0.05, n_private=10_000, delta=1e-6, n_features=1000)
    >>> plan.epsilon, plan.epsilon_exact <= plan.epsilon, plan.expected_error <= 0.05
    (0.511, True, True)
    >>> expected_rkhs_error(plan.epsilon, n_private=10_000, delta=1e-6, n_features=1000) <= 0.05
    True
    """
    _, delta, neighbouring, calibration = resolve(privacy, delta=delta, neighbouring=neighbouring,
                                                  calibration=calibration, require_epsilon=False)
    N, dl, J, sens = _rkhs_setting(n_private, delta, n_features, calibration, neighbouring, sensitivity)
    return _plan("rkhs", target, n_private=N, delta=dl, dim=J, sensitivity=sens, calibration=calibration,
                 neighbouring=neighbouring, min_epsilon=min_epsilon, max_epsilon=max_epsilon,
                 significant=significant)


def _mean_setting(n_private: int, value_range: float, delta: float, calibration: str,
                  neighbouring: str) -> tuple[int, float, float, float]:
    N = check_positive_int(n_private, name="n_private")
    R = check_positive_float(value_range, name="value_range")
    dl = check_delta(delta)
    check_in(calibration, GAUSSIAN_METHODS, name="calibration")
    check_in(neighbouring, NEIGHBOURING, name="neighbouring")
    return N, R, dl, (R if neighbouring == "replace-one" else R / 2.0) / N


def expected_mean_error(epsilon: float | None = None, *, n_private: int, value_range: float = 1.0,
                        delta: float | None = None, calibration: str | None = None,
                        neighbouring: str | None = None, privacy: PrivacySpec | None = None) -> float:
    r"""Expected absolute error of one bounded mean (or a proportion) released by the Gaussian mechanism.

    For a column declared to lie in a range of width :math:`R` (a proportion: :math:`R = 1`), the mean of
    :math:`N` rows has sensitivity :math:`R/N` under replace-one; under add-remove, with the public :math:`N`
    and the column centred at the declared midpoint :math:`c` (release :math:`c + \sum_n (x_n - c)/N`),
    :math:`R/(2N)`. With :math:`\sigma_{\text{mean}}` calibrated to it,

    .. math::
        \mathbb E|\tilde m - m| = \sigma_{\text{mean}}\sqrt{2/\pi}\qquad
        (\text{root-mean-square error } \sigma_{\text{mean}}).

    A reference of what :math:`\varepsilon` buys for a plain statistic released alone, not the error of a
    statistic computed from a kernel-embedding release.

    Parameters
    ----------
    epsilon : float, optional
        :math:`\varepsilon > 0` (required unless ``privacy`` gives it).
    n_private : int
        Public number of rows :math:`N \ge 1`.
    value_range : float
        Width :math:`R > 0` of the column's declared range, in its units (default 1: a proportion).
    delta : float, optional
        :math:`\delta \in (0, 1)` (required unless ``privacy`` gives it).
    calibration : {"analytic", "classic"}
        The Gaussian calibration (default ``"analytic"``).
    neighbouring : {"replace-one", "add-remove"}
        The neighbouring relation (default ``"replace-one"``).
    privacy : PrivacySpec, optional
        The typed alternative to ``epsilon``, ``delta``, ``calibration`` and ``neighbouring`` (:func:`~dpkme.privacy.spec.resolve`):
        its fields are used, and a loose argument that disagrees is a ValueError naming both.

    Returns
    -------
    float
        The expected absolute error, in the column's units.

    Examples
    --------
    >>> from dpkme.privacy.planning import expected_mean_error
    >>> round(expected_mean_error(1.0, n_private=1000, delta=1e-6), 5)    # a proportion, N = 1000
    0.00337
    """
    epsilon, delta, neighbouring, calibration = resolve(privacy, epsilon=epsilon, delta=delta,
                                                        neighbouring=neighbouring, calibration=calibration)
    eps = check_epsilon(epsilon)
    _N, _R, dl, sens = _mean_setting(n_private, value_range, delta, calibration, neighbouring)
    return _chi_mean(1) * calibrate_gaussian(epsilon=eps, delta=dl, sensitivity=sens, method=calibration).sigma


def epsilon_for_mean_error(target: float, *, n_private: int, value_range: float = 1.0, delta: float | None = None,
                           calibration: str | None = None, neighbouring: str | None = None,
                           min_epsilon: float = 0.01, max_epsilon: float = 100.0,
                           significant: int = 3, privacy: PrivacySpec | None = None) -> EpsilonPlan:
    r"""The smallest ε at which one bounded mean (or a proportion), released alone, is within ``target``.

    Inverts :func:`expected_mean_error` as :func:`epsilon_for_rkhs_error` inverts the RKHS error (with
    :math:`J = 1` and :math:`\Delta = R/N`), rounding **up**. A reference for planning, not a guarantee, and not
    the accuracy of statistics read off a kernel-embedding release.

    Parameters
    ----------
    target : float
        Expected absolute error you need, > 0, in the column's units (a proportion: 0.01 is one percentage
        point).
    n_private : int
        Public number of rows :math:`N \ge 1`.
    value_range : float
        Width :math:`R > 0` of the column's declared range (default 1: a proportion). Declare it from public
        knowledge (units, a codebook), never from the private rows.
    delta : float, optional
        :math:`\delta \in (0, 1)` (required unless ``privacy`` gives it).
    calibration : {"analytic", "classic"}
        The Gaussian calibration (default ``"analytic"``).
    neighbouring : {"replace-one", "add-remove"}
        The neighbouring relation (default ``"replace-one"``).
    min_epsilon : float
        Smallest ε recommended, > 0 (default 0.01).
    max_epsilon : float
        Largest ε recommended (default 100).
    significant : int
        Significant digits of the recommended ε, 1 to 12 (default 3).
    privacy : PrivacySpec, optional
        The typed alternative to ``delta``, ``calibration`` and ``neighbouring`` (:func:`~dpkme.privacy.spec.resolve`):
        its fields are used, and a loose argument that disagrees is a ValueError naming both; its ε is not used (the plan computes one).

    Returns
    -------
    EpsilonPlan
        The recommended ε (rounded up) with ``statistic="mean"`` and ``dim=1``.

    Raises
    ------
    ValueError
        On an invalid input (named), or a target not reached up to ``max_epsilon``.

    Examples
    --------
    A proportion within one percentage point, from 1 000 rows:

    >>> from dpkme.privacy.planning import epsilon_for_mean_error
    >>> plan = epsilon_for_mean_error(0.01, n_private=1000, delta=1e-6)
    >>> plan.epsilon, plan.expected_error <= 0.01
    (0.312, True)
    """
    _, delta, neighbouring, calibration = resolve(privacy, delta=delta, neighbouring=neighbouring,
                                                  calibration=calibration, require_epsilon=False)
    N, _R, dl, sens = _mean_setting(n_private, value_range, delta, calibration, neighbouring)
    return _plan("mean", target, n_private=N, delta=dl, dim=1, sensitivity=sens, calibration=calibration,
                 neighbouring=neighbouring, min_epsilon=min_epsilon, max_epsilon=max_epsilon,
                 significant=significant)
