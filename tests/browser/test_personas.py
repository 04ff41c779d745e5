"""The three journeys of issue 26, end to end in a real browser at the defaults, as each person walks them.

* **Teacher**: Home → *Set up the lecture* → the Release page in presentation mode on the paper's mixture, the ε
  explorer planning on the public rows (nothing spent) → Release → the ledger shows the one charge → the third
  party's page works on the release.
* **Stakeholder**: Home → *Set up the stakeholder demo* → the Release page on a real mixed table with the adaptive
  table release → Release → synthetic rows in the table's own types, downloadable, the owner's diagnostics hidden.
* **Analyst**: her own mixed table (``sample_data/visits.csv``, with gaps) and its documented schema
  (``sample_data/visits.schema.json``) uploaded on the Data page → Release (the adaptive release, the default for a
  table) → the rows downloaded, every cell in the declared domain, no missing value the schema does not allow.

Condition-based waits only; a cold XLA compilation on a loaded machine can take minutes, so the waits for a release
are long upper bounds that end as soon as the rows are shown.
"""

from __future__ import annotations

import json
import re
from pathlib import Path

import pandas as pd
import pytest
from playwright.sync_api import Page, expect

from dpkme.datasets import load_schema
from dpkme.schema import TableSchema
from tests.support.app_tables import in_declared_domain
from tests.support.browser import click_button, main, pick_radio

pytestmark = [pytest.mark.browser, pytest.mark.slow]

RELEASE_WAIT_MS = 300_000
SAMPLE = Path(__file__).resolve().parents[2] / "sample_data"


def _preset(page: Page, button: str, expect_rerun) -> None:
    page.set_viewport_size({"width": 1400, "height": 900})
    with expect_rerun(page):
        main(page).get_by_role("button", name=button, exact=True).click()
    expect(page.get_by_role("heading", name="Release", exact=True)).to_be_visible()
    assert "/release" in page.url


def _download_rows(page: Page) -> pd.DataFrame:
    with page.expect_download() as dl:
        main(page).get_by_test_id("stDownloadButton").filter(has_text="synthetic rows").get_by_role("button").click()
    return pd.read_csv(Path(dl.value.path()))


def test_teacher_lecture_at_the_defaults(app_page, nav, expect_rerun, assert_no_exception):
    page = app_page
    _preset(page, "Set up the lecture", expect_rerun)
    assert_no_exception(page)
    expect(page.get_by_role("switch", name="Presentation mode")).to_be_checked()
    expect(main(page).get_by_text(re.compile(r"ε explorer \(planning: not a release\)")).first).to_be_visible()
    expect(main(page).get_by_text(re.compile("No release of this dataset yet"))).to_be_visible()
    click_button(page, "Release", expect_rerun)
    expect(main(page).get_by_text("Showing release", exact=True)).to_be_visible()
    assert_no_exception(page)

    nav(page, "Budget ledger")
    expect(main(page).get_by_text(re.compile(r"Algorithm 1")).first).to_be_attached()
    assert_no_exception(page)
    nav(page, "Third-party use")
    assert_no_exception(page)
    expect(main(page).get_by_text(re.compile("release", re.I)).first).to_be_visible()


def test_stakeholder_demo_at_the_defaults(app_page, expect_rerun, assert_no_exception):
    page = app_page
    _preset(page, "Set up the stakeholder demo", expect_rerun)
    assert_no_exception(page)
    expect(main(page).get_by_text("Adaptive KME (tables)").first).to_be_visible()
    click_button(page, "Release", expect_rerun)
    expect(main(page).get_by_text("The released table", exact=False)).to_be_visible(timeout=RELEASE_WAIT_MS)
    assert_no_exception(page)
    rows = _download_rows(page)
    schema = load_schema("seattle_weather")
    assert list(rows.columns) == list(schema.names) and len(rows) > 0
    in_declared_domain(rows, schema)


def test_analyst_with_her_own_mixed_table_and_its_schema(app_page, nav, expect_rerun, assert_no_exception):
    page = app_page
    page.set_viewport_size({"width": 1400, "height": 900})
    nav(page, "Data")
    pick_radio(page, "Upload CSV / Parquet", expect_rerun)
    with expect_rerun(page):
        page.get_by_test_id("stFileUploaderDropzoneInput").first.set_input_files(str(SAMPLE / "visits.csv"))
    pick_radio(page, "Mixed table with a declared schema", expect_rerun)
    schema_box = main(page).get_by_test_id("stFileUploader").filter(has_text="Load a schema (JSON)")
    with expect_rerun(page):
        schema_box.get_by_test_id("stFileUploaderDropzoneInput").set_input_files(str(SAMPLE / "visits.schema.json"))
    assert_no_exception(page)
    click_button(page, "Use this dataset", expect_rerun)
    expect(main(page).get_by_text(re.compile(r"In use: .*visits")).first).to_be_visible()

    nav(page, "Release")
    expect(main(page).get_by_text("Adaptive KME (tables)").first).to_be_visible()
    click_button(page, "Release", expect_rerun)
    expect(main(page).get_by_text("The released table", exact=False)).to_be_visible(timeout=RELEASE_WAIT_MS)
    assert_no_exception(page)
    rows = _download_rows(page)
    schema = TableSchema.from_json((SAMPLE / "visits.schema.json").read_text())
    assert list(rows.columns) == list(schema.names)
    in_declared_domain(rows, schema)
    declared = {c["name"]: c["missing"] for c in json.loads((SAMPLE / "visits.schema.json").read_text())["columns"]}
    invented = [c for c in rows.columns if rows[c].isna().any() and declared[c] != "category"]
    assert not invented, f"missing values the schema does not allow: {invented}"
