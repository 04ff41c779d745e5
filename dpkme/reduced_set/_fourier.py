r"""Closed-form evaluation of paired random Fourier features and their derivatives.

The reduced-set solvers work with the feature map of
:class:`dpkme.kernels.random_features.RandomFourierFeatures`,

.. math::
    \phi(z) = s\,\bigl[\cos(Wz),\ \sin(Wz)\bigr] \in \mathbb R^J, \qquad
    s = \sqrt{2a/J}, \quad W \in \mathbb R^{J/2\times D},

for which :math:`\|\phi(z)\|_2^2 = a` for every :math:`z`. Only the public
frequencies :math:`W` and amplitude :math:`a` are used here; nothing in this
module can see private data.

Everything of size :math:`O(M\cdot J)` is computed in row blocks on the thread
pool of :mod:`dpkme._blocked` (numpy's trigonometric functions and BLAS release
the GIL). The trigonometric evaluation is done in ``dtype`` (float32 by default,
about 4x faster than float64 here) and every reduction is accumulated in
float64 across blocks.
"""

from __future__ import annotations

import math

import numpy as np

from .._blocked import block_ranges, n_workers, parallel_map

__all__ = ["FourierMap"]

# Elements (rows x J/2) of one block of trigonometric values.
_BLOCK_ELEMENTS = 1 << 19
# Below this many elements the work is done inline: a thread pool (and the
# BLAS thread limit it sets) costs ~5 ms per call, more than the work itself.
_INLINE_ELEMENTS = 1 << 17


def _map(fn, tasks):
    if len(tasks) <= 1:
        return [fn(t) for t in tasks]
    return parallel_map(fn, tasks)
# Above this many stored elements (rows x J) the joint objective recomputes the
# trigonometric values in its second pass instead of keeping them (1 GiB float32).
_STORE_LIMIT = 1 << 28


class FourierMap:
    r"""The public map :math:`z \mapsto s[\cos(Wz), \sin(Wz)]` with derivatives.

    Parameters
    ----------
    frequencies : ndarray (J/2, D)
        :math:`W` (``RandomFourierFeatures.frequencies_``).
    amplitude : float
        Kernel amplitude :math:`a = \|\phi(z)\|_2^2`.
    dtype : {"float32", "float64"}
        Precision of the trigonometric evaluation; use float64 for gradient
        checks.
    """

    def __init__(self, frequencies: np.ndarray, amplitude: float = 1.0, *, dtype: str = "float32"):
        self.W = np.ascontiguousarray(frequencies, dtype=np.float64)
        self.half, self.dim = self.W.shape
        self.n_components = 2 * self.half
        self.amplitude = float(amplitude)
        self.scale = math.sqrt(2.0 * self.amplitude / self.n_components)
        self.dtype = np.dtype(dtype)
        self.Wd = self.W.astype(self.dtype)

    @classmethod
    def from_features(cls, features, *, dtype: str | None = None) -> FourierMap:
        """Build from a fitted :class:`dpkme.kernels.random_features.RandomFourierFeatures`."""
        if not hasattr(features, "frequencies_"):
            raise ValueError("the random features are not fitted; call features.fit(dim) first.")
        return cls(features.frequencies_, features.kernel.amplitude,
                   dtype=dtype if dtype is not None else getattr(features, "dtype", "float32"))

    @property
    def lengthscale(self) -> float:
        """Typical length scale :math:`1/\\mathrm{rms}(\\omega_{jd})` of the map (for step sizes)."""
        rms = math.sqrt(float(np.mean(self.W**2)))
        return 1.0 / rms if rms > 0 else 1.0

    def _rows(self, m: int) -> list[tuple[int, int]]:
        if m * self.half <= _INLINE_ELEMENTS:
            return block_ranges(m, max(1, m))
        size = max(1, _BLOCK_ELEMENTS // max(1, self.half))
        # at least one block per worker when there is enough work
        size = min(size, max(1, -(-m // n_workers())))
        return block_ranges(m, size)

    # ------------------------------------------------------------ features
    def features(self, Z: np.ndarray, *, dtype=np.float64) -> np.ndarray:
        """:math:`\\Phi(Z)` of shape (M, J) in ``dtype`` (holds M x J values)."""
        Z = np.asarray(Z, dtype=np.float64)
        out = np.empty((Z.shape[0], self.n_components), dtype=dtype)
        h = self.half

        def work(r):
            A = Z[r[0]:r[1]].astype(self.dtype) @ self.Wd.T
            out[r[0]:r[1], :h] = np.cos(A)
            out[r[0]:r[1], h:] = np.sin(A, out=A)
            out[r[0]:r[1]] *= self.scale

        _map(work, self._rows(Z.shape[0]))
        return out

    def correlations(self, Z: np.ndarray, vectors: np.ndarray) -> np.ndarray:
        r""":math:`\Phi(Z)\,V` for a (J,) or (J, k) array ``V``, streamed over rows of Z.

        Memory is :math:`O(\text{block}\cdot J)`: the (M, J) feature matrix is
        never formed, so this is how large candidate pools are scored.
        """
        Z = np.asarray(Z, dtype=np.float64)
        V = np.asarray(vectors, dtype=np.float64)
        vec = V.ndim == 1
        V2 = V.reshape(self.n_components, -1)
        Vc = (self.scale * V2[: self.half]).astype(self.dtype)
        Vs = (self.scale * V2[self.half:]).astype(self.dtype)
        out = np.empty((Z.shape[0], V2.shape[1]))

        def work(r):
            A = Z[r[0]:r[1]].astype(self.dtype) @ self.Wd.T
            res = np.cos(A) @ Vc
            res += np.sin(A, out=A) @ Vs
            out[r[0]:r[1]] = res

        _map(work, self._rows(Z.shape[0]))
        return out[:, 0] if vec else out

    # ------------------------------------------------------ single point
    def point_value_grad(self, z: np.ndarray, psi_c: np.ndarray, psi_s: np.ndarray) -> tuple[float, np.ndarray]:
        r""":math:`v = \langle\Psi, \phi(z)\rangle` and :math:`\nabla_z v` for one point.

        ``psi_c``, ``psi_s`` are :math:`s\Psi_{1:J/2}` and :math:`s\Psi_{J/2+1:J}`
        in ``dtype``. :math:`\nabla_z v = s\sum_j(\Psi^s_j\cos\omega_j^\top z -
        \Psi^c_j\sin\omega_j^\top z)\,\omega_j`.
        """
        a = self.Wd @ z.astype(self.dtype)
        c = np.cos(a)
        s = np.sin(a, out=a)
        v = float(psi_c @ c) + float(psi_s @ s)
        c *= psi_s
        s *= psi_c
        c -= s
        return v, (c @ self.Wd).astype(np.float64)

    # ------------------------------------------------------- joint objective
    def objective(self, Z: np.ndarray, w: np.ndarray, target: np.ndarray, *, grad: bool = True):
        r"""Joint reduced-set objective and its analytic gradient.

        .. math::
            f(Z, w) = \Bigl\|\sum_{m=1}^M w_m\phi(z_m) - \tilde\mu\Bigr\|_2^2
            = \|r\|_2^2, \qquad r = \Phi(Z)^\top w - \tilde\mu,

        .. math::
            \frac{\partial f}{\partial w_m} = 2\,\phi(z_m)^\top r, \qquad
            \nabla_{z_m} f = 2 w_m s \sum_{j=1}^{J/2}
            \bigl(r^s_j\cos\omega_j^\top z_m - r^c_j\sin\omega_j^\top z_m\bigr)\,\omega_j,

        where :math:`r^c, r^s` are the cosine and sine halves of :math:`r`. Two
        passes over row blocks (the first forms :math:`r`, the second the
        gradients); the trigonometric values of the first pass are kept when
        they fit in memory. No loop over points.

        Returns
        -------
        f : float
        grad_Z : ndarray (M, D) or None
        grad_w : ndarray (M,) or None
        """
        Z = np.asarray(Z, dtype=np.float64)
        w = np.asarray(w, dtype=np.float64)
        M, h = Z.shape[0], self.half
        rows = self._rows(M)
        store = grad and M * self.n_components <= _STORE_LIMIT
        kept: dict[int, tuple[np.ndarray, np.ndarray]] = {}
        wd = w.astype(self.dtype)

        def trig(r):
            A = Z[r[0]:r[1]].astype(self.dtype) @ self.Wd.T
            return np.cos(A), np.sin(A, out=A)

        def first(k_r):
            k, r = k_r
            C, S = trig(r)
            sums = np.concatenate([wd[r[0]:r[1]] @ C, wd[r[0]:r[1]] @ S]).astype(np.float64)
            if store:
                kept[k] = (C, S)
            return sums

        total = np.zeros(self.n_components)
        for part in _map(first, list(enumerate(rows))):
            total += part
        res = self.scale * total - target
        f = float(res @ res)
        if not grad:
            return f, None, None
        rc = (2.0 * self.scale * res[:h]).astype(self.dtype)
        rs = (2.0 * self.scale * res[h:]).astype(self.dtype)
        gZ = np.empty_like(Z)
        gw = np.empty(M)

        def second(k_r):
            k, r = k_r
            C, S = kept.pop(k) if store else trig(r)
            gw[r[0]:r[1]] = C @ rc + S @ rs
            C *= rs
            S *= rc
            C -= S
            gZ[r[0]:r[1]] = (C @ self.Wd).astype(np.float64) * w[r[0]:r[1], None]

        _map(second, list(enumerate(rows)))
        return f, gZ, gw

    def residual(self, Z: np.ndarray, w: np.ndarray, target: np.ndarray) -> np.ndarray:
        """:math:`r = \\Phi(Z)^\\top w - \\tilde\\mu` in float64 (streamed)."""
        Z = np.asarray(Z, dtype=np.float64)
        w = np.asarray(w, dtype=np.float64)
        total = np.zeros(self.n_components)
        wd = w.astype(self.dtype)

        def work(r):
            A = Z[r[0]:r[1]].astype(self.dtype) @ self.Wd.T
            c = wd[r[0]:r[1]] @ np.cos(A)
            s = wd[r[0]:r[1]] @ np.sin(A, out=A)
            return np.concatenate([c, s]).astype(np.float64)

        for part in _map(work, self._rows(Z.shape[0])):
            total += part
        return self.scale * total - np.asarray(target, dtype=np.float64)
