"""The embedded domain of a declared schema (:class:`EmbeddedDomain`): what a solver may propose."""

from __future__ import annotations

from dataclasses import dataclass, field
from functools import cached_property

import numpy as np

from .._validation import check_array, check_positive_int, check_random_state
from ..kernels.marginal import _nearest_level
from .columns import ColumnSpec

__all__ = ["EmbeddedDomain"]


# --------------------------------------------------------------------------- layout of the embedding
@dataclass(frozen=True)
class _Layout:
    spec: ColumnSpec
    start: int
    stop: int
    numeric: int | None            # index of the numeric coordinate
    group: slice | None            # one-hot block (levels of a categorical; present/missing of a numeric)
    lo: float = 0.0
    hi: float = 1.0
    lengthscale: float | None = None   # fraction of the range
    scale: float = 1.0             # a = sqrt(-ln kappa) of the one-hot block

    @property
    def width(self) -> float:
        """Embedded width of the numeric coordinate: 1 / lengthscale."""
        return 1.0 / self.lengthscale if self.lengthscale else 0.0


# --------------------------------------------------------------------------- EmbeddedDomain
@dataclass(frozen=True, eq=False)
class EmbeddedDomain:
    r"""The set of embedded rows a schema allows, with the operations a solver needs.

    Built by :attr:`TableSchema.domain`; all values are in embedded coordinates (public: they follow
    from the schema alone). The domain is the image of the declared domain under the embedding: numeric
    coordinates in :math:`[0, 1/\ell_j]` (integers on their levels :math:`k/((hi-lo)\ell_j)`), every one-hot
    block at one of its vertices :math:`a e_u`, and a numeric coordinate whose present/missing block says
    "missing" at its imputation value.

    Parameters
    ----------
    lower, upper : ndarray (D,)
        Per-coordinate bounds (a one-hot coordinate lies in :math:`[0, a]`).
    fixed : ndarray (D,) of bool
        Coordinates a continuous solver must not move: integer coordinates and one-hot coordinates.
    blocks : dict
        Column name -> slice of its coordinates (numeric coordinate first, then its present/missing
        block; or the one-hot block of a categorical column).
    integer_levels : dict
        Coordinate index -> ``(step, n_levels)`` of each integer column without declared ``values``.
    value_levels : dict
        Coordinate index -> sorted array of the embedded levels of each column with declared ``values``
        (fixed coordinates: sampled among, and projected onto, the levels).
    onehot_groups : tuple
        ``(slice, a)`` of every one-hot block (categorical levels and present/missing blocks).
    missing_links : tuple
        ``(missing_coordinate, numeric_coordinate, imputed_value)`` of every numeric column with
        ``missing="category"``: where the block's "missing" vertex is chosen, the numeric coordinate
        holds the embedded imputation value.

    Examples
    --------
    >>> import numpy as np
    >>> from dpkme.schema import ColumnSpec, TableSchema
    >>> schema = TableSchema([ColumnSpec("x", "continuous", lower=0, upper=10, lengthscale=0.5),
    ...                       ColumnSpec("c", "categorical", categories=["a", "b"], similarity=0.5)])
    >>> dom = schema.domain
    >>> dom.lower.tolist(), dom.upper.tolist(), dom.fixed.tolist()
    ([0.0, 0.0, 0.0], [2.0, 0.83255..., 0.83255...], [False, True, True])
    >>> Z = dom.sample(5, np.random.default_rng(0))
    >>> bool(dom.contains(Z).all())
    True
    >>> lo, hi = dom.bounds_for(Z)
    >>> bool((lo[:, 1:] == hi[:, 1:]).all() and (lo[:, 0] < hi[:, 0]).all())
    True
    """

    lower: np.ndarray
    upper: np.ndarray
    fixed: np.ndarray
    blocks: dict
    integer_levels: dict = field(default_factory=dict)
    value_levels: dict = field(default_factory=dict)
    onehot_groups: tuple = ()
    missing_links: tuple = ()

    def __post_init__(self):
        lo = np.asarray(self.lower, dtype=np.float64)
        hi = np.asarray(self.upper, dtype=np.float64)
        fx = np.asarray(self.fixed, dtype=bool)
        if lo.ndim != 1 or lo.shape != hi.shape or lo.shape != fx.shape:
            raise ValueError("lower, upper and fixed must be 1-D arrays of one length.")
        for name, arr in (("lower", lo), ("upper", hi), ("fixed", fx)):
            arr = arr.copy()
            arr.setflags(write=False)
            object.__setattr__(self, name, arr)

    @property
    def dim(self) -> int:
        """Number :math:`D` of embedded coordinates."""
        return int(self.lower.shape[0])

    @cached_property
    def _continuous(self) -> np.ndarray:
        return np.flatnonzero(~self.fixed)

    def _check_Z(self, Z, name: str = "Z") -> np.ndarray:
        return check_array(Z, name=name, n_features=self.dim)

    def sample(self, n, rng) -> np.ndarray:
        """``n`` points drawn uniformly from the declared domain, embedded.

        Continuous and datetime coordinates are uniform in their box, integers uniform over their
        levels, categorical blocks uniform over their levels (the missing level included, when
        declared); a numeric column drawn as "missing" sits at its imputation value.

        Parameters
        ----------
        n : int
            Number of points (>= 1).
        rng : numpy.random.Generator or int
            Public randomness (a generator, or a seed for one).

        Returns
        -------
        ndarray (n, D)
        """
        n = check_positive_int(n, name="n")
        gen = rng if isinstance(rng, np.random.Generator) else check_random_state(rng)[0]
        Z = np.zeros((n, self.dim))
        cont = self._continuous
        if cont.size:
            Z[:, cont] = gen.uniform(self.lower[cont], self.upper[cont], size=(n, cont.size))
        for j, (step, n_levels) in self.integer_levels.items():
            Z[:, j] = gen.integers(0, n_levels, size=n) * step
        for j, lv in self.value_levels.items():
            Z[:, j] = lv[gen.integers(0, lv.size, size=n)]
        rows = np.arange(n)
        for sl, a in self.onehot_groups:
            width = sl.stop - sl.start
            Z[rows, sl.start + gen.integers(0, width, size=n)] = a
        self._apply_links(Z)
        return Z

    def _apply_links(self, Z: np.ndarray) -> None:
        for miss, num, value in self.missing_links:
            Z[Z[:, miss] > Z[:, miss - 1], num] = value

    def project(self, Z) -> np.ndarray:
        """The nearest point of the domain, coordinate block by coordinate block.

        Continuous coordinates are clipped to their bounds, integer coordinates rounded to the nearest
        level, coordinates with declared levels moved to the nearest one (ties: the lower), every one-hot block replaced by its nearest vertex :math:`a e_u` (:math:`u` = the largest
        coordinate of the block, since :math:`\\|z - a e_u\\|^2 = \\|z\\|^2 - 2a z_u + a^2`), and a
        numeric column whose block says "missing" is set to its imputation value.

        Parameters
        ----------
        Z : array (M, D)
            Embedded points.

        Returns
        -------
        ndarray (M, D)
            A new array in the domain.
        """
        P = self._check_Z(Z).copy()
        cont = self._continuous
        P[:, cont] = np.clip(P[:, cont], self.lower[cont], self.upper[cont])
        for j, (step, n_levels) in self.integer_levels.items():
            P[:, j] = np.clip(np.rint(P[:, j] / step), 0, n_levels - 1) * step
        for j, lv in self.value_levels.items():
            P[:, j] = lv[_nearest_level(lv, P[:, j])]
        rows = np.arange(P.shape[0])
        for sl, a in self.onehot_groups:
            k = np.argmax(P[:, sl], axis=1)
            P[:, sl] = 0.0
            P[rows, sl.start + k] = a
        self._apply_links(P)
        return P

    def contains(self, Z, *, atol: float = 1e-9) -> np.ndarray:
        """Which points lie in the domain (up to ``atol`` per coordinate).

        Parameters
        ----------
        Z : array (M, D)
            Embedded points.
        atol : float, default=1e-9
            Tolerance of every comparison.

        Returns
        -------
        ndarray (M,) of bool
        """
        Z = self._check_Z(Z)
        ok = np.all((Z >= self.lower - atol) & (Z <= self.upper + atol), axis=1)
        for j, (step, _) in self.integer_levels.items():
            ok &= np.abs(Z[:, j] - np.rint(Z[:, j] / step) * step) <= atol
        for j, lv in self.value_levels.items():
            ok &= np.abs(Z[:, j] - lv[_nearest_level(lv, Z[:, j])]) <= atol
        for sl, a in self.onehot_groups:
            B = Z[:, sl]
            at_a = np.abs(B - a) <= atol
            at_0 = np.abs(B) <= atol
            ok &= (at_a.sum(axis=1) == 1) & ((at_a | at_0).all(axis=1))
        for miss, num, value in self.missing_links:
            is_missing = Z[:, miss] > Z[:, miss - 1]
            ok &= ~is_missing | (np.abs(Z[:, num] - value) <= atol)
        return ok

    def bounds_for(self, Z) -> tuple[np.ndarray, np.ndarray]:
        """Per-point box constraints for a continuous solver (e.g. L-BFGS-B's ``bounds``).

        Free continuous coordinates get the domain's box; fixed coordinates (integers, declared levels, one-hot blocks)
        get ``lower = upper = `` their current value, so the solver never moves them; so does the
        numeric coordinate of a column whose present/missing block says "missing". Project ``Z`` onto
        the domain first (:meth:`project`).

        Parameters
        ----------
        Z : array (M, D)
            Current (projected) points.

        Returns
        -------
        lo, hi : ndarray (M, D)
        """
        Z = self._check_Z(Z)
        M = Z.shape[0]
        lo = np.broadcast_to(self.lower, (M, self.dim)).copy()
        hi = np.broadcast_to(self.upper, (M, self.dim)).copy()
        lo[:, self.fixed] = Z[:, self.fixed]
        hi[:, self.fixed] = Z[:, self.fixed]
        for miss, num, _ in self.missing_links:
            r = Z[:, miss] > Z[:, miss - 1]
            lo[r, num] = Z[r, num]
            hi[r, num] = Z[r, num]
        return lo, hi
