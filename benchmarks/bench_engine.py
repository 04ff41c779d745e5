"""Benchmark of the fused JAX/XLA kernel-sum engine against the blocked numpy path (issue 18, part 4).

Usage::

    python benchmarks/bench_engine.py [--data-dir /work/shared/data] [--repeats 3] [--max-load 1.5]

In one run, each figure a fresh subprocess, for the old code (``main`` before the engine: the tree of
``--baseline-rev``, by default the parent of the commit that added ``dpkme/kernels/engine.py``, exported with
``git archive`` into a temporary directory and run from there with the same interpreter) and the new one (this
working tree, ``DPKME_KERNEL_ENGINE=auto``, the default):

1. the exact mean of :math:`K_{XX}` for N = 20 000, D = 5 under the paper's kernel (the first 20 000 rows of
   ``mixture_of_Gaussians_N100000_D5.npz``, or the same-sized synthetic mixture when the file is absent): the
   first call (JAX import and compilation included) and a second call in the same process;
2. the whole ``python -m dpkme reproduce fig1`` process on the paper's D = 5 and D = 2 data (skipped when the
   files are absent).

Each natively and with AVX2 emulated on an AVX-512 machine: ``NPY_DISABLE_CPU_FEATURES`` lists the AVX-512
dispatch targets that numpy reports as available (``numpy._core._multiarray_umath.__cpu_dispatch__``),
``OPENBLAS_CORETYPE=Haswell`` (OpenBLAS's AVX2 kernels) and ``XLA_FLAGS=--xla_cpu_max_isa=AVX2``. Every
subprocess reports the SIMD level numpy dispatches to and ``os.getloadavg()``; runs are interleaved over the
configurations, and each waits (up to ``--max-wait`` seconds) for the 1-minute load to fall below ``--max-load``,
since other processes share the machine. Medians over ``--repeats`` runs and the old/new ratio are written to
``benchmarks/results/engine.md`` (and ``engine.json``).
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import resource
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
RESULTS = ROOT / "benchmarks" / "results"
D5 = "mixture_of_Gaussians_N100000_D5.npz"
D2 = "mixture_of_Gaussians_N100000_D2.npz"

# Runs in the subprocess: prints one JSON line.
_MEAN_KXX = r"""
import json, os, sys, time
t0 = time.perf_counter()
import numpy as np
from dpkme.reproduce import load_private_npz, paper_kernel
path, n = sys.argv[1], int(sys.argv[2])
if os.path.exists(path):
    X = load_private_npz(path)[:n]
else:
    from dpkme.datasets import paper_mixture
    X = paper_mixture(n, 5, random_state=0)
k = paper_kernel(X.shape[1])
c = time.process_time(); t = time.perf_counter(); first = k.mean_gram(X); t_first = time.perf_counter() - t
cpu_first = time.process_time() - c
c0 = os.times(); t = time.perf_counter(); second = k.mean_gram(X); t_second = time.perf_counter() - t; c1 = os.times()
cores = (c1.user + c1.system - c0.user - c0.system) / t_second
feat = np._core._multiarray_umath.__cpu_features__
print(json.dumps({"first_s": t_first, "second_s": t_second, "cores_used": cores, "cpu_first_s": cpu_first,
                  "cpu_second_s": cores * t_second, "mean_kxx": first,
                  "same": first == second,
                  "numpy_simd": _simd(feat), "load": os.getloadavg()}))
"""
_SIMD = r"""
def _simd(feat):
    if feat.get("AVX512_SKX") or feat.get("X86_V4"):
        return "AVX-512"
    return "AVX2" if feat.get("AVX2") else "below AVX2"
"""


def cpu_model() -> str:
    try:
        for line in Path("/proc/cpuinfo").read_text().splitlines():
            if line.startswith("model name"):
                return line.split(":", 1)[1].strip()
    except OSError:
        pass
    return platform.processor() or platform.machine()


def cpu_simd() -> str:
    """The machine's SIMD level (from the kernel's CPU flags)."""
    try:
        flags = next(line for line in Path("/proc/cpuinfo").read_text().splitlines() if line.startswith("flags"))
    except (OSError, StopIteration):
        return "unknown"
    return "AVX-512" if " avx512f" in flags else "AVX2" if " avx2" in flags else "below AVX2"


def avx2_environment() -> dict:
    """Environment variables that make numpy, OpenBLAS and XLA use AVX2 code only."""
    import numpy._core._multiarray_umath as mu

    targets = [t for t in mu.__cpu_dispatch__ if t.startswith(("AVX512", "X86_V4")) and mu.__cpu_features__.get(t)]
    env = {"XLA_FLAGS": "--xla_cpu_max_isa=AVX2", "OPENBLAS_CORETYPE": "Haswell"}
    if targets:
        env["NPY_DISABLE_CPU_FEATURES"] = " ".join(targets)
    return env


def wait_for_quiet(max_load: float, max_wait: float) -> float:
    t0 = time.monotonic()
    while os.getloadavg()[0] > max_load and time.monotonic() - t0 < max_wait:
        time.sleep(5)
    return os.getloadavg()[0]


def baseline_tree(rev: str | None, dest: Path) -> tuple[Path, str]:
    """Export the old code (``rev``; default: the parent of the commit that added the engine) into ``dest``."""
    if rev is None:
        added = subprocess.run(["git", "log", "--diff-filter=A", "--format=%H", "--", "dpkme/kernels/engine.py"],
                               cwd=ROOT, capture_output=True, text=True, check=True).stdout.split()
        if not added:
            raise ValueError("cannot find the commit that added dpkme/kernels/engine.py; pass --baseline-rev REV "
                             "(a commit of main before the engine).")
        rev = added[-1] + "~1"
    sha = subprocess.run(["git", "rev-parse", "--short", rev], cwd=ROOT, capture_output=True, text=True,
                         check=True).stdout.strip()
    archive = subprocess.run(["git", "archive", sha, "dpkme"], cwd=ROOT, capture_output=True, check=True).stdout
    subprocess.run(["tar", "-x", "-C", str(dest)], input=archive, check=True)
    return dest, sha


def run_mean_kxx(env: dict, data: Path, n: int, cwd: Path = ROOT) -> dict:
    out = subprocess.run([sys.executable, "-c", _SIMD + _MEAN_KXX, str(data), str(n)], env=env, cwd=cwd,
                         capture_output=True, text=True, check=True)
    return json.loads(out.stdout.strip().splitlines()[-1])


def run_fig1(env: dict, data: Path, cwd: Path = ROOT) -> dict:
    probe = "import numpy as np, json, os\n" + _SIMD + "print(json.dumps(_simd(np._core._multiarray_umath.__cpu_features__)))"
    simd = json.loads(subprocess.run([sys.executable, "-c", probe], env=env, capture_output=True, text=True,
                                     check=True).stdout)
    with tempfile.TemporaryDirectory() as tmp:
        load = os.getloadavg()
        r0 = resource.getrusage(resource.RUSAGE_CHILDREN)
        t = time.perf_counter()
        subprocess.run([sys.executable, "-m", "dpkme", "reproduce", "fig1", "--data", str(data), "--out",
                        str(Path(tmp) / "fig1.json"), "--quiet"], env=env, cwd=cwd, check=True,
                       capture_output=True)
        seconds = time.perf_counter() - t
        r1 = resource.getrusage(resource.RUSAGE_CHILDREN)
        result = json.loads((Path(tmp) / "fig1.json").read_text())
    return {"seconds": seconds, "cpu_s": r1.ru_utime + r1.ru_stime - r0.ru_utime - r0.ru_stime,
            "mean_kxx": result["mean_kxx"], "numpy_simd": simd, "load": load,
            "parts": result.get("seconds_parts", {})}


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--data-dir", default="/work/shared/data")
    ap.add_argument("--repeats", type=int, default=3)
    ap.add_argument("--n", type=int, default=20000, help="N of the mean-of-K_XX figure")
    ap.add_argument("--max-load", type=float, default=1.5, help="wait for the 1-minute load to fall below this")
    ap.add_argument("--max-wait", type=float, default=120.0, help="longest wait for a quiet machine, seconds")
    ap.add_argument("--skip-fig1", action="store_true")
    ap.add_argument("--baseline-rev", default=None,
                    help="git revision of the old code (default: the parent of the commit that added the engine)")
    args = ap.parse_args(argv)
    with tempfile.TemporaryDirectory() as old_dir:
        old_root, args.baseline_sha = baseline_tree(args.baseline_rev, Path(old_dir))
        return _main(args, old_root)


def _main(args, old_root: Path) -> int:
    data_dir = Path(args.data_dir)
    base = {k: v for k, v in os.environ.items() if k not in ("XLA_FLAGS", "NPY_DISABLE_CPU_FEATURES",
                                                              "OPENBLAS_CORETYPE", "DPKME_KERNEL_ENGINE")}
    emulation = avx2_environment() if cpu_simd() == "AVX-512" else {}
    isas = {"native": {}, "AVX2 (emulated)": emulation} if emulation else {"native": {}}
    engines = {"numpy (old)": "numpy", "fused (new)": "auto"}
    trees = {"numpy (old)": old_root, "fused (new)": ROOT}
    configs = [(isa, eng) for isa in isas for eng in engines]
    workloads = [(f"mean K_XX, N = {args.n:d}, D = 5",
                  lambda env, cwd: run_mean_kxx(env, data_dir / D5, args.n, cwd))]
    if not args.skip_fig1:
        for name in (D5, D2):
            if (data_dir / name).exists():
                label = "reproduce fig1, D = {}".format(name.split("_D")[1].split(".")[0])
                workloads.append((label, lambda env, cwd, p=data_dir / name: run_fig1(env, p, cwd)))
    runs: dict = {}
    for rep in range(args.repeats):
        for label, fn in workloads:
            for isa, eng in configs:
                env = {**base, **isas[isa], "DPKME_KERNEL_ENGINE": engines[eng]}
                before = wait_for_quiet(args.max_load, args.max_wait)
                res = fn(env, trees[eng])
                res["load_before"] = before
                res["load_after"] = os.getloadavg()[0]
                runs.setdefault(label, {}).setdefault(f"{isa} | {eng}", []).append(res)
                print(rep, label, isa, eng, {k: v for k, v in res.items() if k != "load"}, flush=True)
    write(runs, args, isas, emulation)
    return 0


def _median(rows, key):
    return statistics.median(r[key] for r in rows)


def write(runs: dict, args, isas, emulation) -> None:
    RESULTS.mkdir(parents=True, exist_ok=True)
    (RESULTS / "engine.json").write_text(json.dumps({"cpu": cpu_model(), "simd": cpu_simd(), "runs": runs,
                                                     "avx2_emulation": emulation}, indent=1))
    lines = ["# Fused kernel-sum engine (JAX/XLA) vs the blocked numpy path", "",
             f"CPU: {cpu_model()}, {os.cpu_count()} cores, SIMD level {cpu_simd()}; "
             f"median of {args.repeats} runs (each a fresh process); `python benchmarks/bench_engine.py`.", ""]
    lines += ["Other processes may share the machine: the 1-minute load average is recorded before and after every run "
              "(a load above the core count inflates both engines' times; the configurations are interleaved so that "
              "they see similar load). Rerun on a quiet machine for clean figures.", ""]
    lines += [f"Old = `main` at {args.baseline_sha} (before the engine), exported with `git archive` and run from "
              "there; new = this working tree with the default `DPKME_KERNEL_ENGINE=auto`.", ""]
    if emulation:
        lines += ["AVX2 emulation on this AVX-512 machine: " + ", ".join(f"`{k}={v}`" for k, v in emulation.items())
                  + ". The numpy SIMD column is what numpy reports in the subprocess.", ""]
    for label, per in runs.items():
        key = "first_s" if "mean" in label else "seconds"
        cpu_key = "cpu_first_s" if "mean" in label else "cpu_s"
        lines += [f"## {label}", "",
                  "| CPU SIMD | engine | numpy SIMD | median s | runs s | median CPU s (all threads) | load (1 min) before/after |"
                  + (" 2nd call median s | CPU time / wall time of the 2nd call |" if key == "first_s"
                     else " median parts s: kernel sums / basis / sweep |"),
                  "|---|---|---|---|---|---|---|" + ("---|---|" if key == "first_s" else "---|")]
        for cfg, rows in per.items():
            isa, eng = cfg.split(" | ")
            simd = cpu_simd() if isa == "native" else "AVX2 (emulated)"
            row = (f"| {simd} | {eng} | {rows[0]['numpy_simd']} | {_median(rows, key):.2f} | "
                   + ", ".join(f"{r[key]:.2f}" for r in rows) + f" | {_median(rows, cpu_key):.2f} | "
                   + ", ".join(f"{r['load_before']:.1f}/{r['load_after']:.1f}" for r in rows) + " |")
            if key == "first_s":
                row += f" {_median(rows, 'second_s'):.2f} | {_median(rows, 'cores_used'):.2f} |"
            else:
                parts = [statistics.median(r.get("parts", {}).get(p, float("nan")) for r in rows)
                         for p in ("kernel_sums", "basis", "sweep")]
                row += " " + " / ".join(f"{p:.2f}" for p in parts) + " |"
            lines.append(row)
        lines.append("")
        for isa in isas:
            old, new = per.get(f"{isa} | numpy (old)"), per.get(f"{isa} | fused (new)")
            if old and new:
                simd = cpu_simd() if isa == "native" else "AVX2 (emulated)"
                lines.append(f"- {simd}: old / new = {_median(old, key) / _median(new, key):.2f}x in wall time, "
                             f"{_median(old, cpu_key) / _median(new, cpu_key):.2f}x in CPU time")
        lines.append("")
    (RESULTS / "engine.md").write_text("\n".join(lines))


if __name__ == "__main__":
    raise SystemExit(main())
