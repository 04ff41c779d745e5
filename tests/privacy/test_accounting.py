"""Tests for dpkme.privacy.accounting.

Independent references written here:
* RDP of the Gaussian mechanism, alpha / (2 z^2) per release (Mironov 2017, Prop. 7),
  converted with the bound dp_accounting 0.6.0 uses (Canonne, Kamath & Steinke 2020,
  Prop. 12): eps = min_alpha [ RDP(alpha) + log1p(-1/alpha) - (log(delta) + log(alpha)) / (alpha - 1) ]
  over the same orders (read from its source: rdp_privacy_accountant.compute_epsilon);
* exact composition of Gaussian mechanisms (a Gaussian with 1/z_eff^2 = sum 1/z_i^2)
  evaluated with the Balle-Wang formula;
* exact privacy curve of k-fold binary randomized response (pure eps-DP);
* exact privacy curve of one Laplace mechanism.
"""

import json
import math

import dp_accounting
import numpy as np
import pytest
from scipy.special import comb

from dpkme.privacy.accounting import (
    BudgetLedger,
    EpsilonDeltaDpEvent,
    PrivacyCharge,
    basic_composition,
    calibrate_gaussian_composition,
    gaussian_charge,
    laplace_charge,
    pld_epsilon,
    pure_dp_charge,
    rdp_epsilon,
)
from dpkme.privacy.calibration import analytic_sigma, calibrate_gaussian, gaussian_delta, gaussian_epsilon

# dp_accounting's DEFAULT_RDP_ORDERS, written out.
ORDERS = [1 + x / 10.0 for x in range(1, 100)] + list(range(11, 64)) + [128, 256, 512, 1024]


def closed_form_eps(rdp_of_alpha, delta):
    """Improved RDP -> (eps, delta) conversion (CKS 2020, Prop. 12), orders > 1.01."""
    best = math.inf
    for a in ORDERS:
        if a <= 1.01:
            continue
        best = min(best, rdp_of_alpha(a) + math.log1p(-1 / a) - (math.log(delta) + math.log(a)) / (a - 1))
    return max(best, 0.0)


def gaussian_charges(z_list, eps=1.0, delta=1e-3):
    return [
        PrivacyCharge(f"g{i}", "gaussian", eps, delta, noise_multiplier=z) for i, z in enumerate(z_list)
    ]


def exact_gaussian_eps(z_list, counts, delta):
    """Exact eps of the composition: one Gaussian with noise multiplier (sum c/z^2)^(-1/2)."""
    mu2 = sum(c / z**2 for z, c in zip(z_list, counts))
    return gaussian_epsilon(sigma=1.0 / math.sqrt(mu2), delta=delta, sensitivity=1.0)


# ----------------------------------------------------------------------------- RDP
@pytest.mark.parametrize("T", [1, 10, 100])
@pytest.mark.parametrize("z", [0.8, 3.0, 20.0])
@pytest.mark.parametrize("delta", [1e-5, 1e-9])
def test_rdp_matches_closed_form(T, z, delta):
    cal = calibrate_gaussian(epsilon=0.5, delta=1e-3, sensitivity=1.0)
    z = max(z, cal.noise_multiplier)  # the charge must be consistent with its (eps, delta)
    charge = PrivacyCharge("g", "gaussian", 0.5, 1e-3, noise_multiplier=z, count=T)
    ref = closed_form_eps(lambda a: T * a / (2 * z**2), delta)
    # Same formula, same grid: agreement to floating-point accuracy.
    assert rdp_epsilon([charge], delta=delta) == pytest.approx(ref, rel=1e-9)
    # RDP is a valid upper bound: never below the exact composition.
    assert rdp_epsilon([charge], delta=delta) >= exact_gaussian_eps([z], [T], delta) * (1 - 1e-9)


def test_rdp_count_equals_repeated_charges():
    one = PrivacyCharge("g", "gaussian", 1.0, 1e-5, noise_multiplier=5.0, count=7)
    many = [PrivacyCharge("g", "gaussian", 1.0, 1e-5, noise_multiplier=5.0)] * 7
    assert rdp_epsilon([one], delta=1e-6) == pytest.approx(rdp_epsilon(many, delta=1e-6), rel=1e-12)
    assert basic_composition([one]) == pytest.approx(basic_composition(many))


def test_rdp_laplace_matches_mironov():
    eps = 0.5

    def lap_rdp(a):  # Mironov (2017), Prop. 6
        return eps + math.log1p((a - 1) * math.expm1(eps * (1 - 2 * a)) / (2 * a - 1)) / (a - 1)

    charge = laplace_charge("lap", epsilon=eps, count=20)
    assert rdp_epsilon([charge], delta=1e-6) == pytest.approx(closed_form_eps(lambda a: 20 * lap_rdp(a), 1e-6), rel=1e-9)


def test_rdp_pure_dp_uses_randomized_response_bound():
    eps, k = 0.3, 40
    p = math.exp(eps) / (1 + math.exp(eps))

    def rr_rdp(a):  # Renyi divergence between Bern(p) and Bern(1-p), in log space
        lp, lq = math.log(p), math.log1p(-p)
        return np.logaddexp(a * lp + (1 - a) * lq, a * lq + (1 - a) * lp) / (a - 1)

    got = rdp_epsilon([pure_dp_charge("em", epsilon=eps, count=k)], delta=1e-6)
    assert got == pytest.approx(closed_form_eps(lambda a: k * rr_rdp(a), 1e-6), rel=1e-9)
    # Never worse than the zCDP route (eps-DP => eps^2/2-zCDP, Bun & Steinke 2016).
    assert got <= closed_form_eps(lambda a: k * a * eps**2 / 2, 1e-6) + 1e-12
    # For many small-eps releases it beats basic composition.
    assert got < k * eps


def test_rdp_with_generic_approx_dp_uses_basic_composition_for_them():
    g = gaussian_charges([4.0] * 10)
    a = PrivacyCharge("a", "approx-dp", 0.2, 2e-6, count=3)
    got = rdp_epsilon([*g, a], delta=1e-5)
    assert got == pytest.approx(rdp_epsilon(g, delta=1e-5 - 6e-6) + 0.6, rel=1e-12)
    # No finite guarantee when the generic charges use up all of delta.
    assert rdp_epsilon([*g, a], delta=6e-6) == math.inf
    assert rdp_epsilon([a], delta=6e-6) == pytest.approx(0.6)
    assert rdp_epsilon([a], delta=5e-6) == math.inf
    assert rdp_epsilon([], delta=1e-5) == 0.0


# ----------------------------------------------------------------------------- PLD
def test_pld_close_to_exact_for_heterogeneous_gaussians():
    rng = np.random.default_rng(7)
    z = list(rng.uniform(4.0, 8.0, size=50))
    charges = gaussian_charges(z)
    exact = exact_gaussian_eps(z, [1] * 50, 1e-5)
    # Gaussian-only lists use the closed form of the composed Gaussian.
    assert pld_epsilon(charges, delta=1e-5) == pytest.approx(exact, rel=1e-12)
    # The discretised PLD itself: pessimistic (never below the exact value), and the
    # discretisation error with interval ~1e-4 is far below 0.01 here. (Its speed, < 1 s,
    # is a performance target measured by benchmarks/bench_accounting.py, not asserted here:
    # a wall-clock assert fails on a busy machine.)
    got = pld_epsilon(charges, delta=1e-5, exact_gaussian=False)
    assert exact - 1e-9 <= got <= exact + 0.01
    # Adding a tiny pure-DP charge changes little.
    mixed = pld_epsilon([*charges, pure_dp_charge("e", epsilon=0.01)], delta=1e-5)
    assert exact - 1e-9 <= mixed <= exact + 0.02


def test_pld_many_small_noise_gaussians_on_a_coarsened_grid():
    # mu = sqrt(1000): privacy loss spread over ~600 nats; the grid is coarsened automatically
    # (which keeps it under 2 s: benchmarks/bench_accounting.py measures that).
    charges = [PrivacyCharge("g", "gaussian", 1e3, 0.5, noise_multiplier=1.0, count=1000)]
    exact = exact_gaussian_eps([1.0], [1000], 1e-5)
    got = pld_epsilon([*charges, laplace_charge("l", epsilon=0.01)], delta=1e-5)
    assert exact <= got <= exact + 0.01 * exact


def test_pld_pure_dp_against_exact_randomized_response():
    eps, k, delta = 0.5, 20, 1e-5
    got = pld_epsilon([pure_dp_charge("em", epsilon=eps, count=k)], delta=delta)
    p = math.exp(eps) / (1 + math.exp(eps))

    def exact_delta(e):  # hockey-stick divergence of k-fold binary randomized response
        return sum(
            comb(k, i) * max(0.0, p ** (k - i) * (1 - p) ** i - math.exp(e) * p**i * (1 - p) ** (k - i))
            for i in range(k + 1)
        )

    assert exact_delta(got) <= delta * (1 + 1e-9)  # valid
    assert exact_delta(got - 0.01) > delta  # and within 0.01 of tight
    assert got < k * eps


def test_pld_single_laplace_exact():
    # One Laplace mechanism: delta(e) = 1 - exp((e - eps)/2) for e <= eps, so
    # eps(delta) = eps + 2 log(1 - delta).
    got = pld_epsilon([laplace_charge("l", epsilon=1.0)], delta=0.1)
    assert got == pytest.approx(1.0 + 2 * math.log(0.9), abs=2e-3)


def test_pld_approx_dp_single_charge():
    # The dominating pair of an (eps, delta)-DP mechanism is exactly (eps, delta)-DP.
    got = pld_epsilon([PrivacyCharge("a", "approx-dp", 0.7, 1e-6)], delta=1e-6)
    assert got == pytest.approx(0.7, abs=1e-3)
    assert pld_epsilon([PrivacyCharge("a", "approx-dp", 0.7, 1e-6)], delta=1e-7) == math.inf


def test_ordering_pld_rdp_basic_for_repeated_gaussians():
    # 50 releases each calibrated (analytic) to (1, 1e-6). Basic composition grows
    # linearly (50), RDP and PLD like sqrt(50) because they compose the actual
    # Gaussian noise; PLD is (near-)exact while the RDP->DP conversion is lossy, so
    # PLD <= RDP <= basic. The exact value is a lower bound for all of them.
    cal = calibrate_gaussian(epsilon=1.0, delta=1e-6, sensitivity=0.01)
    charges = [gaussian_charge(f"r{i}", cal) for i in range(50)]
    eps_b, delta_b = basic_composition(charges)
    assert eps_b == pytest.approx(50.0) and delta_b == pytest.approx(5e-5)
    eps_r = rdp_epsilon(charges, delta=delta_b)
    eps_p = pld_epsilon(charges, delta=delta_b)
    exact = exact_gaussian_eps([cal.noise_multiplier], [50], delta_b)
    assert exact - 1e-9 <= eps_p <= eps_r <= eps_b
    assert eps_r < 0.25 * eps_b


# ----------------------------------------------------------------------------- calibration for composition
@pytest.mark.parametrize("count", [1, 10, 50])
def test_calibrate_gaussian_composition(count):
    eps, delta, sens = 1.0, 1e-5, 0.02
    sigma = calibrate_gaussian_composition(epsilon=eps, delta=delta, count=count, sensitivity=sens)
    charge = PrivacyCharge("k", "gaussian", 1e3, 0.5, noise_multiplier=sigma / sens, count=count)
    assert rdp_epsilon([charge], delta=delta) <= eps
    tighter = PrivacyCharge("k", "gaussian", 1e3, 0.5, noise_multiplier=sigma / sens * (1 - 1e-6), count=count)
    assert rdp_epsilon([tighter], delta=delta) > eps
    exact = calibrate_gaussian_composition(epsilon=eps, delta=delta, count=count, sensitivity=sens, method="analytic")
    assert exact == pytest.approx(math.sqrt(count) * analytic_sigma(epsilon=eps, delta=delta, sensitivity=sens), rel=1e-11)
    assert gaussian_delta(sigma=exact / math.sqrt(count), epsilon=eps, sensitivity=sens) <= delta
    assert exact < sigma


def test_calibrate_gaussian_composition_bad_input():
    with pytest.raises(ValueError, match="count"):
        calibrate_gaussian_composition(epsilon=1.0, delta=1e-5, count=0, sensitivity=1.0)
    with pytest.raises(ValueError, match="'pld'"):
        calibrate_gaussian_composition(epsilon=1.0, delta=1e-5, count=2, sensitivity=1.0, method="pld")


# ----------------------------------------------------------------------------- charges
def test_gaussian_charge_and_events():
    cal = calibrate_gaussian(epsilon=0.5, delta=1e-6, sensitivity=0.1)
    c = gaussian_charge("Algorithm 1 release #3", cal, count=4, details={"neighbouring": "replace-one"})
    assert c.mechanism == "gaussian" and c.epsilon == 0.5 and c.delta == 1e-6
    assert c.noise_multiplier == pytest.approx(cal.sigma / 0.1)
    assert c.details["neighbouring"] == "replace-one" and c.details["calibration"] == "analytic"
    ev = c.dp_event()
    assert isinstance(ev, dp_accounting.SelfComposedDpEvent) and ev.count == 4
    assert ev.event == dp_accounting.GaussianDpEvent(noise_multiplier=c.noise_multiplier)
    assert isinstance(laplace_charge("l", epsilon=2.0).dp_event(), dp_accounting.LaplaceDpEvent)
    assert laplace_charge("l", epsilon=2.0).dp_event().noise_multiplier == 0.5
    rr = pure_dp_charge("e", epsilon=1.0).dp_event()
    assert isinstance(rr, dp_accounting.RandomizedResponseDpEvent) and rr.num_buckets == 2
    # Keeps the true answer with probability 1 - p/2 = e^eps / (1 + e^eps).
    assert (1 - rr.noise_parameter / 2) / (rr.noise_parameter / 2) == pytest.approx(math.e)
    assert isinstance(PrivacyCharge("a", "approx-dp", 1.0, 1e-6).dp_event(), EpsilonDeltaDpEvent)


def test_charge_validation():
    with pytest.raises(ValueError, match="noise_multiplier"):
        PrivacyCharge("g", "gaussian", 1.0, 1e-5)
    with pytest.raises(ValueError, match="under-count"):
        # z = 1 is far too little noise for (0.1, 1e-5).
        PrivacyCharge("g", "gaussian", 0.1, 1e-5, noise_multiplier=1.0)
    with pytest.raises(ValueError, match="'median'"):
        PrivacyCharge("x", "median", 1.0, 0.0)
    with pytest.raises(ValueError, match="1e-05"):
        laplace_charge("l", epsilon=1.0) and PrivacyCharge("l", "laplace", 1.0, 1e-5)
    with pytest.raises(ValueError, match="-1"):
        laplace_charge("l", epsilon=-1)
    with pytest.raises(ValueError, match="nan"):
        pure_dp_charge("e", epsilon=float("nan"))
    with pytest.raises(ValueError, match="0"):
        laplace_charge("l", epsilon=1.0, count=0)
    with pytest.raises(ValueError, match="'gaussian'"):
        pure_dp_charge("e", epsilon=1.0, mechanism="gaussian")
    with pytest.raises(ValueError, match="calibration"):
        gaussian_charge("g", {"sigma": 1.0})


def test_basic_composition_sums():
    charges = [
        laplace_charge("l", epsilon=0.25, count=4),
        pure_dp_charge("e", epsilon=0.5),
        PrivacyCharge("a", "approx-dp", 0.1, 1e-6, count=3),
        gaussian_charge("g", calibrate_gaussian(epsilon=2.0, delta=1e-7, sensitivity=1.0), count=2),
    ]
    eps, delta = basic_composition(charges)
    assert eps == pytest.approx(1.0 + 0.5 + 0.3 + 4.0)
    assert delta == pytest.approx(3e-6 + 2e-7)
    assert basic_composition([]) == (0.0, 0.0)


# ----------------------------------------------------------------------------- ledger
def test_ledger_add_reset_and_records():
    led = BudgetLedger(epsilon_budget=3.0, delta_budget=1e-5)
    assert len(led) == 0 and led.totals()["basic"] == (0.0, 0.0)
    cal = calibrate_gaussian(epsilon=0.5, delta=1e-6, sensitivity=0.1)
    led.add(gaussian_charge("a", cal, details={"neighbouring": "replace-one"}))
    led.add(laplace_charge("b", epsilon=0.5))
    assert len(led) == 2 and isinstance(led.charges, tuple)
    with pytest.raises(AttributeError):
        led.charges.append(None)
    recs = led.to_records()
    assert [r["label"] for r in recs] == ["a", "b"]
    assert recs[-1]["cumulative_epsilon_basic"] == pytest.approx(1.0)
    json.dumps(recs)  # JSON-serialisable
    with pytest.raises(ValueError, match="add-remove"):
        led.add(laplace_charge("c", epsilon=0.1, details={"neighbouring": "add-remove"}))
    with pytest.raises(ValueError, match="PrivacyCharge"):
        led.add((1.0, 1e-6))
    led.reset()
    assert len(led) == 0 and led.epsilon_budget == 3.0


def test_ledger_totals_and_budget():
    cal = calibrate_gaussian(epsilon=1.0, delta=1e-7, sensitivity=1.0)
    led = BudgetLedger(epsilon_budget=10.0, delta_budget=1e-5)
    for i in range(20):
        led.add(gaussian_charge(f"r{i}", cal))
    tot = led.totals()
    assert tot["basic"] == (pytest.approx(20.0), pytest.approx(2e-6))
    assert tot["rdp"][1] == 1e-5 and tot["pld"][1] == 1e-5  # budget delta is the default target
    assert tot["best"][0] == min(tot["rdp"][0], tot["pld"][0]) and tot["best_method"] == "pld"
    # Basic composition (20 > 10) exceeds the budget, the Gaussian composition does not.
    assert led.exceeds_budget(method="basic")
    assert not led.exceeds_budget(method="rdp")
    assert not led.exceeds_budget()
    # A planned release can be checked before running it.
    assert led.exceeds_budget(pure_dp_charge("big", epsilon=9.0))
    assert not led.exceeds_budget(pure_dp_charge("small", epsilon=0.1))
    rem = led.remaining(method="basic")
    assert rem["epsilon"] == pytest.approx(-10.0) and rem["delta"] == pytest.approx(8e-6)
    rem = led.remaining()
    assert 0 < rem["epsilon"] < 10 and rem["delta_spent"] == pytest.approx(2e-6)
    # An explicit target delta overrides the default.
    assert led.totals(delta=1e-9, include_pld=False)["rdp"][0] > tot["rdp"][0]


def test_ledger_pure_only_and_no_budget():
    led = BudgetLedger()
    led.add(laplace_charge("l", epsilon=0.3, count=2))
    tot = led.totals()
    assert tot["best"] == (pytest.approx(0.6), 0.0) and tot["rdp"] == (math.inf, 0.0)
    assert not led.exceeds_budget()
    led2 = BudgetLedger(epsilon_budget=0.5)  # delta budget 0: only pure composition counts
    led2.add(laplace_charge("l", epsilon=0.3))
    assert not led2.exceeds_budget()
    led2.add(laplace_charge("l", epsilon=0.3))
    assert led2.exceeds_budget()
    led2.add(PrivacyCharge("g", "approx-dp", 0.01, 1e-9))
    assert led2.exceeds_budget(method="basic")


def test_ledger_bad_budget():
    with pytest.raises(ValueError, match="-1"):
        BudgetLedger(epsilon_budget=-1)
    with pytest.raises(ValueError, match="2"):
        BudgetLedger(delta_budget=2)
    with pytest.raises(ValueError, match="'exact'"):
        BudgetLedger().exceeds_budget(method="exact")


@pytest.mark.parametrize("delta", [0.0, 1.0, float("nan"), -1e-3])
def test_accountants_bad_delta(delta):
    charges = gaussian_charges([5.0])
    for fn in (rdp_epsilon, pld_epsilon):
        with pytest.raises(ValueError, match="delta") as info:
            fn(charges, delta=delta)
        assert repr(delta) in str(info.value)
    with pytest.raises(ValueError, match="PrivacyCharge"):
        rdp_epsilon([(1.0, 0.0)], delta=1e-5)


def test_parallel_composition_over_declared_disjoint_parts():
    from dpkme.privacy.accounting import BudgetLedger, pure_dp_charge

    ledger = BudgetLedger(epsilon_budget=2.5)
    ledger.add(pure_dp_charge("release on everyone", epsilon=1.0))
    ledger.add(pure_dp_charge("test on held-out", epsilon=1.0, details={"parts": ("held-out",)}))
    ledger.add(pure_dp_charge("test on main part", epsilon=1.0, details={"parts": ("main",)}))
    tot = ledger.totals()
    # each individual is in one part: 1 (everyone) + 1 (their part) = 2, not 3
    assert tot["basic"][0] == pytest.approx(2.0)
    assert set(tot["parts"]) == {"held-out", "main"}
    assert not ledger.exceeds_budget()
    extra = pure_dp_charge("another on held-out", epsilon=1.0, details={"parts": ("held-out",)})
    assert ledger.exceeds_budget(extra=extra)  # held-out would reach 3 > 2.5
    plain = BudgetLedger()
    plain.add(pure_dp_charge("a", epsilon=1.0))
    assert "parts" not in plain.totals()


def test_pld_of_a_large_laplace_composition_is_finite_and_quiet():
    """Regression (Hypothesis): 55 Laplace charges of epsilon 13.25 overflowed inside dp_accounting (a
    RuntimeWarning) and gave epsilon = inf; basic composition (728.75) is a valid, finite bound."""
    import warnings

    from dpkme.privacy.accounting import PrivacyCharge, basic_composition, pld_epsilon

    c = PrivacyCharge("c", "laplace", 13.25, 0.0, count=55)
    with warnings.catch_warnings():
        warnings.simplefilter("error", RuntimeWarning)
        eps = pld_epsilon([c], delta=1e-5)
    assert eps == basic_composition([c])[0] == 728.75
    small = PrivacyCharge("s", "laplace", 1.0, 0.0, count=5)
    assert pld_epsilon([small], delta=1e-5) < 5.0        # where the PLD is tighter it is still used
