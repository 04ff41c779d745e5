"""The two-sample lab: bundled cases, curves, progress callbacks, Monte-Carlo bands."""

from __future__ import annotations

import json

import numpy as np
import pytest
from scipy import stats

from dpkme.two_sample.lab import (
    CASES,
    LAB_METHODS,
    case_features,
    clopper_pearson,
    make_case,
    monte_carlo_band,
    rejection_curve,
    split_public,
)


@pytest.mark.parametrize("name, dim", [("SG", 50), ("GMD", 100), ("GVD", 50)])
def test_cases(name, dim):
    c = make_case(name, 400, n_public=100, random_state=0)
    assert c.X.shape == (400, dim) and c.Y.shape == (400, dim) and c.public[0].shape == (100, dim)
    assert c.h0_true == (name == "SG") and c.seed == 0
    mean_gap = c.Y.mean(0)[0] - c.X.mean(0)[0]
    var_ratio = c.Y[:, 0].var() / c.X[:, 0].var()
    if name == "GMD":
        assert mean_gap == pytest.approx(1.0, abs=0.25)
    if name == "GVD":
        assert var_ratio == pytest.approx(2.0, rel=0.3)
    small = make_case(name, 10, dim=3, random_state=1)
    assert small.X.shape == (10, 3)
    f = case_features(small, n_features=4, random_state=0)
    pool = np.vstack(small.public)
    assert all(any(np.allclose(v, p) for p in pool) for v in f.locations)  # locations from public rows only
    assert not any(np.allclose(v, x) for v in f.locations for x in np.vstack([small.X, small.Y]))


def test_case_validation():
    with pytest.raises(ValueError, match="case"):
        make_case("XX", 10)
    with pytest.raises(ValueError, match="too large"):
        make_case("SG", 10**6, dim=100)
    assert set(CASES) == {"SG", "GMD", "GVD"}


def test_bands_and_intervals():
    lo, hi = monte_carlo_band(0.05, 200)
    assert lo == pytest.approx(stats.binom.ppf(0.025, 200, 0.05) / 200) and lo < 0.05 < hi
    a, b = clopper_pearson(10, 200)
    assert a < 0.05 < b
    assert clopper_pearson(0, 10)[0] == 0.0 and clopper_pearson(10, 10)[1] == 1.0


def test_rejection_curve_structure_progress_and_replay():
    calls = []
    kw = dict(vary="epsilon", values=[1.0, 5.0], methods=["nonprivate", "tcmc", "tcmc-naive", "paper", "paper-naive"],
              n=200, repetitions=6, dim=4, n_features=3, n_public=50, random_state=3, n_null=200)
    r = rejection_curve("GMD", progress=lambda d, t, info: calls.append((d, t, info["value"])), **kw)
    assert r.completed and r.repetitions == [6, 6] and len(calls) == 12 and calls[-1][:2] == (12, 12)
    rates = r.rates()
    assert set(rates) == set(kw["methods"]) and all(0 <= x <= 1 for v in rates.values() for x in v)
    d = r.to_dict()
    json.dumps(d)
    assert d["seed"] == 3 and len(d["band"]) == 2
    again = rejection_curve("GMD", **kw)
    assert again.rejections == r.rejections  # replayable from the root seed
    # stop after 4 repetitions
    stopped = rejection_curve("GMD", progress=lambda d, t, info: d < 4, **kw)
    assert not stopped.completed and stopped.repetitions == [4, 0]
    assert np.isnan(stopped.rates()["tcmc"][1])


def test_rejection_curve_vary_n_and_validation():
    r = rejection_curve("SG", vary="n", values=[50, 80], methods=["nte"], epsilon=2.0, repetitions=2, dim=3,
                        n_features=2, n_public=30, random_state=0, n_null=100)
    assert r.values == [50, 80] and r.params["epsilon"] == 2.0
    with pytest.raises(ValueError, match="method"):
        rejection_curve("SG", methods=["mmd"], repetitions=1)
    with pytest.raises(ValueError, match="vary"):
        rejection_curve("SG", vary="delta", repetitions=1)
    with pytest.raises(ValueError, match="int"):
        rejection_curve("SG", random_state=np.random.default_rng(0), repetitions=1)
    assert set(LAB_METHODS) >= {"nonprivate", "tcmc", "tcmc-naive", "paper-naive", "nte"}


def test_naive_null_inflates_type_one_error_of_the_paper_statistic():
    """Raj et al.'s Fig. 6: the chi-square null on the private statistic rejects far too often.

    SG, n = 300, d = 4, epsilon = 1, 20 repetitions: the paper statistic with the chi-square null
    rejects in (nearly) every repetition; a level-0.05 test would reject >= 10 of 20 with
    probability 1e-9.
    """
    r = rejection_curve("SG", values=[1.0], methods=["paper-naive", "tcmc"], n=300, repetitions=20, dim=4,
                        n_features=3, n_public=50, random_state=1, n_null=200)
    assert r.rejections["paper-naive"][0] >= 10
    assert r.rejections["tcmc"][0] <= 5  # P(Bin(20, .05) > 5) = 3e-4


def test_split_public_keeps_pairs_and_is_disjoint():
    rng = np.random.default_rng(0)
    X = np.arange(40.0).reshape(20, 2)
    Y = X + 1000
    Xt, Yt, (Xp, Yp), info = split_public(X, Y, public_fraction=0.25, random_state=3)
    assert info["paired_split"] and info["n_public"] == (5, 5) and info["n_test"] == (15, 15) and info["seed"] == 3
    assert np.array_equal(Yt, Xt + 1000) and np.array_equal(Yp, Xp + 1000)  # pairs stay together
    assert not set(map(tuple, Xp)) & set(map(tuple, Xt))
    _Xt2, Yt2, (_Xp2, Yp2), info2 = split_public(X, rng.standard_normal((30, 2)), public_fraction=0.2, random_state=1)
    assert not info2["paired_split"] and Yt2.shape == (24, 2) and Yp2.shape == (6, 2)
    with pytest.raises(ValueError, match="public_fraction"):
        split_public(X, Y, public_fraction=1.5)
