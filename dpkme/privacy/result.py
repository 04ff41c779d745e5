r"""One protocol for every private result: the charge it spent, its metadata, its JSON export.

Every release function of dpkme returns an object that satisfies :class:`PrivateResult`:

``charge``
    The :class:`~dpkme.privacy.accounting.PrivacyCharge` the mechanism computed where it drew its noise
    (the same charge its companion ``*_charge`` function gives from the public parameters, e.g.
    :func:`~dpkme.release.charges.algorithm1_charge`), or ``None`` for a result without privacy noise (the
    uniform baseline, the non-private references). It is stored on the result, not re-derived: its ``id``
    identifies this one spending in a :class:`~dpkme.privacy.accounting.BudgetLedger`.
``metadata()``
    A JSON-serialisable dict of everything that may be published (never the private rows, never a seed of
    a real release), with the charge as its record (:meth:`~dpkme.privacy.accounting.PrivacyCharge.to_record`).
``to_json()``
    That metadata (and the released values, where the type has them) as JSON text.

Examples
--------
>>> import numpy as np
>>> from dpkme.kernels import GaussianKernel
>>> from dpkme.privacy.result import PrivateResult
>>> from dpkme.release import uniform_baseline
>>> rel = uniform_baseline(np.zeros((2, 1)), kernel=GaussianKernel(lengthscale=1.0))
>>> isinstance(rel, PrivateResult), rel.charge is None
(True, True)
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any, Protocol, runtime_checkable

if TYPE_CHECKING:
    from .accounting import PrivacyCharge

__all__ = ["PrivateResult", "charge_record"]


@runtime_checkable
class PrivateResult(Protocol):
    """What every dpkme release returns: ``charge``, ``metadata()`` and ``to_json()`` (module docstring).

    A structural type (``isinstance`` checks that the three members exist): Release, TableRelease,
    GPRelease, DPKMeansResult, ClusterwiseRelease, DPGMResult, TwoSampleResult, PrivateBounds,
    PrivateCategories and LengthscaleChoice satisfy it.

    Parameters
    ----------
    *args, **kwargs
        None: a protocol is a type to check against (``isinstance(result, PrivateResult)``), not instantiated.

    Attributes
    ----------
    charge : PrivacyCharge or None
        The charge the mechanism computed when it drew its noise (``None`` without privacy noise).
    """

    charge: PrivacyCharge | None

    def metadata(self) -> dict[str, Any]:
        """Everything that may be published, JSON-serialisable."""

    def to_json(self) -> str:
        """The published part as JSON text."""


def charge_record(charge: PrivacyCharge | None) -> dict[str, Any] | None:
    """``charge.to_record()``, or ``None`` for a result without a charge.

    Parameters
    ----------
    charge : PrivacyCharge or None
        A result's charge.

    Returns
    -------
    dict or None
        The JSON-friendly record (:meth:`~dpkme.privacy.accounting.PrivacyCharge.to_record`).
    """
    return None if charge is None else charge.to_record()
