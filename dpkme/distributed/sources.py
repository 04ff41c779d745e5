r"""Private tables as row partitions: numpy, pandas, Dask, Parquet and CSV, checked against declared bounds.

A :class:`DataSource` is a list of lazy row partitions (Dask delayed objects) of the **declared** columns,
plus the declared box :math:`[l, u] \subset \mathbb R^D` and whether to clip to it. Nothing is read when a
source is opened except the public layout (the column names of a file, the shape of an array); every
partition is read, converted to float64 and checked by :func:`load_partition` inside the task that sums
it, so the memory of a task is one partition (bounded: ``partition_rows`` rows, or a Parquet row group).

The check of a partition (the same rule as :func:`dpkme.privacy.sensitivity.enforce_domain`):

* a missing or non-finite value is an error naming its column and partition;
* a value outside the declared box is an error naming the column, the declared interval and the number
  of rows outside (the values themselves are never written into a message: messages end up in logs, and
  a private value must not), unless the caller asked ``clip=True``: then every row is clipped to the box
  coordinate-wise, :math:`x \mapsto \min(\max(x, l), u)`, a per-row map, so neighbouring tables stay
  neighbours and the guarantee holds for the original rows; the release records ``clip``.

The box must be public (declared from outside knowledge, never read off the data).

Task keys. Dask names a task by a hash of its inputs unless told otherwise; for in-memory rows that hash is
a fingerprint of the private data, visible to every client of a shared scheduler and written into a worker's
log with a failed task. The partitions of numpy and pandas inputs get random keys instead. A Dask collection
passed in keeps the names its creator gave it (``dask.array.from_array(X, name=False)`` for a random one).
"""

from __future__ import annotations

import os
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np

from .._validation import check_positive_int
from ..privacy.sensitivity import check_domain

__all__ = ["DataSource", "open_source", "open_table_source", "load_partition", "encode_partition", "cell_count_dict",
           "PartitionError", "reading_error", "DEFAULT_PARTITION_ROWS", "CELL_COUNTS"]

#: Rows per partition for in-memory inputs (numpy, pandas): 250 000 rows of 10 float64 columns are 20 MB.
DEFAULT_PARTITION_ROWS = 250_000
#: Bytes per partition of a CSV file (Dask's ``blocksize``).
DEFAULT_CSV_BLOCKSIZE = "64MB"


class PartitionError(ValueError):
    """A partition refused by :func:`load_partition`: the message names the column and the partition, never a value.

    Errors raised while a file is *read* (a parser's message may quote a cell) are replaced by a message
    of this class without the reader's text: inside the task for a CSV block (so that no worker log holds the
    cell), and by :func:`dpkme.distributed.sums.reduce_partitions` for other readers.
    """


def reading_error(exc: BaseException, columns) -> ValueError:
    """The error to raise instead of ``exc``, an error of a file reader (its message may quote a private cell).

    Parameters
    ----------
    exc : BaseException
        What the reader raised (only its type is used).
    columns : sequence of str
        The declared columns, named in the message.

    Returns
    -------
    ValueError
    """
    return ValueError(f"reading the data failed ({type(exc).__name__}); the reader's message is not shown because it "
                      "may quote private values. Check that every declared column holds numbers only (columns "
                      f"{list(columns)}) and that the file is complete.")


def _dask():
    try:
        import dask
        import dask.array
        import dask.dataframe
    except ImportError:  # pragma: no cover - exercised only without the extra
        raise ValueError("dpkme.distributed needs Dask: pip install 'dpkme[distributed]' (dask[dataframe], "
                         "distributed, tqdm).") from None
    return dask


@dataclass(frozen=True)
class DataSource:
    r"""A private table as lazy row partitions of declared columns, with a declared box.

    Made by :func:`open_source`. Reading a partition (:meth:`load`) converts it to a float64 array of
    the declared columns and checks it against ``bounds`` (:func:`load_partition`).

    Parameters
    ----------
    partitions : tuple
        Dask delayed objects, one per partition, each evaluating to a numpy array (rows x columns) or a
        pandas DataFrame holding the declared columns.
    columns : tuple of str
        The declared column names, in order: the coordinates :math:`1..D` of a row.
    bounds : (ndarray, ndarray) or None
        The declared box :math:`(l, u)`, each of length :math:`D`; ``None`` checks finiteness only.
    clip : bool
        Clip rows to the box instead of refusing values outside it.
    origin : str
        What was opened: ``"numpy"``, ``"pandas"``, ``"dask-array"``, ``"dask-dataframe"``,
        ``"parquet"`` or ``"csv"``.
    description : str, default ""
        A public description (a file name; never a statistic of the rows).
    schema : TableSchema, optional
        A declared table schema (:func:`open_table_source`): the partitions are raw tables of the schema's
        columns, and each is encoded by :func:`encode_partition` inside the task that sums it; the rows'
        coordinates are then the schema's embedding (``dim = schema.dim``).

    Examples
    --------
    >>> import numpy as np
    >>> src = open_source(np.zeros((10, 2)), bounds=(-1.0, 1.0), partition_rows=4)
    >>> src.dim, src.n_partitions, src.columns
    (2, 3, ('x1', 'x2'))
    """

    partitions: tuple
    columns: tuple
    bounds: tuple | None
    clip: bool
    origin: str
    description: str = field(default="")
    schema: Any = field(default=None)

    @property
    def dim(self) -> int:
        """:math:`D`, the number of declared columns (a table source: the schema's embedding dimension)."""
        return len(self.columns) if self.schema is None else int(self.schema.dim)

    @property
    def n_partitions(self) -> int:
        """Number of row partitions (public: it follows from the file layout or ``partition_rows``)."""
        return len(self.partitions)

    def to_dask_array(self):
        """The checked rows as one float64 Dask array with known chunk sizes (for owner-only evaluation).

        Each block is :func:`load_partition` of a partition; the chunk sizes are counted in one pass over
        the data (nothing is kept in memory), so row indexing works (:mod:`dpkme.evaluation`).

        Returns
        -------
        dask.array.Array
            Shape (N, D), one chunk per partition.
        """
        dask = _dask()
        load = dask.delayed(load_partition, pure=True)
        blocks = [dask.array.from_delayed(load(p, i, columns=self.columns, bounds=self.bounds, clip=self.clip),
                                          shape=(np.nan, self.dim), dtype=np.float64)
                  for i, p in enumerate(self.partitions)]
        try:
            return dask.array.concatenate(blocks, axis=0).compute_chunk_sizes()
        except PartitionError:
            raise
        except (ValueError, TypeError, OverflowError) as exc:
            raise reading_error(exc, self.columns) from None

    def public_record(self) -> dict:
        """What a release may record about the source: origin, columns, bounds and clip (all declared)."""
        return {"origin": self.origin, "columns": list(self.columns), "clip": bool(self.clip),
                "bounds": None if self.bounds is None else [self.bounds[0].tolist(), self.bounds[1].tolist()],
                **({} if self.schema is None else {"encoding": "declared table schema"})}


def load_partition(part, index: int, *, columns, bounds=None, clip: bool = False) -> np.ndarray:
    r"""One partition as a checked float64 array of the declared columns (runs inside a Dask task).

    Parameters
    ----------
    part : ndarray or pandas.DataFrame
        The partition's rows.
    index : int
        Its position among the partitions (named in error messages).
    columns : sequence of str
        The declared columns; a DataFrame must have them (numeric), an array exactly that many columns.
    bounds : (ndarray, ndarray), optional
        The declared box; values outside it are refused (or clipped with ``clip=True``).
    clip : bool, default=False
        Clip to the box instead of refusing.

    Returns
    -------
    ndarray (rows, D), float64, C-contiguous

    Raises
    ------
    ValueError
        A missing column, a non-numeric column, a missing or non-finite value (naming its column), or a
        value outside the box without ``clip`` (naming the column, the interval and the number of rows;
        never the value).

    Examples
    --------
    >>> import numpy as np
    >>> load_partition(np.array([[0.5, 3.0]]), 0, columns=["a", "b"], bounds=(np.zeros(2), np.ones(2)), clip=True)
    array([[0.5, 1. ]])
    """
    columns = list(columns)
    where = f"partition {index}"
    if hasattr(part, "columns") and hasattr(part, "iloc"):  # pandas DataFrame
        missing = [c for c in columns if c not in part.columns]
        if missing:
            raise PartitionError(f"{where} has no column(s) {missing}; the declared columns are {columns}.")
        cols = []
        for c in columns:
            s = part[c]
            if s.dtype.kind not in "biuf":
                raise PartitionError(f"column {c!r} is not numeric (dtype {s.dtype}) in {where}; declare numeric "
                                 "columns only (or encode the table with dpkme.schema first).")
            cols.append(s.to_numpy(dtype=np.float64, na_value=np.nan))
        X = np.column_stack(cols) if cols else np.zeros((len(part), 0))
    else:
        X = np.asarray(part)
        if X.ndim != 2 or X.shape[1] != len(columns):
            raise PartitionError(f"{where} has shape {X.shape}, expected (rows, {len(columns)}) for the declared "
                             f"columns {columns}.")
        if X.dtype.kind not in "biuf":
            raise PartitionError(f"{where} has dtype {X.dtype}; the data must be numeric.")
        X = X.astype(np.float64, copy=False)
    X = np.ascontiguousarray(X)
    bad = ~np.isfinite(X)
    if bad.any():
        j = int(np.flatnonzero(bad.any(axis=0))[0])
        raise PartitionError(f"column {columns[j]!r} has {int(bad[:, j].sum())} missing or non-finite value(s) in "
                         f"{where}; drop or impute them before the release (a declared rule, not one read off "
                         "the data).")
    if bounds is not None:
        lo, hi = bounds
        below, above = X < lo, X > hi
        if below.any() or above.any():
            if clip:
                return np.clip(X, lo, hi)
            out = below | above
            j = int(np.flatnonzero(out.any(axis=0))[0])
            side = "below its lower" if below[:, j].any() else "above its upper"
            raise PartitionError(
                f"column {columns[j]!r}: {int(out[:, j].sum())} row(s) of {where} lie {side} declared bound "
                f"(declared [{lo[j]:g}, {hi[j]:g}]; the values are not shown: they are private). The sensitivity "
                "assumes every row inside the declared box: declare a box that contains every possible row (from "
                "public knowledge), or ask for clipping (clip=True, --clip), which the release records.")
    return X


def _column_names(columns, dim: int) -> tuple:
    if columns is None:
        return tuple(f"x{j + 1}" for j in range(dim))
    columns = tuple(str(c) for c in columns)
    if len(columns) != dim:
        raise ValueError(f"{len(columns)} column name(s) {list(columns)} given for data with {dim} columns.")
    return columns


def _select(columns, available, what: str) -> tuple:
    available = [str(c) for c in available]
    if columns is None:
        if not available:
            raise ValueError(f"{what} has no columns.")
        return tuple(available)
    columns = tuple(str(c) for c in columns)
    if not columns:
        raise ValueError("columns is empty; declare at least one column.")
    missing = [c for c in columns if c not in available]
    if missing:
        raise ValueError(f"{what} has no column(s) {missing}; its columns are {available[:20]}"
                         f"{' ...' if len(available) > 20 else ''}.")
    if len(set(columns)) != len(columns):
        raise ValueError(f"columns {list(columns)} name a column twice.")
    return columns


def _parse_csv_block(block: bytes, header: bytes, index: int, *, sep: str, columns):
    """One block of a CSV file as a DataFrame of the declared columns (float64), inside the task that reads it.

    Every parse of the file's cells happens here, and a failure is re-raised as a :class:`PartitionError`
    without the parser's text (it quotes cells): a Dask worker logs the exception of every failed task.
    """
    import io

    import pandas as pd

    try:   # pyarrow's reader refuses a line with more or fewer fields than the header (pandas' C reader with
        # usecols would read it silently, its fields shifted)
        return pd.read_csv(io.BytesIO(header + block), sep=sep, usecols=list(columns),
                           dtype={c: np.float64 for c in columns}, engine="pyarrow")
    except Exception as exc:  # whatever the parser raised, its message may quote a cell
        raise PartitionError(f"reading the data failed ({type(exc).__name__} in partition {index} of the CSV); the reader's "
                             "message is not shown because it may quote private values. Check that every declared "
                             f"column holds numbers only (columns {list(columns)}) and that every line has the "
                             "header's fields.") from None


def _csv_partitions(dask, path: Path, columns, *, sep: str, blocksize, parse=None) -> tuple[tuple, tuple]:
    r"""(columns, partitions) of a CSV file: byte blocks split at line ends, each parsed in its own task.

    Only the header line is parsed here (the public layout); the blocks are read by
    :func:`dask.bytes.read_bytes` (a gzip file is one block) and parsed by :func:`_parse_csv_block` with the
    header prepended, like :func:`dask.dataframe.read_csv` but with no cell parsed on the client.
    """
    import io

    import pandas as pd
    from dask.bytes import read_bytes

    compression = "gzip" if path.name.lower().endswith(".gz") else None
    try:
        sample, blocks = read_bytes(str(path), delimiter=b"\n", blocksize=None if compression else blocksize,
                                    sample=1 << 20, compression=compression)
        header_line = sample.split(b"\n", 1)[0]
        available = pd.read_csv(io.BytesIO(header_line + b"\n"), sep=sep, nrows=0).columns
    except Exception as exc:  # the header is public, but a broken file's message is not useful
        raise ValueError(f"cannot read the header line of the CSV file {path.name!r} ({type(exc).__name__}); "
                         "check that it is a CSV file (or .csv.gz) whose first line names the columns.") from None
    cols = _select(columns, available, f"the CSV file {path.name!r}")
    header = header_line + b"\n"
    parse = dask.delayed(_parse_csv_block if parse is None else parse, pure=True)
    flat = [b for file_blocks in blocks for b in file_blocks]
    parts = tuple(parse(block, b"" if i == 0 else header, i, sep=sep, columns=cols) for i, block in enumerate(flat))
    return cols, parts


def _is_path(data) -> bool:
    return isinstance(data, (str, os.PathLike))


def open_source(data, *, columns=None, bounds=None, clip: bool = False,
                partition_rows: int = DEFAULT_PARTITION_ROWS, csv_blocksize=DEFAULT_CSV_BLOCKSIZE) -> DataSource:
    r"""Open private data as a :class:`DataSource` of row partitions (nothing private is read here).

    Parameters
    ----------
    data : ndarray, pandas.DataFrame, dask Array, dask DataFrame, DataSource, str or path
        The private rows. A path ending in ``.parquet`` / ``.pq`` (or a folder of Parquet files) is read
        with :func:`dask.dataframe.read_parquet` (one partition per row group: write large files with row
        groups of a bounded size, e.g. ``row_group_size=500_000``), ``.csv`` /
        ``.csv.gz`` / ``.tsv`` in byte blocks of ``csv_blocksize`` split at line ends (a gzip file is one
        block), each parsed inside its own task (only the header line is parsed here, and a parser's error,
        which may quote a cell, is replaced by one that does not: a Dask worker logs every failed task's
        error); only the declared columns are read. A :class:`DataSource` is returned as is (its own
        columns and bounds; passing others is an error).
    columns : sequence of str, optional
        The declared columns, in order. Frames and files: a subset of their columns (default: all, each
        must be numeric); arrays: their names (default ``x1 .. xD``).
    bounds : (lower, upper), optional
        The declared box: two numbers or two length-:math:`D` vectors
        (:func:`dpkme.privacy.sensitivity.check_domain`). ``None`` checks finiteness only.
    clip : bool, default=False
        Clip rows to the box instead of refusing values outside it (needs ``bounds``).
    partition_rows : int, default=DEFAULT_PARTITION_ROWS
        Rows per partition of in-memory inputs (numpy, pandas); Dask inputs keep their own partitions.
    csv_blocksize : str or int, default=DEFAULT_CSV_BLOCKSIZE
        Bytes per partition of a CSV file.

    Returns
    -------
    DataSource

    Examples
    --------
    >>> import numpy as np, pandas as pd
    >>> src = open_source(pd.DataFrame({"a": [0.1, 0.2], "b": [1, 2], "c": ["x", "y"]}), columns=["a", "b"],
    ...                   bounds=([0, 0], [1, 5]))
    >>> src.origin, src.columns, src.n_partitions
    ('pandas', ('a', 'b'), 1)
    """
    if isinstance(data, DataSource):
        if columns is not None or bounds is not None or clip:
            raise ValueError("data is already a DataSource with its own columns and bounds; do not pass columns, "
                             "bounds or clip again.")
        return data
    if not isinstance(clip, (bool, np.bool_)):
        raise ValueError(f"clip must be True or False, got {clip!r:.60}.")
    if clip and bounds is None:
        raise ValueError("clip=True needs declared bounds (lower, upper) to clip to.")
    partition_rows = check_positive_int(partition_rows, name="partition_rows")
    dask = _dask()
    da, dd = dask.array, dask.dataframe
    description = ""
    if _is_path(data):
        path = Path(data)
        name = path.name.lower()
        description = path.name
        if not path.exists():
            raise ValueError(f"data file {str(path)!r} not found; check the path.")
        if name.endswith((".parquet", ".pq")) or (path.is_dir() and any(path.glob("*.parquet"))):
            origin = "parquet"
            meta = dd.read_parquet(str(path))
            cols = _select(columns, meta.columns, f"the Parquet data {path.name!r}")
            ddf = dd.read_parquet(str(path), columns=list(cols), split_row_groups=True)  # a task per row group
        elif name.endswith((".csv", ".csv.gz", ".tsv", ".txt")):
            origin = "csv"
            cols, parts = _csv_partitions(dask, path, columns, sep="\t" if name.endswith(".tsv") else ",",
                                          blocksize=csv_blocksize)
        else:
            raise ValueError(f"cannot tell the format of {path.name!r}: name it .parquet (or a folder of .parquet "
                             "files), .csv, .csv.gz or .tsv.")
        if origin == "parquet":
            parts = tuple(ddf[list(cols)].to_delayed())
    elif isinstance(data, dd.DataFrame):
        origin = "dask-dataframe"
        cols = _select(columns, data.columns, "the Dask DataFrame")
        parts = tuple(data[list(cols)].to_delayed())
    elif isinstance(data, da.Array):
        origin = "dask-array"
        if data.ndim != 2:
            raise ValueError(f"the Dask array must be 2-D (rows x columns), got {data.ndim}-D.")
        cols = _column_names(columns, int(data.shape[1]))
        arr = data.rechunk({1: -1}) if data.numblocks[1] != 1 else data
        parts = tuple(arr.to_delayed().ravel())
    elif hasattr(data, "columns") and hasattr(data, "iloc"):
        origin = "pandas"
        cols = _select(columns, data.columns, "the DataFrame")
        frame = data[list(cols)]
        # pure=False: a random task key, never a hash of the private rows (the scheduler shows keys to every
        # client of a shared cluster, and a worker logs the key of a failed task)
        parts = tuple(dask.delayed(frame.iloc[s:s + partition_rows], pure=False)
                      for s in range(0, max(len(frame), 1), partition_rows))
    else:
        origin = "numpy"
        X = np.asarray(data)
        if X.ndim != 2:
            raise ValueError(f"data must be a 2-D array (rows x columns), got shape {X.shape}.")
        cols = _column_names(columns, X.shape[1])
        parts = tuple(da.from_array(X, chunks=(partition_rows, X.shape[1]), name=False)   # a random name, not
                      .to_delayed().ravel())                                              # a hash of the rows
    if bounds is not None:
        bounds = check_domain(bounds, len(cols))
    return DataSource(partitions=parts, columns=tuple(cols), bounds=bounds, clip=bool(clip), origin=origin,
                      description=description)


# ----------------------------------------------------------------------------------- mixed tables
#: The cell counts of :meth:`dpkme.schema.TableSchema.encode_report`, per column, in this order.
CELL_COUNTS = ("missing", "unknown", "clipped_low", "clipped_high", "rounded")


def encode_partition(part, index: int, *, schema) -> tuple[np.ndarray, np.ndarray]:
    r"""One partition of a table encoded with its declared schema, and its cell counts (runs inside a Dask task).

    The encoding is :meth:`dpkme.schema.TableSchema.encode` (each row validated, clipped to the declared bounds
    and embedded on its own), so the partitions of a table encode to the rows of the whole table's encoding.
    The counts of the cells it changed are returned as a vector (added over the partitions like the sums; see
    :func:`cell_count_dict`); **owner-only**. A cell the schema refuses is an error naming the partition and
    the column, never the cell: the encoder's own message quotes it, and a Dask worker logs every failed task.

    Parameters
    ----------
    part : pandas.DataFrame
        The partition's rows (the schema's columns; others are ignored).
    index : int
        Its position among the partitions (named in error messages).
    schema : TableSchema
        The declared schema.

    Returns
    -------
    rows : ndarray (rows, schema.dim)
    counts : ndarray of int64 (len(schema) * len(CELL_COUNTS),)

    Examples
    --------
    >>> import pandas as pd
    >>> from dpkme.schema import ColumnSpec, TableSchema
    >>> schema = TableSchema([ColumnSpec("x", "continuous", lower=0, upper=1)])
    >>> X, counts = encode_partition(pd.DataFrame({"x": [0.5, 2.0]}), 0, schema=schema)
    >>> X.shape, cell_count_dict(schema, counts)["x"]["clipped_high"]
    ((2, 1), 1)
    """
    names = list(schema.names)
    empty = np.zeros(len(names) * len(CELL_COUNTS), dtype=np.int64)
    if not (hasattr(part, "columns") and hasattr(part, "iloc")):
        raise PartitionError(f"partition {index} is not a table (got {type(part).__name__}); a declared schema "
                             "encodes pandas / Dask DataFrames, Parquet and CSV files.")
    if len(part) == 0:
        return np.zeros((0, int(schema.dim))), empty
    try:
        Z, report = schema._encode(part)      # encode() and encode_report() in one pass
    except ValueError as exc:
        text = str(exc)
        col = next((n for n in names if f'"{n}"' in text or f"'{n}'" in text), None)
        where = f"column {col!r} of partition {index}" if col is not None else f"partition {index}"
        raise PartitionError(f"the declared schema refused a cell in {where}; the encoder's message is not shown "
                             "because it may quote private values (run 'dpkme schema check' on the table, as its "
                             "owner, to see it), and fix the cells or the schema.") from None
    counts = np.array([int(report.counts.get(n, {}).get(k, 0)) for n in names for k in CELL_COUNTS],
                      dtype=np.int64)
    return np.ascontiguousarray(Z, dtype=np.float64), counts


def cell_count_dict(schema, counts) -> dict:
    """The summed cell-count vector of :func:`encode_partition` as ``{column: {count: n}}`` (owner-only).

    Parameters
    ----------
    schema : TableSchema
        The declared schema.
    counts : ndarray or None
        The vector (``None``: no partition had rows; all zero).

    Returns
    -------
    dict
    """
    names = list(schema.names)
    v = np.zeros(len(names) * len(CELL_COUNTS), dtype=np.int64) if counts is None else np.asarray(counts)
    return {n: {k: int(v[i * len(CELL_COUNTS) + j]) for j, k in enumerate(CELL_COUNTS)} for i, n in enumerate(names)}


def _parse_table_csv_block(block: bytes, header: bytes, index: int, *, sep: str, columns):
    """One block of a CSV file as a DataFrame of the schema's columns (types inferred), inside its task."""
    import io

    import pandas as pd

    try:
        return pd.read_csv(io.BytesIO(header + block), sep=sep, usecols=list(columns), engine="python"
                           if sep not in (",", "\t", ";", "|") else "c", on_bad_lines="error")
    except Exception as exc:  # whatever the parser raised, its message may quote a cell
        raise PartitionError(f"reading the data failed ({type(exc).__name__} in partition {index} of the CSV); the "
                             "reader's message is not shown because it may quote private values. Check that every "
                             "line has the header's fields.") from None


def open_table_source(data, *, schema, partition_rows: int = DEFAULT_PARTITION_ROWS,
                      csv_blocksize=DEFAULT_CSV_BLOCKSIZE) -> DataSource:
    r"""Open a private mixed table as a :class:`DataSource` encoded partition by partition with a declared schema.

    Nothing private is read here (only the column names of a file). Each partition is read and encoded by
    :func:`encode_partition` inside the task that sums it: the declared schema applied per partition, the
    cells it changes counted (owner-only), a refused cell named by column and partition only. Trust model:
    the workers see the raw rows of their partitions; only the public schema and feature maps are sent to
    them.

    Parameters
    ----------
    data : pandas.DataFrame, dask DataFrame, DataSource, str or path
        The private table: a path ending in ``.parquet`` / ``.pq`` (or a folder of Parquet files; one
        partition per row group), ``.csv`` / ``.csv.gz`` / ``.tsv`` (byte blocks of ``csv_blocksize`` split
        at line ends, each parsed with pandas' type inference inside its task), a Dask DataFrame (its own
        partitions) or a pandas DataFrame (``partition_rows`` rows per partition). A table source is returned
        as is.
    schema : TableSchema
        The declared schema; its columns must be in the table.
    partition_rows : int, default=DEFAULT_PARTITION_ROWS
        Rows per partition of a pandas DataFrame.
    csv_blocksize : str or int, default=DEFAULT_CSV_BLOCKSIZE
        Bytes per partition of a CSV file.

    Returns
    -------
    DataSource
        With ``schema`` set and ``columns`` the schema's names.

    Examples
    --------
    >>> import pandas as pd
    >>> from dpkme.schema import ColumnSpec, TableSchema
    >>> schema = TableSchema([ColumnSpec("x", "continuous", lower=0, upper=1),
    ...                       ColumnSpec("c", "categorical", categories=["a", "b"])])
    >>> src = open_table_source(pd.DataFrame({"x": [0.1, 0.9], "c": ["a", "b"]}), schema=schema)
    >>> src.origin, src.columns, src.dim
    ('pandas', ('x', 'c'), 3)
    """
    if isinstance(data, DataSource):
        if data.schema is None:
            raise ValueError("data is a numeric DataSource (open_source); open the table with open_table_source.")
        return data
    if not hasattr(schema, "encode") or not hasattr(schema, "names"):
        raise ValueError(f"schema must be a dpkme.schema.TableSchema, got {type(schema).__name__}.")
    partition_rows = check_positive_int(partition_rows, name="partition_rows")
    dask = _dask()
    dd = dask.dataframe
    names = tuple(str(n) for n in schema.names)
    description = ""
    if _is_path(data):
        path = Path(data)
        name = path.name.lower()
        description = path.name
        if not path.exists():
            raise ValueError(f"data file {str(path)!r} not found; check the path.")
        if name.endswith((".parquet", ".pq")) or (path.is_dir() and any(path.glob("*.parquet"))):
            origin = "parquet"
            meta = dd.read_parquet(str(path))
            cols = _select(names, meta.columns, f"the Parquet data {path.name!r}")
            parts = tuple(dd.read_parquet(str(path), columns=list(cols), split_row_groups=True).to_delayed())
        elif name.endswith((".csv", ".csv.gz", ".tsv", ".txt")):
            origin = "csv"
            cols, parts = _csv_partitions(dask, path, names, sep="\t" if name.endswith(".tsv") else ",",
                                          blocksize=csv_blocksize, parse=_parse_table_csv_block)
        else:
            raise ValueError(f"cannot tell the format of {path.name!r}: name it .parquet (or a folder of .parquet "
                             "files), .csv, .csv.gz or .tsv.")
    elif isinstance(data, dd.DataFrame):
        origin = "dask-dataframe"
        cols = _select(names, data.columns, "the Dask DataFrame")
        parts = tuple(data[list(cols)].to_delayed())
    elif hasattr(data, "columns") and hasattr(data, "iloc"):
        origin = "pandas"
        cols = _select(names, data.columns, "the DataFrame")
        frame = data[list(cols)]
        # pure=False: a random task key, never a hash of the private rows
        parts = tuple(dask.delayed(frame.iloc[s:s + partition_rows], pure=False)
                      for s in range(0, max(len(frame), 1), partition_rows))
    else:
        raise ValueError(f"a table release takes a pandas or Dask DataFrame, or a Parquet / CSV path, got "
                         f"{type(data).__name__}.")
    return DataSource(partitions=parts, columns=tuple(cols), bounds=None, clip=False, origin=origin,
                      description=description, schema=schema)
