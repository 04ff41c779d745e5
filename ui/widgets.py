"""Small UI pieces shared by pages: error guards, the log-ε slider, δ, noise source, sidebar."""

from __future__ import annotations

import logging
import math
import zlib
from contextlib import contextmanager
from dataclasses import replace

import streamlit as st

from . import glossary as G
from . import state as S
from .compute import epsilon_grid

log = logging.getLogger("dpkme.app")

PAGE_DATA = "pages/data.py"
PAGE_KERNEL = "pages/kernel.py"
PAGE_RELEASE = "pages/release.py"
PAGE_CURVES = "pages/curves.py"
PAGE_USE = "pages/use.py"
PAGE_LEDGER = "pages/ledger.py"
PAGE_HOME = "pages/home.py"


class Outcome:
    """Result holder of :func:`guard`: ``ok`` is False after a reported error."""

    def __init__(self):
        self.ok = True
        self.message = ""


@contextmanager
def guard(action: str):
    """Show library ``ValueError``s as ``st.error`` and any other exception as a friendly error.

    Streamlit's own control-flow exceptions (reruns, stops) derive from
    ``BaseException`` and pass through. Only the exception *type* is logged,
    never its message (it may quote private data).
    """
    out = Outcome()
    try:
        yield out
    except ValueError as exc:
        out.ok = False
        out.message = str(exc)
        st.error(f"Could not {action}: {exc}", icon=":material/warning:")
    except MemoryError:
        out.ok = False
        st.error(f"Could not {action}: not enough memory. Use fewer rows, points or features.", icon=":material/warning:")
    except Exception as exc:  # a friendly message instead of a traceback
        out.ok = False
        log.warning("unexpected %s while trying to %s", type(exc).__name__, action)
        st.error(
            f"Could not {action}: an unexpected {type(exc).__name__} occurred. Try other settings or "
            "reload the page; if it persists, report the steps that led to it (never the data).",
            icon=":material/warning:",
        )


try:  # Streamlit's rerun/stop signals (BaseException subclasses raised at the next st.* call)
    from streamlit.runtime.scriptrunner_utils.exceptions import ScriptControlException as _Control
except ImportError:  # pragma: no cover - other Streamlit versions: interruptions simply propagate
    class _Control(BaseException):
        pass


class StoppableProgress:
    """A progress callback for library loops that stop when the callback returns ``False``.

    It draws ``bar`` (an ``st.progress``). When the user changes an input or presses a Stop button during
    the run, Streamlit signals the rerun from inside ``bar.progress``; the signal is kept, the callback
    returns ``False`` (the library returns its partial result, e.g. ``CurveResult(completed=False)``), the
    page stores it, and :meth:`resume` re-raises the signal so that the rerun happens. Store the partial
    result by *mutating* an object already in the session state: after a stop request Streamlit raises on
    every ``st.session_state[...] = ...``.
    """

    def __init__(self, bar, text=lambda f: f"{f:.0%}"):
        self.bar, self.text, self.interrupted = bar, text, None

    def update(self, fraction: float, message: str) -> bool:
        if self.interrupted is not None:
            return False
        try:
            self.bar.progress(min(max(float(fraction), 0.0), 1.0), text=message)
        except _Control as exc:
            self.interrupted = exc
            return False
        return True

    def resume(self) -> None:
        if self.interrupted is not None:
            exc, self.interrupted = self.interrupted, None
            raise exc


PAGE_TWOSAMPLE = "pages/twosample.py"
PAGE_CLUSTERING = "pages/clustering.py"


def fmt_eps(v: float) -> str:
    return f"{v:g}"


def nearest_epsilon_step(eps: float) -> float:
    """The step of the ε slider nearest to ``eps`` on the log scale (the slider's own scale)."""
    return min(epsilon_grid(), key=lambda g: abs(math.log(g) - math.log(max(float(eps), 1e-9))))


#: The toggle's position when it was last drawn: the callback acts on a real switch only.
_EPS_TYPED_SEEN = "cfg._eps_typed_seen"
#: Widget key of a size guard's confirmation (its key and a checksum of the sizes it confirms).
CONFIRM = "{key}.confirm.{crc:08x}"


def _eps_typed_toggled() -> None:
    """Toggle callback: one ε everywhere (issue 16 walk, finding 5).

    Switching to an exact ε starts the box at the slider's value (it kept its own, older value, and the next
    release used that). Switching back puts the slider on the step nearest (log scale) to the typed ε, so the
    ε in use moves as little as the slider's steps allow instead of jumping back to an older slider position.
    """
    ss = st.session_state
    typed_on = bool(ss.get(S.EPS_TYPED))
    if _EPS_TYPED_SEEN in ss and ss[_EPS_TYPED_SEEN] == typed_on:
        return                       # not a switch (a page change re-registering the toggle): keep both values
    ss[_EPS_TYPED_SEEN] = typed_on
    if typed_on:
        ss[S.EPS_VALUE] = float(ss.get(S.EPS, S.DEFAULT_EPSILON))
        return
    typed = ss.get(S.EPS_VALUE)
    try:
        typed = float(typed)
    except (TypeError, ValueError):
        return
    if typed > 0 and math.isfinite(typed):
        ss[S.EPS] = nearest_epsilon_step(typed)


def epsilon_control(*, key_suffix: str = "") -> float | None:
    """The log-scale ε slider (0.01-10) plus an optional exact value; returns ε or None if invalid.

    The slider and the exact box hold one ε: switching to the box starts it at the slider's value, switching
    back puts the slider on the step nearest to the typed value (:func:`_eps_typed_toggled`).
    """
    grid = epsilon_grid()
    if st.session_state.get(S.EPS) not in grid:
        st.session_state[S.EPS] = nearest_epsilon_step(S.DEFAULT_EPSILON)
    if st.session_state.get(S.EPS_TYPED):
        # issue 16 walk: a disabled slider showed its own, stale position while the typed ε was in use; a caption
        # shows the ε in use instead (the slider keeps its state and comes back when the box is switched off)
        typed = st.session_state.get(S.EPS_VALUE)
        shown = f"{float(typed):g}" if isinstance(typed, (int, float)) else "—"
        st.markdown(f"Privacy parameter ε: **{shown}** (typed exactly below; the log-scale slider is off while the "
                    "exact box is on)", help=G.help_text("ε"))
    else:
        st.select_slider(
            "Privacy parameter ε (log scale)",
            options=grid,
            format_func=fmt_eps,
            key=S.EPS,
            persist_state="session",
            help=G.help_text("ε") + " Each step multiplies ε by about 1.5.",
        )
    st.toggle("Type an exact ε instead", key=S.EPS_TYPED, persist_state="session", on_change=_eps_typed_toggled,
              help="The box starts at the slider's ε; switching back puts the slider on the step nearest to the "
                   "typed ε. Either way one ε is used on every page.")
    st.session_state[_EPS_TYPED_SEEN] = bool(st.session_state.get(S.EPS_TYPED))
    if st.session_state.get(S.EPS_TYPED):
        # no min_value: a minimum of 0 clamped a typed -1 to 0 and the message below said "(got 0)" (issue 26); the
        # typed number reaches the check below, which names it
        st.number_input(
            "Exact ε", max_value=1000.0, step=0.01, format="%.4g", key=S.EPS_VALUE,
            persist_state="session",
        )
    eps = S.epsilon()
    if not (eps > 0 and math.isfinite(eps)):
        st.error(
            f"ε must be a positive number (got {eps:g}). ε = 0 would mean *perfect* privacy, which only a "
            "release that ignores the data can give; choose for example ε = 1.",
            icon=":material/warning:",
        )
        return None
    if eps > 10:
        st.warning(f"ε = {eps:g} is a very weak guarantee (e^ε ≈ {math.exp(min(eps, 700)):.3g}).")
    return eps


#: δ from more privacy (left) to less (right), the same way as the ε slider (issue 16, finding 6).
DELTA_CHOICES = [1e-10, 1e-9, 1e-8, 1e-7, 1e-6, 1e-5, 1e-4, 1e-3]


def delta_control(n: int | None) -> float:
    """The δ slider (small δ, more privacy, on the left like ε), with δ in plain words under it."""
    st.select_slider(
        "Failure probability δ",
        options=DELTA_CHOICES,
        format_func=S.fmt_delta,
        key=S.DELTA,
        persist_state="session",
        help=G.help_text("δ"),
    )
    st.caption(f"**δ in plain words.** {G.plain('δ')}")
    st.caption(G.SLIDER_DIRECTION)
    d = S.delta()
    if n and d >= 1.0 / n:
        st.warning(
            f"δ = {S.fmt_delta(d)} is not much smaller than 1/N = {S.fmt_delta(1 / n)}: a mechanism that publishes one "
            "random row in full would satisfy it. Choose δ ≪ 1/N."
        )
    return d


#: Runs that can be stopped (a Stop button keeps the partial result) ask for confirmation only above this.
STOPPABLE_CONFIRM_SECONDS = 60.0


def size_guard(estimate, *, key: str, what: str = "this computation", stoppable: bool = False,
               hidden: bool | None = None) -> bool:
    """Show the predicted cost of a computation; above the thresholds ask for confirmation first.

    ``estimate`` is a :class:`dpkme.cost.CostEstimate` (or None: nothing to show). Below
    :data:`dpkme.cost.CONFIRM_SECONDS` / :data:`~dpkme.cost.CONFIRM_BYTES` the estimate is a caption and
    the function returns True. Above them it shows a warning and a "run anyway" checkbox whose key depends on
    the predicted sizes, so changing a size asks again; it returns whether that box is ticked. Callers disable
    their run button when it returns False: nothing long starts without the user's consent. ``stoppable``
    runs (with a Stop button that keeps the partial result) ask only above :data:`STOPPABLE_CONFIRM_SECONDS`.
    ``hidden`` (where the row count is private and presentation mode hides counts, :func:`ui.state.counts_hidden`)
    shows no number: a predicted time or memory follows from the exact row count, so an audience could read N off
    it. The confirmation is still asked for, in words only. By default (None) it follows the current dataset.
    """
    if estimate is None:
        return True
    if hidden is None:
        current = S.dataset()
        hidden = current is not None and S.counts_hidden(current)
    if stoppable:
        estimate = replace(estimate, confirm_seconds=max(estimate.confirm_seconds, STOPPABLE_CONFIRM_SECONDS))
    if not estimate.needs_confirmation:
        st.caption(HIDDEN_COST if hidden else f"Predicted: {_cost_text(estimate)}.")
        return True
    cost = "a long time" if hidden else _cost_text(estimate)
    st.warning(f"**Large computation.** {what[:1].upper() + what[1:]} would take {cost}: more "
               "than this app runs without asking. Make it smaller (fewer points, features, runs or rows), or "
               "confirm below. The app stays blocked while it runs.", icon=":material/hourglass_top:")
    sizes = "-".join(f"{k}={v}" for k, v in sorted(estimate.params.items()) if isinstance(v, (int, float, str)))
    label = "Run it anyway" if hidden else f"Run it anyway (about {_seconds_text(estimate.seconds)})"
    return bool(st.checkbox(label, key=CONFIRM.format(key=key, crc=zlib.crc32(sizes.encode()))))


#: What :func:`size_guard` says instead of a prediction where the row count is hidden.
HIDDEN_COST = ("Predicted time and memory hidden in presentation mode: they follow from the private row count "
               "(turn presentation mode off to see them).")


def _seconds_text(t: float) -> str:
    return f"{t:.1f} s" if t < 120 else f"{t / 60:.1f} min" if t < 7200 else f"{t / 3600:.1f} h"


def _cost_text(estimate) -> str:
    mem = estimate.nbytes
    mem_txt = f"{mem / 2**20:.0f} MiB" if mem < 2**30 else f"{mem / 2**30:.1f} GiB"
    return f"about {_seconds_text(estimate.seconds)} and {mem_txt} of memory (estimate, within a factor of ~3)"


def require_dataset() -> S.Dataset:
    """The current dataset, or an explanation with a link to the Data page (and stop)."""
    ds = S.dataset()
    if ds is None:
        st.info("No dataset yet: choose one on the Data page first.")
        st.page_link(PAGE_DATA, label="Go to Data", icon=":material/table_view:")
        st.stop()
    return ds


def sidebar_summary() -> None:
    """Current dataset, privacy spent and the glossary (shown on every page by app.py).

    The budget lines are :func:`ui.state.budget_headline` and :func:`ui.state.ledger_counts`: the Budget ledger
    page shows the same sentences (one headline from one composition, counts that add up).
    """
    ds = S.dataset()
    with st.sidebar:
        st.markdown("**Current data**")
        if ds is None:
            st.caption("none loaded")
        else:
            _sidebar_budget(ds)
        G.glossary_expander()


def _sidebar_budget(ds: S.Dataset) -> None:
    exact = not S.counts_hidden(ds)
    st.caption(ds.describe(exact_counts=exact))
    st.caption("Guarantee: " + ds.guarantee(exact_counts=exact) + ".")
    led = S.ledger_for(ds)
    eps_b, _ = S.budget()
    st.markdown("**Privacy spent on this data**")
    head = S.budget_headline(led)
    if head["over"]:
        st.error("Budget exceeded — " + head["text"])
    else:
        st.caption(head["text"])
    best = head["epsilon"]
    st.progress(min(best / eps_b, 1.0) if eps_b > 0 and math.isfinite(best) else 1.0)
    if head["explain"]:
        st.caption(head["explain"])
    if led.all_charges:
        st.caption(S.ledger_counts(led))
    if S.nonprivate_count(ds):
        st.warning(f"{S.nonprivate_count(ds)} NOT private release(s) of this data (replayable demos or "
                   "data-dependent settings)")
    if led.all_charges:
        st.caption("A reload keeps this session's ledger (in the server's memory; the address carries the "
                   "session: do not share it). A server restart loses it: export it on the Budget ledger page to "
                   "keep it.")
