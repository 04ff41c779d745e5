"""Issue 26, projector and wording: one figure layout with legible type, log axes with whole-value labels, δ written
one way, messages that say what was typed, labels that fit."""

from __future__ import annotations

import re
from pathlib import Path

import numpy as np
import pytest

from dpkme.kernels import GaussianKernel
from tests.support.app import ok, plotly_figures, public_app
from ui import figures as F
from ui import presentation as P

REPO = Path(__file__).resolve().parents[2]


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
    # on the axes themselves: Streamlit's chart theme sets 12 px there, which the layout-wide font does not beat
    assert fig.layout.xaxis.tickfont.size == fig.layout.yaxis.title.font.size == F.FONT_SIZE
    big = F.themed(F.kme_heatmaps(np.linspace(0, 1, 5), np.linspace(0, 1, 5), np.ones(25), np.ones(25),
                                  columns=["a", "b"]), presentation=True)
    assert big.layout.font.size == F.PRESENT_FONT_SIZE > F.FONT_SIZE
    assert {a.font.size for a in big.layout.annotations} == {F.PRESENT_FONT_SIZE}      # the subplot titles too


_SUP = str.maketrans("⁻⁰¹²³⁴⁵⁶⁷⁸⁹", "-0123456789")


def value_of(label: str) -> float:
    """The number a label shows: ``0.1``, ``1,000``, ``10⁻⁶``, ``2.5·10⁻⁷``."""
    label = label.replace(",", "").replace("−", "-")
    m = re.fullmatch(r"(?:([0-9.]+)·)?10([⁻⁰¹²³⁴⁵⁶⁷⁸⁹]+)", label)
    if m:
        return float(m.group(1) or 1) * 10.0 ** int(m.group(2).translate(_SUP))
    return float(label)


def _labels_are_values(axis) -> None:
    assert axis.tickvals is not None and len(axis.tickvals) >= 2
    for v, t in zip(axis.tickvals, axis.ticktext):
        assert value_of(t) == pytest.approx(v, rel=1e-9), (v, t)


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


def test_fmt_power_writes_powers_of_ten_as_the_prose_does():
    assert [F.fmt_power(v) for v in (1e-6, 2.5e-7, 1e-10, 1e12, 0)] == ["10⁻⁶", "2.5·10⁻⁷", "10⁻¹⁰", "10¹²", "0"]


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
                assert value_of(t) == pytest.approx(v, rel=1e-9)


# ------------------------------------------------------------------ δ written one way
_DELTA_WORD = re.compile(r"δ\s*=\s*([0-9][0-9.e+\-·⁻⁰¹²³⁴⁵⁶⁷⁸⁹]*)(?![0-9/])")
_ONE_WAY = re.compile(r"0|([1-9](\.\d+)?·)?10⁻[⁰¹²³⁴⁵⁶⁷⁸⁹]+")  # ui.numbers.fmt_power: 10⁻⁶, 2.5·10⁻⁷ (never 1e-06, 0.000001)


def test_no_delta_is_formatted_around_the_one_helper():
    offenders = []
    for path in sorted([*(REPO / "pages").glob("*.py"), *(REPO / "ui").rglob("*.py")]):
        for i, line in enumerate(path.read_text(encoding="utf-8").splitlines(), 1):
            if re.search(r"\{[^{}]*delta[^{}]*:\.?\d*[eg]\}|lambda d: f\"\{d:", line):
                offenders.append(f"{path.relative_to(REPO)}:{i}: {line.strip()}")
    assert not offenders, "write δ with ui.state.fmt_delta:\n" + "\n".join(offenders)


def _texts(at) -> list[str]:
    out = [e.value for kind in ("markdown", "caption", "info", "warning", "error", "success") for e in at.get(kind)]
    out += [f"{m.label} {m.value} {m.delta or ''} {m.proto.help}" for m in at.metric]
    for s in at.select_slider:
        out += [f"δ = {o}" for o in s.options] if "δ" in s.label else []
    return out


def test_delta_is_written_one_way_on_every_page():
    from ui import state as S
    at = public_app().run()
    at.switch_page("pages/release.py").run()
    at.button(key="rel.go").click().run()
    ok(at)
    seen = []
    for page in ("pages/release.py", "pages/kernel.py", "pages/ledger.py", "pages/twosample.py", "pages/audit.py"):
        at.switch_page(page).run()
        ok(at)
        for text in _texts(at):
            seen += [(page, m) for m in _DELTA_WORD.findall(text)]
        if page == "pages/release.py":                   # the table of all releases: δ one way, no "None" cell
            shown = [_display(d) for d in at.dataframe if "δ" in d.value.columns]
            assert shown and all(_ONE_WAY.fullmatch(str(v)) for t in shown for v in t["δ"]), shown
            assert "None" not in str([t.to_numpy().tolist() for t in shown])
        if page == "pages/ledger.py":
            tables = [d.value for d in at.dataframe]
            deltas = [v for t in tables for c in t.columns if "δ" in str(c) for v in t[c]]
            assert deltas and all(isinstance(v, str) and _ONE_WAY.fullmatch(v) for v in deltas), deltas
            assert all("None" not in t.astype(str).to_numpy().tolist().__str__() for t in tables)
    assert len({p for p, _ in seen}) >= 4, seen
    bad = [(p, v) for p, v in seen if not _ONE_WAY.fullmatch(v.rstrip("."))]
    assert not bad, bad
    assert S.fmt_delta(1e-6) == "10⁻⁶"


# ------------------------------------------------------------------ a message says what was typed
def test_a_typed_negative_epsilon_is_named_in_the_message_not_shown_as_zero():
    """Typing −1 in the exact-ε box showed "ε must be a positive number (got 0)": the box clamped it to its minimum."""
    from ui import state as S
    at = public_app().run()
    at.switch_page("pages/kernel.py").run()
    at.toggle(key=S.EPS_TYPED).set_value(True).run()
    box = at.number_input(key=S.EPS_VALUE)
    assert box.min is None or box.min < 0 or box.min > 0     # a minimum of 0 turns −1 into 0 before the page sees it
    box.set_value(-1.0).run()
    assert not at.exception
    msgs = " | ".join(e.value for e in at.error)
    assert "got -1" in msgs and "got 0" not in msgs, msgs
    for page in ("pages/release.py", "pages/audit.py", "pages/twosample.py", "pages/curves.py"):
        at.switch_page(page).run()
        assert not at.exception, page


# ------------------------------------------------------------------ labels that fit
def _call_labels(path: Path, attr: str):
    import ast
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        if isinstance(node, ast.Call) and getattr(node.func, "attr", None) == attr:
            label = next((k.value for k in node.keywords if k.arg == "label"), node.args[0] if node.args else None)
            if attr == "page_link" and len(node.args) > 1:
                label = node.args[1]
            if isinstance(label, ast.Constant) and isinstance(label.value, str):
                yield node, label.value


def test_the_over_budget_links_fit_the_release_pages_control_column():
    """"Plan ε without spending (Kernel & privacy" was cut off in the Release page's column."""
    labels = [s for _, s in _call_labels(REPO / "ui" / "budget_hint.py", "page_link")]
    assert len(labels) == 2 and all(len(s) <= 28 for s in labels), labels


def test_the_forget_button_fits_its_narrow_column():
    """"Forget this file" showed as "Forget …" in the fifth of the row beside the upload's message."""
    labels = [s for n, s in _call_labels(REPO / "ui" / "views" / "data.py", "button")
              if any(k.arg == "key" and getattr(k.value, "id", None) == "UPLOAD_FORGET" for k in n.keywords)]
    assert labels and all(len(s) <= 8 for s in labels), labels


# ------------------------------------------------------------------ counts as whole numbers, no "None" cells
def _display(df_element):
    """What st.dataframe shows: the Styler's display values when there are some, else the values as text."""
    import pyarrow as pa
    a = df_element.proto.arrow_data
    if a.HasField("styler"):
        return pa.ipc.open_stream(a.styler.display_values).read_all().to_pandas()
    import pandas as pd
    return df_element.value.map(lambda v: "None" if pd.isna(v) else str(v))      # Streamlit writes a null "None"


def test_shown_table_writes_counts_whole_and_empty_cells_as_a_dash():
    import pandas as pd

    from ui.numbers import MISSING_CELL, fill_missing, shown_table
    df = pd.DataFrame({"cat": ["a", None], "share": [0.12345, float("nan")], "estimated count": [537.83, 537830.2]})
    html = shown_table(df, counts=["estimated count"], missing_labels={"cat": "(missing)"}).to_html()
    assert "538" in html and "537,830" in html and "537.830" not in html and "(missing)" in html
    assert MISSING_CELL in html and "nan" not in html and "None" not in html
    filled = fill_missing(df, {"cat": "(missing)"})
    assert filled["cat"].tolist() == ["a", "(missing)"] and filled["share"].isna().tolist() == [False, True]


def test_the_use_pages_counts_are_whole_numbers_and_no_cell_says_none():
    from tests.support.app import new_app
    from tests.support.app_tables import schema_mode, use
    from ui import state as S
    at = use(schema_mode(new_app().run()))
    ok(at)
    described = [d for d in at.dataframe if "lengthscale" in d.value.columns       # the Data page's schema summary
                 and not d.proto.editing_mode]                                     # (not the schema editor)
    assert described and described[0].value.isna().to_numpy().any()                # it has empty cells ...
    assert "None" not in _display(described[0]).to_numpy().astype(str).tolist().__str__()   # ... shown as —
    at.switch_page("pages/release.py").run()
    at.selectbox(key=S.MECHANISM).set_value("alg2").run()   # weighted rows at once (a table's default: adaptive)
    at.button(key="rel.go").click().run()
    at.switch_page("pages/use.py").run()
    ok(at)
    tables = [d for d in at.dataframe if "estimated count" in d.value.columns]
    assert tables
    for d in tables:
        shown = _display(d)
        for col in ("estimated count", "true count"):
            if col in shown.columns:
                assert all(re.fullmatch(r"-?\d{1,3}(,\d{3})*", str(v)) for v in shown[col]), shown[col].tolist()


# ------------------------------------------------------------------ Home: what ε does, open
def test_home_shows_what_epsilon_does_open_not_in_a_collapsed_section():
    from tests.support.app import new_app
    at = new_app().run()
    ok(at)
    assert not [e for e in at.expander if "privacy promise" in e.label], "it sits in a collapsed section"
    assert "What does (ε, δ)-differential privacy promise?" in [h.value for h in at.main.subheader]
    promise = [m.value for m in at.main.markdown if "P(A(D) ∈ S) ≤ e^ε" in m.value]
    assert promise and "Smaller ε means stronger protection and more noise" in promise[0]
    assert not any(el.type == "expandable" for el in _ancestors_of(at, promise[0]))


def _ancestors_of(at, text):
    """The blocks that contain the markdown ``text`` (AppTest's tree)."""
    path = []

    def walk(node, trail):
        for child in getattr(node, "children", {}).values():
            if getattr(child, "type", None) == "markdown" and getattr(child, "value", None) == text:
                path.extend(trail)
            walk(child, [*trail, child])
    walk(at._tree, [])
    return path
