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
    a real release), with the charge's public record (:func:`charge_record`: its cost, relation and details,
    not its ledger id nor its creation time).
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
    """The published record of a result's charge: :meth:`~dpkme.privacy.accounting.PrivacyCharge.to_record`
    without ``id`` and ``created`` (``None`` for a result without a charge).

    The cost, relation, parts and details are public (they follow from the public parameters). The id is the
    owner's ledger handle and the creation time a wall-clock time: neither belongs in a published file, where
    two runs on neighbouring tables with the same privatised statistic must export the same text. A result
    read back from its export (:meth:`dpkme.release.Release.from_json`) gets the same cost under a new id: a
    copy, not the spending the owner's ledger recorded.

    Parameters
    ----------
    charge : PrivacyCharge or None
        A result's charge.

    Returns
    -------
    dict or None
        The JSON-friendly record, without ``id`` and ``created``.

    Examples
    --------
    >>> from dpkme.privacy.accounting import pure_dp_charge
    >>> rec = charge_record(pure_dp_charge("choice", epsilon=0.5, relation="replace-one"))
    >>> rec["epsilon"], rec["relation"], "id" in rec, "created" in rec
    (0.5, 'replace-one', False, False)
    """
    if charge is None:
        return None
    record = charge.to_record()
    del record["id"], record["created"]
    return record
