r"""Where a release is blocked by the budget, say so there, and what the app offers (issue 16 walk).

With the default total budget (ε = 5) the Release page's three-ε demo -- real releases at the ε explorer's
0.1, 1 and 10, together ε = 11.1 -- was refused at the last one with an error below the page and no way forward in
sight. :func:`release_budget_hint` shows, next to the **Release** button and before it is pressed, that the next
release would exceed the budget, and points to what the app offers: raise the total on the Budget ledger page, lower
ε, see what ε does without spending anything (the ε explorer on the same page; planning ε from an accuracy on the
Kernel & privacy page), or -- for teaching -- allow exceeding the budget. The check is the runner's own
(:func:`ui.gate.run_private`: ``BudgetLedger.exceeds_budget`` under basic, RDP and PLD composition) on the
library's charge of the release (:func:`ui.mechanisms.preview_charge`); nothing is charged here.
"""

from __future__ import annotations

import streamlit as st

from . import state as S
from .mechanisms import MechanismSpec, preview_charge
from .runner import private_problems
from .widgets import PAGE_KERNEL, PAGE_LEDGER

__all__ = ["release_budget_hint", "would_exceed"]

_CACHE = "_budget_hint_cache"


def would_exceed(ds: S.Dataset, charge) -> bool:
    r"""Whether adding ``charge`` to the ledger of ``ds``'s individuals would exceed the budget.

    The same verdict as the runner's check (``BudgetLedger.exceeds_budget``). When the plain sum of every
    :math:`\varepsilon` and :math:`\delta` stays within the budget, basic composition certifies it at once; otherwise
    the accountants' verdict is memoised in the session (it is not free).

    Parameters
    ----------
    ds : ui.state.Dataset
        The current data (its ledger, with the current budget).
    charge : dpkme.privacy.accounting.PrivacyCharge or None
        The charge of the next release; None (a mechanism that spends nothing) never exceeds.

    Returns
    -------
    bool
        True if no accountant certifies the ledger plus ``charge`` within the budget.
    """
    if charge is None:
        return False
    if not charge.parts:
        charge = S.relabel_charge(charge, parts=(S.PART_PRIVATE,))
    led = S.ledger_for(ds)
    eps_b, delta_b = S.budget()
    charges = [*led.all_charges, charge]
    if (sum(c.epsilon * c.count for c in charges) <= eps_b
            and sum(c.delta * c.count for c in charges) <= delta_b):
        return False
    cache = st.session_state.setdefault(_CACHE, {})
    key = (S._charge_key(charges), eps_b, delta_b)
    if key not in cache:
        if len(cache) > 64:
            cache.clear()
        cache[key] = bool(led.exceeds_budget(charge))
    return cache[key]


def release_budget_hint(ds: S.Dataset, spec: MechanismSpec, params: dict | None, *, kernel, eps: float,
                        noise_source: str, allow_over: bool) -> bool:
    r"""Above the Release button: if the next release would exceed the budget, say so and what to do, with links.

    Parameters
    ----------
    ds : ui.state.Dataset
        The current data.
    spec : ui.mechanisms.MechanismSpec
        The mechanism the Release button runs.
    params : dict or None
        Its settings (None: not usable, nothing to check).
    kernel : dpkme.kernels.Kernel
        The session's kernel.
    eps : float
        The session's :math:`\varepsilon`.
    noise_source : str
        The noise source chosen on the page: a release that is not private (e.g. replay mode) is charged nothing
        and never blocked.
    allow_over : bool
        The page's own over-budget permission (:func:`ui.gate.over_budget_checkbox`): then the next release goes
        ahead, recorded as over budget.

    Returns
    -------
    bool
        True if the release would exceed the budget (the hint is shown).
    """
    if params is None or not spec.spends_budget or private_problems(noise_source, ds):
        return False
    ss = st.session_state
    try:
        charge = preview_charge(spec, ds, params, kernel=kernel, epsilon=eps, delta=S.delta(),
                                calibration=ss[S.CALIBRATION], sensitivity_mode=ss[S.SENS_MODE])
        over = would_exceed(ds, charge)
    except ValueError:
        return False                 # the settings are refused elsewhere on the page, with their own message
    if not over:
        return False
    eps_b, delta_b = S.budget()
    spent = S.budget_headline(S.ledger_for(ds))["epsilon"]
    if allow_over:
        st.caption(f":material/warning: This release (ε = {eps:g}) takes the privacy loss on this data past your "
                   f"total of ε = {eps_b:g}: allowed for teaching, it is recorded as over budget.")
        return True
    st.warning(
        f"**Over the budget.** A release at ε = {eps:g} would take the privacy loss on this data past your total of "
        f"ε = {eps_b:g}, δ = {S.fmt_delta(delta_b)} (spent so far: ε = {spent:.3g}), so **Release** will refuse it. "
        "What you can do:\n"
        "- **raise the total budget** on the Budget ledger page (a weaker overall guarantee; the ledger keeps "
        "counting every release);\n"
        "- **lower ε** with the ε control above;\n"
        "- **see what ε does without spending anything**: the ε explorer below (planning: not a release), or plan "
        "ε from the accuracy you need on the Kernel & privacy page;\n"
        "- for teaching only, tick *Allow exceeding the budget for the next run* on this page (that one release is then recorded as over budget).",
        icon=":material/account_balance_wallet:")
    st.page_link(PAGE_LEDGER, label="Raise the budget (ledger)", icon=":material/account_balance_wallet:")
    st.page_link(PAGE_KERNEL, label="Plan ε on Kernel & privacy", icon=":material/target:")
    return True
