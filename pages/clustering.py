"""Clustering: DP kernel k-means (Acs et al.) — budget split, centres in data space, accuracy vs ε, accounting."""

import io
import json

import numpy as np
import pandas as pd
import plotly.graph_objects as go
import streamlit as st

from dpkme.cost import estimate_cost
from ui import compute as C
from ui import gate as G
from ui import noise as N
from ui import presentation as PM
from ui import state as S
from ui.charts import plotly_chart
from ui.export import privacy_fields
from ui.figures import PALETTE, PRIVATE_COLOR
from ui.frame import require_frame
from ui.numbers import shown_table
from ui.widgets import PAGE_LEDGER, PAGE_RELEASE, delta_control, epsilon_control, guard, require_dataset, size_guard

require_frame(__file__)

ss = st.session_state
ds = require_dataset()

st.title("Private clustering — DP kernel k-means")
st.markdown(
    "Acs, Melis, Castelluccia & De Cristofaro's **DP kernel k-means**: every row is mapped to J unit-norm random "
    "Fourier features (a public map); k centres start from public points; then T noisy Lloyd iterations each "
    "release the cluster **sizes** and feature **sums** with Gaussian noise, and the new centres are noisy sums "
    "divided by noisy sizes. Released: the centres of every iteration (drawn back in data space below) and the "
    "noisy sizes. **Not** released: which private row belongs to which cluster."
)

try:
    from dpkme.clustering import (
        LOCAL_VIEW_NOTE,
        accuracy_curve,
        compare_with_paper,
        dp_kernel_kmeans,
        evaluate_clustering,
        kernel_kmeans,
        plan_kmeans,
    )
except ImportError:  # pragma: no cover - older library
    try:
        from dpkme.clustering import (
            accuracy_curve,
            compare_with_paper,
            dp_kernel_kmeans,
            evaluate_clustering,
            kernel_kmeans,
            plan_kmeans,
        )
        from dpkme.clustering.kmeans import LOCAL_VIEW_NOTE
    except ImportError:
        st.info("This page needs dpkme.clustering, which this installation does not provide.")
        st.stop()

INITS = {
    "public": "k rows of the publishable subset (k-means++ on their features)",
    "gaussian": "k draws from q (declared centre and spread)",
    "box": "k uniform draws from a public box (declared bounds, declared clipping box, or the publishable subset's "
           "range)",
}

kernel = None
with guard("build the kernel"):
    kernel = C.current_kernel()
if kernel is None:
    st.stop()


def declared_box():
    """The declared bounds of every column in model units (``ds.point_domain``), or None: nothing read off the data.

    With them (issue 16, finding 3) the initial centres are uniform draws inside them and the centres' pre-images are
    searched inside them, as Algorithms 1 and 2 keep their points; a mixed table's embedded domain is no box of rows.
    """
    dom = ds.point_domain if ds.schema is None else None
    return None if dom is None else (np.asarray(dom.lower, dtype=float), np.asarray(dom.upper, dtype=float))


def public_box():
    if (box := declared_box()) is not None:
        return box
    if ds.clip_box is not None:
        return tuple(np.asarray(b, dtype=float) for b in ds.clip_box)
    if ds.n_public >= 2:
        return ds.public.min(axis=0), ds.public.max(axis=0)
    return None


def init_kwargs(init: str) -> dict:
    box = declared_box()
    if init == "public":        # declared bounds: the pre-images stay inside them
        return {"init": "public", "public_data": ds.public, **({"bounds": box} if box is not None else {})}
    if init == "box":
        return {"init": "box", "bounds": public_box()}
    if box is not None:
        raise ValueError("the columns have declared bounds: start the centres inside them (a public box), not from q.")
    return {"init": "gaussian", "q_loc": ds.q_center if ds.q_center is not None else 0.0,
            "q_scale": float(ss.get(S.Q_SCALE, ds.q_scale))}


# ---------------------------------------------------------------------- settings
left, right = st.columns([1, 2], gap="large")
with left:
    st.markdown("**Privacy** (shared with the other pages)")
    eps = epsilon_control()
    delta = delta_control(ds.n)
    st.markdown("**Clustering**")
    ss.setdefault("clu.k", 5)
    k = int(st.number_input("Clusters k", min_value=1, max_value=30, step=1, key="clu.k", persist_state="session"))
    ss.setdefault("clu.T", 5)
    T = int(st.number_input("Noisy Lloyd iterations T", min_value=1, max_value=30, step=1, key="clu.T",
                            persist_state="session", help="More iterations split the same budget into more, "
                                                          "noisier steps."))
    ss.setdefault("clu.J", 1000)
    J = int(st.select_slider("Random features J", options=[200, 500, 1000, 2000], key="clu.J",
                             persist_state="session"))
    if declared_box() is not None:      # declared bounds on every column: centres start (and stay) inside them
        inits = {key: INITS[key] for key in ("box", "public") if key == "box" or ds.n_public >= k}
    else:
        inits = {key: v for key, v in INITS.items()
                 if (key != "public" or ds.n_public >= k) and (key != "box" or public_box() is not None)}
    ss.setdefault("clu.init", next(iter(inits)))
    if ss["clu.init"] not in inits:
        ss["clu.init"] = next(iter(inits))
    init = st.radio("Initial centres (public)", list(inits), format_func=inits.get, key="clu.init",
                    persist_state="session")
    with st.expander("Advanced"):
        ss.setdefault("clu.count_share", 0.0)
        share = st.slider("Share of each step's budget on the sizes (0 = the library's default)", min_value=0.0,
                          max_value=0.9, step=0.05, key="clu.count_share", persist_state="session")
        ss.setdefault("clu.accountant", "pld")
        accountant = st.radio("Calibrate with", ["pld", "rdp"], key="clu.accountant", persist_state="session",
                              horizontal=True, format_func={"pld": "PLD (exact Gaussian DP)", "rdp": "Rényi DP"}.get)
    noise, seed = N.noise_controls("clu.noise", "clu.seed", what="runs")
    problems = G.taint_reasons(noise_source=noise, ds=ds)
    for p in problems:
        st.error(f"A run would NOT be differentially private: {p}.")
    run_est = None
    with guard("estimate the cost of the run"):
        run_est = estimate_cost("kmeans", n=ds.n, k=k, dim=ds.dim, n_features=J, n_iter=T, preimages="auto")
    run_ok = size_guard(run_est, key="clu.size", what="this run")
    G.over_budget_checkbox("clustering")
    go_btn = st.button("Run private k-means", type="primary", key="clu.go", width="stretch",
                       disabled=eps is None or not run_ok)

plan = None
with right:
    with guard("plan the noise"):
        if eps is None:
            raise ValueError("choose a positive ε.")
        plan = plan_kmeans(epsilon=eps, delta=delta, n_iter=T, neighbouring="replace-one", n_features=J,
                           count_share=share or None, accountant=accountant)
    if plan is not None:
        st.subheader("Budget split (public: computed before any data is read)")
        rows = plan.budget_table(norm_bound=1.0)
        table = pd.DataFrame([{"step": r["step"], "share of the budget ((Δ/σ)²)": r["share"],
                               "noise multiplier σ/Δ": r["noise_multiplier"], "σ sizes": r["sigma_count"],
                               "σ sums": r["sigma_sum"], "ε of this step alone": r["epsilon_alone"]} for r in rows])
        c1, c2 = st.columns([3, 2])
        with c1:
            fig = go.Figure(go.Bar(x=[r["step"] for r in rows], y=[r["epsilon_alone"] for r in rows],
                                   marker_color=PALETTE[3], name="ε of one step alone",
                                   text=[f"{r['share']:.0%}" for r in rows], textposition="outside"))
            fig.add_hline(y=eps, line_dash="dot", line_color="red", annotation_text=f"total ε = {eps:g}")
            fig.update_layout(height=260, margin=dict(l=10, r=10, t=30, b=10), yaxis_title="ε",
                              title="Each iteration alone (label: its share of (Δ/σ)²)", showlegend=False)
            plotly_chart(fig, key="clu.split_fig")
        with c2:
            tot = plan.total_charge("x")
            st.metric("Whole run", f"ε = {plan.epsilon():.3g}", f"δ = {S.fmt_delta(delta)}", delta_color="off")
            st.metric("Composed noise multiplier", f"{tot.noise_multiplier:.3g}",
                      help="The T Gaussian steps compose exactly into one Gaussian mechanism with multiplier "
                           "(Σ (Δ/σᵢ)²)^(-1/2) (Gaussian DP); the ledger records it as one charge.")
            st.caption("The T steps split (Δ/σ)² equally: each step alone is far more private than the whole, "
                       "and they add up in (Δ/σ)² (the inverse squared noise multiplier), not in ε.")
        with st.expander("Table"):
            st.dataframe(table, hide_index=True)

cfg = json.dumps({"ds": ds.key, "eps": eps, "delta": delta, "k": k, "T": T, "J": J, "init": init, "share": share,
                  "acc": accountant, "noise": noise, "kernel": C.kernel_spec()}, default=str)   # seed: fresh each run

if go_btn and plan is not None and run_ok:
    with right:
        bar = st.progress(0.0, text="starting")
    with guard("run DP k-means") as res:
        label = f"DP k-means (k = {k}, T = {T}, J = {J})"
        if N.LENGTHSCALE_PROBLEM in problems:
            raise ValueError("the kernel lengthscale was computed from the private rows: the feature map would not "
                             "be public. Choose a declared or public lengthscale on the Kernel & privacy page.")
        used_seed = N.claim_seed(seed or 0, f"DP k-means on {ds.name}") if noise == N.REPLAY else None
        run = G.run_private(
            page="clustering", ds=ds, charges=lambda rows: [plan.total_charge(label)], noise_source=noise,
            compute=lambda inputs: dp_kernel_kmeans(
                ds.X, k=k, plan=plan, kernel=kernel, n_features=J, random_state=used_seed,
                progress=lambda f, m: bar.progress(min(max(float(f), 0.0), 1.0), text=m), **init_kwargs(init)))
        result, note = run.result, run.note
        charge = run.charges[0] if run.charges else None
        problems = list(run.reasons)
        ss["clu.result"] = {"key": cfg, "result": result, "charge": None if problems else charge, "note": note,
                            "ds": ds.key, "problems": problems}
        N.advance("clu.seed", used_seed)
    bar.empty()
    if res.ok:
        st.rerun()

stored = ss.get("clu.result")


def show_run(stored: dict) -> None:
    result = stored["result"]
    with right:
        if stored["key"] != cfg:
            st.warning("The clustering below was computed with other settings; press **Run private k-means** to update.")
        if stored.get("note"):
            st.warning(stored["note"])
        st.subheader("Centres in data space")
        dims = (0, 1) if ds.dim >= 2 else (0, 0)
        if ds.dim > 2:
            a, b = st.columns(2)
            dims = (a.selectbox("Horizontal axis", range(ds.dim), format_func=lambda j: str(ds.columns[j]), index=0,
                                key="clu.dim_x"),
                    b.selectbox("Vertical axis", range(ds.dim), format_func=lambda j: str(ds.columns[j]), index=1,
                                key="clu.dim_y"))
        ss.setdefault("clu.colour", True)
        own = PM.show_owner_details()      # presentation mode: no private row drawn (the released centres only)
        colour = own and st.toggle("Colour my private rows by their cluster (LOCAL VIEW — never released)",
                                   key="clu.colour", persist_state="session")
        path = result.centre_path()                          # (T+1, k, D), pre-images of the released centres
        # the private rows (and their local view) behind the released centres: owner-only, through PM.OwnerOnly
        local = PM.OwnerOnly(result.local_view, "The private rows coloured by their cluster (local view)").shown()
        lab = local.labels if (colour and local is not None) else None
        X_rows = PM.owner_rows(ds.X)
        fig = go.Figure()
        cols = [str(c) for c in ds.columns]
        if ds.dim == 1:
            if lab is None and len(X_rows):
                fig.add_trace(go.Histogram(x=X_rows[:, 0], nbinsx=80, marker_color="rgba(120,120,120,0.6)",
                                           name="private rows (never released)"))
            elif lab is not None:
                for i in range(result.k):
                    fig.add_trace(go.Histogram(x=X_rows[lab == i, 0], nbinsx=80, marker_color=PALETTE[i % 8], opacity=0.45,
                                               name=f"cluster {i + 1} (LOCAL VIEW)"))
            for i in range(result.k):
                fig.add_vline(x=float(path[-1, i, 0]), line_color=PALETTE[i % 8], line_width=3,
                              annotation_text=f"c{i + 1}")
            fig.update_layout(barmode="overlay", xaxis_title=cols[0])
        else:
            idx = np.arange(len(X_rows))
            if len(X_rows) > 4000:
                idx = np.sort(np.random.default_rng(0).choice(len(X_rows), 4000, replace=False))    # display only
            P = X_rows[idx][:, dims]
            if lab is None and len(X_rows):
                fig.add_trace(go.Scattergl(x=P[:, 0], y=P[:, 1], mode="markers", name="private rows (never released)",
                                           marker=dict(size=3, color=PRIVATE_COLOR)))
            elif lab is not None:
                L = lab[idx]
                for i in range(result.k):
                    m = L == i
                    fig.add_trace(go.Scattergl(x=P[m, 0], y=P[m, 1], mode="markers", name=f"cluster {i + 1} (LOCAL VIEW)",
                                               marker=dict(size=3, color=PALETTE[i % 8], opacity=0.3), legendgroup=str(i)))
            for i in range(result.k):
                pi = path[:, i, :][:, dims]
                fig.add_trace(go.Scatter(x=pi[:, 0], y=pi[:, 1], mode="lines+markers", legendgroup=str(i),
                                         name=f"centre {i + 1}: iterations 0–{result.n_iter}", showlegend=False,
                                         line=dict(color=PALETTE[i % 8], width=2),
                                         marker=dict(size=6, color=PALETTE[i % 8], line=dict(width=1, color="white")),
                                         hovertemplate="iteration %{text}<extra></extra>",
                                         text=[str(t) for t in range(len(pi))]))
            fin = path[-1][:, dims]
            fig.add_trace(go.Scatter(x=fin[:, 0], y=fin[:, 1], mode="markers+text", name="final centres (released)",
                                     text=[f"c{i + 1}" for i in range(result.k)], textposition="top right",
                                     marker=dict(size=18, symbol="star", color=[PALETTE[i % 8] for i in range(result.k)],
                                                 line=dict(width=1.5, color="black"))))
            ini = path[0][:, dims]
            fig.add_trace(go.Scatter(x=ini[:, 0], y=ini[:, 1], mode="markers", name="initial centres (public)",
                                     marker=dict(size=9, symbol="x", color="black")))
            lo, hi = C.plot_window(ds, dims=dims)
            fig.update_xaxes(range=[lo[0], hi[0]], title_text=cols[dims[0]])
            fig.update_yaxes(range=[lo[1], hi[1]], title_text=cols[dims[1]], scaleanchor="x", scaleratio=1)
        fig.update_layout(height=520, margin=dict(l=10, r=10, t=40, b=10), legend=dict(orientation="h", y=-0.15),
                          title="Released centres (paths from the public start)" + (" over the private rows" if own
                                                                                    else ""))
        plotly_chart(fig, key="clu.fig")
        if not own:
            PM.hidden_note("The private rows behind the released centres (and their local view)")
        if lab is not None:
            st.warning(f"**{LOCAL_VIEW_NOTE}**", icon=":material/visibility_off:")
        st.caption("Centres live in feature space; they are drawn at their pre-images (data-space points whose features "
                   "are closest to them) — post-processing of released values, free.")

    counts = result.noisy_counts
    st.subheader("What is released")
    a, b, c, d = st.columns(4)
    a.metric("ε spent", f"{result.epsilon:.3g}", help=f"δ = {S.fmt_delta(result.delta)}; charged as one Gaussian charge.")
    b.metric("Clusters", str(result.k))
    c.metric("Iterations", str(result.n_iter))
    d.metric("Runtime", f"{result.seconds:.2f} s")
    hist = result.history
    released = pd.DataFrame({
        "cluster": [f"c{i + 1}" for i in range(result.k)],
        **{cols_: vals for cols_, vals in zip([f"centre {c_}" for c_ in (ds.columns if ds.dim <= 6 else ds.columns[:6])],
                                              np.asarray(result.preimages if result.preimages is not None
                                                         else path[-1]).T[:6])},
        "noisy size (last iteration)": counts,
        "updated in the last iteration": hist[-1].updated if len(hist) > 1 else [False] * result.k,
    })
    st.dataframe(shown_table(released, precision=None, counts=["noisy size (last iteration)"]), hide_index=True)
    if stored.get("charge") is not None:
        st.caption(f"Charged: {stored['charge'].label} — ε = {stored['charge'].epsilon:.3g}, "
                   f"δ = {S.fmt_delta(stored['charge'].delta)}, noise multiplier {stored['charge'].noise_multiplier:.3g} (one "
                   f"Gaussian charge for all {result.n_iter} iterations). A centre whose noisy size falls below "
                   "max(1, 3σₙ) keeps its previous position.")
    for p in stored.get("problems") or []:
        st.error(f"This run is NOT differentially private: {p}. Not charged to the ledger as a private run.")
    buf = io.StringIO()
    released.to_csv(buf, index=False)
    e1, e2 = st.columns(2)
    e1.download_button("Download the released centres (CSV)", data=buf.getvalue().encode(),
                       file_name="dpkme_dp_kmeans_centres.csv", mime="text/csv", key="clu.dl", on_click="ignore",
                       icon=":material/download:")
    run_json = {**result.to_dict(), **privacy_fields(result, app_private=not stored.get("problems"),
                                                     reasons=stored.get("problems") or (), ds=ds)}
    e2.download_button("Download the run (JSON, no local view)", data=json.dumps(run_json, default=str, indent=1),
                       file_name="dpkme_dp_kmeans.json", mime="application/json", key="clu.dl_json", on_click="ignore",
                       icon=":material/download:")
    st.page_link(PAGE_LEDGER, label="Budget ledger", icon=":material/account_balance_wallet:")
    st.page_link(PAGE_RELEASE, label="Cluster-wise release of the data (Release page → 'Cluster-wise release')",
                 icon=":material/rocket_launch:")

    # ---------------------------------------------------------------------- owner's evaluation
    def evaluation(ev: dict) -> None:
        """Against non-private k-means and the true labels: computed from the private rows (owner-only)."""
        st.subheader("How good is it? — owner's evaluation (not DP, not released)")
        m1, m2, m3, m4 = st.columns(4)
        m1.metric("Objective vs non-private", f"{ev['objective_ratio']:.3f}×",
                  help="Within-cluster sum of squares in feature space, relative to non-private kernel k-means from the "
                       "same public start (1 = as good).")
        m2.metric("ARI vs non-private", f"{ev['ari_vs_reference']:.3f}",
                  help="Adjusted Rand index between this clustering and non-private kernel k-means (1 = same).")
        if "ari" in ev:
            m3.metric("ARI vs true labels", f"{ev['ari']:.3f}",
                      help="Adjusted Rand index between this clustering and the data's true labels (1 = same).")
            m4.metric("Purity", f"{ev['purity']:.3f}")
        st.caption("Computed from the private rows (and their labels, when the data has them) for you only.")

    with guard("evaluate the clustering"):
        if PM.show_owner_details() and "eval" not in stored:   # once per run; never computed for a projector
            ref = kernel_kmeans(ds.X, k=result.k, n_iter=result.n_iter, features=result.features,
                                init=result.init_points, preimages="none", local_view=False)
            stored["eval"] = evaluate_clustering(result, ds.X, labels=ds.labels, reference=ref)
        PM.OwnerOnly(stored.get("eval") or {}, "The owner's evaluation of the clustering against the private rows"
                     ).render(evaluation)

if stored and stored["ds"] == ds.key:
    show_run(stored)
else:
    with right:
        st.info("Press **Run private k-means** (well under a second with the defaults). The run is charged to the "
                "ledger first.")

def accuracy_view(cstored: dict) -> None:
    """The accuracy curve: evaluation runs on the private rows, not DP (owner-only: through ``PM.OwnerOnly``)."""
    metric = ss.get("clu.c_metric", "ari_vs_nonprivate")
    if cstored["key"] != ccfg:
        st.warning("The curve below was computed with other settings; press **Compute the accuracy curve**.")
    curve = cstored["curve"]
    if metric not in curve.metrics:
        metric = "ari_vs_nonprivate"
    summ = curve.summary(metric)
    fig = go.Figure()
    xs = summ["epsilon"]
    fig.add_trace(go.Scatter(x=xs + xs[::-1], y=summ["q75"] + summ["q25"][::-1], fill="toself",
                             fillcolor="rgba(31,119,180,0.18)", line=dict(width=0), hoverinfo="skip",
                             name="quartiles over repetitions"))
    fig.add_trace(go.Scatter(x=xs, y=summ["median"], mode="lines+markers", name="DP k-means (median)",
                             line=dict(color=PALETTE[3], width=2)))
    for name, colr, dash in (("nonprivate", "#000000", "dash"), ("baseline", "#7f7f7f", "dot")):
        if name in summ:
            fig.add_hline(y=summ[name], line_dash=dash, line_color=colr,
                          annotation_text={"nonprivate": "non-private k-means",
                                           "baseline": "public initial centres alone"}[name])
    fig.update_xaxes(type="log", title_text="ε (log scale)")
    fig.update_layout(height=400, margin=dict(l=10, r=10, t=40, b=10), yaxis_title=metrics.get(metric, metric),
                      title="Accuracy against ε — evaluation on the private data, not DP",
                      legend=dict(orientation="h", y=-0.2))
    plotly_chart(fig, key="clu.curve_fig")
    st.caption(f"{curve.params['repetitions']} repetitions per ε, {curve.seconds:.1f} s. These numbers read "
               "the private rows: they are for you and are not differentially private.")


st.subheader("Accuracy against ε")
cl, cr = st.columns([1, 2], gap="large")
with cl:
    grid = C.epsilon_grid()
    lo_e, hi_e = st.select_slider("ε range (log scale)", options=grid, format_func=lambda v: f"{v:g}",
                                  value=(0.1, 10.0), key="clu.c_eps", persist_state="session")
    ss.setdefault("clu.c_n", 4)
    n_e = int(st.number_input("Number of ε values", min_value=1, max_value=10, step=1, key="clu.c_n",
                              persist_state="session"))
    ss.setdefault("clu.c_reps", 3)
    reps = int(st.number_input("Repetitions", min_value=1, max_value=20, step=1, key="clu.c_reps",
                               persist_state="session"))
    metrics = {"ari_vs_nonprivate": "agreement with non-private k-means (ARI)",
               "objective_ratio": "objective / non-private objective"}
    if ds.labels is not None:
        metrics.update({"ari": "agreement with the true labels (ARI)", "purity": "purity"})
    ss.setdefault("clu.c_metric", "ari_vs_nonprivate")
    if ss["clu.c_metric"] not in metrics:
        ss["clu.c_metric"] = "ari_vs_nonprivate"
    metric = st.selectbox("Metric", list(metrics), format_func=metrics.get, key="clu.c_metric",
                          persist_state="session")
    st.caption(f"k = {k}, T = {T}, J = {J} and the initialisation as above; each repetition uses one public start "
               "for all ε (common random numbers) and fresh noise per run.")
    curve_est = None
    with guard("estimate the cost of the curve"):
        one = estimate_cost("kmeans", n=ds.n, k=k, dim=ds.dim, n_features=J, n_iter=T, preimages="none")
        curve_est = one.repeated(reps * (n_e + 1))   # per repetition: a non-private reference and one run per ε
    curve_ok = size_guard(curve_est, key="clu.c_size", what="this accuracy curve")
    curve_btn = st.button("Compute the accuracy curve", key="clu.c_go", type="primary", disabled=not curve_ok)
eps_values = sorted({round(float(v), 6) for v in np.geomspace(lo_e, hi_e, n_e)}) if hi_e > lo_e else [float(lo_e)]
ccfg = json.dumps({"ds": ds.key, "eps": eps_values, "reps": reps, "k": k, "T": T, "J": J, "init": init,
                   "delta": delta, "kernel": C.kernel_spec(), "share": share}, default=str)
if curve_btn and curve_ok:
    with cr:
        cbar = st.progress(0.0, text="starting")
    with guard("compute the accuracy curve"):
        curve = accuracy_curve(ds.X, k=k, epsilons=eps_values, delta=delta, labels=ds.labels, repetitions=reps,
                               n_iter=T, kernel=kernel, n_features=J, count_share=share or None,
                               accountant=accountant, random_state=seed,
                               progress=lambda f, m: cbar.progress(min(max(float(f), 0.0), 1.0), text=m),
                               **init_kwargs(init))
        ss["clu.curve"] = {"key": ccfg, "curve": curve, "ds": ds.key}
    cbar.empty()
cstored = ss.get("clu.curve")
with cr:
    if not cstored or cstored["ds"] != ds.key:
        st.info("Press **Compute the accuracy curve** (a couple of seconds with the defaults; changing an input "
                "cancels it). Nothing is charged: these are evaluation runs on your data, not releases.")
    else:
        PM.OwnerOnly(cstored, "The accuracy curve computed on the private rows").render(accuracy_view)

# ---------------------------------------------------------------------- accounting comparison
st.subheader("Accounting: the paper's moments accountant vs today's")
with st.expander("Acs et al.'s eq. (3) against the true privacy of the same noise", expanded=False):
    ss.setdefault("clu.sigma_k", 10.0)
    sk = float(st.number_input("The paper's noise σ_K (sizes get √2σ_K, sums √2σ_K·C)", min_value=0.5,
                               max_value=100.0, step=0.5, key="clu.sigma_k", persist_state="session"))
    with guard("compare the accountants"):
        cmp_ = compare_with_paper(n_iter=T, sigma_K=sk, delta=delta)
        rows = [{"accounting": "paper: eq. (3) + Theorem 1 (as printed)", "add/remove": cmp_["paper"],
                 "replace-one": cmp_["paper"]}]
        for key_, name in (("moments", "true log moments, the paper's conversion"),
                           ("rdp", "Rényi DP (dp_accounting)"), ("pld", "PLD (dp_accounting, tightest)")):
            rows.append({"accounting": name, "add/remove": cmp_["add-remove"][key_],
                         "replace-one": cmp_["replace-one"][key_]})
        st.dataframe(pd.DataFrame(rows), hide_index=True)
        st.caption(f"ε at δ = {S.fmt_delta(delta)} for T = {T} iterations with the paper's noise. Under add/remove the "
                   "paper's two slips (a √2 too large sensitivity and a log moment a factor 2 too small) cancel; "
                   f"under replace-one the true per-step log moment is {cmp_['replace-one']['moment_ratio']:.0f}× the "
                   "paper's, so eq. (3) **understates** ε. This app calibrates with PLD under replace-one.")
