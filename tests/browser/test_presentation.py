"""Presentation mode in a real browser (issue 16): turn it on, walk the stepper Data → Privacy → Release → Use.

With the default dataset: the sidebar toggle enlarges the type (the CSS that ``app.py`` injects), the four pages show
the step indicator, the owner-only views and formulas are replaced by a note, the *Next* buttons switch pages
(``st.switch_page``) and the session's data and release survive every step; *Back* returns with them too.
"""

from __future__ import annotations

import re

import pytest
from playwright.sync_api import Page, expect

from tests.support.browser import WIDTH, main

pytestmark = pytest.mark.browser

HIDDEN = "hidden in presentation mode"
FONT_SIZE = "e => parseFloat(getComputedStyle(e).fontSize)"


def step(page: Page, name: str, expect_rerun) -> None:
    """Click the stepper's button ``name`` (e.g. "Next: Privacy") and wait until the switched-to page has run."""
    with expect_rerun(page):
        main(page).get_by_role("button", name=name).click()


def sidebar_data(page: Page) -> str:
    """The sidebar's line describing the current data (its name, N and D)."""
    return page.get_by_test_id("stSidebar").get_by_text(re.compile(r" — N = [\d,]+ private rows")).inner_text()


@pytest.mark.slow
def test_presentation_mode_walks_the_stepper_from_data_to_use_keeping_the_data(
        app_page, nav, expect_rerun, assert_no_exception):
    page = app_page
    page.set_viewport_size({"width": WIDTH, "height": 900})
    paragraph = main(page).locator('[data-testid="stMarkdownContainer"] p').first
    before = paragraph.evaluate(FONT_SIZE)
    data_line = sidebar_data(page)

    # --- the sidebar toggle: larger type at once, and ?present=1 in the address (bookmarkable)
    with expect_rerun(page):
        page.get_by_test_id("stSidebar").get_by_text("Presentation mode", exact=True).click()
    expect(page.locator('style[data-present="on"]')).to_have_count(1)
    page.wait_for_function(f"() => parseFloat(getComputedStyle(document.querySelector("
                           f"'[data-testid=\"stMain\"] [data-testid=\"stMarkdownContainer\"] p')).fontSize) > "
                           f"{1.2 * before}")
    assert "present=1" in page.url

    # --- 1. Data: the indicator, no preview of the private rows
    nav(page, "Data")
    expect(main(page).get_by_text("Step 1 of 4")).to_be_visible()
    expect(main(page).get_by_text("Preview (for the data owner")).to_have_count(0)
    expect(main(page).get_by_text(re.compile(HIDDEN)).first).to_be_visible()
    expect(main(page).get_by_role("button", name="Back")).to_be_disabled()
    assert_no_exception(page)

    # --- 2. Privacy (the Kernel & privacy page): ε and δ are chosen here; the formulas are hidden
    step(page, "Next: Privacy", expect_rerun)
    page.wait_for_url(re.compile(r"/kernel\?present=1(&sid=[\w-]+)?$"))                  # still bookmarkable
    expect(main(page).get_by_role("heading", name="Kernel & privacy")).to_be_visible()
    expect(main(page).get_by_text("Step 2 of 4")).to_be_visible()
    expect(main(page).get_by_text("The formulas of the sensitivity and the noise scale", exact=False)).to_be_visible()
    expect(main(page).get_by_test_id("stLatex")).to_have_count(0)
    assert_no_exception(page)

    # --- 3. Release: a real release (budget checked and charged as always); no owner's distances
    step(page, "Next: Release", expect_rerun)
    page.wait_for_url(re.compile(r"/release"))
    expect(main(page).get_by_text("Step 3 of 4")).to_be_visible()
    with expect_rerun(page):
        main(page).get_by_role("button", name="Release", exact=True).click()
    expect(main(page).get_by_test_id("stMetric").filter(has_text="ε spent")).to_be_visible()
    expect(main(page).get_by_test_id("stMetric").filter(has_text="RKHS distance of this release")).to_have_count(0)
    expect(page.get_by_test_id("stSidebar").get_by_text(re.compile(r"ε = [\d.]+ of 5 spent"))).to_be_visible()
    assert_no_exception(page)

    # --- 4. Use: the release of the same data, estimates without the private truth
    step(page, "Next: Use", expect_rerun)
    page.wait_for_url(re.compile(r"/use"))
    expect(main(page).get_by_role("heading", name="Third-party use of the release")).to_be_visible()
    expect(main(page).get_by_text("Step 4 of 4")).to_be_visible()
    expect(main(page).get_by_role("combobox", name="Release")).to_have_value(re.compile(r"^#1 "))   # release #1
    expect(main(page).get_by_role("button", name="Next")).to_be_disabled()
    assert sidebar_data(page) == data_line                                              # the same data throughout
    assert_no_exception(page)

    # --- and back to Release: the release is still there
    step(page, "Back: Release", expect_rerun)
    page.wait_for_url(re.compile(r"/release"))
    expect(main(page).get_by_test_id("stMetric").filter(has_text="ε spent")).to_be_visible()
    assert sidebar_data(page) == data_line
    assert_no_exception(page)
