"""Privacy–utility curves of Algorithm 1: closed forms vs direct evaluation, noise statistics."""

import math

import numpy as np
import pytest
from scipy import stats

from dpkme.curves import paper_m_grid, subspace_curves
from dpkme.kernels.kernel import GaussianKernel
from dpkme.metrics import rkhs_distance, uniform_weights
from dpkme.privacy.calibration import calibrate_gaussian
from dpkme.release.subspace import SubspaceBasis

RNG = np.random.default_rng(77)
KERNEL = GaussianKernel(lengthscale=1.0)

# The M grid of the paper's Figures 1 and 2 (Ns_public in the authors' results files).
PAPER_GRID_10000 = [
    1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 16, 17, 19, 21, 23, 25, 28, 31, 34, 37, 41, 45, 49, 54, 59, 65,
    72, 79, 86, 95, 104, 114, 126, 138, 151, 166, 183, 200, 220, 242, 265, 291, 319, 351, 385, 422, 464, 509,
    559, 613, 673, 739, 811, 890, 977, 1072, 1176, 1291, 1417, 1555, 1707, 1873, 2056, 2257, 2477, 2718, 2983,
    3274, 3593, 3944, 4328, 4750, 5214, 5722, 6280, 6892, 7564, 8302, 9111, 10000,
]


def test_paper_grid():
    assert paper_m_grid(10000) == PAPER_GRID_10000
    assert paper_m_grid(1) == [1]
    with pytest.raises(ValueError, match="max_m"):
        paper_m_grid(0)


@pytest.mark.parametrize("prefix", [True, False])
def test_noise_free_curves_equal_direct_computation(prefix):
    # Independent reference: for each M, the projection onto the span of the
    # points the basis accepted, by SVD least squares on their Gram matrix, and
    # the baseline by the generic metric with uniform weights. Agreement to 1e-6
    # relative. Skipping near-dependent points (squared residual <= tol = 1e-5,
    # the paper's threshold) trades a little projection error for less noise: the
    # projection onto all M points is smaller, by less than a few sqrt(tol).
    X = RNG.normal(size=(1500, 2)) * 1.3
    Z = X[:200] if prefix else RNG.normal(size=(200, 2)) * 2
    ms = [1, 3, 10, 40, 120, 200]
    c = subspace_curves(X, Z, kernel=KERNEL, epsilons=[1.0], delta=1e-6, m_grid=ms,
                        z_is_prefix_of_x=prefix, random_state=0)
    B = SubspaceBasis.fit(Z, kernel=KERNEL)
    kxx = KERNEL.mean_gram(X)
    assert c.mean_kxx == pytest.approx(kxx, rel=1e-12)
    for i, m in enumerate(ms):
        Zm = Z[:m]
        w_base = uniform_weights(m)
        assert c.baseline[i] == pytest.approx(rkhs_distance(X, Zm, w_base, kernel=KERNEL), rel=1e-6)
        A = B.accepted[: c.basis_dims[i]]
        Za = Z[A]
        w_proj = np.linalg.lstsq(KERNEL.gram(Za), KERNEL.row_means(Za, X), rcond=None)[0]
        direct = rkhs_distance(X, Za, w_proj, kernel=KERNEL, mean_kxx=kxx)
        assert c.projection[i] == pytest.approx(direct, rel=1e-6)
        w_all = np.linalg.lstsq(KERNEL.gram(Zm), KERNEL.row_means(Zm, X), rcond=None)[0]
        all_points = rkhs_distance(X, Zm, w_all, kernel=KERNEL, mean_kxx=kxx)
        assert all_points <= c.projection[i] * (1 + 1e-6) and c.projection[i] - all_points < 3 * math.sqrt(1e-5)


def test_noisy_curve_matches_closed_form_expectation():
    # d^2 - projection^2 = ||noise||^2 ~ sigma^2 chi^2_F; average over reps, z-test
    # at false-failure rate 1e-4 (deterministic with the fixed seed).
    X = RNG.normal(size=(1000, 2))
    Z = RNG.normal(size=(80, 2))
    reps = 200
    c = subspace_curves(X, Z, kernel=KERNEL, epsilons=[0.5, 2.0], delta=1e-5, m_grid=[80], reps=reps,
                        random_state=1)
    F = c.basis_dims[0]
    for e_idx, sigma in enumerate(c.sigmas):
        d2 = np.array([r[0] ** 2 for r in c.alg1_reps[e_idx]])
        ratio = (d2 - c.projection[0] ** 2) / sigma**2
        z = (ratio.mean() - F) / math.sqrt(2 * F / reps)
        assert abs(z) < stats.norm.ppf(1 - 0.5e-4)
    # sigma is the analytic calibration at sqrt(2)/N
    assert c.sigmas[0] == calibrate_gaussian(epsilon=0.5, delta=1e-5, sensitivity=math.sqrt(2) / 1000).sigma


def test_auto_curve_not_worse_than_full_on_average():
    X = RNG.normal(size=(2000, 2))
    Z = X[:300]
    kw = dict(kernel=KERNEL, epsilons=[0.05, 1.0], delta=1e-6, m_grid=[30, 100, 300], reps=30,
              z_is_prefix_of_x=True, points_are_sample=True, random_state=4)
    full = subspace_curves(X, Z, basis="full", **kw)
    auto = subspace_curves(X, Z, basis="auto", **kw)
    for e in range(2):
        # mean over 30 reps: auto (James–Stein toward the public estimate) is never
        # more than 5% worse (Monte-Carlo slack) and much better where noise dominates
        assert np.all(np.array(auto.alg1[e]) <= 1.05 * np.array(full.alg1[e]))
    assert auto.alg1[0][-1] < 0.5 * full.alg1[0][-1]


def test_curves_agree_with_single_releases():
    # the sweep's closed form for one M equals rkhs_distance of an actual release
    from dpkme.release.subspace import algorithm1

    X = RNG.normal(size=(600, 2))
    Z = RNG.normal(size=(50, 2))
    B = SubspaceBasis.fit(Z, kernel=KERNEL)
    rel = algorithm1(X, Z, kernel=KERNEL, epsilon=1.0, delta=1e-6, random_state=3, basis_cache=B)
    alpha = B.coordinates(KERNEL.row_means(Z, X))
    beta = B.factor.T @ rel.weights[B.accepted]
    kxx = KERNEL.mean_gram(X)
    assert rkhs_distance(X, Z, rel.weights, kernel=KERNEL, mean_kxx=kxx) == pytest.approx(
        math.sqrt(kxx - alpha @ alpha + np.sum((beta - alpha) ** 2)), rel=1e-7)


def test_progress_and_cancellation():
    X = RNG.normal(size=(300, 2))
    seen = []
    subspace_curves(X, X[:50], kernel=KERNEL, epsilons=[1.0], delta=1e-6, progress=lambda f, m: seen.append(f),
                    random_state=0)
    assert seen[0] == 0.0 and seen[-1] == pytest.approx(1.0) and seen == sorted(seen)

    class Stop(Exception):
        pass

    def cancel(f, m):
        if f > 0.5:
            raise Stop

    with pytest.raises(Stop):
        subspace_curves(X, X[:50], kernel=KERNEL, epsilons=[1.0], delta=1e-6, progress=cancel, random_state=0)


def test_alg2_curves_shapes_monotone_in_epsilon_and_presets():
    from dpkme.curves import alg2_curves
    from dpkme.reduced_set import PRESETS, preset_options

    X = RNG.normal(size=(800, 2))
    c = alg2_curves(X, kernel=KERNEL, epsilons=[0.05, 5.0], delta=1e-6, m_grid=[5, 20], reps=3,
                    n_features=400, preset="interactive", q_scale=2.0, random_state=0)
    assert np.asarray(c.alg2_reps).shape == (2, 3, 2)
    assert all(d > 0 for per in c.alg2_reps for rep in per for d in rep)
    # far more privacy -> larger error on average (3 reps each; the gap is > 3x here)
    assert np.mean(c.alg2_reps[0]) > np.mean(c.alg2_reps[1])
    assert c.sigmas[0] > c.sigmas[1]
    assert preset_options("pursuit-joint", "interactive") and preset_options("preimage", "interactive") is not None
    assert set(PRESETS) == {"accurate", "interactive"}
    with pytest.raises(ValueError, match="preset"):
        preset_options("pursuit-joint", "turbo")
    with pytest.raises(ValueError, match="empty"):
        alg2_curves(X, kernel=KERNEL, epsilons=[], delta=1e-6, m_grid=[5])


def test_alg2_curves_keep_the_solvers_points_in_a_declared_domain(monkeypatch):
    """A declared box (e.g. ``DeclaredScaling.box_domain()``) reaches every solver run: the points are drawn and kept
    inside it; a solver that cannot honour a domain is refused before any private row is read."""
    from dpkme import reduced_set
    from dpkme.curves import alg2_curves
    from dpkme.preprocessing import DeclaredScaling

    domain = DeclaredScaling.from_box(lower=[-1.0, 0.0], upper=[1.0, 3.0], columns=["a", "b"]).box_domain()
    X = np.clip(RNG.normal(size=(300, 2)), [-1.0, 0.0], [1.0, 3.0])
    X = (X - [0.0, 1.5]) / [1.0, 1.5]                    # the box's scaled units: [-1, 1]²
    seen = []
    reduce = reduced_set.reduce

    def spy(*args, **kwargs):
        res = reduce(*args, **kwargs)
        seen.append((kwargs.get("domain"), res.points))
        return res

    monkeypatch.setattr(reduced_set, "reduce", spy)
    c = alg2_curves(X, kernel=KERNEL, epsilons=[1.0], delta=1e-6, m_grid=[4, 8], reps=2, n_features=100,
                    preset="interactive", q_scale=50.0, domain=domain, random_state=0)
    assert np.asarray(c.alg2_reps).shape == (1, 2, 2) and len(seen) == 2
    for dom, Z in seen:
        assert dom is domain and Z.shape == (8, 2)
        assert np.all(Z >= domain.lower - 1e-12) and np.all(Z <= domain.upper + 1e-12)

    def no_read(*args, **kwargs):
        raise AssertionError("the private rows were read")

    monkeypatch.setattr(KERNEL.__class__, "mean_gram", no_read)
    with pytest.raises(ValueError, match="cannot keep its points in a declared domain"):
        alg2_curves(X, kernel=KERNEL, epsilons=[1.0], delta=1e-6, m_grid=[4], solver="preimage", domain=domain)
