"""Downloads, built in memory: the released points and weights (CSV), the parameters (JSON), unweighted
synthetic rows (CSV) and a reproducible recipe (a Python script and a notebook, :mod:`dpkme.recipe`).

What is *not* in a download: the RKHS distances and other evaluations shown in the
app (they are computed from the private rows), and -- for real releases, whose noise
came from OS entropy or OpenDP -- any seed (anyone holding a seed could regenerate the
noise and subtract it). A file says ``"differentially_private": true`` only for a real
release with no data-dependent setting; seeded replays say "replayable demo, not private".

Numbers in the CSVs: the weighted points are written with the shortest text that reads back as the same
double, after rounding to 15 significant digits (so ``39.8`` is written ``39.8``, never
``39.799999999999997`` or ``39.800000000000004``: undoing a declared scaling leaves such float noise); the
weights exactly. Synthetic rows are rounded to each column's public precision (:func:`column_precision`).

The guarantee in plain words (:func:`dpkme.privacy.explain.release_guarantee_in_words`) is in every JSON
download (``"guarantee_in_words"``) and shown on the Release page under each release. The CSVs stay plain
tables that any reader parses (no comment lines); each comes with the JSON of the same release.
"""

from __future__ import annotations

import io
import json

import numpy as np
import pandas as pd

from dpkme.privacy.leaks import privacy_claim

from . import state as S


def significant(a, digits: int) -> np.ndarray:
    """``a`` rounded to ``digits`` significant digits, element by element (non-finite values unchanged).

    The result prints with at most ``digits`` digits (Python's shortest round-trip repr, which pandas
    writes), e.g. ``significant(39.800000000000004, 15) == 39.8``."""
    a = np.asarray(a, dtype=np.float64)
    if a.size == 0:
        return a.copy()
    return np.vectorize(lambda v: float(f"{v:.{int(digits)}g}") if np.isfinite(v) else v, otypes=[np.float64])(a)


def _column_names(ds: S.Dataset | None, dim: int) -> list[str]:
    return [str(c) for c in (ds.columns if ds is not None and len(ds.columns) == dim
                             else [f"x{j + 1}" for j in range(dim)])]


def _weight_name(cols) -> str:
    name = "weight"
    while name in cols:
        name = "_" + name
    return name


def release_frame(rec: S.ReleaseRecord, ds: S.Dataset | None) -> pd.DataFrame:
    """Points in the data's original units (the declared scaling undone, 15 significant digits) and their weights
    (exact); the weight column is ``weight`` (``_weight`` if the data has a column of that name)."""
    r = rec.release
    pts = r.points if ds is None else ds.to_original_units(r.points)
    cols = _column_names(ds, r.dim)
    df = pd.DataFrame(significant(pts, 15), columns=cols)
    df[_weight_name(cols)] = r.weights
    return df


def release_csv(rec: S.ReleaseRecord, ds: S.Dataset | None) -> bytes:
    """The weighted points as CSV, every number in its shortest round-trip form (no ``39.799999999999997``)."""
    buf = io.StringIO()
    release_frame(rec, ds).to_csv(buf, index=False)
    return buf.getvalue().encode("utf-8")


def privacy_fields(obj, *, app_private: bool, reasons=(), ds: S.Dataset | None = None) -> dict:
    """The privacy claim of a download: ``differentially_private`` is true only if the library's claim
    (:func:`dpkme.privacy.leaks.privacy_claim`: real noise, nothing data-dependent) and the app's checks both
    hold; a file that says so never carries a seed. Seeded results say "replayable demo, not private"."""
    from dpkme.privacy.explain import release_guarantee_in_words

    claim = privacy_claim(obj)
    private = bool(app_private and claim["differentially_private"])
    out: dict = {"differentially_private": private}
    # under add/remove the exact row count is private: only the run's own public N (declared or privately counted)
    add_remove = str(getattr(obj, "neighbouring", "") or "") == "add-remove"
    n_words = getattr(obj, "n_private", None) if add_remove else (None if ds is None else ds.n)
    out["guarantee_in_words"] = release_guarantee_in_words(
        obj, private=private, reasons=_not_private_reasons(reasons),
        n_private=n_words, n_public=0 if ds is None or add_remove else ds.n_public,
        n_heldout=0 if ds is None or add_remove else ds.n_heldout)
    if private:
        out["seed"] = None
        out["noise"] = "fresh noise nobody can regenerate (" + str(getattr(obj, "noise_source", "")) + "); no seed recorded"
        if ds is not None:
            out["guarantee"] = ds.guarantee(exact_counts=not add_remove)
    else:
        why = list(dict.fromkeys([*claim.get("not_private_because", []), *reasons]))
        out["status"] = ("replayable demo, not private" if getattr(obj, "noise_source", None) == "seeded"
                         else "NOT differentially private")
        out["warning"] = "NOT differentially private: " + "; ".join(why or ["see the app"])
    return out


def _not_private_reasons(reasons) -> list[str]:
    """The reasons that void a guarantee (a budget overrun does not: the release itself is as private)."""
    return [str(w) for w in reasons if not str(w).startswith("Budget exceeded")]


def guarantee_text(rec: S.ReleaseRecord, ds: S.Dataset | None) -> str:
    """The guarantee of a release in plain words (:func:`dpkme.privacy.explain.release_guarantee_in_words`),
    exactly as its JSON download says it."""
    return privacy_fields(rec.release, app_private=rec.private, reasons=rec.warnings, ds=ds)["guarantee_in_words"]


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
    df = function_frame(rec, ds)
    df[df.columns[:-1]] = significant(df[df.columns[:-1]].to_numpy(), 15)    # grid points: no float noise
    df.to_csv(buf, index=False)
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
    """Rows rounded to each column's public precision, as :meth:`dpkme.release.tabular.TableRelease.to_csv` writes
    them (continuous: the declared ``decimals``, else steps of at most 1/10,000 of the declared range; whole numbers
    as integers; dates: whole days unless the schema declares decimals), categories as labels."""
    from dpkme.release.tabular import _rounded

    out = _rounded(schema, df)
    for c in schema.columns:
        if c.name in out and c.kind == "datetime" and not c.decimals:
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


# --------------------------------------------------------------------------- numeric data: unweighted synthetic rows
#: Significant digits of a synthetic row's value in a column without a public precision.
FALLBACK_SIGNIFICANT = 4
#: The most decimals read from the publishable rows (more: the column has no short public precision).
MAX_DECIMALS = 6


def _public_decimals(values: np.ndarray) -> int | None:
    """The fewest decimals (at most :data:`MAX_DECIMALS`) that write every public value exactly, or None."""
    v = values[np.isfinite(values)]
    if v.size == 0:
        return None
    for d in range(MAX_DECIMALS + 1):
        if np.all(np.abs(np.round(v, d) - v) <= 1e-9 * np.maximum(1.0, np.abs(v))):
            return d
    return None


def column_precision(ds: S.Dataset) -> list[dict]:
    """The precision of each numeric column for synthetic rows, from public information only.

    In this order: the decimals the **publishable rows** are written with (public rows, in original units);
    else steps of at most 1e-4 of a **declared box** (the clipping box or the box of a declared scaling: the
    library's rule for a schema column without declared decimals); else :data:`FALLBACK_SIGNIFICANT`
    significant digits, said so. Never the private rows' values.

    Returns
    -------
    list of dict
        Per column ``{"column", "decimals"}`` (an int, or None with ``"significant"``) and ``"source"`` in words.
    """
    cols = _column_names(ds, ds.dim)
    public = ds.to_original_units(ds.public) if ds.n_public else None
    width = None
    if ds.clip_box is not None:
        width = np.asarray(ds.clip_box[1], dtype=float) - np.asarray(ds.clip_box[0], dtype=float)
    elif ds.scaling is not None and "declared" in str(ds.scaling.source) and "publishable" not in str(ds.scaling.source):
        width = 2.0 * np.broadcast_to(np.asarray(ds.scaling.scale, dtype=float), (ds.dim,))
    out = []
    for j, c in enumerate(cols):
        d = _public_decimals(public[:, j]) if public is not None else None
        if d is not None:
            out.append({"column": c, "decimals": d, "source": f"as the {ds.n_public:,} publishable rows are written"})
            continue
        if width is not None and np.isfinite(width[j]) and width[j] > 0:
            d = max(0, int(np.ceil(-np.log10(width[j] * 1e-4))))
            out.append({"column": c, "decimals": min(d, 12), "source": "1/10,000 of the declared range"})
            continue
        out.append({"column": c, "decimals": None, "significant": FALLBACK_SIGNIFICANT,
                    "source": "no public precision: neither publishable rows written with few decimals nor a "
                              "declared range"})
    return out


def precision_text(ds: S.Dataset) -> str:
    """One line: how each column of the synthetic rows is rounded, and why (public information only)."""
    groups: dict[tuple[str, str], list[str]] = {}
    for p in column_precision(ds):
        how = (f"{p['decimals']} decimal{'s' if p['decimals'] != 1 else ''}" if p["decimals"] is not None
               else f"{p['significant']} significant digits")
        groups.setdefault((how, p["source"]), []).append(p["column"])
    if len(groups) == 1 and len(next(iter(groups.values()))) > 1:
        (how, source), = groups
        return f"every column to {how} ({source})"
    return "; ".join(f"{', '.join(cols)}: {how} ({source})" for (how, source), cols in groups.items())


def round_columns(df: pd.DataFrame, precision: list[dict]) -> pd.DataFrame:
    """``df``'s numeric columns rounded as :func:`column_precision` says (decimals, or significant digits)."""
    out = df.copy()
    for p in precision:
        if p["column"] not in out:
            continue
        x = out[p["column"]].to_numpy(dtype=np.float64)
        if p["decimals"] is None:
            out[p["column"]] = significant(x, p["significant"])
        elif p["decimals"] <= 0 and np.all(np.isfinite(x)) and np.all(np.abs(x) < 2**53):
            out[p["column"]] = np.round(x).astype(np.int64)          # whole numbers written as integers
        else:
            out[p["column"]] = np.round(x, p["decimals"])
    return out


def probability_weights(rec: S.ReleaseRecord) -> tuple[np.ndarray, str]:
    r"""Probability weights of a weighted-points release, and how they were obtained (post-processing).

    Non-negative weights are normalised to sum 1 (``"as released"`` when they already do); signed weights are
    projected onto the simplex, the closest probability weights in RKHS norm
    (:func:`dpkme.release.subspace.project_weights`). Reads only the release.
    """
    r = rec.release
    w = np.asarray(r.weights, dtype=np.float64)
    how = weights_kind(rec)
    if how == "projected":
        from dpkme.release.subspace import project_weights

        p = project_weights(w, r.kernel.gram(r.points), constraint="simplex")
    else:
        p = w / float(w.sum())
    p = np.clip(p, 0.0, None)
    return p / p.sum(), how


def weights_kind(rec: S.ReleaseRecord) -> str:
    """How :func:`probability_weights` obtains probability weights from ``rec`` (without computing them):
    ``"as released"``, ``"normalised"`` or ``"projected"``; a ValueError if every weight is 0."""
    w = np.asarray(rec.release.weights, dtype=np.float64)
    if np.any(w < 0):
        return "projected"
    total = float(w.sum())
    if not total > 0:
        raise ValueError("the release's weights are all 0: no row can be drawn from it; release again.")
    return "as released" if abs(total - 1.0) <= 1e-9 else "normalised"


def numeric_synthetic_rows(rec: S.ReleaseRecord, ds: S.Dataset, n: int) -> pd.DataFrame:
    """``n`` unweighted rows drawn from a numeric release's probability weights (post-processing, no privacy cost).

    Each row is one of the released points, picked with probability given by :func:`probability_weights`
    (projected onto the simplex if the weights are signed), in the data's original units, rounded to each column's
    public precision (:func:`column_precision`). A real release draws them with fresh OS entropy (nothing
    recorded); a seeded demo from a child of its seed, so the demo replays (as :func:`synthetic_rows` for tables).
    """
    from dpkme.reduced_set import resample

    if ds is None or ds.is_table:
        raise ValueError("numeric_synthetic_rows is for numeric data; a table release uses synthetic_rows.")
    if rec.kind != "points":
        raise ValueError("a function (GP) release has no weighted points to draw rows from.")
    r = rec.release
    if r.dim != ds.dim:
        raise ValueError(f"the release has {r.dim} coordinates but the data {ds.dim}; it was made on other data.")
    p, _ = probability_weights(rec)
    rng = np.random.default_rng() if r.seed is None else np.random.default_rng([int(r.seed), 1_000_003])
    Z = resample((r.points, p), int(n), rng)
    df = pd.DataFrame(ds.to_original_units(Z), columns=_column_names(ds, r.dim))
    return round_columns(df, column_precision(ds))


# --------------------------------------------------------------------------- reproducible recipes
#: App mechanisms a recipe can re-run (:mod:`dpkme.recipe`).
RECIPE_MECHANISMS = ("alg1-public", "alg1-q", "alg2")


def recipe_problem(rec: S.ReleaseRecord) -> str | None:
    """Why no recipe can be made for ``rec`` (None: one can)."""
    if rec.kind != "points" or rec.mechanism_key not in RECIPE_MECHANISMS:
        return (f"recipes re-run Algorithm 1 and Algorithm 2 releases; {rec.mechanism_label} has none yet (its "
                "JSON download lists every parameter).")
    if not rec.replay or "params" not in rec.replay:
        return "this release has no record of its settings (made outside the Release page)."
    return None


def recipe(rec: S.ReleaseRecord, ds: S.Dataset) -> dict:
    """The public parameters of ``rec`` as a :mod:`dpkme.recipe` dict (checked by :func:`dpkme.recipe.check_recipe`).

    Everything comes from the release's record and the dataset's public preprocessing: no private value, and no
    seed unless the release is a replayable demo (then ``"replay_seed"``, labelled). Settings that were read off the
    private rows are carried as ``"not_private_because"``, so that the recipe's runs are labelled not private.
    """
    from dpkme.recipe import check_recipe

    from . import noise as N
    from .mechanisms.algorithm2 import preset_for

    problem = recipe_problem(rec)
    if problem:
        raise ValueError(problem)
    if ds is None or ds.key != rec.dataset_key:
        raise ValueError("the recipe needs the dataset this release was made on; load it on the Data page.")
    r, rp, p = rec.release, rec.replay, rec.replay["params"]
    d: dict = {
        "mechanism": r.mechanism, "epsilon": float(r.epsilon), "delta": float(r.delta), "calibration": r.calibration,
        "neighbouring": r.neighbouring, "kernel": r.kernel.to_dict(), "n_points": int(p["n_points"]),
        "noise": "opendp" if r.noise_source == "opendp" else "numpy",
        "q_scale": None if p.get("q_scale") is None else float(p["q_scale"]),
        "q_center": None, "schema": ds.schema.to_dict() if ds.is_table else None,
    }
    if rec.mechanism_key.startswith("alg1"):
        d["points"] = "public" if rec.mechanism_key == "alg1-public" else "domain" if p.get("domain") else "q"
        d.update(basis=p["basis"], weights=p["weights"], sensitivity=rp["sensitivity_mode"])
        if d["points"] == "q":
            d["q_center"] = np.asarray(p["q_center"], dtype=float).tolist()
        else:
            d["q_scale"] = None
    else:
        opts = r.params.get("solver_options") or {}
        # the options the app gave (the preset's own come back from the preset): probability weights and, on a
        # mixed table, the library's table options (dpkme.release.tabular.table_solver_options), an option the
        # release ran without recorded as None, so that release_table adds none of its defaults and re-runs it
        solver_options = {k: opts[k] for k in ("weights", "revive", "refit") if k in opts}
        if ds.is_table:
            from dpkme.reduced_set import get_solver

            spec = get_solver(p["solver"])
            for k in ("revive", "refit"):
                if spec.accepts(k):
                    solver_options.setdefault(k, None)
        d.update(n_features=int(p["n_features"]), solver=p["solver"], preset=p.get("preset", preset_for(ds)),
                 start=p["start"], solver_options=solver_options)
        if ds.is_table:
            # the marginal block the release ran with (its public rule's outcome), so that release_table re-runs it
            marg = r.params.get("marginals")
            d["marginal_share"] = float(marg["share"]) if marg else 0.0
            if marg:
                d["marginal_options"] = {"n_bins": marg["n_bins"], "pairs": marg["pairs"] or "none",
                                         "pair_bins": marg["pair_bins"], "pair_weight": marg["pair_weight"],
                                         "max_cells": marg["max_cells"]}
        if ds.q_center is not None:
            d["q_center"] = np.asarray(ds.q_center, dtype=float).tolist()
    sp = ds.split or {}
    d["data"] = {
        "columns": ds.table_columns, "public_fraction": float(sp.get("public_fraction") or 0.0),
        "heldout_fraction": float(sp.get("heldout_fraction") or 0.0), "split_seed": int(sp.get("seed") or 0),
        "drop_missing": any("missing values were dropped" in n for n in ds.notes),
        "clip_box": None if ds.clip_box is None else [np.asarray(b, dtype=float).tolist() for b in ds.clip_box],
        "scaling": None if ds.scaling is None else ds.scaling.to_dict(),
    }
    leaks = [str(x) for x in r.params.get("privacy_leaks", []) if str(x) != N.REPLAY_PROBLEM]
    d["not_private_because"] = leaks
    if r.noise_source == "seeded" and r.seed is not None:
        d["replay_seed"] = int(r.seed)           # a replayable demo only: labelled, used only on request
    d["source"] = {"app_release": rec.id, "mechanism_label": rec.mechanism_label, "dataset": rec.dataset_name,
                   "dpkme_version": r.version, "n_private": int(r.n_private)}
    out = check_recipe(d)
    if rec.private and r.noise_source != "seeded" and "replay_seed" in out:   # never: a real release has no seed
        raise RuntimeError("a recipe of a real release would carry a seed; nothing was exported.")
    return out


def recipe_script(rec: S.ReleaseRecord, ds: S.Dataset) -> bytes:
    """The release's recipe as a standalone Python script (``python recipe.py DATA.csv --out release.csv``)."""
    from dpkme.recipe import recipe_script as script

    return script(recipe(rec, ds)).encode("utf-8")


def recipe_notebook(rec: S.ReleaseRecord, ds: S.Dataset) -> bytes:
    """The release's recipe as a Jupyter notebook with the same cells as :func:`recipe_script`."""
    from dpkme.recipe import recipe_notebook as notebook

    return notebook(recipe(rec, ds)).encode("utf-8")
