r"""The two-sample "lab": bundled cases and type-I error / power curves.

Cases (Chwialkowski et al. 2015; Jitkrittum et al. 2016; Raj et al. 2019)
----------------------------------------------------------------------------
``"SG"`` same Gaussian
    :math:`X, Y \sim \mathcal N(0, I_d)`, d = 50 -- :math:`H_0` true (type-I error).
``"GMD"`` Gaussian mean difference
    :math:`X\sim\mathcal N(0, I_d)`, :math:`Y\sim\mathcal N(\mu e_1, I_d)`, :math:`\mu = 1`, d = 100.
``"GVD"`` Gaussian variance difference
    :math:`X\sim\mathcal N(0, I_d)`, :math:`Y\sim\mathcal N(0, \operatorname{diag}(v, 1, \dots, 1))`,
    :math:`v = 2`, d = 50.

Every repetition draws fresh private samples **and** a fresh public sample
(``n_public`` rows from each distribution, standing in for a held-out split)
from which the feature map is built (locations and median-heuristic length
scale for ME; width for SCF), so the curves describe the whole procedure.

Curves
------
:func:`rejection_curve` varies ``epsilon`` or ``n`` and records, for every
method, how often :math:`H_0` is rejected at level alpha over ``repetitions``
repetitions (type-I error on SG, power on GMD/GVD), with Clopper-Pearson
intervals and the Monte-Carlo band of a level-alpha test. All methods of one
repetition see the same data (common random numbers). A ``progress``
callback is called after every repetition; returning ``False`` from it stops
the run (the partial result is flagged ``completed=False``).

Methods (:data:`LAB_METHODS`): ``"nonprivate"`` (chi-square null),
``"tcmc"`` (trusted curator, defaults: joint calibration, noise-aware
statistic, parametric bootstrap), ``"tcmc-wchi2"`` (same statistic, weighted
chi-square null), ``"tcmc-naive"`` (same private statistic, chi-square null),
``"paper"`` (the paper's TCMC: split budget 50/50, no noise-aware term,
weighted chi-square null -- with our replace-one sensitivities),
``"paper-naive"`` (the paper's statistic with the chi-square null: the
inflated type-I error of Raj et al.'s Fig. 6), ``"nte"`` (two holders).
"naive" methods reuse the statistic of their parent, so they cost nothing.
"""

from __future__ import annotations

import math
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

import numpy as np
from scipy import stats

from .._validation import (
    check_array,
    check_delta,
    check_epsilon,
    check_in,
    check_positive_float,
    check_positive_int,
    check_random_state,
)
from .features import FEATURE_KINDS, FeatureMap, make_features
from .private import nonprivate_test, nte_test, tcmc_test

__all__ = [
    "CASES",
    "CaseSpec",
    "CaseData",
    "make_case",
    "case_features",
    "split_public",
    "LAB_METHODS",
    "CurveResult",
    "rejection_curve",
    "monte_carlo_band",
    "clopper_pearson",
]


@dataclass(frozen=True)
class CaseSpec:
    r"""A bundled two-sample problem.

    :math:`X \sim \mathcal N(0, I_d)` and :math:`Y` the same except for its first
    coordinate, :math:`Y_1 \sim \mathcal N(\texttt{shift}, \texttt{variance})`.

    Parameters
    ----------
    name : str
        Short key (``"SG"``, ``"GMD"``, ``"GVD"`` in :data:`CASES`).
    label : str
        Human-readable name.
    description : str
        One line saying what differs between X and Y.
    default_dim : int
        Dimension d used when none is given.
    h0_true : bool
        Whether X and Y have the same distribution (the curves then show type-I error, otherwise power).
    shift : float, default 0.0
        Mean of :math:`Y_1`.
    variance : float, default 1.0
        Variance of :math:`Y_1`.
    """

    name: str
    label: str
    description: str
    default_dim: int
    h0_true: bool
    shift: float = 0.0
    variance: float = 1.0

    def sample(self, n: int, dim: int, rng: np.random.Generator) -> tuple[np.ndarray, np.ndarray]:
        X = rng.standard_normal((n, dim))
        Y = rng.standard_normal((n, dim))
        if self.shift:
            Y[:, 0] += self.shift
        if self.variance != 1.0:
            Y[:, 0] *= math.sqrt(self.variance)
        return X, Y


CASES: dict[str, CaseSpec] = {
    "SG": CaseSpec("SG", "Same Gaussian", "X, Y ~ N(0, I): H0 is true (type-I error)", 50, True),
    "GMD": CaseSpec("GMD", "Gaussian mean difference", "X ~ N(0, I), Y ~ N(e1, I): the first mean differs by 1",
                    100, False, shift=1.0),
    "GVD": CaseSpec("GVD", "Gaussian variance difference",
                    "X ~ N(0, I), Y ~ N(0, diag(2, 1, ..., 1)): the first variance doubles", 50, False, variance=2.0),
}

#: Largest n * dim a lab case generates (per sample).
MAX_CASE_VALUES = 20_000_000


@dataclass
class CaseData:
    """One draw of a bundled case: private samples plus a public sample for the feature map.

    Parameters
    ----------
    name : str
        Key of the case in :data:`CASES`.
    X, Y : ndarray of shape (n, dim)
        The private samples (the data the tests privatise).
    public : tuple of two ndarrays of shape (n_public, dim)
        Public draws from the distributions of X and Y, standing in for a held-out
        split; only they are used to build the feature map.
    dim : int
        Dimension of the samples.
    h0_true : bool
        Whether X and Y have the same distribution.
    seed : int or None
        Seed of the draw when ``random_state`` was an int or None; ``None`` when a
        Generator was passed.

    Attributes
    ----------
    n : int
        Number of rows of each private sample.
    """

    name: str
    X: np.ndarray
    Y: np.ndarray
    public: tuple[np.ndarray, np.ndarray]
    dim: int
    h0_true: bool
    seed: int | None

    @property
    def n(self) -> int:
        return int(self.X.shape[0])


def make_case(name: str, n: int, *, dim: int | None = None, n_public: int = 500, random_state=None) -> CaseData:
    """Draw a bundled case: ``n`` private pairs and ``n_public`` public rows from each distribution.

    Parameters
    ----------
    name : {"SG", "GMD", "GVD"}
        The case (:data:`CASES`).
    n : int
        Size of each private sample.
    dim : int, optional
        Dimension (default: the case's, 50 or 100).
    n_public : int
        Size of each public sample (used only to build the feature map).
    random_state : None, int or Generator
    """
    check_in(name, CASES, name="case")
    spec = CASES[name]
    n = check_positive_int(n, name="n", minimum=2)
    dim = spec.default_dim if dim is None else check_positive_int(dim, name="dim")
    n_public = check_positive_int(n_public, name="n_public", minimum=2)
    if (n + n_public) * dim > MAX_CASE_VALUES:
        raise ValueError(f"n={n}, n_public={n_public}, dim={dim} is too large for the lab "
                         f"(more than {MAX_CASE_VALUES} values per sample).")
    rng, seed = check_random_state(random_state)
    X, Y = spec.sample(n, dim, rng)
    Xp, Yp = spec.sample(n_public, dim, rng)
    return CaseData(name, X, Y, (Xp, Yp), dim, spec.h0_true, seed)


def case_features(case: CaseData, *, kind: str = "me", n_features: int = 5, random_state=None) -> FeatureMap:
    """Feature map built from the case's **public** sample only.

    ME: locations drawn from the public rows, Gaussian kernel with the median
    heuristic length scale of the public rows; SCF: width from the public
    rows' spread (see :func:`~dpkme.two_sample.features.make_features`).

    Parameters
    ----------
    case : CaseData
        A draw of :func:`make_case`; only ``case.public`` is read.
    kind : {"me", "scf", "rff"}, default "me"
        Feature map kind.
    n_features : int, default 5
        ME: number of locations J; SCF: number of frequencies (2 x as many features);
        RFF: number of features (even).
    random_state : None, int or Generator, optional
        Locations, frequencies and the length-scale subsample.

    Returns
    -------
    FeatureMap
        A public feature map of input dimension ``case.dim``.

    Examples
    --------
    >>> from dpkme.two_sample.lab import case_features, make_case
    >>> case = make_case("GMD", 100, dim=3, n_public=50, random_state=0)
    >>> case_features(case, kind="scf", n_features=2, random_state=0)
    SCFFeatures(dim=3, n_features=4)
    """
    check_in(kind, FEATURE_KINDS, name="kind")
    return make_features(kind, public_sample=case.public, n_features=n_features, random_state=random_state)


def split_public(X, Y, *, public_fraction: float = 0.1, random_state=None):
    """Split uploaded samples into a publishable part (for the feature map) and the part to test.

    For uploaded data, the feature map must come from rows the data owner
    declares **publishable** (the paper's "publishable subset"): they are used
    in the clear to choose locations and bandwidths (ME locations *are* public
    rows) and are excluded from the private test. Each sample is split on its
    own by a stream of the seed, so its publishable rows depend on the seed, the
    fraction and its own size only, never on the other sample; equal-sized
    samples get the same row indices (pairs stay together). The alternative that touches no data at all:
    SCF/RFF features with a declared ``scale`` (:func:`make_features`).

    Parameters
    ----------
    X : array-like of shape (n_x, d)
        First sample (at least 2 rows).
    Y : array-like of shape (n_y, d)
        Second sample (at least 2 rows, same number of columns as ``X``).
    public_fraction : float, default 0.1
        Fraction of the rows of each sample made public, in (0, 1); it must leave at
        least one public and one test row.
    random_state : None, int or Generator, optional
        Seed of the random split; ``None`` draws one (recorded in ``info["seed"]``).

    Returns
    -------
    X_test, Y_test : ndarray
        Rows that enter the private test.
    public : tuple (X_public, Y_public)
        The publishable rows, for the feature map.
    info : dict
        Sizes, fraction and the seed of the split: ``public_fraction``, ``seed``,
        ``paired_split`` (same indices for X and Y), ``n_public`` and ``n_test``.

    Examples
    --------
    >>> import numpy as np
    >>> from dpkme.two_sample.lab import split_public
    >>> X = np.arange(40.0).reshape(20, 2)
    >>> X_test, Y_test, (X_pub, Y_pub), info = split_public(X, X + 1.0, public_fraction=0.25, random_state=0)
    >>> X_test.shape, X_pub.shape, info["paired_split"], bool(np.array_equal(Y_pub, X_pub + 1.0))
    ((15, 2), (5, 2), True, True)
    """
    from ..preprocessing import public_private_split

    X = check_array(X, name="X", min_rows=2)
    Y = check_array(Y, name="Y", min_rows=2, n_features=X.shape[1])
    rng, seed = check_random_state(random_state)
    # each sample is split by a stream of its own from the same root: which of its rows are publishable depends on
    # the seed, the fraction and its own size only, never on its partner (a file tested privately next to one
    # partner must not have those rows made public next to another); equal sizes give the same indices
    root = int(seed) if seed is not None else int(rng.integers(0, 2**63 - 1))
    Xp, Xt, _ = public_private_split(X, public_fraction=public_fraction, random_state=np.random.default_rng(root))
    Yp, Yt, _ = public_private_split(Y, public_fraction=public_fraction, random_state=np.random.default_rng(root))
    info = {"public_fraction": float(public_fraction), "seed": seed, "paired_split": X.shape[0] == Y.shape[0],
            "n_public": (int(Xp.shape[0]), int(Yp.shape[0])), "n_test": (int(Xt.shape[0]), int(Yt.shape[0]))}
    return Xt, Yt, (Xp, Yp), info


# --------------------------------------------------------------------------- curves
LAB_METHODS: dict[str, str] = {
    "nonprivate": "non-private ME/SCF test, chi-square null (no privacy)",
    "tcmc": "trusted curator: private mean and second moment, parametric-bootstrap null",
    "tcmc-wchi2": "trusted curator, weighted chi-square null (paper's null for our statistic)",
    "tcmc-naive": "trusted curator statistic with the chi-square null (ignores the noise)",
    "paper": "the paper's TCMC: 50/50 split, no noise-aware term, weighted chi-square null",
    "paper-naive": "the paper's TCMC statistic with the chi-square null (inflated type-I error)",
    "nte": "no trusted entity: each sample privatised by its holder, parametric-bootstrap null",
}
_PARENT = {"tcmc-naive": "tcmc", "paper-naive": "paper"}


def clopper_pearson(k: int, n: int, level: float = 0.95) -> tuple[float, float]:
    r"""Exact binomial confidence interval for a proportion ``k / n``.

    Clopper--Pearson: the ends are the :math:`(1-\texttt{level})/2` and
    :math:`(1+\texttt{level})/2` quantiles of the beta distributions
    :math:`\mathrm{Beta}(k, n-k+1)` and :math:`\mathrm{Beta}(k+1, n-k)` (0 for
    ``k == 0``, 1 for ``k == n``).

    Parameters
    ----------
    k : int
        Number of successes (rejections), ``0 <= k <= n``.
    n : int
        Number of trials (repetitions); ``n <= 0`` gives the uninformative ``(0, 1)``.
    level : float, default 0.95
        Confidence level, in (0, 1).

    Returns
    -------
    tuple of float
        ``(low, high)``, the interval's ends in [0, 1].

    Examples
    --------
    >>> from dpkme.two_sample.lab import clopper_pearson
    >>> low, high = clopper_pearson(0, 20)
    >>> low, round(high, 4)
    (0.0, 0.1684)
    """
    if n <= 0:
        return (0.0, 1.0)
    a = 1.0 - level
    lo = 0.0 if k == 0 else float(stats.beta.ppf(a / 2, k, n - k + 1))
    hi = 1.0 if k == n else float(stats.beta.ppf(1 - a / 2, k + 1, n - k))
    return lo, hi


def monte_carlo_band(alpha: float, repetitions: int, level: float = 0.95) -> tuple[float, float]:
    r"""Central ``level`` range of the rejection rate of an exact level-``alpha`` test over ``repetitions`` runs.

    The rejection count of such a test is :math:`\mathrm{Binomial}(\texttt{repetitions}, \alpha)`;
    the range is its :math:`(1-\texttt{level})/2` and :math:`(1+\texttt{level})/2` quantiles
    divided by ``repetitions``. A type-I error curve outside it is evidence that the test
    is not exact.

    Parameters
    ----------
    alpha : float
        Nominal level of the test, in (0, 1).
    repetitions : int
        Number of independent runs (> 0).
    level : float, default 0.95
        Probability the range covers, in (0, 1).

    Returns
    -------
    tuple of float
        ``(low, high)`` rejection rates.

    Examples
    --------
    >>> from dpkme.two_sample.lab import monte_carlo_band
    >>> monte_carlo_band(0.05, 200)
    (0.02, 0.08)
    """
    lo = stats.binom.ppf((1 - level) / 2, repetitions, alpha) / repetitions
    hi = stats.binom.ppf(1 - (1 - level) / 2, repetitions, alpha) / repetitions
    return float(lo), float(hi)


@dataclass
class CurveResult:
    """Rejection rates of several methods along ``epsilon`` or ``n``.

    Parameters
    ----------
    case : str
        Key of the case in :data:`CASES`.
    vary : {"epsilon", "n"}
        The parameter varied along the curve.
    values : list of float
        Values of the varied parameter.
    methods : list of str
        Keys of :data:`LAB_METHODS`.
    rejections : dict method -> list of int
        Number of rejections at each value.
    repetitions : list of int
        Completed repetitions at each value (0 where a stopped run never got).
    alpha : float
        Level of the tests.
    params : dict, optional
        Fixed parameters (n or epsilon, delta, dim, features, test options).
    seed : int or None, default None
        Root seed; repetition r at value index i uses ``SeedSequence([seed, i, r])``.
    seconds : list of float, optional
        Wall time per value.
    completed : bool, default True
        False if stopped by the progress callback.

    Examples
    --------
    >>> from dpkme.two_sample.lab import CurveResult
    >>> curve = CurveResult(case="SG", vary="epsilon", values=[1.0, 2.0], methods=["tcmc"],
    ...                     rejections={"tcmc": [1, 0]}, repetitions=[20, 0], alpha=0.05, completed=False)
    >>> curve.rates()
    {'tcmc': [0.05, nan]}
    """

    case: str
    vary: str
    values: list
    methods: list
    rejections: dict[str, list[int]]
    repetitions: list[int]
    alpha: float
    params: dict[str, Any] = field(default_factory=dict)
    seed: int | None = None
    seconds: list[float] = field(default_factory=list)
    completed: bool = True

    def rates(self) -> dict[str, list[float]]:
        """Rejection rate of every method at every value (nan where nothing ran)."""
        return {m: [k / r if r else float("nan") for k, r in zip(v, self.repetitions)]
                for m, v in self.rejections.items()}

    def intervals(self, level: float = 0.95) -> dict[str, list[tuple[float, float]]]:
        """Clopper-Pearson intervals of the rates."""
        return {m: [clopper_pearson(k, r, level) for k, r in zip(v, self.repetitions)]
                for m, v in self.rejections.items()}

    def band(self, level: float = 0.95) -> list[tuple[float, float]]:
        """Monte-Carlo band of an exact level-alpha test at every value (for type-I plots)."""
        return [monte_carlo_band(self.alpha, r, level) if r else (float("nan"), float("nan"))
                for r in self.repetitions]

    def to_dict(self) -> dict[str, Any]:
        return {
            "case": self.case,
            "vary": self.vary,
            "values": list(self.values),
            "methods": list(self.methods),
            "rejections": {m: list(v) for m, v in self.rejections.items()},
            "repetitions": list(self.repetitions),
            "rates": self.rates(),
            "intervals": {m: [list(t) for t in v] for m, v in self.intervals().items()},
            "band": [list(t) for t in self.band()],
            "alpha": self.alpha,
            "params": dict(self.params),
            "seed": self.seed,
            "seconds": list(self.seconds),
            "completed": self.completed,
        }


def _run_methods(case: CaseData, methods, *, epsilon, delta, features, alpha, rng, test_kwargs) -> dict[str, bool]:
    out: dict[str, bool] = {}
    seeds = rng.integers(0, 2**63 - 1, size=2 * len(methods) + 2)
    k = 0
    done: dict[str, Any] = {}
    for m in methods:
        base = _PARENT.get(m, m)
        if base not in done:
            s1, s2 = int(seeds[k]), int(seeds[k + 1])
            k += 2
            if base == "nonprivate":
                done[base] = nonprivate_test(case.X, case.Y, features=features, alpha=alpha)
            elif base == "tcmc":
                done[base] = tcmc_test(case.X, case.Y, features=features, epsilon=epsilon, delta=delta, alpha=alpha,
                                       random_state=s1, null_random_state=s2, **test_kwargs)
            elif base == "tcmc-wchi2":
                done[base] = tcmc_test(case.X, case.Y, features=features, epsilon=epsilon, delta=delta, alpha=alpha,
                                       random_state=s1, null_random_state=s2,
                                       **{**test_kwargs, "null": "weighted-chi2"})
            elif base == "paper":
                done[base] = tcmc_test(case.X, case.Y, features=features, epsilon=epsilon, delta=delta, alpha=alpha,
                                       random_state=s1, null_random_state=s2, mean_fraction=0.5,
                                       calibration="split", noise_aware=False, null="weighted-chi2")
            elif base == "nte":
                done[base] = nte_test(case.X, case.Y, features=features, epsilon=epsilon, delta=delta, alpha=alpha,
                                      random_state=s1, null_random_state=s2, **test_kwargs)
        r = done[base]
        out[m] = bool(r.naive_p_value <= alpha) if m in _PARENT else bool(r.reject)
    return out


def rejection_curve(
    case: str,
    *,
    vary: str = "epsilon",
    values=(0.5, 1.0, 2.5, 5.0),
    methods=("nonprivate", "tcmc", "tcmc-naive"),
    n: int = 5000,
    epsilon: float = 1.0,
    delta: float = 1e-5,
    repetitions: int = 200,
    alpha: float = 0.05,
    dim: int | None = None,
    feature_kind: str = "me",
    n_features: int = 5,
    n_public: int = 500,
    random_state=0,
    progress: Callable[[int, int, dict], Any] | None = None,
    **test_kwargs,
) -> CurveResult:
    """Type-I error (SG) or power (GMD, GVD) of several methods along ``epsilon`` or ``n``.

    Parameters
    ----------
    case : {"SG", "GMD", "GVD"}
    vary : {"epsilon", "n"}
        The parameter along the curve; the other one is fixed by ``n`` or ``epsilon``.
    values : sequence
        Values of the varied parameter.
    methods : sequence of str
        Keys of :data:`LAB_METHODS`.
    n, epsilon, delta : fixed parameters
    repetitions : int
        Repetitions per value (e.g. 200).
    alpha : float
    dim, feature_kind, n_features, n_public : case and feature-map settings
    random_state : int or None
        Root seed (recorded); ``None`` draws one.
    progress : callable, optional
        ``progress(done, total, info)`` after every repetition, ``info`` =
        ``{"value", "value_index", "repetition", "rejections", "elapsed"}``.
        Return ``False`` to stop.
    **test_kwargs
        Passed to the private tests (e.g. ``mean_fraction``, ``n_null``).
    """
    check_in(case, CASES, name="case")
    check_in(vary, ("epsilon", "n"), name="vary")
    methods = list(methods)
    if not methods:
        raise ValueError("methods is empty; choose from " + ", ".join(LAB_METHODS) + ".")
    for m in methods:
        check_in(m, LAB_METHODS, name="method")
    values = list(values)
    if not values:
        raise ValueError("values is empty.")
    if vary == "epsilon":
        values = [check_epsilon(v, name="epsilon value") for v in values]
        n = check_positive_int(n, name="n", minimum=2)
    else:
        values = [check_positive_int(v, name="n value", minimum=2) for v in values]
        epsilon = check_epsilon(epsilon)
    delta = check_delta(delta)
    R = check_positive_int(repetitions, name="repetitions")
    alpha = check_positive_float(alpha, name="alpha")
    check_in(feature_kind, FEATURE_KINDS, name="feature_kind")
    if isinstance(random_state, np.random.Generator):
        raise ValueError("rejection_curve needs an int (or None) random_state so that every repetition is replayable.")
    _, seed = check_random_state(random_state)
    rej = {m: [0] * len(values) for m in methods}
    reps = [0] * len(values)
    secs = [0.0] * len(values)
    total = R * len(values)
    done = 0
    t_start = time.perf_counter()
    stopped = False
    for i, v in enumerate(values):
        t0 = time.perf_counter()
        n_i = v if vary == "n" else n
        eps_i = v if vary == "epsilon" else epsilon
        for r in range(R):
            rng = np.random.default_rng(np.random.SeedSequence([seed, i, r]))
            data = make_case(case, n_i, dim=dim, n_public=n_public, random_state=rng)
            feats = case_features(data, kind=feature_kind, n_features=n_features, random_state=rng)
            dec = _run_methods(data, methods, epsilon=eps_i, delta=delta, features=feats, alpha=alpha, rng=rng,
                               test_kwargs=test_kwargs)
            for m, d in dec.items():
                rej[m][i] += int(d)
            reps[i] += 1
            done += 1
            if progress is not None:
                info = {"value": v, "value_index": i, "repetition": r, "elapsed": time.perf_counter() - t_start,
                        "rejections": {m: rej[m][i] for m in methods}}
                if progress(done, total, info) is False:
                    stopped = True
                    break
        secs[i] = time.perf_counter() - t0
        if stopped:
            break
    params = {"n": n if vary == "epsilon" else None, "epsilon": epsilon if vary == "n" else None, "delta": delta,
              "dim": dim if dim is not None else CASES[case].default_dim, "feature_kind": feature_kind,
              "n_features": n_features, "n_public": n_public, "repetitions_requested": R,
              "test_kwargs": {k: v for k, v in test_kwargs.items()}}
    return CurveResult(case=case, vary=vary, values=values, methods=methods, rejections=rej, repetitions=reps,
                       alpha=alpha, params=params, seed=seed, seconds=secs, completed=not stopped)
