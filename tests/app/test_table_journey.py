"""Small but visible defects of the mixed-table journey, found by a browser walk on unseen tables (U1): long
decimals in downloads, suggested bounds rounded too far out, a date-format hint that does not read the offending
cell, and the same data-dependence warning shown several times on the Data page. Small tables built here."""

from __future__ import annotations

import io
import re
import warnings
from types import SimpleNamespace

import numpy as np
import pandas as pd
import pytest

from dpkme.kernels import GaussianKernel
from dpkme.release import Release
from dpkme.release.tabular import TableRelease, _default_decimals
from dpkme.schema import ColumnSpec as C
from dpkme.schema import TableSchema, parse_dates, suggest_schema
from tests.support.app import new_app, ok
from ui import export as E

pytestmark = pytest.mark.filterwarnings("ignore::UserWarning")


# ------------------------------------------------------------------------------------------------ 1. decimals
def _schema() -> TableSchema:
    return TableSchema((C("depth", "continuous", lower=0.0, upper=50.0),                 # range 50: 3 decimals
                        C("income", "continuous", lower=0.0, upper=200000.0),           # range 2e5: integers
                        C("share", "continuous", lower=0.0, upper=1.0, decimals=2),      # declared: 2 decimals
                        C("kids", "integer", lower=0, upper=9),
                        C("tag", "categorical", categories=["a", "b"])))


def _release(schema: TableSchema, m: int = 60, seed: int = 0) -> Release:
    rng = np.random.default_rng(seed)
    Z = schema.domain.sample(m, rng)
    w = rng.dirichlet(np.ones(m))
    return Release(points=Z, weights=w, mechanism="uniform-baseline", epsilon=float("inf"), delta=0.0, sigma=0.0,
                   sensitivity=0.0, neighbouring="replace-one", calibration="none",
                   kernel=GaussianKernel(lengthscale=1.0), seed=3, n_private=100)


def _decimals(cells) -> int:
    """The most decimals a column's cells are written with in a CSV."""
    return max((len(v.split(".")[1]) if "." in v else 0) for v in cells)


def _csv_cells(text: str) -> pd.DataFrame:
    return pd.read_csv(io.StringIO(text), dtype=str, keep_default_na=False)


def test_default_decimals_follow_the_declared_range():
    assert _default_decimals(C("x", "continuous", lower=0.0, upper=50.0)) == 3
    assert _default_decimals(C("x", "continuous", lower=-124.6, upper=-67.0)) == 3
    assert _default_decimals(C("x", "continuous", lower=0.0, upper=1.0)) == 4
    assert _default_decimals(C("x", "continuous", lower=0.0, upper=200000.0)) == 0


def test_table_release_csv_writes_the_range_precision_and_integers_as_integers():
    schema = _schema()
    tr = TableRelease(release=_release(schema), schema=schema)
    cells = _csv_cells(tr.to_csv())
    assert 1 <= _decimals(cells["depth"]) <= 3
    assert _decimals(cells["income"]) == 0 and _decimals(cells["kids"]) == 0
    assert _decimals(cells["share"]) <= 2
    assert not any(re.search(r"\d{6,}", v.split(".")[1]) for v in cells["depth"] if "." in v)


@pytest.mark.parametrize("builder", ["weighted", "synthetic"])
def test_the_apps_table_downloads_never_print_long_decimals(builder):
    schema = _schema()
    rec, ds = SimpleNamespace(release=_release(schema)), SimpleNamespace(schema=schema)
    data = (E.table_release_csv(rec, ds) if builder == "weighted" else
            E.synthetic_csv(E.synthetic_rows(rec, ds, 200, spread=1.0)))
    cells = _csv_cells(data.decode())
    assert 1 <= _decimals(cells["depth"]) <= 3, cells["depth"].head().tolist()
    assert _decimals(cells["income"]) == 0 and _decimals(cells["kids"]) == 0
    assert _decimals(cells["share"]) <= 2
    # the same numbers, parsed: inside the declared bounds
    back = pd.read_csv(io.BytesIO(data))
    assert back["depth"].between(0, 50).all() and back["income"].between(0, 200000).all()


def test_the_release_page_caption_says_how_each_column_is_rounded():
    from ui.table_views import precision_caption

    text = precision_caption(_schema())
    assert "depth: 3 decimals" in text and "1/10,000 of its declared range" in text
    assert "income: whole numbers" in text and "share: 2 decimals (declared)" in text


def test_numeric_release_downloads_print_no_float_artefacts():
    # the weighted points: 15 significant digits (scaling undone), synthetic rows: the public precision
    pts = np.array([[39.8 + 1e-14, 3.0361948271530123], [0.1 + 0.2, 1.0 / 3.0]])
    rec = SimpleNamespace(release=SimpleNamespace(points=pts, weights=np.array([0.5, 0.5]), dim=2))
    frame = E.release_frame(rec, None)
    buf = io.StringIO()
    frame.to_csv(buf, index=False)
    cells = _csv_cells(buf.getvalue())
    assert cells["x1"].tolist() == ["39.8", "0.3"]
    assert all(len(v.replace(".", "").lstrip("0")) <= 15 for v in cells["x2"])


# ------------------------------------------------------------------------------------------------ 2. bounds
def _suggested(values, **kw):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        return suggest_schema(pd.DataFrame({"v": values}), **kw).schema["v"].bounds


def test_suggested_bounds_round_to_the_range_not_the_values():
    rng = np.random.default_rng(1)
    lon = np.r_[-124.6, -67.0, rng.uniform(-124.6, -67.0, 50)]
    assert _suggested(lon) == (-125.0, -65.0)
    hours = np.r_[0, 23, rng.integers(0, 24, 50)].astype(np.int64)
    assert _suggested(hours) == (0, 23)
    # a whole-world longitude stays on the circle, not [-200, 200]
    assert _suggested(np.r_[-179.9, 179.9, rng.uniform(-179, 179, 50)]) == (-180.0, 180.0)
    # from public rows too: the public rows' range, rounded the same way
    private = pd.DataFrame({"v": np.r_[-100.0, -90.0]})
    public = pd.DataFrame({"v": lon})
    assert suggest_schema(private, public=public).schema["v"].bounds == (-125.0, -65.0)


@pytest.mark.parametrize("lo, hi", [(0.5, 49.7), (32.51, 41.99), (1990, 2020), (0.001, 0.0093), (-3.2, 7.9)])
def test_suggested_bounds_hold_the_values_with_little_room(lo, hi):
    a, b = _suggested(np.linspace(lo, hi, 40))
    assert a <= lo and b >= hi
    assert (b - a) <= 1.25 * (hi - lo) + 1e-12


# ------------------------------------------------------------------------------------------------ 3. date format
@pytest.mark.parametrize("cells, fmt", [(["Jan 1 2000", "Feb 3 2001"], "%b %d %Y"),
                                        (["13/04/2020", "14/04/2020"], "%d/%m/%Y"),
                                        (["Q1/2000", "Q2/2000"], None)])
def test_a_wrong_date_format_suggests_one_that_reads_the_cell(cells, fmt):
    schema = TableSchema((C("when", "datetime", lower="1990-01-01", upper="2030-01-01"),))
    with pytest.raises(ValueError) as err:
        schema.encode(pd.DataFrame({"when": cells}))
    msg = str(err.value)
    assert repr(cells[0]) in msg or cells[0] in msg
    if fmt is None:
        assert "date_format=" not in msg and "strftime format that reads 'Q1/2000'" in msg
    else:
        assert f"date_format={fmt!r}" in msg, msg
        assert not parse_dates([cells[0]], date_format=fmt).isna().any()
    if fmt == "%b %d %Y":
        assert "'%d/%m/%Y'" not in msg


def test_parse_dates_raise_suggests_a_format_too():
    with pytest.raises(ValueError, match=re.escape("date_format='%d %b %Y'")):
        parse_dates(["1 Jan 2000"], errors="raise")


# ------------------------------------------------------------------------------------------------ 4. one warning
def _mixed_csv(n: int = 120) -> bytes:
    rng = np.random.default_rng(5)
    rows = ["visit,age,income,region"]
    for _ in range(n):
        d = pd.Timestamp("2021-01-01") + pd.Timedelta(days=int(rng.integers(0, 700)))
        rows.append(f"{d.date()},{int(rng.integers(18, 90))},{rng.normal(40000, 8000):.2f},"
                    f"{['north', 'south'][int(rng.integers(0, 2))]}")
    return ("\n".join(rows) + "\n").encode()


def _private_warnings(at) -> list[str]:
    return [w.value for w in at.warning if re.search(r"read from the private rows", w.value, re.IGNORECASE)]


def test_the_data_page_warns_once_that_the_schema_was_read_from_the_private_rows():
    at = new_app().run()
    at.switch_page("pages/data.py").run()
    at.radio(key="data.source").set_value("upload").run()
    at.file_uploader(key="data.upload").set_value(("visits.csv", _mixed_csv(), "text/csv")).run()
    at.radio(key="data.mode").set_value("schema").run()
    ok(at)
    for step in range(2):                                 # before and after "Use this dataset"
        found = _private_warnings(at)
        assert len(found) == 1, found
        text = found[0]
        # what, why it matters, what to do
        for col in ("visit", "age", "income", "region"):
            assert col in text
        assert "NOT differentially private" in text and "statistics of the private data" in text
        assert "declared" in text and "publishable subset" in text and "privately" in text
        if step == 0:
            at.button(key="data.use").click().run()
            ok(at)


def test_the_per_column_scaling_read_from_the_private_rows_is_warned_once():
    at = new_app().run()
    at.switch_page("pages/data.py").run()
    at.radio(key="data.source").set_value("upload").run()
    rows = "".join(f"{170 + i % 30},{40000 + 900 * (i % 50)}\n" for i in range(80))
    at.file_uploader(key="data.upload").set_value(("people.csv", ("height,income\n" + rows).encode(),
                                                   "text/csv")).run()
    at.checkbox(key="data.colscale_private").check().run()
    ok(at)
    for step in range(2):                                 # before and after "Use this dataset"
        found = [w.value for w in at.warning if "PRIVATE rows" in w.value]
        assert len(found) == 1, found
        assert "NOT differentially private" in found[0] and "publishable subset" in found[0]
        if step == 0:
            at.button(key="data.use").click().run()
            ok(at)
