"""Declared schemas of mixed tables (dpkme.schema): embedding, kernel, sensitivity, domain, suggestions."""

from __future__ import annotations

import itertools
import json
import math
import warnings

import numpy as np
import pandas as pd
import pytest

from dpkme import GaussianKernel, kme_sensitivity
from dpkme.datasets import SAMPLES, load_sample, load_schema
from dpkme.privacy.leaks import PrivacyLeakWarning
from dpkme.schema import (
    ColumnSpec,
    EncodeReport,
    TableSchema,
    default_lengthscale,
    default_similarity,
    suggest_schema,
)

C = ColumnSpec


def _mixed_schema(**kw) -> TableSchema:
    return TableSchema((
        C("height", "continuous", lower=100, upper=220, lengthscale=0.3, decimals=1),
        C("children", "integer", lower=0, upper=6),
        C("visits", "integer", lower=0, upper=20, missing="category"),
        C("region", "categorical", categories=["north", "south", "east"], missing="category", similarity=0.4),
        C("grade", "categorical", categories=[1, 2, 3]),
        C("smoker", "boolean", missing="category"),
        C("born", "datetime", lower="1930-01-01", upper="2010-12-31", missing="category"),
        C("seen", "datetime", lower="2020-01-01", upper="2021-01-01", decimals=2),
        C("weight", "continuous", lower=30, upper=200, missing="impute", impute=70),
    ), **kw)


def _mixed_frame() -> pd.DataFrame:
    return pd.DataFrame({
        "height": [171.2, 180.0, 99.0, 230.5, 150.3],
        "children": [0, 2, 6, 3, 1],
        "visits": [3, np.nan, 20, 0, 7],
        "region": ["north", None, "east", "south", "east"],
        "grade": [1, 3, 2, 2, 1],
        "smoker": [True, False, None, True, False],
        "born": ["1980-05-17", "1955/12/01", None, "2001-01-31", "1930-01-01"],
        "seen": pd.to_datetime(["2020-03-01 06:00", "2020-12-31 00:00", "2020-07-04 18:00", "2020-01-01 00:00",
                                "2020-02-29 00:00"]),
        "weight": [81.5, np.nan, 55.0, 120.25, 64.0],
        "extra_id": ["a", "b", "c", "d", "e"],
    })


# --------------------------------------------------------------------------- encode -> decode
def test_round_trip_every_kind_with_missing_values_and_dates():
    schema = _mixed_schema()
    df = _mixed_frame()
    Z = schema.encode(df)
    assert Z.shape == (5, schema.dim) and Z.dtype == np.float64
    back = schema.decode(Z)
    assert list(back.columns) == list(schema.names)
    # continuous: clipped to [100, 220], rounded to 1 decimal
    assert back["height"].tolist() == [171.2, 180.0, 100.0, 220.0, 150.3]
    assert back["height"].dtype == np.float64
    # integers: int64 without a missing level, nullable Int64 with one
    assert back["children"].dtype == np.int64 and back["children"].tolist() == [0, 2, 6, 3, 1]
    assert str(back["visits"].dtype) == "Int64"
    assert back["visits"].isna().tolist() == [False, True, False, False, False]
    assert back["visits"].dropna().tolist() == [3, 20, 0, 7]
    # categories as labels; the missing level as a missing value; integer categories as integers
    assert back["region"].isna().tolist() == [False, True, False, False, False]
    assert back["region"].dropna().tolist() == ["north", "east", "south", "east"]
    assert back["grade"].dtype == np.int64 and back["grade"].tolist() == [1, 3, 2, 2, 1]
    assert str(back["smoker"].dtype) == "boolean"
    assert back["smoker"].isna().tolist() == [False, False, True, False, False]
    assert back["smoker"].dropna().tolist() == [True, False, True, False]
    # dates: text parsed (two formats), whole days by default, datetime64
    assert back["born"].dtype == "datetime64[ns]"
    expected_born = pd.to_datetime(["1980-05-17", "1955-12-01", None, "2001-01-31", "1930-01-01"])
    assert back["born"].isna().tolist() == [False, False, True, False, False]
    assert (back["born"].dropna().to_numpy() == expected_born.dropna().to_numpy()).all()
    # a datetime column with decimals=2 keeps quarter days
    assert (back["seen"] == df["seen"]).all()
    # impute: the missing weight is the declared 70
    assert back["weight"].tolist() == [81.5, 70.0, 55.0, 120.25, 64.0]


def test_decoded_rows_encode_to_the_same_points():
    """decode is the inverse of encode on the domain (decimals/whole days are the schema's precision)."""
    schema = _mixed_schema()
    Z = schema.domain.project(schema.encode(_mixed_frame()))
    Z2 = schema.encode(schema.decode(Z))
    np.testing.assert_allclose(Z2, Z, rtol=0, atol=1e-12)


def test_bundled_mixed_tables_round_trip_and_fit_their_declared_domain():
    for name in ("penguins", "seattle_weather"):
        df, info = load_sample(name)
        schema = load_schema(name)
        assert info.schema and info.schema_path.is_file()
        report = schema.encode_report(df)
        counts = report.to_frame()
        assert (counts[["clipped_low", "clipped_high", "unknown", "rounded"]] == 0).all().all(), name
        back = schema.decode(schema.encode(df))
        for col in schema.names:
            a, b = df[col], back[col]
            if schema[col].kind == "datetime":
                a = pd.to_datetime(a, format="mixed")
            same = (a.isna().to_numpy() & b.isna().to_numpy()) | (a.to_numpy() == b.to_numpy())
            assert same.all(), (name, col)
    assert load_schema("penguins").encode(load_sample("penguins")[0]).shape == (344, 22)
    with pytest.raises(ValueError, match=r"sample 'wine' has no declared schema.*penguins"):
        load_schema("wine")
    assert sorted(k for k, v in SAMPLES.items() if v.schema) == ["penguins", "seattle_weather"]


# --------------------------------------------------------------------------- JSON
def test_json_round_trip_and_versioning():
    schema = _mixed_schema(data_dependent=("grade",), uniform_sq_distance=0.5)
    text = schema.to_json()
    again = TableSchema.from_json(text)
    assert again == schema and again.to_json() == text
    assert again.data_dependent == ("grade",) and again.uniform_sq_distance == 0.5
    d = json.loads(text)
    assert d["format"] == "dpkme.table_schema" and d["version"] == 1
    assert TableSchema.from_json(text.encode()) == schema
    with pytest.raises(ValueError, match="version 99 is not supported"):
        TableSchema.from_dict({**d, "version": 99})
    with pytest.raises(ValueError, match="not a dpkme table schema"):
        TableSchema.from_dict({**d, "format": "something else"})
    with pytest.raises(ValueError, match=r"unknown field\(s\) \['colour'\]"):
        TableSchema.from_dict({**d, "columns": [{**d["columns"][0], "colour": "red"}]})
    with pytest.raises(ValueError, match="not valid JSON"):
        TableSchema.from_json("{")
    # every spec survives its dict form
    for spec in schema.columns:
        assert ColumnSpec.from_dict(json.loads(json.dumps(spec.to_dict()))) == spec


# --------------------------------------------------------------------------- the kernel
def _factor_product(schema: TableSchema, df: pd.DataFrame, i: int, j: int) -> float:
    """k(x_i, x_j) from the per-column factors of the module docstring, computed from the cell values."""
    out = 1.0
    for spec in schema.columns:
        a, b = df[spec.name].iloc[i], df[spec.name].iloc[j]
        ma, mb = pd.isna(a), pd.isna(b)
        if spec.is_numeric:
            lo, hi = spec.bounds
            ls = schema.lengthscale(spec.name)

            def value(v, m, spec=spec, lo=lo, hi=hi):
                if m:
                    return spec.impute_value
                v = (pd.Timestamp(v) - pd.Timestamp("1970-01-01")) / pd.Timedelta(days=1) \
                    if spec.kind == "datetime" else float(v)
                return min(max(round(v) if spec.kind == "integer" else v, lo), hi)

            xa, xb = value(a, ma), value(b, mb)
            out *= math.exp(-(xa - xb) ** 2 / (2 * ls**2 * (hi - lo) ** 2))
            if spec.missing == "category" and ma != mb:
                out *= schema.similarity(spec.name)
        else:
            if spec.missing == "impute":
                a = spec.impute if ma else a
                b = spec.impute if mb else b
                ma = mb = False
            same = (ma and mb) or (not ma and not mb and a == b)
            out *= 1.0 if same else schema.similarity(spec.name)
    return out


def test_gaussian_kernel_on_embeddings_is_the_product_of_the_column_factors():
    schema = _mixed_schema()
    df = _mixed_frame().drop(columns=["extra_id"])
    Z = schema.encode(df)
    K = GaussianKernel(lengthscale=1.0).gram(Z)
    assert schema.kernel().lengthscale == 1.0
    for i, j in itertools.product(range(len(df)), repeat=2):
        assert K[i, j] == pytest.approx(_factor_product(schema, df, i, j), rel=1e-12, abs=1e-300)
    assert np.allclose(np.diag(K), 1.0, rtol=0, atol=1e-15)
    assert (K > 0).all() and (K <= 1.0 + 1e-15).all()


def test_kernel_bounds_over_the_whole_domain():
    """k(x, x) = 1 and 0 < k <= 1 for points drawn anywhere in the declared domain."""
    schema = _mixed_schema()
    Z = schema.domain.sample(300, np.random.default_rng(3))
    K = GaussianKernel(lengthscale=1.0).gram(Z)
    assert np.allclose(np.diag(K), 1.0, rtol=0, atol=1e-15)
    assert (K > 0).all() and (K <= 1.0 + 1e-15).all()
    # the smallest possible value: every coordinate at opposite ends of the domain box
    lo, hi = schema.domain.lower, schema.domain.upper
    assert K.min() >= math.exp(-0.5 * float(np.sum((hi - lo) ** 2))) - 1e-300


def test_kme_sensitivity_of_neighbouring_mixed_tables_is_at_most_2_over_n():
    """Brute force over replacements, out-of-domain and missing cells included: ||mu_D - mu_D'|| <= 2/N."""
    schema = _mixed_schema()
    base = _mixed_frame().drop(columns=["extra_id"])
    replacements = pd.DataFrame({
        "height": [1e6, -5.0, 160.0], "children": [99, -3, 4], "visits": [np.nan, 50, 1],
        "region": [None, "west", "south"], "grade": [3, 1, 2], "smoker": [None, True, False],
        "born": [None, "1800-01-01", "2050-06-06"], "seen": pd.to_datetime(["2019-01-01", "2030-01-01", "2020-06-01"]),
        "weight": [np.nan, 1000.0, 31.0]})
    kernel = GaussianKernel(lengthscale=1.0)
    N = len(base)
    tight = kme_sensitivity(n=N, kernel=kernel, domain=(schema.domain.lower, schema.domain.upper))
    X = schema.encode(base)
    worst = 0.0
    for i in range(N):
        for r in range(len(replacements)):
            other = pd.concat([base.drop(index=i), replacements.iloc[[r]]], ignore_index=True)
            Y = schema.encode(other)
            # the embedding is row by row: the other rows keep their points
            np.testing.assert_array_equal(Y[:-1], np.delete(X, i, axis=0))
            S = np.vstack([X, Y])
            w = np.concatenate([np.full(N, 1.0 / N), np.full(N, -1.0 / N)])
            dist = math.sqrt(max(float(w @ kernel.gram(S) @ w), 0.0))
            k_xy = float(kernel.gram(np.vstack([X[i], Y[-1]]))[0, 1])
            assert dist == pytest.approx(math.sqrt(2 - 2 * k_xy) / N, rel=1e-6, abs=1e-9)
            worst = max(worst, dist)
    assert worst <= 2.0 / N and worst <= tight + 1e-12


# --------------------------------------------------------------------------- errors
def test_errors_name_the_column_and_the_values():
    schema = TableSchema((C("species", "categorical", categories=["Adelie", "Chinstrap"]),
                          C("mass", "continuous", lower=2000, upper=7000)))
    df = pd.DataFrame({"species": ["Adelie", "Gentoo", "Gentoo"], "mass": [3000, 4000, 5000]})
    with pytest.raises(ValueError, match=r"column \"species\" holds 2 cell\(s\) whose value is not among its "
                                         r"declared categories \(e\.g\. 'Gentoo'") as err:
        schema.encode(df)
    # M2: the advice is the data-free one first; adding a value seen only in the private rows is data-dependent
    msg = str(err.value)
    assert msg.index("missing='category'") < msg.index("missing='impute'") < msg.index("data-dependent")
    assert "known publicly" in msg and "add them to the declared categories" not in msg
    df = pd.DataFrame({"species": ["Adelie", None, "Chinstrap"], "mass": [3000, 4000, np.nan]})
    with pytest.raises(ValueError, match=r"column \"species\" has 1 missing value\(s\) \(first in row 1\); declare "
                                         r"missing='category'"):
        schema.encode(df)
    df = pd.DataFrame({"species": ["Adelie"] * 3, "mass": ["3000", "heavy", "4000"]})
    with pytest.raises(ValueError, match=r"column \"mass\" is declared continuous but holds text that is not a "
                                         r"number: 'heavy' in row 1"):
        schema.encode(df)
    with pytest.raises(ValueError, match=r"column\(s\) \['mass'\] of the schema are not in the table"):
        schema.encode(pd.DataFrame({"species": ["Adelie"]}))
    dates = TableSchema((C("d", "datetime", lower="2000-01-01", upper="2001-01-01"),))
    with pytest.raises(ValueError, match=r"column \"d\" is declared datetime but 'soon' in row 1 is not a date"):
        dates.encode(pd.DataFrame({"d": ["2000-02-02", "soon"]}))
    with pytest.raises(ValueError, match=r"column \"d\" is declared datetime but holds numbers"):
        dates.encode(pd.DataFrame({"d": [1, 2]}))
    with pytest.raises(ValueError, match="holds True/False values but is declared continuous"):
        TableSchema((C("b", "continuous", lower=0, upper=1),)).encode(pd.DataFrame({"b": [True, False]}))


@pytest.mark.parametrize("kwargs, message", [
    (dict(name="m", kind="continuous", lower=10, upper=5), r'column "m": lower must be below upper'),
    (dict(name="m", kind="continuous"), r'column "m" is continuous: declare its bounds'),
    (dict(name="m", kind="number", lower=0, upper=1), r"kind must be one of"),
    (dict(name="m", kind="integer", lower=0.5, upper=3), r"its bounds must be integers"),
    (dict(name="m", kind="continuous", lower=0, upper=1, missing="impute"), r"missing='impute' but no impute"),
    (dict(name="m", kind="continuous", lower=0, upper=1, missing="impute", impute=2),
     r"impute=2.0 lies outside the declared bounds"),
    (dict(name="m", kind="continuous", lower=0, upper=1, lengthscale=0), r"lengthscale of column \"m\""),
    (dict(name="m", kind="continuous", lower=0, upper=1, similarity=0.5), r"similarity only applies"),
    (dict(name="c", kind="categorical", categories=["a", "b"], similarity=1.0), r"strictly between 0 and 1"),
    (dict(name="c", kind="categorical", categories=["a", "a"]), r"category 'a' is declared twice"),
    (dict(name="c", kind="categorical", categories=["a", 1.5]), r"categories must be strings or integers"),
    (dict(name="c", kind="categorical", categories=["a"]), r"single level"),
    (dict(name="c", kind="categorical"), r"declare its categories as a list"),
    (dict(name="c", kind="categorical", categories=["a", "b"], missing="impute", impute="z"),
     r"impute='z' is not one of its declared categories"),
    (dict(name="d", kind="datetime", lower="2020-01-01", upper="someday"), r"'someday' is not a date"),
    (dict(name="d", kind="datetime", lower=0, upper=10), r"must be a date such as '2012-01-01'"),
    (dict(name="b", kind="boolean", categories=["yes", "no"]), r"its categories are \(False, True\)"),
    (dict(name="i", kind="integer", lower=0, upper=9, decimals=1), r"decimals does not apply"),
])
def test_column_spec_validation(kwargs, message):
    kw = dict(kwargs)
    name, kind = kw.pop("name"), kw.pop("kind")
    with pytest.raises(ValueError, match=message):
        ColumnSpec(name, kind, **kw)


def test_schema_validation():
    with pytest.raises(ValueError, match=r"\['x'\] are declared more than once"):
        TableSchema((C("x", "boolean"), C("x", "boolean")))
    with pytest.raises(ValueError, match="at least one column"):
        TableSchema(())
    with pytest.raises(ValueError, match=r"data_dependent names column\(s\) \['y'\]"):
        TableSchema((C("x", "boolean"),), data_dependent=("y",))
    with pytest.raises(ValueError, match="ColumnSpec objects"):
        TableSchema(({"name": "x", "kind": "boolean"},))
    with pytest.raises(TypeError):
        ColumnSpec("x", "continuous", 0, 1)                      # bounds are keyword-only


# --------------------------------------------------------------------------- owner-only report
def test_encode_report_counts_what_the_preprocessing_changed():
    schema = TableSchema((C("x", "continuous", lower=0, upper=10),
                          C("n", "integer", lower=0, upper=5, missing="impute", impute=0),
                          C("c", "categorical", categories=["a", "b"], missing="category")))
    df = pd.DataFrame({"x": [-1.0, 5.0, 11.0, 12.0], "n": [1.5, 2.0, np.nan, 9.0], "c": ["a", "z", None, "b"],
                       "note": ["p", "q", "r", "s"]})
    rep = schema.encode_report(df)
    assert isinstance(rep, EncodeReport) and rep.owner_only and rep.n_rows == 4
    assert rep.counts["x"] == {"missing": 0, "unknown": 0, "clipped_low": 1, "clipped_high": 2, "rounded": 0}
    assert rep.counts["n"]["missing"] == 1 and rep.counts["n"]["rounded"] == 1 and rep.counts["n"]["clipped_high"] == 1
    assert rep.counts["c"]["unknown"] == 1 and rep.counts["c"]["missing"] == 1
    assert rep.ignored_columns == ("note",)
    assert "owner-only" in repr(rep) and rep.n_changed == 8
    assert any("above the declared upper bound" in line for line in rep.lines())
    back = schema.decode(schema.encode(df))
    assert back["x"].tolist() == [0.0, 5.0, 10.0, 10.0] and back["n"].tolist() == [2, 2, 0, 5]
    assert back["c"].isna().tolist() == [False, True, True, False]


# --------------------------------------------------------------------------- the domain
def test_domain_sampler_projection_and_solver_bounds():
    schema = _mixed_schema()
    dom = schema.domain
    rng = np.random.default_rng(11)
    Z = dom.sample(2000, rng)
    assert Z.shape == (2000, schema.dim) and dom.contains(Z).all()
    assert (Z >= dom.lower).all() and (Z <= dom.upper).all()
    # every one-hot block has one vertex, every level occurs
    for name in ("region", "grade", "smoker"):
        block = Z[:, dom.blocks[name]]
        assert ((block > 0).sum(axis=1) == 1).all()
        assert ((block > 0).sum(axis=0) > 0).all()
    # integers sit on their levels, and every level occurs
    children = schema.decode(Z)["children"]
    assert set(children) == set(range(7))
    # projection: idempotent, lands in the domain, and moves points already in the domain by nothing
    W = Z + 0.3 * rng.standard_normal(Z.shape)
    P = dom.project(W)
    assert dom.contains(P).all() and not dom.contains(W).all()
    np.testing.assert_array_equal(dom.project(P), P)
    np.testing.assert_array_equal(dom.project(Z), Z)
    # bounds for L-BFGS-B: fixed coordinates pinned at their value, free ones get the box
    lo, hi = dom.bounds_for(P)
    assert lo.shape == hi.shape == P.shape
    assert (lo[:, dom.fixed] == P[:, dom.fixed]).all() and (hi[:, dom.fixed] == P[:, dom.fixed]).all()
    free = ~dom.fixed
    h = dom.blocks["height"].start
    assert free[h] and (lo[:, h] == dom.lower[h]).all() and (hi[:, h] == dom.upper[h]).all()
    assert dom.fixed[dom.blocks["children"]].all() and dom.fixed[dom.blocks["region"]].all()
    # a numeric column whose missing level is chosen is pinned at its imputation value
    b = dom.blocks["born"].start
    missing_born = P[:, b + 2] > P[:, b + 1]
    assert missing_born.any() and (~missing_born).any()
    assert (lo[missing_born, b] == hi[missing_born, b]).all()
    assert (lo[~missing_born, b] < hi[~missing_born, b]).all()
    # decoded samples respect the declared domain
    back = schema.decode(Z)
    assert back["height"].between(100, 220).all() and set(back["grade"]) <= {1, 2, 3}
    assert set(back["region"].dropna()) <= {"north", "south", "east"}
    born = back["born"].dropna()
    assert (born >= pd.Timestamp("1930-01-01")).all() and (born <= pd.Timestamp("2010-12-31")).all()
    with pytest.raises(ValueError):
        dom.sample(0, rng)


def test_domain_sampling_is_reproducible_from_the_generator():
    dom = _mixed_schema().domain
    a = dom.sample(50, np.random.default_rng(5))
    b = dom.sample(50, np.random.default_rng(5))
    np.testing.assert_array_equal(a, b)


# --------------------------------------------------------------------------- public default scales
def test_default_scales_give_expected_squared_distance_s_exactly():
    """Exact expectation over uniform draws (enumeration of the discrete levels; 1/6 for a uniform difference)."""
    for s in (1.0, 0.3):
        schema = TableSchema((C("x", "continuous", lower=-5, upper=5),
                              C("d", "datetime", lower="2000-01-01", upper="2010-01-01"),
                              C("k", "integer", lower=1, upper=4),
                              C("c", "categorical", categories=["a", "b", "c"], missing="category"),
                              C("b", "boolean")), uniform_sq_distance=s)
        p = len(schema)
        total = 0.0
        for spec in schema.columns:
            lay_slice = schema.domain.blocks[spec.name]
            width = schema.domain.upper[lay_slice]
            if spec.kind in ("continuous", "datetime"):
                total += width[0] ** 2 / 6.0                      # E(U - V)^2 = w^2 / 6 for U, V ~ U[0, w]
            elif spec.kind == "integer":
                step, n = schema.domain.integer_levels[lay_slice.start]
                total += np.mean([((i - j) * step) ** 2 for i in range(n) for j in range(n)])
            else:
                a, c = width[0], len(spec.levels)
                total += np.mean([0.0 if i == j else 2 * a * a for i in range(c) for j in range(c)])
            assert math.isclose(total, s * (schema.names.index(spec.name) + 1) / p, rel_tol=1e-12)
        assert math.isclose(total, s, rel_tol=1e-12)


def test_default_scales_median_embedded_distance_is_about_one():
    """The rule targets the median heuristic on the declared domain: the median squared distance of two
    uniform draws is close to 1 (a sum of 6 independent terms; loose band, 20 000 pairs)."""
    schema = load_schema("seattle_weather")
    Z = schema.domain.sample(40_000, np.random.default_rng(2))
    d2 = np.sum((Z[:20_000] - Z[20_000:]) ** 2, axis=1)
    assert 0.75 < float(np.median(d2)) < 1.05
    # the mean is exactly 1 (previous test); Hoeffding with d2 <= 5.3 here: P(|mean - 1| > 0.1) < 1e-6
    assert abs(float(np.mean(d2)) - 1.0) < 0.1


def test_default_scale_functions_and_overrides():
    x = C("x", "continuous", lower=0, upper=1)
    assert default_lengthscale(x, n_columns=6) == pytest.approx(1.0, rel=1e-15)
    assert default_lengthscale(x, n_columns=6, uniform_sq_distance=4.0) == pytest.approx(0.5, rel=1e-15)
    k = C("k", "integer", lower=0, upper=1)                     # two levels: E(K - K')^2 = 1/2
    assert default_lengthscale(k, n_columns=3) == pytest.approx(math.sqrt(3 * 3 / 6), rel=1e-15)
    cat = C("c", "categorical", categories=["a", "b", "c", "d"])
    assert default_similarity(cat, n_columns=2) == pytest.approx(math.exp(-1 / (2 * 2 * 0.75)), rel=1e-15)
    num_missing = C("m", "continuous", lower=0, upper=1, missing="category")
    assert default_similarity(num_missing, n_columns=5) == pytest.approx(math.exp(-1 / 5), rel=1e-15)
    with pytest.raises(ValueError, match="has no similarity"):
        default_similarity(x, n_columns=2)
    schema = TableSchema((C("x", "continuous", lower=0, upper=10, lengthscale=0.1), cat))
    assert schema.lengthscale("x") == 0.1 and schema.similarity("x") is None and schema.lengthscale("c") is None
    table = schema.describe()
    assert table.loc["x", "scales"] == "declared" and table.loc["c", "scales"] == "default"
    assert schema.domain.upper[0] == pytest.approx(10.0)        # 1 / lengthscale


# --------------------------------------------------------------------------- suggestions
def _people(n=40, seed=0):
    rng = np.random.default_rng(seed)
    return pd.DataFrame({
        "age": rng.integers(18, 90, size=n),
        "income": np.round(rng.gamma(2.0, 20_000.0, size=n), 2),
        "city": rng.choice(["Bern", "Basel", "Chur"], size=n),
        "member": rng.random(size=n) < 0.5,
        "joined": pd.date_range("2015-03-01", periods=n, freq="17D").strftime("%Y-%m-%d"),
        "id": [f"P{i:04d}" for i in range(n)],
    })


def test_suggestion_from_public_rows_reads_nothing_private():
    private = _people(seed=1)
    public = _people(seed=2)
    with warnings.catch_warnings():
        warnings.simplefilter("error", PrivacyLeakWarning)
        s = suggest_schema(private, public=public, max_categories=10)
    assert s.data_dependent == () and s.warning is None
    sch = s.schema
    assert [sch[c].kind for c in sch.names] == ["integer", "continuous", "categorical", "boolean", "datetime"]
    assert "id" in s.excluded and "row label" in s.excluded["id"]           # an identifier, by its public name
    assert sch["city"].categories == ("Basel", "Bern", "Chur")
    lo, hi = sch["age"].bounds
    assert lo <= public["age"].min() and hi >= public["age"].max() and lo % 10 == 0 and hi % 10 == 0
    assert sch["income"].decimals == 2
    assert sch["joined"].lower == "2015-01-01"
    # the suggestion is a usable schema
    assert sch.encode(private).shape == (40, sch.dim)
    # the suggested values depend on the public rows only
    other_private = _people(seed=3)
    with warnings.catch_warnings():
        warnings.simplefilter("error", PrivacyLeakWarning)
        assert suggest_schema(other_private, public=public, max_categories=10).schema == sch


def test_suggestion_from_the_private_rows_warns_and_is_marked():
    private = _people(seed=1)
    private.loc[3, "income"] = np.nan
    with pytest.warns(PrivacyLeakWarning, match=r"read the private rows for column\(s\) \['age', 'income'"):
        s = suggest_schema(private, max_categories=10)
    # a bool column's dtype was inferred from its values by the reader: its kind is data-dependent too (M1)
    assert set(s.data_dependent) == {"age", "income", "city", "member", "joined"}
    assert s.schema.data_dependent_fields["member"] == {"kind", "missing"}   # whether a cell is missing: data too
    assert s.warning and "not differentially private" in s.warning
    assert s.schema["income"].missing == "category"
    assert "PRIVATE" in s.notes["age"]
    assert s.schema.to_dict()["data_dependent"] == list(s.data_dependent)
    # re-declaring a column from public knowledge clears the fields it declares (kind: confirmed explicitly)
    fixed = s.schema.replace_column(C("age", "integer", lower=0, upper=120, missing="category"))
    assert fixed.data_dependent_fields["age"] == {"kind"} and fixed["age"].bounds == (0.0, 120.0)
    fixed = s.schema.replace_column(C("age", "integer", lower=0, upper=120), declared="all")
    assert "age" not in fixed.data_dependent and fixed["age"].bounds == (0.0, 120.0)
    with pytest.raises(ValueError, match='column "nope" is not in the schema'):
        s.schema.replace_column(C("nope", "boolean"))


# --------------------------------------------------------------------------- review findings: row-local parsing
def _rows_are_row_local(schema: TableSchema, df: pd.DataFrame) -> None:
    """Every row's embedding in ``df`` equals its embedding as a one-row table: it depends on that row only."""
    Z = schema.encode(df)
    for j in range(len(df)):
        np.testing.assert_array_equal(Z[j], schema.encode(df.iloc[[j]])[0], err_msg=f"row {j} of {df.iloc[:, 0].tolist()}")


def test_date_parsing_of_a_row_does_not_depend_on_other_rows():
    """C1: a guessed column-wide format let one row decide how every other row's date is read."""
    # the attack: with a format guessed from the first cell, ["13/04/2020", "03/04/2020" x 5] decoded as April 3
    # and ["12/25/2020", "03/04/2020" x 5] as March 4. With a declared format each cell is read on its own.
    for date_format, day in (("%d/%m/%Y", "2020-04-03"), ("%m/%d/%Y", "2020-03-04")):
        schema = TableSchema((C("d", "datetime", lower="2020-01-01", upper="2021-01-01", date_format=date_format),))
        for first in ("13/04/2020", "12/25/2020", "03/04/2020"):
            df = pd.DataFrame({"d": [first] + ["03/04/2020"] * 5})
            try:
                back = schema.decode(schema.encode(df))
            except ValueError as exc:                 # the first cell is not a date in the declared format
                assert "row 0" in str(exc) and date_format in str(exc)
                continue
            assert (back["d"].iloc[1:] == pd.Timestamp(day)).all(), (date_format, first)
    # the property, for several declared formats: every neighbour of a table keeps the other rows' points
    pool = ["13/04/2020", "12/25/2020", "03/04/2020", "2020-04-03", "2020/12/25", "2020-12-25T10:30",
            "2020-12-25 10:30:00+05:00", "25.12.2020 10:30", "12.25.2020 10:30", "04/03/2020 06:00", None, "",
            "nan", pd.Timestamp("2020-06-01 12:00"), "soon", "now", "today", "2300-01-01"]
    for date_format in (None, "ISO8601", "%d/%m/%Y", "%m/%d/%Y", "%d.%m.%Y %H:%M"):
        kw = {} if date_format is None else {"date_format": date_format}
        schema = TableSchema((C("d", "datetime", lower="2020-01-01", upper="2021-01-01", missing="category", **kw),))
        readable = []
        for cell in pool:
            try:
                schema.encode(pd.DataFrame({"d": [cell]}))
                readable.append(cell)
            except ValueError:
                pass
        assert len(readable) >= 5, date_format
        base = pd.DataFrame({"d": readable})
        _rows_are_row_local(schema, base)
        for i in range(len(readable)):
            for cell in pool:
                other = base.copy()
                other.iloc[i, 0] = cell
                if cell in readable or cell is None:
                    _rows_are_row_local(schema, other)
                else:
                    with pytest.raises(ValueError, match=rf"row {i}\b"):
                        schema.encode(other)


def test_date_format_is_declared_validated_and_round_trips():
    from dpkme.schema import parse_dates

    spec = C("d", "datetime", lower="2020-01-01", upper="2021-01-01")
    assert spec.date_format == "ISO8601" and "date_format" not in spec.to_dict()      # the default
    dmy = C("d", "datetime", lower="2020-01-01", upper="2021-01-01", date_format="%d/%m/%Y")
    assert dmy.to_dict()["date_format"] == "%d/%m/%Y" and ColumnSpec.from_dict(dmy.to_dict()) == dmy
    schema = TableSchema((dmy,))
    assert TableSchema.from_json(schema.to_json())["d"].date_format == "%d/%m/%Y"
    assert schema.decode(schema.encode(pd.DataFrame({"d": ["03/04/2020"]})))["d"].iloc[0] == pd.Timestamp("2020-04-03")
    for bad, message in (("mixed", "never guessed"), ("%H:%M", "year, month and day"), ("", "date_format"),
                         (3, "date_format")):
        with pytest.raises(ValueError, match=message):
            C("d", "datetime", lower="2020-01-01", upper="2021-01-01", date_format=bad)
    with pytest.raises(ValueError, match=r'column "x" is continuous: date_format applies to datetime columns'):
        C("x", "continuous", lower=0, upper=1, date_format="%d/%m/%Y")
    # the public parser, reused by the app: each cell on its own, missing tokens as NaT
    out = parse_dates(["13/04/2020", "03/04/2020", None, " NA ", "2020-04-03"], date_format="%d/%m/%Y")
    assert out.tolist()[:2] == [pd.Timestamp("2020-04-13"), pd.Timestamp("2020-04-03")]
    assert out.isna().tolist() == [False, False, True, True, True]
    assert str(out.dtype) == "datetime64[ns]"
    with pytest.raises(ValueError, match=r"'2020-04-03' in row 4 is not a date in the declared format '%d/%m/%Y'"):
        parse_dates(["13/04/2020", "03/04/2020", None, " NA ", "2020-04-03"], date_format="%d/%m/%Y", errors="raise")
    iso = parse_dates(pd.Series(["2020-01-01T12:00", "2020-01-01 12:00:00+02:00", "2020/01/02"]), date_format="ISO8601")
    assert iso.tolist() == [pd.Timestamp("2020-01-01 12:00"), pd.Timestamp("2020-01-01 10:00"),
                            pd.Timestamp("2020-01-02")]
    with pytest.raises(ValueError, match="holds numbers"):
        parse_dates([1, 2], date_format="ISO8601")
    dates = TableSchema((C("d", "datetime", lower="2000-01-01", upper="2001-01-01"),))
    with pytest.raises(ValueError, match=r"'03/04/2000' in row 0 is not a date in the declared format 'ISO8601'.*"
                                         r"date_format"):
        dates.encode(pd.DataFrame({"d": ["03/04/2000"]}))


# --------------------------------------------------------------------------- review findings: bool vs int labels
def test_categorical_codes_of_a_row_do_not_depend_on_other_rows():
    """C5: True == 1 == 1.0 hash alike; the first occurrence must not decide how the others are read."""
    cells = [True, False, 1, 1.0, np.int64(1), np.float64(1.0), np.True_, 0, 2, "1", " 2 ", "True", None, np.nan, "x"]
    for spec in (C("c", "categorical", categories=[1, 2], missing="category"),
                 C("c", "categorical", categories=["1", "2", "True"], missing="category"),
                 C("c", "boolean", missing="category")):
        schema = TableSchema((spec,))
        for a in cells:
            for b in cells:
                try:
                    _rows_are_row_local(schema, pd.DataFrame({"c": pd.Series([a, b, b, a], dtype=object)}))
                except ValueError:                        # "x" in a boolean column: refused whatever the order
                    assert spec.kind == "boolean" and "x" in (a, b)
    # the reported case: categories [1, 2] with True first turned every later 1 into "missing"
    schema = TableSchema((C("c", "categorical", categories=[1, 2], missing="category"),))
    back = schema.decode(schema.encode(pd.DataFrame({"c": pd.Series([True, 1, 1.0, 2], dtype=object)})))
    assert back["c"].isna().tolist() == [True, False, False, False]
    assert back["c"].iloc[1:].tolist() == [1, 1, 2]


# --------------------------------------------------------------------------- review findings: data-dependent fields
def _published_unless_flagged(schema: TableSchema) -> dict:
    """The schema's published dict with every field flagged as read from the private rows left out."""
    flags = schema.data_dependent_fields
    return {spec.name: {k: v for k, v in spec.to_dict().items() if k not in flags.get(spec.name, ())}
            for spec in schema.columns}


def _neighbours_of_people():
    base = _people(seed=1)
    variants = {}
    for col, value in (("income", np.nan), ("income", 12345.678), ("age", np.nan), ("city", None),
                       ("member", None), ("joined", None), ("joined", "2016-02-03T10:30")):
        other = base.copy()
        if col in ("age", "member"):
            other[col] = other[col].astype(object)
        other.loc[5, col] = value
        if col == "age" and value is not None:
            other["age"] = pd.to_numeric(other["age"])          # what a CSV reader makes of a blank: float64
        variants[(col, str(value))] = other
    return base, variants


def test_suggestion_without_public_rows_flags_every_field_it_reads_from_them():
    """C4/M1: neighbours (one missing cell, one value with more decimals, ...) give the same published schema
    except for the fields flagged as data-dependent -- also after bounds/categories are re-declared."""
    base, variants = _neighbours_of_people()
    with pytest.warns(PrivacyLeakWarning):
        ref = suggest_schema(base, max_categories=10).schema
    # kind, bounds and categories are read from the private rows: flagged, field by field
    fields = ref.data_dependent_fields
    # (and whether a column has a missing cell: "missing" is suggested only then, never invented)
    assert fields["age"] == {"kind", "missing", "lower", "upper"}
    assert fields["city"] == {"kind", "missing", "categories"}
    assert fields["member"] == {"kind", "missing"} and "member" in ref.data_dependent   # a CSV reader's dtype is data
    assert {"kind", "lower", "upper"} <= fields["joined"] and fields["income"] == {"kind", "missing", "lower", "upper"}
    public_bounds = {"age": (0, 120), "income": (0.0, 1e6), "joined": ("2000-01-01", "2030-01-01")}

    def redeclared(schema):
        out = schema
        for name, (lo, hi) in public_bounds.items():
            out = out.redeclare(name, lower=lo, upper=hi)
        return out.redeclare("city", categories=["Basel", "Bern", "Chur", "Zug"])

    for key, other in variants.items():
        with pytest.warns(PrivacyLeakWarning):
            sug = suggest_schema(other, max_categories=10).schema
        assert _published_unless_flagged(sug) == _published_unless_flagged(ref), key
        # re-declaring the bounds and categories clears those fields only: kind stays flagged
        a, b = redeclared(ref), redeclared(sug)
        assert _published_unless_flagged(a) == _published_unless_flagged(b), key
        assert a.data_dependent_fields["age"] == {"kind", "missing"}
        assert a.data_dependent_fields["city"] == {"kind", "missing"}
        # replacing a whole column by a copy with new bounds clears only the fields whose values changed
        import dataclasses
        spec = sug["income"]
        c = sug.replace_column(dataclasses.replace(spec, lower=-10.0, upper=1e6))
        assert c.data_dependent_fields["income"] == {"kind", "missing"}
        assert _published_unless_flagged(c)["income"] == _published_unless_flagged(
            ref.replace_column(dataclasses.replace(ref["income"], lower=-10.0, upper=1e6)))["income"], key


def test_data_dependent_fields_round_trip_and_clear_only_what_is_declared():
    schema = _mixed_schema(data_dependent={"height": {"lower", "upper"}, "region": ["categories", "kind"]})
    assert schema.data_dependent == ("height", "region") and schema.data_dependent       # names, as before
    assert schema.data_dependent_fields == {"height": {"lower", "upper"}, "region": {"categories", "kind"}}
    again = TableSchema.from_json(schema.to_json())
    assert again == schema and again.data_dependent_fields == schema.data_dependent_fields
    assert json.loads(schema.to_json())["data_dependent"] == ["height", "region"]
    assert again != _mixed_schema(data_dependent=("height", "region"))          # names alone: every field
    # the old forms still work: a sequence of names flags every field of those columns
    old = _mixed_schema(data_dependent=("grade",))
    assert old.data_dependent_fields["grade"] == {"kind", "categories", "missing", "similarity"}
    d = old.to_dict()
    d.pop("data_dependent_fields", None)
    assert TableSchema.from_dict(d) == old
    assert _mixed_schema().data_dependent == () and "data_dependent_fields" not in _mixed_schema().to_dict()
    # re-declaring clears the named fields only; declared= names fields confirmed with an unchanged value
    s = schema.redeclare("height", lower=90)
    assert s.data_dependent_fields["height"] == {"upper"} and s["height"].lower == 90.0
    s = s.replace_column(s["height"], declared=("upper",))
    assert "height" not in s.data_dependent and s.data_dependent == ("region",)
    assert schema.replace_column(schema["region"], declared="all").data_dependent == ("height",)
    with pytest.raises(ValueError, match=r"unknown field\(s\) \['colour'\]"):
        schema.replace_column(schema["region"], declared=("colour",))
    with pytest.raises(ValueError, match=r"data_dependent of column \"height\" names unknown field\(s\) \['bounds'\]"):
        _mixed_schema(data_dependent={"height": ["bounds"]})
    with pytest.raises(ValueError, match=r"field\(s\) \['categories'\] of column \"height\" that its declaration "
                                         r"does not have"):
        _mixed_schema(data_dependent={"height": ["categories"]})
    import copy
    import pickle
    assert pickle.loads(pickle.dumps(schema)) == schema and copy.deepcopy(schema) == schema
    assert pickle.loads(pickle.dumps(schema)).data_dependent_fields == schema.data_dependent_fields
    with pytest.raises(ValueError, match=r"column \"nope\" is not in the schema"):
        schema.redeclare("nope", lower=0)


def test_suggestion_with_public_rows_takes_kinds_from_the_public_rows():
    """M1: the private column's dtype (integer vs float after one blank cell) must not choose the kind."""
    public = pd.DataFrame({"age": [18, 90], "score": [0.5, 2.0]})
    schemas = []
    for ages in ([30, 41, 52], [30, None, 52]):
        private = pd.DataFrame({"age": pd.to_numeric(pd.Series(ages, dtype=object)),
                                "score": pd.Series(["1.5", "2", "x"][: len(ages)], dtype=object)})
        with warnings.catch_warnings():
            warnings.simplefilter("error", PrivacyLeakWarning)
            s = suggest_schema(private, public=public)
        assert s.data_dependent == ()
        schemas.append(s.schema)
    assert schemas[0] == schemas[1] and schemas[0]["age"].kind == "integer"
    assert schemas[0]["score"].kind == "continuous"


# ---------------------------------------------------------------------- issue 16 walk: findings 8 and 10
def test_the_encode_report_says_that_missing_value_markers_are_read_as_missing():
    """Finding 8: a text cell "n/a" became a missing value silently; the owner's report says so."""
    from dpkme.io import load_table

    rows = "".join(f"{c},{s}\n" for c, s in [("red", 1), ("n/a", 2), ("blue", "NA"), ("red", 4), ("null", 5)])
    df = load_table(("colour,size\n" + rows).encode(), filename="t.csv")
    schema = TableSchema([C("colour", "categorical", categories=["blue", "red"], missing="category"),
                          C("size", "continuous", lower=0, upper=10, missing="category")])
    rep = schema.encode_report(df)
    assert rep.counts["colour"]["missing"] == 2 and rep.counts["size"]["missing"] == 1
    lines = rep.lines()
    assert '"colour": 2 missing (of 5 rows).' in lines                  # the per-column lines are unchanged
    marker = [ln for ln in lines if "'n/a'" in ln]
    assert marker and "read as missing" in marker[0] and "'NA'" in marker[0] and "'null'" in marker[0]
    # nothing missing: no such line
    full = TableSchema([C("colour", "categorical", categories=["blue", "red"])])
    assert not any("'n/a'" in ln for ln in full.encode_report(pd.DataFrame({"colour": ["red", "blue"]})).lines())


def test_a_boolean_column_decodes_to_true_false_and_a_categorical_one_keeps_the_files_labels():
    """Finding 10: "yes"/"no" declared boolean comes back as True/False (the schema does not know the labels; the
    docs say so and say to declare a categorical column to keep them)."""
    df = pd.DataFrame({"smoker": ["yes", "no", "no", "yes"]})
    as_bool = TableSchema([C("smoker", "boolean")])
    out = as_bool.decode(as_bool.encode(df))
    assert out["smoker"].tolist() == [True, False, False, True]
    as_cat = TableSchema([C("smoker", "categorical", categories=["no", "yes"])])
    assert as_cat.decode(as_cat.encode(df))["smoker"].tolist() == ["yes", "no", "no", "yes"]
    doc = " ".join(ColumnSpec.__doc__.replace("``", "").split())
    assert "True/False" in doc and "categorical" in doc and "yes/no" in doc
