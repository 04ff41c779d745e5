"""The app's frame (``app.py``) around every page, also when a page is opened by its URL.

The design keeps the pages in a ``pages/`` directory and routes them with ``st.navigation``. Streamlit
(1.67) then treats the directory as a legacy page registry until the first ``st.navigation`` call of the
server process (``PagesManager.uses_pages_directory``, which ``st.navigation`` itself switches off), so a
first visit to a deep link such as ``/audit`` right after the server starts runs ``pages/audit.py``
*without* ``app.py`` -- no page configuration, no default dataset, a file-name menu. (AppTest resets that
flag before every run, so there every run of a page starts like this.)

Every page therefore calls :func:`require_frame` first. Outside the frame it does what ``st.navigation``
would have done -- switch the legacy registry off -- and reruns: the rerun executes ``app.py``, whose
``st.navigation`` resolves the same page (every ``url_path`` equals its file's name) and runs it inside the
frame, with the widget values of the interrupted run (a rerun keeps them). This happens at most once per
browser session: once ``app.py`` has run in a session (:data:`SEEN`), its state and the process-wide switch are
in place. (AppTest runs a page without ``app.py`` after its first run; the state is there, so it stays that way.)
"""

from __future__ import annotations

import threading
from contextlib import contextmanager

import streamlit as st

_RUN = threading.local()          # Streamlit runs a session's script (app.py and its page) in one thread
SEEN = "_frame_seen"              # session key: app.py has run in this session


@contextmanager
def running_frame():
    """Mark this script run as going through ``app.py`` (used by app.py around ``page.run()``)."""
    _RUN.active = True
    st.session_state[SEEN] = True
    try:
        yield
    finally:
        _RUN.active = False


def require_frame(page_file: str) -> None:
    """Call first in every page: outside ``app.py``'s frame, rerun through it (module docstring)."""
    if getattr(_RUN, "active", False) or st.session_state.get(SEEN):
        return
    from streamlit.runtime.pages_manager import PagesManager

    PagesManager.uses_pages_directory = False      # exactly what st.navigation does on its first call
    st.rerun()
