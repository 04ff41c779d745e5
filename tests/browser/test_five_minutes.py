"""The five-minute path of issue 16, in a real browser (Playwright + Debian's chromium).

Cold start → Data: upload a small realistic numeric CSV (made here, in pytest's ``tmp_path``), declare 10 % of
its rows publishable and standardise the columns with them (public mean and std) → Use this dataset → Budget ledger: a total of ε = 20 (the three releases below add up to 11.1) → Release: ε = 1 with the page's own ε control → the ε explorer (planning: not a release) at
ε = 0.1 / 1 / 10 → a real release at ε = 1, then at ε = 0.1 and ε = 10 (same data, fresh noise) → download
the N synthetic rows, the JSON (private, no seed, the guarantee in plain words) and the recipe script.

It takes the README's screenshots of the Release page at the three ε (into ``docs/screenshots/`` when
``DPKME_SCREENSHOTS=docs/screenshots`` is set, as test_browser_flow.py; none without it): ``release_eps_1.png``,
``release_eps_0.1.png`` and ``release_eps_10.png`` (the Release page right after each release).
"""

from __future__ import annotations

import csv
import io
import json
import re
from pathlib import Path

import numpy as np
import pytest
from playwright.sync_api import Page, expect

from tests.support.browser import WIDTH, main, screenshot  # the README screenshots are taken one way

pytestmark = pytest.mark.browser

N_ROWS = 600
COLUMNS = ["age", "height_cm", "weight_kg"]


def survey_csv(path: Path) -> Path:
    """600 adults' age (years, integer), height (cm, 1 decimal) and weight (kg, 1 decimal), correlated as real
    ones are; simulated with a fixed seed (no private data on disk other than this tmp_path file)."""
    rng = np.random.default_rng(16)
    age = np.clip(rng.normal(42, 13, N_ROWS), 18, 90).round()
    height = rng.normal(171, 9, N_ROWS).round(1)
    weight = (0.9 * (height - 100) + 0.1 * (age - 40) + rng.normal(0, 9, N_ROWS)).round(1)
    lines = [",".join(COLUMNS)] + [f"{a:.0f},{h:.1f},{w:.1f}" for a, h, w in zip(age, height, weight)]
    path.write_text("\n".join(lines) + "\n")
    return path


def release(page: Page, expect_rerun) -> None:
    """Press the Release button and wait until the release is shown (the page reruns after it)."""
    with expect_rerun(page):
        main(page).get_by_role("button", name="Release", exact=True).click()
    expect(main(page).get_by_test_id("stMetric").filter(has_text="RKHS distance of this release")).to_be_visible()
    expect(main(page).get_by_text(re.compile("beyond your budget"))).to_have_count(0)


def shown_epsilon(page: Page) -> str:
    box = main(page).get_by_test_id("stMetric").filter(has_text="ε spent").first
    return box.get_by_test_id("stMetricValue").inner_text()


def set_epsilon(page: Page, value: str, expect_rerun) -> None:
    """Type ``value`` into the Release page's exact-ε box and commit it with Enter."""
    box = main(page).get_by_role("spinbutton", name="Exact ε")
    assert box.input_value() != value, f"ε is already {value}: Enter would not start a run"
    with expect_rerun(page):
        box.fill(value)
        box.press("Enter")
    expect(box).to_have_value(value)


def download(page: Page, label: str) -> tuple[str, str]:
    """Click the download button whose text contains ``label``; return (suggested file name, text)."""
    with page.expect_download() as dl:
        main(page).get_by_test_id("stDownloadButton").filter(has_text=label).get_by_role("button").click()
    return dl.value.suggested_filename, Path(dl.value.path()).read_text()


@pytest.mark.slow
def test_five_minute_path_upload_release_at_three_epsilons_and_download(
        page, streamlit_server, nav, wait_idle, expect_rerun, assert_no_exception, tmp_path):
    # --- cold start: a new session at the app's home page
    page.set_viewport_size({"width": WIDTH, "height": 900})
    page.goto(streamlit_server.url)
    expect(page.get_by_test_id("stApp")).to_be_visible()
    wait_idle(page)
    assert_no_exception(page)

    # --- Data: upload a realistic numeric CSV and use it
    nav(page, "Data")
    if not main(page).get_by_role("radio", name="Upload CSV / Parquet", exact=True).is_checked():
        with expect_rerun(page):
            main(page).get_by_text("Upload CSV / Parquet", exact=True).click()
    path = survey_csv(tmp_path / "survey.csv")
    with expect_rerun(page):
        page.get_by_test_id("stFileUploaderDropzoneInput").set_input_files(str(path))
    expect(main(page).get_by_text(f"Read 'survey.csv': {N_ROWS} rows × 3 columns")).to_be_visible()
    # a few rows are public (published before): 10 % publishable, declared, and the columns standardised with
    # them (public mean and std): the release then lives where the data do, in every column's own scale
    thumb = main(page).get_by_role("slider", name="Publishable fraction (%)")
    with expect_rerun(page):
        thumb.focus()
        for _ in range(20):                           # 20 steps of 0.5 %
            thumb.press("ArrowRight")
    expect(thumb).to_have_value("10")
    with expect_rerun(page):
        main(page).get_by_text(re.compile("^I state that these rows are public")).click()
    with expect_rerun(page):
        main(page).get_by_text("Standardise with the publishable subset (public mean and std)", exact=True).click()
    with expect_rerun(page):
        main(page).get_by_role("button", name="Use this dataset", exact=True).click()
    expect(main(page).get_by_text(
        "In use: upload 'survey.csv' — N = 486 private rows, 60 public, 54 held out, D = 3")).to_be_visible()
    assert_no_exception(page)

    # --- Budget ledger: three releases at ε = 1 + 0.1 + 10 need more than the default total of ε = 5
    nav(page, "Budget ledger")
    budget = main(page).get_by_role("spinbutton", name="Total ε budget for this data")
    with expect_rerun(page):
        budget.fill("20")
        budget.press("Enter")
    expect(budget).to_have_value("20")
    assert_no_exception(page)

    # --- Release: ε = 1 with the page's own ε control (the exact box starts at the slider's ε)
    nav(page, "Release")
    expect(main(page).get_by_text("No release of this dataset yet")).to_be_visible()
    with expect_rerun(page):
        main(page).get_by_text("Type an exact ε instead", exact=True).click()
    eps_box = main(page).get_by_role("spinbutton", name="Exact ε")
    if eps_box.input_value() != "1":
        set_epsilon(page, "1", expect_rerun)
    expect(eps_box).to_have_value("1")

    # --- the ε explorer: three planning panels (0.1 / 1 / 10), nothing charged
    explorer = main(page).get_by_role("button", name="Run the ε explorer (spends no budget)")
    expect(explorer).to_be_visible()
    with expect_rerun(page):
        explorer.click()
    for eps in ("0.1", "1", "10"):
        expect(main(page).get_by_text(f"ε = {eps} · RKHS distance", exact=False)).to_be_visible()
        expect(main(page).get_by_role("button", name=f"Use ε = {eps}", exact=True)).to_be_visible()
    expect(main(page).get_by_text("Planning run: not a release, not charged to the ledger, not stored.")
           ).to_have_count(3)
    expect(main(page).get_by_text("No release of this dataset yet")).to_be_visible()   # planning released nothing
    assert_no_exception(page)

    # --- three real releases of the same data, each with fresh noise; the Release page after each one
    release(page, expect_rerun)
    assert shown_epsilon(page) == "1"
    assert_no_exception(page)
    screenshot(page, "release_eps_1")

    set_epsilon(page, "0.1", expect_rerun)
    release(page, expect_rerun)
    assert shown_epsilon(page) == "0.1"
    assert_no_exception(page)
    screenshot(page, "release_eps_0.1")

    set_epsilon(page, "10", expect_rerun)
    release(page, expect_rerun)
    assert shown_epsilon(page) == "10"
    assert_no_exception(page)
    screenshot(page, "release_eps_10")

    # --- downloads of the last release (ε = 10): N unweighted synthetic rows, the JSON, the recipe
    n_label = main(page).get_by_test_id("stDownloadButton").filter(has_text="Synthetic rows").inner_text()
    n_private = int(re.search(r"Synthetic rows: ([\d,]+) unweighted", n_label).group(1).replace(",", ""))
    assert n_private == 486
    name, text = download(page, "Synthetic rows")
    rows = list(csv.DictReader(io.StringIO(text)))
    assert name.endswith(".csv")
    assert list(rows[0]) == COLUMNS and len(rows) == n_private
    for row in rows:      # the columns' own units, rounded to their public precision (age in whole years)
        assert float(row["age"]).is_integer() and 0 < float(row["age"]) < 150
        assert all(np.isfinite(float(row[c])) and len(row[c].partition(".")[2]) <= 1 for c in COLUMNS)

    name, text = download(page, "JSON")
    meta = json.loads(text)
    assert name.endswith(".json")
    assert meta["differentially_private"] is True and meta["seed"] is None
    assert meta["epsilon"] == 10.0
    words = meta["guarantee_in_words"]
    assert isinstance(words, str) and len(words) > 40

    name, script = download(page, "Recipe: Python script")
    assert name.endswith(".py")
    assert "dpkme" in script
    # a real release's recipe holds no noise seed: no seed among its parameters (the script's --replay option is
    # generic and refuses to run without a recorded replay seed); only the data split's seed, which is no noise seed
    recipe = json.loads(re.search(r'RECIPE = json\.loads\(r"""\n(.*?)\n"""\)', script, re.S).group(1))
    assert recipe["epsilon"] == 10.0 and recipe["data"]["columns"] == COLUMNS
    assert not [k for k in recipe if "seed" in k]
    assert "This recipe holds no noise seed." in script
    assert_no_exception(page)
