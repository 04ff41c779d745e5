r"""Blocked feature evaluation and the Lloyd statistics (cluster sizes and feature sums).

Everything that reads private rows in :mod:`dpkme.clustering` goes through
:func:`lloyd_pass` (and :func:`feature_norms` for Algorithm 3), so the
brute-force sensitivity tests exercise exactly the code the mechanisms run.

Feature maps
------------
:class:`FeatureBlocks` wraps either

* a fitted :class:`dpkme.kernels.random_features.RandomFourierFeatures` (fast path): the
  paired map :math:`s[\cos(Wx), \sin(Wx)]`, :math:`s = \sqrt{2a/J}`, whose norm
  is :math:`\sqrt a` for **every** x. The trigonometric values are evaluated in
  the features' dtype (float32 by default) and *not* renormalised (that would
  cost a float64 copy per pass): the float32 cosine and sine are accurate to
  about one unit in the last place (:math:`2^{-24}`), so
  :math:`c^2 + s^2 \le 1 + 3\cdot2^{-24}`, and the norm bound used for the
  sensitivities, :math:`C = \sqrt a\,(1 + 10^{-6})`, has a margin of about
  :math:`10^{-6}` (checked on :math:`10^8` arguments of every magnitude in the
  tests). Sums are accumulated in float64.
* any other fitted map with ``transform(X) -> (n, J)`` and ``n_features_in_``
  (e.g. :class:`dpkme.kernels.random_features.CosineBiasFeatures`, whose norms range over
  :math:`[0, \sqrt2]`): rows are clipped to a norm bound :math:`C`
  (declared, or selected privately by Algorithm 3),
  :math:`\hat z(x) = z(x)/\max(1, \|z(x)\|_2/C)` (Algorithm 2 of Acs et al.,
  line 5), so :math:`\|\hat z(x)\|_2 \le C` holds by construction.

Floating point: as everywhere in :mod:`dpkme`, the proofs are in exact
arithmetic. The assignment of a row is computed by a float32 matrix product
whose rounding could, at an exact tie between two centres, depend on the
row's position in its block; such ties have probability zero for continuous
data and noisy centres, and the noise is not hardened against floating-point
side channels (Mironov 2012) either.
"""

from __future__ import annotations

import math

import numpy as np

from .._blocked import block_ranges, n_workers, parallel_map
from .._validation import check_array, check_positive_float
from ..kernels.random_features import RandomFourierFeatures

__all__ = ["FeatureBlocks", "lloyd_pass", "feature_norms", "FLOAT32_NORM_MARGIN"]

#: Relative margin added to sqrt(a) for the float32 trigonometric evaluation.
FLOAT32_NORM_MARGIN = 1e-6

# Rows per block: a block holds rows x J float32 values (1024 x 1000 x 4 B = 4 MB),
# which measured fastest here (larger blocks fall out of cache).
_ROWS_PER_BLOCK = 1024


class FeatureBlocks:
    """Evaluate a public feature map on row blocks, with a guaranteed norm bound.

    Parameters
    ----------
    features : RandomFourierFeatures or object with ``transform``
        Fitted, public feature map.
    clip : float, optional
        Norm bound :math:`C` to clip rows to. Required (and applied) for maps
        other than :class:`RandomFourierFeatures`; ignored for those (their
        norm is :math:`\\sqrt a` by construction).
    """

    def __init__(self, features, *, clip: float | None = None):
        self.features = features
        if isinstance(features, RandomFourierFeatures):
            features._check_fitted()
            self.fast = True
            self.dim = int(features.n_features_in_)
            self.n_components = int(features.n_components)
            self.half = self.n_components // 2
            self.dtype = np.dtype(features.dtype)
            self.W = np.ascontiguousarray(features.frequencies_.astype(self.dtype).T)  # (D, J/2)
            # |x . w_j| <= max|x| * max_j ||w_j||_1: the bound on the projections checked in block()
            self._w_l1 = float(np.abs(features.frequencies_).sum(axis=1).max(initial=0.0))
            self._max_proj = float(np.finfo(self.dtype).max) / 16.0
            self.scale = math.sqrt(2.0 * features.kernel.amplitude / self.n_components)
            self.norm_bound = math.sqrt(features.kernel.amplitude) * (1.0 + FLOAT32_NORM_MARGIN)
            self.clip = None
        else:
            if not callable(getattr(features, "transform", None)) or not hasattr(features, "n_features_in_"):
                raise ValueError(
                    "features must be a fitted dpkme RandomFourierFeatures or an object with "
                    f"transform(X) and n_features_in_ (a fitted feature map), got {type(features).__name__}."
                )
            self.fast = False
            self.dim = int(features.n_features_in_)
            probe = np.asarray(features.transform(np.zeros((1, self.dim))))
            if probe.ndim != 2 or probe.shape[0] != 1:
                raise ValueError(f"features.transform must return a 2-D array (n, J), got shape {probe.shape}.")
            self.n_components = int(probe.shape[1])
            self.dtype = np.dtype(np.float64)
            if clip is None:
                raise ValueError(
                    "this feature map has no a-priori norm bound: pass norm_bound=<number> (declared, public) "
                    "or norm_bound='private' (Algorithm 3 of Acs et al. selects it with part of the budget)."
                )
            self.clip = check_positive_float(clip, name="norm_bound")
            self.norm_bound = self.clip

    # ------------------------------------------------------------ features
    def block(self, Xb: np.ndarray) -> np.ndarray:
        """Feature rows of ``Xb`` (in ``self.dtype``), each of norm at most ``norm_bound``."""
        if self.fast:
            biggest = float(np.abs(Xb).max(initial=0.0))
            if biggest * self._w_l1 > self._max_proj:
                raise ValueError(
                    f"a data value of magnitude {biggest:.3g} overflows the {self.dtype} random-feature projections "
                    f"(|x . w| up to {biggest * self._w_l1:.3g}); rescale the data (e.g. a declared scaling).")
            A = Xb.astype(self.dtype, copy=False) @ self.W
            F = np.empty((Xb.shape[0], self.n_components), dtype=self.dtype)
            np.cos(A, out=F[:, : self.half])
            np.sin(A, out=F[:, self.half:])
            F *= self.dtype.type(self.scale)
            return F
        F = np.asarray(self.features.transform(Xb), dtype=np.float64)
        if F.shape != (Xb.shape[0], self.n_components):
            raise ValueError(f"features.transform returned shape {F.shape}, expected {(Xb.shape[0], self.n_components)}.")
        return clip_rows(F, self.clip)

    def transform(self, X: np.ndarray) -> np.ndarray:
        """Feature matrix in float64 (for small inputs: centres, public points, tests)."""
        X = np.asarray(X, dtype=np.float64)
        if X.shape[0] == 0:
            return np.zeros((0, self.n_components))
        return np.concatenate([self.block(X[a:b]).astype(np.float64) for a, b in _rows(X.shape[0])], axis=0)

    def describe(self) -> dict:
        return {
            "map": type(self.features).__name__,
            "n_components": self.n_components,
            "norm_bound": self.norm_bound,
            "clipped": self.clip is not None,
            "dtype": self.dtype.name,
        }


def clip_rows(F: np.ndarray, bound: float) -> np.ndarray:
    r""":math:`z / \max(1, \|z\|_2 / C)` row-wise (Algorithm 2 of Acs et al., line 5), in place."""
    norms = np.sqrt(np.einsum("ij,ij->i", F, F))
    factor = np.ones_like(norms)
    big = norms > bound
    factor[big] = bound / norms[big]
    # rounding could leave a clipped row a hair above the bound: shrink by one ulp-level margin
    factor[big] *= 1.0 - 1e-12
    F *= factor[:, None]
    return F


def _rows(n: int) -> list[tuple[int, int]]:
    size = min(_ROWS_PER_BLOCK, max(1, -(-n // n_workers())))
    return block_ranges(n, size)


def _assign(F: np.ndarray, centres_t: np.ndarray, offsets: np.ndarray) -> np.ndarray:
    """argmin_j ||f - c_j||^2 = argmax_j (2 f.c_j - ||c_j||^2); ties go to the smallest j."""
    scores = F @ centres_t
    scores -= offsets
    return np.argmax(scores, axis=1)


def _prepare_centres(fb: FeatureBlocks, centres: np.ndarray):
    centres = np.asarray(centres, dtype=np.float64)
    centres_t = np.ascontiguousarray((2.0 * centres).T.astype(fb.dtype))
    offsets = np.einsum("ij,ij->i", centres, centres).astype(fb.dtype)
    return centres_t, offsets


def lloyd_pass(fb: FeatureBlocks, X: np.ndarray, centres: np.ndarray, *, sums: bool = True,
               labels: bool = False, sq_norms: bool = False):
    r"""One pass over the private rows: assign to the nearest centre, then count and sum.

    Parameters
    ----------
    fb : FeatureBlocks
    X : ndarray (N, D)
        Validated data.
    centres : ndarray (k, J)
        Public centres (released by the previous iteration, or the public initialisation).
    sums : bool
        Also return the per-cluster feature sums :math:`S_i = \sum_{x\in D_i} z(x)`.
    labels : bool
        Also return the assignment of every row (a *local* view: never released).
    sq_norms : bool
        Also return :math:`\sum_x \|z(x)\|_2^2` (for the within-cluster objective).

    Returns
    -------
    dict with ``counts`` (k,) int64 and, as requested, ``sums`` (k, J) float64,
    ``labels`` (N,) int64, ``sq_norm_total`` float.

    The assignment of a row depends only on that row and the public centres,
    which is what the sensitivity analysis (:mod:`.sensitivity`) relies on.
    """
    k = centres.shape[0]
    centres_t, offsets = _prepare_centres(fb, centres)
    n = X.shape[0]
    out_labels = np.empty(n, dtype=np.int64) if labels else None

    def work(r):
        F = fb.block(X[r[0]:r[1]])
        lab = _assign(F, centres_t, offsets)
        res = {"counts": np.bincount(lab, minlength=k)}
        if sums:
            onehot = np.zeros((k, lab.shape[0]))
            onehot[lab, np.arange(lab.shape[0])] = 1.0
            res["sums"] = onehot @ F.astype(np.float64, copy=False)
        if sq_norms:
            res["sq"] = float(np.einsum("ij,ij->", F, F, dtype=np.float64))
        if labels:
            out_labels[r[0]:r[1]] = lab
        return res

    parts = parallel_map(work, _rows(n))
    result = {"counts": np.zeros(k, dtype=np.int64)}
    if sums:
        result["sums"] = np.zeros((k, fb.n_components))
    if sq_norms:
        result["sq_norm_total"] = 0.0
    for p in parts:
        result["counts"] += p["counts"]
        if sums:
            result["sums"] += p["sums"]
        if sq_norms:
            result["sq_norm_total"] += p["sq"]
    if labels:
        result["labels"] = out_labels
    return result


def assign(fb: FeatureBlocks, Y: np.ndarray, centres: np.ndarray) -> np.ndarray:
    """Nearest-centre labels of the rows of ``Y`` (no counting)."""
    return lloyd_pass(fb, Y, centres, sums=False, labels=True)["labels"]


def feature_norms(features, X: np.ndarray) -> np.ndarray:
    """:math:`\\|z(x)\\|_2` of every row of X for an unclipped generic feature map (Algorithm 3 input).

    Reads the private rows: the result is private and may only be passed to a
    mechanism (:func:`dpkme.clustering.norm.private_norm_bound`), never released.
    Evaluated on row blocks, in parallel, in float64.

    Parameters
    ----------
    features : object with ``transform``
        Fitted, public feature map whose ``transform(X)`` returns an (n, J)
        array, e.g. :class:`dpkme.kernels.random_features.CosineBiasFeatures`
        (norms in :math:`[0, \\sqrt{2a}]`). No clipping is applied.
    X : ndarray (N, D)
        Validated rows (the private data).

    Returns
    -------
    ndarray (N,)
        :math:`\\|z(x_n)\\|_2` for :math:`n = 1..N` (empty for N = 0).

    Examples
    --------
    >>> from dpkme.kernels import GaussianKernel
    >>> from dpkme.kernels.random_features import CosineBiasFeatures
    >>> f = CosineBiasFeatures(GaussianKernel(lengthscale=1.0), n_components=50, random_state=0).fit(2)
    >>> norms = feature_norms(f, np.zeros((3, 2)))
    >>> norms.shape, bool(np.all(norms <= np.sqrt(2)))
    ((3,), True)
    """

    def work(r):
        F = np.asarray(features.transform(X[r[0]:r[1]]), dtype=np.float64)
        return np.sqrt(np.einsum("ij,ij->i", F, F))

    return np.concatenate(parallel_map(work, _rows(X.shape[0]))) if X.shape[0] else np.zeros(0)


def validate_rows(X, fb: FeatureBlocks, name: str = "X") -> np.ndarray:
    return check_array(X, name=name, n_features=fb.dim)
