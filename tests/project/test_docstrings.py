"""Every public function and class of dpkme has a numpydoc docstring whose *Parameters* section
documents exactly its parameters (checked with numpydoc's own validator).

Public means: named in its module's ``__all__`` and defined in that module (re-exports are checked where
they are defined; deprecated alias modules only forward and are skipped). The checks are numpydoc's

* ``GL08`` -- the object has no docstring;
* ``PR01`` -- a parameter of the signature is not documented;
* ``PR02`` -- a documented parameter is not in the signature.

A class is checked against its constructor (a dataclass's fields are its parameters).
"""

from __future__ import annotations

import importlib
import inspect
import pkgutil
import warnings

import pytest
from numpydoc.validate import validate

import dpkme

CHECKS = ("GL08", "PR01", "PR02")


def _modules():
    names = ["dpkme"]
    for info in pkgutil.walk_packages(dpkme.__path__, prefix="dpkme."):
        if not info.name.endswith("__main__"):
            names.append(info.name)
    return sorted(names)


def _load(name):
    with warnings.catch_warnings():
        warnings.simplefilter("error", DeprecationWarning)
        try:
            module = importlib.import_module(name)
        except DeprecationWarning:
            return None                      # a deprecated alias of a module checked under its new name
    return module if module.__name__ == name else None


def public_objects(module):
    """``(qualified name, object)`` of the functions and classes that ``module`` defines and exports."""
    out = []
    for attr in getattr(module, "__all__", ()):
        obj = getattr(module, attr, None)
        if (inspect.isfunction(obj) or inspect.isclass(obj)) and obj.__module__ == module.__name__:
            out.append((f"{module.__name__}.{attr}", obj))
    return out


def problems(qualified_name):
    """numpydoc's findings of :data:`CHECKS` for one object.

    Parameters
    ----------
    qualified_name : str
        Importable dotted name, e.g. ``"dpkme.metrics.mmd"``.

    Returns
    -------
    list of str
        ``"CODE: message"`` for each finding; empty when the docstring is complete.
    """
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")      # e.g. "Unknown section Guarantee": our own section names
        result = validate(qualified_name)
    return [f"{code}: {message}" for code, message in result["errors"] if code in CHECKS]


MODULES = _modules()


@pytest.mark.parametrize("name", MODULES)
def test_public_api_has_complete_parameters_sections(name):
    module = _load(name)
    if module is None:
        pytest.skip(f"{name} is a deprecated alias")
    failures = {q: p for q, _ in public_objects(module) if (p := problems(q))}
    assert not failures, "incomplete numpydoc docstrings:\n" + "\n".join(
        f"  {q}: {'; '.join(p)}" for q, p in failures.items())


def test_the_check_catches_an_undocumented_parameter():
    """The validator is not vacuous: a function with an undocumented parameter is reported."""
    assert problems(f"{__name__}._undocumented") == ["PR01: Parameters {'b'} not documented"]
    assert problems(f"{__name__}.problems") == []


def _undocumented(a, b):
    """Add two numbers.

    Parameters
    ----------
    a : float
        First.

    Returns
    -------
    float
        The sum.
    """
    return a + b


def test_no_source_file_has_an_invalid_escape():
    """A docstring with ``:math:`` backslashes must be raw: ``"\\l"`` is a SyntaxWarning today, an error later."""
    import pathlib

    root = pathlib.Path(dpkme.__file__).parent
    bad = []
    for path in sorted(root.rglob("*.py")):
        with warnings.catch_warnings():
            warnings.simplefilter("error")
            try:
                compile(path.read_text(encoding="utf-8"), str(path), "exec")
            except (SyntaxError, SyntaxWarning, DeprecationWarning) as exc:
                bad.append(f"{path.relative_to(root)}: {exc}")
    assert not bad, "\n".join(bad)
