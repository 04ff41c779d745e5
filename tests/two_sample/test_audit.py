"""Audit exhibit: the published sensitivity of the perturbed statistic is violated by orders of magnitude."""

from __future__ import annotations

import numpy as np
import pytest

from dpkme.kernels.kernel import GaussianKernel
from dpkme.two_sample.audit import (
    paper_statistic,
    perturbed_statistic_release,
    statistic_sensitivity_counterexample,
)
from dpkme.two_sample.features import MEFeatures, make_features


def test_paper_statistic_matches_formula():
    Z = np.random.default_rng(0).standard_normal((40, 3))
    w = Z.mean(0)
    S = Z.T @ Z / 40 + 0.1 * np.eye(3) - np.outer(w, w)
    assert paper_statistic(Z, 0.1) == pytest.approx(40 * w @ np.linalg.solve(S, w))


@pytest.mark.parametrize("n, min_ratio", [(100, 100.0), (1000, 1e4)])
def test_counterexample_in_feature_space(n, min_ratio):
    r = statistic_sensitivity_counterexample(n=n, n_features=5, gamma=1e-5)
    # neighbours: one row differs
    assert np.count_nonzero(np.any(r["Z"] != r["Z_neighbour"], axis=1)) == 1
    assert np.abs(r["Z"]).max() <= 1.0  # features bounded by kappa = 1 per coordinate
    assert r["statistic"] == pytest.approx(n * 1.0 / 1e-5, rel=1e-6)  # n q / gamma with q = 1
    assert r["statistic_neighbour"] <= n**2 / 4 * 1.01
    assert r["ratio"] > min_ratio  # orders of magnitude beyond the published bound (~ n^2 / (4 J^1.5))


def test_counterexample_realised_with_me_features():
    f = MEFeatures(np.random.default_rng(1).standard_normal((5, 3)), GaussianKernel(lengthscale=1.0))
    r = statistic_sensitivity_counterexample(n=500, gamma=1e-5, features=f)
    # neighbouring input data sets: exactly one pair (x_i, y_i) differs
    diff = np.any(r["X"] != r["X_neighbour"], axis=1) | np.any(r["Y"] != r["Y_neighbour"], axis=1)
    assert diff.sum() == 1
    assert r["ratio"] > 1e3


def test_perturbed_release_is_flagged_invalid():
    f = make_features("me", locations=np.random.default_rng(2).standard_normal((5, 3)), lengthscale=1.0)
    r = statistic_sensitivity_counterexample(n=300, features=f)
    a = perturbed_statistic_release(r["X"], r["Y"], features=f, epsilon=1.0, delta=1e-5, random_state=0)
    b = perturbed_statistic_release(r["X_neighbour"], r["Y_neighbour"], features=f, epsilon=1.0, delta=1e-5,
                                    random_state=1)
    assert not a.valid and not hasattr(a, "charges")
    # the two outputs are separated by many noise standard deviations: no privacy at all
    assert abs(a.statistic - b.statistic) > 100 * a.sigma
    assert a.true_epsilon_on(r["change"]) > 100 * a.claimed_epsilon
    with pytest.raises(ValueError):
        perturbed_statistic_release(r["X"], r["Y"][:10], features=f, epsilon=1.0, delta=1e-5)
