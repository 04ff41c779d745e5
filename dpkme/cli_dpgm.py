r"""The ``dpgm`` subcommand of ``python -m dpkme``: DPGM (Acs et al.) from the command line.

::

    dpkme dpgm --dataset digits --k 5 --model vae --epochs 3 --epsilon 1 --delta 1e-5 \
        --out-model model.json --out-rows rows.csv --n-rows 1000
    dpkme dpgm table.csv --columns a,b,c --bounds=0:10 --label y --classes no,yes --n 5000 \
        --epsilon 3 --delta 1e-6 --out-model model.json --out-rows rows.csv

Runs :func:`dpkme.generative.dpgm` (private kernel k-means, then one DP-SGD-trained VAE or RBM per cluster) on
the bundled digits (``--dataset digits``: 64 pixels with declared bounds 0..16, the digit a label column) or on
a CSV/Parquet file (declared ``--columns``, ``--bounds``, optional ``--label`` with its declared ``--classes``,
and the declared number of rows ``--n``: under add/remove the row count is not public, so it is never read
from the file). Progress goes to stderr. Writes the release -- the k models' parameters and public
configuration, the noisy cluster sizes and losses, the privacy accounting and the guarantee in plain words
(``--out-model``; no seed; it reads back with :meth:`~dpkme.generative.DPGMResult.from_dict`) -- and sampled rows with their labels (``--out-rows``,
post-processing). ``--seed`` makes a replayable teaching demo, labelled *not private*.
"""

from __future__ import annotations

import json
import sys
import time
from pathlib import Path
from types import SimpleNamespace

__all__ = ["add_parser", "run", "release_json"]


def _int_ge1(text: str) -> int:
    import argparse

    try:
        v = int(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"expected an integer, got {text!r}") from None
    if v < 1:
        raise argparse.ArgumentTypeError(f"expected an integer >= 1, got {text!r}")
    return v


def _float_gt0(text: str) -> float:
    import argparse
    import math

    try:
        v = float(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"expected a number, got {text!r}") from None
    if not math.isfinite(v) or v <= 0:
        raise argparse.ArgumentTypeError(f"expected a finite number > 0, got {text!r}")
    return v


def add_parser(sub) -> None:
    """Add the ``dpgm`` subcommand to the subparsers ``sub`` of :func:`dpkme.cli.build_parser`.

    Parameters
    ----------
    sub : argparse._SubParsersAction
        The subparsers of the main parser.
    """
    g = sub.add_parser("dpgm", help="DPGM: private k-means + one DP-SGD-trained VAE/RBM per cluster (model JSON + "
                                    "sampled rows)")
    g.add_argument("data", nargs="?", default=None, help="the private table (CSV or Parquet); or use --dataset")
    g.add_argument("--dataset", choices=["digits"], default=None, help="a bundled dataset instead of DATA")
    g.add_argument("--columns", default=None, help="comma-separated feature columns of DATA (declared)")
    g.add_argument("--bounds", default=None, help="declared LO:HI of every feature column of DATA (values outside "
                                                  "are clipped); e.g. --bounds=0:16")
    g.add_argument("--label", default=None, help="label column of DATA (part of the record: rows carry labels)")
    g.add_argument("--classes", default=None, help="declared classes of --label, comma-separated")
    g.add_argument("--n", type=_int_ge1, default=None, help="declared number of private rows of DATA (public)")
    g.add_argument("--k", type=_int_ge1, default=5, help="clusters = models (1: no clustering)")
    g.add_argument("--partition", choices=["kmeans", "labels"], default="kmeans",
                   help="split the rows by the private k-means (the paper; --k models) or by their own --label (one "
                        "model per declared class, generated labels match their features, no k-means to pay for)")
    g.add_argument("--model", choices=["vae", "rbm"], default="vae")
    g.add_argument("--epochs", type=_int_ge1, default=3)
    g.add_argument("--batch-size", type=_int_ge1, default=64)
    g.add_argument("--clip-norm", type=_float_gt0, default=1.0)
    g.add_argument("--learning-rate", type=_float_gt0, default=None, help="default 1e-3 (VAE, Adam), 1e-2 (RBM)")
    g.add_argument("--hidden", type=_int_ge1, default=64, help="VAE hidden width")
    g.add_argument("--latent-dim", type=_int_ge1, default=8)
    g.add_argument("--n-hidden", type=_int_ge1, default=64, help="RBM hidden units")
    g.add_argument("--epsilon", type=_float_gt0, required=True)
    g.add_argument("--delta", type=_float_gt0, required=True)
    g.add_argument("--kmeans-share", type=_float_gt0, default=0.2)
    g.add_argument("--kmeans-iter", type=_int_ge1, default=5)
    g.add_argument("--accountant", choices=["pld", "rdp"], default="pld")
    g.add_argument("--out-model", required=True, help="the release: models, privacy and guarantee (JSON)")
    g.add_argument("--out-rows", default=None, help="sampled rows with labels (CSV)")
    g.add_argument("--n-rows", type=_int_ge1, default=None, help="rows in --out-rows (default: the declared N)")
    g.add_argument("--seed", type=int, default=None,
                   help="teaching replay: seeded noise, labelled NOT private (anyone with the seed can remove it)")
    g.add_argument("--quiet", action="store_true", help="no progress output")


def _load(args):
    """(X, bounds, labels, classes, columns, n_private, label name, source path or None)."""
    import numpy as np

    if (args.dataset is None) == (args.data is None):
        raise ValueError("give either DATA (a CSV/Parquet file) or --dataset digits, not both and not neither.")
    if args.dataset == "digits":
        from .datasets import load_digits

        X, y = load_digits()
        cols = [f"pixel_{i // 8}_{i % 8}" for i in range(64)]
        return X, (0.0, 16.0), y, [str(i) for i in range(10)], cols, len(X), "digit", None
    path = Path(args.data)
    if not args.columns or not args.bounds:
        raise ValueError("DATA needs the declared --columns a,b,c and --bounds=LO:HI (public, never read off the rows).")
    if args.n is None:
        raise ValueError("declare --n, the public number of private rows (under add/remove the row count is not "
                         "public; the sampling rate is batch_size / n).")
    try:
        lo, hi = (float(v) for v in args.bounds.split(":"))
    except ValueError:
        raise ValueError(f"--bounds must be LO:HI with two numbers, e.g. --bounds=0:16; got {args.bounds!r}.") from None
    from .io import load_table, numeric_matrix

    try:
        raw = path.read_bytes()
    except OSError as exc:
        raise ValueError(f"cannot read {str(path)!r} ({exc.strerror or type(exc).__name__}).") from None
    df = load_table(raw, filename=path.name)
    cols = [c.strip() for c in args.columns.split(",") if c.strip()]
    missing = [c for c in cols + ([args.label] if args.label else []) if c not in df.columns]
    if missing:
        raise ValueError(f"columns {missing} are not in {path.name!r}; check --columns and --label.")
    X = numeric_matrix(df, cols)
    y, classes = None, None
    if args.label:
        if not args.classes:
            raise ValueError("--label needs the declared --classes (comma-separated; not counted from the rows).")
        classes = [c.strip() for c in args.classes.split(",") if c.strip()]
        index = {c: i for i, c in enumerate(classes)}
        codes = [index.get(str(v).strip()) for v in df[args.label]]
        bad = sum(c is None for c in codes)
        if bad:
            raise ValueError(f"{bad} row(s) have a --label value outside the declared --classes; declare every class.")
        y = np.asarray(codes, dtype=np.int64)
    return X, (lo, hi), y, classes, cols, int(args.n), args.label or "label", path


def release_json(result, *, columns, classes, label_name: str, n_private: int) -> dict:
    """The release file: :meth:`~dpkme.generative.DPGMResult.to_dict` plus the guarantee in plain words.

    Parameters
    ----------
    result : DPGMResult
        The trained models.
    columns : list of str
        Feature column names.
    classes : list of str or None
        Declared label classes.
    label_name : str
        Name of the label column in sampled rows.
    n_private : int
        Declared number of protected rows.

    Returns
    -------
    dict
    """
    from .privacy.explain import release_guarantee_in_words

    d = result.to_dict()
    view = SimpleNamespace(noise_source=result.noise_source, epsilon=result.epsilon, delta=result.delta,
                           neighbouring="add-remove", n_private=n_private, mechanism="DPGM (k-means + DP-SGD)",
                           params={})
    d["guarantee_in_words"] = release_guarantee_in_words(view, private=bool(result.private))
    d["columns"], d["label_classes"], d["label_column"] = list(columns), classes, label_name
    if d.get("differentially_private"):
        d["seed"] = None
    return d


def run(args) -> int:
    """Run the ``dpgm`` subcommand (``args`` from :func:`dpkme.cli.build_parser`); 0 on success.

    Parameters
    ----------
    args : argparse.Namespace
        Parsed arguments.

    Returns
    -------
    int
    """
    import numpy as np
    import pandas as pd

    from .generative import dpgm

    outs = [Path(args.out_model)] + ([Path(args.out_rows)] if args.out_rows else [])
    for o in outs:
        if not o.parent.is_dir():
            raise ValueError(f"cannot write {str(o)!r}: the folder {str(o.parent)!r} does not exist.")
    if len(outs) == 2 and outs[0].resolve() == outs[1].resolve():
        raise ValueError("--out-model and --out-rows are the same path; give two files.")
    X, bounds, y, classes, cols, n_private, label_name, src = _load(args)
    if src is not None and any(o.resolve() == src.resolve() for o in outs):
        raise ValueError("an output path is the input table; the private table is never overwritten.")
    lr = args.learning_rate if args.learning_rate is not None else (1e-3 if args.model == "vae" else 1e-2)
    start = time.perf_counter()
    last = [-1.0]

    def progress(step, total, loss, eps_now):
        frac = step / total
        if not args.quiet and (frac - last[0] >= 0.1 or step == total):
            last[0] = frac
            print(f"[{time.perf_counter() - start:7.1f}s] {100 * frac:5.1f}% step {step}/{total} noisy loss "
                  f"{loss:.4g} epsilon so far (RDP) {eps_now:.3g}", file=sys.stderr, flush=True)

    if not args.quiet:
        print(f"[{0.0:7.1f}s] planning the noise, private k-means, compiling the models ...", file=sys.stderr,
              flush=True)
    res = dpgm(X, bounds=bounds, labels=y, n_classes=len(classes) if classes else None, n_private=n_private,
               k=args.k, partition=args.partition, model=args.model, epochs=args.epochs, batch_size=args.batch_size,
               clip_norm=args.clip_norm,
               learning_rate=lr, hidden=(args.hidden,), latent_dim=args.latent_dim, n_hidden=args.n_hidden,
               likelihood="bernoulli" if args.dataset == "digits" else "gaussian", epsilon=args.epsilon,
               delta=args.delta, kmeans_share=args.kmeans_share, kmeans_iter=args.kmeans_iter,
               accountant=args.accountant, rng=args.seed, progress=progress)
    d = release_json(res, columns=cols, classes=classes, label_name=label_name, n_private=n_private)
    outs[0].write_text(json.dumps(d, default=lambda o: o.tolist() if hasattr(o, "tolist") else str(o)) + "\n",
                       encoding="utf-8")
    if args.out_rows:
        n = args.n_rows or n_private
        Xs, ys, _ = res.sample_with_labels(n, rng=None if args.seed is None else np.random.default_rng(
            np.random.SeedSequence(args.seed, spawn_key=(7,))))
        df = pd.DataFrame(Xs, columns=cols)
        if ys is not None:
            df[label_name] = [classes[i] for i in ys]
        df.to_csv(outs[1], index=False)
    if not args.quiet:
        what = "differentially private" if d.get("differentially_private") else "NOT private (replayable demo)"
        print(f"wrote {outs[0]}" + (f" and {outs[1]}" if args.out_rows else "")
              + f": epsilon={res.epsilon:.4g} delta={res.delta:g} (add/remove), {what}", file=sys.stderr)
    return 0
