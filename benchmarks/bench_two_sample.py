"""Benchmark of the private two-sample tests (issue #6 targets).

Usage::

    python benchmarks/bench_two_sample.py [--repetitions 400] [--timing-repeats 7] [--sections timing,typeI,power,split]

Measures

1. **timing**: one private test at n = 10 000, d = 50, J = 5 (TCMC with the default 2000-draw
   parametric bootstrap; also NTE, release test, non-private), median of ``--timing-repeats`` runs
   on fixed data (data generation excluded); and one 200-repetition power-curve point (GMD,
   n = 10 000, d = 100, epsilon = 1, TCMC), median of ``--curve-repeats`` runs (data generation
   included, as in the lab).
2. **typeI**: type-I error at alpha = 0.05 on SG (d = 50, J = 5 ME features) at n = 5000,
   epsilon in {1, 2.5}, delta = 1e-5, ``--repetitions`` repetitions, for every lab method; the target
   band for the private nulls is [0.02, 0.08].
3. **power**: power on GMD (d = 100) and GVD (d = 50) at n = 5000 along epsilon in {0.5, 1, 2.5, 5}
   and on GMD at epsilon = 1 along n in {1000, 2000, 5000, 10000}, versus the non-private test
   and the paper's TCMC (ME and SCF features, ``--features``).
4. **split** (not in the default run): type-I error and power of ``tcmc`` against the budget share
   ``mean_fraction`` (SG and GMD, n = 5000, epsilon = 1, ME features).

Writes ``benchmarks/results/two_sample.json`` and ``benchmarks/results/two_sample.md``.
"""

from __future__ import annotations

import argparse
import json
import platform
import statistics
import sys
import time
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from dpkme.two_sample import make_features, nonprivate_test, nte_test, release_test, tcmc_test  # noqa: E402
from dpkme.two_sample.lab import LAB_METHODS, make_case, monte_carlo_band, rejection_curve  # noqa: E402

OUT = ROOT / "benchmarks" / "results"
PRIVATE_NULL_METHODS = ("tcmc", "tcmc-wchi2", "nte", "paper")


def _median_time(fn, repeats: int) -> tuple[float, list[float]]:
    times = []
    for _ in range(repeats):
        t = time.perf_counter()
        fn()
        times.append(time.perf_counter() - t)
    return statistics.median(times), times


def timing_section(repeats: int, curve_repeats: int, log) -> dict:
    case = make_case("SG", 10_000, dim=50, n_public=500, random_state=0)
    feats = make_features("me", public_sample=case.public, n_features=5, random_state=0)
    X, Y = case.X, case.Y
    kw = dict(features=feats, epsilon=1.0, delta=1e-5)
    rows = {}
    for name, fn in [
        ("tcmc (bootstrap, 2000 draws)", lambda: tcmc_test(X, Y, random_state=1, **kw)),
        ("tcmc (weighted chi2)", lambda: tcmc_test(X, Y, random_state=1, null="weighted-chi2", **kw)),
        ("nte (bootstrap)", lambda: nte_test(X, Y, random_state=1, **kw)),
        ("release test (bootstrap)", lambda: release_test(X, Y, random_state=1, **kw)),
        ("non-private", lambda: nonprivate_test(X, Y, features=feats)),
    ]:
        fn()  # warm-up
        med, all_t = _median_time(fn, repeats)
        rows[name] = {"median_s": med, "runs_s": all_t}
        log(f"  {name}: {med:.3f} s (median of {repeats})")
    curve_times = []
    for r in range(curve_repeats):
        t = time.perf_counter()
        res = rejection_curve("GMD", values=[1.0], methods=["tcmc"], n=10_000, repetitions=200, random_state=100 + r)
        curve_times.append(time.perf_counter() - t)
        log(f"  200-repetition curve point (GMD, n=10000, d=100, eps=1, tcmc): {curve_times[-1]:.1f} s, "
            f"power {res.rates()['tcmc'][0]:.3f}")
    return {"single_test": rows, "curve_point_s": {"median_s": statistics.median(curve_times), "runs_s": curve_times},
            "setting": {"n": 10_000, "d": 50, "J": 5, "epsilon": 1.0, "delta": 1e-5,
                        "curve": {"case": "GMD", "n": 10_000, "d": 100, "repetitions": 200, "method": "tcmc"}}}


def curve(case, vary, values, methods, R, seed, log, **kw) -> dict:
    t = time.perf_counter()
    res = rejection_curve(case, vary=vary, values=values, methods=methods, repetitions=R, random_state=seed, **kw)
    d = res.to_dict()
    d["wall_s"] = time.perf_counter() - t
    rates = res.rates()
    for m in methods:
        log(f"  {case} {m:12s} " + "  ".join(f"{v}: {x:.3f}" for v, x in zip(values, rates[m])))
    return d


def typeI_section(R: int, kinds, log) -> dict:
    methods = ["nonprivate", "tcmc", "tcmc-wchi2", "tcmc-naive", "nte", "paper", "paper-naive"]
    out = {}
    for i, kind in enumerate(kinds):
        log(f" features: {kind}")
        d = curve("SG", "epsilon", [1.0, 2.5], methods, R, 2024 + i, log, n=5000, feature_kind=kind,
                  n_features=_J[kind])
        rates = d["rates"]
        d["target_band"] = [0.02, 0.08]
        d["within_target"] = {m: [0.02 <= x <= 0.08 for x in rates[m]] for m in PRIVATE_NULL_METHODS}
        d["mc_band_exact_level"] = list(monte_carlo_band(0.05, R))
        out[kind] = d
    return out


# ME: J = 5 locations; SCF: 3 frequencies = 6 features
_J = {"me": 5, "scf": 3, "rff": 6}


def power_section(R: int, kinds, log) -> dict:
    methods = ["nonprivate", "tcmc", "nte", "paper"]
    out = {}
    for i, kind in enumerate(kinds):
        log(f" features: {kind}")
        kw = dict(feature_kind=kind, n_features=_J[kind])
        out[kind] = {
            "GMD_eps": curve("GMD", "epsilon", [0.5, 1.0, 2.5, 5.0], methods, R, 3030 + i, log, n=5000, **kw),
            "GVD_eps": curve("GVD", "epsilon", [0.5, 1.0, 2.5, 5.0], methods, R, 4040 + i, log, n=5000, **kw),
            "GMD_n": curve("GMD", "n", [1000, 2000, 5000, 10_000], methods, R, 5050 + i, log, epsilon=1.0, **kw),
        }
    return out


def split_section(R: int, log) -> dict:
    """Budget split: type-I (SG) and power (GMD) of tcmc vs mean_fraction, n = 5000, epsilon = 1, ME."""
    out = {}
    for f in (0.5, 0.6, 0.7, 0.8, 0.9):
        row = {}
        for case, seed in (("SG", 6060), ("GMD", 7070)):
            t = time.perf_counter()
            res = rejection_curve(case, values=[1.0], methods=["tcmc"], n=5000, repetitions=R, random_state=seed,
                                  mean_fraction=f)
            row[case] = {"rate": res.rates()["tcmc"][0], "interval": list(res.intervals()["tcmc"][0]),
                         "repetitions": res.repetitions[0], "wall_s": time.perf_counter() - t}
        log(f"  mean_fraction {f}: type-I {row['SG']['rate']:.3f}, power {row['GMD']['rate']:.3f}")
        out[str(f)] = row
    return out


def _table(d: dict) -> list[str]:
    vals = d["values"]
    head = "| method | " + " | ".join(f"{d['vary']} = {v}" for v in vals) + " |"
    lines = [head, "|---" * (len(vals) + 1) + "|"]
    for m in d["methods"]:
        cells = [f"{r:.3f} [{lo:.3f}, {hi:.3f}]" for r, (lo, hi) in zip(d["rates"][m], d["intervals"][m])]
        lines.append(f"| {m} | " + " | ".join(cells) + " |")
    return lines


def write_markdown(res: dict, path: Path) -> None:
    L = ["# Private two-sample tests: benchmark", "",
         f"Machine: {res['machine']}. Commands: "
         + "; ".join(f"{sec}: `{cmd}`" for sec, cmd in sorted(res.get("commands", {}).items())) + ".", "",
         "Rates are rejection frequencies at alpha = 0.05 with 95% Clopper-Pearson intervals; every repetition "
         "draws fresh private samples and a fresh public sample (500 rows per distribution) from which the "
         "feature map is built (ME: J = 5 public rows as locations, Gaussian kernel with the public median "
         "heuristic; SCF: 3 standard-normal frequencies, width = mean public standard deviation x sqrt(d)). "
         "Private tests: joint calibration with 70% of the Gaussian precision on the mean, noise-aware "
         "statistic, 2000-draw parametric bootstrap, privacy unit = one pair. Methods: "
         + "; ".join(f"`{k}` = {v}" for k, v in LAB_METHODS.items()) + ".", ""]
    if "typeI" in res:
        ok = all(all(v) for d in res["typeI"].values() for v in d["within_target"].values())
        L += ["## Summary", "",
              f"- Type-I error of every private null ({', '.join(PRIVATE_NULL_METHODS)}) within [0.02, 0.08] at "
              f"n = 5000, epsilon in {{1, 2.5}}: **{'yes' if ok else 'NO'}**; the chi-square null on the paper's "
              "statistic (`paper-naive`) rejects up to 100% of the time under H0.",
              "- Power: `tcmc` (joint calibration, noise-aware statistic) beats the paper's TCMC at every epsilon; "
              "`nte` is higher still (each holder's mean has sensitivity B/n instead of 2B/n for a replaced pair); "
              "SCF features lose far less power to privacy than ME features in d = 50-100, because ME kernel "
              "values concentrate and carry little variance relative to their sensitivity bound.", ""]
    if "timing" in res:
        t = res["timing"]
        L += ["## Timing", "", "| call | median (s) |", "|---|---|"]
        L += [f"| {k} (n = 10 000, d = 50, J = 5) | {v['median_s']:.3f} |" for k, v in t["single_test"].items()]
        L += [f"| 200-repetition power-curve point (GMD, n = 10 000, d = 100, tcmc) | {t['curve_point_s']['median_s']:.1f} |",
              "", "Targets: one private test < 0.5 s; one 200-repetition curve point < 60 s.", ""]
    names = {"me": "ME features (J = 5)", "scf": "SCF features (3 frequencies, J = 6)", "rff": "RFF (J = 6)"}
    for kind, d in res.get("typeI", {}).items():
        R = d["repetitions"][0]
        L += [f"## Type-I error, {names[kind]} (SG, d = 50, n = 5000, delta = 1e-5)", "",
              f"{R} repetitions per value; Monte-Carlo band of an exact level-0.05 test: "
              f"[{d['mc_band_exact_level'][0]:.3f}, {d['mc_band_exact_level'][1]:.3f}]; target for the private "
              "nulls: [0.02, 0.08].", ""]
        L += [*_table(d), ""]
    if "split" in res:
        L += ["## Budget split (tcmc, ME, n = 5000, epsilon = 1)", "",
              "Share f of the Gaussian precision spent on the mean (joint calibration). Every row uses the same "
              "data sets and public samples (common random numbers), so the rows' Monte-Carlo errors are "
              "correlated.", "",
              "| mean_fraction | type-I (SG) | power (GMD) |", "|---|---|---|"]
        for f, row in res["split"].items():
            L.append(f"| {f} | {row['SG']['rate']:.3f} [{row['SG']['interval'][0]:.3f}, {row['SG']['interval'][1]:.3f}] "
                     f"| {row['GMD']['rate']:.3f} [{row['GMD']['interval'][0]:.3f}, {row['GMD']['interval'][1]:.3f}] |")
        L.append("")
    for kind, p in res.get("power", {}).items():
        for key, title in (("GMD_eps", "Power on GMD (d = 100, n = 5000) vs epsilon"),
                           ("GVD_eps", "Power on GVD (d = 50, n = 5000) vs epsilon"),
                           ("GMD_n", "Power on GMD (d = 100, epsilon = 1) vs n")):
            L += [f"## {title}, {names[kind]}", "", f"{p[key]['repetitions'][0]} repetitions per value.", ""]
            L += [*_table(p[key]), ""]
    path.write_text("\n".join(L) + "\n")


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--repetitions", type=int, default=400, help="repetitions for the type-I study (>= 200)")
    ap.add_argument("--power-repetitions", type=int, default=200)
    ap.add_argument("--timing-repeats", type=int, default=7)
    ap.add_argument("--curve-repeats", type=int, default=3)
    ap.add_argument("--sections", default="timing,typeI,power",
                    help="comma-separated; 'md' only re-renders the markdown from the saved JSON")
    ap.add_argument("--features", default="me,scf", help="feature kinds for the type-I and power studies")
    ap.add_argument("--out", type=Path, default=OUT)
    args = ap.parse_args(argv)
    sections = set(args.sections.split(","))
    args.out.mkdir(parents=True, exist_ok=True)
    path_json = args.out / "two_sample.json"
    res = json.loads(path_json.read_text()) if path_json.exists() else {}
    ran = sections & {"timing", "typeI", "power", "split"}
    if ran:
        cmd = "python benchmarks/bench_two_sample.py " + " ".join(argv if argv is not None else sys.argv[1:])
        res["machine"] = f"{platform.processor() or platform.machine()}, {platform.python_version()}, numpy {np.__version__}"
        res.setdefault("commands", {}).update({sec: cmd for sec in ran})

    def log(msg):
        print(msg, flush=True)

    if "timing" in sections:
        log("timing")
        res["timing"] = timing_section(args.timing_repeats, args.curve_repeats, log)
    if "typeI" in sections:
        log("type-I error")
        res["typeI"] = typeI_section(args.repetitions, args.features.split(","), log)
    if "power" in sections:
        log("power")
        res["power"] = power_section(args.power_repetitions, args.features.split(","), log)
    if "split" in sections:
        log("budget split")
        res["split"] = split_section(args.power_repetitions, log)
    path_json.write_text(json.dumps(res, indent=1))
    write_markdown(res, args.out / "two_sample.md")
    log(f"wrote {path_json} and {args.out / 'two_sample.md'}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
