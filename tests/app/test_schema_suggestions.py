"""The Data page leaves identifiers out (issue 25): a row-name column, a running number and unique codes are neither
suggested in the mixed mode's schema nor pre-selected in the numeric mode, and each says why (the library's rules:
``tests/schema/test_suggest_identifiers.py``)."""

from __future__ import annotations

from tests.support.app import new_app, ok
from tests.support.identifiers import _table


def test_the_data_page_leaves_identifiers_out_in_mixed_mode_and_numeric_mode_alike():
    """The app (issue 25): a row-name column, a running number and unique codes are neither suggested in the mixed
    mode's schema nor pre-selected in the numeric mode, and each says why."""
    df = _table()
    at = new_app().run()
    at.switch_page("pages/data.py").run()
    at.radio(key="data.source").set_value("upload").run()
    at.file_uploader(key="data.upload").set_value(("ids.csv", df.to_csv(index=False).encode(), "text/csv")).run()
    ok(at)
    cols = next(m for m in at.multiselect if m.label == "Columns to release")       # numeric mode
    assert not {"Unnamed: 0", "n"} & set(cols.value) and "age" in cols.value
    at.radio(key="data.mode").set_value("schema").run()                            # mixed mode
    assert not at.exception
    notes = " ".join(c.value for c in at.caption if "was not suggested" in c.value)
    for name, why in (("Unnamed: 0", "row label"), ("n", "running number"), ("code", "code")):
        assert f"Column {name!r} was not suggested" in notes and why in notes
