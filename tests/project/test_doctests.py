"""Every Examples section in dpkme runs as a doctest."""

from __future__ import annotations

import doctest
import importlib
import pkgutil
import warnings

import pytest

import dpkme


def _modules():
    names = ["dpkme"]
    for info in pkgutil.walk_packages(dpkme.__path__, prefix="dpkme."):
        if info.name.endswith("__main__"):
            continue
        names.append(info.name)
    return sorted(names)


def _load(name):
    with warnings.catch_warnings():
        warnings.simplefilter("error", DeprecationWarning)   # no module of dpkme is deprecated
        return importlib.import_module(name)


MODULES = _modules()


@pytest.mark.parametrize("name", MODULES)
def test_doctests(name):
    module = _load(name)
    result = doctest.testmod(module, optionflags=doctest.ELLIPSIS | doctest.NORMALIZE_WHITESPACE, verbose=False)
    assert result.failed == 0, f"{result.failed} of {result.attempted} doctest(s) failed in {name}"


def test_the_public_api_is_documented_with_runnable_examples():
    """The three-line releases of the README live in ``dpkme.__doc__`` (run by test_doctests[dpkme])."""
    examples = doctest.DocTestParser().get_examples(dpkme.__doc__)
    assert sum("dpkme.algorithm" in e.source for e in examples) >= 2
    assert set(dpkme.__all__) <= set(dir(dpkme))
