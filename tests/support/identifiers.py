"""A table with identifier-like columns (row names, running integers, unique strings), shared by the suggestion tests."""

from __future__ import annotations

import numpy as np
import pandas as pd


def _table(n: int = 60, seed: int = 0) -> pd.DataFrame:
    rng = np.random.default_rng(seed)
    return pd.DataFrame({
        "Unnamed: 0": np.arange(n),                                  # pandas' index written as a column
        "n": np.arange(1, n + 1)[rng.permutation(n)],                # a running number, shuffled
        "code": [f"P{i:04d}" for i in rng.permutation(n)],           # every value distinct: an identifier
        "age": rng.integers(18, 90, n),
        "city": rng.choice(["Basel", "Bern", "Chur"], n),
        "income": rng.normal(50_000, 8_000, n).round(2),
    })


