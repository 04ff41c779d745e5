r"""Additive noise mechanisms: privacy maps (calibration) kept apart from sampling.

Following OpenDP, each mechanism is split into

* a **privacy map / calibration**: a pure function from (sensitivity, privacy
  parameters) to a noise scale, returning a frozen record
  (:class:`GaussianCalibration`, :class:`LaplaceCalibration`) that states what
  was guaranteed and how; and
* a **sampler** (:func:`gaussian_noise`, :func:`laplace_noise`) that only
  draws noise of a given scale from a caller-supplied generator.

Neighbouring relation
---------------------
Every guarantee below holds for the neighbouring relation the ``sensitivity``
was computed for (``"replace-one"`` or ``"add-remove"``, see
:mod:`dpkme.privacy.sensitivity`): the mechanism is

.. math::
    M(D) = f(D) + Z, \qquad
    \Delta = \sup_{D\sim D'} \|f(D) - f(D')\|,

and nothing here knows or checks which relation ``\sim`` is. Passing a
replace-one sensitivity gives replace-one DP, and so on.

Gaussian mechanism
------------------
:math:`Z\sim\mathcal N(0,\sigma^2 I)`, :math:`\Delta = \Delta_2` (L2). By Balle &
Wang (2018, Theorem 8) :math:`M` is :math:`(\varepsilon,\delta)`-DP **if and only if**

.. math::
    \delta(\sigma) := \Phi\!\Big(\frac{\Delta}{2\sigma} - \frac{\varepsilon\sigma}{\Delta}\Big)
    - e^{\varepsilon}\,\Phi\!\Big(-\frac{\Delta}{2\sigma} - \frac{\varepsilon\sigma}{\Delta}\Big)
    \le \delta .

``method="analytic"`` finds the smallest such :math:`\sigma` numerically (their
Algorithm 1 solves the same equation); ``method="classic"`` uses
:math:`\sigma = \Delta\sqrt{2\ln(1.25/\delta)}/\varepsilon` (Dwork & Roth 2014,
Theorem A.1, proved only for :math:`\varepsilon < 1`; it is the calibration used
by Balog et al. 2018, Section 2).

Laplace mechanism
-----------------
:math:`Z_j \overset{iid}{\sim} \mathrm{Lap}(b)`, :math:`b = \Delta_1/\varepsilon`
gives pure :math:`\varepsilon`-DP (Dwork & Roth 2014, Theorem 3.6), with
:math:`\Delta_1` the **L1** sensitivity.

Floating point and the noise source
-----------------------------------
By default (``noise="numpy"``) noise is drawn with numpy's
:class:`~numpy.random.Generator` in double precision and added in floating
point. The guarantee then assumes idealised numerics: that
:math:`\sigma Z` with :math:`Z` numpy's float64 standard normal, added to a
float64 vector, behaves like the real-valued Gaussian mechanism. It is not
hardened against floating-point side channels (Mironov, CCS 2012: the low-order
bits of a naively computed noisy value can reveal the input), and the
generator is not a cryptographic one. It is adequate for teaching and
experiments.

``noise="opendp"`` (:func:`add_gaussian_noise`) hands the vector and
:math:`\sigma` to OpenDP's vetted Gaussian measurement instead, which samples
exactly from a cryptographically secure generator and adds the noise in exact
arithmetic (see :func:`add_gaussian_noise` for what it guarantees). It cannot be
seeded, so such releases cannot be replayed.

References
----------
B. Balle and Y.-X. Wang. Improving the Gaussian mechanism for differential
privacy: analytical calibration and optimal denoising. ICML 2018.

C. Dwork and A. Roth. The Algorithmic Foundations of Differential Privacy. 2014.

M. Balog, I. Tolstikhin, B. Schölkopf. Differentially private database release
via kernel mean embeddings. ICML 2018.

I. Mironov. On significance of the least significant bits for differential
privacy. CCS 2012.

C. Canonne, G. Kamath, T. Steinke. The discrete Gaussian for differential
privacy. NeurIPS 2020.

The OpenDP Library, version 0.16 (``opendp.measurements.make_gaussian``).
"""

from __future__ import annotations

import functools
import math
import numbers
import threading
import warnings
from collections.abc import Callable, Iterable
from dataclasses import dataclass
from types import ModuleType
from typing import Any, cast

import numpy as np
import numpy.typing as npt
from scipy.special import log_ndtr, ndtr

from .._validation import check_delta, check_epsilon, check_in, check_positive_float, check_positive_int

__all__ = [
    "GAUSSIAN_METHODS",
    "MAX_CALIBRATION_EPSILON",
    "NOISE_SOURCES",
    "add_gaussian_noise",
    "check_noise_source",
    "opendp_gaussian_noise",
    "GaussianCalibration",
    "LaplaceCalibration",
    "UnprovenCalibrationWarning",
    "analytic_sigma",
    "calibrate_gaussian",
    "calibrate_laplace",
    "classic_sigma",
    "gaussian_delta",
    "gaussian_epsilon",
    "gaussian_noise",
    "l1_from_l2_sensitivity",
    "laplace_noise",
]

GAUSSIAN_METHODS = ("analytic", "classic")

#: Samplers for the Gaussian noise of a release: numpy's Generator (default, seedable) or OpenDP's exact sampler.
NOISE_SOURCES = ("numpy", "opendp")

# Relative width at which the bisections stop. The returned end is always the
# conservative one (more noise / larger epsilon), so this only costs utility.
_REL_TOL = 1e-13
_MAX_BISECT = 400
_MAX_BRACKET = 2100  # doublings/halvings: enough to cross the whole double range


class UnprovenCalibrationWarning(UserWarning):
    """A calibration is used outside the theorem it comes from.

    Issued for the classic Gaussian calibration with :math:`\\varepsilon \\ge 1`
    when the exact Balle-Wang condition nevertheless holds.
    """


# --------------------------------------------------------------------------- Gaussian: privacy map
def _log_delta_terms(sigma: float, epsilon: float, sensitivity: float) -> tuple[float, float]:
    a = sensitivity / (2.0 * sigma)
    b = epsilon * sigma / sensitivity
    return float(log_ndtr(a - b)), float(epsilon + log_ndtr(-a - b))


def _delta_unchecked(sigma: float, epsilon: float, sensitivity: float) -> float:
    """Balle-Wang delta in log space: exp(l1) * (1 - exp(l2 - l1)), no overflow."""
    if sigma == 0.0:
        return 1.0
    if math.isinf(sigma):
        return 0.0
    l1, l2 = _log_delta_terms(sigma, epsilon, sensitivity)
    if l1 == -math.inf:
        return 0.0
    diff = l2 - l1
    if diff >= 0.0:  # only possible through rounding when delta is ~0
        return 0.0
    return float(math.exp(l1) * -math.expm1(diff))


#: Working precision (bits) of the first high-precision evaluation of the Balle-Wang delta; doubled while the
#: comparison with the target delta is undecided, up to :data:`_MAX_PREC_BITS`.
_START_PREC_BITS = 192
_MAX_PREC_BITS = 4096


def _delta_high_precision(sigma: float, epsilon: float, sensitivity: float, prec: int) -> tuple[Any, Any]:
    r"""Balle-Wang :math:`\delta` at ``prec`` bits (mpmath): an enclosure ``(lower, upper)`` as exact mpf.

    The inputs are taken as the exact binary values of the floats. Each of the
    two terms :math:`t_1 = \Phi(a - b)` and :math:`t_2 = e^\varepsilon\Phi(-a - b)`
    (:math:`a = \Delta/2\sigma`, :math:`b = \varepsilon\sigma/\Delta`) is computed
    to a relative error of a few units of :math:`2^{-p}` by mpmath, plus the
    propagated rounding of its arguments: :math:`a - b` and :math:`a + b` carry an
    absolute error :math:`\lesssim (a + b)2^{-p}`, which :math:`\log\Phi(x)`
    amplifies by at most :math:`|x| + 1` (its derivative, Mills' ratio), and
    :math:`e^\varepsilon` has relative error :math:`\lesssim \varepsilon 2^{-p}`.
    The enclosure is ``value ± err`` with the generous
    :math:`\text{err} = (t_1 + t_2)\,2^{-p+6}\,(4 + \varepsilon + (a + b + 1)^2)`,
    its ends computed exactly (no further rounding).
    """
    ctx = _mp_context()
    ctx.prec = prec
    s, e, d = ctx.mpf(sigma), ctx.mpf(epsilon), ctx.mpf(sensitivity)
    a = d / (2 * s)
    b = e * s / d
    t1 = ctx.ncdf(a - b)
    t2 = ctx.exp(e) * ctx.ncdf(-a - b)
    value = t1 - t2
    err = (t1 + t2) * ctx.ldexp(1, 6 - prec) * (4 + e + (a + b + 1) ** 2)
    # exact (unrounded) ends, so that comparing them with delta involves no further rounding
    return ctx.fsub(value, err, exact=True), ctx.fadd(value, err, exact=True)


_MP = threading.local()


def _mp_context() -> Any:
    """This thread's own mpmath context (mpmath's global ``mp`` precision is shared by all threads, and the
    Streamlit app calibrates in several threads at once). mpmath ships with dp-accounting (pinned in
    requirements.txt); it is imported on first use."""
    ctx = getattr(_MP, "ctx", None)
    if ctx is None:
        import mpmath

        ctx = _MP.ctx = mpmath.MPContext()
    return ctx


# Pure functions of floats, verified in high precision (a few ms each): memoised, so that sweeps, audits and the
# app's pre-release budget checks, which ask for the same calibration again and again, pay once.
@functools.lru_cache(maxsize=8192)
def _delta_verified(sigma: float, epsilon: float, sensitivity: float, delta: float) -> tuple[bool, float]:
    r"""Decide :math:`\delta(\sigma) \le \delta` exactly, rounding the doubt toward "no".

    Returns ``(holds, upper)`` where ``upper`` is a float upper bound on the exact
    :math:`\delta(\sigma)` (``nan`` when undecided). ``holds`` is ``True`` only when
    the high-precision upper bound is :math:`\le \delta` **and** the float64
    evaluation (:func:`gaussian_delta`) agrees, so both the exact statement and
    every float64 re-check of the calibration hold. The precision starts at
    192 bits and doubles while the comparison is within the error bound; an
    undecided comparison at 4096 bits (only at exact equality) counts as a
    failure, i.e. toward more noise.
    """
    if _delta_unchecked(sigma, epsilon, sensitivity) > delta:
        return False, math.nan
    prec = _START_PREC_BITS
    while True:
        lower, upper = _delta_high_precision(sigma, epsilon, sensitivity, prec)
        if upper <= delta:
            return True, _float_up(max(upper, 0))
        if lower > delta or prec >= _MAX_PREC_BITS:
            return False, math.nan
        prec *= 2


def _float_up(x: Any) -> float:
    """Smallest float >= the mpf ``x`` (float() rounds to nearest)."""
    f = float(x)
    return math.nextafter(f, math.inf) if f < x else f


@functools.lru_cache(maxsize=8192)
def _achieved_delta(sigma: float, epsilon: float, sensitivity: float) -> float:
    """Float upper bound (tight to a relative 1e-6 or better) on the exact Balle-Wang delta of ``sigma``."""
    prec = _START_PREC_BITS
    while True:
        lower, upper = _delta_high_precision(sigma, epsilon, sensitivity, prec)
        if upper - lower <= 1e-6 * abs(upper) or prec >= _MAX_PREC_BITS:
            break
        prec *= 2
    return min(1.0, _float_up(max(upper, 0)))


def _round_up_verified(value: float, holds: Callable[[float], bool], *, name: str) -> float:
    """Smallest float >= ``value`` (to a relative 1e-12) for which ``holds`` is true, assuming monotonicity.

    The step above ``value`` starts at a relative 1e-12 (at least one float)
    and doubles until ``holds``; the last bracket is then bisected to a relative
    1e-12. Only values for which ``holds`` was evaluated true are returned.
    A value that is 0, overflows, or never holds is a ValueError.
    """
    v = float(value)
    if math.isfinite(v) and v > 0 and holds(v):
        return v
    lo, step, hi = v, 1e-12, math.nan
    for _ in range(_MAX_BRACKET):
        if not (math.isfinite(lo) and lo > 0):
            break
        cand = max(v * (1.0 + step), math.nextafter(lo, math.inf))
        if not math.isfinite(cand):
            break
        if holds(cand):
            hi = cand
            break
        lo, step = cand, 2.0 * step
    if math.isnan(hi):
        raise ValueError(f"{name}={value!r} could not be verified (the parameters put it outside the float range); "
                         "use a larger sensitivity or a smaller epsilon.")
    for _ in range(_MAX_BISECT):
        mid = 0.5 * (lo + hi)
        if hi - lo <= 1e-12 * hi or not lo < mid < hi:
            break
        if holds(mid):
            hi = mid
        else:
            lo = mid
    return hi


def gaussian_delta(*, sigma: float, epsilon: float, sensitivity: float) -> float:
    r"""Exact :math:`\delta(\varepsilon)` of the Gaussian mechanism (Balle & Wang 2018, Thm 8).

    .. math::
        \delta = \Phi\!\Big(\frac{\Delta}{2\sigma} - \frac{\varepsilon\sigma}{\Delta}\Big)
        - e^{\varepsilon}\,\Phi\!\Big(-\frac{\Delta}{2\sigma} - \frac{\varepsilon\sigma}{\Delta}\Big)

    :math:`M(D) = f(D) + \mathcal N(0, \sigma^2 I)` is :math:`(\varepsilon,\delta')`-DP
    exactly when :math:`\delta' \ge \delta`. Evaluated as
    :math:`e^{l_1}\,(1 - e^{l_2 - l_1})` with :math:`l_1 = \log\Phi(\cdot)` and
    :math:`l_2 = \varepsilon + \log\Phi(\cdot)` (``scipy.special.log_ndtr``), which
    neither overflows for large :math:`\varepsilon` nor loses the small difference
    to cancellation.

    Parameters
    ----------
    sigma : float
        Per-coordinate noise standard deviation, > 0.
    epsilon : float
        > 0 and finite.
    sensitivity : float
        L2 sensitivity :math:`\Delta_2` > 0 under the chosen neighbouring relation.

    Returns
    -------
    float
        :math:`\delta \in [0, 1)`.
    """
    sigma = check_positive_float(sigma, name="sigma")
    epsilon = check_epsilon(epsilon)
    sensitivity = check_positive_float(sensitivity, name="sensitivity")
    return _delta_unchecked(sigma, epsilon, sensitivity)


def _delta_at_eps0(sigma: float, sensitivity: float) -> float:
    # delta(0) = Phi(a) - Phi(-a) = total variation between N(0, s^2) and N(Delta, s^2).
    a = sensitivity / (2.0 * sigma)
    return float(ndtr(a) - ndtr(-a))


def gaussian_epsilon(*, sigma: float, delta: float, sensitivity: float) -> float:
    r"""Smallest :math:`\varepsilon \ge 0` with :math:`\delta(\varepsilon) \le \delta` for a given :math:`\sigma`.

    Inverts :func:`gaussian_delta` in :math:`\varepsilon` (it is decreasing in
    :math:`\varepsilon`) by bisection, returning the **upper** end of the final
    bracket (rounding toward a larger, i.e. safe, :math:`\varepsilon`), verified to
    satisfy :math:`\delta(\varepsilon) \le \delta` in high precision as in
    :func:`analytic_sigma` (and raised until it does).

    Parameters
    ----------
    sigma : float
        Noise standard deviation, > 0.
    delta : float
        In (0, 1).
    sensitivity : float
        L2 sensitivity, > 0.

    Returns
    -------
    float
        :math:`\varepsilon`; ``0.0`` if the mechanism is already
        :math:`(0,\delta)`-DP, ``inf`` if no finite :math:`\varepsilon` below
        :math:`10^{300}` suffices.

    Examples
    --------
    >>> from dpkme.privacy.calibration import analytic_sigma, gaussian_delta, gaussian_epsilon
    >>> s = analytic_sigma(epsilon=1.0, delta=1e-5, sensitivity=1.0)
    >>> gaussian_delta(sigma=s, epsilon=1.0, sensitivity=1.0) <= 1e-5
    True
    >>> round(gaussian_epsilon(sigma=s, delta=1e-5, sensitivity=1.0), 9)   # the inverse, rounded up
    1.0
    """
    sigma = check_positive_float(sigma, name="sigma")
    delta = check_delta(delta)
    sensitivity = check_positive_float(sensitivity, name="sensitivity")
    if _delta_at_eps0(sigma, sensitivity) <= delta and _delta_verified(sigma, 0.0, sensitivity, delta)[0]:
        return 0.0
    lo, hi = 0.0, 1.0
    while _delta_unchecked(sigma, hi, sensitivity) > delta:
        if hi >= 1e300:
            return math.inf
        lo, hi = hi, min(2.0 * hi, 1e300)   # the last bracket ends exactly at 1e300 (not at the next power of 2)
    for _ in range(_MAX_BISECT):
        if hi - lo <= _REL_TOL * hi:
            break
        mid = 0.5 * (lo + hi)
        if _delta_unchecked(sigma, mid, sensitivity) <= delta:
            hi = mid
        else:
            lo = mid
    # verification in high precision, rounding toward a larger epsilon
    return _round_up_verified(hi, lambda e: _delta_verified(sigma, e, sensitivity, delta)[0], name="epsilon")


def classic_sigma(*, epsilon: float, delta: float, sensitivity: float) -> float:
    r"""Classic Gaussian calibration :math:`\sigma = \Delta\sqrt{2\ln(1.25/\delta)}/\varepsilon`.

    Dwork & Roth (2014), Theorem A.1: for :math:`\varepsilon \in (0, 1)` this
    :math:`\sigma` makes :math:`f(D) + \mathcal N(0,\sigma^2 I)`
    :math:`(\varepsilon,\delta)`-DP. For :math:`\varepsilon \ge 1` the theorem says
    nothing and the formula eventually fails (at :math:`\delta = 10^{-5}` beyond
    :math:`\varepsilon \approx 8.4`); use :func:`calibrate_gaussian`, which checks.
    This function only evaluates the formula.

    Parameters
    ----------
    epsilon : float
        > 0 and finite (the theorem needs :math:`\varepsilon < 1`; not checked here).
    delta : float
        In (0, 1).
    sensitivity : float
        L2 sensitivity :math:`\Delta_2` > 0 under the chosen neighbouring relation.

    Returns
    -------
    float
        :math:`\sigma`, per-coordinate noise standard deviation (same units as
        ``sensitivity``).

    Examples
    --------
    >>> from dpkme.privacy.calibration import analytic_sigma, classic_sigma
    >>> round(classic_sigma(epsilon=0.5, delta=1e-5, sensitivity=1.0), 4)
    9.6896
    >>> analytic_sigma(epsilon=0.5, delta=1e-5, sensitivity=1.0) < classic_sigma(epsilon=0.5, delta=1e-5, sensitivity=1.0)
    True
    """
    epsilon = check_epsilon(epsilon)
    delta = check_delta(delta)
    sensitivity = check_positive_float(sensitivity, name="sensitivity")
    sigma = sensitivity * math.sqrt(2.0 * math.log(1.25 / delta)) / epsilon
    if not (math.isfinite(sigma) and sigma > 0):
        raise ValueError(f"classic sigma for epsilon={epsilon!r}, delta={delta!r}, sensitivity={sensitivity!r} is "
                         f"{sigma!r}, outside the float range; use a larger epsilon or another sensitivity.")
    return sigma


def analytic_sigma(*, epsilon: float, delta: float, sensitivity: float) -> float:
    r"""Smallest :math:`\sigma` meeting the exact Balle-Wang condition (analytic Gaussian mechanism).

    Solves :math:`\delta(\sigma) = \delta` (see :func:`gaussian_delta`;
    :math:`\delta(\sigma)` is decreasing in :math:`\sigma`) by bracketing
    (doubling/halving) and bisection to a relative width of ~1e-13 in float64,
    and returns the **upper** end of the bracket. Valid for every
    :math:`\varepsilon > 0` (Balle & Wang 2018, Theorem 8 and Algorithm 1).

    Verification in high precision. The float64 evaluation of
    :math:`\delta(\sigma)` (log-space, :func:`gaussian_delta`) loses digits to the
    cancellation of its two terms: at :math:`\varepsilon = 10^{-3}`,
    :math:`\delta = 10^{-9}` its root lies a relative :math:`2\cdot10^{-11}`
    *below* the exact one, so a float64 check alone can return a :math:`\sigma`
    whose exact :math:`\delta` exceeds the target. The returned :math:`\sigma` is
    therefore checked with the exact binary values of :math:`\sigma, \varepsilon,
    \Delta` in mpmath at 192 bits or more, with a rigorous-by-construction error
    enclosure (the precision doubles while the comparison is undecided, and an
    undecided comparison counts as a failure); it must satisfy both that check
    and the float64 one. If it fails, :math:`\sigma` is raised (relative steps
    from 1e-12, doubling, then bisected back to a relative 1e-12), so rounding is
    always toward more noise, and the result is at most a relative
    :math:`\sim 10^{-12}` above the exact minimum. A relative safety margin on
    :math:`\delta` was not used instead: the float64 error is not bounded by a
    fixed relative amount (it grows with the cancellation, i.e. as
    :math:`\varepsilon \to 0` and :math:`\delta \to 0`), whereas the enclosure
    adapts its precision. mpmath ships with ``dp-accounting`` (pinned in
    ``requirements.txt``).

    Parameters
    ----------
    epsilon : float
        > 0 and finite.
    delta : float
        In (0, 1).
    sensitivity : float
        L2 sensitivity :math:`\Delta_2` > 0 under the chosen neighbouring relation.

    Returns
    -------
    float
        :math:`\sigma`.
    """
    epsilon = check_epsilon(epsilon)
    delta = check_delta(delta)
    sensitivity = check_positive_float(sensitivity, name="sensitivity")
    return _analytic_sigma(epsilon, delta, sensitivity)


@functools.lru_cache(maxsize=8192)
def _analytic_sigma(epsilon: float, delta: float, sensitivity: float) -> float:
    # Work with the noise multiplier s = sigma / Delta (delta depends on sigma/Delta only).
    def d(s: float) -> float:
        return _delta_unchecked(s, epsilon, 1.0)

    hi = math.sqrt(2.0 * math.log(1.25 / delta)) / epsilon  # classic guess
    n = 0
    while d(hi) > delta:
        hi *= 2.0
        n += 1
        if n > _MAX_BRACKET:  # pragma: no cover - delta(s) -> 0 as s -> inf
            raise ValueError(f"could not bracket sigma for epsilon={epsilon}, delta={delta}.")
    lo = hi / 2.0
    n = 0
    while d(lo) <= delta:
        hi, lo = lo, lo / 2.0
        n += 1
        if n > _MAX_BRACKET or lo == 0.0:  # pragma: no cover - delta(s) -> 1 as s -> 0
            break
    for _ in range(_MAX_BISECT):
        if hi - lo <= _REL_TOL * hi:
            break
        mid = 0.5 * (lo + hi)
        if d(mid) <= delta:
            hi = mid
        else:
            lo = mid
    # Verify at the actual sensitivity, in high precision (the product may round down, or underflow to 0: a
    # ValueError); rounding toward more noise.
    return _round_up_verified(hi * sensitivity, lambda s: _delta_verified(s, epsilon, sensitivity, delta)[0],
                              name="sigma")


@dataclass(frozen=True)
class GaussianCalibration:
    r"""Record of a Gaussian-mechanism calibration.

    Made by :func:`calibrate_gaussian` (and :func:`dpkme.release.gp.calibrate_gp`);
    frozen, and stored as given (no validation here).

    Parameters
    ----------
    sigma : float
        Per-coordinate standard deviation :math:`\sigma` of the noise (same units
        as ``sensitivity``).
    epsilon, delta : float
        Requested privacy parameters.
    sensitivity : float
        L2 sensitivity :math:`\Delta_2` the noise was calibrated to (for the
        neighbouring relation that sensitivity was computed under).
    method : {"analytic", "classic", "hall"}
        How :math:`\sigma` was found: the exact Balle-Wang condition, Dwork &
        Roth's Theorem A.1, or Hall et al.'s constant (GP release).
    achieved_delta : float
        Exact :math:`\delta(\varepsilon)` of :math:`\mathcal N(0,\sigma^2)` at this
        sensitivity (Balle & Wang 2018, Theorem 8), evaluated in high precision
        and rounded up to a float (an upper bound, tight to a relative
        :math:`10^{-6}` or better); ``<= delta`` for every returned calibration.
    proven : bool
        ``False`` only for the classic calibration with :math:`\varepsilon \ge 1`,
        i.e. outside Dwork & Roth's Theorem A.1. (The release is then still
        :math:`(\varepsilon,\delta)`-DP by the exact condition
        ``achieved_delta <= delta``, checked in high precision.)

    Attributes
    ----------
    noise_multiplier : float
        :math:`z = \sigma/\Delta_2` (derived), what the accountants compose.
    """

    sigma: float
    epsilon: float
    delta: float
    sensitivity: float
    method: str
    achieved_delta: float
    proven: bool

    @property
    def noise_multiplier(self) -> float:
        r""":math:`z = \sigma/\Delta_2`, the quantity privacy accountants compose."""
        return self.sigma / self.sensitivity



#: Largest epsilon :func:`calibrate_gaussian` accepts. At the calibrated sigma the two arguments of Phi in the
#: Balle-Wang condition are about +-sqrt(epsilon/2) and cancel; beyond ~1e15 float64 cannot resolve their
#: difference (and e^epsilon-DP is no privacy anyway).
MAX_CALIBRATION_EPSILON = 1e15


def calibrate_gaussian(*, epsilon: float, delta: float, sensitivity: float,
                       method: str = "analytic") -> GaussianCalibration:
    r"""Calibrate the Gaussian mechanism :math:`f(D) + \mathcal N(0, \sigma^2 I)` to :math:`(\varepsilon,\delta)`-DP.

    Guarantee: with :math:`\Delta_2 = \sup_{D\sim D'}\|f(D)-f(D')\|_2` for the
    neighbouring relation :math:`\sim` of the caller's choice, the mechanism is
    :math:`(\varepsilon,\delta)`-DP under that relation.

    * ``method="analytic"`` (default): the smallest :math:`\sigma` with

      .. math::
          \Phi\!\Big(\frac{\Delta}{2\sigma} - \frac{\varepsilon\sigma}{\Delta}\Big)
          - e^{\varepsilon}\Phi\!\Big(-\frac{\Delta}{2\sigma} - \frac{\varepsilon\sigma}{\Delta}\Big)
          \le \delta,

      a necessary and sufficient condition (Balle & Wang 2018, Theorem 8),
      see :func:`analytic_sigma`. Valid for every :math:`\varepsilon > 0` and never
      larger than the classic :math:`\sigma` where the classic one is valid.
    * ``method="classic"``: :math:`\sigma = \Delta\sqrt{2\ln(1.25/\delta)}/\varepsilon`
      (Dwork & Roth 2014, Theorem A.1, which assumes :math:`\varepsilon < 1`).
      For :math:`\varepsilon \ge 1` the exact :math:`\delta` is computed: if it is
      :math:`\le \delta` an :class:`UnprovenCalibrationWarning` is issued and the
      calibration is returned with ``proven=False``; otherwise a
      :class:`ValueError` reports the true :math:`\delta` (at
      :math:`\delta = 10^{-5}` this happens for :math:`\varepsilon \gtrsim 8.4`).

    Parameters
    ----------
    epsilon : float
        > 0 and finite.
    delta : float
        In (0, 1).
    sensitivity : float
        L2 sensitivity > 0.
    method : {"analytic", "classic"}, default "analytic"
        The calibration (see above).

    Returns
    -------
    GaussianCalibration
        :math:`\sigma`, the requested :math:`(\varepsilon,\delta)`, the exact
        ``achieved_delta`` and whether a theorem covers it (``proven``).

    Raises
    ------
    ValueError
        On invalid inputs (including :math:`\varepsilon >` :data:`MAX_CALIBRATION_EPSILON`), or for a
        classic calibration that is not :math:`(\varepsilon,\delta)`-DP.

    Examples
    --------
    >>> from dpkme.privacy.calibration import calibrate_gaussian
    >>> cal = calibrate_gaussian(epsilon=1.0, delta=1e-5, sensitivity=1.0)
    >>> round(cal.sigma, 4), cal.method, cal.proven, cal.achieved_delta <= 1e-5
    (3.7306, 'analytic', True, True)
    """
    epsilon = check_epsilon(epsilon)
    if epsilon > MAX_CALIBRATION_EPSILON:
        raise ValueError(
            f"epsilon={epsilon:g} is beyond {MAX_CALIBRATION_EPSILON:g}: such an epsilon protects nothing "
            "(e^epsilon), and the Balle-Wang condition can no longer be evaluated in float64 (its two terms "
            "cancel); choose a meaningful epsilon (at most a few dozen).")
    delta = check_delta(delta)
    sensitivity = check_positive_float(sensitivity, name="sensitivity")
    check_in(method, GAUSSIAN_METHODS, name="method")
    if method == "analytic":
        sigma = _analytic_sigma(epsilon, delta, sensitivity)
        return GaussianCalibration(sigma, epsilon, delta, sensitivity, "analytic",
                                   _achieved_delta(sigma, epsilon, sensitivity), True)
    sigma = classic_sigma(epsilon=epsilon, delta=delta, sensitivity=sensitivity)
    achieved = _achieved_delta(sigma, epsilon, sensitivity)
    if epsilon < 1.0:
        return GaussianCalibration(sigma, epsilon, delta, sensitivity, "classic", achieved, True)
    if achieved > delta:
        raise ValueError(
            f"classic calibration at epsilon={epsilon:g} gives true delta={achieved:.3g} > requested "
            f"{delta:g} (Dwork & Roth's Theorem A.1 only covers epsilon < 1); use method='analytic'."
        )
    warnings.warn(
        f"classic Gaussian calibration at epsilon={epsilon:g} >= 1 is outside Dwork & Roth's Theorem A.1; "
        f"the exact Balle-Wang delta is {achieved:.3g} <= requested {delta:g}, so the guarantee holds, "
        "but method='analytic' gives less noise.",
        UnprovenCalibrationWarning,
        stacklevel=2,
    )
    return GaussianCalibration(sigma, epsilon, delta, sensitivity, "classic", achieved, False)


# --------------------------------------------------------------------------- Laplace: privacy map
@dataclass(frozen=True)
class LaplaceCalibration:
    r"""Record of a Laplace-mechanism calibration: :math:`b = \Delta_1/\varepsilon`, pure :math:`\varepsilon`-DP.

    Made by :func:`calibrate_laplace`; frozen, and stored as given.

    Parameters
    ----------
    scale : float
        Laplace scale :math:`b` (density :math:`e^{-|x|/b}/(2b)`, std :math:`\sqrt2 b`),
        in the units of the statistic.
    epsilon : float
        The pure :math:`\varepsilon` the scale was calibrated to (:math:`\delta = 0`).
    l1_sensitivity : float
        :math:`\Delta_1` under the chosen neighbouring relation.

    Attributes
    ----------
    noise_multiplier : float
        :math:`b/\Delta_1 = 1/\varepsilon` (derived).
    """

    scale: float
    epsilon: float
    l1_sensitivity: float

    @property
    def noise_multiplier(self) -> float:
        r""":math:`b/\Delta_1 = 1/\varepsilon` (``dp_accounting``'s ``LaplaceDpEvent`` parameter)."""
        return self.scale / self.l1_sensitivity


def calibrate_laplace(*, epsilon: float, l1_sensitivity: float) -> LaplaceCalibration:
    r"""Calibrate the Laplace mechanism: :math:`b = \Delta_1/\varepsilon`.

    :math:`M(D) = f(D) + (Z_1,\dots,Z_d)`, :math:`Z_j \overset{iid}{\sim}\mathrm{Lap}(b)`,
    is :math:`\varepsilon`-DP (pure, :math:`\delta = 0`) under the neighbouring
    relation for which :math:`\Delta_1 = \sup_{D\sim D'}\|f(D)-f(D')\|_1`
    (Dwork & Roth 2014, Theorem 3.6). For a vector statistic with a known L2
    bound use :func:`l1_from_l2_sensitivity`.

    Parameters
    ----------
    epsilon : float
        > 0 and finite.
    l1_sensitivity : float
        L1 sensitivity :math:`\Delta_1 > 0` under the chosen neighbouring relation.

    Returns
    -------
    LaplaceCalibration
        With ``scale`` :math:`= \Delta_1/\varepsilon`.

    Examples
    --------
    >>> from dpkme.privacy.calibration import calibrate_laplace
    >>> calibrate_laplace(epsilon=0.5, l1_sensitivity=0.02)
    LaplaceCalibration(scale=0.04, epsilon=0.5, l1_sensitivity=0.02)
    """
    epsilon = check_epsilon(epsilon)
    l1 = check_positive_float(l1_sensitivity, name="l1_sensitivity")
    return LaplaceCalibration(scale=_ratio_up(l1, epsilon), epsilon=epsilon, l1_sensitivity=l1)


def _ratio_up(num: float, den: float) -> float:
    """``num / den`` rounded toward more noise: the smallest float that is at least the exact real quotient."""
    from fractions import Fraction

    q = num / den
    while Fraction(q) < Fraction(num) / Fraction(den):
        q = math.nextafter(q, math.inf)
    return q


def l1_from_l2_sensitivity(l2: float, dim: int) -> float:
    r"""Generic L1 sensitivity bound of a ``dim``-dimensional statistic: :math:`\Delta_1 \le \sqrt{d}\,\Delta_2`.

    By Cauchy-Schwarz :math:`\|v\|_1 \le \sqrt d\,\|v\|_2` for :math:`v\in\mathbb R^d`,
    and this is attained (a difference spread evenly over all coordinates), so
    without further structure it is the best bound available.

    Note: the code released with Balog et al. (2018) used :math:`2/\sqrt N` as the
    L1 sensitivity of the :math:`d`-dimensional feature mean (whose L2 sensitivity
    is :math:`2/N`). That is wrong: it does not depend on :math:`d`, and it is
    smaller than the valid :math:`2\sqrt d/N` whenever :math:`d > N`, in which case
    the Laplace noise is too small for the claimed :math:`\varepsilon`. (For
    :math:`d \le N` it happens to be a valid but loose bound.)

    Parameters
    ----------
    l2 : float
        L2 sensitivity, > 0.
    dim : int
        Dimension :math:`d \ge 1` of the released vector.

    Returns
    -------
    float
        :math:`\sqrt d\,\Delta_2`.

    Examples
    --------
    >>> from dpkme.privacy.calibration import l1_from_l2_sensitivity
    >>> l1_from_l2_sensitivity(0.002, 100)
    0.02
    """
    l2 = check_positive_float(l2, name="l2")
    dim = check_positive_int(dim, name="dim")
    return math.sqrt(dim) * l2


# --------------------------------------------------------------------------- samplers
def _check_rng(rng: object) -> np.random.Generator:
    if not isinstance(rng, np.random.Generator):
        raise ValueError(
            f"rng must be a numpy.random.Generator (e.g. numpy.random.default_rng(seed)), got {rng!r}."
        )
    return rng


def _check_shape(shape: int | Iterable[int]) -> tuple[int, ...]:
    if isinstance(shape, (numbers.Integral, np.integer)) and not isinstance(shape, (bool, np.bool_)):
        shape = (int(shape),)
    try:
        # an int became (int,) above (mypy does not narrow by numbers.Integral)
        dims = tuple(cast("Iterable[int]", shape))
    except TypeError:
        raise ValueError(f"shape must be an int or a tuple of ints, got {shape!r}.") from None
    for s in dims:
        if isinstance(s, (bool, np.bool_)) or not isinstance(s, (numbers.Integral, np.integer)) or s < 0:
            raise ValueError(f"shape must contain non-negative ints, got {shape!r}.")
    return tuple(int(s) for s in dims)


def gaussian_noise(shape: int | Iterable[int], *, sigma: float, rng: np.random.Generator) -> npt.NDArray[np.float64]:
    r"""Draw i.i.d. :math:`\mathcal N(0, \sigma^2)` noise (sampling only; no privacy accounting).

    Parameters
    ----------
    shape : int or tuple of int
        Shape of the noise array.
    sigma : float
        Standard deviation, >= 0 (0 returns zeros, for non-private references).
    rng : numpy.random.Generator
        Source of randomness; the global numpy state is never used.

    Returns
    -------
    ndarray
        float64 noise of shape ``shape``.
    """
    shape = _check_shape(shape)
    sigma = check_positive_float(sigma, name="sigma", allow_zero=True)
    rng = _check_rng(rng)
    return sigma * rng.standard_normal(shape)


def laplace_noise(shape: int | Iterable[int], *, scale: float, rng: np.random.Generator) -> npt.NDArray[np.float64]:
    r"""Draw i.i.d. :math:`\mathrm{Lap}(0, b)` noise, density :math:`e^{-|x|/b}/(2b)` (sampling only).

    Parameters
    ----------
    shape : int or tuple of int
        Shape of the noise array.
    scale : float
        :math:`b \ge 0` (0 returns zeros); :math:`b = \Delta_1/\varepsilon` for
        pure :math:`\varepsilon`-DP (:func:`calibrate_laplace`).
    rng : numpy.random.Generator
        Source of randomness; the global numpy state is never used.

    Returns
    -------
    ndarray
        float64 noise of shape ``shape``.
    """
    shape = _check_shape(shape)
    scale = check_positive_float(scale, name="scale", allow_zero=True)
    rng = _check_rng(rng)
    if scale == 0.0:
        return np.zeros(shape)
    return rng.laplace(0.0, scale, size=shape)


# --------------------------------------------------------------------------- OpenDP's sampler
def check_noise_source(noise: str, random_state: object = None) -> str:
    """Validate a release's ``noise`` option against its ``random_state``.

    ``noise`` must be one of :data:`NOISE_SOURCES`. OpenDP samples from its own
    cryptographically secure generator, which cannot be seeded, so
    ``noise="opendp"`` with an int ``random_state`` (a promise of replay) is a
    ValueError. ``None`` and a Generator (which then drives only the public
    randomness, e.g. the points drawn from q) are accepted.

    Parameters
    ----------
    noise : {"numpy", "opendp"}
        The release's noise sampler (see :func:`add_gaussian_noise`).
    random_state : None, int or numpy.random.Generator, optional
        The release's ``random_state``; only an int (a seed) conflicts with
        ``noise="opendp"``.

    Returns
    -------
    str
        ``noise``.

    Examples
    --------
    >>> from dpkme.privacy.calibration import check_noise_source
    >>> check_noise_source("opendp", None)
    'opendp'
    >>> check_noise_source("opendp", 0)
    Traceback (most recent call last):
    ...
    ValueError: noise='opendp' cannot be combined with random_state=0: ...
    """
    check_in(noise, NOISE_SOURCES, name="noise")
    if noise == "opendp" and isinstance(random_state, (numbers.Integral, np.integer)) \
            and not isinstance(random_state, (bool, np.bool_)):
        raise ValueError(
            f"noise='opendp' cannot be combined with random_state={int(random_state)}: OpenDP draws its noise from "
            "its own cryptographically secure generator, which cannot be seeded, so the release cannot be replayed. "
            "Use random_state=None for a real release with OpenDP noise, or noise='numpy' for a seeded teaching "
            "replay.")
    return noise


def _opendp() -> ModuleType:
    """``opendp.prelude`` with the ``contrib`` features enabled (OpenDP's switch for its vetted measurements)."""
    try:
        import opendp.prelude as dp
    except ImportError:  # pragma: no cover - opendp is pinned in requirements.txt
        raise ValueError("noise='opendp' needs the opendp package (pip install opendp==0.16.0, as pinned in "
                         "requirements.txt); or use noise='numpy'.") from None
    dp.enable_features("contrib")
    return dp


def add_gaussian_noise(value: npt.ArrayLike, *, sigma: float, rng: np.random.Generator | None = None,
                       noise: str = "numpy") -> npt.NDArray[np.float64]:
    r"""Release ``value`` + :math:`\mathcal N(0, \sigma^2 I)`: the one place a release's Gaussian noise is added.

    Privacy comes from the calibration of :math:`\sigma` (e.g.
    :func:`calibrate_gaussian`); this function only samples and adds.

    * ``noise="numpy"`` (default): ``value + sigma * rng.standard_normal(shape)``
      with the caller's :class:`numpy.random.Generator` (seedable, replayable).
      The guarantee assumes idealised floating-point numerics; numpy's sampler
      and the float64 addition are not hardened against the attacks of
      Mironov (CCS 2012).
    * ``noise="opendp"``: OpenDP 0.16's ``make_gaussian`` measurement on
      ``vector_domain(atom_domain(T=float, nan=False))`` with ``l2_distance``,
      given ``scale=sigma`` — exactly the float :math:`\sigma` our calibration
      computed (OpenDP's ``scale`` is the standard deviation). What OpenDP
      guarantees: each coordinate is ``value_j`` plus a sample of the discrete
      Gaussian of scale :math:`\sigma` on the lattice :math:`2^{k}\mathbb Z`
      with the finest float64 granularity :math:`k = -1074` (every float64 is on
      that lattice, so the shift is exact), drawn **exactly** by rejection
      sampling in exact arithmetic (Canonne, Kamath & Steinke 2020) from a
      cryptographically secure generator seeded by the operating system; the
      sum is rounded once to the nearest float. The released float is thus a
      post-processing of an exactly sampled value, which is what makes it
      resistant to floating-point attacks. OpenDP proves the measurement
      :math:`\rho`-zCDP with :math:`\rho = \Delta^2/(2\sigma^2)`, as for the
      continuous Gaussian; dpkme's :math:`(\varepsilon,\delta)` calibration
      is the continuous Gaussian's exact profile (Balle & Wang), which the
      discrete Gaussian matches up to its lattice step (Canonne, Kamath & Steinke 2020,
      Section 2: "essentially the same privacy"), here :math:`2^{-1074}`,
      immeasurably below :math:`\sigma`. Cost: about 0.5 s of one core
      per 10 000 coordinates (~19 000 draws/s, some 4 000 times numpy's; more on
      a loaded machine), measured by ``benchmarks/bench_opendp.py``
      (``benchmarks/results/opendp.md``). Cannot be seeded.

    Parameters
    ----------
    value : array-like of float
        The statistic to privatise (finite).
    sigma : float
        Standard deviation, >= 0 (0 returns a copy, for non-private references).
    rng : numpy.random.Generator, optional
        Required for ``noise="numpy"``; must be omitted for ``noise="opendp"``.
    noise : {"numpy", "opendp"}, default "numpy"
        The sampler (see above).

    Returns
    -------
    ndarray
        float64, same shape as ``value``.

    Examples
    --------
    >>> import numpy as np
    >>> from dpkme.privacy.calibration import add_gaussian_noise
    >>> rng = np.random.default_rng(0)                 # seeded: a teaching replay, not a private release
    >>> add_gaussian_noise([1.0, 2.0], sigma=0.0, rng=rng)
    array([1., 2.])
    >>> add_gaussian_noise(np.zeros((2, 3)), sigma=0.1, rng=rng).shape
    (2, 3)
    """
    check_in(noise, NOISE_SOURCES, name="noise")
    v = np.array(value, dtype=np.float64)
    if not np.isfinite(v).all():
        raise ValueError("the value to privatise contains NaN or infinite entries.")
    sigma = check_positive_float(sigma, name="sigma", allow_zero=True)
    if noise == "numpy":
        if rng is None:
            raise ValueError("noise='numpy' needs rng, a numpy.random.Generator (e.g. numpy.random.default_rng()).")
        return v + gaussian_noise(v.shape, sigma=sigma, rng=rng)
    if rng is not None:
        raise ValueError("noise='opendp' draws from OpenDP's own generator: pass rng=None, not both (the generator "
                         "would be ignored and the release cannot be replayed).")
    if sigma == 0.0 or v.size == 0:
        return v
    dp = _opendp()
    try:
        meas = dp.m.make_gaussian(dp.vector_domain(dp.atom_domain(T=float, nan=False)), dp.l2_distance(T=float),
                                  scale=sigma)
        out = meas(v.ravel().tolist())
    except Exception as exc:  # OpenDPException: report it as a ValueError naming sigma
        raise ValueError(f"OpenDP's Gaussian sampler refused sigma={sigma!r} on a vector of {v.size} entries: "
                         f"{exc}") from None
    return np.asarray(out, dtype=np.float64).reshape(v.shape)


def opendp_gaussian_noise(shape: int | Iterable[int], *, sigma: float) -> npt.NDArray[np.float64]:
    r"""Pure OpenDP noise :math:`\mathcal N(0,\sigma^2)` of a given shape (zeros privatised by
    :func:`add_gaussian_noise` with ``noise="opendp"``); for tests and benchmarks.

    Drawn exactly from OpenDP's discrete Gaussian on the float64 lattice with its
    own cryptographically secure generator (cannot be seeded); about 0.5 s per
    10 000 entries.

    Parameters
    ----------
    shape : int or tuple of int
        Shape of the noise array.
    sigma : float
        Standard deviation :math:`\sigma \ge 0` (0 returns zeros).

    Returns
    -------
    ndarray
        float64 noise of shape ``shape``.
    """
    return add_gaussian_noise(np.zeros(_check_shape(shape)), sigma=sigma, noise="opendp")
