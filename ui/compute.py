"""Cached, deterministic library calls behind the pages, and the kernel from the settings.

Arrays are never hashed by Streamlit: every cached function takes a short
string key that identifies its array arguments (the dataset's key, or a digest
of a small point set), and the arrays themselves as ``_underscored``
arguments. Only *evaluation* helpers here read the private rows (RKHS
distances, the private KME on a grid); their results are shown to the data
owner and never released.
"""

from __future__ import annotations

import hashlib
import json
import math
import warnings

import numpy as np
import streamlit as st

from dpkme.evaluation import EXACT_MAX_ROWS, MeanGramEstimate, estimate_mean_gram, rkhs_distance_report
from dpkme.kernels import kernel_from_dict, make_kernel
from dpkme.privacy.calibration import UnprovenCalibrationWarning, calibrate_gaussian
from dpkme.privacy.sensitivity import kme_sensitivity
from dpkme.release.subspace import SubspaceBasis

from . import state as S

KERNEL_LABELS = {
    "gaussian": "Gaussian (RBF)",
    "laplacian": "Laplacian (L1)",
    "matern": "Matérn",
    "imq": "Inverse multiquadric",
}
GRID_SIZE = 60


def array_key(A: np.ndarray | None) -> str:
    """A short digest of an array's shape and bytes (for cache keys)."""
    if A is None:
        return "none"
    A = np.ascontiguousarray(A)
    h = hashlib.sha1(A.tobytes())
    h.update(str(A.shape).encode())
    return h.hexdigest()[:16]


# --------------------------------------------------------------------------- kernel
#: A mixed table's kernels (Kernel & privacy page), in words; the first is the library's default
#: (:data:`dpkme.release.tabular.DEFAULT_TABLE_KERNEL`, what :func:`dpkme.release.tabular.release_table` uses).
TABLE_KERNEL_LABELS = {
    "additive": "additive (default — the library's release_table default)",
    "product": "product (Gaussian on the embedding, ℓ)",
}


def table_kernel_kind(ds: S.Dataset | None = None) -> str | None:
    """A mixed table's kernel as chosen on the Kernel & privacy page (``"additive"`` or ``"product"``; the
    library's default when unset), or ``None`` for numeric data. ``ds`` defaults to the current dataset."""
    ds = S.dataset() if ds is None else ds
    if ds is None or not ds.is_table:
        return None
    kind = st.session_state.get(S.TABLE_KERNEL, S.DEFAULTS[S.TABLE_KERNEL])
    return kind if kind in TABLE_KERNEL_LABELS else S.DEFAULTS[S.TABLE_KERNEL]


def kernel_spec() -> dict:
    """The kernel chosen on the Kernel & privacy page, as a ``Kernel.to_dict()``-style spec.

    On a mixed table with the additive kernel (the default): the schema's additive kernel's ``to_dict()``
    (:func:`dpkme.kernels.additive.table_kernel`, from the public schema alone); otherwise the family and ℓ.
    """
    ss = st.session_state
    ds = S.dataset()
    if table_kernel_kind(ds) == "additive":
        return ds.schema.kernel(kind="additive").to_dict()
    name = ss[S.KERNEL]
    spec = {"name": name, "lengthscale": float(ss[S.LENGTHSCALE])}
    if name == "matern":
        spec["nu"] = float(ss[S.NU])
    if name == "imq":
        spec["beta"] = float(ss[S.BETA])
    return spec


def current_kernel():
    """The :class:`dpkme.kernels.Kernel` of the current settings (ValueError if invalid).

    On a mixed table: the schema's additive kernel (``schema.kernel(kind="additive")``, the kernel of
    :func:`dpkme.release.tabular.release_table`) unless the Kernel & privacy page chose the product kernel,
    which is the family and ℓ below on the embedded rows (Gaussian, ℓ = 1: ``schema.kernel()``).
    """
    ds = S.dataset()
    if table_kernel_kind(ds) == "additive":
        return ds.schema.kernel(kind="additive")
    spec = dict(kernel_spec())
    return make_kernel(spec.pop("name"), **spec)


def table_kernel_profile(schema, kernel, size: int = 41) -> tuple[np.ndarray, dict[str, np.ndarray], dict[str, float]]:
    r"""How the kernel of a mixed table sees a difference in one column (public: the schema and the kernel only).

    For every numeric column :math:`j`, :math:`k(x, x')` for two rows that differ only in column :math:`j`, by a
    fraction :math:`t \in [0, 1]` of its declared range (``size`` values of :math:`t`); for every categorical
    column, :math:`k` for two rows that differ only in its category. Works for any kernel on the embedded rows
    (the additive kernel's terms on the other columns count fully, the product kernel's factors are 1).

    Returns
    -------
    (t, numeric, categorical)
        The fractions, ``{column: k at each t}`` and ``{column: k for two different categories}``.
    """
    domain = schema.domain
    t = np.linspace(0.0, 1.0, int(size))
    numeric: dict[str, np.ndarray] = {}
    for spec in schema.columns:
        if not spec.is_numeric:
            continue
        j = domain.blocks[spec.name].start          # the numeric coordinate comes first in its block
        width = float(domain.upper[j] - domain.lower[j])
        Y = np.zeros((t.size, schema.dim))
        Y[:, j] = t * width
        numeric[spec.name] = np.asarray(kernel(np.zeros((1, schema.dim)), Y), dtype=float).reshape(-1)
    categorical: dict[str, float] = {}
    groups = {g.start: (g, scale) for g, scale in domain.onehot_groups}
    for spec in schema.columns:
        if spec.is_numeric:
            continue
        start = domain.blocks[spec.name].start
        if start not in groups or groups[start][0].stop - start < 2:
            continue
        _, scale = groups[start]
        a, b = np.zeros((1, schema.dim)), np.zeros((1, schema.dim))
        a[0, start], b[0, start + 1] = scale, scale
        categorical[spec.name] = float(np.asarray(kernel(a, b)).reshape(-1)[0])
    return t, numeric, categorical


def kernel_key(kernel) -> str:
    """The cache key of a kernel: its ``to_dict()`` as sorted JSON (:func:`_kernel` rebuilds it, additive too)."""
    return json.dumps(kernel.to_dict(), sort_keys=True)


def _kernel(kkey: str):
    return kernel_from_dict(json.loads(kkey))


# --------------------------------------------------------------------------- privacy
def calibration(n: int, kernel, *, eps: float | None = None, delta: float | None = None,
                method: str | None = None, mode: str | None = None):
    """(sensitivity, GaussianCalibration, warning text or None) for the current settings."""
    ss = st.session_state
    eps = S.epsilon() if eps is None else eps
    delta = S.delta() if delta is None else delta
    method = ss[S.CALIBRATION] if method is None else method
    mode = ss[S.SENS_MODE] if mode is None else mode
    sens = kme_sensitivity(n=n, kernel=kernel, neighbouring="replace-one", mode=mode)
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always", UnprovenCalibrationWarning)
        cal = calibrate_gaussian(epsilon=eps, delta=delta, sensitivity=sens, method=method)
    note = None
    for w in caught:
        if issubclass(w.category, UnprovenCalibrationWarning):
            note = str(w.message)
    return sens, cal, note


# --------------------------------------------------------------------------- cached evaluation
@st.cache_data(max_entries=32, show_spinner=False)
def mean_kxx(ds_key: str, kkey: str, _X: np.ndarray) -> float:
    r"""Exact :math:`\overline{K_{XX}} = \|\hat\mu_X\|^2` of the private rows (evaluation only)."""
    return float(_kernel(kkey).mean_gram(_X))


@st.cache_data(max_entries=32, show_spinner=False)
def mean_kxx_estimate(ds_key: str, kkey: str, _X: np.ndarray) -> MeanGramEstimate:
    r"""Unbiased estimate of :math:`\overline{K_{XX}}` from random pairs of private rows, with its standard error
    (:func:`dpkme.evaluation.estimate_mean_gram`, fresh OS entropy; evaluation only)."""
    return estimate_mean_gram(_X, kernel=_kernel(kkey), rng=None)


def evaluation_method(ds: S.Dataset, kernel) -> str:
    r"""``"exact"`` or ``"estimate"``: how the owner's RKHS distances get :math:`\overline{K_{XX}}` on this data
    (exact up to :data:`dpkme.evaluation.EXACT_MAX_ROWS` rows or with exact spectral sums; else estimated)."""
    return "exact" if ds.n <= EXACT_MAX_ROWS or kernel.spectral_sums_available(ds.X) else "estimate"


def kxx_term(ds: S.Dataset, kernel):
    r""":math:`\overline{K_{XX}}` as the evaluation uses it: a float (exact) or a ``MeanGramEstimate`` (cached)."""
    kk = kernel_key(kernel)
    if evaluation_method(ds, kernel) == "exact":
        return mean_kxx(ds.key, kk, ds.X)
    return mean_kxx_estimate(ds.key, kk, ds.X)


def kxx_value(ds: S.Dataset, kernel) -> float:
    """The value of :func:`kxx_term` (exact or estimated) as a float."""
    t = kxx_term(ds, kernel)
    return float(t.value) if isinstance(t, MeanGramEstimate) else float(t)


@st.cache_data(max_entries=64, show_spinner=False)
def row_means(ds_key: str, kkey: str, zkey: str, _Z: np.ndarray, _X: np.ndarray) -> np.ndarray:
    r""":math:`\bar k_m = \frac1N\sum_n k(z_m, x_n)` (evaluation only)."""
    return _kernel(kkey).row_means(_Z, _X)


@st.cache_data(max_entries=32, show_spinner=False)
def basis(kkey: str, zkey: str, _Z: np.ndarray) -> SubspaceBasis:
    """Orthonormal basis of the span of public points (public work, reusable across releases)."""
    return SubspaceBasis.fit(_Z, kernel=_kernel(kkey))


def projection_distance(ds: S.Dataset, kernel, Z: np.ndarray) -> float:
    r"""RKHS distance of the noise-free projection :math:`P\hat\mu_X` onto span{k(z_m,·)} (evaluation only)."""
    kk, zk = kernel_key(kernel), array_key(Z)
    B = basis(kk, zk, Z)
    alpha = B.coordinates(row_means(ds.key, kk, zk, Z, ds.X))
    return math.sqrt(max(kxx_value(ds, kernel) - float(alpha @ alpha), 0.0))


def distance_report(ds: S.Dataset, kernel, Z: np.ndarray, w: np.ndarray):
    r""":math:`\|\hat\mu_X - \sum_m w_m k(z_m,\cdot)\|_{\mathcal H}` as a :class:`dpkme.evaluation.DistanceReport`:
    exact, or beyond ``EXACT_MAX_ROWS`` rows an unbiased estimate with a 95 % interval (evaluation only)."""
    kk, zk = kernel_key(kernel), array_key(Z)
    return rkhs_distance_report(ds.X, Z, w, kernel=kernel, mean_kxx=kxx_term(ds, kernel),
                                row_means=row_means(ds.key, kk, zk, Z, ds.X))


def distance(ds: S.Dataset, kernel, Z: np.ndarray, w: np.ndarray) -> float:
    r""":math:`\|\hat\mu_X - \sum_m w_m k(z_m,\cdot)\|_{\mathcal H}` (evaluation only; see :func:`distance_report`)."""
    return distance_report(ds, kernel, Z, w).distance


def evaluation_caption(ev: dict | None) -> str:
    """One line saying how the distance was computed: "exact", or "estimate ± CI (95 %)" with its interval."""
    if not ev or ev.get("method") != "estimate":
        return "Distance: **exact** (the mean of K_XX over all pairs of private rows)."
    return (f"Distance: **{ev['label']}**: {S.fmt(ev['distance'])} in [{S.fmt(ev['ci_low'])}, "
            f"{S.fmt(ev['ci_high'])}]. With N = {ev['n_rows']:,} rows (more than {EXACT_MAX_ROWS:,}) the exact mean "
            f"of K_XX would take N²/2 kernel values, so it is estimated without bias from {ev['n_pairs']:,} random "
            "pairs of rows; the other terms are exact. The projection and ‖μ̂‖ use the same estimate.")


def baseline_distance(ds: S.Dataset, kernel, m: int) -> float | None:
    """Distance of the paper's baseline: the first ``m`` public points weighted 1/m."""
    if not ds.n_public:
        return None
    Z = ds.public[: min(m, ds.n_public)]
    return distance(ds, kernel, Z, np.full(Z.shape[0], 1.0 / Z.shape[0]))


# --------------------------------------------------------------------------- grids
def plot_window(ds: S.Dataset, *extra: np.ndarray, dims=(0, 1), public: bool | None = None
                ) -> tuple[np.ndarray, np.ndarray]:
    """Lower/upper corners of the plotting window in two coordinates.

    The owner's view frames the private rows (and the public rows and ``extra`` points). A projected view
    (``public=True``; by default in presentation mode) is framed by public information only: the declared domain,
    else the publishable rows and ``extra`` (released points), else q's centre ± 3 q-scales -- so a projected
    figure never moves with the private rows."""
    public = bool(st.session_state.get(S.PRESENT, False)) if public is None else public
    dims = list(dims)
    if public:
        dom = ds.point_domain
        lo_d, hi_d = (getattr(dom, "lower", None), getattr(dom, "upper", None)) if dom is not None else (None, None)
        if lo_d is not None and hi_d is not None and np.all(np.isfinite(np.asarray(lo_d)[dims])) \
                and np.all(np.isfinite(np.asarray(hi_d)[dims])):
            lo, hi = np.asarray(lo_d, dtype=float)[dims], np.asarray(hi_d, dtype=float)[dims]
            pad = 0.05 * np.maximum(hi - lo, 1e-9)
            return lo - pad, hi + pad
        parts = ([ds.public[:, dims]] if ds.n_public else []) + [
            np.asarray(e)[:, dims] for e in extra if e is not None and len(e)]
        centre = ds.q_center[dims] if ds.q_center is not None else np.zeros(len(dims))
        parts.append(np.vstack([centre - 3 * ds.q_scale, centre + 3 * ds.q_scale]))
        P = np.concatenate(parts)
        lo, hi = P.min(axis=0), P.max(axis=0)
        pad = 0.12 * np.maximum(hi - lo, 1e-9)
        return lo - pad, hi + pad
    parts = [ds.X[:, dims]] + ([ds.public[:, dims]] if ds.n_public else [])
    parts += [np.asarray(e)[:, dims] for e in extra if e is not None and len(e)]
    P = np.concatenate(parts)
    lo, hi = np.quantile(P, 0.005, axis=0), np.quantile(P, 0.995, axis=0)
    pad = 0.12 * np.maximum(hi - lo, 1e-9)
    return lo - pad, hi + pad


def grid_points(ds: S.Dataset, lo, hi, dims=(0, 1), size: int = GRID_SIZE):
    """(xs, ys, points) of a size x size grid in coordinates ``dims``; other coordinates at q's centre."""
    xs = np.linspace(lo[0], hi[0], size)
    ys = np.linspace(lo[1], hi[1], size)
    gx, gy = np.meshgrid(xs, ys)
    base = ds.q_center if ds.q_center is not None else np.zeros(ds.dim)
    G = np.tile(base, (gx.size, 1)).astype(float)
    G[:, dims[0]] = gx.ravel()
    G[:, dims[1]] = gy.ravel()
    return xs, ys, G


@st.cache_data(max_entries=32, show_spinner=False)
def private_kme_on_grid(ds_key: str, kkey: str, gkey: str, _G: np.ndarray, _X: np.ndarray) -> np.ndarray:
    r"""The private empirical KME :math:`\hat\mu_X(y)` at grid points (owner's view, not released)."""
    return _kernel(kkey).row_means(_G, _X)


def epsilon_grid(lo: float = 0.01, hi: float = 10.0) -> list[float]:
    """Log-spaced 'nice' values 1, 1.5, 2, 3, 5, 7 per decade, from lo to hi."""
    out = []
    for e in range(-3, 3):
        for m in (1, 1.5, 2, 3, 5, 7):
            v = round(m * 10.0**e, 6)
            if lo - 1e-12 <= v <= hi + 1e-12:
                out.append(v)
    return out
