"""The Privacy audit page's views (``pages/audit.py``): the live empirical audit of every mechanism (with its power),
the membership-inference attack, and the exhibits of privacy bugs."""

from __future__ import annotations

import math
import time

import numpy as np
import pandas as pd
import streamlit as st

from dpkme.audit import (
    AUDITS,
    PURE_DP_AUDITS,
    VARIANTS,
    AuditResult,
    AuditSettings,
    audit_power,
    run_audit,
    runs_for_power,
)
from dpkme.audit.exhibits import (
    epsilon_delta_curves,
    feature_norm_exhibit,
    l1_dimension_exhibit,
    perturbed_statistic_exhibit,
    privacy_loss_densities,
)
from dpkme.audit.membership import (
    DEFAULT_ATTACK_EPSILONS,
    MembershipAttack,
    gaussian_attack_accuracy,
    membership_attack,
    membership_bound,
)
from dpkme.cost import estimate_cost, observe_cost
from ui import compute as C
from ui import state as S
from ui.charts import plotly_chart
from ui.figures import epsilon_delta_figure, feature_norms_figure, membership_figure, privacy_loss_figure
from ui.widgets import guard, size_guard

ss = st.session_state

# --------------------------------------------------------------------------- this page's session and widget keys
AUD_J = "aud.J"
AUD_J2 = "aud.J2"
AUD_CONF = "aud.conf"
AUD_CURVE_FIG = "aud.curve_fig"
AUD_DELTA = "aud.delta"
AUD_EPS = "aud.eps"
AUD_GO = "aud.go"
AUD_LOSS_FIG = "aud.loss_fig"
AUD_MECH = "aud.mech"
AUD_MIA_FIG = "aud.mia_fig"
AUD_N = "aud.n"
AUD_NORMS = "aud.norms"
AUD_RESULT = "aud.result"
AUD_RESULT_CFG = "aud.result_cfg"
AUD_RUNS = "aud.runs"
AUD_SEED = "aud.seed"
AUD_VARIANT = "aud.variant"
CONFIRM = "aud.confirm.{mechanism}.{runs}"     # "Run anyway" of one long audit
MIA_MECH = "mia.mech"                          # the membership-inference attack
MIA_DELTA = "mia.delta"
MIA_RUNS_KEY = "mia.runs"
MIA_SEED = "mia.seed"
MIA_SIZE = "mia.size"
MIA_GO = "mia.go"
MIA_RESULT = "mia.result"
MIA_RESULT_CFG = "mia.result_cfg"


def header() -> None:
    """The page's title and what it shows."""
    st.title("Privacy audit")
    st.markdown(
        "Differential privacy is a statement about *every* pair of neighbouring datasets: for every set S of outputs, "
        "P[M(D) ∈ S] ≤ e^ε · P[M(D′) ∈ S] + δ. A proof can have a gap and code can have a bug, so this page **tests** "
        "the claims. The **live audit** runs a mechanism many times on two neighbouring datasets and computes a "
        "statistically valid lower bound on its ε; the **exhibits** below it take sensitivity bounds used in "
        "published code or papers and show neighbours on which they fail."
    )


# ====================================================================== live audit
AUDIT_LABELS = {
    "gaussian": "Gaussian mechanism (vector release: a clipped mean)",
    "laplace": "Laplace mechanism (random-feature mean, pure ε-DP)",
    "algorithm1": "Algorithm 1 (subspace release)",
    "algorithm2": "Algorithm 2 (private random-feature mean)",
    "exponential": "Exponential mechanism (synthetic database, pure ε-DP)",
    "gp": "GP release (function values at query points)",
    "kmeans": "DP k-means (one noisy Lloyd step)",
    "two-sample": "Private two-sample test (TCMC)",
}
VARIANT_LABELS = {
    "correct": "correct — dpkme's mechanism",
    "half-noise": "BROKEN on purpose — half the calibrated noise",
    "l1-ignores-dimension": "BROKEN on purpose — L1 sensitivity 2/√N that ignores the dimension",
    "cosine-features": "BROKEN on purpose — cos(ωᵀx + b) features without norm control",
    "perturbed-statistic": "BROKEN on purpose — perturbed test statistic with its published sensitivity",
}
VARIANT_NOTES = {
    "half-noise": "The noise σ is halved: the mechanism is really (ε′, δ)-DP with a much larger ε′.",
    "l1-ignores-dimension": "The Laplace scale uses the L1 sensitivity 2/√N of the code released with Balog et "
                            "al. (2018); for a J-dimensional feature mean it is √J · 2/N, larger when J > N.",
    "cosine-features": "The map √(2/J)·cos(ωᵀx + b) has ‖φ(x)‖ up to √2, but the noise is calibrated as if "
                       "‖φ(x)‖ ≤ 1: two rows can differ by 2√2/N instead of 2/N.",
    "perturbed-statistic": "Raj et al.'s noisy test statistic with its published sensitivity bound, which one "
                           "changed pair exceeds by orders of magnitude.",
}
# Runs per dataset after which the audit catches the broken variant in ≥ 99 % of seeds at ε = 2, δ = 10⁻² and
# 95 % confidence. Simulated with the exact distribution of the scalar (Gaussian types) or repeated seeded audits:
# half-noise at 3 000 runs: 0 misses in 1 000 (smallest bound 2.19); cosine features at 20 000 runs: 2 in 300;
# L1 ignoring the dimension at 2 000 runs: 0 in 15 (smallest 2.60); perturbed statistic at 1 000: 0 in 5 (5.2).
CATCH_RUNS = {"half-noise": 3000, "l1-ignores-dimension": 2000, "cosine-features": 20000,
              "perturbed-statistic": 1000}
# Pure ε-DP mechanisms: their audits audit δ = 0 (and refuse any other δ).
PURE_DP = frozenset(PURE_DP_AUDITS)
EPS_OPTIONS = [0.5, 1.0, 2.0, 4.0]
DELTA_OPTIONS = [1e-5, 1e-4, 1e-3, 1e-2, 5e-2]
RUNS_OPTIONS = [500, 1000, 2000, 3000, 5000, 10000, 20000, 50000, 100000]
CONFIDENCE_OPTIONS = [0.9, 0.95, 0.99, 0.999]
QUICK_SECONDS = 2.0        # the quick suggestion keeps the predicted time below this
# ---------------------------------------------------------------------- power (dpkme.audit.power)
BUG_FACTOR = math.sqrt(2.0)   # the reference bug: noise calibrated to sensitivity/√2 (noise √2 too small)
POWER_TARGET = 0.95           # power at which "no violation found" starts to mean something


@st.cache_data(max_entries=32, show_spinner=False)
def pair_model(mechanism: str) -> tuple[str | None, float]:
    """How the power of this audit is known: ("exact" | "approximate" | None, μ of the pair / claimed μ).

    "exact": the scalar is Gaussian with a known μ (a 10-run probe of the correct mechanism reads it; the ratio does
    not depend on ε, δ); "approximate": a Gaussian release audited through an approximate likelihood ratio; None:
    pure ε-DP audits, whose scalar is not one Gaussian variable.
    """
    if mechanism in PURE_DP:
        return None, 1.0
    params = run_audit(mechanism, settings=AuditSettings(runs=10, random_state=0)).params
    if "mu_pair" in params and "mu_claimed" in params:
        return "exact", float(params["mu_pair"]) / float(params["mu_claimed"])
    return ("approximate", 1.0) if "mu_pair" in params else (None, 1.0)


@st.cache_data(max_entries=512, show_spinner="Computing the audit's power…")
def power_at(runs: int, epsilon: float, delta: float, alpha: float, factor: float) -> tuple[float, float]:
    """(power, Monte-Carlo standard error) of a Gaussian audit against noise ``factor`` times too small."""
    p = audit_power(runs, epsilon=epsilon, delta=delta, alpha=alpha, factor=factor,
                    replicates=1000 if runs <= 20000 else 200, random_state=0)
    return p.power, p.standard_error


@st.cache_data(max_entries=128, show_spinner="Finding the runs for 95 % power…")
def runs_for_target(epsilon: float, delta: float, alpha: float, factor: float) -> int | None:
    """Runs per dataset for ``POWER_TARGET`` power (about: 300 simulated splits, 2 % resolution); None beyond
    the largest option or when the bug does not show on the pair (``factor`` ≤ 1)."""
    if not factor > 1.0:
        return None
    try:
        return runs_for_power(POWER_TARGET, epsilon=epsilon, delta=delta, alpha=alpha, factor=factor,
                              replicates=300, random_state=0, max_runs=max(RUNS_OPTIONS))
    except ValueError:
        return None


def fmt_prob(p: float) -> str:
    if p < 0.005:
        return "below 1 %"
    if p > 0.995:
        return "above 99 %"
    return f"{100 * p:.0f} %"


def fmt_se(se: float) -> str:
    return "Monte-Carlo error below 0.1 %" if 100 * se < 0.05 else f"± {100 * se:.1f} % Monte-Carlo error"


def power_option(mechanism: str, epsilon: float, delta: float, confidence: float) -> int | None:
    """Smallest run option with ``POWER_TARGET`` power against a √2 bug (None without an exact power model)."""
    try:
        kind, ratio = pair_model(mechanism)
        if kind != "exact" or not delta > 0:
            return None
        n = runs_for_target(epsilon, delta, round(1.0 - confidence, 12), BUG_FACTOR * ratio)
    except ValueError:   # a setting the power model does not cover: no power-based suggestion
        return None
    return None if n is None else next((r for r in RUNS_OPTIONS if r >= n), None)


def power_statement(mechanism: str, epsilon: float, delta: float, confidence: float, runs: int) -> str:
    """What this audit's number of runs buys: its power against a factor-√2 sensitivity bug (markdown)."""
    kind, ratio = pair_model(mechanism)
    if kind is None or not delta > 0:
        return ("**Power:** not computed for this audit (its scalar is not one Gaussian variable): the chance that "
                "it would catch a sensitivity bug is unknown, so read “no violation found” as weak evidence.")
    alpha = round(1.0 - confidence, 12)
    factor = BUG_FACTOR * ratio
    p, se = power_at(int(runs), float(epsilon), float(delta), alpha, factor)
    if kind == "exact" and not factor > 1.0:
        return (f"**Power:** on this audit's pair the change is only {ratio:.2f} of the claimed sensitivity, so a "
                "factor-√2 sensitivity bug would not even violate the claim on it: at "
                f"{runs:,} runs this audit catches a factor-√2 sensitivity bug with probability {fmt_prob(p)} "
                f"(at most α = {alpha:g}). A pair that attains the sensitivity is needed to test for it.")
    text = (f"**Power:** at {runs:,} runs this audit catches a factor-√2 sensitivity bug (noise calibrated to "
            f"Δ/√2) with probability **{fmt_prob(p)}** ({fmt_se(se)}, `dpkme.audit.audit_power`).")
    if kind == "approximate":
        return (text + " Computed for an exact Gaussian likelihood ratio; this audit's scalar is approximate, so "
                "its power is likely lower.")
    n = runs_for_target(float(epsilon), float(delta), alpha, factor)
    if n is None:
        text += (f" {100 * POWER_TARGET:.0f} % power is not reached within {max(RUNS_OPTIONS):,} runs at these "
                 "settings: “no violation found” says little here.")
    elif p < POWER_TARGET:
        opt = next((r for r in RUNS_OPTIONS if r >= n), n)
        text += (f" {100 * POWER_TARGET:.0f} % power needs about {n:,} runs: run at least {opt:,} before reading "
                 "“no violation found” as meaningful.")
    else:
        text += f" ({100 * POWER_TARGET:.0f} % power from about {n:,} runs.)"
    return text


def suggested_runs(mechanism: str, variant: str = "correct", epsilon: float = 2.0, delta: float = 1e-2,
                   confidence: float = 0.95) -> int:
    """Runs per dataset offered when a mechanism or variant is chosen.

    Broken variants: enough runs to catch them (``CATCH_RUNS``). Correct mechanisms: the smallest option with
    ``POWER_TARGET`` power against a factor-√2 sensitivity bug (:func:`power_option`) when the size guard lets it
    run without confirmation (:func:`dpkme.cost.estimate_cost`); otherwise the largest of 500, 1 000, 2 000 runs
    predicted to take at most ``QUICK_SECONDS``.
    """
    if variant in CATCH_RUNS:
        return CATCH_RUNS[variant]
    quick = [r for r in (500, 1000, 2000) if estimate_cost("audit", audit=mechanism, runs=r).seconds <= QUICK_SECONDS]
    runs = max(quick) if quick else 500
    powered = power_option(mechanism, epsilon, delta, confidence)
    if powered is not None and powered > runs and \
            not estimate_cost("audit", audit=mechanism, runs=powered).needs_confirmation:
        runs = powered
    return runs


def _suggest() -> int:
    mech = ss[AUD_MECH]
    return suggested_runs(mech, ss.get(AUD_VARIANT, "correct"), float(ss.get(AUD_EPS, 2.0)),
                          0.0 if mech in PURE_DP else float(ss.get(AUD_DELTA, 1e-2)), float(ss.get(AUD_CONF, 0.95)))


def _on_mechanism_change() -> None:
    ss[AUD_VARIANT] = VARIANTS[ss[AUD_MECH]][0]
    ss[AUD_RUNS] = _suggest()


def _on_variant_change() -> None:
    ss[AUD_RUNS] = _suggest()


def fmt_num(x) -> str:
    """3 significant digits; ∞ for infinity, — when unknown."""
    if x is None or (isinstance(x, float) and math.isnan(x)):
        return "—"
    if math.isinf(x):
        return "∞" if x > 0 else "−∞"
    return f"{x:.3g}"


def fmt_vec(v, k: int = 6) -> str:
    v = list(v)
    body = ", ".join(f"{float(t):.3g}" for t in v[:k])
    return f"({body}{', …' if len(v) > k else ''})"


def describe_neighbours(nb: dict) -> str:
    """Markdown description of the audited pair (``AuditResult.neighbours``)."""
    lines = []
    n, n2, dim = nb.get("n"), nb.get("n_neighbour"), nb.get("dim")
    if n is not None:
        lines.append(f"- **D**: {n} row(s){f' in dimension {dim}' if dim is not None else ''}; **D′**: "
                     f"{n2 if n2 is not None else n} row(s) — {nb.get('neighbouring', 'neighbouring')} neighbours "
                     f"({nb.get('pair', 'worst case')}).")
    if nb.get("rows_changed"):
        lines.append(f"- Row(s) that differ, by index: {', '.join(str(i) for i in nb['rows_changed'])}.")
    if "row" in nb and "row_neighbour" in nb:
        lines.append(f"- That row is {fmt_vec(nb['row'])} in D and {fmt_vec(nb['row_neighbour'])} in D′; "
                     "all other rows are equal.")
    if nb.get("description"):
        lines.append(f"- {nb['description'][0].upper()}{nb['description'][1:]}.")
    known = {"n", "n_neighbour", "dim", "neighbouring", "pair", "rows_changed", "row", "row_neighbour", "description"}
    rest = {k: v for k, v in nb.items() if k not in known}
    if rest:
        lines.append("- Public settings of the audited mechanism: "
                     + ", ".join(f"{k.replace('_', ' ')} = {v}" for k, v in rest.items()) + ".")
    return "\n".join(lines)



def show_audit_result(res: AuditResult, stale: bool) -> None:
    conf = 1 - res.alpha
    if stale:
        st.info("The audit below was run with other settings; press **Run the audit** to update it.")
    st.subheader(f"Audit: {AUDIT_LABELS.get(res.mechanism, res.mechanism)}")
    st.caption(f"Variant: {VARIANT_LABELS.get(res.variant, res.variant)}.")
    delta_txt = f"δ = {S.fmt_delta(res.claimed_delta)}" if res.claimed_delta > 0 else "δ = 0 (pure ε-DP)"
    c = st.columns(3)
    c[0].metric("Claimed ε", f"{res.claimed_epsilon:g}", delta=delta_txt, delta_color="off", delta_arrow="off")
    c[1].metric("Audited lower bound ε_lb", fmt_num(res.epsilon_lower_bound),
                delta=f"confidence {conf:.3g}, at {delta_txt}", delta_color="off", delta_arrow="off",
                help=f"With probability at least {conf:.3g} over the runs, the mechanism is not (ε, δ)-DP for any "
                     "ε below this value. It is a bound for this pair of datasets, so it is also a bound for the "
                     "mechanism.")
    c[2].metric("Exact ε of the audited pair", fmt_num(res.pair_epsilon),
                help="What an auditor with infinitely many runs of the full output could reach on this pair "
                     "(— when no closed form is available).")
    c = st.columns(3)
    c[0].metric("Point estimate", fmt_num(res.epsilon_point), delta="estimate, not a bound", delta_color="off",
                delta_arrow="off",
                help="log((p̂ − δ)/q̂) with the plain frequencies of the chosen event on all runs: no confidence, "
                     "it can exceed the true ε by chance.")
    c[1].metric("Runs per dataset", f"{res.runs:,}")
    c[2].metric("Time", f"{res.seconds:.2f} s")
    if res.violation:
        st.error(f"**Claim refuted at confidence {conf:.3g}**: ε_lb = {fmt_num(res.epsilon_lower_bound)} > "
                 f"claimed ε = {res.claimed_epsilon:g}. The mechanism is not ({res.claimed_epsilon:g}, "
                 f"{S.fmt_delta(res.claimed_delta)})-DP, unless a {res.alpha:.3g}-probability accident happened.",
                 icon=":material/gpp_bad:")
    elif res.curve_violation:
        st.error(f"**Claimed privacy curve refuted at confidence {conf:.3g}**: at δ′ = {S.fmt_delta(res.curve_delta)} the "
                 f"audited bound exceeds the claimed curve by {res.curve_margin:.3g} (the curve test, below). At "
                 f"the claimed δ itself, ε_lb = {fmt_num(res.epsilon_lower_bound)} ≤ {res.claimed_epsilon:g}.",
                 icon=":material/gpp_bad:")
    else:
        st.success(f"**No violation found** — ε_lb = {fmt_num(res.epsilon_lower_bound)} ≤ claimed ε = "
                   f"{res.claimed_epsilon:g}. An audit can refute a claim, never prove it: this pair, this "
                   "scalar and this many runs found nothing.", icon=":material/verified_user:")
    with guard("compute the power of the audit"):
        st.markdown(power_statement(res.mechanism, res.claimed_epsilon, res.claimed_delta, round(1.0 - res.alpha, 12),
                                    res.runs))
    if res.curve_margin is not None:
        outcome = "positive: the claimed curve is refuted" if res.curve_violation else "not positive: no violation"
        st.caption(f"Curve test (every tabulated δ′ at once, jointly valid at {conf:.3g}): largest "
                   f"ε_lb(δ′) − ε_claimed(δ′) = {res.curve_margin:.3g} at δ′ = {S.fmt_delta(res.curve_delta)} — {outcome}.")

    with st.expander("The neighbouring datasets and the scalar", expanded=True):
        st.markdown(describe_neighbours(res.neighbours))
        st.markdown(f"- Each run's output is reduced to one number, the **scalar**: {res.scalar}.")
        num = "D" if res.numerator == "D" else "D′"
        den = "D′" if num == "D" else "D"
        st.markdown(f"- Event chosen on the selection split: **{res.region.replace('<=', '≤')}** with t = "
                    f"{res.threshold:.4g}; P_{num} ≥ {res.p_lower:.3g} and P_{den} ≤ {res.q_upper:.3g} "
                    f"(Clopper–Pearson, {1 - res.alpha / 2:.4g} each) on the evaluation runs; plain frequencies "
                    f"on all runs {res.p_hat:.3g} and {res.q_hat:.3g}.")
        st.caption("Synthetic datasets built by the library for this mechanism — never your data.")

    plotly_chart(privacy_loss_figure(privacy_loss_densities(res), claimed_epsilon=res.claimed_epsilon),
                 key=AUD_LOSS_FIG)
    pl = res.privacy_loss
    how = ("exact: the mechanism's density of the scalar is known" if pl.exact
           else "estimated by binning the pooled scalars (add-½ smoothing), so it is only approximate")
    st.caption(f"Each run's privacy loss L = log p_D(s)/p_D′(s) — {how}. The mass of L beyond ε on D is what δ "
               "must pay for: δ(ε) = E_D[(1 − e^(ε − L))₊]."
               + (" The dashed curves are the exact Gaussian privacy-loss distributions of the pair."
                  if pl.analytic_mean is not None else ""))
    c = epsilon_delta_curves(res)
    fig = epsilon_delta_figure(c, alpha=res.alpha, claimed_epsilon=res.claimed_epsilon, claimed_delta=res.claimed_delta,
                               lower_bound=res.epsilon_lower_bound, lower_bound_text=fmt_num(res.epsilon_lower_bound),
                               delta_text=S.fmt_delta(res.claimed_delta))
    note = ""
    if c["pair_cut_off"]:
        note = (f"The exact curve of the pair reaches ε = {fmt_num(c['pair_max'])} at small δ, far above this chart "
                "(cut off): this mechanism is far from its claim.")
    plotly_chart(fig, key=AUD_CURVE_FIG)
    st.caption("Black: the ε(δ) the mechanism claims. Red dashed: the exact curve of this pair (the best an auditor "
               "of the full output could reach). Blue dots: the audited lower bounds, each valid at the chosen "
               "confidence — for a correct mechanism they stay below the black curve. Green dotted: the plug-in "
               "curve of the runs (an estimate, not a bound). Below δ ≈ 1/runs the bounds level off: events that "
               "rare are never observed, so the audit cannot follow the claimed curve up there."
               + (f" {note}" if note else ""))


def live_audit() -> None:
    """The live audit: a mechanism and its settings (left), the result and its power (right), how it works."""
    st.header("Live audit: try to break a mechanism")
    st.markdown(
        "Pick a mechanism, press **Run the audit**, and the library runs it many times on two **worst-case "
        "neighbouring datasets** D and D′, reduces each output to one number, and turns how often that number "
        "crosses a threshold on D and on D′ into a **lower bound on ε that holds with the chosen confidence**. A "
        "correct mechanism stays below its claimed ε; the deliberately broken variants are caught."
    )
    st.caption(":material/shield: The audit uses only synthetic datasets built by the library — never your data — and "
               "seeded noise (replayable, not secret). It charges nothing to the privacy budget, and its ε and δ are "
               "independent of the Kernel & privacy page.")

    ss.setdefault(AUD_MECH, "gaussian")
    if ss[AUD_MECH] not in AUDITS:
        ss[AUD_MECH] = "gaussian"
    ss.setdefault(AUD_VARIANT, "correct")
    ss.setdefault(AUD_EPS, 2.0)
    ss.setdefault(AUD_DELTA, 1e-2)
    ss.setdefault(AUD_CONF, 0.95)
    ss.setdefault(AUD_SEED, 0)
    if AUD_RUNS not in ss:
        with guard("suggest a number of runs"):
            ss[AUD_RUNS] = _suggest()
    ss.setdefault(AUD_RUNS, 2000)

    aud_left, aud_right = st.columns([1, 2], gap="large")
    with aud_left:
        aud_mech = st.selectbox("Mechanism", list(AUDITS), format_func=lambda m: AUDIT_LABELS.get(m, m),
                                key=AUD_MECH, persist_state="session", on_change=_on_mechanism_change)
        variants = list(VARIANTS[aud_mech])
        if ss.get(AUD_VARIANT) not in variants:
            ss[AUD_VARIANT] = variants[0]
        aud_variant = st.selectbox(
            "Variant", variants, key=AUD_VARIANT, persist_state="session", on_change=_on_variant_change,
            format_func=lambda v: VARIANT_LABELS.get(v, f"{v} (BROKEN on purpose)"), disabled=len(variants) == 1,
            help="The broken variants are deliberately mis-calibrated versions that are NOT private; they exist only "
                 "here, to show that the audit catches them.")
        if aud_variant in VARIANT_NOTES:
            st.caption(f":material/warning: {VARIANT_NOTES[aud_variant]} Not private — audit exhibit only.")
        aud_eps = float(st.select_slider("Claimed ε", options=EPS_OPTIONS, format_func=lambda v: f"{v:g}", key=AUD_EPS,
                                         persist_state="session"))
        if aud_mech in PURE_DP:
            aud_delta = 0.0
            st.caption("δ = 0: this mechanism claims pure ε-DP (the curve test also checks the (ε′, δ′) pairs it "
                       "implies).")
        else:
            aud_delta = float(st.select_slider(
                "Claimed δ", options=DELTA_OPTIONS, format_func=S.fmt_delta, key=AUD_DELTA,
                persist_state="session",
                help="Audits use a large δ on purpose: with a few thousand runs the bound can only resolve events of "
                     "probability about 1/runs, so at δ = 10⁻⁵ the same runs certify only a smaller ε (no false "
                     "alarm, just less power). Real releases use a much smaller δ."))
            st.caption("δ is large on purpose: n runs can only see events of probability about 1/n.")
        aud_conf = float(st.select_slider("Confidence 1 − α", options=CONFIDENCE_OPTIONS, format_func=lambda c: f"{c:g}",
                                          key=AUD_CONF, persist_state="session",
                                          help="Probability that the lower bound is valid. A correct mechanism is "
                                               "falsely refuted with probability at most α."))
        aud_runs = int(st.select_slider("Runs per dataset", options=RUNS_OPTIONS, format_func=lambda r: f"{r:,}",
                                        key=AUD_RUNS, persist_state="session",
                                        help="More runs resolve rarer events, tighten the bound and raise the audit's "
                                             "power, at a proportional cost. Changing the mechanism or variant "
                                             "suggests a value: enough runs for 95 % power against a factor-√2 "
                                             "sensitivity bug when the size guard allows it."))
        with guard("compute the power of the audit"):
            st.caption(power_statement(aud_mech, aud_eps, aud_delta, aud_conf, aud_runs))
        aud_seed = int(st.number_input("Seed", min_value=0, max_value=2**31 - 1, step=1, key=AUD_SEED,
                                       persist_state="session", help="The same seed replays the same audit exactly."))
        aud_cfg = {"mechanism": aud_mech, "variant": aud_variant, "epsilon": aud_eps, "delta": aud_delta,
                   "runs": aud_runs, "confidence": aud_conf, "seed": aud_seed}
        estimate = None
        with guard("predict the time of the audit"):
            estimate = estimate_cost("audit", audit=aud_mech, runs=aud_runs)
        confirmed = True
        if estimate is not None and estimate.needs_confirmation:
            st.warning(estimate.message(), icon=":material/hourglass_top:")
            confirmed = st.checkbox("Run anyway", key=CONFIRM.format(mechanism=aud_mech, runs=aud_runs),
                                    help="The page is busy while the audit runs; changing any setting stops it.")
        elif estimate is not None:
            st.caption(f"Predicted: {estimate.message()}.")
        aud_go = st.button("Run the audit", type="primary", key=AUD_GO, width="stretch",
                           icon=":material/play_arrow:", disabled=estimate is None or not confirmed)

    with aud_right:
        if aud_go:
            bar = st.progress(0.0, text="starting")
            with guard("run the audit"):
                settings = AuditSettings(epsilon=aud_eps, delta=aud_delta, runs=aud_runs, alpha=round(1.0 - aud_conf, 12),
                                         random_state=aud_seed,
                                         progress=lambda f, m: bar.progress(min(max(float(f), 0.0), 1.0), text=m))
                t_aud = time.perf_counter()
                result = run_audit(aud_mech, settings=settings, variant=aud_variant)
                ss[AUD_RESULT] = result
                ss[AUD_RESULT_CFG] = dict(aud_cfg)
                observe_cost(estimate, time.perf_counter() - t_aud)     # corrects the next prediction
            bar.empty()
        stored = ss.get(AUD_RESULT)
        if isinstance(stored, AuditResult):
            show_audit_result(stored, stale=ss.get(AUD_RESULT_CFG) != aud_cfg)
        else:
            st.info("No audit yet: choose the settings and press **Run the audit**. Try the Gaussian mechanism, then "
                    "its half-noise variant.", icon=":material/science:")

    with st.expander("How the audit works — in plain words", expanded=False):
        st.markdown(
            """
    **What is tested.** A mechanism M claims (ε, δ)-DP: for *every* pair of neighbouring datasets D, D′ and *every*
    set S of outputs, P[M(D) ∈ S] ≤ e^ε · P[M(D′) ∈ S] + δ. One pair and one set on which this fails refute the claim.

    **The pair.** For each mechanism the library builds the worst case its proof allows: the two datasets differ in
    one row, placed so that the released statistic moves as much as the sensitivity bound permits (for example two
    opposite points on the unit sphere for a clipped mean).

    **The runs and the scalar.** The mechanism is run many times on D and on D′ with independent seeded noise. Each
    output is reduced to one number — its projection on the direction in which D and D′ differ, or the
    log-likelihood ratio when it is known. The sets S are then "the number is above t" and "below t".

    **Clopper–Pearson.** From k hits in n runs we do not know the probability p exactly, but the exact binomial
    (Clopper–Pearson) interval gives a value that p exceeds with probability 1 − α/2; the same gives a value the other
    probability q stays below. Then ε ≥ log((p_lower − δ) / q_upper) with probability at least 1 − α: a **lower bound**
    on the ε of the pair, and so on the ε of the mechanism.

    **The threshold is chosen on a split.** 30 % of the runs are used to pick the threshold and the direction that look
    best; the bound is computed only on the other 70 %. Choosing and certifying on the same runs would let chance
    pick the luckiest threshold and overstate the bound.

    **Why correct mechanisms stay below the claim.** The bound is below the true ε of the pair with probability at
    least 1 − α, and the true ε of the pair is at most the claimed ε if the claim is right. So a correct mechanism is
    refuted with probability at most α — and the bound usually sits well below the claim, because finitely many runs
    see only part of the privacy loss.

    **Why broken ones are caught.** With half the noise, or features whose norm reaches √2, the true ε of the worst pair
    is far above the claim (for a claimed ε = 2 at δ = 10⁻², about 5.1 with half the noise). With enough runs the lower
    bound climbs past the claim, and the claim is refuted at confidence 1 − α.

    **Power: what "no violation found" is worth.** The chance that an audit catches a broken mechanism grows with
    the runs. For the Gaussian mechanism at ε = 2, δ = 10⁻² and 95 % confidence, noise calibrated to Δ/√2 instead of Δ
    (the true ε of the pair is then 3.2, not 2) is caught by 2 000 runs per dataset only about a third of the time, by
    10 000 runs about 98 % of the time. The page states this power next to the runs and with every verdict
    (`dpkme.audit.audit_power`: exact binomial sums given the threshold the audit picks, the pick simulated); read
    "no violation found" as evidence only at 95 % power or more.

    **Why δ = 10⁻².** In n runs an event of probability much below 1/n is never seen. The part of the privacy loss
    that δ excuses lives in such rare events when δ is tiny, so a few thousand runs cannot test a claim at δ = 10⁻⁵
    (they certify only a smaller ε). At δ = 10⁻² the tails that matter are visible.

    **What an audit cannot do.** It can refute a claim, never prove one: a passing audit says only that this pair,
    this scalar and this many runs found nothing.
    """
        )


# ====================================================================== membership inference
MIA_LABELS = {"algorithm2": "Algorithm 2 (private random-feature mean)",
              "algorithm1": "Algorithm 1 (subspace release)"}
MIA_DELTAS = [1e-8, 1e-6, 1e-5, 1e-3, 1e-2]
MIA_RUNS = [200, 500, 1000, 2000, 5000, 10000]



def membership_curves(res: MembershipAttack) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """An ε grid around the attacked values, the DP bound (e^ε + δ)/(1 + e^ε) on it and the exact accuracy of the
    optimal attack on this Gaussian noise, Φ(d/(2σ)), for :func:`ui.figures.membership_figure`."""
    grid = np.geomspace(float(res.epsilons[0]) / 1.5, float(res.epsilons[-1]) * 1.5, 60)
    theory = gaussian_attack_accuracy(grid, delta=res.delta, sensitivity=res.sensitivity, distance=res.distance,
                                      calibration=res.calibration)
    return grid, membership_bound(grid, res.delta), theory


def pct(p: float) -> str:
    return f"{100 * float(p):.1f} %"


def membership_reading(res: MembershipAttack) -> str:
    """One line of reading at the grid's ε closest to 1."""
    i = int(np.argmin(np.abs(np.log(res.epsilons))))
    e = float(res.epsilons[i])
    return (f"At ε = {e:g} the attacker — who knows every other row and both candidates — guessed right "
            f"**{pct(res.accuracy[i])}** of the time ({pct(res.accuracy_low[i])} to {pct(res.accuracy_high[i])} at "
            f"{100 * (1 - res.alpha):.0f} % confidence; theory {pct(res.exact_accuracy[i])}), against 50 % for a "
            f"coin toss: no attacker can beat {pct(res.bound[i])} at this ε, and the more noise, the closer to the "
            "coin.")



def membership_section() -> None:
    """The membership-inference attack against ε, next to the DP bound and the optimal attack's accuracy."""
    st.divider()
    st.header("Membership-inference attack")
    st.markdown(
        "What does ε mean for one person? An attacker knows **every row but one**, and two candidates for that "
        "row: the target x and a replacement x′. They see one release and guess whether it was made with the "
        "target in the table (D) or with the replacement (D′). Differential privacy caps how often any attacker can "
        "be right: at most **(e^ε + δ)/(1 + e^ε)** of the time — 73 % at ε = 1, 52.5 % at ε = 0.1, 50 % (a coin "
        "toss) as ε → 0. Below, the best possible attacker (the likelihood-ratio test on the release's projection "
        "onto φ(x) − φ(x′)) attacks the library's own release many times at each ε."
    )
    st.caption(":material/shield: Synthetic tables built by the library (never your data), seeded noise (replayable, "
               "not secret); nothing is charged to the privacy budget.")
    ss.setdefault(MIA_MECH, "algorithm2")
    ss.setdefault(MIA_DELTA, 1e-5)
    ss.setdefault(MIA_RUNS_KEY, 1000)
    ss.setdefault(MIA_SEED, 0)
    mia_left, mia_right = st.columns([1, 2], gap="large")
    with mia_left:
        mia_mech = st.selectbox("Release attacked", list(MIA_LABELS), format_func=MIA_LABELS.get, key=MIA_MECH,
                                persist_state="session")
        mia_delta = float(st.select_slider("δ of every release", options=MIA_DELTAS, format_func=S.fmt_delta,
                                           key=MIA_DELTA, persist_state="session"))
        mia_runs = int(st.select_slider("Releases per table and per ε", options=MIA_RUNS, format_func=lambda r: f"{r:,}",
                                        key=MIA_RUNS_KEY, persist_state="session",
                                        help="More releases: narrower error bars, proportionally longer."))
        mia_seed = int(st.number_input("Seed of the attack", min_value=0, max_value=2**31 - 1, step=1, key=MIA_SEED,
                                       persist_state="session"))
        st.caption(f"ε grid: {', '.join(f'{e:g}' for e in DEFAULT_ATTACK_EPSILONS)}.")
        mia_cfg = {"mechanism": mia_mech, "delta": mia_delta, "runs": mia_runs, "seed": mia_seed}
        mia_ok, mia_est = False, None
        with guard("predict the time of the attack"):
            mia_est = estimate_cost("membership-attack", attacked=mia_mech, runs=mia_runs,
                                    n_epsilons=len(DEFAULT_ATTACK_EPSILONS))
            mia_ok = size_guard(mia_est, key=MIA_SIZE, what="the attack")
        mia_go = st.button("Run the attack", key=MIA_GO, icon=":material/person_search:", width="stretch",
                           disabled=not mia_ok)

    with mia_right:
        if mia_go:
            mia_bar = st.progress(0.0, text="starting")
            with guard("run the attack"):
                t_mia = time.perf_counter()
                ss[MIA_RESULT] = membership_attack(
                    epsilons=DEFAULT_ATTACK_EPSILONS, delta=mia_delta, mechanism=mia_mech, runs=mia_runs,
                    random_state=mia_seed,
                    progress=lambda f, m: mia_bar.progress(min(max(float(f), 0.0), 1.0), text=m))
                ss[MIA_RESULT_CFG] = dict(mia_cfg)
                if mia_est is not None:
                    observe_cost(mia_est, time.perf_counter() - t_mia)     # corrects the next prediction
            mia_bar.empty()
        mia_res = ss.get(MIA_RESULT)
        if isinstance(mia_res, MembershipAttack):
            if ss.get(MIA_RESULT_CFG) != mia_cfg:
                st.info("The attack below was run with other settings; press **Run the attack** to update it.")
            plotly_chart(membership_figure(mia_res, *membership_curves(mia_res)), key=AUD_MIA_FIG)
            st.markdown(membership_reading(mia_res))
            if mia_res.above_bound.any():
                st.error("The attack beat the bound at some ε beyond its confidence interval: the release is not as "
                         "private as claimed there.", icon=":material/gpp_bad:")
            st.caption(f"{MIA_LABELS[mia_res.mechanism]}, N = {mia_res.n} rows, replace-one; the pair moves the released "
                       f"vector by d = {mia_res.distance:.3g} (sensitivity Δ = {mia_res.sensitivity:.3g}). Error bars: "
                       f"exact Clopper–Pearson intervals at {100 * (1 - mia_res.alpha):.0f} % for each ε; "
                       f"{mia_res.seconds:.1f} s.")
        else:
            st.info("No attack yet: press **Run the attack**.", icon=":material/person_search:")

    with st.expander("Why no attacker can beat (e^ε + δ)/(1 + e^ε) — and why this one reaches Φ(d/(2σ))"):
        st.markdown(
            """
    **The bound.** Let S be the releases on which the attacker says "in". (ε, δ)-DP gives, for S and for its
    complement, TPR = P[M(D) ∈ S] ≤ e^ε · P[M(D′) ∈ S] + δ = e^ε · (1 − TNR) + δ and
    TNR = P[M(D′) ∉ S] ≤ e^ε · (1 − TPR) + δ. Adding both: (1 + e^ε)(TPR + TNR) ≤ 2e^ε + 2δ, so the balanced accuracy
    ½(TPR + TNR) is at most (e^ε + δ)/(1 + e^ε) — whatever the attacker computes.

    **The best attack on Gaussian noise.** The release is f(D) + noise, with noise N(0, σ²) in every coordinate. Only
    the projection of the release on the direction f(D) − f(D′) carries information about the row; it is normal with
    mean ±d/2 around the midpoint (d = ‖f(D) − f(D′)‖) and standard deviation σ. The likelihood-ratio test — "in" when
    the projection is above the midpoint — is the best test (Neyman–Pearson), and it is right with probability
    exactly Φ(d/(2σ)). On this worst-case pair d is the sensitivity, and σ is calibrated to (ε, δ).

    **What the plot shows.** The dots follow the theory curve, and both stay under the bound: the noise keeps its
    promise. At small ε the curve meets the bound (near 50 %: chance); at large ε the Gaussian noise protects more than
    the worst case (ε, δ) allows — the bound holds for every mechanism, the curve for this one.
    """
        )


# ====================================================================== exhibits
def exhibits_header() -> None:
    """What the exhibits show."""
    st.divider()
    st.header("Exhibits: bounds that fail")
    st.markdown(
        "Each exhibit takes a bound used in published code or papers, finds neighbouring datasets where the true "
        "change is larger, and computes the ε that is really achieved. None of these mechanisms is offered for "
        "releases in this app."
    )


def exhibits(ds) -> None:
    """Three bounds that fail, at the ε and δ of the Kernel & privacy page (stops the page without a positive ε)."""
    eps, delta = S.epsilon(), S.delta()
    if not eps > 0:
        st.error("ε must be positive: set it on the Kernel & privacy page.")
        st.stop()
    st.caption(f"Claimed guarantee in every exhibit: ε = {eps:g}, δ = {S.fmt_delta(delta)} (Kernel & privacy page).")

    # ---------------------------------------------------------------------- 1. feature norms
    st.subheader("1. Random features whose norm can exceed 1")
    st.markdown(
        "Algorithm 2's proof (Proposition 9) needs ‖φ(x)‖ ≤ 1 for every x, giving the sensitivity 2/N of the mean "
        "feature vector. The common map √(2/J)·cos(ωᵀx + b) only satisfies this **on average**: ‖φ(x)‖² ranges "
        "over [0, 2]. Calibrated to 2/N, the noise is too small for points with ‖φ(x)‖ > 1. dpkme uses paired "
        "cos/sin features, whose norm is exactly 1."
    )
    with guard("compute the feature norms"):
        kernel = C.current_kernel()
        J = int(st.select_slider("Number of features J", options=[10, 50, 200, 1000], value=10, key=AUD_J,
                                 help="Fewer features: larger fluctuations of the norm."))
        rng_note = "the publishable subset" if ds.n_public else "q's centre"
        P = ds.public if ds.n_public else np.tile(ds.q_center, (50, 1))
        # search for a worst-case point over a public box: large norms are attained somewhere, not necessarily in the data
        ex = feature_norm_exhibit(kernel, public=P, n=ds.n, epsilon=eps, delta=delta, n_features=J)
        plotly_chart(feature_norms_figure(ex.squared_norms), key=AUD_NORMS)
        st.caption(f"dpkme's paired cos/sin features on the same points: ‖φ(x)‖² = 1 up to "
                   f"{ex.paired_deviation:.1e} (rounding) — the proof's assumption holds exactly.")
        b, true_eps, pair, true_eps_r = ex.largest_norm, ex.epsilon_add_remove, ex.pair_distance, ex.epsilon_replace_one
        a1, a2, a3 = st.columns(3)
        a1.metric("Largest ‖φ(x)‖ found", f"{b:.3f}", help="1 is what the proof assumes.")
        a2.metric("Add/remove: ε really achieved", f"{true_eps:.3g}", delta=f"claimed {eps:g}", delta_color="off",
                  help="Adding the row x with the largest norm moves the mean by ‖φ(x)‖/N > 1/N.")
        a3.metric("Replace-one: best pair found", f"‖φ(x)−φ(x′)‖ = {pair:.3f}",
                  delta=("exceeds the assumed 2" if pair > 2 else "below 2 here"), delta_color="off",
                  help=f"ε achieved on that pair: {true_eps_r:.3g} (claimed {eps:g}). A worse pair may exist: "
                       "the bound is only guaranteed for norms ≤ 1.")
        st.caption(f"Probe points drawn uniformly from a box around {rng_note} (public). The audit only needs one "
                   "bad pair of datasets; a real attacker chooses it.")

    # ---------------------------------------------------------------------- 2. the perturbed test statistic
    st.subheader("2. A perturbed two-sample test statistic with a wrong sensitivity bound")
    st.markdown(
        "Raj et al. (2019) also propose adding noise to the test statistic itself, calibrated to a published bound "
        "of order J^{3/2}/(nγ). The statistic is a ratio: when a dataset has no spread its denominator is tiny, and "
        "one changed row moves the statistic by about n/γ — no bound of order 1/(nγ) can hold."
    )
    with guard("build the counterexample"):
        c1, c2 = st.columns(2)
        n_pairs = int(c1.select_slider("Pairs n", options=[100, 1000, 10000], value=1000, key=AUD_N))
        J2 = int(c2.select_slider("Test locations J", options=[1, 5, 10, 20], value=5, key=AUD_J2))
        cx = perturbed_statistic_exhibit(n=n_pairs, n_features=J2, epsilon=eps, delta=delta)
        true_eps2 = cx["epsilon_achieved"]
        b1, b2, b3 = st.columns(3)
        b1.metric("Published sensitivity bound", f"{cx['published_bound']:.3g}")
        b2.metric("Change on two neighbours", f"{cx['change']:.3g}", delta=f"{cx['ratio']:.3g}× the bound",
                  delta_color="inverse")
        b3.metric("ε really achieved on that pair", f"{true_eps2:.3g}" if math.isfinite(true_eps2) else "∞",
                  delta=f"claimed {eps:g}", delta_color="off")
        st.caption("Neighbours: n identical rows z₀ versus the same with one row replaced by −z₀ (for ME features: "
                   "one pair swapped). Valid inputs — and DP must hold for all inputs.")

    # ---------------------------------------------------------------------- 3. an L1 sensitivity that ignores d
    st.subheader("3. An L1 sensitivity that ignores the dimension")
    st.markdown(
        "The Laplace mechanism needs the **L1** sensitivity. For a d-dimensional mean of unit-norm vectors it is "
        "2√d/N in general (Cauchy–Schwarz, attained when the change spreads over all coordinates). The code released "
        "with the paper used 2/√N (see `dpkme.privacy.calibration.l1_from_l2_sensitivity`), which does not depend on "
        "d: valid (loose) while d ≤ N, too small — not private — when d > N."
    )
    st.dataframe(pd.DataFrame(l1_dimension_exhibit(epsilon=eps, n=ds.n)), hide_index=True)
    st.caption("The Laplace mechanism with scale b = Δ₁/ε is (Δ₁,true/b)-DP, so the achieved ε scales with the ratio of "
               "the true to the assumed sensitivity.")
