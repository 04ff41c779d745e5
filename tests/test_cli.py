"""``python -m dpkme``: the stable command-line interface other tools call."""

import json
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

from dpkme.privacy.calibration import calibrate_gaussian

ROOT = Path(__file__).resolve().parents[1]


def run(*args):
    return subprocess.run([sys.executable, "-m", "dpkme", *args], cwd=ROOT, capture_output=True, text=True,
                          timeout=300)


@pytest.mark.parametrize("method", ["analytic", "classic"])
def test_sigma_last_line_is_the_number(method):
    out = run("sigma", "--epsilon", "0.5", "--delta", "1e-6", "--sensitivity", "2e-5", "--calibration", method)
    assert out.returncode == 0, out.stderr
    value = float(out.stdout.strip().splitlines()[-1])
    assert value == calibrate_gaussian(epsilon=0.5, delta=1e-6, sensitivity=2e-5, method=method).sigma


def test_sigma_refuses_invalid_and_failing_calibrations():
    bad = run("sigma", "--epsilon", "0", "--delta", "1e-6", "--sensitivity", "1")
    assert bad.returncode == 2 and "epsilon" in bad.stderr
    fails = run("sigma", "--epsilon", "10", "--delta", "1e-5", "--sensitivity", "1", "--calibration", "classic")
    assert fails.returncode == 2 and "true delta=2.27e-05" in fails.stderr


def test_reproduce_fig1_writes_the_json_contract(tmp_path):
    from dpkme.datasets import paper_mixture

    data = tmp_path / "mix.npz"
    np.savez(data, X_private=paper_mixture(2000, 2, random_state=1))
    out = tmp_path / "f1.json"
    res = run("reproduce", "fig1", "--data", str(data), "--out", str(out), "--max-m", "200", "--quiet")
    assert res.returncode == 0, res.stderr
    r = json.loads(out.read_text())
    for key in ("M", "epsilons", "delta", "baseline", "projection", "alg1", "seconds"):
        assert key in r
    assert r["epsilons"] == [0.01, 0.1, 1.0] and r["delta"] == 1e-6 and r["M"][-1] == 200
    auto = tmp_path / "f1a.json"
    res = run("reproduce", "fig1", "--data", str(data), "--out", str(auto), "--max-m", "50", "--basis", "auto",
              "--calibration", "analytic", "--sensitivity", "tight", "--epsilons", "0.5", "--quiet")
    assert res.returncode == 0, res.stderr
    assert json.loads(auto.read_text())["basis"] == "auto"


def test_reproduce_reports_missing_data_cleanly(tmp_path):
    res = run("reproduce", "fig1", "--data", str(tmp_path / "nope.npz"), "--out", str(tmp_path / "o.json"))
    assert res.returncode == 2 and "not found" in res.stderr and "Traceback" not in res.stderr
