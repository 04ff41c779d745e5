"""Deprecated import paths, kept for one release.

dpkme 0.2 regrouped its modules into concept-named folders (``kernels/``,
``privacy/``, ``release/``, ``datasets/``). Every old module path is a *shim*
of three lines::

    from dpkme._shim import alias
    alias(__name__, "dpkme.release.subspace")

:func:`alias` warns with a :class:`DeprecationWarning` that names the new path
and then puts the **new module object itself** in ``sys.modules`` under the old
name, so ``import dpkme.subspace`` and ``import dpkme.release.subspace`` give
the same object: private names, ``isinstance`` checks and ``monkeypatch`` keep
working through either path. The shims will be removed in the next release.

One old path is not a plain alias: the package :mod:`dpkme.guards`, whose three modules went to
:mod:`dpkme.privacy.leaks`, :mod:`dpkme.privacy.bandwidth` and :mod:`dpkme.cost`; it re-exports their
names and warns the same way (its modules ``dpkme.guards.leaks``, ... are plain aliases).
"""

from __future__ import annotations

import importlib
import sys
import warnings

__all__ = ["alias", "SHIMS"]

#: Old module path -> new module path, for every shim (tests check each one).
SHIMS: dict[str, str] = {
    "dpkme.features": "dpkme.kernels.random_features",
    "dpkme.spectral": "dpkme.kernels.spectral",
    "dpkme.mechanisms": "dpkme.privacy.calibration",
    "dpkme.sensitivity": "dpkme.privacy.sensitivity",
    "dpkme.accounting": "dpkme.privacy.accounting",
    "dpkme.guards.leaks": "dpkme.privacy.leaks",
    "dpkme.guards.bandwidth": "dpkme.privacy.bandwidth",
    "dpkme.guards.cost": "dpkme.cost",
    "dpkme.subspace": "dpkme.release.subspace",
    "dpkme.random_features": "dpkme.release.random_features",
    "dpkme.exponential": "dpkme.release.exponential",
    "dpkme.gp_release": "dpkme.release.gp",
    "dpkme.reproduce_alg2": "dpkme.reproduce",
}


def alias(old: str, new: str):
    """Make the module path ``old`` an alias of the module ``new``, with a deprecation warning.

    Parameters
    ----------
    old : str
        The deprecated dotted module path (the shim's ``__name__``).
    new : str
        The dotted path of the module that replaces it.

    Returns
    -------
    module
        The module ``new``, now also ``sys.modules[old]``.
    """
    warnings.warn(f"{old} is deprecated and will be removed in the next release; import {new} instead",
                  DeprecationWarning, stacklevel=3)
    module = importlib.import_module(new)
    sys.modules[old] = module
    return module
