"""Run a registered mechanism with the session's settings, check the budget, evaluate, record."""

from __future__ import annotations

import time

import numpy as np
import streamlit as st

from dpkme.cost import ALL_PAIRS_TERM, estimate_cost
from dpkme.privacy.accounting import PrivacyCharge
from dpkme.privacy.leaks import mark_not_private

from . import compute as C
from . import noise as N
from . import state as S
from .mechanisms import REGISTRY, MechanismSpec, RunContext


class BudgetExceeded(ValueError):
    """The release would take the ledger beyond the user's total budget."""


def make_context(ds: S.Dataset, *, noise_source: str = N.REAL, seed: int | None = None, progress=None,
                 kernel=None, eps: float | None = None) -> RunContext:
    """The run's settings. Real releases (the default) get no seed; in replay mode the seed is claimed
    for this session (:func:`~ui.noise.claim_seed`), so no two releases share a noise stream."""
    ss = st.session_state
    kernel = C.current_kernel() if kernel is None else kernel
    eps = S.epsilon() if eps is None else eps
    if noise_source not in N.LABELS:
        raise ValueError(f"unknown noise source {noise_source!r}; choose one of {list(N.LABELS)}.")
    random_state = None
    if noise_source == N.REPLAY:
        random_state = N.claim_seed(0 if seed is None else int(seed), f"release on {ds.name}")
    return RunContext(
        ds=ds, kernel=kernel, epsilon=eps, delta=S.delta(), calibration=ss[S.CALIBRATION],
        sensitivity_mode=ss[S.SENS_MODE], random_state=random_state,
        noise_source=noise_source, progress=progress or (lambda f, m: None),
    )


def private_problems(noise_source: str | None = None, ds: S.Dataset | None = None) -> list[str]:
    """Reasons why a release with the current settings would NOT be differentially private
    (:func:`ui.noise.privacy_problems`: the app's one guard; ``ds`` defaults to the current dataset)."""
    return N.privacy_problems(noise_source=noise_source, dataset=ds)


def check_budget(ds: S.Dataset, charge: PrivacyCharge | None, *, allow_over: bool,
                 parts=(S.PART_PRIVATE,)) -> str | None:
    """Warning text if ``charge`` would exceed the budget (raises BudgetExceeded unless allowed).

    A charge that declares no parts is checked as reading ``parts`` (default: the private rows).
    """
    if charge is None:
        return None
    if not charge.details.get("parts"):
        charge = S.relabel_charge(charge, parts=parts)
    led = S.ledger_for(ds)
    if not led.exceeds_budget(charge):
        return None
    eps_b, delta_b = S.budget()
    msg = (f"this release (ε = {charge.epsilon:g}, δ = {charge.delta:.0e}"
           + (f", × {charge.count}" if charge.count > 1 else "")
           + f") would take the total privacy loss on this data beyond your budget of ε = {eps_b:g}, "
           f"δ = {delta_b:.0e} under every accountant (basic, RDP, PLD). Lower ε, raise the budget on the "
           "Budget ledger page, or tick 'allow exceeding the budget'.")
    if not allow_over:
        raise BudgetExceeded(msg)
    return "Budget exceeded: " + msg


def run_spec(spec: MechanismSpec, ctx: RunContext, params: dict):
    """``(release, owner_metrics)``: a mechanism's ``run`` may return a Release or (Release, dict of private
    evaluation numbers for the owner's view, e.g. the exponential mechanism's diagnostics)."""
    out = spec.run(ctx, params)
    if isinstance(out, tuple):
        return out[0], dict(out[1] or {})
    return out, {}


def recorded_charge(spec: MechanismSpec, pre: PrivacyCharge | None, release, ctx: RunContext, *,
                    label: str | None = None, count: int | None = None) -> PrivacyCharge | None:
    """The charge put in the ledger, always the library's: its charge of the finished release when the
    mechanism has one (``final_charge``: what the release did, e.g. its candidates or grid), else the charge the
    library computed from the same parameters before the run (``dpkme.release.*_charge``, the one checked
    against the budget). The app derives no sensitivity or calibration of its own and compares nothing. Both
    carry the noise source and the part of the data read (the private rows)."""
    if pre is None:
        return None
    charge = spec.final_charge(release) if spec.final_charge is not None else pre
    return S.relabel_charge(charge, label, count=count,
                            parts=(S.PART_PRIVATE,), noise_source=ctx.noise_source)


#: Session key: the (dataset key, kernel key) pairs whose exact mean of K_XX is already computed (and cached).
KXX_DONE = "_kxx_done"


def evaluation_cost(ds: S.Dataset, kernel, n_points: int):
    r"""Predicted cost of the owner's evaluation of a weighted-points release (exact RKHS distances).

    The exact :math:`\|\hat\mu_X\|^2` (all N²/2 pairs) is paid once per dataset and kernel: it is dropped
    from the estimate once computed, and never paid beyond ``EXACT_MAX_ROWS`` rows (estimated from random pairs).
    """
    est = estimate_cost("rkhs-distance", n=ds.n, n_points=max(int(n_points), 1), dim=ds.dim)
    if ((ds.key, C.kernel_key(kernel)) in st.session_state.get(KXX_DONE, set())
            or C.evaluation_method(ds, kernel) == "estimate"):
        est = est.without(ALL_PAIRS_TERM)
    return est


def release_cost(spec: MechanismSpec, ds: S.Dataset, params: dict, kernel, *, repeats: int = 1):
    """Predicted cost of pressing Release (``repeats`` draws): the mechanism plus the owner's evaluation."""
    own = spec.cost(ds, params, kernel) if spec.cost is not None else None
    if spec.output != "points":
        return own.repeated(repeats) if own is not None else None
    ev = evaluation_cost(ds, kernel, params.get("n_points", 1))
    if repeats > 1:  # every draw is evaluated; the all-pairs term only once
        ev = ev + evaluation_cost(ds, kernel, params.get("n_points", 1)).without(ALL_PAIRS_TERM).repeated(repeats - 1)
    return ev if own is None else own.repeated(repeats) + ev


def evaluate(ds: S.Dataset, kernel, release, spec: MechanismSpec) -> dict:
    """RKHS distances to the private KME (reads the private rows: shown to the owner, never released)."""
    t = time.perf_counter()
    if spec.output == "function":
        return evaluate_function(ds, release)
    Z, w = release.points, release.weights
    rep = C.distance_report(ds, kernel, Z, w)        # exact, or an unbiased estimate with a CI for large N
    out = {"distance": rep.distance, "evaluation": rep.to_dict()}
    if spec.evaluate_projection:
        out["projection"] = C.projection_distance(ds, kernel, Z)
    out["baseline"] = C.baseline_distance(ds, kernel, release.n_points)
    out["kme_norm"] = float(np.sqrt(max(C.kxx_value(ds, kernel), 0.0)))
    st.session_state.setdefault(KXX_DONE, set()).add((ds.key, C.kernel_key(kernel)))
    out["eval_seconds"] = time.perf_counter() - t
    return out


def evaluate_function(ds: S.Dataset, release) -> dict:
    """L2 errors of a function release on its grid, and of the latest weighted-points release on the same grid."""
    from dpkme.release.gp import evaluate_on_grid, l2_error_on_grid

    t = time.perf_counter()
    out = {"l2": release.l2_error(), "expected_l2": release.expected_l2_error(),
           "truth_l2": l2_error_on_grid(release.true_values, np.zeros_like(release.true_values), release.axes)
           if release.axes is not None else float("nan")}
    pts = S.releases_for(ds, kind="points")
    if pts and release.axes is not None:
        ref = pts[-1]
        vals = evaluate_on_grid(ref.release, release.axes, normalisation=release.normalisation)
        out["points_l2"] = l2_error_on_grid(vals, release.true_values, release.axes)
        out["points_title"] = ref.title
    out["eval_seconds"] = time.perf_counter() - t
    return out


def perform(spec: MechanismSpec, params: dict, ctx: RunContext, *, allow_over: bool = False) -> S.ReleaseRecord:
    """Run ``spec`` (budget first), evaluate and record the release; returns the record."""
    ds = ctx.ds
    problems = private_problems(ctx.noise_source, ctx.ds) if spec.spends_budget else []
    private = not problems
    charge = spec.charge(ctx, params) if (spec.spends_budget and private) else None
    notes = list(problems)
    over = check_budget(ds, charge, allow_over=allow_over)
    if over:
        notes.append(over)
    release, owner = run_spec(spec, ctx, params)
    if problems:  # the release's own metadata says so too (exports, JSON)
        mark_not_private(release, problems, warn=False)
    ctx.progress(0.9, "evaluating against the private data (for you only)")
    metrics = {**evaluate(ds, ctx.kernel, release, spec), **owner}
    rec = S.ReleaseRecord(
        id=S.new_id(), release=release, dataset_key=ds.key, data_key=ds.data_key, dataset_name=ds.name,
        mechanism_key=spec.key, mechanism_label=spec.label, private=private, charge=charge, metrics=metrics,
        warnings=notes, kind=spec.output,
        replay={"mechanism": spec.key, "params": params, "epsilon": ctx.epsilon, "delta": ctx.delta,
                "calibration": ctx.calibration, "sensitivity_mode": ctx.sensitivity_mode,
                "kernel": ctx.kernel.to_dict(), "seed": release.seed, "noise_source": ctx.noise_source},
    )
    if charge is not None:
        final = recorded_charge(spec, charge, release, ctx)
        rec.charge = S.relabel_charge(final, f"#{rec.id} {final.label}", release_id=rec.id)   # S.ledger_counts
    S.add_release(rec)
    ctx.progress(1.0, "done")
    return rec


def replay(rec: S.ReleaseRecord, ds: S.Dataset):
    """Re-run a seeded release with its recorded settings; returns the new Release (not recorded, and as
    little private as the original: a replay of a replayable demo)."""
    from dpkme.kernels import kernel_from_dict

    r = rec.replay
    spec = REGISTRY[r["mechanism"]]
    ctx = RunContext(ds=ds, kernel=kernel_from_dict(r["kernel"]), epsilon=r["epsilon"], delta=r["delta"],
                     calibration=r["calibration"], sensitivity_mode=r["sensitivity_mode"],
                     random_state=r["seed"], noise_source="seeded")
    return run_spec(spec, ctx, r["params"])[0]


def repeat_draws(spec: MechanismSpec, params: dict, ctx: RunContext, k: int, *, allow_over: bool = False) -> dict:
    """``k`` independent releases with the same settings (one ledger charge with count ``k``).

    Replay mode: the next ``k`` unused seeds after the context's (replayable, not private); real releases:
    fresh OS-entropy noise for every draw. Returns ``{"dataset_key", "releases", "distances", "seeds",
    "charge", "notes"}``.
    """
    ds = ctx.ds
    if spec.output != "points":
        raise ValueError("repeat draws are offered for weighted-point releases only.")
    problems = private_problems(ctx.noise_source, ctx.ds) if spec.spends_budget else []
    charge = None
    if spec.spends_budget and not problems:
        one = spec.charge(ctx, params)
        charge = PrivacyCharge(label=f"{one.label} × {k} repeat draws", mechanism=one.mechanism,
                               epsilon=one.epsilon, delta=one.delta, noise_multiplier=one.noise_multiplier,
                               count=k, details=dict(one.details))
    notes = list(problems)
    over = check_budget(ds, charge, allow_over=allow_over)
    if over:
        notes.append(over)
    base = ctx.random_state
    out, dists, seeds = [], [], []
    progress = ctx.progress
    for i in range(k):
        ctx.random_state = None if base is None else N.claim_seed(base + 1 + i, f"repeat draw on {ds.name}")
        ctx.progress = lambda f, m, i=i: progress((i + f) / k, f"draw {i + 1} of {k}: {m}")
        r, _ = run_spec(spec, ctx, params)
        if problems:
            mark_not_private(r, problems, warn=False)
        out.append(r)
        seeds.append(r.seed)
        dists.append(C.distance(ds, ctx.kernel, r.points, r.weights))
        st.session_state.setdefault(KXX_DONE, set()).add((ds.key, C.kernel_key(ctx.kernel)))
    ctx.random_state, ctx.progress = base, progress
    if charge is not None:
        charge = S.relabel_charge(recorded_charge(spec, one, out[0], ctx, label=charge.label, count=k),
                                  repeat_draws=k)                  # S.ledger_counts
        S.ledger_for(ds).add(charge)
    elif problems:
        counts = st.session_state.setdefault(S.NONPRIVATE, {})
        counts[ds.data_key] = counts.get(ds.data_key, 0) + k
    result = {"dataset_key": ds.key, "mechanism": spec.label, "releases": out, "distances": dists, "seeds": seeds,
              "charge": charge, "notes": notes, "kernel": ctx.kernel}
    st.session_state[S.REPEAT_DRAWS] = result
    return result
