"""The Gaussian-process function release (Hall, Rinaldo & Wasserman) for the Release page."""

from __future__ import annotations

import numpy as np
import streamlit as st

import dpkme.release.gp as _gp
from dpkme.cost import estimate_cost
from dpkme.privacy.accounting import PrivacyCharge
from dpkme.release import gp_release_charge
from dpkme.release.gp import MAX_GRID_POINTS, gp_release, grid_axes

from .. import state as S
from .spec import MechanismSpec, RunContext, with_noise_source

_GP_NOTES = "\n\n".join(f"*{v}*" for v in getattr(_gp, "NOTES", {}).values())
_GP_REGIONS = {
    "box": "the declared bounds of every column (declared)",
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
        if ds.point_domain is not None:                          # never beyond the declared bounds
            dl, du = np.asarray(ds.point_domain.lower, dtype=float), np.asarray(ds.point_domain.upper, dtype=float)
            lo, hi = np.maximum(lo, dl), np.minimum(hi, du)
            flat = hi <= lo
            lo, hi = np.where(flat, dl, lo), np.where(flat, du, hi)
    elif region == "box":           # declared bounds on every column (issue 16, finding 3): the grid stays inside
        if ds.point_domain is None:
            raise ValueError("needs declared bounds on every column (Data page: Units and bounds), or use q's box.")
        lo, hi = np.asarray(ds.point_domain.lower, dtype=float), np.asarray(ds.point_domain.upper, dtype=float)
    else:
        c = ds.q_center if ds.q_center is not None else np.zeros(ds.dim)
        s = float(st.session_state.get(S.Q_SCALE, ds.q_scale))
        lo, hi = c - 2 * s, c + 2 * s
    if per_axis ** ds.dim > MAX_GRID_POINTS:
        raise ValueError(f"{per_axis}^{ds.dim} grid points is too many; use fewer points per axis.")
    return grid_axes(lo, hi, per_axis)


def _gp_requires(ds: S.Dataset) -> str | None:
    if ds.schema is not None:
        return ("is not offered for mixed tables: it releases a function on a grid of the embedding's coordinates, "
                "and most grid points (fractions of a category) are no rows of the table. Use Algorithm 2 or 1.")
    return None


#: Session and widget keys of the controls.
GP_REGION = "rel.gp_region"
GP_AXIS = "rel.gp_axis"
GP_NORM = "rel.gp_norm"
GP_CAL = "rel.gp_cal"


def _gp_controls(ds: S.Dataset) -> dict:
    ss = st.session_state
    if ds.point_domain is not None:   # declared bounds: the grid lies inside them (not q's box, which may not)
        regions = {k: v for k, v in _GP_REGIONS.items() if k == "box" or (k == "public" and ds.n_public >= 2)}
    else:
        regions = {k: v for k, v in _GP_REGIONS.items() if k == "q" or (k == "public" and ds.n_public >= 2)}
    ss.setdefault(GP_REGION, next(iter(regions)))
    if ss[GP_REGION] not in regions:
        ss[GP_REGION] = next(iter(regions))
    region = st.radio("Where the function is released (a public grid)", list(regions), format_func=regions.get,
                      key=GP_REGION, persist_state="session")
    ss.setdefault(GP_AXIS, {1: 200, 2: 40, 3: 12}.get(ds.dim, 4))
    per_axis = int(st.number_input("Grid points per axis", min_value=2, max_value=400, step=1,
                                   key=GP_AXIS, persist_state="session"))
    st.caption(f"{per_axis ** ds.dim:,} grid points in {ds.dim} dimension(s).")
    ss.setdefault(GP_NORM, "kme")
    norm = st.radio("Function", ["kme", "kde"], key=GP_NORM, persist_state="session",
                    format_func={"kme": "the kernel mean embedding (as in Balog et al.)",
                                 "kde": "the kernel density estimate (Hall et al.'s example)"}.get)
    ss.setdefault(GP_CAL, "analytic")
    cal = st.radio("Noise calibration", ["analytic", "hall"], key=GP_CAL, persist_state="session",
                   format_func={"analytic": "analytic Gaussian (Balle & Wang) — least noise",
                                "hall": "Hall et al.'s s = Δ√(2 log(2/δ))/ε"}.get)
    return {"region": region, "per_axis": per_axis, "normalisation": norm, "calibration": cal}


def _gp_run(ctx: RunContext, p: dict):
    grid = gp_grid(ctx.ds, p["region"], p["per_axis"])
    return gp_release(ctx.ds.X, kernel=ctx.kernel, epsilon=ctx.epsilon, delta=ctx.delta, grid=grid,
                      normalisation=p["normalisation"], calibration=p["calibration"],
                      sensitivity=ctx.sensitivity_mode, random_state=ctx.random_state, progress=ctx.progress)


def _gp_charge(ctx: RunContext, p: dict) -> PrivacyCharge:
    return with_noise_source(gp_release_charge(
        n_private=ctx.ds.n, kernel=ctx.kernel, epsilon=ctx.epsilon, delta=ctx.delta, dim=ctx.ds.dim,
        normalisation=p["normalisation"], calibration=p["calibration"], sensitivity=ctx.sensitivity_mode,
        neighbouring="replace-one", label=f"GP release ({p['normalisation']}, {p['per_axis']}^{ctx.ds.dim} grid)"), ctx)


SPEC = MechanismSpec(
    key="gp",
    label="GP release · a noisy function on a grid",
    summary="Release the embedding itself as a function, plus a scaled Gaussian-process sample path "
            "(Hall, Rinaldo & Wasserman). No synthetic points: the output is a noisy function on a public grid.",
    explain=r"""Hall, Rinaldo & Wasserman: $\tilde f = \hat\mu_X + s\,G$ with $G\sim\mathcal{GP}(0, k)$ and
$s$ calibrated to the RKHS sensitivity of $\hat\mu_X$ — the "natural" mechanism the paper's Section 3.2 discusses
and sets aside: **the sample path is not in the RKHS**, so its RKHS distance to $\hat\mu_X$ is infinite and it
cannot be represented by weighted points. It can still be compared pointwise or in $L^2$ on the grid.""" + (
        "\n\n" + _GP_NOTES if _GP_NOTES else ""),
    spends_budget=True, requires=_gp_requires, controls=_gp_controls, run=_gp_run, charge=_gp_charge,
    cost=lambda ds, p, k: estimate_cost("gp", n=ds.n, grid_shape=(p["per_axis"],) * ds.dim, dim=ds.dim,
                                        product_kernel=k.name in ("gaussian", "laplacian")),
    final_charge=lambda r: r.privacy_charge(
        f"GP release ({r.normalisation}, {'×'.join(str(len(a)) for a in r.axes) if r.axes else r.points.shape[0]}"
        " grid)"),
    output="function", tags=("gp",),
)

SPECS = (SPEC,)
