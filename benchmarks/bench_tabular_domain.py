"""Releases that live in the declared domain and resolve the data (issue 15): before vs after.

Usage::

    python benchmarks/bench_tabular_domain.py [--repeats 2] [--epsilons 0.3 1 3] [--n-generated 5000]
        [--out benchmarks/results/tabular_domain]

Two tables, each with a declared schema (length scales 0.25 of the declared range, as in the issue's
measurement):

* the Palmer penguins' four numeric columns (bill length and depth, flipper length, body mass; the two
  rows without measurements dropped, N = 342) with the bounds and precision of the bundled declared
  schema (``penguins.schema.json``);
* a generated mixed table (N = ``--n-generated``): a zero-inflated continuous column (98 % of rows at
  0, the issue's worst case), a continuous column that depends on a 4-level category, a Poisson count
  (integer) and a boolean.

Per table and epsilon (delta = 1e-6, J = 2000), Algorithm 2 with pursuit-joint and simplex weights:

* **before**: the solver as it was -- no domain; candidates and starting points from
  q = N(centre of the embedded box, (half its mean width)^2 I); M = 300;
* **after**: :func:`dpkme.release.tabular.release_table` -- the solver restricted to the declared
  domain (pool from ``domain.sample``, L-BFGS-B bounds from ``domain.bounds_for``), M from the public
  rule :func:`~dpkme.release.tabular.default_n_points`, rows resampled with the default ``spread``
  (and, for the last column, with ``spread=0`` and ``1``).

Measured: share of the weight mass inside the declared box of the numeric columns and inside the
declared domain (box, integer levels and one-hot vertices), the largest excursion of an atom with weight
outside the box (in widths of the column's declared range), atoms
with weight (> 1e-12), distinct rows in a resampled table of N rows (before: the atoms themselves,
decoded; after: :meth:`TableRelease.sample`), the MMD of the weighted release to the private embedded
rows (exact kernel; the noise level sets its floor), the mean total-variation distance of the 1-way
marginals of the resampled rows to the private rows (:func:`tv_1way`), and seconds per release (shared
2-core machine).
Medians over ``--repeats`` real (OS-entropy) releases. Writes ``<out>.json`` and ``<out>.md``.
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import sys
import time
from pathlib import Path

import numpy as np
import pandas as pd

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from dpkme.datasets import load_sample  # noqa: E402
from dpkme.datasets.samples import load_schema  # noqa: E402
from dpkme.metrics import mmd  # noqa: E402
from dpkme.reduced_set import resample  # noqa: E402
from dpkme.release.random_features import algorithm2  # noqa: E402
from dpkme.release.tabular import release_table  # noqa: E402
from dpkme.schema import ColumnSpec, TableSchema  # noqa: E402

DELTA = 1e-6
J = 2000
M_BEFORE = 300
LENGTHSCALE = 0.25


def penguins() -> tuple[pd.DataFrame, TableSchema]:
    cols = ["bill_length_mm", "bill_depth_mm", "flipper_length_mm", "body_mass_g"]
    df = load_sample("penguins")[0][cols].dropna().reset_index(drop=True)
    declared = load_schema("penguins")         # the bundled declared schema: its bounds and precision
    schema = TableSchema([ColumnSpec(c, declared[c].kind, lower=declared[c].lower, upper=declared[c].upper,
                                     decimals=declared[c].decimals, lengthscale=LENGTHSCALE) for c in cols])
    return df, schema


def generated(n: int, seed: int = 0) -> tuple[pd.DataFrame, TableSchema]:
    rng = np.random.default_rng(seed)
    group = rng.choice(4, size=n, p=[0.4, 0.3, 0.2, 0.1])
    zero = np.where(rng.random(n) < 0.98, 0.0, np.minimum(rng.exponential(20.0, n), 100.0))
    x = np.array([20.0, 40.0, 55.0, 80.0])[group] + rng.normal(0, 6, n)
    count = np.minimum(rng.poisson(np.array([2, 4, 6, 9])[group]), 20)
    df = pd.DataFrame({"zero": zero, "x": np.clip(x, 0, 100), "count": count,
                       "group": np.array(list("abcd"), dtype=object)[group], "flag": rng.random(n) < 0.25})
    schema = TableSchema([
        ColumnSpec("zero", "continuous", lower=0, upper=100, decimals=2, lengthscale=LENGTHSCALE),
        ColumnSpec("x", "continuous", lower=0, upper=100, decimals=2, lengthscale=LENGTHSCALE),
        ColumnSpec("count", "integer", lower=0, upper=20, lengthscale=LENGTHSCALE),
        ColumnSpec("group", "categorical", categories=list("abcd"), similarity=0.5),
        ColumnSpec("flag", "boolean", similarity=0.5),
    ])
    return df, schema


def tv_1way(a: pd.DataFrame, b: pd.DataFrame, schema: TableSchema) -> float:
    """Mean total-variation distance of the 1-way marginals (numeric: 20 bins over the declared range plus
    a missing bin; categorical: the levels)."""
    out = []
    for c in schema.columns:
        x, y = a[c.name], b[c.name]
        if c.is_numeric:
            lo, hi = c.bounds
            bins = np.linspace(lo, hi, 21)
            hx, hy = (np.append(np.histogram(v.dropna().astype(float), bins)[0] / len(v), v.isna().mean())
                      for v in (x, y))
        else:
            vx, vy = x.astype(str).value_counts(normalize=True), y.astype(str).value_counts(normalize=True)
            idx = vx.index.union(vy.index)
            hx, hy = vx.reindex(idx, fill_value=0).to_numpy(), vy.reindex(idx, fill_value=0).to_numpy()
        out.append(0.5 * float(np.abs(hx - hy).sum()))
    return float(np.mean(out))


def measure(points, weights, schema, X, rows: pd.DataFrame, seconds: float, df: pd.DataFrame) -> dict:
    dom = schema.domain
    w = np.abs(np.asarray(weights))
    total = float(w.sum())
    num = [dom.blocks[c.name].start for c in schema.columns if c.is_numeric]   # the numeric coordinates
    lo, hi, P = dom.lower[num], dom.upper[num], points[:, num]
    in_box = np.all((lo - 1e-9 <= P) & (hi + 1e-9 >= P), axis=1)
    excursion = np.maximum(lo - P, P - hi).clip(min=0) / (hi - lo)
    carried = w > 1e-12
    return {
        "mass_in_box": float(w[in_box].sum() / total),
        "mass_in_domain": float(w[dom.contains(points)].sum() / total),
        "max_outside_box_widths": float(excursion[carried].max()) if carried.any() else 0.0,
        "atoms": int(points.shape[0]),
        "atoms_with_weight": int(carried.sum()),
        "distinct_resampled_rows": int(len(rows.astype(str).drop_duplicates())),
        "mmd": float(mmd(X, points, kernel=schema.kernel(), weights_y=weights)),
        "tv_1way": tv_1way(df, rows, schema),
        "seconds": seconds,
    }


def before(df, schema, X, eps) -> dict:
    dom = schema.domain
    t0 = time.perf_counter()
    rel = algorithm2(X, kernel=schema.kernel(), epsilon=eps, delta=DELTA, n_points=M_BEFORE, n_features=J,
                     q_loc=0.5 * (dom.lower + dom.upper), q_scale=float(np.mean(dom.upper - dom.lower)) / 2,
                     solver_options={"weights": "simplex"})
    seconds = time.perf_counter() - t0
    rows = schema.decode(resample(rel, len(df), np.random.default_rng()))
    return measure(rel.points, rel.weights, schema, X, rows, seconds, df)


def after(df, schema, X, eps) -> dict:
    t0 = time.perf_counter()
    rel = release_table(df, schema=schema, epsilon=eps, delta=DELTA, n_features=J)
    seconds = time.perf_counter() - t0
    out = measure(rel.points, rel.weights, schema, X, rel.sample(len(df)), seconds, df)
    for spread in (0.0, 1.0):
        out[f"tv_1way_spread{spread:g}"] = tv_1way(df, rel.sample(len(df), spread=spread), schema)
    return out


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--repeats", type=int, default=2)
    ap.add_argument("--epsilons", type=float, nargs="+", default=[0.3, 1.0, 3.0])
    ap.add_argument("--n-generated", type=int, default=5000)
    ap.add_argument("--out", default=str(ROOT / "benchmarks" / "results" / "tabular_domain"))
    args = ap.parse_args(argv)
    tables = {"penguins (numeric)": penguins(), f"generated mixed (N={args.n_generated})": generated(args.n_generated)}
    load0 = os.getloadavg()
    results = []
    for name, (df, schema) in tables.items():
        X = schema.encode(df)
        for eps in args.epsilons:
            for label, fn in (("before", before), ("after", after)):
                runs = [fn(df, schema, X, eps) for _ in range(args.repeats)]
                med = {k: float(statistics.median(r[k] for r in runs)) for k in runs[0]}
                results.append({"table": name, "N": len(df), "epsilon": eps, "variant": label, **med})
                print(f"{name:28s} eps={eps:<4g} {label:6s} " + "  ".join(
                    f"{k}={v:.4g}" if isinstance(v, float) else f"{k}={v}" for k, v in med.items()), flush=True)
    meta = {"delta": DELTA, "J": J, "M_before": M_BEFORE, "lengthscale": LENGTHSCALE, "repeats": args.repeats,
            "loadavg_start": load0, "loadavg_end": os.getloadavg()}
    out = Path(args.out)
    out.with_suffix(".json").write_text(json.dumps({"meta": meta, "results": results}, indent=2))
    head = ("| table | N | ε | variant | mass in numeric box | mass in domain | max out (range widths) | M | atoms with weight "
            "| distinct rows (of N) | MMD to data | 1-way TV | 1-way TV, spread 0 / 1 | s |")
    lines = [f"# Releases in the declared domain: before vs after ({args.repeats} real releases each, median)", "",
             f"Algorithm 2, pursuit-joint, simplex weights, J = {J}, δ = {DELTA:g}, length scales "
             f"{LENGTHSCALE} of each declared range. *before*: no domain, q around the box, M = {M_BEFORE}; "
             "*after*: `release_table` (domain-constrained solver, M from `default_n_points`, rows resampled "
             "with the default `spread=0.1`; the last TV column with `spread=0` and `1`). Load average "
             f"{load0[0]:.1f} → {meta['loadavg_end'][0]:.1f} (shared machine; seconds are indicative).", "",
             head, "|" + "---|" * (head.count("|") - 1)]
    for r in results:
        lines.append(f"| {r['table']} | {r['N']} | {r['epsilon']:g} | {r['variant']} | {r['mass_in_box']:.1%} | "
                     f"{r['mass_in_domain']:.1%} | {r['max_outside_box_widths']:.2f} | {r['atoms']:g} | "
                     f"{r['atoms_with_weight']:g} | {r['distinct_resampled_rows']:g} | {r['mmd']:.4f} | "
                     f"{r['tv_1way']:.3f} | " + (f"{r['tv_1way_spread0']:.3f} / {r['tv_1way_spread1']:.3f}"
                                                 if "tv_1way_spread0" in r else "–") + f" | {r['seconds']:.1f} |")
    out.with_suffix(".md").write_text("\n".join(lines) + "\n")
    print(f"wrote {out.with_suffix('.md')}")


if __name__ == "__main__":
    main()
