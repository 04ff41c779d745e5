"""Generative release page (AppTest): DPGM planned from public inputs, one charge per run, images and downloads,
the download's guarantee without a seed, the budget check, messages for bad inputs. Runs use tiny settings."""

import json

import numpy as np
import pytest

from tests.support.app import metric, new_app, plotly_figures
from ui import state as S

PAGE = "pages/generative.py"
#: Tiny settings: 1 epoch of a tiny VAE with 2 clusters (the compile dominates).
TINY = {"gen.k": 2, "gen.epochs": 1, "gen.batch": 128, "gen.hidden": 16, "gen.latent": 2, "gen.kiter": 2,
        "gen.n_rows": 50, "gen.partition": "kmeans"}


def _page(timeout: float = 300, **state):
    at = new_app(timeout)
    for key, value in state.items():
        at.session_state[key] = value
    at.run()
    at.switch_page(PAGE).run()
    assert not at.exception, [e.value for e in at.exception]
    return at


def _ledger(at, data_key="sample:digits"):
    return at.session_state[S.LEDGERS].get(data_key)


def _seed_values(obj):
    """Values of every key that names a seed, at any depth."""
    if isinstance(obj, dict):
        for key, v in obj.items():
            if "seed" in str(key).lower():
                yield v
            yield from _seed_values(v)
    elif isinstance(obj, list):
        for v in obj:
            yield from _seed_values(v)


def _unexpected(at):
    return [e.value for e in at.error if "unexpected" in e.value]


@pytest.mark.slow
def test_page_plans_from_public_inputs_and_charges_nothing():
    at = _page(**{"gen.partition": "kmeans"})
    assert not at.error, [e.value for e in at.error]
    assert metric(at, "Whole run").startswith("ε = ")
    split = at.dataframe[0].value
    assert len(split) == 3 and "k-means" in split["part"][0]                 # k-means, training, whole run
    assert float(split["ε alone"].iloc[-1]) <= 1.0 + 1e-9                   # the default ε = 1, never exceeded
    names = [t.get("name") for t in plotly_figures(at)[0]["data"]]
    assert any("paper" in str(n) for n in names) and "your setting (charged)" in names
    assert any("Train the generative models" in i.value for i in at.info)
    assert _ledger(at) is None or len(_ledger(at)) == 0                      # planning spends nothing


@pytest.mark.slow
def test_tiny_run_charges_once_shows_images_and_downloads():
    from ui import generative as GN

    at = _page(**TINY)
    at.button(key="gen.go").click().run()
    assert not at.exception, [e.value for e in at.exception]
    assert not at.error, [e.value for e in at.error]
    led = _ledger(at)
    assert len(led) == 2                      # the private row count (add/remove: N is not public), then the run
    count, charge = led.charges
    assert count.mechanism == "laplace" and count.relation.value == "add-remove"
    assert charge.details["parts"] == (S.PART_PRIVATE,) and charge.epsilon <= 1.0 + 1e-9
    assert charge.details["neighbouring"] == "add-remove"
    stored = at.session_state["gen.box"]["latest"]
    res = stored["result"]
    assert res.k == 2 and res.private and res.noise_source == "os-entropy" and not res.cancelled
    assert len(at.image) == 2                                                # generated grid and held-out grid
    assert "Generated" in at.image[0].captions[0] and "held-out" in at.image[1].captions[0]
    assert len(at.get("download_button")) == 2
    assert any(str(r).startswith("KME release") for r in at.dataframe[-1].value["rows"])   # MMD table
    # the release file: models, the guarantee in words, no seed; it reads back for sampling
    gd = GN.digits_data()
    d = json.loads(GN.model_json(res, gd, app_private=True))
    assert d["differentially_private"] is True and d["seed"] is None
    assert "guarantee_in_words" in d and d["kind"] == "dpgm" and d["label_classes"] == [str(i) for i in range(10)]
    assert all(v is None for v in _seed_values(d))                           # no seed anywhere in the file
    assert "seconds" not in d                                 # no wall-clock time (a timing side channel)
    from dpkme.generative import DPGMResult

    assert DPGMResult.from_dict(d).sample(3, rng=0).shape == (3, 64)          # a recipient samples from the file
    # the rows file: labelled rows in the declared units
    rows = GN.rows_frame(res, gd, 30)
    assert list(rows.columns)[-1] == "digit" and len(rows) == 30
    assert rows.iloc[:, :64].to_numpy().min() >= 0 and rows.iloc[:, :64].to_numpy().max() <= 16
    # rerunning the page (any input) does not charge again
    at.number_input(key="gen.n_rows").set_value(40).run()
    assert len(_ledger(at)) == 2


@pytest.mark.slow
def test_exhausted_budget_is_an_error_that_says_what_to_do():
    at = _page(**{**TINY, S.BUDGET_EPS: 0.5})
    at.button(key="gen.go").click().run()
    assert not at.exception
    msgs = [e.value for e in at.error]
    assert any("beyond your budget" in m and "raise the budget" in m for m in msgs), msgs
    led = _ledger(at)                         # only the private row count (ε = 0.05) was charged; nothing run
    assert [c.mechanism for c in led.charges] == ["laplace"]
    assert "latest" not in at.session_state["gen.box"]


@pytest.mark.slow
def test_bad_inputs_give_messages_not_tracebacks():
    at = _page(**{"gen.data": "penguins", "gen.batch": 512, "gen.partition": "kmeans"})
    assert any("exceeds" in e.value and "batch size" in e.value for e in at.error)
    assert at.button(key="gen.go").disabled
    at.select_slider(key="gen.batch").set_value(32).run()
    assert not at.error, [e.value for e in at.error]
    # a k-means share that alone spends more than the total at a tiny ε
    at.session_state[S.EPS_TYPED] = True
    at.session_state[S.EPS_VALUE] = 1e-4
    at.run()
    assert not at.exception and not _unexpected(at)
    # the current dataset with a declared range lower >= upper
    at.session_state[S.EPS_TYPED] = False
    at.selectbox(key="gen.data").set_value("current").run()
    at.number_input(key="gen.lo").set_value(5.0).run()
    at.number_input(key="gen.hi").set_value(5.0).run()
    assert any("lower < upper" in e.value for e in at.error)
    assert not at.exception and not _unexpected(at)


def test_helpers_are_public_functions_of_public_inputs():
    """Tile grids, epoch grids and the budget table need no data; the digits split is fixed and disjoint."""
    from ui import generative as GN

    g = GN.tile_grid(np.linspace(0, 1, 3 * 64).reshape(3, 64), ncols=2, scale=2)
    assert g.dtype == np.uint8 and g.shape == (2 * 17 + 1, 2 * 17 + 1)
    assert 3 in GN.curve_epochs(3) and GN.curve_epochs(3)[0] == 0 and max(GN.curve_epochs(3)) == 10
    gd = GN.digits_data()
    assert gd.ds.n + gd.ds.n_heldout == 1797 and gd.n_classes == 10
    assert gd.ds.n_heldout == pytest.approx(0.2 * 1797, abs=1)
    p = GN.plan(epsilon=1.0, delta=1e-5, n_private=gd.ds.n, batch_size=64, epochs=2, k=3, kmeans_share=0.2,
                kmeans_iter=5, accountant="rdp")
    table = GN.budget_split(p)
    assert len(table) == 3 and table["ε alone"].iloc[-1] <= 1.0 + 1e-9
    assert table["ε alone"].iloc[0] < table["ε alone"].iloc[-1] and table["ε alone"].iloc[1] < table["ε alone"].iloc[-1]


@pytest.mark.slow
def test_one_model_per_class_runs_charges_once_and_says_so():
    """partition="labels" (issue 17): no k-means share in the split, one charge, 10 models, the files say so."""
    from ui import generative as GN

    at = _page(**{**TINY, "gen.partition": "labels"})
    assert not at.error, [e.value for e in at.error]
    split = at.dataframe[0].value
    assert len(split) == 2 and not any("k-means" in str(p) for p in split["part"])   # training, whole run
    assert at.number_input(key="gen.k").disabled
    at.button(key="gen.go").click().run()
    assert not at.exception, [e.value for e in at.exception]
    assert not at.error, [e.value for e in at.error]
    led = _ledger(at)
    assert len(led) == 2 and led.charges[0].mechanism == "laplace"     # the private row count, then the run
    charge = led.charges[1]
    assert "one model per class" in charge.label and charge.epsilon <= 1.0 + 1e-9
    assert charge.details["kmeans"] is None                                  # the whole budget to DP-SGD
    res = at.session_state["gen.box"]["latest"]["result"]
    assert res.k == 10 and res.config["partition"] == "labels" and res.private
    assert np.allclose(res.weights, 0.1)                                     # public, equal class weights
    gd = GN.digits_data()
    d = json.loads(GN.model_json(res, gd, app_private=True))
    assert d["partition"] == "labels" and d["config"]["partition"] == "labels"
    assert d["differentially_private"] is True and all(v is None for v in _seed_values(d))
    rows = GN.rows_frame(res, gd, 40)
    assert list(rows.columns)[-1] == "digit" and set(rows["digit"]) <= set(gd.class_names)
    at.number_input(key="gen.n_rows").set_value(40).run()                  # a rerun does not charge again
    assert len(_ledger(at)) == 2


@pytest.mark.slow
def test_partition_choice_only_with_a_label_column():
    at = _page(**{"gen.data": "mixture"})
    assert "gen.partition" not in [r.key for r in at.radio]
    assert "k-means" in at.dataframe[0].value["part"][0]
    at.selectbox(key="gen.data").set_value("penguins").run()
    assert "gen.partition" in [r.key for r in at.radio]


def test_labels_plan_has_no_kmeans_share_and_a_cheaper_estimate():
    """Public inputs only: the by-label plan spends everything on DP-SGD; its estimate counts c models."""
    from ui import generative as GN

    gd = GN.digits_data()
    common = dict(epsilon=1.0, delta=1e-5, n_private=gd.ds.n, batch_size=64, epochs=2, k=5, kmeans_share=0.2,
                  kmeans_iter=5, accountant="rdp")
    pk, pl = GN.plan(**common), GN.plan(**common, partition="labels")
    assert pl.kmeans is None and pk.kmeans is not None
    assert pl.noise_multiplier < pk.noise_multiplier and pl.epsilon <= 1.0 + 1e-9   # no k-means share to pay
    table = GN.budget_split(pl, partition="labels")
    assert len(table) == 2 and "class" in table["noise"].iloc[0]
    params = {"k": 5, "model": "vae", "epochs": 2, "batch_size": 64, "hidden": 64, "latent_dim": 8, "n_hidden": 64}
    ek = GN.estimate(gd, params, pk)
    el = GN.estimate(gd, {**params, "partition": "labels"}, pl)
    assert el.params["models"] == 10 and ek.params["models"] == 5 and "k-means" not in " ".join(el.breakdown)
    with pytest.raises(ValueError, match="partition"):
        GN.plan(**common, partition="classes")


# ---------------------------------------------------------------------- issue 17 (browser walk)
@pytest.mark.slow
def test_labels_are_the_default_with_a_label_column_and_kmeans_stays_selectable():
    at = _page()
    assert at.radio(key="gen.partition").value == "labels"
    assert "k-means" in str(at.radio(key="gen.partition").options)
    assert any("paper's method" in c.value for c in at.caption)
    assert len(at.dataframe[0].value) == 2                                   # no k-means row in the split


@pytest.mark.slow
def test_stop_shows_the_stopped_run_at_once(monkeypatch):
    """A Stop during training: the stopped run's models show in the same script run (issue 17, item 1), labelled as
    stopped, with the planned charge on the ledger. The stop signal is simulated at the first progress report."""
    from streamlit.runtime.scriptrunner_utils.exceptions import StopException

    import ui.widgets as W

    class StopAtOnce(W.StoppableProgress):
        def update(self, fraction, message):
            self.interrupted = self.interrupted or StopException()
            return False

    at = _page(**TINY)
    monkeypatch.setattr(W, "StoppableProgress", StopAtOnce)
    at.button(key="gen.go").click().run()
    assert not at.exception, [e.value for e in at.exception]
    res = at.session_state["gen.box"]["latest"]["result"]
    assert res.cancelled and res.steps_run < res.plan.steps
    assert any("Stopped after" in w.value and "planned" in w.value for w in at.warning)   # this run, not a later one
    assert len(at.image) == 2 and not any("Press **Train" in i.value for i in at.info)
    led = _ledger(at)
    assert len(led) == 2 and led.charges[-1].epsilon == pytest.approx(res.plan.epsilon)   # count + planned run


def test_progress_text_never_shows_more_than_the_charge():
    """Item 2: the charged ε is the headline; the bound for the steps so far never exceeds it (PLD plan, RDP run)."""
    from ui import generative as GN

    p = GN.plan(epsilon=1.0, delta=1e-6, n_private=1438, batch_size=64, epochs=10, k=5, kmeans_share=0.2,
                kmeans_iter=5, accountant="pld")
    assert float(p.rdp_epsilon_after(p.steps)) > p.epsilon                  # RDP alone overshoots the PLD charge
    for t in (1, p.steps // 2, p.steps):
        text = GN.progress_text(t, p.steps, 0.5, p)
        assert text.startswith(f"ε charged {p.epsilon:.3g} (PLD")
        assert float(text.rsplit("≤ ", 1)[1]) <= float(f"{p.epsilon:.3g}")


def test_tiny_epsilon_names_the_slider_and_disabled_train_says_why():
    """Items 7 and 6: the k-means share is named by its slider's label; a disabled Train button has a reason."""
    from ui import generative as GN

    with pytest.raises(ValueError, match="k-means share of") as exc:
        GN.plan(epsilon=1e-4, delta=1e-6, n_private=1438, batch_size=64, epochs=3, k=5, kmeans_share=0.2,
                kmeans_iter=5, accountant="pld")
    assert "kmeans_share" not in str(exc.value)
    assert GN.train_disabled_reason(plan_ok=True, run_ok=True) == ""
    assert "red message" in GN.train_disabled_reason(plan_ok=False, run_ok=True)
    assert "Run it anyway" in GN.train_disabled_reason(plan_ok=True, run_ok=False)


@pytest.mark.slow
def test_a_disabled_train_button_says_why():
    at = _page(**{"gen.epochs": 200, "gen.batch": 8})                        # a long run: confirmation needed
    assert at.button(key="gen.go").disabled
    assert any("Train is disabled" in c.value and "Run it anyway" in c.value for c in at.caption)


@pytest.mark.slow
def test_grid_shows_eight_per_model_with_weight_and_sizes_with_their_noise():
    """Items 5 and 3: exactly 8 tiles per model with weight > 0 (zero-weight models named); the noisy sizes come
    with their noise scale (their sum is N plus k independent Gaussian draws: nothing is counted twice)."""
    import dataclasses

    from ui import generative as GN

    at = _page(**TINY)
    at.button(key="gen.go").click().run()
    assert not at.exception, [e.value for e in at.exception]
    res = at.session_state["gen.box"]["latest"]["result"]
    rows, _, clus = GN.generated_by_cluster(res)
    live = int(np.sum(np.asarray(res.weights) > 0))
    assert len(rows) == 8 * live and np.all(np.bincount(clus, minlength=res.k)[np.asarray(res.weights) > 0] == 8)
    half = dataclasses.replace(res, weights=np.array([1.0, 0.0]))
    rows, labs, clus = GN.generated_by_cluster(half)
    assert len(rows) == 8 and set(clus) == {0} and labs is not None and len(labs) == 8
    sig = GN.size_noise(res)
    assert sig == pytest.approx(res.plan.kmeans.step("lloyd").sigma_count) and sig > 0
    assert any("std σ" in c.value for c in at.caption)
    assert "8 samples each" in at.image[0].captions[0]


# ---------------------------------------------------------------------- issue 17 polish: defaults, the data shown
@pytest.mark.slow
def test_defaults_are_the_benchmarks_settings_for_each_dataset_and_split():
    """A newcomer's first run uses the settings the benchmarks measured (issue 26 on the digits split by label: large
    batches, 16 steps, VAE 16/1, recognisable digits at ε = 1), the page says what the benchmark
    found at the chosen ε, and the default run needs no confirmation."""
    from ui import generative as GN

    at = _page()
    assert at.radio(key="gen.partition").value == "labels"
    assert at.select_slider(key="gen.batch").value == 1024 and at.number_input(key="gen.epochs").value == 8
    assert at.select_slider(key="gen.hidden").value == 16 and at.number_input(key="gen.latent").value == 1
    assert at.number_input(key="gen.lr").value == pytest.approx(0.1)
    assert not at.button(key="gen.go").disabled                              # within the time budget: no question
    steps = [m.value for m in at.metric if m.label == "SGD steps T_S"]
    assert steps == ["16"]                                                   # q = 1024/1438: 2 steps an epoch
    expected = [c.value for c in at.caption if "Expected" in c.value]
    one = GN.BENCHMARK[("digits", "labels")]["at"][1.0]                      # the class agreement at ε = 1
    assert expected and "benchmark" in expected[0] and one in expected[0] and "δ = 10⁻⁶" in expected[0]
    at.radio(key="gen.partition").set_value("kmeans").run()                 # the split's own measured settings
    assert at.number_input(key="gen.k").value == 5 and at.number_input(key="gen.epochs").value == 20
    at.selectbox(key="gen.data").set_value("penguins").run()
    assert at.radio(key="gen.partition").value == "kmeans"                  # the user's split choice stays
    want = GN.DEFAULTS[("penguins", "kmeans")]
    assert at.select_slider(key="gen.batch").value == want["gen.batch"] == 64
    assert at.number_input(key="gen.epochs").value == want["gen.epochs"] == 20
    assert at.select_slider(key="gen.hidden").value == 64
    assert any("Expected" in c.value and "MMD" in c.value for c in at.caption)
    at.number_input(key="gen.epochs").set_value(7).run()                    # the user's change is kept on a rerun
    assert at.number_input(key="gen.epochs").value == 7
    assert not any("Expected" in c.value and "MMD" in c.value for c in at.caption)   # not what was measured
    assert any("Use the benchmark's settings" in b.label for b in at.button)
    at.button(key="gen.defaults").click().run()
    assert at.number_input(key="gen.epochs").value == 20
    assert not at.exception and not _unexpected(at)


def test_expected_result_is_the_benchmarks_and_says_so():
    """Public numbers from the benchmarks' results, at the measured ε or between them, only for its settings."""
    from ui import generative as GN

    tuned = {**GN.COMMON_DEFAULTS, **GN.DEFAULTS[("digits", "labels")]}
    at = GN.BENCHMARK[("digits", "labels")]["at"]
    assert sorted(at) == [0.3, 1.0, 2.0, 5.0, 10.0]                         # benchmarks/results/dpgm_quality.md
    one = GN.expected_result("digits", "labels", tuned, epsilon=1.0)
    assert "benchmark" in one and at[1.0] in one and "dpgm_quality.md" in one and "not this run" in one
    assert "δ = 10⁻⁶" in one and "class" in one
    mid = GN.expected_result("digits", "labels", tuned, epsilon=1.5)
    assert at[1.0] in mid and at[2.0] in mid and "between" in mid
    low = GN.expected_result("digits", "labels", tuned, epsilon=0.2)
    assert at[0.3] in low and "below" in low
    assert GN.expected_result("digits", "labels", {**tuned, "gen.epochs": 3}, epsilon=1.0) is None
    assert GN.expected_result("current", "kmeans", tuned, epsilon=1.0) is None
    mix = GN.expected_result("mixture", "kmeans", {**GN.COMMON_DEFAULTS, **GN.DEFAULTS[("mixture", "kmeans")]},
                             epsilon=10.0)
    assert "MMD" in mix and "0.279" in mix and "uniform" in mix


@pytest.mark.slow
def test_the_sidebar_says_which_data_this_page_trains_on():
    """Item 2: the sidebar's "Current data" is the app's dataset (the mixture); this page trains on its own choice
    (the digits). The sidebar names both, and the page says where its runs are charged."""
    at = _page()
    side = " ".join(m.value for m in at.sidebar.markdown) + " " + " ".join(c.value for c in at.sidebar.caption)
    assert "This page trains on" in side and "digits" in side.lower()
    assert "not the current data" in side
    page = " ".join(c.value for c in at.main.caption)
    assert "sidebar" in page and "charged" in page
    at.selectbox(key="gen.data").set_value("current").run()
    side = " ".join(m.value for m in at.sidebar.markdown)
    assert "This page trains on" not in side                                # the same data: nothing to tell apart
