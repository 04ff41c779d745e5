"""dpkme.cost: the size guard (predicted seconds and bytes of every mechanism, confirmation thresholds)."""

from __future__ import annotations

import math

import pytest

from dpkme.cost import (
    ALL_PAIRS_TERM,
    CONFIRM_BYTES,
    CONFIRM_SECONDS,
    CORRECTION_BOUNDS,
    COST_MECHANISMS,
    DEFAULT_COST_MODEL,
    PIN_ENV,
    CostEstimate,
    CostModel,
    calibrate_cost_model,
    cost_correction,
    current_cost_model,
    estimate_cost,
    machine_contention,
    needs_confirmation,
    observe_cost,
    quick_cost_model,
    reset_cost_model,
)


@pytest.fixture(autouse=True)
def reference_process_model(monkeypatch):
    """Every test starts from the reference machine's model as the process-wide one (no calibration, no
    corrections), so that sizes, not this machine's load, decide the estimates; forgotten afterwards. The suite's
    pin (tests/conftest.py) is lifted here: these tests exercise the process-wide model itself."""
    monkeypatch.delenv(PIN_ENV, raising=False)
    reset_cost_model()
    current_cost_model(calibrate=lambda: DEFAULT_COST_MODEL)
    yield
    reset_cost_model()


def test_estimate_cost_shapes_and_unpacking():
    est = estimate_cost("algorithm1", n=10_000, n_points=200, dim=3)
    seconds, nbytes = est
    assert isinstance(est, CostEstimate) and seconds == est.seconds and nbytes == est.nbytes
    assert 0 < seconds < 1 and 0 < nbytes < 1e8 and not est.needs_confirmation
    assert set(est.breakdown) >= {"basis (Gram-Schmidt)", "kernel means over the data"}
    assert "algorithm1: about" in est.message()
    assert est.to_dict()["needs_confirmation"] is False


@pytest.mark.parametrize("mechanism, small, large", [
    ("algorithm1", dict(n=1000, n_points=50), dict(n=10_000_000, n_points=5000)),
    ("algorithm2", dict(n=1000, n_points=10, n_features=200, preset="interactive"),
     dict(n=1_000_000, n_points=5000, n_features=100_000)),
    ("exponential", dict(n=100, n_candidates=10, m=2), dict(n=100, n_candidates=1000, m=4)),
    ("gp", dict(n=100, grid_shape=(20, 20)), dict(n=100, n_query=20000)),
    ("kmeans", dict(n=1000, k=2, n_features=50, n_iter=2), dict(n=5_000_000, k=50, n_features=10000, n_iter=50)),
    ("clusterwise", dict(n=1000, k=2, n_points=10, n_features=50, n_iter=2, preset="interactive"),
     dict(n=1_000_000, k=20, n_points=2000, n_features=10000, n_iter=20)),
    ("two-sample", dict(n=1000, n_features=3), dict(n=10_000_000, n_features=50, n_null=100_000)),
    ("audit", dict(audit="gaussian", runs=100), dict(audit="kmeans", runs=100_000)),
    ("private-lengthscale", dict(n=100), dict(n=20000, pairs="all", dim=30)),
    ("rkhs-distance", dict(n=1000), dict(n=1_000_000, n_points=1000)),
    ("membership-attack", dict(runs=100, n_epsilons=2), dict(runs=100_000, n_epsilons=20)),
])
def test_estimates_grow_and_large_runs_need_confirmation(mechanism, small, large):
    a, b = estimate_cost(mechanism, **small), estimate_cost(mechanism, **large)
    assert 0 < a.seconds < b.seconds and 0 < a.nbytes <= b.nbytes
    assert not a.needs_confirmation and b.needs_confirmation
    assert "confirm to run" in b.message()


def test_combining_repeating_and_dropping_terms():
    a = estimate_cost("algorithm1", n=10_000, n_points=200, dim=2)
    b = estimate_cost("rkhs-distance", n=100_000, n_points=200, dim=2)
    both = a + b
    assert both.seconds == pytest.approx(a.seconds + b.seconds, rel=1e-12)
    assert both.nbytes == max(a.nbytes, b.nbytes)
    assert sum(both.breakdown.values()) == pytest.approx(both.seconds, rel=1e-12)
    assert f"rkhs-distance: {ALL_PAIRS_TERM}" in both.breakdown and both.mechanism == "algorithm1 + rkhs-distance"
    three = a.repeated(3)
    assert three.seconds == pytest.approx(3 * a.seconds, rel=1e-12) and three.nbytes == a.nbytes
    assert three.params["times"] == 3
    cached = b.without(ALL_PAIRS_TERM)
    assert ALL_PAIRS_TERM not in cached.breakdown
    assert cached.seconds == pytest.approx(b.seconds - b.breakdown[ALL_PAIRS_TERM], rel=1e-12)
    assert b.without("no such term").seconds == b.seconds
    # the all-pairs term is what makes a large evaluation need confirmation
    big = estimate_cost("rkhs-distance", n=1_000_000, n_points=200, dim=2)
    assert big.needs_confirmation and not big.without(ALL_PAIRS_TERM).needs_confirmation
    with pytest.raises(ValueError, match="times"):
        a.repeated(0)
    with pytest.raises(TypeError):
        a + 1.0


def test_the_dpgm_estimate_grows_with_the_steps_and_the_models():
    small = estimate_cost("dpgm", steps=10, models=1, capacity=64, n_params=1000, n=1000, kmeans=False)
    large = estimate_cost("dpgm", steps=100_000, models=10, capacity=512, n_params=100_000, n=100_000)
    assert 0 < small.seconds < large.seconds and small.nbytes < large.nbytes and large.needs_confirmation
    assert set(small.breakdown) == {"compile", "SGD steps", "sampling and evaluation"}


def test_every_mechanism_has_a_model():
    assert set(COST_MECHANISMS) == {"algorithm1", "algorithm2", "exponential", "gp", "kmeans", "clusterwise",
                                    "two-sample", "audit", "private-lengthscale", "rkhs-distance", "adaptive",
                                    "membership-attack", "dpgm"}


# every family the app predicts, at a small size: each is estimated through the process-wide model and corrected
FAMILY_SIZES = {
    "algorithm1": dict(n=1000, n_points=50),
    "algorithm2": dict(n=1000, n_points=10, n_features=200, preset="interactive"),
    "exponential": dict(n=100, n_candidates=10, m=2),
    "gp": dict(n=100, grid_shape=(20, 20)),
    "kmeans": dict(n=1000, k=2, n_features=50, n_iter=2),
    "clusterwise": dict(n=1000, k=2, n_points=10, n_features=50, n_iter=2, preset="interactive"),
    "two-sample": dict(n=1000, n_features=3),
    "audit": dict(audit="gaussian", runs=100),
    "private-lengthscale": dict(n=100),
    "rkhs-distance": dict(n=1000),
    "membership-attack": dict(runs=100),
    "dpgm": dict(steps=10, models=2, capacity=64, n_params=1000, n=1000),
}


def test_every_family_the_app_runs_is_modelled_and_corrected_by_its_observations():
    assert set(FAMILY_SIZES) | {"adaptive"} == set(COST_MECHANISMS)
    for family, sizes in FAMILY_SIZES.items():
        est = estimate_cost(family, **sizes)
        assert est.families == {family: 1.0} and est.seconds > 0, family
        assert observe_cost(est, 2.0 * est.seconds) == pytest.approx(2.0)
        again = estimate_cost(family, **sizes)
        assert again.seconds == pytest.approx(2.0 * est.seconds, rel=1e-9), family
        assert again.families == {family: pytest.approx(2.0)}
        # an explicit model is the caller's: no process-wide correction
        assert estimate_cost(family, model=DEFAULT_COST_MODEL, **sizes).seconds == pytest.approx(est.seconds)


def test_the_feedback_arithmetic_uses_the_correction_the_estimate_was_made_with_and_is_bounded():
    est = estimate_cost("audit", audit="gaussian", runs=1000)
    observe_cost(est, 3.0 * est.seconds)
    assert cost_correction("audit") == pytest.approx(3.0)
    corrected = estimate_cost("audit", audit="gaussian", runs=1000)
    observe_cost(corrected, corrected.seconds / 2)          # measured half the corrected prediction: c = 3 / 2
    assert cost_correction("audit") == pytest.approx(1.5)
    observe_cost(est, 3.0 * est.seconds)                     # an older estimate (c = 1) sets c from its own ratio
    assert cost_correction("audit") == pytest.approx(3.0)
    lo, hi = CORRECTION_BOUNDS
    observe_cost(est, 1e6 * est.seconds)
    assert cost_correction("audit") == hi
    observe_cost(est, 1e-6 * est.seconds)
    assert cost_correction("audit") == lo
    assert cost_correction("gp") == 1.0                      # per family: the others are untouched


def test_a_sum_corrects_every_family_in_it_and_repeats_keep_the_families():
    a = estimate_cost("rkhs-distance", n=2000, n_points=100)
    b = estimate_cost("algorithm1", n=2000, n_points=100)
    both = (a + b).repeated(4)
    assert both.families == {"rkhs-distance": 1.0, "algorithm1": 1.0}
    assert observe_cost(both, both.seconds * 1.5) == pytest.approx(1.5)
    assert cost_correction("rkhs-distance") == pytest.approx(1.5) and cost_correction("algorithm1") == pytest.approx(1.5)
    again = (estimate_cost("rkhs-distance", n=2000, n_points=100)
             + estimate_cost("algorithm1", n=2000, n_points=100)).repeated(4)
    assert again.seconds == pytest.approx(1.5 * both.seconds, rel=1e-9)


def test_observe_cost_validates_and_sends_the_adaptive_estimate_to_its_own_scales(monkeypatch):
    with pytest.raises(ValueError, match="estimate"):
        observe_cost((1.0, 2.0), 1.0)
    est = estimate_cost("audit", audit="gaussian", runs=100)
    with pytest.raises(ValueError, match="seconds"):
        observe_cost(est, -1.0)
    seen = []
    monkeypatch.setattr("dpkme.cost.observe_adaptive_run", lambda e, s: seen.append((e, s)))
    ad = estimate_cost("adaptive", n=500, widths1=[3, 4], widths2=[5, 6], model=DEFAULT_COST_MODEL)
    observe_cost(ad, 2.0)
    assert seen == [(ad, 2.0)] and cost_correction("adaptive") == 1.0


def test_the_process_model_is_cached_and_measured_again_after_max_age():
    reset_cost_model()
    now, made = [100.0], []

    def fake_calibration():
        made.append(now[0])
        return CostModel(kernel_sum_rate=1e8 * len(made), measured=f"fake {len(made)}")

    def model():
        return current_cost_model(max_age=60.0, clock=lambda: now[0], calibrate=fake_calibration)

    first = model()
    assert made == [100.0] and first.measured == "fake 1"
    now[0] = 159.0
    assert model() is first and made == [100.0]             # younger than max_age: the cached one
    now[0] = 161.0
    second = model()
    assert made == [100.0, 161.0] and second.measured == "fake 2"
    now[0] = 200.0
    assert model() is second
    with pytest.raises(ValueError, match="max_age"):
        current_cost_model(max_age=0.0)
    with pytest.raises(ValueError, match="CostModel"):
        reset_cost_model()
        current_cost_model(calibrate=lambda: "fast")


def test_estimate_cost_uses_the_process_model_and_its_contention():
    reset_cost_model()
    loaded = CostModel(contention=4.0)
    current_cost_model(calibrate=lambda: loaded)
    quiet = estimate_cost("algorithm1", n=10_000, n_points=200, model=DEFAULT_COST_MODEL)
    assert estimate_cost("algorithm1", n=10_000, n_points=200).seconds == pytest.approx(4.0 * quiet.seconds)
    assert machine_contention(0.001) >= 1.0
    quick = quick_cost_model(0.001)
    assert quick.contention >= 1.0 and quick.kernel_sum_rate > 0 and "scaled to this machine" in quick.measured
    # one speed factor: every rate divided, every overhead multiplied by the same number
    r = DEFAULT_COST_MODEL.kernel_sum_rate / quick.kernel_sum_rate
    assert DEFAULT_COST_MODEL.flop_rate / quick.flop_rate == pytest.approx(r)
    assert quick.python_loop / DEFAULT_COST_MODEL.python_loop == pytest.approx(r)


def test_the_pin_gives_the_reference_model_without_corrections(monkeypatch):
    est = estimate_cost("gp", n=100, grid_shape=(20, 20))
    observe_cost(est, 5.0 * est.seconds)
    monkeypatch.setenv(PIN_ENV, "reference")
    reset_cost_model()
    assert current_cost_model() is DEFAULT_COST_MODEL and cost_correction("gp") == 1.0
    assert estimate_cost("gp", n=100, grid_shape=(20, 20)).seconds == pytest.approx(est.seconds)


def test_the_adaptive_estimate_follows_its_terms_and_the_calibrated_scales():
    """The adaptive release's model (issue 25): the compilation term only for a structure not yet compiled, the fit
    linear in the Adam steps and the relaxed rows, the private pass linear in N, every term scaled by the model's
    calibrated factors; the widths come from the release's public landmark rule."""
    from dpkme.cost import DEFAULT_COST_MODEL, adaptive_cost

    kw = {"n": 20_000, "widths1": [3, 32, 32], "widths2": [3, 16, 16], "rounds": 12}
    cold = estimate_cost("adaptive", **kw)
    warm = estimate_cost("adaptive", compiled=True, **kw)
    compile_term = "XLA compilation (first run of this structure)"
    assert compile_term in cold.breakdown and compile_term not in warm.breakdown
    assert cold.seconds == pytest.approx(warm.seconds + cold.breakdown[compile_term])
    fit = "fit (compiled Adam steps)"
    double_rows = estimate_cost("adaptive", compiled=True, synthetic_rows=2000, **kw)
    assert double_rows.breakdown[fit] == pytest.approx(2 * warm.breakdown[fit])
    steps = (12 - 3 + 1) * 30 + 300
    more = estimate_cost("adaptive", compiled=True, round_steps=60, **kw)
    assert more.breakdown[fit] == pytest.approx(warm.breakdown[fit] * (steps + 10 * 30) / steps)
    pas = "private pass (features of every candidate)"
    assert estimate_cost("adaptive", compiled=True, **{**kw, "n": 40_000}).breakdown[pas] == pytest.approx(
        2 * warm.breakdown[pas])
    slow = CostModel(fit_scale=3.0, compile_scale=2.0)
    scaled = estimate_cost("adaptive", model=slow, **kw)
    assert scaled.breakdown[fit] == pytest.approx(3 * cold.breakdown[fit])
    assert scaled.breakdown[compile_term] == pytest.approx(2 * cold.breakdown[compile_term])
    from dpkme.datasets import load_schema

    penguins = load_schema("penguins")
    small = adaptive_cost(penguins, n=344, epsilon=1.0, delta=1e-6, model=DEFAULT_COST_MODEL)
    large = adaptive_cost(penguins, n=30_000, epsilon=1.0, delta=1e-6, model=DEFAULT_COST_MODEL)
    assert large.breakdown[fit] > small.breakdown[fit]          # more rows: finer landmarks, a larger fit
    assert large.params["rounds"] == 16 and large.params["synthetic_rows"] == 1000


@pytest.mark.parametrize("params, match", [
    ({"widths1": [3], "widths2": [3]}, "needs n"),
    ({"n": 100, "widths2": [3]}, "widths1"),
    ({"n": 100, "widths1": [3, 4], "widths2": [3]}, "one entry per column"),
    ({"n": 100, "widths1": [3], "widths2": [0]}, "widths2"),
])
def test_the_adaptive_estimate_names_a_bad_size(params, match):
    with pytest.raises(ValueError, match=match):
        estimate_cost("adaptive", **params)


def test_calibrate_adaptive_cost_measures_positive_scales_and_caches_the_compilation():
    from dpkme import cost

    first = cost.calibrate_adaptive_cost()
    assert first.fit_scale > 0 and first.compile_scale > 0 and "calibrated" in first.measured
    compile_seconds = cost._ADAPTIVE_CALIBRATION["compile"]
    again = cost.calibrate_adaptive_cost(max_age=1e-9)           # the run part measured again, not the compilation
    assert cost._ADAPTIVE_CALIBRATION["compile"] == compile_seconds and again.compile_scale == first.compile_scale
    with pytest.raises(ValueError, match="max_age"):
        cost.calibrate_adaptive_cost(max_age=0)


@pytest.mark.parametrize("mechanism, params, match", [
    ("magic", {}, "mechanism"),
    ("algorithm1", {"n_points": 10}, "needs n"),
    ("algorithm1", {"n": -5, "n_points": 10}, "n must"),
    ("algorithm1", {"n": 10, "n_points": 10, "weights": "x"}, "weights"),
    ("algorithm2", {"n": 10, "n_points": 10, "solver": "x"}, "solver"),
    ("audit", {"audit": "x", "runs": 10}, "audit"),
    ("gp", {"n": 10, "grid_shape": (10, 0)}, "grid_shape"),
])
def test_estimate_cost_validation(mechanism, params, match):
    with pytest.raises(ValueError, match=match):
        estimate_cost(mechanism, **params)


def test_thresholds_and_custom_model():
    assert CONFIRM_SECONDS == 10.0 and CONFIRM_BYTES == 1 << 30
    est = estimate_cost("algorithm1", n=100_000, n_points=1000, dim=2)
    assert needs_confirmation(est, seconds=est.seconds / 2)
    assert not needs_confirmation(est, seconds=est.seconds * 2, nbytes=est.nbytes * 2)
    slow = CostModel(kernel_sum_rate=1e3, kernel_matrix_rate=1e3)
    assert estimate_cost("algorithm1", n=100_000, n_points=1000, model=slow).needs_confirmation
    with pytest.raises(ValueError):
        estimate_cost("algorithm1", n=10, n_points=2, model="fast")
    with pytest.raises(ValueError):
        needs_confirmation((1.0, 2.0))


def test_calibration_gives_a_usable_cost_model():
    """calibrate_cost_model measures every throughput and its model prices a release.

    How well the process-wide model predicts the app's computations is a performance
    property of the machine: benchmarks/bench_cost_model.py measures it (target: within
    2x; benchmarks/results/cost_model.md). A wall-clock assert here would fail on a busy
    machine.
    """
    model = calibrate_cost_model(0.05)
    assert "calibrated" in model.measured
    for rate in ("kernel_sum_rate", "kernel_matrix_rate", "feature_rate", "flop_rate", "call_overhead", "python_loop",
                 "contention"):
        value = getattr(model, rate)
        assert math.isfinite(value) and value > 0, (rate, value)
    small = estimate_cost("algorithm1", n=40_000, n_points=600, dim=2, model=model)
    large = estimate_cost("algorithm1", n=400_000, n_points=600, dim=2, model=model)
    assert math.isfinite(small.seconds) and 0 < small.seconds < large.seconds


def test_the_pool_refit_and_the_marginal_block_are_in_the_estimate():
    """A table release's pool re-fit holds K x (J + H) float32 features: the estimate grows with the block's cells."""
    from dpkme.release.tabular import table_solver_options

    opts = table_solver_options("pursuit-joint")
    kw = dict(n=20000, n_points=2000, n_features=2000, dim=12, solver="pursuit-joint", preset="accurate")
    plain = estimate_cost("algorithm2", **kw)
    refit = estimate_cost("algorithm2", solver_options=opts, **kw)
    block = estimate_cost("algorithm2", solver_options=opts, marginal_cells=12000, **kw)
    K = opts["refit"]["pool_size"]
    assert refit.seconds > plain.seconds and block.seconds > refit.seconds
    assert block.nbytes >= 4 * K * (2000 + 12000) > refit.nbytes


def test_a_measured_adaptive_release_sets_the_next_predictions_scales():
    """observe_adaptive_run: a warm run sets the fit's scale to the one predicted with x measured / predicted (the
    next estimate of the same sizes then predicts what was measured); a cold run sets the compilation's scale."""
    from dpkme import cost

    kw = {"n": 3000, "widths1": [3, 16, 16], "widths2": [3, 8, 8], "rounds": 12}
    saved = dict(cost._ADAPTIVE_CALIBRATION)
    try:
        cost._ADAPTIVE_CALIBRATION.update(compile=0.6, run=0.05, at=float("inf"), when="now")   # no new benchmark
        model = cost.calibrate_adaptive_cost()
        warm = estimate_cost("adaptive", model=model, compiled=True, **kw)
        warm.params.update(fit_scale=model.fit_scale, compile_scale=model.compile_scale)
        cost.observe_adaptive_run(warm, 3 * warm.seconds)
        again = cost.calibrate_adaptive_cost()
        assert again.fit_scale == pytest.approx(3 * model.fit_scale)
        assert estimate_cost("adaptive", model=again, compiled=True, **kw).seconds == pytest.approx(3 * warm.seconds)
        cold = estimate_cost("adaptive", model=again, **kw)
        cold.params.update(fit_scale=again.fit_scale, compile_scale=again.compile_scale)
        term = "XLA compilation (first run of this structure)"
        cost.observe_adaptive_run(cold, cold.seconds + cold.breakdown[term])        # compilation took twice as long
        assert cost.calibrate_adaptive_cost().compile_scale == pytest.approx(2 * again.compile_scale)
        with pytest.raises(ValueError, match="seconds"):
            cost.observe_adaptive_run(cold, 0.0)
        with pytest.raises(ValueError, match="adaptive"):
            cost.observe_adaptive_run(estimate_cost("algorithm1", n=10, n_points=5), 1.0)
    finally:
        cost._ADAPTIVE_CALIBRATION.clear()
        cost._ADAPTIVE_CALIBRATION.update(saved)
