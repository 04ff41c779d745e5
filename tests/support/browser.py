"""Playwright helpers shared by the browser tests: the main area, metrics, clicks, screenshots."""

from __future__ import annotations

import os
from pathlib import Path

from playwright.sync_api import Page, expect

# Screenshots are taken only on request, into the folder DPKME_SCREENSHOTS names (relative to the repository): the
# README's images are refreshed on purpose with DPKME_SCREENSHOTS=docs/screenshots bash tests/run.sh -m browser, and
# DPKME_SCREENSHOTS=tests/.screenshots (ignored by git) keeps a run's pictures without touching tracked files.
_ROOT = Path(__file__).resolve().parents[2]


SHOTS = _ROOT / os.environ["DPKME_SCREENSHOTS"] if os.environ.get("DPKME_SCREENSHOTS") else None


WIDTH = 1400


# True once every Plotly chart on the page is drawn at its container's current width (Plotly
# redraws on a resize); evaluated by wait_for_function on each animation frame.
PLOTS_SETTLED = """() => [...document.querySelectorAll('[data-testid="stPlotlyChart"]')].every(chart => {
    const plot = chart.querySelector('.js-plotly-plot');
    const svg = plot && plot.querySelector('svg.main-svg');
    return svg !== null && Math.abs(svg.getBoundingClientRect().width - plot.getBoundingClientRect().width) <= 1;
})"""


def screenshot(page: Page, name: str) -> None:
    """Full-height screenshot of the page (the main area scrolls, so the viewport is resized to fit), written
    when DPKME_SCREENSHOTS names a folder. Without it the page goes through the same resize and redraw (later
    steps of a test run on the page as it leaves them) and only the capture is skipped."""
    height = page.evaluate(
        "() => { const m = document.querySelector('[data-testid=\"stMain\"]'); return m ? m.scrollHeight : 900; }")
    page.set_viewport_size({"width": WIDTH, "height": int(min(max(900, height + 40), 6000))})
    page.wait_for_function(PLOTS_SETTLED)  # Plotly redrawn at the new size (no fixed sleep)
    if SHOTS is not None:
        SHOTS.mkdir(parents=True, exist_ok=True)
        page.screenshot(path=str(SHOTS / f"{name}.png"))
    page.set_viewport_size({"width": WIDTH, "height": 900})


def main(page: Page):
    return page.get_by_test_id("stMain")


def metric_value(page: Page, label: str) -> str:
    box = main(page).get_by_test_id("stMetric").filter(has_text=label).first
    expect(box).to_be_visible()
    return box.get_by_test_id("stMetricValue").inner_text()


def click_button(page: Page, name: str, expect_rerun) -> None:
    """Click a button of the main area and wait until the run it starts has finished."""
    with expect_rerun(page):
        main(page).get_by_role("button", name=name, exact=True).click()


def pick_radio(page: Page, label: str, expect_rerun) -> None:
    """Choose the radio option ``label`` (a rerun if it was not chosen yet) and wait for that run."""
    if main(page).get_by_role("radio", name=label, exact=True).is_checked():
        return
    with expect_rerun(page):
        main(page).get_by_text(label, exact=True).click()


