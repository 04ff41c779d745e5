"""Kernel & privacy page (AppTest): ε/δ/calibration change σ, shown numbers equal the library's, bad ε."""

import math

import pytest

from test_app_shared import as_float, errors, metric, new_app, ok

from dpkme.mechanisms import calibrate_gaussian
from dpkme.sensitivity import kme_sensitivity
from dpkme.kernels import GaussianKernel
from pages._shared import state as S


@pytest.fixture
def kernel_page():
    at = new_app().run()
    at.switch_page("pages/kernel.py").run()
    ok(at)
    return at


def _sigma(at):
    return as_float(metric(at, "Noise σ"))


def test_defaults_show_sensitivity_sigma_and_formulas(kernel_page):
    at = kernel_page
    ds = at.session_state[S.DATASET]
    sens = as_float(metric(at, "Sensitivity Δ"))
    assert sens == pytest.approx(math.sqrt(2) / ds.n, rel=1e-3)
    lib = calibrate_gaussian(epsilon=1.0, delta=1e-6, sensitivity=math.sqrt(2) / ds.n, method="analytic")
    assert _sigma(at) == pytest.approx(lib.sigma, rel=1e-3)
    latex = " ".join(l.value for l in at.latex)
    assert r"\Delta" in latex and r"\Phi" in latex and str(ds.n) in latex


def test_larger_epsilon_means_less_noise(kernel_page):
    at = kernel_page
    before = _sigma(at)
    at.select_slider(key=S.EPS).set_value(3.0).run()
    ok(at)
    after = _sigma(at)
    assert after < before / 2
    ds = at.session_state[S.DATASET]
    lib = calibrate_gaussian(epsilon=3.0, delta=1e-6, sensitivity=math.sqrt(2) / ds.n)
    assert after == pytest.approx(lib.sigma, rel=1e-3)


def test_classic_calibration_and_paper_sensitivity(kernel_page):
    at = kernel_page
    ds = at.session_state[S.DATASET]
    at.select_slider(key=S.EPS).set_value(0.5).run()
    at.radio(key=S.CALIBRATION).set_value("classic").run()
    at.radio(key=S.SENS_MODE).set_value("paper").run()
    ok(at)
    sens = kme_sensitivity(n=ds.n, kernel=GaussianKernel(lengthscale=100.0), mode="paper")
    assert as_float(metric(at, "Sensitivity Δ")) == pytest.approx(2 / ds.n, rel=1e-3) == sens * 1
    expected = 2 / ds.n * math.sqrt(2 * math.log(1.25 / 1e-6)) / 0.5
    assert _sigma(at) == pytest.approx(expected, rel=1e-3)
    assert any(r"\ln(1.25" in l.value for l in at.latex)


def test_delta_changes_sigma(kernel_page):
    at = kernel_page
    before = _sigma(at)
    at.select_slider(key=S.DELTA).set_value(1e-10).run()
    assert _sigma(at) > before


def test_epsilon_zero_is_an_error_not_a_crash(kernel_page):
    at = kernel_page
    at.toggle(key=S.EPS_TYPED).set_value(True).run()
    at.number_input(key=S.EPS_VALUE).set_value(0.0).run()
    assert not at.exception
    assert "ε must be a positive number" in errors(at)
    # a typed positive value is used as is
    at.number_input(key=S.EPS_VALUE).set_value(0.37).run()
    ok(at)
    ds = at.session_state[S.DATASET]
    lib = calibrate_gaussian(epsilon=0.37, delta=1e-6, sensitivity=math.sqrt(2) / ds.n)
    assert _sigma(at) == pytest.approx(lib.sigma, rel=1e-3)


def test_lengthscale_sources(kernel_page):
    at = kernel_page
    at.button(key="kern.median_public").click().run()
    ok(at)
    assert at.session_state[S.LENGTHSCALE_SOURCE] == "public-subset"
    at.button(key="kern.median_private").click().run()
    assert at.session_state[S.LENGTHSCALE_SOURCE] == "private-data"
    assert "NOT differentially private" in errors(at)
    at.number_input(key=S.LENGTHSCALE).set_value(80.0).run()
    ok(at)
    assert at.session_state[S.LENGTHSCALE_SOURCE] == "declared"


def test_other_kernel_families(kernel_page):
    at = kernel_page
    for name in ("laplacian", "matern", "imq"):
        at.selectbox(key=S.KERNEL).set_value(name).run()
        ok(at)
        assert _sigma(at) > 0
