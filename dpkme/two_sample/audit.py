r"""Audit exhibit: the paper's "perturb the statistic" variant (TCS) is not private as published.

Raj et al. (2019, Sec. 5 and App. B) add Gaussian noise to
:math:`s_n = n\,w^\top(\Sigma + \gamma I)^{-1}w` (their code:
:math:`\Sigma = \Lambda + \gamma I - ww^\top` with :math:`\Lambda = \frac1n\sum z_iz_i^\top`)
calibrated to the sensitivity bound

.. math:: \frac{4\kappa^2J\sqrt J}{n\gamma}\Big(1+\frac{\kappa^2J}{n-1}\Big)

(:func:`~dpkme.two_sample.sensitivity.published_statistic_sensitivity`). The
bound is wrong. **Counterexample** (:func:`statistic_sensitivity_counterexample`):
let every row be the same :math:`z_0` with :math:`\|z_0\|^2 = q`. Then
:math:`w = z_0`, :math:`\Lambda = z_0z_0^\top`, :math:`\Sigma = \gamma I` and
:math:`s_n = nq/\gamma`. Replace one row by :math:`-z_0` (for ME features: swap
:math:`x_i` and :math:`y_i`). Now :math:`w' = (1-2/n)z_0` and
:math:`\Sigma' = c\,z_0z_0^\top + \gamma I` with :math:`c = 1-(1-2/n)^2\approx 4/n`,
so :math:`s_n' = n(1-2/n)^2q/(cq+\gamma) \le n^2/4`. The change is about
:math:`nq/\gamma`, while the bound is about :math:`4J^{3/2}/(n\gamma)`: too small by a
factor of order :math:`n^2 q/(4J^{3/2})` (:math:`\approx 2\times10^4` for
:math:`n = 1000, J = 5, q = 1`). (The statistic is a ratio: a data set without
spread makes :math:`\Sigma` tiny, and no bound of order :math:`1/(n\gamma)` can
hold.) Data sets like these are perfectly valid inputs, and DP must hold for
all of them.

:func:`perturbed_statistic_release` runs the published mechanism so that the
privacy-audit page can show it failing (e.g. on the two data sets of the
counterexample, whose outputs are trivially distinguishable). It returns no
:class:`~dpkme.privacy.accounting.PrivacyCharge` -- its claimed guarantee is false --
and is never offered as a test.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from .._validation import check_array, check_delta, check_epsilon, check_positive_float, check_positive_int, noise_rng
from ..kernels.kernel import check_magnitude
from ..privacy.calibration import calibrate_gaussian, gaussian_epsilon
from .features import FeatureMap, MEFeatures
from .sensitivity import published_statistic_sensitivity

__all__ = [
    "paper_statistic",
    "statistic_sensitivity_counterexample",
    "perturbed_statistic_release",
    "PerturbedStatisticRelease",
]


def paper_statistic(Z, gamma: float) -> float:
    r"""The statistic of the paper's code: :math:`n\,w^\top(\Lambda+\gamma I-ww^\top)^{-1}w`.

    :math:`w = \frac1n\sum_i z_i` and :math:`\Lambda = \frac1n\sum_i z_iz_i^\top` are the
    exact (non-noisy) moments; this is the quantity the perturbed-statistic mechanism
    adds its noise to.

    Parameters
    ----------
    Z : array-like of shape (n, J)
        Paired feature differences :math:`z_i = \phi(x_i)-\phi(y_i)`; finite, with
        entries of magnitude at most :math:`10^{150}`.
    gamma : float
        Regularisation :math:`\gamma > 0` (their code's default is ``1e-5``).

    Returns
    -------
    float
        The statistic :math:`s_n`.

    Examples
    --------
    Every row the same unit vector: :math:`\Sigma = \gamma I` and :math:`s_n = n/\gamma`.

    >>> import numpy as np
    >>> from dpkme.two_sample.audit import paper_statistic
    >>> round(paper_statistic(np.tile([0.6, 0.8], (10, 1)), 0.5), 9)
    20.0
    """
    Z = check_magnitude(check_array(Z, name="Z"), "Z")  # |z| <= 1e150: the second moment cannot overflow
    gamma = check_positive_float(gamma, name="gamma")
    n, J = Z.shape
    w = Z.mean(axis=0)
    S = (Z.T @ Z) / n + gamma * np.eye(J) - np.outer(w, w)
    S = 0.5 * (S + S.T)
    return float(n * w @ np.linalg.solve(S, w))


def statistic_sensitivity_counterexample(*, n: int = 1000, n_features: int = 5, gamma: float = 1e-5,
                                         features: MEFeatures | None = None) -> dict[str, Any]:
    r"""Two neighbouring data sets whose paper statistics differ far beyond the published bound.

    Parameters
    ----------
    n : int
        Number of pairs.
    n_features : int
        J (ignored if ``features`` is given).
    gamma : float
        The regularisation (their code's default is ``1e-5``).
    features : MEFeatures, optional
        If given, the data sets are realised as actual inputs: every pair is
        :math:`(x, y) = (v_1, v_1 + 10^6\ell\,e_1)` (a test location and a point
        so far away that its features vanish), and the neighbour swaps one pair.

    Returns
    -------
    dict
        ``Z``, ``Z_neighbour`` (and ``X``, ``Y``, ``X_neighbour``, ``Y_neighbour``
        when realised), ``statistic``, ``statistic_neighbour``, ``change``,
        ``published_bound``, ``ratio`` (change / bound), ``kappa``.
    """
    n = check_positive_int(n, name="n", minimum=3)
    gamma = check_positive_float(gamma, name="gamma")
    out: dict[str, Any] = {}
    if features is not None:
        if not isinstance(features, MEFeatures):
            raise ValueError("the realised counterexample is built for MEFeatures.")
        v = features.locations[0]
        far = v.copy()
        far[0] += 1e6 * features.kernel.lengthscale
        X = np.tile(v, (n, 1))
        Y = np.tile(far, (n, 1))
        Xn, Yn = X.copy(), Y.copy()
        Xn[0], Yn[0] = far, v
        Z = features.transform(X) - features.transform(Y)
        Zn = features.transform(Xn) - features.transform(Yn)
        J = features.n_features
        kappa = features.kappa
        out.update(X=X, Y=Y, X_neighbour=Xn, Y_neighbour=Yn)
    else:
        J = check_positive_int(n_features, name="n_features")
        kappa = 1.0
        z0 = np.full(J, 1.0 / math.sqrt(J))  # |z0| = 1, every coordinate in [-1, 1]
        Z = np.tile(z0, (n, 1))
        Zn = Z.copy()
        Zn[0] = -z0
    s, sn = paper_statistic(Z, gamma), paper_statistic(Zn, gamma)
    bound = published_statistic_sensitivity(n=n, n_features=J, kappa=kappa, gamma=gamma)
    out.update(Z=Z, Z_neighbour=Zn, statistic=s, statistic_neighbour=sn, change=abs(s - sn),
               published_bound=bound, ratio=abs(s - sn) / bound, kappa=kappa, n=n, J=J, gamma=gamma)
    return out


@dataclass
class PerturbedStatisticRelease:
    r"""Output of the (broken) perturbed-statistic mechanism -- for audits only.

    ``claimed_epsilon``/``claimed_delta`` is what the paper claims; it is false
    (``valid`` is always False). ``true_epsilon_on`` maps the change of the
    statistic between two data sets to the epsilon actually achieved on that
    pair at ``claimed_delta`` (exact Gaussian privacy curve).

    Parameters
    ----------
    statistic : float
        The released value :math:`s_n + \sigma\xi`, :math:`\xi\sim\mathcal N(0, 1)`.
    sigma : float
        :math:`\sigma`, the standard deviation of the added Gaussian noise.
    claimed_sensitivity : float
        The published (invalid) sensitivity bound the noise was calibrated to
        (:func:`~dpkme.two_sample.sensitivity.published_statistic_sensitivity`).
    claimed_epsilon, claimed_delta : float
        The :math:`(\varepsilon, \delta)` the mechanism claims (and does not achieve).
    noise_seed : int or None
        Seed of the noise generator when it was seeded, for replay; ``None`` otherwise.
    noise_source : str
        Where the noise came from (as reported by the library's noise generator helper).
    valid : bool, default False
        Whether the claimed guarantee holds: always False.
    params : dict, optional
        The public settings: ``n``, ``J``, ``gamma`` and ``kappa``.
    """

    statistic: float
    sigma: float
    claimed_sensitivity: float
    claimed_epsilon: float
    claimed_delta: float
    noise_seed: int | None
    noise_source: str
    valid: bool = False
    params: dict[str, Any] = field(default_factory=dict)

    def true_epsilon_on(self, change: float) -> float:
        """Epsilon at ``claimed_delta`` of this noise on two data sets whose statistics differ by ``change``."""
        change = check_positive_float(change, name="change")
        return gaussian_epsilon(sigma=self.sigma, delta=self.claimed_delta, sensitivity=change)


def perturbed_statistic_release(X, Y, *, features: FeatureMap, epsilon, delta, gamma: float = 1e-5,
                                random_state=None) -> PerturbedStatisticRelease:
    r"""Run the paper's perturbed-statistic mechanism (noise calibrated to the published, invalid bound).

    **Not differentially private.** For the privacy-audit page: run it on the
    neighbouring data sets of :func:`statistic_sensitivity_counterexample` and
    compare the outputs.

    Releases :math:`s_n + \sigma\xi` with :math:`s_n` from :func:`paper_statistic` and
    :math:`\sigma` the Gaussian-mechanism calibration of
    :math:`(\varepsilon, \delta)` to the published sensitivity
    :math:`\frac{4\kappa^2J\sqrt J}{n\gamma}(1+\frac{\kappa^2J}{n-1})` (Raj et al. 2019, eq. 15).

    Parameters
    ----------
    X, Y : array-like of shape (n, d)
        The paired samples (equal sizes, at least 2 rows each).
    features : FeatureMap
        Public feature map :math:`\phi` with ``dim == d``; its ``kappa`` enters the bound.
    epsilon : float
        Claimed :math:`\varepsilon > 0`.
    delta : float
        Claimed :math:`\delta` in (0, 1).
    gamma : float, default 1e-5
        Regularisation :math:`\gamma > 0` of :math:`s_n`.
    random_state : None, int or Generator, optional
        Source of the noise; ``None`` uses fresh OS entropy.

    Returns
    -------
    PerturbedStatisticRelease
        The noisy statistic with its (false) claim; ``valid`` is False.

    Raises
    ------
    ValueError
        If ``features`` is not a :class:`~dpkme.two_sample.features.FeatureMap`, the
        samples do not match it or differ in size, or ``epsilon``/``delta`` are invalid.
    """
    if not isinstance(features, FeatureMap):
        raise ValueError(f"features must be a FeatureMap, got {features!r:.80}.")
    X = check_array(X, name="X", n_features=features.dim, min_rows=2)
    Y = check_array(Y, name="Y", n_features=features.dim, min_rows=2)
    if X.shape[0] != Y.shape[0]:
        raise ValueError(f"paired samples need equal sizes, got {X.shape[0]} and {Y.shape[0]}.")
    epsilon, delta = check_epsilon(epsilon), check_delta(delta)
    n = X.shape[0]
    Z = features.transform(X) - features.transform(Y)
    s = paper_statistic(Z, gamma)
    bound = published_statistic_sensitivity(n=n, n_features=features.n_features, kappa=features.kappa, gamma=gamma)
    cal = calibrate_gaussian(epsilon=epsilon, delta=delta, sensitivity=bound)
    rng, seed, source = noise_rng(random_state)
    return PerturbedStatisticRelease(
        statistic=float(s + cal.sigma * rng.standard_normal()), sigma=cal.sigma, claimed_sensitivity=bound,
        claimed_epsilon=epsilon, claimed_delta=delta, noise_seed=seed, noise_source=source,
        params={"n": n, "J": features.n_features, "gamma": gamma, "kappa": features.kappa},
    )
