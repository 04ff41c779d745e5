"""dpkme.audit.exhibits: the Privacy audit page's exhibits and audit curves, as plain library functions.

The expectations of the page's tests (tests/test_app_audit.py) hold for the functions themselves: at a claimed
ε = 1 the cos-with-bias features reach a norm above 1 and a larger ε; the perturbed statistic moves by more than
1000 times its published bound; the L1 table has rows that are and are not private. Closed forms and invariants
check the numbers (the L1 sensitivities, densities that integrate to 1, curves on (0, 1)).
"""

from __future__ import annotations

import math
from types import SimpleNamespace

import numpy as np
import pytest

from dpkme.audit import AuditSettings, run_audit
from dpkme.audit.exhibits import (
    L1_EXHIBIT_CASES,
    FeatureNormExhibit,
    epsilon_delta_curves,
    feature_norm_exhibit,
    finite_curve,
    histogram_density,
    l1_dimension_exhibit,
    perturbed_statistic_exhibit,
    privacy_loss_densities,
)
from dpkme.kernels import GaussianKernel
from dpkme.privacy.calibration import calibrate_gaussian, gaussian_epsilon

PUBLIC = np.random.default_rng(3).normal(size=(50, 2))


def _exhibit(J: int, n: int = 3600, **kw) -> FeatureNormExhibit:
    return feature_norm_exhibit(GaussianKernel(lengthscale=1.0), public=PUBLIC, n=n, epsilon=1.0, delta=1e-6,
                                n_features=J, **kw)


# ---------------------------------------------------------------------- 1. feature norms
def test_cosine_features_exceed_the_assumed_norm_and_the_claimed_epsilon():
    ex = _exhibit(10)
    assert ex.squared_norms.shape == (20000,)
    assert np.all(ex.squared_norms >= 0) and np.all(ex.squared_norms <= 2 + 1e-12)   # (2/J) Σ cos² ∈ [0, 2]
    assert ex.largest_norm == pytest.approx(math.sqrt(ex.squared_norms.max()))
    assert 1.0 < ex.largest_norm <= math.sqrt(2) + 1e-12
    assert ex.epsilon_add_remove > 1.0                                    # claimed ε = 1
    assert ex.paired_deviation < 1e-12                                    # dpkme's cos/sin pairs: norm exactly 1
    assert 0 < ex.pair_distance <= 2 * math.sqrt(2) + 1e-12


def test_feature_norm_epsilons_follow_the_gaussian_calibration():
    """ε′ is gaussian_epsilon at the actual sensitivity with the σ calibrated to the claimed one."""
    ex, n = _exhibit(10, n=500), 500
    sigma = calibrate_gaussian(epsilon=1.0, delta=1e-6, sensitivity=1.0 / n).sigma
    assert ex.epsilon_add_remove == pytest.approx(gaussian_epsilon(sigma=sigma, delta=1e-6,
                                                                   sensitivity=ex.largest_norm / n))
    # at the claimed sensitivity the calibration gives back the claimed ε (the exhibit's reference point)
    assert gaussian_epsilon(sigma=sigma, delta=1e-6, sensitivity=1.0 / n) == pytest.approx(1.0, rel=1e-6)
    sigma_r = calibrate_gaussian(epsilon=1.0, delta=1e-6, sensitivity=2.0 / n).sigma
    assert ex.epsilon_replace_one == pytest.approx(gaussian_epsilon(sigma=sigma_r, delta=1e-6,
                                                                    sensitivity=ex.pair_distance / n))
    assert (ex.epsilon_replace_one > 1.0) == (ex.pair_distance > 2.0)


def test_fewer_features_fluctuate_more_and_the_exhibit_is_reproducible():
    assert _exhibit(1000).largest_norm < _exhibit(10).largest_norm
    a, b = _exhibit(50), _exhibit(50)
    assert np.array_equal(a.squared_norms, b.squared_norms) and a.largest_norm == b.largest_norm
    assert not np.array_equal(_exhibit(50, random_state=1).squared_norms, a.squared_norms)


def test_odd_feature_counts_and_bad_inputs():
    assert _exhibit(7, n_probes=500).paired_deviation < 1e-12         # the cos/sin map rounds J up to even
    with pytest.raises(ValueError, match="n_features"):
        _exhibit(0)
    with pytest.raises(ValueError, match="public"):
        feature_norm_exhibit(GaussianKernel(lengthscale=1.0), public=np.zeros((0, 2)), n=10, epsilon=1.0,
                             delta=1e-6, n_features=10)


# ---------------------------------------------------------------------- 2. perturbed statistic
def test_perturbed_statistic_exceeds_its_published_bound():
    cx = perturbed_statistic_exhibit(n=1000, n_features=5, epsilon=1.0, delta=1e-6)
    assert cx["change"] > 1000 * cx["published_bound"]
    assert cx["ratio"] == pytest.approx(cx["change"] / cx["published_bound"], rel=1e-9)
    sigma = calibrate_gaussian(epsilon=1.0, delta=1e-6, sensitivity=cx["published_bound"]).sigma
    expected = gaussian_epsilon(sigma=sigma, delta=1e-6, sensitivity=cx["change"])
    assert cx["epsilon_achieved"] == pytest.approx(expected) or (math.isinf(expected)
                                                                 and math.isinf(cx["epsilon_achieved"]))
    assert cx["epsilon_achieved"] > 1.0


# ---------------------------------------------------------------------- 3. L1 sensitivity
def test_l1_exhibit_rows_match_the_closed_forms():
    rows = l1_dimension_exhibit(epsilon=1.0, n=3600)
    assert [(r["N"], r["d"]) for r in rows] == [*L1_EXHIBIT_CASES, (3600, 1000)]
    for r in rows:
        assert r["correct 2√d/N"] == pytest.approx(2 * math.sqrt(r["d"]) / r["N"], rel=1e-12)
        assert r["code's 2/√N"] == pytest.approx(2 / math.sqrt(r["N"]), rel=1e-12)
        private = r["code's 2/√N"] >= r["correct 2√d/N"]                # valid iff d ≤ N
        assert private == (r["d"] <= r["N"])
        assert r["private?"] == ("yes (loose)" if private else "no")
        expected = 1.0 if private else math.sqrt(r["d"] / r["N"])      # ε · (2√d/N) / (2/√N)
        assert r["ε really achieved (claimed ε)"] == pytest.approx(expected, rel=1e-12)
    assert {r["private?"] for r in rows} == {"no", "yes (loose)"}


def test_l1_exhibit_scales_with_the_claimed_epsilon():
    a, b = l1_dimension_exhibit(epsilon=1.0, n=50), l1_dimension_exhibit(epsilon=0.5, n=50)
    for ra, rb in zip(a, b):
        assert rb["ε really achieved (claimed ε)"] == pytest.approx(0.5 * ra["ε really achieved (claimed ε)"])


# ---------------------------------------------------------------------- audit curves
@pytest.fixture(scope="module")
def gaussian_audit():
    return run_audit("gaussian", settings=AuditSettings(runs=2000, random_state=0))


def test_histogram_density_and_finite_curve():
    edges = np.array([0.0, 0.5, 1.5, 2.0])
    dens = histogram_density([1, 2, 1], edges)
    assert np.sum(dens * np.diff(edges)) == pytest.approx(1.0)
    assert np.array_equal(histogram_density([0, 0, 0], edges), np.zeros(3))
    x, y = finite_curve([0.0, 1e-3, 0.5, 1.0, np.nan, 0.1], [1.0, 2.0, np.inf, 3.0, 1.0, 4.0])
    assert x.tolist() == [1e-3, 0.1] and y.tolist() == [2.0, 4.0]


def test_privacy_loss_densities_integrate_to_one(gaussian_audit):
    d = privacy_loss_densities(gaussian_audit)
    assert np.sum(d["density_d"] * d["widths"]) == pytest.approx(1.0)
    assert np.sum(d["density_neighbour"] * d["widths"]) == pytest.approx(1.0)
    assert np.allclose(d["centres"], 0.5 * (d["edges"][1:] + d["edges"][:-1]))
    a = d["analytic"]
    assert a is not None and a["x"].shape == (400,)
    assert a["std"] ** 2 == pytest.approx(2 * a["mean"])                 # N(μ²/2, μ²)
    assert np.trapezoid(a["pdf_d"], a["x"]) == pytest.approx(1.0, abs=1e-3)
    assert np.allclose(a["pdf_neighbour"], a["pdf_d"][::-1])             # mirror images around 0
    assert a["x"][0] <= min(d["edges"][0], -a["mean"] - 4 * a["std"]) + 1e-12


def test_pure_dp_audit_has_no_analytic_density():
    res = run_audit("exponential", settings=AuditSettings(runs=500, random_state=0))
    assert privacy_loss_densities(res)["analytic"] is None


def test_epsilon_delta_curves_of_a_correct_gaussian_audit(gaussian_audit):
    c = epsilon_delta_curves(gaussian_audit)
    for key in ("claimed", "pair", "plug_in", "lower_bounds"):
        x, y = c[key]
        assert x.size and np.all((x > 0) & (x < 1)) and np.all(np.isfinite(y))
    assert c["pair_max"] == pytest.approx(float(c["pair"][1].max()))
    assert not c["pair_cut_off"]
    assert c["top"] >= max(gaussian_audit.claimed_epsilon, c["claimed"][1].max(), c["lower_bounds"][1].max())
    # the lower bounds of a correct mechanism stay below its claim at the claimed δ
    assert gaussian_audit.epsilon_lower_bound <= gaussian_audit.claimed_epsilon


def _fake_result(pair_eps):
    deltas = np.array([1e-4, 1e-3, 1e-2])
    return SimpleNamespace(
        claimed_epsilon=2.0,
        analytic=SimpleNamespace(deltas=deltas, epsilon_claimed=np.array([3.0, 2.5, 2.0]),
                                 epsilon_pair=np.asarray(pair_eps, dtype=float)),
        privacy_loss=SimpleNamespace(loss_d=np.array([]), empirical_delta=lambda g: np.zeros_like(g)),
        lower_bounds={"deltas": deltas, "epsilons": np.array([0.5, 0.4, 0.3])})


def test_a_pair_curve_far_above_the_claim_is_cut_off():
    near = epsilon_delta_curves(_fake_result([8.0, 5.0, 4.0]))        # ≤ 3 × 3.0: shown
    assert not near["pair_cut_off"] and near["top"] == 8.0
    far = epsilon_delta_curves(_fake_result([50.0, 20.0, 10.0]))      # > 3 × 3.0: cut off
    assert far["pair_cut_off"] and far["top"] == 3.0 and far["pair_max"] == 50.0
    assert far["plug_in"][0].size == 0                                 # no runs' privacy loss: no plug-in curve
    none = epsilon_delta_curves(SimpleNamespace(**{**vars(_fake_result([1.0] * 3)), "analytic": None}))
    assert none["pair_max"] is None and none["claimed"][0].size == 0 and none["top"] == 2.0


def test_the_exhibits_are_exported_by_dpkme_audit():
    import dpkme.audit
    import dpkme.audit.exhibits as ex

    for name in ("FeatureNormExhibit", "epsilon_delta_curves", "feature_norm_exhibit", "l1_dimension_exhibit",
                 "perturbed_statistic_exhibit", "privacy_loss_densities"):
        assert getattr(dpkme.audit, name) is getattr(ex, name) and name in dpkme.audit.__all__
