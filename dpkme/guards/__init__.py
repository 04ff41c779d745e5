r"""Guards around the private path: leak guards, private bandwidth selection, and a size guard.

:mod:`~dpkme.guards.leaks`
    :class:`PrivacyLeakWarning`; :func:`warn_data_dependent` and
    :func:`mark_not_private` for data-dependent choices a user insists on;
    :func:`find_data_dependent_inputs` (heuristic detection of inputs that
    coincide with statistics of the private data); the floating-point caveats.
:mod:`~dpkme.guards.bandwidth`
    :func:`public_lengthscale` (median heuristic on public rows only) and
    :func:`private_lengthscale` (exponential mechanism over a public grid,
    utility of sensitivity :math:`2/N`, with a ledger charge).
:mod:`~dpkme.guards.cost`
    :func:`estimate_cost`: predicted seconds and bytes of every mechanism
    from its sizes, and the confirmation thresholds :data:`CONFIRM_SECONDS`,
    :data:`CONFIRM_BYTES`.
"""

from .bandwidth import (
    MAX_ALL_PAIRS_LIMIT,
    MAX_ALL_PAIRS_ROWS,
    PAIR_MODES,
    LengthscaleChoice,
    lengthscale_grid,
    lengthscale_sensitivity,
    lengthscale_utility,
    pair_distance_cdf,
    private_lengthscale,
    public_lengthscale,
)
from .cost import (
    ALL_PAIRS_TERM,
    CONFIRM_BYTES,
    CONFIRM_SECONDS,
    COST_MECHANISMS,
    DEFAULT_COST_MODEL,
    CostEstimate,
    CostModel,
    calibrate_cost_model,
    estimate_cost,
    needs_confirmation,
)
from .leaks import (
    REMEDIES,
    LeakRecord,
    PrivacyLeakWarning,
    find_data_dependent_inputs,
    is_private,
    leak_reasons,
    mark_not_private,
    warn_data_dependent,
)

__all__ = [
    "MAX_ALL_PAIRS_LIMIT", "MAX_ALL_PAIRS_ROWS", "PAIR_MODES", "LengthscaleChoice", "lengthscale_grid",
    "lengthscale_sensitivity", "lengthscale_utility", "pair_distance_cdf", "private_lengthscale", "public_lengthscale",
    "ALL_PAIRS_TERM", "CONFIRM_BYTES", "CONFIRM_SECONDS", "COST_MECHANISMS", "DEFAULT_COST_MODEL", "CostEstimate", "CostModel",
    "calibrate_cost_model", "estimate_cost", "needs_confirmation",
    "REMEDIES", "LeakRecord", "PrivacyLeakWarning", "find_data_dependent_inputs", "is_private", "leak_reasons",
    "mark_not_private", "warn_data_dependent",
]
