"""mypy, strict, on the privacy-critical code: every module of ``dpkme.privacy`` and ``dpkme.release``, and the
app's release gate ``ui/gate.py`` (issue 24).

The configuration is pyproject.toml's ``[tool.mypy]``: the targets are its ``files``, strict mode is spelled out
flag by flag in a per-module override (``strict = true`` is a global-only switch in mypy: in an override it would
turn strict mode on for every module), and the dpkme modules the targets import are analysed but not reported
(``follow_imports = "silent"``). mypy is pinned in tests/requirements.txt. The check uses mypy's default
incremental cache (``.mypy_cache``, git-ignored): about 4 s warm, under a minute from a cold cache.
"""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest
import tomllib

REPO = Path(__file__).resolve().parents[2]
STRICT_MODULES = {"dpkme.privacy.*", "dpkme.release.*", "ui.gate"}

mypy_main = pytest.importorskip("mypy.main", reason="mypy is not installed (pip install -r tests/requirements.txt)")


def _config() -> dict:
    return tomllib.loads((REPO / "pyproject.toml").read_text())["tool"]["mypy"]


def _targets() -> list[str]:
    """The configured files that exist (ui/gate.py may be absent from an older checkout)."""
    return [p for p in _config()["files"] if (REPO / p).exists()]


def test_mypy_is_clean_on_the_strict_targets():
    targets = _targets()
    assert {"dpkme/privacy", "dpkme/release"} <= set(targets)
    out = subprocess.run([sys.executable, "-m", "mypy", "--config-file", "pyproject.toml", *targets],
                         cwd=REPO, capture_output=True, text=True, timeout=600)
    assert out.returncode == 0, f"mypy found type errors (exit {out.returncode}):\n{out.stdout}{out.stderr}"
    assert "Success" in out.stdout


def test_the_targets_get_every_flag_of_strict_mode():
    """Each flag that ``mypy --strict`` sets (as this mypy defines it) is set for the three targets: a per-module
    flag in their override or in ``[tool.mypy]`` (which every module inherits), a global-only one in the latter."""
    from mypy.options import PER_MODULE_OPTIONS

    _, _, strict_flags = mypy_main.define_options()
    config = _config()
    overrides = [o for o in config.get("overrides", []) if STRICT_MODULES <= set(o["module"])]
    assert len(overrides) == 1, "one override lists dpkme.privacy.*, dpkme.release.* and ui.gate"
    override = overrides[0]
    assert "strict" not in override, "strict = true in an override applies to every module; list the flags"
    for dest, value in strict_flags:
        key = "no_implicit_reexport" if dest == "implicit_reexport" else dest
        expected = (not value) if key != dest else value
        value = override.get(key, config.get(key)) if dest in PER_MODULE_OPTIONS else config.get(key)
        assert value is expected, f"{key} = {str(expected).lower()} is missing for the strict targets"
