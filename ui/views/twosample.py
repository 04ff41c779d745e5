"""The Private two-sample test page's views (``pages/twosample.py``): test a release against held-out rows, one
test on two samples, and rejection curves on generated cases (simulations, nothing charged)."""

from __future__ import annotations

import io
import json
import math
import threading
import time
from contextlib import contextmanager
from types import SimpleNamespace

import pandas as pd
import streamlit as st

from dpkme.cost import estimate_cost, observe_cost
from dpkme.two_sample import lab, make_features, nonprivate_test, nte_test, release_test, tcmc_test
from dpkme.two_sample.charges import private_test_charges
from dpkme.two_sample.curves import chi2_reference, curve_series, curve_table, run_rejection_curve
from dpkme.two_sample.lab import CASES, LAB_METHODS, make_case
from ui import compute as C
from ui import gate as G
from ui import noise as N
from ui import presentation as P
from ui import state as S
from ui import widgets as W
from ui.charts import plotly_chart
from ui.figures import null_distribution_figure, rejection_curves_figure
from ui.numbers import cell
from ui.widgets import (
    PAGE_DATA,
    PAGE_KERNEL,
    PAGE_LEDGER,
    PAGE_RELEASE,
    guard,
    size_guard,
)

ss = st.session_state

# --------------------------------------------------------------------------- this page's session and widget keys
ALPHA = "tst.alpha"
C_ALPHA = "tst.c_alpha"
C_CASE = "tst.c_case"
C_DL = "tst.c_dl"
C_E = "tst.c_e"
C_EPS = "tst.c_eps"
C_GO = "tst.c_go"
C_METHODS = "tst.c_methods"
C_N = "tst.c_n"
C_NS = "tst.c_ns"
C_REPS = "tst.c_reps"
C_SEED = "tst.c_seed"
C_SIZE = "tst.c_size"
C_STOP = "tst.c_stop"
C_VARY = "tst.c_vary"
CASE = "tst.case"
CURVE_FIG = "tst.curve_fig"
CURVES = "tst.curves"
DATA_SEED = "tst.data_seed"
DESIGN = "tst.design"
GO = "tst.go"
MODE = "tst.mode"
N_KEY = "tst.n"
N_SYN = "tst.n_syn"
NOISE = "tst.noise"
NULL = "tst.null"
RELEASE = "tst.release"
RESULT = "tst.result"
SEED = "tst.seed"
SHIFT = "tst.shift"
SOURCE = "tst.source"
UP_PAIRED = "tst.up_paired"
UP_PUBLIC = "tst.up_public"
UPLOAD_X = "tst.upload_x"
UPLOAD_Y = "tst.upload_y"
FEATURES_KEY = "{prefix}.features"      # the feature controls of one test (prefix ONE) and of the curves (CURVE)
J_KEY = "{prefix}.J"
ONE = "tst"
CURVE = "tst.c"
CASE_DIM = "tst.d.{case}"             # the dimension of a generated case (one test)
CURVE_CASE_DIM = "tst.c_d.{case}"     # ... and of the curves' case
PARSED = "{upload}_parsed"            # an upload's parsed table (bytes never stored)


MODES = {
    "release": "Test my release",
    "one": "One test on two samples",
    "curves": "Type-I error and power curves",
}
FEATURES = {
    "scf": "SCF — smooth characteristic function (robust to the noise; default)",
    "me": "ME — mean embedding at test locations",
    "rff": "RFF — unit-norm random Fourier features (a whitened MMD)",
}
SOURCES = {
    "case": "a bundled case (generated pairs: SG, GMD, GVD)",
    "groups": "this dataset: private rows vs held-out rows",
    "upload": "two uploaded samples (CSV / Parquet)",
}
CASE_LABEL = {k: f"{k} — {c.label}" for k, c in CASES.items()}


def header() -> None:
    """The page's title and what the tests release."""
    st.title("Private two-sample test")
    st.markdown(
        "A two-sample test asks whether two samples come from the same distribution. Here the test itself is "
        "**differentially private** (Raj, Law, Sejdinovic & Park, ECML-PKDD 2019): the data holders release noisy "
        "feature means and second moments, and the test accounts for that noise in its null distribution — so the "
        "p-value stays honest. The features (Chwialkowski et al. 2015) are built from public rows only."
    )


def mode_choice() -> str:
    """What to do: test a release, one test, or curves."""
    ss.setdefault(MODE, "release")
    mode = st.radio("What to do", list(MODES), format_func=MODES.get, key=MODE, horizontal=True,
                    persist_state="session")
    return mode


# ---------------------------------------------------------------------- shared pieces
def feature_controls(prefix: str = ONE) -> tuple[str, int]:
    ss.setdefault(FEATURES_KEY.format(prefix=prefix), "scf")
    kind = st.radio("Features (public)", list(FEATURES), format_func=FEATURES.get, key=FEATURES_KEY.format(prefix=prefix),
                    persist_state="session")
    ss.setdefault(J_KEY.format(prefix=prefix), 5)
    label = {"scf": "Frequencies (2 features each)", "me": "Test locations J",
             "rff": "Frequencies (2 features each)"}[kind]
    J = int(st.number_input(label, min_value=1, max_value=20, step=1, key=J_KEY.format(prefix=prefix), persist_state="session"))
    return kind, J


def build_features(kind: str, J: int, public, *, seed: int, lengthscale: float | None = None):
    """A feature map from public rows only (locations, width or lengthscale)."""
    if kind == "scf":
        return make_features("scf", n_features=J, public_sample=public, random_state=seed)
    if kind == "me":
        return make_features("me", n_features=J, public_sample=public, lengthscale=lengthscale, random_state=seed)
    return make_features("rff", n_features=2 * J, public_sample=public, lengthscale=lengthscale, random_state=seed)


def test_run_charges(tc, label: str, parts_of=None) -> list:
    """The charges of a test (:func:`dpkme.two_sample.charges.private_test_charges`, computed before it reads a row) as the
    gate records them: per holder with its part (parallel composition) when ``parts_of`` maps holders to parts,
    else the union's charges (in the part ``parts_of["*"]`` if given)."""
    if parts_of and "*" not in parts_of and len(tc.holders) > 1:
        return [c.with_(label=f"{label}: {c.label}", parts=(parts_of[holder],))
                for holder, charges in tc.holders.items() for c in charges]
    part = parts_of.get("*") if parts_of else None
    return [c.with_(label=f"{label}: {c.label}", parts=(part,) if part else ()) for c in tc.union]


def show_result(stored: dict) -> None:
    res = stored["result"]
    for p in stored.get("problems") or []:
        st.error(f"This result is NOT differentially private: {p}.")
    if stored.get("seed") is not None:
        st.caption(f"Replay mode: privacy noise from seed {stored['seed']}, the null simulation from an independent "
                   "child stream of it.")
    a, b, c = st.columns(3)
    a.metric("Decision", "reject H₀" if res.reject else "keep H₀",
             help=f"H₀: both samples come from the same distribution; at α = {res.alpha:g}.")
    b.metric("p-value (private test)", f"{res.p_value:.3g}")
    c.metric("naive χ² p-value (wrong)", f"{res.naive_p_value:.3g}",
             help="The textbook χ²_J null ignores the privacy noise; on the paper's statistic it rejects far too "
                  "often (see the curves).")
    d, e, f = st.columns(3)
    d.metric("Private statistic", f"{res.statistic:.4g}")
    really_private = res.private and not stored.get("problems")
    e.metric("Privacy of the test", f"ε = {res.epsilon:.3g}" if really_private else "NOT private",
             help=f"δ = {S.fmt_delta(res.delta)}: the test's noisy moments together are (ε, δ)-DP." if really_private
             else "; ".join(stored.get("problems") or ["no privacy noise"]))
    ref = stored.get("reference")

    def _reference(ref) -> None:
        f.metric("Non-private p (owner only)", f"{ref.p_value:.3g}",
                 help="The same features without noise: reads the private rows, never publish it.")

    if ref is not None and stored.get("source") == "case":      # generated people: public planning, shown
        _reference(ref)
    elif ref is not None:               # the private (or held-out, or uploaded) rows without noise: owner-only
        P.OwnerOnly(ref, "The non-private reference test on the private samples").render(_reference)
    plotly_chart(null_distribution_figure(res, chi2_reference(res)), key=NULL)
    st.caption(res.null.description)
    for w in res.warnings:
        st.caption(f"Note: {w}")
    st.markdown(f"**Budget charged** to the ledger of *{stored['ledger_name']}*")
    st.dataframe(pd.DataFrame([{
        "charge": c.label, "ε": c.epsilon, "δ": S.fmt_delta(c.delta), "σ/Δ": cell(c.noise_multiplier, lambda v: f"{v:.4g}"),
        "part of the data": ", ".join(c.parts or ("everyone",)),
    } for c in stored["charges"]]), hide_index=True)
    led = ss.get(S.LEDGERS, {}).get(stored["ledger_key"])
    if led is not None and len(led):
        tot = S.composed(led.charges, S.budget()[1])
        parts = tot.get("parts")
        st.caption(
            f"That ledger now: {S.budget_headline(led)['text']} (this test alone: ε = {res.epsilon:.3g} at "
            f"δ = {S.fmt_delta(res.delta)})"
            + (" — worst part: " + str(tot["worst_part"]) + "; per part: "
               + ", ".join(f"{p}: ε = {v[0]:.3g}" for p, v in parts.items()) if parts else "") + ".")
    st.caption(stored.get("ledger_note", ""))
    st.page_link(PAGE_LEDGER, label="Budget ledger", icon=":material/account_balance_wallet:")
    with st.expander("Details (released quantities and noise)"):
        st.text(res.summary())
        st.json({k: v for k, v in res.noise.items() if not isinstance(v, (list, dict))} if res.noise else {})


def privacy_line() -> None:
    """ε and δ of a test (those of the Kernel & privacy page), with a link to change them."""
    eps, delta = S.epsilon(), S.delta()
    st.caption(f"Privacy: ε = {eps:g}, δ = {S.fmt_delta(delta)} for the whole test (Kernel & privacy page).")
    st.page_link(PAGE_KERNEL, label="Change ε and δ", icon=":material/tune:")


def noise_line() -> tuple[str, int | None]:
    """The test's noise source (a real, unseeded test by default) and, in replay mode, the requested seed."""
    return N.noise_controls(NOISE, SEED, what="tests")


def test_streams(source: str, seed: int | None, what: str) -> dict:
    """Independent randomness for one test: the privacy noise, the null simulation and the resampling.

    Real tests: fresh OS entropy for each (no seed). Replay mode: a seed claimed for this session (never
    shared with another release or test) for the noise, and a child stream of it for the null simulation."""
    if source != N.REPLAY:
        return {"random_state": None, "null_random_state": None, "resample_random_state": None, "seed": None}
    s = N.claim_seed(0 if seed is None else seed, what)
    return {"random_state": s, "null_random_state": N.null_seed(s),
            "resample_random_state": N.null_seed(N.null_seed(s)), "seed": s}


def read_upload(label: str, key: str):
    """An uploaded table parsed in memory (bytes never stored), as (name, DataFrame, content hash) or None."""
    from dpkme.io import load_table

    up = st.file_uploader(label, type=["csv", "tsv", "txt", "parquet", "pq"], key=key)
    state_key = PARSED.format(upload=key)
    if up is None:
        ss.pop(state_key, None)
        return None
    state = ss.get(state_key)
    if state is None or state["file_id"] != up.file_id:
        ss.pop(state_key, None)
        with guard(f"read {up.name!r}"):
            data = up.getvalue()
            df = load_table(data, filename=up.name)
            ss[state_key] = {"file_id": up.file_id, "name": up.name, "df": df,
                             "hash": S.upload_file_hash(data)}
            del data
    state = ss.get(state_key)
    return None if state is None else (state["name"], state["df"], state["hash"])



def release_mode(ds) -> None:
    """Test my release: its resampled rows against the held-out rows (charged to their part); stops the page."""
    mode = "release"
    eps, delta = S.epsilon(), S.delta()
    st.markdown(
        "**Is a release distinguishable from real rows?** The weighted points of a release are resampled into "
        "unweighted rows (post-processing, free) and tested against the **held-out** rows, which were never used "
        "by the release. Only the held-out side is private: its noisy moments are released and charged to the "
        "held-out rows' part of the ledger (they are other people than the private rows, so it does not add to "
        "what the releases spent — parallel composition).")
    if ds.n_heldout < 10:
        st.warning("This test needs held-out rows: set a held-out fraction > 0 on the Data page.")
        st.page_link(PAGE_DATA, label="Data", icon=":material/table_view:")
        st.stop()
    recs = S.releases_for(ds, kind="points")
    if not recs:
        st.info("No weighted-points release of this dataset yet.")
        st.page_link(PAGE_RELEASE, label="Make a release first", icon=":material/rocket_launch:")
        st.stop()
    by_id = {r.id: r for r in recs}
    if ss.get(RELEASE) not in by_id:
        ss[RELEASE] = recs[-1].id
    sel = st.selectbox("Release to test", list(by_id)[::-1], format_func=lambda i: by_id[i].title,
                       key=RELEASE)            # full width: release titles are long (issue 16, finding 7)
    rec = by_id[sel]
    left, right = st.columns([1, 2], gap="large")
    with left:
        ss.setdefault(N_SYN, int(ds.n_heldout))
        n_syn = int(st.number_input("Rows resampled from the release", min_value=10, max_value=100_000, step=100,
                                    key=N_SYN, persist_state="session"))
        st.caption("Resampled from the weights — or from the closest probability weights if some are negative "
                   "(post-processing, free).")
        kind, J = feature_controls()
        ss.setdefault(ALPHA, 0.05)
        alpha = float(st.select_slider("Significance level α", options=[0.01, 0.05, 0.1], key=ALPHA,
                                       persist_state="session"))
        privacy_line()
        noise, seed = noise_line()
        problems = G.taint_reasons(noise_source=noise, ds=ds, uses_kernel=kind in ("me", "rff"))
        for p in problems:
            st.error(f"This test would NOT be differentially private: {p}.")
        if ds.n_public < 2:
            st.caption("Features: built from the release's own points (public: a post-processing of the release), "
                       "since this data has no publishable subset.")
        G.over_budget_checkbox("twosample")
        go_btn = st.button("Run the test", type="primary", key=GO, width="stretch")
    cfg = json.dumps({"mode": mode, "ds": ds.key, "rel": sel, "n": n_syn, "f": [kind, J], "a": alpha,
                      "noise": noise, "s": seed, "eps": eps, "delta": delta})
    if go_btn:
        with guard("run the test") as res:
            if not eps > 0:
                raise ValueError("ε must be positive (Kernel & privacy page).")
            kernel = C.current_kernel()
            r = rec.release
            w = r.weights
            if (w < 0).any():
                from dpkme.release.subspace import project_weights

                w = project_weights(w, r.kernel.gram(r.points), constraint="simplex")
            streams = test_streams(noise, seed, f"two-sample test of release #{rec.id}")
            public = ds.public if ds.n_public >= 2 else r.points[w > 0]
            feats = build_features(kind, J, public, seed=streams["seed"], lengthscale=kernel.lengthscale)
            tc = private_test_charges("release", n_x=n_syn, n_y=ds.n_heldout, features=feats, epsilon=eps, delta=delta)
            run = G.run_private(
                page="twosample", ds=ds, noise_source=noise, uses_kernel=kind in ("me", "rff"), parts=None,
                charges=lambda rows: test_run_charges(tc, f"#{rec.id} vs held-out", {"*": S.PART_HELDOUT}),
                compute=lambda inputs: release_test(
                    (r.points, w), ds.heldout, features=feats, epsilon=eps, delta=delta, alpha=alpha,
                    n_synthetic=n_syn, random_state=streams["random_state"],
                    null_random_state=streams["null_random_state"],
                    resample_random_state=streams["resample_random_state"]))
            result, problems, added = run.result, list(run.reasons), list(run.charges)
            if problems:          # not private: never charged as a private test, counted as a non-private result
                note = "NOT private (" + "; ".join(problems) + "): not charged to the ledger as a private test."
            else:
                note = ("Charged to the held-out rows only: the release read the private rows, a disjoint part of "
                        "the same people.") + (f" {run.note}" if run.note else "")
            ss[RESULT] = {"key": cfg, "mode": mode, "result": result, "reference": None, "charges": added,
                                "ledger_key": ds.data_key, "ledger_name": ds.name, "ledger_note": note,
                                "problems": problems, "seed": streams["seed"]}
            N.advance(SEED, streams["seed"])
        if res.ok:
            st.rerun()
    stored = ss.get(RESULT)
    with right:
        if not stored or stored["mode"] != mode or json.loads(stored["key"])["ds"] != ds.key:
            st.info("Press **Run the test**. It spends privacy budget of the held-out rows (see the ledger).")
            st.stop()
        if stored["key"] != cfg:
            st.warning("The result below was computed with other settings; press **Run the test** to update.")
        show_result(stored)
    st.stop()


def one_mode(ds) -> None:
    """One private test on two samples (a generated case, the data's split, or two uploads); stops the page."""
    mode = "one"
    eps, delta = S.epsilon(), S.delta()
    left, right = st.columns([1, 2], gap="large")
    with left:
        ss.setdefault(SOURCE, "case")
        source = st.radio("Samples", list(SOURCES), format_func=SOURCES.get, key=SOURCE,
                          persist_state="session")
        if source == "case":
            ss.setdefault(CASE, "GMD")
            case = st.selectbox("Case", list(CASES), format_func=CASE_LABEL.get, key=CASE,
                                persist_state="session")
            st.caption(CASES[case].description + ("" if CASES[case].h0_true else " — H₀ is false."))
            ss.setdefault(N_KEY, 5000)
            n = int(st.number_input("Pairs n", min_value=100, max_value=20_000, step=500, key=N_KEY,
                                    persist_state="session"))
            ss.setdefault(CASE_DIM.format(case=case), CASES[case].default_dim)
            dim = int(st.select_slider("Dimension d", options=[10, 50, 100], key=CASE_DIM.format(case=case),
                                       persist_state="session"))
            ss.setdefault(DESIGN, "tcmc")
            design = st.radio("Who adds the noise", ["tcmc", "nte"], key=DESIGN, persist_state="session",
                              format_func={"tcmc": "a trusted curator holding both samples (paired, one pair = "
                                                   "one person)",
                                           "nte": "each holder on its own sample (no trusted entity)"}.get)
            st.caption("500 more rows of each distribution are generated as the public sample the features are "
                       "built from.")
            ss.setdefault(DATA_SEED, 0)
            st.number_input("Seed of the generated samples (public: which simulated people)", min_value=0,
                            max_value=2**31 - 1, step=1, key=DATA_SEED, persist_state="session")
        elif source == "groups":
            if ds.n_heldout < 10 or ds.n_public < 2:
                st.warning("Needs held-out rows and a publishable subset: set both fractions > 0 on the Data page.")
                st.page_link(PAGE_DATA, label="Data", icon=":material/table_view:")
                st.stop()
            ss.setdefault(SHIFT, 0.0)
            st.number_input("Shift the held-out rows by (× lengthscale, to simulate a real difference)",
                            min_value=0.0, max_value=5.0, step=0.25, key=SHIFT, persist_state="session")
            st.caption("Each holder privatises its own moments (no trusted entity). The private rows and the "
                       "held-out rows are different people: each pays its own charges once (parallel composition).")
            design = "nte"
        else:
            st.caption("Two tables with the same numeric columns, read in memory and never stored.")
            ss.setdefault(DATA_SEED, 0)
            st.number_input("Seed of the publishable split (public)", min_value=0, max_value=2**31 - 1, step=1,
                            key=DATA_SEED, persist_state="session")
            upx = read_upload("Sample X", UPLOAD_X)
            upy = read_upload("Sample Y", UPLOAD_Y)
            ss.setdefault(UP_PUBLIC, 0.1)
            st.slider("Publishable fraction (rows used in the clear for the features)", min_value=0.02,
                      max_value=0.5, step=0.02, key=UP_PUBLIC, persist_state="session")
            paired_possible = upx is not None and upy is not None and len(upx[1]) == len(upy[1])
            ss.setdefault(UP_PAIRED, False)
            paired = st.checkbox("Paired: row i of X and row i of Y belong to the same person",
                                 key=UP_PAIRED, persist_state="session", disabled=not paired_possible)
            design = "tcmc" if paired and paired_possible else "nte"
            if upx is not None and upy is not None:
                with guard("choose the publishable split"):
                    lseed, lfrac, locked = S.upload_split((upx[2], upy[2]), seed=int(ss[DATA_SEED]),
                                                          fraction=float(ss[UP_PUBLIC]))
                    if locked:
                        st.caption(f":material/lock: Publishable split fixed at seed {lseed}, fraction {lfrac:g}: "
                                   "these people were already tested privately under it (another split would make "
                                   "rows they were tested on public). The seed and fraction above do not apply.")
        kind, J = feature_controls()
        ss.setdefault(ALPHA, 0.05)
        alpha = float(st.select_slider("Significance level α", options=[0.01, 0.05, 0.1], key=ALPHA,
                                       persist_state="session"))
        privacy_line()
        noise, seed = noise_line()
        problems = G.taint_reasons(noise_source=noise, ds=ds, uses_kernel=source == "groups" and kind in ("me", "rff"))
        for p in problems:
            st.error(f"This test would NOT be differentially private: {p}.")
        G.over_budget_checkbox("twosample")
        go_btn = st.button("Run the test", type="primary", key=GO, width="stretch")
    data_seed = int(ss.get(DATA_SEED, 0))
    src_cfg = ({"case": case, "n": n, "d": dim, "data_seed": data_seed} if source == "case" else
               {"shift": ss.get(SHIFT), "ds": ds.key} if source == "groups" else
               {"x": upx and upx[2], "y": upy and upy[2], "pub": ss.get(UP_PUBLIC)})
    cfg = json.dumps({"mode": mode, "source": source, **src_cfg, "design": design, "f": [kind, J], "a": alpha,
                      "noise": noise, "s": seed, "eps": eps, "delta": delta}, default=str)
    if go_btn:
        with guard("run the test") as res:
            if not eps > 0:
                raise ValueError("ε must be positive (Kernel & privacy page).")
            streams = test_streams(noise, seed, f"two-sample test ({source})")
            common = dict(epsilon=eps, delta=delta, alpha=alpha, random_state=streams["random_state"],
                          null_random_state=streams["null_random_state"])
            by_part = None
            if source == "case":
                # generated people: their samples (and the public sample for the features) come from the public
                # data seed; the test's privacy noise and null simulation have their own streams
                data = make_case(case, n, dim=dim, n_public=500, random_state=data_seed)
                X, Y, public = data.X, data.Y, data.public
                feats = build_features(kind, J, public, seed=data_seed)
                lkey = f"two-sample lab:{case}:{n}:{dim}:{data_seed}"
                lname = f"two-sample lab: {case} (n = {n:,}, d = {dim}, data seed {data_seed})"
                label = f"lab {case}"
                parts = {"X": "sample X", "Y": "sample Y"} if design == "nte" else None
                note = ("Generated people, so a ledger of their own. " + (
                    "Each holder pays once: the X and Y samples are different people (parallel composition)."
                    if design == "nte" else "The curator's mean and second moment compose to exactly (ε, δ)."))
            elif source == "groups":
                kernel = C.current_kernel()
                feats = build_features(kind, J, ds.public, seed=streams["seed"], lengthscale=kernel.lengthscale)
                shift = float(ss.get(SHIFT, 0.0)) * kernel.lengthscale / math.sqrt(ds.dim)
                X, Y = ds.X, ds.heldout + shift
                lkey, lname = ds.data_key, ds.name
                label = f"private vs held-out (shift {ss.get(SHIFT, 0.0):g})"
                parts = {"X": S.PART_PRIVATE, "Y": S.PART_HELDOUT}
                note = ("The private rows pay holder X's charges and the held-out rows holder Y's: disjoint parts of "
                        "the same dataset, composed in parallel by the ledger (each part with its own earlier "
                        "charges).")
            else:
                from dpkme.io import numeric_columns, numeric_matrix

                if upx is None or upy is None:
                    raise ValueError("upload both samples first.")
                cols = [c for c in numeric_columns(upx[1]) if c in set(numeric_columns(upy[1]))]
                if not cols:
                    raise ValueError("the two tables have no numeric column in common.")
                Xu, Yu = numeric_matrix(upx[1], cols), numeric_matrix(upy[1], cols)
                split_seed, split_fraction, _ = S.upload_split((upx[2], upy[2]), seed=data_seed,
                                                               fraction=float(ss[UP_PUBLIC]))
                X, Y, public, info = lab.split_public(Xu, Yu, public_fraction=split_fraction, random_state=split_seed)
                feats = build_features(kind, J, public, seed=split_seed)
                # each uploaded sample's people have a ledger of their own (keyed by the file's content, whatever
                # its role or partner): NTE charges each holder's sample, a paired TCMC charges both
                part_x, part_y = f"upload {upx[2]}", f"upload {upy[2]}"
                by_part = {part_x: (S.upload_ledger_key(upx[2]), f"upload '{upx[0]}'"),
                           part_y: (S.upload_ledger_key(upy[2]), f"upload '{upy[0]}'")}
                lkey, lname = by_part[part_x]
                label = "uploads"
                parts = {"X": part_x, "Y": part_y} if design == "nte" else None
                note = (f"Columns: {', '.join(map(str, cols))}. Publishable rows (used for the features, not in the "
                        f"test): {info['n_public'][0]:,} + {info['n_public'][1]:,}; tested: {info['n_test'][0]:,} + "
                        f"{info['n_test'][1]:,}.")
            tc = (private_test_charges("tcmc", n_x=len(X), features=feats, epsilon=eps, delta=delta) if design == "tcmc" else
                  private_test_charges("nte", n_x=len(X), n_y=len(Y), features=feats, epsilon=eps, delta=delta))

            def _test(inputs, X=X, Y=Y, feats=feats):
                if design == "tcmc":
                    return (tcmc_test(X, Y, features=feats, **common),
                            nonprivate_test(X, Y, features=feats, alpha=alpha,
                                            null_random_state=streams["null_random_state"]))
                return (nte_test(X, Y, features=feats, **common),
                        nonprivate_test(X, Y, features=feats, design="two-sample", alpha=alpha,
                                        null_random_state=streams["null_random_state"]))

            def _charges(rows):
                if by_part:          # the files' people are charged now: their publishable split is fixed for good
                    S.lock_upload_split((upx[2], upy[2]), seed=split_seed, fraction=split_fraction)
                return test_run_charges(tc, label, parts)

            run = G.run_private(page="twosample", ds=ds, noise_source=noise,
                                uses_kernel=source == "groups" and kind in ("me", "rff"), parts=None,
                                ledger_key=None if by_part else lkey, ledger_name=None if by_part else lname,
                                ledgers_by_part=by_part,
                                charges=_charges, compute=_test)
            (result, reference), problems, added = run.result, list(run.reasons), list(run.charges)
            if problems:
                note = "NOT private (" + "; ".join(problems) + "): not charged to the ledger as a private test."
            elif run.note:
                note = (note + " " if note else "") + run.note
            ss[RESULT] = {"key": cfg, "mode": mode, "result": result, "reference": reference, "charges": added,
                                "ledger_key": lkey, "ledger_name": lname, "ledger_note": note,
                                "problems": problems, "seed": streams["seed"], "source": source}
            N.advance(SEED, streams["seed"])
        if res.ok:
            st.rerun()
    stored = ss.get(RESULT)
    with right:
        if not stored or stored["mode"] != mode:
            st.info("Press **Run the test**. It spends privacy budget (see the ledger).")
            st.stop()
        if stored["key"] != cfg:
            st.warning("The result below was computed with other settings; press **Run the test** to update.")
        show_result(stored)
    st.stop()



def curves_intro() -> None:
    """What the rejection curves show (simulations on generated data: nothing released or charged)."""
    st.markdown(
        "How often does each test reject at level α? Under H₀ (case **SG**) that is the **type-I error**, which a "
        "valid test keeps near α; under a real difference (**GMD**, **GVD**) it is the **power**. Every repetition "
        "draws fresh samples and a fresh public sample for the features. For contrast: the **non-private** test, and "
        "the **naive χ²_J null** applied to a private statistic — it ignores the privacy noise and inflates the type-I "
        "error (the paper's statistic with the textbook null). These runs are simulations on generated data: nothing "
        "is released or charged.")



@contextmanager
def _set_when_done(event: threading.Event):
    try:
        yield
    finally:
        event.set()


def curve_settings() -> SimpleNamespace:
    """The left column: the case, the values along ε or n, the tests and the Compute button."""
    delta = S.delta()
    left, right = st.columns([1, 2], gap="large")
    with left:
        ss.setdefault(C_CASE, "SG")
        case = st.selectbox("Case", list(CASES), format_func=CASE_LABEL.get, key=C_CASE, persist_state="session")
        ss.setdefault(C_VARY, "epsilon")
        vary = st.radio("Along", ["epsilon", "n"], key=C_VARY, horizontal=True, persist_state="session",
                        format_func={"epsilon": "ε (fixed n)", "n": "n (fixed ε)"}.get)
        if vary == "epsilon":
            ss.setdefault(C_EPS, [0.5, 1.0, 2.5, 5.0])
            values = st.multiselect("ε values", [0.1, 0.25, 0.5, 1.0, 2.5, 5.0, 10.0], key=C_EPS,
                                    persist_state="session")
            ss.setdefault(C_N, 2000)
            n_fixed = int(st.select_slider("n (pairs)", options=[500, 1000, 2000, 5000, 10000], key=C_N,
                                           persist_state="session"))
            eps_fixed = 1.0
        else:
            ss.setdefault(C_NS, [500, 1000, 2000, 5000])
            values = st.multiselect("n values", [250, 500, 1000, 2000, 5000, 10000], key=C_NS,
                                    persist_state="session")
            ss.setdefault(C_E, 1.0)
            eps_fixed = float(st.select_slider("ε", options=[0.1, 0.25, 0.5, 1.0, 2.5, 5.0, 10.0], key=C_E,
                                               persist_state="session"))
            n_fixed = 2000
        values = sorted(values)
        ss.setdefault(CURVE_CASE_DIM.format(case=case), CASES[case].default_dim)
        dim = int(st.select_slider("Dimension d", options=[10, 50, 100], key=CURVE_CASE_DIM.format(case=case), persist_state="session"))
        ss.setdefault(C_METHODS, ["nonprivate", "tcmc", "paper-naive"])
        methods = st.multiselect("Tests", list(LAB_METHODS), key=C_METHODS, persist_state="session")
        st.caption(" · ".join(f"**{m}**: {LAB_METHODS[m]}" for m in methods))
        kind, J = feature_controls(CURVE)
        ss.setdefault(C_REPS, 100)
        reps = int(st.number_input("Repetitions per value", min_value=10, max_value=1000, step=50, key=C_REPS,
                                   persist_state="session", help="200 gives ±3 percentage points at α = 0.05."))
        ss.setdefault(C_ALPHA, 0.05)
        alpha = float(st.select_slider("Significance level α", options=[0.01, 0.05, 0.1], key=C_ALPHA,
                                       persist_state="session"))
        ss.setdefault(C_SEED, 0)
        seed = int(st.number_input("Seed", min_value=0, max_value=2**31 - 1, step=1, key=C_SEED,
                                   persist_state="session"))
        st.caption(f"δ = {S.fmt_delta(delta)} (Kernel & privacy page). "
                   f"{reps * max(len(values), 1):,} repetitions per test here (the predicted time is below). Changing an input or pressing **Stop** during a run "
                   "keeps what is done so far.")
        curve_est = None
        with guard("estimate the cost of the curves"):
            n_big = max(values) if (vary == "n" and values) else n_fixed
            n_tests = reps * max(len(values), 1) * max(len(methods), 1)
            curve_est = estimate_cost("two-sample", n=int(n_big), n_features=int(J), dim=dim).repeated(n_tests)
        curve_ok = size_guard(curve_est, key=C_SIZE, what=f"{n_tests:,} tests", stoppable=True)
        run = st.button("Compute the curves", type="primary", key=C_GO, width="stretch", disabled=not curve_ok)
    cfg = json.dumps({"case": case, "vary": vary, "values": values, "n": n_fixed, "eps": eps_fixed, "d": dim,
                      "methods": methods, "f": [kind, J], "reps": reps, "a": alpha, "s": seed, "delta": delta})
    return SimpleNamespace(curve_est=curve_est, left=left, right=right, case=case, vary=vary, values=values,
                           n_fixed=n_fixed,
                           eps_fixed=eps_fixed, dim=dim, methods=methods, kind=kind, J=J, reps=reps, alpha=alpha,
                           seed=seed, delta=delta, cfg=cfg, run=run, curve_ok=curve_ok)


def curve_run(s: SimpleNamespace):
    """On the button: the rejection curves, kept in the session as they grow (a Stop keeps what is done); the stop
    signal of a run stopped during this script run (re-raised by :func:`curve_results`), or None."""
    # A plain dict put in the session state by an earlier, completed run and filled by mutation: the (partial)
    # result of a stopped run survives (Streamlit refuses session-state writes once a stop is requested).
    box = ss.setdefault(CURVES, {})
    right, case, vary, values, n_fixed, eps_fixed, dim = s.right, s.case, s.vary, s.values, s.n_fixed, s.eps_fixed, s.dim
    methods, kind, J, reps, alpha, seed, delta, cfg = s.methods, s.kind, s.J, s.reps, s.alpha, s.seed, s.delta, s.cfg
    run, curve_ok = s.run, s.curve_ok
    stop_signal = None                          # a Stop (or an input change) during the curves: re-raised at the end
    if run and curve_ok:
        with right:
            bar = st.progress(0.0, text="starting")
            stop_slot = st.empty()
            stop_slot.button("Stop", key=C_STOP, icon=":material/stop_circle:")
        prog = W.StoppableProgress(bar)
        finished = box["running"] = threading.Event()
        with guard("compute the curves"), _set_when_done(finished):
            def cb(done, total, info):
                v = info["value"]
                return prog.update(done / total, f"{'ε' if vary == 'epsilon' else 'n'} = {v:g}: repetition "
                                                  f"{info['repetition'] + 1} of {reps} ({done}/{total})")

            t_run = time.perf_counter()
            curve = run_rejection_curve(case, vary=vary, values=values, methods=methods, n=n_fixed, epsilon=eps_fixed,
                                        delta=delta, repetitions=reps, alpha=alpha, dim=dim, feature_kind=kind,
                                        n_features=J, random_state=seed, progress=cb)
            box["latest"] = {"key": cfg, "curve": curve}
            if curve.completed and s.curve_est is not None:      # a finished run corrects the next prediction
                observe_cost(s.curve_est, time.perf_counter() - t_run)
        # Stopped: draw the stopped run's partial curves in this run at once, then let the requested rerun happen at
        # the end of the page (it draws the same stored curves) instead of depending on that rerun to show them.
        stop_signal, prog.interrupted = prog.interrupted, None
        bar.empty()
        stop_slot.empty()
    return stop_signal


def curve_results(s: SimpleNamespace, stop_signal) -> None:
    """The stored curves (waiting for a stopped run to store its part), their table and CSV; then re-raises a Stop
    of this script run."""
    box = ss.setdefault(CURVES, {})
    right, cfg = s.right, s.cfg
    # With fast reruns, an input change or Stop starts the next run at once while the interrupted one is still
    # finishing its current repetition (it stops at its next progress report): wait for it to store its result,
    # however long that repetition takes, so that no stopped run writes into the session after this run has drawn
    # the page.
    running = box.get("running")
    if running is not None and not running.is_set():
        with right, st.spinner("Stopping the curves at the end of the current repetition; keeping what is done…"):
            running.wait(timeout=900)
    stored = box.get("latest")
    with right:
        if not stored:
            if stop_signal is not None:
                raise stop_signal
            st.info("Press **Compute the curves**: the predicted time is shown above the button (measured on this "
                    "machine); a progress bar shows the repetitions.")
            st.stop()
        if stored["key"] != cfg:
            st.warning("The curves below were computed with other settings; press **Compute the curves** to update.")
        curve = stored["curve"]
        if not curve.completed:
            st.warning(f"Stopped early: {sum(curve.repetitions):,} of "
                       f"{curve.params['repetitions_requested'] * len(curve.values):,} repetitions done. The rates "
                       "below use what was completed (values with no repetition are left out).")
        series = curve_series(curve)
        h0 = series["h0_true"]
        what = "type-I error (H₀ true)" if h0 else "power (H₀ false)"
        fig = rejection_curves_figure(series, methods=curve.methods, alpha=curve.alpha,
                                      title=f"{CASE_LABEL[curve.case]}: {what}, "
                                            f"{curve.params['repetitions_requested']} repetitions per value",
                                      xlabel="ε (log scale)" if curve.vary == "epsilon" else "n (log scale)")
        plotly_chart(fig, key=CURVE_FIG)
        st.caption("Error bars: 95 % Clopper–Pearson intervals. "
                   + ("Grey band: where an exact level-α test's rate falls 95 % of the time with this many repetitions — "
                      "a valid test stays in it; the naive χ² null on the paper's statistic does not." if h0 else
                      "A private test pays for privacy with power; the non-private test is the ceiling."))
        table = pd.DataFrame(curve_table(curve))
        with st.expander("Table"):
            st.dataframe(table, hide_index=True)
        buf = io.StringIO()
        table.to_csv(buf, index=False)
        st.download_button("Download the rates (CSV)", data=buf.getvalue().encode(), file_name="dpkme_two_sample_rates.csv",
                           mime="text/csv", key=C_DL, on_click="ignore", icon=":material/download:")
    if stop_signal is not None:                 # the rerun the Stop (or an input change) asked for
        raise stop_signal
