"""Tests for dpkme.release.exponential: the exact exponential mechanism over synthetic databases.

Statistical tests use fixed seeds; the stated false-failure rate is the
probability that the test would fail for a correct implementation with a random
seed (each chi-square test rejects at p < 1e-4).
"""

from __future__ import annotations

import dataclasses
import itertools
import math

import numpy as np
import pytest
from scipy import stats
from scipy.special import logsumexp

from dpkme.kernels.kernel import GaussianKernel, LaplacianKernel, MaternKernel
from dpkme.metrics import rkhs_distance
from dpkme.privacy.accounting import BudgetLedger
from dpkme.release import exponential as ex
from dpkme.release.exponential import (
    DEFAULT_MAX_DATABASES,
    HARD_MAX_DATABASES,
    count_multisets,
    count_table,
    database_scores,
    enumerate_multisets,
    exponential_charge,
    exponential_mechanism,
    exponential_probabilities,
    grid_candidates,
    largest_m,
    multiset_from_rank,
    score_sensitivity,
)
from dpkme.release.result import Release

GAUSS = GaussianKernel(lengthscale=0.7)


def _data(n=30, dim=2, seed=0):
    return np.random.default_rng(seed).normal(size=(n, dim))


# --------------------------------------------------------------------------- counting and enumeration
@pytest.mark.parametrize("n,m", [(1, 1), (1, 5), (2, 3), (5, 1), (5, 4), (7, 3)])
def test_enumeration_matches_itertools_and_count(n, m):
    """Canonical order: sorted tuples ordered by the key (r_{M-1}, r_1, ..., r_{M-2}, r_M)."""
    def key(t):
        return (t[-2], *t[:-2], t[-1]) if len(t) >= 2 else t
    expected = sorted(itertools.combinations_with_replacement(range(n), m), key=key)
    got = enumerate_multisets(n, m)
    assert got.shape == (len(expected), m)
    assert [tuple(r) for r in got.tolist()] == expected
    assert count_multisets(n, m) == len(expected) == math.comb(n + m - 1, m)


def test_multiset_from_rank_inverts_the_enumeration():
    for n, m in [(4, 3), (6, 2), (3, 5), (9, 1)]:
        tuples = enumerate_multisets(n, m)
        for r, t in enumerate(tuples):
            assert np.array_equal(multiset_from_rank(r, n, m), t)
    # a large case: spot-check ranks against the enumeration
    tuples = enumerate_multisets(40, 4)
    for r in np.random.default_rng(0).integers(0, tuples.shape[0], size=200):
        assert np.array_equal(multiset_from_rank(int(r), 40, 4), tuples[r])
    with pytest.raises(ValueError, match="rank must be <= 14"):
        multiset_from_rank(15, 5, 2)


def test_count_helpers():
    assert count_table([5, 10], [1, 2, 3]).tolist() == [[5, 15, 35], [10, 55, 220]]
    assert largest_m(20, 10_000) == 4  # C(23,4) = 8855 <= 10^4 < C(24,5) = 42504
    assert largest_m(20_001, 20_000) == 0
    assert largest_m(1, 100) == ex.MAX_M == largest_m(2, 10**6)
    assert count_multisets(200, 10) > 10**16  # the combinatorial explosion the page shows


def test_refusal_quotes_the_count_and_the_limit():
    X = _data()
    G = np.random.default_rng(1).normal(size=(40, 2))
    with pytest.raises(ValueError, match=r"8,145,060 candidate databases.*\|G\| = 40.*M = 6.*max_databases = "
                                         r"5,000,000.*at most M = 5"):
        exponential_mechanism(X, G, kernel=GAUSS, epsilon=1.0, m=6, max_databases=5_000_000)
    with pytest.raises(ValueError, match="max_databases must be <="):
        database_scores(X, G, kernel=GAUSS, m=1, max_databases=HARD_MAX_DATABASES + 1)
    with pytest.raises(ValueError, match="C\\(\\|G\\|\\+M-1, M\\) = 35"):
        database_scores(X, G[:5], kernel=GAUSS, m=3, max_databases=34)
    assert DEFAULT_MAX_DATABASES <= HARD_MAX_DATABASES
    with pytest.raises(ValueError, match=r"M = 65 synthetic points .*\(MAX_M = 64\)"):
        database_scores(X, G[:1], kernel=GAUSS, m=65)


def test_grid_candidates():
    G = grid_candidates([0.0, -1.0], [1.0, 1.0], [3, 2])
    assert G.tolist() == [[0, -1], [0, 1], [0.5, -1], [0.5, 1], [1, -1], [1, 1]]
    assert grid_candidates([0.0], [2.0], 1).tolist() == [[1.0]]
    with pytest.raises(ValueError, match=r"coordinate 1 has lower=1.0, upper=1.0"):
        grid_candidates([0, 1], [1, 1], 3)
    with pytest.raises(ValueError, match="points_per_axis has 1 entries for a 2-D box"):
        grid_candidates([0, 0], [1, 1], [3])
    with pytest.raises(ValueError, match="more than 1,000,000"):
        grid_candidates([0, 0], [1, 1], 1001)


# --------------------------------------------------------------------------- scores and probabilities
@pytest.mark.parametrize("kernel", [GAUSS, LaplacianKernel(lengthscale=0.5), MaternKernel(nu=2.5, lengthscale=1.0)])
@pytest.mark.parametrize("m", [1, 2, 3, 4])
def test_distances_match_direct_rkhs_distance(kernel, m):
    X = _data(25)
    G = np.random.default_rng(3).normal(size=(6, 2))
    scores = database_scores(X, G, kernel=kernel, m=m)
    for r, t in enumerate(enumerate_multisets(6, m)):
        direct = rkhs_distance(X, G[t], np.full(m, 1.0 / m), kernel=kernel)
        assert scores.distances[r] == pytest.approx(direct, abs=1e-12)


@pytest.mark.parametrize("n,m", [(600, 2), (40, 3), (12, 6)])
def test_distances_on_larger_cases_spot_checked(n, m):
    """Several row blocks (M = 2) / many prefix chunks (M >= 3): random ranks against the direct formula."""
    X = _data(15, 1)
    G = np.linspace(-3, 3, n)[:, None]
    scores = database_scores(X, G, kernel=GAUSS, m=m)
    for r in np.random.default_rng(0).integers(0, scores.n_databases, size=40):
        t = multiset_from_rank(int(r), n, m)
        direct = rkhs_distance(X, G[t], np.full(m, 1.0 / m), kernel=GAUSS)
        assert scores.distances[r] == pytest.approx(direct, abs=1e-12)


def test_probabilities_equal_closed_form_softmax():
    """Exact check against an independent closed form on a tiny case (|G| = 4, M = 2, N = 3)."""
    X = np.array([[0.1], [0.9], [2.0]])
    G = np.array([[0.0], [1.0], [2.0], [3.0]])
    eps, ell = 1.3, 0.8

    def k(a, b):
        return math.exp(-((a - b) ** 2) / (2 * ell * ell))

    xs, gs = X[:, 0].tolist(), G[:, 0].tolist()
    mu_sq = sum(k(a, b) for a in xs for b in xs) / 9
    delta_u = math.sqrt(2.0) / 3  # replace-one, non-negative kernel, k(x,x) = 1
    weights = {}
    for i, j in itertools.combinations_with_replacement(range(4), 2):
        r = [gs[i], gs[j]]
        cross = sum(k(a, b) for a in xs for b in r) / 6
        rr = sum(k(a, b) for a in r for b in r) / 4
        weights[(i, j)] = math.exp(-eps * math.sqrt(mu_sq - 2 * cross + rr) / (2 * delta_u))
    z = sum(weights.values())
    expected = np.array([weights[key] / z for key in sorted(weights)])
    probs, multisets = exponential_probabilities(X, G, kernel=GaussianKernel(lengthscale=ell), m=2, epsilon=eps)
    assert [tuple(t) for t in multisets.tolist()] == sorted(weights)
    np.testing.assert_allclose(probs, expected, rtol=1e-12, atol=0)
    # M = 3 (canonical order differs from lexicographic): match by multiset
    probs3, ms3 = exponential_probabilities(X, G, kernel=GaussianKernel(lengthscale=ell), m=3, epsilon=eps)
    w3 = {}
    for t in itertools.combinations_with_replacement(range(4), 3):
        r = [gs[i] for i in t]
        cross = sum(k(a, b) for a in xs for b in r) / 9
        rr = sum(k(a, b) for a in r for b in r) / 9
        w3[t] = math.exp(-eps * math.sqrt(mu_sq - 2 * cross + rr) / (2 * delta_u))
    z3 = sum(w3.values())
    np.testing.assert_allclose(probs3, [w3[tuple(t)] / z3 for t in ms3.tolist()], rtol=1e-12, atol=0)
    assert probs.sum() == pytest.approx(1.0, abs=1e-15)


def test_mu_D_norm_does_not_cancel():
    """The utility is the distance (under a square root), so ||mu_D||^2 matters: dropping it changes P."""
    X = _data(10, 1)
    G = np.linspace(-2, 2, 5)[:, None]
    scores = database_scores(X, G, kernel=GAUSS, m=2)
    mu_sq = GAUSS.mean_gram(X)
    without = np.sqrt(np.maximum(scores.distances**2 - mu_sq + 1.0, 0.0))  # a different constant
    lw = -1.0 * without / (2 * scores.sensitivity)
    assert not np.allclose(np.exp(lw - logsumexp(lw)), scores.probabilities(1.0), rtol=1e-3)


# --------------------------------------------------------------------------- privacy: exhaustive ratios
_U = [0.0, 0.5, 1.5, 3.0]          # data universe (1-D)
_G = np.array([[0.0], [1.0], [2.0], [3.0]])
_EPS = 1.0


def _logp(D, kernel, *, neighbouring="replace-one", mode="tight", n_private=None, domain=None, shrink=1.0):
    s = database_scores(np.array(D, dtype=float)[:, None], _G, kernel=kernel, m=2, neighbouring=neighbouring,
                        sensitivity=mode, n_private=n_private, domain=domain)
    s = dataclasses.replace(s, sensitivity=s.sensitivity * shrink)
    lw = s.log_weights(_EPS)
    return lw - logsumexp(lw)


def _max_log_ratio_replace_one(kernel, n=2, **kw):
    worst = 0.0
    for D in itertools.combinations_with_replacement(_U, n):
        base = _logp(D, kernel, **kw)
        for i in range(n):
            for u in _U:
                D2 = list(D)
                D2[i] = u
                worst = max(worst, float(np.max(np.abs(base - _logp(D2, kernel, **kw)))))
    return worst


def _max_log_ratio_add_remove(kernel, n_private=2, **kw):
    worst = 0.0
    for size in (1, 2):
        for D in itertools.combinations_with_replacement(_U, size):
            base = _logp(D, kernel, neighbouring="add-remove", n_private=n_private, **kw)
            for u in _U:
                other = _logp([*D, u], kernel, neighbouring="add-remove", n_private=n_private, **kw)
                worst = max(worst, float(np.max(np.abs(base - other))))
    return worst


@pytest.mark.parametrize("kernel", [GaussianKernel(lengthscale=0.7), LaplacianKernel(lengthscale=0.7)])
@pytest.mark.parametrize("mode", ["tight", "paper"])
def test_neighbour_probability_ratio_never_exceeds_e_eps_replace_one(kernel, mode):
    """Exhaustive: all datasets of size 2 from a 4-point universe, all replace-one neighbours, all 10 databases."""
    worst = _max_log_ratio_replace_one(kernel, mode=mode)
    assert worst <= _EPS * (1 + 1e-12), worst
    assert worst > 0.4 * _EPS  # not vacuous


def test_neighbour_ratio_with_declared_domain():
    worst = _max_log_ratio_replace_one(GAUSS, domain=([0.0], [3.0]))
    assert worst <= _EPS * (1 + 1e-12)


@pytest.mark.parametrize("kernel", [GaussianKernel(lengthscale=0.7), LaplacianKernel(lengthscale=0.7)])
def test_neighbour_probability_ratio_never_exceeds_e_eps_add_remove(kernel):
    worst = _max_log_ratio_add_remove(kernel)
    assert worst <= _EPS * (1 + 1e-12), worst
    assert worst > 0.4 * _EPS


def test_the_ratio_check_detects_a_missing_factor_two():
    """Power of the exhaustive check: exp(eps*u/Delta) (no factor 2) violates e^eps on the same universe."""
    assert _max_log_ratio_replace_one(GAUSS, shrink=0.5) > _EPS
    assert _max_log_ratio_add_remove(GAUSS, shrink=0.5) > _EPS


def test_score_sensitivity_values_and_bound():
    assert score_sensitivity(n=10, kernel=GAUSS) == pytest.approx(math.sqrt(2) / 10)
    assert score_sensitivity(n=10, kernel=GAUSS, mode="paper") == pytest.approx(0.2)
    assert score_sensitivity(n=10, kernel=GAUSS, neighbouring="add-remove") == pytest.approx(0.1)
    half = GaussianKernel(lengthscale=0.7, amplitude=0.5)
    assert score_sensitivity(n=10, kernel=half) == pytest.approx(1.0 / 10)
    # the sup over neighbours of |d_D(R) - d_D'(R)| approaches sqrt(2)/N when the changed row moves far away
    X = _data(5, 1)
    G = np.linspace(-1, 1, 4)[:, None]
    X2 = X.copy()
    X2[0] = 100.0
    d1 = database_scores(X, G, kernel=GAUSS, m=2).distances
    d2 = database_scores(X2, G, kernel=GAUSS, m=2).distances
    gap = float(np.max(np.abs(d1 - d2)))
    assert gap <= math.sqrt(2) / 5 + 1e-12
    assert gap > 0.5 * math.sqrt(2) / 5


# --------------------------------------------------------------------------- sampling
def test_sampler_frequencies_match_probabilities():
    """Chi-square goodness of fit, 40 000 draws; false-failure rate 1e-4."""
    X = _data(20, 1)
    G = np.linspace(-1.5, 1.5, 4)[:, None]
    scores = database_scores(X, G, kernel=GAUSS, m=2)
    p = scores.probabilities(3.0)
    rng = np.random.default_rng(12345)
    counts = np.bincount(scores.sample_rank(3.0, rng, size=40_000), minlength=p.size)
    chi2 = float(np.sum((counts - 40_000 * p) ** 2 / (40_000 * p)))
    assert stats.chi2.sf(chi2, p.size - 1) > 1e-4
    # one draw at a time uses the same sampler
    single = np.bincount([scores.sample_rank(3.0, rng) for _ in range(2000)], minlength=p.size)
    chi2 = float(np.sum((single - 2000 * p) ** 2 / (2000 * p)))
    assert stats.chi2.sf(chi2, p.size - 1) > 1e-4


def test_sampler_test_has_power():
    """The same chi-square test rejects draws made at the wrong epsilon (3.0 vs 2.0)."""
    X = _data(20, 1)
    G = np.linspace(-1.5, 1.5, 4)[:, None]
    scores = database_scores(X, G, kernel=GAUSS, m=2)
    p = scores.probabilities(3.0)
    counts = np.bincount(scores.sample_rank(2.0, np.random.default_rng(12345), size=40_000), minlength=p.size)
    chi2 = float(np.sum((counts - 40_000 * p) ** 2 / (40_000 * p)))
    assert stats.chi2.sf(chi2, p.size - 1) < 1e-4


def test_two_stage_sampler_across_blocks(monkeypatch):
    """Force many blocks (size 3) so both stages of the sampler are exercised; same chi-square test."""
    monkeypatch.setattr(ex, "_SAMPLE_BLOCK", 3)
    X = _data(20, 1)
    G = np.linspace(-1.5, 1.5, 5)[:, None]
    scores = database_scores(X, G, kernel=GAUSS, m=2)   # 15 databases, 5 blocks
    p = scores.probabilities(8.0)
    rng = np.random.default_rng(7)
    n = 30_000
    counts = np.bincount(scores.sample_rank(8.0, rng, size=n), minlength=p.size)
    keep = n * p >= 5  # chi-square validity; pool the rest
    obs = np.append(counts[keep], counts[~keep].sum())
    exp_ = np.append(n * p[keep], n * p[~keep].sum())
    if exp_[-1] == 0:
        obs, exp_ = obs[:-1], exp_[:-1]
    chi2 = float(np.sum((obs - exp_) ** 2 / exp_))
    assert stats.chi2.sf(chi2, obs.size - 1) > 1e-4


def test_sampler_handles_extreme_epsilon_without_overflow():
    X = _data(20, 1)
    G = np.linspace(-1.5, 1.5, 6)[:, None]
    scores = database_scores(X, G, kernel=GAUSS, m=3)
    best = int(np.argmin(scores.distances))
    rng = np.random.default_rng(0)
    assert all(scores.sample_rank(1e9, rng) == best for _ in range(20))
    p = scores.probabilities(1e-12)
    np.testing.assert_allclose(p, 1.0 / p.size, rtol=1e-9)


def test_expected_distance_decreases_with_epsilon():
    X = _data(40, 2)
    G = grid_candidates([-2, -2], [2, 2], 3)
    scores = database_scores(X, G, kernel=GAUSS, m=3)
    eps = np.array([0.01, 0.1, 1.0, 10.0, 100.0, 1e4])
    curve = scores.expected_distance(eps)
    assert np.all(np.diff(curve) <= 1e-15)
    assert curve[-1] == pytest.approx(scores.distances.min(), rel=1e-3)
    assert curve[0] == pytest.approx(scores.distances.mean(), rel=1e-2)


# --------------------------------------------------------------------------- the release
def test_release_contents_and_diagnostics():
    X = _data(50, 2)
    G = grid_candidates([-2, -2], [2, 2], 4)
    rel, diag = exponential_mechanism(X, G, kernel=GAUSS, epsilon=2.0, m=4, random_state=3, return_diagnostics=True)
    assert isinstance(rel, Release) and rel.mechanism == "exponential"
    assert rel.delta == 0.0 and rel.sigma == 0.0 and rel.epsilon == 2.0
    assert rel.weights.sum() == pytest.approx(1.0)
    assert np.all(rel.weights * 4 == np.round(rel.weights * 4))  # count / M
    idx = np.array(rel.params["multiset"])
    assert idx.shape == (4,) and np.all(np.diff(idx) >= 0)
    assert np.array_equal(rel.points, G[np.unique(idx)])
    assert rel.params["n_databases"] == count_multisets(16, 4) and rel.params["n_candidates"] == 16
    assert rel.params["score_sensitivity"] == pytest.approx(math.sqrt(2) / 50) == rel.sensitivity
    # the diagnostics are consistent with the release, and private facts stay out of the metadata
    assert diag.distance == pytest.approx(rkhs_distance(X, rel.points, rel.weights, kernel=GAUSS), abs=1e-12)
    assert diag.best_distance <= diag.distance and 0 < diag.probability <= 1
    text = rel.to_json()
    assert "distance" not in text and "probability" not in text
    # Release.evaluate is mu_R
    Y = np.random.default_rng(0).normal(size=(7, 2))
    np.testing.assert_allclose(rel.evaluate(Y), GAUSS(Y, G[idx]).mean(axis=1), atol=1e-14)
    # replay
    again = exponential_mechanism(X, G, kernel=GAUSS, epsilon=2.0, m=4, random_state=3)
    assert again.params["multiset"] == rel.params["multiset"] and again.seed == 3
    assert Release.from_json(rel.to_json()).params["multiset"] == rel.params["multiset"]


def test_os_entropy_release_records_no_seed_and_scores_are_reusable():
    X = _data(30, 1)
    G = np.linspace(-2, 2, 5)[:, None]
    rel = exponential_mechanism(X, G, kernel=GAUSS, epsilon=1.0, m=2)
    assert rel.seed is None and rel.noise_source == "os-entropy"
    scores = database_scores(X, G, kernel=GAUSS, m=2)
    a = scores.release(1.0, random_state=11)
    b = exponential_mechanism(X, G, kernel=GAUSS, epsilon=1.0, m=2, random_state=11)
    assert a.params["multiset"] == b.params["multiset"]


def test_add_remove_uses_public_normaliser():
    X = _data(8, 1)
    G = np.linspace(-2, 2, 4)[:, None]
    rel = exponential_mechanism(X, G, kernel=GAUSS, epsilon=1.0, m=2, neighbouring="add-remove", n_private=10,
                                random_state=0)
    assert rel.sensitivity == pytest.approx(0.1) and rel.n_private == 10
    scores = database_scores(X, G, kernel=GAUSS, m=2, neighbouring="add-remove", n_private=10)
    t = enumerate_multisets(4, 2)[5]
    # mu_D = (1/10) sum_{x in D} k(x, .): distance by the direct formula with weights 1/10
    Z = np.vstack([X, G[t]])
    w = np.concatenate([np.full(8, 0.1), np.full(2, -0.5)])
    direct = math.sqrt(max(float(w @ GAUSS(Z) @ w), 0.0))
    assert scores.distances[5] == pytest.approx(direct, abs=1e-12)
    with pytest.raises(ValueError, match="n_private=10 for 8 rows"):
        exponential_mechanism(X, G, kernel=GAUSS, epsilon=1.0, m=2, n_private=10)


def test_ledger_charge():
    X = _data(20, 1)
    G = np.linspace(-2, 2, 4)[:, None]
    rel = exponential_mechanism(X, G, kernel=GAUSS, epsilon=0.7, m=2, random_state=0)
    charge = exponential_charge(rel)
    assert charge.mechanism == "exponential" and charge.epsilon == 0.7 and charge.delta == 0.0
    assert charge.details["neighbouring"] == "replace-one"
    ledger = BudgetLedger(epsilon_budget=2.0)
    ledger.add(charge)
    assert ledger.totals()["basic"][0] == pytest.approx(0.7)
    with pytest.raises(ValueError, match="mechanism='exponential'"):
        exponential_charge(dataclasses.replace(rel, mechanism="algorithm1"))


def test_progress_is_monotone_and_finishes():
    X = _data(20, 1)
    G = np.linspace(-2, 2, 30)[:, None]
    seen = []
    database_scores(X, G, kernel=GAUSS, m=3, progress=lambda f, msg: seen.append(f))
    assert seen[0] == 0.0 and seen[-1] == 1.0 and all(b > a for a, b in itertools.pairwise(seen))
    assert len(seen) <= 102
    with pytest.raises(ValueError, match="progress must be callable"):
        database_scores(X, G, kernel=GAUSS, m=3, progress="yes")

    def cancel(f, msg):
        if f > 0.3:
            raise KeyboardInterrupt("cancelled")
    with pytest.raises(KeyboardInterrupt):
        database_scores(X, np.linspace(-2, 2, 300)[:, None], kernel=GAUSS, m=3, progress=cancel)


@pytest.mark.parametrize("kwargs,match", [
    ({"m": 0}, "m must be >= 1"),
    ({"m": 2.5}, "m must be an integer"),
    ({"epsilon": 0.0}, "epsilon must be a finite number > 0"),
    ({"neighbouring": "swap"}, "neighbouring must be one of"),
    ({"sensitivity": "loose"}, "sensitivity must be one of"),
    ({"kernel": GaussianKernel(lengthscale=1.0, amplitude=2.0)}, "k\\(x, x\\) <= 1"),
])
def test_bad_arguments(kwargs, match):
    args = {"kernel": GAUSS, "epsilon": 1.0, "m": 2}
    args.update(kwargs)
    with pytest.raises(ValueError, match=match):
        exponential_mechanism(_data(10, 1), np.zeros((3, 1)), **args)


def test_candidates_must_match_data_columns():
    with pytest.raises(ValueError, match="candidates has 1 column\\(s\\) but 2 were expected"):
        exponential_mechanism(_data(10, 2), np.zeros((3, 1)), kernel=GAUSS, epsilon=1.0, m=2)


def test_notes_for_the_app():
    assert {"approximate_sampling", "combinatorial_growth", "sensitivity"} <= set(ex.NOTES)
    assert all(isinstance(v, str) and len(v) > 50 for v in ex.NOTES.values())
