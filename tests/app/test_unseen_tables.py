"""Fixes from a newcomer's browser walk of the mixed-table journey on tables the suite had never seen (W1):
a Windows-1252/Latin-1 CSV, dates written with month names, a ~50-category column and columns declared
``missing='category'`` that have no missing cell. Small deterministic tables built here (no files on disk)."""

from __future__ import annotations

import json

import numpy as np
import pandas as pd
import pytest

from dpkme.schema import suggest_schema
from tests.support.app import new_app, ok
from ui import state as S
from ui.views.data_schema_editor import MAX_CATEGORIES_KEY, editor_key, state_key

pytestmark = pytest.mark.filterwarnings("ignore::UserWarning")


def _stocks(n: int = 60) -> pd.DataFrame:
    months = pd.date_range("2000-01-01", periods=n, freq="MS")
    return pd.DataFrame({"symbol": ["MSFT", "IBM", "AAPL"] * (n // 3),
                         "date": [f"{d:%b} {d.day} {d.year}" for d in months],
                         "price": np.linspace(10.0, 90.0, n)})


# ------------------------------------------------------------------------------------------------ library
@pytest.mark.parametrize("fmt", ["%b %d %Y", "%d %b %Y", "%B %d, %Y"])
def test_dates_written_with_month_names_are_suggested_as_dates(fmt):
    df = _stocks()
    df["date"] = [pd.Timestamp(2000, 1, 1 + (i % 28)).strftime(fmt) for i in range(len(df))]
    sug = suggest_schema(df)
    assert "date" not in sug.excluded
    spec = sug.schema["date"]
    assert spec.kind == "datetime" and spec.date_format is not None
    # read back cell by cell with the suggested format: every date is a date, none became missing
    report = sug.schema.encode_report(df)
    assert report.counts["date"]["missing"] == 0


def test_an_unrecognised_date_column_is_excluded_with_a_hint_at_date_format():
    df = pd.DataFrame({"when": [f"Q{1 + i % 4}/{2000 + i}" for i in range(60)], "x": np.arange(60.0)})
    why = suggest_schema(df).excluded["when"]
    assert "date_format" in why and "datetime" in why
    # text without digits (an identifier or free text) gets no such hint
    words = pd.DataFrame({"name": [f"name-{chr(65 + i % 26)}{chr(65 + i // 26)}" for i in range(60)],
                          "x": np.arange(60.0)})
    assert "date_format" not in suggest_schema(words).excluded["name"]


# ------------------------------------------------------------------------------------------------ the app
def _upload(at, name: str, data: bytes, mime: str = "text/csv"):
    at.switch_page("pages/data.py").run()
    at.radio(key="data.source").set_value("upload").run()
    at.file_uploader(key="data.upload").set_value((name, data, mime)).run()
    return at


def test_a_latin1_semicolon_csv_is_read_after_choosing_its_encoding_on_the_page():
    rows = ["city;state;elevation"] + [f"{c};{s};{e}" for c, s, e in
                                       [("Mayagüez", "PR", 12), ("Peñuelas", "PR", 40), ("Río Grande", "PR", 3),
                                        ("Boise", "ID", 824)] * 5]
    data = ("\n".join(rows) + "\n").encode("latin-1")
    at = _upload(new_app().run(), "airports.csv", data)
    err = " | ".join(e.value for e in at.error)
    assert "not UTF-8" in err and "Text encoding of a CSV/TSV file" in err and "encoding=..." not in err
    assert S.UPLOAD not in at.session_state
    at.selectbox(key="data.upload_encoding").set_value("latin-1").run()
    ok(at)
    df = at.session_state[S.UPLOAD]["df"]
    assert df.shape == (20, 3) and df["city"].iloc[0] == "Mayagüez" and df["city"].iloc[2] == "Río Grande"
    # another reading of the same bytes is another table (its schema state is not shared with the UTF-8 one)
    h = at.session_state[S.UPLOAD]["hash"]
    at.selectbox(key="data.upload_encoding").set_value("cp1252").run()
    ok(at)
    assert at.session_state[S.UPLOAD]["hash"] != h and at.session_state[S.UPLOAD]["encoding"] == "cp1252"


def test_a_column_with_57_categories_can_be_suggested_after_raising_the_limit():
    states = [f"S{i:02d}" for i in range(57)]
    df = pd.DataFrame({"state": states * 2, "elevation": np.arange(114.0)})
    data = df.to_csv(index=False).encode()
    at = _upload(new_app().run(), "airports.csv", data)
    at.radio(key="data.mode").set_value("schema").run()
    ok_states = at.session_state[S.UPLOAD]["hash"]
    src = state_key("upload:" + ok_states)
    assert "state" in at.session_state[src]["excluded"]
    assert any("Most categories" in n.label for n in at.number_input)
    at.number_input(key=MAX_CATEGORIES_KEY).set_value(60).run()
    at.button(key="data.schema_reset.upload:" + ok_states).click().run()
    assert not at.exception
    state = at.session_state[src]
    assert "state" not in state["excluded"]
    cats = state["original"]["state"].categories
    assert len(cats) == 57


def test_the_owner_is_told_when_a_column_without_gaps_is_declared_missing_category():
    df = pd.DataFrame({"symbol": ["MSFT", "IBM", "AAPL", None] * 10, "price": np.linspace(1.0, 40.0, 40)})
    at = _upload(new_app().run(), "gaps.csv", df.to_csv(index=False).encode())
    at.radio(key="data.mode").set_value("schema").run()
    assert not at.exception
    # suggestions declare missing = category only where a cell is missing (issue 25: no invented gaps)
    key = "upload:" + at.session_state[S.UPLOAD]["hash"]
    src = state_key(key)
    original = at.session_state[src]["original"]
    assert original["symbol"].missing == "category" and original["price"].missing == "error"
    assert not [m.value for m in at.markdown if "no cell is missing" in m.value]
    # the owner declares 'price' missing = category: the page says no cell is missing there
    state = at.session_state[src]
    base = state["base"]
    row = int(base.index[base["column"] == "price"][0])
    at.session_state[editor_key(key, state["version"])] = {
        "edited_rows": {row: {"missing": "category"}}, "added_rows": [], "deleted_rows": []}
    at.run()
    assert not at.exception
    notes = [m.value for m in at.markdown if "no cell is missing" in m.value]
    assert len(notes) == 1 and "'price'" in notes[0] and "'symbol'" not in notes[0] and "missing = error" in notes[0]


def test_the_owner_is_told_when_times_of_day_are_declared_away():
    hours = pd.date_range("2010-01-01", periods=48, freq="h")
    df = pd.DataFrame({"when": [f"{t:%Y/%m/%d %H:%M:%S}" for t in hours], "temp": np.linspace(40.0, 60.0, 48)})
    at = _upload(new_app().run(), "hourly.csv", df.to_csv(index=False).encode())
    at.radio(key="data.mode").set_value("schema").run()
    assert not at.exception
    notes = [m.value for m in at.markdown if "the cells hold times of day" in m.value]
    assert len(notes) == 1 and "'when'" in notes[0] and "decimals" in notes[0]
    # declared with a precision (fractions of a day), the note goes
    src = "upload:" + at.session_state[S.UPLOAD]["hash"]
    schema = {"format": "dpkme.table_schema", "version": 1, "columns": [
        {"name": "when", "kind": "datetime", "lower": "2010-01-01", "upper": "2010-12-31", "missing": "error",
         "decimals": 3},
        {"name": "temp", "kind": "continuous", "lower": 0.0, "upper": 100.0, "missing": "error"}]}
    at.file_uploader(key=f"data.schema_upload.{src}").set_value(
        ("hourly.schema.json", json.dumps(schema).encode(), "application/json")).run()
    ok(at)
    assert not [m.value for m in at.markdown if "the cells hold times of day" in m.value]
