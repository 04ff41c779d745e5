"""Small helpers and private constants shared by the modules of :mod:`dpkme.schema`."""

from __future__ import annotations

import math
import numbers

import numpy as np
import pandas as pd

from .._validation import _short

_NUMERIC_KINDS = ("continuous", "integer", "datetime")
_DISCRETE_KINDS = ("categorical", "boolean")
# cell texts (after strip/lower) read as missing in numeric and date columns (as dpkme.io does)
_MISSING_TOKENS = frozenset({"", "na", "nan", "n/a", "null", "none", "<na>", "#n/a", "-nan", "nat"})
#: The owner's report says what "missing" covers: text markers become missing values, not categories.
_MISSING_MARKERS_NOTE = ("Missing cells include empty cells and text cells holding a missing-value marker ('NA', "
                        "'n/a', 'N/A', 'null', 'NaN', 'None', '#N/A', ...): such text is read as missing, not as "
                        "a category or a value.")
_TRUE_TOKENS = frozenset({"true", "t", "yes", "y", "1"})
_FALSE_TOKENS = frozenset({"false", "f", "no", "n", "0"})
_LENGTHSCALE_RANGE = (1e-6, 1e6)
_MAX_DECIMALS = 12


# --------------------------------------------------------------------------- small helpers
def _q(name) -> str:
    """A column name quoted for messages: "species"."""
    return '"' + str(name) + '"'


def _plain(v):
    """A numpy scalar as the Python scalar it holds."""
    return v.item() if isinstance(v, np.generic) else v


def _is_missing_scalar(v) -> bool:
    if v is None:
        return True
    try:
        res = pd.isna(v)
    except (TypeError, ValueError):
        return False
    return bool(res) if np.ndim(res) == 0 else False


def _as_real(value, *, what: str) -> float:
    value = _plain(value)
    if isinstance(value, bool) or not isinstance(value, numbers.Real):
        raise ValueError(f"{what} must be a real number, got {_short(value)}.")
    v = float(value)
    if not math.isfinite(v):
        raise ValueError(f"{what} must be finite, got {_short(value)}.")
    return v


def _check_similarity(value, *, column: str) -> float:
    s = _as_real(value, what=f"similarity of column {_q(column)}")
    if not 0.0 < s < 1.0:
        raise ValueError(
            f"similarity of column {_q(column)} must lie strictly between 0 and 1 (the kernel value of two "
            f"different levels), got {_short(value)}; to ignore the column, leave it out of the schema.")
    return s


def _check_label(value, *, column: str):
    value = _plain(value)
    if isinstance(value, bool) or _is_missing_scalar(value) or not isinstance(value, (str, int)):
        raise ValueError(
            f"category {_short(value)} of column {_q(column)}: categories must be strings or integers (not "
            "booleans, floats or missing values; a missing value becomes a level with missing='category').")
    return value


def _natural_key(v):
    """Sort key of a category label: case-insensitive, runs of digits by their value ("L2" before "L10")."""
    import re

    text = str(v)
    parts = re.split(r"(\d+)", text.lower())
    return ([(0, int(p), "") if p.isdigit() else (1, 0, p) for p in parts if p], text)


# --------------------------------------------------------------------------- parsing the cells of a column
def _row_label(series: pd.Series, pos: int) -> str:
    return f"row {_short(series.index[pos])}"


def _text_cells(series: pd.Series) -> tuple[pd.Series, np.ndarray]:
    """Cells as objects (text stripped) and the mask of missing ones (None/NaN/NaT or a missing token)."""
    obj = series.astype(object)
    text = obj.map(lambda v: v.strip() if isinstance(v, str) else v)
    missing = (obj.isna() | text.map(lambda v: isinstance(v, str) and v.lower() in _MISSING_TOKENS)).to_numpy(dtype=bool)
    return text, missing
