"""Accounting of DPGM (dpkme.generative.accounting): dp_accounting RDP/PLD, the paper's Theorem 4, calibration.

The independent computations: the paper's moments of the subsampled Gaussian are integrated numerically
here (scipy-free trapezoid in log space) and must equal dp_accounting's analytic RDP at integer orders;
the PLD epsilon must lie below the RDP one (PLD is tight, RDP an upper bound) and agree with a finer PLD grid.
"""

from __future__ import annotations

import math

import dp_accounting
import numpy as np
import pytest
from dp_accounting import pld as dp_pld
from dp_accounting.rdp import rdp_privacy_accountant as rdp_lib

from dpkme.clustering import gaussian_log_moment, moments_epsilon, paper_log_moment, plan_kmeans
from dpkme.generative import (
    DPGMPlan,
    calibrate_noise_multiplier,
    cluster_selection_rdp,
    dpgm_epsilon,
    dpgm_event,
    dpsgd_event,
    epsilon_vs_epochs,
    paper_dpgm_epsilon,
    plan_dpgm,
    steps_per_epoch,
    subsampled_gaussian_log_moment,
)
from dpkme.privacy.accounting import BudgetLedger


@pytest.mark.parametrize("q, sigma", [(0.01, 1.0), (0.05, 2.0), (0.3, 0.8), (1.0, 1.5)])
def test_numerical_moments_match_dp_accounting_rdp(q, sigma):
    """alpha_G(lambda) = lambda * RDP(lambda + 1): numerical integral vs dp_accounting's closed form."""
    lam = np.array([1, 2, 5, 12])
    ours = subsampled_gaussian_log_moment(lam, sampling_rate=q, noise_multiplier=sigma)
    rdp = np.asarray(rdp_lib._compute_rdp_poisson_subsampled_gaussian(q, sigma, lam + 1.0))
    np.testing.assert_allclose(ours, lam * rdp, rtol=1e-6, atol=1e-12)


def test_moments_without_subsampling_are_the_gaussians():
    lam = np.arange(1, 6)
    np.testing.assert_allclose(subsampled_gaussian_log_moment(lam, sampling_rate=1.0, noise_multiplier=3.0),
                               gaussian_log_moment(lam, 1 / 9.0), rtol=1e-9)


def test_pld_is_below_rdp_and_stable_under_a_finer_grid():
    kw = dict(noise_multiplier=1.1, sampling_rate=0.02, steps=400, delta=1e-5)
    e_rdp = dpgm_epsilon(accountant="rdp", **kw)
    e_pld = dpgm_epsilon(accountant="pld", **kw)
    acc = dp_pld.PLDAccountant(neighboring_relation=dp_accounting.NeighboringRelation.ADD_OR_REMOVE_ONE,
                               value_discretization_interval=1e-4)
    acc.compose(dpsgd_event(noise_multiplier=1.1, sampling_rate=0.02, steps=400))
    fine = acc.get_epsilon(1e-5)
    assert e_pld < e_rdp
    assert fine <= e_pld + 1e-9                 # the coarse grid is pessimistic: never below the fine one
    assert e_pld - fine < 0.02


def test_kmeans_is_composed_in_exactly_as_one_gaussian():
    km = plan_kmeans(epsilon=0.5, delta=1e-6, n_iter=5, neighbouring="add-remove")
    ev = dpgm_event(noise_multiplier=1.0, sampling_rate=0.05, steps=10, kmeans_plan=km)
    assert ev.events[0].noise_multiplier == pytest.approx(1 / km.mu_total)
    with_km = dpgm_epsilon(noise_multiplier=1.0, sampling_rate=0.05, steps=10, delta=1e-5, kmeans_plan=km)
    without = dpgm_epsilon(noise_multiplier=1.0, sampling_rate=0.05, steps=10, delta=1e-5)
    assert with_km > without
    # only the k-means (SGD noise huge): its own epsilon at this delta
    only_km = dpgm_epsilon(noise_multiplier=1e6, sampling_rate=0.05, steps=1, delta=1e-6, kmeans_plan=km)
    assert only_km == pytest.approx(km.epsilon(delta=1e-6), abs=2e-3)


def test_replace_one_kmeans_plan_is_refused():
    km = plan_kmeans(epsilon=0.5, delta=1e-6, n_iter=5)
    with pytest.raises(ValueError, match="add-remove"):
        dpgm_event(noise_multiplier=1.0, sampling_rate=0.05, steps=10, kmeans_plan=km)


@pytest.mark.parametrize("accountant", ["rdp", "pld"])
def test_calibration_is_certified_and_rounds_toward_more_noise(accountant):
    kw = dict(delta=1e-5, sampling_rate=0.03, steps=300, accountant=accountant)
    z = calibrate_noise_multiplier(epsilon=1.5, rtol=1e-3, **kw)
    assert dpgm_epsilon(noise_multiplier=z, **kw) <= 1.5
    assert dpgm_epsilon(noise_multiplier=z / 1.003, **kw) > 1.5      # not much more noise than needed


def test_calibration_refuses_when_kmeans_spends_everything():
    km = plan_kmeans(epsilon=1.0, delta=1e-6, n_iter=5, neighbouring="add-remove")
    with pytest.raises(ValueError, match="k-means plan alone"):
        calibrate_noise_multiplier(epsilon=0.5, delta=1e-6, sampling_rate=0.1, steps=10, kmeans_plan=km)


def test_paper_theorem4_is_the_moments_conversion_of_the_same_moments():
    """Independent: the paper's formula from dp_accounting's RDP (alpha = lambda * RDP(lambda+1)) + eq. (3)."""
    q, z, T, delta = 0.01, 1.5, 2000, 1e-5
    lam = np.arange(1, 33)
    rdp = np.asarray(rdp_lib._compute_rdp_poisson_subsampled_gaussian(q, z, lam + 1.0))
    ref = moments_epsilon(lambda x: paper_log_moment(x, n_iter=20, sigma_K=8.0, sigma_C=4.0) + T * lam * rdp,
                          delta=delta, lambdas=lam.tolist())
    ours = paper_dpgm_epsilon(noise_multiplier=z, sampling_rate=q, steps=T, delta=delta, sigma_K=8.0, sigma_C=4.0,
                              kmeans_iter=20)
    assert ours == pytest.approx(ref, rel=1e-6)


def test_paper_formula_is_looser_than_dp_accounting():
    """Same moments, Theorem 1's conversion and lambda <= 32: never below the RDP accountant's value."""
    for z, q, T in [(1.0, 0.01, 1000), (2.0, 0.05, 300), (4.0, 0.1, 50)]:
        paper = paper_dpgm_epsilon(noise_multiplier=z, sampling_rate=q, steps=T, delta=1e-5)
        assert paper >= dpgm_epsilon(noise_multiplier=z, sampling_rate=q, steps=T, delta=1e-5, accountant="rdp")


def test_paper_cluster_selection_costs_more_than_the_rate_the_paper_charges():
    orders = np.array([2.0, 4.0, 16.0])
    plain = np.asarray(rdp_lib._compute_rdp_poisson_subsampled_gaussian(0.05, 2.0, orders))
    np.testing.assert_allclose(cluster_selection_rdp(orders, selection_probability=1.0, sampling_rate=0.05,
                                                     noise_multiplier=2.0), plain, rtol=1e-9)
    # one of 5 equal clusters: p = 0.2, q_c = 0.05, so p q_c = 0.01 -- the paper charges rate 0.01
    sel = cluster_selection_rdp(orders, selection_probability=0.2, sampling_rate=0.05, noise_multiplier=2.0)
    paper = np.asarray(rdp_lib._compute_rdp_poisson_subsampled_gaussian(0.01, 2.0, orders))
    assert np.all(sel > 3.0 * paper)
    assert np.all(sel <= plain)              # never worse than charging q_c every step


def test_epsilon_vs_epochs_has_figure_2s_shape():
    c = epsilon_vs_epochs([0, 10, 20, 40], noise_multiplier=4.0, sampling_rate=0.01, delta=1e-5, sigma_K=20.0,
                          sigma_C=4.0, kmeans_iter=20, methods=("rdp", "paper"))
    assert c["steps"].tolist() == [0, 1000, 2000, 4000]
    assert np.all(np.diff(c["rdp"]) > 0) and np.all(np.diff(c["paper"]) > 0)
    assert c["rdp"][0] > 0                   # the k-means steps alone
    assert np.all(c["paper"] >= c["rdp"] - 1e-9)
    with pytest.raises(ValueError, match="not both"):
        epsilon_vs_epochs([1], noise_multiplier=1.0, sampling_rate=0.1, delta=1e-5, sigma_K=1.0,
                          kmeans_plan=plan_kmeans(epsilon=1, delta=1e-6, n_iter=2, neighbouring="add-remove"))


def test_plan_dpgm_and_its_charge():
    p = plan_dpgm(epsilon=2.0, delta=1e-5, n_private=1000, batch_size=50, epochs=3, k=4, kmeans_iter=5)
    assert p.steps == 3 * steps_per_epoch(0.05) == 60
    assert p.epsilon <= 2.0 and p.kmeans.neighbouring == "add-remove" and p.kmeans.n_iter == 5
    assert p.epsilon_pld <= p.epsilon_rdp
    np.testing.assert_allclose(p.rdp_epsilon_after([p.steps]), [p.epsilon_rdp], rtol=1e-9)
    assert p.epsilon_at(steps=10) < p.epsilon
    c = p.charge()
    assert c.mechanism == "approx-dp" and c.details["neighbouring"] == "add-remove" and c.epsilon == p.epsilon
    ledger = BudgetLedger()
    ledger.add(c)
    assert ledger.totals()["basic"][0] == pytest.approx(p.epsilon)
    one = plan_dpgm(epsilon=None, delta=1e-5, n_private=100, batch_size=10, epochs=1, k=1, noise_multiplier=1.0)
    assert one.kmeans is None and one.target_epsilon is None and isinstance(one, DPGMPlan)


@pytest.mark.parametrize("kwargs, match", [
    (dict(epsilon=0.0), "epsilon"),
    (dict(epsilon=-1.0), "epsilon"),
    (dict(batch_size=2000), "batch_size"),
    (dict(kmeans_share=1.0), "kmeans_share"),
    (dict(k=0), "k"),
    (dict(epsilon=None), "epsilon"),
    (dict(delta=0.0), "delta"),
    (dict(accountant="moments"), "accountant"),
])
def test_plan_dpgm_refuses_bad_values(kwargs, match):
    base = dict(epsilon=1.0, delta=1e-5, n_private=1000, batch_size=50, epochs=1, k=3)
    with pytest.raises(ValueError, match=match):
        plan_dpgm(**{**base, **kwargs})


def test_rate_and_order_validation():
    with pytest.raises(ValueError, match="sampling_rate"):
        dpsgd_event(noise_multiplier=1.0, sampling_rate=1.5, steps=3)
    with pytest.raises(ValueError, match="orders"):
        cluster_selection_rdp([1.0], selection_probability=0.5, sampling_rate=0.1, noise_multiplier=1.0)
    with pytest.raises(ValueError, match="lam"):
        subsampled_gaussian_log_moment([0.0], sampling_rate=0.1, noise_multiplier=1.0)
    assert math.isfinite(dpgm_epsilon(noise_multiplier=1.0, sampling_rate=0.1, steps=0, delta=1e-5))
