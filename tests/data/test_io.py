"""Tests of dpkme.io: .npz files, uploads (every bad-upload case), numeric matrices (samples: data/test_datasets.py)."""

from __future__ import annotations

import builtins
import io
import os
import tempfile
from pathlib import Path

import numpy as np
import pandas as pd
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from dpkme.io import (
    MAX_COLUMNS,
    MAX_ROWS,
    MAX_UPLOAD_BYTES,
    MIN_ROWS,
    load_npz,
    load_table,
    nonprivate_summary,
    numeric_columns,
    numeric_matrix,
)

SHARED_DATA = Path(__file__).resolve().parents[3] / "shared" / "data"


def _parquet_bytes(df: pd.DataFrame) -> bytes:
    buf = io.BytesIO()
    df.to_parquet(buf, index=False)
    return buf.getvalue()


# --------------------------------------------------------------------------- npz
def test_load_npz_from_path_and_bytes(tmp_path):
    X = np.random.default_rng(0).normal(size=(20, 3))
    path = tmp_path / "d.npz"
    np.savez(path, X_private=X, other=np.arange(3))
    np.testing.assert_array_equal(load_npz(path), X)
    np.testing.assert_array_equal(load_npz(str(path)), X)
    np.testing.assert_array_equal(load_npz(path.read_bytes()), X)


def test_load_npz_errors(tmp_path):
    path = tmp_path / "d.npz"
    np.savez(path, X=np.ones((3, 2)), y=np.ones(3))
    with pytest.raises(ValueError, match=r"no array named 'X_private'; available keys: \['X', 'y'\]"):
        load_npz(path)
    with pytest.raises(ValueError, match="must be a 2-D array"):
        load_npz(path, key="y")
    with pytest.raises(ValueError, match="no such file"):
        load_npz(tmp_path / "missing.npz")
    bad = tmp_path / "bad.npz"
    bad.write_bytes(b"definitely not numpy")
    with pytest.raises(ValueError, match=r"not a readable NumPy .npz file"):
        load_npz(bad)
    with pytest.raises(ValueError, match="empty"):
        load_npz(b"")
    single = tmp_path / "one.npy"
    np.save(single, np.ones((2, 2)))
    with pytest.raises(ValueError, match=r"single .npy array"):
        load_npz(single)
    obj = tmp_path / "obj.npz"
    np.savez(obj, X_private=np.array([{"a": 1}], dtype=object))
    with pytest.raises(ValueError, match="without pickle"):
        load_npz(obj)
    with pytest.raises(ValueError, match="path or bytes"):
        load_npz(3.5)


@pytest.mark.parametrize("dim", [2, 5])
def test_load_npz_reference_files(dim):
    path = SHARED_DATA / f"mixture_of_Gaussians_N100000_D{dim}.npz"
    if not path.is_file():
        pytest.skip("reference data not available (only on the development machines)")
    X = load_npz(path)
    assert X.shape == (100_000, dim) and X.dtype == np.float64


# --------------------------------------------------------------------------- good uploads
def test_csv_basic_and_metadata():
    df = load_table(b"x,y,name\n1,2.5,a\n3,4,b\n", filename="data.csv")
    assert list(df.columns) == ["x", "y", "name"] and df.shape == (2, 3)
    assert numeric_columns(df) == ["x", "y"]
    assert df.attrs["dpkme"] == {
        "filename": "data.csv",
        "format": "csv",
        "encoding": "utf-8",
        "delimiter": "comma",
        "decimal": ".",
        "header": True,
        "first_data_line": 2,
    }


@pytest.mark.parametrize(
    "content, filename, delimiter, decimal",
    [
        (b"a;b\n1;2\n3;4\n", "x.csv", "semicolon", "."),
        (b"a;b\n1,5;2\n3,25;4\n", "x.csv", "semicolon", ","),  # European decimal comma
        (b"a\tb\n1\t2\n3\t4\n", "x.tsv", "tab", "."),
        (b"a|b\n1|2\n3|4\n", "x.txt", "pipe", "."),
        (b"a b\n1 2\n3  4\n", "x.dat", "whitespace", "."),
        (b'"a, quoted",b\n1,2\n3,4\n', "x.csv", "comma", "."),
        (b"\xef\xbb\xbfa,b\r\n1,2\r\n3,4\r\n", "x.csv", "comma", "."),  # BOM + CRLF (Excel "CSV UTF-8")
    ],
)
def test_delimiters_and_decimals(content, filename, delimiter, decimal):
    df = load_table(content, filename=filename)
    assert df.shape == (2, 2)
    assert df.attrs["dpkme"]["delimiter"] == delimiter
    assert df.attrs["dpkme"]["decimal"] == decimal
    X = numeric_matrix(df)
    assert X.shape == (2, 2) and np.isfinite(X).all()
    if decimal == ",":
        np.testing.assert_allclose(X[:, 0], [1.5, 3.25])


def test_excel_sep_line_and_trailing_delimiter():
    df = load_table(b"sep=;\na;b\n1,5;2\n3;4\n", filename="x.csv")
    assert df.shape == (2, 2) and df.attrs["dpkme"]["delimiter"] == "semicolon"
    np.testing.assert_allclose(numeric_matrix(df)[:, 0], [1.5, 3.0])
    df = load_table(b"a,b,\n1,2,\n3,4,\n", filename="x.csv")
    assert list(df.columns) == ["a", "b"] and df.attrs["dpkme"]["dropped_empty_columns"] == 1


def test_headerless_numeric_file_keeps_first_row():
    df = load_table(b"1,2\n3,4\n5,6\n", filename="x.csv")
    assert list(df.columns) == ["column_1", "column_2"] and df.shape == (3, 2)
    assert df.attrs["dpkme"]["header"] is False


def test_utf16_and_declared_latin1():
    df = load_table("a\tb\n1\t2\n3\t4\n".encode("utf-16"), filename="export.txt")
    assert df.shape == (2, 2) and df.attrs["dpkme"]["encoding"] == "utf-16"
    raw = "name,x\nJosé,1\nZoë,2\n".encode("latin-1")
    df = load_table(raw, filename="x.csv", encoding="latin-1")
    assert df["name"].tolist() == ["José", "Zoë"]  # no corruption when declared


def test_single_numeric_column_is_a_valid_1d_dataset():
    df = load_table(b"height\n1.5\n1.7\n1.6\n", filename="x.csv")
    assert numeric_matrix(df, ["height"]).shape == (3, 1)


def test_parquet_round_trip_from_bytes():
    src = pd.DataFrame({"x": [1.0, 2.5, -3.0], "k": [1, 2, 3], "s": ["a", "b", "c"]})
    data = _parquet_bytes(src)
    df = load_table(data, filename="t.parquet")
    pd.testing.assert_frame_equal(df[["x", "k"]], src[["x", "k"]])
    assert df["s"].tolist() == ["a", "b", "c"]
    assert df.attrs["dpkme"]["format"] == "parquet"
    # recognised by content even if misnamed
    assert load_table(data, filename="t.csv").attrs["dpkme"]["format"] == "parquet"
    np.testing.assert_array_equal(numeric_matrix(df, ["x", "k"]), src[["x", "k"]].to_numpy(float))


def test_parquet_limits_checked_from_metadata():
    wide = pd.DataFrame(np.zeros((3, 12)), columns=[f"c{i}" for i in range(12)])
    with pytest.raises(ValueError, match="12 columns, more than the limit of 10"):
        load_table(_parquet_bytes(wide), filename="w.parquet", max_cols=10)
    long = pd.DataFrame({"x": np.arange(50.0)})
    with pytest.raises(ValueError, match="50 data rows; the limit is 20"):
        load_table(_parquet_bytes(long), filename="l.parquet", max_rows=20)
    with pytest.raises(ValueError, match="not a readable Parquet file"):
        load_table(_parquet_bytes(long)[:40], filename="l.parquet")
    with pytest.raises(ValueError, match="does not start with the Parquet marker"):
        load_table(b"x,y\n1,2\n3,4\n", filename="l.parquet")


# --------------------------------------------------------------------------- bad uploads
_RNG_BYTES = np.random.default_rng(0).integers(0, 256, 4000, dtype=np.uint8).tobytes()
_HIGH_BYTES = bytes(np.random.default_rng(1).integers(128, 256, 400, dtype=np.uint8))


@pytest.mark.parametrize(
    "content, filename, kwargs, fragments",
    [
        (b"", "a.csv", {}, ["is empty", "header line"]),
        (b"\n\n  \n", "a.csv", {}, ["is empty"]),
        # only a byte-order mark (UTF-8 or UTF-16): empty, not a "delimiter declaration" problem
        (b"\xef\xbb\xbf", "a.csv", {}, ["is empty", "header line"]),
        (b"\xff\xfe\n\x00", "a.csv", {}, ["is empty", "header line"]),
        (b"sep=;\n", "a.csv", {}, ["no lines after the delimiter declaration"]),
        (_RNG_BYTES, "a.csv", {}, ["binary file", "not a CSV"]),
        (b"\x01\x02\x03abc,def\n" * 20, "a.csv", {}, ["control character", "binary"]),
        (_HIGH_BYTES, "a.csv", {}, ["not UTF-8", "encoding"]),
        ("name,x\nJosé,1\nAna,2\n".encode("latin-1"), "a.csv", {}, ["not UTF-8", "line 2", "latin-1", "CSV UTF-8"]),
        (b"PK\x03\x04" + b"\x00" * 60, "book.xlsx", {}, ["Excel workbook", "Save As", "CSV"]),
        (b"\xd0\xcf\x11\xe0\xa1\xb1\x1a\xe1" + b"\x00" * 60, "book.xls", {}, ["Excel .xls", "CSV"]),
        (b"\xd0\xcf\x11\xe0\xa1\xb1\x1a\xe1" + b"\x00" * 60, "renamed.csv", {}, ["Excel", "Save As"]),
        (b"PK\x03\x04" + b"\x00" * 60, "data.zip", {}, ["ZIP", "extract"]),
        (b"\x1f\x8b\x08\x00" + b"\x00" * 60, "data.csv.gz", {}, ["gzip", "CSV"]),
        (b"%PDF-1.7\n" + b"x" * 60, "report.csv", {}, ["PDF"]),
        (b"a:b:c\n1:2:3\n4:5:6\n", "a.csv", {}, ["single text column", "':'", "delimiter", "comma"]),
        (b"a b c\nx y\n1 2 3\n", "a.csv", {}, ["single text column", "delimiter"]),
        ((",".join(f"c{i}" for i in range(10**6)) + "\n1\n").encode(), "a.csv", {}, ["1000000 columns", "200"]),
        (b"a,b,c\n1,2,3\n4,5,6\n", "a.csv", {"max_cols": 2}, ["3 columns", "limit of 2"]),
        (b"a,b\n" + b"1,2\n" * 30, "a.csv", {"max_rows": 10}, ["more than 10 data rows", "subsample"]),
        (b"a,b\n" + b"1,2\n" * 30, "a.csv", {"max_bytes": 50}, ["more than the limit of 50 bytes"]),
        (b"a,b\n1,2\n", "a.csv", {}, ["1 data row(s) below the header", f"at least {MIN_ROWS}"]),
        (b"a,b\n", "a.csv", {}, ["0 data row"]),
        (b"1,2,3\n", "a.csv", {}, ["1 data row", "no header line"]),
        (b'a,b\n1,2\n3,"4\n', "a.csv", {}, ["could not be parsed"]),
        (b"a,b\n1,2\n3,4,5,6\n", "a.csv", {}, ["could not be parsed", "same number of fields"]),
    ],
)
def test_bad_uploads_give_helpful_value_errors(content, filename, kwargs, fragments):
    with pytest.raises(ValueError) as info:
        load_table(content, filename=filename, **kwargs)
    message = str(info.value)
    for fragment in fragments:
        assert fragment in message, (fragment, message)


def test_wide_header_is_refused_before_parsing(monkeypatch):
    """The 10^6-column header is rejected without calling the table parser."""

    def boom(*args, **kwargs):  # pragma: no cover - must not be reached
        raise AssertionError("pandas.read_csv was called")

    monkeypatch.setattr(pd, "read_csv", boom)
    with pytest.raises(ValueError, match="1000000 columns"):
        load_table((";".join("x" * 3 for _ in range(10**6)) + "\n").encode(), filename="w.csv")


def test_argument_type_errors():
    with pytest.raises(ValueError, match="bytes"):
        load_table("a,b\n1,2\n", filename="a.csv")
    with pytest.raises(ValueError, match="filename"):
        load_table(b"a,b\n1,2\n3,4\n", filename=None)
    with pytest.raises(ValueError, match="unknown text encoding"):
        load_table(b"a,b\n1,2\n3,4\n", filename="a.csv", encoding="klingon")


def test_limits_are_documented_constants():
    assert MAX_UPLOAD_BYTES == 50 * 1024 * 1024 and MAX_ROWS == 1_000_000 and MAX_COLUMNS == 200
    import dpkme.io as mod

    src = Path(mod.__file__).read_text()
    for name in ("MAX_UPLOAD_BYTES", "MAX_ROWS", "MAX_COLUMNS"):
        assert "#: " in src.split(f"\n{name} =")[0].rsplit("\n\n", 1)[-1], name


# --------------------------------------------------------------------------- no disk writes
def test_load_table_never_touches_the_file_system(monkeypatch):
    csv_bytes = b"a,b\n1,2\n3,4\n"
    pq_bytes = _parquet_bytes(pd.DataFrame({"a": [1.0, 2.0], "b": [3, 4]}))
    tmp = tempfile.gettempdir()
    before = set(os.listdir(tmp))

    def forbidden(*args, **kwargs):
        raise AssertionError(f"file system access: {args!r}")

    monkeypatch.setattr(builtins, "open", forbidden)
    monkeypatch.setattr(io, "open", forbidden)
    monkeypatch.setattr(os, "open", forbidden)
    try:
        assert load_table(csv_bytes, filename="a.csv").shape == (2, 2)
        assert load_table(pq_bytes, filename="a.parquet").shape == (2, 2)
        with pytest.raises(ValueError):
            load_table(b"PK\x03\x04junk", filename="a.xlsx")
    finally:
        monkeypatch.undo()
    assert set(os.listdir(tmp)) == before


# --------------------------------------------------------------------------- numeric_matrix
def test_numeric_matrix_selects_in_order():
    df = pd.DataFrame({"a": [1, 2, 3], "b": [0.5, 1.5, 2.5], "s": ["x", "y", "z"]})
    X = numeric_matrix(df, ["b", "a"])
    np.testing.assert_array_equal(X, [[0.5, 1], [1.5, 2], [2.5, 3]])
    assert X.dtype == np.float64 and X.flags.c_contiguous
    np.testing.assert_array_equal(numeric_matrix(df), df[["a", "b"]].to_numpy(float))
    assert numeric_matrix(df, "a").shape == (3, 1)


def test_numeric_matrix_text_numbers_are_converted():
    df = pd.DataFrame({"a": [" 1.5", "2e3", "-4"], "b": [1, 2, 3]}, dtype=object)
    np.testing.assert_allclose(numeric_matrix(df, ["a"])[:, 0], [1.5, 2000, -4])


def test_numeric_matrix_bad_value_names_column_value_and_row():
    df = load_table(b"a,b,c\n1,2,x\n3,4,y\n5,oops,z\n", filename="m.csv")
    with pytest.raises(ValueError) as info:
        numeric_matrix(df, ["a", "b"])
    msg = str(info.value)
    assert "column 'b'" in msg and "'oops'" in msg and "data row 3" in msg and "line 4 of the file" in msg
    df = pd.DataFrame({"v": ["1", "2", "1,234"]})
    with pytest.raises(ValueError, match="thousands separator"):
        numeric_matrix(df, ["v"])
    df = pd.DataFrame({"v": ["1", "2,5", "3"]})
    with pytest.raises(ValueError, match="decimal comma"):
        numeric_matrix(df, ["v"])


def test_numeric_matrix_missing_values_reported_not_dropped():
    df = load_table(b"a,b,c\n1,2,3\n,4,5\n6,NA,\n7,8,9\n10,,11\n", filename="m.csv")
    with pytest.raises(ValueError) as info:
        numeric_matrix(df, ["a", "b", "c"])
    msg = str(info.value)
    assert "3 of 5 row(s) have missing values" in msg
    assert "'a': 1" in msg and "'b': 2" in msg and "'c': 1" in msg
    assert "drop_missing=True" in msg
    X, n_dropped = numeric_matrix(df, ["a", "b", "c"], drop_missing=True)
    np.testing.assert_array_equal(X, [[1, 2, 3], [7, 8, 9]])
    assert n_dropped == 3
    X, n_dropped = numeric_matrix(df, ["a"], drop_missing=True)
    assert X.shape == (4, 1) and n_dropped == 1
    text = pd.DataFrame({"t": ["1", "", "nan", None, "4"]}, dtype=object)
    with pytest.raises(ValueError, match="3 of 5 row"):
        numeric_matrix(text, ["t"])
    with pytest.raises(ValueError, match="only 1 complete row"):
        numeric_matrix(pd.DataFrame({"a": [1.0, np.nan, np.nan]}), ["a"], drop_missing=True)


@pytest.mark.parametrize(
    "df, columns, match",
    [
        (pd.DataFrame({"a": [1.0, 2.0]}), ["z"], r"column\(s\) \['z'\] not in the table; available columns: \['a'\]"),
        (pd.DataFrame({"a": [1.0, 2.0]}), [], "no columns selected"),
        (pd.DataFrame({"a": [1.0, 2.0]}), ["a", "a"], "more than once"),
        (pd.DataFrame({"a": [True, False]}), ["a"], "boolean"),
        (pd.DataFrame({"a": pd.to_datetime(["2020-01-01", "2021-01-01"])}), ["a"], "dates"),
        (pd.DataFrame({"a": [1.0, np.inf]}), ["a"], "infinite value"),
        (pd.DataFrame({"a": ["1", "inf"]}), ["a"], "infinite value"),
        # regression (hostile uploads): finite but huge values overflowed the kernel computations later
        (pd.DataFrame({"a": [1.0, 1e200]}), ["a"], r"contains 1e\+200 in data row 2: values beyond ±1e\+100"),
        (pd.DataFrame({"a": ["1", "-3e150"]}), ["a"], "rescale the column"),
        (pd.DataFrame({"s": ["x", "y"]}), None, "no numeric column"),
        (pd.DataFrame({"s": ["x", "y"]}), None, r"column 's' holds 'x'.*stray text.*declared schema"),
        (pd.DataFrame([[1, 2], [3, 4]], columns=["a", "a"]), ["a"], "occurs more than once"),
        (np.ones((3, 2)), ["a"], "expected a pandas DataFrame"),
    ],
)
def test_numeric_matrix_errors(df, columns, match):
    with pytest.raises(ValueError, match=match):
        numeric_matrix(df, columns)


def test_nonprivate_summary():
    df = pd.DataFrame({"a": [1.0, 2.0, np.nan], "b": [4, 5, 6], "s": ["x", "y", "z"]})
    s = nonprivate_summary(df)
    assert list(s.index) == ["a", "b"]
    assert s.loc["a", "missing"] == 1 and s.loc["b", "max"] == 6.0
    assert nonprivate_summary(np.ones((4, 2))).shape == (2, 6)
    assert "NON-PRIVATE" in nonprivate_summary.__doc__


# --------------------------------------------------------------------------- property-based
_FILENAMES = st.sampled_from(["f.csv", "f.tsv", "f.txt", "f.parquet", "f.xlsx", "f", "f.dat"])


def _check_loaded(df: pd.DataFrame) -> None:
    assert isinstance(df, pd.DataFrame)
    assert MIN_ROWS <= df.shape[0] and df.shape[1] <= MAX_COLUMNS
    cols = numeric_columns(df)
    if not cols:             # a table of text (categories) is read; the numeric path refuses it with its message
        with pytest.raises(ValueError, match="has no numeric column"):
            numeric_matrix(df)
        return
    try:
        X = numeric_matrix(df, cols)
    except ValueError:
        return
    assert X.shape == (df.shape[0], len(cols)) and X.dtype == np.float64 and np.isfinite(X).all()


@settings(max_examples=150, deadline=None, derandomize=True, database=None, suppress_health_check=[HealthCheck.too_slow])
@given(data=st.binary(max_size=400), filename=_FILENAMES)
def test_load_table_random_bytes_value_error_or_valid(data, filename):
    try:
        df = load_table(data, filename=filename)
    except ValueError:
        return
    _check_loaded(df)


_CELL = st.one_of(
    st.from_regex(r"-?[0-9]{1,4}(\.[0-9]{1,3})?", fullmatch=True),
    st.sampled_from(["", "NA", "nan", "inf", "x", "1,5", '"', '"a,b"', " ", "1e999", "-", "é", "\t"]),
    st.text(max_size=4),
)


@settings(max_examples=150, deadline=None, derandomize=True, database=None, suppress_health_check=[HealthCheck.too_slow])
@given(
    rows=st.lists(st.lists(_CELL, min_size=1, max_size=4), min_size=0, max_size=6),
    sep=st.sampled_from([",", ";", "\t", "|", " ", ":"]),
    newline=st.sampled_from(["\n", "\r\n"]),
    filename=_FILENAMES,
)
def test_load_table_random_tables_value_error_or_valid(rows, sep, newline, filename):
    text = newline.join(sep.join(r) for r in rows)
    try:
        df = load_table(text.encode("utf-8", errors="surrogatepass"), filename=filename)
    except ValueError:
        return
    _check_loaded(df)


@settings(max_examples=100, deadline=None, derandomize=True, database=None)
@given(
    values=st.lists(
        st.one_of(
            st.none(),
            st.floats(allow_nan=True, allow_infinity=True),
            st.integers(min_value=-(10**30), max_value=10**30),
            st.text(max_size=5),
            st.booleans(),
        ),
        min_size=1,
        max_size=8,
    ),
    drop=st.booleans(),
)
def test_numeric_matrix_random_object_columns(values, drop):
    df = pd.DataFrame({"v": pd.Series(values, dtype=object), "w": np.arange(len(values), dtype=float)})
    try:
        out = numeric_matrix(df, ["v", "w"], drop_missing=drop)
    except ValueError:
        return
    X = out[0] if drop else out
    assert X.dtype == np.float64 and X.shape[1] == 2 and np.isfinite(X).all()
    if drop:
        assert X.shape[0] + out[1] == len(values)


def test_summary_of_huge_values_is_right_and_quiet():
    """Regression (Hypothesis): the summary's std of [0, 1e200] overflowed in pandas (square of 1e200)."""
    import warnings

    from dpkme.io import nonprivate_summary

    df = pd.DataFrame({"a": [0.0, 1e200], "b": [1e308, -1e308], "c": [1.0, np.inf], "d": [2.0, np.nan]})
    with warnings.catch_warnings():
        warnings.simplefilter("error", RuntimeWarning)
        s = nonprivate_summary(df)
    np.testing.assert_allclose(s.loc["a", ["mean", "std"]].to_numpy(float), [5e199, 1e200 / np.sqrt(2)], rtol=1e-14)
    np.testing.assert_allclose(s.loc["b", ["mean", "std"]].to_numpy(float), [0.0, np.sqrt(2) * 1e308], rtol=1e-14)
    assert s.loc["c", "mean"] == np.inf and np.isnan(s.loc["c", "std"])
    assert s.loc["d", "mean"] == 2.0 and np.isnan(s.loc["d", "std"]) and s.loc["d", "missing"] == 1


# ---------------------------------------------------------------------- issue 16 walk, finding 8: text-only tables
def test_a_table_without_numeric_columns_is_read_and_the_numeric_path_refuses_it_with_its_own_message():
    """A table of categories is a legitimate mixed table (declared schema): load_table reads it; the numeric path
    (numeric_matrix) refuses it, naming an example cell and what to check."""
    df = load_table(b"a,b\nx,y\nz,w\nu,v\n", filename="text.csv")
    assert list(df.columns) == ["a", "b"] and df.shape == (3, 2)
    assert df.attrs["dpkme"]["delimiter"] == "comma"
    with pytest.raises(ValueError) as info:
        numeric_matrix(df)
    msg = str(info.value)
    for fragment in ("has no numeric column", "column 'a' holds 'x'", "stray text", "thousands separators",
                     "declared schema"):
        assert fragment in msg, (fragment, msg)


def test_a_single_text_column_is_a_one_column_table_not_a_delimiter_problem():
    """A one-column text CSV was refused with "the delimiter was not recognised" -- not the cause."""
    df = load_table(b"species\nAdelie\nGentoo\nChinstrap penguin\nAdelie\n", filename="one.csv")
    assert list(df.columns) == ["species"] and df.shape == (4, 1)
    with pytest.raises(ValueError, match="has no numeric column"):
        numeric_matrix(df)
    # a header with an unsupported separator, or lines of several words in different numbers: still a delimiter
    # problem, and the message says what was read
    for content in (b"a:b\nx:1\ny:2\n", b"a b c\nx y\nz w v\n"):
        with pytest.raises(ValueError) as info:
            load_table(content, filename="odd.csv")
        msg = str(info.value)
        assert "single text column" in msg and "delimiter" in msg and "comma, semicolon, tab" in msg, msg
