"""Red team in a real browser (issue 13): the app must never void the guarantee it teaches.

Home's paper example → Release → Release again gives three releases. Their downloads say
``"differentially_private": true`` only when it holds (a real release, no seed in the file), and no two
share noise: the review found the paper example and the first Release-page release at the same ε and M
had identical weights (both seeded with 0), and with two shared-noise releases at different ε the exact
private coordinates follow from the two CSVs. A replay-mode release is then labelled "replayable demo,
not private" and carries its seed.
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

from tests.support.browser import click_button, main, metric_value

pytestmark = pytest.mark.browser


def _download(page: Page, which: str) -> tuple[str, str]:
    with page.expect_download() as dl:
        main(page).get_by_test_id("stDownloadButton").filter(has_text=which).get_by_role("button").click()
    return dl.value.suggested_filename, Path(dl.value.path()).read_text()


def _downloads(page: Page) -> tuple[np.ndarray, dict, str]:
    """The shown release's weights (CSV), its metadata (JSON) and its file stem (which names the release id)."""
    name_csv, text = _download(page, "CSV")
    rows = list(csv.DictReader(io.StringIO(text)))
    weights = np.array([float(r["weight"]) for r in rows])
    name_json, meta = _download(page, "JSON")
    assert name_csv.removesuffix(".csv") == name_json.removesuffix(".json")
    return weights, json.loads(meta), name_csv.removesuffix(".csv")


def test_paper_example_then_two_releases_claim_privacy_only_when_it_holds_and_share_no_noise(
        app_page, nav, expect_rerun, assert_no_exception):
    page = app_page
    page.set_viewport_size({"width": 1400, "height": 900})
    click_button(page, "Run the paper example", expect_rerun)
    expect(main(page).get_by_text("RKHS distance ‖μ̃ − μ̂‖")).to_be_visible()
    assert_no_exception(page)

    nav(page, "Release")
    expect(main(page).get_by_text("RKHS distance of this release")).to_be_visible()
    assert metric_value(page, "Seed") == "not recorded"
    releases = [_downloads(page)]                       # the paper example's release
    for _ in range(2):                                  # Release, Release again: same ε = 1, same M = 200
        click_button(page, "Release", expect_rerun)
        assert_no_exception(page)
        releases.append(_downloads(page))

    ws = [w for w, _, _ in releases]
    metas = [m for _, m, _ in releases]
    assert len({stem for _, _, stem in releases}) == 3          # three different releases were downloaded
    assert all(w.shape == (200,) for w in ws)
    for meta in metas:
        assert meta["differentially_private"] is True, meta
        assert meta["seed"] is None and meta["noise_source"] == "os-entropy"
        assert "seed_warning" not in meta and "guarantee" in meta
        assert meta["epsilon"] == 1.0 and meta["n_private"] == meta["preprocessing"]["n_private"]
    # no two share noise: pairwise different weights, and the three are not collinear
    for i in range(3):
        for j in range(i + 1, 3):
            assert not np.allclose(ws[i], ws[j]), (i, j)
    d1, d2 = ws[1] - ws[0], ws[2] - ws[0]
    # shared noise would make them exactly collinear: d2's part orthogonal to d1 is rounding (~1e-16 of |d2|).
    # Independent noise is not, but both differences are dominated by the paper example's signed weights
    # (|w0| ~ 10 against |w1 - w2| ~ 0.12 for the probability weights), so 1 - cos is only ~5e-5 (median), 1.3e-6
    # at the least of 660 fresh draws: ~1e-3 of runs would cross the former bound 1 - cos > 1e-6. Bound the
    # orthogonal part instead, at 1e-9 of |d2| (sin θ ~ 1e-2 here, ~2e-3 at the least of those draws)
    orth = d2 - (d1 @ d2) / (d1 @ d1) * d1
    assert np.linalg.norm(orth) > 1e-9 * np.linalg.norm(d2)

    # replay mode: visibly marked, and its file says it is not private (and carries its seed)
    with expect_rerun(page):
        main(page).get_by_text(re.compile("^Replayable demo")).click()
    expect(main(page).get_by_text(re.compile("Replay mode \\(teaching\\): not private"))).to_be_visible()
    click_button(page, "Release", expect_rerun)
    expect(main(page).get_by_text(re.compile("NOT differentially private")).first).to_be_visible()
    _, meta_demo, _ = _downloads(page)
    assert meta_demo["differentially_private"] is False
    assert meta_demo["status"] == "replayable demo, not private" and isinstance(meta_demo["seed"], int)
    assert_no_exception(page)
