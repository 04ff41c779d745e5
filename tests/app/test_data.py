"""Data page (AppTest): generate, bundled samples, uploads (good and bad), publishable subset, scaling."""

import io
import random
import zipfile
from pathlib import Path

import numpy as np
import pandas as pd
import pytest

from tests.support.app import errors, metric, new_app, ok, plotly_figures
from ui import state as S

GOOD_CSV = b"height,weight,group\n" + b"".join(
    f"{150 + (i * 7) % 40},{50 + (i * 13) % 30},{'ab'[i % 2]}\n".encode() for i in range(200))


@pytest.fixture
def data_page():
    at = new_app().run()
    at.switch_page("pages/data.py").run()
    ok(at)
    return at


def _use(at):
    at.button(key="data.use").click().run()
    return at


def test_default_shows_the_current_dataset_with_preview(data_page):
    at = data_page
    assert at.title[0].value == "Data"
    assert metric(at, "Private rows N") == "4,500"      # 5000 - 10 % held out; no rows published by default
    assert metric(at, "Published in the clear") == "0"
    assert plotly_figures(at), "no preview plot"
    assert at.button(key="data.use").disabled            # the settings are those in use


def test_generate_two_moons_and_use_it(data_page):
    at = data_page
    at.selectbox(key="data.generator").set_value("two_moons").run()
    at.number_input(key="data.gen.two_moons.n").set_value(1000).run()
    ok(at)
    assert any("not in use yet" in i.value for i in at.info)
    _use(at)
    ok(at)
    ds = at.session_state[S.DATASET]
    assert ds.name.startswith("Two moons") and ds.n + ds.n_public + ds.n_heldout == 1000
    assert ds.suggested_lengthscale == pytest.approx(0.25)   # from the generator's scale, not the data
    assert at.session_state[S.LENGTHSCALE] == pytest.approx(0.25)


def _publish(at, pct: float):
    """Choose a publishable fraction and state that those rows are public."""
    at.slider(key="data.public_pct").set_value(pct).run()
    at.checkbox(key="data.public_declared").check().run()
    return at


def test_publishable_fraction_changes_the_split(data_page):
    at = _publish(data_page, 20.0)
    _use(at)
    ds = at.session_state[S.DATASET]
    assert ds.n_public == 1000
    assert any("1,000 rows published in the clear" in i.value for i in at.info)


def test_publishable_rows_need_an_explicit_statement(data_page):
    """Red team (issue 13): rows are published raw only after the user states they are public."""
    at = data_page
    at.slider(key="data.public_pct").set_value(5.0).run()
    assert not at.exception
    assert "state that those rows are public" in errors(at)
    assert at.session_state[S.DATASET].n_public == 0          # nothing published without the statement
    at.checkbox(key="data.public_declared").check().run()
    _use(at)
    ok(at)
    assert at.session_state[S.DATASET].n_public == 250


def test_publishable_subset_is_locked_once_budget_was_spent(data_page):
    """Red team (issue 13): after a release, changing the publishable subset would publish rows that the
    release protected — refused; the held-out fraction may change but the ledger then composes sequentially."""
    at = _publish(data_page, 5.0)
    _use(at)
    public_before = at.session_state[S.DATASET].public.copy()
    at.switch_page("pages/release.py").run()
    at.button(key="rel.go").click().run()
    ok(at)
    at.switch_page("pages/data.py").run()
    at.number_input(key="data.split_seed").set_value(7).run()
    assert "cannot be used" in errors(at) and "earlier releases protected" in errors(at)
    assert at.button(key="data.use").disabled
    assert np.array_equal(at.session_state[S.DATASET].public, public_before)
    at.number_input(key="data.split_seed").set_value(0).run()
    at.slider(key="data.public_pct").set_value(10.0).run()
    assert "cannot be used" in errors(at)
    at.slider(key="data.public_pct").set_value(5.0).run()
    at.slider(key="data.heldout_pct").set_value(20.0).run()
    ok(at)
    assert any("sequential composition" in w.value for w in at.warning)
    _use(at)
    ok(at)
    assert at.session_state[S.DATASET].n_heldout == 950


def test_bundled_sample_iris(data_page):
    at = data_page
    at.radio(key="data.source").set_value("sample").run()
    at.selectbox(key="data.sample").set_value("iris").run()
    ok(at)
    _use(at)
    ok(at)
    ds = at.session_state[S.DATASET]
    assert ds.dim == 4 and ds.n + ds.n_public + ds.n_heldout == 150
    assert ds.data_key == "sample:iris"
    # D > 2: a PCA projection fitted on the publishable subset
    assert "PCA" in plotly_figures(at)[0]["layout"]["title"]["text"]


def test_choosing_a_text_column_shows_an_error(data_page):
    at = data_page
    at.radio(key="data.source").set_value("sample").run()
    at.selectbox(key="data.sample").set_value("iris").run()
    at.multiselect(key="data.cols.iris").set_value(["sepal_length", "species"]).run()
    assert not at.exception
    assert "species" in errors(at) and "not a number" in errors(at)


def _upload(at, name, content):
    at.radio(key="data.source").set_value("upload").run()
    at.file_uploader(key="data.upload").set_value((name, content, "text/csv")).run()
    return at


def test_upload_a_good_csv_and_use_it(data_page):
    at = _upload(data_page, "people.csv", GOOD_CSV)
    ok(at)
    assert any("200 rows" in s.value for s in at.success)
    cols = next(m for m in at.multiselect if m.label == "Columns to release")
    assert cols.value == ["height", "weight"]      # numeric columns preselected, the text column not
    _use(at)
    ok(at)
    ds = at.session_state[S.DATASET]
    assert ds.source == "upload" and ds.columns == ["height", "weight"]
    assert ds.data_key.startswith("upload:")
    assert "bytes" not in str(at.session_state[S.UPLOAD].keys())   # only the parsed table is kept


def _xlsx_bytes() -> bytes:
    """A minimal Office Open XML workbook: a ZIP archive with xl/ parts, as Excel writes it."""
    buf = io.BytesIO()
    with zipfile.ZipFile(buf, "w", zipfile.ZIP_DEFLATED) as z:
        z.writestr("[Content_Types].xml", '<?xml version="1.0"?><Types/>')
        z.writestr("xl/workbook.xml", '<?xml version="1.0"?><workbook/>')
        z.writestr("xl/worksheets/sheet1.xml", '<?xml version="1.0"?><worksheet/>')
    return buf.getvalue()


def _parquet_bytes(frame) -> bytes:
    buf = io.BytesIO()
    frame.to_parquet(buf)
    return buf.getvalue()


_RNG = random.Random(0)
_RANDOM = bytes(_RNG.randrange(256) for _ in range(20_000))          # NUL bytes included
_HIGH = bytes(_RNG.randrange(128, 256) for _ in range(2_000))        # no NUL, never valid UTF-8
_WIDE = b",".join(b"c%d" % i for i in range(10**6)) + b"\n" + b"1,2\n" * 3        # a header of 10^6 columns

# Hostile uploads: (file name, content, fragments of the error: what is wrong *and what to do*).
HOSTILE = [
    ("empty.csv", b"", ["empty", "upload a table with a header line"]),
    ("blank.csv", b"\n \n\n", ["empty"]),
    ("bom_only.csv", b"\xef\xbb\xbf", ["empty", "header line"]),
    ("header_only.csv", b"a,b\n", ["0 data row", "at least 2", "Upload the whole table"]),
    ("one_row.csv", b"a,b\n1,2\n", ["1 data row", "at least 2", "Upload the whole table"]),
    ("binary.csv", b"\x89PNG\r\n\x1a\n" + bytes(200), ["PNG image", "upload the table as CSV"]),
    ("random.csv", _RANDOM, ["binary file", "save it as CSV UTF-8"]),
    ("high_bytes.csv", _HIGH, ["not UTF-8", "CSV UTF-8"]),
    ("wide.csv", _WIDE, ["1000000 columns", "limit of 200", "keep only the columns"]),
    ("latin1.csv", "name,x\nJosé,1\nRené,2\nAna,3\n".encode("latin-1"),
     ["not UTF-8", "line 2", "Re-save the file as 'CSV UTF-8'"]),
    ("book.xlsx", _xlsx_bytes(), ["Excel workbook", "Save As", "CSV UTF-8"]),
    ("book.csv", _xlsx_bytes(), ["Excel workbook", "Save As", "CSV UTF-8"]),      # renamed workbook
    ("old.xls", b"\xd0\xcf\x11\xe0\xa1\xb1\x1a\xe1" + bytes(500), ["Excel .xls", "Save As", "CSV UTF-8"]),
    ("colons.csv", b"a:b\n1:2\n3:4\n5:6\n", ["single text column", "':'", "delimiter", "comma"]),
    ("ragged.csv", b"a,b\n1,2\n3,4,5,6\n7,8\n", ["could not be parsed", "same number of fields"]),
    ("fake.parquet", b"a,b\n1,2\n3,4\n", ["Parquet marker"]),
]


@pytest.mark.parametrize("name,content,fragments", HOSTILE, ids=[h[0] for h in HOSTILE])
def test_hostile_uploads_show_a_clear_error_and_the_page_stays_usable(data_page, name, content, fragments):
    at = data_page
    before = at.session_state[S.DATASET].key
    _upload(at, name, content)
    assert not at.exception, [e.value for e in at.exception]
    message = errors(at)
    assert f"Could not read {name!r}" in message, message
    for fragment in fragments:
        assert fragment in message, (fragment, message)
    assert S.UPLOAD not in at.session_state                   # nothing half-read is kept
    assert at.session_state[S.DATASET].key == before         # the current data is untouched
    # and said so, without its preview, notes or guarantee under the error (issue 16 walk, finding 8)
    assert any("data in use is unchanged" in i.value and "N = 4,500" in i.value for i in at.info)
    assert not any(i.value.startswith("Guarantee:") for i in at.info)
    # still usable: a good file is read at once
    at.file_uploader(key="data.upload").set_value(("people.csv", GOOD_CSV, "text/csv")).run()
    ok(at)
    assert any("200 rows" in s.value for s in at.success)


# Other delimiters, decimal commas and encodings are read correctly (never silently mangled).
_VALUES = [[1.5 * i, -0.25 * i] for i in range(40)]


def _table(sep: str, decimal: str = ".", newline: str = "\n") -> str:
    lines = [f"a{sep}b"] + [sep.join(f"{v:g}".replace(".", decimal) for v in row) for row in _VALUES]
    return newline.join(lines) + newline


READ_RIGHT = [
    ("semicolon_decimal_comma.csv", _table(";", decimal=",").encode()),
    ("tab_named.csv", _table("\t").encode()),
    ("pipe.csv", _table("|").encode()),
    ("utf16.csv", _table(",").encode("utf-16")),
    ("bom_crlf.csv", b"\xef\xbb\xbf" + _table(",", newline="\r\n").encode()),
]


@pytest.mark.parametrize("name,content", READ_RIGHT, ids=[r[0] for r in READ_RIGHT])
def test_other_delimiters_and_encodings_are_read_correctly(data_page, name, content):
    at = _upload(data_page, name, content)
    ok(at)
    df = at.session_state[S.UPLOAD]["df"]
    assert list(df.columns) == ["a", "b"]
    assert df.to_numpy(dtype=float).tolist() == _VALUES
    assert next(m for m in at.multiselect if m.label == "Columns to release").value == ["a", "b"]


def test_nan_inf_and_text_in_numeric_columns_are_errors_naming_the_cell(data_page):
    rows = b"".join(f"{i + 0.5},{i * 2},{i % 5}\n".encode() for i in range(40))
    content = b"a,b,c\n" + rows + b"40.5,inf,x\n41.5,nan,3\n"
    at = _upload(data_page, "dirty.csv", content)
    assert not at.exception
    cols = next(m for m in at.multiselect if m.label == "Columns to release")
    assert cols.value == ["a", "b"]                            # c (with a text cell) is not preselected
    assert "'b'" in errors(at) and "infinite" in errors(at) and "replace it by a finite number" in errors(at)
    cols.set_value(["a", "c"]).run()
    assert not at.exception
    assert "'c'" in errors(at) and "'x'" in errors(at) and "Fix or remove these cells" in errors(at)
    cols.set_value(["a"]).run()
    ok(at)
    _use(at)
    ok(at)
    assert at.session_state[S.DATASET].columns == ["a"]


def test_row_identifiers_are_not_preselected_and_say_why(data_page):
    """Issue 25: an integer row-name column was pre-selected as data in the numeric mode."""
    rng = np.random.default_rng(0)
    frame = pd.DataFrame({"Unnamed: 0": np.arange(60), "n": np.arange(1, 61)[rng.permutation(60)],
                          "u": rng.normal(size=60), "v": rng.integers(0, 9, 60)})
    at = _upload(data_page, "with_ids.parquet", _parquet_bytes(frame))
    ok(at)
    cols = next(m for m in at.multiselect if m.label == "Columns to release")
    assert cols.value == ["u", "v"]
    note = " ".join(c.value for c in at.caption if "Not pre-selected" in c.value)
    assert "Unnamed: 0" in note and "**n**" in note and "running number" in note


def test_parquet_with_a_string_column(data_page):
    frame = pd.DataFrame({"u": np.linspace(0, 1, 60), "city": ["Oslo", "Rome", "Lima"] * 20})
    at = _upload(data_page, "mixed.parquet", _parquet_bytes(frame))
    ok(at)
    cols = next(m for m in at.multiselect if m.label == "Columns to release")
    assert cols.value == ["u"]
    cols.set_value(["u", "city"]).run()
    assert not at.exception
    assert "'city'" in errors(at) and "not a number" in errors(at)
    cols.set_value(["u"]).run()
    _use(at)
    ok(at)
    assert at.session_state[S.DATASET].columns == ["u"]


def test_mostly_identical_rows_are_a_dataset_with_a_note(data_page):
    """Regression (fuzzing): a publishable subset whose median pairwise distance is 0 (e.g. 0/1 columns) made
    the dataset impossible to prepare ('declare a length scale', which the Data page cannot do)."""
    content = b"flag,count\n" + b"".join(b"1,3\n" if i % 10 == 0 else b"0,0\n" for i in range(200))
    at = _upload(data_page, "flags.csv", content)
    _publish(at, 10.0)
    ok(at)
    assert any("median pairwise distance is 0" in w.value and "Kernel & privacy" in w.value for w in at.warning)
    _use(at)
    ok(at)
    # the placeholder in declared units: an upload is scaled per column (here from the publishable subset) by default
    assert at.session_state[S.DATASET].suggested_lengthscale == pytest.approx(0.5 * np.sqrt(2))


def test_upload_limits_are_configured_and_explained(data_page):
    import tomllib

    from dpkme.io import MAX_COLUMNS, MAX_ROWS, MAX_UPLOAD_BYTES, MIN_ROWS

    config = tomllib.loads((Path(__file__).resolve().parents[2] / ".streamlit" / "config.toml").read_text())
    assert config["server"]["maxUploadSize"] * 2**20 == MAX_UPLOAD_BYTES       # Streamlit refuses larger files
    at = data_page
    at.radio(key="data.source").set_value("upload").run()
    text = " ".join(c.value for c in at.caption) + " " + " ".join(m.value for m in at.markdown)
    for fragment in (f"{MAX_UPLOAD_BYTES // 2**20} MB", f"{MAX_ROWS:,} rows", f"{MAX_COLUMNS} columns",
                     f"{MIN_ROWS} data rows", "never stored", "random subsample", "CSV UTF-8"):
        assert fragment in text, fragment


def test_missing_values_are_an_error_unless_rows_are_dropped(data_page):
    rows = b"".join(f"{i},{'' if i % 7 == 3 else i * 2}\n".encode() for i in range(60))
    at = _upload(data_page, "gaps.csv", b"a,b\n" + rows)
    assert "missing" in errors(at)
    # worded for the app (issue 16 walk, finding 9): the option on the page, not a Python keyword
    assert "drop_missing" not in errors(at) and "Drop rows with missing values" in errors(at)
    at.checkbox(key="data.drop_missing").check().run()
    ok(at)
    assert any("dropped" in w.value for w in at.warning)


def test_a_too_large_upload_is_refused_in_memory(data_page):
    big = b"a,b\n" + b"1.000000,2.000000\n" * 3_000_000   # 54 MB > the 50 MB limit
    at = _upload(data_page, "big.csv", big)
    assert not at.exception
    assert "limit" in errors(at) and "MB" in errors(at)


def test_scaling_from_the_publishable_subset(data_page):
    at = _publish(data_page, 5.0)
    at.radio(key="data.scaling").set_value("public").run()
    _use(at)
    ok(at)
    ds = at.session_state[S.DATASET]
    assert ds.scaling is not None
    assert np.allclose(ds.public.mean(axis=0), 0, atol=1e-9)


def test_upload_parquet(data_page):
    buf = io.BytesIO()
    pd.DataFrame({"u": np.linspace(0, 1, 120), "v": np.sin(np.arange(120.0))}).to_parquet(buf)
    at = _upload(data_page, "table.parquet", buf.getvalue())
    ok(at)
    _use(at)
    ds = at.session_state[S.DATASET]
    assert ds.columns == ["u", "v"] and ds.n + ds.n_public + ds.n_heldout == 120


def test_a_box_with_lower_above_upper_is_an_error(data_page):
    at = data_page
    at.radio(key="data.scaling").set_value("box").run()
    assert not at.exception
    import hashlib

    editor_key = "data.box." + hashlib.sha1(b"x1|x2").hexdigest()[:10]     # the declared-box table of x1, x2
    df = at.session_state[editor_key].copy()
    df.loc[0, "lower"], df.loc[0, "upper"] = 5.0, 1.0
    at.session_state[editor_key] = df
    at.run()
    assert not at.exception
    assert "lower < upper" in errors(at)


def test_an_upload_and_its_choices_survive_leaving_the_data_page(data_page):
    """Issue 16, finding 2: leaving the Data page lost the uploaded table, its column choice and options."""
    rows = b"".join(f"{i},{'' if i % 7 == 3 else i * 2},{i % 5}\n".encode() for i in range(60))
    at = _upload(data_page, "gaps.csv", b"a,b,c\n" + rows)
    cols = next(m for m in at.multiselect if m.label == "Columns to release")
    cols.set_value(["a", "b"]).run()
    at.checkbox(key="data.drop_missing").check().run()
    _use(at)
    ok(at)
    in_use = at.session_state[S.DATASET].key
    at.switch_page("pages/kernel.py").run()
    ok(at)
    at.switch_page("pages/data.py").run()
    ok(at)
    assert any("gaps.csv" in s.value for s in at.success), [s.value for s in at.success]
    cols = next(m for m in at.multiselect if m.label == "Columns to release")
    assert cols.value == ["a", "b"]
    assert at.checkbox(key="data.drop_missing").value is True
    assert at.session_state[S.DATASET].key == in_use
    assert any("In use" in s.value for s in at.success)          # the page shows the same data as in use
    # forgetting the file is explicit
    at.button(key="data.upload_forget").click().run()
    ok(at)
    assert S.UPLOAD not in at.session_state


def test_forgetting_an_upload_does_not_read_it_again_from_the_widget(data_page):
    at = _upload(data_page, "people.csv", GOOD_CSV)
    at.button(key="data.upload_forget").click().run()
    ok(at)
    assert S.UPLOAD not in at.session_state


def test_a_failing_choice_shows_its_error_without_stale_notes_of_the_data_in_use(data_page):
    """Issue 16, finding 2: notes about the split in use stayed next to the error of new settings."""
    at = data_page
    at.slider(key="data.public_pct").set_value(1.0).run()
    at.checkbox(key="data.public_declared").check().run()
    _use(at)
    ok(at)
    assert at.session_state[S.DATASET].n_public > 0
    notes_in_use = list(at.session_state[S.DATASET].notes)
    rows = b"".join(f"{i},{'' if i % 7 == 3 else i * 2}\n".encode() for i in range(60))
    at = _upload(at, "gaps.csv", b"a,b\n" + rows)
    assert "missing" in errors(at)
    shown = [w.value for w in at.warning]
    assert not any(n in shown for n in notes_in_use)
    assert any("unchanged" in i.value for i in at.info)


# ---------------------------------------------------------------------- issue 16 walk: findings 8, 9 and 11
TEXT_TABLES = [     # 40 rows: enough for the default held-out split
    ("text.csv", b"a,b\n" + b"x,y\nz,w\nu,v\nz,y\n" * 10, "column 'a' holds 'x'"),
    ("names.parquet", _parquet_bytes(pd.DataFrame({"name": ["a", "b", "c", "b"] * 10})), "column 'name' holds 'a'"),
    ("species.csv", b"species\n" + b"Adelie\nGentoo\nAdelie\nChinstrap\n" * 10, "column 'species' holds 'Adelie'"),
]


@pytest.mark.parametrize("name,content,example", TEXT_TABLES, ids=[t[0] for t in TEXT_TABLES])
def test_a_text_only_table_is_refused_by_the_numeric_mode_and_read_as_a_mixed_table(data_page, name, content,
                                                                                   example):
    """Finding 8: a table of categories was refused at upload ("has no numeric column", or for one column "the
    delimiter was not recognised"), although a mixed table with only categorical columns is legitimate."""
    at = _upload(data_page, name, content)
    assert not at.exception
    assert any(f"Read {name!r}" in s.value for s in at.success)
    message = errors(at)
    for fragment in ("has no numeric column", example, "check for stray text", "Mixed table with a declared schema"):
        assert fragment in message, (fragment, message)
    assert "delimiter" not in message
    # nothing of the data in use below the error: no guarantee, no preview
    assert not any(i.value.startswith("Guarantee:") for i in at.info)
    assert any("unchanged" in i.value for i in at.info)
    at.radio(key="data.mode").set_value("schema").run()
    assert not at.exception
    cand = at.session_state["data._candidate"]
    assert cand is not None and cand.is_table
    assert {c.kind for c in cand.schema.columns} == {"categorical"}


def _with_notes(at):
    """The data in use has a note (rows with missing cells dropped), which must not follow a failed upload."""
    rows = b"".join(f"{i},{'' if i % 7 == 3 else i * 2}\n".encode() for i in range(60))
    at = _upload(at, "gaps.csv", b"a,b\n" + rows)
    at.checkbox(key="data.drop_missing").check().run()
    _use(at)
    ok(at)
    notes = list(at.session_state[S.DATASET].notes)
    assert any("dropped" in n for n in notes) and any(w.value in notes for w in at.warning)
    return at, notes


def test_a_failed_upload_in_mixed_mode_shows_nothing_of_the_data_in_use(data_page):
    """Finding 8: after a failed upload in mixed mode the page below showed the previous table's notes and
    guarantee (only the numeric path stopped)."""
    at, notes = _with_notes(data_page)
    at.radio(key="data.mode").set_value("schema").run()
    at.file_uploader(key="data.upload").set_value(("binary.csv", b"\x89PNG\r\n\x1a\n" + bytes(200),
                                                   "text/csv")).run()
    assert not at.exception
    assert "Could not read 'binary.csv'" in errors(at)
    assert not any(n in [w.value for w in at.warning] for n in notes)
    assert not any(i.value.startswith("Guarantee:") for i in at.info)
    assert any("unchanged" in i.value for i in at.info)


def test_a_failed_bundled_table_shows_nothing_of_the_data_in_use(data_page):
    """The numeric mode of a bundled table with missing cells stops the page below its error as well."""
    at, notes = _with_notes(data_page)
    at.radio(key="data.source").set_value("sample").run()
    at.selectbox(key="data.sample").set_value("penguins").run()
    assert not at.exception and "missing values" in errors(at)
    assert not any(n in [w.value for w in at.warning] for n in notes)
    assert not any(i.value.startswith("Guarantee:") for i in at.info)


def test_bundled_penguins_in_numeric_mode_offer_to_drop_incomplete_rows(data_page):
    """Finding 9: the bundled penguins (two rows without measurements) showed "Fill them in or remove those rows
    before uploading… (drop_missing=True)": bundled data is not uploaded, and there was no drop option."""
    at = data_page
    at.radio(key="data.source").set_value("sample").run()
    at.selectbox(key="data.sample").set_value("penguins").run()
    assert not at.exception
    message = errors(at)
    assert "2 of 344 row(s) have missing values" in message
    assert "drop_missing" not in message and "uploading" not in message
    assert "Drop rows with missing values" in message and "mixed table" in message
    at.checkbox(key="data.drop_missing.penguins").check().run()
    ok(at)
    assert any("2 row(s) with missing values were dropped" in w.value and "N now depends" in w.value
               for w in at.warning)
    _use(at)
    ok(at)
    ds = at.session_state[S.DATASET]
    assert ds.n + ds.n_public + ds.n_heldout == 342 and ds.data_key == "sample:penguins"
    assert ds.labels is not None and len(ds.labels) == ds.n          # the species labels follow the kept rows
    help_text = at.checkbox(key="data.drop_missing.penguins").help
    assert "depend" in help_text


def test_the_numeric_mode_is_called_numeric_columns_only(data_page):
    """Finding 11: the label "Numeric columns (as before)" referred to an older version of the app."""
    at = data_page
    at.radio(key="data.source").set_value("sample").run()
    assert at.radio(key="data.mode").options == ["Numeric columns only", "Mixed table with a declared schema"]
