"""The charge a release's parameters imply (dpkme.release.charges) equals the charge of the finished release."""

from __future__ import annotations

import numpy as np
import pytest

from dpkme.kernels import GaussianKernel, MaternKernel
from dpkme.release import (
    algorithm1,
    algorithm1_charge,
    algorithm2,
    algorithm2_charge,
    exponential_mechanism,
    exponential_mechanism_charge,
    gp_release,
    gp_release_charge,
    uniform_baseline,
)
from dpkme.release.exponential import exponential_charge

X = np.random.default_rng(0).normal(size=(400, 2))


def _same(a, b):
    assert (a.mechanism, a.epsilon, a.delta, a.count) == (b.mechanism, b.epsilon, b.delta, b.count)
    if a.noise_multiplier is None:
        assert b.noise_multiplier is None
    else:
        assert a.noise_multiplier == pytest.approx(b.noise_multiplier, rel=1e-12)
    assert a.details["neighbouring"] == b.details["neighbouring"]


@pytest.mark.parametrize("kernel", [GaussianKernel(lengthscale=1.0), MaternKernel(lengthscale=0.7, nu=1.5)])
@pytest.mark.parametrize("eps, delta, calibration, mode", [(1.0, 1e-6, "analytic", "tight"),
                                                           (0.3, 1e-5, "classic", "paper"),
                                                           (5.0, 1e-8, "analytic", "paper")])
def test_algorithm1_charge_before_equals_the_releases_own(kernel, eps, delta, calibration, mode):
    pre = algorithm1_charge(n_private=X.shape[0], kernel=kernel, epsilon=eps, delta=delta, calibration=calibration,
                            sensitivity=mode)
    rel = algorithm1(X, None, kernel=kernel, epsilon=eps, delta=delta, n_points=15, q_scale=2.0,
                     calibration=calibration, sensitivity=mode)
    _same(pre, rel.charge)
    assert rel.charge.details["mechanism"] == "algorithm1"


@pytest.mark.parametrize("eps, delta, calibration", [(1.0, 1e-6, "analytic"), (0.5, 1e-5, "classic")])
def test_algorithm2_charge_before_equals_the_releases_own(eps, delta, calibration):
    k = GaussianKernel(lengthscale=1.0)
    pre = algorithm2_charge(n_private=X.shape[0], epsilon=eps, delta=delta, calibration=calibration)
    rel = algorithm2(X, kernel=k, epsilon=eps, delta=delta, n_points=10, n_features=200, calibration=calibration)
    _same(pre, rel.charge)


def test_gp_and_exponential_charges_before_equal_the_releases_own():
    k = GaussianKernel(lengthscale=1.0)
    pre = gp_release_charge(n_private=X.shape[0], kernel=k, epsilon=1.0, delta=1e-6, dim=2)
    rel = gp_release(X, kernel=k, epsilon=1.0, delta=1e-6, grid=[np.linspace(-3, 3, 6)] * 2)
    _same(pre, rel.privacy_charge())
    grid = np.linspace(-2, 2, 5)[:, None]
    er = exponential_mechanism(X[:, :1], grid, m=2, kernel=k, epsilon=0.5)
    _same(exponential_mechanism_charge(epsilon=0.5), exponential_charge(er))
    _same(exponential_mechanism_charge(epsilon=0.5), er.charge)


def test_a_release_without_noise_has_no_charge():
    assert uniform_baseline(X[:10], kernel=GaussianKernel(lengthscale=1.0)).charge is None
