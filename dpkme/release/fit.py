r"""Synthetic rows fitted by gradient (JAX) to noisy localised kernel embeddings of a declared table.

Columns and their feature maps
------------------------------
:class:`RelaxedDomain` reads a declared :class:`~dpkme.schema.TableSchema` and describes every column in
one of two ways, by a public rule of the schema alone:

* **discrete** -- categorical and boolean columns (their declared levels, the missing level included when
  declared), and numeric columns with at most :data:`DISCRETE_LEVELS` declared values or integer levels
  (one level per value, plus a missing level when declared). Its feature map is the one-hot vector of the
  row's level, :math:`\phi_j(x) = e_{x_j} \in \{0,1\}^{K_j}`.
* **continuous** -- every other numeric column (continuous, date, integer with many levels), with value
  :math:`z_j \in [0, 1]` on the declared range. Its feature map at resolution :math:`m` is the Gaussian
  kernel evaluated at :math:`m` public **landmarks** :math:`c_l = l/(m-1)`, :math:`l = 0, \dots, m-1`, with
  width :math:`h = \text{KERNEL\_WIDTH}/(m-1)` (half a landmark spacing), each row's values normalised to sum 1:

  .. math::
      \phi_{j,l}(z) = \frac{k(z, c_l)}{\sum_{l'} k(z, c_{l'})}, \qquad
      k(z, c) = \exp\!\Bigl(-\frac{(z-c)^2}{2h^2}\Bigr)

  (kernel values below :math:`e^{-60}` times the row's largest are set to 0 first: :data:`CUTOFF`).

  A column with a declared missing level appends one coordinate: :math:`[(1-\mathbb 1_{\text{miss}})\,
  \phi_j(z),\ \mathbb 1_{\text{miss}}]`. The resolution depends on the query's arity
  (at most :data:`LANDMARKS`: 32 landmarks in a 1-way query, 16 in a 2-way one, 6 in a 3-way one; fewer
  by the public noise rule of :func:`dpkme.release.adaptive.default_landmarks`).

Every :math:`\phi_j(x)` is **nonnegative and sums to 1**. A query on a set :math:`r` of columns is the
tensor product :math:`\phi_r(x) = \bigotimes_{j\in r}\phi_j(x)` (again nonnegative, summing to 1; for
discrete columns only it is the one-hot vector of the row's cell), and its answer on a table :math:`D` is
the mean :math:`a_r(D) = \frac1N\sum_{x\in D}\phi_r(x)`: the (normalised) kernel mean embedding of the rows
evaluated at the public grid of landmark and level tuples -- continuous values stay continuous, and a row
near a landmark counts mostly there. Since :math:`\|\phi_r(x)\|_2 \le \|\phi_r(x)\|_1 = 1` and
:math:`\langle\phi_r(x), \phi_r(x')\rangle \ge 0`, replacing one row changes :math:`a_r` by at most
:math:`\sqrt2/N` in L2 and :math:`2/N` in L1; adding or removing one (with :math:`N` declared) by at most
:math:`1/N` in both. Those are exactly the sensitivities of normalised cell counts, which are the
special case of discrete columns.

The relaxed table
-----------------
A relaxed row holds, per discrete column, a probability vector :math:`p_j = \operatorname{softmax}(\ell_j)`
over its levels and, per continuous column, a value :math:`z_j = (1 + \sin u_j)/2 \in [0, 1]` (never out
of range) and, when the column declares a missing level, a pair :math:`(p^{\text{present}},
p^{\text{missing}})`. The row's features are :math:`p_j` (discrete) or
:math:`[p^{\text{present}}\phi_j(z_j), p^{\text{missing}}]` (continuous), and its answer to a query is the
tensor product of its columns' features (columns independent within a row); a relaxed table of :math:`n`
rows answers with the mean over rows, a differentiable function of the logits and the :math:`u_j`. The
features are local (a row near a landmark moves that landmark's entries), which keeps the fit well
conditioned, unlike random Fourier features.

Fit
---
:class:`RelaxedFit` holds the measured queries (a query measured twice keeps the inverse-variance weighted
mean of its measurements: the sufficient statistic of Gaussian measurements) and minimises

.. math::
    L(\theta) = \sum_{m} \frac{1}{\sigma_m^2}\,\bigl\|a_{r_m}(\theta) - y_m\bigr\|_2^2

over all noisy measurements :math:`y_m` (noise :math:`\sigma_m` per entry) jointly, with Adam (optax) in a
jit-compiled ``jax.lax.fori_loop``. All shapes are fixed for a release: 1-way answers are the column means
of the concatenated 1-way features, all 2-way answers are blocks of one Gram matrix
:math:`\Phi_2^\top\Phi_2/n` of the concatenated 2-way features, and 3-way answers fill a fixed number of
slots (a public number; a release that measures more 3-way queries doubles it, at the cost of one more
compilation); unmeasured entries weigh 0. So the loop is compiled once per release (and reused across releases
of the same shapes; across processes too, through JAX's persistent compilation cache, :func:`persistent_cache`)
and every round warm-starts from the previous fit.
:meth:`RelaxedFit.decode` turns the relaxed rows into rows of the declared columns and types (levels drawn
from each row's probabilities, or their argmax; numbers at the row's value plus Gaussian noise of
:data:`DECODE_SPREAD` 1-way kernel widths, reflected at the bounds; integers and declared values snapped) through :meth:`~dpkme.schema.TableSchema.decode`. Everything here reads the measurements and
public quantities only: it is post-processing.

Examples
--------
>>> import numpy as np
>>> from dpkme.datasets import load_schema
>>> from dpkme.release.fit import RelaxedDomain, kernel_features
>>> dom = RelaxedDomain(load_schema("penguins"))
>>> [(c.name, c.discrete, dom.width(j, 1), dom.width(j, 3)) for j, c in enumerate(dom.columns)][:3]
[('species', True, 3, 3), ('island', True, 3, 3), ('bill_length_mm', False, 33, 7)]
>>> phi = kernel_features(np.array([0.0, 0.37, 1.0]), 8, np)
>>> bool(np.allclose(phi.sum(axis=1), 1.0) and (phi >= 0).all())
True
"""

from __future__ import annotations

import functools
import math
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np
import pandas as pd

__all__ = ["DISCRETE_LEVELS", "LANDMARKS", "KERNEL_WIDTH", "MAX_WIDTH3", "RelaxedColumn", "RelaxedDomain",
           "RelaxedFit", "kernel_features", "persistent_cache", "CACHE_ENV", "DECODE_SPREAD", "ROUND_STEPS", "FINAL_STEPS", "LEARNING_RATE", "SETTLE"]

#: Numeric columns with at most this many declared values / integer levels are discrete (one level each).
DISCRETE_LEVELS = 32
#: Landmarks of a continuous column in a 1-, 2- and 3-way query.
LANDMARKS = (32, 16, 6)
#: Width of the Gaussian kernel of the landmark features, in landmark spacings.
KERNEL_WIDTH = 0.5
#: Kernel values :math:`k(z, c_l)` below :math:`e^{\\text{CUTOFF}}` (relative to the largest of the row) are set
#: to 0 before the normalisation (the features stay nonnegative and sum to 1; no subnormal numbers).
CUTOFF = -60.0
#: A column enters 3-way queries only if its 3-way width (levels, or landmarks plus missing) is at most this.
MAX_WIDTH3 = 12
#: A decoded continuous value is the row's value plus Gaussian noise of this many 1-way kernel widths
#: (reflected at the bounds): the row stands for its kernel bump, not a point (rows that settle on a landmark
#: would otherwise decode to spikes).
DECODE_SPREAD = 1.0
#: Adam steps after each new measurement (warm start), and for the final fit.
ROUND_STEPS = 30
FINAL_STEPS = 300
#: Adam's learning rate (logits and the :math:`u_j`).
LEARNING_RATE = 0.05
#: The final fit's step size decays geometrically to this fraction of :data:`LEARNING_RATE`.
SETTLE = 0.05


def kernel_features(z: Any, m: int, xp: Any) -> Any:
    r"""Landmark features :math:`\phi(z) \in \mathbb R^m` of values ``z`` in [0, 1] (module docstring).

    Parameters
    ----------
    z : array (n,)
        Values on the unit range.
    m : int
        Number of landmarks (at least 2).
    xp : module
        ``numpy`` or ``jax.numpy``.

    Returns
    -------
    array (n, m)
        Nonnegative rows that sum to 1.
    """
    c = xp.asarray(np.linspace(0.0, 1.0, m), dtype=z.dtype)
    h = KERNEL_WIDTH / (m - 1)
    d = (z[:, None] - c[None, :]) / h
    e = -0.5 * d * d
    e = e - e.max(axis=1, keepdims=True)
    k = xp.where(e > CUTOFF, xp.exp(e), 0.0)        # no subnormal numbers (they make BLAS very slow)
    return k / k.sum(axis=1, keepdims=True)


@dataclass(frozen=True)
class RelaxedColumn:
    """One column of a :class:`RelaxedDomain` (public: derived from the schema alone).

    Parameters
    ----------
    name : str
        The column's name in the schema.
    discrete : bool
        Whether the column is relaxed as level probabilities (categories or few declared numeric levels).
    n_levels : int
        Discrete: the number of levels :math:`K` (missing included); continuous: 0.
    has_missing : bool
        Whether the column has a missing level.
    lo : float
        Lower bound of a numeric column's range (0 for a categorical one).
    hi : float
        Upper bound of a numeric column's range (1 for a categorical one).
    level_values : tuple of float
        Discrete numeric: the values of the levels (missing excluded); else ``()``.
    """

    name: str
    discrete: bool
    n_levels: int
    has_missing: bool
    lo: float
    hi: float
    level_values: tuple[float, ...]


class RelaxedDomain:
    """The relaxed (differentiable) domain of a declared schema; see the module docstring.

    Parameters
    ----------
    schema : TableSchema
        The declared schema.
    landmarks : (int, int, int), default=LANDMARKS
        Landmarks of a continuous column in a 1-, 2- and 3-way query (each at least 2).
    """

    def __init__(self, schema: Any, landmarks: Sequence[int] = LANDMARKS) -> None:
        self.schema = schema
        self.landmarks = tuple(int(m) for m in landmarks)
        if len(self.landmarks) != 3 or min(self.landmarks) < 2:
            raise ValueError(f"landmarks must be three integers >= 2, got {landmarks!r}.")
        cols = []
        for lay in schema._layout:
            spec = lay.spec
            if lay.numeric is None:                      # categorical / boolean
                K = lay.group.stop - lay.group.start
                cols.append(RelaxedColumn(spec.name, True, K, spec.missing == "category", 0.0, 1.0, ()))
                continue
            lo, hi = lay.lo, lay.hi
            has_missing = lay.group is not None
            if spec.values is not None and len(spec.values) <= DISCRETE_LEVELS:
                values = tuple(float(v) for v in spec.value_levels)
            elif spec.kind == "integer" and hi - lo + 1 <= DISCRETE_LEVELS:
                values = tuple(float(v) for v in np.arange(lo, hi + 1))
            else:
                values = ()
            if values:
                cols.append(RelaxedColumn(spec.name, True, len(values) + int(has_missing), has_missing, lo, hi,
                                          values))
            else:
                cols.append(RelaxedColumn(spec.name, False, 0, has_missing, lo, hi, ()))
        self.columns = tuple(cols)
        self.names = tuple(c.name for c in cols)

    def width(self, j: int, arity: int) -> int:
        """Length of column ``j``'s feature vector in a query on ``arity`` columns."""
        col = self.columns[j]
        if col.discrete:
            return col.n_levels
        return self.landmarks[arity - 1] + int(col.has_missing)

    def query_size(self, subset: Sequence[int]) -> int:
        """Number of entries of the answer to a query on ``subset`` (product of the widths)."""
        return int(np.prod([self.width(j, len(subset)) for j in subset]))

    # ------------------------------------------------------------------ data side
    def hard_states(self, Z: Any) -> list[Any]:
        """Per-column states of embedded rows ``Z`` (:meth:`~dpkme.schema.TableSchema.encode`).

        Returns a list with, per column, ``("codes", int array)`` for a discrete column and
        ``("z", z, missing)`` for a continuous one (``missing`` a bool array or None).
        """
        Z = np.asarray(Z, dtype=np.float64)
        out: list[Any] = []
        for lay, col in zip(self.schema._layout, self.columns):
            if lay.numeric is None:
                out.append(("codes", np.argmax(Z[:, lay.group], axis=1).astype(np.intp)))
                continue
            x = lay.lo + Z[:, lay.numeric] * (lay.hi - lay.lo) * lay.lengthscale
            x = np.clip(x, lay.lo, lay.hi)
            miss = (Z[:, lay.group.start + 1] > Z[:, lay.group.start]) if lay.group is not None else None
            if col.discrete:
                lv = np.asarray(col.level_values)
                code = np.argmin(np.abs(x[:, None] - lv[None, :]), axis=1).astype(np.intp)
                if miss is not None:
                    code = np.where(miss, col.n_levels - 1, code)
                out.append(("codes", code))
            else:
                out.append(("z", (x - lay.lo) / (lay.hi - lay.lo), miss))
        return out

    def hard_features(self, states: list[Any], j: int, arity: int) -> np.ndarray:
        """``(n, width)`` features of column ``j`` of rows in ``states`` (:meth:`hard_states`) in a query
        on ``arity`` columns: one-hot levels, or landmark features (module docstring)."""
        col, st = self.columns[j], states[j]
        if col.discrete:
            return np.asarray(np.eye(col.n_levels)[st[1]])
        phi = kernel_features(np.asarray(st[1], dtype=np.float64), self.landmarks[arity - 1], np)
        if not col.has_missing:
            return np.asarray(phi)
        miss = np.asarray(st[2], dtype=np.float64)[:, None]
        return np.concatenate([phi * (1.0 - miss), miss], axis=1)

    def accumulate(self, states: list[Any], subsets: Sequence[Sequence[int]], sums: list[np.ndarray]) -> None:
        r"""Add :math:`\sum_x \phi_r(x)` over the rows in ``states`` to ``sums[i]`` for every subset ``r``.

        All 2-way sums are blocks of one Gram matrix of the concatenated 2-way features; 3-way sums share
        the outer product of their first two columns' features.
        """
        cache: dict[tuple[int, int], np.ndarray] = {}

        def f(j: int, k: int) -> np.ndarray:
            if (j, k) not in cache:
                cache[(j, k)] = self.hard_features(states, j, k)
            return cache[(j, k)]

        G = np.zeros((0, 0))
        off: dict[int, int] = {}
        if any(len(sub) == 2 for sub in subsets):
            used = sorted({j for sub in subsets if len(sub) == 2 for j in sub})
            F2 = np.concatenate([f(j, 2) for j in used], axis=1)
            G = F2.T @ F2
            off = {j: int(o) for j, o in zip(used, np.cumsum([0] + [self.width(j, 2) for j in used])[:-1])}
        pairs: dict[tuple[int, int], np.ndarray] = {}
        for i, sub in enumerate(subsets):
            k = len(sub)
            if k == 1:
                sums[i] += f(sub[0], 1).sum(axis=0)
            elif k == 2:
                a, b = sub
                sums[i] += G[off[a]:off[a] + self.width(a, 2), off[b]:off[b] + self.width(b, 2)].ravel()
            else:
                ab = (sub[0], sub[1])
                if ab not in pairs:
                    A, B = f(sub[0], 3), f(sub[1], 3)
                    pairs[ab] = (A[:, :, None] * B[:, None, :]).reshape(A.shape[0], -1)
                sums[i] += (pairs[ab].T @ f(sub[2], 3)).ravel()

    # ------------------------------------------------------------------ decoding
    def to_embedded(self, choice: list[Any]) -> np.ndarray:
        """Schema embedding of decoded relaxed rows (``choice``: per column codes, or (z, missing))."""
        n = choice[0][0].shape[0] if isinstance(choice[0], tuple) else choice[0].shape[0]
        Z = np.zeros((n, self.schema.dim))
        for lay, col, ch in zip(self.schema._layout, self.columns, choice):
            if lay.numeric is None:
                Z[np.arange(n), lay.group.start + ch] = lay.scale
                continue
            if col.discrete:
                nv = len(col.level_values)
                miss = ch >= nv
                x = np.asarray((*col.level_values, lay.spec.impute_value if col.has_missing else 0.0))[ch]
            else:
                z, miss = ch
                x = lay.lo + np.clip(z, 0.0, 1.0) * (lay.hi - lay.lo)
                if miss is None:
                    miss = np.zeros(n, dtype=bool)
                if col.has_missing:
                    x = np.where(miss, lay.spec.impute_value, x)
            Z[:, lay.numeric] = (np.clip(x, lay.lo, lay.hi) - lay.lo) / ((lay.hi - lay.lo) * lay.lengthscale)
            if lay.group is not None:
                Z[:, lay.group.start] = np.where(miss, 0.0, lay.scale)
                Z[:, lay.group.start + 1] = np.where(miss, lay.scale, 0.0)
        return Z




def _layout(structure: tuple[Any, ...], landmarks: tuple[int, ...]) -> dict[str, Any]:
    """Where each column's features sit in the concatenated relaxed features (public: the structure alone).

    Arity ``k`` (1 or 2): ``[P (Dd x Kmax) | [present * phi_k, missing] (Dc x (m_k + 1))]``, discrete
    columns first (levels padded to Kmax), then continuous ones; ``start[k][j]`` is column ``j``'s first
    entry (its width entries follow, then padding that is always 0). Arity 3: ``(p', w3)`` blocks, discrete
    then continuous, ``pos3[j]`` column ``j``'s block (entries beyond its width are 0).
    """
    disc = [j for j, s in enumerate(structure) if s[0]]
    cont = [j for j, s in enumerate(structure) if not s[0]]
    kmax = max([structure[j][1] for j in disc] + [1])
    w3 = max([(s[1] if s[0] else landmarks[2] + int(s[2])) for s in structure if s[3]] + [1])
    start: dict[int, dict[int, int]] = {}
    size: dict[int, int] = {}
    for k in (1, 2):
        m = landmarks[k - 1]
        st = {j: disc.index(j) * kmax for j in disc}
        st.update({j: len(disc) * kmax + cont.index(j) * (m + 1) for j in cont})
        start[k] = st
        size[k] = len(disc) * kmax + len(cont) * (m + 1)
    pos3 = {j: (disc.index(j) if structure[j][0] else len(disc) + cont.index(j)) for j in range(len(structure))}
    return {"disc": disc, "cont": cont, "kmax": kmax, "w3": w3, "start": start, "size": size, "pos3": pos3}


#: Environment variable naming the folder of JAX's persistent compilation cache used by :class:`RelaxedFit`
#: (``off``/``0``: none); default ``$XDG_CACHE_HOME/dpkme/jax`` (``~/.cache/dpkme/jax``).
CACHE_ENV = "DPKME_JAX_CACHE"


def _configured_cache_dir() -> str | None:
    import jax

    return getattr(jax.config, "jax_compilation_cache_dir", None) or None


@functools.lru_cache(maxsize=1)
def persistent_cache() -> str | None:
    """Turn on JAX's persistent compilation cache for the compiled fit loop, once per process.

    The first release of a table structure in a process otherwise pays the XLA compilation of the fit loop
    (seconds of CPU); with the cache, a later process (an app restart, a batch job, the next benchmark run)
    loads the compiled loop from disk. Nothing is done when the caller already configured a cache folder
    (``jax_compilation_cache_dir``) or sets :data:`CACHE_ENV` to ``off`` or ``0``; else the folder is
    :data:`CACHE_ENV`, or ``$XDG_CACHE_HOME/dpkme/jax`` (``~/.cache/dpkme/jax``), created private to the user
    (mode 0700: JAX's cache is trusted code, so no other user may write there). A folder that cannot be
    created leaves the cache off. Only compilations that take at least JAX's
    ``jax_persistent_cache_min_compile_time_secs`` (1 s by default) are stored.

    Returns
    -------
    str or None
        The cache folder in use (the caller's, if configured), or None when it is off.
    """
    import os
    from pathlib import Path

    configured = _configured_cache_dir()
    if configured:
        return str(configured)
    env = os.environ.get(CACHE_ENV, "").strip()
    if env.lower() in ("off", "0", "false", "no"):
        return None
    folder = Path(env).expanduser() if env else \
        Path(os.environ.get("XDG_CACHE_HOME") or Path.home() / ".cache") / "dpkme" / "jax"
    try:
        folder.mkdir(parents=True, exist_ok=True, mode=0o700)
        if folder.stat().st_uid != os.getuid() or folder.stat().st_mode & 0o022:
            return None                   # someone else's, or writable by others: not trusted
    except OSError:
        return None
    from jax.experimental.compilation_cache import compilation_cache as cc

    cc.set_cache_dir(str(folder))
    cc.reset_cache()                      # a cache initialised (empty) by an earlier compilation is re-read
    return str(folder)


@functools.lru_cache(maxsize=8)
def _compiled(structure: tuple[Any, ...], landmarks: tuple[int, ...], learning_rate: float) -> tuple[Any, Any]:
    """Adam and the jit-compiled fit loop of one relaxed-table structure.

    ``structure``: per column ``(discrete, n_levels, has_missing, eligible for 3-way)``. The features of all
    columns are built by a few whole-array operations in the layout of :func:`_layout` (no gathers, whose
    gradients are slow scatters on a CPU), and the 3-way factors are picked by one-hot matrices, so the
    compiled graph does not grow with the number of columns. XLA keeps one executable per array shape, so
    every round of a release (fixed shapes) and later releases of the same structure and sizes reuse it.
    The loop returns the fitted parameters with the answers the selection needs.
    """
    import jax
    import jax.numpy as jnp
    import optax

    persistent_cache()
    opt = optax.adam(learning_rate)
    lay = _layout(structure, landmarks)
    w3, kmax = lay["w3"], lay["kmax"]
    centres = tuple(jnp.asarray(np.linspace(0.0, 1.0, m), dtype=jnp.float32) for m in landmarks)

    def feats(params: dict[str, Any], const: dict[str, Any]) -> tuple[Any, Any, Any]:
        n = params["U"].shape[0]
        P = jax.nn.softmax(params["L"] + const["mask"], axis=-1)                # (n, Dd, kmax)
        z = 0.5 + 0.5 * jnp.sin(params["U"])                                   # (n, Dc)
        PM = jax.nn.softmax(params["M"] + const["mmask"], axis=-1)             # (n, Dc, 2)
        out = []
        for k in range(3):
            m = landmarks[k]
            d = (z[:, :, None] - centres[k][None, None, :]) * ((m - 1) / KERNEL_WIDTH)
            e = -0.5 * d * d
            e = e - jax.lax.stop_gradient(e.max(axis=-1, keepdims=True))      # as kernel_features
            kf = jnp.where(e > CUTOFF, jnp.exp(e), 0.0)
            kf = jnp.concatenate([kf / kf.sum(axis=-1, keepdims=True) * PM[:, :, :1], PM[:, :, 1:]], axis=-1)
            if k < 2:
                out.append(jnp.concatenate([P.reshape(n, -1), kf.reshape(n, -1)], axis=1))
            else:
                Pd = P[:, :, :w3] if kmax >= w3 else jnp.pad(P, ((0, 0), (0, 0), (0, w3 - kmax)))
                Kc = kf[:, :, :w3] if m + 1 >= w3 else jnp.pad(kf, ((0, 0), (0, 0), (0, w3 - m - 1)))
                out.append(jnp.concatenate([Pd, Kc], axis=1))                    # (n, p, w3)
        return out[0], out[1], out[2]

    def answers(params: dict[str, Any], const: dict[str, Any], sel3: Any) -> tuple[Any, Any, Any, Any]:
        F1, F2, F3 = feats(params, const)
        n = F1.shape[0]
        A, B, C = (jnp.einsum("npw,qp->nqw", F3, sel3[i]) for i in range(3))   # (n, slots, w3)
        AB = (A[:, :, :, None] * B[:, :, None, :]).reshape(n, A.shape[1], -1)
        a3 = jnp.einsum("nqa,nqk->qak", AB, C).reshape(-1, w3, w3, w3) / n
        return F1.mean(axis=0), (F2.T @ F2) / n, a3, F3

    def loss(params: dict[str, Any], const: dict[str, Any], data: dict[str, Any]) -> Any:
        a1, G, a3, _ = answers(params, const, data["sel3"])
        return (jnp.sum(data["w1"] * (a1 - data["y1"]) ** 2) + jnp.sum(data["w2"] * (G - data["y2"]) ** 2)
                + jnp.sum(data["w3"] * (a3 - data["y3"]) ** 2))

    def run(params: dict[str, Any], const: dict[str, Any], state: Any, data: dict[str, Any], n_steps: Any,
            decay: Any) -> Any:
        def body(t: Any, carry: Any) -> Any:
            q, s = carry
            g = jax.grad(loss)(q, const, data)
            upd, s = opt.update(g, s, q)
            f = jnp.exp(decay * t / n_steps)          # step size x exp(decay * t / n_steps)
            upd = jax.tree.map(lambda u: u * f, upd)
            return optax.apply_updates(q, upd), s
        params, state = jax.lax.fori_loop(0, n_steps, body, (params, state))
        a1, G, _, F3 = answers(params, const, data["sel3"])
        return params, state, a1, G, F3

    return opt, jax.jit(run)


class RelaxedFit:
    """A relaxed table of ``n_rows`` rows fitted jointly to noisy measurements (module docstring).

    Parameters
    ----------
    domain : RelaxedDomain
        The public relaxed domain.
    n_rows : int
        Rows of the relaxed (and of the decoded) table.
    rng : numpy.random.Generator
        Public randomness (initial parameters).
    eligible3 : sequence of bool, optional
        Which columns may enter 3-way queries (default: those with a 3-way width at most
        :data:`MAX_WIDTH3`).
    slots3 : int, default=1
        Most distinct 3-way queries that will be measured (the fixed 3-way capacity; exceeding it costs one
        new compilation).
    learning_rate : float, optional
        Adam's step size (default :data:`LEARNING_RATE`).
    """

    def __init__(self, domain: RelaxedDomain, n_rows: int, rng: np.random.Generator, *,
                 eligible3: Sequence[bool] | None = None, slots3: int = 1,
                 learning_rate: float | None = None) -> None:
        self.domain = domain
        self.n_rows = int(n_rows)
        self.learning_rate = float(LEARNING_RATE if learning_rate is None else learning_rate)
        p = len(domain.columns)
        if eligible3 is None:
            eligible3 = [domain.width(j, 3) <= MAX_WIDTH3 for j in range(p)]
        self.eligible3 = tuple(bool(e) for e in eligible3)
        self.structure = tuple((c.discrete, c.n_levels, c.has_missing, e)
                               for c, e in zip(domain.columns, self.eligible3))
        self.disc = [j for j, c in enumerate(domain.columns) if c.discrete]
        self.cont = [j for j, c in enumerate(domain.columns) if not c.discrete]
        self.kmax = max([domain.columns[j].n_levels for j in self.disc] + [1])
        self.w3 = max([domain.width(j, 3) for j in range(p) if self.eligible3[j]] + [1])
        self.layout = _layout(self.structure, domain.landmarks)
        n = self.n_rows
        mask = np.full((len(self.disc), self.kmax), -1e9, dtype=np.float32)
        for a, j in enumerate(self.disc):
            mask[a, :domain.columns[j].n_levels] = 0.0
        mmask = np.zeros((len(self.cont), 2), dtype=np.float32)
        for b, j in enumerate(self.cont):
            if not domain.columns[j].has_missing:
                mmask[b, 1] = -1e9
        u = rng.uniform(0.02, 0.98, (n, len(self.cont)))
        self.params = {"L": (0.1 * rng.standard_normal((n, len(self.disc), self.kmax))).astype(np.float32),
                       "U": np.arcsin(2.0 * u - 1.0).astype(np.float32),
                       "M": (0.1 * rng.standard_normal((n, len(self.cont), 2))).astype(np.float32)}
        self._const = {"mask": mask, "mmask": mmask}
        self._opt_state: Any = None
        self._measured: dict[tuple[int, ...], tuple[np.ndarray, float]] = {}   # subset -> (y, weight)
        self._slots3: dict[tuple[int, ...], int] = {}
        self._cap3 = max(1, int(slots3))
        self._opt, self._run = _compiled(self.structure, domain.landmarks, self.learning_rate)
        self._last: Any = None          # (a1, G, F3) of the last fit

    # ------------------------------------------------------------------ measurements
    def add(self, subset: Sequence[int], y: Any, sigma: float) -> None:
        """Add a noisy answer ``y`` (noise ``sigma`` per entry) of the query on the columns ``subset``
        (sorted column indices); a query measured before keeps the inverse-variance weighted mean."""
        sub = tuple(int(j) for j in subset)
        y = np.asarray(y, dtype=np.float64)
        if y.size != self.domain.query_size(sub):
            raise ValueError(f"a measurement of {sub} has {self.domain.query_size(sub)} entries, got {y.size}.")
        if len(sub) == 3 and not all(self.eligible3[j] for j in sub):
            raise ValueError(f"columns {sub} are not eligible for 3-way queries.")
        w = 1.0 / float(sigma) ** 2
        if sub in self._measured:
            y0, w0 = self._measured[sub]
            y, w = (w0 * y0 + w * y) / (w0 + w), w0 + w
        self._measured[sub] = (y, w)
        if len(sub) == 3 and sub not in self._slots3:
            self._slots3[sub] = len(self._slots3)

    def measured(self, subset: Sequence[int]) -> np.ndarray | None:
        """The combined measurement of ``subset`` so far (None if not measured)."""
        m = self._measured.get(tuple(int(j) for j in subset))
        return None if m is None else m[0]

    def _data(self) -> dict[str, np.ndarray]:
        dom = self.domain
        lay = self.layout
        S1, S2 = lay["size"][1], lay["size"][2]
        cap3 = self._cap3
        while cap3 < len(self._slots3):
            cap3 *= 2
        self._cap3 = cap3
        w3 = self.w3
        y1, w1 = np.zeros(S1), np.zeros(S1)
        y2, w2 = np.zeros((S2, S2)), np.zeros((S2, S2))
        y3, wt3 = np.zeros((cap3, w3, w3, w3)), np.zeros((cap3, w3, w3, w3))
        sel3 = np.zeros((3, cap3, len(dom.columns)))
        for sub, (y, w) in self._measured.items():
            if len(sub) == 1:
                j = sub[0]
                a = lay["start"][1][j]
                y1[a:a + y.size], w1[a:a + y.size] = y, w
            elif len(sub) == 2:
                a, b = sub
                oa, ob = lay["start"][2][a], lay["start"][2][b]
                sa, sb = slice(oa, oa + dom.width(a, 2)), slice(ob, ob + dom.width(b, 2))
                y2[sa, sb] = y.reshape(dom.width(a, 2), dom.width(b, 2))
                w2[sa, sb] = w
            else:
                s = self._slots3[sub]
                wa, wb, wc = (dom.width(j, 3) for j in sub)
                y3[s, :wa, :wb, :wc] = y.reshape(wa, wb, wc)
                wt3[s, :wa, :wb, :wc] = w
                for i, j in enumerate(sub):
                    sel3[i, s, lay["pos3"][j]] = 1.0
        total = w1.sum() + w2.sum() + wt3.sum()
        f32 = np.float32
        return {"y1": y1.astype(f32), "w1": (w1 / total).astype(f32), "y2": y2.astype(f32),
                "w2": (w2 / total).astype(f32), "y3": y3.astype(f32), "w3": (wt3 / total).astype(f32),
                "sel3": sel3.astype(f32)}

    # ------------------------------------------------------------------ fitting
    def initialise(self, j: int, y: Any, rng: np.random.Generator) -> None:
        """Start column ``j``'s rows from its (noisy) 1-way measurement ``y``: each row draws a level, or a
        landmark (then a value within half a spacing of it), from the positive part of ``y`` normalised
        (post-processing of ``y`` alone), so the fit starts from the measured marginals."""
        col = self.domain.columns[j]
        p = np.clip(np.asarray(y, dtype=np.float64), 0.0, None)
        p = p / p.sum() if np.isfinite(p).all() and p.sum() > 0 else np.full(p.size, 1.0 / p.size)
        n = self.n_rows
        draw = rng.choice(p.size, size=n, p=p)
        if col.discrete:
            a = self.disc.index(j)
            L = 0.1 * rng.standard_normal((n, col.n_levels))
            L[np.arange(n), draw] += 2.0
            self.params["L"][:, a, :col.n_levels] = L
            return
        b = self.cont.index(j)
        m = self.domain.landmarks[0]
        miss = draw >= m
        z = np.clip(np.minimum(draw, m - 1) / (m - 1) + (rng.random(n) - 0.5) / (m - 1), 1e-3, 1.0 - 1e-3)
        self.params["U"][:, b] = np.arcsin(2.0 * z - 1.0)
        if col.has_missing:
            M = 0.1 * rng.standard_normal((n, 2))
            M[:, 1] += np.where(miss, 2.0, -2.0)
            self.params["M"][:, b] = M

    def fit(self, n_steps: int, *, settle: bool = False) -> None:
        """Run ``n_steps`` Adam steps on all measurements so far (warm start: parameters and Adam's state
        carry over from the previous call); keeps the answers of the fitted rows for :meth:`answers`.

        ``settle=True`` (the final fit) lowers the step size geometrically to :data:`SETTLE` times its value
        over the steps, so that the rows come to rest.
        """
        import jax.numpy as jnp

        if not self._measured:
            return
        data = {k: jnp.asarray(v) for k, v in self._data().items()}
        train = {k: jnp.asarray(v) for k, v in self.params.items()}
        if self._opt_state is None:
            self._opt_state = self._opt.init(train)
        const = {k: jnp.asarray(v) for k, v in self._const.items()}
        decay = jnp.asarray(math.log(SETTLE) if settle else 0.0, dtype=jnp.float32)
        train, self._opt_state, a1, G, F3 = self._run(train, const, self._opt_state, data,
                                                       jnp.asarray(max(int(n_steps), 0)), decay)
        self.params = {k: np.array(v) for k, v in train.items()}
        self._last = (np.asarray(a1, dtype=np.float64), np.asarray(G, dtype=np.float64),
                      np.asarray(F3, dtype=np.float64))

    def answers(self, subsets: Sequence[Sequence[int]]) -> list[np.ndarray]:
        """The answers (flattened like the measurements) of the rows of the last :meth:`fit` to the queries
        on ``subsets``."""
        if self._last is None:
            self.fit(0)
        if self._last is None:
            raise ValueError("nothing measured yet: add a measurement before asking for answers.")
        dom = self.domain
        a1, G, F3 = self._last
        n = F3.shape[0]
        out = []
        for sub in subsets:
            if len(sub) == 1:
                j = sub[0]
                a = self.layout["start"][1][j]
                out.append(a1[a:a + dom.width(j, 1)])
            elif len(sub) == 2:
                a, b = sub
                oa, ob = self.layout["start"][2][a], self.layout["start"][2][b]
                out.append(G[oa:oa + dom.width(a, 2), ob:ob + dom.width(b, 2)].ravel())
            else:
                wa, wb, wc = (dom.width(j, 3) for j in sub)
                pos = self.layout["pos3"]
                A, B, C = F3[:, pos[sub[0]], :wa], F3[:, pos[sub[1]], :wb], F3[:, pos[sub[2]], :wc]
                out.append(((A[:, :, None] * B[:, None, :]).reshape(n, -1).T @ C).ravel() / n)
        return out

    def states(self) -> list[Any]:
        """Relaxed per-column states (numpy, float64): ``("p", probs)`` or ``("z", z, pm)``."""
        def softmax(x: np.ndarray) -> np.ndarray:
            e = np.exp(x - x.max(axis=-1, keepdims=True))
            return np.asarray(e / e.sum(axis=-1, keepdims=True))

        L = self.params["L"].astype(np.float64) + self._const["mask"][None]
        U = self.params["U"].astype(np.float64)
        M = self.params["M"].astype(np.float64) + self._const["mmask"][None]
        out: list[Any] = []
        for j, col in enumerate(self.domain.columns):
            if col.discrete:
                a = self.disc.index(j)
                out.append(("p", softmax(L[:, a, :col.n_levels])))
            else:
                b = self.cont.index(j)
                out.append(("z", 0.5 + 0.5 * np.sin(U[:, b]), softmax(M[:, b]) if col.has_missing else None))
        return out

    def decode(self, rng: np.random.Generator, *, method: str = "sample", rows: Any = None) -> pd.DataFrame:
        """Rows in the declared columns and types.

        Parameters
        ----------
        rng : numpy.random.Generator
            Public randomness (levels drawn from each row's probabilities when ``method="sample"``).
        method : {"sample", "argmax"}, default="sample"
            A level per row drawn from its probabilities (the relaxed table's marginals are kept in
            expectation), or the most probable level.
        rows : array of int, optional
            Which relaxed rows to decode (default: all, in order); may repeat.

        Returns
        -------
        pandas.DataFrame
        """
        states = self.states()
        n = self.n_rows if rows is None else len(rows)
        sel = np.arange(self.n_rows) if rows is None else np.asarray(rows, dtype=np.intp)

        def pick(P: np.ndarray) -> np.ndarray:
            P = P[sel]
            if method == "argmax":
                return np.asarray(np.argmax(P, axis=1))
            c = np.cumsum(P, axis=1)
            u = rng.random(n)[:, None] * c[:, -1:]
            return np.asarray(np.minimum((u > c).sum(axis=1), P.shape[1] - 1))

        choice: list[Any] = []
        for col, st in zip(self.domain.columns, states):
            if col.discrete:
                choice.append(pick(st[1]))
            else:
                miss = pick(st[2]).astype(bool) if col.has_missing else None
                h = DECODE_SPREAD * KERNEL_WIDTH / (self.domain.landmarks[0] - 1)
                z = st[1][sel] + h * rng.standard_normal(n)
                choice.append((1.0 - np.abs(1.0 - np.abs(z)), miss))        # reflected at the bounds
        return self.domain.schema.decode(self.domain.to_embedded(choice))
