"""Shared fixtures for the whole test suite.

Headless app tests (no browser, no server)
    ``app_test``: an unrun ``streamlit.testing.v1.AppTest`` of ``app.py``
    (``default_timeout=30``; cwd is the repo root). Set ``at.session_state``
    before ``at.run()`` if needed; ``at.switch_page("pages/x.py").run()``
    switches pages. Always ``assert not at.exception``.

Real-browser tests (Playwright + Debian's ``/usr/bin/chromium``), mark them
``@pytest.mark.browser``
    ``streamlit_server``: session-scoped live ``streamlit run app.py`` on a free
    loopback port; ``.url`` is its address, ``.log_text()`` its console output.
    ``app_page``: a fresh Playwright ``page`` (new session) opened at the app,
    with the first script run finished.
    ``wait_idle(page)``: wait until the script is not running.
    ``nav(page, "Release")``: click the sidebar link with exactly that text (its
    icon aside), wait until the URL changes and the page's run has finished.
    ``assert_no_exception(page)``: fail if an ``stException`` box is visible.
    ``expect`` times out after 20 s (Playwright's default is 5 s).

The browser fixtures fail (never skip) when chromium is missing: a skipped
browser suite must not look green. ``bash tests/run.sh`` installs it.
"""

from __future__ import annotations

import contextlib
import os
import shutil
import socket
import subprocess
import sys
import tempfile
import time
import urllib.error
import urllib.request
from dataclasses import dataclass
from pathlib import Path

import pytest
from playwright.sync_api import Page, expect

REPO_ROOT = Path(__file__).resolve().parents[1]
APP_FILE = REPO_ROOT / "app.py"
CHROMIUM = Path("/usr/bin/chromium")
CHROMIUM_ARGS = [
    "--headless",
    "--no-sandbox",
    "--disable-gpu",
    "--disable-quic",
    "--disable-dev-shm-usage",
    # Stop Chromium's background look-ups of outside hosts (the network is closed).
    "--host-resolver-rules=MAP * ~NOTFOUND , EXCLUDE localhost , EXCLUDE 127.0.0.1",
]
SERVER_START_TIMEOUT = 90.0  # seconds; healthy in ~2 s when warm
EXPECT_TIMEOUT_MS = 20_000  # first switch to a page importing scipy/plotly took ~10 s

expect.set_options(timeout=EXPECT_TIMEOUT_MS)

# Loopback requests must never go through a proxy from the environment.
_NO_PROXY_OPENER = urllib.request.build_opener(urllib.request.ProxyHandler({}))


# --------------------------------------------------------------------------- paths
@pytest.fixture(scope="session")
def repo_root() -> Path:
    """Absolute path of the repository root."""
    return REPO_ROOT


# ------------------------------------------------------------------------ AppTest
@pytest.fixture
def app_test(monkeypatch):
    """An unrun ``AppTest`` of ``app.py`` with a 30 s timeout, cwd = repo root."""
    from streamlit.testing.v1 import AppTest

    if not APP_FILE.exists():
        pytest.fail(f"{APP_FILE} does not exist")
    monkeypatch.chdir(REPO_ROOT)
    return AppTest.from_file(str(APP_FILE), default_timeout=30)


# ------------------------------------------------------------------ live server
@dataclass
class StreamlitServer:
    url: str
    process: subprocess.Popen
    log_path: Path

    def log_text(self, max_chars: int = 20_000) -> str:
        """The server's stdout+stderr so far (the last ``max_chars`` characters)."""
        try:
            text = self.log_path.read_text(errors="replace")
        except OSError as exc:  # pragma: no cover
            return f"<could not read {self.log_path}: {exc}>"
        return text[-max_chars:]


def _free_port() -> int:
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


def _healthy(url: str) -> bool:
    try:
        with _NO_PROXY_OPENER.open(url + "/_stcore/health", timeout=2) as resp:
            return resp.status == 200
    except (urllib.error.URLError, OSError):
        return False


@contextlib.contextmanager
def run_streamlit_server():
    """Start ``streamlit run app.py`` on 127.0.0.1:<free port>, wait until healthy, stop it afterwards."""
    if not APP_FILE.exists():
        pytest.fail(f"{APP_FILE} does not exist")
    port = _free_port()
    url = f"http://127.0.0.1:{port}"
    log_dir = Path(tempfile.mkdtemp(prefix="dpkme-streamlit-"))
    log_path = log_dir / "server.log"
    env = dict(os.environ)
    env.update(
        NO_PROXY="localhost,127.0.0.1",
        no_proxy="localhost,127.0.0.1",
        PYTHONUNBUFFERED="1",
        STREAMLIT_BROWSER_GATHER_USAGE_STATS="false",
    )
    cmd = [
        sys.executable, "-m", "streamlit", "run", str(APP_FILE),
        "--server.headless", "true",
        "--server.port", str(port),
        "--server.address", "127.0.0.1",
        "--browser.gatherUsageStats", "false",
        "--server.fileWatcherType", "none",
    ]
    with open(log_path, "wb") as log:
        proc = subprocess.Popen(
            cmd, cwd=REPO_ROOT, env=env, stdout=log, stderr=subprocess.STDOUT,
            stdin=subprocess.DEVNULL,
        )
    server = StreamlitServer(url=url, process=proc, log_path=log_path)
    try:
        deadline = time.monotonic() + SERVER_START_TIMEOUT
        while not _healthy(url):
            if proc.poll() is not None:
                pytest.fail(
                    f"streamlit exited with code {proc.returncode} before becoming "
                    f"healthy.\n--- server log ---\n{server.log_text()}",
                    pytrace=False,
                )
            if time.monotonic() > deadline:
                pytest.fail(
                    f"streamlit not healthy at {url} after {SERVER_START_TIMEOUT:.0f} s."
                    f"\n--- server log ---\n{server.log_text()}",
                    pytrace=False,
                )
            time.sleep(0.25)
        yield server
    finally:
        proc.terminate()
        try:
            proc.wait(timeout=10)
        except subprocess.TimeoutExpired:
            proc.kill()
            proc.wait(timeout=10)
        shutil.rmtree(log_dir, ignore_errors=True)


@pytest.fixture(scope="session")
def streamlit_server():
    """A live ``streamlit run app.py`` on 127.0.0.1:<free port> for the session."""
    with run_streamlit_server() as server:
        yield server


@pytest.fixture
def fresh_streamlit_server():
    """A server of its own for one test (e.g. what the very first request after start does)."""
    with run_streamlit_server() as server:
        yield server


@pytest.hookimpl(wrapper=True)
def pytest_runtest_makereport(item, call):
    """Attach the server log to the report of a failed test that used the server."""
    report = yield
    server = getattr(item, "funcargs", {}).get("streamlit_server")
    if report.failed and server is not None:
        report.sections.append(("streamlit server log", server.log_text()))
    return report


# ---------------------------------------------------------------------- browser
def pytest_collection_modifyitems(items):
    """Every test that uses a Playwright page is a ``browser`` test, marked or not."""
    for item in items:
        if "page" in getattr(item, "fixturenames", ()) and not item.get_closest_marker("browser"):
            item.add_marker(pytest.mark.browser)


@pytest.fixture(scope="session")
def browser_type_launch_args(browser_type_launch_args):
    """pytest-playwright's launch options + Debian's chromium and its flags."""
    if not CHROMIUM.exists():
        pytest.fail(
            f"{CHROMIUM} is missing: the browser tests cannot run. Install it with "
            "`apt-get install -y --no-install-recommends chromium fonts-liberation` "
            "(or run `bash tests/run.sh`, which does). Never `playwright install`.",
            pytrace=False,
        )
    args = list(browser_type_launch_args.get("args", []))
    if browser_type_launch_args.get("headless") is False:  # --headed
        flags = [a for a in CHROMIUM_ARGS if a != "--headless"]
    else:
        flags = CHROMIUM_ARGS
    return {
        **browser_type_launch_args,
        "executable_path": str(CHROMIUM),
        "args": args + flags,
    }


def wait_idle(page: Page) -> None:
    """Wait until the app's script is not running (first run included)."""
    expect(page.locator('[data-testid="stApp"][data-test-script-state="notRunning"]')).to_be_attached()


def assert_no_exception(page: Page) -> None:
    """Fail if Streamlit shows an exception box (``stException``) on the page."""
    boxes = page.get_by_test_id("stException").filter(visible=True)
    texts = boxes.all_inner_texts()
    if texts:
        joined = "\n---\n".join(texts)
        pytest.fail(f"{len(texts)} exception box(es) on {page.url}:\n{joined}", pytrace=False)


def nav(page: Page, name: str) -> None:
    """Click the sidebar link whose text (icon aside) is exactly ``name``; wait for the run."""
    link = page.get_by_test_id("stSidebarNav").get_by_role("link", name=name, exact=True)
    href = link.get_attribute("href")
    link.click()
    # The URL changes once the server starts the new page's run; only then is
    # "notRunning" the end of that run and not the state left by the last one.
    if href:
        page.wait_for_url(href)
    wait_idle(page)


@pytest.fixture(name="wait_idle")
def _wait_idle_fixture():
    return wait_idle


@pytest.fixture(name="assert_no_exception")
def _assert_no_exception_fixture():
    return assert_no_exception


@pytest.fixture(name="nav")
def _nav_fixture():
    return nav


@pytest.fixture
def app_page(page: Page, streamlit_server: StreamlitServer) -> Page:
    """A new browser session opened at the app, after its first run finished."""
    page.goto(streamlit_server.url)
    expect(page.get_by_test_id("stApp")).to_be_visible()
    wait_idle(page)
    return page
