r"""The number of rows under add/remove: released with the Laplace mechanism, never read silently.

Under add/remove neighbouring (:attr:`~dpkme.privacy.spec.NeighbouringRelation.ADD_REMOVE`) two neighbouring
tables differ in size by one, so :math:`N` is private. A computation that needs it (a DP-SGD sampling rate
:math:`q = L/N`, a number of steps :math:`\lceil N/L\rceil`) must use a *declared* (publicly known) size or a
privately released one. :func:`private_row_count` releases

.. math::

    \tilde N = \max\bigl(1, \operatorname{round}(N + Z)\bigr), \qquad Z \sim \mathrm{Lap}(1/\varepsilon_N),

which is :math:`\varepsilon_N`-DP (the count has L1 sensitivity 1 under add/remove; Dwork & Roth 2014,
Thm. 3.6); rounding and the floor at 1 are post-processing. The noise comes from a fresh OS-entropy generator
unless a generator is passed (a seeded replay, which is not private).

Examples
--------
>>> from dpkme.privacy.counting import private_row_count
>>> c = private_row_count(n_rows=1000, epsilon=0.05)
>>> c.charge.epsilon, c.charge.relation.value, c.value >= 1
(0.05, 'add-remove', True)
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from .._validation import check_epsilon
from .accounting import PrivacyCharge, laplace_charge
from .calibration import calibrate_laplace, laplace_noise
from .spec import NeighbouringRelation

__all__ = ["PrivateRowCount", "private_row_count"]


@dataclass(frozen=True)
class PrivateRowCount:
    r"""A released row count :math:`\tilde N` and its charge.

    Parameters
    ----------
    value : int
        :math:`\tilde N \ge 1`.
    scale : float
        The Laplace scale :math:`b = 1/\varepsilon_N`.
    charge : PrivacyCharge
        Pure :math:`\varepsilon_N`-DP under add/remove.
    """

    value: int
    scale: float
    charge: PrivacyCharge

    def metadata(self) -> dict[str, object]:
        """The count's public description (no seed, no true count)."""
        return {"n_policy": "private", "n_private": self.value, "count_epsilon": self.charge.epsilon,
                "count_scale": self.scale, "neighbouring": NeighbouringRelation.ADD_REMOVE.value}


def private_row_count(*, n_rows: int, epsilon: float, rng: np.random.Generator | None = None,
                      label: str = "private row count") -> PrivateRowCount:
    r"""Release the number of rows with :math:`\varepsilon`-DP under add/remove (the Laplace mechanism).

    Parameters
    ----------
    n_rows : int
        The true number of rows (private under add/remove): the only value read.
    epsilon : float
        :math:`\varepsilon_N > 0` spent on the count.
    rng : numpy.random.Generator, optional
        Noise generator; by default a fresh one from OS entropy (a seeded one is for replays, not private).
    label : str, default "private row count"
        The charge's label.

    Returns
    -------
    PrivateRowCount
        :math:`\tilde N = \max(1, \mathrm{round}(N + \mathrm{Lap}(1/\varepsilon_N)))` and its charge.

    Raises
    ------
    ValueError
        For a negative ``n_rows`` or an ``epsilon`` that is not positive and finite, naming the value.
    """
    if isinstance(n_rows, bool) or not isinstance(n_rows, (int, np.integer)) or int(n_rows) < 0:
        raise ValueError(f"n_rows must be a non-negative integer, got {n_rows!r}.")
    eps = check_epsilon(epsilon)
    cal = calibrate_laplace(epsilon=eps, l1_sensitivity=1.0)
    gen = np.random.default_rng() if rng is None else rng
    noisy = float(int(n_rows)) + float(laplace_noise((), scale=cal.scale, rng=gen))
    charge = laplace_charge(label, epsilon=eps, details={"mechanism": "private-row-count"}).with_(
        relation=NeighbouringRelation.ADD_REMOVE)
    return PrivateRowCount(value=max(1, int(round(noisy))), scale=cal.scale, charge=charge)
