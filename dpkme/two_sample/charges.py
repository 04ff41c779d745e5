r"""The privacy charges of the private two-sample tests, known before any row is read.

Each test of :mod:`dpkme.two_sample.private` releases, for every private holder, a noisy mean and a noisy second
moment of its features (two Gaussian mechanisms calibrated jointly by
:func:`~dpkme.two_sample.private.calibrate_moments`). Their sensitivities depend only on public quantities -- the
holder's number of rows (public under replace-one), the feature map's bounds and, for TCMC, the privacy unit -- so
the charges are a function of the test's public parameters. :func:`private_test_charges` computes them the way the test
does, for a caller (the app's gate) that must charge a ledger *before* the test reads its rows; the tests check
that they equal the finished test's ``charges`` and ``holder_charges``.

Examples
--------
>>> import numpy as np
>>> from dpkme.two_sample import make_features
>>> from dpkme.two_sample.charges import private_test_charges
>>> feats = make_features("rff", n_features=8, public_sample=np.zeros((5, 2)), lengthscale=1.0, random_state=0)
>>> tc = private_test_charges("nte", n_x=500, n_y=400, features=feats, epsilon=1.0, delta=1e-6)
>>> sorted(tc.holders), len(tc.union), tc.union[0].relation.value
(['X', 'Y'], 2, 'replace-one')
"""

from __future__ import annotations

from dataclasses import dataclass

from .._validation import check_in, check_positive_int
from ..privacy.accounting import PrivacyCharge
from ..privacy.spec import NeighbouringRelation
from .private import DEFAULT_MEAN_FRACTION, calibrate_moments, union_charges
from .sensitivity import (
    paired_mean_sensitivity,
    paired_second_moment_sensitivity,
    sample_mean_sensitivity,
    sample_second_moment_sensitivity,
)

__all__ = ["TestCharges", "private_test_charges"]

_LABELS = {"tcmc": "TCMC two-sample test", "nte": "NTE two-sample test", "release": "release vs held-out test"}
#: Which holders are private, per test (X, Y); ``release`` tests a public release against private held-out rows.
_PRIVATE_SIDES = {"nte": (True, True), "release": (False, True)}


@dataclass(frozen=True)
class TestCharges:
    """The charges of one private two-sample test.

    Parameters
    ----------
    union : tuple of PrivacyCharge
        What a ledger of all the test's individuals pays (parallel composition across holders).
    holders : dict
        ``{"X": charges, "Y": charges}``: what each private holder's individuals pay.
    """

    __test__ = False        # not a pytest class

    union: tuple[PrivacyCharge, ...]
    holders: dict[str, tuple[PrivacyCharge, ...]]


def private_test_charges(method: str, *, n_x: int, n_y: int | None = None, features, epsilon: float, delta: float,
                 unit: str = "pair", mean_fraction: float = DEFAULT_MEAN_FRACTION,
                 calibration: str = "joint") -> TestCharges:
    r"""The charges of :func:`~dpkme.two_sample.tcmc_test`, :func:`~dpkme.two_sample.nte_test` or
    :func:`~dpkme.two_sample.release_test` with these public parameters (no data is read).

    Parameters
    ----------
    method : {"tcmc", "nte", "release"}
        The test.
    n_x : int
        Rows of X (the pairs for TCMC; the released points for ``"release"``, a public side).
    n_y : int, optional
        Rows of Y (required for ``"nte"`` and ``"release"``).
    features : FeatureMap
        The public feature map (its ``diff_bound`` and ``outer_diff_bound`` give the sensitivities).
    epsilon, delta : float
        The test's privacy parameters.
    unit : {"pair", "row"}, default "pair"
        TCMC's privacy unit.
    mean_fraction : float, default DEFAULT_MEAN_FRACTION
        The mean's share of the budget.
    calibration : {"joint", "split"}, default "joint"
        How the budget is split between the two releases.

    Returns
    -------
    TestCharges
    """
    check_in(method, tuple(_LABELS), name="method")
    label = _LABELS[method]
    n_x = check_positive_int(n_x, name="n_x")
    if method == "tcmc":
        B = features.diff_bound
        cal = calibrate_moments(epsilon=epsilon, delta=delta,
                                sensitivity_mean=paired_mean_sensitivity(n=n_x, diff_bound=B, unit=unit),
                                sensitivity_second=paired_second_moment_sensitivity(n=n_x, diff_bound=B, unit=unit),
                                mean_fraction=mean_fraction, calibration=calibration)
        union = tuple(c.with_(relation=NeighbouringRelation.REPLACE_ONE) for c in cal.charges(
            label, {"test": "tcmc", "privacy_unit": unit, "n": n_x, "J": features.n_features}))
        return TestCharges(union=union, holders={"X+Y": union})
    if n_y is None:
        raise ValueError(f"method={method!r} needs n_y, the number of rows of Y.")
    n_y = check_positive_int(n_y, name="n_y")
    holders: dict[str, tuple[PrivacyCharge, ...]] = {}
    for name, nh, is_private in (("X", n_x, _PRIVATE_SIDES[method][0]), ("Y", n_y, _PRIVATE_SIDES[method][1])):
        if not is_private:
            continue
        cal = calibrate_moments(
            epsilon=epsilon, delta=delta,
            sensitivity_mean=sample_mean_sensitivity(n=nh, diff_bound=features.diff_bound),
            sensitivity_second=sample_second_moment_sensitivity(n=nh, outer_diff_bound=features.outer_diff_bound),
            mean_fraction=mean_fraction, calibration=calibration)
        holders[name] = tuple(c.with_(relation=NeighbouringRelation.REPLACE_ONE) for c in cal.charges(
            f"{label} (holder {name})", {"test": method, "holder": name, "n": nh, "J": features.n_features}))
    return TestCharges(union=union_charges(holders, label), holders=holders)
