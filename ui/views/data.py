"""The Data page's views (``pages/data.py``): where the rows come from (generated, a bundled sample, an upload), the
publishable and held-out split and the declared scaling, a mixed table's schema, the dataset to use, the owner's
preview."""

from __future__ import annotations

import hashlib
import json
from types import SimpleNamespace

import numpy as np
import pandas as pd
import streamlit as st

from dpkme.datasets import GENERATORS, SAMPLES
from dpkme.io import (
    MAX_COLUMNS,
    MAX_ROWS,
    MAX_UPLOAD_BYTES,
    MIN_ROWS,
    identifier_reason,
    load_table,
    nonprivate_summary,
    numeric_columns,
    numeric_matrix,
)
from dpkme.preprocessing import SOURCE_PRIVATE, DeclaredScaling, scale_warning
from ui import presentation as P
from ui import state as S
from ui import table_views as TV
from ui import tables as T
from ui.charts import plotly_chart
from ui.datasets import (
    PUBLIC_STATEMENT,
    SCALING_MODES,
    TABLE_SCALING_DEFAULT,
    build_dataset,
    cached_dataset,
    declared_bounds,
    scaling_suggestion,
    spec_json,
    split_indices,
)
from ui.figures import data_figure, pca_basis
from ui.numbers import fill_missing
from ui.views.data_schema_editor import bundled_schema, schema_editor
from ui.widgets import guard

ss = st.session_state

# --------------------------------------------------------------------------- this page's session and widget keys
CANDIDATE = "data._candidate"
FORGOTTEN_UPLOAD = "data._forgotten_upload"
CLIP = "data.clip"
COLSCALE_CURRENT = "data.colscale_current"
COLSCALE_PRIVATE = "data.colscale_private"
DROP_MISSING = "data.drop_missing"
FIG = "data.fig"
GENERATOR = "data.generator"
HELDOUT_PCT = "data.heldout_pct"
MODE = "data.mode"
PUBLIC_DECLARED = "data.public_declared"
PUBLIC_PCT = "data.public_pct"
SAMPLE = "data.sample"
SCALING = "data.scaling"
SCALING_TABLE = "data.scaling.table"
SEED = "data.seed"
SOURCE = "data.source"
SPLIT_SEED = "data.split_seed"
UPLOAD_KEY = "data.upload"
UPLOAD_ENCODING = "data.upload_encoding"
UPLOAD_FORGET = "data.upload_forget"
USE = "data.use"
GEN_PARAM = "data.gen.{generator}.{param}"        # a generator's parameter
SAMPLE_COLUMNS = "data.cols.{sample}"             # the chosen columns of a bundled sample
SAMPLE_DROP_MISSING = "data.drop_missing.{sample}"
UPLOAD_COLUMNS = "data.upcols.{upload}"           # the chosen columns of an upload (by its content hash)
COLUMN_SCALING = "data.colscale.{columns}"        # the per-column scaling table of a set of columns
BOX = "data.box.{columns}"                        # the declared box of a set of columns
EDITOR = "{table}.editor"                         # the data editor of such a table

def header() -> None:
    """The stepper, the page's title and what it decides."""
    P.stepper("data")
    st.title("Data")
    st.markdown(
        "Choose the table that plays the role of the **private database**. The following pages protect its "
        "**private rows** with differential privacy; rows you declare publishable are published in the clear and "
        "are not protected. Generated and bundled data are public stand-ins, so you "
        "can compare the private release with the truth; uploaded files stay in this browser session's memory "
        "(never written to disk)."
    )


#: Encodings of an uploaded text table (the first: UTF-8, or UTF-16 with a byte-order mark, as the loader reads by default).
UPLOAD_ENCODINGS = ["utf-8", "cp1252", "latin-1"]
ENCODING_LABELS = {"utf-8": "UTF-8 (default)", "cp1252": "Windows-1252 (Western European, older Excel)",
                   "latin-1": "Latin-1 (ISO-8859-1)"}


def upload_error_advice(message: str) -> str:
    """The loader's error with the app's advice: its "pass encoding=..." means the encoding box here."""
    if "encoding=" in message:
        message = message.replace("pass it explicitly as encoding=... .",
                                  "choose it under **Text encoding of a CSV/TSV file** below the uploader.")
    return message


def missing_level_notes(schema, report) -> list[str]:
    """Owner-only: columns declared ``missing='category'`` with no missing or unknown cell (W1 walk: a release put
    missing values into 6-70 % of the resampled rows of columns that have none, without a word on the page)."""
    never = [c.name for c in schema.columns if c.missing == "category"
             and not any(report.counts.get(c.name, {}).get(k) for k in ("missing", "unknown"))]
    if not never:
        return []
    return [f"{', '.join(repr(n) for n in never)}: declared missing = category, but no cell is missing. A release puts "
            "part of its weight on their *(missing)* level (more at a small ε or N), so released and resampled rows "
            "may have missing values there. If a column can never be missing (public knowledge, e.g. a code book), "
            "declare missing = error."]


@st.cache_data(max_entries=32, show_spinner=False)
def _holds_times(src_key: str, name: str, date_format: str, _frame: pd.DataFrame) -> bool:
    """Whether a date column's cells (read with the declared format) hold times of day; once per table and column."""
    from dpkme.schema import parse_dates

    ts = parse_dates(_frame[name], date_format=date_format, errors="coerce").dropna()
    return bool(len(ts)) and bool((ts != ts.dt.normalize()).any())


def time_of_day_notes(schema, frame: pd.DataFrame, src_key: str) -> list[str]:
    """Owner-only: date columns whose cells hold times of day but are declared in whole days (W1 walk: hourly
    readings came back as dates only; suggestions from private rows never declare a precision)."""
    cols = [c.name for c in schema.columns if c.kind == "datetime" and c.decimals is None and c.name in frame.columns
            and _holds_times(src_key, c.name, c.date_format or "ISO8601", frame)]
    if not cols:
        return []
    return [f"{', '.join(repr(n) for n in cols)}: the cells hold times of day, but the column is declared in whole "
            "days (no decimals): released and resampled rows carry the date only. To keep the time, declare its "
            "decimals (fractions of a day: 2 ≈ 15 minutes, 3 ≈ 1.5 minutes)."]


def _forget_upload() -> None:
    """Button callback: drop the parsed upload (the widget may still show the file until it is cleared)."""
    state = ss.pop(S.UPLOAD, None)
    if state is not None:
        ss[FORGOTTEN_UPLOAD] = state["file_id"]


def _per_column_scaling(spec: dict, mode: str, *, upload_df, pct: float, declared: bool,
                        split_seed: int) -> dict | None:
    """The per-column scaling block (issue 16, finding 3): the suggestion from public information, editable in
    the "columns" mode, and the warning when columns differ in scale by orders of magnitude.

    Returns the declared scaling's dict for the dataset spec (``None`` while a column is not declared, or in
    another mode). Reads the declared bounds (a bundled table's schema) and the publishable rows; the private rows
    only when the user ticks the box that says so (the columns are then flagged: releases are not private).
    """
    probe = {**spec, "public_fraction": float(pct) / 100.0, "public_declared": bool(declared),
             "split_seed": int(split_seed)}
    try:
        sug = scaling_suggestion(probe, upload_df)
        # as in the schema editor: a suggestion from the private rows only on request, and flagged everywhere
        if mode == "columns" and sug.missing and st.checkbox(
                "Suggest the missing columns from the private rows (reads the private data: releases are then NOT "
                "differentially private)", key=COLSCALE_PRIVATE, persist_state="session"):
            sug = scaling_suggestion(probe, upload_df, use_private=True)
    except ValueError:
        return None                      # e.g. missing cells not dropped: the dataset's own error says what to do
    cols = list(sug.columns)
    center, scale, sources = sug.center.copy(), sug.scale.copy(), list(sug.sources)
    result = None
    if mode == "columns":
        bounds = declared_bounds(spec["sample"], cols) if spec["source"] == "sample" else {}
        base = pd.DataFrame({
            "column": cols, "centre": center, "scale": scale,
            "declared bounds": [f"[{bounds[c][0]:g}, {bounds[c][1]:g}]" if c in bounds else "—" for c in cols],
            "source": [s or "nothing public: declare it" for s in sources]})
        skey = COLUMN_SCALING.format(columns=hashlib.sha1(json.dumps(
            [cols, [None if not np.isfinite(v) else float(v) for v in (*center, *scale)], sources]).encode()
        ).hexdigest()[:10])
        if skey not in ss:
            ss[skey] = base
        ss[COLSCALE_CURRENT] = skey          # which table is shown (the tests read it)
        st.caption("Each column is scaled as (x − centre) / scale before the kernel sees it; releases are converted "
                   "back to the original units. Suggested from public information only — the declared bounds of a "
                   "bundled table (centre = middle, scale = half the range) or the publishable subset (mean and "
                   "std). Edit any value you know better.")
        edited = st.data_editor(ss[skey], key=EDITOR.format(table=skey), hide_index=True, width="stretch",
                                disabled=["column", "declared bounds", "source"],
                                column_config={"centre": st.column_config.NumberColumn(format="%.4g"),
                                               "scale": st.column_config.NumberColumn(format="%.4g")})
        c_new = pd.to_numeric(edited["centre"], errors="coerce").to_numpy(float)
        s_new = pd.to_numeric(edited["scale"], errors="coerce").to_numpy(float)
        for j in range(len(cols)):
            same = all(np.isclose(a, b, rtol=1e-9, atol=0) or (np.isnan(a) and np.isnan(b))
                       for a, b in ((c_new[j], center[j]), (s_new[j], scale[j])))
            if not same:
                sources[j] = "declared by you"
        center, scale = c_new, s_new
        missing = [c for j, c in enumerate(cols) if not (np.isfinite(center[j]) and np.isfinite(scale[j]))]
        bad = [(c, scale[j]) for j, c in enumerate(cols) if np.isfinite(scale[j]) and scale[j] <= 0]
        if bad:
            st.error(f"The scale of column {bad[0][0]!r} is {bad[0][1]:g}; every scale must be > 0.")
        elif missing:
            st.warning(f"Nothing public is known about the scale of column(s) {', '.join(missing)}: declare a centre "
                       "and a scale for each (from a data dictionary or physical limits), or declare a publishable "
                       "subset. Until then the table stays in its **original units**, where the lengthscale and q "
                       "are placeholders.", icon=":material/straighten:")
        else:
            kept = sug.lower is not None                    # declared bounds on every column: points stay inside
            private = [c for c, src in zip(cols, sources) if src == SOURCE_PRIVATE]     # not edited since
            if private:
                st.warning(f"The scale of column(s) {', '.join(private)} is read from the PRIVATE rows: it is a "
                           "statistic of the private data, so releases with it are NOT differentially private. Declare "
                           "those values from public knowledge (edit them), or declare a publishable subset to "
                           "suggest them from.", icon=":material/visibility:")
            result = DeclaredScaling(
                center=center, scale=scale, source="; ".join(sorted(set(sources))), columns=cols, sources=sources,
                lower=sug.lower if kept else None, upper=sug.upper if kept else None,
                data_dependent=private).to_dict()
    known = np.isfinite(scale) & (scale > 0)
    if known.all() and len(cols) > 1:
        msg = scale_warning(scale, columns=cols)
        if msg and mode == "none":
            st.warning(msg, icon=":material/straighten:")
        elif msg:
            st.info(msg.split(" In these units")[0].rstrip(".") + ": the scaling chosen here puts every column on the same "
                    "footing.", icon=":material/straighten:")
    return result




SOURCES = {"generated": "Generate", "sample": "Bundled real data", "upload": "Upload CSV / Parquet"}
TABLE_MODES = {"numeric": "Numeric columns only", "schema": "Mixed table with a declared schema"}
#: Help of the "drop rows with missing values" boxes (uploads and bundled tables alike).
DROP_HELP = ("Otherwise missing cells are an error. Dropping makes N depend on the private data: the number of "
             "rows is then itself a statistic of them (declare N as public only if it is).")


def source_choice() -> SimpleNamespace:
    """Where the rows come from and, for a table, how to read it; the state the sections below fill in."""
    ss.setdefault(SOURCE, "generated")
    source = st.radio("Where do the rows come from?", list(SOURCES), format_func=SOURCES.get, key=SOURCE,
                      horizontal=True, persist_state="session")
    table_mode = False
    if source in ("sample", "upload"):
        ss.setdefault(MODE, "numeric")
        table_mode = st.radio(
            "How to read the table", list(TABLE_MODES), format_func=TABLE_MODES.get, key=MODE, horizontal=True,
            persist_state="session",
            help="Numeric columns: the chosen numeric columns, scaled as declared. Mixed table: numeric, integer, "
                 "categorical, boolean and date columns with missing values, through a declared schema.") == "schema"
    left, right = st.columns([1, 1], gap="large")
    return SimpleNamespace(source=source, table_mode=table_mode, left=left, right=right, spec=None, upload_df=None,
                           source_failed=False, table_ctx=None)


def source_section(d: SimpleNamespace) -> None:
    """The left column: the generator's parameters, a bundled sample's or an upload's columns (``d.spec``; schema
    mode: ``d.table_ctx``, the whole table and where it comes from; ``d.source_failed`` when it cannot be used)."""
    source, table_mode, left = d.source, d.table_mode, d.left
    spec: dict | None = None
    upload_df = None
    source_failed = False
    table_ctx: dict | None = None
    with left:
        # ------------------------------------------------------------------ source
        if source == "generated":
            ss.setdefault(GENERATOR, "paper_mixture")
            gname = st.selectbox("Generator", list(GENERATORS), format_func=lambda k: GENERATORS[k].label,
                                 key=GENERATOR, persist_state="session")
            g = GENERATORS[gname]
            st.caption(g.description + (f" *{g.reference}*" if g.reference else ""))
            params = {}
            cols = st.columns(3)
            for i, p in enumerate(g.params):
                key = GEN_PARAM.format(generator=gname, param=p.name)
                default = 5000 if (gname == "paper_mixture" and p.name == "n") else p.default
                if p.kind == "int":
                    ss.setdefault(key, int(default))
                    params[p.name] = int(cols[i % 3].number_input(
                        p.label, min_value=int(p.minimum), max_value=int(p.maximum), step=1, key=key,
                        help=p.help, persist_state="session"))
                else:
                    ss.setdefault(key, float(default))
                    params[p.name] = float(cols[i % 3].number_input(
                        p.label, min_value=float(p.minimum), max_value=float(p.maximum), key=key, help=p.help,
                        format="%.4g", persist_state="session"))
            ss.setdefault(SEED, 0)
            seed = st.number_input("Seed of the generator", min_value=0, max_value=2**31 - 1, step=1, key=SEED,
                                   persist_state="session")
            if params.get("n", 0) > 50_000:
                st.info("Large N: exact evaluations (RKHS distances, heat-maps) take a few seconds at this size.")
            spec = {"source": "generated", "generator": gname, "params": params, "seed": int(seed)}

        elif source == "sample":
            ss.setdefault(SAMPLE, "iris")
            name = st.selectbox("Bundled data set", list(SAMPLES), format_func=lambda k: SAMPLES[k].label,
                                key=SAMPLE, persist_state="session")
            info = SAMPLES[name]
            st.caption(f"{info.description}  \nSource: {info.source}. Licence: {info.licence}.  \n"
                       f"Cite: {info.citation}")
            frame = None
            with guard(f"load the sample {name!r}") as loaded:
                frame = load_table(info.path.read_bytes(), filename=info.filename)
                if table_mode:
                    table_ctx = {"frame": frame, "src_key": f"sample:{name}", "bundled": bundled_schema(name),
                                 "label": name, "spec": {"source": "sample", "sample": name}}
            source_failed = not loaded.ok
            if not table_mode and getattr(info, "schema", None):
                st.info("This table comes with a declared schema (categorical columns, missing values): read it as a "
                        "**mixed table** (above) to release every column.", icon=":material/table_chart:")
            if not table_mode and frame is not None:
                options = [c for c in frame.columns]
                key = SAMPLE_COLUMNS.format(sample=name)
                ss.setdefault(key, list(info.numeric_columns))
                chosen = st.multiselect("Columns to release", options, key=key, persist_state="session",
                                        help="Numeric feature columns; the label column is not a feature.")
                # the same option as for uploads (issue 16 walk, finding 9): bundled tables may have missing cells
                drop_key = SAMPLE_DROP_MISSING.format(sample=name)
                ss.setdefault(drop_key, False)
                drop = st.checkbox("Drop rows with missing values in these columns", key=drop_key,
                                   persist_state="session", help=DROP_HELP)
                spec = {"source": "sample", "sample": name, "columns": list(chosen), "drop_missing": bool(drop)}

        else:
            st.caption(
                f"CSV/TSV (comma, semicolon, tab or pipe separated; UTF-8 or the encoding chosen below) or Parquet; up to "
                f"{MAX_UPLOAD_BYTES // 2**20} MB, {MAX_ROWS:,} rows and {MAX_COLUMNS} columns. The file is parsed in "
                "memory and never stored."
            )
            with st.expander("Why these limits?"):
                st.markdown(
                    f"- **{MAX_UPLOAD_BYTES // 2**20} MB per file** (also Streamlit's `server.maxUploadSize`): the file is "
                    "parsed in memory, which holds several copies of it at once. Keep only the columns you need.\n"
                    f"- **{MAX_ROWS:,} rows**: a release evaluates the kernel between every row and every synthetic point, "
                    "so larger tables are too slow here. Upload a random subsample chosen *without looking at the "
                    "values*.\n"
                    f"- **{MAX_COLUMNS} columns**: kernel mean embeddings lose resolution quickly with the dimension; the "
                    "header is checked before anything else is read, so a huge header is refused at once.\n"
                    f"- **At least {MIN_ROWS} data rows**, with a header line of column names; the numeric mode needs "
                    "a numeric column, a mixed table may hold text columns (categories) only. "
                    "Excel or other spreadsheet files: save them as 'CSV UTF-8' first."
                )
            # No type filter: the loader recognises the content whatever the name (Parquet, or an Excel workbook
            # or image renamed .csv) and explains what to do; a filter would refuse .xlsx without that advice.
            # The parsed table stays in this session's memory (never on disk) until another file replaces it or
            # the user forgets it: the uploader widget itself is emptied whenever the page is left.
            up = st.file_uploader("Upload a table", key=UPLOAD_KEY,
                                  help="Replaces the table kept in this session, if any.")
            # W1 walk: a latin-1 / cp1252 CSV was refused with "pass it explicitly as encoding=...", which no one can
            # do in the app; the encoding is declared here (never guessed: a wrong guess corrupts accented names)
            ss.setdefault(UPLOAD_ENCODING, UPLOAD_ENCODINGS[0])
            encoding = st.selectbox("Text encoding of a CSV/TSV file", UPLOAD_ENCODINGS, key=UPLOAD_ENCODING,
                                    format_func=ENCODING_LABELS.get, persist_state="session",
                                    help="UTF-8 unless the file is refused as 'not UTF-8 text': then choose the "
                                         "encoding the file was saved in (older spreadsheet programs: Windows-1252). "
                                         "Ignored for Parquet.")
            if up is not None and up.file_id != ss.get(FORGOTTEN_UPLOAD):
                state = ss.get(S.UPLOAD)
                if state is None or state.get("file_id") != up.file_id or state.get("encoding") != encoding:
                    ss.pop(S.UPLOAD, None)
                    with guard(f"read {up.name!r}") as read:
                        data = up.getvalue()
                        try:
                            df = load_table(data, filename=up.name,
                                            encoding=None if encoding == UPLOAD_ENCODINGS[0] else encoding)
                        except ValueError as exc:
                            raise ValueError(upload_error_advice(str(exc))) from None
                        tag = b"" if encoding == UPLOAD_ENCODINGS[0] else b"|" + encoding.encode()  # another reading
                        # "hash": this reading of the file (its own table, schema and dataset); "file_hash": the file's
                        # bytes, i.e. its people, whose ledger every reading (and the Two-sample page's upload) shares
                        ss[S.UPLOAD] = {"file_id": up.file_id, "name": up.name, "df": df, "encoding": encoding,
                                        "hash": hashlib.sha256(data + tag).hexdigest()[:16],
                                        "file_hash": S.upload_file_hash(data)}
                        del data
                    source_failed = not read.ok
            state = ss.get(S.UPLOAD)
            if state is not None:
                upload_df = state["df"]
                c_ok, c_forget = st.columns([4, 1])
                c_ok.success(f"Read {state['name']!r}: {upload_df.shape[0]:,} rows × {upload_df.shape[1]} columns"
                             + ("" if up is not None else " (kept in this session's memory)") + ".")
                c_forget.button("Forget", key=UPLOAD_FORGET, on_click=_forget_upload, icon=":material/delete:",
                                help="Forget this file: removes the parsed table from this session's memory.")
                if table_mode:
                    table_ctx = {"frame": upload_df, "src_key": f"upload:{state['hash']}", "bundled": None,
                                 "label": state["name"].rsplit(".", 1)[0],
                                 "spec": {"source": "upload", "filename": state["name"], **S.upload_identity(state)}}
            if state is not None and not table_mode and not numeric_columns(upload_df):
                # a table of text columns is read (a mixed table may be all categories); the numeric mode cannot use it
                try:
                    numeric_matrix(upload_df)
                except ValueError as exc:
                    st.error(f"{exc} Choose **Mixed table with a declared schema** above to release its columns as "
                             "categories.", icon=":material/warning:")
                source_failed = True
            elif state is not None and not table_mode:
                key = UPLOAD_COLUMNS.format(upload=state['hash'])
                idents = {c: why for c in numeric_columns(upload_df)
                          if (why := identifier_reason(c, upload_df[c])) is not None}
                ss.setdefault(key, [c for c in numeric_columns(upload_df) if c not in idents][:MAX_COLUMNS])
                chosen = st.multiselect("Columns to release", list(upload_df.columns), key=key,
                                        persist_state="session", help="Only numeric columns can be released.")
                if idents:
                    st.caption(":material/badge: Not pre-selected (row identifiers, not data): "
                               + "; ".join(f"**{c}** — {why}" for c, why in idents.items())
                               + ". Add one back above if it really is a measurement.")
                ss.setdefault(DROP_MISSING, False)
                drop = st.checkbox("Drop rows with missing values in these columns", key=DROP_MISSING,
                                   persist_state="session", help=DROP_HELP)
                spec = {"source": "upload", "filename": state["name"], **S.upload_identity(state),
                        "columns": list(chosen), "drop_missing": bool(drop)}
    d.spec, d.upload_df, d.source_failed, d.table_ctx = spec, upload_df, source_failed, table_ctx


def split_section(d: SimpleNamespace) -> None:
    """The right column: the publishable and held-out split and the declared scaling (added to ``d.spec``)."""
    source, table_mode, right, spec = d.source, d.table_mode, d.right, d.spec
    with right:
        # ------------------------------------------------------------------ publishable subset
        st.subheader("Publishable and held-out rows")
        st.caption(
            "In the paper's second scenario a small part of the database is already public (published earlier, "
            "or its people consented). Those rows can serve as synthetic points and as a public reference for "
            "scaling and kernel choice — and they are **published in the clear, not protected**. The split is random "
            "and does not look at the values. 0 % (the default) keeps every row private."
        )
        ss.setdefault(PUBLIC_PCT, 0.0)
        pct = st.slider("Publishable fraction (%)", min_value=0.0, max_value=50.0, step=0.5, key=PUBLIC_PCT,
                        persist_state="session", help="0 % = no public rows (the paper's first scenario).")
        declared = False
        if pct > 0:
            ss.setdefault(PUBLIC_DECLARED, False)
            declared = st.checkbox(PUBLIC_STATEMENT, key=PUBLIC_DECLARED, persist_state="session")
            if not declared:
                st.warning("Tick the statement to use a publishable subset: its rows are published raw by the "
                           "mechanisms that use public points.")
        ss.setdefault(HELDOUT_PCT, 10.0)
        hpct = st.slider("Held-out fraction (%)", min_value=0.0, max_value=30.0, step=1.0, key=HELDOUT_PCT,
                         persist_state="session",
                         help="Rows kept out of every release. The Third-party use page treats them as someone else's "
                              "sample from the same population (for the MMD comparison).")
        ss.setdefault(SPLIT_SEED, 0)
        split_seed = st.number_input("Seed of the split", min_value=0, max_value=2**31 - 1, step=1, key=SPLIT_SEED,
                                     persist_state="session")

        # ------------------------------------------------------------------ declared preprocessing
        st.subheader("Units and bounds")
        if table_mode:
            st.caption("Mixed table: the units, bounds, categories and clipping of every column are declared in the "
                       "schema below; no other scaling applies.")
        # a user's own table (bundled or uploaded) starts with a per-column scaling from public information
        # (issue 16, finding 3: one set of original units gave released bill lengths of −251 mm); generated data
        # keep their units (their geometry comes from the generator's parameters)
        own_table = source in ("sample", "upload")
        scaling_key = SCALING_TABLE if own_table else SCALING
        ss.setdefault(scaling_key, TABLE_SCALING_DEFAULT if own_table else "none")
        mode = "none" if table_mode else st.radio("Scaling", list(SCALING_MODES), format_func=SCALING_MODES.get,
                                                  key=scaling_key, persist_state="session")
        with st.expander("Why are bounds and scaling never computed from the private data?"):
            st.markdown(
                "A differentially private release protects every row only if **every choice that depends on the "
                "data** is private too. The mean and standard deviation of the private columns, their minimum and "
                "maximum, or a median distance between private rows are themselves statistics of the private "
                "data: using them to scale or clip would leak them (an outlier's value could be read off the "
                "clipping box). So the constants must be **declared** — from a data dictionary, physical limits, "
                "or the publishable subset, which is public anyway. Clipping to a box fixed in advance is then "
                "a per-row transformation and costs no privacy."
            )
        box = None
        clip = False
        if spec is not None and mode == "box":
            cols = spec.get("columns") or ([f"x{j + 1}" for j in range(spec["params"].get("dim", 2))]
                                           if spec["source"] == "generated" else [])
            if spec["source"] == "generated" and GENERATORS[spec["generator"]].fixed_dim:
                cols = [f"x{j + 1}" for j in range(GENERATORS[spec["generator"]].fixed_dim)]
            if cols:
                bkey = BOX.format(columns=hashlib.sha1("|".join(map(str, cols)).encode()).hexdigest()[:10])
                if bkey not in ss:
                    ss[bkey] = pd.DataFrame({"column": [str(c) for c in cols], "lower": -1.0, "upper": 1.0})
                st.caption("Declare the range of every column (what values are *possible*, not what the data show).")
                edited = st.data_editor(ss[bkey], key=EDITOR.format(table=bkey), disabled=["column"], hide_index=True,
                                        width="stretch")
                try:
                    lower = pd.to_numeric(edited["lower"]).to_numpy(float)
                    upper = pd.to_numeric(edited["upper"]).to_numpy(float)
                    if np.isnan(lower).any() or np.isnan(upper).any():
                        raise ValueError
                    box = (lower.tolist(), upper.tolist())
                except (ValueError, TypeError):
                    st.error("Every lower and upper bound must be a number.")
                clip = st.checkbox("Clip values outside the box onto it", key=CLIP, persist_state="session",
                                   help="Clipping to a declared box is a per-row map; it bounds every row's influence.")

        declared_scaling = None
        if spec is not None and not table_mode and (own_table or mode == "columns"):
            declared_scaling = _per_column_scaling(spec, mode, upload_df=d.upload_df, pct=pct, declared=declared,
                                                    split_seed=split_seed)

        if spec is not None:
            spec.update({"public_fraction": float(pct) / 100.0, "public_declared": bool(declared),
                         "heldout_fraction": float(hpct) / 100.0,
                         "split_seed": int(split_seed), "scaling": mode,
                         "box": box, "clip": bool(clip)})
            if mode == "columns":
                spec["declared_scaling"] = declared_scaling
    d.pct, d.declared, d.hpct, d.split_seed = pct, declared, hpct, split_seed


def schema_section(d: SimpleNamespace) -> None:
    """A mixed table's schema editor (schema mode): the declared schema completes ``d.spec``."""
    table_ctx, pct, declared, hpct, split_seed, spec = d.table_ctx, d.pct, d.declared, d.hpct, d.split_seed, d.spec
    if table_ctx is not None:
        n_rows = int(table_ctx["frame"].shape[0])
        split_kw = {"public_fraction": float(pct) / 100.0 if declared else 0.0,
                    "heldout_fraction": float(hpct) / 100.0, "seed": int(split_seed)}
        public_rows, private_index, stub = None, np.arange(n_rows), None
        try:
            pub_idx, private_index, held_idx = split_indices(n_rows, **split_kw)
            if pub_idx is not None:
                public_rows = table_ctx["frame"].iloc[pub_idx]
            stub = S.Dataset(key="schema-discovery", data_key=table_ctx["src_key"], name=table_ctx["label"],
                             source=table_ctx["spec"]["source"], X=np.empty((private_index.size, 0)), columns=[],
                             public=None if pub_idx is None else np.empty((pub_idx.size, 0)),
                             heldout=None if held_idx is None else np.empty((held_idx.size, 0)),
                             split={"seed": int(split_seed), "public_fraction": split_kw["public_fraction"],
                                    "heldout_fraction": split_kw["heldout_fraction"]})
        except ValueError:
            pass                                 # the split's own error is shown when the dataset is built
        schema = schema_editor(table_ctx, public_rows=public_rows, private_index=private_index, stub=stub)
        if schema is not None:
            spec = {**table_ctx["spec"], "schema": schema.to_dict(), "public_fraction": float(pct) / 100.0,
                    "public_declared": bool(declared), "heldout_fraction": float(hpct) / 100.0,
                    "split_seed": int(split_seed)}
    d.spec = spec


def _use_candidate() -> None:
    """Button callback: runs before the script, so the sidebar already shows the new data."""
    cand = ss.get(CANDIDATE)
    if cand is not None and S.split_change_problem(cand) is None:
        S.set_dataset(cand)
        st.toast("Dataset loaded. Next: choose the kernel and privacy level.", icon=":material/check_circle:")



def build_section(d: SimpleNamespace):
    """The dataset these settings build and the button that puts it in use; the dataset to preview (the candidate,
    else the one in use). Stops the page when the settings failed or there is nothing to show."""
    spec, upload_df, source_failed, table_ctx = d.spec, d.upload_df, d.source_failed, d.table_ctx
    st.divider()
    candidate = None
    if spec is not None:
        with guard("prepare this dataset"):
            candidate = build_dataset(spec, upload_df) if spec["source"] == "upload" else cached_dataset(spec_json(spec))
    ss[CANDIDATE] = candidate
    current = S.dataset()
    locked = None
    if candidate is not None:
        locked = S.split_change_problem(candidate)
        if locked:
            st.error("This split cannot be used: " + locked)
        elif (note := S.split_change_note(candidate)) and (current is None or current.key != candidate.key):
            st.warning(note)
    if candidate is not None:
        is_current = current is not None and current.key == candidate.key
        c1, c2 = st.columns([1, 3])
        c1.button("Use this dataset", type="primary", disabled=is_current or bool(locked), key=USE,
                  on_click=_use_candidate)
        if is_current:
            c2.success(f"In use: {candidate.describe(exact_counts=not S.counts_hidden(candidate))}")
        else:
            c2.info("These settings are not in use yet: click **Use this dataset**. "
                    f"(Now in use: {current.describe(exact_counts=not S.counts_hidden(current)) if current else 'nothing'}.)")

    if source_failed or (spec is not None and candidate is None) or (table_ctx is not None and spec is None):
        # the settings above failed (their error is shown): no notes or preview of other data next to it
        if current is not None:
            st.info(f"The data in use is unchanged: {current.describe(exact_counts=not S.counts_hidden(current))}.")
        st.stop()
    shown = candidate if candidate is not None else current
    if shown is None:
        st.stop()


    #: Notes of a dataset (ui.datasets) that repeat the data-dependence warning the schema editor or the per-column
    #: scaling above already shows for the candidate built from them on this run: the page shows it once, there.
    _SHOWN_ABOVE = ("The declared values of column(s) ", "The scaling of column(s) ")
    for note in shown.notes:
        if shown is candidate and note.startswith(_SHOWN_ABOVE):
            continue
        st.warning(note)
    if 0 < shown.n_public < 30:
        st.info(f"Only {shown.n_public} publishable rows: Algorithm 1 with the publishable subset can use at most "
                f"{shown.n_public} synthetic points, and scaling or heuristics computed from them are rough. With a small "
                "table, consider a larger publishable fraction — or use random points from q or Algorithm 2.")
    d.candidate = candidate
    return shown


def preview(shown, *, candidate=None, table_ctx: dict | None = None) -> None:
    """The owner's preview of the private rows: counts, plot, table and exact statistics (owner-only: drawn through
    ``P.OwnerOnly``, hidden in presentation mode)."""
    st.subheader("Preview (for the data owner — shows private rows)")
    st.info("Guarantee: " + shown.guarantee() + ".")
    m1, m2, m3, m4, m5 = st.columns(5)
    m1.metric("Private rows N", f"{shown.n:,}")
    m2.metric("Published in the clear", f"{shown.n_public:,}")
    m3.metric("Held-out rows", f"{shown.n_heldout:,}")
    m4.metric("Dimension D", shown.dim, help="Embedding dimension: one coordinate per numeric column, one per category "
                                             "of a categorical column." if shown.is_table else None)
    m5.metric("Clipped values", f"{shown.n_clipped:,}" if shown.clip_box is not None or shown.is_table else "—",
              help="Number of private values moved onto the declared box (owner's information only).")
    if shown.is_table and shown.table_report is not None:
        lines = shown.table_report.lines() + missing_level_notes(shown.schema, shown.table_report)
        if candidate is not None and shown is candidate and table_ctx is not None:
            lines += time_of_day_notes(shown.schema, table_ctx["frame"], table_ctx["src_key"])
        with st.expander("What the declared preprocessing did to the rows (owner only: counts of the private data)",
                         expanded=bool(lines)):
            st.caption("Counts over every row of the table (publishable, private and held-out). They are statistics of "
                       "the private data: for your eyes only, never part of a release.")
            st.markdown("\n".join(f"- {ln}" for ln in lines) if lines else "Nothing was clipped, imputed or unknown.")
    if shown.scaling is not None:
        st.caption(f"Scaling: (x − c)/s with constants from the {shown.scaling.source}. Releases are computed in "
                   "these units; downloads are converted back to the original units.")
    elif not shown.is_table and shown.dim > 1 and shown.n >= 2:
        # nothing public to compare the columns' scales with: the owner's view of the private rows (never released)
        sd = shown.X.std(axis=0, ddof=1)
        if np.all(sd > 0) and (msg := scale_warning(sd, columns=[str(c) for c in shown.columns])):
            st.warning(msg + " (Measured on the private rows: for your eyes only — declare the scaling from public "
                       "knowledge, never from these numbers.)", icon=":material/straighten:")

    tab_plot, tab_table, tab_stats = st.tabs(["Plot", "Table", "Summary statistics (not private)"])
    with tab_plot:
        projection = None
        title = "Private rows (grey) and publishable subset (blue)"
        if shown.dim > 2:
            ref = shown.public if shown.n_public >= 3 else shown.X
            projection = pca_basis(ref)
            title = ("PCA projection " + ("fitted on the publishable subset" if shown.n_public >= 3
                                          else "fitted on the private rows (owner's preview only)"))
        plotly_chart(data_figure(shown.X, shown.public, columns=shown.columns, labels=shown.labels, title=title,
                                    projection=projection), key=FIG)
    with tab_table:
        if shown.is_table:
            st.dataframe(fill_missing(shown.decode(shown.X[:200]), TV.missing_labels(shown.schema)), height=300,
                         column_config=TV.date_columns(shown.schema))
            st.caption(f"First {min(200, shown.n)} private rows as the schema reads them (clipped to the declared bounds, "
                       "missing values as declared), in the original columns and types.")
        else:
            orig = shown.to_original_units(shown.X[:200])
            st.dataframe(pd.DataFrame(orig, columns=[str(c) for c in shown.columns]), height=300)
            st.caption(f"First {min(200, shown.n)} private rows, original units.")
    with tab_stats:
        st.warning("These statistics are exact and **not** private: for your eyes only. Do not publish them and do "
                   "not use them to choose scaling, bounds or the kernel.")
        if shown.is_table:
            table = shown.decode(shown.X)
            nums = [c.name for c in shown.schema.columns if c.kind in ("continuous", "integer")]
            if nums:
                st.dataframe(nonprivate_summary(table, nums))
            for c in shown.schema.columns:
                if c.kind in ("categorical", "boolean"):
                    st.dataframe(T.category_table(table, c).set_index("category"), height=min(38 * (len(c.levels) + 2), 300))
        else:
            st.dataframe(nonprivate_summary(pd.DataFrame(shown.to_original_units(shown.X),
                                                         columns=[str(c) for c in shown.columns])))


def preview_section(d: SimpleNamespace, shown) -> None:
    """The guarantee in presentation mode; the owner's preview (stops the page when it is hidden)."""
    if P.is_on():                           # presentation mode: the guarantee (public) and a note (the stepper leads on)
        st.info("Guarantee: " + shown.guarantee(exact_counts=not S.counts_hidden(shown)) + ".")
    if not P.OwnerOnly(shown, "The preview of the private rows (plot, table and exact statistics)").render(
            lambda s: preview(s, candidate=d.candidate, table_ctx=d.table_ctx)):
        st.stop()
