r"""Rejection-rate curves of the two-sample tests, ready to plot or tabulate, and the textbook null to compare.

:func:`run_rejection_curve` checks a curve's request and runs :func:`dpkme.two_sample.lab.rejection_curve`;
:func:`curve_series` turns a (possibly partial) :class:`~dpkme.two_sample.lab.CurveResult` into the points of
its plot -- only the values with at least one repetition, each method's rate with its Clopper--Pearson error
bars, and the range an exact level-:math:`\alpha` test falls in when :math:`H_0` holds;
:func:`curve_table` gives the same as rows. :func:`chi2_reference` gives the textbook
:math:`\chi^2_J` density that a naive test would use as its null (it ignores the privacy noise).
"""

from __future__ import annotations

from typing import Any, Callable

import numpy as np
from scipy import stats

from .lab import CASES, CurveResult, rejection_curve

__all__ = ["run_rejection_curve", "curve_series", "curve_table", "chi2_reference"]


def run_rejection_curve(case: str, *, vary: str, values, methods, n: int, epsilon: float, delta: float,
                        repetitions: int, alpha: float, dim: int, feature_kind: str, n_features: int,
                        random_state: int, progress: Callable[[int, int, dict], Any] | None = None) -> CurveResult:
    """:func:`~dpkme.two_sample.lab.rejection_curve` along ``vary`` over the sorted ``values``.

    Raises ``ValueError`` when no value or no method is chosen (naming which), before any test runs.
    ``progress(done, total, info)`` is called after each repetition; the run stops early (keeping what is
    done: ``completed`` False) when it raises a stop request, as the library's curve does.
    """
    values = sorted(values)
    if not values:
        raise ValueError(f"choose at least one {'ε' if vary == 'epsilon' else 'n'} value.")
    if not methods:
        raise ValueError("choose at least one test.")
    return rejection_curve(case, vary=vary, values=values, methods=methods, n=n, epsilon=epsilon, delta=delta,
                           repetitions=repetitions, alpha=alpha, dim=dim, feature_kind=feature_kind,
                           n_features=n_features, random_state=random_state, progress=progress)


def curve_series(curve: CurveResult, *, level: float = 0.95) -> dict:
    """The points of a rejection-rate plot: values with at least one repetition, rates and error bars.

    Returns ``{"done", "x", "h0_true", "band", "methods"}``: ``done`` the indices of the values with a repetition
    (a stopped run leaves the others out), ``x`` those values; ``band`` is ``None`` or ``(low, high)`` lists: where
    the rate of an exact level-α test falls with probability ``level`` at each value's number of repetitions
    (only when the case's :math:`H_0` is true); ``methods`` maps each method to ``{"rate", "err_low",
    "err_high"}`` -- its rejection rates and the distances to its Clopper--Pearson interval's ends.
    """
    rates, ints = curve.rates(), curve.intervals(level)
    done = [i for i, r in enumerate(curve.repetitions) if r > 0]
    h0 = CASES[curve.case].h0_true
    band = None
    if h0 and done:
        b = curve.band(level)
        band = ([b[i][0] for i in done], [b[i][1] for i in done])
    methods = {m: {"rate": [rates[m][i] for i in done],
                   "err_high": [ints[m][i][1] - rates[m][i] for i in done],
                   "err_low": [rates[m][i] - ints[m][i][0] for i in done]} for m in curve.methods}
    return {"done": done, "x": [curve.values[i] for i in done], "h0_true": h0, "band": band, "methods": methods}


def curve_table(curve: CurveResult, *, level: float = 0.95) -> list[dict]:
    """One row per method and value with a repetition: the value, repetitions, rejections, rate and interval."""
    rates, ints = curve.rates(), curve.intervals(level)
    done = [i for i, r in enumerate(curve.repetitions) if r > 0]
    return [{"method": m, curve.vary: curve.values[i], "repetitions": curve.repetitions[i],
             "rejections": curve.rejections[m][i], "rate": rates[m][i],
             "ci_low": ints[m][i][0], "ci_high": ints[m][i][1]}
            for m in curve.methods for i in done]


def chi2_reference(result, *, n_points: int = 300, quantile: float = 0.995, margin: float = 1.05) -> dict:
    r"""The textbook :math:`\chi^2_J` null of a test result next to its simulated (noise-aware) null.

    ``J`` is ``result.n_features``. The range ``[0, hi]`` covers the ``quantile`` of the simulated null
    samples, the statistic and the ``quantile`` of :math:`\chi^2_J`, times ``margin``. Returns ``{"x", "pdf",
    "hi", "dof"}`` with ``n_points`` values.
    """
    samples = np.asarray(result.null.samples)
    J = result.n_features
    hi = float(max(np.quantile(samples, quantile), result.statistic, stats.chi2.ppf(quantile, J)) * margin)
    xs = np.linspace(0, hi, n_points)
    return {"x": xs, "pdf": stats.chi2.pdf(xs, J), "hi": hi, "dof": J}
