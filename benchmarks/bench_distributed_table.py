"""Benchmark of a mixed-table release on Dask against the same release in memory (issue 27).

Usage::

    python benchmarks/bench_distributed_table.py [--rows 1000000] [--workers 2] [--row-group 100000]
                                                 [--tmp /tmp/dpkme_bench_table] [--report-only]

For every N in ``--rows`` it writes (once) a Parquet file of a generated mixed table under ``--tmp`` -- never in
the repository -- with 10 columns: integers (age, children, visits), continuous columns (income, hours, bmi; income
and bmi with missing values, income and visits with values beyond the declared bounds, which the schema clips),
categorical columns (region, education with missing values, employment) and a boolean (smoker), in row groups of
``--row-group`` rows (one Dask partition each). Then, each phase in its own process:

1. **in memory**: the file read into one pandas DataFrame, then :func:`dpkme.release.release_table` on it;
2. **Dask**: :func:`dpkme.distributed.release_table` from the Parquet path on a
   ``LocalCluster(n_workers=W, threads_per_worker=1, processes=True)``: the rows counted (public under
   replace-one), each row group encoded with the declared schema and summed on a worker (feature sums of the
   additive kernel's random features and the marginal block's cells), the noise once and the reduced-set solver
   with its weight re-fit on the client.

Both releases use the same integer seed (a replayable benchmark, labelled not private), J = 2000 features,
M = 200 atoms, the marginal block at the public rule's share, the interactive preset and a re-fit of 4000
candidates x 100 iterations; the largest differences between the two releases' atoms and weights are recorded.
The private pass (encoding and sums, up to the noise) and the post-processing are timed apart from the release's
progress messages; throughput = N / the private pass. Peak resident memory of every process (the phase's own
process, the scheduler inside it, each worker and nanny) is sampled with psutil every 0.1 s. The machine is shared
with other agents: the 1-minute load average is recorded next to every timing. Writes
``benchmarks/results/distributed_table.json`` and the "Mixed table" section of
``benchmarks/results/distributed.md`` (``bench_distributed.py`` keeps that section when it rewrites the file).
"""

from __future__ import annotations

import argparse
import json
import platform
import subprocess
import sys
import time
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "benchmarks"))

from bench_distributed import PeakRSS, load1  # noqa: E402

OUT = ROOT / "benchmarks" / "results"
SEED = 20261202
START, END = "<!-- bench_distributed_table.py: start -->", "<!-- bench_distributed_table.py: end -->"
RELEASE = dict(epsilon=1.0, delta=1e-6, n_points=200, n_features=2000, preset="interactive", random_state=SEED,
               solver_options={"refit": {"pool_size": 4000, "max_iter": 100}})


def schema():
    from dpkme.schema import ColumnSpec, TableSchema

    return TableSchema([
        ColumnSpec("age", "integer", lower=18, upper=90),
        ColumnSpec("income", "continuous", lower=0, upper=250_000, missing="category"),
        ColumnSpec("hours", "continuous", lower=0, upper=80),
        ColumnSpec("children", "integer", lower=0, upper=6),
        ColumnSpec("bmi", "continuous", lower=15, upper=50, missing="category"),
        ColumnSpec("visits", "integer", lower=0, upper=30),
        ColumnSpec("region", "categorical", categories=["north", "south", "east", "west", "centre", "islands"]),
        ColumnSpec("education", "categorical", categories=["none", "primary", "secondary", "bachelor", "master"],
                   missing="category"),
        ColumnSpec("employment", "categorical", categories=["employed", "self-employed", "unemployed", "retired"]),
        ColumnSpec("smoker", "boolean"),
    ])


def _block(rng: np.random.Generator, n: int):
    import pandas as pd

    age = rng.integers(18, 91, n)
    income = rng.gamma(2.0, 22_000.0, n) * (1 + (age - 18) / 60)
    income[rng.random(n) < 0.08] = np.nan
    bmi = np.clip(rng.normal(27.0, 5.0, n), 15, 50)
    bmi[rng.random(n) < 0.05] = np.nan
    edu = rng.choice(["none", "primary", "secondary", "bachelor", "master"], n, p=[0.05, 0.2, 0.4, 0.25, 0.1])
    edu = np.where(rng.random(n) < 0.03, None, edu)
    return pd.DataFrame({
        "age": age, "income": income, "hours": np.clip(rng.normal(38, 10, n), 0, 80),
        "children": np.minimum(rng.poisson(1.2, n), 6), "bmi": bmi, "visits": rng.poisson(3.0, n) * (1 + (rng.random(n)
                                                                                                           < 0.01) * 20),
        "region": rng.choice(["north", "south", "east", "west", "centre", "islands"], n),
        "education": edu, "employment": rng.choice(["employed", "self-employed", "unemployed", "retired"], n,
                                                   p=[0.6, 0.1, 0.08, 0.22]),
        "smoker": rng.random(n) < 0.22})


def make_file(path: Path, n: int, row_group: int) -> None:
    import pyarrow as pa
    import pyarrow.parquet as pq

    if path.exists():
        return
    rng = np.random.default_rng(SEED)
    tmp = path.with_suffix(".tmp")
    writer = None
    for s in range(0, n, row_group):
        table = pa.Table.from_pandas(_block(rng, min(row_group, n - s)), preserve_index=False)
        if writer is None:
            writer = pq.ParquetWriter(tmp, table.schema)
        writer.write_table(table, row_group_size=row_group)
    writer.close()
    tmp.rename(path)


class Marks:
    """The release's progress messages with their times: where the private pass ends."""

    def __init__(self):
        self.t0, self.marks = time.perf_counter(), []

    def __call__(self, fraction: float, message: str) -> None:
        self.marks.append((time.perf_counter() - self.t0, fraction, message))

    def private_pass(self) -> float:
        """The end of the private pass: the noise (in memory), or the reduction's last message (on Dask the noise
        follows it at the same progress fraction, which the reporter does not repeat)."""
        noise = [t for t, _, m in self.marks if "noisy mean feature vector" in m]
        return noise[0] if noise else [t for t, _, m in self.marks if m.startswith("feature sums")][-1]


def _result(tr, marks: Marks, total: float, ld: float) -> dict:
    private = marks.private_pass()
    np.save(OUT_TMP / f"{PHASE}_points.npy", tr.points)
    np.save(OUT_TMP / f"{PHASE}_weights.npy", tr.weights)
    params = tr.release.params
    return {"seconds": total, "private_pass_s": private, "post_processing_s": total - private, "load1": ld,
            "solver_s": params.get("solver_seconds"), "marginal_share": (params.get("marginals") or {}).get("share"),
            "embedding_dim": params["table"]["embedding_dim"], "n_private": tr.release.n_private,
            "n_components": params["n_features"] + int((params.get("marginals") or {}).get("cells", 0))}


def phase_memory(args) -> dict:
    import pandas as pd

    from dpkme.release import release_table

    res = {}
    with PeakRSS() as mem:
        t, l0 = time.perf_counter(), load1()
        df = pd.read_parquet(args.file)
        res["read"] = {"seconds": time.perf_counter() - t, "load1": max(l0, load1())}
        marks = Marks()
        t, l0 = time.perf_counter(), load1()
        tr = release_table(df, schema=schema(), progress=marks, **RELEASE)
        res["release"] = _result(tr, marks, time.perf_counter() - t, max(l0, load1()))
    res["memory"] = mem.report()
    return res


def _warm_up():
    import dpkme.distributed.sums
    import dpkme.release.tabular  # noqa: F401


def phase_dask(args) -> dict:
    from distributed import Client, LocalCluster, get_task_stream

    import dpkme.distributed as dist

    res = {}
    with PeakRSS() as mem, LocalCluster(n_workers=args.workers, threads_per_worker=1, processes=True,
                                        dashboard_address=None, memory_limit="1GiB") as lc, Client(lc) as client:
        t = time.perf_counter()
        client.run(_warm_up)
        res["warm_up_s"] = time.perf_counter() - t
        cells = {}
        marks = Marks()
        with get_task_stream(client) as ts:
            t, l0 = time.perf_counter(), load1()
            tr = dist.release_table(args.file, schema=schema(), client=client, progress=marks, report=cells.update,
                                    **RELEASE)
            res["release"] = _result(tr, marks, time.perf_counter() - t, max(l0, load1()))
        parts = []
        for rec in ts.data:
            key = rec["key"][0] if isinstance(rec["key"], tuple) else rec["key"]
            if str(key).startswith("_partial-"):
                parts.extend(s["stop"] - s["start"] for s in rec["startstops"] if s["action"] == "compute")
        res["partition_s"] = parts
        res["partitions"] = len(parts)
        res["cells_changed"] = int(sum(sum(c.values()) for c in cells.values()))   # owner-only, not per column
    res["memory"] = mem.report()
    return res


def run_phase(phase: str, args) -> dict:
    cmd = [sys.executable, __file__, "--phase", phase, "--file", str(args.file), "--workers", str(args.workers),
           "--tmp", str(args.tmp)]
    out = subprocess.run(cmd, check=True, capture_output=True, text=True)
    return json.loads(out.stdout.strip().splitlines()[-1])


def report(results: dict, meta: dict) -> list[str]:
    lines = [START, "## Mixed table: the table release on Dask and in memory (issue 27)", "",
             f"`python benchmarks/bench_distributed_table.py --rows {meta['rows_arg']} --workers {meta['workers']}` "
             f"on {meta['machine']}, Python {meta['python']}, {meta['cpus']} cores shared with other agents (the "
             "1-minute load average during each timing is in the table; above 2 the cores were oversubscribed, and "
             "every time is slower than on a quiet machine). A generated table of 10 columns (3 integer, 3 "
             "continuous with missing values and values beyond the declared bounds, 3 categorical, one with "
             "missing values, 1 boolean), Parquet row groups of "
             f"{meta['row_group']:,} rows (one partition each), written by the script under {meta['tmp']} (not in "
             "the repository). `dpkme.release.release_table` on the DataFrame read into memory against "
             "`dpkme.distributed.release_table` on the Parquet path with a `LocalCluster` of "
             f"{meta['workers']} worker processes x 1 thread (memory_limit 1 GiB each); the same seed, J = 2000, "
             "M = 200, the marginal block at the public rule's share, the interactive preset, a re-fit of 4000 "
             "candidates x 100 iterations. Private pass = encoding the rows with the schema and the feature and "
             "cell sums, up to the noise (Dask: the public row count first); post-processing = the reduced-set "
             "solver and the weight re-fit on the client, the same code in both paths.", ""]
    lines += ["| N | path | release s (load) | private pass s | rows/s | post-processing s | largest process MiB |",
              "|---:|---|---:|---:|---:|---:|---:|"]
    for n, r in results.items():
        for path in ("memory", "dask"):
            if path not in r:
                lines.append(f"| {int(n):,} | {'in memory' if path == 'memory' else 'Dask'} | not run | | | | |")
                continue
            rel = r[path]["release"]
            peak = max(p["peak_rss_mib"] for p in r[path]["memory"])
            lines.append(f"| {int(n):,} | {'in memory' if path == 'memory' else 'Dask'} | {rel['seconds']:.1f} "
                         f"({rel['load1']:.1f}) | {rel['private_pass_s']:.1f} | "
                         f"{int(n) / rel['private_pass_s']:,.0f} | {rel['post_processing_s']:.1f} | {peak:,.0f} |")
    lines += ["", "| N | phase | process | peak RSS (MiB) |", "|---:|---|---|---:|"]
    for n, r in results.items():
        for path in ("memory", "dask"):
            for p in sorted(r[path]["memory"] if path in r else [], key=lambda p: -p["peak_rss_mib"]):
                name = "this process" if p["process"] == "this process" else (
                    "Dask worker process" if "spawn" in p["process"] else
                    "multiprocessing resource tracker" if "resource_tracker" in p["process"] else p["process"])
                lines.append(f"| {int(n):,} | {'in memory' if path == 'memory' else 'Dask'} | "
                             f"{'client (+ scheduler, in-process)' if path == 'dask' and name == 'this process' else name} "
                             f"| {p['peak_rss_mib']:,.0f} |")
    lines.append("")
    for n, r in results.items():
        d = r["dask"]
        m = r.get("memory", {"release": d["release"], "read": None})
        parts = np.asarray(d["partition_s"])
        read = (f"reading the file into memory {m['read']['seconds']:.1f} s (not in the in-memory times)"
                if m["read"] else "the in-memory release not run at this N")
        same = (f"The two releases' atoms differ by at most {r['max_abs_diff_points']:.1e} (embedded units) and "
                f"their weights by {r['max_abs_diff_weights']:.1e}: the private sums agree up to float rounding of "
                "the additions in another order, and the reduced-set solver's greedy choices over its candidate "
                "pool are discontinuous in them, so a last-bit difference can select another atom (both are "
                "releases of the same mechanism). " if "max_abs_diff_points" in r else "")
        lines += [f"N = {int(n):,}: embedding dimension {m['release']['embedding_dim']}, "
                  f"{m['release']['n_components']:,} summed components per row (J = 2000 random features and "
                  f"{m['release']['n_components'] - 2000:,} marginal cells; share {m['release']['marginal_share']}); "
                  f"{d['partitions']} partitions, median {np.median(parts):.2f} s each (encoding and sums) on one worker thread "
                  f"({r['rows_per_part'] / np.median(parts):,.0f} rows/s per worker); {read}; the workers' "
                  f"one-off imports {d['warm_up_s']:.1f} s (not in the Dask times). {same}"
                  f"{d['cells_changed']:,} cells were changed by the schema (missing, clipped; owner-only, "
                  "counted as partial sums).", ""]
    lines += [meta["note"], "", END]
    return lines


def write(results: dict, meta: dict) -> None:
    (OUT / "distributed_table.json").write_text(json.dumps({"meta": meta, "results": results}, indent=1),
                                                 encoding="utf-8")
    md = OUT / "distributed.md"
    text = md.read_text(encoding="utf-8") if md.exists() else ""
    if START in text:
        text = text[:text.index(START)].rstrip() + "\n"
    section = "\n".join(report(results, meta)) + "\n"
    md.write_text(text.rstrip() + "\n\n" + section if text else section, encoding="utf-8")


def main(argv=None) -> None:
    global OUT_TMP, PHASE, OUT
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--rows", default="1000000", help="comma-separated table sizes N")
    p.add_argument("--workers", type=int, default=2)
    p.add_argument("--row-group", type=int, default=100_000)
    p.add_argument("--tmp", default="/tmp/dpkme_bench_table")
    p.add_argument("--note", default="", help="a sentence on what ran and why (written under the table)")
    p.add_argument("--report-only", action="store_true", help="rewrite the section from distributed_table.json")
    p.add_argument("--phases", default="memory,dask", help="which phases to run (comma-separated)")
    p.add_argument("--merge", action="store_true", help="keep the other sizes of distributed_table.json")
    p.add_argument("--results", type=Path, default=OUT, help="folder of distributed.md (default benchmarks/results)")
    p.add_argument("--phase", choices=["memory", "dask"], help=argparse.SUPPRESS)
    p.add_argument("--file", type=Path, help=argparse.SUPPRESS)
    args = p.parse_args(argv)
    OUT = args.results
    OUT_TMP = Path(args.tmp)
    OUT_TMP.mkdir(parents=True, exist_ok=True)
    if args.phase:
        PHASE = args.phase
        res = (phase_memory if args.phase == "memory" else phase_dask)(args)
        print(json.dumps(res))
        return
    if args.report_only:
        saved = json.loads((OUT / "distributed_table.json").read_text(encoding="utf-8"))
        write(saved["results"], {**saved["meta"], "note": args.note or saved["meta"]["note"]})
        return
    import os

    meta = {"rows_arg": args.rows, "workers": args.workers, "row_group": args.row_group, "tmp": args.tmp,
            "machine": platform.machine(), "python": platform.python_version(), "cpus": os.cpu_count(),
            "note": args.note}
    results = {}
    if args.merge and (OUT / "distributed_table.json").exists():
        saved = json.loads((OUT / "distributed_table.json").read_text(encoding="utf-8"))
        results = saved["results"]
        meta["rows_arg"] = ",".join([*results, args.rows])
    phases = [ph for ph in ("memory", "dask") if ph in args.phases.split(",")]
    for n in (int(s) for s in args.rows.split(",")):
        args.file = OUT_TMP / f"table_{n}.parquet"
        make_file(args.file, n, args.row_group)
        r = {"rows_per_part": min(args.row_group, n)}
        for phase in phases:
            print(f"N={n:,}: {phase} ...", file=sys.stderr, flush=True)
            r[phase] = run_phase(phase, args)
        if phases == ["memory", "dask"]:
            pm, pd_ = (np.load(OUT_TMP / f"{ph}_points.npy") for ph in ("memory", "dask"))
            wm, wd = (np.load(OUT_TMP / f"{ph}_weights.npy") for ph in ("memory", "dask"))
            r["max_abs_diff_points"] = float(np.abs(pm - pd_).max())
            r["max_abs_diff_weights"] = float(np.abs(wm - wd).max())
        results[str(n)] = r
        write(results, meta)
    print(f"wrote {OUT / 'distributed.md'}", file=sys.stderr)


OUT_TMP = Path("/tmp/dpkme_bench_table")
PHASE = "memory"

if __name__ == "__main__":
    main()
