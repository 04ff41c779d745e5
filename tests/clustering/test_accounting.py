"""Accounting of DP kernel k-means: calibration, closed forms, the paper's moments accountant, the ledger.

Deterministic (no sampling); tolerances are stated at each assertion.
"""

from __future__ import annotations

import math

import numpy as np
import pytest
from dp_accounting.rdp import rdp_privacy_accountant as rdp_mod
from scipy import integrate

from dpkme.clustering import (
    compare_with_paper,
    gaussian_log_moment,
    moments_epsilon,
    paper_epsilon,
    paper_log_moment,
    paper_plan,
    plan_from_noise,
    plan_kmeans,
    step_mu,
)
from dpkme.privacy.accounting import BudgetLedger, pld_epsilon, rdp_epsilon
from dpkme.privacy.calibration import gaussian_epsilon

# dp_accounting's default RDP orders (RdpAccountant() without arguments)
ORDERS = np.concatenate([np.linspace(1.1, 10.9, 99), np.arange(11, 64), [128, 256, 512, 1024]])


def _closed_form_rdp_epsilon(mu2_total: float, delta: float) -> float:
    """RDP of a Gaussian composition, alpha * sum(mu^2) / 2, converted as dp_accounting does (CKS 2020, Prop. 12)."""
    a = ORDERS
    rdp = a * mu2_total / 2.0
    eps = rdp + np.log1p(-1.0 / a) - (math.log(delta) + np.log(a)) / (a - 1.0)
    return float(max(0.0, np.min(eps)))


@pytest.mark.parametrize("relation", ["replace-one", "add-remove"])
@pytest.mark.parametrize("eps,T", [(0.5, 10), (2.0, 5), (8.0, 20)])
def test_plan_is_calibrated_to_the_target(relation, eps, T):
    plan = plan_kmeans(epsilon=eps, delta=1e-6, n_iter=T, neighbouring=relation)
    spent = plan.epsilon()
    assert spent <= eps * (1 + 1e-9)
    assert spent == pytest.approx(eps, rel=1e-6)  # nothing wasted (PLD = exact Gaussian DP)
    lloyd = plan.step("lloyd")
    assert lloyd.count == T
    assert step_mu(sigma_count=lloyd.sigma_count, sigma_sum=lloyd.sum_multiplier,
                   neighbouring=relation) == pytest.approx(lloyd.mu, rel=1e-12)
    rdp_plan = plan_kmeans(epsilon=eps, delta=1e-6, n_iter=T, neighbouring=relation, accountant="rdp")
    assert rdp_plan.epsilon() <= eps * (1 + 1e-9)
    assert rdp_plan.mu_total < plan.mu_total  # RDP is a looser bound: more noise for the same target


@pytest.mark.parametrize("T,mu", [(1, 0.3), (10, 0.2), (50, 0.05), (10, 1.5)])
def test_accountant_matches_closed_form_rdp_of_T_gaussians(T, mu):
    """dpkme.privacy.accounting on the plan's charges = alpha T mu^2 / 2 through the CKS conversion."""
    plan = plan_from_noise(n_iter=T, sigma_count=math.sqrt(2) / mu, sum_multiplier=math.sqrt(2) / mu, delta=1e-5,
                           neighbouring="add-remove")
    assert plan.step("lloyd").mu == pytest.approx(mu)
    got = rdp_epsilon(plan.charges(), delta=1e-5)
    assert got == pytest.approx(_closed_form_rdp_epsilon(T * mu**2, 1e-5), rel=1e-9, abs=1e-12)
    # and dp_accounting's own Gaussian RDP is alpha / (2 z^2)
    np.testing.assert_allclose(rdp_mod._compute_rdp_poisson_subsampled_gaussian(1.0, 1.0 / mu, ORDERS),
                               ORDERS * mu**2 / 2, rtol=1e-12)
    # PLD: exactly a sqrt(T) mu Gaussian (Balle-Wang), also for the one-line charge
    exact = gaussian_epsilon(sigma=1.0 / (math.sqrt(T) * mu), delta=1e-5, sensitivity=1.0)
    assert pld_epsilon(plan.charges(), delta=1e-5) == pytest.approx(exact, rel=1e-12)
    assert pld_epsilon([plan.total_charge()], delta=1e-5) == pytest.approx(exact, rel=1e-12)
    assert rdp_epsilon([plan.total_charge()], delta=1e-5) == pytest.approx(got, rel=1e-9)


def test_paper_eq3_formula():
    lam = np.arange(1, 6)
    got = paper_log_moment(lam, n_iter=7, sigma_K=3.0, sigma_C=2.0)
    np.testing.assert_allclose(got, 7 * (lam**2 + lam) * (1 / (4 * 4.0) + 1 / (2 * 9.0)))
    np.testing.assert_allclose(paper_log_moment(lam, n_iter=7, sigma_K=3.0), 7 * (lam**2 + lam) / 18.0)
    np.testing.assert_allclose(paper_log_moment(lam, n_iter=7, sigma_K=3.0, sigma_C=2.0, norm_count=1),
                               (lam**2 + lam) * (1 / 16.0 + 7 / 18.0))


def test_lemma1_is_off_by_a_factor_2():
    """log E[exp(lambda L)] for the Gaussian privacy loss, by quadrature, vs Lemma 1 and the true value."""
    sigma = 1.7
    for lam in (1, 3, 8):
        # privacy loss at output o ~ N(0, sigma^2) vs N(1, sigma^2): L = (1 - 2 o) / (2 sigma^2) ... use o ~ M(D)
        def integrand(o, lam=lam):
            loss = ((o - 1.0) ** 2 - o**2) / (2 * sigma**2)
            return math.exp(lam * loss) * math.exp(-o**2 / (2 * sigma**2)) / math.sqrt(2 * math.pi * sigma**2)

        mgf = integrate.quad(integrand, -60, 60, limit=400)[0]
        true = math.log(mgf)
        assert true == pytest.approx(float(gaussian_log_moment(lam, 1 / sigma**2)), rel=1e-7)
        assert true == pytest.approx(2 * (lam**2 + lam) / (4 * sigma**2), rel=1e-7)  # Lemma 1 x 2


@pytest.mark.parametrize("sigma_C", [None, 3.0])
@pytest.mark.parametrize("sigma_K,T", [(4.0, 10), (20.0, 5), (2.0, 30)])
def test_paper_accountant_vs_modern(sigma_K, T, sigma_C):
    delta = 1e-5
    cmp = compare_with_paper(n_iter=T, sigma_K=sigma_K, sigma_C=sigma_C, delta=delta)
    paper = paper_epsilon(n_iter=T, sigma_K=sigma_K, sigma_C=sigma_C, delta=delta)
    assert cmp["paper"] == paper
    ar, ro = cmp["add-remove"], cmp["replace-one"]
    # add/remove: the sqrt(2) sensitivity slip and the factor-2 Lemma 1 slip cancel exactly
    assert ar["moments_norm_T"] == pytest.approx(paper, rel=1e-12)
    assert ar["moment_ratio"] == pytest.approx(1.0)
    # (the paper charges the norm step T times; Algorithm 2 runs it once)
    if sigma_C is None:
        assert ar["moments"] == pytest.approx(paper, rel=1e-12)
    else:
        assert ar["moments"] < paper
    # dp_accounting's conversion is at least as tight as Theorem 1's on the same moments
    assert ar["rdp"] <= ar["moments"] * (1 + 1e-9)
    assert ar["pld"] <= ar["rdp"] * (1 + 1e-9)
    assert ar["moments"] == pytest.approx(cmp["paper_norm_once"], rel=1e-12)
    # replace-one: the true log moments are twice eq. (3)'s, so the paper understates epsilon
    assert ro["moment_ratio"] == pytest.approx(2.0)
    assert ro["moments_norm_T"] > paper
    for key in ("moments", "rdp", "pld"):
        assert ro[key] > cmp["paper_norm_once"]  # like for like: the norm step once on both sides
        assert ro[key] > ar[key]


def test_paper_plan_noise():
    plan = paper_plan(sigma_K=5.0, sigma_C=2.0, n_iter=4, delta=1e-6, neighbouring="replace-one")
    lloyd, norm = plan.step("lloyd"), plan.step("norm")
    assert lloyd.sigma_count == pytest.approx(5 * math.sqrt(2))
    assert lloyd.sigma_sum(0.5) == pytest.approx(5 * math.sqrt(2) * 0.5)
    assert lloyd.mu**2 == pytest.approx(2 / 25)  # replace-one joint: 2 / sigma_K^2
    assert norm.mu**2 == pytest.approx(1 / 4)  # sqrt(2) / (sqrt(2) sigma_C)
    ar = paper_plan(sigma_K=5.0, n_iter=4, delta=1e-6, neighbouring="add-remove")
    assert ar.step("lloyd").mu**2 == pytest.approx(1 / 25)


def test_budget_split_shares_and_table():
    plan = plan_kmeans(epsilon=1.0, delta=1e-6, n_iter=5, norm_step=True, norm_share=0.2, release_share=0.3)
    tot = plan.mu_total**2
    assert plan.step("norm").mu**2 / tot == pytest.approx(0.2, rel=1e-6)
    assert plan.step("release").mu**2 / tot == pytest.approx(0.3, rel=1e-6)
    assert 5 * plan.step("lloyd").mu**2 / tot == pytest.approx(0.5, rel=1e-6)
    rows = plan.budget_table(norm_bound=1.0)
    assert [r["kind"] for r in rows] == ["norm"] + ["lloyd"] * 5 + ["release"]
    assert sum(r["share"] for r in rows) == pytest.approx(1.0)
    assert all(r["epsilon_alone"] < 1.0 for r in rows)
    assert plan.to_dict()["steps"][1]["count"] == 5


def test_charges_go_into_the_ledger():
    plan = plan_kmeans(epsilon=1.0, delta=1e-6, n_iter=10)
    led = BudgetLedger(epsilon_budget=1.0, delta_budget=1e-6)
    for c in plan.charges():
        led.add(c)
    t = led.totals()
    assert t["pld"][0] == pytest.approx(1.0, rel=1e-6)
    assert not led.exceeds_budget()
    assert led.exceeds_budget(plan.total_charge())  # a second run does not fit
    one = BudgetLedger(epsilon_budget=1.0, delta_budget=1e-6)
    one.add(plan.total_charge("DP k-means"))
    assert one.totals()["best"][0] == pytest.approx(1.0, rel=1e-6)
    assert plan.charges()[0].details["neighbouring"] == "replace-one"
    with pytest.raises(ValueError, match="neighbouring"):
        led.add(plan_kmeans(epsilon=1.0, delta=1e-6, n_iter=2, neighbouring="add-remove").total_charge())


def test_moments_epsilon_minimises_over_orders():
    eps = moments_epsilon(lambda lam: gaussian_log_moment(lam, 0.1), delta=1e-5, lambdas=range(1, 1000))
    lam = np.arange(1, 1000)
    assert eps == pytest.approx(np.min((lam * (lam + 1) * 0.05 + math.log(1e5)) / lam))


def test_plan_errors():
    with pytest.raises(ValueError, match="epsilon"):
        plan_kmeans(epsilon=0.0, delta=1e-6, n_iter=3)
    with pytest.raises(ValueError, match="n_iter"):
        plan_kmeans(epsilon=1.0, delta=1e-6, n_iter=0)
    with pytest.raises(ValueError, match="norm_share"):
        plan_kmeans(epsilon=1.0, delta=1e-6, n_iter=3, norm_step=True, norm_share=0.0)
    with pytest.raises(ValueError, match="< 1"):
        plan_kmeans(epsilon=1.0, delta=1e-6, n_iter=3, norm_step=True, norm_share=0.5, release_share=0.5)
    with pytest.raises(ValueError, match="accountant"):
        plan_kmeans(epsilon=1.0, delta=1e-6, n_iter=3, accountant="moments")
    with pytest.raises(ValueError, match="release_sigma_count"):
        plan_from_noise(n_iter=2, sigma_count=1.0, sum_multiplier=1.0, delta=1e-6, release_sigma_count=1.0)
    with pytest.raises(ValueError, match="sum noise"):
        plan_kmeans(epsilon=1.0, delta=1e-6, n_iter=3, norm_step=True).step("norm").sigma_sum(1.0)
