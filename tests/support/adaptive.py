"""A small mixed table, its schema, fast settings and a stub fit, shared by the adaptive release's privacy tests."""

from __future__ import annotations

import numpy as np
import pandas as pd

from dpkme.schema import ColumnSpec, TableSchema


# --------------------------------------------------------------------------- helpers
def _schema() -> TableSchema:
    return TableSchema([
        ColumnSpec("x", "continuous", lower=0, upper=10, missing="category"),
        ColumnSpec("c", "categorical", categories=["a", "b", "c"], missing="category"),
        ColumnSpec("k", "integer", lower=0, upper=5, missing="impute", impute=2),
        ColumnSpec("b", "boolean", missing="category"),
        ColumnSpec("y", "continuous", lower=-1, upper=1),
    ])


def _table(n: int, seed: int) -> pd.DataFrame:
    g = np.random.default_rng(seed)
    return pd.DataFrame({
        "x": g.uniform(-1, 11, n), "c": g.choice(["a", "b", "c", "zz"], n), "k": g.integers(0, 6, n),
        "b": g.choice([True, False], n), "y": g.uniform(-1, 1, n),
    })


class _StubFit:
    """Stand-in for RelaxedFit (post-processing only): answers are constant vectors whose value moves when
    ``fit`` "moves", which drives the annealing rule into a chosen pattern."""

    mode = "always"          # "always": never moves (always anneal); "never": always moves; "random": coin

    def __init__(self, domain, n_rows, rng, *, eligible3=None, slots3=1, learning_rate=None):
        self.domain, self.n_rows = domain, int(n_rows)
        self._tick = 0
        self._coin = np.random.default_rng(12345)
        self.added = []

    def add(self, subset, y, sigma):
        assert np.asarray(y).size == self.domain.query_size(tuple(subset))
        self.added.append((tuple(subset), float(sigma)))

    def initialise(self, j, y, rng):
        pass

    def fit(self, n_steps, *, settle=False):
        if self.mode == "never" or (self.mode == "random" and self._coin.random() < 0.5):
            self._tick += 1

    def answers(self, subsets):
        return [np.full(self.domain.query_size(tuple(s)), 1000.0 * self._tick) for s in subsets]

    def decode(self, rng, *, method="sample", rows=None):
        n = self.n_rows if rows is None else len(rows)
        return pd.DataFrame({name: np.zeros(n) for name in self.domain.names})


FAST = dict(synthetic_rows=10, round_steps=1, final_steps=1)


