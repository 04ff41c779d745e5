"""Downloads, built in memory: the released points and weights (CSV) and the parameters (JSON).

What is *not* in a download: the RKHS distances and other evaluations shown in the
app (they are computed from the private rows), and -- for real releases, whose noise
came from OS entropy or OpenDP -- any seed (anyone holding a seed could regenerate the
noise and subtract it). A file says ``"differentially_private": true`` only for a real
release with no data-dependent setting; seeded replays say "replayable demo, not private".
"""

from __future__ import annotations

import io
import json

import numpy as np
import pandas as pd

from dpkme.privacy.leaks import privacy_claim

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


def privacy_fields(obj, *, app_private: bool, reasons=(), ds: S.Dataset | None = None) -> dict:
    """The privacy claim of a download: ``differentially_private`` is true only if the library's claim
    (:func:`dpkme.privacy.leaks.privacy_claim`: real noise, nothing data-dependent) and the app's checks both
    hold; a file that says so never carries a seed. Seeded results say "replayable demo, not private"."""
    claim = privacy_claim(obj)
    private = bool(app_private and claim["differentially_private"])
    out: dict = {"differentially_private": private}
    if private:
        out["seed"] = None
        out["noise"] = "fresh noise nobody can regenerate (" + str(getattr(obj, "noise_source", "")) + "); no seed recorded"
        if ds is not None:
            out["guarantee"] = ds.guarantee()
    else:
        why = list(dict.fromkeys([*claim.get("not_private_because", []), *reasons]))
        out["status"] = ("replayable demo, not private" if getattr(obj, "noise_source", None) == "seeded"
                         else "NOT differentially private")
        out["warning"] = "NOT differentially private: " + "; ".join(why or ["see the app"])
    return out


def release_metadata(rec: S.ReleaseRecord, ds: S.Dataset | None) -> dict:
    r = rec.release
    meta = r.metadata()
    meta.pop("not_private_because", None)
    meta.update(privacy_fields(r, app_private=rec.private, reasons=rec.warnings, ds=ds))
    if meta["differentially_private"] and meta.get("seed") is not None:   # never: privacy_fields sets seed None
        raise RuntimeError("a file labelled differentially private would carry a seed; nothing was exported.")
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
    meta.pop("not_private_because", None)
    meta.update(privacy_fields(r, app_private=rec.private, reasons=rec.warnings, ds=ds))
    meta["mechanism_label"] = rec.mechanism_label
    meta["dataset"] = rec.dataset_name
    if ds is not None:
        meta["preprocessing"] = ds.preprocessing_record()
    meta["csv_columns"] = list(function_frame(rec, ds).columns)
    return json.dumps(meta, indent=2, default=_default).encode("utf-8")


# --------------------------------------------------------------------------- owner-only evaluations
OWNER_ONLY_NOTICE = ("# OWNER ONLY - NOT A PRIVATE RELEASE: these numbers were computed from the private rows "
                     "(distances to the private embedding). Do not publish this file.")


def owner_only_csv(df: pd.DataFrame) -> bytes:
    """A CSV of owner-only evaluations, labelled as such inside the file (first line, a ``#`` comment:
    ``pandas.read_csv(..., comment="#")`` reads it), plus an ``owner_only`` column on every row."""
    buf = io.StringIO()
    buf.write(OWNER_ONLY_NOTICE + "\n")
    out = df.copy()
    out["owner_only"] = "computed from the private rows - do not publish"
    out.to_csv(buf, index=False)
    return buf.getvalue().encode("utf-8")


# --------------------------------------------------------------------------- mixed tables (a declared schema)
def table_release(rec: S.ReleaseRecord, ds: S.Dataset):
    """The release of a schema dataset in the table's own terms (:class:`dpkme.release.tabular.TableRelease`)."""
    from dpkme.release.tabular import TableRelease

    if ds is None or ds.schema is None:
        raise ValueError("this release is not of a table with a declared schema.")
    if rec.release.dim != ds.schema.dim:
        raise ValueError(f"the release has {rec.release.dim} coordinates but the schema embeds rows in "
                         f"{ds.schema.dim}; it was made on other data.")
    return TableRelease(release=rec.release, schema=ds.schema)


def round_table(schema, df: pd.DataFrame) -> pd.DataFrame:
    """Rows rounded to each column's declared precision (continuous: ``decimals``; dates: whole days unless
    the schema declares decimals), integers as integers, categories as labels."""
    out = df.copy()
    for c in schema.columns:
        if c.name not in out:
            continue
        if c.kind == "continuous" and c.decimals is not None:
            out[c.name] = out[c.name].round(int(c.decimals))
        elif c.kind == "datetime" and not c.decimals:
            out[c.name] = pd.to_datetime(out[c.name]).dt.round("D")
    return out


def table_release_csv(rec: S.ReleaseRecord, ds: S.Dataset) -> bytes:
    """The weighted rows of a table release (original columns and types, rounded; a weight column)."""
    tr = table_release(rec, ds)
    df = round_table(ds.schema, tr.table())
    buf = io.StringIO()
    df.to_csv(buf, index=False)
    return buf.getvalue().encode("utf-8")


def synthetic_rows(rec: S.ReleaseRecord, ds: S.Dataset, n: int, *, spread: float = 1.0) -> pd.DataFrame:
    """``n`` unweighted rows resampled from a table release (:meth:`TableRelease.sample`: post-processing).

    A real release draws them with fresh OS entropy (nothing is recorded); a seeded demo from a child of its seed
    (so the demo replays).
    """
    r = rec.release
    rng = None if r.seed is None else np.random.default_rng([int(r.seed), 1_000_003])
    return round_table(ds.schema, table_release(rec, ds).sample(int(n), rng, spread=float(spread)))


def synthetic_csv(rows: pd.DataFrame) -> bytes:
    buf = io.StringIO()
    rows.to_csv(buf, index=False)
    return buf.getvalue().encode("utf-8")


def table_metadata(rec: S.ReleaseRecord, ds: S.Dataset) -> dict:
    """The JSON metadata of a table release: the release's parameters, its privacy claim (no seed for a real
    release) and the schema that decodes it."""
    tr = table_release(rec, ds)
    meta = release_metadata(rec, ds)
    meta["kind"] = "table"
    meta["schema"] = ds.schema.to_dict()
    meta["columns"] = list(ds.schema.names)
    meta["csv_columns"] = list(tr.table().columns)
    meta["points_units"] = ("the CSV holds the decoded rows (original columns and types); the kernel acts on the rows "
                            "embedded by the schema (dpkme.schema.TableSchema.encode)")
    meta["how_to_use"] = (
        "E[h(X)] ≈ Σ_m weight_m · h(row_m) / Σ_m weight_m over the weighted rows (eq. (4) of Balog et al. 2018); "
        "unweighted synthetic rows: dpkme.release.tabular.TableRelease.sample, post-processing at no privacy cost.")
    if meta["differentially_private"] and meta.get("seed") is not None:
        raise RuntimeError("a file labelled differentially private would carry a seed; nothing was exported.")
    return meta


def table_json(rec: S.ReleaseRecord, ds: S.Dataset) -> bytes:
    return json.dumps(table_metadata(rec, ds), indent=2, default=_default).encode("utf-8")
