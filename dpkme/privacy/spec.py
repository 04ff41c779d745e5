r"""Typed privacy facts shared by releases, planners, audits and the app.

A differential-privacy guarantee is a statement about a *neighbouring relation*: two tables are
neighbours if they differ in one person's row. Which rows count as "differing" decides the sensitivity
of every statistic, so the relation is a typed value here, not a free-form string:

* :attr:`NeighbouringRelation.REPLACE_ONE` -- :math:`D \simeq D'` if one row is replaced by another;
  the number of rows :math:`N` is the same on both sides, so it is **public**.
* :attr:`NeighbouringRelation.ADD_REMOVE` -- :math:`D \simeq D'` if one row is added or removed;
  :math:`N` differs by one, so it is private and may only enter a release as a *declared* (public)
  value or through a privately counted one.

:class:`PrivacySpec` bundles what a caller asks of one private computation: the target
:math:`(\varepsilon, \delta)`, the relation, the Gaussian calibration (``"analytic"``, Balle & Wang 2018,
or ``"classic"``, Dwork & Roth 2014 Thm. A.1) and the noise source (fresh OS entropy, OpenDP's vetted
samplers, or a seeded replay that is *not* private).

The release functions, their companion charges (:mod:`dpkme.release.charges`), the planners
(:mod:`dpkme.privacy.planning`) and :func:`dpkme.audit.run_audit` take a keyword-only ``privacy=PrivacySpec(...)``
as the typed alternative to their loose ``epsilon``/``delta``/``neighbouring``/``calibration`` arguments.
:func:`resolve` (and :func:`resolve_noise` for the noise source) turns the two into the values a function
uses, once for all of them: with a spec its fields are used, and a loose argument that disagrees with it is a
``ValueError`` naming both values (a loose argument left out is fine).

Examples
--------
>>> from dpkme.privacy.spec import NeighbouringRelation, PrivacySpec
>>> spec = PrivacySpec(epsilon=1.0, delta=1e-6)
>>> spec.relation is NeighbouringRelation.REPLACE_ONE, spec.relation.n_is_public
(True, True)
>>> NeighbouringRelation.parse("add-remove").n_is_public
False
>>> resolve(spec, delta=1e-6).neighbouring              # the spec's fields; an agreeing loose value is fine
'replace-one'
>>> resolve(spec, epsilon=2.0)
Traceback (most recent call last):
...
ValueError: epsilon=2.0 conflicts with privacy.epsilon=1.0: give one of them (or equal values).
>>> PrivacySpec(epsilon=0.0, delta=1e-6)
Traceback (most recent call last):
...
ValueError: epsilon must be a finite number > 0, got 0.0.
"""

from __future__ import annotations

import enum
import math
import numbers
from dataclasses import dataclass
from typing import NamedTuple

from .._validation import check_delta, check_epsilon, check_in

__all__ = ["CALIBRATIONS", "NOISE_SOURCES", "NeighbouringRelation", "PrivacySpec", "ResolvedPrivacy", "resolve",
           "resolve_noise"]

#: Gaussian calibrations (:func:`dpkme.privacy.calibration.calibrate_gaussian`).
CALIBRATIONS = ("analytic", "classic")
#: Where the noise comes from: fresh OS entropy (numpy's PCG64 seeded from the OS), OpenDP's samplers, or a
#: seeded replay for teaching (NOT private: the seed regenerates the noise).
NOISE_SOURCES = ("os-entropy", "opendp", "seeded")


class NeighbouringRelation(str, enum.Enum):
    """The neighbouring relation of a guarantee (a ``str`` enum: ``"replace-one"`` / ``"add-remove"``).

    Parameters
    ----------
    value : str
        ``"replace-one"`` or ``"add-remove"`` (``NeighbouringRelation("add-remove")``); :meth:`parse` also
        accepts an instance and names a bad value.
    names, module, qualname, type, start, boundary : optional
        Python's functional ``Enum`` API (not used here).
    """

    REPLACE_ONE = "replace-one"
    ADD_REMOVE = "add-remove"

    def __str__(self) -> str:
        return str(self.value)

    @property
    def n_is_public(self) -> bool:
        """Whether the number of rows is the same for all neighbours (replace-one), hence public."""
        return self is NeighbouringRelation.REPLACE_ONE

    @classmethod
    def parse(cls, value: object) -> NeighbouringRelation:
        """The relation named by ``value`` (an instance or its string); ValueError names a bad value."""
        if isinstance(value, cls):
            return value
        try:
            return cls(str(value))
        except ValueError:
            raise ValueError(
                f"neighbouring relation must be one of {[m.value for m in cls]}, got {value!r}."
            ) from None


@dataclass(frozen=True)
class PrivacySpec:
    r"""What one private computation is asked to satisfy: :math:`(\varepsilon,\delta)`-DP under a relation.

    Parameters
    ----------
    epsilon : float
        Target :math:`\varepsilon > 0`.
    delta : float
        Target :math:`\delta \in [0, 1)` (0 for pure mechanisms).
    relation : NeighbouringRelation or str, default "replace-one"
        The neighbouring relation of the guarantee.
    calibration : {"analytic", "classic"}, default "analytic"
        The Gaussian calibration.
    noise : {"os-entropy", "opendp", "seeded"}, default "os-entropy"
        The noise source; ``"seeded"`` is a replayable teaching mode and never private.

    Examples
    --------
    >>> PrivacySpec(epsilon=2, delta=1e-6, relation="add-remove").relation.value
    'add-remove'
    >>> PrivacySpec(epsilon=1, delta=1e-6, noise="seeded").is_private
    False
    """

    epsilon: float
    delta: float
    relation: NeighbouringRelation = NeighbouringRelation.REPLACE_ONE
    calibration: str = "analytic"
    noise: str = "os-entropy"

    def __post_init__(self) -> None:
        set_ = object.__setattr__
        set_(self, "epsilon", check_epsilon(self.epsilon))
        set_(self, "delta", check_delta(self.delta, allow_zero=True))
        set_(self, "relation", NeighbouringRelation.parse(self.relation))
        set_(self, "calibration", check_in(self.calibration, CALIBRATIONS, name="calibration"))
        set_(self, "noise", check_in(self.noise, NOISE_SOURCES, name="noise"))

    @property
    def is_private(self) -> bool:
        """False for a seeded replay (its seed regenerates the noise)."""
        return self.noise != "seeded"


class ResolvedPrivacy(NamedTuple):
    r"""The effective privacy arguments of one call (:func:`resolve`).

    Parameters
    ----------
    epsilon : float
        The :math:`\varepsilon` to use (NaN where neither a spec nor the caller gave one and none is needed:
        a planner that computes it).
    delta : float
        The :math:`\delta` to use (0 where neither a spec nor the caller gave one and none is needed: a pure
        :math:`\varepsilon`-DP mechanism).
    neighbouring : str
        The relation's value, ``"replace-one"`` or ``"add-remove"`` (a plain string, as the loose argument).
    calibration : str
        The Gaussian calibration.
    """

    epsilon: float
    delta: float
    neighbouring: str
    calibration: str


def _same(loose: object, typed: object) -> bool:
    if isinstance(typed, float):
        try:
            return float(loose) == typed           # type: ignore[arg-type]  # any number-like loose value
        except (TypeError, ValueError):
            return False
    return loose == typed


def _conflict(name: str, loose: object, typed: object, field: str | None = None) -> ValueError:
    return ValueError(f"{name}={loose!r} conflicts with privacy.{field or name}={typed!r}: give one of them "
                      "(or equal values).")


def resolve(privacy: PrivacySpec | None, *, epsilon: float | None = None, delta: float | None = None,
            neighbouring: str | None = None, calibration: str | None = None, require_epsilon: bool = True,
            require_delta: bool = True, default_calibration: str = "analytic") -> ResolvedPrivacy:
    r"""The privacy arguments a function uses: a :class:`PrivacySpec`'s fields, or the loose arguments.

    The loose arguments of the functions that take ``privacy=`` default to ``None`` ("not given"). Without a
    spec a missing :math:`\varepsilon` (or :math:`\delta`, where required) is a ``ValueError``, the relation
    defaults to ``"replace-one"`` and the calibration to ``default_calibration``; the values are returned as
    given (the function validates them as before). With a spec its fields are returned, and every loose
    argument that was given must agree with them: a conflict is a ``ValueError`` naming both values.

    Parameters
    ----------
    privacy : PrivacySpec or None
        The typed request, or ``None`` for the loose arguments alone.
    epsilon, delta : float, optional
        The loose :math:`(\varepsilon, \delta)`.
    neighbouring : {"replace-one", "add-remove"}, optional
        The loose relation (a :class:`NeighbouringRelation` or its string).
    calibration : str, optional
        The loose Gaussian calibration.
    require_epsilon : bool, default True
        Whether a call without a spec must give ``epsilon`` (False for the planners that compute it).
    require_delta : bool, default True
        Whether a call without a spec must give ``delta`` (False for pure :math:`\varepsilon`-DP mechanisms).
    default_calibration : str, default "analytic"
        The calibration when neither a spec nor the loose argument gives one.

    Returns
    -------
    ResolvedPrivacy
        ``(epsilon, delta, neighbouring, calibration)``; ``neighbouring`` is the relation's string.

    Raises
    ------
    ValueError
        A loose argument conflicts with the spec, a required one is missing, or ``privacy`` is not a
        :class:`PrivacySpec`.

    Examples
    --------
    >>> spec = PrivacySpec(epsilon=1.0, delta=1e-6, relation="add-remove")
    >>> resolve(spec, neighbouring="add-remove")
    ResolvedPrivacy(epsilon=1.0, delta=1e-06, neighbouring='add-remove', calibration='analytic')
    >>> resolve(None, epsilon=0.5, delta=1e-5)
    ResolvedPrivacy(epsilon=0.5, delta=1e-05, neighbouring='replace-one', calibration='analytic')
    >>> resolve(spec, neighbouring="replace-one")
    Traceback (most recent call last):
    ...
    ValueError: neighbouring='replace-one' conflicts with privacy.relation='add-remove': give one of them (or equal values).
    """
    if privacy is None:
        if epsilon is None and require_epsilon:
            raise ValueError("epsilon is required: pass epsilon=... (and delta=...) or privacy=PrivacySpec(...).")
        if delta is None and require_delta:
            raise ValueError("delta is required: pass delta=... or privacy=PrivacySpec(...).")
        return ResolvedPrivacy(math.nan if epsilon is None else epsilon, 0.0 if delta is None else delta,
                               "replace-one" if neighbouring is None else neighbouring,
                               default_calibration if calibration is None else calibration)
    if not isinstance(privacy, PrivacySpec):
        raise ValueError(f"privacy must be a PrivacySpec or None, got {type(privacy).__name__}.")
    if epsilon is not None and not _same(epsilon, privacy.epsilon):
        raise _conflict("epsilon", epsilon, privacy.epsilon)
    if delta is not None and not _same(delta, privacy.delta):
        raise _conflict("delta", delta, privacy.delta)
    relation = privacy.relation.value
    if neighbouring is not None and NeighbouringRelation.parse(neighbouring).value != relation:
        raise _conflict("neighbouring", str(neighbouring), relation, "relation")
    if calibration is not None and calibration != privacy.calibration:
        raise _conflict("calibration", calibration, privacy.calibration)
    return ResolvedPrivacy(privacy.epsilon, privacy.delta, relation, privacy.calibration)


def _is_seed(random_state: object) -> bool:
    return isinstance(random_state, numbers.Integral) and not isinstance(random_state, bool)


def resolve_noise(privacy: PrivacySpec | None, *, noise: str | None = None, random_state: object = None,
                  opendp: bool = True, function: str = "this release") -> str:
    """The ``noise`` sampler option of a release (``"numpy"`` or ``"opendp"``) from a spec's noise source.

    Without a spec, the loose ``noise`` (default ``"numpy"``). With one, its ``noise`` must be honoured
    exactly, so that the release records the source the spec names (:func:`dpkme._validation.noise_rng`):

    * ``"os-entropy"``: ``"numpy"`` noise from fresh OS entropy, so ``random_state`` must be ``None`` (a seed
      would make a replayable demo, a caller's generator one labelled ``"generator"``);
    * ``"opendp"``: ``"opendp"`` (a function without OpenDP's sampler refuses it), ``random_state`` not an
      int (OpenDP cannot be seeded);
    * ``"seeded"``: ``"numpy"`` noise from an int ``random_state``, which is required: the release is labelled
      not private exactly as a seeded ``random_state`` alone makes it.

    Parameters
    ----------
    privacy : PrivacySpec or None
        The typed request.
    noise : {"numpy", "opendp"}, optional
        The loose sampler option (``None``: not given); it must agree with the spec.
    random_state : None, int or numpy.random.Generator
        The release's ``random_state``.
    opendp : bool, default True
        Whether the function has OpenDP's sampler (a ``noise`` option).
    function : str, default "this release"
        The function's name, for the error messages.

    Returns
    -------
    str
        ``"numpy"`` or ``"opendp"``.

    Raises
    ------
    ValueError
        The spec's noise source cannot be honoured with these arguments (both named).

    Examples
    --------
    >>> resolve_noise(PrivacySpec(epsilon=1, delta=1e-6, noise="opendp"))
    'opendp'
    >>> resolve_noise(PrivacySpec(epsilon=1, delta=1e-6, noise="seeded"), random_state=0)
    'numpy'
    >>> resolve_noise(PrivacySpec(epsilon=1, delta=1e-6), random_state=0)
    Traceback (most recent call last):
    ...
    ValueError: privacy.noise='os-entropy' conflicts with random_state=0: ...
    """
    if privacy is None:
        return "numpy" if noise is None else noise
    if not isinstance(privacy, PrivacySpec):
        raise ValueError(f"privacy must be a PrivacySpec or None, got {type(privacy).__name__}.")
    wanted = "opendp" if privacy.noise == "opendp" else "numpy"
    if noise is not None and noise != wanted:
        raise ValueError(f"noise={noise!r} conflicts with privacy.noise={privacy.noise!r}: give one of them "
                         "(privacy.noise='opendp' is noise='opendp', the other sources noise='numpy').")
    if privacy.noise == "opendp":
        if not opendp:
            raise ValueError(f"privacy.noise='opendp' cannot be honoured: {function} has no OpenDP sampler; use "
                             "noise='os-entropy'.")
        if _is_seed(random_state):
            raise ValueError(f"privacy.noise='opendp' conflicts with random_state={random_state!r}: OpenDP's "
                             "sampler cannot be seeded; pass random_state=None (or a Generator for the public "
                             "randomness).")
    elif privacy.noise == "os-entropy":
        if random_state is not None:
            raise ValueError(f"privacy.noise='os-entropy' conflicts with random_state={random_state!r}: a seed or a "
                             "caller's generator makes the noise replayable, not fresh OS entropy; pass "
                             "random_state=None, or PrivacySpec(noise='seeded') with an int random_state for a "
                             "replayable (not private) demo.")
    elif not _is_seed(random_state):
        raise ValueError(f"privacy.noise='seeded' needs an int random_state (the seed of the replay), got "
                         f"random_state={random_state!r}.")
    return wanted
