"""How the app writes numbers, by what they are (pure functions: no Streamlit, no Plotly).

* :func:`fmt_power` -- small or large numbers as powers of ten (``10⁻⁶``, ``2.5·10⁻⁷``): δ everywhere
  (``ui.state.fmt_delta``) and the labels of log axes (``ui.figures.log_ticks``).
* :func:`fmt_count` -- a count as a whole number with thousands separators (``537,830``), never ``537.830``.
"""

from __future__ import annotations

import math

from dpkme.privacy.explain import power_of_ten

__all__ = ["MISSING_CELL", "cell", "fill_missing", "fmt_count", "fmt_power", "shown_table"]

#: What an empty table cell shows (never the word "None").
MISSING_CELL = "—"


#: δ and the labels of log axes as powers of ten: ``10⁻⁶``, ``2.5·10⁻⁷`` (the library's words use the same function).
fmt_power = power_of_ten


def fmt_count(v) -> str:
    """A count (possibly an estimate such as a weighted share × N, or a noisy count) as a whole number with
    thousands separators: ``537,830``; a missing one as :data:`MISSING_CELL`."""
    if v is None or (isinstance(v, float) and not math.isfinite(v)):
        return MISSING_CELL
    try:
        f = float(v)
    except (TypeError, ValueError):
        return str(v)
    if not math.isfinite(f):
        return MISSING_CELL
    return f"{int(round(f)):,}"


def cell(v, fmt=str) -> str:
    """A table cell as text: ``fmt(v)``, or :data:`MISSING_CELL` where there is no value (None, NaN)."""
    if v is None or (isinstance(v, float) and math.isnan(v)):
        return MISSING_CELL
    return fmt(v)


def shown_table(df, *, precision: int | None = 3, counts=(), missing_labels: dict | None = None):
    """A table as the app shows it (a pandas ``Styler`` for ``st.dataframe``): counts as whole numbers with thousands
    separators (:func:`fmt_count`, the columns named in ``counts``), other decimals to ``precision`` (None: six
    significant digits), and every
    empty cell as :data:`MISSING_CELL` -- or, in the columns of ``missing_labels``, as the label the schema declares
    for a missing value (``"(missing)"``) -- never the word ``None`` or ``nan``. Only the display changes.
    """
    import pandas as pd

    df = df if isinstance(df, pd.DataFrame) else pd.DataFrame(df)
    if missing_labels:
        df = df.copy()
        for col, label in missing_labels.items():
            if col in df.columns and df[col].isna().any():
                df[col] = df[col].astype(object).where(df[col].notna(), label)
    if precision is None:         # numbers as they are (0.5, 12, 1e-06 → 1e-06), not to pandas' six decimals
        style = df.style.format(lambda v: f"{v:.6g}" if isinstance(v, float) else str(v), na_rep=MISSING_CELL)
    else:
        style = df.style.format(na_rep=MISSING_CELL, precision=precision)
    present = [c for c in counts if c in df.columns]
    if present:
        style = style.format(fmt_count, subset=present)
    return style


def fill_missing(df, labels: dict | None = None):
    """A copy of ``df`` whose empty cells in text columns show the declared label (``labels[column]``) or
    :data:`MISSING_CELL`, never ``None``. Numeric and date columns keep their type (and ``st.dataframe``'s own
    formatting, e.g. a ``DateColumn``); only the display of text columns changes.
    """
    import pandas as pd

    out = df.copy()
    for col in out.columns:
        s = out[col]
        if (pd.api.types.is_object_dtype(s) or pd.api.types.is_string_dtype(s)
                or isinstance(s.dtype, pd.CategoricalDtype)) and s.isna().any():
            out[col] = s.astype(object).where(s.notna(), (labels or {}).get(col, MISSING_CELL))
    return out
