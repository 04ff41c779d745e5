"""Mixed tables in the app: the schema editor's table, marginals, associations and a third party's statistics.

Pure functions of DataFrames and arrays (no Streamlit): the Data page converts between a
:class:`dpkme.schema.TableSchema` and the rows of its schema editor (:func:`editor_frame`,
:func:`schema_from_editor`); the Release page draws per-column marginals (:func:`marginal_figure`) and an
association heat-map (:func:`association_matrix`, :func:`association_figure`); the Third-party use page
computes what a recipient computes from weighted rows (:func:`category_table`, :func:`crosstab`,
:func:`group_means`, :func:`numeric_moments`).

Weights: a released table has one weight per row (``weight``); every statistic here is *self-normalised*
(the weights divided by their sum), as a recipient would use them (eq. (4) of Balog et al. 2018). A
private or resampled table has equal weights. Missing values are a category of their own
(:data:`MISSING_LABEL`) in categorical statistics and are left out of numeric ones.
"""

from __future__ import annotations

import dataclasses
import json
import math
import re
from typing import Any

import numpy as np
import pandas as pd
import plotly.graph_objects as go
from plotly.subplots import make_subplots

KINDS = ("continuous", "integer", "categorical", "boolean", "datetime")
NUMERIC_KINDS = ("continuous", "integer", "datetime")
CATEGORICAL_KINDS = ("categorical", "boolean")
MISSING_MODES = ("error", "category", "impute")
#: Separator of the category list in the schema editor's ``categories`` cell.
CATEGORY_SEP = "|"
MISSING_LABEL = "(missing)"
EDITOR_COLUMNS = ("use", "column", "kind", "lower", "upper", "values", "categories", "missing", "impute", "lengthscale",
                  "similarity", "decimals", "date_format", "declared")
#: Separator of the declared levels (``values``) of a numeric column in the schema editor.
VALUES_SEP = ","
PRIVATE_COLOR, RELEASED_COLOR, SAMPLED_COLOR = "rgba(110, 110, 110, 0.75)", "#d62728", "#1f77b4"
_LAYOUT = dict(margin=dict(l=10, r=10, t=40, b=10),
               legend=dict(orientation="h", yanchor="top", y=-0.25, xanchor="left", x=0))
_EPOCH = pd.Timestamp("1970-01-01")


# --------------------------------------------------------------------------- the schema editor
def _text(v) -> str:
    """A declared value as the editor shows it (dates as ISO dates, numbers without trailing zeros)."""
    if v is None or (isinstance(v, float) and math.isnan(v)):
        return ""
    if isinstance(v, (pd.Timestamp, np.datetime64)):
        ts = pd.Timestamp(v)
        return ts.date().isoformat() if ts == ts.normalize() else ts.isoformat()
    if isinstance(v, (bool, np.bool_)):
        return "true" if v else "false"
    if isinstance(v, (float, np.floating)):
        return f"{float(v):.12g}"
    return str(v)


def editor_frame(schema, columns, *, data_dependent=(), used=None) -> pd.DataFrame:
    """Rows of the schema editor: one per column of the table, those of ``schema`` filled in and ticked.

    Parameters
    ----------
    schema : TableSchema or None
        The declared (or suggested) schema.
    columns : sequence of str
        Every column of the table, in order (those outside the schema are shown unticked).
    data_dependent : sequence of str
        Columns whose declared values were read from the private rows (shown with ``declared`` unticked).
    used : sequence of str, optional
        Columns to tick (default: those of ``schema``).
    """
    specs = {} if schema is None else {c.name: c for c in schema.columns}
    used = set(specs if used is None else used)
    dependent = set(data_dependent or ())
    rows = []
    for name in [*specs, *[c for c in map(str, columns) if c not in specs]]:
        c = specs.get(name)
        cats = getattr(c, "categories", None) if c is not None else None
        levels = getattr(c, "values", None) if c is not None else None
        rows.append({
            "use": name in used and c is not None,
            "column": name,
            "kind": getattr(c, "kind", "") if c is not None else "",
            "lower": _text(getattr(c, "lower", None)),
            "upper": _text(getattr(c, "upper", None)),
            "values": (VALUES_SEP + " ").join(_text(v) for v in levels) if levels is not None else "",
            "categories": CATEGORY_SEP.join(_text(v) for v in cats) if cats is not None else "",
            "missing": getattr(c, "missing", "error") if c is not None else "error",
            "impute": _text(getattr(c, "impute", None)),
            "lengthscale": _float_or_none(getattr(c, "lengthscale", None)),
            "similarity": _float_or_none(getattr(c, "similarity", None)),
            "decimals": _int_or_none(getattr(c, "decimals", None)),
            "date_format": (getattr(c, "date_format", None) or "ISO8601") if getattr(c, "kind", "") == "datetime"
            else "",
            "declared": name not in dependent,
        })
    df = pd.DataFrame(rows, columns=list(EDITOR_COLUMNS))
    df["use"] = df["use"].astype(bool)
    df["declared"] = df["declared"].astype(bool)
    for col in ("lengthscale", "similarity"):
        df[col] = pd.to_numeric(df[col], errors="coerce").astype("float64")
    df["decimals"] = pd.to_numeric(df["decimals"], errors="coerce").astype("Int64")
    for col in ("column", "kind", "lower", "upper", "values", "categories", "missing", "impute", "date_format"):
        df[col] = df[col].astype(object).where(df[col].notna(), "").astype(str)
    return df


def _float_or_none(v):
    try:
        f = float(v)
    except (TypeError, ValueError):
        return None
    return None if math.isnan(f) else f


def _int_or_none(v):
    f = _float_or_none(v)
    return None if f is None else int(round(f))


def _blank(v) -> bool:
    return v is None or (isinstance(v, float) and math.isnan(v)) or (isinstance(v, str) and not v.strip()) \
        or v is pd.NA


def _parse_value(text, kind: str, *, column: str, what: str):
    """A declared value typed in the editor, as the column's kind needs it (ValueError naming the cell)."""
    if _blank(text):
        return None
    s = str(text).strip()
    if kind in ("continuous", "integer"):
        try:
            v = float(s)
        except ValueError:
            raise ValueError(f"column {column!r}: {what} {s!r} is not a number; type a number such as 0 or 12.5."
                             ) from None
        if kind == "integer":
            if v != round(v):
                raise ValueError(f"column {column!r} is an integer column but its {what} {s!r} is not a whole "
                                 "number; type a whole number.")
            return int(round(v))
        return v
    if kind == "datetime":
        try:
            return pd.Timestamp(s).isoformat()
        except (ValueError, TypeError):
            raise ValueError(f"column {column!r}: {what} {s!r} is not a date; type it as YYYY-MM-DD.") from None
    if kind == "boolean":
        low = s.lower()
        if low in ("true", "1", "yes"):
            return True
        if low in ("false", "0", "no"):
            return False
        raise ValueError(f"column {column!r}: {what} {s!r} is not a boolean; type true or false.")
    return s


def _categories(text, *, column: str, integers: bool = False):
    """The category list typed in the editor (``a|b|c``); integer labels where the schema had integers."""
    if _blank(text):
        return None
    parts = [p.strip() for p in str(text).split(CATEGORY_SEP)]
    if any(not p for p in parts):
        raise ValueError(f"column {column!r}: the category list {str(text)!r} has an empty entry; separate the "
                         f"categories with '{CATEGORY_SEP}' (e.g. a{CATEGORY_SEP}b{CATEGORY_SEP}c).")
    if integers and all(re.fullmatch(r"[+-]?\d+", p) for p in parts):
        return [int(p) for p in parts]
    return parts


def _levels(text, *, column: str):
    """The declared levels typed in the editor's ``values`` cell (comma-separated numbers), or None when blank."""
    if _blank(text):
        return None
    out = []
    for part in str(text).split(VALUES_SEP):
        p = part.strip()
        if not p:
            raise ValueError(f"column {column!r}: the levels {str(text)!r} have an empty entry; separate the values "
                             f"with '{VALUES_SEP}' (e.g. 17.5, 22, 27).")
        try:
            out.append(float(p))
        except ValueError:
            raise ValueError(f"column {column!r}: the level {p!r} in 'values' is not a number; write the declared "
                             f"values as numbers separated by '{VALUES_SEP}'.") from None
    return out


def editor_specs(frame: pd.DataFrame, *, original=None) -> tuple[list[dict], list[str]]:
    """The ticked rows of the editor as ColumnSpec keyword dicts, and the columns not ticked ``declared``.

    ``original`` (the schema the editor was seeded with) keeps integer category labels integers. Raises
    ValueError naming the row and the cell for anything that cannot be a declared value.
    """
    int_cats = set()
    if original is not None:
        int_cats = {c.name for c in original.columns if c.kind == "categorical"
                    and all(isinstance(v, int) and not isinstance(v, bool) for v in c.categories)}
    missing_cols = [c for c in ("use", "column", "kind") if c not in frame.columns]
    if missing_cols:
        raise ValueError(f"the schema table lacks the column(s) {missing_cols}; reset the schema.")
    specs, dependent = [], []
    for _, row in frame.iterrows():
        if not bool(row.get("use", False)) or _blank(row.get("column")):
            continue
        name = str(row["column"])
        kind = str(row.get("kind") or "").strip()
        if kind not in KINDS:
            raise ValueError(f"column {name!r}: kind {kind!r} is not one of {list(KINDS)}; choose one.")
        missing = str(row.get("missing") or "error").strip() or "error"
        if missing not in MISSING_MODES:
            raise ValueError(f"column {name!r}: missing {missing!r} is not one of {list(MISSING_MODES)}.")
        kw: dict[str, Any] = {"name": name, "kind": kind, "missing": missing}
        if kind in NUMERIC_KINDS:
            kw["lower"] = _parse_value(row.get("lower"), kind, column=name, what="lower bound")
            kw["upper"] = _parse_value(row.get("upper"), kind, column=name, what="upper bound")
            if kw["lower"] is None or kw["upper"] is None:
                raise ValueError(f"column {name!r} ({kind}) needs a declared lower and upper bound: what values "
                                 "are possible, not what the data show.")
            if kind in ("continuous", "integer") and "values" in frame.columns:
                levels = _levels(row.get("values"), column=name)
                if levels is not None:
                    kw["values"] = levels
        elif kind == "categorical":      # booleans have the categories (False, True)
            kw["categories"] = _categories(row.get("categories"), column=name, integers=name in int_cats)
            if kw["categories"] is None:
                raise ValueError(f"column {name!r} is categorical and needs its declared list of categories "
                                 f"(separated by '{CATEGORY_SEP}').")
        imp = row.get("impute")
        if not _blank(imp):
            kw["impute"] = _parse_value(imp, kind, column=name, what="imputation value")
            if name in int_cats and re.fullmatch(r"[+-]?\d+", str(kw["impute"])):
                kw["impute"] = int(kw["impute"])
        # cells that do not apply to the column's kind are ignored (e.g. after the kind was changed)
        v = _float_or_none(row.get("lengthscale"))
        if v is not None and kind in NUMERIC_KINDS:
            kw["lengthscale"] = v
        v = _float_or_none(row.get("similarity"))
        if v is not None and (kind in CATEGORICAL_KINDS or missing == "category"):
            kw["similarity"] = v
        d = _int_or_none(row.get("decimals"))
        if d is not None and kind in ("continuous", "datetime"):
            kw["decimals"] = d
        fmt = row.get("date_format")
        if kind == "datetime" and not _blank(fmt):
            kw["date_format"] = str(fmt).strip()
        specs.append(kw)
        if "declared" in frame.columns and not bool(row.get("declared", True)):
            dependent.append(name)
    if not specs:
        raise ValueError("no column is ticked in the schema table; tick 'use' for at least one column.")
    return specs, dependent


def schema_from_editor(frame: pd.DataFrame, *, original=None, released=None):
    """The :class:`dpkme.schema.TableSchema` declared in the editor (ValueError naming the bad cell).

    Columns whose ``declared`` box is unticked keep the mark that their values were read from the
    private rows (``schema.data_dependent``, every field): a release with them is not private. Ticking
    ``declared`` declares the fields the owner *changed*: a flagged field whose value is still the one read off
    the private rows keeps its flag (a tick alone must not turn the private maximum into a "declared" bound), and
    a field the editor does not show keeps the original schema's value *and its flag* (ticking a row must never
    declare a value the owner did not see). ``released`` (``{column: fields}``) lists the fields released by a
    private discovery: public now, never flagged.
    """
    from dpkme.schema import ColumnSpec, TableSchema
    from dpkme.schema.columns import _applicable_fields

    specs, dependent = editor_specs(frame, original=original)
    shown = {"name", "kind", *[c for c in EDITOR_COLUMNS if c in frame.columns]}
    # fields the editor does not show stay as the original schema declared them (flags included)
    extra: dict[str, dict] = {}
    flagged: dict[str, frozenset] = {}
    originals: dict[str, object] = {}
    if original is not None:
        originals = {c.name: c for c in original.columns}
        flagged = dict(getattr(original, "data_dependent_fields", {}) or {})
        for c in original.columns:
            extra[c.name] = {"kind": c.kind, **{f.name: getattr(c, f.name) for f in dataclasses.fields(c)
                                                if f.name not in shown and f.init and not f.name.startswith("_")}}
    cols, fields = [], {}
    for kw in specs:
        name, kind = kw.pop("name"), kw.pop("kind")
        more = extra.get(name, {})
        kept = set()
        if more.get("kind") == kind:
            for key, value in more.items():
                if key != "kind" and value is not None and key not in kw:
                    kw[key] = value
                    kept.add(key)
        try:
            cols.append(ColumnSpec(name, kind, **kw))
        except TypeError as exc:
            raise ValueError(f"column {name!r}: {exc}") from None
        if name in dependent:
            fields[name] = tuple(sorted(_applicable_fields(cols[-1])))
        else:
            still = set(flagged.get(name, ())) & kept & _applicable_fields(cols[-1])   # hidden, copied, flagged
            before = originals.get(name)
            if before is not None and getattr(before, "kind", None) == kind:      # shown, flagged and unchanged
                still |= {f for f in set(flagged.get(name, ())) & _applicable_fields(cols[-1]) & VALUE_FIELDS
                          if f not in kept and _same(getattr(cols[-1], f, None), getattr(before, f, None))}
            still -= set((released or {}).get(name, ()))
            if still:
                fields[name] = tuple(sorted(still))
    return TableSchema(cols, data_dependent=fields, uniform_sq_distance=getattr(original, "uniform_sq_distance", 1.0))


#: The fields whose values can be read off the rows (a bound, a category list, the levels): ticking *declared*
#: does not declare them unless their value was changed.
VALUE_FIELDS = frozenset({"lower", "upper", "categories", "values"})


def _same(a, b) -> bool:
    """Whether two field values of a column spec are equal (numbers compared as floats, sequences element-wise)."""
    if isinstance(a, (list, tuple)) and isinstance(b, (list, tuple)):
        return len(a) == len(b) and all(_same(x, y) for x, y in zip(a, b))
    try:
        return float(a) == float(b)
    except (TypeError, ValueError):
        return a == b


def schema_json_bytes(schema) -> bytes:
    return schema.to_json().encode("utf-8")


def schema_from_json_bytes(data: bytes):
    """A schema from an uploaded JSON file (ValueError with advice on a bad file)."""
    from dpkme.schema import TableSchema

    try:
        text = data.decode("utf-8")
        json.loads(text)
    except (UnicodeDecodeError, json.JSONDecodeError) as exc:
        raise ValueError(f"the schema file is not JSON ({exc}); upload a file saved with 'Download the schema'."
                         ) from None
    return TableSchema.from_json(text)


# --------------------------------------------------------------------------- column values
def as_numbers(series: pd.Series, kind: str, *, spec=None) -> np.ndarray:
    """Numeric values of a column (dates in days since 1970-01-01), NaN where missing or unreadable.

    Each cell is read on its own: dates with the column's *declared* format (``spec.date_format``, ISO 8601
    by default) through :func:`dpkme.schema.parse_dates`, never a format guessed from the column (that would
    let one private row change how every other row is read).
    """
    if kind == "datetime":
        from dpkme.schema import parse_dates

        s = parse_dates(series, date_format=getattr(spec, "date_format", None) or "ISO8601", errors="coerce")
        s = pd.Series(s)
        if getattr(s.dt, "tz", None) is not None:
            s = s.dt.tz_convert(None)
        return ((s - _EPOCH) / pd.Timedelta(days=1)).to_numpy(dtype=float, na_value=np.nan)
    return pd.to_numeric(series, errors="coerce").to_numpy(dtype=float, na_value=np.nan)


def as_labels(series: pd.Series) -> pd.Series:
    """Category labels as strings, missing values as :data:`MISSING_LABEL`."""
    out = series.astype(object).map(lambda v: MISSING_LABEL if _missing(v) else _text(v))
    return out.astype(str)


def _missing(v) -> bool:
    try:
        return bool(pd.isna(v))
    except (TypeError, ValueError):
        return False


def norm_weights(w, n: int | None = None) -> np.ndarray:
    """Self-normalised weights (sum 1); equal weights when ``w`` is None."""
    if w is None:
        return np.full(int(n), 1.0 / max(int(n), 1))
    w = np.asarray(w, dtype=float)
    s = float(w.sum())
    if not abs(s) > 1e-300:
        raise ValueError("the weights sum to 0: nothing can be estimated from them.")
    return w / s


def category_levels(spec, *series: pd.Series) -> list[str]:
    """Declared categories (as labels) followed by any other label seen, missing last."""
    levels = [_text(v) for v in (getattr(spec, "categories", None) or [])]
    seen = []
    for s in series:
        for v in as_labels(s).unique():
            if v not in levels and v not in seen:
                seen.append(v)
    extra = sorted(v for v in seen if v != MISSING_LABEL)
    return levels + extra + ([MISSING_LABEL] if MISSING_LABEL in seen else [])


def proportions(labels: pd.Series, w: np.ndarray, levels) -> np.ndarray:
    lab = as_labels(labels).to_numpy()
    return np.array([float(w[lab == v].sum()) for v in levels])


def bin_edges(spec, *, bins: int = 30) -> np.ndarray:
    """Fixed histogram edges on the column's declared range (integers: one bin per level up to 40 levels)."""
    lo, hi = _declared_range(spec)
    if spec.kind == "integer" and hi - lo + 1 <= 40:
        return np.arange(lo - 0.5, hi + 1.0, 1.0)
    if hi <= lo:
        return np.array([lo - 0.5, lo + 0.5])
    return np.linspace(lo, hi, bins + 1)


def _declared_range(spec) -> tuple[float, float]:
    vals = []
    for v in (spec.lower, spec.upper):
        if spec.kind == "datetime":
            vals.append(float((pd.Timestamp(v) - _EPOCH) / pd.Timedelta(days=1)))
        else:
            vals.append(float(v))
    return vals[0], vals[1]


def histogram(values: np.ndarray, w: np.ndarray, edges: np.ndarray) -> np.ndarray:
    """Weighted share of the rows in each bin (missing values excluded; values on the edges in the end bins)."""
    ok = ~np.isnan(values)
    v = np.clip(values[ok], edges[0], edges[-1])
    h, _ = np.histogram(v, bins=edges, weights=w[ok])
    return h


# --------------------------------------------------------------------------- figures
def marginal_figure(spec, private: pd.Series, released: pd.Series, w_released, sampled: pd.Series | None = None,
                    *, title: str | None = None, released_label: str = "release (weighted)") -> go.Figure:
    """One column: private rows vs the release (weighted) and, optionally, resampled rows.

    Numeric, integer and date columns: histograms on the declared range (fixed bins, shares of the rows);
    categorical and boolean ones: bar charts of the shares of each category (missing values as their own bar).
    """
    name = spec.name
    wp = norm_weights(None, len(private))
    wr = norm_weights(w_released, len(released))
    fig = go.Figure()
    parts = [("private rows", private, wp, PRIVATE_COLOR), (released_label, released, wr, RELEASED_COLOR)]
    if sampled is not None:
        parts.append(("resampled rows", sampled, norm_weights(None, len(sampled)), SAMPLED_COLOR))
    if spec.kind in NUMERIC_KINDS:
        edges = bin_edges(spec)
        centres = (edges[:-1] + edges[1:]) / 2
        x = pd.to_datetime(centres, unit="D") if spec.kind == "datetime" else centres
        for label, s, w, color in parts:
            vals = as_numbers(s, spec.kind)
            fig.add_trace(go.Bar(x=x, y=histogram(vals, w, edges), name=label, marker_color=color,
                                 opacity=0.85))
        fig.update_layout(bargap=0.05, xaxis_title=f"{name} (declared range)")
    else:
        levels = category_levels(spec, *[p[1] for p in parts])
        for label, s, w, color in parts:
            fig.add_trace(go.Bar(x=levels, y=proportions(s, w, levels), name=label, marker_color=color))
        fig.update_layout(xaxis_title=name, xaxis_type="category")
    fig.update_layout(barmode="group", title=title or f"{name} ({spec.kind})", yaxis_title="share of rows",
                      height=320, **_LAYOUT)
    return fig


def marginal_shares(spec, frames_and_weights) -> tuple[list, list[np.ndarray]]:
    """(x positions, shares) of one column for several weighted tables on one common set of bins or levels.

    ``frames_and_weights``: ``(series, weights or None)`` pairs; weights are self-normalised (:func:`norm_weights`).
    Numeric columns: the fixed bins of :func:`bin_edges` over the declared range; categorical ones: the levels of
    :func:`category_levels` (declared first). The same bins for every table, so their bars can share an axis.
    """
    series = [s for s, _ in frames_and_weights]
    if spec.kind in NUMERIC_KINDS:
        edges = bin_edges(spec)
        centres = (edges[:-1] + edges[1:]) / 2
        x = list(pd.to_datetime(centres, unit="D")) if spec.kind == "datetime" else list(centres)
        shares = [histogram(as_numbers(s, spec.kind, spec=spec), norm_weights(w, len(s)), edges)
                  for s, w in frames_and_weights]
        return x, shares
    levels = category_levels(spec, *series)
    return levels, [proportions(s, norm_weights(w, len(s)), levels) for s, w in frames_and_weights]


def planning_marginal_figure(spec, x, planning_share, released_share, *, y_range, meta=None,
                             title: str = "") -> go.Figure:
    """One panel of the Release page's ε explorer for a table: a column's planning rows vs a planning release.

    ``x`` and the shares come from :func:`marginal_shares`; every panel of one explorer run gets the same
    ``y_range`` (shared axes), so a smaller ε visibly moves the released bars further from the planning ones.
    """
    fig = go.Figure()
    fig.add_trace(go.Bar(x=x, y=planning_share, name="planning rows", marker_color=PRIVATE_COLOR, opacity=0.85))
    fig.add_trace(go.Bar(x=x, y=released_share, name="planning release (weighted)", marker_color=RELEASED_COLOR,
                         opacity=0.85))
    fig.update_layout(barmode="group", bargap=0.05, title=title, yaxis_title="share of rows", height=320,
                      meta=meta, **_LAYOUT)
    if spec.kind not in NUMERIC_KINDS:
        fig.update_layout(xaxis_type="category")
    fig.update_xaxes(title_text=spec.name)
    fig.update_yaxes(range=list(y_range))
    return fig


def weighted_corr(x: np.ndarray, y: np.ndarray, w: np.ndarray) -> float:
    ok = ~(np.isnan(x) | np.isnan(y))
    x, y, w = x[ok], y[ok], w[ok]
    if w.sum() <= 0:
        return float("nan")
    w = w / w.sum()
    mx, my = w @ x, w @ y
    vx, vy = w @ (x - mx) ** 2, w @ (y - my) ** 2
    if vx <= 0 or vy <= 0:
        return float("nan")
    return float(np.clip((w @ ((x - mx) * (y - my))) / math.sqrt(vx * vy), -1.0, 1.0))


def cramers_v(a: pd.Series, b: pd.Series, w: np.ndarray) -> float:
    """Cramér's V of two categorical columns from weighted rows (no bias correction)."""
    ct = crosstab_values(a, b, w)
    P = ct.to_numpy(dtype=float)
    total = P.sum()
    if total <= 0:
        return float("nan")
    P = P / total
    r, c = P.sum(axis=1), P.sum(axis=0)
    P = P[r > 0][:, c > 0]
    r, c = r[r > 0], c[c > 0]
    k = min(r.size, c.size)
    if k < 2:
        return float("nan")
    E = np.outer(r, c)
    phi2 = float(((P - E) ** 2 / E).sum())
    return float(min(math.sqrt(phi2 / (k - 1)), 1.0))


def correlation_ratio(cat: pd.Series, num: np.ndarray, w: np.ndarray) -> float:
    """Correlation ratio η of a numeric column given a categorical one, from weighted rows."""
    ok = ~np.isnan(num)
    lab = as_labels(cat).to_numpy()[ok]
    x, w = num[ok], w[ok]
    if w.sum() <= 0:
        return float("nan")
    w = w / w.sum()
    m = w @ x
    total = float(w @ (x - m) ** 2)
    if total <= 0:
        return float("nan")
    between = 0.0
    for v in np.unique(lab):
        sel = lab == v
        wg = w[sel].sum()
        if wg > 0:
            between += wg * ((w[sel] @ x[sel]) / wg - m) ** 2
    return float(min(math.sqrt(max(between, 0.0) / total), 1.0))


def association_matrix(df: pd.DataFrame, schema, w=None) -> pd.DataFrame:
    """Pairwise associations of the schema's columns in ``df`` (weighted rows; negative weights set to 0).

    Numeric pairs: Pearson correlation (in [-1, 1]); categorical pairs: Cramér's V (in [0, 1]); a numeric and
    a categorical column: the correlation ratio η (in [0, 1]). Dates count as numeric (days).
    """
    names = [c.name for c in schema.columns]
    kinds = {c.name: c.kind for c in schema.columns}
    w = norm_weights(None, len(df)) if w is None else np.clip(np.asarray(w, dtype=float), 0.0, None)
    if w.sum() <= 0:
        raise ValueError("no positive weight: the associations cannot be estimated.")
    nums = {n: as_numbers(df[n], kinds[n]) for n in names if kinds[n] in NUMERIC_KINDS}
    A = np.eye(len(names))
    for i, a in enumerate(names):
        for j in range(i + 1, len(names)):
            b = names[j]
            if a in nums and b in nums:
                v = weighted_corr(nums[a], nums[b], w)
            elif a in nums:
                v = correlation_ratio(df[b], nums[a], w)
            elif b in nums:
                v = correlation_ratio(df[a], nums[b], w)
            else:
                v = cramers_v(df[a], df[b], w)
            A[i, j] = A[j, i] = v
    return pd.DataFrame(A, index=names, columns=names)


def association_figure(private: pd.DataFrame, released: pd.DataFrame, *,
                       titles=("private rows", "release (weighted)")) -> go.Figure:
    """Two heat-maps side by side (same colour scale, −1 to 1) and their difference."""
    names = list(private.columns)
    D = released.to_numpy() - private.to_numpy()
    fig = make_subplots(rows=1, cols=3, horizontal_spacing=0.1,
                        subplot_titles=(*titles, "difference (release − private)"))
    for k, (M, show) in enumerate(((private.to_numpy(), True), (released.to_numpy(), False), (D, False))):
        text = np.where(np.isnan(M), "", np.vectorize(lambda v: f"{v:.2f}")(np.nan_to_num(M)))
        fig.add_trace(go.Heatmap(z=M, x=names, y=names, zmin=-1, zmax=1, colorscale="RdBu", zmid=0,
                                 text=text, texttemplate="%{text}", showscale=show,
                                 hovertemplate="%{y} × %{x}: %{z:.3f}<extra></extra>"), row=1, col=k + 1)
        fig.update_yaxes(autorange="reversed", showticklabels=k == 0, row=1, col=k + 1)
    fig.update_layout(height=380 + 12 * len(names), title="Associations: correlation (numeric pairs), Cramér's V "
                      "(categorical pairs), correlation ratio η (mixed)", **_LAYOUT)
    return fig


# --------------------------------------------------------------------------- a third party's statistics
def category_table(df: pd.DataFrame, spec, w=None, *, n: int | None = None) -> pd.DataFrame:
    """Shares of each category (weighted), and counts scaled to ``n`` rows (default: the table's rows).

    Unweighted rows counted as themselves (no ``w``, no ``n``) give exact counts: whole numbers (``int64``).
    """
    wn = norm_weights(w, len(df))
    levels = category_levels(spec, df[spec.name])
    p = proportions(df[spec.name], wn, levels)
    exact = w is None and n is None
    n = len(df) if n is None else int(n)
    count = np.rint(p * n).astype(np.int64) if exact else p * n
    return pd.DataFrame({"category": levels, "proportion": p, "count": count})


def crosstab_values(a: pd.Series, b: pd.Series, w: np.ndarray) -> pd.DataFrame:
    la, lb = as_labels(a).to_numpy(), as_labels(b).to_numpy()
    frame = pd.DataFrame({"a": la, "b": lb, "w": np.asarray(w, dtype=float)})
    return frame.pivot_table(index="a", columns="b", values="w", aggfunc="sum", fill_value=0.0)


def crosstab(df: pd.DataFrame, a, b, w=None, *, levels_a=None, levels_b=None) -> pd.DataFrame:
    """Weighted shares of every (category of ``a``, category of ``b``) pair; rows ``a``, columns ``b``."""
    wn = norm_weights(w, len(df))
    ct = crosstab_values(df[a.name], df[b.name], wn)
    la = levels_a or category_levels(a, df[a.name])
    lb = levels_b or category_levels(b, df[b.name])
    return ct.reindex(index=la, columns=lb, fill_value=0.0).rename_axis(index=a.name, columns=b.name)


def group_means(df: pd.DataFrame, num_spec, cat_spec, w=None, *, levels=None) -> pd.DataFrame:
    """Weighted mean of a numeric column within each category of a categorical one (dates as days)."""
    wn = norm_weights(w, len(df))
    x = as_numbers(df[num_spec.name], num_spec.kind)
    lab = as_labels(df[cat_spec.name]).to_numpy()
    levels = levels or category_levels(cat_spec, df[cat_spec.name])
    rows = []
    for v in levels:
        sel = (lab == v) & ~np.isnan(x)
        wg = float(wn[sel].sum())
        rows.append({"group": v, "share": float(wn[lab == v].sum()),
                     "mean": float(wn[sel] @ x[sel]) / wg if abs(wg) > 1e-12 else float("nan")})
    return pd.DataFrame(rows)


def numeric_moments(df: pd.DataFrame, schema, w=None) -> pd.DataFrame:
    """Weighted mean and standard deviation of every numeric column (dates in days since 1970-01-01)."""
    wn = norm_weights(w, len(df))
    rows = []
    for c in schema.columns:
        if c.kind not in NUMERIC_KINDS:
            continue
        x = as_numbers(df[c.name], c.kind)
        ok = ~np.isnan(x)
        s = float(wn[ok].sum())
        if abs(s) <= 1e-12:
            rows.append({"column": c.name, "mean": float("nan"), "sd": float("nan")})
            continue
        m = float(wn[ok] @ x[ok]) / s
        var = float(wn[ok] @ (x[ok] - m) ** 2) / s
        rows.append({"column": c.name, "mean": m, "sd": math.sqrt(max(var, 0.0))})
    return pd.DataFrame(rows, columns=["column", "mean", "sd"])
