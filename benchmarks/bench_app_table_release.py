r"""Time the Release page's Algorithm 2 on mixed tables: the app's old path against the library's table defaults.

For each table (the bundled ``penguins`` and ``seattle_weather`` with their declared schemas, and a generated
20 000-row mixed table with a date, an integer, a continuous column with missing cells, a categorical column
with missing cells and a boolean), at :math:`\varepsilon = 1`, :math:`\delta = 10^{-6}`, the seconds of one
:func:`dpkme.release.algorithm2` call on the embedded rows (cold, one run each; 2 shared cores: indicative) for

``old``
    what the app did before: the schema's product kernel (Gaussian, :math:`\ell = 1`), the ``"interactive"``
    solver preset, :math:`J = 1000`, :math:`M` = :func:`dpkme.release.tabular.default_n_points` for
    :math:`J = 2000` (the app's default M for a table), simplex weights, no revival, no refit;
``interactive``
    the library's table defaults (additive kernel, :func:`dpkme.release.tabular.table_solver_options`: revive
    and refit, :math:`J` = ``DEFAULT_N_FEATURES``, :math:`M` = ``default_n_points``) with the interactive preset;
``accurate``
    the same with ``release_table``'s preset (``"accurate"``), without the marginal block;
``marginals``
    ``accurate`` with :func:`dpkme.release.tabular.table_marginals` (the marginal block where its public rule
    turns it on; "off" in the table where it does not): exactly ``release_table``'s release and the app's.

Usage::

    .venv/bin/python benchmarks/bench_app_table_release.py [--tables penguins,seattle_weather,generated20000]
        [--out benchmarks/results/app_table_release.md]

Every release draws seeded noise (a timing run, not a private release); no private value is written: only
sizes and seconds.
"""

from __future__ import annotations

import argparse
import platform
import sys
import time
from pathlib import Path

import numpy as np
import pandas as pd

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO))

from dpkme.datasets import load_sample, load_schema  # noqa: E402
from dpkme.kernels import GaussianKernel  # noqa: E402
from dpkme.release import algorithm2  # noqa: E402
from dpkme.release.tabular import (  # noqa: E402
    DEFAULT_N_FEATURES,
    default_n_points,
    table_marginals,
    table_solver_options,
)
from dpkme.schema import TableSchema  # noqa: E402

EPS, DELTA = 1.0, 1e-6

GENERATED_SCHEMA = {
    "format": "dpkme.table_schema", "version": 1, "uniform_sq_distance": 1.0, "data_dependent": [],
    "columns": [
        {"name": "visit", "kind": "datetime", "lower": "2021-01-01", "upper": "2022-12-31", "missing": "error"},
        {"name": "age", "kind": "integer", "lower": 18, "upper": 99, "missing": "error"},
        {"name": "income", "kind": "continuous", "lower": 0.0, "upper": 150000.0, "missing": "category",
         "decimals": 0},
        {"name": "region", "kind": "categorical", "categories": ["east", "north", "south", "west"],
         "missing": "category"},
        {"name": "smoker", "kind": "boolean", "missing": "error"},
    ],
}


def generated(n: int) -> tuple[pd.DataFrame, TableSchema]:
    rng = np.random.default_rng(5)
    age = rng.integers(18, 90, n)
    income = np.round(rng.normal(40000 + 300 * age, 8000), 2).clip(0, 150000)
    income[np.arange(n) % 9 == 0] = np.nan
    region = np.array(["north", "south", "east", "west"], dtype=object)[rng.integers(0, 4, n)]
    region[np.arange(n) % 13 == 0] = None
    df = pd.DataFrame({"visit": pd.Timestamp("2021-01-01") + pd.to_timedelta(rng.integers(0, 700, n), unit="D"),
                       "age": age, "income": income, "region": region, "smoker": rng.random(n) < 0.3})
    return df, TableSchema.from_dict(GENERATED_SCHEMA)


def load(name: str):
    if name.startswith("generated"):
        return generated(int(name[len("generated"):]))
    df, _ = load_sample(name)
    return df, load_schema(name)


def run(X, schema, *, kernel, preset, n_points, n_features, options, marginals=None) -> float:
    t = time.perf_counter()
    algorithm2(X, kernel=kernel, epsilon=EPS, delta=DELTA, n_points=n_points, n_features=n_features,
               solver="pursuit-joint", solver_options=options, preset=preset, domain=schema.domain, random_state=0,
               **(marginals or {}))
    return time.perf_counter() - t


def main(argv=None) -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--tables", default="penguins,seattle_weather,generated20000")
    ap.add_argument("--out", default=str(REPO / "benchmarks" / "results" / "app_table_release.md"))
    args = ap.parse_args(argv)
    rows = []
    for name in args.tables.split(","):
        df, schema = load(name)
        X = schema.encode(df)
        n = X.shape[0]
        m = default_n_points(n_private=n, epsilon=EPS, delta=DELTA)
        add = schema.kernel(kind="additive")
        opts = table_solver_options("pursuit-joint")
        cases = {
            "old": dict(kernel=GaussianKernel(lengthscale=1.0), preset="interactive", n_points=m, n_features=1000,
                        options={"weights": "simplex"}),
            "interactive": dict(kernel=add, preset="interactive", n_points=m, n_features=DEFAULT_N_FEATURES,
                                options=opts),
            "accurate": dict(kernel=add, preset="accurate", n_points=m, n_features=DEFAULT_N_FEATURES, options=opts),
        }
        block = table_marginals(schema, n_private=n, epsilon=EPS, delta=DELTA)
        if block:
            cases["marginals"] = dict(cases["accurate"], options=table_solver_options("pursuit-joint"),
                                      marginals=block)
        for case, kw in cases.items():
            s = run(X, schema, **kw)
            rows.append({"table": name, "N": n, "D": schema.dim, "M": kw["n_points"], "J": kw["n_features"],
                         "path": case, "seconds": s})
        if not block:
            rows.append({"table": name, "N": n, "D": schema.dim, "M": m, "J": DEFAULT_N_FEATURES,
                         "path": "marginals (off: the rule leaves the block out)", "seconds": rows[-1]["seconds"]})
            print(rows[-1], flush=True)
    lines = ["# The Release page's Algorithm 2 on mixed tables: seconds per release", "",
             f"Written by `benchmarks/bench_app_table_release.py` on {time.strftime('%Y-%m-%d')}. "
             f"Command: `python benchmarks/bench_app_table_release.py --tables {args.tables}`", "",
             f"Machine: {platform.processor() or platform.machine()}, Python {platform.python_version()}; 2 cores "
             "shared with other jobs, one cold run per cell: times indicative. ε = 1, δ = 1e-6. See the "
             "script's docstring for the paths.", "",
             "| table | N | D | M | J | path | seconds |", "|---|---|---|---|---|---|---|"]
    lines += [f"| {r['table']} | {r['N']:,} | {r['D']} | {r['M']} | {r['J']} | {r['path']} | {r['seconds']:.1f} |"
              for r in rows]
    Path(args.out).write_text("\n".join(lines) + "\n")
    print("wrote", args.out)


if __name__ == "__main__":
    main()
