"""Input validation shared by every public function of :mod:`dpkme`.

Every check raises :class:`ValueError` (never a bare ``AssertionError`` or a
numpy error) with a message that names the offending value and says what to do.
"""

from __future__ import annotations

import math
import numbers
import warnings

import numpy as np

__all__ = [
    "check_array",
    "check_epsilon",
    "check_delta",
    "check_positive_int",
    "check_positive_float",
    "check_random_state",
    "noise_rng",
    "spawn_streams",
    "check_weights",
    "check_vector",
    "check_box",
    "check_in",
    "new_seed", "public_size"]


def _short(value) -> str:
    """Short printable form of a user value for error messages."""
    if isinstance(value, np.generic):
        value = value.item()  # "nan", not "np.float64(nan)"
    text = repr(value)
    return text if len(text) <= 80 else text[:77] + "..."


def check_array(
    X,
    *,
    name: str = "X",
    ndim: int = 2,
    min_rows: int = 1,
    n_features: int | None = None,
    dtype=np.float64,
    copy: bool = False,
) -> np.ndarray:
    """Validate a numeric array and return it as a C-contiguous float array.

    Parameters
    ----------
    X : array-like
        Input. Lists, tuples and numpy arrays of a real numeric dtype are
        accepted; strings, objects, complex numbers and booleans are refused.
    name : str
        Name used in error messages.
    ndim : {1, 2}
        Required number of dimensions. A 1-D input is never silently reshaped
        into a 2-D one (that would hide a transposition mistake).
    min_rows : int
        Minimum number of rows (or elements for ``ndim=1``).
    n_features : int, optional
        Required number of columns (only for ``ndim=2``).
    dtype : numpy dtype
        Floating dtype of the result.
    copy : bool
        Force a copy even when ``X`` already has the right layout.

    Raises
    ------
    ValueError
        On a non-numeric, non-finite, empty or wrongly shaped input; the message
        names the first offending value and its position.
    """
    if X is None:
        raise ValueError(f"{name} is None; pass a numeric array.")
    try:
        arr = np.asarray(X)
    except Exception as exc:  # ragged lists etc.
        raise ValueError(f"{name} could not be converted to an array ({exc}).") from None
    if arr.dtype == object or arr.dtype.kind in "USVOMm":
        raise ValueError(
            f"{name} must be numeric, got dtype {arr.dtype} "
            f"(for example {_short(arr.flat[0]) if arr.size else 'empty'}); "
            "convert text columns to numbers or drop them."
        )
    if arr.dtype.kind == "c":
        raise ValueError(f"{name} must be real-valued, got complex dtype {arr.dtype}.")
    if arr.dtype.kind == "b":
        raise ValueError(f"{name} must be numeric, got boolean dtype; cast it to float explicitly.")
    if arr.ndim != ndim:
        raise ValueError(
            f"{name} must be a {ndim}-D array, got shape {arr.shape}"
            + (" (use X.reshape(-1, 1) for a single feature)" if ndim == 2 and arr.ndim == 1 else "")
            + "."
        )
    if arr.shape[0] < min_rows:
        raise ValueError(f"{name} must have at least {min_rows} row(s), got shape {arr.shape}.")
    if ndim == 2:
        if arr.shape[1] < 1:
            raise ValueError(f"{name} must have at least one column, got shape {arr.shape}.")
        if n_features is not None and arr.shape[1] != n_features:
            raise ValueError(
                f"{name} has {arr.shape[1]} column(s) but {n_features} were expected "
                f"(shape {arr.shape})."
            )
    with np.errstate(over="ignore", invalid="ignore"):
        out = np.array(arr, dtype=dtype, order="C", copy=copy or None)
    if not np.isfinite(out).all():
        bad = np.argwhere(~np.isfinite(out))[0]
        pos = tuple(int(i) for i in bad)
        orig = arr[pos] if arr.ndim else arr
        raise ValueError(
            f"{name} contains a non-finite value {_short(orig)} at index {pos}"
            f" (after conversion to {np.dtype(dtype).name}); remove or impute NaN/inf rows first."
        )
    return out


def _as_real_scalar(value, name: str) -> float:
    if isinstance(value, (bool, np.bool_)) or not isinstance(value, (numbers.Real, np.floating, np.integer)):
        raise ValueError(f"{name} must be a real number, got {_short(value)}.")
    return float(value)


def check_epsilon(epsilon, *, name: str = "epsilon") -> float:
    r"""Return ``epsilon`` as float after checking ``0 < epsilon < inf``.

    Parameters
    ----------
    epsilon : float
        Privacy parameter :math:`\varepsilon` of :math:`(\varepsilon, \delta)`-differential
        privacy; any real number type (Python or numpy) is accepted, booleans are refused.
    name : str, default="epsilon"
        Name of the parameter in the error message.

    Returns
    -------
    float
        ``epsilon`` as a Python float.

    Raises
    ------
    ValueError
        If ``epsilon`` is not a real number, or not finite and :math:`> 0`.

    Examples
    --------
    >>> check_epsilon(1)
    1.0
    """
    eps = _as_real_scalar(epsilon, name)
    if not (eps > 0) or not math.isfinite(eps):
        raise ValueError(f"{name} must be a finite number > 0, got {_short(epsilon)}.")
    return eps


def check_delta(delta, *, name: str = "delta", allow_zero: bool = False) -> float:
    r"""Return ``delta`` as float after checking ``0 < delta < 1`` (or ``0 <= delta``).

    Parameters
    ----------
    delta : float
        Privacy parameter :math:`\delta` of :math:`(\varepsilon, \delta)`-differential
        privacy: the probability with which the :math:`e^\varepsilon` bound may fail.
    name : str, default="delta"
        Name of the parameter in the error message.
    allow_zero : bool, default=False
        Accept :math:`\delta = 0` (pure :math:`\varepsilon`-DP, e.g. for the
        exponential mechanism); the range is then :math:`[0, 1)` instead of :math:`(0, 1)`.

    Returns
    -------
    float
        ``delta`` as a Python float.

    Raises
    ------
    ValueError
        If ``delta`` is not a real number or lies outside the accepted range.

    Examples
    --------
    >>> check_delta(1e-6)
    1e-06
    >>> check_delta(0, allow_zero=True)
    0.0
    """
    d = _as_real_scalar(delta, name)
    lo_ok = d >= 0 if allow_zero else d > 0
    if not (lo_ok and d < 1) or not math.isfinite(d):
        rng = "[0, 1)" if allow_zero else "(0, 1)"
        raise ValueError(f"{name} must lie in {rng}, got {_short(delta)}.")
    return d


def check_positive_int(value, *, name: str, minimum: int = 1, maximum: int | None = None) -> int:
    """Return ``value`` as int after checking ``minimum <= value <= maximum``.

    Parameters
    ----------
    value : int
        Value to check. An integral float such as ``3.0`` is accepted and
        converted; booleans and fractional numbers are refused.
    name : str
        Name of the parameter in the error messages.
    minimum : int, default=1
        Smallest accepted value (inclusive).
    maximum : int or None, default=None
        Largest accepted value (inclusive); ``None`` for no upper limit.

    Returns
    -------
    int
        ``value`` as a Python int.

    Raises
    ------
    ValueError
        If ``value`` is not an integer or lies outside ``[minimum, maximum]``.

    Examples
    --------
    >>> check_positive_int(3.0, name="reps")
    3
    """
    if isinstance(value, (bool, np.bool_)) or not isinstance(value, (numbers.Integral, np.integer)):
        if isinstance(value, (float, np.floating)) and float(value).is_integer():
            value = int(value)
        else:
            raise ValueError(f"{name} must be an integer, got {_short(value)}.")
    value = int(value)
    if value < minimum:
        raise ValueError(f"{name} must be >= {minimum}, got {value}.")
    if maximum is not None and value > maximum:
        raise ValueError(f"{name} must be <= {maximum}, got {value}.")
    return value


def check_positive_float(value, *, name: str, allow_zero: bool = False) -> float:
    """Return ``value`` as float after checking it is finite and > 0 (or >= 0).

    Parameters
    ----------
    value : float
        Value to check (any real number type; booleans are refused).
    name : str
        Name of the parameter in the error messages.
    allow_zero : bool, default=False
        Accept 0 as well (the condition becomes ``value >= 0``).

    Returns
    -------
    float
        ``value`` as a Python float.

    Raises
    ------
    ValueError
        If ``value`` is not a real number, not finite, or not positive
        (negative when ``allow_zero``).

    Examples
    --------
    >>> check_positive_float(0, name="tol", allow_zero=True)
    0.0
    """
    v = _as_real_scalar(value, name)
    ok = v >= 0 if allow_zero else v > 0
    if not ok or not math.isfinite(v):
        raise ValueError(f"{name} must be a finite number {'>=' if allow_zero else '>'} 0, got {_short(value)}.")
    return v


def round_up_until(value: float, holds, *, name: str = "sigma", max_steps: int = 10_000) -> float:
    """Increase a positive noise scale until ``holds(value)`` is true (rounding toward more noise).

    Each step multiplies by ``1 + 1e-12`` and moves at least one float up
    (``nextafter``), so it progresses even for subnormal values, where the
    multiplication alone would stall. A scale that is 0, not finite, or still
    failing after ``max_steps`` steps is a ``ValueError`` (the parameters are
    outside the float range), never an endless loop.
    """
    v = float(value)
    for _ in range(max_steps):
        if not (math.isfinite(v) and v > 0):
            break
        if holds(v):
            return v
        v = max(v * (1.0 + 1e-12), math.nextafter(v, math.inf))
    raise ValueError(f"{name}={value!r} could not be verified (the parameters put it outside the float range); "
                     "use a larger sensitivity or a smaller epsilon.")


def check_in(value, options, *, name: str):
    """Check that ``value`` is one of ``options``.

    Parameters
    ----------
    value : object
        Value to check, compared with ``in`` (equality).
    options : collection
        The accepted values (a set, tuple, list or dict keys); they must be
        sortable, since the error message lists them sorted.
    name : str
        Name of the parameter in the error message.

    Returns
    -------
    object
        ``value`` itself, unchanged.

    Raises
    ------
    ValueError
        If ``value`` is not in ``options``; the message lists the options.

    Examples
    --------
    >>> check_in("median", {"median", "fixed"}, name="bandwidth")
    'median'
    """
    if value not in options:
        raise ValueError(f"{name} must be one of {sorted(options)}, got {_short(value)}.")
    return value


def new_seed() -> int:
    """A fresh 63-bit seed drawn from OS entropy (recorded so a release can be replayed)."""
    entropy = np.random.SeedSequence().entropy
    assert isinstance(entropy, int)      # a SeedSequence made without arguments draws an int from the OS
    return int(entropy % (2**63))


def check_random_state(random_state) -> tuple[np.random.Generator, int | None]:
    """Turn ``random_state`` into a :class:`numpy.random.Generator`.

    Parameters
    ----------
    random_state : None, int or numpy.random.Generator
        ``None`` draws a fresh seed from OS entropy (and returns it so that the
        release can record it); an int seeds a new generator; a Generator is used
        as is (its seed is then unknown and ``None`` is returned). The global
        numpy random state is never used.

    Returns
    -------
    rng : numpy.random.Generator
    seed : int or None
    """
    if random_state is None:
        seed = new_seed()
        return np.random.default_rng(seed), seed
    if isinstance(random_state, np.random.Generator):
        return random_state, None
    if isinstance(random_state, (bool, np.bool_)):
        raise ValueError(f"random_state must be None, an int or a numpy Generator, got {random_state!r}.")
    if isinstance(random_state, (numbers.Integral, np.integer)):
        seed = int(random_state)
        if seed < 0:
            raise ValueError(f"random_state must be a non-negative int, got {seed}.")
        return np.random.default_rng(seed), seed
    raise ValueError(
        f"random_state must be None, an int or a numpy Generator, got {_short(random_state)}."
    )


def noise_rng(random_state) -> tuple[np.random.Generator, int | None, str]:
    """Generator for the *privacy noise* of a release, with its provenance.

    Parameters
    ----------
    random_state : None, int or numpy.random.Generator
        Source of the noise, as below; validated by :func:`check_random_state`
        (an int must be non-negative).

    Returns
    -------
    rng : numpy.random.Generator
        Generator to draw the noise from.
    seed : int or None
        The seed when ``random_state`` is an int; ``None`` otherwise.
    noise_source : {"seeded", "os-entropy", "generator"}
        Provenance of the noise, recorded with the release.

    Notes
    -----
    The three cases:

    * an int: ``noise_source="seeded"`` — replayable, for teaching and demos.
      Anyone who knows the seed can regenerate and subtract the noise, so a
      seeded release offers **no privacy once the seed is published**;
    * ``None``: fresh OS entropy, ``noise_source="os-entropy"``, and the seed is
      deliberately **not** recorded (``seed=None``): the release cannot be
      replayed, which is what a real release needs;
    * a Generator: used as is, ``noise_source="generator"``, seed unknown.
    """
    if random_state is None:
        return np.random.default_rng(), None, "os-entropy"
    rng, seed = check_random_state(random_state)
    return rng, seed, "seeded" if seed is not None else "generator"


def spawn_streams(rng: np.random.Generator, n: int, *, fresh: bool = False) -> list[np.random.Generator]:
    """``n`` statistically independent child generators of ``rng`` (:meth:`numpy.random.Generator.spawn`).

    A release uses one child for its public randomness (synthetic points drawn
    from q, random frequencies) and another for its privacy noise, so that
    the noise does not depend on how much public randomness was drawn before
    it, and publishing or replaying the public part reveals nothing about the
    noise stream. For a generator made from an int ``seed`` (as by
    :func:`noise_rng`), child ``i`` is exactly
    ``numpy.random.default_rng(numpy.random.SeedSequence(seed).spawn(n)[i])``
    (independence of spawned SeedSequences: O'Neill's design, NumPy's
    "Parallel random number generation"), so a seeded release replays
    identically. For a Generator whose bit generator has no SeedSequence
    (built from a raw state), the children are spawned from a SeedSequence
    seeded with 256 bits drawn from it.

    Parameters
    ----------
    rng : numpy.random.Generator
        Parent generator. Spawning advances its SeedSequence's spawn counter
        (a second call gives new, different children); in the fallback case it
        draws 256 bits from ``rng`` itself.
    n : int
        Number of child generators.
    fresh : bool, default=False
        For a real release (OS entropy, nothing to replay): ignore ``rng`` and seed every stream with its own
        fresh OS entropy. Children spawned from one 128-bit seed are statistically independent but not
        cryptographically so: PCG64 and SeedSequence are not designed to hide their seed, and the public
        stream's draws (points from q, frequencies) are published. Separate entropy leaves nothing in the
        public draws that could lead to the noise stream.

    Returns
    -------
    list of numpy.random.Generator
        ``n`` independent generators, of the same bit-generator type as ``rng`` (PCG64 when ``fresh``).

    Examples
    --------
    >>> import numpy as np
    >>> public, noise = spawn_streams(np.random.default_rng(0), 2)
    >>> bool(public.random() == np.random.default_rng(np.random.SeedSequence(0).spawn(2)[0]).random())
    True
    """
    if fresh:
        return [np.random.default_rng() for _ in range(n)]
    try:
        return rng.spawn(n)
    except TypeError:  # no SeedSequence behind the bit generator
        ss = np.random.SeedSequence([int(v) for v in rng.integers(0, 2**63, size=4)])
        return [np.random.Generator(type(rng.bit_generator)(child)) for child in ss.spawn(n)]


#: Largest magnitude accepted for a data value (after any declared scaling): with |x| <= 1e100, squared
#: distances and their sums over the columns stay finite in float64, and so do the lengthscales the kernels
#: accept ([1e-100, 1e100]). Larger values overflow the kernel computations: rescale the data instead.
MAX_ABS_VALUE = 1e100

#: Largest total absolute weight accepted: sum |w| <= 1e150 keeps w^T K w (<= (sum |w|)^2 for k <= 1) finite.
MAX_TOTAL_WEIGHT = 1e150


def check_weights(w, *, n: int, name: str = "weights") -> np.ndarray:
    r"""Validate a weight vector of length ``n`` (finite, total absolute weight at most :data:`MAX_TOTAL_WEIGHT`).

    Parameters
    ----------
    w : array-like (n,)
        Weights :math:`w_i` of the points of a weighted embedding
        :math:`\sum_i w_i k(z_i, \cdot)`; any real values (negative weights
        are allowed), finite, with :math:`\sum_i |w_i| \le` :data:`MAX_TOTAL_WEIGHT`.
    n : int
        Number of points the weights belong to; ``w`` must have exactly this length.
    name : str, default="weights"
        Name of the parameter in the error messages.

    Returns
    -------
    ndarray (n,), float64
        The validated weights (C-contiguous; a copy only when a conversion was needed).

    Raises
    ------
    ValueError
        If ``w`` is not a finite numeric 1-D array, has the wrong length, or is
        so large that weighted kernel sums would overflow.

    Examples
    --------
    >>> check_weights([0.5, 0.5], n=2)
    array([0.5, 0.5])
    """
    arr = check_array(w, name=name, ndim=1)
    if arr.shape[0] != n:
        raise ValueError(f"{name} has length {arr.shape[0]} but {n} points were given.")
    biggest = float(np.max(np.abs(arr))) if arr.size else 0.0
    if biggest > MAX_TOTAL_WEIGHT / max(n, 1) and float(np.sum(np.abs(arr) / MAX_TOTAL_WEIGHT)) > 1.0:
        raise ValueError(f"{name} are too large: the largest is {biggest:.3g} and their absolute values sum to more "
                         f"than {MAX_TOTAL_WEIGHT:g}, so weighted kernel sums would overflow; rescale them.")
    return arr


def check_vector(value, *, name: str, dim: int | None = None) -> np.ndarray:
    """A scalar (as a length-1 vector, broadcast later) or a 1-D finite float vector of length 1 or ``dim``.

    Parameters
    ----------
    value : float or array-like (1,) or (dim,)
        A per-column quantity (e.g. a centre or a scale): one value for all
        columns, or one value per column.
    name : str
        Name of the parameter in the error messages.
    dim : int or None, default=None
        Number of columns of the data; ``None`` accepts any length.

    Returns
    -------
    ndarray (1,) or (dim,), float64
        The validated vector; a scalar becomes a length-1 vector, which numpy
        broadcasts against the columns.

    Raises
    ------
    ValueError
        If ``value`` is not finite and numeric, not 0-D or 1-D, or has a length
        other than 1 or ``dim``.

    Examples
    --------
    >>> check_vector(2, name="scale", dim=3)
    array([2.])
    """
    arr = np.asarray(value)
    if arr.ndim == 0:
        return check_array(arr.reshape(1), name=name, ndim=1)
    vec = check_array(arr, name=name, ndim=1)
    if dim is not None and vec.shape[0] not in (1, dim):
        raise ValueError(
            f"{name} has {vec.shape[0]} entries but the data have {dim} column(s); "
            f"give one value per column or a single value for all."
        )
    return vec


def check_box(lower, upper, *, broadcast: bool = False, dim: int | None = None,
              axis: str = "coordinate") -> tuple[np.ndarray, np.ndarray]:
    """Validate a **declared** box ``[lower, upper]``: finite bounds with ``lower < upper`` in every ``axis``.

    The one box check of the library (clipping, declared scalings, candidate and integration grids).

    Parameters
    ----------
    lower, upper : array-like (D,), or scalars when ``broadcast``
    broadcast : bool, default=False
        Accept a scalar or a length-1 bound for all columns (see :func:`check_vector`) and return both
        bounds broadcast to a common length; otherwise both must be 1-D of the same length.
    dim : int, optional
        Number of columns of the data the box applies to (with ``broadcast``: each bound has 1 or ``dim``
        entries).
    axis : str, default="coordinate"
        Word naming one dimension of the box in the messages ("column" for data columns).

    Returns
    -------
    lower, upper : ndarray (D,), float64
    """
    if broadcast:
        lo = check_vector(lower, name="lower", dim=dim)
        hi = check_vector(upper, name="upper", dim=dim)
        if lo.shape[0] != hi.shape[0] and 1 not in (lo.shape[0], hi.shape[0]):
            raise ValueError(f"lower has {lo.shape[0]} entries but upper has {hi.shape[0]}; they must match.")
        lo_b, hi_b = np.broadcast_arrays(lo, hi)
        lo, hi = lo_b.astype(np.float64), hi_b.astype(np.float64)
    else:
        lo = check_array(lower, name="lower", ndim=1)
        hi = check_array(upper, name="upper", ndim=1)
        if lo.shape != hi.shape:
            raise ValueError(f"lower has {lo.shape[0]} entries but upper has {hi.shape[0]}; they must match.")
        if dim is not None and lo.shape[0] != dim:
            raise ValueError(f"the box has {lo.shape[0]} entries but the data have {dim} column(s).")
    if np.any(hi <= lo):
        j = int(np.argmax(hi <= lo))
        raise ValueError(f"the box needs lower < upper in every {axis}; {axis} {j} has "
                         f"lower={float(lo[j])}, upper={float(hi[j])}.")
    return lo, hi


def public_size(n_rows: int, n_private, *, neighbouring: str) -> int:
    r"""The public dataset size :math:`N` that a release normalises by.

    Under replace-one the size is the same for every neighbour, so it is public and may be counted from
    the rows (``n_private`` must then equal it). Under add-remove the row count differs between
    neighbours: counting it from the rows would publish it exactly (two neighbouring tables of 200 and
    201 rows would give releases with different recorded sizes and noise scales) and the sensitivity
    :math:`1/N` would be taken at the wrong :math:`N`. So a declared ``n_private`` is required there.

    Parameters
    ----------
    n_rows : int
        Number of rows of the private array (read only to check the replace-one rule).
    n_private : int or None
        The declared public size; None counts it from the rows (replace-one only).
    neighbouring : {"replace-one", "add-remove"}
        The neighbouring relation of the guarantee.

    Returns
    -------
    int
        :math:`N`.

    Raises
    ------
    ValueError
        Under add-remove without ``n_private``, or under replace-one when ``n_private`` differs from the
        row count.

    Examples
    --------
    >>> from dpkme._validation import public_size
    >>> public_size(100, None, neighbouring="replace-one"), public_size(100, 120, neighbouring="add-remove")
    (100, 120)
    """
    if n_private is None:
        if neighbouring == "add-remove":
            raise ValueError("under add-remove the public size n_private must be declared (not counted from the "
                             "rows: the row count differs between neighbours).")
        return int(n_rows)
    n_pub = check_positive_int(n_private, name="n_private")
    if neighbouring == "replace-one" and n_pub != n_rows:
        raise ValueError(
            f"under replace-one the public size must equal the number of rows; got n_private={n_pub} for {n_rows} rows.")
    return n_pub


#: Column names that say "row label", not "data" (compared case-insensitively, spaces and underscores ignored).
_IDENTIFIER_NAMES = frozenset({"", "index", "id", "rowid", "rowname", "rownames", "row", "rownumber", "key",
                               "recordid", "uuid", "guid"})
#: Fewest rows for which "every value distinct" is read as an identifier (a short table may be unique by chance).
_IDENTIFIER_MIN_ROWS = 20


def identifier_reason(name: object, values) -> str | None:
    """Why a column looks like a row identifier rather than data (None: it does not).

    An identifier carries one person's label, not a property to release: a row-name column (pandas' index written
    as ``Unnamed: 0``, ``id``, ``rownames``, ...), a running integer (an integer column holding ``0, 1, 2, ...`` or
    ``1, 2, 3, ...`` in any order, every value once), or a text column whose values are all distinct (and are not
    numbers or dates). Used by the schema suggestions and
    by the numeric column choice alike, so both leave identifiers out with the same note.

    Parameters
    ----------
    name : object
        The column's name.
    values : pandas.Series or array-like
        The column's values (missing cells are ignored).

    Returns
    -------
    str or None
        The reason, for a note, or None.

    Examples
    --------
    >>> import pandas as pd
    >>> identifier_reason("Unnamed: 0", pd.Series([0, 1, 2]))
    'its name says it is a row label (Unnamed: 0)'
    >>> identifier_reason("n", pd.Series(range(1, 101))) is not None, identifier_reason("age", pd.Series([30, 41, 30]))
    (True, None)
    """
    import re

    import pandas as pd

    text = str(name).strip()
    squashed = re.sub(r"[\s_.\-]+", "", text.lower())
    if squashed in _IDENTIFIER_NAMES or re.fullmatch(r"unnamed:\s*\d+", text.lower()):
        return f"its name says it is a row label ({text})"
    s = pd.Series(values)
    s = s[s.notna()]
    n = len(s)
    if n < _IDENTIFIER_MIN_ROWS or s.nunique() != n:
        return None
    if pd.api.types.is_bool_dtype(s.dtype):
        return None
    if pd.api.types.is_integer_dtype(s.dtype):     # a running index is written as integers
        x = pd.to_numeric(s, errors="coerce").to_numpy(dtype=float)
        if np.all(np.isfinite(x)) and np.all(x == np.round(x)):
            lo = float(x.min())
            if lo in (0.0, 1.0) and float(x.max()) == lo + n - 1:
                return "a running number (every value once, from 0 or 1 up): a row identifier"
        return None
    if pd.api.types.is_numeric_dtype(s.dtype) or pd.api.types.is_datetime64_any_dtype(s.dtype):
        return None
    cells = s.astype(str).str.strip()
    if pd.to_numeric(cells, errors="coerce").notna().all():
        return None                                    # numbers written as text: data
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        if pd.to_datetime(cells, errors="coerce", format="mixed").notna().all():
            return None                                # dates written as text: data
    hint = (" (or dates in a format not recognised? declare the column datetime with its date_format, e.g. "
            "'%d %b %Y')") if cells.str.contains(r"\d", regex=True).all() else ""
    return "every value is different: an identifier or free text, not a category" + hint
