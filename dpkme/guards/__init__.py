r"""Deprecated: the guards moved (this package goes in the next release; see :mod:`dpkme._shim`).

:mod:`dpkme.guards.leaks` is now :mod:`dpkme.privacy.leaks`, :mod:`dpkme.guards.bandwidth` is
:mod:`dpkme.privacy.bandwidth` and :mod:`dpkme.guards.cost` is :mod:`dpkme.cost`; this package
re-exports their names and warns with a :class:`DeprecationWarning` on import.
"""

import warnings

warnings.warn("dpkme.guards is deprecated and will be removed in the next release; import dpkme.privacy.leaks, "
              "dpkme.privacy.bandwidth or dpkme.cost instead", DeprecationWarning, stacklevel=2)


from ..cost import (
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
from ..privacy.bandwidth import (
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
from ..privacy.leaks import (
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
