"""The code habits CI enforces: ruff (pyflakes, pycodestyle, import order) over the project's Python, pinned in
tests/requirements.txt and configured in pyproject.toml. mypy (strict on dpkme.privacy, dpkme.release and the
app's gate) runs in tests/project/test_typing.py."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

REPO = Path(__file__).resolve().parents[2]


def _run(*args: str) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", *args], cwd=REPO, capture_output=True, text=True, timeout=600)


def test_ruff_is_clean():
    out = _run("ruff", "check", "app.py", "pages", "ui", "dpkme", "tests", "benchmarks")
    assert out.returncode == 0, out.stdout + out.stderr
