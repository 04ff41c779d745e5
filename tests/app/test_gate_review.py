"""Red-team review of the privacy gate (issue 24): attacks on ``ui/gate.py``, the typed privacy facts, the ledger
and presentation mode, written after the gate landed. Each test is one finding; a finding not fixed yet is
``xfail(strict=True)`` so the suite stays green and a fix shows up as an XPASS.

1. Generative page (add/remove): the synthetic-rows CSV has exactly N rows by default (``gen.n_rows`` defaults
   to ``min(ds.n, MAX_ROWS)``): the exact private row count in a file labelled differentially private.
2. Generative page (add/remove) in presentation mode: the exact N in the data caption and the sidebar, and the
   planning metrics q = L/N and T_S = epochs * ceil(N/L) computed from it.
3. Presentation mode shows owner values on pages without a presentation gate: Home (paper example: private
   rows, RKHS distances to the private embedding), Clustering (private rows coloured by cluster, ARI vs the true
   labels, purity, objective vs non-private), Two-sample test (the non-private p-value, "owner only"). Fixed
   while this review ran (OwnerOnly / owner_rows on those pages): plain regression tests, no xfail.
4. The gate records charges whatever their relation: the Kernel page's private length scale is charged with no
   relation, and a ledger of these individuals that already holds add/remove charges (the Generative page on the
   same mixture) accepts it, composing a replace-one mechanism as if it were add/remove.
5. The gate stamps a tainted (e.g. seeded) DPGM result with ``mark_not_private``, which writes into the model's
   parameter pytree: the models can no longer be sampled or exported.
6. A ledger reset forgets that not-private runs happened (the Budget ledger page drops the count), and the "Other
   datasets" table composes only the current charges, not the archive.
7. ``calibrate_laplace`` rounds b = Δ/ε to nearest: for ε = 0.7, 1.5, 3, 7 the scale is one ulp *below* Δ/ε
   (the Gaussian calibrations round toward more noise).
8. Presentation mode: the released points' figure takes its axis ranges from the private rows' 0.5 % / 99.5 %
   quantiles (``ui.compute.plot_window``): scaling the private rows rescales the projected figure, the release
   unchanged.
9. The ledgers of other individuals (two-sample lab cases, uploaded pairs: ``S.ledger_for_key``) keep the budget in
   force when they were created: after the user lowers the total budget, the Two-sample page spends beyond it
   without the page's over-budget permission.
10. The uploaded samples of the Two-sample page are charged to a ledger keyed by the *ordered pair* of their content
    hashes (``upload-pair:{hash X}:{hash Y}``): the same two samples uploaded the other way round (or sample X with
    another Y) start a fresh, empty ledger, so the people of X pay twice while each ledger shows once.
11. An imported charge that declares parts but no split id (a legacy or hand-made file) is stamped with the
    *current* split on merge, so it is composed in parallel with the current charges: two ε = 1 charges on
    "private rows" and "held-out rows" of unknown splits total ε = 1 instead of 2.
"""

from __future__ import annotations

import json
from fractions import Fraction

import numpy as np
import pytest

from dpkme.privacy.accounting import BudgetLedger, pure_dp_charge
from dpkme.privacy.spec import NeighbouringRelation
from tests.support.app import decode, new_app, ok, plotly_figures, public_app
from ui import gate as G
from ui import presentation as P
from ui import state as S

#: Tiny DPGM settings (1 epoch, 2 clusters), without "gen.n_rows": the page's own default is under test.
TINY = {"gen.k": 2, "gen.epochs": 1, "gen.batch": 128, "gen.hidden": 16, "gen.latent": 2, "gen.kiter": 2,
        "gen.partition": "kmeans"}


def _texts(at) -> list[str]:
    """Every text the page shows (main area and sidebar): markdown, captions, infos, warnings, errors, metrics."""
    out = []
    for kind in ("markdown", "caption", "info", "warning", "error", "success"):
        out += [str(e.value) for e in getattr(at, kind)]
        out += [str(e.value) for e in getattr(at.sidebar, kind)]
    out += [f"{m.label} {m.value} {m.delta or ''}" for m in at.metric]
    return out


def _private_traces(at) -> list[str]:
    """Names of the figures' traces that draw private rows (a trace with no point reveals nothing)."""
    out = []
    for f in plotly_figures(at):
        for d in f.get("data", []):
            name = d.get("name") or ""
            if ("private rows" in name or "LOCAL VIEW" in name) and len(decode(d.get("x", []))):
                out.append(name)
    return out


# ---------------------------------------------------------------------------------------------- finding 1
@pytest.mark.slow
def test_1_the_default_synthetic_csv_does_not_have_exactly_n_rows(monkeypatch):
    import dpkme.privacy.counting as counting
    from ui import generative as GN

    monkeypatch.setattr(counting, "laplace_noise", lambda shape, *, scale, rng: np.float64(7.0))   # N̂ = N + 7
    at = new_app(300)
    for key, value in TINY.items():
        at.session_state[key] = value
    at.run()
    at.switch_page("pages/generative.py").run()
    at.button(key="gen.go").click().run()
    ok(at)
    n_true = GN.digits_data().ds.n
    stored = at.session_state["gen.box"]["latest"]
    assert stored["result"].config["n_private"] == n_true + 7          # the run itself used N̂ ...
    rows = stored["rows"].decode().strip().splitlines()
    assert len(rows) - 1 != n_true, "the released CSV has exactly the private row count N"   # ... the file N


# ---------------------------------------------------------------------------------------------- finding 2
def test_2_presentation_mode_shows_no_exact_n_on_the_add_remove_page():
    from ui import generative as GN

    at = new_app(120)
    at.session_state[P.PRESENT] = True
    at.run()
    at.switch_page("pages/generative.py").run()
    ok(at)
    n = GN.digits_data().ds.n
    batch = int(at.session_state["gen.batch"])
    leaks = [t for t in _texts(at) if f"{n:,}" in t or f"N = {n}" in t]
    assert not leaks, leaks
    q_exact = f"q = {batch / n:.3g}"
    assert not [t for t in _texts(at) if q_exact in t], "the planning metric shows q = L/N with the exact N"


# ---------------------------------------------------------------------------------------------- finding 3
def test_3a_home_paper_example_shows_no_owner_value_in_presentation_mode():
    at = new_app(120)
    at.session_state[P.PRESENT] = True
    at.run()
    at.button(key="home.example").click().run()
    ok(at)
    assert not _private_traces(at), _private_traces(at)
    labels = [m.label for m in at.metric]
    assert not [m for m in labels if "RKHS distance" in m or "‖μ̃ − μ̂‖" in m], labels


def test_3b_clustering_shows_no_owner_value_in_presentation_mode():
    at = new_app(120)
    at.session_state[P.PRESENT] = True
    at.run()
    at.switch_page("pages/clustering.py").run()
    at.button(key="clu.go").click().run()
    ok(at)
    assert not _private_traces(at), _private_traces(at)
    labels = [m.label for m in at.metric]
    assert not [m for m in labels if m in ("ARI vs true labels", "Purity", "ARI vs non-private",
                                            "Objective vs non-private")], labels


def test_3c_two_sample_shows_no_owner_value_in_presentation_mode():
    at = public_app(timeout=120)
    at.session_state[P.PRESENT] = True
    at.session_state["tst.mode"] = "one"
    at.session_state["tst.source"] = "groups"
    at.run()
    at.switch_page("pages/twosample.py").run()
    at.button(key="tst.go").click().run()
    ok(at)
    labels = [m.label for m in at.metric]
    assert "p-value (private test)" in labels                           # the test ran and is shown
    assert not [m for m in labels if "owner only" in m.lower() or "non-private" in m.lower()], labels


# ---------------------------------------------------------------------------------------------- finding 4
def _kernel_private_choice(at):
    at.switch_page("pages/kernel.py").run()
    at.button(key="kern.pl_go").click().run()
    return at


def test_4a_the_private_lengthscale_charge_carries_its_relation():
    at = _kernel_private_choice(new_app(120).run())
    assert not at.exception
    ds = at.session_state[S.DATASET]
    led = at.session_state[S.LEDGERS][ds.data_key]
    assert len(led) == 1 and "length scale" in led.charges[0].label
    assert led.charges[0].relation is NeighbouringRelation.REPLACE_ONE, led.charges[0].relation


def test_4b_a_replace_one_choice_is_not_composed_into_an_add_remove_ledger():
    at = new_app(120).run()
    ds = at.session_state[S.DATASET]
    from ui import generative as GN

    assert GN.mixture_data().ds.data_key == ds.data_key         # the Generative page's mixture: same individuals
    eps_b, delta_b = float(at.session_state[S.BUDGET_EPS]), float(at.session_state[S.BUDGET_DELTA])
    led = BudgetLedger(epsilon_budget=eps_b, delta_budget=delta_b)
    led.add(pure_dp_charge("private row count (Generative page)", epsilon=G.COUNT_EPSILON, mechanism="laplace",
                           relation=NeighbouringRelation.ADD_REMOVE, parts=(S.PART_PRIVATE,)))
    at.session_state[S.LEDGERS] = {ds.data_key: led}
    at = _kernel_private_choice(at)
    assert not at.exception
    led = at.session_state[S.LEDGERS][ds.data_key]
    relations = {c.relation for c in led.all_charges}
    # either refused (one charge, an error shown) or recorded with its own relation (then the ledger refuses it)
    assert len(led.all_charges) == 1 or None not in relations, [(c.label, c.relation) for c in led.all_charges]


# ---------------------------------------------------------------------------------------------- finding 5
def _gated_seeded_dpgm():
    """A Streamlit script: a tiny DPGM run through the gate in replay mode (tainted), then sampled and exported."""
    import numpy as np
    import streamlit as st

    from dpkme.generative import dpgm
    from ui import gate as G
    from ui import state as S

    S.init_defaults()
    X = np.random.default_rng(0).uniform(size=(61, 3))
    ds = S.Dataset(key="toy", data_key="toy", name="toy", source="generated", X=X, columns=["a", "b", "c"])
    run = G.run_private(page="generative", ds=ds, charges=lambda rows: [], noise_source="seeded",
                        uses_kernel=False,
                        compute=lambda inputs: dpgm(inputs.ds.X, bounds=(0, 1), n_private=64, k=1, epochs=1,
                                                    batch_size=16, hidden=(4,), latent_dim=2, epsilon=1.0,
                                                    delta=1e-5, rng=1))
    res = run.result
    st.session_state["out"] = {"private": run.private, "shape": res.sample(5).shape,
                               "exported": bool(res.to_dict())}


@pytest.mark.slow
def test_5_a_tainted_dpgm_run_through_the_gate_can_still_be_sampled_and_exported():
    from streamlit.testing.v1 import AppTest

    at = AppTest.from_function(_gated_seeded_dpgm, default_timeout=300).run()
    assert not at.exception, [e.value for e in at.exception]
    out = at.session_state["out"]
    assert out["private"] is False and out["shape"] == (5, 3) and out["exported"]


# ---------------------------------------------------------------------------------------------- finding 6
def test_6a_a_reset_keeps_the_count_of_not_private_runs():
    at = new_app(120).run()
    at.switch_page("pages/release.py").run()
    at.radio(key=S.NOISE_SOURCE).set_value("seeded").run()
    at.button(key="rel.go").click().run()
    assert not at.exception
    ds = at.session_state[S.DATASET]
    assert at.session_state[S.NONPRIVATE].get(ds.data_key) == 1
    at.switch_page("pages/ledger.py").run()
    assert any("NOT differentially private" in e.value for e in at.error)
    at.checkbox(key="bud.confirm").check().run()
    at.button(key="bud.reset").click().run()
    assert not at.exception
    assert at.session_state[S.NONPRIVATE].get(ds.data_key) == 1, "the reset forgot a not-private run"
    assert any("NOT differentially private" in e.value for e in at.error)


def test_6b_the_other_datasets_table_counts_archived_charges():
    at = new_app(120).run()
    eps_b, delta_b = float(at.session_state[S.BUDGET_EPS]), float(at.session_state[S.BUDGET_DELTA])
    other = BudgetLedger(epsilon_budget=eps_b, delta_budget=delta_b)
    other.add(pure_dp_charge("a release of the other data", epsilon=2.0,
                             relation=NeighbouringRelation.REPLACE_ONE))
    other.reset()                                                   # archived: still spent
    at.session_state[S.LEDGERS] = {"other-people": other}
    at.session_state[S.LEDGER_NAMES] = {"other-people": "other people"}
    at.switch_page("pages/ledger.py").run()
    assert not at.exception
    tables = [d.value for d in at.dataframe if "headline ε" in list(d.value.columns)]
    assert tables, "no 'Other datasets' table"
    row = tables[0][tables[0]["data"] == "other people"].iloc[0]
    # the archive counts (0 without it); at δ > 0 the accountants may certify a little less than the pure ε = 2
    assert row["basic ε"] == pytest.approx(2.0) and row["headline ε"] > 1.99, row.to_dict()


# ---------------------------------------------------------------------------------------------- finding 7
def test_7_laplace_scale_is_never_below_sensitivity_over_epsilon():
    from dpkme.privacy.calibration import calibrate_laplace

    below = [e for e in (0.05, 0.1, 0.3, 0.7, 1.0, 1.5, 2.0, 3.0, 7.0)
             if Fraction(calibrate_laplace(epsilon=e, l1_sensitivity=1.0).scale) < 1 / Fraction(e)]
    assert not below, below


# ---------------------------------------------------------------------------------------------- finding 8
def _figure_ranges(at) -> dict:
    out = {}
    for f in plotly_figures(at):
        lay = f.get("layout", {})
        title = lay.get("title")
        title = title.get("text") if isinstance(title, dict) else title
        out[title] = (lay.get("xaxis", {}).get("range"), lay.get("yaxis", {}).get("range"))
    return out


def test_8_the_projected_release_figure_does_not_depend_on_the_private_rows():
    at = new_app(120).run()
    at.switch_page("pages/release.py").run()
    at.button(key="rel.go").click().run()
    ok(at)
    at.session_state[P.PRESENT] = True
    at.run()
    before = _figure_ranges(at)["The released weighted points"]
    ds = at.session_state[S.DATASET]
    ds.X[:] = 3.0 * ds.X                                # other private rows, the same release
    at.run()
    after = _figure_ranges(at)["The released weighted points"]
    assert before == after, (before, after)


# ---------------------------------------------------------------------------------------------- finding 9
def test_9_a_lowered_budget_applies_to_the_ledgers_of_other_individuals():
    at = new_app(120)
    at.session_state["tst.mode"] = "one"
    at.session_state["tst.source"] = "case"
    at.session_state["tst.n"] = 500
    at.run()
    at.switch_page("pages/twosample.py").run()
    at.button(key="tst.go").click().run()
    ok(at)
    key = next(k for k in at.session_state[S.LEDGERS] if k.startswith("two-sample lab"))
    assert len(at.session_state[S.LEDGERS][key]) == 2                  # mean and second moment, ε = 1 in all
    at.session_state[S.BUDGET_EPS] = 1.0                                # the user lowers the total budget
    at.run()
    at.button(key="tst.go").click().run()                               # ε = 1 more: beyond 1, no permission
    assert not at.exception
    led = at.session_state[S.LEDGERS][key]
    spent = led.totals(delta=float(at.session_state[S.BUDGET_DELTA]))["best"][0]
    assert len(led) == 2 or spent <= 1.0 + 1e-9, f"spent ε = {spent:.3g} beyond the budget of 1 without permission"


# ---------------------------------------------------------------------------------------------- finding 10
def _table_csv(seed: int, shift: float) -> bytes:
    A = np.random.default_rng(seed).standard_normal((400, 3)) + np.array([shift, 0, 0])
    return ("a,b,c\n" + "\n".join(",".join(f"{v:.5f}" for v in row) for row in A) + "\n").encode()


def test_10_the_same_uploaded_samples_swapped_are_charged_to_the_same_individuals():
    at = new_app(120)
    at.session_state["tst.mode"] = "one"
    at.session_state["tst.source"] = "upload"
    at.run()
    at.switch_page("pages/twosample.py").run()
    x, y = _table_csv(0, 0.0), _table_csv(1, 2.0)
    at.get("file_uploader")[0].set_value(("x.csv", x, "text/csv")).run()
    at.get("file_uploader")[1].set_value(("y.csv", y, "text/csv")).run()
    at.button(key="tst.go").click().run()
    ok(at)
    first = at.session_state["tst.result"]["ledger_key"]
    spent_before = len(at.session_state[S.LEDGERS][first].all_charges)
    assert spent_before == 2                       # this sample's own ledger: its holder's mean and second moment
    at.get("file_uploader")[0].set_value(("y.csv", y, "text/csv")).run()    # the same two files, swapped
    at.get("file_uploader")[1].set_value(("x.csv", x, "text/csv")).run()
    at.button(key="tst.go").click().run()
    ok(at)
    second = at.session_state["tst.result"]["ledger_key"]
    led = at.session_state[S.LEDGERS][second]
    assert len(led.all_charges) == 2 * spent_before, (first, second, len(led.all_charges))


# ---------------------------------------------------------------------------------------------- finding 11
def test_11_an_imported_charge_of_an_unknown_split_is_not_composed_in_parallel():
    led = BudgetLedger(epsilon_budget=5, delta_budget=1e-5, partition="split:A")
    led.add(pure_dp_charge("a release", epsilon=1.0, relation="replace-one", parts=(S.PART_PRIVATE,)))
    old = {"format": BudgetLedger.LEDGER_FORMAT, "charges": [
        {"label": "a test on held-out rows (a file without split ids)", "mechanism": "exponential", "epsilon": 1.0,
         "delta": 0.0, "relation": "replace-one", "parts": [S.PART_HELDOUT]}]}
    led.merge(BudgetLedger.from_json(json.dumps(old)))
    assert led.totals()["basic"][0] == pytest.approx(2.0), [(c.label, c.parts, c.split_id) for c in led.all_charges]


# ---------------------------------------------------------------------------------------------- what held
def test_held_a_crafted_ledger_file_cannot_lower_a_recorded_charge_nor_smuggle_a_weak_one():
    """Import: a record with an existing id keeps the recorded cost; bad fields are refused with a ValueError."""
    led = BudgetLedger(epsilon_budget=5, delta_budget=1e-5)
    c = led.add(pure_dp_charge("real", epsilon=2.0, relation="replace-one"))
    crafted = json.loads(led.to_json())
    crafted["charges"][0]["epsilon"] = 0.01                            # same id, lower cost
    merge = led.merge(BudgetLedger.from_json(json.dumps(crafted)))
    assert not merge.added and led.totals()["basic"][0] == pytest.approx(2.0) and c in led
    for field, value in (("epsilon", float("nan")), ("epsilon", -1), ("count", 0), ("count", 1.5),
                         ("delta", 0.5), ("noise_multiplier", 0.01), ("parts", "private rows"),
                         ("relation", "swap-two"), ("mechanism", "magic")):
        bad = json.loads(led.to_json())
        bad["charges"][0] = {**bad["charges"][0], field: value, "id": "x" + field}
        with pytest.raises(ValueError):
            BudgetLedger.from_json(json.dumps(bad))
    gauss = json.loads(led.to_json())
    gauss["charges"][0] = {"label": "g", "mechanism": "gaussian", "epsilon": 1.0, "delta": 1e-6,
                           "noise_multiplier": 0.5}                     # far too little noise for (1, 1e-6)
    with pytest.raises(ValueError, match="under-count"):
        BudgetLedger.from_json(json.dumps(gauss))
