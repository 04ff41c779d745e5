"""Time ``dpkme.cost.calibrate_cost_model`` and check its predictions; write ``benchmarks/results/cost_model.md``.

The size guard can re-measure its throughputs on the user's machine (``calibrate_cost_model``). The
unit test (``tests/metrics/test_cost.py::test_calibration_gives_a_usable_cost_model``) checks that the
calibrated model is complete and prices a release; the two performance targets below are measured
here instead (a wall-clock assert in a unit test fails on a busy machine):

* ``calibrate_cost_model(--budget)`` takes < 10 s (it aims at about ``--budget`` seconds);
* the calibrated model predicts the wall-clock time of real releases within a factor of 10
  (measured factors on a quiet machine: 0.3-2, see also the ``cost`` section of ``bench_audit.py``,
  which checks the *default* model).

Usage::

    .venv/bin/python benchmarks/bench_cost_model.py [--budget 0.3] [--repeats 3]

Exits with status 1 when a target is missed.
"""

from __future__ import annotations

import argparse
import os
import platform
import statistics
import sys
import time
from pathlib import Path

import numpy as np

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO))

from dpkme.cost import calibrate_cost_model, estimate_cost  # noqa: E402
from dpkme.kernels.kernel import GaussianKernel  # noqa: E402
from dpkme.release.subspace import algorithm1  # noqa: E402

CALIBRATION_TARGET = 10.0  # seconds
FACTOR = 10.0  # prediction / measurement within [1/FACTOR, FACTOR]

#: (n, n_points) of the Algorithm 1 releases predicted by the calibrated model (D = 2): the size the
#: unit test used to time.
RELEASES = [(40_000, 600)]


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--budget", type=float, default=0.3, help="budget_seconds of calibrate_cost_model")
    ap.add_argument("--repeats", type=int, default=3)
    ap.add_argument("--out", default=str(REPO / "benchmarks" / "results" / "cost_model.md"))
    ap.add_argument("--note", default="", help="a line about the conditions of the run, written into the results")
    args = ap.parse_args(argv)

    cal_times, model = [], None
    for _ in range(args.repeats):
        t = time.perf_counter()
        model = calibrate_cost_model(args.budget)
        cal_times.append(time.perf_counter() - t)
    cal = statistics.median(cal_times)
    cal_ok = cal < CALIBRATION_TARGET
    print(f"calibrate_cost_model({args.budget:g}): {cal:.2f} s (max {max(cal_times):.2f})"
          f"  target < {CALIBRATION_TARGET:g} s  {'ok' if cal_ok else 'MISSED'}", flush=True)

    rng = np.random.default_rng(0)
    kernel = GaussianKernel(lengthscale=1.0)
    rows, missed = [], 0 if cal_ok else 1
    for n, m in RELEASES:
        X, Z = rng.normal(size=(n, 2)), rng.normal(size=(m, 2))
        est = estimate_cost("algorithm1", n=n, n_points=m, dim=2, model=model)
        took = []
        for _ in range(args.repeats):
            t = time.perf_counter()
            algorithm1(X, Z, kernel=kernel, epsilon=1.0, delta=1e-5, random_state=0)
            took.append(time.perf_counter() - t)
        med = statistics.median(took)
        ratio = med / est.seconds
        ok = 1 / FACTOR <= ratio <= FACTOR
        missed += not ok
        rows.append((n, m, est.seconds, med, ratio, ok))
        print(f"algorithm1 N = {n}, M = {m}: predicted {est.seconds:.3f} s, measured {med:.3f} s,"
              f" ratio {ratio:.2f}  {'ok' if ok else 'MISSED'}", flush=True)

    load = os.getloadavg()[0] if hasattr(os, "getloadavg") else float("nan")
    lines = [
        "# Cost-model benchmark (`benchmarks/bench_cost_model.py`)",
        "",
        f"Machine: {platform.machine()}, {os.cpu_count()} CPU(s), Python {platform.python_version()}, "
        f"load average at the end {load:.1f}. Median of {args.repeats} runs.",
        "",
        *([args.note, ""] if args.note else []),
        f"`calibrate_cost_model({args.budget:g})`: {cal:.2f} s (max {max(cal_times):.2f} s); "
        f"target < {CALIBRATION_TARGET:g} s {'✓' if cal_ok else '✗'}.",
        "",
        f"Algorithm 1 releases (D = 2) priced by the calibrated model; target: measured / predicted within "
        f"[1/{FACTOR:g}, {FACTOR:g}].",
        "",
        "| N | M | predicted (s) | measured (s) | measured / predicted | within |",
        "|---:|---:|---:|---:|---:|:---:|",
    ]
    lines += [f"| {n} | {m} | {p:.3f} | {t:.3f} | {r:.2f} | {'✓' if ok else '✗'} |" for n, m, p, t, r, ok in rows]
    Path(args.out).parent.mkdir(parents=True, exist_ok=True)
    Path(args.out).write_text("\n".join(lines) + "\n")
    print(f"wrote {args.out}")
    return 1 if missed else 0


if __name__ == "__main__":
    sys.exit(main())
