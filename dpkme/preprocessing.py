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
"""

from __future__ import annotations

from dataclasses import dataclass
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

    Parameters
    ----------
    center : float or array-like (D,)
    scale : float or array-like (D,), entries > 0
    source : str
        Free text saying where the constants come from (kept for the record).

    Examples
    --------
    >>> s = DeclaredScaling.from_box(lower=[0, 0], upper=[100, 10], source="instrument ranges")
    >>> s.apply([[50.0, 10.0]])
    array([[0., 1.]])
    """

    center: np.ndarray
    scale: np.ndarray
    source: str = "declared by the user"

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

    @classmethod
    def from_box(cls, *, lower, upper, source: str = "declared box") -> "DeclaredScaling":
        """Scaling that maps the declared box ``[lower, upper]`` onto ``[-1, 1]^D`` (bounds within ±1e100)."""
        lo, hi = check_box(lower, upper, broadcast=True, axis="column")
        wild = (np.abs(lo) > MAX_ABS_VALUE) | (np.abs(hi) > MAX_ABS_VALUE)
        if wild.any():
            j = int(np.argmax(wild))
            raise ValueError(
                f"the box's bounds must lie within ±{MAX_ABS_VALUE:g}; column {j} has lower={float(lo[j]):g}, "
                f"upper={float(hi[j]):g}. Declare the range of values that are really possible."
            )
        return cls(center=(lo + hi) / 2.0, scale=(hi - lo) / 2.0, source=source)

    @classmethod
    def from_public_data(cls, X_public, *, source: str = "public reference sample") -> "DeclaredScaling":
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

    def to_dict(self) -> dict[str, Any]:
        """JSON-serialisable form (for a release's record)."""
        return {"center": self.center.tolist(), "scale": self.scale.tolist(), "source": self.source}

    @classmethod
    def from_dict(cls, spec: dict) -> "DeclaredScaling":
        try:
            return cls(center=spec["center"], scale=spec["scale"], source=spec.get("source", "declared by the user"))
        except (KeyError, TypeError):
            raise ValueError(f"scaling spec must be a dict with 'center' and 'scale', got {_short(spec)}.") from None


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
