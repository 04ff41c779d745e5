r"""Fused, blocked, multi-threaded exact kernel sums with JAX/XLA (float64, CPU or GPU).

The exact sums behind the RKHS distances (Balog et al. 2018, Appendix B.1),

.. math::
    \bar k_m = \frac1N\sum_{n=1}^N k(z_m, x_n), \qquad
    \overline{K_{XX}} = \frac1{N^2}\sum_{n, n'} k(x_n, x_{n'}),

cost :math:`O(NM)` and :math:`O(N^2)` kernel evaluations, each an ``exp`` (or a
square root and a power) of a distance. numpy's float64 ``exp`` is vectorised
only on AVX-512 machines (about 14 ns an element on an AVX2-only CPU); XLA
compiles the distance, the kernel profile and the reduction of a tile into one
vectorised loop on every x86 CPU, and runs it on a GPU when JAX has one as its
default device. This module is the engine behind :meth:`Kernel.row_means
<dpkme.kernels.kernel.Kernel.row_means>`, :meth:`Kernel.triangular_row_sums
<dpkme.kernels.kernel.Kernel.triangular_row_sums>` (hence ``mean_gram`` and
``row_sums_symmetric``), :meth:`Kernel.cross <dpkme.kernels.kernel.Kernel.cross>`
and the weighted sums of :mod:`dpkme.metrics` (MMD, RKHS distances).

Design
------
* Tiles of :data:`TILE` :math:`\times` :data:`TILE` pairs; the rows of each
  array are padded to a power-of-two number of tiles (zero weight on padding),
  so XLA compiles a few shapes per kernel class and dimension, and caches them
  across calls (kernel parameters are traced values: a new length scale does not
  recompile). One compiled call reduces one row tile against a range of column
  tiles (a ``fori_loop``); memory is :math:`O((N + M) D)` plus a few tiles,
  whatever :math:`N`.
* Sums that need row sums only (:func:`row_sums`, the upper sums of
  :func:`triangular_sums` beyond ``lower_rows``, hence the mean of
  :math:`K_{XX}`) reduce each tile in one fused pass, without keeping the tile:
  for the Gaussian kernel one GEMM of the coordinates, then the shift by
  :math:`-\gamma|b|^2`, the ``exp``, the weights and the row reduction in one
  XLA loop (about 1.4 ns a pair on one AVX2 core, of which the ``exp`` is about
  1 ns, against 2.3 ns for a kept tile reduced by two GEMVs). Column sums (the
  lower sums of :func:`triangular_sums`) need the kept tile and its two GEMVs;
  they are computed only for the columns that need them (``lower_rows``).
* Worker threads (one per usable core) run the row tiles concurrently; results
  are combined in tile order, so sums are deterministic.
* Everything is float64, inside ``jax.enable_x64(True)`` contexts: importing
  :mod:`dpkme` neither imports JAX nor changes its global dtype setting.
* Numerical safeguards of the numpy path: points are centred on a public
  translation (chosen by the caller); the Gaussian kernel uses the factorised
  form :math:`e^{-\gamma|a|^2}e^{-\gamma|b|^2}e^{2\gamma a^\top b}` only on tiles
  whose points all have :math:`\gamma|x|^2 \le 300` (relative error below
  :math:`10^{-13}`, no overflow), the inverse multiquadric uses GEMM squared
  distances (clamped at 0) only on tiles with :math:`(R_a^2 + R_b^2)/\ell^2 \le
  10^3`; every other tile, and the kernels with a kink at 0 (Laplacian with the
  L1 distance, Matérn), use coordinate differences, exact at distance 0 and with
  full relative precision for far-away points. When every point of a call is
  within the range of the fast form (the usual case), only that form is compiled.

Which engine runs (:func:`use_engine`): the environment variable
``DPKME_KERNEL_ENGINE`` is ``auto`` (default), ``jax`` or ``numpy``. ``numpy``
always uses the blocked numpy path of :mod:`dpkme.kernels.kernel`; ``jax``
uses this engine whatever the size; both ``jax`` and ``auto`` need JAX installed
and one of the four kernel classes of :mod:`dpkme.kernels.kernel` (not a
subclass), else the numpy path runs. ``auto`` uses the engine when a call
evaluates at least :data:`MIN_PAIRS` kernel values, below which the one-off
compilation (a few tenths of a second per shape) would dominate.
Compiled code is cached per process (per kernel class, form and padded shape).
"""

from __future__ import annotations

import importlib.util
import math
import os
import threading
from collections import deque
from concurrent.futures import ThreadPoolExecutor

import numpy as np

from .._blocked import n_workers

__all__ = ["ENGINE_ENV", "MIN_PAIRS", "TILE", "engine_mode", "use_engine", "row_sums", "triangular_sums", "gram_block"]

#: Name of the environment variable that selects the engine: ``auto``, ``jax`` or ``numpy``.
ENGINE_ENV = "DPKME_KERNEL_ENGINE"
#: In ``auto`` mode, the fused engine runs when a call evaluates at least this many kernel values (about 1.3e8:
#: N = 16 000 for the mean of K_XX). Below it the one-off compilation of a new shape (0.3 to 1 s) outweighs the
#: gain: on an AVX2-only machine the numpy path takes about 7 ns a value on two cores, the engine about 1 ns.
MIN_PAIRS = 1 << 27
#: Rows and columns of one tile (512 x 512 float64 = 2 MiB of kernel values: stays in cache).
TILE = 512
# Largest gamma |x|^2 of the factorised Gaussian form and largest (|a|^2 + |b|^2) / l^2 of GEMM squared
# distances (the thresholds of dpkme.kernels.kernel).
_SAFE_EXP_HALF = 300.0
_GEMM_RADIUS2 = 1e3
# Dimensions up to this are unrolled in the coordinate-difference loop; larger ones use a fori_loop.
_UNROLL_DIM = 32
_MODES = ("auto", "jax", "numpy")
_LOCK = threading.Lock()
_JITTED: dict = {}


def engine_mode() -> str:
    """The engine selected by the environment variable :data:`ENGINE_ENV`.

    Returns
    -------
    str
        ``"auto"`` (also when the variable is unset or empty), ``"jax"`` or ``"numpy"``.

    Raises
    ------
    ValueError
        If the variable holds another value.

    Examples
    --------
    >>> engine_mode() in ("auto", "jax", "numpy")
    True
    """
    value = os.environ.get(ENGINE_ENV, "").strip().lower() or "auto"
    if value not in _MODES:
        raise ValueError(f"{ENGINE_ENV}={os.environ.get(ENGINE_ENV)!r} is not one of {_MODES}; "
                         f"set it to 'numpy' for the blocked numpy path, 'jax' for the fused engine, or unset it.")
    return value


def _jax_available() -> bool:
    return importlib.util.find_spec("jax") is not None


#: The kernel classes the engine evaluates, exactly these types (not subclasses) -> their kind; filled by
#: :mod:`dpkme.kernels.kernel` when it defines them (it imports this module, so this one imports nothing of it).
_KERNEL_KINDS: dict[type, str] = {}


def register_kernel_kinds(kinds: dict[type, str]) -> None:
    """Declare the kernel classes the engine evaluates (called by :mod:`dpkme.kernels.kernel`).

    Parameters
    ----------
    kinds : dict of type to {"gaussian", "laplacian", "matern", "imq"}
        Each class and the kernel profile the engine compiles for it.
    """
    for cls, kind in kinds.items():
        if kind not in ("gaussian", "laplacian", "matern", "imq"):
            raise ValueError(f"unknown kernel kind {kind!r} for {cls.__name__}.")
        _KERNEL_KINDS[cls] = kind


def _spec(kernel):
    """(static description, traced parameters) of a supported kernel, or None."""
    kind = _KERNEL_KINDS.get(type(kernel))
    if kind is None:
        return None
    ell, amp = float(kernel.lengthscale), float(kernel.amplitude)
    if kind == "gaussian":
        return ("gaussian", None), (ell, amp, 0.0)
    if kind == "laplacian":
        return ("laplacian", None), (ell, amp, 0.0)
    if kind == "matern":
        return ("matern", float(kernel.nu)), (ell, amp, 0.0)
    return ("imq", float(kernel.beta) == 0.5), (ell, amp, float(kernel.beta))


def use_engine(kernel, n_pairs: int) -> bool:
    r"""Whether a kernel sum over ``n_pairs`` kernel evaluations runs on the fused engine.

    Parameters
    ----------
    kernel : Kernel
        The kernel; only the four classes of :mod:`dpkme.kernels.kernel`
        (Gaussian, Laplacian, Matérn, inverse multiquadric) are supported, not
        subclasses (e.g. :class:`~dpkme.kernels.additive.AdditiveKernel`).
    n_pairs : int
        Number of kernel values the call evaluates (e.g. :math:`N^2/2` for the
        triangular sums of :math:`K_{XX}`).

    Returns
    -------
    bool
        ``False`` when :data:`ENGINE_ENV` is ``numpy``, the kernel is not
        supported or JAX is not installed; ``True`` when it is ``jax``; in
        ``auto`` mode, ``n_pairs >= MIN_PAIRS``.

    Raises
    ------
    ValueError
        If :data:`ENGINE_ENV` holds an unknown value.

    Examples
    --------
    >>> from dpkme.kernels import GaussianKernel
    >>> use_engine(GaussianKernel(lengthscale=1.0), 10) in (False, True)
    True
    """
    mode = engine_mode()
    if mode == "numpy" or _spec(kernel) is None or not _jax_available():
        return False
    return mode == "jax" or int(n_pairs) >= MIN_PAIRS


# ---------------------------------------------------------------------------------------------- compiled parts
def _profile(jnp, kind, d, params):
    """Kernel values from squared distances (Gaussian, inverse multiquadric) or distances (the others)."""
    name, flag = kind[:2]
    ell, amp, beta = params
    if name == "gaussian":
        k = jnp.exp(d * (-0.5 / (ell * ell)))
    elif name == "laplacian":
        k = jnp.exp(d * (-1.0 / ell))
    elif name == "matern":
        r = d * (1.0 / ell)
        if flag == 0.5:
            k = jnp.exp(-r)
        elif flag == 1.5:
            s = jnp.minimum(math.sqrt(3.0) * r, 800.0)
            k = (1.0 + s) * jnp.exp(-s)
        else:
            s = jnp.minimum(math.sqrt(5.0) * r, 800.0)
            k = (1.0 + s + s * s / 3.0) * jnp.exp(-s)
    else:  # imq
        q = d * (1.0 / (ell * ell)) + 1.0
        k = 1.0 / jnp.sqrt(q) if flag else jnp.power(q, -beta)
    return k * amp


def _differences(jnp, lax, a, b, metric):
    """Squared L2 (``sqeuclidean``), L2 (``euclidean``) or L1 (``cityblock``) distances from coordinate differences."""
    dim = a.shape[1]
    bt = b.T

    def term(k):
        diff = a[:, k][:, None] - bt[k][None, :]
        return jnp.abs(diff) if metric == "cityblock" else diff * diff

    if dim <= _UNROLL_DIM:
        d = term(0)
        for k in range(1, dim):
            d = d + term(k)
    else:
        def body(k, acc):
            col_a = lax.dynamic_index_in_dim(a, k, axis=1, keepdims=True)
            row_b = lax.dynamic_index_in_dim(bt, k, axis=0, keepdims=True)
            diff = col_a - row_b
            return acc + (jnp.abs(diff) if metric == "cityblock" else diff * diff)

        d = lax.fori_loop(0, dim, body, jnp.zeros((a.shape[0], b.shape[0]), a.dtype))
    return jnp.sqrt(d) if metric == "euclidean" else d


def _tile(jnp, lax, kind, a, sa, b, sb, params):
    """One tile as ``(M, r, c)`` with kernel values ``r[:, None] * M * c[None, :]``.

    The factorised Gaussian form gives :math:`M = e^{2\\gamma a^\\top b}`, :math:`r = \\alpha e^{-\\gamma|a|^2}`
    (amplitude :math:`\\alpha`),
    :math:`c = e^{-\\gamma|b|^2}`; every other form gives the kernel values with ``r = c = 1``. ``kind[2]`` is
    ``"fast"`` when every point of the call is within the range of the fast (GEMM-based) form, chosen on the
    host, which saves compiling the coordinate-difference branch; else ``"mixed"`` (chosen per tile).
    """
    name = kind[0]
    ell, amp, _ = params
    ones_r, ones_c = jnp.ones(a.shape[0], a.dtype), jnp.ones(b.shape[0], b.dtype)
    hi = lax.Precision.HIGHEST
    metric = {"gaussian": "sqeuclidean", "imq": "sqeuclidean", "laplacian": "cityblock"}.get(name, "euclidean")

    def direct(_):
        return _profile(jnp, kind, _differences(jnp, lax, a, b, metric), params), ones_r, ones_c

    if name == "gaussian":
        gamma = 0.5 / (ell * ell)

        def factorised(_):
            m = jnp.exp(jnp.matmul(a * (2.0 * gamma), b.T, precision=hi))
            return m, amp * jnp.exp(-gamma * sa), jnp.exp(-gamma * sb)

        if kind[2] == "fast":
            return factorised(None)
        safe = (gamma * jnp.max(sa) <= _SAFE_EXP_HALF) & (gamma * jnp.max(sb) <= _SAFE_EXP_HALF)
        return lax.cond(safe, factorised, direct, None)
    if name == "imq":
        def gemm(_):
            d = sa[:, None] + sb[None, :] - 2.0 * jnp.matmul(a, b.T, precision=hi)
            return _profile(jnp, kind, jnp.maximum(d, 0.0), params), ones_r, ones_c

        if kind[2] == "fast":
            return gemm(None)
        near = jnp.max(sa) + jnp.max(sb) <= _GEMM_RADIUS2 * ell * ell
        return lax.cond(near, gemm, direct, None)
    return direct(None)


def _tile_row_sums(jnp, lax, kind, a, sa, b, sb, wb, params):
    r"""Weighted row sums :math:`\sum_j w_j k(a_i, b_j)` of one tile in one fused pass (no tile of values kept).

    The factorised Gaussian form becomes :math:`\alpha e^{-\gamma|a|^2}\sum_j w_j e^{\gamma(2a^\top b_j -
    |b_j|^2)}`: the exponent is at most :math:`\gamma|a|^2 \le 300` (no overflow), and the product of the two
    exponentials of the GEMV form is replaced by one ``exp`` per pair; XLA fuses the shift, the ``exp``, the
    weighting and the reduction into one loop over the GEMM's output. Every other form fuses the coordinate
    differences (or the GEMM distances), the kernel profile and the reduction.
    """
    name = kind[0]
    ell, amp, _ = params
    hi = lax.Precision.HIGHEST

    def generic(_):
        m, r, c = _tile(jnp, lax, (*kind[:2], "mixed" if name == "gaussian" else kind[2]), a, sa, b, sb, params)
        return r * jnp.sum(m * (c * wb)[None, :], axis=1)

    if name != "gaussian":
        return generic(None)
    gamma = 0.5 / (ell * ell)

    def shifted(_):
        u = jnp.matmul(a * (2.0 * gamma), b.T, precision=hi) - (gamma * sb)[None, :]
        return (amp * jnp.exp(-gamma * sa)) * jnp.sum(jnp.exp(u) * wb[None, :], axis=1)

    if kind[2] == "fast":
        return shifted(None)
    safe = (gamma * jnp.max(sa) <= _SAFE_EXP_HALF) & (gamma * jnp.max(sb) <= _SAFE_EXP_HALF)
    return lax.cond(safe, shifted, generic, None)


def _form(kind, params, *sq) -> str:
    """``"fast"`` when the GEMM-based form is safe for every pair of points (squared norms ``sq``), else ``"mixed"``."""
    ell = params[0]
    top = max(float(x.max(initial=0.0)) for x in sq)
    if kind[0] == "gaussian" and top * (0.5 / (ell * ell)) <= _SAFE_EXP_HALF:
        return "fast"
    if kind[0] == "imq" and 2.0 * top <= _GEMM_RADIUS2 * ell * ell:
        return "fast"
    return "mixed"


def _compiled(name: str, kind, **static):
    """The jitted function ``name`` for this kernel kind (built once per process and kind)."""
    key = (name, kind, tuple(sorted(static.items())))
    with _LOCK:
        fn = _JITTED.get(key)
        if fn is None:
            fn = _JITTED[key] = _build(name, kind, **static)
    return fn


def _build(name, kind, *, want_cols=False):
    import jax
    import jax.numpy as jnp
    from jax import lax

    T = TILE
    hi = lax.Precision.HIGHEST

    def tile_of(A, S, W, j):
        return (lax.dynamic_slice_in_dim(A, j * T, T, 0), lax.dynamic_slice_in_dim(S, j * T, T, 0),
                lax.dynamic_slice_in_dim(W, j * T, T, 0))

    if name == "rows":
        # Weighted row sums of one row tile i of A against column tiles [j0, j1) of B (and, with want_cols,
        # the column sums weighted by the rows' weights).
        def rows(A, SA, WA, B, SB, WB, i, j0, j1, params):
            a, sa, wa = tile_of(A, SA, WA, i)

            def body(j, carry):
                acc, cols = carry
                b, sb, wb = tile_of(B, SB, WB, j)
                if not want_cols:  # one fused pass: no tile of kernel values is kept
                    return acc + _tile_row_sums(jnp, lax, kind, a, sa, b, sb, wb, params), cols
                m, r, c = _tile(jnp, lax, kind, a, sa, b, sb, params)
                acc = acc + r * jnp.matmul(m, c * wb, precision=hi)
                cols = lax.dynamic_update_slice_in_dim(cols, c * jnp.matmul(r * wa, m, precision=hi), j * T, 0)
                return acc, cols

            cols0 = jnp.zeros(B.shape[0] if want_cols else 0, A.dtype)
            return lax.fori_loop(j0, j1, body, (jnp.zeros(T, A.dtype), cols0))

        return jax.jit(rows)
    if name == "triangle":
        # Strict upper-triangle row sums of row tile i of X (pairs j > i) and, for the column tiles j < jc, the
        # matching column sums (the strict lower row sums of those columns); the diagonal tile (j = i) is masked
        # to its strict upper triangle. Tiles j >= jc need row sums only: one fused pass each.
        def triangle(X, S, W, i, j1, jc, params):
            a, sa, wa = tile_of(X, S, W, i)
            idx = jnp.arange(T)
            upper = idx[None, :] > idx[:, None]

            def body(j, carry):
                acc, cols = carry
                b, sb, wb = tile_of(X, S, W, j)
                m, r, c = _tile(jnp, lax, kind, a, sa, b, sb, params)
                m = lax.cond(j == i, lambda m: jnp.where(upper, m, 0.0), lambda m: m, m)
                acc = acc + r * jnp.matmul(m, c * wb, precision=hi)
                cols = lax.dynamic_update_slice_in_dim(cols, c * jnp.matmul(r * wa, m, precision=hi), j * T, 0)
                return acc, cols

            def diagonal_rows(b, sb, wb):
                m, r, c = _tile(jnp, lax, kind, a, sa, b, sb, params)
                return r * jnp.sum(jnp.where(upper, m, 0.0) * (c * wb)[None, :], axis=1)

            def body_rows(j, acc):
                b, sb, wb = tile_of(X, S, W, j)
                return acc + lax.cond(j == i, diagonal_rows,
                                      lambda b, sb, wb: _tile_row_sums(jnp, lax, kind, a, sa, b, sb, wb, params),
                                      b, sb, wb)

            mid = jnp.clip(jc, i, j1)
            carry = lax.fori_loop(i, mid, body, (jnp.zeros(T, X.dtype), jnp.zeros(X.shape[0], X.dtype)))
            return lax.fori_loop(mid, j1, body_rows, carry[0]), carry[1]

        return jax.jit(triangle)
    if name == "gram":
        def gram(A, SA, B, SB, i, j, params):
            a, sa = lax.dynamic_slice_in_dim(A, i * T, T, 0), lax.dynamic_slice_in_dim(SA, i * T, T, 0)
            b, sb = lax.dynamic_slice_in_dim(B, j * T, T, 0), lax.dynamic_slice_in_dim(SB, j * T, T, 0)
            m, r, c = _tile(jnp, lax, kind, a, sa, b, sb, params)
            return (r[:, None] * m) * c[None, :]

        return jax.jit(gram)
    raise AssertionError(name)  # pragma: no cover


# ------------------------------------------------------------------------------------------------ host side
def _padded(A: np.ndarray, center: np.ndarray, weights: np.ndarray | None):
    """Centred points padded with zero rows to a power-of-two number of tiles; squared norms; weights (0 on padding)."""
    n, dim = A.shape
    tiles = max(1, -(-n // TILE))
    rows = TILE * (1 << (tiles - 1).bit_length())
    P = np.zeros((rows, dim))
    np.subtract(A, center, out=P[:n])
    W = np.zeros(rows)
    W[:n] = 1.0 if weights is None else weights
    return P, np.einsum("ij,ij->i", P, P), W, tiles


def _ordered(fn, tasks, consume):
    """Run ``fn`` on worker threads (each in float64 mode) and hand the results to ``consume`` in task order.

    At most two tasks per worker are in flight, so memory stays bounded whatever the number of tasks.
    """
    import jax

    def run(task):
        with jax.enable_x64(True):
            return fn(task)

    workers = n_workers()
    if workers == 1 or len(tasks) <= 1:
        for t in tasks:
            consume(t, run(t))
        return
    pending: deque = deque()
    with ThreadPoolExecutor(max_workers=workers) as pool:
        for t in tasks:
            pending.append((t, pool.submit(run, t)))
            if len(pending) >= 2 * workers:
                t0, fut = pending.popleft()
                consume(t0, fut.result())
        while pending:
            t0, fut = pending.popleft()
            consume(t0, fut.result())


def _device_arrays(*arrays):
    import jax
    import jax.numpy as jnp

    with jax.enable_x64(True):
        return [jnp.asarray(a) for a in arrays]


def row_sums(kernel, Z: np.ndarray, X: np.ndarray, *, center: np.ndarray, weights: np.ndarray | None = None) -> np.ndarray:
    r"""Weighted row sums :math:`s_m = \sum_n w_n k(z_m, x_n)` on the fused engine.

    Parameters
    ----------
    kernel : Kernel
        A Gaussian, Laplacian, Matérn or inverse multiquadric kernel (see :func:`use_engine`).
    Z : ndarray (M, D)
        Validated float64 rows.
    X : ndarray (N, D)
        Validated float64 points with the columns of ``Z``.
    center : ndarray (D,)
        Translation subtracted from both arrays for numerical centring (take it
        from public points, e.g. the median of ``Z``).
    weights : ndarray (N,), optional
        Weights :math:`w_n`; default 1 (plain row sums).

    Returns
    -------
    ndarray (M,)
        The row sums, in float64.

    Examples
    --------
    >>> import numpy as np
    >>> from dpkme.kernels import GaussianKernel
    >>> Z, X = np.zeros((1, 2)), np.ones((3, 2))
    >>> s = row_sums(GaussianKernel(gamma=0.5), Z, X, center=np.zeros(2))   # 3 exp(-1)
    >>> bool(abs(s[0] - 3 * np.exp(-1.0)) < 1e-15)
    True
    """
    kind, params = _spec(kernel)
    m = Z.shape[0]
    if m == 0 or X.shape[0] == 0:
        return np.zeros(m)
    PZ, SZ, WZ, zt = _padded(Z, center, None)
    PX, SX, WX, xt = _padded(X, center, weights)
    dev = _device_arrays(PZ, SZ, WZ, PX, SX, WX)
    fn = _compiled("rows", (*kind, _form(kind, params, SZ, SX)))
    out = np.zeros(zt * TILE)

    def work(i):
        acc, _ = fn(*dev, i, 0, xt, params)
        return np.asarray(acc)

    def consume(i, acc):
        out[i * TILE:(i + 1) * TILE] = acc

    _ordered(work, list(range(zt)), consume)
    return out[:m]


def triangular_sums(kernel, X: np.ndarray, *, center: np.ndarray,
                    lower_rows: int | None = None) -> tuple[np.ndarray, np.ndarray]:
    r"""Strict lower and upper row sums of :math:`K_{XX}`, each pair evaluated once, on the fused engine.

    Parameters
    ----------
    kernel : Kernel
        A Gaussian, Laplacian, Matérn or inverse multiquadric kernel (see :func:`use_engine`).
    X : ndarray (N, D)
        Validated float64 points.
    center : ndarray (D,)
        Translation subtracted for numerical centring.
    lower_rows : int, optional
        Compute the lower sums of the first ``lower_rows`` rows only (default:
        all); the others are NaN. The upper sums are always complete. Tiles
        whose column sums are not needed take one fused pass (kernel values
        reduced as they are computed) instead of a kept tile and two
        reductions: ``lower_rows=0`` gives :math:`\overline{K_{XX}}` at the
        lowest cost, as :math:`(2\sum_i \text{upper}_i + N k(x, x))/N^2`.

    Returns
    -------
    lower, upper : ndarray (N,)
        :math:`\sum_{j<i} k(x_i, x_j)` and :math:`\sum_{j>i} k(x_i, x_j)`.

    Examples
    --------
    >>> import numpy as np
    >>> from dpkme.kernels import LaplacianKernel
    >>> lo, up = triangular_sums(LaplacianKernel(lengthscale=1.0), np.array([[0.0], [1.0]]), center=np.zeros(1))
    >>> bool(np.allclose(lo, [0.0, np.exp(-1.0)], rtol=1e-15) and np.allclose(up, [np.exp(-1.0), 0.0], rtol=1e-15))
    True
    >>> lo, up = triangular_sums(LaplacianKernel(lengthscale=1.0), np.array([[0.0], [1.0]]), center=np.zeros(1),
    ...                          lower_rows=0)
    >>> bool(np.isnan(lo).all() and np.allclose(up, [np.exp(-1.0), 0.0], rtol=1e-15))
    True
    """
    kind, params = _spec(kernel)
    n = X.shape[0]
    keep = n if lower_rows is None else min(max(int(lower_rows), 0), n)
    if n == 0:
        return np.zeros(0), np.zeros(0)
    P, S, W, tiles = _padded(X, center, None)
    col_tiles = -(-keep // TILE)  # column tiles whose column sums are needed
    dev = _device_arrays(P, S, W)
    fn = _compiled("triangle", (*kind, _form(kind, params, S)))
    lower, upper = np.zeros(P.shape[0]), np.zeros(P.shape[0])

    def work(i):
        up, cols = fn(*dev, i, tiles, col_tiles, params)
        return np.asarray(up), (np.asarray(cols) if i < col_tiles else None)

    def consume(i, res):
        up, cols = res
        upper[i * TILE:(i + 1) * TILE] = up
        if cols is not None:
            lower[i * TILE:col_tiles * TILE] += cols[i * TILE:col_tiles * TILE]

    _ordered(work, list(range(tiles)), consume)
    lower[keep:] = np.nan
    return lower[:n], upper[:n]


def gram_block(kernel, A: np.ndarray, B: np.ndarray, *, center: np.ndarray) -> np.ndarray:
    r"""Cross Gram matrix :math:`K_{AB}` on the fused engine (tile by tile, written into one float64 array).

    Parameters
    ----------
    kernel : Kernel
        A Gaussian, Laplacian, Matérn or inverse multiquadric kernel (see :func:`use_engine`).
    A : ndarray (M, D)
        Validated float64 rows.
    B : ndarray (N, D)
        Validated float64 columns' points (may be ``A`` itself).
    center : ndarray (D,)
        Translation subtracted from both arrays for numerical centring.

    Returns
    -------
    ndarray (M, N)
        :math:`k(a_i, b_j)`. When ``B is A`` only the tiles on and above the
        diagonal are evaluated and mirrored (:meth:`Kernel.cross
        <dpkme.kernels.kernel.Kernel.cross>` then symmetrises the diagonal tiles
        and sets the diagonal to the amplitude).

    Examples
    --------
    >>> import numpy as np
    >>> from dpkme.kernels import MaternKernel
    >>> K = gram_block(MaternKernel(nu=0.5, lengthscale=1.0), np.zeros((1, 1)), np.ones((2, 1)), center=np.zeros(1))
    >>> bool(np.allclose(K, np.exp(-1.0), rtol=1e-15))
    True
    """
    kind, params = _spec(kernel)
    m, n = A.shape[0], B.shape[0]
    out = np.empty((m, n))
    if m == 0 or n == 0:
        return out
    PA, SA, _, at = _padded(A, center, None)
    PB, SB, _, bt = (PA, SA, None, at) if B is A else _padded(B, center, None)
    dev = _device_arrays(PA, SA, PB, SB)
    fn = _compiled("gram", (*kind, _form(kind, params, SA, SB)))

    def work(ij):
        return np.asarray(fn(*dev, ij[0], ij[1], params))

    def consume(ij, tile):
        i0, j0 = ij[0] * TILE, ij[1] * TILE
        i1, j1 = min(i0 + TILE, m), min(j0 + TILE, n)
        out[i0:i1, j0:j1] = tile[:i1 - i0, :j1 - j0]
        if B is A and j0 != i0:  # K_AA: the tiles below the diagonal are the transposes of those above
            out[j0:j1, i0:i1] = tile[:i1 - i0, :j1 - j0].T

    _ordered(work, [(i, j) for i in range(at) for j in range(i if B is A else 0, bt)], consume)
    return out
