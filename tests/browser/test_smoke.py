"""Smoke tests of the whole app: it starts, renders, and no page shows an exception.

Generic on purpose (no page names or texts): feature tests live in their own files.
"""

from __future__ import annotations

import re
from pathlib import Path

import pytest
from playwright.sync_api import expect

REPO_ROOT = Path(__file__).resolve().parents[2]
SID = r"(\?sid=[\w-]+)?$"      # the session's token in the address (app.py, ui/persist.py): a reload keeps the session


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
@pytest.mark.slow
def test_every_sidebar_page_renders_without_exception(app_page, wait_idle, assert_no_exception):
    links = app_page.get_by_test_id("stSidebarNav").get_by_role("link")
    hrefs = [links.nth(i).get_attribute("href") for i in range(links.count())]
    for i, href in enumerate(hrefs):
        links.nth(i).click()  # by position: icons are part of a link's accessible name
        app_page.wait_for_url(re.compile(re.escape(href.rstrip("/")) + "/?" + SID))
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


def _check_deep_links(page, url, wait_idle, assert_no_exception):
    url_paths = re.findall(r'url_path="([^"]+)"', (REPO_ROOT / "app.py").read_text())
    # every url_path equals its file's name: the legacy pages/ registry maps a first-visit link by file name
    assert sorted(url_paths) == sorted(p.stem for p in (REPO_ROOT / "pages").glob("*.py")), url_paths
    for path in url_paths:
        page.goto(f"{url}/{path}")
        _expect_app_frame(page, wait_idle)
        # the default page lives at /; every other one keeps its own URL
        own = re.escape(url) + (r"/?(home)?/?" if path == "home" else "/" + re.escape(path) + "/?") + SID
        expect(page).to_have_url(re.compile(own))
        expect(_main_heading(page)).to_be_visible()
        assert_no_exception(page)


def _expect_app_frame(page, wait_idle):
    """After ``page.goto``: the first run finished inside app.py's frame (title and full navigation).

    Every check retries until it holds (``expect``), never a one-shot read: under load the first run
    of a new session, and a rerun it may trigger, take seconds; the sidebar fills in during the run.
    """
    wait_idle(page)   # the state is "initial" until the session's first run, so this waits for that run
    expect(page).to_have_title(re.compile("dpkme"))
    sidebar_nav = page.get_by_test_id("stSidebarNav")
    expect(sidebar_nav).to_contain_text("Kernel & privacy")
    expect(sidebar_nav).to_contain_text("Privacy audit")


@pytest.mark.browser
@pytest.mark.slow
def test_the_first_request_to_a_new_server_can_be_a_deep_link(page, fresh_streamlit_server, wait_idle,
                                                               assert_no_exception):
    """A deep link as the very first request of a server runs app.py's frame (title, navigation, data).

    Streamlit treats pages/ as a legacy registry until the first st.navigation call of the process, so
    without ui/frame.py this link would run pages/audit.py alone (file-name menu, no dataset).
    """
    page.goto(f"{fresh_streamlit_server.url}/audit")
    _expect_app_frame(page, wait_idle)
    expect(page.get_by_text("Current data")).to_be_visible()          # app.py's sidebar summary
    expect(page).to_have_url(re.compile(re.escape(fresh_streamlit_server.url) + "/audit/?" + SID))
    assert_no_exception(page)


@pytest.mark.browser
@pytest.mark.slow
def test_a_deep_link_opens_the_page_inside_the_app_frame(page, streamlit_server, wait_idle, assert_no_exception):
    """Every page's URL opened in a new browser session shows the page inside the frame."""
    _check_deep_links(page, streamlit_server.url, wait_idle, assert_no_exception)
