r"""Out-of-core and distributed private releases with Dask (issue 18).

Every private statistic of the releases here is a **sum over rows**: the sum of unit-norm random features
(Algorithm 2), the kernel row sums :math:`\sum_n k(z_m, x_n)` (Algorithm 1), per-cluster sums of a k-means
step. So it partitions exactly: each partition of the data yields a partial sum and its row count, the
partial sums are added (a tree reduction on the cluster), and the noise is added **once**, on the client,
with the calibration of the in-memory functions. Only the privatised vector reaches the post-processing
(reduced-set solvers, weights), which never reads the data again.

:mod:`~dpkme.distributed.sources`
    :func:`open_source`: a numpy array, pandas / Dask DataFrame, Dask array, or a Parquet / CSV path with
    declared columns and bounds, as a :class:`DataSource` of row partitions; every partition is checked
    against the declared box when it is read (an error naming the column, or clipped on request).
    :func:`open_table_source`: a mixed table with a declared schema, encoded per partition
    (:func:`encode_partition`).
:mod:`~dpkme.distributed.sums`
    :func:`feature_sums`, :func:`kernel_row_sums`, :func:`cluster_sums`: the partial sums, reduced with
    ``client=None`` (Dask's local scheduler), a ``distributed.Client`` or a scheduler address.
:mod:`~dpkme.distributed.release`
    :func:`algorithm2` and :func:`algorithm1` over a source, with an explicit policy for the row count N, and
    :func:`release_table`: a mixed table with its declared schema applied partition by partition (Parquet, CSV,
    Dask DataFrames). All run the in-memory releases' one orchestration (:mod:`dpkme.release.core`) with the
    rows reached through :class:`DaskRows`.

Trust model: the workers read the raw rows of their partitions, so they must be inside the data owner's trust
boundary (as the machine of an in-memory release is); only public values (schema, feature maps, points, the
declared columns and bounds) are sent to them, and only sums, counts and owner-only cell counts come back.

Dask is imported lazily (``pip install dpkme[distributed]``); importing this package does not need it.
"""

from .release import N_POLICIES, DaskRows, algorithm1, algorithm2, release_table
from .sources import DataSource, encode_partition, open_source, open_table_source
from .sums import PartialSums, cluster_sums, count_rows, feature_sums, kernel_row_sums

__all__ = [
    "DataSource", "open_source", "open_table_source", "encode_partition",
    "PartialSums", "feature_sums", "kernel_row_sums", "cluster_sums", "count_rows",
    "DaskRows", "algorithm1", "algorithm2", "release_table", "N_POLICIES",
]
