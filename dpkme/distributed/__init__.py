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
:mod:`~dpkme.distributed.sums`
    :func:`feature_sums`, :func:`kernel_row_sums`, :func:`cluster_sums`: the partial sums, reduced with
    ``client=None`` (Dask's local scheduler), a ``distributed.Client`` or a scheduler address.
:mod:`~dpkme.distributed.release`
    :func:`algorithm2` and :func:`algorithm1` over a source, with an explicit policy for the row count N.

Dask is imported lazily (``pip install dpkme[distributed]``); importing this package does not need it.
"""

from .release import N_POLICIES, algorithm1, algorithm2
from .sources import DataSource, open_source
from .sums import PartialSums, cluster_sums, feature_sums, kernel_row_sums

__all__ = [
    "DataSource", "open_source",
    "PartialSums", "feature_sums", "kernel_row_sums", "cluster_sums",
    "algorithm1", "algorithm2", "N_POLICIES",
]
