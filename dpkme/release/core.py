r"""One orchestration core for Algorithms 1 and 2, in memory and on a Dask cluster.

A release by Algorithm 1 or 2 is: validate the public arguments, draw the public parts (random frequencies,
points from q or a declared domain, the Gram--Schmidt basis), compute **one sum over the private rows**,
add the Gaussian noise **once**, then post-process the noisy vector with public inputs only (the reduced-set
solver and the marginal block's weight re-fit for Algorithm 2; the basis weights, shrinkage and projections for
Algorithm 1). Only the sum depends on where the rows live, so the rows are reached through one interface,
:class:`RowSums`:

:class:`InMemoryRows`
    An array in memory; the sums are the library's blocked, multi-threaded in-memory routines
    (:meth:`RandomFourierFeatures.mean_embedding <dpkme.kernels.random_features.RandomFourierFeatures.mean_embedding>`,
    :meth:`Kernel.row_means <dpkme.kernels.kernel.Kernel.row_means>`).
``dpkme.distributed.DaskRows``
    A :class:`~dpkme.distributed.sources.DataSource` of partitions: one partial sum per partition on the
    cluster's workers, a tree of additions, the total and the row count back on the client
    (:func:`dpkme.distributed.sums.reduce_partitions`).

:func:`~dpkme.release.random_features.run_algorithm2` and :func:`~dpkme.release.subspace.run_algorithm1`
(each next to its algorithm, on top of this module) are the whole orchestration; :func:`dpkme.release.algorithm2`,
:func:`dpkme.release.algorithm1`, :func:`dpkme.distributed.algorithm2`, :func:`dpkme.distributed.algorithm1`
and the table releases (:func:`dpkme.release.release_table`, :func:`dpkme.distributed.release_table`) only
build the :class:`RowSums` and call them. So the same integer ``random_state`` gives the same release in
memory and on a cluster, up to float64 rounding of the additions done in another order.

The row count :math:`N` follows one of :data:`N_POLICIES` (``n_private``):

``"public"`` (``n_private=None``, replace-one only)
    Neighbouring tables have the same number of rows, so :math:`N` is public by the neighbouring relation and
    is counted with the sum.
``"declared"`` (``n_private=N``, an int)
    A size known publicly. Under replace-one it must equal the count (else a ValueError); under add/remove the
    sum is normalised by the declared :math:`N` (sensitivity :math:`b/N`), whatever the true count.
``"private"`` (``n_private="private"``, add/remove only)
    A share ``count_share`` of :math:`\varepsilon` releases :math:`\tilde N = N + \mathrm{Lap}(1/\varepsilon_N)`
    (sensitivity 1, pure :math:`\varepsilon_N`-DP); the **sum** gets Gaussian noise calibrated to
    :math:`(\varepsilon - \varepsilon_N, \delta)` at its add/remove sensitivity (:math:`N = 1` in the usual
    formulas) and :math:`\tilde S/\max(\tilde N, 1)` is post-processing (the two shares rounded so that
    :math:`\varepsilon_N + \varepsilon_S \le \varepsilon` in floating point, the Laplace scale up). An empty
    table is released like any other (under add/remove it is a neighbour of every one-row table). By basic
    composition the release is :math:`(\varepsilon, \delta)`-DP; its charge is that composed total
    (``mechanism="approx-dp"``), and it records :math:`\tilde N` (rounded) as its size.

Without an ``n_private`` under add/remove a release refuses to run (a ValueError saying which to choose).
"""

from __future__ import annotations

import math
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

import numpy as np
import numpy.typing as npt

from .._validation import check_array, check_positive_int, public_size
from ..kernels.kernel import Kernel
from ..kernels.marginal import JointFeatures
from ..kernels.random_features import RandomFourierFeatures
from ..privacy.accounting import PrivacyCharge, gaussian_charge
from ..privacy.spec import NeighbouringRelation

if TYPE_CHECKING:
    from ..privacy.calibration import GaussianCalibration

__all__ = ["N_POLICIES", "RowStatistic", "RowSums", "InMemoryRows", "n_policy", "split_epsilon", "is_row_sums",
           "privatise", "Privatised", "shape_of", "policy_params"]

#: How a release gets its row count N (module docstring).
N_POLICIES = ("public", "declared", "private")

_POLICY_NOTES = {
    "public": "N counted with the sum: public under replace-one (neighbouring tables have the same size)",
    "declared": "N declared by the owner (public knowledge), not read from the rows",
    "private": "N released privately: a Laplace count with a declared share of epsilon, composed with the sum",
}


# ----------------------------------------------------------------------------------- the blocked sums interface
@dataclass(frozen=True)
class RowStatistic:
    r"""A sum over every private row, :math:`S = \sum_n g(x_n)`, and the row count. **Private: never publish.**

    Exactly one of ``total`` and ``mean`` is given: the form the provider computes natively (a cluster adds
    partial sums; the in-memory routines return means), so that neither path is rounded through the other.

    Parameters
    ----------
    count : int
        The number of rows :math:`N` (public under replace-one only).
    total : ndarray, optional
        :math:`S` (float64).
    mean : ndarray, optional
        :math:`S/N` (float64; ``count`` >= 1).
    """

    count: int = field(repr=False)
    total: npt.NDArray[np.float64] | None = field(default=None, repr=False)
    mean: npt.NDArray[np.float64] | None = field(default=None, repr=False)

    def summed(self) -> npt.NDArray[np.float64]:
        r""":math:`S`.

        Returns
        -------
        ndarray
        """
        if self.total is not None:
            return self.total
        assert self.mean is not None
        return self.mean * float(self.count)

    def normalised(self, n: int) -> npt.NDArray[np.float64]:
        r""":math:`S/n` for a public size :math:`n` (the mean itself when :math:`n` is the count).

        Parameters
        ----------
        n : int
            The public size.

        Returns
        -------
        ndarray
        """
        if self.mean is not None:
            return self.mean if n == self.count else self.mean * (self.count / n)
        assert self.total is not None
        return self.total / n


class RowSums:
    r"""Where the private rows live: the only object of a release that reads them (the blocked sums interface).

    A subclass computes the two sums of Algorithms 1 and 2 over every private row and drops its rows on
    :meth:`close`: :class:`InMemoryRows` (an array, blocked in-memory routines) and
    :class:`dpkme.distributed.DaskRows` (partitions summed on a Dask cluster). Its public attributes:
    ``dim`` (columns of the rows), ``n_rows`` (the row count where it is known without a pass over the data
    -- an array's shape -- else ``None``), ``stage`` (the progress fraction at which the private pass ends),
    ``record`` (what a release may record about the source, or ``None``).
    """

    dim: int = 0
    n_rows: int | None = None
    stage: float = 0.05
    record: dict[str, Any] | None = None

    def feature_sums(self, features: RandomFourierFeatures | JointFeatures,
                     progress: Callable[[float, str], object] | None = None) -> RowStatistic:
        r""":math:`\sum_n \phi(x_n)` of a fitted, public feature map.

        Parameters
        ----------
        features : RandomFourierFeatures or JointFeatures
            The feature map.
        progress : callable, optional
            ``progress(fraction, message)`` during the pass.

        Returns
        -------
        RowStatistic
        """
        raise NotImplementedError

    def kernel_row_sums(self, Z: npt.NDArray[np.float64], kernel: Kernel,
                        progress: Callable[[float, str], object] | None = None) -> RowStatistic:
        r""":math:`\sum_n k(z_m, x_n)` for every public point :math:`z_m`.

        Parameters
        ----------
        Z : ndarray (M, D)
            Public points.
        kernel : Kernel
            The kernel.
        progress : callable, optional
            ``progress(fraction, message)`` during the pass.

        Returns
        -------
        RowStatistic
        """
        raise NotImplementedError

    def close(self) -> None:
        """Drop every reference to the rows: nothing after the noise may read them."""


class InMemoryRows(RowSums):
    r"""Private rows held in memory as one array: the blocked in-memory sums of :class:`RowSums`.

    Parameters
    ----------
    X : array (N, D)
        The private rows (finite; validated here). Under add/remove an empty array is allowed (``allow_empty``):
        the empty table is a neighbour of every one-row table and is released like any other.
    allow_empty : bool, default=False
        Accept an array with no rows (its sums are zero).

    Examples
    --------
    >>> import numpy as np
    >>> from dpkme.kernels import GaussianKernel
    >>> rows = InMemoryRows(np.zeros((4, 2)))
    >>> s = rows.kernel_row_sums(np.zeros((1, 2)), GaussianKernel(lengthscale=1.0))
    >>> s.count, s.summed().tolist()
    (4, [4.0])
    """

    stage = 0.05
    record: dict[str, Any] | None = None

    def __init__(self, X: npt.ArrayLike, *, allow_empty: bool = False) -> None:
        self._X: npt.NDArray[np.float64] | None = check_array(X, name="X", min_rows=0 if allow_empty else 1)
        self.n_rows: int | None = int(self._X.shape[0])
        self.dim = int(self._X.shape[1])

    def _rows(self) -> npt.NDArray[np.float64]:
        if self._X is None:
            raise RuntimeError("the private rows were released (close()); nothing after the noise may read them.")
        return self._X

    def feature_sums(self, features: RandomFourierFeatures | JointFeatures,
                     progress: Callable[[float, str], object] | None = None) -> RowStatistic:
        r""":math:`\sum_n \phi(x_n)`, as the blocked mean of the features.

        Parameters
        ----------
        features : RandomFourierFeatures or JointFeatures
            A fitted, public feature map.
        progress : callable, optional
            Unused (one in-memory pass).

        Returns
        -------
        RowStatistic
        """
        X = self._rows()
        if X.shape[0] == 0:
            return RowStatistic(count=0, total=np.zeros(features.n_components))
        return RowStatistic(count=X.shape[0], mean=np.asarray(features.mean_embedding(X), dtype=np.float64))

    def kernel_row_sums(self, Z: npt.NDArray[np.float64], kernel: Kernel,
                        progress: Callable[[float, str], object] | None = None) -> RowStatistic:
        r""":math:`\sum_n k(z_m, x_n)`, as the blocked row means of the kernel.

        Parameters
        ----------
        Z : ndarray (M, D)
            Public points.
        kernel : Kernel
            The kernel.
        progress : callable, optional
            Unused (one in-memory pass).

        Returns
        -------
        RowStatistic
        """
        X = self._rows()
        if X.shape[0] == 0:
            return RowStatistic(count=0, total=np.zeros(Z.shape[0]))
        return RowStatistic(count=X.shape[0], mean=np.asarray(kernel.row_means(Z, X), dtype=np.float64))

    def close(self) -> None:
        """Drop the reference to the rows."""
        self._X = None


# ----------------------------------------------------------------------------------- the row count's policy
def n_policy(n_private: int | str | None, neighbouring: str, count_share: float, noise: str) -> str:
    """The row-count policy of a release (:data:`N_POLICIES`), refusing the combinations that would leak N.

    Parameters
    ----------
    n_private : None, int or "private"
        ``None`` counts N (replace-one), an int declares it, ``"private"`` releases a Laplace count (add/remove).
    neighbouring : {"replace-one", "add-remove"}
        The neighbouring relation.
    count_share : float
        Share of epsilon spent on the count (``"private"`` only).
    noise : {"numpy", "opendp"}
        The Gaussian sampler (the Laplace count is drawn with numpy).

    Returns
    -------
    str
        ``"public"``, ``"declared"`` or ``"private"``.

    Examples
    --------
    >>> n_policy(None, "replace-one", 0.1, "numpy"), n_policy(500, "add-remove", 0.1, "numpy")
    ('public', 'declared')
    """
    if isinstance(n_private, str):
        if n_private != "private":
            raise ValueError(f"n_private must be None, an int or 'private', got {n_private!r}.")
        if neighbouring != "add-remove":
            raise ValueError("n_private='private' is for add-remove: under replace-one N is public by the "
                             "neighbouring relation (counted at no cost); pass n_private=None.")
        if isinstance(count_share, bool) or not isinstance(count_share, (int, float)) or not 0 < count_share < 1:
            raise ValueError(f"count_share must be a number in (0, 1) (the share of epsilon spent on the count), "
                             f"got {count_share!r}.")
        if noise != "numpy":
            raise ValueError("n_private='private' draws its Laplace count with numpy; with noise='opendp' declare "
                             "n_private=N instead.")
        return "private"
    if n_private is None:
        if neighbouring == "add-remove":
            raise ValueError("under add-remove the row count differs between neighbours and is not read silently: "
                             "the public size n_private must be declared (n_private=N, a size known publicly), or "
                             "pass n_private='private' to release a noisy count with a share count_share of "
                             "epsilon.")
        return "public"
    check_positive_int(n_private, name="n_private")
    return "declared"


def split_epsilon(epsilon: float, share: float) -> tuple[float, float, float]:
    r"""(:math:`\varepsilon_N`, :math:`\varepsilon_S`, Laplace scale) of the ``"private"`` count policy.

    The count's and the sum's shares of :math:`\varepsilon`, rounded so that
    :math:`\varepsilon_N + \varepsilon_S \le \varepsilon` holds in floating point, and the scale
    :math:`b \ge 1/\varepsilon_N` rounded up (toward more noise).

    Parameters
    ----------
    epsilon : float
        The release's :math:`\varepsilon`.
    share : float
        The count's share, in (0, 1).

    Returns
    -------
    tuple of float

    Examples
    --------
    >>> eps_n, eps_s, scale = split_epsilon(1.0, 0.1)
    >>> eps_n + eps_s <= 1.0, scale * eps_n >= 1.0
    (True, True)
    """
    from ..privacy.calibration import _ratio_up

    eps_n = float(share) * float(epsilon)
    eps_s = float(epsilon) - eps_n
    while eps_n + eps_s > epsilon:
        eps_s = math.nextafter(eps_s, 0.0)
    return eps_n, eps_s, float(_ratio_up(1.0, eps_n))   # b >= 1/eps_N exactly (the real quotient), not in floats


@dataclass
class Privatised:
    r"""The privatised statistic and what a release records about its noise: all public (post-processing).

    Parameters
    ----------
    vector : ndarray
        The noisy normalised statistic.
    sigma : float
        Standard deviation of the noise on ``vector``.
    sensitivity : float
        The L2 sensitivity of the normalised statistic.
    n_private : int
        The public size :math:`N` (the rounded noisy count under the ``"private"`` policy).
    calibration : GaussianCalibration
        The Gaussian calibration (of the sum, under the ``"private"`` policy).
    charge : PrivacyCharge
        What the noise spends.
    params : dict
        The count's and the sum's shares of epsilon under the ``"private"`` policy, else empty.
    """

    vector: npt.NDArray[np.float64]
    sigma: float
    sensitivity: float
    n_private: int
    calibration: GaussianCalibration
    charge: PrivacyCharge
    params: dict[str, Any]


def privatise(stat: RowStatistic, *, policy: str, n_private: int | str | None, neighbouring: str,
              epsilon: float, delta: float, calibration: str, count_share: float,
              sensitivity_at: Callable[[int], float],
              transform: Callable[[npt.NDArray[np.float64]], npt.NDArray[np.float64]] | None = None,
              rng_noise: np.random.Generator | None, rng_count: np.random.Generator | None = None,
              noise: str = "numpy", label: str, mechanism: str) -> Privatised:
    r"""Noise once: the one Gaussian (and, for a private count, Laplace) draw of Algorithms 1 and 2.

    Guarantee: with ``sensitivity_at(n)`` the L2 sensitivity of :math:`T(S)/n` under ``neighbouring`` for a
    public :math:`n`, the returned vector :math:`T(S/N) + \mathcal N(0, \sigma^2 I)` is
    :math:`(\varepsilon, \delta)`-DP (the Gaussian mechanism, :math:`\sigma` from
    :func:`~dpkme.privacy.calibration.calibrate_gaussian`); under the ``"private"`` policy
    :math:`(T(S) + \mathcal N(0, \sigma_S^2 I))/\max(\tilde N, 1)` with
    :math:`\tilde N = N + \mathrm{Lap}(1/\varepsilon_N)` is :math:`(\varepsilon, \delta)`-DP by basic
    composition (module docstring). :math:`T` is linear and public (the identity, or Algorithm 1's basis
    coordinates).

    Parameters
    ----------
    stat : RowStatistic
        The private sum and row count.
    policy : {"public", "declared", "private"}
        The row-count policy (:func:`n_policy`).
    n_private : None, int or "private"
        As given to the release.
    neighbouring : {"replace-one", "add-remove"}
        The neighbouring relation.
    epsilon, delta : float
        The budget.
    calibration : {"analytic", "classic"}
        The Gaussian calibration.
    count_share : float
        Share of epsilon spent on the count (``"private"`` only).
    sensitivity_at : callable
        ``sensitivity_at(n)``: the L2 sensitivity of :math:`T(S)/n`.
    transform : callable, optional
        The public linear map :math:`T` (default: the identity).
    rng_noise : numpy.random.Generator, optional
        The noise's generator (``None`` with ``noise="opendp"``).
    rng_count : numpy.random.Generator, optional
        The count's generator (``"private"`` only).
    noise : {"numpy", "opendp"}, default="numpy"
        The Gaussian sampler.
    label, mechanism : str
        The charge's label and mechanism name.

    Returns
    -------
    Privatised
    """
    from ..privacy.calibration import add_gaussian_noise, calibrate_gaussian, laplace_noise

    T = _identity if transform is None else transform
    if policy == "private":
        assert rng_count is not None
        eps_n, eps_s, scale = split_epsilon(epsilon, count_share)
        n_tilde = float(stat.count) + float(laplace_noise((), scale=scale, rng=rng_count))
        norm = max(n_tilde, 1.0)
        sens_sum = sensitivity_at(1)
        cal = calibrate_gaussian(epsilon=eps_s, delta=delta, sensitivity=sens_sum, method=calibration)
        vec = add_gaussian_noise(T(stat.summed()), sigma=cal.sigma, rng=rng_noise, noise=noise) / norm
        charge = PrivacyCharge(label=label, mechanism="approx-dp", epsilon=epsilon, delta=delta,
                               relation=NeighbouringRelation.parse(neighbouring), details={"mechanism": mechanism, "count_epsilon": eps_n,
                                                               "sum_epsilon": eps_s})
        return Privatised(vec, cal.sigma / norm, sens_sum / norm, max(int(round(n_tilde)), 1), cal, charge,
                      {"count_epsilon": eps_n, "sum_epsilon": eps_s, "count_share": float(count_share)})
    if policy == "public" and stat.count == 0:   # replace-one: N is public, and nothing is released for 0 rows
        raise ValueError("the data has no rows.")
    # the count is read under replace-one only (where it is public); under add/remove the declared N is used
    n_pub = public_size(stat.count if neighbouring == "replace-one" else 0, n_private, neighbouring=neighbouring)
    sens = sensitivity_at(n_pub)
    cal = calibrate_gaussian(epsilon=epsilon, delta=delta, sensitivity=sens, method=calibration)
    vec = add_gaussian_noise(T(stat.normalised(n_pub)), sigma=cal.sigma, rng=rng_noise, noise=noise)
    charge = gaussian_charge(label, cal, relation=neighbouring, details={"mechanism": mechanism})
    return Privatised(vec, cal.sigma, cal.sensitivity, n_pub, cal, charge, {})


def is_row_sums(obj: object) -> bool:
    """Whether ``obj`` is a :class:`RowSums` (rather than an array of rows).

    Parameters
    ----------
    obj : object
        Anything.

    Returns
    -------
    bool
    """
    return isinstance(obj, RowSums)


def shape_of(rows: Any) -> tuple[int, float]:
    """(columns, progress stage of the private pass) of a :class:`RowSums` or an array (read from its shape only).

    Parameters
    ----------
    rows : RowSums or array (N, D)
        The private rows.

    Returns
    -------
    tuple of (int, float)
    """
    if is_row_sums(rows):
        return int(rows.dim), float(rows.stage)
    shape = getattr(rows, "shape", None)
    if shape is None:
        shape = np.shape(rows)
    if len(shape) != 2:
        raise ValueError(f"X must be a 2-D array, got shape {tuple(shape)}.")
    return int(shape[1]), InMemoryRows.stage


def _identity(v: npt.NDArray[np.float64]) -> npt.NDArray[np.float64]:
    return v


def policy_params(policy: str, record: dict[str, Any] | None, extra: dict[str, Any]) -> dict[str, Any]:
    """What a release records about its row count (and, for a cluster's source, the source's public record).

    Parameters
    ----------
    policy : str
        The row-count policy.
    record : dict or None
        The source's public record (``None`` in memory: nothing is recorded about the source).
    extra : dict
        :attr:`Privatised.params`.

    Returns
    -------
    dict
    """
    if record is None and policy != "private" and not extra:
        return {}    # an in-memory release records nothing about its source
    return {"n_policy": policy, "n_policy_note": _POLICY_NOTES[policy],
            **({} if record is None else {"source": record}), **extra}
