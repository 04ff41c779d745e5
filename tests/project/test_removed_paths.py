"""The module paths deprecated in dpkme 0.2 and removed in 0.5.0 are gone; their new homes keep every name.

dpkme 0.2 regrouped its modules into concept-named folders and kept the old paths as aliases that warned
(``dpkme/_shim.py``, ``dpkme/guards/``, ``dpkme/data.py``, ``dpkme.io``'s sample names). 0.5.0 removed them:
each old path is now an ImportError (or, for a name of ``dpkme.io``, an AttributeError).
"""

from __future__ import annotations

import importlib
import types
import warnings

import pytest

#: Old module path -> the module that replaced it (the table dpkme/_shim.py held until 0.5.0).
REMOVED: dict[str, str] = {
    "dpkme.features": "dpkme.kernels.random_features",
    "dpkme.spectral": "dpkme.kernels.spectral",
    "dpkme.mechanisms": "dpkme.privacy.calibration",
    "dpkme.sensitivity": "dpkme.privacy.sensitivity",
    "dpkme.accounting": "dpkme.privacy.accounting",
    "dpkme.guards": "dpkme.privacy.leaks",
    "dpkme.guards.leaks": "dpkme.privacy.leaks",
    "dpkme.guards.bandwidth": "dpkme.privacy.bandwidth",
    "dpkme.guards.cost": "dpkme.cost",
    "dpkme.subspace": "dpkme.release.subspace",
    "dpkme.random_features": "dpkme.release.random_features",
    "dpkme.exponential": "dpkme.release.exponential",
    "dpkme.gp_release": "dpkme.release.gp",
    "dpkme.reproduce_alg2": "dpkme.reproduce",
    "dpkme.data": "dpkme.datasets.generators",
    "dpkme._shim": "dpkme",
}


@pytest.mark.parametrize("old, new", sorted(REMOVED.items()))
def test_old_path_is_gone_and_its_new_home_imports(old, new):
    with pytest.raises(ImportError):
        importlib.import_module(old)
    importlib.import_module(new)


def test_the_old_top_level_names_are_not_attributes_of_the_package():
    import dpkme

    for name in sorted({old.split(".")[1] for old in REMOVED}):
        if name in dpkme.__all__:  # gp_release: the function, not the old module
            assert not isinstance(getattr(dpkme, name), types.ModuleType)
            continue
        with pytest.raises(AttributeError):
            getattr(dpkme, name)


def test_moved_names_resolve_at_their_new_homes():
    """What dpkme.guards and dpkme.data re-exported is importable from where it lives."""
    from dpkme.cost import estimate_cost  # noqa: F401
    from dpkme.datasets import GENERATORS, paper_mixture  # noqa: F401
    from dpkme.preprocessing import DeclaredScaling, clip_to_box  # noqa: F401
    from dpkme.privacy.bandwidth import private_lengthscale  # noqa: F401
    from dpkme.privacy.leaks import mark_not_private  # noqa: F401


def test_packages_that_replaced_modules_keep_their_names():
    from dpkme.kernels import GaussianKernel, kernel_from_dict
    from dpkme.kernels.kernel import GaussianKernel as G
    from dpkme.release import Release
    from dpkme.release.result import Release as R

    assert GaussianKernel is G and Release is R
    assert kernel_from_dict(GaussianKernel(lengthscale=2.0).to_dict()).lengthscale == 2.0


@pytest.mark.parametrize("name", ["SAMPLES", "SampleInfo", "load_sample", "SAMPLE_DIR"])
def test_io_sample_names_are_gone_and_live_in_datasets(name):
    import dpkme.datasets
    import dpkme.io

    with pytest.raises(AttributeError, match=f"no attribute '{name}'"):
        getattr(dpkme.io, name)
    assert name not in dpkme.io.__all__
    assert hasattr(dpkme.datasets, name)


def test_io_keeps_its_own_names_without_warning():
    import dpkme.io

    with warnings.catch_warnings():
        warnings.simplefilter("error", DeprecationWarning)
        assert callable(dpkme.io.load_table) and dpkme.io.MAX_ROWS == 1_000_000
    with pytest.raises(AttributeError, match="no attribute 'nope'"):
        dpkme.io.nope  # noqa: B018
