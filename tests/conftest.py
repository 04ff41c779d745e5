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
    ``wait_idle(page)``: wait until the script's last run has ended for good (not
    stopped for an st.rerun()); counted from the app's websocket messages.
    ``nav(page, "Release")``: click the sidebar link with exactly that text (its
    icon aside), wait until the page's run has ended and the URL is the page's.
    ``expect_rerun(page)``: a context manager around an action (click, upload,
    Enter) that waits until the script run(s) it triggers have *started and
    ended* (``wait_idle`` alone can return before the rerun begins).
    ``assert_no_exception(page)``: fail if an ``stException`` box is visible.
    ``expect`` and every Playwright action/navigation time out after 60 s
    (Playwright's defaults are 5 s and 30 s): generous, because waits are on
    conditions and never fixed sleeps, and a loaded machine is slow.

The browser fixtures fail (never skip) when chromium is missing: a skipped
browser suite must not look green. ``bash tests/run.sh`` installs it.

Parallel runs (pytest-xdist; ``bash tests/run.sh`` uses ``-n <CPUs, at most 4>
--dist loadfile``): a test module runs on one worker, in file order, as in a serial
run: module-scoped fixtures are built once, tests that share their state (e.g.
test_app_use's AppTest) see it in the order they were written for, and the only
writers of the screenshot folder (test_browser_flow.py, test_browser_five_minutes.py: different files) never race.
The session fixtures are per worker: a worker that runs browser tests starts its
own server on a free port (retried if another process takes the port first).
(``--dist loadgroup`` with ``xdist_group`` marks does not work with pytest 9.2 and
pytest-xdist 3.8.0: xdist renames ``item._nodeid``, pytest 9 reads ``item._id``,
so every test silently becomes its own group.)
"""

from __future__ import annotations

import contextlib
import os
import re
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
from playwright.sync_api import TimeoutError as PlaywrightTimeoutError

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
SERVER_START_ATTEMPTS = 5  # a free port can be taken by another process before streamlit binds it
# First switch to a page importing scipy/plotly took ~10 s on a loaded 2-core machine; 60 s
# leaves room for the other xdist worker and other jobs. Only failures wait that long.
EXPECT_TIMEOUT_MS = 60_000
ACTION_TIMEOUT_MS = 60_000  # page.click/fill/goto/wait_for_url... (Playwright's default is 30 s)
# Tests over ~5 s on a quiet 2-core machine (--durations) in files whose owners have not marked
# them @pytest.mark.slow yet: marked here at collection (test function names per file, by its path under tests/).
SLOW_ELSEWHERE = {
    "kernels/test_random_fourier_features.py": {"test_mean_embedding_memory_is_bounded"},   # 5.3 s: 200 000 x 2 000 streamed
}

expect.set_options(timeout=EXPECT_TIMEOUT_MS)

# Loopback requests must never go through a proxy from the environment.
_NO_PROXY_OPENER = urllib.request.build_opener(urllib.request.ProxyHandler({}))


# --------------------------------------------------------------------------- paths
@pytest.fixture(scope="session")
def repo_root() -> Path:
    """Absolute path of the repository root."""
    return REPO_ROOT


# ------------------------------------------------------------- JAX compilation cache
# Most of the generative tests' CPU time is XLA compiling tiny models, and the same program is often
# compiled again in one process: a fresh jax.jit around the same function (a new optimizer object, the
# audit's vmapped noise step, eager ops of one shape). JAX's persistent compilation cache, keyed on the
# program, turns such a recompile into a file read (the second audit_dpsgd call: 8.7 s -> 0.7 s CPU).
# One fresh directory per pytest process (one per xdist worker: no two processes write one cache, since
# JAX writes entries without a lock), removed at the end; set in this process only (jax.config, not
# environment variables), so no subprocess (notebook kernel, streamlit server, CLI) writes to disk.
# DPKME_TEST_JAX_CACHE=0 turns it off (e.g. to time the suite without it).
#
# XLA's CPU backend compiles at LLVM -O3 by default (xla_backend_optimization_level=3); the tests compile
# at -O2 (what clang builds release code with): the same HLO passes, the same IEEE arithmetic (no fast
# math at either level: a seeded dpgm run samples the same values, the engine still agrees with numpy to
# 1e-13), and about 40 % less CPU time per compile of the generative tests' programs (a tiny dpgm run:
# 13 -> 7 s CPU; tests/generative/test_privacy.py: 48 -> 31 s CPU, side by side on a loaded 2-core
# machine; -O1 buys nothing more). Set through XLA_FLAGS before any test creates the JAX backend, so the
# subprocesses (streamlit server, CLI, notebook kernel) compile at the same level.
# DPKME_TEST_XLA_OPT_LEVEL=3 restores XLA's default (e.g. to compare); an --xla_backend_optimization_level
# already in XLA_FLAGS is left as it is.
_XLA_OPT_FLAG = "--xla_backend_optimization_level"
_JAX_CACHE_DIR: str | None = None


def _set_xla_optimization_level() -> None:
    level = os.environ.get("DPKME_TEST_XLA_OPT_LEVEL", "2")
    flags = os.environ.get("XLA_FLAGS", "")
    if level.isdigit() and _XLA_OPT_FLAG not in flags:
        os.environ["XLA_FLAGS"] = f"{flags} {_XLA_OPT_FLAG}={level}".strip()


def pytest_configure(config):
    """Compile at -O2 (above); give this test process its own temporary JAX compilation cache (not the xdist
    controller)."""
    global _JAX_CACHE_DIR
    _set_xla_optimization_level()                # in the controller too: the workers inherit its environment
    # Predicted times from the reference machine's cost model, not this machine's load (dpkme.cost.PIN_ENV): a
    # size guard's confirmation box must not appear or not depending on how busy the machine is; inherited by the
    # app's subprocesses. tests/metrics/test_cost.py lifts it to test the calibrated model.
    os.environ.setdefault("DPKME_COST_MODEL", "reference")
    if getattr(config.option, "numprocesses", None) and not hasattr(config, "workerinput"):
        return                                   # the xdist controller runs no test
    if os.environ.get("DPKME_TEST_JAX_CACHE", "1") == "0":
        return
    try:
        import jax
    except ImportError:                          # pragma: no cover - jax is a pinned dependency
        return
    worker = os.environ.get("PYTEST_XDIST_WORKER", "main")
    _JAX_CACHE_DIR = tempfile.mkdtemp(prefix=f"dpkme-jax-cache-{worker}-")
    jax.config.update("jax_compilation_cache_dir", _JAX_CACHE_DIR)
    jax.config.update("jax_persistent_cache_min_compile_time_secs", 0.0)   # every program, even a tiny one
    jax.config.update("jax_persistent_cache_min_entry_size_bytes", -1)


def pytest_unconfigure(config):
    """Remove this process's JAX compilation cache."""
    if _JAX_CACHE_DIR is not None:
        shutil.rmtree(_JAX_CACHE_DIR, ignore_errors=True)


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


def _port_taken(log_text: str) -> bool:
    """streamlit 1.67 logs "Port N is not available"; older servers said "... already in use"."""
    return re.search(r"Port \d+ is not available|already in use", log_text) is not None


@contextlib.contextmanager
def run_streamlit_server():
    """Start ``streamlit run app.py`` on 127.0.0.1:<free port>, wait until healthy, stop it afterwards.

    The port is free when chosen but is only bound by streamlit seconds later; if another
    process (another xdist worker, another job) took it meanwhile, streamlit exits with
    "Port ... is not available" and the server is started again on a new free port.
    """
    if not APP_FILE.exists():
        pytest.fail(f"{APP_FILE} does not exist")
    for attempt in range(1, SERVER_START_ATTEMPTS + 1):
        with _start_streamlit_server(retry_if_port_taken=attempt < SERVER_START_ATTEMPTS) as server:
            if server is not None:
                yield server
                return


@contextlib.contextmanager
def _start_streamlit_server(retry_if_port_taken: bool):
    """One attempt: yields the healthy server, or None if the port was taken (and a retry is allowed)."""
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
                if retry_if_port_taken and _port_taken(server.log_text()):
                    yield None
                    return
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
def _uses_playwright_page(item) -> bool:
    """True if the test gets Playwright's ``page`` fixture (not a parameter that happens to be named page)."""
    if "page" not in getattr(item, "fixturenames", ()):
        return False
    callspec = getattr(item, "callspec", None)
    return callspec is None or "page" not in callspec.params


@pytest.hookimpl(tryfirst=True)  # before -m selects on the marks added here
def pytest_collection_modifyitems(items):
    """Every test that uses a Playwright page is a ``browser`` test, marked or not; the tests of
    SLOW_ELSEWHERE are ``slow``."""
    for item in items:
        if getattr(item, "originalname", item.name) in SLOW_ELSEWHERE.get(item.path.relative_to(REPO_ROOT / "tests").as_posix(), ()):
            item.add_marker(pytest.mark.slow)
        if _uses_playwright_page(item) and not item.get_closest_marker("browser"):
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


# Streamlit tells the browser how every script run ended: a ForwardMsg with ``script_finished`` (field
# 6, a varint: 0 finished, 1 compile error, 2 stopped early for a rerun, 3 fragment run finished). The
# page's "notRunning" state alone is not the end of an interaction: st.rerun() (e.g. after a button)
# ends one run with status 2, and the page shows notRunning for a moment before the next run starts.
# This script, installed before the app's own code, counts the script_finished messages that arrive
# on the app's websocket (a minimal protobuf scan of each frame's top-level fields).
_RUN_TRACKER = """(() => {
    const runs = window.__dpkmeRuns = {finished: 0, last: null};
    function varint(b, i) {
        let x = 0, s = 0, c;
        do { c = b[i++]; x += (c & 0x7f) * 2 ** s; s += 7; } while (c & 0x80 && i < b.length);
        return [x, i];
    }
    function scan(b) {
        let i = 0;
        while (i < b.length) {
            let key, v, n;
            [key, i] = varint(b, i);
            const field = Math.floor(key / 8), wire = key & 7;
            if (wire === 0) { [v, i] = varint(b, i); if (field === 6) { runs.finished += 1; runs.last = v; } }
            else if (wire === 2) { [n, i] = varint(b, i); i += n; }
            else if (wire === 1) i += 8;
            else if (wire === 5) i += 4;
            else return;
        }
    }
    const Native = window.WebSocket;
    window.WebSocket = class extends Native {
        constructor(...args) {
            super(...args);
            this.addEventListener('message', (e) => {
                if (e.data instanceof ArrayBuffer) { try { scan(new Uint8Array(e.data)); } catch (err) {} }
            });
        }
    };
})();"""
# Idle: the last run ended for good (not stopped for a rerun) and the page shows it.
_IDLE = """(minFinished) => {
    const runs = window.__dpkmeRuns;
    if (!runs) throw new Error('the run tracker of tests/conftest.py is not installed on this page');
    const app = document.querySelector('[data-testid="stApp"]');
    return runs.finished >= minFinished && runs.last !== null && runs.last !== 2
        && app !== null && app.getAttribute('data-test-script-state') === 'notRunning';
}"""
_RUN_STATE = """() => { const app = document.querySelector('[data-testid="stApp"]');
    return {runs: window.__dpkmeRuns, scriptState: app && app.getAttribute('data-test-script-state'),
            connection: app && app.getAttribute('data-test-connection-state')}; }"""


@pytest.fixture
def page(page: Page) -> Page:
    """pytest-playwright's page with generous action and navigation timeouts (see ACTION_TIMEOUT_MS)
    and the script-run tracker that ``wait_idle`` and ``expect_rerun`` read."""
    page.set_default_timeout(ACTION_TIMEOUT_MS)
    page.set_default_navigation_timeout(ACTION_TIMEOUT_MS)
    page.add_init_script(_RUN_TRACKER)
    return page


def _wait_runs(page: Page, min_finished: int, what: str) -> None:
    try:
        page.wait_for_function(_IDLE, arg=min_finished, timeout=EXPECT_TIMEOUT_MS)
    except PlaywrightTimeoutError:
        pytest.fail(f"{what} within {EXPECT_TIMEOUT_MS / 1000:.0f} s on {page.url}: "
                    f"{page.evaluate(_RUN_STATE)}", pytrace=True)


def wait_idle(page: Page) -> None:
    """Wait until the app's last script run has ended for good (first run included).

    Nothing has run yet right after ``page.goto``, so this waits for the session's first run
    (and any reruns it asks for). After a click it may return *before* the rerun that the click
    starts: use ``expect_rerun`` around actions.
    """
    _wait_runs(page, 1, "the app's script did not finish")


def _finished_runs(page: Page) -> int:
    return page.evaluate("() => window.__dpkmeRuns.finished")


@contextlib.contextmanager
def expect_rerun(page: Page):
    """Wait, after the body, until the script run(s) it starts have ended for good.

    ``with expect_rerun(page): button.click()``: the runs are counted from the app's own
    messages, so a run too short to be seen by polling is not missed, and a run that ends in
    st.rerun() is not taken for the end.
    """
    wait_idle(page)
    before = _finished_runs(page)
    yield
    _wait_runs(page, before + 1, "no script run started and ended after the action")


def assert_no_exception(page: Page) -> None:
    """Fail if Streamlit shows an exception box (``stException``) on the page."""
    boxes = page.get_by_test_id("stException").filter(visible=True)
    texts = boxes.all_inner_texts()
    if texts:
        joined = "\n---\n".join(texts)
        pytest.fail(f"{len(texts)} exception box(es) on {page.url}:\n{joined}", pytrace=False)


def nav(page: Page, name: str) -> None:
    """Click the sidebar link whose text (icon aside) is exactly ``name``; wait for the page's run."""
    link = page.get_by_test_id("stSidebarNav").get_by_role("link", name=name, exact=True)
    href = link.get_attribute("href")
    with expect_rerun(page):
        link.click()
    if href:
        page.wait_for_url(same_page(href))


def same_page(href: str):
    """A ``wait_for_url`` predicate: the page of ``href``, whatever the query (app.py adds ``?sid=…``, the session's
    token that a reload restores: ui/persist.py)."""
    want = href.split("?", 1)[0].split("#", 1)[0].rstrip("/")
    return lambda url: url.split("?", 1)[0].split("#", 1)[0].rstrip("/") == want


@pytest.fixture(name="wait_idle")
def _wait_idle_fixture():
    return wait_idle


@pytest.fixture(name="assert_no_exception")
def _assert_no_exception_fixture():
    return assert_no_exception


@pytest.fixture(name="nav")
def _nav_fixture():
    return nav


@pytest.fixture(name="expect_rerun")
def _expect_rerun_fixture():
    return expect_rerun


@pytest.fixture
def app_page(page: Page, streamlit_server: StreamlitServer) -> Page:
    """A new browser session opened at the app, after its first run finished."""
    page.goto(streamlit_server.url)
    expect(page.get_by_test_id("stApp")).to_be_visible()
    wait_idle(page)
    return page
