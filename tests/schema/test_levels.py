"""Numeric columns with declared levels (``ColumnSpec(values=...)``, issue 15): survey codes such as ages
17.5, 22, 27, ... stay numeric in the embedding, while the domain, the solvers, decoding and resampling keep
every released value on the levels."""

from __future__ import annotations

import json
import math
import warnings

import numpy as np
import pandas as pd
import pytest

from dpkme.privacy.leaks import PrivacyLeakWarning
from dpkme.release.tabular import release_table
from dpkme.schema import ColumnSpec, TableSchema, default_lengthscale, suggest_schema

C = ColumnSpec
AGES = (17.5, 22.0, 27.0, 32.0, 37.0, 42.0)
KIDS = (0, 1, 2, 3, 4, 6)


def _schema(**kw) -> TableSchema:
    return TableSchema((
        C("age", "continuous", lower=17.5, upper=42, values=AGES, decimals=1),
        C("kids", "integer", lower=0, upper=6, values=KIDS, missing="category"),
        C("x", "continuous", lower=0, upper=1),
        C("c", "categorical", categories=["a", "b", "c"]),
    ), **kw)


def _table(n: int, seed: int = 0) -> pd.DataFrame:
    rng = np.random.default_rng(seed)
    age = rng.choice(AGES, n, p=[0.05, 0.3, 0.3, 0.2, 0.1, 0.05])
    return pd.DataFrame({"age": age, "kids": rng.choice(KIDS, n).astype(float),
                         "x": np.clip(rng.normal(0.3 + (age - 17.5) / 50, 0.1), 0, 1),
                         "c": rng.choice(["a", "b", "c"], n)})


@pytest.mark.parametrize("kwargs, message", [
    (dict(values=[1.0, float("nan")]), r"finite numbers, got nan"),
    (dict(values=[3, 2, 5]), r"sorted and distinct \(increasing\), got 2 after 3"),
    (dict(values=[1, 1, 2]), r"sorted and distinct"),
    (dict(values=[-1, 5, 20]), r"values \[-1.0, 20.0\] of column \"v\" lie outside its declared bounds \[0.0, 10.0\]"),
    (dict(values=[4]), r"declares 1 value\(s\): declare at least two levels"),
    (dict(values="1,2,3"), r"must be a list of numbers"),
    (dict(values=[1, "two"]), r"must be numbers, got 'two'"),
    (dict(values=[1, True]), r"must be numbers, got True"),
    (dict(values=[1, 2], missing="impute", impute=1.5), r"impute=1.5 is not one of its declared values"),
])
def test_declared_levels_are_validated_and_errors_name_the_values(kwargs, message):
    with pytest.raises(ValueError, match=message):
        C("v", "continuous", lower=0, upper=10, **kwargs)


def test_levels_apply_to_continuous_and_integer_columns_only():
    with pytest.raises(ValueError, match=r"integer: its values must be whole numbers, got \[2.5\]"):
        C("k", "integer", lower=0, upper=5, values=[0, 2.5, 5])
    with pytest.raises(ValueError, match="continuous and integer columns only"):
        C("d", "datetime", lower="2020-01-01", upper="2021-01-01", values=[18262, 18300])
    with pytest.raises(ValueError, match="declare categories instead"):
        C("g", "categorical", categories=["a", "b"], values=[1, 2])
    assert C("k", "integer", lower=0, upper=5, values=[0.0, 5.0]).values == (0, 5)
    assert C("v", "continuous", lower=0, upper=1).value_levels == ()


def test_json_round_trip_keeps_the_levels():
    s = _schema()
    d = json.loads(s.to_json())
    assert d["columns"][0]["values"] == list(AGES) and d["columns"][1]["values"] == list(KIDS)
    assert "values" not in d["columns"][2]
    back = TableSchema.from_json(s.to_json())
    assert back == s and back["age"].value_levels == AGES and back.domain.value_levels.keys() == s.domain.value_levels.keys()


def test_encoding_keeps_the_numeric_scale_and_snaps_values_off_the_levels_with_a_count():
    s = _schema()
    df = pd.DataFrame({"age": [17.5, 24.4, 24.6, 50.0, 10.0], "kids": [0, 5, None, 6, 2], "x": 0.5,
                       "c": ["a"] * 5})
    Z = s.encode(df)
    lay = s._layout[0]
    # numeric embedding: order and distances of the declared values are kept
    assert np.allclose(Z[:, 0], (np.array([17.5, 22, 27, 42, 17.5]) - 17.5) / (24.5 * lay.lengthscale), atol=1e-12)
    report = s.encode_report(df).to_frame()
    assert report.loc["age", "rounded"] == 2 and report.loc["age", "clipped_high"] == 1
    assert report.loc["age", "clipped_low"] == 1
    assert report.loc["kids", "rounded"] == 1 and report.loc["kids", "missing"] == 1   # 5 -> 4 (a tie: the lower)
    back = s.decode(Z)
    assert back["age"].tolist() == [17.5, 22.0, 27.0, 42.0, 17.5]
    assert back["kids"].tolist()[:2] == [0, 4] and pd.isna(back["kids"][2]) and back["kids"][3] == 6


def test_the_domain_samples_projects_and_holds_leveled_coordinates_on_the_levels():
    s = _schema()
    dom = s.domain
    j = dom.blocks["age"].start
    assert dom.fixed[j] and dom.fixed[dom.blocks["kids"].start] and not dom.fixed[dom.blocks["x"].start]
    Z = dom.sample(400, np.random.default_rng(1))
    assert dom.contains(Z).all()
    assert set(np.round(s.decode(Z)["age"], 12)) == set(AGES)
    noisy = Z + np.random.default_rng(2).normal(0, 0.3, Z.shape)
    P = dom.project(noisy)
    assert dom.contains(P).all() and set(s.decode(P)["age"]) <= set(AGES)
    lo, hi = dom.bounds_for(P)
    assert np.array_equal(lo[:, j], P[:, j]) and np.array_equal(hi[:, j], P[:, j])
    off = P.copy()
    off[:, j] += 0.25 * (dom.value_levels[j][1] - dom.value_levels[j][0])
    assert not dom.contains(off).any()


def test_default_lengthscale_is_the_median_heuristic_over_the_levels():
    spec = C("age", "continuous", lower=17.5, upper=42, values=AGES)
    p, s = 4, 1.0
    expected = math.sqrt(2 * p * np.var(AGES) / s) / 24.5
    assert default_lengthscale(spec, n_columns=p) == pytest.approx(expected, rel=1e-12)
    # two uniform draws among the levels have expected squared embedded distance s / p
    lv = (np.array(AGES) - 17.5) / (24.5 * expected)
    assert np.mean((lv[:, None] - lv[None, :]) ** 2) == pytest.approx(s / p, rel=1e-12)
    # every integer of the bounds declared: the integer rule
    a = default_lengthscale(C("k", "integer", lower=0, upper=9), n_columns=3)
    b = default_lengthscale(C("k", "integer", lower=0, upper=9, values=list(range(10))), n_columns=3)
    assert a == pytest.approx(b, rel=1e-12)


def test_a_release_keeps_atoms_and_resampled_rows_on_the_levels():
    s = _schema()
    df = _table(400)
    rel = release_table(df, schema=s, epsilon=1.0, delta=1e-6, n_points=40, n_features=300, random_state=3)
    assert s.domain.contains(rel.points).all()
    atoms = rel.table()
    assert set(atoms["age"]) <= set(AGES) and set(atoms["kids"].dropna()) <= set(KIDS)
    for spread in (None, 0.0, 0.5, 3.0):
        rows = rel.sample(1000, 4, spread=spread)
        assert set(rows["age"]) <= set(AGES) and set(rows["kids"].dropna()) <= set(KIDS)
    # spreading redraws among the levels (more levels show up than atoms carry at a wide spread)
    wide = rel.sample(3000, 5, spread=50.0)
    assert set(wide["age"]) == set(AGES)
    csv = pd.read_csv(__import__("io").StringIO(rel.to_csv()))
    assert set(csv["age"]) <= set(AGES)


def test_spreading_among_levels_follows_the_kernel_weights():
    from dpkme.release.tabular import _redraw_level

    levels = np.array([0.0, 1.0, 2.0, 4.0])
    z = np.full(200_000, 1.0)
    sd = 0.8
    got = _redraw_level(levels, z, sd, np.random.default_rng(6))
    w = np.exp(-0.5 * ((levels - 1.0) / sd) ** 2)
    freq = np.array([(got == v).mean() for v in levels])
    assert np.allclose(freq, w / w.sum(), atol=5 * np.sqrt(0.25 / z.size))   # 5 binomial standard errors


def test_suggestion_proposes_levels_from_public_rows_and_flags_them_from_private_rows():
    private = _table(200, seed=7)
    public = _table(100, seed=8)
    s = suggest_schema(private, public=public)
    assert s.schema["age"].value_levels == tuple(sorted(set(public["age"])))
    assert s.schema["x"].values is None                                 # many distinct values: no levels
    assert s.schema.data_dependent == ()
    assert "levels" in s.notes["age"]
    assert suggest_schema(private, public=public, max_levels=0).schema["age"].values is None
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", PrivacyLeakWarning)
        p = suggest_schema(private)
    assert p.schema["age"].values is not None and "values" in p.schema.data_dependent_fields["age"]
    with pytest.raises(ValueError, match="max_levels must be an integer >= 0"):
        suggest_schema(private, public=public, max_levels=-1)


def test_declaring_the_levels_clears_their_data_dependence():
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", PrivacyLeakWarning)
        s = suggest_schema(_table(200, seed=9)).schema
    fixed = s.redeclare("age", lower=17.5, upper=42, values=AGES, kind="continuous")
    assert "values" not in fixed.data_dependent_fields.get("age", set())
