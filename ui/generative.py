"""Logic of the Generative release page (``pages/generative.py``): DPGM data, planning, run, figures, files.

DPGM (Acs et al., Algorithm 1; :func:`dpkme.generative.dpgm`): private kernel k-means, then one DP-SGD-trained
VAE or RBM per cluster. Everything here that is shown *before* a run is a function of public inputs only
(declared bounds, the declared number of rows, k, the architecture, epochs, batch size, clip norm, ε, δ):
the plan, the budget split and the ε-vs-epochs curves. The run is charged to the session ledger of the
individuals it reads, before it reads them.

Datasets (:data:`DATASETS`): the bundled 8×8 digits (default; 20 % held out by a fixed public split, the digit
label is a column of the record), the app's current numeric dataset, the bundled penguins table (four
measurements with the bounds of its declared schema, species as the label) and the paper's mixture (the app's
default data; bounds declared from the generator's parameters). Each is an :class:`ui.state.Dataset`, so the
ledger, its parts and the guarantee work as on every other page.

Defaults (issues 17 and 26): each dataset and split of the rows starts from the settings the benchmark measured
(:data:`DEFAULTS`; one model per class on the digits: large batches (L = 1024, about 70 % of the rows in every
step), 16 steps, VAE 16/1, learning rate 0.1, so that the digits are recognisable at ε = 1), and the page
shows what the benchmark found with them at the chosen ε (:func:`expected_result`, labelled as the benchmark's, not
a promise about the run) and how long the default run took (:data:`DEFAULT_RUN`).

Cancel: Streamlit cannot interrupt a running script from a button of the same run. A Stop button is drawn
during training; pressing it (or changing any input) makes Streamlit request a rerun, which it signals from
inside the next ``st.progress`` call. :class:`ui.widgets.StoppableProgress` catches that signal, the DPGM
``progress`` callback returns ``False``, the library stops training and returns the partial models
(``cancelled=True``), the page stores them by mutating a dict already in the session state, and the signal is
re-raised so the rerun happens. The charge stays the planned one (the library's rule: a data-dependent stop is
covered by the fixed-horizon guarantee, not by the cost of the steps that ran).
"""

from __future__ import annotations

import io
import json
import math
from dataclasses import dataclass
from types import SimpleNamespace

import numpy as np
import pandas as pd
import streamlit as st

from . import state as S

#: Dataset choices of the page.
DATASETS = {
    "digits": "Handwritten digits 8×8 (bundled; the label is a column)",
    "penguins": "Penguins (bundled table: 4 measurements, species as the label)",
    "mixture": "The paper's mixture of Gaussians (the app's default data)",
    "current": "The app's current dataset (numeric columns)",
}
#: Dataset keys of the two generative-modelling datasets.
DIGITS_KEY = "dpgm:digits"
PENGUINS_KEY = "dpgm:penguins"
#: Held-out share of the bundled digits and penguins (a fixed, value-independent split: seed 0).
HELDOUT_FRACTION = 0.2
SPLIT_SEED = 0
#: The paper's mixture: component means ~ N(100, 200²), points ± 30: declared box 100 ± 800 (public).
MIXTURE_BOUNDS = (-700.0, 900.0)
PENGUIN_COLUMNS = ("bill_length_mm", "bill_depth_mm", "flipper_length_mm", "body_mass_g")
#: Most rows a download of sampled rows holds.
MAX_ROWS = 100_000
#: Rows in the synthetic CSV by default: a public constant (the exact N is private under add/remove).
DEFAULT_ROWS = 1000
#: How the rows are split between the models (:data:`dpkme.generative.PARTITIONS`); "labels" needs a label column.
PARTITIONS = {
    "kmeans": "k-means clusters (the paper: private kernel k-means, k models)",
    "labels": "one model per class (the label column splits the rows)",
}
#: The trade-off of the two partitions, in one line (public facts, shown next to the choice).
PARTITION_NOTE = ("One model per class: generated labels match their rows by construction and the whole budget goes "
                  "to DP-SGD (no k-means), but the classes are assumed equally frequent (public weights 1/c), so the "
                  "generated rows have equal class proportions, not the table's.")
#: Why one model per class is the default when the data has a label column (issues 17, 26), in one line.
PARTITION_DEFAULT_NOTE = ("Default when the data has labels (k-means clusters, the paper's method, stay selectable): "
                          "on the digits its generated rows train classifiers far better (benchmarks/results/dpgm.md), "
                          "and with the default settings its digits are recognisable from ε = 1 "
                          "(benchmarks/results/dpgm_quality.md).")
#: The label of the slider that sets the k-means share (named in messages instead of the library's parameter).
KSHARE_LABEL = "k-means share of (ε, δ)"

#: The page's default settings per dataset and split of the rows (issues 17, 26), as the benchmarks measured them.
#: One model per class on the digits (issue 26, ``benchmarks/results/dpgm_quality.md``): large batches (L = 1024: q
#: about 0.7 on the 1,438 private digits, 2 steps an epoch) and few steps (8 epochs: 16), so that each step's
#: clipped-gradient sum is large against its noise, and a small VAE (16 hidden units, a 1-dimensional latent) with
#: few parameters for the noise to spread over; Adam at 0.1 so that 16 steps suffice. k-means on the digits keeps its best larger-batch variant
#: (``benchmarks/results/dpgm.md``); the tables and the mixture use the MMD panels' settings (k = 5, VAE 64/4; 20
#: epochs on the penguins, 10 on the mixture). Keys are the page's widgets.
DEFAULTS = {
    ("digits", "labels"): {"gen.batch": 1024, "gen.hidden": 16, "gen.latent": 1, "gen.lr": 0.1, "gen.epochs": 8},
    ("digits", "kmeans"): {"gen.k": 5, "gen.batch": 256, "gen.hidden": 32, "gen.latent": 4, "gen.lr": 3e-3,
                           "gen.epochs": 20},
    ("penguins", "labels"): {"gen.batch": 64, "gen.hidden": 64, "gen.latent": 4, "gen.lr": 1e-3, "gen.epochs": 20},
    ("penguins", "kmeans"): {"gen.k": 5, "gen.batch": 64, "gen.hidden": 64, "gen.latent": 4, "gen.lr": 1e-3,
                             "gen.epochs": 20},
    ("mixture", "kmeans"): {"gen.k": 5, "gen.batch": 128, "gen.hidden": 64, "gen.latent": 4, "gen.lr": 1e-3,
                            "gen.epochs": 10},
}
#: The batch sizes the page offers (1024: the digits' default, issue 26).
BATCH_CHOICES = (8, 16, 32, 64, 128, 256, 512, 1024)
#: Settings shared by every default (the benchmark's): a VAE, clip norm 1, 20 % of (ε, δ) to 5 noisy Lloyd steps,
#: the noise calibrated with the PLD accountant.
COMMON_DEFAULTS = {"gen.model": "vae", "gen.clip": 1.0, "gen.kshare": 0.2, "gen.kiter": 5, "gen.n_hidden": 64,
                   "gen.accountant": "pld"}
#: What the benchmarks measured with the :data:`DEFAULTS` (add/remove; δ = 1e-5 and ``benchmarks/results/dpgm.md``
#: unless ``delta`` and ``source`` say otherwise): per ε, the value (mean of runs, with their range where there were several),
#: and the references next to it. Public numbers.
BENCHMARK = {
    ("digits", "labels"): {
        "what": "class agreement (the share of generated digits that a classifier trained on real held-out digits "
                "assigns to the class of the model that drew them; higher is better)",
        "at": {0.3: "0.404 (0.28–0.56, 5 runs)", 1.0: "0.941 (0.89–0.96, 5 runs)", 2.0: "0.983 (0.97–0.99, 5 runs)",
               5.0: "0.989 (0.97–1.00, 5 runs)", 10.0: "1.000 (1.00–1.00, 5 runs)"},
        "refs": "the same classifier on the real private digits 0.942, chance 0.100; the previous defaults (L = 256, "
                "VAE 32/4, 40 epochs) 0.298 at ε = 1",
        "source": "benchmarks/results/dpgm_quality.md", "delta": "10⁻⁶"},
    ("digits", "kmeans"): {
        "what": "TSTR accuracy on a validation split (higher is better; one run each)",
        "at": {1.0: "0.103", 3.0: "0.072", 10.0: "0.373"},
        "refs": "without noise 0.808, chance 0.100: one model per class does far better on these data"},
    ("penguins", "labels"): {
        "what": "MMD of generated rows to held-out rows, the page's evaluation (smaller is closer; mean of 3 runs)",
        "at": {1.0: "0.349 (0.345–0.353)", 3.0: "0.359 (0.352–0.362)", 10.0: "0.327 (0.315–0.346)"},
        "refs": "uniform rows in the declared box 0.36–0.39, a KME release (Algorithm 2) 0.072–0.095, the private "
                "rows themselves 0.073: on this small table DPGM's rows are hardly closer than uniform ones",
        "source": "benchmarks/results/dpgm_defaults.md"},
    ("penguins", "kmeans"): {
        "what": "MMD of generated rows to held-out rows, the page's evaluation (smaller is closer; mean of 3 runs)",
        "at": {1.0: "0.379 (0.375–0.387)", 3.0: "0.362 (0.339–0.373)", 10.0: "0.340 (0.324–0.353)"},
        "refs": "uniform rows in the declared box 0.37–0.38, a KME release (Algorithm 2) 0.075–0.092, the private "
                "rows themselves 0.073: on this small table DPGM's rows are no closer than uniform ones",
        "source": "benchmarks/results/dpgm_defaults.md"},
    ("mixture", "kmeans"): {
        "what": "MMD of generated rows to held-out rows (smaller is closer; one run each, on the paper's mixture "
                "file, N = 5,000)",
        "at": {1.0: "0.311", 3.0: "0.306", 10.0: "0.279"},
        "refs": "uniform rows in the declared box 0.513, a KME release (Algorithm 2) 0.014–0.015, the private rows "
                "themselves 0.010"},
}


@dataclass
class GenData:
    """The data of one DPGM run: an app :class:`~ui.state.Dataset` plus what DPGM needs declared."""

    ds: S.Dataset                      # X: the private rows (features), heldout: held-out features
    bounds: tuple                      # declared (lower, upper) arrays of the feature columns
    labels: np.ndarray | None          # labels of the private rows (part of the record)
    heldout_labels: np.ndarray | None
    class_names: list | None           # declared classes (None: no label column)
    image_shape: tuple | None = None   # (8, 8) for the digits
    bounds_note: str = ""

    @property
    def n_classes(self) -> int:
        return 0 if self.class_names is None else len(self.class_names)

    @property
    def columns(self) -> list[str]:
        return [str(c) for c in self.ds.columns]


def _split(n: int):
    from .datasets import split_indices

    _, priv, held = split_indices(n, heldout_fraction=HELDOUT_FRACTION, seed=SPLIT_SEED)
    return priv, held


def _dataset(*, key, data_key, name, X, columns, heldout, labels) -> S.Dataset:
    return S.Dataset(key=key, data_key=data_key, name=name, source="sample", X=np.ascontiguousarray(X),
                     columns=list(columns), heldout=heldout, labels=labels,
                     split={"public_fraction": 0.0, "heldout_fraction": HELDOUT_FRACTION, "seed": SPLIT_SEED})


@st.cache_resource(show_spinner=False)
def digits_data() -> GenData:
    """The bundled digits: 1,797 images, 20 % held out (fixed split), bounds (0, 16) declared, labels 0–9."""
    from dpkme.datasets import DIGITS_INFO, load_digits

    X, y = load_digits()
    priv, held = _split(len(X))
    cols = [f"pixel_{i // 8}_{i % 8}" for i in range(64)]
    ds = _dataset(key=DIGITS_KEY, data_key="sample:digits", name=DIGITS_INFO["label"], X=X[priv], columns=cols,
                  heldout=X[held], labels=y[priv])
    d = X.shape[1]
    return GenData(ds=ds, bounds=(np.zeros(d), np.full(d, 16.0)), labels=y[priv], heldout_labels=y[held],
                   class_names=[str(i) for i in range(10)], image_shape=(8, 8),
                   bounds_note="pixel counts 0–16 (the data's documentation)")


@st.cache_resource(show_spinner=False)
def penguins_data() -> GenData:
    """Penguins: four measurements (bounds of the bundled declared schema; a missing cell takes the middle of its
    declared range, a per-row map), species as the label (the schema's three declared categories)."""
    from dpkme.datasets import load_sample, load_schema

    frame, info = load_sample("penguins")
    schema = load_schema("penguins")
    specs = {c.name: c for c in schema.columns}
    lo = np.array([float(specs[c].lower) for c in PENGUIN_COLUMNS])
    hi = np.array([float(specs[c].upper) for c in PENGUIN_COLUMNS])
    X = frame[list(PENGUIN_COLUMNS)].to_numpy(dtype=float)
    X = np.where(np.isnan(X), (lo + hi) / 2.0, X)
    classes = [str(c) for c in specs["species"].categories]
    y = frame["species"].map({c: i for i, c in enumerate(classes)}).to_numpy()
    if np.any(pd.isna(y)):
        raise ValueError("the penguins table has a species outside its declared categories; restore the file.")
    y = y.astype(np.int64)
    priv, held = _split(len(X))
    ds = _dataset(key=PENGUINS_KEY, data_key="sample:" + info.name, name=info.label + " (4 measurements)",
                  X=X[priv], columns=PENGUIN_COLUMNS, heldout=X[held], labels=y[priv])
    return GenData(ds=ds, bounds=(lo, hi), labels=y[priv], heldout_labels=y[held], class_names=classes,
                   bounds_note="the bundled schema's declared bounds (penguins.schema.json)")


def mixture_data() -> GenData:
    """The app's default data (the paper's mixture, 10 % held out) with bounds declared from the generator."""
    from .datasets import load_default

    ds = load_default()
    d = ds.dim
    return GenData(ds=ds, bounds=(np.full(d, MIXTURE_BOUNDS[0]), np.full(d, MIXTURE_BOUNDS[1])), labels=None,
                   heldout_labels=None, class_names=None,
                   bounds_note="100 ± 800 per coordinate: 4 standard deviations of the component means "
                               "N(100, 200²) (the generator's parameters)")


def suggested_range(ds: S.Dataset) -> tuple[float, float, str]:
    """A public default range for all columns of the app's dataset (the user may change it): its declared clipping
    box, else the generator's q (centre ± 3 scales), else the publishable subset's range; else [0, 1]."""
    if ds.clip_box is not None:
        lo, hi = (np.asarray(b, dtype=float) for b in ds.clip_box)
        return float(lo.min()), float(hi.max()), "the declared clipping box"
    if ds.generator is not None and ds.q_center is not None:
        c = np.asarray(ds.q_center, dtype=float)
        return float(c.min() - 3 * ds.q_scale), float(c.max() + 3 * ds.q_scale), "the generator's q (centre ± 3 scales)"
    if ds.n_public >= 2:
        return float(ds.public.min()), float(ds.public.max()), "the publishable subset's range"
    return 0.0, 1.0, "nothing public: declare the range"


def current_data(ds: S.Dataset, lo: float, hi: float, note: str) -> GenData:
    """The app's current numeric dataset with a declared range [lo, hi] for every column (no labels)."""
    if ds.is_table:
        raise ValueError("the current dataset is a mixed table (declared schema); DPGM here runs on numeric columns. "
                         "Choose the bundled penguins or the digits, or load numeric columns on the Data page.")
    if not (math.isfinite(lo) and math.isfinite(hi) and lo < hi):
        raise ValueError(f"the declared range must have lower < upper, got [{lo:g}, {hi:g}]; change it.")
    d = ds.dim
    return GenData(ds=ds, bounds=(np.full(d, float(lo)), np.full(d, float(hi))), labels=None, heldout_labels=None,
                   class_names=None, bounds_note=note)


# ---------------------------------------------------------------------- planning (public inputs only)
@st.cache_resource(show_spinner=False, max_entries=32)
def plan(*, epsilon: float, delta: float, n_private: int, batch_size: int, epochs: int, k: int,
         kmeans_share: float, kmeans_iter: int, accountant: str, partition: str = "kmeans"):
    """:func:`dpkme.generative.plan_dpgm` (cached: a function of public numbers only).

    ``partition="labels"`` plans as the library does for one model per class: no k-means (``k = 1`` in the
    plan), the whole budget to DP-SGD; ``k`` is then ignored."""
    from dpkme.generative import plan_dpgm

    if partition not in PARTITIONS:
        raise ValueError(f"partition={partition!r} is not one of {list(PARTITIONS)}; choose one of them.")
    try:
        return plan_dpgm(epsilon=epsilon, delta=delta, n_private=n_private, batch_size=batch_size, epochs=epochs,
                         k=1 if partition == "labels" else k, kmeans_iter=kmeans_iter, kmeans_share=kmeans_share,
                         accountant=accountant)
    except ValueError as exc:             # name the page's slider, not the library's parameter (issue 17)
        raise ValueError(str(exc).replace("kmeans_share", f"the slider “{KSHARE_LABEL}” (under Architecture and "
                                                          "accounting)")) from None


def default_settings(data: str, partition: str, *, n_private: int | None = None) -> dict:
    """The page's default settings (widget keys to values) for a dataset choice and a split of the rows.

    The benchmark's measured settings (:data:`DEFAULTS`, :data:`COMMON_DEFAULTS`); a split the benchmark did not
    measure on that data, and the app's current dataset, get the mixture's (k-means, VAE 64/4, 10 epochs). A default
    batch size larger than the (public) number of private rows becomes the largest choice up to a quarter of them.

    Parameters
    ----------
    data : str
        A key of :data:`DATASETS`.
    partition : str
        A key of :data:`PARTITIONS`.
    n_private : int, optional
        The declared number of private rows (public); ``None`` leaves the batch size as measured.

    Examples
    --------
    >>> default_settings("digits", "labels")["gen.batch"]
    1024
    """
    if data not in DATASETS or partition not in PARTITIONS:
        raise ValueError(f"no defaults for data={data!r}, partition={partition!r}; choose data from "
                         f"{list(DATASETS)} and a partition from {list(PARTITIONS)}.")
    own = DEFAULTS.get((data, partition)) or DEFAULTS.get((data, "kmeans")) or DEFAULTS[("mixture", "kmeans")]
    out = {**COMMON_DEFAULTS, **own}
    if n_private is not None and out["gen.batch"] > int(n_private):
        out["gen.batch"] = max([b for b in BATCH_CHOICES if b <= int(n_private) // 4] or [BATCH_CHOICES[0]])
    return out


def defaults_note(data: str, partition: str) -> str:
    """Where the page's default settings for this data and split come from, in one line.

    Parameters
    ----------
    data : str
        A key of :data:`DATASETS`.
    partition : str
        A key of :data:`PARTITIONS`.
    """
    if (data, partition) == ("digits", "labels"):
        return ("Defaults: large batches and few steps for one model per class on the digits (issue 26): L = 1024, "
                "8 epochs (16 steps), a small VAE 16/1, learning rate 0.1, chosen so that the digits are recognisable "
                "at ε = 1 (benchmarks/results/dpgm_quality.md). The digits are a public benchmark set: settings tuned "
                "on a table you treat as private would be a data-dependent choice.")
    if data == "penguins":
        return ("Defaults: the settings of the benchmark's penguins panel (benchmarks/results/dpgm.md), measured with "
                "both splits in benchmarks/results/dpgm_defaults.md.")
    if (data, partition) in DEFAULTS:
        return "Defaults: the settings the benchmark measured on this data and split (benchmarks/results/dpgm.md)."
    return ("Defaults: the settings the benchmark measured on the paper's mixture (k-means, VAE 64/4, 10 epochs); "
            "this data and split were not measured.")


def expected_result(data: str, partition: str, settings: dict, *, epsilon: float) -> str | None:
    r"""What the benchmark measured with these settings at (or around) ``epsilon``, in one labelled sentence.

    ``None`` unless ``settings`` are the benchmark's (:func:`default_settings`) and it measured this data and split.
    Between two measured values of :math:`\varepsilon` both are named; outside them, the nearest. Public numbers only
    (``benchmarks/results/dpgm.md``), never a promise about this run: each run draws fresh noise.

    Parameters
    ----------
    data : str
        A key of :data:`DATASETS`.
    partition : str
        A key of :data:`PARTITIONS`.
    settings : dict
        The page's current settings (widget keys to values); keys other than the defaults' are ignored.
    epsilon : float
        The chosen :math:`\varepsilon`.

    Examples
    --------
    >>> expected_result("digits", "labels", default_settings("digits", "labels"), epsilon=3.0)[:40]
    'Expected at ε = 3 (benchmark, not this r'
    """
    bench = BENCHMARK.get((data, partition))
    if bench is None or settings_differ(default_settings(data, partition), settings, partition=partition):
        return None
    eps = float(epsilon)
    at = bench["at"]
    grid = sorted(at)
    if any(abs(eps - e) <= 1e-9 * e for e in grid):
        e = min(grid, key=lambda g: abs(g - eps))
        value = f"{at[e]}"
    elif eps < grid[0]:
        value = f"below {at[grid[0]]} (measured at ε = {grid[0]:g}; a smaller ε adds more noise)"
        if bench["what"].startswith("MMD"):
            value = f"above {at[grid[0]]} (measured at ε = {grid[0]:g}; a smaller ε adds more noise)"
    elif eps > grid[-1]:
        value = f"about {at[grid[-1]]} (measured at ε = {grid[-1]:g})"
    else:
        lo = max(g for g in grid if g < eps)
        hi = min(g for g in grid if g > eps)
        value = f"between {at[lo]} (ε = {lo:g}) and {at[hi]} (ε = {hi:g})"
    return (f"Expected at ε = {eps:g} (benchmark, not this run; {bench.get('source', 'benchmarks/results/dpgm.md')}, "
            f"δ = {bench.get('delta', '10⁻⁵')}): {bench['what']}: {value}. For reference: {bench['refs']}.")


def settings_differ(defaults: dict, settings: dict, *, partition: str) -> bool:
    """Whether the page's ``settings`` differ from ``defaults`` in anything the run uses.

    The RBM's hidden units are ignored for a VAE, and the k-means settings for one model per class.

    Parameters
    ----------
    defaults : dict
        :func:`default_settings` (widget keys to values).
    settings : dict
        The page's current values of the same keys.
    partition : str
        A key of :data:`PARTITIONS`.
    """
    skip = {"gen.n_hidden"} if settings.get("gen.model", "vae") == "vae" else set()
    if partition == "labels":
        skip |= {"gen.k", "gen.kshare", "gen.kiter"}
    for key, value in defaults.items():
        if key in skip:
            continue
        got = settings.get(key)
        if got is None:
            return True
        if isinstance(value, (int, float)) and not isinstance(value, bool):
            try:
                if float(got) != float(value):
                    return True
            except (TypeError, ValueError):
                return True
        elif got != value:
            return True
    return False


def settings_text(defaults: dict, *, partition: str) -> str:
    """The benchmark's settings in words, e.g. ``"VAE 16/1, L = 1024, learning rate 0.1, 8 epochs, C = 1"``.

    Parameters
    ----------
    defaults : dict
        :func:`default_settings` (widget keys to values).
    partition : str
        A key of :data:`PARTITIONS`.
    """
    d = defaults
    text = (f"VAE {d['gen.hidden']}/{d['gen.latent']}, L = {d['gen.batch']}, learning rate {d['gen.lr']:g}, "
            f"{d['gen.epochs']} epochs, C = {d['gen.clip']:g}")
    if partition != "labels":
        text = f"k = {d['gen.k']}, " + text
    return text


#: Each dataset's default run at ε = 1 on a shared 2-core CPU, from pressing Train to everything the page shows
#: (``benchmarks/bench_dpgm_defaults.py``, ``benchmarks/results/dpgm_defaults.md``): (CPU seconds, wall seconds,
#: load average). CPU time is what a busy machine does not inflate; on 2 idle cores the wall time is about half to
#: all of it.
DEFAULT_RUN = {
    ("digits", "labels"): (14.9, 52.3, 13.2),
    ("digits", "kmeans"): (20.4, 31.3, 7.9),
    ("penguins", "labels"): (12.1, 15.5, 7.3),
    ("mixture", "kmeans"): (16.9, 19.7, 6.6),
}


def default_run_note(data: str, partition: str) -> str:
    """How long the default run of this data and split took in the benchmark (``""`` when it was not measured).

    Parameters
    ----------
    data : str
        A key of :data:`DATASETS`.
    partition : str
        A key of :data:`PARTITIONS`.
    """
    got = DEFAULT_RUN.get((data, partition))
    if got is None:
        return ""
    cpu, wall, load = got
    return (f"The default run of this data and split, everything shown after it included, took {cpu:.0f} s of CPU "
            f"time: about {cpu / 2:.0f}–{cpu:.0f} s on 2 idle cores ({wall:.0f} s measured on 2 cores shared at load "
            f"average {load:g}; benchmarks/results/dpgm_defaults.md).")


def train_disabled_reason(*, plan_ok: bool, run_ok: bool) -> str:
    """Why the Train button is disabled, in words ("" when it is enabled).

    Parameters
    ----------
    plan_ok : bool
        Whether the run could be planned from the current inputs.
    run_ok : bool
        Whether the predicted cost is small enough, or its confirmation box is ticked.
    """
    if not plan_ok:
        return "the run cannot be planned with these settings; the red message on the right says what to change."
    if not run_ok:
        return ("the predicted run is long: tick **Run it anyway** above (it can be stopped), or lower the epochs, "
                "the batch size or the model size.")
    return ""


def progress_text(step: int, total: int, loss: float, p) -> str:
    r"""The progress line of a run: the charged ε as the headline, then a bound for the steps so far.

    The bound for the first ``step`` steps is :math:`\min(\varepsilon_{\mathrm{RDP}}(t), \varepsilon_{\mathrm{charged}})`:
    both are valid (the ε of a prefix of the planned steps is at most the plan's), so it never exceeds the charge
    (RDP alone is looser than a PLD plan and climbed above it, issue 17). Public numbers only.

    Parameters
    ----------
    step, total : int
        Steps run so far and planned.
    loss : float
        The noisy training loss released by DP-SGD.
    p : DPGMPlan
        The run's plan (its charged ε and accountant).
    """
    acc = {"pld": "PLD", "rdp": "RDP"}.get(str(p.accountant), str(p.accountant))
    so_far = min(float(p.rdp_epsilon_after(int(step))), float(p.epsilon))
    return (f"ε charged {p.epsilon:.3g} ({acc}, whole run) · step {step:,} of {total:,} · noisy loss {loss:.3g} · "
            f"ε of the steps so far ≤ {so_far:.3g}")


def budget_split(p, *, partition: str = "kmeans") -> pd.DataFrame:
    """The budget split of a plan: ε of the clustering alone, of the training alone, and of both together.

    With ``partition="labels"`` there is no clustering row (the label column splits the rows at no cost) and the
    noise is per class's model."""
    from dpkme.generative import dpgm_epsilon

    rows = []
    if p.kmeans is not None:
        rows.append({"part": f"private kernel k-means ({p.kmeans.n_iter} noisy Lloyd steps)",
                     "ε alone": dpgm_epsilon(noise_multiplier=1e6, sampling_rate=p.sampling_rate, steps=1,
                                             delta=p.delta, kmeans_plan=p.kmeans, accountant=p.accountant),
                     "noise": f"composed Gaussian, μ = {p.kmeans.mu_total:.3g}"})
    rows.append({"part": f"DP-SGD training ({p.steps} steps, q = {p.sampling_rate:.3g})",
                 "ε alone": dpgm_epsilon(noise_multiplier=p.noise_multiplier, sampling_rate=p.sampling_rate,
                                         steps=p.steps, delta=p.delta, accountant=p.accountant),
                 "noise": f"σ = {p.noise_multiplier:.3g} × clip norm per "
                          + ("class's model" if partition == "labels" else "cluster")})
    rows.append({"part": "whole run (composed: the ledger's charge)", "ε alone": p.epsilon,
                 "noise": f"δ = {S.fmt_delta(p.delta)}, add/remove one row"})
    return pd.DataFrame(rows)


def curve_epochs(epochs: int) -> list[int]:
    """Epoch grid of the planning curve: 0 to max(2·epochs, 10), at most 9 points, the chosen value included."""
    top = max(2 * int(epochs), 10)
    grid = sorted({int(round(v)) for v in np.linspace(0, top, 8)} | {int(epochs)})
    return grid


@st.cache_resource(show_spinner=False, max_entries=32)
def planning_curve(_plan, *, key: str, epochs: tuple) -> dict:
    """ε after each number of epochs for the plan's noise (RDP, PLD, the paper's Theorem 4); public inputs only.

    ``key`` identifies the plan (its public inputs) for the cache; ``_plan`` is not hashed."""
    from dpkme.generative import epsilon_vs_epochs

    return epsilon_vs_epochs(list(epochs), noise_multiplier=_plan.noise_multiplier,
                             sampling_rate=_plan.sampling_rate, delta=_plan.delta, kmeans_plan=_plan.kmeans)


@st.cache_resource(show_spinner=False, max_entries=16)
def paper_figure2(*, sampling_rate: float, sigma_G: float, sigma_K: float, sigma_C: float = 4.0,
                  kmeans_iter: int = 20, max_epochs: int = 20, pld: bool = False) -> dict:
    """The paper's Figure 2 setting: ε against SGD epochs at δ = 10⁻⁵, T_K = 20 k-means steps, σ_C = 4."""
    from dpkme.generative import epsilon_vs_epochs

    grid = [int(v) for v in np.unique(np.linspace(0, max_epochs, 11).round())]
    methods = ("rdp", "pld", "paper") if pld else ("rdp", "paper")
    return epsilon_vs_epochs(grid, noise_multiplier=sigma_G, sampling_rate=sampling_rate, delta=1e-5,
                             sigma_K=sigma_K, sigma_C=sigma_C, kmeans_iter=kmeans_iter, methods=methods)


# ---------------------------------------------------------------------- the run
def run(gd: GenData, p, params: dict, *, n_private: int, rng=None, progress=None):
    """Run DPGM on ``gd``'s private rows with the plan ``p`` (its noise multiplier: no re-calibration).

    ``n_private`` is the public size of the run (add/remove: declared or privately counted by the gate,
    :func:`ui.gate.row_count`), never the exact number of private rows.

    The VAE's likelihood is declared from the data kind (public): Bernoulli for images (pixel intensities),
    Gaussian for table columns with their own units."""
    from dpkme.generative import dpgm

    ds = gd.ds
    return dpgm(ds.X, bounds=gd.bounds, labels=gd.labels, n_classes=gd.n_classes or None, n_private=int(n_private),
                k=params["k"], model=params["model"], epochs=params["epochs"], batch_size=params["batch_size"],
                clip_norm=params["clip_norm"], learning_rate=params["learning_rate"], hidden=(params["hidden"],),
                latent_dim=params["latent_dim"], n_hidden=params["n_hidden"],
                likelihood="bernoulli" if gd.image_shape is not None else "gaussian", epsilon=params["epsilon"],
                delta=params["delta"], noise_multiplier=p.noise_multiplier, kmeans_share=params["kmeans_share"],
                partition=params.get("partition", "kmeans"),
                kmeans_iter=params["kmeans_iter"], accountant=params["accountant"], rng=rng, progress=progress)


def estimate(gd: GenData, params: dict, p, *, n_rows: int | None = None):
    """Predicted cost of a run and of what the page shows after it (public sizes only): :func:`dpkme.cost.estimate_cost`
    ``("dpgm", ...)`` with the process-wide model calibrated on this machine and corrected by the last measured run
    (:func:`dpkme.cost.observe_cost`): compiling the models (and the private k-means), each SGD step (all models at
    once: models × padded batch × parameters), then sampling and the owner's evaluation.

    With ``params["partition"] == "labels"`` there is one model per declared class, each with a padded batch for
    :math:`L/c`, the features only (no label block) and no k-means."""
    from dpkme.cost import estimate_cost
    from dpkme.generative import default_capacity

    by_label = params.get("partition", "kmeans") == "labels" and gd.n_classes > 0
    models = gd.n_classes if by_label else params["k"]
    cap = default_capacity(math.ceil(params["batch_size"] / models) if by_label else params["batch_size"])
    D = gd.ds.dim + (0 if by_label else gd.n_classes)
    width = params["hidden"] if params["model"] == "vae" else params["n_hidden"]
    n_par = 2 * D * width + 4 * width * max(params["latent_dim"], 1) if params["model"] == "vae" else D * width
    n_rows = gd.ds.n if n_rows is None else int(n_rows)      # a public N (the counted N̂) for a projected estimate
    est = estimate_cost("dpgm", steps=max(int(p.steps), 1), models=int(models), capacity=int(cap),
                        n_params=int(n_par), n=max(n_rows, 1), dim=int(D), kmeans=not by_label and params["k"] > 1)
    est.params.update(k=params["k"], model=params["model"], partition="labels" if by_label else "kmeans")
    return est


def observe(gd: GenData, params: dict, p, seconds: float) -> None:
    """Tell the cost model how long a finished training run took (:func:`dpkme.cost.observe_cost`): compilation and
    SGD steps, the terms of :func:`estimate` the run covers (sampling and evaluation come later)."""
    from dpkme.cost import observe_cost

    observe_cost(estimate(gd, params, p).without("sampling and evaluation"), seconds)


def draw(result, n: int, *, rng=None):
    """``n`` rows from the released models, like :meth:`~dpkme.generative.DPGMResult.sample_with_labels` (the library
    rounds each model's draw size up to a power of two: JAX compiles one sampler per size, a few sizes, reused).

    Returns ``(X in the declared units, labels or None, cluster index)``; post-processing, no privacy cost."""
    import jax

    gen = np.random.default_rng(rng)
    w = np.clip(np.asarray(result.weights, dtype=np.float64), 0.0, None)
    w = w / w.sum() if w.sum() > 0 else np.full(result.k, 1.0 / result.k)
    comp = gen.choice(result.k, size=int(n), p=w)
    d = len(result.bounds[0])
    U = np.zeros((int(n), d))
    y = np.zeros(int(n), np.int64) if result.n_classes else None
    for s in range(result.k):
        m = int(np.sum(comp == s))
        if m == 0:
            continue
        p_s = jax.tree_util.tree_map(lambda a, s=s: a[s], result.params)
        key = jax.random.key(int(gen.integers(0, 2**31 - 1)))
        u, lab = result.model.sample(p_s, key, m)
        U[comp == s] = u
        if y is not None:
            y[comp == s] = s if result.config.get("partition") == "labels" else lab   # by label: model s is class s
    lo, hi = (np.asarray(b, dtype=np.float64) for b in result.bounds)
    return lo + (hi - lo) * U, y, comp


def mmd_kernel(d: int):
    """The evaluation kernel on [0, 1]-scaled feature columns: Gaussian, lengthscale √d / 4 (public)."""
    from dpkme.kernels import GaussianKernel

    return GaussianKernel(lengthscale=math.sqrt(d) / 4.0)


def scaled(gd: GenData, X: np.ndarray) -> np.ndarray:
    lo, hi = gd.bounds
    return np.clip((np.asarray(X, dtype=float) - lo) / (hi - lo), 0.0, 1.0)


def evaluate(gd: GenData, result, *, n_rows: int = 500, kme_points: int = 100, kme_features: int = 2000,
             compare: bool = True) -> dict:
    """Owner's evaluation (not DP, not released): MMD to the held-out rows of generated rows, of an Algorithm 2
    release at the same ε on the same rows (an uncharged comparison run, shown only here), of uniform rows in the
    declared box, and of the private rows themselves (the floor)."""
    import dpkme
    from dpkme.metrics import mmd

    ds = gd.ds
    if not ds.n_heldout:
        raise ValueError("this dataset has no held-out rows; set a held-out share on the Data page to compare.")
    d = ds.dim
    kern = mmd_kernel(d)
    H = scaled(gd, ds.heldout)
    rng = np.random.default_rng()
    G = scaled(gd, draw(result, n_rows)[0])
    out = {"generated": mmd(G, H, kernel=kern)}
    take = rng.choice(ds.n, size=min(ds.n, n_rows), replace=False)
    out["private rows (floor)"] = mmd(scaled(gd, ds.X[take]), H, kernel=kern)
    out["uniform in the declared box"] = mmd(rng.uniform(size=(n_rows, d)), H, kernel=kern)
    if compare and result.private:
        rel = dpkme.algorithm2(scaled(gd, ds.X), kernel=kern, epsilon=result.epsilon, delta=result.delta,
                               n_points=kme_points, n_features=kme_features, neighbouring="add-remove",
                               n_private=ds.n, initial_points=rng.uniform(size=(4 * kme_points, d)))
        w = np.clip(rel.weights, 0.0, None)
        w = w / w.sum() if w.sum() > 0 else np.full(len(w), 1.0 / len(w))
        out[f"KME release (Algorithm 2, M = {kme_points}) at ε = {result.epsilon:.3g}"] = mmd(
            np.clip(rel.points, 0.0, 1.0), H, kernel=kern, weights_x=w)
    return out


# ---------------------------------------------------------------------- figures
def tile_grid(images: np.ndarray, *, shape=(8, 8), ncols: int = 8, scale: int = 4, gap: int = 1) -> np.ndarray:
    """Images (n, h·w) with values in [0, 1] as one grayscale uint8 grid, ``ncols`` per row, scaled up."""
    imgs = np.clip(np.asarray(images, dtype=float), 0.0, 1.0).reshape((-1, *shape))
    h, w = shape
    n = len(imgs)
    nrows = max(1, math.ceil(n / ncols))
    H, W = nrows * (h * scale + gap) + gap, ncols * (w * scale + gap) + gap
    out = np.full((H, W), 255, dtype=np.uint8)
    for i, im in enumerate(imgs):
        r, c = divmod(i, ncols)
        y0, x0 = gap + r * (h * scale + gap), gap + c * (w * scale + gap)
        out[y0:y0 + h * scale, x0:x0 + w * scale] = (255 * (1.0 - np.kron(im, np.ones((scale, scale))))).astype(np.uint8)
    return out


def size_noise(result) -> float:
    """Std of the Gaussian noise on each released cluster size (0 when there is none: one model, by label, or a
    non-private run). Public: a function of the plan only."""
    km = None if result.plan is None else result.plan.kmeans
    if km is None:
        return 0.0
    try:
        return float(km.step("lloyd").sigma_count)
    except (KeyError, ValueError, AttributeError):
        return 0.0


def generated_by_cluster(result, *, per_cluster: int = 8, rng=None):
    """Exactly ``per_cluster`` generated rows from each model with weight > 0 (post-processing), in model order:
    (rows, labels or None, model index). Models with weight 0 are never sampled and contribute none."""
    import jax

    gen = np.random.default_rng(rng)
    w = np.asarray(result.weights, dtype=np.float64)
    lo, hi = (np.asarray(b, dtype=np.float64) for b in result.bounds)
    by_label = result.config.get("partition") == "labels"
    rows, labs, clus = [], [], []
    for s in np.flatnonzero(w > 0):
        p_s = jax.tree_util.tree_map(lambda a, s=s: a[s], result.params)
        u, lab = result.model.sample(p_s, jax.random.key(int(gen.integers(0, 2**31 - 1))), int(per_cluster))
        rows.append(lo + (hi - lo) * np.asarray(u, dtype=np.float64)[:per_cluster])
        clus += [int(s)] * per_cluster
        if result.n_classes:
            labs.append(np.full(per_cluster, s) if by_label else np.asarray(lab, dtype=np.int64)[:per_cluster])
    d = len(lo)
    return (np.concatenate(rows) if rows else np.zeros((0, d)), np.concatenate(labs) if labs else None,
            np.asarray(clus, dtype=np.int64))


# ---------------------------------------------------------------------- downloads
def _claim_view(result, ds: S.Dataset):
    return SimpleNamespace(noise_source=result.noise_source, epsilon=result.epsilon, delta=result.delta,
                           neighbouring="add-remove", n_private=result.config.get("n_private"), params={},
                           mechanism="DPGM (one model per class + DP-SGD)" if result.config.get("partition") == "labels"
                           else "DPGM (k-means + DP-SGD)")


def model_json(result, gd: GenData, *, app_private: bool, reasons=()) -> bytes:
    """The release: k models' parameters and public configuration, weights, privacy, the guarantee in plain words.

    No seed and no noise state (a replay-mode demo says so and is labelled not private). The file reads back with
    :meth:`dpkme.generative.DPGMResult.from_dict`."""
    from .export import privacy_fields

    d = result.to_dict()
    d.update(privacy_fields(_claim_view(result, gd.ds), app_private=app_private and result.private,
                            reasons=reasons, ds=gd.ds))
    d["columns"] = gd.columns
    d["label_classes"] = gd.class_names
    d["dataset"] = gd.ds.name
    d["partition"] = result.config.get("partition", "kmeans")
    if d["partition"] == "labels":
        d["class_weights"] = "public: the declared classes taken as equally likely (1/c each), not counted"
    d["how_to_use"] = ("dpkme.generative.DPGMResult.from_dict(json.load(f)).sample_with_labels(n) draws synthetic rows "
                       "(post-processing: no further privacy cost).")
    if d.get("differentially_private") and d.get("seed") is not None:     # never: privacy_fields sets None
        raise RuntimeError("a file labelled differentially private would carry a seed; nothing was exported.")
    return json.dumps(d, default=_default).encode("utf-8")


def rows_frame(result, gd: GenData, n: int, *, rng=None) -> pd.DataFrame:
    """``n`` sampled rows in the declared units, with their label column (post-processing of the models)."""
    X, y, _ = draw(result, int(n), rng=rng)
    df = pd.DataFrame(X, columns=gd.columns)
    if gd.image_shape is not None:
        df = df.round(2)
    if y is not None:
        name = "digit" if gd.image_shape is not None else "label"
        df[name] = [gd.class_names[i] for i in y] if gd.class_names else y
    return df


def rows_csv(result, gd: GenData, n: int, *, rng=None) -> bytes:
    buf = io.StringIO()
    rows_frame(result, gd, n, rng=rng).to_csv(buf, index=False)
    return buf.getvalue().encode("utf-8")


def _default(o):
    if isinstance(o, np.ndarray):
        return o.tolist()
    if isinstance(o, (np.floating, np.integer)):
        return o.item()
    return str(o)
