"""Privacy audit page, membership-inference section (AppTest): runs on demand, plots the attack's accuracy with
its error bars against ε next to the DP bound, the Gaussian theory and the 50 % line; the size guard asks first."""

import json

import numpy as np

from dpkme.audit.membership import DEFAULT_ATTACK_EPSILONS, MembershipAttack, membership_bound
from dpkme.cost import estimate_cost
from tests.support.app import decode, new_app, ok


def _page():
    at = new_app().run()
    at.switch_page("pages/audit.py").run()
    ok(at)
    return at


def _figure(at, key: str = "aud.mia_fig") -> dict:
    for el in at.get("plotly_chart"):
        if el.proto.id.endswith(f"-{key}"):
            return json.loads(el.proto.spec)
    raise AssertionError(f"no chart {key!r}")


def test_the_attack_runs_on_demand_and_plots_against_the_bound():
    at = _page()
    assert at.selectbox(key="mia.mech").value == "algorithm2"
    assert at.select_slider(key="mia.delta").value == 1e-5
    assert "mia.result" not in at.session_state and not at.button(key="mia.go").disabled
    assert any("No attack yet" in i.value for i in at.info)
    at.select_slider(key="mia.runs").set_value(200).run()
    at.button(key="mia.go").click().run()
    ok(at)
    res = at.session_state["mia.result"]
    assert isinstance(res, MembershipAttack) and res.runs == 200 and res.delta == 1e-5
    assert res.epsilons.tolist() == sorted(DEFAULT_ATTACK_EPSILONS) and not res.above_bound.any()
    fig = _figure(at)
    traces = {t["name"]: t for t in fig["data"]}
    bound = next(t for n, t in traces.items() if n.startswith("bound for any attacker"))
    theory = next(t for n, t in traces.items() if n.startswith("theory for this Gaussian noise"))
    runs = next(t for n, t in traces.items() if n.startswith("attack on 200"))
    x, y = decode(bound["x"]), decode(bound["y"])
    np.testing.assert_allclose(y, membership_bound(x, 1e-5))
    assert np.all(decode(theory["y"]) <= y + 1e-12)                        # theory under the bound
    np.testing.assert_allclose(decode(runs["y"]), res.accuracy)
    np.testing.assert_allclose(decode(runs["error_y"]["array"]), res.accuracy_high - res.accuracy)
    np.testing.assert_allclose(decode(runs["error_y"]["arrayminus"]), res.accuracy - res.accuracy_low)
    assert any(s.get("y0") == 0.5 and s.get("y1") == 0.5 for s in fig["layout"]["shapes"])   # chance line
    assert fig["layout"]["xaxis"]["type"] == "log"
    reading = [m.value for m in at.markdown if m.value.startswith("At ε = 1 the attacker")]
    assert reading and "coin toss" in reading[0]
    # changing a setting marks the result as stale, nothing reruns by itself
    at.select_slider(key="mia.delta").set_value(1e-3).run()
    ok(at)
    assert at.session_state["mia.result"] is res
    assert any("other settings" in i.value for i in at.info)


def test_algorithm1_can_be_attacked_too():
    at = _page()
    at.selectbox(key="mia.mech").set_value("algorithm1").run()
    at.select_slider(key="mia.runs").set_value(200).run()
    at.button(key="mia.go").click().run()
    ok(at)
    assert at.session_state["mia.result"].mechanism == "algorithm1"
    _figure(at)


def test_a_long_attack_needs_confirmation_first():
    at = _page()
    runs = 10000
    assert estimate_cost("audit", audit="algorithm2", runs=runs * len(DEFAULT_ATTACK_EPSILONS)).needs_confirmation
    at.select_slider(key="mia.runs").set_value(runs).run()
    assert not at.exception
    assert at.button(key="mia.go").disabled
    box = next(c for c in at.checkbox if c.key.startswith("mia.size.confirm"))
    box.check().run()
    assert not at.exception and not at.button(key="mia.go").disabled
    assert "mia.result" not in at.session_state                           # nothing ran
