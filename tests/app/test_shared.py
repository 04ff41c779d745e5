"""The app's shared helpers (ui/) without a Streamlit run, plus helpers for the page tests.

What is checked here: datasets are built from declared/public constants only (never
from the private rows), downloads are built in memory with the fields a third
party needs (and no seed for real releases), the mechanism registry is complete,
and the charge the app computes *before* a release equals what the library does.
"""

from __future__ import annotations

import io
import json
import math

import numpy as np
import pandas as pd
import pytest

from tests.support.app import public_app

# ---------------------------------------------------------------------- datasets
from ui import datasets as D
from ui import export as E
from ui import state as S


def _spec(**kw):
    """The default data with a declared-public 5 % subset (most tests here need public rows)."""
    return {**D.DEFAULT_SPEC, "public_fraction": 0.05, "public_declared": True, **kw}


def test_default_dataset_publishes_no_rows():
    """Issue 13: the default publishes nothing in the clear; every non-held-out row is private."""
    ds = D.build_dataset(D.DEFAULT_SPEC)
    assert ds.n_public == 0 and ds.n == 4500 and ds.n_heldout == 500
    assert ds.preprocessing_record()["n_private"] == ds.n == 4500
    assert "published in the clear" not in ds.guarantee()


def test_a_publishable_subset_needs_the_statement_that_its_rows_are_public():
    with pytest.raises(ValueError, match="state that those rows are public"):
        D.build_dataset({**D.DEFAULT_SPEC, "public_fraction": 0.05})
    ds = D.build_dataset(_spec())
    assert ds.guarantee().startswith("differentially private for the 4,275 private rows; 250 rows published")


def test_n_private_is_one_number_in_every_record():
    """Issue 13: n_private was 4 275 in one record and 4 750 in another (the count before the held-out split)."""
    ds = D.build_dataset(_spec())
    rec = ds.preprocessing_record()
    assert rec["n_private"] == rec["split"]["n_private"] == ds.n == 4275
    assert rec["n_published_in_clear"] == 250 and rec["split"]["n_heldout"] == 475
    assert "4750" not in json.dumps(rec)


def test_default_dataset_is_the_paper_mixture_with_public_and_heldout_parts():
    ds = D.build_dataset(_spec())
    n = D.DEFAULT_SPEC["params"]["n"]
    assert ds.n_public == round(0.05 * n)
    assert ds.n_heldout == round(0.1 * (n - ds.n_public))
    assert ds.n + ds.n_public + ds.n_heldout == n
    assert ds.dim == 2 and ds.scaling is None
    # the paper's kernel (γ = 1e-4/D -> lengthscale 100 for D = 2) and q = N(0, 500² I): public settings
    assert ds.suggested_lengthscale == pytest.approx(100.0)
    assert ds.q_scale == 500.0 and np.all(ds.q_center == 0)


def test_the_three_parts_are_disjoint_rows_of_the_generated_table():
    from dpkme.datasets import GENERATORS

    spec = _spec(params={"n": 400, "dim": 2, "n_components": 10})
    ds = D.build_dataset(spec)
    X_all = GENERATORS["paper_mixture"](**spec["params"], random_state=spec["seed"])
    parts = np.concatenate([ds.X, ds.public, ds.heldout])
    assert sorted(map(tuple, parts)) == sorted(map(tuple, X_all))


def test_standardisation_uses_the_publishable_subset_not_the_private_rows():
    ds = D.build_dataset(_spec(scaling="public"))
    assert ds.scaling is not None and "publishable" in ds.scaling.source
    # the publishable subset is standardised exactly; the private rows only approximately
    assert np.allclose(ds.public.mean(axis=0), 0, atol=1e-12)
    assert np.allclose(ds.public.std(axis=0, ddof=1), 1, atol=1e-12)
    assert not np.allclose(ds.X.mean(axis=0), 0, atol=1e-6)


def test_standardising_without_a_publishable_subset_is_refused():
    with pytest.raises(ValueError, match="publishable subset"):
        D.build_dataset(_spec(scaling="public", public_fraction=0.0))


def test_declared_box_scaling_and_clipping():
    box = ([-100.0, -100.0], [300.0, 300.0])
    ds = D.build_dataset(_spec(scaling="box", box=box, clip=True))
    assert ds.scaling is not None and ds.clip_box is not None
    assert ds.X.min() >= -1 - 1e-12 and ds.X.max() <= 1 + 1e-12   # box mapped onto [-1, 1]
    assert ds.n_clipped > 0                                        # the mixture extends beyond it
    back = ds.to_original_units(ds.X)
    assert back.min() >= -100 - 1e-9 and back.max() <= 300 + 1e-9


def test_uploads_need_columns_and_refuse_text_and_missing_values():
    from dpkme.io import load_table

    df = load_table(b"a,b,name\n1,2,x\n3,4,y\n5,,z\n", filename="t.csv")
    base = {"source": "upload", "upload_hash": "h", "filename": "t.csv", "public_fraction": 0.0,
            "heldout_fraction": 0.0, "scaling": "none", "box": None, "clip": False}
    with pytest.raises(ValueError, match="no columns"):
        D.build_dataset({**base, "columns": []}, df)
    with pytest.raises(ValueError, match="not a number"):
        D.build_dataset({**base, "columns": ["a", "name"]}, df)
    with pytest.raises(ValueError, match="missing"):
        D.build_dataset({**base, "columns": ["a", "b"]}, df)
    ds = D.build_dataset({**base, "columns": ["a", "b"], "drop_missing": True}, df)
    assert ds.n == 2 and any("dropped" in n for n in ds.notes)


def test_median_heuristic_is_the_median_pairwise_distance():
    P = np.array([[0.0, 0.0], [3.0, 4.0], [6.0, 8.0]])
    assert D.median_heuristic(P) == pytest.approx(5.0)   # distances 5, 5, 10


# ---------------------------------------------------------------------- downloads
def _record(noise="seeded", ds=None):
    from dpkme.release.subspace import algorithm1
    from dpkme.reproduce import paper_kernel

    ds = ds or D.build_dataset(_spec(params={"n": 600, "dim": 2, "n_components": 10}))
    seed = 3 if noise == "seeded" else None
    rel = algorithm1(ds.X, ds.public[:20], kernel=paper_kernel(2), epsilon=1.0, delta=1e-6,
                     points_are_sample=True, random_state=seed)
    return S.ReleaseRecord(id=7, release=rel, dataset_key=ds.key, data_key=ds.data_key, dataset_name=ds.name,
                           mechanism_key="alg1-public", mechanism_label="Algorithm 1", private=noise != "seeded",
                           charge=None), ds


def test_csv_download_has_points_in_original_units_and_weights():
    rec, ds = _record()
    df = pd.read_csv(io.BytesIO(E.release_csv(rec, ds)))
    assert list(df.columns) == ["x1", "x2", "weight"]
    assert np.allclose(df[["x1", "x2"]].to_numpy(), rec.release.points)
    assert np.allclose(df["weight"].to_numpy(), rec.release.weights, rtol=0, atol=0)


def test_csv_download_undoes_the_declared_scaling():
    ds = D.build_dataset(_spec(params={"n": 600, "dim": 2, "n_components": 10}, scaling="public"))
    rec, _ = _record(ds=ds)
    df = pd.read_csv(io.BytesIO(E.release_csv(rec, ds)))
    assert np.allclose(df[["x1", "x2"]].to_numpy(), ds.scaling.inverse(rec.release.points))


def test_json_download_has_the_parameters_and_no_private_evaluation():
    rec, ds = _record()
    rec.metrics = {"distance": 0.123456789}
    meta = json.loads(E.release_json(rec, ds))
    for key in ("mechanism", "epsilon", "delta", "sigma", "kernel", "seed", "version", "noise_source",
                "sensitivity", "calibration", "neighbouring", "preprocessing"):
        assert key in meta, key
    assert meta["mechanism"] == "algorithm1" and meta["seed"] == 3 and meta["noise_source"] == "seeded"
    assert meta["kernel"]["name"] == "gaussian"
    assert "0.123456789" not in json.dumps(meta)   # evaluations use private data: never exported


def test_seeded_json_is_a_replayable_demo_not_private():
    """Red team (issue 13): a seeded release's JSON said "differentially_private": true next to its seed."""
    rec, ds = _record()
    rec.private = True                             # even if the app forgot to mark it, the library's claim wins
    meta = json.loads(E.release_json(rec, ds))
    assert meta["seed"] == 3 and meta["differentially_private"] is False
    assert meta["status"] == "replayable demo, not private" and "seed" in meta["warning"]


def test_real_releases_export_no_seed():
    rec, ds = _record(noise="os-entropy")
    assert rec.release.noise_source == "os-entropy"
    meta = json.loads(E.release_json(rec, ds))
    assert meta["seed"] is None and meta["differentially_private"] is True
    assert meta["guarantee"].startswith("differentially private for the")
    assert meta["preprocessing"]["n_private"] == rec.release.n_private == ds.n


# ---------------------------------------------------------------------- registry and charges
def test_registry_lists_the_baseline_and_both_algorithm1_variants():
    from ui.mechanisms import REGISTRY

    assert {"baseline", "alg1-public", "alg1-q"} <= set(REGISTRY)
    assert "alg2" in REGISTRY          # Algorithm 2 is always there (no presence check)
    for spec in REGISTRY.values():
        assert spec.label and spec.explain and callable(spec.run) and callable(spec.charge)


@pytest.mark.parametrize("method", ["analytic", "classic"])
def test_charge_computed_before_the_run_matches_the_library_release(method):
    """The ledger charge uses the same σ/Δ as the release the library then produces."""
    from streamlit.testing.v1 import AppTest  # noqa: F401  (streamlit importable)

    from dpkme.reproduce import paper_kernel
    from ui.mechanisms import REGISTRY, RunContext

    ds = D.build_dataset(_spec(params={"n": 800, "dim": 2, "n_components": 10}))
    ctx = RunContext(ds=ds, kernel=paper_kernel(2), epsilon=0.5, delta=1e-6, calibration=method,
                     sensitivity_mode="tight", random_state=1, noise_source="seeded")
    spec = REGISTRY["alg1-public"]
    params = {"n_points": 30, "basis": "full", "weights": "free"}
    charge = spec.charge(ctx, params)
    rel = spec.run(ctx, params)
    assert charge.epsilon == rel.epsilon and charge.delta == rel.delta
    assert charge.noise_multiplier == pytest.approx(rel.sigma / rel.sensitivity, rel=1e-9)
    assert rel.sensitivity == pytest.approx(math.sqrt(2) / ds.n)


def test_epsilon_grid_is_log_spaced_from_0_01_to_10():
    from ui.compute import epsilon_grid

    g = epsilon_grid()
    assert g[0] == 0.01 and g[-1] == 10.0 and 1.0 in g
    ratios = np.diff(np.log(g))
    assert np.all(ratios > 0) and ratios.max() < math.log(2.01)


def test_owner_only_curve_csv_is_labelled_inside_the_file():
    """Issue 13: curve CSVs hold private quantities (distances to the private embedding) and said so only on
    the page; the file itself now says it is owner-only and not a private release."""
    t = pd.DataFrame({"method": ["Algorithm 1"], "epsilon": [1.0], "M": [10], "distance": [0.0123]})
    data = E.owner_only_csv(t)
    first = data.decode().splitlines()[0]
    assert first.startswith("# OWNER ONLY - NOT A PRIVATE RELEASE")
    back = pd.read_csv(io.BytesIO(data), comment="#")
    assert list(back.columns) == ["method", "epsilon", "M", "distance", "owner_only"]
    assert back["distance"].iloc[0] == 0.0123 and "do not publish" in back["owner_only"].iloc[0]


def test_release_numbers_are_counted_per_session_not_per_server():
    """Browser walk finding 7: a module-level counter numbered releases across every browser session of the server,
    which showed a new visitor how many releases other people had made."""
    first = public_app().run()
    first.switch_page("pages/release.py").run()
    first.button(key="rel.go").click().run()
    second = public_app().run()
    second.switch_page("pages/release.py").run()
    second.button(key="rel.go").click().run()
    assert not first.exception and not second.exception
    assert [r.id for r in first.session_state[S.RELEASES]] == [1]
    assert [r.id for r in second.session_state[S.RELEASES]] == [1]


def test_the_guarantee_line_does_not_claim_privacy_for_a_data_dependent_schema():
    """Browser walk finding 3: with columns read from the private rows, the sidebar and preview still said
    'differentially private for the N private rows'."""
    from types import SimpleNamespace

    ds = D.build_dataset(_spec())
    assert ds.guarantee().startswith("differentially private")
    ds.schema = SimpleNamespace(data_dependent=("age",))
    assert ds.guarantee().startswith("NOT differentially private") and "age" in ds.guarantee()
