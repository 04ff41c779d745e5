"""The Release page's downloads of one release: its guarantee in plain words, its files, and its recipe.

The files are built by :mod:`ui.export` (in memory; no seed in a real release's files). For numeric data:
the weighted points (CSV), the parameters (JSON, with ``"guarantee_in_words"``), N unweighted synthetic rows
(CSV: post-processing, rounded to each column's public precision) and the recipe (a Python script and a
notebook that re-run the release with the library, :mod:`dpkme.recipe`). Mixed tables keep their own files
(:func:`ui.table_views.downloads`) and get the same guarantee and recipe.
"""

from __future__ import annotations

import streamlit as st

from . import export as E
from . import table_views as TV
from .widgets import guard

ss = st.session_state
ROWS_KEY = "rel._numeric_rows"          # {(release id, n): CSV bytes} -- resampled rows (public), drawn once
DL_CSV = "rel.dl_csv"                   # download buttons (rows and JSON: table_views.DL_ROWS, DL_JSON)
DL_RECIPE_PY = "rel.dl_recipe_py"
DL_RECIPE_NB = "rel.dl_recipe_nb"

_HOW = {"as released": "the weights as released (they are probability weights)",
        "normalised": "the non-negative weights, normalised to sum 1",
        "projected": "the signed weights projected onto probability weights (the closest in RKHS norm)"}


def guarantee_box(rec, ds) -> None:
    """The release's guarantee in plain words, as its JSON download states it."""
    text = E.guarantee_text(rec, ds)
    if text.startswith("This release is NOT"):
        st.warning("**In plain words.** " + text, icon=":material/gpp_bad:")
    else:
        st.info("**The guarantee, in plain words.** " + text, icon=":material/verified_user:")


def n_rows(ds) -> int:
    """How many synthetic rows a download holds: N (the public number of private rows), at most 100,000."""
    return int(min(ds.n, TV.MAX_SYNTHETIC_ROWS))


def rows_csv(rec, ds, n: int) -> bytes:
    """The CSV of ``n`` synthetic rows of a numeric release, drawn once per (release, n) in this session."""
    store = ss.setdefault(ROWS_KEY, {})
    key = (rec.id, int(n))
    if key not in store:
        if len(store) > 16:
            store.clear()
        store[key] = E.synthetic_csv(E.numeric_synthetic_rows(rec, ds, int(n)))
    return store[key]


def release_downloads(rec, ds) -> None:
    """Everything a recipient gets for a weighted-points release, and the owner's recipe."""
    guarantee_box(rec, ds)
    stem = E.file_stem(rec)
    if ds.is_table:
        TV.downloads(rec, ds)
    else:
        st.markdown("**Download the release**")
        st.caption("The CSV has one row per synthetic point (original units) and its weight; the JSON has every "
                   "parameter needed to interpret it (mechanism, ε, δ, σ, kernel, version), says whether it is "
                   "differentially private and states the guarantee in plain words; only a replay-mode demo carries "
                   "its seed. The CSVs are plain tables: the guarantee travels in the JSON.")
        d1, d2 = st.columns(2)
        d1.download_button("CSV: points + weights", data=E.release_csv(rec, ds), file_name=stem + ".csv",
                           mime="text/csv", key=DL_CSV, on_click="ignore", icon=":material/download:")
        d2.download_button("JSON: parameters", data=E.release_json(rec, ds), file_name=stem + ".json",
                           mime="application/json", key=TV.DL_JSON, on_click="ignore", icon=":material/download:")
        n = n_rows(ds)
        try:
            how = E.weights_kind(rec)
        except ValueError as exc:                     # all weights 0: nothing to draw rows from
            st.caption(f"No synthetic rows: {exc}")
        else:
            with guard("draw the synthetic rows"):
                data = rows_csv(rec, ds, n)
                st.download_button(f"Synthetic rows: {n:,} unweighted", data=data, file_name=stem + "_rows.csv",
                                   mime="text/csv", key=TV.DL_ROWS, on_click="ignore", icon=":material/download:")
                seeded = rec.release.seed is not None
                st.caption(f"{n:,} rows (N, the number of private rows) drawn from {_HOW[how]}: post-processing of "
                           "the release, no further privacy cost. "
                           + ("Drawn from a child of the demo's seed, so the demo replays. " if seeded else
                              "Drawn with fresh OS entropy; nothing recorded. ")
                           + f"Rounded from public information only: {E.precision_text(ds)}.")
    recipe_downloads(rec, ds, stem)


def recipe_downloads(rec, ds, stem: str) -> None:
    """The release as a Python script and a notebook that re-run it with the library (fresh noise)."""
    st.markdown("**Reproducible recipe**")
    problem = E.recipe_problem(rec)
    if problem:
        st.caption("No recipe: " + problem)
        return
    with guard("write the recipe"):
        script, notebook = E.recipe_script(rec, ds), E.recipe_notebook(rec, ds)
        r1, r2 = st.columns(2)
        r1.download_button("Recipe: Python script", data=script, file_name=stem + "_recipe.py", mime="text/x-python",
                           key=DL_RECIPE_PY, on_click="ignore", icon=":material/code:")
        r2.download_button("Recipe: Jupyter notebook", data=notebook, file_name=stem + "_recipe.ipynb",
                           mime="application/x-ipynb+json", key=DL_RECIPE_NB, on_click="ignore",
                           icon=":material/code:")
        seeded = rec.release.noise_source == "seeded" and rec.release.seed is not None
        st.caption("Re-runs this release with the library on a data file: `python recipe.py DATA.csv --out "
                   "release.csv` writes the weighted points and a JSON with every parameter and the guarantee. Same "
                   "parameters, **fresh OS-entropy noise on every run**: each run is a new release that spends its own "
                   "budget. The recipe holds no noise seed"
                   + (" except this demo's seed, labelled, used only with `--replay` (not private)." if seeded else ".")
                   + (" A setting of this release was read off the private rows: the recipe's runs say NOT private too."
                      if not rec.private and not seeded else ""))
