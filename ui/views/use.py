"""The Third-party use page's views (``pages/use.py``): what a third party computes from a release's weighted points
(eq. (4)) -- means, covariances, box probabilities, a mixed table's counts -- next to the private truth (owner
only), and an MMD comparison with held-out data."""

from __future__ import annotations

import json

import numpy as np
import pandas as pd
import streamlit as st

from dpkme.datasets import GENERATORS
from dpkme.metrics import mmd
from ui import compute as C
from ui import presentation as P
from ui import state as S
from ui import table_views as TV
from ui.charts import plotly_chart
from ui.figures import release_figure
from ui.widgets import PAGE_RELEASE, guard

ss = st.session_state

# --------------------------------------------------------------------------- this page's session and widget keys
BOX_ID = "use.box.id"
BOX_X0 = "use.box.x0"
BOX_X1 = "use.box.x1"
BOX_Y0 = "use.box.y0"
BOX_Y1 = "use.box.y1"
CHART = "use.chart"
DX = "use.dx"
DY = "use.dy"
MMD_SRC = "use.mmd_src"
RELEASE = "use.release"
WEIGHTS = "use.weights"


WEIGHT_MODES = {
    "raw": "as released (eq. 4)",
    "normalised": "self-normalised: divided by Σ w",
    "projected": "probability weights: the closest (in RKHS norm) non-negative weights summing to 1",
}



# Generators whose distribution does not depend on the seed (the mixture and the blobs draw their
# centres from it): a fresh seed gives a fresh sample of the *same* population.
SEED_FREE = {"two_moons", "concentric_circles", "spiral", "uniform_box", "anisotropic_gaussian", "student_t_cloud"}


def header() -> None:
    """The page's title and what a third party can do with a release."""
    own = P.show_owner_details()        # the owner-view words (the private truth itself: P.OwnerOnly below)
    st.title("Third-party use of the release")
    st.markdown(
        "A third party receives only the weighted points (zₘ, wₘ). For any function h, the release estimates "
        "E[h(X)] ≈ Σₘ wₘ h(zₘ) — equation (4) of the paper — and since differential privacy survives "
        "post-processing, they can compute as many such estimates as they like at no further privacy cost. "
        + ("Below, each estimate is shown next to the **true private value** (which only you, the owner, can see)."
           if own else "Below are the estimates a third party computes (presentation mode hides the private truth).")
    )


def choose_release(ds):
    """The weighted-points release to use (the latest by default); stops the page when there is none."""
    recs = S.releases_for(ds, kind="points")
    if not recs:
        st.info("No weighted-points release of this dataset yet.")
        st.page_link(PAGE_RELEASE, label="Make a release first", icon=":material/rocket_launch:")
        st.stop()
    by_id = {r.id: r for r in recs}
    if ss.get(RELEASE) not in by_id:
        ss[RELEASE] = recs[-1].id
    sel = st.selectbox("Release", list(by_id)[::-1], format_func=lambda i: by_id[i].title, key=RELEASE)
    rec = by_id[sel]
    return rec


@st.cache_data(max_entries=16, show_spinner=False)
def _projected(release_key: str, kkey: str, _Z, _w) -> np.ndarray:
    from dpkme.kernels import kernel_from_dict
    from dpkme.release.subspace import project_weights

    return project_weights(_w, kernel_from_dict(json.loads(kkey)).gram(_Z), constraint="simplex")


def estimates(ds, rec) -> None:
    """The weights used, then means and covariances and a box probability (or a mixed table's counts and
    proportions) from the release, next to the private truth for the owner."""
    own = P.show_owner_details()        # the owner-view words (the private truth itself: P.OwnerOnly below)
    r = rec.release
    st.radio("Weights used for the estimates", list(WEIGHT_MODES), format_func=WEIGHT_MODES.get, index=1,
             key=WEIGHTS, horizontal=False,
             help="All three are post-processing of the release: a third party can compute them, at no privacy cost.")
    mode = ss.get(WEIGHTS, "normalised")


    def weights_for(m: str) -> np.ndarray:
        if m == "projected":
            return _projected(C.array_key(r.points) + C.array_key(r.weights), C.kernel_key(r.kernel), r.points,
                              r.weights)
        if m == "normalised" and abs(r.weights.sum()) > 1e-12:
            return r.weights / r.weights.sum()
        return r.weights


    normalise = mode != "raw"

    Z = ds.to_original_units(r.points)
    X = ds.to_original_units(ds.X)
    w = weights_for(mode)
    cols = [str(c) for c in ds.columns]
    st.caption(f"Σ w = {r.weights.sum():.4g} · Σ |w| = {r.weight_l1:.4g} · M = {r.n_points} points. "
               "Large Σ|w| (many cancelling positive and negative weights) makes estimates of non-smooth "
               "quantities (box probabilities) unreliable; probability weights fix that.")

    if ds.is_table:
        # a mixed table: counts, proportions, cross-tabulations and means by group, in the table's own terms
        with guard("compute the estimates from the released table"):
            TV.use_view(rec, ds, w)
    else:
        # ---------------------------------------------------------------------- means & covariances
        st.subheader("Means and covariances")
        shown = ds.dim          # every column (a table cut at 8 columns hid the 9th silently)
        mean_est = w @ Z
        mean_true = X.mean(axis=0)
        tab = pd.DataFrame({"column": cols, "estimate from release": mean_est, "true private mean": mean_true,
                            "error": mean_est - mean_true})
        if not P.OwnerOnly(tab, "The true private mean of each column").render(
                lambda t: st.dataframe(t.style.format(precision=4), hide_index=True)):
            st.dataframe(tab[["column", "estimate from release"]].style.format(precision=4), hide_index=True)
        with st.expander("Covariance matrix"):
            Zc = Z[:, :shown] - mean_est[:shown]
            cov_est = (Zc * w[:, None]).T @ Zc
            if not normalise:
                cov_est = cov_est / max(w.sum(), 1e-12)
            cov_true = np.cov(X[:, :shown], rowvar=False, ddof=0).reshape(shown, shown)
            c1, c2 = st.columns(2)
            c1.markdown("**Estimated from the release**: Σ wₘ (zₘ − m)(zₘ − m)ᵀ")
            c1.dataframe(pd.DataFrame(cov_est, index=cols[:shown], columns=cols[:shown]).style.format(precision=3))

            def _true_cov(cov_true) -> None:
                c2.markdown("**True (private)**")
                c2.dataframe(pd.DataFrame(cov_true, index=cols[:shown], columns=cols[:shown]).style.format(precision=3))
                rel = np.linalg.norm(cov_est - cov_true) / max(np.linalg.norm(cov_true), 1e-300)
                st.caption(f"Relative Frobenius error: {rel:.1%}.")

            P.OwnerOnly(cov_true, "The true (private) covariance").render(_true_cov)

        # ---------------------------------------------------------------------- box probabilities
        st.subheader("Probability of a box")
        st.markdown("Draw a box on the plot (box-select tool) or type its corners. The release estimates "
                    "P(X ∈ box) ≈ Σₘ wₘ 1[zₘ ∈ box]; with the indicator outside the RKHS this is an approximation "
                    "that improves with N and M.")
        dims = (0, 1) if ds.dim >= 2 else (0, 0)
        if ds.dim > 2:
            a, b = st.columns(2)
            dims = (a.selectbox("Horizontal axis", range(ds.dim), format_func=lambda j: cols[j], index=0, key=DX),
                    b.selectbox("Vertical axis", range(ds.dim), format_func=lambda j: cols[j], index=1, key=DY))
        # the default box: from the private rows' quantiles for the owner, from the released points' in presentation
        # mode (a box read off the private rows would show their quantiles); a change of mode starts a new box
        ref = X if own else Z
        lo_all, hi_all = np.quantile(ref[:, list(dims)], 0.02, axis=0), np.quantile(ref[:, list(dims)], 0.98, axis=0)
        box_keys = [BOX_X0, BOX_X1, BOX_Y0, BOX_Y1]
        box_id = (ds.key, dims, own)
        # (re)initialise for new data or axes, and whenever a corner is missing from the session (Streamlit drops the
        # state of widgets that were not drawn: before persist_state, returning to this page raised a KeyError)
        if ss.get(BOX_ID) != box_id or any(k not in ss for k in box_keys):
            mid, span = (lo_all + hi_all) / 2, (hi_all - lo_all) / 4
            for k, v in zip(box_keys, [mid[0] - span[0], mid[0] + span[0], mid[1] - span[1], mid[1] + span[1]]):
                ss[k] = float(v)
            ss[BOX_ID] = box_id


        def _take_selection():
            ev = ss.get(CHART)
            try:
                boxes = ev["selection"]["box"]
            except (KeyError, TypeError):
                return
            if boxes:
                bx = boxes[-1]
                xs, ys = sorted(bx["x"]), sorted(bx["y"])
                ss[BOX_X0], ss[BOX_X1] = float(xs[0]), float(xs[-1])
                ss[BOX_Y0], ss[BOX_Y1] = float(ys[0]), float(ys[-1])


        if ds.dim >= 2:
            fig = release_figure(P.owner_rows(X), Z, r.weights, columns=cols, dims=dims, title="Box-select a region",
                                 window=None if own else (Z[:, list(dims)].min(axis=0), Z[:, list(dims)].max(axis=0)))
            fig.add_shape(type="rect", x0=ss[BOX_X0], x1=ss[BOX_X1], y0=ss[BOX_Y0], y1=ss[BOX_Y1],
                          line=dict(color="orange", width=3))
            fig.update_layout(dragmode="select")
            plotly_chart(fig, key=CHART, on_select=_take_selection, selection_mode="box")
        b1, b2, b3, b4 = st.columns(4)
        x0 = b1.number_input(f"{cols[dims[0]]} from", key=BOX_X0, format="%.4g", persist_state="session")
        x1 = b2.number_input(f"{cols[dims[0]]} to", key=BOX_X1, format="%.4g", persist_state="session")
        if ds.dim >= 2:
            y0 = b3.number_input(f"{cols[dims[1]]} from", key=BOX_Y0, format="%.4g", persist_state="session")
            y1 = b4.number_input(f"{cols[dims[1]]} to", key=BOX_Y1, format="%.4g", persist_state="session")
        else:
            y0, y1 = -np.inf, np.inf
        if x1 <= x0 or y1 <= y0:
            st.error("Each 'to' must be larger than its 'from'. Swap the corners or draw the box again.")
        else:
            def inside(P):
                return ((P[:, dims[0]] >= x0) & (P[:, dims[0]] <= x1) & (P[:, dims[1]] >= y0) & (P[:, dims[1]] <= y1))

            p_est = float(w @ inside(Z))
            p_true = float(inside(X).mean())
            others = {m: float(weights_for(m) @ inside(Z)) for m in WEIGHT_MODES}
            p1, p2, p3, p4 = st.columns(4)
            p1.metric("Estimate from the release", f"{p_est:.3f}")

            def _true_share(p_true) -> None:
                p2.metric("True share of private rows", f"{p_true:.3f}")
                p3.metric("Error", f"{p_est - p_true:+.3f}")

            P.OwnerOnly(p_true, "The true share of private rows in the box").render(_true_share)
            if ds.n_public:
                pub = ds.to_original_units(ds.public)
                p4.metric("Publishable subset alone", f"{float(inside(pub).mean()):.3f}",
                          help="What the public rows alone would say (no private information).")
            st.caption("With the other weightings: " + ", ".join(f"{WEIGHT_MODES[m].split(':')[0]} {v:.3f}"
                                                                for m, v in others.items() if m != mode) + ".")
            if not 0.0 <= p_est <= 1.0:
                st.warning("The estimate is not a probability: the released weights cancel heavily. Use probability "
                           "weights (above) — a post-processing anyone can apply.")



@st.cache_data(max_entries=8, show_spinner=False)
def _fresh(gen_json: str, n: int) -> np.ndarray:
    g = json.loads(gen_json)
    params = dict(g["params"], n=n)
    return GENERATORS[g["name"]](**params, random_state=int(g["seed"]) + 1_000_003)


@st.cache_data(max_entries=16, show_spinner=False)
def _references(ds_key: str, kkey: str, src: str, _X, _Y) -> tuple[float, float]:
    """MMD(private, held-out) (owner only) and MMD between the held-out halves (sampling noise)."""
    from dpkme.kernels import kernel_from_dict

    kernel = kernel_from_dict(json.loads(kkey))
    half = _Y.shape[0] // 2
    ref = mmd(_Y[:half], _Y[half:], kernel=kernel) if half >= 2 else float("nan")
    return mmd(_X, _Y, kernel=kernel), ref


def mmd_section(ds, rec) -> None:
    """The MMD between the release and held-out (or fresh, or public) rows, with the sampling noise as yardstick
    (against protected rows: owner only); stops the page when there is nothing to compare with."""
    r = rec.release
    st.subheader("Two-sample comparison with held-out data (MMD)")
    st.markdown(
        "The maximum mean discrepancy MMD(P, Q) = ‖μ_P − μ_Q‖ measures how different two distributions look "
        "to the kernel. A third party can compare the release with their own data: a small MMD means 'same "
        "distribution', a large one reveals a difference.")
    sources = {}
    if ds.n_heldout >= 4:
        sources["heldout"] = f"Held-out rows ({ds.n_heldout:,}): a third party's own sample of the same population"
        sources["shifted"] = "The held-out rows shifted by one lengthscale (a different population)"
    if ds.generator is not None and ds.generator["name"] in SEED_FREE:
        sources["fresh"] = "A fresh sample from the same generator (new seed)"
    if ds.n_public >= 4:
        sources["public"] = "The publishable subset"
    if not sources:
        st.info("Held-out data needs held-out rows or a publishable subset (Data page).")
        st.stop()
    if ss.get(MMD_SRC) not in sources:
        ss[MMD_SRC] = next(iter(sources))
    src = st.radio("Compare the release with", list(sources), format_func=sources.get, key=MMD_SRC)


    with guard("compute the MMD"):
        kernel = r.kernel
        if src == "fresh":
            Y = _fresh(json.dumps(ds.generator, sort_keys=True), 2000)
            if ds.scaling is not None:
                Y = ds.scaling.apply(Y)
        elif src in ("heldout", "shifted"):
            Y = ds.heldout
            if src == "shifted":
                Y = Y + kernel.lengthscale / np.sqrt(ds.dim)
        else:
            Y = ds.public
        d_rel = mmd(r.points, Y, kernel=kernel, weights_x=r.weights)
        d_priv, d_ref = _references(ds.key, C.kernel_key(kernel), src, ds.X, Y)
        m1, m2, m3 = st.columns(3)

        def _against(vals: tuple[float, float]) -> None:
            rel_d, ref_d = vals
            m1.metric("MMD(release, held-out)", S.fmt(rel_d))
            m3.metric("Sampling noise: MMD between two halves of the held-out data", S.fmt(ref_d))
            if np.isfinite(ref_d):
                verdict = ("looks like the same distribution (MMD comparable to the sampling noise)"
                           if rel_d <= 2 * ref_d else "looks different (MMD well above the sampling noise)")
                st.caption(f"Reading: the release {verdict}. This is a descriptive comparison; a calibrated private "
                           "two-sample test would also account for the release's noise.")

        if src in ("heldout", "shifted"):   # the held-out rows are protected people too: their MMDs are the owner's
            P.OwnerOnly((d_rel, d_ref), "The MMDs against the held-out rows (protected people)").render(_against)
        else:                               # fresh generated rows or the publishable rows: public
            _against((d_rel, d_ref))
        P.OwnerOnly(d_priv, "The MMD between the private rows and the held-out rows").render(
            lambda d: m2.metric("MMD(private data, held-out) — owner only", S.fmt(d)))
