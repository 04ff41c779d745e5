r"""Partial sums per partition and their reduction with Dask (the only code here that reads private rows).

Each statistic is a sum over rows, :math:`S = \sum_n g(x_n) = \sum_p \sum_{n\in p} g(x_n)`: a task per
partition :math:`p` reads it (:func:`~dpkme.distributed.sources.load_partition`: checked against the
declared box), computes its partial sum with the library's own blocked in-memory routine, and returns
``(rows, partial sum)``; the partials are added by a binary tree of tasks in partition order (so the
result does not depend on which worker finished first), on the cluster. What comes back to the caller is
the total :math:`S` and the row count: **private** values, to be privatised before anything is released
(:mod:`dpkme.distributed.release` adds the noise once).

* :func:`feature_sums`: :math:`\sum_n \phi(x_n)` of unit-norm random features (Algorithm 2), with
  :meth:`RandomFourierFeatures.mean_embedding <dpkme.kernels.random_features.RandomFourierFeatures.mean_embedding>`
  per partition;
* :func:`kernel_row_sums`: :math:`\sum_n k(z_m, x_n)` against public points (Algorithm 1), with
  :meth:`Kernel.row_means <dpkme.kernels.kernel.Kernel.row_means>` per partition;
* :func:`cluster_sums`: the per-cluster counts and feature sums of one k-means step
  (:func:`dpkme.clustering._features.lloyd_pass`).

``client`` selects where the tasks run: ``None`` (Dask's default scheduler: a registered
``distributed.Client`` if there is one, else the local threaded scheduler), a ``distributed.Client``
(a ``LocalCluster`` on one machine, or a cluster), or a scheduler address string (a client is opened for
the call and closed after it).
"""

from __future__ import annotations

import time
from collections.abc import Callable
from dataclasses import dataclass, field

import numpy as np

from .._blocked import single_threaded_blas
from .._validation import check_array
from .sources import (
    DataSource,
    PartitionError,
    _dask,
    cell_count_dict,
    encode_partition,
    load_partition,
    open_source,
    reading_error,
)

__all__ = ["PartialSums", "feature_sums", "kernel_row_sums", "cluster_sums", "reduce_partitions", "count_rows"]


@dataclass(frozen=True)
class PartialSums:
    r"""The reduced sum of a statistic over every private row, and the row count. **Private: never publish.**

    Parameters
    ----------
    total : ndarray
        :math:`\sum_n g(x_n)` (float64).
    count : int
        The number of rows :math:`N` (public under replace-one only; see :mod:`dpkme.distributed.release`).
    n_partitions : int
        Number of partitions reduced.
    seconds : float, default=0.0
        Wall-clock time of the reduction (the owner's; never exported with a release).
    cell_counts : dict, optional
        For a table source (:func:`~dpkme.distributed.sources.open_table_source`): per column, the cells the
        declared schema changed (``missing``, ``unknown``, ``clipped_low``, ``clipped_high``, ``rounded``),
        summed over the partitions as partial sums. **Owner-only**, like
        :meth:`dpkme.schema.TableSchema.encode_report`: never publish.
    """

    total: np.ndarray = field(repr=False)
    count: int = field(repr=False)
    n_partitions: int = 0
    seconds: float = 0.0
    cell_counts: dict | None = field(default=None, repr=False)


# ----------------------------------------------------------------------------------- task functions
def _partial(part, index, columns, bounds, clip, schema, fn, args):
    """(rows, partial sum, cell counts) of one partition: read and checked (or encoded with a declared schema)."""
    counts = None
    if schema is None:
        X = load_partition(part, index, columns=columns, bounds=bounds, clip=clip)
    else:
        X, counts = encode_partition(part, index, schema=schema)
    if X.shape[0] == 0:
        return 0, None, counts
    return X.shape[0], np.asarray(fn(X, *args), dtype=np.float64), counts


def _plus(a, b):
    if a is None:
        return b
    if b is None:
        return a
    return a + b


def _add(a, b):
    return a[0] + b[0], _plus(a[1], b[1]), _plus(a[2], b[2])


def _tree(dask, items):
    """Pairwise sums in partition order: deterministic for any schedule, depth log2(P)."""
    level = list(items)
    while len(level) > 1:
        nxt = [dask.delayed(_add, pure=True)(level[i], level[i + 1]) for i in range(0, len(level) - 1, 2)]
        if len(level) % 2:
            nxt.append(level[-1])
        level = nxt
    return level[0]


def _feature_block_sum(X, features):
    return features.mean_embedding(X) * X.shape[0]


def _row_block_sum(X, Z, kernel):
    return kernel.row_means(Z, X) * X.shape[0]


def _cluster_block_sum(X, blocks, centres):
    from ..clustering._features import lloyd_pass

    out = lloyd_pass(blocks, X, centres, sums=True)
    return np.concatenate([np.asarray(out["counts"], dtype=np.float64), out["sums"].ravel()])


# ----------------------------------------------------------------------------------- the reduction
def _client_of(client):
    """(client or None, close_after)."""
    if client is None:
        return None, False
    if isinstance(client, str):
        try:
            from distributed import Client
        except ImportError:  # pragma: no cover
            raise ValueError("a scheduler address needs the 'distributed' package: pip install "
                             "'dpkme[distributed]'.") from None
        try:
            return Client(client, timeout="30s"), True
        except OSError as exc:
            raise ValueError(f"cannot reach the Dask scheduler at {client!r} ({exc}); start it or check the "
                             "address (e.g. tcp://host:8786).") from None
    if hasattr(client, "compute") and hasattr(client, "submit"):
        return client, False
    raise ValueError(f"client must be None, a distributed.Client or a scheduler address string, got "
                     f"{type(client).__name__}.")


def reduce_partitions(source: DataSource, fn: Callable, args=(), *, client=None,
                      progress: Callable[[float, str], object] | None = None, what: str = "partial sums",
                      size: int | None = None) -> PartialSums:
    r"""Apply ``fn`` to every checked partition and add the results in a tree: :math:`\sum_p f(X_p)`.

    Parameters
    ----------
    source : DataSource
        The private rows (:func:`~dpkme.distributed.sources.open_source`).
    fn : callable
        ``fn(X_p, *args)`` -> 1-D array, the partial sum of partition ``X_p`` (float64, rows x D). Must be
        a module-level function (it is pickled to the workers) and sum over rows, so that the result is the
        same for any partitioning.
    args : tuple, default=()
        Public arguments of ``fn`` (features, points, centres); sent to the cluster once.
    client : None, distributed.Client or str, default=None
        Where the tasks run (module docstring).
    progress : callable, optional
        ``progress(fraction, message)`` after each finished partition (and at 1.0).
    what : str, default="partial sums"
        Label of the progress messages.
    size : int, optional
        Length of the statistic: a source with no rows then gives a zero total and a count of 0 (under
        add/remove the empty table is a neighbour like any other, and must be released, not refused);
        without it, no rows is an error.

    Returns
    -------
    PartialSums
        The total and the row count (private).
    """
    dask = _dask()
    if not isinstance(source, DataSource):
        raise ValueError(f"source must be a DataSource (dpkme.distributed.open_source), got {type(source).__name__}.")
    if not source.partitions:
        raise ValueError("the source has no partitions (no rows).")
    t0 = time.perf_counter()
    shared = [dask.delayed(a, pure=True) for a in args]  # one key each: sent to the workers once
    schema = None if source.schema is None else dask.delayed(source.schema, pure=True)   # public, sent once
    partials = [dask.delayed(_partial, pure=True)(part, i, source.columns, source.bounds, source.clip, schema, fn,
                                                  tuple(shared))
                for i, part in enumerate(source.partitions)]
    total = _tree(dask, partials)
    n_parts = len(partials)
    client, close = _client_of(client)
    try:
        if client is not None:
            from distributed import as_completed

            futures = client.compute([*partials, total])
            try:
                for done, _ in enumerate(as_completed(futures[:-1], loop=client.loop), start=1):
                    if progress is not None:
                        progress(done / n_parts, f"{what}: {done}/{n_parts} partitions")
                count, vec, cells = futures[-1].result()
            finally:
                # dropping the futures releases their tasks; client.cancel on a graph with an erred task trips an
                # assertion in the scheduler (a traceback on the user's terminal after a refused partition)
                del futures
        else:
            from dask.callbacks import Callback
            state = {"done": 0}

            def posttask(key, result, dsk, st, worker_id):
                if str(key[0] if isinstance(key, tuple) else key).startswith("_partial-"):
                    state["done"] += 1
                    if progress is not None and state["done"] < n_parts:
                        progress(state["done"] / n_parts, f"{what}: {state['done']}/{n_parts} partitions")

            # one BLAS thread around the whole local computation: the tasks' own single-thread sections run in
            # parallel threads and restore each other's limits out of order, which left BLAS at one thread for the
            # rest of the process (and the later releases of this process with another BLAS summation order)
            with Callback(posttask=posttask), single_threaded_blas():
                (count, vec, cells), = dask.compute(total)
    except PartitionError:
        raise
    except (ValueError, TypeError, OverflowError) as exc:  # raised while Dask read a partition: may quote a cell
        raise reading_error(exc, source.columns) from None
    finally:
        if close:
            client.close()
    if vec is None:
        if size is None:
            raise ValueError("the data has no rows.")
        vec = np.zeros(int(size))
    if progress is not None:
        progress(1.0, f"{what}: reduced {n_parts} partitions")
    return PartialSums(total=vec, count=int(count), n_partitions=n_parts, seconds=time.perf_counter() - t0,
                       cell_counts=None if source.schema is None else cell_count_dict(source.schema, cells))


def count_rows(source: DataSource, *, client=None) -> int:
    r"""The number of rows of a source: one ``len`` per partition on the cluster, added on the client.

    **Public under replace-one only** (neighbouring tables have the same size); a table release counts its
    rows with it to set its public defaults (the number of atoms, the marginal block's share) before its one
    private pass. Nothing else of the partitions leaves the workers.

    Parameters
    ----------
    source : DataSource
        The rows.
    client : None, distributed.Client or str, default=None
        Where the tasks run.

    Returns
    -------
    int

    Examples
    --------
    >>> import numpy as np
    >>> count_rows(open_source(np.zeros((10, 2)), partition_rows=4))
    10
    """
    dask = _dask()
    if not isinstance(source, DataSource):
        raise ValueError(f"source must be a DataSource (dpkme.distributed.open_source), got {type(source).__name__}.")
    lens = [dask.delayed(len, pure=True)(part) for part in source.partitions]
    client, close = _client_of(client)
    try:
        if client is not None:
            sizes = client.gather(client.compute(lens))
        else:
            with single_threaded_blas():    # as in reduce_partitions: the process's BLAS threads are restored after
                sizes = dask.compute(*lens)
    except PartitionError:
        raise
    except (ValueError, TypeError, OverflowError) as exc:  # raised while Dask read a partition: may quote a cell
        raise reading_error(exc, source.columns) from None
    finally:
        if close:
            client.close()
    return int(sum(int(n) for n in sizes))


def _source(data, columns, bounds, clip):
    return open_source(data, columns=columns, bounds=bounds, clip=clip) if not isinstance(data, DataSource) \
        else open_source(data)


def feature_sums(data, features, *, columns=None, bounds=None, clip: bool = False, client=None,
                 progress=None) -> PartialSums:
    r""":math:`\sum_n \phi(x_n)` of unit-norm random features over every row, partition by partition.

    The same sum as :meth:`RandomFourierFeatures.mean_embedding
    <dpkme.kernels.random_features.RandomFourierFeatures.mean_embedding>` times :math:`N` (equal up to
    float64 rounding of the additions), with memory of one partition per task.

    Parameters
    ----------
    data : DataSource or anything :func:`~dpkme.distributed.sources.open_source` accepts
        The private rows.
    features : RandomFourierFeatures
        A fitted, public feature map.
    columns, bounds, clip
        Passed to :func:`~dpkme.distributed.sources.open_source` (not with a DataSource).
    client : None, distributed.Client or str, default=None
        Where the tasks run.
    progress : callable, optional
        ``progress(fraction, message)``.

    Returns
    -------
    PartialSums
        ``total`` of length :math:`J`; private.

    Examples
    --------
    >>> import numpy as np
    >>> from dpkme.kernels import GaussianKernel
    >>> from dpkme.kernels.random_features import RandomFourierFeatures
    >>> X = np.random.default_rng(0).normal(size=(1000, 2))
    >>> rff = RandomFourierFeatures(GaussianKernel(lengthscale=1.0), n_components=50, random_state=1).fit(2)
    >>> s = feature_sums(X, rff)
    >>> bool(np.allclose(s.total / s.count, rff.mean_embedding(X)))
    True
    """
    from ..kernels.random_features import RandomFourierFeatures

    if not isinstance(features, RandomFourierFeatures):
        raise ValueError(f"features must be a fitted RandomFourierFeatures, got {type(features).__name__}.")
    features._check_fitted()
    src = _source(data, columns, bounds, clip)
    if src.dim != features.n_features_in_:
        raise ValueError(f"the feature map was fitted for {features.n_features_in_} columns but the source declares "
                         f"{src.dim}: {list(src.columns)}.")
    return reduce_partitions(src, _feature_block_sum, (features,), client=client, progress=progress,
                             what="random-feature sums", size=features.n_components)


def kernel_row_sums(data, Z, *, kernel, columns=None, bounds=None, clip: bool = False, client=None,
                    progress=None) -> PartialSums:
    r""":math:`\sum_n k(z_m, x_n)` for every public point :math:`z_m`, partition by partition.

    Parameters
    ----------
    data : DataSource or anything :func:`~dpkme.distributed.sources.open_source` accepts
        The private rows.
    Z : ndarray (M, D)
        Public points (drawn from q or a declared domain, or a publishable subset).
    kernel : Kernel
        The kernel; each partition uses its blocked :meth:`~dpkme.kernels.kernel.Kernel.row_means`.
    columns, bounds, clip
        Passed to :func:`~dpkme.distributed.sources.open_source` (not with a DataSource).
    client : None, distributed.Client or str, default=None
        Where the tasks run.
    progress : callable, optional
        ``progress(fraction, message)``.

    Returns
    -------
    PartialSums
        ``total`` of length :math:`M`; private.

    Examples
    --------
    >>> import numpy as np
    >>> from dpkme.kernels import GaussianKernel
    >>> X, Z = np.random.default_rng(0).normal(size=(500, 3)), np.zeros((4, 3))
    >>> s = kernel_row_sums(X, Z, kernel=GaussianKernel(lengthscale=1.0))
    >>> bool(np.allclose(s.total / s.count, GaussianKernel(lengthscale=1.0).row_means(Z, X)))
    True
    """
    src = _source(data, columns, bounds, clip)
    Z = check_array(Z, name="Z", n_features=src.dim)
    return reduce_partitions(src, _row_block_sum, (Z, kernel), client=client, progress=progress,
                             what="kernel row sums", size=Z.shape[0])


def cluster_sums(data, blocks, centres, *, columns=None, bounds=None, clip: bool = False, client=None,
                 progress=None) -> tuple[np.ndarray, np.ndarray, int]:
    r"""Per-cluster counts :math:`|D_i|` and feature sums :math:`S_i = \sum_{x\in D_i} z(x)` of a k-means step.

    Each row is assigned to its nearest public centre in feature space
    (:func:`dpkme.clustering._features.lloyd_pass`): an assignment that depends on that row only, so
    the sums partition. Private: noise them as :mod:`dpkme.clustering` does before releasing.

    Parameters
    ----------
    data : DataSource or anything :func:`~dpkme.distributed.sources.open_source` accepts
        The private rows.
    blocks : dpkme.clustering._features.FeatureBlocks
        The public feature map of the k-means run.
    centres : ndarray (k, J)
        Public centres (the previous iteration's released ones).
    columns, bounds, clip
        Passed to :func:`~dpkme.distributed.sources.open_source` (not with a DataSource).
    client : None, distributed.Client or str, default=None
        Where the tasks run.
    progress : callable, optional
        ``progress(fraction, message)``.

    Returns
    -------
    counts : ndarray (k,)
    sums : ndarray (k, J)
    n_rows : int
    """
    centres = np.asarray(centres, dtype=np.float64)
    if centres.ndim != 2:
        raise ValueError(f"centres must be a (k, J) array, got shape {centres.shape}.")
    src = _source(data, columns, bounds, clip)
    out = reduce_partitions(src, _cluster_block_sum, (blocks, centres), client=client, progress=progress,
                            what="cluster sums", size=centres.shape[0] * (1 + centres.shape[1]))
    k = centres.shape[0]
    return out.total[:k], out.total[k:].reshape(k, -1), out.count
