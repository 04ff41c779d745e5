"""The cluster-wise release (DP kernel k-means, then Algorithm 2 per cluster) for the Release page."""

from __future__ import annotations

import numpy as np
import streamlit as st

from dpkme.clustering import clusterwise_release
from dpkme.clustering.accounting import plan_kmeans
from dpkme.cost import estimate_cost
from dpkme.privacy.accounting import PrivacyCharge

from .. import state as S
from .spec import MechanismSpec, RunContext, n_points_control


def _cl_requires(ds: S.Dataset) -> str | None:
    if ds.schema is not None:
        return ("is not offered for mixed tables: its per-cluster solver and centres do not stay in the declared "
                "domain (categories would come out as fractions). Use Algorithm 2, which does.")
    return None


#: Session and widget keys of the controls.
CL_K = "rel.cl_k"
CL_ITER = "rel.cl_iter"
CL_SHARE = "rel.cl_share"
CL_J = "rel.cl_J"


def _cl_controls(ds: S.Dataset) -> dict:
    ss = st.session_state
    ss.setdefault(CL_K, 5)
    k = int(st.number_input("Clusters k", min_value=1, max_value=30, step=1, key=CL_K,
                            persist_state="session"))
    m = n_points_control(2000, help="Total synthetic points, split over clusters by their noisy sizes.")
    ss.setdefault(CL_ITER, 5)
    n_iter = int(st.number_input("Private Lloyd iterations", min_value=1, max_value=30, step=1,
                                 key=CL_ITER, persist_state="session"))
    ss.setdefault(CL_SHARE, 0.5)
    share = float(st.slider("Share of the budget for the release step", min_value=0.1, max_value=0.9,
                            step=0.05, key=CL_SHARE, persist_state="session"))
    ss.setdefault(CL_J, 1000)
    J = int(st.select_slider("Random features J", options=[200, 500, 1000, 2000], key=CL_J,
                             persist_state="session"))
    return {"k": k, "n_points": m, "n_iter": n_iter, "share": share, "J": J}


def _plan(ctx: RunContext, p: dict):
    return plan_kmeans(epsilon=ctx.epsilon, delta=ctx.delta, n_iter=p["n_iter"], neighbouring="replace-one",
                       n_features=p["J"], release_share=p["share"])


def _cl_run(ctx: RunContext, p: dict):
    ds = ctx.ds
    if p["n_points"] < p["k"]:
        raise ValueError(f"M = {p['n_points']} must be at least k = {p['k']} (one point per cluster).")
    domain = ds.point_domain if ds.schema is None else None    # declared bounds on every column, or None
    if domain is not None:      # issue 16, finding 3: centres, candidates and released points inside the bounds
        box = {"bounds": (np.asarray(domain.lower, dtype=float), np.asarray(domain.upper, dtype=float)),
               "domain": domain}
        init = ({"init": "public", "public_data": ds.public} if ds.n_public >= p["k"] else {"init": "box"}) | box
    else:
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
    with st.expander("Budget split of this run (per step, share of (Δ/σ)²)"):
        st.dataframe(pd.DataFrame([{"step": r["step"], "share of the budget": r["share"],
                                    "noise multiplier σ/Δ": r["noise_multiplier"], "σ sizes": r["sigma_count"],
                                    "σ sums": r["sigma_sum"], "ε alone": r["epsilon_alone"]}
                                   for r in m["cl_plan"]]), hide_index=True)


def _cl_charge(ctx: RunContext, p: dict) -> PrivacyCharge:
    c = _plan(ctx, p).total_charge(f"cluster-wise release (k = {p['k']}, {p['n_iter']} Lloyd steps)")
    return PrivacyCharge(label=c.label, mechanism=c.mechanism, epsilon=c.epsilon, delta=c.delta,
                         noise_multiplier=c.noise_multiplier, count=c.count,
                         details={**c.details, "noise_source": ctx.noise_source})


SPEC = MechanismSpec(
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
Initial centres come from the publishable subset or from q (uniform within the declared bounds, when every
column has them; the released points then stay inside them) — never from the private rows. The Clustering page
shows the centres, the budget split and accuracy curves.""",
    spends_budget=True, requires=_cl_requires, controls=_cl_controls, run=_cl_run, charge=_cl_charge,
    show=_cl_show,
    cost=lambda ds, p, k: estimate_cost("clusterwise", n=ds.n, k=p["k"], dim=ds.dim, n_features=p["J"],
                                     n_iter=p["n_iter"], n_points=p["n_points"], preimages="final",
                                     local_view=False, preset="interactive"),
    tags=("clustering",),
)

SPECS = (SPEC,)
