"""The Kernel & privacy page's views (``pages/kernel.py``): the kernel and its lengthscale, ε and δ, the planner,
the live explanation of the noise."""

from __future__ import annotations

import math

import numpy as np
import pandas as pd
import streamlit as st

from dpkme.cost import estimate_cost
from dpkme.kernels.marginal import DEFAULT_MARGINAL_SHARE
from dpkme.privacy.bandwidth import lengthscale_grid, private_lengthscale
from dpkme.privacy.calibration import analytic_sigma, classic_sigma
from dpkme.privacy.planning import (
    epsilon_for_mean_error,
    epsilon_for_rkhs_error,
    expected_mean_error,
    expected_rkhs_error,
)
from dpkme.release.charges import algorithm2_charge
from dpkme.release.tabular import table_marginals
from dpkme.reproduce import paper_kernel
from ui import compute as C
from ui import gate as GATE
from ui import glossary as G
from ui import presentation as P
from ui import state as S
from ui.charts import plotly_chart
from ui.datasets import median_heuristic
from ui.figures import kernel_profile, sigma_figure, table_kernel_profile_figure
from ui.mechanisms import REGISTRY, current_mechanism
from ui.widgets import PAGE_LEDGER, delta_control, epsilon_control, guard, size_guard

ss = st.session_state

# --------------------------------------------------------------------------- this page's session keys
PRIVATE_CHOICE = "kern.private_choice"     # the last private length-scale choice (LengthscaleChoice.to_dict())
PRIVATE_ERROR = "kern._private_error"      # a refused private choice, shown once
MEDIAN_ERROR = "kern._median_error"        # a refused median heuristic, shown once
PLAN_KIND = "kern.plan_kind"
PLAN_RANGE = "kern.plan_range"
PLAN_TARGETS = {"rkhs": "kern.plan_rkhs", "mean": "kern.plan_mean", "proportion": "kern.plan_proportion"}
PLAN_USE = "kern.plan_use"
PL_EPS = "kern.pl_eps"                     # the private choice of ℓ: its ε, declared bounds, size guard, button
PL_LO = "kern.pl_lo"
PL_HI = "kern.pl_hi"
PL_SIZE = "kern.pl_size"
PL_GO = "kern.pl_go"
SUGGESTED = "kern.suggested"
PAPER = "kern.paper"
MEDIAN_PUBLIC = "kern.median_public"
MEDIAN_PRIVATE = "kern.median_private"
TABLE_PROFILE = "kern.table_profile"
PROFILE = "kern.profile"
SIGMA = "kern.sigma"


def tex_num(x: float, digits: int = 4) -> str:
    """A number for LaTeX: 1e-06 becomes 10^{-6}, 1.2e-07 becomes 1.2 \\times 10^{-7}."""
    if x == 0 or 1e-3 <= abs(x) < 1e5:
        return f"{x:.{digits}g}"
    mant, exp = f"{x:.{digits - 1}e}".split("e")
    mant = mant.rstrip("0").rstrip(".")
    return (f"10^{{{int(exp)}}}" if mant == "1" else f"{mant} \\times 10^{{{int(exp)}}}")



def header() -> None:
    """The page's title and what it decides."""
    st.title("Kernel & privacy")
    st.markdown(
        "The release protects the **kernel mean embedding** (KME) of the data, "
        "μ̂(y) = (1/N) Σₙ k(xₙ, y): a smooth 'density-like' summary. The kernel k decides what the summary can "
        "see; ε and δ decide how much noise hides each individual row."
    )


def ls_sources(ds) -> dict[str, str]:
    """Where the lengthscale came from, in words."""
    return {
        "suggested": f"suggested for this dataset — {ds.lengthscale_note}",
        "declared": "declared by you",
        "paper": "the paper's setting γ = 10⁻⁴/D (declared)",
        "public-subset": "median heuristic on the publishable subset (public data)",
        "private-dp": "private median heuristic — the exponential mechanism over a declared grid (ε-DP, in the ledger)",
        "private-data": "median heuristic on the PRIVATE data — releases are NOT private",
    }


def _choose_privately(ds, eps_l: float, lo: float, hi: float, size: int) -> None:
    """Button callback: the exponential mechanism picks ℓ from the public grid, through the gate (charged first)."""
    grid = lengthscale_grid(lo, hi, size)
    noise = "os-entropy"           # a real choice, charged to the ledger: fresh OS-entropy noise, never a seed

    def charges(rows):
        from dpkme.privacy.accounting import pure_dp_charge

        return [pure_dp_charge("private length scale (exponential mechanism)", epsilon=eps_l,
                               mechanism="exponential")]

    try:
        run = GATE.run_private(page="kernel", ds=ds, charges=charges, noise_source=noise, uses_kernel=False,
                            uses_epsilon=False,
                            compute=lambda inputs: private_lengthscale(ds.X, grid=grid, epsilon=eps_l,
                                                                       random_state=None))
    except ValueError as exc:
        ss[PRIVATE_ERROR] = str(exc)
        return
    choice = run.result
    ss[S.LENGTHSCALE] = float(choice.lengthscale)
    ss[S.LENGTHSCALE_SOURCE] = "private-dp" if run.private else "private-data"
    ss[PRIVATE_CHOICE] = {**choice.to_dict(), "dataset": ds.key, "note": run.note,
                          "owner_probabilities": choice.probabilities().tolist()}


def _set_ls(value: float, source: str) -> None:
    ss[S.LENGTHSCALE] = float(value)
    ss[S.LENGTHSCALE_SOURCE] = source


def _set_median(points, source: str) -> None:
    """Button callback: ℓ = median pairwise distance of ``points``; a refusal is shown, not raised."""
    try:
        _set_ls(median_heuristic(points), source)
    except ValueError as exc:   # e.g. most rows identical: median distance 0
        ss[MEDIAN_ERROR] = str(exc)


def _ls_edited() -> None:
    ss[S.LENGTHSCALE_SOURCE] = "declared"


PLAN_KINDS = {"rkhs": "distance of Algorithm 2's privatised embedding (RKHS)",
              "mean": "error of the mean of one column with a declared range",
              "proportion": "error of a proportion"}


def _use_planned_epsilon(eps: float) -> None:
    """Button callback: put the planned ε into the ε control (on the slider when it is one of its values)."""
    if any(abs(eps - g) <= 1e-12 * g for g in C.epsilon_grid()):
        ss[S.EPS_TYPED] = False
        ss[S.EPS] = min(C.epsilon_grid(), key=lambda g: abs(g - eps))
    else:
        ss[S.EPS_TYPED] = True
        ss[S.EPS_VALUE] = float(eps)


def _plan_target(key: str, label: str, current: float | None, scale: float = 1.0, **kwargs) -> float:
    """A target number input whose first value is the error at the current ε (2 significant digits)."""
    if key not in ss:
        ss[key] = float(f"{current * scale:.2g}") if current else 0.01 * scale
    return float(st.number_input(label, min_value=1e-9, format="%.4g", key=key, persist_state="session",
                                 **kwargs)) / scale


def plan_epsilon(n: int, eps: float | None, delta: float, *, is_table: bool = False, hide_n: bool = False) -> None:
    """The planning expander: the ε at which a stated accuracy is reached in expectation (public inputs only)."""
    size = "size N" if hide_n else f"size N = {n:,}"
    st.caption(":material/info: **Planning: not a release, spends no budget.** It reads no rows: only the public "
               f"{size} (public under replace-one), δ, the calibration and the sizes below. The answer is "
               "a recommendation for the *expected* error of the privacy noise, not a guarantee: the guarantee is "
               "the ε you release with, charged to the ledger then.")
    kind = st.radio("The accuracy you need", list(PLAN_KINDS), format_func=PLAN_KINDS.get, key=PLAN_KIND,
                    persist_state="session")
    calibration = str(ss.get(S.CALIBRATION, "analytic"))
    common = dict(n_private=n, delta=delta, calibration=calibration)
    if kind == "rkhs":
        J = int(ss.get(S.N_FEATURES, 1000))
        now = expected_rkhs_error(eps, n_features=J, **common) if eps else None
        target = _plan_target(PLAN_TARGETS["rkhs"], "Target: expected distance ‖μ̃ − μ̂‖ in feature space", now,
                              help="Between the privatised and the exact mean feature vector (norm ≤ 1), for J = "
                                   f"{J:,} random features (the Release page's setting). The random-feature "
                                   "approximation and the reduced set add their own, ε-independent error.")
        plan = epsilon_for_rkhs_error(target, n_features=J, **common)
        unit = ""
        if is_table:
            st.caption("On a mixed table whose release carries the marginal block (the Release page says when), the "
                       f"kernel features get σ/√(1 − h) each (h = {DEFAULT_MARGINAL_SHARE:g}: about "
                       f"{1 / math.sqrt(1 - DEFAULT_MARGINAL_SHARE):.2f}× this distance at the same ε).")
    else:
        if kind == "mean":
            R = float(st.number_input("Declared range of the column (largest − smallest possible value)",
                                      min_value=1e-9, value=1.0, format="%.4g", key=PLAN_RANGE,
                                      persist_state="session",
                                      help="From public knowledge (units, a codebook), never from the private "
                                           "rows."))
            scale, label, unit = 1.0, "Target: expected absolute error of the mean (column units)", ""
        else:
            R, scale, label, unit = 1.0, 100.0, "Target: expected error of the proportion (percentage points)", " pp"
        now = expected_mean_error(eps, value_range=R, **common) if eps else None
        target = _plan_target(PLAN_TARGETS[kind], label, now, scale)
        plan = epsilon_for_mean_error(target, value_range=R, **common)
        st.caption("A reference of what ε buys for one plain statistic released alone by the Gaussian mechanism "
                   "(sensitivity R/N) — not the accuracy of a mean read off a kernel-embedding release.")
    shown = plan.target * (100.0 if kind == "proportion" else 1.0)
    st.metric("ε that meets the target", f"{plan.epsilon:g}",
              help="The smallest ε whose calibrated noise reaches the target accuracy in expectation, rounded "
                   "up to 3 significant digits (a larger ε means less noise, so the target is still met).")
    err = plan.expected_error * (100.0 if kind == "proportion" else 1.0)
    st.caption(f"At ε = {plan.epsilon:g}: σ = {plan.sigma:.3g}, expected error {err:.3g}{unit} ≤ target "
               f"{shown:.3g}{unit}"
               + (f"; now (ε = {eps:g}): {(now or 0) * (100.0 if kind == 'proportion' else 1.0):.3g}{unit}."
                  if eps else ".")
               + (" Any smaller ε would reach it too: 0.01 is the smallest recommended." if plan.at_floor else ""))
    st.button(f"Use this ε ({plan.epsilon:g})", key=PLAN_USE, on_click=_use_planned_epsilon,
              args=(plan.epsilon,), icon=":material/check:",
              help="Sets the ε control above; nothing is released or charged until you release.")



def settings(ds):
    """Sections 1 (kernel) and 2 (privacy level) side by side: ``(kernel or None, ε or None, δ)``."""
    left, right = st.columns([1, 1], gap="large")
    with left:
        st.subheader("1. Kernel")
        table_kind = None
        if ds.is_table:
            ss.setdefault(S.TABLE_KERNEL, S.DEFAULTS[S.TABLE_KERNEL])
            table_kind = st.radio(
                "Table kernel", list(C.TABLE_KERNEL_LABELS), format_func=C.TABLE_KERNEL_LABELS.get, key=S.TABLE_KERNEL,
                persist_state="session",
                help="Both act on the rows embedded by the declared schema and have k(x, x) = 1 and 0 < k ≤ 1, so the "
                     "sensitivity, the noise and the ledger's charge are the same. The additive kernel is the one "
                     "dpkme.release_table uses by default.")
            if table_kind == "additive":
                if P.show_owner_details():
                    st.info(
                        "**Mixed table: the additive table kernel** (the library's default, `dpkme.release_table`). It is "
                        "a weighted sum of Gaussian terms on the rows *embedded* by the declared schema: one term per "
                        "column (resolving a twentieth of its declared range), one per pair of columns (a fifth) and "
                        r"one on the whole row (the product kernel), $k(x, y) = \sum_t w_t \exp\!\big(-\tfrac{c_t^2}{2}"
                        r"\|e(x)_{S_t} - e(y)_{S_t}\|^2\big)$, with weights 1/4, 1/2 and 1/4 for the three groups "
                        "(`dpkme.kernels.additive.table_kernel`). The one-column and pair terms resolve the 1- and "
                        "2-way marginals that the product kernel smooths away (1.7–4× lower 1-way error on the "
                        "library's table benchmark). The scales follow from the per-column lengthscales and category "
                        "similarities declared **in the schema** (Data page), so there is no ℓ to choose here. "
                        "k(x, x) = 1 and k > 0, so the sensitivity and the noise are those of the product kernel.",
                        icon=":material/table_chart:")
                else:                      # the formula: hidden in presentation mode
                    st.info("**Mixed table: the additive table kernel** (the library's default): a sum of terms on each "
                            "column, each pair of columns and the whole row, at scales declared **in the schema** (Data "
                            "page). It resolves the columns' own distributions better than the product kernel, at the "
                            "same privacy cost.", icon=":material/table_chart:")
                    P.hidden_note("The formula of the additive table kernel")
            elif P.show_owner_details():
                st.info(
                    "**Mixed table: the product kernel.** The kernel acts on the rows *embedded* by the schema, and "
                    "the per-column lengthscales (as fractions of each declared range) and the similarities of two "
                    "different categories are declared **in the schema** (Data page). The Gaussian kernel with ℓ = 1 (the "
                    r"suggestion) is the schema's product kernel $k(x, y) = \prod_j \exp\!\big(-\frac{(x_j - y_j)^2}"
                    r"{2\ell_j^2(\mathrm{hi}_j - \mathrm{lo}_j)^2}\big)\cdot\prod_c \kappa_c^{[x_c \neq y_c]}$ "
                    "(j: numeric columns, c: categorical ones). "
                    r"Another ℓ multiplies every column's lengthscale by ℓ and turns every similarity $\kappa$ into "
                    r"$\kappa^{1/\ell^2}$; "
                    "another kernel family changes the per-column factors. Change the columns' scales in the schema "
                    "instead. The library's default for tables is the additive kernel.", icon=":material/table_chart:")
            else:                          # the formula: hidden in presentation mode
                st.info("**Mixed table: the product kernel.** The kernel acts on the rows *embedded* by the schema; the "
                        "per-column lengthscales and the similarities of two different categories are declared **in "
                        "the schema** (Data page). The Gaussian kernel with ℓ = 1 (the suggestion) is the schema's "
                        "product kernel.", icon=":material/table_chart:")
                P.hidden_note("The formula of the product kernel")
        ss.setdefault(S.LENGTHSCALE, float(ds.suggested_lengthscale))
        ss.setdefault(S.LENGTHSCALE_SOURCE, "suggested")
        source = ss.get(S.LENGTHSCALE_SOURCE, "declared")
        if table_kind != "additive":           # the additive table kernel has no ℓ: its scales come from the schema
            st.selectbox("Kernel family", list(C.KERNEL_LABELS), format_func=C.KERNEL_LABELS.get, key=S.KERNEL,
                         persist_state="session",
                         help="All four are bounded by k(x, x) = 1 and non-negative, as the privacy proofs need.")
            if ds.is_table and (ss[S.KERNEL] != "gaussian" or abs(float(ss.get(S.LENGTHSCALE, 1.0)) - 1.0) > 1e-12):
                st.caption("Now not the schema's product kernel: choose Gaussian with ℓ = 1 (the 'Suggested' button) to "
                           "use it.")
            if ss[S.KERNEL] == "matern":
                st.select_slider("Smoothness ν", options=[0.5, 1.5, 2.5], key=S.NU, persist_state="session")
            if ss[S.KERNEL] == "imq":
                st.number_input("Exponent β", min_value=0.05, max_value=10.0, step=0.05, key=S.BETA, persist_state="session")
            st.number_input("Lengthscale ℓ", min_value=1e-9, format="%.5g", key=S.LENGTHSCALE, on_change=_ls_edited,
                            persist_state="session",
                            help="How far apart two rows may be and still look similar to the kernel. In the data's "
                                 "units" + (" after scaling." if ds.scaling is not None else "."))
            source = ss.get(S.LENGTHSCALE_SOURCE, "declared")
            st.caption(f"Source of ℓ: **{ls_sources(ds).get(source, source)}**")
            if MEDIAN_ERROR in ss:
                st.error(f"Could not use the median heuristic: {ss.pop(MEDIAN_ERROR)} ℓ is unchanged.")
            b1, b2, b3 = st.columns(3)
            b1.button("Suggested", on_click=_set_ls, args=(ds.suggested_lengthscale, "suggested"),
                      help=ds.lengthscale_note, key=SUGGESTED)
            b2.button("Paper: γ = 10⁻⁴/D", on_click=_set_ls, args=(paper_kernel(ds.dim).lengthscale, "paper"),
                      help="Balog et al. (2018), App. B, for the mixture data in its original units.", key=PAPER)
            if ds.n_public >= 2:
                b3.button("Median (public)", key=MEDIAN_PUBLIC,
                          on_click=_set_median, args=(ds.public, "public-subset"),
                          help="Median distance between publishable rows: public data, so no privacy cost.")
            else:
                b3.button("Median (public)", disabled=True, key=MEDIAN_PUBLIC,
                          help="Needs a publishable subset (Data page).")
            with st.expander("Choose ℓ from the private rows, privately (ε-DP, charged to the ledger)",
                             icon=":material/lock:", expanded=source == "private-dp"):
                st.markdown(
                    "A **private median heuristic**: the exponential mechanism picks ℓ from a grid between two bounds *you "
                    "declare*, preferring values close to the median pairwise distance of the private rows. One row moves "
                    "the fraction of pairs closer than ℓ by at most 2/N, so the choice is ε-DP for the ε below; it is "
                    "charged to the ledger, and later releases with this ℓ stay private (composition)."
                )
                ss.setdefault(PL_EPS, 0.1)
                eps_l = float(st.select_slider("ε for choosing ℓ", options=[0.01, 0.03, 0.1, 0.3, 1.0], key=PL_EPS,
                                               persist_state="session"))
                ss.setdefault(PL_LO, float(ds.suggested_lengthscale) / 10)
                ss.setdefault(PL_HI, float(ds.suggested_lengthscale) * 10)
                g1, g2 = st.columns(2)
                lo_l = g1.number_input("Smallest ℓ (declared)", min_value=1e-9, format="%.4g", key=PL_LO,
                                       persist_state="session")
                hi_l = g2.number_input("Largest ℓ (declared)", min_value=1e-9, format="%.4g", key=PL_HI,
                                       persist_state="session")
                st.caption("The bounds must not be computed from the private rows (defaults: the suggested ℓ ÷ 10 and × 10, "
                           "from public information). 30 log-spaced grid values; the choice is a real private release "
                           "(fresh OS-entropy noise, no seed).")
                pl_est = estimate_cost("private-lengthscale", n=ds.n, dim=ds.dim, grid_size=30)
                pl_ok = size_guard(pl_est, key=PL_SIZE, what="the private choice")
                bad_bounds = not (hi_l > lo_l)
                if bad_bounds:
                    st.error(f"The largest ℓ ({hi_l:g}) must be larger than the smallest ({lo_l:g}).")
                GATE.over_budget_checkbox("kernel")
                st.button(f"Choose ℓ privately (spends ε = {eps_l:g})", key=PL_GO, on_click=_choose_privately,
                          args=(ds, eps_l, float(lo_l), float(hi_l), 30), disabled=bad_bounds or not pl_ok)
                if PRIVATE_ERROR in ss:
                    st.error(f"Could not choose ℓ privately: {ss.pop(PRIVATE_ERROR)}")
                pc = ss.get(PRIVATE_CHOICE)
                if pc and pc.get("dataset") == ds.key:
                    if pc.get("note"):
                        st.warning(pc["note"])
                    st.success(f"Chosen privately: ℓ = {pc['lengthscale']:.4g} (ε = {pc['epsilon']:g}, pure DP, "
                               f"{'seed ' + str(pc['seed']) if pc['seed'] is not None else 'OS entropy'}; "
                               f"utility sensitivity {pc['sensitivity']:.2g}, {pc['pairs']} pairs). Charged to the ledger.")
                    st.page_link(PAGE_LEDGER, label="Budget ledger", icon=":material/account_balance_wallet:")

                    def _probabilities(pc) -> None:      # computed from the private rows: owner-only
                        with st.popover("Owner's view: the mechanism's probabilities (private)"):
                            st.caption("Computed from the private rows: for you only, never publish it.")
                            st.bar_chart(pd.DataFrame({"ℓ": [f"{v:.3g}" for v in pc["grid"]],
                                                       "probability": pc["owner_probabilities"]}).set_index("ℓ"))

                    P.OwnerOnly(pc, "The mechanism's probabilities (owner's view)").render(_probabilities)
            with st.expander("Data-driven heuristics on the private rows", icon=":material/warning:"):
                st.markdown(
                    "The popular *median heuristic* sets ℓ to the median distance between rows. Computed on the "
                    "**private** rows it is a statistic of the private data that is not protected by the noise: the "
                    "release would no longer be differentially private. Use the publishable subset, knowledge of the "
                    "units, or the paper's fixed value instead. For teaching, you can see what happens anyway — such "
                    "releases are labelled **NOT PRIVATE** and are not counted as private in the ledger."
                )
                st.button("Use the median heuristic on the private data (NOT private)", key=MEDIAN_PRIVATE,
                          on_click=_set_median, args=(ds.X, "private-data"))
        if source == "private-data":
            st.error("The lengthscale was computed from the private rows: releases made now are NOT differentially "
                     "private. Choose another source to restore the guarantee.")
        kernel = None
        with guard("build the kernel"):
            kernel = C.current_kernel()
        if kernel is not None and ds.is_table:     # one column at a time: the additive kernel has no radial profile
            plotly_chart(table_kernel_profile_figure(*C.table_kernel_profile(ds.schema, kernel)), key=TABLE_PROFILE)
        elif kernel is not None:
            r_max = 4 * kernel.lengthscale
            plotly_chart(kernel_profile(kernel, r_max), key=PROFILE)

    with right:
        st.subheader("2. Privacy level")
        eps = epsilon_control()
        delta = delta_control(ds.n)
        ss.setdefault(S.CALIBRATION, "analytic")
        st.radio("Noise calibration", ["analytic", "classic"], key=S.CALIBRATION, persist_state="session",
                 format_func={"analytic": "analytic Gaussian mechanism (Balle & Wang 2018) — least noise",
                              "classic": "classic σ = Δ√(2 ln(1.25/δ))/ε (the paper's; proven for ε < 1)"}.get)
        st.radio("Sensitivity bound", ["tight", "paper"], key=S.SENS_MODE, persist_state="session",
                 format_func={"tight": "√2/N — exact for these non-negative kernels",
                              "paper": "2/N — the paper's Lemma 13 (triangle inequality)"}.get)
        with st.expander("Plan ε from the accuracy you need (planning: not a release, spends no budget)",
                         icon=":material/target:"), guard("plan ε"):
            plan_epsilon(ds.n, eps, delta, is_table=ds.is_table, hide_n=S.counts_hidden(ds))
    return kernel, eps, delta


def noise_explanation(ds, kernel, eps: float, delta: float) -> None:
    """Section 3: the sensitivity, σ and the noise's size for Algorithms 1 and 2, their formulas, σ against ε."""
    st.divider()
    st.subheader("3. What this means for the noise")
    cal = None
    with guard("calibrate the noise"):
        sens, cal, note = C.calibration(ds.n, kernel, eps=eps, delta=delta)
    if cal is None:
        st.stop()
    if note:
        st.warning(note)

    m_default = int(ss.get(S.N_POINTS, 200))
    F = None
    if ds.n_public:
        Z = ds.public[: min(m_default, ds.n_public)]
        F = C.basis(C.kernel_key(kernel), C.array_key(Z), Z).dim
    F_shown = F if F is not None else m_default
    noise_norm = cal.sigma * math.sqrt(F_shown)

    # Which mechanism these numbers are for (issue 16 walk, finding 6): Algorithm 1 and Algorithm 2 have different
    # sensitivities (√2/N or 2/N as chosen above; always 2/N), so both rows are shown and the one that runs is named.
    run_spec = REGISTRY[current_mechanism(ds, ss.get(S.MECHANISM))]
    row = ("the **Algorithm 1** row below" if "algorithm1" in run_spec.tags else
           "the **Algorithm 2** row below" if "algorithm2" in run_spec.tags else
           "its own Δ and σ, shown in the Release page's banner (the rows below are Algorithms 1 and 2)")
    st.markdown(f"The Release page will run **{run_spec.label}**: its noise is {row}. Choose the mechanism there.")
    st.markdown("**Algorithm 1** — the embedding projected on M points; the sensitivity chosen above.")
    c1, c2, c3, c4 = st.columns(4)
    c1.metric("Sensitivity Δ", S.fmt(sens, 4), help=G.help_text("Δ"))
    c2.metric("Noise σ per coordinate", S.fmt(cal.sigma, 4), help=G.help_text("σ"))
    c3.metric("Expected noise norm σ√F", S.fmt(noise_norm),
              help=f"With F = {F_shown} basis coordinates (Algorithm 1, M = {m_default} points"
                   + (", publishable subset" if F is not None else ", upper bound F ≤ M") + ").")
    c4.metric("Noise multiplier σ/Δ", S.fmt(cal.noise_multiplier),
              help=G.help_text("σ/Δ") + " (Budget ledger page)")
    st.markdown("**Algorithm 2** — the mean of J unit-norm random features: Δ = 2/N whatever is chosen above.")
    a2 = algorithm2_charge(n_private=ds.n, epsilon=eps, delta=delta, calibration=ss[S.CALIBRATION])
    J = int(ss.get(S.N_FEATURES, 1000))
    d1, d2, d3, d4 = st.columns(4)
    d1.metric("Sensitivity Δ (Algorithm 2)", S.fmt(a2.details["sensitivity"], 4),
              help="2b/N with b = sup‖φ(x)‖ = 1 (Balog et al., Proposition 9), from the library's charge.")
    d2.metric("Noise σ (Algorithm 2)", S.fmt(a2.details["sigma"], 4), help="Per coordinate. " + G.help_text("σ"))
    block = (table_marginals(ds.schema, n_private=ds.n, epsilon=eps, delta=delta, calibration=ss[S.CALIBRATION])
             if ds.is_table and ds.schema is not None else {})
    share = float(block.get("marginal_share", 0.0))
    d3.metric("Noise norm σ√J (Algorithm 2)" if not block else "Noise norm on the kernel features",
              S.fmt(a2.details["sigma"] * math.sqrt(J / (1.0 - share))),
              help=f"Expected norm of the noise, with J = {J:,} random features (the Release page's setting)."
                   + (f" This table's release at this ε also carries the marginal block ({share:.0%} of the vector): "
                      f"the kernel features then get σ/√(1 − {share:g}) each, so σ√J/√(1 − {share:g})." if block else ""))
    d4.metric("σ/Δ (Algorithm 2)", S.fmt(a2.noise_multiplier),
              help="Noise multiplier. " + G.help_text("σ/Δ") + " (Budget ledger page)")

    if P.show_owner_details():           # formulas: hidden in presentation mode
        a = kernel.diag_value
        N = ds.n
        sens_tex = (rf"\Delta = \frac{{\sqrt{{2\,k(x,x)}}}}{{N}} = \frac{{\sqrt{{2\cdot {a:g}}}}}{{{N}}} = {tex_num(sens)}"
                    if ss[S.SENS_MODE] == "tight" else
                    rf"\Delta = \frac{{2\sqrt{{k(x,x)}}}}{{N}} = \frac{{2\cdot{math.sqrt(a):g}}}{{{N}}} = {tex_num(sens)}")
        st.markdown("**Sensitivity** — replacing one row xₙ by x′ moves the embedding by "
                    "‖k(xₙ,·) − k(x′,·)‖/N, and ‖k(x,·) − k(x′,·)‖² = k(x,x) + k(x′,x′) − 2k(x,x′) ≤ 2 for these kernels:")
        st.latex(sens_tex)
        st.caption("Algorithm 2 privatises a vector of unit-norm random features instead; there the sensitivity is "
                   "2/N whatever is chosen here (the random-feature kernel can be negative), and σ is calibrated to it.")
        if ss[S.CALIBRATION] == "analytic":
            st.markdown("**Noise scale** — the smallest σ that satisfies the exact Gaussian-mechanism condition "
                        "(Balle & Wang 2018, Theorem 8):")
            st.latex(rf"\Phi\!\left(\tfrac{{\Delta}}{{2\sigma}} - \tfrac{{\varepsilon\sigma}}{{\Delta}}\right) - "
                     rf"e^{{\varepsilon}}\,\Phi\!\left(-\tfrac{{\Delta}}{{2\sigma}} - \tfrac{{\varepsilon\sigma}}{{\Delta}}\right)"
                     rf"\le \delta \;\Rightarrow\; \sigma = {tex_num(cal.sigma)}\quad(\varepsilon = {eps:g},\ \delta = {tex_num(delta)})")
        else:
            st.markdown("**Noise scale** — the classic calibration (Dwork & Roth 2014, Thm A.1; used in the paper):")
            st.latex(rf"\sigma = \frac{{\Delta\sqrt{{2\ln(1.25/\delta)}}}}{{\varepsilon}} = "
                     rf"\frac{{{tex_num(sens)}\cdot\sqrt{{2\ln(1.25/{tex_num(delta)})}}}}{{{eps:g}}} = {tex_num(cal.sigma)}")
        st.latex(rf"\text{{achieved }}\delta(\varepsilon) = {tex_num(cal.achieved_delta, 3)} \le {tex_num(delta)}, \qquad "
                 rf"\mathbb E\|\text{{noise}}\|_{{\mathcal H}} \approx \sigma\sqrt{{F}} = {tex_num(cal.sigma, 3)}\cdot\sqrt{{{F_shown}}}"
                 rf" = {tex_num(noise_norm, 3)}")
    else:
        P.hidden_note("The formulas of the sensitivity and the noise scale")

    with st.expander("How big is that? (compare with the size of the embedding)"):
        if ds.n_public >= 2:
            pub_norm = math.sqrt(max(kernel.mean_gram(ds.public), 0.0))
            st.markdown(
                f"The embedding of the publishable subset has norm ‖μ̂_pub‖ = {pub_norm:.3g} (public data). The "
                f"expected noise norm is {noise_norm / pub_norm:.1%} of that. With fewer synthetic points (smaller "
                "F) or a larger ε the noise shrinks; with N it shrinks like 1/N."
            )
        else:
            st.markdown("With a publishable subset, its embedding norm would give a public yardstick here.")

    with st.expander("σ against ε for both calibrations"):
        grid = np.geomspace(0.01, 10, 40)
        an = [analytic_sigma(epsilon=e, delta=delta, sensitivity=sens) for e in grid]
        cl = [classic_sigma(epsilon=e, delta=delta, sensitivity=sens) for e in grid]
        plotly_chart(sigma_figure(grid, an, cl, eps), key=SIGMA)
        st.caption("The classic formula is only proven for ε < 1; for ε ≥ 1 the app checks the exact condition.")
