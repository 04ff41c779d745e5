"""Time the work behind each app page's default interaction; write ``benchmarks/results/app.md``.

Two tables:

1. **Library calls** — the ``dpkme`` calls a page makes at the default sizes (paper mixture, N = 5 000
   generated, 5 % publishable, 10 % held out, Gaussian kernel ℓ = 100, ε = 1, δ = 1e-6, M = 200, 60 × 60
   heat-map grid), each timed cold (no Streamlit cache), median of ``--repeats`` runs.
2. **Headless page runs** — ``streamlit.testing.v1.AppTest``: the script time of the default interaction of
   every page (the Streamlit cache warm, as after the first visit), median of ``--repeats`` runs. Browser
   rendering is not included.
3. **Page opening in a real browser** (``--browser``): a live ``streamlit run app.py`` and Debian's chromium
   (Playwright). *Fresh*: a new browser session opens the page's URL; *warm*: the same session comes back to the
   page from another one through the sidebar. Timed from the navigation to the end of the page's script run,
   counted from the app's own websocket messages (the tracker of ``tests/conftest.py``) — what a person waits for.
   The server's very first request (imports of the whole stack in a new process) is reported on its own line.

Usage::

    .venv/bin/python benchmarks/bench_app.py [--repeats 5] [--no-pages] [--browser] [--browser-only]

Targets: every page's default interaction < 2 s; in the browser, every page opens in ≤ 1.5 s warm and ≤ 3 s
in a fresh session.
"""

from __future__ import annotations

import argparse
import math
import os
import platform
import statistics
import sys
import time
from pathlib import Path

import numpy as np

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO))

from dpkme.curves import paper_m_grid, subspace_curves  # noqa: E402
from dpkme.datasets import paper_mixture  # noqa: E402
from dpkme.io import nonprivate_summary  # noqa: E402
from dpkme.metrics import mmd, rkhs_distance  # noqa: E402
from dpkme.preprocessing import public_private_split  # noqa: E402
from dpkme.privacy.accounting import BudgetLedger, gaussian_charge  # noqa: E402
from dpkme.privacy.calibration import analytic_sigma, calibrate_gaussian, classic_sigma  # noqa: E402
from dpkme.privacy.sensitivity import kme_sensitivity  # noqa: E402
from dpkme.release.subspace import SubspaceBasis, algorithm1, project_weights, uniform_baseline  # noqa: E402
from dpkme.reproduce import paper_kernel  # noqa: E402

TARGET = 2.0


def default_data(n=5000):
    X_all = paper_mixture(n, 2, random_state=0, return_labels=False)
    public, rest, _ = public_private_split(X_all, public_fraction=0.05, random_state=0)
    X, held, _ = public_private_split(rest, public_fraction=0.9, random_state=1)
    return X, public, held


def grid(X, size=60):
    lo, hi = np.quantile(X, 0.005, axis=0), np.quantile(X, 0.995, axis=0)
    pad = 0.12 * (hi - lo)
    xs, ys = np.linspace(lo[0] - pad[0], hi[0] + pad[0], size), np.linspace(lo[1] - pad[1], hi[1] + pad[1], size)
    return np.stack(np.meshgrid(xs, ys), axis=-1).reshape(-1, 2)


# --------------------------------------------------------------------------- page workloads (library only)
def home():
    """Template figure (illustration) + the one-click paper example with its evaluation."""
    X = paper_mixture(3000, 2, random_state=1)
    k = paper_kernel(2)
    rel = algorithm1(X[120:], X[:120], kernel=k, epsilon=1.0, delta=1e-6, points_are_sample=True, random_state=0,
                     weights="simplex")
    G = grid(X, 50)
    k.row_means(G, X[120:])
    rel.evaluate(G)
    Xb, pub, _ = default_data(10000)
    r = algorithm1(Xb, pub[:200], kernel=k, epsilon=1.0, delta=1e-6, points_are_sample=True, random_state=0)
    kxx = k.mean_gram(Xb)
    rkhs_distance(Xb, r.points, r.weights, kernel=k, mean_kxx=kxx)
    b = uniform_baseline(pub[:200], kernel=k)
    rkhs_distance(Xb, b.points, b.weights, kernel=k, mean_kxx=kxx)


def data_page():
    X, _pub, _held = default_data()
    nonprivate_summary(X)


def kernel_page():
    X, pub, _ = default_data()
    k = paper_kernel(2)
    sens = kme_sensitivity(n=len(X), kernel=k)
    calibrate_gaussian(epsilon=1.0, delta=1e-6, sensitivity=sens)
    SubspaceBasis.fit(pub[:200], kernel=k)
    k.mean_gram(pub)
    for e in np.geomspace(0.01, 10, 40):
        analytic_sigma(epsilon=e, delta=1e-6, sensitivity=sens)
        classic_sigma(epsilon=e, delta=1e-6, sensitivity=sens)


def release_alg1():
    X, pub, _ = default_data()
    k = paper_kernel(2)
    Z = pub[:200]
    B = SubspaceBasis.fit(Z, kernel=k)
    r = algorithm1(X, Z, kernel=k, epsilon=1.0, delta=1e-6, points_are_sample=True, random_state=0, basis_cache=B)
    kxx = k.mean_gram(X)
    kbar = k.row_means(Z, X)
    rkhs_distance(X, r.points, r.weights, kernel=k, mean_kxx=kxx, row_means=kbar)
    alpha = B.coordinates(kbar)
    math.sqrt(max(kxx - alpha @ alpha, 0))
    rkhs_distance(X, Z, np.full(200, 1 / 200), kernel=k, mean_kxx=kxx, row_means=kbar)
    G = grid(X)
    k.row_means(G, X)
    r.evaluate(G)


def release_alg2(m=200):
    from dpkme.release.random_features import algorithm2

    X, _pub, _ = default_data()
    k = paper_kernel(2)
    r = algorithm2(X, kernel=k, epsilon=1.0, delta=1e-6, n_points=m, n_features=1000, q_scale=500.0,
                   random_state=0, solver_options={"pool_size": 2000, "max_iter": 20, "shortlist": 256})
    rkhs_distance(X, r.points, r.weights, kernel=k)


def curves_page():
    X, pub, _ = default_data()
    k = paper_kernel(2)
    kxx = k.mean_gram(X)
    subspace_curves(X, pub[:250], kernel=k, epsilons=[0.01, 0.1, 1.0, 10.0], delta=1e-6,
                    m_grid=paper_m_grid(250, 60), reps=3, points_are_sample=True, mean_kxx=kxx, random_state=0)


def use_page():
    X, pub, held = default_data()
    k = paper_kernel(2)
    r = algorithm1(X, pub[:200], kernel=k, epsilon=1.0, delta=1e-6, points_are_sample=True, random_state=0)
    w = r.weights / r.weights.sum()
    w @ r.points
    project_weights(r.weights, k.gram(r.points), constraint="simplex")
    mmd(r.points, held, kernel=k, weights_x=r.weights)
    mmd(X, held, kernel=k)
    mmd(held[: len(held) // 2], held[len(held) // 2:], kernel=k)


def ledger_page(n_charges=3):
    cal = calibrate_gaussian(epsilon=1.0, delta=1e-6, sensitivity=1e-3)
    led = BudgetLedger(epsilon_budget=5.0, delta_budget=1e-5)
    for i in range(n_charges):
        led.add(gaussian_charge(f"#{i}", cal, details={"neighbouring": "replace-one"}))
        sub = BudgetLedger()
        for c in led.charges:
            sub.add(c)
        sub.totals(delta=1e-5)
    led.totals()
    led.exceeds_budget()


def release_exponential():
    from dpkme.release.exponential import database_scores, grid_candidates

    X, pub, _ = default_data()
    k = paper_kernel(2)
    G = grid_candidates(pub.min(axis=0), pub.max(axis=0), 6)
    scores = database_scores(X, G, kernel=k, m=4)
    scores.release(1.0, random_state=0, return_diagnostics=True)
    d = scores.distances
    edges = np.linspace(d.min(), d.max() + 1e-12, 41)
    np.histogram(d, bins=edges, weights=scores.probabilities(1.0))


def release_gp():
    from dpkme.release.gp import gp_release, grid_axes

    X, pub, _ = default_data()
    lo, hi = pub.min(axis=0), pub.max(axis=0)
    pad = 0.1 * (hi - lo)
    r = gp_release(X, kernel=paper_kernel(2), epsilon=1.0, delta=1e-6, grid=grid_axes(lo - pad, hi + pad, 40),
                   random_state=0)
    r.l2_error()


def release_clusterwise():
    from dpkme.clustering import clusterwise_release, plan_kmeans
    from dpkme.reduced_set import DEFAULT_SOLVER, preset_options

    X, pub, _ = default_data()
    plan = plan_kmeans(epsilon=1.0, delta=1e-6, n_iter=5, n_features=1000, release_share=0.5)
    clusterwise_release(X, k=5, n_points=200, plan=plan, kernel=paper_kernel(2), n_features=1000, init="public",
                        public_data=pub, random_state=0, preimages="final",
                        solver_options=preset_options(DEFAULT_SOLVER, "interactive"))


def _compare_data():
    from ui.views.curves_comparisons import CompareData

    X, pub, _ = default_data()
    return CompareData("paper mixture", X, pub, paper_kernel(2))


def curves_exponential():
    from ui.views.curves_comparisons import exponential_comparison

    exponential_comparison(_compare_data(), epsilons=np.geomspace(0.01, 10, 5), delta=1e-6, m=4, per_axis=6, reps=3)


def curves_gp():
    from ui.views.curves_comparisons import gp_comparison

    gp_comparison(_compare_data(), epsilons=np.geomspace(0.01, 10, 5), delta=1e-6, m=100, per_axis=40, reps=3)


def twosample_case():
    from dpkme.two_sample import make_features, nonprivate_test, tcmc_test
    from dpkme.two_sample.lab import make_case

    c = make_case("GMD", 5000, dim=100, n_public=500, random_state=0)
    f = make_features("scf", n_features=5, public_sample=c.public, random_state=0)
    tcmc_test(c.X, c.Y, features=f, epsilon=1.0, delta=1e-6, random_state=0, null_random_state=0)
    nonprivate_test(c.X, c.Y, features=f, null_random_state=0)


def clustering_run():
    from dpkme.clustering import dp_kernel_kmeans, evaluate_clustering, kernel_kmeans, plan_kmeans

    X, pub, _ = default_data()
    k = paper_kernel(2)
    plan = plan_kmeans(epsilon=1.0, delta=1e-6, n_iter=5, n_features=1000)
    plan.budget_table()
    res = dp_kernel_kmeans(X, k=5, plan=plan, kernel=k, n_features=1000, init="public", public_data=pub,
                           random_state=0)
    res.centre_path()
    ref = kernel_kmeans(X, k=5, n_iter=5, features=res.features, init=res.init_points, preimages="none",
                        local_view=False)
    evaluate_clustering(res, X, reference=ref)


def clustering_curve():
    from dpkme.clustering import accuracy_curve

    X, pub, _ = default_data()
    accuracy_curve(X, k=5, epsilons=np.geomspace(0.1, 10, 4), delta=1e-6, repetitions=3, n_iter=5,
                   kernel=paper_kernel(2), init="public", public_data=pub, random_state=0)


LIBRARY = [
    ("Home", "template figure + paper example (N = 10 000) with evaluation", home),
    ("Data", "generate N = 5 000, split, summary", data_page),
    ("Kernel & privacy", "sensitivity, σ, basis of 200 public points, σ-vs-ε curve", kernel_page),
    ("Release", "Algorithm 1, M = 200 + distances + 60×60 heat-maps", release_alg1),
    ("Release", "Algorithm 2, M = 200, J = 1 000, pursuit-joint (not the default mechanism)", release_alg2),
    ("Curves", "Algorithm 1 sweep: 60 M values × 4 ε × 3 repetitions", curves_page),
    ("Third-party use", "estimates, weight projection, three MMDs", use_page),
    ("Budget ledger", "basic/RDP/PLD totals and cumulative curve, 3 charges", ledger_page),
    ("Release", "exponential mechanism: 36 candidates, M = 4 (82 251 databases) + owner's view", release_exponential),
    ("Release", "GP function release, 40×40 grid, L² error", release_gp),
    ("Release", "cluster-wise release: k = 5, T = 5, J = 1 000, M = 200", release_clusterwise),
    ("Curves", "exponential vs Algorithms 1 & 2: 5 ε × 3 repetitions (M = 4, |G| = 36)", curves_exponential),
    ("Curves", "GP vs Algorithms 1 & 2 in L², 40×40 grid: 5 ε × 3 repetitions (M = 100)", curves_gp),
    ("Two-sample test", "bundled GMD case, n = 5 000, d = 100, SCF: TCMC + non-private", twosample_case),
    ("Clustering", "plan + DP k-means (k = 5, T = 5, J = 1 000, centre paths) + owner's evaluation", clustering_run),
    ("Clustering", "accuracy vs ε: 4 ε × 3 repetitions (+ non-private references)", clustering_curve),
]


def twosample_curve():
    from dpkme.two_sample.lab import rejection_curve

    rejection_curve("SG", values=[0.5, 1.0, 2.5, 5.0], methods=["nonprivate", "tcmc", "paper-naive"], n=2000,
                    delta=1e-6, repetitions=100, dim=50, feature_kind="scf", n_features=5, random_state=0,
                    progress=lambda d, t, i: True)


#: Long runs behind an explicit button (not a default interaction): timed once; the pages show a progress bar
#: and cancel (keeping partial results where the library allows) when an input changes.
LONG = [
    ("Two-sample test", "type-I error curve, default: SG, 4 ε × 100 repetitions, n = 2 000, 3 tests", twosample_curve),
]


def timed(fn, repeats: int) -> tuple[float, float]:
    times = []
    for _ in range(repeats):
        t = time.perf_counter()
        fn()
        times.append(time.perf_counter() - t)
    return statistics.median(times), max(times)


# --------------------------------------------------------------------------- headless page runs
def page_runs(repeats: int) -> list[tuple[str, str, float, float]]:
    from streamlit.testing.v1 import AppTest

    def fresh():
        at = AppTest.from_file(str(REPO / "app.py"), default_timeout=120)
        at.run()
        return at

    def release_click(at):
        at.switch_page("pages/release.py").run()
        at.button(key="rel.go").click().run()

    def curves_click(at):
        at.switch_page("pages/curves.py").run()
        at.button(key="crv.go").click().run()

    def twosample_click(at):
        release_click(at)
        t = time.perf_counter()
        at.switch_page("pages/twosample.py").run()
        at.button(key="tst.go").click().run()
        return time.perf_counter() - t

    def _mech_click(at, key):
        at.switch_page("pages/release.py").run()
        at.selectbox(key="rel.mechanism").set_value(key).run()
        t = time.perf_counter()
        at.button(key="rel.go").click().run()
        return time.perf_counter() - t

    def gp_click(at):
        return _mech_click(at, "gp")

    def exp_click(at):
        return _mech_click(at, "exponential")

    def use_after_release(at):
        release_click(at)
        t = time.perf_counter()
        at.switch_page("pages/use.py").run()
        return time.perf_counter() - t

    def clustering_click(at):
        at.switch_page("pages/clustering.py").run()
        t = time.perf_counter()
        at.button(key="clu.go").click().run()
        return time.perf_counter() - t

    def clustering_curve_click(at):
        at.switch_page("pages/clustering.py").run()
        t = time.perf_counter()
        at.button(key="clu.c_go").click().run()
        return time.perf_counter() - t

    def comparison_click(at, preset):
        at.switch_page("pages/curves.py").run()
        at.radio(key="crv.preset").set_value(preset).run()
        t = time.perf_counter()
        at.button(key="crv.cmp_go").click().run()
        return time.perf_counter() - t

    def twosample_case_click(at):
        at.switch_page("pages/twosample.py").run()
        at.radio(key="tst.mode").set_value("one").run()
        t = time.perf_counter()
        at.button(key="tst.go").click().run()
        return time.perf_counter() - t

    def clusterwise_click(at):
        return _mech_click(at, "clusterwise")

    steps = [
        ("Home", "open the app (a rerun of a fresh session)", lambda at: at.run()),
        ("Home", "click 'Run the paper example'", lambda at: at.button(key="home.example").click().run()),
        ("Data", "open", lambda at: at.switch_page("pages/data.py").run()),
        ("Kernel & privacy", "open", lambda at: at.switch_page("pages/kernel.py").run()),
        ("Release", "open and click 'Release' (Algorithm 1)", release_click),
        ("Curves", "open and click 'Compute curves'", curves_click),
        ("Third-party use", "open (after a release)", use_after_release),
        ("Budget ledger", "open", lambda at: at.switch_page("pages/ledger.py").run()),
        ("Two-sample test", "open and click 'Run the test' (after a release)", twosample_click),
        ("Privacy audit", "open", lambda at: at.switch_page("pages/audit.py").run()),
        ("Release", "open and click 'Release' (GP function release, 40×40 grid)", gp_click),
        ("Release", "open and click 'Release' (exponential mechanism, 36 candidates, M = 4)", exp_click),
        ("Release", "click 'Release' (cluster-wise release, k = 5, M = 200)", clusterwise_click),
        ("Curves", "click 'Compute the comparison' (exponential vs Algorithms 1 & 2)",
         lambda at: comparison_click(at, "exp")),
        ("Curves", "click 'Compute the comparison' (GP vs Algorithms 1 & 2, L²)", lambda at: comparison_click(at, "gp")),
        ("Two-sample test", "'One test on two samples': click 'Run the test' (GMD, n = 5 000, d = 100)",
         twosample_case_click),
        ("Clustering", "open", lambda at: at.switch_page("pages/clustering.py").run()),
        ("Clustering", "click 'Run private k-means' (k = 5, T = 5, J = 1 000)", clustering_click),
        ("Clustering", "click 'Compute the accuracy curve' (4 ε × 3 repetitions)", clustering_curve_click),
    ]
    out = []
    fresh()  # warm imports and the Streamlit cache once
    for page, what, step in steps:
        times = []
        for _ in range(repeats):
            at = fresh()
            t = time.perf_counter()
            measured = step(at)
            elapsed = measured if isinstance(measured, float) else time.perf_counter() - t
            if at.exception:
                raise RuntimeError(f"{page}: {at.exception}")
            times.append(elapsed)
        out.append((page, what, statistics.median(times), max(times)))
    return out


#: The app's pages by URL path and sidebar title (app.py's st.navigation).
PAGES = [("", "Home"), ("data", "Data"), ("kernel", "Kernel & privacy"), ("release", "Release"),
         ("curves", "Privacy–utility curves"), ("use", "Third-party use"), ("twosample", "Two-sample test"),
         ("clustering", "Clustering"), ("generative", "Generative release"), ("ledger", "Budget ledger"),
         ("audit", "Privacy audit")]
FRESH_TARGET, WARM_TARGET = 3.0, 1.5


def browser_page_times(repeats: int) -> tuple[float, list[tuple[str, float, float, float, float]]]:
    """``(first request s, [(page, fresh median, fresh max, warm median, warm max)])`` in a real browser."""
    from playwright.sync_api import sync_playwright

    from tests.conftest import _IDLE, _RUN_TRACKER, CHROMIUM, CHROMIUM_ARGS, run_streamlit_server

    def idle(page, min_finished: int) -> None:
        page.wait_for_function(_IDLE, arg=min_finished, timeout=120_000)

    def finished(page) -> int:
        return page.evaluate("() => window.__dpkmeRuns.finished")

    out = []
    with run_streamlit_server() as server, sync_playwright() as pw:
        browser = pw.chromium.launch(executable_path=str(CHROMIUM), args=CHROMIUM_ARGS)

        def session():
            ctx = browser.new_context(viewport={"width": 1400, "height": 900})
            page = ctx.new_page()
            page.add_init_script(_RUN_TRACKER)
            return ctx, page

        ctx, page = session()                     # the server's very first request: imports of the whole stack
        t = time.perf_counter()
        page.goto(server.url)
        idle(page, 1)
        first = time.perf_counter() - t
        ctx.close()
        for path, _title in PAGES:                # one untimed visit per page: its modules imported, caches filled
            ctx, page = session()
            page.goto(f"{server.url}/{path}")
            idle(page, 1)
            ctx.close()
        for path, title in PAGES:
            fresh, warm = [], []
            other = "Budget ledger" if path != "ledger" else "Home"   # "" is the default page (Home)
            for _ in range(repeats):
                ctx, page = session()
                t = time.perf_counter()
                page.goto(f"{server.url}/{path}")
                idle(page, 1)
                fresh.append(time.perf_counter() - t)
                nav = page.get_by_test_id("stSidebarNav")
                n0 = finished(page)
                nav.get_by_role("link", name=other, exact=True).click()
                idle(page, n0 + 1)
                n0 = finished(page)
                t = time.perf_counter()
                nav.get_by_role("link", name=title, exact=True).click()
                idle(page, n0 + 1)
                warm.append(time.perf_counter() - t)
                ctx.close()
            out.append((title, statistics.median(fresh), max(fresh), statistics.median(warm), max(warm)))
            print(f"[browser] {title:24s} fresh {out[-1][1]:6.2f} s (max {out[-1][2]:.2f})  "
                  f"warm {out[-1][3]:6.2f} s (max {out[-1][4]:.2f})", flush=True)
        browser.close()
    return first, out


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--repeats", type=int, default=5)
    ap.add_argument("--no-pages", action="store_true", help="skip the headless AppTest page runs")
    ap.add_argument("--browser", action="store_true", help="also time every page's opening in chromium")
    ap.add_argument("--browser-only", action="store_true", help="only the browser timings (implies --browser)")
    ap.add_argument("--out", default=str(REPO / "benchmarks" / "results" / "app.md"))
    ap.add_argument("--note", default="", help="a line about the conditions of the run, written into the results")
    args = ap.parse_args()

    lib = []
    for page, what, fn in ([] if args.browser_only else LIBRARY):
        fn()  # warm-up (imports, BLAS threads)
        med, worst = timed(fn, args.repeats)
        lib.append((page, what, med, worst))
        print(f"{page:18s} {med:7.3f} s (max {worst:.3f})  {what}", flush=True)
    long = []
    for page, what, fn in ([] if args.browser_only else LONG):
        t = time.perf_counter()
        fn()
        long.append((page, what, time.perf_counter() - t))
        print(f"[long] {page:18s} {long[-1][2]:7.1f} s  {what}", flush=True)
    pages = [] if (args.no_pages or args.browser_only) else page_runs(args.repeats)
    first, opened = browser_page_times(args.repeats) if (args.browser or args.browser_only) else (None, [])
    for page, what, med, worst in pages:
        print(f"[page] {page:18s} {med:7.3f} s (max {worst:.3f})  {what}", flush=True)

    load = os.getloadavg()[0] if hasattr(os, "getloadavg") else float("nan")
    lines = [
        "# App benchmark (`benchmarks/bench_app.py`)",
        "",
        f"Machine: {platform.machine()}, {os.cpu_count()} CPU(s), Python {platform.python_version()}, "
        f"load average at the end {load:.1f}. Median of {args.repeats} runs (max in brackets). "
        f"Target: every page's default interaction < {TARGET:g} s.",
        "",
        *([args.note, ""] if args.note else []),
        f"BLAS threads: OPENBLAS_NUM_THREADS={os.environ.get('OPENBLAS_NUM_THREADS', 'default')}.",
        "",
        "## Library calls behind each page (cold: no Streamlit cache)",
        "",
        "| page | work | median (s) | max (s) | < 2 s |",
        "|---|---|---:|---:|:---:|",
    ]
    lines += [f"| {p} | {w} | {m:.3f} | {x:.3f} | {'✓' if m < TARGET else '✗'} |" for p, w, m, x in lib]
    if long:
        lines += [
            "",
            "## Long runs behind a button (timed once; progress bar, cancelled by any input change or Stop)",
            "",
            "| page | work | seconds |",
            "|---|---|---:|",
        ]
        lines += [f"| {p} | {w} | {x:.1f} |" for p, w, x in long]
    if pages:
        lines += [
            "",
            "## Headless page runs (AppTest script time, Streamlit cache warm, no browser rendering)",
            "",
            "| page | interaction | median (s) | max (s) | < 2 s |",
            "|---|---|---:|---:|:---:|",
        ]
        lines += [f"| {p} | {w} | {m:.3f} | {x:.3f} | {'✓' if m < TARGET else '✗'} |" for p, w, m, x in pages]
    if opened:
        lines += [
            "",
            "## Page opening in a real browser (chromium; navigation to the end of the page's script run)",
            "",
            f"The server's first request in a new process (imports): {first:.2f} s. Then every page once, untimed.",
            "",
            f"| page | fresh session median (s) | max (s) | ≤ {FRESH_TARGET:g} s | warm median (s) | max (s) | "
            f"≤ {WARM_TARGET:g} s |",
            "|---|---:|---:|:---:|---:|---:|:---:|",
        ]
        lines += [f"| {p} | {fm:.2f} | {fx:.2f} | {'✓' if fm <= FRESH_TARGET else '✗'} | {wm:.2f} | {wx:.2f} | "
                  f"{'✓' if wm <= WARM_TARGET else '✗'} |" for p, fm, fx, wm, wx in opened]
    Path(args.out).parent.mkdir(parents=True, exist_ok=True)
    Path(args.out).write_text("\n".join(lines) + "\n")
    print(f"wrote {args.out}")


if __name__ == "__main__":
    main()
