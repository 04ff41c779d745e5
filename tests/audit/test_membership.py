"""Membership-inference attack (dpkme.audit.membership): the attack's accuracy matches Φ(d/(2σ)) within its
confidence interval, never exceeds the DP bound (e^ε + δ)/(1 + e^ε) beyond it, and is a coin toss as ε → 0."""

import itertools
import math

import numpy as np
import pytest
from scipy.stats import norm

from dpkme.audit import membership_attack as exported
from dpkme.audit.membership import (
    DEFAULT_ATTACK_EPSILONS,
    MembershipAttack,
    gaussian_attack_accuracy,
    membership_attack,
    membership_bound,
)
from dpkme.privacy.calibration import calibrate_gaussian


@pytest.fixture(scope="module")
def attack():
    # alpha = 1e-3 per ε: the interval misses the exact accuracy at one of the 8 ε with probability <= 0.8 %
    return membership_attack(runs=1000, alpha=1e-3, random_state=3)


def test_accuracy_matches_the_gaussian_closed_form_within_its_interval(attack):
    res = attack
    assert exported is membership_attack and isinstance(res, MembershipAttack)
    assert res.epsilons.tolist() == sorted(DEFAULT_ATTACK_EPSILONS)
    # Algorithm 2's worst-case pair moves the feature mean by exactly the sensitivity 2/N (up to the 1e-12 margin)
    assert res.sensitivity == pytest.approx(2.0 / res.n, rel=1e-11)
    assert res.distance == pytest.approx(res.sensitivity, rel=1e-11)
    for e, s in zip(res.epsilons, res.sigmas):
        assert s == calibrate_gaussian(epsilon=float(e), delta=res.delta, sensitivity=res.sensitivity).sigma
    np.testing.assert_allclose(res.exact_accuracy, norm.cdf(res.distance / (2 * res.sigmas)), rtol=1e-12)
    np.testing.assert_allclose(res.exact_accuracy, gaussian_attack_accuracy(res.epsilons, delta=res.delta,
                                                                            sensitivity=res.sensitivity), rtol=1e-9)
    assert np.all(res.accuracy_low <= res.exact_accuracy) and np.all(res.exact_accuracy <= res.accuracy_high)
    np.testing.assert_allclose(res.accuracy, 0.5 * (res.true_positive_rate + res.true_negative_rate))
    assert np.all(res.accuracy_low <= res.accuracy) and np.all(res.accuracy <= res.accuracy_high)
    # the attack sees more at larger ε: the exact accuracy increases, and the runs follow
    assert np.all(np.diff(res.exact_accuracy) > 0)
    assert res.accuracy[-1] > res.accuracy[0] + 0.2


def test_never_above_the_bound_beyond_its_interval(attack):
    res = attack
    np.testing.assert_allclose(res.bound, (np.exp(res.epsilons) + res.delta) / (1 + np.exp(res.epsilons)), rtol=1e-12)
    assert not res.above_bound.any()
    assert np.all(res.accuracy_low <= res.bound)
    # the theory itself: Φ(Δ/(2σ)) <= (e^ε + δ)/(1 + e^ε) for every calibrated Gaussian release
    grid = np.geomspace(1e-3, 30, 40)
    for delta in (1e-10, 1e-5, 1e-2):
        for method in ("analytic", "classic"):
            g = grid[grid < 1] if method == "classic" else grid
            exact = gaussian_attack_accuracy(g, delta=delta, sensitivity=0.01, calibration=method)
            assert np.all(exact <= membership_bound(g, delta) + 1e-12), (delta, method)


def test_near_chance_as_epsilon_goes_to_zero():
    res = membership_attack(epsilons=[1e-3, 1e-2], delta=1e-5, runs=2000, alpha=1e-3, random_state=5)
    assert np.all(np.abs(res.exact_accuracy - 0.5) < 3e-3)
    assert np.all(res.bound - 0.5 < 3e-3)
    assert np.all(res.accuracy_low <= 0.5) and np.all(0.5 <= res.accuracy_high)
    # the analytic calibration makes the bound tight at ε = 0: the attack tends to (1 + δ)/2
    assert gaussian_attack_accuracy(1e-9, delta=1e-5, sensitivity=1.0) == pytest.approx(0.5 + 0.5e-5, abs=1e-9)
    assert membership_bound(0.0, 1e-5) == pytest.approx(0.500005, abs=1e-15)


def test_bound_formula():
    assert membership_bound(1.0) == pytest.approx(math.e / (1 + math.e), rel=1e-15)
    assert membership_bound(0.1) == pytest.approx(0.52497918747894, rel=1e-12)
    assert membership_bound(800.0, 0.1) == 1.0                  # no overflow
    np.testing.assert_allclose(membership_bound(np.array([0.0, 1.0]), 0.0), [0.5, math.e / (1 + math.e)])
    with pytest.raises(ValueError, match="epsilon"):
        membership_bound(-1.0)
    with pytest.raises(ValueError, match="delta"):
        membership_bound(1.0, 1.0)


def test_algorithm1_is_attacked_through_its_weights():
    res = membership_attack(mechanism="algorithm1", epsilons=[0.5, 4.0], runs=300, alpha=1e-3, random_state=2)
    assert res.mechanism == "algorithm1" and res.params["basis_dim"] >= 2
    assert 0 < res.distance <= res.sensitivity * (1 + 1e-9)        # a projection of the embedding: at most √2/N
    assert np.all(res.accuracy_low <= res.exact_accuracy) and np.all(res.exact_accuracy <= res.accuracy_high)
    assert not res.above_bound.any()


def test_reproducible_and_independent_across_epsilon():
    a = membership_attack(epsilons=[1.0, 2.0], runs=50, random_state=7)
    b = membership_attack(epsilons=[2.0, 1.0, 2.0], runs=50, random_state=7)          # sorted, de-duplicated
    np.testing.assert_array_equal(a.accuracy, b.accuracy)
    assert a.epsilons.tolist() == [1.0, 2.0]
    seen = []
    membership_attack(epsilons=[1.0], runs=300, progress=lambda f, m: seen.append(f))
    assert seen[-1] == 1.0 and all(x < y for x, y in itertools.pairwise(seen))


@pytest.mark.parametrize("kwargs, word", [
    ({"epsilons": []}, "epsilons"),
    ({"epsilons": [0.0, 1.0]}, "epsilon"),
    ({"epsilons": [float("nan")]}, "epsilons"),
    ({"delta": 0.0}, "delta"),
    ({"mechanism": "laplace"}, "mechanism"),
    ({"runs": 5}, "runs"),
    ({"alpha": 1.0}, "alpha"),
    ({"n": 1}, "n"),
    ({"n_features": 1}, "n_features"),
    ({"calibration": "hall"}, "calibration"),
])
def test_bad_settings_are_value_errors_naming_them(kwargs, word):
    with pytest.raises(ValueError, match=word):
        membership_attack(**{"runs": 20, **kwargs})
