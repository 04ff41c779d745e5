"""Clustering metrics against scikit-learn / direct formulas, and the accuracy-vs-epsilon curve."""

from __future__ import annotations

import numpy as np
import pytest
from sklearn.metrics import adjusted_rand_score

from dpkme.clustering import (
    AccuracyCurve,
    accuracy_curve,
    adjusted_rand_index,
    cluster_purity,
    contingency_table,
    kernel_kmeans,
    partition_objective,
)
from dpkme.datasets import gaussian_blobs
from dpkme.kernels.kernel import GaussianKernel
from dpkme.kernels.random_features import RandomFourierFeatures


def test_ari_matches_sklearn():
    rng = np.random.default_rng(0)
    for _ in range(20):
        n = int(rng.integers(2, 200))
        a, b = rng.integers(0, rng.integers(1, 6), n), rng.integers(0, rng.integers(1, 6), n)
        assert adjusted_rand_index(a, b) == pytest.approx(adjusted_rand_score(a, b), abs=1e-12)
    a = rng.integers(0, 4, 100)
    assert adjusted_rand_index(a, (a + 1) % 4) == 1.0  # label permutation does not matter


def test_purity_and_contingency():
    pred = np.array([0, 0, 0, 1, 1, 2])
    truth = np.array([5, 5, 7, 7, 7, 5])
    np.testing.assert_array_equal(contingency_table(pred, truth), [[2, 1], [0, 2], [1, 0]])
    assert cluster_purity(pred, truth) == pytest.approx(5 / 6)
    with pytest.raises(ValueError, match="length"):
        adjusted_rand_index([0, 1], [0])
    with pytest.raises(ValueError, match="integer"):
        cluster_purity([0.5, 1.0], [0, 1])


def test_partition_objective_is_the_within_cluster_mean_squared_distance():
    X = gaussian_blobs(400, 2, n_centers=3, random_state=0)
    f = RandomFourierFeatures(GaussianKernel(lengthscale=2.0), n_components=64, random_state=0,
                              dtype="float64").fit(2)
    res = kernel_kmeans(X, k=3, features=f, bounds=(-12, 12), random_state=0, preimages="none")
    F = f.transform(X)
    lab = res.local_view.labels
    direct = sum(((F[lab == j] - F[lab == j].mean(axis=0)) ** 2).sum() for j in np.unique(lab)) / len(X)
    assert partition_objective(f, X, res.centres) == pytest.approx(direct, rel=1e-9)


def test_accuracy_curve_shapes_progress_and_trend():
    X, y = gaussian_blobs(1500, 2, n_centers=3, cluster_std=1.0, box_half_width=10.0, random_state=4,
                          return_labels=True)
    calls = []
    curve = accuracy_curve(X, labels=y, k=3, epsilons=[0.05, 1.0, 1e3], delta=1e-6, repetitions=3, n_iter=5,
                           kernel=GaussianKernel(lengthscale=2.0), n_features=200, bounds=(-12, 12), random_state=0,
                           progress=lambda f, m: calls.append(f))
    assert isinstance(curve, AccuracyCurve)
    assert set(curve.metrics) == {"objective", "objective_ratio", "ari_vs_nonprivate", "ari", "purity"}
    assert curve.metrics["ari"].shape == (3, 3)
    assert calls == sorted(calls) and calls[-1] == 1.0
    # at epsilon = 1e3 every repetition reproduces its non-private run (same initialisation)
    np.testing.assert_allclose(curve.metrics["ari_vs_nonprivate"][-1], 1.0, atol=1e-3)
    np.testing.assert_allclose(curve.metrics["objective_ratio"][-1], 1.0, atol=1e-3)
    # more budget never hurts much on average: median objective ratio decreases from the smallest epsilon
    med = np.median(curve.metrics["objective_ratio"], axis=1)
    assert med[-1] <= med[0] + 1e-9
    s = curve.summary("ari")
    assert len(s["median"]) == 3 and "nonprivate" in s and "baseline" in s
    rows = curve.to_records()
    assert len(rows) == 5 * 3 * 3 and {"epsilon", "repetition", "metric", "value"} <= set(rows[0])
    assert "not a DP release" in curve.params["note"]
    with pytest.raises(ValueError, match="unknown metric"):
        curve.summary("f1")


def test_accuracy_curve_errors():
    X = np.zeros((10, 2))
    with pytest.raises(ValueError, match="epsilons"):
        accuracy_curve(X, k=2, epsilons=[], delta=1e-6, kernel=GaussianKernel(lengthscale=1.0), bounds=(-1, 1))
    with pytest.raises(ValueError, match="epsilons"):
        accuracy_curve(X, k=2, epsilons=[1.0, -1.0], delta=1e-6, kernel=GaussianKernel(lengthscale=1.0))
    with pytest.raises(ValueError, match="labels"):
        accuracy_curve(X, k=2, epsilons=[1.0], delta=1e-6, labels=np.zeros(3, int),
                       kernel=GaussianKernel(lengthscale=1.0), bounds=(-1, 1))
