"""Benchmark of Algorithm 1 and its reproductions (issue #2 targets).

Usage::

    python benchmarks/bench_alg1.py --data-dir ../shared/data [--repeats 3] [--seeds 5]

Measures, on the paper's N = 100 000 mixtures (D = 2 and D = 5):

1. wall time and peak memory of the whole ``python -m dpkme reproduce fig1`` and
   ``fig2-alg1`` processes (median of ``--repeats`` runs, each a fresh process),
   with the exact O(N^2) mean of K_XX and with it passed in (``--mean-kxx``);
2. side by side in one process: our blocked in-order incomplete Cholesky versus
   a paper-style Gram–Schmidt with Python loops (written from the algorithm's
   description) at M in {500, 1000, 2000};
3. accuracy of ``--basis auto`` versus the paper's full basis on the D = 5
   Figure 1 setting: medians over ``--seeds`` noise draws at every M of the grid.

Writes ``benchmarks/results/alg1.json`` and ``benchmarks/results/alg1.md``.
"""

from __future__ import annotations

import argparse
import json
import platform
import statistics
import subprocess
import sys
import tempfile
import time
import warnings
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from dpkme.curves import paper_m_grid, subspace_curves  # noqa: E402
from dpkme.release.subspace import SubspaceBasis  # noqa: E402
from dpkme.reproduce import load_private_npz, paper_kernel  # noqa: E402


def run_process(args: list[str]) -> tuple[float, float]:
    """Wall seconds and peak RSS (MiB) of one ``python -m dpkme`` process."""
    code = (
        "import resource, subprocess, sys, time;"
        "t = time.perf_counter();"
        f"r = subprocess.run([sys.executable, '-m', 'dpkme', *{args!r}], cwd={str(ROOT)!r});"
        "dt = time.perf_counter() - t;"
        "print(dt, resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss / 1024);"
        "sys.exit(r.returncode)"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    wall, rss = out.stdout.split()
    return float(wall), float(rss)


def paper_style_gram_schmidt(K: np.ndarray, tol: float = 1e-5) -> int:
    """Modified Gram–Schmidt with skipping, one Python loop iteration per pair (as the paper's code does)."""
    m = K.shape[0]
    A = np.zeros((m, m))
    KA = np.zeros((m, m))
    norms = np.zeros(m)
    for f in range(m):
        A[f, f] = 1.0
        for j in range(f):
            if norms[j] > tol:
                A[f] -= (A[f] @ KA[j]) / norms[j] * A[j]
        KA[f] = K @ A[f]
        norms[f] = A[f] @ KA[f]
    return int(np.sum(norms > tol))


def timing_section(data_dir: Path, repeats: int) -> list[dict]:
    rows = []
    for dim in (2, 5):
        path = data_dir / f"mixture_of_Gaussians_N100000_D{dim}.npz"
        X = load_private_npz(path)
        mean_kxx = paper_kernel(dim).mean_gram(X)
        for fig in ("fig1", "fig2-alg1"):
            for variant, extra in (("exact mean K_XX", []), ("--mean-kxx given", ["--mean-kxx", repr(mean_kxx)])):
                walls, rsss = [], []
                for _ in range(repeats):
                    with tempfile.TemporaryDirectory() as tmp:
                        w, r = run_process(["reproduce", fig, "--data", str(path), "--out", f"{tmp}/o.json",
                                            "--quiet", *extra])
                    walls.append(w)
                    rsss.append(r)
                rows.append({"D": dim, "figure": fig, "variant": variant, "median_s": statistics.median(walls),
                             "runs_s": walls, "peak_rss_mib": max(rsss)})
                print(rows[-1], flush=True)
    return rows


def gram_schmidt_section(data_dir: Path) -> list[dict]:
    X = load_private_npz(data_dir / "mixture_of_Gaussians_N100000_D5.npz")
    kernel = paper_kernel(5)
    rows = []
    for m in (500, 1000, 2000):
        Z = X[:m]
        t = time.perf_counter()
        B = SubspaceBasis.fit(Z, kernel=kernel)
        ours = time.perf_counter() - t
        K = kernel.gram(Z)
        t = time.perf_counter()
        f_ref = paper_style_gram_schmidt(K)
        ref = time.perf_counter() - t
        rows.append({"M": m, "F_ours": B.dim, "F_paper_style": f_ref, "ours_s": ours, "paper_style_s": ref,
                     "speedup": ref / ours})
        print(rows[-1], flush=True)
    return rows


def auto_section(data_dir: Path, seeds: int) -> dict:
    X = load_private_npz(data_dir / "mixture_of_Gaussians_N100000_D5.npz")
    kernel = paper_kernel(5)
    kw = dict(kernel=kernel, epsilons=[0.01, 0.1, 1.0], delta=1e-6, m_grid=paper_m_grid(10000), reps=seeds,
              calibration="classic", sensitivity="paper", points_are_sample=True, z_is_prefix_of_x=True,
              random_state=0)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        full = subspace_curves(X, X[:10000], basis="full", **kw)
        auto = subspace_curves(X, X[:10000], basis="auto", mean_kxx=full.mean_kxx, **kw)
    out = {"M": full.m_grid, "baseline": full.baseline, "projection": full.projection, "epsilons": full.epsilons}
    for e, eps in enumerate(full.epsilons):
        f = np.median(np.asarray(full.alg1_reps[e]), axis=0)
        a = np.median(np.asarray(auto.alg1_reps[e]), axis=0)
        ratio = a / f
        out[f"eps={eps}"] = {"full_median": f.tolist(), "auto_median": a.tolist(),
                             "full_at_10000": float(f[-1]), "auto_at_10000": float(a[-1]),
                             "max_ratio_auto_over_full": float(ratio.max()),
                             "argmax_M": int(full.m_grid[int(ratio.argmax())])}
        print(eps, out[f"eps={eps}"]["auto_at_10000"], out[f"eps={eps}"]["max_ratio_auto_over_full"], flush=True)
    return out


def write_markdown(res: dict, path: Path) -> None:
    lines = ["# Algorithm 1 benchmark", "", f"Machine: {res['machine']}", ""]
    lines += ["## Whole reproduction processes (N = 100 000, M up to 10 000, 84 values of M, 3 epsilons)", "",
              "| D | figure | mean of K_XX | median wall s | runs | peak RSS MiB |", "|---|---|---|---|---|---|"]
    for r in res["timing"]:
        runs = ", ".join(f"{x:.2f}" for x in r["runs_s"])
        lines.append(f"| {r['D']} | {r['figure']} | {r['variant']} | {r['median_s']:.2f} | {runs} | "
                     f"{r['peak_rss_mib']:.0f} |")
    lines += ["", "## Basis construction, side by side (D = 5, first M rows)", "",
              "| M | F ours | F paper-style | ours s | paper-style Gram–Schmidt s | speed-up |", "|---|---|---|---|---|---|"]
    for r in res["gram_schmidt"]:
        lines.append(f"| {r['M']} | {r['F_ours']} | {r['F_paper_style']} | {r['ours_s']:.3f} | "
                     f"{r['paper_style_s']:.2f} | {r['speedup']:.0f}x |")
    a = res["auto"]
    lines += ["", f"## `--basis auto` vs the paper's full basis (D = 5, Figure 1, medians of {res['seeds']} draws)", "",
              "| epsilon | full at M=10 000 | auto at M=10 000 | target | max over the grid of auto/full (at M) |",
              "|---|---|---|---|---|"]
    for eps, target in zip(a["epsilons"], (0.05, 0.01, 0.004)):
        d = a[f"eps={eps}"]
        lines.append(f"| {eps} | {d['full_at_10000']:.4g} | {d['auto_at_10000']:.4g} | <= {target} | "
                     f"{d['max_ratio_auto_over_full']:.3f} ({d['argmax_M']}) |")
    lines.append(f"\nBaseline (uniform weights) at M=10 000: {a['baseline'][-1]:.4g}.")
    path.write_text("\n".join(lines) + "\n")


def main() -> None:
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--data-dir", type=Path, required=True)
    p.add_argument("--repeats", type=int, default=3)
    p.add_argument("--seeds", type=int, default=5)
    p.add_argument("--skip-timing", action="store_true")
    args = p.parse_args()
    res = {"machine": f"{platform.processor() or platform.machine()}, {len(__import__('os').sched_getaffinity(0))} "
                      f"cores, Python {platform.python_version()}", "seeds": args.seeds}
    res["timing"] = [] if args.skip_timing else timing_section(args.data_dir, args.repeats)
    res["gram_schmidt"] = gram_schmidt_section(args.data_dir)
    res["auto"] = auto_section(args.data_dir, args.seeds)
    out = ROOT / "benchmarks" / "results"
    out.mkdir(parents=True, exist_ok=True)
    (out / "alg1.json").write_text(json.dumps(res, indent=1))
    write_markdown(res, out / "alg1.md")
    print((out / "alg1.md").read_text())


if __name__ == "__main__":
    main()
