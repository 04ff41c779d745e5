r"""Algorithms 1 and 2 over out-of-core or distributed data: reduce the sums, noise once, post-process.

:func:`algorithm2` and :func:`algorithm1` run the one orchestration of the in-memory releases
(:func:`dpkme.release.random_features.run_algorithm2`, :func:`dpkme.release.subspace.run_algorithm1`) with the rows reached
through :class:`DaskRows`: the sums are a Dask reduction (:mod:`dpkme.distributed.sums`) instead of the blocked
in-memory routines. Everything else -- validation, random streams, the row-count policy, calibration, the one
noise draw, the charge, post-processing -- is the same code, so with the same integer ``random_state`` they give
the in-memory release up to float64 rounding of the additions in another order (the reduced-set solver's greedy
choices are discontinuous in its input, so a last-bit difference can occasionally select another atom).
:func:`release_table` does the same for a mixed table with its declared schema
(:func:`dpkme.release.tabular.table_release`, the in-memory table release's orchestration).

Trust model: the workers read the raw rows of their partitions (they are inside the data owner's trust
boundary, like the machine of an in-memory release); only public values (the feature map, the points, the
declared columns and bounds) are sent to them, and only the sums and the count come back.

Data flow. The public parts (random frequencies, points drawn from q, the Gram–Schmidt basis) are made on
the client without the data. The tasks on the cluster read the partitions and return one partial sum each;
a tree of additions on the cluster reduces them to :math:`S = \sum_n g(x_n)` and the row count, which
come back to the client, where the noise is added **once**. Only the noisy vector is handed to the
post-processing; the client drops every reference to the data and the sums before it runs, so nothing
after the noise can read the data again (``tests/distributed/test_release.py`` checks this with a source that
refuses to be read after the reduction).

The row count N (``n_private``) follows one of :data:`N_POLICIES` (``"public"``, ``"declared"``, ``"private"``;
:mod:`dpkme.release.core`, which the in-memory releases share).

Without an ``n_private`` under add/remove the functions refuse to run (a ValueError saying which to choose).
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import numpy as np

from ..kernels.kernel import Kernel
from ..reduced_set import DEFAULT_SOLVER
from ..release.core import N_POLICIES, RowStatistic, RowSums
from ..release.random_features import run_algorithm2
from ..release.result import Release
from ..release.subspace import DEFAULT_TOL, SubspaceBasis, run_algorithm1
from .sources import DataSource, open_source, open_table_source
from .sums import _feature_block_sum, _row_block_sum, count_rows, reduce_partitions

__all__ = ["N_POLICIES", "DaskRows", "algorithm2", "algorithm1", "release_table"]


class DaskRows(RowSums):
    r"""The rows of a :class:`~dpkme.distributed.sources.DataSource`, summed on Dask (:class:`dpkme.release.core.RowSums`).

    Each sum is :func:`~dpkme.distributed.sums.reduce_partitions`: a task per partition reads and checks it (or
    encodes it with a declared table schema) and returns its partial sum; a tree of additions on the cluster;
    the total and the count back on the client. Trust model: the workers see the raw rows of their partitions.

    Parameters
    ----------
    source : DataSource
        The private rows (:func:`~dpkme.distributed.sources.open_source`,
        :func:`~dpkme.distributed.sources.open_table_source`).
    client : None, distributed.Client or str, default=None
        Where the tasks run (:mod:`dpkme.distributed.sums`).

    Attributes
    ----------
    cell_counts : dict or None
        After a sum over a table source: per column, the cells the declared schema changed (missing, unknown,
        clipped, rounded), summed over the partitions. **Owner-only**: never publish.

    Examples
    --------
    >>> import numpy as np
    >>> from dpkme.kernels import GaussianKernel
    >>> rows = DaskRows(open_source(np.ones((10, 2)), partition_rows=4))
    >>> s = rows.kernel_row_sums(np.ones((1, 2)), GaussianKernel(lengthscale=1.0))
    >>> s.count, s.summed().tolist()
    (10, [10.0])
    """

    stage = 0.6
    n_rows = None

    def __init__(self, source: DataSource, *, client=None) -> None:
        if not isinstance(source, DataSource):
            raise ValueError(f"source must be a DataSource (dpkme.distributed.open_source), got "
                             f"{type(source).__name__}.")
        self._source: DataSource | None = source
        self.dim = source.dim
        self.record: dict[str, Any] | None = source.public_record()
        self.client = client
        self.cell_counts: dict | None = None

    def _src(self) -> DataSource:
        if self._source is None:
            raise RuntimeError("the private rows were released (close()); nothing after the noise may read them.")
        return self._source

    def _reduce(self, fn, args, *, size: int, what: str, progress) -> RowStatistic:
        sums = reduce_partitions(self._src(), fn, args, client=self.client, progress=progress, what=what, size=size)
        self.cell_counts = sums.cell_counts
        return RowStatistic(count=sums.count, total=sums.total)

    def feature_sums(self, features, progress: Callable[[float, str], object] | None = None) -> RowStatistic:
        r""":math:`\sum_n \phi(x_n)` of a fitted feature map (random features, or joint with marginal cells).

        Parameters
        ----------
        features : RandomFourierFeatures or JointFeatures
            A fitted, public feature map (sent to the workers once).
        progress : callable, optional
            ``progress(fraction, message)`` after each partition.

        Returns
        -------
        RowStatistic
        """
        return self._reduce(_feature_block_sum, (features,), size=features.n_components, what="feature sums",
                            progress=progress)

    def kernel_row_sums(self, Z, kernel: Kernel, progress: Callable[[float, str], object] | None = None
                        ) -> RowStatistic:
        r""":math:`\sum_n k(z_m, x_n)` for every public point.

        Parameters
        ----------
        Z : ndarray (M, D)
            Public points.
        kernel : Kernel
            The kernel.
        progress : callable, optional
            ``progress(fraction, message)`` after each partition.

        Returns
        -------
        RowStatistic
        """
        Z = np.asarray(Z, dtype=np.float64)
        return self._reduce(_row_block_sum, (Z, kernel), size=Z.shape[0], what="kernel row sums", progress=progress)

    def close(self) -> None:
        """Drop the reference to the source."""
        self._source = None


def algorithm2(
    data,
    *,
    kernel: Kernel,
    epsilon: float,
    delta: float,
    n_points: int,
    n_features: int = 10000,
    solver: str = DEFAULT_SOLVER,
    calibration: str = "analytic",
    neighbouring: str = "replace-one",
    n_private=None,
    count_share: float = 0.1,
    initial_points=None,
    q_scale: float = 500.0,
    q_loc=0.0,
    random_state=None,
    feature_dtype: str = "float32",
    progress: Callable[[float, str], object] | None = None,
    solver_options: dict | None = None,
    preset: str = "accurate",
    noise: str = "numpy",
    domain=None,
    marginals=None,
    marginal_share: float | None = None,
    columns=None,
    bounds=None,
    clip: bool = False,
    client=None,
) -> Release:
    r"""Algorithm 2 of Balog et al. (2018) over a Dask source: reduced feature sum, noise once, reduced set.

    Guarantee: :math:`(\varepsilon,\delta)`-DP with respect to ``neighbouring``, as
    :func:`dpkme.release.algorithm2`: :math:`\tilde\mu = \frac1N\sum_n\phi(x_n) + \mathcal N(0,\sigma^2 I_J)`
    with unit-norm features (sensitivity :math:`2b/N` replace-one, :math:`b/N` add/remove), the sum
    computed partition by partition (:func:`~dpkme.distributed.sums.feature_sums`); the solver is
    post-processing. The row count follows ``n_private`` (:data:`N_POLICIES`, module docstring).

    Parameters
    ----------
    data : DataSource, ndarray, DataFrame, dask collection, or a Parquet / CSV path
        The private rows (:func:`~dpkme.distributed.sources.open_source`).
    kernel : Kernel
        Translation-invariant kernel with amplitude :math:`\le 1`.
    epsilon, delta : float
        Privacy parameters (:math:`\varepsilon > 0`, :math:`0<\delta<1`).
    n_points : int
        Number of synthetic points :math:`M`.
    n_features : int, default=10000
        :math:`J` (even).
    solver : str, default="pursuit-joint"
        A key of :data:`dpkme.reduced_set.SOLVERS`.
    calibration : {"analytic", "classic"}, default="analytic"
        Gaussian calibration.
    neighbouring : {"replace-one", "add-remove"}, default="replace-one"
        Neighbouring relation of the guarantee.
    n_private : None, int or "private"
        The row-count policy: ``None`` counts N (replace-one: public), an int declares it, ``"private"``
        releases a Laplace count (add/remove).
    count_share : float, default=0.1
        Share of :math:`\varepsilon` spent on the count with ``n_private="private"``.
    initial_points : array (K, D), optional
        Public points for the solver (default: draws from q).
    q_scale, q_loc
        Parameters of q (public).
    random_state : None, int or numpy.random.Generator
        As :func:`dpkme.release.algorithm2` (streams 0, 1, 2: frequencies, noise, solver; stream 3: the
        private count).
    feature_dtype : {"float32", "float64"}
        Precision of the feature evaluation.
    progress : callable, optional
        ``progress(fraction, message)``: the reduction (to 0.6), then the solver.
    solver_options : dict, optional
        Passed to the solver; overrides ``preset``.
    preset : {"accurate", "interactive"}
        Named solver options.
    noise : {"numpy", "opendp"}, default="numpy"
        Sampler of the Gaussian noise.
    domain : EmbeddedDomain, optional
        A declared domain for the solver's points (as in memory).
    marginals : MarginalFeatures, optional
        The public marginal cells of a declared table (as in memory, :func:`dpkme.release.algorithm2`): the
        partitions then sum the joint map, one mechanism for both blocks.
    marginal_share : float, optional
        :math:`h \in (0, 1)` (required with ``marginals``).
    columns : sequence of str, optional
        Declared columns (:func:`~dpkme.distributed.sources.open_source`).
    bounds : (lower, upper), optional
        Declared box; every partition is checked against it.
    clip : bool, default=False
        Clip rows to ``bounds`` instead of refusing values outside it (recorded).
    client : None, distributed.Client or str, default=None
        Where the partial sums run (:mod:`dpkme.distributed.sums`).

    Returns
    -------
    Release
        ``mechanism="algorithm2"``; ``params`` adds ``n_policy``, ``n_policy_note`` and ``source``
        (origin, declared columns, bounds, clip).

    Examples
    --------
    >>> import numpy as np
    >>> from dpkme.kernels import GaussianKernel
    >>> X = np.random.default_rng(0).normal(size=(2000, 2))
    >>> rel = algorithm2(X, kernel=GaussianKernel(lengthscale=1.0), epsilon=1.0, delta=1e-6, n_points=5,
    ...                  n_features=200, bounds=(-10.0, 10.0), preset="interactive")
    >>> rel.n_points, rel.n_private, rel.params["n_policy"]
    (5, 2000, 'public')
    """
    src_kw = {"columns": columns, "bounds": bounds, "clip": clip}
    return run_algorithm2(
        lambda: DaskRows(open_source(data, **src_kw), client=client), kernel=kernel, epsilon=epsilon, delta=delta,
        n_points=n_points, n_features=n_features, solver=solver, calibration=calibration, neighbouring=neighbouring,
        n_private=n_private, count_share=count_share, initial_points=initial_points, q_scale=q_scale, q_loc=q_loc,
        random_state=random_state, feature_dtype=feature_dtype, progress=progress, solver_options=solver_options,
        preset=preset, noise=noise, domain=domain, marginals=marginals, marginal_share=marginal_share)


def algorithm1(
    data,
    Z=None,
    *,
    kernel: Kernel,
    epsilon: float,
    delta: float,
    n_points: int | None = None,
    q_scale: float | None = None,
    q_center=None,
    points_are_sample: bool = False,
    calibration: str = "analytic",
    neighbouring: str = "replace-one",
    sensitivity: str = "tight",
    basis: str = "full",
    tol: float = DEFAULT_TOL,
    weights: str = "free",
    l1_radius: float = 1.0,
    n_private=None,
    count_share: float = 0.1,
    random_state=None,
    basis_cache: SubspaceBasis | None = None,
    noise: str = "numpy",
    point_domain=None,
    columns=None,
    bounds=None,
    clip: bool = False,
    client=None,
    progress: Callable[[float, str], object] | None = None,
) -> Release:
    r"""Algorithm 1 of Balog et al. (2018) over a Dask source: reduced kernel row sums, noise once, weights.

    Guarantee: :math:`(\varepsilon,\delta)`-DP with respect to ``neighbouring``, as
    :func:`dpkme.release.algorithm1`: Gaussian noise on the coordinates
    :math:`\alpha = L^{-1}\bar k_A` of the projected KME, :math:`\bar k_m = \frac1N\sum_n k(z_m, x_n)`
    summed partition by partition (:func:`~dpkme.distributed.sums.kernel_row_sums`), :math:`\sigma`
    calibrated to :func:`~dpkme.privacy.sensitivity.kme_sensitivity` (with the declared ``bounds`` as its
    box, like the in-memory ``domain``). Points, basis, weights and shrinkage are public or
    post-processing. The row count follows ``n_private`` (:data:`N_POLICIES`).

    Parameters
    ----------
    data : DataSource, ndarray, DataFrame, dask collection, or a Parquet / CSV path
        The private rows (:func:`~dpkme.distributed.sources.open_source`).
    Z : array (M, D), optional
        Public synthetic points; default: ``n_points`` draws from q (or ``point_domain``).
    kernel : Kernel
        Bounded kernel, :math:`k(x,x) \le 1`.
    epsilon, delta : float
        Privacy parameters.
    n_points : int, optional
        :math:`M` when ``Z`` is drawn.
    q_scale : float, optional
        Standard deviation of q.
    q_center : float or array (D,), optional
        Mean of q (public; default 0).
    points_are_sample : bool, default=False
        ``Z`` is a publishable subset.
    calibration : {"analytic", "classic"}, default="analytic"
        Gaussian calibration.
    neighbouring : {"replace-one", "add-remove"}, default="replace-one"
        Neighbouring relation.
    sensitivity : {"tight", "paper"}, default="tight"
        Sensitivity mode (:func:`~dpkme.privacy.sensitivity.kme_sensitivity`).
    basis : {"full", "auto"}, default="full"
        ``"auto"`` adds the public shrinkage of :func:`dpkme.release.algorithm1`.
    tol : float, default=DEFAULT_TOL
        Gram–Schmidt threshold.
    weights : {"free", "simplex", "l1"}, default="free"
        Projection of the weights (post-processing).
    l1_radius : float, default=1.0
        Radius of the L1 ball.
    n_private : None, int or "private"
        The row-count policy (:data:`N_POLICIES`).
    count_share : float, default=0.1
        Share of :math:`\varepsilon` spent on the count with ``n_private="private"``.
    random_state : None, int or numpy.random.Generator
        As :func:`dpkme.release.algorithm1` (streams 0, 1: points, noise; stream 2: the private count).
    basis_cache : SubspaceBasis, optional
        A basis already fitted on ``Z``.
    noise : {"numpy", "opendp"}, default="numpy"
        Sampler of the Gaussian noise.
    point_domain : EmbeddedDomain, optional
        Declared domain to draw the points from (instead of q).
    columns : sequence of str, optional
        Declared columns.
    bounds : (lower, upper), optional
        Declared box: every partition is checked against it, and it tightens the replace-one sensitivity.
    clip : bool, default=False
        Clip rows to ``bounds`` instead of refusing values outside it (recorded).
    client : None, distributed.Client or str, default=None
        Where the partial sums run.
    progress : callable, optional
        ``progress(fraction, message)`` during the reduction.

    Returns
    -------
    Release
        ``mechanism="algorithm1"``; ``params`` adds ``n_policy``, ``n_policy_note`` and ``source``.

    Examples
    --------
    >>> import numpy as np
    >>> from dpkme.kernels import GaussianKernel
    >>> X = np.random.default_rng(0).uniform(size=(2000, 2))
    >>> rel = algorithm1(X, kernel=GaussianKernel(lengthscale=0.5), epsilon=1.0, delta=1e-6, n_points=20,
    ...                  q_scale=1.0, bounds=(0.0, 1.0))
    >>> rel.n_points, rel.params["n_policy"], rel.params["domain"]
    (20, 'public', [[0.0, 0.0], [1.0, 1.0]])
    """
    src = open_source(data, columns=columns, bounds=bounds, clip=clip)
    del data
    return run_algorithm1(
        DaskRows(src, client=client), Z, kernel=kernel, epsilon=epsilon, delta=delta, n_points=n_points,
        q_scale=q_scale, q_center=q_center, points_are_sample=points_are_sample, calibration=calibration,
        neighbouring=neighbouring, sensitivity=sensitivity, domain=src.bounds, clip=bool(clip), basis=basis,
        tol=tol, weights=weights, l1_radius=l1_radius, n_private=n_private, count_share=count_share,
        random_state=random_state, basis_cache=basis_cache, noise=noise, point_domain=point_domain,
        progress=progress)


def release_table(
    data,
    *,
    schema,
    client=None,
    report: Callable[[Any], object] | None = None,
    partition_rows: int | None = None,
    **kwargs,
):
    r"""A mixed table released from Parquet / CSV / Dask DataFrames, partition by partition (Algorithm 2 or 1).

    The same release as :func:`dpkme.release.release_table` (the one orchestration,
    :func:`dpkme.release.tabular.table_release`, with the same defaults, random streams, noise and
    post-processing): the declared schema's embedding, the additive kernel's random features and, where the
    public rule turns it on, the marginal block (:class:`~dpkme.kernels.marginal.JointFeatures`: per-column
    and pair cell counts in the same vector). Only the one sum over the rows runs on the cluster: each task
    encodes its partition with the declared schema (:func:`~dpkme.distributed.sources.encode_partition`:
    bad cells counted, never logged) and returns its partial feature sum and cell counts; a tree of additions
    on the cluster; the noise once on the client; the reduced-set solver and the weight re-fit on the client.
    Only public values reach the workers' task graph (the schema, the feature map, the points). With the same
    integer ``random_state`` it gives the in-memory release up to float64 rounding of the additions.

    Guarantee: :math:`(\varepsilon, \delta)`-DP as :func:`dpkme.release.release_table` (the schema applied to
    each row on its own keeps neighbouring tables neighbours). Under replace-one the row count is public and
    is counted first (:func:`~dpkme.distributed.sums.count_rows`, one ``len`` per partition) to set the
    public defaults; under add/remove declare ``n_private``. Trust model: the workers read the raw rows of
    their partitions (they are inside the data owner's trust boundary).

    Parameters
    ----------
    data : pandas.DataFrame, dask DataFrame, DataSource, str or path
        The private table (:func:`~dpkme.distributed.sources.open_table_source`).
    schema : TableSchema, dict or str
        The declared schema.
    client : None, distributed.Client or str, default=None
        Where the partial sums run (:mod:`dpkme.distributed.sums`).
    report : callable, optional
        ``report(counts)``: called with the cells the schema changed, per column, summed over the partitions
        (``{column: {"missing": ..., "unknown": ..., "clipped_low": ..., "clipped_high": ..., "rounded":
        ...}}``). **Owner-only**: statistics of the private rows, never part of the release.
    partition_rows : int, optional
        Rows per partition of a pandas DataFrame.
    **kwargs
        The keyword arguments of :func:`dpkme.release.release_table` (``epsilon``, ``delta``, ``mechanism``,
        ``n_points``, ``n_private``, ``random_state``, ``marginal_share``, ...).

    Returns
    -------
    TableRelease
        Its ``release.params`` add ``n_policy``, ``n_policy_note`` and ``source`` (origin, columns).

    Examples
    --------
    >>> import pandas as pd
    >>> from dpkme.schema import ColumnSpec, TableSchema
    >>> schema = TableSchema([ColumnSpec("age", "integer", lower=18, upper=90),
    ...                       ColumnSpec("smoker", "boolean")])
    >>> df = pd.DataFrame({"age": [25, 40, 61, 33] * 50, "smoker": [True, False, False, True] * 50})
    >>> tr = release_table(df, schema=schema, epsilon=1.0, delta=1e-6, n_points=20, n_features=200,
    ...                    partition_rows=64)
    >>> tr.release.params["source"]["origin"], list(tr.table().columns)
    ('pandas', ['age', 'smoker', 'weight'])
    """
    from ..release.tabular import _check_schema, table_release
    from .sources import DEFAULT_PARTITION_ROWS, cell_count_dict

    schema = _check_schema(schema)
    rows_per = DEFAULT_PARTITION_ROWS if partition_rows is None else partition_rows
    declared = kwargs.get("n_private") is not None
    holder: dict[str, DaskRows] = {}

    def opened(schema, reporter):
        src = open_table_source(data, schema=schema, partition_rows=rows_per)
        n_rows = None
        if not declared:   # replace-one (add/remove without n_private was refused): the count is public
            reporter(0.0, "counting the rows (public under replace-one)", force=True)
            n_rows = count_rows(src, client=client)
            if n_rows == 0:
                raise ValueError("the table has no rows.")
        holder["rows"] = DaskRows(src, client=client)
        return holder["rows"], n_rows

    tr = table_release(opened, schema=schema, **kwargs)
    rows = holder.pop("rows", None)
    if report is not None and rows is not None:
        report(rows.cell_counts if rows.cell_counts is not None else cell_count_dict(schema, None))
    return tr
