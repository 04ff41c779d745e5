"""Loading and validating tables: the paper's ``.npz`` files and user uploads.

Everything here works on bytes in memory: :func:`load_table` parses an upload
from :class:`io.BytesIO`/:class:`io.StringIO` and never writes to disk, logs or
prints file content. All problems are reported as :class:`ValueError` with a
message that says what is wrong and what to do (a user interface can show it
as is).

Typical flow of a data page::

    df = load_table(uploaded_bytes, filename="patients.csv")     # or dpkme.datasets.load_sample("wine")[0]
    preview = nonprivate_summary(df)      # owner's eyes only -- never fed to a release
    X = numeric_matrix(df, ["age", "bmi"])  # float64 (N, D), refuses text and missing cells

Privacy note: loading and validating only look at the data to refuse malformed
input; the error messages (which may quote a cell) and :func:`nonprivate_summary`
are meant for the data owner, not for publication.
"""

from __future__ import annotations

import codecs
import csv
import io
import os
import re
import zipfile
from collections.abc import Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any

import numpy as np

from ._validation import MAX_ABS_VALUE, _short, check_array, check_positive_int, identifier_reason

if TYPE_CHECKING:  # pandas is imported where it is used: it is slow to import
    import pandas as pd

__all__ = [
    "identifier_reason",
    "load_npz",
    "load_table",
    "numeric_matrix",
    "numeric_columns",
    "nonprivate_summary",
    "MAX_UPLOAD_BYTES",
    "MAX_ROWS",
    "MAX_COLUMNS",
    "MIN_ROWS",
]

#: Largest accepted upload, in bytes (50 MB). Parsing holds the raw bytes, the
#: decoded text and the parsed frame in memory at once (roughly 5-10 times the
#: file size), and a CSV of 1 000 000 rows x 10 numbers fits well within it.
#: Keep Streamlit's ``server.maxUploadSize`` (in MB) at or below this value.
MAX_UPLOAD_BYTES = 50 * 1024 * 1024

#: Largest accepted number of data rows (1 000 000). Exact kernel mean
#: embeddings cost O(N * M) kernel evaluations, so larger tables make an
#: interactive release too slow; subsample publicly (a random subset whose
#: selection does not depend on the values) before uploading.
MAX_ROWS = 1_000_000

#: Largest accepted number of columns (200). Kernel mean embeddings with
#: translation-invariant kernels lose resolution quickly with the dimension;
#: and the header is checked against this limit *before* the file is parsed,
#: so a header with millions of fields is refused cheaply.
MAX_COLUMNS = 200

#: Smallest accepted number of data rows (2): a single record cannot be
#: released meaningfully and almost always means a parsing problem.
MIN_ROWS = 2

# Candidate field separators, in order of preference on ties.
_DELIMITERS = (",", ";", "\t", "|")
_DELIM_NAMES = {",": "comma", ";": "semicolon", "\t": "tab", "|": "pipe", r"\s+": "whitespace"}
# Number of leading lines inspected to choose the delimiter.
_SNIFF_LINES = 50
# Cell texts (after strip/lower) treated as missing values.
_MISSING_TOKENS = {"", "na", "nan", "n/a", "null", "none", "<na>", "#n/a", "-nan"}
_NUMBER_RE = re.compile(r"^[+-]?(\d+\.?\d*|\.\d+)([eE][+-]?\d+)?$")
_COMMA_DECIMAL_RE = re.compile(r"^[+-]?\d+,\d+$")
_DOT_DECIMAL_RE = re.compile(r"^[+-]?\d*\.\d+([eE][+-]?\d+)?$")


# ----------------------------------------------------------------------------
# .npz (the paper's data files)
# ----------------------------------------------------------------------------
def load_npz(source, *, key: str = "X_private") -> np.ndarray:
    """Load one array from a NumPy ``.npz`` file, e.g. the paper's data sets.

    Parameters
    ----------
    source : str, os.PathLike or bytes
        Path of the file, or its content (an upload). Pickled objects are
        refused (``allow_pickle=False``).
    key : str, default="X_private"
        Name of the array inside the archive (the paper's files use ``X_private``).

    Returns
    -------
    X : ndarray (N, D), float64
        Validated by :func:`dpkme._validation.check_array` (2-D, finite, numeric).

    Raises
    ------
    ValueError
        Missing file, not an ``.npz`` archive, ``key`` absent (the message lists
        the keys present), or an invalid array.
    """
    if isinstance(source, (bytes, bytearray, memoryview)):
        data = bytes(source)
        if not data:
            raise ValueError("the .npz content is empty (0 bytes); upload the file again.")
        if len(data) > MAX_UPLOAD_BYTES:
            raise ValueError(_too_large_message(len(data), MAX_UPLOAD_BYTES))
        handle: Any = io.BytesIO(data)
        where = "the uploaded .npz content"
    else:
        try:
            path = Path(os.fspath(source))
        except TypeError:
            raise ValueError(f"source must be a path or bytes, got {_short(source)}.") from None
        if not path.is_file():
            raise ValueError(f"no such file: {str(path)!r}; check the path (and that it is not a folder).")
        handle = path
        where = repr(str(path))
    try:
        archive = np.load(handle, allow_pickle=False)
    except (ValueError, OSError, EOFError, zipfile.BadZipFile) as exc:
        raise ValueError(f"{where} is not a readable NumPy .npz file ({type(exc).__name__}).") from None
    if not isinstance(archive, np.lib.npyio.NpzFile):
        raise ValueError(
            f"{where} is a single .npy array, not an .npz archive; save it with numpy.savez(path, {key}=X)."
        )
    with archive:
        keys = list(archive.files)
        if key not in keys:
            raise ValueError(
                f"{where} has no array named {key!r}; available keys: {keys}. Pass key=<one of them>."
            )
        try:
            arr = archive[key]
        except ValueError as exc:  # object arrays need pickle
            raise ValueError(f"array {key!r} in {where} cannot be read without pickle ({exc}).") from None
    return check_array(arr, name=f"array {key!r}")


# ----------------------------------------------------------------------------
# uploads
# ----------------------------------------------------------------------------
def _fmt_bytes(n: int) -> str:
    if n >= 1024 * 1024:
        return f"{n / (1024 * 1024):.1f} MB"
    if n >= 1024:
        return f"{n / 1024:.1f} kB"
    return f"{n} bytes"


def _too_large_message(n_bytes: int, limit: int) -> str:
    return (
        f"the file is {_fmt_bytes(n_bytes)}, more than the limit of {_fmt_bytes(limit)}; "
        "keep only the columns you need or upload a random subsample."
    )


_MAGIC = [
    (b"\xd0\xcf\x11\xe0\xa1\xb1\x1a\xe1", "an Excel .xls (or other Microsoft Office) file"),
    (b"%PDF", "a PDF document"),
    (b"\x89PNG", "a PNG image"),
    (b"\xff\xd8\xff", "a JPEG image"),
    (b"GIF8", "a GIF image"),
    (b"\x1f\x8b", "a gzip-compressed file"),
    (b"BZh", "a bzip2-compressed file"),
    (b"\xfd7zXZ\x00", "an xz-compressed file"),
    (b"7z\xbc\xaf\x27\x1c", "a 7-Zip archive"),
    (b"\x93NUMPY", "a NumPy .npy file"),
    (b"SQLite format 3\x00", "an SQLite database"),
]
_SAVE_AS_CSV = (
    "Open it in a spreadsheet program and use 'Save As' > 'CSV UTF-8 (comma delimited)', "
    "then upload the .csv file."
)


def _refuse_binary_formats(data: bytes, filename: str) -> None:
    """Recognise common non-table formats by their magic bytes."""
    lower = filename.lower()
    if data.startswith(b"PK\x03\x04") or data.startswith(b"PK\x05\x06"):
        kind = "an archive in ZIP format"
        try:
            names = zipfile.ZipFile(io.BytesIO(data)).namelist()
        except zipfile.BadZipFile:
            names = []
        if any(n.startswith("xl/") for n in names) or lower.endswith((".xlsx", ".xlsm", ".xltx")):
            raise ValueError(f"{filename!r} is an Excel workbook (.xlsx), not a text table. {_SAVE_AS_CSV}")
        if "content.xml" in names or lower.endswith(".ods"):
            raise ValueError(f"{filename!r} is an OpenDocument spreadsheet (.ods). {_SAVE_AS_CSV}")
        if names and all(n.endswith(".npy") for n in names):
            raise ValueError(f"{filename!r} is a NumPy .npz archive; load it with dpkme.io.load_npz instead.")
        raise ValueError(f"{filename!r} is {kind}; extract the CSV file from it and upload that.")
    for magic, kind in _MAGIC:
        if data.startswith(magic):
            if magic.startswith(b"\xd0\xcf"):
                raise ValueError(f"{filename!r} is {kind}, not a text table. {_SAVE_AS_CSV}")
            raise ValueError(
                f"{filename!r} is {kind}, not a CSV/TSV/Parquet table; upload the table as CSV."
            )


def _decode(data: bytes, filename: str, encoding: str | None) -> tuple[str, str]:
    """Decode bytes to text; UTF-8 (with or without BOM) and BOM-marked UTF-16 by default."""
    if encoding is not None:
        try:
            codecs.lookup(encoding)
        except LookupError:
            raise ValueError(f"unknown text encoding {encoding!r}; use e.g. 'utf-8', 'latin-1' or 'cp1252'.") from None
        try:
            return data.decode(encoding), encoding
        except UnicodeDecodeError as exc:
            raise ValueError(
                f"{filename!r} is not valid {encoding} text (byte {data[exc.start:exc.start + 1]!r} at "
                f"offset {exc.start}); choose the right encoding."
            ) from None
    if data.startswith((codecs.BOM_UTF16_LE, codecs.BOM_UTF16_BE)):
        try:
            return data.decode("utf-16"), "utf-16"
        except UnicodeDecodeError:
            raise ValueError(f"{filename!r} starts with a UTF-16 mark but is not valid UTF-16 text.") from None
    if b"\x00" in data[:65536]:
        raise ValueError(
            f"{filename!r} contains NUL bytes: it is a binary file, not a CSV/TSV text table "
            "(if it is a spreadsheet, save it as CSV UTF-8; if it is Parquet, name it .parquet)."
        )
    try:
        return data.decode("utf-8-sig"), "utf-8"
    except UnicodeDecodeError as exc:
        bad = data[exc.start:exc.start + 1]
        line = data.count(b"\n", 0, exc.start) + 1
        raise ValueError(
            f"{filename!r} is not UTF-8 text: byte {bad!r} on line {line} (offset {exc.start}) is invalid. "
            "Re-save the file as 'CSV UTF-8', or, if you know its encoding (often 'latin-1' or 'cp1252' "
            "for files from older spreadsheet programs), pass it explicitly as encoding=... ."
        ) from None


def _check_text_is_table(text: str, filename: str) -> None:
    sample = text[:65536]
    ctrl = sum(1 for ch in sample if (ord(ch) < 32 and ch not in "\t\n\r\f") or ch == "\x7f")
    if ctrl:
        raise ValueError(
            f"{filename!r} contains {ctrl} control character(s) in its first {len(sample)} characters: "
            "it looks like a binary file, not a CSV/TSV text table."
        )
    if "\ufffd" in sample:
        raise ValueError(
            f"{filename!r} contains the replacement character U+FFFD: the text was already corrupted by "
            "a wrong encoding conversion; export it again as CSV UTF-8."
        )


def _first_line(text: str) -> str:
    end = text.find("\n")
    return (text if end < 0 else text[:end]).rstrip("\r")


def _count_fields(line: str, delim: str) -> int:
    try:
        return len(next(csv.reader([line], delimiter=delim), [""]))
    except csv.Error:
        return line.count(delim) + 1


def _choose_delimiter(lines: list[str], filename: str) -> str:
    """Pick the delimiter that splits the sampled lines into the same number (> 1) of fields."""
    lower = filename.lower()
    order = list(_DELIMITERS)
    if lower.endswith((".tsv", ".tab")):
        order.remove("\t")
        order.insert(0, "\t")
    best, best_score = None, (0, 0.0)
    for d in order:
        try:
            rows = list(csv.reader(lines, delimiter=d))
        except csv.Error:
            continue
        counts = [len(r) for r in rows if r]
        if not counts or counts[0] < 2:
            continue
        consistent = sum(c == counts[0] for c in counts) / len(counts)
        score = (1 if consistent == 1.0 else 0, consistent * counts[0])
        if score > best_score:
            best, best_score = d, score
    if best is not None:
        return best
    # Whitespace-separated text (e.g. .dat/.txt exports): every line splits into the same number > 1 of tokens.
    tokens = [len(line.split()) for line in lines if line.strip()]
    if tokens and tokens[0] > 1 and all(t == tokens[0] for t in tokens) and '"' not in "".join(lines):
        return r"\s+"
    return ","


def _is_number(token: str) -> bool:
    return bool(_NUMBER_RE.match(token.strip()))


def load_table(
    data: bytes,
    *,
    filename: str,
    max_bytes: int = MAX_UPLOAD_BYTES,
    max_rows: int = MAX_ROWS,
    max_cols: int = MAX_COLUMNS,
    encoding: str | None = None,
) -> pd.DataFrame:
    """Parse an uploaded table (CSV, TSV or Parquet) held in memory.

    Nothing is written to disk and no content is logged.

    **Format.** Parquet is recognised by its magic bytes (``PAR1``) whatever
    the file name; everything else is read as delimited text. Excel
    (``.xlsx``/``.xls``), OpenDocument, ZIP/gzip archives, images, PDFs and
    other binary files are refused with advice to save the table as CSV.

    **Text decoding.** UTF-8 (a byte-order mark is ignored) and UTF-16 with a
    byte-order mark are accepted. Other encodings are *not* guessed (a guess
    would silently corrupt accented names): the error says where the first
    invalid byte is; pass ``encoding="latin-1"`` (or ``"cp1252"``, ...) if you
    know the file's encoding.

    **Delimiter.** Comma, semicolon, tab or pipe, whichever splits the first 50
    lines into the same number (more than one) of fields (tab is preferred for
    ``.tsv``); whitespace-separated text is accepted when every sampled line
    has the same number of tokens. With a semicolon/tab/pipe delimiter, a
    decimal comma (``1,5``) is recognised when no decimal points are present.

    **Header.** The first line is the header unless all its fields are
    numbers; the columns are then named ``column_1``, ``column_2``, ...

    **Columns.** A table may hold text columns only (e.g. categories, for a
    mixed table with a declared schema, :mod:`dpkme.schema`); the numeric
    path refuses it later, with its own message (:func:`numeric_matrix`). A
    single column is read when it is numeric or plainly one column (a header
    of one name without separator characters); otherwise the delimiter was
    not recognised and the file is refused.

    Parameters
    ----------
    data : bytes
        File content.
    filename : str
        Original file name (used for the extension and in messages only).
    max_bytes, max_rows, max_cols : int
        Limits (defaults :data:`MAX_UPLOAD_BYTES`, :data:`MAX_ROWS`,
        :data:`MAX_COLUMNS`). The size and the header width are checked before
        the table is parsed; at most ``max_rows + 1`` rows are ever parsed.
    encoding : str, optional
        Text encoding declared by the user; ``None`` means UTF-8 (or UTF-16
        with a byte-order mark).

    Returns
    -------
    pandas.DataFrame
        With at least :data:`MIN_ROWS` rows (numeric or text columns).
        ``df.attrs["dpkme"]`` describes how it was read: ``filename``,
        ``format`` (``"csv"`` or ``"parquet"``), and for text ``encoding``,
        ``delimiter``, ``decimal``, ``header`` (bool), ``first_data_line`` and,
        if any, ``dropped_empty_columns`` (unnamed, entirely empty columns
        created by a trailing delimiter) -- never content.

    Raises
    ------
    ValueError
        Empty or too large file; binary, Excel or other non-table content;
        undecodable text; a single text column whose header holds separator
        characters (wrong delimiter); too many columns or rows; fewer than
        :data:`MIN_ROWS` data rows; a malformed line.
    """
    if isinstance(data, (bytearray, memoryview)):
        data = bytes(data)
    if not isinstance(data, bytes):
        raise ValueError(f"data must be the file content as bytes, got {type(data).__name__}.")
    if not isinstance(filename, str):
        raise ValueError(f"filename must be a string, got {_short(filename)}.")
    name = os.path.basename(filename) or "upload"
    max_bytes = check_positive_int(max_bytes, name="max_bytes")
    max_rows = check_positive_int(max_rows, name="max_rows", minimum=MIN_ROWS)
    max_cols = check_positive_int(max_cols, name="max_cols")

    if len(data) == 0 or not data.strip():
        raise ValueError(f"{name!r} is empty; upload a table with a header line and at least {MIN_ROWS} data rows.")
    if len(data) > max_bytes:
        raise ValueError(_too_large_message(len(data), max_bytes))

    if data.startswith(b"PAR1"):
        df = _read_parquet(data, name, max_rows=max_rows, max_cols=max_cols)
        meta = {"filename": name, "format": "parquet"}
    elif name.lower().endswith((".parquet", ".pq")):
        raise ValueError(f"{name!r} is named like a Parquet file but does not start with the Parquet marker 'PAR1'.")
    else:
        _refuse_binary_formats(data, name)
        df, meta = _read_text(data, name, max_rows=max_rows, max_cols=max_cols, encoding=encoding)

    _check_frame(df, name, max_rows=max_rows, max_cols=max_cols, header=meta.get("header", True))
    df.attrs["dpkme"] = meta
    return df


def _read_parquet(data: bytes, name: str, *, max_rows: int, max_cols: int) -> pd.DataFrame:
    try:
        import pyarrow as pa
        import pyarrow.parquet as pq
    except ImportError:  # pragma: no cover - pyarrow is a runtime dependency
        raise ValueError("reading Parquet needs the 'pyarrow' package; upload the table as CSV instead.") from None
    try:
        pf = pq.ParquetFile(pa.BufferReader(data))
        n_rows, n_cols = pf.metadata.num_rows, len(pf.schema_arrow.names)
    except Exception as exc:  # pyarrow raises several exception types for corrupt files
        raise ValueError(f"{name!r} is not a readable Parquet file ({type(exc).__name__}).") from None
    if n_cols > max_cols:
        raise ValueError(_too_many_columns_message(n_cols, max_cols))
    if n_rows > max_rows:
        raise ValueError(_too_many_rows_message(n_rows, max_rows, exact=True))
    try:
        return pf.read().to_pandas()
    except Exception as exc:
        raise ValueError(f"{name!r} could not be converted to a table ({type(exc).__name__}: {exc}).") from None


def _too_many_columns_message(n_cols: int, max_cols: int) -> str:
    return (
        f"the table has {n_cols} columns, more than the limit of {max_cols}; "
        "keep only the columns you want to release before uploading."
    )


def _too_many_rows_message(n_rows: int, max_rows: int, *, exact: bool) -> str:
    count = f"{n_rows}" if exact else f"more than {max_rows}"
    return (
        f"the table has {count} data rows; the limit is {max_rows}. "
        "Upload a random subsample (chosen without looking at the values)."
    )


def _read_text(data: bytes, name: str, *, max_rows: int, max_cols: int, encoding: str | None):
    import pandas as pd

    text, used_encoding = _decode(data, name, encoding)
    _check_text_is_table(text, name)
    text = text.lstrip("\ufeff")
    # Universal newlines: CRLF (Windows) and lone CR (classic Mac) both end a line.
    text = text.replace("\r\n", "\n").replace("\r", "\n")
    # Skip leading blank lines so that the header is the first non-empty line.
    stripped = text.lstrip("\r\n")
    header = _first_line(stripped)
    # Excel may write a first line "sep=;" that declares the delimiter.
    forced = re.fullmatch(r"sep=(.)", header.strip())
    if forced:
        stripped = stripped[len(header) + 1:].lstrip("\n")
        header = _first_line(stripped)

    # Cheap width check on the header alone, before anything else is parsed.
    rough = max(header.count(d) for d in _DELIMITERS) + 1
    if rough > max_cols:
        widest = max(_DELIMITERS, key=header.count)
        n_fields = _count_fields(header, widest)
        if n_fields > max_cols:
            raise ValueError(_too_many_columns_message(n_fields, max_cols))

    sample_lines = []
    pos = 0
    while len(sample_lines) < _SNIFF_LINES and pos < len(stripped):
        end = stripped.find("\n", pos)
        end = len(stripped) if end < 0 else end
        line = stripped[pos:end].rstrip("\r")
        if line.strip():
            sample_lines.append(line)
        pos = end + 1
    if not sample_lines:
        if forced:
            raise ValueError(f"{name!r} has no lines after the delimiter declaration; upload the whole table.")
        # e.g. only a byte-order mark and blank lines: nothing but an encoding marker
        raise ValueError(f"{name!r} is empty; upload a table with a header line and at least {MIN_ROWS} data rows.")
    delim = forced.group(1) if forced else _choose_delimiter(sample_lines, name)
    delim_name = _DELIM_NAMES.get(delim, repr(delim))

    if delim == r"\s+":
        fields = sample_lines[0].split()
        body = [tok for line in sample_lines[1:] for tok in line.split()]
    else:
        try:
            rows = list(csv.reader(sample_lines, delimiter=delim))
        except csv.Error as exc:
            raise ValueError(f"{name!r} could not be parsed as a table ({exc}).") from None
        fields = rows[0] if rows else []
        body = [tok for r in rows[1:] for tok in r]
    if len(fields) > max_cols:
        raise ValueError(_too_many_columns_message(len(fields), max_cols))

    has_header = not (fields and all(_is_number(f) for f in fields))
    decimal = "."
    if delim != ",":
        stripped_body = [t.strip() for t in body]
        if any(_COMMA_DECIMAL_RE.match(t) for t in stripped_body) and not any(
            _DOT_DECIMAL_RE.match(t) for t in stripped_body
        ):
            decimal = ","

    kwargs: dict[str, Any] = dict(
        sep=delim,
        decimal=decimal,
        nrows=max_rows + 1,
        skipinitialspace=True,
        skip_blank_lines=True,
        on_bad_lines="error",
    )
    if delim == r"\s+":
        kwargs["engine"] = "python"
    if has_header:
        kwargs["header"] = 0
    else:
        kwargs["header"] = None
        kwargs["names"] = [f"column_{j + 1}" for j in range(len(fields))]
    try:
        df = pd.read_csv(io.StringIO(stripped), **kwargs)
    except pd.errors.EmptyDataError:
        raise ValueError(f"{name!r} has no columns; is it empty?") from None
    except Exception as exc:  # ParserError, csv.Error, ... : any parser failure is a bad file
        msg = str(exc).strip().splitlines()[0][:200] if str(exc).strip() else type(exc).__name__
        raise ValueError(
            f"{name!r} could not be parsed as a {delim_name}-separated table: {msg}. "
            "Check that every line has the same number of fields and that quotes are balanced."
        ) from None
    meta = {
        "filename": name,
        "format": "csv",
        "encoding": used_encoding,
        "delimiter": delim_name,
        "decimal": decimal,
        "header": has_header,
        # 1-based line of the file holding the first data row (blank lines inside are skipped)
        "first_data_line": text[: len(text) - len(stripped)].count("\n") + int(has_header) + 1,
    }
    # A trailing delimiter on every line yields unnamed, entirely empty columns: drop them (reported).
    empty = [c for c in df.columns if str(c).startswith("Unnamed: ") and df[c].isna().all()]
    if empty and len(empty) < df.shape[1]:
        df = df.drop(columns=empty)
        meta["dropped_empty_columns"] = len(empty)
    if df.shape[1] == 1:
        _refuse_single_column(df, name, header, delim)
    return df, meta


def _refuse_single_column(df: pd.DataFrame, name: str, header: str, delim: str) -> None:
    """A single column is accepted when it is numeric (a 1-D data set) or plainly one column of text (a header
    of one name without separator characters, e.g. a column of categories); otherwise the delimiter was not
    recognised, and the message says what was read."""
    import pandas as pd

    col = df.columns[0]
    values = df[col]
    if pd.api.types.is_numeric_dtype(values) and not pd.api.types.is_bool_dtype(values):
        return
    seps = sorted({ch for ch in header if not ch.isalnum() and ch not in "_-. '\"()[]%/"})
    text = values.dropna().astype(str)
    # a separator in a cell: ';', tab, '|' or ':' (and ',' unless it is the delimiter: a quoted comma is fine)
    in_cells = sorted({ch for ch in ";\t|:" + ("" if delim == "," else ",") if text.str.contains(ch, regex=False).any()})
    words = header.split()
    if not seps and not in_cells and (len(words) <= 1 or not text.str.contains(r"\s").any()):
        return                       # one column of text, e.g. categories: read it (a schema can declare it)
    if seps or in_cells:
        hint = (f" (its header {_short(header)} contains {', '.join(repr(s) for s in seps)})" if seps else
                f" (its cells contain {', '.join(repr(s) for s in in_cells)})")
    else:
        hint = (f" (its header {_short(header)} and its lines hold several space-separated words, in different "
                "numbers)")
    raise ValueError(
        f"{name!r} was read as a single text column{hint}: the delimiter was not recognised, so the columns "
        "could not be told apart. Supported separators are comma, semicolon, tab and pipe; re-save the table as "
        "'CSV UTF-8 (comma delimited)'."
    )


def _check_frame(df: pd.DataFrame, name: str, *, max_rows: int, max_cols: int, header: bool = True) -> None:
    if df.shape[1] > max_cols:
        raise ValueError(_too_many_columns_message(df.shape[1], max_cols))
    if df.shape[0] > max_rows:
        raise ValueError(_too_many_rows_message(df.shape[0], max_rows, exact=False))
    if df.shape[0] < MIN_ROWS:
        where = "below the header" if header else "(no header line: the first line holds only numbers)"
        raise ValueError(
            f"{name!r} has {df.shape[0]} data row(s) {where}; at least {MIN_ROWS} are needed. "
            "Upload the whole table, with one line of column names and one line per record."
        )
    # A table without numeric columns is read: a table of categories is a legitimate mixed table (declared
    # schema, dpkme.schema); the numeric path refuses it with its own message (numeric_matrix).


def _no_numeric_message(df: pd.DataFrame) -> str:
    """Why a table has no numeric column for :func:`numeric_matrix`, with an example cell and what to check."""
    name = df.attrs.get("dpkme", {}).get("filename")
    what = repr(name) if name else "the table"
    example = ""
    for col in df.columns:
        vals = df[col].dropna()
        if len(vals):
            example = f" (e.g. column {str(col)!r} holds {_short(vals.iloc[0])})"
            break
    return (
        f"{what} has no numeric column{example}. Columns with any text cell are read as text: check for stray "
        "text, thousands separators or a decimal comma in a comma-separated file. A table of categories needs "
        "a declared schema (a mixed table) instead."
    )


# ----------------------------------------------------------------------------
# from a frame to a matrix
# ----------------------------------------------------------------------------
def numeric_columns(df: pd.DataFrame) -> list[str]:
    """Names of the columns with a real numeric (not boolean) dtype, in order.

    Only the dtypes are inspected, not the values: a text column holding
    numbers (e.g. with decimal commas) is not listed, and a numeric column may
    still contain missing values.

    Parameters
    ----------
    df : pandas.DataFrame
        A table, e.g. from :func:`load_table`.

    Returns
    -------
    list
        The column labels (as stored in ``df.columns``) whose dtype is a real
        integer or floating type; boolean, complex, text, date and categorical
        columns are left out.

    Raises
    ------
    ValueError
        If ``df`` is not a :class:`pandas.DataFrame`.

    Examples
    --------
    >>> import pandas as pd
    >>> numeric_columns(pd.DataFrame({"age": [30, 41], "name": ["a", "b"], "smoker": [True, False],
    ...                               "income": [1.5, None]}))
    ['age', 'income']
    """
    import pandas as pd

    if not isinstance(df, pd.DataFrame):
        raise ValueError(f"expected a pandas DataFrame, got {type(df).__name__}.")
    return [
        c
        for c in df.columns
        if pd.api.types.is_numeric_dtype(df[c])
        and not pd.api.types.is_bool_dtype(df[c])
        and not pd.api.types.is_complex_dtype(df[c])
    ]


def _row_text(df: pd.DataFrame, pos: int) -> str:
    import pandas as pd

    label = df.index[pos]
    text = f"data row {pos + 1}"
    meta = df.attrs.get("dpkme", {})
    if meta.get("format") == "csv" and "first_data_line" in meta and isinstance(df.index, pd.RangeIndex):
        text += f" (line {int(meta['first_data_line']) + pos} of the file, if no blank lines lie between rows)"
    elif not isinstance(df.index, pd.RangeIndex):
        text += f" (index {_short(label)})"
    return text


def _column_to_float(df: pd.DataFrame, col) -> tuple[np.ndarray, np.ndarray]:
    """Convert one column to float64; returns (values, missing mask). Raises on text/inf/bool/dates."""
    import pandas as pd

    s = df[col]
    if isinstance(s, pd.DataFrame):
        raise ValueError(f"column name {str(col)!r} occurs more than once; rename the duplicates.")
    if pd.api.types.is_bool_dtype(s):
        raise ValueError(
            f"column {str(col)!r} is boolean (True/False); convert it to 0/1 explicitly if it should be used."
        )
    if pd.api.types.is_datetime64_any_dtype(s) or pd.api.types.is_timedelta64_dtype(s):
        raise ValueError(
            f"column {str(col)!r} holds dates/times; convert it to a number (e.g. days since a fixed, public date)."
        )
    if pd.api.types.is_complex_dtype(s):
        raise ValueError(f"column {str(col)!r} is complex-valued; only real numbers are supported.")
    if pd.api.types.is_numeric_dtype(s):
        values = s.to_numpy(dtype=np.float64, na_value=np.nan)
        missing = np.isnan(values)
    else:
        obj = s.astype(object)
        isna = obj.isna().to_numpy()
        text = obj.map(lambda v: v.strip() if isinstance(v, str) else v)
        values = pd.to_numeric(text, errors="coerce").to_numpy(dtype=np.float64, na_value=np.nan)
        token_missing = text.map(lambda v: isinstance(v, str) and v.lower() in _MISSING_TOKENS).to_numpy()
        missing = isna | token_missing
        bad = np.isnan(values) & ~missing
        if bad.any():
            pos = int(np.argmax(bad))
            example = obj.iloc[pos]
            hint = ""
            if isinstance(example, str) and re.match(r"^[+-]?\d{1,3}(,\d{3})+(\.\d+)?$", example.strip()):
                hint = (
                    " It looks like a thousands separator (or a decimal comma): write numbers without "
                    "thousands separators and with a decimal point."
                )
            elif isinstance(example, str) and _COMMA_DECIMAL_RE.match(example.strip()):
                hint = " It looks like a decimal comma: re-save with decimal points, or use ';' as delimiter."
            raise ValueError(
                f"column {str(col)!r} contains text that is not a number: {_short(example)} in "
                f"{_row_text(df, pos)}; {int(bad.sum())} cell(s) of this column are not numbers.{hint} "
                "Fix or remove these cells, or do not select this column."
            )
    inf = np.isinf(values)
    if inf.any():
        pos = int(np.argmax(inf))
        raise ValueError(
            f"column {str(col)!r} contains an infinite value ({values[pos]}) in {_row_text(df, pos)}; "
            "replace it by a finite number or remove the row."
        )
    huge = np.abs(values) > MAX_ABS_VALUE          # NaN compares False
    if huge.any():
        pos = int(np.argmax(huge))
        raise ValueError(
            f"column {str(col)!r} contains {values[pos]:.4g} in {_row_text(df, pos)}: values beyond "
            f"±{MAX_ABS_VALUE:g} overflow the kernel computations; rescale the column (e.g. other units) or "
            "remove the row."
        )
    return values, missing


def numeric_matrix(df: pd.DataFrame, columns: Sequence[str] | None = None, *, drop_missing: bool = False):
    """Select columns of a frame as a float64 matrix, refusing anything doubtful.

    Parameters
    ----------
    df : pandas.DataFrame
    columns : sequence of column names, optional
        Columns to use, in this order; ``None`` selects :func:`numeric_columns`.
    drop_missing : bool, default=False
        If ``False`` (default), any missing cell (NaN, empty, ``NA``, ...) in
        the selected columns raises a ValueError saying how many rows are
        affected in which columns. If ``True``, those rows are dropped and their
        number is returned. Rows are never dropped silently.

        Privacy note: after dropping, the number of rows depends on the private
        data; if a release treats N as public, declare the N you use.

    Returns
    -------
    X : ndarray (N, D), float64
    n_dropped : int
        Only if ``drop_missing=True``.

    Raises
    ------
    ValueError
        No numeric column when ``columns`` is None (the message names an
        example cell), unknown or duplicate column, a text cell that is not a
        number (the message names the column, an example value and its row), a
        boolean or
        date column, an infinite value or one beyond ±1e100
        (:data:`dpkme._validation.MAX_ABS_VALUE`), missing values (unless
        ``drop_missing``), or fewer than :data:`MIN_ROWS` rows left.
    """
    import pandas as pd

    if not isinstance(df, pd.DataFrame):
        raise ValueError(f"expected a pandas DataFrame, got {type(df).__name__}.")
    if columns is None:
        columns = numeric_columns(df)
        if not columns:
            raise ValueError(_no_numeric_message(df))
    elif isinstance(columns, str):
        columns = [columns]
    columns = list(columns)
    if not columns:
        raise ValueError("no columns selected; choose at least one numeric column.")
    if len(set(map(str, columns))) != len(columns):
        dup = sorted({str(c) for c in columns if list(map(str, columns)).count(str(c)) > 1})
        raise ValueError(f"columns {dup} are selected more than once; select each column once.")
    absent = [c for c in columns if c not in df.columns]
    if absent:
        raise ValueError(
            f"column(s) {[str(c) for c in absent]} not in the table; available columns: "
            f"{_short([str(c) for c in df.columns])}."
        )
    if df.shape[0] == 0:
        raise ValueError("the table has no rows.")

    values, missing = [], []
    for col in columns:
        v, m = _column_to_float(df, col)
        values.append(v)
        missing.append(m)
    X = np.column_stack(values)
    M = np.column_stack(missing)
    rows_missing = M.any(axis=1)
    n_missing = int(rows_missing.sum())
    if n_missing and not drop_missing:
        per_col = ", ".join(f"{str(c)!r}: {int(M[:, j].sum())}" for j, c in enumerate(columns) if M[:, j].any())
        first = int(np.argmax(rows_missing))
        raise ValueError(
            f"{n_missing} of {len(df)} row(s) have missing values in the selected columns "
            f"(missing cells per column: {per_col}; first in {_row_text(df, first)}). "
            "Fill them in or remove those rows before uploading, deselect those columns, "
            "or drop the incomplete rows explicitly (drop_missing=True)."
        )
    if n_missing:
        X = X[~rows_missing]
    if X.shape[0] < MIN_ROWS:
        raise ValueError(
            f"only {X.shape[0]} complete row(s) remain after dropping {n_missing} with missing values; "
            f"at least {MIN_ROWS} are needed."
        )
    X = check_array(X, name="selected columns")
    return (X, n_missing) if drop_missing else X


def _scaled_mean_std(v: np.ndarray) -> tuple[float, float]:
    """Mean and sample standard deviation (ddof=1) of ``v`` (NaN ignored), computed on ``v / max|v|``
    so that huge values (e.g. 1e200, whose squares overflow) still give the right finite numbers; with an
    infinite value the mean is infinite and the std NaN; NaN where undefined (no values; one value for the std)."""
    v = v[~np.isnan(v)]
    if v.size == 0:
        return np.nan, np.nan
    if not np.isfinite(v).all():   # an infinite value: the mean is +-inf (or nan for both signs), no std
        with np.errstate(invalid="ignore"):
            return float(np.mean(v)), np.nan
    scale = float(np.abs(v).max()) or 1.0
    u = v / scale
    mean = float(u.mean() * scale)
    std = float(u.std(ddof=1) * scale) if v.size > 1 else np.nan
    return mean, std


def nonprivate_summary(data, columns: Sequence[str] | None = None) -> pd.DataFrame:
    """Per-column descriptive statistics for the data owner's preview. **NON-PRIVATE.**

    The result (counts, missing cells, min, max, mean, standard deviation) is
    computed exactly from the data and is *not* differentially private. Show it
    only to the data owner; never publish it, and never use it to choose a
    kernel lengthscale, scaling constants or a clipping box for a release.

    Parameters
    ----------
    data : pandas.DataFrame or array-like (N, D)
    columns : sequence of str, optional
        Columns to summarise (default: the numeric ones).

    Returns
    -------
    pandas.DataFrame indexed by column, with columns ``count``, ``missing``,
    ``min``, ``max``, ``mean``, ``std``.
    """
    import pandas as pd

    if not isinstance(data, pd.DataFrame):
        arr = np.asarray(data, dtype=np.float64)
        if arr.ndim != 2:
            raise ValueError(f"data must be a DataFrame or a 2-D array, got shape {arr.shape}.")
        data = pd.DataFrame(arr, columns=[f"x{j + 1}" for j in range(arr.shape[1])])
    cols = numeric_columns(data) if columns is None else list(columns)
    rows = {}
    for c in cols:
        if c not in data.columns:
            raise ValueError(f"column {str(c)!r} not in the table.")
        s = pd.to_numeric(data[c], errors="coerce")
        mean, std = _scaled_mean_std(s.dropna().to_numpy(dtype=np.float64))
        rows[c] = {
            "count": int(s.notna().sum()),
            "missing": int(s.isna().sum()),
            "min": float(s.min()) if s.notna().any() else np.nan,
            "max": float(s.max()) if s.notna().any() else np.nan,
            "mean": mean,
            "std": std,
        }
    return pd.DataFrame.from_dict(rows, orient="index", columns=["count", "missing", "min", "max", "mean", "std"])

