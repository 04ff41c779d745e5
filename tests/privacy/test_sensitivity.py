"""Sensitivities checked by brute force and adversarial search on neighbouring datasets."""

import math

import numpy as np
import pytest
from scipy.optimize import minimize

from dpkme.kernels.kernel import GaussianKernel, InverseMultiquadricKernel, LaplacianKernel, MaternKernel
from dpkme.kernels.random_features import RandomFourierFeatures
from dpkme.privacy.sensitivity import check_private_kernel, feature_mean_sensitivity, kme_sensitivity

# Machine epsilons of the two precisions the random-feature path uses (unit roundoff u = eps / 2;
# see float32_row_gap).
EPS32 = float(np.finfo(np.float32).eps)
EPS64 = float(np.finfo(np.float64).eps)

KERNELS = [
    GaussianKernel(lengthscale=1.0),
    LaplacianKernel(lengthscale=1.0),
    MaternKernel(nu=1.5, lengthscale=1.0),
    MaternKernel(nu=0.5, lengthscale=2.0),
    InverseMultiquadricKernel(lengthscale=1.0),
    GaussianKernel(lengthscale=1.0, amplitude=0.5),
]


def kme_distance(kernel, D1, D2):
    """||mu_D1 - mu_D2||_H from Gram matrices (brute force), both normalised by their own N."""
    a = kernel(D1).mean() + kernel(D2).mean() - 2 * kernel(D1, D2).mean()
    return math.sqrt(max(a, 0.0))


@pytest.mark.parametrize("kernel", KERNELS, ids=repr)
def test_replace_one_never_exceeds_tight_sensitivity(kernel):
    rng = np.random.default_rng(1)
    n = 40
    D = rng.normal(size=(n, 2))
    tight = kme_sensitivity(n=n, kernel=kernel)
    paper = kme_sensitivity(n=n, kernel=kernel, mode="paper")
    assert tight == pytest.approx(math.sqrt(2 * kernel.amplitude) / n)
    assert paper == pytest.approx(2 * math.sqrt(kernel.amplitude) / n)
    worst = 0.0
    for scale in (0.1, 1.0, 10.0, 1e6):  # random neighbours, including far outliers
        for _ in range(25):
            D2 = D.copy()
            D2[rng.integers(n)] = rng.normal(size=2) * scale
            worst = max(worst, kme_distance(kernel, D, D2))
    assert worst <= tight * (1 + 1e-9)
    # the far outlier nearly attains the bound: it is tight
    assert worst >= tight * 0.999


@pytest.mark.parametrize("kernel", KERNELS[:3], ids=repr)
def test_adversarial_search_cannot_exceed_tight_sensitivity(kernel):
    rng = np.random.default_rng(2)
    n = 10
    D = rng.normal(size=(n, 2))

    def neg_distance(v):
        D2 = D.copy()
        D2[0] = v[:2]
        D2[1] = v[2:]  # replace-one changes ONE row; move both rows for a stronger search on D2 vs D with row 1 fixed
        D2[1] = D[1]
        return -kme_distance(kernel, D, D2)

    best = max(-minimize(neg_distance, rng.normal(size=4) * s, method="Nelder-Mead").fun for s in (0.5, 3, 30))
    assert best <= kme_sensitivity(n=n, kernel=kernel) * (1 + 1e-9)


def test_declared_domain_gives_smaller_but_valid_sensitivity():
    kernel = GaussianKernel(lengthscale=1.0)
    lo, hi = np.zeros(2), np.ones(2)
    n = 20
    dom = kme_sensitivity(n=n, kernel=kernel, domain=(lo, hi))
    assert dom < kme_sensitivity(n=n, kernel=kernel)
    rng = np.random.default_rng(3)
    D = rng.uniform(lo, hi, size=(n, 2))
    worst = 0.0
    for _ in range(200):
        D2 = D.copy()
        D2[0] = rng.uniform(lo, hi)
        worst = max(worst, kme_distance(kernel, D, D2))
    corner = D.copy()
    corner[0], D_c = hi, D.copy()
    D_c[0] = lo
    worst = max(worst, kme_distance(kernel, D_c, corner))
    assert worst <= dom * (1 + 1e-9)
    assert worst >= dom * (1 - 1e-9)  # attained by opposite corners


def test_add_remove_sensitivity_with_public_normaliser():
    kernel = MaternKernel(nu=2.5, lengthscale=1.0)
    n = 30
    rng = np.random.default_rng(4)
    D = rng.normal(size=(n, 2))
    x = np.array([[1e3, -1e3]])
    # released statistic: (1/N_public) sum_{x in D} k(x, .); adding x changes it by k(x,.)/N
    S = lambda A: kernel(A).sum()  # noqa: E731
    diff2 = (S(np.vstack([D, x])) - 2 * kernel(np.vstack([D, x]), D).sum() + S(D)) / n**2
    assert math.sqrt(diff2) <= kme_sensitivity(n=n, kernel=kernel, neighbouring="add-remove") * (1 + 1e-12)
    assert kme_sensitivity(n=n, kernel=kernel, neighbouring="add-remove") == pytest.approx(1 / n)


def float32_row_gap(features, x) -> float:
    """Bound on ||phi_a(x) - phi_b(x)|| for two float32 evaluations a, b of one row's features.

    ``transform`` and ``mean_embedding`` evaluate the same float32 angles w.x in blocks of
    different shapes, and BLAS picks its sgemm kernel, summation order and FMA use by CPU
    and shape (Haswell/AVX2 and SkylakeX/AVX-512 builds differ in the last bits), so the two
    rows are NOT bit-identical in general: a float64-sized tolerance (rel 1e-9) only passed by
    luck on AVX-512. The bound follows the operations actually done (u = EPS32 / 2):

    * angle: a D-term float32 dot product of the same rounded inputs, each evaluation within
      D u S of the exact value (S = sum_i |x_i w_i|), so two evaluations differ by <= D EPS32 S;
    * cos/sin in float32: <= 4 ulp each (NumPy's SIMD kernels claim < 1.5), ulp <= u on [-1, 1],
      so two evaluations differ by <= 4 EPS32 more;
    * renormalising the J raw entries (norm sqrt(J/2)) to norm sqrt(a) multiplies a perturbation
      of max-entry size d by at most 2 sqrt(a) sqrt(J) / sqrt(J/2) = 2 sqrt(2a).
    """
    S = float((np.abs(np.asarray(x, dtype=float)) @ np.abs(features.frequencies_).T).max())
    D = features.frequencies_.shape[1]
    return 2.0 * math.sqrt(2.0 * features.kernel.amplitude) * EPS32 * (D * S + 4.0)


def test_feature_mean_sensitivity_brute_force():
    kernel = GaussianKernel(lengthscale=1.0)
    f = RandomFourierFeatures(kernel, n_components=64, random_state=0).fit(2)
    assert f.dtype == "float32"  # the default path, the one releases use
    rng = np.random.default_rng(5)
    n = 50
    D = rng.normal(size=(n, 2))
    base = f.mean_embedding(D)
    bound = feature_mean_sensitivity(n=n, norm_bound=f.norm_bound)
    worst = 0.0
    for scale in (0.5, 5, 500):
        cand = rng.normal(size=(400, 2)) * scale
        F = f.transform(cand)
        moved = np.linalg.norm((F - f.transform(D[:1])) / n, axis=1)
        worst = max(worst, moved.max())
        # consistency with the streamed mean for one of them: the two paths differ by the
        # float32 evaluation of two rows (cand[0] and D[0]), plus float64 summation of the
        # n rows of each mean (<= n eps64 sqrt(a) per mean after dividing by n, twice)
        D2 = D.copy()
        D2[0] = cand[0]
        streamed = np.linalg.norm(f.mean_embedding(D2) - base)
        tol = (float32_row_gap(f, cand[0]) + float32_row_gap(f, D[0])) / n + 2 * n * EPS64
        # the tolerance stays far below what a real error would move (a wrong factor sqrt(2)
        # is 41 %, a 1/(N-1) normaliser 2 %): 500-sized inputs give ~1e-3 relative at most
        assert tol < 1e-2 * moved[0]
        assert abs(streamed - moved[0]) <= tol, (scale, streamed, moved[0], tol)
    assert worst <= bound
    # the random-feature kernel goes negative, so sqrt(2)/N (valid for the exact
    # non-negative kernel) would be WRONG here: a neighbour exceeds it
    assert worst > math.sqrt(2) / n


def test_preconditions_refused():
    with pytest.raises(ValueError, match=r"k\(x, x\) = 1.5"):
        check_private_kernel(GaussianKernel(lengthscale=1.0, amplitude=1.5))
    with pytest.raises(ValueError, match="neighbouring"):
        kme_sensitivity(n=10, kernel=GaussianKernel(lengthscale=1.0), neighbouring="swap")
    with pytest.raises(ValueError, match="n must be >= 1"):
        kme_sensitivity(n=0, kernel=GaussianKernel(lengthscale=1.0))
    with pytest.raises(ValueError, match="feature norms <= 1"):
        feature_mean_sensitivity(n=10, norm_bound=1.5)
    with pytest.raises(ValueError, match="dpkme Kernel"):
        check_private_kernel(lambda x, y: 1.0)
