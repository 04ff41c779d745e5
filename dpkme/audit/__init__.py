r"""Empirical privacy auditing: statistically valid lower bounds on ε for every dpkme mechanism.

A differential-privacy claim is a statement about every pair of neighbouring
datasets. An audit picks a worst-case pair :math:`D \sim D'`
(:mod:`~dpkme.audit.neighbours`), runs the mechanism many times on both
(:mod:`~dpkme.audit.mechanisms`), reduces each output to a scalar, and turns
the frequencies of threshold events into a lower bound on ε that holds with
probability at least :math:`1-\alpha` (:mod:`~dpkme.audit.bounds`, one-sided
Clopper-Pearson intervals on both error rates, the threshold chosen on a
separate split).

* For a correctly calibrated mechanism the bound stays below the claimed ε
  (with probability :math:`\ge 1-\alpha`, whatever the number of runs).
* For a mis-calibrated one (half the noise, unnormalised cosine features, an
  L1 sensitivity that ignores the dimension, the perturbed two-sample
  statistic) the bound exceeds the claim: the audit *refutes* it at confidence
  :math:`1-\alpha`.

An audit can refute a claim, never prove one: a passing audit only says that
this pair, this scalar and this many runs found nothing.

Typical use::

    from dpkme.audit import AuditSettings, run_audit
    res = run_audit("gaussian", variant="half-noise", settings=AuditSettings(runs=5000, alpha=0.05))
    res.epsilon_lower_bound, res.claimed_epsilon, res.passed
    res.analytic.deltas, res.analytic.epsilon_pair, res.analytic.epsilon_claimed   # exact curves
    res.lower_bounds["deltas"], res.lower_bounds["epsilons"]                         # audited curve
    res.privacy_loss.loss_d, res.privacy_loss.loss_neighbour                         # histograms

How much a passing audit is worth is its **power**: :func:`~dpkme.audit.power.audit_power` computes
the probability that an audit with a given number of runs refutes a mechanism whose noise is too small
by a factor (√2 by default), and :func:`~dpkme.audit.power.runs_for_power` the runs needed for a
target power (:mod:`~dpkme.audit.power`)::

    from dpkme.audit import audit_power, runs_for_power
    audit_power(2000, epsilon=2.0, delta=1e-2, alpha=0.05).power   # about 1/3
    runs_for_power(0.95, epsilon=2.0, delta=1e-2, alpha=0.05)      # about 7 000

How much a release tells a well-informed attacker about one row is what
:mod:`~dpkme.audit.membership` measures: :func:`~dpkme.audit.membership.membership_attack` runs the optimal
membership-inference attack on Algorithm 1 or 2 over a grid of ε, next to the bound
:math:`(e^\varepsilon + \delta)/(1 + e^\varepsilon)` on any attacker's accuracy and the exact accuracy
:math:`\Phi(\Delta/(2\sigma))` of the attack on a Gaussian release::

    from dpkme.audit import membership_attack
    res = membership_attack(epsilons=[0.1, 1.0, 4.0], runs=1000)
    res.accuracy, res.accuracy_low, res.accuracy_high, res.exact_accuracy, res.bound

One step of the DP generative models' DP-SGD (:mod:`dpkme.generative`) is audited by
:func:`~dpkme.audit.dpsgd.audit_dpsgd` (a canary row; the library's step passes, a variant without
per-example clipping is caught). It needs JAX and is not (yet) in :data:`AUDITS`::

    from dpkme.audit import AuditSettings, audit_dpsgd
    settings = AuditSettings(runs=2000)
    audit_dpsgd(settings=settings).passed, audit_dpsgd(settings=settings, variant="no-clip").violation   # True, True

The Privacy audit page's exhibits of published bounds that fail, and the privacy-loss and ε(δ) curves it
draws from an :class:`AuditResult`, are plain functions of :mod:`~dpkme.audit.exhibits`.

Cost: a few runs per millisecond for most mechanisms (k-means: ~2 ms per run);
:func:`dpkme.cost.estimate_cost` (``"audit"``) predicts the time of a call.
"""

from .bounds import (
    CANDIDATES,
    DEFAULT_DELTA_GRID,
    SELECTIONS,
    AnalyticCurve,
    AuditResult,
    PrivacyLossHistogram,
    audit_scores,
    clopper_pearson_lower,
    clopper_pearson_upper,
    curve_from_delta_function,
    epsilon_lower_bound,
    gaussian_curve,
    privacy_loss_histogram,
    pure_dp_curve,
)
from .dpsgd import DPSGD_VARIANTS, audit_dpsgd
from .exhibits import (
    FeatureNormExhibit,
    epsilon_delta_curves,
    feature_norm_exhibit,
    l1_dimension_exhibit,
    perturbed_statistic_exhibit,
    privacy_loss_densities,
)
from .mechanisms import (
    AUDITS,
    EXHIBITS,
    MAX_RUNS,
    VARIANTS,
    audit_algorithm1,
    audit_algorithm2,
    audit_exponential,
    audit_gaussian,
    audit_gp_release,
    audit_kmeans,
    audit_laplace,
    audit_two_sample,
    clipped_mean_release,
    cosine_feature_release,
    laplace_feature_release,
    run_audit,
)
from .membership import (
    DEFAULT_ATTACK_EPSILONS,
    MEMBERSHIP_MECHANISMS,
    MembershipAttack,
    gaussian_attack_accuracy,
    membership_attack,
    membership_bound,
)
from .neighbours import (
    best_pair,
    cosine_antipodal_pair,
    neighbour_pair,
    outlier_neighbour,
    rff_antipodal_pair,
    rff_l1_pair,
)
from .power import POWER_FAMILIES, AuditPower, audit_power, runs_for_power
from .settings import DEFAULT_RUNS, PURE_DP_AUDITS, AuditSettings

__all__ = [
    "CANDIDATES", "DEFAULT_DELTA_GRID", "SELECTIONS", "AnalyticCurve", "AuditResult", "PrivacyLossHistogram",
    "audit_scores", "clopper_pearson_lower", "clopper_pearson_upper", "curve_from_delta_function",
    "epsilon_lower_bound", "gaussian_curve", "privacy_loss_histogram", "pure_dp_curve",
    "AUDITS", "EXHIBITS", "MAX_RUNS", "VARIANTS", "audit_algorithm1", "audit_algorithm2", "audit_exponential",
    "audit_gaussian", "audit_gp_release", "audit_kmeans", "audit_laplace", "audit_two_sample",
    "clipped_mean_release", "cosine_feature_release", "laplace_feature_release", "run_audit",
    "POWER_FAMILIES", "AuditPower", "audit_power", "runs_for_power",
    "best_pair", "cosine_antipodal_pair", "neighbour_pair", "outlier_neighbour", "rff_antipodal_pair", "rff_l1_pair",
    "FeatureNormExhibit", "epsilon_delta_curves", "feature_norm_exhibit", "l1_dimension_exhibit",
    "perturbed_statistic_exhibit", "privacy_loss_densities",
    "DEFAULT_ATTACK_EPSILONS", "MEMBERSHIP_MECHANISMS", "MembershipAttack", "gaussian_attack_accuracy",
    "membership_attack", "membership_bound",
    "DPSGD_VARIANTS", "audit_dpsgd",
    "AuditSettings", "DEFAULT_RUNS", "PURE_DP_AUDITS",
]
