"""Issue 26 in a real browser: the figures' type is as large as the shared layout says (Streamlit's chart theme
does not shrink it back), larger in presentation mode, and a log axis is labelled with whole values."""

from __future__ import annotations

import re

import pytest
from playwright.sync_api import expect

from ui.figures import FONT_SIZE, PRESENT_FONT_SIZE

_TICKS = """(chart) => [...chart.querySelectorAll('.xtick text, .ytick text')].map(t => ({
    text: t.textContent, size: parseFloat(getComputedStyle(t).fontSize)}))"""


def _ticks_of_sigma_chart(page):
    page.get_by_test_id("stExpander").filter(has_text="σ against ε for both calibrations").locator("summary").click()
    chart = page.get_by_test_id("stPlotlyChart").filter(has_text="Noise σ per coordinate against ε")
    expect(chart).to_be_visible()
    chart.scroll_into_view_if_needed()
    page.wait_for_function("(c) => c.querySelectorAll('.xtick text').length > 0", arg=chart.element_handle())
    return chart.evaluate(_TICKS)


@pytest.mark.browser
@pytest.mark.slow
@pytest.mark.parametrize("present", [False, True])
def test_figure_type_and_log_axis_labels_as_drawn(page, streamlit_server, wait_idle, nav, present):
    page.goto(streamlit_server.url + ("/?present=1" if present else ""))
    wait_idle(page)
    nav(page, "Kernel & privacy")
    ticks = _ticks_of_sigma_chart(page)
    assert ticks
    size = PRESENT_FONT_SIZE if present else FONT_SIZE
    assert min(t["size"] for t in ticks) >= size - 0.5, ticks
    # log-log axes: every label is a whole value (0.1, 1, 10, 10⁻⁴ ...), never Plotly's bare digits 2 … 9
    labels = [t["text"] for t in ticks]
    assert all(re.fullmatch(r"[0-9.,]+|([0-9.]+·)?10[⁻⁰¹²³⁴⁵⁶⁷⁸⁹]+", s) for s in labels), labels
    assert not [s for s in labels if re.fullmatch(r"[2-9]", s)], labels
