"""Diagnosis runs of the adaptive KME release on bench_tabular's tables (issue 25): per-column TV1, TV2, TSTR.

One release per (config, table, epsilon) on repetition 0's 80/20 split of ``bench_tabular.py`` (seed 2024),
the fitted rows resampled to the training size, scored on the 16-bin grid: mean TV1 of numeric columns,
TV2, train-on-synthetic accuracy against the majority floor, CPU seconds of the release, the landmarks
used and TV1 per column. ``--hist COL`` also prints COL's 16-bin histogram of train and synthetic rows.

A config sets public constants of ``dpkme.release.fit`` / ``dpkme.release.adaptive`` for the run (both
modules where both hold the name, e.g. ``LANDMARKS``); configs are ``;``-separated JSON objects, ``{}`` is
the defaults. Needs statsmodels / vega_datasets (``benchmarks/setup_peers_mbi2.sh``).

Usage::

    benchmarks/.peer-venv/mbi2/bin/python benchmarks/bench_adaptive_diag.py \\
        --configs '{};{"LANDMARKS":[64,16,6]}' --jobs randhie:1,cars:1,randhie:1000 [--hist lpi]
"""

from __future__ import annotations

import argparse
import json
import sys
import time
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "benchmarks"))

import bench_tabular as bt  # noqa: E402

from dpkme.release import adaptive as ad  # noqa: E402
from dpkme.release import fit as F  # noqa: E402


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--configs", default="{}")
    ap.add_argument("--jobs", default="randhie:1")
    ap.add_argument("--hist", action="append", default=[])
    args = ap.parse_args(argv)
    names = ("LANDMARKS", "DECODE_SPREAD", "SYNTHETIC_ROWS", "ROUNDS_PER_COLUMN", "KERNEL_WIDTH")
    base = {k: getattr(F, k, getattr(ad, k, None)) for k in names}
    cfgs = [json.loads(c) for c in args.configs.split(";") if c.strip()]
    for job in args.jobs.split(","):
        name, eps = job.split(":")[0], float(job.split(":")[1])
        table = bt.TABLES[name]
        df = table.load()
        ti = list(bt.TABLES).index(name)
        grids = [bt.make_grid(s, bt.GRID_BINS) for s in table.columns]
        split = np.random.default_rng([2024, ti, 0]).permutation(len(df))
        n_test = len(df) // 5
        test = df.iloc[split[:n_test]].reset_index(drop=True)
        train = df.iloc[split[n_test:]].reset_index(drop=True)
        floor = test[table.target].value_counts(normalize=True).max()
        for cfg in cfgs:
            for k, v in {**base, **cfg}.items():
                for mod in (F, ad):
                    if hasattr(mod, k):
                        setattr(mod, k, tuple(v) if isinstance(v, list) else v)
            c0 = time.process_time()
            rel = ad.adaptive_release(train, schema=table.schema(levels=True), epsilon=eps, delta=bt.DELTA,
                                      random_state=np.random.default_rng([0, 1]))
            cpu = time.process_time() - c0
            rows = rel.sample(len(train), rng=np.random.default_rng([0, 2]))
            res = bt.marginal_tv(test, rows, grids)
            tstr = bt.tstr_accuracy(rows, test, table.columns, table.target)
            print(f"{json.dumps(cfg)} {name} eps={eps:g}: tv1num {res['tv1_num']:.3f} tv2 {res['tv2']:.3f} "
                  f"tstr {tstr:.3f} floor {floor:.3f} cpu {cpu:.1f} landmarks {rel._fit.domain.landmarks} "
                  f"rounds {len(rel.rounds)} {res['tv1_by_column']}", flush=True)
            for col in args.hist:
                g = grids[[s.name for s in table.columns].index(col)]
                for label, d in (("train", train), ("synthetic", rows)):
                    h = np.bincount(bt.to_codes(d, g), minlength=g.size) / len(d)
                    print(f"  {col} {label}: {np.round(h, 3).tolist()}", flush=True)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
