"""Tests of dpkme.data: synthetic generators and public preprocessing.

All randomness uses fixed seeds, so every test is deterministic. Statistical
assertions state the probability with which they would fail for a *random*
seed if the code were correct (their false-failure rate).
"""

from __future__ import annotations

import inspect
import math
from pathlib import Path

import numpy as np
import pytest
from scipy import stats

from dpkme.data import (
    GENERATORS,
    DeclaredScaling,
    GeneratorSpec,
    anisotropic_gaussian,
    apply_declared_scaling,
    clip_to_box,
    concentric_circles,
    gaussian_blobs,
    generate,
    paper_mixture,
    public_private_split,
    spiral,
    student_t_cloud,
    two_moons,
    uniform_box,
)

SHARED_DATA = Path(__file__).resolve().parents[2] / "shared" / "data"


def _reference(dim: int) -> np.ndarray:
    path = SHARED_DATA / f"mixture_of_Gaussians_N100000_D{dim}.npz"
    if not path.is_file():
        pytest.skip(f"reference data {path} not available (only on the development machines)")
    with np.load(path) as f:
        return f["X_private"]


# --------------------------------------------------------------------------- registry
def _call(spec: GeneratorSpec, **overrides):
    return spec(**{**spec.defaults, **overrides})


@pytest.mark.parametrize("name", sorted(GENERATORS))
def test_registry_entry_is_complete(name):
    spec = GENERATORS[name]
    assert spec.name == name and spec.label and spec.description
    sig = inspect.signature(spec.function)
    assert "random_state" in sig.parameters and "return_labels" in sig.parameters
    for p in spec.params:
        assert p.name in sig.parameters, f"{name}: {p.name} is not a parameter of the function"
        assert p.kind in ("int", "float")
        assert p.label and p.help
        if p.minimum is not None:
            assert p.minimum <= p.default
        if p.maximum is not None:
            assert p.default <= p.maximum
        if p.kind == "int":
            assert isinstance(p.default, int)
    assert spec.params[0].name == "n"
    assert (spec.fixed_dim is None) == ("dim" in spec.defaults)


@pytest.mark.parametrize("name", sorted(GENERATORS))
def test_generator_shape_dtype_and_labels(name):
    spec = GENERATORS[name]
    X, y = _call(spec, n=301, random_state=3, return_labels=True)
    dim = spec.fixed_dim or spec.defaults["dim"]
    assert X.shape == (301, dim) and X.dtype == np.float64 and X.flags.c_contiguous
    assert np.isfinite(X).all()
    assert y.shape == (301,) and y.dtype == np.int64 and y.min() >= 0
    if spec.has_labels:
        assert len(np.unique(y)) > 1
    X_only = _call(spec, n=301, random_state=3)
    np.testing.assert_array_equal(X_only, X)
    if spec.fixed_dim is None:
        assert _call(spec, n=40, dim=5, random_state=0).shape == (40, 5)
        assert _call(spec, n=40, dim=1, random_state=0).shape == (40, 1)


@pytest.mark.parametrize("name", sorted(GENERATORS))
def test_generator_reproducible_and_seed_sensitive(name):
    spec = GENERATORS[name]
    state = np.random.get_state()[1].copy()
    a = _call(spec, n=200, random_state=123)
    b = _call(spec, n=200, random_state=123)
    c = _call(spec, n=200, random_state=124)
    d = _call(spec, n=200, random_state=np.random.default_rng(123))
    np.testing.assert_array_equal(a, b)
    np.testing.assert_array_equal(a, d)  # an int seed and a Generator seeded alike agree
    assert not np.array_equal(a, c)
    np.testing.assert_array_equal(np.random.get_state()[1], state)  # global RNG untouched


def test_generate_by_name():
    X = generate("two_moons", n=50, random_state=0)
    np.testing.assert_array_equal(X, two_moons(50, random_state=0))
    with pytest.raises(ValueError, match="unknown generator 'moons'.*two_moons"):
        generate("moons")
    with pytest.raises(ValueError, match="no parameter.*'dim'"):
        generate("two_moons", dim=3)


@pytest.mark.parametrize(
    "call, match",
    [
        (lambda: two_moons(0), "n must be >= 1"),
        (lambda: two_moons(10.5), "n must be an integer"),
        (lambda: two_moons(10, noise=-0.1), "noise"),
        (lambda: concentric_circles(10, factor=1.0), "factor must satisfy 0 < factor < 1"),
        (lambda: uniform_box(10, low=1.0, high=1.0), "need low < high"),
        (lambda: gaussian_blobs(10, dim=0), "dim must be >= 1"),
        (lambda: paper_mixture(10**8, 5), "exceeds the limit"),
        (lambda: student_t_cloud(10, df=0), "df"),
        (lambda: spiral(10, n_arms=0), "n_arms"),
        (lambda: anisotropic_gaussian(10, angle_deg=float("nan")), "angle_deg must be finite"),
        (lambda: two_moons(10, random_state="seed"), "random_state"),
        (lambda: paper_mixture(10, legacy=True), "legacy=True .* needs an int random_state"),
    ],
)
def test_generator_argument_errors(call, match):
    with pytest.raises(ValueError, match=match):
        call()


# --------------------------------------------------------------------------- paper mixture
def test_paper_mixture_weights_chi_square():
    """Component frequencies match weights 1/c / H_10 (chi-square, 9 dof, level 1e-3).

    False-failure rate for a random seed: 0.1 %; with the fixed seed deterministic.
    """
    n = 20_000
    _, y = paper_mixture(n, 2, random_state=2024, return_labels=True)
    w = 1.0 / np.arange(1, 11)
    w /= w.sum()
    counts = np.bincount(y, minlength=10)
    chi2 = float(np.sum((counts - n * w) ** 2 / (n * w)))
    assert chi2 < stats.chi2.ppf(1 - 1e-3, df=9), (chi2, counts)
    # wrong weights (uniform) are rejected by the same test: it has power
    chi2_uniform = float(np.sum((counts - n / 10) ** 2 / (n / 10)))
    assert chi2_uniform > stats.chi2.ppf(1 - 1e-3, df=9)


def test_paper_mixture_within_component_std_is_30():
    """Points scatter around their component mean with std 30 (not sqrt(30)).

    Pooled std of 2e5 residuals: relative standard error ~0.16 %; the 1 % tolerance is > 6 standard errors.
    """
    X, y = paper_mixture(100_000, 2, random_state=5, return_labels=True)
    centers = np.array([X[y == c].mean(axis=0) for c in range(10)])
    resid = X - centers[y]
    assert resid.std() == pytest.approx(30.0, rel=0.01)


def test_paper_mixture_legacy_stream_pinned_values():
    """``legacy=True`` reproduces the authors' numpy.random.seed(0) stream (values pinned from it).

    The pinned numbers equal the first row and the column means of the paper's
    mixture_of_Gaussians_N100000_D2.npz, so this checks reproduction without ../shared.
    numpy guarantees the legacy RandomState stream is stable across versions.
    """
    X, y = paper_mixture(100_000, 2, random_state=0, legacy=True, return_labels=True)
    np.testing.assert_allclose(X[0], [451.19618142, 150.49963929], rtol=1e-9)
    np.testing.assert_allclose(X.mean(axis=0), [337.61172172, 197.88652682], rtol=1e-9)
    assert y.shape == (100_000,)


@pytest.mark.parametrize("dim", [2, 5])
def test_paper_mixture_legacy_reproduces_reference_file(dim):
    ref = _reference(dim)
    X = paper_mixture(ref.shape[0], dim, random_state=0, legacy=True)
    # The files were written point by point; our block draw differs by float rounding only.
    np.testing.assert_allclose(X, ref, rtol=0, atol=1e-9)


@pytest.mark.parametrize("dim", [2, 5])
def test_paper_mixture_statistics_match_reference(dim):
    """Each per-coordinate std of the reference lies in the 0.5-99.5 % band of our generator's.

    Band from 400 seeded data sets (n=2000; the std is dominated by the random
    component means, not by n). If the reference really came from this
    distribution, each coordinate falls outside with probability ~1 %.
    The literal reading of the paper's text (covariances 200 I and 30 I) gives
    stds near 14 and would fail.
    """
    ref = _reference(dim)
    sds = np.array([paper_mixture(2000, dim, random_state=s).std(axis=0) for s in range(400)]).ravel()
    lo, hi = np.quantile(sds, [0.005, 0.995])
    ref_sd = ref.std(axis=0)
    assert np.all((ref_sd > lo) & (ref_sd < hi)), (ref_sd, lo, hi)
    assert np.all((ref_sd > 120) & (ref_sd < 280))
    literal_text_sd = math.sqrt(30 + 200 * (1 - 0.1816))  # variance 30 within + 200 between
    assert literal_text_sd < lo


# --------------------------------------------------------------------------- other shapes
def test_moons_and_circles_geometry_without_noise():
    X, y = two_moons(500, noise=0.0, scale=2.0, random_state=0, return_labels=True)
    upper = X[y == 0] / 2.0
    lower = X[y == 1] / 2.0
    np.testing.assert_allclose(np.hypot(*upper.T), 1.0, atol=1e-12)
    assert upper[:, 1].min() >= -1e-12
    np.testing.assert_allclose(np.hypot(lower[:, 0] - 1.0, lower[:, 1] - 0.5), 1.0, atol=1e-12)
    assert np.bincount(y).tolist() == [250, 250]

    X, y = concentric_circles(501, factor=0.3, noise=0.0, scale=5.0, random_state=0, return_labels=True)
    r = np.hypot(*X.T)
    np.testing.assert_allclose(r[y == 0], 5.0)
    np.testing.assert_allclose(r[y == 1], 1.5)
    assert np.bincount(y).tolist() == [251, 250]


def test_spiral_radius_range_and_arms():
    X, y = spiral(600, n_arms=3, noise=0.0, random_state=1, return_labels=True)
    r = np.hypot(*X.T)
    assert r.min() >= 0.05 - 1e-12 and r.max() <= 1.0 + 1e-12
    assert np.bincount(y).tolist() == [200, 200, 200]


def test_uniform_box_bounds_and_mean():
    """Mean of 1e5 U[2, 6] coordinates: standard error 0.0037; tolerance 0.02 is > 5 SE."""
    X = uniform_box(100_000, 3, low=2.0, high=6.0, random_state=0)
    assert X.min() >= 2.0 and X.max() <= 6.0
    np.testing.assert_allclose(X.mean(axis=0), 4.0, atol=0.02)


def test_anisotropic_gaussian_covariance():
    """Sample covariance of 2e5 points vs R diag(9, 0.25) R^T.

    Entry-wise standard errors are below 0.03 for the largest entry (9 * sqrt(2/n));
    the absolute tolerance 0.1 is > 3 SE of every entry.
    """
    X = anisotropic_gaussian(200_000, 3, major_std=3.0, minor_std=0.5, angle_deg=30.0, random_state=0)
    t = math.radians(30.0)
    R = np.eye(3)
    R[:2, :2] = [[math.cos(t), -math.sin(t)], [math.sin(t), math.cos(t)]]
    expected = R @ np.diag([9.0, 0.25, 0.25]) @ R.T
    np.testing.assert_allclose(np.cov(X, rowvar=False), expected, atol=0.1)


def test_gaussian_blobs_labels_uniform_and_spread():
    """Blob labels are uniform (chi-square, level 1e-3: 0.1 % false failures) and the within-blob std is as set."""
    X, y = gaussian_blobs(30_000, 2, n_centers=5, cluster_std=0.7, random_state=4, return_labels=True)
    counts = np.bincount(y, minlength=5)
    assert stats.chisquare(counts).pvalue > 1e-3
    centers = np.array([X[y == c].mean(axis=0) for c in range(5)])
    assert (X - centers[y]).std() == pytest.approx(0.7, rel=0.02)
    assert np.abs(centers).max() <= 10.0 + 0.1


def test_student_t_marginal_ks():
    """Each coordinate of the multivariate t has a univariate t(df) marginal.

    KS test on 20 000 points at level 1e-3 (false-failure rate 0.1 % per coordinate).
    Also a normal marginal is rejected (the test has power against light tails).
    """
    X = student_t_cloud(20_000, 2, df=3.0, scale=2.0, random_state=11)
    for j in range(2):
        assert stats.kstest(X[:, j] / 2.0, stats.t(df=3.0).cdf).pvalue > 1e-3
    assert stats.kstest(X[:, 0] / 2.0, stats.norm.cdf).pvalue < 1e-3


def test_student_t_tiny_df_stays_finite():
    X = student_t_cloud(1000, 2, df=0.5, random_state=0)
    assert np.isfinite(X).all()


# --------------------------------------------------------------------------- public preprocessing
def test_declared_scaling_apply_inverse_and_dict():
    X = np.array([[0.0, 10.0], [100.0, 0.0], [50.0, 5.0]])
    s = DeclaredScaling.from_box(lower=[0, 0], upper=[100, 10], source="instrument ranges")
    Z = s.apply(X)
    np.testing.assert_allclose(Z, [[-1, 1], [1, -1], [0, 0]])
    np.testing.assert_allclose(s.inverse(Z), X)
    s2 = DeclaredScaling.from_dict(s.to_dict())
    np.testing.assert_array_equal(s2.center, s.center)
    assert s2.source == "instrument ranges"
    np.testing.assert_allclose(apply_declared_scaling(X, [50, 5], [50, 5]), Z)
    np.testing.assert_allclose(apply_declared_scaling(X, 0.0, 2.0), X / 2)  # scalars broadcast
    assert not np.shares_memory(Z, X)


@pytest.mark.parametrize(
    "center, scale, X, match",
    [
        ([0, 0], [1, 0], np.ones((3, 2)), "scale must be > 0"),
        ([0, 0], [1, -2], np.ones((3, 2)), "scale must be > 0"),
        ([0, 0, 0], [1, 1, 1], np.ones((3, 2)), "3 entries but the data have 2"),
        ([0, 0], [1, 1, 1], np.ones((3, 2)), "must match"),
        ([0, np.nan], [1, 1], np.ones((3, 2)), "non-finite"),
        ([0, 0], [1, 1], np.ones(3), "2-D"),
    ],
)
def test_declared_scaling_errors(center, scale, X, match):
    with pytest.raises(ValueError, match=match):
        apply_declared_scaling(X, center, scale)


def test_declared_box_and_scaling_refuse_overflowing_magnitudes():
    """Regression (fuzzing the Data page's declared box): a box of ±1e308 overflowed (hi - lo) with a
    RuntimeWarning, and a box of width 1e-300 mapped the data to ±1e303, whose squared distances overflow."""
    with pytest.raises(ValueError, match=r"within ±1e\+100; column 1 has lower=-1e\+308"):
        DeclaredScaling.from_box(lower=[0, -1e308], upper=[1, 1e308])
    narrow = DeclaredScaling.from_box(lower=[0.0, 0.0], upper=[1.0, 1e-300])
    with pytest.raises(ValueError, match=r"maps column 1 beyond ±1e\+100 .* declare a wider box"):
        narrow.apply(np.array([[0.5, 800.0], [0.2, -800.0]]))
    with pytest.raises(ValueError, match="beyond"):                       # overflow to inf: no RuntimeWarning
        apply_declared_scaling(np.array([[1e300]]), 0.0, 1e-10)
    np.testing.assert_allclose(narrow.apply(np.array([[0.5, 0.0]])), [[0.0, -1.0]])   # within the box: fine


def test_scaling_from_public_data():
    pub = np.random.default_rng(0).normal(5.0, 3.0, size=(500, 2))
    pub[:, 1] = 7.0  # a constant column gets scale 1
    s = DeclaredScaling.from_public_data(pub)
    Z = s.apply(pub)
    np.testing.assert_allclose(Z[:, 0].mean(), 0.0, atol=1e-12)
    np.testing.assert_allclose(Z[:, 0].std(ddof=1), 1.0, rtol=1e-12)
    np.testing.assert_allclose(Z[:, 1], 0.0)
    assert "public" in s.source


def test_clip_to_box_counts_values():
    X = np.array([[-5.0, 0.5], [0.5, 0.5], [2.0, 3.0]])
    Xc, n = clip_to_box(X, lower=[-1, 0], upper=[1, 1])
    np.testing.assert_array_equal(Xc, [[-1, 0.5], [0.5, 0.5], [1, 1]])
    assert n == 3
    assert X[0, 0] == -5.0  # input untouched
    Xc2 = clip_to_box(X, -10, 10, return_count=False)
    np.testing.assert_array_equal(Xc2, X)
    # heavy tails: the count equals the number of entries outside the box
    T = student_t_cloud(5000, 3, df=1.0, random_state=2)
    Tc, m = clip_to_box(T, -3.0, 3.0)
    assert m == int(np.sum(np.abs(T) > 3.0)) and m > 0
    assert np.abs(Tc).max() <= 3.0


@pytest.mark.parametrize(
    "lower, upper, match",
    [
        ([0, 0], [1, 0], "column 1 has lower=0.0, upper=0.0"),
        (1, -1, "lower < upper"),
        ([0, 0, 0], [1, 1, 1], "3 entries but the data have 2"),
        ([0, np.inf], [1, 1], "non-finite"),
    ],
)
def test_clip_to_box_errors(lower, upper, match):
    with pytest.raises(ValueError, match=match):
        clip_to_box(np.zeros((4, 2)), lower, upper)


def test_public_private_split():
    X = np.arange(200, dtype=float).reshape(100, 2)
    pub, priv, idx = public_private_split(X, public_fraction=0.1, random_state=42)
    assert pub.shape == (10, 2) and priv.shape == (90, 2)
    assert set(idx.public) | set(idx.private) == set(range(100))
    assert not set(idx.public) & set(idx.private)
    np.testing.assert_array_equal(pub, X[idx.public])
    np.testing.assert_array_equal(priv, X[idx.private])
    assert idx.seed == 42 and idx.to_dict()["n_public"] == 10
    pub2, _, idx2 = public_private_split(X, public_fraction=0.1, random_state=42)
    np.testing.assert_array_equal(idx2.public, idx.public)
    _, _, idx3 = public_private_split(X, public_fraction=0.1, random_state=None)
    assert isinstance(idx3.seed, int)  # a fresh seed is drawn and recorded
    _, _, idx4 = public_private_split(X, public_fraction=0.1, random_state=idx3.seed)
    np.testing.assert_array_equal(idx4.public, idx3.public)


@pytest.mark.parametrize(
    "n, fraction, match",
    [
        (100, 0.0, "public_fraction must be a finite number > 0"),
        (100, 1.0, "0 < public_fraction < 1"),
        (100, 1.5, "0 < public_fraction < 1"),
        (100, -0.2, "public_fraction"),
        (3, 0.1, "0 public and 3 private rows; both parts must be non-empty"),
        (3, 0.9, "3 public and 0 private"),
    ],
)
def test_public_private_split_errors(n, fraction, match):
    with pytest.raises(ValueError, match=match):
        public_private_split(np.zeros((n, 2)), public_fraction=fraction, random_state=0)
