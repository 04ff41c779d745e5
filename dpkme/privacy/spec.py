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

Examples
--------
>>> from dpkme.privacy.spec import NeighbouringRelation, PrivacySpec
>>> spec = PrivacySpec(epsilon=1.0, delta=1e-6)
>>> spec.relation is NeighbouringRelation.REPLACE_ONE, spec.relation.n_is_public
(True, True)
>>> NeighbouringRelation.parse("add-remove").n_is_public
False
>>> PrivacySpec(epsilon=0.0, delta=1e-6)
Traceback (most recent call last):
...
ValueError: epsilon must be a finite number > 0, got 0.0.
"""

from __future__ import annotations

import enum
from dataclasses import dataclass

from .._validation import check_delta, check_epsilon, check_in

__all__ = ["CALIBRATIONS", "NOISE_SOURCES", "NeighbouringRelation", "PrivacySpec"]

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
