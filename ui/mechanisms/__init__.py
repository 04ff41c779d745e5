"""The release mechanisms of the Release page, as a registry built in a fixed order.

One module per mechanism, each exposing ``SPECS`` (its :class:`~ui.mechanisms.spec.MechanismSpec` objects);
:data:`MODULES` lists them explicitly, and :data:`REGISTRY` (key -> spec) follows that order -- the order
of the Release page's menu. Every mechanism is always there: no module is imported conditionally. The
mechanism modules import :mod:`.spec` (and :mod:`ui.state`, :mod:`ui.compute`, :mod:`ui.figures`), never
this package nor each other, so the registry has no import cycle (``tests/test_app_structure.py``).

A new mechanism is one more module and one more entry of :data:`MODULES`; the Release, Curves and Ledger
pages need no change.
"""

from __future__ import annotations

from . import adaptive, algorithm1, algorithm2, baseline, clusterwise, exponential, gp
from .spec import MechanismSpec, RunContext, charge_words, preview_charge

#: The mechanism modules, in the order of the Release page's menu.
MODULES = (baseline, algorithm1, algorithm2, adaptive, exponential, clusterwise, gp)


def _build(modules) -> dict[str, MechanismSpec]:
    registry: dict[str, MechanismSpec] = {}
    for module in modules:
        for spec in module.SPECS:
            if spec.key in registry:
                raise ValueError(f"two mechanisms with the key {spec.key!r} ({module.__name__})")
            registry[spec.key] = spec
    return registry


#: key -> spec: baseline, alg1-public, alg1-q, alg2, adaptive, exponential, clusterwise, gp.
REGISTRY: dict[str, MechanismSpec] = _build(MODULES)




def default_mechanism(ds) -> str:
    """The Release page's mechanism before the user picks one: the adaptive KME release for a mixed table (issue 25;
    Algorithms 1 and 2 stay in the menu for the paper's experiments), else Algorithm 1 with the publishable subset
    when there is one, else Algorithm 1 with points from q."""
    return "adaptive" if ds.is_table else "alg1-public" if ds.n_public else "alg1-q"


def current_mechanism(ds, selected: str | None) -> str:
    """The mechanism the Release page will run: the selected one when it is registered, else the default."""
    return selected if selected in REGISTRY else default_mechanism(ds)


__all__ = ["MODULES", "REGISTRY", "MechanismSpec", "RunContext", "charge_words", "current_mechanism",
           "default_mechanism", "preview_charge"]
