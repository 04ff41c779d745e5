"""Privacy–utility curves page (AppTest): the default sweep, the effect of ε, a paper preset, the export."""

import numpy as np
import pytest

from tests.support.app import new_app, ok, plotly_figures, public_app
from ui import state as S


@pytest.fixture(scope="module")
def swept():
    at = new_app().run()
    at.switch_page("pages/curves.py").run()
    ok(at)
    assert any("Compute curves" in i.value for i in at.info)
    at.button(key="crv.go").click().run()
    ok(at)
    return at


def test_default_sweep_draws_both_curves(swept):
    figs = plotly_figures(swept)
    assert len(figs) == 2
    names = [t["name"] for t in figs[0]["data"]]
    assert "uniform baseline" in names and "noise-free projection" in names
    assert sum(n.startswith("Algorithm 1, ε =") and not n.endswith("band") for n in names) == 4    # 4 ε values, 0.01 .. 10
    assert len(swept.get("download_button")) == 1


def test_more_privacy_means_larger_error(swept):
    t = swept.session_state[S.CURVES]["table"]
    alg = t[t["method"] == "Algorithm 1"]
    m_max = alg["M"].max()
    at_max = alg[alg["M"] == m_max].groupby("epsilon")["distance"].mean()
    assert list(at_max.index) == sorted(at_max.index)
    assert at_max.iloc[0] > at_max.iloc[-1]                      # ε = 0.01 is much worse than ε = 10
    proj = t[(t["method"] == "noise-free projection") & (t["M"] == m_max)]["distance"].iloc[0]
    assert (alg[alg["M"] == m_max]["distance"] >= proj - 1e-12).all()   # noise never helps the projection


def test_reps_and_grid_in_the_exported_table(swept):
    t = swept.session_state[S.CURVES]["table"]
    alg = t[t["method"] == "Algorithm 1"]
    assert sorted(alg["rep"].unique()) == [0, 1, 2]
    assert alg["M"].max() == 250 and alg["M"].min() == 1
    assert set(t.columns) >= {"scenario", "method", "M", "epsilon", "rep", "distance"}


def test_changed_inputs_mark_the_curves_stale(swept):
    at = swept
    at.number_input(key="crv.reps").set_value(2).run()
    assert any("other settings" in w.value for w in at.warning)


def test_paper_figure1_preset_runs_at_reduced_size():
    at = new_app().run()
    at.switch_page("pages/curves.py").run()
    at.radio(key="crv.preset").set_value("fig1").run()
    at.select_slider(key="crv.paper_n").set_value(5000).run()
    at.select_slider(key="crv.paper_m").set_value(500).run()
    at.number_input(key="crv.reps").set_value(1).run()
    at.button(key="crv.go").click().run()
    ok(at)
    t = at.session_state[S.CURVES]["table"]
    alg = t[t["method"] == "Algorithm 1"]
    assert sorted(alg["epsilon"].unique()) == [0.01, 0.1, 1.0]
    # Figure 1's shape: at small M Algorithm 1 (ε = 1) beats the baseline
    base = t[(t["method"] == "uniform baseline")].set_index("M")["distance"]
    a1 = alg[alg["epsilon"] == 1.0].set_index("M")["distance"]
    small = [m for m in a1.index if 10 <= m <= 100]
    assert np.all(a1[small] < base[small])


@pytest.mark.parametrize("preset,data", [("exp", "mix1"), ("exp", "current"), ("gp", "mix2")])
def test_comparisons_at_equal_epsilon(preset, data):
    # the current data's candidates are its declared-public rows (the default data publishes none)
    at = (public_app() if data == "current" else new_app()).run()
    at.switch_page("pages/curves.py").run()
    at.radio(key="crv.preset").set_value(preset).run()
    ok(at)
    at.radio(key="crv.cmp_data").set_value(data).run()
    at.number_input(key="crv.cmp_neps").set_value(3).run()
    at.number_input(key="crv.reps").set_value(2).run()
    at.button(key="crv.cmp_go").click().run()
    ok(at)
    out = at.session_state["crv.cmp_result"]["out"]
    t = out["table"]
    first = "exponential mechanism" if preset == "exp" else "GP release (expected)"
    assert set(t["method"]) == {first, "Algorithm 1", "Algorithm 2"}
    assert sorted(t["epsilon"].unique()) == pytest.approx([0.01, 0.316228, 10.0])
    names = {tr["name"] for tr in plotly_figures(at)[0]["data"]}
    assert {first, "Algorithm 1", "Algorithm 2"} <= names
    lead = t[t["method"] == first].sort_values("epsilon")["value"].to_numpy()
    assert lead[0] > lead[-1]                                   # more privacy, larger error
    if preset == "exp":
        assert out["best"] <= lead.min() + 1e-12                # never better than the best database of size M
    else:
        assert out["truth_l2"] > 0
    assert len(at.get("download_button")) == 1


def test_a_large_paper_preset_waits_for_confirmation():
    at = new_app().run()
    at.switch_page("pages/curves.py").run()
    at.radio(key="crv.preset").set_value("fig2").run()
    at.radio(key="crv.paper_dim").set_value(5).run()
    at.select_slider(key="crv.paper_n").set_value(50000).run()
    at.select_slider(key="crv.paper_m").set_value(5000).run()
    at.number_input(key="crv.reps").set_value(20).run()
    ok(at)
    assert at.button(key="crv.go").disabled
    assert any("Large computation" in w.value for w in at.warning)
    at.number_input(key="crv.reps").set_value(1).run()
    at.select_slider(key="crv.paper_n").set_value(5000).run()
    at.select_slider(key="crv.paper_m").set_value(500).run()
    assert not at.button(key="crv.go").disabled


def test_a_lengthscale_outside_the_kernel_range_is_an_error_not_a_traceback():
    """Regression (fuzzing): with ℓ = 1e101 typed on the Kernel page (its input has no upper bound), the Curves
    page built the kernel outside any guard and showed a traceback."""
    at = new_app().run()
    at.switch_page("pages/kernel.py").run()
    at.number_input(key=S.LENGTHSCALE).set_value(1e101).run()
    assert not at.exception
    at.switch_page("pages/curves.py").run()
    assert not at.exception, [e.value for e in at.exception]
    assert "Could not build the kernel" in " ".join(e.value for e in at.error)
    assert "lengthscale must lie in" in " ".join(e.value for e in at.error)
