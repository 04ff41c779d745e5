"""The charges of the private two-sample tests, known before a row is read (dpkme.two_sample.charges), equal the
charges the finished tests report: the app's gate charges the former before the test runs."""

import numpy as np
import pytest

from dpkme.two_sample import make_features, nte_test, release_test, tcmc_test
from dpkme.two_sample.charges import private_test_charges


def _key(charges):
    return [(c.mechanism, c.epsilon, c.delta, c.noise_multiplier, c.relation, c.count) for c in charges]


@pytest.fixture(scope="module")
def data():
    rng = np.random.default_rng(0)
    feats = make_features("rff", n_features=8, public_sample=rng.normal(size=(20, 2)), lengthscale=1.0,
                          random_state=0)
    return feats, rng.normal(size=(300, 2)), rng.normal(size=(250, 2))


@pytest.mark.parametrize("eps", [0.3, 1.0, 4.0])
def test_nte_charges_match_the_finished_test(data, eps):
    feats, X, Y = data
    res = nte_test(X, Y, features=feats, epsilon=eps, delta=1e-6)
    tc = private_test_charges("nte", n_x=len(X), n_y=len(Y), features=feats, epsilon=eps, delta=1e-6)
    assert _key(res.charges) == _key(tc.union)
    assert {k: _key(v) for k, v in res.holder_charges.items()} == {k: _key(v) for k, v in tc.holders.items()}


def test_tcmc_and_release_charges_match_the_finished_tests(data):
    feats, X, Y = data
    res = tcmc_test(X[:250], Y, features=feats, epsilon=1.0, delta=1e-6)
    assert _key(res.charges) == _key(private_test_charges("tcmc", n_x=250, features=feats, epsilon=1.0, delta=1e-6).union)
    w = np.full(40, 1 / 40)
    res = release_test((X[:40], w), Y, features=feats, epsilon=1.0, delta=1e-6, n_synthetic=100)
    tc = private_test_charges("release", n_x=100, n_y=len(Y), features=feats, epsilon=1.0, delta=1e-6)
    assert _key(res.charges) == _key(tc.union) and sorted(tc.holders) == ["Y"]


def test_bad_method_or_missing_size_is_a_clear_error(data):
    feats, _, _ = data
    with pytest.raises(ValueError, match="method"):
        private_test_charges("mmd", n_x=10, features=feats, epsilon=1.0, delta=1e-6)
    with pytest.raises(ValueError, match="n_y"):
        private_test_charges("nte", n_x=10, features=feats, epsilon=1.0, delta=1e-6)
