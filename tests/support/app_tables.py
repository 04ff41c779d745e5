"""The mixed-table journey's AppTest helpers: a mixed CSV, its schema, schema mode, upload and use."""

from __future__ import annotations

import numpy as np
import pandas as pd


# ---------------------------------------------------------------------- helpers
def mixed_csv(n: int = 240, *, bad_income: str | None = None) -> bytes:
    """A mixed table: a date, an integer, a continuous column with missing cells, a categorical column with
    missing cells, a boolean. Deterministic (seeded), so its values are the same in every run."""
    rng = np.random.default_rng(5)
    rows = ["visit,age,income,region,smoker"]
    regions = ["north", "south", "east", "west"]
    for i in range(n):
        d = pd.Timestamp("2021-01-01") + pd.Timedelta(days=int(rng.integers(0, 700)))
        age = int(rng.integers(18, 90))
        inc = "" if i % 9 == 0 else f"{rng.normal(40000 + 300 * age, 8000):.2f}"
        if bad_income is not None and i == 7:
            inc = bad_income
        reg = "" if i % 13 == 0 else regions[int(rng.integers(0, 4))]
        rows.append(f"{d.date()},{age},{inc},{reg},{'true' if rng.random() < 0.3 else 'false'}")
    return ("\n".join(rows) + "\n").encode()


#: The declared schema of ``mixed_csv`` (from "public knowledge": a code book), as a file would hold it.
MIXED_SCHEMA = {
    "format": "dpkme.table_schema", "version": 1, "uniform_sq_distance": 1.0, "data_dependent": [],
    "columns": [
        {"name": "visit", "kind": "datetime", "lower": "2021-01-01", "upper": "2022-12-31", "missing": "error"},
        {"name": "age", "kind": "integer", "lower": 18, "upper": 99, "missing": "error"},
        {"name": "income", "kind": "continuous", "lower": 0.0, "upper": 150000.0, "missing": "category",
         "decimals": 0},
        {"name": "region", "kind": "categorical", "categories": ["east", "north", "south", "west"],
         "missing": "category"},
        {"name": "smoker", "kind": "boolean", "missing": "error"},
    ],
}


def schema_mode(at, sample: str = "penguins"):
    at.switch_page("pages/data.py").run()
    at.radio(key="data.source").set_value("sample").run()
    at.selectbox(key="data.sample").set_value(sample).run()
    at.radio(key="data.mode").set_value("schema").run()
    return at


def use(at):
    at.button(key="data.use").click().run()
    return at


def in_declared_domain(df: pd.DataFrame, schema) -> None:
    """Every cell of ``df`` is a declared value of its column (missing only where the schema allows it)."""
    for c in schema.columns:
        s = df[c.name]
        present = s[s.notna()]
        if c.missing != "category":
            assert s.notna().all(), c.name
        if c.kind in ("continuous", "integer"):
            v = pd.to_numeric(present)
            assert v.between(c.lower, c.upper).all(), c.name
            if c.kind == "integer":
                assert (v == v.round()).all(), c.name
        elif c.kind == "datetime":
            v = pd.to_datetime(present)
            assert v.between(pd.Timestamp(c.lower), pd.Timestamp(c.upper)).all(), c.name
        elif c.kind == "categorical":
            assert set(present.astype(str)) <= {str(v) for v in c.categories}, c.name
        else:
            assert set(present.astype(str).str.lower()) <= {"true", "false"}, c.name


