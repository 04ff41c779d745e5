"""Planning ε from a target accuracy (dpkme.privacy.planning): exact expected noise norms, monotone plans,
round trips (at the recommended ε the expected error is within the target), rounding up, public inputs only."""

import inspect
import itertools
import math

import numpy as np
import pytest
from scipy.stats import chi

from dpkme import privacy
from dpkme.kernels.kernel import GaussianKernel
from dpkme.kernels.random_features import RandomFourierFeatures
from dpkme.privacy import planning
from dpkme.privacy.calibration import calibrate_gaussian
from dpkme.privacy.planning import (
    EpsilonPlan,
    epsilon_for_mean_error,
    epsilon_for_rkhs_error,
    expected_mean_error,
    expected_noise_norm,
    expected_rkhs_error,
)
from dpkme.release.random_features import privatise_feature_mean

SETTING = dict(n_private=5000, delta=1e-6, n_features=500)


@pytest.mark.parametrize("J", [1, 2, 3, 10, 1000, 10**6])
def test_expected_noise_norm_is_the_chi_mean(J):
    assert expected_noise_norm(sigma=2.5, dim=J) == pytest.approx(2.5 * chi(J).mean(), rel=1e-11)
    assert expected_noise_norm(sigma=2.5, dim=J) >= 2.5 * chi(J).mean() * (1 - 1e-15)       # rounded up
    assert expected_noise_norm(sigma=1.0, dim=J) <= math.sqrt(J)            # Jensen
    if J >= 1000:
        series = 1 - 1 / (4 * J) + 1 / (32 * J**2)
        assert expected_noise_norm(sigma=1.0, dim=J) / math.sqrt(J) == pytest.approx(series, abs=1 / J**2 + 3e-12)


def test_expected_rkhs_error_is_the_noise_of_the_release():
    """The planned σ is the release's σ, and the noise of privatise_feature_mean has the planned mean norm."""
    N, J = 200, 64
    plan = epsilon_for_rkhs_error(0.2, n_private=N, delta=1e-6, n_features=J)
    feats = RandomFourierFeatures(GaussianKernel(lengthscale=1.0), n_components=J, random_state=0,
                                  dtype="float64").fit(2)
    X = np.random.default_rng(0).normal(size=(N, 2))
    exact = feats.mean_embedding(X)
    rng = np.random.default_rng(1)
    norms = []
    for _ in range(2000):
        v, cal = privatise_feature_mean(X, feats, epsilon=plan.epsilon, delta=1e-6, rng=rng)
        norms.append(np.linalg.norm(v - exact))
    assert cal.sigma == plan.sigma
    se = plan.sigma / math.sqrt(2 * len(norms))          # sd of a chi variable is < σ/√2
    assert abs(np.mean(norms) - plan.expected_error) < 5 * se
    assert plan.expected_error <= 0.2


def test_monotone():
    eps = np.geomspace(0.02, 50, 25)
    errs = [expected_rkhs_error(e, **SETTING) for e in eps]
    assert all(a > b for a, b in itertools.pairwise(errs))                    # more ε, less noise
    targets = np.geomspace(1e-2, 1.0, 20)
    plans = [epsilon_for_rkhs_error(t, **SETTING).epsilon for t in targets]
    assert all(a >= b for a, b in itertools.pairwise(plans))                 # looser target, smaller ε
    assert plans[0] > plans[-1]
    # more rows: the same accuracy for less ε; more features: more ε
    assert epsilon_for_rkhs_error(0.05, **{**SETTING, "n_private": 50_000}).epsilon < plans[0]
    assert (epsilon_for_rkhs_error(0.05, **{**SETTING, "n_features": 5000}).epsilon
            > epsilon_for_rkhs_error(0.05, **SETTING).epsilon)
    # add-remove halves the sensitivity: less ε for the same target
    assert (epsilon_for_rkhs_error(0.05, **SETTING, neighbouring="add-remove").epsilon
            < epsilon_for_rkhs_error(0.05, **SETTING).epsilon)


def _step(eps: float, significant: int = 3) -> float:
    return 10.0 ** (math.floor(math.log10(eps)) - significant + 1)


@pytest.mark.filterwarnings("ignore::dpkme.privacy.calibration.UnprovenCalibrationWarning")   # classic at ε >= 1
@pytest.mark.parametrize("calibration", ["analytic", "classic"])
@pytest.mark.parametrize("target", [0.01, 0.03, 0.1, 0.3])
def test_round_trip_rkhs(target, calibration):
    plan = epsilon_for_rkhs_error(target, **SETTING, calibration=calibration)
    assert isinstance(plan, EpsilonPlan) and plan.statistic == "rkhs" and not plan.at_floor
    err = expected_rkhs_error(plan.epsilon, **SETTING, calibration=calibration)
    assert err == plan.expected_error <= target                         # the promise, with the release's σ
    # rounded UP to 3 significant digits: at most one step above the exact ε, and one step less misses the target
    assert plan.epsilon_exact <= plan.epsilon <= plan.epsilon_exact + _step(plan.epsilon) * (1 + 1e-9)
    assert float(f"{plan.epsilon:.3g}") == plan.epsilon
    below = plan.epsilon - _step(plan.epsilon)
    assert expected_rkhs_error(below, **SETTING, calibration=calibration) > target
    # the exact ε is the smallest: a hair below it misses the target
    assert expected_rkhs_error(plan.epsilon_exact * (1 - 1e-6), **SETTING, calibration=calibration) > target
    assert plan.rmse == pytest.approx(plan.sigma * math.sqrt(SETTING["n_features"]))


@pytest.mark.parametrize("neighbouring", ["replace-one", "add-remove"])
@pytest.mark.parametrize("target, value_range", [(0.01, 1.0), (0.002, 1.0), (0.5, 120.0)])
def test_round_trip_mean_and_proportion(target, value_range, neighbouring):
    kw = dict(n_private=1000, value_range=value_range, delta=1e-6, neighbouring=neighbouring)
    plan = epsilon_for_mean_error(target, **kw)
    assert plan.statistic == "mean" and plan.dim == 1
    assert expected_mean_error(plan.epsilon, **kw) == plan.expected_error <= target
    assert expected_mean_error(plan.epsilon - _step(plan.epsilon), **kw) > target
    sens = value_range / 1000 / (1 if neighbouring == "replace-one" else 2)
    assert plan.sensitivity == pytest.approx(sens)
    sigma = calibrate_gaussian(epsilon=plan.epsilon, delta=1e-6, sensitivity=sens).sigma
    assert plan.expected_error == pytest.approx(sigma * math.sqrt(2 / math.pi), rel=1e-12)


def test_a_loose_target_gets_the_floor_and_an_impossible_one_an_error():
    plan = epsilon_for_mean_error(0.4, n_private=1000, delta=1e-6)
    assert plan.at_floor and plan.epsilon == 0.01 and plan.expected_error <= 0.4
    with pytest.raises(ValueError, match=r"target=1e-06 .*max_epsilon=100"):
        epsilon_for_rkhs_error(1e-6, **SETTING)
    with pytest.raises(ValueError, match="classic"):          # the classic calibration fails at such an ε
        epsilon_for_rkhs_error(2e-3, **SETTING, calibration="classic")


@pytest.mark.parametrize("kwargs, word", [
    ({"target": 0.0}, "target"),
    ({"target": -0.1}, "target"),
    ({"target": float("nan")}, "target"),
    ({"n_private": 0}, "n_private"),
    ({"n_private": 2.5}, "n_private"),
    ({"delta": 0.0}, "delta"),
    ({"delta": 1.0}, "delta"),
    ({"n_features": 0}, "n_features"),
    ({"calibration": "hall"}, "calibration"),
    ({"neighbouring": "swap"}, "neighbouring"),
    ({"min_epsilon": 1.0, "max_epsilon": 0.5}, "max_epsilon"),
    ({"significant": 0}, "significant"),
])
def test_bad_inputs_are_value_errors_naming_them(kwargs, word):
    with pytest.raises(ValueError, match=word):
        epsilon_for_rkhs_error(**{"target": 0.05, **SETTING, **kwargs})


def test_never_takes_data():
    """Planning reads public sizes and declared constants only: no parameter takes rows."""
    public = {"target", "epsilon", "sigma", "dim", "n_private", "delta", "n_features", "calibration",
              "neighbouring", "sensitivity", "min_epsilon", "max_epsilon", "significant", "value_range",
              "privacy"}
    for name in planning.__all__:
        fn = getattr(planning, name)
        if inspect.isfunction(fn):
            assert set(inspect.signature(fn).parameters) <= public, name
    rows = np.random.default_rng(0).normal(size=(100, 2))
    for bad in ({"n_private": rows}, {"n_private": rows.shape}, {"target": rows}):
        with pytest.raises(ValueError):
            epsilon_for_rkhs_error(**{"target": 0.05, **SETTING, **bad})
    with pytest.raises(ValueError, match="value_range"):
        epsilon_for_mean_error(0.01, n_private=100, delta=1e-6, value_range=rows[:, 0])
    assert privacy.epsilon_for_rkhs_error is epsilon_for_rkhs_error      # exported lazily by dpkme.privacy
