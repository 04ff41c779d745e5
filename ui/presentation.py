r"""Presentation mode (issue 16): large type, owner-only views hidden, a stepper Data → Privacy → Release → Use.

A lecturer projects the app: the audience must not see the owner's diagnostics (anything computed from the private
rows for the data owner's eyes, e.g. the private embedding next to the released one, or the exact statistics of the
private rows) nor the formulas that only the owner's deeper reading needs. The mode is

* a sidebar toggle (:func:`setup`, called once per run by ``app.py``), kept in the session state under
  :data:`PRESENT`; the query parameter ``?present=1`` (``?present=0``) turns it on (off) when the URL is opened, so a
  lecturer can bookmark it;
* larger type: :data:`CSS`, injected by :func:`setup` (the one shared page setup), never by a page;
* one gate, :func:`show_owner_details`, that every owner-only view and formula block asks; :func:`hidden_note` says
  in its place what was hidden;
* :func:`stepper`, a step indicator with *Back* / *Next* buttons (``st.switch_page``) at the top of the four pages
  of the journey. The session's dataset, ledger and settings live in the session state, so they survive the steps.

Presentation mode only **hides**: every release still passes the same budget check and is charged to the same
ledger, nothing is skipped, and no setting becomes less private (:data:`HELP` says so on the toggle).
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Generic, TypeVar

import streamlit as st

from . import state as S
from .widgets import PAGE_DATA, PAGE_KERNEL, PAGE_RELEASE, PAGE_USE

__all__ = ["CSS", "HELP", "PRESENT", "OwnerOnly", "QUERY_PARAM", "STEPS", "hidden_note", "is_on", "owner_rows", "setup", "show_owner_details",
           "stepper"]

#: Session key of the toggle (a bool).
PRESENT = S.PRESENT
#: The URL's query parameter: ``?present=1`` turns presentation mode on, ``?present=0`` off.
QUERY_PARAM = "present"
#: Session key: the value of the query parameter already applied (so that a later flip of the toggle wins).
_QP_SEEN = "_present_qp_seen"
#: Widget keys of the stepper (its container and its two buttons).
STEPPER = "present_stepper"
BACK = "present.back"
NEXT = "present.next"

#: The journey's steps: (id, name in the indicator, page file). "Privacy" is the Kernel & privacy page, where ε, δ
#: and the kernel are chosen.
STEPS = (("data", "Data", PAGE_DATA), ("privacy", "Privacy", PAGE_KERNEL), ("release", "Release", PAGE_RELEASE),
         ("use", "Use", PAGE_USE))

HELP = ("For a projector: larger type, a stepper Data → Privacy → Release → Use at the top of those pages, and the "
        "owner-only views (anything computed from the private rows for your eyes) and formulas hidden. It only "
        "hides: every release still passes the same budget check and is charged to the same ledger, nothing is "
        "skipped and nothing becomes less private. Bookmark it with ?present=1 at the end of the app's address.")

#: Larger type for the main area and the sidebar (Streamlit 1.67's test ids); ``data-present`` marks the mode.
CSS = """<style data-present="on">
[data-testid="stMain"] [data-testid="stMarkdownContainer"] p,
[data-testid="stMain"] [data-testid="stMarkdownContainer"] li { font-size: 1.35rem; line-height: 1.5; }
[data-testid="stMain"] [data-testid="stCaptionContainer"],
[data-testid="stMain"] [data-testid="stCaptionContainer"] p { font-size: 1.15rem; }
[data-testid="stMain"] [data-testid="stWidgetLabel"] p { font-size: 1.2rem; }
[data-testid="stMain"] h1 { font-size: 3.2rem; }
[data-testid="stMain"] h2 { font-size: 2.4rem; }
[data-testid="stMain"] h3 { font-size: 1.9rem; }
[data-testid="stMain"] [data-testid="stMetricValue"] { font-size: 2.6rem; }
[data-testid="stMain"] [data-testid="stMetricLabel"] p { font-size: 1.15rem; }
[data-testid="stMain"] button [data-testid="stMarkdownContainer"] p { font-size: 1.05rem; }
[data-testid="stSidebar"] [data-testid="stMarkdownContainer"] p { font-size: 1.1rem; }
</style>"""

_TRUE = {"1", "true", "yes", "on"}


def is_on() -> bool:
    """Whether presentation mode is on in this session.

    Returns
    -------
    bool
        The sidebar toggle's value (False before :func:`setup` first ran).
    """
    return bool(st.session_state.get(PRESENT, False))


def show_owner_details() -> bool:
    r"""The one gate of owner-only views and formulas: True unless presentation mode is on.

    Owner-only means computed from the private rows for the data owner (e.g. the private embedding
    :math:`\hat\mu_X` next to the released :math:`\tilde\mu`, exact statistics of the private rows); formulas are
    the LaTeX derivations of Δ and σ. Hiding them changes nothing that is released or charged.

    Returns
    -------
    bool
        ``not is_on()``.
    """
    return not is_on()


def _toggled() -> None:
    """Toggle callback: keep the address in step (``?present=1`` while on), so a reload keeps the mode."""
    on = bool(st.session_state.get(PRESENT))
    if on:
        st.query_params[QUERY_PARAM] = "1"
    elif QUERY_PARAM in st.query_params:
        del st.query_params[QUERY_PARAM]
    st.session_state[_QP_SEEN] = "1" if on else None


def setup() -> None:
    """The shared page setup of the mode (``app.py``, every run): query parameter, sidebar toggle, CSS.

    A ``?present=…`` in the address is applied once per value (a later flip of the toggle wins); the CSS of the
    larger type is injected here only, so every page gets it the same way.
    """
    ss = st.session_state
    raw = st.query_params.get(QUERY_PARAM)
    if raw is not None and raw != ss.get(_QP_SEEN):
        ss[_QP_SEEN] = raw
        ss[PRESENT] = str(raw).strip().lower() in _TRUE
    ss.setdefault(PRESENT, False)
    st.sidebar.toggle("Presentation mode", key=PRESENT, on_change=_toggled, help=HELP, persist_state="session")
    if is_on():
        st.html(CSS)
        st.sidebar.caption(":material/co_present: Presentation mode: large type, owner-only views and formulas "
                           "hidden. It hides only: releases are checked and charged to the ledger as always.")


def hidden_note(what: str) -> None:
    """A one-line note where an owner-only view was left out in presentation mode.

    Parameters
    ----------
    what : str
        What was hidden, e.g. ``"The preview of the private rows"``.
    """
    st.caption(f":material/visibility_off: {what} — hidden in presentation mode (owner only). Turn presentation "
               "mode off in the sidebar to see it.")


def _index(current: str) -> int:
    ids = [s[0] for s in STEPS]
    if current not in ids:
        raise ValueError(f"unknown step {current!r}; choose one of {ids}.")
    return ids.index(current)


def stepper(current: str) -> None:
    """The step indicator and *Back* / *Next* buttons of the journey, in presentation mode only.

    The buttons switch pages with ``st.switch_page`` (the address keeps ``?present=1``): the session's dataset,
    ledger, releases and settings are kept (they live in the session state), exactly as with the sidebar's links.

    Parameters
    ----------
    current : str
        This page's step: ``"data"``, ``"privacy"``, ``"release"`` or ``"use"`` (:data:`STEPS`).
    """
    i = _index(current)
    if not is_on():
        return
    words = []
    for j, (_, name, _page) in enumerate(STEPS):
        label = f"{j + 1}. {name}"
        words.append(f"**:blue[{label}]**" if j == i else (f"{label} ✓" if j < i else label))
    with st.container(key=STEPPER):
        c0, c1, c2 = st.columns([2, 5, 2], vertical_alignment="center")
        back = c0.button(f"Back: {STEPS[i - 1][1]}" if i > 0 else "Back", key=BACK, disabled=i == 0,
                         icon=":material/arrow_back:", width="stretch")
        c1.markdown(f"Step {i + 1} of {len(STEPS)} · " + " → ".join(words))
        nxt = c2.button(f"Next: {STEPS[i + 1][1]}" if i + 1 < len(STEPS) else "Next", key=NEXT,
                        disabled=i + 1 == len(STEPS), icon=":material/arrow_forward:", type="primary",
                        width="stretch")
    keep = {QUERY_PARAM: "1"}          # the address stays bookmarkable in presentation mode
    if back and i > 0:
        st.switch_page(STEPS[i - 1][2], query_params=keep)
    if nxt and i + 1 < len(STEPS):
        st.switch_page(STEPS[i + 1][2], query_params=keep)


def owner_rows(X):
    """The private rows for a figure that draws them faintly behind a release, or none in presentation mode.

    Parameters
    ----------
    X : numpy.ndarray
        The private rows, shape ``(N, D)``.

    Returns
    -------
    numpy.ndarray
        ``X`` when :func:`show_owner_details`, else its first 0 rows (same columns): the figure keeps its axes and
        draws the released points only.
    """
    return X if show_owner_details() else X[:0]


T = TypeVar("T")


@dataclass(frozen=True)
class OwnerOnly(Generic[T]):
    """A value computed from the private rows for the data owner's eyes only: a type, not a convention.

    Whatever a page computes from private (or held-out) rows for the owner -- an evaluation against them, a picture
    of them, an exact statistic -- is wrapped in an ``OwnerOnly`` and drawn only through :meth:`render`, which in
    presentation mode draws :func:`hidden_note` instead. ``tests/app/test_gate_attacks.py`` walks every page in
    presentation mode and checks that no wrapped value reaches the screen.

    Parameters
    ----------
    value : object
        The owner's value.
    what : str
        What it is, for the note shown in its place (e.g. ``"The MMD evaluation against the private rows"``).
    """

    value: T
    what: str

    def render(self, draw: Callable[[T], object]) -> bool:
        """Draw the value with ``draw(value)`` unless presentation mode is on (then a note); True if drawn."""
        if show_owner_details():
            draw(self.value)
            return True
        hidden_note(self.what)
        return False

    def shown(self) -> T | None:
        """The value when owner details are shown, else None."""
        return self.value if show_owner_details() else None
