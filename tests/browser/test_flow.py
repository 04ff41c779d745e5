"""Real-browser tests (Playwright driving Debian's chromium against ``streamlit run app.py``).

* the main flow: generate data → release with Algorithm 1 → plot and metric visible → download the
  CSV (parsed) and the JSON (fields checked) → curves, third-party use, two-sample test, clustering, ledger
  and audit pages;
* the exponential mechanism and the GP release on the Release page, their comparisons on the Curves page, a
  live two-sample test on a bundled case and a short type-I error curve;
* uploading a CSV, and uploading a broken CSV that must produce a clear error;
* no exception box on any page visited.

The main flow also takes the screenshots embedded in the README (``docs/screenshots/*.png``) when
``DPKME_SCREENSHOTS=docs/screenshots`` is set (any folder: ``DPKME_SCREENSHOTS=tests/.screenshots`` keeps them out
of the tracked files); without it the pages go through the same full-height resize and redraw, and only the
capture (a PNG of up to 1400 x 6000 pixels) is skipped.
"""

from __future__ import annotations

import csv
import io
import json
import re
from pathlib import Path

import pytest
from playwright.sync_api import Page, expect

from tests.support.browser import WIDTH, click_button, main, metric_value, pick_radio, screenshot

pytestmark = pytest.mark.browser


def enter_number(page: Page, label: str, value: str, expect_rerun) -> None:
    """Type a new value into a number input and commit it with Enter (a rerun)."""
    box = main(page).get_by_role("spinbutton", name=label)
    assert box.input_value() != value, f"{label} is already {value}: Enter would not start a run"
    with expect_rerun(page):
        box.fill(value)
        box.press("Enter")


@pytest.fixture
def wide_page(app_page: Page) -> Page:
    app_page.set_viewport_size({"width": WIDTH, "height": 900})
    return app_page


@pytest.mark.slow
def test_main_flow_generate_release_download(wide_page, nav, expect_rerun, assert_no_exception, tmp_path):
    page = wide_page
    expect(main(page).get_by_role("heading", name=re.compile("kernel mean embeddings"))).to_be_visible()
    expect(main(page).get_by_test_id("stPlotlyChart").first).to_be_visible()
    assert_no_exception(page)
    screenshot(page, "home")

    # --- Data: generate the paper's mixture with N = 4000 and use it
    nav(page, "Data")
    enter_number(page, "Number of points", "4000", expect_rerun)
    expect(main(page).get_by_text("not in use yet")).to_be_visible()
    click_button(page, "Use this dataset", expect_rerun)
    expect(main(page).get_by_text(re.compile(r"In use: .*N = 3,600 private rows"))).to_be_visible()
    expect(page.get_by_test_id("stSidebar").get_by_text(re.compile("N = 3,600"))).to_be_visible()
    assert_no_exception(page)
    screenshot(page, "data")

    # --- Kernel & privacy: σ is explained
    nav(page, "Kernel & privacy")
    expect(main(page).get_by_text("Noise σ per coordinate", exact=True)).to_be_visible()
    assert float(metric_value(page, "Noise σ per coordinate")) > 0
    assert_no_exception(page)
    screenshot(page, "kernel")

    # --- Release with Algorithm 1 (the default mechanism)
    nav(page, "Release")
    expect(main(page).get_by_text("No release of this dataset yet")).to_be_visible()
    click_button(page, "Release", expect_rerun)
    expect(main(page).get_by_test_id("stPlotlyChart").first).to_be_visible()
    expect(main(page).get_by_test_id("stPlotlyChart").first.locator("svg.main-svg").first).to_be_visible()
    # Real (OS-entropy) noise and points: the distance is random (0.026-0.18 in 60 AppTest draws of this
    # release, median 0.042, mostly from the random points). Checked: it is positive and the release is
    # nearer the private KME than the zero function (the relative error is below 100 %).
    dist = float(metric_value(page, "RKHS distance of this release"))
    relative = float(metric_value(page, "Relative error").rstrip("%")) / 100
    assert dist > 0 and 0 < relative < 1
    assert metric_value(page, "Seed") == "not recorded"      # a real release by default: OS-entropy noise
    expect(page.get_by_test_id("stSidebar").get_by_text(re.compile(r"ε = 0\.\d+ of 5"))).to_be_visible()
    assert_no_exception(page)
    screenshot(page, "release")

    # --- downloads: CSV (points and weights) and JSON (parameters)
    with page.expect_download() as dl:
        main(page).get_by_test_id("stDownloadButton").filter(has_text="CSV").get_by_role("button").click()
    csv_text = Path(dl.value.path()).read_text()
    rows = list(csv.DictReader(io.StringIO(csv_text)))
    assert dl.value.suggested_filename.endswith(".csv")
    assert list(rows[0]) == ["x1", "x2", "weight"] and len(rows) == 200
    weights = [float(r["weight"]) for r in rows]
    assert abs(sum(weights) - 1) < 0.5 and any(w != weights[0] for w in weights)
    with page.expect_download() as dl:
        main(page).get_by_test_id("stDownloadButton").filter(has_text="JSON").get_by_role("button").click()
    meta = json.loads(Path(dl.value.path()).read_text())
    for key in ("mechanism", "epsilon", "delta", "sigma", "kernel", "seed", "version", "noise_source"):
        assert key in meta, key
    assert meta["mechanism"] == "algorithm1" and meta["epsilon"] == 1.0
    assert meta["differentially_private"] is True and meta["seed"] is None   # a private file carries no seed
    assert meta["kernel"]["name"] == "gaussian" and meta["n_points"] == 200

    # --- curves
    nav(page, "Privacy–utility curves")
    click_button(page, "Compute curves", expect_rerun)
    expect(main(page).get_by_test_id("stPlotlyChart").first).to_be_visible()
    assert_no_exception(page)
    screenshot(page, "curves")

    # --- third-party use and ledger
    nav(page, "Third-party use")
    expect(main(page).get_by_text("Means and covariances")).to_be_visible()
    metric_value(page, "True share of private rows")
    assert_no_exception(page)
    screenshot(page, "use")

    nav(page, "Two-sample test")
    click_button(page, "Run the test", expect_rerun)
    expect(main(page).get_by_text("p-value (private test)")).to_be_visible()
    assert_no_exception(page)
    screenshot(page, "test")

    # --- clustering: run DP k-means, centres drawn, local view labelled
    nav(page, "Clustering")
    expect(main(page).get_by_text("Budget split (public: computed before any data is read)")).to_be_visible()
    click_button(page, "Run private k-means", expect_rerun)
    expect(main(page).get_by_text("What is released")).to_be_visible()
    expect(main(page).get_by_text(re.compile("LOCAL VIEW - NOT RELEASED")).first).to_be_visible()
    expect(main(page).get_by_test_id("stPlotlyChart").nth(1).locator("svg.main-svg").first).to_be_visible()
    click_button(page, "Compute the accuracy curve", expect_rerun)
    expect(main(page).get_by_test_id("stPlotlyChart").nth(2)).to_be_visible()
    assert_no_exception(page)
    screenshot(page, "clustering")

    nav(page, "Budget ledger")
    expect(main(page).get_by_text("Within budget")).to_be_visible()
    assert_no_exception(page)
    screenshot(page, "ledger")

    nav(page, "Privacy audit")
    expect(main(page).get_by_text("ε really achieved on that pair")).to_be_visible()
    assert_no_exception(page)
    screenshot(page, "audit")


def _choose_mechanism(page: Page, label: str, expect_rerun) -> None:
    main(page).get_by_test_id("stSelectbox").first.click()
    with expect_rerun(page):
        page.get_by_role("option", name=label).click()


@pytest.mark.slow
def test_exponential_gp_comparisons_and_two_sample_lab(wide_page, nav, expect_rerun, assert_no_exception):
    page = wide_page
    nav(page, "Release")
    _choose_mechanism(page, "Exponential mechanism · exact, tiny M", expect_rerun)
    expect(main(page).get_by_text(re.compile(r"82,251 candidate databases are scored exactly"))).to_be_visible()
    expect(main(page).get_by_text("Candidate databases C(|G|+M−1, M)")).to_be_visible()
    click_button(page, "Release", expect_rerun)
    expect(main(page).get_by_text("Distance of the drawn database")).to_be_visible()
    assert_no_exception(page)
    screenshot(page, "release_exponential")
    _choose_mechanism(page, "GP release · a noisy function on a grid", expect_rerun)
    click_button(page, "Release", expect_rerun)
    expect(main(page).get_by_text("f̃ is not in the RKHS", exact=True)).to_be_visible()
    assert metric_value(page, "RKHS distance") == "∞"
    assert_no_exception(page)
    screenshot(page, "release_gp")

    nav(page, "Privacy–utility curves")
    pick_radio(page, "Exponential mechanism vs Algorithms 1 & 2", expect_rerun)
    pick_radio(page, "paper mixture, D = 1 (N = 2 000, generated)", expect_rerun)
    click_button(page, "Compute the comparison", expect_rerun)
    expect(main(page).get_by_test_id("stPlotlyChart").first.locator("svg.main-svg").first).to_be_visible()
    assert_no_exception(page)
    screenshot(page, "curves_exponential")
    pick_radio(page, "GP function release vs Algorithms 1 & 2 (L² on a grid)", expect_rerun)
    click_button(page, "Compute the comparison", expect_rerun)
    expect(main(page).get_by_test_id("stPlotlyChart").first.locator("svg.main-svg").first).to_be_visible()
    assert_no_exception(page)
    screenshot(page, "curves_gp")

    nav(page, "Two-sample test")
    pick_radio(page, "One test on two samples", expect_rerun)
    click_button(page, "Run the test", expect_rerun)
    # GMD is false by construction, but the private test's power at ε = 1 is ~99 %, not 100 %: either decision is a
    # correct outcome of the page; what must appear is the decision (the library's power is tested elsewhere)
    expect(main(page).get_by_text(re.compile(r"^(reject|keep) H₀$")).first).to_be_visible()
    assert_no_exception(page)
    screenshot(page, "test_lab")
    pick_radio(page, "Type-I error and power curves", expect_rerun)
    enter_number(page, "Repetitions per value", "20", expect_rerun)
    click_button(page, "Compute the curves", expect_rerun)
    expect(main(page).get_by_text(re.compile("SG — Same Gaussian: type-I error"))).to_be_visible()
    expect(main(page).get_by_role("button", name="Stop")).to_have_count(0)     # gone once the run is over
    assert_no_exception(page)
    screenshot(page, "test_curves")


@pytest.mark.slow
def test_stopping_a_long_two_sample_curve_keeps_the_partial_result(wide_page, nav, wait_idle, expect_rerun,
                                                                    assert_no_exception):
    page = wide_page
    nav(page, "Two-sample test")
    pick_radio(page, "Type-I error and power curves", expect_rerun)
    main(page).get_by_role("button", name="Compute the curves", exact=True).click()   # 400 repetitions: ~20 s
    # Stop once some repetitions are done, whatever the machine's speed: the bar's text ends "(done/total)"
    expect(main(page).get_by_test_id("stProgress")).to_contain_text(re.compile(r"\([1-9]\d*/\d+\)"))
    main(page).get_by_role("button", name="Stop").click()
    # shown only by the run that Stop starts; wait_idle then waits for the end of that run
    expect(main(page).get_by_text(re.compile(r"Stopped early: [1-9][\d,]* of 400 repetitions done"))).to_be_visible()
    wait_idle(page)
    expect(main(page).get_by_test_id("stPlotlyChart").first).to_be_visible()
    assert_no_exception(page)


def _upload(page: Page, name: str, content: bytes, expect_rerun) -> None:
    pick_radio(page, "Upload CSV / Parquet", expect_rerun)
    with expect_rerun(page):
        page.get_by_test_id("stFileUploaderDropzoneInput").set_input_files(
            files=[{"name": name, "mimeType": "text/csv", "buffer": content}])


@pytest.mark.slow
def test_upload_a_csv_and_release_it(wide_page, nav, expect_rerun, assert_no_exception):
    page = wide_page
    nav(page, "Data")
    lines = ["age,income,city"] + [f"{20 + i % 50},{1000 + (i * 37) % 900},{'AB'[i % 2]}" for i in range(300)]
    _upload(page, "survey.csv", ("\n".join(lines) + "\n").encode(), expect_rerun)
    expect(main(page).get_by_text("Read 'survey.csv': 300 rows × 3 columns.")).to_be_visible()
    click_button(page, "Use this dataset", expect_rerun)
    expect(main(page).get_by_text(re.compile(r"In use: upload 'survey.csv'"))).to_be_visible()
    assert_no_exception(page)
    nav(page, "Release")
    click_button(page, "Release", expect_rerun)
    assert float(metric_value(page, "RKHS distance of this release")) > 0
    assert_no_exception(page)


@pytest.mark.parametrize("name,content,message", [
    ("broken.csv", b"a,b\nx,y\nz,w\n", "has no numeric column"),
    ("one_row.csv", b"a,b\n1,2\n", "at least 2 are needed"),
])
def test_upload_a_broken_csv_shows_a_clear_error(wide_page, nav, expect_rerun, assert_no_exception, name, content,
                                                   message):
    page = wide_page
    nav(page, "Data")
    _upload(page, name, content, expect_rerun)
    alert = main(page).get_by_test_id("stAlert").filter(has_text=message)
    expect(alert).to_be_visible()
    assert_no_exception(page)
