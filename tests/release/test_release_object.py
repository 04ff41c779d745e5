"""The Release value object: export, round trip, third-party estimates (eq. 4)."""

import io
import json

import numpy as np
import pandas as pd
import pytest

from dpkme import __version__
from dpkme.kernels.kernel import MaternKernel
from dpkme.release.result import Release


def make_release(**kw):
    rng = np.random.default_rng(0)
    args = dict(points=rng.normal(size=(6, 2)), weights=np.array([0.5, 0.25, 0.25, -0.1, 0.05, 0.05]),
                mechanism="algorithm1", epsilon=1.0, delta=1e-6, sigma=0.01, sensitivity=0.002,
                neighbouring="replace-one", calibration="analytic", kernel=MaternKernel(nu=1.5, lengthscale=2.0),
                seed=7, n_private=1000, params={"n_points": 6, "arr": np.arange(2), "x": np.float64(1.5)})
    args.update(kw)
    return Release(**args)


def test_json_round_trip_and_metadata_fields():
    r = make_release()
    meta = json.loads(r.to_json(include_points=False))
    for key in ("mechanism", "epsilon", "delta", "sigma", "kernel", "seed", "version", "neighbouring",
                "calibration", "sensitivity", "n_private", "noise_source"):
        assert key in meta
    assert meta["version"] == __version__ and meta["kernel"]["name"] == "matern"
    assert "points" not in meta
    back = Release.from_json(r.to_json())
    assert np.array_equal(back.points, r.points) and np.array_equal(back.weights, r.weights)
    assert back.kernel == r.kernel and back.seed == 7
    with pytest.raises(ValueError, match="no points"):
        Release.from_json(r.to_json(include_points=False))


def test_csv_export_parses_exactly():
    r = make_release()
    df = pd.read_csv(io.StringIO(r.to_csv(["age", 'b"m,i'])))
    assert list(df.columns) == ["age", 'b"m,i', "weight"]
    np.testing.assert_array_equal(df[["age", 'b"m,i']].to_numpy(), r.points)
    np.testing.assert_array_equal(df["weight"].to_numpy(), r.weights)
    with pytest.raises(ValueError, match="1 column names given for 2"):
        r.to_csv(["a"])


def test_expectation_is_equation_4():
    r = make_release()
    h = lambda Z: (Z[:, 0] > 0).astype(float)  # noqa: E731  probability of a half-plane
    assert r.expectation(h) == pytest.approx(float(r.weights @ (r.points[:, 0] > 0)))
    assert r.weight_l1 == pytest.approx(np.abs(r.weights).sum())
    Y = np.zeros((3, 2))
    np.testing.assert_allclose(r.evaluate(Y), r.kernel(Y, r.points) @ r.weights)
    with pytest.raises(ValueError, match="returned 1 values"):
        r.expectation(lambda Z: np.zeros(1))


def test_invalid_release_contents_refused():
    with pytest.raises(ValueError, match="length 2 but 6 points"):
        make_release(weights=np.ones(2))
    with pytest.raises(ValueError, match="nan"):
        make_release(weights=np.array([np.nan] * 6))
