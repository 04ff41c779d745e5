"""Issue 26: how recognisable the Generative page's default digits are, against ε (the ε-vs-quality curve).

Usage::

    python benchmarks/bench_dpgm_quality.py                 # ε ∈ {0.3, 1, 2, 5, 10}, 3 runs each
    python benchmarks/bench_dpgm_quality.py --runs 5 --previous   # more runs; also the previous defaults
    python benchmarks/bench_dpgm_quality.py --from-json           # rewrite the .md from the last .json

The page's default settings for the digits split by label (``ui.generative.default_settings("digits", "labels")``),
through the page's code path (``ui.generative.plan`` and ``ui.generative.run``, δ = 10⁻⁶ the app's default, add/remove,
PLD accountant), each run with fresh OS-entropy noise. For every run:

* **class agreement** (:func:`dpkme.generative.class_agreement`): 1,000 generated digits (their model's class as the
  label); a softmax classifier trained on the **real held-out** digits (359, the page's fixed split) assigns each
  to a class; the share given the class of the model that drew it. The same classifier's accuracy on the real
  private digits (the owner's check, labelled so) is its ceiling; chance is 0.1.
* **MMD** to the held-out digits of 500 generated digits (the page's evaluation: Gaussian kernel, lengthscale
  √64/4, pixels/16), next to uniform static and the private digits themselves (the floor).
* **time**: wall and CPU seconds (user + system of this process, all threads) from the plan to the trained models,
  and of drawing the 1,000 digits. The first run of the process compiles the models (the default ε = 1 comes
  first, so its time is a fresh process's); the later runs reuse the compiled step (the noise is an argument).

``--previous`` adds the previous defaults (batch 256, VAE 32/4, learning rate 3e-3, 40 epochs: 240 steps) at
ε = 1 and 10. One shared machine (2 cores): the load average and ``lscpu`` are recorded with the times.
Writes ``benchmarks/results/dpgm_quality.json`` and ``benchmarks/results/dpgm_quality.md``.
"""

from __future__ import annotations

import argparse
import json
import logging
import os
import subprocess
import sys
import time
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

RESULTS = ROOT / "benchmarks" / "results"
EPSILONS = (1.0, 0.3, 2.0, 5.0, 10.0)          # the default first: its run pays the compilation
DELTA = 1e-6
PREVIOUS = {"gen.batch": 256, "gen.hidden": 32, "gen.latent": 4, "gen.lr": 3e-3, "gen.epochs": 40}
N_DRAW = 1000


def _load() -> float:
    return round(os.getloadavg()[0], 1)


def _lscpu() -> str:
    try:
        out = subprocess.run(["lscpu"], capture_output=True, text=True, check=False).stdout
    except OSError:
        return "?"
    keep = ("Architecture", "CPU(s)", "Model name", "Thread(s) per core", "Core(s) per socket", "Socket(s)",
            "CPU max MHz", "L2 cache", "L3 cache")
    return "; ".join(" ".join(line.split()) for line in out.splitlines() if line.split(":")[0].strip() in keep)


def _params(settings: dict, *, epsilon: float) -> dict:
    s = settings
    return {"k": s.get("gen.k", 5), "model": s["gen.model"], "epochs": s["gen.epochs"], "batch_size": s["gen.batch"],
            "clip_norm": s["gen.clip"], "learning_rate": s["gen.lr"], "hidden": s["gen.hidden"],
            "latent_dim": s["gen.latent"], "n_hidden": s["gen.n_hidden"], "epsilon": epsilon, "delta": DELTA,
            "kmeans_share": s["gen.kshare"], "kmeans_iter": s["gen.kiter"], "accountant": "pld",
            "partition": "labels"}


def one_run(gd, settings: dict, *, epsilon: float) -> dict:
    """Plan, train (fresh OS-entropy noise), draw; the class agreement, the MMD, the times."""
    from dpkme.generative import class_agreement
    from dpkme.metrics import mmd
    from ui import generative as GN

    ds = gd.ds
    params = _params(settings, epsilon=epsilon)
    L = min(params["batch_size"], ds.n)
    load0 = _load()
    t0, c0 = time.perf_counter(), time.process_time()
    p = GN.plan(epsilon=epsilon, delta=DELTA, n_private=ds.n, batch_size=L, epochs=params["epochs"], k=1,
                kmeans_share=0.2, kmeans_iter=5, accountant="pld", partition="labels")
    res = GN.run(gd, p, {**params, "batch_size": L}, n_private=ds.n)
    t1, c1 = time.perf_counter(), time.process_time()
    G, lab, _ = res.sample_with_labels(N_DRAW)
    t2, c2 = time.perf_counter(), time.process_time()
    agree = class_agreement(G, lab, reference=ds.heldout, reference_labels=gd.heldout_labels, n_classes=10,
                            bounds=gd.bounds, check=ds.X, check_labels=gd.labels)
    kern = GN.mmd_kernel(ds.dim)
    H = GN.scaled(gd, ds.heldout)
    return {"epsilon": epsilon, "epsilon_charged": float(res.epsilon), "steps": int(p.steps),
            "sampling_rate": float(p.sampling_rate), "noise_multiplier": float(p.noise_multiplier),
            "agreement": agree.accuracy, "per_class": agree.per_class.tolist(),
            "classifier_on_private": agree.reference_accuracy,
            "mmd": float(mmd(GN.scaled(gd, G[:500]), H, kernel=kern)),
            "train_wall": t1 - t0, "train_cpu": c1 - c0, "draw_wall": t2 - t1, "draw_cpu": c2 - c1,
            "load_before": load0, "load_after": _load()}


def references(gd) -> dict:
    from dpkme.metrics import mmd
    from ui import generative as GN

    ds = gd.ds
    rng = np.random.default_rng(0)
    kern = GN.mmd_kernel(ds.dim)
    H = GN.scaled(gd, ds.heldout)
    take = rng.choice(ds.n, size=500, replace=False)
    return {"mmd_uniform": float(mmd(rng.uniform(size=(500, ds.dim)), H, kernel=kern)),
            "mmd_private": float(mmd(GN.scaled(gd, ds.X[take]), H, kernel=kern))}


def _mean_range(vals) -> str:
    v = np.asarray(vals, dtype=float)
    return f"{v.mean():.3f} ({v.min():.3f}–{v.max():.3f})"


def write_md(res: dict) -> str:
    L = ["# Issue 26: recognisable digits from the Generative page's defaults (ε-vs-quality)", "",
         f"`python benchmarks/bench_dpgm_quality.py{res['argv']}` — {res['date']}; {res['lscpu']}. "
         f"Shared machine ({os.cpu_count()} cores, other jobs running): times are indicative; the load average "
         "(1 min) is recorded with each group of runs.", "",
         "**Settings** (the page's defaults for the digits split by label, `ui.generative.default_settings`): "
         f"{res['settings_text']}; δ = 10⁻⁶, add/remove, PLD accountant; fresh OS-entropy noise every run. "
         f"Large batches (q = {res['groups'][0]['runs'][0]['sampling_rate']:.3g} of the 1,438 private digits in "
         f"every step) and few steps ({res['groups'][0]['runs'][0]['steps']}): each step's sum of clipped gradients "
         "is large against its noise.", "",
         "**Class agreement**: 1,000 generated digits; a softmax classifier trained on the 359 real held-out digits "
         "(`dpkme.generative.class_agreement`) assigns each a class; the share given the class of the model that "
         f"drew it (chance 0.1; the same classifier on the 1,438 real private digits: "
         f"{res['classifier_on_private']:.3f}, the owner's check). **MMD** of 500 generated digits to the held-out "
         f"digits (the page's evaluation): uniform static {res['refs']['mmd_uniform']:.3f}, the private digits "
         f"themselves {res['refs']['mmd_private']:.3f}.", "",
         "| settings | ε | runs | SGD steps | σ | class agreement, mean (range) | MMD, mean (range) | training wall (s) "
         "| training CPU (s) | drawing 1,000 (s) | load before → after |",
         "|---|---|---|---|---|---|---|---|---|---|---|"]
    for g in sorted(res["groups"], key=lambda g: (g["name"] != "defaults", g["name"], g["epsilon"])):
        rs = g["runs"]
        L.append(f"| {g['name']} | {g['epsilon']:g} | {len(rs)} | {rs[0]['steps']} | {rs[0]['noise_multiplier']:.3g} "
                 f"| **{_mean_range([r['agreement'] for r in rs])}** | {_mean_range([r['mmd'] for r in rs])} | "
                 + ", ".join(f"{r['train_wall']:.1f}" for r in rs) + " | "
                 + ", ".join(f"{r['train_cpu']:.1f}" for r in rs) + " | "
                 + ", ".join(f"{r['draw_wall']:.1f}" for r in rs)
                 + f" | {rs[0]['load_before']} → {rs[-1]['load_after']} |")
    L += ["", "Per class (the default settings; mean over the runs of each ε): the share of each class's generated "
          "digits that the classifier gives that class.", "",
          "| ε | " + " | ".join(str(c) for c in range(10)) + " |", "|---|" + "---|" * 10]
    for g in sorted(res["groups"], key=lambda g: g["epsilon"]):
        if g["name"] != "defaults":
            continue
        per = np.nanmean(np.array([r["per_class"] for r in g["runs"]], dtype=float), axis=0)
        L.append(f"| {g['epsilon']:g} | " + " | ".join(f"{v:.2f}" for v in per) + " |")
    first = res["groups"][0]["runs"][0]
    by_eps = {g["epsilon"]: g["runs"] for g in res["groups"] if g["name"] == "defaults"}
    one = [r["agreement"] for r in by_eps.get(1.0, [])]
    prev = [r["agreement"] for g in res["groups"] if g["name"] != "defaults" and g["epsilon"] == 1.0 for r in g["runs"]]
    L += ["", "## Reading", ""]
    if one:
        L.append(f"* **The bar (issue 26): at least 0.70 of the generated digits get their model's class at the page's "
                 f"default ε = 1.** Every run did: {min(one):.3f}–{max(one):.3f} over {len(one)} runs (mean "
                 f"{np.mean(one):.3f})" + (f"; the previous defaults gave {np.mean(prev):.3f} at ε = 1" if prev else "")
                 + ". ε = 1 leaves most of the app's default budget of 5 to the private row count the page charges once and "
                 "to the session's other releases.")
    L += ["* The agreement can exceed the classifier's accuracy on real digits: each model, trained on its class's "
          "rows through heavy noise, draws digits near its class's typical one (easy to classify) with less variety "
          "than real digits; the MMD, which also sees the variety, stays above the private digits' own floor and "
          "falls with ε.",
          f"* The runs went in the order ε = 1, 0.3, 2, 5, 10. The first one is a fresh process's default run: "
          f"training {first['train_wall']:.1f} s wall, {first['train_cpu']:.1f} s CPU, nearly all of it compiling the "
          "models; the later runs reuse the compiled step (a fraction of a second each). The wall times are inflated "
          "by the load recorded; on 2 idle cores the wall time is about the CPU time or less.",
          "* How the defaults were chosen: by the rules of `dpkme.generative.dpgm`'s *Settings for small ε* (large "
          "batches, few steps, a small model), then a small grid at ε = 1 (L = 256, 512, 1024 or all rows; 3–40 "
          "epochs; hidden 8–32; latent 1–4; learning rate 0.003–0.3; 4–6 runs each) scored by this same class "
          "agreement. The digits are a public benchmark set, so this is tuning on public data; but the held-out digits "
          "that train the classifier are then not an untouched test set for these numbers.",
          "* The page's whole default run (plan, training, image grid, MMD table with its Algorithm 2 comparison, "
          "rows CSV) is in `benchmarks/results/dpgm_defaults.md`."]
    return "\n".join(L) + "\n"


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--runs", type=int, default=3, help="runs per ε (default 3)")
    ap.add_argument("--previous", action="store_true", help="also the previous defaults at ε = 1 and 10")
    ap.add_argument("--from-json", action="store_true", help="rewrite the .md from the last .json (no runs)")
    args = ap.parse_args()
    if args.from_json:
        (RESULTS / "dpgm_quality.md").write_text(write_md(json.loads((RESULTS / "dpgm_quality.json").read_text())))
        return
    logging.getLogger("streamlit").setLevel(logging.ERROR)
    from ui import generative as GN

    gd = GN.digits_data()
    settings = GN.default_settings("digits", "labels")
    res = {"date": time.strftime("%Y-%m-%d %H:%M UTC", time.gmtime()), "lscpu": _lscpu(),
           "argv": "".join(f" {a}" for a in sys.argv[1:]), "settings": settings,
           "settings_text": GN.settings_text(settings, partition="labels"), "refs": references(gd), "groups": []}
    plan = [("defaults", settings, e) for e in EPSILONS]
    if args.previous:
        prev = {**settings, **PREVIOUS}
        plan += [("previous (L = 256, VAE 32/4, lr 0.003, 40 epochs)", prev, e) for e in (1.0, 10.0)]
    for name, s, eps in plan:
        runs = []
        for _ in range(args.runs):
            r = one_run(gd, s, epsilon=eps)
            print(name, {k: (round(v, 3) if isinstance(v, float) else v) for k, v in r.items() if k != "per_class"},
                  flush=True)
            runs.append(r)
        res["groups"].append({"name": name, "epsilon": eps, "runs": runs})
    res["classifier_on_private"] = res["groups"][0]["runs"][0]["classifier_on_private"]
    RESULTS.mkdir(parents=True, exist_ok=True)
    (RESULTS / "dpgm_quality.json").write_text(json.dumps(res, indent=1, default=str))
    (RESULTS / "dpgm_quality.md").write_text(write_md(res))
    print(write_md(res))


if __name__ == "__main__":
    main()
