"""DP review of the marginal block of table releases (issue 15).

The claim under review: :math:`\\chi(x) = [\\sqrt{1-h}\\,\\phi(x);\\ \\sqrt h\\,\\psi(x)]` has norm at most
``JointFeatures.norm_bound`` (:math:`\\le 1` up to a float margin) for *every* embedded row, so one Gaussian mechanism
with :math:`\\Delta = 2b/N` (replace-one) or :math:`b/N` (add-remove) releases both blocks at Algorithm 2's charge,
and everything after it (the split, the solver, the joint re-fit, the recorded residuals and noise levels) is
post-processing of the one privatised vector and public inputs. Checked here:

* the norm bound over rows that no encoder produces (off-domain values, non one-hot groups, huge magnitudes) and over
  a wide table whose many terms accumulate float rounding;
* the noise actually added: one draw per coordinate of all :math:`J + H` coordinates, with the recorded
  :math:`\\sigma` (numpy and OpenDP samplers), and the blocks' noise :math:`\\sigma/\\sqrt{1-h}`, :math:`\\sigma/\\sqrt h`;
* the release's whole JSON (residuals and re-fit diagnostics included) is the same for two different tables given
  the same privatised vector, under replace-one and under add-remove with a declared ``n_private`` (tables of
  :math:`N` and :math:`N + 1` rows), and the statistic is the sum over the rows divided by the declared size;
* nothing recorded can regenerate the noise (OS-entropy and OpenDP releases carry no seed), and the consumers of the
  noise level read the kernel block's :math:`\\sigma/\\sqrt{1-h}`, not the joint :math:`\\sigma`.
"""

from __future__ import annotations

import json
import math

import numpy as np
import pandas as pd
import pytest

import dpkme.privacy.calibration as calibration_module
import dpkme.release.random_features as rf
from dpkme.kernels import GaussianKernel
from dpkme.kernels.marginal import JointFeatures, MarginalFeatures
from dpkme.kernels.random_features import RandomFourierFeatures
from dpkme.privacy.sensitivity import feature_mean_sensitivity
from dpkme.release import Release
from dpkme.release.random_features import privatise_feature_mean
from dpkme.release.tabular import (
    DEFAULT_ADDITIVE_SPREAD,
    SPREAD_PER_NOISE,
    TableRelease,
    release_table,
)
from dpkme.schema import ColumnSpec, TableSchema
from tests.support.tables import FAST, N, _schema, _table

#: FAST with a smaller re-fit (the block's re-fit runs at ON; the default pool of 12 000 and 1 000 iterations are slow)
FAST_BLOCK = dict(FAST, solver_options={**FAST["solver_options"], "refit": {"pool_size": 3000, "max_iter": 100}})
ON = 50.0          # epsilon at which the public rule turns the block on for N = 400 rows (see test_marginal_features)
PUBLIC_KEYS = {"pool_size", "iterations", "residual_before", "residual_after", "skipped", "feature_bytes",
               "support_refit_iterations", "kernel_residual", "marginal_residual", "share", "kernel_block_sigma",
               "marginal_block_sigma", "n_bins", "cells", "columns", "pairs", "pair_bins", "pair_weight", "max_cells",
               "marginal_candidates"}   # a count: how many pool candidates were drawn from the released cells


def _joint(schema, *, share=0.3, n_features=200, pairs="all", seed=0):
    rff = RandomFourierFeatures(GaussianKernel(lengthscale=1.0), n_components=n_features, random_state=seed,
                                dtype="float32").fit(schema.dim)
    return JointFeatures(rff, MarginalFeatures(schema, pairs=pairs), share=share)


def _chi(joint, Z) -> np.ndarray:
    """The joint map row by row, as the mechanism computes it (float64 renormalised features, exact cells)."""
    a, b = math.sqrt(1.0 - joint.share), math.sqrt(joint.share)
    return np.hstack([a * joint.features.transform(Z), b * joint.marginals.features(Z)])


def _fixed_mechanism(monkeypatch):
    """Every release gets the privatised vector of the first call; each call's inputs are recorded."""
    original = rf.privatise_feature_mean
    seen = {"calls": []}

    def fixed(X, features, **kw):
        out = original(X, features, **kw)
        seen["calls"].append({"X": np.array(X, copy=True), "features": features, "kw": kw, "cal": out[1]})
        seen.setdefault("out", (out[0].copy(), out[1]))
        return seen["out"][0].copy(), seen["out"][1]

    monkeypatch.setattr(rf, "privatise_feature_mean", fixed)
    return seen


def _capture_noise(monkeypatch):
    """Record the value and sigma given to the one place a release's Gaussian noise is added."""
    original = calibration_module.add_gaussian_noise
    calls = []

    def spy(value, *, sigma, rng=None, noise="numpy"):
        calls.append((np.array(value, dtype=np.float64, copy=True), float(sigma)))
        return original(value, sigma=sigma, rng=rng, noise=noise)

    monkeypatch.setattr(calibration_module, "add_gaussian_noise", spy)
    return calls


# ----------------------------------------------------------------------------------------------- the norm bound
def test_the_joint_norm_bound_holds_for_rows_no_encoder_produces():
    """Off-domain values, non one-hot groups (all zero, split, negative), huge magnitudes: psi stays one-hot."""
    schema = _schema()
    rng = np.random.default_rng(0)
    Z = rng.normal(0.0, 5.0, (600, schema.dim))
    Z[::5] = 0.0                     # every group all zero, every missing flag off
    Z[1::5] = 0.5                    # every group split evenly, both missing flags on
    Z[2::5] *= 1e6                   # far outside the box
    Z[3::5] = -np.abs(Z[3::5])       # negative everywhere
    for share in (1e-6, 0.3, 1.0 - 1e-6):
        joint = _joint(schema, share=share)
        C = _chi(joint, Z)
        norms = np.linalg.norm(C, axis=1)
        assert norms.max() <= joint.norm_bound, (share, norms.max() - joint.norm_bound)
        # Proposition 9's replace-one bound over every pair of these rows
        G = C @ C.T
        d2 = np.maximum(np.diag(G)[:, None] + np.diag(G)[None, :] - 2.0 * G, 0.0)
        assert math.sqrt(d2.max()) <= 2.0 * joint.norm_bound
        assert feature_mean_sensitivity(n=N, norm_bound=joint.norm_bound) == pytest.approx(2.0 / N, rel=1e-10)
        cells = joint.marginals.features(Z)
        assert np.all((cells > 0).sum(axis=1) == len(joint.marginals._terms))   # one cell of every term per row


def test_the_joint_norm_bound_holds_on_a_wide_table_with_many_terms():
    """Many terms (columns and the pairs the cell budget keeps) add float rounding; the margin covers it."""
    cols = [ColumnSpec(f"x{i}", "continuous", lower=0, upper=1) for i in range(30)]
    cols += [ColumnSpec(f"c{i}", "categorical", categories=[str(k) for k in range(12)]) for i in range(10)]
    cols += [ColumnSpec(f"b{i}", "boolean") for i in range(20)]
    schema = TableSchema(cols)
    joint = _joint(schema, share=0.3, n_features=40)
    assert len(joint.marginals._terms) > 200
    Z = np.vstack([schema.domain.sample(300, np.random.default_rng(1)),
                   np.random.default_rng(2).normal(0.0, 3.0, (300, schema.dim))])
    psi = joint.marginals.features(Z)
    assert np.abs(np.linalg.norm(psi, axis=1) - 1.0).max() <= 1e-13
    assert np.linalg.norm(_chi(joint, Z), axis=1).max() <= joint.norm_bound
    assert joint.norm_bound <= 1.0 + 1e-11


# ------------------------------------------------------------------------------------------- the noise added
@pytest.mark.parametrize(("noise", "reps"), [("numpy", 300), ("opendp", 30)])
def test_the_noise_has_the_recorded_sigma_on_every_one_of_the_j_plus_h_coordinates(noise, reps):
    if noise == "opendp":
        pytest.importorskip("opendp")
    schema = _schema()
    share = 0.3
    joint = _joint(schema, share=share, pairs="none")
    X = schema.encode(_table())
    exact = joint.mean_embedding(X)
    rng = np.random.default_rng(7)
    draws, sigmas = [], set()
    for _ in range(reps):
        mu, cal = privatise_feature_mean(X, joint, epsilon=1.0, delta=1e-6, rng=rng if noise == "numpy" else None,
                                         noise=noise)
        draws.append(mu - exact)
        sigmas.add(cal.sigma)
    (sigma,) = sigmas
    assert cal.sensitivity == pytest.approx(2.0 * joint.norm_bound / N, rel=1e-14)
    E = np.array(draws) / sigma
    J, H = joint.n_kernel, joint.marginals.n_components
    assert E.shape == (reps, J + H)
    for block in (E[:, :J], E[:, J:]):        # pooled variance of each block: chi-square, relative sd sqrt(2/n)
        tol = 6.0 * math.sqrt(2.0 / block.size)
        assert abs(float(np.mean(block**2)) - 1.0) <= tol, (noise, float(np.mean(block**2)))
        assert abs(float(block.mean())) <= 6.0 / math.sqrt(block.size)
    if noise == "numpy":                      # every coordinate noised, none with a smaller variance
        per_coord = np.mean(E**2, axis=0)
        assert per_coord.min() >= 1.0 - 6.0 * math.sqrt(2.0 / reps) and per_coord.max() <= 1.0 + 7.0 * math.sqrt(2.0 / reps)
    # after the split (post-processing): the blocks' noise is sigma / sqrt(1 - h) and sigma / sqrt(h)
    _k, _m, sk, sm = joint.split(np.array(draws[0]) + exact, sigma)
    assert sk == pytest.approx(sigma / math.sqrt(1 - share)) and sm == pytest.approx(sigma / math.sqrt(share))
    dk = np.array([joint.split(d + exact)[0] for d in draws]) - joint.split(exact)[0]
    dm = np.array([joint.split(d + exact)[1] for d in draws]) - joint.split(exact)[1]
    assert float(np.sqrt(np.mean(dk**2))) == pytest.approx(sk, rel=6.0 * math.sqrt(2.0 / dk.size))
    assert float(np.sqrt(np.mean(dm**2))) == pytest.approx(sm, rel=6.0 * math.sqrt(2.0 / dm.size))


def test_a_table_release_noises_the_whole_joint_vector_once_with_the_recorded_sigma(monkeypatch):
    calls = _capture_noise(monkeypatch)
    seen = _fixed_mechanism(monkeypatch)
    df = _table()
    rel = release_table(df, schema=_schema(), epsilon=1.0, delta=1e-6, n_points=12, random_state=0,
                        marginal_share=0.3, **FAST_BLOCK).release
    assert len(calls) == 1                                    # one mechanism for both blocks
    value, sigma = calls[0]
    joint = seen["calls"][0]["features"]
    assert isinstance(joint, JointFeatures) and value.shape == (joint.n_components,)
    np.testing.assert_allclose(value, joint.mean_embedding(_schema().encode(df)), rtol=0, atol=1e-15)
    assert sigma == rel.sigma and rel.sensitivity == pytest.approx(2.0 * joint.norm_bound / N, rel=1e-14)
    info = rel.params["marginals"]
    assert info["kernel_block_sigma"] == pytest.approx(sigma / math.sqrt(0.7), rel=1e-14)
    assert info["marginal_block_sigma"] == pytest.approx(sigma / math.sqrt(0.3), rel=1e-14)


# ------------------------------------------------------------------------------------ post-processing only
def _public_json(rel: TableRelease) -> dict:
    return json.loads(rel.release.to_json())


@pytest.mark.parametrize("share", [0.3, "auto"])
def test_the_whole_recorded_release_depends_on_the_rows_only_through_the_privatised_vector(monkeypatch, share):
    """Residuals, re-fit diagnostics, noise levels, cells: the JSON is the same for two tables with the same mu."""
    seen = _fixed_mechanism(monkeypatch)
    a, b = _table(seed=0), _table(seed=1)
    b["bill_mm"] = 60.0 - (b["bill_mm"] - 30.0)
    b["sex"] = None                                          # a column's cells all moved to "missing"
    rels = [release_table(df, schema=_schema(), epsilon=ON, delta=1e-6, n_points=12, random_state=0,
                          marginal_share=share, **FAST_BLOCK) for df in (a, b)]
    assert len(seen["calls"]) == 2
    assert not np.array_equal(seen["calls"][0]["X"], seen["calls"][1]["X"])
    ja, jb = _public_json(rels[0]), _public_json(rels[1])
    assert ja["params"]["marginals"]["share"] == 0.3
    assert ja == jb
    assert set(ja["params"]["marginals"]) <= PUBLIC_KEYS, set(ja["params"]["marginals"]) - PUBLIC_KEYS


def test_add_remove_neighbours_with_the_block_release_the_same_for_the_same_privatised_vector(monkeypatch):
    """Tables of N and N + 1 rows, declared n_private = N: the block, the share rule and the re-fit see N only."""
    seen = _fixed_mechanism(monkeypatch)
    calls = _capture_noise(monkeypatch)
    a = _table()
    b = pd.concat([a, _table(n=1, seed=9)], ignore_index=True)          # one row added
    rels = [release_table(df, schema=_schema(), epsilon=ON, delta=1e-6, n_points=12, random_state=0,
                          neighbouring="add-remove", n_private=N, **FAST_BLOCK) for df in (a, b)]
    ja, jb = _public_json(rels[0]), _public_json(rels[1])
    assert ja == jb and ja["n_private"] == N and ja["params"]["marginals"]["share"] == 0.3
    joint = seen["calls"][1]["features"]
    assert isinstance(joint, JointFeatures)
    assert rels[1].release.sensitivity == pytest.approx(joint.norm_bound / N, rel=1e-14)
    # the statistic is the sum of chi over the N + 1 rows divided by the declared N
    Xb = _schema().encode(b)
    np.testing.assert_allclose(calls[1][0], joint.mean_embedding(Xb) * (N + 1) / N, rtol=1e-13, atol=1e-16)


# --------------------------------------------------------------------------- no seed, no hidden noise level
def test_real_releases_with_the_block_record_no_seed_numpy_and_opendp():
    pytest.importorskip("opendp")
    df = _table()
    for noise in ("numpy", "opendp"):
        rel = release_table(df, schema=_schema(), epsilon=1.0, delta=1e-6, n_points=12, random_state=None,
                            marginal_share=0.3, noise=noise, **FAST_BLOCK).release
        meta = json.loads(rel.to_json(include_points=False))
        assert meta["seed"] is None and rel.seed is None
        assert meta["noise_source"] == ("os-entropy" if noise == "numpy" else "opendp")
        assert "seed_warning" not in meta and set(meta["params"]["marginals"]) <= PUBLIC_KEYS
        assert meta["params"]["marginals"]["kernel_block_sigma"] == pytest.approx(rel.sigma / math.sqrt(0.7))


def test_the_spread_rule_reads_the_kernel_blocks_noise_also_after_a_json_round_trip():
    """release.sigma is the joint vector's; the kernel features carry sigma / sqrt(1 - h): never under-stated."""
    rel = release_table(_table(), schema=_schema(), epsilon=1.0, delta=1e-6, n_points=12, random_state=0,
                        marginal_share=0.3, **FAST_BLOCK)
    J = rel.release.params["n_features"]
    expect = min(DEFAULT_ADDITIVE_SPREAD, SPREAD_PER_NOISE * rel.release.sigma / math.sqrt(0.7) * math.sqrt(J))
    assert rel.default_spread == pytest.approx(expect, rel=1e-12)
    back = TableRelease(release=Release.from_json(rel.release.to_json()), schema=rel.schema)
    assert back.default_spread == pytest.approx(rel.default_spread, rel=1e-12)


def test_the_apps_words_on_the_block_follow_the_calibration_the_release_runs_with(monkeypatch):
    """The Release page's caption must say what marginals_for (the run, ctx.calibration) will do: on an N where the
    analytic calibration turns the block on and the classic one leaves it off, each caption matches its run."""
    import types

    import ui.mechanisms.algorithm2 as A
    from dpkme.release.tabular import default_marginal_share, table_marginals

    schema = _schema()
    kw = dict(epsilon=0.5, delta=1e-6, n_columns=len(schema), pair_weight=0.5)
    n = next(n for n in range(1000, 200000, 500) if default_marginal_share(n_private=n, **kw) > 0)
    assert default_marginal_share(n_private=n, calibration="classic", **kw) == 0.0
    ds = types.SimpleNamespace(schema=schema, n=n, is_table=True)
    monkeypatch.setattr(A.S, "epsilon", lambda: 0.5)
    monkeypatch.setattr(A.S, "delta", lambda: 1e-6)
    options = {"weights": "simplex"}
    for cal in ("analytic", "classic"):
        monkeypatch.setattr(A.st, "session_state", {A.S.CALIBRATION: cal})
        run = table_marginals(schema, n_private=n, epsilon=0.5, delta=1e-6, solver_options=options, calibration=cal)
        text = A.marginal_block_text(ds, "pursuit-joint", options)
        assert ("Marginal block on" in text) == bool(run), (cal, text)
