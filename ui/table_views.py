"""Streamlit views of a mixed-table release: the weighted table, the owner's marginals and associations,
the downloads (Release page), and what a third party computes from it next to the truth (Third-party use page).

Everything labelled *owner's view* compares with the private rows: for the data owner only, never part of a
release or of its downloads. The downloads are built by :mod:`ui.export` (no seed in a real release's files).
"""

from __future__ import annotations

import numpy as np
import pandas as pd
import streamlit as st

from . import export as E
from . import tables as T
from .charts import plotly_chart
from .mechanisms.adaptive import rows_words
from .numbers import fill_missing, shown_table
from .widgets import guard

ss = st.session_state
SYNTH_KEY = "rel._synthetic"           # {(release id, n, spread): DataFrame} -- resampled rows (public)
TAB_SPREAD = "rel.tab_spread"         # the resampling spread slider
MARGINAL = "rel.marg.{i}"             # column i's marginal chart
DL_ROWS = "rel.dl_rows"               # downloads (also those of ui.downloads)
DL_JSON = "rel.dl_json"
DL_TABLE = "rel.dl_table"
XT_A = "use.xt_a"                     # the cross-table's rows and columns
XT_B = "use.xt_b"
GM_NUM = "use.gm_num"                 # the group means' numeric column and grouping column
GM_CAT = "use.gm_cat"
#: The slider's default: the library's own rule (:attr:`dpkme.release.tabular.TableRelease.default_spread`, from the
#: kernel and the release's public noise level), so the app resamples as ``TableRelease.sample()`` does.
DEFAULT_SPREAD = "library default"
SPREADS = [DEFAULT_SPREAD, 0.0, 0.1, 0.25, 0.5, 1.0]


def spread_value(choice, tr) -> float:
    """The spread a slider choice stands for: the release's :attr:`~dpkme.release.tabular.TableRelease.default_spread`
    for :data:`DEFAULT_SPREAD`, otherwise the number chosen."""
    return float(tr.default_spread) if choice == DEFAULT_SPREAD else float(choice)


@st.cache_data(max_entries=8, show_spinner=False)
def private_table(ds_key: str, _ds) -> pd.DataFrame:
    """The private rows as the schema reads them (decoded embedding): owner's view only."""
    return _ds.decode(_ds.X)


#: At most this many resampled rows are drawn (shown and downloaded): N of them up to this size.
MAX_SYNTHETIC_ROWS = 100_000


def n_synthetic(ds) -> int:
    return int(min(ds.n, MAX_SYNTHETIC_ROWS))


def _synthetic_entry(rec, ds, n: int, spread: float) -> dict:
    store = ss.setdefault(SYNTH_KEY, {})
    key = (rec.id, int(n), float(spread))
    if key not in store:
        if len(store) > 16:
            store.clear()
        store[key] = {"rows": E.synthetic_rows(rec, ds, int(n), spread=float(spread)), "csv": None}
    return store[key]


def synthetic(rec, ds, n: int, spread: float) -> pd.DataFrame:
    """The release's resampled rows, drawn once per (release, n, spread) and kept in this session."""
    return _synthetic_entry(rec, ds, n, spread)["rows"]


def synthetic_csv(rec, ds, n: int, spread: float) -> bytes:
    entry = _synthetic_entry(rec, ds, n, spread)
    if entry["csv"] is None:
        entry["csv"] = E.synthetic_csv(entry["rows"])
    return entry["csv"]


def date_columns(schema) -> dict:
    """``column_config`` for the datetime columns of ``schema``: dates as dates (``2020-04-06``, not
    ``2020-04-06 00:00:00``) when the column is declared in whole days (no ``decimals``), else with the time."""
    out = {}
    for c in schema.columns:
        if c.kind == "datetime":
            out[c.name] = (st.column_config.DateColumn(c.name, format="YYYY-MM-DD") if not c.decimals else
                           st.column_config.DatetimeColumn(c.name, format="YYYY-MM-DD HH:mm"))
    return out


#: The columns of the Use page's tables that are counts (whole numbers with separators, never "537.830").
COUNTS = ("estimated count", "true count")


def missing_labels(schema) -> dict:
    """The label an empty cell shows in each categorical column whose schema keeps missing values as a category
    (``missing="category"``): ``ui.tables.MISSING_LABEL``; other empty cells show ``ui.numbers.MISSING_CELL``."""
    return {c.name: T.MISSING_LABEL for c in schema.columns
            if c.kind in T.CATEGORICAL_KINDS and getattr(c, "missing", None) == "category"}


def boolean_note(schema) -> str | None:
    """What a boolean column's released values look like (True/False) and how to keep a file's own labels."""
    names = [c.name for c in schema.columns if c.kind == "boolean"]
    if not names:
        return None
    return (f"Boolean column(s) {', '.join(repr(n) for n in names)} come back as True/False, whatever the file "
            "wrote (yes/no, 1/0, t/f): the schema does not keep the file's labels. To keep them, declare the "
            "column categorical with those labels as its categories (e.g. no|yes) on the Data page.")


#: The library's mechanism name of a release of unweighted synthetic rows (the adaptive KME release).
ROWS_MECHANISM = "adaptive-kme"


def is_rows_release(rec) -> bool:
    """True for a release of unweighted synthetic rows (:mod:`ui.mechanisms.adaptive`, equal weights 1/M)."""
    return getattr(rec.release, "mechanism", None) == ROWS_MECHANISM


def released_rows(rec, ds) -> pd.DataFrame:
    """The synthetic rows of a rows release, rounded to the schema's public precision (what the CSV holds)."""
    return E.round_table(ds.schema, ds.schema.decode(rec.release.points))


def rows_release_panel(rec, ds) -> None:
    """The unweighted synthetic rows of an adaptive release, in the table's own columns and types."""
    rows = released_rows(rec, ds)
    st.markdown(f"**The released table**: {rows_words(ds, len(rows))}. Unweighted rows in the original columns "
                "and types: this is what a recipient gets.")
    st.dataframe(fill_missing(rows, missing_labels(ds.schema)), height=320, column_config=date_columns(ds.schema))
    st.caption("Every row lies in the schema's declared domain (decoded from the fitted synthetic table: "
               "post-processing of the noisy measurements).")
    if (note := boolean_note(ds.schema)) is not None:
        st.caption(note)


def release_table_panel(rec, ds) -> None:
    """The weighted rows of the release (original columns and types), heaviest first."""
    if is_rows_release(rec):
        rows_release_panel(rec, ds)
        return
    tr = E.table_release(rec, ds)
    tab = E.round_table(ds.schema, tr.table())
    wcol = tab.columns[-1]
    order = np.argsort(-np.abs(tab[wcol].to_numpy()), kind="stable")
    st.markdown(f"**The released table**: {tr.n_points} weighted rows in the original columns and types "
                "(heaviest first). This is what a recipient gets.")
    st.dataframe(fill_missing(tab.iloc[order].reset_index(drop=True), missing_labels(ds.schema)),
                 height=320, column_config=date_columns(ds.schema))
    w = tab[wcol].to_numpy()
    st.caption(f"{int((w != 0).sum())} of {w.size} rows carry weight; Σ w = {w.sum():.4g}, "
               f"{int((w < 0).sum())} negative. Every row lies in the schema's declared domain.")
    if (note := boolean_note(ds.schema)) is not None:
        st.caption(note)


def owner_view(rec, ds) -> None:
    """Owner's view: per-column marginals and the association heat-map, private vs released vs resampled."""
    st.subheader("Private vs released, column by column — owner's view")
    st.warning("**Owner's view.** The private marginals and associations below are computed from the private rows: "
               "for you only, never part of the release or of the downloads.", icon=":material/visibility_off:")
    if is_rows_release(rec):
        rows_owner_view(rec, ds)
        return
    tr = E.table_release(rec, ds)
    released = tr.table()
    w = released.iloc[:, -1].to_numpy()
    private = private_table(ds.key, ds)
    c1, c2 = st.columns([1, 3])
    ss.setdefault(TAB_SPREAD, DEFAULT_SPREAD)
    choice = c1.select_slider("Spread of resampled rows (× each column's lengthscale)", options=SPREADS,
                            key=TAB_SPREAD, persist_state="session",
                            help="Resampled rows are drawn from the weighted rows and moved within the "
                                 "kernel's scale inside the declared domain (0: copies of the atoms; "
                                 "columns with declared levels stay on them). The library default grows "
                                 "with the release's noise level. A post-processing choice; the downloaded "
                                 "synthetic rows use it too.")
    spread = spread_value(choice, tr)
    if choice == DEFAULT_SPREAD:
        c1.caption(f"Library default for this release: {spread:.3g}.")
    sampled = synthetic(rec, ds, n_synthetic(ds), spread)
    c2.caption(f"Grey: the {ds.n:,} private rows; red: the release, each row counted with its weight; blue: "
               f"{len(sampled):,} unweighted rows resampled from the release (post-processing, no privacy cost). Numeric "
               "columns on fixed bins over their declared range; missing values as their own bar.")
    cols = st.columns(2)
    for i, spec in enumerate(ds.schema.columns):
        with cols[i % 2]:
            plotly_chart(T.marginal_figure(spec, private[spec.name], released[spec.name], w, sampled[spec.name]),
                            key=MARGINAL.format(i=i))
    if len(ds.schema.columns) >= 2:
        with guard("compute the associations"):
            a_priv = T.association_matrix(private, ds.schema)
            a_rel = T.association_matrix(released, ds.schema, w)
            plotly_chart(T.association_figure(a_priv, a_rel))
            err = np.nanmean(np.abs(a_rel.to_numpy() - a_priv.to_numpy())[np.triu_indices(len(a_priv), 1)])
            st.caption(f"Mean absolute difference of the pairwise associations: {err:.3f}. Negative weights count "
                       "as 0 here.")


def marginal_tv(spec, private: pd.Series, released: pd.Series) -> float:
    """Total variation distance between a column's private and released shares (fixed bins over the declared
    range for numbers, categories with missing as their own level): ½ Σ |p − q|."""
    _, (p, q) = T.marginal_shares(spec, [(private, None), (released, None)])
    return float(np.abs(np.asarray(p) - np.asarray(q)).sum()) / 2.0


def rows_owner_view(rec, ds) -> None:
    """Owner's view of a rows release: each column's private vs released shares with their TV distance, and the
    associations (correlation, Cramér's V, correlation ratio) of the private and the synthetic rows."""
    released = ds.schema.decode(rec.release.points)
    private = private_table(ds.key, ds)
    st.caption(f"Grey: the {'' if _hidden(ds) else f'{ds.n:,} '}private rows; red: the {len(released):,} synthetic "
               "rows (each counted once). Numeric columns on fixed bins over their declared range; missing values as "
               "their own bar. TV: total variation distance between the two columns' shares (0 = identical, 1 = "
               "disjoint).")
    cols = st.columns(2)
    tvs = {}
    for i, spec in enumerate(ds.schema.columns):
        tv = marginal_tv(spec, private[spec.name], released[spec.name])
        tvs[spec.name] = tv
        with cols[i % 2]:
            plotly_chart(T.marginal_figure(spec, private[spec.name], released[spec.name], None,
                                           title=f"{spec.name} ({spec.kind}) — TV {tv:.3f}",
                                           released_label="synthetic rows"), key=MARGINAL.format(i=i))
    st.caption(f"Mean TV distance over the {len(tvs)} columns (1-way marginals): {np.mean(list(tvs.values())):.3f}.")
    if len(ds.schema.columns) >= 2:
        with guard("compute the associations"):
            a_priv = T.association_matrix(private, ds.schema)
            a_rel = T.association_matrix(released, ds.schema)
            plotly_chart(T.association_figure(a_priv, a_rel, titles=("private rows", "synthetic rows")))
            err = np.nanmean(np.abs(a_rel.to_numpy() - a_priv.to_numpy())[np.triu_indices(len(a_priv), 1)])
            st.caption(f"Mean absolute difference of the pairwise associations (correlation for two numeric "
                       f"columns, Cramér's V for two categorical ones, correlation ratio η for a mixed pair): {err:.3f}.")


def _hidden(ds) -> bool:
    from . import state as S

    return S.counts_hidden(ds)


def precision_caption(schema) -> str:
    """How the table downloads round each column, from the schema only (public): a continuous column to its declared
    ``decimals``, else to steps of at most 1/10,000 of its declared range
    (:meth:`dpkme.release.tabular.TableRelease.to_csv`'s rule: 3 decimals for a range of 50)."""
    from dpkme.release.tabular import _default_decimals

    parts = []
    for c in schema.columns:
        if c.kind != "continuous":
            continue
        if c.values is not None:
            parts.append(f"{c.name}: its declared levels")
            continue
        d = int(c.decimals) if c.decimals is not None else _default_decimals(c)
        how = "whole numbers" if d <= 0 else f"{d} decimal{'s' if d != 1 else ''}"
        parts.append(f"{c.name}: {how} ({'declared' if c.decimals is not None else '1/10,000 of its declared range'})")
    lead = "Numbers are rounded from the schema only (public): " + ("; ".join(parts) + "; " if parts else "")
    return lead + "integers as integers, dates to days unless their decimals are declared."


def downloads(rec, ds) -> None:
    """The weighted release (CSV), N unweighted synthetic rows (CSV) and the JSON metadata with the schema."""
    st.markdown("**Download the release**")
    if is_rows_release(rec):
        rows = released_rows(rec, ds)
        st.caption("The synthetic rows in the original columns and types; the JSON with every parameter, the "
                   "charge with its parts and the schema (a real release's files carry no seed). "
                   + precision_caption(ds.schema))
        stem = E.file_stem(rec)
        d1, d2 = st.columns(2)
        d1.download_button(f"CSV: {len(rows):,} synthetic rows", data=E.synthetic_csv(rows),
                           file_name=stem + "_rows.csv", mime="text/csv", key=DL_ROWS, on_click="ignore",
                           icon=":material/download:")
        d2.download_button("JSON: parameters + schema", data=E.table_json(rec, ds), file_name=stem + ".json",
                           mime="application/json", key=DL_JSON, on_click="ignore", icon=":material/download:")
        return
    st.caption("The weighted rows in the original columns and types (plus a weight column); unweighted synthetic rows "
               "resampled from them; the JSON with every parameter and the schema (a real release's files carry no "
               "seed). " + precision_caption(ds.schema))
    stem = E.file_stem(rec)
    spread = spread_value(ss.get(TAB_SPREAD, DEFAULT_SPREAD), E.table_release(rec, ds))
    d1, d2, d3 = st.columns(3)
    d1.download_button("CSV: weighted rows", data=E.table_release_csv(rec, ds), file_name=stem + "_weighted.csv",
                       mime="text/csv", key=DL_TABLE, on_click="ignore", icon=":material/download:")
    n = n_synthetic(ds)
    d2.download_button(f"CSV: {n:,} synthetic rows", data=synthetic_csv(rec, ds, n, spread),
                       file_name=stem + "_rows.csv", mime="text/csv", key=DL_ROWS, on_click="ignore",
                       icon=":material/download:")
    d3.download_button("JSON: parameters + schema", data=E.table_json(rec, ds), file_name=stem + ".json",
                       mime="application/json", key=DL_JSON, on_click="ignore", icon=":material/download:")


# --------------------------------------------------------------------------- third-party use
def use_view(rec, ds, w: np.ndarray) -> None:
    """What a recipient computes from the weighted rows, next to the private truth (owner's view).

    Every table with the private truth is an owner-only value (:class:`ui.presentation.OwnerOnly`): in presentation
    mode the truth is neither shown nor read, the estimates alone are drawn, with a note where the truth would be.
    """
    from .presentation import OwnerOnly, show_owner_details

    def with_truth(table, what: str, public) -> None:
        """The table with the truth (owner-only), else the estimates alone."""
        if not OwnerOnly(table, what).render(lambda t: st.dataframe(shown_table(t, counts=COUNTS))):
            st.dataframe(shown_table(public, counts=COUNTS))

    own = show_owner_details()
    tr = E.table_release(rec, ds)
    released = tr.table()
    private = private_table(ds.key, ds) if own else None
    schema = ds.schema
    cats = [c for c in schema.columns if c.kind in T.CATEGORICAL_KINDS]
    nums = [c for c in schema.columns if c.kind in T.NUMERIC_KINDS]

    def levels_of(spec):      # declared categories, then labels seen (in the private rows only for the owner)
        return T.category_levels(spec, released[spec.name], *(() if private is None else (private[spec.name],)))

    st.caption("Every estimate uses the weighted rows of the release, self-normalised (Σ w = 1): Σₘ wₘ h(rowₘ). "
               f"Counts are proportions × N = {ds.n:,} (the public number of private rows)."
               + (" The truth is computed from the private rows as the schema reads them — **owner's view only**."
                  if own else ""))
    if abs(float(np.sum(w))) <= 1e-12:
        st.error("The weights sum to 0: no proportion can be estimated from them. Choose probability weights above.")
        return

    st.subheader("Categories: counts and proportions")
    if not cats:
        st.info("The schema has no categorical or boolean column.")
    for c in cats:
        est = T.category_table(released, c, w, n=ds.n)
        levels = levels_of(c)
        est = est.set_index("category").reindex(levels, fill_value=0.0)
        tab = None
        if own:
            true = T.category_table(private, c).set_index("category").reindex(levels, fill_value=0.0)
            tab = pd.DataFrame({"estimated proportion": est["proportion"], "true proportion": true["proportion"],
                                "error": est["proportion"] - true["proportion"], "estimated count": est["count"],
                                "true count": true["count"].round().astype("int64")}).rename_axis(c.name)
        st.markdown(f"**{c.name}**")
        with_truth(tab, f"The true (private) proportions and counts of {c.name}",
                   pd.DataFrame({"estimated proportion": est["proportion"],
                                 "estimated count": est["count"]}).rename_axis(c.name))

    if len(cats) >= 2:
        st.subheader("Cross-tabulation")
        names = [c.name for c in cats]
        ss.setdefault(XT_A, names[0])
        ss.setdefault(XT_B, names[1])
        if ss[XT_A] not in names:
            ss[XT_A] = names[0]
        if ss[XT_B] not in names:
            ss[XT_B] = names[1]
        a1, a2 = st.columns(2)
        an = a1.selectbox("Rows", names, key=XT_A, persist_state="session")
        bn = a2.selectbox("Columns", names, key=XT_B, persist_state="session")
        if an == bn:
            st.error("Choose two different columns for the cross-tabulation.")
        else:
            a, b = schema[an], schema[bn]
            la, lb = levels_of(a), levels_of(b)
            x_est = T.crosstab(released, a, b, w, levels_a=la, levels_b=lb)
            x1, x2 = st.columns(2)
            x1.markdown("**From the release** (shares of all rows)")
            x1.dataframe(shown_table(x_est))

            def true_crosstab(x_true) -> None:
                x2.markdown("**True (private)**")
                x2.dataframe(shown_table(x_true))
                err = float(np.abs(x_est.to_numpy() - x_true.to_numpy()).sum()) / 2
                st.caption(f"Total variation distance between the two tables: {err:.3f}.")

            OwnerOnly(T.crosstab(private, a, b, levels_a=la, levels_b=lb) if own else None,
                      "The true (private) cross-tabulation").render(true_crosstab)

    if nums and cats:
        st.subheader("Means by group")
        nn, cn = [c.name for c in nums], [c.name for c in cats]
        # a measured number by default, not a date (whose mean reads as days since 1970)
        first = next((c.name for c in nums if c.kind != "datetime"), nn[0])
        ss.setdefault(GM_NUM, first)
        ss.setdefault(GM_CAT, cn[0])
        if ss[GM_NUM] not in nn:
            ss[GM_NUM] = first
        if ss[GM_CAT] not in cn:
            ss[GM_CAT] = cn[0]
        g1, g2 = st.columns(2)
        num = schema[g1.selectbox("Mean of", nn, key=GM_NUM, persist_state="session")]
        cat = schema[g2.selectbox("By", cn, key=GM_CAT, persist_state="session")]
        levels = levels_of(cat)
        est = T.group_means(released, num, cat, w, levels=levels)
        tab = None
        if own:
            true = T.group_means(private, num, cat, levels=levels)
            tab = pd.DataFrame({cat.name: levels, "estimated mean": est["mean"], "true mean": true["mean"],
                                "error": est["mean"] - true["mean"], "estimated share": est["share"],
                                "true share": true["share"]})
        if not OwnerOnly(tab, f"The true (private) means of {num.name} by {cat.name}").render(
                lambda t: st.dataframe(shown_table(t), hide_index=True)):
            st.dataframe(shown_table(pd.DataFrame({cat.name: levels, "estimated mean": est["mean"],
                                                   "estimated share": est["share"]})), hide_index=True)
        if num.kind == "datetime":
            st.caption("Dates as days since 1970-01-01.")

    if nums:
        st.subheader("Means and standard deviations")
        est = T.numeric_moments(released, schema, w).set_index("column")
        tab = None
        if own:
            true = T.numeric_moments(private, schema).set_index("column")
            tab = pd.DataFrame({"estimated mean": est["mean"], "true mean": true["mean"],
                                "error of the mean": est["mean"] - true["mean"], "estimated SD": est["sd"],
                                "true SD": true["sd"]})
        if not OwnerOnly(tab, "The true (private) means and standard deviations").render(
                lambda t: st.dataframe(shown_table(t, precision=4))):
            st.dataframe(shown_table(pd.DataFrame({"estimated mean": est["mean"], "estimated SD": est["sd"]}),
                                     precision=4))
        if any(c.kind == "datetime" for c in nums):
            st.caption("Dates as days since 1970-01-01.")
