r"""Kernel bandwidths without leaking: from public data, or chosen privately with a charge.

The median heuristic (length scale = median pairwise distance) is the usual
default, but computed on the private rows it is a statistic of them, and
every release that uses it leaks it: a release calibrated to the sensitivity of
a *fixed* kernel is not private when the kernel depends on the data (moving one
row can move the median and hence every released coordinate). Two safe
alternatives:

:func:`public_lengthscale`
    The median heuristic on **public** rows only (a publishable subset, a
    public reference sample, held-out data that is released anyway).

:func:`private_lengthscale`
    A private median heuristic: the exponential mechanism over a **public**
    grid of length scales, charged to the ledger as a pure ε-DP step.

Utility and its sensitivity
---------------------------
Let :math:`P(D)` be a set of row pairs of :math:`D` and
:math:`F_D(\ell) = |\{(i,j)\in P(D) : \|x_i - x_j\|_2 \le \ell\}| / |P(D)|`
the empirical distribution function of pairwise distances. For a target
quantile :math:`q` (0.5: the median heuristic) the utility of a grid value is

.. math:: u(D, \ell) = -\,|F_D(\ell) - q| .

Under **replace-one** (same public :math:`N`, one row replaced) only the pairs
containing the replaced row change:

* all pairs (``pairs="all"``, :math:`|P| = N(N-1)/2`): :math:`N - 1` pairs
  change, so :math:`|F_D(\ell) - F_{D'}(\ell)| \le (N-1)/|P| = 2/N`;
* disjoint pairs (``pairs="disjoint"``, rows paired after a uniformly random
  permutation drawn from the mechanism's own randomness, never from the
  data; :math:`|P| = \lfloor N/2\rfloor`): one pair changes, so
  :math:`|F_D - F_{D'}| \le 1/\lfloor N/2\rfloor`.

By the reverse triangle inequality :math:`|u(D,\ell) - u(D',\ell)| \le
|F_D(\ell) - F_{D'}(\ell)|`, so :math:`\Delta_u = 2/N` resp.
:math:`1/\lfloor N/2\rfloor` for every :math:`\ell` (tested by brute force in
``tests/privacy/test_leaks_and_bandwidth.py``). The exponential mechanism

.. math:: P[\ell_k] \propto \exp\Bigl(\frac{\varepsilon\,u(D,\ell_k)}{2\Delta_u}\Bigr)

is then :math:`\varepsilon`-DP (McSherry & Talwar 2007); the factor 2 is
needed because :math:`u` is not monotone in the data. With the random
pairing, the mechanism is :math:`\varepsilon`-DP for every fixed permutation,
hence also for the mixture. Sampling is exact (Gumbel-max over the grid).

Only replace-one is supported: under add/remove the number of pairs changes
with the data and the pairs of a random permutation shift, so another
analysis would be needed.

The chosen :math:`\ell` is a DP output: using it for later releases is
post-processing, and the ledger composes its charge (:attr:`LengthscaleChoice.charge`)
with theirs.
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

import numpy as np
import numpy.typing as npt

from .._validation import check_array, check_epsilon, check_in, check_positive_float, noise_rng
from .result import charge_record

if TYPE_CHECKING:
    from .accounting import PrivacyCharge

__all__ = [
    "PAIR_MODES",
    "MAX_ALL_PAIRS_ROWS",
    "MAX_ALL_PAIRS_LIMIT",
    "LengthscaleChoice",
    "public_lengthscale",
    "lengthscale_grid",
    "pair_distance_cdf",
    "lengthscale_utility",
    "lengthscale_sensitivity",
    "private_lengthscale",
]

PAIR_MODES = ("auto", "all", "disjoint")
#: ``pairs="auto"`` uses all pairs up to this many rows (2 000 000 distances), disjoint pairs beyond.
MAX_ALL_PAIRS_ROWS = 2000
#: ``pairs="all"`` is refused above this many rows (2e8 distances, tens of seconds).
MAX_ALL_PAIRS_LIMIT = 20000
_ROW_BLOCK = 128
_COL_BLOCK = 1024


def public_lengthscale(public_points: npt.ArrayLike, *, max_rows: int = 2000,
                       random_state: int | np.random.Generator | None = 0) -> float:
    """Median heuristic on **public** rows only: the median pairwise Euclidean distance.

    ``public_points`` must be public (a publishable subset, a public reference
    sample). At most ``max_rows`` rows (a seeded subsample) are used. This is
    :func:`dpkme.kernels.median.public_lengthscale`; it exists here under
    the guards' name so that the only median heuristic a private path can
    reach is one that says *public* in its name. On private rows use
    :func:`private_lengthscale` instead.

    Parameters
    ----------
    public_points : array (n, D)
        Public rows (at least 2), never the private table.
    max_rows : int, default 2000
        Largest number of rows used (>= 2); more are subsampled without
        replacement.
    random_state : None, int or numpy.random.Generator, default 0
        Randomness of the subsample (public data, so a fixed seed is fine).

    Returns
    -------
    float
        The median pairwise Euclidean distance, > 0 (ValueError when it is 0).

    Examples
    --------
    >>> import numpy as np
    >>> from dpkme.privacy.bandwidth import public_lengthscale
    >>> public_lengthscale(np.array([[0.0, 0.0], [3.0, 4.0], [0.0, 1.0]]))  # distances 5, 1 and sqrt(18)
    4.242640687119285
    """
    from ..kernels.median import public_lengthscale as _impl

    return float(_impl(public_points, max_rows=max_rows, random_state=random_state))


def lengthscale_grid(low: float, high: float, num: int = 30) -> npt.NDArray[np.float64]:
    """A log-spaced grid of ``num`` length scales between two **declared** values (public).

    Parameters
    ----------
    low, high : float
        Smallest and largest length scale, ``0 < low < high``; declared from
        public knowledge (units of the data), never read off the private rows.
    num : int, default 30
        Number of grid values, between 2 and 10 000.

    Returns
    -------
    ndarray (num,)
        ``numpy.geomspace(low, high, num)``, increasing.

    Examples
    --------
    >>> from dpkme.privacy.bandwidth import lengthscale_grid
    >>> lengthscale_grid(0.1, 10.0, num=3)
    array([ 0.1,  1. , 10. ])
    """
    lo = check_positive_float(low, name="low")
    hi = check_positive_float(high, name="high")
    if not hi > lo:
        raise ValueError(f"need low < high, got low={low!r}, high={high!r}.")
    if isinstance(num, bool) or not isinstance(num, (int, np.integer)) or not 2 <= num <= 10_000:
        raise ValueError(f"num must be an int between 2 and 10000, got {num!r}.")
    return np.geomspace(lo, hi, int(num))


def _check_grid(grid: npt.ArrayLike) -> npt.NDArray[np.float64]:
    g = check_array(grid, name="grid", ndim=1)
    if np.any(g <= 0):
        raise ValueError(f"every length scale of the grid must be > 0, got {float(g[np.argmax(g <= 0)])}.")
    if g.shape[0] > 10_000:
        raise ValueError(f"the grid has {g.shape[0]} values; at most 10000.")
    if np.unique(g).shape[0] != g.shape[0]:
        raise ValueError("the grid has repeated values; give distinct length scales.")
    return g


def _resolve_pairs(pairs: str, n: int) -> str:
    check_in(pairs, PAIR_MODES, name="pairs")
    if pairs == "auto":
        return "all" if n <= MAX_ALL_PAIRS_ROWS else "disjoint"
    return pairs


def lengthscale_sensitivity(n: int, pairs: str = "all") -> float:
    r"""Replace-one sensitivity :math:`\Delta_u` of the utility.

    :math:`2/N` (all pairs) or :math:`1/\lfloor N/2\rfloor` (disjoint pairs),
    see the module docstring.

    Parameters
    ----------
    n : int
        Public dataset size :math:`N \ge 2`.
    pairs : {"all", "disjoint", "auto"}, default "all"
        The pairs the utility counts; ``"auto"`` is ``"all"`` up to
        :data:`MAX_ALL_PAIRS_ROWS` rows and ``"disjoint"`` beyond.

    Returns
    -------
    float
        :math:`\Delta_u`.

    Examples
    --------
    >>> from dpkme.privacy.bandwidth import lengthscale_sensitivity
    >>> lengthscale_sensitivity(1000), lengthscale_sensitivity(5000, "disjoint")
    (0.002, 0.0004)
    """
    if isinstance(n, bool) or not isinstance(n, (int, np.integer)) or n < 2:
        raise ValueError(f"n must be an int >= 2, got {n!r}.")
    mode = _resolve_pairs(pairs, int(n))
    return 2.0 / n if mode == "all" else 1.0 / (int(n) // 2)


def pair_distance_cdf(X: npt.ArrayLike, grid: npt.ArrayLike, *, pairs: str = "all",
                      rng: np.random.Generator | None = None) -> npt.NDArray[np.float64]:
    r""":math:`F_D(\ell)` for every grid value: the fraction of pairs at distance :math:`\le \ell`.

    **Reads private data**; the result is private (only the mechanism's
    choice is released). ``pairs="disjoint"`` needs ``rng`` for the random pairing.

    Parameters
    ----------
    X : array (N, D)
        Private data (N >= 2).
    grid : array-like (K,)
        Distinct positive length scales (any order).
    pairs : {"all", "disjoint", "auto"}, default "all"
        All :math:`N(N-1)/2` pairs (at most :data:`MAX_ALL_PAIRS_LIMIT` rows),
        or the :math:`\lfloor N/2\rfloor` pairs of a random permutation.
    rng : numpy.random.Generator, optional
        The mechanism's own randomness for the disjoint pairing (required then;
        unused for all pairs).

    Returns
    -------
    ndarray (K,)
        :math:`F_D(\ell_k)`, in the order of ``grid``.

    Examples
    --------
    >>> import numpy as np
    >>> from dpkme.privacy.bandwidth import pair_distance_cdf
    >>> pair_distance_cdf(np.array([[0.0], [1.0], [3.0]]), [0.5, 1.5, 2.5, 3.5])  # distances 1, 2, 3
    array([0.        , 0.33333333, 0.66666667, 1.        ])
    """
    X = check_array(X, name="X", min_rows=2)
    g = _check_grid(grid)
    n = X.shape[0]
    mode = _resolve_pairs(pairs, n)
    order = np.argsort(g)
    gs = g[order]
    counts = np.zeros(gs.shape[0])
    if mode == "disjoint":
        if not isinstance(rng, np.random.Generator):
            raise ValueError("pairs='disjoint' needs rng (a numpy Generator) for the random pairing.")
        perm = rng.permutation(n)
        m = n // 2
        a, b = X[perm[:m]], X[perm[m:2 * m]]
        d = np.sqrt(np.einsum("ij,ij->i", a - b, a - b))
        counts += np.searchsorted(np.sort(d), gs, side="right")
        total = float(m)
    else:
        if n > MAX_ALL_PAIRS_LIMIT:
            raise ValueError(f"pairs='all' with {n:,} rows means {n * (n - 1) // 2:,} distances; at most "
                             f"{MAX_ALL_PAIRS_LIMIT:,} rows -- use pairs='disjoint' (or 'auto').")
        # direct coordinate differences, block by block: each distance is a function of its own pair
        # only (no data-dependent centring), so the sensitivity argument holds for the computed values too
        for s in range(0, n - 1, _ROW_BLOCK):
            e = min(s + _ROW_BLOCK, n - 1)
            rows = np.arange(s, e)
            for c0 in range(s + 1, n, _COL_BLOCK):
                c1 = min(c0 + _COL_BLOCK, n)
                diff = X[s:e, None, :] - X[None, c0:c1, :]
                d = np.sqrt(np.einsum("ijk,ijk->ij", diff, diff))
                mask = np.arange(c0, c1)[None, :] > rows[:, None]
                counts += np.searchsorted(np.sort(d[mask]), gs, side="right")
        total = n * (n - 1) / 2.0
    out = np.empty_like(counts)
    out[order] = counts / total
    return out


def lengthscale_utility(X: npt.ArrayLike, grid: npt.ArrayLike, *, quantile: float = 0.5, pairs: str = "all",
                        rng: np.random.Generator | None = None) -> npt.NDArray[np.float64]:
    r""":math:`u(D, \ell) = -|F_D(\ell) - q|` for every grid value (**private**).

    The utility of the private median heuristic (module docstring); its
    replace-one sensitivity is :func:`lengthscale_sensitivity`.

    Parameters
    ----------
    X : array (N, D)
        Private data (N >= 2).
    grid : array-like (K,)
        Distinct positive length scales.
    quantile : float, default 0.5
        Target quantile :math:`q \in (0, 1)` of the pairwise distances (0.5: median).
    pairs : {"all", "disjoint", "auto"}, default "all"
        See :func:`pair_distance_cdf`.
    rng : numpy.random.Generator, optional
        Needed for ``pairs="disjoint"`` (the random pairing).

    Returns
    -------
    ndarray (K,)
        :math:`u(D, \ell_k) \in [-1, 0]`, in the order of ``grid``.

    Examples
    --------
    >>> import numpy as np
    >>> from dpkme.privacy.bandwidth import lengthscale_utility
    >>> lengthscale_utility(np.array([[0.0], [1.0], [3.0]]), [0.5, 1.5, 2.5, 3.5])
    array([-0.5       , -0.16666667, -0.16666667, -0.5       ])
    """
    q = float(quantile)
    if not 0.0 < q < 1.0:
        raise ValueError(f"quantile must lie in (0, 1), got {quantile!r}.")
    return -np.abs(pair_distance_cdf(X, grid, pairs=pairs, rng=rng) - q)


@dataclass
class LengthscaleChoice:
    r"""A length scale chosen by the exponential mechanism, with its ledger charge.

    Returned by :func:`private_lengthscale`; everything but
    ``private_utilities`` may be published (:meth:`to_dict`).

    Parameters
    ----------
    lengthscale : float
        The chosen grid value (ε-DP; safe to publish and to reuse).
    index : int
        Its position in ``grid``.
    grid : ndarray (K,)
        The public grid.
    epsilon : float
        :math:`\varepsilon` of the choice (pure ε-DP, :math:`\delta = 0`).
    sensitivity : float
        :math:`\Delta_u` of the utility (:func:`lengthscale_sensitivity`).
    charge : PrivacyCharge
        Pure ε-DP charge (``mechanism="exponential"``, replace-one) for the ledger.
    pairs : str
        ``"all"`` or ``"disjoint"`` (``"auto"`` resolved).
    quantile : float
        Target quantile :math:`q` of the pairwise distances.
    seed : int or None
        Seed of the mechanism's randomness (``None`` for OS entropy or a
        caller's Generator; :func:`dpkme._validation.noise_rng`).
    noise_source : {"seeded", "os-entropy", "generator"}
        Provenance of that randomness; only ``"os-entropy"`` is a real release.
    private_utilities : ndarray (K,)
        **Private** (a function of the data): the utility of every grid value,
        for the data owner's display only. Not in :meth:`to_dict` and not in
        the repr.
    """

    lengthscale: float
    index: int
    grid: npt.NDArray[np.float64]
    epsilon: float
    sensitivity: float
    charge: PrivacyCharge
    pairs: str
    quantile: float
    seed: int | None
    noise_source: str
    private_utilities: npt.NDArray[np.float64] = field(repr=False)

    def probabilities(self) -> npt.NDArray[np.float64]:
        """The mechanism's output distribution over the grid (**private**: it reads the utilities)."""
        lw = self.private_utilities * (self.epsilon / (2.0 * self.sensitivity))
        lw = lw - lw.max()
        p = np.exp(lw)
        probabilities: npt.NDArray[np.float64] = p / p.sum()
        return probabilities

    def to_dict(self) -> dict[str, Any]:
        """Everything that may be published (no utilities)."""
        return {"lengthscale": self.lengthscale, "index": self.index, "grid": self.grid.tolist(),
                "epsilon": self.epsilon, "sensitivity": self.sensitivity, "pairs": self.pairs,
                "quantile": self.quantile, "seed": self.seed, "noise_source": self.noise_source,
                "mechanism": "exponential (private median heuristic)", "neighbouring": "replace-one"}

    def metadata(self) -> dict[str, Any]:
        """:meth:`to_dict` plus the record of :attr:`charge` (the :class:`~dpkme.privacy.result.PrivateResult` protocol)."""
        return {**self.to_dict(), "charge": charge_record(self.charge)}

    def to_json(self) -> str:
        """:meth:`metadata` as JSON text (never the private utilities)."""
        return json.dumps(self.metadata(), indent=2)


def private_lengthscale(X: npt.ArrayLike, *, grid: npt.ArrayLike, epsilon: float, quantile: float = 0.5,
                        pairs: str = "auto", neighbouring: str = "replace-one",
                        random_state: int | np.random.Generator | None = None,
                        label: str = "private length scale (exponential mechanism)") -> LengthscaleChoice:
    r"""Choose a kernel length scale from a **public** grid by the exponential mechanism (ε-DP).

    A private median heuristic: the utility is :math:`-|F_D(\ell) - q|`
    (module docstring), sensitivity :math:`2/N` (all pairs) or
    :math:`1/\lfloor N/2\rfloor` (disjoint random pairs, used above
    :data:`MAX_ALL_PAIRS_ROWS` rows with ``pairs="auto"``).

    Parameters
    ----------
    X : array (N, D)
        Private data (N >= 2).
    grid : array-like
        Candidate length scales, declared in advance (e.g. :func:`lengthscale_grid`
        between public bounds); never derived from ``X``.
    epsilon : float
        Budget of this step (> 0). Add the returned ``charge`` to the ledger.
    quantile : float in (0, 1)
        0.5: the median of the pairwise distances.
    pairs : {"auto", "all", "disjoint"}
    neighbouring : {"replace-one"}
        The only relation supported (module docstring).
    random_state : None, int or Generator
        ``None``: OS entropy (a real release, no seed recorded); an int: seeded (teaching).
    label : str, default "private length scale (exponential mechanism)"
        Label of the returned ledger charge.

    Returns
    -------
    LengthscaleChoice
        The chosen length scale, its ε and its ``charge``, and the private
        utilities for the data owner's display.

    Examples
    --------
    >>> import numpy as np
    >>> from dpkme.privacy.bandwidth import lengthscale_grid, private_lengthscale
    >>> X = np.random.default_rng(0).normal(size=(200, 2))          # the private rows
    >>> choice = private_lengthscale(X, grid=lengthscale_grid(0.1, 10.0, num=20), epsilon=1.0,
    ...                              random_state=0)                 # seeded: a teaching replay
    >>> choice.charge.epsilon, choice.charge.mechanism, choice.pairs
    (1.0, 'exponential', 'all')
    >>> bool(choice.grid[0] <= choice.lengthscale <= choice.grid[-1])
    True
    """
    from .accounting import pure_dp_charge

    if neighbouring != "replace-one":
        raise ValueError(
            f"private_lengthscale supports neighbouring='replace-one' only, got {neighbouring!r}: under add/remove "
            "the number of pairs depends on the data and the utility's sensitivity analysis does not apply.")
    eps = check_epsilon(epsilon)
    X = check_array(X, name="X", min_rows=2)
    g = _check_grid(grid)
    n = X.shape[0]
    mode = _resolve_pairs(pairs, n)
    sens = lengthscale_sensitivity(n, mode)
    rng, seed, source = noise_rng(random_state)
    pair_rng, gumbel_rng = rng.spawn(2)
    util = lengthscale_utility(X, g, quantile=quantile, pairs=mode, rng=pair_rng)
    del X  # nothing below reads the data except through util
    score = util * (eps / (2.0 * sens)) + gumbel_rng.gumbel(size=g.shape[0])
    k = int(np.argmax(score))
    charge = pure_dp_charge(label, epsilon=eps, mechanism="exponential", relation="replace-one",
                            details={"utility": f"-|F(l) - {float(quantile):g}|",
                                     "sensitivity": sens, "grid_size": int(g.shape[0]), "pairs": mode})
    return LengthscaleChoice(lengthscale=float(g[k]), index=k, grid=g, epsilon=eps, sensitivity=sens, charge=charge,
                             pairs=mode, quantile=float(quantile), seed=seed, noise_source=source,
                             private_utilities=util)
