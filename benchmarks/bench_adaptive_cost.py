"""Predicted against measured time of the adaptive table release (issue 25: the app's prediction within 2x).

For three sizes of the bundled penguins table resampled with replacement (public, seeded), in one process as the
app runs it: the calibrated prediction (:func:`dpkme.cost.adaptive_cost` with :func:`dpkme.cost.calibrate_adaptive_cost`
measured just before) and the measured wall time of :func:`dpkme.release.adaptive.adaptive_release`, cold (the
structure's first run: XLA compilation included) and warm (the same structure again, ``compiled=True``). After
each run the measured time corrects the next prediction (:func:`dpkme.cost.observe_adaptive_run`), as in the app:
the first row is the micro-benchmark's prediction alone.

    python benchmarks/bench_adaptive_cost.py [--sizes 310 3000 30000] [--out benchmarks/results/adaptive_cost.md]
"""

from __future__ import annotations

import argparse
import os
import platform
import time
from pathlib import Path

import numpy as np


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--sizes", type=int, nargs="+", default=[310, 3000, 30000])
    ap.add_argument("--epsilon", type=float, default=1.0)
    ap.add_argument("--out", type=Path, default=None)
    args = ap.parse_args()

    from dpkme.cost import adaptive_cost, calibrate_adaptive_cost, observe_adaptive_run
    from dpkme.datasets import load_sample, load_schema
    from dpkme.release.adaptive import adaptive_release

    df, _ = load_sample("penguins")
    schema = load_schema("penguins")
    Z = schema.encode(df[list(schema.names)])
    rows = []
    for n in args.sizes:
        Zn = Z[np.random.default_rng(n).integers(0, Z.shape[0], n)]
        for compiled in (False, True):
            model = calibrate_adaptive_cost(max_age=1e-9)      # this machine, now (as the page does before a run)
            est = adaptive_cost(schema, n=n, epsilon=args.epsilon, delta=1e-6, compiled=compiled, model=model)
            load = os.getloadavg()[0]
            t0 = time.perf_counter()
            adaptive_release(Zn, schema=schema, epsilon=args.epsilon, delta=1e-6)
            wall = time.perf_counter() - t0
            observe_adaptive_run(est, wall)                    # as the app does after each release
            rows.append({"n": n, "run": "warm" if compiled else "cold", "predicted": est.seconds, "measured": wall,
                         "ratio": wall / est.seconds, "fit_scale": model.fit_scale,
                         "compile_scale": model.compile_scale, "load": load})
            r = rows[-1]
            print(f"N={n:>6} {r['run']}: predicted {r['predicted']:.2f} s, measured {r['measured']:.2f} s "
                  f"(x{r['ratio']:.2f}; scales {r['fit_scale']:.2f}/{r['compile_scale']:.2f}, load {load:.1f})",
                  flush=True)
    if args.out:
        lines = ["# Adaptive release: predicted vs measured time (issue 25)", "",
                 f"`python benchmarks/bench_adaptive_cost.py` on {platform.node() or 'this machine'} "
                 f"({os.cpu_count()} CPUs), {time.strftime('%Y-%m-%d %H:%M')} UTC; penguins resampled to N rows, "
                 f"ε = {args.epsilon:g}, δ = 1e-6, the library's defaults (1000 synthetic rows, default rounds and "
                 "steps). Prediction: `dpkme.cost.adaptive_cost` with `calibrate_adaptive_cost` measured just before "
                 "each run and corrected by the previous run's measured time (`observe_adaptive_run`), as the Release page "
                 "does; the first row has no earlier run. Ratio = measured / predicted (the target: within 2x).", "",
                 "| N | run | predicted (s) | measured (s) | measured / predicted | fit scale | compile scale | load |",
                 "|---:|---|---:|---:|---:|---:|---:|---:|"]
        for r in rows:
            lines.append(f"| {r['n']:,} | {r['run']} | {r['predicted']:.2f} | {r['measured']:.2f} | "
                         f"{r['ratio']:.2f} | {r['fit_scale']:.2f} | {r['compile_scale']:.2f} | {r['load']:.1f} |")
        args.out.write_text("\n".join(lines) + "\n")


if __name__ == "__main__":
    main()
