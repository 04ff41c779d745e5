r"""The adaptive KME table release next to AIM and MST (mbi 2.0) and smartnoise-synth's MST, in one run (issue 25).

Every method is run **in the same process, on the same 80/20 private/test splits and the same declared
domain**, cell after cell (table x epsilon x repetition), so their times are taken under the same load:

* ``adaptive`` -- :func:`dpkme.release.adaptive.adaptive_release` on the declared schema (with the documented
  levels of coded columns, as ``bench_tabular.py``'s dpkme runs), then ``rel.sample(len(train))``;
* ``aim`` -- AIM (McKenna, Mullins, Sheldon & Miklau, VLDB 2022) on **mbi 2.0.0**'s estimator: the workload
  is all 2-way marginals of the discretised table (at most 10 000 cells each, weight 1), candidates their
  downward closure weighted by overlap, 16 p rounds, 0.9/0.1 measurement/selection split, annealing, the
  model-size filter and the final estimate as in the paper and the authors' reference loop (written here
  against mbi 2.0's API, which no longer ships the mechanisms); ``--aim-max-model-size`` and
  ``--aim-iters`` (the authors' defaults: 80 MB, 1000 mirror-descent iterations per round and 2500 at
  the end) are what the printed metadata says was run;
* ``mst`` -- MST (McKenna, Miklau & Sheldon 2021) on mbi 2.0.0's estimator: 1-way measurements, domain
  compression of cells under 3 sigma, a private maximum spanning tree of 2-way marginals (exponential
  mechanism), the tree's marginals measured, one estimate (``--mst-iters``, the authors' 5000);
* ``snsynth_mst`` -- smartnoise-synth 1.0.8's MST on mbi 1.1.0 (it needs mbi<2), in a worker subprocess that
  puts ``benchmarks/.peer-venv/snsynth`` first on ``sys.path``.

The peers see the table discretised on the public grid of ``bench_tabular.py`` (32 equal bins of each
declared range, one cell per integer level up to 32, a missing cell where declared) and their rows are
drawn i.i.d. from the fitted model (``method="sample"``) and mapped back (uniform within a bin). Privacy:
(epsilon, delta = 1e-6)-DP for all, through zCDP (``cdp_rho``); AIM and MST as published are add/remove
with N unknown, the adaptive release replace-one with N public (its default).

Metrics (``bench_tabular.evaluate`` plus): MMD with the schema's mixed kernel, mean TV of 1-way (numeric /
categorical), all 2-way and all 3-way marginals on the 16-bin grid, the mean absolute error of Pearson
correlations, train-on-synthetic accuracy of a gradient-boosted classifier predicting the table's target
(``tstr``) and the test rows' majority-class rate (``floor``), and ``group_mean_err``: the error of a
numeric column's mean within each level of a categorical column (range units; mean over levels weighted by
the test rows' shares; the pair per table in ``GROUP_MEAN``). Fit seconds (wall and CPU) per method.

Tables (none bundled by dpkme; read at run time from installed PyPI packages' own files, nothing
downloaded): ``bench_tabular.py``'s cars (406 rows, missing values), anes96 (944 rows, 10 columns), fair
(6 366), randhie (20 190), and plotnine's ``diamonds`` (53 940 rows, 10 columns; the declared ranges are
ggplot2's documented ones).

Setup: ``benchmarks/setup_peers_mbi2.sh``. Usage (results appended per cell to ``OUT.jsonl``, the summary
written to ``OUT.md`` / ``OUT.json`` at the end or with ``--summarise``)::

    benchmarks/.peer-venv/mbi2/bin/python benchmarks/bench_adaptive_peers.py [--tables cars,anes96,fair,
        randhie,diamonds] [--epsilons 0.3,1,3] [--reps 3] [--reps-big 1] [--methods adaptive,aim,mst,
        snsynth_mst] [--aim-max-model-size 80] [--aim-iters 1000] [--out benchmarks/results/adaptive_peers]
"""

from __future__ import annotations

import argparse
import contextlib
import io
import itertools
import json
import math
import os
import pickle
import statistics
import subprocess
import sys
import time
import warnings
from pathlib import Path

import numpy as np
import pandas as pd

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "benchmarks"))
os.environ.setdefault("JAX_PLATFORMS", "cpu")

import bench_tabular as bt  # noqa: E402

from dpkme.schema import ColumnSpec  # noqa: E402

SNSYNTH_DIR = ROOT / "benchmarks" / ".peer-venv" / "snsynth"
BIG_ROWS = 50_000
METHODS = ("adaptive", "aim", "mst", "snsynth_mst")


# --------------------------------------------------------------------------- the fifth table
def _plotnine_csv(name: str) -> Path:
    import importlib.util

    spec = importlib.util.find_spec("plotnine")        # locate only: plotnine itself is not imported
    if spec is None or not spec.submodule_search_locations:
        raise SystemExit("plotnine is not installed: run benchmarks/setup_peers_mbi2.sh")
    return Path(next(iter(spec.submodule_search_locations))) / "data" / f"{name}.csv"


def _load_diamonds() -> pd.DataFrame:
    df = pd.read_csv(_plotnine_csv("diamonds"))
    df["price"] = df["price"].astype(int)
    return df


_CUT = ["Fair", "Good", "Very Good", "Premium", "Ideal"]
_COLOR = ["D", "E", "F", "G", "H", "I", "J"]
_CLARITY = ["I1", "SI2", "SI1", "VS2", "VS1", "VVS2", "VVS1", "IF"]
# ggplot2's documentation of diamonds gives these ranges (price $326-$18,823, carat 0.2-5.01, x 0-10.74,
# y 0-58.9, z 0-31.8 mm, depth 43-79 %, table 43-95 %); declared rounded outward.
TABLES = dict(bt.TABLES)
TABLES["diamonds"] = bt.BenchTable(
    "diamonds", _load_diamonds,
    (ColumnSpec("carat", "continuous", lower=0.2, upper=5.1, decimals=2),
     ColumnSpec("cut", "categorical", categories=_CUT),
     ColumnSpec("color", "categorical", categories=_COLOR),
     ColumnSpec("clarity", "categorical", categories=_CLARITY),
     ColumnSpec("depth", "continuous", lower=43, upper=79, decimals=1),
     ColumnSpec("table", "continuous", lower=43, upper=95, decimals=1),
     ColumnSpec("price", "integer", lower=326, upper=18823),
     ColumnSpec("x", "continuous", lower=0, upper=10.8, decimals=2),
     ColumnSpec("y", "continuous", lower=0, upper=59, decimals=2),
     ColumnSpec("z", "continuous", lower=0, upper=32, decimals=2)),
    target="cut")
#: (numeric column, categorical column) of the "mean by category" metric per table.
GROUP_MEAN = {"cars": ("Horsepower", "Origin"), "anes96": ("age", "vote"), "fair": ("yrs_married", "had_affair"),
              "randhie": ("mdvis", "health"), "diamonds": ("price", "cut")}


# --------------------------------------------------------------------------- metrics
def tv3(test: pd.DataFrame, synth: pd.DataFrame, grids) -> float:
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


def group_mean_err(test: pd.DataFrame, synth: pd.DataFrame, table) -> float:
    num, cat = GROUP_MEAN[table.name]
    spec_n = next(s for s in table.columns if s.name == num)
    spec_c = next(s for s in table.columns if s.name == cat)
    lo, hi = spec_n.bounds
    xt, xs = bt.numeric_values(test[num], spec_n), bt.numeric_values(synth[num], spec_n)
    ct, cs = bt.level_index(test[cat], spec_c), bt.level_index(synth[cat], spec_c)
    err, wsum = 0.0, 0.0
    for lv in np.unique(ct):
        a = xt[(ct == lv) & ~np.isnan(xt)]
        b = xs[(cs == lv) & ~np.isnan(xs)]
        if a.size == 0:
            continue
        w = a.size / len(test)
        err += w * (abs(a.mean() - b.mean()) / (hi - lo) if b.size else 1.0)
        wsum += w
    return float(err / wsum)


# --------------------------------------------------------------------------- peers on mbi 2.0
def _cdp_rho(eps: float, delta: float) -> float:
    """Largest rho with rho + 2 sqrt(rho ln(1/delta)) <= eps (the conversion both AIM and MST use)."""
    L = math.log(1.0 / delta)
    return (math.sqrt(L + eps) - math.sqrt(L)) ** 2


def _exp_mech(rng: np.random.Generator, q: np.ndarray, eps: float, sens: float) -> int:
    s = 0.5 * eps / sens * np.asarray(q, dtype=float)
    p = np.exp(s - s.max())
    return int(rng.choice(q.size, p=p / p.sum()))


def _mbi():
    warnings.filterwarnings("ignore", module="mbi")
    warnings.filterwarnings("ignore", message=".*JAX.*")
    import jax

    jax.config.update("jax_enable_compilation_cache", False)
    import mbi

    return mbi


def _discretise(train: pd.DataFrame, table) -> tuple[dict, list, list]:
    grids = [bt.make_grid(s, bt.PEER_BINS) for s in table.columns]
    names = [f"c{i}" for i in range(len(grids))]
    codes = {c: bt.to_codes(train, g) for c, g in zip(names, grids)}
    return codes, names, grids


def _undiscretise(data: dict, names: list, grids: list, rng: np.random.Generator) -> pd.DataFrame:
    return pd.DataFrame({g.spec.name: bt.from_codes(np.asarray(data[c]), g, rng) for c, g in zip(names, grids)})


def run_aim(train, table, eps: float, n: int, seed, *, max_model_size: float, iters: int,
            final_iters: int) -> tuple[pd.DataFrame, dict]:
    """AIM (degree-2 workload) on mbi 2.0's mirror descent; see the module docstring."""
    mbi = _mbi()
    from mbi.junction_tree import hypothetical_model_size

    rng = np.random.default_rng(seed)
    np.random.seed(int(rng.integers(2**31)))          # mbi's synthetic_data draws from np.random
    codes, names, grids = _discretise(train, table)
    domain = mbi.Domain(names, [g.size for g in grids])
    data = mbi.Dataset(codes, domain)
    rho = _cdp_rho(eps, bt.DELTA)
    d = len(names)
    workload = [cl for cl in itertools.combinations(names, 2) if domain.size(cl) <= 10_000]
    closure = sorted({sub for cl in workload for r in range(1, len(cl) + 1)
                      for sub in itertools.combinations(cl, r)}, key=len)
    cand = {cl: float(sum(len(set(cl) & set(w)) for w in workload)) for cl in closure}
    answers = {cl: np.asarray(data.project(cl).datavector()) for cl in cand}
    rounds = 16 * d
    sigma = math.sqrt(rounds / (2 * 0.9 * rho))
    epsilon = math.sqrt(8 * 0.1 * rho / rounds)
    meas = []
    rho_used = 0.0
    for c in names:
        x = answers[(c,)]
        meas.append(mbi.LinearMeasurement(x + rng.normal(0, sigma, x.size), (c,), sigma))
        rho_used += 0.5 / sigma ** 2
    est = mbi.estimation.MirrorDescent()
    model = est.estimate(domain, meas, iters=iters)
    selected = []
    terminate = False
    while not terminate:
        if rho - rho_used < 2 * (0.5 / sigma ** 2 + 0.125 * epsilon ** 2):
            remaining = rho - rho_used
            sigma = math.sqrt(1 / (2 * 0.9 * remaining))
            epsilon = math.sqrt(8 * 0.1 * remaining)
            terminate = True
        rho_used += 0.125 * epsilon ** 2 + 0.5 / sigma ** 2
        size_limit = max_model_size * rho_used / rho
        cliques = [m.clique for m in meas]
        free = {sub for cl in cliques for r in range(1, len(cl) + 1) for sub in itertools.combinations(cl, r)}
        small = [cl for cl in cand if cl in free or hypothetical_model_size(domain, [*cliques, cl]) <= size_limit]
        errs = np.array([cand[cl] * (np.abs(answers[cl] - np.asarray(model.project(cl).datavector())).sum()
                                     - math.sqrt(2 / math.pi) * sigma * domain.size(cl)) for cl in small])
        cl = small[_exp_mech(rng, errs, epsilon, max(cand[c] for c in small))]
        x = answers[cl]
        meas.append(mbi.LinearMeasurement(x + rng.normal(0, sigma, x.size), cl, sigma))
        z = np.asarray(model.project(cl).datavector())
        model = est.estimate(domain, meas, iters=iters, warm_start=model)
        w = np.asarray(model.project(cl).datavector())
        selected.append(list(cl))
        if np.abs(w - z).sum() <= sigma * math.sqrt(2 / math.pi) * domain.size(cl):
            sigma /= 2
            epsilon *= 2
    model = est.estimate(domain, meas, iters=final_iters, warm_start=model)
    syn = model.synthetic_data(rows=n, method="sample")
    return _undiscretise(syn.to_dict(), names, grids, rng), {"rounds": len(selected) + d, "selected": selected}


def run_mst(train, table, eps: float, n: int, seed, *, iters: int) -> tuple[pd.DataFrame, dict]:
    """MST on mbi 2.0's mirror descent; see the module docstring."""
    mbi = _mbi()
    import networkx as nx

    rng = np.random.default_rng(seed)
    np.random.seed(int(rng.integers(2**31)))
    codes, names, grids = _discretise(train, table)
    domain = mbi.Domain(names, [g.size for g in grids])
    data = mbi.Dataset(codes, domain)
    rho = _cdp_rho(eps, bt.DELTA)
    sigma = math.sqrt(3 / (2 * rho))
    # 1-way measurements, then the domain compressed to the cells measured above 3 sigma (the rest merged)
    ones = {c: np.asarray(data.project((c,)).datavector()) + rng.normal(0, sigma, domain[c]) for c in names}
    mapping = {}
    for c in names:
        sup = ones[c] >= 3 * sigma
        if sup.sum() < sup.size:
            m = np.full(sup.size, int(sup.sum()), dtype=np.int64)
            m[sup] = np.arange(int(sup.sum()))
            mapping[c] = m
    cdata = data.compress(mapping) if mapping else data
    cdom = cdata.domain
    log1 = [mbi.LinearMeasurement(ones[c], (c,), sigma).compress(mapping, domain) for c in names]
    # selection: a private maximum spanning tree on the L1 errors of 2-way marginals under the 1-way model
    est = mbi.estimation.MirrorDescent()
    model = est.estimate(cdom, log1, iters=1000)
    pairs = list(itertools.combinations(names, 2))
    weights = {e: float(np.abs(np.asarray(cdata.project(e).datavector())
                               - np.asarray(model.project(e).datavector())).sum()) for e in pairs}
    g = nx.Graph()
    g.add_nodes_from(names)
    eps_sel = math.sqrt(8 * (rho / 3) / (len(names) - 1))
    for _ in range(len(names) - 1):
        cands = [e for e in pairs if not nx.has_path(g, *e)]
        e = cands[_exp_mech(rng, np.array([weights[c] for c in cands]), eps_sel, 1.0)]
        g.add_edge(*e)
    log2 = []
    for e in g.edges:
        e = tuple(sorted(e, key=names.index))
        x = np.asarray(cdata.project(e).datavector())
        log2.append(mbi.LinearMeasurement(x + rng.normal(0, sigma, x.size), e, sigma))
    model = est.estimate(cdom, log1 + log2, iters=iters)
    syn = model.synthetic_data(rows=n, method="sample")
    out = {}
    for c in names:
        v = np.asarray(syn.to_dict()[c])
        if c in mapping:                          # a merged cell: one of its original cells, uniformly
            m = mapping[c]
            keep = np.flatnonzero(m < m.max()) if (m == m.max()).sum() > 1 else np.arange(m.size)
            inv = np.empty(int(m.max()) + 1, dtype=np.int64)
            inv[m[keep]] = keep
            rest = np.flatnonzero(m == m.max()) if (m == m.max()).sum() > 1 else None
            vals = inv[np.minimum(v, inv.size - 1)]
            if rest is not None:
                merged = v == m.max()
                vals[merged] = rng.choice(rest, int(merged.sum()))
            out[c] = vals
        else:
            out[c] = v
    return _undiscretise(out, names, grids, rng), {"tree": [list(e) for e in g.edges]}


def run_snsynth_mst(train, table, eps: float, n: int, seed) -> tuple[pd.DataFrame, dict]:
    """smartnoise-synth 1.0.8's MST (mbi 1.1.0) in a worker subprocess (``--worker``)."""
    codes, names, grids = _discretise(train, table)
    job = {"codes": codes, "names": names, "sizes": [g.size for g in grids], "eps": float(eps),
           "delta": bt.DELTA, "n": int(n), "seed": int(np.random.default_rng(seed).integers(2**31))}
    env = dict(os.environ, PYTHONPATH=os.pathsep.join([str(SNSYNTH_DIR), os.environ.get("PYTHONPATH", "")]))
    res = subprocess.run([sys.executable, "-W", "ignore", __file__, "--worker"], input=pickle.dumps(job),
                         capture_output=True, env=env, check=False)
    if res.returncode != 0:
        raise RuntimeError(res.stderr.decode()[-2000:])
    out = pickle.loads(res.stdout)
    return _undiscretise(out["data"], names, grids, np.random.default_rng(seed)), {"fit_s_worker": out["fit_s"]}


def _worker() -> int:
    job = pickle.loads(sys.stdin.buffer.read())
    warnings.filterwarnings("ignore")
    import jax

    jax.config.update("jax_enable_compilation_cache", False)
    from mbi import Dataset, Domain
    from snsynth.mst import MSTSynthesizer

    np.random.seed(job["seed"])
    domain = Domain(job["names"], job["sizes"])
    data = Dataset(pd.DataFrame(job["codes"]), domain)
    t0 = time.perf_counter()
    with contextlib.redirect_stdout(io.StringIO()):
        synth = MSTSynthesizer(epsilon=job["eps"], delta=job["delta"])
        synth.MST(data, job["eps"], job["delta"])
        out = synth.synthesizer.synthetic_data(rows=job["n"], method="sample")
        out = synth.undo_compress_fn(out)
    fit_s = time.perf_counter() - t0
    sys.stdout.buffer.write(pickle.dumps({"data": {c: out.df[c].to_numpy() for c in job["names"]}, "fit_s": fit_s}))
    return 0


# --------------------------------------------------------------------------- driver
def run_adaptive(train, table, eps: float, n: int, seed) -> tuple[pd.DataFrame, dict]:
    from dpkme.release.adaptive import adaptive_release

    rel = adaptive_release(train, schema=table.schema(levels=True), epsilon=eps, delta=bt.DELTA,
                           random_state=np.random.default_rng([*seed, 13]))
    rows = rel.sample(n, rng=np.random.default_rng([*seed, 14]))
    return rows, {"rounds": len(rel.rounds), "landmarks": list(rel._fit.domain.landmarks),
                  "synthetic_rows": rel._fit.n_rows}


KEYS = ("mmd", "tv1_num", "tv1_cat", "tv2", "tv3", "corr_err", "group_mean_err", "tstr", "floor", "fit_s", "cpu_s")


def summarise(out: Path, meta: dict | None = None) -> str:
    runs = [json.loads(line) for line in out.with_suffix(".jsonl").read_text().splitlines() if line.strip()]
    tables = list(dict.fromkeys(r["table"] for r in runs))
    lines = ["| table | ε | method | n | " + " | ".join(KEYS) + " |", "|---|---|---|---|" + "---|" * len(KEYS)]
    for name in tables:
        for eps in sorted({r["epsilon"] for r in runs if r["table"] == name}):
            for m in METHODS:
                rs = [r for r in runs if r["table"] == name and r["epsilon"] == eps and r["method"] == m]
                if not rs:
                    continue
                ok = [r for r in rs if not r.get("error")]
                cells = []
                for k in KEYS:
                    v = [r[k] for r in ok if r.get(k) is not None and np.isfinite(r[k])]
                    cells.append(f"{statistics.mean(v):.3f}" if v else "—")
                err = f" ({len(rs) - len(ok)} failed)" if len(ok) < len(rs) else ""
                lines.append(f"| {name} | {eps:g} | {m}{err} | {len(ok)} | " + " | ".join(cells) + " |")
    meta = meta or {}
    head = [f"Written by `benchmarks/bench_adaptive_peers.py` from `{out.with_suffix('.jsonl').name}` "
            f"({len(runs)} cells). Command: `{meta.get('command', '?')}`. CPU: {meta.get('cpu', '?')}. "
            f"AIM: {meta.get('aim')}; MST iterations: {meta.get('mst_iters')}. Means over the n repetitions; "
            "fit_s: wall seconds of fit and sampling (cpu_s: this process's CPU seconds; smartnoise's MST runs "
            "in a worker process, so its cpu_s is not its cost).", ""]
    text = "\n".join(head + lines) + "\n"
    out.with_suffix(".json").write_text(json.dumps({"meta": meta, "runs": runs}, indent=1, default=float))
    return text


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--worker", action="store_true", help=argparse.SUPPRESS)
    ap.add_argument("--tables", default="cars,anes96,fair,randhie,diamonds")
    ap.add_argument("--epsilons", default="0.3,1,3")
    ap.add_argument("--reps", type=int, default=3)
    ap.add_argument("--reps-big", type=int, default=1, help=f"repetitions of tables of >= {BIG_ROWS} rows")
    ap.add_argument("--methods", default=",".join(METHODS))
    ap.add_argument("--seed", type=int, default=2024)
    ap.add_argument("--aim-max-model-size", type=float, default=80.0)
    ap.add_argument("--aim-iters", type=int, default=1000)
    ap.add_argument("--aim-final-iters", type=int, default=2500)
    ap.add_argument("--mst-iters", type=int, default=5000)
    ap.add_argument("--out", default=str(ROOT / "benchmarks" / "results" / "adaptive_peers"))
    ap.add_argument("--append", action="store_true", help="add to OUT.jsonl instead of starting it anew")
    ap.add_argument("--summarise", action="store_true", help="only write OUT.md / OUT.json from OUT.jsonl")
    args = ap.parse_args(argv)
    if args.worker:
        return _worker()
    out = Path(args.out)
    meta = {"command": " ".join(sys.argv), "cpu": bt.cpu_info()[0], "seed": args.seed,
            "versions": bt._versions(), "aim": {"max_model_size_mb": args.aim_max_model_size,
                                                "iters": args.aim_iters, "final_iters": args.aim_final_iters},
            "mst_iters": args.mst_iters}
    if args.summarise:
        text = summarise(out, meta)
        out.with_suffix(".md").write_text(text)
        print(text)
        return 0
    if not args.append:
        out.with_suffix(".jsonl").write_text("")
    methods = [m for m in args.methods.split(",") if m]
    bad = [m for m in methods if m not in METHODS]
    if bad:
        raise SystemExit(f"unknown methods {bad}; choose from {METHODS}")
    print(f"CPU {meta['cpu']}; load {os.getloadavg()}; {meta['versions']}", flush=True)
    names = [t for t in args.tables.split(",") if t]
    epsilons = [float(e) for e in args.epsilons.split(",") if e]
    all_names = list(TABLES)
    for name in names:
        table = TABLES[name]
        ti = all_names.index(name)
        df = table.load()
        metric_schema = table.schema()
        grids = [bt.make_grid(s, bt.GRID_BINS) for s in table.columns]
        n_test = len(df) // 5
        reps = args.reps_big if len(df) >= BIG_ROWS else args.reps
        for rep in range(reps):
            split = np.random.default_rng([args.seed, ti, rep]).permutation(len(df))
            test = df.iloc[split[:n_test]].reset_index(drop=True)
            train = df.iloc[split[n_test:]].reset_index(drop=True)
            test_z = metric_schema.encode(test)
            spec_t = next(s for s in table.columns if s.name == table.target)
            floor = float(np.bincount(bt.level_index(test[table.target], spec_t)).max() / len(test))
            for ei, eps in enumerate(epsilons):
                for mi, m in enumerate(methods):
                    seed = [args.seed, ti, rep, ei, mi]
                    t0, c0 = time.perf_counter(), time.process_time()
                    load0 = os.getloadavg()[0]
                    run = {"table": name, "rep": rep, "epsilon": eps, "method": m, "n_private": len(train),
                           "floor": floor, "load1": load0}
                    try:
                        if m == "adaptive":
                            rows, info = run_adaptive(train, table, eps, len(train), seed)
                        elif m == "aim":
                            rows, info = run_aim(train, table, eps, len(train), seed,
                                                 max_model_size=args.aim_max_model_size, iters=args.aim_iters,
                                                 final_iters=args.aim_final_iters)
                        elif m == "mst":
                            rows, info = run_mst(train, table, eps, len(train), seed, iters=args.mst_iters)
                        else:
                            rows, info = run_snsynth_mst(train, table, eps, len(train), seed)
                        run["fit_s"] = time.perf_counter() - t0          # fit and sampling of len(train) rows
                        run["cpu_s"] = time.process_time() - c0          # this process only (not the worker)
                        run["info"] = info
                        res = bt.evaluate(rows, test, test_z, table, metric_schema, grids)
                        res.pop("tv1_by_column", None)
                        run.update(res)
                        run["tv3"] = tv3(test, rows, grids)
                        run["group_mean_err"] = group_mean_err(test, rows, table)
                    except Exception as exc:              # a failed cell is recorded, the run goes on
                        run["error"] = f"{type(exc).__name__}: {exc}"[:500]
                    with out.with_suffix(".jsonl").open("a") as fh:
                        fh.write(json.dumps(run, default=float) + "\n")
                    if run.get("error"):
                        print(f"[{name} rep {rep} eps {eps:g}] {m}: FAILED {run['error']}", flush=True)
                    else:
                        print(f"[{name} rep {rep} eps {eps:g}] {m}: " + " ".join(
                            f"{k}={run[k]:.4g}" for k in KEYS if k in run), flush=True)
    text = summarise(out, meta)
    out.with_suffix(".md").write_text(text)
    print(text)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
