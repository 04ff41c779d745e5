r"""The privacy charge a release's parameters imply, known before the release runs.

Each release function has a companion here that takes the same public parameters and returns the
:class:`~dpkme.privacy.accounting.PrivacyCharge` its output will satisfy, **without reading any data**:
a caller (the app, a pipeline) checks the budget first and records exactly what the library computed,
instead of re-deriving sensitivities and calibrations. A finished release carries the same charge as a typed
field (:attr:`dpkme.release.Release.charge`), computed once by the mechanism where it drew its noise, with
the same constructor as its companion here; the tests check that the two agree.

====================================  ==========================================================================  ===========================
function                              sensitivity (replace-one)                                                   noise
====================================  ==========================================================================  ===========================
:func:`algorithm1_charge`             :func:`~dpkme.privacy.sensitivity.kme_sensitivity`                          Gaussian (Prop. 3)
                                      :math:`\sqrt{2a - 2k_{\min}}/N` (tight) or :math:`2/N`
:func:`algorithm2_charge`             :math:`2b/N`, :math:`b = \sup\|\phi(x)\|_2 = 1` (Prop. 9)                   Gaussian
:func:`gp_release_charge`             RKHS sensitivity of :math:`f_D` (:func:`~dpkme.release.gp.gp_sensitivity`)  Gaussian process
:func:`exponential_mechanism_charge`  score sensitivity (Sec. 3.4)                                                pure :math:`\varepsilon`-DP
====================================  ==========================================================================  ===========================

Examples
--------
>>> from dpkme.kernels import GaussianKernel
>>> from dpkme.release.charges import algorithm1_charge
>>> c = algorithm1_charge(n_private=1000, kernel=GaussianKernel(lengthscale=1.0), epsilon=1.0, delta=1e-6)
>>> (c.mechanism, c.epsilon, c.delta, c.relation.value)
('gaussian', 1.0, 1e-06, 'replace-one')
"""

from __future__ import annotations

from typing import TYPE_CHECKING

import numpy.typing as npt

from ..kernels.kernel import Kernel
from ..privacy.accounting import PrivacyCharge
from ..privacy.calibration import calibrate_gaussian
from ..privacy.sensitivity import feature_mean_sensitivity, kme_sensitivity
from ..privacy.spec import PrivacySpec, resolve
from .exponential import _exponential_charge_of
from .gp import _gp_charge_of, calibrate_gp, gp_sensitivity
from .random_features import _algorithm2_charge_of
from .subspace import _algorithm1_charge_of

if TYPE_CHECKING:
    from .result import Release

__all__ = [
    "algorithm1_charge",
    "algorithm2_charge",
    "exponential_mechanism_charge",
    "gp_release_charge",
    "release_charge",
]


def algorithm1_charge(*, n_private: int, kernel: Kernel, epsilon: float | None = None, delta: float | None = None,
                      calibration: str | None = None, sensitivity: str = "tight",
                      neighbouring: str | None = None, domain: tuple[npt.ArrayLike, npt.ArrayLike] | None = None,
                      label: str | None = None, privacy: PrivacySpec | None = None) -> PrivacyCharge:
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
    epsilon, delta : float, optional
        The privacy parameters of the release (required unless ``privacy`` gives them).
    calibration : {"analytic", "classic"}, optional
        The Gaussian calibration (:func:`~dpkme.privacy.calibration.calibrate_gaussian`; default
        ``"analytic"``).
    sensitivity : {"tight", "paper"}, default "tight"
        :math:`\sqrt{2a - 2k_{\min}}/N` or the paper's :math:`2/N` (replace-one).
    neighbouring : {"replace-one", "add-remove"}, optional
        The neighbouring relation of the guarantee (default ``"replace-one"``).
    domain : (lower, upper), optional
        A declared box, as for :func:`~dpkme.release.algorithm1`.
    label : str, optional
        The ledger's label (default: "Algorithm 1").
    privacy : PrivacySpec, optional
        The typed alternative to the loose privacy arguments (:func:`~dpkme.privacy.spec.resolve`): its
        epsilon, delta, relation and calibration are used, a loose argument that disagrees is a ValueError naming both; its noise source does
        not change the charge.

    Returns
    -------
    PrivacyCharge
        A Gaussian charge with the typed ``relation`` and ``details["mechanism"] = "algorithm1"``.
    """
    eps, dl, neighbouring, calibration = resolve(privacy, epsilon=epsilon, delta=delta, neighbouring=neighbouring,
                                                 calibration=calibration)
    sens = kme_sensitivity(n=n_private, kernel=kernel, neighbouring=neighbouring, mode=sensitivity, domain=domain)
    cal = calibrate_gaussian(epsilon=eps, delta=dl, sensitivity=sens, method=calibration)
    return _algorithm1_charge_of(cal, neighbouring, label)


def algorithm2_charge(*, n_private: int, epsilon: float | None = None, delta: float | None = None,
                      calibration: str | None = None, neighbouring: str | None = None, norm_bound: float = 1.0,
                      label: str | None = None, privacy: PrivacySpec | None = None) -> PrivacyCharge:
    r"""The charge of :func:`~dpkme.release.algorithm2` with these parameters (Balog et al. 2018, Alg. 2).

    The mean of unit-norm random features has :math:`\Delta = 2b/N` replace-one, :math:`b/N` add-remove
    (Proposition 9, :func:`~dpkme.privacy.sensitivity.feature_mean_sensitivity`); the reduced-set solver
    is post-processing.

    Parameters
    ----------
    n_private : int
        Public size :math:`N`.
    epsilon, delta : float, optional
        The privacy parameters of the release (required unless ``privacy`` gives them).
    calibration : {"analytic", "classic"}, optional
        The Gaussian calibration (:func:`~dpkme.privacy.calibration.calibrate_gaussian`; default
        ``"analytic"``).
    neighbouring : {"replace-one", "add-remove"}, optional
        The neighbouring relation of the guarantee (default ``"replace-one"``).
    norm_bound : float, default 1.0
        :math:`b = \sup_x \|\phi(x)\|_2` of the feature map (1 for dpkme's paired cos/sin features).
    label : str, optional
        The ledger's label (default: "Algorithm 2").
    privacy : PrivacySpec, optional
        The typed alternative to the loose privacy arguments (:func:`~dpkme.privacy.spec.resolve`): its
        epsilon, delta, relation and calibration are used, a loose argument that disagrees is a ValueError naming both; its noise source does
        not change the charge.

    Returns
    -------
    PrivacyCharge
        A Gaussian charge with the typed ``relation`` and ``details["mechanism"] = "algorithm2"``.

    Examples
    --------
    >>> from dpkme.release.charges import algorithm2_charge
    >>> c = algorithm2_charge(n_private=1000, epsilon=1.0, delta=1e-6)
    >>> c.details["sensitivity"], c.details["mechanism"]             # 2b/N
    (0.002, 'algorithm2')
    """
    eps, dl, neighbouring, calibration = resolve(privacy, epsilon=epsilon, delta=delta, neighbouring=neighbouring,
                                                 calibration=calibration)
    sens = feature_mean_sensitivity(n=n_private, norm_bound=norm_bound, neighbouring=neighbouring)
    cal = calibrate_gaussian(epsilon=eps, delta=dl, sensitivity=sens, method=calibration)
    return _algorithm2_charge_of(cal, neighbouring, label)


def gp_release_charge(*, n_private: int, kernel: Kernel, epsilon: float | None = None, delta: float | None = None,
                      dim: int = 1, normalisation: str = "kme", calibration: str | None = None,
                      sensitivity: str = "tight", neighbouring: str | None = None,
                      domain: tuple[npt.ArrayLike, npt.ArrayLike] | None = None, label: str | None = None,
                      privacy: PrivacySpec | None = None) -> PrivacyCharge:
    r"""The charge of :func:`~dpkme.release.gp_release` with these parameters (Hall, Rinaldo & Wasserman).

    :math:`\tilde f = f_D + s\,G` with :math:`s` calibrated to the RKHS sensitivity of :math:`f_D`
    (:func:`~dpkme.release.gp.gp_sensitivity`, :func:`~dpkme.release.gp.calibrate_gp`).

    Parameters
    ----------
    n_private : int
        Public size :math:`N` of the private table.
    kernel : Kernel
        The kernel (bounded, :math:`k(x,x) \le 1`).
    epsilon, delta : float, optional
        The privacy parameters of the release (required unless ``privacy`` gives them).
    dim : int, default 1
        Dimension of the data (the KDE normaliser depends on it).
    normalisation : {"kme", "kde"}, default "kme"
        The released function :math:`f_D`: the KME or the kernel density estimate.
    calibration : {"analytic", "hall"}, optional
        See :func:`~dpkme.release.gp.calibrate_gp` (default ``"analytic"``; a spec's ``"classic"`` is refused).
    sensitivity : {"tight", "paper"}, default "tight"
        The sensitivity mode (:func:`~dpkme.release.gp.gp_sensitivity`).
    neighbouring : {"replace-one", "add-remove"}, optional
        The neighbouring relation of the guarantee (default ``"replace-one"``).
    domain : (lower, upper), optional
        A declared box, as for :func:`~dpkme.release.gp_release`.
    label : str, optional
        The ledger's label (default: "GP release (kme)" or "(kde)").
    privacy : PrivacySpec, optional
        The typed alternative to the loose privacy arguments (:func:`~dpkme.privacy.spec.resolve`): its
        epsilon, delta, relation and calibration are used, a loose argument that disagrees is a ValueError naming both; its noise source does
        not change the charge.

    Returns
    -------
    PrivacyCharge
        A Gaussian charge (noise multiplier :math:`s/\Delta`) with the typed ``relation``,
        ``details["mechanism"] = "gp-release"`` and the normalisation.
    """
    eps, dl, neighbouring, calibration = resolve(privacy, epsilon=epsilon, delta=delta, neighbouring=neighbouring,
                                                 calibration=calibration)
    sens = gp_sensitivity(n=n_private, kernel=kernel, dim=dim, normalisation=normalisation,
                          neighbouring=neighbouring, mode=sensitivity, domain=domain)
    cal = calibrate_gp(epsilon=eps, delta=dl, sensitivity=sens, calibration=calibration)
    return _gp_charge_of(cal, neighbouring, normalisation, label=label)


def exponential_mechanism_charge(*, epsilon: float | None = None, neighbouring: str | None = None,
                                 label: str | None = None, privacy: PrivacySpec | None = None) -> PrivacyCharge:
    r"""The charge of :func:`~dpkme.release.exponential_mechanism` at ``epsilon``: pure
    :math:`\varepsilon`-DP (McSherry & Talwar; Balog et al. Sec. 3.4), whatever the candidates.

    Parameters
    ----------
    epsilon : float, optional
        :math:`\varepsilon > 0` of the release (required unless ``privacy`` gives it).
    neighbouring : {"replace-one", "add-remove"}, optional
        The neighbouring relation of the guarantee (default ``"replace-one"``).
    label : str, optional
        The ledger's label (default: "exponential mechanism").
    privacy : PrivacySpec, optional
        The typed alternative to ``epsilon`` and ``neighbouring`` (:func:`~dpkme.privacy.spec.resolve`); a
        loose argument that disagrees is a ValueError naming both. The mechanism is pure
        :math:`\varepsilon`-DP, which meets the spec's :math:`\delta` too: the charge has :math:`\delta = 0`;
        the spec's calibration and noise source do not change it.

    Returns
    -------
    PrivacyCharge
        A pure-DP charge (``mechanism="exponential"``, ``delta = 0``).
    """
    eps, _, neighbouring, _ = resolve(privacy, epsilon=epsilon, neighbouring=neighbouring, require_delta=False)
    return _exponential_charge_of(eps, neighbouring, label=label)


def release_charge(release: Release, label: str | None = None) -> PrivacyCharge | None:
    r"""The charge of a finished :class:`~dpkme.release.Release`: its :attr:`~dpkme.release.Release.charge`.

    The mechanism stored it where it drew the noise (``None`` for a release without privacy noise, e.g. the
    uniform baseline, and for a file written before releases carried their charge). Nothing is re-derived from
    the release's parameters.

    Parameters
    ----------
    release : Release
        A finished weighted-points release (e.g. read back with :meth:`~dpkme.release.Release.from_json`).
    label : str, optional
        Another ledger label; the charge keeps its id (it is the same spending).

    Returns
    -------
    PrivacyCharge or None
        The charge the release satisfies, or ``None`` when it has none.
    """
    charge = release.charge
    if charge is None or label is None:
        return charge
    return charge.with_(label=label)
