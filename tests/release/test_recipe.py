"""Reproducible recipes (issue 16): a release of the app exported as a Python script and a notebook
(dpkme.recipe, ui.export.recipe) that re-run it with the library on a data file -- the same parameters, the
same split of the file into publishable / private / held-out rows, fresh OS-entropy noise and no seed.

The scripts run in a subprocess and the notebooks with nbclient, on small CSV files: Algorithm 2 and Algorithm 1
on numeric uploads, Algorithm 2 on a mixed table with a declared schema (dpkme.release_table).
"""

from __future__ import annotations

import io
import json
from pathlib import Path

import numpy as np
import pandas as pd
import pytest

from dpkme.kernels import GaussianKernel
from dpkme.recipe import check_recipe, recipe_notebook, recipe_script
from tests.support.app_tables import mixed_csv
from tests.support.recipes import numeric_csv, numeric_dataset, record, run_script, table_dataset
from ui import export as E

REPO = Path(__file__).resolve().parents[2]


def run_notebook(tmp_path: Path, rec, ds, data: bytes) -> dict:
    import nbformat
    from nbclient import NotebookClient

    nb = nbformat.reads(E.recipe_notebook(rec, ds).decode(), as_version=4)
    nbformat.validate(nb)
    (tmp_path / "data.csv").write_bytes(data)
    NotebookClient(nb, timeout=300, kernel_name="python3", resources={"metadata": {"path": str(tmp_path)}}).execute()
    errors = [o for c in nb.cells if c.cell_type == "code" for o in c.outputs if o.output_type == "error"]
    assert not errors, errors
    printed = "".join(o.get("text", "") for o in nb.cells[-1].outputs)
    assert "protects each of the" in printed            # the last cell prints the guarantee in words
    return json.loads((tmp_path / "release.json").read_text())


def same_parameters(meta: dict, rec, ds) -> None:
    """The re-run is the same release up to its fresh noise: mechanism, ε, δ, σ, kernel, M, N; private, no seed."""
    r = rec.release
    for key in ("mechanism", "epsilon", "delta", "sigma", "sensitivity", "neighbouring", "calibration", "kernel",
                "n_private"):
        assert meta[key] == json.loads(json.dumps(r.metadata()[key])), key
    assert meta["n_private"] == ds.n                              # the same split of the same file
    assert meta["differentially_private"] is True and meta["seed"] is None
    assert meta["noise_source"] == "os-entropy"
    assert "protects each of the" in meta["guarantee_in_words"] and f"{ds.n:,} private rows" in meta["guarantee_in_words"]
    assert "replay_seed" not in meta["recipe"]


# ---------------------------------------------------------------------- the three kinds of release
@pytest.mark.slow
def test_algorithm2_recipe_reruns_the_release_as_a_script_and_as_a_notebook(tmp_path):
    data = numeric_csv()
    ds = numeric_dataset(data)
    params = {"n_points": 15, "n_features": 200, "solver": "pursuit-joint", "start": "q", "q_scale": float(ds.q_scale)}
    rec = record(ds, "alg2", params, kernel=GaussianKernel(lengthscale=1.0))
    text = E.recipe_script(rec, ds).decode()
    assert "dpkme.algorithm2(" in text and "random_state=None" in text
    # no noise seed anywhere (the split seed only says which rows of the file were declared publishable)
    assert "seed" not in json.dumps(E.recipe(rec, ds)).replace('"split_seed"', "")
    (tmp_path / "script").mkdir()
    meta = run_script(tmp_path / "script", rec, ds, data)
    same_parameters(meta, rec, ds)
    assert meta["params"]["n_features"] == 200 and meta["params"]["solver"] == "pursuit-joint"
    assert meta["params"]["solver_options"]["weights"] == "simplex"               # probability weights, as in the app
    out = pd.read_csv(tmp_path / "script" / "out.csv")
    assert list(out.columns) == ["bill_mm", "mass_g", "weight"] and len(out) == meta["n_points"]
    assert (out["weight"] >= 0).all() and out["weight"].sum() == pytest.approx(1.0)
    (tmp_path / "nb").mkdir()
    same_parameters(run_notebook(tmp_path / "nb", rec, ds, data), rec, ds)


@pytest.mark.slow
def test_algorithm1_recipe_uses_the_same_publishable_points_in_original_units(tmp_path):
    data = numeric_csv()
    ds = numeric_dataset(data)
    rec = record(ds, "alg1-public", {"n_points": 25, "basis": "full", "weights": "simplex"},
                 kernel=GaussianKernel(lengthscale=1.0))
    assert "dpkme.algorithm1(" in E.recipe_script(rec, ds).decode()
    meta = run_script(tmp_path, rec, ds, data)
    same_parameters(meta, rec, ds)
    assert meta["params"]["points_source"] == "public" and meta["params"]["weights"] == "simplex"
    out = pd.read_csv(tmp_path / "out.csv")
    app = pd.read_csv(io.BytesIO(E.release_csv(rec, ds)))
    # the points are the publishable rows, in original units, written as the file writes them (39.8, not 39.79...)
    pd.testing.assert_frame_equal(out[["bill_mm", "mass_g"]], app[["bill_mm", "mass_g"]])
    assert not (tmp_path / "out.csv").read_text().count("9999999")
    assert not np.allclose(out["weight"], app["weight"])                       # fresh noise: a new release


@pytest.mark.slow
def test_table_recipe_runs_release_table_with_the_declared_schema(tmp_path):
    data = mixed_csv(200)
    ds = table_dataset(data)
    params = {"n_points": 20, "n_features": 200, "solver": "pursuit-joint", "start": "q", "q_scale": 1.0}
    rec = record(ds, "alg2", params, kernel=GaussianKernel(lengthscale=1.0))
    recipe = E.recipe(rec, ds)
    assert recipe["schema"] == ds.schema.to_dict() and recipe["data"]["columns"] == list(ds.schema.names)
    assert "dpkme.release_table(" in E.recipe_script(rec, ds).decode()
    (tmp_path / "a").mkdir()
    meta = run_script(tmp_path / "a", rec, ds, data)
    same_parameters(meta, rec, ds)
    assert meta["kind"] == "table" and meta["schema"] == ds.schema.to_dict()
    out = pd.read_csv(tmp_path / "a" / "out.csv")
    assert list(out.columns) == [*ds.schema.names, "weight"] and len(out) == meta["n_points"]
    assert set(out["region"].dropna()) <= {"east", "north", "south", "west"}
    (tmp_path / "nb").mkdir()
    nb_meta = run_notebook(tmp_path / "nb", rec, ds, data)
    same_parameters(nb_meta, rec, ds)
    assert nb_meta["kind"] == "table"


# ---------------------------------------------------------------------- seeds and non-private settings
@pytest.mark.slow
def test_a_replay_recipe_carries_its_labelled_seed_and_replays_the_demo_exactly(tmp_path):
    data = numeric_csv()
    ds = numeric_dataset(data)
    rec = record(ds, "alg1-public", {"n_points": 25, "basis": "full", "weights": "free"},
                 kernel=GaussianKernel(lengthscale=1.0), seed=41)
    recipe = E.recipe(rec, ds)
    assert recipe["replay_seed"] == 41 and recipe["not_private_because"] == []
    text = E.recipe_script(rec, ds).decode()
    assert "--replay" in text and "NOT private" in text
    meta = run_script(tmp_path, rec, ds, data, "--replay")
    assert meta["seed"] == 41 and meta["differentially_private"] is False
    assert meta["guarantee_in_words"].startswith("This release is NOT differentially private")
    out = pd.read_csv(tmp_path / "out.csv")
    np.testing.assert_array_equal(out["weight"].to_numpy(), rec.release.weights)   # the same demo, bit for bit
    fresh = run_script(tmp_path, rec, ds, data)                                     # without --replay: a real one
    assert fresh["seed"] is None and fresh["differentially_private"] is True


def test_a_real_release_recipe_has_no_seed_and_a_data_dependent_setting_stays_not_private():
    data = numeric_csv()
    ds = numeric_dataset(data)
    kernel = GaussianKernel(lengthscale=1.0)
    rec = record(ds, "alg1-q", {"n_points": 10, "q_scale": 1.0, "q_center": np.zeros(2), "basis": "full",
                                "weights": "simplex"}, kernel=kernel)
    recipe = E.recipe(rec, ds)
    assert "replay_seed" not in recipe and "seed" not in json.dumps(recipe).replace('"split_seed"', "")
    assert recipe["points"] == "q" and recipe["q_center"] == [0.0, 0.0] and recipe["q_scale"] == 1.0
    assert recipe["data"]["scaling"] == ds.scaling.to_dict() and recipe["weights"] == "simplex"
    leak = "the kernel lengthscale was chosen from the private rows (median heuristic)"
    bad = record(ds, "alg1-q", {"n_points": 10, "q_scale": 1.0, "q_center": np.zeros(2), "basis": "full",
                                "weights": "simplex"}, kernel=kernel, problems=[leak])
    assert E.recipe(bad, ds)["not_private_because"] == [leak]
    assert "NOT PRIVATE" in E.recipe_script(bad, ds).decode()


def test_recipes_refuse_what_they_cannot_rerun():
    base = {"mechanism": "algorithm1", "epsilon": 1.0, "delta": 1e-6, "n_points": 5, "q_scale": 1.0,
            "kernel": {"name": "gaussian", "lengthscale": 1.0}, "data": {"columns": ["a"]}}
    check_recipe(base)
    for bad, match in [({"mechanism": "gp"}, "mechanism"), ({"epsilon": 0}, "epsilon"), ({"delta": 1.0}, "delta"),
                       ({"points": "public"}, "public_fraction"), ({"data": {"columns": []}}, "columns"),
                       ({"neighbouring": "add-remove"}, "replace-one"), ({"q_scale": None}, "q_scale")]:
        with pytest.raises(ValueError, match=match):
            check_recipe({**base, **bad})
    with pytest.raises(ValueError, match="no 'kernel'"):
        check_recipe({k: v for k, v in base.items() if k != "kernel"})
    # the script and the notebook are valid Python / nbformat
    compile(recipe_script(base), "recipe.py", "exec")
    nb = json.loads(recipe_notebook(base))
    assert nb["cells"][1]["metadata"]["tags"] == ["parameters"]


@pytest.mark.slow
@pytest.mark.parametrize("epsilon", [0.8, 40.0], ids=["no-marginal-block", "marginal-block"])
def test_a_table_recipe_with_the_additive_kernel_replays_the_apps_release_exactly(tmp_path, epsilon):
    """The app's table release (additive kernel, release_table's preset and solver options, the marginal block
    where its public rule turns it on) and its recipe's dpkme.release_table run are the same release: same seed,
    same atoms and weights, bit for bit."""
    from dpkme.release.tabular import TABLE_REFIT, TABLE_REVIVE, TableRelease
    from ui.mechanisms.algorithm2 import TABLE_PRESET

    data = mixed_csv(200)
    ds = table_dataset(data)
    kernel = ds.schema.kernel(kind="additive")
    params = {"n_points": 20, "n_features": 200, "solver": "pursuit-joint", "start": "q", "q_scale": 1.0,
              "preset": TABLE_PRESET}
    rec = record(ds, "alg2", params, kernel=kernel, seed=7, epsilon=epsilon)
    recipe = E.recipe(rec, ds)
    assert recipe["kernel"]["name"] == "additive" and recipe["preset"] == TABLE_PRESET
    block = rec.release.params.get("marginals")
    assert (block is not None) == (epsilon > 1)          # the public rule: on at eps = 40 for these 180 rows
    assert recipe["marginal_share"] == (block["share"] if block else 0.0)
    assert recipe["solver_options"] == {"weights": "simplex", "revive": TABLE_REVIVE, "refit": TABLE_REFIT}
    assert "dpkme.release_table(" in E.recipe_script(rec, ds).decode()
    meta = run_script(tmp_path, rec, ds, data, "--replay")
    assert meta["seed"] == 7 and meta["differentially_private"] is False
    assert meta["kernel"] == json.loads(json.dumps(kernel.to_dict()))
    assert meta["params"]["solver_options"] == json.loads(json.dumps(rec.release.params["solver_options"]))
    out = pd.read_csv(tmp_path / "out.csv")
    np.testing.assert_array_equal(out["weight"].to_numpy(), rec.release.weights)       # the same release
    app = pd.read_csv(io.StringIO(TableRelease(release=rec.release, schema=ds.schema).to_csv()))
    pd.testing.assert_frame_equal(out, app)
