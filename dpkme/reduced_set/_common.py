r"""Shared pieces of the reduced-set solvers: problem, initial points, declared domain, result, progress.

A *declared domain* (:func:`check_domain_object`) is any public object with the attributes of
:class:`dpkme.schema.EmbeddedDomain`: ``lower`` and ``upper`` (D,), ``fixed`` (D,) bool, ``sample(n, rng)``
(points uniform over the domain), ``project(Z)`` (onto the domain) and ``bounds_for(Z)`` (per-point
L-BFGS-B bounds: the box for free coordinates, :math:`lo = hi` = the current value for ``fixed`` ones).
With a domain, initial points and candidate pools are drawn from it and the solvers optimise the
locations under its bounds, so every released point lies in the domain by construction (not by clipping
afterwards) and discrete coordinates (integer levels, one-hot categories) keep the values of the
candidates the greedy chose among.
"""

from __future__ import annotations

import math
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from .._validation import check_array, check_positive_float
from ._fourier import FourierMap

__all__ = ["Problem", "PointSource", "ReducedSetResult", "Progress", "Cancelled", "check_domain_object",
           "clip_to_bounds"]


class Cancelled(Exception):
    """Raise this (or any exception) from a progress callback to stop a solver.

    The exception propagates out of the solver unchanged; nothing is released.
    """


@dataclass
class Problem:
    r"""What a solver may see: the privatised vector and the public feature map.

    Parameters
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
        """Dimension :math:`D` of the points."""
        return self.fmap.dim


_DOMAIN_ATTRIBUTES = ("lower", "upper", "fixed", "sample", "project", "bounds_for")


def check_domain_object(domain, dim: int):
    r"""Validate a declared domain for points of dimension ``dim`` (see the module docstring).

    Parameters
    ----------
    domain : EmbeddedDomain or None
        A :class:`dpkme.schema.EmbeddedDomain` or any object with its attributes (``lower``, ``upper``,
        ``fixed``, ``sample``, ``project``, ``bounds_for``). Must be public: declared, never computed
        from the private data.
    dim : int
        Dimension :math:`D` the solver works in.

    Returns
    -------
    EmbeddedDomain or None
        ``domain`` itself (``None`` when none is given).

    Raises
    ------
    ValueError
        If an attribute is missing, the bounds have the wrong length, are not finite or have
        ``lower > upper`` somewhere.
    """
    if domain is None:
        return None
    missing = [a for a in _DOMAIN_ATTRIBUTES if not hasattr(domain, a)]
    if missing:
        raise ValueError(f"domain must be a declared EmbeddedDomain (TableSchema(...).domain); "
                         f"{type(domain).__name__} lacks {missing}.")
    lo = np.asarray(domain.lower, dtype=np.float64)
    hi = np.asarray(domain.upper, dtype=np.float64)
    fixed = np.asarray(domain.fixed)
    for name, v in (("lower", lo), ("upper", hi), ("fixed", fixed)):
        if v.shape != (dim,):
            raise ValueError(f"domain.{name} has shape {v.shape} but the points have dimension {dim}; "
                             "use the domain of the schema the data was encoded with.")
    if not (np.all(np.isfinite(lo)) and np.all(np.isfinite(hi))):
        raise ValueError("domain.lower and domain.upper must be finite (a declared, bounded domain).")
    bad = np.flatnonzero(hi < lo)
    if bad.size:
        raise ValueError(f"domain has lower > upper in coordinate {int(bad[0])} "
                         f"({lo[bad[0]]!r} > {hi[bad[0]]!r}).")
    return domain


def _domain_points(domain, Z, n: int, dim: int, what: str) -> np.ndarray:
    Z = np.asarray(Z, dtype=np.float64)
    if Z.shape != (n, dim) or not np.all(np.isfinite(Z)):
        raise ValueError(f"the domain returned {what} of shape {Z.shape} (finite: {bool(np.all(np.isfinite(Z)))}); "
                         f"expected ({n}, {dim}) finite values.")
    return Z


def clip_to_bounds(Z: np.ndarray, lo: np.ndarray, hi: np.ndarray) -> np.ndarray:
    r"""Points clipped coordinate-wise to per-point bounds, :math:`\min(\max(Z, lo), hi)`.

    Used after L-BFGS-B (whose iterates stay within the bounds in its own scaled variables) to undo
    the last rounding of the unscaling :math:`z = \hat\ell u`: a fixed coordinate (:math:`lo = hi`)
    comes back exactly, a free one exactly inside its box.

    Parameters
    ----------
    Z : ndarray (M, D)
        Points.
    lo, hi : ndarray (M, D)
        Bounds with ``lo <= hi``.

    Returns
    -------
    ndarray (M, D)
        A clipped copy.
    """
    return np.minimum(np.maximum(np.asarray(Z, dtype=np.float64), lo), hi)


@dataclass
class PointSource:
    r"""Data-independent initial locations and candidates.

    Either user-supplied *public* points (a publishable subset or any points
    chosen without the private data), uniform draws from a declared ``domain``,
    or draws from :math:`q = \mathcal N(\text{loc}, \text{scale}^2 I_D)`
    (Appendix B.2 of Balog et al. 2018 uses :math:`\mathcal N(0, 500^2 I)`).

    Parameters
    ----------
    dim : int
        Dimension :math:`D` of the points.
    public : ndarray (K, D), optional
        Public points; with a ``domain`` they are projected onto it
        (``domain.project``).
    loc : float or ndarray (D,), default=0.0
        Mean of q (public).
    scale : float, default=500.0
        Standard deviation of q.
    domain : EmbeddedDomain, optional
        Declared domain (:func:`check_domain_object`): without public points,
        initial points and pools are ``domain.sample(n, rng)`` instead of draws
        from q, and the solvers keep every location inside it.
    """

    dim: int
    public: np.ndarray | None = None
    loc: np.ndarray | float = 0.0
    scale: float = 500.0
    domain: Any = None

    def __post_init__(self):
        self.domain = check_domain_object(self.domain, self.dim)
        if self.public is not None:
            self.public = check_array(self.public, name="initial_points", n_features=self.dim)
            if self.domain is not None:
                self.public = _domain_points(self.domain, self.domain.project(self.public), self.public.shape[0],
                                             self.dim, "projected points")
        self.scale = check_positive_float(self.scale, name="q_scale")
        loc = np.broadcast_to(np.asarray(self.loc, dtype=np.float64), (self.dim,))
        if not np.all(np.isfinite(loc)):
            raise ValueError(f"q_loc must be finite, got {self.loc!r}.")
        self.loc = np.array(loc)

    @property
    def description(self) -> str:
        """Where the points come from, in words (recorded in the solver's ``info``)."""
        if self.public is not None:
            return f"{self.public.shape[0]} public points" + (" projected onto the domain" if self.domain else "")
        if self.domain is not None:
            return "uniform draws from the declared domain"
        return f"q = N(loc, {self.scale:g}^2 I)"

    def take(self, n: int, rng: np.random.Generator) -> np.ndarray:
        """``n`` initial locations: the first ``n`` public points, ``n`` draws from the domain, or from q.

        Parameters
        ----------
        n : int
            Number of points.
        rng : numpy.random.Generator
            Source of the draws.

        Returns
        -------
        ndarray (n, D)
        """
        if self.public is not None:
            if self.public.shape[0] < n:
                raise ValueError(
                    f"{n} initial points are needed but only {self.public.shape[0]} public points were given."
                )
            return self.public[:n].copy()
        if self.domain is not None:
            return _domain_points(self.domain, self.domain.sample(n, rng), n, self.dim, "samples")
        return self.loc + self.scale * rng.standard_normal((n, self.dim))

    def pool(self, n: int, rng: np.random.Generator) -> np.ndarray:
        """A candidate pool: all public points, or ``n`` draws from the domain or from q.

        Parameters
        ----------
        n : int
            Pool size (ignored for public points: all of them are the pool).
        rng : numpy.random.Generator
            Source of the draws.

        Returns
        -------
        ndarray (K, D)
        """
        if self.public is not None:
            return self.public.copy()
        if self.domain is not None:
            return _domain_points(self.domain, self.domain.sample(n, rng), n, self.dim, "samples")
        return self.loc + self.scale * rng.standard_normal((n, self.dim))


@dataclass
class ReducedSetResult:
    r"""Weighted synthetic points :math:`(z_m, w_m)` approximating :math:`\tilde\mu`.

    Parameters
    ----------
    points : ndarray (M, D)
        Locations :math:`z_m`.
    weights : ndarray (M,)
        Weights :math:`w_m`.
    solver : str
        Name of the solver that produced them.
    residual_norm : float
        :math:`\|\sum_m w_m\phi(z_m) - \tilde\mu\|_2` (in the random-feature
        space; the exact-kernel error needs the private data and is for
        evaluation only, :func:`dpkme.metrics.rkhs_distance`).
    checkpoints : dict
        ``{M': (points, weights)}`` for every requested intermediate size.
    history : list of float
        Solver-specific trace (e.g. residual norm after every pre-image).
    seconds : float
        Wall-clock time of the solve.
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

    Parameters
    ----------
    callback : callable or None
        ``callback(fraction, message)``; ``None`` reports nothing.
    _root : Progress, optional
        Internal: the top-level reporter whose state a sub-range shares (set by :meth:`sub`).
    lo, hi : float
        The sub-range of [0, 1] this reporter maps its own [0, 1] onto.
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

    def sub(self, a: float, b: float) -> Progress:
        """Reporter for the sub-range ``[a, b]`` of this one's range.

        Parameters
        ----------
        a, b : float
            Start and end, as fractions of this reporter's range.

        Returns
        -------
        Progress
        """
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
        """Report exactly 1.0 (once) with ``message``.

        Parameters
        ----------
        message : str
            Text passed to the callback.
        """
        root = self._root
        if root.callback is not None and root.last < 1.0:
            root.last = 1.0
            root.callback(1.0, message)
