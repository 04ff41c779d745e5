r"""Bounded translation-invariant kernels on :math:`\mathbb{R}^D`.

Every kernel here has the form :math:`k(x, y) = a\,\kappa(x - y)` with
:math:`\kappa(0) = 1` and amplitude :math:`a \in (0, 1]` (default 1), so that
:math:`k(x, x) = a \le 1` as the privacy proofs of Balog et al. (2018,
Lemma 13 and Proposition 9) require. All are non-negative and decreasing in the
distance, which gives the tighter RKHS sensitivity
:math:`\|k(x,\cdot) - k(x',\cdot)\|_{\mathcal H}^2 = 2a - 2k(x,x') \le 2a`
(see :mod:`dpkme.privacy.sensitivity`).

Evaluation is blocked and multi-threaded: Gram matrices, the row means
:math:`\bar k_m = \frac1N\sum_n k(z_m, x_n)` and the mean of :math:`K_{XX}` are
computed without ever holding an :math:`M\times N` matrix (memory is
:math:`O(M + N)` plus a few blocks of :data:`dpkme._blocked.BLOCK_ELEMENTS`).
Squared distances are clamped at zero. For the four kernel classes here, large sums
(:meth:`Kernel.row_means`, :meth:`Kernel.triangular_row_sums` and what builds on them,
:meth:`Kernel.cross`) run on the fused JAX/XLA engine of :mod:`dpkme.kernels.engine`
(float64, every core, a GPU when present); the blocked numpy code here is the fallback
(environment variable ``DPKME_KERNEL_ENGINE=numpy``, no JAX, small inputs, subclasses).

Each kernel can sample frequencies from its spectral measure (Bochner's theorem)
for :mod:`dpkme.kernels.random_features`: normal (Gaussian kernel), product Cauchy (Laplacian,
L1 distance), multivariate t with :math:`2\nu` degrees of freedom (Matérn
:math:`\nu`), and a Gamma scale mixture of normals (inverse multiquadric).
"""

from __future__ import annotations

import inspect
import math
import threading
from abc import ABC, abstractmethod
from typing import Any, ClassVar

import numpy as np

from .._blocked import BLOCK_ELEMENTS, block_ranges, parallel_map
from .._validation import check_array, check_positive_float, check_positive_int
from . import engine as _engine

__all__ = [
    "Kernel",
    "GaussianKernel",
    "LaplacianKernel",
    "MaternKernel",
    "InverseMultiquadricKernel",
    "make_kernel",
    "kernel_from_dict",
    "KERNELS",
    "MAX_ABS_COORDINATE",
    "LENGTHSCALE_RANGE",
    "check_magnitude",
]

# exp() of arguments beyond this would overflow/underflow in the factorised
# Gaussian sum; such blocks use the direct (clamped) formula instead.
_SAFE_EXP = 600.0
# Block shape for kernel sums: 128 x 1024 float64 = 1 MiB, fits in L2 cache.
_ROW_BLOCK, _COL_BLOCK = 128, 1024
# Rows per task of the triangular all-pairs pass (N^2/2 pairs: many tasks anyway; larger row blocks halve the
# per-block overhead; measured on the paper's N = 100 000, D = 5 data: 5.3 s -> 4.6 s).
_TRI_ROW_BLOCK = 512
# Largest (|a|^2 + |b|^2) / lengthscale^2 for which GEMM-based squared distances
# are used (relative kernel error <~ 1e-13 below it).
_GEMM_RADIUS2 = 1e3
#: Largest ``|coordinate|`` accepted by kernel evaluations: squared distances of such points stay far below the
#: float64 range (``|x|^2 <= 1e300``), so nothing overflows; larger values are refused with a ValueError.
MAX_ABS_COORDINATE = 1e150
#: Accepted range of length scales: with coordinates <= MAX_ABS_COORDINATE every scaled squared distance is
#: finite or cleanly +inf (kernel value 0), never 0 * inf.
LENGTHSCALE_RANGE = (1e-100, 1e100)
_THREAD_LOCAL = threading.local()


def check_magnitude(A: np.ndarray, name: str = "X") -> np.ndarray:
    """Refuse (ValueError, naming the value and its position) coordinates beyond :data:`MAX_ABS_COORDINATE`.

    Parameters
    ----------
    A : ndarray
        Validated float array of points (any shape; usually ``(N, D)``).
    name : str, default="X"
        Name of the array in the error message.

    Returns
    -------
    ndarray
        ``A`` itself (not a copy), so that the check can wrap an expression.

    Raises
    ------
    ValueError
        If some :math:`|A_{ij}| > 10^{150}`; the message gives the largest value
        and its index.

    Examples
    --------
    >>> import numpy as np
    >>> check_magnitude(np.array([[1.0, -2.0]])).shape
    (1, 2)
    """
    if A.size and float(np.abs(A).max()) > MAX_ABS_COORDINATE:
        pos = tuple(int(i) for i in np.unravel_index(int(np.argmax(np.abs(A))), A.shape))
        raise ValueError(
            f"{name} has the value {float(A[pos]):.3g} at index {pos}; kernel computations support "
            f"|values| <= {MAX_ABS_COORDINATE:.0e} (rescale the data, e.g. with a declared scaling).")
    return A


def _robust_center(A: np.ndarray, name: str = "the points") -> np.ndarray:
    """Coordinate-wise median used as the translation for numerical centring.

    The magnitude check comes first: the median of an even number of values averages the middle two, which
    overflows for coordinates near the float64 limit before :func:`check_magnitude` would refuse them.
    """
    check_magnitude(A, name)
    return np.median(A, axis=0)


def _scratch(rows: int, cols: int) -> np.ndarray:
    """A per-thread reusable work array (avoids page faults of fresh 1 MiB arrays)."""
    buf = getattr(_THREAD_LOCAL, "buf", None)
    if buf is None or buf.size < rows * cols:
        buf = np.empty(max(rows * cols, _ROW_BLOCK * _COL_BLOCK))
        _THREAD_LOCAL.buf = buf
    return buf[: rows * cols].reshape(rows, cols)


class Kernel(ABC):
    """Base class: a bounded, translation-invariant, non-negative kernel.

    Subclasses implement :meth:`_profile` (kernel values from a distance matrix)
    and :meth:`sample_frequencies` (its spectral measure).

    Parameters
    ----------
    lengthscale : float
        Length scale :math:`\\ell > 0`. It must be declared by the user or taken
        from public information; never derive it from the private data (a median
        heuristic on private data is a privacy leak).
    amplitude : float, default=1.0
        :math:`k(x, x)`. Values above 1 are accepted for non-private use (e.g.
        metrics) but refused by every mechanism.
    """

    name: ClassVar[str] = "kernel"
    #: distance passed to :meth:`_profile`: "sqeuclidean" (computed with a GEMM,
    #: clamped at 0; fine for kernels smooth in the squared distance), or
    #: "euclidean"/"cityblock" (computed by coordinate differences with scipy's
    #: cdist, exact at zero distance, needed for kernels with a kink at 0 such
    #: as Matérn-1/2, where a 1e-13 error in a squared distance would become a
    #: 3e-7 error in the kernel value)
    metric: ClassVar[str] = "sqeuclidean"
    #: k(x, y) >= 0 for all x, y (true for every kernel in this module)
    nonnegative: ClassVar[bool] = True

    def __init__(self, *, lengthscale: float, amplitude: float = 1.0):
        self.lengthscale = check_positive_float(lengthscale, name="lengthscale")
        lo, hi = LENGTHSCALE_RANGE
        if not lo <= self.lengthscale <= hi:
            raise ValueError(f"lengthscale must lie in [{lo:.0e}, {hi:.0e}], got {self.lengthscale!r}; "
                             "rescale the data instead.")
        self.amplitude = check_positive_float(amplitude, name="amplitude")

    # ----------------------------------------------------------------- basics
    @abstractmethod
    def _profile(self, d: np.ndarray) -> np.ndarray:
        """Kernel values for a distance array ``d`` (may modify ``d`` in place)."""

    @abstractmethod
    def sample_frequencies(self, n: int, dim: int, rng: np.random.Generator) -> np.ndarray:
        """Draw ``n`` frequencies ``(n, dim)`` from the normalised spectral measure.

        By Bochner's theorem :math:`\\kappa(x-y) = \\mathbb E_\\omega
        [\\cos(\\omega^\\top (x - y))]` for :math:`\\omega` from this measure.
        """

    def get_params(self) -> dict[str, Any]:
        return {"lengthscale": self.lengthscale, "amplitude": self.amplitude}

    def to_dict(self) -> dict[str, Any]:
        """JSON-serialisable description (``kernel_from_dict`` inverts it)."""
        return {"name": self.name, **self.get_params()}

    def __repr__(self) -> str:
        params = ", ".join(f"{k}={v!r}" for k, v in self.get_params().items())
        return f"{type(self).__name__}({params})"

    def __eq__(self, other) -> bool:
        return type(self) is type(other) and self.get_params() == other.get_params()

    def __hash__(self) -> int:
        return hash((type(self).__name__, tuple(sorted(self.get_params().items()))))

    @property
    def diag_value(self) -> float:
        """:math:`\\sup_x k(x, x)` (equal to ``amplitude``)."""
        return self.amplitude

    def value_at_distance(self, r) -> np.ndarray:
        """Kernel value at (L2, or L1 for the Laplacian) distance ``r`` >= 0 (``inf`` gives 0)."""
        try:
            raw = np.asarray(r)
        except Exception:  # ragged input
            raise ValueError(f"r must be a number or an array of distances, got {r!r:.80}.") from None
        if raw.dtype.kind not in "iuf":
            raise ValueError(f"r must be real distances, got dtype {raw.dtype} ({r!r:.80}).")
        r = raw.astype(np.float64)
        if np.isnan(r).any() or (r < 0).any():
            bad = r.flat[int(np.argmax(np.isnan(r.ravel()) | (r.ravel() < 0)))]
            raise ValueError(f"distances must be >= 0 (not NaN), got {float(bad)!r}.")
        with np.errstate(over="ignore"):
            d = r**2 if self.metric == "sqeuclidean" else r.copy()  # L1 distance for "cityblock"
            return self.amplitude * self._profile(np.atleast_1d(d)).reshape(r.shape)

    def lower_bound_on_box(self, lower, upper) -> float:
        """Smallest kernel value between two points of the box ``[lower, upper]``.

        Used for the sensitivity on a *declared* bounded domain; the box must be
        public (declared by the user), not read off the private data.
        """
        lo = check_array(lower, name="lower", ndim=1)
        hi = check_array(upper, name="upper", ndim=1, n_features=None)
        if lo.shape != hi.shape or np.any(hi < lo):
            raise ValueError(f"invalid box: lower={lo!r}, upper={hi!r} (need lower <= upper, same length).")
        width = hi - lo
        r = float(np.sum(np.abs(width))) if self.metric == "cityblock" else float(np.linalg.norm(width))
        return float(self.value_at_distance(r))

    # ------------------------------------------------------------ evaluation
    def _prepare(self, A: np.ndarray, center: np.ndarray) -> dict:
        """Centre the points (translation invariance) and precompute per-row data.

        Subclasses may add arrays; every entry is indexed by row so that
        :meth:`_slice` can cut blocks out of it.
        """
        check_magnitude(A, "the points")
        Ac = A - center
        prep = {"X": Ac}
        if self.metric == "sqeuclidean":
            prep["sq"] = np.einsum("ij,ij->i", Ac, Ac)
        return prep

    @staticmethod
    def _slice(prep: dict, i0: int, i1: int) -> dict:
        return {k: v[i0:i1] for k, v in prep.items()}

    def _pair_block(self, pa: dict, pb: dict) -> np.ndarray:
        """Kernel values of one block (rows of ``pa`` versus rows of ``pb``).

        Squared distances come from a GEMM (:math:`|a|^2 + |b|^2 - 2a^\\top b`,
        absolute error about :math:`10^{-16} R^2` for points within radius R of
        the centre) unless :math:`R^2/\\ell^2 > 10^3`, where coordinate
        differences (cdist) are used instead so that far-away points (e.g. an
        outlier that pulls the centre) keep full relative precision.
        """
        far = self.metric == "sqeuclidean" and (
            (pa["sq"].max(initial=0.0) + pb["sq"].max(initial=0.0)) > _GEMM_RADIUS2 * self.lengthscale**2)
        if self.metric != "sqeuclidean" or far:
            from scipy.spatial.distance import cdist  # lazily: scipy.spatial costs ~0.2 s of start-up

            d = cdist(pa["X"], pb["X"], metric=self.metric)
        else:
            d = pa["X"] @ pb["X"].T
            d *= -2.0
            d += pa["sq"][:, None]
            d += pb["sq"][None, :]
            np.maximum(d, 0.0, out=d)  # squared distances clamped at >= 0
        with np.errstate(over="ignore"):  # a scaled distance beyond the float range is +inf: kernel value 0
            k = self._profile(d)
        if self.amplitude != 1.0:
            k *= self.amplitude
        return k

    def _block_sums(self, pa: dict, pb: dict, *, rows: bool, cols: bool):
        """Row sums and/or column sums of one block of kernel values."""
        k = self._pair_block(pa, pb)
        return (k.sum(axis=1) if rows else None, k.sum(axis=0) if cols else None)

    def __call__(self, A, B=None) -> np.ndarray:
        """Cross Gram matrix ``K[i, j] = k(A[i], B[j])`` (``B = A`` if omitted)."""
        A = check_array(A, name="A")
        B = A if B is None else check_array(B, name="B", n_features=A.shape[1])
        return self.cross(A, B)

    def cross(self, A: np.ndarray, B: np.ndarray) -> np.ndarray:
        """Cross Gram matrix for validated float arrays (blocked, threaded).

        Holds the full ``len(A) x len(B)`` result: use :meth:`row_means` or
        :meth:`mean_gram` for sums over large data. Large matrices are computed
        by the fused engine (:func:`dpkme.kernels.engine.use_engine`).
        """
        center = _robust_center(A)  # robust: an outlier does not move the bulk away from 0
        if _engine.use_engine(self, A.shape[0] * B.shape[0]):
            out = _engine.gram_block(self, A, B if B is A else check_magnitude(B, "the points"), center=center)
        else:
            pa = self._prepare(A, center)
            pb = pa if B is A else self._prepare(B, center)
            out = np.empty((A.shape[0], B.shape[0]))
            rows = block_ranges(A.shape[0], max(1, BLOCK_ELEMENTS // max(1, B.shape[0])))

            def work(r):
                out[r[0]:r[1]] = self._pair_block(self._slice(pa, *r), pb)

            parallel_map(work, rows)
        if B is A:  # exact symmetry and exact diagonal
            out += out.T
            out *= 0.5
            np.fill_diagonal(out, self.amplitude)
        return out

    def gram(self, Z) -> np.ndarray:
        """Gram matrix :math:`K_{ZZ}` (symmetric, diagonal exactly ``amplitude``)."""
        Z = check_array(Z, name="Z")
        return self.cross(Z, Z)

    def row_means(self, Z, X) -> np.ndarray:
        """:math:`\\bar k_m = \\frac1N \\sum_{n} k(z_m, x_n)` for every row of ``Z``.

        Blocked over both ``Z`` and ``X``; memory :math:`O(M + N)` plus a few
        blocks. The translation used for numerical centring is the mean of ``Z``
        (public points), so no statistic of ``X`` enters the computation. Large
        inputs run on the fused engine (:func:`dpkme.kernels.engine.use_engine`).
        """
        Z = check_array(Z, name="Z")
        X = check_array(X, name="X", n_features=Z.shape[1])
        center = _robust_center(Z)
        if _engine.use_engine(self, Z.shape[0] * X.shape[0]):
            return _engine.row_sums(self, Z, check_magnitude(X, "the points"), center=center) / X.shape[0]
        pz, px = self._prepare(Z, center), self._prepare(X, center)
        xblocks = block_ranges(X.shape[0], _COL_BLOCK)

        def work(zr):
            pzi = self._slice(pz, *zr)
            acc = np.zeros(zr[1] - zr[0])
            for xr in xblocks:
                acc += self._block_sums(pzi, self._slice(px, *xr), rows=True, cols=False)[0]
            return acc

        zblocks = block_ranges(Z.shape[0], _ROW_BLOCK)
        sums = np.concatenate(parallel_map(work, zblocks)) if zblocks else np.zeros(0)
        return sums / X.shape[0]

    def triangular_row_sums(self, X, *, lower_rows: int | None = None) -> tuple[np.ndarray, np.ndarray]:
        """Strict lower and upper row sums of :math:`K_{XX}`, visiting each pair once.

        Returns ``lower[i]`` :math:`= \\sum_{j<i} k(x_i, x_j)` and ``upper[i]``
        :math:`= \\sum_{j>i} k(x_i, x_j)`. Their sum plus the diagonal is
        :math:`K_{XX}\\mathbf 1`; ``2 * cumsum(lower) + a * (1..N)`` gives
        :math:`\\mathbf 1^\\top K_{X_{:M}X_{:M}}\\mathbf 1` for every prefix, which is
        what the uniform baseline of a publishable subset needs. Exact, blocked,
        multi-threaded (large inputs on the fused engine, :func:`dpkme.kernels.engine.use_engine`);
        for evaluation and reproductions only. With ``lower_rows`` only the
        first ``lower_rows`` entries of ``lower`` are computed (the others are
        NaN): on the engine, the pairs that only add to later lower sums are
        reduced in one fused pass, about twice as fast.
        """
        X = check_array(X, name="X")
        n = X.shape[0]
        if _engine.use_engine(self, n * (n - 1) // 2):
            return _engine.triangular_sums(self, X, center=_robust_center(X), lower_rows=lower_rows)
        if lower_rows is not None:
            lower, upper = self.triangular_row_sums(X)
            lower[min(max(int(lower_rows), 0), n):] = np.nan
            return lower, upper
        p = self._prepare(X, _robust_center(X))

        def work(rows):
            # rows i0:i1 against columns i0:n (upper triangle incl. the diagonal block)
            i0, i1 = rows
            pi = self._slice(p, i0, i1)
            kd = self._pair_block(pi, pi)
            low_diag = np.tril(kd, k=-1).sum(axis=1)
            up = np.triu(kd, k=1).sum(axis=1)
            c_parts = []
            for j0, j1 in block_ranges(n - i1, _COL_BLOCK):
                r, c = self._block_sums(pi, self._slice(p, i1 + j0, i1 + j1), rows=True, cols=True)
                up += r
                c_parts.append(c)
            return low_diag, up, (np.concatenate(c_parts) if c_parts else np.zeros(0))

        lower = np.zeros(n)
        upper = np.zeros(n)
        rblocks = block_ranges(n, _TRI_ROW_BLOCK if n >= 8 * _TRI_ROW_BLOCK else _ROW_BLOCK)
        for (i0, i1), (ld, up, c) in zip(rblocks, parallel_map(work, rblocks)):
            lower[i0:i1] += ld
            upper[i0:i1] += up
            lower[i1:] += c
        return lower, upper

    def row_sums_symmetric(self, X) -> np.ndarray:
        """Row sums :math:`K_{XX}\\mathbf 1` exactly, visiting each pair once.

        Gives :math:`\\operatorname{mean}(K_{XX}) = \\mathbf 1^\\top K_{XX}\\mathbf 1/N^2`
        and, when the synthetic points are a prefix of ``X`` (publishable subset),
        their row means for free. For evaluation and reproductions only.
        """
        lower, upper = self.triangular_row_sums(X)
        return lower + upper + self.diag_value

    def spectral_sums_available(self, *arrays) -> bool:
        """Whether :meth:`mean_gram` / :meth:`row_means` of these arrays use the fast spectral sums
        (:mod:`dpkme.kernels.spectral`: Gaussian kernel, D <= 2); False for the other kernels."""
        return False

    def mean_gram(self, X, Y=None) -> float:
        """Exact mean of :math:`K_{XX}` (or of :math:`K_{XY}`), blocked.

        For evaluation only (RKHS distances to the private KME); it reads the
        private data and is never part of a release.
        """
        X = check_array(X, name="X")
        if Y is None:
            n = X.shape[0]
            if _engine.use_engine(self, n * (n - 1) // 2):  # upper sums only: one fused pass per tile
                _, upper = _engine.triangular_sums(self, X, center=_robust_center(X), lower_rows=0)
                return float((2.0 * upper.sum() + n * self.diag_value) / n**2)
            return float(self.row_sums_symmetric(X).sum() / X.shape[0] ** 2)
        Y = check_array(Y, name="Y", n_features=X.shape[1])
        return float(self.row_means(X, Y).mean())


def _check_dim(dim) -> int:
    return check_positive_int(dim, name="dim")


class GaussianKernel(Kernel):
    r"""Gaussian (exponentiated quadratic, RBF) kernel.

    .. math:: k(x, y) = a \exp\left(-\frac{\|x-y\|_2^2}{2\ell^2}\right)
              = a \exp(-\gamma \|x-y\|_2^2), \qquad \gamma = \frac{1}{2\ell^2}.

    Give exactly one of ``lengthscale`` and ``gamma``. Balog et al. (2018,
    Appendix B) use :math:`\gamma = 10^{-4}/D` (their code: lengthscale
    :math:`100\sqrt D` in :math:`\exp(-\|x-y\|^2/\ell^2)`).
    Spectral measure: :math:`\omega \sim \mathcal N(0, \ell^{-2} I_D)`.
    In 1-D and 2-D, :meth:`mean_gram` and :meth:`row_means` use the exact
    spectral sums of :mod:`dpkme.kernels.spectral`.

    Parameters
    ----------
    lengthscale : float, optional
        Length scale :math:`\ell > 0`, in the units of the data, within
        :data:`LENGTHSCALE_RANGE`. Declare it or take it from public
        information; never derive it from the private data.
    gamma : float, optional
        Inverse squared length scale :math:`\gamma = 1/(2\ell^2) > 0`
        (scikit-learn's parametrisation); an alternative to ``lengthscale``.
    amplitude : float, default=1.0
        :math:`a = k(x, x)`. Values above 1 are accepted for non-private use
        (e.g. metrics) but refused by every mechanism.

    Examples
    --------
    >>> import numpy as np
    >>> k = GaussianKernel(gamma=0.5)
    >>> k
    GaussianKernel(lengthscale=1.0, amplitude=1.0)
    >>> round(float(k(np.zeros((1, 2)), np.ones((1, 2)))[0, 0]), 6)   # exp(-|x - y|^2 / 2) = exp(-1)
    0.367879
    """

    name = "gaussian"

    def __init__(self, *, lengthscale: float | None = None, gamma: float | None = None, amplitude: float = 1.0):
        if (lengthscale is None) == (gamma is None):
            raise ValueError(
                f"give exactly one of lengthscale and gamma, got lengthscale={lengthscale!r}, gamma={gamma!r}."
            )
        if gamma is not None:
            gamma = check_positive_float(gamma, name="gamma")
            lengthscale = 1.0 / math.sqrt(2.0 * gamma)
        super().__init__(lengthscale=lengthscale, amplitude=amplitude)

    @property
    def gamma(self) -> float:
        return 0.5 / self.lengthscale**2

    def _profile(self, d):
        d *= -self.gamma
        return np.exp(d, out=d)

    def _prepare(self, A, center):
        # Factorised form k(a, b) = e(a) e(b) exp(2 gamma a.b), e(x) = exp(-gamma |x|^2):
        # one GEMM, one exp and one GEMV per block, about 2x faster than the
        # direct formula. Its relative error per term is about
        # 1e-16 * gamma * (|a| + |b|)^2, so a block uses it only when every point
        # has gamma |x|^2 <= _SAFE_EXP / 2 (error < 1e-13, no overflow);
        # other blocks use the direct formula.
        prep = super()._prepare(A, center)
        with np.errstate(under="ignore", over="ignore"):  # only blocks with gamma |x|^2 <= 300 use these
            prep["e"] = np.exp(-self.gamma * prep["sq"])
            prep["X2g"] = (2.0 * self.gamma) * prep["X"]
        return prep

    def _block_sums(self, pa, pb, *, rows, cols):
        lim = _SAFE_EXP / (2.0 * self.gamma)
        if pa["sq"].max(initial=0.0) > lim or pb["sq"].max(initial=0.0) > lim:
            return super()._block_sums(pa, pb, rows=rows, cols=cols)
        G = _scratch(len(pa["e"]), len(pb["e"]))
        np.matmul(pa["X2g"], pb["X"].T, out=G)
        np.exp(G, out=G)
        r = pa["e"] * (G @ pb["e"]) if rows else None
        c = pb["e"] * (pa["e"] @ G) if cols else None
        if self.amplitude != 1.0:
            r = None if r is None else r * self.amplitude
            c = None if c is None else c * self.amplitude
        return r, c

    def sample_frequencies(self, n, dim, rng):
        n, dim = check_positive_int(n, name="n"), _check_dim(dim)
        return rng.standard_normal((n, dim)) / self.lengthscale

    # Exact sums in 1-D and 2-D through the spectrum (dpkme.kernels.spectral): O(N K^D) instead of O(N^2 D).
    def spectral_sums_available(self, *arrays) -> bool:
        from .spectral import spectral_order

        arrays = [check_array(a, name="X") for a in arrays]
        return bool(arrays) and spectral_order(arrays[0].shape[1], self.lengthscale, *arrays) is not None

    def mean_gram(self, X, Y=None) -> float:
        """Exact mean of :math:`K_{XX}` (or of :math:`K_{XY}`); in 1-D/2-D via :mod:`dpkme.kernels.spectral`
        (quadrature error below 1e-17 per kernel value), else the blocked direct sums."""
        if Y is None:
            X = check_array(X, name="X")
            if self.spectral_sums_available(X):
                from .spectral import spectral_mean_gram

                return self.amplitude * spectral_mean_gram(X, lengthscale=self.lengthscale)
        return super().mean_gram(X, Y)

    def row_means(self, Z, X) -> np.ndarray:
        """:math:`\\bar k_m` for every row of ``Z``; in 1-D/2-D via :mod:`dpkme.kernels.spectral`, else blocked direct sums."""
        Z = check_array(Z, name="Z")
        X = check_array(X, name="X", n_features=Z.shape[1])
        if self.spectral_sums_available(Z, X):
            from .spectral import spectral_row_means

            return self.amplitude * spectral_row_means(Z, X, lengthscale=self.lengthscale)
        return super().row_means(Z, X)


class LaplacianKernel(Kernel):
    r"""Laplacian kernel with the L1 distance (scikit-learn's ``laplacian_kernel``).

    .. math:: k(x, y) = a \exp\left(-\frac{\|x-y\|_1}{\ell}\right)
              = a \prod_{d=1}^D e^{-|x_d - y_d|/\ell}.

    Spectral measure: independent Cauchy coordinates with scale :math:`1/\ell`.
    (The L2 version :math:`e^{-\|x-y\|_2/\ell}` is :class:`MaternKernel` with
    ``nu=0.5``.)

    Parameters
    ----------
    lengthscale : float
        Length scale :math:`\ell > 0`, in the units of the data, within
        :data:`LENGTHSCALE_RANGE`. Declare it or take it from public
        information; never derive it from the private data.
    amplitude : float, default=1.0
        :math:`a = k(x, x)`. Values above 1 are accepted for non-private use
        (e.g. metrics) but refused by every mechanism.

    Examples
    --------
    >>> import numpy as np
    >>> k = LaplacianKernel(lengthscale=1.0)
    >>> round(float(k(np.zeros((1, 2)), np.ones((1, 2)))[0, 0]), 6)   # exp(-|x - y|_1) = exp(-2)
    0.135335
    """

    name = "laplacian"
    metric = "cityblock"

    def _profile(self, d):
        d *= -1.0 / self.lengthscale
        return np.exp(d, out=d)

    def sample_frequencies(self, n, dim, rng):
        n, dim = check_positive_int(n, name="n"), _check_dim(dim)
        return rng.standard_cauchy((n, dim)) / self.lengthscale


class MaternKernel(Kernel):
    r"""Matérn kernel with smoothness :math:`\nu \in \{1/2, 3/2, 5/2\}`.

    With :math:`r = \|x-y\|_2/\ell`:

    .. math::
        \nu=\tfrac12: e^{-r}, \quad
        \nu=\tfrac32: (1+\sqrt3 r)e^{-\sqrt3 r}, \quad
        \nu=\tfrac52: (1+\sqrt5 r+\tfrac53 r^2)e^{-\sqrt5 r}.

    Spectral measure: multivariate t with :math:`2\nu` degrees of freedom and
    scale :math:`1/\ell`, i.e. :math:`\omega = z\sqrt{2\nu/g}/\ell` with
    :math:`z\sim\mathcal N(0, I_D)`, :math:`g\sim\chi^2_{2\nu}` (Rasmussen &
    Williams 2006, eq. 4.15).

    Parameters
    ----------
    nu : {0.5, 1.5, 2.5}, default=1.5
        Smoothness :math:`\nu`: the sample paths of the corresponding Gaussian
        process are :math:`\lceil\nu\rceil - 1` times differentiable.
    lengthscale : float
        Length scale :math:`\ell > 0`, in the units of the data, within
        :data:`LENGTHSCALE_RANGE`. Declare it or take it from public
        information; never derive it from the private data.
    amplitude : float, default=1.0
        :math:`a = k(x, x)`. Values above 1 are accepted for non-private use
        (e.g. metrics) but refused by every mechanism.

    Examples
    --------
    >>> import numpy as np
    >>> k = MaternKernel(nu=0.5, lengthscale=2.0)
    >>> round(float(k(np.zeros((1, 1)), np.full((1, 1), 2.0))[0, 0]), 6)   # exp(-r), r = 2 / 2
    0.367879
    """

    name = "matern"
    metric = "euclidean"
    _NUS = (0.5, 1.5, 2.5)

    def __init__(self, *, nu: float = 1.5, lengthscale: float, amplitude: float = 1.0):
        try:
            nu = float(nu)
        except (TypeError, ValueError):
            raise ValueError(f"nu must be one of {self._NUS}, got {nu!r}.") from None
        if nu not in self._NUS:
            raise ValueError(f"nu must be one of {self._NUS}, got {nu!r}.")
        self.nu = nu
        super().__init__(lengthscale=lengthscale, amplitude=amplitude)

    def get_params(self):
        return {"nu": self.nu, **super().get_params()}

    def _profile(self, d):
        r = d
        r *= 1.0 / self.lengthscale
        if self.nu == 0.5:
            r *= -1.0
            return np.exp(r, out=r)
        # beyond s = 800 the value is below 1e-340 (0 in float64); evaluating the polynomial there would give
        # inf * 0 = NaN for infinite distances
        if self.nu == 1.5:
            s = np.minimum(math.sqrt(3.0) * r, 800.0)
            return (1.0 + s) * np.exp(-s)
        s = np.minimum(math.sqrt(5.0) * r, 800.0)
        return (1.0 + s + s * s / 3.0) * np.exp(-s)

    def sample_frequencies(self, n, dim, rng):
        n, dim = check_positive_int(n, name="n"), _check_dim(dim)
        z = rng.standard_normal((n, dim))
        g = rng.chisquare(2.0 * self.nu, size=(n, 1))
        return z * np.sqrt(2.0 * self.nu / g) / self.lengthscale


class InverseMultiquadricKernel(Kernel):
    r"""Inverse multiquadric kernel, normalised to :math:`k(x,x) = a`.

    .. math:: k(x, y) = a \left(1 + \frac{\|x-y\|_2^2}{\ell^2}\right)^{-\beta},
              \qquad \beta > 0 \ (\text{default } 1/2).

    Spectral measure: a Gamma scale mixture of normals, since
    :math:`(1+s)^{-\beta} = \mathbb E_{\tau\sim\Gamma(\beta,1)}[e^{-\tau s}]`:
    :math:`\tau \sim \Gamma(\beta, 1)`, :math:`\omega\mid\tau \sim
    \mathcal N(0, 2\tau\ell^{-2} I_D)`.

    Parameters
    ----------
    lengthscale : float
        Length scale :math:`\ell > 0`, in the units of the data, within
        :data:`LENGTHSCALE_RANGE`. Declare it or take it from public
        information; never derive it from the private data.
    beta : float, default=0.5
        Exponent :math:`\beta > 0`; larger values make the tails lighter.
    amplitude : float, default=1.0
        :math:`a = k(x, x)`. Values above 1 are accepted for non-private use
        (e.g. metrics) but refused by every mechanism.

    Examples
    --------
    >>> import numpy as np
    >>> k = InverseMultiquadricKernel(lengthscale=1.0)
    >>> round(float(k(np.zeros((1, 1)), np.ones((1, 1)))[0, 0]), 6)   # (1 + 1)^(-1/2)
    0.707107
    """

    name = "imq"

    def __init__(self, *, lengthscale: float, beta: float = 0.5, amplitude: float = 1.0):
        self.beta = check_positive_float(beta, name="beta")
        super().__init__(lengthscale=lengthscale, amplitude=amplitude)

    def get_params(self):
        return {"beta": self.beta, **super().get_params()}

    def _profile(self, d):
        d *= 1.0 / self.lengthscale**2
        d += 1.0
        if self.beta == 0.5:
            np.sqrt(d, out=d)
            return np.reciprocal(d, out=d)
        return np.power(d, -self.beta, out=d)

    def sample_frequencies(self, n, dim, rng):
        n, dim = check_positive_int(n, name="n"), _check_dim(dim)
        tau = rng.gamma(self.beta, 1.0, size=(n, 1))
        return rng.standard_normal((n, dim)) * np.sqrt(2.0 * tau) / self.lengthscale


KERNELS: dict[str, type[Kernel]] = {
    "gaussian": GaussianKernel,
    "laplacian": LaplacianKernel,
    "matern": MaternKernel,
    "imq": InverseMultiquadricKernel,
}

#: Kernels defined in other modules of :mod:`dpkme.kernels` that :func:`make_kernel` builds by name: each module
#: adds its own when it is imported (:mod:`dpkme.kernels.additive` adds ``"additive"``; the package imports it
#: before anyone can call :func:`make_kernel`), so that this module imports none of the modules built on it.
EXTRA_KERNELS: dict[str, type[Kernel]] = {}

# The fused engine evaluates exactly these four classes (not their subclasses); it imports nothing from here.
_engine.register_kernel_kinds({GaussianKernel: "gaussian", LaplacianKernel: "laplacian", MaternKernel: "matern",
                               InverseMultiquadricKernel: "imq"})


def make_kernel(name: str, **params) -> Kernel:
    r"""Build a kernel by name: ``gaussian``, ``laplacian``, ``matern``, ``imq``, ``additive``.

    ``matern12``/``matern32``/``matern52`` are accepted as shorthands.

    Parameters
    ----------
    name : str
        A key of :data:`KERNELS` (case-insensitive), ``"rbf"`` or ``"eq"`` for
        the Gaussian kernel, or ``"matern12"``, ``"matern32"``, ``"matern52"``
        (Matérn with :math:`\nu = 1/2, 3/2, 5/2` unless ``nu`` is given), or
        ``"additive"`` (:class:`dpkme.kernels.additive.AdditiveKernel`).
    **params
        Keyword arguments of the kernel's constructor, e.g. ``lengthscale``,
        ``amplitude``, ``nu`` (Matérn), ``beta`` (inverse multiquadric),
        ``gamma`` (Gaussian).

    Returns
    -------
    Kernel
        A new kernel of the named class.

    Raises
    ------
    ValueError
        On an unknown name, a parameter the kernel does not have, a missing
        required parameter (the messages list the valid ones), or an invalid value.

    Examples
    --------
    >>> make_kernel("matern32", lengthscale=2.0)
    MaternKernel(nu=1.5, lengthscale=2.0, amplitude=1.0)
    """
    key = str(name).lower()
    shorthand = {"matern12": 0.5, "matern32": 1.5, "matern52": 2.5, "rbf": None, "eq": None}
    if key in ("rbf", "eq"):
        key = "gaussian"
    elif key in shorthand:
        params.setdefault("nu", shorthand[key])
        key = "matern"
    if key in EXTRA_KERNELS:  # "additive": registered by dpkme.kernels.additive, which builds on this module
        cls = EXTRA_KERNELS[key]
    elif key not in KERNELS:
        raise ValueError(f"unknown kernel {name!r}; choose one of {sorted(KERNELS) + sorted(EXTRA_KERNELS)}.")
    else:
        cls = KERNELS[key]
    signature = inspect.signature(cls.__init__).parameters
    allowed = [p for p in signature if p != "self"]
    unknown = sorted(str(p) for p in params if p not in allowed)
    if unknown:
        raise ValueError(f"the {key} kernel has no parameter(s) {unknown}; its parameters are {allowed}.")
    missing = [p for p in allowed if p not in params and signature[p].default is inspect.Parameter.empty
               and signature[p].kind is not inspect.Parameter.VAR_KEYWORD]
    if missing:
        raise ValueError(f"the {key} kernel needs the parameter(s) {missing} (given: {sorted(params)}).")
    return cls(**params)


def kernel_from_dict(spec: dict) -> Kernel:
    """Inverse of :meth:`Kernel.to_dict`.

    Parameters
    ----------
    spec : dict
        A kernel description: ``"name"`` (as accepted by :func:`make_kernel`)
        and the constructor's parameters under string keys, e.g.
        ``{"name": "gaussian", "lengthscale": 1.0, "amplitude": 1.0}``. The dict
        is not modified. An ``"additive"`` spec without ``"frequencies"`` was
        written before that option existed and gets ``"iid"``, the sampler it
        was released with (so a recorded seed draws the same features).

    Returns
    -------
    Kernel
        The kernel described, equal to the one that produced ``spec``.

    Raises
    ------
    ValueError
        If ``spec`` is not a dict, has no ``"name"`` or non-string keys, or is
        refused by :func:`make_kernel`.

    Examples
    --------
    >>> k = MaternKernel(nu=2.5, lengthscale=0.5)
    >>> kernel_from_dict(k.to_dict()) == k
    True
    """
    if not isinstance(spec, dict):
        raise ValueError(f"a kernel spec is a dict with a 'name', got {spec!r:.80}.")
    spec = dict(spec)
    try:
        name = spec.pop("name")
    except KeyError:
        raise ValueError(f"kernel spec {spec!r} has no 'name'.") from None
    if not all(isinstance(k, str) for k in spec):
        raise ValueError(f"kernel spec keys must be strings, got {list(spec)!r:.80}.")
    if isinstance(name, str) and name.lower() == "additive":
        spec.setdefault("frequencies", "iid")   # records older than the option: the sampler they used
    return make_kernel(name, **spec)
