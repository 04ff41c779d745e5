"""Tests of dpkme.datasets: synthetic generators and the bundled sample tables.

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

from dpkme.datasets import (
    GENERATORS,
    SAMPLE_DIR,
    SAMPLES,
    GeneratorSpec,
    anisotropic_gaussian,
    concentric_circles,
    gaussian_blobs,
    generate,
    load_sample,
    paper_mixture,
    spiral,
    student_t_cloud,
    two_moons,
    uniform_box,
)
from dpkme.io import numeric_matrix

SHARED_DATA = Path(__file__).resolve().parents[3] / "shared" / "data"


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
    with pytest.raises(ValueError, match=r"unknown generator 'moons'.*two_moons"):
        generate("moons")
    with pytest.raises(ValueError, match=r"no parameter.*'dim'"):
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


# --------------------------------------------------------------------------- samples
_EXPECTED = {
    "wine": ((178, 14), 13, {1: 59, 2: 71, 3: 48}),
    "breast_cancer": ((569, 31), 30, {"B": 357, "M": 212}),
    "iris": ((150, 5), 4, {"setosa": 50, "versicolor": 50, "virginica": 50}),
    "diabetes": ((442, 11), 9, None),
    # mixed tables (declared schema): 2 penguins miss all four measurements
    "penguins": ((344, 8), 4, {"Adelie": 152, "Gentoo": 124, "Chinstrap": 68}),
    "seattle_weather": ((1461, 6), 4, {"sun": 714, "fog": 411, "rain": 259, "drizzle": 54, "snow": 23}),
}
_MISSING_ROWS = {"penguins": 2}


@pytest.mark.parametrize("name", sorted(SAMPLES))
def test_samples_load_with_expected_shapes(name):
    df, info = load_sample(name)
    shape, n_features, label_counts = _EXPECTED[name]
    assert df.shape == shape == (info.n_rows, info.n_columns)
    X, dropped = numeric_matrix(df, info.numeric_columns, drop_missing=True)
    assert dropped == _MISSING_ROWS.get(name, 0)
    assert X.shape == (shape[0] - dropped, n_features) and np.isfinite(X).all()
    assert info.description and info.source and info.licence and info.citation
    if label_counts is None:
        assert info.label_column is None
    else:
        assert info.label_column in df.columns and info.label_column not in info.numeric_columns
        assert df[info.label_column].value_counts().to_dict() == label_counts
    assert info.path.stat().st_size < 200 * 1024
    assert info.to_dict()["name"] == name


def test_sample_files_documented_and_located_next_to_package():
    assert SAMPLE_DIR == Path(__file__).resolve().parents[2] / "dpkme" / "datasets" / "data"
    readme = (SAMPLE_DIR / "README.md").read_text()
    for info in SAMPLES.values():
        assert info.filename in readme
    assert sorted(p.name for p in SAMPLE_DIR.glob("*.csv")) == sorted(i.filename for i in SAMPLES.values())
    with pytest.raises(ValueError, match=r"unknown sample 'wines'.*'wine'"):
        load_sample("wines")


def test_sample_values_spot_check():
    df, _ = load_sample("wine")
    assert df.loc[0, "alcohol"] == 14.23 and df.loc[0, "proline"] == 1065
    df, _ = load_sample("diabetes")
    assert df.loc[0, ["age", "sex", "bmi", "progression"]].tolist() == [59, 2, 32.1, 151]
