"""Suggested schemas (:func:`suggest_schema`): from public rows, or -- flagged -- from the private ones."""

from __future__ import annotations

import math
import numbers
import warnings
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field

import numpy as np
import pandas as pd

from .._validation import _short, check_positive_int, identifier_reason
from ._common import _MISSING_TOKENS, _natural_key
from .columns import ColumnSpec, DataDependence
from .dates import DEFAULT_DATE_FORMAT, _date_format_of, _parse_date_cells
from .table import TableSchema

__all__ = ["SchemaSuggestion", "suggest_schema"]


def _nice_step(span: float) -> float:
    """The largest of 1, 2, 5 x 10^k that cuts ``span`` into at least 10 steps: 1-2 significant digits of the range
    (a range of 57.6 -> steps of 5, 23 -> 2, 9.5 -> 0.5, 360 -> 20), never of the values themselves."""
    base = 10.0 ** (math.floor(math.log10(span)) - 1)
    for m in (5.0, 2.0):
        if span / (m * base) >= 10.0:
            return m * base
    return base


def _nice_bounds(lo: float, hi: float, *, integer: bool = False) -> tuple[float, float]:
    """Round numbers around [lo, hi], outward (for suggestions), on a step of :func:`_nice_step` of the range.

    Longitudes -124.6 ... -67.0 become [-125, -65] and -179.9 ... 179.9 become [-180, 180]; an integer column
    rounds on whole steps, and one whose step would be 1 or 2 keeps its own ends (hours 0 ... 23 stay [0, 23]).
    """
    if hi <= lo:
        width = max(abs(lo), 1.0) * 0.5
        lo, hi = lo - width, hi + width
    step = _nice_step(hi - lo)
    if integer:
        step = 1.0 if step <= 2.0 else float(round(step))
    a, b = math.floor(lo / step + 1e-9) * step, math.ceil(hi / step - 1e-9) * step
    a, b = (a - step if a > lo else a), (b + step if b < hi else b)      # (the tolerance never cuts a value off)
    if b <= a:
        b = a + step
    return (float(round(a, 12)), float(round(b, 12)))


# --------------------------------------------------------------------------- suggestions
@dataclass(frozen=True)
class SchemaSuggestion:
    """A proposed schema, with where each value came from.

    Parameters
    ----------
    schema : TableSchema
        The proposal (its ``data_dependent`` lists the columns, and ``data_dependent_fields`` the fields,
        read from the private rows).
    notes : dict
        Column name -> how its kind, domain and missing policy were chosen (owner-only when they were read
        from the private rows).
    excluded : dict
        Column name -> why it was left out (e.g. too many distinct values for a category list).
    excluded_from_private : tuple of str
        The columns of ``excluded`` left out by a test on the private rows (all values distinct, too many
        categories, ...): which columns a release has is then a statistic of the private data, so
        :attr:`warning` says so even when every kept value came from public rows.
    """

    schema: TableSchema
    notes: dict
    excluded: dict = field(default_factory=dict)
    excluded_from_private: tuple = ()

    @property
    def data_dependent(self) -> DataDependence:
        """Columns whose suggested values were read from the private rows (``.fields``: which values)."""
        return self.schema.data_dependent

    @property
    def warning(self) -> str | None:
        """The data-dependence warning (None when every value, and every column left out, came from public
        knowledge)."""
        if not self.data_dependent and not self.excluded_from_private:
            return None
        return _data_dependent_message(self.data_dependent.fields, self.excluded_from_private)


def _data_dependent_message(fields: Mapping, excluded: Sequence[str] = ()) -> str:
    parts = []
    if fields:
        detail = "; ".join(f"{n}: {', '.join(sorted(f))}" for n, f in fields.items())
        parts.append(f"suggest_schema read the private rows for column(s) {list(fields)} ({detail}): these values "
                     "are statistics of the private data, and a release that uses them is not differentially "
                     "private. Declare them from public knowledge (TableSchema.redeclare, or replace_column(..., "
                     "declared=...) for a value you confirm), pass public rows (public=...), or release bounds and "
                     "categories privately (dpkme.privacy.discovery.private_bounds / private_categories, charged to "
                     "the ledger).")
    if excluded:
        parts.append(f"Column(s) {list(excluded)} were left out by a test on the PRIVATE rows (e.g. every value "
                     "distinct): which columns a release has is then a statistic of the private data. Decide the "
                     "columns to release from public knowledge (the data's documentation) and declare the schema.")
    return " ".join(parts)


def _decimals_of(values: np.ndarray, max_decimals: int = 6) -> int | None:
    v = values[np.isfinite(values)]
    if v.size == 0:
        return None
    for d in range(max_decimals + 1):
        if np.all(np.abs(np.round(v, d) - v) <= 1e-9 * np.maximum(1.0, np.abs(v))):
            return d
    return None


def _suggested_levels(x: np.ndarray, max_levels: int) -> list | None:
    """The distinct values of a continuous column as its levels, when there are few and each is seen twice on average."""
    if max_levels < 2:
        return None
    distinct = np.unique(x)
    if 2 <= distinct.size <= max_levels and x.size >= 2 * distinct.size:
        return [float(v) for v in distinct]
    return None


def _suggest_column(name: str, source: pd.Series, max_categories: int, *, private: bool, max_levels: int = 0):
    """(ColumnSpec or None, note or exclusion reason, fields read from ``source``) for one column.

    ``source`` holds the rows read: public rows, or (``private=True``) the private ones. From private
    rows, only what cannot be had otherwise is read -- the kind, whether a cell is missing, bounds, categories and
    a date format -- and every such field is returned for flagging; the decimals (none) are a data-free default
    then.
    """
    dtype = source.dtype
    present = source[source.notna()]
    if source.dtype == object or pd.api.types.is_string_dtype(source):
        stripped = present.astype(str).str.strip()
        present = present[~stripped.str.lower().isin(_MISSING_TOKENS)]
    # "missing" only for a column that can be missing: one whose rows show a missing cell. From private rows that
    # is read off the data, so it is flagged like the kind (a table without a missing cell gets none in its release)
    missing = "category" if len(present) < len(source) else "error"
    read = {"kind", "missing"} if private else {"kind"}
    if pd.api.types.is_timedelta64_dtype(dtype) or pd.api.types.is_complex_dtype(dtype):
        return None, f"dtype {dtype} is not supported (convert it to real numbers)", read
    if pd.api.types.is_bool_dtype(dtype):
        return ColumnSpec(name, "boolean", missing=missing), "boolean from its dtype", read
    if len(present) == 0:
        return None, "no values to suggest a domain from; declare it by hand", read
    date_format = None
    if pd.api.types.is_datetime64_any_dtype(dtype):
        kind = "datetime"
    elif pd.api.types.is_integer_dtype(dtype):
        kind = "integer"
    elif pd.api.types.is_numeric_dtype(dtype):
        kind = "continuous"
    else:
        text = present.astype(str).str.strip()
        lowered = set(text.str.lower())
        if lowered <= {"true", "false"}:
            return ColumnSpec(name, "boolean", missing=missing), "boolean: its values are True/False", read
        numbers_ = pd.to_numeric(text, errors="coerce")
        if numbers_.notna().all():
            kind = "continuous"
            present = numbers_
        elif (date_format := _date_format_of(text)) is not None:
            kind = "datetime"
            read.add("date_format")
        else:
            cats = sorted(set(text), key=_natural_key)
            if len(cats) > max_categories:
                dates = (" (dates in a format not recognised? declare the column datetime with its date_format, "
                         "e.g. '%d %b %Y')") if text.str.contains(r"\d", regex=True).all() else ""
                return None, (f"more than {max_categories} distinct values: too many for a category list (an "
                              "identifier or free text?); declare its categories by hand if it is a category"
                              + dates), read
            if len(cats) + (missing == "category") < 2:
                return None, "a single value: a constant column carries no information", read
            read.add("categories")
            return (ColumnSpec(name, "categorical", categories=cats, missing=missing),
                    f"categorical ({len(cats)} categories)", read)
    read |= {"lower", "upper"}
    if kind == "datetime":
        if date_format is None:
            ts = present
            if getattr(ts.dt, "tz", None) is not None:
                ts = ts.dt.tz_convert("UTC").dt.tz_localize(None)
        else:
            ts = _parse_date_cells(present.astype(str).str.strip(), date_format)[0]
        ts = ts.dropna()
        lo_ts, hi_ts = ts.min(), ts.max()
        lower = pd.Timestamp(year=lo_ts.year, month=1, day=1)
        upper = pd.Timestamp(year=hi_ts.year + 1, month=1, day=1)
        with_time = bool((ts != ts.dt.normalize()).any()) and not private
        if date_format is not None and date_format != DEFAULT_DATE_FORMAT:
            note_fmt = f"; date format {date_format!r} (check the day/month order)"
        else:
            note_fmt = ""
        return (ColumnSpec(name, "datetime", lower=lower, upper=upper, missing=missing,
                           decimals=3 if with_time else None, date_format=date_format),
                "datetime; bounds: whole years around the values" + note_fmt, read)
    x = pd.to_numeric(present, errors="coerce").to_numpy(dtype=np.float64, na_value=np.nan)
    x = x[np.isfinite(x)]
    if x.size == 0:
        return None, "no finite values to suggest bounds from; declare them by hand", read
    lo, hi = _nice_bounds(float(x.min()), float(x.max()), integer=kind == "integer")
    if kind == "integer":
        return (ColumnSpec(name, "integer", lower=int(lo), upper=int(hi), missing=missing),
                "integer from its dtype; bounds: round numbers around the values", read)
    values = _suggested_levels(x, max_levels)
    note_levels = ""
    if values is not None:
        read.add("values")
        note_levels = (f"; levels: its {len(values)} distinct values (check that they are documented codes: a value "
                       "that is not a level is snapped to the nearest one)")
    if private:
        return (ColumnSpec(name, "continuous", lower=lo, upper=hi, missing=missing, values=values),
                "continuous from its dtype; bounds: round numbers around the values; decimals: none (declare "
                "them: the values' precision is not read from the private rows)" + note_levels, read)
    return (ColumnSpec(name, "continuous", lower=lo, upper=hi, missing=missing, decimals=_decimals_of(x), values=values),
            "continuous from its dtype; bounds: round numbers around the values; decimals: the values' precision"
            + note_levels, read)


def suggest_schema(df, *, public=None, max_categories: int = 50, uniform_sq_distance: float = 1.0,
                   max_levels: int = 30) -> SchemaSuggestion:
    r"""Propose a schema for a table: kinds, domains and missing policies from **public** rows when given.

    With ``public`` (a public sample with the same columns), everything is read from the public rows:
    the kind from the public column's dtype (bool -> boolean, integer -> integer, float -> continuous,
    datetime -> datetime; text columns are categorical unless all their values are numbers, dates in
    one of a fixed list of formats, or True/False), bounds as round numbers around the values on a step of
    1-2 significant digits of their range (the largest of 1, 2, 5 :math:`\times 10^k` with at least 10
    steps in the range: longitudes -124.6 ... -67.0 give [-125, -65]; an integer column whose step would be
    1 or 2 keeps its ends, hours 0 ... 23 give [0, 23]; whole years for dates), category lists as the sorted distinct values, ``missing="category"`` where values
    are missing, and the decimals of continuous columns. A continuous column with at most ``max_levels``
    distinct values, each seen twice on average, gets them as its declared levels (``values``: survey
    codes such as ages 17.5, 22, 27, ...); check them against the data's documentation, since a value the
    rows did not show would be snapped to its nearest level.

    Without public rows (or for columns ``public`` lacks), the **private** rows ``df`` are read, and as
    little as possible: no decimals are proposed (a data-free default), while whether a column has missing cells
    (``missing="category"`` only then: a suggestion never invents missing values), the kind (a dtype a CSV reader inferred from the values is data, not
    metadata: one blank cell turns integers into floats), the bounds, the categories and a date's format
    are read from the private rows. Every such field is recorded in
    :attr:`TableSchema.data_dependent_fields` (its column in :attr:`TableSchema.data_dependent`) and a
    :class:`~dpkme.privacy.leaks.PrivacyLeakWarning` says so: a release with them is not differentially
    private until they are declared from public knowledge (:meth:`TableSchema.redeclare`, or
    :meth:`TableSchema.replace_column` with ``declared=`` for a value you confirm) or released privately
    (:mod:`dpkme.privacy.discovery`). Which columns are left out (``excluded``) is then decided from the
    private rows too; the notes are owner-only.

    Parameters
    ----------
    df : pandas.DataFrame
        The table to be released (its column names are used; its values and dtypes only for the columns
        that ``public`` lacks).
    public : pandas.DataFrame, optional
        Public rows with the same columns (a public sample, an earlier published table).
    max_categories : int, default=50
        A text column with more distinct values is left out (``excluded``), e.g. an identifier.
    uniform_sq_distance : float, default=1.0
        Passed to :class:`TableSchema` (target of the public default scales).
    max_levels : int, default=30
        Most distinct values of a continuous column proposed as its levels (0: never propose levels).
        Read from the private rows (no ``public``), the levels are flagged like everything else there.

    Returns
    -------
    SchemaSuggestion

    Examples
    --------
    >>> import pandas as pd
    >>> private = pd.DataFrame({"age": [34, 51, 29], "group": ["a", "b", "a"]})
    >>> public = pd.DataFrame({"age": [18, 90], "group": ["a", "b"]})
    >>> s = suggest_schema(private, public=public)
    >>> s.schema["age"].bounds, s.schema["group"].categories, s.data_dependent
    ((15.0, 90.0), ('a', 'b'), DataDependence({}))
    >>> import warnings
    >>> with warnings.catch_warnings():
    ...     warnings.simplefilter("ignore")
    ...     s = suggest_schema(private)
    >>> s.schema["age"].missing, dict(sorted((k, sorted(v)) for k, v in s.schema.data_dependent_fields.items()))
    ('error', {'age': ['kind', 'lower', 'missing', 'upper'], 'group': ['categories', 'kind', 'missing']})
    """
    from ..privacy.leaks import PrivacyLeakWarning

    if not isinstance(df, pd.DataFrame):
        raise ValueError(f"expected a pandas DataFrame, got {type(df).__name__}.")
    if public is not None and not isinstance(public, pd.DataFrame):
        raise ValueError(f"public must be a pandas DataFrame of public rows, got {type(public).__name__}.")
    max_categories = check_positive_int(max_categories, name="max_categories")
    if isinstance(max_levels, (bool, np.bool_)) or not isinstance(max_levels, (numbers.Integral, np.integer)) \
            or max_levels < 0:
        raise ValueError(f"max_levels must be an integer >= 0 (0: propose no levels), got {_short(max_levels)}.")
    specs, notes, excluded, dependent = [], {}, {}, {}
    private_exclusions: list[str] = []          # left out by a test on the private rows: flagged like a value
    for col in df.columns:
        name = str(col)
        s = df[col]
        if isinstance(s, pd.DataFrame):
            excluded[name] = "the column name occurs more than once"
            continue
        from_public = public is not None and col in public.columns
        source = public[col] if from_public else s
        if isinstance(source, pd.DataFrame):
            excluded[name] = "the column name occurs more than once in the public rows"
            continue
        where = "public rows" if from_public else "the PRIVATE rows"
        ident = identifier_reason(name, source)
        if ident is not None:
            by_name = ident.startswith("its name")
            excluded[name] = f"left out: {ident}" + ("" if by_name else f" (decided from {where})")
            if not by_name and not from_public:
                private_exclusions.append(name)
            continue
        spec, note, read = _suggest_column(name, source, max_categories, private=not from_public,
                                           max_levels=int(max_levels))
        if not from_public:
            dependent[name] = read
        if spec is None:
            excluded[name] = note + f" (decided from {where})"
            if not from_public:
                private_exclusions.append(name)
            continue
        specs.append(spec)
        notes[name] = note + (f"; read from {where}" if from_public else
                              f"; read from {where}: {', '.join(sorted(read))}")
    if not specs:
        raise ValueError(f"no column of the table could be suggested: {excluded}; declare the schema by hand.")
    kept = {n: f for n, f in dependent.items() if n in {sp.name for sp in specs}}
    schema = TableSchema(tuple(specs), data_dependent=kept, uniform_sq_distance=uniform_sq_distance)
    if dependent or private_exclusions:
        warnings.warn(_data_dependent_message(kept, private_exclusions), PrivacyLeakWarning, stacklevel=2)
    return SchemaSuggestion(schema=schema, notes=notes, excluded=excluded,
                            excluded_from_private=tuple(private_exclusions))
