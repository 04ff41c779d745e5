"""The Budget ledger page's views (``pages/ledger.py``): the budget, what was spent on the current data (totals under
basic, RDP and PLD composition, the cumulative curve, the charges), what the ledger protects, export and import,
and starting over."""

from __future__ import annotations

import math

import pandas as pd
import streamlit as st

from dpkme.privacy.accounting import basic_composition
from ui import glossary as G
from ui import persist
from ui import state as S
from ui.charts import plotly_chart
from ui.figures import cumulative_epsilon_figure
from ui.mechanisms.adaptive import parts_frame
from ui.numbers import MISSING_CELL, cell
from ui.widgets import PAGE_DATA, guard

ss = st.session_state

# --------------------------------------------------------------------------- this page's session and widget keys
IMPORT_MSG = "bud._import_msg"
IMPORTED = "bud._imported"
CONFIRM = "bud.confirm"
EXPORT = "bud.export"
FIG = "bud.fig"
IMPORT = "bud.import"
RESET = "bud.reset"


def header() -> None:
    """The page's title: privacy losses add up."""
    st.title("Budget ledger")
    st.markdown(
        "Privacy losses **add up**: two releases of the same data at ε = 1 each are together at most ε = 2 private "
        "(basic composition) — and, for Gaussian noise, provably less (Rényi-DP and privacy-loss-distribution "
        "accounting, computed with Google's `dp_accounting`). Set a total budget; the Release page refuses releases "
        "that would exceed it."
    )


def budget(ds):
    """The total ε and δ budget of this data; merges an uploaded ledger first, so the totals below include it.
    Returns ``(ε budget, δ budget, ledger)``."""
    c1, c2 = st.columns(2)
    c1.number_input("Total ε budget for this data", min_value=0.001, max_value=1000.0, step=0.5, format="%.4g",
                    key=S.BUDGET_EPS, persist_state="session")
    c2.select_slider("Total δ budget", options=[1e-8, 1e-7, 1e-6, 1e-5, 1e-4, 1e-3], key=S.BUDGET_DELTA,
                     format_func=S.fmt_delta, persist_state="session", help=G.help_text("δ"))
    c2.caption("← more privacy · less privacy →, like the ε and δ sliders of the Kernel & privacy page.")
    eps_b, delta_b = S.budget()
    led = S.ledger_for(ds)

    # an uploaded ledger is merged before anything is composed, so the totals below include it
    _up = ss.get(IMPORT)
    if _up is not None and ss.get(IMPORTED) != (_up.name, _up.size):
        ss[IMPORTED] = (_up.name, _up.size)
        try:
            outcome = S.ledger_import(ds, _up.getvalue())
        except ValueError as exc:
            ss[IMPORT_MSG] = ("error", f"Could not import {_up.name!r}: {exc}")
        else:
            ss[IMPORT_MSG] = outcome.message(_up.name)
    elif _up is None:
        ss.pop(IMPORTED, None)
        ss.pop(IMPORT_MSG, None)
    return eps_b, delta_b, led


def spent(ds, led, eps_b: float, delta_b: float) -> None:
    """What was spent on this data: the non-private releases, the totals, the cumulative curve and the charges."""
    st.subheader(f"Spent on: {ds.name}")
    n_np = S.nonprivate_count(ds)
    if n_np:
        st.error(f"{n_np} release(s) of this data were NOT differentially private (e.g. a kernel lengthscale computed "
                 "from the private rows). No ledger can bound what they revealed.")
    if not led.all_charges:
        st.info("Nothing spent yet: no private release of this data in this session.")
    else:
        with guard("compose the privacy losses"):
            tot = S.composed(led.all_charges, delta_b)
            basic = tot["basic"]
            head = S.budget_headline(led)             # the sidebar shows the same sentences (ui/widgets.py)
            over = head["over"]
            if over:
                st.error(f"Budget exceeded — {head['text']}. No accountant certifies the releases within ε = {eps_b:g}, "
                         f"δ = {S.fmt_delta(delta_b)}. Stop releasing this data, or accept a weaker guarantee by raising the budget.")
            else:
                st.success(f"Within budget: {head['text']}.")
            st.progress(min(head["epsilon"] / eps_b, 1.0) if math.isfinite(head["epsilon"]) else 1.0,
                        text=f"{head['epsilon'] / eps_b:.0%} of the ε budget")
            if head["explain"]:
                st.caption(head["explain"])
            st.caption(S.ledger_counts(led))
            a, b, c, d = st.columns(4)
            a.metric("Charges", len(led.all_charges), help="A repeat-draw batch of k releases is one charge with count k.")
            b.metric("Basic composition", f"ε = {basic[0]:.3g}",
                     help=f"The plain sum of the charges' ε and δ (here δ = {S.fmt_delta(basic[1])}): always valid, never the "
                          "tightest for many releases.")
            b.caption(f"with δ = {S.fmt_delta(basic[1])}")        # a caption, not a metric's delta (no "↑": nothing changed)
            c.metric(f"Rényi DP at δ = {S.fmt_delta(delta_b)}", f"ε = {tot['rdp'][0]:.4g}")
            d.metric(f"PLD at δ = {S.fmt_delta(delta_b)}", f"ε = {tot['pld'][0]:.4g}")
            st.caption(f"Three valid bounds on the same releases. The headline above is the smallest one valid at the "
                       f"budget's δ = {S.fmt_delta(delta_b)}, here the {S.ACCOUNTANT_WORDS[head['method']]}; it is the number the "
                       "sidebar shows and the one the budget is checked on.")
            if tot.get("parts"):
                st.info("**Parallel composition over disjoint parts.** Some charges read only one part of these "
                        "individuals (the private rows, or the held-out rows used by a two-sample test). Each person is "
                        "in one part and is affected only by the charges that read it, so each part is composed on its "
                        "own and the guarantee is that of the worst part: "
                        + "; ".join(f"**{p}**: ε = {v[0]:.3g}" for p, v in tot["parts"].items())
                        + f" (worst: {tot['worst_part']}). Basic composition above is for that part too.")

            # cumulative curves
            charges = list(led.all_charges)
            xs, b_eps, r_eps, p_eps, best_eps = [0], [0.0], [0.0], [0.0], [0.0]
            for i in range(1, len(charges) + 1):
                t = S.composed(charges[:i], delta_b)
                xs.append(i)
                best_eps.append(t["best"][0])
                b_eps.append(t["basic"][0] if t["basic"][1] <= delta_b else math.inf)
                r_eps.append(t["rdp"][0])
                p_eps.append(t["pld"][0])
            plotly_chart(cumulative_epsilon_figure(xs, {"basic": b_eps, "Rényi DP": r_eps, "PLD (tightest)": p_eps},
                                                   budget=eps_b, delta_text=S.fmt_delta(delta_b)), key=FIG)
            rows = led.to_records()
            st.dataframe(pd.DataFrame([{
                "#": rec["index"] + 1, "charge": rec["label"], "ε": rec["epsilon"], "δ": S.fmt_delta(rec["delta"]),
                "count": rec["count"], "part": ", ".join(rec["parts"] or ("everyone",)),
                "total ε so far": eps_so_far,
            } for rec, eps_so_far in zip(rows, best_eps[1:])]), hide_index=True, width="stretch", column_config={
                "charge": st.column_config.TextColumn(width="large"),
                "total ε so far": st.column_config.NumberColumn(
                    format="%.4g", help=f"The headline after this charge: tightest bound at δ = {S.fmt_delta(delta_b)}."),
            })
            with st.expander("All fields of each charge"):
                st.dataframe(pd.DataFrame([{
                    "#": rec["index"] + 1, "charge": rec["label"], "mechanism": rec["mechanism"], "ε": rec["epsilon"],
                    "δ": S.fmt_delta(rec["delta"]), "count": rec["count"],
                    "σ/Δ": cell(rec["noise_multiplier"], lambda v: f"{v:.4g}"),
                    "calibration": cell(rec["details"].get("calibration")), "noise": cell(rec["details"].get("noise_source")),
                    "part": ", ".join(rec["parts"] or ("everyone",)),
                    "relation": rec["relation"],
                    "running sum of ε (basic)": rec["cumulative_epsilon_basic"],
                } for rec in rows]), hide_index=True)
                st.caption(f"σ/Δ: the noise multiplier (glossary in the sidebar; {MISSING_CELL} where the mechanism has none). Relation: which tables count as "
                           "neighbours (replace one row).")
            for rec in rows:           # a charge composed of parts (the adaptive release): one charge, its parts itemised
                parts = parts_frame(rec["details"].get("parts_itemised"))
                if parts is not None:
                    with st.expander(f"Charge #{rec['index'] + 1} itemised: {len(parts)} parts ({rec['label']})"):
                        st.dataframe(parts, hide_index=True)
                        spent = rec["details"].get("rho_spent")
                        st.caption(f"One charge in the totals above: ({rec['epsilon']:g}, {S.fmt_delta(rec['delta'])})-DP "
                                   f"from ρ = {float(rec['details'].get('rho', float('nan'))):.4g} zCDP"
                                   + (f" (the parts spent {float(spent):.4g})" if spent is not None else "")
                                   + ". Each round's selection (exponential mechanism, ρ = ε²/8) and measurement "
                                   "(Gaussian) add their ρ; the parts were chosen adaptively within that total.")


def how_it_works(led) -> None:
    """How the totals are computed, a changed split, and what the ledger protects."""
    with st.expander("How are the totals computed?"):
        st.markdown(
            "* **Basic composition** (Dwork & Roth, Thm 3.16): (Σ εᵢ, Σ δᵢ). Always valid, grows linearly.\n"
            "* **Rényi DP** (Mironov 2017): a Gaussian release with noise multiplier σ/Δ has Rényi divergence "
            "λ(Δ/σ)²/2 of every order λ; these add up and are converted back to (ε, δ).\n"
            "* **Privacy loss distributions**: T Gaussian releases with multipliers σᵢ/Δᵢ are together exactly one "
            "Gaussian mechanism with multiplier (Σ (Δᵢ/σᵢ)²)^(-1/2) (Dong, Roth & Su 2022); its exact (ε, δ) curve is "
            "used. This is the tightest of the three.\n\n"
            "* **Pure ε-DP charges** (the exponential mechanism: δ = 0) enter basic composition as (ε, 0) and the "
            "RDP/PLD accountants as pure-DP events.\n"
            "* **Parallel composition**: a charge that declares the part of the data it reads (private rows, held-out "
            "rows — a public random split made on the Data page) only counts for the people in that part; the ledger "
            "composes each part separately and reports the worst.\n\n"
            "All releases are for the replace-one neighbouring relation (the *relation* column; the ledger refuses to "
            "mix relations). Evaluations shown in the app (RKHS distances, L² errors, curves) are for you, the data "
            "owner, and are not releases."
        )

    if led.all_charges and led.split_changed:
        st.warning("**The split changed after budget was spent.** Rows may have moved between the held-out and the "
                   "private part, so no part is composed on its own any more: every charge counts against every row "
                   "(sequential composition). The totals above are for that.")

    st.subheader("What this ledger protects — and what it does not")
    st.markdown(
        "* **The unit of privacy is one person (one row).** The ledger adds up what every release, test, clustering "
        "and private choice of this data cost, and the guarantee is for each person in it.\n"
        "* **Parts of one split** (private rows, held-out rows) are composed separately only while the split stays the "
        "same; once budget is spent, the publishable subset is fixed (changing it would publish protected rows in the "
        "clear), and a change of the held-out split switches the ledger to sequential composition over all rows.\n"
        "* **Not covered:** rows you declared public (they are published in the clear); results marked *NOT private* "
        "(replayable demos with seeded noise, or settings read off the private rows) — no ledger can bound what they "
        "reveal; releases made outside this app or in another browser session.\n"
        "* **It lives in this session, in the server's memory.** " + persist.RELOAD_WORDS + " Export it below to "
        "keep it beyond that, and import it later: the import adds every charge of the file to this data's "
        "ledger (nothing spent is forgotten)."
    )


def export_import(ds, led) -> None:
    """Export this ledger (JSON), import one exported earlier."""
    ex1, ex2 = st.columns(2)
    with ex1:
        st.download_button("Export this ledger (JSON)", data=S.ledger_export(ds), mime="application/json",
                           file_name="dpkme_ledger.json", key=EXPORT, on_click="ignore",
                           icon=":material/download:", disabled=not led.all_charges)
    with ex2:
        st.file_uploader("Import a ledger exported earlier (JSON)", type=None, key=IMPORT)
        kind, text = ss.get(IMPORT_MSG, (None, None))
        if kind == "error":
            st.error(text)
        elif kind == "warning":
            st.warning(text)
        elif kind == "success":
            st.success(text)


def _reset(ds) -> None:
    """Button callback: the charges move to the ledger's archive (still spent, still exported)."""
    S.ledger_for(ds).reset()          # the charges move to the ledger's archive: still spent, still exported
    ss.pop(S.REPEAT_DRAWS, None)
    ss[CONFIRM] = False
    st.toast("Ledger reset.", icon=":material/delete_sweep:")



def start_over(ds, led, delta_b: float) -> None:
    """A new dataset, the reset of this data's ledger (its archive still counts), forgetting the session."""
    st.subheader("Start over")
    st.markdown(
        "A new dataset (other individuals) starts a fresh ledger automatically — load one on the Data page. "
        "Resetting the ledger of the **same** data does not undo anything that was published: the budget is a "
        "property of the data, not of this app."
    )
    st.page_link(PAGE_DATA, label="Load a new dataset", icon=":material/table_view:")
    archived = list(led.archive)
    if archived:
        tot_arch = S.composed(archived, delta_b)
        st.warning(f"{len(archived)} charge(s) of this data were reset earlier in this session or a ledger it imported (together ε = {tot_arch['best'][0]:.3g} "
                   f"at δ = {S.fmt_delta(delta_b)}). A reset only clears the list above: the archived charges still count in the "
                   "headline, in every budget check and in the export, because the people in the data paid for them.")
    confirm = st.checkbox("I understand: clear the list of charges (they stay in the archive and keep counting)",
                          key=CONFIRM)
    st.button("Reset this ledger", disabled=not confirm, key=RESET, on_click=_reset, args=(ds,))
    st.caption("On a shared computer, when you are done: forget this whole session (every ledger, release, upload and "
               "setting) so that the next user cannot reload or resume it.")
    persist.forget_button()


def other_ledgers(delta_b: float) -> None:
    """The other datasets of this session (two-sample lab cases, uploaded pairs) and what they spent."""
    ledgers = ss.get(S.LEDGERS, {})
    if len(ledgers) > 1:
        with st.expander("Other datasets of this session (including two-sample lab cases and uploaded pairs)"):
            st.dataframe(pd.DataFrame([{
                "data": S.ledger_name(k), "charges": len(l.all_charges), "basic ε": basic_composition(l.all_charges)[0],
                "basic δ": S.fmt_delta(basic_composition(l.all_charges)[1]),
                "headline ε": S.composed(l.all_charges, delta_b)["best"][0] if l.all_charges else 0.0,
            } for k, l in ledgers.items()]), hide_index=True, width="stretch", column_config={
                "headline ε": st.column_config.NumberColumn(
                    format="%.4g", help=f"Tightest bound at the budget's δ = {S.fmt_delta(delta_b)} (worst part), as in the "
                                        "sidebar."),
            })
