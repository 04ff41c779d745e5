"""Kernel & privacy page, "Plan ε from the accuracy you need" (AppTest): the planned ε is the library's, from
public quantities only; "Use this ε" sets the ε control; planning releases nothing and charges nothing."""

import pytest

from dpkme.privacy.planning import (
    epsilon_for_mean_error,
    epsilon_for_rkhs_error,
    expected_mean_error,
    expected_rkhs_error,
)
from tests.support.app import as_float, errors, metric, ok, public_app
from ui import state as S


@pytest.fixture
def page():
    at = public_app().run()
    at.switch_page("pages/kernel.py").run()
    ok(at)
    return at


def _planned(at) -> float:
    return as_float(metric(at, "ε that meets the target"))


def test_the_expander_is_labelled_planning_and_starts_at_the_current_error(page):
    at = page
    assert any("planning: not a release, spends no budget" in e.label for e in at.expander)
    ds = at.session_state[S.DATASET]
    J = int(at.session_state[S.N_FEATURES])
    now = expected_rkhs_error(1.0, n_private=ds.n, delta=1e-6, n_features=J)
    assert at.number_input(key="kern.plan_rkhs").value == float(f"{now:.2g}")
    assert _planned(at) == pytest.approx(1.0, rel=0.05)                     # the current ε, up to 2 digits of target


def test_use_this_epsilon_sets_the_epsilon_control_and_charges_nothing(page):
    at = page
    ds = at.session_state[S.DATASET]
    J = int(at.session_state[S.N_FEATURES])
    at.number_input(key="kern.plan_rkhs").set_value(0.02).run()
    ok(at)
    plan = epsilon_for_rkhs_error(0.02, n_private=ds.n, delta=1e-6, n_features=J)
    assert _planned(at) == plan.epsilon
    at.button(key="kern.plan_use").click().run()
    ok(at)
    assert at.session_state[S.EPS_TYPED] is True                          # 0.02 needs an ε off the slider's grid
    assert at.session_state[S.EPS_VALUE] == plan.epsilon
    # the round trip through the page: at the ε now set, the expected error is within the target
    assert expected_rkhs_error(plan.epsilon, n_private=ds.n, delta=1e-6, n_features=J) <= 0.02
    assert not at.session_state[S.LEDGERS].get(ds.data_key)                # planning spends no budget
    # a planned ε on the slider's grid goes to the slider (and the typed value is switched off)
    at.radio(key="kern.plan_kind").set_value("proportion").run()
    target = expected_mean_error(2.0, n_private=ds.n, delta=1e-6) * (1 + 1e-9)
    at.number_input(key="kern.plan_proportion").set_value(100 * target).run()
    ok(at)
    assert _planned(at) == 2.0 == epsilon_for_mean_error(target, n_private=ds.n, delta=1e-6).epsilon
    at.button(key="kern.plan_use").click().run()
    ok(at)
    assert at.session_state[S.EPS_TYPED] is False and at.session_state[S.EPS] == 2.0
    assert not at.session_state[S.LEDGERS].get(ds.data_key)


def test_proportion_and_mean_with_a_declared_range(page):
    at = page
    ds = at.session_state[S.DATASET]
    at.radio(key="kern.plan_kind").set_value("mean").run()
    at.number_input(key="kern.plan_range").set_value(40.0).run()
    at.number_input(key="kern.plan_mean").set_value(0.05).run()
    ok(at)
    assert _planned(at) == epsilon_for_mean_error(0.05, n_private=ds.n, value_range=40.0, delta=1e-6).epsilon
    at.radio(key="kern.plan_kind").set_value("proportion").run()
    at.number_input(key="kern.plan_proportion").set_value(0.5).run()                 # half a percentage point
    ok(at)
    assert _planned(at) == epsilon_for_mean_error(0.005, n_private=ds.n, delta=1e-6).epsilon
    at.button(key="kern.plan_use").click().run()
    ok(at)
    eps = epsilon_for_mean_error(0.005, n_private=ds.n, delta=1e-6).epsilon
    assert (at.session_state[S.EPS_VALUE] if at.session_state[S.EPS_TYPED] else at.session_state[S.EPS]) == eps


def test_an_unreachable_target_is_an_error_message_not_a_crash(page):
    at = page
    at.number_input(key="kern.plan_rkhs").set_value(1e-7).run()
    assert not at.exception
    assert "target=1e-07" in errors(at) and "max_epsilon" in errors(at)
