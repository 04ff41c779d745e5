r"""Privacy accounting: what each release cost (events) and how costs add up (accountants).

Modelled on Google's ``dp_accounting`` (which does the actual RDP and PLD
arithmetic here): a release is recorded as a :class:`PrivacyCharge`, which can
describe itself as a ``dp_accounting`` :class:`~dp_accounting.DpEvent`; several
accountants then turn a list of charges into one :math:`(\varepsilon,\delta)`.

Neighbouring relation
---------------------
All charges in one ledger must refer to the **same** neighbouring relation
(``"replace-one"`` or ``"add-remove"``, see :mod:`dpkme.privacy.sensitivity`), and the
composed guarantee is for that relation. A Gaussian charge stores the noise
multiplier :math:`z = \sigma/\Delta_2`, with :math:`\Delta_2` the sensitivity
*under that relation*; a Laplace charge stores :math:`b/\Delta_1 = 1/\varepsilon`.
Give the relation as the charge's typed ``relation`` field (``relation=`` of the constructors below;
``details["neighbouring"]`` mirrors it) and :class:`BudgetLedger` refuses to mix relations.

``dp_accounting``'s own ``neighboring_relation`` flag is something else: it says
how *its* events are parameterised. Under ``REPLACE_ONE`` its Gaussian PLD
doubles the sensitivity (it assumes :math:`\|v_i\|\le C` per record, so a
replacement moves the sum by :math:`2C`). Since our :math:`z` already
contains the true :math:`\Delta_2`, Gaussian and Laplace events are always
evaluated as a shift of exactly one noise-multiplier unit (``ADD_OR_REMOVE_ONE``
semantics for PLDs; the RDP of an unsampled Gaussian or Laplace event does not
depend on the flag). The RDP accountant is created with ``REPLACE_ONE`` only
because that is what makes a two-bucket ``RandomizedResponseDpEvent`` mean the
binary randomized-response pair used for pure :math:`\varepsilon`-DP (below).

How each mechanism is represented
---------------------------------
``"gaussian"``
    ``GaussianDpEvent(z)``, self-composed ``count`` times. This is the true
    mechanism, not its :math:`(\varepsilon_i,\delta_i)` summary: RDP/PLD compose
    the noise multipliers, so releases each calibrated to
    :math:`(\varepsilon_i,\delta_i)` compose to much less than
    :math:`\sum_i\varepsilon_i` when there are many of them. RDP per release is
    :math:`\alpha/(2z^2)` (Mironov 2017, Prop. 7).
``"laplace"``
    ``LaplaceDpEvent(1/epsilon)`` (scale over L1 sensitivity), exact RDP of
    Mironov (2017, Prop. 6) and the Laplace PLD.
``"exponential"`` (any pure :math:`\varepsilon`-DP mechanism)
    Every :math:`\varepsilon`-DP pair of output distributions is a
    post-processing of binary randomized response
    :math:`(\tfrac{e^\varepsilon}{1+e^\varepsilon}, \tfrac{1}{1+e^\varepsilon})`
    vs. its mirror image (Kairouz, Oh & Viswanath, ICML 2015), so its Rényi
    divergences and privacy curve are bounded by those of that pair. It is
    encoded as ``RandomizedResponseDpEvent(noise_parameter=2/(1+e^eps),
    num_buckets=2)`` (with ``REPLACE_ONE`` this is exactly that pair). This is
    never worse than the zCDP route :math:`\varepsilon`-DP :math:`\Rightarrow`
    :math:`\tfrac12\varepsilon^2`-zCDP (Bun & Steinke 2016, Prop. 3.3), nor than
    :math:`D_\alpha \le \varepsilon`.
``"approx-dp"`` (any :math:`(\varepsilon,\delta)`-DP mechanism, :math:`\delta > 0`)
    :class:`EpsilonDeltaDpEvent` (defined here; ``dp_accounting`` 0.6.0 has no
    such event). Such a mechanism has no finite RDP, so :func:`rdp_epsilon`
    adds these charges by basic composition (see there); :func:`pld_epsilon`
    uses the tight PLD of an :math:`(\varepsilon,\delta)` pair
    (``privacy_loss_distribution.from_privacy_parameters``).

References
----------
I. Mironov. Rényi differential privacy. CSF 2017.

M. Bun and T. Steinke. Concentrated differential privacy. TCC 2016.

C. Canonne, G. Kamath, T. Steinke. The discrete Gaussian for differential
privacy. NeurIPS 2020 (Prop. 12: the RDP-to-DP conversion ``dp_accounting`` uses).

P. Kairouz, S. Oh, P. Viswanath. The composition theorem for differential
privacy. ICML 2015.

J. Dong, A. Roth, W. Su. Gaussian differential privacy. JRSS-B 2022 (composition
of Gaussian mechanisms is a Gaussian mechanism).

Google. dp_accounting (version 0.6.0), https://github.com/google/differential-privacy.
"""

from __future__ import annotations

import datetime as _dt
import json
import math
import threading
import uuid
from collections import defaultdict
from collections.abc import Iterable
from dataclasses import asdict, dataclass, field, replace
from typing import TYPE_CHECKING, Any, cast

import numpy as np
from scipy.special import expit

from .._validation import check_delta, check_epsilon, check_in, check_positive_float, check_positive_int, round_up_until
from .calibration import GaussianCalibration, _delta_unchecked, _delta_verified, analytic_sigma, gaussian_epsilon
from .spec import NeighbouringRelation

if TYPE_CHECKING:  # dp_accounting (and scipy.stats/signal under it) is imported lazily: it is slow to import
    import dp_accounting

__all__ = [
    "ACCOUNTING_METHODS",
    "CHARGE_MECHANISMS",
    "BudgetLedger",
    "LedgerMerge",
    "EpsilonDeltaDpEvent",  # noqa: F822 (built on first access by the module __getattr__ below)
    "PrivacyCharge",
    "basic_composition",
    "calibrate_gaussian_composition",
    "gaussian_charge",
    "laplace_charge",
    "pld_epsilon",
    "pure_dp_charge",
    "rdp_epsilon",
]

CHARGE_MECHANISMS = ("gaussian", "laplace", "exponential", "approx-dp")
ACCOUNTING_METHODS = ("basic", "rdp", "pld", "best")
_PURE = ("laplace", "exponential")


_EPSILON_DELTA_DP_EVENT_DOC = r"""A mechanism known only to be :math:`(\varepsilon,\delta)`-DP.

    ``dp_accounting`` 0.6.0 has no such event; its accountants report it as
    unsupported, and :func:`rdp_epsilon` / :func:`pld_epsilon` treat it
    explicitly (basic composition for RDP, the dominating pair of
    ``from_privacy_parameters`` for PLD).

    Parameters
    ----------
    epsilon : float
        :math:`\varepsilon \ge 0` of one run of the mechanism.
    delta : float
        :math:`\delta \in [0, 1)` of one run of the mechanism.
    """

_epsilon_delta_dp_event_class: type | None = None
_epsilon_delta_dp_event_lock = threading.Lock()  # one class, even when threads (Streamlit) race


def _epsilon_delta_event_class() -> type:
    """``EpsilonDeltaDpEvent``, built (and cached) on first use: it subclasses ``dp_accounting.DpEvent``,
    and importing ``dp_accounting`` is slow, so it is not imported with this module (PEP 562, see
    ``__getattr__``)."""
    global _epsilon_delta_dp_event_class
    if _epsilon_delta_dp_event_class is not None:
        return _epsilon_delta_dp_event_class
    with _epsilon_delta_dp_event_lock:
        if _epsilon_delta_dp_event_class is not None:
            return _epsilon_delta_dp_event_class
        import attr
        import dp_accounting

        # dp_accounting has no type information, so its DpEvent is Any to mypy
        class EpsilonDeltaDpEvent(dp_accounting.DpEvent):  # type: ignore[misc]
            __doc__ = _EPSILON_DELTA_DP_EVENT_DOC
            epsilon: float
            delta: float

        EpsilonDeltaDpEvent.__module__ = __name__
        EpsilonDeltaDpEvent.__qualname__ = "EpsilonDeltaDpEvent"
        _epsilon_delta_dp_event_class = attr.s(frozen=True, slots=True, auto_attribs=True)(EpsilonDeltaDpEvent)
    return _epsilon_delta_dp_event_class


def __getattr__(name: str) -> Any:
    if name == "EpsilonDeltaDpEvent":
        return _epsilon_delta_event_class()
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")


def __dir__() -> list[str]:
    return sorted({*globals(), "EpsilonDeltaDpEvent"})


def _rr_noise_parameter(epsilon: float) -> float:
    """p with (1 - p/2) / (p/2) = e^eps, i.e. p = 2 / (1 + e^eps), overflow-free."""
    return float(2.0 * expit(-epsilon))


@dataclass(frozen=True)
class PrivacyCharge:
    r"""The privacy cost of one release (or of ``count`` identical ones).

    Every field is validated on construction (a ``ValueError`` names the bad
    value); the fields are stored as given, except that a Laplace charge's
    missing ``noise_multiplier`` is filled in with :math:`1/\varepsilon`.

    Parameters
    ----------
    label : str
        Human-readable name, e.g. ``"Algorithm 1 release #3"``.
    mechanism : {"gaussian", "laplace", "exponential", "approx-dp"}
        ``"exponential"`` stands for any pure :math:`\varepsilon`-DP mechanism;
        ``"approx-dp"`` for any :math:`(\varepsilon,\delta)`-DP one whose
        internals the accountants cannot use.
    epsilon, delta : float
        The :math:`(\varepsilon,\delta)` one repetition was calibrated to
        (``delta`` must be 0 for pure mechanisms, > 0 for Gaussian).
    noise_multiplier : float or None, default None
        Gaussian: :math:`z = \sigma/\Delta_2` (required, and checked to really
        give :math:`(\varepsilon,\delta)` via Balle & Wang's exact condition).
        Laplace: :math:`b/\Delta_1 \ge 1/\varepsilon` (filled in with
        :math:`1/\varepsilon` if omitted). Must be ``None`` for the other
        mechanisms.
    count : int, default 1
        Number of repetitions :math:`c \ge 1` (e.g. :math:`T` Lloyd
        iterations), composed adaptively.
    details : dict, default {}
        Free-form metadata (e.g. ``details["mechanism"]``, the library function). For one release the
        legacy keys ``"neighbouring"``, ``"parts"`` and ``"partition"`` are still accepted here and moved
        into the typed fields below; ``details`` then mirrors those fields (read them from the fields).
    relation : NeighbouringRelation or str, optional
        The neighbouring relation of the guarantee; :class:`BudgetLedger` refuses to mix relations.
    parts : tuple of str, default ()
        The disjoint parts of the population the release reads (parallel composition, see
        :class:`BudgetLedger`); empty means every row.
    split_id : str, optional
        The id of the public split that defines ``parts`` (stamped by the ledger when added).
    id : str, optional
        A unique id (a random UUID by default): the ledger de-duplicates on it and only on it.
    created : str, optional
        Creation time, ISO 8601 in UTC (now by default).

    Examples
    --------
    >>> from dpkme.privacy.accounting import PrivacyCharge
    >>> c = PrivacyCharge(label="a Laplace count", mechanism="laplace", epsilon=0.5, delta=0.0, count=3)
    >>> c.noise_multiplier, c.is_pure
    (2.0, True)
    >>> c.relation is None, c.parts, len(c.id)
    (True, (), 32)
    """

    label: str
    mechanism: str
    epsilon: float
    delta: float
    noise_multiplier: float | None = None
    count: int = 1
    details: dict[str, Any] = field(default_factory=dict)
    relation: NeighbouringRelation | None = None
    parts: tuple[str, ...] = ()
    split_id: str | None = None
    id: str = field(default_factory=lambda: uuid.uuid4().hex)
    created: str = field(default_factory=lambda: _dt.datetime.now(_dt.timezone.utc).isoformat(timespec="seconds"))

    def __post_init__(self) -> None:
        set_ = object.__setattr__
        set_(self, "label", str(self.label))
        check_in(self.mechanism, CHARGE_MECHANISMS, name="mechanism")
        eps = check_epsilon(self.epsilon)
        set_(self, "epsilon", eps)
        set_(self, "count", check_positive_int(self.count, name="count"))
        if self.details is None:
            set_(self, "details", {})
        elif not isinstance(self.details, dict):
            raise ValueError(f"details must be a dict, got {self.details!r}.")
        if not isinstance(self.id, str) or not self.id:
            raise ValueError(f"a charge id is a non-empty string, got {self.id!r}.")
        self._typed_facts()
        if self.mechanism == "gaussian":
            delta = check_delta(self.delta)
            if self.noise_multiplier is None:
                raise ValueError("a Gaussian charge needs noise_multiplier = sigma / sensitivity.")
            z = check_positive_float(self.noise_multiplier, name="noise_multiplier")
            true_delta = _delta_unchecked(z, eps, 1.0)
            if true_delta > delta * (1.0 + 1e-9):
                raise ValueError(
                    f"noise_multiplier={z:g} gives a Gaussian mechanism with delta={true_delta:.3g} at "
                    f"epsilon={eps:g}, more than the stated delta={delta:g}; the charge would under-count."
                )
            set_(self, "noise_multiplier", z)
        elif self.mechanism in _PURE:
            delta = check_delta(self.delta, allow_zero=True)
            if delta != 0.0:
                raise ValueError(f"a {self.mechanism} charge is pure epsilon-DP, so delta must be 0, got {self.delta!r}.")
            if self.mechanism == "laplace":
                z = 1.0 / eps
                if self.noise_multiplier is not None:
                    given = check_positive_float(self.noise_multiplier, name="noise_multiplier")
                    if given < z * (1.0 - 1e-9):
                        raise ValueError(
                            f"Laplace noise_multiplier={given:g} (scale / L1 sensitivity) is below "
                            f"1/epsilon={z:g}: that release is not epsilon={eps:g}-DP."
                        )
                    z = given
                set_(self, "noise_multiplier", z)
            elif self.noise_multiplier is not None:
                raise ValueError("noise_multiplier is only meaningful for Gaussian and Laplace charges.")
        else:  # approx-dp
            delta = check_delta(self.delta, allow_zero=True)
            if self.noise_multiplier is not None:
                raise ValueError("noise_multiplier is only meaningful for Gaussian and Laplace charges.")
        set_(self, "delta", delta)

    def _typed_facts(self) -> None:
        """Move the legacy ``details`` keys into the typed fields (a field set explicitly wins), validate
        them, and make ``details`` mirror them (a copy: the caller's dict is not changed)."""
        set_ = object.__setattr__
        d = dict(self.details)
        rel = self.relation if self.relation is not None else d.get("neighbouring")
        set_(self, "relation", None if rel is None else NeighbouringRelation.parse(rel))
        parts = self.parts if self.parts else d.get("parts") or ()
        if isinstance(parts, str) or not all(isinstance(p, str) and p for p in parts):
            raise ValueError(f"parts must be a tuple of part names, got {parts!r}.")
        set_(self, "parts", tuple(parts))
        split = self.split_id if self.split_id is not None else d.get("partition")
        set_(self, "split_id", None if split is None else str(split))
        for key, value in (("neighbouring", None if self.relation is None else self.relation.value),
                           ("parts", self.parts or None), ("partition", self.split_id)):
            if value is None:
                d.pop(key, None)
            else:
                d[key] = value
        set_(self, "details", d)

    def with_(self, **changes: object) -> PrivacyCharge:
        """A copy with ``changes`` applied (same id unless ``id`` is given): e.g. ``charge.with_(parts=(...))``."""
        if "details" in changes:   # legacy keys in new details must not be shadowed by the old fields
            d = dict(changes["details"])  # type: ignore[call-overload]
            for key, fld in (("neighbouring", "relation"), ("parts", "parts"), ("partition", "split_id")):
                if key in d and fld not in changes:
                    changes[fld] = d[key]
        return replace(self, **changes)  # type: ignore[arg-type]

    def renewed(self, **changes: object) -> PrivacyCharge:
        """A copy with ``changes`` and a **new** id and creation time: another spending of the same cost."""
        now = _dt.datetime.now(_dt.timezone.utc).isoformat(timespec="seconds")
        return self.with_(id=uuid.uuid4().hex, created=now, **changes)

    @property
    def is_pure(self) -> bool:
        """True for charges with delta = 0 (Laplace, exponential, approx-dp with delta 0)."""
        return self.delta == 0.0 and self.mechanism != "gaussian"

    def _single_event(self) -> dp_accounting.DpEvent:
        import dp_accounting

        if self.mechanism == "gaussian":
            return dp_accounting.GaussianDpEvent(noise_multiplier=self.noise_multiplier)
        if self.mechanism == "laplace":
            return dp_accounting.LaplaceDpEvent(noise_multiplier=self.noise_multiplier)
        if self.is_pure:
            return dp_accounting.RandomizedResponseDpEvent(
                noise_parameter=_rr_noise_parameter(self.epsilon), num_buckets=2
            )
        return _epsilon_delta_event_class()(epsilon=self.epsilon, delta=self.delta)

    def dp_event(self) -> dp_accounting.DpEvent:
        """This charge as a ``dp_accounting`` event (self-composed ``count`` times).

        See the module docstring for the encoding of each mechanism; pure
        :math:`\\varepsilon`-DP charges become a two-bucket
        ``RandomizedResponseDpEvent``, which ``dp_accounting`` accountants only
        accept with ``neighboring_relation=REPLACE_ONE``.
        """
        import dp_accounting

        event = self._single_event()
        if self.count == 1:
            return event
        return dp_accounting.SelfComposedDpEvent(event=event, count=self.count)

    def to_record(self) -> dict[str, Any]:
        """The charge as a JSON-friendly dict (every field, the relation as its string)."""
        d = asdict(self)
        d["details"] = dict(self.details)
        d["relation"] = None if self.relation is None else self.relation.value
        d["parts"] = list(self.parts)
        return d

    @classmethod
    def from_record(cls, record: dict[str, Any]) -> PrivacyCharge:
        """Inverse of :meth:`to_record` (every field is re-validated; a Gaussian charge's
        noise multiplier is re-checked against its (epsilon, delta))."""
        if not isinstance(record, dict):
            raise ValueError(f"a charge record is a dict, got {type(record).__name__}.")
        missing = [k for k in ("label", "mechanism", "epsilon", "delta") if k not in record]
        if missing:
            raise ValueError(f"this is not a privacy charge: missing field(s) {missing}.")
        details = record.get("details") or {}
        if not isinstance(details, dict):
            raise ValueError(f"details must be a dict, got {details!r}.")
        if isinstance(details.get("parts"), list):
            details = {**details, "parts": tuple(details["parts"])}
        parts = record.get("parts") or ()
        if not isinstance(parts, (list, tuple)):
            raise ValueError(f"parts must be a list of part names, got {parts!r}.")
        typed: dict[str, Any] = {"relation": record.get("relation"), "parts": tuple(parts), "split_id": record.get("split_id")}
        if record.get("id") is not None:      # a record from before charges had ids gets a fresh one
            typed["id"] = record["id"]
        if record.get("created") is not None:
            typed["created"] = str(record["created"])
        return cls(label=record["label"], mechanism=record["mechanism"], epsilon=record["epsilon"],
                   delta=record["delta"], noise_multiplier=record.get("noise_multiplier"),
                   count=record.get("count", 1), details=details, **typed)


# --------------------------------------------------------------------------- constructors
def gaussian_charge(label: str, calibration: GaussianCalibration, *, count: int = 1,
                    details: dict[str, Any] | None = None, relation: NeighbouringRelation | str | None = None,
                    parts: tuple[str, ...] = ()) -> PrivacyCharge:
    r"""Charge for ``count`` releases with the Gaussian noise of ``calibration``.

    Records the requested :math:`(\varepsilon,\delta)` of the calibration
    (``achieved_delta`` is at most that) and the noise multiplier
    :math:`z = \sigma/\Delta_2`, which the RDP and PLD accountants compose
    (:math:`c` releases with multiplier :math:`z` are one Gaussian mechanism
    with multiplier :math:`z/\sqrt c`). The calibration's method, sigma,
    sensitivity, achieved delta and ``proven`` flag are copied into ``details``.

    Parameters
    ----------
    label : str
        Human-readable name of the release in the ledger.
    calibration : GaussianCalibration
        The calibration the noise was drawn with
        (:func:`~dpkme.privacy.calibration.calibrate_gaussian`).
    count : int, default 1
        Number of releases with this same noise (e.g. :math:`T` iterations),
        composed adaptively.
    details : dict, optional
        Extra metadata, merged over the calibration's entries.
    relation : NeighbouringRelation or str, optional
        The neighbouring relation of the guarantee (the charge's typed ``relation``).
    parts : tuple of str, default ()
        The disjoint parts of the population the release reads (empty: every row).

    Returns
    -------
    PrivacyCharge
        ``mechanism="gaussian"`` with the calibration's :math:`(\varepsilon,\delta)`.

    Examples
    --------
    >>> from dpkme.privacy.accounting import gaussian_charge
    >>> from dpkme.privacy.calibration import calibrate_gaussian
    >>> cal = calibrate_gaussian(epsilon=1.0, delta=1e-5, sensitivity=0.01)
    >>> c = gaussian_charge("Algorithm 1", cal, relation="replace-one")
    >>> c.mechanism, c.epsilon, c.delta, c.relation.value
    ('gaussian', 1.0, 1e-05, 'replace-one')
    """
    if not isinstance(calibration, GaussianCalibration):
        raise ValueError(f"calibration must be a GaussianCalibration, got {calibration!r}.")
    info = {
        "calibration": calibration.method,
        "sigma": calibration.sigma,
        "sensitivity": calibration.sensitivity,
        "achieved_delta": calibration.achieved_delta,
        "proven": calibration.proven,
    }
    info.update(details or {})
    return PrivacyCharge(
        label=label,
        mechanism="gaussian",
        epsilon=calibration.epsilon,
        delta=calibration.delta,
        noise_multiplier=calibration.noise_multiplier,
        count=count,
        details=info,
        relation=cast("NeighbouringRelation | None", relation),  # a str is parsed by PrivacyCharge
        parts=parts,
    )


def laplace_charge(label: str, *, epsilon: float, count: int = 1, details: dict[str, Any] | None = None,
                   relation: NeighbouringRelation | str | None = None, parts: tuple[str, ...] = ()) -> PrivacyCharge:
    r"""Charge for ``count`` Laplace releases each with scale :math:`b = \Delta_1/\varepsilon`.

    Each release is pure :math:`\varepsilon`-DP (Dwork & Roth 2014, Theorem 3.6);
    the accountants use the exact Laplace RDP (Mironov 2017, Prop. 6) and PLD
    with the noise multiplier :math:`b/\Delta_1 = 1/\varepsilon`.

    Parameters
    ----------
    label : str
        Human-readable name of the release in the ledger.
    epsilon : float
        :math:`\varepsilon > 0` of one release.
    count : int, default 1
        Number of releases, composed adaptively.
    details : dict, optional
        Free-form metadata (copied).
    relation : NeighbouringRelation or str, optional
        The neighbouring relation of the guarantee (the charge's typed ``relation``).
    parts : tuple of str, default ()
        The disjoint parts of the population the release reads (empty: every row).

    Returns
    -------
    PrivacyCharge
        ``mechanism="laplace"``, ``delta=0``, ``noise_multiplier=1/epsilon``.

    Examples
    --------
    >>> from dpkme.privacy.accounting import basic_composition, laplace_charge
    >>> basic_composition([laplace_charge("histogram", epsilon=0.5, count=4)])
    (2.0, 0.0)
    """
    return PrivacyCharge(
        label=label, mechanism="laplace", epsilon=epsilon, delta=0.0, count=count, details=dict(details or {}),
        relation=cast("NeighbouringRelation | None", relation), parts=parts,  # a str is parsed by PrivacyCharge
    )


def pure_dp_charge(label: str, *, epsilon: float, mechanism: str = "exponential", count: int = 1,
                   details: dict[str, Any] | None = None, relation: NeighbouringRelation | str | None = None,
                   parts: tuple[str, ...] = ()) -> PrivacyCharge:
    r"""Charge for ``count`` releases of a pure :math:`\varepsilon`-DP mechanism (e.g. exponential).

    Parameters
    ----------
    label : str
        Human-readable name of the release in the ledger.
    epsilon : float
        :math:`\varepsilon > 0` of one release.
    mechanism : {"exponential", "laplace"}, default "exponential"
        ``"exponential"`` (any pure mechanism, accounted through the binary
        randomized-response bound, see the module docstring) or ``"laplace"``
        (accounted with the tighter Laplace-specific RDP/PLD).
    count : int, default 1
        Number of releases, composed adaptively.
    details : dict, optional
        Free-form metadata (copied).
    relation : NeighbouringRelation or str, optional
        The neighbouring relation of the guarantee (the charge's typed ``relation``).
    parts : tuple of str, default ()
        The disjoint parts of the population the release reads, e.g. ``("held-out",)`` (empty: every row).

    Returns
    -------
    PrivacyCharge
        A charge with ``delta=0``.

    Examples
    --------
    >>> from dpkme.privacy.accounting import pure_dp_charge
    >>> c = pure_dp_charge("private length scale", epsilon=0.1)
    >>> c.mechanism, c.epsilon, c.delta, c.is_pure
    ('exponential', 0.1, 0.0, True)
    """
    check_in(mechanism, _PURE, name="mechanism")
    return PrivacyCharge(
        label=label, mechanism=mechanism, epsilon=epsilon, delta=0.0, count=count, details=dict(details or {}),
        relation=cast("NeighbouringRelation | None", relation), parts=parts,  # a str is parsed by PrivacyCharge
    )


# --------------------------------------------------------------------------- accountants
def _as_charges(charges: PrivacyCharge | Iterable[PrivacyCharge]) -> list[PrivacyCharge]:
    if isinstance(charges, PrivacyCharge):
        return [charges]
    out = list(charges)
    for c in out:
        if not isinstance(c, PrivacyCharge):
            raise ValueError(f"expected PrivacyCharge objects, got {c!r}.")
    return out


def basic_composition(charges: Iterable[PrivacyCharge]) -> tuple[float, float]:
    r"""Basic (adaptive) composition: :math:`(\sum_i c_i\varepsilon_i,\ \sum_i c_i\delta_i)`.

    Dwork & Roth (2014), Theorem 3.16, holding for adaptively chosen
    mechanisms; :math:`c_i` is ``count``. Valid for every charge type.

    Parameters
    ----------
    charges : PrivacyCharge or iterable of PrivacyCharge
        The charges to compose (an empty list gives ``(0.0, 0.0)``).

    Returns
    -------
    epsilon, delta : float
        :math:`\sum_i c_i\varepsilon_i` and :math:`\sum_i c_i\delta_i`.

    Examples
    --------
    >>> from dpkme.privacy.accounting import basic_composition, pure_dp_charge
    >>> basic_composition([pure_dp_charge("a", epsilon=0.5), pure_dp_charge("b", epsilon=0.25, count=2)])
    (1.0, 0.0)
    """
    eps = 0.0
    delta = 0.0
    for c in _as_charges(charges):
        eps += c.count * c.epsilon
        delta += c.count * c.delta
    return eps, delta


def _split_rdp(charges: list[PrivacyCharge]) -> tuple[list[PrivacyCharge], list[PrivacyCharge]]:
    supported: list[PrivacyCharge] = []
    rest: list[PrivacyCharge] = []
    for c in charges:
        (rest if c.mechanism == "approx-dp" and c.delta > 0 else supported).append(c)
    return supported, rest


def rdp_epsilon(charges: Iterable[PrivacyCharge], *, delta: float) -> float:
    r""":math:`\varepsilon` at total :math:`\delta` by Rényi-DP composition (``dp_accounting.rdp.RdpAccountant``).

    Gaussian, Laplace and pure charges are composed in RDP over
    ``dp_accounting``'s default orders
    (:math:`\alpha \in \{1.1, 1.2, \dots, 10.9, 11, \dots, 63, 128, 256, 512, 1024\}`),
    and converted with the bound of Canonne, Kamath & Steinke (2020, Prop. 12)

    .. math::
        \varepsilon(\delta') = \min_\alpha\ \mathrm{RDP}(\alpha) + \log\frac{\alpha-1}{\alpha}
        - \frac{\log\delta' + \log\alpha}{\alpha-1}.

    Generic :math:`(\varepsilon_j,\delta_j)` charges (``"approx-dp"`` with
    :math:`\delta_j > 0`) have no finite RDP. They are added by basic
    composition: with :math:`\delta_{\rm rest} = \sum_j c_j\delta_j` and
    :math:`\varepsilon_{\rm rest} = \sum_j c_j\varepsilon_j`, the result is

    .. math::
        \varepsilon = \varepsilon_{\rm RDP}(\delta - \delta_{\rm rest}) + \varepsilon_{\rm rest},

    a valid :math:`(\varepsilon, \delta)` guarantee because adaptive composition
    does not depend on the order of the mechanisms (Dong, Roth & Su 2022) and
    basic composition applies to the RDP block as a whole.

    Parameters
    ----------
    charges : iterable of PrivacyCharge
        The charges to compose (a single charge is accepted too); all for one
        neighbouring relation.
    delta : float
        Target total :math:`\delta \in (0, 1)`.

    Returns
    -------
    float
        :math:`\varepsilon \ge 0`; ``inf`` if :math:`\delta \le \delta_{\rm rest}`
        while RDP-composable charges are present (no finite guarantee at this
        :math:`\delta`), or if :math:`\delta < \delta_{\rm rest}` at all.

    Examples
    --------
    >>> from dpkme.privacy.accounting import basic_composition, gaussian_charge, pld_epsilon, rdp_epsilon
    >>> from dpkme.privacy.calibration import calibrate_gaussian
    >>> steps = [gaussian_charge("Lloyd step", calibrate_gaussian(epsilon=0.5, delta=1e-6, sensitivity=1.0), count=10)]
    >>> basic_composition(steps)                        # 10 x (0.5, 1e-6)
    (5.0, 9.999999999999999e-06)
    >>> round(rdp_epsilon(steps, delta=1e-5), 2), round(pld_epsilon(steps, delta=1e-5), 2)
    (1.66, 1.52)
    """
    delta = check_delta(delta)
    charges = _as_charges(charges)
    supported, rest = _split_rdp(charges)
    eps_rest, delta_rest = basic_composition(rest)
    if delta_rest > delta:
        return math.inf
    if not supported:
        return eps_rest
    delta_rdp = delta - delta_rest
    if delta_rdp <= 0.0:
        return math.inf
    import dp_accounting
    from dp_accounting import rdp

    acc = rdp.RdpAccountant(neighboring_relation=dp_accounting.NeighboringRelation.REPLACE_ONE)
    for c in supported:
        acc.compose(c.dp_event())
    return float(acc.get_epsilon(delta_rdp)) + eps_rest


_PLD_GRID_POINTS = 200_000
#: Largest per-repetition epsilon of a non-Gaussian charge given to dp_accounting's PLDs (they overflow
#: beyond ~700); larger ones are composed by basic composition (see pld_epsilon).
_PLD_MAX_EPSILON = 500.0


def pld_epsilon(
    charges: Iterable[PrivacyCharge],
    *,
    delta: float,
    value_discretization_interval: float | None = None,
    exact_gaussian: bool = True,
) -> float:
    r""":math:`\varepsilon` at total :math:`\delta` from privacy loss distributions (``dp_accounting.pld``).

    Tighter than :func:`rdp_epsilon`: near-exact up to the pessimistic
    discretisation of the privacy loss, which can only increase
    :math:`\varepsilon` (by at most about one grid step per composed PLD).

    Construction (from ``dp_accounting.pld.privacy_loss_distribution``
    directly, because ``PLDAccountant`` 0.6.0 neither has an
    :math:`(\varepsilon,\delta)` event nor accepts Laplace and two-bucket
    randomized-response events under one neighbouring flag):

    * all Gaussian charges together are **one** Gaussian mechanism with
      :math:`z_{\rm eff} = (\sum_i c_i/z_i^2)^{-1/2}` -- an exact identity (the
      privacy loss of a product of Gaussian shifts is Gaussian; Dong, Roth & Su
      2022, Cor. 3.3). If *only* Gaussian charges are present and
      ``exact_gaussian`` is True, the exact curve of that Gaussian is used
      (:func:`~dpkme.privacy.calibration.gaussian_epsilon`, Balle & Wang's formula,
      rounded up) instead of its discretised PLD;
    * Laplace charges: the Laplace PLD with parameter :math:`1/\varepsilon`,
      self-composed;
    * pure and :math:`(\varepsilon,\delta)` charges: the dominating pair of an
      :math:`(\varepsilon,\delta)`-DP mechanism (``from_privacy_parameters``),
      self-composed.

    Parameters
    ----------
    charges : iterable of PrivacyCharge
        The charges to compose (a single charge is accepted too); all for one
        neighbouring relation.
    delta : float
        Target total :math:`\delta \in (0, 1)`.
    value_discretization_interval : float, optional
        Grid step of the privacy-loss values. Default: ``1e-4``, coarsened so
        that the composed privacy-loss range has at most about 200 000 grid
        points (this keeps the runtime well under a second; the coarser grid
        only makes the answer slightly more pessimistic).
    exact_gaussian : bool, default True
        Use the closed form for Gaussian-only charge lists.

    Returns
    -------
    float
        :math:`\varepsilon \ge 0` (``inf`` if no finite value reaches ``delta``).

    Examples
    --------
    >>> from dpkme.privacy.accounting import basic_composition, gaussian_charge, pld_epsilon, rdp_epsilon
    >>> from dpkme.privacy.calibration import calibrate_gaussian
    >>> steps = [gaussian_charge("Lloyd step", calibrate_gaussian(epsilon=0.5, delta=1e-6, sensitivity=1.0), count=10)]
    >>> basic_composition(steps)                        # 10 x (0.5, 1e-6)
    (5.0, 9.999999999999999e-06)
    >>> round(rdp_epsilon(steps, delta=1e-5), 2), round(pld_epsilon(steps, delta=1e-5), 2)
    (1.66, 1.52)
    """
    delta = check_delta(delta)
    charges = _as_charges(charges)
    # Non-Gaussian charges with a huge epsilon: dp_accounting's PLDs overflow (OverflowError) or return inf
    # beyond epsilon ~ 700, and their PLD bound could not improve on epsilon anyway. They are added by basic
    # composition to the PLD of the others (valid: adaptive composition in any order, as in rdp_epsilon).
    huge = [c for c in charges if c.mechanism != "gaussian" and c.epsilon > _PLD_MAX_EPSILON]
    if huge:
        eps_h, delta_h = basic_composition(huge)
        rest = [c for c in charges if c.mechanism == "gaussian" or c.epsilon <= _PLD_MAX_EPSILON]
        if delta_h >= delta:
            return math.inf
        if not rest:
            return eps_h
        return pld_epsilon(rest, delta=delta - delta_h, value_discretization_interval=value_discretization_interval,
                           exact_gaussian=exact_gaussian) + eps_h
    inv_z2 = 0.0
    laplace: defaultdict[float, int] = defaultdict(int)
    generic: defaultdict[tuple[float, float], int] = defaultdict(int)
    for c in charges:
        if c.mechanism == "gaussian":
            assert c.noise_multiplier is not None      # checked by PrivacyCharge for Gaussian charges
            inv_z2 += c.count / c.noise_multiplier**2
        elif c.mechanism == "laplace":
            assert c.noise_multiplier is not None      # filled in by PrivacyCharge for Laplace charges
            laplace[c.noise_multiplier] += c.count
        else:
            generic[(c.epsilon, c.delta)] += c.count
    if not charges:
        return 0.0
    if exact_gaussian and not laplace and not generic:
        return gaussian_epsilon(sigma=1.0 / math.sqrt(inv_z2), delta=delta, sensitivity=1.0)
    if value_discretization_interval is None:
        mu = math.sqrt(inv_z2)
        loss_range = 20.0 * mu + mu**2  # support of the (truncated) Gaussian privacy loss
        loss_range += sum(2.0 * n / z for z, n in laplace.items())
        loss_range += sum(2.0 * n * eps for (eps, _), n in generic.items())
        vdi = max(1e-4, loss_range / _PLD_GRID_POINTS)
    else:
        vdi = check_positive_float(value_discretization_interval, name="value_discretization_interval")
    from dp_accounting.pld import common as pld_common
    from dp_accounting.pld import privacy_loss_distribution as pld_lib

    plds = []
    if inv_z2 > 0.0:
        plds.append(pld_lib.from_gaussian_mechanism(
            standard_deviation=1.0 / math.sqrt(inv_z2), sensitivity=1.0, value_discretization_interval=vdi
        ))
    for z, n in laplace.items():
        plds.append(pld_lib.from_laplace_mechanism(
            parameter=z, sensitivity=1.0, value_discretization_interval=vdi
        ).self_compose(n))
    for (eps, dlt), n in generic.items():
        plds.append(pld_lib.from_privacy_parameters(
            pld_common.DifferentialPrivacyParameters(eps, dlt), value_discretization_interval=vdi
        ).self_compose(n))
    total = plds[0]
    for p in plds[1:]:
        total = total.compose(p)
    # Compositions of large total epsilon (e.g. 55 Laplace charges of epsilon 13) overflow inside
    # dp_accounting (exp of the privacy loss) and come back as inf. Basic composition is also a valid bound:
    # report the smaller of the two (never less than either proves).
    with np.errstate(over="ignore", divide="ignore", invalid="ignore"):
        eps = float(total.get_epsilon_for_delta(delta))
    eps_b, delta_b = basic_composition(charges)
    return min(eps, eps_b) if delta_b <= delta else eps


def _rdp_gaussian_epsilon(z: float, count: int, delta: float) -> float:
    import dp_accounting
    from dp_accounting import rdp

    acc = rdp.RdpAccountant()
    acc.compose(dp_accounting.GaussianDpEvent(noise_multiplier=z), count)
    return float(acc.get_epsilon(delta))


def calibrate_gaussian_composition(*, epsilon: float, delta: float, count: int, sensitivity: float,
                                   method: str = "rdp") -> float:
    r""":math:`\sigma` such that ``count`` adaptive Gaussian releases, each with L2 sensitivity :math:`\Delta`, are jointly :math:`(\varepsilon,\delta)`-DP.

    ``method="rdp"`` (default): the smallest :math:`\sigma` (on the bisection
    grid) for which :func:`rdp_epsilon` of ``count`` Gaussian events with
    :math:`z = \sigma/\Delta` is :math:`\le \varepsilon` at :math:`\delta`, i.e.
    :math:`\min_\alpha c\alpha/(2z^2) + \log\frac{\alpha-1}{\alpha} -
    \frac{\log\delta + \log\alpha}{\alpha-1} \le \varepsilon`. Bisection on
    :math:`z` returns the upper end of the bracket and re-verifies; rounding is
    toward more noise.

    ``method="analytic"``: exact. ``count`` Gaussian releases with multiplier
    :math:`z` compose to exactly one Gaussian mechanism with multiplier
    :math:`z/\sqrt{c}` (Dong, Roth & Su 2022, Cor. 3.3), so
    :math:`\sigma = \sqrt{c}\cdot` :func:`~dpkme.privacy.calibration.analytic_sigma`
    :math:`(\varepsilon,\delta,\Delta)`; always :math:`\le` the RDP answer.

    The guarantee is for the neighbouring relation :math:`\Delta` was computed
    under.

    Parameters
    ----------
    epsilon : float
        Total :math:`\varepsilon > 0` of all ``count`` releases together.
    delta : float
        Total :math:`\delta \in (0, 1)` of all ``count`` releases together.
    count : int
        Number :math:`c \ge 1` of adaptively composed Gaussian releases.
    sensitivity : float
        L2 sensitivity :math:`\Delta > 0` of each release's statistic.
    method : {"rdp", "analytic"}, default "rdp"
        The composition analysis (see above); ``"analytic"`` gives the
        smallest :math:`\sigma`.

    Returns
    -------
    float
        :math:`\sigma` per coordinate and per release.

    Examples
    --------
    >>> from dpkme.privacy.accounting import calibrate_gaussian_composition
    >>> from dpkme.privacy.calibration import analytic_sigma
    >>> s = calibrate_gaussian_composition(epsilon=1.0, delta=1e-5, count=4, sensitivity=1.0, method="analytic")
    >>> bool(abs(s / analytic_sigma(epsilon=1.0, delta=1e-5, sensitivity=1.0) - 2.0) < 1e-9)  # sqrt(4) times one
    True
    """
    epsilon = check_epsilon(epsilon)
    delta = check_delta(delta)
    count = check_positive_int(count, name="count")
    sensitivity = check_positive_float(sensitivity, name="sensitivity")
    check_in(method, ("rdp", "analytic"), name="method")
    exact = math.sqrt(count) * analytic_sigma(epsilon=epsilon, delta=delta, sensitivity=1.0)
    if method == "analytic":
        # verified in high precision (toward more noise, literally), like calibrate_gaussian
        return round_up_until(exact * sensitivity,
                              lambda s: _delta_verified(s / math.sqrt(count), epsilon, sensitivity, delta)[0])

    def ok(z: float) -> bool:
        return _rdp_gaussian_epsilon(z, count, delta) <= epsilon

    # The exact z is a lower bound for the RDP one (RDP is a valid, looser bound).
    lo, hi = 0.5 * exact, exact
    n = 0
    while not ok(hi):
        lo, hi = hi, 2.0 * hi
        n += 1
        if n > 200:  # pragma: no cover
            raise ValueError(f"could not calibrate count={count} Gaussian releases to epsilon={epsilon}, delta={delta}.")
    while ok(lo) and lo > 0:  # pragma: no cover - the RDP sigma is never below the exact one
        hi, lo = lo, 0.5 * lo
    for _ in range(200):
        if hi - lo <= 1e-12 * hi:
            break
        mid = 0.5 * (lo + hi)
        if ok(mid):
            hi = mid
        else:
            lo = mid
    return round_up_until(hi * sensitivity, lambda s: ok(s / sensitivity))


# --------------------------------------------------------------------------- ledger
class BudgetLedger:
    r"""An append-only list of :class:`PrivacyCharge` with totals and an optional budget.

    The ledger reports three valid upper bounds on the privacy of everything
    released so far (adaptive composition), for one neighbouring relation:

    * ``"basic"``: :math:`(\sum c_i\varepsilon_i, \sum c_i\delta_i)`;
    * ``"rdp"``: :func:`rdp_epsilon` at the target :math:`\delta` -- Gaussian
      releases are composed through their noise multipliers (the actual
      mechanism), not their individual :math:`(\varepsilon_i, \delta_i)`;
    * ``"pld"``: :func:`pld_epsilon` at the target :math:`\delta` (tightest).

    **Parallel composition.** A charge may declare which disjoint parts of the
    population it reads in its typed ``parts`` (e.g. ``("held-out",)`` for a
    test on held-out rows that the other releases never read). A charge without
    ``parts`` reads everyone. Each individual belongs to one part, and only the
    charges that read that part affect them, so the ledger composes the charges
    of each part separately and reports the worst part (McSherry 2009,
    parallel composition; the parts must be fixed independently of the data,
    e.g. by a public split).

    **The split is part of the accounting unit.** Parts are only disjoint
    *within one split*: if the split changes after budget was spent (another
    seed or other fractions), a person who was in the held-out part before may
    be in the private part now and has paid for both. Each charge that declares
    ``parts`` therefore also carries the id of its split in its typed
    ``split_id`` (stamped from :attr:`partition` when added). When
    the charges with parts come from more than one split, the ledger does not
    use parallel composition at all: everything is composed sequentially over
    all rows (a valid upper bound for every person).

    For a few releases basic composition can win (the RDP conversion is lossy
    for a single Gaussian); for many it loses (it grows like :math:`T`, RDP/PLD
    like :math:`\sqrt T`). ``"best"`` is the smallest :math:`\varepsilon` among
    the three that are valid at the target :math:`\delta`.

    Parameters
    ----------
    epsilon_budget : float, optional
        Total :math:`\varepsilon` allowed (> 0).
    delta_budget : float, optional
        Total :math:`\delta` allowed, in [0, 1).
    partition : str, optional
        Id of the current split of the population into parts (e.g. a hash of the
        split's seed and fractions). A charge with ``parts`` but no
        ``split_id`` is stamped with it when added.

    Examples
    --------
    >>> from dpkme.privacy.accounting import BudgetLedger, pure_dp_charge
    >>> led = BudgetLedger(partition="split-A")
    >>> _ = led.add(pure_dp_charge("test on held-out rows", epsilon=1.0, details={"parts": ("held-out",)}))
    >>> _ = led.add(pure_dp_charge("release of private rows", epsilon=1.0, details={"parts": ("private",)}))
    >>> led.totals()["basic"]                    # disjoint parts of one split: parallel composition
    (1.0, 0.0)
    >>> led.partition = "split-B"                # the split changed after spending
    >>> _ = led.add(pure_dp_charge("another release", epsilon=1.0, details={"parts": ("private",)}))
    >>> led.totals()["basic"]                    # no parallel composition across splits
    (3.0, 0.0)
    """

    def __init__(self, *, epsilon_budget: float | None = None, delta_budget: float | None = None,
                 partition: str | None = None) -> None:
        self.epsilon_budget = None if epsilon_budget is None else check_epsilon(epsilon_budget, name="epsilon_budget")
        self.delta_budget = None if delta_budget is None else check_delta(delta_budget, name="delta_budget", allow_zero=True)
        self.partition = None if partition is None else str(partition)
        self.about: dict[str, Any] = {}
        self._charges: list[PrivacyCharge] = []
        self._archive: list[PrivacyCharge] = []
        self._ids: set[str] = set()

    # ------------------------------------------------------------ container
    @property
    def charges(self) -> tuple[PrivacyCharge, ...]:
        """The charges recorded since the last :meth:`reset`, oldest first (an immutable snapshot)."""
        return tuple(self._charges)

    @property
    def archive(self) -> tuple[PrivacyCharge, ...]:
        """The charges set aside by :meth:`reset`: no longer listed as current, still spent (they count in
        every total, budget check and export)."""
        return tuple(self._archive)

    @property
    def all_charges(self) -> tuple[PrivacyCharge, ...]:
        """Every charge ever recorded: the archive, then the current ones."""
        return tuple(self._archive) + tuple(self._charges)

    def __len__(self) -> int:
        return len(self._charges)

    def __contains__(self, charge: object) -> bool:
        return isinstance(charge, PrivacyCharge) and charge.id in self._ids

    @property
    def neighbouring(self) -> str | None:
        """The neighbouring relation of the charges (their typed ``relation``), if any declares one."""
        for c in self.all_charges:
            if c.relation is not None:
                return c.relation.value
        return None

    def add(self, charge: PrivacyCharge) -> PrivacyCharge:
        """Record ``charge`` and return it as recorded (stamped with the split when it reads parts).

        A charge whose id is already recorded is not added again (the recorded one is returned): the
        ledger de-duplicates on ids, and only on ids -- two charges with equal fields and different ids
        are two spendings. A charge whose relation differs from earlier charges is refused.
        """
        if not isinstance(charge, PrivacyCharge):
            raise ValueError(f"expected a PrivacyCharge, got {charge!r}.")
        if charge.id in self._ids:
            return next(c for c in self.all_charges if c.id == charge.id)
        current = self.neighbouring
        if charge.relation is not None and current is not None and charge.relation.value != current:
            raise ValueError(
                f"charge {charge.label!r} is for neighbouring={charge.relation.value!r} but the ledger already "
                f"holds charges for {current!r}; guarantees for different relations do not compose."
            )
        charge = self._stamped(charge)
        self._charges.append(charge)
        self._ids.add(charge.id)
        return charge

    def annotate(self, charge_id: str, details: dict[str, Any]) -> PrivacyCharge:
        """Add descriptive ``details`` to the recorded charge ``charge_id`` (e.g. what the finished release did:
        its number of candidates, its grid); its cost, relation, parts and id never change. Returns the charge."""
        for store in (self._charges, self._archive):
            for i, c in enumerate(store):
                if c.id == charge_id:
                    keep = {"neighbouring", "parts", "partition"}
                    extra = {k: v for k, v in dict(details).items() if k not in keep}
                    store[i] = c.with_(details={**c.details, **extra})
                    return store[i]
        raise ValueError(f"no charge with id {charge_id!r} in this ledger.")

    def merge(self, other: BudgetLedger) -> LedgerMerge:
        """Add every charge of ``other`` (its archive included) that this ledger does not hold yet, by id.

        Returns a :class:`LedgerMerge` that counts what was added and what was already there, so a caller
        can warn when the same export is imported twice. Nothing already spent is ever forgotten.
        """
        if not isinstance(other, BudgetLedger):
            raise ValueError(f"expected a BudgetLedger, got {other!r}.")
        mine = self.neighbouring
        theirs: set[str | None] = {c.relation.value if c.relation is not None else None for c in other.all_charges}
        if mine is not None and None in theirs:
            raise ValueError(f"the imported ledger has charges without a neighbouring relation; this ledger holds "
                             f"{mine} charges and cannot tell how they compose. Nothing was imported.")
        typed = {t for t in theirs if t is not None}
        if len(typed) > 1 or (mine is not None and typed - {mine}):
            raise ValueError(f"the imported ledger is for {sorted(typed)} neighbours; this ledger holds {mine} "
                             "charges, and guarantees for different relations do not compose. Nothing was imported.")
        added: list[PrivacyCharge] = []
        known: list[PrivacyCharge] = []
        for c in other.all_charges:
            (known if c.id in self._ids else added).append(c)
        for c in added:
            if c.parts and c.split_id is None:    # parts of an unknown split: never composed in parallel with ours
                c = c.with_(split_id=other.partition if other.partition is not None else "unknown split (imported)")
            self.add(c)
        return LedgerMerge(added=tuple(added), already_recorded=tuple(known))

    def _stamped(self, charge: PrivacyCharge) -> PrivacyCharge:
        """``charge`` with its ``split_id`` set to the current split if it reads parts and has none."""
        if charge.parts and charge.split_id is None and self.partition is not None:
            return charge.with_(split_id=self.partition)
        return charge

    @property
    def partitions(self) -> tuple[str | None, ...]:
        """The distinct splits (``split_id``) of the charges that declare parts, in order."""
        seen: list[str | None] = []
        for c in self.all_charges:
            if c.parts and c.split_id not in seen:
                seen.append(c.split_id)
        return tuple(seen)

    @property
    def split_changed(self) -> bool:
        """True when charges with parts come from more than one split (no parallel composition then)."""
        return len(self.partitions) > 1

    def reset(self) -> None:
        """Start a new list of current charges; the old ones move to :attr:`archive` and stay spent.

        A reset never gives budget back: the archive counts in :meth:`totals`, :meth:`exceeds_budget`,
        :meth:`remaining` and the export, because the people in the data paid for those releases.
        """
        self._archive.extend(self._charges)
        self._charges.clear()

    # ------------------------------------------------------------ totals
    def _target_delta(self, delta: float | None, charges: list[PrivacyCharge]) -> float | None:
        if delta is not None:
            return check_delta(delta)
        if self.delta_budget:
            return self.delta_budget
        spent = basic_composition(charges)[1]
        return spent if 0.0 < spent < 1.0 else None

    @staticmethod
    def _totals(charges: list[PrivacyCharge], delta_t: float | None, include_pld: bool = True) -> dict[str, Any]:
        basic = basic_composition(charges)
        out: dict[str, Any] = {"basic": basic}
        if delta_t is None:
            out["rdp"] = (math.inf, 0.0)
            if include_pld:
                out["pld"] = (math.inf, 0.0)
            out["best"] = basic
            out["best_method"] = "basic"
            return out
        out["rdp"] = (rdp_epsilon(charges, delta=delta_t), delta_t)
        if include_pld:
            out["pld"] = (pld_epsilon(charges, delta=delta_t), delta_t)
        candidates: list[tuple[float, str]] = [(out[m][0], m) for m in ("rdp", "pld") if m in out]
        if basic[1] <= delta_t:
            candidates.append((basic[0], "basic"))
        eps, method = min(candidates, key=lambda t: t[0])
        out["best"] = (eps, delta_t)
        out["best_method"] = method
        return out

    #: Name of the single group when parallel composition is not allowed because the split changed.
    ALL_ROWS_SPLIT_CHANGED = "all rows (the split changed after spending: composed sequentially)"

    @classmethod
    def _groups(cls, charges: list[PrivacyCharge]) -> dict[str, list[PrivacyCharge]]:
        """Charges affecting each declared part (charges without ``parts`` affect all).

        Parts of different splits overlap in ways the ledger does not know: if the charges with parts
        come from more than one split, there is one group with every charge (sequential composition).
        """
        parts = sorted({p for c in charges for p in c.parts})
        if not parts:
            return {"all": list(charges)}
        if len({c.split_id for c in charges if c.parts}) > 1:
            return {cls.ALL_ROWS_SPLIT_CHANGED: list(charges)}
        return {p: [c for c in charges if not c.parts or p in c.parts] for p in parts}

    def totals(self, *, delta: float | None = None, include_pld: bool = True) -> dict[str, Any]:
        r"""Composed privacy of all charges.

        Parameters
        ----------
        delta : float, optional
            Target :math:`\delta` for RDP/PLD. Defaults to ``delta_budget`` if one
            is set and positive, else to :math:`\sum_i c_i\delta_i` if positive;
            otherwise (only pure charges, no budget) RDP/PLD are reported as
            ``(inf, 0.0)`` and ``best`` is the basic total.
        include_pld : bool
            Skip the PLD accountant (the slowest) when False.

        Returns
        -------
        dict
            ``{"basic": (eps, delta_sum), "rdp": (eps, delta), "pld": (eps, delta),
            "best": (eps, delta), "best_method": str}``.
        """
        charges = list(self.all_charges)
        delta_t = self._target_delta(delta, charges)
        groups = self._groups(charges)
        per_part = {p: self._totals(cs, delta_t, include_pld) for p, cs in groups.items()}
        worst = max(per_part, key=lambda p: per_part[p]["best"][0])
        out = dict(per_part[worst])
        if len(per_part) > 1:
            out["parts"] = {p: t["best"] for p, t in per_part.items()}
            out["worst_part"] = worst
        return out

    def exceeds_budget(self, extra: PrivacyCharge | None = None, *, method: str = "best") -> bool:
        r"""Whether the charges (plus ``extra``, if given) are **not** certified within the budget.

        Certified means: ``method`` gives :math:`\varepsilon \le` ``epsilon_budget``
        at :math:`\delta =` ``delta_budget`` (basic: also :math:`\sum c_i\delta_i
        \le` ``delta_budget``). ``"best"`` accepts if any accountant certifies.
        A missing ``epsilon_budget`` means no limit on :math:`\varepsilon`; a
        missing ``delta_budget`` means :math:`\delta = 0`. With neither set,
        always False. Use ``extra`` to check a release *before* running it.
        """
        check_in(method, ACCOUNTING_METHODS, name="method")
        if self.epsilon_budget is None and self.delta_budget is None:
            return False
        charges = list(self.all_charges)
        if extra is not None:
            charges += [self._stamped(c) for c in _as_charges([extra])]
        groups = self._groups(charges)
        if len(groups) > 1:
            return any(self._exceeds(cs, method) for cs in groups.values())
        return self._exceeds(charges, method)

    def _exceeds(self, charges: list[PrivacyCharge], method: str) -> bool:
        eps_b = math.inf if self.epsilon_budget is None else self.epsilon_budget
        delta_b = self.delta_budget or 0.0
        tol = 1e-12 * max(1.0, eps_b if math.isfinite(eps_b) else 1.0)
        basic_eps, basic_delta = basic_composition(charges)
        if method in ("basic", "best") and basic_eps <= eps_b + tol and basic_delta <= delta_b:
            return False
        if method == "basic" or delta_b <= 0.0:
            return True
        if method in ("rdp", "best") and rdp_epsilon(charges, delta=delta_b) <= eps_b + tol:
            return False
        return not (method in ("pld", "best") and pld_epsilon(charges, delta=delta_b) <= eps_b + tol)

    def remaining(self, *, method: str = "best") -> dict[str, Any]:
        r"""Budget left for further releases, under basic composition with what was spent.

        The spent amount is :math:`(\varepsilon_{\rm spent}, \delta_{\rm spent})` with
        :math:`\delta_{\rm spent} = \sum_i c_i\delta_i` and
        :math:`\varepsilon_{\rm spent}` the ``method``'s :math:`\varepsilon` at that
        :math:`\delta` (or :math:`\sum c_i\varepsilon_i` when it is 0). Any further
        release that is :math:`(\varepsilon', \delta')`-DP with
        :math:`\varepsilon' \le` ``epsilon`` and :math:`\delta' \le` ``delta``
        keeps the ledger within budget (by basic composition of the past block
        with the new release). This is conservative: :meth:`exceeds_budget` with
        ``extra=`` recomposes everything and may allow more.

        Returns
        -------
        dict
            ``{"epsilon": float or inf, "delta": float or inf, "epsilon_spent": ...,
            "delta_spent": ..., "method": str}``; negative values mean the budget
            is already exceeded.
        """
        check_in(method, ACCOUNTING_METHODS, name="method")
        charges = list(self.all_charges)
        basic_eps, spent_delta = basic_composition(charges)
        if method == "basic" or not (0.0 < spent_delta < 1.0):
            spent_eps, used = basic_eps, "basic"
        else:
            t = self._totals(charges, spent_delta, include_pld=method in ("pld", "best"))
            spent_eps = t[method][0]
            used = t["best_method"] if method == "best" else method
        eps_left = math.inf if self.epsilon_budget is None else self.epsilon_budget - spent_eps
        delta_left = math.inf if self.delta_budget is None else self.delta_budget - spent_delta
        return {
            "epsilon": eps_left,
            "delta": delta_left,
            "epsilon_spent": spent_eps,
            "delta_spent": spent_delta,
            "method": used,
        }

    def to_records(self) -> list[dict[str, Any]]:
        """One JSON-friendly dict per charge (the archive first, flagged ``archived``), with running
        basic-composition totals."""
        out = []
        eps = delta = 0.0
        n_archived = len(self._archive)
        for i, c in enumerate(self.all_charges):
            eps += c.count * c.epsilon
            delta += c.count * c.delta
            rec = {"index": i, **c.to_record(), "archived": i < n_archived,
                   "cumulative_epsilon_basic": eps, "cumulative_delta_basic": delta}
            out.append(rec)
        return out

    # ------------------------------------------------------------ export / import
    LEDGER_FORMAT = "dpkme-ledger/1"

    def to_json(self, *, name: str | None = None, about: dict[str, Any] | None = None) -> str:
        """The ledger as JSON text (budget, split id and every charge), for :meth:`from_json`.

        It holds no data and no seed: only what was released at which privacy cost. ``name`` and ``about``
        (JSON-friendly) say whose ledger it is, e.g. the dataset's identity.
        """
        from .._version import __version__

        doc = {"format": self.LEDGER_FORMAT, "library": "dpkme", "version": __version__, "name": name,
               "about": about or {},
               "epsilon_budget": self.epsilon_budget, "delta_budget": self.delta_budget,
               "partition": self.partition,
               "charges": [c.to_record() for c in self._charges],
               "archive": [c.to_record() for c in self._archive]}
        return json.dumps(doc, indent=2, default=_json_default)

    @classmethod
    def from_json(cls, text: str | bytes) -> BudgetLedger:
        """Inverse of :meth:`to_json`; every malformed input raises ValueError."""
        if isinstance(text, (bytes, bytearray)):
            try:
                text = text.decode("utf-8")
            except UnicodeDecodeError:
                raise ValueError("a ledger file is UTF-8 JSON text; this file is not.") from None
        if not isinstance(text, str):
            raise ValueError(f"from_json needs JSON text, got {type(text).__name__}.")
        try:
            doc = json.loads(text)
        except json.JSONDecodeError as exc:
            raise ValueError(f"not valid JSON: {exc}.") from None
        if not isinstance(doc, dict) or doc.get("format") != cls.LEDGER_FORMAT:
            raise ValueError(f"this is not a dpkme ledger (expected \"format\": \"{cls.LEDGER_FORMAT}\").")
        if not isinstance(doc.get("charges"), list):
            raise ValueError("a ledger file needs a list of charges.")
        led = cls(epsilon_budget=doc.get("epsilon_budget"), delta_budget=doc.get("delta_budget"),
                  partition=doc.get("partition"))
        about = doc.get("about")
        led.about = about if isinstance(about, dict) else {}
        archive = doc.get("archive") or []
        if not isinstance(archive, list):
            raise ValueError("a ledger file's archive is a list of charges.")
        for where, records in (("archived charge", archive), ("charge", doc["charges"])):
            for i, rec in enumerate(records):
                try:
                    led.add(PrivacyCharge.from_record(rec))
                except ValueError as exc:
                    raise ValueError(f"{where} {i}: {exc}") from None
            if where == "archived charge":
                led.reset()
        return led

    def __repr__(self) -> str:
        return (
            f"BudgetLedger(n_charges={len(self)}, n_archived={len(self._archive)}, epsilon_budget={self.epsilon_budget}, "
            f"delta_budget={self.delta_budget})"
        )


@dataclass(frozen=True)
class LedgerMerge:
    """What :meth:`BudgetLedger.merge` did: the charges it added and those it already held (by id).

    Parameters
    ----------
    added : tuple of PrivacyCharge
        Charges new to the ledger.
    already_recorded : tuple of PrivacyCharge
        Charges whose id the ledger already held (not added again).
    """

    added: tuple[PrivacyCharge, ...]
    already_recorded: tuple[PrivacyCharge, ...]

    @property
    def duplicate_import(self) -> bool:
        """True when every charge was already recorded (the same export imported again)."""
        return bool(self.already_recorded) and not self.added


def _json_default(o: object) -> object:
    if isinstance(o, tuple):
        return list(o)
    if isinstance(o, (np.floating, np.integer)):
        return o.item()
    if isinstance(o, np.ndarray):
        return o.tolist()
    return str(o)
