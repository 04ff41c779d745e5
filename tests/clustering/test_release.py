"""Cluster-wise release: contract, budget split, accuracy at large epsilon, errors.

The sensitivity / parallel-composition argument is brute-forced in
``clustering/test_sensitivity.py`` (the release step runs the same ``lloyd_pass``).
All randomness is seeded; tolerances are stated next to each assertion.
"""

from __future__ import annotations

import numpy as np
import pytest

from dpkme.clustering import (
    ClusterwiseRelease,
    allocate_points,
    clusterwise_release,
    compare_with_single_release,
    plan_from_noise,
    plan_kmeans,
)
from dpkme.datasets import gaussian_blobs
from dpkme.kernels.kernel import GaussianKernel
from dpkme.kernels.random_features import CosineBiasFeatures
from dpkme.metrics import rkhs_distance
from dpkme.privacy.accounting import BudgetLedger
from dpkme.release.result import Release

BOX = (-12.0, 12.0)
KERNEL = GaussianKernel(lengthscale=2.0)


@pytest.fixture(scope="module")
def blobs():
    return gaussian_blobs(1500, 2, n_centers=3, cluster_std=1.0, box_half_width=10.0, random_state=2,
                          return_labels=True)


@pytest.fixture(scope="module")
def release(blobs):
    X, _ = blobs
    return clusterwise_release(X, k=3, n_points=30, epsilon=4.0, delta=1e-6, n_iter=5, kernel=KERNEL,
                               n_features=300, bounds=BOX, random_state=0)


def test_contract(release, blobs):
    X, _ = blobs
    cw = release
    assert isinstance(cw, ClusterwiseRelease) and isinstance(cw.release, Release)
    rel = cw.release
    assert rel.mechanism == "clusterwise-algorithm2"
    assert rel.n_points == 30 and rel.points.shape == (30, 2)
    assert sum(c.mixture_weight for c in cw.components) == pytest.approx(1.0)
    assert np.all(rel.weights >= 0) and rel.weights.sum() <= 1.0 + 1e-9
    owner = np.asarray(rel.params["component_of_point"])
    for c in cw.components:
        np.testing.assert_allclose(rel.weights[owner == c.index], c.mixture_weight * c.weights)
    # totals: exactly the target; the ledger agrees; one charge per step or one line
    assert rel.epsilon == pytest.approx(4.0, rel=1e-6) and cw.plan.epsilon() <= 4.0 * (1 + 1e-9)
    assert [c.details["kind"] for c in cw.charges()] == ["lloyd", "release"]
    led = BudgetLedger()
    led.add(cw.total_charge())
    assert led.totals(delta=1e-6)["pld"][0] == pytest.approx(4.0, rel=1e-6)
    # the JSON export keeps everything needed and round-trips
    back = Release.from_json(rel.to_json())
    np.testing.assert_allclose(back.weights, rel.weights)
    assert back.params["release_step"]["mu"] == pytest.approx(cw.plan.step("release").mu)
    # the local view is the partition the release step used and is not in the export
    assert cw.local_view.counts.sum() == X.shape[0]
    assert "NOT RELEASED" in cw.local_view.note
    assert "labels" not in rel.to_json()


def test_budget_split_composes_exactly(release):
    plan = release.plan
    it, rs = plan.step("lloyd"), plan.step("release")
    assert plan.mu_total**2 == pytest.approx(it.count * it.mu**2 + rs.mu**2)
    assert rs.mu**2 / plan.mu_total**2 == pytest.approx(0.5, rel=1e-6)


def test_large_epsilon_release_is_accurate_and_matches_a_single_release(blobs):
    """At epsilon = 1e4 both releases are noise-free in effect; with 60 points each the RKHS distance
    to the private KME is below 0.02 (the reduced-set error of this set-up), and the cluster-wise one
    is within 2x of the single release."""
    X, y = blobs
    out = compare_with_single_release(X, labels=y, kernel=KERNEL, epsilon=1e4, delta=1e-6, k=3, n_points=60,
                                      n_features=300, n_iter=5, bounds=BOX, random_state=1)
    assert out["clusterwise"]["rkhs_distance"] < 0.02
    assert out["single"]["rkhs_distance"] < 0.02
    assert out["clusterwise"]["rkhs_distance"] < 2 * out["single"]["rkhs_distance"] + 0.005
    assert out["clustering"]["ari_vs_reference"] > 0.99
    assert set(out["clustering"]) >= {"ari", "purity", "objective", "objective_ratio"}


def test_mixture_weights_follow_noisy_sizes(release):
    cw = release
    kept = [c.index for c in cw.components]
    counts = cw.noisy_counts[kept]
    np.testing.assert_allclose([c.mixture_weight for c in cw.components], counts / counts.sum())
    true = cw.local_view.counts[kept] / cw.local_view.counts[kept].sum()
    sigma_n = cw.plan.step("release").sigma_count
    assert np.abs(np.array([c.mixture_weight for c in cw.components]) - true).max() < 6 * sigma_n / counts.sum()


def test_allocate_points():
    np.testing.assert_array_equal(allocate_points(10, [0.5, 0.3, 0.2]), [5, 3, 2])
    a = allocate_points(7, [0.98, 0.01, 0.01])
    assert a.sum() == 7 and a.min() >= 1
    assert allocate_points(3, [1, 1, 1]).tolist() == [1, 1, 1]
    with pytest.raises(ValueError, match="at least 3"):
        allocate_points(2, [1, 1, 1])


def test_explicit_noise_plan_with_release_step(blobs):
    X, _ = blobs
    plan = plan_from_noise(n_iter=3, sigma_count=5.0, sum_multiplier=5.0, delta=1e-6, release_sigma_count=3.0,
                           release_sum_multiplier=3.0)
    cw = clusterwise_release(X, k=3, n_points=9, plan=plan, kernel=KERNEL, n_features=100, bounds=BOX,
                             random_state=0, preimages="none", solver="pursuit")
    assert cw.release.epsilon == pytest.approx(plan.epsilon())
    assert cw.release.sigma == pytest.approx(3.0 * (1 + 1e-6))  # sum noise = multiplier * C (C = 1 + margin)


def test_errors(blobs):
    X, _ = blobs
    base = dict(k=3, kernel=KERNEL, n_features=50, bounds=BOX)
    with pytest.raises(ValueError, match="at least k"):
        clusterwise_release(X, n_points=2, epsilon=1.0, delta=1e-6, **base)
    with pytest.raises(ValueError, match="release_share"):
        clusterwise_release(X, n_points=9, epsilon=1.0, delta=1e-6, release_share=1.0, **base)
    with pytest.raises(ValueError, match="no release step"):
        clusterwise_release(X, n_points=9, plan=plan_kmeans(epsilon=1, delta=1e-6, n_iter=2), **base)
    with pytest.raises(ValueError, match="epsilon"):
        clusterwise_release(X, n_points=9, **base)
    with pytest.raises(ValueError, match="unknown solver"):
        clusterwise_release(X, n_points=9, epsilon=1.0, delta=1e-6, solver="magic", **base)
    f = CosineBiasFeatures(KERNEL, n_components=20, random_state=0).fit(2)
    with pytest.raises(ValueError, match="RandomFourierFeatures"):
        clusterwise_release(X, k=3, n_points=9, epsilon=1.0, delta=1e-6, features=f, bounds=BOX)
    with pytest.raises(ValueError, match="no cluster has a usable"):
        clusterwise_release(X, n_points=9, epsilon=1e-4, delta=1e-6, **base)


def test_release_is_close_to_private_kme_at_moderate_epsilon(blobs):
    """epsilon = 4, N = 1500: the released mixture is far closer to the private KME than a single point."""
    X, _ = blobs
    cw = clusterwise_release(X, k=3, n_points=30, epsilon=4.0, delta=1e-6, n_iter=5, kernel=KERNEL, n_features=300,
                             bounds=BOX, random_state=3, preimages="none")
    d = rkhs_distance(X, cw.release.points, cw.release.weights, kernel=KERNEL)
    d0 = rkhs_distance(X, np.zeros((1, 2)), np.ones(1), kernel=KERNEL)
    assert d < 0.25 * d0


def test_allocate_points_refuses_counts_beyond_float64_integers():
    """Regression (Hypothesis): n_points = 10**46 overflowed the int64 cast of the shares."""
    from dpkme.clustering.release import allocate_points

    with pytest.raises(ValueError, match="n_points=1" + "0" * 46 + " is too large"):
        allocate_points(10**46, [0.0])
    assert allocate_points(2**53, [1.0, 1.0]).sum() == 2**53
