"""Algorithm 2 (random features + reduced-set solver) for the Release page, and its sweep for the Curves page."""

from __future__ import annotations

import streamlit as st

from dpkme.cost import estimate_cost
from dpkme.kernels.marginal import DEFAULT_MARGINAL_SHARE, DEFAULT_PAIR_WEIGHT
from dpkme.privacy.accounting import PrivacyCharge
from dpkme.reduced_set import get_solver, preset_options
from dpkme.release import algorithm2_charge
from dpkme.release.random_features import DEFAULT_SOLVER, algorithm2, list_solvers
from dpkme.release.tabular import (
    DEFAULT_N_FEATURES,
    MAX_CELL_NOISE,
    marginal_cell_noise,
    table_marginals,
    table_solver_options,
)

from .. import state as S
from .spec import MechanismSpec, RunContext, n_points_control, with_noise_source

FEATURE_CHOICES = [200, 500, 1000, 2000, 5000, 10000]
#: The library's solver preset for sub-second releases at the app's sizes (its "accurate" preset, the
#: default, targets the paper's sizes): dpkme.reduced_set.PRESETS["interactive"].
PRESET = "interactive"
#: Session and widget key of the choice of initial points / candidate pool.
START = "rel.alg2_start"
#: A mixed table's preset: ``dpkme.release.tabular.release_table``'s (its default ``preset``, checked by the
#: tests), so the app's release of a table is the library's. Measured (``benchmarks/results/app_table_release.md``,
#: 2 cores, quiet): penguins 1.7 s, seattle_weather 1.5 s, a 20 000-row table (M = 2000) 3.5 s, 3.8 s with the
#: marginal block that release_table's rule turns on there, against 0.4, 0.2 and 0.9 s on the app's earlier path
#: (product kernel, interactive preset, J = 1000, no revival, no refit). The same run at load 7-11 took 3.4, 3.3
#: and 25 s.
TABLE_PRESET = "accurate"


def fast_options(solver: str) -> dict:
    """The interactive preset's options that ``solver`` accepts."""
    return preset_options(solver, PRESET)


#: The pool re-fit of the ε explorer's planning runs on a mixed table (``params["planning"]``): a smaller pool
#: and at most 100 iterations (a real release uses :data:`dpkme.release.tabular.TABLE_REFIT`).
PLANNING_REFIT = {"pool_size": 3000, "max_iter": 100}


def preset_for(ds: S.Dataset) -> str:
    """The solver preset of a release of ``ds``: :data:`TABLE_PRESET` for a mixed table, else :data:`PRESET`."""
    return TABLE_PRESET if ds.is_table else PRESET


def solver_options_for(ds: S.Dataset, solver: str) -> dict | None:
    """The solver options of a release of ``ds``: on a mixed table the library's table defaults
    (:func:`dpkme.release.tabular.table_solver_options`: simplex weights, zero-weight revival, the refit over a
    candidate pool -- what ``release_table`` passes); otherwise probability weights where the solver takes a weight
    constraint (issue 16: usable data). All post-processing: none changes the charge."""
    if ds.is_table:
        return table_solver_options(solver, weights="simplex")
    return {"weights": "simplex"} if get_solver(solver).accepts("weights") else None


def _solvers() -> dict[str, dict]:
    return {s["name"]: s for s in list_solvers()}


def _controls(ds: S.Dataset) -> dict:
    ss = st.session_state
    m = n_points_control(2000, help="Synthetic points whose locations and weights the solver optimises.")
    ss.setdefault(S.N_FEATURES, 1000)
    J = st.select_slider("Random features J", options=FEATURE_CHOICES, key=S.N_FEATURES, persist_state="session",
                         help="More features approximate the kernel better; the noise is spread over J coordinates.")
    solvers = _solvers()
    domain = ds.point_domain
    if domain is not None:   # a mixed table or declared bounds: only solvers that keep their points in the domain
        solvers = {n: s for n, s in solvers.items() if get_solver(n).honours_domain}
    if ss.get(S.SOLVER) not in solvers:
        ss[S.SOLVER] = DEFAULT_SOLVER
    name = st.selectbox("Reduced-set solver", list(solvers), key=S.SOLVER, persist_state="session",
                        format_func=lambda n: n + (" (default)" if solvers[n]["default"] else ""))
    st.caption(solvers[name]["description"])
    starts = {"q": "draws from q (declared)" if domain is None else
              "uniform draws from the schema's declared domain" if ds.schema is not None else
              "uniform draws within the declared bounds"}
    if ds.n_public:
        starts["public"] = "the publishable subset (public points)"
    ss.setdefault(START, "q")
    if ss[START] not in starts:
        ss[START] = "q"
    start = st.radio("Initial points / candidate pool", list(starts), format_func=starts.get, key=START,
                     persist_state="session")
    if ds.schema is not None:
        st.caption("Mixed table: the solver stays in the declared domain — its candidate points are uniform draws "
                   "from it, continuous coordinates move only within their declared bounds, integer levels and "
                   "categories are never moved off a declared value. Every released row is a valid row.")
        opts = solver_options_for(ds, name) or {}
        extras = [w for k, w in (("revive", "atoms left at weight 0 re-seeded near weighted ones"),
                                 ("refit", "weights re-fitted over a pool of candidates around the atoms"))
                  if opts.get(k) is not None]
        st.caption(f"The library's table defaults (as `dpkme.release_table`): the **{TABLE_PRESET}** solver preset"
                   + (", " + " and ".join(extras) if extras else "") + f"; J = {DEFAULT_N_FEATURES} and M from the table's size "
                   "and ε by default (`default_n_points`). Post-processing of the noisy features: no extra privacy cost.")
        if ds.is_table and start == "q":
            st.caption(marginal_block_text(ds, name, opts))
        elif ds.is_table:
            st.caption("**Marginal block off**: the solver starts from the publishable subset, and `release_table`'s "
                       "marginal block applies only to candidates drawn from the declared domain (choose that above "
                       "to see whether it would be on).")
        q = float(ds.q_scale)
    elif domain is not None:
        st.caption("Declared bounds on every column: the solver's candidate points are uniform draws within them "
                   "and points move only within them, so every released point lies in the declared range.")
        q = float(ds.q_scale)
    else:
        ss.setdefault(S.Q_SCALE, float(ds.q_scale))
        q = st.number_input("Spread of q (standard deviation, declared)", min_value=1e-9, format="%.4g",
                            key=S.Q_SCALE, persist_state="session", disabled=start != "q",
                            help=f"Suggested: {ds.q_scale:.4g} — {ds.q_note}.")
    if start == "public" and ds.n_public < m and name != "preimage":
        st.caption(f"The pool has {ds.n_public} public points; the solver selects from them.")
    return {"n_points": m, "n_features": int(J), "solver": name, "start": start, "q_scale": float(q),
            "preset": preset_for(ds)}


def _cost(ds: S.Dataset, p: dict, kernel=None):
    options = solver_options_for(ds, p["solver"])
    cells = 0
    if ds.is_table and ds.schema is not None and p.get("start", "q") == "q":
        # the marginal block's cells where the public rule turns it on at the session's ε (as the release will)
        block = table_marginals(ds.schema, n_private=ds.n, epsilon=S.epsilon(), delta=S.delta(), solver=p["solver"],
                                weights=(options or {}).get("weights", "simplex"), solver_options=options,
                                calibration=str(st.session_state.get(S.CALIBRATION, "analytic")))
        cells = block["marginals"].n_components if block else 0
    return estimate_cost("algorithm2", n=ds.n, n_points=p["n_points"], n_features=p["n_features"], dim=ds.dim,
                         solver=p["solver"], preset=p.get("preset", preset_for(ds)), solver_options=options,
                         marginal_cells=cells)


def _run(ctx: RunContext, p: dict):
    ds = ctx.ds
    spec = get_solver(p["solver"])
    initial = None
    if p["start"] == "public":
        initial = ds.public
        if p["n_points"] > ds.n_public and not spec.uses_pool:
            raise ValueError(f"the {p['solver']} solver starts from M = {p['n_points']} public points but the "
                             f"publishable subset has {ds.n_public}; lower M or start from q.")
    # probability weights (≥ 0, Σ = 1) wherever the solver takes a weight constraint (issue 16: usable data); on a
    # mixed table the library's table defaults (release_table's options and preset)
    options = solver_options_for(ds, p["solver"])
    preset = p.get("preset", preset_for(ds))
    if p.get("planning"):
        # the ε explorer's planning runs (and their noiseless twins, whose noise-level stop never triggers): the
        # interactive preset and a smaller, capped re-fit, so three panels and their twins stay interactive
        preset = PRESET
        if options and options.get("refit"):
            options["refit"] = {**options["refit"], **PLANNING_REFIT}
    # a mixed table: the library's marginal block where its public rule turns it on (release_table's default)
    marginals = marginals_for(ds, ctx, p, options) if initial is None else {}
    return algorithm2(
        ds.X, kernel=ctx.kernel, epsilon=ctx.epsilon, delta=ctx.delta, n_points=p["n_points"],
        n_features=p["n_features"], solver=p["solver"], calibration=ctx.calibration, initial_points=initial,
        solver_options=options,
        q_scale=p["q_scale"], q_loc=ds.q_center if ds.q_center is not None else 0.0,
        random_state=ctx.random_state, progress=ctx.progress, preset=preset, noise=ctx.noise,
        **({"domain": ds.point_domain} if ds.point_domain is not None else {}), **marginals,
    )


def marginal_block_text(ds: S.Dataset, solver: str, options: dict) -> str:
    """Plain words on the marginal block at the session's ε: on or off, and why (its public rule)."""
    eps, delta = S.epsilon(), S.delta()
    cal = st.session_state.get(S.CALIBRATION, "analytic")   # the run's calibration (marginals_for's), not a default
    kw = table_marginals(ds.schema, n_private=ds.n, epsilon=eps, delta=delta, solver=solver,
                         weights=options.get("weights", "simplex"), solver_options=options, calibration=cal)
    p = len(ds.schema)
    share = kw.get("marginal_share", DEFAULT_MARGINAL_SHARE)
    pw = kw["marginals"].pair_weight if kw else (DEFAULT_PAIR_WEIGHT if p > 1 else 0.0)
    noise = marginal_cell_noise(n_private=ds.n, epsilon=eps, delta=delta, n_columns=p, pair_weight=pw, share=share,
                                calibration=cal)
    if kw:
        m = kw["marginals"]
        n_pairs = p * (p - 1) // 2
        pairs = (f"{len(m.pairs)} pairs of columns" if len(m.pairs) == n_pairs else
                 f"{len(m.pairs)} of the {n_pairs} pairs of columns (those nearest in the schema's order: a cap of "
                 f"{m.max_cells:,} cells)")
        return (f"**Marginal block on** (`release_table`'s public rule): the same Gaussian mechanism also measures "
                f"each column's cells (its categories or levels, or {m.n_bins} equal bins of its range) and the "
                f"cross-tabulation of {pairs}: {m.n_components:,} cell proportions in all. They share one unit-norm "
                f"vector with the kernel's features ({share:.0%} of its squared length for the cells, {1 - share:.0%} "
                "for the features), so Δ = 2/N and the charge are unchanged. One cell's proportion gets noise "
                f"±{noise:.2%} of the rows (one standard deviation) at ε = {eps:g}; the weights are then fitted to "
                "both parts, so the released columns and cross-tabs follow the measured cells (up to that noise and "
                "the fit's residual, larger with many columns and few synthetic points).")
    return (f"**Marginal block off** at ε = {eps:g}: measuring each column's cells would give one cell's proportion "
            f"noise ±{noise:.1%} of the rows (the public rule needs ≤ {MAX_CELL_NOISE:.0%}), so the whole budget goes "
            "to the kernel's features. More rows or a larger ε turn it on.")


def marginals_for(ds: S.Dataset, ctx: RunContext, p: dict, options: dict | None) -> dict:
    """The marginal block of a release of ``ds`` (:func:`dpkme.release.tabular.table_marginals`): a mixed table
    released from its declared domain gets what ``release_table`` would use (same public rule, same charge)."""
    if not ds.is_table or ds.schema is None:
        return {}
    return table_marginals(ds.schema, n_private=ds.n, epsilon=ctx.epsilon, delta=ctx.delta, solver=p["solver"],
                           weights=(options or {}).get("weights", "simplex"), solver_options=options,
                           calibration=ctx.calibration)


def _charge(ctx: RunContext, p: dict) -> PrivacyCharge:
    # The library's charge: unit-norm features, Δ = 2/N (Proposition 9); the solver is post-processing.
    return with_noise_source(algorithm2_charge(
        n_private=ctx.ds.n, epsilon=ctx.epsilon, delta=ctx.delta, calibration=ctx.calibration,
        neighbouring="replace-one", label=f"Algorithm 2 (M = {p['n_points']}, J = {p['n_features']}, {p['solver']})"),
        ctx)


ALGORITHM2 = MechanismSpec(
    key="alg2",
    label="Algorithm 2 · random features",
    summary="Privatise the mean of J random Fourier features, then let a solver place and weight synthetic "
            "points to match it. Locations are optimised too (helps in higher dimensions).",
    explain=r"""**Algorithm 2** (Balog et al. 2018): map every row to $J$ random Fourier features
$\phi(x)\in\mathbb R^J$ with $\|\phi(x)\|_2 = 1$ and $\phi(x)^\top\phi(y)\approx k(x,y)$; add Gaussian noise to the
mean feature vector, $\tilde\mu = \frac1N\sum_n\phi(x_n) + \mathcal N(0,\sigma^2 I_J)$, with sensitivity
$\Delta = 2/N$ (Proposition 9 — the random-feature kernel can be negative, so the √2 improvement of
Algorithm 1 does not apply here); then a *reduced-set* solver finds $(z_m, w_m)$ minimising
$\|\sum_m w_m\phi(z_m) - \tilde\mu\|$ (eq. 5). The solver sees only $\tilde\mu$ and public inputs: it is
post-processing, so a poor solution can hurt accuracy but never privacy.""",
    spends_budget=True, requires=lambda ds: None, controls=_controls, run=_run, charge=_charge,
    evaluate_projection=False, tags=("algorithm2", "opendp"), cost=_cost,
)

SPECS = (ALGORITHM2,)


def alg2_sweep(ds: S.Dataset, kernel, *, epsilons, m_grid, reps: int, delta: float, calibration: str,
               n_features: int, solver: str, q_scale: float, seed: int, mean_kxx: float, progress=None) -> list[dict]:
    """RKHS distances of Algorithm 2 releases for every ε, repetition and M of ``m_grid``.

    :func:`dpkme.curves.alg2_curves` with the interactive solver preset and q's declared centre and spread, or,
    when the data declare a domain (:attr:`ui.state.Dataset.point_domain`: a schema, or bounds on every column),
    points drawn uniformly from it and kept inside it: one solver run per (ε, repetition) reports every size of
    the grid. Evaluation reads the private rows (owner only). Rows: ``{"method", "M", "epsilon", "rep",
    "distance"}``.
    """
    from dpkme.curves import alg2_curves

    domain = ds.point_domain
    res = alg2_curves(ds.X, kernel=kernel, epsilons=list(epsilons), delta=delta, m_grid=list(m_grid), reps=int(reps),
                      n_features=int(n_features), solver=solver, preset=PRESET, calibration=calibration,
                      q_scale=float(q_scale), q_loc=ds.q_center if ds.q_center is not None else 0.0,
                      mean_kxx=mean_kxx, random_state=int(seed), progress=progress,
                      **({"domain": domain} if domain is not None else {}))
    return [{"method": "Algorithm 2", "M": m, "epsilon": float(eps), "rep": r, "distance": res.alg2_reps[i][r][j]}
            for i, eps in enumerate(res.epsilons) for r in range(len(res.alg2_reps[i]))
            for j, m in enumerate(res.m_grid)]
