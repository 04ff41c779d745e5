"""Every page under random interaction (AppTest): no traceback, ever.

A seeded fuzzer. For every page listed in ``app.py``: a fresh app, run, switch to the page, run; then
``STEPS`` steps, each picking one interactable widget present on the page at that moment and giving it a
random value that a browser could send for that widget:

* number inputs and sliders: the minimum, the maximum, the current value or a value in between (log-uniform
  in magnitude over ranges wider than four decades; an unbounded input gets up to ±1e300). AppTest cannot
  send values outside [min, max] (a browser clamps them), so the fuzzer stays inside;
* selectbox, radio, select slider: a random option; multiselect: a random subset, the empty one included;
  these are sent as the *formatted labels*, exactly as the browser's frontend sends them (AppTest's own
  ``set_value`` needs the raw option, which the element tree does not expose);
* checkboxes and toggles: flipped; buttons: clicked (a quarter of the steps pick a button when the page has
  one); text inputs: a random hostile string.

Never touched: disabled widgets and the size guard's "run it anyway" boxes (keys containing ``.confirm.``):
ticking them would start computations of minutes, which is what they are there to prevent.

After every step the page must show no exception and no "an unexpected <type> occurred" message (what
``guard()`` shows for any exception but a ``ValueError``, e.g. a RuntimeWarning that pytest.ini turns into
an error); other ``st.error`` messages are allowed: they are the desired answer to a bad combination.

Even sequences start after one default release (so that the pages using releases show their controls), odd
ones in a fresh session. Random tours also switch between pages (state made on one page meets the others).
After each sequence Home and Data must still render; one test checks that a release still works after
fuzzing. A failure names the page, sequence, step, widget and value, and lists the steps before it: rerun
that one test id to reproduce it (the seeds are fixed: ``random.Random(f"{page}-{seq}")``).
"""

from __future__ import annotations

import math
import random
import re
import time
from pathlib import Path

import pytest

from tests.support.app import errors, metric, new_app
from ui import state as S

REPO = Path(__file__).resolve().parents[2]
#: Pages in the order of the navigation in app.py (so a new page is fuzzed without editing this file).
PAGES = re.findall(r'st\.Page\(\s*"(pages/[^"]+\.py)"', (REPO / "app.py").read_text())
#: Random steps per sequence and independent sequences per page (the whole file: see the report below).
STEPS = 10
SEQUENCES = 2
#: Random tours across the pages (a quarter of the steps switch page) and their length.
TOURS = 2
TOUR_STEPS = 30
#: Probability that a step clicks one of the page's buttons (if any) rather than any widget.
BUTTON_BIAS = 0.25
#: Widget types the fuzzer drives (AppTest's element type names).
KINDS = ("number_input", "slider", "select_slider", "selectbox", "radio", "checkbox", "toggle",
         "multiselect", "text_input", "button")
#: Strings a user could type into a text input.
HOSTILE_TEXT = ["", " ", "abc", "0", "-1", "1e309", "nan", "inf", "ü€𝔘", "'; DROP TABLE x; --", "a" * 500,
                "<script>alert(1)</script>", "../../etc/passwd", "1,5", "\t\n"]


@pytest.fixture(autouse=True)
def _stoppable_runs_ask_above_ten_seconds(monkeypatch):
    """Here, stoppable runs (curve labs) ask for confirmation above 10 s instead of a minute.

    The fuzzer never ticks a "run it anyway" box, so no step runs longer than that: the file stays within its
    time budget and every run far within AppTest's timeout. Everything else about the size guard is unchanged.
    """
    from ui import widgets

    monkeypatch.setattr(widgets, "STOPPABLE_CONFIRM_SECONDS", 10.0)


def test_the_fuzzer_covers_every_page_of_the_navigation():
    assert len(PAGES) >= 10 and "pages/home.py" in PAGES and "pages/audit.py" in PAGES
    assert all((REPO / p).is_file() for p in PAGES)


# --------------------------------------------------------------------------- random values
def _frontend_sends(widget, fill) -> None:
    """Make ``widget`` send the ``WidgetState`` built by ``fill(ws)`` on the next run, as the browser does.

    The browser sends selectbox/radio values as the option's label (``string_value``) and
    multiselect/select-slider values as a list of labels (``string_array_value``); the app maps them back to
    the options with its ``format_func``. AppTest's ``set_value`` needs the raw option instead, which is not in
    the element tree, so the widget's state is replaced for this one run (the tree is rebuilt by the run).
    """
    from streamlit.proto.WidgetStates_pb2 import WidgetState

    def state(self):
        ws = WidgetState()
        ws.id = self.id
        fill(ws)
        return ws

    cls = type(widget)
    widget.__class__ = type(f"Frontend{cls.__name__}", (cls,), {"_widget_state": property(state)})


def _number(rng: random.Random, lo: float | None, hi: float | None, step: float | None, is_int: bool,
            current) -> float | int:
    """The minimum, the maximum, the current value or a random value in between.

    Wide ranges (more than four decades) are sampled log-uniformly in magnitude, with a random sign where the
    range allows both. An unbounded input takes anything a browser can send: ±(2^53 - 1) for integers, ±1e300
    for floats. Integers stay on the step grid from the minimum (a typed float is free of the step: the step
    only drives the +/- buttons).
    """
    lo_ = lo if lo is not None else (-(2**53 - 1) if is_int else -1e300)
    hi_ = hi if hi is not None else (2**53 - 1 if is_int else 1e300)
    r = rng.random()
    if r < 0.2:
        v = lo_
    elif r < 0.4:
        v = hi_
    elif r < 0.5 and current is not None:
        v = current
    else:
        top = max(abs(lo_), abs(hi_))
        bottom = lo_ if lo_ > 0 else (-hi_ if hi_ < 0 else (1 if is_int else 1e-12))
        if top / max(bottom, 1e-300) > 1e4:                        # wide: log-uniform magnitude, random sign
            v = math.exp(rng.uniform(math.log(bottom), math.log(top)))
            signs = [sg for sg in (1, -1) if lo_ <= sg * v <= hi_] or [1]
            v = rng.choice(signs) * v
        else:
            v = rng.uniform(lo_, hi_)
    if is_int:
        v = int(round(v))
        if step and step > 1 and lo is not None:
            v = int(lo_ + round((v - lo_) / step) * step)
    v = min(max(v, lo_), hi_)
    return int(v) if is_int else float(v)


def _interactables(at) -> list:
    found = []
    for kind in KINDS:
        for w in at.get(kind):
            if getattr(w, "disabled", False) or getattr(w.proto, "disabled", False):
                continue
            if kind in ("checkbox", "toggle") and ".confirm." in (w.key or ""):
                continue   # the size guard's "run it anyway": would start a computation of minutes
            found.append((kind, w))
    return found


def _act(rng: random.Random, kind: str, w) -> str:
    """Give ``w`` a random value valid for it; return a description of the action."""
    if kind == "button":
        w.click()
        return "click"
    if kind in ("checkbox", "toggle"):
        v = not bool(w.value)
        w.set_value(v)
        return f"set {v}"
    if kind == "number_input":
        is_int = w.proto.data_type == 0
        v = _number(rng, w.min, w.max, w.step, is_int, w.value)
        w.set_value(v)
        return f"set {v!r} (range [{w.min}, {w.max}])"
    if kind == "slider":
        if w.proto.data_type not in (0, 1):
            return "skipped (date/time slider)"
        is_int = w.proto.data_type == 0
        lo, hi, step = w.proto.min, w.proto.max, w.proto.step or (1 if is_int else (w.proto.max - w.proto.min) / 100)
        grid = int(round((hi - lo) / step)) if step else 0

        def pick():
            r = rng.random()
            k = 0 if r < 0.2 else grid if r < 0.4 else rng.randint(0, max(grid, 0))
            x = lo + k * step
            return int(round(x)) if is_int else float(min(max(x, lo), hi))

        if isinstance(w.value, (list, tuple)):
            a, b = sorted((pick(), pick()))
            w.set_range(a, b)
            return f"set range ({a!r}, {b!r}) (range [{lo}, {hi}])"
        v = pick()
        w.set_value(v)
        return f"set {v!r} (range [{lo}, {hi}])"
    if kind in ("selectbox", "radio"):
        if not w.options:
            return "skipped (no options)"
        label = rng.choice(w.options)
        _frontend_sends(w, lambda ws: setattr(ws, "string_value", label))
        return f"choose {label!r}"
    if kind == "select_slider":
        opts = w.options
        if isinstance(w.value, (list, tuple)) and len(w.value) == 2 and len(opts) > 1:
            i, j = sorted(rng.sample(range(len(opts)), 2) if rng.random() < 0.8 else [rng.randrange(len(opts))] * 2)
            labels = [opts[i], opts[j]]
        else:
            labels = [rng.choice(opts)]
        _frontend_sends(w, lambda ws: ws.string_array_value.data.extend(labels))
        return f"choose {labels!r}"
    if kind == "multiselect":
        opts = w.options
        k = 0 if rng.random() < 0.25 else rng.randint(0, len(opts))
        if w.max_selections:
            k = min(k, w.max_selections)
        labels = rng.sample(opts, k)
        _frontend_sends(w, lambda ws: ws.string_array_value.data.extend(labels))
        return f"choose {labels!r}"
    if kind == "text_input":
        v = rng.choice(HOSTILE_TEXT)
        if w.max_chars:
            v = v[: w.max_chars]
        w.input(v)
        return f"type {v!r}"
    raise AssertionError(kind)


def _describe(kind: str, w) -> str:
    return f"{kind} key={w.key!r} label={getattr(w, 'label', '')!r}"


def _exceptions(at) -> str:
    return "\n---\n".join(f"{e.message}\n{''.join(e.stack_trace)}" for e in at.exception)


def fuzz(page: str, seq: int, steps: int = STEPS, at=None, tour: float = 0.0):
    """Run one seeded random sequence on ``page``; return the AppTest and the log of steps.

    With ``tour`` > 0, each step switches to a random page of the navigation with that probability instead of
    touching a widget (state made on one page then meets the other pages).
    """
    rng = random.Random(f"{page}-{seq}" + (f"-tour{tour}" if tour else ""))
    if at is None:
        at = new_app().run()
        if seq % 2 == 0:   # even sequences start with one default release (pages that use releases have more to do)
            at.switch_page("pages/release.py").run()
            at.button(key="rel.go").click().run()
            assert not at.exception and len(at.session_state[S.RELEASES]) == 1, (errors(at), _exceptions(at))
        at.switch_page(page).run()
        assert not at.exception, f"{page}: exception before fuzzing:\n{_exceptions(at)}"
    log: list[str] = []
    for step in range(steps):
        choices = _interactables(at)
        if rng.random() < tour or not choices:
            if not tour:
                log.append(f"step {step}: no interactable widget")
                break
            page = rng.choice(PAGES)
            what, action = "navigation", f"switch to {page}"
            at.switch_page(page)
        else:
            buttons = [c for c in choices if c[0] == "button"]
            # buttons start the work (use a dataset, release, compute): favour them a little
            kind, w = rng.choice(buttons if buttons and rng.random() < BUTTON_BIAS else choices)
            what = _describe(kind, w)
            action = _act(rng, kind, w)
        t0 = time.perf_counter()
        try:
            at.run()
        except Exception as exc:   # AppTest's own failures (e.g. a run longer than its timeout)
            raise AssertionError(f"{page} seq {seq} step {step}: {what}: {action} -> {type(exc).__name__}: "
                                 f"{exc}\nsteps before:\n" + "\n".join(log)) from exc
        shown = f"; st.error: {errors(at)[:150]!r}" if at.error else ""
        log.append(f"step {step}: {what}: {action} ({time.perf_counter() - t0:.1f} s){shown}")
        assert not at.exception, (
            f"{page} seq {seq} step {step}: {what}: {action} raised:\n{_exceptions(at)}\n"
            "steps:\n" + "\n".join(log))
        # guard() turns any exception other than ValueError into "an unexpected <type> occurred": a bug too
        assert "an unexpected" not in errors(at), (
            f"{page} seq {seq} step {step}: {what}: {action}: {errors(at)}\nsteps:\n" + "\n".join(log))
    return at, log


@pytest.mark.slow
@pytest.mark.parametrize("seq", range(SEQUENCES))
@pytest.mark.parametrize("page", PAGES, ids=[Path(p).stem for p in PAGES])
def test_random_interaction_never_raises_and_the_app_stays_usable(page, seq):
    at, log = fuzz(page, seq)
    # still usable: the frame and the first pages render without any error box
    for other in ("pages/home.py", "pages/data.py"):
        at.switch_page(other).run()
        assert not at.exception, f"{other} after fuzzing {page} (seq {seq}):\n{_exceptions(at)}\n" + "\n".join(log)
    at.switch_page("pages/home.py").run()
    assert not at.exception and not at.main.error, (errors(at), log)   # the sidebar may say "budget exceeded"


@pytest.mark.slow
@pytest.mark.parametrize("seq", range(TOURS))
def test_a_random_tour_across_all_pages_never_raises(seq):
    """Widgets on one page, then another page: state made anywhere (a dataset, ℓ, ε, releases) meets every page."""
    at, log = fuzz("pages/data.py", seq, steps=TOUR_STEPS, tour=0.25)
    at.switch_page("pages/home.py").run()
    assert not at.exception, _exceptions(at) + "\n" + "\n".join(log)


@pytest.mark.slow
def test_a_release_still_works_after_fuzzing_the_release_page():
    at, log = fuzz("pages/release.py", 7, steps=STEPS)
    # back to sane settings: the default dataset, the default mechanism, a small M, a fresh budget
    at.session_state[S.MECHANISM] = "alg1-q"           # the default data publishes no rows: random points from q
    at.session_state["rel.n_points"] = 50
    at.session_state[S.EPS_TYPED] = False
    at.session_state[S.EPS] = 1.0
    at.session_state["rel.allow_over_budget"] = True
    at.run()
    assert not at.exception, _exceptions(at)
    before = len(at.session_state[S.RELEASES])
    at.button(key="rel.go").click().run()
    assert not at.exception, _exceptions(at)
    assert len(at.session_state[S.RELEASES]) == before + 1, (errors(at), log)
    assert float(metric(at, "RKHS distance of this release")) > 0
