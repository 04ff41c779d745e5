"""The convex re-fit of simplex weights over a candidate pool (dpkme.reduced_set.refit, issue 15).

Post-processing of the privatised vector: it must never read the rows, keep every atom a valid row of the
declared domain, return weights on the simplex, be deterministic given the stream, and hold the pool's
features within the declared memory.
"""

from __future__ import annotations

import importlib

import numpy as np
import pytest

import dpkme.privacy.calibration as mechanisms
from dpkme import GaussianKernel
from dpkme.kernels.random_features import RandomFourierFeatures
from dpkme.reduced_set import FourierMap, Problem
from dpkme.reduced_set.refit import refit_pool
from dpkme.release.tabular import TABLE_REFIT, release_table
from dpkme.schema import TableSchema
from tests.support.sentinel import Sentinel  # the one private-data sentinel of the suite
from tests.support.tables import FAST, N, _schema, _table

pursuit_module = importlib.import_module("dpkme.reduced_set.pursuit")   # the package's `pursuit` is the function
refit_module = importlib.import_module("dpkme.reduced_set.refit")
RUN = {"pool_size": 3000, "max_iter": 60, "discrepancy": 1e-3}     # small, and never stopped by the noise


def _problem(schema, *, n=300, J=400, seed=0):
    """A target from rows of the domain (no noise) and deliberately poor atoms: uniform domain draws."""
    rng = np.random.default_rng(seed)
    feats = RandomFourierFeatures(GaussianKernel(lengthscale=1.0), n_components=J, random_state=seed).fit(schema.dim)
    fmap = FourierMap.from_features(feats, dtype="float64")
    dom = schema.domain
    rows = dom.sample(n, rng)
    rows = rows[np.argsort(rows[:, 1])]                          # sorted: a third of them is a corner
    target = fmap.features(rows[: n // 3]).mean(axis=0)          # a third of them: far from uniform
    Z = dom.sample(40, rng)
    return Problem(target, fmap), Z, np.full(40, 1 / 40), dom


def test_refit_lowers_the_residual_and_keeps_atoms_in_the_domain_on_the_simplex():
    schema = _schema()
    problem, Z, w, dom = _problem(schema)
    Zr, wr, info = refit_pool(problem, Z, w, rng=np.random.default_rng(1), domain=dom, pool_size=2000,
                              max_iter=200)
    before = np.linalg.norm(problem.fmap.residual(Z, w, problem.target))
    after = np.linalg.norm(problem.fmap.residual(Zr, wr, problem.target))
    assert info["residual_before"] == pytest.approx(before, rel=1e-9)
    assert info["residual_after"] == pytest.approx(after, rel=1e-9)
    assert after < 0.7 * before
    assert Zr.shape[0] <= Z.shape[0] and Zr.shape[1] == schema.dim
    assert bool(dom.contains(Zr).all())                          # every atom a valid row
    np.testing.assert_allclose(dom.project(Zr), Zr, atol=1e-12)  # levels and categories exactly
    assert np.all(wr >= 0) and wr.sum() == pytest.approx(1.0, abs=1e-12)
    assert info["feature_bytes"] == 4 * info["pool_size"] * problem.fmap.n_components


def test_refit_is_deterministic_given_the_stream_and_independent_of_the_block_size():
    schema = _schema()
    problem, Z, w, dom = _problem(schema)
    a = refit_pool(problem, Z, w, rng=np.random.default_rng(5), domain=dom, pool_size=1500, max_iter=80)
    b = refit_pool(problem, Z, w, rng=np.random.default_rng(5), domain=dom, pool_size=1500, max_iter=80)
    c = refit_pool(problem, Z, w, rng=np.random.default_rng(5), domain=dom, pool_size=1500, max_iter=80,
                   block_rows=97)
    np.testing.assert_array_equal(a[0], b[0])
    np.testing.assert_array_equal(a[1], b[1])
    np.testing.assert_array_equal(a[0], c[0])                    # same pool, same candidates kept
    # float32 features, float64 accumulation: blocks change only the summation order of the pool's gradient
    np.testing.assert_allclose(a[1], c[1], atol=1e-5)


def test_refit_stops_at_the_noise_level_and_never_returns_a_worse_fit():
    schema = _schema()
    problem, Z, w, dom = _problem(schema)
    r0 = np.linalg.norm(problem.fmap.residual(Z, w, problem.target))
    sigma = 2 * r0 / np.sqrt(problem.fmap.n_components)          # the atoms already fit within the noise
    Zs, ws, info = refit_pool(problem, Z, w, rng=np.random.default_rng(0), domain=dom, noise_sigma=sigma)
    assert info["skipped"] and info["pool_size"] == 0
    np.testing.assert_array_equal(Zs, Z)
    np.testing.assert_array_equal(ws, w)
    _Zr, _wr, info = refit_pool(problem, Z, w, rng=np.random.default_rng(0), domain=dom, pool_size=2000,
                              noise_sigma=0.5 * r0 / np.sqrt(problem.fmap.n_components))
    assert not info["skipped"] and info["residual_after"] <= info["residual_before"]
    _, _, free = refit_pool(problem, Z, w, rng=np.random.default_rng(0), domain=dom, pool_size=2000)
    assert free["residual_after"] <= info["residual_after"] and free["iterations"] >= info["iterations"]


def test_refit_memory_is_bounded_and_options_are_validated():
    schema = _schema()
    problem, Z, w, dom = _problem(schema)
    J = problem.fmap.n_components
    with pytest.raises(ValueError, match="max_bytes"):
        refit_pool(problem, Z, w, rng=np.random.default_rng(0), domain=dom, pool_size=5000, max_bytes=4 * J * 4999)
    for kwargs, match in [({"pool_size": 10}, "pool_size=10"), ({"scales": ()}, "scales"),
                          ({"scales": (-1.0,)}, "scales"), ({"uniform_share": 0.6, "cross_share": 0.6}, "at most 1"),
                          ({"max_iter": -1}, "max_iter"), ({"block_rows": 0}, "block_rows")]:
        with pytest.raises(ValueError, match=match):
            refit_pool(problem, Z, w, rng=np.random.default_rng(0), domain=dom, **kwargs)
    with pytest.raises(ValueError, match="weights must be"):
        refit_pool(problem, Z, -w, rng=np.random.default_rng(0), domain=dom)
    with pytest.raises(ValueError, match="unknown option"):
        release_table(_table(), schema=_schema(), epsilon=1.0, delta=1e-6, n_points=12, random_state=0,
                      n_features=300, solver_options={"refit": {"pool": 10}})


def test_table_release_refits_by_default_and_records_it():
    rel = release_table(_table(), schema=_schema(), epsilon=1.0, delta=1e-6, n_points=12, random_state=0, **FAST)
    assert rel.release.params["solver_options"]["refit"] == TABLE_REFIT
    diag = rel.release.params["refit"]                             # its diagnostics, recorded with the release
    assert {"pool_size", "iterations", "residual_before", "residual_after", "skipped"} <= set(diag)
    assert diag["residual_after"] <= diag["residual_before"]
    off = release_table(_table(), schema=_schema(), epsilon=1.0, delta=1e-6, n_points=12, random_state=0,
                        n_features=300, solver_options={"pool_size": 2000, "max_iter": 30, "refit": None})
    assert off.release.params["solver_options"]["refit"] is None and "refit" not in off.release.params


def test_table_release_with_refit_runs_and_stays_in_the_domain():
    opts = {"pool_size": 2000, "max_iter": 30, "refit": RUN}
    rel = release_table(_table(), schema=_schema(), epsilon=1.0, delta=1e-6, n_points=12, random_state=0,
                        n_features=300, solver_options=opts)
    again = release_table(_table(), schema=_schema(), epsilon=1.0, delta=1e-6, n_points=12, random_state=0,
                          n_features=300, solver_options=opts)
    np.testing.assert_array_equal(rel.points, again.points)       # replayable given the seed
    assert rel.n_points <= 12 and bool(_schema().domain.contains(rel.points).all())
    assert np.all(rel.weights >= 0) and rel.weights.sum() == pytest.approx(1.0, abs=1e-9)


@pytest.mark.parametrize("share", [0, 0.3], ids=["kernel-only", "with-marginals"])
def test_refit_never_sees_the_private_rows(monkeypatch, share):
    sentinels = []
    original_encode = TableSchema.encode
    monkeypatch.setattr(TableSchema, "encode", lambda self, df: sentinels.append(Sentinel(original_encode(self, df)))
                        or sentinels[-1])
    original_noise = mechanisms.gaussian_noise

    def noise_then_lock(shape, *, sigma, rng):
        out = original_noise(shape, sigma=sigma, rng=rng)
        for s in sentinels:
            s.locked = True
        return out

    monkeypatch.setattr(mechanisms, "gaussian_noise", noise_then_lock)
    calls = []
    original_refit = pursuit_module.refit_pool

    def spy(problem, points, weights, **kwargs):
        calls.append([a.shape for a in (problem.target, points, weights, *kwargs.values())
                      if isinstance(a, np.ndarray)])
        out = original_refit(problem, points, weights, **kwargs)
        calls[-1].append(out[2]["pool_size"])
        return out

    monkeypatch.setattr(pursuit_module, "refit_pool", spy)
    monkeypatch.setattr(refit_module, "refit_pool", spy)      # the joint re-fit of the marginal block
    release_table(_table(), schema=_schema(), epsilon=1.0, delta=1e-6, n_points=12, random_state=0, n_features=300,
                  solver_options={"pool_size": 2000, "max_iter": 30, "refit": RUN}, marginal_share=share)
    assert len(calls) == 1 and calls[0][-1] > 0                   # it ran, over a pool
    assert all(s[0] != N for s in calls[0][:-1]), "the re-fit received an array with N rows"
    assert sentinels and sentinels[0].locked and sentinels[0].reads_after_lock == 0


def test_refit_is_cancellable_through_progress():
    class Stop(Exception):
        pass

    def progress(fraction, message):
        if message.startswith("re-fit"):
            raise Stop

    with pytest.raises(Stop):
        release_table(_table(), schema=_schema(), epsilon=1.0, delta=1e-6, n_points=12, random_state=0,
                      n_features=300, solver_options={"pool_size": 2000, "max_iter": 30, "refit": RUN},
                      progress=progress)
