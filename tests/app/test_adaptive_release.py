"""The adaptive KME release on the Release page (issue 25): the default for a table, charged once before it runs,
run in the background with progress and Stop, its rows, its itemised charge and its words.

Small and fast: the bundled penguins table (310 private rows), 200 synthetic rows, the fewest rounds (p + 1) and a
few Adam steps. AppTest runs the page's script synchronously, so a test waits for the background thread
(:meth:`ui.runner.BackgroundRun.join`, a condition, not a clock) and then runs the page again.
"""

from __future__ import annotations

import threading

import pandas as pd
import pytest

from tests.support.app import errors, new_app, ok
from tests.support.app_tables import in_declared_domain, schema_mode, use
from ui import runner as R
from ui import state as S
from ui.mechanisms import adaptive as AD

#: Fast settings (post-processing only: the charge is the same for any of them).
FAST = {AD.ROWS_KEY: 200, AD.ROUNDS_KEY: 9, AD.STEPS_KEY: 3, AD.FINAL_KEY: 10}
JOIN_S = 600          # generous: a cold XLA compilation on a loaded machine; the wait ends when the thread does


def _table_app():
    at = use(schema_mode(new_app().run()))
    at.switch_page("pages/release.py").run()
    for key, value in FAST.items():
        at.session_state[key] = value
    return at.run()


def _charges(at) -> list:
    ds = at.session_state[S.DATASET]
    led = at.session_state[S.LEDGERS].get(ds.data_key)
    return [] if led is None else list(led.all_charges)


def _held(monkeypatch) -> threading.Event:
    """The library call waits until the returned event is set: the test sees the run while it runs (a warm fit of
    these sizes can finish before the page's next run), then lets it go."""
    go, real = threading.Event(), AD.adaptive_release

    def held(*args, **kwargs):
        go.wait(JOIN_S)
        return real(*args, **kwargs)

    monkeypatch.setattr(AD, "adaptive_release", held)
    return go


def _finish(at, task=None):
    """Wait for the background release (if the page has not recorded it already) and run the page again."""
    task = at.session_state[R.TASK] if task is None and R.TASK in at.session_state else task
    if task is not None:
        assert task.join(JOIN_S), "the background release did not finish"
    return at.run()


def test_the_default_for_a_table_is_the_adaptive_release_and_numeric_data_keep_algorithm_1():
    at = _table_app()
    ok(at)
    assert at.selectbox(key=S.MECHANISM).value == "adaptive"
    assert "alg2" in at.selectbox(key=S.MECHANISM).options or "Algorithm 2 · random features" in \
        at.selectbox(key=S.MECHANISM).options                     # Algorithms 1 and 2 stay available
    captions = [c.value for c in at.caption]
    assert any(c.startswith("Predicted: about") for c in captions)     # the calibrated prediction, before the run
    ds = at.session_state[S.DATASET]
    words = f"200 synthetic rows from {ds.n:,} private rows; {ds.n_heldout:,} held out for evaluation"
    assert any(words in c for c in captions), captions
    assert any("ρ =" in i.value and "zCDP" in i.value for i in at.info)   # the banner: its zCDP budget
    numeric = new_app().run()
    numeric.switch_page("pages/release.py").run()
    ok(numeric)
    assert numeric.selectbox(key=S.MECHANISM).value == "alg1-q"


def test_a_release_is_charged_before_it_runs_in_the_background_and_records_its_rows_and_parts(monkeypatch):
    go = _held(monkeypatch)
    at = _table_app()
    before = len(_charges(at))
    at.button(key="rel.go").click().run()
    ok(at)
    task = at.session_state[R.TASK]
    assert len(_charges(at)) == before + 1                 # charged when it started, before any result
    assert any(b.key == "rel.stop" for b in at.button)     # Stop while it runs
    assert at.button(key="rel.go").disabled                # one background release at a time
    assert not at.session_state[S.RELEASES]
    go.set()
    at = _finish(at, task)
    ok(at)
    assert R.TASK not in at.session_state
    recs = at.session_state[S.RELEASES]
    assert len(recs) == 1 and recs[0].mechanism_key == "adaptive" and recs[0].private
    rec, ds = recs[0], at.session_state[S.DATASET]
    charges = _charges(at)
    assert len(charges) == before + 1                      # still one charge: the run added its parts to it
    parts = charges[-1].details["parts_itemised"]
    assert parts and {q["part"] for q in parts} <= {"measure", "select"}
    assert sum(q["part"] == "measure" for q in parts) >= len(ds.schema)       # every column measured first
    assert rec.release.n_points == 200 and rec.release.epsilon == S.DEFAULT_EPSILON
    rows = ds.schema.decode(rec.release.points)
    in_declared_domain(rows, ds.schema)
    assert pd.api.types.is_integer_dtype(rows["year"]) and set(rows["species"].dropna()) <= {
        "Adelie", "Chinstrap", "Gentoo"}
    text = " ".join(m.value for m in at.markdown)
    assert f"200 synthetic rows from {ds.n:,} private rows; {ds.n_heldout:,} held out for evaluation" in text
    assert any("TV" in c.value for c in at.caption)                       # marginals labelled with their TV
    labels = [b.label for b in at.get("download_button")]
    assert "CSV: 200 synthetic rows" in labels
    at.switch_page("pages/ledger.py").run()
    ok(at)
    assert any("itemised" in e.label for e in at.expander)


def test_stop_releases_nothing_and_keeps_the_charge(monkeypatch):
    go = _held(monkeypatch)
    at = _table_app()
    before = len(_charges(at))
    at.button(key="rel.go").click().run()
    task = at.session_state[R.TASK]
    at.button(key="rel.stop").click().run()
    ok(at)
    assert R.TASK not in at.session_state
    assert any("stopped" in w.value and "nothing was released" in w.value for w in at.warning)
    go.set()                                               # the abandoned thread runs on to its end
    task.join(JOIN_S)
    at.run()
    ok(at)
    assert not at.session_state[S.RELEASES]               # the abandoned thread's rows are never recorded
    assert len(_charges(at)) == before + 1                 # the charge stays spent
    assert not at.button(key="rel.go").disabled


def test_a_failing_run_shows_its_error_and_its_charge_stays(monkeypatch):
    def bad(*args, **kwargs):
        raise ValueError("synthetic_rows must be a positive integer, got -1.")

    monkeypatch.setattr(AD, "adaptive_release", bad)
    at = _table_app()
    before = len(_charges(at))
    at.button(key="rel.go").click().run()
    if R.TASK in at.session_state:          # not yet seen finished by the page: wait and run it again
        at = _finish(at)
    assert not at.exception
    assert "synthetic_rows must be a positive integer, got -1." in errors(at)
    assert not at.session_state[S.RELEASES] and len(_charges(at)) == before + 1


@pytest.mark.parametrize("hidden", [False, True])
def test_the_row_words_hide_counts_where_the_ledger_is_add_remove_in_presentation_mode(monkeypatch, hidden):
    from types import SimpleNamespace

    monkeypatch.setattr(S, "counts_hidden", lambda ds: hidden)
    ds = SimpleNamespace(n=2400, n_heldout=600, n_public=0)
    text = AD.rows_words(ds, 1000)
    if hidden:
        assert "2,400" not in text and "600" not in text and "held-out share" in text
    else:
        assert text == "1,000 synthetic rows from 2,400 private rows; 600 held out for evaluation (never read by " \
                       "the release)"
