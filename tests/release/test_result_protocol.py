"""One result protocol for every release type (issue 24): ``.charge``, ``.metadata()``, ``.to_json()``.

Every release function returns a :class:`~dpkme.privacy.result.PrivateResult`. Its ``charge`` is computed once by
the mechanism where it draws its noise and equals what the companion charge function computes from the same public
parameters (epsilon, delta, noise multiplier, relation); ``to_json()`` parses, carries that charge (same id) and, for
a real release (fresh OS-entropy noise), no seed; the exported charge is its public record (no ledger id, no time). Sizes are tiny: the file runs in seconds (the DPGM run, which
compiles JAX code, is marked slow; a DPGM result built from its plan is checked here too).
"""

from __future__ import annotations

import json

import numpy as np
import pandas as pd
import pytest

from dpkme.clustering import clusterwise_release, dp_kernel_kmeans, kernel_kmeans, plan_kmeans
from dpkme.distributed import algorithm2 as distributed_algorithm2
from dpkme.kernels import GaussianKernel
from dpkme.privacy.accounting import PrivacyCharge, pure_dp_charge
from dpkme.privacy.bandwidth import lengthscale_grid, private_lengthscale
from dpkme.privacy.discovery import category_threshold, private_bounds, private_categories
from dpkme.privacy.result import PrivateResult
from dpkme.release import (
    Release,
    algorithm1,
    algorithm1_charge,
    algorithm2,
    algorithm2_charge,
    exponential_mechanism,
    exponential_mechanism_charge,
    gp_release,
    gp_release_charge,
    release_table,
    uniform_baseline,
)
from dpkme.release.gp import grid_axes
from dpkme.schema import ColumnSpec, TableSchema
from dpkme.two_sample import make_features, nonprivate_test, tcmc_test
from dpkme.two_sample.private import calibrate_moments
from dpkme.two_sample.result import combined_charge
from dpkme.two_sample.sensitivity import paired_mean_sensitivity, paired_second_moment_sensitivity

K = GaussianKernel(lengthscale=1.0)
RNG = np.random.default_rng(0)
X = RNG.normal(size=(60, 2))
EPS, DELTA = 1.0, 1e-6


def _same(charge: PrivacyCharge, expected: PrivacyCharge) -> None:
    """The public cost: mechanism, (epsilon, delta), count, noise multiplier and relation."""
    assert (charge.mechanism, charge.count, charge.delta) == (expected.mechanism, expected.count, expected.delta)
    assert charge.epsilon == pytest.approx(expected.epsilon, rel=1e-12)
    if expected.noise_multiplier is None:
        assert charge.noise_multiplier is None
    else:
        assert charge.noise_multiplier == pytest.approx(expected.noise_multiplier, rel=1e-12)
    assert charge.relation is expected.relation and charge.parts == expected.parts


def _check(result, expected: PrivacyCharge | None, *, real: bool = True) -> dict:
    """The protocol: members, a parsable export with the charge's record, no seed in a real release."""
    assert isinstance(result, PrivateResult)
    meta = result.metadata()
    assert isinstance(meta, dict)
    d = json.loads(result.to_json())
    if expected is None:
        assert result.charge is None and d["charge"] is None
    else:
        assert isinstance(result.charge, PrivacyCharge)
        assert result.charge is result.charge                      # a stored field: one charge, one id
        _same(result.charge, expected)
        assert d["charge"]["relation"] == expected.relation.value and "id" not in d["charge"]
        assert "created" not in d["charge"]
        _same(PrivacyCharge.from_record(d["charge"]), expected)
    if real:
        assert d.get("seed") is None and d.get("noise_seed") is None and "seed_warning" not in d
    return d


# --------------------------------------------------------------------------- weighted-points releases
def test_algorithm1_and_algorithm2():
    rel = algorithm1(X, None, kernel=K, epsilon=EPS, delta=DELTA, n_points=5, q_scale=2.0)
    d = _check(rel, algorithm1_charge(n_private=60, kernel=K, epsilon=EPS, delta=DELTA))
    back = Release.from_json(json.dumps(d))
    _same(back.charge, rel.charge)                                  # read back: the same cost (a new id)
    rel2 = algorithm2(X, kernel=K, epsilon=EPS, delta=DELTA, n_points=4, n_features=40, preset="interactive")
    _check(rel2, algorithm2_charge(n_private=60, epsilon=EPS, delta=DELTA))


def test_add_remove_relation_is_typed():
    rel = algorithm2(X, kernel=K, epsilon=EPS, delta=DELTA, n_points=4, n_features=40, neighbouring="add-remove",
                     n_private=60, preset="interactive")
    _check(rel, algorithm2_charge(n_private=60, epsilon=EPS, delta=DELTA, neighbouring="add-remove"))
    assert rel.charge.relation.value == "add-remove" == rel.charge.details["neighbouring"]   # the legacy mirror


def test_exponential_mechanism_and_uniform_baseline():
    rel = exponential_mechanism(X[:30, :1], np.linspace(-2, 2, 4)[:, None], kernel=K, epsilon=0.5, m=2)
    _check(rel, exponential_mechanism_charge(epsilon=0.5))
    _check(uniform_baseline(X[:5], kernel=K), None)


def test_seeded_release_keeps_its_charge_and_says_it_is_not_private():
    rel = algorithm1(X, None, kernel=K, epsilon=EPS, delta=DELTA, n_points=5, q_scale=2.0, random_state=3)
    d = _check(rel, algorithm1_charge(n_private=60, kernel=K, epsilon=EPS, delta=DELTA), real=False)
    assert d["seed"] == 3 and d["differentially_private"] is False


def test_distributed_release():
    rel = distributed_algorithm2(X, kernel=K, epsilon=EPS, delta=DELTA, n_points=4, n_features=40,
                                 bounds=(-10.0, 10.0), preset="interactive")
    _check(rel, algorithm2_charge(n_private=60, epsilon=EPS, delta=DELTA))


def test_table_release():
    schema = TableSchema([ColumnSpec("kind", "categorical", categories=["a", "b"]),
                          ColumnSpec("size", "continuous", lower=0, upper=10, lengthscale=0.3)])
    rng = np.random.default_rng(1)
    df = pd.DataFrame({"kind": rng.choice(["a", "b"], 80), "size": rng.uniform(0, 10, 80)})
    rel = release_table(df, schema=schema, epsilon=EPS, delta=DELTA, n_points=6, n_features=40,
                        solver_options={"pool_size": 300, "max_iter": 10})
    d = _check(rel, algorithm2_charge(n_private=80, epsilon=EPS, delta=DELTA))
    assert d["kind"] == "table" and rel.charge is rel.release.charge


def test_gp_release():
    rel = gp_release(X, kernel=K, epsilon=EPS, delta=DELTA, grid=grid_axes([-2, -2], [2, 2], 4))
    _check(rel, gp_release_charge(n_private=60, kernel=K, epsilon=EPS, delta=DELTA, dim=2))
    assert rel.privacy_charge().id != rel.charge.id                 # privacy_charge: a new spending, as before


# --------------------------------------------------------------------------- clustering
KM = dict(k=2, epsilon=EPS, delta=DELTA, n_iter=2, kernel=K, n_features=20, bounds=([-3, -3], [3, 3]),
          n_candidates=40)


def test_dp_kernel_kmeans_and_its_non_private_reference():
    res = dp_kernel_kmeans(X, **KM)
    _check(res, plan_kmeans(epsilon=EPS, delta=DELTA, n_iter=2, n_features=20).total_charge())
    ref = kernel_kmeans(X, k=2, n_iter=2, kernel=K, n_features=20, bounds=([-3, -3], [3, 3]), n_candidates=40)
    _check(ref, None, real=False)


def test_clusterwise_release():
    # two blobs, enough rows and budget that a fresh-noise run always keeps a cluster (else it raises)
    B = np.concatenate([RNG.normal(-2, 0.3, (150, 2)), RNG.normal(2, 0.3, (150, 2))])
    cw = clusterwise_release(B, n_points=4, **{**KM, "epsilon": 4.0})
    plan = plan_kmeans(epsilon=4.0, delta=DELTA, n_iter=2, n_features=20, release_share=0.5)
    _check(cw, plan.total_charge())
    assert cw.charge is cw.release.charge is cw.clustering.charge    # one spending, not three
    _check(cw.release, plan.total_charge())


# --------------------------------------------------------------------------- two-sample tests
def test_two_sample_tests():
    feats = make_features("rff", n_features=6, public_sample=np.zeros((5, 2)), lengthscale=1.0, random_state=0)
    Y = RNG.normal(size=(60, 2))
    res = tcmc_test(X, Y, features=feats, epsilon=EPS, delta=1e-5, n_null=200)
    cal = calibrate_moments(epsilon=EPS, delta=1e-5,
                            sensitivity_mean=paired_mean_sensitivity(n=60, diff_bound=feats.diff_bound, unit="pair"),
                            sensitivity_second=paired_second_moment_sensitivity(n=60, diff_bound=feats.diff_bound,
                                                                                unit="pair"))
    expected = combined_charge(cal.charges("TCMC two-sample test"), delta=1e-5, label="TCMC two-sample test")
    _check(res, expected)
    assert res.charge.epsilon <= res.epsilon * (1 + 1e-6)           # exact Gaussian composition <= the accountant's
    _check(nonprivate_test(X, Y, features=feats, n_null=200), None)


# --------------------------------------------------------------------------- discovery and length scales
def test_private_bounds_categories_and_lengthscale():
    b = private_bounds(X[:, 0], epsilon=0.5, lower=-5, upper=5)
    _check(b, pure_dp_charge("x", epsilon=0.25, count=2, relation="replace-one"))
    c = private_categories(["a"] * 40 + ["b"] * 3, epsilon=EPS, delta=DELTA)
    category_threshold(epsilon=EPS, delta=DELTA)                        # public: no data read
    _check(c, PrivacyCharge(label="x", mechanism="approx-dp", epsilon=EPS, delta=DELTA, relation="replace-one"))
    ls = private_lengthscale(X, grid=lengthscale_grid(0.1, 5.0, 8), epsilon=0.5)
    _check(ls, pure_dp_charge("x", epsilon=0.5, relation="replace-one"))


# --------------------------------------------------------------------------- generative models
def test_dpgm_result_built_from_its_plan():
    from dpkme.generative.accounting import plan_dpgm
    from dpkme.generative.dpgm import DPGMResult

    plan = plan_dpgm(epsilon=4.0, delta=1e-5, n_private=80, batch_size=16, epochs=1, k=1)
    res = DPGMResult(model_config={"kind": "vae"}, params={}, weights=np.ones(1), noisy_sizes=np.array([80.0]),
                     bounds=(np.zeros(2), np.ones(2)), n_classes=0, plan=plan, steps_run=plan.steps, private=True,
                     noise_source="os-entropy", loss_history=np.zeros(plan.steps), config={}, charge=plan.charge())
    _check(res, plan_dpgm(epsilon=4.0, delta=1e-5, n_private=80, batch_size=16, epochs=1, k=1).charge())


@pytest.mark.slow
def test_dpgm_run_stores_its_planned_charge():
    from dpkme.generative import dpgm
    from dpkme.generative.accounting import plan_dpgm

    U = np.random.default_rng(2).uniform(0, 10, (80, 2))
    res = dpgm(U, bounds=(0, 10), n_private=80, k=1, epochs=1, batch_size=16, hidden=(4,), latent_dim=2, epsilon=4.0)
    _check(res, plan_dpgm(epsilon=4.0, delta=1e-5, n_private=80, batch_size=16, epochs=1, k=1).charge())
    twin = dpgm(U, bounds=(0, 10), n_private=80, k=1, epochs=1, batch_size=16, hidden=(4,), latent_dim=2,
                private=False)
    _check(twin, None, real=False)
