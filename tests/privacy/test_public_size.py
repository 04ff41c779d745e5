"""Under add-remove the row count N is itself private: every release must take a declared n_private and
never count it from the rows (review finding: Algorithm 1, the exponential mechanism and the GP release
recorded n_private = 200 vs 201 for two neighbouring tables, both labelled differentially private)."""

from __future__ import annotations

import numpy as np
import pytest

from dpkme import GaussianKernel
from dpkme._validation import public_size
from dpkme.release.exponential import exponential_mechanism
from dpkme.release.gp import gp_release
from dpkme.release.subspace import algorithm1

KERNEL = GaussianKernel(lengthscale=1.0)
X = np.random.default_rng(0).normal(size=(200, 2))


def test_algorithm1_refuses_to_count_n_under_add_remove():
    with pytest.raises(ValueError, match="n_private"):
        algorithm1(X, X[:20], kernel=KERNEL, epsilon=1.0, delta=1e-6, neighbouring="add-remove")
    rel = algorithm1(X, X[:20], kernel=KERNEL, epsilon=1.0, delta=1e-6, neighbouring="add-remove", n_private=500)
    assert rel.n_private == 500


def test_the_exponential_mechanism_refuses_to_count_n_under_add_remove():
    with pytest.raises(ValueError, match="n_private"):
        exponential_mechanism(X, X[:6], m=2, kernel=KERNEL, epsilon=1.0, neighbouring="add-remove")


def test_the_gp_release_refuses_to_count_n_under_add_remove():
    grid = (np.linspace(-2, 2, 5), np.linspace(-2, 2, 5))
    with pytest.raises(ValueError, match="n_private"):
        gp_release(X, kernel=KERNEL, epsilon=1.0, delta=1e-6, grid=grid, neighbouring="add-remove")


def test_public_size_rules():
    assert public_size(10, None, neighbouring="replace-one") == 10
    assert public_size(10, 12, neighbouring="add-remove") == 12
    with pytest.raises(ValueError, match="n_private=12 for 10 rows"):
        public_size(10, 12, neighbouring="replace-one")
    with pytest.raises(ValueError, match="add-remove"):
        public_size(10, None, neighbouring="add-remove")


def test_algorithm1_publishable_subset_check_does_not_read_the_true_count_under_add_remove():
    # attack: under add/remove a table of 5 rows and its neighbour of 4 must not be told apart by an error; the
    # subset-size check compares M with the public (declared) size, never with the private row count
    rng = np.random.default_rng(3)
    Z = rng.normal(size=(5, 2))
    for n_rows in (5, 4):
        X = rng.normal(size=(n_rows, 2))
        rel = algorithm1(X, Z, kernel=KERNEL, epsilon=1.0, delta=1e-6, neighbouring="add-remove", n_private=50,
                         points_are_sample=True, random_state=0)
        assert rel.points.shape == (5, 2)
    with pytest.raises(ValueError, match="public N=3"):
        algorithm1(rng.normal(size=(10, 2)), Z, kernel=KERNEL, epsilon=1.0, delta=1e-6, neighbouring="add-remove",
                   n_private=3, points_are_sample=True)
