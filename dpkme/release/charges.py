r"""The privacy charge a release's parameters imply, known before the release runs.

Each release function has a companion here that takes the same public parameters and returns the
:class:`~dpkme.privacy.accounting.PrivacyCharge` its output will satisfy, **without reading any data**:
a caller (the app, a pipeline) checks the budget first and records exactly what the library computed,
instead of re-deriving sensitivities and calibrations. A finished release reports the same charge
(:func:`release_charge`, :attr:`dpkme.release.Release.charge`); the tests check that the two agree.

===========================  ==========================================================  =========================
function                     sensitivity (replace-one)                                   noise
===========================  ==========================================================  =========================
:func:`algorithm1_charge`    :func:`~dpkme.privacy.sensitivity.kme_sensitivity`           Gaussian (Prop. 3)
                             :math:`\sqrt{2a - 2k_{\min}}/N` (tight) or :math:`2/N`
:func:`algorithm2_charge`    :math:`2b/N`, :math:`b = \sup\|\phi(x)\|_2 = 1` (Prop. 9)    Gaussian
:func:`gp_release_charge`    RKHS sensitivity of :math:`f_D` (:func:`~dpkme.release.gp.gp_sensitivity`)  Gaussian process
:func:`exponential_mechanism_charge`  score sensitivity (Sec. 3.4)                       pure :math:`\varepsilon`-DP
===========================  ==========================================================  =========================

Examples
--------
>>> from dpkme.kernels import GaussianKernel
>>> from dpkme.release.charges import algorithm1_charge
>>> c = algorithm1_charge(n_private=1000, kernel=GaussianKernel(lengthscale=1.0), epsilon=1.0, delta=1e-6)
>>> (c.mechanism, c.epsilon, c.delta, c.details["neighbouring"])
('gaussian', 1.0, 1e-06, 'replace-one')
"""

from __future__ import annotations

from typing import TYPE_CHECKING

import numpy.typing as npt

from ..kernels.kernel import Kernel
from ..privacy.accounting import PrivacyCharge, gaussian_charge, pure_dp_charge
from ..privacy.calibration import GaussianCalibration, calibrate_gaussian
from ..privacy.sensitivity import feature_mean_sensitivity, kme_sensitivity

if TYPE_CHECKING:
    from .result import Release

__all__ = [
    "algorithm1_charge",
    "algorithm2_charge",
    "exponential_mechanism_charge",
    "gp_release_charge",
    "release_charge",
]


def algorithm1_charge(*, n_private: int, kernel: Kernel, epsilon: float, delta: float,
                      calibration: str = "analytic", sensitivity: str = "tight",
                      neighbouring: str = "replace-one", domain: tuple[npt.ArrayLike, npt.ArrayLike] | None = None,
                      label: str | None = None) -> PrivacyCharge:
    r"""The charge of :func:`~dpkme.release.algorithm1` with these parameters (Balog et al. 2018, Alg. 1).

    The projected embedding has the sensitivity of :math:`\hat\mu_X` (the projection is 1-Lipschitz),
    :math:`\Delta` = :func:`~dpkme.privacy.sensitivity.kme_sensitivity`; the noise is
    :func:`~dpkme.privacy.calibration.calibrate_gaussian` at :math:`(\varepsilon, \delta, \Delta)`.

    Parameters
    ----------
    n_private : int
        Public size :math:`N` of the private table.
    kernel : Kernel
        The kernel (bounded, :math:`k(x,x) \le 1`).
    epsilon, delta : float
        The privacy parameters of the release.
    calibration : {"analytic", "classic"}, default "analytic"
        The Gaussian calibration (:func:`~dpkme.privacy.calibration.calibrate_gaussian`).
    sensitivity : {"tight", "paper"}, default "tight"
        :math:`\sqrt{2a - 2k_{\min}}/N` or the paper's :math:`2/N` (replace-one).
    neighbouring : {"replace-one", "add-remove"}, default "replace-one"
        The neighbouring relation of the guarantee.
    domain : (lower, upper), optional
        A declared box, as for :func:`~dpkme.release.algorithm1`.
    label : str, optional
        The ledger's label (default: "Algorithm 1").

    Returns
    -------
    PrivacyCharge
        A Gaussian charge with ``details["neighbouring"]`` and ``details["mechanism"] = "algorithm1"``.
    """
    sens = kme_sensitivity(n=n_private, kernel=kernel, neighbouring=neighbouring, mode=sensitivity, domain=domain)
    cal = calibrate_gaussian(epsilon=epsilon, delta=delta, sensitivity=sens, method=calibration)
    return gaussian_charge(label or "Algorithm 1", cal,
                           details={"neighbouring": neighbouring, "mechanism": "algorithm1"})


def algorithm2_charge(*, n_private: int, epsilon: float, delta: float, calibration: str = "analytic",
                      neighbouring: str = "replace-one", norm_bound: float = 1.0,
                      label: str | None = None) -> PrivacyCharge:
    r"""The charge of :func:`~dpkme.release.algorithm2` with these parameters (Balog et al. 2018, Alg. 2).

    The mean of unit-norm random features has :math:`\Delta = 2b/N` replace-one, :math:`b/N` add-remove
    (Proposition 9, :func:`~dpkme.privacy.sensitivity.feature_mean_sensitivity`); the reduced-set solver
    is post-processing.

    Parameters
    ----------
    n_private : int
        Public size :math:`N`.
    epsilon, delta : float
        The privacy parameters of the release.
    calibration : {"analytic", "classic"}, default "analytic"
        The Gaussian calibration (:func:`~dpkme.privacy.calibration.calibrate_gaussian`).
    neighbouring : {"replace-one", "add-remove"}, default "replace-one"
        The neighbouring relation of the guarantee.
    norm_bound : float, default 1.0
        :math:`b = \sup_x \|\phi(x)\|_2` of the feature map (1 for dpkme's paired cos/sin features).
    label : str, optional
        The ledger's label (default: "Algorithm 2").

    Returns
    -------
    PrivacyCharge
        A Gaussian charge with ``details["neighbouring"]`` and ``details["mechanism"] = "algorithm2"``.

    Examples
    --------
    >>> from dpkme.release.charges import algorithm2_charge
    >>> c = algorithm2_charge(n_private=1000, epsilon=1.0, delta=1e-6)
    >>> c.details["sensitivity"], c.details["mechanism"]             # 2b/N
    (0.002, 'algorithm2')
    """
    sens = feature_mean_sensitivity(n=n_private, norm_bound=norm_bound, neighbouring=neighbouring)
    cal = calibrate_gaussian(epsilon=epsilon, delta=delta, sensitivity=sens, method=calibration)
    return gaussian_charge(label or "Algorithm 2", cal,
                           details={"neighbouring": neighbouring, "mechanism": "algorithm2"})


def gp_release_charge(*, n_private: int, kernel: Kernel, epsilon: float, delta: float, dim: int = 1,
                      normalisation: str = "kme", calibration: str = "analytic", sensitivity: str = "tight",
                      neighbouring: str = "replace-one", domain: tuple[npt.ArrayLike, npt.ArrayLike] | None = None,
                      label: str | None = None) -> PrivacyCharge:
    r"""The charge of :func:`~dpkme.release.gp_release` with these parameters (Hall, Rinaldo & Wasserman).

    :math:`\tilde f = f_D + s\,G` with :math:`s` calibrated to the RKHS sensitivity of :math:`f_D`
    (:func:`~dpkme.release.gp.gp_sensitivity`, :func:`~dpkme.release.gp.calibrate_gp`).

    Parameters
    ----------
    n_private : int
        Public size :math:`N` of the private table.
    kernel : Kernel
        The kernel (bounded, :math:`k(x,x) \le 1`).
    epsilon, delta : float
        The privacy parameters of the release.
    dim : int, default 1
        Dimension of the data (the KDE normaliser depends on it).
    normalisation : {"kme", "kde"}, default "kme"
        The released function :math:`f_D`: the KME or the kernel density estimate.
    calibration : {"analytic", "hall"}, default "analytic"
        See :func:`~dpkme.release.gp.calibrate_gp`.
    sensitivity : {"tight", "paper"}, default "tight"
        The sensitivity mode (:func:`~dpkme.release.gp.gp_sensitivity`).
    neighbouring : {"replace-one", "add-remove"}, default "replace-one"
        The neighbouring relation of the guarantee.
    domain : (lower, upper), optional
        A declared box, as for :func:`~dpkme.release.gp_release`.
    label : str, optional
        The ledger's label (default: "GP release (kme)" or "(kde)").

    Returns
    -------
    PrivacyCharge
        A Gaussian charge (noise multiplier :math:`s/\Delta`) with ``details["neighbouring"]``,
        ``details["mechanism"] = "gp-release"`` and the normalisation.
    """
    from .gp import calibrate_gp, gp_sensitivity

    sens = gp_sensitivity(n=n_private, kernel=kernel, dim=dim, normalisation=normalisation,
                          neighbouring=neighbouring, mode=sensitivity, domain=domain)
    cal = calibrate_gp(epsilon=epsilon, delta=delta, sensitivity=sens, calibration=calibration)
    return gaussian_charge(label or f"GP release ({normalisation})", cal,
                           details={"neighbouring": neighbouring, "mechanism": "gp-release",
                                    "normalisation": normalisation})


def exponential_mechanism_charge(*, epsilon: float, neighbouring: str = "replace-one",
                                 label: str | None = None) -> PrivacyCharge:
    r"""The charge of :func:`~dpkme.release.exponential_mechanism` at ``epsilon``: pure
    :math:`\varepsilon`-DP (McSherry & Talwar; Balog et al. Sec. 3.4), whatever the candidates.

    Parameters
    ----------
    epsilon : float
        :math:`\varepsilon > 0` of the release.
    neighbouring : {"replace-one", "add-remove"}, default "replace-one"
        The neighbouring relation of the guarantee.
    label : str, optional
        The ledger's label (default: "exponential mechanism").

    Returns
    -------
    PrivacyCharge
        A pure-DP charge (``mechanism="exponential"``, ``delta = 0``).
    """
    return pure_dp_charge(label or "exponential mechanism", epsilon=epsilon, mechanism="exponential",
                          details={"neighbouring": neighbouring, "mechanism": "exponential"})


def release_charge(release: Release, label: str | None = None) -> PrivacyCharge | None:
    r"""The charge of a finished :class:`~dpkme.release.Release` (``None`` for a release without privacy
    noise, e.g. the uniform baseline).

    Gaussian releases (Algorithms 1 and 2): rebuilt from the recorded :math:`(\varepsilon, \delta, \sigma,
    \Delta)`; the exponential mechanism: :func:`~dpkme.release.exponential.exponential_charge`.

    Parameters
    ----------
    release : Release
        A finished weighted-points release (e.g. read back with :meth:`~dpkme.release.Release.from_json`).
    label : str, optional
        The ledger's label (default: the mechanism's name).

    Returns
    -------
    PrivacyCharge or None
        The charge the release satisfies, or ``None`` when it has no privacy noise.
    """
    if release.mechanism == "exponential":
        from .exponential import exponential_charge

        return exponential_charge(release, label)
    if not (release.sigma > 0 and release.sensitivity > 0):
        return None
    if release.params.get("count_epsilon"):
        # dpkme.distributed: a Laplace count composed with the Gaussian sum (basic composition); the accountants
        # must not treat the whole release as one Gaussian mechanism
        return PrivacyCharge(label=label or _label_of(release), mechanism="approx-dp", epsilon=release.epsilon,
                             delta=release.delta,
                             details={"neighbouring": release.neighbouring, "mechanism": release.mechanism,
                                      "count_epsilon": release.params["count_epsilon"],
                                      "sum_epsilon": release.params.get("sum_epsilon")})
    cal = GaussianCalibration(release.sigma, release.epsilon, release.delta, release.sensitivity,
                              release.calibration, release.params.get("achieved_delta", release.delta),
                              bool(release.params.get("calibration_proven", True)))
    return gaussian_charge(label or _label_of(release), cal,
                           details={"neighbouring": release.neighbouring, "mechanism": release.mechanism})


def _label_of(release) -> str:
    """The ledger's default label of a release: "Algorithm 1", "Algorithm 2" or the mechanism's name."""
    return {"algorithm1": "Algorithm 1", "algorithm2": "Algorithm 2"}.get(release.mechanism, release.mechanism)
