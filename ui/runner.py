"""Run a registered mechanism with the session's settings, check the budget, evaluate, record."""

from __future__ import annotations

import contextlib
import threading
import time

import numpy as np
import streamlit as st

from dpkme.cost import ALL_PAIRS_TERM, estimate_cost, observe_cost
from dpkme.privacy.accounting import PrivacyCharge

from . import compute as C
from . import gate as G
from . import noise as N
from . import state as S
from .gate import BudgetExceeded  # noqa: F401  (re-exported: pages catch it from here)
from .mechanisms import REGISTRY, MechanismSpec, RunContext


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
    (:func:`ui.gate.taint_reasons`, the gate's own check; ``ds`` defaults to the current dataset)."""
    return G.taint_reasons(noise_source=noise_source, ds=S.dataset() if ds is None else ds)


def run_spec(spec: MechanismSpec, ctx: RunContext, params: dict):
    """``(release, owner_metrics)``: a mechanism's ``run`` may return a Release or (Release, dict of private
    evaluation numbers for the owner's view, e.g. the exponential mechanism's diagnostics)."""
    out = spec.run(ctx, params)
    if isinstance(out, tuple):
        return out[0], dict(out[1] or {})
    return out, {}


def _checked_final(spec: MechanismSpec, charged: PrivacyCharge, release, ds: S.Dataset) -> PrivacyCharge:
    """The finished release's own charge must be the one charged before the run (same ε, δ, noise multiplier);
    its description (e.g. the candidates or the grid it used) is added to the ledger's record of that charge."""
    if spec.final_charge is None:
        return charged
    final = spec.final_charge(release)
    if (final.mechanism, final.epsilon, final.delta, final.noise_multiplier) != (
            charged.mechanism, charged.epsilon, charged.delta, charged.noise_multiplier):
        raise RuntimeError(f"the release reports a charge ({final.epsilon:g}, {S.fmt_delta(final.delta)}) other than the one "
                           f"charged before it ran ({charged.epsilon:g}, {S.fmt_delta(charged.delta)}); it is not shown.")
    described = {k: v for k, v in final.details.items() if k not in ("run_id", "page", "release_id")}
    return S.ledger_for(ds).annotate(charged.id, described)


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


def _gated_charges(spec: MechanismSpec, ctx: RunContext, params: dict, rid: int):
    """The ``charges`` of a release's gated run: the library's charge from public inputs, labelled with its id."""

    def charges(rows: G.PublicRows) -> list[PrivacyCharge]:
        if not spec.spends_budget:
            return []
        one = spec.charge(ctx, params)
        return [S.relabel_charge(one, f"#{rid} {one.label}", release_id=rid)]

    return charges


def _record(spec: MechanismSpec, params: dict, ctx: RunContext, run: G.GatedRun, rid: int, out) -> S.ReleaseRecord:
    """Stamp, check, evaluate and record the output ``out`` of a gated run (in the page's script thread)."""
    ds = ctx.ds
    release, owner = (out[0], dict(out[1] or {})) if isinstance(out, tuple) else (out, {})
    if run.reasons:
        from dpkme.privacy.leaks import mark_not_private

        mark_not_private(release, list(run.reasons), warn=False)
    charge = run.charges[0] if run.charges else None
    if charge is not None:
        charge = _checked_final(spec, charge, release, ds)
    notes = list(run.reasons) + ([run.note] if run.note else [])
    ctx.progress(0.9, "evaluating against the private data (for you only)")
    metrics = {**evaluate(ds, ctx.kernel, release, spec), **owner}
    rec = S.ReleaseRecord(
        id=rid, release=release, dataset_key=ds.key, data_key=ds.data_key, dataset_name=ds.name,
        mechanism_key=spec.key, mechanism_label=spec.label, private=run.private, charge=charge, metrics=metrics,
        warnings=notes, kind=spec.output,
        replay={"mechanism": spec.key, "params": params, "epsilon": ctx.epsilon, "delta": ctx.delta,
                "calibration": ctx.calibration, "sensitivity_mode": ctx.sensitivity_mode,
                "kernel": ctx.kernel.to_dict(), "seed": release.seed, "noise_source": ctx.noise_source},
    )
    S.add_release(rec)
    ctx.progress(1.0, "done")
    return rec


def perform(spec: MechanismSpec, params: dict, ctx: RunContext, *, page: str = "release") -> S.ReleaseRecord:
    """Run ``spec`` through the gate (public inputs, taint, budget, charge, then the private rows), evaluate and
    record the release; returns the record."""
    rid = S.new_id()
    t0 = time.perf_counter()
    run = G.run_private(page=page, ds=ctx.ds, charges=_gated_charges(spec, ctx, params, rid),
                        compute=lambda inputs: run_spec(spec, ctx, params),
                        noise_source=ctx.noise_source if spec.spends_budget else None,
                        uses_kernel=spec.spends_budget)
    if run.result is not None:
        observe_run(spec, ctx, params, time.perf_counter() - t0)
    return _record(spec, params, ctx, run, rid, run.result)


def observe_run(spec: MechanismSpec, ctx: RunContext, params: dict, seconds: float) -> None:
    """Tell the cost model how long the mechanism took (:func:`dpkme.cost.observe_cost`: its family's later
    predictions are corrected); its own prediction is :attr:`MechanismSpec.cost` at the same public sizes. A spec
    without a cost model, or a prediction that cannot be made, is skipped: the release never depends on it."""
    if spec.cost is None:
        return
    with contextlib.suppress(ValueError, TypeError, KeyError):
        observe_cost(spec.cost(ctx.ds, params, ctx.kernel), seconds)


# --------------------------------------------------------------------------- background runs
#: Session key of the Release page's background run (:class:`BackgroundRun`) until it is recorded or stopped.
TASK = "rel._task"
#: Session key of the last stopped background run's note (shown once by the Release page).
STOPPED = "rel._stopped"


class BackgroundRun:
    """A release running in a thread after the gate has charged it (``spec.background``).

    The thread runs the mechanism only (``run_spec``: it reads the private rows, never the session state); the
    page's script thread polls :attr:`done`, then :func:`finish_background` evaluates and records the release, or
    :func:`stop_background` abandons it. Its progress (:meth:`progress`) is what the mechanism reports; the page
    adds the elapsed time against the predicted one.
    """

    def __init__(self, spec: MechanismSpec, settings: dict, ctx: RunContext, rid: int, *, page: str,
                 predicted: float | None) -> None:
        self.spec, self.settings, self.ctx, self.rid, self.page = spec, settings, ctx, rid, page
        self.predicted = predicted
        self.dataset_key = ctx.ds.key
        self.gated: G.GatedRun | None = None
        self.fraction, self.message = 0.0, "starting"
        self.started = time.perf_counter()
        self.finished: float | None = None
        self.output = None
        self.error: BaseException | None = None
        self.stopped = False
        self._thread: threading.Thread | None = None

    def progress(self, fraction: float, message: str) -> None:
        """The mechanism's progress callback (called from the worker thread)."""
        self.fraction, self.message = min(max(float(fraction), 0.0), 1.0), str(message)

    def start(self, work) -> BackgroundRun:
        """Start ``work()`` (the mechanism) in a daemon thread; returns self."""
        def target() -> None:
            try:
                self.output = work()
            except BaseException as exc:
                self.error = exc
            finally:
                self.finished = time.perf_counter()

        self.started = time.perf_counter()
        self._thread = threading.Thread(target=target, name=f"dpkme-release-{self.rid}", daemon=True)
        self._thread.start()
        return self

    @property
    def done(self) -> bool:
        return self.finished is not None

    @property
    def elapsed(self) -> float:
        return (self.finished if self.finished is not None else time.perf_counter()) - self.started

    def join(self, timeout: float | None = None) -> bool:
        """Wait for the thread (tests); True once it has finished."""
        if self._thread is not None:
            self._thread.join(timeout)
        return self.done


def background_run() -> BackgroundRun | None:
    """The session's background release, if one is running or waiting to be recorded."""
    task = st.session_state.get(TASK)
    return task if isinstance(task, BackgroundRun) else None


def start_background(spec: MechanismSpec, params: dict, ctx: RunContext, *, page: str = "release",
                     predicted: float | None = None) -> BackgroundRun:
    """Charge ``spec`` through the gate (public inputs, taint, budget, charge) and start it in a thread.

    The charge is in the ledger before the thread reads any private row, and stays there whatever happens to the
    run (stopped, failed): the budget is spent when the private rows may have been read. One background run per
    session: a second one is refused (``ValueError``) while the first has not been recorded or stopped.
    """
    if background_run() is not None:
        raise ValueError("a release is already running in the background: wait for it or press Stop.")
    rid = S.new_id()
    task = BackgroundRun(spec, params, ctx, rid, page=page, predicted=predicted)
    ctx.progress = task.progress
    run = G.run_private(page=page, ds=ctx.ds, charges=_gated_charges(spec, ctx, params, rid),
                        compute=lambda inputs: task.start(lambda: run_spec(spec, ctx, params)),
                        noise_source=ctx.noise_source if spec.spends_budget else None,
                        uses_kernel=spec.spends_budget)
    task.gated = run
    st.session_state[TASK] = task
    return task


def finish_background(task: BackgroundRun) -> S.ReleaseRecord | None:
    """Record a finished background run (evaluate, check its final charge, add it to the releases); clears it.

    Raises the run's own error (a ``ValueError`` naming the bad value, for the page's ``st.error``); its charge
    stays spent. None if it has not finished yet.
    """
    if not task.done:
        return None
    st.session_state.pop(TASK, None)
    if task.error is not None:
        raise task.error
    assert task.gated is not None
    task.ctx.progress = lambda f, m: None
    observe_run(task.spec, task.ctx, task.settings, task.elapsed)
    return _record(task.spec, task.settings, task.ctx, task.gated, task.rid, task.output)


def stop_background(task: BackgroundRun) -> str:
    """Abandon a background run: nothing of it is released or recorded; its charge stays spent.

    The library call has no stopping point, so the thread runs on to its end in the background and its output is
    dropped unread. Returns the note the page shows.
    """
    task.stopped = True
    st.session_state.pop(TASK, None)
    note = (f"Release #{task.rid} stopped after {task.elapsed:.1f} s: nothing was released or recorded. Its charge "
            "stays in the ledger: the private rows may already have been read and measured.")
    st.session_state[STOPPED] = note
    return note


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


def repeat_draws(spec: MechanismSpec, params: dict, ctx: RunContext, k: int, *, page: str = "release") -> dict:
    """``k`` independent releases with the same settings (one ledger charge with count ``k``), through the gate.

    Replay mode: the next ``k`` unused seeds after the context's (replayable, not private); real releases:
    fresh OS-entropy noise for every draw. Returns ``{"dataset_key", "releases", "distances", "seeds",
    "charge", "notes"}``.
    """
    ds = ctx.ds
    if spec.output != "points":
        raise ValueError("repeat draws are offered for weighted-point releases only.")

    def charges(rows: G.PublicRows) -> list[PrivacyCharge]:
        if not spec.spends_budget:
            return []
        one = spec.charge(ctx, params)
        return [S.relabel_charge(one, f"{one.label} × {k} repeat draws", count=k, repeat_draws=k)]

    def compute(inputs: G.RunInputs) -> list:
        base = ctx.random_state
        out = []
        progress = ctx.progress
        try:
            for i in range(k):
                ctx.random_state = None if base is None else N.claim_seed(base + 1 + i, f"repeat draw on {ds.name}")
                ctx.progress = lambda f, m, i=i: progress((i + f) / k, f"draw {i + 1} of {k}: {m}")
                out.append(run_spec(spec, ctx, params)[0])
        finally:
            ctx.random_state, ctx.progress = base, progress
        return out

    run = G.run_private(page=page, ds=ds, charges=charges, compute=compute,
                        noise_source=ctx.noise_source if spec.spends_budget else None,
                        uses_kernel=spec.spends_budget)
    out = run.result
    dists, seeds = [], []
    for r in out:
        if run.reasons:
            from dpkme.privacy.leaks import mark_not_private

            mark_not_private(r, list(run.reasons), warn=False)
        seeds.append(r.seed)
        dists.append(C.distance(ds, ctx.kernel, r.points, r.weights))
        st.session_state.setdefault(KXX_DONE, set()).add((ds.key, C.kernel_key(ctx.kernel)))
    if not run.private:     # the gate counted one not-private run; a batch counts its k draws
        counts = st.session_state.setdefault(S.NONPRIVATE, {})
        counts[ds.data_key] = counts.get(ds.data_key, 0) + k - 1
    charge = run.charges[0] if run.charges else None
    notes = list(run.reasons) + ([run.note] if run.note else [])
    result = {"dataset_key": ds.key, "mechanism": spec.label, "releases": out, "distances": dists, "seeds": seeds,
              "charge": charge, "notes": notes, "kernel": ctx.kernel}
    st.session_state[S.REPEAT_DRAWS] = result
    return result
