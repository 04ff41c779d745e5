"""The Clustering page's views (``pages/clustering.py``): DP kernel k-means -- settings, budget split, the run and
what it releases, the owner's evaluation, accuracy against ε, the accountants compared."""

from __future__ import annotations

import io
import json
from types import SimpleNamespace

import numpy as np
import pandas as pd
import streamlit as st

from dpkme.clustering import (
    accuracy_curve,
    compare_with_paper,
    dp_kernel_kmeans,
    evaluate_clustering,
    kernel_kmeans,
    plan_kmeans,
)
from dpkme.clustering.kmeans import LOCAL_VIEW_NOTE
from dpkme.cost import estimate_cost
from ui import compute as C
from ui import gate as G
from ui import noise as N
from ui import presentation as PM
from ui import state as S
from ui.charts import plotly_chart
from ui.export import privacy_fields
from ui.figures import accuracy_against_epsilon_figure, budget_split_figure, centres_figure
from ui.numbers import shown_table
from ui.widgets import PAGE_LEDGER, PAGE_RELEASE, delta_control, epsilon_control, guard, size_guard

ss = st.session_state

# --------------------------------------------------------------------------- this page's session and widget keys
J_KEY = "clu.J"
T_KEY = "clu.T"
ACCOUNTANT = "clu.accountant"
C_EPS = "clu.c_eps"
C_GO = "clu.c_go"
C_METRIC = "clu.c_metric"
C_N = "clu.c_n"
C_REPS = "clu.c_reps"
C_SIZE = "clu.c_size"
COLOUR = "clu.colour"
COUNT_SHARE = "clu.count_share"
CURVE = "clu.curve"
CURVE_FIG = "clu.curve_fig"
DIM_X = "clu.dim_x"
DIM_Y = "clu.dim_y"
DL = "clu.dl"
DL_JSON = "clu.dl_json"
FIG = "clu.fig"
GO = "clu.go"
INIT = "clu.init"
K = "clu.k"
NOISE = "clu.noise"
RESULT = "clu.result"
SEED = "clu.seed"
SIGMA_K = "clu.sigma_k"
SIZE = "clu.size"
SPLIT_FIG = "clu.split_fig"


def header() -> None:
    """The page's title and what DP kernel k-means releases."""
    st.title("Private clustering — DP kernel k-means")
    st.markdown(
        "Acs, Melis, Castelluccia & De Cristofaro's **DP kernel k-means**: every row is mapped to J unit-norm random "
        "Fourier features (a public map); k centres start from public points; then T noisy Lloyd iterations each "
        "release the cluster **sizes** and feature **sums** with Gaussian noise, and the new centres are noisy sums "
        "divided by noisy sizes. Released: the centres of every iteration (drawn back in data space below) and the "
        "noisy sizes. **Not** released: which private row belongs to which cluster."
    )


INITS = {
    "public": "k rows of the publishable subset (k-means++ on their features)",
    "gaussian": "k draws from q (declared centre and spread)",
    "box": "k uniform draws from a public box (declared bounds, declared clipping box, or the publishable subset's "
           "range)",
}


def require_kernel():
    """The kernel of the Kernel & privacy page, or stop the page (the error is shown)."""
    kernel = None
    with guard("build the kernel"):
        kernel = C.current_kernel()
    if kernel is None:
        st.stop()
    return kernel


def declared_box(ds):
    """The declared bounds of every column in model units (``ds.point_domain``), or None: nothing read off the data.

    With them (issue 16, finding 3) the initial centres are uniform draws inside them and the centres' pre-images are
    searched inside them, as Algorithms 1 and 2 keep their points; a mixed table's embedded domain is no box of rows.
    """
    dom = ds.point_domain if ds.schema is None else None
    return None if dom is None else (np.asarray(dom.lower, dtype=float), np.asarray(dom.upper, dtype=float))


def public_box(ds):
    """A public box for the initial centres: the declared bounds, the declared clipping box or the publishable
    subset's range, or None."""
    if (box := declared_box(ds)) is not None:
        return box
    if ds.clip_box is not None:
        return tuple(np.asarray(b, dtype=float) for b in ds.clip_box)
    if ds.n_public >= 2:
        return ds.public.min(axis=0), ds.public.max(axis=0)
    return None


def init_kwargs(ds, init: str) -> dict:
    """The initial centres' keyword arguments of the library's k-means for the choice ``init``."""
    box = declared_box(ds)
    if init == "public":        # declared bounds: the pre-images stay inside them
        return {"init": "public", "public_data": ds.public, **({"bounds": box} if box is not None else {})}
    if init == "box":
        return {"init": "box", "bounds": public_box(ds)}
    if box is not None:
        raise ValueError("the columns have declared bounds: start the centres inside them (a public box), not from q.")
    return {"init": "gaussian", "q_loc": ds.q_center if ds.q_center is not None else 0.0,
            "q_scale": float(ss.get(S.Q_SCALE, ds.q_scale))}



def run_section(ds, kernel) -> SimpleNamespace:
    """The settings (left), the public budget split (right) and a run on the button: the settings and the right
    column, for the sections below."""
    left, right = st.columns([1, 2], gap="large")
    with left:
        st.markdown("**Privacy** (shared with the other pages)")
        eps = epsilon_control()
        delta = delta_control(ds.n)
        st.markdown("**Clustering**")
        ss.setdefault(K, 5)
        k = int(st.number_input("Clusters k", min_value=1, max_value=30, step=1, key=K, persist_state="session"))
        ss.setdefault(T_KEY, 5)
        T = int(st.number_input("Noisy Lloyd iterations T", min_value=1, max_value=30, step=1, key=T_KEY,
                                persist_state="session", help="More iterations split the same budget into more, "
                                                              "noisier steps."))
        ss.setdefault(J_KEY, 1000)
        J = int(st.select_slider("Random features J", options=[200, 500, 1000, 2000], key=J_KEY,
                                 persist_state="session"))
        if declared_box(ds) is not None:      # declared bounds on every column: centres start (and stay) inside them
            inits = {key: INITS[key] for key in ("box", "public") if key == "box" or ds.n_public >= k}
        else:
            inits = {key: v for key, v in INITS.items()
                     if (key != "public" or ds.n_public >= k) and (key != "box" or public_box(ds) is not None)}
        ss.setdefault(INIT, next(iter(inits)))
        if ss[INIT] not in inits:
            ss[INIT] = next(iter(inits))
        init = st.radio("Initial centres (public)", list(inits), format_func=inits.get, key=INIT,
                        persist_state="session")
        with st.expander("Advanced"):
            ss.setdefault(COUNT_SHARE, 0.0)
            share = st.slider("Share of each step's budget on the sizes (0 = the library's default)", min_value=0.0,
                              max_value=0.9, step=0.05, key=COUNT_SHARE, persist_state="session")
            ss.setdefault(ACCOUNTANT, "pld")
            accountant = st.radio("Calibrate with", ["pld", "rdp"], key=ACCOUNTANT, persist_state="session",
                                  horizontal=True, format_func={"pld": "PLD (exact Gaussian DP)", "rdp": "Rényi DP"}.get)
        noise, seed = N.noise_controls(NOISE, SEED, what="runs")
        problems = G.taint_reasons(noise_source=noise, ds=ds)
        for p in problems:
            st.error(f"A run would NOT be differentially private: {p}.")
        run_est = None
        with guard("estimate the cost of the run"):
            run_est = estimate_cost("kmeans", n=ds.n, k=k, dim=ds.dim, n_features=J, n_iter=T, preimages="auto")
        run_ok = size_guard(run_est, key=SIZE, what="this run")
        G.over_budget_checkbox("clustering")
        go_btn = st.button("Run private k-means", type="primary", key=GO, width="stretch",
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
                plotly_chart(budget_split_figure(rows, eps), key=SPLIT_FIG)
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
                    progress=lambda f, m: bar.progress(min(max(float(f), 0.0), 1.0), text=m), **init_kwargs(ds, init)))
            result, note = run.result, run.note
            charge = run.charges[0] if run.charges else None
            problems = list(run.reasons)
            ss[RESULT] = {"key": cfg, "result": result, "charge": None if problems else charge, "note": note,
                                "ds": ds.key, "problems": problems}
            N.advance(SEED, used_seed)
        bar.empty()
        if res.ok:
            st.rerun()
    return SimpleNamespace(right=right, eps=eps, delta=delta, k=k, T=T, J=J, init=init, share=share,
                           accountant=accountant, seed=seed, cfg=cfg)


def show_run(ds, stored: dict, s: SimpleNamespace) -> None:
    """A run: its centres drawn in data space, what it released, downloads, the owner's evaluation."""
    result = stored["result"]
    with s.right:
        if stored["key"] != s.cfg:
            st.warning("The clustering below was computed with other settings; press **Run private k-means** to update.")
        if stored.get("note"):
            st.warning(stored["note"])
        st.subheader("Centres in data space")
        dims = (0, 1) if ds.dim >= 2 else (0, 0)
        if ds.dim > 2:
            a, b = st.columns(2)
            dims = (a.selectbox("Horizontal axis", range(ds.dim), format_func=lambda j: str(ds.columns[j]), index=0,
                                key=DIM_X),
                    b.selectbox("Vertical axis", range(ds.dim), format_func=lambda j: str(ds.columns[j]), index=1,
                                key=DIM_Y))
        ss.setdefault(COLOUR, True)
        own = PM.show_owner_details()      # presentation mode: no private row drawn (the released centres only)
        colour = own and st.toggle("Colour my private rows by their cluster (LOCAL VIEW — never released)",
                                   key=COLOUR, persist_state="session")
        path = result.centre_path()                          # (T+1, k, D), pre-images of the released centres
        # the private rows (and their local view) behind the released centres: owner-only, through PM.OwnerOnly
        local = PM.OwnerOnly(result.local_view, "The private rows coloured by their cluster (local view)").shown()
        lab = local.labels if (colour and local is not None) else None
        X_rows = PM.owner_rows(ds.X)
        cols = [str(c) for c in ds.columns]
        window = C.plot_window(ds, dims=dims) if ds.dim >= 2 else None
        fig = centres_figure(X_rows, path, labels=lab, dims=dims, columns=cols, window=window, n_iter=result.n_iter,
                             over_private_rows=own)
        plotly_chart(fig, key=FIG)
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
                       file_name="dpkme_dp_kmeans_centres.csv", mime="text/csv", key=DL, on_click="ignore",
                       icon=":material/download:")
    run_json = {**result.to_dict(), **privacy_fields(result, app_private=not stored.get("problems"),
                                                     reasons=stored.get("problems") or (), ds=ds)}
    e2.download_button("Download the run (JSON, no local view)", data=json.dumps(run_json, default=str, indent=1),
                       file_name="dpkme_dp_kmeans.json", mime="application/json", key=DL_JSON, on_click="ignore",
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


def stored_run(ds, s: SimpleNamespace) -> None:
    """The last run on this dataset (in the right column), or how to start one."""
    stored = ss.get(RESULT)
    if stored and stored["ds"] == ds.key:
        show_run(ds, stored, s)
    else:
        with s.right:
            st.info("Press **Run private k-means** (well under a second with the defaults). The run is charged to the "
                    "ledger first.")


def accuracy_view(cstored: dict, *, ccfg: str, metrics: dict[str, str]) -> None:
    """The accuracy curve: evaluation runs on the private rows, not DP (owner-only: through ``PM.OwnerOnly``)."""
    metric = ss.get(C_METRIC, "ari_vs_nonprivate")
    if cstored["key"] != ccfg:
        st.warning("The curve below was computed with other settings; press **Compute the accuracy curve**.")
    curve = cstored["curve"]
    if metric not in curve.metrics:
        metric = "ari_vs_nonprivate"
    summ = curve.summary(metric)
    plotly_chart(accuracy_against_epsilon_figure(summ, metric_label=metrics.get(metric, metric)), key=CURVE_FIG)
    st.caption(f"{curve.params['repetitions']} repetitions per ε, {curve.seconds:.1f} s. These numbers read "
               "the private rows: they are for you and are not differentially private.")



def accuracy_section(ds, kernel, s: SimpleNamespace) -> None:
    """Accuracy against ε: evaluation runs on the private rows, not releases (nothing is charged)."""
    k, T, J, init, delta, share = s.k, s.T, s.J, s.init, s.delta, s.share
    st.subheader("Accuracy against ε")
    cl, cr = st.columns([1, 2], gap="large")
    with cl:
        grid = C.epsilon_grid()
        lo_e, hi_e = st.select_slider("ε range (log scale)", options=grid, format_func=lambda v: f"{v:g}",
                                      value=(0.1, 10.0), key=C_EPS, persist_state="session")
        ss.setdefault(C_N, 4)
        n_e = int(st.number_input("Number of ε values", min_value=1, max_value=10, step=1, key=C_N,
                                  persist_state="session"))
        ss.setdefault(C_REPS, 3)
        reps = int(st.number_input("Repetitions", min_value=1, max_value=20, step=1, key=C_REPS,
                                   persist_state="session"))
        metrics = {"ari_vs_nonprivate": "agreement with non-private k-means (ARI)",
                   "objective_ratio": "objective / non-private objective"}
        if ds.labels is not None:
            metrics.update({"ari": "agreement with the true labels (ARI)", "purity": "purity"})
        ss.setdefault(C_METRIC, "ari_vs_nonprivate")
        if ss[C_METRIC] not in metrics:
            ss[C_METRIC] = "ari_vs_nonprivate"
        st.selectbox("Metric", list(metrics), format_func=metrics.get, key=C_METRIC,
                              persist_state="session")
        st.caption(f"k = {k}, T = {T}, J = {J} and the initialisation as above; each repetition uses one public start "
                   "for all ε (common random numbers) and fresh noise per run.")
        curve_est = None
        with guard("estimate the cost of the curve"):
            one = estimate_cost("kmeans", n=ds.n, k=k, dim=ds.dim, n_features=J, n_iter=T, preimages="none")
            curve_est = one.repeated(reps * (n_e + 1))   # per repetition: a non-private reference and one run per ε
        curve_ok = size_guard(curve_est, key=C_SIZE, what="this accuracy curve")
        curve_btn = st.button("Compute the accuracy curve", key=C_GO, type="primary", disabled=not curve_ok)
    eps_values = sorted({round(float(v), 6) for v in np.geomspace(lo_e, hi_e, n_e)}) if hi_e > lo_e else [float(lo_e)]
    ccfg = json.dumps({"ds": ds.key, "eps": eps_values, "reps": reps, "k": k, "T": T, "J": J, "init": init,
                       "delta": delta, "kernel": C.kernel_spec(), "share": share}, default=str)
    if curve_btn and curve_ok:
        with cr:
            cbar = st.progress(0.0, text="starting")
        with guard("compute the accuracy curve"):
            curve = accuracy_curve(ds.X, k=k, epsilons=eps_values, delta=delta, labels=ds.labels, repetitions=reps,
                                   n_iter=T, kernel=kernel, n_features=J, count_share=share or None,
                                   accountant=s.accountant, random_state=s.seed,
                                   progress=lambda f, m: cbar.progress(min(max(float(f), 0.0), 1.0), text=m),
                                   **init_kwargs(ds, init))
            ss[CURVE] = {"key": ccfg, "curve": curve, "ds": ds.key}
        cbar.empty()
    cstored = ss.get(CURVE)
    with cr:
        if not cstored or cstored["ds"] != ds.key:
            st.info("Press **Compute the accuracy curve** (a couple of seconds with the defaults; changing an input "
                    "cancels it). Nothing is charged: these are evaluation runs on your data, not releases.")
        else:
            PM.OwnerOnly(cstored, "The accuracy curve computed on the private rows").render(lambda cs: accuracy_view(cs, ccfg=ccfg, metrics=metrics))


def accounting_section(s: SimpleNamespace) -> None:
    """The paper's moments accountant against today's, for the same noise (public arithmetic)."""
    T, delta = s.T, s.delta
    st.subheader("Accounting: the paper's moments accountant vs today's")
    with st.expander("Acs et al.'s eq. (3) against the true privacy of the same noise", expanded=False):
        ss.setdefault(SIGMA_K, 10.0)
        sk = float(st.number_input("The paper's noise σ_K (sizes get √2σ_K, sums √2σ_K·C)", min_value=0.5,
                                   max_value=100.0, step=0.5, key=SIGMA_K, persist_state="session"))
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
