"""Real-browser test of the adaptive table release (issue 25): the default for a table, live.

On a live server the release runs in a background thread: Release starts it (charged at once), the page shows Stop
above a progress bar, another page opens and works while it runs, and back on the Release page the synthetic rows
are there. Condition-based waits only (a cold XLA compilation on a loaded machine can take a while).
"""

from __future__ import annotations

import re
from pathlib import Path

import pandas as pd
import pytest
from playwright.sync_api import Page, expect

from dpkme.datasets import load_schema
from tests.support.app_tables import in_declared_domain
from tests.support.browser import click_button, main, pick_radio

pytestmark = pytest.mark.browser

#: Upper bound of a wait for the release (a condition ends it as soon as the rows are shown).
RELEASE_WAIT_MS = 300_000


def _penguins_schema(page: Page, nav, expect_rerun) -> None:
    nav(page, "Data")
    pick_radio(page, "Bundled real data", expect_rerun)
    main(page).get_by_test_id("stSelectbox").first.click()
    with expect_rerun(page):
        page.get_by_role("option", name=re.compile("Palmer penguins")).click()
    pick_radio(page, "Mixed table with a declared schema", expect_rerun)
    click_button(page, "Use this dataset", expect_rerun)
    expect(main(page).get_by_text(re.compile(r"In use: Palmer penguins.*declared schema"))).to_be_visible()


@pytest.mark.slow
def test_the_default_table_release_runs_in_the_background_while_another_page_is_open(
        app_page, nav, expect_rerun, assert_no_exception):
    page = app_page
    page.set_viewport_size({"width": 1400, "height": 900})
    _penguins_schema(page, nav, expect_rerun)

    nav(page, "Release")
    expect(main(page).get_by_text("Adaptive KME (tables)").first).to_be_visible()     # the default for a table
    expect(main(page).get_by_text(re.compile(r"synthetic rows from [\d,]+ private rows; [\d,]+ held out"))
           .first).to_be_visible()
    expect(main(page).get_by_text(re.compile(r"Predicted: about"))).not_to_have_count(0)
    click_button(page, "Release", expect_rerun)
    rows_shown = main(page).get_by_text("The released table", exact=False)
    running = main(page).get_by_role("button", name="Stop")
    expect(running.or_(rows_shown).first).to_be_visible()          # running (or, on a fast machine, already done)
    assert_no_exception(page)

    # another page while it runs: it opens and works
    nav(page, "Budget ledger")
    expect(main(page).get_by_role("heading", name=re.compile("Budget ledger"))).to_be_visible()
    # its charge, in the ledger table (a canvas grid whose cells are in the DOM but not "visible")
    expect(main(page).get_by_text(re.compile(r"Adaptive KME table release")).first).to_be_attached()
    assert_no_exception(page)

    # back: the rows are there once the thread is done (the page records the release when it sees it finished)
    nav(page, "Release")
    expect(main(page).get_by_text("The released table", exact=False)).to_be_visible(timeout=RELEASE_WAIT_MS)
    expect(main(page).get_by_role("button", name="Stop")).to_have_count(0)
    assert_no_exception(page)
    with page.expect_download() as dl:
        main(page).get_by_test_id("stDownloadButton").filter(has_text="synthetic rows").get_by_role("button").click()
    rows = pd.read_csv(Path(dl.value.path()))
    schema = load_schema("penguins")
    assert list(rows.columns) == list(schema.names) and len(rows) == 1000
    in_declared_domain(rows, schema)
