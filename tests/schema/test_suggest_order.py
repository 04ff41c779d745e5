"""Suggested category lists are in natural order (browser walk: L0, L1, L10, L2 ... read as a bug)."""

from __future__ import annotations

import warnings

import pandas as pd

from dpkme.schema import suggest_schema


def test_suggested_categories_sort_numbers_inside_labels_by_value():
    df = pd.DataFrame({"c": ["L10", "L2", "L1", "L0", "l3", "L2"], "x": [1.0, 2.0, 3.0, 4.0, 5.0, 6.0]})
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")          # read from the rows: flagged, not the point here
        spec = suggest_schema(df).schema["c"]
    assert [v for v in spec.levels if v is not None] == ["L0", "L1", "L2", "l3", "L10"]
