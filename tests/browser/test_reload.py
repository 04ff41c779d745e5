"""A reload (F5) keeps the session: the release, the ledger's spent ε, and a second release is charged on top
(issue 26, "a reload wipes every release and the ledger"; ui/persist.py). A new tab of the same browser resumes it
in one click; the address in another browser (another cookie jar) gets a new, empty session."""

from __future__ import annotations

import re

import pytest
from playwright.sync_api import expect

SPENT = re.compile(r"ε = ([\d.]+) of 5 spent")


def _spent(page) -> str:
    """The sidebar's headline of the privacy spent on the current data."""
    line = page.get_by_test_id("stSidebar").get_by_text(SPENT)
    expect(line).to_be_visible()
    return SPENT.search(line.inner_text()).group(1)


def _main(page):
    return page.get_by_test_id("stMain")


@pytest.mark.browser
def test_a_reload_keeps_the_release_and_the_ledger(app_page, nav, wait_idle, expect_rerun, assert_no_exception):
    page = app_page
    nav(page, "Release")
    with expect_rerun(page):
        _main(page).get_by_role("button", name="Release", exact=True).click()
    expect(_main(page).get_by_test_id("stMetric").filter(has_text="ε spent")).to_be_visible()
    first = _spent(page)
    assert float(first) > 0
    assert "sid=" in page.url
    url = page.url

    page.reload()
    wait_idle(page)
    assert page.url == url                                                    # the same page, the same session
    expect(_main(page).get_by_test_id("stMetric").filter(has_text="ε spent")).to_be_visible()   # the release
    assert _spent(page) == first                                              # the ledger
    assert_no_exception(page)

    with expect_rerun(page):
        _main(page).get_by_role("button", name="Release", exact=True).click()
    expect(page.get_by_test_id("stSidebar").get_by_text(SPENT)).not_to_have_text(re.compile(rf"ε = {re.escape(first)} "))
    assert float(_spent(page)) > float(first)                                 # charged on top, not from zero
    nav(page, "Budget ledger")
    expect(_main(page).get_by_test_id("stMetric").filter(has_text="Charges")).to_contain_text("2")
    assert_no_exception(page)

    # a new tab of the same browser, opened at the app without the address: empty, and resumed in one click
    tab = page.context.new_page()
    tab.goto(url.split("?")[0])
    sidebar = tab.get_by_test_id("stSidebar")
    expect(sidebar.get_by_text(re.compile(r"ε = 0 of 5 spent"))).to_be_visible()
    sidebar.get_by_role("button", name="Resume this browser's last session").click()
    expect(sidebar.get_by_text(SPENT)).not_to_have_text(re.compile(r"ε = 0 of"))
    assert _spent(tab) == _spent(page)
    expect(tab).to_have_url(re.compile(re.escape(url.split("sid=")[1]) + "$"))      # the same session's address
    assert_no_exception(tab)
    tab.close()

    # the same address in another browser (another cookie jar): a new, empty session with its own token
    other = page.context.browser.new_context()
    try:
        elsewhere = other.new_page()
        elsewhere.goto(url)
        expect(elsewhere.get_by_test_id("stSidebar").get_by_text(re.compile(r"ε = 0 of 5 spent"))).to_be_visible()
        expect(elsewhere).to_have_url(re.compile(r"sid=(?!" + re.escape(url.split("sid=")[1]) + ")"))
    finally:
        other.close()
