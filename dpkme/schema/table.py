"""The declared schema of a table (:class:`TableSchema`): the embedding, its inverse, the kernel and the
owner's :class:`EncodeReport`."""

from __future__ import annotations

import json
import math
from collections.abc import Mapping
from dataclasses import KW_ONLY, dataclass
from dataclasses import replace as _dc_replace
from functools import cached_property
from typing import Any

import numpy as np
import pandas as pd

from .._validation import _short, check_positive_float
from ..kernels.additive import TABLE_SCHEMA_TYPES, table_kernel
from ..kernels.marginal import _nearest_level
from ._common import (
    _FALSE_TOKENS,
    _MISSING_MARKERS_NOTE,
    _MISSING_TOKENS,
    _TRUE_TOKENS,
    _is_missing_scalar,
    _plain,
    _q,
    _row_label,
)
from .columns import (
    DATA_FIELDS,
    ColumnSpec,
    DataDependence,
    _applicable_fields,
    _field_names,
    default_lengthscale,
    default_similarity,
)
from .dates import _DAY, _EPOCH, _date_format_hint, _parse_date_cells
from .domain import EmbeddedDomain, _Layout

__all__ = ["SCHEMA_FORMAT", "SCHEMA_VERSION", "EncodeReport", "TableSchema"]


#: ``"format"`` field of a schema's JSON form, and its version.
SCHEMA_FORMAT = "dpkme.table_schema"
SCHEMA_VERSION = 1


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
        if isinstance(self.columns, (ColumnSpec, str, bytes, Mapping)):
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
    def from_dict(cls, d: Mapping) -> TableSchema:
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
    def from_json(cls, text) -> TableSchema:
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
    def replace_column(self, spec: ColumnSpec, *, declared=None) -> TableSchema:
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

    def redeclare(self, name: str, **changes) -> TableSchema:
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
