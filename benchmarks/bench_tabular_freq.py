r"""Random-feature frequency samplers of the additive table kernel on the benchmark tables (issue 15).

Usage (peer environment not needed: the peers are read from a results JSON)::

    .venv/bin/python benchmarks/bench_tabular_freq.py [--tables fair:1,randhie:1,randhie:3]
        [--variants iid,stratified,stratified@4000] [--reps 1] [--first-rep 0] [--out benchmarks/results/tabular_freq]

Each ``table:eps`` job uses exactly the split and the release seed of ``benchmarks/bench_tabular.py``'s
default run (``--seed 2024``, tables in the order cars, anes96, fair, randhie, epsilons 0.3, 1, 3), so the
``iid`` variant is the library's release before ``AdditiveKernel(frequencies=...)`` existed and the rows
of ``--peers`` (default ``benchmarks/results/tabular_pool.json``) are comparable. A variant is a sampler
(``iid`` or ``stratified``: :class:`dpkme.kernels.additive.AdditiveKernel`'s ``frequencies``) with an
optional ``@J`` (``n_features``; default the library's). Metrics and their definitions are
``bench_tabular.evaluate``'s. Results go to ``<out>.json`` and ``<out>.md``.
"""

from __future__ import annotations

import argparse
import datetime
import json
import shlex
import sys
import time
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent))
import bench_tabular as bt

ORDER = ("cars", "anes96", "fair", "randhie")
EPS_ORDER = (0.3, 1.0, 3.0)
KEYS = ("mmd", "tv1_num", "tv1_cat", "tv2", "mean_err", "sd_err", "corr_err", "tstr", "fit_s")


def release(train, table, eps, ei, ti, rep, seed, sampler, n_features):
    from dpkme.kernels.additive import AdditiveKernel, table_kernel
    from dpkme.release.tabular import release_table

    schema = table.schema(levels=True)     # as bench_tabular's default dpkme variant
    base = table_kernel(schema)
    kernel = AdditiveKernel(**{**base.get_params(), "frequencies": sampler})
    kw = {} if n_features is None else {"n_features": n_features}
    t0 = time.perf_counter()
    rel = release_table(train, schema=schema, epsilon=eps, delta=bt.DELTA, kernel=kernel,
                        random_state=np.random.default_rng([seed, ti, rep, ei, 7]), **kw)
    fit_s = time.perf_counter() - t0
    rows = rel.sample(len(train), np.random.default_rng([seed, ti, rep, ei, 7, 1]))
    return rows, fit_s, rel


def peer_rows(path, table, eps, rep):
    saved = json.loads(Path(path).read_text())
    return [r for r in saved["runs"] if r["table"] == table and r["epsilon"] == eps and r["rep"] == rep
            and r["method"] in ("dpkme", "mst", "aim") and not r.get("error")]


def write_md(path, runs, meta):
    lines = ["# Frequency samplers of the additive table kernel (issue 15)", "",
             f"Written by `benchmarks/bench_tabular_freq.py` on {meta['date']}. Command: `{meta['command']}`", "",
             "Same splits and release seeds as `bench_tabular.py`'s default run; `pool:*` rows are copied from "
             f"`{meta['peers']}` (the library default at the time: i.i.d. frequencies, J = 2000). Lower is "
             "better except TSTR. Times are wall-clock on a shared 2-core machine (indicative).", ""]
    head = "| table | ε | rep | variant | " + " | ".join(k for k in KEYS) + " |"
    lines += [head, "|" + "---|" * (4 + len(KEYS))]
    for r in runs:
        cells = [f"{r.get(k, float('nan')):.4g}" for k in KEYS]
        lines.append(f"| {r['table']} | {r['epsilon']:g} | {r['rep']} | {r['variant']} | " + " | ".join(cells) + " |")
    Path(path).write_text("\n".join(lines) + "\n")


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--tables", default="fair:1,randhie:1,randhie:3")
    ap.add_argument("--variants", default="stratified")
    ap.add_argument("--reps", type=int, default=1)
    ap.add_argument("--first-rep", type=int, default=0, help="first repetition (split) to run")
    ap.add_argument("--seed", type=int, default=2024)
    ap.add_argument("--peers", default=str(bt.ROOT / "benchmarks" / "results" / "tabular_pool.json"))
    ap.add_argument("--out", default=str(bt.ROOT / "benchmarks" / "results" / "tabular_freq"))
    args = ap.parse_args(argv)
    out = Path(args.out)
    meta = {"date": datetime.date.today().isoformat(), "command": shlex.join(["python", *sys.argv]),
            "peers": args.peers, "seed": args.seed}
    runs: list[dict] = []
    jobs = [(t.split(":")[0], float(t.split(":")[1])) for t in args.tables.split(",") if t]
    for name, eps in jobs:
        table, ti, ei = bt.TABLES[name], ORDER.index(name), EPS_ORDER.index(eps)
        df = table.load()
        metric_schema = table.schema()
        grids = [bt.make_grid(s, bt.GRID_BINS) for s in table.columns]
        n_test = len(df) // 5
        for rep in range(args.first_rep, args.first_rep + args.reps):
            split = np.random.default_rng([args.seed, ti, rep]).permutation(len(df))
            test = df.iloc[split[:n_test]].reset_index(drop=True)
            train = df.iloc[split[n_test:]].reset_index(drop=True)
            test_z = metric_schema.encode(test)
            for p in peer_rows(args.peers, name, eps, rep):
                runs.append({"table": name, "epsilon": eps, "rep": rep, "variant": "pool:" + p["method"],
                             **{k: p.get(k, float("nan")) for k in KEYS}})
            for var in args.variants.split(","):
                sampler, _, j = var.partition("@")
                rows, fit_s, rel = release(train, table, eps, ei, ti, rep, args.seed, sampler,
                                           int(j) if j else None)
                res = bt.evaluate(rows, test, test_z, table, metric_schema, grids)
                run = {"table": name, "epsilon": eps, "rep": rep, "variant": var, "fit_s": fit_s,
                       "n_points": int(rel.n_points), **{k: v for k, v in res.items() if k != "tv1_by_column"},
                       "tv1_by_column": res.get("tv1_by_column")}
                runs.append(run)
                print(f"[{name} eps {eps} rep {rep}] {var}: " + " ".join(f"{k}={run[k]:.4g}" for k in KEYS),
                      flush=True)
                out.with_suffix(".json").write_text(json.dumps({"meta": meta, "runs": runs}, indent=1, default=str))
                write_md(out.with_suffix(".md"), runs, meta)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
