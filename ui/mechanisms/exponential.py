"""Later mechanisms for the Release page: the exact exponential mechanism and the cluster-wise release.

Each block registers itself only when its library module exists (imported by :mod:`.mechanisms`).
"""

from __future__ import annotations

import importlib.util

import numpy as np
import streamlit as st

from dpkme.accounting import PrivacyCharge, pure_dp_charge
from dpkme.guards import estimate_cost

from . import state as S
from .mechanisms import MechanismSpec, RunContext, _n_points_control, register


def _has(module: str) -> bool:
    try:
        return importlib.util.find_spec(module) is not None
    except ModuleNotFoundError:
        return False


# --------------------------------------------------------------------------- exponential mechanism
if _has("dpkme.exponential"):
    import dpkme.exponential as _exp
    from dpkme.exponential import (DEFAULT_MAX_DATABASES, MAX_GRID_CANDIDATES, count_multisets, count_table,
                                   database_scores, exponential_charge, grid_candidates, largest_m)

    _EXP_NOTES = "\n\n".join(f"*{v}*" for v in getattr(_exp, "NOTES", {}).values())

    _CANDS = {
        "grid-public": "grid over the range of the publishable subset (public)",
        "grid-q": "grid over q's centre ± 2 spreads (declared)",
        "public": "the first rows of the publishable subset",
    }

    def _exp_candidates(ds: S.Dataset, how: str, per_axis: int, n_rows: int) -> np.ndarray:
        if how == "public":
            if not ds.n_public:
                raise ValueError("needs a publishable subset (Data page).")
            return ds.public[:n_rows]
        if how == "grid-public":
            if ds.n_public < 2:
                raise ValueError("needs a publishable subset of at least 2 rows (Data page).")
            lo, hi = ds.public.min(axis=0), ds.public.max(axis=0)
            hi = np.where(hi > lo, hi, lo + 1.0)
        else:
            c = ds.q_center if ds.q_center is not None else np.zeros(ds.dim)
            s = float(st.session_state.get(S.Q_SCALE, ds.q_scale))
            lo, hi = c - 2 * s, c + 2 * s
        if per_axis ** ds.dim > MAX_GRID_CANDIDATES:
            raise ValueError(f"{per_axis}^{ds.dim} grid points is too many; use fewer points per axis.")
        return grid_candidates(lo, hi, per_axis)

    def _exp_controls(ds: S.Dataset) -> dict:
        ss = st.session_state
        opts = {k: v for k, v in _CANDS.items() if ds.n_public >= 2 or k == "grid-q"}
        ss.setdefault("rel.exp_cands", next(iter(opts)))
        if ss["rel.exp_cands"] not in opts:
            ss["rel.exp_cands"] = next(iter(opts))
        how = st.radio("Candidate points (public)", list(opts), format_func=opts.get, key="rel.exp_cands",
                       persist_state="session")
        per_axis, n_rows = 1, 1
        if how.startswith("grid"):
            ss.setdefault("rel.exp_axis", 6 if ds.dim <= 2 else 3)
            per_axis = int(st.number_input("Grid points per axis", min_value=1, max_value=50, step=1,
                                           key="rel.exp_axis", persist_state="session"))
            n_cand = per_axis ** ds.dim
        else:
            ss.setdefault("rel.exp_rows", min(30, ds.n_public))
            n_rows = int(st.number_input("Number of candidate rows", min_value=1, max_value=max(1, ds.n_public),
                                         step=1, key="rel.exp_rows", persist_state="session"))
            n_cand = n_rows
        m_cap = largest_m(n_cand) if n_cand <= DEFAULT_MAX_DATABASES else 0
        if m_cap < 1:
            st.warning(f"{n_cand:,} candidates: even one point means more than {DEFAULT_MAX_DATABASES:,} databases.")
            return {"how": how, "per_axis": per_axis, "n_rows": n_rows, "m": 1}
        ss.setdefault("rel.exp_m", min(4, m_cap))
        ss["rel.exp_m"] = int(min(max(ss["rel.exp_m"], 1), m_cap))
        m = int(st.number_input("Synthetic database size M", min_value=1, max_value=m_cap, step=1, key="rel.exp_m",
                                persist_state="session",
                                help=f"Largest M whose databases fit the exact enumeration: {m_cap}."))
        st.caption(f"{count_multisets(n_cand, m):,} candidate databases are scored exactly "
                   f"({n_cand:,} candidates, multisets of size {m}).")
        return {"how": how, "per_axis": per_axis, "n_rows": n_rows, "m": m}

    def exp_candidate_count(ds: S.Dataset, p: dict) -> int:
        return p["n_rows"] if p["how"] == "public" else p["per_axis"] ** ds.dim

    def _exp_run(ctx: RunContext, p: dict):
        G = _exp_candidates(ctx.ds, p["how"], p["per_axis"], p["n_rows"])
        scores = database_scores(ctx.ds.X, G, kernel=ctx.kernel, m=p["m"], sensitivity=ctx.sensitivity_mode,
                                 progress=ctx.progress)
        rel, diag = scores.release(ctx.epsilon, random_state=ctx.random_state, return_diagnostics=True)
        # Owner's view (private): where the mechanism puts its mass over the databases' distances.
        d = scores.distances
        edges = np.linspace(float(d.min()), float(d.max()) + 1e-12, 41)
        mass, _ = np.histogram(d, bins=edges, weights=scores.probabilities(ctx.epsilon))
        count, _ = np.histogram(d, bins=edges)
        owner = {"exp_distance": diag.distance, "exp_expected": diag.expected_distance, "exp_best": diag.best_distance,
                 "exp_probability": diag.probability, "exp_uniform": float(d.mean()),
                 "exp_hist": {"edges": edges, "mass": mass, "share": count / count.sum()}}
        return rel, owner

    def _exp_charge(ctx: RunContext, p: dict) -> PrivacyCharge:
        # Before the run (budget check); the ledger records exponential_charge(release) afterwards.
        return pure_dp_charge(f"exponential mechanism (M = {p['m']})", epsilon=ctx.epsilon, mechanism="exponential",
                              details={"neighbouring": "replace-one", "noise_source": ctx.noise_source})

    def count_figure(n_now: int | None = None, m_now: int | None = None):
        """C(|G|+M-1, M) on a log axis for several |G| (the combinatorial growth), the enumeration limit."""
        import plotly.graph_objects as go

        from .figures import PALETTE

        ms = list(range(1, 11))
        sizes = sorted({10, 36, 100, 400, 2500} | ({int(n_now)} if n_now else set()))
        table = count_table(sizes, ms)
        fig = go.Figure()
        for i, (n, row) in enumerate(zip(sizes, table)):
            fig.add_trace(go.Scatter(x=ms, y=row, mode="lines+markers", name=f"|G| = {n:,}",
                                     line=dict(color=PALETTE[i % len(PALETTE)], width=3 if n == n_now else 1.5)))
        fig.add_hline(y=DEFAULT_MAX_DATABASES, line_dash="dot", line_color="red",
                      annotation_text=f"exact limit: {DEFAULT_MAX_DATABASES / 1e6:g} million", annotation_position="top left")
        if n_now and m_now:
            fig.add_trace(go.Scatter(x=[m_now], y=[float(count_multisets(n_now, m_now))], mode="markers",
                                     name="your setting", marker=dict(size=14, symbol="star", color="black")))
        fig.update_layout(title="Candidate databases C(|G|+M−1, M)", xaxis_title="synthetic database size M",
                          yaxis_title="databases (log scale)", height=420, margin=dict(l=10, r=10, t=40, b=10),
                          legend=dict(font=dict(size=10), orientation="h", yanchor="top", y=-0.22, x=0))
        fig.update_yaxes(type="log", exponentformat="power")
        return fig

    def _exp_teach(ds: S.Dataset, p: dict) -> None:
        n = exp_candidate_count(ds, p)
        st.plotly_chart(count_figure(n, p["m"]), key="rel.exp_counts")
        st.caption(_exp.NOTES["combinatorial_growth"])
        with st.expander("Why no faster, approximate sampler?"):
            st.markdown(_exp.NOTES["approximate_sampling"] + "\n\nSo this app offers **exact sampling only**: "
                        "every database is scored and one is drawn with exactly these probabilities (Gumbel-max). "
                        "Beyond the limit the mechanism refuses instead of approximating.")

    def _exp_show(rec, ds) -> None:
        import plotly.graph_objects as go

        m = rec.metrics
        if "exp_hist" not in m:
            return
        st.markdown("**The exponential mechanism's choice — owner's view (computed from the private rows; "
                    "never publish these numbers)**")
        a, b, c, d = st.columns(4)
        a.metric("Distance of the drawn database", S.fmt(m["exp_distance"]))
        b.metric("Expected distance at this ε", S.fmt(m["exp_expected"]))
        c.metric("Best of all databases", S.fmt(m["exp_best"]), help="What ε = ∞ (no privacy) would release.")
        d.metric("Average database (ε → 0)", S.fmt(m["exp_uniform"]), help="A uniformly random database.")
        h = m["exp_hist"]
        mid = 0.5 * (h["edges"][1:] + h["edges"][:-1])
        fig = go.Figure()
        fig.add_trace(go.Bar(x=mid, y=h["share"], name="share of all databases (ε → 0)",
                             marker_color="rgba(120,120,120,0.5)"))
        fig.add_trace(go.Bar(x=mid, y=h["mass"], name=f"probability under the mechanism (ε = {rec.release.epsilon:g})",
                             marker_color="rgba(214,39,40,0.7)"))
        fig.add_vline(x=m["exp_distance"], line_color="black", annotation_text="drawn")
        fig.update_layout(barmode="overlay", height=300, xaxis_title="RKHS distance ‖μ_D − μ_R‖",
                          yaxis_title="probability", margin=dict(l=10, r=10, t=30, b=10),
                          title="Where the mechanism puts its probability (owner's view)",
                          legend=dict(orientation="h", y=-0.3))
        st.plotly_chart(fig, key="rel.exp_mass")

    register(MechanismSpec(
        key="exponential",
        label="Exponential mechanism · exact, tiny M",
        summary="Draw a whole synthetic database R of M public candidate points with probability "
                "∝ exp(−ε‖μ_D − μ_R‖/(2Δ)). Pure ε-DP (δ = 0), exact, and only feasible for tiny M.",
        explain=r"""The paper's Section 3.4: the exponential mechanism (McSherry & Talwar 2007) with utility
$u(D,R) = -\|\mu_D - \mu_R\|_{\mathcal H}$ releases a database $R$ of $M$ candidate points with
probability $\propto \exp(-\varepsilon\,\|\mu_D-\mu_R\|/(2\Delta_u))$; $\Delta_u$ is the KME's sensitivity
(reverse triangle inequality). It is **pure** $\varepsilon$-DP. Every one of the $\binom{|G|+M-1}{M}$
databases is scored and one is drawn exactly — approximate samplers could break the guarantee, which is
why the paper calls the mechanism computationally infeasible beyond trivial sizes.""" + (
            "\n\n" + _EXP_NOTES if _EXP_NOTES else ""),
        spends_budget=True, requires=lambda ds: None, controls=_exp_controls, run=_exp_run, charge=_exp_charge,
        final_charge=lambda r: exponential_charge(r, f"exponential mechanism (M = {r.params.get('m')}, "
                                                     f"|G| = {r.params.get('n_candidates')})"),
        show=_exp_show, teach=_exp_teach, tags=("exponential",),
        cost=lambda ds, p, k: estimate_cost("exponential", n=ds.n, n_candidates=exp_candidate_count(ds, p), m=p["m"],
                                         dim=ds.dim),
    ))


# --------------------------------------------------------------------------- cluster-wise release
if _has("dpkme.clustering"):
    from dpkme.clustering import clusterwise_release
    from dpkme.clustering.accounting import plan_kmeans

    def _cl_controls(ds: S.Dataset) -> dict:
        ss = st.session_state
        ss.setdefault("rel.cl_k", 5)
        k = int(st.number_input("Clusters k", min_value=1, max_value=30, step=1, key="rel.cl_k",
                                persist_state="session"))
        m = _n_points_control(2000, help="Total synthetic points, split over clusters by their noisy sizes.")
        ss.setdefault("rel.cl_iter", 5)
        n_iter = int(st.number_input("Private Lloyd iterations", min_value=1, max_value=30, step=1,
                                     key="rel.cl_iter", persist_state="session"))
        ss.setdefault("rel.cl_share", 0.5)
        share = float(st.slider("Share of the budget for the release step", min_value=0.1, max_value=0.9,
                                step=0.05, key="rel.cl_share", persist_state="session"))
        ss.setdefault("rel.cl_J", 1000)
        J = int(st.select_slider("Random features J", options=[200, 500, 1000, 2000], key="rel.cl_J",
                                 persist_state="session"))
        return {"k": k, "n_points": m, "n_iter": n_iter, "share": share, "J": J}

    def _plan(ctx: RunContext, p: dict):
        return plan_kmeans(epsilon=ctx.epsilon, delta=ctx.delta, n_iter=p["n_iter"], neighbouring="replace-one",
                           n_features=p["J"], release_share=p["share"])

    def _cl_run(ctx: RunContext, p: dict):
        ds = ctx.ds
        if p["n_points"] < p["k"]:
            raise ValueError(f"M = {p['n_points']} must be at least k = {p['k']} (one point per cluster).")
        init = {"init": "public", "public_data": ds.public} if ds.n_public >= p["k"] else {
            "init": "gaussian", "q_loc": ds.q_center if ds.q_center is not None else 0.0,
            "q_scale": float(st.session_state.get(S.Q_SCALE, ds.q_scale))}
        from dpkme.reduced_set import DEFAULT_SOLVER, preset_options

        out = clusterwise_release(ds.X, k=p["k"], n_points=p["n_points"], plan=_plan(ctx, p), kernel=ctx.kernel,
                                  n_features=p["J"], random_state=ctx.random_state, progress=ctx.progress,
                                  solver_options=preset_options(DEFAULT_SOLVER, "interactive"), preimages="final",
                                  **init)
        # Released quantities (not private evaluations): the noisy sizes and the mixture weights per cluster.
        comps = [{"cluster": c.index + 1, "noisy size (released)": float(c.noisy_count),
                  "mixture weight": float(c.mixture_weight), "points": int(len(c.weights))} for c in out.components]
        return out.release, {"cl_components": comps, "cl_k": p["k"], "cl_dropped": p["k"] - len(comps),
                             "cl_plan": out.plan.budget_table(norm_bound=1.0)}

    def _cl_show(rec, ds) -> None:
        import pandas as pd

        m = rec.metrics
        if "cl_components" not in m:
            return
        st.markdown("**Clusters of this release** (released: noisy sizes and mixture weights; the rows' "
                    "assignments are never released)")
        st.dataframe(pd.DataFrame(m["cl_components"]), hide_index=True)
        if m.get("cl_dropped"):
            st.caption(f"{m['cl_dropped']} of {m['cl_k']} clusters had a noisy size below the noise floor "
                       "max(1, 3σₙ) and were dropped (weight 0).")
        with st.expander("Budget split of this run (per step, share of μ²)"):
            st.dataframe(pd.DataFrame([{"step": r["step"], "share of the budget": r["share"],
                                        "noise multiplier 1/μ": r["noise_multiplier"], "σ sizes": r["sigma_count"],
                                        "σ sums": r["sigma_sum"], "ε alone": r["epsilon_alone"]}
                                       for r in m["cl_plan"]]), hide_index=True)

    def _cl_charge(ctx: RunContext, p: dict) -> PrivacyCharge:
        c = _plan(ctx, p).total_charge(f"cluster-wise release (k = {p['k']}, {p['n_iter']} Lloyd steps)")
        return PrivacyCharge(label=c.label, mechanism=c.mechanism, epsilon=c.epsilon, delta=c.delta,
                             noise_multiplier=c.noise_multiplier, count=c.count,
                             details={**c.details, "noise_source": ctx.noise_source})

    register(MechanismSpec(
        key="clusterwise",
        label="Cluster-wise release · DP k-means",
        summary="Cluster the rows privately (noisy Lloyd steps in random-feature space, Acs et al.), then "
                "release each cluster's embedding with Algorithm 2 and mix them by noisy cluster sizes.",
        explain=r"""Acs, Melis, Castelluccia & De Cristofaro: **DP kernel k-means** — every Lloyd step adds
Gaussian noise to the cluster sizes and to the sums of unit-norm random features (the centres are noisy sums
divided by noisy sizes). Then the **release step**: every row is assigned to its nearest released centre (a public
rule), and each cluster's **noisy sum** $\hat S_i = S_i + \mathcal N(0,\sigma_s^2 I_J)$ and **noisy size**
$\hat n_i = n_i + \mathcal N(0,\sigma_n^2)$ are released; normalising afterwards, $\tilde\mu_i = \hat S_i/\hat n_i$,
is post-processing (a per-cluster Algorithm 2 with noise $2/n_i$ would leak the private size $n_i$ through the noise
scale). A reduced-set solver turns each $\tilde\mu_i$ into weighted points, mixed with weights
$\hat n_i/\sum_j \hat n_j$.

**Parallel composition, precisely.** The clusters are disjoint, so the $k$ per-cluster releases form *one* Gaussian
mechanism on the stacked vector $(\hat n_i, \hat S_i)_i$. Under add/remove one row touches one cluster: parallel
composition is exact (the $k$ releases cost as much as one). Under **replace-one** (this app's relation) the
replaced row can leave cluster $a$ and join cluster $b$, so **two** clusters change; the plan's joint noise
multiplier $\mu$ accounts for that (it is not true that "each cluster's release is $(\varepsilon,\delta)$-DP, hence
the whole is"). The Lloyd steps and the release step compose adaptively; the ledger shows the whole run as one
Gaussian charge with the composed multiplier $1/\sqrt{\sum_t \mu_t^2}$, calibrated to your $(\varepsilon,\delta)$.
Initial centres come from the publishable subset or from q — never from the private rows. The Clustering page
shows the centres, the budget split and accuracy curves.""",
        spends_budget=True, requires=lambda ds: None, controls=_cl_controls, run=_cl_run, charge=_cl_charge,
        show=_cl_show,
        cost=lambda ds, p, k: estimate_cost("clusterwise", n=ds.n, k=p["k"], dim=ds.dim, n_features=p["J"],
                                         n_iter=p["n_iter"], n_points=p["n_points"], preimages="final",
                                         local_view=False, preset="interactive"),
        tags=("clustering",),
    ))


# --------------------------------------------------------------------------- Gaussian-process (function) release
if _has("dpkme.gp_release"):
    import dpkme.gp_release as _gp
    from dpkme.accounting import gaussian_charge
    from dpkme.gp_release import MAX_GRID_POINTS, calibrate_gp, gp_release, gp_sensitivity, grid_axes

    _GP_NOTES = "\n\n".join(f"*{v}*" for v in getattr(_gp, "NOTES", {}).values())
    _GP_REGIONS = {
        "public": "the range of the publishable subset, widened by 10 % (public)",
        "q": "q's centre ± 2 spreads (declared)",
    }

    def gp_grid(ds: S.Dataset, region: str, per_axis: int):
        """Tensor-grid axes over a public box (the function is released at these points)."""
        if region == "public":
            if ds.n_public < 2:
                raise ValueError("needs a publishable subset of at least 2 rows (Data page), or use q's box.")
            lo, hi = ds.public.min(axis=0), ds.public.max(axis=0)
            pad = 0.1 * np.maximum(hi - lo, 1e-9)
            lo, hi = lo - pad, hi + pad
        else:
            c = ds.q_center if ds.q_center is not None else np.zeros(ds.dim)
            s = float(st.session_state.get(S.Q_SCALE, ds.q_scale))
            lo, hi = c - 2 * s, c + 2 * s
        if per_axis ** ds.dim > MAX_GRID_POINTS:
            raise ValueError(f"{per_axis}^{ds.dim} grid points is too many; use fewer points per axis.")
        return grid_axes(lo, hi, per_axis)

    def _gp_controls(ds: S.Dataset) -> dict:
        ss = st.session_state
        regions = {k: v for k, v in _GP_REGIONS.items() if ds.n_public >= 2 or k == "q"}
        ss.setdefault("rel.gp_region", next(iter(regions)))
        if ss["rel.gp_region"] not in regions:
            ss["rel.gp_region"] = next(iter(regions))
        region = st.radio("Where the function is released (a public grid)", list(regions), format_func=regions.get,
                          key="rel.gp_region", persist_state="session")
        ss.setdefault("rel.gp_axis", {1: 200, 2: 40, 3: 12}.get(ds.dim, 4))
        per_axis = int(st.number_input("Grid points per axis", min_value=2, max_value=400, step=1,
                                       key="rel.gp_axis", persist_state="session"))
        st.caption(f"{per_axis ** ds.dim:,} grid points in {ds.dim} dimension(s).")
        ss.setdefault("rel.gp_norm", "kme")
        norm = st.radio("Function", ["kme", "kde"], key="rel.gp_norm", persist_state="session",
                        format_func={"kme": "the kernel mean embedding (as in Balog et al.)",
                                     "kde": "the kernel density estimate (Hall et al.'s example)"}.get)
        ss.setdefault("rel.gp_cal", "analytic")
        cal = st.radio("Noise calibration", ["analytic", "hall"], key="rel.gp_cal", persist_state="session",
                       format_func={"analytic": "analytic Gaussian (Balle & Wang) — least noise",
                                    "hall": "Hall et al.'s s = Δ√(2 log(2/δ))/ε"}.get)
        return {"region": region, "per_axis": per_axis, "normalisation": norm, "calibration": cal}

    def _gp_run(ctx: RunContext, p: dict):
        grid = gp_grid(ctx.ds, p["region"], p["per_axis"])
        return gp_release(ctx.ds.X, kernel=ctx.kernel, epsilon=ctx.epsilon, delta=ctx.delta, grid=grid,
                          normalisation=p["normalisation"], calibration=p["calibration"],
                          sensitivity=ctx.sensitivity_mode, random_state=ctx.random_state, progress=ctx.progress)

    def _gp_charge(ctx: RunContext, p: dict) -> PrivacyCharge:
        sens = gp_sensitivity(n=ctx.ds.n, kernel=ctx.kernel, dim=ctx.ds.dim, normalisation=p["normalisation"],
                              mode=ctx.sensitivity_mode)
        cal = calibrate_gp(epsilon=ctx.epsilon, delta=ctx.delta, sensitivity=sens, calibration=p["calibration"])
        return gaussian_charge(f"GP release ({p['normalisation']}, {p['per_axis']}^{ctx.ds.dim} grid)", cal,
                               details={"neighbouring": "replace-one", "noise_source": ctx.noise_source})

    register(MechanismSpec(
        key="gp",
        label="GP release · a noisy function on a grid",
        summary="Release the embedding itself as a function, plus a scaled Gaussian-process sample path "
                "(Hall, Rinaldo & Wasserman). No synthetic points: the output is a noisy function on a public grid.",
        explain=r"""Hall, Rinaldo & Wasserman: $\tilde f = \hat\mu_X + s\,G$ with $G\sim\mathcal{GP}(0, k)$ and
$s$ calibrated to the RKHS sensitivity of $\hat\mu_X$ — the "natural" mechanism the paper's Section 3.2 discusses
and sets aside: **the sample path is not in the RKHS**, so its RKHS distance to $\hat\mu_X$ is infinite and it
cannot be represented by weighted points. It can still be compared pointwise or in $L^2$ on the grid.""" + (
            "\n\n" + _GP_NOTES if _GP_NOTES else ""),
        spends_budget=True, requires=lambda ds: None, controls=_gp_controls, run=_gp_run, charge=_gp_charge,
        cost=lambda ds, p, k: estimate_cost("gp", n=ds.n, grid_shape=(p["per_axis"],) * ds.dim, dim=ds.dim,
                                            product_kernel=k.name in ("gaussian", "laplacian")),
        final_charge=lambda r: r.privacy_charge(
            f"GP release ({r.normalisation}, {'×'.join(str(len(a)) for a in r.axes) if r.axes else r.points.shape[0]}"
            " grid)"),
        output="function", tags=("gp",),
    ))
