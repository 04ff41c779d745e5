"""Feature maps of the two-sample tests: formulas, bounds, public-only construction."""

from __future__ import annotations

import json
import math

import numpy as np
import pytest

from dpkme.kernels.kernel import GaussianKernel, MaternKernel
from dpkme.two_sample.features import (
    MEFeatures,
    RFFFeatures,
    SCFFeatures,
    choose_locations,
    features_from_dict,
    make_features,
    public_lengthscale,
)


def test_me_features_are_kernel_values():
    rng = np.random.default_rng(0)
    V, X = rng.standard_normal((4, 3)), rng.standard_normal((50, 3))
    k = GaussianKernel(lengthscale=1.3)
    f = MEFeatures(V, k)
    F = f.transform(X)
    d2 = ((X[:, None, :] - V[None]) ** 2).sum(-1)
    assert F.shape == (50, 4)
    assert np.allclose(F, np.exp(-d2 / (2 * 1.3**2)), atol=1e-12)
    assert f.diff_bound == pytest.approx(2.0) and f.outer_diff_bound == pytest.approx(4.0)
    assert (F >= 0).all() and (F <= 1).all()


def test_scf_features_formula():
    rng = np.random.default_rng(1)
    T, X, c = rng.standard_normal((3, 2)), rng.standard_normal((20, 2)), np.array([0.5, -1.0])
    f = SCFFeatures(T, scale=2.0, center=c)
    U = (X - c) / 2.0
    fx = np.exp(-0.5 * (U**2).sum(1))[:, None]
    expect = np.hstack([np.sin(U @ T.T) * fx, np.cos(U @ T.T) * fx])
    assert np.allclose(f.transform(X), expect)
    assert f.n_features == 6 and f.diff_bound == pytest.approx(2 * math.sqrt(3))
    # |phi(x)|^2 = J_f f(u)^2 <= J_f
    assert (np.linalg.norm(f.transform(rng.normal(0, 3, (500, 2))), axis=1) <= math.sqrt(3) + 1e-12).all()


def test_rff_inner_products_approximate_the_kernel():
    rng = np.random.default_rng(2)
    k = GaussianKernel(lengthscale=1.0)
    f = RFFFeatures(k.sample_frequencies(2000, 2, rng), k)
    X = rng.standard_normal((5, 2))
    F = f.transform(X)
    assert np.abs(F @ F.T - k(X)).max() < 0.08  # Monte-Carlo error ~ 1/sqrt(2000)


def test_make_features_refuses_private_choices():
    with pytest.raises(ValueError, match="public"):
        make_features("me", dim=3)  # no locations, no public sample
    with pytest.raises(ValueError, match="length scale"):
        make_features("me", locations=np.zeros((2, 3)))  # locations but no bandwidth
    with pytest.raises(ValueError, match="SCF width"):
        make_features("scf", dim=3)
    with pytest.raises(ValueError, match="dimension"):
        make_features("scf")
    with pytest.raises(ValueError, match="columns"):
        make_features("me", dim=4, public_sample=np.zeros((5, 3)))
    with pytest.raises(ValueError, match="even"):
        make_features("rff", dim=2, n_features=5, scale=1.0)
    with pytest.raises(ValueError, match="kind"):
        make_features("mmd", dim=2, scale=1.0)


def test_make_features_from_public_information():
    rng = np.random.default_rng(3)
    pub = (rng.standard_normal((300, 4)), rng.standard_normal((300, 4)) + 1)
    f = make_features("me", public_sample=pub, n_features=6, random_state=0)
    pool = np.vstack(pub)
    assert f.n_features == 6 and f.dim == 4
    assert all(any(np.allclose(v, p) for p in pool) for v in f.locations)  # rows of the public sample
    assert f.kernel.lengthscale == pytest.approx(public_lengthscale(pool, random_state=rng))
    g = make_features("me", locations=np.zeros((2, 4)), scale=0.5)
    assert g.kernel.lengthscale == pytest.approx(0.5 * 2.0)
    s = make_features("scf", dim=4, n_features=3, scale=2.0, random_state=0)
    assert s.scale == pytest.approx(4.0) and s.n_features == 6
    r = make_features("rff", dim=4, n_features=10, lengthscale=1.5, random_state=0)
    assert r.n_features == 10
    m = make_features("me", locations=np.zeros((3, 4)), kernel=MaternKernel(lengthscale=1.0, nu=1.5))
    assert m.kernel.name == "matern"
    # same seed -> same map
    f2 = make_features("me", public_sample=pub, n_features=6, random_state=0)
    assert np.array_equal(f.locations, f2.locations)


def test_choose_locations_and_lengthscale():
    rng = np.random.default_rng(4)
    P = rng.standard_normal((50, 2))
    L = choose_locations(P, 5, random_state=1)
    assert L.shape == (5, 2) and len({tuple(r) for r in L}) == 5
    G = choose_locations(P, 7, method="gaussian", random_state=1)
    assert G.shape == (7, 2)
    with pytest.raises(ValueError, match="exceeds"):
        choose_locations(P[:3], 5)
    with pytest.raises(ValueError, match="method"):
        choose_locations(P, 2, method="kmeans")
    d = public_lengthscale(np.array([[0.0, 0.0], [3.0, 4.0]]))
    assert d == pytest.approx(5.0)
    with pytest.raises(ValueError, match="median"):
        public_lengthscale(np.zeros((4, 2)))


def test_amplitude_above_one_refused():
    with pytest.raises(ValueError, match="k\\(x, x\\)"):
        MEFeatures(np.zeros((2, 2)), GaussianKernel(lengthscale=1.0, amplitude=2.0))


def test_dimension_checks():
    f = MEFeatures(np.zeros((2, 3)), GaussianKernel(lengthscale=1.0))
    with pytest.raises(ValueError, match="column"):
        f.transform(np.zeros((4, 2)))
    with pytest.raises(ValueError, match="center"):
        SCFFeatures(np.zeros((2, 3)), scale=1.0, center=np.zeros(2))


@pytest.mark.parametrize("kind", ["me", "scf", "rff"])
def test_round_trip_through_dict(kind):
    f = make_features(kind, dim=3, n_features=4, scale=1.0, locations=np.ones((4, 3)) if kind == "me" else None,
                      random_state=5)
    d = json.loads(json.dumps(f.to_dict()))
    g = features_from_dict(d)
    X = np.random.default_rng(6).standard_normal((10, 3))
    assert np.allclose(f.transform(X), g.transform(X))
    assert isinstance(f.describe(), str) and kind.upper() in f.describe().upper().replace("RANDOM FOURIER", "RFF")
    with pytest.raises(ValueError):
        features_from_dict({"locations": []})


def test_scf_width_outside_the_lengthscale_range_is_refused():
    """Regression (Hypothesis): lengthscale=5e-324 overflowed (X - center) / scale (RuntimeWarning)."""
    from dpkme.two_sample.features import make_features

    with pytest.raises(ValueError, match=r"scale must lie in \[1e-100, 1e\+100\]"):
        make_features("scf", dim=2, n_features=1, lengthscale=5e-324, random_state=0)
