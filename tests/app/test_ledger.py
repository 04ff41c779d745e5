"""Budget ledger page (AppTest): totals under basic/RDP/PLD, budget warnings, reset, per-dataset ledgers."""

import pytest

from dpkme.privacy.accounting import pld_epsilon
from tests.support.app import as_float, metric, new_app, ok, public_app
from ui import state as S


def _with_releases(k: int):
    at = public_app().run()
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
    # a reset forgets the charges here, not for the people: the page keeps saying what was spent
    assert any("reset earlier in this session" in w.value for w in at.warning)
    # and the publishable subset stays fixed (a reset must not re-open publishing protected rows)
    at.switch_page("pages/data.py").run()
    at.number_input(key="data.split_seed").set_value(3).run()
    assert any("cannot be used" in e.value for e in at.error)


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
    others = next(d.value for d in at.dataframe if "data" in d.value.columns)   # other datasets' ledgers
    assert any(str(n).startswith("two-sample lab: GMD") for n in others["data"])


def test_ledger_survives_a_reload_through_export_and_import():
    """Issue 13: the ledger lives in one browser session and a reload reset it silently. Now the page says so,
    exports it, and an import after the reload restores every charge (merging, never forgetting)."""
    at = _with_releases(2)
    ds = at.session_state[S.DATASET]
    assert any("reload" in m.value and "Export" in m.value for m in at.markdown)
    led = at.session_state[S.LEDGERS][ds.data_key]
    content = led.to_json(name=ds.name, about={"data_key": ds.data_key}).encode()
    assert b"\"seed\"" not in content                       # no noise seed (the data's name may say "seed 0")
    fresh = public_app().run()          # a new session without the old one's address (a server restart): empty
    fresh.switch_page("pages/ledger.py").run()
    assert any("Nothing spent" in i.value for i in fresh.info)
    fresh.file_uploader(key="bud.import").set_value(("dpkme_ledger.json", content, "application/json")).run()
    ok(fresh)
    assert any("Imported 2 charge(s)" in s.value for s in fresh.success)
    new = fresh.session_state[S.LEDGERS][ds.data_key]
    assert new.charges == led.charges
    assert metric(fresh, "Charges") == "2"


def test_importing_another_datas_ledger_or_garbage_is_a_clear_error():
    at = _with_releases(1)
    ds = at.session_state[S.DATASET]
    other = at.session_state[S.LEDGERS][ds.data_key].to_json(about={"data_key": "sample:iris"}).encode()
    at.file_uploader(key="bud.import").set_value(("other.json", other, "application/json")).run()
    assert not at.exception
    assert any("other data" in e.value for e in at.error)
    at.file_uploader(key="bud.import").set_value(("junk.json", b"\x00garbage", "application/json")).run()
    assert not at.exception
    assert any("Could not import 'junk.json'" in e.value for e in at.error)
    assert len(at.session_state[S.LEDGERS][ds.data_key]) == 1


# ---------------------------------------------------------------------- issue 16 walk, finding 11
def test_basic_composition_shows_delta_as_a_caption_not_as_a_change():
    """The metric showed "↑ δ = 1.0e-06" (a delta arrow, as if δ had changed)."""
    at = _with_releases(1)
    m = next(m for m in at.metric if m.label == "Basic composition")
    assert m.value == "ε = 1" and not m.delta
    assert any(c.value == "with δ = 10⁻⁶" for c in at.caption)


def test_the_ledger_counts_name_private_discovery_among_the_other_private_steps():
    """The sidebar listed "a private choice of ℓ, a two-sample test or a clustering run" but not the private
    discovery of bounds and categories (Data page), which is charged too."""
    from dpkme.privacy.accounting import BudgetLedger, pure_dp_charge

    led = BudgetLedger(epsilon_budget=5.0, delta_budget=1e-5)
    led.add(pure_dp_charge("private bounds of 'age'", epsilon=0.1, mechanism="exponential"))
    text = S.ledger_counts(led)
    assert "1 other private step" in text and "private discovery of bounds or categories" in text
    assert "a private choice of ℓ" in text and "two-sample test" in text and "clustering run" in text
