"""The session's state survives a reload of the page (issue 26: "a reload wipes every release and the ledger").

A reload (F5) starts a new Streamlit session with an empty ``st.session_state``. For privacy that is the serious
part: the ledger of the same people would start from zero, so the budget check would no longer hold. This module
keeps every session's state in **server memory** (never on disk, never logged) under a random, unguessable token
(:func:`secrets.token_urlsafe`, 192 bits) that the page carries in its address (``?sid=…``). ``app.py`` calls
:func:`begin` first on every run: a new session whose address holds a known token gets the stored objects back
before the page runs; every run then points the store at the live objects again (:func:`save`; references, not
copies: the ledgers dict, the releases list and the dataset are the very objects the session uses, so a charge
added in place is in the store at once).

What is kept: every ``st.session_state`` key -- the ledgers (archives included), the releases and other results,
the dataset in use (an uploaded table's parsed rows, in memory only), the settings and the widget values -- except

* the over-budget permissions (``gate.allow_over.*``): a permission is for one run (:mod:`ui.gate`), a reload
  drops an unused one;
* widgets whose value cannot be set (buttons, download buttons, file uploaders, data editors): a file uploader is
  empty after a reload, while the table it gave is kept (``ss[S.UPLOAD]``).

A new session of a browser that has another one kept (a new tab, or the app opened without the address that
carries the token) starts empty and offers, in the sidebar, to resume the browser's last session while nothing was
done in the new one (:func:`notice`): its state then replaces the new session's.

Bounds: at most :data:`MAX_SESSIONS` sessions (the least recently used goes first) and :data:`IDLE_SECONDS`
without a run. A server restart loses everything (export the ledger to keep it beyond that).

Security: the token is a secret; the pages say that the address carries the session and must not be shared. It is
also bound to the browser that got it: to its User-Agent and to the token of Streamlit's XSRF cookie (one per
browser's cookie jar, sent with every connection), so the address pasted into another browser or device, or typed
off a projected screen, starts a new session instead. An unknown token in an address is never adopted (a new one
is made), so a link planted by someone else cannot make a victim's session readable to them.
"""

from __future__ import annotations

import contextlib
import hashlib
import os
import re
import secrets
import threading
import time
from collections import OrderedDict
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

#: Query parameter that carries the token.
QUERY_PARAM = "sid"
#: Session keys of this module (never stored: they belong to the live session).
TOKEN = "_persist_token"
NOTE = "_persist_note"          # "restored" | "unknown" (shown once by :func:`notice`), popped when shown
RESUME = "_persist_resume"      # token of this browser's last session, offered in a new session (:func:`notice`)
FORGET = "persist.forget"              # the buttons of :func:`controls` and :func:`notice`
RESUME_BUTTON = "persist.resume"
#: Most sessions kept (least recently used dropped first) and the idle time after which a session is forgotten.
#: ``DPKME_SESSIONS_KEPT`` and ``DPKME_SESSION_IDLE_HOURS`` in the server's environment change them.
MAX_SESSIONS = int(os.environ.get("DPKME_SESSIONS_KEPT", "32"))
IDLE_SECONDS = float(os.environ.get("DPKME_SESSION_IDLE_HOURS", "12")) * 3600
#: Keys never stored: per-run permissions, this module's own keys, the frame's per-session marker.
_SKIP_PREFIXES = ("gate.allow_over.",)
_SKIP_KEYS = {TOKEN, NOTE, RESUME, "_frame_seen"}
#: Widget value types that ``st.session_state`` may set (a button's trigger, an uploader's files may not be).
_WRITABLE = {"bool_value", "int_value", "double_value", "string_value", "string_array_value", "double_array_value",
             "int_array_value", "json_value"}
_TOKEN_RE = re.compile(r"^[A-Za-z0-9_-]{32,64}$")


@dataclass
class _Entry:
    state: dict
    binding: str | None
    touched: float


class SessionStore:
    """Sessions' state in memory, keyed by token: bounded (LRU), with an idle expiry, thread-safe.

    Parameters
    ----------
    max_sessions : int
        Most sessions kept; storing one more drops the least recently used.
    idle_seconds : float
        A session not stored or read for this long is forgotten.
    clock : callable
        Seconds, monotonic (tests pass a fake one).
    """

    def __init__(self, max_sessions: int = MAX_SESSIONS, idle_seconds: float = IDLE_SECONDS,
                 clock: Callable[[], float] = time.monotonic):
        self.max_sessions = int(max_sessions)
        self.idle_seconds = float(idle_seconds)
        self._clock = clock
        self._lock = threading.Lock()
        self._entries: OrderedDict[str, _Entry] = OrderedDict()

    @staticmethod
    def new_token() -> str:
        """A fresh random token (192 bits, URL-safe)."""
        return secrets.token_urlsafe(24)

    @staticmethod
    def valid(token: Any) -> bool:
        """Whether ``token`` has the shape of a token (anything else in an address is ignored)."""
        return isinstance(token, str) and bool(_TOKEN_RE.match(token))

    def _prune(self, now: float) -> None:
        for tok in [t for t, e in self._entries.items() if now - e.touched > self.idle_seconds]:
            del self._entries[tok]
        while len(self._entries) > self.max_sessions:
            self._entries.popitem(last=False)

    def put(self, token: str, state: dict, binding: str | None = None) -> None:
        """Store ``state`` (a dict of references) under ``token``, most recently used."""
        with self._lock:
            now = self._clock()
            self._entries[token] = _Entry(state=state, binding=binding, touched=now)
            self._entries.move_to_end(token)
            self._prune(now)

    def get(self, token: Any, binding: str | None = None) -> dict | None:
        """The state stored under ``token``, or None if unknown, expired or bound to another browser."""
        if not self.valid(token):
            return None
        with self._lock:
            now = self._clock()
            self._prune(now)
            entry = self._entries.get(token)
            if entry is None or entry.binding != binding:
                return None
            entry.touched = now
            self._entries.move_to_end(token)
            return entry.state

    def latest(self, binding: str | None, exclude: str | None = None) -> str | None:
        """The token of the most recently used session of the browser ``binding`` (other than ``exclude``), or None
        (never for ``binding=None``: a session without a binding is no browser's)."""
        if binding is None:
            return None
        with self._lock:
            self._prune(self._clock())
            for tok in reversed(self._entries):
                if tok != exclude and self._entries[tok].binding == binding:
                    return tok
        return None

    def __contains__(self, token: object) -> bool:
        with self._lock:
            return token in self._entries

    def __len__(self) -> int:
        with self._lock:
            return len(self._entries)

    def clear(self) -> None:
        with self._lock:
            self._entries.clear()

    def drop(self, token: Any) -> None:
        """Forget one session (nothing if the token is unknown)."""
        with self._lock:
            self._entries.pop(token, None)


#: The server process's store (module level: shared by every session of this process).
STORE = SessionStore()


# ----------------------------------------------------------------------------------------- Streamlit side
def _browser_secret() -> bytes:
    """The token of Streamlit's XSRF cookie (one per browser's cookie jar, kept across reloads; re-masked on every
    response, so it is decoded), or nothing where there is none (XSRF protection off, AppTest)."""
    import streamlit as st

    try:
        raw = st.context.cookies.get("_streamlit_xsrf")
        if not raw:
            return b""
        from streamlit.web.server.starlette.starlette_app_utils import decode_xsrf_token_string

        token, _ = decode_xsrf_token_string(raw)
        return token or b""
    except Exception:  # no request context, or Streamlit's internals moved: the User-Agent only
        return b""


def _binding() -> str | None:
    """What ties a token to the browser that got it: a hash of the browser's User-Agent and of the token of its
    XSRF cookie (another browser or device has another cookie); None where there is neither (AppTest)."""
    import streamlit as st

    try:
        ua = st.context.headers.get("User-Agent") or ""
    except Exception:  # no request context (a bare script run)
        ua = ""
    secret = _browser_secret()
    if not ua and not secret:
        return None
    return hashlib.sha256(ua.encode("utf-8", "replace") + b"\0" + secret).hexdigest()[:32]


def _unwritable(keys) -> set[str]:
    """The ``keys`` of widgets whose value ``st.session_state`` may not set (buttons, uploaders, ...)."""
    from streamlit.runtime.state import get_session_state

    out: set[str] = set()
    try:
        state = get_session_state()._state
        for key in keys:
            wid = state.get_widget_id_from_key(key)
            if wid is None:
                continue                  # a plain value, not a widget's
            meta = state.get_widget_metadata(wid)
            if meta is None or meta.value_type not in _WRITABLE:
                out.add(key)
    except Exception:  # Streamlit internals moved: only the data editors' shape check below
        pass
    return out


def snapshot() -> dict:
    """The live session's state to keep: references to its objects, without the keys this module skips."""
    import streamlit as st

    ss = st.session_state
    keys = list(ss.keys())
    skip = _unwritable(keys)
    out = {}
    for key in keys:
        if key in skip or key in _SKIP_KEYS or key.startswith(_SKIP_PREFIXES):
            continue
        try:
            value = ss[key]
        except KeyError:
            continue
        if isinstance(value, dict) and {"edited_rows", "added_rows", "deleted_rows"} <= set(value):
            continue                      # a data editor's edits (not settable)
        out[key] = value
    return out


def save() -> None:
    """Point the store at this session's live objects (app.py: at the start and the end of every run)."""
    import streamlit as st

    token = st.session_state.get(TOKEN)
    if token is not None:
        STORE.put(token, snapshot(), _binding())


def begin() -> None:
    """Call first in app.py on every run: restore a reloaded session, keep the token in the address, save."""
    import streamlit as st

    ss = st.session_state
    if ss.get(TOKEN) is None:
        raw = st.query_params.get(QUERY_PARAM)
        saved = STORE.get(raw, _binding())
        if saved is not None:
            for key, value in saved.items():
                if key not in ss:
                    ss[key] = value
            ss[TOKEN] = raw
            ss[NOTE] = "restored"
        else:
            # never adopt a token that is not ours (a planted link would share the session with its author)
            ss[TOKEN] = STORE.new_token()
            if raw is not None:
                ss[NOTE] = "unknown"
            # only where the browser has its own secret (the XSRF cookie): a User-Agent alone is shared by every
            # browser of a classroom's image, and would offer one user's session (and upload) to the next
            previous = STORE.latest(_binding()) if _browser_secret() else None
            if previous is not None:
                ss[RESUME] = previous         # a new tab, or an address without its token: offered in one click
    if st.query_params.get(QUERY_PARAM) != ss[TOKEN]:
        st.query_params[QUERY_PARAM] = ss[TOKEN]
    save()


#: What the pages say about a reload (Home, Budget ledger, the sidebar's summary).
RELOAD_WORDS = ("A reload of this page keeps this session (the ledgers, releases, data and settings, held in the "
                f"server's memory for {IDLE_SECONDS / 3600:g} hours without use; never on disk); a server restart starts an empty one, and "
                "a new tab without this address starts one that offers to resume it. The page's address (`?sid=…`) "
                "carries your session: do not share it.")


def _nothing_done() -> bool:
    import streamlit as st

    from .state import LEDGERS, RELEASES  # here, as streamlit: this module imports nothing heavy at import

    ss = st.session_state
    return not ss.get(RELEASES) and not any(getattr(led, "all_charges", None)
                                              for led in (ss.get(LEDGERS) or {}).values())


def _resume(token: str) -> None:
    """Button callback: take over this browser's last session (its state replaces this new, unused one)."""
    import streamlit as st

    ss = st.session_state
    ss.pop(RESUME, None)
    saved = STORE.get(token, _binding()) if _browser_secret() else None
    if saved is None or not _nothing_done():
        return
    for key, value in saved.items():
        ss[key] = value
    ss[TOKEN] = token
    ss[NOTE] = "restored"


def _forget() -> None:
    """Button callback: drop this session from the server's memory and start an empty one under a new token (a
    shared computer: the next user cannot get it back from the history or by resuming)."""
    import streamlit as st

    ss = st.session_state
    STORE.drop(ss.get(TOKEN))
    for key in list(ss.keys()):
        with contextlib.suppress(Exception):   # a widget Streamlit does not let a callback delete: reset on the rerun
            del ss[key]
    ss[TOKEN] = STORE.new_token()
    ss[NOTE] = "forgotten"


def forget_button() -> None:
    """*Forget this session* (the Budget ledger page) (its ledgers, releases, uploads and settings), for a shared computer."""
    import streamlit as st

    st.button("Forget this session", key=FORGET, on_click=_forget, icon=":material/logout:",
              help="Removes this session's ledgers, releases, uploaded tables and settings from the server's memory "
                   "and starts an empty one: on a shared computer, the next user cannot reload or resume it. It does "
                   "not undo anything that was published: export the ledger first to keep a record of what was "
                   "spent.")


def notice() -> None:
    """Say once, after a reload, that the session came back (or could not); in a new session of a browser that has
    another one kept, offer to resume it (a new tab, or an address that lost its ``?sid=…``) while nothing was done
    here yet."""
    import streamlit as st

    previous = st.session_state.get(RESUME)
    if previous is not None:
        if previous in STORE and _nothing_done():
            st.sidebar.button("Resume this browser's last session", key=RESUME_BUTTON, on_click=_resume,
                              args=(previous,), icon=":material/restore:",
                              help="Its ledgers, releases, data and settings, kept in the server's memory (another "
                                   "tab, or this app opened without the address that carries it). This new session "
                                   "is empty: nothing was spent in it yet.")
        else:
            st.session_state.pop(RESUME, None)
    note = st.session_state.pop(NOTE, None)
    if note == "restored":
        st.toast("This session was restored after a reload: ledgers, releases, data and settings.",
                 icon=":material/restore:")
    elif note == "forgotten":
        st.toast("This session was forgotten: a new, empty one started.", icon=":material/logout:")
    elif note == "unknown":
        st.toast("The session in this address could not be restored (it expired, the server restarted or the "
                 "link came from another browser): a new session started.", icon=":material/info:")
