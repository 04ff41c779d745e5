"""Home: what the tool does, the paper's three-step template as a figure, and a one-click paper example."""

import numpy as np
import streamlit as st

from dpkme.datasets import paper_mixture
from dpkme.release.subspace import algorithm1
from dpkme.reproduce import paper_kernel
from ui import compute as C
from ui import glossary as G
from ui import persist
from ui import presentation as P
from ui import state as S
from ui.charts import plotly_chart
from ui.datasets import PAPER_EXAMPLE_SPEC
from ui.figures import release_figure, template_figure
from ui.frame import require_frame
from ui.mechanisms import REGISTRY
from ui.runner import make_context, perform
from ui.widgets import PAGE_CURVES, PAGE_DATA, PAGE_LEDGER, PAGE_RELEASE, PAGE_USE, guard

require_frame(__file__)

ss = st.session_state

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


st.subheader("The template: three steps")
X_t, kme_t, noisy_t, xs_t, ys_t, Z_t, w_t = _template_example()
plotly_chart(template_figure(X_t, kme_t, noisy_t, xs_t, ys_t, Z_t, w_t), key="home.template")
c1, c2, c3 = st.columns(3)
c1.markdown("**① Estimate.** Average a kernel bump k(xₙ, ·) over the private rows: "
            "μ̂ = (1/N) Σₙ k(xₙ, ·). One row moves μ̂ by at most √2/N.")
c2.markdown("**② Privatise.** Add Gaussian noise, calibrated to that sensitivity and to (ε, δ), in a "
            "finite-dimensional coordinate system (Algorithm 1: the span of public points; Algorithm 2: random "
            "features).")
c3.markdown("**③ Represent.** Express the noisy embedding as Σₘ wₘ k(zₘ, ·) with synthetic points zₘ "
            "(here: probability weights, larger = heavier; the paper's weights may also be negative). That "
            "weighted set is what gets published.")

st.subheader("See it work in one click")
st.markdown(
    "The **paper example** loads the paper's mixture of 10 Gaussians (10 000 rows in D = 2; 2 % of them "
    "declared public — published in the clear, as in the paper's Figure 1 — and 10 % held out for comparisons), "
    "uses the paper's kernel (γ = 10⁻⁴/D) and ε = 1, δ = 10⁻⁶, and runs Algorithm 1 with the "
    "200 public rows as synthetic points. It is a real release: fresh noise from OS entropy, charged to the ledger."
)


def _prepare_example():
    from ui.datasets import cached_dataset, spec_json

    ds = cached_dataset(spec_json(PAPER_EXAMPLE_SPEC))
    S.set_dataset(ds)
    ss[S.KERNEL] = "gaussian"
    ss[S.LENGTHSCALE] = paper_kernel(ds.dim).lengthscale
    ss[S.LENGTHSCALE_SOURCE] = "paper"
    ss[S.EPS_TYPED] = False
    ss[S.EPS] = 1.0
    ss[S.DELTA] = 1e-6
    ss[S.MECHANISM] = "alg1-public"
    ss[S.N_POINTS] = 200
    ss[S.BASIS] = "full"
    ss[S.WEIGHTS] = "free"
    # show the example's settings on the Data page
    ss["data.source"] = "generated"
    ss["data.generator"] = PAPER_EXAMPLE_SPEC["generator"]
    for k, v in PAPER_EXAMPLE_SPEC["params"].items():
        ss[f"data.gen.paper_mixture.{k}"] = v
    ss["data.seed"] = PAPER_EXAMPLE_SPEC["seed"]
    ss["data.public_pct"] = 100.0 * PAPER_EXAMPLE_SPEC["public_fraction"]
    ss["data.public_declared"] = PAPER_EXAMPLE_SPEC["public_declared"]
    ss["data.heldout_pct"] = 100.0 * PAPER_EXAMPLE_SPEC["heldout_fraction"]
    ss["data.split_seed"] = PAPER_EXAMPLE_SPEC["split_seed"]
    ss["data.scaling"] = "none"
    ss["home.pending"] = True


st.button("Run the paper example", type="primary", icon=":material/play_arrow:", on_click=_prepare_example, key="home.example")
if ss.pop("home.pending", False):
    ds = S.dataset()
    with guard("run the paper example") as res:
        ctx = make_context(ds)          # a real release: fresh OS-entropy noise, no seed recorded
        rec = perform(REGISTRY["alg1-public"], {"n_points": 200, "basis": "full", "weights": "free"}, ctx,
                      page="home")
        ss[S.PAPER_EXAMPLE] = rec.id
        ss["rel.selected"] = rec.id
    if res.ok:
        st.rerun()  # refresh the sidebar's budget summary

rec = next((r for r in S.releases() if r.id == ss.get(S.PAPER_EXAMPLE)), None)
ds = S.dataset()
if rec is not None and ds is not None and rec.dataset_key == ds.key:
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
                    key="home.example_fig")
    st.page_link(PAGE_RELEASE, label="Explore this release (heat-maps, downloads, repeat draws) →", icon=":material/rocket_launch:")

st.subheader("The guided tour")
st.markdown("Work through the pages in the sidebar, top to bottom:")
st.page_link(PAGE_DATA, label="Data — generate, pick a bundled data set or upload your own", icon=":material/table_view:")
st.page_link("pages/kernel.py", label="Kernel & privacy — the kernel, ε and δ, and what they mean for the noise",
             icon=":material/tune:")
st.page_link(PAGE_RELEASE, label="Release — Algorithms 1 and 2, the exact exponential mechanism, a GP function release, "
             "a cluster-wise release; see and download the result", icon=":material/rocket_launch:")
st.page_link(PAGE_CURVES, label="Privacy–utility curves — accuracy against ε and M; the mechanisms compared at equal ε",
             icon=":material/show_chart:")
st.page_link(PAGE_USE, label="Use the release — what a third party computes from it", icon=":material/calculate:")
st.page_link("pages/twosample.py", label="Two-sample test — test a release against held-out data, run a private "
             "test live, type-I error and power curves", icon=":material/compare_arrows:")
st.page_link("pages/clustering.py", label="Clustering — DP kernel k-means: budget split, centres, accuracy against ε",
             icon=":material/bubble_chart:")
st.page_link("pages/audit.py", label="Privacy audit — sensitivity bugs found in published code, and what ε they really give",
             icon=":material/policy:")
st.page_link(PAGE_LEDGER, label="Budget ledger — how much privacy all releases have used together", icon=":material/account_balance_wallet:")
st.caption(":material/restore: " + persist.RELOAD_WORDS)

# open, not in a collapsed section (issue 26): what ε does is the first thing a lecture explains
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
        "* Noise is drawn with numpy in double precision: fine for teaching and experiments, not hardened against "
        "floating-point side channels.\n"
        "* Every release is real by default: fresh noise from OS entropy, no seed recorded. The Release page's "
        "replay mode (seeded noise) is for teaching; its results are labelled 'replayable demo, not private'.\n"
        "* The RKHS distances shown next to a release are computed from the private data, for you; they are not "
        "part of what is published."
    )
