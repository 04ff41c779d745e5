"""Smoke tests of the whole app: it starts, renders, and no page shows an exception.

Generic on purpose (no page names or texts): feature tests live in their own files.
"""

from __future__ import annotations

import re
from pathlib import Path

import pytest
from playwright.sync_api import expect

REPO_ROOT = Path(__file__).resolve().parents[1]


def _main_heading(page):
    return page.get_by_test_id("stMain").get_by_test_id("stHeading").first


@pytest.mark.browser
def test_app_opens_with_a_heading_and_no_exception(app_page, assert_no_exception):
    expect(app_page).to_have_title(re.compile(r"\S"))
    expect(_main_heading(app_page)).to_be_visible()
    assert_no_exception(app_page)


@pytest.mark.browser
def test_first_page_draws_a_plotly_chart(app_page):
    """Plotly's JavaScript really drew the first page's figure (an SVG with content)."""
    chart = app_page.get_by_test_id("stPlotlyChart").first
    expect(chart).to_be_visible()
    expect(chart.locator("svg.main-svg").first).to_be_visible()


@pytest.mark.browser
def test_every_sidebar_page_renders_without_exception(app_page, wait_idle, assert_no_exception):
    links = app_page.get_by_test_id("stSidebarNav").get_by_role("link")
    hrefs = [links.nth(i).get_attribute("href") for i in range(links.count())]
    for i, href in enumerate(hrefs):
        links.nth(i).click()  # by position: icons are part of a link's accessible name
        app_page.wait_for_url(href)
        wait_idle(app_page)
        expect(_main_heading(app_page)).to_be_visible()
        assert_no_exception(app_page)


def test_every_page_runs_headless(app_test):
    """AppTest: the app and each file in pages/ run to the end without an exception."""
    at = app_test.run()
    assert not at.exception, at.exception
    for page in sorted((REPO_ROOT / "pages").glob("*.py")):
        if page.name.startswith("_"):
            continue
        at.switch_page(f"pages/{page.name}").run()
        assert not at.exception, (page.name, at.exception)
