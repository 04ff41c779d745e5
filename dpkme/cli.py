"""Command line: ``python -m dpkme`` (or ``dpkme``) ``reproduce``, ``sigma``, ``schema`` and ``release-table``.

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
``release-table TABLE --schema SCHEMA.json --epsilon E --delta D [--out RELEASE.csv] [--rows N] ...``
    :func:`~dpkme.release.tabular.release_table`: the weighted release as CSV (each column rounded to its
    precision; stdout without ``--out``), its JSON metadata next to it (``RELEASE.json``: parameters,
    privacy claim, schema; a real release carries no seed), and with ``--rows N`` ``N`` unweighted
    synthetic rows (``RELEASE_rows.csv``, post-processing). ``--seed`` makes a replayable teaching demo,
    labelled *not private*.

Files are written only at the paths given (never next to the private table, which is never copied),
and never over the input table or schema. Refused inputs exit with status 2 and a one-line
``error: ...`` message.
"""

from __future__ import annotations

import argparse
import json
import math
import sys
import time
import warnings
from pathlib import Path

__all__ = ["main", "build_parser"]


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
    (see the module docstring). Numbers are validated while parsing
    (``--epsilons``, ``--delta``, ``--tol`` finite and > 0; ``--max-m``,
    ``--reps``, ``--J``, ``--points``, ``--rows`` integers >= 1).

    Returns
    -------
    argparse.ArgumentParser
        A new parser; ``parse_args`` gives a namespace whose ``command`` is
        ``"reproduce"``, ``"sigma"``, ``"schema"`` (with ``schema_command``
        ``"suggest"`` or ``"check"``) or ``"release-table"``.

    Examples
    --------
    >>> args = build_parser().parse_args(["sigma", "--epsilon", "1", "--delta", "1e-6", "--sensitivity", "0.01"])
    >>> args.command, args.epsilon, args.calibration
    ('sigma', 1.0, 'analytic')
    >>> args = build_parser().parse_args(["release-table", "t.csv", "--schema", "s.json", "--epsilon", "1",
    ...                                   "--delta", "1e-6", "--rows", "500", "--out", "release.csv"])
    >>> args.mechanism, args.rows, args.seed, args.kernel
    ('alg2', 500, None, 'product')
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
    t.add_argument("--kernel", choices=["product", "additive"], default="product", help="kernel on the embedded rows")
    t.add_argument("--features", type=_positive_int, default=None, help="random features J (alg2; default 2000)")
    t.add_argument("--preset", choices=["accurate", "interactive"], default="accurate", help="solver preset (alg2)")
    t.add_argument("--calibration", choices=["analytic", "classic"], default="analytic")
    t.add_argument("--spread", type=float, default=None,
                   help="spreading of the synthetic rows in lengthscales (default: the library's)")
    t.add_argument("--quiet", action="store_true")
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


def _release_table(args) -> int:
    import numpy as np

    from .release.tabular import DEFAULT_N_FEATURES, DEFAULT_SPREAD, _rounded, release_table

    spread = DEFAULT_SPREAD if args.spread is None else args.spread
    if not math.isfinite(spread) or spread < 0:
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
    df = _load_frame(args.table)
    if args.seed is not None:
        print(f"warning: --seed {args.seed}: a replayable teaching demo, NOT differentially private (anyone who knows "
              "the seed can regenerate the noise); its files say so and carry the seed.", file=sys.stderr)
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        tr = release_table(df, schema=schema, epsilon=args.epsilon, delta=args.delta,
                           mechanism=_TABLE_MECHANISMS[args.mechanism], n_points=args.points,
                           n_features=args.features or DEFAULT_N_FEATURES, calibration=args.calibration,
                           random_state=args.seed, progress=_progress(args.quiet), preset=args.preset,
                           kernel=args.kernel)
    del df
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


def _json_default(o):
    if hasattr(o, "tolist"):
        return o.tolist()
    return str(o)


_COMMANDS = {"reproduce": _reproduce, "sigma": _sigma, "release-table": _release_table}


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
