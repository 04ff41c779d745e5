r"""Declared schemas of mixed tables, and the public embedding that makes them kernel data.

A table with numeric, integer, categorical, boolean and date columns (with missing values) becomes data
for every mechanism of dpkme through a **declared** :class:`TableSchema`: a public, per-row map
:math:`e` from a row :math:`x` to a vector :math:`e(x)\in\mathbb R^D` (the *embedding*). The mixed
kernel is the Gaussian kernel with length scale 1 on embedded rows,

.. math:: k(x, y) = \exp\Bigl(-\tfrac12\,\|e(x) - e(y)\|_2^2\Bigr)
          = \prod_{j} k_j(x_j, y_j),

i.e. :class:`dpkme.GaussianKernel` ``(lengthscale=1.0)`` applied to :meth:`TableSchema.encode`'s output.
So :math:`k(x,x) = 1` and :math:`0 < k \le 1`, the replace-one sensitivity of the kernel mean embedding
stays :math:`\|\hat\mu_D - \hat\mu_{D'}\|_{\mathcal H} = \sqrt{2 - 2k(x, x')}/N \le 2/N`, and the
unit-norm random features, Algorithms 1 and 2, the sensitivity code, audits and two-sample tests apply
to embedded rows unchanged.

The embedding, column by column
-------------------------------
continuous, integer, datetime
    Declared bounds :math:`[lo_j, hi_j]` (a datetime counts in days since 1970-01-01) and a length scale
    :math:`\ell_j` as a *fraction of the declared range*; one coordinate

    .. math:: e_j(x) = \frac{\operatorname{clip}(x_j, lo_j, hi_j) - lo_j}{(hi_j - lo_j)\,\ell_j},
              \qquad k_j(x_j, y_j) = \exp\Bigl(-\frac{(x_j - y_j)^2}{2\ell_j^2(hi_j - lo_j)^2}\Bigr).

continuous or integer with declared levels (``values``)
    The same numeric coordinate (order and distance are kept), restricted to the embedded levels
    :math:`e_j(v_1) < \dots < e_j(v_n)`: the domain holds the coordinate on them (sampled among them, never
    moved by a solver), decoded and resampled values are levels, and a private value between levels is
    snapped to the nearest one (counted as ``rounded``). For survey codes (ages coded 17.5, 22, 27, ...)
    whose values would otherwise spill into the gaps between codes.
categorical, boolean
    A declared list of :math:`c_j` categories (a missing value may be one more level); a one-hot block
    scaled by :math:`a_j = \sqrt{-\ln\kappa_j}`, where :math:`\kappa_j\in(0,1)` is the declared
    *similarity* of two different categories. Since :math:`\|a e_u - a e_v\|^2 = 2a^2` for
    :math:`u\ne v`,

    .. math:: k_j(x_j, y_j) = \begin{cases} 1 & x_j = y_j\\ \kappa_j & x_j \ne y_j\end{cases}

    (an overlap or Hamming-type kernel).
missing values (``missing=``)
    ``"error"`` (the default) refuses them, naming the column and the number of rows; ``"impute"``
    replaces them by the declared ``impute`` value; ``"category"`` makes them a level of their own: for a
    categorical column one more one-hot coordinate, for a numeric column a two-level block
    (present/missing, similarity ``similarity``) next to the numeric coordinate, which then holds the
    declared imputation value (default: the middle of the range).

Everything that is not a declared value is part of the **declared preprocessing**: numbers outside
the bounds are clipped to them, integers are rounded, dates given as text are read with the column's
declared ``date_format`` (ISO 8601 by default; never a format guessed from the column), values that are
not among the declared categories are refused (``missing="error"``) or treated as missing. Every cell is
read on its own (:func:`parse_dates`; category labels through type-tagged keys, so ``True`` and ``1``
stay apart), so the embedding of a row depends on that row and on the schema only: it is a fixed public
map and the sensitivity proofs hold as stated. :meth:`TableSchema.encode_report` tells the data owner how many cells were clipped,
rounded, imputed or unknown; those counts are statistics of the private data and belong to the
owner only -- never put them in a release.

Public default length scales and similarities
---------------------------------------------
A column without a declared ``lengthscale``/``similarity`` gets a default computed from the schema
alone (never from data). With :math:`p` columns and target :math:`s` (``uniform_sq_distance``,
default 1), each column is given an equal share :math:`s/p` of the expected squared embedded
distance between two independent uniform draws :math:`X, Y` from the declared domain:

* continuous and datetime: :math:`E(U - V)^2 = 1/6` for independent uniforms on :math:`[0, 1]`, so
  :math:`\ell_j = \sqrt{p/(6s)}`;
* integer with :math:`n` levels: :math:`E(K - K')^2/(n-1)^2 = (n+1)/(6(n-1))`, so
  :math:`\ell_j = \sqrt{p(n+1)/(6s(n-1))}`; declared levels :math:`v`: :math:`E(V - V')^2 = 2\mathrm{Var}(v)`,
  so :math:`\ell_j = \sqrt{2p\mathrm{Var}(v)/s}/(hi_j - lo_j)`;
* categorical and boolean with :math:`c` levels (the missing level included): two uniform levels
  differ with probability :math:`1 - 1/c`, so :math:`\kappa_j = \exp(-s/(2p(1 - 1/c)))`;
* the present/missing block of a numeric column with ``missing="category"`` is a two-level column:
  :math:`\kappa = \exp(-s/p)`.

Without numeric missing-value blocks, :math:`E\|e(X) - e(Y)\|^2 = s` exactly, and because it is a sum
of :math:`p` independent terms its median is close to :math:`s`: the **median heuristic, computed on
the declared domain instead of on the data**. In words: with the default :math:`s = 1`, two rows
drawn at random from everything the schema allows have a kernel value of about
:math:`e^{-1/2}\approx 0.6`, and every column counts equally. Real rows are more concentrated than
uniform draws, so their kernel values are larger; declare smaller length scales (a fraction of the
range, e.g. ``lengthscale=0.2``) or a smaller ``uniform_sq_distance`` for a finer kernel. Every
default can be overridden per column.

Privacy notes
-------------
A schema must be declared from public knowledge (a data dictionary, physical or legal ranges, a
public sample). :func:`suggest_schema` proposes one from public rows, or -- flagged with a
:class:`~dpkme.privacy.leaks.PrivacyLeakWarning` and recorded field by field in
:attr:`TableSchema.data_dependent_fields` (the columns in :attr:`TableSchema.data_dependent`) -- from the
private rows themselves; :mod:`dpkme.privacy.discovery` releases bounds and category lists privately,
with a charge for the ledger, and :meth:`TableSchema.redeclare` declares them, clearing exactly those
fields. The schema is published with every release, so each of its fields must be public.

Examples
--------
>>> import pandas as pd
>>> schema = TableSchema([
...     ColumnSpec("species", "categorical", categories=["Adelie", "Chinstrap", "Gentoo"]),
...     ColumnSpec("mass_g", "continuous", lower=2000, upper=7000, lengthscale=0.25, decimals=0),
...     ColumnSpec("sex", "categorical", categories=["female", "male"], missing="category"),
... ])
>>> df = pd.DataFrame({"species": ["Adelie", "Gentoo"], "mass_g": [3750.0, 5200.0], "sex": ["male", None]})
>>> Z = schema.encode(df)
>>> Z.shape, schema.dim
((2, 7), 7)
>>> back = schema.decode(Z)
>>> back["species"].tolist(), back["mass_g"].tolist(), back["sex"].isna().tolist()
(['Adelie', 'Gentoo'], [3750.0, 5200.0], [False, True])
>>> TableSchema.from_json(schema.to_json()) == schema
True
"""

from __future__ import annotations

import datetime as _dt
import json
import math
import numbers
import warnings
from dataclasses import KW_ONLY, dataclass, field
from dataclasses import replace as _dc_replace
from functools import cached_property
from types import MappingProxyType
from typing import Any, Mapping, Sequence

import numpy as np
import pandas as pd

from .._validation import (
    _short,
    check_array,
    check_positive_float,
    check_positive_int,
    check_random_state,
    identifier_reason,
)
from ..kernels.additive import TABLE_SCHEMA_TYPES, table_kernel
from ..kernels.marginal import _nearest_level

__all__ = [
    "KINDS",
    "MISSING_POLICIES",
    "DATA_FIELDS",
    "DEFAULT_DATE_FORMAT",
    "SCHEMA_FORMAT",
    "SCHEMA_VERSION",
    "ColumnSpec",
    "TableSchema",
    "EmbeddedDomain",
    "EncodeReport",
    "SchemaSuggestion",
    "DataDependence",
    "suggest_schema",
    "parse_dates",
    "default_lengthscale",
    "default_similarity",
]

#: Column kinds a schema can declare.
KINDS = ("continuous", "integer", "categorical", "boolean", "datetime")
#: How missing values are handled: refused, replaced by a declared value, or made a level of their own.
MISSING_POLICIES = ("error", "impute", "category")
#: ``"format"`` field of a schema's JSON form, and its version.
SCHEMA_FORMAT = "dpkme.table_schema"
SCHEMA_VERSION = 1

_NUMERIC_KINDS = ("continuous", "integer", "datetime")
_DISCRETE_KINDS = ("categorical", "boolean")
_EPOCH = pd.Timestamp("1970-01-01")
_DAY = pd.Timedelta(days=1)
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
_SPEC_FIELDS = ("name", "kind", "lower", "upper", "categories", "missing", "impute", "lengthscale", "similarity",
                "decimals", "date_format", "values")
#: Fields of a column spec whose value can be read from data (``TableSchema.data_dependent_fields``).
DATA_FIELDS = _SPEC_FIELDS[1:]
#: The default ``date_format`` of a datetime column: ISO 8601 text, each cell read on its own.
DEFAULT_DATE_FORMAT = "ISO8601"
_FORMAT_PROBE = pd.Timestamp("2001-02-03 04:05:06")


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


def _as_timestamp(value, *, what: str) -> pd.Timestamp:
    value = _plain(value)
    if isinstance(value, bool) or isinstance(value, numbers.Number):
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


def _natural_key(v):
    """Sort key of a category label: case-insensitive, runs of digits by their value ("L2" before "L10")."""
    import re

    text = str(v)
    parts = re.split(r"(\d+)", text.lower())
    return ([(0, int(p), "") if p.isdigit() else (1, 0, p) for p in parts if p], text)


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


# --------------------------------------------------------------------------- ColumnSpec
@dataclass(frozen=True)
class ColumnSpec:
    r"""The declared type, domain and kernel scale of one column.

    Parameters
    ----------
    name : str
        Column name in the table.
    kind : {"continuous", "integer", "categorical", "boolean", "datetime"}
        A datetime is continuous in days since 1970-01-01; a boolean is a categorical column with the
        categories ``(False, True)``: it reads ``True``/``False``, ``yes``/``no``, ``y``/``n``, ``t``/``f`` and
        ``1``/``0`` (any case), and decoded rows say ``True``/``False`` whatever the file wrote (the schema does
        not keep the file's labels). To keep labels such as yes/no, declare a categorical column with
        ``categories=["no", "yes"]`` instead.
    lower, upper : float, int or date, optional
        Declared bounds (required for continuous, integer and datetime columns; integers for an integer
        column, dates such as ``"2012-01-01"`` for a datetime column). Values outside are clipped.
    categories : sequence of str or int, optional
        Declared categories of a categorical column, in the order of the one-hot block (required;
        booleans have ``(False, True)`` and need none).
    missing : {"error", "impute", "category"}, default="error"
        ``"error"``: a missing value is refused (the message names the column and the number of rows);
        ``"impute"``: replaced by ``impute``; ``"category"``: a level of its own (categorical), or a
        present/missing block next to the numeric coordinate, which then holds ``impute``. Values that
        are not among the declared categories are treated as missing (so ``"error"`` refuses them).
    impute : float, int, date, str or bool, optional
        The declared replacement of a missing value: required with ``missing="impute"``; for a numeric
        column with ``missing="category"`` the value its numeric coordinate takes (default: the middle of
        the range, rounded to an integer or a whole day). Must lie in the declared domain.
    lengthscale : float, optional
        Kernel length scale :math:`\ell_j` of a numeric column *as a fraction of its declared range*
        (``0.25``: a quarter of ``upper - lower``). Default: the public rule of
        :func:`default_lengthscale`.
    similarity : float in (0, 1), optional
        Kernel value :math:`\kappa_j` of two different categories (categorical, boolean) or of a present
        and a missing value (numeric column with ``missing="category"``). Default:
        :func:`default_similarity`.
    decimals : int, optional
        Precision of a continuous column (decoded values are rounded to this many decimals; negative:
        tens, hundreds, ...) or of a datetime column in days (default: whole days). Integer, categorical
        and boolean columns need none.
    date_format : str, optional
        How the text cells of a datetime column are read (datetime columns only; default
        ``"ISO8601"``): ``"ISO8601"`` (``2020-04-03``, ``2020-04-03T10:30``, ``2020-04-03 10:30+02:00``, ...)
        or an explicit :func:`~datetime.datetime.strftime` format naming the year, month and day, such as
        ``"%d/%m/%Y"``. **Declared, never guessed**: each cell is parsed on its own with this format
        (:func:`parse_dates`), so how one row is read never depends on the other rows (a format guessed
        from the column would let one row flip the day/month reading of all the others). Cells with a
        time zone are converted to UTC.
    values : sequence of float, optional
        The declared **levels** of a continuous or integer column: the sorted, distinct values it can take
        (a survey's documented codes, e.g. ages coded ``17.5, 22, 27, ...``), at least two, inside the
        bounds (integers for an integer column). Public, like the bounds. The embedding stays numeric (the
        value on its scale, so order and distance are kept); the domain holds the numeric coordinate on
        the levels (solvers draw candidates on them and never move them off), decoded and resampled rows
        take only these values, and the default length scale is the median heuristic over the levels
        (:func:`default_lengthscale`). A private value that is not a level is **snapped** to the nearest
        level (ties: the lower one) after clipping to the bounds -- a fixed per-cell map like an integer's
        rounding, counted as ``rounded`` by :meth:`TableSchema.encode_report` (owner-only). ``impute``
        must be a level.

    Examples
    --------
    >>> ColumnSpec("year", "integer", lower=2007, upper=2009).bounds
    (2007.0, 2009.0)
    >>> ColumnSpec("date", "datetime", lower="2012-01-01", upper="2015-12-31").bounds
    (15340.0, 16800.0)
    >>> ColumnSpec("date", "datetime", lower="2012-01-01", upper="2015-12-31", date_format="%d/%m/%Y").date_format
    '%d/%m/%Y'
    >>> ColumnSpec("island", "categorical", categories=["Biscoe", "Dream"], missing="category").levels
    ('Biscoe', 'Dream', None)
    >>> ColumnSpec("age", "continuous", lower=17.5, upper=42, values=[17.5, 22, 27, 32, 37, 42]).value_levels
    (17.5, 22.0, 27.0, 32.0, 37.0, 42.0)
    >>> ColumnSpec("mass", "continuous", lower=10, upper=5)
    Traceback (most recent call last):
    ...
    ValueError: column "mass": lower must be below upper, got lower=10.0, upper=5.0.
    """

    name: str
    kind: str
    _: KW_ONLY
    lower: Any = None
    upper: Any = None
    categories: Any = None
    missing: str = "error"
    impute: Any = None
    lengthscale: float | None = None
    similarity: float | None = None
    decimals: int | None = None
    date_format: str | None = None
    values: Any = None

    def __post_init__(self):
        set_ = object.__setattr__
        if not isinstance(self.name, str) or not self.name.strip():
            raise ValueError(f"a column name must be a non-empty string, got {_short(self.name)}.")
        col = self.name
        if self.kind not in KINDS:
            raise ValueError(f"column {_q(col)}: kind must be one of {list(KINDS)}, got {_short(self.kind)}.")
        if self.missing not in MISSING_POLICIES:
            raise ValueError(f"column {_q(col)}: missing must be one of {list(MISSING_POLICIES)}, "
                             f"got {_short(self.missing)}.")
        if self.kind in _NUMERIC_KINDS:
            self._init_numeric(set_)
        else:
            self._init_discrete(set_)
        if self.kind == "datetime":
            set_(self, "date_format", _check_date_format(self.date_format, column=col))
        elif self.date_format is not None:
            raise ValueError(f"column {_q(col)} is {self.kind}: date_format applies to datetime columns only; leave it "
                             "out.")
        if self.lengthscale is not None:
            if self.kind not in _NUMERIC_KINDS:
                raise ValueError(f"column {_q(col)} is {self.kind}: it has no lengthscale; declare its "
                                 "similarity instead.")
            ls = _as_real(self.lengthscale, what=f"lengthscale of column {_q(col)}")
            lo, hi = _LENGTHSCALE_RANGE
            if not lo <= ls <= hi:
                raise ValueError(f"lengthscale of column {_q(col)} is a fraction of the declared range and must "
                                 f"lie in [{lo:g}, {hi:g}], got {_short(self.lengthscale)}.")
            set_(self, "lengthscale", ls)
        if self.similarity is not None:
            if self.kind in _NUMERIC_KINDS and self.missing != "category":
                raise ValueError(f"column {_q(col)} is {self.kind}: similarity only applies to its missing-value "
                                 "level (missing='category'); declare a lengthscale instead.")
            set_(self, "similarity", _check_similarity(self.similarity, column=col))

    # ---- construction helpers
    def _init_numeric(self, set_):
        col, kind = self.name, self.kind
        if self.categories is not None:
            raise ValueError(f"column {_q(col)} is {kind}: declare bounds (lower, upper), not categories.")
        if self.lower is None or self.upper is None:
            example = "'2012-01-01'" if kind == "datetime" else "0"
            raise ValueError(f"column {_q(col)} is {kind}: declare its bounds, e.g. lower={example}, from public "
                             "knowledge (a data dictionary, physical or legal limits), not from the private rows.")
        if kind == "datetime":
            lo_ts = _as_timestamp(self.lower, what=f"lower of column {_q(col)}")
            hi_ts = _as_timestamp(self.upper, what=f"upper of column {_q(col)}")
            if not lo_ts < hi_ts:
                raise ValueError(f"column {_q(col)}: lower must be before upper, got lower={_iso(lo_ts)}, "
                                 f"upper={_iso(hi_ts)}.")
            set_(self, "lower", _iso(lo_ts))
            set_(self, "upper", _iso(hi_ts))
        else:
            lo = _as_real(self.lower, what=f"lower of column {_q(col)}")
            hi = _as_real(self.upper, what=f"upper of column {_q(col)}")
            if not lo < hi:
                raise ValueError(f"column {_q(col)}: lower must be below upper, got lower={lo!r}, upper={hi!r}.")
            if max(abs(lo), abs(hi)) > 1e15:
                raise ValueError(f"column {_q(col)}: bounds beyond ±1e15 lose float precision; rescale the column.")
            if kind == "integer":
                if not (lo.is_integer() and hi.is_integer()):
                    raise ValueError(f"column {_q(col)} is integer: its bounds must be integers, got lower={lo!r}, "
                                     f"upper={hi!r}.")
                set_(self, "lower", int(lo))
                set_(self, "upper", int(hi))
            else:
                set_(self, "lower", lo)
                set_(self, "upper", hi)
        # impute
        if self.missing == "impute" and self.impute is None:
            raise ValueError(f"column {_q(col)} has missing='impute' but no impute value; declare one "
                             "(e.g. a typical value known publicly) or use missing='category'.")
        if self.missing == "error" and self.impute is not None:
            raise ValueError(f"column {_q(col)}: impute={_short(self.impute)} is only used with missing='impute' "
                             "or missing='category'.")
        if self.impute is not None:
            lo_v, hi_v = self.bounds
            if kind == "datetime":
                ts = _as_timestamp(self.impute, what=f"impute of column {_q(col)}")
                v = _days(ts)
                set_(self, "impute", _iso(ts))
            else:
                v = _as_real(self.impute, what=f"impute of column {_q(col)}")
                if kind == "integer":
                    if not v.is_integer():
                        raise ValueError(f"column {_q(col)} is integer: impute must be an integer, got {v!r}.")
                    set_(self, "impute", int(v))
                else:
                    set_(self, "impute", v)
            if not lo_v <= v <= hi_v:
                raise ValueError(f"column {_q(col)}: impute={_short(self.impute)} lies outside the declared bounds "
                                 f"[{self.lower}, {self.upper}].")
        # decimals
        if self.decimals is not None:
            if kind == "integer":
                raise ValueError(f"column {_q(col)} is integer: decimals does not apply (values are whole numbers).")
            d = self.decimals
            if isinstance(d, (bool, np.bool_)) or not isinstance(d, (numbers.Integral, np.integer)):
                raise ValueError(f"decimals of column {_q(col)} must be an integer, got {_short(d)}.")
            d = int(d)
            low = 0 if kind == "datetime" else -15
            if not low <= d <= _MAX_DECIMALS:
                raise ValueError(f"decimals of column {_q(col)} must lie in [{low}, {_MAX_DECIMALS}], got {d}.")
            set_(self, "decimals", d)
        # declared levels
        if self.values is not None:
            set_(self, "values", self._check_values())
            if self.impute is not None:
                v = float(self.impute)
                if not any(v == lv for lv in self.values):
                    raise ValueError(f"column {_q(col)}: impute={_short(self.impute)} is not one of its declared values "
                                     f"{list(self.values)}; declare a level.")

    def _check_values(self) -> tuple:
        col, kind = self.name, self.kind
        if kind == "datetime":
            raise ValueError(f"column {_q(col)} is datetime: declared values (levels) apply to continuous and integer "
                             "columns only; leave values out.")
        if isinstance(self.values, (str, bytes, Mapping)):
            raise ValueError(f"values of column {_q(col)} must be a list of numbers (its declared levels), got "
                             f"{_short(self.values)}.")
        try:
            raw = list(self.values)
        except TypeError:
            raise ValueError(f"values of column {_q(col)} must be a list of numbers (its declared levels), got "
                             f"{_short(self.values)}.") from None
        vals = []
        for v in raw:
            if isinstance(v, (bool, np.bool_)):
                raise ValueError(f"values of column {_q(col)} must be numbers, got {v!r}.")
            try:
                f = float(v)
            except (TypeError, ValueError):
                raise ValueError(f"values of column {_q(col)} must be numbers, got {_short(v)}.") from None
            if not math.isfinite(f):
                raise ValueError(f"values of column {_q(col)} must be finite numbers, got {v!r}; remove it (a missing "
                                 "value is declared with missing=, not as a level).")
            vals.append(f)
        if len(vals) < 2:
            raise ValueError(f"column {_q(col)} declares {len(vals)} value(s): declare at least two levels, or leave "
                             "values out.")
        unsorted = [(a, b) for a, b in zip(vals, vals[1:]) if not a < b]
        if unsorted:
            a, b = unsorted[0]
            raise ValueError(f"values of column {_q(col)} must be sorted and distinct (increasing), got {b:g} after "
                             f"{a:g}; sort them and list each once.")
        lo, hi = self.bounds
        outside = [v for v in vals if not lo <= v <= hi]
        if outside:
            raise ValueError(f"values {[float(v) for v in outside]} of column {_q(col)} lie outside its declared bounds "
                             f"[{self.lower}, {self.upper}]; widen the bounds or drop those values.")
        if kind == "integer":
            frac = [v for v in vals if not v.is_integer()]
            if frac:
                raise ValueError(f"column {_q(col)} is integer: its values must be whole numbers, got {frac}; "
                                 "declare it continuous.")
            return tuple(int(v) for v in vals)
        return tuple(vals)

    def _init_discrete(self, set_):
        col, kind = self.name, self.kind
        if self.lower is not None or self.upper is not None:
            raise ValueError(f"column {_q(col)} is {kind}: declare categories, not bounds.")
        if self.decimals is not None:
            raise ValueError(f"column {_q(col)} is {kind}: decimals does not apply.")
        if self.values is not None:
            raise ValueError(f"column {_q(col)} is {kind}: declared values (levels) apply to continuous and integer "
                             "columns; declare categories instead.")
        if kind == "boolean":
            if self.categories is not None and tuple(self.categories) != (False, True):
                raise ValueError(f"column {_q(col)} is boolean: its categories are (False, True); declare a "
                                 "categorical column for other labels.")
            cats: tuple = (False, True)
        else:
            if self.categories is None or isinstance(self.categories, (str, bytes)):
                raise ValueError(f"column {_q(col)} is categorical: declare its categories as a list, e.g. "
                                 "categories=['a', 'b'], from public knowledge (a code book), not from the private rows.")
            cats = tuple(_check_label(c, column=col) for c in self.categories)
            seen: dict = {}
            for c in cats:
                key = (type(c), c)
                if key in seen or str(c) in {str(s) for s in seen.values()}:
                    raise ValueError(f"column {_q(col)}: category {_short(c)} is declared twice; list each once.")
                seen[key] = c
        n_levels = len(cats) + (self.missing == "category")
        if n_levels < 2:
            raise ValueError(f"column {_q(col)} has a single level ({_short(cats[0]) if cats else 'none'}): a "
                             "constant column carries no information; declare more categories or drop it.")
        set_(self, "categories", cats)
        if self.missing == "impute":
            if self.impute is None:
                raise ValueError(f"column {_q(col)} has missing='impute' but no impute value; declare one of its "
                                 "categories, or use missing='category'.")
            imp = _plain(self.impute)
            if kind == "boolean":
                if not isinstance(imp, bool):
                    raise ValueError(f"column {_q(col)} is boolean: impute must be True or False, got {_short(imp)}.")
            elif imp not in cats or isinstance(imp, bool):
                raise ValueError(f"column {_q(col)}: impute={_short(imp)} is not one of its declared categories "
                                 f"{list(cats)}.")
            set_(self, "impute", imp)
        elif self.impute is not None:
            raise ValueError(f"column {_q(col)}: impute={_short(self.impute)} is only used with missing='impute'.")

    # ---- derived, public values
    @property
    def is_numeric(self) -> bool:
        """True for continuous, integer and datetime columns (one numeric coordinate)."""
        return self.kind in _NUMERIC_KINDS

    @property
    def bounds(self) -> tuple[float, float]:
        """Declared bounds as floats (datetime: days since 1970-01-01). Numeric columns only."""
        if not self.is_numeric:
            raise ValueError(f"column {_q(self.name)} is {self.kind}: it has categories, not bounds.")
        if self.kind == "datetime":
            return (_days(pd.Timestamp(self.lower)), _days(pd.Timestamp(self.upper)))
        return (float(self.lower), float(self.upper))

    @property
    def levels(self) -> tuple:
        """Levels of a categorical/boolean column: the categories, then ``None`` for the missing level."""
        if self.is_numeric:
            return (False, True) if self.missing == "category" else ()
        return tuple(self.categories) + ((None,) if self.missing == "category" else ())

    @property
    def value_levels(self) -> tuple:
        """Declared levels (``values``) of a continuous or integer column as floats; ``()`` when none are declared."""
        return tuple(float(v) for v in self.values) if self.values is not None else ()

    @property
    def impute_value(self):
        """The value that replaces a missing cell (numeric: as a float, datetime in days), or None."""
        if self.is_numeric:
            if self.missing == "error":
                return None
            lo, hi = self.bounds
            if self.impute is None:
                mid = 0.5 * (lo + hi)
                if self.values is not None:                      # the level nearest the middle (ties: lower)
                    lv = np.asarray(self.value_levels)
                    return float(lv[np.argmin(np.abs(lv - mid))])
                return float(math.floor(mid)) if self.kind in ("integer", "datetime") else mid
            return _days(pd.Timestamp(self.impute)) if self.kind == "datetime" else float(self.impute)
        return self.impute if self.missing == "impute" else None

    def to_dict(self) -> dict:
        """JSON-able form (declared values only; ``None`` fields and the default ``date_format`` left out)."""
        d: dict[str, Any] = {"name": self.name, "kind": self.kind}
        for key in ("lower", "upper"):
            if getattr(self, key) is not None:
                d[key] = getattr(self, key)
        if self.kind == "categorical":
            d["categories"] = list(self.categories)
        d["missing"] = self.missing
        for key in ("impute", "lengthscale", "similarity", "decimals"):
            if getattr(self, key) is not None:
                d[key] = getattr(self, key)
        if self.kind == "datetime" and self.date_format != DEFAULT_DATE_FORMAT:
            d["date_format"] = self.date_format
        if self.values is not None:
            d["values"] = list(self.values)
        return d

    @classmethod
    def from_dict(cls, d: Mapping) -> "ColumnSpec":
        """Inverse of :meth:`to_dict` (every field is validated again).

        Parameters
        ----------
        d : mapping
            With ``name`` and ``kind`` and any of the optional fields.

        Returns
        -------
        ColumnSpec
        """
        if not isinstance(d, Mapping):
            raise ValueError(f"a column spec is a dict, got {_short(d)}.")
        unknown = sorted(set(d) - set(_SPEC_FIELDS))
        if unknown:
            raise ValueError(f"column spec {_short(d.get('name'))} has unknown field(s) {unknown}; known fields: "
                             f"{list(_SPEC_FIELDS)}.")
        if "name" not in d or "kind" not in d:
            raise ValueError(f"a column spec needs 'name' and 'kind', got the fields {sorted(d)}.")
        kwargs = {k: d[k] for k in _SPEC_FIELDS[2:] if k in d}
        return cls(d["name"], d["kind"], **kwargs)


# --------------------------------------------------------------------------- public default scales
def _n_levels_of_integer(spec: ColumnSpec) -> int:
    lo, hi = spec.bounds
    return int(hi - lo) + 1


def default_lengthscale(spec: ColumnSpec, *, n_columns: int, uniform_sq_distance: float = 1.0) -> float:
    r"""The public default length scale of a numeric column, as a fraction of its declared range.

    Chosen so that the column contributes :math:`s/p` (``uniform_sq_distance / n_columns``) to the expected
    squared embedded distance of two independent uniform draws from the declared domain (module
    docstring): :math:`\ell = \sqrt{p/(6s)}` for continuous and datetime columns,
    :math:`\ell = \sqrt{p(n+1)/(6s(n-1))}` for an integer column with :math:`n` levels, and for a column
    with declared levels :math:`v_1 < \dots < v_n` (``values``) :math:`\ell = \sqrt{2p\,\mathrm{Var}(v)/s}/(hi - lo)`,
    :math:`\mathrm{Var}(v)` the variance of a uniform draw among the levels (the integer rule when the levels
    are every integer of the bounds).

    Parameters
    ----------
    spec : ColumnSpec
        A continuous, integer or datetime column.
    n_columns : int
        Number :math:`p` of columns of the schema.
    uniform_sq_distance : float, default=1.0
        Target :math:`s` of the expected squared distance.

    Returns
    -------
    float

    Examples
    --------
    >>> round(default_lengthscale(ColumnSpec("x", "continuous", lower=0, upper=1), n_columns=6), 12)
    1.0
    >>> a = default_lengthscale(ColumnSpec("k", "integer", lower=0, upper=4), n_columns=3)
    >>> b = default_lengthscale(ColumnSpec("k", "integer", lower=0, upper=4, values=[0, 1, 2, 3, 4]), n_columns=3)
    >>> abs(a - b) < 1e-12
    True
    """
    if not isinstance(spec, ColumnSpec) or not spec.is_numeric:
        raise ValueError(f"default_lengthscale needs a continuous, integer or datetime ColumnSpec, got {_short(spec)}.")
    p = check_positive_int(n_columns, name="n_columns")
    s = check_positive_float(uniform_sq_distance, name="uniform_sq_distance")
    if spec.values is not None:
        lo, hi = spec.bounds
        var = float(np.var(np.asarray(spec.value_levels)))
        return math.sqrt(2.0 * p * var / s) / (hi - lo)
    if spec.kind == "integer":
        n = _n_levels_of_integer(spec)
        return math.sqrt(p * (n + 1) / (6.0 * s * (n - 1)))
    return math.sqrt(p / (6.0 * s))


def default_similarity(spec: ColumnSpec, *, n_columns: int, uniform_sq_distance: float = 1.0) -> float:
    r"""The public default similarity :math:`\kappa` of two different levels of a column.

    Categorical and boolean columns with :math:`c` levels (the missing level included):
    :math:`\kappa = \exp(-s/(2p(1 - 1/c)))`, so that the column contributes :math:`s/p` to the expected
    squared embedded distance of two uniform draws; the present/missing block of a numeric column:
    :math:`\kappa = \exp(-s/p)` (a two-level column).

    Parameters
    ----------
    spec : ColumnSpec
        A categorical or boolean column, or a numeric one with ``missing="category"``.
    n_columns : int
        Number :math:`p` of columns of the schema.
    uniform_sq_distance : float, default=1.0
        Target :math:`s` of the expected squared distance.

    Returns
    -------
    float

    Examples
    --------
    >>> import math
    >>> k = default_similarity(ColumnSpec("b", "boolean"), n_columns=4)
    >>> math.isclose(k, math.exp(-1 / 4))
    True
    """
    if not isinstance(spec, ColumnSpec):
        raise ValueError(f"default_similarity needs a ColumnSpec, got {_short(spec)}.")
    p = check_positive_int(n_columns, name="n_columns")
    s = check_positive_float(uniform_sq_distance, name="uniform_sq_distance")
    if spec.is_numeric:
        if spec.missing != "category":
            raise ValueError(f"column {_q(spec.name)} is {spec.kind} without a missing level: it has no similarity.")
        c = 2
    else:
        c = len(spec.levels)
    return math.exp(-s / (2.0 * p * (1.0 - 1.0 / c)))


# --------------------------------------------------------------------------- layout of the embedding
@dataclass(frozen=True)
class _Layout:
    spec: ColumnSpec
    start: int
    stop: int
    numeric: int | None            # index of the numeric coordinate
    group: slice | None            # one-hot block (levels of a categorical; present/missing of a numeric)
    lo: float = 0.0
    hi: float = 1.0
    lengthscale: float | None = None   # fraction of the range
    scale: float = 1.0             # a = sqrt(-ln kappa) of the one-hot block

    @property
    def width(self) -> float:
        """Embedded width of the numeric coordinate: 1 / lengthscale."""
        return 1.0 / self.lengthscale if self.lengthscale else 0.0


# --------------------------------------------------------------------------- EmbeddedDomain
@dataclass(frozen=True, eq=False)
class EmbeddedDomain:
    r"""The set of embedded rows a schema allows, with the operations a solver needs.

    Built by :attr:`TableSchema.domain`; all values are in embedded coordinates (public: they follow
    from the schema alone). The domain is the image of the declared domain under the embedding: numeric
    coordinates in :math:`[0, 1/\ell_j]` (integers on their levels :math:`k/((hi-lo)\ell_j)`), every one-hot
    block at one of its vertices :math:`a e_u`, and a numeric coordinate whose present/missing block says
    "missing" at its imputation value.

    Parameters
    ----------
    lower, upper : ndarray (D,)
        Per-coordinate bounds (a one-hot coordinate lies in :math:`[0, a]`).
    fixed : ndarray (D,) of bool
        Coordinates a continuous solver must not move: integer coordinates and one-hot coordinates.
    blocks : dict
        Column name -> slice of its coordinates (numeric coordinate first, then its present/missing
        block; or the one-hot block of a categorical column).
    integer_levels : dict
        Coordinate index -> ``(step, n_levels)`` of each integer column without declared ``values``.
    value_levels : dict
        Coordinate index -> sorted array of the embedded levels of each column with declared ``values``
        (fixed coordinates: sampled among, and projected onto, the levels).
    onehot_groups : tuple
        ``(slice, a)`` of every one-hot block (categorical levels and present/missing blocks).
    missing_links : tuple
        ``(missing_coordinate, numeric_coordinate, imputed_value)`` of every numeric column with
        ``missing="category"``: where the block's "missing" vertex is chosen, the numeric coordinate
        holds the embedded imputation value.

    Examples
    --------
    >>> import numpy as np
    >>> schema = TableSchema([ColumnSpec("x", "continuous", lower=0, upper=10, lengthscale=0.5),
    ...                       ColumnSpec("c", "categorical", categories=["a", "b"], similarity=0.5)])
    >>> dom = schema.domain
    >>> dom.lower.tolist(), dom.upper.tolist(), dom.fixed.tolist()
    ([0.0, 0.0, 0.0], [2.0, 0.83255..., 0.83255...], [False, True, True])
    >>> Z = dom.sample(5, np.random.default_rng(0))
    >>> bool(dom.contains(Z).all())
    True
    >>> lo, hi = dom.bounds_for(Z)
    >>> bool((lo[:, 1:] == hi[:, 1:]).all() and (lo[:, 0] < hi[:, 0]).all())
    True
    """

    lower: np.ndarray
    upper: np.ndarray
    fixed: np.ndarray
    blocks: dict
    integer_levels: dict = field(default_factory=dict)
    value_levels: dict = field(default_factory=dict)
    onehot_groups: tuple = ()
    missing_links: tuple = ()

    def __post_init__(self):
        lo = np.asarray(self.lower, dtype=np.float64)
        hi = np.asarray(self.upper, dtype=np.float64)
        fx = np.asarray(self.fixed, dtype=bool)
        if lo.ndim != 1 or lo.shape != hi.shape or lo.shape != fx.shape:
            raise ValueError("lower, upper and fixed must be 1-D arrays of one length.")
        for name, arr in (("lower", lo), ("upper", hi), ("fixed", fx)):
            arr = arr.copy()
            arr.setflags(write=False)
            object.__setattr__(self, name, arr)

    @property
    def dim(self) -> int:
        """Number :math:`D` of embedded coordinates."""
        return int(self.lower.shape[0])

    @cached_property
    def _continuous(self) -> np.ndarray:
        return np.flatnonzero(~self.fixed)

    def _check_Z(self, Z, name: str = "Z") -> np.ndarray:
        return check_array(Z, name=name, n_features=self.dim)

    def sample(self, n, rng) -> np.ndarray:
        """``n`` points drawn uniformly from the declared domain, embedded.

        Continuous and datetime coordinates are uniform in their box, integers uniform over their
        levels, categorical blocks uniform over their levels (the missing level included, when
        declared); a numeric column drawn as "missing" sits at its imputation value.

        Parameters
        ----------
        n : int
            Number of points (>= 1).
        rng : numpy.random.Generator or int
            Public randomness (a generator, or a seed for one).

        Returns
        -------
        ndarray (n, D)
        """
        n = check_positive_int(n, name="n")
        gen = rng if isinstance(rng, np.random.Generator) else check_random_state(rng)[0]
        Z = np.zeros((n, self.dim))
        cont = self._continuous
        if cont.size:
            Z[:, cont] = gen.uniform(self.lower[cont], self.upper[cont], size=(n, cont.size))
        for j, (step, n_levels) in self.integer_levels.items():
            Z[:, j] = gen.integers(0, n_levels, size=n) * step
        for j, lv in self.value_levels.items():
            Z[:, j] = lv[gen.integers(0, lv.size, size=n)]
        rows = np.arange(n)
        for sl, a in self.onehot_groups:
            width = sl.stop - sl.start
            Z[rows, sl.start + gen.integers(0, width, size=n)] = a
        self._apply_links(Z)
        return Z

    def _apply_links(self, Z: np.ndarray) -> None:
        for miss, num, value in self.missing_links:
            Z[Z[:, miss] > Z[:, miss - 1], num] = value

    def project(self, Z) -> np.ndarray:
        """The nearest point of the domain, coordinate block by coordinate block.

        Continuous coordinates are clipped to their bounds, integer coordinates rounded to the nearest
        level, coordinates with declared levels moved to the nearest one (ties: the lower), every one-hot block replaced by its nearest vertex :math:`a e_u` (:math:`u` = the largest
        coordinate of the block, since :math:`\\|z - a e_u\\|^2 = \\|z\\|^2 - 2a z_u + a^2`), and a
        numeric column whose block says "missing" is set to its imputation value.

        Parameters
        ----------
        Z : array (M, D)
            Embedded points.

        Returns
        -------
        ndarray (M, D)
            A new array in the domain.
        """
        P = self._check_Z(Z).copy()
        cont = self._continuous
        P[:, cont] = np.clip(P[:, cont], self.lower[cont], self.upper[cont])
        for j, (step, n_levels) in self.integer_levels.items():
            P[:, j] = np.clip(np.rint(P[:, j] / step), 0, n_levels - 1) * step
        for j, lv in self.value_levels.items():
            P[:, j] = lv[_nearest_level(lv, P[:, j])]
        rows = np.arange(P.shape[0])
        for sl, a in self.onehot_groups:
            k = np.argmax(P[:, sl], axis=1)
            P[:, sl] = 0.0
            P[rows, sl.start + k] = a
        self._apply_links(P)
        return P

    def contains(self, Z, *, atol: float = 1e-9) -> np.ndarray:
        """Which points lie in the domain (up to ``atol`` per coordinate).

        Parameters
        ----------
        Z : array (M, D)
            Embedded points.
        atol : float, default=1e-9
            Tolerance of every comparison.

        Returns
        -------
        ndarray (M,) of bool
        """
        Z = self._check_Z(Z)
        ok = np.all((Z >= self.lower - atol) & (Z <= self.upper + atol), axis=1)
        for j, (step, _) in self.integer_levels.items():
            ok &= np.abs(Z[:, j] - np.rint(Z[:, j] / step) * step) <= atol
        for j, lv in self.value_levels.items():
            ok &= np.abs(Z[:, j] - lv[_nearest_level(lv, Z[:, j])]) <= atol
        for sl, a in self.onehot_groups:
            B = Z[:, sl]
            at_a = np.abs(B - a) <= atol
            at_0 = np.abs(B) <= atol
            ok &= (at_a.sum(axis=1) == 1) & ((at_a | at_0).all(axis=1))
        for miss, num, value in self.missing_links:
            is_missing = Z[:, miss] > Z[:, miss - 1]
            ok &= ~is_missing | (np.abs(Z[:, num] - value) <= atol)
        return ok

    def bounds_for(self, Z) -> tuple[np.ndarray, np.ndarray]:
        """Per-point box constraints for a continuous solver (e.g. L-BFGS-B's ``bounds``).

        Free continuous coordinates get the domain's box; fixed coordinates (integers, declared levels, one-hot blocks)
        get ``lower = upper = `` their current value, so the solver never moves them; so does the
        numeric coordinate of a column whose present/missing block says "missing". Project ``Z`` onto
        the domain first (:meth:`project`).

        Parameters
        ----------
        Z : array (M, D)
            Current (projected) points.

        Returns
        -------
        lo, hi : ndarray (M, D)
        """
        Z = self._check_Z(Z)
        M = Z.shape[0]
        lo = np.broadcast_to(self.lower, (M, self.dim)).copy()
        hi = np.broadcast_to(self.upper, (M, self.dim)).copy()
        lo[:, self.fixed] = Z[:, self.fixed]
        hi[:, self.fixed] = Z[:, self.fixed]
        for miss, num, _ in self.missing_links:
            r = Z[:, miss] > Z[:, miss - 1]
            lo[r, num] = Z[r, num]
            hi[r, num] = Z[r, num]
        return lo, hi


# --------------------------------------------------------------------------- EncodeReport
@dataclass(frozen=True)
class EncodeReport:
    """What the declared preprocessing did to a table: **owner-only** information.

    The counts are statistics of the private rows. Show them to the data owner (to check the schema);
    never publish them or put them into a release's metadata.

    Parameters
    ----------
    n_rows : int
        Rows encoded.
    counts : dict
        Column name -> ``{"missing": ..., "unknown": ..., "clipped_low": ..., "clipped_high": ...,
        "rounded": ...}``: missing cells, values that are not a declared category (treated as missing),
        numbers clipped up to ``lower`` / down to ``upper``, and non-integers rounded in an integer
        column.
    ignored_columns : tuple of str
        Columns of the table that the schema does not declare (not used).
    """

    n_rows: int
    counts: dict
    ignored_columns: tuple = ()

    owner_only = True

    @property
    def n_changed(self) -> int:
        """Number of cells the preprocessing changed (imputed, mapped to the missing level, clipped, rounded)."""
        return int(sum(sum(c.values()) for c in self.counts.values()))

    def to_frame(self) -> pd.DataFrame:
        """One row per column, one column per count (owner-only)."""
        keys = ("missing", "unknown", "clipped_low", "clipped_high", "rounded")
        return pd.DataFrame([{"column": name, **{k: int(c.get(k, 0)) for k in keys}}
                             for name, c in self.counts.items()]).set_index("column")

    def lines(self) -> list[str]:
        """Plain-language lines for the owner, one per column with changes."""
        out = []
        words = {"missing": "missing", "unknown": "not among the declared categories",
                 "clipped_low": "below the declared lower bound (clipped)",
                 "clipped_high": "above the declared upper bound (clipped)", "rounded": "not whole numbers (rounded)"}
        for name, c in self.counts.items():
            parts = [f"{int(v)} {words[k]}" for k, v in c.items() if v]
            if parts:
                out.append(f"{_q(name)}: " + ", ".join(parts) + f" (of {self.n_rows} rows).")
        if any(c.get("missing") for c in self.counts.values()):
            out.append(_MISSING_MARKERS_NOTE)
        if self.ignored_columns:
            out.append(f"not in the schema (ignored): {', '.join(map(_q, self.ignored_columns))}.")
        return out

    def __repr__(self) -> str:
        return (f"EncodeReport(owner-only: n_rows={self.n_rows}, cells changed={self.n_changed}, "
                f"ignored_columns={list(self.ignored_columns)})")


# --------------------------------------------------------------------------- parsing the cells of a column
def _row_label(series: pd.Series, pos: int) -> str:
    return f"row {_short(series.index[pos])}"


def _numeric_cells(series: pd.Series, spec: ColumnSpec) -> tuple[np.ndarray, np.ndarray]:
    """float values (NaN where missing) and the missing mask of a continuous/integer column."""
    col = spec.name
    if pd.api.types.is_bool_dtype(series):
        raise ValueError(f"column {_q(col)} holds True/False values but is declared {spec.kind}; declare it "
                         "kind='boolean'.")
    if pd.api.types.is_datetime64_any_dtype(series):
        raise ValueError(f"column {_q(col)} holds dates but is declared {spec.kind}; declare it kind='datetime'.")
    if pd.api.types.is_timedelta64_dtype(series) or pd.api.types.is_complex_dtype(series):
        raise ValueError(f"column {_q(col)} has dtype {series.dtype}, which a schema cannot take; convert it to "
                         "real numbers (e.g. a duration in days).")
    if pd.api.types.is_numeric_dtype(series):
        values = series.to_numpy(dtype=np.float64, na_value=np.nan)
        return values, np.isnan(values)
    obj = series.astype(object)
    text = obj.map(lambda v: v.strip() if isinstance(v, str) else v)
    missing = (obj.isna() | text.map(lambda v: isinstance(v, str) and v.lower() in _MISSING_TOKENS)).to_numpy()
    values = pd.to_numeric(text.where(~missing, None), errors="coerce").to_numpy(dtype=np.float64, na_value=np.nan)
    bad = np.isnan(values) & ~missing
    if bad.any():
        pos = int(np.argmax(bad))
        raise ValueError(f"column {_q(col)} is declared {spec.kind} but holds text that is not a number: "
                         f"{_short(obj.iloc[pos])} in {_row_label(series, pos)} ({int(bad.sum())} cell(s)); fix "
                         "those cells, or declare the column categorical.")
    return values, missing


def _text_cells(series: pd.Series) -> tuple[pd.Series, np.ndarray]:
    """Cells as objects (text stripped) and the mask of missing ones (None/NaN/NaT or a missing token)."""
    obj = series.astype(object)
    text = obj.map(lambda v: v.strip() if isinstance(v, str) else v)
    missing = (obj.isna() | text.map(lambda v: isinstance(v, str) and v.lower() in _MISSING_TOKENS)).to_numpy(dtype=bool)
    return text, missing


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


def _datetime_cells(series: pd.Series, spec: ColumnSpec) -> tuple[np.ndarray, np.ndarray]:
    """Days since 1970-01-01 (NaN where missing) and the missing mask of a datetime column (cell by cell)."""
    col = spec.name
    if (pd.api.types.is_bool_dtype(series) or pd.api.types.is_numeric_dtype(series)) \
            and not pd.api.types.is_datetime64_any_dtype(series):
        raise ValueError(f"column {_q(col)} is declared datetime but holds numbers (dtype {series.dtype}); "
                         "convert them to dates (dpkme.schema.parse_dates) or declare the column continuous/integer.")
    ts, missing, bad = _parse_date_cells(series, spec.date_format, column=col)
    if bad.any():
        pos = int(np.argmax(bad))
        raise ValueError(f"column {_q(col)} is declared datetime but {_short(series.astype(object).iloc[pos])} in "
                         f"{_row_label(series, pos)} is not a date in the declared format {spec.date_format!r} "
                         f"({int(bad.sum())} cell(s)); fix those cells, declare the column's "
                         f"{_date_format_hint(series.astype(object).iloc[pos], spec.date_format)}, or declare the "
                         "column categorical.")
    delta = (ts - _EPOCH) / _DAY
    values = pd.to_numeric(delta, errors="coerce").to_numpy(dtype=np.float64, na_value=np.nan)
    return values, missing


def _normalise_label(v):
    v = _plain(v)
    if isinstance(v, str):
        return v.strip()
    if isinstance(v, float) and v.is_integer():
        return int(v)
    return v


def _label_key(v):
    """A cell's canonical, type-tagged key: ``True`` and ``1`` (equal and hash-equal in Python) stay apart."""
    v = _normalise_label(v)
    try:
        hash(v)
    except TypeError:
        return ("unhashable", repr(v)), v
    return (type(v).__name__, v), v


def _level_index(v, spec: ColumnSpec, exact: dict, by_text: dict) -> int:
    """Level of one (normalised) cell: ``>= 0`` a declared category, ``-1`` missing, ``-2`` unknown."""
    if spec.kind == "boolean":
        if isinstance(v, bool):
            return int(v)
        if isinstance(v, int) and v in (0, 1):
            return v
        if isinstance(v, str) and v.lower() in _TRUE_TOKENS:
            return 1
        if isinstance(v, str) and v.lower() in _FALSE_TOKENS:
            return 0
        return -1 if (isinstance(v, str) and v.lower() in _MISSING_TOKENS) else -2
    if isinstance(v, bool):
        idx = -2
    else:
        try:
            idx = exact.get((type(v), v), -2)
        except TypeError:                                # unhashable cell
            idx = -2
    if idx == -2:
        idx = by_text.get(str(v), -2)
    if idx == -2 and isinstance(v, str) and v == "":
        idx = -1
    return idx


def _level_codes(series: pd.Series, spec: ColumnSpec) -> tuple[np.ndarray, dict]:
    """Level index per row: ``>= 0`` a declared category, ``-1`` missing, ``-2`` unknown; and unknown examples.

    Each cell is mapped on its own, through a type-tagged key (no ``pandas.factorize``, which merges
    ``True`` with ``1`` and ``1.0`` and lets the first of them decide how all are read).
    """
    cats = spec.categories
    exact = {(type(c), c): i for i, c in enumerate(cats)}
    by_text = {str(c): i for i, c in enumerate(cats)}
    levels: dict = {}
    unknown: dict = {}
    out = np.empty(len(series), dtype=np.int64)
    for pos, raw in enumerate(series.astype(object).tolist()):
        if _is_missing_scalar(raw):
            out[pos] = -1
            continue
        key, v = _label_key(raw)
        idx = levels.get(key)
        if idx is None:
            idx = levels[key] = _level_index(v, spec, exact, by_text)
        if idx == -2:
            shown = _plain(raw)
            unknown[key] = (shown, unknown.get(key, (shown, 0))[1] + 1)
        out[pos] = idx
    return out, dict(unknown.values())


# --------------------------------------------------------------------------- data dependence
def _applicable_fields(spec: ColumnSpec) -> frozenset:
    """The fields of ``spec`` that carry a value for its kind and missing policy (those that can be data)."""
    out = {"kind", "missing"}
    if spec.is_numeric:
        out |= {"lower", "upper", "lengthscale"}
        if spec.values is not None:
            out.add("values")
        if spec.kind != "integer":
            out.add("decimals")
        if spec.kind == "datetime":
            out.add("date_format")
        if spec.missing != "error":
            out.add("impute")
        if spec.missing == "category":
            out.add("similarity")
    else:
        out.add("similarity")
        if spec.kind == "categorical":
            out.add("categories")
        if spec.missing == "impute":
            out.add("impute")
    return frozenset(out)


def _field_names(value, *, what: str) -> set:
    if isinstance(value, (str, bytes)) or isinstance(value, Mapping):
        raise ValueError(f"{what} must be a collection of field names such as ['lower', 'upper'], got {_short(value)}.")
    try:
        names = {str(f) for f in value}
    except TypeError:
        raise ValueError(f"{what} must be a collection of field names such as ['lower', 'upper'], got "
                         f"{_short(value)}.") from None
    unknown = sorted(names - set(DATA_FIELDS))
    if unknown:
        raise ValueError(f"{what} names unknown field(s) {unknown}; the fields of a column spec are {list(DATA_FIELDS)}.")
    return names


class DataDependence(tuple):
    r"""Which declared values of a schema were read from the private rows: column names, with their fields.

    A tuple of the column names (in schema order) -- so ``bool(...)``, ``name in ...``, ``list(...)`` and
    ``== ()`` answer "is anything data-dependent" as before -- whose :attr:`fields` maps every name to the
    frozenset of :class:`ColumnSpec` fields (:data:`DATA_FIELDS`: ``"kind"``, ``"lower"``, ``"upper"``,
    ``"categories"``, ``"missing"``, ``"decimals"``, ...) that were read from the private rows. Built by
    :class:`TableSchema` from its ``data_dependent`` argument; two instances are equal when their names
    and fields are.

    Parameters
    ----------
    fields : mapping, optional
        Column name -> iterable of field names (already validated against the schema).

    Examples
    --------
    >>> d = DataDependence({"age": {"lower", "upper"}})
    >>> d == ("age",), "age" in d, sorted(d.fields["age"])
    (True, True, ['lower', 'upper'])
    """

    def __new__(cls, fields: Mapping | None = None):
        fields = {str(k): frozenset(v) for k, v in dict(fields or {}).items() if v}
        obj = super().__new__(cls, tuple(fields))
        obj._fields = MappingProxyType(fields)
        return obj

    @property
    def fields(self) -> Mapping:
        """Column name -> frozenset of the fields read from the private rows (read-only)."""
        return self._fields

    def __eq__(self, other):
        if isinstance(other, DataDependence):
            return tuple(self) == tuple(other) and dict(self._fields) == dict(other._fields)
        return tuple.__eq__(self, other)

    def __ne__(self, other):
        eq = self.__eq__(other)
        return eq if eq is NotImplemented else not eq

    def __hash__(self):
        return hash((tuple(self), frozenset(self._fields.items())))

    def __reduce__(self):
        return (DataDependence, ({k: set(v) for k, v in self._fields.items()},))

    def __repr__(self) -> str:
        return "DataDependence({" + ", ".join(f"{k!r}: {sorted(v)}" for k, v in self._fields.items()) + "})"


# --------------------------------------------------------------------------- TableSchema
@dataclass(frozen=True)
class TableSchema:
    r"""A declared schema: ordered column specs, their embedding, kernel scales and domain.

    See the module docstring for the embedding, the kernel and the public default scales.

    Parameters
    ----------
    columns : sequence of ColumnSpec
        The declared columns, in the order of the embedding (at least one; names unique).
    data_dependent : sequence of str or mapping, default=()
        Which declared values were read from the **private** rows (set by :func:`suggest_schema`
        without public rows): a mapping column name -> the fields read from them (e.g.
        ``{"age": ["kind", "lower", "upper"]}``), or a sequence of column names, each meaning *every*
        field of that column (:data:`DATA_FIELDS` that apply to its kind). Stored as a
        :class:`DataDependence`: a tuple of the names (as before) with the fields in ``.fields``
        (:attr:`data_dependent_fields`). A release that uses such a schema is not differentially
        private; :meth:`redeclare` and :meth:`replace_column` clear exactly the fields they re-declare.
    uniform_sq_distance : float, default=1.0
        Target :math:`s` of the public default scales (:func:`default_lengthscale`,
        :func:`default_similarity`): the expected squared embedded distance of two uniform draws from
        the declared domain. Smaller values give a finer kernel.

    Examples
    --------
    >>> schema = TableSchema([ColumnSpec("x", "continuous", lower=0, upper=100),
    ...                       ColumnSpec("ok", "boolean", missing="category")])
    >>> schema.names, schema.dim
    (('x', 'ok'), 4)
    >>> round(schema.lengthscale("x"), 4), round(schema.similarity("ok"), 4)
    (0.5774, 0.6873)
    >>> flagged = TableSchema(schema.columns, data_dependent={"x": ["lower", "upper"]})
    >>> flagged.data_dependent, flagged.data_dependent_fields == {"x": {"lower", "upper"}}
    (DataDependence({'x': ['lower', 'upper']}), True)
    """

    columns: tuple
    _: KW_ONLY
    data_dependent: tuple = ()
    uniform_sq_distance: float = 1.0

    def __post_init__(self):
        if isinstance(self.columns, ColumnSpec) or isinstance(self.columns, (str, bytes, Mapping)):
            raise ValueError("columns must be a sequence of ColumnSpec objects.")
        cols = tuple(self.columns)
        if not cols:
            raise ValueError("a schema needs at least one column.")
        for c in cols:
            if not isinstance(c, ColumnSpec):
                raise ValueError(f"columns must be ColumnSpec objects (use TableSchema.from_dict for dicts), got "
                                 f"{_short(c)}.")
        names = [c.name for c in cols]
        dup = sorted({n for n in names if names.count(n) > 1})
        if dup:
            raise ValueError(f"column(s) {dup} are declared more than once; declare each column once.")
        object.__setattr__(self, "columns", cols)
        object.__setattr__(self, "data_dependent", self._check_dependence(self.data_dependent, cols))
        object.__setattr__(self, "uniform_sq_distance",
                           check_positive_float(self.uniform_sq_distance, name="uniform_sq_distance"))

    @staticmethod
    def _check_dependence(dd, cols) -> DataDependence:
        specs = {c.name: c for c in cols}
        if isinstance(dd, (str, bytes)):
            raise ValueError("data_dependent must be a sequence of column names (or a mapping column -> fields), "
                             "not one string.")
        if isinstance(dd, DataDependence):
            raw = dict(dd.fields)
        elif isinstance(dd, Mapping):
            raw = {str(k): v for k, v in dd.items()}
        elif dd is None:
            raw = {}
        else:
            try:
                raw = {str(n): None for n in dd}
            except TypeError:
                raise ValueError(f"data_dependent must be a sequence of column names or a mapping column -> fields, "
                                 f"got {_short(dd)}.") from None
        stray = [n for n in raw if n not in specs]
        if stray:
            raise ValueError(f"data_dependent names column(s) {stray} that the schema does not declare.")
        out = {}
        for name in specs:
            if name not in raw:
                continue
            spec, value = specs[name], raw[name]
            applicable = _applicable_fields(spec)
            if value is None:
                fields = set(applicable)
            else:
                fields = _field_names(value, what=f"data_dependent of column {_q(name)}")
                extra = sorted(fields - applicable)
                if extra:
                    raise ValueError(f"data_dependent names field(s) {extra} of column {_q(name)} that its "
                                     f"declaration does not have (a {spec.kind} column with missing={spec.missing!r} "
                                     f"has {sorted(applicable)}).")
            if fields:
                out[name] = fields
        return DataDependence(out)

    @property
    def data_dependent_fields(self) -> dict:
        """Column name -> frozenset of its fields read from the private rows (columns without any left out)."""
        return dict(self.data_dependent.fields)

    # ---- basic views
    @property
    def names(self) -> tuple[str, ...]:
        """Column names, in order."""
        return tuple(c.name for c in self.columns)

    def __getitem__(self, name: str) -> ColumnSpec:
        for c in self.columns:
            if c.name == name:
                return c
        raise ValueError(f"column {_q(name)} is not in the schema; its columns are {list(self.names)}.")

    def __len__(self) -> int:
        return len(self.columns)

    @property
    def dim(self) -> int:
        """Embedding dimension :math:`D`."""
        return self._layout[-1].stop

    def lengthscale(self, name: str) -> float | None:
        """Length scale of a numeric column as a fraction of its range (declared or the public default).

        Parameters
        ----------
        name : str
            Column name.

        Returns
        -------
        float or None
            None for categorical and boolean columns.
        """
        spec = self[name]
        if not spec.is_numeric:
            return None
        if spec.lengthscale is not None:
            return spec.lengthscale
        return default_lengthscale(spec, n_columns=len(self), uniform_sq_distance=self.uniform_sq_distance)

    def similarity(self, name: str) -> float | None:
        """Kernel value of two different levels of a column (declared or the public default).

        Parameters
        ----------
        name : str
            Column name.

        Returns
        -------
        float or None
            None for a numeric column without a missing level.
        """
        spec = self[name]
        if spec.is_numeric and spec.missing != "category":
            return None
        if spec.similarity is not None:
            return spec.similarity
        return default_similarity(spec, n_columns=len(self), uniform_sq_distance=self.uniform_sq_distance)

    def kernel(self, *, kind: str = "product", **options):
        r"""The mixed kernel on embedded rows: the product kernel, or an additive kernel of the columns.

        ``kind="product"`` (default): :class:`dpkme.GaussianKernel` with length scale 1,
        :math:`\exp(-\|e(x)-e(y)\|^2/2)`. ``kind="additive"``: one-column, pair and product terms
        (:func:`dpkme.kernels.additive.table_kernel`, which takes the ``options``). Both have
        :math:`k(x,x) = 1` and are computed from the schema alone.

        Parameters
        ----------
        kind : {"product", "additive"}, default="product"
            The kernel.
        **options
            Options of :func:`~dpkme.kernels.additive.table_kernel` (``kind="additive"`` only).

        Returns
        -------
        Kernel
        """
        if kind == "product" and options:
            raise ValueError(f"the product kernel takes no options, got {sorted(options)}; use kind='additive'.")
        return table_kernel(self, kind=kind, **options)

    @cached_property
    def _layout(self) -> tuple[_Layout, ...]:
        out, start = [], 0
        for spec in self.columns:
            if spec.is_numeric:
                lo, hi = spec.bounds
                ls = self.lengthscale(spec.name)
                if spec.missing == "category":
                    a = math.sqrt(-math.log(self.similarity(spec.name)))
                    out.append(_Layout(spec, start, start + 3, start, slice(start + 1, start + 3), lo, hi, ls, a))
                    start += 3
                else:
                    out.append(_Layout(spec, start, start + 1, start, None, lo, hi, ls))
                    start += 1
            else:
                width = len(spec.levels)
                a = math.sqrt(-math.log(self.similarity(spec.name)))
                out.append(_Layout(spec, start, start + width, None, slice(start, start + width), scale=a))
                start += width
        return tuple(out)

    @cached_property
    def domain(self) -> EmbeddedDomain:
        """The :class:`EmbeddedDomain` of this schema (public)."""
        D = self.dim
        lower, upper, fixed = np.zeros(D), np.zeros(D), np.zeros(D, dtype=bool)
        blocks, levels, value_levels, groups, links = {}, {}, {}, [], []
        for lay in self._layout:
            blocks[lay.spec.name] = slice(lay.start, lay.stop)
            if lay.numeric is not None:
                upper[lay.numeric] = lay.width
                if lay.spec.values is not None:
                    fixed[lay.numeric] = True
                    lv = self._embed_numeric(lay, np.asarray(lay.spec.value_levels))
                    lv.setflags(write=False)
                    value_levels[lay.numeric] = lv
                elif lay.spec.kind == "integer":
                    fixed[lay.numeric] = True
                    levels[lay.numeric] = (lay.width / (lay.hi - lay.lo), int(lay.hi - lay.lo) + 1)
            if lay.group is not None:
                upper[lay.group] = lay.scale
                fixed[lay.group] = True
                groups.append((lay.group, lay.scale))
                if lay.numeric is not None:
                    links.append((lay.group.start + 1, lay.numeric, self._embed_numeric(lay, lay.spec.impute_value)))
        return EmbeddedDomain(lower=lower, upper=upper, fixed=fixed, blocks=blocks, integer_levels=levels,
                              value_levels=value_levels, onehot_groups=tuple(groups), missing_links=tuple(links))

    @staticmethod
    def _embed_numeric(lay: _Layout, x):
        return (np.clip(x, lay.lo, lay.hi) - lay.lo) / ((lay.hi - lay.lo) * lay.lengthscale)

    # ---- encode / decode
    def _column_of(self, df: pd.DataFrame, name: str):
        if name in df.columns:
            return df[name]
        matches = [c for c in df.columns if str(c) == name]
        if len(matches) == 1:
            return df[matches[0]]
        return None

    def _encode(self, df) -> tuple[np.ndarray, EncodeReport]:
        if not isinstance(df, pd.DataFrame):
            raise ValueError(f"expected a pandas DataFrame, got {type(df).__name__}.")
        if df.shape[0] == 0:
            raise ValueError("the table has no rows.")
        series = {}
        for name in self.names:
            s = self._column_of(df, name)
            if s is None:
                absent = [n for n in self.names if self._column_of(df, n) is None]
                raise ValueError(f"column(s) {absent} of the schema are not in the table; its columns are "
                                 f"{_short([str(c) for c in df.columns])}. Rename them or fix the schema.")
            if isinstance(s, pd.DataFrame):
                raise ValueError(f"column name {_q(name)} occurs more than once in the table; rename the duplicates.")
            series[name] = s
        N = df.shape[0]
        Z = np.zeros((N, self.dim))
        counts: dict[str, dict[str, int]] = {}
        for lay in self._layout:
            spec, s = lay.spec, series[lay.spec.name]
            if spec.is_numeric:
                counts[spec.name] = self._encode_numeric(lay, s, Z)
            else:
                counts[spec.name] = self._encode_levels(lay, s, Z)
        ignored = tuple(str(c) for c in df.columns if str(c) not in self.names)
        return Z, EncodeReport(n_rows=N, counts=counts, ignored_columns=ignored)

    def _missing_error(self, spec: ColumnSpec, s: pd.Series, mask: np.ndarray, what: str = "missing value(s)"):
        pos = int(np.argmax(mask))
        raise ValueError(
            f"column {_q(spec.name)} has {int(mask.sum())} {what} (first in {_row_label(s, pos)}); declare "
            "missing='category' (a level of its own) or missing='impute' with an impute value, or remove "
            "those rows.")

    def _encode_numeric(self, lay: _Layout, s: pd.Series, Z: np.ndarray) -> dict[str, int]:
        spec = lay.spec
        if spec.kind == "datetime":
            x, missing = _datetime_cells(s, spec)
        else:
            x, missing = _numeric_cells(s, spec)
        c = {"missing": int(missing.sum()), "unknown": 0, "clipped_low": 0, "clipped_high": 0, "rounded": 0}
        if c["missing"] and spec.missing == "error":
            self._missing_error(spec, s, missing)
        present = ~missing
        xp = x[present]
        if spec.values is not None:                  # clip, then snap to the nearest declared level
            c["clipped_low"] = int(np.sum(xp < lay.lo))
            c["clipped_high"] = int(np.sum(xp > lay.hi))
            lv = np.asarray(spec.value_levels)
            snapped = lv[_nearest_level(lv, np.clip(xp, lay.lo, lay.hi))]
            c["rounded"] = int(np.sum((xp >= lay.lo) & (xp <= lay.hi) & (snapped != xp)))
            xp = snapped
        elif spec.kind == "integer":
            r = np.rint(xp)
            c["rounded"] = int(np.sum(np.isfinite(xp) & (r != xp)))
            xp = r
        if spec.values is None:
            c["clipped_low"] = int(np.sum(xp < lay.lo))
            c["clipped_high"] = int(np.sum(xp > lay.hi))
        x = x.copy()
        x[present] = xp
        x[missing] = spec.impute_value if c["missing"] else 0.0
        Z[:, lay.numeric] = self._embed_numeric(lay, x)
        if lay.group is not None:
            Z[:, lay.group.start] = np.where(missing, 0.0, lay.scale)
            Z[:, lay.group.start + 1] = np.where(missing, lay.scale, 0.0)
        return c

    def _encode_levels(self, lay: _Layout, s: pd.Series, Z: np.ndarray) -> dict[str, int]:
        spec = lay.spec
        codes, unknown = _level_codes(s, spec)
        missing, unk = codes == -1, codes == -2
        c = {"missing": int(missing.sum()), "unknown": int(unk.sum()), "clipped_low": 0, "clipped_high": 0,
             "rounded": 0}
        if spec.missing == "error":
            if c["unknown"]:
                shown = ", ".join(_short(v) for v in list(unknown)[:3]) + (", ..." if len(unknown) > 3 else "")
                raise ValueError(
                    f"column {_q(spec.name)} holds {c['unknown']} cell(s) whose value is not among its declared "
                    f"categories (e.g. {shown}; owner-only: private values). Declare missing='category' (such "
                    "values then join the missing level) or missing='impute' with a declared value. Add a value to "
                    "the categories only if it is known publicly (a code book, a public sample): a category taken "
                    "from the private rows makes the schema data-dependent (after a private discovery, a category it "
                    "did not release is one of those), and a release with it is not differentially private.")
            if c["missing"]:
                self._missing_error(spec, s, missing)
        fill = len(spec.categories) if spec.missing == "category" else (
            list(spec.categories).index(spec.impute) if spec.missing == "impute" else 0)
        codes = np.where(codes < 0, fill, codes)
        Z[np.arange(Z.shape[0]), lay.group.start + codes] = lay.scale
        return c

    def encode(self, df) -> np.ndarray:
        """Validate, clip and embed a table: the rows :math:`e(x_n)` as an ``(N, D)`` float64 array.

        Columns are found by name (the table may hold more columns; they are ignored). Missing values
        and unknown categories follow each column's ``missing`` policy; numbers are clipped to their
        bounds and integers rounded (:meth:`encode_report` counts what changed, for the owner).

        Parameters
        ----------
        df : pandas.DataFrame
            The table (object, string, category, bool, integer, float or datetime columns; dates given
            as text are read cell by cell with the column's declared ``date_format``, time-zone aware ones
            converted to UTC).

        Returns
        -------
        ndarray (N, D)

        Raises
        ------
        ValueError
            A declared column is absent; a cell cannot be read as the declared kind (the message names
            the column, the value and its row); missing values or unknown categories in a column with
            ``missing="error"`` (named, with their number).
        """
        return self._encode(df)[0]

    def encode_report(self, df) -> EncodeReport:
        """What :meth:`encode` does to ``df``: per-column counts of missing, unknown, clipped and rounded cells.

        **Owner-only**: the counts are statistics of the private rows; never publish them.

        Parameters
        ----------
        df : pandas.DataFrame
            The table.

        Returns
        -------
        EncodeReport
        """
        return self._encode(df)[1]

    def decode(self, Z) -> pd.DataFrame:
        """Embedded points back to a table with the original column names and types.

        ``Z`` is first projected onto the domain (:meth:`EmbeddedDomain.project`). Numbers are mapped back
        to the declared units, clipped, and rounded to ``decimals`` (continuous), to whole numbers
        (integer: ``int64``, or pandas' nullable ``Int64`` when the column keeps a missing level) or to
        days (datetime: ``datetime64[ns]``); categories come back as their labels (integers as integers,
        booleans as ``bool`` or nullable ``boolean``); the missing level as a missing value.

        Parameters
        ----------
        Z : array (M, D)
            Embedded points (e.g. a release's synthetic points).

        Returns
        -------
        pandas.DataFrame
        """
        P = self.domain.project(Z)
        M = P.shape[0]
        out = {}
        for lay in self._layout:
            spec = lay.spec
            if spec.is_numeric:
                if spec.values is not None:              # exactly the declared levels
                    lv = self.domain.value_levels[lay.numeric]
                    x = np.asarray(spec.value_levels)[_nearest_level(lv, P[:, lay.numeric])]
                else:
                    x = lay.lo + P[:, lay.numeric] * (lay.hi - lay.lo) * lay.lengthscale
                    x = np.clip(x, lay.lo, lay.hi)
                miss = (P[:, lay.group.start + 1] > P[:, lay.group.start]) if lay.group is not None else None
                out[spec.name] = self._decode_numeric(spec, x, miss)
            else:
                k = np.argmax(P[:, lay.group], axis=1)
                levels = spec.levels
                vals = [levels[i] for i in k]
                out[spec.name] = self._decode_levels(spec, vals)
        return pd.DataFrame(out, index=pd.RangeIndex(M))

    @staticmethod
    def _decode_numeric(spec: ColumnSpec, x: np.ndarray, miss) -> pd.Series:
        if spec.kind == "integer":
            v = np.rint(x).astype(np.int64)
            if spec.missing == "category":
                arr = pd.array(v, dtype="Int64")
                if miss is not None:
                    arr[miss] = pd.NA
                return pd.Series(arr)
            return pd.Series(v)
        if spec.kind == "datetime":
            days = np.round(x, spec.decimals or 0)
            if miss is not None:
                days = np.where(miss, np.nan, days)
            ms = np.rint(days * 86_400_000.0)             # whole milliseconds: exact in float64, no ns noise
            return pd.Series(pd.to_datetime(ms, unit="ms")).astype("datetime64[ns]")
        v = np.round(x, spec.decimals) if (spec.decimals is not None and spec.values is None) else x.copy()
        if miss is not None:
            v[miss] = np.nan
        return pd.Series(v, dtype=np.float64)

    @staticmethod
    def _decode_levels(spec: ColumnSpec, vals: list) -> pd.Series:
        has_missing = spec.missing == "category"
        if spec.kind == "boolean":
            return pd.Series(vals, dtype="boolean" if has_missing else bool)
        if all(isinstance(c, int) for c in spec.categories):
            return pd.Series(vals, dtype="Int64" if has_missing else np.int64)
        labels = [np.nan if v is None else v for v in vals]
        if all(v is None for v in vals):
            return pd.Series(labels, dtype=object)
        return pd.Series(labels)           # inferred: pandas' string dtype (object before pandas 3), NaN when missing

    # ---- JSON
    def to_dict(self) -> dict:
        """JSON-able form: ``{"format", "version", "columns": [...], "data_dependent", "uniform_sq_distance"}``.

        ``data_dependent`` lists the flagged column names (as before); when it is not empty,
        ``data_dependent_fields`` maps each of them to its sorted field names.
        """
        d = {"format": SCHEMA_FORMAT, "version": SCHEMA_VERSION,
             "columns": [c.to_dict() for c in self.columns],
             "data_dependent": list(self.data_dependent),
             "uniform_sq_distance": self.uniform_sq_distance}
        if self.data_dependent:
            d["data_dependent_fields"] = {n: sorted(f) for n, f in self.data_dependent.fields.items()}
        return d

    @classmethod
    def from_dict(cls, d: Mapping) -> "TableSchema":
        """Inverse of :meth:`to_dict` (validates the format, the version and every column).

        Parameters
        ----------
        d : mapping
            A schema's dict form.

        Returns
        -------
        TableSchema
        """
        if not isinstance(d, Mapping):
            raise ValueError(f"a schema is a dict, got {_short(d)}.")
        if d.get("format") != SCHEMA_FORMAT:
            raise ValueError(f"this is not a dpkme table schema: format is {_short(d.get('format'))}, expected "
                             f"{SCHEMA_FORMAT!r}.")
        if d.get("version") != SCHEMA_VERSION:
            raise ValueError(f"schema version {_short(d.get('version'))} is not supported (this dpkme reads version "
                             f"{SCHEMA_VERSION}); re-export the schema with this version.")
        unknown = sorted(set(d) - {"format", "version", "columns", "data_dependent", "data_dependent_fields",
                                   "uniform_sq_distance"})
        if unknown:
            raise ValueError(f"the schema has unknown field(s) {unknown}.")
        cols = d.get("columns")
        if not isinstance(cols, list):
            raise ValueError("the schema's 'columns' must be a list of column specs.")
        names = d.get("data_dependent", ())
        if isinstance(names, (str, bytes)) or not isinstance(names, (list, tuple)):
            raise ValueError(f"the schema's 'data_dependent' must be a list of column names, got {_short(names)}.")
        dependent: Any = tuple(names)
        if "data_dependent_fields" in d:
            fields = d["data_dependent_fields"]
            if not isinstance(fields, Mapping) or sorted(map(str, fields)) != sorted(map(str, names)):
                raise ValueError("the schema's 'data_dependent_fields' must map exactly the columns listed in "
                                 f"'data_dependent' ({list(names)}) to their field names, got {_short(fields)}.")
            dependent = dict(fields)
        return cls(tuple(ColumnSpec.from_dict(c) for c in cols), data_dependent=dependent,
                   uniform_sq_distance=d.get("uniform_sq_distance", 1.0))

    def to_json(self, *, indent: int | None = 2) -> str:
        """The schema as JSON text (:meth:`to_dict`).

        Parameters
        ----------
        indent : int or None, default=2
            Passed to :func:`json.dumps`.

        Returns
        -------
        str
        """
        return json.dumps(self.to_dict(), indent=indent, ensure_ascii=False)

    @classmethod
    def from_json(cls, text) -> "TableSchema":
        """Read a schema from JSON text (or bytes) written by :meth:`to_json`.

        Parameters
        ----------
        text : str or bytes
            JSON text.

        Returns
        -------
        TableSchema
        """
        if isinstance(text, (bytes, bytearray)):
            text = bytes(text).decode("utf-8")
        if not isinstance(text, str):
            raise ValueError(f"expected JSON text, got {type(text).__name__}.")
        try:
            d = json.loads(text)
        except json.JSONDecodeError as exc:
            raise ValueError(f"the schema is not valid JSON: {exc}.") from None
        return cls.from_dict(d)

    # ---- editing and display
    def replace_column(self, spec: ColumnSpec, *, declared=None) -> "TableSchema":
        """A copy with the column of the same name re-declared; its data-dependent fields cleared where re-declared.

        A field counts as re-declared when its value differs from the current declaration, or when it is
        listed in ``declared``. The other fields keep their flag (:attr:`data_dependent_fields`): a copy
        of a suggested column with new bounds still has, e.g., the kind read from the private rows.

        Parameters
        ----------
        spec : ColumnSpec
            The new declaration; its name must be a column of the schema.
        declared : collection of str or "all", optional
            Fields (:data:`DATA_FIELDS`) whose values -- changed or not -- are now declared from public
            knowledge or released privately; ``"all"``: the whole column is.

        Returns
        -------
        TableSchema

        Examples
        --------
        >>> s = TableSchema([ColumnSpec("age", "integer", lower=20, upper=60)],
        ...                 data_dependent={"age": ["kind", "lower", "upper"]})
        >>> s.replace_column(ColumnSpec("age", "integer", lower=0, upper=120)).data_dependent
        DataDependence({'age': ['kind']})
        >>> s.replace_column(ColumnSpec("age", "integer", lower=0, upper=120), declared="all").data_dependent
        DataDependence({})
        """
        if not isinstance(spec, ColumnSpec):
            raise ValueError(f"spec must be a ColumnSpec, got {_short(spec)}.")
        old = self[spec.name]
        flags = set(self.data_dependent.fields.get(spec.name, ()))
        if isinstance(declared, str) and declared == "all":
            flags = set()
        elif declared is not None:
            flags -= _field_names(declared, what="declared")
        flags -= {f for f in DATA_FIELDS if getattr(old, f) != getattr(spec, f)}
        flags &= _applicable_fields(spec)
        fields = {n: set(f) for n, f in self.data_dependent.fields.items()}
        fields[spec.name] = flags
        cols = tuple(spec if c.name == spec.name else c for c in self.columns)
        return TableSchema(cols, data_dependent=fields, uniform_sq_distance=self.uniform_sq_distance)

    def redeclare(self, name: str, **changes) -> "TableSchema":
        """A copy with some fields of one column declared anew (from public knowledge or a private release).

        Exactly the given fields are cleared from the column's data-dependent fields; the others keep
        their values and flags. Use it to declare privately discovered values
        (:mod:`dpkme.privacy.discovery`): ``schema.redeclare("age", lower=b.lower, upper=b.upper)``.

        Parameters
        ----------
        name : str
            A column of the schema.
        **changes
            New values of :class:`ColumnSpec` fields (e.g. ``lower=0, upper=120`` or ``categories=[...]``);
            the column is validated again.

        Returns
        -------
        TableSchema

        Examples
        --------
        >>> s = TableSchema([ColumnSpec("age", "integer", lower=20, upper=60)], data_dependent=["age"])
        >>> sorted(s.data_dependent_fields["age"])            # a name alone: every field of the column
        ['kind', 'lengthscale', 'lower', 'missing', 'upper']
        >>> sorted(s.redeclare("age", lower=0, upper=120).data_dependent_fields["age"])
        ['kind', 'lengthscale', 'missing']
        """
        spec = self[name]
        if not changes:
            raise ValueError(f"redeclare of column {_q(name)} needs the fields to declare, e.g. lower=0, upper=100.")
        _field_names(tuple(changes), what=f"redeclare of column {_q(name)}")
        return self.replace_column(_dc_replace(spec, **changes), declared=tuple(changes))

    def describe(self) -> pd.DataFrame:
        """A public summary, one row per column: kind, declared domain, missing policy, kernel scales, and the
        fields read from the private rows (if any)."""
        rows = []
        for lay in self._layout:
            spec = lay.spec
            if spec.is_numeric:
                domain = f"[{spec.lower}, {spec.upper}]"
                if spec.values is not None:
                    shown = ", ".join(f"{v:g}" for v in spec.value_levels[:8]) + (", ..." if len(spec.values) > 8 else "")
                    domain += f", {len(spec.values)} levels: {shown}"
            else:
                shown = ", ".join(map(str, spec.categories[:8])) + (", ..." if len(spec.categories) > 8 else "")
                domain = f"{len(spec.categories)} categories: {shown}"
            rows.append({
                "column": spec.name, "kind": spec.kind, "domain": domain, "missing": spec.missing,
                "lengthscale": self.lengthscale(spec.name), "similarity": self.similarity(spec.name),
                "scales": "declared" if (spec.lengthscale is not None or spec.similarity is not None) else "default",
                "coordinates": lay.stop - lay.start,
                "data_dependent": spec.name in self.data_dependent,
                "read_from_private_rows": ", ".join(sorted(self.data_dependent.fields.get(spec.name, ()))),
            })
        return pd.DataFrame(rows).set_index("column")


TABLE_SCHEMA_TYPES.append(TableSchema)   # the table kernels accept it (they never import the schema)


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


#: Formats :func:`suggest_schema` tries, in this order, on a text column (the first that reads every cell).
_SUGGESTED_DATE_FORMATS = (DEFAULT_DATE_FORMAT,) + tuple(
    d + tail for d in ("%d/%m/%Y", "%m/%d/%Y", "%d.%m.%Y", "%d-%m-%Y", "%m-%d-%Y")
    for tail in ("", " %H:%M", " %H:%M:%S")) + (
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
