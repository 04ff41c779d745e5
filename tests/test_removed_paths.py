"""The deprecated module paths (dpkme/_shim.py): each still imports, is the new module itself, and warns."""

from __future__ import annotations

import importlib
import re
import sys
import warnings

import pytest

from dpkme._shim import SHIMS


def _fresh_import(name: str):
    """Import ``name`` as if for the first time (the shim runs again), restoring sys.modules afterwards."""
    parent, _, child = name.rpartition(".")
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", DeprecationWarning)
        importlib.import_module(parent)
    saved = sys.modules.pop(name, None)
    saved_attr = getattr(sys.modules[parent], child, None)
    try:
        return importlib.import_module(name)
    finally:
        if saved is not None:
            sys.modules[name] = saved
        if saved_attr is not None:
            setattr(sys.modules[parent], child, saved_attr)


@pytest.mark.parametrize("old, new", sorted(SHIMS.items()))
def test_old_path_is_the_new_module_and_warns(old, new):
    with pytest.warns(DeprecationWarning, match=re.escape(old) + " is deprecated.*import " + re.escape(new)):
        module = _fresh_import(old)
    assert module is importlib.import_module(new)
    assert sys.modules[old] is sys.modules[new]


def test_monkeypatching_through_an_old_path_reaches_the_new_module(monkeypatch):
    import dpkme.release.exponential as new

    old = _fresh_import("dpkme.exponential")
    monkeypatch.setattr(old, "_SAMPLE_BLOCK", 3)
    assert new._SAMPLE_BLOCK == 3


def test_guards_package_reexports_the_moved_names_and_warns():
    from dpkme.cost import estimate_cost
    from dpkme.privacy.bandwidth import private_lengthscale
    from dpkme.privacy.leaks import mark_not_private

    with pytest.warns(DeprecationWarning, match=r"dpkme\.guards is deprecated"):
        guards = _fresh_import("dpkme.guards")
    assert guards.estimate_cost is estimate_cost
    assert guards.private_lengthscale is private_lengthscale
    assert guards.mark_not_private is mark_not_private


def test_packages_that_replaced_modules_keep_their_names():
    from dpkme.kernels import GaussianKernel, kernel_from_dict
    from dpkme.kernels.kernel import GaussianKernel as G
    from dpkme.release import Release
    from dpkme.release.result import Release as R

    assert GaussianKernel is G and Release is R
    assert kernel_from_dict(GaussianKernel(lengthscale=2.0).to_dict()).lengthscale == 2.0


def test_data_module_forwards_to_datasets_and_preprocessing_and_warns():
    import dpkme.data
    from dpkme.datasets import GENERATORS, paper_mixture
    from dpkme.preprocessing import DeclaredScaling, clip_to_box

    with pytest.warns(DeprecationWarning, match=r"dpkme\.data is deprecated.*paper_mixture from dpkme\.datasets"):
        assert dpkme.data.paper_mixture is paper_mixture
    with pytest.warns(DeprecationWarning, match=r"dpkme\.data is deprecated.*from dpkme\.preprocessing"):
        assert dpkme.data.clip_to_box is clip_to_box
    with pytest.warns(DeprecationWarning, match=r"dpkme\.data is deprecated"):
        from dpkme.data import GENERATORS as G
        from dpkme.data import DeclaredScaling as D
    assert G is GENERATORS and D is DeclaredScaling
    with pytest.raises(AttributeError):
        dpkme.data.not_a_name  # noqa: B018


@pytest.mark.parametrize("name", ["SAMPLES", "SampleInfo", "load_sample", "SAMPLE_DIR"])
def test_io_sample_names_forward_to_datasets_and_warn(name):
    import dpkme.datasets
    import dpkme.io

    with pytest.warns(DeprecationWarning, match=re.escape(f"dpkme.io.{name} is deprecated") + ".*"
                      + re.escape(f"import dpkme.datasets.{name}")):
        value = getattr(dpkme.io, name)
    assert value is getattr(dpkme.datasets, name)
    assert name not in dpkme.io.__all__


def test_io_keeps_its_own_names_without_warning():
    import dpkme.io

    with warnings.catch_warnings():
        warnings.simplefilter("error", DeprecationWarning)
        assert callable(dpkme.io.load_table) and dpkme.io.MAX_ROWS == 1_000_000
    with pytest.raises(AttributeError, match="no attribute 'nope'"):
        dpkme.io.nope  # noqa: B018
