"""Downloads, built in memory: the released points and weights (CSV) and the parameters (JSON).

What is *not* in a download: the RKHS distances and other evaluations shown in the
app (they are computed from the private rows), and -- for releases whose noise
came from OS entropy -- the seed (anyone holding the seed could regenerate the
noise and subtract it).
"""

from __future__ import annotations

import io
import json

import numpy as np
import pandas as pd

from . import state as S


def release_frame(rec: S.ReleaseRecord, ds: S.Dataset | None) -> pd.DataFrame:
    """Points in the data's original units (the declared scaling undone) and their weights."""
    r = rec.release
    pts = r.points if ds is None else ds.to_original_units(r.points)
    cols = [str(c) for c in (ds.columns if ds is not None and len(ds.columns) == r.dim
                             else [f"x{j + 1}" for j in range(r.dim)])]
    df = pd.DataFrame(pts, columns=cols)
    df["weight"] = r.weights
    return df


def release_csv(rec: S.ReleaseRecord, ds: S.Dataset | None) -> bytes:
    buf = io.StringIO()
    release_frame(rec, ds).to_csv(buf, index=False, float_format="%.17g")
    return buf.getvalue().encode("utf-8")


def release_metadata(rec: S.ReleaseRecord, ds: S.Dataset | None) -> dict:
    r = rec.release
    meta = r.metadata()
    meta["noise_source"] = r.noise_source
    if r.noise_source == "os-entropy":
        meta["seed"] = None
        meta["seed_withheld"] = (
            "the seed of a real release is kept by the data owner: publishing it would let anyone "
            "regenerate and subtract the noise"
        )
    else:
        meta["seed_note"] = (
            "seeded for teaching and replay: anyone with this seed can regenerate the noise, so this "
            "file is NOT a private release if the seed is published"
        )
    meta["differentially_private"] = bool(rec.private)
    if not rec.private:
        meta["warning"] = "NOT differentially private: " + "; ".join(rec.warnings or ["see the app"])
    meta["mechanism_label"] = rec.mechanism_label
    meta["dataset"] = rec.dataset_name
    if ds is not None:
        meta["preprocessing"] = ds.preprocessing_record()
        meta["points_units"] = "original units of the columns (the kernel acts on the scaled units below)" \
            if ds.scaling is not None else "original units of the columns"
    meta["csv_columns"] = list(release_frame(rec, ds).columns)
    meta["how_to_use"] = (
        "E[h(X)] ≈ Σ_m weight_m · h(point_m) (eq. (4) of Balog et al. 2018); the embedding is "
        "Σ_m weight_m k(point_m, ·) with the kernel above."
    )
    return meta


def release_json(rec: S.ReleaseRecord, ds: S.Dataset | None) -> bytes:
    return json.dumps(release_metadata(rec, ds), indent=2, default=_default).encode("utf-8")


def _default(o):
    if isinstance(o, np.ndarray):
        return o.tolist()
    if isinstance(o, (np.floating, np.integer)):
        return o.item()
    return str(o)


def file_stem(rec: S.ReleaseRecord) -> str:
    r = rec.release
    return f"dpkme_release_{rec.id}_{r.mechanism}_eps{r.epsilon:g}_M{r.n_points}"


# --------------------------------------------------------------------------- function (GP) releases
def function_frame(rec: S.ReleaseRecord, ds: S.Dataset | None) -> pd.DataFrame:
    """Grid points (original units) and the released function values; never the private true values."""
    r = rec.release
    pts = r.points if ds is None else ds.to_original_units(r.points)
    cols = [str(c) for c in (ds.columns if ds is not None and len(ds.columns) == r.dim
                             else [f"x{j + 1}" for j in range(r.dim)])]
    df = pd.DataFrame(pts, columns=cols)
    df["value"] = np.asarray(r.values).reshape(-1)
    return df


def function_csv(rec: S.ReleaseRecord, ds: S.Dataset | None) -> bytes:
    buf = io.StringIO()
    function_frame(rec, ds).to_csv(buf, index=False, float_format="%.17g")
    return buf.getvalue().encode("utf-8")


def function_json(rec: S.ReleaseRecord, ds: S.Dataset | None) -> bytes:
    r = rec.release
    meta = r.metadata()
    if r.noise_source == "os-entropy":
        meta["seed"] = None
    meta["differentially_private"] = bool(rec.private)
    meta["mechanism_label"] = rec.mechanism_label
    meta["dataset"] = rec.dataset_name
    if ds is not None:
        meta["preprocessing"] = ds.preprocessing_record()
    meta["csv_columns"] = list(function_frame(rec, ds).columns)
    return json.dumps(meta, indent=2, default=_default).encode("utf-8")
