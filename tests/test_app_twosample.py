"""Two-sample test page (AppTest): a release against held-out rows, two private groups, budget charged."""

import pytest

from test_app_shared import as_float, metric, new_app, ok

from pages._shared import state as S


@pytest.fixture
def test_page():
    at = new_app().run()
    at.switch_page("pages/release.py").run()
    at.button(key="rel.go").click().run()
    at.switch_page("pages/twosample.py").run()
    ok(at)
    return at


def _ledger_len(at):
    ds = at.session_state[S.DATASET]
    return len(at.session_state[S.LEDGERS][ds.data_key])


def test_release_is_not_distinguishable_from_held_out_rows(test_page):
    at = test_page
    before = _ledger_len(at)
    at.button(key="tst.go").click().run()
    ok(at)
    assert metric(at, "Decision") == "keep H₀"
    assert 0.05 < as_float(metric(at, "p-value (private test)")) <= 1
    assert _ledger_len(at) > before                        # the held-out rows' noisy moments cost budget


def test_a_shifted_group_is_detected_and_the_null_is_noise_aware(test_page):
    at = test_page
    at.radio(key="tst.question").set_value("groups").run()
    at.number_input(key="tst.shift").set_value(1.0).run()
    at.button(key="tst.go").click().run()
    ok(at)
    assert metric(at, "Decision") == "reject H₀"
    # the textbook chi-square p-value ignores the privacy noise: it is far smaller than the private one
    assert as_float(metric(at, "naive χ² p-value (wrong)")) < as_float(metric(at, "p-value (private test)"))


def test_without_held_out_rows_the_page_explains_what_to_do():
    at = new_app().run()
    at.switch_page("pages/data.py").run()
    at.slider(key="data.heldout_pct").set_value(0.0).run()
    at.button(key="data.use").click().run()
    at.switch_page("pages/twosample.py").run()
    ok(at)
    assert any("held-out" in w.value for w in at.warning)
