"""Command line: ``python -m dpkme`` (or ``dpkme``) ``reproduce``, ``sigma``, ``schema``, ``release-table``,
``release`` and ``evaluate``.

Examples
--------
::

    python -m dpkme reproduce fig1 --data mixture_of_Gaussians_N100000_D2.npz --out f1.json
    python -m dpkme reproduce fig2-alg1 --data mixture_of_Gaussians_N100000_D5.npz --out f2.json
    python -m dpkme reproduce fig2-alg2 --data mixture_of_Gaussians_N100000_D5.npz --out f2b.json
    python -m dpkme sigma --epsilon 1 --delta 1e-6 --sensitivity 2e-5 --calibration analytic
    dpkme schema suggest table.csv --public public_sample.csv --out schema.json
    dpkme schema check table.csv --schema schema.json
    dpkme release-table table.csv --schema schema.json --epsilon 1 --delta 1e-6 --rows 1000 --out release.csv
    dpkme release big.parquet --mechanism alg2 --epsilon 1 --delta 1e-7 --columns a,b,c --bounds=-5:5 \\
        --lengthscale 1 --points 200 --out release.csv --workers 2
    dpkme evaluate big.parquet --release release.csv
    dpkme dpgm --dataset digits --k 5 --model vae --epochs 3 --epsilon 1 --delta 1e-5 --out-model model.json \\
        --out-rows rows.csv

Reproductions default to the paper's own settings (classic calibration,
sensitivity 2/N, full basis). ``sigma`` prints the calibrated noise standard
deviation; its last line is the number alone.

Mixed tables (CSV or Parquet, read as an upload is: :func:`dpkme.io.load_table`) with a declared
:class:`~dpkme.schema.TableSchema` in JSON:

``schema suggest TABLE [--public PUBLIC] [--out SCHEMA.json]``
    :func:`~dpkme.schema.suggest_schema`: the suggested schema as JSON (stdout, or ``--out``). Without
    public rows the suggestions are read from the private rows: a warning says so and the JSON records
    it (``data_dependent``), so a release with that schema is labelled not private.
``schema check TABLE --schema SCHEMA.json``
    Validates the schema against the table and prints the **owner-only** counts of missing, unknown,
    clipped and rounded cells (:meth:`~dpkme.schema.TableSchema.encode_report`; statistics of the private
    rows, never to be published); exit status 2 when the schema refuses the table.
``release-table TABLE --schema SCHEMA.json --epsilon E --delta D [--out RELEASE.csv] [--rows N] [--marginal-share H] [--workers K | --scheduler ADDRESS] ...``
    :func:`~dpkme.release.tabular.release_table`: the weighted release as CSV (each column rounded to its
    precision; stdout without ``--out``), its JSON metadata next to it (``RELEASE.json``: parameters,
    privacy claim, schema; a real release carries no seed), and with ``--rows N`` ``N`` unweighted
    synthetic rows (``RELEASE_rows.csv``, post-processing). ``--seed`` makes a replayable teaching demo,
    labelled *not private*. ``--workers K`` (a local cluster of K processes) or ``--scheduler ADDRESS`` (a
    running one) give the same release through :func:`dpkme.distributed.release_table`: the table (Parquet, or
    CSV / TSV with a header line) is read and encoded partition by partition on the Dask workers, which see
    the raw rows; the noise is added once here.

Numeric data of any size (Parquet or CSV, read in partitions by Dask: :mod:`dpkme.distributed`):

``release DATA --mechanism alg1|alg2 --epsilon E --delta D --columns a,b --bounds=LO:HI --lengthscale L --out R.csv``
    :func:`dpkme.distributed.algorithm2` / :func:`~dpkme.distributed.algorithm1`: partial sums per
    partition (every partition checked against the declared box; ``--clip`` clips instead, and the JSON
    says so), reduced, noised once; a progress bar on stderr. Writes the release CSV and its JSON exactly
    like the app's downloads (:func:`release_files`). The synthetic points are drawn from the declared box
    (or from N(0, s² I) with ``--q-scale s``). N: counted under replace-one (public by the
    neighbouring relation); under ``--neighbouring add-remove`` declared (``--n N``) or released with a
    Laplace count (``--private-count SHARE`` of ε). ``--workers K`` runs a local cluster of K processes,
    ``--scheduler ADDRESS`` a running one.
``evaluate DATA --release R.csv [--metadata R.json] [--method auto|exact|estimate] [--out REPORT.json]``
    **Owner only**: the RKHS distance between the release and the private KME
    (:func:`dpkme.evaluation.rkhs_distance_report`: exact, or an unbiased estimate with a confidence interval).

Generative models (:mod:`dpkme.generative`, :mod:`dpkme.cli_dpgm`):

``dpgm DATA|--dataset digits --k K --model vae|rbm --epochs E --epsilon E --delta D --out-model M.json [--out-rows R.csv] [--n-rows N]``
    :func:`~dpkme.generative.dpgm`: private kernel k-means, then one DP-SGD-trained VAE or RBM per cluster;
    progress on stderr. Writes the k models (the release, with the guarantee in plain words and no seed) and
    sampled rows with their labels. A file needs its declared ``--columns``, ``--bounds``, ``--n`` (and
    ``--label`` with ``--classes``).

Files are written only at the paths given (never next to the private table, which is never copied),
and never over the input table or schema. Refused inputs exit with status 2 and a one-line
``error: ...`` message.
"""

from __future__ import annotations

import argparse
import dataclasses
import json
import logging
import math
import sys
import time
import warnings
from pathlib import Path

__all__ = ["main", "build_parser", "release_files"]


def _positive_float(text: str) -> float:
    try:
        v = float(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"expected a number, got {text!r}") from None
    if not math.isfinite(v) or v <= 0:
        raise argparse.ArgumentTypeError(f"expected a finite number > 0, got {text!r}")
    return v


_TABLE_MECHANISMS = {"alg2": "algorithm2", "alg1": "algorithm1"}


def _positive_int(text: str) -> int:
    try:
        v = int(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"expected an integer, got {text!r}") from None
    if v < 1:
        raise argparse.ArgumentTypeError(f"expected an integer >= 1, got {text!r}")
    return v


def build_parser() -> argparse.ArgumentParser:
    r"""The argument parser of ``python -m dpkme``, with its four subcommands.

    ``reproduce FIGURE --data PATH --out PATH [options]`` reruns Figure 1
    (``fig1``, Algorithm 1 in the data's own span) or Figure 2 (``fig2-alg1``,
    ``fig2-alg2``: Algorithms 1 and 2 against :math:`M`) of Balog et al. (2018)
    and writes the curves as JSON; ``sigma --epsilon E --delta D --sensitivity S``
    prints the calibrated Gaussian noise standard deviation; ``schema suggest`` /
    ``schema check`` suggest and validate a mixed table's declared schema, and
    ``release-table`` releases the table with :math:`(\varepsilon, \delta)`-DP
    (see the module docstring); ``release`` and ``evaluate`` release a numeric Parquet/CSV file of any
    size through Dask and evaluate it (owner only). Numbers are validated while parsing
    (``--epsilons``, ``--delta``, ``--tol`` finite and > 0; ``--max-m``,
    ``--reps``, ``--J``, ``--points``, ``--rows`` integers >= 1).

    Returns
    -------
    argparse.ArgumentParser
        A new parser; ``parse_args`` gives a namespace whose ``command`` is
        ``"reproduce"``, ``"sigma"``, ``"schema"`` (with ``schema_command``
        ``"suggest"`` or ``"check"``), ``"release-table"``, ``"release"`` or ``"evaluate"``.

    Examples
    --------
    >>> args = build_parser().parse_args(["sigma", "--epsilon", "1", "--delta", "1e-6", "--sensitivity", "0.01"])
    >>> args.command, args.epsilon, args.calibration
    ('sigma', 1.0, 'analytic')
    >>> args = build_parser().parse_args(["release-table", "t.csv", "--schema", "s.json", "--epsilon", "1",
    ...                                   "--delta", "1e-6", "--rows", "500", "--out", "release.csv"])
    >>> args.mechanism, args.rows, args.seed, args.kernel
    ('alg2', 500, None, 'additive')
    """
    p = argparse.ArgumentParser(prog="python -m dpkme", description="dpkme command line")
    sub = p.add_subparsers(dest="command", required=True)

    r = sub.add_parser("reproduce", help="reproduce a figure of Balog et al. (2018) and write JSON")
    r.add_argument("figure", choices=["fig1", "fig2-alg1", "fig2-alg2"])
    r.add_argument("--data", required=True, help="path to the private data (.npz with key X_private)")
    r.add_argument("--out", required=True, help="output JSON path")
    r.add_argument("--max-m", type=_positive_int, default=10000, help="largest number of synthetic points")
    r.add_argument("--epsilons", type=_positive_float, nargs="+", default=[0.01, 0.1, 1.0])
    r.add_argument("--delta", type=_positive_float, default=1e-6)
    r.add_argument("--reps", type=_positive_int, default=1, help="repetitions of the noisy release per M")
    r.add_argument("--seed", type=int, default=0)
    r.add_argument("--calibration", choices=["classic", "analytic"], default="classic")
    r.add_argument("--sensitivity", choices=["paper", "tight"], default="paper",
                   help="paper: 2/N; tight: sqrt(2)/N (Algorithm 1; Algorithm 2 features always use 2/N)")
    r.add_argument("--basis", choices=["full", "auto"], default="full", help="Algorithm 1 basis (fig1, fig2-alg1)")
    r.add_argument("--tol", type=_positive_float, default=None, help="Gram-Schmidt threshold (default 1e-5)")
    r.add_argument("--mean-kxx", type=float, default=None,
                   help="known mean of K_XX (skips its exact O(N^2) computation; fig1/fig2-alg1)")
    r.add_argument("--J", type=_positive_int, default=10000, help="random features (fig2-alg2)")
    r.add_argument("--solver", default=None, help="reduced-set solver (fig2-alg2); default: the most accurate")
    r.add_argument("--quiet", action="store_true")

    s = sub.add_parser("sigma", help="print the calibrated Gaussian noise standard deviation")
    s.add_argument("--epsilon", type=float, required=True)
    s.add_argument("--delta", type=float, required=True)
    s.add_argument("--sensitivity", type=float, required=True, help="L2 sensitivity")
    s.add_argument("--calibration", choices=["analytic", "classic"], default="analytic")

    sch = sub.add_parser("schema", help="suggest or check the declared schema of a mixed table (JSON)")
    ssub = sch.add_subparsers(dest="schema_command", required=True)
    sg = ssub.add_parser("suggest", help="print (or write) a suggested schema as JSON")
    sg.add_argument("table", help="the table (CSV, TSV or Parquet)")
    sg.add_argument("--public", default=None,
                    help="public rows with the same columns (without them the suggestions read the PRIVATE rows)")
    sg.add_argument("--out", default=None, help="write the schema JSON here (default: print it)")
    sg.add_argument("--max-categories", type=_positive_int, default=50,
                    help="text columns with more distinct values are left out")
    ck = ssub.add_parser("check", help="validate a schema against a table; owner-only report of what it changes")
    ck.add_argument("table", help="the table (CSV, TSV or Parquet)")
    ck.add_argument("--schema", required=True, help="the schema JSON")

    t = sub.add_parser("release-table", help="release a mixed table with (epsilon, delta)-DP (CSV + JSON)")
    t.add_argument("table", help="the private table (CSV, TSV or Parquet)")
    t.add_argument("--schema", required=True, help="the declared schema JSON")
    t.add_argument("--epsilon", type=_positive_float, required=True)
    t.add_argument("--delta", type=_positive_float, required=True)
    t.add_argument("--mechanism", choices=sorted(_TABLE_MECHANISMS), default="alg2",
                   help="alg2: random features and a reduced-set solver; alg1: points drawn from the declared domain")
    t.add_argument("--points", type=_positive_int, default=None, help="atoms M (default: the public rule)")
    t.add_argument("--rows", type=_positive_int, default=None,
                   help="also write this many unweighted synthetic rows (OUT_rows.csv; needs --out)")
    t.add_argument("--out", default=None,
                   help="the release CSV; its metadata goes next to it (.json). Default: print the CSV, write nothing")
    t.add_argument("--seed", type=int, default=None,
                   help="teaching replay: seeded noise, labelled NOT private (anyone with the seed can remove it)")
    t.add_argument("--kernel", choices=["product", "additive"], default="additive",
                   help="kernel on the embedded rows (default: additive, the library's)")
    t.add_argument("--marginal-share", type=_share_arg, default="auto", metavar="H",
                   help="share of the marginal block (alg2): auto (default: the public rule), 0 (off) or a number "
                        "in (0, 1)")
    t.add_argument("--features", type=_positive_int, default=None, help="random features J (alg2; default 2000)")
    t.add_argument("--preset", choices=["accurate", "interactive"], default="accurate", help="solver preset (alg2)")
    t.add_argument("--calibration", choices=["analytic", "classic"], default="analytic")
    t.add_argument("--spread", type=float, default=None,
                   help="spreading of the synthetic rows in lengthscales (default: the library's)")
    t.add_argument("--scheduler", default=None,
                   help="release through Dask on this scheduler (tcp://host:8786): the table (Parquet, or CSV/TSV "
                        "with a header line) is read and encoded partition by partition on its workers, which see "
                        "the raw rows")
    t.add_argument("--workers", type=_positive_int, default=None,
                   help="release through Dask on a local cluster of this many worker processes (as --scheduler)")
    t.add_argument("--quiet", action="store_true")

    d = sub.add_parser("release", help="release a numeric table (Parquet/CSV, any size) with (epsilon, delta)-DP "
                                       "through Dask: CSV + JSON")
    d.add_argument("data", help="the private data: a Parquet file or folder, or a CSV file (read in partitions)")
    d.add_argument("--mechanism", choices=sorted(_TABLE_MECHANISMS), default="alg2",
                   help="alg2: random features and a reduced-set solver; alg1: weights on points drawn without the "
                        "data (from the declared box, or from q)")
    d.add_argument("--epsilon", type=_positive_float, required=True)
    d.add_argument("--delta", type=_positive_float, required=True)
    d.add_argument("--columns", required=True, help="the declared numeric columns, comma-separated: a,b,c")
    d.add_argument("--bounds", default=None,
                   help="the declared box (public knowledge): LO:HI for every column, or one LO:HI per column, "
                        "comma-separated; write --bounds=-5:5 when LO is negative. A value outside is an error "
                        "unless --clip")
    d.add_argument("--clip", action="store_true", help="clip rows to the declared box (recorded in the JSON)")
    d.add_argument("--kernel", default="gaussian", help="gaussian, laplacian, matern32, ... (amplitude 1)")
    d.add_argument("--lengthscale", type=_positive_float, required=True,
                   help="the kernel's lengthscale in the columns' units (public)")
    d.add_argument("--points", type=_positive_int, default=100, help="synthetic points M (default 100)")
    d.add_argument("--features", type=_positive_int, default=2000, help="random features J (alg2; default 2000)")
    d.add_argument("--q-scale", type=_positive_float, default=None,
                   help="standard deviation of q = N(0, s^2 I) for the points, when no --bounds are declared")
    d.add_argument("--neighbouring", choices=["replace-one", "add-remove"], default="replace-one")
    d.add_argument("--n", type=_positive_int, default=None, dest="n_private",
                   help="declared public row count N (add-remove; under replace-one N is counted: it is public)")
    d.add_argument("--private-count", type=_positive_float, default=None, metavar="SHARE",
                   help="add-remove: release N with a Laplace count spending this share of epsilon (e.g. 0.1)")
    d.add_argument("--calibration", choices=["analytic", "classic"], default="analytic")
    d.add_argument("--preset", choices=["accurate", "interactive"], default="accurate", help="solver preset (alg2)")
    d.add_argument("--out", required=True, help="the release CSV; its JSON metadata goes next to it (.json)")
    d.add_argument("--scheduler", default=None, help="address of a Dask scheduler (tcp://host:8786); default: local")
    d.add_argument("--workers", type=_positive_int, default=None,
                   help="start a local Dask cluster of this many worker processes for the run")
    d.add_argument("--seed", type=int, default=None,
                   help="teaching replay: seeded noise, labelled NOT private (anyone with the seed can remove it)")
    d.add_argument("--quiet", action="store_true", help="no progress bar")

    e = sub.add_parser("evaluate", help="OWNER ONLY: RKHS distance between a release CSV and the private data")
    e.add_argument("data", help="the private data (Parquet or CSV)")
    e.add_argument("--release", required=True, help="the release CSV written by 'dpkme release'")
    e.add_argument("--metadata", default=None, help="its JSON (default: the release path with .json)")
    e.add_argument("--method", choices=["auto", "exact", "estimate"], default="auto",
                   help="exact mean of K_XX, or an unbiased estimate with a confidence interval")
    e.add_argument("--out", default=None, help="also write the report as JSON here (owner-only)")
    e.add_argument("--scheduler", default=None, help="address of a Dask scheduler; default: local")

    from .cli_dpgm import add_parser as _add_dpgm  # DPGM (issue 17): its own module

    _add_dpgm(sub)
    return p


def _progress(quiet: bool):
    if quiet:
        return None
    start = time.perf_counter()
    last = [-1.0]

    def report(fraction: float, message: str) -> None:
        if fraction - last[0] >= 0.1 or fraction >= 1.0:  # at most ~10 lines
            last[0] = fraction
            print(f"[{time.perf_counter() - start:7.1f}s] {100 * fraction:5.1f}% {message}", file=sys.stderr, flush=True)

    return report


def _reproduce(args) -> int:
    from .release.subspace import DEFAULT_TOL
    from .reproduce import fig1, fig2_alg1, load_private_npz

    X = load_private_npz(args.data)
    common = dict(max_m=min(args.max_m, X.shape[0]) if args.figure == "fig1" else args.max_m,
                  epsilons=args.epsilons, delta=args.delta, seed=args.seed, calibration=args.calibration,
                  progress=_progress(args.quiet))
    if args.figure in ("fig1", "fig2-alg1"):
        fn = fig1 if args.figure == "fig1" else fig2_alg1
        result = fn(X, reps=args.reps, sensitivity=args.sensitivity, basis=args.basis,
                    tol=args.tol or DEFAULT_TOL, mean_kxx=args.mean_kxx, **common)
    else:
        from .reproduce import fig2_alg2

        kwargs = dict(n_features=args.J, sensitivity=args.sensitivity, **common)
        if args.solver:
            kwargs["solver"] = args.solver
        result = fig2_alg2(X, **kwargs)
    result["data"] = str(args.data)
    with open(args.out, "w", encoding="utf-8") as fh:
        json.dump(result, fh, indent=1)
    if not args.quiet:
        print(f"wrote {args.out} in {result['seconds']:.2f} s", file=sys.stderr)
    return 0


def _sigma(args) -> int:
    from .privacy.calibration import calibrate_gaussian

    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        cal = calibrate_gaussian(epsilon=args.epsilon, delta=args.delta, sensitivity=args.sensitivity,
                                 method=args.calibration)
    for w in caught:
        print(f"warning: {w.message}")
    print(f"calibration={cal.method} epsilon={cal.epsilon:g} delta={cal.delta:g} sensitivity={cal.sensitivity:g} "
          f"achieved_delta={cal.achieved_delta:.6g} proven={cal.proven}")
    print(repr(cal.sigma))
    return 0


# --------------------------------------------------------------------------- mixed tables
def _read_bytes(path: str, what: str) -> bytes:
    try:
        return Path(path).read_bytes()
    except FileNotFoundError:
        raise ValueError(f"{what} {path!r} not found; check the path.") from None
    except OSError as exc:
        raise ValueError(f"cannot read {what} {path!r} ({exc.strerror or type(exc).__name__}).") from None


def _load_frame(path: str, what: str = "table"):
    from .io import load_table

    return load_table(_read_bytes(path, what), filename=str(path))


def _load_schema(path: str):
    from .schema import TableSchema

    data = _read_bytes(path, "schema")
    try:
        return TableSchema.from_json(data)
    except UnicodeDecodeError:
        raise ValueError(f"schema {path!r} is not UTF-8 JSON text; write it with 'dpkme schema suggest'.") from None
    except ValueError as exc:
        raise ValueError(f"schema {path!r}: {exc}") from None


def _write_text(path: Path, text: str) -> None:
    try:
        path.write_text(text, encoding="utf-8")
    except OSError as exc:
        raise ValueError(f"cannot write {str(path)!r} ({exc.strerror or type(exc).__name__}); check that the "
                         "folder exists and is writable.") from None


def _same_file(a: Path, b: Path) -> bool:
    try:
        return a.resolve() == b.resolve()
    except OSError:
        return False


def _check_outputs(outputs, inputs) -> None:
    """Refuse output paths that coincide with each other or with an input (the private table is never overwritten),
    or whose folder does not exist (checked before any work is done)."""
    for i, out in enumerate(outputs):
        if not out.parent.is_dir():
            raise ValueError(f"cannot write {str(out)!r}: the folder {str(out.parent)!r} does not exist; create it "
                             "or choose another --out.")
        for other in outputs[i + 1:]:
            if _same_file(out, other):
                raise ValueError(f"--out {str(outputs[0])!r} would make two output files the same path {str(out)!r}; "
                                 "give the release CSV a .csv name, e.g. release.csv.")
        for label, inp in inputs:
            if _same_file(out, Path(inp)):
                raise ValueError(f"output {str(out)!r} is the {label} itself; choose another --out.")


def _warn_lines(caught) -> None:
    for msg in dict.fromkeys(str(w.message) for w in caught):
        print("warning: " + " ".join(msg.split()), file=sys.stderr)


def _schema_suggest(args) -> int:
    from .schema import suggest_schema

    df = _load_frame(args.table)
    public = None if args.public is None else _load_frame(args.public, "public table")
    if args.out is not None:
        _check_outputs([Path(args.out)], [("table", args.table)] + ([("public table", args.public)] if args.public
                                                                     else []))
    with warnings.catch_warnings(record=True):         # said below, in the CLI's own words
        warnings.simplefilter("always")
        suggestion = suggest_schema(df, public=public, max_categories=args.max_categories)
    del df
    schema = suggestion.schema
    if suggestion.data_dependent:
        cols = list(suggestion.data_dependent)
        where = "no --public rows were given" if args.public is None else "the --public rows lack them"
        print(f"WARNING: {where}: the suggestions for column(s) {cols} were READ FROM THE PRIVATE ROWS of "
              f"{args.table!r}. The JSON records this ('data_dependent'), and a release with this schema is labelled "
              "NOT differentially private until those values are declared from public knowledge (pass --public "
              "PUBLIC.csv, or edit the values and remove their columns from 'data_dependent' and "
              "'data_dependent_fields' once you confirm them from public sources).", file=sys.stderr)
    for name, why in suggestion.excluded.items():
        print(f"left out: {name!r}: {why}", file=sys.stderr)
    owner = " (owner-only: read from the private rows)" if suggestion.data_dependent else ""
    for name, note in suggestion.notes.items():
        print(f"note{owner}: {name!r}: {note}", file=sys.stderr)
    text = schema.to_json() + "\n"
    if args.out is None:
        sys.stdout.write(text)
    else:
        _write_text(Path(args.out), text)
        print(f"wrote {args.out} ({len(schema)} columns, embedding dimension {schema.dim})", file=sys.stderr)
    return 0


def _schema_check(args) -> int:
    from dataclasses import replace

    from .schema import TableSchema

    schema = _load_schema(args.schema)
    df = _load_frame(args.table)
    # Count with every "error" column relaxed to missing="category", so all problems show at once; the
    # declared schema then decides (its message names the first refused column).
    relaxed = TableSchema(tuple(replace(c, missing="category") if c.missing == "error" else c for c in schema.columns))
    report = relaxed.encode_report(df)
    print(f"OWNER ONLY - NOT FOR PUBLICATION: counts from the private rows of {Path(args.table).name!r} "
          f"({report.n_rows} rows, {len(schema)} columns).")
    print(report.to_frame().to_string())
    for line in report.lines():
        print("  " + line)
    if schema.data_dependent:
        print(f"warning: the schema's values of column(s) {list(schema.data_dependent)} were read from the private "
              "rows: a release with it is labelled NOT differentially private.", file=sys.stderr)
    schema.encode(df)                                   # raises (exit 2) where the declared schema refuses the table
    print(f"OK: the schema accepts the table ({len(schema)} columns, embedding dimension {schema.dim}).")
    return 0


def _table_metadata(tr, *, table: str, csv_name: str, rows_name: str | None, n_rows: int | None, spread: float):
    """The release's JSON metadata, as the app's download (ui/export.py): privacy claim, no seed for a real release."""
    from .privacy.leaks import privacy_claim

    rel = tr.release
    meta = tr.metadata()
    claim = privacy_claim(rel)
    meta.pop("not_private_because", None)
    meta["differentially_private"] = bool(claim["differentially_private"])
    if meta["differentially_private"]:
        meta["seed"] = None
        meta["noise"] = f"fresh noise nobody can regenerate ({rel.noise_source}); no seed recorded"
        meta["guarantee"] = (f"({rel.epsilon:g}, {rel.delta:g})-differentially private for the {rel.n_private:,} "
                             f"private rows ({rel.neighbouring} neighbouring)")
    else:
        meta["status"] = "replayable demo, not private" if rel.noise_source == "seeded" else "NOT differentially private"
        meta["warning"] = "NOT differentially private: " + "; ".join(claim.get("not_private_because", []))
    if meta["differentially_private"] and meta.get("seed") is not None:   # never: set to None above
        raise RuntimeError("a file labelled differentially private would carry a seed; nothing was written.")
    meta["dataset"] = Path(table).name
    meta["csv"] = csv_name
    meta["csv_columns"] = list(tr.table().columns)
    meta["points_units"] = ("the CSV holds the decoded rows (original columns and types, rounded to each column's "
                            "precision); the kernel acts on the rows embedded by the schema "
                            "(dpkme.schema.TableSchema.encode)")
    meta["how_to_use"] = (
        "E[h(X)] ≈ Σ_m weight_m · h(row_m) / Σ_m weight_m over the weighted rows (eq. (4) of Balog et al. 2018); "
        "unweighted synthetic rows: dpkme.release.tabular.TableRelease.sample, post-processing at no privacy cost.")
    if rows_name is not None:
        meta["synthetic_rows"] = {"csv": rows_name, "n": int(n_rows), "spread": spread,
                                  "note": "unweighted rows resampled from the weighted release (post-processing)"}
    return meta


def _share_arg(text: str):
    """``--marginal-share``: "auto" or a number in [0, 1)."""
    if text == "auto":
        return "auto"
    try:
        value = float(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"expected 'auto' or a number in [0, 1), got {text!r}") from None
    if not (math.isfinite(value) and 0.0 <= value < 1.0):
        raise argparse.ArgumentTypeError(f"expected 'auto' or a number in [0, 1), got {text!r}")
    return value


def _release_table(args) -> int:
    import numpy as np

    from .release.tabular import DEFAULT_N_FEATURES, _rounded, release_table

    spread = args.spread                                 # None: the release's public default (after the release)
    if spread is not None and (not math.isfinite(spread) or spread < 0):
        raise ValueError(f"--spread must be a finite number >= 0, got {args.spread!r}.")
    out = rows_path = json_path = None
    if args.out is not None:
        out = Path(args.out)
        json_path = out.with_suffix(".json")
        rows_path = out.with_name(out.stem + "_rows.csv") if args.rows else None
        _check_outputs([p for p in (out, json_path, rows_path) if p is not None],
                       [("private table", args.table), ("schema", args.schema)])
    elif args.rows:
        raise ValueError(f"--rows {args.rows} needs --out RELEASE.csv (the rows go to RELEASE_rows.csv next to it).")
    schema = _load_schema(args.schema)
    on_dask = args.scheduler is not None or args.workers is not None
    df = None if on_dask else _load_frame(args.table)
    if on_dask and not Path(args.table).exists():
        raise ValueError(f"table {args.table!r} not found; check the path.")
    if args.seed is not None:
        print(f"warning: --seed {args.seed}: a replayable teaching demo, NOT differentially private (anyone who knows "
              "the seed can regenerate the noise); its files say so and carry the seed.", file=sys.stderr)
    options = dict(schema=schema, epsilon=args.epsilon, delta=args.delta, mechanism=_TABLE_MECHANISMS[args.mechanism],
                   n_points=args.points, n_features=args.features or DEFAULT_N_FEATURES,
                   calibration=args.calibration, random_state=args.seed, progress=_progress(args.quiet),
                   preset=args.preset, kernel=args.kernel, marginal_share=args.marginal_share)
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        if on_dask:   # the same release, its one pass over the rows on the workers (dpkme.distributed)
            from .distributed import release_table as release_table_on_dask

            with _DaskClient(args.scheduler, args.workers) as client:
                tr = release_table_on_dask(args.table, client=client, **options)
        else:
            tr = release_table(df, **options)
    del df
    if spread is None:
        spread = tr.default_spread
    _warn_lines(caught)
    csv_text = tr.to_csv()
    rows_csv = None
    if rows_path is not None:
        rng = None if tr.release.seed is None else np.random.default_rng([int(tr.release.seed), 1_000_003])
        rows_csv = _rounded(schema, tr.sample(args.rows, rng, spread=spread)).to_csv(index=False)
    meta = _table_metadata(tr, table=args.table, csv_name=out.name if out is not None else "(stdout)",
                           rows_name=rows_path.name if rows_path is not None else None, n_rows=args.rows,
                           spread=spread)
    label = "differentially private" if meta["differentially_private"] else meta["status"]
    summary = (f"{tr.release.mechanism}: {tr.n_points} weighted rows from {tr.release.n_private} private rows, "
               f"epsilon={tr.release.epsilon:g}, delta={tr.release.delta:g} ({label})")
    if out is None:
        sys.stdout.write(csv_text)
        print(summary + "; no --out: the CSV was printed and no file written (its metadata needs --out)",
              file=sys.stderr)
        return 0
    _write_text(out, csv_text)
    _write_text(json_path, json.dumps(meta, indent=2, default=_json_default, ensure_ascii=False) + "\n")
    written = [str(out), str(json_path)]
    if rows_path is not None:
        _write_text(rows_path, rows_csv)
        written.append(str(rows_path))
    print(summary + "; wrote " + ", ".join(written), file=sys.stderr)
    return 0


# --------------------------------------------------------------------------- out-of-core releases (Dask)
_MECHANISM_LABELS = {"algorithm1": "Algorithm 1 (noise in the span of public points)",
                     "algorithm2": "Algorithm 2 (random features and a reduced set)"}


def _parse_columns(text: str) -> list[str]:
    names = [c.strip() for c in str(text).split(",")]
    if not names or any(not c for c in names):
        raise ValueError(f"--columns {text!r}: give the column names separated by commas, e.g. --columns a,b,c.")
    return names


def _parse_bounds(text: str, dim: int, columns=None):
    import numpy as np

    pairs = []
    for part in str(text).split(","):
        lo, sep, hi = part.strip().partition(":")
        try:
            pair = (float(lo), float(hi)) if sep else None
        except ValueError:
            pair = None
        if pair is None or not all(math.isfinite(v) for v in pair):
            raise ValueError(f"--bounds {text!r}: write LO:HI with finite numbers, once for every column or once per "
                             "column (comma-separated), e.g. --bounds=-5:5 or --bounds=0:1,-3:3.")
        pairs.append(pair)
    if len(pairs) == 1:
        pairs *= dim
    if len(pairs) != dim:
        raise ValueError(f"--bounds gives {len(pairs)} intervals for {dim} declared columns; give one LO:HI for all "
                         "or one per column.")
    for j, (lo, hi) in enumerate(pairs):
        if lo > hi:
            name = f"column {columns[j]!r}" if columns is not None else f"interval {j + 1}"
            raise ValueError(f"--bounds: {name} has LO={lo:g} > HI={hi:g}; write LO:HI with lower <= upper.")
    return np.array([p[0] for p in pairs]), np.array([p[1] for p in pairs])


def _progress_bar(quiet: bool, what: str):
    """A tqdm bar on stderr fed by ``progress(fraction, message)``, and a function that closes it."""
    if quiet:
        return None, lambda: None
    from tqdm import tqdm

    bar = tqdm(total=1000, desc=what, file=sys.stderr, bar_format="{desc}: {percentage:3.0f}%|{bar}| {elapsed}{postfix}",
               mininterval=0.5)

    def report(fraction: float, message: str) -> None:
        bar.n = int(1000 * min(max(fraction, 0.0), 1.0))
        bar.set_postfix_str(message[:60], refresh=False)
        bar.refresh()

    return report, bar.close


class _DaskClient:
    """``--scheduler ADDRESS`` (a client for the run), ``--workers K`` (a local cluster of K processes), or
    nothing (Dask's local threaded scheduler)."""

    def __init__(self, scheduler, workers):
        self.scheduler, self.workers = scheduler, workers
        self.client = self.cluster = None

    def __enter__(self):
        if self.scheduler is None and self.workers is None:
            return None
        if self.scheduler is not None and self.workers is not None:
            raise ValueError("give --scheduler ADDRESS or --workers K, not both.")
        try:
            from distributed import Client, LocalCluster
        except ImportError:  # pragma: no cover - exercised only without the extra
            raise ValueError("--scheduler and --workers need the 'distributed' package: pip install "
                             "'dpkme[distributed]'.") from None

        if self.scheduler is not None:
            try:
                self.client = Client(self.scheduler, timeout="30s")
            except OSError as exc:
                raise ValueError(f"cannot reach the Dask scheduler at {self.scheduler!r} ({exc}).") from None
        else:
            self.cluster = LocalCluster(n_workers=self.workers, threads_per_worker=1, processes=True,
                                        dashboard_address=None, silence_logs=logging.CRITICAL)
            self.client = Client(self.cluster)
        return self.client

    def __exit__(self, *exc):
        if self.client is not None:
            self.client.close()
        if self.cluster is not None:
            self.cluster.close()
        return False


def _significant(a, digits: int = 15):
    import numpy as np

    a = np.asarray(a, dtype=np.float64)
    return np.vectorize(lambda v: float(f"{v:.{digits}g}"), otypes=[np.float64])(a) if a.size else a.copy()


def _weight_name(cols) -> str:
    name = "weight"
    while name in cols:
        name = "_" + name
    return name


#: How the release summary and files name N, by the release's ``n_policy`` (:mod:`dpkme.distributed.release`).
_SIZE_WORDS = {"public": "N={n:,} (public)",
               "declared": "N={n:,} is the declared size from public knowledge, not a count of the rows",
               "private": "N≈{n:,} is a noisy count released with a share of epsilon, not the exact count"}


def release_files(rel, *, columns, dataset: str, csv_name: str) -> tuple[str, dict]:
    r"""The release CSV and its JSON metadata, as the app's downloads of a numeric release (``ui/export.py``).

    The CSV has one row per synthetic point (15 significant digits, the declared column names) and its
    weight; the metadata is :meth:`~dpkme.release.Release.metadata` with the privacy claim
    (:func:`dpkme.privacy.leaks.privacy_claim`): ``differentially_private``, ``guarantee_in_words``
    (:func:`dpkme.privacy.explain.release_guarantee_in_words`) and, for a real release, no seed; a seeded
    demo says "replayable demo, not private" and carries its seed. A size that is not the row count (a noisy
    count or a declared size, ``params["n_policy"]``) is said to be one, never presented as the count.

    Parameters
    ----------
    rel : Release
        The release.
    columns : sequence of str
        The declared column names (the CSV's point columns).
    dataset : str
        Public name of the data (its file name).
    csv_name : str
        Name of the CSV file the metadata describes.

    Returns
    -------
    csv_text : str
    metadata : dict

    Examples
    --------
    >>> import numpy as np
    >>> from dpkme.kernels import GaussianKernel
    >>> from dpkme.release import Release
    >>> rel = Release(points=np.array([[0.1, 2.0]]), weights=np.array([1.0]), mechanism="algorithm2", epsilon=1.0,
    ...               delta=1e-6, sigma=0.1, sensitivity=0.01, neighbouring="replace-one", calibration="analytic",
    ...               kernel=GaussianKernel(lengthscale=1.0), seed=None, n_private=200, noise_source="os-entropy")
    >>> text, meta = release_files(rel, columns=["a", "b"], dataset="d.parquet", csv_name="r.csv")
    >>> text.splitlines()[0], meta["differentially_private"], meta["seed"]
    ('a,b,weight', True, None)
    """
    import pandas as pd

    from .privacy.explain import release_guarantee_in_words
    from .privacy.leaks import privacy_claim

    cols = [str(c) for c in columns]
    frame = pd.DataFrame(_significant(rel.points), columns=cols)
    frame[_weight_name(cols)] = rel.weights
    csv_text = frame.to_csv(index=False)
    meta = rel.metadata()
    meta.pop("not_private_because", None)
    claim = privacy_claim(rel)
    private = bool(claim["differentially_private"])
    meta["differentially_private"] = private
    policy = meta.get("params", {}).get("n_policy", "public")
    if policy in ("private", "declared"):
        # N is then a noisy count or a declared size, not the number of rows: never present it as the count
        size = _SIZE_WORDS[policy].format(n=rel.n_private)
        words = release_guarantee_in_words(dataclasses.replace(rel, n_private=None), private=private)
        meta["guarantee_in_words"] = words + (f" The number of rows is not published: {size}." if private else "")
        rows = f"the private rows ({size})"
    else:
        meta["guarantee_in_words"] = release_guarantee_in_words(rel, private=private)
        rows = f"the {rel.n_private:,} private rows"
    if private:
        meta["seed"] = None
        meta["noise"] = f"fresh noise nobody can regenerate ({rel.noise_source}); no seed recorded"
        meta["guarantee"] = (f"({rel.epsilon:g}, {rel.delta:g})-differentially private for {rows} "
                             f"({rel.neighbouring} neighbouring)")
    else:
        meta["status"] = "replayable demo, not private" if rel.noise_source == "seeded" else "NOT differentially private"
        meta["warning"] = "NOT differentially private: " + "; ".join(claim.get("not_private_because", []))
    if private and meta.get("seed") is not None:                  # never: set to None above
        raise RuntimeError("a file labelled differentially private would carry a seed; nothing was written.")
    meta["mechanism_label"] = _MECHANISM_LABELS.get(rel.mechanism, rel.mechanism)
    meta["dataset"] = dataset
    meta["csv"] = csv_name
    meta["points_units"] = "original units of the columns"
    meta["csv_columns"] = list(frame.columns)
    meta["how_to_use"] = ("E[h(X)] ≈ Σ_m weight_m · h(point_m) (eq. (4) of Balog et al. 2018); the embedding is "
                          "Σ_m weight_m k(point_m, ·) with the kernel above.")
    return csv_text, meta


def _release(args) -> int:
    import numpy as np

    from . import distributed as dist
    from .kernels.kernel import make_kernel
    from .schema import EmbeddedDomain

    out = Path(args.out)
    json_path = out.with_suffix(".json")
    _check_outputs([out, json_path], [("private data", args.data)])
    if not Path(args.data).exists():
        raise ValueError(f"data {args.data!r} not found; check the path.")
    columns = _parse_columns(args.columns)
    bounds = None if args.bounds is None else _parse_bounds(args.bounds, len(columns), columns)
    if args.clip and bounds is None:
        raise ValueError("--clip needs --bounds to clip to.")
    if bounds is None and args.q_scale is None:
        raise ValueError("declare --bounds (the box every row lies in; the synthetic points are drawn from it) or "
                         "--q-scale S (points drawn from N(0, S^2 I)); both are public choices, not read from the data.")
    if args.private_count is not None and args.n_private is not None:
        raise ValueError("give --n N (declared) or --private-count SHARE (released privately), not both.")
    if args.private_count is not None and args.neighbouring != "add-remove":
        raise ValueError("--private-count is for --neighbouring add-remove: under replace-one N is public by the "
                         "neighbouring relation (counted at no cost); drop --private-count.")
    if args.private_count is not None and not 0 < args.private_count < 1:
        raise ValueError(f"--private-count must be a share in (0, 1) of epsilon spent on the count (e.g. 0.1), got "
                         f"{args.private_count:g}.")
    if args.seed is not None and args.seed < 0:
        raise ValueError(f"--seed must be an integer >= 0, got {args.seed}.")
    n_private = "private" if args.private_count is not None else args.n_private
    kernel = make_kernel(args.kernel, lengthscale=args.lengthscale)
    box = None if bounds is None else EmbeddedDomain(lower=bounds[0], upper=bounds[1],
                                                     fixed=np.zeros(len(columns), dtype=bool), blocks={})
    source = dist.open_source(args.data, columns=columns, bounds=bounds, clip=args.clip)
    if args.seed is not None:
        print(f"warning: --seed {args.seed}: a replayable teaching demo, NOT differentially private (anyone who knows "
              "the seed can regenerate the noise); its files say so and carry the seed.", file=sys.stderr)
    common = dict(kernel=kernel, epsilon=args.epsilon, delta=args.delta, calibration=args.calibration,
                  neighbouring=args.neighbouring, n_private=n_private, random_state=args.seed)
    if args.private_count is not None:
        common["count_share"] = args.private_count
    report, close = _progress_bar(args.quiet, f"dpkme release {args.mechanism}")
    try:
        with _DaskClient(args.scheduler, args.workers) as client, warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("always")
            if args.mechanism == "alg2":
                rel = dist.algorithm2(source, n_points=args.points, n_features=args.features, preset=args.preset,
                                      domain=box, q_scale=args.q_scale or 500.0, client=client, progress=report,
                                      **common)
            else:
                rel = dist.algorithm1(source, n_points=args.points, point_domain=box,
                                      q_scale=None if box is not None else args.q_scale, client=client,
                                      progress=report, **common)
    finally:
        close()
    del source
    _warn_lines(caught)
    csv_text, meta = release_files(rel, columns=columns, dataset=Path(args.data).name, csv_name=out.name)
    _write_text(out, csv_text)
    _write_text(json_path, json.dumps(meta, indent=2, default=_json_default, ensure_ascii=False) + "\n")
    label = "differentially private" if meta["differentially_private"] else meta["status"]
    size = _SIZE_WORDS.get(meta["params"].get("n_policy"), "N={n:,}").format(n=rel.n_private)
    print(f"{rel.mechanism}: {rel.n_points} weighted points, epsilon={rel.epsilon:g}, delta={rel.delta:g}, "
          f"{size} ({label}); wrote {out}, {json_path}", file=sys.stderr)
    return 0


def _evaluate(args) -> int:
    import numpy as np
    import pandas as pd

    from . import distributed as dist
    from .kernels.kernel import kernel_from_dict

    meta_path = Path(args.metadata) if args.metadata else Path(args.release).with_suffix(".json")
    try:
        meta = json.loads(_read_bytes(str(meta_path), "release metadata"))
        kernel = kernel_from_dict(meta["kernel"])
        cols = [str(c) for c in meta["csv_columns"]]
    except (json.JSONDecodeError, UnicodeDecodeError, KeyError, TypeError) as exc:
        raise ValueError(f"{str(meta_path)!r} is not the JSON of a dpkme release ({type(exc).__name__}); pass "
                         "--metadata RELEASE.json as written by 'dpkme release'.") from None
    try:
        frame = pd.read_csv(args.release)
    except (OSError, pd.errors.ParserError, UnicodeDecodeError) as exc:
        raise ValueError(f"cannot read the release CSV {args.release!r} ({type(exc).__name__}).") from None
    if list(frame.columns) != cols:
        raise ValueError(f"the release CSV has columns {list(frame.columns)} but its metadata lists {cols}.")
    columns = cols[:-1]
    points = frame[columns].to_numpy(dtype=np.float64)
    weights = frame[cols[-1]].to_numpy(dtype=np.float64)
    if args.out is not None:
        _check_outputs([Path(args.out)], [("private data", args.data), ("release", args.release)])
    from .evaluation import rkhs_distance_report

    with _DaskClient(args.scheduler, None):
        X = dist.open_source(args.data, columns=columns).to_dask_array()
        report = rkhs_distance_report(X, points, weights, kernel=kernel, method=args.method, rng=None)
    del X
    print(f"OWNER ONLY - NOT FOR PUBLICATION: computed from the private rows of {Path(args.data).name!r}.")
    if report.method == "exact":
        print(f"RKHS distance to the private KME: {report.distance:.6g} (exact)")
    else:
        print(f"RKHS distance to the private KME: {report.distance:.6g} (estimate; {100 * report.confidence:g}% "
              f"interval [{report.ci_low:.6g}, {report.ci_high:.6g}])")
    if args.out is not None:
        _write_text(Path(args.out), json.dumps(report.to_dict(), indent=2) + "\n")
        print(f"wrote {args.out}", file=sys.stderr)
    return 0


def _json_default(o):
    if hasattr(o, "tolist"):
        return o.tolist()
    return str(o)


def _dpgm(args) -> int:
    from .cli_dpgm import run

    return run(args)


_COMMANDS = {"reproduce": _reproduce, "sigma": _sigma, "release-table": _release_table, "release": _release,
             "evaluate": _evaluate, "dpgm": _dpgm}


def main(argv=None) -> int:
    r"""Run the command line (the entry point of ``python -m dpkme``).

    Parameters
    ----------
    argv : list of str or None, default=None
        The arguments without the program name, as parsed by
        :func:`build_parser`; ``None`` reads ``sys.argv[1:]``.

    Returns
    -------
    int
        Exit status: 0 on success, 2 when the inputs are refused (the
        ``ValueError`` message is printed to stderr on one line as
        ``error: ...``; a missing or unreadable file, a malformed schema, a
        value the schema refuses, an output path that is an input). Invalid
        syntax exits through :class:`SystemExit` (argparse's usage error).

    Examples
    --------
    The classic calibration :math:`\sigma = \sqrt{2 \ln(1.25/\delta)}\, \Delta / \varepsilon`
    (valid for :math:`\varepsilon < 1`); the last line printed is :math:`\sigma` alone:

    >>> main(["sigma", "--epsilon", "0.5", "--delta", "1e-5", "--sensitivity", "1", "--calibration", "classic"])
    calibration=classic epsilon=0.5 delta=1e-05 sensitivity=1 achieved_delta=... proven=True
    9.6896...
    0

    The owner-only check of a table against its declared schema (here a bundled public table; with
    private data these counts are for the owner's eyes only):

    >>> from dpkme.datasets import load_sample
    >>> _, info = load_sample("penguins")
    >>> main(["schema", "check", str(info.path), "--schema", str(info.schema_path)])
    OWNER ONLY - NOT FOR PUBLICATION: counts from the private rows of 'penguins.csv' (344 rows, 8 columns).
    ...
      "sex": 11 missing (of 344 rows).
      Missing cells include empty cells and text cells holding a missing-value marker ...
    OK: the schema accepts the table (8 columns, embedding dimension 22).
    0
    """
    args = build_parser().parse_args(argv)
    if args.command == "schema":
        run = _schema_suggest if args.schema_command == "suggest" else _schema_check
    else:
        run = _COMMANDS[args.command]
    try:
        return run(args)
    except ValueError as exc:
        print("error: " + " ".join(str(exc).split()), file=sys.stderr)
        return 2
