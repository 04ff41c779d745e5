"""The code habits CI enforces: ruff (pyflakes, pycodestyle, import order) over the project's Python, and mypy
on the privacy-critical modules listed in pyproject.toml's [tool.mypy] section. Both are pinned in
tests/requirements.txt and configured in pyproject.toml."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[1]


def _run(*args: str) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", *args], cwd=REPO, capture_output=True, text=True, timeout=600)


@pytest.mark.slow
def test_mypy_is_clean_on_the_privacy_critical_modules():
    out = _run("mypy")
    assert out.returncode == 0, out.stdout + out.stderr
    assert "Success" in out.stdout


def test_ruff_is_clean():
    out = _run("ruff", "check", "app.py", "pages", "ui", "dpkme", "tests", "benchmarks")
    assert out.returncode == 0, out.stdout + out.stderr
