"""Tests of the Algorithm 2 release (private step + orchestration) and its reproduction.

All randomness is seeded; tolerances are stated next to each assertion.
"""

from __future__ import annotations

import itertools
import json
import math

import numpy as np
import pytest

import dpkme.privacy.calibration as mechanisms
from dpkme import reduced_set
from dpkme.kernels.kernel import GaussianKernel, LaplacianKernel
from dpkme.kernels.random_features import RandomFourierFeatures
from dpkme.metrics import rkhs_distance
from dpkme.release.random_features import algorithm2, privatise_feature_mean
from dpkme.reproduce import FIG2_M, fig2_alg2
from tests.support.sentinel import Sentinel

KERNEL = GaussianKernel(lengthscale=1.0)


def _data(n=600, seed=0):
    rng = np.random.default_rng(seed)
    return np.vstack([rng.normal(-1.0, 0.5, (n // 2, 2)), rng.normal(1.5, 0.6, (n - n // 2, 2))])


# ------------------------------------------------------------------ private step
def test_privatise_noise_scale_and_sensitivity():
    X = _data()
    feats = RandomFourierFeatures(KERNEL, n_components=20000, random_state=0).fit(2)
    mu_t, cal = privatise_feature_mean(X, feats, epsilon=0.5, delta=1e-6, calibration="classic",
                                       rng=np.random.default_rng(1))
    n = X.shape[0]
    assert cal.sensitivity == pytest.approx(2.0 / n, rel=1e-11)  # Proposition 9: 2b/N, b = 1 (+1e-12)
    assert cal.sigma == pytest.approx(2.0 / n * math.sqrt(2 * math.log(1.25 / 1e-6)) / 0.5, rel=1e-11)
    resid = mu_t - feats.mean_embedding(X)
    # sample sd of 20000 iid normals: relative sd 1/sqrt(2*20000) = 0.5%; allow 3% (6 sd)
    assert np.std(resid) == pytest.approx(cal.sigma, rel=0.03)
    assert abs(np.mean(resid)) < 6 * cal.sigma / math.sqrt(20000)


def test_privatise_add_remove_needs_public_size():
    X = _data()
    feats = RandomFourierFeatures(KERNEL, n_components=100, random_state=0).fit(2)
    with pytest.raises(ValueError, match="n_private must be declared"):
        privatise_feature_mean(X, feats, epsilon=1.0, delta=1e-6, neighbouring="add-remove",
                               rng=np.random.default_rng(0))
    _, cal = privatise_feature_mean(X, feats, epsilon=1.0, delta=1e-6, neighbouring="add-remove",
                                    n_private=1000, rng=np.random.default_rng(0))
    assert cal.sensitivity == pytest.approx(1.0 / 1000, rel=1e-11)
    with pytest.raises(ValueError, match="n_private=5"):
        privatise_feature_mean(X, feats, epsilon=1.0, delta=1e-6, n_private=5, rng=np.random.default_rng(0))


# ------------------------------------------------------------------ consistency without noise
def test_noise_free_release_converges_to_exact_kme_as_J_grows():
    """Noise-free μ̂^φ (no privacy), solved by pursuit-joint: exact-kernel distance falls with J."""
    X = _data(400)
    kxx = KERNEL.mean_gram(X)
    dists = []
    for J in (50, 500, 5000):
        feats = RandomFourierFeatures(KERNEL, n_components=J, random_state=1).fit(2)
        mu = feats.mean_embedding(X)
        # ||mu^phi||^2 estimates mean(K_XX) with error O(1/sqrt(J)); 5/sqrt(J) is ~5 sd
        assert abs(float(mu @ mu) - kxx) <= 5.0 / math.sqrt(J)
        res = reduced_set.reduce(mu, feats, n_points=30, q_scale=2.0, random_state=2, pool_size=1500,
                                 max_iter=150)
        dists.append(rkhs_distance(X, res.points, res.weights, kernel=KERNEL, mean_kxx=kxx))
    # measured (seeded): [0.061, 0.0088, 0.0024]; bounds leave ~1.7x slack
    assert dists[0] > dists[1] > dists[2]
    assert dists[1] < 0.015
    assert dists[2] < 0.004


@pytest.mark.parametrize("solver", ["pursuit-joint", "preimage", "herding"])
def test_post_processing_never_touches_private_data(monkeypatch, solver):
    sentinel = Sentinel(_data(300))
    n_rows = 300
    original_noise = mechanisms.gaussian_noise

    def noise_then_lock(shape, *, sigma, rng):
        out = original_noise(shape, sigma=sigma, rng=rng)
        sentinel.locked = True
        return out

    monkeypatch.setattr(mechanisms, "gaussian_noise", noise_then_lock)
    spec = reduced_set.get_solver(solver)
    seen = []

    def spy(problem, **kwargs):
        arrays = [problem.target] + [v for v in kwargs.values() if isinstance(v, np.ndarray)]
        seen.extend(a.shape for a in arrays)
        return spec.fn(problem, **kwargs)

    monkeypatch.setitem(reduced_set.SOLVERS, solver, reduced_set.SolverSpec(
        spec.name, spy, spec.description, spec.weighted, spec.uses_pool))
    opts = {"pool_size": 500} if spec.uses_pool else {"n_steps": 10}
    rel = algorithm2(sentinel, kernel=KERNEL, epsilon=1.0, delta=1e-6, n_points=8, n_features=200,
                     solver=solver, q_scale=2.0, random_state=0, solver_options=opts)
    assert sentinel.locked, "the noise was never drawn"
    assert sentinel.reads_after_lock == 0
    assert seen and all(s[0] != n_rows for s in seen), "the solver received an array with N rows"
    assert rel.n_private == n_rows and rel.points.shape == (8, 2)


# ------------------------------------------------------------------ the release object
def test_algorithm2_release_records_guarantee_and_is_reproducible():
    X = _data()
    kw = dict(kernel=KERNEL, epsilon=0.5, delta=1e-6, n_points=10, n_features=400, q_scale=2.0,
              random_state=7, calibration="classic", solver_options={"pool_size": 500})
    a = algorithm2(X, **kw)
    b = algorithm2(X, **kw)
    np.testing.assert_array_equal(a.points, b.points)
    np.testing.assert_array_equal(a.weights, b.weights)
    assert a.mechanism == "algorithm2" and a.neighbouring == "replace-one"
    assert a.sensitivity == pytest.approx(2.0 / X.shape[0], rel=1e-11)
    assert a.sigma == pytest.approx(a.sensitivity * math.sqrt(2 * math.log(1.25e6)) / 0.5, rel=1e-12)
    assert a.seed == 7 and a.noise_source == "seeded"
    assert a.params["solver"] == reduced_set.DEFAULT_SOLVER and a.params["n_features"] == 400
    assert a.weights.min() >= 0 and a.weights.sum() <= 1 + 1e-12  # default: sub-simplex
    c = algorithm2(X, **{**kw, "random_state": 8})
    assert not np.array_equal(a.points, c.points)


def test_algorithm2_progress_increasing_to_one_and_cancellable():
    X = _data()
    calls = []
    algorithm2(X, kernel=KERNEL, epsilon=1.0, delta=1e-6, n_points=6, n_features=200, q_scale=2.0,
               random_state=0, progress=lambda f, m: calls.append(f), solver_options={"pool_size": 300})
    assert calls[0] == 0.0 and calls[-1] == 1.0
    assert all(b > a for a, b in itertools.pairwise(calls))

    def cancel(f, m):
        if f > 0.1:
            raise reduced_set.Cancelled()

    with pytest.raises(reduced_set.Cancelled):
        algorithm2(X, kernel=KERNEL, epsilon=1.0, delta=1e-6, n_points=6, n_features=200, q_scale=2.0,
                   random_state=0, progress=cancel, solver_options={"pool_size": 300})


@pytest.mark.parametrize("kwargs,pattern", [
    ({"epsilon": 0.0}, "epsilon must be a finite number > 0, got 0.0"),
    ({"epsilon": -1.0}, "got -1.0"),
    ({"delta": 1.0}, r"delta must lie in \(0, 1\), got 1.0"),
    ({"delta": 0.0}, "got 0.0"),
    ({"n_points": 0}, "n_points must be >= 1, got 0"),
    ({"n_features": 101}, "n_features must be even .* got 101"),
    ({"kernel": GaussianKernel(lengthscale=1.0, amplitude=2.0)}, r"k\(x, x\) = 2.0"),
    ({"kernel": LaplacianKernel(lengthscale=1.0, amplitude=1.5)}, r"k\(x, x\) = 1.5"),
    ({"solver": "magic"}, "'magic'"),
    ({"calibration": "approx"}, "'approx'"),
])
def test_bad_input_raises_value_error_naming_the_value(kwargs, pattern):
    args = dict(kernel=KERNEL, epsilon=1.0, delta=1e-6, n_points=5, n_features=100)
    args.update(kwargs)
    with pytest.raises(ValueError, match=pattern):
        algorithm2(_data(50), **args)


def test_nan_in_private_data_is_refused():
    X = _data(50)
    X[7, 1] = np.nan
    with pytest.raises(ValueError, match=r"nan at index \(7, 1\)"):
        algorithm2(X, kernel=KERNEL, epsilon=1.0, delta=1e-6, n_points=5, n_features=100)


# ------------------------------------------------------------------ reproduction function
def test_fig2_alg2_small_run_has_the_contract_keys():
    X = _data(800)
    calls = []
    out = fig2_alg2(X, n_features=300, max_m=31, epsilons=(0.1, 1.0), seed=0, q_scale=3.0,
                    progress=lambda f, m: calls.append(f), solver_options={"pool_size": 400})
    assert out["M"] == [m for m in FIG2_M if m <= 31]
    assert out["epsilons"] == [0.1, 1.0]
    assert len(out["alg2"]) == 2 and all(len(row) == len(out["M"]) for row in out["alg2"])
    assert out["solver"] == reduced_set.DEFAULT_SOLVER and out["J"] == 300 and out["delta"] == 1e-6
    assert len(out["sigma"]) == 2 and out["sigma"][0] == pytest.approx(10 * out["sigma"][1])
    assert out["sensitivity_value"] == pytest.approx(2.0 / 800, rel=1e-11)
    assert all(np.isfinite(row).all() for row in out["alg2"])
    # more privacy budget, smaller error at M = 31 (seeded; measured 0.020 vs 0.205)
    assert out["alg2"][1][-1] < out["alg2"][0][-1]
    assert calls[-1] == 1.0 and all(b > a for a, b in itertools.pairwise(calls))
    assert out["seconds"] > 0 and len(out["seconds_at_M"][0]) == len(out["M"])
    json.loads(json.dumps(out, allow_nan=False))  # the CLI writes it as JSON


def test_os_entropy_release_records_no_seed():
    from dpkme.kernels.kernel import GaussianKernel
    from dpkme.release.random_features import algorithm2

    X = np.random.default_rng(0).normal(size=(200, 2))
    k = GaussianKernel(lengthscale=1.0)
    real = algorithm2(X, kernel=k, epsilon=1.0, delta=1e-6, n_points=5, n_features=100, solver="herding")
    seeded = algorithm2(X, kernel=k, epsilon=1.0, delta=1e-6, n_points=5, n_features=100, solver="herding",
                        random_state=4)
    assert (real.noise_source, real.seed) == ("os-entropy", None)
    assert (seeded.noise_source, seeded.seed) == ("seeded", 4) and "seed_warning" in seeded.metadata()
