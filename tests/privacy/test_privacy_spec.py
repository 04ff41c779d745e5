"""A typed PrivacySpec is accepted by the releases, their charges, the planners and the audits (issue 24).

For every entry point: ``privacy=PrivacySpec(...)`` gives the same charge (epsilon, delta, noise multiplier,
relation) as the loose arguments; a conflicting loose argument is a ValueError naming both values; a seeded
spec makes exactly the release a seeded ``random_state`` makes (labelled not private); an add-remove spec needs
a declared n where the function needs one. Small sizes: the whole file runs in seconds.
"""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest

from dpkme.audit import AuditSettings, run_audit
from dpkme.kernels import GaussianKernel
from dpkme.privacy import planning
from dpkme.privacy.spec import NeighbouringRelation, PrivacySpec, resolve, resolve_noise
from dpkme.release import (
    algorithm1,
    algorithm1_charge,
    algorithm2,
    algorithm2_charge,
    exponential_mechanism,
    exponential_mechanism_charge,
    gp_release,
    gp_release_charge,
)
from dpkme.release.tabular import release_table
from dpkme.schema import ColumnSpec, TableSchema

N = 200
X = np.random.default_rng(0).normal(size=(N, 2))
K = GaussianKernel(lengthscale=1.0)
GRID = [np.linspace(-3, 3, 5)] * 2
CANDIDATES = np.linspace(-2, 2, 5)[:, None]
SCHEMA = TableSchema([ColumnSpec("x", "continuous", lower=-4, upper=4),
                      ColumnSpec("c", "categorical", categories=["a", "b"])])
DF = pd.DataFrame({"x": X[:, 0].clip(-4, 4), "c": np.where(X[:, 1] > 0, "a", "b")})
TABLE_FAST = dict(n_points=8, n_features=100, solver_options={"pool_size": 500, "max_iter": 10},
                  marginal_share=None)

# Non-default fields, so that each one is seen to flow through (the GP release has no "classic" calibration).
SPEC = PrivacySpec(epsilon=0.7, delta=1e-5, relation="add-remove", calibration="classic")
GP_SPEC = PrivacySpec(epsilon=0.7, delta=1e-5, relation="add-remove")
LOOSE = dict(epsilon=0.7, delta=1e-5, neighbouring="add-remove", calibration="classic")
GP_LOOSE = dict(epsilon=0.7, delta=1e-5, neighbouring="add-remove")


def _same_charge(a, b):
    assert (a.mechanism, a.epsilon, a.delta, a.relation) == (b.mechanism, b.epsilon, b.delta, b.relation)
    if a.noise_multiplier is None:
        assert b.noise_multiplier is None
    else:
        assert a.noise_multiplier == pytest.approx(b.noise_multiplier, rel=1e-12)


# ----------------------------------------------------------------------------------------------- the resolution
def test_resolve_uses_the_spec_and_names_both_values_of_a_conflict():
    assert resolve(SPEC) == (0.7, 1e-5, "add-remove", "classic")
    assert resolve(SPEC, **LOOSE) == resolve(SPEC)                       # agreeing loose values are fine
    assert resolve(SPEC, neighbouring=NeighbouringRelation.ADD_REMOVE).neighbouring == "add-remove"
    assert resolve(None, epsilon=1.0, delta=1e-6) == (1.0, 1e-6, "replace-one", "analytic")
    for kw, msg in [({"epsilon": 2.0}, r"epsilon=2.0 conflicts with privacy.epsilon=0.7"),
                    ({"delta": 1e-6}, r"delta=1e-06 conflicts with privacy.delta=1e-05"),
                    ({"neighbouring": "replace-one"}, r"neighbouring='replace-one' conflicts with "
                                                      r"privacy.relation='add-remove'"),
                    ({"calibration": "analytic"}, r"calibration='analytic' conflicts with "
                                                  r"privacy.calibration='classic'")]:
        with pytest.raises(ValueError, match=msg):
            resolve(SPEC, **kw)
    with pytest.raises(ValueError, match="epsilon is required"):
        resolve(None, delta=1e-6)
    with pytest.raises(ValueError, match="delta is required"):
        resolve(None, epsilon=1.0)
    with pytest.raises(ValueError, match="PrivacySpec"):
        resolve({"epsilon": 1.0})


def test_resolve_noise_honours_the_source_exactly():
    os, dp, seeded = (PrivacySpec(epsilon=1, delta=1e-6, noise=n) for n in ("os-entropy", "opendp", "seeded"))
    assert resolve_noise(None) == "numpy" and resolve_noise(None, noise="opendp") == "opendp"
    assert resolve_noise(os) == "numpy" and resolve_noise(dp) == "opendp"
    assert resolve_noise(seeded, random_state=3) == "numpy"
    assert resolve_noise(dp, random_state=np.random.default_rng(0)) == "opendp"   # drives public draws only
    with pytest.raises(ValueError, match=r"random_state=0"):
        resolve_noise(os, random_state=0)
    with pytest.raises(ValueError, match=r"privacy.noise='os-entropy'"):
        resolve_noise(os, random_state=np.random.default_rng(0))                # labelled "generator", not OS
    with pytest.raises(ValueError, match=r"needs an int random_state"):
        resolve_noise(seeded)
    with pytest.raises(ValueError, match=r"needs an int random_state"):
        resolve_noise(seeded, random_state=np.random.default_rng(0))
    with pytest.raises(ValueError, match=r"noise='opendp' conflicts with privacy.noise='os-entropy'"):
        resolve_noise(os, noise="opendp")
    with pytest.raises(ValueError, match=r"noise='numpy' conflicts with privacy.noise='opendp'"):
        resolve_noise(dp, noise="numpy")
    with pytest.raises(ValueError, match=r"cannot be seeded"):
        resolve_noise(dp, random_state=0)
    with pytest.raises(ValueError, match=r"gp_release has no OpenDP sampler"):
        resolve_noise(dp, opendp=False, function="gp_release")


# ------------------------------------------------------------------------------------------------- the releases
RELEASES = {
    "algorithm1": (lambda **kw: algorithm1(X, None, kernel=K, n_points=8, q_scale=2.0, **kw), SPEC, LOOSE),
    "algorithm2": (lambda **kw: algorithm2(X, kernel=K, n_points=5, n_features=100, **kw), SPEC, LOOSE),
    "release_table": (lambda **kw: release_table(DF, schema=SCHEMA, **TABLE_FAST, **kw).release, SPEC, LOOSE),
    "gp_release": (lambda **kw: gp_release(X, kernel=K, grid=GRID, **kw), GP_SPEC, GP_LOOSE),
    "exponential": (lambda **kw: exponential_mechanism(X[:, :1], CANDIDATES, kernel=K, m=2, **kw), GP_SPEC,
                    {"epsilon": 0.7, "neighbouring": "add-remove"}),
}


@pytest.mark.parametrize("name", list(RELEASES))
def test_a_release_with_a_spec_charges_what_the_loose_call_charges(name):
    fn, spec, loose = RELEASES[name]
    typed = fn(privacy=spec, n_private=N)
    plain = fn(**loose, n_private=N)
    _same_charge(typed.charge, plain.charge)
    assert typed.charge.relation is NeighbouringRelation.ADD_REMOVE
    assert (typed.epsilon, typed.neighbouring, typed.noise_source) == (0.7, "add-remove", "os-entropy")
    assert typed.seed is None and typed.metadata()["differentially_private"]
    assert typed.delta == (0.0 if name == "exponential" else 1e-5)   # pure ε-DP meets the spec's δ
    if name != "exponential":
        assert typed.calibration == spec.calibration
    typed = fn(privacy=spec, n_private=N, **loose)                  # agreeing loose arguments are fine
    _same_charge(typed.charge, plain.charge)


@pytest.mark.parametrize("name", list(RELEASES))
def test_a_conflicting_loose_argument_is_a_value_error_naming_both(name):
    fn, spec, _ = RELEASES[name]
    with pytest.raises(ValueError, match=r"epsilon=2.0 conflicts with privacy.epsilon=0.7"):
        fn(privacy=spec, epsilon=2.0, n_private=N)
    with pytest.raises(ValueError, match=r"neighbouring='replace-one' conflicts with privacy.relation='add-remove'"):
        fn(privacy=spec, neighbouring="replace-one", n_private=N)
    if name != "exponential":
        with pytest.raises(ValueError, match=r"delta=0.001 conflicts with privacy.delta=1e-05"):
            fn(privacy=spec, delta=1e-3, n_private=N)
        with pytest.raises(ValueError, match=r"calibration='hall' conflicts with privacy.calibration="):
            fn(privacy=spec, calibration="hall", n_private=N)


@pytest.mark.parametrize("name", list(RELEASES))
def test_an_add_remove_spec_needs_the_declared_n(name):
    fn, spec, loose = RELEASES[name]
    for kw in ({"privacy": spec}, loose):
        with pytest.raises(ValueError, match="n_private"):
            fn(**kw)


@pytest.mark.parametrize("name", list(RELEASES))
def test_a_seeded_spec_is_exactly_the_seeded_release_and_not_private(name):
    fn, spec, loose = RELEASES[name]
    seeded = PrivacySpec(epsilon=spec.epsilon, delta=spec.delta, relation=spec.relation,
                         calibration=spec.calibration, noise="seeded")
    typed = fn(privacy=seeded, random_state=3, n_private=N)
    plain = fn(**loose, random_state=3, n_private=N)
    for rel in (typed, plain):
        meta = rel.metadata()
        assert (rel.noise_source, rel.seed, meta["differentially_private"]) == ("seeded", 3, False)
        assert meta["not_private_because"]
    assert np.array_equal(typed.points, plain.points)
    released = "values" if name == "gp_release" else "weights"
    assert np.array_equal(getattr(typed, released), getattr(plain, released))
    with pytest.raises(ValueError, match="needs an int random_state"):
        fn(privacy=seeded, n_private=N)
    with pytest.raises(ValueError, match=r"privacy.noise='os-entropy' conflicts with random_state=3"):
        fn(privacy=spec, random_state=3, n_private=N)


def test_an_opendp_spec_is_the_opendp_sampler_where_there_is_one():
    pytest.importorskip("opendp")
    spec = PrivacySpec(epsilon=1.0, delta=1e-6, noise="opendp")
    rel = algorithm2(X, kernel=K, n_points=5, n_features=100, privacy=spec)
    assert (rel.noise_source, rel.seed, rel.metadata()["differentially_private"]) == ("opendp", None, True)
    with pytest.raises(ValueError, match="noise='numpy' conflicts"):
        algorithm1(X, None, kernel=K, n_points=8, q_scale=2.0, privacy=spec, noise="numpy")
    with pytest.raises(ValueError, match="no OpenDP sampler"):
        gp_release(X, kernel=K, grid=GRID, privacy=spec)
    with pytest.raises(ValueError, match="no OpenDP sampler"):
        exponential_mechanism(X[:, :1], CANDIDATES, kernel=K, m=2, privacy=spec)


def test_the_gp_release_refuses_a_classic_spec():
    with pytest.raises(ValueError, match="calibration"):
        gp_release(X, kernel=K, grid=GRID, privacy=PrivacySpec(epsilon=1.0, delta=1e-6, calibration="classic"))


# ------------------------------------------------------------------------------------------------- the charges
CHARGES = {
    "algorithm1_charge": (lambda **kw: algorithm1_charge(n_private=N, kernel=K, **kw), SPEC, LOOSE),
    "algorithm2_charge": (lambda **kw: algorithm2_charge(n_private=N, **kw), SPEC, LOOSE),
    "gp_release_charge": (lambda **kw: gp_release_charge(n_private=N, kernel=K, dim=2, **kw), GP_SPEC, GP_LOOSE),
    "exponential_mechanism_charge": (exponential_mechanism_charge, GP_SPEC,
                                     {"epsilon": 0.7, "neighbouring": "add-remove"}),
}


@pytest.mark.parametrize("name", list(CHARGES))
def test_a_companion_charge_with_a_spec_equals_the_loose_one(name):
    fn, spec, loose = CHARGES[name]
    _same_charge(fn(privacy=spec), fn(**loose))
    _same_charge(fn(privacy=spec), fn(privacy=spec, **loose))
    assert fn(privacy=spec).relation is NeighbouringRelation.ADD_REMOVE
    with pytest.raises(ValueError, match=r"epsilon=2.0 conflicts with privacy.epsilon=0.7"):
        fn(privacy=spec, epsilon=2.0)
    with pytest.raises(ValueError, match=r"neighbouring='replace-one' conflicts"):
        fn(privacy=spec, neighbouring="replace-one")
    with pytest.raises(ValueError, match="epsilon is required"):
        fn()


@pytest.mark.parametrize("name", ["algorithm1", "algorithm2", "gp_release", "exponential"])
def test_the_charge_before_equals_the_release_with_the_same_spec(name):
    fn, spec, _ = RELEASES[name]
    charge_fn = CHARGES[{"algorithm1": "algorithm1_charge", "algorithm2": "algorithm2_charge",
                         "gp_release": "gp_release_charge", "exponential": "exponential_mechanism_charge"}[name]][0]
    _same_charge(charge_fn(privacy=spec), fn(privacy=spec, n_private=N).charge)


# ------------------------------------------------------------------------------------------------- the planners
def test_the_planners_take_a_spec():
    spec = PrivacySpec(epsilon=0.8, delta=1e-6, relation="add-remove", calibration="classic")
    loose = dict(delta=1e-6, neighbouring="add-remove", calibration="classic")
    assert planning.expected_rkhs_error(privacy=spec, n_private=1000, n_features=200) == \
        planning.expected_rkhs_error(0.8, n_private=1000, n_features=200, **loose)
    assert planning.expected_mean_error(privacy=spec, n_private=1000) == \
        planning.expected_mean_error(0.8, n_private=1000, **loose)
    plan = planning.epsilon_for_rkhs_error(0.2, privacy=spec, n_private=1000, n_features=200)
    assert plan == planning.epsilon_for_rkhs_error(0.2, n_private=1000, n_features=200, **loose)
    assert (plan.delta, plan.neighbouring, plan.calibration) == (1e-6, "add-remove", "classic")
    assert planning.epsilon_for_mean_error(0.05, privacy=spec, n_private=1000) == \
        planning.epsilon_for_mean_error(0.05, n_private=1000, **loose)
    with pytest.raises(ValueError, match=r"epsilon=0.5 conflicts with privacy.epsilon=0.8"):
        planning.expected_rkhs_error(0.5, privacy=spec, n_private=1000, n_features=200)
    with pytest.raises(ValueError, match=r"delta=1e-05 conflicts with privacy.delta=1e-06"):
        planning.epsilon_for_mean_error(0.05, privacy=spec, n_private=1000, delta=1e-5)
    with pytest.raises(ValueError, match=r"calibration='analytic' conflicts with privacy.calibration='classic'"):
        planning.epsilon_for_rkhs_error(0.2, privacy=spec, n_private=1000, n_features=200, calibration="analytic")
    with pytest.raises(ValueError, match="delta is required"):
        planning.expected_mean_error(0.8, n_private=1000)


# --------------------------------------------------------------------------------------------------- the audits
def test_run_audit_takes_the_claim_as_a_spec():
    spec = PrivacySpec(epsilon=2.0, delta=1e-2, relation="add-remove")
    typed = run_audit("gaussian", settings=AuditSettings(runs=300, random_state=0), privacy=spec)
    plain = run_audit("gaussian", settings=AuditSettings(epsilon=2.0, delta=1e-2, runs=300, random_state=0),
                      neighbouring="add-remove")
    assert (typed.claimed_epsilon, typed.claimed_delta, typed.neighbouring) == (2.0, 1e-2, "add-remove")
    assert typed.epsilon_lower_bound == plain.epsilon_lower_bound
    assert np.array_equal(typed.scores, plain.scores)
    # a pure ε-DP audit audits δ = 0 whatever the spec's δ; the noise source is not used by an audit
    pure = run_audit("laplace", settings=AuditSettings(runs=300, random_state=0),
                     privacy=PrivacySpec(epsilon=2.0, delta=1e-6, noise="seeded"))
    assert (pure.claimed_epsilon, pure.claimed_delta) == (2.0, 0.0)
    with pytest.raises(ValueError, match=r"epsilon=3.0 conflicts with privacy.epsilon=2.0"):
        run_audit("gaussian", settings=AuditSettings(epsilon=3.0), privacy=spec)
    with pytest.raises(ValueError, match=r"replace-one claims only; privacy.relation='add-remove'"):
        run_audit("kmeans", privacy=spec)
    with pytest.raises(ValueError, match=r"analytic calibration only; privacy.calibration='classic'"):
        run_audit("gaussian", privacy=PrivacySpec(epsilon=2.0, delta=1e-2, calibration="classic"))
