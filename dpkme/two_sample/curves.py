r"""Rejection-rate curves of the two-sample tests, ready to plot or tabulate, and the textbook null to compare.

:func:`run_rejection_curve` checks a curve's request and runs :func:`dpkme.two_sample.lab.rejection_curve`;
:func:`curve_series` turns a (possibly partial) :class:`~dpkme.two_sample.lab.CurveResult` into the points of
its plot -- only the values with at least one repetition, each method's rate with its Clopper--Pearson error
bars, and the range an exact level-:math:`\alpha` test falls in when :math:`H_0` holds;
:func:`curve_table` gives the same as rows. :func:`chi2_reference` gives the textbook
:math:`\chi^2_J` density that a naive test would use as its null (it ignores the privacy noise).
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import numpy as np
from scipy import stats

from .lab import CASES, CurveResult, rejection_curve

__all__ = ["run_rejection_curve", "curve_series", "curve_table", "chi2_reference"]


def run_rejection_curve(case: str, *, vary: str, values, methods, n: int, epsilon: float, delta: float,
                        repetitions: int, alpha: float, dim: int, feature_kind: str, n_features: int,
                        random_state: int, progress: Callable[[int, int, dict], Any] | None = None) -> CurveResult:
    r""":func:`~dpkme.two_sample.lab.rejection_curve` along ``vary`` over the sorted ``values``.

    Raises ``ValueError`` when no value or no method is chosen (naming which), before any test runs.
    ``progress(done, total, info)`` is called after each repetition; the run stops early (keeping what is
    done: ``completed`` False) when it returns ``False``, as the library's curve does.

    Parameters
    ----------
    case : {"SG", "GMD", "GVD"}
        The bundled problem (:data:`~dpkme.two_sample.lab.CASES`): SG gives type-I error, GMD/GVD power.
    vary : {"epsilon", "n"}
        The parameter along the curve.
    values : iterable of float
        Values of the varied parameter (run in increasing order; at least one).
    methods : sequence of str
        Keys of :data:`~dpkme.two_sample.lab.LAB_METHODS` (at least one).
    n : int
        Size of each private sample when ``vary="epsilon"`` (ignored otherwise).
    epsilon : float
        Privacy parameter :math:`\varepsilon` when ``vary="n"`` (ignored otherwise).
    delta : float
        Privacy parameter :math:`\delta` of every private test.
    repetitions : int
        Repetitions per value.
    alpha : float
        Level of the tests.
    dim : int
        Dimension of the samples.
    feature_kind : str
        Feature map kind (``"me"``, ``"scf"``, ...; see :data:`~dpkme.two_sample.features.FEATURE_KINDS`).
    n_features : int
        Number of test locations or frequencies :math:`J`.
    random_state : int
        Root seed; repetition r at value index i is replayable from it.
    progress : callable, optional
        ``progress(done, total, info)`` after each repetition (see
        :func:`~dpkme.two_sample.lab.rejection_curve`); returning ``False`` stops the run.

    Returns
    -------
    CurveResult
        Rejections per method and value; ``completed`` is False if stopped.

    Examples
    --------
    >>> from dpkme.two_sample.curves import run_rejection_curve
    >>> curve = run_rejection_curve("SG", vary="epsilon", values=[2.0, 1.0], methods=["nonprivate"], n=300,
    ...                             epsilon=1.0, delta=1e-5, repetitions=2, alpha=0.05, dim=5,
    ...                             feature_kind="scf", n_features=2, random_state=0)
    >>> curve.values, curve.repetitions, curve.completed
    ([1.0, 2.0], [2, 2], True)
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

    Parameters
    ----------
    curve : CurveResult
        A complete or partial (stopped) curve.
    level : float, default 0.95
        Confidence level of the error bars and coverage of the band, in (0, 1).

    Returns
    -------
    dict
        ``{"done", "x", "h0_true", "band", "methods"}`` as above.

    Examples
    --------
    >>> from dpkme.two_sample.curves import curve_series
    >>> from dpkme.two_sample.lab import CurveResult
    >>> curve = CurveResult(case="GMD", vary="n", values=[500, 1000, 2000], methods=["tcmc"],
    ...                     rejections={"tcmc": [2, 1, 0]}, repetitions=[4, 2, 0], alpha=0.05, completed=False)
    >>> s = curve_series(curve)
    >>> s["x"], s["band"], s["methods"]["tcmc"]["rate"]
    ([500, 1000], None, [0.5, 0.5])
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
    """One row per method and value with a repetition: the value, repetitions, rejections, rate and interval.

    Parameters
    ----------
    curve : CurveResult
        A complete or partial (stopped) curve; values without a repetition are left out.
    level : float, default 0.95
        Confidence level of the Clopper--Pearson interval.

    Returns
    -------
    list of dict
        Rows ``{"method", <curve.vary>, "repetitions", "rejections", "rate", "ci_low", "ci_high"}``,
        grouped by method in ``curve.methods`` order.

    Examples
    --------
    >>> from dpkme.two_sample.curves import curve_table
    >>> from dpkme.two_sample.lab import CurveResult
    >>> curve = CurveResult(case="SG", vary="epsilon", values=[1.0, 2.0], methods=["tcmc"],
    ...                     rejections={"tcmc": [1, 0]}, repetitions=[20, 0], alpha=0.05)
    >>> [(r["epsilon"], r["rate"]) for r in curve_table(curve)]
    [(1.0, 0.05)]
    """
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

    Parameters
    ----------
    result : TwoSampleResult
        A test result (anything with ``null.samples``, ``n_features`` and ``statistic``).
    n_points : int, default 300
        Number of grid points in ``[0, hi]``.
    quantile : float, default 0.995
        Quantile of the simulated null and of :math:`\chi^2_J` the range must cover, in (0, 1).
    margin : float, default 1.05
        Factor applied to the largest of the three to get ``hi``.

    Returns
    -------
    dict
        ``x`` (ndarray of shape (n_points,)), ``pdf`` (the :math:`\chi^2_J` density at ``x``),
        ``hi`` (float) and ``dof`` (:math:`J`).

    Examples
    --------
    >>> from types import SimpleNamespace
    >>> from dpkme.two_sample.curves import chi2_reference
    >>> res = SimpleNamespace(null=SimpleNamespace(samples=[0.5, 1.0, 4.0]), n_features=2, statistic=30.0)
    >>> ref = chi2_reference(res)
    >>> ref["dof"], round(ref["hi"], 6), ref["x"].shape
    (2, 31.5, (300,))
    """
    samples = np.asarray(result.null.samples)
    J = result.n_features
    hi = float(max(np.quantile(samples, quantile), result.statistic, stats.chi2.ppf(quantile, J)) * margin)
    xs = np.linspace(0, hi, n_points)
    return {"x": xs, "pdf": stats.chi2.pdf(xs, J), "hi": hi, "dof": J}
