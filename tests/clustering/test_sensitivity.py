"""Brute-force checks of the sensitivities used by DP kernel k-means and the cluster-wise release.

Every statistic is computed by the code the mechanisms run (``lloyd_pass`` /
``norm_histogram``) on tiny data sets, for *every* neighbour over a fine grid
of replacement rows. All inputs are deterministic (fixed seeds, grids), so
these tests have no false-failure rate; tolerances are float rounding.
"""

from __future__ import annotations

import itertools
import math

import numpy as np
import pytest
from scipy import integrate
from scipy.stats import norm as normal

from dpkme.clustering import (
    auto_count_share,
    histogram_sensitivity,
    lloyd_sensitivities,
    noise_for_mu,
    norm_histogram,
    plan_kmeans,
    step_mu,
)
from dpkme.clustering._features import FLOAT32_NORM_MARGIN, FeatureBlocks, clip_rows, lloyd_pass
from dpkme.kernels.kernel import GaussianKernel
from dpkme.kernels.random_features import CosineBiasFeatures, RandomFourierFeatures
from dpkme.privacy.calibration import analytic_sigma, gaussian_delta

GRID = 120  # replacement candidates: phases k * 2 pi / GRID (contains exact opposites)


def _one_frequency_map():
    """J = 2 paired features in D = 1: z(x) = [cos(w x), sin(w x)], norm exactly 1."""
    f = RandomFourierFeatures(GaussianKernel(lengthscale=1.0), n_components=2, random_state=3, dtype="float64").fit(1)
    w = float(f.frequencies_[0, 0])
    grid = (2 * np.pi * np.arange(GRID) / GRID / w).reshape(-1, 1)
    return f, grid


def _stats(fb, X, centres):
    s = lloyd_pass(fb, X, centres)
    return s["counts"].astype(float), s["sums"]


def _neighbours(X, grid, relation):
    """All neighbouring data sets of X: replace any row by any grid row, or add/remove one row."""
    n = X.shape[0]
    if relation == "replace-one":
        for i in range(n):
            for g in grid:
                Y = X.copy()
                Y[i] = g
                yield Y
    else:
        for i in range(n):
            yield np.delete(X, i, axis=0)
        for g in grid:
            yield np.vstack([X, g[None, :]])


def _brute_force(fb, X, centres, grid, relation):
    """Max over neighbours of ||dn||, ||dS||, ||dS|| split by case, and the changed blocks."""
    n0, S0 = _stats(fb, X, centres)
    out = {"dn": 0.0, "dS": 0.0, "dS_cross": 0.0, "dS_same": 0.0, "blocks": 0, "pairs": []}
    for Y in _neighbours(X, grid, relation):
        n1, S1 = _stats(fb, Y, centres)
        dn, dS = n1 - n0, S1 - S0
        changed = np.flatnonzero((np.abs(dn) > 0) | (np.abs(dS).max(axis=1) > 1e-12))
        out["blocks"] = max(out["blocks"], len(changed))
        a, b = float(np.linalg.norm(dn)), float(np.linalg.norm(dS))
        out["dn"], out["dS"] = max(out["dn"], a), max(out["dS"], b)
        key = "dS_cross" if a > 0 else "dS_same"
        out[key] = max(out[key], b)
        out["pairs"].append((a, b))
    return out


@pytest.fixture(scope="module")
def setting():
    f, grid = _one_frequency_map()
    fb = FeatureBlocks(f)
    # Centre 0 is the zero vector: every row with cos(phase - p) < 1/2 is nearer to it than to z(p),
    # so opposite rows (|z(x) - z(x')| = 2) can share a cluster; centre 1 = z(p) gives cross moves.
    p = grid[GRID // 8:GRID // 8 + 1]
    centres = np.vstack([np.zeros(2), fb.transform(p)])
    X = grid[[3, 40, 61, 100]]
    return fb, X, centres, grid


@pytest.fixture(scope="module")
def brute(setting):
    fb, X, centres, grid = setting
    return {rel: _brute_force(fb, X, centres, grid, rel) for rel in ("add-remove", "replace-one")}


def test_add_remove_sensitivities_are_1_and_C_by_brute_force(brute):
    C = 1.0
    bf = brute["add-remove"]
    s = lloyd_sensitivities(norm_bound=C, neighbouring="add-remove")
    assert bf["dn"] == pytest.approx(1.0) and s["counts"] == 1.0
    assert bf["dS"] <= s["sums"] * (1 + 1e-12) and bf["dS"] == pytest.approx(C, rel=1e-12)
    assert bf["blocks"] == 1  # one row is in exactly one cluster: parallel composition


def test_replace_one_sums_move_by_2C_not_sqrt2_C(brute):
    C = 1.0
    bf = brute["replace-one"]
    s = lloyd_sensitivities(norm_bound=C, neighbouring="replace-one")
    assert bf["dn"] == pytest.approx(math.sqrt(2.0)) and s["counts"] == pytest.approx(math.sqrt(2.0))
    # cross-cluster moves: sqrt(|z(x)|^2 + |z(x')|^2) = sqrt(2) C, attained
    assert bf["dS_cross"] == pytest.approx(math.sqrt(2.0) * C, rel=1e-9)
    # same cluster: |z(x') - z(x)| reaches 2C, attained (opposite phases on the grid)
    assert bf["dS_same"] == pytest.approx(2.0 * C, rel=1e-9)
    assert bf["dS"] <= s["sums"] * (1 + 1e-12)
    # the paper's sqrt(2) C is violated by a real neighbouring pair
    assert bf["dS"] > s["paper_sums"] * 1.4
    assert bf["blocks"] == 2  # a row can leave cluster a and join cluster b


@pytest.mark.parametrize("relation", ["add-remove", "replace-one"])
@pytest.mark.parametrize("sigmas", [(0.3, 1.0), (1.0, 1.0), (4.0, 1.0)])
def test_joint_step_sensitivity_matches_formula_and_is_attained(brute, relation, sigmas):
    sn, ss = sigmas
    mu = step_mu(sigma_count=sn, sigma_sum=ss, norm_bound=1.0, neighbouring=relation)
    bf = brute[relation]
    joint = max(math.sqrt((a / sn) ** 2 + (b / ss) ** 2) for a, b in bf["pairs"])
    assert joint <= mu * (1 + 1e-9)
    assert joint >= mu * (1 - 1e-9)  # the bound is tight for this map (single frequency)
    # composing sizes and sums separately would charge more under replace-one (1.5x in mu^2 at sn = ss / C)
    sep = math.sqrt((bf["dn"] / sn) ** 2 + (bf["dS"] / ss) ** 2)
    if relation == "replace-one":
        assert sep > mu * (1 + 1e-3)
        if sn == ss:
            assert (sep / mu) ** 2 == pytest.approx(1.5)
    else:
        assert sep == pytest.approx(mu, rel=1e-9)


def test_many_features_and_random_centres_stay_within_bound():
    f = RandomFourierFeatures(GaussianKernel(lengthscale=0.5), n_components=64, random_state=0).fit(2)
    fb = FeatureBlocks(f)
    rng = np.random.default_rng(1)
    X = rng.uniform(-2, 2, size=(5, 2))
    grid = rng.uniform(-3, 3, size=(80, 2))
    centres = rng.standard_normal((3, 64)) * 0.2
    C = fb.norm_bound
    for relation in ("add-remove", "replace-one"):
        bf = _brute_force(fb, X, centres, grid, relation)
        s = lloyd_sensitivities(norm_bound=C, neighbouring=relation)
        assert bf["dn"] <= s["counts"] + 1e-12
        assert bf["dS"] <= s["sums"]


def test_clipped_generic_map_stays_within_bound():
    f = CosineBiasFeatures(GaussianKernel(lengthscale=0.5), n_components=16, random_state=0).fit(1)
    C = 0.9
    fb = FeatureBlocks(f, clip=C)
    grid = np.linspace(-4, 4, 90).reshape(-1, 1)
    norms = np.linalg.norm(f.transform(grid), axis=1)
    assert norms.max() > C  # clipping is active
    X = grid[[5, 50, 70]]
    centres = np.vstack([np.zeros(16), fb.transform(grid[[20]])])
    bf = _brute_force(fb, X, centres, grid, "replace-one")
    assert bf["dS"] <= 2 * C
    assert np.linalg.norm(fb.transform(grid), axis=1).max() <= C


def test_clip_rows_bound():
    F = np.random.default_rng(0).standard_normal((500, 7)) * 3
    G = clip_rows(F.copy(), 1.5)
    assert np.linalg.norm(G, axis=1).max() <= 1.5
    small = np.linalg.norm(F, axis=1) <= 1.5
    np.testing.assert_array_equal(G[small], F[small])


def test_float32_feature_norms_within_margin():
    """The float32 trig path is not renormalised: its norm must stay below sqrt(a)(1 + 1e-6)."""
    f = RandomFourierFeatures(GaussianKernel(lengthscale=1e-3, amplitude=0.7), n_components=2000,
                              random_state=0).fit(3)
    fb = FeatureBlocks(f)
    X = np.random.default_rng(0).standard_normal((2000, 3)) * np.array([1e-3, 1.0, 1e3])
    F = fb.block(X).astype(np.float64)
    norms = np.linalg.norm(F, axis=1)
    assert norms.max() <= fb.norm_bound
    assert np.abs(norms / math.sqrt(0.7) - 1).max() < FLOAT32_NORM_MARGIN / 2


def test_histogram_sensitivity_by_brute_force():
    c_max, w = 2.0, 8
    base = np.array([0.1, 0.3, 0.3, 1.1, 1.9, 2.5, 0.0])  # includes values outside (0, c_max]
    cands = np.concatenate([np.linspace(0, 3, 61), [0.25, 0.5, 2.0]])  # bin edges included
    h0, _ = norm_histogram(base, c_max=c_max, n_bins=w)
    worst = {"replace-one": 0.0, "add-remove": 0.0}
    for i in range(len(base)):
        for v in cands:
            y = base.copy()
            y[i] = v
            worst["replace-one"] = max(worst["replace-one"],
                                       np.linalg.norm(norm_histogram(y, c_max=c_max, n_bins=w)[0] - h0))
        worst["add-remove"] = max(worst["add-remove"],
                                  np.linalg.norm(norm_histogram(np.delete(base, i), c_max=c_max, n_bins=w)[0] - h0))
    for v in cands:
        worst["add-remove"] = max(worst["add-remove"],
                                  np.linalg.norm(norm_histogram(np.append(base, v), c_max=c_max, n_bins=w)[0] - h0))
    for rel, val in worst.items():
        assert val == pytest.approx(histogram_sensitivity(rel))


def test_histogram_bins_are_left_open_right_closed():
    counts, edges = norm_histogram([0.0, 0.5, 0.5000001, 1.0, 1.0000001], c_max=1.0, n_bins=2)
    np.testing.assert_array_equal(edges, [0.0, 0.5, 1.0])
    np.testing.assert_array_equal(counts, [1, 2])  # 0 and values above c_max are in no bin


@pytest.mark.parametrize("relation", ["add-remove", "replace-one"])
@pytest.mark.parametrize("share", [0.01, 0.3, 0.5, 0.8])
def test_noise_for_mu_round_trip(relation, share):
    sn, ss = noise_for_mu(0.37, norm_bound=2.0, neighbouring=relation, count_share=share)
    mu = step_mu(sigma_count=sn, sigma_sum=ss, norm_bound=2.0, neighbouring=relation)
    assert mu <= 0.37 and mu == pytest.approx(0.37, rel=1e-12)


def test_replace_one_count_noise_is_free_up_to_equal_multipliers():
    # sigma_count = sigma_sum / C: both terms of the max equal; more count noise changes nothing
    a = step_mu(sigma_count=2.0, sigma_sum=2.0, neighbouring="replace-one")
    b = step_mu(sigma_count=50.0, sigma_sum=2.0, neighbouring="replace-one")
    assert a == pytest.approx(b) == pytest.approx(1.0)
    assert auto_count_share("replace-one", 1000) == 0.5
    assert auto_count_share("add-remove", 100) == pytest.approx(1 / 21)


def test_bad_inputs_raise_value_errors():
    with pytest.raises(ValueError, match="neighbouring"):
        lloyd_sensitivities(neighbouring="swap")
    with pytest.raises(ValueError, match="sigma_count"):
        step_mu(sigma_count=0.0, sigma_sum=1.0)
    with pytest.raises(ValueError, match="count_share"):
        noise_for_mu(1.0, count_share=1.0)
    with pytest.raises(ValueError, match="norm_bound"):
        FeatureBlocks(CosineBiasFeatures(GaussianKernel(lengthscale=1.0), n_components=4, random_state=0).fit(1))
    with pytest.raises(ValueError, match="transform"):
        FeatureBlocks(object())


# --------------------------------------------------------------------------- per-cluster normalisation
def _hockey_stick_1d(m1, s1, m2, s2, eps):
    """delta(eps) between N(m1, s1^2) and N(m2, s2^2): integral of max(0, p1 - e^eps p2)."""
    lo, hi = min(m1, m2) - 40 * max(s1, s2), max(m1, m2) + 40 * max(s1, s2)
    f = lambda x: max(0.0, normal.pdf(x, m1, s1) - math.exp(eps) * normal.pdf(x, m2, s2))  # noqa: E731
    pts = np.linspace(lo, hi, 41)
    return sum(integrate.quad(f, a, b, limit=200)[0] for a, b in itertools.pairwise(pts))


def test_naive_per_cluster_normalisation_breaks_the_guarantee_but_noisy_sums_do_not(setting):
    """A row moving between clusters changes n_i: Algorithm 2 on a cluster with its private n_i fails.

    Naive: release S_i/n_i + N(0, (2C sigma0 / n_i)^2) per coordinate, sigma0 calibrated to
    (eps, delta) at sensitivity 1. For a replace-one pair where n_i goes 3 -> 2, the outputs
    have different variances; the exact delta of one coordinate (a lower bound for the whole
    vector, by post-processing) is orders of magnitude above the claimed delta. The mechanism
    used here (noisy sums and sizes, normalised afterwards) has the same variance on both sides
    and its exact delta for every neighbouring pair is within the plan.
    """
    fb, X, centres, grid = setting
    eps, delta = 1.0, 1e-6
    X = grid[[40, 45, 50, 10]]  # three rows near each other
    n0, S0 = _stats(fb, X, centres)
    i = int(np.argmax(n0))
    assert n0[i] == 3
    worst_naive = 0.0
    plan = plan_kmeans(epsilon=eps, delta=delta, n_iter=1, neighbouring="replace-one", n_features=2)
    step = plan.step("lloyd")
    sn, ss = step.sigma_count, step.sigma_sum(fb.norm_bound)
    eps_step = 1.0  # one step = whole plan here; check every pair at the plan's (eps, delta)
    worst_ours = 0.0
    z0 = analytic_sigma(epsilon=eps, delta=delta, sensitivity=1.0)
    for Y in _neighbours(X, grid, "replace-one"):
        n1, S1 = _stats(fb, Y, centres)
        dv = math.sqrt(np.sum(((n1 - n0) / sn) ** 2) + np.sum(((S1 - S0) / ss) ** 2))
        if dv > 0:
            worst_ours = max(worst_ours, gaussian_delta(sigma=1.0, epsilon=eps_step, sensitivity=dv))
        if n1[i] == 2:  # the naive scheme on cluster i: first coordinate of the normalised mean
            s_a, s_b = 2 * z0 / 3, 2 * z0 / 2
            m_a, m_b = S0[i, 0] / 3, S1[i, 0] / 2
            worst_naive = max(worst_naive, _hockey_stick_1d(m_b, s_b, m_a, s_a, eps))
            if worst_naive > 1e3 * delta:
                break
    assert worst_naive > 1e3 * delta
    assert worst_ours <= delta * (1 + 1e-9)
