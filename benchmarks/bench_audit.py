"""Empirical privacy audits of every dpkme mechanism (issue #8), their power, and the size guard.

Usage::

    python benchmarks/bench_audit.py [--runs 20000] [--alpha 0.05] [--repetitions 500]
                                     [--sections audits,power,power-curve,cost] [--replicates 4000]
                                     [--markdown-only] [--readme]

Sections

1. **audits** -- the audit table of docs/audits.md: every entry of :data:`dpkme.audit.EXHIBITS`
   (correct mechanisms and deliberately mis-calibrated variants) audited with
   ``--runs`` runs per dataset at confidence ``1 - --alpha``: claimed ε, the
   audited lower bound, the exact ε of the audited pair, and the verdict.
2. **power** -- false-failure probabilities of the tests in
   ``tests/audit/test_mechanisms.py`` (alpha = 1e-3, their run counts): the
   scalar of each audit has a known exact distribution (Gaussian with the
   pair's μ, or the Laplace log-likelihood ratio), so ``--repetitions``
   independent audits are simulated from it directly. Reports how often a
   mis-calibrated variant is *missed* (and a 95 % Clopper-Pearson upper bound),
   and how often a correct one is falsely flagged (at most alpha by validity).
3. **power-curve** -- the audit's power against a factor-√2 sensitivity bug
   (noise calibrated to Δ/√2) at the app's default setting (Gaussian mechanism,
   ε = 2, δ = 10⁻², 95 % confidence) for 1 000 to 20 000 runs, and the runs
   needed for 90 % and 95 % power: :func:`dpkme.audit.audit_power` and
   :func:`dpkme.audit.runs_for_power` with ``--replicates`` simulated selection
   splits (seed 0). Also the false-refutation probability of the correct
   mechanism (factor 1). Not in the default ``--sections``.
4. **cost** -- :func:`dpkme.cost.estimate_cost` against measured wall-clock
   times for every mechanism at a few sizes (the ratio measured / predicted).

Writes ``benchmarks/results/audit.json`` and ``benchmarks/results/audit.md``
(``--markdown-only`` rebuilds the markdown from the JSON); ``--readme`` also writes the audit table
into the documentation's audit page, docs/audits.md (between its ``audit-table`` markers; the page was part of
README.md until 0.5.0), and the power table (between its ``audit-power`` markers).
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import sys
import time
from dataclasses import replace
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from dpkme.audit import (  # noqa: E402
    EXHIBITS,
    AuditSettings,
    audit_power,
    audit_scores,
    clopper_pearson_upper,
    run_audit,
    runs_for_power,
)
from dpkme.cost import estimate_cost  # noqa: E402

OUT = ROOT / "benchmarks" / "results"

#: The detection tests of tests/audit/test_mechanisms.py: (mechanism, variant, runs, selection); alpha = 1e-3.
TESTED_VIOLATIONS = [
    ("gaussian", "half-noise", 6000, "split"),
    ("laplace", "l1-ignores-dimension", 4000, "split"),
    ("algorithm2", "cosine-features", 20000, "bonferroni"),
    ("two-sample", "perturbed-statistic", 1000, "split"),
]
#: Correct mechanisms whose scalar is simulated for the validity check (pair = claim: the hardest case).
TESTED_CORRECT = [("gaussian", "correct", 3000, "split"), ("laplace", "correct", 3000, "split"),
                  ("algorithm2", "correct", 2000, "split"), ("gaussian", "correct", 3000, "bonferroni")]


def _log(msg: str) -> None:
    print(msg, flush=True)


# --------------------------------------------------------------------------- 1. audits
def audits_section(runs: int, alpha: float) -> list[dict]:
    rows = []
    for mech, variant, claim in EXHIBITS:
        t0 = time.perf_counter()
        res = run_audit(mech, variant=variant, settings=replace(claim, runs=runs, alpha=alpha, random_state=0))
        row = res.summary()
        row["seconds"] = time.perf_counter() - t0
        row["expected"] = "pass" if variant == "correct" else "violation"
        row["as_expected"] = (row["passed"] if variant == "correct" else not row["passed"])
        rows.append(row)
        _log(f"  {mech:12s} {variant:22s} claimed {res.claimed_epsilon:g} (delta {res.claimed_delta:g}) "
             f"lb {res.epsilon_lower_bound:.3f} pair {res.pair_epsilon} [{row['seconds']:.1f} s] "
             f"{'OK' if row['as_expected'] else 'UNEXPECTED'}")
    return rows


# --------------------------------------------------------------------------- 2. power
def _simulate(mech: str, variant: str, runs: int, repetitions: int, seed: int, selection: str = "split") -> dict:
    probe = run_audit(mech, variant=variant, settings=AuditSettings(runs=10, alpha=0.5, random_state=0))
    eps, delta = probe.claimed_epsilon, probe.claimed_delta
    rng = np.random.default_rng(seed)
    lbs = np.empty(repetitions)
    if mech == "laplace":
        J = probe.params["n_features"]
        a = probe.params["pair_l1_difference"] / probe.params["scale"] / J  # equal shifts (worst pair)
        for r in range(repetitions):
            yd = rng.laplace(size=(runs, J)) + a
            yp = rng.laplace(size=(runs, J))
            llr = lambda y: np.sum(np.abs(y) - np.abs(y - a), axis=1)  # noqa: E731
            lbs[r] = audit_scores(llr(yd), llr(yp), epsilon=eps, delta=0.0, alpha=1e-3).epsilon_lower_bound
        model = f"Laplace LLR, {J} coordinates shifted by {a:.3f} scales"
    else:
        mu = probe.params["mu_pair"]
        # the audits' fixed Bonferroni grid (_default_thresholds), in units of the scalar's standard deviation
        grid = np.linspace(min(mu, 0.0) - 5.0, max(mu, 0.0) + 5.0, 41) if selection == "bonferroni" else None
        for r in range(repetitions):
            lbs[r] = audit_scores(rng.standard_normal(runs) + mu, rng.standard_normal(runs), epsilon=eps,
                                  delta=delta, alpha=1e-3, selection=selection, thresholds=grid).epsilon_lower_bound
        model = f"Gaussian scalar, mu = {mu:.4g}"
    detected = lbs > eps
    k = int(detected.sum()) if variant != "correct" else int((~detected).sum())
    fails = repetitions - k
    return {"mechanism": mech, "variant": variant, "runs": runs, "selection": selection, "alpha": 1e-3,
            "claimed_epsilon": eps,
            "claimed_delta": delta, "repetitions": repetitions, "model": model,
            "false_failures": fails, "false_failure_rate": fails / repetitions,
            "false_failure_upper95": float(clopper_pearson_upper(fails, repetitions, 0.05)),
            "lb_mean": float(lbs.mean()), "lb_q01": float(np.quantile(lbs, 0.01)),
            "lb_q99": float(np.quantile(lbs, 0.99))}


def power_section(repetitions: int) -> list[dict]:
    rows = []
    for i, (mech, variant, runs, selection) in enumerate(TESTED_VIOLATIONS + TESTED_CORRECT):
        t0 = time.perf_counter()
        row = _simulate(mech, variant, runs, repetitions, seed=1000 + i, selection=selection)
        row["seconds"] = time.perf_counter() - t0
        rows.append(row)
        _log(f"  {mech:12s} {variant:22s} {selection:10s} runs {runs:6d}: "
             f"false failures {row['false_failures']}/{repetitions} "
             f"(95% upper {row['false_failure_upper95']:.4f}); lb mean {row['lb_mean']:.3f}, 1% {row['lb_q01']:.3f}, "
             f"99% {row['lb_q99']:.3f} [{row['seconds']:.1f} s]")
    return rows


# --------------------------------------------------------------------------- 3. power curve
#: The app's default live audit (pages/audit.py): Gaussian mechanism, eps = 2, delta = 1e-2, 95 % confidence.
POWER_SETTING = {"mechanism": "gaussian", "epsilon": 2.0, "delta": 1e-2, "alpha": 0.05}
POWER_RUNS = (1000, 2000, 5000, 10000, 20000)
POWER_FACTOR = 2 ** 0.5


def power_curve_section(replicates: int) -> dict:
    t0 = time.perf_counter()
    rows = []
    for n in POWER_RUNS:
        bug = audit_power(n, factor=POWER_FACTOR, replicates=replicates, random_state=0, **POWER_SETTING)
        ok = audit_power(n, factor=1.0, replicates=replicates, random_state=0, **POWER_SETTING)
        rows.append({"runs": n, "power": bug.power, "standard_error": bug.standard_error,
                     "false_refutation": ok.power, "false_refutation_se": ok.standard_error})
        _log(f"  runs {n:6d}: power {bug.power:.4f} (se {bug.standard_error:.4f}); correct mechanism refuted "
             f"{ok.power:.5f} (se {ok.standard_error:.5f})")
    needed = {}
    for target in (0.9, 0.95):
        needed[str(target)] = runs_for_power(target, factor=POWER_FACTOR, replicates=replicates, random_state=0,
                                             **POWER_SETTING)
        _log(f"  runs for power {target:g}: {needed[str(target)]}")
    return {"setting": dict(POWER_SETTING), "factor": POWER_FACTOR, "replicates": replicates,
            "true_epsilon": bug.true_epsilon, "rows": rows, "runs_for_power": needed,
            "seconds": time.perf_counter() - t0}


# --------------------------------------------------------------------------- 4. cost
def _cost_cases():
    from dpkme.clustering import dp_kernel_kmeans
    from dpkme.kernels.kernel import GaussianKernel
    from dpkme.metrics import rkhs_distance
    from dpkme.privacy.bandwidth import lengthscale_grid, private_lengthscale
    from dpkme.release.exponential import exponential_mechanism, grid_candidates
    from dpkme.release.gp import gp_release, grid_axes
    from dpkme.release.random_features import algorithm2
    from dpkme.release.subspace import algorithm1
    from dpkme.two_sample import make_features, tcmc_test

    rng = np.random.default_rng(0)
    k = GaussianKernel(lengthscale=1.0)
    cases = []
    for n, M, D in [(20000, 200, 2), (100000, 1000, 5), (20000, 3000, 2)]:
        X, Z = rng.normal(size=(n, D)), rng.normal(size=(M, D))
        cases.append(("algorithm1", dict(n=n, n_points=M, dim=D),
                      lambda X=X, Z=Z: algorithm1(X, Z, kernel=k, epsilon=1, delta=1e-5, random_state=0)))
    X, Z = rng.normal(size=(5000, 2)), rng.normal(size=(500, 2))
    cases.append(("algorithm1", dict(n=5000, n_points=500, dim=2, weights="simplex"),
                  lambda: algorithm1(X, Z, kernel=k, epsilon=1, delta=1e-5, random_state=0, weights="simplex")))
    for n, J, M, D, preset, solver in [(10000, 1000, 200, 2, "interactive", "pursuit-joint"),
                                       (20000, 2000, 100, 2, "accurate", "pursuit-joint"),
                                       (10000, 1000, 50, 3, "accurate", "preimage"),
                                       (10000, 1000, 50, 3, "accurate", "joint")]:
        Xa = rng.normal(size=(n, D))
        cases.append(("algorithm2", dict(n=n, n_features=J, n_points=M, dim=D, preset=preset, solver=solver),
                      lambda Xa=Xa, J=J, M=M, preset=preset, solver=solver: algorithm2(
                          Xa, kernel=k, epsilon=1, delta=1e-5, n_points=M, n_features=J, preset=preset,
                          solver=solver, random_state=0, q_scale=2.0)))
    for n, ppa, m in [(2000, 6, 4), (10000, 10, 3), (5000, 30, 2)]:
        Xe, G = rng.normal(size=(n, 2)), grid_candidates([-2, -2], [2, 2], ppa)
        cases.append(("exponential", dict(n=n, n_candidates=len(G), m=m, dim=2),
                      lambda Xe=Xe, G=G, m=m: exponential_mechanism(Xe, G, kernel=k, epsilon=1, m=m, random_state=0)))
    for n, shape in [(10000, (60, 60)), (20000, (200, 200))]:
        Xg, g = rng.normal(size=(n, 2)), grid_axes([-3, -3], [3, 3], shape)
        cases.append(("gp", dict(n=n, grid_shape=shape),
                      lambda Xg=Xg, g=g: gp_release(Xg, kernel=k, epsilon=1, delta=1e-5, grid=g, random_state=0)))
    Xq, Q = rng.normal(size=(3000, 2)), rng.normal(size=(1500, 2))
    cases.append(("gp", dict(n=3000, n_query=1500, dim=2),
                  lambda: gp_release(Xq, kernel=k, epsilon=1, delta=1e-5, query_points=Q, random_state=0)))
    for n, kk, J, T, pre in [(10000, 5, 500, 5, "auto"), (50000, 10, 1000, 10, "none"), (20000, 5, 1000, 10, "final")]:
        Xk = rng.normal(size=(n, 2))
        cases.append(("kmeans", dict(n=n, k=kk, n_features=J, n_iter=T, dim=2, preimages=pre),
                      lambda Xk=Xk, kk=kk, J=J, T=T, pre=pre: dp_kernel_kmeans(
                          Xk, k=kk, epsilon=1, delta=1e-5, n_iter=T, kernel=k, n_features=J,
                          bounds=([-3, -3], [3, 3]), preimages=pre, random_state=0)))
    for n, J in [(5000, 5), (20000, 10)]:
        Xt, Yt = rng.normal(size=(n, 2)), rng.normal(size=(n, 2))
        f = make_features("me", locations=rng.normal(size=(J, 2)), lengthscale=1.0)
        cases.append(("two-sample", dict(n=n, n_features=J, dim=2),
                      lambda Xt=Xt, Yt=Yt, f=f: tcmc_test(Xt, Yt, features=f, epsilon=1, delta=1e-5, random_state=0)))
    for n in (1500, 50000):
        Xl = rng.normal(size=(n, 3))
        cases.append(("private-lengthscale", dict(n=n, dim=3),
                      lambda Xl=Xl: private_lengthscale(Xl, grid=lengthscale_grid(0.1, 10), epsilon=1, random_state=0)))
    Xr = rng.normal(size=(10000, 2))
    cases.append(("rkhs-distance", dict(n=10000, n_points=500, dim=2),
                  lambda: rkhs_distance(Xr, Xr[:500], np.full(500, 1 / 500), kernel=k)))
    for mech in ["gaussian", "laplace", "algorithm1", "algorithm2", "exponential", "gp", "kmeans", "two-sample"]:
        cases.append(("audit", dict(audit=mech, runs=1000),
                      lambda mech=mech: run_audit(mech, settings=AuditSettings(runs=1000))))
    return cases


def cost_section() -> list[dict]:
    import warnings

    rows = []
    for name, params, fn in _cost_cases():
        est = estimate_cost(name, **params)
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            t0 = time.perf_counter()
            fn()
            took = time.perf_counter() - t0
        sizes = {k: (list(v) if isinstance(v, tuple) else v) for k, v in params.items()}
        rows.append({"mechanism": name, "params": sizes,
                     "predicted_s": est.seconds, "measured_s": took, "ratio": took / est.seconds,
                     "predicted_bytes": est.nbytes})
        _log(f"  {name:20s} {params!s:80s} predicted {est.seconds:7.3f} s measured {took:7.3f} s "
             f"(x{took / est.seconds:.2f})")
    return rows


# --------------------------------------------------------------------------- output
def _fmt(x, digits=3):
    if x is None:
        return "-"
    if isinstance(x, float):
        return "∞" if x == float("inf") else f"{x:.{digits}g}" if abs(x) >= 100 else f"{x:.{digits}f}"
    return str(x)


def audit_table_lines(a: dict) -> list[str]:
    """The audit table (markdown lines): used in audit.md and, with ``--readme``, in docs/audits.md."""
    out = [f"Each mechanism is run {a['runs']:,} times on each of two worst-case neighbouring datasets "
           f"(seed 0); the lower bound holds with probability ≥ {1 - a['alpha']:g} (one-sided "
           "Clopper-Pearson bounds on both error rates, threshold chosen on 30 % of the runs). "
           "*pair ε* is the exact ε of the audited pair (the best any auditor of the full output could "
           "reach; — when not available in closed form). Mis-calibrated variants must be caught "
           "(lower bound > claimed ε).", "",
           "| mechanism | variant | claimed ε | δ | audited lower bound | pair ε (exact) | runs | verdict |",
           "|---|---|---:|---:|---:|---:|---:|---|"]
    for r in a["rows"]:
        verdict = ("no violation found" if r["passed"] else "**claim refuted**")
        verdict += "" if r["as_expected"] else " (UNEXPECTED)"
        out.append(f"| {r['mechanism']} | {r['variant']} | {r['claimed_epsilon']:g} | {r['claimed_delta']:g} | "
                   f"{r['epsilon_lower_bound']:.2f} | {_fmt(r['pair_epsilon'], 2)} | {r['runs']:,} | {verdict} |")
    out += ["", "Command: `python benchmarks/bench_audit.py --sections audits"
            f" --runs {a['runs']} --alpha {a['alpha']}`; total {sum(r['seconds'] for r in a['rows']):.0f} s.",
            "", "Notes: δ = 0.01 lets a few thousand runs resolve the tails that matter; at δ = 1e-5 the "
            "same runs certify only smaller ε. The exponential mechanism's pair ε is below its claim "
            "because of the factor 2 in ε/(2Δ) (needed for non-monotone utilities); k-means and the "
            "two-sample test release post-processed or conservatively bounded statistics, so their "
            "bounds are looser."]
    return out


def power_curve_lines(p: dict) -> list[str]:
    """The power table (markdown lines): used in audit.md and, with ``--readme``, in docs/audits.md."""
    st = p["setting"]
    conf = 1 - st["alpha"]
    out = ["| runs per dataset | power against a √2 bug | false refutation of the correct mechanism |",
           "|---:|---:|---:|"]
    for r in p["rows"]:
        out.append(f"| {r['runs']:,} | {100 * r['power']:.1f} % (± {100 * r['standard_error']:.2f}) | "
                   f"{100 * r['false_refutation']:.2f} % |")
    need = p["runs_for_power"]
    out += ["", f"{st['mechanism'].capitalize()} mechanism, claimed ε = {st['epsilon']:g}, δ = {st['delta']:g}, "
            f"confidence {conf:g}, noise calibrated to Δ/√2 (the pair's true ε is {p['true_epsilon']:.2f}); "
            f"± one Monte-Carlo standard error ({p['replicates']:,} simulated selection splits, seed 0). "
            f"90 % power needs about {need['0.9']:,} runs, 95 % about {need['0.95']:,}. Command: "
            f"`python benchmarks/bench_audit.py --sections power-curve --replicates {p['replicates']} --readme` "
            f"({p['seconds']:.0f} s)."]
    return out


#: The page that holds the generated tables (the flag keeps its name --readme: the tables were in README.md until 0.5.0)
README = ROOT / "docs" / "audits.md"
README_START, README_END = "<!-- audit-table:start (benchmarks/bench_audit.py --readme) -->", "<!-- audit-table:end -->"
POWER_START = "<!-- audit-power:start (benchmarks/bench_audit.py --sections power-curve --readme) -->"
POWER_END = "<!-- audit-power:end -->"


def _replace_between(text: str, start: str, end: str, body: str, path: Path) -> str:
    i, j = text.find(start), text.find(end)
    if i < 0 or j < i:
        raise SystemExit(f"{path} has no {start} ... {end} section")
    return text[: i + len(start)] + "\n" + body + "\n" + text[j:]


def update_readme(res: dict, path: Path = README) -> None:
    """Replace the audit page's audit table and power table (each between its markers) by those of ``res``."""
    text = path.read_text()
    if "audits" in res:
        text = _replace_between(text, README_START, README_END, "\n".join(audit_table_lines(res["audits"])), path)
    if "power_curve" in res:
        text = _replace_between(text, POWER_START, POWER_END, "\n".join(power_curve_lines(res["power_curve"])),
                                path)
    path.write_text(text)


def markdown(res: dict) -> str:
    m = res["meta"]
    out = ["# Privacy audit benchmark (`benchmarks/bench_audit.py`)", "",
           f"Machine: {m['machine']}, {m['cpus']} CPU(s), Python {m['python']}; load average at the end "
           f"{m['load_end']}. Generated {m['date']}.", ""]
    if "audits" in res:
        out += ["## Audit table", "", *audit_table_lines(res["audits"]), ""]
    if "power" in res:
        p = res["power"]
        out += ["## False-failure probabilities of the CI tests", "",
                f"{p['repetitions']} simulated audits per row from the exact distribution of the scalar, "
                "alpha = 1e-3 and the run counts of `tests/audit/test_mechanisms.py`. For mis-calibrated "
                "variants a *false failure* is a missed violation (lower bound ≤ claimed ε); for correct ones "
                "it is a false alarm (lower bound > claimed ε; at most alpha = 1e-3 by validity).", "",
                "| mechanism | variant | selection | runs | false failures | 95 % upper bound | "
                "lower bound: mean [1 %, 99 %] | claimed ε |",
                "|---|---|---|---:|---:|---:|---|---:|"]
        for r in p["rows"]:
            out.append(f"| {r['mechanism']} | {r['variant']} | {r.get('selection', 'split')} | {r['runs']:,} | "
                       f"{r['false_failures']}/{r['repetitions']} | "
                       f"{r['false_failure_upper95']:.4f} | "
                       f"{r['lb_mean']:.2f} [{r['lb_q01']:.2f}, {r['lb_q99']:.2f}] | "
                       f"{r['claimed_epsilon']:g} |")
        out += [""]
    if "power_curve" in res:
        out += ["## Power against a factor-√2 sensitivity bug", "",
                "Probability that the audit refutes the claim when the noise is calibrated to Δ/√2 instead of Δ "
                "(`dpkme.audit.audit_power`: exact binomial sums over the evaluation runs given the event the "
                "audit picks, the pick simulated with the audit's own rules), and that it falsely refutes the "
                "correct mechanism (at most α by validity).", "", *power_curve_lines(res["power_curve"]), ""]
    if "cost" in res:
        c = res["cost"]
        ratios = [r["ratio"] for r in c["rows"]]
        out += ["## Size guard: predicted vs measured time", "",
                "`dpkme.cost.estimate_cost` with the default cost model against one measured call (data "
                f"generation excluded). measured / predicted ranged from {min(ratios):.2f} to {max(ratios):.2f} "
                f"(median {float(np.median(ratios)):.2f}); the guard aims at a factor of about 3, and errs "
                "on the side of over-predicting on a quiet machine.", "",
                "| mechanism | sizes | predicted (s) | measured (s) | measured / predicted | predicted memory (MiB) |",
                "|---|---|---:|---:|---:|---:|"]
        for r in c["rows"]:
            sizes = ", ".join(f"{k}={v}" for k, v in r["params"].items())
            out.append(f"| {r['mechanism']} | {sizes} | {r['predicted_s']:.3f} | {r['measured_s']:.3f} | "
                       f"{r['ratio']:.2f} | {r['predicted_bytes'] / 2**20:.0f} |")
        out += [""]
    return "\n".join(out) + "\n"


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--runs", type=int, default=20000, help="runs per dataset in the audit table")
    ap.add_argument("--alpha", type=float, default=0.05, help="miss probability of the bounds in the table")
    ap.add_argument("--repetitions", type=int, default=500, help="simulated audits per row of the power study")
    ap.add_argument("--replicates", type=int, default=4000,
                    help="simulated selection splits per point of the power curve")
    ap.add_argument("--sections", default="audits,power,cost",
                    help="comma-separated: audits, power, power-curve, cost")
    ap.add_argument("--out", type=Path, default=OUT)
    ap.add_argument("--markdown-only", action="store_true", help="rebuild audit.md from audit.json")
    ap.add_argument("--readme", action="store_true", help="also write the audit and power tables into docs/audits.md")
    args = ap.parse_args(argv)
    json_path, md_path = args.out / "audit.json", args.out / "audit.md"
    if args.markdown_only:
        res = json.loads(json_path.read_text())
        md_path.write_text(markdown(res))
        if args.readme:
            update_readme(res)
        return 0
    sections = [s.strip() for s in args.sections.split(",") if s.strip()]
    res = json.loads(json_path.read_text()) if json_path.exists() else {}
    if "audits" in sections:
        _log("audits:")
        res["audits"] = {"runs": args.runs, "alpha": args.alpha, "rows": audits_section(args.runs, args.alpha)}
    if "power" in sections:
        _log("power:")
        res["power"] = {"repetitions": args.repetitions, "rows": power_section(args.repetitions)}
    if "power-curve" in sections:
        _log("power curve:")
        res["power_curve"] = power_curve_section(args.replicates)
    if "cost" in sections:
        _log("cost:")
        res["cost"] = {"rows": cost_section()}
    res["meta"] = {"machine": platform.machine(), "cpus": os.cpu_count(), "python": platform.python_version(),
                   "load_end": [round(x, 2) for x in os.getloadavg()], "date": time.strftime("%Y-%m-%d"),
                   "commands": {"audits": f"python benchmarks/bench_audit.py --sections audits --runs {args.runs}",
                                "power": f"python benchmarks/bench_audit.py --sections power --repetitions "
                                         f"{args.repetitions}",
                                "power-curve": "python benchmarks/bench_audit.py --sections power-curve "
                                               f"--replicates {args.replicates}",
                                "cost": "python benchmarks/bench_audit.py --sections cost"}}
    args.out.mkdir(parents=True, exist_ok=True)
    json_path.write_text(json.dumps(res, indent=2, default=float))
    md_path.write_text(markdown(res))
    if args.readme:
        update_readme(res)
    _log(f"wrote {json_path} and {md_path}" + (" and the tables of docs/audits.md" if args.readme else ""))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
