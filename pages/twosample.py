"""Private two-sample tests (Raj, Law, Sejdinovic & Park 2019): is a release distinguishable from real data,
do two private samples differ?"""

import math

import numpy as np
import plotly.graph_objects as go
import streamlit as st

from dpkme.accounting import PrivacyCharge
from pages._shared import compute as C
from pages._shared import state as S
from pages._shared.widgets import PAGE_DATA, PAGE_KERNEL, PAGE_RELEASE, guard, require_dataset

ss = st.session_state
ds = require_dataset()

st.title("Private two-sample test")
st.markdown(
    "A two-sample test asks whether two samples come from the same distribution. Here the test itself is "
    "**differentially private** (Raj, Law, Sejdinovic & Park, ECML-PKDD 2019): the data holders release noisy "
    "feature means and second moments, and the test accounts for that noise in its null distribution — so the "
    "p-value stays honest. Features: the analytic mean-embedding test of Chwialkowski et al. (2015), at test "
    "locations chosen from the publishable subset (public), with the kernel's declared lengthscale."
)

try:
    from dpkme.two_sample import make_features, nonprivate_test, nte_test, release_test
except ImportError:  # pragma: no cover - the module ships with dpkme
    st.info("This page needs dpkme.two_sample, which this installation does not provide.")
    st.stop()

QUESTIONS = {
    "release": "Is a release distinguishable from held-out real rows?",
    "groups": "Do the private rows and the held-out rows differ? (both private, no trusted curator)",
}
ss.setdefault("tst.question", "release")
q = st.radio("Question", list(QUESTIONS), format_func=QUESTIONS.get, key="tst.question", persist_state="session")

if ds.n_heldout < 10:
    st.warning("These tests need held-out rows: set a held-out fraction > 0 on the Data page.")
    st.page_link(PAGE_DATA, label="Data", icon=":material/table_view:")
    st.stop()
if ds.n_public < 2:
    st.warning("The test locations and lengthscale must be public: set a publishable fraction > 0 on the Data page.")
    st.page_link(PAGE_DATA, label="Data", icon=":material/table_view:")
    st.stop()

left, right = st.columns([1, 2], gap="large")
with left:
    rec = None
    if q == "release":
        recs = S.releases_for(ds, kind="points")
        if not recs:
            st.info("No weighted-points release of this dataset yet.")
            st.page_link(PAGE_RELEASE, label="Make a release first", icon=":material/rocket_launch:")
            st.stop()
        by_id = {r.id: r for r in recs}
        if ss.get("tst.release") not in by_id:
            ss["tst.release"] = recs[-1].id
        sel = st.selectbox("Release to test", list(by_id)[::-1], format_func=lambda i: by_id[i].title,
                           key="tst.release")
        rec = by_id[sel]
        ss.setdefault("tst.n_syn", int(ds.n_heldout))
        st.number_input("Rows resampled from the release", min_value=10, max_value=100_000, step=100,
                        key="tst.n_syn", persist_state="session")
        st.caption("The release is resampled into unweighted rows — from its weights, or from the closest "
                   "probability weights if some are negative (post-processing, free). Only the held-out side is "
                   "private: its noisy moments are released, which spends budget on the held-out rows.")
    else:
        ss.setdefault("tst.shift", 0.0)
        st.number_input("Shift the held-out rows by (× lengthscale, to simulate a real difference)", min_value=0.0,
                        max_value=5.0, step=0.25, key="tst.shift", persist_state="session")
        st.caption("Each holder privatises its own moments (no trusted entity); the private rows and the held-out "
                   "rows are disjoint people, so the union's ledger pays once (parallel composition).")
    ss.setdefault("tst.J", 5)
    J = int(st.number_input("Test locations J", min_value=1, max_value=20, step=1, key="tst.J",
                            persist_state="session"))
    ss.setdefault("tst.alpha", 0.05)
    alpha = float(st.select_slider("Significance level α", options=[0.01, 0.05, 0.1], key="tst.alpha",
                                   persist_state="session"))
    eps, delta = S.epsilon(), S.delta()
    st.caption(f"Privacy: ε = {eps:g}, δ = {delta:.0e} for the whole test (Kernel & privacy page).")
    st.page_link(PAGE_KERNEL, label="Change ε and δ", icon=":material/tune:")
    ss.setdefault("tst.seed", 0)
    seed = int(st.number_input("Seed (teaching, replayable)", min_value=0, max_value=2**31 - 1, step=1,
                               key="tst.seed", persist_state="session"))
    go_btn = st.button("Run the test", type="primary", key="tst.go", width="stretch")

if go_btn:
    with guard("run the test") as res:
        if not eps > 0:
            raise ValueError("ε must be positive (Kernel & privacy page).")
        kernel = C.current_kernel()
        feats = make_features("me", n_features=J, public_sample=ds.public, lengthscale=kernel.lengthscale,
                              random_state=seed)
        heldout = ds.heldout
        if q == "release":
            r = rec.release
            w = r.weights
            if (w < 0).any():   # signed weights: resample from the closest probability weights (post-processing)
                from dpkme.subspace import project_weights

                w = project_weights(w, r.kernel.gram(r.points), constraint="simplex")
            result = release_test((r.points, w), heldout, features=feats, epsilon=eps, delta=delta, alpha=alpha,
                                  n_synthetic=int(ss.get("tst.n_syn", len(heldout))), random_state=seed,
                                  null_random_state=seed, resample_random_state=seed)
            reference = None
            label = f"two-sample test: {rec.title} vs held-out"
        else:
            shift = float(ss.get("tst.shift", 0.0)) * kernel.lengthscale / math.sqrt(ds.dim)
            Y = heldout + shift
            result = nte_test(ds.X, Y, features=feats, epsilon=eps, delta=delta, alpha=alpha, random_state=seed,
                              null_random_state=seed)
            reference = nonprivate_test(ds.X, Y, features=feats, design="two-sample", alpha=alpha,
                                        null_random_state=seed)
            label = f"two-sample test (NTE, shift {ss.get('tst.shift', 0.0):g})"
        led = S.ledger_for(ds)
        for c in result.charges:
            led.add(PrivacyCharge(label=f"{label}: {c.label}", mechanism=c.mechanism, epsilon=c.epsilon,
                                  delta=c.delta, noise_multiplier=c.noise_multiplier, count=c.count,
                                  details={**c.details, "neighbouring": c.details.get("neighbouring", "replace-one")}))
        ss["tst.result"] = {"key": ds.key, "question": q, "result": result, "reference": reference}
    if res.ok:
        st.rerun()

stored = ss.get("tst.result")
with right:
    if not stored or stored["key"] != ds.key:
        st.info("Press **Run the test**. It spends privacy budget (see the ledger).")
        st.stop()
    res_ = stored["result"]
    a, b, c = st.columns(3)
    a.metric("Decision", "reject H₀" if res_.reject else "keep H₀",
             help=f"H₀: both samples come from the same distribution; at α = {res_.alpha:g}.")
    b.metric("p-value (private test)", f"{res_.p_value:.3g}")
    c.metric("naive χ² p-value (wrong)", f"{res_.naive_p_value:.3g}",
             help="The textbook χ²_J null ignores the privacy noise: with noisy moments it rejects far too often.")
    d, e, f = st.columns(3)
    d.metric("Statistic", f"{res_.statistic:.4g}")
    e.metric("Privacy of the test", f"ε = {res_.epsilon:.3g}" if res_.private else "none")
    ref = stored.get("reference")
    if ref is not None:
        f.metric("Non-private test p-value (owner only)", f"{ref.p_value:.3g}")
    samples = np.asarray(res_.null.samples)
    fig = go.Figure(go.Histogram(x=samples, nbinsx=60, name=f"null ({res_.null.kind})",
                                 marker_color="rgba(31,119,180,0.6)", histnorm="probability density"))
    fig.add_vline(x=res_.statistic, line_color="red", annotation_text="statistic")
    fig.add_vline(x=res_.critical_value(), line_dash="dot", annotation_text=f"critical value (α = {res_.alpha:g})")
    fig.update_layout(title="Null distribution of the private statistic (simulated from released quantities)",
                      xaxis_title="statistic", height=360, margin=dict(l=10, r=10, t=40, b=10))
    st.plotly_chart(fig, key="tst.null")
    st.caption(res_.null.description)
    for w in res_.warnings:
        st.caption(f"Note: {w}")
    with st.expander("Details"):
        st.text(res_.summary())
