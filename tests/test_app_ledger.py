"""Budget ledger page (AppTest): totals under basic/RDP/PLD, budget warnings, reset, per-dataset ledgers."""

import pytest

from test_app_shared import as_float, metric, new_app, ok

from dpkme.accounting import pld_epsilon
from pages._shared import state as S


def _with_releases(k: int):
    at = new_app().run()
    at.switch_page("pages/release.py").run()
    for _ in range(k):
        at.button(key="rel.go").click().run()
    ok(at)
    at.switch_page("pages/ledger.py").run()
    ok(at)
    return at


def test_empty_ledger():
    at = new_app().run()
    at.switch_page("pages/ledger.py").run()
    ok(at)
    assert any("Nothing spent" in i.value for i in at.info)


def test_three_releases_compose_below_basic_composition():
    at = _with_releases(3)
    ds = at.session_state[S.DATASET]
    led = at.session_state[S.LEDGERS][ds.data_key]
    assert metric(at, "Charges") == "3"
    assert metric(at, "Basic composition") == "ε = 3"
    rdp = as_float(metric(at, "Rényi DP"))
    pld = as_float(metric(at, "PLD"))
    assert pld < rdp < 3
    assert pld == pytest.approx(pld_epsilon(led.charges, delta=1e-5), rel=1e-3)
    assert any("Within budget" in s.value for s in at.success)
    assert len(at.dataframe[0].value) == 3


def test_lower_budget_shows_an_error():
    at = _with_releases(2)
    at.number_input(key=S.BUDGET_EPS).set_value(1.0).run()
    assert not at.exception
    assert any("Budget exceeded" in e.value for e in at.error)   # PLD: 1.28 > 1 at δ = 1e-5
    at.number_input(key=S.BUDGET_EPS).set_value(1.3).run()
    ok(at)                                                       # ... but within 1.3 (basic would say 2)


def test_reset_needs_confirmation_and_empties_the_ledger():
    at = _with_releases(1)
    assert at.button(key="bud.reset").disabled
    at.checkbox(key="bud.confirm").check().run()
    at.button(key="bud.reset").click().run()
    ok(at)
    ds = at.session_state[S.DATASET]
    assert len(at.session_state[S.LEDGERS][ds.data_key]) == 0


def test_a_new_dataset_starts_a_new_ledger():
    at = _with_releases(1)
    at.switch_page("pages/data.py").run()
    at.selectbox(key="data.generator").set_value("two_moons").run()
    at.button(key="data.use").click().run()
    at.switch_page("pages/ledger.py").run()
    ok(at)
    assert any("Nothing spent" in i.value for i in at.info)
    assert len(at.session_state[S.LEDGERS]) == 2


def test_held_out_test_composes_in_parallel_and_lab_ledgers_are_listed():
    at = _with_releases(1)
    at.switch_page("pages/twosample.py").run()
    at.button(key="tst.go").click().run()                       # held-out rows pay
    at.radio(key="tst.mode").set_value("one").run()
    at.button(key="tst.go").click().run()                       # a bundled case: a ledger of its own
    at.switch_page("pages/ledger.py").run()
    ok(at)
    assert any("Parallel composition" in i.value for i in at.info)
    table = at.dataframe[0].value
    assert set(table["part"]) == {S.PART_PRIVATE, S.PART_HELDOUT}
    assert metric(at, "Charges") == "3"
    others = at.dataframe[1].value
    assert any(str(n).startswith("two-sample lab: GMD") for n in others["data"])
