"""Algorithm 1 (subspace release), two variants: the publishable points ("alg1-public") and points from q ("alg1-q")."""

from __future__ import annotations

import numpy as np
import streamlit as st

from dpkme.cost import estimate_cost
from dpkme.privacy.accounting import PrivacyCharge
from dpkme.release import Release, algorithm1_charge
from dpkme.release.subspace import algorithm1

from .. import compute as C
from .. import state as S
from .spec import MechanismSpec, RunContext, n_points_control, needs_public, with_noise_source

BASIS_LABELS = {
    "full": "paper: full Gram–Schmidt basis",
    "auto": "+ James–Stein shrinkage toward a public target (post-processing, no extra cost)",
}
WEIGHT_LABELS = {
    "simplex": "probability weights (≥ 0, sum 1) — closest in RKHS norm (default)",
    "free": "signed weights — the paper's option (may be negative)",
    "l1": "L1 ball Σ|w| ≤ 1 (Theorem 11)",
}
#: Why the default is probability weights, and what the paper's signed weights are (issue 16).
WEIGHTS_HELP = (
    "Probability weights (the default) make the release a probability distribution over the points: a recipient can "
    "average with them and draw unweighted rows from them. They are the closest such weights to the noisy release "
    "in RKHS norm — post-processing, no extra privacy cost. The paper's Algorithm 1 releases the **signed** weights "
    "as they come out of the noise: an unbiased signed measure whose Σ|w| grows as ε shrinks (e.g. Σ|w| ≈ 150 at "
    "ε = 0.15), so single weights are large and of both signs — right for the paper's RKHS distances, hard to use "
    "as data.")


def alg1_options() -> dict:
    basis = st.radio("Basis", list(BASIS_LABELS), format_func=BASIS_LABELS.get, key=S.BASIS,
                     persist_state="session", horizontal=False)
    weights = st.radio("Weights", list(WEIGHT_LABELS), format_func=WEIGHT_LABELS.get, key=S.WEIGHTS,
                       persist_state="session", help=WEIGHTS_HELP)
    return {"basis": basis, "weights": weights}


def _alg1_cost(ds: S.Dataset, p: dict, kernel=None):
    return estimate_cost("algorithm1", n=ds.n, n_points=p["n_points"], dim=ds.dim, weights=p["weights"])


def _alg1_charge(ctx: RunContext, p: dict) -> PrivacyCharge:
    return with_noise_source(algorithm1_charge(
        n_private=ctx.ds.n, kernel=ctx.kernel, epsilon=ctx.epsilon, delta=ctx.delta, calibration=ctx.calibration,
        sensitivity=ctx.sensitivity_mode, neighbouring="replace-one", label=f"Algorithm 1 (M = {p['n_points']})"), ctx)


_ALG1_MATH = r"""**Algorithm 1** (Balog et al. 2018): fix public points $z_1..z_M$ *before* looking at the data,
build an orthonormal basis $b_1..b_F$ of $\mathcal H_M=\mathrm{span}\{k(z_m,\cdot)\}$ (Gram–Schmidt), project the
private KME $\hat\mu_X=\frac1N\sum_n k(x_n,\cdot)$ onto it, $\alpha_f=\langle b_f,\hat\mu_X\rangle$, add Gaussian
noise $\beta=\alpha+\mathcal N(0,\sigma^2 I_F)$ and re-express $\tilde\mu=\sum_f\beta_f b_f=\sum_m w_m k(z_m,\cdot)$.
The projection is 1-Lipschitz, so the sensitivity of $\alpha$ is that of $\hat\mu_X$ (√2/N or the paper's 2/N)
and $\beta$ is $(\varepsilon,\delta)$-DP; the weights are post-processing.
Expected squared privacy error: $F\sigma^2$ — more points ⇒ more coordinates ⇒ more noise."""


def _alg1_public_controls(ds):
    m = n_points_control(ds.n_public, help="The first M rows of the publishable subset become the z_m.")
    return {"n_points": m, **alg1_options()}


def _alg1_public_run(ctx: RunContext, p: dict) -> Release:
    Z = ctx.ds.public[: p["n_points"]]
    ctx.progress(0.1, "orthonormal basis of the public points (public work, cached)")
    B = C.basis(C.kernel_key(ctx.kernel), C.array_key(Z), Z)
    ctx.progress(0.6, "projecting the private KME and adding noise")
    return algorithm1(
        ctx.ds.X, Z, kernel=ctx.kernel, epsilon=ctx.epsilon, delta=ctx.delta, points_are_sample=True,
        calibration=ctx.calibration, sensitivity=ctx.sensitivity_mode, basis=p["basis"], weights=p["weights"],
        random_state=ctx.random_state, basis_cache=B, noise=ctx.noise,
    )


PUBLIC = MechanismSpec(
    key="alg1-public",
    label="Algorithm 1 · publishable points",
    summary="Re-weight the public rows so that they represent the private data's KME, with Gaussian noise.",
    explain=_ALG1_MATH + "\n\nHere the $z_m$ are the first $M$ rows of the publishable subset (the paper's "
    "Figure 1 scenario): they are already public, so releasing them costs nothing; only the weights carry "
    "information about the private rows.",
    spends_budget=True, requires=needs_public, controls=_alg1_public_controls, run=_alg1_public_run,
    charge=_alg1_charge, evaluate_projection=True, tags=("algorithm1", "opendp"), cost=_alg1_cost,
)


def _alg1_q_controls(ds):
    m = n_points_control(2000, help="Points drawn from q; more points cover more space but add noise.")
    if ds.schema is not None:
        st.caption("Mixed table: the points are drawn uniformly from the schema's declared domain (continuous "
                   "columns uniform in their bounds, integers over their levels, categories uniform), so every "
                   "released row is a valid row. The draw is public: it does not look at the data.")
        return {"n_points": m, "domain": True, **alg1_options()}
    if ds.point_domain is not None:      # declared bounds on every column (issue 16, finding 3)
        st.caption("The points are drawn uniformly within the declared bounds of every column, so every released "
                   "point lies in the data's declared range. The draw is public: it does not look at the data.")
        return {"n_points": m, "domain": True, **alg1_options()}
    ss = st.session_state
    ss.setdefault(S.Q_SCALE, float(ds.q_scale))
    q = st.number_input("Spread of q (standard deviation, declared)", min_value=1e-9, format="%.4g",
                        key=S.Q_SCALE, persist_state="session",
                        help=f"Suggested: {ds.q_scale:.4g} — {ds.q_note}. Must not be computed from private rows.")
    center = ds.q_center if ds.q_center is not None else np.zeros(ds.dim)
    st.caption("Centre of q: (" + ", ".join(f"{c:.3g}" for c in center[:6]) + (", …" if ds.dim > 6 else "")
               + f") — {ds.q_note}.")
    return {"n_points": m, "q_scale": float(q), "q_center": center, **alg1_options()}


def _alg1_q_run(ctx: RunContext, p: dict) -> Release:
    ctx.progress(0.2, "drawing points from q, basis, projection and noise")
    if p.get("domain"):
        if ctx.ds.point_domain is None:
            raise ValueError("points from a declared domain need a mixed table with a schema, or declared bounds "
                             "on every column (Data page).")
        return algorithm1(
            ctx.ds.X, None, kernel=ctx.kernel, epsilon=ctx.epsilon, delta=ctx.delta, n_points=p["n_points"],
            point_domain=ctx.ds.point_domain, calibration=ctx.calibration, sensitivity=ctx.sensitivity_mode,
            basis=p["basis"], weights=p["weights"], random_state=ctx.random_state, noise=ctx.noise,
        )
    return algorithm1(
        ctx.ds.X, None, kernel=ctx.kernel, epsilon=ctx.epsilon, delta=ctx.delta, n_points=p["n_points"],
        q_scale=p["q_scale"], q_center=p["q_center"], calibration=ctx.calibration,
        sensitivity=ctx.sensitivity_mode, basis=p["basis"], weights=p["weights"], random_state=ctx.random_state,
        noise=ctx.noise,
    )


Q = MechanismSpec(
    key="alg1-q",
    label="Algorithm 1 · random points from q",
    summary="No public rows needed: draw the z_m from a declared distribution q, then re-weight them privately.",
    explain=_ALG1_MATH + "\n\nHere the $z_m$ are drawn from $q=\\mathcal N(c, s^2 I)$ with a *declared* centre and "
    "spread (the paper's Figure 2 scenario, $q=\\mathcal N(0, 500^2 I)$). Points far from the data get tiny "
    "weights; in higher dimensions few random points land near the data (Proposition 5).",
    spends_budget=True, requires=lambda ds: None, controls=_alg1_q_controls, run=_alg1_q_run,
    charge=_alg1_charge, evaluate_projection=True, tags=("algorithm1", "opendp"), cost=_alg1_cost,
)

SPECS = (PUBLIC, Q)
