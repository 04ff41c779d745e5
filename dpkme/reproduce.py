r"""Reproductions of Figures 1 and 2 (Algorithm 1) of Balog et al. (2018).

Settings default to the paper's own (Appendix B; the authors' code):
Gaussian kernel :math:`\exp(-\gamma\|x-y\|^2)` with :math:`\gamma = 10^{-4}/D`,
:math:`\delta = 10^{-6}`, :math:`\varepsilon \in \{0.01, 0.1, 1\}`, classic
calibration with :math:`\Delta = 2/N` (noise variance :math:`8\ln(1.25/\delta)/(N^2\varepsilon^2)`),
the full Gram–Schmidt basis with the paper's threshold :math:`10^{-5}`, and the
M grid ``int(exp(t))`` for ``t`` in ``linspace(0, ln max_m, 100)``.

* Figure 1 (publishable subset): the first M rows of the private data are the
  public points.
* Figure 2 (no publishable subset, Algorithm 1 part): points
  :math:`z_m \sim \mathcal N(0, 500^2 I)` drawn with the given seed.

The data is read from a path given by the caller (the paper's files are
``mixture_of_Gaussians_N100000_D{2,5}.npz`` with key ``X_private``).
"""

from __future__ import annotations

import time
import warnings
from contextlib import contextmanager
from typing import Callable

import numpy as np

from ._validation import check_array, check_positive_float, check_positive_int, check_random_state
from .curves import paper_m_grid, subspace_curves
from .kernels import GaussianKernel
from .subspace import DEFAULT_TOL

__all__ = ["paper_kernel", "fig1", "fig2_alg1", "load_private_npz"]


def paper_kernel(dim: int) -> GaussianKernel:
    """The paper's kernel: :math:`\\gamma = 10^{-4}/D` (lengthscale :math:`100\\sqrt D` in the authors' code)."""
    return GaussianKernel(gamma=1e-4 / check_positive_int(dim, name="dim"))


def load_private_npz(path, *, key: str = "X_private") -> np.ndarray:
    """Load the paper's data file (``.npz`` with key ``X_private``)."""
    try:
        with np.load(path) as f:
            if key not in f.files:
                raise ValueError(f"{path} has no array {key!r}; it contains {sorted(f.files)}.")
            return check_array(f[key], name=key)
    except FileNotFoundError:
        raise ValueError(f"data file not found: {path}") from None
    except (OSError, EOFError) as exc:
        raise ValueError(f"could not read {path} as a .npz file ({exc}).") from None


@contextmanager
def _collect_warnings(sink: list):
    """Record calibration warnings (e.g. classic at epsilon = 1) into the result instead of stderr noise."""
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        yield
    sink.extend(sorted({str(w.message) for w in caught}))


def _result(curves, *, scenario: str, seconds: float, extra: dict) -> dict:
    return {
        "figure": scenario,
        "M": curves.m_grid,
        "epsilons": curves.epsilons,
        "delta": curves.delta,
        "baseline": curves.baseline,
        "projection": curves.projection,
        "alg1": curves.alg1,
        "alg1_reps": curves.alg1_reps,
        "sigmas": curves.sigmas,
        "basis_dims": curves.basis_dims,
        "mean_kxx": curves.mean_kxx,
        "seconds": seconds,
        "seconds_parts": curves.seconds,
        **extra,
    }


def fig1(X, *, max_m: int = 10000, epsilons=(0.01, 0.1, 1.0), delta: float = 1e-6, reps: int = 1, seed: int = 0,
         calibration: str = "classic", sensitivity: str = "paper", basis: str = "full", tol: float = DEFAULT_TOL,
         mean_kxx: float | None = None, progress: Callable | None = None) -> dict:
    """Figure 1: publishable subset (the first M rows are public), every M on the paper's grid."""
    t0 = time.perf_counter()
    X = check_array(X, name="X")
    max_m = check_positive_int(max_m, name="max_m", maximum=X.shape[0])
    kernel = paper_kernel(X.shape[1])
    notes: list[str] = []
    with _collect_warnings(notes):
        curves = subspace_curves(
            X, X[:max_m], kernel=kernel, epsilons=epsilons, delta=delta, m_grid=paper_m_grid(max_m), reps=reps,
            calibration=calibration, sensitivity=sensitivity, basis=basis, tol=tol, points_are_sample=True,
            z_is_prefix_of_x=True, mean_kxx=mean_kxx, random_state=seed, progress=progress)
    return _result(curves, scenario="fig1", seconds=time.perf_counter() - t0,
                   extra={"N": X.shape[0], "D": X.shape[1], "kernel": kernel.to_dict(), "calibration": calibration,
                          "sensitivity": sensitivity, "basis": basis, "tol": tol, "reps": reps, "seed": seed,
                          "warnings": notes})


def fig2_alg1(X, *, max_m: int = 10000, epsilons=(0.01, 0.1, 1.0), delta: float = 1e-6, reps: int = 1, seed: int = 0,
              calibration: str = "classic", sensitivity: str = "paper", basis: str = "full", tol: float = DEFAULT_TOL,
              q_scale: float = 500.0, mean_kxx: float | None = None, progress: Callable | None = None) -> dict:
    """Figure 2, Algorithm 1: points drawn from q = N(0, q_scale² I) with ``seed``."""
    t0 = time.perf_counter()
    X = check_array(X, name="X")
    max_m = check_positive_int(max_m, name="max_m")
    q_scale = check_positive_float(q_scale, name="q_scale")
    rng, _ = check_random_state(seed)
    Z = q_scale * rng.standard_normal((max_m, X.shape[1]))
    kernel = paper_kernel(X.shape[1])
    notes: list[str] = []
    with _collect_warnings(notes):
        curves = subspace_curves(
            X, Z, kernel=kernel, epsilons=epsilons, delta=delta, m_grid=paper_m_grid(max_m), reps=reps,
            calibration=calibration, sensitivity=sensitivity, basis=basis, tol=tol, points_are_sample=False,
            mean_kxx=mean_kxx, random_state=rng, progress=progress)
    return _result(curves, scenario="fig2-alg1", seconds=time.perf_counter() - t0,
                   extra={"N": X.shape[0], "D": X.shape[1], "kernel": kernel.to_dict(), "calibration": calibration,
                          "sensitivity": sensitivity, "basis": basis, "tol": tol, "q_scale": q_scale, "reps": reps,
                          "seed": seed, "warnings": notes})
