r"""Synthetic rows fitted by gradient (JAX) to noisy measurements of a declared table.

The relaxed table
-----------------
:class:`RelaxedDomain` reads a declared :class:`~dpkme.schema.TableSchema` and describes every column in
one of two ways, by a public rule of the schema alone:

* **discrete** -- categorical and boolean columns (their declared levels, the missing level included when
  declared), and numeric columns with at most :data:`DISCRETE_LEVELS` declared values or integer levels
  (one level per value, plus a missing level when declared). A relaxed row holds a probability vector
  :math:`p_j = \operatorname{softmax}(\ell_j)` over the :math:`K_j` levels.
* **continuous** -- every other numeric column (continuous, date, integer with many levels). A relaxed row
  holds :math:`z_j = (1 + \sin u_j)/2 \in [0, 1]` (no flat tails where a gradient would vanish, unlike a
  sigmoid), the value on the declared range
  :math:`x_j = l_j + z_j (u_j - l_j)` (so never out of bounds), and, when the column declares a missing
  level, a probability pair :math:`(p^{\text{present}}, p^{\text{missing}})`.

A relaxed table of :math:`n` rows is a mixture of :math:`n` product distributions (one per row); its
answer to a query is the mean over rows of the query's expectation under each row's distribution, a
differentiable function of the logits and the :math:`u_j`.

Queries (measurements)
----------------------
**Cells** of a subset :math:`r` of discrete columns: the normalised counts
:math:`\frac1N\#\{n : x_{n,r} = c\}` of every cell :math:`c` of the cross-tabulation; for a relaxed
row the indicator becomes :math:`\prod_{j \in r} p_{j, c_j}`.

**Random features** of a subset :math:`r` that holds a continuous column: :math:`F` frequencies
:math:`\omega_f` on the coordinates of :math:`r` (:meth:`RelaxedDomain.frequencies`) and the unit-norm map

.. math::
    \phi_r(x) = \tfrac{1}{\sqrt F}\bigl[\cos(\omega_f^\top v_r(x)),\ \sin(\omega_f^\top v_r(x))\bigr]_{f=1}^{F},
    \qquad \|\phi_r(x)\|_2 = 1,

of the coordinates :math:`v_r(x)` of the row's columns in :math:`r`: a numeric value in range units
:math:`z_j`, a level as a one-hot vector, a missing value as the pair (present, missing) with the numeric
coordinate at the declared impute value. :math:`\phi_r^\top\phi_r` approximates a Gaussian kernel on
:math:`v_r` with public scales: length scales :data:`NUMERIC_SCALES` of the range (one drawn per frequency,
so the kernel is their mixture) and the value :data:`CATEGORY_SIMILARITY` between two different levels.
For a relaxed row, independence of the columns within a row gives the expectation in closed form,

.. math::
    \mathbb E\,e^{i\omega^\top v_r(x)} = \prod_{j\in r} \sum_k p_{j,k}\, e^{i\omega_j^\top v_{j,k}},

the cosine and sine features being its real and imaginary parts.

Fit
---
:class:`RelaxedFit` holds the measured queries and minimises the weighted squared error

.. math::
    L(\theta) = \sum_{m} \frac{1}{\sigma_m^2}\,\bigl\|A_m(\theta) - y_m\bigr\|_2^2

over all noisy measurements :math:`y_m` (noise :math:`\sigma_m` per entry) jointly, with Adam (optax),
jit-compiled (arrays padded to capacities that double when exceeded, so the compiled step is reused round
after round). :meth:`RelaxedFit.decode` turns the relaxed rows into rows of the declared columns and types
(levels drawn from each row's probabilities, or their argmax; numbers on the range, integers and declared
values snapped) through :meth:`~dpkme.schema.TableSchema.decode`. Everything here reads the measurements and
public quantities only: it is post-processing.

Examples
--------
>>> import numpy as np
>>> from dpkme.datasets import load_sample, load_schema
>>> from dpkme.release.fit import RelaxedDomain
>>> dom = RelaxedDomain(load_schema("penguins"))
>>> [(c.name, c.discrete, c.n_levels) for c in dom.columns][:3]
[('species', True, 3), ('island', True, 3), ('bill_length_mm', False, 2)]
"""

from __future__ import annotations

import functools
import math
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np
import pandas as pd

__all__ = ["DISCRETE_LEVELS", "NUMERIC_SCALES", "CATEGORY_SIMILARITY", "RelaxedColumn", "RelaxedDomain",
           "RelaxedFit", "ROUND_STEPS", "FINAL_STEPS", "LEARNING_RATE", "SMOOTHING", "SETTLE"]

#: Numeric columns with at most this many declared values / integer levels are discrete (one level each).
DISCRETE_LEVELS = 32
#: Length scales (fractions of the declared range) of the random-feature kernels on numeric coordinates;
#: each frequency draws one of them (the kernel is their equal mixture).
NUMERIC_SCALES = (1.0, 0.3, 0.1, 0.05)
#: Kernel value of two different levels in the random-feature kernels.
CATEGORY_SIMILARITY = 0.1
#: Adam steps after each new measurement (warm start), and for the final fit.
ROUND_STEPS = 100
FINAL_STEPS = 600
#: Adam's learning rate (logits and the :math:`u_j`).
LEARNING_RATE = 0.05
#: Standard deviation :math:`h` (fraction of the range) of the Gaussian spread of a relaxed row's numeric value: a
#: relaxed row is a Gaussian bump, not a point, so the fit cannot answer noise with spikes; decoded values are
#: drawn from it (reflected at the bounds). Its features are damped by :math:`e^{-\omega^2 h^2/2}`.
SMOOTHING = 0.06
#: The final fit's step size decays geometrically to this fraction of :data:`LEARNING_RATE`.
SETTLE = 0.01


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
        Discrete: the number of levels :math:`K` (missing included); continuous: 2 with a missing level, else 0.
    has_missing : bool
        Whether the column has a missing level.
    lo : float
        Lower bound of a numeric column's range (0 for a categorical one).
    hi : float
        Upper bound of a numeric column's range (1 for a categorical one).
    level_values : tuple of float
        Discrete numeric: the values of the levels (missing excluded); else ``()``.
    level_coords : numpy.ndarray or None
        Discrete: the ``(K, d)`` coordinates of each level; continuous: None.
    coord_kinds : tuple of str
        Per coordinate of the column: ``"num"`` or ``"cat"``.
    impute_z : float
        Numeric with a missing level: the range coordinate (in [0, 1]) of the impute value; else 0.
    rff_slice : slice
        The column's coordinates among all columns' (random-feature inputs).
    level_offset : int
        First index of its levels in the concatenated level probabilities (-1: none).
    """

    name: str
    discrete: bool
    n_levels: int               # discrete: K (missing included); continuous: 2 with a missing level, else 0
    has_missing: bool
    lo: float
    hi: float
    level_values: tuple[float, ...]   # discrete numeric: the values of the levels (missing excluded); else ()
    level_coords: np.ndarray | None   # discrete: (K, d) coordinates of each level
    coord_kinds: tuple[str, ...]      # per coordinate: "num" or "cat"
    impute_z: float              # numeric with a missing level: range coordinate of the impute value
    rff_slice: slice             # its coordinates among all columns'
    level_offset: int            # first index of its levels in the concatenated level probabilities (-1: none)


def _cat_scale() -> float:
    return math.sqrt(math.log(1.0 / CATEGORY_SIMILARITY))


class RelaxedDomain:
    """The relaxed (differentiable) domain of a declared schema; see the module docstring.

    Parameters
    ----------
    schema : TableSchema
        The declared schema.
    """

    def __init__(self, schema: Any) -> None:
        self.schema = schema
        cols, start, level_off = [], 0, 0
        for lay in schema._layout:
            spec = lay.spec
            if lay.numeric is None:                      # categorical / boolean
                K = lay.group.stop - lay.group.start
                coords = np.eye(K)
                kinds = ("cat",) * K
                col = dict(name=spec.name, discrete=True, n_levels=K, has_missing=spec.missing == "category",
                           lo=0.0, hi=1.0, level_values=(), level_coords=coords, coord_kinds=kinds, impute_z=0.0)
            else:
                lo, hi = lay.lo, lay.hi
                has_missing = lay.group is not None
                imp = spec.impute_value
                impute_z = float((np.clip(imp, lo, hi) - lo) / (hi - lo)) if has_missing else 0.0
                if spec.values is not None and len(spec.values) <= DISCRETE_LEVELS:
                    values = tuple(float(v) for v in spec.value_levels)
                elif spec.kind == "integer" and hi - lo + 1 <= DISCRETE_LEVELS:
                    values = tuple(float(v) for v in np.arange(lo, hi + 1))
                else:
                    values = ()
                kinds = ("num",) + (("cat", "cat") if has_missing else ())
                if values:
                    zs = (np.asarray(values) - lo) / (hi - lo)
                    rows = [[z] + ([1.0, 0.0] if has_missing else []) for z in zs]
                    if has_missing:
                        rows.append([impute_z, 0.0, 1.0])
                    coords = np.asarray(rows, dtype=np.float64)
                    col = dict(name=spec.name, discrete=True, n_levels=len(rows), has_missing=has_missing,
                               lo=lo, hi=hi, level_values=values, level_coords=coords, coord_kinds=kinds,
                               impute_z=impute_z)
                else:
                    col = dict(name=spec.name, discrete=False, n_levels=2 if has_missing else 0,
                               has_missing=has_missing, lo=lo, hi=hi, level_values=(), level_coords=None,
                               coord_kinds=kinds, impute_z=impute_z)
            d = len(col["coord_kinds"])
            has_levels = col["n_levels"] > 0
            cols.append(RelaxedColumn(**col, rff_slice=slice(start, start + d),
                                      level_offset=level_off if has_levels else -1))
            start += d
            level_off += col["n_levels"]
        self.columns = tuple(cols)
        self.names = tuple(c.name for c in cols)
        self.n_coords = start
        self.n_level_probs = level_off            # index of the constant-1 column in the concatenation

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

    def cell_shape(self, subset: Sequence[int]) -> tuple[int, ...]:
        """Levels of each (discrete) column of ``subset`` (column indices)."""
        return tuple(self.columns[j].n_levels for j in subset)

    def true_cells(self, states: list[Any], subset: Sequence[int], n_norm: int) -> np.ndarray:
        """Counts of the cells of a discrete ``subset`` divided by ``n_norm`` (row-major over the subset)."""
        shape = self.cell_shape(subset)
        idx = np.ravel_multi_index(tuple(states[j][1] for j in subset), shape)
        return np.bincount(idx, minlength=int(np.prod(shape))).astype(np.float64) / float(n_norm)

    def frequencies(self, subset: Sequence[int], n_freq: int, rng: np.random.Generator) -> np.ndarray:
        """``(n_freq, n_coords)`` public frequencies of a random-feature query on ``subset`` (zero elsewhere)."""
        Om = np.zeros((n_freq, self.n_coords))
        scales = rng.choice(np.asarray(NUMERIC_SCALES), size=n_freq)
        c = _cat_scale()
        for j in subset:
            col = self.columns[j]
            sl = col.rff_slice
            g = rng.standard_normal((n_freq, sl.stop - sl.start))
            mult = np.array([1.0 if k == "num" else c for k in col.coord_kinds])
            num = np.array([k == "num" for k in col.coord_kinds])
            g = g * mult[None, :]
            g[:, num] /= scales[:, None]
            Om[:, sl] = g
        return Om

    def true_features(self, states: list[Any], subset: Sequence[int], Om: np.ndarray, n_norm: int, *,
                      block: int = 8192) -> np.ndarray:
        """:math:`\\frac{1}{N}\\sum_n \\phi_r(x_n)` (``2F`` entries: cosines then sines), in row blocks."""
        F = Om.shape[0]
        N = states[0][1].shape[0]
        re, im = np.zeros(F), np.zeros(F)
        for s in range(0, N, block):
            ph = np.zeros((min(block, N - s), F))
            for j in subset:
                col, st = self.columns[j], states[j]
                Oj = Om[:, col.rff_slice]
                if col.discrete:
                    ph += (col.level_coords @ Oj.T)[st[1][s:s + block]]
                else:
                    z = st[1][s:s + block]
                    if col.has_missing:
                        m = st[2][s:s + block]
                        zz = np.where(m, col.impute_z, z)
                        ph += zz[:, None] * Oj[:, 0][None, :] + np.where(m[:, None], Oj[:, 2][None, :],
                                                                         Oj[:, 1][None, :])
                    else:
                        ph += z[:, None] * Oj[:, 0][None, :]
            re += np.cos(ph).sum(axis=0)
            im += np.sin(ph).sum(axis=0)
        return np.concatenate([re, im]) / (math.sqrt(F) * float(n_norm))

    # ------------------------------------------------------------------ relaxed side (numpy or jax)
    def soft_states(self, params: dict[str, Any], xp: Any) -> list[Any]:
        """Per-column relaxed states from parameters: ``("p", probs)`` or ``("z", z, pm)``."""
        out: list[Any] = []
        for j, col in enumerate(self.columns):
            if col.discrete:
                out.append(("p", _softmax(params[f"l{j}"], xp)))
            else:
                z = _unit(params[f"u{j}"], xp)
                pm = _softmax(params[f"m{j}"], xp) if col.has_missing else None
                out.append(("z", z, pm))
        return out

    def level_probs(self, states: list[Any], xp: Any) -> Any:
        """Concatenated level probabilities of all columns with levels, then a constant-1 column."""
        parts = []
        for col, st in zip(self.columns, states):
            if col.discrete:
                parts.append(st[1])
            elif col.has_missing:
                parts.append(st[2])
        n = states[0][1].shape[0]
        parts.append(xp.ones((n, 1), dtype=parts[0].dtype if parts else states[0][1].dtype))
        return xp.concatenate(parts, axis=1)

    def cell_index(self, subset: Sequence[int]) -> np.ndarray:
        """``(C, k)`` indices into :meth:`level_probs` of every cell of a discrete ``subset``."""
        shape = self.cell_shape(subset)
        grids = np.indices(shape).reshape(len(shape), -1).T
        offs = np.array([self.columns[j].level_offset for j in subset])
        return np.asarray((grids + offs[None, :]).astype(np.int32))

    def soft_features(self, states: list[Any], Om: Any, cols: Iterable[int], xp: Any) -> tuple[Any, Any]:
        """Mean over relaxed rows of the expected cosines and sines (each ``(F,)``) of frequencies ``Om``."""
        re: Any = None
        im: Any = None
        for j in cols:
            col, st = self.columns[j], states[j]
            Oj = Om[:, col.rff_slice]
            if col.discrete:
                A = xp.asarray(col.level_coords, dtype=Oj.dtype) @ Oj.T
                cr, ci = st[1] @ xp.cos(A), st[1] @ xp.sin(A)
            else:
                th = st[1][:, None] * Oj[:, 0][None, :]
                damp = xp.exp(-0.5 * (SMOOTHING * Oj[:, 0]) ** 2)[None, :]
                if col.has_missing:
                    thp = th + Oj[:, 1][None, :]
                    thm = (col.impute_z * Oj[:, 0] + Oj[:, 2])[None, :]
                    pp, pm = st[2][:, :1] * damp, st[2][:, 1:]
                    cr = pp * xp.cos(thp) + pm * xp.cos(thm)
                    ci = pp * xp.sin(thp) + pm * xp.sin(thm)
                else:
                    cr, ci = damp * xp.cos(th), damp * xp.sin(th)
            if re is None:
                re, im = cr, ci
            else:
                re, im = re * cr - im * ci, re * ci + im * cr
        return re.mean(axis=0), im.mean(axis=0)

    def soft_answer(self, states: list[Any], query: tuple[Any, ...]) -> np.ndarray:
        """The relaxed table's answer (numpy) to a query ``("cells", subset)`` or ``("rff", subset, Om)``."""
        if query[0] == "cells":
            P = self.level_probs(states, np)
            idx = self.cell_index(query[1])
            prod = P[:, idx[:, 0]]
            for m in range(1, idx.shape[1]):
                prod = prod * P[:, idx[:, m]]
            return np.asarray(prod.mean(axis=0))
        Om = query[2]
        re, im = self.soft_features(states, Om, query[1], np)
        return np.concatenate([re, im]) / math.sqrt(Om.shape[0])

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
                x = np.asarray(col.level_values + (lay.spec.impute_value if col.has_missing else 0.0,))[ch]
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


def _softmax(x: Any, xp: Any) -> Any:
    m = x.max(axis=-1, keepdims=True)
    e = xp.exp(x - m)
    return e / e.sum(axis=-1, keepdims=True)


def _unit(x: Any, xp: Any) -> Any:
    return 0.5 + 0.5 * xp.sin(x)


@functools.lru_cache(maxsize=8)
def _compiled_run(learning_rate: float) -> tuple[Any, Any]:
    """Adam and the jit-compiled fit loop (one per learning rate; XLA caches one executable per shape, so
    releases with the same shapes share it)."""
    import jax
    import jax.numpy as jnp
    import optax

    opt = optax.adam(learning_rate)
    f32 = jnp.float32

    def loss(params: dict[str, Any], data: dict[str, Any]) -> Any:
        n = params["U"].shape[0]
        P = jax.nn.softmax(params["L"] + data["mask"][None], axis=-1)          # (n, p_d, kmax)
        z = 0.5 + 0.5 * jnp.sin(params["U"])                                   # (n, q)
        PM = jax.nn.softmax(params["M"] + data["mmask"][None], axis=-1)        # (n, q, 2)
        Pall = jnp.concatenate([P.reshape(n, -1), PM.reshape(n, -1), jnp.ones((n, 1), f32)], axis=1)
        idx = data["idx"]
        prod = Pall[:, idx[:, 0]]
        for m in range(1, idx.shape[1]):
            prod = prod * Pall[:, idx[:, m]]
        lc = jnp.sum(data["wc"] * (prod.mean(axis=0) - data["yc"]) ** 2)
        re = jnp.ones((n, data["yre"].shape[0]), f32)
        im = jnp.zeros_like(re)
        if params["L"].shape[1]:
            Pf = P.reshape(n, -1)
            for s in range(data["MR"].shape[0]):
                cr = Pf @ data["MR"][s] + data["dd"][s][None]
                ci = Pf @ data["MI"][s]
                re, im = re * cr - im * ci, re * ci + im * cr
        if params["U"].shape[1]:
            for s in range(data["S"].shape[0]):
                th = z @ data["Wn"][s] + data["wp"][s][None]
                pp = (PM[:, :, 0] @ data["S"][s]) * data["damp"][s][None] + data["dc"][s][None]
                pm = PM[:, :, 1] @ data["S"][s]
                cr = pp * jnp.cos(th) + pm * data["emr"][s][None]
                ci = pp * jnp.sin(th) + pm * data["emi"][s][None]
                re, im = re * cr - im * ci, re * ci + im * cr
        phr = re.mean(axis=0) * data["scale"]
        phi_i = im.mean(axis=0) * data["scale"]
        lf = jnp.sum(data["wf"] * ((phr - data["yre"]) ** 2 + (phi_i - data["yim"]) ** 2))
        return lc + lf

    def run(params: dict[str, Any], state: Any, data: dict[str, Any], n_steps: int) -> Any:
        def body(t: Any, carry: Any) -> Any:
            p, s = carry
            g = jax.grad(loss)(p, data)
            upd, s = opt.update(g, s, p)
            f = jnp.exp(data["decay"] * t / n_steps)          # step size x exp(decay * t / n_steps)
            upd = jax.tree.map(lambda u: u * f, upd)
            return optax.apply_updates(p, upd), s
        params, state = jax.lax.fori_loop(0, n_steps, body, (params, state))
        return params, state, loss(params, data)

    return opt, jax.jit(run, static_argnums=3)


def _capacity(n: int, minimum: int = 64) -> int:
    c = minimum
    while c < n:
        c *= 2
    return c


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
    learning_rate : float, default=LEARNING_RATE
        Adam's step size.
    slots : (int, int), default=(1, 1)
        Most discrete and continuous columns of one query (the compiled step's slots; larger queries widen
        them, at the cost of a new compilation).
    capacity : (int, int), default=(256, 256)
        Initial capacities of the cells and of the frequencies (doubled when exceeded, each time a new
        compilation).
    """

    def __init__(self, domain: RelaxedDomain, n_rows: int, rng: np.random.Generator, *, learning_rate: float = LEARNING_RATE,
                 slots: tuple[int, int] = (1, 1), capacity: tuple[int, int] = (256, 256)) -> None:
        self.domain = domain
        self._slots = (max(1, int(slots[0])), max(1, int(slots[1])))
        self._min_capacity = (int(capacity[0]), int(capacity[1]))
        self.n_rows = int(n_rows)
        self.learning_rate = float(learning_rate)
        params = {}
        for j, col in enumerate(domain.columns):
            if col.discrete:
                params[f"l{j}"] = 0.1 * rng.standard_normal((self.n_rows, col.n_levels))
            else:
                u = rng.uniform(0.02, 0.98, self.n_rows)
                params[f"u{j}"] = np.arcsin(2.0 * u - 1.0)
                if col.has_missing:
                    params[f"m{j}"] = 0.1 * rng.standard_normal((self.n_rows, 2))
        self.params = {k: v.astype(np.float32) for k, v in params.items()}
        self._opt_state: Any = None
        self._cells: list[Any] = []       # (idx (C, k), y (C,), weight)
        self._rff: list[Any] = []         # (Om (F, D), y (2F,), weight)
        self._step_fn: Any = None

    # measurements
    def add_cells(self, subset: Sequence[int], y: Any, sigma: float) -> None:
        """Add the noisy normalised cell counts ``y`` of a discrete ``subset`` (noise ``sigma`` per cell)."""
        self._cells.append((self.domain.cell_index(subset), np.asarray(y, dtype=np.float64), 1.0 / sigma ** 2))

    def add_features(self, subset: Sequence[int], Om: Any, y: Any, sigma: float) -> None:
        """Add the noisy mean random features ``y`` (``2F``) of frequencies ``Om`` on the columns ``subset``
        (noise ``sigma`` per entry)."""
        self._rff.append((tuple(subset), np.asarray(Om, dtype=np.float64), np.asarray(y, dtype=np.float64),
                          1.0 / sigma ** 2))

    def _arrays(self) -> dict[str, np.ndarray]:
        dom = self.domain
        one = dom.n_level_probs
        width = max([c[0].shape[1] for c in self._cells] + [self._slots[0]])
        C = sum(c[0].shape[0] for c in self._cells)
        capC = _capacity(C, self._min_capacity[0])
        idx = np.full((capC, width), one, dtype=np.int32)
        yc, wc = np.zeros(capC), np.zeros(capC)
        pos = 0
        for ci, y, w in self._cells:
            k = ci.shape[0]
            idx[pos:pos + k, :ci.shape[1]] = ci
            yc[pos:pos + k], wc[pos:pos + k] = y, w
            pos += k
        F = sum(r[1].shape[0] for r in self._rff)
        capF = _capacity(F, self._min_capacity[1])
        pl = self._plan_
        disc, cont, kmax = pl["disc"], pl["cont"], pl["kmax"]
        dpos = {j: a for a, j in enumerate(disc)}
        cpos = {j: b for b, j in enumerate(cont)}
        wd = max([sum(j in dpos for j in r[0]) for r in self._rff] + [self._slots[0]])
        wcn = max([sum(j in cpos for j in r[0]) for r in self._rff] + [self._slots[1]])
        # per slot s (the s-th discrete / continuous column of each frequency's subset), constant matrices:
        # discrete: factor = Pflat @ (MR + i MI) + dummy; continuous: theta = z @ Wn + wp,
        # factor = (PM0 @ S + dummy) e^{i theta} + (PM1 @ S) em
        MR = np.zeros((wd, len(disc) * kmax, capF))
        MI = np.zeros_like(MR)
        dd = np.zeros((wd, capF))
        S = np.zeros((wcn, len(cont), capF))
        Wn = np.zeros_like(S)
        wp, emr, emi, dc = (np.zeros((wcn, capF)) for _ in range(4))
        damp = np.ones((wcn, capF))
        yre, yim, wf, scale = np.zeros(capF), np.zeros(capF), np.zeros(capF), np.ones(capF)
        E, num_idx, pres_idx, miss_idx, imp = pl["E"], pl["num_idx"], pl["pres_idx"], pl["miss_idx"], pl["imp"]
        dd[:, :] = 1.0
        dc[:, :] = 1.0
        pos = 0
        for sub, O, y, w in self._rff:
            k = O.shape[0]
            fr = np.arange(pos, pos + k)
            Oe = np.concatenate([O, np.zeros((k, 1))], axis=1)
            for s, j in enumerate([j for j in sub if j in dpos]):
                a = dpos[j]
                A = E[a] @ Oe.T                                      # (kmax, k)
                MR[s, a * kmax:(a + 1) * kmax, fr] = np.cos(A).T
                MI[s, a * kmax:(a + 1) * kmax, fr] = np.sin(A).T
                dd[s, fr] = 0.0
            for s, j in enumerate([j for j in sub if j in cpos]):
                bb = cpos[j]
                wn = Oe[:, num_idx[bb]]
                S[s, bb, fr] = 1.0
                Wn[s, bb, fr] = wn
                wp[s, fr] = Oe[:, pres_idx[bb]]
                phm = imp[bb] * wn + Oe[:, miss_idx[bb]]
                emr[s, fr], emi[s, fr] = np.cos(phm), np.sin(phm)
                damp[s, fr] = np.exp(-0.5 * (SMOOTHING * wn) ** 2)
                dc[s, fr] = 0.0
            yre[pos:pos + k], yim[pos:pos + k] = y[:k], y[k:]
            wf[pos:pos + k], scale[pos:pos + k] = w, 1.0 / math.sqrt(k)
            pos += k
        # weights normalised by their total (the optimum is unchanged; Adam's steps stay comparable)
        total = wc.sum() + 2.0 * wf.sum()
        f32 = np.float32
        return dict(idx=pl["pad_map"][idx].astype(np.int32), yc=yc.astype(f32), wc=(wc / total).astype(f32),
                    yre=yre.astype(f32), yim=yim.astype(f32), wf=(wf / total).astype(f32),
                    scale=scale.astype(f32), MR=MR.astype(f32), MI=MI.astype(f32), dd=dd.astype(f32),
                    S=S.astype(f32), Wn=Wn.astype(f32), wp=wp.astype(f32), emr=emr.astype(f32),
                    emi=emi.astype(f32), dc=dc.astype(f32), damp=damp.astype(f32))

    def _plan(self) -> dict[str, Any]:
        """Static arrays of the vectorised (jit) model: padded levels, coordinates, index maps."""
        dom = self.domain
        disc = [j for j, c in enumerate(dom.columns) if c.discrete]
        cont = [j for j, c in enumerate(dom.columns) if not c.discrete]
        kmax = max([dom.columns[j].n_levels for j in disc] + [1])
        D = dom.n_coords
        E = np.zeros((len(disc) + 1, kmax, D + 1))                # the last: the dummy column
        mask = np.full((len(disc), kmax), -1e9)
        pad_map = np.zeros(dom.n_level_probs + 1, dtype=np.int64)
        for a, j in enumerate(disc):
            col = dom.columns[j]
            K = col.n_levels
            E[a, :K, col.rff_slice] = col.level_coords
            mask[a, :K] = 0.0
            pad_map[col.level_offset:col.level_offset + K] = a * kmax + np.arange(K)
        base = len(disc) * kmax
        num_idx = np.full(len(cont) + 1, D, dtype=np.int64)     # D: an all-zero coordinate; last: dummy
        pres_idx = np.full(len(cont) + 1, D, dtype=np.int64)
        miss_idx = np.full(len(cont) + 1, D, dtype=np.int64)
        mmask = np.full((len(cont), 2), 0.0)
        imp = np.zeros(len(cont) + 1)
        for b, j in enumerate(cont):
            col = dom.columns[j]
            num_idx[b] = col.rff_slice.start
            if col.has_missing:
                pres_idx[b], miss_idx[b] = col.rff_slice.start + 1, col.rff_slice.start + 2
                imp[b] = col.impute_z
                pad_map[col.level_offset:col.level_offset + 2] = base + 2 * b + np.arange(2)
            else:
                mmask[b, 1] = -1e9
        pad_map[-1] = base + 2 * len(cont)
        return dict(disc=disc, cont=cont, kmax=kmax, E=E, mask=mask, pad_map=pad_map, num_idx=num_idx,
                    pres_idx=pres_idx, miss_idx=miss_idx, mmask=mmask, imp=imp)

    def _packed(self) -> dict[str, np.ndarray]:
        """The parameters in the vectorised layout (discrete logits padded; continuous stacked)."""
        pl = self._plan_
        n = self.n_rows
        L = np.zeros((n, len(pl["disc"]), pl["kmax"]), dtype=np.float32)
        for a, j in enumerate(pl["disc"]):
            v = self.params[f"l{j}"]
            L[:, a, :v.shape[1]] = v
        U = np.zeros((n, len(pl["cont"])), dtype=np.float32)
        M = np.zeros((n, len(pl["cont"]), 2), dtype=np.float32)
        for b, j in enumerate(pl["cont"]):
            U[:, b] = self.params[f"u{j}"]
            if f"m{j}" in self.params:
                M[:, b] = self.params[f"m{j}"]
        return {"L": L, "U": U, "M": M}

    def _unpack(self, packed: dict[str, Any]) -> None:
        pl = self._plan_
        L, U, M = (np.asarray(packed[k]) for k in ("L", "U", "M"))
        for a, j in enumerate(pl["disc"]):
            K = self.params[f"l{j}"].shape[1]
            self.params[f"l{j}"] = L[:, a, :K].copy()
        for b, j in enumerate(pl["cont"]):
            self.params[f"u{j}"] = U[:, b].copy()
            if f"m{j}" in self.params:
                self.params[f"m{j}"] = M[:, b].copy()

    def _build(self) -> None:
        self._plan_ = self._plan()
        self._opt, self._step_fn = _compiled_run(self.learning_rate)

    def fit(self, n_steps: int, *, settle: bool = False) -> float:
        """Run ``n_steps`` Adam steps on all measurements so far (warm start); returns the final loss.

        Adam moves every row's parameters by about the step size whatever the size of its gradient, so rows
        that fit keep wandering; ``settle=True`` (the final fit) lowers the step size geometrically to
        :data:`SETTLE` times its value over the steps, so that the rows come to rest.
        """
        import jax.numpy as jnp

        if self._step_fn is None:
            self._build()
        if not self._cells and not self._rff:
            return 0.0
        arrays = self._arrays()
        arrays["mask"] = self._plan_["mask"].astype(np.float32)
        arrays["mmask"] = self._plan_["mmask"].astype(np.float32)
        arrays["decay"] = np.asarray(math.log(SETTLE) if settle else 0.0, dtype=np.float32)
        data = {k: jnp.asarray(v) for k, v in arrays.items()}
        params = {k: jnp.asarray(v) for k, v in self._packed().items()}
        if self._opt_state is None:
            self._opt_state = self._opt.init(params)
        params, self._opt_state, value = self._step_fn(params, self._opt_state, data, int(n_steps))
        self._unpack(params)
        return float(value)

    def initialise_from_features(self, j: int, Om: np.ndarray, y: np.ndarray, rng: np.random.Generator,
                                 *, grid: int = 512) -> None:
        r"""Start continuous column ``j``'s rows from the density that a measurement of its random features implies.

        :math:`g(z) = \langle y, \phi_j(z)\rangle` is the (noisy) kernel mean embedding of the column evaluated at
        a present value :math:`z`, i.e. the column's density smoothed by the query's kernel; its positive part on
        a grid, normalised, is sampled by inverse CDF for every row (post-processing of ``y`` alone). Keeps the
        fit from starting with rows where the data have none (gradient steps on random features pull only
        locally).
        """
        col = self.domain.columns[j]
        if col.discrete:
            return
        F = Om.shape[0]
        Oj = Om[:, col.rff_slice]
        z = (np.arange(grid) + 0.5) / grid
        ph = z[:, None] * Oj[:, 0][None, :] + (Oj[:, 1][None, :] if col.has_missing else 0.0)
        g = (np.cos(ph) @ y[:F] + np.sin(ph) @ y[F:]) / math.sqrt(F)
        g = np.maximum(g, 0.0)
        if not np.isfinite(g).all() or g.sum() <= 0.0:
            return
        cdf = np.cumsum(g) / g.sum()
        u = rng.random(self.n_rows)
        zs = z[np.minimum(np.searchsorted(cdf, u), grid - 1)] + (rng.random(self.n_rows) - 0.5) / grid
        zs = np.clip(zs, 1e-3, 1.0 - 1e-3)
        self.params[f"u{j}"] = np.arcsin(2.0 * zs - 1.0).astype(np.float32)

    def states(self) -> list[Any]:
        """Relaxed per-column states (numpy, float64) of the current parameters."""
        return self.domain.soft_states({k: v.astype(np.float64) for k, v in self.params.items()}, np)

    def answer(self, query: tuple[Any, ...]) -> np.ndarray:
        """The relaxed table's answer to a query (see :meth:`RelaxedDomain.soft_answer`)."""
        return self.domain.soft_answer(self.states(), query)

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
                z = st[1][sel] + SMOOTHING * rng.standard_normal(n)
                z = 1.0 - np.abs(1.0 - np.abs(z))              # reflected at the bounds
                choice.append((z, miss))
        return self.domain.schema.decode(self.domain.to_embedded(choice))
