"""Per-column declared scaling suggested from public information (issue 16, finding 3): suggest_scaling,
scale_warning, DeclaredScaling's bounds, box domain and JSON."""

from __future__ import annotations

import numpy as np
import pytest

from dpkme.kernels import GaussianKernel
from dpkme.preprocessing import (
    SCALE_RATIO_WARNING,
    SOURCE_BOUNDS,
    SOURCE_PRIVATE,
    SOURCE_PUBLIC,
    DeclaredScaling,
    scale_warning,
    suggest_scaling,
)
from dpkme.release.subspace import algorithm1

COLS = ["bill_length_mm", "bill_depth_mm", "flipper_length_mm", "body_mass_g"]
BOUNDS = {"bill_length_mm": (25, 65), "bill_depth_mm": (10, 25), "flipper_length_mm": (160, 240),
          "body_mass_g": (2000, 7000)}


class Sentinel:
    """Stands for private rows that must not be read: any array access fails."""

    def __array__(self, *a, **k):
        raise AssertionError("the private rows were read")


def test_bounds_come_first_and_map_onto_minus_one_one():
    sug = suggest_scaling(np.ones((5, 4)) * 3, bounds=BOUNDS, columns=COLS)
    assert sug.sources == (SOURCE_BOUNDS,) * 4 and not sug.missing and not sug.data_dependent
    sc = sug.scaling
    assert sc.columns == tuple(COLS) and sc.is_private
    lo, hi = sc.scaled_box()
    assert np.allclose(lo, -1) and np.allclose(hi, 1)
    assert np.allclose(sc.apply([[25, 10, 160, 2000], [65, 25, 240, 7000]]), [[-1] * 4, [1] * 4])


def test_public_rows_fill_the_columns_without_bounds_and_private_rows_are_not_read():
    rng = np.random.default_rng(0)
    pub = rng.normal([44, 17, 200, 4200], [5, 2, 14, 800], size=(34, 4))
    sug = suggest_scaling(pub, bounds={"body_mass_g": (2000, 7000)}, columns=COLS)
    assert sug.sources == (SOURCE_PUBLIC,) * 3 + (SOURCE_BOUNDS,)
    assert np.allclose(sug.center[:3], pub[:, :3].mean(axis=0))
    assert np.allclose(sug.scale[:3], pub[:, :3].std(axis=0, ddof=1))
    assert sug.lower is None and sug.scaling.scaled_box() is None      # not every column has bounds
    assert "publishable subset" in sug.message and "declared bounds" in sug.message


def test_nothing_public_lists_the_columns_to_declare():
    sug = suggest_scaling(None, columns=COLS)
    assert sug.missing == tuple(COLS) and sug.scaling is None
    assert "declare a centre and a scale" in sug.message
    # one publishable row is not enough to suggest anything
    assert suggest_scaling(np.ones((1, 4)), columns=COLS).missing == tuple(COLS)


def test_private_rows_are_used_only_when_allowed_and_are_flagged():
    X = np.random.default_rng(1).normal(size=(50, 2)) * [1, 1000]
    sug = suggest_scaling(None, bounds={"a": (0, 1)}, columns=["a", "b"], private_rows=X)
    assert sug.sources == (SOURCE_BOUNDS, SOURCE_PRIVATE)
    assert sug.data_dependent == ("b",) and "not private" in sug.sources[1]
    sc = sug.scaling
    assert not sc.is_private and sc.data_dependent == ("b",)
    assert "NOT differentially private" in sug.message
    assert DeclaredScaling.from_json(sc.to_json()).data_dependent == ("b",)


def test_constant_public_column_gets_a_positive_scale():
    pub = np.array([[5.0, 1.0], [5.0, 2.0], [5.0, 3.0]])
    sug = suggest_scaling(pub, columns=["c", "x"])
    assert sug.scale[0] == 5.0 and sug.scale[1] == 1.0


@pytest.mark.parametrize("kwargs, match", [
    ({"columns": []}, "columns is empty"),
    ({"columns": "ab"}, "sequence of column names"),
    ({"columns": ["a", "a"]}, r"repeated names \['a'\]"),
    ({"columns": ["a"], "bounds": {"b": (0, 1)}}, r"column\(s\) \['b'\]"),
    ({"columns": ["a"], "bounds": {"a": (3, 1)}}, r"\(3, 1\) must be finite with lower < upper"),
    ({"columns": ["a"], "bounds": {"a": (0, np.inf)}}, "lower < upper"),
    ({"columns": ["a"], "bounds": {"a": "wide"}}, "pair"),
    ({"columns": ["a"], "bounds": [(0, 1)]}, "mapping"),
])
def test_suggest_scaling_errors_name_the_value(kwargs, match):
    with pytest.raises(ValueError, match=match):
        suggest_scaling(None, **kwargs)


def test_suggest_scaling_refuses_rows_with_the_wrong_width():
    with pytest.raises(ValueError, match="public_rows"):
        suggest_scaling(np.ones((4, 3)), columns=["a", "b"])


def test_json_round_trip_keeps_every_field():
    sc = suggest_scaling(None, bounds=BOUNDS, columns=COLS).scaling
    back = DeclaredScaling.from_json(sc.to_json())
    for name in ("center", "scale", "lower", "upper"):
        assert np.array_equal(getattr(back, name), getattr(sc, name))
    assert (back.columns, back.sources, back.source, back.data_dependent) == (
        sc.columns, sc.sources, sc.source, sc.data_dependent)
    Z = np.random.default_rng(2).uniform(-1, 1, size=(6, 4))
    assert np.allclose(back.apply(back.inverse(Z)), Z, rtol=0, atol=1e-12)   # float64 round trip
    # the old two-key form still reads
    assert DeclaredScaling.from_dict({"center": [0.0], "scale": [2.0]}).columns is None


@pytest.mark.parametrize("text, match", [("{", "could not be read"), ("[1, 2]", "'center' and 'scale'"),
                                         ('{"center": [0]}', "'center' and 'scale'")])
def test_from_json_errors(text, match):
    with pytest.raises(ValueError, match=match):
        DeclaredScaling.from_json(text)


@pytest.mark.parametrize("kwargs, match", [
    ({"columns": ["a"]}, "columns has 1 entries but the scaling has 2"),
    ({"sources": "x"}, "sources must be a sequence"),
    ({"lower": [0, 0]}, "both lower and upper"),
    ({"lower": [0, 5], "upper": [1, 1]}, "lower"),
])
def test_declared_scaling_new_fields_are_checked(kwargs, match):
    with pytest.raises(ValueError, match=match):
        DeclaredScaling(center=[0.0, 0.0], scale=[1.0, 1.0], **kwargs)


def test_box_domain_keeps_algorithm1_points_in_the_declared_bounds():
    sc = DeclaredScaling.from_box(lower=[25, 2000], upper=[65, 7000], columns=["len", "mass"])
    dom = sc.box_domain()
    assert dom.blocks == {"len": slice(0, 1), "mass": slice(1, 2)}
    X = sc.apply(np.random.default_rng(3).uniform([30, 3000], [60, 6000], size=(200, 2)))
    rel = algorithm1(X, None, kernel=GaussianKernel(lengthscale=0.5), epsilon=1.0, delta=1e-6, n_points=40,
                     point_domain=dom, weights="simplex", random_state=0)
    orig = sc.inverse(rel.points)
    assert np.all(orig >= [25, 2000]) and np.all(orig <= [65, 7000])
    assert DeclaredScaling(center=0.0, scale=1.0).box_domain() is None


def test_scale_warning_threshold():
    assert scale_warning([1.0, SCALE_RATIO_WARNING * (1 - 1e-9)]) is None
    msg = scale_warning([1.0, SCALE_RATIO_WARNING], columns=["small", "big"])
    assert msg is not None and "big" in msg and "small" in msg and "100" in msg
    assert scale_warning([1.0, 10.0], ratio=10) is not None
    assert scale_warning([3.0]) is None


@pytest.mark.parametrize("kwargs, match", [
    ({"scales": [1.0, 0.0]}, r"> 0 in every entry, got 0.0 at index 1"),
    ({"scales": [1.0, -2.0]}, "got -2.0 at index 1"),
    ({"scales": [1.0, np.nan]}, "scales"),
    ({"scales": [1.0, 2.0], "columns": ["a"]}, "1 names for 2 scales"),
    ({"scales": [1.0, 2.0], "ratio": 1.0}, "ratio must be > 1, got 1.0"),
])
def test_scale_warning_errors(kwargs, match):
    with pytest.raises(ValueError, match=match):
        scale_warning(**kwargs)


def test_private_rows_are_not_read_when_everything_is_declared():
    """``private_rows`` is a last resort: with every column declared they are never touched."""
    sug = suggest_scaling(None, bounds={"a": (0, 1)}, columns=["a"], private_rows=Sentinel())
    assert sug.sources == (SOURCE_BOUNDS,) and not sug.data_dependent
    with pytest.raises(ValueError, match="the private rows were read"):
        suggest_scaling(None, columns=["a"], private_rows=Sentinel())
