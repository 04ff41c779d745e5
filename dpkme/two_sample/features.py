r"""Public feature maps of the analytic two-sample tests (Chwialkowski et al. 2015).

A test compares the means of a finite-dimensional feature map
:math:`\phi:\mathbb R^d\to\mathbb R^J` under the two distributions. Three maps
are provided, each with the two constants the privacy analysis needs
(see :mod:`dpkme.two_sample.sensitivity`):

``diff_bound``
    :math:`B = \sup_{x,x'}\|\phi(x)-\phi(x')\|_2`;
``outer_diff_bound``
    :math:`R = \sup_{x,x'}\|\phi(x)\phi(x)^\top-\phi(x')\phi(x')^\top\|_F`.

:class:`MEFeatures` (mean embedding)
    :math:`\phi(x) = [k(x, v_1),\dots,k(x, v_J)]` at test locations
    :math:`v_j`, for a dpkme kernel with :math:`0\le k\le a\le 1`. Every
    coordinate lies in :math:`[0, a]`, so :math:`B = a\sqrt J` and, entry by
    entry, :math:`|a_ia_j - b_ib_j| \le a^2` gives :math:`R = a^2 J`. Both are
    approached when the locations cluster within a small fraction of the
    length scale (``x`` at the cluster, ``x'`` far away), so they cannot be
    improved without looking at the locations.
:class:`SCFFeatures` (smooth characteristic function)
    with :math:`u = (x - c)/s` for a public centre :math:`c` and scale
    :math:`s`, :math:`f(u) = e^{-\|u\|^2/2}` and frequencies
    :math:`t_1,\dots,t_{J_f}\sim\mathcal N(0, I_d)`:
    :math:`\phi(x) = [f(u)\sin(u^\top t_j),\ f(u)\cos(u^\top t_j)]_{j}`
    (:math:`J = 2J_f` features). :math:`\|\phi(x)\|_2^2 = J_f f(u)^2\le J_f`,
    so :math:`B = 2\sqrt{J_f}` and :math:`R = \sqrt2 J_f` (two orthogonal
    vectors on the sphere of radius :math:`\sqrt{J_f}`). :math:`B` is approached
    in high dimension (two points near the origin with
    :math:`(x-x')^\top t_j \equiv \pi` for every j).
:class:`RFFFeatures`
    the unit-norm random Fourier features of :mod:`dpkme.kernels.random_features`
    (:math:`\|\phi(x)\|_2 = \sqrt a`): :math:`B = 2\sqrt a`, :math:`R = \sqrt2 a`;
    useful for many features (the bounds do not grow with J).

**Everything that defines a feature map must be public.** Locations,
frequencies, length scales, centres and scales are either given explicitly or
chosen from a *public* (or held-out) sample with :func:`choose_locations`,
:func:`public_lengthscale`, :func:`make_features`. The authors' code sets the
bandwidth from the very data being tested; a single row then changes the
feature map, which none of the sensitivities below accounts for. No function
here accepts the private test data.
"""

from __future__ import annotations

import math
from typing import Any

import numpy as np

from .._validation import (
    check_array,
    check_in,
    check_positive_float,
    check_positive_int,
    check_random_state,
)
from ..kernels.kernel import LENGTHSCALE_RANGE, GaussianKernel, Kernel, kernel_from_dict
from ..kernels.median import _public_pool, public_lengthscale
from ..privacy.sensitivity import check_private_kernel

__all__ = [
    "FeatureMap",
    "MEFeatures",
    "SCFFeatures",
    "RFFFeatures",
    "FEATURE_KINDS",
    "choose_locations",
    "public_lengthscale",
    "make_features",
    "features_from_dict",
]

FEATURE_KINDS = ("me", "scf", "rff")

# Rows per block when evaluating features (keeps the (rows x J) work arrays small).
_ROWS = 8192


class FeatureMap:
    """Base class: a public map :math:`\\phi: \\mathbb R^d \\to \\mathbb R^J` with known bounds."""

    kind: str = "base"

    #: input dimension d
    dim: int
    #: number of features J
    n_features: int

    def transform(self, X) -> np.ndarray:  # pragma: no cover - abstract
        raise NotImplementedError

    @property
    def diff_bound(self) -> float:  # pragma: no cover - abstract
        """:math:`B = \\sup_{x,x'}\\|\\phi(x)-\\phi(x')\\|_2`."""
        raise NotImplementedError

    @property
    def outer_diff_bound(self) -> float:  # pragma: no cover - abstract
        """:math:`R = \\sup_{x,x'}\\|\\phi(x)\\phi(x)^\\top-\\phi(x')\\phi(x')^\\top\\|_F`."""
        raise NotImplementedError

    @property
    def kappa(self) -> float:
        """Per-coordinate (RMS) bound of the paired differences, :math:`\\kappa = B/\\sqrt J`.

        With this convention the paired replace-one sensitivities are the
        issue's generic :math:`2\\kappa\\sqrt J/n` (mean) and
        :math:`\\sqrt2\\kappa^2J/n` (second moment).
        """
        return self.diff_bound / math.sqrt(self.n_features)

    def _check_X(self, X, name: str = "X") -> np.ndarray:
        return check_array(X, name=name, n_features=self.dim)

    def to_dict(self) -> dict[str, Any]:  # pragma: no cover - abstract
        raise NotImplementedError

    def describe(self) -> str:  # pragma: no cover - abstract
        raise NotImplementedError

    def __repr__(self) -> str:
        return f"{type(self).__name__}(dim={self.dim}, n_features={self.n_features})"


class MEFeatures(FeatureMap):
    r"""Mean-embedding features :math:`\phi(x) = [k(x, v_j)]_{j=1}^J` at public test locations.

    Parameters
    ----------
    locations : array (J, d)
        Test locations :math:`v_j` -- public: given by the user, or drawn from a
        public/held-out sample with :func:`choose_locations`.
    kernel : Kernel
        A dpkme kernel with amplitude :math:`a \le 1`; its length scale must be
        declared or come from public data (:func:`public_lengthscale`).
    """

    kind = "me"

    def __init__(self, locations, kernel: Kernel):
        self.locations = check_array(locations, name="locations", copy=True)
        self.kernel = check_private_kernel(kernel)
        if not kernel.nonnegative:  # pragma: no cover - every dpkme kernel is non-negative
            raise ValueError("ME features need a non-negative kernel (the bounds assume k >= 0).")
        self.dim = int(self.locations.shape[1])
        self.n_features = int(self.locations.shape[0])

    def transform(self, X) -> np.ndarray:
        """Feature matrix ``(n, J)``; rows in :math:`[0, a]^J`."""
        X = self._check_X(X)
        # cross(V, X) centres on the (public) locations, never on the private rows.
        return np.ascontiguousarray(self.kernel.cross(self.locations, X).T)

    @property
    def diff_bound(self) -> float:
        return self.kernel.amplitude * math.sqrt(self.n_features)

    @property
    def outer_diff_bound(self) -> float:
        return self.kernel.amplitude**2 * self.n_features

    def to_dict(self) -> dict[str, Any]:
        return {"kind": "me", "locations": self.locations.tolist(), "kernel": self.kernel.to_dict()}

    def describe(self) -> str:
        return (f"ME features: {self.n_features} test locations in R^{self.dim}, "
                f"{self.kernel.name} kernel (length scale {self.kernel.lengthscale:.4g})")


class SCFFeatures(FeatureMap):
    r"""Smooth characteristic-function features (``2 * n_frequencies`` of them).

    Parameters
    ----------
    frequencies : array (J_f, d)
        Public frequencies :math:`t_j` (Chwialkowski et al. draw them from
        :math:`\mathcal N(0, I_d)`; see :func:`make_features`).
    scale : float
        Public scale :math:`s` (the "Gaussian width"): inputs are mapped to
        :math:`u = (x - c)/s`.
    center : array (d,), optional
        Public centre :math:`c` (default: the origin). SCF features are not
        translation invariant: :math:`f(u) = e^{-\|u\|^2/2}` weights points by
        their distance to :math:`c`.
    """

    kind = "scf"

    def __init__(self, frequencies, *, scale: float, center=None):
        self.frequencies = check_array(frequencies, name="frequencies", copy=True)
        self.scale = check_positive_float(scale, name="scale")
        lo, hi = LENGTHSCALE_RANGE   # as for the kernels: (X - center) / scale stays finite for admissible data
        if not lo <= self.scale <= hi:
            raise ValueError(f"scale must lie in [{lo:g}, {hi:g}] (as a kernel lengthscale), got {self.scale:g}.")
        self.dim = int(self.frequencies.shape[1])
        if center is None:
            self.center = np.zeros(self.dim)
        else:
            self.center = check_array(center, name="center", ndim=1, copy=True)
            if self.center.shape[0] != self.dim:
                raise ValueError(f"center has length {self.center.shape[0]} but the frequencies have dimension {self.dim}.")
        self.n_frequencies = int(self.frequencies.shape[0])
        self.n_features = 2 * self.n_frequencies

    def transform(self, X) -> np.ndarray:
        """Feature matrix ``(n, 2 J_f)``: ``[f sin(U t_j)]_j`` then ``[f cos(U t_j)]_j``."""
        X = self._check_X(X)
        out = np.empty((X.shape[0], self.n_features))
        Jf = self.n_frequencies
        for i0 in range(0, X.shape[0], _ROWS):
            U = (X[i0:i0 + _ROWS] - self.center) / self.scale
            f = np.exp(-0.5 * np.einsum("ij,ij->i", U, U))
            arg = U @ self.frequencies.T
            out[i0:i0 + _ROWS, :Jf] = np.sin(arg) * f[:, None]
            out[i0:i0 + _ROWS, Jf:] = np.cos(arg) * f[:, None]
        return out

    @property
    def diff_bound(self) -> float:
        return 2.0 * math.sqrt(self.n_frequencies)

    @property
    def outer_diff_bound(self) -> float:
        return math.sqrt(2.0) * self.n_frequencies

    def to_dict(self) -> dict[str, Any]:
        return {"kind": "scf", "frequencies": self.frequencies.tolist(), "scale": self.scale,
                "center": self.center.tolist()}

    def describe(self) -> str:
        return (f"SCF features: {self.n_frequencies} frequencies ({self.n_features} features) in R^{self.dim}, "
                f"scale {self.scale:.4g}")


class RFFFeatures(FeatureMap):
    r"""Unit-norm random Fourier features :math:`\sqrt{2a/J}[\cos(\omega_j^\top x), \sin(\omega_j^\top x)]`.

    :math:`\phi(x)^\top\phi(y)\approx k(x, y)`, so :math:`\|\bar\phi_X-\bar\phi_Y\|^2`
    is a (biased) MMD estimate. Every row has norm exactly :math:`\sqrt a`.

    Parameters
    ----------
    frequencies : array (J/2, d)
        Public frequencies (from the kernel's spectral measure, see
        :func:`make_features`).
    kernel : Kernel
        Only its amplitude :math:`a \le 1` is used here (and recorded).
    """

    kind = "rff"

    def __init__(self, frequencies, kernel: Kernel):
        self.frequencies = check_array(frequencies, name="frequencies", copy=True)
        self.kernel = check_private_kernel(kernel)
        self.dim = int(self.frequencies.shape[1])
        self.n_features = 2 * int(self.frequencies.shape[0])

    def transform(self, X) -> np.ndarray:
        X = self._check_X(X)
        h = self.frequencies.shape[0]
        out = np.empty((X.shape[0], self.n_features))
        c = math.sqrt(2.0 * self.kernel.amplitude / self.n_features)
        for i0 in range(0, X.shape[0], _ROWS):
            arg = X[i0:i0 + _ROWS] @ self.frequencies.T
            out[i0:i0 + _ROWS, :h] = np.cos(arg)
            out[i0:i0 + _ROWS, h:] = np.sin(arg)
        out *= c
        return out

    @property
    def diff_bound(self) -> float:
        return 2.0 * math.sqrt(self.kernel.amplitude)

    @property
    def outer_diff_bound(self) -> float:
        return math.sqrt(2.0) * self.kernel.amplitude

    def to_dict(self) -> dict[str, Any]:
        return {"kind": "rff", "frequencies": self.frequencies.tolist(), "kernel": self.kernel.to_dict()}

    def describe(self) -> str:
        return (f"random Fourier features: {self.n_features} unit-norm features in R^{self.dim}, "
                f"{self.kernel.name} kernel (length scale {self.kernel.lengthscale:.4g})")


# --------------------------------------------------------------------------- public choices
def choose_locations(public_sample, n_locations: int = 5, *, method: str = "sample", random_state=None) -> np.ndarray:
    """Test locations from a **public** (or held-out) sample.

    Parameters
    ----------
    public_sample : array (m, d) or tuple of arrays
        Data that is not part of the private test data (a held-out split, a
        public reference sample). A tuple ``(X_public, Y_public)`` is pooled.
    n_locations : int
        J.
    method : {"sample", "gaussian"}
        ``"sample"``: J distinct rows drawn without replacement;
        ``"gaussian"``: J draws from a Gaussian with the public sample's mean and
        covariance (Chwialkowski et al.'s choice, made on public data).
    random_state : None, int or Generator
    """
    pool = _public_pool(public_sample)
    J = check_positive_int(n_locations, name="n_locations")
    check_in(method, ("sample", "gaussian"), name="method")
    rng, _ = check_random_state(random_state)
    if method == "sample":
        if J > pool.shape[0]:
            raise ValueError(f"n_locations={J} exceeds the {pool.shape[0]} rows of the public sample.")
        return pool[rng.choice(pool.shape[0], size=J, replace=False)].copy()
    if pool.shape[0] < 2:
        raise ValueError("method='gaussian' needs at least 2 public rows.")
    mean = pool.mean(axis=0)
    cov = np.atleast_2d(np.cov(pool, rowvar=False))
    w, U = np.linalg.eigh(cov)
    root = U * np.sqrt(np.maximum(w, 0.0))
    return mean + rng.standard_normal((J, pool.shape[1])) @ root.T


def make_features(
    kind: str = "me",
    *,
    dim: int | None = None,
    n_features: int = 5,
    locations=None,
    public_sample=None,
    lengthscale: float | None = None,
    scale: float | None = None,
    center=None,
    kernel: Kernel | None = None,
    random_state=None,
) -> FeatureMap:
    r"""Build a public feature map, refusing every choice that would need the private data.

    Parameters
    ----------
    kind : {"me", "scf", "rff"}
    dim : int, optional
        Input dimension d (needed when nothing else fixes it).
    n_features : int
        ME: number of locations J. SCF: number of frequencies :math:`J_f`
        (``2 J_f`` features). RFF: number of features J (even).
    locations : array (J, d), optional
        ME test locations (public).
    public_sample : array or tuple of arrays, optional
        Public/held-out data used to choose the locations (ME) and/or the
        length scale (median heuristic, :func:`public_lengthscale`).
    lengthscale : float, optional
        Kernel length scale (ME, RFF; Gaussian kernel unless ``kernel`` is
        given). Default: from ``public_sample``; otherwise
        ``scale * sqrt(dim)`` if a declared per-coordinate ``scale`` is given.
    scale : float, optional
        Declared per-coordinate scale of the data (e.g. 1 for standardised
        data with public standardisation constants). SCF: the width :math:`s`
        is ``scale * sqrt(dim)`` (the authors' convention, with a *declared*
        scale instead of the test data's standard deviation).
    center : array (d,), optional
        SCF centre (public).
    kernel : Kernel, optional
        ME/RFF kernel (overrides ``lengthscale``).
    random_state : None, int or Generator
        Locations (from the public sample) and frequencies.

    Raises
    ------
    ValueError
        If the map cannot be determined from public information.
    """
    check_in(kind, FEATURE_KINDS, name="kind")
    rng, _ = check_random_state(random_state)
    pool = None if public_sample is None else _public_pool(public_sample)
    if dim is not None:
        dim = check_positive_int(dim, name="dim")
    for cand in (pool, None if locations is None else check_array(locations, name="locations")):
        if cand is not None:
            if dim is not None and cand.shape[1] != dim:
                raise ValueError(f"dim={dim} but a public array has {cand.shape[1]} columns.")
            dim = cand.shape[1]
    if dim is None:
        raise ValueError("give dim, locations or a public_sample so that the input dimension is known.")

    def _lengthscale() -> float:
        if lengthscale is not None:
            return check_positive_float(lengthscale, name="lengthscale")
        if pool is not None:
            return public_lengthscale(pool, random_state=rng)
        if scale is not None:
            return check_positive_float(scale, name="scale") * math.sqrt(dim)
        raise ValueError(
            "no public way to choose the length scale: pass lengthscale=, a declared per-coordinate scale=, "
            "or a public_sample= (never the private test data)."
        )

    if kind == "me":
        J = check_positive_int(n_features, name="n_features")
        if locations is None:
            if pool is None:
                raise ValueError(
                    "ME test locations must be public: pass locations= or a public_sample= to draw them from "
                    "(a held-out split, not the data being tested)."
                )
            locations = choose_locations(pool, J, random_state=rng)
        k = kernel if kernel is not None else GaussianKernel(lengthscale=_lengthscale())
        return MEFeatures(locations, k)
    if kind == "scf":
        Jf = check_positive_int(n_features, name="n_features")
        if scale is not None:
            width = check_positive_float(scale, name="scale") * math.sqrt(dim)
        elif lengthscale is not None:
            width = check_positive_float(lengthscale, name="lengthscale")
        elif pool is not None:
            width = float(np.mean(np.std(pool, axis=0))) * math.sqrt(dim)
            if not width > 0:
                raise ValueError("the public sample has zero spread; declare scale= instead.")
        else:
            raise ValueError(
                "no public way to choose the SCF width: pass a declared scale=, lengthscale= (the width) or a "
                "public_sample=."
            )
        freqs = rng.standard_normal((Jf, dim))
        return SCFFeatures(freqs, scale=width, center=center)
    J = check_positive_int(n_features, name="n_features", minimum=2)
    if J % 2:
        raise ValueError(f"RFF needs an even number of features, got n_features={J}.")
    k = kernel if kernel is not None else GaussianKernel(lengthscale=_lengthscale())
    return RFFFeatures(k.sample_frequencies(J // 2, dim, rng), k)


def features_from_dict(d: dict) -> FeatureMap:
    """Inverse of ``FeatureMap.to_dict``: rebuild a feature map from its stored public description.

    Parameters
    ----------
    d : dict
        A dict as written by ``FeatureMap.to_dict``: ``"kind"`` (one of
        :data:`FEATURE_KINDS`) and, for ``"me"``, ``"locations"`` and ``"kernel"``;
        for ``"scf"``, ``"frequencies"``, ``"scale"`` and ``"center"``; for
        ``"rff"``, ``"frequencies"`` and ``"kernel"``.

    Returns
    -------
    FeatureMap
        An :class:`MEFeatures`, :class:`SCFFeatures` or :class:`RFFFeatures` equal to the stored one.

    Raises
    ------
    ValueError
        If ``d`` is not a dict with a ``"kind"`` key or the kind is unknown.

    Examples
    --------
    >>> import numpy as np
    >>> from dpkme.two_sample.features import features_from_dict, make_features
    >>> f = make_features("scf", dim=2, n_features=1, scale=1.0, random_state=0)
    >>> g = features_from_dict(f.to_dict())
    >>> g
    SCFFeatures(dim=2, n_features=2)
    >>> bool(np.allclose(g.transform(np.ones((3, 2))), f.transform(np.ones((3, 2)))))
    True
    """
    if not isinstance(d, dict) or "kind" not in d:
        raise ValueError(f"expected a feature-map dict with a 'kind' key, got {d!r:.80}.")
    kind = check_in(d["kind"], FEATURE_KINDS, name="kind")
    if kind == "me":
        return MEFeatures(np.asarray(d["locations"], dtype=float), kernel_from_dict(d["kernel"]))
    if kind == "scf":
        return SCFFeatures(np.asarray(d["frequencies"], dtype=float), scale=d["scale"],
                           center=np.asarray(d["center"], dtype=float))
    return RFFFeatures(np.asarray(d["frequencies"], dtype=float), kernel_from_dict(d["kernel"]))
