"""Build the app's :class:`~ui.state.Dataset` from a plain spec dict.

A spec says where the rows come from (``generated`` / ``sample`` / ``upload``),
which columns, the size of the publishable subset, and the *declared* public
preprocessing (scaling from the publishable subset or from a declared box,
optional clipping to that box). Nothing here derives a constant from the
private rows: scaling, clipping boxes, kernel-lengthscale suggestions and the
distribution q of random synthetic points come from the generator's parameters
(public), a declared box, or the publishable subset.
"""

from __future__ import annotations

import hashlib
import json
import math

import numpy as np
import pandas as pd
import streamlit as st

from dpkme.datasets import GENERATORS, SAMPLES, load_sample
from dpkme.io import numeric_columns, numeric_matrix
from dpkme.preprocessing import DeclaredScaling, clip_to_box, public_private_split, suggest_scaling
from dpkme.reproduce import paper_kernel

from .state import Dataset

SCALING_MODES = {
    "none": "Keep the original units",
    "public": "Standardise with the publishable subset (public mean and std)",
    "box": "Declare a range for every column (mapped to [-1, 1])",
    "columns": "Per column, suggested from public information (editable)",
}
#: The scaling a user's own table (bundled sample, upload) starts with (issue 16, finding 3): per column,
#: from declared bounds or the publishable subset -- never one set of units for columns of different scales.
TABLE_SCALING_DEFAULT = "columns"

#: The app's default data: the paper's mixture at an interactive size.
DEFAULT_SPEC = {
    "source": "generated",
    "generator": "paper_mixture",
    "params": {"n": 5000, "dim": 2, "n_components": 10},
    "seed": 0,
    "public_fraction": 0.0,
    "public_declared": False,
    "heldout_fraction": 0.1,
    "split_seed": 0,
    "scaling": "none",
    "box": None,
    "clip": False,
}

#: The Home page's paper example (Balog et al. 2018, App. B, at a size that runs in a second).
#: Its 2 % publishable rows are *declared public* (the paper's Figure 1 scenario: a small public subset of a
#: synthetic table); the guarantee covers the other rows.
PAPER_EXAMPLE_SPEC = {
    **DEFAULT_SPEC,
    "params": {"n": 10000, "dim": 2, "n_components": 10},
    "public_fraction": 0.02,
    "public_declared": True,
}

#: What a user must state before rows are published in the clear.
PUBLIC_STATEMENT = ("I state that these rows are public: already published, or their people consented to "
                    "publication. They are released in the clear and are not protected.")


def _hash(obj) -> str:
    return hashlib.sha256(json.dumps(obj, sort_keys=True, default=str).encode()).hexdigest()[:16]


def median_heuristic(P: np.ndarray) -> float:
    """Median pairwise Euclidean distance of **public** points (the classic heuristic).

    Delegates to :func:`dpkme.two_sample.features.public_lengthscale` (a seeded subsample of at most 2000
    rows). Never call it on the private rows unless the release is labelled NOT private.
    """
    from dpkme.two_sample.features import public_lengthscale

    return float(public_lengthscale(np.asarray(P, dtype=float)))


def generator_geometry(name: str, params: dict, dim: int) -> tuple[float, np.ndarray, float, str]:
    """Lengthscale and q = N(center, scale^2 I) suggested by a generator's *parameters* (public)."""
    p = params
    zero = np.zeros(dim)
    if name == "paper_mixture":
        return (paper_kernel(dim).lengthscale, zero, 500.0,
                "the paper's settings (App. B): γ = 10⁻⁴/D and q = N(0, 500² I)")
    if name == "two_moons":
        s = float(p.get("scale", 1.0))
        return 0.25 * s, np.array([0.5, 0.25]) * s, 1.0 * s, "from the generator's scale (moons of radius 1)"
    if name == "concentric_circles":
        s = float(p.get("scale", 1.0))
        return 0.2 * s, zero, 0.8 * s, "from the generator's outer radius"
    if name == "spiral":
        s = float(p.get("scale", 1.0))
        return 0.15 * s, zero, 0.7 * s, "from the generator's outer radius"
    if name == "gaussian_blobs":
        b = float(p.get("box_half_width", 10.0))
        return max(float(p.get("cluster_std", 1.0)), b / 20), zero, b, "from the cluster std and the centre box"
    if name == "uniform_box":
        lo, hi = float(p.get("low", -1.0)), float(p.get("high", 1.0))
        return (hi - lo) / 6, np.full(dim, (lo + hi) / 2), (hi - lo) / 2, "from the declared cube"
    if name == "anisotropic_gaussian":
        a, b = float(p.get("major_std", 3.0)), float(p.get("minor_std", 0.5))
        return max(b, a / 4), zero, a, "from the generator's standard deviations"
    if name == "student_t_cloud":
        s = float(p.get("scale", 1.0))
        return s, zero, 2 * s, "from the generator's scale"
    return 1.0, zero, 1.0, "a generic default"


#: The app's words for the library's advice to pass ``drop_missing=True`` (issue 16 walk, finding 9).
DROP_OPTION = "tick 'Drop rows with missing values in these columns' (N then depends on the private data)"


def _numeric_rows(frame: pd.DataFrame, cols: list, *, drop: bool, instead: str) -> tuple[np.ndarray, np.ndarray, int]:
    """(rows, positions of the kept rows, number dropped) of the numeric columns ``cols`` of ``frame``.

    Missing cells are an error unless ``drop``; the error names the page's option (never the library keyword)
    and ``instead``, what else the user can do with this source.
    """
    if drop:
        X, dropped = numeric_matrix(frame, cols, drop_missing=True)       # the library's checks and messages
        if not dropped:
            return X, np.arange(len(frame)), 0
        pos = "__dpkme_row__"                  # which rows were kept (labels follow them): their positions
        while pos in frame.columns:
            pos += "_"
        with_pos = frame[cols].assign(**{pos: np.arange(len(frame), dtype=float)})
        M, _ = numeric_matrix(with_pos, [*cols, pos], drop_missing=True)
        return M[:, :-1], M[:, -1].astype(np.int64), int(dropped)
    try:
        X = numeric_matrix(frame, cols)
    except ValueError as exc:
        msg = str(exc)
        if "(drop_missing=True)" in msg and " Fill them in" in msg:
            msg = msg.split(" Fill them in", 1)[0] + f" Deselect those columns, {DROP_OPTION}, or {instead}."
        raise ValueError(msg) from None
    return X, np.arange(len(frame)), 0


def _raw_rows(spec: dict, df: pd.DataFrame | None):
    """(rows, column names, labels or None, display name, data_key, generator record)."""
    src = spec["source"]
    if src == "generated":
        name = spec["generator"]
        if name not in GENERATORS:
            raise ValueError(f"unknown generator {name!r}.")
        g = GENERATORS[name]
        params = dict(spec["params"])
        seed = int(spec["seed"])
        out = g(**params, random_state=seed, return_labels=True)
        X, labels = out
        cols = [f"x{j + 1}" for j in range(X.shape[1])]
        shown = ", ".join(f"{k}={v}" for k, v in params.items() if k not in ("n", "dim"))
        label = f"{g.label} (seed {seed}{', ' + shown if shown else ''})"
        data_key = "gen:" + _hash([name, params, seed])
        return X, cols, (labels if g.has_labels else None), label, data_key, {
            "name": name, "params": params, "seed": seed}
    if src == "sample":
        frame, info = load_sample(spec["sample"])
        cols = list(spec.get("columns") or info.numeric_columns)
        X, kept, dropped = _numeric_rows(frame, cols, drop=bool(spec.get("drop_missing")),
                                         instead="read the table as a mixed table with a declared schema (missing "
                                                 "values as a category)")
        labels = None
        if info.label_column:
            labels = pd.factorize(frame[info.label_column])[0][kept]
        return X, cols, labels, info.label, "sample:" + info.name, {"dropped_rows": dropped} if dropped else None
    if src == "upload":
        if df is None:
            raise ValueError("no uploaded table; upload a CSV or Parquet file first.")
        cols = list(spec.get("columns") or [])
        if not cols:
            if not numeric_columns(df):
                numeric_matrix(df)            # the library's message: no numeric column, with an example cell
            raise ValueError("no columns selected; choose at least one numeric column.")
        X, _, dropped = _numeric_rows(df, cols, drop=bool(spec.get("drop_missing")),
                                      instead="fill the cells in before uploading")
        return X, cols, None, f"upload '{spec.get('filename', 'table')}'", "upload:" + spec["upload_hash"], {
            "dropped_rows": dropped} if dropped else None
    raise ValueError(f"unknown data source {src!r}.")


def table_source(spec: dict, df: pd.DataFrame | None = None) -> tuple[pd.DataFrame, str, str]:
    """(the whole table, display name, data_key) of a bundled sample or an upload (schema mode)."""
    src = spec["source"]
    if src == "sample":
        frame, info = load_sample(spec["sample"])
        return frame, info.label, "sample:" + info.name
    if src == "upload":
        if df is None:
            raise ValueError("no uploaded table; upload a CSV or Parquet file first.")
        return df, f"upload '{spec.get('filename', 'table')}'", "upload:" + spec["upload_hash"]
    raise ValueError(f"a declared schema applies to a bundled table or an upload, not to the source {src!r}.")


def split_indices(n: int, *, public_fraction: float = 0.0, heldout_fraction: float = 0.0, seed: int = 0):
    """Row indices (public or None, private, held-out or None) of the app's split of ``n`` rows.

    The same seeded random split as for numeric data (independent of the values): the publishable
    subset first, then the held-out rows out of the rest.
    """
    rows = np.arange(n, dtype=float)[:, None]
    pub = None
    rest = rows
    if public_fraction > 0:
        pub_rows, rest, _ = public_private_split(rows, public_fraction=public_fraction, random_state=int(seed))
        pub = pub_rows[:, 0].astype(np.int64)
    held = None
    if heldout_fraction > 0:
        rest, held_rows, _ = public_private_split(rest, public_fraction=1.0 - heldout_fraction,
                                                  random_state=int(seed) + 1)
        held = held_rows[:, 0].astype(np.int64)
    return pub, rest[:, 0].astype(np.int64), held


def coordinate_names(schema) -> list[str]:
    """A name for every coordinate of the schema's embedding (``species=Adelie``, ``mass``, ``mass: missing``)."""
    names: list[str] = []
    for c in schema.columns:
        block = schema.domain.blocks[c.name]
        width = block.stop - block.start
        if c.kind in ("continuous", "integer", "datetime"):
            names.append(c.name)
            if width == 3:
                names += [f"{c.name}: present", f"{c.name}: missing"]
        else:
            names += [f"{c.name}={'(missing)' if v is None else v}" for v in c.levels]
    return names


def declared_bounds(sample: str, columns) -> dict:
    """Declared bounds ``{column: (lower, upper)}`` of a bundled sample's numeric ``columns``, from its schema.

    The bundled schemas are declared from the data's documentation (public), not read off its rows. A sample
    without a schema, or a column it does not bound, gives nothing.
    """
    info = SAMPLES.get(sample)
    if info is None or not getattr(info, "schema", None):
        return {}
    from dpkme.datasets import load_schema

    out = {}
    for c in load_schema(sample).columns:
        if c.name in [str(x) for x in columns] and c.kind in ("continuous", "integer") \
                and c.lower is not None and c.upper is not None and float(c.lower) < float(c.upper):
            out[c.name] = (float(c.lower), float(c.upper))
    return out


def scaling_suggestion(spec: dict, df: pd.DataFrame | None = None, *, use_private: bool = False):
    """:func:`dpkme.preprocessing.suggest_scaling` for a numeric ``spec``: declared bounds (a bundled sample's
    schema), else the publishable rows (the same seeded split as :func:`build_dataset`, which does not look at
    the values). The other rows only with ``use_private`` (the user's explicit, flagged choice: the suggestion
    then marks those columns as read from the private rows). Raises ValueError when the rows cannot be read
    (the dataset's own error)."""
    X_all, cols = _raw_rows(spec, df)[:2]
    cols = [str(c) for c in cols]
    bounds = declared_bounds(spec["sample"], cols) if spec["source"] == "sample" else {}
    frac = float(spec.get("public_fraction") or 0.0)
    public, rest = None, X_all
    if frac > 0 and spec.get("public_declared") and X_all.shape[0] >= 2:
        public, rest, _ = public_private_split(X_all, public_fraction=frac, random_state=int(spec.get("split_seed", 0)))
    return suggest_scaling(public, bounds=bounds or None, columns=cols, private_rows=rest if use_private else None)


def build_table_dataset(spec: dict, df: pd.DataFrame | None = None) -> Dataset:
    """The :class:`Dataset` of a mixed table with the declared ``spec["schema"]`` (its embedded rows).

    ``X``, ``public`` and ``heldout`` are the rows embedded by :meth:`dpkme.schema.TableSchema.encode`
    (validated, clipped to the declared bounds, missing values as declared); no scaling. The kernel is
    the Gaussian kernel with lengthscale 1 on embedded rows: the per-column lengthscales and category
    similarities are part of the schema. Nothing is derived from the private rows.
    """
    from dpkme.schema import TableSchema

    schema = spec["schema"]
    if not isinstance(schema, TableSchema):
        schema = TableSchema.from_dict(schema)
    frame, label, data_key = table_source(spec, df)
    absent = [n for n in schema.names if n not in [str(c) for c in frame.columns]]
    if absent:
        raise ValueError(f"column(s) {absent} of the schema are not in the table; its columns are "
                         f"{[str(c) for c in frame.columns][:20]}. Fix the schema (Data page) or load the right table.")
    frame = frame.rename(columns=str)[list(schema.names)]
    n_all = frame.shape[0]
    if n_all < 2:
        raise ValueError(f"the data has {n_all} row(s); at least 2 are needed.")
    frac = float(spec.get("public_fraction") or 0.0)
    hfrac = float(spec.get("heldout_fraction") or 0.0)
    if frac > 0 and not spec.get("public_declared"):
        raise ValueError("a publishable subset publishes rows in the clear: state that those rows are public "
                         "(tick the statement under 'Publishable fraction'), or set the publishable fraction "
                         "to 0 %.")
    seed = int(spec.get("split_seed", 0))
    pub, priv, held = split_indices(n_all, public_fraction=frac, heldout_fraction=hfrac, seed=seed)
    Z_all = schema.encode(frame)              # refuses what the schema cannot take, naming column and value
    report = schema.encode_report(frame)      # owner-only counts (clipped, missing, unknown)
    split = {"seed": seed, "public_fraction": frac, "heldout_fraction": hfrac}
    if pub is not None:
        split["n_public"] = int(pub.size)
    notes: list[str] = []
    if schema.data_dependent:
        notes.append(
            f"The declared values of column(s) {list(schema.data_dependent)} were read from the PRIVATE rows "
            "(suggestions without public rows): releases with this schema are marked NOT differentially private. "
            "Re-declare those columns from public knowledge (and tick 'declared'), suggest them from a publishable "
            "subset, or discover them privately.")
    domain = schema.domain
    key = _hash([data_key, {k: v for k, v in spec.items() if k not in ("upload_hash",)}])
    return Dataset(
        key=key, data_key=data_key, name=label + " (declared schema)", source=spec["source"],
        X=np.ascontiguousarray(Z_all[priv]), columns=coordinate_names(schema),
        public=None if pub is None else np.ascontiguousarray(Z_all[pub]), labels=None, public_labels=None,
        heldout=None if held is None else np.ascontiguousarray(Z_all[held]),
        scaling=None, clip_box=None,
        n_clipped=int(sum(c.get("clipped_low", 0) + c.get("clipped_high", 0) for c in report.counts.values())),
        generator=None, split=split, suggested_lengthscale=1.0,
        lengthscale_note=("1 on the embedded rows: each column's lengthscale and each categorical column's "
                          "similarity are declared in the schema (Data page)"),
        q_center=0.5 * (domain.lower + domain.upper), q_scale=1.0,
        q_note="uniform over the declared domain of the schema", notes=notes, schema=schema, table_report=report,
    )


def build_dataset(spec: dict, df: pd.DataFrame | None = None) -> Dataset:
    """The :class:`Dataset` described by ``spec`` (raises ValueError with advice on bad input)."""
    if spec.get("schema") is not None:
        return build_table_dataset(spec, df)
    X_all, cols, labels, label, data_key, gen = _raw_rows(spec, df)
    notes: list[str] = []
    if gen and "dropped_rows" in gen:
        notes.append(
            f"{gen['dropped_rows']} row(s) with missing values were dropped; N now depends on the private "
            "data (declare N as public if you rely on it)."
        )
        gen = None
    if X_all.shape[0] < 2:
        raise ValueError(f"the data has {X_all.shape[0]} row(s); at least 2 are needed.")

    # 1. publishable subset: a seeded random split, independent of the values
    frac = float(spec.get("public_fraction") or 0.0)
    public = pub_labels = None
    X = X_all
    split = {"seed": int(spec.get("split_seed", 0)), "public_fraction": frac,
             "heldout_fraction": float(spec.get("heldout_fraction") or 0.0)}
    if frac > 0:
        if not spec.get("public_declared"):
            raise ValueError("a publishable subset publishes rows in the clear: state that those rows are public "
                             "(tick the statement under 'Publishable fraction'), or set the publishable fraction "
                             "to 0 %.")
        public, X, idx = public_private_split(X_all, public_fraction=frac, random_state=int(spec.get("split_seed", 0)))
        split["n_public"] = int(idx.public.size)
        if labels is not None:
            pub_labels, labels = labels[idx.public], labels[idx.private]

    # 1b. held-out rows: stand-ins for a third party's own sample (never part of a release)
    hfrac = float(spec.get("heldout_fraction") or 0.0)
    heldout = None
    if hfrac > 0:
        X, heldout, hidx = public_private_split(X, public_fraction=1.0 - hfrac,
                                                random_state=int(spec.get("split_seed", 0)) + 1)
        if labels is not None:
            labels = labels[hidx.public]

    # 2. declared box: clip (a per-record map fixed in advance)
    box = spec.get("box")
    clip_box = None
    n_clipped = 0
    if box is not None:
        lower, upper = (np.asarray(b, dtype=float) for b in box)
        if lower.shape[0] != X.shape[1] or upper.shape[0] != X.shape[1]:
            raise ValueError(f"the declared box has {lower.shape[0]} bounds for {X.shape[1]} columns.")
        if spec.get("clip"):
            X, n_clipped = clip_to_box(X, lower, upper)
            if public is not None:
                public = clip_to_box(public, lower, upper, return_count=False)
            if heldout is not None:
                heldout = clip_to_box(heldout, lower, upper, return_count=False)
            clip_box = (lower, upper)

    # 3. declared scaling (never from the private rows)
    mode = spec.get("scaling", "none")
    scaling = None
    if mode == "public":
        if public is None or public.shape[0] < 2:
            raise ValueError(
                "standardising needs a publishable subset of at least 2 rows (its mean and std are public); "
                "choose a publishable fraction > 0, or declare a range for every column instead."
            )
        scaling = DeclaredScaling.from_public_data(public, source="publishable subset (public)")
    elif mode == "box":
        if box is None:
            raise ValueError("declare a lower and an upper bound for every column, or choose another scaling.")
        scaling = DeclaredScaling.from_box(lower=box[0], upper=box[1], source="range declared by the user")
    elif mode == "columns":
        declared = spec.get("declared_scaling")
        if declared is not None:         # None: some column is not declared yet (the Data page says which)
            scaling = DeclaredScaling.from_dict(declared)
            if scaling.columns is not None and list(scaling.columns) != [str(c) for c in cols]:
                raise ValueError(f"the declared scaling is for the columns {list(scaling.columns)} but the data "
                                 f"has {[str(c) for c in cols]}; declare it again for these columns.")
            if scaling.data_dependent:
                notes.append(f"The scaling of column(s) {list(scaling.data_dependent)} was read from the PRIVATE "
                             "rows: releases with it are NOT differentially private. Declare those values.")
    elif mode != "none":
        raise ValueError(f"unknown scaling {mode!r}.")
    if scaling is not None:
        X = scaling.apply(X)
        if public is not None:
            public = scaling.apply(public)
        if heldout is not None:
            heldout = scaling.apply(heldout)

    # 4. public suggestions for the kernel and for q
    dim = X.shape[1]
    if spec["source"] == "generated" and scaling is None:
        ls, qc, qs, why = generator_geometry(spec["generator"], spec["params"], dim)
        ls_note = q_note = why
    elif public is not None and public.shape[0] >= 5:
        try:
            ls = median_heuristic(public)
            ls_note = "median pairwise distance of the publishable subset (public data)"
        except ValueError:   # most publishable rows coincide (e.g. 0/1 columns, or clipped onto a box corner)
            ls = 0.5 * math.sqrt(dim) if scaling is not None else 1.0
            ls_note = ("a placeholder: most publishable rows are identical (median distance 0); declare a "
                       "lengthscale")
            notes.append(
                "Most rows of the publishable subset are identical (their median pairwise distance is 0), so no "
                "kernel lengthscale can be suggested from them. Declare one on the Kernel & privacy page."
            )
        qc = public.mean(axis=0)
        qs = float(1.5 * public.std(axis=0, ddof=1).max()) or 1.0
        q_note = "centre and 1.5 × largest std of the publishable subset (public data)"
    elif scaling is not None:
        ls, qc, qs = 0.5 * math.sqrt(dim), np.zeros(dim), 1.0
        ls_note = "a default for data in declared units (≈ [-1, 1] per column); adjust it"
        q_note = "centred at 0 with scale 1 in declared units"
    else:
        ls, qc, qs = 1.0, np.zeros(dim), 1.0
        ls_note = "a placeholder: declare a lengthscale from what you know about the columns"
        q_note = "a placeholder: declare where the data lives"
        notes.append(
            "No publishable subset and no declared scaling: the kernel lengthscale and the distribution of "
            "random synthetic points cannot be suggested from public information. Declare them on the "
            "Kernel & privacy and Release pages."
        )

    if scaling is not None and scaling.scaled_box() is not None:
        # declared bounds on every column: q is uniform over them (issue 16, finding 3: points in the data's domain)
        lo, hi = scaling.scaled_box()
        qc, qs = 0.5 * (lo + hi), float(np.max(hi - lo) / 2.0)
        q_note = "uniform over the declared bounds of every column (public)"
    elif mode == "columns" and scaling is not None and (public is None or public.shape[0] < 5):
        q_note = ("per column: centre and scale of the declared scaling (q = N(c_j, s_j²) in original units, "
                  "public)")

    key = _hash([data_key, {k: v for k, v in spec.items() if k not in ("upload_hash",)}])
    return Dataset(
        key=key, data_key=data_key, name=label, source=spec["source"], X=np.ascontiguousarray(X),
        columns=cols, public=None if public is None else np.ascontiguousarray(public), labels=labels,
        public_labels=pub_labels, heldout=None if heldout is None else np.ascontiguousarray(heldout),
        scaling=scaling, clip_box=clip_box, n_clipped=int(n_clipped),
        generator=gen, split=split, suggested_lengthscale=float(ls), lengthscale_note=ls_note,
        q_center=np.asarray(qc, dtype=float), q_scale=float(qs), q_note=q_note, notes=notes,
    )


@st.cache_data(max_entries=16, show_spinner=False)
def cached_dataset(spec_json: str) -> Dataset:
    """Deterministic datasets (generated from a seed, bundled samples), cached by their spec."""
    return build_dataset(json.loads(spec_json))


def spec_json(spec: dict) -> str:
    return json.dumps(spec, sort_keys=True, default=lambda o: np.asarray(o).tolist())


def load_default(spec: dict = DEFAULT_SPEC) -> Dataset:
    return cached_dataset(spec_json(spec))


def sample_choices() -> dict[str, str]:
    return {name: info.label for name, info in SAMPLES.items()}
