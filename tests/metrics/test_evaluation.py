"""dpkme.evaluation: the exact report equals dpkme.metrics, the estimate is unbiased with a covering CI,
Dask input equals numpy input."""

import json
import math

import numpy as np
import pytest

from dpkme.evaluation import (
    EXACT_MAX_ROWS,
    DistanceReport,
    MeanGramEstimate,
    _paired_values,
    estimate_mean_gram,
    rkhs_distance_report,
)
from dpkme.kernels import GaussianKernel, InverseMultiquadricKernel, LaplacianKernel, MaternKernel
from dpkme.kernels.additive import AdditiveKernel
from dpkme.metrics import rkhs_distance, rkhs_distance_squared

KERNELS = [GaussianKernel(lengthscale=1.3), LaplacianKernel(lengthscale=0.8, amplitude=0.7),
           MaternKernel(nu=1.5, lengthscale=1.1), InverseMultiquadricKernel(lengthscale=0.9),
           AdditiveKernel(dim=3, blocks=[[0], [1, 2], [0, 2]], weights=[1, 2, 1], scales=[1.0, 0.5, 2.0])]


def _problem(n=300, m=15, d=3, seed=0):
    rng = np.random.default_rng(seed)
    X = rng.normal(size=(n, d))
    Z = rng.normal(size=(m, d)) * 0.8
    w = rng.random(m)
    return X, Z, w / w.sum()


@pytest.mark.parametrize("kernel", KERNELS, ids=lambda k: type(k).__name__)
def test_paired_values_are_the_diagonal_of_the_cross_matrix(kernel):
    rng = np.random.default_rng(1)
    A, B = rng.normal(size=(200, 3)), rng.normal(size=(200, 3))
    np.testing.assert_allclose(_paired_values(kernel, A, B), np.diagonal(kernel(A, B)), rtol=1e-12, atol=1e-15)


@pytest.mark.parametrize("kernel", KERNELS[:3], ids=lambda k: type(k).__name__)
def test_exact_mode_equals_metrics(kernel):
    X, Z, w = _problem()
    rep = rkhs_distance_report(X, Z, w, kernel=kernel)
    assert rep.method == "exact" and rep.n_pairs == 0 and rep.std_error == 0.0
    assert rep.distance == rkhs_distance(X, Z, w, kernel=kernel)            # the same operations: bit for bit
    assert rep.squared == rkhs_distance_squared(X, Z, w, kernel=kernel)
    assert rep.ci_low == rep.ci_high == rep.distance
    # a precomputed exact mean of K_XX is used as such
    again = rkhs_distance_report(X, Z, w, kernel=kernel, mean_kxx=kernel.mean_gram(X), method="estimate")
    assert again.method == "exact" and again.distance == rep.distance


def test_auto_threshold_and_spectral_sums():
    X, Z, w = _problem(n=400)
    k = GaussianKernel(lengthscale=1.0)
    assert rkhs_distance_report(X, Z, w, kernel=k, exact_max_rows=400).method == "exact"
    assert rkhs_distance_report(X, Z, w, kernel=k, exact_max_rows=399, n_pairs=1000, rng=0).method == "estimate"
    assert rkhs_distance_report(X, Z, w, kernel=k, method="exact", exact_max_rows=0).method == "exact"
    # 2-D Gaussian: exact spectral sums (used from ~6 300 rows on), so "auto" stays exact beyond the threshold
    X2 = np.random.default_rng(2).normal(size=(8000, 2))
    rep = rkhs_distance_report(X2, Z[:, :2], w, kernel=k, exact_max_rows=100)
    assert rep.method == "exact" and rep.distance == pytest.approx(rkhs_distance(X2, Z[:, :2], w, kernel=k),
                                                                   rel=1e-12)
    assert EXACT_MAX_ROWS >= 10_000
    one = rkhs_distance_report(X[:1], Z, w, kernel=k, method="estimate")     # a single row: always exact
    assert one.method == "exact" and one.distance == rkhs_distance(X[:1], Z, w, kernel=k)


def test_estimate_is_unbiased_by_simulation():
    X, Z, w = _problem(n=40, m=5)
    k = GaussianKernel(lengthscale=1.0)
    truth = rkhs_distance_squared(X, Z, w, kernel=k)
    rng = np.random.default_rng(11)
    est = np.array([rkhs_distance_report(X, Z, w, kernel=k, method="estimate", n_pairs=30, rng=rng).squared
                    for _ in range(800)])
    se = est.std(ddof=1) / math.sqrt(est.size)
    assert abs(est.mean() - truth) < 4 * se
    # the mean of K_XX alone, with the exact value from all pairs
    m = np.array([estimate_mean_gram(X, kernel=k, n_pairs=30, rng=rng).value for _ in range(800)])
    assert abs(m.mean() - k.mean_gram(X)) < 4 * m.std(ddof=1) / math.sqrt(m.size)


def test_standard_error_matches_the_spread_of_the_estimates():
    X, _, _ = _problem(n=60)
    k = LaplacianKernel(lengthscale=1.0)
    rng = np.random.default_rng(5)
    runs = [estimate_mean_gram(X, kernel=k, n_pairs=200, rng=rng) for _ in range(400)]
    spread = np.std([r.value for r in runs], ddof=1)
    assert np.mean([r.std_error for r in runs]) == pytest.approx(spread, rel=0.15)


def test_confidence_interval_coverage():
    X, Z, w = _problem(n=80, m=6, seed=3)
    k = GaussianKernel(lengthscale=0.7)
    truth = rkhs_distance(X, Z, w, kernel=k)
    rng = np.random.default_rng(7)
    reps = [rkhs_distance_report(X, Z, w, kernel=k, method="estimate", n_pairs=400, rng=rng) for _ in range(200)]
    covered = np.mean([r.ci_low <= truth <= r.ci_high for r in reps])
    assert covered >= 0.90
    assert all(r.ci_low <= r.distance <= r.ci_high and r.confidence == 0.95 for r in reps)
    wider = rkhs_distance_report(X, Z, w, kernel=k, method="estimate", n_pairs=400, rng=1, confidence=0.99)
    narrower = rkhs_distance_report(X, Z, w, kernel=k, method="estimate", n_pairs=400, rng=1, confidence=0.5)
    assert wider.ci_high - wider.ci_low > narrower.ci_high - narrower.ci_low


def test_clipping_at_zero_near_a_perfect_release():
    X, _, _ = _problem(n=200)
    k = GaussianKernel(lengthscale=1.0)
    w = np.full(200, 1 / 200)
    reps = [rkhs_distance_report(X, X, w, kernel=k, method="estimate", n_pairs=500, rng=s) for s in range(20)]
    assert any(r.squared < 0 for r in reps)                      # unbiased around 0: some negative
    for r in reps:
        assert r.distance == math.sqrt(max(r.squared, 0.0)) and 0.0 == r.ci_low <= r.distance <= r.ci_high
        assert r.ci_high == pytest.approx(math.sqrt(max(r.squared + 1.959963984540054 * r.std_error, 0.0)))


def test_report_is_deterministic_given_the_rng_and_serialisable():
    X, Z, w = _problem()
    k = GaussianKernel(lengthscale=1.0)
    a = rkhs_distance_report(X, Z, w, kernel=k, method="estimate", n_pairs=5000, rng=3)
    b = rkhs_distance_report(X, Z, w, kernel=k, method="estimate", n_pairs=5000, rng=np.random.default_rng(3))
    assert a == b and isinstance(a, DistanceReport)
    d = json.loads(json.dumps(a.to_dict()))
    assert d["method"] == "estimate" and d["label"] == "estimate ± CI (95 %)" and d["n_pairs"] == 5000
    assert d["n_rows"] == 300 and "owner_only" in d
    with pytest.raises(AttributeError):
        a.distance = 0.0                                           # frozen
    est = estimate_mean_gram(X, kernel=k, n_pairs=5000, rng=3)
    assert rkhs_distance_report(X, Z, w, kernel=k, mean_kxx=est) == a       # a cached estimate is reused as is
    assert rkhs_distance_report(X, Z, w, kernel=k, method="estimate", n_pairs=5000).method == "estimate"  # OS entropy


def test_batches_beyond_one():
    X, _Z, _w = _problem(n=500)
    k = GaussianKernel(lengthscale=1.0)
    est = estimate_mean_gram(X, kernel=k, n_pairs=(1 << 18) + 1000, rng=0)      # two batches
    assert est.n_pairs == (1 << 18) + 1000
    assert abs(est.value - k.mean_gram(X)) < 5 * est.std_error


@pytest.mark.parametrize("bad, match", [
    (dict(method="fast"), "method must be one of"),
    (dict(confidence=1.0), "confidence must lie strictly between 0 and 1"),
    (dict(confidence="high"), "confidence must be a number"),
    (dict(n_pairs=1), "n_pairs must be >= 2"),
    (dict(exact_max_rows=-1), "exact_max_rows must be >= 0"),
    (dict(mean_kxx="x"), "mean_kxx must be a float"),
    (dict(mean_kxx=MeanGramEstimate(value=0.5, std_error=0.1, n_rows=7, n_pairs=10)), "estimated on 7 rows"),
    (dict(rng=-1), "random_state must be a non-negative int"),
])
def test_invalid_arguments_are_refused(bad, match):
    X, Z, w = _problem(n=20)
    with pytest.raises(ValueError, match=match):
        rkhs_distance_report(X, Z, w, kernel=GaussianKernel(lengthscale=1.0), **bad)


def test_invalid_data_is_refused():
    X, Z, w = _problem(n=20)
    k = GaussianKernel(lengthscale=1.0)
    with pytest.raises(ValueError, match="points"):
        rkhs_distance_report(X, Z[:, :2], w, kernel=k)
    X[3, 1] = np.nan
    with pytest.raises(ValueError, match="X"):
        rkhs_distance_report(X, Z, w, kernel=k, method="estimate")
    with pytest.raises(ValueError, match="at least 2 rows"):
        estimate_mean_gram(X[:1], kernel=k)


def test_dask_input_equals_numpy_input():
    da = pytest.importorskip("dask.array")
    X, Z, w = _problem(n=1000, m=12)
    k = GaussianKernel(lengthscale=1.0)
    Xd = da.from_array(X, chunks=(300, 2))                     # uneven row chunks, split columns
    exact_np = rkhs_distance_report(X, Z, w, kernel=k)
    exact_da = rkhs_distance_report(Xd, Z, w, kernel=k)
    assert exact_da.method == "exact" and exact_da.distance == pytest.approx(exact_np.distance, rel=1e-13)
    kw = dict(kernel=k, method="estimate", n_pairs=20_000)
    est_np = rkhs_distance_report(X, Z, w, rng=4, **kw)
    est_da = rkhs_distance_report(Xd, Z, w, rng=4, **kw)
    assert est_da.method == "estimate" and est_da.n_pairs == est_np.n_pairs
    for f in ("distance", "squared", "ci_low", "ci_high", "std_error"):
        assert getattr(est_da, f) == pytest.approx(getattr(est_np, f), rel=1e-12, abs=1e-15), f
    auto = rkhs_distance_report(Xd, Z, w, kernel=k, exact_max_rows=999, n_pairs=1000, rng=0)
    assert auto.method == "estimate"
    with pytest.raises(ValueError, match="2-D"):
        rkhs_distance_report(da.from_array(X[:, 0]), Z, w, kernel=k)


def test_precomputed_row_means_are_used():
    X, Z, w = _problem()
    k = GaussianKernel(lengthscale=1.0)
    kbar = k.row_means(Z, X)
    assert rkhs_distance_report(X, Z, w, kernel=k, row_means=kbar).distance == rkhs_distance(X, Z, w, kernel=k)
    kw = dict(kernel=k, method="estimate", n_pairs=3000, rng=2)
    assert rkhs_distance_report(X, Z, w, row_means=kbar, **kw).squared == pytest.approx(
        rkhs_distance_report(X, Z, w, **kw).squared, rel=1e-13, abs=1e-15)
    with pytest.raises(ValueError, match="row_means has 3 entries"):
        rkhs_distance_report(X, Z, w, kernel=k, row_means=kbar[:3])


def test_dask_input_read_in_several_passes_draws_the_same_pairs(monkeypatch):
    da = pytest.importorskip("dask.array")
    import dpkme.evaluation as ev

    monkeypatch.setattr(ev, "_BATCH", 1000)
    monkeypatch.setattr(ev, "_DASK_GATHER_BYTES", 16 * 1000 * 3 * 2)        # two batches per pass over X
    X, _, _ = _problem(n=700)
    k = LaplacianKernel(lengthscale=1.0)
    a = estimate_mean_gram(X, kernel=k, n_pairs=5500, rng=9)
    b = estimate_mean_gram(da.from_array(X, chunks=(128, 3)), kernel=k, n_pairs=5500, rng=9)
    assert a.n_pairs == b.n_pairs == 5500
    assert b.value == pytest.approx(a.value, rel=1e-14) and b.std_error == pytest.approx(a.std_error, rel=1e-12)


@pytest.mark.slow
def test_release_page_says_exact_or_estimate_and_keeps_the_evaluation_owner_only(monkeypatch):
    """The Release page: an exact distance says "exact"; forced to estimate, it says "estimate ± CI (95 %)" with
    the interval, records ``metrics["evaluation"]`` for the owner, and the downloaded JSON still has none of it."""
    import ui.compute as C
    from tests.support.app import ok, public_app
    from ui import export as E
    from ui import state as S

    at = public_app().run()
    at.switch_page("pages/release.py").run()
    at.button(key="rel.go").click().run()
    ok(at)
    rec = at.session_state[S.RELEASES][-1]
    assert rec.metrics["evaluation"]["method"] == "exact"
    assert any("Distance: **exact**" in c.value for c in at.caption)

    monkeypatch.setattr(C, "evaluation_method", lambda ds, kernel: "estimate")
    at.button(key="rel.go").click().run()
    ok(at)
    rec = at.session_state[S.RELEASES][-1]
    ev = rec.metrics["evaluation"]
    assert ev["method"] == "estimate" and ev["n_pairs"] > 0 and ev["ci_low"] <= ev["distance"] <= ev["ci_high"]
    assert rec.metrics["distance"] == ev["distance"]
    assert any("estimate ± CI (95 %)" in c.value for c in at.caption)
    meta = E.release_json(rec, at.session_state[S.DATASET]).decode()
    assert "evaluation" not in json.loads(meta) and repr(ev["ci_high"]) not in meta
    # the estimate is clipped at 0 for a good release, and "0.0" occurs in any JSON: test its digits only when > 0
    assert ev["distance"] == 0.0 or repr(ev["distance"]) not in meta


def test_dask_rows_with_nan_are_refused():
    da = pytest.importorskip("dask.array")
    X, Z, w = _problem(n=50)
    X[7, 0] = np.nan
    with pytest.raises(ValueError, match="NaN"):
        estimate_mean_gram(da.from_array(X, chunks=(20, 3)), kernel=GaussianKernel(lengthscale=1.0), n_pairs=5000, rng=0)
    with pytest.raises(ValueError, match="X"):
        rkhs_distance_report(da.from_array(X, chunks=(20, 3)), Z, w, kernel=GaussianKernel(lengthscale=1.0),
                             method="estimate", n_pairs=100, rng=0)
