"""DP-SGD throughput of a 64-256-64 VAE on the 8×8 digits at batch 256: DP vs non-private SGD (issue 17).

Writes ``benchmarks/results/dpsgd.md`` (and ``dpsgd.json``). Measured, per variant, examples per second of
training steps after compilation (median over ``--repeats`` blocks of ``--steps`` steps):

* ``DP-SGD (dpkme)``: :class:`dpkme.generative.DPSGD` -- Poisson sampling at q = 256/1797, padded capacity,
  per-example norms from one backward pass (``clip_terms``), clipping, Gaussian noise, Adam;
* ``non-private twin``: the same engine with ``private=False`` (no clipping, no noise);
* ``non-private SGD``: plain ``jax.jit(jax.grad)`` of the mean loss of a fixed batch of 256 rows + Adam (the
  reference the overhead target is measured against; target: DP-SGD at most 3× slower);
* ``DP-SGD, vmap(grad)``: the textbook per-example gradients (``jax.vmap(jax.grad(loss))``), clipped and noised,
  for comparison (what the batched norms avoid).

Plus the **default interaction** of the issue: ``dpgm`` on the digits with k = 5, a small VAE (hidden 64,
latent 8), 3 epochs, batch 64, ε = 1, δ = 1e-5, wall time including JAX compilation (target < 60 s).

The machine is shared: CPU model, core count and the load average before and after are recorded; compare
numbers only within one run of this script.

Usage::

    .venv/bin/python benchmarks/bench_dpsgd.py [--steps 20] [--repeats 5] [--out benchmarks/results/dpsgd.md]
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

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO))

import jax  # noqa: E402
import jax.numpy as jnp  # noqa: E402
import optax  # noqa: E402

from dpkme.datasets import load_digits  # noqa: E402
from dpkme.generative import DPSGD, VAE, dpgm  # noqa: E402

BATCH = 256


def cpu_model() -> str:
    try:
        for line in Path("/proc/cpuinfo").read_text().splitlines():
            if line.startswith("model name"):
                return line.split(":", 1)[1].strip()
    except OSError:
        pass
    return platform.processor() or "unknown"


def timed_blocks(step, steps: int, repeats: int) -> list[float]:
    """Seconds per step of ``repeats`` blocks of ``steps`` calls (after one warm-up call)."""
    step()
    out = []
    for _ in range(repeats):
        t = time.perf_counter()
        for _ in range(steps):
            step()
        out.append((time.perf_counter() - t) / steps)
    return out


def engine(vae, U, private: bool):
    params = jax.vmap(vae.init)(jax.random.split(jax.random.key(0), 1))
    tr = DPSGD(model=vae, params=params, data=U, clusters=np.zeros(len(U), int), sampling_rate=BATCH / len(U),
               clip_norm=1.0, noise_multiplier=1.0, optimizer=optax.adam(1e-3), divisors=[float(BATCH)],
               rng=np.random.default_rng(0), private=private)
    return tr.step


def plain_sgd(vae, U):
    """Non-private SGD: jit(grad) of the mean loss of a fixed batch of 256, Adam."""
    params = vae.init(jax.random.key(0))
    opt = optax.adam(1e-3)
    state = opt.init(params)
    X = jnp.asarray(U[:BATCH])

    @jax.jit
    def step(params, state, key):
        keys = jax.random.split(key, BATCH)
        g = jax.grad(lambda p: jnp.mean(vae._forward(p, X, keys)[0]))(params)
        upd, state = opt.update(g, state, params)
        return optax.apply_updates(params, upd), state

    box = {"p": params, "s": state, "k": jax.random.key(1)}

    def run():
        box["k"], k = jax.random.split(box["k"])
        box["p"], box["s"] = step(box["p"], box["s"], k)
        jax.block_until_ready(box["p"])

    return run


def vmap_dpsgd(vae, U):
    """Textbook DP-SGD: vmap(grad) per-example gradients, clip to 1, sum, noise, Adam (fixed batch of 256)."""
    params = vae.init(jax.random.key(0))
    opt = optax.adam(1e-3)
    state = opt.init(params)
    X = jnp.asarray(U[:BATCH])

    @jax.jit
    def step(params, state, key):
        k1, k2 = jax.random.split(key)
        keys = jax.random.split(k1, BATCH)
        g = jax.vmap(jax.grad(vae.loss), in_axes=(None, 0, 0))(params, X, keys)
        leaves, tdef = jax.tree_util.tree_flatten(g)
        norms = jnp.sqrt(sum(jnp.sum(v.reshape(BATCH, -1) ** 2, axis=1) for v in leaves))
        scale = jnp.minimum(1.0, 1.0 / jnp.maximum(norms, 1e-12))
        nk = jax.random.split(k2, len(leaves))
        summed = [jnp.tensordot(scale, v, axes=1) + jax.random.normal(kk, v.shape[1:]) for v, kk in zip(leaves, nk)]
        gs = jax.tree_util.tree_unflatten(tdef, [s / BATCH for s in summed])
        upd, state = opt.update(gs, state, params)
        return optax.apply_updates(params, upd), state

    box = {"p": params, "s": state, "k": jax.random.key(1)}

    def run():
        box["k"], k = jax.random.split(box["k"])
        box["p"], box["s"] = step(box["p"], box["s"], k)
        jax.block_until_ready(box["p"])

    return run


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--steps", type=int, default=20)
    ap.add_argument("--repeats", type=int, default=5)
    ap.add_argument("--skip-interaction", action="store_true")
    ap.add_argument("--out", type=Path, default=REPO / "benchmarks" / "results" / "dpsgd.md")
    args = ap.parse_args(argv)

    X, y = load_digits()
    U = (X / 16.0).astype(np.float32)
    vae = VAE(n_features=64, hidden=(256,), latent_dim=8)
    load_before = os.getloadavg()
    rows = []
    for name, make in [("DP-SGD (dpkme)", lambda: engine(vae, U, True)),
                       ("non-private twin (dpkme, private=False)", lambda: engine(vae, U, False)),
                       ("non-private SGD (jit(grad), fixed batch)", lambda: plain_sgd(vae, U)),
                       ("DP-SGD, vmap(grad) per-example (reference)", lambda: vmap_dpsgd(vae, U))]:
        t = time.perf_counter()
        step = make()
        blocks = timed_blocks(step, args.steps, args.repeats)
        sec = statistics.median(blocks)
        rows.append({"variant": name, "seconds_per_step": sec, "examples_per_second": BATCH / sec,
                     "setup_and_compile_seconds": time.perf_counter() - t - sum(blocks) * args.steps})
        print(f"{name}: {BATCH / sec:,.0f} examples/s", flush=True)
    ref = rows[2]["examples_per_second"]
    for r in rows:
        r["slowdown_vs_non_private_sgd"] = ref / r["examples_per_second"]
    interaction = None
    if not args.skip_interaction:
        t = time.perf_counter()
        res = dpgm(X, bounds=(0, 16), labels=y, n_classes=10, n_private=len(X), k=5, hidden=(64,), latent_dim=8,
                   epochs=3, batch_size=64, epsilon=1.0, delta=1e-5)
        res.sample_with_labels(100)
        interaction = {"seconds": time.perf_counter() - t, "steps": res.steps_run, "epsilon": res.epsilon,
                       "noise_multiplier": res.plan.noise_multiplier}
        print(f"default interaction: {interaction['seconds']:.1f} s", flush=True)
    load_after = os.getloadavg()
    env = {"cpu": cpu_model(), "cores": os.cpu_count(), "load_before": load_before, "load_after": load_after,
           "jax": jax.__version__, "device": str(jax.devices()[0]), "python": platform.python_version()}
    ratio = rows[0]["slowdown_vs_non_private_sgd"]
    from dpkme.generative.dpsgd import _bucket, default_capacity

    capacity = _bucket(default_capacity(BATCH))
    lines = [
        "# DP-SGD throughput (issue 17)",
        "",
        "`benchmarks/bench_dpsgd.py`: a 64-256-64 VAE (latent 8, Bernoulli likelihood) on the 8×8 digits "
        f"(pixel/16), batch {BATCH} (DP-SGD: Poisson sampling at q = {BATCH}/1797, expected batch {BATCH}), clip "
        "norm 1, noise multiplier 1, Adam. Examples per second of training steps after compilation, median of "
        f"{args.repeats} blocks of {args.steps} steps.",
        "",
        f"Machine: {env['cpu']}, {env['cores']} cores (shared), device {env['device']}, JAX {env['jax']}; "
        f"load average before {tuple(round(v, 2) for v in load_before)}, after "
        f"{tuple(round(v, 2) for v in load_after)}.",
        "",
        "| variant | examples/s | ms/step | slowdown vs non-private SGD | setup + compile (s) |",
        "|---|---:|---:|---:|---:|",
    ]
    for r in rows:
        lines.append(f"| {r['variant']} | {r['examples_per_second']:,.0f} | {1e3 * r['seconds_per_step']:.1f} | "
                     f"{r['slowdown_vs_non_private_sgd']:.2f}× | {r['setup_and_compile_seconds']:.1f} |")
    lines += ["", f"Target: DP-SGD overhead vs non-private SGD ≤ 3×: **{ratio:.2f}×** "
              f"({'met' if ratio <= 3 else 'missed'})."]
    if interaction:
        lines += ["", "Default interaction (`dpgm` on the digits, k = 5, VAE hidden 64 / latent 8, 3 epochs, batch 64, "
                  f"ε = 1, δ = 1e-5, {interaction['steps']} steps, then 100 rows sampled), wall time including JAX "
                  f"compilation: **{interaction['seconds']:.1f} s** (target < 60 s: "
                  f"{'met' if interaction['seconds'] < 60 else 'missed'})."]
    lines += ["", "Why DP-SGD is cheap here: the per-example gradient norms of the dense layers come from one "
              "backward pass (‖a_i‖·‖δ_i‖ per layer) and the clipped sum is one matrix product per layer "
              "(`VAE.clip_terms`); the textbook `vmap(grad)` row materialises 256 per-example gradients. Most of the "
              f"remaining overhead is padding: the Poisson batch is processed in {capacity} padded slots (expected "
              f"{BATCH} rows; a larger draw takes a second round).", ""]
    args.out.write_text("\n".join(lines))
    args.out.with_suffix(".json").write_text(json.dumps({"rows": rows, "interaction": interaction, "env": env},
                                                        indent=1))
    print("\n".join(lines))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
