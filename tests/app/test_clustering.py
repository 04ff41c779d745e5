"""Clustering page (AppTest): budget split before the run, the charge first, k centres drawn in data space, the
local view marked as never released, accuracy-vs-ε curve, the paper's accountant table."""

import numpy as np
import pytest

from tests.support.app import decode, metric, new_app, ok, plotly_figures
from ui import state as S


@pytest.fixture
def clu_page():
    at = new_app().run()
    at.switch_page("pages/clustering.py").run()
    ok(at)
    return at


def _ledger(at):
    ds = at.session_state[S.DATASET]
    return at.session_state[S.LEDGERS][ds.data_key]


def _final_centres(at):
    fig = plotly_figures(at)[1]
    tr = next(t for t in fig["data"] if t.get("name") == "final centres (released)")
    return np.column_stack([decode(tr["x"]), decode(tr["y"])])


def test_default_plan_is_shown_before_any_run(clu_page):
    at = clu_page
    assert any("Run private k-means" in i.value for i in at.info)
    table = at.dataframe[0].value
    assert len(table) == 5 and np.allclose(table["share of the budget ((Δ/σ)²)"], 0.2)   # T = 5 equal steps
    assert metric(at, "Whole run") == "ε = 1"
    assert len(_ledger(at)) == 0                                   # nothing charged by looking at the plan
    at.number_input(key="clu.T").set_value(8).run()
    assert len(at.dataframe[0].value) == 8


def test_run_charges_first_and_draws_k_centres_with_their_paths(clu_page):
    at = clu_page
    at.button(key="clu.go").click().run()
    ok(at)
    res = at.session_state["clu.result"]["result"]
    assert res.k == 5 and res.centre_path().shape == (6, 5, 2)
    led = _ledger(at)
    assert len(led) == 1 and led.charges[0].epsilon == pytest.approx(1.0)
    assert led.charges[0].details["parts"] == (S.PART_PRIVATE,)
    assert _final_centres(at).shape == (5, 2)
    assert np.allclose(_final_centres(at), res.centre_path()[-1])
    assert any("LOCAL VIEW" in w.value for w in at.warning)         # the owner's colouring is labelled
    assert len(at.get("download_button")) == 2
    assert res.seed is None and res.noise_source == "os-entropy"     # a real run by default: no seed
    # changing k changes the number of released centres
    at.number_input(key="clu.k").set_value(3).run()
    at.button(key="clu.go").click().run()
    ok(at)
    assert _final_centres(at).shape == (3, 2) and len(_ledger(at)) == 2
    # without the local view no private row is coloured by cluster
    at.toggle(key="clu.colour").set_value(False).run()
    ok(at)
    assert not any("LOCAL VIEW" in w.value for w in at.warning)
    names = [t.get("name", "") for t in plotly_figures(at)[1]["data"]]
    assert "private rows (never released)" in names and not any("LOCAL VIEW" in n for n in names)


def test_released_json_has_no_local_view(clu_page):
    import json

    at = clu_page
    at.button(key="clu.go").click().run()
    d = at.session_state["clu.result"]["result"].to_dict()
    assert "local_view" not in json.dumps(d) and "labels" not in d


def test_replay_mode_run_is_a_demo_not_charged_and_its_json_says_so(clu_page):
    """Red team (issue 13): clustering JSON exports carried the seed without the warning."""
    from ui.export import privacy_fields

    at = clu_page
    at.radio(key="clu.noise").set_value("seeded").run()
    at.button(key="clu.go").click().run()
    assert not at.exception
    stored = at.session_state["clu.result"]
    res = stored["result"]
    assert res.seed == 0 and stored["charge"] is None and len(_ledger(at)) == 0
    assert any("NOT differentially private" in e.value for e in at.error)
    fields = privacy_fields(res, app_private=not stored["problems"], reasons=stored["problems"])
    assert fields["differentially_private"] is False and fields["status"] == "replayable demo, not private"
    assert at.number_input(key="clu.seed").value == 1                # the next run gets the next unused seed
    # a real run: private, charged, and its JSON holds no seed
    at.radio(key="clu.noise").set_value("os-entropy").run()
    at.button(key="clu.go").click().run()
    ok(at)
    stored = at.session_state["clu.result"]
    fields = privacy_fields(stored["result"], app_private=True)
    assert fields["differentially_private"] is True and fields["seed"] is None and stored["result"].seed is None
    assert len(_ledger(at)) == 1


def test_budget_is_enforced(clu_page):
    at = clu_page
    at.session_state[S.BUDGET_EPS] = 0.5
    at.run()
    at.button(key="clu.go").click().run()
    assert any("beyond your budget" in e.value for e in at.error)
    assert len(_ledger(at)) == 0 and "clu.result" not in at.session_state


def test_accuracy_curve_produces_a_figure_and_costs_nothing(clu_page):
    at = clu_page
    at.number_input(key="clu.c_n").set_value(3).run()
    at.number_input(key="clu.c_reps").set_value(2).run()
    at.button(key="clu.c_go").click().run()
    ok(at)
    curve = at.session_state["clu.curve"]["curve"]
    assert list(curve.epsilons) == pytest.approx([0.1, 1.0, 10.0])
    fig = plotly_figures(at)[-1]
    assert "not DP" in fig["layout"]["title"]["text"]
    med = decode(next(t for t in fig["data"] if t.get("name") == "DP k-means (median)")["y"])
    assert med[-1] >= med[0]                                       # more ε, closer to non-private k-means
    assert len(_ledger(at)) == 0


def test_paper_accountant_understates_epsilon_under_replace_one(clu_page):
    at = clu_page
    tab = at.dataframe[-1].value
    paper = tab.iloc[0]
    pld = tab[tab["accounting"].str.startswith("PLD")].iloc[0]
    assert pld["replace-one"] > paper["replace-one"]
    assert pld["add/remove"] < paper["add/remove"]


def test_size_guard_on_a_large_dataset(clu_page):
    """N = 200 000 rows, T = 30 Lloyd steps with J = 2000 features: the run and the curve ask first."""
    import dataclasses

    at = clu_page
    ds = at.session_state[S.DATASET]
    at.session_state[S.DATASET] = dataclasses.replace(ds, X=np.tile(ds.X, (200_000 // ds.n + 1, 1))[:200_000],
                                                      key=ds.key + "-big")
    at.number_input(key="clu.T").set_value(30).run()
    at.select_slider(key="clu.J").set_value(2000).run()
    ok(at)
    assert at.button(key="clu.go").disabled and at.button(key="clu.c_go").disabled
    assert sum("Large computation" in w.value for w in at.warning) == 2
    next(c for c in at.checkbox if c.key.startswith("clu.size.confirm.")).check().run()
    assert not at.button(key="clu.go").disabled and at.button(key="clu.c_go").disabled
    assert len(_ledger(at)) == 0                                   # nothing ran, nothing charged
