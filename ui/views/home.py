"""The Home page's views (``pages/home.py``): what the tool does, the paper's three-step template, the one-click
paper example, the presets for a lecture and a stakeholder demo, the guided tour and what (ε, δ) promises.

Presets (issue 26)
------------------
A preset sets what a presenter would otherwise set on four pages -- the dataset, the kernel, ε and δ, the mechanism
and presentation mode -- and opens the page where the story starts. It spends nothing: the presenter still presses
**Release**, and the gate charges that release as any other. Every setting is a public choice (a generator's
parameters, a bundled table's declared schema, a fixed split seed); nothing is read from private rows to choose it.

* **Lecture** -- the paper's mixture of 10 Gaussians (10 000 rows, D = 2, 2 % declared public as in the paper's
  Figure 1, 10 % held out), the paper's kernel, ε = 1, δ = 10⁻⁶, Algorithm 1 on the 200 public rows with probability
  weights, presentation mode on. It opens the Release page, whose ε explorer plans on the public rows (the honest picture of what ε does)
  before anything is spent.
* **Stakeholder demo** -- a real mixed table (the bundled Seattle weather: a date, numbers and a category, with its
  declared schema, 20 % held out to show fidelity on rows the release never saw), ε = 1, δ = 10⁻⁶, the table
  mechanism the Release page uses by default for tables (the adaptive KME release: synthetic rows in the table's
  own types), presentation mode on (the owner's diagnostics hidden). It opens the Release page.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import streamlit as st

from dpkme.datasets import load_schema, paper_mixture
from dpkme.release.subspace import algorithm1
from dpkme.reproduce import paper_kernel
from ui import compute as C
from ui import glossary as G
from ui import noise as N
from ui import persist
from ui import presentation as P
from ui import state as S
from ui.charts import plotly_chart
from ui.datasets import PAPER_EXAMPLE_SPEC, cached_dataset, spec_json
from ui.figures import release_figure, template_figure
from ui.mechanisms import REGISTRY, default_mechanism
from ui.runner import make_context, perform
from ui.views import data as DV
from ui.widgets import (
    PAGE_CLUSTERING,
    PAGE_CURVES,
    PAGE_DATA,
    PAGE_KERNEL,
    PAGE_LEDGER,
    PAGE_RELEASE,
    PAGE_TWOSAMPLE,
    PAGE_USE,
    guard,
)

ss = st.session_state

# --------------------------------------------------------------------------- this page's session keys
EXAMPLE_BUTTON = "home.example"
EXAMPLE_PENDING = "home.pending"            # the paper example's settings are in place: run it on this script run
TEMPLATE_CHART = "home.template"
EXAMPLE_CHART = "home.example_fig"
PRESET_BUTTON = "home.preset.{preset}"
RELEASE_SELECTED = "rel.selected"           # the Release page's "Showing release" choice
PRESET_PENDING = "home.preset_pending"      # the preset just applied: its landing page opens on the next run
PRESET_ERROR = "home._preset_error"         # a preset that could not be set up, shown once


# --------------------------------------------------------------------------- the presets' settings
@dataclass(frozen=True)
class Preset:
    """A named set of public settings and the page it opens."""

    key: str
    title: str
    button: str
    summary: str
    page: str
    icon: str


PRESETS: dict[str, Preset] = {
    "lecture": Preset(
        key="lecture", title="Lecture", button="Set up the lecture", icon=":material/school:", page=PAGE_RELEASE,
        summary="The paper's mixture of 10 Gaussians (10 000 rows, 2 % declared public, 10 % held out), the paper's "
                "kernel, ε = 1, δ = 10⁻⁶, Algorithm 1 on the 200 public rows with probability weights, presentation "
                "mode on. Opens the "
                "Release page: show what ε does in the ε explorer (planned on the public rows, nothing spent), then "
                "press Release."),
    "stakeholder": Preset(
        key="stakeholder", title="Stakeholder demo", button="Set up the stakeholder demo",
        icon=":material/groups:", page=PAGE_RELEASE,
        summary="A real mixed table (Seattle weather 2012–2015: a date, numbers and a category, with its declared "
                "schema; 20 % held out), ε = 1, δ = 10⁻⁶, the adaptive table release (synthetic rows in the table's "
                "own types), presentation mode on (the owner's diagnostics hidden). Opens the Release page: press "
                "Release."),
}

#: The stakeholder demo's table: bundled, public, with a schema declared from its documentation.
STAKEHOLDER_SAMPLE = "seattle_weather"
STAKEHOLDER_HELDOUT = 0.2


def _lecture() -> S.Dataset:
    ds = _paper_settings()
    # probability weights (>= 0, sum 1): a third party's probabilities and means stay in range (signed weights,
    # the paper's option, can give a negative probability on the Third-party use page, a distraction mid-lecture)
    ss[S.WEIGHTS] = "simplex"
    return ds


def stakeholder_spec() -> dict:
    """The stakeholder demo's dataset spec: the bundled table with its declared schema, no public rows."""
    return {"source": "sample", "sample": STAKEHOLDER_SAMPLE, "schema": load_schema(STAKEHOLDER_SAMPLE).to_dict(),
            "public_fraction": 0.0, "public_declared": False, "heldout_fraction": STAKEHOLDER_HELDOUT,
            "split_seed": 0}


def _stakeholder() -> S.Dataset:
    ds = cached_dataset(spec_json(stakeholder_spec()))
    S.set_dataset(ds)
    ss[S.MECHANISM] = default_mechanism(ds)
    ss[DV.SOURCE] = "sample"
    ss[DV.SAMPLE] = STAKEHOLDER_SAMPLE
    ss[DV.MODE] = "schema"
    ss[DV.PUBLIC_PCT] = 0.0
    ss[DV.HELDOUT_PCT] = 100.0 * STAKEHOLDER_HELDOUT
    ss[DV.SPLIT_SEED] = 0
    return ds


def apply_preset(key: str) -> None:
    """Button callback: put preset ``key``'s settings in the session (nothing is run or charged).

    Raises
    ------
    ValueError
        If ``key`` is not a preset, or the dataset cannot be put in use (e.g. budget already spent on another
        split of the same people: :func:`ui.state.set_dataset` says why).
    """
    if key not in PRESETS:
        raise ValueError(f"unknown preset {key!r}; choose one of {list(PRESETS)}.")
    (_lecture if key == "lecture" else _stakeholder)()
    ss[S.EPS_TYPED] = False
    ss[S.EPS] = 1.0
    ss[S.DELTA] = 1e-6
    ss[S.NOISE_SOURCE] = N.REAL           # a real release: fresh OS entropy, never the replay mode
    ss[P.PRESENT] = True
    st.query_params[P.QUERY_PARAM] = "1"  # as the sidebar toggle does: a reload keeps the mode
    ss[PRESET_PENDING] = key


def landing_page() -> str | None:
    """The page to open after a preset was applied (once), else None."""
    key = ss.pop(PRESET_PENDING, None)
    return PRESETS[key].page if key in PRESETS else None


# --------------------------------------------------------------------------- what the tool does
def intro() -> None:
    """The title and the one-paragraph summary of the method."""
    st.title("Private data release with kernel mean embeddings")
    st.markdown(
        """
**dpkme** publishes a *differentially private* version of a table of numbers — one that anyone can analyse
without learning much about any single person in it. Instead of releasing the rows, it releases a smooth summary
of them, the **kernel mean embedding** (a kind of smoothed density), protected with calibrated random noise, and
represented by a set of **weighted synthetic points**. Third parties can then estimate means, probabilities and
distances between distributions from those points, as often as they like, at no further privacy cost.
This is the method of Balog, Tolstikhin & Schölkopf, *Differentially Private Database Release via Kernel Mean
Embeddings*, ICML 2018.
"""
    )


@st.cache_data(show_spinner=False)
def _template_example():
    """A small public illustration (generated data, not the user's): the three steps of the template."""
    X = paper_mixture(3000, 2, random_state=1)
    kernel = paper_kernel(2)
    Z = X[:120]
    rel = algorithm1(X[120:], Z, kernel=kernel, epsilon=1.0, delta=1e-6, points_are_sample=True, random_state=0,
                     weights="simplex")
    lo, hi = np.quantile(X, 0.005, axis=0) - 60, np.quantile(X, 0.995, axis=0) + 60
    xs, ys = np.linspace(lo[0], hi[0], 50), np.linspace(lo[1], hi[1], 50)
    G = np.stack(np.meshgrid(xs, ys), axis=-1).reshape(-1, 2)
    return X[120:], kernel.row_means(G, X[120:]), rel.evaluate(G), xs, ys, rel.points, rel.weights


def three_steps() -> None:
    """The template's three steps as a figure (public generated data) and three captions."""
    st.subheader("The template: three steps")
    X_t, kme_t, noisy_t, xs_t, ys_t, Z_t, w_t = _template_example()
    plotly_chart(template_figure(X_t, kme_t, noisy_t, xs_t, ys_t, Z_t, w_t), key=TEMPLATE_CHART)
    c1, c2, c3 = st.columns(3)
    c1.markdown("**① Estimate.** Average a kernel bump k(xₙ, ·) over the private rows: "
                "μ̂ = (1/N) Σₙ k(xₙ, ·). One row moves μ̂ by at most √2/N.")
    c2.markdown("**② Privatise.** Add Gaussian noise, calibrated to that sensitivity and to (ε, δ), in a "
                "finite-dimensional coordinate system (Algorithm 1: the span of public points; Algorithm 2: random "
                "features).")
    c3.markdown("**③ Represent.** Express the noisy embedding as Σₘ wₘ k(zₘ, ·) with synthetic points zₘ "
                "(here: probability weights, larger = heavier; the paper's weights may also be negative). That "
                "weighted set is what gets published.")


# --------------------------------------------------------------------------- presets
def presets() -> None:
    """Two buttons: the lecture and the stakeholder demo, each with what it sets (nothing is spent)."""
    st.subheader("Presenting? One click sets it up")
    st.caption("Each preset sets the data, the kernel, ε and δ, the mechanism and presentation mode, and opens the "
               "page to start from. Nothing is spent until you press Release there.")
    for col, preset in zip(st.columns(len(PRESETS)), PRESETS.values(), strict=True):
        with col:
            st.markdown(f"**{preset.title}.** {preset.summary}")
            st.button(preset.button, icon=preset.icon, key=PRESET_BUTTON.format(preset=preset.key),
                      on_click=_apply_from_button, args=(preset.key,))


def _apply_from_button(key: str) -> None:
    try:
        apply_preset(key)
    except ValueError as e:            # e.g. budget already spent on another split of the same people
        st.session_state[PRESET_ERROR] = f"The {PRESETS[key].title.lower()} preset could not be set up: {e}"


def open_preset_page() -> None:
    """Open the landing page of a preset applied by the last click, or show why it could not be set up."""
    problem = ss.pop(PRESET_ERROR, None)
    if problem:
        st.error(problem, icon=":material/error:")
    page = landing_page()
    if page is not None:
        st.switch_page(page)


# --------------------------------------------------------------------------- the paper example
def _paper_settings() -> S.Dataset:
    """The paper example's dataset, kernel and Algorithm 1 settings (the lecture preset uses them too)."""
    ds = cached_dataset(spec_json(PAPER_EXAMPLE_SPEC))
    S.set_dataset(ds)
    ss[S.KERNEL] = "gaussian"
    ss[S.LENGTHSCALE] = paper_kernel(ds.dim).lengthscale
    ss[S.LENGTHSCALE_SOURCE] = "paper"
    ss[S.MECHANISM] = "alg1-public"
    ss[S.N_POINTS] = 200
    ss[S.BASIS] = "full"
    ss[S.WEIGHTS] = "free"
    _show_on_data_page(PAPER_EXAMPLE_SPEC)
    return ds


def _prepare_example() -> None:
    _paper_settings()
    ss[S.EPS_TYPED] = False
    ss[S.EPS] = 1.0
    ss[S.DELTA] = 1e-6
    ss[EXAMPLE_PENDING] = True


def _show_on_data_page(spec: dict) -> None:
    """Put a generated dataset's settings in the Data page's widgets, so that page shows what is in use."""
    ss[DV.SOURCE] = "generated"
    ss[DV.GENERATOR] = spec["generator"]
    for k, v in spec["params"].items():
        ss[DV.GEN_PARAM.format(generator=spec["generator"], param=k)] = v
    ss[DV.SEED] = spec["seed"]
    ss[DV.PUBLIC_PCT] = 100.0 * spec["public_fraction"]
    ss[DV.PUBLIC_DECLARED] = spec["public_declared"]
    ss[DV.HELDOUT_PCT] = 100.0 * spec["heldout_fraction"]
    ss[DV.SPLIT_SEED] = spec["split_seed"]
    ss[DV.SCALING] = "none"


def paper_example() -> None:
    """The one-click paper example: a real release (charged), its closeness (owner-only) and its figure."""
    st.subheader("See it work in one click")
    st.markdown(
        "The **paper example** loads the paper's mixture of 10 Gaussians (10 000 rows in D = 2; 2 % of them "
        "declared public — published in the clear, as in the paper's Figure 1 — and 10 % held out for comparisons), "
        "uses the paper's kernel (γ = 10⁻⁴/D) and ε = 1, δ = 10⁻⁶, and runs Algorithm 1 with the "
        "200 public rows as synthetic points. It is a real release: fresh noise from OS entropy, charged to the "
        "ledger."
    )
    st.button("Run the paper example", type="primary", icon=":material/play_arrow:", on_click=_prepare_example,
              key=EXAMPLE_BUTTON)
    if ss.pop(EXAMPLE_PENDING, False):
        ds = S.dataset()
        with guard("run the paper example") as res:
            ctx = make_context(ds)          # a real release: fresh OS-entropy noise, no seed recorded
            rec = perform(REGISTRY["alg1-public"], {"n_points": 200, "basis": "full", "weights": "free"}, ctx,
                          page="home")
            ss[S.PAPER_EXAMPLE] = rec.id
            ss[RELEASE_SELECTED] = rec.id
        if res.ok:
            st.rerun()  # refresh the sidebar's budget summary

    rec = next((r for r in S.releases() if r.id == ss.get(S.PAPER_EXAMPLE)), None)
    ds = S.dataset()
    if rec is None or ds is None or rec.dataset_key != ds.key:
        return
    r, m = rec.release, rec.metrics
    a, b, c, d = st.columns(4)

    def _closeness(m) -> None:          # against the private rows' embedding: owner-only
        a.metric("RKHS distance ‖μ̃ − μ̂‖", S.fmt(m["distance"]),
                 help=G.help_text("‖μ̃ − μ̂‖") + " Here: the released points against the private rows' embedding.")
        b.metric("Uniform baseline", S.fmt(m.get("baseline")),
                 help="The RKHS distance of the same points with equal weights (no private information): what the "
                      "release must beat.")
        improvement = m["baseline"] / m["distance"] if m.get("baseline") else None
        if improvement:
            st.success(f"Algorithm 1 re-weighted the 200 public points with the private data's information, at "
                       f"ε = 1: its embedding is {improvement:.1f}× closer to the private one than the uniform "
                       "baseline.")

    c.metric("Noise σ", S.fmt(r.sigma), help=G.help_text("σ"))
    d.metric("Runtime", f"{r.seconds:.2f} s")
    P.OwnerOnly(m, "How close the example's release is to the private rows (RKHS distances)").render(_closeness)
    plotly_chart(release_figure(P.owner_rows(ds.X), r.points, r.weights, columns=[str(c) for c in ds.columns],
                                window=C.plot_window(ds), title="Paper example: released weighted points"),
                 key=EXAMPLE_CHART)
    st.page_link(PAGE_RELEASE, label="Explore this release (heat-maps, downloads, repeat draws) →",
                 icon=":material/rocket_launch:")


# --------------------------------------------------------------------------- the tour and the promise
def tour() -> None:
    """Links to every page, in the order of the journey."""
    st.subheader("The guided tour")
    st.markdown("Work through the pages in the sidebar, top to bottom:")
    st.page_link(PAGE_DATA, label="Data — generate, pick a bundled data set or upload your own",
                 icon=":material/table_view:")
    st.page_link(PAGE_KERNEL, label="Kernel & privacy — the kernel, ε and δ, and what they mean for the noise",
                 icon=":material/tune:")
    st.page_link(PAGE_RELEASE, label="Release — the adaptive table release, Algorithms 1 and 2, the exact exponential "
                 "mechanism, a GP function release, a cluster-wise release; see and download the result",
                 icon=":material/rocket_launch:")
    st.page_link(PAGE_CURVES, label="Privacy–utility curves — accuracy against ε and M; the mechanisms compared at "
                 "equal ε", icon=":material/show_chart:")
    st.page_link(PAGE_USE, label="Use the release — what a third party computes from it", icon=":material/calculate:")
    st.page_link(PAGE_TWOSAMPLE, label="Two-sample test — test a release against held-out data, run a private "
                 "test live, type-I error and power curves", icon=":material/compare_arrows:")
    st.page_link(PAGE_CLUSTERING, label="Clustering — DP kernel k-means: budget split, centres, accuracy against ε",
                 icon=":material/bubble_chart:")
    st.page_link("pages/audit.py", label="Privacy audit — sensitivity bugs found in published code, and what ε they "
                 "really give", icon=":material/policy:")
    st.page_link(PAGE_LEDGER, label="Budget ledger — how much privacy all releases have used together",
                 icon=":material/account_balance_wallet:")
    st.caption(":material/restore: " + persist.RELOAD_WORDS)


def promise() -> None:
    """What (ε, δ)-DP promises -- open, not in a collapsed section: the first thing a lecture explains."""
    st.subheader("What does (ε, δ)-differential privacy promise?")
    st.markdown(
        "A randomised release A is (ε, δ)-differentially private if for any two tables D, D′ that differ in one "
        "row and any set S of outcomes, P(A(D) ∈ S) ≤ e^ε · P(A(D′) ∈ S) + δ. Whatever an analyst does with the "
        "output, their conclusions about any one person are almost the same whether or not that person's row was "
        "used. Smaller ε means stronger protection and more noise. Guarantees add up over releases — the "
        "Budget ledger page keeps the account."
    )
    with st.expander("Honest limits of this tool"):
        st.markdown(
            "* Noise is drawn with numpy in double precision: fine for teaching and experiments, not hardened "
            "against floating-point side channels.\n"
            "* Every release is real by default: fresh noise from OS entropy, no seed recorded. The Release page's "
            "replay mode (seeded noise) is for teaching; its results are labelled 'replayable demo, not private'.\n"
            "* The RKHS distances shown next to a release are computed from the private data, for you; they are not "
            "part of what is published."
        )
