"""Tests of the reduced-set solvers (post-processing of Algorithm 2).

All randomness is seeded; tolerances are stated next to each assertion.
"""

from __future__ import annotations

import itertools
import math

import numpy as np
import pytest
from scipy.optimize import check_grad

from dpkme import reduced_set
from dpkme.kernels.kernel import GaussianKernel
from dpkme.kernels.random_features import RandomFourierFeatures
from dpkme.reduced_set import (
    Cancelled,
    FourierMap,
    PointSource,
    Problem,
    Progress,
    fit_weights,
    greedy_select,
    list_solvers,
    project_l1_ball,
    project_simplex,
    refine,
    resample,
)
from dpkme.reduced_set.joint import Parameterisation
from dpkme.reduced_set.preimage import preimage
from dpkme.release.result import Release


def _small_problem(seed=0, J=200, D=2, M=6, dtype="float64", noise=0.01):
    rng = np.random.default_rng(seed)
    W = rng.standard_normal((J // 2, D))
    fmap = FourierMap(W, 1.0, dtype=dtype)
    X = rng.standard_normal((300, D))
    target = fmap.features(X).mean(axis=0) + noise * rng.standard_normal(J)
    Z = rng.standard_normal((M, D))
    w = rng.dirichlet(np.ones(M))
    return fmap, target, Z, w, rng


# ------------------------------------------------------------------ feature map
def test_fourier_map_matches_random_fourier_features():
    kernel = GaussianKernel(lengthscale=1.5, amplitude=0.7)
    feats = RandomFourierFeatures(kernel, n_components=64, random_state=3, dtype="float64").fit(3)
    fmap = FourierMap.from_features(feats, dtype="float64")
    Z = np.random.default_rng(1).normal(size=(9, 3))
    np.testing.assert_allclose(fmap.features(Z), feats.transform(Z), rtol=0, atol=1e-12)
    # ||phi(z)||^2 = a exactly for every z
    np.testing.assert_allclose((fmap.features(Z) ** 2).sum(axis=1), 0.7, rtol=1e-13)
    v = np.random.default_rng(2).normal(size=64)
    np.testing.assert_allclose(fmap.correlations(Z, v), fmap.features(Z) @ v, rtol=1e-12, atol=1e-13)


def test_objective_value_matches_explicit_formula():
    fmap, target, Z, w, _ = _small_problem()
    f, _, _ = fmap.objective(Z, w, target)
    r = fmap.features(Z).T @ w - target
    assert f == pytest.approx(float(r @ r), rel=1e-12)
    np.testing.assert_allclose(fmap.residual(Z, w, target), r, atol=1e-13)


def test_joint_gradient_matches_finite_differences():
    fmap, target, Z, w, _ = _small_problem(M=7)
    M, D = Z.shape
    w = np.random.default_rng(5).normal(size=M)  # signed weights: the gradient formula is general

    def f_z(z):
        return fmap.objective(z.reshape(M, D), w, target)[0]

    def g_z(z):
        return fmap.objective(z.reshape(M, D), w, target)[1].ravel()

    def f_w(v):
        return fmap.objective(Z, v, target)[0]

    def g_w(v):
        return fmap.objective(Z, v, target)[2]

    scale_z = np.linalg.norm(g_z(Z.ravel()))
    scale_w = np.linalg.norm(g_w(w))
    # central-difference error of check_grad (step 1.5e-8) is ~1e-7 relative
    assert check_grad(f_z, g_z, Z.ravel()) <= 1e-6 * max(1.0, scale_z)
    assert check_grad(f_w, g_w, w) <= 1e-6 * max(1.0, scale_w)


@pytest.mark.parametrize("constraint", ["simplex", "sub-simplex", "l1-ball"])
def test_parameterisation_gradient_matches_finite_differences(constraint):
    fmap, target, Z, _w, rng = _small_problem(M=5)
    par = Parameterisation(constraint, 5, radius=1.3)
    theta = rng.normal(size=par.size)

    def f(t):
        return fmap.objective(Z, par.decode(t), target)[0]

    def g(t):
        wt = par.decode(t)
        return par.pullback(t, wt, fmap.objective(Z, wt, target)[2])

    assert check_grad(f, g, theta) <= 1e-6 * max(1.0, np.linalg.norm(g(theta)))


# ------------------------------------------------------------------ projections and weights
def test_projections_are_feasible_and_optimal():
    rng = np.random.default_rng(0)
    for _ in range(20):
        v = rng.normal(size=15) * 2
        for proj, radius, feasible in (
            (project_simplex, 1.0, lambda p: p.min() >= 0 and abs(p.sum() - 1.0) < 1e-12),
            (project_l1_ball, 0.7, lambda p: np.abs(p).sum() <= 0.7 + 1e-12),
        ):
            p = proj(v, radius)
            assert feasible(p)
            # variational inequality <v - p, q - p> <= 0 for feasible q (convex projection)
            for _ in range(20):
                q = rng.dirichlet(np.ones(15)) * radius
                if proj is project_l1_ball:
                    q = q * rng.choice([-1.0, 1.0], size=15) * rng.uniform()
                assert float((v - p) @ (q - p)) <= 1e-10


@pytest.mark.parametrize("constraint,radius", [("simplex", 1.0), ("sub-simplex", 0.5), ("l1-ball", 0.8),
                                               ("nonnegative", 1.0)])
def test_fit_weights_respects_constraints(constraint, radius):
    fmap, target, Z, _, _ = _small_problem(M=12)
    Phi = fmap.features(Z)
    w, info = fit_weights(Phi, target, constraint=constraint, radius=radius, max_iter=2000, tol=1e-10)
    if constraint in ("simplex", "sub-simplex", "nonnegative"):
        assert w.min() >= 0.0
    if constraint == "simplex":
        assert abs(w.sum() - radius) <= 1e-12
    if constraint == "sub-simplex":
        assert w.sum() <= radius + 1e-12
    if constraint == "l1-ball":
        assert np.abs(w).sum() <= radius + 1e-12
    # no feasible random point does better (objective within 1e-9 relative)
    rng = np.random.default_rng(1)
    for _ in range(50):
        q = reduced_set.weights.project(rng.normal(size=12), constraint, radius)
        r = Phi.T @ q - target
        assert float(r @ r) >= info["objective"] * (1 - 1e-9)


def test_fit_weights_free_and_lasso_match_references():
    from sklearn.linear_model import Lasso

    fmap, target, Z, _, _ = _small_problem(M=8, J=120)
    Phi = fmap.features(Z)
    w_free, _ = fit_weights(Phi, target, constraint="free", max_iter=20000, tol=1e-13)
    w_ls = np.linalg.lstsq(Phi.T, target, rcond=None)[0]
    np.testing.assert_allclose(Phi.T @ w_free, Phi.T @ w_ls, atol=1e-6)
    lam = 1e-3
    w_lasso, _ = fit_weights(Phi, target, constraint="lasso", penalty=lam, max_iter=20000, tol=1e-13)
    # sklearn: (1/2J)||y - Xw||^2 + alpha||w||_1  <=>  ||y - Xw||^2 + 2 J alpha ||w||_1
    ref = Lasso(alpha=lam / (2 * Phi.shape[1]), fit_intercept=False, tol=1e-12, max_iter=100000)
    ref.fit(Phi.T, target)
    np.testing.assert_allclose(w_lasso, ref.coef_, atol=1e-5)


# ------------------------------------------------------------------ greedy
def test_greedy_picks_best_pool_candidate_bruteforce():
    fmap, target, _, _, rng = _small_problem(J=300, noise=0.0)
    pool = rng.normal(scale=2.0, size=(40, 2))
    problem = Problem(target, fmap)
    steps = 6
    idx, w, _, hist = greedy_select(problem, pool, n_points=steps, shortlist=40, refresh=0.0)
    # brute force: replay the Frank-Wolfe iterations with explicit feature vectors
    Phi = fmap.features(pool)
    y = np.zeros(fmap.n_components)
    used = []
    for t in range(steps):
        scores = Phi @ (target - y)
        scores[used] = -np.inf
        best = int(np.argmax(scores))
        assert idx[t] == best, f"step {t}: greedy chose {idx[t]}, brute force {best}"
        d = Phi[best] - y
        gamma = 1.0 if t == 0 else min(max(float((target - y) @ d) / float(d @ d), 0.0), 1.0)
        y = (1 - gamma) * y + gamma * Phi[best]
        used.append(best)
        assert hist[t] == pytest.approx(float(np.linalg.norm(target - y)), rel=1e-9, abs=1e-12)
    np.testing.assert_allclose(Phi[idx].T @ w, y, atol=1e-12)
    assert w.min() >= 0 and abs(w.sum() - 1) < 1e-12


def test_greedy_first_step_exact_with_shortlist():
    fmap, target, _, _, rng = _small_problem(J=300, noise=0.0)
    pool = rng.normal(scale=2.0, size=(500, 2))
    idx, _, _, _ = greedy_select(Problem(target, fmap), pool, n_points=1, shortlist=8)
    assert idx[0] == int(np.argmax(fmap.features(pool) @ target))


def test_greedy_selects_distinct_candidates_beyond_the_shortlist():
    fmap, target, _, _, rng = _small_problem(J=100, noise=0.0)
    pool = rng.normal(scale=2.0, size=(300, 2))
    idx, w, _, _ = greedy_select(Problem(target, fmap), pool, n_points=250, shortlist=8, refresh=0.5)
    assert len(set(idx.tolist())) == 250
    assert w.min() >= 0 and abs(w.sum() - 1) < 1e-12


# ------------------------------------------------------------------ solvers
def _source(D=2, scale=2.0):
    return PointSource(D, scale=scale)


def test_preimage_residual_decreases_monotonically():
    fmap, target, _, _, _ = _small_problem(J=400, noise=0.0)
    res = preimage(Problem(target, fmap), n_points=25, source=_source(), rng=np.random.default_rng(0),
                   progress=Progress(None), report_at=(5, 25), n_steps=30, learning_rate=0.3)
    h = np.asarray(res.history)
    assert h.shape == (26,)
    # ||Psi_m||^2 = ||Psi_{m-1}||^2 - <Psi_{m-1}, phi>^2 / a: non-increasing up to rounding
    assert np.all(np.diff(h) <= 1e-12)
    assert h[-1] < 0.5 * h[0]
    assert np.abs(res.weights).sum() <= 1.0 + 1e-12  # eq. (5) refit, C = 1
    assert set(res.checkpoints) == {5, 25}


@pytest.mark.parametrize("weights", ["simplex", "sub-simplex", "l1-ball", "nonnegative", "uniform"])
def test_refine_constraints_and_decrease(weights):
    fmap, target, Z, w, _ = _small_problem(M=10, noise=0.0)
    problem = Problem(target, fmap)
    f0 = fmap.objective(Z, w, target, grad=False)[0]
    _Zr, wr, info = refine(problem, Z, w, weights=weights, radius=1.0, max_iter=60)
    assert info["objective"] <= f0 * (1 + 1e-12)
    if weights in ("simplex", "sub-simplex", "nonnegative", "uniform"):
        assert wr.min() >= 0
    if weights in ("simplex", "uniform"):
        assert abs(wr.sum() - 1.0) < 1e-12
    if weights == "uniform":
        np.testing.assert_allclose(wr, 0.1, rtol=1e-14)
    if weights == "sub-simplex":
        assert wr.sum() <= 1.0 + 1e-12
    if weights == "l1-ball":
        assert np.abs(wr).sum() <= 1.0 + 1e-12


def _features(J=400, D=2, seed=0):
    return RandomFourierFeatures(GaussianKernel(lengthscale=1.0), n_components=J, random_state=seed).fit(D)


def _target(features, seed=0, noise=0.005):
    rng = np.random.default_rng(seed)
    X = np.vstack([rng.normal(-1, 0.5, (200, 2)), rng.normal(1.5, 0.5, (200, 2))])
    return features.mean_embedding(X) + noise * rng.standard_normal(features.n_components)


@pytest.mark.parametrize("solver", sorted(reduced_set.SOLVERS))
def test_every_solver_runs_reports_progress_and_respects_constraints(solver):
    feats = _features()
    target = _target(feats)
    calls = []
    opts = {"pool_size": 300} if reduced_set.get_solver(solver).uses_pool else {}
    if solver == "preimage":
        opts = {"n_steps": 20}
    if solver == "joint":
        opts = {"max_iter": 30}
    res = reduced_set.reduce(target, feats, n_points=12, solver=solver, q_scale=2.0, random_state=0,
                             progress=lambda f, m: calls.append((f, m)), report_at=(3, 12), **opts)
    fr = [c[0] for c in calls]
    assert fr[-1] == 1.0 and fr[0] >= 0.0
    assert all(b > a for a, b in itertools.pairwise(fr)), "progress fractions must increase strictly"
    assert res.points.shape == (12, 2) and res.weights.shape == (12,)
    assert set(res.checkpoints) == {3, 12}
    if solver in ("pursuit", "joint", "herding"):
        assert res.weights.min() >= 0 and abs(res.weights.sum() - 1) < 1e-12
    if solver == "pursuit-joint":  # default weights="sub-simplex"
        assert res.weights.min() >= 0 and res.weights.sum() <= 1 + 1e-12
    if solver == "herding":
        np.testing.assert_allclose(res.weights, 1 / 12, rtol=1e-14)
    if solver == "preimage":
        assert np.abs(res.weights).sum() <= 1 + 1e-12
    # the release explains the target better than nothing
    assert res.residual_norm < np.linalg.norm(target)


def test_progress_callback_can_cancel():
    feats = _features()

    def cancel(fraction, message):
        if fraction > 0.3:
            raise Cancelled("stop")

    with pytest.raises(Cancelled):
        reduced_set.reduce(_target(feats), feats, n_points=20, solver="joint", q_scale=2.0, random_state=0,
                           progress=cancel, max_iter=50)


def test_pursuit_joint_beats_greedy_alone_and_is_deterministic():
    feats = _features()
    target = _target(feats)
    a = reduced_set.reduce(target, feats, n_points=15, solver="pursuit-joint", q_scale=2.0, random_state=4,
                           pool_size=400)
    b = reduced_set.reduce(target, feats, n_points=15, solver="pursuit-joint", q_scale=2.0, random_state=4,
                           pool_size=400)
    g = reduced_set.reduce(target, feats, n_points=15, solver="pursuit", q_scale=2.0, random_state=4,
                           pool_size=400)
    np.testing.assert_array_equal(a.points, b.points)
    np.testing.assert_array_equal(a.weights, b.weights)
    assert a.residual_norm < g.residual_norm


def test_public_initial_points_are_used():
    feats = _features()
    pub = np.random.default_rng(9).normal(size=(30, 2))
    res = reduced_set.reduce(_target(feats), feats, n_points=5, solver="pursuit", initial_points=pub)
    # pursuit without refinement returns pool members
    assert all(any(np.array_equal(z, p) for p in pub) for z in res.points)
    with pytest.raises(ValueError, match="only 30 public points"):
        reduced_set.reduce(_target(feats), feats, n_points=31, solver="preimage", initial_points=pub)


# ------------------------------------------------------------------ registry and validation
def test_registry_lists_solvers_with_one_default():
    listed = list_solvers()
    names = {s["name"] for s in listed}
    assert {"preimage", "joint", "pursuit-joint", "pursuit", "herding"} <= names
    assert [s["name"] for s in listed if s["default"]] == [reduced_set.DEFAULT_SOLVER]
    assert all(s["description"] for s in listed)
    with pytest.raises(ValueError, match="'nope'"):
        reduced_set.get_solver("nope")


def test_bad_inputs_raise_value_errors_naming_the_value():
    feats = _features()
    target = _target(feats)
    with pytest.raises(ValueError, match="n_points must be >= 1, got 0"):
        reduced_set.reduce(target, feats, n_points=0)
    with pytest.raises(ValueError, match="length 7"):
        reduced_set.reduce(target[:7], feats, n_points=3)
    bad = target.copy()
    bad[3] = np.nan
    with pytest.raises(ValueError, match="nan"):
        reduced_set.reduce(bad, feats, n_points=3)
    with pytest.raises(ValueError, match="q_scale must be a finite number > 0, got -1"):
        reduced_set.reduce(target, feats, n_points=3, q_scale=-1)
    with pytest.raises(ValueError, match="'diagonal'"):
        fit_weights(np.eye(3), np.ones(3), constraint="diagonal")


# ------------------------------------------------------------------ resample
def test_resample_reproduces_weighted_means_within_monte_carlo_error():
    rng = np.random.default_rng(0)
    points = rng.normal(size=(40, 3))
    weights = rng.dirichlet(np.ones(40))
    n = 20000
    rows = resample((points, weights), n, rng=1)
    assert rows.shape == (n, 3)
    mean_w = weights @ points
    sd_w = np.sqrt(weights @ (points - mean_w) ** 2)
    # |sample mean - weighted mean| <= 4.5 sd/sqrt(n) per coordinate: two-sided normal tail
    # 6.8e-6 per coordinate, < 2.1e-5 for all three (false-failure rate if the seed were random)
    assert np.all(np.abs(rows.mean(axis=0) - mean_w) <= 4.5 * sd_w / math.sqrt(n))
    # every row is one of the points
    assert np.isin(rows[:, 0], points[:, 0]).all()


def test_resample_negative_weights_clip_or_refuse():
    points = np.arange(8.0).reshape(4, 2)
    weights = np.array([0.5, -0.2, 0.7, 0.0])
    _rows, info = resample((points, weights), 1000, rng=0, return_info=True)
    assert info["negative_mass"] == pytest.approx(0.2)
    assert info["counts"][1] == 0 and info["counts"][3] == 0
    with pytest.raises(ValueError, match=r"weights\[1\] = -0.2"):
        resample((points, weights), 10, rng=0, negative="refuse")
    with pytest.raises(ValueError, match="no weight is positive"):
        resample((points, -np.abs(weights)), 10, rng=0)


def test_resample_accepts_a_release():
    rel = Release(points=np.array([[0.0, 0.0], [1.0, 1.0]]), weights=np.array([0.25, 0.75]),
                  mechanism="algorithm2", epsilon=1.0, delta=1e-6, sigma=0.1, sensitivity=0.01,
                  neighbouring="replace-one", calibration="analytic", kernel=GaussianKernel(lengthscale=1.0),
                  seed=0, n_private=100)
    rows = resample(rel, 4000, rng=3)
    # share of the second point: binomial sd = sqrt(.75*.25/4000) = 0.0068; 4.5 sd = 0.031
    assert abs((rows[:, 0] == 1.0).mean() - 0.75) < 0.031
