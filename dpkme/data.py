"""Deprecated: use :mod:`dpkme.datasets` and :mod:`dpkme.preprocessing` (this module goes in the next release).

dpkme 0.2 split this module in two: the synthetic data generators and their registry
(:func:`paper_mixture`, :data:`GENERATORS`, ...) went to :mod:`dpkme.datasets.generators`
(re-exported by :mod:`dpkme.datasets`), the public preprocessing (:class:`DeclaredScaling`,
:func:`clip_to_box`, :func:`public_private_split`, ...) to :mod:`dpkme.preprocessing`. Every
old name still resolves here, to the very same object, with a :class:`DeprecationWarning`
that names its new module (see :mod:`dpkme._shim`).
"""

from __future__ import annotations

import importlib
import warnings

_NEW_MODULES = ("dpkme.datasets.generators", "dpkme.preprocessing")

_OLD_NAMES = (
    # dpkme.datasets
    "paper_mixture", "two_moons", "concentric_circles", "gaussian_blobs", "spiral", "uniform_box",
    "anisotropic_gaussian", "student_t_cloud", "GENERATORS", "GeneratorSpec", "ParamSpec", "generate",
    "MAX_GENERATED_VALUES",
    # dpkme.preprocessing
    "DeclaredScaling", "apply_declared_scaling", "clip_to_box", "public_private_split", "SplitIndices",
)
__all__ = list(_OLD_NAMES)  # resolved by __getattr__ below


def __getattr__(name: str):
    if not name.startswith("__"):
        for new in _NEW_MODULES:
            module = importlib.import_module(new)
            if hasattr(module, name):
                public = "dpkme.datasets" if new == "dpkme.datasets.generators" and name in _OLD_NAMES else new
                warnings.warn(f"dpkme.data is deprecated and will be removed in the next release; "
                              f"import {name} from {public} instead", DeprecationWarning, stacklevel=2)
                return getattr(module, name)
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")


def __dir__():
    return sorted(set(globals()) | set(__all__))
