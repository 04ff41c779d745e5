"""Shared pieces of the reduced-set solvers: problem, initial points, result, progress."""

from __future__ import annotations

import math
import time
from dataclasses import dataclass, field
from typing import Any, Callable

import numpy as np

from .._validation import check_array, check_positive_float
from ._fourier import FourierMap

__all__ = ["Problem", "PointSource", "ReducedSetResult", "Progress", "Cancelled"]


class Cancelled(Exception):
    """Raise this (or any exception) from a progress callback to stop a solver.

    The exception propagates out of the solver unchanged; nothing is released.
    """


@dataclass
class Problem:
    r"""What a solver may see: the privatised vector and the public feature map.

    Attributes
    ----------
    target : ndarray (J,)
        :math:`\tilde\mu^\phi_X`, the noisy mean feature vector (already
        differentially private; everything computed from it is post-processing).
    fmap : FourierMap
        Public frequencies and amplitude.
    """

    target: np.ndarray
    fmap: FourierMap

    @property
    def dim(self) -> int:
        return self.fmap.dim


@dataclass
class PointSource:
    r"""Data-independent initial locations and candidates.

    Either user-supplied *public* points (a publishable subset or any points
    chosen without the private data) or draws from
    :math:`q = \mathcal N(\text{loc}, \text{scale}^2 I_D)` (Appendix B.2 of
    Balog et al. 2018 uses :math:`\mathcal N(0, 500^2 I)`).
    """

    dim: int
    public: np.ndarray | None = None
    loc: np.ndarray | float = 0.0
    scale: float = 500.0

    def __post_init__(self):
        if self.public is not None:
            self.public = check_array(self.public, name="initial_points", n_features=self.dim)
        self.scale = check_positive_float(self.scale, name="q_scale")
        loc = np.broadcast_to(np.asarray(self.loc, dtype=np.float64), (self.dim,))
        if not np.all(np.isfinite(loc)):
            raise ValueError(f"q_loc must be finite, got {self.loc!r}.")
        self.loc = np.array(loc)

    @property
    def description(self) -> str:
        if self.public is not None:
            return f"{self.public.shape[0]} public points"
        return f"q = N(loc, {self.scale:g}^2 I)"

    def take(self, n: int, rng: np.random.Generator) -> np.ndarray:
        """``n`` initial locations: the first ``n`` public points, or ``n`` draws from q."""
        if self.public is not None:
            if self.public.shape[0] < n:
                raise ValueError(
                    f"{n} initial points are needed but only {self.public.shape[0]} public points were given."
                )
            return self.public[:n].copy()
        return self.loc + self.scale * rng.standard_normal((n, self.dim))

    def pool(self, n: int, rng: np.random.Generator) -> np.ndarray:
        """A candidate pool: all public points, or ``n`` draws from q."""
        if self.public is not None:
            return self.public.copy()
        return self.loc + self.scale * rng.standard_normal((n, self.dim))


@dataclass
class ReducedSetResult:
    r"""Weighted synthetic points :math:`(z_m, w_m)` approximating :math:`\tilde\mu`.

    Attributes
    ----------
    points : ndarray (M, D)
    weights : ndarray (M,)
    solver : str
    residual_norm : float
        :math:`\|\sum_m w_m\phi(z_m) - \tilde\mu\|_2` (in the random-feature
        space; the exact-kernel error needs the private data and is for
        evaluation only, :func:`dpkme.metrics.rkhs_distance`).
    checkpoints : dict
        ``{M': (points, weights)}`` for every requested intermediate size.
    history : list of float
        Solver-specific trace (e.g. residual norm after every pre-image).
    seconds : float
    info : dict
        Options actually used and diagnostics.
    """

    points: np.ndarray
    weights: np.ndarray
    solver: str
    residual_norm: float
    checkpoints: dict[int, tuple[np.ndarray, np.ndarray]] = field(default_factory=dict)
    history: list[float] = field(default_factory=list)
    seconds: float = 0.0
    info: dict[str, Any] = field(default_factory=dict)


class Progress:
    """Monotone progress reporting to an optional ``callback(fraction, message)``.

    Fractions passed to the callback are strictly increasing, lie in [0, 1]
    and the last one is exactly 1.0 (sent by :meth:`finish`). A sub-range of a
    parent reporter is obtained with :meth:`sub`. Whatever the callback raises
    propagates to the caller (this is how a user interface cancels a solver).
    """

    def __init__(self, callback: Callable[[float, str], Any] | None, *, _root=None, lo=0.0, hi=1.0):
        if callback is not None and not callable(callback):
            raise ValueError(f"progress must be callable as progress(fraction, message), got {callback!r}.")
        self.callback = callback
        self._root = self if _root is None else _root
        self.lo, self.hi = float(lo), float(hi)
        if _root is None:
            self.last = -math.inf
            self.last_time = 0.0

    def sub(self, a: float, b: float) -> "Progress":
        """Reporter for the sub-range ``[a, b]`` of this one's range."""
        span = self.hi - self.lo
        return Progress(self.callback, _root=self._root, lo=self.lo + a * span, hi=self.lo + b * span)

    def __call__(self, fraction: float, message: str = "", *, force: bool = False) -> None:
        root = self._root
        if root.callback is None:
            return
        value = self.lo + min(max(float(fraction), 0.0), 1.0) * (self.hi - self.lo)
        value = min(value, 1.0 - 1e-9)  # 1.0 is reserved for finish()
        now = time.perf_counter()
        # rate-limit to ~20 calls per second unless forced
        if value > root.last and (force or now - root.last_time >= 0.05 or value - root.last >= 0.01):
            root.last, root.last_time = value, now
            root.callback(value, message)

    def finish(self, message: str = "done") -> None:
        root = self._root
        if root.callback is not None and root.last < 1.0:
            root.last = 1.0
            root.callback(1.0, message)
