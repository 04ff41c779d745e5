"""Dates in a declared schema: declared date formats, reading date cells one by one (:func:`parse_dates`)."""

from __future__ import annotations

import datetime as _dt
import numbers
import warnings

import numpy as np
import pandas as pd

from .._validation import _short
from ._common import _plain, _q, _row_label, _text_cells

__all__ = ["DEFAULT_DATE_FORMAT", "parse_dates"]


_EPOCH = pd.Timestamp("1970-01-01")
_DAY = pd.Timedelta(days=1)
#: The default ``date_format`` of a datetime column: ISO 8601 text, each cell read on its own.
DEFAULT_DATE_FORMAT = "ISO8601"
_FORMAT_PROBE = pd.Timestamp("2001-02-03 04:05:06")


def _as_timestamp(value, *, what: str) -> pd.Timestamp:
    value = _plain(value)
    if isinstance(value, (bool, numbers.Number)):
        raise ValueError(f"{what} must be a date such as '2012-01-01', got the number {_short(value)}.")
    if not isinstance(value, (str, _dt.date, _dt.datetime, pd.Timestamp, np.datetime64)):
        raise ValueError(f"{what} must be a date such as '2012-01-01', got {_short(value)}.")
    try:
        ts = pd.Timestamp(value)
    except (ValueError, TypeError, OverflowError):
        raise ValueError(f"{what}: {_short(value)} is not a date; write it as 'YYYY-MM-DD' "
                         "(or 'YYYY-MM-DDTHH:MM:SS').") from None
    if ts is pd.NaT or pd.isna(ts):
        raise ValueError(f"{what} must be a date, got {_short(value)}.")
    if ts.tzinfo is not None:
        ts = ts.tz_convert("UTC").tz_localize(None)
    return ts


def _iso(ts: pd.Timestamp) -> str:
    """ISO text of a timestamp: the date alone when it is midnight."""
    return ts.date().isoformat() if ts == ts.normalize() else ts.isoformat()


def _days(ts: pd.Timestamp) -> float:
    return float((ts - _EPOCH) / _DAY)


def _check_date_format(value, *, column: str) -> str:
    """A declared date format: "ISO8601" or a strftime format that names the year, month and day."""
    if value is None:
        return DEFAULT_DATE_FORMAT
    if not isinstance(value, str) or not value.strip():
        raise ValueError(f"date_format of column {_q(column)} must be 'ISO8601' or a strftime format such as "
                         f"'%d/%m/%Y', got {_short(value)}.")
    if value == DEFAULT_DATE_FORMAT:
        return value
    if value.strip().lower() in ("mixed", "infer", "auto", "guess"):
        raise ValueError(f"date_format of column {_q(column)} is {value!r}: a date format is declared, never guessed "
                         "from the cells (a guessed reading of one row could depend on the others); write "
                         "'ISO8601' or an explicit format such as '%d/%m/%Y'.")
    try:
        text = _FORMAT_PROBE.strftime(value)
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", UserWarning)
            back = pd.to_datetime(text, format=value)
    except (ValueError, TypeError, OverflowError):
        back = None
    if back is None or back.date() != _FORMAT_PROBE.date():
        raise ValueError(f"date_format of column {_q(column)} is {value!r}, which does not name the year, month and "
                         "day (e.g. '%d/%m/%Y', '%m/%d/%Y %H:%M', '%Y%m%d'); use 'ISO8601' for ISO dates.")
    return value


def _parse_date_cells(series: pd.Series, date_format: str, *, column: str | None = None
                      ) -> tuple[pd.Series, np.ndarray, np.ndarray]:
    """(naive UTC datetime64[ns] Series, missing mask, unreadable mask): each cell parsed on its own."""
    where = f"column {_q(column)}" if column is not None else "the values"
    if pd.api.types.is_datetime64_any_dtype(series):
        ts = series
        if getattr(series.dt, "tz", None) is not None:
            ts = series.dt.tz_convert("UTC").dt.tz_localize(None)
        raw = ts.to_numpy()
        missing = np.isnat(raw)
        ts = pd.Series(_as_ns(raw), index=series.index, dtype="datetime64[ns]")
        return ts, missing, ts.isna().to_numpy(dtype=bool) & ~missing
    if pd.api.types.is_bool_dtype(series) or pd.api.types.is_numeric_dtype(series):
        raise ValueError(f"{where} holds numbers (dtype {series.dtype}), not dates; convert them to dates (e.g. "
                         "parse_dates of their text) or declare the column continuous/integer.")
    text, missing = _text_cells(series)
    cells = text.tolist()
    out = np.full(len(cells), np.datetime64("NaT"), dtype="datetime64[ns]")
    strings = [pos for pos, v in enumerate(cells) if isinstance(v, str) and not missing[pos]]
    if strings:
        # one explicit format for every cell: pandas reads each element on its own (no format inference);
        # distinct strings are parsed once and mapped back
        uniq, inverse = np.unique(np.array([cells[pos] for pos in strings], dtype=object), return_inverse=True)
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", UserWarning)
            parsed = pd.to_datetime(uniq, format=date_format, errors="coerce", utc=True)
        parsed = _as_ns(parsed.tz_localize(None).to_numpy())
        # pandas reads "now" and "today" as the current time, whatever the format: not a date of the row
        parsed[np.isin(uniq, np.array(["now", "today"], dtype=object))] = np.datetime64("NaT")
        out[np.asarray(strings)] = parsed[inverse.ravel()]
    for pos, v in enumerate(cells):
        if not missing[pos] and not isinstance(v, str):
            out[pos] = _date_object(v)
    ts = pd.Series(out, index=series.index, dtype="datetime64[ns]")
    bad = ts.isna().to_numpy(dtype=bool) & ~missing
    return ts, missing, bad


_NS_RANGE = (np.datetime64("1677-09-22", "us"), np.datetime64("2262-04-11", "us"))


def _as_ns(arr: np.ndarray) -> np.ndarray:
    """datetime64 values as datetime64[ns], element by element; NaT where they do not fit (years 1677-2262)."""
    ok = (arr >= _NS_RANGE[0]) & (arr <= _NS_RANGE[1])
    out = np.full(arr.shape, np.datetime64("NaT"), dtype="datetime64[ns]")
    out[ok] = arr[ok].astype("datetime64[ns]")
    return out


def _date_object(v):
    """A datetime/date/Timestamp/datetime64 cell as a naive UTC datetime64[ns]; NaT for anything else."""
    if isinstance(v, (bool, np.bool_, numbers.Number)) or not isinstance(v, (_dt.date, np.datetime64)):
        return np.datetime64("NaT")
    try:
        ts = pd.Timestamp(v)
        if ts.tzinfo is not None:
            ts = ts.tz_convert("UTC").tz_localize(None)
        return np.datetime64("NaT") if pd.isna(ts) else ts.as_unit("ns").to_datetime64()
    except (ValueError, TypeError, OverflowError):
        return np.datetime64("NaT")


def parse_dates(values, *, date_format: str = DEFAULT_DATE_FORMAT, errors: str = "coerce") -> pd.Series:
    r"""Read a column of dates **cell by cell** with a declared format (the reading of :class:`TableSchema`).

    Every cell is parsed on its own with ``date_format``, so the date a cell becomes depends on that
    cell and the declared format only -- never on the other rows. (``pandas.to_datetime`` without a
    format guesses one from the first cell and applies it to the whole column: with rows
    ``["13/04/2020", "03/04/2020", ...]`` the later rows read as April 3, and replacing only the first
    row by ``"12/25/2020"`` turns them into March 4. On private rows that makes the embedding of every
    row depend on one row.) Use this function wherever private dates are read.

    Parameters
    ----------
    values : array-like or pandas.Series
        Text (stripped; ``""``, ``"NA"``, ``"null"``, ... are missing), ``datetime``/``date``/Timestamp
        objects, or a datetime64 column (time-zone aware values are converted to UTC).
    date_format : str, default="ISO8601"
        ``"ISO8601"`` or an explicit strftime format such as ``"%d/%m/%Y"`` (it must name the year,
        month and day; ``"mixed"`` and other guesses are refused). A cell with a UTC offset is converted
        to UTC; the result is naive (UTC).
    errors : {"coerce", "raise"}, default="coerce"
        ``"coerce"``: a cell that is not a date in the declared format becomes ``NaT`` (as a missing
        cell does); ``"raise"``: a ValueError naming the first such cell, its row and the number of them.

    Returns
    -------
    pandas.Series
        ``datetime64[ns]``, the index of ``values`` (when a Series), ``NaT`` where missing. Days since
        1970-01-01: ``(out - pd.Timestamp("1970-01-01")) / pd.Timedelta(days=1)``.

    Examples
    --------
    >>> parse_dates(["13/04/2020", "03/04/2020", ""], date_format="%d/%m/%Y").dt.strftime("%b %d").tolist()
    ['Apr 13', 'Apr 03', nan]
    >>> parse_dates(["12/25/2020", "03/04/2020"], date_format="%m/%d/%Y").dt.strftime("%b %d").tolist()
    ['Dec 25', 'Mar 04']
    >>> parse_dates(["2020-04-03T10:30", "2020-04-03 10:30+02:00"]).tolist()
    [Timestamp('2020-04-03 10:30:00'), Timestamp('2020-04-03 08:30:00')]
    """
    if errors not in ("coerce", "raise"):
        raise ValueError(f"errors must be 'coerce' or 'raise', got {_short(errors)}.")
    fmt = _check_date_format(date_format, column="values")
    if isinstance(values, (str, bytes)):
        raise ValueError("values must be a column of dates (a list, array or Series), not one string.")
    if isinstance(values, pd.DataFrame):
        raise ValueError("values must be one column (a Series), not a DataFrame.")
    series = values if isinstance(values, pd.Series) else pd.Series(
        values.tolist() if isinstance(values, (np.ndarray, pd.Index)) and values.dtype == object else values)
    if np.ndim(series) != 1:
        raise ValueError(f"values must be 1-D (one column), got shape {np.shape(series)}.")
    ts, _, bad = _parse_date_cells(series, fmt)
    if errors == "raise" and bad.any():
        pos = int(np.argmax(bad))
        raise ValueError(f"{_short(series.iloc[pos])} in {_row_label(series, pos)} is not a date in the declared "
                         f"format {fmt!r} ({int(bad.sum())} cell(s)); fix those cells or declare their "
                         f"{_date_format_hint(series.iloc[pos], fmt)}.")
    return ts


def _date_format_hint(cell, declared: str) -> str:
    """``date_format=...`` that reads ``cell`` (one of the formats :func:`suggest_schema` recognises), for an error.

    Only the offending cell is tried (the owner's own error message); when a day-first and a month-first format
    both read it, both are named. Without any: a request for a strftime format that reads it.
    """
    text = cell.strip() if isinstance(cell, str) else None
    found = []
    if text:
        for fmt in _SUGGESTED_DATE_FORMATS:
            if fmt != declared and not _parse_date_cells(pd.Series([text], dtype=object), fmt)[2].any():
                found.append(fmt)
    if not found:
        return (f"date_format (a strftime format that reads {_short(cell)}, e.g. '%Y-%m-%d', '%d/%m/%Y' or "
                "'%b %d %Y')")
    if len(found) > 1 and found[0].replace("%d", "%_").replace("%m", "%d").replace("%_", "%m") == found[1]:
        return (f"date_format={found[0]!r} or {found[1]!r} (both read {_short(cell)}: check the day/month order "
                "on other cells)")
    return f"date_format={found[0]!r} (it reads {_short(cell)}; check that it reads every cell)"


#: Formats :func:`suggest_schema` tries, in this order, on a text column (the first that reads every cell).
_SUGGESTED_DATE_FORMATS = (
    DEFAULT_DATE_FORMAT,
    *(d + tail for d in ("%d/%m/%Y", "%m/%d/%Y", "%d.%m.%Y", "%d-%m-%Y", "%m-%d-%Y")
      for tail in ("", " %H:%M", " %H:%M:%S")),
    # month names (English): "Jan 1 2000" was excluded as "more than 50 distinct values" (W1 walk)
    "%b %d %Y", "%b %d, %Y", "%d %b %Y", "%B %d %Y", "%B %d, %Y", "%d %B %Y", "%d-%b-%Y")


def _date_format_of(values: pd.Series) -> str | None:
    """The first of the candidate formats that reads every cell (None: not dates)."""
    text = values.astype(str).str.strip()
    if not text.str.contains(r"\d", regex=True).all():
        return None
    if text.str.fullmatch(r"[+-]?\d*\.?\d+([eE][+-]?\d+)?").any():
        return None
    if not text.str.contains(r"[-/:.T ]", regex=True).all():
        return None
    for fmt in _SUGGESTED_DATE_FORMATS:
        _, _, bad = _parse_date_cells(text, fmt)
        if not bad.any():
            return fmt
    return None
