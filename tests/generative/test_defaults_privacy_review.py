"""DP review of the Generative page's digits default (issue 26: one model per class, L = 1024 out of about
1 438 private rows, so a sampling rate near 0.7, 8 epochs = 16 steps).

* The default batch size is a public constant, never sized from the private N (under add/remove N is private).
* The plan the page charges at a public N (the gate's privately counted N-hat) uses q = L/N-hat and
  T = epochs * ceil(N-hat/L), and its noise multiplier is (epsilon, delta)-DP for that (q, T) by an accountant
  built here from dp_accounting's own events at a finer grid (Poisson-subsampled Gaussian, add/remove: valid
  for any q in (0, 1]), and the looser RDP bound is not below it.
"""

from __future__ import annotations

import math

import dp_accounting
import pytest

from ui import generative as GN

EPS, DELTA = 1.0, 1e-6


def test_the_default_batch_is_a_public_constant_not_sized_from_the_private_rows():
    base = GN.default_settings("digits", "labels")
    assert base["gen.batch"] == 1024
    for n in (1024, 1438, 5000, 10**6):          # any N at least L: the same default
        assert GN.default_settings("digits", "labels", n_private=n)["gen.batch"] == base["gen.batch"]


def _pld_epsilon(z: float, q: float, T: int, delta: float) -> float:
    acc = dp_accounting.pld.PLDAccountant(value_discretization_interval=1e-4)
    acc.compose(dp_accounting.SelfComposedDpEvent(
        dp_accounting.PoissonSampledDpEvent(q, dp_accounting.GaussianDpEvent(z)), T))
    return acc.get_epsilon(delta)


def _rdp_epsilon(z: float, q: float, T: int, delta: float) -> float:
    acc = dp_accounting.rdp.RdpAccountant()
    acc.compose(dp_accounting.SelfComposedDpEvent(
        dp_accounting.PoissonSampledDpEvent(q, dp_accounting.GaussianDpEvent(z)), T))
    return acc.get_epsilon(delta)


@pytest.mark.parametrize("n_hat", [1100, 1438, 2047])
def test_the_digits_default_plan_holds_at_its_sampling_rate_and_steps(n_hat):
    d = GN.default_settings("digits", "labels")
    L, E = d["gen.batch"], d["gen.epochs"]
    p = GN.plan(epsilon=EPS, delta=DELTA, n_private=n_hat, batch_size=min(L, n_hat), epochs=E, k=1,
                kmeans_share=0.2, kmeans_iter=5, accountant="pld", partition="labels")
    assert p.kmeans is None                                       # one model per class: no clustering share
    assert p.sampling_rate == pytest.approx(L / n_hat, rel=1e-15)
    assert p.steps == E * math.ceil(n_hat / L)
    if n_hat == 1438:
        assert 0.7 < p.sampling_rate < 0.72 and p.steps == 16    # the page's words: about 70 %, 16 steps
    e_pld = _pld_epsilon(p.noise_multiplier, p.sampling_rate, p.steps, DELTA)
    e_rdp = _rdp_epsilon(p.noise_multiplier, p.sampling_rate, p.steps, DELTA)
    assert e_pld <= EPS * (1 + 1e-3)
    assert e_rdp >= e_pld * (1 - 1e-3)                            # RDP is an upper bound of the same loss
    charge = p.charge("digits default")
    assert charge.epsilon <= EPS and charge.delta <= DELTA and str(charge.relation.value) == "add-remove"
