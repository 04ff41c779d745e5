r"""The settings every audit of :mod:`dpkme.audit.mechanisms` shares: the claim, the runs, the test and the seed.

One frozen :class:`AuditSettings` replaces the eight keyword arguments that each ``audit_*`` function used to take
(those of :mod:`dpkme.audit.mechanisms` and :func:`~dpkme.audit.dpsgd.audit_dpsgd`);
the functions keep their own options (``variant``, ``n``, ``kernel``, ``X``, ...) as keyword-only arguments.
Fields left unset take the audit's own defaults (:data:`DEFAULT_RUNS`; :math:`\delta = 10^{-2}`, or 0 for the
pure ε-DP audits of :data:`PURE_DP_AUDITS`).

Examples
--------
>>> from dpkme.audit import AuditSettings, run_audit
>>> settings = AuditSettings(runs=2000, alpha=0.05, random_state=0)
>>> run_audit("gaussian", settings=settings, variant="half-noise").violation
True
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from .._validation import _short

__all__ = ["AuditSettings", "DEFAULT_RUNS", "PURE_DP_AUDITS", "DEFAULT_EPSILON", "DEFAULT_DELTA"]

#: The claimed ε of an audit whose settings leave it unset.
DEFAULT_EPSILON = 2.0
#: The claimed δ of an approximate-DP audit whose settings leave it unset: with a few thousand runs the bound
#: resolves probabilities of about :math:`10^{-3}` (see :mod:`dpkme.audit.mechanisms`).
DEFAULT_DELTA = 1e-2
#: The audits of pure ε-DP mechanisms: they audit :math:`\delta = 0` and accept no other δ.
PURE_DP_AUDITS = ("laplace", "exponential")
#: Runs on each dataset of an audit whose settings leave ``runs`` unset (the time grows linearly with it).
DEFAULT_RUNS = {"gaussian": 5000, "laplace": 5000, "algorithm1": 3000, "algorithm2": 3000, "exponential": 5000,
                "gp": 3000, "kmeans": 1000, "two-sample": 2000, "dpsgd": 2000}


@dataclass(frozen=True, kw_only=True)
class AuditSettings:
    r"""The claim audited, the runs, the statistical test and the seed: what every audit shares.

    Validated when an audit runs (the ``ValueError`` names the value), so one instance can serve several audits.

    Parameters
    ----------
    epsilon : float, optional
        The claimed ε (default 2.0, :data:`DEFAULT_EPSILON`).
    delta : float, optional
        The claimed δ in (0, 1) (default :data:`DEFAULT_DELTA`). The pure ε-DP audits (:data:`PURE_DP_AUDITS`)
        audit :math:`\delta = 0` and accept only 0 or None; their curve test checks the
        :math:`(\varepsilon', \delta')` profile that pure ε-DP implies (:func:`~dpkme.audit.bounds.pure_dp_curve`).
    runs : int, optional
        Runs of the mechanism on each dataset, 10 to :data:`~dpkme.audit.mechanisms.MAX_RUNS` (default: the
        audit's own, :data:`DEFAULT_RUNS`); the time grows linearly.
    alpha : float in (0, 1), default=0.05
        Miss probability of the bound: the reported bound exceeds the true ε of the pair with probability at most
        :math:`\alpha`.
    selection : {"split", "bonferroni"}, default="split"
        How the event is chosen (:func:`~dpkme.audit.bounds.audit_scores`); ``"bonferroni"`` tries every
        threshold of a grid (every distinct log-likelihood ratio for the Laplace audit).
    selection_fraction : float in (0, 1), default=0.3
        Share of each dataset's runs used to choose the event with ``"split"``.
    random_state : int, Generator or None, default=0
        Seed of the audit (0: reproducible). Independent seeds of every run (and of the public random
        features, where the audit has any) are derived from it; ``None`` draws them from OS entropy.
    progress : callable, optional
        ``progress(fraction, message)``, strictly increasing fractions ending at 1.0; raising from it cancels
        the audit.

    Examples
    --------
    >>> s = AuditSettings(runs=500)
    >>> s.runs, s.alpha, s.epsilon is None
    (500, 0.05, True)
    """

    epsilon: float | None = None
    delta: float | None = None
    runs: int | None = None
    alpha: float = 0.05
    selection: str = "split"
    selection_fraction: float = 0.3
    random_state: Any = 0
    progress: Callable[[float, str], Any] | None = None


def _as_settings(settings) -> AuditSettings:
    """``settings``, or the default :class:`AuditSettings` for None (ValueError naming anything else)."""
    if settings is None:
        return AuditSettings()
    if not isinstance(settings, AuditSettings):
        raise ValueError(f"settings must be a dpkme.audit.AuditSettings, got {_short(settings)}.")
    return settings


def _unpack(settings: AuditSettings | None, *, audit: str) -> tuple:
    """``(epsilon, delta, runs, alpha, selection, selection_fraction, random_state, progress)`` of one audit."""
    s = _as_settings(settings)
    epsilon = DEFAULT_EPSILON if s.epsilon is None else s.epsilon
    delta = (0.0 if audit in PURE_DP_AUDITS else DEFAULT_DELTA) if s.delta is None else s.delta
    runs = DEFAULT_RUNS[audit] if s.runs is None else s.runs
    return epsilon, delta, runs, s.alpha, s.selection, s.selection_fraction, s.random_state, s.progress
