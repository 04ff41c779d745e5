"""dpkme.privacy.leaks and dpkme.privacy.bandwidth: leak warnings and marks, public/private bandwidths (the size guard: metrics/test_cost.py)."""

from __future__ import annotations

import json
import math
import warnings
from fractions import Fraction

import numpy as np
import pytest
from scipy.spatial.distance import pdist

from dpkme.audit import audit_scores
from dpkme.kernels.kernel import GaussianKernel
from dpkme.privacy.accounting import BudgetLedger
from dpkme.privacy.bandwidth import (
    lengthscale_grid,
    lengthscale_sensitivity,
    lengthscale_utility,
    pair_distance_cdf,
    private_lengthscale,
    public_lengthscale,
)
from dpkme.privacy.leaks import (
    LeakRecord,
    PrivacyLeakWarning,
    find_data_dependent_inputs,
    is_private,
    leak_reasons,
    mark_not_private,
    warn_data_dependent,
)
from dpkme.release.result import Release
from dpkme.release.subspace import algorithm1


# --------------------------------------------------------------------------- leak warnings and marks
def _release(seed=0):
    X = np.random.default_rng(seed).normal(size=(30, 2))
    Z = np.random.default_rng(1).normal(size=(5, 2))
    return algorithm1(X, Z, kernel=GaussianKernel(lengthscale=1.0), epsilon=1.0, delta=1e-5, random_state=0)


def test_privacy_leak_warning_is_a_user_warning():
    assert issubclass(PrivacyLeakWarning, UserWarning)
    with pytest.warns(PrivacyLeakWarning, match="lengthscale was derived from the private data"):
        rec = warn_data_dependent("lengthscale", "median heuristic on the private rows")
    assert isinstance(rec, LeakRecord) and "private_lengthscale" in rec.remedy
    assert rec.to_dict()["parameter"] == "lengthscale"


def test_mark_not_private_is_exported_in_metadata():
    rel = _release()
    assert is_private(rel) and leak_reasons(rel) == []
    with pytest.warns(PrivacyLeakWarning):
        rec = warn_data_dependent("domain", "min/max of the private data")
    with pytest.warns(PrivacyLeakWarning, match="not private"):
        out = mark_not_private(rel, [rec, "M chosen by the error on the private data"])
    assert out is rel and not is_private(rel)
    assert len(leak_reasons(rel)) == 2
    meta = json.loads(rel.to_json(include_points=False))
    assert meta["params"]["private"] is False and len(meta["params"]["privacy_leaks"]) == 2
    back = Release.from_json(rel.to_json())
    assert not is_private(back)
    # marking again appends
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        mark_not_private(rel, "again", warn=False)
    assert len(leak_reasons(rel)) == 3


@pytest.mark.parametrize("bad", [object(), None, 3])
def test_mark_not_private_needs_a_release(bad):
    with pytest.raises(ValueError, match="params"):
        mark_not_private(bad, "x", warn=False)


@pytest.mark.parametrize("reason", ["", "  ", [], [3], None])
def test_mark_not_private_needs_a_reason(reason):
    with pytest.raises(ValueError, match="reason"):
        mark_not_private(_release(), reason, warn=False)


def test_non_private_reference_is_not_private():
    from dpkme.clustering import kernel_kmeans

    X = np.random.default_rng(0).normal(size=(40, 2))
    res = kernel_kmeans(X, k=2, n_iter=2, kernel=GaussianKernel(lengthscale=1.0), n_features=20,
                        bounds=([-3, -3], [3, 3]), preimages="none", random_state=0)
    assert not is_private(res)


def test_find_data_dependent_inputs():
    rng = np.random.default_rng(0)
    X = rng.normal(size=(200, 3))
    med = float(np.median(pdist(X)))
    found = find_data_dependent_inputs(
        X, lengthscale=med, domain=(X.min(axis=0), [10.0, 10.0, 10.0]), center=X.mean(axis=0),
        scale=X.std(axis=0, ddof=1), points=np.vstack([X[:2], [[9.0, 9.0, 9.0]]]))
    params = [r.parameter for r in found]
    assert params == ["lengthscale", "domain", "center", "scale", "points"]
    assert "2 of the 3 points" in found[-1].source
    # Gaussian gamma from the median heuristic is caught too
    assert find_data_dependent_inputs(X, lengthscale=1.0 / (2 * med**2))
    # declared values pass
    clean = find_data_dependent_inputs(X, lengthscale=1.0, domain=([-5] * 3, [5] * 3), center=0.0, scale=1.0,
                                       points=rng.normal(size=(4, 3)))
    assert clean == []
    # a publishable subset is public by declaration
    assert find_data_dependent_inputs(X, points=X[:5], points_are_public_rows=True) == []
    with pytest.warns(PrivacyLeakWarning):
        find_data_dependent_inputs(X, center=np.median(X, axis=0), warn=True)
    with pytest.raises(ValueError, match="domain"):
        find_data_dependent_inputs(X, domain=5.0)


# --------------------------------------------------------------------------- bandwidths
def test_public_lengthscale_is_the_median_distance_of_public_rows():
    P = np.random.default_rng(0).normal(size=(102, 2))  # 5151 pairs: an odd count, so one middle value
    assert public_lengthscale(P) == pytest.approx(float(np.median(pdist(P))), rel=1e-9)
    with pytest.raises(ValueError):
        public_lengthscale(np.zeros((1, 2)))


def test_lengthscale_grid():
    g = lengthscale_grid(0.1, 10.0, 5)
    assert g[0] == pytest.approx(0.1) and g[-1] == pytest.approx(10.0)
    assert np.allclose(np.diff(np.log(g)), np.log(10) / 2)
    for bad in [(1.0, 1.0, 5), (0.0, 1.0, 5), (1.0, 2.0, 1), (1.0, 2.0, True), (1.0, float("inf"), 5)]:
        with pytest.raises(ValueError):
            lengthscale_grid(*bad)


def test_pair_distance_cdf_matches_pdist():
    X = np.random.default_rng(1).normal(size=(300, 4))
    g = lengthscale_grid(0.5, 5.0, 12)
    d = pdist(X)
    assert np.allclose(pair_distance_cdf(X, g, pairs="all"), [(d <= x).mean() for x in g], atol=0)
    rng = np.random.default_rng(0)
    c = pair_distance_cdf(X, g, pairs="disjoint", rng=np.random.default_rng(0))
    perm = rng.permutation(300)
    dd = np.linalg.norm(X[perm[:150]] - X[perm[150:]], axis=1)
    assert np.allclose(c, [(dd <= x).mean() for x in g])
    with pytest.raises(ValueError, match="rng"):
        pair_distance_cdf(X, g, pairs="disjoint")


def _exact_utility(X, grid, q, pairs_idx):
    """Utility with exact rational counts, for the sensitivity check."""
    out = []
    for ell in grid:
        cnt = sum(1 for i, j in pairs_idx if np.linalg.norm(X[i] - X[j]) <= ell)
        out.append(-abs(Fraction(cnt, len(pairs_idx)) - Fraction(q).limit_denominator(1000)))
    return out


@pytest.mark.parametrize("pairs", ["all", "disjoint"])
def test_utility_sensitivity_brute_force(pairs):
    """|u(D, l) - u(D', l)| <= Delta_u for random replace-one neighbours (exact fractions, 200 pairs of datasets)."""
    rng = np.random.default_rng(2)
    grid = [0.3, 0.8, 1.5, 3.0]
    worst = Fraction(0)
    for _trial in range(200):
        n = int(rng.integers(2, 9))
        X = rng.normal(size=(n, 2)) * rng.choice([0.2, 1.0, 3.0])
        Xn = X.copy()
        Xn[int(rng.integers(n))] = rng.normal(size=2) * 3
        if pairs == "all":
            idx = [(i, j) for i in range(n) for j in range(i + 1, n)]
            delta = Fraction(2, n)
        else:
            perm = rng.permutation(n)
            idx = [(perm[k], perm[n // 2 + k]) for k in range(n // 2)]
            delta = Fraction(1, n // 2)
        assert float(delta) == pytest.approx(lengthscale_sensitivity(n, pairs))
        u, un = _exact_utility(X, grid, 0.5, idx), _exact_utility(Xn, grid, 0.5, idx)
        for a, b in zip(u, un):
            assert abs(a - b) <= delta
            worst = max(worst, abs(a - b) / delta)
    assert worst == 1  # the bound is attained


def test_private_lengthscale_probability_ratio_is_bounded():
    """Exact output distributions on neighbours differ by at most e^epsilon (all pairs)."""
    rng = np.random.default_rng(3)
    grid = lengthscale_grid(0.2, 5.0, 15)
    eps = 1.3
    for _ in range(50):
        n = int(rng.integers(3, 30))
        X = rng.normal(size=(n, 2))
        Xn = X.copy()
        Xn[0] = rng.normal(size=2) * 10
        ps = []
        for A in (X, Xn):
            c = private_lengthscale(A, grid=grid, epsilon=eps, pairs="all", random_state=0)
            ps.append(c.probabilities())
        assert np.max(np.abs(np.log(ps[0]) - np.log(ps[1]))) <= eps + 1e-9


def test_private_lengthscale_finds_the_median_and_charges_the_ledger():
    X = np.random.default_rng(4).normal(size=(1000, 2))
    grid = lengthscale_grid(0.05, 20.0, 40)
    c = private_lengthscale(X, grid=grid, epsilon=2.0, random_state=0)
    med = float(np.median(pdist(X)))
    # at N = 1000 the utility gap between neighbouring grid values is ~0.1 >> Delta_u / eps: the pick is a
    # grid neighbour of the median (probability of anything farther < 1e-9 by the mechanism's tail)
    assert abs(math.log(c.lengthscale / med)) <= math.log(grid[1] / grid[0]) * 1.01
    assert c.pairs == "all" and c.sensitivity == pytest.approx(2 / 1000)
    assert c.charge.mechanism == "exponential" and c.charge.epsilon == 2.0 and c.charge.delta == 0.0
    ledger = BudgetLedger()
    ledger.add(c.charge)
    assert ledger.neighbouring == "replace-one"
    d = c.to_dict()
    assert "private_utilities" not in d and d["lengthscale"] == c.lengthscale
    assert c.noise_source == "seeded" and c.seed == 0
    real = private_lengthscale(X, grid=grid, epsilon=2.0)
    assert real.noise_source == "os-entropy" and real.seed is None


def test_private_lengthscale_large_n_uses_disjoint_pairs():
    X = np.random.default_rng(5).normal(size=(5000, 2))
    c = private_lengthscale(X, grid=lengthscale_grid(0.1, 10, 30), epsilon=1.0, random_state=1)
    assert c.pairs == "disjoint" and c.sensitivity == pytest.approx(1 / 2500)
    with pytest.raises(ValueError, match="at most"):
        pair_distance_cdf(np.zeros((20001, 1)), [1.0], pairs="all")


@pytest.mark.parametrize("kwargs, match", [
    ({"epsilon": 0}, "epsilon"),
    ({"epsilon": 1, "grid": [1.0, -1.0]}, "grid"),
    ({"epsilon": 1, "grid": [1.0, 1.0]}, "repeated"),
    ({"epsilon": 1, "grid": [[1.0]]}, "grid"),
    ({"epsilon": 1, "neighbouring": "add-remove"}, "replace-one"),
    ({"epsilon": 1, "pairs": "some"}, "pairs"),
    ({"epsilon": 1, "quantile": 1.5}, "quantile"),
])
def test_private_lengthscale_validation(kwargs, match):
    X = np.random.default_rng(0).normal(size=(10, 2))
    kw = {"grid": [0.5, 1.0, 2.0], **kwargs}
    with pytest.raises(ValueError, match=match):
        private_lengthscale(X, **kw)


def test_private_lengthscale_passes_an_audit():
    """The audit machinery applied to the bandwidth mechanism: lower bound <= epsilon (false-failure <= 1e-3)."""
    grid = lengthscale_grid(0.3, 30.0, 12)
    X = np.zeros((4, 1))
    X[:2, 0] = [0.0, 1.0]
    X[2:, 0] = [2.0, 3.0]
    Xn = X.copy()
    Xn[0, 0] = 100.0  # a far outlier
    eps = 2.0
    seeds = np.random.SeedSequence(7).generate_state(2 * 3000)
    sd = [private_lengthscale(X, grid=grid, epsilon=eps, pairs="all", random_state=int(s)).index
          for s in seeds[:3000]]
    sp = [private_lengthscale(Xn, grid=grid, epsilon=eps, pairs="all", random_state=int(s)).index
          for s in seeds[3000:]]
    res = audit_scores(np.asarray(sd, float), np.asarray(sp, float), epsilon=eps, alpha=1e-3)
    assert res.passed


def test_lengthscale_utility():
    X = np.array([[0.0], [1.0], [3.0]])
    u = lengthscale_utility(X, [0.5, 1.5, 2.5, 5.0])
    assert np.allclose(u, [-0.5, -abs(1 / 3 - 0.5), -abs(2 / 3 - 0.5), -0.5])
