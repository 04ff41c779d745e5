"""The Home page's presets (issue 26): a lecture and a stakeholder demo, each one click from Home, that set the
data, the kernel, ε and δ, the mechanism and presentation mode, open the page to start from, and spend nothing."""

from __future__ import annotations

import pytest

from tests.support.app import errors, new_app, ok
from ui import explorer as XP
from ui import noise as N
from ui import presentation as P
from ui import state as S
from ui.views import home as H


def _preset(key: str):
    at = new_app().run()
    at.button(key=H.PRESET_BUTTON.format(preset=key)).click().run()
    ok(at)
    return at


def _charged(at) -> int:
    return sum(len(led) for led in at.session_state[S.LEDGERS].values()) if S.LEDGERS in at.session_state else 0


def test_the_lecture_preset_opens_the_release_page_on_the_papers_example_in_presentation_mode():
    at = _preset("lecture")
    assert at.title[0].value == "Release"
    ds = at.session_state[S.DATASET]
    assert ds.name.startswith("Paper: mixture") and ds.dim == 2
    assert ds.n + ds.n_public + ds.n_heldout == 10_000 and ds.n_public == 200
    assert at.session_state[S.MECHANISM] == "alg1-public" and at.session_state[S.N_POINTS] == 200
    assert at.session_state[S.WEIGHTS] == "simplex"        # probabilities a third party computes stay in [0, 1]
    assert (at.session_state[S.EPS], at.session_state[S.DELTA]) == (1.0, 1e-6)
    assert at.session_state[S.NOISE_SOURCE] == N.REAL
    assert at.session_state[P.PRESENT] is True
    assert _charged(at) == 0                                 # a preset spends nothing
    # the ε explorer plans on the public rows: the honest picture of what ε does (not a re-seeded simulation)
    assert XP.planning_source(ds) == "public"
    assert any(XP.LABEL in e.label for e in at.expander)
    # Release: a real release, charged once, the owner's diagnostics hidden
    at.button(key="rel.go").click().run()
    ok(at)
    recs = at.session_state[S.RELEASES]
    assert len(recs) == 1 and recs[0].release.mechanism == "algorithm1" and recs[0].release.seed is None
    w = recs[0].release.weights
    assert (w >= 0).all() and abs(w.sum() - 1) < 1e-9
    assert _charged(at) == 1


def test_the_stakeholder_preset_opens_the_release_page_on_a_mixed_table_with_the_adaptive_release():
    at = _preset("stakeholder")
    assert at.title[0].value == "Release"
    ds = at.session_state[S.DATASET]
    assert ds.schema is not None and ds.name.startswith("Seattle weather")
    assert ds.n_public == 0 and ds.n_heldout > 0                      # held-out rows show fidelity
    assert at.session_state[S.MECHANISM] == "adaptive"
    assert at.selectbox(key=S.MECHANISM).value == "adaptive"
    assert (at.session_state[S.EPS], at.session_state[S.DELTA]) == (1.0, 1e-6)
    assert at.session_state[P.PRESENT] is True
    assert _charged(at) == 0
    # the Data page shows what is in use: the bundled table in schema mode
    at.switch_page("pages/data.py").run()
    ok(at)
    assert at.session_state[S.DATASET].key == ds.key


def test_a_preset_that_cannot_be_set_up_says_why_and_changes_nothing(monkeypatch):
    at = new_app().run()
    before = at.session_state[S.DATASET].key

    def refuse(ds):
        raise ValueError("budget was already spent on another split of these people")

    monkeypatch.setattr(S, "set_dataset", refuse)
    at.button(key=H.PRESET_BUTTON.format(preset="stakeholder")).click().run()
    assert not at.exception
    assert at.title[0].value.startswith("Private data release")       # still on Home
    assert "stakeholder demo preset could not be set up" in errors(at) and "another split" in errors(at)
    assert at.session_state[S.DATASET].key == before


def test_an_unknown_preset_is_a_value_error_naming_it():
    with pytest.raises(ValueError, match="'keynote'"):
        H.apply_preset("keynote")
