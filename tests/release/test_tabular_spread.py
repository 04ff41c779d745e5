"""Resampled table rows keep the release's column means near the declared bounds (``TableRelease.sample``).

A fixed standard deviation truncated at a bound moves mass inwards: on a zero-inflated column (most rows at the
lower bound) the resampled mean was about twice the release's. The spread shrinks near the bounds instead.
"""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest

from dpkme.release.tabular import release_table
from dpkme.schema import ColumnSpec, TableSchema


@pytest.fixture(scope="module")
def zero_inflated_release():
    gen = np.random.default_rng(0)
    n = 3000
    rain = np.where(gen.random(n) < 0.6, 0.0, gen.gamma(1.5, 6.0, size=n)).clip(0, 50)
    days = np.where(gen.random(n) < 0.5, 0, gen.integers(1, 10, size=n))
    df = pd.DataFrame({"rain": rain, "days": days, "temp": gen.normal(15, 6, size=n).clip(-10, 40)})
    schema = TableSchema([ColumnSpec("rain", "continuous", lower=0, upper=50),
                          ColumnSpec("days", "integer", lower=0, upper=9),
                          ColumnSpec("temp", "continuous", lower=-10, upper=40)])
    rel = release_table(df, schema=schema, epsilon=1.0, delta=1e-6, n_points=100, n_features=500, random_state=3)
    return rel


@pytest.mark.parametrize("spread", [None, 0.5, 1.0])
def test_resampled_means_match_the_weighted_atoms_near_a_bound(zero_inflated_release, spread):
    rel = zero_inflated_release
    atoms = rel.table()
    rows = rel.sample(40_000, rng=np.random.default_rng(1), spread=spread)
    for col, lo, hi in (("rain", 0, 50), ("days", 0, 9), ("temp", -10, 40)):
        target = float((atoms[col].astype(float) * atoms["weight"]).sum())
        x = rows[col].astype(float).to_numpy()
        assert x.min() >= lo and x.max() <= hi
        # resampling error: a few standard errors of the mean of 40 000 draws, plus the rounding of integers
        tol = 4 * x.std() / np.sqrt(x.size) + (0.5 if col == "days" else 0.0) * 0.1 + 1e-9
        assert abs(x.mean() - target) <= tol + 0.01 * (hi - lo), (col, x.mean(), target)


def test_an_atom_on_a_bound_stays_on_it(zero_inflated_release):
    rel = zero_inflated_release
    atoms = rel.table()
    at_zero = float(atoms.loc[atoms["rain"] == 0, "weight"].sum())
    rows = rel.sample(40_000, rng=np.random.default_rng(2))
    share = float((rows["rain"] == 0).mean())
    assert share == pytest.approx(at_zero, abs=4 * np.sqrt(max(at_zero * (1 - at_zero), 1e-4) / 40_000) + 1e-3)
