"""How the app writes numbers, by what they are (pure functions: no Streamlit, no Plotly).

* :func:`fmt_power` -- small or large numbers as powers of ten (``10⁻⁶``, ``2.5·10⁻⁷``): δ everywhere
  (``ui.state.fmt_delta``) and the labels of log axes (``ui.figures.log_ticks``).
* :func:`fmt_count` -- a count as a whole number with thousands separators (``537,830``), never ``537.830``.
"""

from __future__ import annotations

import math

from dpkme.privacy.explain import power_of_ten

__all__ = ["MISSING_CELL", "cell", "fmt_count", "fmt_power"]

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
