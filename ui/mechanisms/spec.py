"""The release mechanisms offered by the Release page, as a registry.

A mechanism is a :class:`MechanismSpec`: a label and explanation, a check
that the current dataset supports it, a function that draws its own widgets
and returns its parameters, a function that runs it (calling :mod:`dpkme`)
and returns a :class:`~dpkme.release.Release`, and a function that turns the
release into a :class:`~dpkme.accounting.PrivacyCharge` for the ledger. A new
mechanism (exponential mechanism, GP release, cluster-wise release, ...) is
one more :func:`register` call; the Release, Curves and Ledger pages need no
change.
"""

from __future__ import annotations

import importlib.util
from dataclasses import dataclass, field
from typing import Any, Callable

import numpy as np
import streamlit as st

from dpkme.accounting import PrivacyCharge, gaussian_charge
from dpkme.guards import estimate_cost
from dpkme.release import Release
from dpkme.subspace import algorithm1, uniform_baseline

from . import compute as C
from . import state as S


@dataclass
class RunContext:
    """Everything a mechanism may use: public settings and the private rows ``ds.X``."""

    ds: S.Dataset
    kernel: Any
    epsilon: float
    delta: float
    calibration: str
    sensitivity_mode: str
    random_state: int | None          # None: fresh OS-entropy noise, nothing recorded; an int: replay mode
    noise_source: str                 # "os-entropy" | "opendp" | "seeded" (replay mode, not private)
    progress: Callable[[float, str], None] = lambda f, m: None

    @property
    def noise(self) -> str:
        """The library's ``noise=`` argument: OpenDP's vetted sampler or numpy's."""
        return "opendp" if self.noise_source == "opendp" else "numpy"


@dataclass(frozen=True)
class MechanismSpec:
    key: str
    label: str
    summary: str
    explain: str                                         # markdown with $math$, for an expander
    spends_budget: bool
    requires: Callable[[S.Dataset], str | None]          # None if usable, else why not
    controls: Callable[[S.Dataset], dict]                # draws widgets, returns parameters
    run: Callable[[RunContext, dict], Any]                 # a Release, or (Release, owner-only metrics)
    charge: Callable[[RunContext, dict], PrivacyCharge | None]  # computed before the run (budget check)
    evaluate_projection: bool = False                    # show the noise-free projection next to it
    output: str = "points"                               # "points" (weighted points) or "function" (values on a grid)
    tags: tuple[str, ...] = field(default_factory=tuple)
    #: The library's charge of the finished release (same ε, δ as ``charge``), recorded instead of it.
    final_charge: Callable[[Any], PrivacyCharge] | None = None
    #: Owner's view drawn under the release's metrics (rec, ds); optional.
    show: Callable[[Any, Any], None] | None = None
    #: Teaching material drawn under the controls (ds, params); optional.
    teach: Callable[[Any, dict], None] | None = None
    #: Predicted cost of the mechanism itself (ds, params, kernel) -> dpkme.guards.CostEstimate, for the size
    #: guard; the evaluation against the private data is added by the runner. None: negligible.
    cost: Callable[[Any, dict, Any], Any] | None = None


REGISTRY: dict[str, MechanismSpec] = {}


def register(spec: MechanismSpec) -> MechanismSpec:
    REGISTRY[spec.key] = spec
    return spec


def available() -> list[MechanismSpec]:
    return list(REGISTRY.values())


# --------------------------------------------------------------------------- shared controls
def _n_points_control(maximum: int, *, label="Number of synthetic points M", help=None) -> int:
    ss = st.session_state
    maximum = max(1, int(maximum))
    if ss.get(S.N_POINTS, 1) > maximum:
        ss[S.N_POINTS] = maximum
    if ss.get(S.N_POINTS, 1) < 1:
        ss[S.N_POINTS] = 1
    return int(st.number_input(label, min_value=1, max_value=maximum, step=10, key=S.N_POINTS,
                               persist_state="session", help=help))


BASIS_LABELS = {
    "full": "paper: full Gram–Schmidt basis",
    "auto": "+ James–Stein shrinkage toward a public target (post-processing, no extra cost)",
}
WEIGHT_LABELS = {
    "free": "free (may be negative; the paper's Algorithm 1)",
    "simplex": "probability weights (≥ 0, sum 1) — closest in RKHS norm",
    "l1": "L1 ball Σ|w| ≤ 1 (Theorem 11)",
}


def _alg1_options() -> dict:
    basis = st.radio("Basis", list(BASIS_LABELS), format_func=BASIS_LABELS.get, key=S.BASIS,
                     persist_state="session", horizontal=False)
    weights = st.radio("Weights", list(WEIGHT_LABELS), format_func=WEIGHT_LABELS.get, key=S.WEIGHTS,
                       persist_state="session")
    return {"basis": basis, "weights": weights}


def gaussian_charge_for(ctx: RunContext, label: str) -> PrivacyCharge:
    """The charge of one Gaussian release at the context's ε, δ, calibration and sensitivity.

    Computed *before* running (the same calibration the library performs), so
    the budget can be checked first.
    """
    sens, cal, _ = C.calibration(ctx.ds.n, ctx.kernel, eps=ctx.epsilon, delta=ctx.delta, method=ctx.calibration,
                                 mode=ctx.sensitivity_mode)
    return gaussian_charge(label, cal, details={"neighbouring": "replace-one", "noise_source": ctx.noise_source})


def _alg1_cost(ds: S.Dataset, p: dict, kernel=None):
    return estimate_cost("algorithm1", n=ds.n, n_points=p["n_points"], dim=ds.dim, weights=p["weights"])


def _alg1_charge(ctx: RunContext, p: dict) -> PrivacyCharge:
    return gaussian_charge_for(ctx, f"Algorithm 1 (M = {p['n_points']})")


# --------------------------------------------------------------------------- uniform baseline
def _needs_public(ds: S.Dataset) -> str | None:
    if ds.n_public < 1:
        return "needs a publishable subset: choose a publishable fraction > 0 on the Data page."
    return None


def _baseline_controls(ds):
    return {"n_points": _n_points_control(ds.n_public, help="The first M rows of the publishable subset.")}


def _baseline_run(ctx: RunContext, p: dict) -> Release:
    ctx.progress(0.5, "weighting the public points uniformly")
    return uniform_baseline(ctx.ds.public[: p["n_points"]], kernel=ctx.kernel)


register(MechanismSpec(
    key="baseline",
    label="Uniform baseline · no privacy cost",
    summary="Publish the first M public rows with equal weights 1/M. Reads no private data, spends no budget.",
    explain=r"""The paper's baseline (Appendix B.3): $\hat\mu_{\rm baseline} = \frac1M\sum_{m=1}^M k(z_m,\cdot)$
with $z_m$ the publishable rows. It is a consistent estimator of the population KME (Proposition 6) but
uses only $M \ll N$ rows. Algorithm 1 re-weights the *same* points using the private data.""",
    spends_budget=False, requires=_needs_public, controls=_baseline_controls, run=_baseline_run,
    charge=lambda ctx, p: None, tags=("baseline",),
))


# --------------------------------------------------------------------------- Algorithm 1
_ALG1_MATH = r"""**Algorithm 1** (Balog et al. 2018): fix public points $z_1..z_M$ *before* looking at the data,
build an orthonormal basis $b_1..b_F$ of $\mathcal H_M=\mathrm{span}\{k(z_m,\cdot)\}$ (Gram–Schmidt), project the
private KME $\hat\mu_X=\frac1N\sum_n k(x_n,\cdot)$ onto it, $\alpha_f=\langle b_f,\hat\mu_X\rangle$, add Gaussian
noise $\beta=\alpha+\mathcal N(0,\sigma^2 I_F)$ and re-express $\tilde\mu=\sum_f\beta_f b_f=\sum_m w_m k(z_m,\cdot)$.
The projection is 1-Lipschitz, so the sensitivity of $\alpha$ is that of $\hat\mu_X$ (√2/N or the paper's 2/N)
and $\beta$ is $(\varepsilon,\delta)$-DP; the weights are post-processing.
Expected squared privacy error: $F\sigma^2$ — more points ⇒ more coordinates ⇒ more noise."""


def _alg1_public_controls(ds):
    m = _n_points_control(ds.n_public, help="The first M rows of the publishable subset become the z_m.")
    return {"n_points": m, **_alg1_options()}


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


register(MechanismSpec(
    key="alg1-public",
    label="Algorithm 1 · publishable points",
    summary="Re-weight the public rows so that they represent the private data's KME, with Gaussian noise.",
    explain=_ALG1_MATH + "\n\nHere the $z_m$ are the first $M$ rows of the publishable subset (the paper's "
    "Figure 1 scenario): they are already public, so releasing them costs nothing; only the weights carry "
    "information about the private rows.",
    spends_budget=True, requires=_needs_public, controls=_alg1_public_controls, run=_alg1_public_run,
    charge=_alg1_charge, evaluate_projection=True, tags=("algorithm1", "opendp"), cost=_alg1_cost,
))


def _alg1_q_controls(ds):
    m = _n_points_control(2000, help="Points drawn from q; more points cover more space but add noise.")
    ss = st.session_state
    ss.setdefault(S.Q_SCALE, float(ds.q_scale))
    q = st.number_input("Spread of q (standard deviation, declared)", min_value=1e-9, format="%.4g",
                        key=S.Q_SCALE, persist_state="session",
                        help=f"Suggested: {ds.q_scale:.4g} — {ds.q_note}. Must not be computed from private rows.")
    center = ds.q_center if ds.q_center is not None else np.zeros(ds.dim)
    st.caption("Centre of q: (" + ", ".join(f"{c:.3g}" for c in center[:6]) + (", …" if ds.dim > 6 else "")
               + f") — {ds.q_note}.")
    return {"n_points": m, "q_scale": float(q), "q_center": center, **_alg1_options()}


def _alg1_q_run(ctx: RunContext, p: dict) -> Release:
    ctx.progress(0.2, "drawing points from q, basis, projection and noise")
    return algorithm1(
        ctx.ds.X, None, kernel=ctx.kernel, epsilon=ctx.epsilon, delta=ctx.delta, n_points=p["n_points"],
        q_scale=p["q_scale"], q_center=p["q_center"], calibration=ctx.calibration,
        sensitivity=ctx.sensitivity_mode, basis=p["basis"], weights=p["weights"], random_state=ctx.random_state,
        noise=ctx.noise,
    )


register(MechanismSpec(
    key="alg1-q",
    label="Algorithm 1 · random points from q",
    summary="No public rows needed: draw the z_m from a declared distribution q, then re-weight them privately.",
    explain=_ALG1_MATH + "\n\nHere the $z_m$ are drawn from $q=\\mathcal N(c, s^2 I)$ with a *declared* centre and "
    "spread (the paper's Figure 2 scenario, $q=\\mathcal N(0, 500^2 I)$). Points far from the data get tiny "
    "weights; in higher dimensions few random points land near the data (Proposition 5).",
    spends_budget=True, requires=lambda ds: None, controls=_alg1_q_controls, run=_alg1_q_run,
    charge=_alg1_charge, evaluate_projection=True, tags=("algorithm1", "opendp"), cost=_alg1_cost,
))


# --------------------------------------------------------------------------- Algorithm 2 (when present)
def algorithm2_available() -> bool:
    return importlib.util.find_spec("dpkme.random_features") is not None


def _register_algorithm2() -> None:
    """Registered only when the library provides :mod:`dpkme.random_features`."""
    try:
        from . import alg2  # noqa: F401  (registers itself)
    except ImportError:  # the library module exists but its API is not the expected one yet
        return


if algorithm2_available():
    _register_algorithm2()

from . import more_mechanisms  # noqa: E402,F401  (exponential mechanism, cluster-wise release: when present)
