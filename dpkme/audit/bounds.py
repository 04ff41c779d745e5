r"""Statistically valid lower bounds on ε from samples of a mechanism on two neighbouring datasets.

The test
--------
Let :math:`M` be claimed :math:`(\varepsilon,\delta)`-DP and :math:`D\sim D'`
neighbours. For **every** measurable set :math:`S` of outputs,

.. math::
    P[M(D)\in S] \le e^{\varepsilon}\,P[M(D')\in S] + \delta
    \quad\text{and}\quad
    P[M(D')\in S] \le e^{\varepsilon}\,P[M(D)\in S] + \delta ,

so any pair of probabilities :math:`(p, q) = (P[M(D)\in S], P[M(D')\in S])`
gives :math:`\varepsilon \ge \log\frac{p-\delta}{q}` (and symmetrically). The
auditor maps each output to a scalar :math:`s` (a good choice is the
log-likelihood ratio, or any monotone function of it), and uses the sets
:math:`S_t = \{s > t\}` and :math:`S_t^c = \{s \le t\}`: four inequalities per
threshold :math:`t`. :math:`p` and :math:`q` are unknown; from :math:`n_0` runs
on :math:`D` and :math:`n_1` runs on :math:`D'` (independent, identically
distributed) with counts :math:`k_0, k_1` in :math:`S`, one-sided
Clopper-Pearson bounds give, each with probability at least :math:`1-\alpha/2`,
:math:`p \ge \underline p(k_0, n_0)` and :math:`q \le \overline q(k_1, n_1)`. With
probability at least :math:`1-\alpha` both hold, and then

.. math::
    \varepsilon_{\mathrm{lb}} = \log\frac{\underline p - \delta}{\overline q}
    \le \varepsilon_{\text{true}} \qquad(\text{set to 0 if } \underline p \le \delta).

This is the construction of Jagielski, Ullman & Oprea (2020) and Nasr et al.
(2021), with the Clopper-Pearson intervals on both error rates.

Choosing the threshold without invalidating the bound
------------------------------------------------------
The bound above is valid for a set :math:`S` fixed **before** the counts are
seen. Two ways are offered (``selection``):

``"split"`` (default)
    The runs are split; on the first part (``selection_fraction`` of each
    sample, 30 % by default) every candidate (threshold x direction x complement) is scored by the
    same bound, and only the best one is evaluated on the second part. The
    selection is independent of the evaluation counts, so the guarantee holds
    with probability :math:`1-\alpha`.
``"bonferroni"``
    A *fixed* grid of thresholds (``thresholds``, chosen without looking at
    the runs) and all runs; each of the :math:`4G` candidates uses the
    confidence :math:`1-\alpha/(4G)`, so that with probability :math:`1-\alpha`
    all of them hold simultaneously (union bound) and the maximum is valid.

The result is a lower bound on the ε **of this pair**, which is at most the
mechanism's ε: if the audit reports :math:`\varepsilon_{\mathrm{lb}} >
\varepsilon_{\text{claimed}}`, the claim is false with confidence
:math:`1-\alpha`; if not, nothing is proven (an audit can never prove privacy).

References
----------
M. Jagielski, J. Ullman, A. Oprea. Auditing differentially private machine
learning: how private is private SGD? NeurIPS 2020.

M. Nasr, S. Song, A. Thakurta, N. Papernot, N. Carlini. Adversary instantiation:
lower bounds for differentially private machine learning. IEEE S&P 2021.

C. J. Clopper, E. S. Pearson. The use of confidence or fiducial limits
illustrated in the case of the binomial. Biometrika 1934.
"""

from __future__ import annotations

import math
import warnings
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

import numpy as np
from scipy.special import betaln
from scipy.stats import beta as _beta

from .._validation import check_array, check_delta, check_epsilon, check_in, check_positive_float

__all__ = [
    "SELECTIONS",
    "clopper_pearson_upper",
    "clopper_pearson_lower",
    "epsilon_lower_bound",
    "PrivacyLossHistogram",
    "AnalyticCurve",
    "AuditResult",
    "audit_scores",
    "gaussian_curve",
    "pure_dp_curve",
    "curve_from_delta_function",
    "DEFAULT_DELTA_GRID",
]

SELECTIONS = ("split", "bonferroni")
#: δ values at which the audited lower bound and the analytic curves are tabulated.
DEFAULT_DELTA_GRID = np.logspace(-8, np.log10(0.5), 40)
# Largest number of candidate thresholds tried on the selection split.
_MAX_THRESHOLDS = 400


# --------------------------------------------------------------------------- Clopper-Pearson
def _check_alpha(alpha) -> float:
    a = check_positive_float(alpha, name="alpha")
    if not a < 1.0:
        raise ValueError(f"alpha must lie in (0, 1), got {alpha!r}.")
    return a


def _counts(k, n) -> tuple[np.ndarray, np.ndarray]:
    k = np.asarray(k, dtype=np.float64)
    n = np.asarray(n, dtype=np.float64)
    if not (np.all(np.isfinite(k)) and np.all(np.isfinite(n))):
        raise ValueError("counts must be finite.")
    if np.any(n < 1) or np.any(k < 0) or np.any(k > n) or np.any(k != np.round(k)) or np.any(n != np.round(n)):
        raise ValueError(f"need integer counts 0 <= k <= n with n >= 1, got k={k!r}, n={n!r}.")
    return np.broadcast_arrays(k, n)


def clopper_pearson_upper(k, n, alpha):
    r"""One-sided Clopper-Pearson upper bound :math:`\overline p`: :math:`P[p \le \overline p] \ge 1-\alpha`.

    For :math:`k\sim\mathrm{Bin}(n,p)`.

    :math:`\overline p` is the :math:`1-\alpha` quantile of
    :math:`\mathrm{Beta}(k+1, n-k)` (1 when :math:`k=n`). Exact (conservative),
    vectorised over ``k`` and ``n``.

    Parameters
    ----------
    k : int or array-like of int
        Number of successes, :math:`0 \le k \le n` (integer-valued floats are accepted).
    n : int or array-like of int
        Number of trials, :math:`n \ge 1`; broadcast against ``k``.
    alpha : float in (0, 1)
        Miss probability of the one-sided bound (confidence :math:`1-\alpha`).

    Returns
    -------
    float or ndarray
        :math:`\overline p` in :math:`[0, 1]`: a float for scalar ``k`` and ``n``, else an array of their
        broadcast shape.

    Examples
    --------
    No success in 100 trials: :math:`\overline p = 1 - \alpha^{1/n}`.

    >>> from dpkme.audit import clopper_pearson_upper
    >>> round(clopper_pearson_upper(0, 100, 0.05), 4)
    0.0295
    """
    a = _check_alpha(alpha)
    k, n = _counts(k, n)
    out = np.ones(k.shape)
    m = k < n
    # the 1 - alpha quantile of Beta(k+1, n-k) is 1 - (the alpha quantile of Beta(n-k, k+1))
    out[m] = 1.0 - _beta_low_quantile(a, n[m] - k[m], k[m] + 1.0)
    return float(out) if out.ndim == 0 else out


def clopper_pearson_lower(k, n, alpha):
    r"""One-sided Clopper-Pearson lower bound: :math:`P[p \ge \underline p] \ge 1-\alpha`.

    For :math:`k\sim\mathrm{Bin}(n,p)`, :math:`\underline p` is the :math:`\alpha` quantile of
    :math:`\mathrm{Beta}(k, n-k+1)` (0 when :math:`k=0`). Exact (conservative), vectorised over ``k``
    and ``n``; by symmetry :math:`\underline p(k, n) = 1 - \overline p(n-k, n)`.

    Parameters
    ----------
    k : int or array-like of int
        Number of successes, :math:`0 \le k \le n` (integer-valued floats are accepted).
    n : int or array-like of int
        Number of trials, :math:`n \ge 1`; broadcast against ``k``.
    alpha : float in (0, 1)
        Miss probability of the one-sided bound (confidence :math:`1-\alpha`).

    Returns
    -------
    float or ndarray
        :math:`\underline p` in :math:`[0, 1]`: a float for scalar ``k`` and ``n``, else an array of their
        broadcast shape.

    Examples
    --------
    >>> from dpkme.audit import clopper_pearson_lower, clopper_pearson_upper
    >>> round(clopper_pearson_lower(50, 100, 0.05), 4), round(clopper_pearson_upper(50, 100, 0.05), 4)
    (0.4136, 0.5864)
    """
    a = _check_alpha(alpha)
    k, n = _counts(k, n)
    out = np.zeros(k.shape)
    m = k > 0
    out[m] = _beta_low_quantile(a, k[m], n[m] - k[m] + 1.0)
    return float(out) if out.ndim == 0 else out


def _beta_low_quantile(alpha: float, a: np.ndarray, b: np.ndarray) -> np.ndarray:
    r"""A value :math:`x \le` the ``alpha`` quantile of :math:`\mathrm{Beta}(a, b)` (:math:`b \ge 1`), as close as
    scipy can make it.

    scipy's quantile is used where its CDF confirms :math:`I_x(a,b) \le \alpha`. For extreme ``alpha``
    (e.g. :math:`10^{-257}`) its root finder can give up and return a value far *above* the quantile
    (which would make a lower confidence bound invalid); there the closed form
    :math:`x = (\alpha\, a\, B(a,b))^{1/a}` is used, since
    :math:`I_x(a,b) \le x^a/(a B(a,b))` for :math:`b \ge 1`: always below the quantile, i.e. conservative.
    """
    a = np.asarray(a, dtype=float)
    b = np.asarray(b, dtype=float)
    with np.errstate(all="ignore"), warnings.catch_warnings():
        warnings.simplefilter("ignore")
        q = np.asarray(_beta.ppf(alpha, a, b), dtype=float)
        ok = np.isfinite(q) & (np.asarray(_beta.cdf(q, a, b)) <= alpha * (1.0 + 1e-9))
    if not ok.all():
        bad = ~ok
        q = q.copy()
        q[bad] = np.exp((math.log(alpha) + np.log(a[bad]) + betaln(a[bad], b[bad])) / a[bad])
    return np.clip(q, 0.0, 1.0)


def epsilon_lower_bound(k_num, n_num, k_den, n_den, *, delta=0.0, alpha=0.05) -> float:
    r""":math:`\max\bigl(0, \log\frac{\underline p - \delta}{\overline q}\bigr)` for one fixed event.

    ``k_num`` of ``n_num`` runs on the first dataset fell in the event,
    ``k_den`` of ``n_den`` on the second; each Clopper-Pearson bound at
    confidence :math:`1-\alpha/2`, so the result is a lower bound on the ε of
    that pair (at that δ) with probability at least :math:`1-\alpha`. Valid only
    for an event fixed before the counts were seen (:func:`audit_scores` chooses
    it on a separate split).

    Parameters
    ----------
    k_num, n_num : int
        Count of runs in the event and number of runs on the numerator dataset
        (:math:`0 \le k_{\mathrm{num}} \le n_{\mathrm{num}}`, :math:`n_{\mathrm{num}} \ge 1`).
    k_den, n_den : int
        The same on the denominator dataset.
    delta : float in [0, 1)
        The claimed δ subtracted from :math:`\underline p` (0, the default, for pure DP).
    alpha : float in (0, 1)
        Total miss probability of the bound (default 0.05); each Clopper-Pearson bound
        uses :math:`\alpha/2`.

    Returns
    -------
    float
        :math:`\varepsilon_{\mathrm{lb}} \ge 0` (natural log units); 0 when
        :math:`\underline p - \delta \le \overline q`.

    Examples
    --------
    900 of 1 000 runs on :math:`D` and 100 of 1 000 on :math:`D'` fell in the event (point
    estimate :math:`\log 9 \approx 2.20`):

    >>> from dpkme.audit import epsilon_lower_bound
    >>> round(epsilon_lower_bound(900, 1000, 100, 1000, alpha=0.05), 2)
    1.99
    """
    d = check_delta(delta, allow_zero=True)
    a = _check_alpha(alpha)
    p = clopper_pearson_lower(k_num, n_num, a / 2.0)
    q = clopper_pearson_upper(k_den, n_den, a / 2.0)
    return float(math.log((p - d) / q)) if p - d > q else 0.0


# --------------------------------------------------------------------------- candidates
def _region_counts(sorted_d: np.ndarray, sorted_p: np.ndarray, thresholds: np.ndarray):
    """Counts of s > t for every threshold (samples sorted ascending)."""
    above_d = sorted_d.shape[0] - np.searchsorted(sorted_d, thresholds, side="right")
    above_p = sorted_p.shape[0] - np.searchsorted(sorted_p, thresholds, side="right")
    return above_d.astype(np.float64), above_p.astype(np.float64)


#: The four events tried at each threshold: (region, which dataset is in the numerator).
CANDIDATES = (
    ("s > t", "D"),    # P_D(s > t)  <= e^eps P_D'(s > t) + delta
    ("s > t", "D'"),   # P_D'(s > t) <= e^eps P_D(s > t)  + delta
    ("s <= t", "D"),
    ("s <= t", "D'"),
)


def _rate_tables(sd, sp, thresholds, alpha_each, *, point: bool = False):
    """Numerator lower bounds and denominator upper bounds of every (threshold, candidate): two (G, 4) arrays.

    ``alpha_each`` is the miss probability of *each* one-sided bound. With
    ``point=True`` the plain empirical frequencies are returned instead (no bound).
    The bounds do not depend on δ, so one pair of tables serves every δ.
    """
    n0, n1 = float(sd.shape[0]), float(sp.shape[0])
    a0, a1 = _region_counts(sd, sp, thresholds)
    b0, b1 = n0 - a0, n1 - a1  # counts of s <= t
    # (k_num, n_num, k_den, n_den) per candidate, in the order of CANDIDATES
    spec = ((a0, n0, a1, n1), (a1, n1, a0, n0), (b0, n0, b1, n1), (b1, n1, b0, n0))
    num_all = np.empty((thresholds.shape[0], 4))
    den_all = np.empty_like(num_all)
    for j, (kn, nn, kd, nd) in enumerate(spec):
        if point:
            num_all[:, j], den_all[:, j] = kn / nn, kd / nd
        else:
            num_all[:, j] = clopper_pearson_lower(kn, np.full_like(kn, nn), alpha_each)
            den_all[:, j] = clopper_pearson_upper(kd, np.full_like(kd, nd), alpha_each)
    return num_all, den_all


def _eps_table(num: np.ndarray, den: np.ndarray, delta: float) -> np.ndarray:
    """log((num - delta) / den) where positive, else 0."""
    with np.errstate(divide="ignore", invalid="ignore"):
        val = np.log((num - delta) / den)
    return np.where(num - delta > den, val, 0.0)


def _threshold_grid(sd: np.ndarray, sp: np.ndarray) -> np.ndarray:
    """Candidate thresholds: every distinct pooled value (few) or pooled quantiles (many)."""
    pooled = np.concatenate([sd, sp])
    uniq = np.unique(pooled)
    if uniq.shape[0] <= _MAX_THRESHOLDS:
        return uniq
    return np.unique(np.quantile(pooled, np.linspace(0.0, 1.0, _MAX_THRESHOLDS)))


# --------------------------------------------------------------------------- results
@dataclass
class PrivacyLossHistogram:
    r"""Empirical privacy-loss distribution of the scalar, for plots.

    Built by :func:`privacy_loss_histogram` (as :attr:`AuditResult.privacy_loss`).

    Parameters
    ----------
    loss_d, loss_neighbour : ndarray of shape (n,), (n',)
        Privacy-loss values :math:`L = \log\frac{p_D(s)}{p_{D'}(s)}` of the scalar
        :math:`s` of each run on :math:`D` and on :math:`D'` (natural log units):
        exact (the mechanism's known density of the scalar) when ``exact`` is True,
        otherwise estimated by binning the pooled scores (add-½ smoothing).
    edges : ndarray of shape (B + 1,)
        Common bin edges of the two histograms (60 bins by default), increasing.
    counts_d, counts_neighbour : ndarray of int, shape (B,)
        Number of runs on :math:`D` and on :math:`D'` whose loss falls in each bin
        (values outside the edges are clipped into the end bins).
    exact : bool
        Whether the losses are exact (True) or binned estimates (False).
    analytic_mean, analytic_std : float or None
        Mean :math:`\mu^2/2` and standard deviation :math:`|\mu|` of the Gaussian
        privacy-loss distribution :math:`\mathcal N(\mu^2/2, \mu^2)` on :math:`D` of
        Gaussian mechanisms with sensitivity-to-noise ratio :math:`\mu` (``None``
        otherwise, the default).
    """

    loss_d: np.ndarray
    loss_neighbour: np.ndarray
    edges: np.ndarray
    counts_d: np.ndarray
    counts_neighbour: np.ndarray
    exact: bool
    analytic_mean: float | None = None
    analytic_std: float | None = None

    def empirical_delta(self, epsilons) -> np.ndarray:
        r"""Plug-in estimate of :math:`\delta(\varepsilon) = \mathbb E_D[(1 - e^{\varepsilon - L})_+]` (not a bound)."""
        eps = np.atleast_1d(np.asarray(epsilons, dtype=np.float64))
        L = self.loss_d
        if L.size == 0:
            return np.zeros_like(eps)
        with np.errstate(over="ignore"):
            vals = np.maximum(0.0, 1.0 - np.exp(eps[:, None] - L[None, :]))
        return vals.mean(axis=1)


@dataclass
class AnalyticCurve:
    r"""Exact privacy curves :math:`\varepsilon(\delta)`, tabulated on ``deltas``.

    Built by :func:`gaussian_curve` or from :func:`pure_dp_curve` /
    :func:`curve_from_delta_function` by the audits of :mod:`dpkme.audit.mechanisms`.

    Parameters
    ----------
    deltas : ndarray of shape (G,)
        The δ grid, in (0, 1) and increasing (usually :data:`DEFAULT_DELTA_GRID`).
    epsilon_pair : ndarray of shape (G,)
        ε(δ) of the mechanism on the audited pair: what a perfect auditor with
        infinitely many runs of the **full output** could reach. ``NaN`` where not
        available, ``inf`` where no finite ε holds.
    epsilon_claimed : ndarray of shape (G,)
        ε(δ) the mechanism claims (its calibration's worst case over all pairs;
        for pure ε-DP the curve ε-DP implies). ``NaN`` where not available.
    label : str
        Name of the mechanism for plot legends (default ``""``).
    """

    deltas: np.ndarray
    epsilon_pair: np.ndarray
    epsilon_claimed: np.ndarray
    label: str = ""

    def pair_epsilon_at(self, delta: float) -> float:
        """ε of the pair at ``delta`` (interpolated on the log-δ grid)."""
        return float(np.interp(math.log(delta), np.log(self.deltas), self.epsilon_pair))


def gaussian_curve(mu_pair: float, mu_claimed: float | None, deltas=None, *, label: str = "") -> AnalyticCurve:
    r"""Exact :math:`\varepsilon(\delta)` of Gaussian mechanisms with sensitivity-to-noise ratios ``mu_pair``,
    ``mu_claimed``.

    :math:`f(D) + \mathcal N(0,\sigma^2 I)` on a pair with
    :math:`\|f(D)-f(D')\| = \mu\sigma` has Balle & Wang's curve
    (:func:`dpkme.privacy.calibration.gaussian_epsilon` at unit noise).

    Parameters
    ----------
    mu_pair : float
        :math:`\mu = \|f(D)-f(D')\|/\sigma` of the audited pair (0 or less: a zero curve).
    mu_claimed : float or None
        :math:`\Delta/\sigma` of the claim (the sensitivity the noise was calibrated to over
        its standard deviation); ``None``: no claimed curve (``NaN``).
    deltas : array-like of shape (G,), optional
        δ values in (0, 1) (default :data:`DEFAULT_DELTA_GRID`).
    label : str
        Stored as :attr:`AnalyticCurve.label` (default ``""``).

    Returns
    -------
    AnalyticCurve
        ``epsilon_pair`` and ``epsilon_claimed`` tabulated on ``deltas``.

    Examples
    --------
    At :math:`\mu = 1` (a pair that attains the sensitivity) both curves coincide:

    >>> from dpkme.audit import gaussian_curve
    >>> c = gaussian_curve(1.0, 1.0, deltas=[1e-5, 1e-2])
    >>> c.epsilon_pair.round(2), bool((c.epsilon_pair == c.epsilon_claimed).all())
    (array([4.38, 2.32]), True)
    """
    from ..privacy.calibration import gaussian_epsilon

    grid = DEFAULT_DELTA_GRID if deltas is None else np.asarray(deltas, dtype=np.float64)

    def curve(mu):
        if mu is None or not mu > 0:
            return np.full(grid.shape, np.nan if mu is None else 0.0)
        return np.array([gaussian_epsilon(sigma=1.0, delta=float(d), sensitivity=float(mu)) for d in grid])

    return AnalyticCurve(grid, curve(mu_pair), curve(mu_claimed), label)


def pure_dp_curve(epsilon: float, deltas=None) -> np.ndarray:
    r"""Worst-case :math:`\varepsilon(\delta)` of a pure ε-DP mechanism (binary randomized response).

    Every ε-DP pair is a post-processing of randomized response with
    :math:`p = e^\varepsilon/(1+e^\varepsilon)` (Kairouz, Oh & Viswanath 2015),
    whose curve is :math:`\delta(\varepsilon') = (e^\varepsilon - e^{\varepsilon'})/(1+e^\varepsilon)`,
    i.e. :math:`\varepsilon'(\delta) = \log(e^\varepsilon - \delta(1+e^\varepsilon))`, clipped at 0
    (0 for :math:`\delta \ge (e^\varepsilon-1)/(e^\varepsilon+1)`).

    Parameters
    ----------
    epsilon : float
        The pure-DP ε of the mechanism (:math:`\ge 0`).
    deltas : array-like of shape (G,), optional
        δ values in [0, 1) (default :data:`DEFAULT_DELTA_GRID`).

    Returns
    -------
    ndarray of shape (G,)
        :math:`\varepsilon'(\delta) \ge 0` for each δ (``epsilon`` itself at :math:`\delta = 0`).

    Examples
    --------
    >>> from dpkme.audit import pure_dp_curve
    >>> pure_dp_curve(1.0, deltas=[0.0, 0.1, 0.8]).round(3)
    array([1.   , 0.853, 0.   ])
    """
    grid = DEFAULT_DELTA_GRID if deltas is None else np.asarray(deltas, dtype=np.float64)
    e = math.exp(epsilon) if epsilon < 700 else math.inf
    with np.errstate(divide="ignore", invalid="ignore"):
        val = np.log(np.maximum(e - grid * (1.0 + e), 0.0)) if math.isfinite(e) else np.full(grid.shape, epsilon)
    return np.maximum(np.nan_to_num(val, nan=0.0, neginf=0.0), 0.0)


def curve_from_delta_function(delta_of_eps: Callable[[np.ndarray], np.ndarray], deltas=None,
                              eps_max: float = 50.0) -> np.ndarray:
    r"""Invert a decreasing :math:`\delta(\varepsilon)` on a fine ε grid: :math:`\varepsilon(\delta)` per δ.

    The grid has steps of 0.005 on :math:`[0, 10]` and 0.05 on :math:`[10, \varepsilon_{\max}]`; the
    values of ``delta_of_eps`` are made non-increasing (running minimum) against rounding.

    Parameters
    ----------
    delta_of_eps : callable
        ``delta_of_eps(eps) -> deltas``: the privacy profile :math:`\delta(\varepsilon)`, vectorised over a
        1-D array of ε values, non-increasing in ε.
    deltas : array-like of shape (G,), optional
        δ values at which to invert (default :data:`DEFAULT_DELTA_GRID`).
    eps_max : float
        Largest ε of the grid (default 50).

    Returns
    -------
    ndarray of shape (G,)
        For each δ, the smallest grid ε with :math:`\delta(\varepsilon) \le \delta` (rounded up to
        the grid: a slight over-estimate, never an under-estimate); ``inf`` if none up to ``eps_max``.

    Examples
    --------
    :math:`\delta(\varepsilon) = e^{-\varepsilon}` inverts to :math:`\varepsilon(\delta) = -\log\delta`:

    >>> import numpy as np
    >>> from dpkme.audit import curve_from_delta_function
    >>> curve_from_delta_function(lambda e: np.exp(-e), deltas=[0.5, 0.1])
    array([0.695, 2.305])
    """
    grid = DEFAULT_DELTA_GRID if deltas is None else np.asarray(deltas, dtype=np.float64)
    eps = np.concatenate([np.linspace(0.0, 10.0, 2001), np.linspace(10.0, eps_max, 801)[1:]])
    dv = np.asarray(delta_of_eps(eps), dtype=np.float64)
    dv = np.minimum.accumulate(dv)  # enforce monotone decrease against rounding
    out = np.empty(grid.shape)
    for i, d in enumerate(grid):
        ok = np.nonzero(dv <= d)[0]
        out[i] = eps[ok[0]] if ok.size else math.inf
    return out


@dataclass
class AuditResult:
    r"""One empirical privacy audit: runs on two neighbouring datasets and a lower bound on ε.

    Returned by :func:`audit_scores` and every ``audit_*`` function of
    :mod:`dpkme.audit.mechanisms`; not meant to be built by hand.

    Parameters
    ----------
    mechanism, variant : str
        What was audited (``variant`` names deliberate mis-calibrations, e.g.
        ``"half-noise"``; ``"correct"`` for the library's mechanism).
    claimed_epsilon, claimed_delta : float
        The guarantee the mechanism claims.
    epsilon_lower_bound : float
        :math:`\varepsilon_{\mathrm{lb}}` at ``claimed_delta``: with probability
        at least :math:`1-\alpha` the mechanism is **not**
        :math:`(\varepsilon,\delta)`-DP for any :math:`\varepsilon <
        \varepsilon_{\mathrm{lb}}`.
    alpha : float
        Total miss probability of the bound.
    runs, runs_neighbour : int
        Runs on :math:`D` and on :math:`D'` (all of them: selection and evaluation).
    selection : {"split", "bonferroni"}
        How the event was chosen (module docstring).
    threshold, region, numerator : float, str, str
        The event :math:`S` used (``region`` ``"s > t"`` or ``"s <= t"``), and
        which dataset's probability is in the numerator (``"D"`` or ``"D'"``).
    p_lower, q_upper : float
        Clopper-Pearson bounds :math:`\underline p` (numerator dataset) and
        :math:`\overline q` (denominator dataset) of the probability of :math:`S`,
        from the evaluation runs.
    p_hat, q_hat : float
        Empirical frequencies of :math:`S` on all runs (numerator dataset first).
    epsilon_point : float
        :math:`\log\frac{\hat p - \delta}{\hat q}` for the same event on all runs
        (an estimate, **not** a bound; ``inf`` if :math:`\hat q = 0`).
    scores, scores_neighbour : ndarray
        The scalar of every run on :math:`D` and :math:`D'`.
    lower_bounds : dict
        ``{"deltas": array, "epsilons": array}``: the same audit at other δ
        (each pointwise valid at :math:`1-\alpha`).
    curve_margin, curve_delta : float or None
        The **curve test**: the largest :math:`\varepsilon_{\mathrm{lb}}(\delta') -
        \varepsilon_{\text{claimed}}(\delta')` over the tabulated δ' (each bound at
        :math:`1-\alpha/G`, so all G hold together with probability
        :math:`1-\alpha`), and the δ' where it occurs. The claimed curve is the
        one the privacy accountants assume (the Gaussian calibration's exact
        curve; for pure ε-DP the randomized-response curve that ε-DP implies).
        A positive margin refutes it. ``None`` without an analytic claim.
    analytic : AnalyticCurve or None
        Exact curves (pair and claimed) when known.
    pair_epsilon : float or None
        Exact ε of the pair at ``claimed_delta`` (the best any auditor of the
        full output could reach), when known.
    privacy_loss : PrivacyLossHistogram
        Privacy-loss values of the runs and their histograms, for plots (exact when
        the scalar's density is known).
    neighbouring : {"replace-one", "add-remove"}
        The neighbouring relation of the claim and of the pair (default ``"replace-one"``).
    neighbours : dict
        Description of :math:`D` and :math:`D'` (sizes, the replaced row, ...).
    scalar : str
        What each run was reduced to (e.g. ``"release projected on f(D) - f(D')"``).
    seconds : float
        Wall-clock time of the audit (runs and bound), in seconds.
    params : dict
        Settings and derived quantities of the audited mechanism (noise scale,
        sensitivities, sizes), JSON-friendly.

    Attributes
    ----------
    passed : bool
        No violation found: :math:`\varepsilon_{\mathrm{lb}} \le \varepsilon_{\text{claimed}}`.
    violation : bool
        ``not passed``: the claim is refuted at confidence :math:`1-\alpha`.
    curve_violation : bool
        The curve test refutes the claimed privacy curve (``curve_margin > 0``).
    """

    mechanism: str
    variant: str
    claimed_epsilon: float
    claimed_delta: float
    epsilon_lower_bound: float
    alpha: float
    runs: int
    runs_neighbour: int
    selection: str
    threshold: float
    region: str
    numerator: str
    p_lower: float
    q_upper: float
    p_hat: float
    q_hat: float
    epsilon_point: float
    scores: np.ndarray
    scores_neighbour: np.ndarray
    lower_bounds: dict
    privacy_loss: PrivacyLossHistogram
    analytic: AnalyticCurve | None = None
    pair_epsilon: float | None = None
    curve_margin: float | None = None
    curve_delta: float | None = None
    neighbouring: str = "replace-one"
    neighbours: dict = field(default_factory=dict)
    scalar: str = ""
    seconds: float = 0.0
    params: dict = field(default_factory=dict)

    @property
    def passed(self) -> bool:
        """No violation found: :math:`\\varepsilon_{\\mathrm{lb}} \\le \\varepsilon_{\\text{claimed}}`."""
        return bool(self.epsilon_lower_bound <= self.claimed_epsilon)

    @property
    def violation(self) -> bool:
        """True when the claim is refuted at confidence :math:`1-\\alpha`."""
        return not self.passed

    @property
    def curve_violation(self) -> bool:
        """True when the curve test refutes the claimed privacy curve (``curve_margin > 0``)."""
        return self.curve_margin is not None and self.curve_margin > 0

    def summary(self) -> dict[str, Any]:
        """A flat, JSON-friendly row (for tables)."""
        return {
            "mechanism": self.mechanism, "variant": self.variant, "neighbouring": self.neighbouring,
            "claimed_epsilon": self.claimed_epsilon, "claimed_delta": self.claimed_delta,
            "epsilon_lower_bound": self.epsilon_lower_bound, "pair_epsilon": self.pair_epsilon,
            "epsilon_point": self.epsilon_point, "runs": self.runs, "alpha": self.alpha,
            "selection": self.selection, "passed": self.passed, "curve_margin": self.curve_margin,
            "curve_delta": self.curve_delta, "curve_violation": self.curve_violation, "seconds": self.seconds,
            "scalar": self.scalar,
        }


# --------------------------------------------------------------------------- privacy loss
def _histogram(loss_d, loss_p, bins: int = 60):
    both = np.concatenate([loss_d, loss_p])
    finite = both[np.isfinite(both)]
    if finite.size == 0:
        edges = np.array([-1.0, 1.0])
    else:
        lo, hi = float(finite.min()), float(finite.max())
        if hi - lo < 1e-12:
            lo, hi = lo - 0.5, hi + 0.5
        edges = np.linspace(lo, hi, bins + 1)
    cd, _ = np.histogram(np.clip(loss_d, edges[0], edges[-1]), bins=edges)
    cp, _ = np.histogram(np.clip(loss_p, edges[0], edges[-1]), bins=edges)
    return edges, cd, cp


def _binned_loss(sd, sp, bins: int = 30):
    """Estimated privacy loss of each run from a histogram of the pooled scores (add-1/2 smoothing)."""
    pooled = np.concatenate([sd, sp])
    uniq = np.unique(pooled)
    if uniq.shape[0] <= bins:
        idx_d, idx_p = np.searchsorted(uniq, sd), np.searchsorted(uniq, sp)
        nb = uniq.shape[0]
    else:
        edges = np.unique(np.quantile(pooled, np.linspace(0.0, 1.0, bins + 1)))
        inner = edges[1:-1]
        idx_d, idx_p = np.searchsorted(inner, sd, side="right"), np.searchsorted(inner, sp, side="right")
        nb = inner.shape[0] + 1
    cd = np.bincount(idx_d, minlength=nb) + 0.5
    cp = np.bincount(idx_p, minlength=nb) + 0.5
    loss = np.log(cd / cd.sum()) - np.log(cp / cp.sum())
    return loss[idx_d], loss[idx_p]


def privacy_loss_histogram(sd, sp, llr: Callable | None = None, *, mu: float | None = None) -> PrivacyLossHistogram:
    """:class:`PrivacyLossHistogram` from the scores (exact with ``llr``, binned otherwise)."""
    if llr is not None:
        ld, lp = np.asarray(llr(sd), dtype=np.float64), np.asarray(llr(sp), dtype=np.float64)
        exact = True
    else:
        ld, lp = _binned_loss(sd, sp)
        exact = False
    edges, cd, cp = _histogram(ld, lp)
    return PrivacyLossHistogram(ld, lp, edges, cd, cp, exact,
                                None if mu is None else 0.5 * mu * mu, None if mu is None else abs(mu))


# --------------------------------------------------------------------------- the audit
def _best(table: np.ndarray) -> tuple[int, int]:
    flat = int(np.argmax(table))
    return divmod(flat, table.shape[1])


def audit_scores(
    scores,
    scores_neighbour,
    *,
    epsilon,
    delta=0.0,
    alpha: float = 0.05,
    selection: str = "split",
    selection_fraction: float = 0.3,
    thresholds=None,
    deltas=None,
    llr: Callable | None = None,
    mu: float | None = None,
    mechanism: str = "custom",
    variant: str = "correct",
    analytic: AnalyticCurve | None = None,
    pair_epsilon: float | None = None,
    neighbouring: str = "replace-one",
    neighbours: dict | None = None,
    scalar: str = "",
    seconds: float = 0.0,
    params: dict | None = None,
) -> AuditResult:
    r"""Lower-bound ε from scalar outputs of a mechanism on :math:`D` and on :math:`D'`.

    Parameters
    ----------
    scores, scores_neighbour : array-like (n,), (n',)
        One scalar per independent run (any function of the output that is
        fixed before the runs; larger need not mean anything -- both
        directions are tried).
    epsilon, delta : float
        The claimed guarantee (``delta=0`` for pure DP).
    alpha : float
        Miss probability of the bound (e.g. 0.05 for a table, 1e-3 in tests).
    selection : {"split", "bonferroni"}
        See the module docstring. ``"bonferroni"`` needs ``thresholds``.
    selection_fraction : float in (0, 1)
        Share of each sample used to choose the event (``"split"``); 0.3 by
        default (choosing a threshold needs fewer runs than certifying it).
    thresholds : array-like, optional
        Fixed threshold grid for ``"bonferroni"`` (chosen before the runs).
    deltas : array-like, optional
        δ values for ``lower_bounds`` (default :data:`DEFAULT_DELTA_GRID` and
        the claimed δ).
    llr : callable, optional
        Exact privacy loss of the scalar, ``llr(s) = log p_D(s)/p_D'(s)``, for
        the privacy-loss histogram (binned estimate otherwise). Not used by
        the bound.
    mu : float, optional
        Gaussian privacy-loss parameter of the pair (for the analytic histogram).
    mechanism, variant, analytic, pair_epsilon, neighbouring, neighbours, scalar, seconds, params
        Stored in the result.

    Returns
    -------
    AuditResult
    """
    sd = check_array(scores, name="scores", ndim=1, min_rows=2)
    sp = check_array(scores_neighbour, name="scores_neighbour", ndim=1, min_rows=2)
    eps_claim = check_epsilon(epsilon)
    d_claim = check_delta(delta, allow_zero=True)
    a = _check_alpha(alpha)
    check_in(selection, SELECTIONS, name="selection")
    grid = (np.unique(np.concatenate([DEFAULT_DELTA_GRID, [d_claim]] if d_claim > 0 else [DEFAULT_DELTA_GRID]))
            if deltas is None else np.unique(check_array(deltas, name="deltas", ndim=1)))
    if np.any(grid < 0) or np.any(grid >= 1):
        raise ValueError(f"deltas must lie in [0, 1), got {grid!r}.")

    if selection == "split":
        f = check_positive_float(selection_fraction, name="selection_fraction")
        if not f < 1.0:
            raise ValueError(f"selection_fraction must lie in (0, 1), got {selection_fraction!r}.")
        k0, k1 = int(round(f * sd.shape[0])), int(round(f * sp.shape[0]))
        if min(k0, k1) < 1 or k0 >= sd.shape[0] or k1 >= sp.shape[0]:
            raise ValueError(f"selection_fraction={f} leaves an empty part of {sd.shape[0]} / {sp.shape[0]} runs.")
        sel_d, sel_p = np.sort(sd[:k0]), np.sort(sp[:k1])
        ev_d, ev_p = np.sort(sd[k0:]), np.sort(sp[k1:])
        cand = _threshold_grid(sel_d, sel_p)
        alpha_each = a / 2.0
    else:
        if thresholds is None:
            raise ValueError("selection='bonferroni' needs a fixed grid of thresholds (chosen before the runs).")
        cand = np.unique(check_array(thresholds, name="thresholds", ndim=1))
        sel_d = ev_d = np.sort(sd)
        sel_p = ev_p = np.sort(sp)
        alpha_each = a / (2.0 * 4.0 * cand.shape[0])

    tables: dict[float, tuple] = {}

    def bound_at(dl: float, split: float = 1.0) -> tuple[float, int, int, np.ndarray, np.ndarray]:
        # split: the bound is made valid at alpha / split (Bonferroni over several deltas)
        if split not in tables:
            ev = _rate_tables(ev_d, ev_p, cand, alpha_each / split)
            sel = _rate_tables(sel_d, sel_p, cand, a / 2.0 / split) if selection == "split" else ev
            tables[split] = (sel, ev)
        (sn, sdn), (en, edn) = tables[split]
        i, j = _best(_eps_table(sn, sdn, dl))
        return float(_eps_table(en[i], edn[i], dl)[j]), i, j, en[i], edn[i]

    eps_lb, i, j, num, den = bound_at(d_claim)
    lbs = np.array([bound_at(float(dl))[0] for dl in grid])
    curve_margin = curve_delta = None
    if analytic is not None:
        claimed = np.asarray(analytic.epsilon_claimed, dtype=np.float64)
        ok = np.isfinite(claimed) & (analytic.deltas > 0) & (analytic.deltas < 1)
        if ok.any():
            cds = analytic.deltas[ok]
            lb_g = np.array([max(0.0, bound_at(float(dl), split=float(ok.sum()))[0]) for dl in cds])
            margins = lb_g - claimed[ok]
            # report the delta' of the largest margin among those with a positive bound, if any
            k = int(np.argmax(np.where(lb_g > 0, margins, -np.inf))) if (lb_g > 0).any() else int(np.argmax(margins))
            curve_margin, curve_delta = float(margins[k]), float(cds[k])
    t = float(cand[i])
    region, numer = CANDIDATES[j]
    # empirical frequencies of the chosen event, on all runs
    all_d, all_p = np.sort(sd), np.sort(sp)
    pnum, pden = _rate_tables(all_d, all_p, np.array([t]), 0.5, point=True)
    p_hat, q_hat = float(pnum[0, j]), float(pden[0, j])
    eps_point = math.log((p_hat - d_claim) / q_hat) if q_hat > 0 and p_hat > d_claim else \
        (math.inf if p_hat > d_claim else 0.0)
    return AuditResult(
        mechanism=mechanism, variant=variant, claimed_epsilon=eps_claim, claimed_delta=d_claim,
        epsilon_lower_bound=max(0.0, eps_lb), alpha=a, runs=int(sd.shape[0]), runs_neighbour=int(sp.shape[0]),
        selection=selection, threshold=t, region=region, numerator=numer, p_lower=float(num[j]),
        q_upper=float(den[j]), p_hat=p_hat, q_hat=q_hat, epsilon_point=float(eps_point), scores=sd,
        scores_neighbour=sp, lower_bounds={"deltas": grid, "epsilons": np.maximum(lbs, 0.0)},
        privacy_loss=privacy_loss_histogram(sd, sp, llr, mu=mu), analytic=analytic, pair_epsilon=pair_epsilon,
        curve_margin=curve_margin, curve_delta=curve_delta, neighbouring=neighbouring,
        neighbours=dict(neighbours or {}), scalar=scalar, seconds=seconds,
        params=dict(params or {}),
    )
