r"""Reproducible recipes: a release's public parameters as a standalone Python script and a Jupyter notebook.

A *recipe* is a plain dict (JSON) of everything public that defines a release: the mechanism
(:func:`~dpkme.release.algorithm1` or :func:`~dpkme.release.algorithm2`, or a mixed table through
:func:`~dpkme.release.release_table` with its declared schema), the kernel
(:meth:`~dpkme.kernels.Kernel.to_dict`), :math:`\varepsilon`, :math:`\delta`, the calibration and the
neighbouring relation, :math:`M`, :math:`J`, the solver and its options, the weight constraint, the points
(publishable rows, draws from a declared :math:`q`, or the schema's declared domain) and the public
preprocessing of the data file (columns, the seeded split into publishable / private / held-out rows,
a declared clipping box and a declared scaling). :func:`recipe_script` turns it into a script that
re-runs the release on a data file with the library's public API::

    python recipe.py DATA.csv --out release.csv

and :func:`recipe_notebook` into a notebook with the same code cells. Both write the released weighted
points (``release.csv``, in the data's original units) and ``release.json`` (every parameter, the privacy
claim, ``"guarantee_in_words"`` and the recipe itself).

Noise: a recipe draws **fresh OS-entropy noise** on every run (``random_state=None``), so each run is a new
release that spends its own privacy budget, and nothing recorded can regenerate its noise. A recipe never
holds the seed of a real release. Only a recipe made from a replayable demo (seeded, not private) may carry
its seed, as ``"replay_seed"``; the script uses it only when asked (``--replay``) and the result is then
labelled *not private*. A recipe made from a release that read a setting off the private rows carries the
reasons (``"not_private_because"``), and its runs are labelled not private too
(:func:`dpkme.privacy.leaks.mark_not_private`).

The split seed (``data["split_seed"]``) is not a noise seed: it only says which rows of the file were
declared publishable (published in the clear) or held out, exactly as in the run the recipe was made from.
"""

from __future__ import annotations

import json
import textwrap
from typing import Any

from ._validation import check_delta, check_epsilon, check_in, check_positive_int

__all__ = ["RECIPE_FORMAT", "check_recipe", "recipe_script", "recipe_notebook"]

#: The ``"format"`` of a recipe dict.
RECIPE_FORMAT = "dpkme.recipe"

_POINTS = ("public", "q", "domain")
_STARTS = ("q", "public")


def check_recipe(recipe: dict) -> dict:
    r"""Validate a recipe and return it complete (defaults filled in, a new dict).

    Parameters
    ----------
    recipe : dict
        Keys: ``mechanism`` (``"algorithm1"`` or ``"algorithm2"``), ``epsilon``, ``delta``, ``kernel`` (a
        kernel dict), ``n_points``, ``data`` (``columns``, ``public_fraction``, ``heldout_fraction``,
        ``split_seed``, ``drop_missing``, ``clip_box``, ``scaling``); optional: ``calibration``
        (``"analytic"``), ``neighbouring`` (``"replace-one"``), ``noise`` (``"numpy"``), ``schema`` (a
        :meth:`dpkme.schema.TableSchema.to_dict`), ``not_private_because``, ``replay_seed``, ``source``; for
        Algorithm 1 ``points`` (``"public"``, ``"q"`` or ``"domain"``), ``basis``, ``weights``,
        ``sensitivity``; for Algorithm 2 ``n_features``, ``solver``, ``preset``, ``solver_options``,
        ``start`` (``"q"`` or ``"public"``); ``q_scale`` and ``q_center`` for draws from :math:`q`.

    Returns
    -------
    dict

    Raises
    ------
    ValueError
        Naming the first missing or invalid entry.

    Examples
    --------
    >>> r = check_recipe({"mechanism": "algorithm2", "epsilon": 1, "delta": 1e-6, "n_points": 20, "n_features": 200,
    ...                   "kernel": {"name": "gaussian", "lengthscale": 1.0}, "q_scale": 2.0,
    ...                   "data": {"columns": ["a", "b"]}})
    >>> r["format"], r["solver"], r["start"], r["data"]["public_fraction"]
    ('dpkme.recipe', 'pursuit-joint', 'q', 0.0)
    """
    if not isinstance(recipe, dict):
        raise ValueError(f"a recipe is a dict, got {type(recipe).__name__}.")
    for key in ("mechanism", "epsilon", "delta", "kernel", "n_points", "data"):
        if key not in recipe:
            raise ValueError(f"the recipe has no {key!r}; make it from a release (ui.export.recipe) or give every "
                             "parameter listed in dpkme.recipe.check_recipe.")
    r = dict(recipe)
    r["format"] = RECIPE_FORMAT
    r["version"] = 1
    check_in(r["mechanism"], ("algorithm1", "algorithm2"), name="mechanism")
    r["epsilon"] = check_epsilon(r["epsilon"])
    r["delta"] = check_delta(r["delta"])
    r["n_points"] = check_positive_int(r["n_points"], name="n_points")
    if not isinstance(r["kernel"], dict) or "name" not in r["kernel"]:
        raise ValueError(f"kernel must be a kernel dict (Kernel.to_dict()), got {r['kernel']!r:.80}.")
    r.setdefault("calibration", "analytic")
    check_in(r["calibration"], ("analytic", "classic"), name="calibration")
    r.setdefault("neighbouring", "replace-one")
    check_in(r["neighbouring"], ("replace-one", "add-remove"), name="neighbouring")
    if r["neighbouring"] != "replace-one":
        raise ValueError("recipes re-run replace-one releases (the app's relation); an add-remove release also needs "
                         "a declared n_private, which a data file cannot supply.")
    r.setdefault("noise", "numpy")
    check_in(r["noise"], ("numpy", "opendp"), name="noise")
    r.setdefault("schema", None)
    if r["schema"] is not None and not isinstance(r["schema"], dict):
        raise ValueError("schema must be a TableSchema.to_dict() dict.")
    r.setdefault("q_scale", None)
    r.setdefault("q_center", None)
    if r["q_center"] is not None:
        r["q_center"] = [float(v) for v in r["q_center"]]
    if r["mechanism"] == "algorithm1":
        r.setdefault("points", "q")
        check_in(r["points"], _POINTS, name="points")
        data = r.get("data")
        bounded = isinstance(data, dict) and isinstance(data.get("scaling"), dict) \
            and data["scaling"].get("lower") is not None      # a declared scaling with bounds on every column
        if r["points"] == "domain" and r["schema"] is None and not bounded:
            raise ValueError("points='domain' draws from a schema's declared domain: give the schema (or a "
                             "data['scaling'] with declared bounds 'lower' and 'upper').")
        if r["points"] == "q" and r["schema"] is None and r["q_scale"] is None:
            raise ValueError("points='q' needs the declared spread q_scale of q.")
        r.setdefault("basis", "full")
        check_in(r["basis"], ("full", "auto"), name="basis")
        r.setdefault("weights", "simplex")
        check_in(r["weights"], ("free", "simplex", "l1"), name="weights")
        r.setdefault("sensitivity", "tight")
        check_in(r["sensitivity"], ("tight", "paper"), name="sensitivity")
        for key in ("n_features", "solver", "preset", "solver_options", "start"):
            r.pop(key, None)
    else:
        r["n_features"] = check_positive_int(r.get("n_features", 10000), name="n_features")
        r.setdefault("solver", "pursuit-joint")
        r.setdefault("preset", "accurate")
        check_in(r["preset"], ("accurate", "interactive"), name="preset")
        r["solver_options"] = dict(r.get("solver_options") or {})
        r.setdefault("weights", r["solver_options"].get("weights", "simplex"))
        r.setdefault("start", "q")
        check_in(r["start"], _STARTS, name="start")
        if r["start"] == "q" and r["schema"] is None and r["q_scale"] is None:
            raise ValueError("start='q' needs the declared spread q_scale of q.")
        for key in ("points", "basis", "sensitivity"):
            r.pop(key, None)
    d = dict(r["data"])
    if not isinstance(d.get("columns"), (list, tuple)) or not d["columns"]:
        raise ValueError("data['columns'] must list the columns of the data file to release.")
    d["columns"] = [str(c) for c in d["columns"]]
    d["public_fraction"] = float(d.get("public_fraction") or 0.0)
    d["heldout_fraction"] = float(d.get("heldout_fraction") or 0.0)
    for key in ("public_fraction", "heldout_fraction"):
        if not 0 <= d[key] < 1:
            raise ValueError(f"data[{key!r}] must lie in [0, 1), got {d[key]!r}.")
    d["split_seed"] = int(d.get("split_seed") or 0)
    d["drop_missing"] = bool(d.get("drop_missing", False))
    d.setdefault("clip_box", None)
    d.setdefault("scaling", None)
    r["data"] = d
    uses_public = r.get("points") == "public" or r.get("start") == "public"
    if uses_public and d["public_fraction"] <= 0:
        raise ValueError("the recipe uses the publishable rows but data['public_fraction'] is 0.")
    r["not_private_because"] = [str(x) for x in (r.get("not_private_because") or [])]
    if r.get("replay_seed") is None:
        r.pop("replay_seed", None)
    else:
        r["replay_seed"] = int(r["replay_seed"])
    r.setdefault("source", {})
    json.dumps(r)                      # refuses anything that is not plain JSON
    return r


# --------------------------------------------------------------------------- the code cells
_IMPORTS = '''\
import json
from pathlib import Path

import numpy as np
import pandas as pd

import dpkme
from dpkme.io import load_table, numeric_matrix
from dpkme.kernels import kernel_from_dict
from dpkme.preprocessing import DeclaredScaling, clip_to_box, public_private_split
from dpkme.privacy.explain import release_guarantee_in_words
from dpkme.privacy.leaks import mark_not_private
from dpkme.schema import TableSchema'''

_LOAD = '''\
def split_rows(n):
    """Row indices (publishable or None, private, held-out or None) of the seeded split of n rows.

    The split depends on n and the split seed only, never on the values: the same rows as in the original run.
    """
    data = RECIPE["data"]
    idx = np.arange(n)
    public = held = None
    if data["public_fraction"] > 0:
        _, _, parts = public_private_split(idx[:, None].astype(float), public_fraction=data["public_fraction"],
                                          random_state=data["split_seed"])
        public, idx = parts.public, parts.private
    if data["heldout_fraction"] > 0:
        _, _, parts = public_private_split(idx[:, None].astype(float), public_fraction=1 - data["heldout_fraction"],
                                          random_state=data["split_seed"] + 1)
        idx, held = idx[parts.public], idx[parts.private]
    return public, idx, held


def load_data(path):
    """The private rows (and the publishable ones) of the file at path, with the declared preprocessing."""
    path = Path(path)
    frame = load_table(path.read_bytes(), filename=path.name)
    data = RECIPE["data"]
    if RECIPE["schema"] is not None:            # a mixed table: rows encoded with the declared schema
        schema = TableSchema.from_dict(RECIPE["schema"])
        frame = frame.rename(columns=str)[list(schema.names)]
        public, private, held = split_rows(len(frame))
        return {"schema": schema, "scaling": None, "private": frame.iloc[private].reset_index(drop=True),
                "public": None if public is None else schema.encode(frame.iloc[public]),
                "n_public": 0 if public is None else len(public), "n_heldout": 0 if held is None else len(held)}
    rows = numeric_matrix(frame, data["columns"], drop_missing=data["drop_missing"])
    if data["drop_missing"]:
        rows, dropped = rows
        if dropped:
            print(f"{dropped} row(s) with missing values dropped (N now depends on the data).")
    public, private, held = split_rows(rows.shape[0])
    X, P = rows[private], None if public is None else rows[public]
    if data["clip_box"] is not None:            # a declared box: every row clipped on its own
        lower, upper = (np.asarray(b, dtype=float) for b in data["clip_box"])
        X = clip_to_box(X, lower, upper, return_count=False)
        P = None if P is None else clip_to_box(P, lower, upper, return_count=False)
    scaling = None
    if data["scaling"] is not None:             # declared constants (never the private rows' mean or std)
        scaling = DeclaredScaling.from_dict(data["scaling"])
        X = scaling.apply(X)
        P = None if P is None else scaling.apply(P)
    return {"schema": None, "scaling": scaling, "private": X, "public": P,
            "n_public": 0 if public is None else len(public), "n_heldout": 0 if held is None else len(held)}'''

_RELEASE = '''\
def make_release(data, *, random_state=None):
    """The release of data["private"] with the recipe's parameters.

    random_state=None (the default) is a real release: fresh OS-entropy noise, no seed recorded.
    """
    r = RECIPE
    kernel = kernel_from_dict(r["kernel"])
    common = {"kernel": kernel, "epsilon": r["epsilon"], "delta": r["delta"], "calibration": r["calibration"],
              "neighbouring": r["neighbouring"], "random_state": random_state, "noise": r["noise"]}
    schema = data["schema"]
    alg2 = r["mechanism"] == "algorithm2"
    if (schema is not None and r.get("points", r.get("start")) != "public" and r.get("sensitivity", "tight") == "tight"
            and r.get("basis", "full") == "full"):
        # a mixed table in its declared domain: dpkme.release_table encodes the rows and runs the mechanism
        extra = {"n_features": r["n_features"], "solver": r["solver"], "preset": r["preset"],
                 "solver_options": dict(r["solver_options"]) or None,
                 "marginal_share": r.get("marginal_share", "auto"),
                 "marginal_options": r.get("marginal_options")} if alg2 else {}
        result = dpkme.release_table(data["private"], schema=schema, mechanism=r["mechanism"], n_points=r["n_points"],
                                     weights=r["weights"], **extra, **common)
        rel = result.release
    else:
        X = data["private"] if schema is None else schema.encode(data["private"])
        if not alg2:
            if r["points"] == "public":       # the first M publishable rows: public, released as they are
                Z, points = data["public"][: r["n_points"]], {"points_are_sample": True}
            elif r["points"] == "domain":     # uniform draws from the declared domain (schema or bounds)
                domain = schema.domain if schema is not None else data["scaling"].box_domain()
                Z, points = None, {"n_points": r["n_points"], "point_domain": domain}
            else:                             # draws from the declared q = N(q_center, q_scale^2 I)
                Z, points = None, {"n_points": r["n_points"], "q_scale": r["q_scale"], "q_center": r["q_center"]}
            rel = dpkme.algorithm1(X, Z, sensitivity=r["sensitivity"], basis=r["basis"], weights=r["weights"],
                                   **points, **common)
        else:
            start = {"initial_points": data["public"]} if r["start"] == "public" else {}
            if schema is not None:
                start["domain"] = schema.domain
            elif data["scaling"] is not None and data["scaling"].box_domain() is not None:
                start["domain"] = data["scaling"].box_domain()     # declared bounds: points stay inside them
            rel = dpkme.algorithm2(X, n_points=r["n_points"], n_features=r["n_features"], solver=r["solver"],
                                   preset=r["preset"], solver_options=dict(r["solver_options"]) or None,
                                   q_scale=r["q_scale"] if r["q_scale"] is not None else 500.0,
                                   q_loc=r["q_center"] if r["q_center"] is not None else 0.0, **start, **common)
        result = rel if schema is None else dpkme.TableRelease(release=rel, schema=schema)
    reasons = [x for x in r["not_private_because"] if x not in rel.params.get("privacy_leaks", [])]
    if reasons:                               # a setting of the original run was read off the private rows
        mark_not_private(rel, reasons, warn=False)
    return result'''

_WRITE = '''\
def write_outputs(result, data, out):
    """Write the weighted points (CSV, original units) and every parameter with the privacy claim (JSON)."""
    out = Path(out)
    rel = getattr(result, "release", result)
    if data["schema"] is not None:              # decoded rows in the table's own columns, rounded as declared
        text, meta = result.to_csv(), result.metadata()
    else:
        points = rel.points if data["scaling"] is None else data["scaling"].inverse(rel.points)
        points = np.vectorize(lambda v: float(f"{v:.15g}"))(points)   # no float noise such as 39.800000000000004
        frame = pd.DataFrame(points, columns=RECIPE["data"]["columns"])
        weight = "weight"
        while weight in frame.columns:
            weight = "_" + weight
        frame[weight] = rel.weights
        text, meta = frame.to_csv(index=False), rel.metadata()
        meta["points_units"] = "original units of the columns"
    meta["guarantee_in_words"] = release_guarantee_in_words(result, n_public=data["n_public"],
                                                            n_heldout=data["n_heldout"])
    meta["n_published_in_clear"] = data["n_public"]
    meta["recipe"] = RECIPE
    out.write_text(text)
    out.with_suffix(".json").write_text(json.dumps(meta, indent=2, default=str))
    return meta'''

_RUN = '''\
def run(data_path, out_path="release.csv", *, replay=False):
    """Read the data, release it with fresh noise and write release.csv and release.json; returns the metadata."""
    seed = None
    if replay:                               # a replayable demo: the recorded seed, NOT private
        if "replay_seed" not in RECIPE:
            raise ValueError("this recipe has no replay seed: it re-runs a real release, whose noise nobody can "
                             "regenerate. Run it without replay.")
        seed = RECIPE["replay_seed"]
    data = load_data(data_path)
    result = make_release(data, random_state=seed)
    meta = write_outputs(result, data, out_path)
    print(f"wrote {out_path} and {Path(out_path).with_suffix('.json')}: {meta['mechanism']}, "
          f"epsilon = {meta['epsilon']:g}, delta = {meta['delta']:g}, N = {meta['n_private']}, "
          f"differentially private: {meta['differentially_private']}")
    return meta'''

_MAIN = '''\
def main(argv=None):
    import argparse

    parser = argparse.ArgumentParser(description="Re-run a dpkme release on a data file (fresh OS-entropy noise).")
    parser.add_argument("data", help="CSV, TSV or Parquet file with the columns " + ", ".join(RECIPE["data"]["columns"]))
    parser.add_argument("--out", default="release.csv", help="the released weighted points (CSV); the JSON with every "
                        "parameter and the guarantee goes next to it (default: release.csv, release.json)")
    if "replay_seed" in RECIPE:
        parser.add_argument("--replay", action="store_true",
                            help="use the recorded seed (a replayable demo: NOT private)")
    args = parser.parse_args(argv)
    meta = run(args.data, args.out, replay=getattr(args, "replay", False))
    print(meta["guarantee_in_words"])


if __name__ == "__main__":
    main()'''


def _recipe_cell(r: dict) -> str:
    text = json.dumps(r, indent=2, ensure_ascii=False, allow_nan=False)
    return ("# Every public parameter of the release. Edit with care: the guarantee is for these values.\n"
            f'RECIPE = json.loads(r"""\n{text}\n""")')


def _about(r: dict) -> list[str]:
    """Plain-text lines describing the recipe (the script's docstring, the notebook's first cell)."""
    from .privacy.explain import guarantee_in_words

    src = r.get("source") or {}
    label = src.get("mechanism_label") or r["mechanism"]
    lines = [f"dpkme recipe: {label}, epsilon = {r['epsilon']:g}, delta = {r['delta']:g}, M = {r['n_points']}."]
    made = [f"release #{src['app_release']}" if src.get("app_release") is not None else None,
            f"of {src['dataset']}" if src.get("dataset") else None,
            f"with dpkme {src['dpkme_version']}" if src.get("dpkme_version") else None]
    if any(made):
        lines.append("Made from " + " ".join(m for m in made if m) + ".")
    cols = ", ".join(r["data"]["columns"])
    lines += ["", f"Data: a CSV (or TSV/Parquet) file with the columns {cols}"
              + (" (a mixed table: the declared schema below encodes them)." if r["schema"] is not None else ".")]
    d = r["data"]
    if d["public_fraction"] or d["heldout_fraction"]:
        lines.append(f"Its rows are split as in the original run (split seed {d['split_seed']}, not a noise seed): "
                     f"{d['public_fraction']:.4g} of them declared publishable (published in the clear, not protected), "
                     f"then {d['heldout_fraction']:.4g} of the rest held out; the remaining rows are the private ones.")
    lines += ["", "Noise: fresh OS entropy on every run (random_state=None): every run is a new release that spends "
              "its own privacy budget, and nothing recorded can regenerate its noise. This recipe holds no noise seed"
              + (" except the labelled replay seed of a demo (used only with --replay / REPLAY = True; the result is "
                 "then NOT private)." if "replay_seed" in r else ".")]
    if r["not_private_because"]:
        lines += ["", "NOT PRIVATE: a setting of the original run was read off the private rows, so every run of this "
                  "recipe is labelled not private: " + "; ".join(r["not_private_because"])]
    else:
        lines += ["", "What a run guarantees, in plain words: " + guarantee_in_words(
            epsilon=r["epsilon"], delta=r["delta"], neighbouring=r["neighbouring"], mechanism=r["mechanism"])]
    lines += ["", "Outputs: the released weighted points (one row each, original units, and a weight column) and a "
              "JSON file next to it with every parameter, the privacy claim and the guarantee in words. Estimate "
              "E[h(X)] by the sum over rows of weight * h(row) (eq. (4) of Balog et al. 2018)."]
    return lines


def recipe_script(recipe: dict) -> str:
    r"""A standalone Python script that re-runs the release of ``recipe``: ``python recipe.py DATA.csv --out release.csv``.

    The script uses only dpkme's public API (:func:`dpkme.algorithm1`, :func:`dpkme.algorithm2`,
    :func:`dpkme.release_table`, :mod:`dpkme.io`, :mod:`dpkme.preprocessing`); its noise is fresh OS entropy.

    Parameters
    ----------
    recipe : dict
        See :func:`check_recipe`.

    Returns
    -------
    str
        Python source.

    Examples
    --------
    >>> text = recipe_script({"mechanism": "algorithm1", "epsilon": 1, "delta": 1e-6, "n_points": 10, "q_scale": 1.0,
    ...                       "kernel": {"name": "gaussian", "lengthscale": 1.0}, "data": {"columns": ["x"]}})
    >>> compile(text, "recipe.py", "exec") is not None and "random_state=None" in text
    True
    """
    r = check_recipe(recipe)
    doc = "\n".join(textwrap.fill(line, 110, break_long_words=False, break_on_hyphens=False) if line else ""
                    for line in _about(r)).replace('"""', "'''")
    header = f'#!/usr/bin/env python\n"""{doc}\n\nUsage:  python recipe.py DATA.csv --out release.csv\n"""\n'
    return "\n\n\n".join([header + "\n" + _IMPORTS, _recipe_cell(r), _LOAD, _RELEASE, _WRITE, _RUN, _MAIN]) + "\n"


def recipe_notebook(recipe: dict) -> str:
    r"""A Jupyter notebook (nbformat 4 JSON) with the code cells of :func:`recipe_script` and a parameters cell.

    The parameters cell sets ``DATA`` (the data file), ``OUT`` (the released points' CSV) and ``REPLAY``;
    the last cell runs the release with fresh OS-entropy noise and prints its guarantee.

    Parameters
    ----------
    recipe : dict
        See :func:`check_recipe`.

    Returns
    -------
    str
        The notebook as JSON text.

    Examples
    --------
    >>> nb = json.loads(recipe_notebook({"mechanism": "algorithm2", "epsilon": 1, "delta": 1e-6, "n_points": 10,
    ...     "q_scale": 1.0, "kernel": {"name": "gaussian", "lengthscale": 1.0}, "data": {"columns": ["x"]}}))
    >>> nb["nbformat"], [c["cell_type"] for c in nb["cells"]][:3]
    (4, ['markdown', 'code', 'markdown'])
    """
    r = check_recipe(recipe)
    about = _about(r)
    cells: list[dict[str, Any]] = []

    def md(text: str) -> None:
        cells.append({"cell_type": "markdown", "id": f"cell-{len(cells)}", "metadata": {}, "source": text})

    def code(text: str, tags=()) -> None:
        cells.append({"cell_type": "code", "id": f"cell-{len(cells)}", "metadata": {"tags": list(tags)} if tags else {},
                      "execution_count": None, "outputs": [], "source": text})

    md("# " + about[0] + "\n\n" + "\n".join(about[1:]).replace("--replay / ", ""))
    replay = "replay_seed" in r
    code('# Parameters: the data file and where to write the release (release.json goes next to it).\n'
         'DATA = "data.csv"\nOUT = "release.csv"\n'
         + ("REPLAY = False   # True: the recorded seed (a replayable demo, NOT private)" if replay else
            "REPLAY = False   # this recipe has no replay seed: every run is a real release"), tags=("parameters",))
    md("The library's public API only.")
    code(_IMPORTS)
    md("The release's public parameters.")
    code(_recipe_cell(r))
    md("Read the data file as the original run did: the same columns, the same seeded split into publishable, "
       "private and held-out rows, the declared clipping box and scaling.")
    code(_LOAD)
    md("The release itself: the only step that reads the private rows, with fresh OS-entropy noise.")
    code(_RELEASE)
    md("Write the released points (original units) and the metadata with the guarantee in plain words.")
    code(_WRITE)
    code(_RUN)
    md("Run it.")
    code('meta = run(DATA, OUT, replay=REPLAY)\nprint(meta["guarantee_in_words"])')
    for c in cells:
        c["source"] = c["source"].splitlines(keepends=True)
    nb = {"cells": cells, "metadata": {"kernelspec": {"display_name": "Python 3", "language": "python", "name": "python3"},
                                      "language_info": {"name": "python"}},
          "nbformat": 4, "nbformat_minor": 5}
    return json.dumps(nb, indent=1, ensure_ascii=False) + "\n"
