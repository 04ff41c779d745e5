"""Privacy audit: exhibits of privacy bugs that a correct-looking implementation can hide."""

import math

import numpy as np
import pandas as pd
import plotly.graph_objects as go
import streamlit as st

from dpkme.features import CosineBiasFeatures, RandomFourierFeatures
from dpkme.mechanisms import calibrate_gaussian, gaussian_epsilon, l1_from_l2_sensitivity
from pages._shared import compute as C
from pages._shared import state as S
from pages._shared.widgets import guard, require_dataset

ss = st.session_state
ds = require_dataset()

st.title("Privacy audit")
st.markdown(
    "Differential privacy is a statement about *every* pair of neighbouring datasets, so a mechanism is only as "
    "private as its sensitivity bound is correct. Each exhibit below takes a bound used in published code or "
    "papers, finds neighbouring datasets where the true change is larger, and computes the ε that is really "
    "achieved. None of these mechanisms is offered for releases in this app."
)
eps, delta = S.epsilon(), S.delta()
if not eps > 0:
    st.error("ε must be positive: set it on the Kernel & privacy page.")
    st.stop()
st.caption(f"Claimed guarantee in every exhibit: ε = {eps:g}, δ = {delta:.0e} (Kernel & privacy page).")

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
    J = int(st.select_slider("Number of features J", options=[10, 50, 200, 1000], value=10, key="aud.J",
                             help="Fewer features: larger fluctuations of the norm."))
    rng_note = "the publishable subset" if ds.n_public else "q's centre"
    P = ds.public if ds.n_public else np.tile(ds.q_center, (50, 1))
    # search for a worst-case point over a public box: large norms are attained somewhere, not necessarily in the data
    box_lo, box_hi = P.min(axis=0) - 3 * kernel.lengthscale, P.max(axis=0) + 3 * kernel.lengthscale
    probe = np.random.default_rng(0).uniform(box_lo, box_hi, size=(20000, ds.dim))
    cos_map = CosineBiasFeatures(kernel, n_components=J, random_state=0).fit(ds.dim)
    rff = RandomFourierFeatures(kernel, n_components=J + (J % 2), random_state=0, dtype="float64").fit(ds.dim)
    F = cos_map.transform(probe)
    n_cos = np.einsum("ij,ij->i", F, F)
    n_rff = np.einsum("ij,ij->i", *(2 * [rff.transform(probe)]))
    i_max = int(np.argmax(n_cos))
    gap = np.sqrt(np.einsum("ij,ij->i", F - F[i_max], F - F[i_max]))   # ‖φ(x) − φ(x′)‖ for the worst x found
    fig = go.Figure()
    fig.add_trace(go.Histogram(x=n_cos, name="cos(ωᵀx + b) features", nbinsx=80, opacity=0.7))
    fig.add_vline(x=1.0, line_dash="dot", annotation_text="‖φ‖² = 1 (assumed)")
    fig.update_layout(barmode="overlay", height=320, xaxis_title="‖φ(x)‖² over 20 000 points of a public box",
                      margin=dict(l=10, r=10, t=30, b=10))
    st.plotly_chart(fig, key="aud.norms")
    st.caption(f"dpkme's paired cos/sin features on the same points: ‖φ(x)‖² = 1 up to "
               f"{float(np.abs(n_rff - 1).max()):.1e} (rounding) — the proof's assumption holds exactly.")
    b = math.sqrt(float(n_cos.max()))
    n = ds.n
    # add/remove neighbours (one row added): the mean moves by phi(x)/N, claimed norm <= 1
    cal = calibrate_gaussian(epsilon=eps, delta=delta, sensitivity=1.0 / n)
    true_eps = gaussian_epsilon(sigma=cal.sigma, delta=delta, sensitivity=b / n)
    # replace-one neighbours: the best pair found among the probes versus the claimed 2/N
    pair = float(gap.max())
    cal_r = calibrate_gaussian(epsilon=eps, delta=delta, sensitivity=2.0 / n)
    true_eps_r = gaussian_epsilon(sigma=cal_r.sigma, delta=delta, sensitivity=max(pair, 1e-300) / n)
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
try:
    from dpkme.two_sample.audit import statistic_sensitivity_counterexample
except ImportError:  # pragma: no cover - shipped with dpkme
    st.info("This exhibit needs dpkme.two_sample.")
else:
    with guard("build the counterexample"):
        c1, c2 = st.columns(2)
        n_pairs = int(c1.select_slider("Pairs n", options=[100, 1000, 10000], value=1000, key="aud.n"))
        J2 = int(c2.select_slider("Test locations J", options=[1, 5, 10, 20], value=5, key="aud.J2"))
        cx = statistic_sensitivity_counterexample(n=n_pairs, n_features=J2)
        cal2 = calibrate_gaussian(epsilon=eps, delta=delta, sensitivity=cx["published_bound"])
        true_eps2 = gaussian_epsilon(sigma=cal2.sigma, delta=delta, sensitivity=cx["change"])
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
    "with the paper used 2/√N (see `dpkme.mechanisms.l1_from_l2_sensitivity`), which does not depend on d: valid "
    "(loose) while d ≤ N, too small — not private — when d > N."
)
rows = []
for N_, d_ in [(100_000, 10_000), (1_000, 10_000), (100, 10_000), (ds.n, 1000)]:
    correct = l1_from_l2_sensitivity(2.0 / N_, d_)
    used = 2.0 / math.sqrt(N_)
    rows.append({"N": N_, "d": d_, "correct 2√d/N": correct, "code's 2/√N": used,
                 "ε really achieved (claimed ε)": eps * correct / used if used < correct else eps,
                 "private?": "no" if used < correct else "yes (loose)"})
st.dataframe(pd.DataFrame(rows), hide_index=True)
st.caption("The Laplace mechanism with scale b = Δ₁/ε is (Δ₁,true/b)-DP, so the achieved ε scales with the ratio of "
           "the true to the assumed sensitivity.")
