r"""Privacy: noise calibration, sensitivities, accounting and the budget ledger, leak guards, private bandwidths.

:mod:`~dpkme.privacy.calibration`
    Gaussian and Laplace calibration (:func:`calibrate_gaussian`, analytic and
    classic), the noise samplers and the OpenDP option (:func:`add_gaussian_noise`).
:mod:`~dpkme.privacy.sensitivity`
    RKHS sensitivities of kernel mean embeddings and feature means, and the
    checks a private release makes on its inputs.
:mod:`~dpkme.privacy.accounting`
    :class:`PrivacyCharge` (what one release spent), basic/RDP/PLD composition,
    and the :class:`BudgetLedger`.
:mod:`~dpkme.privacy.leaks`
    :class:`PrivacyLeakWarning`, data-dependence markers and the privacy claim of a result.
:mod:`~dpkme.privacy.bandwidth`
    Public (median heuristic on public rows) and private (exponential mechanism) length scales.
:mod:`~dpkme.privacy.planning`
    The ε that reaches a target accuracy in expectation (:func:`epsilon_for_rkhs_error`,
    :func:`epsilon_for_mean_error`), from public quantities only: planning, not a release.
:mod:`~dpkme.privacy.result`
    :class:`PrivateResult`, the protocol every release type follows: ``charge``, ``metadata()``, ``to_json()``.
:mod:`~dpkme.privacy.spec`
    :class:`PrivacySpec`, the typed request (ε, δ, relation, calibration, noise source) that releases, their
    charges, the planners and :func:`~dpkme.audit.run_audit` accept as ``privacy=``.
:mod:`~dpkme.privacy.explain`
    The guarantee of a release in plain words for one person (:func:`guarantee_in_words`,
    :func:`release_guarantee_in_words`).

The names below are loaded on first use (``dpkme.privacy.calibrate_gaussian``), so
importing one submodule does not import the accountants.
"""

import importlib
from typing import Any

_EXPORTS = {
    "calibrate_gaussian": "calibration", "GaussianCalibration": "calibration", "calibrate_laplace": "calibration",
    "LaplaceCalibration": "calibration", "add_gaussian_noise": "calibration", "analytic_sigma": "calibration",
    "classic_sigma": "calibration", "gaussian_epsilon": "calibration", "gaussian_delta": "calibration",
    "UnprovenCalibrationWarning": "calibration",
    "NEIGHBOURING": "sensitivity", "kme_sensitivity": "sensitivity", "feature_mean_sensitivity": "sensitivity",
    "PrivacyCharge": "accounting", "BudgetLedger": "accounting", "gaussian_charge": "accounting",
    "pure_dp_charge": "accounting", "laplace_charge": "accounting", "basic_composition": "accounting",
    "rdp_epsilon": "accounting", "pld_epsilon": "accounting",
    "PrivacyLeakWarning": "leaks", "mark_not_private": "leaks", "privacy_claim": "leaks",
    "public_lengthscale": "bandwidth", "private_lengthscale": "bandwidth",
    "EpsilonPlan": "planning", "expected_noise_norm": "planning", "expected_rkhs_error": "planning",
    "epsilon_for_rkhs_error": "planning", "expected_mean_error": "planning", "epsilon_for_mean_error": "planning",
    "guarantee_in_words": "explain", "release_guarantee_in_words": "explain",
    "PrivateResult": "result",
    "PrivacySpec": "spec", "NeighbouringRelation": "spec",
}

__all__ = sorted(_EXPORTS)


def __getattr__(name: str) -> Any:
    if name in _EXPORTS:
        value = getattr(importlib.import_module(f"{__name__}.{_EXPORTS[name]}"), name)
        globals()[name] = value
        return value
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")


def __dir__() -> list[str]:
    return sorted(set(globals()) | set(__all__))
