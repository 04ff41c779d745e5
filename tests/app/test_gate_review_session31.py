"""DP red-team review of session 31's app changes (the Home presets, the adaptive table release in the
background): each test is an attack that fails if the privacy property it names is broken.

* A preset must not re-split people already charged: the lecture preset declares 2 % of the paper's mixture
  public, so after a charged release on those same people with no public rows it must be refused (those rows
  were protected by the earlier release and would now be shown raw by the ε explorer), and change nothing.
* A preset must not leave the session in a not-private mode it could reset: from seeded replay mode with a length
  scale read off the private rows, the lecture preset's release is a real, private one.
* The stakeholder demo (presentation mode) shows no owner statistic of the private rows after its release.
* Finding 2 (open, xfail): where counts are hidden (presentation mode over an add/remove ledger, N private), the
  Release page still prints the predicted cost computed from the exact N ("about X s and Y MiB of memory"): two
  tables of 1,169 and 877 rows read 78 and 74 MiB. Proposed fix (ui/views/release.py, being written by another
  change now): when ``S.counts_hidden(ds)``, predict from a public N (the gate's privately counted N-hat once
  made, as the Generative page does) or print the prediction without numbers, keeping the consent box.

(A stopped background run is covered by tests/app/test_adaptive_release.py::test_stop_releases_nothing_and_keeps_the_charge.)
"""

from __future__ import annotations

from tests.support.app import errors, new_app, ok
from ui import datasets as D
from ui import noise as N
from ui import state as S
from ui.views import home as H


def _release(at):
    """Press Release; on a loaded machine the live-calibrated time prediction may ask for consent first (a "run it
    anyway" box that keeps Release disabled): tick it, as a user would."""
    for box in at.checkbox:
        if (box.key or "").startswith("rel.size.confirm"):
            box.check().run()
    at.button(key="rel.go").click().run()
    return at


def _charged(at) -> int:
    return sum(len(led) for led in at.session_state[S.LEDGERS].values()) if S.LEDGERS in at.session_state else 0


def test_the_lecture_preset_cannot_declare_public_people_already_charged_as_private():
    # the paper's people with no publishable rows; a real release charged on them
    spec = {**D.PAPER_EXAMPLE_SPEC, "public_fraction": 0.0, "public_declared": False}
    ds = D.build_dataset(spec)
    at = new_app().run()
    for key, value in {S.DATASET: ds, S.LENGTHSCALE: float(ds.suggested_lengthscale),
                       S.LENGTHSCALE_SOURCE: "suggested", S.Q_SCALE: float(ds.q_scale)}.items():
        at.session_state[key] = value
    at.switch_page("pages/release.py").run()
    ok(at)
    _release(at)
    ok(at)
    assert _charged(at) == 1 and at.session_state[S.DATASET].n_public == 0
    # the attack: one click on the lecture preset would declare 2 % of these (charged) people public
    at.switch_page("app.py").run()
    at.button(key=H.PRESET_BUTTON.format(preset="lecture")).click().run()
    assert not at.exception
    assert "lecture preset could not be set up" in errors(at) and "publishable subset" in errors(at)
    cur = at.session_state[S.DATASET]
    assert cur.data_key == ds.data_key and cur.n_public == 0 and cur.key == ds.key
    assert _charged(at) == 1                                # and nothing was spent


def test_a_preset_from_replay_mode_and_a_private_length_scale_gives_a_private_release():
    at = new_app().run()
    at.session_state[S.NOISE_SOURCE] = N.REPLAY
    at.session_state[S.LENGTHSCALE_SOURCE] = "private-data"
    at.run()
    at.button(key=H.PRESET_BUTTON.format(preset="lecture")).click().run()
    ok(at)
    assert at.session_state[S.NOISE_SOURCE] == N.REAL
    assert at.session_state[S.LENGTHSCALE_SOURCE] != "private-data"
    _release(at)
    ok(at)
    rec = at.session_state[S.RELEASES][-1]
    assert rec.private and rec.release.seed is None and rec.release.noise_source == "os-entropy"



def test_the_stakeholder_demo_in_presentation_mode_shows_no_owner_statistic_of_the_private_rows():
    # the stakeholder preset turns presentation mode on; the adaptive release's owner's view (per-column TV and
    # associations computed from the private rows, not differentially private) must stay hidden from the audience
    from ui import runner as R
    from ui.mechanisms import adaptive as AD

    at = new_app().run()
    at.button(key=H.PRESET_BUTTON.format(preset="stakeholder")).click().run()
    ok(at)
    p = len(at.session_state[S.DATASET].schema)
    for key, value in {AD.ROWS_KEY: 200, AD.ROUNDS_KEY: p + 1, AD.STEPS_KEY: 3, AD.FINAL_KEY: 10}.items():
        at.session_state[key] = value
    at.run()
    _release(at)
    assert not at.exception
    if R.TASK in at.session_state:
        assert at.session_state[R.TASK].join(600), "the background release did not finish"
        at.run()
    ok(at)
    recs = at.session_state[S.RELEASES]
    assert len(recs) == 1 and recs[0].private and recs[0].mechanism_key == "adaptive"
    shown = " ".join([c.value for c in at.caption] + [w.value for w in at.warning] + [m.value for m in at.markdown]
                     + [e.label for e in at.expander])
    assert "Owner's view" not in shown and "owner's view" not in shown.lower().replace("owner's view is hidden", "")
    assert not any("TV" in c.value for c in at.caption)               # no TV against the private rows


def _predicted_memory(heldout: float, monkeypatch) -> tuple[int, list[str]]:
    import re

    from ui import presentation as P

    monkeypatch.setattr(S, "counts_hidden", lambda ds: True)       # a ledger with add/remove charges (N private)
    ds = D.build_dataset({**H.stakeholder_spec(), "heldout_fraction": heldout})
    at = new_app().run()
    for key, value in {S.DATASET: ds, S.LENGTHSCALE: float(ds.suggested_lengthscale),
                       S.LENGTHSCALE_SOURCE: "suggested", S.Q_SCALE: float(ds.q_scale), P.PRESENT: True,
                       S.MECHANISM: "adaptive"}.items():
        at.session_state[key] = value
    at.switch_page("pages/release.py").run()
    ok(at)
    shown = [c.value for c in at.caption] + [w.value for w in at.warning]
    mem = [m.group(0) for t in shown for m in re.finditer(r"[0-9.]+ (MiB|GiB) of memory", t)]
    return ds.n, mem


def test_where_counts_are_hidden_the_predicted_cost_does_not_depend_on_the_private_row_count(monkeypatch):
    n1, mem1 = _predicted_memory(0.2, monkeypatch)
    n2, mem2 = _predicted_memory(0.4, monkeypatch)
    assert n1 != n2
    assert mem1 == mem2, f"N = {n1:,}: {mem1}; N = {n2:,}: {mem2}"      # finding 2 (fixed): no number at all
    assert mem1 == []
