"""dpkme.two_sample.curves: the Two-sample page's rejection curves as library functions.

The page's expectation (tests/test_app_twosample.py) holds for the function itself: on SG (H₀ true) the naive
χ² null on the paper's perturbed statistic rejects far more often than α, the noise-aware TCMC test does not.
The series and the table are checked against the curve's own rates and intervals; a stopped (partial) curve
keeps only the values it reached; the χ² reference against the closed form of χ²₂.
"""

from __future__ import annotations

import math
from types import SimpleNamespace

import numpy as np
import pytest

from dpkme.two_sample.curves import chi2_reference, curve_series, curve_table, run_rejection_curve
from dpkme.two_sample.lab import CASES, CurveResult


@pytest.fixture(scope="module")
def sg_curve():
    return run_rejection_curve("SG", vary="epsilon", values=[1.0], methods=["nonprivate", "tcmc", "paper-naive"],
                               n=1000, epsilon=1.0, delta=1e-5, repetitions=20, alpha=0.05,
                               dim=CASES["SG"].default_dim, feature_kind="scf", n_features=5, random_state=0)


def test_the_naive_null_inflates_the_type_one_error(sg_curve):
    rates = sg_curve.rates()
    assert sg_curve.completed and sg_curve.repetitions == [20]
    assert rates["paper-naive"][0] > 0.5 > rates["tcmc"][0]


def test_series_follows_the_curve(sg_curve):
    s = curve_series(sg_curve)
    rates, ints = sg_curve.rates(), sg_curve.intervals()
    assert s["done"] == [0] and s["x"] == [1.0] and s["h0_true"] is True
    lo, hi = s["band"]
    assert len(lo) == len(hi) == 1 and 0 <= lo[0] <= 0.05 <= hi[0] <= 1
    for m in sg_curve.methods:
        sm = s["methods"][m]
        assert sm["rate"] == rates[m]
        assert sm["err_low"][0] == pytest.approx(rates[m][0] - ints[m][0][0])
        assert sm["err_high"][0] == pytest.approx(ints[m][0][1] - rates[m][0])
        assert sm["err_low"][0] >= 0 and sm["err_high"][0] >= 0


def test_table_has_one_row_per_method_and_value(sg_curve):
    rows = curve_table(sg_curve)
    assert [r["method"] for r in rows] == list(sg_curve.methods)
    for r in rows:
        assert set(r) == {"method", "epsilon", "repetitions", "rejections", "rate", "ci_low", "ci_high"}
        assert r["rate"] == pytest.approx(r["rejections"] / r["repetitions"])
        assert r["ci_low"] <= r["rate"] <= r["ci_high"]


def test_a_partial_curve_keeps_only_the_values_it_reached():
    curve = CurveResult(case="GMD", vary="n", values=[500, 1000, 2000], methods=["tcmc", "nonprivate"],
                        rejections={"tcmc": [2, 1, 0], "nonprivate": [3, 2, 0]}, repetitions=[4, 2, 0], alpha=0.05,
                        completed=False)
    s = curve_series(curve)
    assert s["done"] == [0, 1] and s["x"] == [500, 1000]
    assert s["h0_true"] is False and s["band"] is None                  # power curve: no level-α band
    assert s["methods"]["tcmc"]["rate"] == [0.5, 0.5] and s["methods"]["nonprivate"]["rate"] == [0.75, 1.0]
    rows = curve_table(curve)
    assert len(rows) == 4 and {r["n"] for r in rows} == {500, 1000}
    assert all(not math.isnan(r["rate"]) for r in rows)


def test_nothing_done_gives_empty_series():
    curve = CurveResult(case="SG", vary="epsilon", values=[1.0], methods=["tcmc"], rejections={"tcmc": [0]},
                        repetitions=[0], alpha=0.05, completed=False)
    s = curve_series(curve)
    assert s["x"] == [] and s["band"] is None and s["methods"]["tcmc"]["rate"] == []
    assert curve_table(curve) == []


@pytest.mark.parametrize("values, methods, match", [([], ["tcmc"], "at least one ε value"),
                                                      ([1.0], [], "at least one test")])
def test_empty_requests_are_refused_before_running(values, methods, match):
    with pytest.raises(ValueError, match=match):
        run_rejection_curve("SG", vary="epsilon", values=values, methods=methods, n=500, epsilon=1.0, delta=1e-5,
                            repetitions=10, alpha=0.05, dim=5, feature_kind="scf", n_features=2, random_state=0)
    with pytest.raises(ValueError, match="at least one n value"):
        run_rejection_curve("SG", vary="n", values=[], methods=["tcmc"], n=500, epsilon=1.0, delta=1e-5,
                            repetitions=10, alpha=0.05, dim=5, feature_kind="scf", n_features=2, random_state=0)


def test_values_are_run_in_increasing_order():
    curve = run_rejection_curve("SG", vary="epsilon", values=[5.0, 1.0], methods=["nonprivate"], n=300,
                                epsilon=1.0, delta=1e-5, repetitions=2, alpha=0.05, dim=5, feature_kind="scf",
                                n_features=2, random_state=0)
    assert list(curve.values) == [1.0, 5.0] and curve.repetitions == [2, 2]


def test_chi2_reference_matches_the_closed_form():
    res = SimpleNamespace(null=SimpleNamespace(samples=np.linspace(0.0, 4.0, 101)), n_features=2, statistic=30.0)
    ref = chi2_reference(res)
    assert ref["dof"] == 2 and ref["hi"] == pytest.approx(30.0 * 1.05)   # the statistic is the largest
    assert ref["x"][0] == 0.0 and ref["x"][-1] == pytest.approx(ref["hi"]) and ref["x"].shape == (300,)
    assert np.allclose(ref["pdf"], 0.5 * np.exp(-ref["x"] / 2))           # χ²₂ density
    small = chi2_reference(SimpleNamespace(null=res.null, n_features=2, statistic=0.1))
    assert small["hi"] == pytest.approx(-2 * math.log(0.005) * 1.05)      # χ²₂'s 99.5 % quantile
