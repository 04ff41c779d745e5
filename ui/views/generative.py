"""The Generative release page's views (``pages/generative.py``): DPGM -- the data and settings, the public plan,
the paper's Figure 2, a run with its Stop button, and what it releases.

The data, planning, run, evaluation and files are in :mod:`ui.generative` and :mod:`dpkme.generative`.
"""

from __future__ import annotations

import json
import threading
import time
from types import SimpleNamespace

import numpy as np
import streamlit as st

from dpkme.privacy.spec import NeighbouringRelation
from ui import gate as G
from ui import generative as GN
from ui import noise as N
from ui import presentation as P
from ui import state as S
from ui import widgets as W
from ui.charts import plotly_chart
from ui.export import privacy_fields
from ui.figures import epsilon_against_epochs_figure, generated_rows_figure, loss_figure, paper_figure2_figure
from ui.widgets import PAGE_LEDGER, delta_control, epsilon_control, guard, size_guard

ss = st.session_state

# --------------------------------------------------------------------------- this page's session and widget keys
ACCOUNTANT = "gen.accountant"
BATCH = "gen.batch"
BOX = "gen.box"
CLIP = "gen.clip"
CURVE_FIG = "gen.curve_fig"
DATA = "gen.data"
DEFAULTS = "gen.defaults"
DEFAULTS_FOR = "gen.defaults_for"
DIM_X = "gen.dim_x"
DIM_Y = "gen.dim_y"
DL_JSON = "gen.dl_json"
DL_ROWS = "gen.dl_rows"
EPOCHS = "gen.epochs"
F2_Q = "gen.f2_q"
F2_SG = "gen.f2_sg"
F2_SK = "gen.f2_sk"
FIG2 = "gen.fig2"
GO = "gen.go"
HI = "gen.hi"
HIDDEN = "gen.hidden"
K = "gen.k"
KITER = "gen.kiter"
KSHARE = "gen.kshare"
LATENT = "gen.latent"
LO = "gen.lo"
LOSS_FIG = "gen.loss_fig"
LR = "gen.lr"
LR_FOR = "gen.lr_for"
MODEL = "gen.model"
N_HIDDEN = "gen.n_hidden"
N_ROWS = "gen.n_rows"
NOISE = "gen.noise"
PARTITION = "gen.partition"
RANGE_FOR = "gen.range_for"
SCATTER = "gen.scatter"
SEED = "gen.seed"
SIZE = "gen.size"
STOP = "gen.stop"


def header() -> None:
    """The page's title and what DPGM releases."""
    st.title("Generative release — DPGM")
    st.markdown(
        "Acs, Melis, Castelluccia & De Cristofaro's **DPGM**: private kernel k-means splits the rows into k clusters, "
        "then one generative network per cluster (a small VAE or an RBM) is trained with **differentially private "
        "SGD** — every row's gradient clipped to norm C, Gaussian noise added to each step, one Poisson sample of the "
        "table per step. The release is the k trained models (and the clusters' noisy sizes): anyone samples "
        "synthetic rows from them, at no further privacy cost. The ε of the clustering and of all SGD steps are "
        "composed (RDP and PLD accountants, next to the paper's formula); the guarantee is for adding or removing "
        "one row."
    )


def settings() -> SimpleNamespace:
    """The left column: the data, privacy, model and noise settings (stops the page without data)."""
    left, right = st.columns([1, 2], gap="large")
    gd = None
    with left:
        st.markdown("**Data**")
        ss.setdefault(DATA, "digits")
        choice = st.selectbox("Dataset", list(GN.DATASETS), format_func=GN.DATASETS.get, key=DATA,
                              persist_state="session")
        with guard("load the data"):
            if choice == "digits":
                gd = GN.digits_data()
            elif choice == "penguins":
                gd = GN.penguins_data()
            elif choice == "mixture":
                gd = GN.mixture_data()
            else:
                cur = S.dataset()
                if cur is None:
                    raise ValueError("no current dataset; choose one on the Data page or pick another dataset here.")
                lo0, hi0, note = GN.suggested_range(cur)
                if ss.get(RANGE_FOR) != cur.key:            # a new dataset: its public default range
                    ss[LO], ss[HI], ss[RANGE_FOR] = lo0, hi0, cur.key
                a, b = st.columns(2)
                lo = float(a.number_input("Declared lower bound (all columns)", key=LO, format="%.4g"))
                hi = float(b.number_input("Declared upper bound (all columns)", key=HI, format="%.4g"))
                st.caption(f"Default from {note}. Values outside are clipped. Declare it from public knowledge, never "
                           "from the private rows.")
                gd = GN.current_data(cur, lo, hi, f"declared [{lo:g}, {hi:g}] for every column")
        if gd is None:
            st.stop()
        ds = gd.ds
        # under add/remove the exact row count is the owner's: not projected in presentation mode
        owner = P.show_owner_details()
        described = ds.describe() if owner else f"{ds.name} (row counts hidden in presentation mode)"
        st.caption(f"{described}. Bounds: {gd.bounds_note}."
                   + (f" Label column with {gd.n_classes} declared classes: generated rows carry labels." if gd.n_classes
                      else ""))
        app_ds = S.dataset()
        if app_ds is None or app_ds.data_key != ds.data_key:     # the sidebar's "Current data" is another dataset
            st.caption(f":material/info: This page trains on the dataset chosen here, **{ds.name}**, not the sidebar's "
                       f"*Current data* ({app_ds.name if app_ds is not None else 'none'}: the other pages' data). Its runs "
                       "are charged to this dataset's own ledger, shown in the sidebar under *This page trains on*.")
            with st.sidebar:
                st.markdown("**This page trains on**")
                st.caption(f"{described} — chosen on the Generative release page, not the current data above.")
                own = ss.get(S.LEDGERS, {}).get(ds.data_key)
                if own is not None and len(own):
                    st.caption(f"Privacy spent on it: {S.budget_headline(S.ledger_for(ds))['text']} "
                               f"({len(own)} charge{'' if len(own) == 1 else 's'} in its ledger.)")
                else:
                    st.caption("Privacy spent on it: nothing yet in this session.")
        st.markdown("**Privacy** (shared with the other pages)")
        eps = epsilon_control()
        delta = delta_control(ds.n if owner else None)
        st.markdown("**Model**")
        partition = "kmeans"
        if gd.n_classes:                                   # one model per class needs a label column
            ss.setdefault(PARTITION, "labels")       # issue 17: k-means models gave grey noise on the digits
            partition = st.radio("Split the rows between models by", list(GN.PARTITIONS), key=PARTITION,
                                 persist_state="session", format_func=GN.PARTITIONS.get)
            st.caption(GN.PARTITION_NOTE + " " + GN.PARTITION_DEFAULT_NOTE)
        by_label = partition == "labels"
        # The benchmark's settings for this data and split (issue 17): set on the first visit where not set, and again
        # whenever the dataset or the split changes; the user's changes stay until then.
        defaults = GN.default_settings(choice, partition)        # public defaults: never sized by the exact N
        profile = f"{choice}/{partition}"
        if ss.get(DEFAULTS_FOR) != profile:
            first = DEFAULTS_FOR not in ss
            for key_, value_ in defaults.items():
                if first:
                    ss.setdefault(key_, value_)
                else:
                    ss[key_] = value_
            ss[DEFAULTS_FOR], ss[LR_FOR] = profile, ss.get(MODEL, "vae")

        def _use_defaults(values=defaults) -> None:
            for key_, value_ in values.items():
                ss[key_] = value_
            ss[LR_FOR] = values[MODEL]

        ss.setdefault(K, 5)
        k = int(st.number_input("Clusters k (one model each)", min_value=1, max_value=20, step=1, key=K,
                                persist_state="session", disabled=by_label,
                                help=f"One model per class: {gd.n_classes} models, no clustering." if by_label else
                                "k = 1: no clustering, one model for all rows."))
        ss.setdefault(MODEL, "vae")
        model = st.radio("Model", ["vae", "rbm"], key=MODEL, horizontal=True, persist_state="session",
                         format_func={"vae": "VAE (variational autoencoder)", "rbm": "RBM (restricted Boltzmann)"}.get)
        ss.setdefault(EPOCHS, 3)
        epochs = int(st.number_input("Epochs", min_value=1, max_value=200, step=1, key=EPOCHS,
                                     persist_state="session", help="One epoch = ⌈1/q⌉ DP-SGD steps, q = L/N."))
        ss.setdefault(BATCH, 64)
        batch = int(st.select_slider("Expected batch size L", options=list(GN.BATCH_CHOICES), key=BATCH,
                                     persist_state="session"))
        ss.setdefault(CLIP, 1.0)
        clip = float(st.number_input("Clip norm C", min_value=0.01, max_value=100.0, step=0.1, key=CLIP,
                                     persist_state="session", format="%.3g",
                                     help="Every row's gradient is clipped to L2 norm C; the noise is σ·C."))
        lr_default = defaults[LR] if model == "vae" else 1e-2
        if ss.get(LR_FOR) != model:
            ss[LR], ss[LR_FOR] = lr_default, model
        lr = float(st.number_input("Learning rate", min_value=1e-5, max_value=1.0, step=1e-3, key=LR,
                                   format="%.4g", help="Adam's for the VAE, plain SGD's for the RBM (the paper's 0.01)."))
        with st.expander("Architecture and accounting"):
            ss.setdefault(HIDDEN, 64)
            hidden = int(st.select_slider("VAE hidden width", options=[16, 32, 64, 128, 256], key=HIDDEN,
                                          persist_state="session"))
            ss.setdefault(LATENT, 8)
            latent = int(st.number_input("VAE latent dimension", min_value=1, max_value=64, step=1, key=LATENT,
                                         persist_state="session"))
            ss.setdefault(N_HIDDEN, 64)
            n_hidden = int(st.number_input("RBM hidden units", min_value=2, max_value=512, step=2, key=N_HIDDEN,
                                           persist_state="session"))
            ss.setdefault(KSHARE, 0.2)
            kshare = float(st.slider("k-means share of (ε, δ)", min_value=0.05, max_value=0.6, step=0.05, key=KSHARE,
                                     persist_state="session", disabled=k == 1 or by_label))
            ss.setdefault(KITER, 5)
            kiter = int(st.number_input("Noisy Lloyd iterations T_K", min_value=1, max_value=30, step=1, key=KITER,
                                        persist_state="session", disabled=k == 1 or by_label))
            ss.setdefault(ACCOUNTANT, "pld")
            accountant = st.radio("Calibrate with", ["pld", "rdp"], key=ACCOUNTANT, horizontal=True,
                                  persist_state="session",
                                  format_func={"pld": "PLD (tightest)", "rdp": "Rényi DP"}.get)
        settings_now = {key_: ss.get(key_) for key_ in defaults}
        expected = GN.expected_result(choice, partition, settings_now, epsilon=eps) if eps is not None else None
        if GN.settings_differ(defaults, settings_now, partition=partition):
            st.caption("These settings differ from the benchmark's for this data and split ("
                       + GN.settings_text(defaults, partition=partition) + ").")
            st.button("Use the benchmark's settings", key=DEFAULTS, on_click=_use_defaults,
                      icon=":material/restart_alt:")
        else:
            st.caption(GN.defaults_note(choice, partition))
        noise, seed = N.noise_controls(NOISE, SEED, what="runs")
        problems = G.taint_reasons(noise_source=noise, ds=ds, uses_kernel=False)
        for p in problems:
            st.error(f"A run would NOT be differentially private: {p}.")
        G.over_budget_checkbox("generative")
    params = {"k": k, "model": model, "epochs": epochs, "batch_size": batch, "clip_norm": clip, "learning_rate": lr,
              "hidden": hidden, "latent_dim": latent, "n_hidden": n_hidden, "epsilon": eps, "delta": delta,
              "kmeans_share": kshare, "kmeans_iter": kiter, "accountant": accountant, "partition": partition}
    return SimpleNamespace(left=left, right=right, choice=choice, gd=gd, ds=ds, owner=owner, eps=eps, delta=delta,
                           partition=partition, by_label=by_label, k=k, model=model, epochs=epochs, batch=batch,
                           clip=clip, kshare=kshare, kiter=kiter, accountant=accountant, noise=noise, seed=seed,
                           expected=expected, params=params)


def planning(s: SimpleNamespace) -> SimpleNamespace:
    """The right column: the public plan (the owner's preview, or one from the counted N̂ in presentation mode),
    its budget split and the ε-vs-epochs curve; ``plan``, ``view`` and ``counted`` for the run."""
    ds, gd, owner, eps, delta, batch, epochs, k = s.ds, s.gd, s.owner, s.eps, s.delta, s.batch, s.epochs, s.k
    kshare, kiter, accountant, partition, by_label = s.kshare, s.kiter, s.accountant, s.partition, s.by_label
    right = s.right
    plan = None
    with right:
        with guard("plan the run"):
            if eps is None:
                raise ValueError("choose a positive ε.")
            # in presentation mode the check is against the public N̂ once counted (the run caps L at N̂ anyway):
            # a refusal at the exact N would tell the audience whether N < L
            n_check = ds.n if owner else (st.session_state.get(G.ROW_COUNTS, {}).get(ds.key).value
                                          if ds.key in st.session_state.get(G.ROW_COUNTS, {}) else None)
            if n_check is not None and batch > n_check:
                raise ValueError(f"the batch size L = {batch} exceeds the {ds.n:,} private rows; choose L ≤ {ds.n:,}."
                                 if owner else f"the batch size L = {batch} exceeds the counted N̂ = {n_check:,}; "
                                               "choose a smaller L.")
            with st.spinner("Calibrating the noise (public inputs only)…"):
                plan = GN.plan(epsilon=eps, delta=delta, n_private=ds.n, batch_size=min(batch, ds.n), epochs=epochs, k=k,
                               kmeans_share=kshare, kmeans_iter=kiter, accountant=accountant, partition=partition)
        # What is shown: the owner's preview (planned with the exact N); in presentation mode only a plan from a public
        # N -- the privately counted N̂ once a run has made it -- since σ, q and T_S follow from N.
        counted = st.session_state.get(G.ROW_COUNTS, {}).get(ds.key)
        view = plan
        if plan is not None and not owner:
            view = None
            if counted is not None:
                with guard("plan from the counted N̂"):
                    view = GN.plan(epsilon=eps, delta=delta, n_private=counted.value, batch_size=min(batch, counted.value),
                                   epochs=epochs, k=k, kmeans_share=kshare, kmeans_iter=kiter, accountant=accountant,
                                   partition=partition)
            if view is None:
                st.subheader("Budget split — planning (nothing spent)")
                st.metric("Whole run", f"ε = {plan.epsilon:.3g}", f"δ = {S.fmt_delta(delta)}", delta_color="off")
                P.hidden_note("The noise multiplier, the steps and the ε-vs-epochs curve (they follow from the exact row "
                              "count until a run has counted it privately)")
        if view is not None:
            plan_shown = view
            st.subheader("Budget split — planning (nothing spent)")
            st.caption("Planned with your own row count N = " + (f"{ds.n:,}" if owner else f"N̂ = {counted.value:,} "
                                                                    "(the privately counted one)")
                        + " (owner's preview). Under add/remove the exact N is "
                       "private, so the run re-plans with a privately counted N̂ (Laplace, ε = "
                       f"{G.COUNT_EPSILON:g}, charged once per dataset): the released models and files carry N̂, never N.")
            c1, c2, c3 = st.columns(3)
            c1.metric("Whole run", f"ε = {plan_shown.epsilon:.3g}", f"δ = {S.fmt_delta(delta)}", delta_color="off")
            c2.metric("SGD noise multiplier σ", f"{plan_shown.noise_multiplier:.3g}",
                      help="Noise std on each cluster's sum of clipped gradients, in units of the clip norm C.")
            c3.metric("SGD steps T_S", f"{plan_shown.steps:,}", f"q = {plan_shown.sampling_rate:.3g}", delta_color="off")
            with guard("show the budget split"):
                st.dataframe(GN.budget_split(plan_shown, partition=partition), hide_index=True,
                             column_config={"ε alone": st.column_config.NumberColumn(format="%.3g")})
            if by_label:
                st.caption(f"One model per class: the label column splits the rows into {gd.n_classes} models (public "
                           "equal weights), no k-means is run, so the whole (ε, δ) goes to DP-SGD.")
            else:
                st.caption("The clustering's share is fixed first; the SGD noise is then the smallest for which the "
                           "**joint** composition meets (ε, δ), so the parts' ε alone do not add up to the total "
                           "(composition is tighter than adding ε).")
            with guard("draw the ε-vs-epochs curve"):
                grid = tuple(GN.curve_epochs(epochs))
                key = json.dumps({"p": [plan_shown.noise_multiplier, plan_shown.sampling_rate, plan_shown.delta, k, kshare, kiter,
                                        accountant, eps, partition]})
                with st.spinner("Accounting ε for each number of epochs…"):
                    cv = GN.planning_curve(plan_shown, key=key, epochs=grid)
                fig = epsilon_against_epochs_figure(cv, epochs=epochs, epsilon=plan_shown.epsilon,
                                                    noise_multiplier=plan_shown.noise_multiplier,
                                                    delta_text=S.fmt_delta(delta))
                plotly_chart(fig, key=CURVE_FIG)
                st.caption(("Computed from public inputs only (N, L, σ, δ; no k-means in one model per class): "
                            if by_label else "Computed from public inputs only (N, L, k, T_K, σ, δ): ")
                           + "no data is read and nothing is charged. "
                           "ε grows with the number of epochs; more epochs at the same total ε need more noise per step.")
    return SimpleNamespace(plan=plan, view=view, counted=counted)


def paper_figure2() -> None:
    """The paper's Figure 2 redrawn from public inputs (no data)."""
    with st.expander("The paper's Figure 2: ε against SGD epochs (MNIST, δ = 10⁻⁵, T_K = 20, σ_C = 4)"):
        f1, f2, f3 = st.columns(3)
        ss.setdefault(F2_Q, 0.0017)
        fq = float(f1.select_slider("Sampling probability q", options=[0.0017, 0.005, 0.01, 0.02], key=F2_Q,
                                    persist_state="session"))
        ss.setdefault(F2_SG, 1.0)
        fsg = float(f2.select_slider("σ_G (SGD noise)", options=[0.7, 1.0, 2.0, 4.0], key=F2_SG,
                                     persist_state="session"))
        ss.setdefault(F2_SK, 80.0)
        fsk = float(f3.select_slider("σ_K (k-means noise)", options=[20.0, 40.0, 80.0, 160.0], key=F2_SK,
                                     persist_state="session"))
        with guard("compute the paper's curve"):
            f2c = GN.paper_figure2(sampling_rate=fq, sigma_G=fsg, sigma_K=fsk)
            fig2 = paper_figure2_figure(f2c)
            plotly_chart(fig2, key=FIG2)
            st.caption("The shape of the paper's Figure 2: ε rises quickly over the first epochs, then roughly like the "
                       "square root of the number of steps; larger q gives larger ε, larger σ_G and σ_K smaller. Public "
                       "inputs only (no data).")


def run_section(s: SimpleNamespace, p: SimpleNamespace):
    """The Train button (left) and a run on it, with its Stop button (right): the stop signal of a run stopped during
    this script run (re-raised by :func:`finish`), or None."""
    ds, gd, owner, eps, delta, batch, epochs, k = s.ds, s.gd, s.owner, s.eps, s.delta, s.batch, s.epochs, s.k
    kshare, kiter, accountant, partition, by_label = s.kshare, s.kiter, s.accountant, s.partition, s.by_label
    left, right, choice, params, noise, seed, expected = s.left, s.right, s.choice, s.params, s.noise, s.seed, s.expected
    model, clip = s.model, s.clip
    plan, view, counted = p.plan, p.view, p.counted
    cfg = run_key(s)
    box = ss.setdefault(BOX, {})          # mutated, never reassigned (a stop request forbids assignments)
    stop_signal = None                          # a Stop (or input change) during training: re-raised at the page's end
    with left:
        run_ok = True
        if plan is not None and (owner or view is not None):
            # projected: the estimate of the plan from the counted N̂ (its steps and memory follow from N)
            with guard("estimate the cost of the run"):
                run_ok = size_guard(GN.estimate(gd, params, plan if owner else view,
                                                n_rows=None if owner else counted.value),
                                    key=SIZE, what="this training run", stoppable=True)
        elif plan is not None:
            P.hidden_note("The predicted time of the run (it follows from the exact row count until a run has counted "
                          "it privately)")
        go_btn = st.button("Train the generative models", type="primary", key=GO, width="stretch",
                           disabled=plan is None or not run_ok)
        why_not = GN.train_disabled_reason(plan_ok=plan is not None, run_ok=run_ok)
        if why_not:
            st.caption(f":material/block: **Train is disabled:** {why_not}")
        st.caption("Charged to the ledger of these rows before they are read (the first run also charges the private "
                   f"row count, ε = {G.COUNT_EPSILON:g}). " + GN.default_run_note(choice, partition))
        if expected:
            st.caption(":material/insights: " + expected)

    if go_btn and plan is not None and run_ok:
        with right:
            # the Stop button above the bar: the bar's text changes length (and lines) at every report, which moved a
            # button drawn below it under the pointer
            stop_slot = st.empty()
            bar = st.progress(0.0, text="charging the ledger, then private k-means and compiling the models…")
            stop_slot.button("Stop training", key=STOP, icon=":material/stop_circle:",
                             help="Stops at the next progress report and keeps the models trained so far; the charge "
                                  "stays the planned one.")
        prog = W.StoppableProgress(bar)
        # Streamlit's fast reruns: a Stop click STOPs this script run and starts the next one at once, in another
        # thread, while this one still trains. That run waits on this event (below) for the stopped run's models.
        done = threading.Event()
        box["running"] = done
        try:
            with guard("run DPGM") as res:
                label = (f"DPGM {model.upper()} (one model per class, c = {gd.n_classes}, {epochs} epochs, L = {batch}, "
                         f"C = {clip:g})" if by_label else
                         f"DPGM {model.upper()} (k = {k}, {epochs} epochs, L = {batch}, C = {clip:g})")
                used_seed = N.claim_seed(seed or 0, f"DPGM on {ds.name}") if noise == N.REPLAY else None
                run_plan = [plan]

                def charges(rows):
                    # add/remove: N is counted privately by the gate (never the exact row count); the run is re-planned
                    # for that public N̂ (same ε, δ: the noise multiplier is re-calibrated for its sampling rate)
                    run_plan[0] = GN.plan(epsilon=eps, delta=delta, n_private=rows.n, batch_size=min(batch, rows.n),
                                          epochs=epochs, k=k, kmeans_share=kshare, kmeans_iter=kiter,
                                          accountant=accountant, partition=partition)
                    return [run_plan[0].charge(label)]

                def cb(step, total, loss, eps_now):
                    return prog.update(step / total, GN.progress_text(step, total, loss, run_plan[0]))

                # session-state writes before the run: after a Stop request Streamlit refuses them
                ss.setdefault(S.LEDGER_NAMES, {}).setdefault(ds.data_key, ds.name)
                t_run = time.perf_counter()
                gated = G.run_private(
                    page="generative", ds=ds, charges=charges, noise_source=noise,
                    relation=NeighbouringRelation.ADD_REMOVE, uses_kernel=False,
                    compute=lambda inputs: GN.run(gd, run_plan[0], {**params, "batch_size": min(batch, inputs.rows.n)},
                                                  n_private=inputs.rows.n, rng=used_seed, progress=cb))
                result, note = gated.result, gated.note
                charge = gated.charges[0] if gated.charges else None
                problems = list(gated.reasons)
                if result is not None and not problems and prog.interrupted is None:
                    GN.observe(gd, params, run_plan[0], time.perf_counter() - t_run)   # corrects later predictions
                box["latest"] = {"key": cfg, "result": result, "charge": None if problems else charge, "note": note,
                                 "data_key": ds.data_key, "ds": ds.key, "problems": problems, "data": choice}
                if used_seed is not None:
                    box["advance"] = used_seed
        finally:
            done.set()                                        # the models (if any) are stored
        bar.empty()
        stop_slot.empty()
        # Stopped (issue 17): show the stopped run's models in this run at once, then let the requested rerun happen at
        # the end of the page (it draws the same stored run), instead of depending on that rerun to show them.
        stop_signal, prog.interrupted = prog.interrupted, None
        if stop_signal is None and res.ok:
            if "advance" in box:
                N.advance(SEED, box.pop("advance"))
            st.rerun()
    return stop_signal


def run_key(s: SimpleNamespace) -> str:
    """The settings a run was made with (a stored run with other settings is marked out of date)."""
    return json.dumps({"data": s.choice, "ds": s.ds.key, "bounds": [b.tolist() for b in s.gd.bounds], **s.params,
                       "noise": s.noise}, default=str)


def show_run(s: SimpleNamespace, stored: dict) -> None:
    """A run: its models' size and loss, generated rows next to held-out ones, the owner's MMD, the downloads."""
    ds, gd, right, cfg = s.ds, s.gd, s.right, run_key(s)
    result = stored["result"]
    per_class = result.config.get("partition") == "labels"       # model s is class s
    names = ([gd.class_names[s] if gd.class_names and s < len(gd.class_names) else str(s) for s in range(result.k)]
             if per_class else [f"c{s + 1}" for s in range(result.k)])
    with right:
        if stored["key"] != cfg:
            st.warning("The models below were trained with other settings; press **Train the generative models** "
                       "to update.")
        if stored.get("note"):
            st.warning(stored["note"])
        for p in stored.get("problems") or []:
            st.error(f"This run is NOT differentially private: {p}. Not charged to the ledger as a private run.")
        if result.cancelled:
            st.warning(f"Stopped after {result.steps_run:,} of {result.plan.steps if result.plan else '?'} steps. "
                       f"The ledger keeps the **planned** charge (ε = {result.epsilon:.3g}): the decision to stop may "
                       "depend on the released noisy losses, which the fixed-horizon guarantee covers but the cost of "
                       f"the steps that ran does not (those alone: ε = {result.privacy.get('epsilon_run', 0):.3g}, valid "
                       "only for a number of steps fixed in advance).")
    st.subheader(f"What is released: {result.k} trained models" + (" (one per class)" if per_class else ""))
    a, b, c, d = st.columns(4)
    a.metric("ε charged", f"{result.epsilon:.3g}", help=f"δ = {S.fmt_delta(result.delta)}, add/remove one row.")
    b.metric("Models", str(result.k))
    c.metric("SGD steps run", f"{result.steps_run:,}")
    d.metric("Runtime", f"{result.seconds:.1f} s")
    lc, wc = st.columns([2, 1])
    with lc:
        hist = np.asarray(result.loss_history, dtype=float)
        if hist.size:
            win = max(1, hist.size // 50)
            smooth = np.convolve(hist, np.ones(win) / win, mode="valid")
            fig = loss_figure(smooth)
            plotly_chart(fig, key=LOSS_FIG)
    with wc:
        if per_class:
            st.dataframe({"class": names, "weight (public, equal)": np.round(np.asarray(result.weights,
                                                                                         dtype=float), 3).tolist()},
                         hide_index=True)
        else:
            st.dataframe({"cluster": names,
                          "weight": np.round(np.asarray(result.weights, dtype=float), 3).tolist(),
                          "noisy size": np.round(np.asarray(result.noisy_sizes, dtype=float), 1).tolist()},
                         hide_index=True)
            sig = GN.size_noise(result)
            if sig and P.show_owner_details():       # compares with the exact N: the owner's number
                st.caption(f"Each noisy size carries Gaussian noise of std σ = {sig:.3g} (the k-means share of ε), "
                           f"so their sum ({float(np.sum(result.noisy_sizes)):,.0f}) may differ from N = {ds.n:,} by "
                           f"about ±{sig * np.sqrt(result.k):,.0f}; the weights are the sizes clipped at 0, "
                           "normalised.")

    # ---------------------------------------------------------------- samples
    st.subheader("Generated rows next to real held-out rows")
    gen_rows, gen_labels, gen_clusters = GN.generated_by_cluster(result)
    zero = [names[s] for s in range(result.k) if float(result.weights[s]) <= 0.0]
    if gd.image_shape is not None:
        i1, i2 = st.columns(2)
        with i1:
            lab = ""
            if per_class:
                lab = " Row by row, the classes " + ", ".join(names) + " (each row's label is its model's class)."
            elif gen_labels is not None:
                lab = " Labels, row by row: " + "; ".join(
                    f"c{s + 1}: " + " ".join(gd.class_names[v] for v in gen_labels[gen_clusters == s])
                    for s in range(result.k))
            st.image(GN.tile_grid(GN.scaled(gd, gen_rows), shape=gd.image_shape),
                     caption=f"Generated (one row per {'class' if per_class else 'cluster'}'s model with weight > 0, "
                             "8 samples each)." + lab
                             + (f" Not shown: {', '.join(zero)} (weight 0, never sampled)." if zero else ""))
        with i2:
            rng = np.random.default_rng()
            n_show = min(len(gen_rows) or 8 * result.k, ds.n_heldout)
            idx = rng.choice(ds.n_heldout, size=n_show, replace=False)
            P.OwnerOnly(ds.heldout[idx], "Real held-out digits (rows of the protected individuals)").render(
                lambda rows: st.image(GN.tile_grid(GN.scaled(gd, rows), shape=gd.image_shape),
                                      caption="Real held-out digits (never used in training), as many as generated."))
    else:
        cols = gd.columns
        dims = (0, 1 if ds.dim > 1 else 0)
        if ds.dim > 2:
            a_, b_ = st.columns(2)
            dims = (a_.selectbox("Horizontal axis", range(ds.dim), format_func=lambda j: cols[j], key=DIM_X),
                    b_.selectbox("Vertical axis", range(ds.dim), format_func=lambda j: cols[j], index=1,
                                 key=DIM_Y))
        many, many_lab, many_comp = GN.draw(result, 2000)
        held = P.owner_rows(ds.heldout)              # none in presentation mode: the figure keeps its axes
        group = many_lab if many_lab is not None else many_comp
        groups = gd.class_names if many_lab is not None else [f"cluster {i + 1}" for i in range(result.k)]
        fig = generated_rows_figure(many, group, held, groups=groups, dims=dims, columns=cols)
        plotly_chart(fig, key=SCATTER)

    # ---------------------------------------------------------------- MMD
    st.subheader("How close? MMD to the held-out rows — owner's evaluation (not DP, not released)")
    with guard("evaluate the generated rows"):
        if P.show_owner_details() and "eval" not in stored:   # once per run; never computed for a projector
            with st.spinner("Sampling and comparing with a KME release at the same ε…"):
                stored["eval"] = GN.evaluate(gd, result)

        def _mmd_table(ev: dict) -> None:
            st.dataframe({"rows": list(ev), "MMD to held-out (smaller is closer)": [round(v, 4) for v in ev.values()]},
                         hide_index=True)
            st.caption("Gaussian kernel on the declared-bounds-scaled columns (lengthscale √d/4, public). The KME "
                       "release is an Algorithm 2 run at the same ε and δ (add/remove) on the same private rows, made "
                       "for this comparison only: not charged, not released, shown only to you — like every number "
                       "in this table, which reads the private rows.")

        P.OwnerOnly(stored.get("eval") or {}, "The MMD evaluation against the private and held-out rows").render(
            _mmd_table)

    # ---------------------------------------------------------------- downloads
    st.subheader("Downloads")
    private = not stored.get("problems")
    fields = privacy_fields(GN._claim_view(result, ds), app_private=private and result.private,
                            reasons=stored.get("problems") or (), ds=ds)
    (st.info if fields["differentially_private"] else st.warning)("**The guarantee, in plain words.** "
                                                                   + fields["guarantee_in_words"])
    ss.setdefault(N_ROWS, int(min(GN.DEFAULT_ROWS, GN.MAX_ROWS)))   # a public default, never the exact N
    n_rows = int(st.number_input("Synthetic rows in the CSV", min_value=1, max_value=GN.MAX_ROWS, step=100,
                                 key=N_ROWS, persist_state="session"))
    d1, d2 = st.columns(2)
    with guard("build the downloads"):
        d1.download_button("Model parameters (JSON): the release", data=GN.model_json(
            result, gd, app_private=private, reasons=stored.get("problems") or ()),
            file_name="dpkme_dpgm_models.json", mime="application/json", key=DL_JSON, on_click="ignore",
            icon=":material/download:")
        rows_key = ("rows", n_rows)
        if stored.get("rows_key") != rows_key:          # drawn once per (run, n): post-processing, fresh entropy
            stored["rows"], stored["rows_key"] = GN.rows_csv(result, gd, n_rows), rows_key
        d2.download_button(f"Synthetic rows (CSV, {n_rows:,}, labelled)" if gd.n_classes else
                           f"Synthetic rows (CSV, {n_rows:,})", data=stored["rows"], file_name="dpkme_dpgm_rows.csv",
                           mime="text/csv", key=DL_ROWS, on_click="ignore", icon=":material/download:")
    st.caption("The JSON holds the k models' parameters and public configuration (its `partition`: "
               + ("one model per class, public equal class weights" if per_class else "k-means, the noisy cluster "
                  "sizes") + "), the noisy "
               "training losses and the privacy accounting, with the guarantee in plain words; no seed or noise "
               "state. `dpkme.generative.DPGMResult.from_dict(json.load(open(...))).sample(n)` draws more rows. "
               "The rows are post-processing of the models: no further privacy cost.")
    st.page_link(PAGE_LEDGER, label="Budget ledger", icon=":material/account_balance_wallet:")


def stored_run(s: SimpleNamespace) -> None:
    """The last run on this page's data (waiting for a stopped one to finish), or how to start one."""
    box = ss.setdefault(BOX, {})
    right, ds = s.right, s.ds
    running = box.get("running")
    if running is not None and not running.is_set():      # a run stopped by this rerun's click is still finishing
        with right, st.spinner("Stopping the training at its next progress report; keeping the models trained so far…"):
            running.wait(timeout=900)
    stored = box.get("latest")
    if stored and stored.get("ds") == ds.key:
        show_run(s, stored)
    else:
        with right:
            st.info("Press **Train the generative models**. The run is charged to the ledger first; a progress bar and "
                    "a Stop button appear while it trains.")


def finish(stop_signal) -> None:
    """At the page's end: re-raise a Stop of this script run (after the stopped run's models were drawn)."""
    box = ss.setdefault(BOX, {})
    if stop_signal is not None:
        if "advance" in box:
            N.advance(SEED, box.pop("advance"))
        raise stop_signal
