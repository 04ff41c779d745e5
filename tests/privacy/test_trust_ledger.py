"""Red-team tests of the ledger (issue 13): the accounting unit is the person, whatever the split.

A ledger composes charges on disjoint parts of one split in parallel. If the split changes after budget
was spent, rows move between parts: a person who was held out may now be private and has paid for both.
"""

from __future__ import annotations

import json

import pytest

from dpkme.privacy.accounting import BudgetLedger, PrivacyCharge, gaussian_charge, pld_epsilon, pure_dp_charge
from dpkme.privacy.calibration import calibrate_gaussian


def _gauss(label, part, eps=1.0, delta=1e-6):
    cal = calibrate_gaussian(epsilon=eps, delta=delta, sensitivity=1.0)
    return gaussian_charge(label, cal, details={"parts": (part,)})


def test_split_change_after_spending_cannot_lower_reported_epsilon():
    """The review's example: a held-out test at ε = 1, then (after a split change) a release at ε = 1.

    Reported before the fix: ε = 0.872 'per part' at δ = 1e-5; for the people in both parts the truth is the
    sequential composition of both (≈ 1.277 by PLD)."""
    led = BudgetLedger(partition="split-seed-0")
    led.add(_gauss("held-out test", "held-out rows"))
    led.partition = "split-seed-1"                    # the user changed the split on the Data page
    led.add(_gauss("Algorithm 1", "private rows"))
    truth = pld_epsilon(list(led.charges), delta=1e-5)
    reported = led.totals(delta=1e-5)["best"][0]
    assert truth == pytest.approx(1.277, abs=0.01)
    assert reported >= truth - 1e-12
    assert led.split_changed
    assert "parts" not in led.totals(delta=1e-5)          # no parallel composition was claimed


def test_same_split_keeps_parallel_composition():
    led = BudgetLedger(partition="split-seed-0")
    led.add(_gauss("held-out test", "held-out rows"))
    led.add(_gauss("Algorithm 1", "private rows"))
    tot = led.totals(delta=1e-5)
    assert set(tot["parts"]) == {"held-out rows", "private rows"}
    assert tot["best"][0] == pytest.approx(pld_epsilon([led.charges[0]], delta=1e-5), rel=1e-9)
    assert not led.split_changed


def test_budget_check_uses_sequential_composition_after_split_change():
    led = BudgetLedger(epsilon_budget=1.5, delta_budget=0.0, partition="A")
    led.add(pure_dp_charge("test", epsilon=1.0, details={"parts": ("held-out rows",)}))
    led.partition = "B"
    extra = pure_dp_charge("release", epsilon=1.0, details={"parts": ("private rows",)})
    assert led.exceeds_budget(extra)                   # 2 > 1.5: the same extra was fine under split A
    led.partition = "A"
    assert not led.exceeds_budget(extra)


def test_charge_stamped_with_current_partition_only_when_it_has_parts():
    led = BudgetLedger(partition="A")
    a = led.add(pure_dp_charge("x", epsilon=1.0, details={"parts": ("private rows",)}))
    b = led.add(pure_dp_charge("y", epsilon=1.0))
    assert a.details["partition"] == "A"
    assert "partition" not in b.details


def test_ledger_json_round_trip_keeps_every_charge_and_the_split():
    led = BudgetLedger(epsilon_budget=5.0, delta_budget=1e-5, partition="A")
    led.add(_gauss("held-out test", "held-out rows"))
    led.add(pure_dp_charge("lengthscale", epsilon=0.1))
    led.partition = "B"
    led.add(_gauss("release", "private rows", eps=0.5))
    text = led.to_json(name="paper mixture")
    assert "seed" not in text
    back = BudgetLedger.from_json(text)
    assert back.charges == led.charges
    assert (back.epsilon_budget, back.delta_budget, back.partition) == (5.0, 1e-5, "B")
    assert back.totals(delta=1e-5) == led.totals(delta=1e-5)


@pytest.mark.parametrize("bad, what", [
    ("{", "not valid JSON"),
    ("[]", "not a dpkme ledger"),
    (json.dumps({"format": "dpkme-ledger/1", "charges": 3}), "list of charges"),
    (json.dumps({"format": "dpkme-ledger/1", "charges": [{"label": "x"}]}), "charge 0"),
    (json.dumps({"format": "dpkme-ledger/1", "charges": [
        {"label": "x", "mechanism": "gaussian", "epsilon": 1.0, "delta": 1e-6, "noise_multiplier": 0.1}]}),
     "under-count"),
    (b"\xff\xfe", "UTF-8"),
])
def test_ledger_json_refuses_malformed_or_understated_files(bad, what):
    with pytest.raises(ValueError, match=what):
        BudgetLedger.from_json(bad)


def test_charge_record_round_trip():
    c = _gauss("x", "private rows")
    assert PrivacyCharge.from_record(json.loads(json.dumps(c.to_record()))) == c
