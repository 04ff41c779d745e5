"""Issue 26: the app promises no outside request (offline classrooms): walk it in chromium with every network
request logged and check that none leaves the app's own server -- the page icon, the icons, the fonts, the figures."""

from __future__ import annotations

from urllib.parse import urlsplit

import pytest
from playwright.sync_api import expect

LOCAL_HOSTS = {"127.0.0.1", "localhost", "[::1]", "::1"}
LOCAL_SCHEMES = {"data", "blob", "about", "chrome", "chrome-extension", "devtools"}


def _outside(urls: list[str]) -> list[str]:
    out = []
    for u in urls:
        parts = urlsplit(u)
        if parts.scheme in LOCAL_SCHEMES:
            continue
        if (parts.hostname or "") not in LOCAL_HOSTS:
            out.append(u)
    return out


@pytest.mark.browser
@pytest.mark.slow
def test_no_request_leaves_the_apps_own_server(page, streamlit_server, wait_idle, nav, assert_no_exception,
                                               expect_rerun):
    requests: list[str] = []
    page.on("request", lambda r: requests.append(r.url))
    page.goto(streamlit_server.url)
    wait_idle(page)
    expect(page.get_by_test_id("stSidebarNav")).to_contain_text("Kernel & privacy")
    with expect_rerun(page):
        page.get_by_role("button", name="Run the paper example").click()
    expect(page.get_by_test_id("stPlotlyChart").first).to_be_visible()
    for name in ("Kernel & privacy", "Release", "Third-party use", "Privacy audit", "Budget ledger", "Data"):
        nav(page, name)
        assert_no_exception(page)
    page.wait_for_timeout(1500)            # late requests: the favicon, fonts loaded by the figures
    favicon = page.evaluate("() => [...document.querySelectorAll('link[rel~=icon]')].map(l => l.href)")
    assert favicon and not _outside(favicon), favicon
    assert requests, "no request was logged"
    assert not _outside(requests), _outside(requests)
