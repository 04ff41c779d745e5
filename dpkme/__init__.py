r"""dpkme: differentially private data release through kernel mean embeddings.

A data owner holds a private table :math:`X` (:math:`N` rows). Instead of the table, dpkme releases a
privacy-protected estimate of its kernel mean embedding :math:`\hat\mu_X = \frac1N\sum_n k(x_n, \cdot)`,
represented by weighted synthetic points :math:`\sum_m w_m k(z_m, \cdot)` (Balog, Tolstikhin & Schölkopf,
ICML 2018), so that third parties can estimate statistics, MMDs or two-sample tests without touching
:math:`X`.

The public API (everything else lives in the sub-packages named below):

Releases (:mod:`dpkme.release`)
    :func:`algorithm1` (noise in the subspace of public or q-drawn points), :func:`algorithm2` (noise on
    unit-norm random features, then a reduced set), :func:`exponential_mechanism`, :func:`gp_release`,
    :func:`uniform_baseline`, :func:`release_table` (a mixed table through a declared schema, returning a
    :class:`TableRelease`); the value object :class:`Release`; the charge each implies before it runs
    (:func:`algorithm1_charge`, :func:`algorithm2_charge`, :func:`gp_release_charge`,
    :func:`exponential_mechanism_charge`).
Kernels (:mod:`dpkme.kernels`)
    :class:`GaussianKernel`, :class:`LaplacianKernel`, :class:`MaternKernel`, :class:`InverseMultiquadricKernel`,
    :func:`make_kernel`.
Privacy (:mod:`dpkme.privacy`)
    :func:`calibrate_gaussian` and :class:`GaussianCalibration` (analytic Gaussian mechanism, verified in
    high precision), :func:`kme_sensitivity`, the ledger :class:`BudgetLedger` and its :class:`PrivacyCharge`.
Other mechanisms
    :func:`dp_kernel_kmeans` (:mod:`dpkme.clustering`), the private two-sample tests :func:`tcmc_test`,
    :func:`nte_test`, :func:`release_test` (:mod:`dpkme.two_sample`), empirical audits (:mod:`dpkme.audit`).
Generative models
    :func:`dpgm` (Acs et al.: private kernel k-means, then one DP-SGD-trained VAE or RBM per cluster) and
    its :class:`DPGMResult` (:mod:`dpkme.generative`; JAX and optax are imported only when it runs).

Real releases use fresh OS-entropy noise (``random_state=None``, the default) and record no seed; an int
``random_state`` makes a replayable teaching demo that is labelled not private.

Examples
--------
A private Algorithm 2 release in three lines (after the data):

>>> import numpy as np, dpkme
>>> X = np.random.default_rng(0).normal(size=(500, 2))        # the private table
>>> kernel = dpkme.GaussianKernel(lengthscale=1.0)
>>> rel = dpkme.algorithm2(X, kernel=kernel, epsilon=1.0, delta=1e-6, n_points=20, n_features=500)
>>> rel.n_points, rel.metadata()["differentially_private"], rel.seed is None
(20, True, True)

And Algorithm 1 with points drawn from a declared q = N(0, 2² I):

>>> rel = dpkme.algorithm1(X, None, kernel=kernel, epsilon=1.0, delta=1e-6, n_points=30, q_scale=2.0)
>>> rel.charge.epsilon, rel.charge.delta
(1.0, 1e-06)
"""

from __future__ import annotations

import importlib

from ._version import __version__

#: public name -> the module that defines it (imported on first use, so ``import dpkme`` stays light)
_API = {
    # releases
    "Release": "dpkme.release.result",
    "algorithm1": "dpkme.release.subspace",
    "uniform_baseline": "dpkme.release.subspace",
    "algorithm2": "dpkme.release.random_features",
    "exponential_mechanism": "dpkme.release.exponential",
    "gp_release": "dpkme.release.gp",
    "algorithm1_charge": "dpkme.release.charges",
    "algorithm2_charge": "dpkme.release.charges",
    "gp_release_charge": "dpkme.release.charges",
    "exponential_mechanism_charge": "dpkme.release.charges",
    "release_table": "dpkme.release.tabular",
    "TableRelease": "dpkme.release.tabular",
    # kernels
    "Kernel": "dpkme.kernels.kernel",
    "GaussianKernel": "dpkme.kernels.kernel",
    "LaplacianKernel": "dpkme.kernels.kernel",
    "MaternKernel": "dpkme.kernels.kernel",
    "InverseMultiquadricKernel": "dpkme.kernels.kernel",
    "make_kernel": "dpkme.kernels.kernel",
    # privacy
    "calibrate_gaussian": "dpkme.privacy.calibration",
    "GaussianCalibration": "dpkme.privacy.calibration",
    "kme_sensitivity": "dpkme.privacy.sensitivity",
    "BudgetLedger": "dpkme.privacy.accounting",
    "PrivacyCharge": "dpkme.privacy.accounting",
    # other mechanisms
    "dp_kernel_kmeans": "dpkme.clustering",
    "tcmc_test": "dpkme.two_sample",
    "nte_test": "dpkme.two_sample",
    "release_test": "dpkme.two_sample",
    # generative models (DPGM: private k-means + DP-SGD-trained VAEs/RBMs)
    "dpgm": "dpkme.generative",
    "DPGMResult": "dpkme.generative",
}

__all__ = ["__version__", *_API]


def __getattr__(name: str):
    module = _API.get(name)
    if module is None:
        raise AttributeError(f"module 'dpkme' has no attribute {name!r}")
    value = getattr(importlib.import_module(module), name)
    globals()[name] = value          # next time without __getattr__
    return value


def __dir__():
    return sorted(set(globals()) | set(__all__))
