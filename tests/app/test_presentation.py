"""Issue 16, remaining items (AppTest): presentation mode with a stepper, and two journey bugs.

* **Presentation mode** (``ui/presentation.py``): a sidebar toggle kept in the session (also ``?present=1``), larger
  type (CSS injected once by ``app.py``), owner-only views and formulas hidden through one gate
  (``show_owner_details``), and a stepper Data → Privacy → Release → Use whose *Next* / *Back* buttons keep the
  session's data and choices. It only hides: releases are still checked against the budget and charged.
* **Budget hint** (``ui/budget_hint.py``): with the default total of ε = 5, a release the budget refuses is announced
  next to the Release button, with what to do and links (Budget ledger, planning on the Kernel & privacy page).
* **ε slider**: with the exact-ε box on, the disabled slider showed a stale value; a line shows the ε in use instead.
"""

from __future__ import annotations

import pytest

from tests.support.app import errors, new_app, ok
from ui import presentation as P
from ui import state as S


# ---------------------------------------------------------------------- helpers
def follow(at, page: str):
    """``at.switch_page(page).run()``, then let later runs follow the app's own ``st.switch_page``.

    AppTest 1.67 keeps the page requested by ``AppTest.switch_page`` for every later run, so a script's own
    ``st.switch_page`` (the stepper's buttons) would be undone at the next run; clearing the request makes each run
    continue on the page where the previous one finished, as a browser does.
    """
    at.switch_page(page).run()
    at._page_hash = ""
    return at


def texts(at) -> str:
    return "\n".join(e.value for kind in ("title", "subheader", "markdown", "caption", "info", "warning")
                     for e in getattr(at, kind))


def metric_labels(at) -> list[str]:
    return [m.label for m in at.metric]


def page_links(at) -> list[str]:
    return [p.proto.page for p in at.get("page_link")]


def expander_labels(at) -> list[str]:
    return [e.label for e in at.expander]


def released(at, n_before: int) -> int:
    return len(at.session_state[S.RELEASES]) - n_before


# ---------------------------------------------------------------------- the toggle and ?present=1
def test_the_toggle_is_in_the_sidebar_off_by_default_and_says_it_only_hides():
    at = new_app().run()
    ok(at)
    toggle = at.sidebar.toggle(key=P.PRESENT)
    assert toggle.value is False                                              # off unless asked for
    assert "only hides" in toggle.help and "ledger" in toggle.help             # never weakens privacy, and says so
    assert not [h for h in at.get("html") if "data-present" in h.proto.body]  # no larger type
    toggle.set_value(True).run()
    ok(at)
    assert at.session_state[P.PRESENT] is True
    assert at.query_params.get(P.QUERY_PARAM) == "1"                           # bookmarkable while on
    # the larger type: app.py injects the CSS (AppTest runs app.py on a session's first run only: a new session)
    on = new_app()
    on.session_state[P.PRESENT] = True
    on.run()
    ok(on)
    assert [h for h in on.get("html") if "data-present" in h.proto.body]


def test_the_query_parameter_turns_it_on_and_a_later_flip_of_the_toggle_wins():
    at = new_app()
    at.query_params[P.QUERY_PARAM] = "1"
    at.run()
    ok(at)
    assert at.session_state[P.PRESENT] is True and at.sidebar.toggle(key=P.PRESENT).value is True
    at.sidebar.toggle(key=P.PRESENT).set_value(False).run()
    at.run()
    ok(at)
    assert at.session_state[P.PRESENT] is False                                # not re-applied from the URL
    assert P.QUERY_PARAM not in at.query_params
    off = new_app()
    off.query_params[P.QUERY_PARAM] = "0"
    off.run()
    assert off.session_state[P.PRESENT] is False


# ---------------------------------------------------------------------- owner-only views and formulas
@pytest.mark.slow
def test_owner_views_and_formulas_are_hidden_in_presentation_mode_and_shown_otherwise():
    at = new_app().run()
    follow(at, "pages/release.py")
    at.button(key="rel.go").click().run()
    at.number_input(key=S.N_REPEATS).set_value(2).run()
    at.button(key="rel.repeat").click().run()
    ok(at)
    pages = {}
    for on in (False, True):
        at.session_state[P.PRESENT] = on
        seen = {}
        for page in ("pages/data.py", "pages/kernel.py", "pages/release.py", "pages/use.py"):
            follow(at, page)
            ok(at)
            seen[page] = (texts(at), metric_labels(at), expander_labels(at), len(at.latex),
                          [list(d.value.columns) for d in at.dataframe])
        pages[on] = seen
    # owner mode: the private preview, the formulas, the distances to the private embedding, the private truth
    data, kern, rel, use = (pages[False][p] for p in ("pages/data.py", "pages/kernel.py", "pages/release.py",
                                                      "pages/use.py"))
    assert "Preview (for the data owner — shows private rows)" in data[0]
    assert kern[3] >= 2
    assert "RKHS distance of this release" in rel[1] and "How close is it?" in rel[0] and "How it works" in rel[2]
    assert "Private vs released embedding" in rel[0] and "2 draws of" in rel[0]
    assert "true private mean" in use[4][0] and "MMD(private data, held-out) — owner only" in use[1]
    assert "hidden in presentation mode" not in "".join(v[0] for v in pages[False].values())
    assert "Step 1 of 4" not in data[0]                                        # no stepper
    # presentation mode: all of them hidden, each with a note in its place
    data, kern, rel, use = (pages[True][p] for p in ("pages/data.py", "pages/kernel.py", "pages/release.py",
                                                     "pages/use.py"))
    assert "Preview (for the data owner" not in data[0] and "hidden in presentation mode" in data[0]
    assert kern[3] == 0 and "hidden in presentation mode" in kern[0]
    assert "RKHS distance of this release" not in rel[1] and "How close is it?" not in rel[0]
    assert "How it works" not in rel[2] and "Private vs released embedding" not in rel[0]
    assert "2 draws of" not in rel[0] and "The draws next to the private embedding" in rel[0]
    assert "ε spent" in rel[1]                                                # public facts of the release stay
    assert use[4][0] == ["column", "estimate from release"]
    # the held-out rows are protected people too (issue 24): MMDs against them are the owner's in presentation mode
    assert "MMD(private data, held-out) — owner only" not in use[1] and "MMD(release, held-out)" not in use[1]
    assert "Step 1 of 4" in data[0] and "Step 4 of 4" in use[0]


def test_presentation_mode_still_checks_the_budget_and_charges_the_ledger():
    at = new_app().run()
    at.session_state[P.PRESENT] = True
    at.session_state[S.BUDGET_EPS] = 1.2
    follow(at, "pages/release.py")
    at.button(key="rel.go").click().run()
    ok(at)
    ds = at.session_state[S.DATASET]
    assert len(at.session_state[S.LEDGERS][ds.data_key]) == 1
    at.button(key="rel.go").click().run()                 # two ε = 1 releases exceed ε = 1.2 under every accountant
    assert "beyond your budget" in errors(at)
    assert len(at.session_state[S.RELEASES]) == 1 and len(at.session_state[S.LEDGERS][ds.data_key]) == 1


# ---------------------------------------------------------------------- the stepper keeps the data
def test_the_stepper_walks_data_to_use_and_back_keeping_the_data_and_the_choices():
    at = new_app().run()
    at.session_state[P.PRESENT] = True
    follow(at, "pages/data.py")
    ok(at)
    assert at.button(key="present.back").disabled and "Step 1 of 4" in texts(at)
    at.selectbox(key="data.generator").set_value("two_moons").run()
    at.button(key="data.use").click().run()
    ok(at)
    ds = at.session_state[S.DATASET]
    assert ds.name.startswith("Two moons")
    at.button(key="present.next").click().run()
    ok(at)
    assert [t.value for t in at.title] == ["Kernel & privacy"] and "Step 2 of 4" in texts(at)
    at.select_slider(key=S.EPS).set_value(2.0).run()
    at.button(key="present.next").click().run()
    ok(at)
    assert [t.value for t in at.title] == ["Release"] and "Step 3 of 4" in texts(at)
    assert at.select_slider(key=S.EPS).value == 2.0                           # the choice made one step back
    at.button(key="present.next").click().run()
    ok(at)
    assert [t.value for t in at.title] == ["Third-party use of the release"] and "Step 4 of 4" in texts(at)
    assert at.button(key="present.next").disabled
    for title in ("Release", "Kernel & privacy", "Data"):
        at.button(key="present.back").click().run()
        ok(at)
        assert [t.value for t in at.title] == [title]
    assert at.session_state[S.DATASET] is ds                                    # the same data, never rebuilt
    assert at.session_state[S.EPS] == 2.0 and at.selectbox(key="data.generator").value == "two_moons"
    assert f"In use: {ds.describe()}" in [s.value for s in at.success]


def test_the_stepper_needs_a_known_step():
    with pytest.raises(ValueError, match="unknown step 'budget'"):
        P.stepper("budget")


# ---------------------------------------------------------------------- bug: blocked by the budget, no hint
def test_a_release_the_default_budget_refuses_is_announced_with_what_to_do():
    at = new_app().run()
    assert at.session_state[S.BUDGET_EPS] == 5.0
    follow(at, "pages/release.py")
    ok(at)
    assert not [w for w in at.warning if "Over the budget" in w.value]
    at.session_state[S.EPS] = 1.0
    at.button(key="rel.go").click().run()                   # the three-ε demo: 1, then 0.1, then 10 (11.1 > 5)
    at.session_state[S.EPS] = 0.1
    at.run()
    at.button(key="rel.go").click().run()
    ok(at)
    n = len(at.session_state[S.RELEASES])
    assert n == 2
    at.session_state[S.EPS] = 10.0
    at.run()
    ok(at)
    hint = [w.value for w in at.warning if "Over the budget" in w.value]
    assert len(hint) == 1
    assert "ε = 10" in hint[0] and "ε = 5" in hint[0] and "Budget ledger" in hint[0] and "ε explorer" in hint[0]
    assert "ledger" in page_links(at) and "kernel" in page_links(at)                 # links to the ways forward
    at.button(key="rel.go").click().run()
    assert "beyond your budget" in errors(at) and len(at.session_state[S.RELEASES]) == n   # refused, as before
    assert [w for w in at.warning if "Over the budget" in w.value]                          # and still explained
    # lowering ε removes the hint; so does raising the total on the Budget ledger page
    at.session_state[S.EPS] = 1.0
    at.run()
    assert not [w for w in at.warning if "Over the budget" in w.value]
    at.session_state[S.EPS] = 10.0
    follow(at, "pages/ledger.py")
    at.number_input(key=S.BUDGET_EPS).set_value(20.0).run()
    follow(at, "pages/release.py")
    ok(at)
    assert not [w for w in at.warning if "Over the budget" in w.value]
    at.button(key="rel.go").click().run()
    ok(at)
    assert len(at.session_state[S.RELEASES]) == n + 1


def test_no_budget_hint_for_a_release_that_spends_nothing_or_is_allowed_over():
    at = new_app().run()
    at.session_state[S.EPS] = 10.0                                               # alone above the total of 5
    follow(at, "pages/release.py")
    assert [w for w in at.warning if "Over the budget" in w.value]
    at.checkbox(key="gate.allow_over.release.0").check().run()                  # teaching: allowed, a caption says so
    assert not [w for w in at.warning if "Over the budget" in w.value]
    assert any("recorded as over budget" in c.value for c in at.caption)
    at.checkbox(key="gate.allow_over.release.0").uncheck().run()
    at.radio(key=S.NOISE_SOURCE).set_value("seeded").run()                     # replay mode: not private, no charge
    assert not [w for w in at.warning if "Over the budget" in w.value]


# ---------------------------------------------------------------------- bug: the stale slider
@pytest.mark.parametrize("page", ["pages/release.py", "pages/kernel.py"])
def test_with_the_exact_box_on_the_epsilon_shown_is_the_one_in_use(page):
    at = new_app().run()
    follow(at, page)
    at.select_slider(key=S.EPS).set_value(2.0).run()
    at.toggle(key=S.EPS_TYPED).set_value(True).run()
    at.number_input(key=S.EPS_VALUE).set_value(0.37).run()
    ok(at)
    assert S.EPS not in [s.key for s in at.select_slider]                        # no slider left at its old 2
    shown = [m.value for m in at.markdown if m.value.startswith("Privacy parameter ε:")]
    assert shown == ["Privacy parameter ε: **0.37** (typed exactly below; the log-scale slider is off while the "
                     "exact box is on)"]
    at.toggle(key=S.EPS_TYPED).set_value(False).run()
    ok(at)
    assert at.select_slider(key=S.EPS).value == 0.3                             # back on the nearest step
    assert not [m for m in at.markdown if m.value.startswith("Privacy parameter ε:")]


# ---------------------------------------------------------------------- the last owner-only views (issue 16)
HIDDEN = "hidden in presentation mode"


def _figure_titles(at) -> list[str]:
    import json

    out = []
    for c in at.get("plotly_chart"):
        fig = json.loads(c.proto.spec)
        out += [a.get("text", "") for a in fig["layout"].get("annotations", [])]
        out.append(((fig["layout"].get("title") or {}).get("text")) or "")
    return out


def _all_releases_columns(at) -> list[list[str]]:
    return [list(d.value.columns) for d in at.dataframe if "mechanism" in d.value.columns]


def test_the_gp_release_hides_the_private_function_its_l2_errors_and_its_formulas():
    at = new_app().run()
    follow(at, "pages/release.py")
    at.selectbox(key=S.MECHANISM).set_value("gp").run()
    at.button(key="rel.go").click().run()
    ok(at)
    assert at.session_state[S.RELEASES][-1].kind == "function"
    # owner: the private μ̂ beside the released function, the L² errors, the "Why" formulas
    assert "private μ̂ (never released)" in _figure_titles(at)
    assert "L² error on the grid (owner's view)" in metric_labels(at) and "How close is it?" in texts(at)
    assert "Why — and what else the library guarantees" in expander_labels(at)
    assert all("RKHS distance" in c for c in _all_releases_columns(at))
    assert HIDDEN not in texts(at)
    at.session_state[P.PRESENT] = True
    at.run()
    ok(at)
    titles = _figure_titles(at)
    assert "private μ̂ (never released)" not in titles and "noise: released − private" not in titles
    assert "L² error on the grid (owner's view)" not in metric_labels(at)
    assert "Latest points release, same grid" not in metric_labels(at) and "How close is it?" not in texts(at)
    assert "Why — and what else the library guarantees" not in expander_labels(at)
    assert not any("Owner's view" in w.value for w in at.warning)
    assert all("RKHS distance" not in c and "L2 error on grid" not in c for c in _all_releases_columns(at))
    t = texts(at)
    assert "The private μ̂ and the noise next to the released function — " + HIDDEN in t
    assert "The L² errors to the private μ̂ and the formulas" in t
    # the public facts stay: what was released, its expected error (from the noise level alone), ε
    assert {"Expected L² error (public)", "RKHS distance", "ε spent"} <= set(metric_labels(at))


def _schema_release(present: bool):
    """Penguins as a mixed table with the bundled declared schema, one Algorithm 2 release."""
    at = new_app().run()
    at.switch_page("pages/data.py").run()
    at.radio(key="data.source").set_value("sample").run()
    at.selectbox(key="data.sample").set_value("penguins").run()
    at.radio(key="data.mode").set_value("schema").run()
    at.button(key="data.use").click().run()
    ok(at)
    assert at.session_state[S.DATASET].is_table
    follow(at, "pages/release.py")
    at.selectbox(key=S.MECHANISM).set_value("alg2").run()   # Algorithm 2 (a table's default: adaptive)
    at.button(key="rel.go").click().run()
    ok(at)
    at.session_state[P.PRESENT] = present
    return at


@pytest.mark.slow
def test_the_mixed_table_use_view_shows_estimates_only_in_presentation_mode():
    at = _schema_release(True)
    follow(at, "pages/use.py")
    ok(at)
    heads = [h.value for h in at.subheader]
    assert {"Categories: counts and proportions", "Cross-tabulation", "Means by group",
            "Means and standard deviations"} <= set(heads)                    # every estimate is still there
    cols = [c for d in at.dataframe for c in map(str, d.value.columns)]
    assert "estimated proportion" in cols and "estimated mean" in cols and "estimated SD" in cols
    assert not [c for c in cols if c.startswith("true") or c.startswith("error")]
    assert not any(m.value == "**True (private)**" for m in at.markdown)
    assert not any("Total variation distance" in c.value for c in at.caption)
    t = texts(at)
    assert "The true (private) proportions and counts of " in t                 # each table: a note in its place
    assert "The true (private) means and standard deviations — " + HIDDEN in t
    assert "The true (private) cross-tabulation — " + HIDDEN in t
    # the owner sees the truth again when the mode is turned off
    at.session_state[P.PRESENT] = False
    at.run()
    ok(at)
    cols = [c for d in at.dataframe for c in map(str, d.value.columns)]
    assert "true proportion" in cols and "true mean" in cols and HIDDEN not in texts(at)


@pytest.mark.slow
def test_the_kernel_pages_schema_note_hides_its_formula():
    at = _schema_release(False)
    follow(at, "pages/kernel.py")
    ok(at)
    note = next(i.value for i in at.info if i.value.startswith("**Mixed table: the additive table kernel**"))
    assert "$k(x, y)" in note and "The formula of the additive table kernel" not in texts(at)
    at.session_state[P.PRESENT] = True
    at.run()
    ok(at)
    note = next(i.value for i in at.info if i.value.startswith("**Mixed table: the additive table kernel**"))
    assert "$" not in note and "declared **in the schema**" in note
    assert "The formula of the additive table kernel — " + HIDDEN in texts(at)


def test_the_explorer_does_not_offer_planning_on_the_private_rows_in_presentation_mode():
    from ui import explorer as XP

    at = new_app().run()
    follow(at, "pages/release.py")
    assert XP.PRIVATE_KEY in [c.key for c in at.checkbox]                     # the owner's opt-in
    at.checkbox(key=XP.PRIVATE_KEY).check().run()
    at.button(key=XP.GO_KEY).click().run()                                      # panels from the private rows
    ok(at)
    assert at.session_state[XP.RESULT_KEY]["private"]
    at.session_state[P.PRESENT] = True
    at.run()
    ok(at)
    assert XP.PRIVATE_KEY not in [c.key for c in at.checkbox]                 # not offered
    assert not [f for f in _figure_titles(at) if "ε = " in f]                  # the private panels are hidden
    assert "The ε explorer's panels drawn from the private rows — " + HIDDEN in texts(at)
    assert "data-dependent choice" not in texts(at)
    # a new run plans on public or simulated data even though the owner's opt-in is still set in the session
    at.button(key=XP.GO_KEY).click().run()
    ok(at)
    res = at.session_state[XP.RESULT_KEY]
    assert not res["private"] and res["plan_source"] != "private"
    assert [f for f in _figure_titles(at) if "ε = " in f]
    assert not at.session_state[S.RELEASES]                                      # planning only: nothing released
