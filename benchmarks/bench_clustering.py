"""Benchmark of DP kernel k-means and the cluster-wise release (issue #7).

Usage::

    python benchmarks/bench_clustering.py [--repeats 5] [--seeds 3] [--quick]

1. **Timing** (target: under 10 s): ``dp_kernel_kmeans`` with k = 10, T = 10,
   J = 1000 on the paper's mixture with N = 100 000, D = 5 (generated with
   ``paper_mixture(..., legacy=True)``, i.e. the paper's data file), for the
   three pre-image modes; median (and min/max) of ``--repeats`` runs in this
   process, each with fresh noise. Also one Lloyd pass and the plan calibration.
2. **Accounting**: the paper's eq. (3) next to the true epsilon (moments,
   RDP, PLD) under both neighbouring relations, for a few noise settings.
3. **Cluster-wise vs single Algorithm-2 release** at the same total
   (epsilon, delta) on the paper's mixture (D = 2), two moons and concentric
   rings (N = 20 000 each): RKHS distance to the private KME (exact kernel),
   ARI and purity of the DP clustering and of the non-private kernel k-means
   from the same initialisation; medians over ``--seeds`` seeds.

Writes ``benchmarks/results/clustering.json`` and ``benchmarks/results/clustering.md``.
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import statistics
import sys
import time
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from dpkme.clustering import (  # noqa: E402
    compare_with_paper,
    compare_with_single_release,
    dp_kernel_kmeans,
    plan_kmeans,
)
from dpkme.clustering._features import FeatureBlocks, lloyd_pass  # noqa: E402
from dpkme.datasets import concentric_circles, paper_mixture, two_moons  # noqa: E402
from dpkme.kernels.kernel import GaussianKernel  # noqa: E402
from dpkme.kernels.random_features import RandomFourierFeatures  # noqa: E402

MIXTURE_BOX = (-800.0, 1000.0)  # declared from the public generator: 100 +- (4 * 200 + 3 * 30), rounded


def _stats(xs):
    return {"median": statistics.median(xs), "min": min(xs), "max": max(xs), "runs": xs}


def timing(repeats: int) -> dict:
    X = paper_mixture(100_000, 5, random_state=0, legacy=True)
    kernel = GaussianKernel(gamma=1e-4 / 5)
    out = {"N": X.shape[0], "D": X.shape[1], "k": 10, "T": 10, "J": 1000, "epsilon": 1.0, "delta": 1e-6,
           "repeats": repeats, "cpu_count": os.cpu_count(), "load_average_before": os.getloadavg()}
    t = time.perf_counter()
    plan_kmeans(epsilon=1.0, delta=1e-6, n_iter=10)
    out["plan_seconds"] = time.perf_counter() - t
    f = RandomFourierFeatures(kernel, n_components=1000, random_state=0).fit(5)
    fb = FeatureBlocks(f)
    centres = fb.transform(X[:10])
    passes = []
    for _ in range(repeats):
        t = time.perf_counter()
        lloyd_pass(fb, X, centres)
        passes.append(time.perf_counter() - t)
    out["lloyd_pass_seconds"] = _stats(passes)
    for mode in ("none", "final", "history"):
        times = []
        for r in range(repeats):
            t = time.perf_counter()
            res = dp_kernel_kmeans(X, k=10, epsilon=1.0, delta=1e-6, n_iter=10, kernel=kernel, n_features=1000,
                                   bounds=MIXTURE_BOX, preimages=mode, local_view=True, random_state=100 + r)
            times.append(time.perf_counter() - t)
        out[f"dp_kmeans_seconds_preimages_{mode}"] = _stats(times)
        print(f"  preimages={mode}: median {statistics.median(times):.2f} s ({', '.join(f'{x:.2f}' for x in times)})",
              flush=True)
    out["epsilon_spent"] = res.epsilon
    out["load_average_after"] = os.getloadavg()
    return out


def accounting() -> list[dict]:
    rows = []
    for sigma_K, sigma_C, T in [(4.0, None, 10), (4.0, 2.0, 10), (10.0, None, 10), (20.0, 5.0, 20), (2.0, None, 5)]:
        cmp = compare_with_paper(n_iter=T, sigma_K=sigma_K, sigma_C=sigma_C, delta=1e-5)
        rows.append({"sigma_K": sigma_K, "sigma_C": sigma_C, "T": T, "delta": 1e-5, "paper": cmp["paper"],
                     "paper_norm_once": cmp["paper_norm_once"],
                     **{f"{rel}_{m}": cmp[rel][m] for rel in ("add-remove", "replace-one")
                        for m in ("moments", "moments_norm_T", "rdp", "pld", "moment_ratio")}})
    return rows


DATASETS = {
    # name: (generator, kernel lengthscale, k, box)
    "paper mixture (D=2)": (lambda n, s: paper_mixture(n, 2, random_state=s, return_labels=True), 100.0, 10,
                            MIXTURE_BOX),
    "two moons": (lambda n, s: two_moons(n, noise=0.1, random_state=s, return_labels=True), 0.4, 4, (-1.5, 2.5)),
    "concentric rings": (lambda n, s: concentric_circles(n, random_state=s, return_labels=True), 0.2, 6,
                         (-1.3, 1.3)),
}


def comparison(seeds: int, epsilons, n: int, n_points: int) -> list[dict]:
    rows = []
    for name, (gen, ls, k, box) in DATASETS.items():
        kernel = GaussianKernel(lengthscale=ls)
        for s in range(seeds):
            X, y = gen(n, s)
            mean_kxx = kernel.mean_gram(X)
            for eps in epsilons:
                t = time.perf_counter()
                r = compare_with_single_release(X, labels=y, kernel=kernel, epsilon=eps, delta=1e-6, k=k,
                                                n_points=n_points, n_iter=10, n_features=1000, release_share=0.5,
                                                bounds=box, random_state=1000 * s + int(eps * 10), mean_kxx=mean_kxx)
                rows.append({"dataset": name, "seed": s, "epsilon": eps, "k": k, "lengthscale": ls,
                             "clusterwise_rkhs": r["clusterwise"]["rkhs_distance"],
                             "single_rkhs": r["single"]["rkhs_distance"],
                             "clusterwise_seconds": r["clusterwise"]["seconds"],
                             "single_seconds": r["single"]["seconds"],
                             "dp_ari": r["clustering"]["ari"], "dp_purity": r["clustering"]["purity"],
                             "dp_ari_vs_nonprivate": r["clustering"]["ari_vs_reference"],
                             "nonprivate_ari": r["nonprivate_clustering"]["ari"],
                             "nonprivate_purity": r["nonprivate_clustering"]["purity"]})
                print(f"  {name} seed {s} eps {eps:g}: cw {rows[-1]['clusterwise_rkhs']:.4f} "
                      f"single {rows[-1]['single_rkhs']:.4f} ARI {rows[-1]['dp_ari']:.3f} "
                      f"({time.perf_counter() - t:.1f} s)", flush=True)
    return rows


def _median_table(rows, keys):
    groups = {}
    for r in rows:
        groups.setdefault((r["dataset"], r["epsilon"]), []).append(r)
    out = []
    for (ds, eps), rs in groups.items():
        out.append({"dataset": ds, "epsilon": eps, "n": len(rs),
                    **{k: statistics.median(r[k] for r in rs) for k in keys}})
    return out


def write_markdown(res: dict, path: Path) -> None:
    t = res["timing"]
    L = ["# DP kernel k-means and cluster-wise release (issue #7)", "",
         f"Machine: {res['machine']}; command: `{res['command']}`.", ""]
    L += ["## Timing: k = 10, T = 10, J = 1000, N = 100 000, D = 5 (target < 10 s)", "",
          f"Load average (1/5/15 min) before: {', '.join(f'{x:.1f}' for x in t['load_average_before'])}; "
          f"after: {', '.join(f'{x:.1f}' for x in t['load_average_after'])} "
          f"(the machine is shared; medians of {t['repeats']} runs).", "",
          "| what | median s | min s | max s |", "|---|---|---|---|"]
    for key, label in [("lloyd_pass_seconds", "one Lloyd pass (assign + sizes + sums, N = 100 000)"),
                       ("dp_kmeans_seconds_preimages_none", "dp_kernel_kmeans, no pre-images"),
                       ("dp_kmeans_seconds_preimages_final", "dp_kernel_kmeans, final pre-images"),
                       ("dp_kmeans_seconds_preimages_history", "dp_kernel_kmeans, pre-images every iteration")]:
        s = t[key]
        L.append(f"| {label} | {s['median']:.2f} | {s['min']:.2f} | {s['max']:.2f} |")
    L += ["", f"Each run includes input validation, the final local-view assignment pass and the noise; "
          f"plan calibration alone: {t['plan_seconds'] * 1e3:.1f} ms.", ""]
    L += ["## Accounting: the paper's eq. (3) vs the truth (delta = 1e-5)", "",
          "`paper`: eq. (3) + Theorem 1 as printed (norm step counted T times). Others: the paper's noise "
          "(sqrt2 sigma_K on sizes, sqrt2 sigma_K C on sums, sqrt2 sigma_C on the histogram once) with the true "
          "sensitivities; `moments` = true log moments with the paper's conversion; `rdp`/`pld` = dpkme.privacy.accounting.",
          "", "| sigma_K | sigma_C | T | paper | paper, norm once | add/remove moments | add/remove RDP | "
          "add/remove PLD | replace-one moments | replace-one RDP | replace-one PLD |",
          "|---|---|---|---|---|---|---|---|---|---|---|"]
    for r in res["accounting"]:
        L.append(f"| {r['sigma_K']:g} | {r['sigma_C'] if r['sigma_C'] is not None else '-'} | {r['T']} | "
                 f"{r['paper']:.3f} | {r['paper_norm_once']:.3f} | {r['add-remove_moments']:.3f} | "
                 f"{r['add-remove_rdp']:.3f} | {r['add-remove_pld']:.3f} | {r['replace-one_moments']:.3f} | "
                 f"{r['replace-one_rdp']:.3f} | {r['replace-one_pld']:.3f} |")
    L += ["", "Under add/remove the true moments equal the paper's (its two slips cancel); under replace-one the "
          "true per-step log moment is twice eq. (3)'s and the paper understates epsilon.", ""]
    L += [f"## Cluster-wise vs single Algorithm-2 release (same total epsilon, delta = 1e-6; N = {res['n']}, "
          f"M = {res['n_points']}, J = 1000, T = 10, release share 0.5, replace-one)", "",
          f"Medians over {res['seeds']} seeds. RKHS distance to the private KME under the exact kernel (lower is "
          "better). ARI/purity against the true labels, DP = the clustering of the cluster-wise release, "
          "non-private = kernel k-means from the same initialisation. Evaluation reads the private data: "
          "not DP.", "",
          "| data | k | epsilon | RKHS cluster-wise | RKHS single | DP ARI | DP purity | non-private ARI | "
          "non-private purity | DP vs non-private ARI |", "|---|---|---|---|---|---|---|---|---|---|"]
    for r in res["comparison_medians"]:
        k = next(x["k"] for x in res["comparison"] if x["dataset"] == r["dataset"])
        L.append(f"| {r['dataset']} | {k} | {r['epsilon']:g} | {r['clusterwise_rkhs']:.4f} | "
                 f"{r['single_rkhs']:.4f} | {r['dp_ari']:.3f} | {r['dp_purity']:.3f} | {r['nonprivate_ari']:.3f} | "
                 f"{r['nonprivate_purity']:.3f} | {r['dp_ari_vs_nonprivate']:.3f} |")
    med = res["comparison_medians"]
    wins = [r for r in med if r["clusterwise_rkhs"] < r["single_rkhs"]]
    L += ["", f"Cluster-wise has the lower median RKHS distance in {len(wins)} of {len(med)} (data, epsilon) cells: "
          + ", ".join(f"{r['dataset']} at {r['epsilon']:g}" for r in wins) + ".",
          "", "Reading: the cluster-wise release pays for the clustering (half the budget here) and adds k noisy "
          "sums instead of one, so where the noise dominates (small epsilon x N) the single release is closer. "
          "Where it does not, the single release is limited by its reduced-set error (M points fitted to a "
          "multi-modal embedding), which barely improves with epsilon, while k small per-cluster problems are "
          "fitted much more accurately with the same total M. Kernel k-means itself (non-private, same "
          "initialisation) is a weak clusterer of moons and rings with a Gaussian kernel; how closely the DP "
          "clustering tracks it is the last column (it needs more budget with more clusters: k = 10 for the "
          "mixture)."]
    path.write_text("\n".join(L) + "\n")


def main() -> None:
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--repeats", type=int, default=5)
    p.add_argument("--seeds", type=int, default=3)
    p.add_argument("--n", type=int, default=20_000, help="size of the comparison data sets")
    p.add_argument("--n-points", type=int, default=200)
    p.add_argument("--epsilons", type=float, nargs="+", default=[1.0, 4.0, 16.0])
    p.add_argument("--quick", action="store_true", help="tiny settings, for checking the script")
    p.add_argument("--skip-timing", action="store_true")
    p.add_argument("--skip-comparison", action="store_true")
    p.add_argument("--markdown-only", action="store_true", help="rewrite clustering.md from clustering.json")
    p.add_argument("--merge", action="store_true",
                   help="keep the sections of an existing results file that this run skips")
    a = p.parse_args()
    if a.markdown_only:
        path = ROOT / "benchmarks" / "results" / "clustering.json"
        write_markdown(json.loads(path.read_text()), path.with_suffix(".md"))
        return
    if a.quick:
        a.repeats, a.seeds, a.n, a.n_points, a.epsilons = 1, 1, 2000, 40, [4.0]
    res = {"machine": f"{platform.machine()}, {os.cpu_count()} CPUs, Python {platform.python_version()}, "
                      f"numpy {np.__version__}",
           "command": "python benchmarks/bench_clustering.py " + " ".join(sys.argv[1:]),
           "seeds": a.seeds, "n": a.n, "n_points": a.n_points}
    if not a.skip_timing:
        print("timing", flush=True)
        res["timing"] = timing(a.repeats)
    print("accounting", flush=True)
    res["accounting"] = accounting()
    if not a.skip_comparison:
        print("comparison", flush=True)
        res["comparison"] = comparison(a.seeds, a.epsilons, a.n, a.n_points)
        res["comparison_medians"] = _median_table(
            res["comparison"], ["clusterwise_rkhs", "single_rkhs", "dp_ari", "dp_purity", "nonprivate_ari",
                                "nonprivate_purity", "dp_ari_vs_nonprivate", "clusterwise_seconds",
                                "single_seconds"])
    out = ROOT / "benchmarks" / "results"
    out.mkdir(parents=True, exist_ok=True)
    suffix = "_quick" if a.quick else ""
    old_path = out / f"clustering{suffix}.json"
    if a.merge and old_path.exists():
        old = json.loads(old_path.read_text())
        for key in ("timing", "comparison", "comparison_medians", "seeds", "n", "n_points"):
            skipped = (key == "timing" and a.skip_timing) or (key != "timing" and a.skip_comparison)
            if skipped and key in old:
                res[key] = old[key]
        res["command"] = old.get("command", "") + " ; " + res["command"]
    (out / f"clustering{suffix}.json").write_text(json.dumps(res, indent=1, default=float))
    if "timing" in res and "comparison" in res:
        write_markdown(res, out / f"clustering{suffix}.md")
    print("written", out / f"clustering{suffix}.json")


if __name__ == "__main__":
    main()
