r"""Private releases of a kernel mean embedding and the value object they return.

:mod:`~dpkme.release.result`
    :class:`Release`: points, weights and everything needed to interpret them.
:mod:`~dpkme.release.core`
    What every release by Algorithm 1 or 2 shares, in memory and on a Dask cluster (:mod:`dpkme.distributed`):
    the private rows behind one blocked-sums interface (:class:`~dpkme.release.core.RowSums`), the row-count
    policy and the one noise draw. Each algorithm's whole orchestration runs on it
    (:func:`~dpkme.release.random_features.run_algorithm2`, :func:`~dpkme.release.subspace.run_algorithm1`,
    :func:`~dpkme.release.tabular.table_release`), whichever path supplies the sums.
:mod:`~dpkme.release.subspace`
    Algorithm 1 of Balog et al. (2018): noise in the subspace spanned by public
    synthetic points (:func:`algorithm1`, :func:`uniform_baseline`).
:mod:`~dpkme.release.random_features`
    Algorithm 2: a noisy mean of unit-norm random features, then a reduced set (:func:`algorithm2`).
:mod:`~dpkme.release.exponential`
    The exponential mechanism over multisets of candidates (:func:`exponential_mechanism`).
:mod:`~dpkme.release.gp`
    The Gaussian-process release of Hall et al. (2013) (:func:`gp_release`).
:mod:`~dpkme.release.tabular`
    Releases of mixed tables through a declared schema (:func:`release_table`, :class:`TableRelease`).
:mod:`~dpkme.release.adaptive`
    The adaptive KME release of a mixed table: AIM-style selection, Gaussian measurements of localised kernel
    embeddings (cell counts, landmark features), synthetic rows fitted in JAX (:func:`adaptive_release`, :func:`adaptive_release_charge`,
    :class:`AdaptiveTableRelease`; the fit in :mod:`~dpkme.release.fit`).

Each release function has a companion ``*_charge`` function (:func:`algorithm1_charge`,
:func:`algorithm2_charge`, :func:`exponential_mechanism_charge`, :func:`gp_release_charge`)
that returns the :class:`~dpkme.privacy.accounting.PrivacyCharge` its parameters imply
without running it; a finished release reports the same charge as :attr:`Release.charge`.
"""

from .adaptive import AdaptiveTableRelease, adaptive_release, adaptive_release_charge
from .charges import (
                      algorithm1_charge,
                      algorithm2_charge,
                      exponential_mechanism_charge,
                      gp_release_charge,
                      release_charge,
)
from .exponential import exponential_charge, exponential_mechanism
from .gp import gp_release
from .random_features import algorithm2, privatise_feature_mean
from .result import Release
from .subspace import SubspaceBasis, algorithm1, project_weights, uniform_baseline
from .tabular import TableRelease, release_table

__all__ = [
    "Release",
    "algorithm1", "uniform_baseline", "SubspaceBasis", "project_weights",
    "algorithm2", "privatise_feature_mean",
    "exponential_mechanism", "exponential_charge",
    "gp_release",
    "release_table", "TableRelease",
    "adaptive_release", "adaptive_release_charge", "AdaptiveTableRelease",
    "algorithm1_charge", "algorithm2_charge", "exponential_mechanism_charge", "gp_release_charge",
    "release_charge",
]
