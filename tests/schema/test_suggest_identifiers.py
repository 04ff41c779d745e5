"""Schema suggestions that do not invent data (issue 25): "missing" only where a column can be missing (seen in the
rows the suggestion reads: the public ones when given), and identifiers (row names, running integers, unique
strings) left out with a note, read from public rows or, flagged, from the private ones."""

from __future__ import annotations

import warnings

import numpy as np
import pytest

from dpkme.privacy.leaks import PrivacyLeakWarning
from dpkme.schema import suggest_schema
from tests.support.identifiers import _table


def test_identifiers_are_left_out_with_a_note_when_read_from_the_private_rows():
    with pytest.warns(PrivacyLeakWarning):
        s = suggest_schema(_table())
    assert list(s.schema.names) == ["age", "city", "income"]
    assert "row label" in s.excluded["Unnamed: 0"]                   # by its name: no row read
    assert "running number" in s.excluded["n"] and "PRIVATE" in s.excluded["n"]
    assert "code" in s.excluded and "PRIVATE" in s.excluded["code"]
    # decided from the private rows: flagged like a value read from them
    assert set(s.excluded_from_private) == {"n", "code"}


def test_identifiers_are_left_out_when_read_from_public_rows_and_nothing_private_is_read():
    private, public = _table(seed=1), _table(seed=2)
    with warnings.catch_warnings():
        warnings.simplefilter("error", PrivacyLeakWarning)
        s = suggest_schema(private, public=public)
    assert list(s.schema.names) == ["age", "city", "income"]
    assert set(s.excluded) == {"Unnamed: 0", "n", "code"} and s.excluded_from_private == ()
    assert all("public rows" in why or "row label" in why for why in s.excluded.values())


def test_missing_is_suggested_only_where_the_rows_read_show_a_missing_cell():
    private, public = _table(seed=1), _table(seed=2)
    private.loc[[3, 7], "income"] = np.nan            # gaps in the private rows only
    public.loc[[0, 5], "city"] = None                 # gaps in the public rows only
    with warnings.catch_warnings():
        warnings.simplefilter("error", PrivacyLeakWarning)
        s = suggest_schema(private, public=public)
    assert s.schema["city"].missing == "category"     # seen in the public rows
    assert s.schema["income"].missing != "category"   # not seen there: no missing category is invented
    assert s.schema["age"].missing != "category"
    with pytest.warns(PrivacyLeakWarning):
        from_private = suggest_schema(private)
    assert from_private.schema["income"].missing == "category"      # seen (in the private rows, flagged)
    assert "missing" in from_private.schema.data_dependent_fields["income"]
    assert from_private.schema["age"].missing != "category" and from_private.schema["city"].missing != "category"

