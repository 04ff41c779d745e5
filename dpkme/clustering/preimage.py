r"""Pre-images of feature-space centres: one representative point in data space per centre.

A centre :math:`c \in \mathbb R^J` released by DP k-means approximates the mean
feature vector of a cluster, :math:`c \approx \frac1{n}\sum_{x\in D_i} z(x)`,
so :math:`f(y) = z(y)^\top c \approx \frac1n\sum_{x\in D_i}k(x, y)` is (up to
scale) a kernel density estimate of the cluster. Its maximiser

.. math:: \hat y = \arg\max_y\ z(y)^\top c = \arg\min_y \|z(y) - c\|_2^2

(equal because :math:`\|z(y)\|_2` is constant for paired random Fourier
features) is the classic pre-image of kernel k-means: the mode of the cluster,
which lies on the data even for non-convex clusters (rings, moons).

Computed from the released centres, public candidate points and the public
feature map only: **post-processing**, so the pre-images are as private as the
centres. Multi-start L-BFGS from the best candidates of a public pool, all
centres optimised jointly (the objective is separable) with analytic
gradients.
"""

from __future__ import annotations

import math

import numpy as np
from scipy.optimize import minimize

from .._blocked import single_threaded_blas
from .._validation import check_array
from ..kernels.random_features import RandomFourierFeatures

__all__ = ["centre_preimages"]


def _map(features: RandomFourierFeatures):
    W = np.asarray(features.frequencies_, dtype=np.float64)
    J = 2 * W.shape[0]
    return W, math.sqrt(2.0 * features.kernel.amplitude / J)


def _scores(Z: np.ndarray, W: np.ndarray, s: float, centres: np.ndarray) -> np.ndarray:
    """:math:`z(Z) C^T` of shape (n, k), in row blocks."""
    h = W.shape[0]
    out = np.empty((Z.shape[0], centres.shape[0]))
    step = max(1, (1 << 20) // max(1, h))
    cc, cs = s * centres[:, :h].T, s * centres[:, h:].T
    for i in range(0, Z.shape[0], step):
        A = Z[i:i + step] @ W.T
        out[i:i + step] = np.cos(A) @ cc + np.sin(A) @ cs
    return out


def centre_preimages(centres, features: RandomFourierFeatures, *, candidates, n_starts: int = 3,
                     bounds=None, max_iter: int = 60,
                     candidate_features: np.ndarray | None = None) -> tuple[np.ndarray, np.ndarray]:
    r"""Maximisers of :math:`y \mapsto z(y)^\top c_i` for every centre.

    Parameters
    ----------
    centres : array (k, J)
        Feature-space centres (released).
    features : RandomFourierFeatures
        The public map the centres live in.
    candidates : array (P, D)
        Public starting points (initial points, earlier pre-images, draws from
        a declared box or a public sample). Never private rows.
    n_starts : int
        Best candidates per centre used as starts.
    bounds : (lower, upper), optional
        A declared box; the search stays inside it.
    max_iter : int
        L-BFGS iterations.
    candidate_features : array (P, J), optional
        :math:`z(\text{candidates})`, to score a fixed pool cheaply at every iteration.

    Returns
    -------
    points : ndarray (k, D)
    values : ndarray (k,)
        :math:`z(\hat y_i)^\top c_i` (up to :math:`a`; higher = the centre is
        closer to a single point's feature vector).
    """
    if not isinstance(features, RandomFourierFeatures):
        raise ValueError("pre-images need dpkme RandomFourierFeatures (closed-form gradients).")
    # Small matrices: multi-threaded BLAS only adds overhead here (measured 4x slower).
    with single_threaded_blas():
        return _centre_preimages(centres, features, candidates=candidates, n_starts=n_starts, bounds=bounds,
                                 max_iter=max_iter, candidate_features=candidate_features)


def _centre_preimages(centres, features, *, candidates, n_starts, bounds, max_iter, candidate_features):
    centres = check_array(centres, name="centres", n_features=features.n_components)
    W, s = _map(features)
    D = W.shape[1]
    cand = check_array(candidates, name="candidates", n_features=D)
    k = centres.shape[0]
    n_starts = max(1, min(int(n_starts), cand.shape[0]))
    if candidate_features is not None:
        if candidate_features.shape != (cand.shape[0], centres.shape[1]):
            raise ValueError("candidate_features must have shape (len(candidates), J).")
        sc = candidate_features @ centres.T.astype(candidate_features.dtype)  # (P, k)
    else:
        sc = _scores(cand, W, s, centres)
    order = np.argsort(-sc, axis=0)[:n_starts]  # (n_starts, k)
    starts = cand[order.T.reshape(-1)]  # (k * n_starts, D), centre-major
    owner = np.repeat(np.arange(k), n_starts)
    h = W.shape[0]
    cc = s * centres[owner, :h]  # (m, h)
    cs = s * centres[owner, h:]

    def fun(flat):
        Z = flat.reshape(-1, D)
        A = Z @ W.T
        c, sn = np.cos(A), np.sin(A)
        vals = np.einsum("ij,ij->i", c, cc) + np.einsum("ij,ij->i", sn, cs)
        grad = (c * cs - sn * cc) @ W
        return -float(vals.sum()), -grad.reshape(-1)

    lb = None
    if bounds is not None:
        lower, upper = (np.broadcast_to(np.asarray(b, dtype=np.float64), (D,)) for b in bounds)
        lb = list(zip(np.tile(lower, k * n_starts), np.tile(upper, k * n_starts)))
        starts = np.clip(starts, lower, upper)
    res = minimize(fun, starts.reshape(-1), jac=True, method="L-BFGS-B", bounds=lb,
                   options={"maxiter": int(max_iter)})
    Z = res.x.reshape(-1, D)
    if not np.all(np.isfinite(Z)):  # pragma: no cover - keep the starts on numerical failure
        Z = starts
    A = Z @ W.T
    vals = np.einsum("ij,ij->i", np.cos(A), cc) + np.einsum("ij,ij->i", np.sin(A), cs)
    best = np.argmax(vals.reshape(k, n_starts), axis=1)
    pick = np.arange(k) * n_starts + best
    return Z[pick].copy(), vals[pick].copy()
