"""Data page (AppTest): generate, bundled samples, uploads (good and bad), publishable subset, scaling."""

import numpy as np
import pytest

from test_app_shared import errors, metric, new_app, ok, plotly_figures

from pages._shared import state as S

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
    assert metric(at, "Private rows N") == "4,275"      # 5000 - 5 % public - 10 % held out
    assert metric(at, "Publishable rows") == "250"
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


def test_publishable_fraction_changes_the_split(data_page):
    at = data_page
    at.slider(key="data.public_pct").set_value(20.0).run()
    _use(at)
    ds = at.session_state[S.DATASET]
    assert ds.n_public == 1000


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


@pytest.mark.parametrize("name,content,expected", [
    ("empty.csv", b"", "empty"),
    ("one_row.csv", b"a,b\n1,2\n", "row"),
    ("text.csv", b"a,b\nx,y\nz,w\nu,v\n", "no numeric column"),
    ("binary.csv", b"\x89PNG\r\n\x1a\n" + bytes(200), "PNG"),
])
def test_broken_uploads_show_a_clear_error(data_page, name, content, expected):
    at = _upload(data_page, name, content)
    assert not at.exception
    assert expected in errors(at), errors(at)
    assert at.session_state[S.DATASET].source == "generated"   # the current data is untouched


def test_missing_values_are_an_error_unless_rows_are_dropped(data_page):
    rows = b"".join(f"{i},{'' if i % 7 == 3 else i * 2}\n".encode() for i in range(60))
    at = _upload(data_page, "gaps.csv", b"a,b\n" + rows)
    assert "missing" in errors(at)
    at.checkbox(key="data.drop_missing").check().run()
    ok(at)
    assert any("dropped" in w.value for w in at.warning)


def test_a_too_large_upload_is_refused_in_memory(data_page):
    big = b"a,b\n" + b"1.000000,2.000000\n" * 3_000_000   # 54 MB > the 50 MB limit
    at = _upload(data_page, "big.csv", big)
    assert not at.exception
    assert "limit" in errors(at) and "MB" in errors(at)


def test_scaling_from_the_publishable_subset(data_page):
    at = data_page
    at.radio(key="data.scaling").set_value("public").run()
    _use(at)
    ok(at)
    ds = at.session_state[S.DATASET]
    assert ds.scaling is not None
    assert np.allclose(ds.public.mean(axis=0), 0, atol=1e-9)


def test_upload_parquet(data_page):
    import io

    import pandas as pd

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
