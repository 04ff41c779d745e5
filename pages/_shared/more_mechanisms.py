"""Later mechanisms for the Release page: the exact exponential mechanism and the cluster-wise release.

Each block registers itself only when its library module exists (imported by :mod:`.mechanisms`).
"""

from __future__ import annotations

import importlib.util

import numpy as np
import streamlit as st

from dpkme.accounting import PrivacyCharge, pure_dp_charge

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
    from dpkme.exponential import (DEFAULT_MAX_DATABASES, MAX_GRID_CANDIDATES, count_multisets,
                                   exponential_mechanism, grid_candidates, largest_m)

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

    def _exp_run(ctx: RunContext, p: dict):
        G = _exp_candidates(ctx.ds, p["how"], p["per_axis"], p["n_rows"])
        return exponential_mechanism(ctx.ds.X, G, kernel=ctx.kernel, epsilon=ctx.epsilon, m=p["m"],
                                     sensitivity=ctx.sensitivity_mode, random_state=ctx.random_state,
                                     progress=ctx.progress)

    def _exp_charge(ctx: RunContext, p: dict) -> PrivacyCharge:
        return pure_dp_charge(f"exponential mechanism (M = {p['m']})", epsilon=ctx.epsilon, mechanism="exponential",
                              details={"neighbouring": "replace-one", "noise_source": ctx.noise_source})

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
        tags=("exponential",),
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
        out = clusterwise_release(ds.X, k=p["k"], n_points=p["n_points"], plan=_plan(ctx, p), kernel=ctx.kernel,
                                  n_features=p["J"], random_state=ctx.random_state, progress=ctx.progress,
                                  solver_options={"pool_size": 2000, "max_iter": 20}, **init)
        return out.release

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
Gaussian noise to the cluster sizes and to the sums of unit-norm random features; then one private release per
cluster (sizes and feature means, the clusters are disjoint: parallel composition), each turned into weighted
points by a reduced-set solver. The whole run is calibrated to your $(\varepsilon,\delta)$: the ledger shows
it as one Gaussian charge with the composed noise multiplier. Initial centres come from the publishable
subset (k-means++) or from q — never from the private rows.""",
        spends_budget=True, requires=lambda ds: None, controls=_cl_controls, run=_cl_run, charge=_cl_charge,
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
        output="function", tags=("gp",),
    ))
