"""Two-sample test page (AppTest): test my release, one test on bundled / private-vs-held-out / uploaded samples,
type-I error and power curves with a partial (stopped) result; charges and their parts in the ledger."""

import numpy as np
import pytest

from tests.support.app import as_float, errors, metric, new_app, ok, plotly_figures, public_app
from ui import state as S


@pytest.fixture
def test_page():
    at = public_app().run()
    at.switch_page("pages/release.py").run()
    at.button(key="rel.go").click().run()
    at.switch_page("pages/twosample.py").run()
    ok(at)
    return at


def _ledger(at, key=None):
    ds = at.session_state[S.DATASET]
    return at.session_state[S.LEDGERS][key or ds.data_key]


def _replay(at, seed=0):
    at.radio(key="tst.noise").set_value("seeded").run()
    at.number_input(key="tst.seed").set_value(seed).run()
    return at


def test_release_is_not_distinguishable_from_held_out_rows_in_replay_mode(test_page):
    """A seeded replay (deterministic decision): labelled not private, never charged, and its null simulation
    has its own stream (issue 13: the page fed one seed to both)."""
    at = _replay(test_page)
    before = len(_ledger(at))
    at.button(key="tst.go").click().run()
    assert not at.exception
    assert metric(at, "Decision") == "keep H₀"
    assert 0.05 < as_float(metric(at, "p-value (private test)")) <= 1
    assert metric(at, "Privacy of the test") == "NOT private" and "replayable demo" in errors(at)
    assert len(_ledger(at)) == before                                  # a demo is not charged as private
    stored = at.session_state["tst.result"]
    res = stored["result"]
    assert stored["seed"] == 0 and res.params["private"] is False
    assert at.number_input(key="tst.seed").value == 1                   # the next test gets fresh noise


def test_release_test_is_real_by_default_and_only_the_held_out_part_pays(test_page):
    at = test_page
    assert at.radio(key="tst.mode").value == "release"
    assert at.radio(key="tst.noise").value == "os-entropy"            # a real test by default
    assert at.radio(key="tst.features").value == "scf"                 # SCF by default
    before = len(_ledger(at))
    at.button(key="tst.go").click().run()
    ok(at)
    assert 0 <= as_float(metric(at, "p-value (private test)")) <= 1
    assert at.session_state["tst.result"]["seed"] is None
    led = _ledger(at)
    new = led.charges[before:]
    assert len(new) == 2 and all(c.details["parts"] == (S.PART_HELDOUT,) for c in new)
    tot = led.totals()
    assert set(tot["parts"]) == {S.PART_PRIVATE, S.PART_HELDOUT}
    # the release (private rows) and the test (held-out rows) compose in parallel: less than both together
    assert tot["best"][0] < S.composed(list(led.charges), 1e-5)["basic"][0]
    fig = plotly_figures(at)[0]
    assert {t["type"] for t in fig["data"]} == {"histogram", "scatter"}   # null + the textbook χ² density


def test_bundled_mean_shift_case_is_detected_and_charged_to_its_own_ledger(test_page):
    at = test_page
    at.radio(key="tst.mode").set_value("one").run()
    ok(at)
    assert at.radio(key="tst.source").value == "case" and at.selectbox(key="tst.case").value == "GMD"
    at.button(key="tst.go").click().run()       # a real test: its decision is random, its charges are not
    ok(at)
    assert metric(at, "Decision") in ("reject H₀", "keep H₀")
    assert as_float(metric(at, "Non-private p")) < 0.05
    led = _ledger(at, "two-sample lab:GMD:5000:100:0")
    assert len(led) == 2 and led.totals()["pld"][0] == pytest.approx(1.0, rel=0.2)   # exactly (ε, δ) at its δ
    assert len(_ledger(at)) == 1                                          # the dataset's ledger is untouched
    # replay mode (a deterministic decision): the mean shift is detected, the same Gaussian is not
    _replay(at)
    at.button(key="tst.go").click().run()
    assert not at.exception
    assert metric(at, "Decision") == "reject H₀"
    at.selectbox(key="tst.case").set_value("SG").run()
    _replay(at)
    at.button(key="tst.go").click().run()
    assert not at.exception
    assert metric(at, "Decision") == "keep H₀"


def test_a_lengthscale_from_the_private_rows_makes_the_test_not_private(test_page):
    """Red team (issue 13): ME/RFF features use the session's lengthscale; when it was read off the private
    rows, the test was still labelled private and charged."""
    at = test_page
    at.session_state[S.LENGTHSCALE_SOURCE] = "private-data"
    at.radio(key="tst.features").set_value("me").run()
    assert "would NOT be differentially private" in errors(at) and "lengthscale" in errors(at)
    before = len(_ledger(at))
    at.button(key="tst.go").click().run()
    assert not at.exception
    assert metric(at, "Privacy of the test") == "NOT private"
    assert len(_ledger(at)) == before
    assert at.session_state["tst.result"]["result"].params["private"] is False
    # SCF features do not use the lengthscale: that test is private
    at.radio(key="tst.features").set_value("scf").run()
    at.button(key="tst.go").click().run()
    ok(at)
    assert len(_ledger(at)) == before + 2


def test_private_vs_held_out_groups_each_holder_pays_its_part(test_page):
    at = test_page
    at.radio(key="tst.mode").set_value("one").run()
    at.radio(key="tst.source").set_value("groups").run()
    at.number_input(key="tst.shift").set_value(1.0).run()
    at.button(key="tst.go").click().run()
    ok(at)
    assert metric(at, "Decision") == "reject H₀"
    # the textbook chi-square p-value ignores the privacy noise: it is far smaller than the private one
    assert as_float(metric(at, "naive χ² p-value (wrong)")) < as_float(metric(at, "p-value (private test)"))
    parts = [c.details.get("parts") for c in _ledger(at).charges[1:]]
    assert parts.count((S.PART_PRIVATE,)) == 2 and parts.count((S.PART_HELDOUT,)) == 2


def test_two_uploaded_samples_are_tested_without_writing_to_disk(test_page):
    at = test_page
    at.radio(key="tst.mode").set_value("one").run()
    at.radio(key="tst.source").set_value("upload").run()
    rng = np.random.default_rng(0)

    def table(shift):
        A = rng.standard_normal((600, 3)) + np.array([shift, 0, 0])
        return ("a,b,c\n" + "\n".join(",".join(f"{v:.5f}" for v in row) for row in A) + "\n").encode()

    at.get("file_uploader")[0].set_value(("x.csv", table(0.0), "text/csv")).run()
    at.get("file_uploader")[1].set_value(("y.csv", table(2.0), "text/csv")).run()
    ok(at)
    at.button(key="tst.go").click().run()
    ok(at)
    assert metric(at, "Decision") == "reject H₀"
    stored = at.session_state["tst.result"]
    # NTE: each uploaded sample's people have their own ledger (keyed by the file), charged its holder's two releases
    assert stored["ledger_key"].startswith("upload:") and len(_ledger(at, stored["ledger_key"])) == 2
    assert sum(k.startswith("upload:") for k in at.session_state[S.LEDGERS]) == 2


def test_type_one_error_curve_shows_the_naive_null_inflating():
    at = new_app().run()
    at.switch_page("pages/twosample.py").run()
    at.radio(key="tst.mode").set_value("curves").run()
    ok(at)
    at.multiselect(key="tst.c_eps").set_value([1.0]).run()
    at.select_slider(key="tst.c_n").set_value(1000).run()
    at.number_input(key="tst.c_reps").set_value(20).run()
    at.button(key="tst.c_go").click().run()
    ok(at)
    curve = at.session_state["tst.curves"]["latest"]["curve"]
    rates = curve.rates()
    assert curve.completed and curve.repetitions == [20]
    assert rates["paper-naive"][0] > 0.5 > rates["tcmc"][0]       # the chi-square null on a private statistic
    names = {t.get("name") for t in plotly_figures(at)[0]["data"]}
    assert {"nonprivate", "tcmc", "paper-naive"} <= names
    assert len(at.get("download_button")) == 1


def test_a_stopped_curve_keeps_its_partial_result():
    from streamlit.runtime.scriptrunner_utils.exceptions import StopException

    from ui.widgets import StoppableProgress

    class Bar:
        calls = 0

        def progress(self, f, text=None):
            Bar.calls += 1
            if Bar.calls == 3:
                raise StopException()

    from dpkme.two_sample.lab import rejection_curve

    prog = StoppableProgress(Bar())
    curve = rejection_curve("SG", values=[1.0, 2.0], n=300, dim=5, repetitions=5, feature_kind="scf",
                            progress=lambda d, t, i: prog.update(d / t, "x"))
    assert not curve.completed and sum(curve.repetitions) == 3
    with pytest.raises(StopException):
        prog.resume()


def test_without_held_out_rows_the_release_test_explains_what_to_do():
    at = new_app().run()
    at.switch_page("pages/data.py").run()
    at.slider(key="data.heldout_pct").set_value(0.0).run()
    at.button(key="data.use").click().run()
    at.switch_page("pages/twosample.py").run()
    ok(at)
    assert any("held-out" in w.value for w in at.warning)


def test_a_huge_curve_waits_for_confirmation_and_a_default_one_does_not():
    """The curve lab is stoppable, so it asks only above a minute (predicted); 1000 repetitions × 6 ε × n = 10 000
    for every test is far above that."""
    at = new_app().run()
    at.switch_page("pages/twosample.py").run()
    at.radio(key="tst.mode").set_value("curves").run()
    assert not at.button(key="tst.c_go").disabled                          # the defaults: about 20 s, no question
    at.multiselect(key="tst.c_eps").set_value([0.1, 0.25, 0.5, 1.0, 2.5, 5.0]).run()
    at.select_slider(key="tst.c_n").set_value(10000).run()
    at.number_input(key="tst.c_reps").set_value(1000).run()
    ok(at)
    assert any("Large computation" in w.value for w in at.warning)
    assert at.button(key="tst.c_go").disabled
    box = next(c for c in at.checkbox if c.key.startswith("tst.c_size.confirm."))
    box.check().run()
    assert not at.button(key="tst.c_go").disabled


# ---------------------------------------------------------------------- Stop on the curves (the issue 17 bug)
def _curves_page(at):
    """The curve lab with tiny settings (one ε, 500 pairs, 20 repetitions, d = 10, two cheap tests)."""
    at.switch_page("pages/twosample.py").run()
    at.radio(key="tst.mode").set_value("curves").run()
    at.multiselect(key="tst.c_eps").set_value([1.0]).run()
    at.select_slider(key="tst.c_n").set_value(500).run()
    at.number_input(key="tst.c_reps").set_value(20).run()
    at.multiselect(key="tst.c_methods").set_value(["nonprivate", "tcmc"]).run()
    ok(at)
    return at


def test_stop_shows_the_stopped_curves_at_once(monkeypatch):
    """A Stop during the curves: the stopped run's partial curves show in the same script run (not only in a later
    rerun that may not wait for them), labelled as stopped. The stop signal is simulated at the third report."""
    from streamlit.runtime.scriptrunner_utils.exceptions import StopException

    import ui.widgets as W

    class StopAtThird(W.StoppableProgress):
        calls = 0

        def update(self, fraction, message):
            StopAtThird.calls += 1
            if StopAtThird.calls >= 3:
                self.interrupted = self.interrupted or StopException()
                return False
            return super().update(fraction, message)

    at = _curves_page(new_app().run())
    monkeypatch.setattr(W, "StoppableProgress", StopAtThird)
    at.button(key="tst.c_go").click().run()
    assert not at.exception, [e.value for e in at.exception]
    curve = at.session_state["tst.curves"]["latest"]["curve"]
    assert not curve.completed and 0 < sum(curve.repetitions) < 20
    assert any("Stopped early" in w.value for w in at.warning)                # this run shows it
    assert plotly_figures(at) and not any("Press **Compute" in i.value for i in at.info)
    assert at.session_state["tst.curves"]["running"].is_set()                # no run left behind


def test_the_next_run_waits_for_a_slow_stopped_run():
    """Fast reruns: the Stop's rerun starts while the stopped run still finishes its current repetition. However
    long that takes, the rerun waits for it and draws its partial curves, instead of drawing the old result while
    the stopped run writes into the session later. Simulated: the stopped run needs 20 s to reach its next report
    (no clock is read)."""
    from dpkme.two_sample.curves import run_rejection_curve

    at = _curves_page(new_app().run())
    partial = run_rejection_curve("SG", vary="epsilon", values=[1.0], methods=["nonprivate"], n=200, epsilon=1.0,
                                  delta=1e-5, repetitions=5, alpha=0.05, dim=5, feature_kind="scf", n_features=2,
                                  random_state=0, progress=lambda d, t, i: d < 2)
    assert not partial.completed
    box = at.session_state["tst.curves"]

    class SlowStoppedRun:
        """The stopped run's event: it stores its result 20 (simulated) seconds after the rerun starts waiting."""

        done = False

        def is_set(self):
            return self.done

        def wait(self, timeout=None):
            if timeout is None or timeout >= 20:
                box["latest"] = {"key": "stopped", "curve": partial}
                self.done = True
            return self.done

    box["running"] = SlowStoppedRun()
    at.run()
    ok(at)
    assert box["running"].done                                               # waited for it
    assert any("Stopped early" in w.value for w in at.warning)
