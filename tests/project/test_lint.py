"""The code habits CI enforces: ruff (pyflakes, pycodestyle, import order, bugbear, pyupgrade, simplify and ruff's own
rules) over the project's Python, pinned in tests/requirements.txt and configured in pyproject.toml. mypy (strict on
dpkme.privacy, dpkme.release and the app's gate) runs in tests/project/test_typing.py."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

REPO = Path(__file__).resolve().parents[2]


def _run(*args: str) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", *args], cwd=REPO, capture_output=True, text=True, timeout=600)


def test_ruff_is_clean():
    out = _run("ruff", "check", "app.py", "pages", "ui", "dpkme", "tests", "benchmarks", "docs/conf.py")
    assert out.returncode == 0, out.stdout + out.stderr


def test_ruff_runs_the_extended_rule_set():
    """bugbear (closures over loop variables, B023), pyupgrade, simplify and RUF are on, not only E/F/W/I."""
    import tomllib

    lint = tomllib.loads((REPO / "pyproject.toml").read_text())["tool"]["ruff"]["lint"]
    assert {"E", "F", "W", "I", "B", "UP", "SIM", "RUF"} <= set(lint["select"])
    assert "B023" not in lint.get("ignore", []) and "B" not in lint.get("ignore", [])
