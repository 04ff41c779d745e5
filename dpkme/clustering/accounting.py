r"""Privacy plans for DP kernel k-means and the cluster-wise release, and the paper's moments accountant.

A :class:`PrivacyPlan` lists the Gaussian mechanisms a run will perform
(:class:`GaussianStep`: the optional norm histogram of Algorithm 3, the
:math:`T` noisy Lloyd steps, the optional cluster-wise release step) with
their noise scales. It depends on public inputs only, so it can be shown (and
charged to a ledger) **before** the private data are read.

Composition
-----------
Every step is a Gaussian mechanism with sensitivity :math:`\mu_t` in units of
its noise (:mod:`dpkme.clustering.sensitivity`), i.e. a :class:`~dpkme.privacy.accounting.PrivacyCharge`
with noise multiplier :math:`z_t = 1/\mu_t`. The steps are composed with
:func:`dpkme.privacy.accounting.rdp_epsilon` (Rényi DP through ``dp_accounting``) or
:func:`dpkme.privacy.accounting.pld_epsilon` (privacy loss distributions; for
Gaussian-only charges this is the exact Gaussian-DP composition
:math:`\mu_{\rm tot} = \sqrt{\sum_t\mu_t^2}` with Balle & Wang's
:math:`\delta(\varepsilon)`). Calibration to a target :math:`(\varepsilon,\delta)`
inverts the chosen accountant for :math:`\mu_{\rm tot}` and splits
:math:`\mu_{\rm tot}^2` between the steps.

The paper's accountant (Acs et al., Section II-C and III-D)
-----------------------------------------------------------
The paper writes the Gaussian mechanism as :math:`f(D) + \mathcal N(0, (\Delta\sigma)^2)`
and states (Lemma 1) :math:`\alpha_G(\lambda) = (\lambda^2+\lambda)/(4\sigma^2)`
for its log moment. The true value is

.. math:: \alpha_G(\lambda) = \frac{\lambda(\lambda+1)}{2\sigma^2}

(the privacy loss of :math:`\mathcal N(0,\sigma^2)` vs :math:`\mathcal N(1,\sigma^2)`
at unit sensitivity is :math:`\mathcal N(\frac1{2\sigma^2}, \frac1{\sigma^2})`,
whose log-MGF at :math:`\lambda` is :math:`\frac{\lambda}{2\sigma^2} + \frac{\lambda^2}{2\sigma^2}`;
equivalently RDP :math:`\alpha/(2\sigma^2)` of order :math:`\alpha = \lambda + 1`,
Mironov 2017), so Lemma 1 is low by a factor 2. Their eq. (3),

.. math::
    \alpha_K(\lambda) \le T(\lambda^2+\lambda)\Bigl(\frac{1}{4\sigma_C^2} + \frac{1}{2\sigma_K^2}\Bigr),

uses noise :math:`\sqrt2\sigma_K` on the sizes, :math:`\sqrt2\sigma_K C` on
the sums and :math:`\sqrt2\sigma_C` on the norm histogram, with sensitivities
:math:`\sqrt2`, :math:`\sqrt2 C`, :math:`\sqrt2`. With the **true** sensitivities:

* add/remove (1, C, 1): the noise multipliers are :math:`\sqrt2\sigma_K` (twice)
  and :math:`\sqrt2\sigma_C`; the true log moments
  :math:`\lambda(\lambda+1)/(2\cdot2\sigma^2)` equal Lemma 1's values, so the two
  slips (sensitivity :math:`\sqrt2` too large, moment a factor 2 too small)
  cancel and eq. (3) is exactly right (and conservative in charging the norm
  step :math:`T` times although Algorithm 2 runs it once);
* replace-one (:math:`\sqrt2`, 2C, :math:`\sqrt2`): the sizes have multiplier
  :math:`\sigma_K`, the sums :math:`\sigma_K/\sqrt2`, the histogram
  :math:`\sigma_C`; the joint per-step log moment is :math:`\lambda(\lambda+1)/\sigma_K^2`
  (twice eq. (3)'s :math:`\sigma_K` term) and the histogram's is twice its
  term too, so the paper **understates** :math:`\varepsilon`
  (:func:`compare_with_paper`).

Theorem 1 of the paper converts log moments to :math:`(\varepsilon,\delta)` by
:math:`\delta = \min_\lambda \exp(\alpha(\lambda) - \lambda\varepsilon)`, i.e.
:math:`\varepsilon = \min_\lambda (\alpha(\lambda) + \log(1/\delta))/\lambda`
(:func:`moments_epsilon`); ``dp_accounting`` uses the slightly tighter
conversion of Canonne, Kamath & Steinke (2020).
"""

from __future__ import annotations

import math
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field

import numpy as np

from .._validation import check_delta, check_epsilon, check_in, check_positive_float, check_positive_int
from ..privacy.accounting import PrivacyCharge, calibrate_gaussian_composition, pld_epsilon, rdp_epsilon
from ..privacy.calibration import analytic_sigma, gaussian_epsilon
from ..privacy.sensitivity import NEIGHBOURING
from .sensitivity import auto_count_share, histogram_sensitivity, noise_for_mu, step_mu

__all__ = [
    "ACCOUNTANTS",
    "GaussianStep",
    "PrivacyPlan",
    "plan_kmeans",
    "plan_from_noise",
    "paper_plan",
    "paper_log_moment",
    "gaussian_log_moment",
    "moments_epsilon",
    "paper_epsilon",
    "compare_with_paper",
]

ACCOUNTANTS = ("pld", "rdp")
STEP_KINDS = ("norm", "lloyd", "release")
_LAMBDAS = tuple(range(1, 257))


@dataclass(frozen=True)
class GaussianStep:
    r"""One (possibly repeated) Gaussian mechanism of a plan.

    Parameters
    ----------
    kind : {"norm", "lloyd", "release"}
        ``"norm"``: noisy norm histogram (Algorithm 3); ``"lloyd"``: a noisy
        Lloyd iteration (sizes and sums); ``"release"``: the per-cluster sums and
        sizes of the cluster-wise release (same statistic, final centres).
    count : int
        Number of repetitions (:math:`T` for ``"lloyd"``).
    mu : float
        Sensitivity in units of the noise, per repetition (noise multiplier :math:`1/\mu`).
    sigma_count : float
        Noise std on each cluster size / histogram bin.
    sum_multiplier : float or None
        Noise std on each coordinate of each cluster sum divided by the norm
        bound :math:`C` (``None`` for ``"norm"``). :math:`C` may be chosen
        privately after planning, which is why it is not stored.
    label : str, default=""
        Free-text name of the step (display only; not used by the accounting).

    Attributes
    ----------
    noise_multiplier : float
        :math:`1/\mu`, the noise std at unit sensitivity (what RDP and PLD compose).
    """

    kind: str
    count: int
    mu: float
    sigma_count: float
    sum_multiplier: float | None = None
    label: str = ""

    def sigma_sum(self, norm_bound: float) -> float:
        """Noise std per coordinate of a cluster sum for the norm bound ``norm_bound``."""
        if self.sum_multiplier is None:
            raise ValueError(f"a {self.kind!r} step has no sum noise.")
        return self.sum_multiplier * float(norm_bound)

    @property
    def noise_multiplier(self) -> float:
        return 1.0 / self.mu


@dataclass(frozen=True)
class PrivacyPlan:
    r"""The Gaussian mechanisms of a DP k-means (or cluster-wise release) run, with their noise.

    Built from public inputs only, by :func:`plan_kmeans` (calibrated to a
    target), :func:`plan_from_noise` (noise given) or :func:`paper_plan`; the
    whole run is :math:`\mu_{\rm tot}`-GDP with
    :math:`\mu_{\rm tot} = \sqrt{\sum_t \mathrm{count}_t\,\mu_t^2}`.

    Parameters
    ----------
    steps : tuple of GaussianStep
        The mechanisms in the order they run (optional ``"norm"``, then
        ``"lloyd"``, then optional ``"release"``), at most one of each kind.
    neighbouring : {"replace-one", "add-remove"}
        Neighbouring relation every step's :math:`\mu` was computed for.
    delta : float
        Target total :math:`\delta`.
    target_epsilon : float or None, default=None
        The :math:`\varepsilon` the plan was calibrated to (``None`` when the
        noise was given directly).
    accountant : {"pld", "rdp"}, default="pld"
        Accountant used for calibration and for :meth:`epsilon`.
    info : dict, optional
        Calibration details (``count_share``, ``norm_share``, ``release_share``,
        ``release_count_share``) for display; not used by the accounting.

    Attributes
    ----------
    n_iter : int
        :math:`T`, the number of noisy Lloyd iterations (0 without a ``"lloyd"`` step).
    mu_total : float
        :math:`\mu_{\rm tot}`.
    """

    steps: tuple
    neighbouring: str
    delta: float
    target_epsilon: float | None = None
    accountant: str = "pld"
    info: dict = field(default_factory=dict)

    # ------------------------------------------------------------ steps
    def step(self, kind: str) -> GaussianStep | None:
        """The step of this kind (``None`` if the plan has none)."""
        for s in self.steps:
            if s.kind == kind:
                return s
        return None

    @property
    def n_iter(self) -> int:
        s = self.step("lloyd")
        return 0 if s is None else s.count

    @property
    def mu_total(self) -> float:
        r""":math:`\sqrt{\sum_t \mu_t^2}`: the whole run is exactly :math:`\mu_{\rm tot}`-GDP."""
        return math.sqrt(sum(s.count * s.mu**2 for s in self.steps))

    # ------------------------------------------------------------ accounting
    def charges(self, prefix: str = "DP k-means") -> list[PrivacyCharge]:
        r"""One :class:`~dpkme.privacy.accounting.PrivacyCharge` per step (``count`` repetitions each).

        Each charge records the true noise multiplier :math:`1/\mu` (what RDP
        and PLD compose) and an :math:`(\varepsilon_i,\delta_i)` it satisfies per
        repetition, with :math:`\delta_i = \delta/\sum(\text{counts})` (so basic
        composition of the list is valid too, if loose).
        """
        total = sum(s.count for s in self.steps)
        d_i = self.delta / total
        out = []
        for s in self.steps:
            eps_i = gaussian_epsilon(sigma=1.0 / s.mu, delta=d_i, sensitivity=1.0)
            eps_i = max(eps_i, 1e-9)
            name = {"norm": "norm bound (Algorithm 3 histogram)", "lloyd": f"noisy Lloyd step x{s.count}",
                    "release": "cluster-wise release (sizes and sums)"}[s.kind]
            details = {"kind": s.kind, "mu": s.mu, "sigma_count": s.sigma_count,
                       "sum_noise_multiplier": s.sum_multiplier}
            out.append(PrivacyCharge(label=f"{prefix}: {name}", mechanism="gaussian", epsilon=eps_i, delta=d_i,
                                     noise_multiplier=1.0 / s.mu, count=s.count, details=details,
                                     relation=self.neighbouring))
        return out

    def total_charge(self, label: str = "DP k-means") -> PrivacyCharge:
        r"""The whole run as **one** Gaussian charge with noise multiplier :math:`1/\mu_{\rm tot}`.

        Exact (not an approximation): an adaptive composition of Gaussian
        mechanisms with sensitivities :math:`\mu_t` (in noise units) is
        :math:`\sqrt{\sum\mu_t^2}`-GDP, and its Rényi divergences add the same
        way. Use this for a ledger that shows one line per run; its
        :math:`(\varepsilon,\delta)` is the exact one at the plan's :math:`\delta`.
        """
        z = 1.0 / self.mu_total
        eps = max(gaussian_epsilon(sigma=z, delta=self.delta, sensitivity=1.0), 1e-9)
        details = {"steps": [
            {"kind": s.kind, "count": s.count, "mu": s.mu, "sigma_count": s.sigma_count,
             "sum_noise_multiplier": s.sum_multiplier} for s in self.steps]}
        return PrivacyCharge(label=label, mechanism="gaussian", epsilon=eps, delta=self.delta,
                             noise_multiplier=z, count=1, details=details, relation=self.neighbouring)

    def epsilon(self, *, delta: float | None = None, accountant: str | None = None) -> float:
        """:math:`\\varepsilon` spent at ``delta`` (default: the plan's) by the chosen accountant."""
        delta = self.delta if delta is None else check_delta(delta)
        accountant = self.accountant if accountant is None else check_in(accountant, ACCOUNTANTS, name="accountant")
        charges = self.charges()
        if accountant == "rdp":
            return rdp_epsilon(charges, delta=delta)
        return pld_epsilon(charges, delta=delta)

    def budget_table(self, *, delta: float | None = None, norm_bound: float | None = 1.0) -> list[dict]:
        r"""Rows describing each step, for display (per-iteration budget split).

        ``share`` is the step's part of :math:`\mu_{\rm tot}^2` (the natural
        additive budget of Gaussian mechanisms); ``epsilon_alone`` is what one
        repetition would cost on its own at ``delta``.
        """
        delta = self.delta if delta is None else check_delta(delta)
        tot = self.mu_total**2
        rows = []
        for s in self.steps:
            reps = range(1, s.count + 1) if s.kind == "lloyd" else [None]
            for t in reps:
                rows.append({
                    "step": {"norm": "norm bound (Alg. 3)", "release": "cluster-wise release"}.get(
                        s.kind, f"Lloyd iteration {t}"),
                    "kind": s.kind,
                    "mu": s.mu,
                    "noise_multiplier": 1.0 / s.mu,
                    "share": s.mu**2 / tot,
                    "sigma_count": s.sigma_count,
                    "sigma_sum": None if s.sum_multiplier is None or norm_bound is None else s.sigma_sum(norm_bound),
                    "epsilon_alone": gaussian_epsilon(sigma=1.0 / s.mu, delta=delta, sensitivity=1.0),
                })
        return rows

    def to_dict(self) -> dict:
        return {
            "neighbouring": self.neighbouring, "delta": self.delta, "target_epsilon": self.target_epsilon,
            "accountant": self.accountant, "mu_total": self.mu_total,
            "steps": [{"kind": s.kind, "count": s.count, "mu": s.mu, "sigma_count": s.sigma_count,
                       "sum_noise_multiplier": s.sum_multiplier} for s in self.steps],
            **({"info": dict(self.info)} if self.info else {}),
        }


# --------------------------------------------------------------------------- constructors
def _mu_total_for(epsilon: float, delta: float, accountant: str) -> float:
    if accountant == "pld":
        return 1.0 / analytic_sigma(epsilon=epsilon, delta=delta, sensitivity=1.0)
    return 1.0 / calibrate_gaussian_composition(epsilon=epsilon, delta=delta, count=1, sensitivity=1.0, method="rdp")


def _check_share(value, name) -> float:
    v = check_positive_float(value, name=name, allow_zero=True)
    if not v < 1.0:
        raise ValueError(f"{name} must lie in [0, 1), got {value}.")
    return v


def plan_kmeans(
    *,
    epsilon: float,
    delta: float,
    n_iter: int,
    neighbouring: str = "replace-one",
    n_features: int = 1000,
    count_share: float | None = None,
    norm_step: bool = False,
    norm_share: float = 0.1,
    release_share: float = 0.0,
    release_count_share: float | None = None,
    accountant: str = "pld",
) -> PrivacyPlan:
    r"""Calibrate the noise of a run to a target :math:`(\varepsilon,\delta)`.

    :math:`\mu_{\rm tot}` is the largest value for which the ``accountant``
    certifies :math:`(\varepsilon,\delta)` (``"pld"``: exact Gaussian DP,
    :math:`\mu_{\rm tot} = 1/\sigma` with :math:`\sigma` Balle & Wang's analytic
    calibration at unit sensitivity; ``"rdp"``: the Rényi-DP bound, a bit more
    noise). It is split as

    .. math::
        \mu_{\rm norm}^2 = s_{\rm norm}\mu_{\rm tot}^2,\quad
        \mu_{\rm rel}^2 = s_{\rm rel}\mu_{\rm tot}^2,\quad
        \mu_{\rm iter}^2 = (1 - s_{\rm norm} - s_{\rm rel})\,\mu_{\rm tot}^2 / T,

    equal for every Lloyd iteration.

    Parameters
    ----------
    epsilon, delta : float
        Total target for the whole run.
    n_iter : int
        Number :math:`T \ge 1` of noisy Lloyd iterations.
    neighbouring : {"replace-one", "add-remove"}, default="replace-one"
        Neighbouring relation of the guarantee.
    n_features : int, default=1000
        :math:`J` (only used by the default ``count_share``).
    count_share : float in (0, 1), optional
        Share of each step's :math:`\mu^2` on the sizes
        (:func:`~dpkme.clustering.sensitivity.auto_count_share` if omitted).
    norm_step : bool, default=False
        Include Algorithm 3 (private norm bound), with ``norm_share`` of the budget.
    norm_share : float in (0, 1), default=0.1
        :math:`s_{\rm norm}`, the part of :math:`\mu_{\rm tot}^2` spent on the
        norm histogram; ignored unless ``norm_step``.
    release_share : float in [0, 1), default=0.0
        :math:`s_{\rm rel}`, the budget of the cluster-wise release step (0: no
        release step). ``norm_share + release_share`` must be below 1.
    release_count_share : float, optional
        ``count_share`` of the release step (default: as for the Lloyd steps).
    accountant : {"pld", "rdp"}, default="pld"
        Accountant that certifies the target (and is stored in the plan).

    Returns
    -------
    PrivacyPlan
        Its :meth:`~PrivacyPlan.epsilon` is at most ``epsilon`` (up to a
        relative :math:`10^{-9}`).

    Raises
    ------
    ValueError
        On an invalid value, or shares that leave no budget for the Lloyd steps.

    Examples
    --------
    >>> plan = plan_kmeans(epsilon=1.0, delta=1e-6, n_iter=5)
    >>> plan.n_iter, round(plan.epsilon(), 6)
    (5, 1.0)
    >>> lloyd = plan.step("lloyd")
    >>> lloyd.sigma_count == lloyd.sum_multiplier   # replace-one: sigma_n = sigma_s / C
    True
    """
    epsilon = check_epsilon(epsilon)
    delta = check_delta(delta)
    T = check_positive_int(n_iter, name="n_iter")
    check_in(neighbouring, NEIGHBOURING, name="neighbouring")
    check_in(accountant, ACCOUNTANTS, name="accountant")
    J = check_positive_int(n_features, name="n_features")
    # range (0, 1) checked by noise_for_mu; a non-number is refused here with a ValueError (not float()'s TypeError)
    cs = auto_count_share(neighbouring, J) if count_share is None else check_positive_float(count_share,
                                                                                           name="count_share")
    rcs = cs if release_count_share is None else check_positive_float(release_count_share,
                                                                      name="release_count_share")
    ns = _check_share(norm_share, "norm_share") if norm_step else 0.0
    if norm_step and ns == 0.0:
        raise ValueError("norm_step=True needs norm_share > 0.")
    rs = _check_share(release_share, "release_share")
    if ns + rs >= 1.0:
        raise ValueError(f"norm_share + release_share must be < 1 (the Lloyd steps need budget), got {ns + rs}.")
    mu_tot = _mu_total_for(epsilon, delta, accountant)
    # shrink very slightly so that the split (rounded) plan is certified by the accountant
    for attempt in range(50):
        steps = []
        if ns:
            mu_n = math.sqrt(ns) * mu_tot
            steps.append(GaussianStep("norm", 1, mu_n, histogram_sensitivity(neighbouring) / mu_n))
        mu_it = math.sqrt((1.0 - ns - rs) / T) * mu_tot
        sn, ss = noise_for_mu(mu_it, neighbouring=neighbouring, count_share=cs)
        mu_it = step_mu(sigma_count=sn, sigma_sum=ss, neighbouring=neighbouring)
        steps.append(GaussianStep("lloyd", T, mu_it, sn, ss))
        if rs:
            mu_r = math.sqrt(rs) * mu_tot
            sn, ss = noise_for_mu(mu_r, neighbouring=neighbouring, count_share=rcs)
            steps.append(GaussianStep("release", 1, step_mu(sigma_count=sn, sigma_sum=ss, neighbouring=neighbouring),
                                      sn, ss))
        plan = PrivacyPlan(tuple(steps), neighbouring, delta, epsilon, accountant,
                           info={"count_share": cs, "norm_share": ns, "release_share": rs,
                                 "release_count_share": rcs if rs else None})
        if plan.epsilon() <= epsilon * (1.0 + 1e-9):
            return plan
        mu_tot *= 1.0 - 1e-9 * 2**attempt
    raise ValueError(f"could not calibrate the plan to epsilon={epsilon}, delta={delta}.")  # pragma: no cover


def plan_from_noise(
    *,
    n_iter: int,
    sigma_count: float,
    sum_multiplier: float,
    delta: float,
    neighbouring: str = "replace-one",
    sigma_norm: float | None = None,
    release_sigma_count: float | None = None,
    release_sum_multiplier: float | None = None,
    accountant: str = "pld",
) -> PrivacyPlan:
    r"""A plan from noise scales given directly; ``plan.epsilon()`` is then the :math:`\varepsilon` spent.

    Parameters
    ----------
    n_iter : int
        Number :math:`T \ge 1` of noisy Lloyd iterations.
    sigma_count : float
        Std of the noise on each cluster size.
    sum_multiplier : float
        Std of the noise on each coordinate of a cluster sum, divided by the
        norm bound :math:`C`.
    delta : float
        :math:`\delta` at which :math:`\varepsilon` is reported.
    neighbouring : {"replace-one", "add-remove"}, default="replace-one"
        Neighbouring relation the sensitivities :math:`\mu_t` are computed for
        (:func:`~dpkme.clustering.sensitivity.step_mu`).
    sigma_norm : float, optional
        Std of the noise on each bin of the norm histogram (Algorithm 3), if used.
    release_sigma_count, release_sum_multiplier : float, optional
        Noise of a cluster-wise release step, if any (both or neither).
    accountant : {"pld", "rdp"}, default="pld"
        Accountant used by :meth:`PrivacyPlan.epsilon`.

    Returns
    -------
    PrivacyPlan
        With ``target_epsilon=None``.

    Examples
    --------
    >>> plan = plan_from_noise(n_iter=5, sigma_count=10.0, sum_multiplier=10.0, delta=1e-6)
    >>> round(plan.step("lloyd").mu, 6), round(plan.mu_total, 6)   # mu = 2C/sigma_s; sqrt(5) * mu
    (0.2, 0.447214)
    >>> round(plan.epsilon(), 2)
    1.99
    """
    T = check_positive_int(n_iter, name="n_iter")
    delta = check_delta(delta)
    check_in(neighbouring, NEIGHBOURING, name="neighbouring")
    check_in(accountant, ACCOUNTANTS, name="accountant")
    steps = []
    if sigma_norm is not None:
        sh = check_positive_float(sigma_norm, name="sigma_norm")
        steps.append(GaussianStep("norm", 1, histogram_sensitivity(neighbouring) / sh, sh))
    sn = check_positive_float(sigma_count, name="sigma_count")
    m = check_positive_float(sum_multiplier, name="sum_multiplier")
    steps.append(GaussianStep("lloyd", T, step_mu(sigma_count=sn, sigma_sum=m, neighbouring=neighbouring), sn, m))
    if (release_sigma_count is None) != (release_sum_multiplier is None):
        raise ValueError("give both release_sigma_count and release_sum_multiplier, or neither.")
    if release_sigma_count is not None:
        rn = check_positive_float(release_sigma_count, name="release_sigma_count")
        rm = check_positive_float(release_sum_multiplier, name="release_sum_multiplier")
        steps.append(GaussianStep("release", 1, step_mu(sigma_count=rn, sigma_sum=rm, neighbouring=neighbouring),
                                  rn, rm))
    return PrivacyPlan(tuple(steps), neighbouring, delta, None, accountant)


def paper_plan(*, sigma_K: float, n_iter: int, delta: float, sigma_C: float | None = None,
               neighbouring: str = "replace-one", accountant: str = "pld") -> PrivacyPlan:
    r"""The noise of Acs et al.'s Algorithm 2: :math:`\sqrt2\sigma_K` (sizes), :math:`\sqrt2\sigma_K C` (sums), :math:`\sqrt2\sigma_C` (histogram, once).

    The plan charges this noise with the **true** sensitivities
    (:mod:`dpkme.clustering.sensitivity`), so ``paper_plan(...).epsilon()`` is what the paper's
    parameters actually give; :func:`paper_epsilon` is what the paper reports.

    Parameters
    ----------
    sigma_K : float
        The paper's :math:`\sigma_K > 0` (noise multiplier of the Lloyd steps).
    n_iter : int
        :math:`T \ge 1`, the number of noisy Lloyd iterations.
    delta : float
        :math:`\delta` at which :math:`\varepsilon` is reported.
    sigma_C : float, optional
        The paper's :math:`\sigma_C > 0` for the norm histogram (Algorithm 3);
        ``None`` (default) for a feature map with an a-priori norm bound (no
        norm step).
    neighbouring : {"replace-one", "add-remove"}, default="replace-one"
        Neighbouring relation of the accounting.
    accountant : {"pld", "rdp"}, default="pld"
        Accountant used by :meth:`PrivacyPlan.epsilon`.

    Returns
    -------
    PrivacyPlan

    Examples
    --------
    Under replace-one the Lloyd step has :math:`\mu = \sqrt2/\sigma_K`:

    >>> plan = paper_plan(sigma_K=5.0, n_iter=5, delta=1e-6)
    >>> round(plan.step("lloyd").mu, 6), round(plan.epsilon(), 2)
    (0.282843, 2.92)
    """
    sK = check_positive_float(sigma_K, name="sigma_K")
    r2 = math.sqrt(2.0)
    return plan_from_noise(n_iter=n_iter, sigma_count=r2 * sK, sum_multiplier=r2 * sK, delta=delta,
                           neighbouring=neighbouring,
                           sigma_norm=None if sigma_C is None else r2 * check_positive_float(sigma_C, name="sigma_C"),
                           accountant=accountant)


# --------------------------------------------------------------------------- the paper's moments accountant
def paper_log_moment(lam, *, n_iter: int, sigma_K: float, sigma_C: float | None = None,
                     norm_count: int | None = None):
    r"""Eq. (3) of Acs et al.: :math:`T(\lambda^2+\lambda)(1/(4\sigma_C^2) + 1/(2\sigma_K^2))`.

    Without ``sigma_C`` (a-priori norm bound, e.g. RBF random features) the norm
    term is dropped, as in the paper's remark after eq. (3). ``norm_count``
    replaces the :math:`T` in front of the norm term (eq. (3) counts the norm
    mechanism in every iteration; Algorithm 2 runs it once: ``norm_count=1``).

    Parameters
    ----------
    lam : float or array_like
        Order(s) :math:`\lambda > 0` of the moment.
    n_iter : int
        :math:`T \ge 1`, the number of Lloyd iterations.
    sigma_K : float
        The paper's :math:`\sigma_K > 0`.
    sigma_C : float, optional
        The paper's :math:`\sigma_C > 0` (norm histogram); ``None`` drops the term.
    norm_count : int, optional
        Number of times the norm term is counted (default :math:`T`, as eq. (3) is written).

    Returns
    -------
    ndarray
        :math:`\alpha_K(\lambda)`, the shape of ``lam`` (a 0-d array for a scalar).

    Examples
    --------
    >>> paper_log_moment([1, 2], n_iter=5, sigma_K=2.0)
    array([1.25, 3.75])
    >>> paper_log_moment([1, 2], n_iter=5, sigma_K=2.0, sigma_C=1.0, norm_count=1)
    array([1.75, 5.25])
    """
    T = check_positive_int(n_iter, name="n_iter")
    sK = check_positive_float(sigma_K, name="sigma_K")
    lam = np.asarray(lam, dtype=np.float64)
    out = T * (lam**2 + lam) / (2.0 * sK**2)
    if sigma_C is not None:
        nc = T if norm_count is None else check_positive_int(norm_count, name="norm_count")
        out = out + nc * (lam**2 + lam) / (4.0 * check_positive_float(sigma_C, name="sigma_C") ** 2)
    return out


def gaussian_log_moment(lam, mu2: float):
    r"""True log moment of a Gaussian mechanism (or composition) with :math:`\sum\mu^2 = ` ``mu2``: :math:`\lambda(\lambda+1)\mu^2/2`.

    Equivalently Rényi DP :math:`\alpha\mu^2/2` of order :math:`\alpha = \lambda + 1`
    (Mironov 2017); twice Lemma 1 of the paper at the same noise.

    Parameters
    ----------
    lam : float or array_like
        Order(s) :math:`\lambda > 0`.
    mu2 : float
        :math:`\mu^2 \ge 0`, the squared sensitivity in noise units
        (:math:`\sum_t\mu_t^2` for an adaptive composition).

    Returns
    -------
    ndarray
        :math:`\lambda(\lambda+1)\mu^2/2`, the shape of ``lam``.

    Examples
    --------
    >>> gaussian_log_moment([1, 2, 3], 0.5)
    array([0.5, 1.5, 3. ])
    """
    lam = np.asarray(lam, dtype=np.float64)
    return lam * (lam + 1.0) * float(mu2) / 2.0


def moments_epsilon(log_moment: Callable, *, delta: float, lambdas: Iterable[int] = _LAMBDAS) -> float:
    r"""Theorem 1 of the paper (Abadi et al.'s moments accountant): :math:`\min_\lambda(\alpha(\lambda) + \log(1/\delta))/\lambda`.

    Parameters
    ----------
    log_moment : callable
        ``log_moment(lam) -> array``: :math:`\alpha(\lambda)` evaluated on a
        float array of orders (e.g. :func:`paper_log_moment` or
        :func:`gaussian_log_moment` with the other arguments bound).
    delta : float
        Target :math:`\delta \in (0, 1)`.
    lambdas : iterable of int, default=range(1, 257)
        Orders :math:`\lambda > 0` to minimise over.

    Returns
    -------
    float
        The smallest :math:`\varepsilon` over ``lambdas``.

    Raises
    ------
    ValueError
        If ``lambdas`` is empty or holds a non-positive order, or ``delta`` is invalid.

    Examples
    --------
    >>> round(moments_epsilon(lambda lam: gaussian_log_moment(lam, 0.25), delta=1e-5), 4)
    2.5263
    """
    delta = check_delta(delta)
    lam = np.asarray(list(lambdas), dtype=np.float64)
    if lam.size == 0 or np.any(lam <= 0):
        raise ValueError("lambdas must be a non-empty list of positive orders.")
    vals = (np.asarray(log_moment(lam), dtype=np.float64) + math.log(1.0 / delta)) / lam
    return float(vals.min())


def paper_epsilon(*, n_iter: int, sigma_K: float, delta: float, sigma_C: float | None = None,
                  norm_count: int | None = None, lambdas: Iterable[int] = _LAMBDAS) -> float:
    r""":math:`\varepsilon` the paper would report for DP k-means: eq. (3) through Theorem 1.

    :func:`moments_epsilon` of :func:`paper_log_moment` (which understates the
    true value under replace-one; compare :func:`compare_with_paper`).

    Parameters
    ----------
    n_iter : int
        :math:`T \ge 1`, the number of Lloyd iterations.
    sigma_K : float
        The paper's :math:`\sigma_K > 0`.
    delta : float
        Target :math:`\delta \in (0, 1)`.
    sigma_C : float, optional
        The paper's :math:`\sigma_C > 0` (norm histogram); ``None``: no norm step.
    norm_count : int, optional
        Times the norm term is counted (default :math:`T`, as in eq. (3)).
    lambdas : iterable of int, default=range(1, 257)
        Orders :math:`\lambda` to minimise over.

    Returns
    -------
    float
        The paper's :math:`\varepsilon`.

    Examples
    --------
    >>> round(paper_epsilon(n_iter=10, sigma_K=10.0, delta=1e-5), 4)
    1.5675
    """
    return moments_epsilon(lambda lam: paper_log_moment(lam, n_iter=n_iter, sigma_K=sigma_K, sigma_C=sigma_C,
                                                        norm_count=norm_count),
                           delta=delta, lambdas=lambdas)


def compare_with_paper(*, n_iter: int, sigma_K: float, delta: float, sigma_C: float | None = None,
                       lambdas: Iterable[int] = _LAMBDAS) -> dict:
    r"""The paper's :math:`\varepsilon` for its own noise, next to what is actually true.

    Parameters
    ----------
    n_iter : int
        :math:`T \ge 1`, the number of Lloyd iterations.
    sigma_K : float
        The paper's :math:`\sigma_K > 0` (noise of the Lloyd steps, :func:`paper_plan`).
    delta : float
        :math:`\delta \in (0, 1)` at which every :math:`\varepsilon` is computed.
    sigma_C : float, optional
        The paper's :math:`\sigma_C > 0` (norm histogram); ``None``: no norm step.
    lambdas : iterable of int, default=range(1, 257)
        Orders :math:`\lambda` of the moments-accountant conversions.

    Returns
    -------
    dict
        ``paper``: eq. (3) + Theorem 1 (norm step counted :math:`T` times, as
        written); ``paper_norm_once``: the same with the norm step once. For each relation (``"add-remove"``, ``"replace-one"``) a dict
        with ``moments`` (true log moments, same conversion as the paper, norm
        step once), ``moments_norm_T`` (same, norm step :math:`T` times: equal to
        ``paper`` under add/remove), ``rdp`` and ``pld`` (:mod:`dpkme.privacy.accounting`
        on the plan's charges, norm step once), ``mu_total`` and
        ``moment_ratio`` (true per-iteration log moment / the paper's).
        Also ``n_iter``, ``sigma_K``, ``sigma_C``, ``delta`` as given.

    Examples
    --------
    The paper's figure is exact under add/remove and too small under replace-one:

    >>> c = compare_with_paper(n_iter=5, sigma_K=5.0, delta=1e-6)
    >>> round(c["paper"], 4), round(c["add-remove"]["moments"], 4), round(c["replace-one"]["moments"], 4)
    (2.4513, 2.4513, 3.5269)
    >>> round(c["replace-one"]["moment_ratio"], 6)
    2.0
    """
    T = check_positive_int(n_iter, name="n_iter")
    lambdas = tuple(lambdas)
    out = {"paper": paper_epsilon(n_iter=T, sigma_K=sigma_K, sigma_C=sigma_C, delta=delta, lambdas=lambdas),
           "paper_norm_once": paper_epsilon(n_iter=T, sigma_K=sigma_K, sigma_C=sigma_C, delta=delta,
                                            norm_count=1, lambdas=lambdas),
           "n_iter": T, "sigma_K": sigma_K, "sigma_C": sigma_C, "delta": delta}
    for rel in NEIGHBOURING:
        plan = paper_plan(sigma_K=sigma_K, sigma_C=sigma_C, n_iter=T, delta=delta, neighbouring=rel)
        it = plan.step("lloyd")
        nm = plan.step("norm")
        mu2_once = plan.mu_total**2
        mu2_T = T * it.mu**2 + (T * nm.mu**2 if nm is not None else 0.0)
        out[rel] = {
            "moments": moments_epsilon(lambda lam, m=mu2_once: gaussian_log_moment(lam, m), delta=delta, lambdas=lambdas),
            "moments_norm_T": moments_epsilon(lambda lam, m=mu2_T: gaussian_log_moment(lam, m), delta=delta,
                                              lambdas=lambdas),
            "rdp": plan.epsilon(accountant="rdp"),
            "pld": plan.epsilon(accountant="pld"),
            "mu_total": plan.mu_total,
            "moment_ratio": (it.mu**2 / 2.0) / (1.0 / (2.0 * float(sigma_K) ** 2)),
        }
    return out
