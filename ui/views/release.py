"""The Release page's views (``pages/release.py``): a background release that finished, the settings banner, the
mechanism and its controls with the Release button (a run in the page or in the background, with its Stop button),
the ε explorer, the release shown (a function or weighted points: plots, closeness, downloads), repeat draws and the
table of all releases."""

from __future__ import annotations

from types import SimpleNamespace

import numpy as np
import pandas as pd
import streamlit as st

from dpkme.release.gp import NOTES as _GP_NOTES
from ui import compute as C
from ui import downloads as DL
from ui import explorer as XP
from ui import gate as G
from ui import noise as N
from ui import presentation as P
from ui import state as S
from ui import table_views as TV
from ui.budget_hint import release_budget_hint
from ui.charts import plotly_chart
from ui.export import function_csv, function_json
from ui.figures import function_figure, kme_heatmaps, release_figure, repeat_figure, weight_histogram
from ui.mechanisms import REGISTRY, charge_words, default_mechanism, preview_charge
from ui.numbers import shown_table
from ui.runner import (
    STOPPED,
    background_run,
    finish_background,
    make_context,
    perform,
    private_problems,
    release_cost,
    repeat_draws,
    replay,
    start_background,
    stop_background,
)
from ui.widgets import PAGE_KERNEL, PAGE_LEDGER, PAGE_USE, epsilon_control, guard, size_guard

ss = st.session_state

# --------------------------------------------------------------------------- this page's session and widget keys
MECHANISM_DATA = "rel._mechanism_data"
TOAST = "rel._toast"
WITNESS_MAX = "rel._witness_max"
DIM_X = S.DIM_X
DIM_Y = S.DIM_Y
GO = "rel.go"
GP_CSV = "rel.gp_csv"
GP_FIG = "rel.gp_fig"
GP_JSON = "rel.gp_json"
HEAT = "rel.heat"
HIST = "rel.hist"
REPEAT = "rel.repeat"
REPEAT_FIG = "rel.repeat_fig"
REPEAT_SIZE = "rel.repeat_size"
REPLAY = "rel.replay"
SCATTER = "rel.scatter"
SELECTED = "rel.selected"
SIZE = "rel.size"
STOP = "rel.stop"
WEIGHTS1D = "rel.weights1d"


def finished_task():
    """The background release of this session, after recording it (with a toast) when it has finished; None when
    there is none or it was just recorded."""
    task = background_run()
    if task is not None and task.done:       # a background release has finished (maybe while another page was open)
        with guard("record the release") as res:
            done = finish_background(task)
            ss[SELECTED] = done.id
        if res.ok:
            ss[TOAST] = f"Release #{done.id} done in {task.elapsed:.1f} s (ran in the background)"
        task = None
    if TOAST in ss:
        st.toast(ss.pop(TOAST), icon=":material/check_circle:")
    return task


def header() -> None:
    """The page's title and what a release is."""
    st.title("Release")
    st.markdown(
        "Pick a mechanism and press **Release**. The mechanism reads the private rows once, adds calibrated "
        "noise and returns **weighted synthetic points** whose embedding Σ wₘ k(zₘ, ·) approximates the private "
        "one (the adaptive release of a table: unweighted synthetic rows in the table's own columns and types). "
        "Every real release spends privacy budget (see the ledger); its noise comes from OS entropy and "
        "nothing that could regenerate it is recorded."
    )


def settings_banner(ds) -> SimpleNamespace:
    """The kernel and privacy settings in a banner (completed by :func:`controls` with the mechanism's Δ and σ),
    and the warnings of a non-private or placeholder setting; stops the page without a kernel."""
    kernel = None
    with guard("build the kernel"):
        kernel = C.current_kernel()
    eps = S.epsilon()      # the ε control below shows (and may change) the same session value
    if kernel is None:
        st.stop()

    problems = private_problems(ds=ds)
    kernel_text = ("Kernel **additive table kernel** (the library's default for tables, scales from the schema)"
                   if C.table_kernel_kind(ds) == "additive" else
                   f"Kernel **{C.KERNEL_LABELS[ss[S.KERNEL]]}**, ℓ = {kernel.lengthscale:.4g}"
                   + (" (the table's product kernel)" if ds.is_table else ""))
    settings = (f"{kernel_text} · ε = **{eps:g}**, δ = {S.fmt_delta(S.delta())} · {ss[S.CALIBRATION]} calibration")
    c1, c2 = st.columns([4, 1])
    banner = c1.empty()     # completed below with the Δ and σ of the mechanism that will run (its library charge)
    banner.info(settings)
    c2.page_link(PAGE_KERNEL, label="Change", icon=":material/tune:")
    for p in problems:
        st.error(f"Releases are NOT differentially private right now: {p}.")
    if ds.q_note.startswith("a placeholder") and ss.get(S.LENGTHSCALE_SOURCE) != "declared":
        # issue 16, finding 3: on a table in its own units with nothing public, the defaults give nonsense
        st.warning("The app knows nothing public about this table's units: the lengthscale ℓ and the spread of "
                   "random synthetic points (q) are **placeholders** (ℓ = 1, q = N(0, 1²·I)), so synthetic points may "
                   "land far from the data and the release says little. Declare each column's range on the Data page "
                   "(*Units and bounds*), declare a publishable subset, or declare ℓ and q yourself.",
                   icon=":material/straighten:")
    return SimpleNamespace(kernel=kernel, eps=eps, settings=settings, banner=banner)


def controls(ds, b: SimpleNamespace, task) -> SimpleNamespace:
    """The left column: ε, the mechanism and its settings, the noise, the budget and the Release button; a run on
    the button (in the page, or started in the background)."""
    kernel, settings, banner = b.kernel, b.settings, b.banner
    left, right = st.columns([1, 2], gap="large")
    with left:
        # ε lives in one place in the session (S.EPS / S.EPS_TYPED / S.EPS_VALUE): the Kernel & privacy page shows the
        # same control and value. Changing it spends nothing; only the Release button does.
        eps = epsilon_control()
        st.caption("The same ε as on the Kernel & privacy page. Changing it spends nothing: only **Release** does. To "
                   "see what it does first, use the ε explorer below (planning: not a release).")
        if eps is None:
            st.stop()
        keys = list(REGISTRY)
        # the default mechanism of the data (the adaptive release for a table): on a first visit with no valid choice,
        # and again whenever other data are in use than when the mechanism was chosen
        if ss.get(S.MECHANISM) not in keys or ss.get(MECHANISM_DATA, ds.data_key) != ds.data_key:
            ss[S.MECHANISM] = default_mechanism(ds)
        ss[MECHANISM_DATA] = ds.data_key
        key = st.selectbox("Mechanism", keys, format_func=lambda k: REGISTRY[k].label, key=S.MECHANISM,
                           persist_state="session")
        if not ds.n_public:
            st.caption("Mechanisms using the publishable subset need a publishable fraction > 0 (Data page).")
        spec = REGISTRY[key]
        st.caption(spec.summary)
        if P.show_owner_details():       # formulas: hidden in presentation mode
            with st.expander("How it works"):
                st.markdown(spec.explain)
        reason = spec.requires(ds)
        params = None
        if reason:
            st.warning(f"{spec.label} {reason}")
        else:
            with guard("read the mechanism's settings"):
                params = spec.controls(ds)
            if params is not None and spec.teach is not None:
                with guard("draw the explanation"):
                    spec.teach(ds, params)
        # the banner: Δ and σ of *this* mechanism, from the charge the runner will check and record (issue 16 walk,
        # finding 6: it said √2/N while Algorithm 2, with 2/N, was selected)
        noise_words = f"**{spec.label}**: not usable with these settings"
        if params is not None:
            with guard("compute the mechanism's charge"):
                noise_words = charge_words(spec, preview_charge(
                    spec, ds, params, kernel=kernel, epsilon=eps, delta=S.delta(), calibration=ss[S.CALIBRATION],
                    sensitivity_mode=ss[S.SENS_MODE]), ds.n)
        banner.info(settings + " · " + noise_words)

        noise_source, seed = N.noise_controls(S.NOISE_SOURCE, S.SEED, options=N.release_options(spec),
                                              what="releases")
        if noise_source == N.REAL:
            st.caption(N.FLOAT_CAVEAT + (" Choose OpenDP's sampler above for noise hardened against that."
                                         if N.OPENDP in N.release_options(spec) else
                                         " This mechanism offers numpy's sampler only."))
        allow_over = G.over_budget_checkbox("release")

        size_ok = True
        est = None
        if params is not None:
            with guard("estimate the cost of this release"):
                est = release_cost(spec, ds, params, kernel)
            size_ok = size_guard(est, key=SIZE, what="this release (and its evaluation on your data)",
                                 stoppable=spec.background, hidden=S.counts_hidden(ds))
        release_budget_hint(ds, spec, params, kernel=kernel, eps=eps, noise_source=noise_source,
                            allow_over=allow_over)     # blocked by the budget? say so here, and what to do
        busy = task is not None
        go = st.button("Release", type="primary", disabled=params is None or not size_ok or busy, key=GO,
                       width="stretch", help="A release is running in the background: wait for it or stop it." if busy
                       else None)
        if spec.background and not busy:
            st.caption("Runs in the background: a progress bar and a **Stop** button appear here, and you may open other "
                       "pages meanwhile. The charge is taken when it starts and stays spent if you stop it.")

    if go and params is not None and size_ok and spec.background:
        with guard("start the release") as res:
            ctx = make_context(ds, noise_source=noise_source, seed=seed, kernel=kernel, eps=eps)
            task = start_background(spec, params, ctx, page="release", predicted=est.seconds if est is not None else None)
        if res.ok:
            N.advance(S.SEED, ctx.random_state)          # replay mode: the next release gets the next unused seed
            st.rerun()                                   # the page again: Release disabled, Stop and the progress shown
    elif go and params is not None and size_ok:
        bar = st.progress(0.0, text="starting")

        def progress(f, msg):
            bar.progress(min(max(float(f), 0.0), 1.0), text=msg)

        with guard("release the data") as res:
            ctx = make_context(ds, noise_source=noise_source, seed=seed, progress=progress, kernel=kernel, eps=eps)
            rec = perform(spec, params, ctx, page="release")
            ss[SELECTED] = rec.id
        bar.empty()
        if res.ok:
            N.advance(S.SEED, ctx.random_state)          # replay mode: the next release gets the next unused seed
            ss[TOAST] = (f"Release #{rec.id} done in {rec.release.seconds:.2f} s"
                                + (f" (seed {rec.release.seed}: replayable demo, not private)"
                                   if rec.release.seed is not None else " (fresh OS-entropy noise)"))
            st.rerun()



    return SimpleNamespace(left=left, right=right, key=key, spec=spec, params=params, noise_source=noise_source,
                           seed=seed, eps=eps, kernel=kernel)



@st.fragment(run_every=1.0)
def background_status() -> None:
    """The background release's Stop button and progress, polled every second (this fragment only)."""
    now = background_run()
    if now is None:
        return
    if now.done:
        st.rerun()                   # the whole page records it (top of the script)
    # Stop above the bar: the bar's text changes length and would move a button below it under the pointer
    if st.button("Stop", key=STOP, icon=":material/stop_circle:",
                 help="Abandon this release: nothing of it is released; its charge stays spent."):
        stop_background(now)
        st.rerun()
    t = now.elapsed
    shown_ds = S.dataset()
    hidden = shown_ds is not None and S.counts_hidden(shown_ds)      # the prediction follows from the private N
    if now.predicted and not hidden:
        frac = min(t / now.predicted, 0.95)
        text = f"{now.message} · {t:.0f} s of about {now.predicted:.0f} s predicted"
    else:
        frac, text = now.fraction, f"{now.message} · {t:.0f} s"
    st.progress(frac, text=text)
    st.caption(f"Release #{now.rid} ({now.spec.label}) is running in the background: other pages stay usable, and "
               "the release appears here when it is done. Its charge is already in the ledger.")



def background(task, c: SimpleNamespace) -> None:
    """A running background release's status (polled), or the note of one just stopped."""
    left = c.left
    if task is not None:
        with left:
            background_status()
    if STOPPED in ss:
        with left:
            st.warning(ss.pop(STOPPED), icon=":material/stop_circle:")


def explorer(ds, c: SimpleNamespace, recs) -> None:
    """The ε explorer (planning: not a release)."""
    key, params, kernel, eps, noise_source, seed = c.key, c.params, c.kernel, c.eps, c.noise_source, c.seed
    with st.expander(f"ε explorer ({XP.LABEL}): see what ε does before spending any", icon=":material/compare:",
                     expanded=not recs or XP.RESULT_KEY in ss), guard("draw the ε explorer"):
        XP.section(ds, mechanism_key=key, params=params, kernel=kernel, eps_now=eps, noise_source=noise_source,
                   seed=seed)


def choose_release(ds, recs, right):
    """The release shown (the latest by default); stops the page when this data has none."""
    if not recs:
        with right:
            st.info("No release of this dataset yet. Choose a mechanism and press **Release**.")
        st.stop()

    by_id = {r.id: r for r in recs}
    if ss.get(SELECTED) not in by_id:
        ss[SELECTED] = recs[-1].id
    with right:
        sel = st.selectbox("Showing release", list(by_id)[::-1], format_func=lambda i: by_id[i].title,
                           key=SELECTED)
    rec = by_id[sel]
    return rec



def all_releases_table(records) -> None:
    with st.expander("All releases of this dataset"):
        table = pd.DataFrame([{
            "id": x.id, "mechanism": x.mechanism_label, "ε": x.release.epsilon, "δ": S.fmt_delta(x.release.delta),
            "size": x.size_text, "σ": getattr(x.release, "sigma", getattr(x.release, "scale", None)),
            "seed": x.release.seed, "noise": x.release.noise_source,
            "RKHS distance": x.metrics.get("distance"), "L2 error on grid": x.metrics.get("l2"),
            "private": x.private, "seconds": round(x.release.seconds, 3),
        } for x in records])
        # the distances to the private embedding are owner-only: the table with them, or without them
        if not P.OwnerOnly(table, "The distances of each release to the private data").render(
                lambda t: st.dataframe(shown_table(t, precision=None), hide_index=True)):
            st.dataframe(shown_table(table.drop(columns=["RKHS distance", "L2 error on grid"]), precision=None),
                         hide_index=True)
        st.page_link(PAGE_LEDGER, label="Budget ledger", icon=":material/account_balance_wallet:")


def function_release(ds, rec, recs, right) -> None:
    """A function (GP) release: the released function (next to the private one for the owner), its L² errors and
    downloads; then the table of all releases, and stops the page."""
    r = rec.release
    m = rec.metrics
    # ------------------------------------------------------------------ a function (GP) release
    for w in rec.warnings:
        st.warning(w)
    cols = [str(c) for c in ds.columns]
    own = P.show_owner_details()       # the owner-view titles and formulas (the private values: P.OwnerOnly below)
    if r.axes is not None:
        with right if ds.dim == 1 else st.container():
            if ds.dim > 1:
                st.subheader("Released function vs the private one" if own else "The released function")
            # the private μ̂ and the noise next to the released function: owner-only (else the released one alone)
            if not P.OwnerOnly(r.true_values, "The private μ̂ and the noise next to the released function").render(
                    lambda truth: plotly_chart(function_figure(r.axes, r.values, truth, columns=cols),
                                                  key=GP_FIG)):
                plotly_chart(function_figure(r.axes, r.values, None, columns=cols), key=GP_FIG)
            if ds.dim > 2:
                st.caption("A slice through the middle of the other grid axes.")
    if ds.dim > 1 and r.axes is not None:
        with right:
            st.markdown(f"**{rec.title}**: the noisy function f̃ on a {'×'.join(str(len(a)) for a in r.axes)} public "
                        "grid" + (" (below: released values, the private μ̂ for comparison, and the noise)." if own
                                  else " (below: the released values)."))
            st.caption("A function release has no synthetic points to draw here.")
    if own:
        st.subheader("How close is it?")
        st.warning("**Owner's view.** The private μ̂ on the left of the figure and every L² error below (except the "
                   "expected one) are computed from the private rows. They are for you, never part of the release "
                   "or of the downloads: do not publish them.", icon=":material/visibility_off:")
    st.markdown("**f̃ is not in the RKHS**: a Gaussian-process sample path has infinite RKHS norm, so its RKHS "
                "distance to μ̂ is ∞ and it is compared in L² on the grid. That is why Balog et al. privatise a "
                "finite-dimensional projection instead (Algorithms 1 and 2), whose error is finite and which is "
                "weighted synthetic data.")
    formulas = st.container()          # the formulas, drawn with the owner's L² errors below

    def _owner_view(m) -> None:         # the L² errors are computed from the private rows: owner-only
        with formulas, st.expander("Why — and what else the library guarantees"):
            st.markdown(
                "The released function is $\\tilde f = \\hat\\mu_X + s\\,G$ with $G$ a Gaussian-process sample path. "
                "Such a path lies in the RKHS with probability 0 (Karhunen–Loève: "
                "$G=\\sum_i\\sqrt{\\lambda_i}\\,\\xi_i e_i$ has $\\|G\\|_{\\mathcal H}^2=\\sum_i \\xi_i^2=\\infty$), so "
                "$\\|\\tilde f-\\hat\\mu_X\\|_{\\mathcal H}=\\infty$: it cannot be compared in the paper's metric, and it is "
                "not a set of weighted points a third party could resample or use with equation (4). That is why "
                "Balog et al. privatise a **finite-dimensional projection** instead (Algorithm 1: the span of M "
                "points; Algorithm 2: J random features): the noise lives in finitely many coordinates, its RKHS "
                "norm is finite and measurable, and the result is weighted synthetic data. On a grid both can still "
                "be compared pointwise, in L².")
            for key in ("finite_points", "hall_constant", "jitter"):
                if key in _GP_NOTES:
                    st.caption(_GP_NOTES[key])
        g1.metric("L² error on the grid (owner's view)", S.fmt(m.get("l2")),
                  help=f"‖f̃ − μ̂‖ on the grid; ‖μ̂‖ there is {S.fmt(m.get('truth_l2'))}. Private evaluation.")
        if "points_l2" in m:            # its L² error to μ̂ is owner-only too
            g4.metric("Latest points release, same grid", S.fmt(m["points_l2"]),
                      help=f"{m.get('points_title')}: its Σ wₘ k(zₘ, ·) evaluated on the same grid, L² error to μ̂.")
        else:
            g4.caption("Make an Algorithm 1 or 2 release to compare it on this grid; the Curves page compares them "
                       "over ε.")

    g1, g2, g3, g4 = st.columns(4)
    g2.metric("Expected L² error (public)", S.fmt(m.get("expected_l2")),
              help="Computed from the noise level alone: publishable without touching the data.")
    g3.metric("RKHS distance", "∞", help="A GP sample path has infinite RKHS norm (Karhunen–Loève).")
    P.OwnerOnly(m, "The L² errors to the private μ̂ and the formulas of why f̃ is not in the RKHS").render(_owner_view)
    g5, g6, g7, g8 = st.columns(4)
    g5.metric("ε spent", f"{r.epsilon:.4g}")
    g6.metric("Noise multiplier s", S.fmt(r.scale), help=f"pointwise noise std {S.fmt(r.noise_std)}")
    g7.metric("Less noise than Hall et al.'s constant", f"{r.params.get('noise_reduction_vs_hall', 0):.0%}")
    g8.metric("Seed", str(r.seed) if r.noise_source == "seeded" and r.seed is not None else "not recorded")
    st.markdown("**Download the release**")
    DL.guarantee_box(rec, ds)
    d1, d2 = st.columns(2)
    d1.download_button("CSV: grid points + released values", data=function_csv(rec, ds),
                       file_name=f"dpkme_gp_release_{rec.id}.csv", mime="text/csv", key=GP_CSV,
                       on_click="ignore", icon=":material/download:")
    d2.download_button("JSON: parameters", data=function_json(rec, ds), file_name=f"dpkme_gp_release_{rec.id}.json",
                       mime="application/json", key=GP_JSON, on_click="ignore", icon=":material/download:")
    st.caption("A function release cannot be used with equation (4) (there are no weighted points); the "
               "Third-party use page lists weighted-point releases only.")
    if REGISTRY.get(rec.mechanism_key) is not None and REGISTRY[rec.mechanism_key].show is not None:
        REGISTRY[rec.mechanism_key].show(rec, ds)
    all_releases_table(recs)
    st.stop()


def points_release(ds, rec, recs, right) -> None:
    """A weighted-points release: its points (or a table's rows), closeness and noise, the owner's embedding next to
    the released one, downloads."""
    r = rec.release
    m = rec.metrics
    dims = (0, 1) if ds.dim >= 2 else (0, 0)
    if ds.is_table:          # a mixed table: the released rows in the table's own columns and types
        with right, guard("show the released table"):
            TV.release_table_panel(rec, ds)
    else:
        with right:
            if ds.dim > 2:
                a, b = st.columns(2)
                ix = a.selectbox("Horizontal axis", range(ds.dim), format_func=lambda j: str(ds.columns[j]), index=0,
                                 key=DIM_X)
                iy = b.selectbox("Vertical axis", range(ds.dim), format_func=lambda j: str(ds.columns[j]), index=1,
                                 key=DIM_Y)
                dims = (ix, iy)
            if ds.dim >= 2:
                window = C.plot_window(ds, *([] if P.show_owner_details() else [r.points]), dims=dims)
                plotly_chart(release_figure(P.owner_rows(ds.X), r.points, r.weights, columns=ds.model_labels, dims=dims,
                                               window=window, title=("Private rows (faint) and the released weighted points"
                                                      if P.show_owner_details() else "The released weighted points")),
                                key=SCATTER)
            else:
                plotly_chart(weight_histogram(r.weights), key=WEIGHTS1D)

    for w in rec.warnings:
        st.warning(w)
    if not rec.private:
        st.error("This release is NOT differentially private: " + "; ".join(rec.warnings))

    def closeness(m) -> None:
        """The RKHS distances of the release to the private embedding (owner-only: drawn through ``P.OwnerOnly``)."""
        st.subheader("How close is it?")
        st.caption("RKHS distance between the private embedding μ̂ and the released Σ wₘ k(zₘ,·) (lower is better). "
                   "Computed from the private rows for you only — not part of the release or of the download.")
        k1, k2, k3, k4 = st.columns(4)
        k1.metric("RKHS distance of this release", S.fmt(m["distance"]),
                  help=f"‖μ̂‖ = {S.fmt(m['kme_norm'])} for scale.")
        k2.metric("Noise-free projection", S.fmt(m.get("projection")),
                  help="The same points with the exact (non-private) weights: the error due to the points alone.")
        k3.metric("Uniform baseline", S.fmt(m.get("baseline")),
                  help="The first M publishable rows with equal weights (the paper's baseline).")
        rel_err = m["distance"] / m["kme_norm"] if m.get("kme_norm") else float("nan")
        k4.metric("Relative error ‖μ̃ − μ̂‖/‖μ̂‖", f"{rel_err:.1%}" if np.isfinite(rel_err) else "n/a")
        st.caption(C.evaluation_caption(m.get("evaluation")))      # "exact" or "estimate ± CI (95 %)" (large N)


    P.OwnerOnly(m, "How close the release is to the private data (RKHS distances)").render(closeness)
    k5, k6, k7, k8 = st.columns(4)
    k5.metric("ε spent", f"{r.epsilon:g}" if r.epsilon else "0")
    k6.metric("Gaussian noise σ", S.fmt(r.sigma) if r.sigma > 0 else "none",
              help="Per-coordinate standard deviation of the Gaussian noise (the exponential mechanism and the "
                   "baseline add none).")
    k7.metric("Runtime", f"{r.seconds:.2f} s")
    k8.metric("Seed", str(r.seed) if r.noise_source == "seeded" and r.seed is not None else "not recorded",
              help=("Seeded (teaching): anyone with the seed can replay the noise." if r.noise_source == "seeded"
                    else "OS entropy: no seed is recorded or exported, so nobody can regenerate the noise."))

    if REGISTRY.get(rec.mechanism_key) is not None and REGISTRY[rec.mechanism_key].show is not None:
        with guard("show the mechanism's details"):
            REGISTRY[rec.mechanism_key].show(rec, ds)

    def owner_embedding(rec) -> None:
        """The private embedding next to the released one (owner-only: drawn through ``P.OwnerOnly``)."""
        r = rec.release
        if ds.is_table:
            with guard("draw the owner's view of the table"):
                TV.owner_view(rec, ds)
        elif ds.dim >= 2:
            st.subheader("Private vs released embedding")
            lo, hi = C.plot_window(ds, dims=dims)
            xs, ys, G = C.grid_points(ds, lo, hi, dims=dims)
            with guard("draw the heat-maps"):
                gkey = C.array_key(G)
                priv = C.private_kme_on_grid(ds.key, C.kernel_key(r.kernel), gkey, G, ds.X)
                rel = r.evaluate(G)
                # one symmetric difference scale for every weighted-points release of this data on this grid (largest
                # |released − private| among them, each computed once): switching releases never re-scales it silently
                wmax = ss.setdefault(WITNESS_MAX, {})
                for x in recs:
                    if x.kind == "points" and (x.id, gkey) not in wmax:
                        px = C.private_kme_on_grid(ds.key, C.kernel_key(x.release.kernel), gkey, G, ds.X)
                        wmax[(x.id, gkey)] = float(np.abs(x.release.evaluate(G) - px).max())
                shown = [x for x in recs if x.kind == "points"]
                diff_max = max(wmax[(x.id, gkey)] for x in shown)
                plotly_chart(kme_heatmaps(xs, ys, priv, rel, columns=ds.model_labels, dims=dims,
                                             Z=r.points, w=r.weights, diff_max=diff_max), key=HEAT)
                if ds.dim > 2:
                    st.caption("A slice through the centre of q: the other coordinates are fixed there.")
                st.caption("The difference is the *witness function*: where the release over-represents (blue) or "
                           "under-represents (red) the data. White dots: the synthetic points.")
                st.caption(f"**Colour scales that do not re-scale between releases.** The two embeddings share one "
                           f"scale fixed to the private embedding's range on this grid ({S.fmt(float(np.min(priv)))} to "
                           f"{S.fmt(float(np.max(priv)))}; released values beyond it take the end colours). The "
                           f"difference is drawn on ± {S.fmt(diff_max)}: the largest |released − private| among the "
                           f"{len(shown)} weighted-point release(s) of this data in the list above, so switching between "
                           "them keeps the scale and a release at a smaller ε looks noisier. (A new, noisier release "
                           "widens it for all.)")


    P.OwnerOnly(rec, "The private embedding next to the released one").render(owner_embedding)

    c1, c2 = st.columns([1, 1])
    with c1:
        if TV.is_rows_release(rec):           # unweighted rows: no weights to show
            st.caption(f"{r.n_points:,} unweighted synthetic rows (each weight 1/{r.n_points:,} in the files that need one).")
        else:
            plotly_chart(weight_histogram(r.weights), key=HIST)
            neg = int((r.weights < 0).sum())
            if neg:
                st.caption(f"{neg} of {r.n_points} weights are negative (black-edged diamonds in the plot); "
                           f"Σ w = {r.weights.sum():.4g}, Σ |w| = {r.weight_l1:.4g}. Signed weights (the paper's option) are "
                           "legitimate: the release is a signed measure.")
            else:
                st.caption(f"Probability weights: all {r.n_points} are ≥ 0 and Σ w = {r.weights.sum():.4g}; "
                           f"{int((r.weights > 0).sum())} points carry weight.")
    with c2:
        # the guarantee in plain words, the files (CSV, JSON, N synthetic rows) and the recipe: ui/downloads.py
        with guard("prepare the downloads"):
            DL.release_downloads(rec, ds)
        with st.expander("Replay this release"):
            if r.noise_source != "seeded" or r.seed is None:
                st.markdown("This release drew its noise from OS entropy and recorded no seed: it cannot be replayed "
                            "— which is exactly what a real release needs.")
            else:
                st.markdown(
                    f"Re-running **{rec.mechanism_label}** with seed `{r.seed}` and the same settings reproduces the "
                    "release exactly — and therefore reveals nothing new and costs no budget. (The same is true for "
                    "anyone who learns the seed: they can regenerate the noise and remove it.)")
                if st.button("Replay with the recorded seed", key=REPLAY):
                    with guard("replay the release"):
                        again = replay(rec, ds)
                        same_pts = again.points.shape == r.points.shape and np.array_equal(again.points, r.points)
                        diff = float(np.max(np.abs(again.weights - r.weights))) if same_pts else np.inf
                        if diff == 0.0:
                            st.success("Identical: same points, same weights (max |Δw| = 0).")
                        else:
                            st.warning(f"Replay differs (max |Δw| = {diff:.3g}).")
        st.page_link(PAGE_USE, label="Use this release as a third party →", icon=":material/calculate:")


def repeat_section(ds, c: SimpleNamespace) -> None:
    """The randomness of a release: repeat draws (each a charged release) overlaid for the owner."""
    params, kernel, eps, noise_source, seed = c.params, c.kernel, c.eps, c.noise_source, c.seed
    dims = (0, 1) if ds.dim >= 2 else (0, 0)
    st.subheader("The randomness of a release")
    st.markdown(
        "A private release is random: run the same mechanism several times and the weights change. Each draw is a "
        "separate release of the same data and **spends budget** (the ledger composes them)."
    )
    spec_now = REGISTRY[ss[S.MECHANISM]]
    rc1, rc2 = st.columns([1, 3])
    with rc1:
        k = st.number_input("Number of draws", min_value=2, max_value=10, step=1, key=S.N_REPEATS,
                            persist_state="session")
        repeat_ok = True
        if params is not None and spec_now.output == "points" and not spec_now.background:
            est = None
            with guard("estimate the cost of the draws"):
                est = release_cost(spec_now, ds, params, kernel, repeats=int(k))
            repeat_ok = size_guard(est, key=REPEAT_SIZE, what=f"{int(k)} draws", hidden=S.counts_hidden(ds))
        again = st.button("Repeat draws", key=REPEAT,
                          disabled=params is None or spec_now.output != "points" or not repeat_ok or spec_now.background,
                          help="For the mechanism selected on the left (weighted-point releases that run in the page; "
                               "a background release is drawn again with **Release**).")
    if again and params is not None and repeat_ok:
        bar = st.progress(0.0, text="drawing")
        with guard("repeat the release") as res:
            ctx = make_context(ds, noise_source=noise_source, seed=seed,
                               progress=lambda f, msg: bar.progress(min(max(f, 0.0), 1.0), text=msg), kernel=kernel,
                               eps=eps)
            rep_out = repeat_draws(spec_now, params, ctx, int(k), page="release")
        bar.empty()
        if res.ok:
            N.advance(S.SEED, max((s for s in rep_out["seeds"] if s is not None), default=None))
            ss[TOAST] = f"{int(k)} draws done"
            st.rerun()
    def repeat_view(rep: dict) -> None:
        """The draws next to the private embedding, with their RKHS distances (owner-only: through ``P.OwnerOnly``)."""
        for n in rep["notes"]:
            st.warning(n)
        d = np.asarray(rep["distances"])
        rels = rep["releases"]
        line_dim = dims[0]
        center = ds.public.mean(axis=0) if ds.n_public else (ds.q_center if ds.q_center is not None
                                                            else np.zeros(ds.dim))
        lo, hi = C.plot_window(ds, dims=(line_dim, line_dim))
        xs = np.linspace(lo[0], hi[0], 200)
        L = np.tile(center, (xs.size, 1))
        L[:, line_dim] = xs
        kern = rep["kernel"]
        priv_line = C.private_kme_on_grid(ds.key, C.kernel_key(kern), C.array_key(L), L, ds.X)
        lines = [rr.evaluate(L) for rr in rels]
        plotly_chart(repeat_figure(xs, priv_line, lines, xlabel=f"{ds.columns[line_dim]} (other coordinates "
                                      "at the publishable-subset mean)" if ds.n_public else str(ds.columns[line_dim]),
                                      distances=d), key=REPEAT_FIG)
        st.caption(f"{len(rels)} draws of {rep['mechanism']}: RKHS distance {d.mean():.3g} ± {d.std(ddof=1):.2g} "
                   "(mean ± sd); "
                   + ("seeds: " + ", ".join(str(s) for s in rep["seeds"]) + "."
                      if all(x.noise_source == "seeded" for x in rels) else "noise from OS entropy, no seeds recorded."))


    rep = ss.get(S.REPEAT_DRAWS)
    with rc2:
        if rep and rep["dataset_key"] == ds.key:
            P.OwnerOnly(rep, "The draws next to the private embedding").render(repeat_view)
        else:
            st.caption("Press **Repeat draws** to overlay several independent releases.")
