r"""*Public* preprocessing of data matrices: declared scaling, clipping to a declared box, public/private split.

A differentially private release is only private if every data-dependent
choice is private too. Centring/scaling constants and the bounding box used
for clipping must therefore be *declared* by the data owner or taken from
public knowledge (a data dictionary, physical limits, a public reference
sample or the publishable subset) -- **never computed silently from the
private data**. :class:`DeclaredScaling`, :func:`apply_declared_scaling` and
:func:`clip_to_box` only apply constants they are given;
:func:`public_private_split` creates the "publishable subset" scenario of the
paper (Appendix B, scenario 2) by a seeded random split.
:func:`suggest_scaling` proposes a per-column :class:`DeclaredScaling` from public
information only (declared bounds, else the publishable subset), and
:func:`scale_warning` says when columns in their own units differ in scale by
orders of magnitude (one kernel lengthscale and one spread of :math:`q` cannot
then suit every column).
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from ._validation import (
    MAX_ABS_VALUE,
    _short,
    check_array,
    check_box,
    check_positive_float,
    check_random_state,
    check_vector,
)

__all__ = [
    "DeclaredScaling",
    "ScalingSuggestion",
    "suggest_scaling",
    "scale_warning",
    "SCALE_RATIO_WARNING",
    "apply_declared_scaling",
    "clip_to_box",
    "public_private_split",
    "SplitIndices",
]


@dataclass(frozen=True, eq=False)
class DeclaredScaling:
    r"""An affine standardisation :math:`x \mapsto (x - c) / s` with *declared* constants.

    The centre ``c`` and scale ``s`` must come from public information (a data
    dictionary, physical or legal ranges, a public reference sample, the
    publishable subset) -- never from the private data, whose mean and
    standard deviation are themselves private statistics. Applying a declared
    affine map to every record is a per-record transformation and costs no
    privacy; the kernel lengthscale is then interpreted in scaled units.

    Per column, the constants may come from different public sources (``sources``), and declared
    bounds :math:`[l_j, u_j]` (``lower``/``upper``, original units) may be kept with them: their image
    :math:`[(l_j - c_j)/s_j, (u_j - c_j)/s_j]` (``[-1, 1]`` for :meth:`from_box`) is the declared domain
    in which synthetic points are drawn and kept (:meth:`scaled_box`, :meth:`box_domain`).

    Parameters
    ----------
    center : float or array-like (D,)
        Declared centre :math:`c` (public).
    scale : float or array-like (D,), entries > 0
        Declared scale :math:`s` (public).
    source : str
        Free text saying where the constants come from (kept for the record).
    columns : sequence of str, optional
        The column names, one per entry of ``center``/``scale``.
    sources : sequence of str, optional
        Where each column's constants come from (one text per column), e.g. ``"declared bounds"`` or
        ``"publishable subset (public)"``.
    lower, upper : array-like (D,), optional
        Declared bounds of every column in original units (both or neither; ``lower < upper``).
    data_dependent : sequence of str, default=()
        Columns whose constants were read from the **private** rows (:func:`suggest_scaling` with
        ``private_rows``): a release scaled with them is NOT differentially private.

    Examples
    --------
    >>> s = DeclaredScaling.from_box(lower=[0, 0], upper=[100, 10], source="instrument ranges")
    >>> s.apply([[50.0, 10.0]])
    array([[0., 1.]])
    >>> s.scaled_box()
    (array([-1., -1.]), array([1., 1.]))
    >>> DeclaredScaling.from_json(s.to_json()).inverse([[0.0, 1.0]])
    array([[50., 10.]])
    """

    center: np.ndarray
    scale: np.ndarray
    source: str = "declared by the user"
    columns: tuple | None = None
    sources: tuple | None = None
    lower: np.ndarray | None = None
    upper: np.ndarray | None = None
    data_dependent: tuple = field(default=())

    def __post_init__(self):
        c = check_vector(self.center, name="center")
        s = check_vector(self.scale, name="scale")
        if np.any(s <= 0):
            bad = int(np.argmax(s <= 0))
            raise ValueError(f"scale must be > 0 in every entry, got {float(s[bad])} at index {bad}.")
        if c.shape[0] != s.shape[0] and 1 not in (c.shape[0], s.shape[0]):
            raise ValueError(f"center has {c.shape[0]} entries but scale has {s.shape[0]}; they must match.")
        object.__setattr__(self, "center", c)
        object.__setattr__(self, "scale", s)
        object.__setattr__(self, "source", str(self.source))
        d = max(c.shape[0], s.shape[0])
        for name in ("columns", "sources"):
            val = getattr(self, name)
            if val is None:
                continue
            if isinstance(val, str) or not hasattr(val, "__len__"):
                raise ValueError(f"{name} must be a sequence of {d} strings, one per column, got {_short(val)}.")
            if len(val) != d:
                raise ValueError(f"{name} has {len(val)} entries but the scaling has {d} column(s); give one per "
                                 "column.")
            object.__setattr__(self, name, tuple(str(v) for v in val))
        if (self.lower is None) != (self.upper is None):
            raise ValueError("give both lower and upper bounds, or neither.")
        if self.lower is not None:
            lo, hi = check_box(self.lower, self.upper, broadcast=True, dim=d, axis="column")
            object.__setattr__(self, "lower", lo)
            object.__setattr__(self, "upper", hi)
        dep = self.data_dependent
        if isinstance(dep, str):
            dep = (dep,)
        object.__setattr__(self, "data_dependent", tuple(str(v) for v in dep))

    @property
    def dim(self) -> int:
        """Number of columns :math:`D` (1 for scalar constants)."""
        return int(max(self.center.shape[0], self.scale.shape[0]))

    @classmethod
    def from_box(cls, *, lower, upper, source: str = "declared box", columns=None) -> DeclaredScaling:
        """Scaling that maps the declared box ``[lower, upper]`` onto ``[-1, 1]^D`` (bounds within ±1e100).

        The bounds are kept (:attr:`lower`, :attr:`upper`); ``columns`` optionally names the columns.
        """
        lo, hi = check_box(lower, upper, broadcast=True, axis="column")
        wild = (np.abs(lo) > MAX_ABS_VALUE) | (np.abs(hi) > MAX_ABS_VALUE)
        if wild.any():
            j = int(np.argmax(wild))
            raise ValueError(
                f"the box's bounds must lie within ±{MAX_ABS_VALUE:g}; column {j} has lower={float(lo[j]):g}, "
                f"upper={float(hi[j]):g}. Declare the range of values that are really possible."
            )
        return cls(center=(lo + hi) / 2.0, scale=(hi - lo) / 2.0, source=source, columns=columns,
                   lower=lo, upper=hi)

    @classmethod
    def from_public_data(cls, X_public, *, source: str = "public reference sample") -> DeclaredScaling:
        """Mean and standard deviation of a **public** sample (e.g. the publishable subset).

        Only pass data that are public (already released, or the publishable
        subset from :func:`public_private_split`). Passing the private data here
        leaks their mean and standard deviation through every release.
        Constant columns get scale 1.
        """
        X = check_array(X_public, name="X_public", min_rows=2)
        sd = X.std(axis=0, ddof=1)
        sd = np.where(sd > 0, sd, 1.0)
        return cls(center=X.mean(axis=0), scale=sd, source=source)

    def _check_dim(self, X: np.ndarray) -> None:
        d = X.shape[1]
        for name, vec in (("center", self.center), ("scale", self.scale)):
            if vec.shape[0] not in (1, d):
                raise ValueError(
                    f"the scaling's {name} has {vec.shape[0]} entries but the data have {d} column(s)."
                )

    def apply(self, X) -> np.ndarray:
        """``(X - center) / scale`` as a new float64 array; values beyond ±1e100 after scaling are refused."""
        X = check_array(X, name="X")
        self._check_dim(X)
        with np.errstate(over="ignore"):
            Z = (X - self.center) / self.scale
        wild = ~(np.abs(Z) <= MAX_ABS_VALUE)
        if wild.any():
            j = int(np.nonzero(wild.any(axis=0))[0][0])
            s = float(self.scale[j if self.scale.shape[0] > 1 else 0])
            raise ValueError(
                f"the scaling maps column {j} beyond ±{MAX_ABS_VALUE:g} (its scale {s:g} is far too small for "
                "these values), which would overflow the kernel computations; declare a wider box (or clip to "
                "it) or a larger scale."
            )
        return Z

    def inverse(self, Z) -> np.ndarray:
        """``Z * scale + center``: map (e.g. released synthetic) points back to original units."""
        Z = check_array(Z, name="Z")
        self._check_dim(Z)
        return Z * self.scale + self.center

    @property
    def is_private(self) -> bool:
        """``False`` when some column's constants were read from the private rows (:attr:`data_dependent`)."""
        return not self.data_dependent

    def scaled_box(self) -> tuple[np.ndarray, np.ndarray] | None:
        """The declared bounds in scaled units, ``((l - c)/s, (u - c)/s)``, or ``None`` without bounds."""
        if self.lower is None:
            return None
        d = self.dim
        lo = np.broadcast_to((self.lower - self.center) / self.scale, (d,)).astype(float)
        hi = np.broadcast_to((self.upper - self.center) / self.scale, (d,)).astype(float)
        return lo, hi

    def box_domain(self):
        """The declared box in scaled units as a :class:`dpkme.schema.EmbeddedDomain` (``None`` without bounds).

        Public (it follows from the declaration alone): Algorithm 1 draws its points uniformly from it
        (``point_domain=``) and Algorithm 2's solvers keep every point inside it (``domain=``).
        """
        box = self.scaled_box()
        if box is None:
            return None
        from .schema import EmbeddedDomain  # local: the schema module imports pandas

        names = self.columns or tuple(f"x{j + 1}" for j in range(self.dim))
        return EmbeddedDomain(lower=box[0], upper=box[1], fixed=np.zeros(self.dim, dtype=bool),
                              blocks={str(n): slice(j, j + 1) for j, n in enumerate(names)})

    def to_dict(self) -> dict[str, Any]:
        """JSON-serialisable form (for a release's record); the optional fields only when set."""
        out: dict[str, Any] = {"center": self.center.tolist(), "scale": self.scale.tolist(), "source": self.source}
        if self.columns is not None:
            out["columns"] = list(self.columns)
        if self.sources is not None:
            out["sources"] = list(self.sources)
        if self.lower is not None:
            out["lower"], out["upper"] = self.lower.tolist(), self.upper.tolist()
        if self.data_dependent:
            out["data_dependent"] = list(self.data_dependent)
        return out

    @classmethod
    def from_dict(cls, spec: dict) -> DeclaredScaling:
        """The scaling of :meth:`to_dict`'s form (``center`` and ``scale`` required)."""
        try:
            return cls(center=spec["center"], scale=spec["scale"], source=spec.get("source", "declared by the user"),
                       columns=spec.get("columns"), sources=spec.get("sources"), lower=spec.get("lower"),
                       upper=spec.get("upper"), data_dependent=spec.get("data_dependent", ()))
        except (KeyError, TypeError, AttributeError):
            raise ValueError(f"scaling spec must be a dict with 'center' and 'scale', got {_short(spec)}.") from None

    def to_json(self) -> str:
        """:meth:`to_dict` as JSON text."""
        return json.dumps(self.to_dict())

    @classmethod
    def from_json(cls, text: str) -> DeclaredScaling:
        """The scaling of :meth:`to_json`'s text (a ValueError names text that is not such JSON)."""
        try:
            spec = json.loads(text)
        except (TypeError, json.JSONDecodeError) as exc:
            raise ValueError(f"scaling JSON could not be read ({exc}); got {_short(text)}.") from None
        return cls.from_dict(spec)


def apply_declared_scaling(X, center, scale) -> np.ndarray:
    r"""``(X - center) / scale`` with declared (public) ``center`` and ``scale``.

    See :class:`DeclaredScaling`; this is ``DeclaredScaling(center, scale).apply(X)``.
    ``center``/``scale`` may be scalars or one value per column; ``scale > 0``.

    Parameters
    ----------
    X : array-like (N, D)
        Data in original units.
    center : float or array-like (D,)
        Declared centre :math:`c` (public, never computed from the private data).
    scale : float or array-like (D,), entries > 0
        Declared scale :math:`s` (public); the kernel lengthscale is then in
        units of :math:`s`.

    Returns
    -------
    ndarray (N, D), float64
        :math:`(x - c)/s` for every row (a new array).

    Raises
    ------
    ValueError
        On an invalid ``X``, a non-positive scale, lengths that do not match the
        columns, or scaled values beyond :math:`\pm 10^{100}`.

    Examples
    --------
    >>> apply_declared_scaling([[10.0, 0.0], [30.0, 4.0]], center=[20.0, 0.0], scale=[10.0, 2.0])
    array([[-1.,  0.],
           [ 1.,  2.]])
    """
    return DeclaredScaling(center=center, scale=scale).apply(X)


#: Ratio of the largest to the smallest column scale from which :func:`scale_warning` warns.
SCALE_RATIO_WARNING = 100.0
#: Per-column source texts of :func:`suggest_scaling`.
SOURCE_BOUNDS = "declared bounds"
SOURCE_PUBLIC = "publishable subset (public)"
SOURCE_PRIVATE = "PRIVATE rows (reads the private data: not private)"


@dataclass(frozen=True, eq=False)
class ScalingSuggestion:
    r"""What :func:`suggest_scaling` found: a per-column scaling, or which columns must still be declared.

    Parameters
    ----------
    columns : tuple of str
        The column names.
    center, scale : ndarray (D,)
        The suggested constants; ``nan`` for a column with nothing to go on (listed in ``missing``).
    sources : tuple of str
        Where each column's constants come from (``""`` for a missing column).
    missing : tuple of str
        Columns with no public information (and no private rows allowed): their centre and scale must
        be declared by the user.
    data_dependent : DataDependence
        Columns whose constants were read from the private rows (only with ``private_rows``); a
        release with them is NOT differentially private.
    lower, upper : ndarray (D,) or None
        Declared bounds where every column has them (else ``None``).

    Examples
    --------
    >>> sug = suggest_scaling(bounds={"a": (0, 10)}, columns=["a", "b"])
    >>> sug.missing, sug.scaling is None
    (('b',), True)
    """

    columns: tuple
    center: np.ndarray
    scale: np.ndarray
    sources: tuple
    missing: tuple
    data_dependent: Any
    lower: np.ndarray | None = None
    upper: np.ndarray | None = None

    @property
    def scaling(self) -> DeclaredScaling | None:
        """The :class:`DeclaredScaling` (``None`` while a column is missing)."""
        if self.missing:
            return None
        kinds = sorted(set(self.sources))
        return DeclaredScaling(center=self.center, scale=self.scale, source="; ".join(kinds), columns=self.columns,
                               sources=self.sources, lower=self.lower, upper=self.upper,
                               data_dependent=tuple(self.data_dependent))

    @property
    def message(self) -> str:
        """One paragraph for the user: where the values come from, and what is still to declare."""
        parts = []
        for src in (SOURCE_BOUNDS, SOURCE_PUBLIC, SOURCE_PRIVATE):
            cols = [c for c, s in zip(self.columns, self.sources) if s == src]
            if cols:
                parts.append(f"{', '.join(cols)}: from the {src}")
        out = ("; ".join(parts) + ".") if parts else ""
        if self.missing:
            out += (f" Nothing public is known about {', '.join(self.missing)}: declare a centre and a scale (or "
                    "lower and upper bounds) for each from what you know about the column — a data dictionary, "
                    "physical limits — or declare a publishable subset.")
        if self.data_dependent:
            out += (f" The values of {', '.join(self.data_dependent)} were read from the PRIVATE rows: a release "
                    "scaled with them is NOT differentially private. Declare them instead.")
        return out.strip()


def suggest_scaling(public_rows=None, *, bounds=None, columns, private_rows=None) -> ScalingSuggestion:
    r"""Suggest a per-column :class:`DeclaredScaling` from **public** information only.

    For every column :math:`j`, in this order:

    1. declared bounds :math:`[l_j, u_j]` (``bounds``): :math:`c_j = (l_j + u_j)/2`, :math:`s_j = (u_j - l_j)/2`,
       so the declared range maps onto :math:`[-1, 1]`;
    2. else the publishable subset (``public_rows``, at least 2 rows): its mean and standard deviation
       (a constant public column gets :math:`s_j = \max(|c_j|, 1)`);
    3. else the private rows, **only** if ``private_rows`` is given: the same statistics, and the column is
       flagged in ``data_dependent`` (a release scaled with them is NOT differentially private);
    4. else nothing: the column is listed in ``missing`` and the user must declare it.

    Nothing here reads private data unless ``private_rows`` is passed.

    Parameters
    ----------
    public_rows : array-like (n, D), optional
        Rows that are public (the publishable subset), in original units; fewer than 2 are ignored.
    bounds : mapping, optional
        Column name -> ``(lower, upper)``, declared from public knowledge (a data dictionary, a schema).
        Columns may be left out; every name must be in ``columns``.
    columns : sequence of str
        The column names, in the order of the rows' columns.
    private_rows : array-like (N, D), optional
        The private rows, used only for columns with nothing public and then flagged: for an owner's
        look, never for a private release.

    Returns
    -------
    ScalingSuggestion
        Per column the constants and their source; ``.scaling`` is the :class:`DeclaredScaling` (``None``
        while a column is missing) and ``.message`` says the same in words.

    Raises
    ------
    ValueError
        If ``columns`` is empty or has repeated names, a bound names an unknown column or has
        ``lower >= upper`` or a non-finite value, or the rows do not have one column per name.

    Examples
    --------
    >>> import numpy as np
    >>> sug = suggest_scaling(np.array([[40.0, 3000.0], [50.0, 5000.0]]), bounds={"mass": (2000, 7000)},
    ...                       columns=["length", "mass"])
    >>> sug.sources
    ('publishable subset (public)', 'declared bounds')
    >>> sug.center.tolist(), sug.scale.round(3).tolist()
    ([45.0, 4500.0], [7.071, 2500.0])
    """
    if isinstance(columns, str) or not hasattr(columns, "__len__"):
        raise ValueError(f"columns must be a sequence of column names, got {_short(columns)}.")
    cols = tuple(str(c) for c in columns)
    if not cols:
        raise ValueError("columns is empty; give the name of every column of the rows.")
    dup = sorted({c for c in cols if cols.count(c) > 1})
    if dup:
        raise ValueError(f"columns has repeated names {dup}; give every column a distinct name.")
    d = len(cols)
    center = np.full(d, np.nan)
    scale = np.full(d, np.nan)
    sources = [""] * d
    lo_all = np.full(d, np.nan)
    hi_all = np.full(d, np.nan)
    if bounds is not None:
        if not hasattr(bounds, "items"):
            raise ValueError(f"bounds must be a mapping column name -> (lower, upper), got {_short(bounds)}.")
        unknown = [k for k in bounds if str(k) not in cols]
        if unknown:
            raise ValueError(f"bounds name column(s) {unknown} that are not among the columns {list(cols)}; "
                             "check the spelling.")
        for name, pair in bounds.items():
            try:
                lo, hi = (float(v) for v in pair)
            except (TypeError, ValueError):
                raise ValueError(f"bounds[{name!r}] must be a pair (lower, upper) of numbers, got {_short(pair)}."
                                 ) from None
            if not (np.isfinite(lo) and np.isfinite(hi) and lo < hi):
                raise ValueError(f"bounds[{name!r}] = ({lo:g}, {hi:g}) must be finite with lower < upper; declare "
                                 "the range of values the column can really take.")
            j = cols.index(str(name))
            center[j], scale[j] = (lo + hi) / 2.0, (hi - lo) / 2.0
            lo_all[j], hi_all[j] = lo, hi
            sources[j] = SOURCE_BOUNDS

    def _fill(rows, name, source):
        if all(sources):
            return                       # every column is declared: the rows are not read at all
        R = check_array(rows, name=name, n_features=d)
        if R.shape[0] < 2:
            return
        for j in range(d):
            if sources[j]:
                continue
            c = float(R[:, j].mean())
            sd = float(R[:, j].std(ddof=1))
            center[j] = c
            scale[j] = sd if sd > 0 else max(abs(c), 1.0)
            sources[j] = source

    if public_rows is not None:
        _fill(public_rows, "public_rows", SOURCE_PUBLIC)
    if private_rows is not None:
        _fill(private_rows, "private_rows", SOURCE_PRIVATE)
    from .schema import DataDependence  # local: the schema module imports pandas

    dependent = DataDependence({c: {"center", "scale"} for c, s in zip(cols, sources) if s == SOURCE_PRIVATE})
    every_bound = bool(np.all(np.isfinite(lo_all)))
    return ScalingSuggestion(columns=cols, center=center, scale=scale, sources=tuple(sources),
                             missing=tuple(c for c, s in zip(cols, sources) if not s), data_dependent=dependent,
                             lower=lo_all if every_bound else None, upper=hi_all if every_bound else None)


def scale_warning(scales, *, columns=None, ratio: float = SCALE_RATIO_WARNING) -> str | None:
    r"""A warning when columns differ in scale by a factor of ``ratio`` (default 100) or more, else ``None``.

    In original units a Gaussian kernel has one lengthscale :math:`\ell` and :math:`q` one spread for every
    column: with scales :math:`s_j` that differ by orders of magnitude, any :math:`\ell` either ignores the
    small-scale columns (:math:`\ell \gg s_j`) or sees no neighbours along the large-scale ones
    (:math:`\ell \ll s_j`), and synthetic points drawn with the large spread land far outside the
    small-scale columns' range. The cure is a per-column :class:`DeclaredScaling`.

    Parameters
    ----------
    scales : array-like (D,)
        A public scale per column (e.g. :attr:`DeclaredScaling.scale`, or half the declared range), > 0.
    columns : sequence of str, optional
        The column names, for the message (default ``x1, x2, ...``).
    ratio : float, default=SCALE_RATIO_WARNING
        The factor :math:`\max_j s_j / \min_j s_j` from which to warn, > 1.

    Returns
    -------
    str or None
        The warning, naming the largest- and the smallest-scale column; ``None`` below ``ratio``.

    Raises
    ------
    ValueError
        If a scale is not finite and > 0, the names do not match the scales, or ``ratio <= 1``.

    Examples
    --------
    >>> scale_warning([20.0, 7.5, 40.0, 2500.0], columns=["bill", "depth", "flipper", "mass"])[:46]
    'Columns differ in scale by a factor of about 3'
    >>> scale_warning([1.0, 50.0]) is None
    True
    """
    s = check_vector(scales, name="scales")
    if not np.all(s > 0):
        j = int(np.argmax(~(s > 0)))
        raise ValueError(f"scales must be > 0 in every entry, got {float(s[j])!r} at index {j}; give each "
                         "column's public scale (e.g. half its declared range).")
    r = check_positive_float(ratio, name="ratio")
    if not r > 1:
        raise ValueError(f"ratio must be > 1, got {ratio!r}.")
    names = [f"x{j + 1}" for j in range(s.shape[0])] if columns is None else [str(c) for c in columns]
    if len(names) != s.shape[0]:
        raise ValueError(f"columns has {len(names)} names for {s.shape[0]} scales; give one name per scale.")
    big, small = int(np.argmax(s)), int(np.argmin(s))
    factor = float(s[big] / s[small])
    if factor < r:
        return None
    return (f"Columns differ in scale by a factor of about {factor:.3g} ({names[big]}: {s[big]:.3g}, "
            f"{names[small]}: {s[small]:.3g}). In these units one kernel lengthscale and one spread of q cannot "
            "suit every column: synthetic points drawn for the widest column land far outside the narrowest one's "
            "range. Declare a scaling per column (from declared bounds or a publishable subset).")


def clip_to_box(X, lower, upper, *, return_count: bool = True):
    """Clip every coordinate to a **declared** box ``[lower, upper]``.

    Clipping to a box fixed in advance is a per-record transformation: it does
    not change the privacy guarantee of a later release, and a bounded domain
    allows the tighter sensitivities of :mod:`dpkme.privacy.sensitivity`. The box must
    be declared by the data owner or taken from public knowledge; a box read off
    the private data (its min/max) would leak those extremes.

    Parameters
    ----------
    X : array-like (N, D)
    lower, upper : float or array-like (D,)
        Box bounds (one value for all columns or one per column), ``lower < upper``.
    return_count : bool, default=True
        Also return the number of clipped values.

    Returns
    -------
    X_clipped : ndarray (N, D), float64 (a new array)
    n_clipped : int
        Number of *values* (entries) that were moved onto the box boundary
        (only if ``return_count``). **Non-private:** this count is a statistic
        of the private data, for the owner's information only; do not publish
        it alongside a release.
    """
    X = check_array(X, name="X")
    lo, hi = check_box(lower, upper, broadcast=True, dim=X.shape[1], axis="column")
    outside = (X < lo) | (X > hi)
    Xc = np.clip(X, lo, hi)
    if return_count:
        return Xc, int(np.count_nonzero(outside))
    return Xc


@dataclass(frozen=True, eq=False)
class SplitIndices:
    """Row indices of a :func:`public_private_split`, with the seed that produced them.

    Parameters
    ----------
    public, private : ndarray of int64
        Sorted row indices into the original array; disjoint, and together all
        rows ``0, ..., N - 1``.
    seed : int or None
        Seed of the split (``None`` only when a Generator was passed); with it
        the split can be reproduced.
    public_fraction : float
        The requested fraction of public rows, in (0, 1); the public part has
        ``round(public_fraction * N)`` rows.

    Examples
    --------
    >>> import numpy as np
    >>> _, _, idx = public_private_split(np.arange(20.0).reshape(10, 2), public_fraction=0.3, random_state=0)
    >>> idx.to_dict()
    {'n_public': 3, 'n_private': 7, 'seed': 0, 'public_fraction': 0.3}
    """

    public: np.ndarray
    private: np.ndarray
    seed: int | None
    public_fraction: float

    def to_dict(self) -> dict[str, Any]:
        return {
            "n_public": int(self.public.size),
            "n_private": int(self.private.size),
            "seed": self.seed,
            "public_fraction": self.public_fraction,
        }


def public_private_split(X, *, public_fraction: float, random_state=None):
    """Split rows at random into a publishable subset and a private remainder.

    This sets up the paper's "publishable subset" scenario (Appendix B, scenario
    2): the public rows may be used freely (e.g. as the synthetic points of
    Algorithm 1, or for :meth:`DeclaredScaling.from_public_data`), and only the
    private rows enter a differentially private release. The split is uniformly
    random without replacement, with ``round(public_fraction * N)`` public rows.

    Parameters
    ----------
    X : array-like (N, D)
    public_fraction : float
        Fraction of rows made public, ``0 < public_fraction < 1``.
    random_state : None, int or numpy.random.Generator
        ``None`` draws a fresh seed, which is recorded in ``indices.seed``.

    Returns
    -------
    public : ndarray (N_pub, D)
    private : ndarray (N - N_pub, D)
    indices : SplitIndices
        Row indices of both parts and the seed.
    """
    X = check_array(X, name="X")
    f = check_positive_float(public_fraction, name="public_fraction")
    if not f < 1:
        raise ValueError(f"public_fraction must satisfy 0 < public_fraction < 1, got {public_fraction!r}.")
    N = X.shape[0]
    n_pub = int(round(f * N))
    if n_pub < 1 or n_pub > N - 1:
        raise ValueError(
            f"public_fraction={f} of N={N} rows gives {n_pub} public and {N - n_pub} private rows; "
            f"both parts must be non-empty: choose a fraction between about 1/N = {1 / N:.3g} "
            f"and 1 - 1/N = {1 - 1 / N:.6g}, or use more rows."
        )
    rng, seed = check_random_state(random_state)
    perm = rng.permutation(N)
    pub = np.sort(perm[:n_pub]).astype(np.int64)
    priv = np.sort(perm[n_pub:]).astype(np.int64)
    return X[pub], X[priv], SplitIndices(public=pub, private=priv, seed=seed, public_fraction=f)
