"""Time the privacy accountants on the ledgers the tests use; write ``benchmarks/results/accounting.md``.

The unit tests in ``tests/privacy/test_accounting.py`` check what these calls *return* (the discretised PLD
is pessimistic and within 0.01 of the exact ε); how long they take is a performance target, and a
wall-clock assert in a unit test fails on a busy machine. It is measured here instead, against
these targets (the ledger page recomputes them on every run, so they must stay interactive):

* PLD of 50 heterogeneous Gaussian charges, discretised (``exact_gaussian=False``): < 1 s;
* the same 50 charges plus a pure-DP charge (PLD, mixed ledger): < 1 s;
* PLD of 1 000 compositions of a Gaussian with noise multiplier 1 plus a Laplace charge (privacy
  loss spread over ~600 nats, the grid is coarsened automatically): < 2 s;
* RDP of the same ledgers (for comparison): no target.

Each call is timed cold (a fresh ledger), median of ``--repeats`` runs.

Usage::

    .venv/bin/python benchmarks/bench_accounting.py [--repeats 5] [--out benchmarks/results/accounting.md]

Exits with status 1 when a median misses its target.
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

from dpkme.privacy.accounting import PrivacyCharge, laplace_charge, pld_epsilon, pure_dp_charge, rdp_epsilon  # noqa: E402

DELTA = 1e-5


def heterogeneous_gaussians() -> list[PrivacyCharge]:
    """The 50 charges of tests/privacy/test_accounting.py::test_pld_close_to_exact_for_heterogeneous_gaussians."""
    z = np.random.default_rng(7).uniform(4.0, 8.0, size=50)
    return [PrivacyCharge(f"g{i}", "gaussian", 1.0, 1e-3, noise_multiplier=float(zi)) for i, zi in enumerate(z)]


def many_small_noise_gaussians() -> list[PrivacyCharge]:
    """The ledger of tests/privacy/test_accounting.py::test_pld_many_small_noise_gaussians_on_a_coarsened_grid."""
    return [PrivacyCharge("g", "gaussian", 1e3, 0.5, noise_multiplier=1.0, count=1000),
            laplace_charge("l", epsilon=0.01)]


#: (what, call, target in seconds or None)
CASES = [
    ("PLD, 50 heterogeneous Gaussians, discretised (exact_gaussian=False)",
     lambda: pld_epsilon(heterogeneous_gaussians(), delta=DELTA, exact_gaussian=False), 1.0),
    ("PLD, 50 heterogeneous Gaussians + one pure-DP charge (ε = 0.01)",
     lambda: pld_epsilon([*heterogeneous_gaussians(), pure_dp_charge("e", epsilon=0.01)], delta=DELTA), 1.0),
    ("PLD, 1 000 × Gaussian (z = 1) + Laplace (ε = 0.01): coarsened grid",
     lambda: pld_epsilon(many_small_noise_gaussians(), delta=DELTA), 2.0),
    ("RDP, 50 heterogeneous Gaussians + one pure-DP charge",
     lambda: rdp_epsilon([*heterogeneous_gaussians(), pure_dp_charge("e", epsilon=0.01)], delta=DELTA), None),
    ("RDP, 1 000 × Gaussian (z = 1) + Laplace (ε = 0.01)",
     lambda: rdp_epsilon(many_small_noise_gaussians(), delta=DELTA), None),
]


def timed(fn, repeats: int) -> tuple[float, float, float]:
    times, value = [], float("nan")
    for _ in range(repeats):
        t = time.perf_counter()
        value = fn()
        times.append(time.perf_counter() - t)
    return statistics.median(times), max(times), value


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--repeats", type=int, default=5)
    ap.add_argument("--out", default=str(REPO / "benchmarks" / "results" / "accounting.md"))
    ap.add_argument("--note", default="", help="a line about the conditions of the run, written into the results")
    args = ap.parse_args(argv)

    CASES[0][1]()  # warm-up (imports of dp_accounting, scipy)
    rows, missed = [], 0
    for what, fn, target in CASES:
        med, worst, value = timed(fn, args.repeats)
        ok = target is None or med < target
        missed += not ok
        rows.append((what, value, med, worst, target, ok))
        print(f"{med:7.3f} s (max {worst:.3f})  target {'-' if target is None else f'< {target:g} s'}"
              f"  {'ok' if ok else 'MISSED'}  ε = {value:.4f}  {what}", flush=True)

    load = os.getloadavg()[0] if hasattr(os, "getloadavg") else float("nan")
    lines = [
        "# Accounting benchmark (`benchmarks/bench_accounting.py`)",
        "",
        f"Machine: {platform.machine()}, {os.cpu_count()} CPU(s), Python {platform.python_version()}, "
        f"load average at the end {load:.1f}. Median of {args.repeats} cold calls (max in brackets), δ = {DELTA:g}.",
        "",
        *([args.note, ""] if args.note else []),
        "| ledger | ε | median (s) | max (s) | target |",
        "|---|---:|---:|---:|:---:|",
    ]
    for what, value, med, worst, target, ok in rows:
        verdict = "–" if target is None else f"< {target:g} s {'✓' if ok else '✗'}"
        lines.append(f"| {what} | {value:.4f} | {med:.3f} | {worst:.3f} | {verdict} |")
    Path(args.out).parent.mkdir(parents=True, exist_ok=True)
    Path(args.out).write_text("\n".join(lines) + "\n")
    print(f"wrote {args.out}")
    return 1 if missed else 0


if __name__ == "__main__":
    sys.exit(main())
