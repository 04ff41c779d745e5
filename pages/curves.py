"""Privacy–utility curves: RKHS distance against M and ε, with repetitions; paper presets; CSV export."""

import json

import numpy as np
import pandas as pd
import streamlit as st

from dpkme.cost import estimate_cost
from dpkme.curves import paper_m_grid, subspace_curves
from dpkme.datasets import paper_mixture
from dpkme.release.subspace import draw_points_from_q
from dpkme.reproduce import fig1, fig2_alg1
from ui import compute as C
from ui import noise as N
from ui import presentation as P
from ui import state as S
from ui.charts import plotly_chart
from ui.export import owner_only_csv
from ui.figures import PALETTE, curves_figure
from ui.frame import require_frame
from ui.runner import evaluation_cost
from ui.widgets import guard, require_dataset, size_guard

require_frame(__file__)

ss = st.session_state
ds = require_dataset()

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

PRESETS = {
    "custom": "Your data and settings",
    "fig1": "Paper Figure 1 — publishable subset (reduced size)",
    "fig2": "Paper Figure 2 — random points from q (reduced size)",
    "exp": "Exponential mechanism vs Algorithms 1 & 2",
    "gp": "GP function release vs Algorithms 1 & 2 (L² on a grid)",
}
ss.setdefault("crv.preset", "custom")
preset = st.radio("Setting", list(PRESETS), format_func=PRESETS.get, key="crv.preset", horizontal=True,
                  persist_state="session")

eps_grid = C.epsilon_grid()


def comparison_section(kind: str) -> None:
    """Exponential mechanism or GP release against Algorithms 1 and 2 at equal ε (then the page stops)."""
    from dpkme.release.exponential import DEFAULT_MAX_DATABASES, count_multisets, largest_m
    from ui import comparisons as K

    sources = {}
    if ds.dim <= 2 and ds.n_public >= 2:
        sources["current"] = f"current data: {ds.name} (D = {ds.dim}; your kernel)"
    sources.update(K.GENERATED)
    ss.setdefault("crv.cmp_data", next(iter(sources)))
    if ss["crv.cmp_data"] not in sources:
        ss["crv.cmp_data"] = next(iter(sources))
    left, right = st.columns([1, 2], gap="large")
    with left:
        src = st.radio("Data", list(sources), format_func=sources.get, key="crv.cmp_data", persist_state="session")
        if ds.dim > 2:
            st.caption(f"The current data have D = {ds.dim}: a candidate grid is only feasible in 1-D or 2-D.")
        dim = ds.dim if src == "current" else {"mix1": 1, "mix2": 2}[src]
        if kind == "exp":
            ss.setdefault(f"crv.cmp_axis{dim}", 20 if dim == 1 else 6)
            per_axis = int(st.number_input("Candidate grid: points per axis", min_value=2, max_value=200, step=1,
                                           key=f"crv.cmp_axis{dim}", persist_state="session"))
            n_cand = per_axis ** dim
            cap = largest_m(n_cand) if n_cand <= DEFAULT_MAX_DATABASES else 0
            if cap < 1:
                st.error(f"{n_cand:,} candidates are too many for the exact mechanism; use fewer points per axis.")
                st.stop()
            ss.setdefault("crv.cmp_m", 4)
            ss["crv.cmp_m"] = int(min(max(ss["crv.cmp_m"], 1), cap))
            m = int(st.number_input("Synthetic database size M", min_value=1, max_value=cap, step=1,
                                    key="crv.cmp_m", persist_state="session",
                                    help=f"Largest M that the exact enumeration allows here: {cap}."))
            st.caption(f"|G| = {n_cand:,} candidates, M = {m}: **{count_multisets(n_cand, m):,}** databases, every "
                       "one scored exactly (one more point multiplies the count by about |G|/M).")
        else:
            ss.setdefault(f"crv.cmp_gaxis{dim}", 200 if dim == 1 else 40)
            per_axis = int(st.number_input("Grid points per axis", min_value=2, max_value=400, step=1,
                                           key=f"crv.cmp_gaxis{dim}", persist_state="session"))
            ss.setdefault("crv.cmp_gm", 100)
            m = int(st.number_input("Points M of Algorithms 1 and 2", min_value=1, max_value=1000, step=10,
                                    key="crv.cmp_gm", persist_state="session"))
        ss.setdefault("crv.cmp_alg2", True)
        with_alg2 = st.checkbox("Include Algorithm 2", key="crv.cmp_alg2", persist_state="session",
                                help="One reduced-set solver run per ε and repetition (interactive preset).")
        e_lo, e_hi = st.select_slider("ε range (log scale)", options=eps_grid, format_func=lambda v: f"{v:g}",
                                      value=(0.01, 10.0), key="crv.cmp_eps", persist_state="session")
        ss.setdefault("crv.cmp_neps", 5)
        n_eps = st.number_input("Number of ε values", min_value=1, max_value=12, step=1, key="crv.cmp_neps",
                                persist_state="session")
        ss.setdefault("crv.reps", 3)
        reps = st.number_input("Repetitions per point", min_value=1, max_value=20, step=1, key="crv.reps",
                               persist_state="session")
        crv_noise, seed = N.noise_controls("crv.noise", "crv.seed", label="Noise of the runs", what="curves",
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
        size_ok = size_guard(est, key="crv.cmp_size", what="this comparison")
        run = st.button("Compute the comparison", type="primary", key="crv.cmp_go", disabled=not size_ok)
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
            ss["crv.cmp_result"] = {"key": cfg_key, "kind": kind, "out": out, "private": src == "current"}
            N.advance("crv.seed", seed if crv_noise == N.REPLAY else None)
        bar.empty()
    stored = ss.get("crv.cmp_result")
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
                            key="crv.cmp_fig")
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
                               file_name=f"dpkme_{kind}_comparison.csv", mime="text/csv", key="crv.cmp_dl",
                               on_click="ignore", icon=":material/download:")

        if stored.get("private", json.loads(stored["key"]).get("src") == "current"):     # your private rows
            P.OwnerOnly(stored, "The comparison computed on the private rows").render(comparison_view)
        else:                           # generated data: public
            comparison_view(stored)
    st.stop()


if preset in ("exp", "gp"):
    comparison_section(preset)


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


# ---------------------------------------------------------------------- settings
left, right = st.columns([1, 2], gap="large")
with left:
    if preset == "custom":
        domain = ds.point_domain       # declared bounds on every column (or a schema): points drawn inside them
        kinds = {"public": "Algorithm 1 with the publishable subset",
                 "q": ("Algorithm 1 with random points from q" if domain is None else
                       "Algorithm 1 with uniform random points within the declared bounds")}
        if not ds.n_public:
            kinds.pop("public")
        ss.setdefault("crv.kind", next(iter(kinds)))
        if ss["crv.kind"] not in kinds:
            ss["crv.kind"] = next(iter(kinds))
        kind = st.radio("Synthetic points", list(kinds), format_func=kinds.get, key="crv.kind",
                        persist_state="session")
        mech_opts = ["Algorithm 1", "Algorithm 2"]
        mechs = st.multiselect("Mechanisms", mech_opts, default=["Algorithm 1"], key="crv.mechs",
                               persist_state="session",
                               help="Algorithm 2 runs a reduced-set solver per ε and repetition (seconds each).")
        if "Algorithm 2" in mechs:
            from dpkme.reduced_set import get_solver
            from dpkme.release.random_features import list_solvers

            a2j = st.select_slider("Algorithm 2: random features J", options=[200, 500, 1000, 2000, 5000],
                                   value=1000, key="crv.J", persist_state="session")
            names = [s["name"] for s in list_solvers()]
            if domain is not None:       # only solvers that keep their points inside the declared bounds
                names = [n for n in names if get_solver(n).honours_domain]
            if ss.get("crv.solver") not in names:
                ss["crv.solver"] = names[0]
            a2s = st.selectbox("Algorithm 2: solver", names, key="crv.solver", persist_state="session")
            st.caption(("Algorithm 2 starts from draws of q (centre and spread as on the Release page)."
                        if domain is None else "Algorithm 2 starts from uniform draws within the declared bounds "
                        "and keeps its points inside them.")
                       + " One solver run per ε and repetition, a few seconds each: start with few ε values and "
                       "repetitions.")
        e_lo, e_hi = st.select_slider("ε range (log scale)", options=eps_grid, format_func=lambda v: f"{v:g}",
                                      value=(0.01, 10.0), key="crv.eps_range", persist_state="session")
        ss.setdefault("crv.n_eps", 4)
        n_eps = st.number_input("Number of ε values", min_value=1, max_value=12, step=1, key="crv.n_eps",
                                persist_state="session")
        m_cap = ds.n_public if kind == "public" else 2000
        ss.setdefault("crv.m_max", 250)
        ss["crv.m_max"] = int(min(max(ss["crv.m_max"], 1), m_cap))
        m_max = st.number_input("Largest M", min_value=1, max_value=int(m_cap), step=50, key="crv.m_max",
                                persist_state="session")
        st.caption("Kernel, δ, calibration and sensitivity are those of the Kernel & privacy page.")
    else:
        ss.setdefault("crv.paper_dim", 2)
        dim = st.radio("Dimension D", [2, 5], key="crv.paper_dim", horizontal=True, persist_state="session")
        ss.setdefault("crv.paper_n", 20000)
        n_paper = st.select_slider("N (the paper: 100 000)", options=[5000, 10000, 20000, 50000], key="crv.paper_n",
                                   persist_state="session")
        ss.setdefault("crv.paper_m", 2000)
        m_max = st.select_slider("Largest M (the paper: 10 000)", options=[500, 1000, 2000, 5000], key="crv.paper_m",
                                 persist_state="session")
        with_alg2 = False
        if preset == "fig2":
            with_alg2 = st.checkbox("Include Algorithm 2 (dashed; J = 1000, M ≤ 1000, a few seconds)", value=True,
                                    key="crv.fig2_alg2", persist_state="session")
        st.caption("The paper's settings: mixture of 10 Gaussians (seed 0), γ = 10⁻⁴/D, ε ∈ {0.01, 0.1, 1}, "
                   "δ = 10⁻⁶, classic calibration with Δ = 2/N, full basis"
                   + (", q = N(0, 500² I)." if preset == "fig2" else ", the first M rows public."))
    ss.setdefault("crv.reps", 3)
    reps = st.number_input("Repetitions per point", min_value=1, max_value=20, step=1, key="crv.reps",
                           persist_state="session")
    crv_noise, seed = N.noise_controls("crv.noise", "crv.seed", label="Noise of the runs", what="curves",
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
    size_ok = size_guard(est, key="crv.size", what="these curves")
    run = st.button("Compute curves", type="primary", key="crv.go", disabled=not size_ok)

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


@st.cache_data(max_entries=4, show_spinner=False)
def _paper_data(n: int, dim: int) -> np.ndarray:
    return paper_mixture(n, dim, random_state=0, legacy=True)


if run:
    with right:
        bar = st.progress(0.0, text="starting")

    def progress(f, msg):
        bar.progress(min(max(float(f), 0.0), 1.0), text=f"{msg} ({f:.0%})")

    with guard("compute the curves") as res:
        run_seed = N.run_seed(crv_noise, seed, "privacy-utility curves")   # fresh unless in replay mode
        if preset == "custom":
            if kind == "public":
                Z, sample = ds.public[: int(m_max)], True
            else:
                rng = np.random.default_rng(run_seed)
                if ds.point_domain is not None:     # uniform within the declared bounds (issue 16, finding 3)
                    Z, sample = ds.point_domain.sample(int(m_max), rng), False
                else:
                    Z, sample = draw_points_from_q(int(m_max), ds.dim, scale=float(ss.get(S.Q_SCALE, ds.q_scale)),
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
        N.advance("crv.seed", run_seed if crv_noise == N.REPLAY else None)
    bar.empty()

stored = ss.get(S.CURVES)
if stored is None:
    with right:
        st.info("Press **Compute curves**. The default settings take about a second; the paper presets up to "
                "half a minute. Changing any input while it runs cancels it.")
    st.stop()


def curves_view(stored: dict) -> None:
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
                                      title=f"Distance against M — {stored['label']}"), key="crv.fig_m")
        st.caption("Bands: min–max over repetitions. More points let the span cover the data better, but every "
                   "point adds a noisy coordinate: with small ε the error grows with M (as in the paper's Figure 1).")


    if len(eps_list) > 1:
        m_pick_opts = Ms
        default_m = min(Ms, key=lambda x: abs(x - 100))
        if ss.get("crv.m_pick") not in m_pick_opts:
            ss["crv.m_pick"] = default_m
        m_pick = st.select_slider("M for the ε curve", options=m_pick_opts, key="crv.m_pick")
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
                                      title=f"Distance against ε at M = {m_pick}"), key="crv.fig_eps")

    st.download_button("Download the curve data (CSV, owner only)", data=owner_only_csv(t), file_name="dpkme_curves.csv",
                       mime="text/csv", key="crv.dl", on_click="ignore", icon=":material/download:")
    with st.expander("Table"):
        st.dataframe(t, hide_index=True, height=260)


if stored.get("private", stored.get("label") == PRESETS["custom"]):     # computed from the private rows
    P.OwnerOnly(stored, "The privacy–utility curves computed on the private rows").render(curves_view)
else:                                   # the paper's presets: generated data, public
    curves_view(stored)
