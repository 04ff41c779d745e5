"""A usable release file and a plain-language guarantee (issue 16, finding 4 and "A plain-language guarantee").

Found in a browser: the app's default releases had signed "free" weights (Σ|w| = 153 at ε = 0.15), the CSV printed
numbers as ``39.799999999999997``, there was no download of N unweighted synthetic rows for numeric data, and no
release said in plain words what its ε and δ mean for one person. Here: probability weights by default (signed
weights stay as the paper's option), shortest round-trip numbers, N synthetic rows rounded to each column's public
precision, and the guarantee in words (dpkme.privacy.explain) on the Release page and in every JSON download.
"""

from __future__ import annotations

import io
import json
import re

import numpy as np
import pandas as pd
import pytest

from dpkme.kernels import GaussianKernel
from dpkme.privacy.explain import attack_accuracy_bound, guarantee_in_words, release_guarantee_in_words
from tests.support.app import decode, new_app, ok, plotly_figures, public_app
from tests.support.app_tables import mixed_csv
from tests.support.recipes import numeric_csv, numeric_dataset, record, table_dataset
from ui import datasets as D
from ui import export as E
from ui import state as S

#: A number written with float noise: 39.799999999999997, 0.30000000000000004, 4041.5666666666662 ...
FLOAT_NOISE = re.compile(r"\d\.\d*(?:9{6,}|0{6,})\d")


# ---------------------------------------------------------------------- the guarantee in words (library)
def test_guarantee_in_words_says_what_epsilon_and_delta_mean_for_one_person():
    text = guarantee_in_words(epsilon=1.0, delta=1e-6, n_private=4275, mechanism="algorithm1", n_public=250,
                              n_heldout=475)
    for needle in ("4,275 private rows", "unit of privacy is one row", "Replacing any one person's row",
                   "factor e^ε = 2.72", "δ = 10⁻⁶", "right at most 73 %", "coin flip", "250 rows declared public",
                   "not protected", "475 held-out rows", "Algorithm 1"):
        assert needle in text, needle
    assert 2 <= text.count(". ") + 1 <= 5                               # a few sentences, not a paper
    added = guarantee_in_words(epsilon=0.15, delta=1e-5, neighbouring="add-remove", n_private=300)
    assert "Adding or removing any one person's row" in added and "e^ε = 1.16" in added and "53.7 %" in added
    assert "Warning: δ" in guarantee_in_words(epsilon=1.0, delta=0.01, n_private=1000)   # δ ≥ 1/N is not small
    assert "reads none of" in guarantee_in_words(epsilon=0.0, delta=0.0, n_private=10)
    no = guarantee_in_words(epsilon=1.0, delta=1e-6, private=False, reasons=["the noise is seeded."])
    assert no.startswith("This release is NOT differentially private: the noise is seeded.") and "e^ε" not in no
    assert attack_accuracy_bound(1.0, 1e-6) == pytest.approx((np.e + 1e-6) / (1 + np.e))
    assert attack_accuracy_bound(1e6) == 1.0
    for bad in ({"epsilon": -1.0}, {"epsilon": "1"}, {"delta": 1.5}, {"neighbouring": "swap"}, {"n_private": -3}):
        with pytest.raises(ValueError):
            guarantee_in_words(**{"epsilon": 1.0, "delta": 1e-6, **bad})


def test_the_guarantee_of_a_release_follows_its_privacy_claim():
    ds = numeric_dataset(numeric_csv())
    kernel = GaussianKernel(lengthscale=1.0)
    real = record(ds, "alg1-public", {"n_points": 10, "basis": "full", "weights": "simplex"}, kernel=kernel)
    assert f"{ds.n:,} private rows" in release_guarantee_in_words(real.release)
    demo = record(ds, "alg1-public", {"n_points": 10, "basis": "full", "weights": "simplex"}, kernel=kernel, seed=3)
    text = release_guarantee_in_words(demo.release)
    assert text.startswith("This release is NOT differentially private") and "seed" in text


# ---------------------------------------------------------------------- the files (ui.export)
def test_csv_numbers_are_written_without_float_noise():
    """Finding 4: the CSV printed 39.799999999999997 (``%.17g``); undoing a declared scaling added more noise."""
    ds = numeric_dataset(numeric_csv())                     # standardised with the publishable rows
    rec = record(ds, "alg1-public", {"n_points": 25, "basis": "full", "weights": "simplex"},
                 kernel=GaussianKernel(lengthscale=1.0))
    text = E.release_csv(rec, ds).decode()
    assert not FLOAT_NOISE.search(text), FLOAT_NOISE.search(text)
    back = pd.read_csv(io.StringIO(text))
    # the points are the publishable rows, read back exactly as the data file writes them (1 and 0 decimals)
    np.testing.assert_array_equal(back["bill_mm"], np.round(back["bill_mm"], 1))
    np.testing.assert_array_equal(back[["bill_mm", "mass_g"]], ds.to_original_units(rec.release.points).round(6))
    np.testing.assert_array_equal(back["weight"], rec.release.weights)          # weights exact


def test_column_precision_comes_from_public_information_only():
    ds = numeric_dataset(numeric_csv())
    prec = {p["column"]: p for p in E.column_precision(ds)}
    assert prec["bill_mm"]["decimals"] == 1 and prec["mass_g"]["decimals"] == 0
    assert "publishable rows" in prec["bill_mm"]["source"]
    boxed = numeric_dataset(numeric_csv(), public_fraction=0.0, public_declared=False, scaling="box",
                            box=([20.0, 2000.0], [70.0, 7000.0]), clip=True)
    prec = {p["column"]: p for p in E.column_precision(boxed)}
    assert prec["bill_mm"]["decimals"] == 3 and prec["mass_g"]["decimals"] == 1     # 1e-4 of 50 and of 5000
    assert "declared range" in prec["mass_g"]["source"]
    plain = D.build_dataset(D.DEFAULT_SPEC)                  # generated, no publishable rows, no declared box
    assert all(p["decimals"] is None and p["significant"] == 4 for p in E.column_precision(plain))
    assert "4 significant digits" in E.precision_text(plain)


def test_numeric_synthetic_rows_are_n_unweighted_rows_from_the_probability_weights():
    ds = numeric_dataset(numeric_csv())
    kernel = GaussianKernel(lengthscale=1.0)
    rec = record(ds, "alg1-public", {"n_points": 25, "basis": "full", "weights": "simplex"}, kernel=kernel)
    rows = E.numeric_synthetic_rows(rec, ds, ds.n)
    assert list(rows.columns) == ["bill_mm", "mass_g"] and len(rows) == ds.n
    assert rows["mass_g"].dtype.kind == "i"                                      # 0 decimals: whole numbers
    released = {tuple(r) for r in ds.to_original_units(rec.release.points[rec.release.weights > 0]).round(1)}
    assert {tuple(r) for r in rows.to_numpy(dtype=float).round(1)} <= released  # only points with weight > 0
    assert not FLOAT_NOISE.search(E.synthetic_csv(rows).decode())
    again = E.numeric_synthetic_rows(rec, ds, ds.n)
    assert not rows.equals(again)                            # a real release: fresh OS entropy, nothing recorded
    # signed (the paper's free) weights: drawn from their projection onto the simplex
    signed = record(ds, "alg1-public", {"n_points": 25, "basis": "full", "weights": "free"}, kernel=kernel, seed=8)
    assert (signed.release.weights < 0).any()
    p, how = E.probability_weights(signed)
    assert how == "projected" and (p >= 0).all() and p.sum() == pytest.approx(1.0)
    a, b = E.numeric_synthetic_rows(signed, ds, 50), E.numeric_synthetic_rows(signed, ds, 50)
    pd.testing.assert_frame_equal(a, b)                      # a seeded demo replays (a child of its seed)


def test_every_json_download_states_the_guarantee_in_words():
    ds = numeric_dataset(numeric_csv())
    kernel = GaussianKernel(lengthscale=1.0)
    rec = record(ds, "alg1-public", {"n_points": 10, "basis": "full", "weights": "simplex"}, kernel=kernel)
    meta = json.loads(E.release_json(rec, ds))
    assert meta["differentially_private"] is True and meta["seed"] is None
    words = meta["guarantee_in_words"]
    assert f"{ds.n:,} private rows" in words and f"{ds.n_public:,} rows declared public" in words
    assert words == E.guarantee_text(rec, ds)                # the page shows the same words
    demo = record(ds, "alg1-public", {"n_points": 10, "basis": "full", "weights": "simplex"}, kernel=kernel, seed=2)
    assert json.loads(E.release_json(demo, ds))["guarantee_in_words"].startswith("This release is NOT")
    table = table_dataset(mixed_csv(150))
    trec = record(table, "alg2", {"n_points": 10, "n_features": 100, "solver": "pursuit-joint", "start": "q",
                                  "q_scale": 1.0}, kernel=GaussianKernel(lengthscale=1.0))
    assert "protects each of the" in json.loads(E.table_json(trec, table))["guarantee_in_words"]


# ---------------------------------------------------------------------- the Release page (AppTest)
def _release(at):
    at.button(key="rel.go").click().run()
    ok(at)
    return at.session_state[S.RELEASES][-1]


def test_default_release_has_probability_weights_and_the_paper_s_signed_weights_are_an_option():
    """Finding 4: signed 'free' weights by default (Σ|w| = 153 at ε = 0.15)."""
    at = public_app().run()
    at.switch_page("pages/release.py").run()
    ok(at)
    radio = at.radio(key=S.WEIGHTS)
    assert radio.value == "simplex"
    assert "paper's option" in radio.format_func("free") and "signed" in radio.help.lower()
    rec = _release(at)
    w = rec.release.weights
    assert rec.release.params["weights"] == "simplex" and (w >= 0).all() and w.sum() == pytest.approx(1.0)
    # the paper's signed weights on request: negative ones are drawn as diamonds
    radio.set_value("free").run()
    rec = _release(at)
    assert rec.release.params["weights"] == "free" and (rec.release.weights < 0).any()
    synth = [t for t in plotly_figures(at)[0]["data"] if t["name"].startswith("synthetic")]
    assert any(t["marker"]["symbol"] == "diamond" for t in synth if (decode(t["marker"]["color"]) < 0).all())
    # Algorithm 2 gives probability weights too
    at.selectbox(key=S.MECHANISM).set_value("alg2").run()
    at.number_input(key=S.N_POINTS).set_value(30).run()
    rec = _release(at)
    assert rec.release.params["solver_options"]["weights"] == "simplex"
    assert rec.release.weights.min() >= 0 and rec.release.weights.sum() == pytest.approx(1.0)


def test_release_page_shows_the_guarantee_and_offers_rows_and_the_recipe():
    at = public_app().run()
    at.switch_page("pages/release.py").run()
    rec = _release(at)
    ds = at.session_state[S.DATASET]
    boxes = [i.value for i in at.info if "The guarantee, in plain words" in i.value]
    assert len(boxes) == 1 and "e^ε = 2.72" in boxes[0] and f"{ds.n:,} private rows" in boxes[0]
    labels = [b.label for b in at.get("download_button")]
    assert f"Synthetic rows: {ds.n:,} unweighted" in labels
    assert {"CSV: points + weights", "JSON: parameters", "Recipe: Python script", "Recipe: Jupyter notebook"} <= set(labels)
    # no new label matches the browser tests' "CSV" / "JSON" filters (Playwright's has_text ignores case)
    assert sum("csv" in x.lower() for x in labels) == 1 and sum("json" in x.lower() for x in labels) == 1
    assert any("Rounded from public information only" in c.value for c in at.caption)
    # the recipe the buttons carry re-runs this release: its parameters, no seed
    recipe = E.recipe(rec, ds)
    assert (recipe["epsilon"], recipe["n_points"], recipe["points"]) == (1.0, 200, "public")
    assert recipe["kernel"] == rec.release.kernel.to_dict() and "replay_seed" not in recipe
    # a replay-mode demo says it is not private, in the same place
    at.radio(key=S.NOISE_SOURCE).set_value("seeded").run()
    at.button(key="rel.go").click().run()
    assert not at.exception
    assert any(w.value.startswith("**In plain words.** This release is NOT differentially private")
               for w in at.warning)


def test_a_table_release_shows_the_guarantee_and_its_recipe():
    at = new_app()
    ds = table_dataset(mixed_csv(150))
    for key, value in {S.DATASET: ds, S.LENGTHSCALE: 1.0, S.LENGTHSCALE_SOURCE: "suggested", S.Q_SCALE: 1.0,
                       S.N_POINTS: 20, S.N_FEATURES: 200}.items():
        at.session_state[key] = value
    at.run()
    at.switch_page("pages/release.py").run()
    at.selectbox(key=S.MECHANISM).set_value("alg2").run()   # Algorithm 2 (a table's default: adaptive)
    ok(at)
    assert at.selectbox(key=S.MECHANISM).value == "alg2"
    rec = _release(at)
    assert any("The guarantee, in plain words" in i.value for i in at.info)
    labels = [b.label for b in at.get("download_button")]
    assert {"Recipe: Python script", "Recipe: Jupyter notebook", "CSV: weighted rows"} <= set(labels)
    assert E.recipe(rec, ds)["schema"] == ds.schema.to_dict()
