r"""Privacy accounting of DPGM: private k-means steps composed with Poisson-subsampled DP-SGD steps.

Neighbouring relation
---------------------
**Add/remove one row** (``"add-remove"``), the relation for which Poisson subsampling amplifies
privacy (Abadi et al. 2016; Mironov, Talwar & Zhang 2019; Zhu, Dong & Wang 2022). The table's size
:math:`N` is a declared public number (``n_private``, as everywhere in dpkme under add/remove: the row
count differs between neighbours), and the sampling rate :math:`q = L/N` is a public function of it.
The k-means plan (:func:`dpkme.clustering.plan_kmeans`) is computed for the same relation.

One DP-SGD step
---------------
Each row is in the step's batch independently with probability :math:`q`; each selected row's
gradient (all parameters of the model of its cluster, flattened) is clipped to L2 norm :math:`C`; the
clipped gradients are summed per cluster and :math:`\mathcal N(0, \sigma^2C^2 I)` is added to every
cluster's sum. Adding or removing one row changes the concatenation of the :math:`k` sums by at most
:math:`C` in L2 (the row belongs to one cluster), so one step is the Poisson-subsampled Gaussian
mechanism with noise multiplier :math:`\sigma` and rate :math:`q`:
``dp_accounting.PoissonSampledDpEvent(q, GaussianDpEvent(sigma))``. :math:`T_S` steps are their
adaptive composition, and the k-means steps (Gaussian mechanisms, :math:`\mu_{\rm tot}`-GDP
together) are composed in as one ``GaussianDpEvent(1/mu_tot)``. ``dp_accounting`` evaluates the
composition with Rényi DP (:func:`dpgm_epsilon` with ``accountant="rdp"``) or privacy loss
distributions (``"pld"``, pessimistic discretisation: an upper bound).

The paper's cluster selection, worked out
-----------------------------------------
Acs et al. (Algorithm 1, Section III-B and III-D) train **one** cluster :math:`s` per step, chosen with
probability :math:`p_s = |\hat D_s|/|D|`, on a Poisson sample of rate :math:`q_s = L/|\hat D_s|`, and
argue that each row is then selected with probability :math:`p_s q_s = L/|D|`, so that the whole run
costs what a single model trained on :math:`D` with rate :math:`q = L/|D|` costs. The marginal inclusion
probability is right, but the privacy loss is not that of rate :math:`q`: the step's output includes
*which* cluster was trained. For a row of cluster :math:`c`, with probability :math:`1-p_c` the step
does not look at its cluster at all (privacy loss 0) and with probability :math:`p_c` it is a
:math:`q_c`-subsampled Gaussian. Its Rényi divergence of order :math:`\alpha` is exactly

.. math::
    \rho_{\rm sel}(\alpha) = \frac{1}{\alpha-1}\log\bigl(1 - p_c + p_c\,e^{(\alpha-1)\rho_{q_c}(\alpha)}\bigr)
    \approx p_c\,\rho_{q_c}(\alpha) \approx \frac{2 p_c q_c^2\alpha}{\sigma^2}
    = \frac{1}{p_c}\cdot\frac{2q^2\alpha}{\sigma^2}

(:func:`cluster_selection_rdp`), about :math:`1/p_c \approx k` times the rate-:math:`q` value for
small :math:`q`: the paper's eq. (4) understates the cost of its own schedule. In addition
:math:`p_s` and :math:`q_s` depend on the cluster sizes, which are private unless the released
noisy sizes are used. dpkme therefore **trains all k models in every step** on one Poisson sample of
the whole table at the public rate :math:`q = L/N` (each sampled row updates its own cluster's
model; every model receives its own noise). The expected number of rows of cluster :math:`s` per step
is :math:`q|\hat D_s| = L|\hat D_s|/|D|`, the same as in the paper's schedule, and the accounting is
exactly the rate-:math:`q` composition the paper claims (its :math:`\alpha_{S_k} \le \alpha_{S_1}`),
with no dependence on private sizes.

The paper's formula
-------------------
Theorem 4 of the paper: :math:`\varepsilon = \min_\lambda(\alpha_K(\lambda) + \alpha_S(\lambda) -
\log\delta)/\lambda` over integer :math:`\lambda \le 32`, with :math:`\alpha_K` its eq. (3)
(:func:`dpkme.clustering.paper_log_moment`) and :math:`\alpha_S(\lambda) = T_S\,\alpha_G(\lambda)`,
:math:`\alpha_G(\lambda) = \log\max(E_1, E_2)` computed by numerical integration of the two
moments of :math:`\mu_0 = \mathcal N(0,\sigma^2)` and :math:`\mu_1 = (1-q)\mathcal N(0,\sigma^2) +
q\mathcal N(1,\sigma^2)` (:func:`subsampled_gaussian_log_moment`; with a fixed clip norm there is no
DPNorm step, :math:`j_1 = 0` in eq. (4)). :func:`paper_dpgm_epsilon` evaluates it; it is an
independent computation of the same subsampled-Gaussian moments that ``dp_accounting`` uses
(:math:`\alpha_G(\lambda) = \lambda\,\rho_q(\lambda+1)`), converted with the (looser) Theorem 1
conversion instead of Canonne, Kamath & Steinke's.

References
----------
G. Acs, L. Melis, C. Castelluccia, E. De Cristofaro. Differentially private mixture of generative
neural networks. IEEE TKDE 2018 (ICDM 2017) -- ``/work/shared/papers/004_d7aad437b87fa749.txt``.

M. Abadi et al. Deep learning with differential privacy. CCS 2016.

I. Mironov, K. Talwar, L. Zhang. Rényi differential privacy of the sampled Gaussian mechanism. 2019.
"""

from __future__ import annotations

import functools
import math
from collections.abc import Iterable
from dataclasses import dataclass
from functools import cached_property

import dp_accounting
import numpy as np
from dp_accounting import pld as dp_pld
from dp_accounting import rdp as dp_rdp
from scipy.special import logsumexp

from .._validation import check_delta, check_epsilon, check_in, check_positive_float, check_positive_int
from ..clustering.accounting import PrivacyPlan, gaussian_log_moment, moments_epsilon, paper_log_moment, plan_kmeans
from ..privacy.accounting import PrivacyCharge

__all__ = [
    "ACCOUNTANTS",
    "NEIGHBOURING",
    "PAPER_LAMBDAS",
    "DPGMPlan",
    "calibrate_noise_multiplier",
    "cluster_selection_rdp",
    "dpgm_epsilon",
    "dpgm_event",
    "dpsgd_event",
    "epsilon_vs_epochs",
    "paper_dpgm_epsilon",
    "plan_dpgm",
    "steps_per_epoch",
    "subsampled_gaussian_log_moment",
]

#: Accountants that :func:`dpgm_epsilon` accepts.
ACCOUNTANTS = ("pld", "rdp")
#: The neighbouring relation of every DPGM guarantee.
NEIGHBOURING = "add-remove"
#: Orders of the paper's moments accountant ("it is enough to compute alpha(lambda) for lambda <= 32").
PAPER_LAMBDAS = tuple(range(1, 33))
#: Grid step of dp_accounting's PLDs (pessimistic rounding: an upper bound on epsilon).
PLD_DISCRETIZATION = 1e-3
_ADD_REMOVE = dp_accounting.NeighboringRelation.ADD_OR_REMOVE_ONE


def _check_rate(q) -> float:
    q = check_positive_float(q, name="sampling_rate")
    if q > 1.0:
        raise ValueError(f"sampling_rate must lie in (0, 1], got {q!r}; lower batch_size or declare a larger table.")
    return q


def _check_steps(steps) -> int:
    return check_positive_int(steps, name="steps", minimum=0)


def steps_per_epoch(sampling_rate: float) -> int:
    r"""Number of DP-SGD steps in one epoch: :math:`\lceil 1/q\rceil` (the paper's convention).

    Parameters
    ----------
    sampling_rate : float
        :math:`q \in (0, 1]`.

    Returns
    -------
    int

    Examples
    --------
    >>> steps_per_epoch(64 / 1797)
    29
    """
    q = _check_rate(sampling_rate)
    return int(math.ceil(1.0 / q - 1e-12))


def dpsgd_event(*, noise_multiplier: float, sampling_rate: float, steps: int) -> dp_accounting.DpEvent:
    r"""``dp_accounting`` event of :math:`T_S` Poisson-subsampled Gaussian steps (add/remove).

    Parameters
    ----------
    noise_multiplier : float
        :math:`\sigma > 0`: noise std over clip norm.
    sampling_rate : float
        :math:`q \in (0, 1]`.
    steps : int
        :math:`T_S \ge 0`.

    Returns
    -------
    dp_accounting.DpEvent
        ``SelfComposedDpEvent(PoissonSampledDpEvent(q, GaussianDpEvent(sigma)), T_S)``
        (``NoOpDpEvent`` for 0 steps).

    Examples
    --------
    >>> ev = dpsgd_event(noise_multiplier=1.0, sampling_rate=0.01, steps=100)
    >>> ev.count, ev.event.sampling_probability
    (100, 0.01)
    """
    z = check_positive_float(noise_multiplier, name="noise_multiplier")
    q = _check_rate(sampling_rate)
    T = _check_steps(steps)
    if T == 0:
        return dp_accounting.NoOpDpEvent()
    one = dp_accounting.PoissonSampledDpEvent(q, dp_accounting.GaussianDpEvent(z))
    return dp_accounting.SelfComposedDpEvent(one, T)


def dpgm_event(*, noise_multiplier: float, sampling_rate: float, steps: int,
               kmeans_plan: PrivacyPlan | None = None) -> dp_accounting.DpEvent:
    r"""The whole DPGM run as one ``dp_accounting`` event: k-means (one Gaussian, exact) then DP-SGD.

    Parameters
    ----------
    noise_multiplier : float
        :math:`\sigma > 0` of the SGD steps.
    sampling_rate : float
        :math:`q \in (0, 1]`.
    steps : int
        :math:`T_S \ge 0`.
    kmeans_plan : PrivacyPlan, optional
        Plan of the private k-means (``neighbouring="add-remove"``); ``None`` for a single cluster.

    Returns
    -------
    dp_accounting.ComposedDpEvent

    Raises
    ------
    ValueError
        If the k-means plan is for another neighbouring relation.

    Examples
    --------
    >>> from dpkme.clustering import plan_kmeans
    >>> km = plan_kmeans(epsilon=0.5, delta=1e-6, n_iter=5, neighbouring="add-remove")
    >>> ev = dpgm_event(noise_multiplier=1.0, sampling_rate=0.05, steps=20, kmeans_plan=km)
    >>> [type(e).__name__ for e in ev.events]
    ['GaussianDpEvent', 'SelfComposedDpEvent']
    """
    events = []
    if kmeans_plan is not None:
        if kmeans_plan.neighbouring != NEIGHBOURING:
            raise ValueError(f"the k-means plan is for {kmeans_plan.neighbouring!r}; DPGM needs "
                             "neighbouring='add-remove' (plan_kmeans(..., neighbouring='add-remove')).")
        events.append(dp_accounting.GaussianDpEvent(1.0 / kmeans_plan.mu_total))
    events.append(dpsgd_event(noise_multiplier=noise_multiplier, sampling_rate=sampling_rate, steps=steps))
    return dp_accounting.ComposedDpEvent(events)


def dpgm_epsilon(*, noise_multiplier: float, sampling_rate: float, steps: int, delta: float,
                 kmeans_plan: PrivacyPlan | None = None, accountant: str = "pld") -> float:
    r""":math:`\varepsilon` of k-means + :math:`T_S` DP-SGD steps at ``delta``, by ``dp_accounting``.

    Parameters
    ----------
    noise_multiplier : float
        :math:`\sigma > 0` of the SGD steps.
    sampling_rate : float
        :math:`q \in (0, 1]`.
    steps : int
        :math:`T_S \ge 0`.
    delta : float
        Target :math:`\delta \in (0, 1)`.
    kmeans_plan : PrivacyPlan, optional
        The private k-means plan (add/remove), composed in; ``None``: SGD only.
    accountant : {"pld", "rdp"}, default="pld"
        ``"pld"``: privacy loss distributions (grid :data:`PLD_DISCRETIZATION`, pessimistic);
        ``"rdp"``: Rényi DP with Canonne, Kamath & Steinke's conversion.

    Returns
    -------
    float
        :math:`\varepsilon \ge 0`.

    Examples
    --------
    >>> e_rdp = dpgm_epsilon(noise_multiplier=1.0, sampling_rate=0.01, steps=1000, delta=1e-5, accountant="rdp")
    >>> e_pld = dpgm_epsilon(noise_multiplier=1.0, sampling_rate=0.01, steps=1000, delta=1e-5)
    >>> round(e_rdp, 2), round(e_pld, 2), e_pld < e_rdp
    (2.1, 1.83, True)
    """
    delta = check_delta(delta)
    check_in(accountant, ACCOUNTANTS, name="accountant")
    dpgm_event(noise_multiplier=noise_multiplier, sampling_rate=sampling_rate, steps=steps,
               kmeans_plan=kmeans_plan)                                  # validates the inputs
    return _dpgm_epsilon(float(noise_multiplier), float(sampling_rate), int(steps),
                         None if kmeans_plan is None else float(kmeans_plan.mu_total), delta, accountant)


# A pure function of public numbers (a PLD composition: ~0.1-0.3 s): memoised, because the same epsilons are asked
# for again and again -- dpgm() recalibrates the plan the page or the CLI has just made, a DPGMPlan's epsilon_pld and
# epsilon_rdp recompute what the calibration evaluated, and planning curves revisit the same noise multipliers.
@functools.lru_cache(maxsize=4096)
def _dpgm_epsilon(noise_multiplier: float, sampling_rate: float, steps: int, kmeans_mu: float | None, delta: float,
                  accountant: str) -> float:
    r""":func:`dpgm_epsilon` of validated inputs, the k-means plan given by its :math:`\mu_{\rm tot}` (cached)."""
    events = [] if kmeans_mu is None else [dp_accounting.GaussianDpEvent(1.0 / kmeans_mu)]
    events.append(dpsgd_event(noise_multiplier=noise_multiplier, sampling_rate=sampling_rate, steps=steps))
    ev = dp_accounting.ComposedDpEvent(events)
    if accountant == "rdp":
        acc = dp_rdp.RdpAccountant(neighboring_relation=_ADD_REMOVE)
    else:
        acc = dp_pld.PLDAccountant(neighboring_relation=_ADD_REMOVE, value_discretization_interval=PLD_DISCRETIZATION)
    acc.compose(ev)
    return max(float(acc.get_epsilon(delta)), 0.0)


def calibrate_noise_multiplier(*, epsilon: float, delta: float, sampling_rate: float, steps: int,
                               kmeans_plan: PrivacyPlan | None = None, accountant: str = "pld",
                               rtol: float = 1e-3) -> float:
    r"""Smallest noise multiplier (up to ``rtol``, rounded up) with :func:`dpgm_epsilon` :math:`\le` ``epsilon``.

    Bisection on :math:`\log\sigma`; the returned value is the upper end of the final bracket, so it is
    always certified (more noise, never less).

    Parameters
    ----------
    epsilon : float
        Target total :math:`\varepsilon > 0` (k-means included).
    delta : float
        Target total :math:`\delta \in (0, 1)`.
    sampling_rate : float
        :math:`q \in (0, 1]`.
    steps : int
        :math:`T_S \ge 1`.
    kmeans_plan : PrivacyPlan, optional
        The private k-means plan, composed in.
    accountant : {"pld", "rdp"}, default="pld"
        Accountant that certifies the target.
    rtol : float, default=1e-3
        Relative width of the final bracket.

    Returns
    -------
    float
        :math:`\sigma`.

    Raises
    ------
    ValueError
        If the k-means plan alone already spends ``epsilon`` at ``delta``, or on invalid values.

    Examples
    --------
    >>> z = calibrate_noise_multiplier(epsilon=1.0, delta=1e-5, sampling_rate=0.01, steps=1000)
    >>> dpgm_epsilon(noise_multiplier=z, sampling_rate=0.01, steps=1000, delta=1e-5) <= 1.0
    True
    """
    eps = check_epsilon(epsilon)
    delta = check_delta(delta)
    check_positive_int(steps, name="steps")
    rtol = check_positive_float(rtol, name="rtol")

    def f(z):
        return dpgm_epsilon(noise_multiplier=z, sampling_rate=sampling_rate, steps=steps, delta=delta,
                            kmeans_plan=kmeans_plan, accountant=accountant)

    if kmeans_plan is not None:
        e_k = dpgm_epsilon(noise_multiplier=1e6, sampling_rate=sampling_rate, steps=1, delta=delta,
                           kmeans_plan=kmeans_plan, accountant=accountant)
        if not e_k < eps:
            raise ValueError(f"the k-means plan alone spends epsilon={e_k:.4g} >= epsilon={eps:g} at delta={delta:g}; "
                             "lower kmeans_share or raise epsilon.")
    lo, hi = 0.25, 1.0
    while f(hi) > eps:
        lo, hi = hi, hi * 2.0
        if hi > 1e7:
            raise ValueError(f"no noise multiplier below 1e7 reaches epsilon={eps:g}; raise epsilon.")  # pragma: no cover
    while lo > 1e-3 and f(lo) <= eps:
        lo, hi = lo / 2.0, lo
    while hi / lo > 1.0 + rtol:
        mid = math.sqrt(lo * hi)
        if f(mid) <= eps:
            hi = mid
        else:
            lo = mid
    return hi


def subsampled_gaussian_log_moment(lam, *, sampling_rate: float, noise_multiplier: float) -> np.ndarray:
    r"""The paper's :math:`\alpha_G(\lambda) = \log\max(E_1(\lambda,\sigma), E_2(\lambda,\sigma))`, by numerical integration.

    .. math::
        E_1 = \int \mu_0\Bigl(\frac{\mu_0}{\mu_1}\Bigr)^\lambda dx,\qquad
        E_2 = \int \mu_1\Bigl(\frac{\mu_1}{\mu_0}\Bigr)^\lambda dx,

    :math:`\mu_0 = \mathcal N(0,\sigma^2)`, :math:`\mu_1 = (1-q)\mathcal N(0,\sigma^2) + q\mathcal N(1,\sigma^2)`
    (Abadi et al. 2016; Acs et al. Section III-D). Trapezoid rule in log space on a grid of step
    :math:`\sigma/400` that covers both integrands' mass (:math:`\pm 14\sigma` around :math:`0` and
    :math:`\lambda+1`); independent of ``dp_accounting``.

    Parameters
    ----------
    lam : int, float or array_like
        Order(s) :math:`\lambda > 0`.
    sampling_rate : float
        :math:`q \in (0, 1]`.
    noise_multiplier : float
        :math:`\sigma > 0`.

    Returns
    -------
    ndarray
        :math:`\alpha_G(\lambda)`, the shape of ``lam``.

    Examples
    --------
    Without subsampling it is the Gaussian's :math:`\lambda(\lambda+1)/(2\sigma^2)`:

    >>> subsampled_gaussian_log_moment([1, 2], sampling_rate=1.0, noise_multiplier=2.0).round(6)
    array([0.25, 0.75])
    """
    q = _check_rate(sampling_rate)
    s = check_positive_float(noise_multiplier, name="noise_multiplier")
    lam_arr = np.asarray(lam, dtype=np.float64)
    if np.any(~np.isfinite(lam_arr)) or np.any(lam_arr <= 0):
        raise ValueError(f"orders lam must be positive and finite, got {lam!r}.")
    out = np.empty(lam_arr.shape)
    for idx, la in np.ndenumerate(lam_arr):
        x = np.arange(-14.0 * s - 1.0, la + 2.0 + 14.0 * s, s / 400.0)
        log_mu0 = -x**2 / (2 * s * s) - 0.5 * math.log(2 * math.pi * s * s)
        # log(mu1/mu0) = log(1 - q + q exp((2x - 1)/(2 s^2)))
        t = (2.0 * x - 1.0) / (2.0 * s * s)
        log_ratio = np.logaddexp(math.log1p(-q) if q < 1 else -np.inf, math.log(q) + t)
        log_mu1 = log_mu0 + log_ratio
        dx = math.log(x[1] - x[0])
        le1 = logsumexp(log_mu0 - la * log_ratio) + dx
        le2 = logsumexp(log_mu1 + la * log_ratio) + dx
        out[idx] = max(le1, le2)
    return out


def _check_lambdas(lambdas) -> tuple:
    lam = tuple(lambdas)
    if not lam or any((not isinstance(v, (int, np.integer))) or v < 1 for v in lam):
        raise ValueError(f"lambdas must be a non-empty list of positive integers, got {lambdas!r}.")
    return lam


def paper_dpgm_epsilon(*, noise_multiplier: float, sampling_rate: float, steps: int, delta: float,
                       sigma_K: float | None = None, kmeans_iter: int = 20, sigma_C: float | None = None,
                       kmeans_plan: PrivacyPlan | None = None,
                       lambdas: Iterable[int] = PAPER_LAMBDAS) -> float:
    r"""The paper's Theorem 4: :math:`\min_\lambda(\alpha_K(\lambda) + T_S\alpha_G(\lambda) - \log\delta)/\lambda`.

    :math:`\alpha_G` is :func:`subsampled_gaussian_log_moment` (numerical integration). The k-means
    term is either the paper's eq. (3) for its own noise scales (``sigma_K``, ``sigma_C``,
    ``kmeans_iter`` = :math:`T_K`; :func:`dpkme.clustering.paper_log_moment`) or, for a dpkme plan
    (``kmeans_plan``), the true log moment :math:`\lambda(\lambda+1)\mu_{\rm tot}^2/2` of its
    Gaussian steps (which is what eq. (3) gives under add/remove,
    :mod:`dpkme.clustering.accounting`). Neither: no k-means term.

    Parameters
    ----------
    noise_multiplier : float
        The paper's :math:`\sigma_S` (noise :math:`\sigma_S` times the sensitivity of the clipped sum).
    sampling_rate : float
        :math:`q = L/|D|`.
    steps : int
        :math:`T_S \ge 0`.
    delta : float
        :math:`\delta \in (0, 1)`.
    sigma_K : float, optional
        The paper's :math:`\sigma_K` of the k-means steps.
    kmeans_iter : int, default=20
        :math:`T_K` (used with ``sigma_K``; 20 in the paper's experiments).
    sigma_C : float, optional
        The paper's :math:`\sigma_C` (norm histogram, counted :math:`T_K` times as eq. (3) is written).
    kmeans_plan : PrivacyPlan, optional
        A dpkme k-means plan instead of ``sigma_K`` (not both).
    lambdas : iterable of int, default=PAPER_LAMBDAS
        Integer orders :math:`\lambda` (the paper uses :math:`\lambda \le 32`).

    Returns
    -------
    float
        The paper's :math:`\varepsilon`.

    Raises
    ------
    ValueError
        If both ``sigma_K`` and ``kmeans_plan`` are given, or on invalid values.

    Examples
    --------
    >>> round(paper_dpgm_epsilon(noise_multiplier=1.0, sampling_rate=0.01, steps=1000, delta=1e-5), 2)
    2.54
    """
    delta = check_delta(delta)
    T = _check_steps(steps)
    lam = _check_lambdas(lambdas)
    if sigma_K is not None and kmeans_plan is not None:
        raise ValueError("give sigma_K (the paper's k-means noise) or kmeans_plan (a dpkme plan), not both.")
    a_s = T * subsampled_gaussian_log_moment(np.asarray(lam, dtype=np.float64), sampling_rate=sampling_rate,
                                             noise_multiplier=noise_multiplier)
    table = dict(zip(lam, a_s))
    if sigma_K is not None:
        TK = check_positive_int(kmeans_iter, name="kmeans_iter")

        def alpha(x):
            return paper_log_moment(x, n_iter=TK, sigma_K=sigma_K, sigma_C=sigma_C) + np.array([table[int(v)] for v in x])
    elif kmeans_plan is not None:
        mu2 = kmeans_plan.mu_total**2

        def alpha(x):
            return gaussian_log_moment(x, mu2) + np.array([table[int(v)] for v in x])
    else:
        def alpha(x):
            return np.array([table[int(v)] for v in x])
    return moments_epsilon(alpha, delta=delta, lambdas=lam)


def cluster_selection_rdp(orders, *, selection_probability: float, sampling_rate: float,
                          noise_multiplier: float) -> np.ndarray:
    r"""Rényi DP of one step of the paper's schedule for a row of the selected-with-probability-:math:`p` cluster.

    .. math:: \rho(\alpha) = \frac{1}{\alpha-1}\log\bigl(1 - p + p\,e^{(\alpha-1)\rho_{q}(\alpha)}\bigr),

    :math:`\rho_q` the RDP of the :math:`q`-subsampled Gaussian (``dp_accounting``'s bound): with
    probability :math:`1-p` the row's cluster is not trained (no privacy loss), with probability
    :math:`p` it is a :math:`q`-subsampled Gaussian step; the output (which cluster was trained,
    its noisy gradient) is a mixture over the two branches with the same weights on both
    neighbours, so the moment :math:`E[(P/Q)^\alpha]` is the same mixture of the branches'
    moments. Compare with :math:`\rho_{pq}(\alpha)` (what the paper charges): see the module
    docstring. dpkme's schedule (all clusters each step) does not need this function; it documents
    why.

    Parameters
    ----------
    orders : float or array_like
        Rényi orders :math:`\alpha > 1`.
    selection_probability : float
        :math:`p = |\hat D_c|/|D| \in (0, 1]`.
    sampling_rate : float
        :math:`q = L/|\hat D_c| \in (0, 1]` within the cluster.
    noise_multiplier : float
        :math:`\sigma > 0`.

    Returns
    -------
    ndarray
        :math:`\rho(\alpha)`, the shape of ``orders``.

    Examples
    --------
    Five equal clusters, :math:`L/|D| = 0.01`: about five times the RDP of rate 0.01:

    >>> sel = cluster_selection_rdp([2.0, 8.0], selection_probability=0.2, sampling_rate=0.05,
    ...                             noise_multiplier=2.0)
    >>> ref = cluster_selection_rdp([2.0, 8.0], selection_probability=1.0, sampling_rate=0.01,
    ...                             noise_multiplier=2.0)
    >>> (sel / ref).round(1)
    array([5. , 5.4])
    """
    p = check_positive_float(selection_probability, name="selection_probability")
    if p > 1.0:
        raise ValueError(f"selection_probability must lie in (0, 1], got {selection_probability!r}.")
    q = _check_rate(sampling_rate)
    z = check_positive_float(noise_multiplier, name="noise_multiplier")
    a = np.asarray(orders, dtype=np.float64)
    if np.any(~np.isfinite(a)) or np.any(a <= 1.0):
        raise ValueError(f"Rényi orders must be finite and > 1, got {orders!r}.")
    flat = a.ravel()
    rho = np.asarray(dp_rdp.rdp_privacy_accountant._compute_rdp_poisson_subsampled_gaussian(q, z, flat),
                     dtype=np.float64)
    with np.errstate(over="ignore"):
        out = np.logaddexp(math.log1p(-p) if p < 1 else -np.inf, math.log(p) + (flat - 1.0) * rho) / (flat - 1.0)
    return out.reshape(a.shape)


def epsilon_vs_epochs(epochs, *, noise_multiplier: float, sampling_rate: float, delta: float,
                      kmeans_plan: PrivacyPlan | None = None, sigma_K: float | None = None, kmeans_iter: int = 20,
                      sigma_C: float | None = None, methods: Iterable[str] = ("rdp", "pld", "paper")) -> dict:
    r""":math:`\varepsilon` against the number of SGD epochs (the paper's Figure 2), by each accountant.

    One epoch is :func:`steps_per_epoch` :math:`= \lceil 1/q\rceil` steps. The k-means part is a dpkme
    plan (``kmeans_plan``, used by every method) or the paper's noise scales (``sigma_K``,
    ``sigma_C``, ``kmeans_iter``; converted to an add/remove plan with :func:`dpkme.clustering.paper_plan`
    for ``"rdp"``/``"pld"``, eq. (3) for ``"paper"``).

    Parameters
    ----------
    epochs : array_like of int
        Numbers of epochs (:math:`\ge 0`).
    noise_multiplier : float
        :math:`\sigma_S > 0`.
    sampling_rate : float
        :math:`q \in (0, 1]`.
    delta : float
        :math:`\delta \in (0, 1)` (the paper's Figure 2: :math:`10^{-5}`).
    kmeans_plan : PrivacyPlan, optional
        A dpkme k-means plan (add/remove).
    sigma_K : float, optional
        The paper's :math:`\sigma_K` (instead of ``kmeans_plan``).
    kmeans_iter : int, default=20
        :math:`T_K` with ``sigma_K``.
    sigma_C : float, optional
        The paper's :math:`\sigma_C` with ``sigma_K`` (norm histogram).
    methods : iterable of {"rdp", "pld", "paper"}, default=("rdp", "pld", "paper")
        Which curves to compute (``"pld"`` takes about 0.1 s per point).

    Returns
    -------
    dict
        ``epochs`` and ``steps`` (int arrays) and one float array per method.

    Raises
    ------
    ValueError
        On invalid values, both ``kmeans_plan`` and ``sigma_K``, or an unknown method.

    Examples
    --------
    >>> c = epsilon_vs_epochs([0, 5, 10], noise_multiplier=4.0, sampling_rate=0.01, delta=1e-5,
    ...                       sigma_K=20.0, methods=("rdp", "paper"))
    >>> c["steps"].tolist(), bool(c["rdp"][0] < c["rdp"][1] < c["rdp"][2])
    ([0, 500, 1000], True)
    """
    ep = np.asarray(epochs)
    if ep.ndim != 1 or ep.size == 0 or not np.issubdtype(ep.dtype, np.integer) or np.any(ep < 0):
        raise ValueError(f"epochs must be a non-empty 1-D list of non-negative integers, got {epochs!r}.")
    methods = tuple(methods)
    for m in methods:
        check_in(m, ("rdp", "pld", "paper"), name="method")
    if sigma_K is not None and kmeans_plan is not None:
        raise ValueError("give sigma_K (the paper's k-means noise) or kmeans_plan (a dpkme plan), not both.")
    delta = check_delta(delta)
    spe = steps_per_epoch(sampling_rate)
    steps = ep.astype(np.int64) * spe
    plan = kmeans_plan
    if sigma_K is not None:
        from ..clustering.accounting import paper_plan

        plan = paper_plan(sigma_K=sigma_K, sigma_C=sigma_C, n_iter=kmeans_iter, delta=delta,
                          neighbouring=NEIGHBOURING)
    out: dict = {"epochs": ep.astype(np.int64), "steps": steps}
    for m in methods:
        vals = []
        for T in steps.tolist():
            if m == "paper":
                vals.append(paper_dpgm_epsilon(noise_multiplier=noise_multiplier, sampling_rate=sampling_rate,
                                               steps=T, delta=delta, sigma_K=sigma_K, kmeans_iter=kmeans_iter,
                                               sigma_C=sigma_C if sigma_K is not None else None,
                                               kmeans_plan=kmeans_plan))
            else:
                vals.append(dpgm_epsilon(noise_multiplier=noise_multiplier, sampling_rate=sampling_rate, steps=T,
                                         delta=delta, kmeans_plan=plan, accountant=m))
        out[m] = np.asarray(vals, dtype=np.float64)
    return out


@dataclass(frozen=True)
class DPGMPlan:
    r"""Noise and accounting of a DPGM run: the k-means plan, then :math:`T_S` DP-SGD steps.

    Built from public inputs only (:func:`plan_dpgm`), so it can be shown and charged before the data
    are read.

    Parameters
    ----------
    noise_multiplier : float
        :math:`\sigma`: the noise on each cluster's clipped-gradient sum has std :math:`\sigma C`.
    sampling_rate : float
        :math:`q = L/N`.
    steps : int
        :math:`T_S`, planned SGD steps (``epochs`` :math:`\times\lceil 1/q\rceil`).
    delta : float
        Total :math:`\delta`.
    kmeans : PrivacyPlan or None
        The private k-means plan (add/remove); ``None`` with one cluster.
    target_epsilon : float or None
        The target the noise was calibrated to (``None`` when ``noise_multiplier`` was given).
    accountant : {"pld", "rdp"}
        Accountant of the calibration and of :attr:`epsilon`.

    Attributes
    ----------
    epsilon : float
        Total :math:`\varepsilon` at :attr:`delta` by :attr:`accountant`.
    epsilon_rdp, epsilon_pld : float
        The same by each ``dp_accounting`` accountant.
    epsilon_paper : float
        The paper's Theorem 4 for the same noise (:func:`paper_dpgm_epsilon`).
    neighbouring : str
        ``"add-remove"``.
    """

    noise_multiplier: float
    sampling_rate: float
    steps: int
    delta: float
    kmeans: PrivacyPlan | None
    target_epsilon: float | None
    accountant: str

    neighbouring = NEIGHBOURING

    def epsilon_at(self, *, steps: int | None = None, delta: float | None = None,
                   accountant: str | None = None) -> float:
        r""":math:`\varepsilon` after ``steps`` SGD steps (default: all planned) at ``delta`` (default: the plan's).

        Parameters
        ----------
        steps : int, optional
            Number of SGD steps run (0 to :attr:`steps`).
        delta : float, optional
            :math:`\delta`.
        accountant : {"pld", "rdp"}, optional
            Default: the plan's.

        Returns
        -------
        float
        """
        return dpgm_epsilon(noise_multiplier=self.noise_multiplier, sampling_rate=self.sampling_rate,
                            steps=self.steps if steps is None else steps,
                            delta=self.delta if delta is None else delta, kmeans_plan=self.kmeans,
                            accountant=self.accountant if accountant is None else accountant)

    def rdp_epsilon_after(self, steps) -> np.ndarray:
        r"""Rényi-DP :math:`\varepsilon` at the plan's :math:`\delta` after each number of steps in ``steps`` (fast).

        The RDP of one step is computed once (``dp_accounting``'s orders and bound), multiplied by
        the step count and added to the k-means part, then converted with ``dp_accounting``'s
        ``compute_epsilon``: the value of ``epsilon_at(steps=T, accountant="rdp")`` without
        re-composing, for progress displays.

        Parameters
        ----------
        steps : int or array_like of int
            Step counts :math:`\ge 0`.

        Returns
        -------
        ndarray
            :math:`\varepsilon`, the shape of ``steps``.
        """
        st = np.asarray(steps)
        if not np.issubdtype(st.dtype, np.integer) or np.any(st < 0):
            raise ValueError(f"steps must be non-negative integers, got {steps!r}.")
        orders, one = self._rdp_one_step
        base = np.zeros_like(orders) if self.kmeans is None else orders * self.kmeans.mu_total**2 / 2.0
        out = np.empty(st.shape)
        for idx, T in np.ndenumerate(st):
            out[idx] = max(float(dp_rdp.rdp_privacy_accountant.compute_epsilon(orders, base + int(T) * one,
                                                                               self.delta)[0]), 0.0)
        return out

    @cached_property
    def _rdp_one_step(self) -> tuple[np.ndarray, np.ndarray]:
        """``dp_accounting``'s RDP orders and the RDP of one SGD step at them, computed once per plan: the
        subsampled-Gaussian RDP at the fractional orders takes up to ~1 s, and :meth:`rdp_epsilon_after` is
        called after every progress report of a run (up to ~200)."""
        orders = np.asarray(dp_rdp.rdp_privacy_accountant.DEFAULT_RDP_ORDERS, dtype=np.float64)
        one = np.asarray(dp_rdp.rdp_privacy_accountant._compute_rdp_poisson_subsampled_gaussian(
            self.sampling_rate, self.noise_multiplier, orders), dtype=np.float64)
        orders.flags.writeable = False
        one.flags.writeable = False
        return orders, one

    @cached_property
    def epsilon(self) -> float:
        return self.epsilon_at()

    @cached_property
    def epsilon_rdp(self) -> float:
        return self.epsilon_at(accountant="rdp")

    @cached_property
    def epsilon_pld(self) -> float:
        return self.epsilon_at(accountant="pld")

    @cached_property
    def epsilon_paper(self) -> float:
        return paper_dpgm_epsilon(noise_multiplier=self.noise_multiplier, sampling_rate=self.sampling_rate,
                                  steps=self.steps, delta=self.delta, kmeans_plan=self.kmeans)

    def charge(self, label: str = "DPGM (private k-means + DP-SGD)") -> PrivacyCharge:
        r"""The planned run as one ledger charge (``"approx-dp"``, add/remove).

        An ``"approx-dp"`` charge because the ledger's Gaussian charges cannot express Poisson
        subsampling; the :math:`\varepsilon` is the plan's accountant's value for **all planned
        steps**, the honest charge even when training is cancelled early (see :func:`~dpkme.generative.dpgm`).

        Parameters
        ----------
        label : str, default="DPGM (private k-means + DP-SGD)"
            Ledger label.

        Returns
        -------
        PrivacyCharge
        """
        eps = max(self.epsilon, 1e-12)
        plan = {k: v for k, v in self.to_dict().items() if k != "neighbouring"}   # the relation is the typed field
        return PrivacyCharge(label=label, mechanism="approx-dp", epsilon=eps, delta=self.delta,
                             relation=NEIGHBOURING, details={"mechanism": "dpgm", **plan})

    def to_dict(self) -> dict:
        """JSON-friendly description (public parameters and the three epsilons)."""
        return {"noise_multiplier": self.noise_multiplier, "sampling_rate": self.sampling_rate,
                "steps": self.steps, "delta": self.delta, "target_epsilon": self.target_epsilon,
                "accountant": self.accountant, "neighbouring": NEIGHBOURING,
                "kmeans": None if self.kmeans is None else self.kmeans.to_dict(),
                "epsilon_rdp": self.epsilon_rdp, "epsilon_pld": self.epsilon_pld,
                "epsilon_paper": self.epsilon_paper}


def plan_dpgm(*, epsilon: float | None, delta: float, n_private: int, batch_size: int, epochs: int, k: int,
              kmeans_iter: int = 5, kmeans_share: float = 0.2, noise_multiplier: float | None = None,
              accountant: str = "pld") -> DPGMPlan:
    r"""Plan a DPGM run: calibrate the k-means noise to its share, then the SGD noise to what is left.

    The k-means plan is :func:`dpkme.clustering.plan_kmeans` at
    :math:`(s\varepsilon, s\delta)` (:math:`s` = ``kmeans_share``, add/remove); the SGD noise
    multiplier is then the smallest (rounded up) for which the **joint** composition of k-means and
    :math:`T_S` steps is :math:`(\varepsilon,\delta)` by ``accountant``
    (:func:`calibrate_noise_multiplier`), which spends the slack of the split too.

    Parameters
    ----------
    epsilon : float or None
        Total target :math:`\varepsilon > 0`. May be ``None`` only with ``noise_multiplier`` and
        ``k=1`` (nothing to calibrate; the plan reports what it spends).
    delta : float
        Total :math:`\delta \in (0, 1)`.
    n_private : int
        Declared public size :math:`N` of the table.
    batch_size : int
        Expected batch size :math:`L \le N`; :math:`q = L/N`.
    epochs : int
        Epochs :math:`\ge 1`; :math:`T_S` = ``epochs`` :math:`\times\lceil 1/q\rceil`.
    k : int
        Number of clusters (1: no k-means).
    kmeans_iter : int, default=5
        :math:`T_K`, noisy Lloyd iterations.
    kmeans_share : float in (0, 1), default=0.2
        Share :math:`s` of :math:`(\varepsilon,\delta)` planned for the k-means (ignored when k = 1).
    noise_multiplier : float, optional
        Give the SGD noise directly instead of calibrating it (``epsilon`` is then used for the
        k-means share only, and may be ``None`` when k = 1).
    accountant : {"pld", "rdp"}, default="pld"
        Accountant of the calibration and of the plan's :attr:`DPGMPlan.epsilon`.

    Returns
    -------
    DPGMPlan

    Raises
    ------
    ValueError
        On invalid values (the message names the value and what to change).

    Examples
    --------
    >>> p = plan_dpgm(epsilon=2.0, delta=1e-5, n_private=1797, batch_size=64, epochs=2, k=5)
    >>> p.steps, p.epsilon <= 2.0, p.kmeans.neighbouring
    (58, True, 'add-remove')
    """
    delta = check_delta(delta)
    N = check_positive_int(n_private, name="n_private")
    L = check_positive_int(batch_size, name="batch_size")
    if L > N:
        raise ValueError(f"batch_size={L} exceeds the table size n_private={N}; choose batch_size <= n_private.")
    E = check_positive_int(epochs, name="epochs")
    k = check_positive_int(k, name="k")
    check_in(accountant, ACCOUNTANTS, name="accountant")
    q = L / N
    T = E * steps_per_epoch(q)
    km = None
    if epsilon is None and (noise_multiplier is None or k > 1):
        raise ValueError("give epsilon (the total target), or noise_multiplier with k=1.")
    if k > 1:
        eps = check_epsilon(epsilon)
        share = check_positive_float(kmeans_share, name="kmeans_share")
        if not share < 1.0:
            raise ValueError(f"kmeans_share must lie in (0, 1), got {kmeans_share!r}.")
        km = plan_kmeans(epsilon=share * eps, delta=share * delta, n_iter=kmeans_iter, neighbouring=NEIGHBOURING,
                         accountant=accountant)
    if noise_multiplier is not None:
        z = check_positive_float(noise_multiplier, name="noise_multiplier")
        return DPGMPlan(z, q, T, delta, km, None, accountant)
    eps = check_epsilon(epsilon)
    z = calibrate_noise_multiplier(epsilon=eps, delta=delta, sampling_rate=q, steps=T, kmeans_plan=km,
                                   accountant=accountant)
    return DPGMPlan(z, q, T, delta, km, eps, accountant)
