"""The Privacy–utility curves page's views (``pages/curves.py``): the setting (your data, the paper's figures, the
comparisons at equal ε), the runs, and the curves (owner-only when computed on the private rows)."""

from __future__ import annotations

import json
from types import SimpleNamespace

import numpy as np
import pandas as pd
import streamlit as st

from dpkme.cost import estimate_cost
from dpkme.curves import paper_m_grid, subspace_curves
from dpkme.datasets import paper_mixture
from dpkme.release import subspace
from dpkme.reproduce import fig1, fig2_alg1
from ui import compute as C
from ui import noise as N
from ui import presentation as P
from ui import state as S
from ui.charts import plotly_chart
from ui.export import owner_only_csv
from ui.figures import PALETTE, curves_figure
from ui.runner import evaluation_cost
from ui.widgets import guard, size_guard

ss = st.session_state

# --------------------------------------------------------------------------- this page's session and widget keys
J_KEY = "crv.J"
CMP_ALG2 = "crv.cmp_alg2"
CMP_AXIS1 = "crv.cmp_axis1"
CMP_AXIS2 = "crv.cmp_axis2"
CMP_DATA = "crv.cmp_data"
CMP_DL = "crv.cmp_dl"
CMP_EPS = "crv.cmp_eps"
CMP_FIG = "crv.cmp_fig"
CMP_GAXIS1 = "crv.cmp_gaxis1"
CMP_GAXIS2 = "crv.cmp_gaxis2"
CMP_GM = "crv.cmp_gm"
CMP_GO = "crv.cmp_go"
CMP_M = "crv.cmp_m"
CMP_NEPS = "crv.cmp_neps"
CMP_RESULT = "crv.cmp_result"
CMP_SIZE = "crv.cmp_size"
DL = "crv.dl"
EPS_RANGE = "crv.eps_range"
FIG2_ALG2 = "crv.fig2_alg2"
FIG_EPS = "crv.fig_eps"
FIG_M = "crv.fig_m"
GO = "crv.go"
KIND = "crv.kind"
M_MAX = "crv.m_max"
M_PICK = "crv.m_pick"
MECHS = "crv.mechs"
N_EPS = "crv.n_eps"
NOISE = "crv.noise"
PAPER_DIM = "crv.paper_dim"
PAPER_M = "crv.paper_m"
PAPER_N = "crv.paper_n"
PRESET = "crv.preset"
REPS = "crv.reps"
SEED = "crv.seed"
SIZE = "crv.size"
SOLVER = "crv.solver"
CMP_AXIS = {1: CMP_AXIS1, 2: CMP_AXIS2}      # candidates per axis of the exponential mechanism's grid
CMP_GAXIS = {1: CMP_GAXIS1, 2: CMP_GAXIS2}    # grid points per axis of the GP release


PRESETS = {
    "custom": "Your data and settings",
    "fig1": "Paper Figure 1 — publishable subset (reduced size)",
    "fig2": "Paper Figure 2 — random points from q (reduced size)",
    "exp": "Exponential mechanism vs Algorithms 1 & 2",
    "gp": "GP function release vs Algorithms 1 & 2 (L² on a grid)",
}


def header() -> None:
    """The page's title, what the curves are, and a warning when the kernel settings are not private."""
    st.title("Privacy–utility curves")
    st.markdown(
        "How accurate is a release, depending on the privacy level ε and on the number M of synthetic points? "
        "Each curve point is an independent run of Algorithm 1; the band shows the spread over repetitions. "
        "This is an **evaluation** for the data owner: it compares many noisy releases with the private embedding. "
        "Nothing here is published, so nothing is added to the ledger — but never publish these curves for "
        "private data either (they are computed from it)."
    )

    for _p in N.privacy_problems(kernel=True):   # the one guard every page with a lengthscale calls
        st.warning(f"Releases with the current kernel settings would NOT be private: {_p}. Curves on your data show how "
                   "such releases behave; they are not private either.")


def preset_choice() -> str:
    """The setting: your data, a paper figure, or a comparison at equal ε."""
    ss.setdefault(PRESET, "custom")
    preset = st.radio("Setting", list(PRESETS), format_func=PRESETS.get, key=PRESET, horizontal=True,
                      persist_state="session")
    return preset


def comparison_section(ds, kind: str) -> None:
    """Exponential mechanism or GP release against Algorithms 1 and 2 at equal ε (then the page stops)."""
    from dpkme.release.exponential import DEFAULT_MAX_DATABASES, count_multisets, largest_m
    from ui.views import curves_comparisons as K

    eps_grid = C.epsilon_grid()
    sources = {}
    if ds.dim <= 2 and ds.n_public >= 2:
        sources["current"] = f"current data: {ds.name} (D = {ds.dim}; your kernel)"
    sources.update(K.GENERATED)
    ss.setdefault(CMP_DATA, next(iter(sources)))
    if ss[CMP_DATA] not in sources:
        ss[CMP_DATA] = next(iter(sources))
    left, right = st.columns([1, 2], gap="large")
    with left:
        src = st.radio("Data", list(sources), format_func=sources.get, key=CMP_DATA, persist_state="session")
        if ds.dim > 2:
            st.caption(f"The current data have D = {ds.dim}: a candidate grid is only feasible in 1-D or 2-D.")
        dim = ds.dim if src == "current" else {"mix1": 1, "mix2": 2}[src]
        if kind == "exp":
            ss.setdefault(CMP_AXIS[dim], 20 if dim == 1 else 6)
            per_axis = int(st.number_input("Candidate grid: points per axis", min_value=2, max_value=200, step=1,
                                           key=CMP_AXIS[dim], persist_state="session"))
            n_cand = per_axis ** dim
            cap = largest_m(n_cand) if n_cand <= DEFAULT_MAX_DATABASES else 0
            if cap < 1:
                st.error(f"{n_cand:,} candidates are too many for the exact mechanism; use fewer points per axis.")
                st.stop()
            ss.setdefault(CMP_M, 4)
            ss[CMP_M] = int(min(max(ss[CMP_M], 1), cap))
            m = int(st.number_input("Synthetic database size M", min_value=1, max_value=cap, step=1,
                                    key=CMP_M, persist_state="session",
                                    help=f"Largest M that the exact enumeration allows here: {cap}."))
            st.caption(f"|G| = {n_cand:,} candidates, M = {m}: **{count_multisets(n_cand, m):,}** databases, every "
                       "one scored exactly (one more point multiplies the count by about |G|/M).")
        else:
            ss.setdefault(CMP_GAXIS[dim], 200 if dim == 1 else 40)
            per_axis = int(st.number_input("Grid points per axis", min_value=2, max_value=400, step=1,
                                           key=CMP_GAXIS[dim], persist_state="session"))
            ss.setdefault(CMP_GM, 100)
            m = int(st.number_input("Points M of Algorithms 1 and 2", min_value=1, max_value=1000, step=10,
                                    key=CMP_GM, persist_state="session"))
        ss.setdefault(CMP_ALG2, True)
        with_alg2 = st.checkbox("Include Algorithm 2", key=CMP_ALG2, persist_state="session",
                                help="One reduced-set solver run per ε and repetition (interactive preset).")
        e_lo, e_hi = st.select_slider("ε range (log scale)", options=eps_grid, format_func=lambda v: f"{v:g}",
                                      value=(0.01, 10.0), key=CMP_EPS, persist_state="session")
        ss.setdefault(CMP_NEPS, 5)
        n_eps = st.number_input("Number of ε values", min_value=1, max_value=12, step=1, key=CMP_NEPS,
                                persist_state="session")
        ss.setdefault(REPS, 3)
        reps = st.number_input("Repetitions per point", min_value=1, max_value=20, step=1, key=REPS,
                               persist_state="session")
        crv_noise, seed = N.noise_controls(NOISE, SEED, label="Noise of the runs", what="curves",
                                           labels=N.SIMULATION_LABELS)
        st.caption(f"δ = {S.fmt_delta(S.delta())} for Algorithms 1 and 2 ({ss[S.CALIBRATION]} calibration, Kernel & privacy "
                   "page) and the GP release (analytic calibration); the exponential mechanism spends no δ.")
    eps_values = sorted({round(float(v), 6) for v in np.geomspace(e_lo, e_hi, int(n_eps))}) if e_hi > e_lo \
        else [float(e_lo)]
    with left:
        n_cmp = ds.n if src == "current" else 2000
        runs = len(eps_values) * int(reps)
        est = None
        with guard("estimate the cost of the comparison"):
            if kind == "exp":
                est = estimate_cost("exponential", n=n_cmp, n_candidates=per_axis ** dim, m=m, dim=dim)
            else:
                est = estimate_cost("gp", n=n_cmp, grid_shape=(per_axis,) * dim, dim=dim).repeated(runs)
            est = est + estimate_cost("algorithm1", n=n_cmp, n_points=m, dim=dim).repeated(runs)
            if with_alg2:
                est = est + estimate_cost("algorithm2", n=n_cmp, n_points=m, n_features=1000, dim=dim,
                                          preset="interactive").repeated(runs)
        size_ok = size_guard(est, key=CMP_SIZE, what="this comparison")
        run = st.button("Compute the comparison", type="primary", key=CMP_GO, disabled=not size_ok)
    cfg = {"kind": kind, "src": src, "ds": ds.key if src == "current" else None, "axis": per_axis, "m": m,
           "alg2": bool(with_alg2), "eps": eps_values, "reps": int(reps), "seed": seed, "delta": S.delta(),
           "cal": ss[S.CALIBRATION], "sens": ss[S.SENS_MODE],
           "kernel": C.kernel_spec() if src == "current" else None}
    cfg_key = json.dumps(cfg, sort_keys=True, default=str)
    if run:
        with right:
            bar = st.progress(0.0, text="starting")
        with guard("compute the comparison"):
            if src == "current":
                cd = K.CompareData(ds.name, ds.X, ds.public, C.current_kernel())
            else:
                cd = K.generated_data(src)
            fn = K.exponential_comparison if kind == "exp" else K.gp_comparison
            out = fn(cd, epsilons=eps_values, delta=S.delta(), m=m, per_axis=per_axis, reps=int(reps),
                     with_alg2=with_alg2, calibration=ss[S.CALIBRATION], sensitivity=ss[S.SENS_MODE],
                     seed=N.run_seed(crv_noise, seed, "comparison curves"),
                     progress=lambda f, msg: bar.progress(min(max(float(f), 0.0), 1.0), text=msg))
            ss[CMP_RESULT] = {"key": cfg_key, "kind": kind, "out": out, "private": src == "current"}
            N.advance(SEED, seed if crv_noise == N.REPLAY else None)
        bar.empty()
    stored = ss.get(CMP_RESULT)
    with right:
        if not stored or stored["kind"] != kind:
            st.info("Press **Compute the comparison** (about a second with the defaults). Changing an input while "
                    "it runs cancels it.")
            st.stop()
        def comparison_view(stored: dict) -> None:
            """The comparison's figure, notes and CSV (owner-only when computed on the current data's rows)."""
            if stored["key"] != cfg_key:
                st.warning("The comparison below was computed with other settings; press **Compute the comparison**.")
            out = stored["out"]
            t = out["table"]
            colors = {"exponential mechanism": "#d62728", "GP release (expected)": "#d62728", "Algorithm 1": "#1f77b4",
                      "Algorithm 2": "#2ca02c"}
            series = []
            for method in t["method"].unique():
                g = t[t["method"] == method].groupby("epsilon")["value"]
                multi = t[t["method"] == method]["rep"].nunique() > 1
                series.append({"name": method, "x": list(g.mean().index), "y": g.mean().values,
                               "lo": g.min().values if multi else None, "hi": g.max().values,
                               "color": colors.get(method), "dash": "solid" if method.startswith(("exp", "GP")) else "dash"})
            xs = sorted(t["epsilon"].unique())
            if kind == "exp":
                refs = (("best database (ε = ∞)", out["best"], "#000000"),
                        ("Algorithm 1 without noise (projection onto G)", out["projection"], "#7f7f7f"))
                title = f"Exponential mechanism (M = {out['m']}, |G| = {out['n_candidates']}) vs Algorithms 1 and 2"
                ylabel = "RKHS distance to the private KME (lower is better)"
            else:
                refs = (("zero function (‖μ̂‖ on the grid)", out["truth_l2"], "#000000"),)
                title = f"GP release vs Algorithms 1 and 2 (M = {out['m']}), L² on a {out['grid']} grid"
                ylabel = "L² distance to the private KME on the grid (lower is better)"
            for name, v, color in refs:
                if v is not None and v > 0:
                    series.append({"name": name, "x": xs, "y": [v] * len(xs), "dash": "dot", "color": color})
            plotly_chart(curves_figure(xs, series, xlabel="ε (log scale)", title=title, ylabel=ylabel),
                            key=CMP_FIG)
            st.caption(f"Data: {out['data']}.")
            if kind == "exp":
                st.caption(
                    "Equal ε: the exponential mechanism's curve is its **exact expected** distance (all "
                    f"{out['n_databases']:,} databases weighted by their probabilities); Algorithms 1 and 2 show the mean "
                    "over repetitions with a min–max band. The exponential mechanism is pure ε-DP (δ = 0), Algorithms 1 "
                    "and 2 also spend δ. With few points it cannot get closer than the best database of size M (the "
                    "black line): its error stops falling at large ε, while re-weighting all |G| candidates keeps "
                    "improving — and its cost explodes with M (Release page).")
            else:
                st.caption(
                    "Equal (ε, δ). GP: the expected L² error in closed form (computed from the noise level alone — "
                    "public). Algorithms 1 and 2: mean over repetitions (band: min–max) of their released Σ wₘ k(zₘ, ·) "
                    "evaluated on the same grid. In L² the GP release is competitive, but it is a noisy function, not "
                    "weighted points, and its RKHS distance is infinite.")
            st.caption("Evaluation for the data owner: every value except the GP's expected error is computed from the "
                       "private rows. Nothing here is a release or is charged to the ledger.")
            st.download_button("Download the comparison (CSV, owner only)", data=owner_only_csv(t),
                               file_name=f"dpkme_{kind}_comparison.csv", mime="text/csv", key=CMP_DL,
                               on_click="ignore", icon=":material/download:")

        if stored.get("private", json.loads(stored["key"]).get("src") == "current"):     # your private rows
            P.OwnerOnly(stored, "The comparison computed on the private rows").render(comparison_view)
        else:                           # generated data: public
            comparison_view(stored)
    st.stop()


def _long_table(curves, scenario: str) -> pd.DataFrame:
    rows = []
    for i, m in enumerate(curves.m_grid):
        rows.append({"scenario": scenario, "method": "uniform baseline", "M": m, "F": curves.basis_dims[i],
                     "epsilon": np.nan, "rep": 0, "distance": curves.baseline[i]})
        rows.append({"scenario": scenario, "method": "noise-free projection", "M": m, "F": curves.basis_dims[i],
                     "epsilon": np.nan, "rep": 0, "distance": curves.projection[i]})
        for e_idx, eps in enumerate(curves.epsilons):
            for r, rep in enumerate(curves.alg1_reps[e_idx]):
                rows.append({"scenario": scenario, "method": "Algorithm 1", "M": m, "F": curves.basis_dims[i],
                             "epsilon": eps, "rep": r, "distance": rep[i]})
    return pd.DataFrame(rows)


def _from_reproduce(res: dict, scenario: str) -> pd.DataFrame:
    rows = []
    for i, m in enumerate(res["M"]):
        rows.append({"scenario": scenario, "method": "uniform baseline", "M": m, "F": res["basis_dims"][i],
                     "epsilon": np.nan, "rep": 0, "distance": res["baseline"][i]})
        rows.append({"scenario": scenario, "method": "noise-free projection", "M": m, "F": res["basis_dims"][i],
                     "epsilon": np.nan, "rep": 0, "distance": res["projection"][i]})
        for e_idx, eps in enumerate(res["epsilons"]):
            for r, rep in enumerate(res["alg1_reps"][e_idx]):
                rows.append({"scenario": scenario, "method": "Algorithm 1", "M": m, "F": res["basis_dims"][i],
                             "epsilon": eps, "rep": r, "distance": rep[i]})
    return pd.DataFrame(rows)


def settings(ds, preset: str) -> SimpleNamespace:
    """The left column's settings of the curves (your data's or the paper's) and the Compute button."""
    eps_grid = C.epsilon_grid()
    kind = mechs = a2j = a2s = e_lo = e_hi = n_eps = dim = n_paper = None
    with_alg2 = False
    left, right = st.columns([1, 2], gap="large")
    with left:
        if preset == "custom":
            domain = ds.point_domain       # declared bounds on every column (or a schema): points drawn inside them
            kinds = {"public": "Algorithm 1 with the publishable subset",
                     "q": ("Algorithm 1 with random points from q" if domain is None else
                           "Algorithm 1 with uniform random points within the declared bounds")}
            if not ds.n_public:
                kinds.pop("public")
            ss.setdefault(KIND, next(iter(kinds)))
            if ss[KIND] not in kinds:
                ss[KIND] = next(iter(kinds))
            kind = st.radio("Synthetic points", list(kinds), format_func=kinds.get, key=KIND,
                            persist_state="session")
            mech_opts = ["Algorithm 1", "Algorithm 2"]
            mechs = st.multiselect("Mechanisms", mech_opts, default=["Algorithm 1"], key=MECHS,
                                   persist_state="session",
                                   help="Algorithm 2 runs a reduced-set solver per ε and repetition (seconds each).")
            if "Algorithm 2" in mechs:
                from dpkme.reduced_set import get_solver
                from dpkme.release.random_features import list_solvers

                a2j = st.select_slider("Algorithm 2: random features J", options=[200, 500, 1000, 2000, 5000],
                                       value=1000, key=J_KEY, persist_state="session")
                names = [s["name"] for s in list_solvers()]
                if domain is not None:       # only solvers that keep their points inside the declared bounds
                    names = [n for n in names if get_solver(n).honours_domain]
                if ss.get(SOLVER) not in names:
                    ss[SOLVER] = names[0]
                a2s = st.selectbox("Algorithm 2: solver", names, key=SOLVER, persist_state="session")
                st.caption(("Algorithm 2 starts from draws of q (centre and spread as on the Release page)."
                            if domain is None else "Algorithm 2 starts from uniform draws within the declared bounds "
                            "and keeps its points inside them.")
                           + " One solver run per ε and repetition, a few seconds each: start with few ε values and "
                           "repetitions.")
            e_lo, e_hi = st.select_slider("ε range (log scale)", options=eps_grid, format_func=lambda v: f"{v:g}",
                                          value=(0.01, 10.0), key=EPS_RANGE, persist_state="session")
            ss.setdefault(N_EPS, 4)
            n_eps = st.number_input("Number of ε values", min_value=1, max_value=12, step=1, key=N_EPS,
                                    persist_state="session")
            m_cap = ds.n_public if kind == "public" else 2000
            ss.setdefault(M_MAX, 250)
            ss[M_MAX] = int(min(max(ss[M_MAX], 1), m_cap))
            m_max = st.number_input("Largest M", min_value=1, max_value=int(m_cap), step=50, key=M_MAX,
                                    persist_state="session")
            st.caption("Kernel, δ, calibration and sensitivity are those of the Kernel & privacy page.")
        else:
            ss.setdefault(PAPER_DIM, 2)
            dim = st.radio("Dimension D", [2, 5], key=PAPER_DIM, horizontal=True, persist_state="session")
            ss.setdefault(PAPER_N, 20000)
            n_paper = st.select_slider("N (the paper: 100 000)", options=[5000, 10000, 20000, 50000], key=PAPER_N,
                                       persist_state="session")
            ss.setdefault(PAPER_M, 2000)
            m_max = st.select_slider("Largest M (the paper: 10 000)", options=[500, 1000, 2000, 5000], key=PAPER_M,
                                     persist_state="session")
            with_alg2 = False
            if preset == "fig2":
                with_alg2 = st.checkbox("Include Algorithm 2 (dashed; J = 1000, M ≤ 1000, a few seconds)", value=True,
                                        key=FIG2_ALG2, persist_state="session")
            st.caption("The paper's settings: mixture of 10 Gaussians (seed 0), γ = 10⁻⁴/D, ε ∈ {0.01, 0.1, 1}, "
                       "δ = 10⁻⁶, classic calibration with Δ = 2/N, full basis"
                       + (", q = N(0, 500² I)." if preset == "fig2" else ", the first M rows public."))
        ss.setdefault(REPS, 3)
        reps = st.number_input("Repetitions per point", min_value=1, max_value=20, step=1, key=REPS,
                               persist_state="session")
        crv_noise, seed = N.noise_controls(NOISE, SEED, label="Noise of the runs", what="curves",
                                           labels=N.SIMULATION_LABELS)
        est = None
        with guard("estimate the cost of the curves"):
            runs = int(reps) * (int(n_eps) if preset == "custom" else 3)
            if preset == "custom":
                kern = C.current_kernel()
                est = evaluation_cost(ds, kern, int(m_max)) + estimate_cost("algorithm1", n=ds.n, n_points=int(m_max),
                                                                             dim=ds.dim)
                if "Algorithm 2" in mechs:
                    est = est + estimate_cost("algorithm2", n=ds.n, n_points=int(m_max), n_features=int(a2j), dim=ds.dim,
                                              solver=a2s, preset="interactive").repeated(runs)
            else:
                est = (estimate_cost("rkhs-distance", n=int(n_paper), n_points=int(m_max), dim=int(dim))
                       + estimate_cost("algorithm1", n=int(n_paper), n_points=int(m_max), dim=int(dim)))
                if with_alg2:
                    est = est + estimate_cost("algorithm2", n=int(n_paper), n_points=min(int(m_max), 1000),
                                              n_features=1000, dim=int(dim), preset="interactive").repeated(runs)
        size_ok = size_guard(est, key=SIZE, what="these curves")
        run = st.button("Compute curves", type="primary", key=GO, disabled=not size_ok)
    return SimpleNamespace(right=right, kind=kind, mechs=mechs, a2j=a2j, a2s=a2s, e_lo=e_lo, e_hi=e_hi, n_eps=n_eps,
                           m_max=m_max, dim=dim, n_paper=n_paper, with_alg2=with_alg2, reps=reps, noise=crv_noise,
                           seed=seed, run=run)


def run_config(ds, preset: str, s: SimpleNamespace) -> SimpleNamespace:
    """The kernel, the ε values and the key of the settings (stops the page when the kernel cannot be built)."""
    kind, mechs, a2j, a2s, m_max, reps, seed = s.kind, s.mechs, s.a2j, s.a2s, s.m_max, s.reps, s.seed
    e_lo, e_hi, n_eps, dim, n_paper, with_alg2 = s.e_lo, s.e_hi, s.n_eps, s.dim, s.n_paper, s.with_alg2
    kernel = eps_values = None
    a2 = False
    if preset == "custom":
        eps_values = sorted({float(v) for v in np.geomspace(e_lo, e_hi, int(n_eps))}) if e_hi > e_lo else [float(e_lo)]
        kernel = None
        with guard("build the kernel"):
            kernel = C.current_kernel()
        if kernel is None:   # e.g. a lengthscale outside the kernels' range: the error says what to change
            st.stop()
        a2 = "Algorithm 2" in mechs
        config = {"preset": preset, "kind": kind, "mechs": list(mechs), "a2": [a2j, a2s] if a2 else None,
                  "eps": eps_values, "m_max": int(m_max), "reps": int(reps),
                  "seed": seed, "ds": ds.key, "kernel": kernel.to_dict(), "delta": S.delta(),
                  "cal": ss[S.CALIBRATION], "sens": ss[S.SENS_MODE]}
    else:
        config = {"preset": preset, "dim": int(dim), "n": int(n_paper), "m_max": int(m_max), "reps": int(reps),
                  "seed": seed, "alg2": bool(with_alg2)}
    config_key = json.dumps(config, sort_keys=True, default=str)
    return SimpleNamespace(kernel=kernel, eps_values=eps_values, a2=a2, key=config_key)


@st.cache_data(max_entries=4, show_spinner=False)
def _paper_data(n: int, dim: int) -> np.ndarray:
    return paper_mixture(n, dim, random_state=0, legacy=True)



def compute(ds, preset: str, s: SimpleNamespace, c: SimpleNamespace) -> None:
    """On the Compute button: the curves (owner's evaluation runs, nothing charged), stored in the session."""
    if not s.run:
        return
    kind, mechs, a2j, a2s, m_max, reps, right = s.kind, s.mechs, s.a2j, s.a2s, s.m_max, s.reps, s.right
    dim, n_paper, with_alg2, crv_noise, seed = s.dim, s.n_paper, s.with_alg2, s.noise, s.seed
    kernel, eps_values, a2, config_key = c.kernel, c.eps_values, c.a2, c.key
    with right:
        bar = st.progress(0.0, text="starting")

    def progress(f, msg):
        bar.progress(min(max(float(f), 0.0), 1.0), text=f"{msg} ({f:.0%})")

    with guard("compute the curves"):
        run_seed = N.run_seed(crv_noise, seed, "privacy-utility curves")   # fresh unless in replay mode
        if preset == "custom":
            if kind == "public":
                Z, sample = ds.public[: int(m_max)], True
            else:
                rng = np.random.default_rng(run_seed)
                if ds.point_domain is not None:     # uniform within the declared bounds (issue 16, finding 3)
                    Z, sample = ds.point_domain.sample(int(m_max), rng), False
                else:
                    Z, sample = subspace.draw_points_from_q(int(m_max), ds.dim, scale=float(ss.get(S.Q_SCALE, ds.q_scale)),
                                                   rng=rng, center=ds.q_center), False
            kxx = C.mean_kxx(ds.key, C.kernel_key(kernel), ds.X)
            if not mechs:
                raise ValueError("choose at least one mechanism.")
            share = 0.25 if a2 else 1.0
            curves = subspace_curves(
                ds.X, Z, kernel=kernel, epsilons=eps_values, delta=S.delta(), m_grid=paper_m_grid(int(m_max), 60),
                reps=int(reps), calibration=ss[S.CALIBRATION], sensitivity=ss[S.SENS_MODE], points_are_sample=sample,
                mean_kxx=kxx, random_state=run_seed, progress=lambda f, m: progress(share * f, m))
            table = _long_table(curves, f"{ds.name}: {kind}")
            if "Algorithm 1" not in mechs:
                table = table[table["method"] != "Algorithm 1"]
            if a2:
                from ui.mechanisms.algorithm2 import alg2_sweep

                rows = alg2_sweep(ds, kernel, epsilons=eps_values, m_grid=paper_m_grid(int(m_max), 8),
                                  reps=int(reps), delta=S.delta(), calibration=ss[S.CALIBRATION],
                                  n_features=int(a2j), solver=a2s, q_scale=float(ss.get(S.Q_SCALE, ds.q_scale)),
                                  seed=run_seed, mean_kxx=kxx,
                                  progress=lambda f, m: progress(share + (1 - share) * f, m))
                extra = pd.DataFrame(rows)
                extra["scenario"] = f"{ds.name}: q"
                extra["F"] = np.nan
                table = pd.concat([table, extra[table.columns]], ignore_index=True)
        else:
            X = _paper_data(int(n_paper), int(dim))
            fn = fig1 if preset == "fig1" else fig2_alg1
            share = 0.15 if with_alg2 else 1.0
            out = fn(X, max_m=int(m_max), reps=int(reps), seed=run_seed, progress=lambda f, m: progress(share * f, m))
            table = _from_reproduce(out, f"{preset} D={dim} N={n_paper}")
            if with_alg2:
                from dpkme.reduced_set import DEFAULT_SOLVER
                from dpkme.reproduce import fig2_alg2
                from ui.mechanisms.algorithm2 import fast_options

                res2 = fig2_alg2(X, n_features=1000, max_m=min(int(m_max), 1000), seed=run_seed,
                                 mean_kxx=out["mean_kxx"], solver_options=fast_options(DEFAULT_SOLVER),
                                 progress=lambda f, m: progress(share + (1 - share) * f, m))
                rows = [{"scenario": f"{preset} D={dim} N={n_paper}", "method": "Algorithm 2", "M": m, "F": np.nan,
                         "epsilon": eps, "rep": 0, "distance": d}
                        for eps, ds_ in zip(res2["epsilons"], res2["alg2"]) for m, d in zip(res2["M"], ds_)]
                table = pd.concat([table, pd.DataFrame(rows)], ignore_index=True)
        ss[S.CURVES] = {"key": config_key, "table": table, "label": PRESETS[preset], "private": preset == "custom"}
        N.advance(SEED, run_seed if crv_noise == N.REPLAY else None)
    bar.empty()


def results(right, config_key: str) -> None:
    """The stored curves (owner-only when computed on the private rows), or how to compute them."""
    stored = ss.get(S.CURVES)
    if stored is None:
        with right:
            st.info("Press **Compute curves**. The default settings take about a second; the paper presets up to "
                    "half a minute. Changing any input while it runs cancels it.")
        st.stop()
    if stored.get("private", stored.get("label") == PRESETS["custom"]):     # computed from the private rows
        P.OwnerOnly(stored, "The privacy–utility curves computed on the private rows").render(lambda st_: curves_view(st_, right=right, config_key=config_key))
    else:                                   # the paper's presets: generated data, public
        curves_view(stored, right=right, config_key=config_key)


def curves_view(stored: dict, *, right, config_key: str) -> None:
    """The curves, their ε view, the CSV and the table (owner-only when computed on the private rows)."""
    with right:
        if stored["key"] != config_key:
            st.warning("The curves below were computed with other settings; press **Compute curves** to update.")
        t = stored["table"]
        alg = t[t["method"] == "Algorithm 1"]
        eps_list = sorted(alg["epsilon"].unique()) or sorted(t[t["method"] == "Algorithm 2"]["epsilon"].unique())
        Ms = sorted(t["M"].unique())
        series = []
        for i, eps in enumerate(eps_list):
            g = alg[alg["epsilon"] == eps].groupby("M")["distance"]
            series.append({"name": f"Algorithm 1, ε = {eps:g}", "x": list(g.mean().index), "y": g.mean().values,
                           "lo": g.min().values,
                           "hi": g.max().values, "color": PALETTE[i % len(PALETTE)]})
        alg2 = t[t["method"] == "Algorithm 2"]
        for i, eps in enumerate(sorted(alg2["epsilon"].unique())):
            g = alg2[alg2["epsilon"] == eps].groupby("M")["distance"]
            color = PALETTE[eps_list.index(eps) % len(PALETTE)] if eps in eps_list else PALETTE[(i + 4) % len(PALETTE)]
            series.append({"name": f"Algorithm 2, ε = {eps:g}", "x": list(g.mean().index), "y": g.mean().values,
                           "lo": g.min().values if len(alg2["rep"].unique()) > 1 else None, "hi": g.max().values,
                           "color": color, "dash": "dash"})
        for name, dash, color in (("uniform baseline", "dash", "#000000"), ("noise-free projection", "dot", "#7f7f7f")):
            g = t[t["method"] == name].groupby("M")["distance"].mean()
            if len(g) and g.notna().any():
                series.append({"name": name, "x": list(g.index), "y": g.values, "dash": dash, "color": color})
        plotly_chart(curves_figure(Ms, series, xlabel="number of synthetic points M",
                                      title=f"Distance against M — {stored['label']}"), key=FIG_M)
        st.caption("Bands: min–max over repetitions. More points let the span cover the data better, but every "
                   "point adds a noisy coordinate: with small ε the error grows with M (as in the paper's Figure 1).")


    if len(eps_list) > 1:
        m_pick_opts = Ms
        default_m = min(Ms, key=lambda x: abs(x - 100))
        if ss.get(M_PICK) not in m_pick_opts:
            ss[M_PICK] = default_m
        m_pick = st.select_slider("M for the ε curve", options=m_pick_opts, key=M_PICK)
        e_series = []
        for j, method in enumerate(("Algorithm 1", "Algorithm 2")):
            part = t[t["method"] == method]
            if part.empty:
                continue
            m_near = min(part["M"].unique(), key=lambda x: abs(x - m_pick))
            sub = part[part["M"] == m_near].groupby("epsilon")["distance"]
            e_series.append({"name": f"{method}, M = {m_near}", "x": list(sub.mean().index), "y": sub.mean().values,
                             "lo": sub.min().values, "hi": sub.max().values, "color": PALETTE[3 + j],
                             "dash": "solid" if j == 0 else "dash"})
        for name, dash, color in (("uniform baseline", "dash", "#000000"), ("noise-free projection", "dot", "#7f7f7f")):
            v = t[(t["method"] == name) & (t["M"] == m_pick)]["distance"]
            if len(v):
                e_series.append({"name": name, "x": eps_list, "y": [float(v.iloc[0])] * len(eps_list), "dash": dash,
                                 "color": color})
        plotly_chart(curves_figure(eps_list, e_series, xlabel="ε (log scale)",
                                      title=f"Distance against ε at M = {m_pick}"), key=FIG_EPS)

    st.download_button("Download the curve data (CSV, owner only)", data=owner_only_csv(t), file_name="dpkme_curves.csv",
                       mime="text/csv", key=DL, on_click="ignore", icon=":material/download:")
    with st.expander("Table"):
        st.dataframe(t, hide_index=True, height=260)
