"""Issue 26, projector and wording: one figure layout with legible type, log axes with whole-value labels, δ written
one way, messages that say what was typed, labels that fit."""

from __future__ import annotations

import re
from pathlib import Path

import numpy as np
import pytest
from test_app_shared import ok, plotly_figures, public_app

from dpkme.kernels import GaussianKernel
from ui import figures as F
from ui import presentation as P

REPO = Path(__file__).resolve().parents[1]


# ------------------------------------------------------------------ one figure layout, used by every figure
def test_no_page_draws_a_plotly_figure_around_the_shared_layout():
    offenders = []
    for path in sorted([REPO / "app.py", *(REPO / "pages").glob("*.py"), *(REPO / "ui").rglob("*.py")]):
        if path.name == "charts.py":
            continue
        for i, line in enumerate(path.read_text(encoding="utf-8").splitlines(), 1):
            if re.search(r"\.plotly_chart\(", line):
                offenders.append(f"{path.relative_to(REPO)}:{i}: {line.strip()}")
    assert not offenders, "call ui.charts.plotly_chart (the shared layout), not st.plotly_chart:\n" + "\n".join(offenders)


def test_the_shared_layout_sets_legible_type_and_larger_type_for_a_projector():
    fig = F.themed(F.kernel_profile(GaussianKernel(lengthscale=1.0), 3.0))
    assert fig.layout.font.size == F.FONT_SIZE >= 14
    assert fig.layout.title.font.size > F.FONT_SIZE
    big = F.themed(F.kme_heatmaps(np.linspace(0, 1, 5), np.linspace(0, 1, 5), np.ones(25), np.ones(25),
                                  columns=["a", "b"]), presentation=True)
    assert big.layout.font.size == F.PRESENT_FONT_SIZE > F.FONT_SIZE
    assert {a.font.size for a in big.layout.annotations} == {F.PRESENT_FONT_SIZE}      # the subplot titles too


def _labels_are_values(axis) -> None:
    assert axis.tickvals is not None and len(axis.tickvals) >= 2
    for v, t in zip(axis.tickvals, axis.ticktext):
        assert float(t.replace(",", "")) == pytest.approx(v, rel=1e-9), (v, t)


@pytest.mark.parametrize("lo,hi", [(0.05, 0.5), (3.0, 9.0), (0.1, 10.0), (1e-10, 1e-3), (2e-4, 7e-2), (40, 9e6)])
def test_a_log_axis_is_labelled_with_whole_values_never_bare_digits(lo, hi):
    """Plotly writes "5 6 7 8 9 1 2 3 4 5" on a short log axis; every label here is the value it marks."""
    x = np.geomspace(lo, hi, 7)
    fig = F.themed(F.curves_figure(x, [{"name": "a", "y": x * 3}], xlabel="ε", title="t"))
    for axis in (fig.layout.xaxis, fig.layout.yaxis):
        _labels_are_values(axis)
        shown = [t for v, t in zip(axis.tickvals, axis.ticktext) if lo * 0.999 <= v / (1 if axis is fig.layout.xaxis
                                                                                       else 3) <= hi * 1.001]
        assert len(shown) >= 2, (lo, hi, axis.ticktext)
        assert not any(re.fullmatch(r"\d", t) and float(t) != v for v, t in zip(axis.tickvals, axis.ticktext))


def test_fmt_power_is_one_short_e_notation():
    assert [F.fmt_power(v) for v in (1e-6, 2.5e-7, 1e-10, 1e12, 0)] == ["1e-6", "2.5e-7", "1e-10", "1e12", "0"]


@pytest.mark.parametrize("present", [False, True])
def test_the_kernel_pages_log_log_sigma_figure_in_the_app(present):
    at = public_app()
    at.session_state[P.PRESENT] = present
    at.run()
    at.switch_page("pages/kernel.py").run()
    ok(at)
    figs = plotly_figures(at)
    assert figs
    size = F.PRESENT_FONT_SIZE if present else F.FONT_SIZE
    assert all(f["layout"]["font"]["size"] == size for f in figs)
    sigma = [f for f in figs if f["layout"].get("xaxis", {}).get("type") == "log"]
    assert sigma
    for f in sigma:
        for ax in ("xaxis", "yaxis"):
            for v, t in zip(f["layout"][ax]["tickvals"], f["layout"][ax]["ticktext"]):
                assert float(t.replace(",", "")) == pytest.approx(v, rel=1e-9)
