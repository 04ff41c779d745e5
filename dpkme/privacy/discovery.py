r"""Private discovery of a schema's domain: bounds and category lists released with a charge.

A :class:`~dpkme.schema.TableSchema` must be declared without looking at the private rows. When no public
knowledge gives a column's bounds or its list of categories, they can be **released privately** -- as
their own differentially private step whose charge goes to the ledger, composed with the releases that
use them (which then treat them as public: post-processing):

:func:`private_bounds`
    Two DP quantiles (by default the 1 % and 99 % ones) of a numeric column inside a coarse range
    declared in advance, by the exponential mechanism over that range; pure :math:`\varepsilon`-DP.
:func:`private_categories`
    The categories that occur often enough, with noisy counts: Laplace or Gaussian noise on the counts
    of the observed categories and a threshold that makes the release of a rare (or absent) category
    :math:`\delta`-unlikely (the stability-based histogram); :math:`(\varepsilon, \delta)`-DP.

Both support both neighbouring relations of dpkme (:data:`dpkme.privacy.sensitivity.NEIGHBOURING`):
``"replace-one"`` (one row replaced, :math:`N` public) and ``"add-remove"`` (one row added or removed);
each docstring states the sensitivity and the proof for both. A missing value counts as a row with no
value: it is dropped, which the proofs allow (the number of non-missing values may change by one).

Only a run with fresh OS entropy (``random_state=None``) is private. A seeded run is a replayable
teaching demo: its charge's ``details`` record ``noise_source="seeded"`` and why it is not private (as
:func:`dpkme.privacy.leaks.privacy_claim` labels seeded releases).

References
----------
A. Smith. Privacy-preserving statistical estimation with optimal convergence rates. STOC 2011 (the
exponential mechanism for quantiles over intervals between sorted data points).

J. Gillenwater, M. Joseph, A. Kulesza. Differentially private quantiles. ICML 2021.

F. McSherry, K. Talwar. Mechanism design via differential privacy. FOCS 2007.

A. Korolova, K. Kenthapadi, N. Mishra, A. Ntoulas. Releasing search queries and clicks privately.
WWW 2009 (noisy counts above a threshold for an unknown set of items).

S. Vadhan. The complexity of differential privacy. In: Tutorials on the Foundations of Cryptography,
2017 (the stability-based histogram).

R. J. Wilson, C. Y. Zhang, W. Lam, D. Desfontaines, D. Simmons-Marengo, B. Gipson. Differentially
private SQL with bounded user contribution. PoPETs 2020 (thresholding with Gaussian noise).
"""

from __future__ import annotations

import json
import math
import numbers
from collections import Counter
from collections.abc import Hashable, Iterable
from dataclasses import dataclass, field
from typing import Any

import numpy as np
import numpy.typing as npt
import pandas as pd
from scipy.special import ndtri_exp

from .._validation import _short, check_delta, check_epsilon, check_in, noise_rng
from .accounting import PrivacyCharge, pure_dp_charge
from .calibration import _ratio_up, analytic_sigma
from .result import charge_record
from .sensitivity import NEIGHBOURING
from .spec import NeighbouringRelation

__all__ = [
    "PrivateBounds",
    "PrivateCategories",
    "private_bounds",
    "private_categories",
    "category_threshold",
]

CATEGORY_MECHANISMS = ("gaussian", "laplace")


def _noise_details(source: str) -> dict[str, Any]:
    """``noise_source`` for a charge's details, and why the step is not private when its noise is replayable."""
    from .leaks import NOT_PRIVATE_NOISE, PRIVATE_NOISE_SOURCES

    out: dict[str, Any] = {"noise_source": source}
    if source not in PRIVATE_NOISE_SOURCES:
        out["not_private_because"] = NOT_PRIVATE_NOISE.get(source, f"noise source {source!r}")
    return out


# --------------------------------------------------------------------------- bounds
@dataclass(frozen=True)
class PrivateBounds:
    r"""Bounds of a numeric column released by :func:`private_bounds`.

    Parameters
    ----------
    lower, upper : float
        The released bounds (:math:`\varepsilon`-DP; safe to publish and to declare in a schema).
    quantiles : tuple of float
        The quantile levels that were released (low, high).
    declared : tuple of float
        The coarse range declared in advance, inside which the quantiles were searched.
    epsilon : float
        Total budget of the step.
    neighbouring : str
        The neighbouring relation of the guarantee.
    charge : PrivacyCharge
        For the ledger: pure DP (``mechanism="exponential"``), one repetition per quantile at
        :math:`\varepsilon/2` each; ``details["noise_source"]`` says where the noise came from (and
        ``details["not_private_because"]`` why a seeded run is not private).
    seed : int or None
        The seed of a replayable (teaching) run; ``None`` for a real release.
    noise_source : str
        ``"os-entropy"``, ``"seeded"`` or ``"generator"`` (:func:`dpkme._validation.noise_rng`).
    """

    lower: float
    upper: float
    quantiles: tuple[float, ...]
    declared: tuple[float, float]
    epsilon: float
    neighbouring: str
    charge: PrivacyCharge
    seed: int | None = None
    noise_source: str = "os-entropy"

    def to_dict(self) -> dict[str, Any]:
        """Everything that may be published (the released bounds and how they were released)."""
        return {"lower": self.lower, "upper": self.upper, "quantiles": list(self.quantiles),
                "declared": list(self.declared), "epsilon": self.epsilon, "neighbouring": self.neighbouring,
                "mechanism": "exponential (DP quantiles)", "seed": self.seed, "noise_source": self.noise_source}

    def metadata(self) -> dict[str, Any]:
        """:meth:`to_dict` plus the record of :attr:`charge` (the :class:`~dpkme.privacy.result.PrivateResult` protocol)."""
        return {**self.to_dict(), "charge": charge_record(self.charge)}

    def to_json(self) -> str:
        """:meth:`metadata` as JSON text."""
        return json.dumps(_jsonable(self.metadata()), indent=2, default=str)


def _numeric_values(values: npt.ArrayLike) -> npt.NDArray[np.float64]:
    if isinstance(values, (pd.Series, pd.Index)):
        if pd.api.types.is_bool_dtype(values) or not pd.api.types.is_numeric_dtype(values):
            raise ValueError(f"values must be numbers (dtype {values.dtype}); convert dates to days first.")
        arr: npt.NDArray[np.float64] = values.to_numpy(dtype=np.float64, na_value=np.nan)
    else:
        try:
            arr = np.asarray(values, dtype=np.float64)
        except (TypeError, ValueError):
            raise ValueError(f"values must be numbers, got {_short(values)}.") from None
    if arr.ndim != 1:
        raise ValueError(f"values must be 1-D (one column), got shape {arr.shape}.")
    return arr


def _real_or_none(v: object) -> float | None:
    if isinstance(v, (bool, np.bool_)) or not isinstance(v, (numbers.Real, np.integer, np.floating)):
        return None
    return float(v)


def _dp_quantile(x_sorted: npt.NDArray[np.float64], *, q: float, epsilon: float, lower: float, upper: float,
                 rng: np.random.Generator) -> float:
    """One draw of the exponential mechanism for the q-quantile (Smith 2011), exact sampling."""
    n = x_sorted.shape[0]
    edges = np.concatenate(([lower], x_sorted, [upper]))
    lengths = np.diff(edges)                                 # interval i = [edges[i], edges[i+1]], rank i
    ranks = np.arange(n + 1, dtype=np.float64)
    utility = -np.abs(ranks - q * n)
    with np.errstate(divide="ignore"):
        logw = np.log(lengths) + utility * (epsilon / 2.0)   # sensitivity of the utility: 1
    score = logw + rng.gumbel(size=logw.shape[0])
    score[~np.isfinite(logw)] = -np.inf
    i = int(np.argmax(score))
    return float(edges[i] + rng.uniform() * lengths[i])


def private_bounds(values: npt.ArrayLike, *, epsilon: float, lower: float, upper: float,
                   quantiles: Iterable[float] = (0.01, 0.99), neighbouring: str = "replace-one",
                   random_state: int | np.random.Generator | None = None,
                   label: str = "private bounds (DP quantiles)") -> PrivateBounds:
    r"""Bounds of a numeric column as two DP quantiles inside a declared coarse range (pure :math:`\varepsilon`-DP).

    Each quantile :math:`q` is released by the exponential mechanism over the declared range
    :math:`[a, b]` (Smith 2011): with the non-missing values clipped to :math:`[a, b]` and sorted,
    :math:`a = x_{(0)} \le x_{(1)} \le \dots \le x_{(n)} \le x_{(n+1)} = b`, an output :math:`o` in the
    interval :math:`(x_{(i)}, x_{(i+1)})` has :math:`i` values below it and utility
    :math:`u(D, o) = -|i - qn|`; the mechanism samples :math:`o` with density

    .. math:: p(o) \propto \exp\Bigl(\frac{\varepsilon_q\, u(D, o)}{2\Delta_u}\Bigr) \text{ on } [a, b],

    exactly: an interval with probability proportional to its length times
    :math:`e^{\varepsilon_q u_i / 2}`, then a uniform point in it. Each quantile gets
    :math:`\varepsilon_q = \varepsilon / (\text{number of quantiles})`; the two results are sorted
    (post-processing).

    Utility: the empty parts of the declared range have a large length, so with few rows, a small
    :math:`\varepsilon` or an extreme quantile the result often lies outside the data's range (a lower
    bound too low, an upper bound too high): a wider box, which clips less and resolves less. About
    :math:`\varepsilon_q q n \gtrsim 2\ln(\text{range}/\text{spacing of the values})` is needed for a
    bound near the quantile; declare a tighter coarse range or spend more :math:`\varepsilon` otherwise.

    Guarantee
    ---------
    :math:`\varepsilon`-DP under ``neighbouring`` (``"replace-one"`` or ``"add-remove"``). Sensitivity:
    for every :math:`o`, changing one row changes the count :math:`c(o)` of values below :math:`o` by at
    most 1 and the number :math:`n` of non-missing values by at most 1, and when :math:`n` changes by one
    :math:`c(o)` changes by 0 or 1 in the same direction, so :math:`c(o) - qn` moves by at most
    :math:`\max(1, q, 1 - q) = 1`: :math:`\Delta_u = 1`. The exponential mechanism with base measure the
    Lebesgue measure on :math:`[a, b]` is then :math:`\varepsilon_q`-DP (McSherry & Talwar 2007), and the
    quantiles compose to :math:`\varepsilon` (basic composition; the charge records them as
    ``count`` pure-DP steps, which RDP/PLD accounting may compose to less). The declared range, the
    quantile levels and :math:`\varepsilon` must not depend on the data.

    Parameters
    ----------
    values : array-like (N,)
        The private column (numbers; NaN = missing, dropped). Convert dates to days first.
    epsilon : float
        Total budget of this step (> 0). Add the returned ``charge`` to the ledger.
    lower, upper : float
        The coarse range declared in advance (public knowledge, e.g. "an adult's weight lies in
        [0, 500] kg"); values outside are clipped to it and the bounds lie inside it.
    quantiles : tuple of two floats, default=(0.01, 0.99)
        Quantile levels of the released lower and upper bound, :math:`0 \le q_1 < q_2 \le 1`; about a
        fraction :math:`q_1` of the values lie below the lower bound (they will be clipped by a schema
        that declares it), :math:`1 - q_2` above the upper one.
    neighbouring : {"replace-one", "add-remove"}, default="replace-one"
        The relation stated in the charge (the sensitivity is 1 under both).
    random_state : None, int or numpy.random.Generator
        ``None``: OS entropy, no seed recorded (a real release); an int: a **teaching replay, not a
        private release** -- anyone who knows the seed regenerates the noise, so the bounds are then
        plain statistics of the private rows (``noise_source="seeded"``, recorded in the charge's
        details with the reason, as :func:`dpkme.privacy.leaks.privacy_claim` labels seeded releases).
    label : str
        Label of the charge.

    Returns
    -------
    PrivateBounds

    Examples
    --------
    >>> import numpy as np
    >>> x = np.random.default_rng(0).normal(170, 10, size=2000)        # private heights (cm)
    >>> b = private_bounds(x, epsilon=1.0, lower=0, upper=300, random_state=1)
    >>> 130 < b.lower < 160 < 180 < b.upper < 210, b.charge.epsilon * b.charge.count
    (True, 1.0)
    """
    eps = check_epsilon(epsilon)
    check_in(neighbouring, NEIGHBOURING, name="neighbouring")
    lo, hi = _real_or_none(lower), _real_or_none(upper)
    if lo is None or hi is None or not (math.isfinite(lo) and math.isfinite(hi)) or not lo < hi:
        raise ValueError(f"declare a finite coarse range lower < upper (public knowledge), got lower={_short(lower)}, "
                         f"upper={_short(upper)}.")
    if not math.isfinite(hi - lo):
        raise ValueError(f"the coarse range is too wide: upper - lower overflows for lower={lo!r}, upper={hi!r} (it "
                         "must be finite); declare a narrower range, or rescale the column.")
    try:
        qs = tuple(float(q) for q in quantiles)
    except (TypeError, ValueError):
        raise ValueError(f"quantiles must be two numbers in [0, 1], got {_short(quantiles)}.") from None
    if len(qs) != 2 or not 0.0 <= qs[0] < qs[1] <= 1.0:
        raise ValueError(f"quantiles must be two levels 0 <= q1 < q2 <= 1, got {_short(quantiles)}.")
    x = _numeric_values(values)
    x = np.sort(np.clip(x[~np.isnan(x)], lo, hi))
    rng, seed, source = noise_rng(random_state)
    eps_q = eps / len(qs)
    out = sorted(_dp_quantile(x, q=q, epsilon=eps_q, lower=lo, upper=hi, rng=rng) for q in qs)
    del x  # nothing below reads the data
    b_lo, b_hi = out
    if not b_lo < b_hi:   # a measure-zero tie: widen (post-processing)
        b_hi = min(hi, b_lo + 1e-9 * (hi - lo))
        b_lo = b_hi - 1e-9 * (hi - lo)
    charge = pure_dp_charge(label, epsilon=eps_q, mechanism="exponential", count=len(qs), relation=neighbouring,
                            details={"quantiles": list(qs), "declared": [lo, hi],
                                     "utility": "-|#(values below o) - q n|", "sensitivity": 1.0,
                                     **_noise_details(source)})
    return PrivateBounds(lower=b_lo, upper=b_hi, quantiles=qs, declared=(lo, hi), epsilon=eps,
                         neighbouring=neighbouring, charge=charge, seed=seed, noise_source=source)


# --------------------------------------------------------------------------- categories
@dataclass(frozen=True)
class PrivateCategories:
    r"""Categories of a column released by :func:`private_categories`.

    Parameters
    ----------
    categories : tuple
        The released categories, most frequent (by noisy count) first.
    noisy_counts : tuple of float
        Their noisy counts (part of the DP output; estimates of the true counts).
    threshold : float
        :math:`\tau`: a category is released when its noisy count exceeds it.
    noise_scale : float
        :math:`\sigma` (Gaussian) or :math:`b` (Laplace) of the noise on each count.
    mechanism : str
        ``"gaussian"`` or ``"laplace"``.
    epsilon, delta : float
        The guarantee.
    neighbouring : str
        The neighbouring relation of the guarantee.
    charge : PrivacyCharge
        For the ledger (``mechanism="approx-dp"``); ``details["noise_source"]`` says where the noise came
        from (and ``details["not_private_because"]`` why a seeded run is not private).
    seed : int or None
        The seed of a replayable (teaching) run; ``None`` for a real release.
    noise_source : str
        ``"os-entropy"``, ``"seeded"`` or ``"generator"``.
    """

    categories: tuple[Hashable, ...]
    noisy_counts: tuple[float, ...]
    threshold: float
    noise_scale: float
    mechanism: str
    epsilon: float
    delta: float
    neighbouring: str
    charge: PrivacyCharge = field(repr=False)
    seed: int | None = None
    noise_source: str = "os-entropy"

    def to_dict(self) -> dict[str, Any]:
        """Everything that may be published (the released categories, their noisy counts, the parameters)."""
        return {"categories": list(self.categories), "noisy_counts": list(self.noisy_counts),
                "threshold": self.threshold, "noise_scale": self.noise_scale, "mechanism": self.mechanism,
                "epsilon": self.epsilon, "delta": self.delta, "neighbouring": self.neighbouring,
                "seed": self.seed, "noise_source": self.noise_source}

    def metadata(self) -> dict[str, Any]:
        """:meth:`to_dict` plus the record of :attr:`charge` (the :class:`~dpkme.privacy.result.PrivateResult` protocol)."""
        return {**self.to_dict(), "charge": charge_record(self.charge)}

    def to_json(self) -> str:
        """:meth:`metadata` as JSON text."""
        return json.dumps(_jsonable(self.metadata()), indent=2, default=str)


def _jsonable(obj: Any) -> Any:
    """Released values as JSON types (numpy scalars become Python numbers; category labels stay as they are)."""
    if isinstance(obj, dict):
        return {str(k): _jsonable(v) for k, v in obj.items()}
    if isinstance(obj, (list, tuple)):
        return [_jsonable(v) for v in obj]
    if isinstance(obj, (np.generic,)):
        return obj.item()
    if isinstance(obj, (pd.Timestamp,)):
        return obj.isoformat()
    return obj


def category_threshold(*, epsilon: float, delta: float, mechanism: str = "gaussian",
                       neighbouring: str = "replace-one") -> tuple[float, float]:
    r"""Noise scale and threshold of :func:`private_categories` (public: they depend on the parameters only).

    With :math:`\Delta_1 = 2, \Delta_2 = \sqrt2` (replace-one) or :math:`\Delta_1 = \Delta_2 = 1`
    (add-remove), and :math:`L = \ln(1 + e^\varepsilon)`:

    * Laplace: :math:`b = \Delta_1/\varepsilon` and :math:`\tau = b\,(L - \ln(2\delta))`, so that
      :math:`P[\mathrm{Lap}(b) > \tau] = \delta/(1 + e^\varepsilon)`;
    * Gaussian: :math:`\sigma` of the analytic Gaussian mechanism for :math:`(\varepsilon, \delta/2)` and
      :math:`\Delta_2` (:func:`dpkme.privacy.calibration.analytic_sigma`), and
      :math:`\tau = \sigma\,\Phi^{-1}(1 - p_0)` with :math:`p_0 = \delta / (2(1 + e^\varepsilon))`.

    Both are rounded up slightly (toward a stricter threshold).

    Parameters
    ----------
    epsilon : float
        > 0.
    delta : float
        In (0, 1).
    mechanism : {"gaussian", "laplace"}, default="gaussian"
        The noise on the counts.
    neighbouring : {"replace-one", "add-remove"}, default="replace-one"
        The relation of the guarantee.

    Returns
    -------
    scale, threshold : float
        :math:`\sigma` or :math:`b`, and :math:`\tau`.

    Examples
    --------
    >>> b, tau = category_threshold(epsilon=1.0, delta=1e-6, mechanism="laplace", neighbouring="add-remove")
    >>> round(b, 6), round(tau, 3)
    (1.0, 14.436)
    """
    eps = check_epsilon(epsilon)
    dlt = check_delta(delta)
    check_in(mechanism, CATEGORY_MECHANISMS, name="mechanism")
    check_in(neighbouring, NEIGHBOURING, name="neighbouring")
    log1pe = float(np.logaddexp(0.0, eps))                   # ln(1 + e^eps), overflow-free
    if mechanism == "laplace":
        scale = _ratio_up(2.0 if neighbouring == "replace-one" else 1.0, eps)     # toward more noise
        tau = scale * (log1pe - math.log(2.0 * dlt))
    else:
        scale = analytic_sigma(epsilon=eps, delta=dlt / 2.0, sensitivity=math.sqrt(2.0) if neighbouring ==
                               "replace-one" else 1.0)
        log_p0 = math.log(dlt) - math.log(2.0) - log1pe
        tau = scale * float(-ndtri_exp(log_p0))              # Phi^{-1}(1 - p0) = -Phi^{-1}(p0)
    tau = math.nextafter(tau * (1.0 + 1e-12), math.inf)
    return float(scale), float(tau)


def _normalise(v: Any) -> Any:
    v = v.item() if isinstance(v, np.generic) else v
    if isinstance(v, str):
        return v.strip()
    if isinstance(v, float) and v.is_integer():
        return int(v)
    return v


def _key(v: Hashable) -> tuple[str, Hashable]:
    """A canonical, type-tagged key of a normalised label: ``True`` and ``1`` (equal in Python) stay apart."""
    return (type(v).__name__, v)


def private_categories(values: Iterable[Any], *, epsilon: float, delta: float, mechanism: str = "gaussian",
                       neighbouring: str = "replace-one", random_state: int | np.random.Generator | None = None,
                       label: str = "private categories (thresholded noisy counts)"
                       ) -> PrivateCategories:
    r"""The categories of a column that occur often enough, released with noisy counts ((ε, δ)-DP).

    Each category :math:`c` observed in the column gets a noisy count :math:`\tilde n_c = n_c + Z_c`
    (:math:`Z_c` Laplace or Gaussian, independent); the categories with :math:`\tilde n_c > \tau` are
    released with their noisy counts, most frequent first. Categories that do not occur are never
    released, and rare ones only with small probability: this is the stability-based histogram over an
    unknown set of categories (Korolova et al. 2009; Vadhan 2017; Wilson et al. 2020 for Gaussian noise).
    Noise scale and threshold: :func:`category_threshold`.

    Guarantee
    ---------
    :math:`(\varepsilon, \delta)`-DP under ``neighbouring``. Each row holds one value, so a replacement
    moves two counts by 1 (:math:`\Delta_1 = 2, \Delta_2 = \sqrt2`) and an addition or removal one count
    (:math:`\Delta_1 = \Delta_2 = 1`). Proof, for neighbours :math:`D, D'` and :math:`U` the union of the
    categories they contain: let :math:`\tilde M` add noise to the counts of *all* of :math:`U` (zero for
    a category a table lacks) and threshold them. On the count vectors over :math:`U` it is the Laplace
    (pure :math:`\varepsilon`) or Gaussian (:math:`(\varepsilon, \delta/2)`) mechanism, and thresholding is
    post-processing. :math:`M` and :math:`\tilde M` differ only when a category with count 0 exceeds
    :math:`\tau`; a neighbour lacks at most one category of :math:`U`, so
    :math:`d_{TV}(M(D), \tilde M(D)) \le p_0 = P[Z > \tau]`, and

    .. math:: P[M(D)\in O] \le e^\varepsilon P[M(D')\in O] + \delta_{\text{noise}} + (1 + e^\varepsilon)p_0.

    The threshold sets :math:`(1 + e^\varepsilon)p_0 = \delta` (Laplace, :math:`\delta_{\text{noise}} = 0`)
    or :math:`\delta/2` (Gaussian), so the total is :math:`\delta`.

    Parameters
    ----------
    values : array-like (N,)
        The private column (hashable labels; None/NaN = missing, dropped; text is stripped and
        whole-number floats become integers, as :meth:`dpkme.schema.TableSchema.encode` reads them).
        Each cell is counted under a type-tagged key, so ``True`` and ``1`` (equal in Python) are two
        categories: how one row is counted never depends on which label another row holds.
    epsilon : float
        > 0.
    delta : float
        In (0, 1); the probability bound of releasing a category because of one row.
    mechanism : {"gaussian", "laplace"}, default="gaussian"
        The noise on the counts.
    neighbouring : {"replace-one", "add-remove"}, default="replace-one"
        The relation of the guarantee (and of the charge).
    random_state : None, int or numpy.random.Generator
        ``None``: OS entropy, no seed recorded (a real release); an int: a **teaching replay, not a
        private release** (anyone who knows the seed regenerates the noise; ``noise_source="seeded"``,
        recorded in the charge's details with the reason).
    label : str
        Label of the charge.

    Returns
    -------
    PrivateCategories

    Examples
    --------
    >>> values = ["Adelie"] * 150 + ["Gentoo"] * 120 + ["Chinstrap"] * 70 + ["Rockhopper"]
    >>> r = private_categories(values, epsilon=1.0, delta=1e-6, random_state=0)
    >>> sorted(r.categories), r.charge.mechanism, (r.charge.epsilon, r.charge.delta)
    (['Adelie', 'Chinstrap', 'Gentoo'], 'approx-dp', (1.0, 1e-06))
    """
    eps = check_epsilon(epsilon)
    dlt = check_delta(delta)
    scale, tau = category_threshold(epsilon=eps, delta=dlt, mechanism=mechanism, neighbouring=neighbouring)
    if isinstance(values, (str, bytes)):
        raise ValueError("values must be a column of labels (a list, array or Series), not one string.")
    if isinstance(values, pd.DataFrame):
        raise ValueError("values must be one column (a Series), not a DataFrame.")
    items = values.tolist() if isinstance(values, (pd.Series, pd.Index, np.ndarray)) else list(values)
    counts: Counter[tuple[str, Hashable]] = Counter()
    for v in items:
        if v is None or (not isinstance(v, str) and bool(np.ndim(v) == 0) and bool(pd.isna(v))):
            continue
        v = _normalise(v)
        if isinstance(v, str) and v == "":
            continue
        try:
            counts[_key(v)] += 1          # type-tagged: True and 1 are two categories, each cell counted on its own
        except TypeError:
            raise ValueError(f"category values must be hashable labels, got {_short(v)}.") from None
    del items
    rng, seed, source = noise_rng(random_state)
    keys = sorted(counts, key=lambda k: (k[0], str(k[1])))          # a fixed order, not by count
    labels = [k[1] for k in keys]
    true = np.array([counts[k] for k in keys], dtype=np.float64)
    del counts
    noise = (rng.laplace(0.0, scale, size=true.shape[0]) if mechanism == "laplace"
             else rng.standard_normal(true.shape[0]) * scale)
    noisy = true + noise
    del true  # nothing below reads the data except through the noisy counts
    keep = np.flatnonzero(noisy > tau)
    order = keep[np.argsort(-noisy[keep], kind="stable")]
    charge = PrivacyCharge(label=label, mechanism="approx-dp", epsilon=eps, delta=dlt,
                           relation=NeighbouringRelation.parse(neighbouring),
                           details={"noise": mechanism, "noise_scale": scale,
                                    "threshold": tau, "l1_sensitivity": 2.0 if neighbouring == "replace-one" else 1.0,
                                    "l2_sensitivity": math.sqrt(2.0) if neighbouring == "replace-one" else 1.0,
                                    **_noise_details(source)})
    return PrivateCategories(categories=tuple(labels[i] for i in order),
                             noisy_counts=tuple(float(noisy[i]) for i in order), threshold=tau, noise_scale=scale,
                             mechanism=mechanism, epsilon=eps, delta=dlt, neighbouring=neighbouring, charge=charge,
                             seed=seed, noise_source=source)
