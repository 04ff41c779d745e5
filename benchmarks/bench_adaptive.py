"""Adaptive KME table release (``dpkme.release.adaptive``) next to ``release_table`` on bundled tables.

For each table and seed, one release by each mechanism at the same (epsilon, delta); the released rows
(the adaptive release's fitted rows; ``release_table``'s resampled rows, as many as the table has) are
compared with the private table on public cells: every categorical level, integer levels (up to 16),
numeric columns in 16 equal bins of their declared range, a missing cell where declared. Printed: the
medians over seeds of the wall time and of the mean total-variation distance of all 1-, 2- and 3-way
marginals on those cells.

``--timing N`` adds the speed benchmark: penguins (8 mixed columns, missing values) resampled with
replacement to ``N`` rows (a public table; the rows are repeated, which changes nothing in the work done),
released at eps = 1 once cold (the first release of this structure in the process: JAX compiles the fit) and
then ``--timing-runs`` times warm (the compiled fit is reused, as in a long-running app); wall and CPU
seconds of the whole ``adaptive_release`` call (encoding, private pass, rounds, fit, decoding), medians
printed; ``--timing-table`` also times ``release_table`` on the same rows (once).

Usage::

    python benchmarks/bench_adaptive.py                    # penguins and seattle_weather, eps 3, 3 seeds
    python benchmarks/bench_adaptive.py --tables penguins --eps 1 3 --seeds 1
    python benchmarks/bench_adaptive.py --tables --timing 30000 --timing-runs 5 --timing-table
    python benchmarks/bench_adaptive.py --tables --stream 1000000      # 10^6 rows from a CSV, in chunks

The fit loop's compilation is cached on disk across processes (``dpkme.release.fit.persistent_cache``):
a "cold" run is the first release of a structure in the process, which loads the compiled loop from that
cache if an earlier process stored it; ``DPKME_JAX_CACHE=off`` measures a cold run without it.
"""

from __future__ import annotations

import argparse
import contextlib
import itertools
import platform
import statistics
import subprocess
import time

import numpy as np
import pandas as pd

from dpkme.datasets import load_sample, load_schema
from dpkme.release.adaptive import adaptive_release
from dpkme.release.tabular import release_table

DELTA = 1e-6
BINS = 16


def _cpu() -> str:
    try:
        out = subprocess.run(["lscpu"], capture_output=True, text=True, check=False).stdout
        for line in out.splitlines():
            if line.startswith("Model name"):
                return line.split(":", 1)[1].strip()
    except OSError:
        pass
    return platform.processor() or "unknown"


def _codes(df: pd.DataFrame, schema) -> tuple[np.ndarray, list[int]]:
    """Public cell index of every row in every column (numbers clipped to the declared range)."""
    cols, sizes = [], []
    for spec in schema.columns:
        s = df[spec.name]
        miss = s.isna().to_numpy()
        if spec.is_numeric:
            lo, hi = spec.bounds
            if spec.kind == "datetime":
                ts = pd.to_datetime(s, format="ISO8601" if s.dtype == object or str(s.dtype) == "str" else None)
                x = ((ts - pd.Timestamp("1970-01-01")) / pd.Timedelta(days=1)).to_numpy(dtype=float)
            else:
                x = pd.to_numeric(s, errors="coerce").to_numpy(dtype=float)
            if spec.kind == "integer" and hi - lo + 1 <= BINS:
                n = int(hi - lo + 1)
                c = np.clip(np.rint(np.nan_to_num(x, nan=lo)) - lo, 0, n - 1)
            else:
                n = BINS
                c = np.clip(np.floor((np.nan_to_num(x, nan=lo) - lo) / (hi - lo) * n), 0, n - 1)
        else:
            levels = [v for v in spec.levels if v is not None]
            lut = {str(v): i for i, v in enumerate(levels)}
            n = len(levels)
            c = np.array([lut.get(str(v), 0) for v in s.astype(object)], dtype=float)
        c = np.where(miss, n, c)
        cols.append(c.astype(np.int64))
        sizes.append(n + 1)
    return np.stack(cols, axis=1), sizes


def _tv_k(a: np.ndarray, b: np.ndarray, sizes: list[int], k: int) -> float:
    out = []
    for sub in itertools.combinations(range(len(sizes)), k):
        shape = [sizes[j] for j in sub]
        ia = np.ravel_multi_index(tuple(a[:, j] for j in sub), shape)
        ib = np.ravel_multi_index(tuple(b[:, j] for j in sub), shape)
        m = int(np.prod(shape))
        p = np.bincount(ia, minlength=m) / len(ia)
        q = np.bincount(ib, minlength=m) / len(ib)
        out.append(0.5 * float(np.abs(p - q).sum()))
    return float(np.mean(out)) if out else float("nan")


def run(tables: list[str], eps_list: list[float], seeds: int) -> list[dict]:
    results = []
    for name in tables:
        df, _ = load_sample(name)
        schema = load_schema(name)
        a, sizes = _codes(df, schema)
        for eps in eps_list:
            for mech in ("adaptive", "release_table"):
                times, tvs = [], {1: [], 2: [], 3: []}
                for seed in range(seeds):
                    t0 = time.perf_counter()
                    if mech == "adaptive":
                        rel = adaptive_release(df, schema=schema, epsilon=eps, delta=DELTA, random_state=seed)
                        rows = rel.rows
                    else:
                        rel = release_table(df, schema=schema, epsilon=eps, delta=DELTA, random_state=seed)
                        rows = rel.sample(len(df), np.random.default_rng([seed, 1]))
                    times.append(time.perf_counter() - t0)
                    b, _ = _codes(rows, schema)
                    for k in tvs:
                        tvs[k].append(_tv_k(a, b, sizes, k))
                r = {"table": name, "N": len(df), "eps": eps, "mechanism": mech, "seeds": seeds,
                     "time_s": statistics.median(times),
                     **{f"tv{k}": statistics.median(v) for k, v in tvs.items()}}
                results.append(r)
                print(f"{name:16s} N={len(df):5d} eps={eps:g} {mech:14s} time {r['time_s']:7.1f} s   "
                      f"TV1 {r['tv1']:.3f}  TV2 {r['tv2']:.3f}  TV3 {r['tv3']:.3f}", flush=True)
    return results


def _peak_rss_mb() -> float:
    import resource

    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024.0


def timing(n_rows: int, runs: int, with_table: bool) -> dict:
    df, _ = load_sample("penguins")
    schema = load_schema("penguins")
    big = df.sample(n_rows, replace=True, random_state=0).reset_index(drop=True)
    out: dict = {"rows": n_rows, "columns": len(schema)}

    def one(fn) -> tuple[float, float]:
        t0, c0 = time.perf_counter(), time.process_time()
        fn()
        return time.perf_counter() - t0, time.process_time() - c0

    rel = {}
    out["adaptive_cold"] = one(lambda: rel.setdefault(
        "r", adaptive_release(big, schema=schema, epsilon=1.0, delta=DELTA, random_state=100)))
    warm = [one(lambda s=s: adaptive_release(big, schema=schema, epsilon=1.0, delta=DELTA, random_state=s))
            for s in range(runs)]
    out["adaptive_warm"] = warm
    out["adaptive_warm_median"] = (statistics.median(w for w, _ in warm), statistics.median(c for _, c in warm))
    r = rel["r"]
    print(f"timing: {n_rows} x {len(schema)} penguins resampled, eps=1: adaptive_release cold "
          f"{out['adaptive_cold'][0]:.2f} s wall / {out['adaptive_cold'][1]:.2f} s CPU; warm median of {runs}: "
          f"{out['adaptive_warm_median'][0]:.2f} s wall / {out['adaptive_warm_median'][1]:.2f} s CPU "
          f"(runs: {', '.join(f'{w:.2f}' for w, _ in warm)}); {len(r.rounds)} rounds, "
          f"{len(r.rows)} synthetic rows, landmarks {r._fit.domain.landmarks}; peak RSS of the process "
          f"{_peak_rss_mb():.0f} MB", flush=True)
    if with_table:
        out["release_table"] = one(lambda: release_table(big, schema=schema, epsilon=1.0, delta=DELTA,
                                                         random_state=0))
        print(f"timing: release_table on the same rows: {out['release_table'][0]:.2f} s wall / "
              f"{out['release_table'][1]:.2f} s CPU (one run)", flush=True)
    return out


def stream(n_rows: int, chunk: int) -> dict:
    """A release of ``n_rows`` rows streamed from a CSV file in chunks (bounded memory), timed.

    penguins resampled with replacement to ``n_rows`` rows is written to a temporary CSV file first (not
    timed), then released by ``adaptive_release(pandas.read_csv(path, chunksize=chunk), n_private=n_rows)``
    at eps = 1 (the private pass reads the chunks once, in blocks of ``BLOCK_ROWS`` rows). Printed: wall and
    CPU seconds of the whole call (the CSV parsing included), the process's peak RSS before the call and
    after it (``ru_maxrss``: the growth is the release's own peak memory).
    """
    import os
    import tempfile

    df, _ = load_sample("penguins")
    schema = load_schema("penguins")
    with tempfile.TemporaryDirectory() as tmp:
        path = os.path.join(tmp, "big.csv")
        rng = np.random.default_rng(0)
        for start in range(0, n_rows, chunk):
            part = df.iloc[rng.integers(0, len(df), size=min(chunk, n_rows - start))]
            part.to_csv(path, mode="a", header=start == 0, index=False)
        del part
        rss0 = _peak_rss_mb()
        t0, c0 = time.perf_counter(), time.process_time()
        rel = adaptive_release(pd.read_csv(path, chunksize=chunk), schema=schema, epsilon=1.0, delta=DELTA,
                               n_private=n_rows, random_state=1)
        wall, cpu = time.perf_counter() - t0, time.process_time() - c0
        rss1 = _peak_rss_mb()
    print(f"stream: {n_rows} x {len(schema)} rows from CSV in chunks of {chunk}, eps=1: adaptive_release "
          f"{wall:.2f} s wall / {cpu:.2f} s CPU (cold: includes the fit's compilation unless cached); peak RSS "
          f"{rss0:.0f} MB before, {rss1:.0f} MB after; {len(rel.rounds)} rounds", flush=True)
    return {"rows": n_rows, "wall": wall, "cpu": cpu, "rss_before": rss0, "rss_after": rss1}


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--tables", nargs="*", default=["penguins", "seattle_weather"])
    ap.add_argument("--eps", nargs="+", type=float, default=[3.0])
    ap.add_argument("--seeds", type=int, default=3)
    ap.add_argument("--timing", type=int, default=0, metavar="N", help="also time a release of N rows")
    ap.add_argument("--timing-runs", type=int, default=5)
    ap.add_argument("--timing-table", action="store_true", help="also time release_table on those rows")
    ap.add_argument("--stream", type=int, default=0, metavar="N",
                    help="also time a release of N rows streamed from a CSV file in chunks (peak RSS)")
    ap.add_argument("--chunk", type=int, default=100_000, help="rows per chunk of --stream")
    args = ap.parse_args(argv)
    print(f"CPU: {_cpu()}; delta={DELTA:g}; medians over {args.seeds} seed(s); TV on public cells ({BINS} bins)")
    with contextlib.suppress(OSError), open("/proc/loadavg") as f:
        print(f"load average: {f.read().split()[:3]}")
    if args.tables:
        run(args.tables, args.eps, args.seeds)
    if args.timing:
        timing(args.timing, args.timing_runs, args.timing_table)
    if args.stream:
        stream(args.stream, args.chunk)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
