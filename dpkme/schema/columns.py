"""One declared column (:class:`ColumnSpec`), its public default kernel scales, and which declared values
were read from data (:class:`DataDependence`)."""

from __future__ import annotations

import itertools
import math
import numbers
from collections.abc import Mapping
from dataclasses import KW_ONLY, dataclass
from types import MappingProxyType
from typing import Any

import numpy as np
import pandas as pd

from .._validation import _short, check_positive_float, check_positive_int
from ._common import (
    _LENGTHSCALE_RANGE,
    _MAX_DECIMALS,
    _NUMERIC_KINDS,
    _as_real,
    _check_label,
    _check_similarity,
    _plain,
    _q,
)
from .dates import DEFAULT_DATE_FORMAT, _as_timestamp, _check_date_format, _days, _iso

__all__ = ["KINDS", "MISSING_POLICIES", "DATA_FIELDS", "ColumnSpec", "default_lengthscale", "default_similarity",
           "DataDependence"]


#: Column kinds a schema can declare.
KINDS = ("continuous", "integer", "categorical", "boolean", "datetime")
#: How missing values are handled: refused, replaced by a declared value, or made a level of their own.
MISSING_POLICIES = ("error", "impute", "category")
_SPEC_FIELDS = ("name", "kind", "lower", "upper", "categories", "missing", "impute", "lengthscale", "similarity",
                "decimals", "date_format", "values")
#: Fields of a column spec whose value can be read from data (``TableSchema.data_dependent_fields``).
DATA_FIELDS = _SPEC_FIELDS[1:]


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
        unsorted = [(a, b) for a, b in itertools.pairwise(vals) if not a < b]
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
    def from_dict(cls, d: Mapping) -> ColumnSpec:
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
    if isinstance(value, (str, bytes, Mapping)):
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
