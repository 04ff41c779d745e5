"""Hostile uploads through the real file input (Playwright + chromium against ``streamlit run app.py``).

The three worst files of the hostile-upload list (all of them are handled in AppTest in ``test_app_data.py``):
a header with 10⁶ columns, random binary bytes named ``.csv`` and an Excel workbook (``.xlsx``: the uploader
has no type filter, so the app itself says to save it as CSV). Each must give a clear error box (what is wrong
and what to do), never an exception box; the uploaded content must not reach the server's log; and afterwards
the app must still work (generated data again, another page renders)."""

from __future__ import annotations

import io
import random
import re
import zipfile

import pytest
from playwright.sync_api import Page, expect

pytestmark = pytest.mark.browser

DEFAULT_DATA = re.compile(r"N = 4,500 private rows")   # the default generated data set (app.py)
MARKER = "zq7private"   # a string that occurs only in the uploaded files: it must never reach the log


def _wide_header() -> bytes:
    header = b",".join(b"c%d" % i for i in range(10**6))
    return header + b"\n" + f"1,{MARKER}\n2,3\n".encode()


def _binary() -> bytes:
    rng = random.Random(0)
    return bytes(rng.randrange(256) for _ in range(20_000)) + MARKER.encode()


def _xlsx() -> bytes:
    """A minimal Office Open XML workbook (a ZIP archive with xl/ parts), as Excel writes it."""
    buf = io.BytesIO()
    with zipfile.ZipFile(buf, "w", zipfile.ZIP_DEFLATED) as z:
        z.writestr("[Content_Types].xml", '<?xml version="1.0"?><Types/>')
        z.writestr("xl/workbook.xml", '<?xml version="1.0"?><workbook/>')
        z.writestr("xl/worksheets/sheet1.xml", f'<?xml version="1.0"?><worksheet><v>{MARKER}</v></worksheet>')
    return buf.getvalue()


WORST = [
    ("wide.csv", _wide_header, ["1000000 columns", "limit of 200", "keep only the columns"]),
    ("random.csv", _binary, ["binary file", "CSV UTF-8"]),
    ("book.xlsx", _xlsx, ["Excel workbook", "Save As", "CSV UTF-8"]),
]


def main(page: Page):
    return page.get_by_test_id("stMain")


@pytest.mark.slow
def test_the_worst_hostile_uploads_show_clear_errors_and_the_app_stays_usable(
        app_page, nav, wait_idle, assert_no_exception, streamlit_server):
    page = app_page
    page.set_viewport_size({"width": 1400, "height": 900})
    log_before = len(streamlit_server.log_text(max_chars=10**9))
    nav(page, "Data")
    main(page).get_by_text("Upload CSV / Parquet").click()
    wait_idle(page)
    expect(main(page).get_by_text("Why these limits?")).to_be_visible()
    for name, make, fragments in WORST:
        page.get_by_test_id("stFileUploaderDropzoneInput").set_input_files(
            files=[{"name": name, "mimeType": "text/csv", "buffer": make()}])
        error = main(page).get_by_test_id("stAlertContentError").filter(has_text=name)
        expect(error).to_be_visible()
        wait_idle(page)
        text = error.inner_text()
        for fragment in fragments:
            assert fragment in text, (name, fragment, text)
        assert_no_exception(page)
        # nothing was read: the dataset in use is still the generated default
        expect(page.get_by_test_id("stSidebar").get_by_text(DEFAULT_DATA)).to_be_visible()

    # still usable: back to generated data, which is the data in use; another page renders
    main(page).get_by_text("Generate", exact=True).click()
    wait_idle(page)
    expect(main(page).get_by_text(re.compile("In use: .*" + DEFAULT_DATA.pattern))).to_be_visible()
    expect(main(page).get_by_test_id("stAlertContentError")).to_have_count(0)
    nav(page, "Kernel & privacy")
    expect(main(page).get_by_text("Noise σ per coordinate", exact=True)).to_be_visible()
    assert_no_exception(page)

    log = streamlit_server.log_text(max_chars=10**9)[log_before:]
    assert "Traceback" not in log, log
    assert MARKER not in log and "c999999" not in log, "uploaded content reached the server log"
