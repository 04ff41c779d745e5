"""Datasets and runners shared by the recipe tests (exported scripts and notebooks)."""

from __future__ import annotations

import json
import subprocess
import sys
import warnings
from pathlib import Path

import numpy as np
import pandas as pd

from dpkme.io import load_table
from dpkme.privacy.leaks import mark_not_private
from tests.support.app_tables import MIXED_SCHEMA
from ui import datasets as D
from ui import export as E
from ui import noise as N
from ui import state as S
from ui.mechanisms import REGISTRY, RunContext


# ---------------------------------------------------------------------- data and releases
def numeric_csv(n: int = 300) -> bytes:
    """Two measured columns written with 1 and 0 decimals (seeded: the same file in every run)."""
    rng = np.random.default_rng(11)
    df = pd.DataFrame({"bill_mm": np.round(rng.normal(44, 5, n), 1), "mass_g": np.round(rng.normal(4200, 700, n))})
    return df.to_csv(index=False).encode()


def numeric_dataset(data: bytes, **spec):
    frame = load_table(data, filename="data.csv")
    base = {"source": "upload", "upload_hash": "h", "filename": "data.csv", "columns": ["bill_mm", "mass_g"],
            "public_fraction": 0.1, "public_declared": True, "heldout_fraction": 0.1, "split_seed": 4,
            "scaling": "public", "box": None, "clip": False}
    return D.build_dataset({**base, **spec}, frame)


def table_dataset(data: bytes):
    frame = load_table(data, filename="visits.csv")
    spec = {"source": "upload", "upload_hash": "t", "filename": "visits.csv", "schema": MIXED_SCHEMA,
            "public_fraction": 0.0, "heldout_fraction": 0.1, "split_seed": 2}
    return D.build_table_dataset(spec, frame)


def record(ds, key: str, params: dict, *, kernel, seed: int | None = None, problems=(), epsilon: float = 0.8):
    """A release of the Release page's mechanism ``key`` with its record, as ui.runner.perform makes it."""
    source = N.REPLAY if seed is not None else N.REAL
    ctx = RunContext(ds=ds, kernel=kernel, epsilon=epsilon, delta=1e-6, calibration="analytic", sensitivity_mode="tight",
                     random_state=seed, noise_source=source)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        rel = REGISTRY[key].run(ctx, params)
    problems = [*problems, *([N.REPLAY_PROBLEM] if seed is not None else [])]
    if problems:
        mark_not_private(rel, problems, warn=False)
    return S.ReleaseRecord(
        id=5, release=rel, dataset_key=ds.key, data_key=ds.data_key, dataset_name=ds.name, mechanism_key=key,
        mechanism_label=REGISTRY[key].label, private=not problems, charge=None, warnings=list(problems),
        replay={"mechanism": key, "params": params, "epsilon": epsilon, "delta": 1e-6, "calibration": "analytic",
                "sensitivity_mode": "tight", "kernel": kernel.to_dict(), "seed": rel.seed, "noise_source": source})


def run_script(tmp_path: Path, rec, ds, data: bytes, *args: str) -> dict:
    """Write the recipe script and the data file, run ``python recipe.py data.csv --out out.csv``; the output JSON."""
    script = tmp_path / "recipe.py"
    script.write_bytes(E.recipe_script(rec, ds))
    (tmp_path / "data.csv").write_bytes(data)
    out = subprocess.run([sys.executable, str(script), "data.csv", "--out", "out.csv", *args], cwd=tmp_path,
                         capture_output=True, text=True, timeout=300)
    assert out.returncode == 0, out.stderr[-3000:]
    assert "wrote out.csv" in out.stdout
    return json.loads((tmp_path / "out.json").read_text())


