r"""Size guard: predict the time and memory of a computation before running it.

:func:`estimate_cost` returns a :class:`CostEstimate` (``seconds, nbytes =
estimate_cost(...)`` unpacks it) from the sizes alone, without touching any
data, so that a user interface can ask for confirmation *before* starting
something that would block it for minutes or exhaust memory:

.. code-block:: python

    est = estimate_cost("algorithm1", n=100_000, n_points=2000, dim=5)
    if est.needs_confirmation:          # above CONFIRM_SECONDS or CONFIRM_BYTES
        ask_the_user(est.message())     # then run, or not

The model
---------
Each mechanism's cost is a sum of a few terms read off its implementation,
each a count of elementary operations divided by a throughput of this machine
(:class:`CostModel`):

* kernel evaluations summed on the fly (``row_means``, ``mean_gram``;
  :math:`\sim 4\times10^8`/s) or stored in a matrix (``cross``; :math:`\sim 2\times10^8`/s),
  plus :math:`2D` flops each for the distances;
* random-feature evaluations (rows x frequencies, a cos and a sin each);
* dense linear algebra (Cholesky, eigendecompositions) in flops;
* per-call Python overhead (audits: one release per run).

The defaults (:data:`DEFAULT_COST_MODEL`) are CPU throughputs of the 2-core
reference machine. Without an explicit ``model``, :func:`estimate_cost` uses
the process-wide model of :func:`current_cost_model`: the reference rates
scaled by this machine's CPU speed (:func:`quick_cost_model`, a few tens of
milliseconds of CPU) at first use, cached and re-measured every
:data:`CALIBRATION_MAX_AGE` seconds, times the machine's contention (wall over
CPU time of a busy loop, :func:`machine_contention`), so that a machine that
became loaded is seen. A finished computation's measured time corrects later
predictions of its family (:func:`observe_cost`: the measured / predicted
ratio, bounded by :data:`CORRECTION_BOUNDS`). ``benchmarks/bench_cost_model.py``
prints predicted against measured times of every long computation of the app
at its default sizes (``benchmarks/results/cost_model.md``): enough to tell
1 s from 1 min, which is what the guard is for. Memory is the size of the
largest arrays held at once.

Thresholds
----------
:data:`CONFIRM_SECONDS` (10 s) and :data:`CONFIRM_BYTES` (1 GiB): above either,
:attr:`CostEstimate.needs_confirmation` is True and the app asks before
running. 10 s is five times the app's 2-second target for an interaction and
long enough that a user would want to know in advance; 1 GiB is a quarter of
the memory of the smallest machine the app is meant to run on (4 GiB), so that
one computation cannot push a shared server into swapping.
"""

from __future__ import annotations

import math
import time
from dataclasses import dataclass, field, replace
from typing import Any

import numpy as np

from ._validation import check_in, check_positive_float, check_positive_int

__all__ = [
    "CONFIRM_SECONDS",
    "CONFIRM_BYTES",
    "ALL_PAIRS_TERM",
    "COST_MECHANISMS",
    "CostModel",
    "CostEstimate",
    "DEFAULT_COST_MODEL",
    "estimate_cost",
    "calibrate_cost_model",
    "needs_confirmation",
    "calibrate_adaptive_cost",
    "adaptive_cost",
    "observe_adaptive_run",
    "ADAPTIVE_REFERENCE",
    "CALIBRATION_MAX_AGE",
    "quick_cost_model",
    "CORRECTION_BOUNDS",
    "current_cost_model",
    "reset_cost_model",
    "cost_correction",
    "observe_cost",
    "machine_contention",
    "PIN_ENV",
]

#: Predicted wall-clock time above which a user interface must ask for confirmation.
CONFIRM_SECONDS = 10.0
#: Predicted peak memory above which a user interface must ask for confirmation (1 GiB).
CONFIRM_BYTES = 1 << 30

_MIB = 1 << 20
#: The term of the ``"rkhs-distance"`` estimate for the exact :math:`\|\hat\mu_X\|^2` (all pairs of rows):
#: drop it with :meth:`CostEstimate.without` once that number is computed and cached.
ALL_PAIRS_TERM = "||mu_X||^2 (all pairs)"


@dataclass(frozen=True)
class CostModel:
    r"""Throughputs of the machine (operations per second) and fixed overheads (seconds).

    Defaults measured on the 2-core reference machine (shared with other jobs);
    :func:`calibrate_cost_model` re-measures the first five on the current one.
    Each term of an estimate is a count of operations divided by one of these
    rates, e.g. :math:`n M / r_\text{sum} + 2 n M D / r_\text{flop}` seconds
    for the kernel means of :math:`M` points over :math:`n` rows in :math:`D` dimensions.

    Parameters
    ----------
    kernel_sum_rate : float, default=4e8
        Kernel values summed on the fly (``row_means``, ``mean_gram``), per second.
    kernel_matrix_rate : float, default=1.5e8
        Kernel values written to a matrix (``cross``, ``gram``), per second.
    feature_rate : float, default=1.5e8
        Random-feature evaluations (rows x frequencies, a cos and a sin each), per second.
    flop_rate : float, default=2e10
        Floating-point operations of dense linear algebra (Cholesky, GEMM,
        ``eigh``) per second; also charged for the :math:`2D` flops of each
        squared distance.
    python_loop : float, default=2e-6
        Seconds of one iteration of a tight Python loop over numpy calls.
    call_overhead : float, default=2e-4
        Seconds of validation and bookkeeping of one small release call
        (audits make one per run).
    database_rate : float, default=1.5e8
        Exponential mechanism: (candidate databases x M) scores per second.
    fit_scale : float, default=1.0
        Adaptive release: seconds on this machine per reference CPU second of its compiled JAX fit and of its
        private pass (:func:`calibrate_adaptive_cost` measures it; 1 on the reference machine when idle).
    compile_scale : float, default=1.0
        Adaptive release: the same ratio for XLA compilation (a structure's first run).
    contention : float, default=1.0
        Wall over CPU time of a single-threaded computation when the model was measured (:func:`machine_contention`,
        >= 1): every estimate's seconds are multiplied by it, since the rates above are CPU rates.
    measured : str, default="reference machine (2 cores)"
        Where and when the rates were measured (shown with an estimate).
    """

    kernel_sum_rate: float = 4.0e8     # kernel values summed on the fly (row_means, mean_gram), per s
    kernel_matrix_rate: float = 1.5e8  # kernel values written to a matrix (cross, gram), per s
    feature_rate: float = 1.5e8        # random-feature evaluations: rows x frequencies, per s
    flop_rate: float = 2.0e10          # dense linear algebra (Cholesky, GEMM, eigh), flops per s
    python_loop: float = 2.0e-6        # one iteration of a tight Python loop over numpy calls (s)
    call_overhead: float = 2.0e-4      # validation and bookkeeping of one small release call (s)
    database_rate: float = 1.5e8       # exponential mechanism: (databases x M) scores per s
    fit_scale: float = 1.0             # adaptive release: this machine's time / the reference CPU time (JAX loop)
    compile_scale: float = 1.0         # adaptive release: the same for XLA compilation
    contention: float = 1.0            # wall time / CPU time of a busy loop now; multiplies every estimate
    measured: str = "reference machine (2 cores)"

    def kernel_sum(self, count: float, dim: int) -> float:
        return count / self.kernel_sum_rate + 2.0 * count * dim / self.flop_rate

    def kernel_matrix(self, count: float, dim: int) -> float:
        return count / self.kernel_matrix_rate + 2.0 * count * dim / self.flop_rate

    def features(self, rows: float, frequencies: float, dim: int) -> float:
        return rows * frequencies / self.feature_rate + 2.0 * rows * frequencies * dim / self.flop_rate

    @property
    def loop_scale(self) -> float:
        """This machine's time of many small numpy calls over the reference machine's (``python_loop`` ratio)."""
        return self.python_loop / DEFAULT_COST_MODEL.python_loop

    @property
    def compute_scale(self) -> float:
        """This machine's time of vectorised numerical work over the reference's (``feature_rate`` ratio); used
        for the compiled JAX training of DPGM, whose kind of work (matrix products and elementwise maps) it is."""
        return DEFAULT_COST_MODEL.feature_rate / self.feature_rate


DEFAULT_COST_MODEL = CostModel()


@dataclass
class CostEstimate:
    """Predicted cost of one computation.

    ``seconds`` and ``nbytes`` (peak memory of the main arrays); ``breakdown``
    gives the seconds of each term. Unpacks as ``seconds, nbytes = est``.
    Made by :func:`estimate_cost`; ``a + b`` is running ``a`` then ``b``,
    :meth:`repeated` and :meth:`without` scale or drop terms.

    Parameters
    ----------
    mechanism : str
        What is estimated: a name of :data:`COST_MECHANISMS`, or a combination
        such as ``"algorithm1 + rkhs-distance"`` for a sum.
    seconds : float
        Predicted wall-clock time in seconds (the sum of ``breakdown``; meant to
        be right within a factor of about 3).
    nbytes : float
        Predicted peak memory of the main arrays held at once, in bytes.
    breakdown : dict of str to float, default={}
        Predicted seconds of each term of the model, by name (e.g.
        :data:`ALL_PAIRS_TERM`).
    params : dict of str to object, default={}
        The size parameters the estimate was computed from.
    confirm_seconds : float, default=CONFIRM_SECONDS
        Time above which :attr:`needs_confirmation` is True (10 s).
    confirm_bytes : float, default=CONFIRM_BYTES
        Memory above which :attr:`needs_confirmation` is True (1 GiB).
    families : dict of str to float, default={}
        The mechanism families the estimate is made of, each with the correction factor of
        :func:`observe_cost` it was predicted with (1 when none).
    """

    mechanism: str
    seconds: float
    nbytes: float
    breakdown: dict[str, float] = field(default_factory=dict)
    params: dict[str, Any] = field(default_factory=dict)
    confirm_seconds: float = CONFIRM_SECONDS
    confirm_bytes: float = CONFIRM_BYTES
    families: dict[str, float] = field(default_factory=dict)

    def __iter__(self):
        yield self.seconds
        yield self.nbytes

    @property
    def needs_confirmation(self) -> bool:
        """True above :data:`CONFIRM_SECONDS` or :data:`CONFIRM_BYTES`."""
        return bool(self.seconds > self.confirm_seconds or self.nbytes > self.confirm_bytes)

    def message(self) -> str:
        """One sentence for a confirmation dialog."""
        t = self.seconds
        time_txt = f"{t:.1f} s" if t < 120 else f"{t / 60:.1f} min" if t < 7200 else f"{t / 3600:.1f} h"
        mem = self.nbytes
        mem_txt = f"{mem / _MIB:.0f} MiB" if mem < (1 << 30) else f"{mem / (1 << 30):.1f} GiB"
        text = f"{self.mechanism}: about {time_txt} and {mem_txt} of memory (estimate, within a factor of ~3)"
        if self.needs_confirmation:
            why = []
            if t > self.confirm_seconds:
                why.append(f"more than {self.confirm_seconds:g} s")
            if mem > self.confirm_bytes:
                why.append(f"more than {self.confirm_bytes / (1 << 30):g} GiB")
            text += " -- " + " and ".join(why) + "; confirm to run."
        return text

    def __add__(self, other: CostEstimate) -> CostEstimate:
        """The cost of running ``self`` and then ``other``: seconds add, peak memory is the larger one."""
        if not isinstance(other, CostEstimate):
            return NotImplemented
        breakdown = {f"{self.mechanism}: {k}": v for k, v in self.breakdown.items()}
        breakdown.update({f"{other.mechanism}: {k}": v for k, v in other.breakdown.items()})
        return CostEstimate(mechanism=f"{self.mechanism} + {other.mechanism}", seconds=self.seconds + other.seconds,
                            nbytes=max(self.nbytes, other.nbytes), breakdown=breakdown,
                            params={**other.params, **self.params},
                            confirm_seconds=min(self.confirm_seconds, other.confirm_seconds),
                            confirm_bytes=min(self.confirm_bytes, other.confirm_bytes),
                            families={**other.families, **self.families})

    def repeated(self, times: int) -> CostEstimate:
        """The cost of ``times`` runs one after the other (same peak memory)."""
        k = check_positive_int(times, name="times")
        return replace(self, seconds=self.seconds * k, breakdown={key: v * k for key, v in self.breakdown.items()},
                       params={**self.params, "times": k})

    def without(self, *terms: str) -> CostEstimate:
        """The estimate without the named terms of ``breakdown`` (e.g. work already done and cached)."""
        drop = {t for t in terms if t in self.breakdown}
        return replace(self, seconds=max(self.seconds - sum(self.breakdown[t] for t in drop), 0.0),
                       breakdown={k: v for k, v in self.breakdown.items() if k not in drop})

    def to_dict(self) -> dict:
        return {"mechanism": self.mechanism, "seconds": self.seconds, "bytes": self.nbytes,
                "needs_confirmation": self.needs_confirmation, "breakdown": dict(self.breakdown),
                "params": dict(self.params)}


def needs_confirmation(estimate: CostEstimate, *, seconds: float = CONFIRM_SECONDS,
                       nbytes: float = CONFIRM_BYTES) -> bool:
    """Whether ``estimate`` exceeds the given thresholds (defaults: the module's).

    Parameters
    ----------
    estimate : CostEstimate
        A prediction from :func:`estimate_cost`.
    seconds : float, default=CONFIRM_SECONDS
        Time threshold in seconds (finite, > 0).
    nbytes : float, default=CONFIRM_BYTES
        Memory threshold in bytes (finite, > 0).

    Returns
    -------
    bool
        True when ``estimate.seconds > seconds`` or ``estimate.nbytes > nbytes``:
        a user interface should then ask before running. Unlike
        :attr:`CostEstimate.needs_confirmation`, the estimate's own thresholds
        are ignored.

    Raises
    ------
    ValueError
        If ``estimate`` is not a :class:`CostEstimate` or a threshold is not a
        finite number > 0.

    Examples
    --------
    >>> est = estimate_cost("algorithm1", n=1000, n_points=100)
    >>> needs_confirmation(est), needs_confirmation(est, seconds=1e-6)
    (False, True)
    """
    if not isinstance(estimate, CostEstimate):
        raise ValueError(f"estimate must be a CostEstimate, got {estimate!r}.")
    return bool(estimate.seconds > check_positive_float(seconds, name="seconds")
                or estimate.nbytes > check_positive_float(nbytes, name="nbytes"))


# --------------------------------------------------------------------------- per-mechanism models
def _int(params, name, default=None, minimum=1):
    if name not in params or params[name] is None:
        if default is None:
            raise ValueError(f"estimate_cost needs {name}=...")
        return default
    return check_positive_int(params[name], name=name, minimum=minimum)


def _algorithm1(p, m: CostModel):
    n, M, D = _int(p, "n"), _int(p, "n_points"), _int(p, "dim", 2)
    weights = p.get("weights", "free")
    check_in(weights, ("free", "simplex", "l1"), name="weights")
    F = min(M, _int(p, "basis_dim", M))
    t = {
        "basis (Gram-Schmidt)": m.kernel_matrix(M * M / 2.0 + M * 128.0, D) + M * F * F / (4.0 * m.flop_rate)
        + M * 256 * 4 * m.python_loop / 64,
        "kernel means over the data": m.kernel_sum(float(n) * M, D),
        "overhead": 20 * m.call_overhead,
    }
    mem = 8.0 * (M * F / 2.0 + 2.0 * M * 256 + n * D) + 4 * _MIB
    if weights != "free":
        t["weight projection"] = (m.kernel_matrix(M * M, D) + (20.0 * M**3 + 1000.0 * M * M) / m.flop_rate
                                  + 500 * (M * math.log2(M + 1) * 1e-8 + 10 * m.python_loop))
        mem += 8.0 * 3 * M * M
    return t, mem


def _pool_options(p):
    preset = p.get("preset", "accurate")
    check_in(preset, ("accurate", "interactive"), name="preset")
    base = {"pool_size": 20000, "shortlist": 512, "max_iter": 100} if preset == "accurate" else \
        {"pool_size": 2000, "shortlist": 256, "max_iter": 20}
    base.update({k: v for k, v in (p.get("solver_options") or {}).items() if k in base})
    return base


def _solver_cost(p, m: CostModel, J: int, D: int, M: int):
    solver = p.get("solver", "pursuit-joint")
    check_in(solver, ("pursuit-joint", "preimage", "joint", "pursuit", "herding"), name="solver")
    o = _pool_options(p)
    half = J / 2.0
    t = {}
    if solver in ("pursuit-joint", "pursuit", "herding"):
        t["candidate pool features"] = m.features(o["pool_size"], half, D)
        t["greedy selection"] = m.features(M * o["shortlist"], half, D) * 2.0 + M * 40 * m.python_loop
    if solver in ("pursuit-joint", "joint", "herding"):
        iters = o["max_iter"] if solver != "joint" else 300
        # L-BFGS on all locations and weights, ~1.5 evaluations per iteration at a few reported sizes
        t["joint L-BFGS"] = 3.0 * iters * m.features(M, half, D + 2) + iters * 50 * m.python_loop
    if solver == "preimage":
        t["pre-images (Adam)"] = M * 100 * (m.features(1, half, D) * 3 + 10 * m.python_loop)
    mem = 4.0 * o["pool_size"] * J + 8.0 * M * J * 3 + 8.0 * o["shortlist"] * J
    refit = (p.get("solver_options") or {}).get("refit")
    if refit and solver == "pursuit-joint":
        # the pool re-fit of the weights (tables): the pool's features, J random features plus H marginal cells
        # (release_table's marginal block), float32, and spectral projected-gradient iterations on a working set
        K = int(refit.get("pool_size", 12000))
        iters = int(refit.get("max_iter", 1000))
        H = int(p.get("marginal_cells") or 0)
        work = min(K, max(3 * M, 2000))
        t["pool re-fit"] = m.features(K, half, D) + iters * 4.0 * work * (J + H) / m.flop_rate
        mem = max(mem, 4.0 * K * (J + H) * 1.5 + 8.0 * M * J * 3)
    return t, mem


def _algorithm2(p, m: CostModel):
    n, J, M, D = _int(p, "n"), _int(p, "n_features", 10000), _int(p, "n_points"), _int(p, "dim", 2)
    t = {"noisy feature mean": m.features(n, J / 2.0, D), "overhead": 20 * m.call_overhead}
    ts, mem = _solver_cost(p, m, J, D, M)
    t.update(ts)
    return t, mem + 8.0 * n * D + 4 * _MIB


def _exponential(p, m: CostModel):
    n, G, M, D = _int(p, "n"), _int(p, "n_candidates"), _int(p, "m"), _int(p, "dim", 2)
    T = float(math.comb(G + M - 1, M))
    t = {
        "kernel means over the data": m.kernel_sum(float(G) * n, D),
        "||mu_D||^2 (all pairs of rows)": m.kernel_sum(n * n / 2.0, D),
        "scoring every database": T * max(M, 1) / m.database_rate,
        "exact sampling": T / m.database_rate * 2.0,
        "overhead": 0.03,
    }
    mem = 8.0 * T * 3 + (8.0 * G * G if M >= 3 else 8.0 * G * 1024) + 8.0 * n * D
    return t, mem


def _gp(p, m: CostModel):
    n, D = _int(p, "n"), _int(p, "dim", None) if "dim" in p else None
    product = bool(p.get("product_kernel", True))
    if p.get("grid_shape") is not None:
        shape = [check_positive_int(s, name="grid_shape") for s in p["grid_shape"]]
        D = len(shape) if D is None else D
        Q = float(np.prod(shape))
    else:
        Q = float(_int(p, "n_query"))
        shape = None
        D = 2 if D is None else D
    t = {}
    if shape is not None and product:
        t["per-axis Cholesky"] = (sum(s**3 / 3.0 for s in shape) / m.flop_rate
                                  + m.kernel_matrix(sum(s * s for s in shape), 1))
        t["private function on the grid"] = 2.0 * Q * n / m.flop_rate + m.kernel_matrix(n * sum(shape), 1)
        t["sampling"] = 2.0 * Q * sum(shape) / m.flop_rate
        mem = 8.0 * Q * 5 + 8.0 * sum(s * s for s in shape) * 2 + 8.0 * n * (shape[-1] + 1) * 2
    else:
        t["kernel matrix"] = m.kernel_matrix(Q * Q, D)
        t["dense Cholesky"] = Q**3 / 3.0 / m.flop_rate * 1.5  # single-threaded BLAS
        t["private function"] = m.kernel_sum(Q * n, D)
        t["sampling"] = 2.0 * Q * Q / m.flop_rate
        mem = 8.0 * Q * Q * 3 + 8.0 * Q * 5 + 8.0 * n * D
    t["overhead"] = 10 * m.call_overhead
    return t, mem


def _kmeans(p, m: CostModel):
    n, D, k = _int(p, "n"), _int(p, "dim", 2), _int(p, "k")
    J, T = _int(p, "n_features", 1000), _int(p, "n_iter", 10, minimum=0)
    pre = p.get("preimages", "auto")
    check_in(pre, ("auto", "history", "final", "none"), name="preimages")
    cand = _int(p, "n_candidates", 2000)
    t = {
        "accounting (plan)": 0.05,
        "Lloyd passes": max(T, 1) * (m.features(n, J / 2.0, D) + 2.0 * n * J * k / m.flop_rate),
    }
    if p.get("local_view", True):
        t["local view"] = m.features(n, J / 2.0, D)
    n_pre = {"auto": T + 1, "history": T + 1, "final": 1, "none": 0}[pre]
    if n_pre:
        t["pre-images"] = m.features(cand, J / 2.0, D) + n_pre * k * 3 * 60 * (m.features(1, J / 2.0, D) * 4
                                                                               + 10 * m.python_loop)
    mem = 4.0 * cand * J + 8.0 * (k * J * (T + 2) + n * D) + 8.0 * 2048 * J
    return t, mem


def _clusterwise(p, m: CostModel):
    t, mem = _kmeans(p, m)
    J, D, M, k = _int(p, "n_features", 1000), _int(p, "dim", 2), _int(p, "n_points"), _int(p, "k")
    ts, mem2 = _solver_cost(p, m, J, D, max(1, M // k))
    for key, val in ts.items():
        t["per-cluster " + key] = k * val
    t["release step"] = m.features(_int(p, "n"), J / 2.0, D)
    return t, max(mem, mem2)


def _two_sample(p, m: CostModel):
    n, D, J = _int(p, "n"), _int(p, "dim", 2), _int(p, "n_features", 5)
    B = _int(p, "n_null", 2000)
    t = {
        "features of both samples": m.kernel_matrix(2.0 * n * J, D) + 2.0 * n * J * J / m.flop_rate,
        "null simulation": B * (J**3 * 6.0 / m.flop_rate + (2e-7 * J * J + 2.5e-6) * m.loop_scale),
        "overhead": 10 * m.call_overhead,
    }
    mem = 8.0 * (2 * n * (D + J) + B * J * J * 2)
    return t, mem


#: Per-run seconds of each audit at its default sizes (measured; ``benchmarks/bench_audit.py --sections cost``).
_AUDIT_RUN = {"gaussian": 1.0e-4, "laplace": 1.2e-4, "algorithm1": 3.5e-4, "algorithm2": 1.0e-4,
              "exponential": 5.0e-6, "gp": 2.5e-4, "kmeans": 1.6e-3, "two-sample": 7.0e-4}
_AUDIT_SETUP = {"gaussian": 0.01, "laplace": 0.02, "algorithm1": 0.03, "algorithm2": 0.04, "exponential": 0.02,
                "gp": 0.03, "kmeans": 0.05, "two-sample": 0.05}


def _audit(p, m: CostModel):
    from .audit import AUDITS

    mech = p.get("audit", p.get("of"))
    check_in(mech, tuple(AUDITS), name="audit")
    runs = _int(p, "runs")
    scale = m.loop_scale
    t = {"runs": 2.0 * runs * _AUDIT_RUN[mech] * scale, "setup": _AUDIT_SETUP[mech],
         "bounds and curves": 0.05 + 2e-7 * runs}
    return t, 8.0 * 40 * runs + 8 * _MIB


#: Reference seconds of one release of the membership attack (:func:`dpkme.audit.membership.membership_attack`,
#: one seeded release, its projection and the guess), per attacked mechanism; scaled by ``loop_scale`` (and the
#: contention). Algorithm 2's from ``benchmarks/bench_cost_model.py`` (``benchmarks/results/cost_model.md``: 0.71 ms
#: of wall time per release at a measured contention x speed of 4.2); Algorithm 1's is not measured: about 3 times
#: Algorithm 2's, the ratio of their audits' per-run times (``_AUDIT_RUN``).
_MEMBERSHIP_RELEASE = {"algorithm2": 1.7e-4, "algorithm1": 5.0e-4}


def _membership(p, m: CostModel):
    mech = p.get("attacked", "algorithm2")
    check_in(mech, tuple(_MEMBERSHIP_RELEASE), name="attacked")
    runs, G = _int(p, "runs"), _int(p, "n_epsilons", 8)
    t = {"releases": 2.0 * runs * G * _MEMBERSHIP_RELEASE[mech] * m.loop_scale, "setup": 0.05 * m.loop_scale}
    return t, 8.0 * 2 * runs * G + 8 * _MIB


def _dpgm(p, m: CostModel):
    # Reference rule of ui/generative.py's DPGM run (benchmarks/bench_dpgm.py --app; benchmarks/results/dpgm.md):
    # compilation (and the private k-means), each SGD step (all models at once: models x padded batch x parameters),
    # then sampling and the owner's evaluation; scaled by the machine's compute_scale.
    steps, models, cap = _int(p, "steps"), _int(p, "models"), _int(p, "capacity")
    n_par, n, D = _int(p, "n_params"), _int(p, "n"), _int(p, "dim", 2)
    kmeans = bool(p.get("kmeans", True))
    c = m.compute_scale
    t = {"compile and k-means" if kmeans else "compile": (5.5 if kmeans or models > 1 else 4.0) * c,
         "SGD steps": steps * (0.01 + 2.2e-9 * models * cap * n_par) * c,
         "sampling and evaluation": 8.0 * c}
    return t, 4.0 * (n * D * 3 + models * cap * n_par * 3)


def _lengthscale(p, m: CostModel):
    n, D = _int(p, "n", minimum=2), _int(p, "dim", 2)
    g = _int(p, "grid_size", 30)
    pairs = p.get("pairs", "auto")
    check_in(pairs, ("auto", "all", "disjoint"), name="pairs")
    if pairs == "auto":
        pairs = "all" if n <= 2000 else "disjoint"
    count = n * (n - 1) / 2.0 if pairs == "all" else n / 2.0
    t = {"pairwise distances": count * (3.0 * D / m.flop_rate * 20 + math.log2(max(g, 2)) * 1e-9 * 4)
         + count / m.kernel_matrix_rate, "overhead": m.call_overhead}
    return t, 8.0 * (128 * 1024 * (D + 2) + n * D)


def _evaluation(p, m: CostModel):
    n, D = _int(p, "n"), _int(p, "dim", 2)
    M = _int(p, "n_points", 1)
    t = {ALL_PAIRS_TERM: m.kernel_sum(n * n / 2.0, D), "cross term": m.kernel_sum(float(n) * M, D),
         "release term": m.kernel_matrix(float(M) * M, D)}
    return t, 8.0 * (n * D + M * M) + 4 * _MIB


#: Reference CPU seconds of the adaptive release's terms, fitted by least squares to warm and cold runs of the
#: bundled penguins and seattle_weather tables at N = 500, 3000, 20000 and epsilon = 0.3, 3 on the 2-core
#: machine (fit within 0.6-1.4x of the CPU times; ``benchmarks/results/adaptive_cost.md``): one
#: Adam step of the compiled fit per 1000 relaxed rows, ``step`` + ``step_w1`` * W1 + ``step_w2sq`` * W2^2 with
#: W1, W2 the summed widths of the columns' 1- and 2-way features; ``pass`` per row x candidate feature of the
#: private pass; ``compile`` for XLA compilation of a structure's fit (its first run in a process).
ADAPTIVE_REFERENCE = {"step": 8.5e-4, "step_w1": 9.7e-6, "step_w2sq": 5.3e-7, "pass": 2.2e-9, "compile": 1.8,
                      "overhead": 0.05}
#: Wall seconds of :func:`calibrate_adaptive_cost`'s micro-benchmark, (compile, run), that correspond to one CPU
#: second of :data:`ADAPTIVE_REFERENCE`: set from runs of both on the loaded 2-core machine (load 20-25), where the
#: release's wall time was about 5 x its reference CPU time while the benchmark's compiled loop (XLA's own threads)
#: ran in 0.13-0.18 s: the benchmark under-reads the load's effect on the release, hence a run reference well below
#: its CPU time. ``benchmarks/results/adaptive_cost.md`` gives the predictions against measured times.
ADAPTIVE_BENCH_REFERENCE = (0.60, 0.05)


def _widths(p, name):
    w = p.get(name)
    if w is None or isinstance(w, (str, bytes)) or not len(w):
        raise ValueError(f"estimate_cost needs {name}=(one width per column, ...), got {w!r}.")
    return [check_positive_int(v, name=name) for v in w]


def _adaptive(p, m: CostModel):
    n = _int(p, "n")
    w1, w2 = _widths(p, "widths1"), _widths(p, "widths2")
    if len(w1) != len(w2):
        raise ValueError(f"widths1 and widths2 must have one entry per column, got {len(w1)} and {len(w2)}.")
    cols = len(w1)
    rounds = _int(p, "rounds", max(2 * cols, 12))
    rows = _int(p, "synthetic_rows", 1000)
    steps = max(rounds - cols + 1, 1) * _int(p, "round_steps", 30) + _int(p, "final_steps", 300)
    W1, W2 = float(sum(w1)), float(sum(w2))
    r = ADAPTIVE_REFERENCE
    per_step = (r["step"] + r["step_w1"] * W1 + r["step_w2sq"] * W2 * W2) * rows / 1000.0
    pairs = sum(min(a * b, 2048) for i, a in enumerate(w2) for b in w2[i + 1:])
    t = {"fit (compiled Adam steps)": steps * per_step * m.fit_scale,
         "private pass (features of every candidate)": n * (W1 + pairs) * r["pass"] * m.fit_scale,
         "overhead": r["overhead"] * m.fit_scale}
    if not p.get("compiled", False):
        t["XLA compilation (first run of this structure)"] = r["compile"] * m.compile_scale
    mem = 8.0 * (min(n, 8192) * (W1 + pairs) + rows * (W1 + W2) * 8) + 64 * _MIB
    return t, mem


_MODELS = {
    "algorithm1": _algorithm1,
    "algorithm2": _algorithm2,
    "exponential": _exponential,
    "gp": _gp,
    "kmeans": _kmeans,
    "clusterwise": _clusterwise,
    "two-sample": _two_sample,
    "audit": _audit,
    "private-lengthscale": _lengthscale,
    "rkhs-distance": _evaluation,
    "adaptive": _adaptive,
    "membership-attack": _membership,
    "dpgm": _dpgm,
}
COST_MECHANISMS = tuple(_MODELS)

_DOC_PARAMS = {
    "algorithm1": "n, n_points, dim=2, weights='free'",
    "algorithm2": "n, n_points, n_features=10000, dim=2, solver='pursuit-joint', preset='accurate', solver_options, "
                  "marginal_cells=0",
    "exponential": "n, n_candidates, m, dim=2",
    "gp": "n, grid_shape=(..) or n_query, dim, product_kernel=True",
    "kmeans": "n, k, dim=2, n_features=1000, n_iter=10, preimages='auto', n_candidates=2000, local_view=True",
    "clusterwise": "as kmeans, plus n_points and the solver options of algorithm2",
    "two-sample": "n, n_features=5, dim=2, n_null=2000",
    "audit": "audit=<name in dpkme.audit.AUDITS>, runs",
    "private-lengthscale": "n, dim=2, grid_size=30, pairs='auto'",
    "rkhs-distance": "n, n_points=1, dim=2",
    "adaptive": "n, widths1, widths2, rounds, synthetic_rows=1000, round_steps=30, final_steps=300, compiled=False",
    "membership-attack": "runs, n_epsilons=8, attacked='algorithm2'",
    "dpgm": "steps, models, capacity, n_params, n, dim=2, kmeans=True",
}


def estimate_cost(mechanism: str, *, model: CostModel | None = None, **params) -> CostEstimate:
    """Predicted seconds and peak bytes of ``mechanism`` at the given sizes (no data needed).

    Mechanisms and their size parameters (:data:`COST_MECHANISMS`):

    * ``"algorithm1"``: ``n, n_points, dim=2, weights="free"``
    * ``"algorithm2"``: ``n, n_points, n_features=10000, dim=2, solver, preset, solver_options`` (its ``refit``
      adds the pool re-fit) and ``marginal_cells`` (the cells :math:`H` of a table release's marginal block)
    * ``"exponential"``: ``n, n_candidates, m, dim=2``
    * ``"gp"``: ``n`` and ``grid_shape=(n1, n2, ...)`` (or ``n_query``), ``dim``, ``product_kernel``
    * ``"kmeans"``: ``n, k, dim, n_features, n_iter, preimages, n_candidates, local_view``
    * ``"clusterwise"``: the k-means sizes plus ``n_points`` and the solver options
    * ``"two-sample"``: ``n, n_features, dim, n_null``
    * ``"audit"``: ``audit=<name>, runs``
    * ``"private-lengthscale"``: ``n, dim, grid_size, pairs``
    * ``"rkhs-distance"``: ``n, n_points, dim`` (exact evaluation of a release)
    * ``"membership-attack"``: ``runs`` (releases per table and per ε), ``n_epsilons=8``, ``attacked="algorithm2"`` (the release attacked)
    * ``"dpgm"``: ``steps`` (DP-SGD steps), ``models``, ``capacity`` (padded batch), ``n_params`` (parameters of
      one model), ``n``, ``dim``, ``kmeans`` (the private k-means split runs)
    * ``"adaptive"``: ``n``, ``widths1`` and ``widths2`` (each column's width in a 1- and a 2-way query, public:
      :meth:`dpkme.release.fit.RelaxedDomain.width`), ``rounds``, ``synthetic_rows``, ``round_steps``,
      ``final_steps`` and ``compiled`` (the structure's fit is already compiled in this process); scaled by the
      model's ``fit_scale`` and ``compile_scale`` (:func:`calibrate_adaptive_cost`)

    Parameters
    ----------
    mechanism : str
        One of :data:`COST_MECHANISMS` (listed above).
    model : CostModel or None, default=None
        Throughputs to divide the operation counts by; ``None`` uses the
        process-wide model calibrated on this machine (:func:`current_cost_model`,
        re-measured every :data:`CALIBRATION_MAX_AGE` seconds) times the family's
        correction left by the last measured run (:func:`observe_cost`); pass
        :data:`DEFAULT_COST_MODEL` for the reference machine's numbers.
    **params
        The mechanism's size parameters, as listed above (``n``: rows of the
        private data; ``n_points``: synthetic points :math:`M`; ``dim``: columns
        :math:`D`; ``n_features``: random features :math:`J`; ...). Sizes are
        integers >= 1; those without a default are required. Parameters the
        mechanism does not use are recorded in ``params`` but ignored.

    Returns
    -------
    CostEstimate
        Predicted seconds, peak bytes and the seconds of each term; unpacks as
        ``seconds, nbytes``.

    Raises
    ------
    ValueError
        On an unknown ``mechanism``, a ``model`` that is not a :class:`CostModel`,
        or a missing or invalid size (the message names the parameter).

    Examples
    --------
    >>> est = estimate_cost("algorithm1", n=100_000, n_points=2000, dim=5, model=DEFAULT_COST_MODEL)
    >>> sorted(est.breakdown)
    ['basis (Gram-Schmidt)', 'kernel means over the data', 'overhead']
    >>> est.needs_confirmation
    False
    >>> print(est.message())
    algorithm1: about 0.8 s and 31 MiB of memory (estimate, within a factor of ~3)
    """
    check_in(mechanism, COST_MECHANISMS, name="mechanism")
    if model is not None and not isinstance(model, CostModel):
        raise ValueError(f"model must be a CostModel, got {model!r}.")
    m = current_cost_model() if model is None else model
    corr = cost_correction(mechanism) if model is None else 1.0
    terms, mem = _MODELS[mechanism](params, m)
    if mechanism == "adaptive":          # its scales are wall-time ratios already (calibrate_adaptive_cost)
        terms = {k: float(v) * corr for k, v in terms.items()}
    else:
        terms = {k: float(v) * corr * m.contention for k, v in terms.items()}
    return CostEstimate(mechanism=mechanism, seconds=float(sum(terms.values())), nbytes=float(mem),
                        breakdown=terms, params=dict(params), families={mechanism: corr})


def calibrate_cost_model(budget_seconds: float = 0.5) -> CostModel:
    """Re-measure the throughputs of :class:`CostModel` on this machine (about ``budget_seconds``).

    Kernel sums and matrices, random features, a Cholesky and a small release
    call are timed once each at sizes scaled to the budget; the best of two
    repetitions is used. The inputs are synthetic (seeded standard normals):
    no data is touched.

    Parameters
    ----------
    budget_seconds : float, default=0.5
        Approximate total time of the measurements in seconds (finite, > 0),
        shared equally among the five timed operations; the sizes are clipped,
        so very small or very large budgets are not met exactly.

    Returns
    -------
    CostModel
        :data:`DEFAULT_COST_MODEL` with ``kernel_sum_rate``,
        ``kernel_matrix_rate``, ``feature_rate``, ``flop_rate`` and
        ``call_overhead`` replaced by the measured values and ``measured``
        stating the date; ``python_loop`` and ``database_rate`` are kept.
        Timings vary from run to run and with the load of the machine.
    """
    from .kernels.kernel import GaussianKernel
    from .kernels.random_features import RandomFourierFeatures

    b = check_positive_float(budget_seconds, name="budget_seconds")
    share = b / 5.0
    rng = np.random.default_rng(0)
    k = GaussianKernel(lengthscale=1.0)

    def best(fn):                  # CPU seconds of this thread (BLAS helper threads that spin-wait on a busy machine
        out = math.inf             # would inflate the process's); the share of the cores a loaded machine leaves
        for _ in range(2):         # is the separate ``contention`` factor
            t0 = time.thread_time()
            fn()
            out = min(out, time.thread_time() - t0)
        return max(out, 1e-6)

    n = int(min(2e5, max(500, share * DEFAULT_COST_MODEL.kernel_sum_rate / 200)))
    Z, X = rng.standard_normal((200, 2)), rng.standard_normal((n, 2))
    ks = 200.0 * n / best(lambda: k.row_means(Z, X))
    nm = int(min(4000, max(100, math.sqrt(share * DEFAULT_COST_MODEL.kernel_matrix_rate))))
    A = rng.standard_normal((nm, 2))
    km = float(nm) * nm / best(lambda: k.cross(A, A[: nm // 2])) / 2.0
    f = RandomFourierFeatures(k, n_components=1000, random_state=0).fit(2)
    nf = int(min(1e5, max(200, share * DEFAULT_COST_MODEL.feature_rate / 500)))
    Xf = rng.standard_normal((nf, 2))
    fr = nf * 500.0 / best(lambda: f.mean_embedding(Xf))
    q = int(min(800, max(100, (share * DEFAULT_COST_MODEL.flop_rate * 3) ** (1 / 3) / 2)))
    S = rng.standard_normal((q, q))
    S = S @ S.T + q * np.eye(q)
    fl = q**3 / 3.0 / best(lambda: np.linalg.cholesky(S))
    from .privacy.calibration import calibrate_gaussian
    co = best(lambda: [calibrate_gaussian(epsilon=1.0, delta=1e-5, sensitivity=0.1) for _ in range(20)]) / 20 * 7
    v = rng.standard_normal(8)
    loops = int(min(20000, max(200, share / _LOOP_REFERENCE / 2)))

    def small_calls():
        acc = 0.0
        for _ in range(loops):
            acc += float(np.dot(v, v))
        return acc

    pl = DEFAULT_COST_MODEL.python_loop * best(small_calls) / loops / _LOOP_REFERENCE
    return replace(DEFAULT_COST_MODEL, kernel_sum_rate=ks, kernel_matrix_rate=km, feature_rate=fr, flop_rate=fl,
                   call_overhead=co, python_loop=pl, contention=machine_contention(),
                   measured=f"calibrated on this machine at {time.strftime('%Y-%m-%d %H:%M:%S')}")


#: Seconds after which the process-wide model (:func:`current_cost_model`) is measured again, so that a machine
#: that became loaded (or quiet) is seen.
CALIBRATION_MAX_AGE = 180.0
#: Bounds of a family's correction factor (:func:`observe_cost`).
CORRECTION_BOUNDS = (0.1, 10.0)

#: Environment variable: ``reference`` pins the process-wide model to :data:`DEFAULT_COST_MODEL` without
#: corrections (reproducible predictions for tests and demos; the test suite sets it, so a test's outcome does not
#: depend on the machine's load).
PIN_ENV = "DPKME_COST_MODEL"

_PROCESS: dict[str, Any] = {"model": None, "at": -math.inf}


def _pinned() -> bool:
    import os

    return os.environ.get(PIN_ENV, "").strip().lower() == "reference"
_CORRECTIONS: dict[str, float] = {}


def quick_cost_model(cpu_seconds: float = 0.01) -> CostModel:
    """The reference model scaled to this machine now: one CPU-speed factor and the contention (cheap and robust).

    A loop of small numpy calls is timed in CPU time of this thread (about ``cpu_seconds``) against its time on the
    reference machine; every throughput of :data:`DEFAULT_COST_MODEL` is divided by that ratio and every overhead
    multiplied by it, and :attr:`CostModel.contention` is :func:`machine_contention` (about 0.02 s of CPU). Five
    separate rates (:func:`calibrate_cost_model`) measured in a few milliseconds each on a busy machine scatter by
    factors of 10; one factor does not, and what differs by family is left to :func:`observe_cost`.

    Parameters
    ----------
    cpu_seconds : float, default=0.01
        CPU time of the speed measurement (finite, > 0).

    Returns
    -------
    CostModel

    Examples
    --------
    >>> m = quick_cost_model(0.001)
    >>> m.contention >= 1.0 and m.kernel_sum_rate > 0
    True
    """
    target = check_positive_float(cpu_seconds, name="cpu_seconds")
    v = np.random.default_rng(0).standard_normal(8)
    best = math.inf
    for _ in range(3):
        loops = max(int(target / 3 / _LOOP_REFERENCE), 100)
        t0 = time.thread_time()
        acc = 0.0
        for _ in range(loops):
            acc += float(np.dot(v, v))
        best = min(best, max(time.thread_time() - t0, 1e-9) / loops)
    r = best / _LOOP_REFERENCE
    d = DEFAULT_COST_MODEL
    return replace(d, kernel_sum_rate=d.kernel_sum_rate / r, kernel_matrix_rate=d.kernel_matrix_rate / r,
                   feature_rate=d.feature_rate / r, flop_rate=d.flop_rate / r, database_rate=d.database_rate / r,
                   python_loop=d.python_loop * r, call_overhead=d.call_overhead * r,
                   contention=machine_contention(), measured=f"scaled to this machine at {time.strftime('%H:%M:%S')} "
                                                             f"(CPU speed x{1 / r:.2f} of the reference)")


def current_cost_model(*, max_age: float = CALIBRATION_MAX_AGE, clock=None, calibrate=None) -> CostModel:
    """The process-wide :class:`CostModel`: calibrated on this machine at first use, cached, re-measured when older
    than ``max_age`` seconds.

    :func:`estimate_cost` uses it when no ``model`` is given. The measurement is :func:`quick_cost_model` (a CPU
    speed factor and the contention, about 0.03 s of CPU; synthetic inputs, no data).

    Parameters
    ----------
    max_age : float, default=CALIBRATION_MAX_AGE
        Seconds after which the cached model is measured again (finite, > 0).
    clock : callable or None, default=None
        Returns the current time in seconds (default :func:`time.monotonic`; tests pass a fake clock).
    calibrate : callable or None, default=None
        Makes a fresh model (default :func:`quick_cost_model`; tests pass a stub).

    Returns
    -------
    CostModel
        :data:`DEFAULT_COST_MODEL` when the environment variable :data:`PIN_ENV` is ``reference`` (and no
        ``calibrate`` is given).

    Examples
    --------
    >>> m = current_cost_model(clock=lambda: 0.0, calibrate=lambda: DEFAULT_COST_MODEL)
    >>> isinstance(m, CostModel)
    True
    """
    max_age = check_positive_float(max_age, name="max_age")
    if calibrate is None and _pinned():
        return DEFAULT_COST_MODEL
    now = float((clock or time.monotonic)())
    if _PROCESS["model"] is None or now - _PROCESS["at"] > max_age:
        model = (calibrate or quick_cost_model)()
        if not isinstance(model, CostModel):
            raise ValueError(f"calibrate must return a CostModel, got {model!r}.")
        _PROCESS["model"], _PROCESS["at"] = model, now
    return _PROCESS["model"]


def reset_cost_model() -> None:
    """Forget the process-wide model and every family's correction (the next estimate calibrates again)."""
    _PROCESS["model"], _PROCESS["at"] = None, -math.inf
    _CORRECTIONS.clear()


def cost_correction(family: str) -> float:
    """The correction factor :func:`observe_cost` has left for ``family`` (1 before any observation, and while the
    model is pinned by :data:`PIN_ENV`).

    Parameters
    ----------
    family : str
        A family of computations, as in :attr:`CostEstimate.families` (e.g. ``"algorithm1"``, ``"audit"``).

    Returns
    -------
    float
        The factor later predictions of that family are multiplied by (within :data:`CORRECTION_BOUNDS`).
    """
    return 1.0 if _pinned() else _CORRECTIONS.get(family, 1.0)


def observe_cost(estimate: CostEstimate, seconds: float) -> float:
    r"""Correct later predictions of the estimate's families by a finished computation's measured time.

    With :math:`r` = ``seconds`` / ``estimate.seconds``, every family :math:`f` of the estimate gets the
    correction :math:`c_f \leftarrow \mathrm{clip}(c_f^\text{used}\, r, 0.1, 10)`, where :math:`c_f^\text{used}`
    is the one the estimate was predicted with (:attr:`CostEstimate.families`): the next estimate of the same
    sizes predicts the measured time (within the bounds :data:`CORRECTION_BOUNDS`). Each observation replaces
    the last, so the corrections follow the machine's load. The adaptive release's estimate goes to
    :func:`observe_adaptive_run` (its scales, fit and compilation apart).

    Parameters
    ----------
    estimate : CostEstimate
        The prediction the computation was run with (from :func:`estimate_cost`, possibly summed or repeated).
    seconds : float
        Its measured wall-clock time (finite, > 0).

    Returns
    -------
    float
        The ratio measured / predicted.

    Examples
    --------
    >>> reset_cost_model()
    >>> est = estimate_cost("algorithm1", n=1000, n_points=100, model=DEFAULT_COST_MODEL)
    >>> est.families
    {'algorithm1': 1.0}
    >>> round(observe_cost(est, 3 * est.seconds), 6)      # the next "algorithm1" estimate is 3 times larger
    3.0
    >>> reset_cost_model()
    """
    if not isinstance(estimate, CostEstimate):
        raise ValueError(f"estimate must be a CostEstimate, got {estimate!r}.")
    seconds = check_positive_float(seconds, name="seconds")
    ratio = seconds / max(estimate.seconds, 1e-9)
    if estimate.mechanism == "adaptive":
        observe_adaptive_run(estimate, seconds)
        return ratio
    lo, hi = CORRECTION_BOUNDS
    for family, used in estimate.families.items():
        _CORRECTIONS[family] = min(max(used * ratio, lo), hi)
    return ratio


#: CPU seconds of one iteration of :func:`calibrate_cost_model`'s loop of small numpy calls on the reference machine
#: (so that its ``python_loop`` there is the default's).
_LOOP_REFERENCE = 6.0e-7


def machine_contention(cpu_seconds: float = 0.02) -> float:
    """How much longer than its CPU time a single-threaded computation takes now: wall / CPU time of a busy
    Python loop of about ``cpu_seconds`` of CPU, at least 1.

    On a machine shared with other jobs a process gets a fraction of a core; the CPU rates of
    :func:`calibrate_cost_model` do not see that, this factor does (unlike the load average, it also holds inside
    a container, whose load average is the host's). About ``cpu_seconds`` times the factor of wall time.

    Parameters
    ----------
    cpu_seconds : float, default=0.02
        CPU time to spend (finite, > 0): shorter is noisier (a busy machine's scheduling varies from one time slice
        to the next), longer costs ``cpu_seconds`` x the factor of wall time (0.3 s at a factor of 15).

    Returns
    -------
    float

    Examples
    --------
    >>> machine_contention(0.001) >= 1.0
    True
    """
    target = check_positive_float(cpu_seconds, name="cpu_seconds")
    w0, c0 = time.perf_counter(), time.process_time()
    x = 0
    while time.process_time() - c0 < target:
        for i in range(2000):
            x += i * i
    return max(1.0, (time.perf_counter() - w0) / max(time.process_time() - c0, 1e-9))


_ADAPTIVE_CALIBRATION: dict[str, Any] = {}


def _jax_bench() -> tuple[float, float]:
    """Wall seconds of compiling and of running a small jitted Adam-like loop (the adaptive fit's kind of work)."""
    import jax
    import jax.numpy as jnp

    rng = np.random.default_rng(0)
    A = jnp.asarray(rng.random((64, 48)))
    b = jnp.asarray(rng.random(48))

    def loss(x):
        p = jax.nn.softmax(x, axis=1)
        g = p.T @ p
        return jnp.sum((p.mean(0) @ A - b) ** 2) + 1e-3 * jnp.sum(g * g)

    grad = jax.grad(loss)

    def run(x, scale):
        def body(c, _):
            x, mom = c
            mom = 0.9 * mom + 0.1 * grad(x)
            return (x - scale * mom, mom), None

        (x, _), _ = jax.lax.scan(body, (x, jnp.zeros_like(x)), None, length=120)
        return x

    f = jax.jit(run)
    x0 = jnp.asarray(rng.standard_normal((1000, 64)))
    t0 = time.perf_counter()
    f.lower(x0, 0.05).compile()
    t1 = time.perf_counter()
    f(x0, 0.05).block_until_ready()          # first call: dispatch set-up
    runs = []
    for k in range(3):                         # the median of three: one lucky or unlucky slice of a loaded CPU
        t2 = time.perf_counter()
        f(x0 + float(k + 1), 0.05).block_until_ready()
        runs.append(time.perf_counter() - t2)
    return t1 - t0, float(np.median(runs))


def calibrate_adaptive_cost(model: CostModel | None = None, *, max_age: float = 120.0) -> CostModel:
    """``model`` with ``fit_scale`` and ``compile_scale`` measured on this machine now (cached).

    A micro-benchmark of the kind of work the adaptive release does (a jitted loop of softmax, a Gram matrix and
    an Adam-like update on 1000 x 64 synthetic numbers: no data) is timed: its compilation once per process
    (about 0.3 s of CPU), its run (the median of three, about 0.2 s of CPU each) again whenever the last
    measurement is older than ``max_age`` seconds, so the scale follows the machine's current load. Each scale
    is the measured wall time over its reference (:data:`ADAPTIVE_BENCH_REFERENCE`), times the correction the
    last measured release left (:func:`observe_adaptive_run`).

    Parameters
    ----------
    model : CostModel or None, default=None
        The model to scale (default :data:`DEFAULT_COST_MODEL`).
    max_age : float, default=120.0
        Seconds after which the run part is measured again (finite, > 0).

    Returns
    -------
    CostModel
    """
    base = DEFAULT_COST_MODEL if model is None else model
    if not isinstance(base, CostModel):
        raise ValueError(f"model must be a CostModel, got {model!r}.")
    max_age = check_positive_float(max_age, name="max_age")
    c = _ADAPTIVE_CALIBRATION
    now = time.monotonic()
    if "compile" not in c or now - c.get("at", -math.inf) > max_age:
        compile_s, run_s = _jax_bench()
        c.setdefault("compile", compile_s)          # compilation: the first measurement (later ones hit caches)
        c["run"], c["at"] = run_s, time.monotonic()
        c["when"] = time.strftime("%H:%M:%S")
    ref_compile, ref_run = ADAPTIVE_BENCH_REFERENCE
    fit = c.get("fit_observed", max(c["run"] / ref_run, 0.05))
    comp = c.get("compile_observed", max(c["compile"] / ref_compile, 0.05))
    seen = " and by the last measured release" if ("fit_observed" in c or "compile_observed" in c) else ""
    return replace(base, fit_scale=fit, compile_scale=comp,
                   measured=f"adaptive fit calibrated on this machine at {c['when']}{seen}")


def observe_adaptive_run(estimate: CostEstimate, seconds: float) -> None:
    """Correct the next predictions of :func:`calibrate_adaptive_cost` by a finished release's measured time.

    The micro-benchmark scales the reference model to this machine; a release that actually ran tells more.
    A warm run (no compilation term in ``estimate``) sets the fit's scale to the one it was predicted with times
    measured / predicted; a cold run sets the compilation's scale from what is left after the fit. From then on
    these scales replace the micro-benchmark's (each clipped to [0.05, 100]); every later run replaces them
    again, so they follow the machine's load.

    Parameters
    ----------
    estimate : CostEstimate
        The ``"adaptive"`` estimate the run was predicted with (:func:`adaptive_cost`).
    seconds : float
        The run's measured wall-clock time (finite, > 0).
    """
    if not isinstance(estimate, CostEstimate) or estimate.mechanism != "adaptive":
        raise ValueError(f"estimate must be an 'adaptive' CostEstimate, got {estimate!r}.")
    seconds = check_positive_float(seconds, name="seconds")
    c = _ADAPTIVE_CALIBRATION
    compile_term = "XLA compilation (first run of this structure)"
    fit_scale = float(estimate.params.get("fit_scale", 1.0))
    compile_scale = float(estimate.params.get("compile_scale", 1.0))
    fit_pred = estimate.seconds - estimate.breakdown.get(compile_term, 0.0)
    if compile_term not in estimate.breakdown:
        c["fit_observed"] = min(max(fit_scale * seconds / max(fit_pred, 1e-6), 0.05), 100.0)
    else:
        rest = max(seconds - fit_pred, 0.0)
        c["compile_observed"] = min(max(compile_scale * rest / max(estimate.breakdown[compile_term], 1e-6), 0.05),
                                    100.0)


def adaptive_cost(schema: Any, *, n: int, epsilon: float, delta: float, rounds: int | None = None,
                  synthetic_rows: int | None = None, round_steps: int | None = None, final_steps: int | None = None,
                  compiled: bool = False, model: CostModel | None = None) -> CostEstimate:
    r"""Predicted cost of :func:`dpkme.release.adaptive.adaptive_release` on a table of ``schema`` (public inputs).

    The columns' widths come from the release's own public rules: the landmarks of
    :func:`~dpkme.release.adaptive.default_landmarks` at the noise :math:`\sigma_0` of a first measurement
    (from :math:`N`, :math:`\rho`, the rounds), then :meth:`dpkme.release.fit.RelaxedDomain.width`; the
    estimate is :func:`estimate_cost` ``("adaptive", ...)`` with them.

    Parameters
    ----------
    schema : TableSchema
        The declared schema.
    n : int
        Public (replace-one) size :math:`N` of the private table.
    epsilon, delta : float
        The release's :math:`(\varepsilon, \delta)`.
    rounds, synthetic_rows, round_steps, final_steps : int, optional
        As :func:`~dpkme.release.adaptive.adaptive_release` (its defaults when None).
    compiled : bool, default=False
        Whether this structure's fit is already compiled in this process (no compilation term).
    model : CostModel, optional
        Throughputs and scales (default: :func:`calibrate_adaptive_cost` on this machine now).

    Returns
    -------
    CostEstimate

    Examples
    --------
    >>> from dpkme.datasets import load_schema
    >>> est = adaptive_cost(load_schema("penguins"), n=344, epsilon=1.0, delta=1e-6, model=DEFAULT_COST_MODEL)
    >>> sorted(est.breakdown)[:2], est.seconds > 0
    (['XLA compilation (first run of this structure)', 'fit (compiled Adam steps)'], True)
    """
    from .release import adaptive as A
    from .release import fit as F

    n = check_positive_int(n, name="n")
    p = len(A._check_schema(schema))
    T = A.default_rounds(p) if rounds is None else check_positive_int(rounds, name="rounds")
    rho = A.zcdp_rho(epsilon, delta)
    sigma0 = math.sqrt(2.0) / n / math.sqrt(2.0 * (1.0 - A.SELECTION_SHARE) * rho / T)
    dom = F.RelaxedDomain(schema, A.default_landmarks(sigma0))
    model = calibrate_adaptive_cost() if model is None else model
    est = estimate_cost(
        "adaptive", model=model, n=n,
        widths1=[dom.width(j, 1) for j in range(p)], widths2=[dom.width(j, 2) for j in range(p)], rounds=T,
        synthetic_rows=A.default_synthetic_rows(n) if synthetic_rows is None else synthetic_rows,
        round_steps=F.ROUND_STEPS if round_steps is None else round_steps,
        final_steps=F.FINAL_STEPS if final_steps is None else final_steps, compiled=bool(compiled))
    est.params.update(fit_scale=model.fit_scale, compile_scale=model.compile_scale)   # for observe_adaptive_run
    return est
