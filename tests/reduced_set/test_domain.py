"""Reduced-set solvers restricted to a declared domain (issue 15).

A tiny stand-in domain with the attributes of ``dpkme.schema.EmbeddedDomain`` (two continuous
coordinates in a box, one integer coordinate on levels, a one-hot block of three categories) checks the
solver side on its own: every released point lies in the domain, discrete coordinates sit on declared
values, solvers that cannot honour a domain refuse it, and without a domain nothing changes. The real
``TableSchema(...).domain`` is exercised end to end in tests/release/test_tabular.py.
"""

from __future__ import annotations

import math

import numpy as np
import pytest

from dpkme import GaussianKernel, reduced_set
from dpkme.kernels.random_features import RandomFourierFeatures
from dpkme.release.random_features import algorithm2, privatise_feature_mean

A = math.sqrt(-math.log(0.3))          # one-hot scale for a similarity of 0.3
LEVELS = np.arange(0.0, 4.0 + 1e-12, 0.5)
KERNEL = GaussianKernel(lengthscale=1.0)


class StandInDomain:
    """Coordinates 0, 1 continuous in [0, 4]; 2 an integer on LEVELS; 3-5 a one-hot block scaled by A."""

    def __init__(self):
        self.lower = np.zeros(6)
        self.upper = np.array([4.0, 4.0, 4.0, A, A, A])
        self.fixed = np.array([False, False, True, True, True, True])
        self.blocks = {"x": slice(0, 1), "y": slice(1, 2), "n": slice(2, 3), "c": slice(3, 6)}
        self.calls = {"sample": 0, "bounds_for": 0}

    def sample(self, n, rng):
        self.calls["sample"] += 1
        Z = np.empty((n, 6))
        Z[:, :2] = rng.uniform(0.0, 4.0, size=(n, 2))
        Z[:, 2] = rng.choice(LEVELS, size=n)
        Z[:, 3:] = A * np.eye(3)[rng.integers(0, 3, size=n)]
        return Z

    def project(self, Z):
        Z = np.array(Z, dtype=np.float64)
        Z[:, :2] = np.clip(Z[:, :2], 0.0, 4.0)
        Z[:, 2] = LEVELS[np.abs(Z[:, 2:3] - LEVELS[None, :]).argmin(axis=1)]
        Z[:, 3:] = A * np.eye(3)[Z[:, 3:].argmax(axis=1)]
        return Z

    def bounds_for(self, Z):
        self.calls["bounds_for"] += 1
        Z = np.asarray(Z, dtype=np.float64)
        return np.where(self.fixed, Z, self.lower), np.where(self.fixed, Z, self.upper)

    def contains(self, Z):
        Z = np.asarray(Z)
        box = np.all((Z >= self.lower) & (Z <= self.upper), axis=1)
        on_level = np.isin(Z[:, 2], LEVELS)
        onehot = np.all(np.isin(Z[:, 3:], [0.0, A]), axis=1) & (np.count_nonzero(Z[:, 3:], axis=1) == 1)
        return box & on_level & onehot


def _data(n=400, seed=0):
    """Rows piled against the box's edges (x = 0 for 90 %, y near 4), as in issue 15's tables."""
    rng = np.random.default_rng(seed)
    X = np.empty((n, 6))
    X[:, 0] = np.where(rng.random(n) < 0.9, 0.0, rng.uniform(0, 4, n))
    X[:, 1] = np.clip(4.0 - np.abs(rng.normal(0, 0.3, n)), 0, 4)
    X[:, 2] = rng.choice(LEVELS[:3], size=n)
    X[:, 3:] = A * np.eye(3)[rng.choice(3, size=n, p=[0.7, 0.2, 0.1])]
    return X


def _mass_inside(points, weights, domain):
    w = np.abs(weights)
    return float(w[domain.contains(points)].sum() / w.sum())


@pytest.mark.parametrize("solver", ["pursuit-joint", "joint", "pursuit", "herding"])
def test_every_released_point_lies_in_the_declared_domain(solver):
    domain = StandInDomain()
    opts = {"max_iter": 40} if solver == "joint" else {"pool_size": 1500}
    if solver in ("pursuit-joint", "herding"):
        opts["max_iter"] = 40
    rel = algorithm2(_data(), kernel=KERNEL, epsilon=2.0, delta=1e-6, n_points=30, n_features=400,
                     solver=solver, random_state=1, solver_options=opts, domain=domain)
    assert _mass_inside(rel.points, rel.weights, domain) == 1.0          # 100 %, not "almost"
    assert domain.contains(rel.points).all()
    assert domain.calls["sample"] >= 1
    if solver != "pursuit":
        assert domain.calls["bounds_for"] >= 1
    assert rel.params["initial"] == "domain" and rel.params["domain"] == "declared"


def test_unconstrained_solver_leaves_the_box_and_the_domain_keeps_it():
    """The contrast of issue 15: same data, same seed; without a domain mass leaves the box."""
    X = _data()
    kw = dict(kernel=KERNEL, epsilon=2.0, delta=1e-6, n_points=30, n_features=400, random_state=1,
              solver_options={"pool_size": 1500, "max_iter": 40, "weights": "simplex"})
    domain = StandInDomain()
    free = algorithm2(X, q_scale=2.0, q_loc=2.0, **kw)
    box = np.all((free.points[:, :2] >= 0) & (free.points[:, :2] <= 4), axis=1)
    assert free.weights[~box].sum() > 0.05
    held = algorithm2(X, domain=domain, **kw)
    assert _mass_inside(held.points, held.weights, domain) == 1.0


def test_discrete_coordinates_never_move_in_refinement():
    domain = StandInDomain()
    rng = np.random.default_rng(3)
    feats = RandomFourierFeatures(KERNEL, n_components=300, random_state=0).fit(6)
    mu, _ = privatise_feature_mean(_data(), feats, epsilon=1.0, delta=1e-6, rng=rng)
    problem = reduced_set.Problem(mu, reduced_set.FourierMap.from_features(feats))
    Z0 = domain.sample(20, rng)
    Z, _w, info = reduced_set.refine(problem, Z0, np.full(20, 0.05), max_iter=30, domain=domain)
    np.testing.assert_array_equal(Z[:, 2:], Z0[:, 2:])                 # exactly, bit for bit
    assert np.all((Z[:, :2] >= 0) & (Z[:, :2] <= 4))
    assert info["iterations"] > 0 and not np.array_equal(Z[:, :2], Z0[:, :2])


def test_refine_refuses_starting_points_outside_the_domain():
    domain = StandInDomain()
    feats = RandomFourierFeatures(KERNEL, n_components=100, random_state=0).fit(6)
    problem = reduced_set.Problem(np.zeros(100), reduced_set.FourierMap.from_features(feats))
    Z0 = domain.sample(5, np.random.default_rng(0))
    Z0[2, 0] = 4.5
    with pytest.raises(ValueError, match="1 of the 5 starting points lie outside"):
        reduced_set.refine(problem, Z0, np.full(5, 0.2), domain=domain)


def test_preimage_refuses_a_domain():
    with pytest.raises(ValueError, match="cannot honour a declared domain"):
        algorithm2(_data(50), kernel=KERNEL, epsilon=1.0, delta=1e-6, n_points=3, n_features=50,
                   solver="preimage", random_state=0, domain=StandInDomain())
    spec = reduced_set.get_solver("preimage")
    assert not spec.honours_domain and all(s.honours_domain for n, s in reduced_set.SOLVERS.items()
                                           if n != "preimage")


def test_domain_is_validated_against_the_dimension():
    class Short(StandInDomain):
        def __init__(self):
            super().__init__()
            self.lower = np.zeros(5)

    with pytest.raises(ValueError, match=r"domain.lower has shape \(5,\)"):
        algorithm2(_data(50), kernel=KERNEL, epsilon=1.0, delta=1e-6, n_points=3, n_features=50,
                   random_state=0, domain=Short())
    with pytest.raises(ValueError, match="lacks"):
        reduced_set.PointSource(6, domain=object())


def test_public_points_are_projected_onto_the_domain():
    domain = StandInDomain()
    public = np.full((4, 6), 9.0)
    source = reduced_set.PointSource(6, public=public, domain=domain)
    assert domain.contains(source.take(4, np.random.default_rng(0))).all()
    assert "projected" in source.description


def test_algorithm1_draws_its_points_from_a_domain():
    from dpkme.release.subspace import algorithm1

    domain = StandInDomain()
    rel = algorithm1(_data(), None, kernel=KERNEL, epsilon=1.0, delta=1e-6, n_points=25, point_domain=domain,
                     weights="simplex", random_state=0)
    assert rel.params["points_source"] == "domain" and domain.contains(rel.points).all()
    again = algorithm1(_data(), None, kernel=KERNEL, epsilon=1.0, delta=1e-6, n_points=25,
                       point_domain=StandInDomain(), weights="simplex", random_state=0)
    np.testing.assert_array_equal(rel.points, again.points)
    with pytest.raises(ValueError, match="not both"):
        algorithm1(_data(), rel.points, kernel=KERNEL, epsilon=1.0, delta=1e-6, point_domain=domain)
