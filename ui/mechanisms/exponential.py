"""The exact exponential mechanism (pure ε-DP, tiny M) for the Release page, and its combinatorial-growth figure."""

from __future__ import annotations

import numpy as np
import streamlit as st

import dpkme.release.exponential as _exp
from dpkme.cost import estimate_cost
from dpkme.privacy.accounting import PrivacyCharge
from dpkme.release import exponential_mechanism_charge
from dpkme.release.exponential import (
    DEFAULT_MAX_DATABASES,
    MAX_GRID_CANDIDATES,
    count_multisets,
    count_table,
    database_scores,
    exponential_charge,
    grid_candidates,
    largest_m,
)

from .. import state as S
from ..charts import plotly_chart
from .spec import MechanismSpec, RunContext, with_noise_source

_EXP_NOTES = "\n\n".join(f"*{v}*" for v in getattr(_exp, "NOTES", {}).values())

_CANDS = {
    "grid-box": "grid over the declared bounds of every column (declared)",
    "grid-public": "grid over the range of the publishable subset (public)",
    "grid-q": "grid over q's centre ± 2 spreads (declared)",
    "public": "the first rows of the publishable subset",
    "domain": "rows drawn uniformly from the schema's declared domain (a fixed public draw)",
}
#: The ``"domain"`` option's words for numeric data with declared bounds on every column.
_BOX_DRAW = "rows drawn uniformly within the declared bounds of every column (a fixed public draw)"
#: Seed of the public draw of candidate rows from a declared domain (it does not look at the data).
DOMAIN_CANDIDATE_SEED = 0
#: Session and widget keys of the controls and of the two charts.
EXP_CANDS = "rel.exp_cands"
EXP_AXIS = "rel.exp_axis"
EXP_ROWS = "rel.exp_rows"
EXP_M = "rel.exp_m"
EXP_COUNTS = "rel.exp_counts"
EXP_MASS = "rel.exp_mass"


def _exp_candidates(ds: S.Dataset, how: str, per_axis: int, n_rows: int) -> np.ndarray:
    if how in ("domain", "grid-box") and ds.point_domain is None:
        raise ValueError("candidates from a declared domain need a mixed table with a schema, or declared bounds on "
                         "every column (Data page).")
    if how == "domain":
        return ds.point_domain.sample(n_rows, np.random.default_rng(DOMAIN_CANDIDATE_SEED))
    if how == "public":
        if not ds.n_public:
            raise ValueError("needs a publishable subset (Data page).")
        return ds.public[:n_rows]
    if how == "grid-public":
        if ds.n_public < 2:
            raise ValueError("needs a publishable subset of at least 2 rows (Data page).")
        lo, hi = ds.public.min(axis=0), ds.public.max(axis=0)
        if ds.point_domain is not None:                  # never beyond the declared bounds
            dl, du = np.asarray(ds.point_domain.lower, dtype=float), np.asarray(ds.point_domain.upper, dtype=float)
            lo, hi = np.maximum(lo, dl), np.minimum(hi, du)
            flat = hi <= lo                              # a constant column: its whole declared range
            lo, hi = np.where(flat, dl, lo), np.where(flat, du, hi)
        else:
            hi = np.where(hi > lo, hi, lo + 1.0)
    elif how == "grid-box":         # the declared bounds (issue 16, finding 3): every candidate is a valid point
        lo, hi = np.asarray(ds.point_domain.lower, dtype=float), np.asarray(ds.point_domain.upper, dtype=float)
    else:
        c = ds.q_center if ds.q_center is not None else np.zeros(ds.dim)
        s = float(st.session_state.get(S.Q_SCALE, ds.q_scale))
        lo, hi = c - 2 * s, c + 2 * s
    if per_axis ** ds.dim > MAX_GRID_CANDIDATES:
        raise ValueError(f"{per_axis}^{ds.dim} grid points is too many; use fewer points per axis.")
    return grid_candidates(lo, hi, per_axis)


def _exp_controls(ds: S.Dataset) -> dict:
    ss = st.session_state
    if ds.schema is not None:   # a mixed table: a grid over embedded coordinates is no row; draw valid rows
        opts = {k: v for k, v in _CANDS.items() if k == "domain" or (k == "public" and ds.n_public >= 2)}
    elif ds.point_domain is not None:   # declared bounds on every column: candidates inside them, not from q
        opts = {k: v for k, v in _CANDS.items() if k == "grid-box" or (k.endswith("public") and ds.n_public >= 2)}
        opts["domain"] = _BOX_DRAW
    else:
        opts = {k: v for k, v in _CANDS.items() if k not in ("domain", "grid-box")
                and (ds.n_public >= 2 or k == "grid-q")}
    ss.setdefault(EXP_CANDS, next(iter(opts)))
    if ss[EXP_CANDS] not in opts:
        ss[EXP_CANDS] = next(iter(opts))
    how = st.radio("Candidate points (public)", list(opts), format_func=opts.get, key=EXP_CANDS,
                   persist_state="session")
    per_axis, n_rows = 1, 1
    if how.startswith("grid"):
        ss.setdefault(EXP_AXIS, 6 if ds.dim <= 2 else 3)
        per_axis = int(st.number_input("Grid points per axis", min_value=1, max_value=50, step=1,
                                       key=EXP_AXIS, persist_state="session"))
        n_cand = per_axis ** ds.dim
    else:
        cap = max(1, ds.n_public) if how == "public" else 400
        ss.setdefault(EXP_ROWS, min(30, cap))
        ss[EXP_ROWS] = int(min(max(ss[EXP_ROWS], 1), cap))
        n_rows = int(st.number_input("Number of candidate rows", min_value=1, max_value=cap,
                                     step=1, key=EXP_ROWS, persist_state="session"))
        n_cand = n_rows
    m_cap = largest_m(n_cand) if n_cand <= DEFAULT_MAX_DATABASES else 0
    if m_cap < 1:
        st.warning(f"{n_cand:,} candidates: even one point means more than {DEFAULT_MAX_DATABASES:,} databases.")
        return {"how": how, "per_axis": per_axis, "n_rows": n_rows, "m": 1}
    ss.setdefault(EXP_M, min(4, m_cap))
    ss[EXP_M] = int(min(max(ss[EXP_M], 1), m_cap))
    m = int(st.number_input("Synthetic database size M", min_value=1, max_value=m_cap, step=1, key=EXP_M,
                            persist_state="session",
                            help=f"Largest M whose databases fit the exact enumeration: {m_cap}."))
    st.caption(f"{count_multisets(n_cand, m):,} candidate databases are scored exactly "
               f"({n_cand:,} candidates, multisets of size {m}).")
    return {"how": how, "per_axis": per_axis, "n_rows": n_rows, "m": m}


def exp_candidate_count(ds: S.Dataset, p: dict) -> int:
    return p["n_rows"] if p["how"] in ("public", "domain") else p["per_axis"] ** ds.dim


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
    # Before the run (budget check); the ledger records the library's charge of the release afterwards.
    return with_noise_source(exponential_mechanism_charge(epsilon=ctx.epsilon, neighbouring="replace-one",
                                                          label=f"exponential mechanism (M = {p['m']})"), ctx)


def count_figure(n_now: int | None = None, m_now: int | None = None):
    """C(|G|+M-1, M) on a log axis for several |G| (the combinatorial growth), the enumeration limit."""
    import plotly.graph_objects as go

    from ..figures import PALETTE

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
    plotly_chart(count_figure(n, p["m"]), key=EXP_COUNTS)
    st.caption(_exp.NOTES["combinatorial_growth"])
    with st.expander("Why no faster, approximate sampler?"):
        st.markdown(_exp.NOTES["approximate_sampling"] + "\n\nSo this app offers **exact sampling only**: "
                    "every database is scored and one is drawn with exactly these probabilities (Gumbel-max). "
                    "Beyond the limit the mechanism refuses instead of approximating.")


def _exp_show(rec, ds) -> None:

    from ..presentation import OwnerOnly

    if "exp_hist" not in rec.metrics:
        return
    # computed from the private rows: owner-only, hidden in presentation mode
    OwnerOnly(rec, "The exponential mechanism's choice (owner's view)").render(_exp_owner_view)


def _exp_owner_view(rec) -> None:
    """The drawn database's distance, the expected and best distances and the mechanism's mass (private rows)."""
    import plotly.graph_objects as go

    m = rec.metrics
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
    plotly_chart(fig, key=EXP_MASS)


SPEC = MechanismSpec(
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
)

SPECS = (SPEC,)
