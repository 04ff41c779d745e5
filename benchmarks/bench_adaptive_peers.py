r"""The adaptive KME table release next to the stored peers (AIM, MST) and ``release_table`` (issue 25).

Runs :func:`dpkme.release.adaptive.adaptive_release` on the tables, splits and epsilons of
``benchmarks/bench_tabular.py`` (same seed, so the same 80/20 private/test splits) and scores it with that
script's metrics (``evaluate``: MMD, TV1 num/cat and TV2 on the 16-bin grid, moment and correlation
errors, train-on-synthetic accuracy against the test rows), plus TV3 (all 3-way marginals on the same grid).
The peers' and ``release_table``'s rows are **not** rerun: they are read from a stored results JSON of
``bench_tabular.py`` (default ``benchmarks/results/tabular.json``; same seed, tables and splits) and shown
next to the new rows with their stored times (a different run, on the same kind of machine).

Usage::

    python benchmarks/bench_adaptive_peers.py [--tables cars,anes96,fair,randhie] [--epsilons 0.3,1,3]
        [--reps 2] [--stored benchmarks/results/tabular.json] [--out benchmarks/results/adaptive_peers]
"""

from __future__ import annotations

import argparse
import itertools
import json
import statistics
import sys
import time
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "benchmarks"))

import bench_tabular as bt  # noqa: E402


def tv3(test, synth, grids) -> float:
    a = np.stack([bt.to_codes(test, g) for g in grids], axis=1)
    b = np.stack([bt.to_codes(synth, g) for g in grids], axis=1)
    sizes = [g.size for g in grids]
    out = []
    for sub in itertools.combinations(range(len(grids)), 3):
        shape = [sizes[j] for j in sub]
        m = int(np.prod(shape))
        p = np.bincount(np.ravel_multi_index(tuple(a[:, j] for j in sub), shape), minlength=m) / len(a)
        q = np.bincount(np.ravel_multi_index(tuple(b[:, j] for j in sub), shape), minlength=m) / len(b)
        out.append(0.5 * float(np.abs(p - q).sum()))
    return float(np.mean(out))


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--tables", default="cars,anes96,fair,randhie")
    ap.add_argument("--epsilons", default="0.3,1,3")
    ap.add_argument("--reps", type=int, default=2)
    ap.add_argument("--seed", type=int, default=2024)
    ap.add_argument("--stored", default=str(ROOT / "benchmarks" / "results" / "tabular.json"))
    ap.add_argument("--out", default=str(ROOT / "benchmarks" / "results" / "adaptive_peers"))
    ap.add_argument("--set", action="append", default=[], metavar="NAME=VALUE",
                    help="override a public constant of dpkme.release.adaptive / .fit (tuning runs), e.g. "
                         "--set ROUNDS_PER_COLUMN=2")
    args = ap.parse_args(argv)
    from dpkme.release import adaptive as _ad
    from dpkme.release import fit as _fit

    for item in args.set:
        key, value = item.split("=", 1)
        setattr(_fit if hasattr(_fit, key) else _ad, key, eval(value))
    stored = json.loads(Path(args.stored).read_text())
    if stored["meta"]["seed"] != args.seed:
        raise SystemExit(f"--stored has seed {stored['meta']['seed']}, not {args.seed}: the splits differ.")
    names = [t for t in args.tables.split(",") if t]
    epsilons = [float(e) for e in args.epsilons.split(",") if e]
    all_names = list(bt.TABLES)
    runs = []
    for name in names:
        table = bt.TABLES[name]
        ti = all_names.index(name)
        df = table.load()
        metric_schema = table.schema()
        grids = [bt.make_grid(s, bt.GRID_BINS) for s in table.columns]
        n_test = len(df) // 5
        for rep in range(args.reps):
            split = np.random.default_rng([args.seed, ti, rep]).permutation(len(df))
            test = df.iloc[split[:n_test]].reset_index(drop=True)
            train = df.iloc[split[n_test:]].reset_index(drop=True)
            test_z = metric_schema.encode(test)
            for ei, eps in enumerate(epsilons):
                t0 = time.perf_counter()
                c0 = time.process_time()
                rel = _ad.adaptive_release(train, schema=table.schema(levels=True), epsilon=eps, delta=bt.DELTA,
                                       random_state=np.random.default_rng([args.seed, ti, rep, ei, 13]))
                fit_s, cpu_s = time.perf_counter() - t0, time.process_time() - c0
                rows = rel.sample(len(train), rng=np.random.default_rng([args.seed, ti, rep, ei, 14]))
                res = bt.evaluate(rows, test, test_z, table, metric_schema, grids)
                res["tv3"] = tv3(test, rows, grids)
                run = {"table": name, "rep": rep, "epsilon": eps, "method": "adaptive", "fit_s": fit_s,
                       "cpu_s": cpu_s, "n_private": len(train), "rounds": len(rel.rounds), **res}
                runs.append(run)
                print(f"[{name} rep {rep} eps {eps}] adaptive: " + " ".join(
                    f"{k}={run[k]:.4g}" for k in ("mmd", "tv1_num", "tv1_cat", "tv2", "tv3", "corr_err", "tstr",
                                                  "fit_s", "cpu_s")), flush=True)
                # the stored rows of the same table, split and epsilon
                for old in stored["runs"]:
                    if old["table"] == name and old["rep"] == rep and old["epsilon"] == eps and \
                            old["method"] in ("dpkme", "mst", "aim") and not old.get("error"):
                        if old.get("n_private") not in (None, len(train)):
                            raise SystemExit(f"{name}: stored run has {old['n_private']} private rows.")
                        runs.append({**{k: old.get(k) for k in ("table", "rep", "epsilon", "mmd", "tv1_num",
                                                                 "tv1_cat", "tv2", "mean_err", "sd_err", "corr_err",
                                                                 "tstr", "fit_s")},
                                     "method": "release_table" if old["method"] == "dpkme" else old["method"],
                                     "stored": True})
    out = Path(args.out)
    out.with_suffix(".json").write_text(json.dumps({"meta": {"command": " ".join(sys.argv), "cpu": bt.cpu_info()[0],
                                                            "stored": args.stored, "seed": args.seed},
                                                   "runs": runs}, indent=1, default=float))
    keys = ("mmd", "tv1_num", "tv1_cat", "tv2", "tv3", "corr_err", "tstr", "fit_s")
    lines = ["| table | ε | method | n | " + " | ".join(keys) + " |", "|---|---|---|---|" + "---|" * len(keys)]
    for name in names:
        for eps in epsilons:
            for m in ("adaptive", "release_table", "mst", "aim"):
                rs = [r for r in runs if r["table"] == name and r["epsilon"] == eps and r["method"] == m]
                if not rs:
                    continue
                med = []
                for k in keys:
                    v = [r[k] for r in rs if r.get(k) is not None and np.isfinite(r[k])]
                    med.append(f"{statistics.median(v):.3f}" if v else "—")
                lines.append(f"| {name} | {eps:g} | {m}{' (stored)' if rs[0].get('stored') else ''} | {len(rs)} | "
                             + " | ".join(med) + " |")
    out.with_suffix(".md").write_text("\n".join(lines) + "\n")
    print("\n".join(lines))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
