"""Attacks on the app's privacy boundary (issue 24): one test per finding of the review, written to fail on the
code before the gate (``ui/gate.py``) and the typed privacy facts, and to pass now.

1. the Generative page released the exact row count under add/remove;
2. a ledger import merged charges by equality, dropping releases of another session;
3. an ε chosen from an explorer run on the private rows left no mark;
4. the Generative page showed owner values (MMD against the private rows, held-out rows) in presentation mode;
5. one page's over-budget permission let another page (and every later run) spend beyond the budget;
6a. ticking "declared" in the schema editor declared a bound read off the private rows;
6b. a ledger reset dropped its charges from the export and from budget checks
    (6c, k-means' one OS seed, is tests/clustering/test_streams.py).
"""

import json

import numpy as np
import pytest

from dpkme.privacy.accounting import BudgetLedger, PrivacyCharge, pure_dp_charge
from tests.support.app import new_app, ok
from ui import explorer as XP
from ui import gate as G
from ui import presentation as P
from ui import state as S

#: Tiny DPGM settings (1 epoch, 2 clusters): the compile dominates.
TINY = {"gen.k": 2, "gen.epochs": 1, "gen.batch": 128, "gen.hidden": 16, "gen.latent": 2, "gen.kiter": 2,
        "gen.n_rows": 50, "gen.partition": "kmeans"}


def _gen_page(**state):
    at = new_app(300)
    for key, value in state.items():
        at.session_state[key] = value
    at.run()
    at.switch_page("pages/generative.py").run()
    ok(at)
    return at


# ---------------------------------------------------------------------------------------------- finding 1
@pytest.mark.slow
def test_1_the_generative_release_carries_a_privately_counted_n_never_the_exact_one(monkeypatch):
    """Attack: under add/remove, N, the sampling rate L/N and the steps ⌈N/L⌉ in the file told two neighbouring
    tables apart with certainty. Now N̂ = N + Laplace noise (forced to +7 here) is all the run and its files see."""
    import dpkme.privacy.counting as counting
    from ui import generative as GN

    monkeypatch.setattr(counting, "laplace_noise", lambda shape, *, scale, rng: np.float64(7.0))
    at = _gen_page(**TINY)
    at.button(key="gen.go").click().run()
    ok(at)
    assert not at.error, [e.value for e in at.error]
    res = at.session_state["gen.box"]["latest"]["result"]
    gd = GN.digits_data()
    n_true = gd.ds.n
    assert res.config["n_private"] == n_true + 7                        # the gate's count, not len(rows)
    assert res.plan.sampling_rate == pytest.approx(128 / (n_true + 7))
    doc = json.loads(GN.model_json(res, gd, app_private=True))
    text = json.dumps(doc)
    assert doc["config"]["n_private"] == n_true + 7 and f"{n_true:,}" not in text and f" {n_true} " not in text
    led = at.session_state[S.LEDGERS]["sample:digits"]
    count, run = led.charges
    assert count.mechanism == "laplace" and count.epsilon == G.COUNT_EPSILON and count.relation.value == "add-remove"
    assert run.relation.value == "add-remove" and run.parts == (S.PART_PRIVATE,)


@pytest.mark.slow
def test_1_two_neighbouring_tables_with_the_same_count_give_the_same_public_configuration():
    """The run's public configuration is a function of the released count only: 60 and 61 rows, same N̂."""
    from dpkme.generative import dpgm

    rng = np.random.default_rng(0)
    X = rng.uniform(size=(61, 3))
    cfgs = []
    for rows in (X[:60], X):
        res = dpgm(rows, bounds=(0, 1), n_private=64, k=1, epochs=1, batch_size=16, hidden=(4,), latent_dim=2,
                   epsilon=1.0, delta=1e-5, rng=np.random.default_rng(1))
        cfgs.append((res.config["n_private"], res.plan.sampling_rate, res.plan.steps))
    assert cfgs[0] == cfgs[1]


# ---------------------------------------------------------------------------------------------- finding 2
def test_2_two_sessions_equal_looking_charges_are_two_spendings():
    """Attack: labels restart at #1 in every session, so two sessions' "#1 Algorithm 1 (M = 200)" at ε = 1 were
    one charge after an import. Charges are now matched by id only."""
    a = pure_dp_charge("#1 Algorithm 1 (M = 200)", epsilon=1.0)
    b = pure_dp_charge("#1 Algorithm 1 (M = 200)", epsilon=1.0)
    assert (a.label, a.epsilon, a.details) == (b.label, b.epsilon, b.details) and a.id != b.id
    mine = BudgetLedger(epsilon_budget=5, delta_budget=1e-5)
    mine.add(a)
    theirs = BudgetLedger(epsilon_budget=5, delta_budget=1e-5)
    theirs.add(b)
    merge = mine.merge(BudgetLedger.from_json(theirs.to_json()))
    assert len(merge.added) == 1 and len(mine) == 2
    assert mine.totals()["basic"][0] == pytest.approx(2.0)
    again = mine.merge(BudgetLedger.from_json(theirs.to_json()))      # the same export twice: nothing new
    assert not again.added and again.duplicate_import and len(mine) == 2


def test_2_importing_the_same_file_twice_warns_and_adds_nothing():
    at = new_app().run()
    at.switch_page("pages/release.py").run()
    at.button(key="rel.go").click().run()
    ok(at)
    ds = at.session_state[S.DATASET]
    other = BudgetLedger(epsilon_budget=5, delta_budget=1e-5)
    other.add(at.session_state[S.LEDGERS][ds.data_key].charges[0].renewed())   # another session's equal charge
    content = other.to_json(about={"data_key": ds.data_key}).encode()
    at.switch_page("pages/ledger.py").run()
    at.file_uploader(key="bud.import").set_value(("other.json", content, "application/json")).run()
    ok(at)
    assert any("Imported 1 charge(s)" in s.value for s in at.success)
    assert len(at.session_state[S.LEDGERS][ds.data_key]) == 2
    at.file_uploader(key="bud.import").set_value(None).run()
    at.file_uploader(key="bud.import").set_value(("again.json", content, "application/json")).run()
    ok(at)
    assert any("already imported" in w.value for w in at.warning)
    assert len(at.session_state[S.LEDGERS][ds.data_key]) == 2


# ---------------------------------------------------------------------------------------------- finding 3
@pytest.mark.slow
def test_3_an_epsilon_read_off_private_planning_panels_marks_the_release_not_private():
    at = new_app().run()
    at.switch_page("pages/release.py").run()
    at.checkbox(key=XP.PRIVATE_KEY).check().run()
    at.button(key=XP.GO_KEY).click().run()
    ok(at)
    at.button(key="rel.xp_use.1").click().run()                       # "Use ε = 1" from the private panels
    assert not at.exception
    assert any("PRIVATE rows" in e.value for e in at.error)                  # said before anything is released
    at.button(key="rel.go").click().run()
    assert not at.exception
    rec = at.session_state[S.RELEASES][-1]
    assert not rec.private and rec.charge is None
    assert any("explorer run on the PRIVATE rows" in w for w in rec.warnings)
    from ui import export as E

    meta = E.release_metadata(rec, at.session_state[S.DATASET])
    assert meta["differentially_private"] is False and "PRIVATE rows" in meta["warning"]
    # another ε typed afterwards is the owner's own choice again
    at.session_state[S.EPS] = 2.0
    at.run()
    at.button(key="rel.go").click().run()
    ok(at)
    assert at.session_state[S.RELEASES][-1].private


# ---------------------------------------------------------------------------------------------- finding 4
@pytest.mark.slow
def test_4_the_generative_page_shows_no_owner_value_in_presentation_mode(monkeypatch):
    shown = []
    original = P.OwnerOnly.render

    def spy(self, draw):
        shown.append((self.what, P.show_owner_details()))
        return original(self, draw)

    monkeypatch.setattr(P.OwnerOnly, "render", spy)
    at = _gen_page(**{**TINY, P.PRESENT: True})
    at.button(key="gen.go").click().run()
    ok(at)
    assert at.session_state["gen.box"]["latest"]["result"].k == 2
    assert len(at.image) == 1 and "held-out" not in at.image[0].captions[0]     # generated digits only
    assert not [d for d in at.dataframe if "MMD to held-out (smaller is closer)" in d.value]
    assert "eval" not in at.session_state["gen.box"]["latest"]                   # never even computed
    assert shown and all(not on for _, on in shown)
    assert any("hidden in presentation mode" in c.value for c in at.caption)


# ---------------------------------------------------------------------------------------------- finding 5
def test_5_an_over_budget_permission_is_one_pages_and_one_runs():
    """Attack: ticked on the Generative page, "Allow exceeding the budget" let the Clustering page (which has no such
    box) spend ε = 10 beyond the budget. Now each page has its own permission, used up by one run."""
    at = new_app().run()
    at.switch_page("pages/generative.py").run()
    at.checkbox(key=G.allow_over_key("generative")).check().run()
    at.session_state[S.EPS] = 10.0
    at.switch_page("pages/clustering.py").run()
    ok(at)
    at.button(key="clu.go").click().run()
    assert not at.exception
    assert any("beyond your budget" in e.value for e in at.error)
    ds = at.session_state[S.DATASET]
    assert not at.session_state[S.LEDGERS].get(ds.data_key) or not len(at.session_state[S.LEDGERS][ds.data_key])
    # the Clustering page's own box: one run goes ahead (recorded as over budget), the next is refused again
    at.checkbox(key=G.allow_over_key("clustering")).check().run()
    at.button(key="clu.go").click().run()
    ok(at)
    assert len(at.session_state[S.LEDGERS][ds.data_key]) == 1
    at.button(key="clu.go").click().run()
    assert any("beyond your budget" in e.value for e in at.error)
    assert len(at.session_state[S.LEDGERS][ds.data_key]) == 1


# ---------------------------------------------------------------------------------------------- finding 6
def test_6a_a_tick_does_not_declare_a_bound_read_off_the_private_rows():
    from dpkme.schema import ColumnSpec, TableSchema
    from ui import tables as T

    original = TableSchema([ColumnSpec("age", "integer", lower=18, upper=87)],
                           data_dependent={"age": ("lower", "upper")})          # 87: the private maximum
    frame = T.editor_frame(original, ["age"], data_dependent=("age",))
    frame["declared"] = True
    assert set(dict(T.schema_from_editor(frame, original=original).data_dependent_fields)["age"]) == {"lower", "upper"}
    frame.loc[frame["column"] == "age", "upper"] = "120"                          # a public limit, typed
    still = dict(T.schema_from_editor(frame, original=original).data_dependent_fields)
    assert set(still.get("age", ())) == {"lower"}


def test_6b_a_reset_keeps_every_charge_in_the_totals_the_budget_check_and_the_export():
    led = BudgetLedger(epsilon_budget=1.5, delta_budget=1e-5)
    led.add(pure_dp_charge("first", epsilon=1.0))
    led.reset()
    assert len(led) == 0 and len(led.archive) == 1
    assert led.totals()["basic"] == (1.0, 0.0)
    assert led.exceeds_budget(pure_dp_charge("second", epsilon=1.0))                # 2 > 1.5: still refused
    back = BudgetLedger.from_json(led.to_json())
    assert [c.id for c in back.archive] == [c.id for c in led.archive] and back.totals()["basic"] == (1.0, 0.0)


def test_a_charge_record_from_an_old_file_gets_an_id_and_keeps_its_relation():
    rec = {"label": "old", "mechanism": "laplace", "epsilon": 0.5, "delta": 0.0,
           "details": {"neighbouring": "replace-one", "parts": ["private rows"], "partition": "p1"}}
    c = PrivacyCharge.from_record(rec)
    assert c.relation.value == "replace-one" and c.parts == ("private rows",) and c.split_id == "p1" and c.id
