"""The adaptive KME release of a mixed table (:func:`dpkme.release.adaptive.adaptive_release`) for the Release page.

The default mechanism for a table with a declared schema. It runs in the background (``background=True``: the
runner starts it in a thread after the gate has charged it, the page polls its progress and offers Stop). The
library returns unweighted synthetic rows in the table's own columns and types; the app records them as a
weighted-points release with equal weights :math:`1/M` on the rows embedded by the schema, so the table views,
the owner's evaluation (RKHS distance, marginals, associations) and the Third-party use page work as for
Algorithm 2. The charge is the library's (:func:`dpkme.release.adaptive.adaptive_release_charge`, computed
from public inputs before any row is read); the finished release's own charge adds its parts (every selection
and measurement with its zCDP :math:`\\rho`), which the ledger records as details of that one charge.
"""

from __future__ import annotations

import math
import time

import numpy as np
import streamlit as st

from dpkme.cost import adaptive_cost, observe_adaptive_run
from dpkme.privacy.accounting import PrivacyCharge
from dpkme.release import Release
from dpkme.release.adaptive import (
    adaptive_release,
    adaptive_release_charge,
    default_rounds,
    default_synthetic_rows,
)

from .. import state as S
from .spec import MechanismSpec, RunContext, with_noise_source

KEY = "adaptive"
MECHANISM = "adaptive-kme"
#: Session keys of the controls.
ROWS_KEY = "rel.adaptive_rows"
ROUNDS_KEY = "rel.adaptive_rounds"
STEPS_KEY = "rel.adaptive_steps"
FINAL_KEY = "rel.adaptive_final"
#: Adam steps after each measurement and at the end (:data:`dpkme.release.fit.ROUND_STEPS`, ``FINAL_STEPS``).
ROUND_STEPS, FINAL_STEPS = 30, 300
#: Structures whose fit has been compiled (warm) in this server process: (widths, rows, rounds) (for the cost estimate).
_WARM: set = set()
#: The last prediction of each structure and settings: a finished run corrects the next ones with its measured time
#: (:func:`dpkme.cost.observe_adaptive_run`).
_PREDICTED: dict = {}


def _requires(ds: S.Dataset) -> str | None:
    if ds.schema is None:
        return ("needs a mixed table with a declared schema (Data page: a bundled table, or an upload read as a "
                "mixed table).")
    return None


def _controls(ds: S.Dataset) -> dict:
    ss = st.session_state
    p = len(ds.schema)
    ss.setdefault(ROWS_KEY, default_synthetic_rows(ds.n))
    ss.setdefault(ROUNDS_KEY, default_rounds(p))
    if ss[ROUNDS_KEY] < p + 1:
        ss[ROUNDS_KEY] = p + 1
    rows = st.number_input("Synthetic rows M", min_value=10, max_value=20_000, step=100, key=ROWS_KEY,
                           persist_state="session",
                           help="Rows of the fitted synthetic table (the library's public default: "
                                f"{default_synthetic_rows(ds.n):,}). The fit's time grows with them, not with N.")
    rounds = st.number_input("Rounds T", min_value=p + 1, max_value=200, step=1, key=ROUNDS_KEY,
                             persist_state="session",
                             help=f"The {p} columns are measured first, then rounds of private selection and "
                                  f"measurement (default {default_rounds(p)}). Part of the charge's description; "
                                  "the whole (ε, δ) is the same for any T.")
    with st.expander("Fit settings (post-processing: no privacy cost)"):
        ss.setdefault(STEPS_KEY, ROUND_STEPS)
        ss.setdefault(FINAL_KEY, FINAL_STEPS)
        steps = st.number_input("Adam steps after each measurement", min_value=1, max_value=1000, key=STEPS_KEY,
                                persist_state="session")
        final = st.number_input("Adam steps at the end", min_value=1, max_value=5000, key=FINAL_KEY,
                                persist_state="session")
    st.caption(f"**{rows_words(ds, int(rows))}.**")
    st.caption("Every column is measured first, then each round privately **selects** the column subset (1-, 2- or "
               "3-way) the synthetic rows fit worst and **measures** it with Gaussian noise; the budget is annealed "
               "as in AIM and composed in zCDP. Synthetic rows are fitted to all measurements by gradient (JAX) and "
               "decoded to the table's own columns and types: post-processing of the noisy measurements.")
    return {"synthetic_rows": int(rows), "rounds": int(rounds), "round_steps": int(steps), "final_steps": int(final),
            "n_points": int(rows)}


def rows_words(ds: S.Dataset, m: int) -> str:
    """How many synthetic rows come from how many private rows, and the held-out share, in words.

    Without exact counts where they are hidden (presentation mode over a ledger with add/remove charges,
    :func:`ui.state.counts_hidden`)."""
    if S.counts_hidden(ds):
        return (f"{m:,} synthetic rows from the private rows (row counts are not shown: this ledger holds add/remove "
                "charges)" + ("; a held-out share of the table is kept out of the release for evaluation"
                              if ds.n_heldout else ""))
    out = f"{m:,} synthetic rows from {ds.n:,} private rows"
    if ds.n_heldout:
        out += f"; {ds.n_heldout:,} held out for evaluation (never read by the release)"
    if ds.n_public:
        out += f"; {ds.n_public:,} publishable rows not used"
    return out


def _charge(ctx: RunContext, p: dict) -> PrivacyCharge:
    # the library's charge from public inputs only: the schema, N (public under replace-one), ε, δ and T
    return with_noise_source(adaptive_release_charge(
        schema=ctx.ds.schema, n_private=ctx.ds.n, epsilon=ctx.epsilon, delta=ctx.delta, neighbouring="replace-one",
        rounds=p["rounds"], label=f"Adaptive KME table release (M = {p['synthetic_rows']}, T = {p['rounds']})"), ctx)


def _structure(ds: S.Dataset, p: dict, epsilon: float, delta: float) -> tuple:
    """What the compiled fit depends on (public): the schema, N, ε, δ and the sizes (a warm one compiles nothing).
    Reads no session state: the background thread calls it too."""
    return (repr(ds.schema.to_dict()), ds.n, float(epsilon), float(delta), p["synthetic_rows"], p["rounds"])


def _cost(ds: S.Dataset, p: dict, kernel=None):
    key = _structure(ds, p, S.epsilon(), S.delta())
    est = adaptive_cost(ds.schema, n=ds.n, epsilon=S.epsilon(), delta=S.delta(), rounds=p["rounds"],
                        synthetic_rows=p["synthetic_rows"], round_steps=p["round_steps"],
                        final_steps=p["final_steps"], compiled=key in _WARM)
    _PREDICTED[(key, tuple(sorted(p.items())))] = est
    return est


def as_release(res, *, kernel, seconds: float) -> Release:
    """The library's :class:`~dpkme.release.adaptive.AdaptiveTableRelease` as equally weighted rows (embedded by
    the schema): what the Release page's table views, downloads and evaluation read."""
    points = res.schema.encode(res.rows)
    m = points.shape[0]
    sigmas = [float(r["sigma"]) for r in res.rounds]
    return Release(
        points=points, weights=np.full(m, 1.0 / m), mechanism=MECHANISM, epsilon=float(res.epsilon),
        delta=float(res.delta), sigma=min(sigmas), sensitivity=math.sqrt(2.0) / res.n_private,
        neighbouring=res.neighbouring, calibration="zcdp", kernel=kernel, seed=res.seed, n_private=res.n_private,
        seconds=float(seconds), noise_source=res.noise_source, charge=res.charge,
        params={"synthetic_rows": int(m), "rounds": len(res.rounds), "n_candidates": int(res.n_candidates),
                "rho": float(res.rho), "sigma_min": min(sigmas), "sigma_max": max(sigmas), "decode": res.decode,
                "rounds_log": res.rounds, "weights": "equal (unweighted rows)"})


def _run(ctx: RunContext, p: dict) -> Release:
    # runs in the background thread (ui.runner.start_background): no Streamlit call, no session state
    ds = ctx.ds
    t0 = time.perf_counter()
    ctx.progress(0.0, "measuring every column, then selecting and measuring in rounds; fitting the rows (JAX)")
    res = adaptive_release(ds.X, schema=ds.schema, epsilon=ctx.epsilon, delta=ctx.delta, rounds=p["rounds"],
                           synthetic_rows=p["synthetic_rows"], round_steps=p["round_steps"],
                           final_steps=p["final_steps"], random_state=ctx.random_state, neighbouring="replace-one")
    seconds = time.perf_counter() - t0
    key = _structure(ds, p, ctx.epsilon, ctx.delta)
    predicted = _PREDICTED.pop((key, tuple(sorted(p.items()))), None)
    if predicted is not None:
        observe_adaptive_run(predicted, seconds)      # the next prediction on this machine starts from this run
    _WARM.add(key)
    return as_release(res, kernel=ctx.kernel, seconds=seconds)


def _final_charge(release: Release) -> PrivacyCharge:
    assert release.charge is not None
    return release.charge


def parts_frame(parts):
    """A charge's itemised parts (``details["parts_itemised"]``), one row per selection or measurement with its
    zCDP ρ, or None when it has none."""
    import pandas as pd

    if not parts:
        return None
    return pd.DataFrame([{"round": q.get("round"), "part": q.get("part"), "columns": ", ".join(q.get("columns", [])),
                          "ρ (zCDP)": float(q["rho"]), "ε of the selection": q.get("epsilon")} for q in parts])


def parts_table(charge: PrivacyCharge | None):
    """The parts of an adaptive release's charge (:func:`parts_frame`), or None."""
    return parts_frame((charge.details.get("parts_itemised") if charge is not None else None) or [])


def _show(rec, ds) -> None:
    r = rec.release
    pr = r.params
    st.markdown(f"**How the budget was spent**: ρ = {pr.get('rho', float('nan')):.4g} zCDP in {pr.get('rounds')} "
                f"rounds over {pr.get('n_candidates')} candidate column subsets; measurement noise σ from "
                f"{pr.get('sigma_min', 0):.3g} to {pr.get('sigma_max', 0):.3g} (per entry of a normalised "
                "embedding); (ε, δ) = (ρ + 2√(ρ ln(1/δ)), δ).")
    tab = parts_table(rec.charge)
    if tab is not None:
        with st.expander(f"The charge's {len(tab)} parts (one ledger charge, itemised)"):
            st.dataframe(tab, hide_index=True)


ADAPTIVE = MechanismSpec(
    key=KEY,
    label="Adaptive KME (tables)",
    summary="The default for tables: measure each column, then privately select and measure the column subsets "
            "the synthetic rows fit worst (AIM-style rounds), and fit unweighted synthetic rows to all "
            "measurements. Rows in the table's own columns and types.",
    explain=r"""**Adaptive kernel-mean-embedding release** (`dpkme.release.adaptive`): a workload of 1-, 2- and
3-way column subsets $r$, each answered by the mean of its localised kernel features
$a_r(D)=\frac1N\sum_{x\in D}\phi_r(x)$ (cells for discrete columns, Gaussian landmark features for numbers:
nothing is binned). Every $\phi_r(x)$ is nonnegative and sums to 1, so one row moves $a_r$ by at most
$\sqrt2/N$ in L2 (replace-one). Round $t$ selects the worst-fitted subset with the exponential mechanism
($\varepsilon_t^2/8$-zCDP) and measures it with Gaussian noise ($\rho_t$-zCDP); the budget is annealed as in AIM.
The parts add up to $\rho$ with $\rho + 2\sqrt{\rho\ln(1/\delta)} \le \varepsilon$: the release is
$(\varepsilon,\delta)$-DP, charged once before any row is read. The synthetic rows are fitted to all noisy
measurements by gradient (JAX) and decoded to valid rows: post-processing.""",
    spends_budget=True, requires=_requires, controls=_controls, run=_run, charge=_charge,
    final_charge=_final_charge, show=_show, cost=_cost, background=True, tags=("adaptive", "table"),
)

SPECS = (ADAPTIVE,)
