"""Tests of dpkme.preprocessing: declared scaling, clipping to a declared box, the public/private split."""

from __future__ import annotations

import numpy as np
import pytest

from dpkme.datasets import student_t_cloud
from dpkme.preprocessing import (
    DeclaredScaling,
    apply_declared_scaling,
    clip_to_box,
    public_private_split,
)


# --------------------------------------------------------------------------- public preprocessing
def test_declared_scaling_apply_inverse_and_dict():
    X = np.array([[0.0, 10.0], [100.0, 0.0], [50.0, 5.0]])
    s = DeclaredScaling.from_box(lower=[0, 0], upper=[100, 10], source="instrument ranges")
    Z = s.apply(X)
    np.testing.assert_allclose(Z, [[-1, 1], [1, -1], [0, 0]])
    np.testing.assert_allclose(s.inverse(Z), X)
    s2 = DeclaredScaling.from_dict(s.to_dict())
    np.testing.assert_array_equal(s2.center, s.center)
    assert s2.source == "instrument ranges"
    np.testing.assert_allclose(apply_declared_scaling(X, [50, 5], [50, 5]), Z)
    np.testing.assert_allclose(apply_declared_scaling(X, 0.0, 2.0), X / 2)  # scalars broadcast
    assert not np.shares_memory(Z, X)


@pytest.mark.parametrize(
    "center, scale, X, match",
    [
        ([0, 0], [1, 0], np.ones((3, 2)), "scale must be > 0"),
        ([0, 0], [1, -2], np.ones((3, 2)), "scale must be > 0"),
        ([0, 0, 0], [1, 1, 1], np.ones((3, 2)), "3 entries but the data have 2"),
        ([0, 0], [1, 1, 1], np.ones((3, 2)), "must match"),
        ([0, np.nan], [1, 1], np.ones((3, 2)), "non-finite"),
        ([0, 0], [1, 1], np.ones(3), "2-D"),
    ],
)
def test_declared_scaling_errors(center, scale, X, match):
    with pytest.raises(ValueError, match=match):
        apply_declared_scaling(X, center, scale)


def test_declared_box_and_scaling_refuse_overflowing_magnitudes():
    """Regression (fuzzing the Data page's declared box): a box of ±1e308 overflowed (hi - lo) with a
    RuntimeWarning, and a box of width 1e-300 mapped the data to ±1e303, whose squared distances overflow."""
    with pytest.raises(ValueError, match=r"within ±1e\+100; column 1 has lower=-1e\+308"):
        DeclaredScaling.from_box(lower=[0, -1e308], upper=[1, 1e308])
    narrow = DeclaredScaling.from_box(lower=[0.0, 0.0], upper=[1.0, 1e-300])
    with pytest.raises(ValueError, match=r"maps column 1 beyond ±1e\+100 .* declare a wider box"):
        narrow.apply(np.array([[0.5, 800.0], [0.2, -800.0]]))
    with pytest.raises(ValueError, match="beyond"):                       # overflow to inf: no RuntimeWarning
        apply_declared_scaling(np.array([[1e300]]), 0.0, 1e-10)
    np.testing.assert_allclose(narrow.apply(np.array([[0.5, 0.0]])), [[0.0, -1.0]])   # within the box: fine


def test_scaling_from_public_data():
    pub = np.random.default_rng(0).normal(5.0, 3.0, size=(500, 2))
    pub[:, 1] = 7.0  # a constant column gets scale 1
    s = DeclaredScaling.from_public_data(pub)
    Z = s.apply(pub)
    np.testing.assert_allclose(Z[:, 0].mean(), 0.0, atol=1e-12)
    np.testing.assert_allclose(Z[:, 0].std(ddof=1), 1.0, rtol=1e-12)
    np.testing.assert_allclose(Z[:, 1], 0.0)
    assert "public" in s.source


def test_clip_to_box_counts_values():
    X = np.array([[-5.0, 0.5], [0.5, 0.5], [2.0, 3.0]])
    Xc, n = clip_to_box(X, lower=[-1, 0], upper=[1, 1])
    np.testing.assert_array_equal(Xc, [[-1, 0.5], [0.5, 0.5], [1, 1]])
    assert n == 3
    assert X[0, 0] == -5.0  # input untouched
    Xc2 = clip_to_box(X, -10, 10, return_count=False)
    np.testing.assert_array_equal(Xc2, X)
    # heavy tails: the count equals the number of entries outside the box
    T = student_t_cloud(5000, 3, df=1.0, random_state=2)
    Tc, m = clip_to_box(T, -3.0, 3.0)
    assert m == int(np.sum(np.abs(T) > 3.0)) and m > 0
    assert np.abs(Tc).max() <= 3.0


@pytest.mark.parametrize(
    "lower, upper, match",
    [
        ([0, 0], [1, 0], "column 1 has lower=0.0, upper=0.0"),
        (1, -1, "lower < upper"),
        ([0, 0, 0], [1, 1, 1], "3 entries but the data have 2"),
        ([0, np.inf], [1, 1], "non-finite"),
    ],
)
def test_clip_to_box_errors(lower, upper, match):
    with pytest.raises(ValueError, match=match):
        clip_to_box(np.zeros((4, 2)), lower, upper)


def test_public_private_split():
    X = np.arange(200, dtype=float).reshape(100, 2)
    pub, priv, idx = public_private_split(X, public_fraction=0.1, random_state=42)
    assert pub.shape == (10, 2) and priv.shape == (90, 2)
    assert set(idx.public) | set(idx.private) == set(range(100))
    assert not set(idx.public) & set(idx.private)
    np.testing.assert_array_equal(pub, X[idx.public])
    np.testing.assert_array_equal(priv, X[idx.private])
    assert idx.seed == 42 and idx.to_dict()["n_public"] == 10
    _pub2, _, idx2 = public_private_split(X, public_fraction=0.1, random_state=42)
    np.testing.assert_array_equal(idx2.public, idx.public)
    _, _, idx3 = public_private_split(X, public_fraction=0.1, random_state=None)
    assert isinstance(idx3.seed, int)  # a fresh seed is drawn and recorded
    _, _, idx4 = public_private_split(X, public_fraction=0.1, random_state=idx3.seed)
    np.testing.assert_array_equal(idx4.public, idx3.public)


@pytest.mark.parametrize(
    "n, fraction, match",
    [
        (100, 0.0, "public_fraction must be a finite number > 0"),
        (100, 1.0, "0 < public_fraction < 1"),
        (100, 1.5, "0 < public_fraction < 1"),
        (100, -0.2, "public_fraction"),
        (3, 0.1, "0 public and 3 private rows; both parts must be non-empty"),
        (3, 0.9, "3 public and 0 private"),
    ],
)
def test_public_private_split_errors(n, fraction, match):
    with pytest.raises(ValueError, match=match):
        public_private_split(np.zeros((n, 2)), public_fraction=fraction, random_state=0)
