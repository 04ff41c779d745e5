"""Benchmark of DPGM (Acs et al.; issue 17): utility of generated rows against KME releases at equal ε.

Usage::

    python benchmarks/bench_dpgm.py [--quick] [--epochs 10]
    python benchmarks/bench_dpgm.py --tune     # validation-split grid for the by-label settings (ε = 3)
    python benchmarks/bench_dpgm.py --tstr     # rerun the TSTR table and the app interaction only

1. **TSTR on the digits** (train on synthetic, test on real): the bundled 8×8 digits, 20 % held out (a fixed
   random split, seed 0), the digit label a column of the record. For ε ∈ {1, 3, 10}, δ = 1e-5 (add/remove):
   DPGM (k = 5, VAE) samples as many labelled rows as there are private rows; a logistic regression trained on
   them is scored on the real held-out rows. Next to it: the same DPGM without privacy (the non-private twin),
   the classifier trained on the real private rows (the ceiling), and a **KME release** at the same ε and δ under
   the same relation: :func:`dpkme.release_table` (Algorithm 2) on the table with the 64 pixels as declared
   integer columns [0, 16] and the digit as a declared categorical column, so its synthetic rows carry a label
   from the one-hot block (the reduced-set solver keeps categorical coordinates on their levels). Also DPGM with
   one model per class (``partition="labels"``, settings :data:`BY_LABEL` chosen by ``--tune`` on a validation
   split inside the private rows, never on the held-out test rows), and two diagnostics of the k-means DPGM: its
   accuracy with the generated labels shuffled (the null of a label-feature-independent sampler) and the share of
   generated labels a classifier trained on the real private rows agrees with.
2. **MMD to held-out rows** on the paper's mixture (``/work/shared/data/mixture_of_Gaussians_N100000_D2.npz``,
   5,000 private + 1,000 held-out rows; skipped if absent) and on the bundled penguins table (four measurements,
   species as the label): DPGM's generated rows vs an Algorithm 2 release (weighted points) at the same ε, the
   private rows themselves (the floor) and uniform rows in the declared box (the ceiling). Gaussian kernel with
   lengthscale √d/4 on the columns scaled to [0, 1] by their declared bounds (the app's evaluation kernel).
3. **The app's default interaction** on the digits (k = 5, VAE with one hidden layer of 64, latent 8, 3 epochs,
   L = 64, ε = 1, δ = 1e-6): plan, train, draw the image grid, the MMD table (with its Algorithm 2 comparison)
   and the rows CSV, through ``ui/generative.py`` (the page's code path), wall time.

One run per cell (fresh OS-entropy noise): the spread between runs is not measured; the numbers are indicative.
The machine is shared (2 cores): CPU and load average are recorded next to the times.

Writes ``benchmarks/results/dpgm.json`` and ``benchmarks/results/dpgm.md``.
"""

from __future__ import annotations

import argparse
import json
import math
import os
import platform
import sys
import time
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

import dpkme  # noqa: E402
from dpkme.datasets import load_digits  # noqa: E402
from dpkme.generative import dpgm  # noqa: E402
from dpkme.kernels import GaussianKernel  # noqa: E402
from dpkme.metrics import mmd  # noqa: E402

RESULTS = ROOT / "benchmarks" / "results"
MIXTURE_FILE = Path("/work/shared/data/mixture_of_Gaussians_N100000_D2.npz")
MIXTURE_BOUNDS = (-800.0, 1000.0)    # declared from the generator: 100 ± (4·200 + 3·30), rounded
EPSILONS = (1.0, 3.0, 10.0)
DELTA = 1e-5


def cpu_info() -> dict:
    model = platform.processor() or ""
    try:
        for line in Path("/proc/cpuinfo").read_text().splitlines():
            if line.startswith("model name"):
                model = line.split(":", 1)[1].strip()
                break
    except OSError:
        pass
    return {"cpu": model, "cores": os.cpu_count(), "python": platform.python_version()}


def split(n: int, frac: float = 0.2, seed: int = 0):
    perm = np.random.default_rng(seed).permutation(n)
    n_held = int(round(frac * n))
    return np.sort(perm[n_held:]), np.sort(perm[:n_held])


def tstr_accuracy(Xtr, ytr, Xte, yte, weights=None) -> float:
    from sklearn.linear_model import LogisticRegression

    if len(np.unique(ytr)) < 2:
        return float(np.mean(yte == (ytr[0] if len(ytr) else 0)))
    clf = LogisticRegression(max_iter=2000)
    clf.fit(Xtr, ytr, sample_weight=weights)
    return float(clf.score(Xte, yte))


def digits_schema():
    from dpkme.schema import ColumnSpec, TableSchema

    cols = [ColumnSpec(f"p{i}", "integer", lower=0, upper=16) for i in range(64)]
    cols.append(ColumnSpec("digit", "categorical", categories=list(range(10))))
    return TableSchema(cols)


def kme_table_rows(X, y, *, epsilon: float, n_rows: int):
    """Algorithm 2 release of the labelled digits table (add/remove) and ``n_rows`` sampled rows with labels."""
    import pandas as pd

    df = pd.DataFrame(X.astype(int), columns=[f"p{i}" for i in range(64)])
    df["digit"] = y.astype(int)
    t0 = time.perf_counter()
    rel = dpkme.release_table(df, schema=digits_schema(), epsilon=epsilon, delta=DELTA, neighbouring="add-remove",
                              n_private=len(df))
    rows = rel.sample(n_rows)
    sec = time.perf_counter() - t0
    return rows[[f"p{i}" for i in range(64)]].to_numpy(dtype=float), rows["digit"].to_numpy().astype(int), sec, rel


def bench_tstr(epochs: int, quick: bool) -> dict:
    X, y = load_digits()
    priv, held = split(len(X))
    Xp, yp, Xh, yh = X[priv], y[priv], X[held], y[held]
    N = len(Xp)
    out = {"N_private": N, "N_heldout": len(Xh), "epochs": epochs, "k": 5, "model": "vae (hidden 128, latent 8)",
           "batch_size": 64, "clip_norm": 1.0, "delta": DELTA, "rows": []}
    real = tstr_accuracy(Xp / 16, yp, Xh / 16, yh)
    out["real_rows_accuracy"] = real
    out["by_label_config"] = {k: (list(v) if isinstance(v, tuple) else v) for k, v in BY_LABEL.items()}
    from sklearn.linear_model import LogisticRegression

    reader = LogisticRegression(max_iter=2000).fit(Xp / 16, yp)     # diagnostic: what the generated images look like
    common = dict(bounds=(0, 16), labels=yp, n_classes=10, n_private=N, k=5, epochs=epochs, batch_size=64,
                  hidden=(128,), latent_dim=8, delta=DELTA)
    t0 = time.perf_counter()
    twin = dpgm(Xp, private=False, epsilon=None, **common)
    Xs, ys, _ = twin.sample_with_labels(N)
    out["nonprivate_twin"] = {"accuracy": tstr_accuracy(Xs / 16, ys, Xh / 16, yh),
                              "seconds": time.perf_counter() - t0}
    print("twin", out["nonprivate_twin"], flush=True)
    twin_l = dpgm(Xp, bounds=(0, 16), labels=yp, n_classes=10, n_private=N, private=False, epsilon=None, delta=DELTA,
                  **BY_LABEL)
    Xs, ys, _ = twin_l.sample_with_labels(N)
    out["nonprivate_twin_by_label"] = {"accuracy": tstr_accuracy(Xs / 16, ys, Xh / 16, yh)}
    print("twin by label", out["nonprivate_twin_by_label"], flush=True)
    for eps in (EPSILONS[:1] if quick else EPSILONS):
        row = {"epsilon": eps}
        t0 = time.perf_counter()
        res = dpgm(Xp, epsilon=eps, **common)
        Xs, ys, _ = res.sample_with_labels(N)
        row["dpgm_accuracy"] = tstr_accuracy(Xs / 16, ys, Xh / 16, yh)
        row["dpgm_seconds"] = time.perf_counter() - t0
        row["dpgm_epsilon_charged"] = res.epsilon
        row["noise_multiplier"] = res.plan.noise_multiplier
        row["dpgm_label_histogram"] = np.bincount(ys, minlength=10).tolist()
        row["dpgm_null"] = null_accuracy(Xs / 16, ys, Xh / 16, yh)
        row["dpgm_label_agreement"] = float(np.mean(reader.predict(Xs / 16) == ys))
        row["dpgm_weights"] = np.round(res.weights, 3).tolist()
        runs, agree, secs = [], [], []
        for _ in range(BY_LABEL_REPS):             # cheap: repeated with fresh noise to show the spread
            t0 = time.perf_counter()
            rl = dpgm(Xp, bounds=(0, 16), labels=yp, n_classes=10, n_private=N, epsilon=eps, delta=DELTA,
                      **BY_LABEL)
            Xs, ys, _ = rl.sample_with_labels(N)
            runs.append(tstr_accuracy(Xs / 16, ys, Xh / 16, yh))
            secs.append(time.perf_counter() - t0)
            agree.append(float(np.mean(reader.predict(Xs / 16) == ys)))
        row["by_label_runs"] = runs
        row["by_label_accuracy"] = float(np.mean(runs))
        row["by_label_seconds"] = secs[0]
        row["by_label_epsilon_charged"] = rl.epsilon
        row["by_label_label_agreement"] = float(np.mean(agree))
        try:
            Xk, yk, sec, rel = kme_table_rows(Xp, yp, epsilon=eps, n_rows=N)
            row["kme_accuracy"] = tstr_accuracy(Xk / 16, yk, Xh / 16, yh)
            row["kme_seconds"] = sec
            row["kme_points"] = int(rel.n_points)
        except Exception as exc:  # report, do not hide
            row["kme_error"] = f"{type(exc).__name__}: {exc}"[:300]
        print(row, flush=True)
        out["rows"].append(row)
    return out


#: DPGM with one model per class (``partition="labels"``) in the TSTR table. Chosen by ``--tune`` on a validation
#: split inside the private rows (ε = 3 only; the held-out test rows are never used for the choice).
BY_LABEL = dict(partition="labels", batch_size=256, hidden=(32,), latent_dim=4, learning_rate=3e-3, epochs=40)

#: Runs of the by-label DPGM per ε in the TSTR table (mean and range reported).
BY_LABEL_REPS = 3

#: The grid of ``--tune`` (ε = 3, one run each, accuracy on the validation split).
TUNE_GRID = {
    "labels-L64-h128-e10": dict(partition="labels", batch_size=64, hidden=(128,), latent_dim=8, learning_rate=1e-3,
                                epochs=10),
    "labels-L256-h128-e10": dict(partition="labels", batch_size=256, hidden=(128,), latent_dim=8,
                                 learning_rate=1e-3, epochs=10),
    "labels-L256-h32-e20": dict(partition="labels", batch_size=256, hidden=(32,), latent_dim=4, learning_rate=3e-3,
                                epochs=20),
    "labels-L128-h32-e20": dict(partition="labels", batch_size=128, hidden=(32,), latent_dim=4, learning_rate=3e-3,
                                epochs=20),
    "labels-L256-h32-e40": dict(partition="labels", batch_size=256, hidden=(32,), latent_dim=4, learning_rate=3e-3,
                                epochs=40),
    "labels-L512-h32-e40": dict(partition="labels", batch_size=512, hidden=(32,), latent_dim=4, learning_rate=3e-3,
                                epochs=40),
    "kmeans-k5-L64-h128-e10": dict(k=5, batch_size=64, hidden=(128,), latent_dim=8, learning_rate=1e-3, epochs=10),
    "kmeans-k1-L256-h32-e20": dict(k=1, batch_size=256, hidden=(32,), latent_dim=4, learning_rate=3e-3, epochs=20),
}


def bench_tune(eps: float = 3.0) -> list:
    """Validation-split accuracy of :data:`TUNE_GRID` (20 % of the private rows as validation, seed 1)."""
    X, y = load_digits()
    priv, _ = split(len(X))
    Xp, yp = X[priv], y[priv]
    tr, va = split(len(Xp), seed=1)
    out = []
    for name, cfg in TUNE_GRID.items():
        t0 = time.perf_counter()
        res = dpgm(Xp[tr], bounds=(0, 16), labels=yp[tr], n_classes=10, n_private=len(tr), epsilon=eps, delta=DELTA,
                   **cfg)
        Xs, ys, _ = res.sample_with_labels(len(tr))
        row = {"name": name, "epsilon": eps, "validation_accuracy": tstr_accuracy(Xs / 16, ys, Xp[va] / 16, yp[va]),
               "noise_multiplier": res.plan.noise_multiplier, "seconds": time.perf_counter() - t0}
        print(row, flush=True)
        out.append(row)
    return out


def null_accuracy(Xs, ys, Xh, yh, *, n_perm: int = 10, seed: int = 0) -> dict:
    """TSTR accuracy with the generated labels shuffled (labels independent of the features): its spread shows what
    a classifier that learned an arbitrary, confident label mapping scores; far below 0.1 is common."""
    rng = np.random.default_rng(seed)
    acc = [tstr_accuracy(Xs, rng.permutation(ys), Xh, yh) for _ in range(n_perm)]
    return {"mean": float(np.mean(acc)), "min": float(np.min(acc)), "max": float(np.max(acc)), "n": n_perm}


#: Variants of the DPGM settings for the TSTR table (``--variants``): larger batches and smaller models give each
#: noisy step more signal (the noise is σC on a sum over about L/k rows per model).
VARIANTS = {
    "k5-L256-h32": dict(k=5, batch_size=256, hidden=(32,), latent_dim=4, learning_rate=3e-3, epochs=20),
    "k1-L256-h32": dict(k=1, batch_size=256, hidden=(32,), latent_dim=4, learning_rate=3e-3, epochs=20),
}


def bench_variants(quick: bool) -> list:
    X, y = load_digits()
    priv, held = split(len(X))
    Xp, yp, Xh, yh = X[priv], y[priv], X[held], y[held]
    out = []
    for name, cfg in VARIANTS.items():
        for eps in (EPSILONS[:1] if quick else EPSILONS):
            t0 = time.perf_counter()
            res = dpgm(Xp, bounds=(0, 16), labels=yp, n_classes=10, n_private=len(Xp), epsilon=eps, delta=DELTA,
                       **cfg)
            Xs, ys, _ = res.sample_with_labels(len(Xp))
            row = {"variant": name, **{k: (list(v) if isinstance(v, tuple) else v) for k, v in cfg.items()},
                   "epsilon": eps, "dpgm_accuracy": tstr_accuracy(Xs / 16, ys, Xh / 16, yh),
                   "noise_multiplier": res.plan.noise_multiplier, "steps": res.steps_run,
                   "seconds": time.perf_counter() - t0}
            print(row, flush=True)
            out.append(row)
        twin = dpgm(Xp, bounds=(0, 16), labels=yp, n_classes=10, n_private=len(Xp), private=False, epsilon=None,
                    delta=DELTA, **cfg)
        Xs, ys, _ = twin.sample_with_labels(len(Xp))
        out.append({"variant": name, "epsilon": math.inf, "dpgm_accuracy": tstr_accuracy(Xs / 16, ys, Xh / 16, yh)})
        print(out[-1], flush=True)
    return out


def scaled(X, lo, hi):
    return np.clip((np.asarray(X, float) - lo) / (hi - lo), 0.0, 1.0)


def mmd_panel(name, Xp, Xh, lo, hi, *, labels=None, n_classes=0, epochs: int, quick: bool) -> dict:
    d = Xp.shape[1]
    kern = GaussianKernel(lengthscale=math.sqrt(d) / 4.0)
    Hs = scaled(Xh, lo, hi)
    rng = np.random.default_rng(1)
    n_eval = min(1000, len(Xp))
    out = {"dataset": name, "N_private": len(Xp), "N_heldout": len(Xh), "d": d, "epochs": epochs, "rows": []}
    take = rng.choice(len(Xp), n_eval, replace=False)
    out["floor_private_rows"] = mmd(scaled(Xp[take], lo, hi), Hs, kernel=kern)
    out["uniform_box"] = mmd(rng.uniform(size=(n_eval, d)), Hs, kernel=kern)
    batch = 64 if len(Xp) < 2000 else 128
    for eps in (EPSILONS[:1] if quick else EPSILONS):
        row = {"epsilon": eps}
        t0 = time.perf_counter()
        res = dpgm(Xp, bounds=(lo, hi), labels=labels, n_classes=n_classes or None, n_private=len(Xp), k=5,
                   epochs=epochs, batch_size=batch, hidden=(64,), latent_dim=4, likelihood="gaussian", epsilon=eps,
                   delta=DELTA)
        G = res.sample(n_eval)
        row["dpgm_mmd"] = mmd(scaled(G, lo, hi), Hs, kernel=kern)
        row["dpgm_seconds"] = time.perf_counter() - t0
        t0 = time.perf_counter()
        rel = dpkme.algorithm2(scaled(Xp, lo, hi), kernel=kern, epsilon=eps, delta=DELTA, n_points=100,
                               n_features=2000, neighbouring="add-remove", n_private=len(Xp),
                               initial_points=rng.uniform(size=(400, d)))
        w = np.clip(rel.weights, 0, None)
        w = w / w.sum() if w.sum() > 0 else np.full(len(w), 1 / len(w))
        row["kme_mmd"] = mmd(np.clip(rel.points, 0, 1), Hs, kernel=kern, weights_x=w)
        row["kme_seconds"] = time.perf_counter() - t0
        print(name, row, flush=True)
        out["rows"].append(row)
    return out


def bench_mmd(epochs: int, quick: bool) -> list:
    panels = []
    if MIXTURE_FILE.is_file():
        Z = np.load(MIXTURE_FILE)
        X = Z[Z.files[0]] if "X" not in Z.files else Z["X"]
        X = np.asarray(X, float)[:6000]
        priv, held = split(len(X), frac=1 / 6)
        lo, hi = np.full(2, MIXTURE_BOUNDS[0]), np.full(2, MIXTURE_BOUNDS[1])
        panels.append(mmd_panel("paper's mixture (D = 2, file)", X[priv], X[held], lo, hi, epochs=epochs,
                                quick=quick))
    else:
        panels.append({"dataset": "paper's mixture", "skipped": f"{MIXTURE_FILE} absent"})
    from dpkme.datasets import load_sample, load_schema

    frame, _ = load_sample("penguins")
    specs = {c.name: c for c in load_schema("penguins").columns}
    cols = ["bill_length_mm", "bill_depth_mm", "flipper_length_mm", "body_mass_g"]
    lo = np.array([float(specs[c].lower) for c in cols])
    hi = np.array([float(specs[c].upper) for c in cols])
    X = frame[cols].to_numpy(float)
    X = np.where(np.isnan(X), (lo + hi) / 2, X)
    classes = list(specs["species"].categories)
    y = frame["species"].map({c: i for i, c in enumerate(classes)}).to_numpy().astype(int)
    priv, held = split(len(X))
    panels.append(mmd_panel("penguins (4 measurements + species)", X[priv], X[held], lo, hi, labels=y[priv],
                            n_classes=3, epochs=max(epochs, 20), quick=quick))
    return panels


def bench_app_default() -> dict:
    import logging

    logging.getLogger("streamlit").setLevel(logging.ERROR)
    from ui import generative as GN

    t0 = time.perf_counter()
    gd = GN.digits_data()
    params = {"k": 5, "model": "vae", "epochs": 3, "batch_size": 64, "clip_norm": 1.0, "learning_rate": 1e-3,
              "hidden": 64, "latent_dim": 8, "n_hidden": 64, "epsilon": 1.0, "delta": 1e-6, "kmeans_share": 0.2,
              "kmeans_iter": 5, "accountant": "pld"}
    p = GN.plan(epsilon=1.0, delta=1e-6, n_private=gd.ds.n, batch_size=64, epochs=3, k=5, kmeans_share=0.2,
                kmeans_iter=5, accountant="pld")
    t_plan = time.perf_counter() - t0
    est = GN.estimate(gd, params, p)
    res = GN.run(gd, p, params)
    t_run = time.perf_counter() - t0
    GN.generated_by_cluster(res)
    ev = GN.evaluate(gd, res)
    GN.rows_csv(res, gd, gd.ds.n)
    total = time.perf_counter() - t0
    return {"plan_seconds": t_plan, "train_seconds": t_run - t_plan, "total_seconds": total,
            "estimate_seconds": est.seconds, "steps": p.steps, "mmd": ev}


def write_md(res: dict) -> str:
    L = ["# DPGM benchmark (issue 17)", "",
         f"`python benchmarks/bench_dpgm.py{' --quick' if res['quick'] else ''} --epochs {res['epochs']}` — "
         f"{res['machine']['cpu']} ({res['machine']['cores']} cores, shared), load average before "
         f"{res['load_before']}, after {res['load_after']}; total {res['seconds']:.0f} s. One run per cell with "
         "fresh noise: indicative, not averaged.", ""]
    if res.get("tstr_seconds"):
        L += [f"The TSTR table and the app's default interaction were rerun with `--tstr` ({res['tstr_seconds']:.0f} s "
              f"for the table, load average before {res['tstr_load_before']}, after {res['tstr_load_after']}); the "
              "MMD panels are from the full run.", ""]
    t = res["tstr"]
    L += ["## TSTR on the digits (train on synthetic, test on real held-out rows)", "",
          f"N = {t['N_private']} private rows, {t['N_heldout']} held out; DPGM k = {t['k']}, {t['model']}, "
          f"{t['epochs']} epochs, L = {t['batch_size']}, C = {t['clip_norm']}; δ = {t['delta']:g}, add/remove. "
          "Logistic regression on the pixels/16; accuracy on the held-out rows.", "",
          "| ε | DPGM (generated rows) | KME release (Algorithm 2, labelled table) | DPGM time (s) | KME time (s) |",
          "|---|---|---|---|---|"]
    by_label = all("by_label_accuracy" in r for r in t["rows"]) and t["rows"]
    if by_label:
        bl = t["by_label_config"]
        L[-4] = L[-4] + (f" Third column: DPGM with one model per class (`partition=\"labels\"`: L = {bl['batch_size']}, "
                         f"VAE {bl['hidden'][0]}/{bl['latent_dim']}, lr {bl['learning_rate']:g}, {bl['epochs']} epochs; "
                         "chosen on a validation split of the private rows, below; mean of "
                         f"{BY_LABEL_REPS} runs with fresh noise, range in brackets, time of the first run). Last two columns (diagnostics of "
                         "the k-means DPGM): its accuracy with the generated labels shuffled (min–max of 10), and the "
                         "share of its generated rows whose label a classifier trained on the real private rows agrees "
                         "with (by label: the same share for the third column).")
        L[-2] = ("| ε | DPGM, k-means (generated rows) | KME release (Algorithm 2, labelled table) | DPGM, one model per "
                 "class | DPGM time (s) | KME time (s) | by-label time (s) | k-means DPGM, shuffled labels | label "
                 "agreement (k-means / by label) |")
        L[-1] = "|---|---|---|---|---|---|---|---|---|"
    for r in t["rows"]:
        kme = f"{r['kme_accuracy']:.3f}" if "kme_accuracy" in r else f"failed: {r.get('kme_error', '')[:80]}"
        if by_label:
            nl = r.get("dpgm_null", {})
            rr = r.get("by_label_runs", [r["by_label_accuracy"]])
            spread = f" ({min(rr):.2f}–{max(rr):.2f}, {len(rr)} runs)" if len(rr) > 1 else ""
            L.append(f"| {r['epsilon']:g} | {r['dpgm_accuracy']:.3f} | {kme} | **{r['by_label_accuracy']:.3f}**{spread} | "
                     f"{r['dpgm_seconds']:.0f} | {r.get('kme_seconds', float('nan')):.0f} | {r['by_label_seconds']:.0f} "
                     f"| {nl.get('min', float('nan')):.3f}–{nl.get('max', float('nan')):.3f} | "
                     f"{r['dpgm_label_agreement']:.2f} / {r['by_label_label_agreement']:.2f} |")
            continue
        L.append(f"| {r['epsilon']:g} | {r['dpgm_accuracy']:.3f} | {kme} | {r['dpgm_seconds']:.0f} | "
                 f"{r.get('kme_seconds', float('nan')):.0f} |")
    L += ["", f"Non-private twin (same DPGM, no clipping/noise): **{t['nonprivate_twin']['accuracy']:.3f}**"
          + (f" (one model per class: **{t['nonprivate_twin_by_label']['accuracy']:.3f}**)"
             if t.get("nonprivate_twin_by_label") else "")
          + f"; trained on the real private rows: **{t['real_rows_accuracy']:.3f}**; chance: 0.100.", ""]
    if res.get("tune"):
        tu = res["tune"]
        L += [f"Choice of the by-label settings (`--tune`): ε = 3, δ = {DELTA:g}, trained on 80 % of the private rows, "
              "accuracy on the other 20 % (a validation split; the held-out test rows above are not used). One run "
              f"each (load average {tu['load_before'][0]:g} → {tu['load_after'][0]:g}), so differences under ~0.1 "
              "are noise.", "", "| setting | validation accuracy | σ | time (s) |", "|---|---|---|---|"]
        for r in tu["rows"]:
            L.append(f"| {r['name']} | {r['validation_accuracy']:.3f} | {r['noise_multiplier']:.2f} | "
                     f"{r['seconds']:.0f} |")
        L.append("")
    if res.get("tstr_variants"):
        L += ["Other settings (`--variants`; same split, classifier and δ; DPGM only): larger batches and smaller "
              "models give each noisy step more signal.", "",
              "| variant | k | L | VAE hidden/latent | lr | epochs | ε = 1 | ε = 3 | ε = 10 | non-private |",
              "|---|---|---|---|---|---|---|---|---|---|"]
        for name, cfg in VARIANTS.items():
            rows = {r["epsilon"]: r["dpgm_accuracy"] for r in res["tstr_variants"] if r["variant"] == name}
            cells = [f"{rows[e]:.3f}" if e in rows else "—" for e in (*EPSILONS, math.inf)]
            L.append(f"| {name} | {cfg['k']} | {cfg['batch_size']} | {cfg['hidden'][0]}/{cfg['latent_dim']} | "
                     f"{cfg['learning_rate']:g} | {cfg['epochs']} | " + " | ".join(cells) + " |")
        L.append("")
    L += ["## MMD of generated rows to held-out rows (smaller is closer)", ""]
    for p in res["mmd"]:
        if "skipped" in p:
            L += [f"*{p['dataset']}*: skipped ({p['skipped']}).", ""]
            continue
        L += [f"**{p['dataset']}** — N = {p['N_private']}, {p['N_heldout']} held out, d = {p['d']}, "
              f"{p['epochs']} epochs; private rows (floor) {p['floor_private_rows']:.4f}, uniform in the declared "
              f"box {p['uniform_box']:.4f}.", "",
              "| ε | DPGM | KME release (Algorithm 2, M = 100) | DPGM time (s) | KME time (s) |", "|---|---|---|---|---|"]
        for r in p["rows"]:
            L.append(f"| {r['epsilon']:g} | {r['dpgm_mmd']:.4f} | {r['kme_mmd']:.4f} | {r['dpgm_seconds']:.0f} | "
                     f"{r['kme_seconds']:.1f} |")
        L.append("")
    a = res.get("app_default")
    if a:
        L += ["## The app's default interaction (digits, k = 5, VAE 64/8, 3 epochs, ε = 1, δ = 1e-6)", "",
              f"Plan {a['plan_seconds']:.1f} s, training {a['train_seconds']:.1f} s ({a['steps']} SGD steps), "
              f"everything the page shows after the run included (image grid, MMD table with its Algorithm 2 "
              f"comparison, rows CSV): **{a['total_seconds']:.1f} s** (the page's own estimate: "
              f"{a['estimate_seconds']:.0f} s)."
              + (" Measured with `--tstr`, in the same process after the TSTR runs, so part of the compiled code (the "
                 "private k-means, the samplers) was already there; a fresh process compiles it again (the page's "
                 "estimate assumes that)." if res.get("tstr_seconds") else ""), ""]
    b = res.get("app_default_rerun")
    if b:
        L += [f"Rerun alone (`--app`, load average {b['load_before'][0]:g} → {b['load_after'][0]:g}): plan "
              f"{b['plan_seconds']:.1f} s, training {b['train_seconds']:.1f} s, everything **{b['total_seconds']:.1f} s**.",
              ""]
    L += reading(res)
    return "\n".join(L) + "\n"


def reading(res: dict) -> list:
    """What the tables say, where DPGM loses included (computed from the results, so it stays true on a rerun)."""
    t = res["tstr"]
    best = max((r["dpgm_accuracy"] for r in t["rows"]), default=float("nan"))
    var = [r["dpgm_accuracy"] for r in res.get("tstr_variants", []) if math.isfinite(r["epsilon"])]
    kme = [r["kme_accuracy"] for r in t["rows"] if "kme_accuracy" in r]
    wins = [r["epsilon"] for r in t["rows"] if "kme_accuracy" in r and r["dpgm_accuracy"] > r["kme_accuracy"]]
    L = ["## Reading", "",
         f"* **The pipeline works without privacy**: the non-private twin reaches {t['nonprivate_twin']['accuracy']:.2f} "
         f"TSTR accuracy (real rows: {t['real_rows_accuracy']:.2f}), so the models, the label block and the sampler "
         "do their job.",
         f"* **Under DP at this size the k-means DPGM (the paper's pipeline) loses most of it**: the best private TSTR accuracy here is {best:.2f}"
         + (f" ({max(var):.2f} with the larger-batch variants)" if var else "") + ". With "
         f"N = {t['N_private']} rows, L = {t['batch_size']} and k = {t['k']}, each model averages about "
         f"{t['batch_size'] / t['k']:.0f} clipped gradients per step against noise σC on their sum; the noise norm "
         "grows with the square root of the number of parameters while the clipped signal is at most C. The paper "
         "trained on 60,000 MNIST rows."]
    nulls = [r["dpgm_null"] for r in t["rows"] if "dpgm_null" in r]
    agree = [r["dpgm_label_agreement"] for r in t["rows"] if "dpgm_label_agreement" in r]
    inside = [r["epsilon"] for r in t["rows"] if "dpgm_null" in r
              and r["dpgm_null"]["min"] <= r["dpgm_accuracy"] <= r["dpgm_null"]["max"]]
    if nulls:
        L.append(f"* **Why the k-means DPGM can score below chance (0.1), and why that is not a decoding bug**: its "
                 "generated labels are unrelated to its generated images -- a classifier trained on the real private "
                 f"rows agrees with {min(agree):.0%}–{max(agree):.0%} of them (chance: 10 %) -- and a classifier "
                 "trained on such rows learns an arbitrary but confident mapping from images to labels. Its score on "
                 "real digits is then the share of classes the mapping happens to get right: with the generated labels "
                 f"shuffled on purpose it scored {min(n['min'] for n in nulls):.3f}–{max(n['max'] for n in nulls):.3f} "
                 "here" + (f", and the k-means DPGM's score lies in its row's null range at ε = "
                           f"{', '.join(f'{e:g}' for e in inside)}" if inside else "") + ". The encoding is consistent: the same code "
                 "path without noise (the twin) scores "
                 f"{t['nonprivate_twin']['accuracy']:.2f}, so labels are encoded, decoded and read in one class "
                 "order. The cause is the training signal: the label block is 10 of 74 coordinates "
                 "of a record, under this much noise the decoder apparently learns the label marginal and no "
                 "pixel-label dependence, and the private k-means (20 % of ε on 74 dimensions; `init=\"box\"`) does "
                 "not separate the digits either: its largest cluster weight was "
                 f"{min(max(r['dpgm_weights']) for r in t['rows']):.2f}–{max(max(r['dpgm_weights']) for r in t['rows']):.2f}"
                 " across these runs.")
    else:
        L.append("* Accuracy *below* chance (0.1) means the label and pixel blocks of the generated rows disagree, not "
                 "that a mapping was learned (rerun with `--tstr` for the diagnostics).")
    bl = [r["by_label_accuracy"] for r in t["rows"] if "by_label_accuracy" in r]
    if bl:
        eps_list = ", ".join(f"{r['epsilon']:g}" for r in t["rows"])
        beats = [r["epsilon"] for r in t["rows"] if "by_label_accuracy" in r and r["by_label_accuracy"] > max(
            r["dpgm_accuracy"], r.get("kme_accuracy", 0.0))]
        L.append(f"* **One model per class** (`partition=\"labels\"`: each row trains the model of its own label, no "
                 f"k-means, equal public class weights) reaches {min(bl):.2f}–{max(bl):.2f} TSTR accuracy at "
                 f"ε = {eps_list}"
                 + (f", above both the k-means DPGM and the KME release at ε = {', '.join(f'{e:g}' for e in beats)}"
                    if beats else "") + ": each model only has to learn what its class looks like, and a row's "
                 "label is the class of the model that drew it. The images are not convincing digits -- a classifier "
                 "trained on the real rows reads only "
                 f"{min(r['by_label_label_agreement'] for r in t['rows']):.0%}–"
                 f"{max(r['by_label_label_agreement'] for r in t['rows']):.0%} of them as their label -- but the "
                 "differences between the classes' generated images point the right way, which is what the TSTR "
                 "classifier uses. The same pipeline without noise reaches "
                 f"{t['nonprivate_twin_by_label']['accuracy']:.2f} and the real rows "
                 f"{t['real_rows_accuracy']:.2f}; at the smallest ε it loses the most (each of the 10 models gets "
                 f"about {t['by_label_config']['batch_size'] / 10:.0f} clipped gradients per step against the noise). "
                 "Its settings were chosen on a validation split of the private rows at ε = 3 (one run each); the "
                 "cells are means of a few runs, with their range. The price: the class "
                 "proportions of the generated rows are the declared equal ones, not the table's.")
    if kme:
        L.append(f"* **KME release with a label column** (Algorithm 2 through a declared schema, the digit one-hot): "
                 f"TSTR accuracy {min(kme):.2f}–{max(kme):.2f}, about chance: the reduced set's rows carry labels "
                 "almost independent of their pixels at these ε. "
                 + (f"The k-means DPGM beats it at ε = {', '.join(f'{e:g}' for e in wins)}." if wins else
                    "The k-means DPGM does not beat it at any ε here."))
    for p in res["mmd"]:
        if "skipped" in p or not p["rows"]:
            continue
        worse = all(r["dpgm_mmd"] > r["kme_mmd"] for r in p["rows"])
        L.append(f"* **{p['dataset']}**: " + ("an Algorithm 2 release at the same ε is closer to held-out data than "
                                               "DPGM's rows at every ε" if worse else "mixed")
                 + f" (DPGM {min(r['dpgm_mmd'] for r in p['rows']):.3f}–{max(r['dpgm_mmd'] for r in p['rows']):.3f}, "
                 f"KME {min(r['kme_mmd'] for r in p['rows']):.3f}–{max(r['kme_mmd'] for r in p['rows']):.3f}, uniform "
                 f"rows {p['uniform_box']:.3f}).")
    a = res.get("app_default")
    b = res.get("app_default_rerun")
    if b:
        L.append(f"* **The default app interaction** took {a['total_seconds']:.0f} s during the benchmark (load "
                 f"average about {res.get('tstr_load_after', res['load_after'])[0]:g} on 2 shared cores) and "
                 f"{b['total_seconds']:.0f} s rerun "
                 f"alone (load {b['load_before'][0]:g}): the 60 s target is "
                 + ("met when the machine is not saturated." if b["total_seconds"] < 60 else "**missed**.")
                 + f" Training is {b['train_seconds']:.0f} s of it, most of that compiling the models and the private "
                   "k-means; the page's own estimate assumes a quiet machine.")
    elif a:
        met = a["total_seconds"] < 60
        L.append(f"* **The default app interaction** took {a['total_seconds']:.0f} s at load average "
                 f"{res.get('tstr_load_after', res['load_after'])[0]:g} on 2 shared cores: the 60 s target is "
                 + ("met." if met else "**missed** on this machine (training alone took "
                    f"{a['train_seconds']:.0f} s; the MMD table's Algorithm 2 comparison and the samplers' compilation "
                    "most of the rest)."))
    L.append("")
    return L


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--quick", action="store_true", help="ε = 1 only (a smoke run)")
    ap.add_argument("--epochs", type=int, default=10)
    ap.add_argument("--skip-app", action="store_true")
    ap.add_argument("--variants", action="store_true",
                    help="only run the TSTR variants and add them to the existing results/dpgm.json")
    ap.add_argument("--app", action="store_true", help="only rerun the app's default interaction (added to the JSON)")
    ap.add_argument("--rewrite", action="store_true", help="only rewrite dpgm.md from the existing dpgm.json")
    ap.add_argument("--tune", action="store_true",
                    help="only run the validation-split grid (TUNE_GRID) and add it to the existing dpgm.json")
    ap.add_argument("--tstr", action="store_true",
                    help="only rerun the TSTR table and the app's default interaction (the MMD panels are kept)")
    args = ap.parse_args()
    if args.tune:
        res = json.loads((RESULTS / "dpgm.json").read_text())
        before = [round(v, 1) for v in os.getloadavg()]
        res["tune"] = {"rows": bench_tune(), "load_before": before, "load_after": [round(v, 1) for v in os.getloadavg()]}
        (RESULTS / "dpgm.json").write_text(json.dumps(res, indent=1, default=float))
        return
    if args.tstr:
        res = json.loads((RESULTS / "dpgm.json").read_text())
        t0 = time.perf_counter()
        res["tstr_load_before"] = [round(v, 1) for v in os.getloadavg()]
        res["tstr"] = bench_tstr(args.epochs, args.quick)
        res["tstr_seconds"] = time.perf_counter() - t0
        res.pop("app_default_rerun", None)
        if not args.skip_app:
            res["app_default"] = bench_app_default()
        res["tstr_load_after"] = [round(v, 1) for v in os.getloadavg()]
        (RESULTS / "dpgm.json").write_text(json.dumps(res, indent=1, default=float))
        (RESULTS / "dpgm.md").write_text(write_md(res))
        print(write_md(res))
        return
    if args.app:
        res = json.loads((RESULTS / "dpgm.json").read_text())
        before = [round(v, 1) for v in os.getloadavg()]
        res["app_default_rerun"] = {**bench_app_default(), "load_before": before,
                                    "load_after": [round(v, 1) for v in os.getloadavg()]}
        (RESULTS / "dpgm.json").write_text(json.dumps(res, indent=1, default=float))
        (RESULTS / "dpgm.md").write_text(write_md(res))
        return
    if args.rewrite:
        res = json.loads((RESULTS / "dpgm.json").read_text())
        (RESULTS / "dpgm.md").write_text(write_md(res))
        return
    if args.variants:
        res = json.loads((RESULTS / "dpgm.json").read_text())
        res["tstr_variants"] = bench_variants(args.quick)
        res["variants_load"] = [round(v, 1) for v in os.getloadavg()]
        (RESULTS / "dpgm.json").write_text(json.dumps(res, indent=1, default=float))
        (RESULTS / "dpgm.md").write_text(write_md(res))
        print(write_md(res))
        return
    t0 = time.perf_counter()
    res = {"quick": args.quick, "epochs": args.epochs, "machine": cpu_info(),
           "load_before": [round(v, 1) for v in os.getloadavg()]}
    res["tstr"] = bench_tstr(args.epochs, args.quick)
    res["mmd"] = bench_mmd(args.epochs, args.quick)
    if not args.skip_app:
        res["app_default"] = bench_app_default()
    res["load_after"] = [round(v, 1) for v in os.getloadavg()]
    res["seconds"] = time.perf_counter() - t0
    RESULTS.mkdir(parents=True, exist_ok=True)
    (RESULTS / "dpgm.json").write_text(json.dumps(res, indent=1, default=float))
    (RESULTS / "dpgm.md").write_text(write_md(res))
    print(write_md(res))


if __name__ == "__main__":
    main()
