r"""Power of the empirical audit: how likely it is to catch a mis-calibrated mechanism.

An audit (:func:`dpkme.audit.bounds.audit_scores`, ``selection="split"``) can
refute a false claim, never prove a true one. How much a passing audit is worth
depends on its **power**: the probability that it refutes the claim when the
mechanism is broken in a given way. This module computes it for the
sensitivity bug "the noise is calibrated to :math:`\Delta/c` instead of
:math:`\Delta`" (the noise is :math:`c` times too small; :math:`c=\sqrt2` by
default), on the audit's worst-case pair.

The computation (Rao-Blackwellised Monte Carlo)
-----------------------------------------------
The audit's scalar on :math:`D` and :math:`D'` is one-dimensional and,
after an affine change of units (which changes none of the audit's counts),

* ``"gaussian"``: :math:`s \sim \mathcal N(\mu, 1)` on :math:`D` and
  :math:`\mathcal N(0, 1)` on :math:`D'`, where :math:`\mu = c\,\mu_0` and
  :math:`\mu_0 = \Delta/\sigma(\varepsilon, \delta)` is the ratio the analytic
  calibration (:func:`dpkme.privacy.calibration.calibrate_gaussian`) gives the claimed
  :math:`(\varepsilon, \delta)`. This is exactly the scalar of the
  ``gaussian``, ``algorithm1``, ``algorithm2`` and ``gp`` audits, whose
  worst-case pairs attain the sensitivity;
* ``"laplace"``: :math:`s \sim \mathrm{Laplace}(c\,\varepsilon, 1)` versus
  :math:`\mathrm{Laplace}(0, 1)` -- a one-dimensional Laplace mechanism whose
  true ε is :math:`c\,\varepsilon` (not the 8-feature audit of
  :func:`~dpkme.audit.mechanisms.audit_laplace`, whose scalar is a sum).

With :math:`n` runs per dataset the audit uses the first
:math:`n_s = \operatorname{round}(f n)` of each (``selection_fraction``
:math:`f = 0.3`) to choose a threshold :math:`t` and one of four events
:math:`S` (:data:`~dpkme.audit.bounds.CANDIDATES`), and counts the other
:math:`n_e = n - n_s` runs: :math:`K_{\mathrm{num}} \sim \mathrm{Bin}(n_e, p)`
and :math:`K_{\mathrm{den}} \sim \mathrm{Bin}(n_e, q)`, **independent** of each
other and of the choice, with :math:`p = P_{\mathrm{num}}(S)` and
:math:`q = P_{\mathrm{den}}(S)` known in closed form (normal or Laplace tail
probabilities at :math:`t`). The claim is refuted when

.. math::
    \log\frac{\underline p(K_{\mathrm{num}}) - \delta}{\overline q(K_{\mathrm{den}})} > \varepsilon ,

with the one-sided Clopper-Pearson bounds at level :math:`\alpha/2` each.
:math:`\underline p` increases with :math:`K_{\mathrm{num}}`, so for each
:math:`k` this holds exactly when :math:`K_{\mathrm{num}} \ge
k_{\min}(k)`, and given the choice :math:`(t, S)` the probability of refuting
is the exact sum

.. math::
    \pi(t, S) = \sum_{k=0}^{n_e} \binom{n_e}{k} q^k (1-q)^{n_e-k}\,
    P\bigl[\mathrm{Bin}(n_e, p) \ge k_{\min}(k)\bigr]

(terms with binomial probability below :math:`10^{-13}` at either end are
dropped: an error below :math:`2\cdot10^{-13}`). Only the choice is random in a
way without a closed form (the best of up to 400 data-dependent thresholds):
it is **simulated** with the audit's own code path (the same threshold grid,
the same Clopper-Pearson tables, the same first-maximum rule) on
``replicates`` independent selection splits. The power is the average of
:math:`\pi(t, S)` over them, and its Monte-Carlo standard error is their
standard deviation over :math:`\sqrt{R}` -- much smaller than that of
simulating whole audits, because all the randomness of the evaluation runs is
summed exactly.

Scope. The power is that of the audit's main test, ":math:`\varepsilon_{\mathrm{lb}}`
at the claimed δ exceeds the claimed ε". The app and
:class:`~dpkme.audit.bounds.AuditResult` also report the *curve test*
(``curve_violation``), which can only add refutations, so the probability that
an audit reports some refutation is at least the power computed here.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np
from scipy.special import ndtr
from scipy.stats import binom

from .._validation import (
    check_delta,
    check_epsilon,
    check_in,
    check_positive_float,
    check_positive_int,
    check_random_state,
)
from ..privacy.calibration import calibrate_gaussian, gaussian_epsilon
from .bounds import _MAX_THRESHOLDS, _eps_table, clopper_pearson_lower, clopper_pearson_upper

__all__ = ["POWER_FAMILIES", "AuditPower", "audit_power", "runs_for_power"]

#: Mechanism families whose audit power can be computed.
POWER_FAMILIES = ("gaussian", "laplace")
#: The default ``factor``: power against noise √2 times too small (a mechanism whose true ε is about twice the claim).
DEFAULT_FACTOR = math.sqrt(2.0)
#: Runs per dataset accepted (the bounds of :func:`dpkme.audit.run_audit`).
_MIN_RUNS, _MAX_RUNS = 10, 1_000_000
# Selection splits simulated together (bounds the memory: batch x 2 n_s doubles).
_BATCH_VALUES = 4_000_000
# Binomial mass dropped at each end of the exact sum.
_TAIL = 1e-13


@dataclass(frozen=True)
class AuditPower:
    r"""The power of one audit setting (:func:`audit_power`).

    Returned by :func:`audit_power`; ``float(result)`` is ``power``.

    Parameters
    ----------
    power : float
        Probability that the audit refutes the claim (:math:`\varepsilon_{\mathrm{lb}}
        > \varepsilon`) for the mis-calibrated mechanism.
    standard_error : float
        Monte-Carlo standard error of ``power`` (over the simulated selection splits).
    runs : int
        Runs per dataset.
    mechanism : str
        ``"gaussian"`` or ``"laplace"``.
    epsilon, delta, alpha : float
        The claim and the audit's miss probability (confidence :math:`1-\alpha`).
    factor : float
        The bug: the noise is calibrated to sensitivity/``factor`` (1: a correct mechanism).
    true_epsilon : float
        The ε (at ``delta``) the mis-calibrated mechanism really has on the audited pair.
    mu : float or None
        Gaussian: sensitivity-to-noise ratio of the mis-calibrated pair (``factor`` x the claimed one);
        ``None`` for ``"laplace"``.
    replicates : int
        Simulated selection splits :math:`R` (the standard error shrinks as :math:`1/\sqrt R`).
    selection_fraction : float
        Share of the runs of each dataset used to choose the event (the rest certifies it).
    """

    power: float
    standard_error: float
    runs: int
    mechanism: str
    epsilon: float
    delta: float
    alpha: float
    factor: float
    true_epsilon: float
    mu: float | None
    replicates: int
    selection_fraction: float

    def __float__(self) -> float:
        return float(self.power)

    def summary(self) -> dict:
        """A flat, JSON-friendly row."""
        return {"mechanism": self.mechanism, "runs": self.runs, "power": self.power,
                "standard_error": self.standard_error, "epsilon": self.epsilon, "delta": self.delta,
                "alpha": self.alpha, "factor": self.factor, "true_epsilon": self.true_epsilon, "mu": self.mu,
                "replicates": self.replicates, "selection_fraction": self.selection_fraction}


# --------------------------------------------------------------------------- validation
def _check_setting(mechanism, epsilon, delta, alpha, factor, selection_fraction):
    check_in(mechanism, POWER_FAMILIES, name="mechanism")
    eps = check_epsilon(epsilon)
    dl = check_delta(delta) if mechanism == "gaussian" else check_delta(delta, allow_zero=True)
    a = check_positive_float(alpha, name="alpha")
    if not a < 1.0:
        raise ValueError(f"alpha must lie in (0, 1), got {alpha!r}.")
    c = check_positive_float(factor, name="factor")
    f = check_positive_float(selection_fraction, name="selection_fraction")
    if not f < 1.0:
        raise ValueError(f"selection_fraction must lie in (0, 1), got {selection_fraction!r}.")
    return eps, dl, a, c, f


def _split_sizes(runs: int, fraction: float) -> tuple[int, int]:
    k = int(round(fraction * runs))
    if k < 1 or k >= runs:
        raise ValueError(f"selection_fraction={fraction} leaves an empty part of {runs} runs.")
    return k, runs - k


# --------------------------------------------------------------------------- the scalar's law
def _shift_and_truth(mechanism: str, eps: float, dl: float, c: float) -> tuple[float, float, float | None]:
    """Location of the scalar on D (0 on D'), the true ε of the pair at δ, and μ (Gaussian)."""
    if mechanism == "gaussian":
        mu0 = 1.0 / calibrate_gaussian(epsilon=eps, delta=dl, sensitivity=1.0).sigma
        mu = c * mu0
        return mu, float(gaussian_epsilon(sigma=1.0, delta=dl, sensitivity=mu)), mu
    shift = c * eps
    return shift, _laplace_epsilon(shift, dl), None


def _laplace_epsilon(shift: float, dl: float) -> float:
    r"""ε(δ) of Laplace(shift, 1) vs Laplace(0, 1): smallest ε with :math:`\delta(\varepsilon) \le \delta`.

    The privacy loss :math:`L = |s| - |s - a|` lies in :math:`[-a, a]` and, for
    :math:`0 \le \varepsilon < a`, :math:`L > \varepsilon` iff :math:`s > t = (a + \varepsilon)/2`, so
    :math:`\delta(\varepsilon) = P_D[L > \varepsilon] - e^{\varepsilon} P_{D'}[L > \varepsilon]
    = \bar F(t - a) - e^{\varepsilon}\bar F(t)` (the other direction is the same by symmetry),
    inverted by bisection (returns the upper end: never an under-estimate).
    """
    a = shift
    if dl <= 0:
        return a

    def delta_of(e):
        t = 0.5 * (a + e)
        return _laplace_sf(t - a) - math.exp(e) * _laplace_sf(t)

    if delta_of(0.0) <= dl:
        return 0.0
    lo, hi = 0.0, a
    for _ in range(200):
        mid = 0.5 * (lo + hi)
        if delta_of(mid) > dl:
            lo = mid
        else:
            hi = mid
    return hi


def _laplace_sf(x):
    """P[Laplace(0, 1) > x], elementwise."""
    x = np.asarray(x, dtype=np.float64)
    out = np.where(x >= 0, 0.5 * np.exp(-np.abs(x)), 1.0 - 0.5 * np.exp(-np.abs(x)))
    return float(out) if out.ndim == 0 else out


def _sf(mechanism: str, x):
    """Survival function of the standardised noise."""
    return ndtr(-np.asarray(x, dtype=np.float64)) if mechanism == "gaussian" else _laplace_sf(x)


def _cdf(mechanism: str, x):
    return ndtr(np.asarray(x, dtype=np.float64)) if mechanism == "gaussian" else 1.0 - _laplace_sf(x)


def _noise(mechanism: str, rng: np.random.Generator, shape) -> np.ndarray:
    return rng.standard_normal(shape) if mechanism == "gaussian" else rng.laplace(size=shape)


# --------------------------------------------------------------------------- the audit's decision
def _cp_tables(n: int, alpha_each: float) -> tuple[np.ndarray, np.ndarray]:
    """Clopper-Pearson lower and upper bounds for k = 0..n (the values audit_scores computes)."""
    k = np.arange(n + 1, dtype=np.float64)
    nn = np.full_like(k, float(n))
    return (np.asarray(clopper_pearson_lower(k, nn, alpha_each)),
            np.asarray(clopper_pearson_upper(k, nn, alpha_each)))


def _sorted_quantiles(rows: np.ndarray, q: np.ndarray) -> np.ndarray:
    """``np.quantile(rows, q, axis=1).T`` for rows that are already sorted, without numpy's partition.

    The same arithmetic as numpy's default ``method="linear"`` (virtual index ``(n - 1) q``, and the
    two-sided interpolation ``a + (b - a) g``, or ``b - (b - a)(1 - g)`` when ``g >= 0.5``), so the
    thresholds are bit-for-bit those of the audit (checked against ``np.quantile`` in the tests).
    """
    n = rows.shape[1]
    v = (n - 1) * q
    prev = np.floor(v)
    nxt = prev + 1.0
    top = v >= n - 1
    prev[top], nxt[top] = -1.0, -1.0
    low = v < 0
    prev[low], nxt[low] = 0.0, 0.0
    gamma = v - prev
    a, b = rows[:, prev.astype(np.intp)], rows[:, nxt.astype(np.intp)]
    diff = b - a
    out = a + diff * gamma
    hi = gamma >= 0.5
    out[:, hi] = (b - diff * (1.0 - gamma))[:, hi]
    return out


def _select(sel_d: np.ndarray, sel_p: np.ndarray, lower: np.ndarray, upper: np.ndarray, dl: float):
    """The audit's choice on a batch of selection splits: thresholds (B,) and candidate indices (B,).

    ``sel_d``, ``sel_p``: (B, n_s) sorted rows. Mirrors ``audit_scores(selection="split")``: the
    candidate thresholds are the pooled values (few) or 400 pooled quantiles, every (threshold, event)
    is scored by the same Clopper-Pearson bound, and the first maximum of the flattened
    (threshold x event) table wins. Repeated thresholds (which ``np.unique`` would merge) give equal
    rows, so the first maximum picks the same threshold value and event either way.
    """
    B, n_s = sel_d.shape
    pooled = np.sort(np.concatenate([sel_d, sel_p], axis=1), axis=1)
    if pooled.shape[1] <= _MAX_THRESHOLDS:
        cand = pooled
    else:
        cand = _sorted_quantiles(pooled, np.linspace(0.0, 1.0, _MAX_THRESHOLDS))
    G = cand.shape[1]
    a0 = np.empty((B, G), dtype=np.intp)
    a1 = np.empty((B, G), dtype=np.intp)
    for r in range(B):
        a0[r] = n_s - np.searchsorted(sel_d[r], cand[r], side="right")
        a1[r] = n_s - np.searchsorted(sel_p[r], cand[r], side="right")
    b0, b1 = n_s - a0, n_s - a1
    # (numerator count, denominator count) per candidate, in the order of CANDIDATES
    num = np.stack([lower[a0], lower[a1], lower[b0], lower[b1]], axis=2)
    den = np.stack([upper[a1], upper[a0], upper[b1], upper[b0]], axis=2)
    table = _eps_table(num, den, dl).reshape(B, G * 4)
    flat = np.argmax(table, axis=1)
    i, j = np.divmod(flat, 4)
    return cand[np.arange(B), i], j


def _event_probabilities(mechanism: str, shift: float, t: np.ndarray, j: np.ndarray):
    """(p, q): probabilities of the chosen event under the numerator's and the denominator's law."""
    above_d, above_p = _sf(mechanism, t - shift), _sf(mechanism, t)
    below_d, below_p = _cdf(mechanism, t - shift), _cdf(mechanism, t)
    p = np.choose(j, [above_d, above_p, below_d, below_p])
    q = np.choose(j, [above_p, above_d, below_p, below_d])
    return np.clip(p, 0.0, 1.0), np.clip(q, 0.0, 1.0)


def _kmin(lower: np.ndarray, upper: np.ndarray, eps: float, dl: float) -> np.ndarray:
    """For each denominator count k: the smallest numerator count that refutes (n + 1 if none)."""
    n = lower.shape[0] - 1

    def refutes(kn, kd):
        kn_c = np.minimum(kn, n)
        return (kn <= n) & (_eps_table(lower[kn_c], upper[kd], dl) > eps)

    kd = np.arange(n + 1)
    with np.errstate(over="ignore"):
        need = dl + math.exp(eps) * upper if eps < 700 else np.full(upper.shape, np.inf)
    km = np.searchsorted(lower, need, side="right").astype(np.int64)
    # make the boundary exact under the audit's own formula (float rounding of log vs product)
    for _ in range(4):
        down = (km > 0) & refutes(np.maximum(km - 1, 0), kd)
        up = (km <= n) & ~refutes(km, kd)
        if not (down.any() or up.any()):
            break
        km = km - down + up
    return km


def _conditional_power(p: np.ndarray, q: np.ndarray, n_e: int, kmin: np.ndarray) -> np.ndarray:
    r""":math:`\sum_k \mathrm{Bin}(k; n_e, q)\,P[\mathrm{Bin}(n_e, p) \ge k_{\min}(k)]` for each (p, q)."""
    lo = np.maximum(binom.ppf(_TAIL, n_e, q), 0).astype(np.int64)
    hi = np.minimum(binom.isf(_TAIL, n_e, q), n_e).astype(np.int64)
    # only denominator counts that can refute contribute
    last = int(np.nonzero(kmin <= n_e)[0].max()) if (kmin <= n_e).any() else -1
    out = np.zeros(p.shape)
    if last < 0:
        return out
    hi = np.minimum(hi, last)
    width = int(max(1, (hi - lo).max() + 1)) if p.size else 1
    for s in range(0, p.shape[0], max(1, 2_000_000 // width)):
        sl = slice(s, s + max(1, 2_000_000 // width))
        k = lo[sl, None] + np.arange(width)[None, :]
        ok = k <= hi[sl, None]
        kc = np.minimum(k, n_e)
        w = np.where(ok, binom.pmf(kc, n_e, q[sl, None]), 0.0)
        km = kmin[kc]
        tail = np.where(km <= n_e, binom.sf(km - 1, n_e, p[sl, None]), 0.0)
        out[sl] = np.sum(w * tail, axis=1)
    return np.clip(out, 0.0, 1.0)


# --------------------------------------------------------------------------- public API
def audit_power(runs, *, mechanism: str = "gaussian", epsilon=2.0, delta=1e-2, alpha=0.05,
                factor=DEFAULT_FACTOR, selection_fraction=0.3, replicates: int = 1000,
                random_state=0) -> AuditPower:
    r"""Probability that an audit with ``runs`` runs per dataset refutes a mis-calibrated mechanism.

    The mechanism claims :math:`(\varepsilon, \delta)`-DP but calibrates its
    noise to sensitivity :math:`\Delta/c` (``factor`` :math:`c`; default
    :math:`\sqrt2`), so its noise is :math:`c` times too small. The audit is
    :func:`dpkme.audit.bounds.audit_scores` with ``selection="split"`` at
    confidence :math:`1-\alpha`, on the worst-case pair (the pair attains the
    sensitivity) with the sufficient scalar. The power is

    .. math::
        P\bigl[\varepsilon_{\mathrm{lb}} > \varepsilon\bigr]
        = \mathbb E_{(t,S)}\Bigl[\sum_{k}\mathrm{Bin}(k; n_e, q_{t,S})\,
          P\bigl[\mathrm{Bin}(n_e, p_{t,S}) \ge k_{\min}(k)\bigr]\Bigr],

    the inner sum exact (normal or Laplace tail probabilities :math:`p, q` of
    the chosen event :math:`S` at the chosen threshold :math:`t`), the outer
    expectation over the audit's choice on its selection split estimated from
    ``replicates`` simulated splits (the module docstring has the derivation).

    Assumptions: the runs are independent; the audited scalar is (an affine
    function of) :math:`\mathcal N(c\mu_0, 1)` versus :math:`\mathcal N(0, 1)`
    with :math:`\mu_0` the analytic calibration's sensitivity-to-noise ratio
    (``"gaussian"``: exactly the ``gaussian``, ``algorithm1``, ``algorithm2``
    and ``gp`` audits), or :math:`\mathrm{Laplace}(c\varepsilon, 1)` versus
    :math:`\mathrm{Laplace}(0, 1)` (``"laplace"``: a one-dimensional Laplace
    mechanism); the same number of runs on both datasets. ``factor=1`` gives
    the false-refutation probability of a correct mechanism, at most
    :math:`\alpha` by validity. Only the main test is covered: the curve test
    the app also shows can only add refutations.

    Parameters
    ----------
    runs : int
        Runs per dataset, 10 to 1 000 000.
    mechanism : {"gaussian", "laplace"}
        Law of the audited scalar (module docstring; default ``"gaussian"``).
    epsilon, delta : float
        The claimed guarantee (``delta`` in (0, 1) for ``"gaussian"``, [0, 1) for ``"laplace"``).
    alpha : float in (0, 1)
        The audit's miss probability (confidence :math:`1-\alpha`).
    factor : float > 0
        :math:`c`: the sensitivity the noise is calibrated to is the true one divided by :math:`c`.
    selection_fraction : float in (0, 1)
        The audit's selection share (0.3, as :func:`~dpkme.audit.run_audit`).
    replicates : int
        Simulated selection splits (at least 10); the standard error shrinks as
        :math:`1/\sqrt{\texttt{replicates}}`.
    random_state : int, Generator or None
        Seed of the simulated splits (the default 0 makes the result reproducible).

    Returns
    -------
    AuditPower
        ``power``, its Monte-Carlo ``standard_error``, the pair's ``true_epsilon`` and the setting.

    Raises
    ------
    ValueError
        Naming the first invalid argument.

    Examples
    --------
    The app's default audit (Gaussian mechanism, ε = 2, δ = 10⁻², 95 % confidence)
    against a factor-√2 sensitivity bug, at 2 000 and at 10 000 runs per dataset:

    >>> from dpkme.audit import audit_power
    >>> few = audit_power(2000, epsilon=2.0, delta=1e-2, alpha=0.05, replicates=200)
    >>> many = audit_power(10000, epsilon=2.0, delta=1e-2, alpha=0.05, replicates=200)
    >>> round(few.true_epsilon, 2)        # the buggy pair's real epsilon at delta = 1e-2
    3.19
    >>> 0.2 < few.power < 0.5 < 0.95 < many.power
    True
    >>> audit_power(2000, factor=1.0, replicates=200).power < 0.05   # a correct mechanism
    True
    """
    eps, dl, a, c, f = _check_setting(mechanism, epsilon, delta, alpha, factor, selection_fraction)
    n = check_positive_int(runs, name="runs", minimum=_MIN_RUNS, maximum=_MAX_RUNS)
    R = check_positive_int(replicates, name="replicates", minimum=10)
    rng, _ = check_random_state(random_state)
    n_s, n_e = _split_sizes(n, f)
    shift, true_eps, mu = _shift_and_truth(mechanism, eps, dl, c)

    sel_lower, sel_upper = _cp_tables(n_s, a / 2.0)
    ev_lower, ev_upper = _cp_tables(n_e, a / 2.0)
    kmin = _kmin(ev_lower, ev_upper, eps, dl)

    batch = max(1, _BATCH_VALUES // (2 * n_s))
    cond = np.empty(R)
    for s in range(0, R, batch):
        b = min(batch, R - s)
        sel_d = np.sort(_noise(mechanism, rng, (b, n_s)) + shift, axis=1)
        sel_p = np.sort(_noise(mechanism, rng, (b, n_s)), axis=1)
        t, j = _select(sel_d, sel_p, sel_lower, sel_upper, dl)
        p, q = _event_probabilities(mechanism, shift, t, j)
        cond[s:s + b] = _conditional_power(p, q, n_e, kmin)
    power = float(cond.mean())
    se = float(cond.std(ddof=1) / math.sqrt(R))
    return AuditPower(power=power, standard_error=se, runs=n, mechanism=mechanism, epsilon=eps, delta=dl,
                      alpha=a, factor=c, true_epsilon=true_eps, mu=mu, replicates=R, selection_fraction=f)


def runs_for_power(target=0.95, *, mechanism: str = "gaussian", epsilon=2.0, delta=1e-2, alpha=0.05,
                   factor=DEFAULT_FACTOR, selection_fraction=0.3, replicates: int = 1000, random_state=0,
                   start: int = 1000, max_runs: int = _MAX_RUNS, rtol: float = 0.02) -> int:
    r"""Smallest number of runs per dataset at which :func:`audit_power` reaches ``target``.

    Doubles from ``start`` until the power reaches ``target`` (halving first if
    ``start`` already does), then bisects between the last miss and the first
    hit until they are within ``rtol`` (relative) or 10 runs, and returns the
    upper end: a number of runs whose estimated power is at least ``target``,
    at most about ``rtol`` above the smallest such number. The power increases
    with the runs up to its Monte-Carlo error (every evaluation uses the same
    ``random_state``); near the answer that error (the ``standard_error`` of
    :func:`audit_power`) can move the result by a few per cent.

    Parameters
    ----------
    target : float in (0, 1)
        Power to reach (e.g. 0.9 or 0.95).
    mechanism, epsilon, delta, alpha, factor, selection_fraction, replicates, random_state
        As for :func:`audit_power`.
    start : int
        First number of runs tried.
    max_runs : int
        Give up above this (a ``ValueError``: the bug is not detectable with that many runs,
        e.g. ``factor <= 1``).
    rtol : float
        Relative resolution of the answer.

    Returns
    -------
    int
        Runs per dataset (at least 10) whose estimated power is at least ``target``.

    Examples
    --------
    >>> from dpkme.audit import audit_power, runs_for_power
    >>> n = runs_for_power(0.9, replicates=200)
    >>> 5000 < n < 10000
    True
    >>> audit_power(n, replicates=200).power >= 0.9
    True
    """
    tgt = check_positive_float(target, name="target")
    if not tgt < 1.0:
        raise ValueError(f"target must lie in (0, 1), got {target!r}.")
    _check_setting(mechanism, epsilon, delta, alpha, factor, selection_fraction)
    top = check_positive_int(max_runs, name="max_runs", minimum=_MIN_RUNS, maximum=_MAX_RUNS)
    lo_runs = check_positive_int(start, name="start", minimum=_MIN_RUNS, maximum=top)
    tol = check_positive_float(rtol, name="rtol")
    cache: dict[int, float] = {}

    def power(n: int) -> float:
        if n not in cache:
            cache[n] = audit_power(n, mechanism=mechanism, epsilon=epsilon, delta=delta, alpha=alpha,
                                   factor=factor, selection_fraction=selection_fraction, replicates=replicates,
                                   random_state=random_state).power
        return cache[n]

    n = lo_runs
    if power(n) >= tgt:
        hi = n
        while hi > _MIN_RUNS and power(max(_MIN_RUNS, hi // 2)) >= tgt:
            hi = max(_MIN_RUNS, hi // 2)
        if hi == _MIN_RUNS:
            return hi
        lo = max(_MIN_RUNS, hi // 2)
    else:
        lo = n
        hi = min(2 * n, top)
        while power(hi) < tgt:
            if hi >= top:
                raise ValueError(f"the power stays below target={tgt:g} up to max_runs={top} runs "
                                 f"(factor={factor!r}); a correct mechanism (factor <= 1) is never caught.")
            lo, hi = hi, min(2 * hi, top)
    while hi - lo > max(10, tol * hi):
        mid = (lo + hi) // 2
        if power(mid) >= tgt:
            hi = mid
        else:
            lo = mid
    return int(hi)
