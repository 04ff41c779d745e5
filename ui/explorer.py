r"""The ε explorer of the Release page (issue 16, finding 1): small multiples of *planning* runs at several ε.

A planning run is **not a release**. It runs the Release page's mechanism (Algorithm 1 or 2, at small settings) on
*planning data* -- by default public or simulated rows, never the private ones -- once for every ε of a short list,
each with its own fresh noise, and shows what that ε does: the witness function
:math:`\tilde\mu - \hat\mu_{\rm plan}` (released minus planning embedding) on one grid with **one colour scale
shared by all panels**, or, for a table, one column's marginal on shared axes; and under each panel a reading in
plain words (a third party's error on the mean of a column, by eq. (4) with the release's self-normalised
weights, in the column's original units) and the RKHS distance :math:`\|\tilde\mu - \hat\mu_{\rm plan}\|`.
Nothing is charged to the ledger, recorded as a release or exported.

What ε does, separated from what ε does not do: every planning run gets a noiseless twin :math:`\tilde\mu_0` (the
same mechanism on the same points without the noise; allowed because the planning data is not private, never made
for a real release), and each panel shows, above the total, the **noise alone** :math:`\tilde\mu - \tilde\mu_0`
on a second colour scale shared by all panels, with the split of the distance in plain words: the noise's part
:math:`\|\tilde\mu - \tilde\mu_0\|` (about 1/ε) and what the M points cannot represent,
:math:`\|\tilde\mu_0 - \hat\mu_{\rm plan}\|`, which ε does not change. On the default data (Algorithm 1 from q,
probability weights, M = 200) the second dominates (~0.15 against a noise part of ~0.05 at ε = 0.1 and ~0.0007 at
ε = 10, 20 draws), so the totals look alike while the noise row does not.

Planning data (:func:`planning_sources`; the default is the first that applies, the page offers every one that
does). The default must answer "what does ε do to *this* data" honestly (issue 26: a re-seeded generator moved the
paper mixture's components, and the panels said ε barely matters while a real release at ε = 1 was 14× closer):

* ``public``: the publishable subset (public), resampled with replacement to N rows -- the default where it exists;
* ``generated``: a fresh sample of the **same** generator, N rows, the same declared clipping and scaling --
  simulated data. Where the generator's shape itself is drawn from its seed (the paper mixture's means, the blobs'
  centres) the seed is kept for the shape and only the rows are drawn anew (``sample_random_state`` = the seed +
  :data:`PLANNING_SEED_OFFSET`), so the simulation is of the same distribution, never the same rows; other
  generators (whose shape is fixed by their parameters) are re-seeded with that seed;
* ``domain`` (a table with a schema) or ``q`` (numeric data): N uniform draws from the schema's declared domain,
  or N draws from the declared :math:`q = \mathcal N(c, s^2 I)`: no row at all, a pessimistic stand-in;
* ``private``: the private rows -- only when the owner opts in, with :data:`PRIVATE_NOTE` on the page: choosing
  ε or M from what one sees there is itself a data-dependent choice, which no ledger accounts for. The opt-in is
  not offered in presentation mode (:func:`ui.presentation.show_owner_details`), and panels an earlier run drew
  from the private rows are hidden there.

Every planning set has exactly N rows (N is public under replace-one), so the mechanism calibrates its noise to the
same sensitivity as the real release. Noise: fresh OS entropy for every panel; in the Release page's replay mode,
distinct children of the seed (``SeedSequence(seed).spawn(k)``), never the seed itself.
"""

from __future__ import annotations

import dataclasses
import inspect
import json
import math

import numpy as np
import streamlit as st

from dpkme.cost import ALL_PAIRS_TERM, estimate_cost

from . import compute as C
from . import gate as G
from . import noise as N
from . import state as S
from . import tables as T
from .charts import plotly_chart
from .figures import witness_panel
from .mechanisms import REGISTRY, RunContext
from .presentation import OwnerOnly, show_owner_details
from .runner import KXX_DONE, run_spec
from .widgets import guard, size_guard

# --------------------------------------------------------------------------- session keys and constants
EPS_KEY = "rel.xp_eps"              # the ε values of the panels
PRIVATE_KEY = "rel.xp_private"      # opt-in: plan on the private rows (owner only)
COLUMN_KEY = "rel.xp_column"        # the column of the readings (and of a table's marginals)
SOURCE_KEY = "rel.xp_source"        # which public or simulated planning data (planning_sources)
GO_KEY = "rel.xp_go"
RESULT_KEY = "rel.xp_result"        # the last explorer run (planning releases: never in S.RELEASES)
DATA_CACHE = "rel._xp_data"         # {(dataset key, source, q scale): PlanningData}
SIZE_KEY = "rel.xp_size"            # the size guard of a large run
NOISE_KEY = "rel.xp_noise.{i}"      # panel i's noise chart
FIG_KEY = "rel.xp_fig.{i}"          # panel i's release chart
USE_KEY = "rel.xp_use.{i}"          # panel i's "Use ε" button

LABEL = "planning: not a release"
DEFAULT_EPSILONS = [0.1, 1.0, 10.0]
MAX_PANELS = 5
#: Small and fast settings: at most this many synthetic points (Algorithm 1; Algorithm 2, whose solver is the slow
#: part) and random features per planning run.
MAX_POINTS = 500
MAX_POINTS_ALG2 = 100
MAX_FEATURES = 1000
GRID_SIZE = 40
#: Public seed of the planning data's own randomness (resampling the publishable rows, draws from q or the domain):
#: planning data is public or simulated, so it may be reproducible.
PLANNING_SEED = 20180713
#: A generated dataset's planning sample uses the generator's seed plus this offset ("another seed").
PLANNING_SEED_OFFSET = 1_000_003
#: The mechanisms the explorer runs as configured; for any other it plans Algorithm 2.
SUPPORTED = ("alg1-public", "alg1-q", "alg2")
#: ε of Algorithm 2's noiseless twin (:func:`run_explorer`): σ about 1e-8 (N = 4,500, δ = 1e-6), numerically none.
TWIN_EPSILON = 1e9

PRIVATE_NOTE = ("**Planning on the private rows is a data-dependent choice.** These panels read the private rows "
                "and are for you, the data owner, only. Choosing ε or M from what you see here is itself a choice "
                "that depends on the private data, and no ledger accounts for it: the releases you then make are "
                "exactly as private as their own ε says only if you would have chosen the same settings without "
                "looking. Prefer the public or simulated planning data (untick the box).")

SOURCE_WORDS = {"generated": "simulated: a fresh sample of the same generator (same shape, other rows)",
                "public": "public: the publishable subset, resampled to N rows",
                "domain": "uniform draws from the schema's declared domain",
                "q": "draws from the declared q",
                "private": "the PRIVATE rows (owner only)"}


@dataclasses.dataclass
class PlanningData:
    """Rows a planning run reads instead of the private ones (model units; embedded rows for a table)."""

    source: str          # "generated" | "public" | "domain" | "q" | "private"
    X: np.ndarray        # (N, D), N = the public number of private rows
    key: str             # cache key of the rows (for the cached evaluations of ui.compute)
    description: str     # in words, for the page
    table: object = None  # the decoded rows of a table (pandas DataFrame), made on first use


# --------------------------------------------------------------------------- planning data
def planning_sources(ds: S.Dataset) -> list[str]:
    """The public or simulated planning data available for ``ds``, the default first (see the module docstring)."""
    out = []
    if ds.n_public:
        out.append("public")
    if ds.schema is None and ds.source == "generated" and ds.generator:
        out.append("generated")
    out.append("domain" if ds.schema is not None else "q")
    return out


def planning_source(ds: S.Dataset, *, private: bool = False, choice: str | None = None) -> str:
    """Which planning data applies to ``ds``: ``choice`` if available, else the default of
    :func:`planning_sources`; ``"private"`` only on the owner's opt-in (``private=True``)."""
    if private:
        return "private"
    available = planning_sources(ds)
    return choice if choice in available else available[0]


def _rows(ds: S.Dataset, source: str, q_scale: float) -> tuple[np.ndarray, str]:
    n = ds.n
    # the words name N only where it is public (presentation mode on an add/remove ledger: no count)
    nn = "N" if S.counts_hidden(ds) else f"N = {n:,}"
    rng = np.random.default_rng(PLANNING_SEED)
    if source == "private":
        return ds.X, (f"the {nn} private rows themselves (owner only: the readings compare with private "
                      "values)")
    if source == "generated":
        from dpkme.datasets import GENERATORS
        from dpkme.preprocessing import clip_to_box

        g = ds.generator
        seed = int(g["seed"]) + PLANNING_SEED_OFFSET
        same_shape = "sample_random_state" in inspect.signature(GENERATORS[g["name"]].function).parameters
        kw = ({"random_state": int(g["seed"]), "sample_random_state": seed} if same_shape
              else {"random_state": seed})
        X = np.asarray(GENERATORS[g["name"]](**{**g["params"], "n": n}, **kw), dtype=float)
        if ds.clip_box is not None:
            X = clip_to_box(X, *ds.clip_box, return_count=False)
        if ds.scaling is not None:
            X = ds.scaling.apply(X)
        shape = (f" for its rows, its shape (e.g. the mixture's components) from its own seed {g['seed']}: the same "
                 "distribution" if same_shape else "")
        return X, (f"simulated: a fresh sample of {nn} rows from the same generator ({g['name']}) with another "
                   f"seed ({seed} instead of {g['seed']}){shape}, the same declared clipping and scaling; no private row")
    if source == "public":
        X = ds.public[rng.integers(0, ds.n_public, size=n)]
        return X, (f"public: the {ds.n_public:,} publishable rows, resampled with replacement to {nn} rows (so "
                   "the noise is calibrated as for the real release); no private row")
    if source == "domain":
        X = ds.schema.domain.sample(n, rng)
        return X, (f"{nn} rows drawn uniformly from the schema's declared domain: no publishable subset, so "
                   "no row at all is read (a pessimistic stand-in: real data is rarely uniform)")
    if source == "q":
        center = ds.q_center if ds.q_center is not None else np.zeros(ds.dim)
        X = center + float(q_scale) * rng.standard_normal((n, ds.dim))
        return X, (f"{nn} draws from the declared q = N(c, {q_scale:.4g}² I) ({ds.q_note}): no publishable "
                   "subset and no generator, so no row at all is read (a pessimistic stand-in)")
    raise ValueError(f"unknown planning source {source!r}; choose one of {list(SOURCE_WORDS)}.")


def planning_data(ds: S.Dataset, *, private: bool = False, q_scale: float | None = None,
                  choice: str | None = None) -> PlanningData:
    """The planning rows for ``ds`` (made once per dataset, source and q, and kept in the session)."""
    source = planning_source(ds, private=private, choice=choice)
    q = float(ds.q_scale if q_scale is None else q_scale)
    cache = st.session_state.setdefault(DATA_CACHE, {})
    key = (ds.key, source, q if source == "q" else None)
    if key not in cache:
        if len(cache) > 4:
            cache.clear()
        X, text = _rows(ds, source, q)
        X = np.ascontiguousarray(X, dtype=float)
        cache[key] = PlanningData(source=source, X=X, description=text,
                                  key=ds.key if source == "private" else f"plan:{ds.key}:{source}:{C.array_key(X)}")
    return cache[key]


def planning_table(ds: S.Dataset, plan: PlanningData):
    """The planning rows of a table, decoded into its own columns (cached on ``plan``)."""
    if plan.table is None:
        plan.table = ds.decode(plan.X)
    return plan.table


# --------------------------------------------------------------------------- the mechanism at small settings
def planning_mechanism(ds: S.Dataset, key: str, params: dict | None) -> tuple[str, dict, list[str]]:
    """(mechanism key, small and fast parameters, notes) of the planning runs for the Release page's choice.

    Algorithm 1 and 2 run as configured with at most :data:`MAX_POINTS` (Algorithm 2: :data:`MAX_POINTS_ALG2`)
    points and :data:`MAX_FEATURES` features; any other mechanism (or one whose settings cannot be read) is planned as Algorithm 2 with the
    session's settings.
    """
    ss = st.session_state
    notes: list[str] = []
    if key in SUPPORTED and params is not None and not REGISTRY[key].requires(ds):
        plan_key, p = key, dict(params)
    else:
        from dpkme.reduced_set import get_solver
        from dpkme.release.random_features import DEFAULT_SOLVER

        solver = ss.get(S.SOLVER) or DEFAULT_SOLVER
        if ds.point_domain is not None and not get_solver(solver).honours_domain:
            solver = DEFAULT_SOLVER
        plan_key = "alg2"
        p = {"n_points": int(ss.get(S.N_POINTS, 200)), "n_features": int(ss.get(S.N_FEATURES, 1000)),
             "solver": solver, "start": "q", "q_scale": float(ds.q_scale if ds.schema is not None
                                                              else ss.get(S.Q_SCALE, ds.q_scale))}
        label = REGISTRY[key].label if key in REGISTRY else key
        notes.append(f"The explorer plans Algorithm 1 and 2 releases: for {label} it shows Algorithm 2 with the "
                     "session's settings.")
    m0 = int(p["n_points"])
    m = min(m0, MAX_POINTS_ALG2 if plan_key == "alg2" else MAX_POINTS)
    if plan_key == "alg1-public" or (plan_key == "alg2" and p.get("start") == "public"):
        m = min(m, max(ds.n_public, 1))
    p["n_points"] = m
    if plan_key == "alg2":
        j0 = int(p["n_features"])
        p["n_features"] = min(j0, MAX_FEATURES)
        if p["n_features"] < j0:
            notes.append(f"J = {p['n_features']:,} random features instead of {j0:,}, for speed.")
    if m < m0:
        notes.append(f"M = {m} synthetic points instead of {m0}, for speed"
                     + (": Algorithm 1's noise grows with M, so the real release is noisier than these panels."
                        if plan_key != "alg2" else "."))
    return plan_key, p, notes


def panel_seeds(seed: int | None, k: int) -> list[int | None]:
    """Noise seeds of ``k`` panels: ``None`` (fresh OS entropy each) or, in replay mode, ``k`` distinct children of
    ``seed`` (``SeedSequence(seed).spawn(k)``) -- never ``seed`` itself, never the same for two panels."""
    if seed is None:
        return [None] * k
    return [int(c.generate_state(1, dtype=np.uint64)[0] % (2**63)) for c in np.random.SeedSequence(int(seed)).spawn(k)]


def _dims(ds: S.Dataset) -> tuple[int, int]:
    if ds.dim < 2:
        return (0, 0)
    ss = st.session_state
    dx, dy = ss.get(S.DIM_X, 0), ss.get(S.DIM_Y, 1)
    if not (isinstance(dx, int) and isinstance(dy, int) and 0 <= dx < ds.dim and 0 <= dy < ds.dim and dx != dy):
        dx, dy = 0, 1
    return (dx, dy)


def _grid(ds: S.Dataset, plan: PlanningData, dims):
    """(xs, ys or None, grid points): the planning rows' window (never the private rows', unless planning on them)."""
    P = plan.X[:, list(dims)]
    lo, hi = np.quantile(P, 0.005, axis=0), np.quantile(P, 0.995, axis=0)
    pad = 0.12 * np.maximum(hi - lo, 1e-9)
    lo, hi = lo - pad, hi + pad
    if ds.dim == 1:
        xs = np.linspace(lo[0], hi[0], 200)
        return xs, None, xs[:, None]
    return C.grid_points(ds, lo, hi, dims=dims, size=GRID_SIZE)


def explorer_cost(ds: S.Dataset, plan_key: str, params: dict, kernel, k: int, plan: PlanningData):
    """Predicted cost of one explorer run: ``k`` planning releases, their RKHS distances and the grid."""
    spec = REGISTRY[plan_key]
    m = int(params["n_points"])
    ev = estimate_cost("rkhs-distance", n=ds.n, n_points=m, dim=ds.dim)
    if (plan.key, C.kernel_key(kernel)) in st.session_state.get(KXX_DONE, set()):
        ev = ev.without(ALL_PAIRS_TERM)
    total = ev
    if k > 1:
        total = total + ev.without(ALL_PAIRS_TERM).repeated(k - 1)
    if ds.schema is None:
        g = 200 if ds.dim == 1 else GRID_SIZE * GRID_SIZE
        total = total + estimate_cost("rkhs-distance", n=ds.n, n_points=g, dim=ds.dim).without(ALL_PAIRS_TERM)
    # the noiseless twins (run_explorer): Algorithm 2 runs each panel twice; Algorithm 1 projects once per point set
    twins = k if plan_key == "alg2" or (plan_key != "alg1-public" and params.get("domain")) else 1
    total = total + ev.without(ALL_PAIRS_TERM).repeated(twins)
    if ds.schema is None:
        total = total + estimate_cost("rkhs-distance", n=g, n_points=m, dim=ds.dim).without(ALL_PAIRS_TERM) \
            .repeated(twins)
    own = spec.cost(ds, params, kernel) if spec.cost is not None else None
    return total if own is None else own.repeated(k + (twins if plan_key == "alg2" else 0)) + total


def _rkhs_gap(kernel, Z, w, Z0, w0) -> float:
    r""":math:`\|\sum_m w_m k(z_m,\cdot) - \sum_m w^0_m k(z^0_m,\cdot)\|_{\mathcal H}` (public points and weights)."""
    Z, Z0 = np.asarray(Z, dtype=float), np.asarray(Z0, dtype=float)
    if Z.shape == Z0.shape and np.array_equal(Z, Z0):          # the same points: one signed measure, w − w0
        P, c = Z, np.asarray(w, dtype=float) - np.asarray(w0, dtype=float)
    else:
        P, c = np.vstack([Z, Z0]), np.concatenate([np.asarray(w, dtype=float), -np.asarray(w0, dtype=float)])
    return math.sqrt(max(float(c @ kernel.cross(P, P) @ c), 0.0))


def _alg1_noiseless(kernel, plan: PlanningData, Z: np.ndarray, params: dict) -> np.ndarray:
    r"""The weights of Algorithm 1's noiseless twin on the points ``Z``: the projection :math:`P\hat\mu_{\rm plan}`
    onto span{k(z_m, ·)} (its coordinates :math:`\alpha` without the noise; nothing to shrink), then the same weight
    post-processing (simplex or L1 ball) as the planning run."""
    from dpkme.release.subspace import project_weights

    kk, zk = C.kernel_key(kernel), C.array_key(Z)
    B = C.basis(kk, zk, Z)
    w = B.weights(B.coordinates(C.row_means(plan.key, kk, zk, Z, plan.X)))
    if params.get("weights", "free") != "free":
        w = project_weights(w, kernel.gram(Z), constraint="simplex" if params["weights"] == "simplex" else "l1")
    return np.asarray(w, dtype=float)


def run_explorer(ds: S.Dataset, kernel, *, plan_key: str, params: dict, epsilons, plan: PlanningData, delta: float,
                 calibration: str, sensitivity_mode: str, seed: int | None = None, progress=None) -> dict:
    r"""``len(epsilons)`` planning releases of ``plan.X`` (never recorded, never charged) and their witnesses.

    Every planning run :math:`\tilde\mu` also gets a **noiseless twin** :math:`\tilde\mu_0`: the same mechanism on
    the same public points and random features, without the noise (planning data is public or simulated, so the
    twin is allowed; a real release of private rows never has one). Algorithm 1: the projection of
    :math:`\hat\mu_{\rm plan}` onto span{k(z_m, ·)} with the same weight post-processing
    (:func:`_alg1_noiseless`); Algorithm 2: the run replayed with the same random streams (features, solver) at
    :data:`TWIN_EPSILON`, whose :math:`\sigma \approx 10^{-8}` is numerically no noise. The distance to the planning
    embedding then splits into the noise's own part :math:`\|\tilde\mu - \tilde\mu_0\|` (shrinks like 1/ε) and
    the approximation part :math:`\|\tilde\mu_0 - \hat\mu_{\rm plan}\|` (what the M points cannot represent; ε
    does not change it); by the triangle inequality the total lies between their difference and their sum.

    Returns ``{"dataset_key", "panels", "grid", "dims", "zmax", "noise_zmax", ...}``; each panel holds its ε, the
    planning :class:`~dpkme.release.Release`, the witness on the grid (numeric data) and the noise's own witness
    :math:`\tilde\mu - \tilde\mu_0` there, the RKHS distance to the planning embedding (``distance``), its two
    parts (``noise_distance``, ``approx_distance``) and its noise seed (None: OS entropy).
    """
    progress = progress or (lambda f, m: None)
    eps = [float(e) for e in epsilons]
    seeds = panel_seeds(seed, len(eps))
    plan_ds = dataclasses.replace(ds, X=plan.X, key=plan.key, heldout=None, labels=None)
    Zq = None
    if plan_key == "alg1-q":   # one public draw of points for every panel: the panels differ by their noise only
        rng = np.random.default_rng(PLANNING_SEED + 1)
        m = int(params["n_points"])
        if params.get("domain"):
            Zq = ds.point_domain.sample(m, rng)
        else:
            from dpkme.release.subspace import draw_points_from_q

            Zq = draw_points_from_q(m, ds.dim, scale=float(params["q_scale"]), rng=rng,
                                    center=params.get("q_center", 0.0))
    dims = _dims(ds)
    grid = None
    plan_grid = None
    kkey = C.kernel_key(kernel)
    if ds.schema is None:
        xs, ys, G = _grid(ds, plan, dims)
        grid = (xs, ys, G)
        plan_grid = C.private_kme_on_grid(plan.key, kkey, C.array_key(G), G, plan.X)
    panels = []
    twins: dict[str, tuple] = {}      # Algorithm 1: the twin depends on the points only (one per point set)
    for i, e in enumerate(eps):
        progress(i / len(eps), f"planning run {i + 1} of {len(eps)} (ε = {e:g})")
        if Zq is not None:
            from dpkme.release.subspace import algorithm1

            rel = algorithm1(plan.X, Zq, kernel=kernel, epsilon=e, delta=delta, calibration=calibration,
                             sensitivity=sensitivity_mode, basis=params["basis"], weights=params["weights"],
                             random_state=seeds[i], basis_cache=C.basis(kkey, C.array_key(Zq), Zq))
            twin_rel = None
        else:
            # Algorithm 2's twin replays the run's random streams: with fresh noise, the panel's streams come from a
            # generator seeded by fresh OS entropy, kept in this function only (never shown, stored or recorded)
            entropy = np.random.SeedSequence().entropy if seeds[i] is None and plan_key == "alg2" else None

            def state(i=i, entropy=entropy):
                return np.random.default_rng(np.random.SeedSequence(entropy)) if entropy is not None else seeds[i]

            def context(eps_run, i=i, lo=0.0, hi=1.0, calibration=calibration):
                return RunContext(ds=plan_ds, kernel=kernel, epsilon=eps_run, delta=delta, calibration=calibration,
                                  sensitivity_mode=sensitivity_mode, random_state=state(),
                                  noise_source=N.REAL if seeds[i] is None else N.REPLAY,
                                  progress=lambda f, m: progress((i + lo + (hi - lo) * min(max(f, 0.0), 1.0))
                                                                 / len(eps), m))

            twin_run = plan_key == "alg2"
            run_params = {**params, "planning": True} if twin_run else params   # interactive solver settings
            rel = run_spec(REGISTRY[plan_key], context(e, hi=0.5 if twin_run else 1.0), run_params)[0]
            twin_rel = None
            if twin_run:
                twin_rel = run_spec(REGISTRY[plan_key], context(TWIN_EPSILON, lo=0.5, calibration="analytic"),
                                    run_params)[0]
        if twin_rel is not None:
            Z0, w0 = np.asarray(twin_rel.points, dtype=float), np.asarray(twin_rel.weights, dtype=float)
            approx = C.distance(plan_ds, kernel, Z0, w0)
            twin_grid = None if grid is None else np.asarray(twin_rel.evaluate(grid[2]), dtype=float)
        else:            # Algorithm 1: the same points, the projection without noise
            zk = C.array_key(rel.points)
            if zk not in twins:
                Z0 = np.asarray(rel.points, dtype=float)
                w0 = _alg1_noiseless(kernel, plan, Z0, params)
                twins[zk] = (Z0, w0, C.distance(plan_ds, kernel, Z0, w0),
                             None if grid is None else np.asarray(kernel.cross(grid[2], Z0) @ w0, dtype=float))
            Z0, w0, approx, twin_grid = twins[zk]
        released_grid = None if grid is None else np.asarray(rel.evaluate(grid[2]), dtype=float)
        panels.append({"epsilon": e, "release": rel, "seed": seeds[i],
                       "witness": None if grid is None else released_grid - plan_grid,
                       "noise_witness": None if grid is None else released_grid - twin_grid,
                       "distance": C.distance(plan_ds, kernel, rel.points, rel.weights),
                       "noise_distance": _rkhs_gap(kernel, rel.points, rel.weights, Z0, w0),
                       "approx_distance": float(approx), "twin_sigma": 0.0 if twin_rel is None else twin_rel.sigma})
    st.session_state.setdefault(KXX_DONE, set()).add((plan.key, kkey))
    progress(1.0, "done")
    zmax = max((float(np.abs(p["witness"]).max()) for p in panels if p["witness"] is not None), default=0.0)
    nmax = max((float(np.abs(p["noise_witness"]).max()) for p in panels if p["noise_witness"] is not None),
               default=0.0)
    return {"dataset_key": ds.key, "panels": panels, "grid": grid, "dims": dims, "zmax": zmax or 1e-12,
            "noise_zmax": nmax or 1e-12, "plan_source": plan.source, "plan_description": plan.description,
            "plan_key": plan.key, "mechanism": plan_key, "mechanism_label": REGISTRY[plan_key].label,
            "params": params, "replay": seed is not None, "plan": plan}


# --------------------------------------------------------------------------- readings in plain words
def _units(ds: S.Dataset, column: str) -> str:
    if ds.schema is not None and ds.schema[column].kind == "datetime":
        return "days"
    return f"(in the units of {column})"


def reading(ds: S.Dataset, plan: PlanningData, panel: dict, column: str) -> str:
    r"""One line in plain words: a third party's error on one column, from eq. (4) with the planning release's
    self-normalised weights, :math:`\sum_m w_m h(z_m) / \sum_m w_m`, against the planning rows, in original units."""
    rel = panel["release"]
    w = np.asarray(rel.weights, dtype=float)
    if not abs(float(w.sum())) > 1e-12:
        return (f"The weights sum to about 0: a third party could not estimate the mean of {column} from this "
                "release at all.")
    if ds.schema is None:
        j = [str(c) for c in ds.columns].index(column)
        est = float((w / w.sum()) @ ds.to_original_units(rel.points)[:, j])
        truth = float(ds.to_original_units(plan.X)[:, j].mean())
        return (f"A third party's estimate of the mean of {column} is off by about ± {S.fmt(abs(est - truth), 2)} "
                f"{_units(ds, column)}.")
    from dpkme.release.tabular import TableRelease

    spec = ds.schema[column]
    released = TableRelease(release=rel, schema=ds.schema).table()
    planned = planning_table(ds, plan)
    if spec.kind in T.NUMERIC_KINDS:
        x = T.as_numbers(released[column], spec.kind, spec=spec)
        y = T.as_numbers(planned[column], spec.kind, spec=spec)
        ok = ~np.isnan(x)
        if not ok.any() or not abs(float(w[ok].sum())) > 1e-12 or np.isnan(y).all():
            return f"No row of this release has a value of {column}: a third party could not estimate its mean."
        est = float(w[ok] @ x[ok]) / float(w[ok].sum())
        return (f"A third party's estimate of the mean of {column} is off by about "
                f"± {S.fmt(abs(est - float(np.nanmean(y))), 2)} {_units(ds, column)}.")
    levels = T.category_levels(spec, planned[column], released[column])
    p_plan = T.proportions(planned[column], T.norm_weights(None, len(planned)), levels)
    p_rel = T.proportions(released[column], T.norm_weights(w), levels)
    top = int(np.argmax(p_plan))
    return (f"A third party's estimate of the share of {column} = {levels[top]} is off by about "
            f"± {100 * abs(p_rel[top] - p_plan[top]):.2g} percentage points.")


# --------------------------------------------------------------------------- the page section
def use_epsilon(eps: float, private_planning: bool = False) -> None:
    """Button callback: put ``eps`` into the ε control (the Kernel page's slider, or its exact value).

    An ε read off panels planned on the PRIVATE rows is a data-dependent choice: the gate marks every run at that ε
    NOT private, with the reason (:func:`ui.gate.mark_epsilon_from_private_planning`), as it does for a length scale
    read off the private rows. Choosing another ε afterwards lifts the mark; using a public panel's ε clears it."""
    ss = st.session_state
    if private_planning:
        G.mark_epsilon_from_private_planning(eps)
    else:
        ss.pop(G.EPSILON_TAINT, None)
    if any(abs(eps - g) <= 1e-12 * g for g in C.epsilon_grid()):
        ss[S.EPS_TYPED] = False
        ss[S.EPS] = min(C.epsilon_grid(), key=lambda g: abs(g - eps))
    else:
        ss[S.EPS_TYPED] = True
        ss[S.EPS_VALUE] = float(eps)


def _signature(ds, plan_key, params, epsilons, plan, kernel, noise_source) -> str:
    ss = st.session_state
    return json.dumps([ds.key, plan_key, params, list(epsilons), plan.key, C.kernel_key(kernel), S.delta(),
                       ss.get(S.CALIBRATION), ss.get(S.SENS_MODE), noise_source == N.REPLAY],
                      sort_keys=True, default=lambda o: np.asarray(o).tolist())


def section(ds: S.Dataset, *, mechanism_key: str, params: dict | None, kernel, eps_now: float,
            noise_source: str, seed: int | None) -> None:
    """The Release page's "ε explorer (planning: not a release)": controls, size guard, run button and panels."""
    ss = st.session_state
    st.subheader(f"ε explorer ({LABEL})")
    st.markdown(
        "What does ε do to a release? The same mechanism, run on **planning data** at several ε side by side, each "
        "with its own fresh noise, on **one colour scale**: a smaller ε visibly shows more noise. "
        + ("**Top row: the noise alone** (each run minus its noiseless twin); **bottom row: the total** error, "
           "which also holds what the M synthetic points cannot represent — a part ε does not change. "
           if ds.schema is None else "Under each panel, the noise's own part of the error and the part of the M "
           "synthetic points, which ε does not change. ") +
        f"**{LABEL[:1].upper() + LABEL[1:]}**: nothing here is charged to the ledger, recorded as a release or "
        "downloadable, and by default no private row is read. A real release always goes through the **Release** "
        f"button and the ledger. The ε control above (now ε = {eps_now:g}) is the one the next real release uses.")
    grid_eps = C.epsilon_grid()
    ss.setdefault(EPS_KEY, list(DEFAULT_EPSILONS))
    if any(e not in grid_eps for e in ss[EPS_KEY]):
        ss[EPS_KEY] = [e for e in ss[EPS_KEY] if e in grid_eps] or list(DEFAULT_EPSILONS)
    c1, c2 = st.columns([3, 2])
    chosen = c1.multiselect("ε values to compare", grid_eps, key=EPS_KEY, max_selections=MAX_PANELS,
                            format_func=lambda v: f"{v:g}", persist_state="session",
                            help=f"Up to {MAX_PANELS} values; each panel is one planning run at that ε.")
    columns = ds.table_columns
    if ss.get(COLUMN_KEY) not in columns:
        ss[COLUMN_KEY] = columns[_dims(ds)[0]] if ds.schema is None else columns[0]
    column = c2.selectbox("Column for the plain-words reading" + (" and the marginals" if ds.is_table else ""),
                          columns, key=COLUMN_KEY, persist_state="session")
    sources = planning_sources(ds)
    if ss.get(SOURCE_KEY) not in sources:
        ss[SOURCE_KEY] = sources[0]
    # the owner's opt-in to plan on the private rows: simply not offered in presentation mode (and not applied)
    owner = show_owner_details()
    private = owner and bool(ss.get(PRIVATE_KEY))
    st.radio("Planning data (public or simulated)", sources, key=SOURCE_KEY, format_func=SOURCE_WORDS.get,
             horizontal=True, persist_state="session", disabled=private)
    if owner:
        private = st.checkbox("Plan on the private rows instead (owner only)", key=PRIVATE_KEY,
                              persist_state="session", help="Off by default: planning runs on public or simulated data.")
    if private:
        st.warning(PRIVATE_NOTE, icon=":material/visibility_off:")
    plan_key, p, notes = planning_mechanism(ds, mechanism_key, params)
    plan = planning_data(ds, private=bool(private), q_scale=p.get("q_scale"), choice=ss[SOURCE_KEY])
    st.caption(f"Planning data: {plan.description}. Mechanism: {REGISTRY[plan_key].label}, M = {p['n_points']}"
               + (f", J = {p['n_features']:,}" if plan_key == "alg2" else "") + ". " + " ".join(notes))
    epsilons = sorted(float(e) for e in chosen)
    ok = True
    with guard("estimate the cost of the ε explorer"):
        ok = size_guard(explorer_cost(ds, plan_key, p, kernel, max(len(epsilons), 1), plan), key=SIZE_KEY,
                        what="the ε explorer", hidden=S.counts_hidden(ds))
    go = st.button("Run the ε explorer (spends no budget)", key=GO_KEY, disabled=not epsilons or not ok,
                   icon=":material/compare:")
    signature = _signature(ds, plan_key, p, epsilons, plan, kernel, noise_source)
    if go and epsilons and ok:
        bar = st.progress(0.0, text="planning")
        with guard("run the ε explorer"):
            res = run_explorer(ds, kernel, plan_key=plan_key, params=p, epsilons=epsilons, plan=plan, delta=S.delta(),
                               calibration=ss[S.CALIBRATION], sensitivity_mode=ss[S.SENS_MODE],
                               seed=seed if noise_source == N.REPLAY else None,
                               progress=lambda f, m: bar.progress(min(max(f, 0.0), 1.0), text=m))
            res["signature"] = signature
            res["private"] = bool(private)
            ss[RESULT_KEY] = res
        bar.empty()
    res = ss.get(RESULT_KEY)
    if not res or res.get("dataset_key") != ds.key:
        st.caption("Press the button to draw the panels.")
        return
    if res.get("signature") != signature:
        st.info("The settings changed since these panels were drawn (they show the run's own settings below); press "
                "the button to run the explorer again.", icon=":material/update:")
    draw(ds, res, column)


def twin_words(res: dict) -> str:
    """How the noiseless twin μ̃₀ of this run's mechanism is made, in words (see :func:`run_explorer`)."""
    if res["mechanism"] == "alg2":
        sigma = max(float(p.get("twin_sigma") or 0.0) for p in res["panels"])
        return (f"the same run, same random features and solver randomness, at ε = 10⁹, whose σ = {sigma:.1g} is "
                "numerically no noise")
    return "the same points, projected without noise, with the same weights' post-processing"


def _points_words(res: dict) -> str:
    p = res["params"]
    m = int(p["n_points"])
    if res["mechanism"] == "alg2":
        return f"M = {m} points placed by the solver (and J = {int(p['n_features']):,} random features)"
    return f"M = {m} points" + (" with probability weights" if p.get("weights") == "simplex" else
                                 " with weights in the L1 ball" if p.get("weights") == "l1" else "")


def _advice(res: dict) -> str:
    if res["mechanism"] == "alg2":
        return ("raise M (*Number of synthetic points M*, on the left) or J (*Random features J*) to reduce it; the "
                f"explorer caps them at {MAX_POINTS_ALG2} and {MAX_FEATURES:,}")
    if res["mechanism"] == "alg1-public":
        return ("raise M (*Number of synthetic points M*, on the left; at most the publishable rows) to reduce it — "
                "in Algorithm 1 every added point also adds a noisy coordinate")
    return ("raise M (*Number of synthetic points M*, on the left) to reduce it — in Algorithm 1 every added point "
            "also adds a noisy coordinate")


def _num(x: float) -> str:
    """A distance in plain words: two significant digits, no exponent down to 1e-5 (``0.071``, ``0.00058``)."""
    x = float(x)
    return f"{x:.2g}" if x == 0 or (1e-5 <= abs(x) < 1e4 and "e" not in f"{x:.2g}") else f"{x:.2e}"


def decomposition_words(res: dict, panel: dict) -> str:
    r"""One panel's split of its distance in plain words: the noise's own part :math:`\|\tilde\mu-\tilde\mu_0\|`
    and the part of the M points :math:`\|\tilde\mu_0-\hat\mu_{\rm plan}\|`, which ε does not change."""
    return (f"The noise moves the estimate by {_num(panel['noise_distance'])} at ε = {panel['epsilon']:g}; the rest, "
            f"{_num(panel['approx_distance'])}, comes from using {_points_words(res)}, which ε does not change: "
            f"{_advice(res)}.")


def summary_words(res: dict) -> str:
    """The line under the panels: the noise's part at each ε next to the (ε-free) part of the M points."""
    panels = res["panels"]
    noise = [float(p["noise_distance"]) for p in panels]
    approx = [float(p["approx_distance"]) for p in panels]
    parts = [f"{_num(n)} at ε = {p['epsilon']:g}" for n, p in zip(noise, panels)]
    said = ", ".join(parts[:-1]) + (" and " if len(parts) > 1 else "") + parts[-1]
    ratio = ""
    if len(panels) > 1 and noise[-1] > 0:
        ratio = f" ({noise[0] / noise[-1]:.3g}× from ε = {panels[0]['epsilon']:g} to {panels[-1]['epsilon']:g})"
    lo, hi = min(approx), max(approx)
    if res["mechanism"] == "alg2":
        stays = (f"between {_num(lo)} and {_num(hi)} (it changes with each run's own random features and solver, "
                 "not with ε)" if hi > lo else f"at {_num(lo)}")
    else:
        stays = f"at {_num(hi)} in every panel"
    return (f"**What ε does:** the noise moves the estimate by {said}{ratio}. What the {_points_words(res)} cannot "
            f"represent stays {stays}: ε does not change it; {_advice(res)}. (Both are RKHS distances: the total "
            "lies between their difference and their sum.)")


def noise_panel(ds: S.Dataset, res: dict, panel: dict):
    """The noise's own witness μ̃ − μ̃₀ of one panel, on the run's shared noise scale (``res["noise_zmax"]``)."""
    xs, ys, _ = res["grid"]
    title = f"ε = {panel['epsilon']:g} — {LABEL}<br><sub>the noise alone: μ̃ − μ̃₀ (noiseless twin)</sub>"
    fig = witness_panel(xs, ys, panel["noise_witness"], zmax=res["noise_zmax"], epsilon=panel["epsilon"],
                        columns=ds.model_labels, dims=res["dims"], title=title)
    fig.update_layout(meta={**fig.layout.meta, "part": "noise"})
    if ys is None:
        fig.update_yaxes(title_text="released − noiseless")
    else:
        fig.update_layout(coloraxis_colorbar_title_text="released − noiseless")
    return fig


def draw(ds: S.Dataset, res: dict, column: str) -> None:
    """The panels of an explorer run: one shared colour scale / shared axes, readings under each.

    Panels drawn from the private rows are an owner-only value (:class:`ui.presentation.OwnerOnly`): hidden, with a
    note, in presentation mode."""
    if res.get("private"):
        OwnerOnly(res, "The ε explorer's panels drawn from the private rows").render(
            lambda r: _draw(ds, r, column))
        return
    _draw(ds, res, column)


def _draw(ds: S.Dataset, res: dict, column: str) -> None:
    panels = res["panels"]
    plan = res["plan"]
    if res.get("private"):
        st.warning("These panels were drawn from the **private rows**: owner only. " + PRIVATE_NOTE,
                   icon=":material/visibility_off:")
    cols = st.columns(len(panels))
    shared = None
    if ds.schema is not None and plan is not None:
        from dpkme.release.tabular import TableRelease

        spec = ds.schema[column]
        planned = planning_table(ds, plan)[column]
        shares = [T.marginal_shares(spec, [(planned, None), (TableRelease(release=p["release"], schema=ds.schema)
                                                             .table()[column], p["release"].weights)])
                  for p in panels]
        lo = min(0.0, *(float(np.min(s)) for _, ss_ in shares for s in ss_))
        hi = max(float(np.max(s)) for _, ss_ in shares for s in ss_)
        shared = (shares, (lo, 1.08 * hi if hi > 0 else 1.0))
    decomposed = all("noise_distance" in p for p in panels)     # runs before the decomposition have none
    for i, (c, p) in enumerate(zip(cols, panels)):
        with c:
            title = f"ε = {p['epsilon']:g} — {LABEL}"
            if shared is not None:
                x, (s_plan, s_rel) = shared[0][i]
                fig = T.planning_marginal_figure(ds.schema[column], x, s_plan, s_rel, y_range=shared[1],
                                                 meta={"figure": "eps-explorer", "epsilon": p["epsilon"]}, title=title)
            elif res["grid"] is not None:
                xs, ys, _ = res["grid"]
                if decomposed and p.get("noise_witness") is not None:
                    plotly_chart(noise_panel(ds, res, p), key=NOISE_KEY.format(i=i))
                fig = witness_panel(xs, ys, p["witness"], zmax=res["zmax"], epsilon=p["epsilon"],
                                    columns=ds.model_labels, dims=res["dims"], title=title
                                    + ("<br><sub>total: release − planning data (noise + M points)</sub>"
                                       if decomposed else ""))
                fig.update_layout(meta={**fig.layout.meta, "part": "total"})
            else:
                fig = None
            if fig is not None:
                plotly_chart(fig, key=FIG_KEY.format(i=i))
            st.markdown(f"**ε = {p['epsilon']:g}** · RKHS distance ‖μ̃ − μ̂_plan‖ = {S.fmt(p['distance'])}")
            if decomposed:
                st.markdown(f"noise ‖μ̃ − μ̃₀‖ = **{S.fmt(p['noise_distance'])}** · M points ‖μ̃₀ − μ̂_plan‖ = "
                            f"{S.fmt(p['approx_distance'])}")
                st.caption(decomposition_words(res, p))
            if plan is not None:
                with guard("read the planning run"):
                    st.caption(reading(ds, plan, p, column))
            st.caption("Planning run: not a release, not charged to the ledger, not stored.")
            st.button(f"Use ε = {p['epsilon']:g}", key=USE_KEY.format(i=i), on_click=use_epsilon,
                      args=(p["epsilon"], bool(res.get("private"))),
                      help="Sets the ε control above; nothing is released or charged until you press Release."
                           + (" Planned on the PRIVATE rows: releases at this ε are then marked NOT private."
                              if res.get("private") else ""))
    if decomposed:
        st.markdown(summary_words(res))
    noise = ("each panel drew its own fresh noise from OS entropy (nothing recorded)" if not res.get("replay") else
             "replay mode: each panel's noise comes from a distinct child of the seed (seeds "
             + ", ".join(str(p["seed"]) for p in panels) + "), never from the seed itself")
    if ds.schema is None:
        rows = ""
        if decomposed:
            rows = ("**Top row: the noise alone**, μ̃ − μ̃₀ (the planning run minus its noiseless twin: "
                    f"{twin_words(res)}), on **one colour scale for every panel**: red/blue = "
                    f"± {S.fmt(res['noise_zmax'])}, the largest |μ̃ − μ̃₀| of this run, set by the noisiest panel. It "
                    "shrinks with the noise scale σ, roughly ∝ 1/ε. **Bottom row: the total**, released − planning "
                    "embedding, noise and M points together, on its own shared scale. ")
        st.caption(rows + "**One colour scale for every panel**"
                   + (" of the bottom row" if decomposed else "") + f": red/blue = ± {S.fmt(res['zmax'])}, the "
                   "largest |released − planning embedding| of this run; the same grid and axes in every panel (other "
                   "coordinates at q's centre). The witness shows where a release over- (blue) or under-represents "
                   "(red) the data; what remains at a large ε is the error of the synthetic points themselves (their "
                   "number M and where they are), not of the privacy noise. "
                   f"{res['mechanism_label']}, {noise}. Planning data: {res['plan_description']}.")
    else:
        st.caption(f"**Shared axes**: one y-range for every panel. Grey: the planning rows; red: each planning "
                   f"release's weighted rows. {res['mechanism_label']}, {noise}. Planning data: "
                   f"{res['plan_description']}.")
    if not math.isfinite(res["zmax"]):
        st.warning("A planning release had non-finite values: try fewer points or another solver.")
