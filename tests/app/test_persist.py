"""A reload keeps the session (issue 26): the in-memory store of ui/persist.py and its use by app.py (AppTest).

A reload is a new Streamlit session whose address carries the old session's token (``?sid=…``); in AppTest that
is a new ``AppTest`` whose ``query_params`` hold it.
"""

from tests.support.app import new_app, ok
from ui import gate as G
from ui import persist
from ui import state as S
from ui.persist import SessionStore


class _Clock:
    def __init__(self):
        self.now = 1000.0

    def __call__(self):
        return self.now


# ------------------------------------------------------------------------------------------------ the store
def test_store_returns_the_same_objects_under_a_token():
    store = SessionStore()
    tok = store.new_token()
    ledgers = {"a": object()}
    store.put(tok, {"ledgers": ledgers})
    assert store.get(tok)["ledgers"] is ledgers             # references, not copies
    assert store.get(store.new_token()) is None


def test_tokens_are_random_and_only_token_shaped_strings_are_looked_up():
    store = SessionStore()
    toks = {store.new_token() for _ in range(100)}
    assert len(toks) == 100 and all(store.valid(t) and len(t) >= 32 for t in toks)
    for bad in (None, "", "short", "x" * 200, "a/b" * 20, 123, "../../etc/passwd" + "a" * 30):
        assert not store.valid(bad) and store.get(bad) is None


def test_store_forgets_a_session_idle_longer_than_the_expiry():
    clock = _Clock()
    store = SessionStore(idle_seconds=60, clock=clock)
    old, used = store.new_token(), store.new_token()
    store.put(old, {"k": 1})
    store.put(used, {"k": 2})
    clock.now += 50
    assert store.get(used) == {"k": 2}                      # a read counts as use
    clock.now += 20
    assert store.get(old) is None and old not in store      # 70 s idle
    assert store.get(used) == {"k": 2}                      # 20 s idle


def test_store_keeps_at_most_max_sessions_least_recently_used_first_out():
    store = SessionStore(max_sessions=3)
    toks = [store.new_token() for _ in range(4)]
    for t in toks[:3]:
        store.put(t, {"t": t})
    store.get(toks[0])                                      # used again: toks[1] is now the oldest
    store.put(toks[3], {"t": toks[3]})
    assert len(store) == 3
    assert toks[1] not in store and all(t in store for t in (toks[0], toks[2], toks[3]))


def test_store_binding_a_token_to_another_browser_gives_nothing():
    store = SessionStore()
    tok = store.new_token()
    store.put(tok, {"k": 1}, binding="firefox")
    assert store.get(tok, "chromium") is None
    assert store.get(tok, "firefox") == {"k": 1}


# ------------------------------------------------------------------------------------------------ the app
def _through_app(at):
    """Run app.py once more. The browser runs app.py (and so :func:`ui.persist.save`) on every run; AppTest runs a
    page alone after its first run (ui/frame.py), so a test passes through app.py before it reloads."""
    at.switch_page("app.py").run()
    ok(at)
    return at


def _session_with_one_release():
    at = new_app().run()
    ok(at)
    at.switch_page("pages/release.py").run()
    at.button(key="rel.go").click().run()
    ok(at)
    return _through_app(at)


def _reload(at):
    """A new session whose address holds ``at``'s (a browser reload)."""
    fresh = new_app()
    fresh.query_params[persist.QUERY_PARAM] = at.query_params[persist.QUERY_PARAM]
    return fresh.run()


def test_a_reload_keeps_the_ledger_and_the_releases_and_charges_on_top():
    at = _session_with_one_release()
    token = at.session_state[persist.TOKEN]
    assert at.query_params[persist.QUERY_PARAM] == token and SessionStore.valid(token)
    ds = at.session_state[S.DATASET]
    led = at.session_state[S.LEDGERS][ds.data_key]
    assert len(led.all_charges) == 1

    fresh = _reload(at)
    ok(fresh)
    assert fresh.session_state[persist.TOKEN] == token
    assert any("restored" in t.value for t in fresh.toast)
    assert fresh.session_state[S.LEDGERS][ds.data_key] is led           # the very ledger, its archive included
    assert [r.id for r in fresh.session_state[S.RELEASES]] == [r.id for r in at.session_state[S.RELEASES]]
    assert fresh.session_state[S.DATASET] is ds
    fresh.switch_page("pages/release.py").run()
    fresh.button(key="rel.go").click().run()
    ok(fresh)
    assert len(led.all_charges) == 2                                     # the second release is charged on top
    assert [r.id for r in fresh.session_state[S.RELEASES]] == [1, 2]     # numbering goes on


def test_a_reload_keeps_settings_but_not_an_over_budget_permission():
    at = new_app().run()
    at.switch_page("pages/release.py").run()
    key = G.allow_over_key("release")
    at.checkbox(key=key).check().run()
    ok(at)
    assert at.session_state[key] is True
    at.session_state[S.BUDGET_EPS] = 2.5
    at.switch_page("pages/kernel.py").run()
    at.select_slider(key=S.EPS).set_value(3.0).run()                     # a widget's value
    _through_app(at)
    fresh = _reload(at)
    ok(fresh)
    assert fresh.session_state[S.BUDGET_EPS] == 2.5
    fresh.switch_page("pages/kernel.py").run()
    ok(fresh)
    assert fresh.select_slider(key=S.EPS).value == 3.0
    assert key not in fresh.session_state                                # a permission is for one run
    fresh.switch_page("pages/release.py").run()
    ok(fresh)
    assert fresh.checkbox(key=G.allow_over_key("release")).value is False


def test_an_unknown_token_is_never_adopted():
    at = new_app()
    planted = SessionStore.new_token()
    at.query_params[persist.QUERY_PARAM] = planted
    at.run()
    ok(at)
    assert at.session_state[persist.TOKEN] != planted
    assert at.query_params[persist.QUERY_PARAM] == at.session_state[persist.TOKEN]
    assert any("could not be restored" in t.value for t in at.toast)
    assert planted not in persist.STORE


def test_a_new_session_without_the_address_starts_empty():
    at = _session_with_one_release()
    other = new_app().run()                                              # another tab, no token in its address
    ok(other)
    assert other.session_state[persist.TOKEN] != at.session_state[persist.TOKEN]
    assert other.session_state[S.RELEASES] == []


def test_home_and_ledger_pages_say_what_a_reload_keeps():
    at = new_app().run()
    assert any("reload" in c.value and "do not share" in c.value for c in at.caption)
    at.switch_page("pages/ledger.py").run()
    ok(at)
    assert any(persist.RELOAD_WORDS in m.value and "server restart" in m.value for m in at.markdown)


def test_an_uploaded_table_stays_in_memory_across_a_reload():
    """The parsed upload and the dataset built from it come back (server memory only); the uploader is empty."""
    csv = b"height,weight\n" + b"".join(f"{150 + (i * 7) % 40},{50 + (i * 13) % 30}\n".encode() for i in range(200))
    at = new_app().run()
    at.switch_page("pages/data.py").run()
    at.radio(key="data.source").set_value("upload").run()
    at.file_uploader(key="data.upload").set_value(("people.csv", csv, "text/csv")).run()
    at.button(key="data.use").click().run()
    ok(at)
    ds = at.session_state[S.DATASET]
    assert ds.source == "upload"
    _through_app(at)
    fresh = _reload(at)
    ok(fresh)
    assert fresh.session_state[S.DATASET] is ds
    fresh.switch_page("pages/data.py").run()
    ok(fresh)
    assert any("kept in this session's memory" in s.value for s in fresh.success)
    assert fresh.session_state[S.DATASET] is ds


def test_store_finds_a_browsers_latest_session():
    store = SessionStore()
    a, b, c = (store.new_token() for _ in range(3))
    store.put(a, {}, binding="mine")
    store.put(b, {}, binding="theirs")
    store.put(c, {}, binding="mine")
    assert store.latest("mine") == c
    assert store.latest("mine", exclude=c) == a
    assert store.latest("theirs") == b
    assert store.latest(None) is None and store.latest("nobody") is None


def test_a_new_session_of_the_same_browser_offers_to_resume_the_last_one(monkeypatch):
    """A new tab (no token in its address) of a browser with a kept session: one click takes it over."""
    monkeypatch.setattr(persist, "_binding", lambda: "this-browser")
    monkeypatch.setattr(persist, "_browser_secret", lambda: b"this-browser's xsrf cookie")
    at = _session_with_one_release()
    ds = at.session_state[S.DATASET]
    led = at.session_state[S.LEDGERS][ds.data_key]
    tab = new_app().run()                                   # a new tab: no ?sid=
    ok(tab)
    assert tab.session_state[S.RELEASES] == []
    tab.button(key="persist.resume").click().run()
    ok(tab)
    assert tab.session_state[S.LEDGERS][ds.data_key] is led
    assert tab.session_state[persist.TOKEN] == at.session_state[persist.TOKEN]
    _through_app(tab)                                                    # (the browser runs app.py on every run)
    assert tab.query_params[persist.QUERY_PARAM] == at.session_state[persist.TOKEN]
    assert "persist.resume" not in [b.key for b in tab.button]             # offered once


def test_no_resume_offer_without_the_browsers_own_cookie(monkeypatch):
    """A User-Agent alone (XSRF protection off: no cookie) is shared by every browser of a classroom's image: the
    next user must not be offered the last user's session (and its upload)."""
    monkeypatch.setattr(persist, "_binding", lambda: "a-common-user-agent")
    monkeypatch.setattr(persist, "_browser_secret", lambda: b"")
    _session_with_one_release()
    tab = new_app().run()
    ok(tab)
    assert "persist.resume" not in [b.key for b in tab.button] and tab.session_state[S.RELEASES] == []


def test_no_resume_offer_once_something_was_spent_in_the_new_session(monkeypatch):
    monkeypatch.setattr(persist, "_binding", lambda: "another-browser")
    monkeypatch.setattr(persist, "_browser_secret", lambda: b"another-browser's xsrf cookie")
    _session_with_one_release()
    tab = _session_with_one_release()                       # a new tab that released at once
    assert "persist.resume" not in [b.key for b in tab.button]


def test_forget_drops_the_session_from_the_store_and_starts_an_empty_one():
    """A shared computer: Forget this session removes it from the server's memory (no reload or resume brings it
    back) and the page continues with an empty session under a new token."""
    at = _session_with_one_release()
    token = at.session_state[persist.TOKEN]
    assert token in persist.STORE and at.session_state[S.RELEASES]
    at.switch_page("pages/ledger.py").run()
    at.button(key="persist.forget").click().run()
    ok(at)
    assert token not in persist.STORE
    assert at.session_state[persist.TOKEN] != token
    assert at.session_state[S.RELEASES] == []
    assert not any(led.all_charges for led in at.session_state[S.LEDGERS].values())
    assert any("forgotten" in t.value for t in at.toast)
    fresh = new_app()
    fresh.query_params[persist.QUERY_PARAM] = token
    fresh.run()
    ok(fresh)
    assert fresh.session_state[persist.TOKEN] != token and fresh.session_state[S.RELEASES] == []
