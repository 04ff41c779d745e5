"""Command line: ``python -m dpkme reproduce ...`` and ``python -m dpkme sigma ...``.

Examples
--------
::

    python -m dpkme reproduce fig1 --data mixture_of_Gaussians_N100000_D2.npz --out f1.json
    python -m dpkme reproduce fig2-alg1 --data mixture_of_Gaussians_N100000_D5.npz --out f2.json
    python -m dpkme reproduce fig2-alg2 --data mixture_of_Gaussians_N100000_D5.npz --out f2b.json
    python -m dpkme sigma --epsilon 1 --delta 1e-6 --sensitivity 2e-5 --calibration analytic

Reproductions default to the paper's own settings (classic calibration,
sensitivity 2/N, full basis). ``sigma`` prints the calibrated noise standard
deviation; its last line is the number alone.
"""

from __future__ import annotations

import argparse
import json
import math
import sys
import time
import warnings

__all__ = ["main", "build_parser"]


def _positive_float(text: str) -> float:
    try:
        v = float(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"expected a number, got {text!r}") from None
    if not math.isfinite(v) or v <= 0:
        raise argparse.ArgumentTypeError(f"expected a finite number > 0, got {text!r}")
    return v


def _positive_int(text: str) -> int:
    try:
        v = int(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"expected an integer, got {text!r}") from None
    if v < 1:
        raise argparse.ArgumentTypeError(f"expected an integer >= 1, got {text!r}")
    return v


def build_parser() -> argparse.ArgumentParser:
    """The argument parser of ``python -m dpkme``, with its two subcommands.

    ``reproduce FIGURE --data PATH --out PATH [options]`` reruns Figure 1
    (``fig1``, Algorithm 1 in the data's own span) or Figure 2 (``fig2-alg1``,
    ``fig2-alg2``: Algorithms 1 and 2 against :math:`M`) of Balog et al. (2018)
    and writes the curves as JSON; ``sigma --epsilon E --delta D --sensitivity S``
    prints the calibrated Gaussian noise standard deviation. Numbers are
    validated while parsing (``--epsilons``, ``--delta``, ``--tol`` finite and
    > 0; ``--max-m``, ``--reps``, ``--J`` integers >= 1).

    Returns
    -------
    argparse.ArgumentParser
        A new parser; ``parse_args`` gives a namespace whose ``command`` is
        ``"reproduce"`` or ``"sigma"``.

    Examples
    --------
    >>> args = build_parser().parse_args(["sigma", "--epsilon", "1", "--delta", "1e-6", "--sensitivity", "0.01"])
    >>> args.command, args.epsilon, args.calibration
    ('sigma', 1.0, 'analytic')
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
        ``ValueError`` message is printed to stderr as ``error: ...``).
        Invalid syntax exits through :class:`SystemExit` (argparse's usage error).

    Examples
    --------
    The classic calibration :math:`\sigma = \sqrt{2 \ln(1.25/\delta)}\, \Delta / \varepsilon`
    (valid for :math:`\varepsilon < 1`); the last line printed is :math:`\sigma` alone:

    >>> main(["sigma", "--epsilon", "0.5", "--delta", "1e-5", "--sensitivity", "1", "--calibration", "classic"])
    calibration=classic epsilon=0.5 delta=1e-05 sensitivity=1 achieved_delta=... proven=True
    9.6896...
    0
    """
    args = build_parser().parse_args(argv)
    try:
        return _reproduce(args) if args.command == "reproduce" else _sigma(args)
    except ValueError as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 2
