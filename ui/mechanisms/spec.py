"""What a release mechanism of the Release page is: :class:`MechanismSpec`, :class:`RunContext`, shared controls.

A mechanism is a :class:`MechanismSpec`: a label and explanation, a check that the current dataset supports
it, a function that draws its own widgets and returns its parameters, a function that runs it (calling
:mod:`dpkme`) and returns a :class:`~dpkme.release.Release`, and a function that gives the
:class:`~dpkme.privacy.accounting.PrivacyCharge` for the ledger -- the library's own (``dpkme.release.*_charge``,
computed from the public parameters before the run), never re-derived here. Each mechanism lives in its own module of
:mod:`ui.mechanisms` and exposes ``SPECS``; :mod:`ui.mechanisms` lists the modules explicitly. This module
imports no mechanism.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

import streamlit as st

from dpkme.privacy.accounting import PrivacyCharge
from dpkme.privacy.spec import NeighbouringRelation, PrivacySpec

from .. import state as S


@dataclass
class RunContext:
    """Everything a mechanism may use: public settings and the private rows ``ds.X``."""

    ds: S.Dataset
    kernel: Any
    epsilon: float
    delta: float
    calibration: str
    sensitivity_mode: str
    random_state: int | None          # None: fresh OS-entropy noise, nothing recorded; an int: replay mode
    noise_source: str                 # "os-entropy" | "opendp" | "seeded" (replay mode, not private)
    progress: Callable[[float, str], None] = lambda f, m: None

    @property
    def privacy(self) -> PrivacySpec:
        """The run's typed privacy facts (the Release page's mechanisms are replace-one)."""
        return PrivacySpec(epsilon=self.epsilon, delta=self.delta, relation=NeighbouringRelation.REPLACE_ONE,
                           calibration=self.calibration, noise=self.noise_source)

    @property
    def noise(self) -> str:
        """The library's ``noise=`` argument: OpenDP's vetted sampler or numpy's."""
        return "opendp" if self.noise_source == "opendp" else "numpy"


@dataclass(frozen=True)
class MechanismSpec:
    key: str
    label: str
    summary: str
    explain: str                                         # markdown with $math$, for an expander
    spends_budget: bool
    requires: Callable[[S.Dataset], str | None]          # None if usable, else why not
    controls: Callable[[S.Dataset], dict]                # draws widgets, returns parameters
    run: Callable[[RunContext, dict], Any]                 # a Release, or (Release, owner-only metrics)
    charge: Callable[[RunContext, dict], PrivacyCharge | None]  # computed before the run (budget check)
    evaluate_projection: bool = False                    # show the noise-free projection next to it
    output: str = "points"                               # "points" (weighted points) or "function" (values on a grid)
    tags: tuple[str, ...] = field(default_factory=tuple)
    #: The library's charge of the finished release (same ε, δ as ``charge``), recorded instead of it.
    final_charge: Callable[[Any], PrivacyCharge] | None = None
    #: Owner's view drawn under the release's metrics (rec, ds); optional.
    show: Callable[[Any, Any], None] | None = None
    #: Teaching material drawn under the controls (ds, params); optional.
    teach: Callable[[Any, dict], None] | None = None
    #: Predicted cost of the mechanism itself (ds, params, kernel) -> dpkme.cost.CostEstimate, for the size
    #: guard; the evaluation against the private data is added by the runner. None: negligible.
    cost: Callable[[Any, dict, Any], Any] | None = None
    #: Run in a background thread (``ui.runner.start_background``): the page stays usable, shows the progress and a
    #: Stop button, and records the release when the thread has finished. The charge is taken before it starts.
    background: bool = False


# --------------------------------------------------------------------------- shared controls
def n_points_control(maximum: int, *, label="Number of synthetic points M", help=None) -> int:
    ss = st.session_state
    maximum = max(1, int(maximum))
    if ss.get(S.N_POINTS, 1) > maximum:
        ss[S.N_POINTS] = maximum
    if ss.get(S.N_POINTS, 1) < 1:
        ss[S.N_POINTS] = 1
    return int(st.number_input(label, min_value=1, max_value=maximum, step=10, key=S.N_POINTS,
                               persist_state="session", help=help))


def with_noise_source(charge: PrivacyCharge, ctx: RunContext) -> PrivacyCharge:
    """The library's charge (``dpkme.release.*_charge``) with the run's noise source in its details."""
    return S.relabel_charge(charge, noise_source=ctx.noise_source)


def needs_public(ds: S.Dataset) -> str | None:
    """``requires`` of the mechanisms that use the publishable subset."""
    if ds.n_public < 1:
        return "needs a publishable subset: choose a publishable fraction > 0 on the Data page."
    return None


# --------------------------------------------------------------------------- the charge before the run, in words
def preview_charge(spec: MechanismSpec, ds: S.Dataset, params: dict, *, kernel, epsilon: float, delta: float,
                   calibration: str, sensitivity_mode: str) -> PrivacyCharge | None:
    """The library's charge of ``spec`` with these public settings, for display before any release.

    The same ``spec.charge`` the runner checks the budget with (``dpkme.release.*_charge``), so a page shows the
    Δ and σ of the mechanism that will run. Nothing is drawn and no seed is claimed (the context has none); the
    charges read only public sizes. ``None`` for a mechanism that spends no budget (the baseline).
    """
    if not spec.spends_budget:
        return None
    ctx = RunContext(ds=ds, kernel=kernel, epsilon=float(epsilon), delta=float(delta), calibration=calibration,
                     sensitivity_mode=sensitivity_mode, random_state=None, noise_source="os-entropy")
    return spec.charge(ctx, params)


def sensitivity_words(sens: float, n: int) -> str:
    """Δ as the Release and Kernel pages write it: ``√2/N`` or ``2/N`` with its value, else the value alone."""
    for formula, value in (("√2/N", 2 ** 0.5 / n), ("2/N", 2.0 / n)):
        if abs(sens - value) <= 1e-9 * value:
            return f"Δ = {formula} = {sens:.3g}"
    return f"Δ = {sens:.3g}"


def charge_words(spec: MechanismSpec, charge: PrivacyCharge | None, n: int) -> str:
    """The noise of the mechanism that will run, in one line: its Δ and σ (from its charge), or why it has none."""
    if charge is None:
        return f"**{spec.label}**: spends no budget and adds no noise"
    d = charge.details
    if charge.mechanism == "gaussian" and "sigma" in d and "sensitivity" in d:
        scale = "noise scale s" if d.get("mechanism") == "gp-release" else "σ"
        return f"**{spec.label}**: {sensitivity_words(float(d['sensitivity']), n)}, {scale} = {float(d['sigma']):.3g}"
    if "rho" in d and "rounds" in d:        # a zCDP composition (the adaptive release): ρ and its rounds
        return (f"**{spec.label}**: ρ = {float(d['rho']):.3g} zCDP over up to {int(d['rounds'])} rounds "
                "(Gaussian measurements Δ₂ = √2/N, exponential-mechanism selections)")
    if charge.delta == 0 and charge.mechanism != "gaussian":
        return f"**{spec.label}**: pure ε-DP ({charge.mechanism} mechanism), no Gaussian noise"
    if charge.noise_multiplier is None:
        return f"**{spec.label}**: ({charge.epsilon:g}, {S.fmt_delta(charge.delta)})-DP ({charge.mechanism})"
    return f"**{spec.label}**: composed noise multiplier σ/Δ = {float(charge.noise_multiplier):.3g}"
