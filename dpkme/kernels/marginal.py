r"""Exact one-hot features of a declared table's 1-way marginals, and their joint map with random features.

Marginal features
-----------------
A declared schema (:mod:`dpkme.schema`) cuts every column into public *cells*: a categorical or boolean
column into its declared levels (the missing level included when declared); a numeric column with at most
``n_bins`` declared values or integer levels into one cell per level; any other numeric column (continuous,
date, integer with more levels) into ``n_bins`` equal bins of its declared range; a numeric column with
``missing="category"`` has one more cell for "missing". With :math:`c_j(x)` the cell of row :math:`x` in
column :math:`j` of :math:`p` columns, the map

.. math::
    \psi(x) = \frac{1}{\sqrt p}\,\bigl[e_{c_1(x)};\ e_{c_2(x)};\ \dots;\ e_{c_p(x)}\bigr] \in \mathbb R^H,
    \qquad H = \sum_j |\text{cells}_j|,

has :math:`\|\psi(x)\|_2 = 1` for *every* row, and its mean over a table is the table's 1-way marginals
(cell proportions) scaled by :math:`1/\sqrt p`. Its kernel :math:`k_\psi(x, y) = \psi(x)^\top\psi(y)` is
the share of columns in which :math:`x` and :math:`y` fall in the same cell: positive semi-definite,
:math:`k_\psi(x, x) = 1`, :math:`0 \le k_\psi \le 1`.

With ``pairs``, the map has one *term* per column and one per pair :math:`(i, j)` of columns, whose cell is
the pair of the two columns' cells, each numeric column coarsened to at most ``pair_bins`` cells (a
cross-tabulation). Term :math:`t` carries the weight :math:`u_t` (the columns share :math:`1 - \rho`, the
pairs :math:`\rho` = ``pair_weight``, evenly) and contributes :math:`\sqrt{u_t}\,e_{c_t(x)}`, so still
:math:`\|\psi(x)\|^2 = \sum_t u_t = 1` and :math:`k_\psi(x, y) = \sum_t u_t [c_t(x) = c_t(y)]`. The
cells depend on the public schema and the options only, never on data.

Joint map (one Gaussian mechanism for both)
-------------------------------------------
:class:`JointFeatures` stacks the unit-norm random features :math:`\phi` of a kernel
(:class:`~dpkme.kernels.random_features.RandomFourierFeatures`, :math:`\|\phi(x)\|^2 = a \le 1`) and
:math:`\psi` with a public *share* :math:`h \in (0, 1)`:

.. math::
    \chi(x) = \bigl[\sqrt{1 - h}\,\phi(x);\ \sqrt h\,\psi(x)\bigr], \qquad
    \|\chi(x)\|_2^2 = (1 - h)\,a + h \le 1 .

So the mean of :math:`\chi` over :math:`N` rows has replace-one sensitivity
:math:`\sup\|\chi(x) - \chi(x')\|/N \le 2/N` -- exactly that of Algorithm 2's unit-norm features
(Balog et al. 2018, Proposition 9) -- and one Gaussian mechanism releases both parts at the charge of
Algorithm 2 alone. (The bound is loose for the marginal part, :math:`\|\psi(x) - \psi(x')\| \le \sqrt 2`;
dpkme keeps :math:`2/N`, which rounds toward more noise.) Dividing the released blocks by
:math:`\sqrt{1-h}` and :math:`\sqrt h` gives the kernel mean features with noise
:math:`\sigma/\sqrt{1-h}` per coordinate and the scaled marginals with noise :math:`\sigma/\sqrt h`:
post-processing. :class:`JointMap` is the public map :math:`\chi` on candidate rows that a weight re-fit
(:func:`dpkme.reduced_set.refit.refit_pool`) uses to fit both at once.
"""

from __future__ import annotations

import math

import numpy as np

from .._blocked import BLOCK_ELEMENTS
from .._validation import check_array, check_positive_float, check_positive_int
from .additive import _check_table_schema, _column_pairs

__all__ = ["MarginalFeatures", "JointFeatures", "JointMap", "DEFAULT_MARGINAL_BINS", "DEFAULT_MARGINAL_SHARE",
           "DEFAULT_PAIR_BINS", "DEFAULT_PAIR_WEIGHT", "DEFAULT_MAX_CELLS"]

#: Cells of a numeric column without few declared levels: equal bins of its declared range (as many as the
#: discretisation of the peer synthesizers in ``benchmarks/bench_tabular.py``).
DEFAULT_MARGINAL_BINS = 32
#: Default share :math:`h` of the marginal block in the joint map (see :func:`dpkme.release.tabular.release_table`).
DEFAULT_MARGINAL_SHARE = 0.3
#: Cells per numeric column in a pair's cross-tabulation (coarser than the 1-way cells; levels kept up to it).
DEFAULT_PAIR_BINS = 16
#: Most cells :math:`H` of the block (bounds the re-fit's pool features, :math:`4K(J + H)` bytes).
DEFAULT_MAX_CELLS = 12000
#: Share of the marginal block given to the pairs' cells when ``pairs`` are requested.
DEFAULT_PAIR_WEIGHT = 0.5


def _nearest_level(levels: np.ndarray, x: np.ndarray) -> np.ndarray:
    """Index of the nearest of the sorted ``levels`` for each of ``x`` (ties: the lower level)."""
    x = np.asarray(x, dtype=np.float64)
    i = np.clip(np.searchsorted(levels, x), 1, levels.size - 1)
    left, right = levels[i - 1], levels[i]
    return np.where(x - left <= right - x, i - 1, i)


class MarginalFeatures:
    r"""One-hot features :math:`\psi` of the cells of every column of a declared schema (module docstring).

    Parameters
    ----------
    schema : TableSchema
        The declared (public) schema; rows are given embedded (:meth:`~dpkme.schema.TableSchema.encode`).
    n_bins : int, default=DEFAULT_MARGINAL_BINS
        Equal bins of the declared range for numeric columns with more than ``n_bins`` levels (or none);
        columns with at most ``n_bins`` integer levels or declared values get one cell per level.
    pairs : "none", "all" or sequence of (str, str), default="none"
        Pairs of columns with a cross-tabulation term (as :func:`dpkme.kernels.additive.table_kernel`).
    pair_bins : int, default=DEFAULT_PAIR_BINS
        Most cells of a numeric column in a pair's term (its 1-way cells merged evenly; a missing cell kept).
    pair_weight : float, default=DEFAULT_PAIR_WEIGHT
        :math:`\rho \in [0, 1)`, the pairs' share of the block (0 without pairs).
    max_cells : int, default=DEFAULT_MAX_CELLS
        Most cells :math:`H` in all: beyond, ``pair_bins`` is halved (down to 4), then only the pairs nearest
        in the schema's order are kept (a public rule: wide tables keep a bounded block).

    Attributes
    ----------
    n_components : int
        :math:`H`, the number of cells of all terms.
    n_column_cells : int
        The columns' (1-way) cells, the first ``n_column_cells`` entries of :math:`\psi`.
    n_features_in_ : int
        The embedding's dimension (``schema.dim``).
    norm_bound : float
        1.0: :math:`\|\psi(x)\| = 1` for every row.
    column_slices : dict
        Column name -> slice of its cells in :math:`\psi`.

    Examples
    --------
    >>> import numpy as np
    >>> from dpkme.schema import ColumnSpec, TableSchema
    >>> schema = TableSchema([ColumnSpec("x", "continuous", lower=0, upper=1),
    ...                       ColumnSpec("c", "categorical", categories=["a", "b", "c"])])
    >>> import pandas as pd
    >>> Z = schema.encode(pd.DataFrame({"x": [0.1, 0.9, 0.95], "c": ["a", "c", "c"]}))
    >>> mf = MarginalFeatures(schema, n_bins=4)
    >>> mf.n_components, mf.codes(Z).tolist()
    (7, [[0, 0], [3, 2], [3, 2]])
    >>> bool(np.allclose(np.linalg.norm(mf.features(Z), axis=1), 1.0))
    True
    >>> [h.tolist() for h in mf.histograms(mf.mean_embedding(Z))]
    [[0.333..., 0.0, 0.0, 0.666...], [0.333..., 0.0, 0.666...]]
    """

    norm_bound = 1.0

    def __init__(self, schema, *, n_bins: int = DEFAULT_MARGINAL_BINS, pairs="none",
                 pair_bins: int = DEFAULT_PAIR_BINS, pair_weight: float = DEFAULT_PAIR_WEIGHT,
                 max_cells: int = DEFAULT_MAX_CELLS):
        _check_table_schema(schema)
        self.n_bins = check_positive_int(n_bins, name="n_bins", minimum=2)
        self.pair_bins = check_positive_int(pair_bins, name="pair_bins", minimum=2)
        self.schema = schema
        domain = schema.domain
        self.n_features_in_ = int(schema.dim)
        rules, sizes = [], []
        for lay in schema._layout:
            if lay.numeric is None:                            # categorical / boolean: its one-hot block
                n = lay.group.stop - lay.group.start
                rules.append(("group", lay.group, n))
            else:
                j = lay.numeric
                width = float(domain.upper[j])
                if j in domain.value_levels and domain.value_levels[j].size <= self.n_bins:
                    lv = np.asarray(domain.value_levels[j])
                    rules.append(("values", j, lv))
                    n = lv.size
                elif j in domain.integer_levels:
                    step, n_levels = domain.integer_levels[j]
                    n = min(n_levels, self.n_bins)
                    rules.append(("integer", j, (step, n_levels, n)))
                else:
                    n = self.n_bins
                    rules.append(("bins", j, width))
                if lay.group is not None:                      # present / missing block: one more cell
                    rules[-1] = ("missing", lay.group, rules[-1])
                    n += 1
            sizes.append(n)
        self._rules = tuple(rules)
        self._n_cells = sizes
        self.n_columns = p = len(rules)
        names = schema.names
        self.max_cells = check_positive_int(max_cells, name="max_cells")
        pair_idx = _column_pairs(names, pairs, max_pairs=p * (p - 1) // 2 or 1)
        # a pair's cells: each numeric column coarsened to at most pair_bins cells (missing kept apart); beyond
        # max_cells, coarser pair cells (halving pair_bins down to 4), then only the pairs nearest in the schema's
        # order (as table_kernel's pairs="all" beyond max_pairs) -- a rule of the schema alone
        budget = self.max_cells - sum(sizes)
        while True:
            self._coarse = []
            for rule, n in zip(rules, sizes):
                if rule[0] == "group":
                    self._coarse.append((n, n, False))
                else:
                    has_missing = rule[0] == "missing"
                    inner = n - 1 if has_missing else n
                    self._coarse.append((inner, min(inner, self.pair_bins), has_missing))
            coarse_sizes = [c + int(m) for _, c, m in self._coarse]
            total = sum(coarse_sizes[i] * coarse_sizes[j] for i, j in pair_idx)
            if total <= budget or self.pair_bins <= 4:
                break
            self.pair_bins = max(4, self.pair_bins // 2)
        if pair_idx and total > budget:
            by_gap = sorted(pair_idx, key=lambda ij: (ij[1] - ij[0], ij[0]))
            kept, used = [], 0
            for i, j in by_gap:
                cells = coarse_sizes[i] * coarse_sizes[j]
                if used + cells <= budget:
                    kept.append((i, j))
                    used += cells
            pair_idx = sorted(kept)
        pw = float(pair_weight)
        if not (math.isfinite(pw) and 0.0 <= pw < 1.0):
            raise ValueError(f"pair_weight must lie in [0, 1), got {pair_weight!r}.")
        if not pair_idx:
            pw = 0.0
        self.pair_weight = pw
        terms, offset = [], 0
        self.column_slices, self.pair_slices = {}, {}
        for c, name in enumerate(names):
            terms.append(((c,), (1.0 - pw) / p, slice(offset, offset + sizes[c])))
            self.column_slices[name] = terms[-1][2]
            offset += sizes[c]
        for i, j in pair_idx:
            size = coarse_sizes[i] * coarse_sizes[j]
            terms.append(((i, j), pw / len(pair_idx), slice(offset, offset + size)))
            self.pair_slices[(names[i], names[j])] = terms[-1][2]
            offset += size
        self._terms = tuple(terms)
        self._coarse_sizes = coarse_sizes
        self.pairs = tuple((names[i], names[j]) for i, j in pair_idx)
        self.n_column_cells = sum(sizes)          # the columns' cells come first, then the pairs'
        self.n_components = offset
        self._offsets = np.array([t[2].start for t in terms], dtype=np.intp)
        self._values = np.array([math.sqrt(t[1]) for t in terms])

    def __repr__(self) -> str:
        return (f"MarginalFeatures(columns={self.n_columns}, pairs={len(self.pairs)}, cells={self.n_components}, "
                f"n_bins={self.n_bins})")

    # ----------------------------------------------------------------- cells
    def _numeric_code(self, rule, Z):
        kind, j, arg = rule
        z = Z[:, j]
        if kind == "values":
            return _nearest_level(arg, z)
        if kind == "integer":
            step, n_levels, n = arg
            k = np.clip(np.rint(z / step), 0, n_levels - 1)
            return np.floor(k * n / n_levels).astype(np.intp) if n < n_levels else k.astype(np.intp)
        width = arg
        return np.clip(np.floor(z / width * self.n_bins), 0, self.n_bins - 1).astype(np.intp)

    def codes(self, Z) -> np.ndarray:
        """Cell index of every row in every column, ``(M, p)`` integers (within each column's cells).

        Parameters
        ----------
        Z : array (M, D)
            Embedded rows (released atoms, candidates or encoded rows).

        Returns
        -------
        ndarray (M, p) of int
        """
        Z = check_array(Z, name="Z", n_features=self.n_features_in_)
        out = np.empty((Z.shape[0], self.n_columns), dtype=np.intp)
        for c, rule in enumerate(self._rules):
            if rule[0] == "group":
                out[:, c] = np.argmax(Z[:, rule[1]], axis=1)
            elif rule[0] == "missing":
                group, inner = rule[1], rule[2]
                code = self._numeric_code(inner, Z)
                missing = Z[:, group.start + 1] > Z[:, group.start]
                out[:, c] = np.where(missing, self._n_cells[c] - 1, code)
            else:
                out[:, c] = self._numeric_code(rule, Z)
        return out

    def _term_index(self, Z) -> np.ndarray:
        """``(M, T)`` positions in :math:`\\psi` of every row's cell of every term (columns, then pairs)."""
        fine = self.codes(Z)
        cols = [fine[:, c] for c in range(self.n_columns)]
        coarse = {}
        out = np.empty((fine.shape[0], len(self._terms)), dtype=np.intp)
        for t, (members, _, sl) in enumerate(self._terms):
            if len(members) == 1:
                out[:, t] = sl.start + cols[members[0]]
                continue
            for c in members:
                if c not in coarse:
                    inner, n_coarse, _has_missing = self._coarse[c]
                    code = cols[c]
                    if n_coarse < inner:
                        is_missing = code >= inner
                        code = np.where(is_missing, n_coarse, np.floor(np.minimum(code, inner - 1) * n_coarse / inner))
                    coarse[c] = code.astype(np.intp)
            i, j = members
            out[:, t] = sl.start + coarse[i] * self._coarse_sizes[j] + coarse[j]
        return out

    def features(self, Z, *, dtype=np.float64) -> np.ndarray:
        r""":math:`\psi(Z)`, shape ``(M, H)``: :math:`\sqrt{u_t}` in the row's cell of every term :math:`t`."""
        idx = self._term_index(Z)
        out = np.zeros((idx.shape[0], self.n_components), dtype=dtype)
        np.put_along_axis(out, idx, np.broadcast_to(self._values.astype(dtype), idx.shape), axis=1)
        return out

    def transform(self, X) -> np.ndarray:
        """Alias of :meth:`features` (float64), as the random-feature maps offer."""
        return self.features(X)

    def mean_embedding(self, X, weights=None) -> np.ndarray:
        r""":math:`\frac1N\sum_i \psi(x_i)` (or :math:`\sum_i w_i\psi(x_i)`), in row blocks of bounded memory.

        Parameters
        ----------
        X : array (N, D)
            Embedded rows.
        weights : array (N,), optional
            Weights instead of :math:`1/N`.

        Returns
        -------
        ndarray (H,)
        """
        X = check_array(X, name="X", n_features=self.n_features_in_)
        n = X.shape[0]
        w = None if weights is None else np.asarray(weights, dtype=np.float64)
        if w is not None and w.shape != (n,):
            raise ValueError(f"weights must have shape ({n},), got {w.shape}.")
        T = len(self._terms)
        total = np.zeros(self.n_components)
        step = max(1, BLOCK_ELEMENTS // max(1, T))
        for a in range(0, n, step):
            idx = self._term_index(X[a:a + step])
            vals = np.broadcast_to(self._values, idx.shape)
            if w is not None:
                vals = vals * w[a:a + step, None]
            total += np.bincount(idx.ravel(), weights=vals.ravel(), minlength=self.n_components)
        return total if w is not None else total / n

    def histograms(self, vector) -> list[np.ndarray]:
        r"""The 1-way cell proportions of every column from a mean feature vector (undoing :math:`\sqrt{u_t}`)."""
        v = np.asarray(vector, dtype=np.float64)
        if v.shape != (self.n_components,):
            raise ValueError(f"vector must have shape ({self.n_components},), got {v.shape}.")
        return [v[sl] / math.sqrt(u) for (_, u, sl) in self._terms[:self.n_columns]]

    def sample(self, histograms, n: int, rng) -> np.ndarray:
        r"""``n`` embedded rows drawn from the *product* of per-column cell proportions (e.g. released ones).

        Column by column, a cell is drawn with probability :math:`\max(p_c, 0)/\sum_{c'}\max(p_{c'}, 0)` (uniform
        where every entry is :math:`\le 0`), and a value inside it: the level or category itself, a level drawn
        uniformly among those an integer cell merges, a number uniform within a bin, the imputation value for a
        missing cell. Columns are independent. Given privatised proportions this is post-processing: the
        candidate rows a re-fit may use where uniform draws from the domain would hardly ever be plausible rows
        (e.g. a table whose many columns each declare a missing level: a uniform draw is missing in half of them).

        Parameters
        ----------
        histograms : sequence of arrays
            Per column, its cell proportions (:meth:`histograms`; noisy values are clipped at 0).
        n : int
            Number of rows.
        rng : numpy.random.Generator
            Public randomness.

        Returns
        -------
        ndarray (n, D)
            Rows in the schema's embedded domain.

        Examples
        --------
        >>> import numpy as np
        >>> from dpkme.schema import ColumnSpec, TableSchema
        >>> schema = TableSchema([ColumnSpec("x", "continuous", lower=0, upper=1, missing="category"),
        ...                       ColumnSpec("c", "categorical", categories=["a", "b"])])
        >>> mf = MarginalFeatures(schema, n_bins=4)
        >>> Z = mf.sample([np.array([0.5, 0.0, 0.0, 0.5, 0.0]), np.array([0.0, 1.0])], 1000, np.random.default_rng(0))
        >>> codes = mf.codes(Z)
        >>> sorted(set(codes[:, 0].tolist())), sorted(set(codes[:, 1].tolist())), bool(schema.domain.contains(Z).all())
        ([0, 3], [1], True)
        """
        n = check_positive_int(n, name="n")
        if len(histograms) != self.n_columns:
            raise ValueError(f"histograms must give {self.n_columns} columns' proportions, got {len(histograms)}.")
        domain = self.schema.domain
        Z = np.zeros((n, self.n_features_in_))
        for c, (rule, size) in enumerate(zip(self._rules, self._n_cells)):
            p = np.maximum(np.asarray(histograms[c], dtype=np.float64), 0.0)
            if p.shape != (size,):
                raise ValueError(f"column {c}: {size} cell proportions expected, got shape {p.shape}.")
            p = p / p.sum() if p.sum() > 0 else np.full(size, 1.0 / size)
            cell = rng.choice(size, size=n, p=p)
            kind = rule[0]
            if kind == "group":
                sl = rule[1]
                a = next(scale for g, scale in domain.onehot_groups if g == sl)
                Z[np.arange(n), sl.start + cell] = a
                continue
            inner = rule
            if kind == "missing":
                group, inner = rule[1], rule[2]
                a = next(scale for g, scale in domain.onehot_groups if g == group)
                missing = cell == size - 1
                Z[:, group.start] = np.where(missing, 0.0, a)
                Z[:, group.start + 1] = np.where(missing, a, 0.0)
                cell = np.minimum(cell, size - 2)
            ikind, j, arg = inner
            if ikind == "values":
                Z[:, j] = arg[cell]
            elif ikind == "integer":
                step, n_levels, n_cells = arg
                lo = np.ceil(cell * n_levels / n_cells)
                hi = np.ceil((cell + 1) * n_levels / n_cells)              # the levels k with floor(k n / L) = cell
                Z[:, j] = (lo + np.floor(rng.random(n) * np.maximum(hi - lo, 1.0))) * step
            else:
                width = arg
                Z[:, j] = (cell + rng.random(n)) * (width / self.n_bins)
        return np.asarray(domain.project(Z), dtype=np.float64)

    def kernel(self, A, B=None) -> np.ndarray:
        r""":math:`k_\psi(a, b) = \sum_t u_t\,[a, b \text{ share term } t\text{'s cell}]`."""
        ia = self._term_index(A)
        ib = ia if B is None else self._term_index(B)
        u = np.array([t[1] for t in self._terms])
        return ((ia[:, None, :] == ib[None, :, :]) * u).sum(axis=2)

    def to_dict(self) -> dict:
        """Public description (recorded in a release's params)."""
        return {"n_bins": self.n_bins, "cells": self.n_components,
                "columns": {k: s.stop - s.start for k, s in self.column_slices.items()},
                "pairs": [list(p) for p in self.pairs], "pair_bins": self.pair_bins, "pair_weight": self.pair_weight,
                "max_cells": self.max_cells}


def _check_share(share) -> float:
    h = check_positive_float(share, name="marginal_share")
    if not 0.0 < h < 1.0:
        raise ValueError(f"marginal_share must lie strictly between 0 and 1, got {share!r}.")
    return h


class JointFeatures:
    r"""The stacked map :math:`\chi = [\sqrt{1-h}\,\phi;\ \sqrt h\,\psi]` of one Gaussian mechanism (module docstring).

    Parameters
    ----------
    features : RandomFourierFeatures
        Fitted unit-norm random features :math:`\phi` of the release's kernel.
    marginals : MarginalFeatures
        The marginal cells :math:`\psi` of the declared schema (same embedding).
    share : float
        :math:`h \in (0, 1)`, public.

    Attributes
    ----------
    norm_bound : float
        :math:`\sqrt{(1-h)a + h} \le 1`, with :math:`a` the kernel's amplitude.
    """

    def __init__(self, features, marginals: MarginalFeatures, *, share: float):
        from .random_features import RandomFourierFeatures

        if not isinstance(features, RandomFourierFeatures):
            raise ValueError(f"features must be dpkme RandomFourierFeatures, got {type(features).__name__}.")
        if not isinstance(marginals, MarginalFeatures):
            raise ValueError(f"marginals must be a MarginalFeatures, got {type(marginals).__name__}.")
        features._check_fitted()
        if features.n_features_in_ != marginals.n_features_in_:
            raise ValueError(f"the random features take {features.n_features_in_} coordinates but the marginal cells "
                             f"{marginals.n_features_in_}; build both for the same schema.")
        self.features = features
        self.marginals = marginals
        self.share = _check_share(share)
        self.kernel = features.kernel
        self.n_features_in_ = features.n_features_in_
        self.n_kernel = features.n_components
        self.n_components = self.n_kernel + marginals.n_components
        # features.norm_bound already carries a float margin; the marginal block's norm is 1 up to rounding
        self.norm_bound = math.sqrt((1.0 - self.share) * features.norm_bound ** 2 + self.share) * (1.0 + 1e-12)

    def _check_fitted(self) -> None:
        self.features._check_fitted()

    def mean_embedding(self, X) -> np.ndarray:
        r""":math:`\frac1N\sum_i\chi(x_i)` (both blocks, float64)."""
        return np.concatenate([math.sqrt(1.0 - self.share) * np.asarray(self.features.mean_embedding(X), np.float64),
                               math.sqrt(self.share) * self.marginals.mean_embedding(X)])

    def split(self, vector, sigma: float | None = None):
        r"""The kernel block :math:`/\sqrt{1-h}` and the marginal block :math:`/\sqrt h` of a joint vector.

        With ``sigma`` (the joint vector's noise per coordinate) also returns the blocks' noise levels
        :math:`\sigma/\sqrt{1-h}` and :math:`\sigma/\sqrt h`.
        """
        v = np.asarray(vector, dtype=np.float64)
        if v.shape != (self.n_components,):
            raise ValueError(f"vector must have shape ({self.n_components},), got {v.shape}.")
        a, b = math.sqrt(1.0 - self.share), math.sqrt(self.share)
        parts = (v[:self.n_kernel] / a, v[self.n_kernel:] / b)
        if sigma is None:
            return parts
        return (*parts, float(sigma) / a, float(sigma) / b)


class JointMap:
    r"""The public map :math:`\chi` on candidate rows, with the interface a weight re-fit needs.

    Parameters
    ----------
    fmap : FourierMap
        The random-feature map of the kernel block (:class:`dpkme.reduced_set.FourierMap`).
    marginals : MarginalFeatures
    share : float
        :math:`h`.
    """

    def __init__(self, fmap, marginals: MarginalFeatures, *, share: float):
        self.fmap = fmap
        self.marginals = marginals
        self.share = _check_share(share)
        self.dim = fmap.dim
        self.n_kernel = fmap.n_components
        self.n_components = fmap.n_components + marginals.n_components
        self.amplitude = (1.0 - self.share) * fmap.amplitude + self.share
        self.dtype = fmap.dtype
        self._a, self._b = math.sqrt(1.0 - self.share), math.sqrt(self.share)

    @property
    def lengthscale(self) -> float:
        return self.fmap.lengthscale

    def features(self, Z, *, dtype=np.float64) -> np.ndarray:
        """:math:`\\chi(Z)`, shape ``(M, J + H)``."""
        K = self.fmap.features(Z, dtype=dtype)
        K *= self._a
        H = self.marginals.features(Z, dtype=dtype)
        H *= self._b
        return np.hstack([K, H])

    def residual(self, Z, w, target) -> np.ndarray:
        """:math:`\\chi(Z)^\\top w - t` in float64."""
        t = np.asarray(target, dtype=np.float64)
        w = np.asarray(w, dtype=np.float64)
        rk = self.fmap.residual(Z, w, t[:self.n_kernel] / self._a) * self._a
        rh = self._b * self.marginals.mean_embedding(Z, weights=w) - t[self.n_kernel:]
        return np.concatenate([rk, rh])
