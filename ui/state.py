"""Named ``st.session_state`` keys and the objects stored under them.

Every page reads and writes shared state only through the names below, so the
whole app's state is listed in one place:

==========================  ===============================================================
key                          content
==========================  ===============================================================
``dataset``                  :class:`Dataset` -- the current (private) data and public parts
``releases``                 ``list[ReleaseRecord]`` -- every release of this session
``repeat_draws``             ``dict`` -- the last "repeat draws" overlay (Release page)
``ledgers``                  ``dict[data_key, BudgetLedger]`` -- one ledger per dataset
``nonprivate_releases``      ``dict[data_key, int]`` -- releases that were NOT private
``curves``                   ``dict`` -- the last privacy-utility sweep (Curves page)
``paper_example``            ``int`` -- id of the release made by the Home page's button
``upload``                   ``dict`` -- the parsed upload (bytes are never stored)
``present``                  ``bool`` -- presentation mode (:mod:`ui.presentation`; also ``?present=1``)
``cfg.*``                    kernel and privacy settings (Kernel & privacy page)
``rel.*``                    mechanism settings (Release page)
``data.*``, ``crv.*``,        widget values of the Data, Curves, Third-party use, Ledger,
``use.*``, ``bud.*``,         Two-sample test, Clustering and Privacy audit pages (``tst.result``:
``tst.*``, ``clu.*``,         the last test, ``tst.curves["latest"]``: the last rejection curve, ``crv.cmp_result``:
``aud.*``                     the last comparison, ``clu.result`` / ``clu.curve``: the last DP k-means
                             run and accuracy curve)
``ledger_names``             ``dict[data_key, str]`` -- names of ledgers of other groups of people
                             (two-sample lab cases, uploaded pairs)
``_composition_cache``,      memoised ledger compositions (:func:`composed`, :func:`over_budget`)
``_exceeds_cache``
==========================  ===============================================================

Ledger charges declare the disjoint part of the individuals they read in their typed ``parts`` field
(:data:`PART_PRIVATE`, :data:`PART_HELDOUT`); the ledger composes each part separately.

A reload of the page keeps all of it (:mod:`ui.persist`: the state stays in the server's memory under the token of
the address's ``?sid=…``), except the over-budget permissions (one run each) and the values of buttons and file
uploaders.

Widgets keep their values across page switches with ``persist_state="session"``;
defaults are put into the session state once (:func:`init_defaults`), so
widgets are created without ``value=`` and never conflict with it.
"""

from __future__ import annotations

import json
import math
import time
from dataclasses import dataclass, field
from typing import Any

import numpy as np
import streamlit as st

from dpkme.privacy.accounting import BudgetLedger, PrivacyCharge
from dpkme.release import Release

from .numbers import fmt_power

# --------------------------------------------------------------------------- keys
DATASET = "dataset"
RELEASES = "releases"
REPEAT_DRAWS = "repeat_draws"
LEDGERS = "ledgers"
LOCKED_PUBLIC = "_locked_public"      # {data_key: publishable-subset id fixed when budget was first spent}
NONPRIVATE = "nonprivate_releases"
CURVES = "curves"
PAPER_EXAMPLE = "paper_example"
UPLOAD = "upload"

# Kernel & privacy
KERNEL = "cfg.kernel"
TABLE_KERNEL = "cfg.table_kernel"   # a mixed table's kernel: "additive" (the library's default) | "product"
LENGTHSCALE = "cfg.lengthscale"
LENGTHSCALE_SOURCE = "cfg.lengthscale_source"  # "declared" | "suggested" | "paper" | "public-subset" | "private-dp" | "private-data"
NU = "cfg.nu"
BETA = "cfg.beta"
EPS = "cfg.epsilon"              # value of the log slider
EPS_TYPED = "cfg.eps_typed_on"   # toggle: type an exact epsilon
EPS_VALUE = "cfg.eps_typed"      # the typed epsilon
DELTA = "cfg.delta"
CALIBRATION = "cfg.calibration"
SENS_MODE = "cfg.sensitivity"

# Release
MECHANISM = "rel.mechanism"
N_POINTS = "rel.n_points"
BASIS = "rel.basis"
WEIGHTS = "rel.weights"
Q_SCALE = "rel.q_scale"
NOISE_SOURCE = "rel.noise_source"   # "os-entropy" (default) | "opendp" | "seeded" (replay mode, not private)
SEED = "rel.seed"
N_FEATURES = "rel.n_features"
SOLVER = "rel.solver"
N_REPEATS = "rel.n_repeats"

# Budget
BUDGET_EPS = "bud.epsilon"
BUDGET_DELTA = "bud.delta"

DEFAULT_EPSILON = 1.0
DEFAULT_DELTA = 1e-6
DEFAULTS: dict[str, Any] = {
    KERNEL: "gaussian",
    TABLE_KERNEL: "additive",        # dpkme.release.tabular.DEFAULT_TABLE_KERNEL (tests check they agree)
    NU: 1.5,
    BETA: 0.5,
    EPS: DEFAULT_EPSILON,
    EPS_TYPED: False,
    EPS_VALUE: DEFAULT_EPSILON,
    DELTA: DEFAULT_DELTA,
    CALIBRATION: "analytic",
    SENS_MODE: "tight",
    N_POINTS: 200,
    BASIS: "full",
    WEIGHTS: "simplex",              # probability weights; "free" (signed) is the paper's option (issue 16)
    NOISE_SOURCE: "os-entropy",
    SEED: 0,
    N_FEATURES: 1000,
    N_REPEATS: 5,
    BUDGET_EPS: 5.0,
    BUDGET_DELTA: 1e-5,
}

#: Session-state key of this browser session's release counter (never shared between sessions: a server-wide
#: counter would tell a visitor how many releases other people made).
RELEASE_COUNTER = "_release_counter"
#: Session keys of the memoised ledger compositions (:func:`composed`) and budget checks (:func:`over_budget`).
COMPOSITION_CACHE = "_composition_cache"
EXCEEDS_CACHE = "_exceeds_cache"
#: Session keys of the release page's two plotted dimensions (also read by :mod:`ui.explorer`).
DIM_X = "rel.dim_x"
DIM_Y = "rel.dim_y"


# --------------------------------------------------------------------------- objects
@dataclass
class Dataset:
    """The data the app works on, after public preprocessing.

    ``X`` is the *private* part in model units (after the declared scaling and
    clipping): the only array a release may read. ``public`` is the publishable
    subset (same units), usable freely (synthetic points, scaling, heuristics).
    """

    key: str                     # content + preprocessing key (cache key)
    data_key: str                # identity of the underlying individuals (ledger key)
    name: str
    source: str                  # "generated" | "sample" | "upload"
    X: np.ndarray
    columns: list[str]
    public: np.ndarray | None = None
    labels: np.ndarray | None = None          # private (owner's preview only)
    heldout: np.ndarray | None = None         # rows held out of the release (a third party's own sample)
    public_labels: np.ndarray | None = None
    scaling: Any = None                       # dpkme.preprocessing.DeclaredScaling or None
    clip_box: tuple | None = None
    n_clipped: int = 0                        # owner's eyes only
    generator: dict | None = None             # {"name", "params", "seed"} for fresh samples
    split: dict | None = None
    suggested_lengthscale: float = 1.0
    lengthscale_note: str = ""
    q_center: np.ndarray | None = None
    q_scale: float = 1.0
    q_note: str = ""
    notes: list[str] = field(default_factory=list)
    #: The declared :class:`dpkme.schema.TableSchema` of a mixed table (None for numeric data): then ``X``,
    #: ``public`` and ``heldout`` are the *embedded* rows (``schema.encode``), ``columns`` names the embedding's
    #: coordinates and ``table_columns`` the table's own columns.
    schema: Any = None
    #: :class:`dpkme.schema.EncodeReport` of the table's rows (clipped, missing, unknown cells): owner-only.
    table_report: Any = None

    @property
    def n(self) -> int:
        return int(self.X.shape[0])

    @property
    def dim(self) -> int:
        return int(self.X.shape[1])

    @property
    def n_public(self) -> int:
        return 0 if self.public is None else int(self.public.shape[0])

    @property
    def n_heldout(self) -> int:
        return 0 if self.heldout is None else int(self.heldout.shape[0])

    @property
    def partition(self) -> str:
        """Id of the split into publishable / held-out / private rows (the ledger's parallel-composition unit)."""
        sp = self.split or {}
        return "split:" + json.dumps([sp.get("public_fraction", 0.0), sp.get("heldout_fraction", 0.0),
                                      sp.get("seed")], sort_keys=True)

    @property
    def public_subset_id(self) -> str:
        """Id of the publishable subset alone (which rows are published in the clear)."""
        sp = self.split or {}
        if not self.n_public:
            return "none"
        return "public:" + json.dumps([sp.get("public_fraction", 0.0), sp.get("seed")])

    def guarantee(self, *, exact_counts: bool = True) -> str:
        """The guarantee in one line: who is protected, who is not (``exact_counts=False``: no row counts, as
        for a release under add/remove, where the number of rows is private)."""
        if not exact_counts:
            return self.guarantee().split(" for the ")[0] + " under add/remove of one row (row counts not released)" \
                if not self.guarantee().startswith("NOT") else "NOT differentially private (see the warning)"
        dependent = list(getattr(getattr(self, "schema", None), "data_dependent", ()) or ())
        if dependent:
            return (f"NOT differentially private: the schema's values of column(s) {dependent} were read from the "
                    f"{self.n:,} private rows (declare them, or discover them privately)")
        scaled = list(getattr(self.scaling, "data_dependent", ()) or ())
        if scaled:
            return (f"NOT differentially private: the scaling of column(s) {scaled} was read from the {self.n:,} "
                    "private rows (declare it from public knowledge)")
        out = f"differentially private for the {self.n:,} private rows"
        if self.n_public:
            out += f"; {self.n_public:,} rows published in the clear (declared public, not protected)"
        if self.n_heldout:
            out += f"; {self.n_heldout:,} held-out rows never released"
        return out

    def describe(self, *, exact_counts: bool = True) -> str:
        """Name, row counts and dimension in one line (``exact_counts=False``: no row counts, as under add/remove)."""
        if not exact_counts:
            return f"{self.name} — row counts private (add/remove of one row), D = {self.dim}"
        pub = f", {self.n_public:,} public" if self.n_public else ""
        held = f", {self.n_heldout:,} held out" if self.n_heldout else ""
        return f"{self.name} — N = {self.n:,} private rows{pub}{held}, D = {self.dim}"

    @property
    def model_labels(self) -> list[str]:
        """Axis labels for arrays in model units: the column names, marked when a declared scaling applies."""
        if self.scaling is None:
            return [str(c) for c in self.columns]
        return [f"{c} (scaled: (x − c)/s)" for c in self.columns]

    @property
    def point_domain(self):
        """The declared, public domain synthetic points are drawn from and kept in (model units), or ``None``.

        A mixed table's schema domain, else the declared bounds of every column under the declared scaling
        (:meth:`dpkme.preprocessing.DeclaredScaling.box_domain`); nothing read off the private rows.
        """
        if self.schema is not None:
            return self.schema.domain
        box = getattr(self.scaling, "box_domain", None)
        return box() if box is not None else None

    def to_original_units(self, Z: np.ndarray) -> np.ndarray:
        return Z if self.scaling is None else self.scaling.inverse(Z)

    @property
    def is_table(self) -> bool:
        """True for a mixed table with a declared schema (rows embedded by ``schema.encode``)."""
        return self.schema is not None

    @property
    def table_columns(self) -> list[str]:
        """The table's own columns (the schema's names), or the numeric columns."""
        return list(self.schema.names) if self.schema is not None else [str(c) for c in self.columns]

    def decode(self, Z: np.ndarray):
        """Embedded rows as a table with the original column names and types (schema datasets only)."""
        if self.schema is None:
            raise ValueError("this dataset has no declared schema; its rows are numeric columns already.")
        return self.schema.decode(np.asarray(Z, dtype=float))

    def preprocessing_record(self) -> dict:
        """JSON-friendly record of the public preprocessing (for a release's metadata).

        ``n_private`` is the one count of protected rows used everywhere (the release's N)."""
        return {
            "columns": list(self.columns),
            "scaling": None if self.scaling is None else self.scaling.to_dict(),
            "clip_box": None if self.clip_box is None else [np.asarray(b).tolist() for b in self.clip_box],
            "split": None if self.split is None else {
                **self.split, "n_private": self.n, "n_published_in_clear": self.n_public,
                "n_heldout": self.n_heldout},
            "n_private": self.n,
            "n_published_in_clear": self.n_public,
            "guarantee": self.guarantee(),
            **({"schema": self.schema.to_dict(),
                "embedding": "the kernel acts on the rows embedded by this schema (dpkme.schema.TableSchema.encode)"}
               if self.schema is not None else {}),
        }


@dataclass
class ReleaseRecord:
    """One release of this session, with its evaluation (which reads private data)."""

    id: int
    release: Release
    dataset_key: str
    data_key: str
    dataset_name: str
    mechanism_key: str
    mechanism_label: str
    private: bool
    charge: PrivacyCharge | None
    metrics: dict = field(default_factory=dict)
    warnings: list[str] = field(default_factory=list)
    replay: dict = field(default_factory=dict)      # mechanism key, parameters and settings of the run
    kind: str = "points"                            # "points" (a Release) or "function" (a GPRelease)
    created: float = field(default_factory=time.time)

    @property
    def size_text(self) -> str:
        r = self.release
        if self.kind == "function":
            return f"{r.points.shape[0]:,} grid points"
        return f"M = {r.n_points}"

    @property
    def title(self) -> str:
        r = self.release
        eps = "no privacy cost" if r.epsilon == 0 else f"ε = {r.epsilon:.4g}"
        flag = "" if self.private else " — NOT PRIVATE"
        return f"#{self.id} {self.mechanism_label} ({eps}, {self.size_text}){flag}"


def new_id() -> int:
    """The next release number of this browser session (1, 2, ...)."""
    n = int(st.session_state.get(RELEASE_COUNTER, 0)) + 1
    st.session_state[RELEASE_COUNTER] = n
    return n


# --------------------------------------------------------------------------- access
def init_defaults() -> None:
    """Put every default into the session state once (called by app.py on every run)."""
    ss = st.session_state
    for key, value in DEFAULTS.items():
        ss.setdefault(key, value)
    ss.setdefault(RELEASES, [])
    ss.setdefault(LEDGERS, {})
    ss.setdefault(NONPRIVATE, {})


def dataset() -> Dataset | None:
    return st.session_state.get(DATASET)


def split_change_problem(ds: Dataset) -> str | None:
    """Why ``ds`` may not be used now, if its publishable subset differs from the one fixed when budget was
    first spent on these individuals (rows that earlier releases protected would be published raw)."""
    locked = st.session_state.get(LOCKED_PUBLIC, {}).get(ds.data_key)
    if locked is None or locked == ds.public_subset_id:
        return None
    return ("privacy budget has already been spent on these individuals with another publishable subset: "
            "changing which rows are published in the clear would publish rows that earlier releases protected. "
            "Keep the publishable fraction and the split seed as they were (or load other data).")


def split_change_note(ds: Dataset) -> str | None:
    """A warning if the held-out/private split differs from the one budget was spent under."""
    led = st.session_state.get(LEDGERS, {}).get(ds.data_key)
    if led is None or not led.all_charges:
        return None
    parts = [p for p in led.partitions if p is not None]
    if parts and any(p != ds.partition for p in parts):
        return ("Budget was already spent on these individuals under another split. Rows may have moved between "
                "the held-out and the private part, so the ledger no longer composes the parts in parallel: every "
                "charge counts against every row (sequential composition).")
    return None


#: Most synthetic points the app suggests by default from a publishable subset (Algorithm 1's range).
MAX_DEFAULT_POINTS = 1000


def default_n_points_for(ds: Dataset) -> int:
    """The default number of synthetic points M for ``ds``, from public sizes only.

    A mixed table (declared schema): the library's rule :func:`dpkme.release.tabular.default_n_points` for its
    default release (Algorithm 2 with ``DEFAULT_N_FEATURES``), as ``release_table`` uses. Otherwise, with a
    publishable subset: all its rows (at most :data:`MAX_DEFAULT_POINTS`), so M grows as rows become public; for a
    user's own numeric table (bundled sample, upload), the same library rule for Algorithm 1, which grows with N
    and ε; generated data keep the app's default (the paper's figures).
    """
    if ds.n_public and not ds.is_table:
        return int(min(ds.n_public, MAX_DEFAULT_POINTS))
    if ds.source == "generated":
        return int(DEFAULTS[N_POINTS])
    from dpkme.release.tabular import default_n_points

    ss = st.session_state
    eps = float(ss.get(EPS_VALUE, DEFAULT_EPSILON) if ss.get(EPS_TYPED) else ss.get(EPS, DEFAULT_EPSILON))
    return int(default_n_points(n_private=max(ds.n, 1), epsilon=eps, delta=float(ss.get(DELTA, DEFAULT_DELTA)),
                                mechanism="algorithm2" if ds.is_table else "algorithm1"))


def set_dataset(ds: Dataset) -> None:
    """Make ``ds`` current and adopt its public, data-independent suggestions.

    Raises ValueError if the publishable subset would change after budget was spent on these individuals.
    """
    ss = st.session_state
    old = ss.get(DATASET)
    if old is not None and old.data_key in ss.get(LEDGERS, {}):
        ledger_for(old)                   # fixes the old split's publishable subset if budget was spent on it
    problem = split_change_problem(ds)
    if problem:
        raise ValueError(problem)
    ss[DATASET] = ds
    if old is None or old.key != ds.key:
        ss[LENGTHSCALE] = float(ds.suggested_lengthscale)
        ss[LENGTHSCALE_SOURCE] = "suggested"
        if ds.schema is not None:          # the product kernel's setting: the Gaussian kernel, ℓ = 1, on embedded rows
            ss[KERNEL] = "gaussian"
        if ds.is_table:                    # the library's J for a table (dpkme.release.tabular.DEFAULT_N_FEATURES)
            from dpkme.release.tabular import DEFAULT_N_FEATURES

            ss[N_FEATURES] = DEFAULT_N_FEATURES
        elif old is not None and old.is_table:
            ss[N_FEATURES] = DEFAULTS[N_FEATURES]
        ss[Q_SCALE] = float(ds.q_scale)
        # recomputed for every new dataset (issue 16, finding 3: M stayed at 7 when 34 public rows came)
        ss[N_POINTS] = default_n_points_for(ds)
        ss.pop(REPEAT_DRAWS, None)
        ss.pop(CURVES, None)
    ledger_for(ds)


def releases() -> list[ReleaseRecord]:
    return st.session_state.setdefault(RELEASES, [])


def releases_for(ds: Dataset | None, kind: str | None = None) -> list[ReleaseRecord]:
    if ds is None:
        return []
    return [r for r in releases() if r.dataset_key == ds.key and (kind is None or r.kind == kind)]


def latest_release(ds: Dataset | None) -> ReleaseRecord | None:
    recs = releases_for(ds)
    return recs[-1] if recs else None


def epsilon() -> float:
    """The ε chosen on the Kernel & privacy page (slider or typed value)."""
    ss = st.session_state
    return float(ss[EPS_VALUE] if ss.get(EPS_TYPED) else ss[EPS])


def delta() -> float:
    return float(st.session_state[DELTA])


def budget() -> tuple[float, float]:
    return float(st.session_state[BUDGET_EPS]), float(st.session_state[BUDGET_DELTA])


#: Session key of presentation mode (``ui.presentation`` owns the toggle).
PRESENT = "present"


def counts_hidden(ds: Dataset | None) -> bool:
    """Whether the row counts of ``ds`` must not be shown: presentation mode is on and its people's ledger holds
    add/remove charges (a DPGM run, a private row count), under which the number of rows is private. Under
    replace-one N is public, and the owner (presentation mode off) always sees it.

    Parameters
    ----------
    ds : Dataset or None
        The dataset whose counts a page is about to print.

    Returns
    -------
    bool
    """
    if ds is None or not st.session_state.get(PRESENT, False):
        return False
    led = st.session_state.get(LEDGERS, {}).get(ds.data_key)
    return led is not None and led.neighbouring == "add-remove"


def ledger_for(ds: Dataset) -> BudgetLedger:
    """The ledger of the individuals behind ``ds`` (created on first use), with the current budget."""
    ledgers = st.session_state.setdefault(LEDGERS, {})
    eps_b, delta_b = budget()
    led = ledgers.get(ds.data_key)
    if led is None:
        led = BudgetLedger(epsilon_budget=eps_b, delta_budget=delta_b)
        ledgers[ds.data_key] = led
    elif (led.epsilon_budget, led.delta_budget) != (eps_b, delta_b):
        led.epsilon_budget, led.delta_budget = eps_b, delta_b     # same charges, same archive: only the budget moves
    led.partition = ds.partition          # charges on parts are stamped with the split they were made under
    if led.all_charges:
        lock_public_subset(ds)
    return led


def lock_public_subset(ds: Dataset) -> None:
    """Fix the publishable subset of these individuals (called when budget is first spent on them)."""
    st.session_state.setdefault(LOCKED_PUBLIC, {}).setdefault(ds.data_key, ds.public_subset_id)


LEDGER_NAMES = "ledger_names"


def ledger_export(ds: Dataset) -> bytes:
    """The ledger of ``ds``'s individuals as JSON (charges, budget, split; no data, no seed)."""
    return ledger_for(ds).to_json(name=ds.name, about={"data_key": ds.data_key}).encode("utf-8")


@dataclass(frozen=True)
class LedgerImport:
    """What importing a ledger file did: charges added, charges already recorded (by id), and whether this very
    file (by its content hash) was imported before in this session."""

    added: int
    already_recorded: int
    same_file_again: bool

    def message(self, name: str) -> tuple[str, str]:
        """``(kind, text)`` for the Budget ledger page: ``"warning"`` for a file imported twice or with nothing new."""
        if self.same_file_again:
            return ("warning", f"{name!r} was already imported in this session: nothing was added (its "
                               f"{self.already_recorded} charge(s) are in the ledger once).")
        if not self.added and self.already_recorded:
            return ("warning", f"Nothing new in {name!r}: its {self.already_recorded} charge(s) are already in the "
                               "ledger (matched by their ids).")
        extra = (f"; {self.already_recorded} already recorded were kept once" if self.already_recorded else "")
        return ("success", f"Imported {self.added} charge(s) from {name!r} into this data's ledger{extra}.")


#: Session key: content hashes of the ledger files imported in this session, per data key.
IMPORTED_LEDGERS = "_imported_ledgers"


def ledger_import(ds: Dataset, content: bytes) -> LedgerImport:
    """Merge an exported ledger into ``ds``'s ledger: every charge of the file (its archive included) whose id is
    not in the ledger yet is added; charges are matched by id only, never by equal fields (two releases with the
    same label and ε in two sessions are two spendings).

    Raises ValueError for a malformed file or a ledger of other individuals.
    """
    import hashlib

    imported = BudgetLedger.from_json(content)
    owner = imported.about.get("data_key")
    if owner is not None and owner != ds.data_key:
        raise ValueError(f"this ledger belongs to other data ({owner!r}), not to {ds.name!r}; load that data on "
                         "the Data page first.")
    digest = hashlib.sha256(bytes(content)).hexdigest()
    seen = st.session_state.setdefault(IMPORTED_LEDGERS, {}).setdefault(ds.data_key, set())
    again = digest in seen
    seen.add(digest)
    led = ledger_for(ds)
    merge = led.merge(imported)
    if merge.added:
        lock_public_subset(ds)
    return LedgerImport(added=len(merge.added), already_recorded=len(merge.already_recorded), same_file_again=again)


def upload_file_hash(data: bytes) -> str:
    """Identity of an uploaded file's people: a hash of its bytes, whatever encoding it is read with and whichever
    page it is uploaded on (the Data page, a Two-sample sample)."""
    import hashlib

    return hashlib.sha256(bytes(data)).hexdigest()[:16]


def upload_ledger_key(file_hash: str) -> str:
    """The ledger key of an uploaded file's people (one ledger per file, on every page)."""
    return "upload:" + str(file_hash)


def upload_identity(state: dict) -> dict:
    """The spec fields that identify the Data page's upload: ``upload_hash`` (the file's people: its ledger) and, for
    a reading in another encoding than UTF-8, ``reading`` (another table of the same people: another dataset)."""
    out = {"upload_hash": state.get("file_hash", state["hash"])}
    if state.get("file_hash") not in (None, state["hash"]):
        out["reading"] = state["hash"]
    return out


#: Session key: file hash -> (seed, fraction) of the publishable split under which its people were charged.
UPLOAD_SPLITS = "tst.upload_splits"


def upload_split(file_hashes, *, seed: int, fraction: float) -> tuple[int, float, bool]:
    """The publishable split to use for uploaded files: the chosen (seed, fraction), unless one of the files was
    already tested privately, whose people were charged under a split that is then fixed for good (another split
    would make rows tested privately public). ``(seed, fraction, locked)``; ``ValueError`` when the files were
    charged under different splits."""
    locks = {tuple(v) for h in file_hashes if (v := st.session_state.get(UPLOAD_SPLITS, {}).get(h)) is not None}
    if len(locks) > 1:
        raise ValueError("these two files were tested privately under different publishable splits (seeds or "
                         "fractions); testing them together would make rows of one of them public that were "
                         "tested privately. Test each with the partner of its first test, or with a new file.")
    if locks:
        (lseed, lfrac), = locks
        return int(lseed), float(lfrac), True
    return int(seed), float(fraction), False


def lock_upload_split(file_hashes, *, seed: int, fraction: float) -> None:
    """Fix the publishable split of files whose people were just charged (see :func:`upload_split`)."""
    locks = st.session_state.setdefault(UPLOAD_SPLITS, {})
    for h in file_hashes:
        locks.setdefault(h, (int(seed), float(fraction)))


def ledger_for_key(data_key: str, name: str) -> BudgetLedger:
    """The ledger of another group of individuals (a two-sample lab case, an uploaded pair of samples),
    created on first use with the current budget; ``name`` is shown on the Budget ledger page."""
    st.session_state.setdefault(LEDGER_NAMES, {})[data_key] = name
    ledgers = st.session_state.setdefault(LEDGERS, {})
    eps_b, delta_b = budget()
    if data_key not in ledgers:
        ledgers[data_key] = BudgetLedger(epsilon_budget=eps_b, delta_budget=delta_b)
    led = ledgers[data_key]
    led.epsilon_budget, led.delta_budget = eps_b, delta_b      # the session's current budget, as ledger_for
    return led


def ledger_name(data_key: str) -> str:
    names = st.session_state.get(LEDGER_NAMES, {})
    if data_key in names:
        return names[data_key]
    for r in releases():
        if r.data_key == data_key:
            return r.dataset_name
    ds = dataset()
    return ds.name if ds is not None and ds.data_key == data_key else data_key


def add_release(rec: ReleaseRecord) -> None:
    releases().append(rec)
    ds = dataset()
    if ds is not None:
        lock_public_subset(ds)
    if rec.charge is not None and ds is not None and rec.charge not in ledger_for(ds):
        raise RuntimeError(f"release #{rec.id} carries a charge that the gate did not put in the ledger "
                           "(ui.gate.run_private charges before the private rows are read); it is not recorded.")


def nonprivate_count(ds: Dataset | None) -> int:
    if ds is None:
        return 0
    return int(st.session_state.get(NONPRIVATE, {}).get(ds.data_key, 0))


def fmt(x: float, digits: int = 3) -> str:
    """Compact number formatting for metrics (``inf`` and ``nan`` spelled out)."""
    if x is None:
        return "—"
    x = float(x)
    if math.isinf(x):
        return "∞"
    if math.isnan(x):
        return "n/a"
    if x == 0:
        return "0"
    if abs(x) >= 1e4 or abs(x) < 1e-3:
        return f"{x:.{digits}e}"
    return f"{x:.{digits}g}"


#: Disjoint parts of a dataset's individuals (a public, data-independent split made on the Data page).
#: A ledger charge declares the parts it reads in its typed ``parts`` field; the ledger composes each part
#: separately and reports the worst one (parallel composition, :class:`dpkme.privacy.accounting.BudgetLedger`).
PART_PRIVATE = "private rows"
PART_HELDOUT = "held-out rows"


def relabel_charge(charge: PrivacyCharge, label: str | None = None, *, parts=None, count: int | None = None,
                   **details) -> PrivacyCharge:
    """A new charge (a new id: another spending) like ``charge``, with another label/count, the parts it reads
    (the typed ``parts`` field) and extra details."""
    changes: dict[str, Any] = {"details": {**charge.details, **details}}
    if label is not None:
        changes["label"] = label
    if parts is not None:
        changes["parts"] = tuple(parts)
    if count is not None:
        changes["count"] = int(count)
    return charge.renewed(**changes)


def _charge_key(charges) -> tuple:
    return tuple(c.id for c in charges)


def composed(charges, delta_target: float) -> dict:
    """``BudgetLedger.totals`` of ``charges`` at ``delta_target``, memoised in the session (PLD is not free)."""
    cache = st.session_state.setdefault(COMPOSITION_CACHE, {})
    key = (_charge_key(charges), float(delta_target))
    if key not in cache:
        led = BudgetLedger()
        for c in charges:
            led.add(c)
        if len(cache) > 256:
            cache.clear()
        cache[key] = led.totals(delta=delta_target)
    return cache[key]


def over_budget(led: BudgetLedger) -> bool:
    """``led.exceeds_budget()``, memoised like :func:`composed`."""
    cache = st.session_state.setdefault(EXCEEDS_CACHE, {})
    key = (_charge_key(led.all_charges), led.epsilon_budget, led.delta_budget)
    if key not in cache:
        if len(cache) > 256:
            cache.clear()
        cache[key] = led.exceeds_budget()
    return cache[key]


# --------------------------------------------------------------------------- one budget summary
#: The accountant that gave the headline ε, in words (``BudgetLedger.totals()["best_method"]``).
ACCOUNTANT_WORDS = {"pld": "privacy-loss-distribution accountant", "rdp": "Rényi-DP accountant",
                    "basic": "basic composition, the plain sum"}


def fmt_delta(d: float) -> str:
    """δ, written one way on every page, slider and table: ``10⁻⁶`` (``ui.numbers.fmt_power``); exactly 0 (pure
    DP) as ``0``."""
    return fmt_power(d)


def budget_headline(led: BudgetLedger) -> dict:
    r"""The one budget summary shown by the sidebar and by the Budget ledger page, in the same words.

    The headline is ``BudgetLedger.totals(delta=δ_budget)["best"]``: the smallest :math:`\varepsilon` that an
    accountant (basic, Rényi DP, PLD) proves for all charges at the budget's :math:`\delta` (worst part under
    parallel composition). ``BudgetLedger.exceeds_budget`` certifies with the same accountants at the same
    :math:`\delta`, so ``over`` is the verdict on exactly this number.

    Parameters
    ----------
    led : BudgetLedger
        The ledger of one group of individuals, with the current budget (:func:`ledger_for`).

    Returns
    -------
    dict
        ``{"epsilon", "delta", "method", "over", "text", "explain"}``: ``text`` is the headline sentence
        (``"ε = 0.872 of 5 spent at δ = 10⁻⁵ — tightest bound (…accountant)"``); ``explain`` (or None) says how it
        relates to the (ε, δ) the charges were calibrated to, when those differ.
    """
    eps_b, delta_b = budget()
    if not led.all_charges:
        return {"epsilon": 0.0, "delta": 0.0, "method": None, "over": False, "explain": None,
                "text": f"ε = 0 of {eps_b:g} spent (nothing charged: no private release yet)"}
    tot = composed(led.all_charges, delta_b)
    best, method = tot["best"][0], tot["best_method"]
    text = (f"ε = {best:.3g} of {eps_b:g} spent at δ = {fmt_delta(delta_b)} — tightest bound "
            f"({ACCOUNTANT_WORDS[method]})")
    basic_eps, basic_delta = tot["basic"]
    explain = None
    if method != "basic" and math.isfinite(best):
        charges = led.all_charges
        if len(charges) == 1 and charges[0].count == 1:
            c = charges[0]
            what = "This release" if c.details.get("release_id") is not None else "The only charge so far"
            explain = (f"{what} was calibrated to ε = {c.epsilon:g}, δ = {fmt_delta(c.delta)}. At the budget's "
                       f"δ = {fmt_delta(delta_b)} the same noise gives ε = {best:.3g} — both are true: a larger δ "
                       "allows a smaller ε. The budget is checked on the headline.")
        else:
            explain = (f"The charges were calibrated to ε = {basic_eps:.3g}, δ = {fmt_delta(basic_delta)} in total "
                       "(plain sum" + (", most-charged part" if tot.get("parts") else "") + f"). At the budget's "
                       f"δ = {fmt_delta(delta_b)} the accountant proves ε = {best:.3g} for the same noise — both are "
                       "true: accountants add noisy releases up more tightly than a sum. The budget is checked on "
                       "the headline.")
    return {"epsilon": best, "delta": delta_b, "method": method, "over": over_budget(led), "text": text,
            "explain": explain}


def _id_ranges(ids: list[int]) -> str:
    """``#3, #4`` / ``#3–#7`` / ``#3–#7, #9``: release numbers, consecutive runs of three or more as ranges."""
    ids = sorted(set(ids))
    runs: list[list[int]] = []
    for i in ids:
        if runs and i == runs[-1][-1] + 1:
            runs[-1].append(i)
        else:
            runs.append([i])
    out = []
    for r in runs:
        out += [f"#{r[0]}–#{r[-1]}"] if len(r) >= 3 else [f"#{i}" for i in r]
    return ", ".join(out)


def _plural(n: int, word: str) -> str:
    return f"{n} {word}" + ("" if n == 1 else "es" if word.endswith("ch") else "s")


def ledger_counts(led: BudgetLedger) -> str:
    """What the ledger's charges are, in counts a newcomer can reconcile with the release numbers.

    A release recorded by the app carries ``details["release_id"]`` (:func:`ui.runner.perform`); a batch of
    repeat draws is one charge with ``details["repeat_draws"]``; every other charge is a private step that is not
    a release (a private choice of ℓ, a private discovery of bounds or categories, a two-sample test, a clustering
    run). Release numbers count every release of the session, for all data.
    """
    ids, draws, other = [], [], 0
    for c in led.all_charges:
        if c.details.get("release_id") is not None:
            ids.append(int(c.details["release_id"]))
        elif c.details.get("repeat_draws"):
            draws.append(int(c.count))
        else:
            other += 1
    parts = []
    if ids:
        parts.append(f"{_plural(len(ids), 'release')} ({_id_ranges(ids)})")
    if draws:
        parts.append(f"{_plural(len(draws), 'batch')} of repeat draws ({sum(draws)} draws)")
    if other:
        parts.append(f"{other} other private step{'' if other == 1 else 's'} (a private choice of ℓ, a private "
                     "discovery of bounds or categories, a two-sample test or a clustering run)")
    listed = ", ".join(parts[:-1]) + (" and " if len(parts) > 1 else "") + parts[-1] if parts else "none"
    text = f"{_plural(len(led.all_charges), 'charge')} in the ledger: {listed}."
    if ids:
        text += " Release numbers count every release of this session, on all data."
    return text
