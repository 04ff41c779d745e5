"""The outcome of one two-sample test: statistic, null, p-value, decision and the privacy charged."""

from __future__ import annotations

import json
import math
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from ..privacy.accounting import PrivacyCharge
from ..privacy.calibration import gaussian_epsilon
from ..privacy.result import charge_record
from .features import FeatureMap
from .nulls import NullDistribution

__all__ = ["TwoSampleResult", "combined_charge"]


def combined_charge(charges, *, delta: float, label: str) -> PrivacyCharge | None:
    r"""The Gaussian charges of one test as **one** exact Gaussian charge (``None`` for none).

    An adaptive composition of Gaussian mechanisms with noise multipliers :math:`z_i` (each repeated
    ``count`` times) is exactly a Gaussian mechanism with :math:`z = (\sum_i c_i/z_i^2)^{-1/2}` (Dong, Roth &
    Su 2022); its :math:`\varepsilon` is the exact one at ``delta``. The relation and parts are those of the
    charges (which must agree).

    Parameters
    ----------
    charges : sequence of PrivacyCharge
        Gaussian charges of the same data (e.g. a test's ``charges``: mean and second moment).
    delta : float
        The :math:`\delta` of the combined charge (the test's total).
    label : str
        The ledger label.

    Returns
    -------
    PrivacyCharge or None
        ``mechanism="gaussian"``, or ``None`` when ``charges`` is empty.

    Examples
    --------
    >>> from dpkme.privacy.accounting import PrivacyCharge
    >>> a = PrivacyCharge(label="a", mechanism="gaussian", epsilon=1.0, delta=1e-5, noise_multiplier=5.0)
    >>> c = combined_charge([a, a], delta=1e-5, label="both")
    >>> round(c.noise_multiplier, 6) == round(5.0 / 2 ** 0.5, 6), c.epsilon < 2.0
    (True, True)
    """
    charges = tuple(charges)
    if not charges:
        return None
    if any(c.mechanism != "gaussian" for c in charges):
        raise ValueError("only Gaussian charges combine into one Gaussian charge.")
    if len({c.relation for c in charges}) > 1 or len({c.parts for c in charges}) > 1:
        raise ValueError("charges under different relations or parts do not combine into one charge.")
    z = sum(c.count / c.noise_multiplier**2 for c in charges) ** -0.5
    eps = max(gaussian_epsilon(sigma=z, delta=delta, sensitivity=1.0), 1e-12)
    return PrivacyCharge(label=label, mechanism="gaussian", epsilon=eps, delta=delta, noise_multiplier=z,
                         relation=charges[0].relation, parts=charges[0].parts,
                         details={"combined": [c.label for c in charges]})


def _jsonable(value):
    if isinstance(value, np.ndarray):
        return value.tolist()
    if isinstance(value, (np.floating, np.integer)):
        return value.item()
    if isinstance(value, float) and not math.isfinite(value):
        return str(value)
    if isinstance(value, dict):
        return {str(k): _jsonable(v) for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        return [_jsonable(v) for v in value]
    return value


@dataclass
class TwoSampleResult:
    r"""Everything one test produced, for display and for the privacy ledger.

    Made by the tests of :mod:`dpkme.two_sample.private`; stored as given (no validation here).

    Parameters
    ----------
    method : str
        ``"tcmc"`` (trusted curator, perturbed mean and covariance),
        ``"nte"`` (no trusted entity: two holders), ``"release"`` (synthetic
        release vs held-out private data), ``"nonprivate"``.
    design : {"paired", "two-sample"}
        Paired statistic on :math:`z_i = \phi(x_i)-\phi(y_i)`, or the two-sample
        statistic on the two feature means.
    statistic : float
        The (private) test statistic :math:`s = w^\top V^{-1}w`.
    p_value : float
        P-value of ``statistic`` under ``null``.
    alpha : float
        Level of the test, in (0, 1).
    reject : bool
        ``p_value <= alpha``.
    null : NullDistribution
        The null used for ``p_value`` (samples for a histogram).
    naive_p_value : float
        P-value of the same statistic under the asymptotic chi-square with J
        degrees of freedom -- wrong for private statistics (it ignores the
        noise); shown for contrast.
    charges : tuple of PrivacyCharge
        What to add to a :class:`~dpkme.privacy.accounting.BudgetLedger` of the data
        set(s) tested (empty for the non-private test). Two Gaussian releases
        (mean, second moment) per privatised sample.
    holder_charges : dict or None
        ``{"X": (...), "Y": (...)}`` for tests whose two samples are privatised
        separately (each holder's own ledger pays its own releases once; the
        union pays ``charges`` by parallel composition).
    charge : PrivacyCharge or None
        ``charges`` as one exact Gaussian charge (:func:`combined_charge`), computed once by the test;
        ``None`` for the non-private test. A ledger records either this or ``charges``, not both.
    epsilon, delta : float
        Total privacy of ``charges`` (exact composition of the Gaussian
        releases); ``inf`` and ``0`` for the non-private test.
    n_x, n_y : int
        Sizes of the two samples (equal, the number of pairs, for the paired design).
    features : FeatureMap
        The public feature map used (:math:`J` = ``features.n_features``).
    released : dict, optional
        The privatised quantities actually released (noisy means, noisy second
        moments) and their post-processing (plug-in covariances); safe to show.
    noise : dict, optional
        Sensitivities, noise standard deviations, calibration and budget split.
    regularization : float, default 0.0
        The public ridge :math:`\gamma` of the statistic.
    noise_aware : bool, default True
        Whether the mean-noise variance was added to the statistic's covariance.
    noise_seed : int or None, default None
        Seed of the privacy noise (``None`` for OS-entropy noise, by design).
    noise_source : str, default "none"
        ``"seeded"`` (replayable: no privacy once the seed is known),
        ``"os-entropy"``, ``"generator"``, or ``"none"`` (no noise was added).
    null_seed : int or None, default None
        Seed of the null simulation (post-processing; safe to publish).
    seconds : float, default 0.0
        Wall time of the test.
    warnings : list of str, optional
        Caveats for the reader (negative eigenvalues projected away, a seeded noise,
        an invalid null, ...).
    params : dict, optional
        Remaining parameters (unit, mean_fraction, n_null, ...).

    Attributes
    ----------
    private : bool
        Whether any privacy was charged (``charges`` is not empty).
    n_features : int
        :math:`J`, the number of features (degrees of freedom of the naive null).
    decision : str
        ``"reject H0"`` or ``"do not reject H0"``.
    """

    method: str
    design: str
    statistic: float
    p_value: float
    alpha: float
    reject: bool
    null: NullDistribution
    naive_p_value: float
    charges: tuple[PrivacyCharge, ...]
    epsilon: float
    delta: float
    n_x: int
    n_y: int
    features: FeatureMap
    released: dict[str, Any] = field(default_factory=dict)
    noise: dict[str, Any] = field(default_factory=dict)
    regularization: float = 0.0
    noise_aware: bool = True
    noise_seed: int | None = None
    noise_source: str = "none"
    null_seed: int | None = None
    seconds: float = 0.0
    warnings: list[str] = field(default_factory=list)
    params: dict[str, Any] = field(default_factory=dict)
    holder_charges: dict[str, tuple[PrivacyCharge, ...]] | None = None
    charge: PrivacyCharge | None = None

    @property
    def private(self) -> bool:
        return bool(self.charges)

    @property
    def n_features(self) -> int:
        return self.features.n_features

    @property
    def decision(self) -> str:
        """``"reject H0"`` or ``"do not reject H0"``."""
        return "reject H0" if self.reject else "do not reject H0"

    def critical_value(self) -> float:
        """Rejection threshold of the statistic at ``alpha`` under ``null``."""
        return self.null.critical_value(self.alpha)

    def summary(self) -> str:
        """A few human-readable lines."""
        priv = (f"(epsilon={self.epsilon:.3g}, delta={self.delta:.3g})-DP" if self.private
                else "non-private (no guarantee)")
        lines = [
            f"{self.method} two-sample test, {self.design} design, n_x={self.n_x}, n_y={self.n_y}, "
            f"J={self.n_features}; {priv}",
            f"statistic = {self.statistic:.4g}; {self.null.kind} null: p = {self.p_value:.4g} "
            f"-> {self.decision} at alpha = {self.alpha:g}",
        ]
        if self.private:
            lines.append(f"naive chi2_{self.n_features} p-value (ignores the noise, not valid): {self.naive_p_value:.4g}")
        lines += [f"warning: {w}" for w in self.warnings]
        return "\n".join(lines)

    def to_dict(self, *, max_null_samples: int = 2000) -> dict[str, Any]:
        """JSON-serialisable record (the feature map is described, not dumped)."""
        return _jsonable({
            "method": self.method,
            "design": self.design,
            "statistic": self.statistic,
            "p_value": self.p_value,
            "alpha": self.alpha,
            "reject": self.reject,
            "decision": self.decision,
            "naive_p_value": self.naive_p_value,
            "null": self.null.to_dict(max_samples=max_null_samples),
            "epsilon": self.epsilon,
            "delta": self.delta,
            "charges": [c.to_record() for c in self.charges],
            "holder_charges": None if self.holder_charges is None else {
                k: [c.to_record() for c in v] for k, v in self.holder_charges.items()},
            "n_x": self.n_x,
            "n_y": self.n_y,
            "n_features": self.n_features,
            "features": self.features.describe(),
            "feature_kind": self.features.kind,
            "released": self.released,
            "noise": self.noise,
            "regularization": self.regularization,
            "noise_aware": self.noise_aware,
            "noise_seed": self.noise_seed,
            "noise_source": self.noise_source,
            "null_seed": self.null_seed,
            "seconds": self.seconds,
            "warnings": list(self.warnings),
            "params": self.params,
        })

    def metadata(self) -> dict[str, Any]:
        """:meth:`to_dict` plus the record of :attr:`charge`."""
        return {**self.to_dict(), "charge": charge_record(self.charge)}

    def to_json(self) -> str:
        """:meth:`metadata` as JSON text."""
        return json.dumps(self.metadata(), indent=2)
