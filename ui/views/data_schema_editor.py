"""The Data page's schema editor for mixed tables: seed, edit, save/load as JSON, discover privately.

The editor's rows live in the session (``data.schema.<source>``, where the source is ``sample:<name>`` or
``upload:<hash>``), so the declared schema of a bundled table or of an upload survives leaving the page.
The rows are seeded once per source: from the bundled table's declared schema, else from
:func:`dpkme.schema.suggest_schema` with the publishable subset as its public rows, else -- visibly flagged --
from the private rows (those columns stay marked *not declared*, and releases are NOT private until they are
re-declared). Private discovery of bounds and categories (:mod:`dpkme.privacy.discovery`) is charged to the
ledger of the table's individuals before it reads the private rows.
"""

from __future__ import annotations

import warnings
from types import SimpleNamespace

import numpy as np
import pandas as pd
import streamlit as st

from ui import gate as G
from ui import state as S
from ui import tables as T
from ui.numbers import shown_table
from ui.widgets import guard

ss = st.session_state

EXPLAIN = r"""A **schema** says, for every column you release, what values are *possible* — not what the data
show. It turns each row into a vector (its *embedding*), and the kernel compares rows through it.

| kind | what it means | what you declare |
|---|---|---|
| continuous | a real number (a measurement) | lower and upper bound; precision (decimals); optionally its levels |
| integer | a whole number (a count, a year) | lower and upper bound (whole numbers) |
| datetime | a date or time, treated as a number of days since 1970-01-01 | first and last possible date (YYYY-MM-DD; a date is its midnight, so with times of day declare the day after the last one); decimals to keep the time of day |
| categorical | one label out of a list | the list of categories, separated by `|` |
| boolean | true / false (also read: yes / no, y / n, t / f, 1 / 0) | nothing (the categories are false, true); released rows say True / False — to keep labels such as yes / no, declare the column categorical with them |

**Levels** (`values`, continuous and integer columns): when a number can only take a few documented values —
survey codes such as ages 17.5, 22, 27, … — list them, separated by commas. The column stays a number (order and
distance count), but released and resampled rows take only these values; a private value between them is moved to
the nearest level (owner's counts: *rounded*).

**Missing values**: `error` refuses them (the message names the column and how many rows), `impute` replaces
them by the declared value, `category` makes "missing" a level of its own (for a number: a missing flag plus
the declared value).

**Why declare them?** Differential privacy protects every row only if everything the noise is calibrated
around is fixed *before* looking at the rows. The minimum and maximum of the private column, or its list of
observed categories, are themselves statistics of the private data: a rare category or an outlier could be
read straight off them. So bounds and categories come from public knowledge (a code book, physical or legal
limits, the publishable subset) or are released privately with their budget in the ledger. Values outside the
declared bounds are clipped to them; that is part of the declared preprocessing and costs no privacy.

**The mixed kernel.** A numeric column with bounds $[lo, hi]$ and lengthscale $\ell$ (a *fraction of the
range*) becomes the coordinate $e = (x - lo)/((hi - lo)\,\ell)$; a categorical column becomes a one-hot block
scaled by $\sqrt{-\ln\kappa}$, where $\kappa\in(0,1)$ is the declared *similarity* of two different categories.
The kernel is the Gaussian kernel on these vectors, a product of one factor per column:

$$k(x, y) = \exp\!\Big(-\tfrac12\|e(x) - e(y)\|^2\Big) = \prod_{\text{numeric } j}
\exp\!\Big(-\frac{(x_j - y_j)^2}{2\,\ell_j^2 (hi_j - lo_j)^2}\Big)\;\prod_{\text{categorical } c}
\kappa_c^{[x_c \ne y_c]}.$$

A small lengthscale makes the kernel see fine differences in that column (and needs more data to resolve
them); a similarity close to 1 makes two categories look alike, close to 0 makes them look unrelated.
$k(x, x) = 1$ and $0 < k \le 1$, so the sensitivity proofs and every mechanism apply unchanged. Left blank,
the lengthscale and similarity follow a public rule computed from the schema alone (every column contributes
equally to the distance between two random rows of the declared domain)."""


#: Session key and default of the most categories a suggested categorical column may have (``suggest_schema``'s
#: ``max_categories``): W1 walk, a US-state column (57 values) was left out with no way to raise the limit in the app.
MAX_CATEGORIES_KEY = "data.schema_max_categories"
DEFAULT_MAX_CATEGORIES = 50
#: The session and widget keys of the schema editor: one table's (``{table}``: its ``src_key``), and of the private
#: discovery of bounds and categories.
RESET = "data.schema_reset.{table}"
SCHEMA_JSON = "data.schema_json.{table}"
SCHEMA_UPLOAD = "data.schema_upload.{table}"
DISCOVERY_ERROR = "data._discovery_error"       # a refused private discovery, shown once
DISCOVERED = "data._discovered"                 # {state key: the columns discovered privately}
DISC_COLUMNS = "data.disc_cols.{table}"
DISC_EPS = "data.disc_eps"
DISC_DELTA = "data.disc_delta"
DISC_LO = "data.disc_lo.{table}.{column}"
DISC_HI = "data.disc_hi.{table}.{column}"
DISC_GO = "data.disc_go.{table}"
SCHEMA = "data.schema.{table}"                 # the editor state of one table (state_key)
EDITOR = "data.schema_editor.{table}.{version}"   # its data editor (editor_key)


def state_key(src_key: str) -> str:
    """Session key of the editor state of one table (``sample:<name>`` or ``upload:<hash>``)."""
    return SCHEMA.format(table=src_key)


def editor_key(src_key: str, version: int) -> str:
    """Widget key of the data editor (a new version starts from fresh rows)."""
    return EDITOR.format(table=src_key, version=int(version))


def bundled_schema(name: str):
    """The declared schema shipped with a bundled table, or None."""
    import dpkme.datasets as datasets
    from dpkme.schema import TableSchema

    loader = getattr(datasets, "load_schema", None)
    if loader is not None:
        try:
            out = loader(name)
        except (ValueError, FileNotFoundError, KeyError):
            out = None
        if out is not None:
            return out if isinstance(out, TableSchema) else TableSchema.from_dict(out)
    info = datasets.SAMPLES.get(name)
    sch = getattr(info, "schema", None)
    if sch is None:
        return None
    if isinstance(sch, TableSchema):
        return sch
    if isinstance(sch, dict):
        return TableSchema.from_dict(sch)
    return TableSchema.from_json(sch)


def suggestion(frame: pd.DataFrame, public_rows: pd.DataFrame | None):
    """``suggest_schema`` of the table: from the public rows when given, else from the private ones (flagged)."""
    from dpkme.privacy.leaks import PrivacyLeakWarning
    from dpkme.schema import suggest_schema

    with warnings.catch_warnings():
        warnings.simplefilter("ignore", PrivacyLeakWarning)   # shown on the page instead (the schema records it)
        return suggest_schema(frame, public=public_rows,
                              max_categories=int(ss.get(MAX_CATEGORIES_KEY, DEFAULT_MAX_CATEGORIES)))


def _seed(ctx: dict, public_rows) -> dict:
    frame = ctx["frame"]
    bundled = ctx.get("bundled")
    if bundled is not None:
        schema, origin, excluded = bundled, "the bundled table's declared schema", {}
    else:
        sug = suggestion(frame, public_rows)
        schema, excluded = sug.schema, dict(sug.excluded)
        origin = ("suggestions from the publishable subset (public rows)" if public_rows is not None
                  else "suggestions read from the PRIVATE rows")
    return {"base": T.editor_frame(schema, frame.columns, data_dependent=schema.data_dependent),
            "original": schema, "origin": origin, "excluded": excluded, "edited": None,
            # the publishable subset the suggestions read: if it changes, they were read from rows that may
            # now be private, and must be declared again
            "public_id": ctx.get("public_id") if bundled is None and public_rows is not None else None}


def _undeclare_all(state: dict, why: str) -> None:
    """Untick *declared* on every row (their values may have been read from rows that are private now)."""
    base = (state["edited"] if state.get("edited") is not None else state["base"]).copy()
    base["declared"] = False
    state.update(base=base, edited=None, version=state.get("version", 0) + 1, public_id=None,
                 origin=state["origin"] + f" ({why}: declare each row again)")


def _replace(st_key: str, schema, origin: str, columns) -> None:
    state = ss[st_key]
    state.update(base=T.editor_frame(schema, columns, data_dependent=schema.data_dependent), original=schema,
                 origin=origin, excluded={}, edited=None, version=state.get("version", 0) + 1)


def _reset(st_key: str, ctx: dict, public_rows) -> None:
    """Button callback: the rows again from the bundled schema or the suggestions."""
    old = ss[st_key]
    # keep the id of a loaded JSON file: the uploader still holds it, and it must not be loaded again
    ss[st_key] = {**_seed(ctx, public_rows), "version": old.get("version", 0) + 1, "json_id": old.get("json_id")}


COLUMN_CONFIG = {
    "use": st.column_config.CheckboxColumn("use", help="Release this column (untick to leave it out)."),
    "column": st.column_config.TextColumn("column", disabled=True),
    "kind": st.column_config.SelectboxColumn("kind", options=list(T.KINDS), required=True,
                                             help="continuous, integer, categorical, boolean or datetime"),
    "lower": st.column_config.TextColumn("lower", help="Smallest possible value (a number, or YYYY-MM-DD)."),
    "upper": st.column_config.TextColumn("upper", help="Largest possible value (a number, or YYYY-MM-DD). A date "
                                         "means its midnight: for a column with times of day, declare the day after "
                                         "the last one (or YYYY-MM-DD 23:59)."),
    "values": st.column_config.TextColumn("values", help="Levels of a continuous or integer column: the documented "
                                          "values it can take, separated by commas (e.g. 17.5, 22, 27); blank: any "
                                          "value within the bounds."),
    "categories": st.column_config.TextColumn("categories", help=f"Declared categories, separated by "
                                              f"'{T.CATEGORY_SEP}' (categorical columns)."),
    "missing": st.column_config.SelectboxColumn("missing", options=list(T.MISSING_MODES), required=True,
                                                help="error: refuse; impute: the declared value; category: a "
                                                     "level of its own"),
    "impute": st.column_config.TextColumn("impute", help="Replacement of a missing value (missing = impute)."),
    "lengthscale": st.column_config.NumberColumn("lengthscale", min_value=1e-6, format="%.4g",
                                                 help="Fraction of the declared range (blank: the public default)."),
    "similarity": st.column_config.NumberColumn("similarity", min_value=0.0, max_value=1.0, format="%.4g",
                                                help="Kernel value of two different categories, in (0, 1) "
                                                     "(blank: the public default)."),
    "decimals": st.column_config.NumberColumn("decimals", step=1, format="%d",
                                              help="Precision of a continuous column in the downloads."),
    "date_format": st.column_config.TextColumn(
        "date_format", help="How a date column's cells are written: ISO8601 (2024-03-31) or a strftime format such "
                            "as %d/%m/%Y. Each cell is read on its own with it; never guessed from the rows."),
    "declared": st.column_config.CheckboxColumn(
        "declared", help="Ticked: the values of this row come from public knowledge (or a private discovery). "
                         "Unticked: they were read from the private rows, and releases are NOT private. A bound, "
                         "category list or level read from the private rows stays flagged until you type a value "
                         "from public knowledge: a tick alone does not declare it."),
}


def dependence_warning(schema) -> str:
    """The one warning of the Data page for a schema read from the private rows: what was read, why it matters, what
    to do. (The dataset built with it carries the same fact as a note; the page shows it here only.)"""
    fields = schema.data_dependent_fields
    what = "; ".join(f"{name} ({', '.join(sorted(fields.get(name, ())) or ['values'])})"
                     for name in schema.data_dependent)
    return ("**Schema read from the private rows.** What: these columns' values were **read from the private rows** "
            f"(suggestions without a publishable subset): {what}. Why it matters: they are statistics of the private "
            "data (a minimum, a maximum, which categories occur), so every release with this schema is marked **NOT "
            "differentially private**. What to do: set those cells from public knowledge (a code book, physical or "
            "legal limits) and tick *declared*; or declare a publishable subset and press **Reset the schema**; or "
            "discover the values privately below (ε charged to the ledger).")


def schema_editor(ctx: dict, *, public_rows: pd.DataFrame | None, private_index: np.ndarray,
                  stub: S.Dataset | None):
    """Draw the schema editor of one table; returns the declared :class:`~dpkme.schema.TableSchema` or None.

    Parameters
    ----------
    ctx : dict
        ``frame`` (the whole table), ``src_key`` (``sample:<name>`` / ``upload:<hash>``), ``bundled`` (a
        declared schema or None), ``label``.
    public_rows : DataFrame or None
        The publishable subset (declared public), for suggestions.
    private_index : ndarray
        Row positions of the private rows (private discovery reads these only).
    stub : Dataset or None
        A stand-in with the data key and split of these rows, for the ledger of private discovery.
    """
    frame = ctx["frame"]
    src_key = ctx["src_key"]
    st_key = state_key(src_key)
    ctx = {**ctx, "public_id": None if stub is None else stub.public_subset_id}
    if st_key not in ss:
        ss[st_key] = {**_seed(ctx, public_rows), "version": 0}
    state = ss[st_key]
    if state.get("public_id") is not None and state["public_id"] != ctx["public_id"]:
        _undeclare_all(state, "the publishable subset these suggestions read has changed since")
    ekey = editor_key(src_key, state["version"])
    if ekey not in ss and state.get("edited") is not None:
        state["base"] = state["edited"]        # back on the page: continue from the last edits

    st.subheader("Schema: what every column may hold")
    with st.expander("What is a schema, and how does it shape the kernel?", icon=":material/help:"):
        st.markdown(EXPLAIN)
    st.caption(f"Rows seeded from {state['origin']}. Edit any cell; untick *use* to leave a column out. "
               "Bounds and categories must describe what is *possible*, from public knowledge. Blank lengthscale / "
               "similarity: the public default; cells that do not apply to a column's kind are ignored.")
    edited = st.data_editor(state["base"], key=ekey, hide_index=True, width="stretch", num_rows="fixed",
                            column_config=COLUMN_CONFIG, column_order=list(T.EDITOR_COLUMNS))
    state["edited"] = edited
    excluded = state.get("excluded") or {}
    for name, why in excluded.items():
        st.caption(f"Column {name!r} was not suggested: {why}.")
    if any("distinct values" in str(why) for why in excluded.values()) or ss.get(MAX_CATEGORIES_KEY) is not None:
        ss.setdefault(MAX_CATEGORIES_KEY, DEFAULT_MAX_CATEGORIES)
        st.number_input("Most categories a suggested column may have", min_value=2, max_value=1000, step=10,
                        key=MAX_CATEGORIES_KEY, persist_state="session",
                        help="A text column with more distinct values is left out of the suggestions (an identifier "
                             "or free text?). Raise it for a real category list (e.g. 57 US states and territories), "
                             "then press **Reset the schema**: the suggestions are made again with the new limit.")

    schema = None
    with guard("read the schema"):
        schema = T.schema_from_editor(edited, original=state.get("original"), released=state.get("released"))
    if schema is not None and schema.data_dependent:
        st.warning(dependence_warning(schema), icon=":material/visibility:")

    c1, c2, c3 = st.columns([1, 1, 2])
    c1.button("Reset the schema", key=RESET.format(table=src_key), on_click=_reset,
              args=(st_key, ctx, public_rows),
              help="Back to the bundled schema, or to fresh suggestions (from the publishable subset if declared).")
    if schema is not None:
        c2.download_button("Download the schema (JSON)", data=T.schema_json_bytes(schema),
                           file_name=f"{ctx.get('label', 'table')}.schema.json".replace(" ", "_"),
                           mime="application/json", key=SCHEMA_JSON.format(table=src_key), on_click="ignore",
                           icon=":material/download:")
    up = c3.file_uploader("Load a schema (JSON)", type=["json"], key=SCHEMA_UPLOAD.format(table=src_key),
                          help="A schema saved with 'Download the schema' (or written by dpkme.schema).")
    if up is not None and up.file_id != state.get("json_id"):
        state["json_id"] = up.file_id
        with guard(f"load the schema {up.name!r}") as res:
            loaded = T.schema_from_json_bytes(up.getvalue())
            absent = [n for n in loaded.names if n not in [str(c) for c in frame.columns]]
            if absent:
                raise ValueError(f"the schema declares column(s) {absent} that this table lacks; its columns are "
                                 f"{[str(c) for c in frame.columns][:20]}.")
        if res.ok:
            _replace(st_key, loaded, f"the uploaded file {up.name!r}", frame.columns)
            st.rerun()

    if schema is not None:
        with st.expander("The kernel this schema declares (effective lengthscales and similarities)"):
            st.dataframe(shown_table(schema.describe(), precision=None), width="stretch")
            st.caption("lengthscale: a fraction of the column's declared range; similarity: the kernel value of two "
                       "different categories (or of a present and a missing value). 'default' = the public rule "
                       f"computed from the schema alone. Embedding dimension D = {schema.dim}.")
    _discovery(ctx, st_key, edited, private_index, stub)
    return schema


# --------------------------------------------------------------------------- private discovery
def _discover(st_key: str, ctx: dict, jobs: list[dict], private_index: np.ndarray, stub: S.Dataset) -> None:
    """Button callback: charge the ledger, then release the bounds/categories of ``jobs`` privately."""
    from dpkme.privacy.discovery import private_bounds, private_categories

    frame = ctx["frame"]
    rows = frame.iloc[private_index]
    base = ss[st_key]["edited"] if ss[st_key].get("edited") is not None else ss[st_key]["base"]
    base = base.copy()
    done = []
    try:
        problem = S.split_change_problem(stub)
        if problem:
            raise ValueError(problem)
        for job in jobs:
            name, kind = job["column"], job["kind"]
            col = rows[name]
            if kind in T.NUMERIC_KINDS:
                lo, hi = (T._parse_value(job[b], kind, column=name, what=f"coarse {b} bound") for b in ("lower", "upper"))
                if lo is None or hi is None:
                    raise ValueError(f"column {name!r}: declare the coarse range inside which the bounds are searched.")
                if kind == "datetime":
                    lo_d, hi_d = (float((pd.Timestamp(v) - pd.Timestamp("1970-01-01")) / pd.Timedelta(days=1))
                                  for v in (lo, hi))
                    vals = T.as_numbers(col, "datetime", spec=job.get("spec"))
                else:
                    lo_d, hi_d = float(lo), float(hi)
                    vals = pd.to_numeric(col, errors="coerce").to_numpy(dtype=float, na_value=np.nan)
                out, note = _gated(stub, _bounds_charge(job["epsilon"], name),
                                   compute=lambda inputs, vals=vals, lo_d=lo_d, hi_d=hi_d, job=job, name=name: private_bounds(
                                       vals, epsilon=job["epsilon"], lower=lo_d, upper=hi_d,
                                       label=f"private bounds of {name!r} (DP quantiles)"))
                lo_v, hi_v = out.lower, out.upper
                if kind == "integer":
                    lo_v, hi_v = float(np.floor(lo_v)), float(np.ceil(hi_v))
                if not hi_v > lo_v:
                    hi_v = lo_v + (1.0 if kind != "continuous" else max(abs(lo_v) * 1e-6, 1e-9))
                if kind == "datetime":
                    lo_t = (pd.Timestamp("1970-01-01") + pd.Timedelta(days=float(np.floor(lo_v)))).date().isoformat()
                    hi_t = (pd.Timestamp("1970-01-01") + pd.Timedelta(days=float(np.ceil(hi_v)))).date().isoformat()
                else:
                    lo_t, hi_t = T._text(int(lo_v) if kind == "integer" else lo_v), \
                        T._text(int(hi_v) if kind == "integer" else hi_v)
                mask = base["column"] == name
                base.loc[mask, "lower"], base.loc[mask, "upper"] = lo_t, hi_t
                done.append({"column": name, "released": f"[{lo_t}, {hi_t}]", "ε": job["epsilon"], "δ": 0.0,
                             "note": note, "fields": ("lower", "upper")})
            else:
                out, note = _gated(stub, _categories_charge(job["epsilon"], job["delta"], name),
                                   compute=lambda inputs, col=col, job=job, name=name: private_categories(
                                       col, epsilon=job["epsilon"], delta=job["delta"],
                                       label=f"private categories of {name!r}"))
                cats = sorted((str(c) for c in out.categories), key=str.lower)
                mask = base["column"] == name
                if kind == "categorical":
                    if len(cats) < 2:
                        raise ValueError(f"column {name!r}: fewer than 2 categories passed the threshold "
                                         f"({cats}); declare them by hand or spend more ε.")
                    base.loc[mask, "categories"] = T.CATEGORY_SEP.join(cats)
                done.append({"column": name, "released": T.CATEGORY_SEP.join(cats), "ε": job["epsilon"],
                             "δ": job["delta"], "note": note, "fields": ("categories",)})
    except ValueError as exc:
        ss[DISCOVERY_ERROR] = str(exc)
    if done:
        state = ss[st_key]
        released = state.setdefault("released", {})
        for d in done:
            released.setdefault(d["column"], set()).update(d.pop("fields"))
        state.update(base=base, edited=None, version=state.get("version", 0) + 1,
                     origin=state["origin"] + " + private discovery")
        ss.setdefault(DISCOVERED, {}).setdefault(st_key, []).extend(done)


def _gated(stub: S.Dataset, charge, *, compute):
    """One private discovery through the gate (charged, and the publishable subset locked, before the rows are
    read); returns ``(result, over-budget note)``. The library's own charge of the result must be the one charged."""
    run = G.run_private(page="data", ds=stub, charges=lambda rows: [charge], compute=compute,
                        noise_source="os-entropy", uses_kernel=False, uses_epsilon=False)
    if not run.private:
        raise ValueError("a private discovery on these rows would not be private: " + "; ".join(run.reasons))
    out = run.result
    own = getattr(out, "charge", None)
    if own is not None and (own.epsilon * own.count, own.delta * own.count) != (charge.epsilon * charge.count,
                                                                                charge.delta * charge.count):
        raise RuntimeError(f"the discovery reports a charge ({own.epsilon:g} × {own.count}) other than the one "
                           f"charged ({charge.epsilon:g} × {charge.count}).")
    return out, run.note


def _declared_date_format(schema, name: str) -> SimpleNamespace:
    """The date format to read column ``name`` with during a private discovery: the schema's, unless that
    format was itself chosen by looking at the private rows (then ISO 8601, a public default)."""
    fmt = "ISO8601"
    if schema is not None and name in getattr(schema, "names", ()):
        fields = dict(getattr(schema, "data_dependent_fields", {}) or {}).get(name, ())
        if "date_format" not in fields:
            fmt = getattr(schema[name], "date_format", None) or fmt
    return SimpleNamespace(date_format=fmt)


def _bounds_charge(eps: float, name: str):
    from dpkme.privacy.accounting import pure_dp_charge

    # as dpkme.privacy.discovery.private_bounds charges it: two quantiles at ε/2 each
    return pure_dp_charge(f"private bounds of {name!r} (DP quantiles)", epsilon=eps / 2, mechanism="exponential",
                          count=2)


def _categories_charge(eps: float, delta: float, name: str):
    from dpkme.privacy.accounting import PrivacyCharge

    return PrivacyCharge(label=f"private categories of {name!r}", mechanism="approx-dp", epsilon=float(eps),
                         delta=float(delta))


def _discovery(ctx: dict, st_key: str, edited: pd.DataFrame, private_index: np.ndarray, stub) -> None:
    with st.expander("Discover bounds and categories privately (ε charged to the ledger)", icon=":material/lock:"):
        st.markdown(
            "When no public source gives a column's bounds or categories, release them **privately**: two DP "
            "quantiles (1 % and 99 %) inside a coarse range you declare (the exponential mechanism, pure ε-DP), or "
            "the categories whose noisy count passes a threshold (a rare category is released only with "
            "probability ≤ δ). Each step reads the private rows once; its ε (and δ) go to the ledger of these "
            "individuals, and the released values are then public (post-processing).")
        if stub is None:
            st.info("Private discovery needs the split of the rows (set above) to be valid.")
            return
        rows = edited[edited["use"].astype(bool)] if "use" in edited else edited
        rows = rows[rows["kind"].isin([*T.NUMERIC_KINDS, "categorical"])]     # booleans have nothing to discover
        names = [str(c) for c in rows["column"]]
        if not names:
            return
        flagged = [str(r["column"]) for _, r in rows.iterrows() if not bool(r.get("declared", True))]
        key = DISC_COLUMNS.format(table=ctx['src_key'])
        ss.setdefault(key, [n for n in flagged if n in names][:3])
        ss[key] = [n for n in ss[key] if n in names]
        chosen = st.multiselect("Columns to discover", names, key=key, persist_state="session")
        ss.setdefault(DISC_EPS, 0.1)
        eps = float(st.select_slider("ε per column", options=[0.01, 0.03, 0.1, 0.3, 1.0], key=DISC_EPS,
                                     persist_state="session"))
        ss.setdefault(DISC_DELTA, 1e-6)
        delta = float(st.select_slider("δ per categorical column", options=[1e-4, 1e-5, 1e-6, 1e-7, 1e-8],
                                       format_func=S.fmt_delta, key=DISC_DELTA,
                                       persist_state="session"))
        jobs = []
        for name in chosen:
            row = rows[rows["column"] == name].iloc[0]
            kind = str(row["kind"])
            job = {"column": name, "kind": kind, "epsilon": eps, "delta": delta}
            if kind == "datetime":
                job["spec"] = _declared_date_format(ss[st_key].get("original"), name)
            if kind in T.NUMERIC_KINDS:
                a, b = st.columns(2)
                lk, hk = DISC_LO.format(table=ctx['src_key'], column=name), DISC_HI.format(table=ctx['src_key'], column=name)
                # pre-filled only from a declared row: a suggestion read off the private rows (e.g. round numbers
                # around the private maximum) would make the private search range itself depend on the data
                public_row = bool(row.get("declared", False))
                ss.setdefault(lk, str(row.get("lower") or "") if public_row else "")
                ss.setdefault(hk, str(row.get("upper") or "") if public_row else "")
                job["lower"] = a.text_input(f"{name}: coarse lower bound (declared)", key=lk,
                                            persist_state="session")
                job["upper"] = b.text_input(f"{name}: coarse upper bound (declared)", key=hk,
                                            persist_state="session")
            jobs.append(job)
        total = eps * len(jobs)
        if jobs:
            st.caption(f"Total: ε = {total:g}" + (f", δ = {S.fmt_delta(delta * sum(j['kind'] not in T.NUMERIC_KINDS for j in jobs))}"
                                                   if any(j["kind"] not in T.NUMERIC_KINDS for j in jobs) else "")
                       + ". The coarse ranges must come from public knowledge (e.g. 'a body mass is between 0 and "
                       "20 000 g'), not from the rows. Real releases: fresh OS-entropy noise, no seed.")
        G.over_budget_checkbox("data")
        st.button(f"Discover privately (spends ε = {total:g})", key=DISC_GO.format(table=ctx['src_key']),
                  disabled=not jobs, on_click=_discover, args=(st_key, ctx, jobs, private_index, stub))
        if DISCOVERY_ERROR in ss:
            st.error(f"Could not discover privately: {ss.pop(DISCOVERY_ERROR)}")
        found = ss.get(DISCOVERED, {}).get(st_key)
        if found:
            for d in found:
                if d.get("note"):
                    st.warning(d["note"])
            st.dataframe(shown_table(pd.DataFrame([{k: (S.fmt_delta(v) if k == "δ" else v) for k, v in d.items()
                                                    if k != "note"} for d in found]), precision=None), hide_index=True)
            st.caption("Released privately and charged to the ledger: these values are public now. The rest of each "
                       "row (its kind, read from how the private cells look; its missing-value policy) still comes "
                       "from the private rows: set those cells from public knowledge, then tick *declared*.")
