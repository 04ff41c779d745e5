"""Write the made-up clinic-visits tables of this folder (a walk-through example, not real people).

``visits.csv`` (600 rows) plays the private table, ``visits_public.csv`` (80 rows, another seed) a public pilot
sample of the same kind, and ``visits.schema.json`` the schema declared from the questionnaire's documentation
(bounds, categories, which columns can be missing), not read from either table. The columns depend on each other
(waits differ by region, satisfaction falls with the wait, older people are seen more in the morning), so a
release's 2- and 3-way marginals have something to keep. Run ``python sample_data/make_visits.py`` to write them
again; the output is the same in every run (fixed seeds: this is demo data, nothing private).
"""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pandas as pd

HERE = Path(__file__).resolve().parent
REGIONS = ["north", "south", "east", "west"]


def visits(n: int, *, seed: int) -> pd.DataFrame:
    """``n`` made-up visits: region (missing when not recorded), age, sex, morning visit, wait, satisfied, date."""
    rng = np.random.default_rng(seed)
    region = rng.choice(REGIONS, size=n, p=[0.35, 0.25, 0.25, 0.15])
    age = np.clip(np.round(rng.gamma(6.0, 8.0, n) + 18), 18, 95).astype(int)
    sex = rng.choice(["female", "male"], size=n, p=[0.54, 0.46])
    morning = rng.random(n) < 1 / (1 + np.exp(-(age - 55) / 12))
    base = np.select([region == "north", region == "south", region == "east"], [25.0, 55.0, 35.0], 80.0)
    wait = np.clip(np.round(rng.gamma(2.0, base / 2.0) + np.where(morning, 0.0, 10.0), 1), 0, 240)
    satisfied = rng.random(n) < 1 / (1 + np.exp((wait - 45) / 15))
    day = pd.Timestamp("2024-01-01") + pd.to_timedelta(rng.integers(0, 366, n), unit="D")
    df = pd.DataFrame({
        "region": region, "age": age, "sex": sex, "morning": morning,
        "wait_minutes": wait, "satisfied": satisfied, "visit_date": day.strftime("%Y-%m-%d"),
    })
    df.loc[rng.random(n) < 0.06, "region"] = np.nan            # the form's region box was left empty
    return df


SCHEMA = {
    "format": "dpkme.table_schema",
    "version": 1,
    "columns": [
        {"name": "region", "kind": "categorical", "categories": REGIONS, "missing": "category"},
        {"name": "age", "kind": "integer", "lower": 18, "upper": 95, "missing": "error"},
        {"name": "sex", "kind": "categorical", "categories": ["female", "male"], "missing": "error"},
        {"name": "morning", "kind": "boolean", "missing": "error"},
        {"name": "wait_minutes", "kind": "continuous", "lower": 0.0, "upper": 240.0, "missing": "error",
         "decimals": 1},
        {"name": "satisfied", "kind": "boolean", "missing": "error"},
        {"name": "visit_date", "kind": "datetime", "lower": "2024-01-01", "upper": "2024-12-31", "missing": "error"},
    ],
}


def main() -> None:
    import json
    visits(600, seed=20240101).to_csv(HERE / "visits.csv", index=False)
    visits(80, seed=20231231).to_csv(HERE / "visits_public.csv", index=False)
    (HERE / "visits.schema.json").write_text(json.dumps(SCHEMA, indent=2) + "\n")


if __name__ == "__main__":
    main()
