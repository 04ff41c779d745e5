"""A small mixed table and its declared schema, shared by the table-release tests."""

from __future__ import annotations

import numpy as np
import pandas as pd

from dpkme.schema import ColumnSpec, TableSchema

N = 400


FAST = dict(n_features=300, solver_options={"pool_size": 2000, "max_iter": 30})


SPECIES = ["Adelie", "Chinstrap", "Gentoo"]


def _schema(**kw) -> TableSchema:
    return TableSchema([
        ColumnSpec("species", "categorical", categories=SPECIES),
        ColumnSpec("bill_mm", "continuous", lower=30, upper=60, decimals=1, lengthscale=0.2),
        ColumnSpec("flipper_mm", "integer", lower=170, upper=235, lengthscale=0.2),
        ColumnSpec("mass_g", "continuous", lower=2500, upper=6500, missing="category", decimals=0,
                   lengthscale=0.2),
        ColumnSpec("sex", "categorical", categories=["female", "male"], missing="category"),
        ColumnSpec("tagged", "boolean"),
        ColumnSpec("seen", "datetime", lower="2007-01-01", upper="2009-12-31", lengthscale=0.2),
    ], **kw)


def _table(n=N, seed=0) -> pd.DataFrame:
    """Three clusters (species) with correlated measurements; 5 % missing sex, 3 % missing mass."""
    rng = np.random.default_rng(seed)
    s = rng.choice(3, size=n, p=[0.45, 0.2, 0.35])
    bill = np.array([38.8, 48.8, 47.5])[s] + rng.normal(0, 2.5, n)
    flipper = np.rint(np.array([190, 196, 217])[s] + rng.normal(0, 6, n)).astype(int)
    mass = np.array([3700, 3730, 5080])[s] + rng.normal(0, 400, n)
    mass[rng.random(n) < 0.03] = np.nan
    sex = np.where(rng.random(n) < 0.5, "female", "male").astype(object)
    sex[rng.random(n) < 0.05] = None
    seen = pd.Timestamp("2007-06-01") + pd.to_timedelta(rng.integers(0, 900, n), unit="D")
    return pd.DataFrame({"species": np.array(SPECIES, dtype=object)[s], "bill_mm": bill, "flipper_mm": flipper,
                         "mass_g": mass, "sex": sex, "tagged": rng.random(n) < 0.3, "seen": seen})


