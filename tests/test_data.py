"""Tests of dpkme.data, the deprecated module split into dpkme.datasets and dpkme.preprocessing.

The generators' tests are in test_datasets.py, the preprocessing's in test_preprocessing.py;
here: every old name still resolves, to the same object, with a DeprecationWarning naming its
new home (tests/test_shims.py checks the other deprecated paths).
"""

from __future__ import annotations

import importlib
import re

import pytest

import dpkme.data
import dpkme.datasets
import dpkme.preprocessing

_OLD_PUBLIC_NAMES = [
    "paper_mixture", "two_moons", "concentric_circles", "gaussian_blobs", "spiral", "uniform_box",
    "anisotropic_gaussian", "student_t_cloud", "GENERATORS", "GeneratorSpec", "ParamSpec", "generate",
    "MAX_GENERATED_VALUES",
    "DeclaredScaling", "apply_declared_scaling", "clip_to_box", "public_private_split", "SplitIndices",
]


def test_old_all_is_unchanged():
    assert sorted(dpkme.data.__all__) == sorted(_OLD_PUBLIC_NAMES)


@pytest.mark.parametrize("name", _OLD_PUBLIC_NAMES)
def test_every_old_name_forwards_with_a_warning(name):
    new = dpkme.datasets if hasattr(dpkme.datasets, name) else dpkme.preprocessing
    match = r"dpkme\.data is deprecated.*import " + re.escape(f"{name} from {new.__name__}")
    with pytest.warns(DeprecationWarning, match=match):
        value = getattr(dpkme.data, name)
    assert value is getattr(new, name)


def test_private_helpers_still_resolve():
    with pytest.warns(DeprecationWarning, match=r"dpkme\.datasets\.generators"):
        params = dpkme.data.PAPER_MIXTURE_PARAMS
    assert params is importlib.import_module("dpkme.datasets.generators").PAPER_MIXTURE_PARAMS
    with pytest.warns(DeprecationWarning, match=r"dpkme\.datasets\.generators"):
        assert dpkme.data.MAX_DIM == 1_000


def test_unknown_name_is_an_attribute_error():
    with pytest.raises(AttributeError, match="no attribute 'nope'"):
        dpkme.data.nope  # noqa: B018
