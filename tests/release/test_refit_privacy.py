"""DP review of the table pool re-fit and the marginal block (issue 15): an attack on post-processing.

Two different private tables of the same (public) size N, given the *same* privatised vector and the same public
streams, must give the same release bit for bit -- including the re-fit's skip decision and its discrepancy stop,
which may read only the privatised vector and the public noise level. Anything else (a stopping rule or a skip that
read the rows, the exact embedding or N through another door) would make the outputs differ.
"""

from __future__ import annotations

import numpy as np
import pytest

import dpkme.release.random_features as rf
from dpkme.release.tabular import release_table
from tests.support.tables import N, _schema, _table

RUN = {"pool_size": 2000, "max_iter": 40, "discrepancy": 1e-3}     # the re-fit runs (never stopped by the noise)


def _same_mu_tilde(monkeypatch):
    """Every release gets the privatised vector of the first call, whatever rows it is given."""
    original = rf.privatise_feature_mean
    first = {"calls": 0}

    def fixed(X, features, **kw):
        out = original(X, features, **kw)
        first["calls"] += 1
        first.setdefault("out", (out[0].copy(), out[1]))
        return first["out"][0].copy(), first["out"][1]

    monkeypatch.setattr(rf, "privatise_feature_mean", fixed)
    return first


# (re-fit, marginal share): the marginal block needs the re-fit (refused without it: test_marginal_features)
CASES = [(None, "auto"), (RUN, "auto"), ("default", "auto"), (RUN, 0.3), ("default", 0.3)]


@pytest.mark.parametrize(("refit", "share"), CASES,
                         ids=["off", "runs", "default-skip-or-stop", "runs-marginals", "default-marginals"])
@pytest.mark.parametrize("epsilon", [0.3, 30.0])
def test_release_depends_on_the_rows_only_through_the_privatised_vector(monkeypatch, refit, epsilon, share):
    seen = _same_mu_tilde(monkeypatch)
    a, b = _table(seed=0), _table(seed=1)
    b["bill_mm"] = 60.0 - (b["bill_mm"] - 30.0)         # other rows: shifted columns, same N
    assert len(a) == len(b) == N and not a.equals(b)
    options = {"pool_size": 2000, "max_iter": 30}
    if refit != "default":
        options["refit"] = refit
    rels = [release_table(df, schema=_schema(), epsilon=epsilon, delta=1e-6, n_points=12, random_state=0,
                          n_features=300, solver_options=options, marginal_share=share) for df in (a, b)]
    assert seen["calls"] == 2                             # both releases went through the patched mechanism
    np.testing.assert_array_equal(rels[0].points, rels[1].points)
    np.testing.assert_array_equal(rels[0].weights, rels[1].weights)
    assert rels[0].to_csv() == rels[1].to_csv()
