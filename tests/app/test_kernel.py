"""Kernel & privacy page (AppTest): ε/δ/calibration change σ, shown numbers equal the library's, bad ε."""

import math

import pytest

from dpkme.kernels import GaussianKernel
from dpkme.privacy.calibration import calibrate_gaussian
from dpkme.privacy.sensitivity import kme_sensitivity
from tests.support.app import as_float, errors, metric, new_app, ok, public_app
from ui import state as S


@pytest.fixture
def kernel_page():
    at = public_app().run()
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


def test_private_median_heuristic_is_charged_and_keeps_releases_private(kernel_page):
    """The exponential mechanism picks ℓ from the declared grid; its pure-ε charge comes before the release's.
    Red team (issue 13): the choice used to reuse the Release page's current seed; it is now a real release."""
    import numpy as np

    at = kernel_page
    at.session_state[S.NOISE_SOURCE] = "seeded"          # even in replay mode, the private choice uses OS entropy
    at.run()
    ds = at.session_state[S.DATASET]
    assert at.number_input(key="kern.pl_lo").value == pytest.approx(ds.suggested_lengthscale / 10)
    at.select_slider(key="kern.pl_eps").set_value(0.3).run()
    at.button(key="kern.pl_go").click().run()
    ok(at)
    choice = at.session_state["kern.private_choice"]
    grid = np.geomspace(ds.suggested_lengthscale / 10, ds.suggested_lengthscale * 10, 30)
    assert at.session_state[S.LENGTHSCALE_SOURCE] == "private-dp"
    assert at.session_state[S.LENGTHSCALE] == choice["lengthscale"] and np.isclose(grid, choice["lengthscale"]).any()
    assert choice["seed"] is None and choice["epsilon"] == 0.3        # a real choice: OS entropy, never a seed
    led = at.session_state[S.LEDGERS][ds.data_key]
    assert len(led) == 1 and led.charges[0].epsilon == 0.3 and led.charges[0].delta == 0
    assert led.charges[0].mechanism == "exponential"
    assert any("Chosen privately" in s.value for s in at.success)
    # the probabilities concentrate near the median pairwise distance of the private rows (owner's view)
    from scipy.spatial.distance import pdist

    med = float(np.median(pdist(ds.X[:2000])))
    p = np.asarray(choice["owner_probabilities"])
    assert abs(np.log(grid[int(np.argmax(p))] / med)) < np.log(grid[1] / grid[0]) * 1.01
    # a release with this ℓ is private and composes with the choice in the ledger
    at.session_state[S.NOISE_SOURCE] = "os-entropy"
    at.switch_page("pages/release.py").run()
    assert not errors(at)
    at.button(key="rel.go").click().run()
    ok(at)
    rec = at.session_state[S.RELEASES][-1]
    assert rec.private and rec.release.seed is None                  # a real release, fresh noise
    assert len(at.session_state[S.LEDGERS][ds.data_key]) == 2


def test_private_median_heuristic_refuses_bad_bounds(kernel_page):
    at = kernel_page
    at.number_input(key="kern.pl_hi").set_value(1e-6).run()
    assert not at.exception
    assert "must be larger than the smallest" in errors(at)
    assert at.button(key="kern.pl_go").disabled


# a 0/1 table: nine rows in ten are (0, 0), so most pairs of rows coincide and the median distance is 0
TIED_CSV = b"flag,count\n" + b"".join(b"1,3\n" if i % 10 == 0 else b"0,0\n" for i in range(200))


@pytest.mark.parametrize("button", ["kern.median_public", "kern.median_private"])
def test_median_heuristic_of_mostly_identical_rows_is_an_error_not_a_traceback(button):
    """Regression (fuzzing): the median buttons raised ValueError('median pairwise distance 0') in their callback."""
    at = new_app().run()
    at.switch_page("pages/data.py").run()
    at.radio(key="data.source").set_value("upload").run()
    at.file_uploader(key="data.upload").set_value(("flags.csv", TIED_CSV, "text/csv")).run()
    at.slider(key="data.public_pct").set_value(10.0).run()
    at.checkbox(key="data.public_declared").check().run()
    at.button(key="data.use").click().run()
    ok(at)
    assert at.session_state[S.DATASET].source == "upload"
    at.switch_page("pages/kernel.py").run()
    before = at.session_state[S.LENGTHSCALE]
    at.button(key=button).click().run()
    assert not at.exception, [e.value for e in at.exception]
    assert "median pairwise distance 0" in errors(at) and "unchanged" in errors(at)
    assert at.session_state[S.LENGTHSCALE] == before
    at.button(key="kern.paper").click().run()          # the page still works, and the error is gone
    ok(at)


# ---------------------------------------------------------------------- issue 16 walk: one ε, the mechanism's Δ and σ
def test_the_exact_epsilon_box_starts_at_the_slider_and_one_epsilon_is_used(kernel_page):
    """Finding 5: after moving the slider to 2, "Type an exact ε instead" showed 1 (its own old value) and that ε
    was used. The box starts at the slider's value; switching back puts the slider on the step nearest (log scale)
    to the typed ε."""
    at = kernel_page
    ds = at.session_state[S.DATASET]
    at.select_slider(key=S.EPS).set_value(2.0).run()
    at.toggle(key=S.EPS_TYPED).set_value(True).run()
    ok(at)
    assert at.number_input(key=S.EPS_VALUE).value == 2.0
    lib = calibrate_gaussian(epsilon=2.0, delta=1e-6, sensitivity=math.sqrt(2) / ds.n)
    assert _sigma(at) == pytest.approx(lib.sigma, rel=1e-3)
    at.number_input(key=S.EPS_VALUE).set_value(0.37).run()
    at.toggle(key=S.EPS_TYPED).set_value(False).run()
    ok(at)
    assert at.select_slider(key=S.EPS).value == 0.3          # |ln(0.37/0.3)| < |ln(0.5/0.37)|
    lib = calibrate_gaussian(epsilon=0.3, delta=1e-6, sensitivity=math.sqrt(2) / ds.n)
    assert _sigma(at) == pytest.approx(lib.sigma, rel=1e-3)


def test_the_release_page_uses_the_slider_value_after_switching_to_an_exact_epsilon():
    """Finding 5 on the Release page (the same control): the next release uses the ε that was on the slider."""
    at = public_app().run()
    at.switch_page("pages/release.py").run()
    at.select_slider(key=S.EPS).set_value(2.0).run()
    at.toggle(key=S.EPS_TYPED).set_value(True).run()
    ok(at)
    assert at.number_input(key=S.EPS_VALUE).value == 2.0
    at.button(key="rel.go").click().run()
    ok(at)
    assert at.session_state[S.RELEASES][-1].release.epsilon == 2.0


def _banner(at) -> str:
    return next(i.value for i in at.info if i.value.startswith("Kernel **"))


def test_the_release_banner_shows_the_sensitivity_and_sigma_of_the_mechanism_that_will_run():
    """Finding 6: the banner said Δ = √2/N while Algorithm 2 (2/N) was selected. It shows the library's charge of
    the selected mechanism (dpkme.release.charges), and σ equals the σ the release then records."""
    from dpkme.release.charges import algorithm1_charge, algorithm2_charge

    at = public_app().run()
    at.switch_page("pages/release.py").run()
    ok(at)
    ds = at.session_state[S.DATASET]
    assert at.selectbox(key=S.MECHANISM).value == "alg1-public"
    a1 = algorithm1_charge(n_private=ds.n, kernel=GaussianKernel(lengthscale=float(at.session_state[S.LENGTHSCALE])),
                           epsilon=1.0, delta=1e-6)
    banner = _banner(at)
    assert "Algorithm 1" in banner and "Δ = √2/N" in banner and f"σ = {a1.details['sigma']:.3g}" in banner
    assert "2/N" not in banner.replace("√2/N", "")
    at.selectbox(key=S.MECHANISM).set_value("alg2").run()
    ok(at)
    a2 = algorithm2_charge(n_private=ds.n, epsilon=1.0, delta=1e-6)
    banner = _banner(at)
    assert "Algorithm 2" in banner and "Δ = 2/N" in banner and "√2" not in banner
    assert f"σ = {a2.details['sigma']:.3g}" in banner
    at.button(key="rel.go").click().run()
    ok(at)
    assert at.session_state[S.RELEASES][-1].release.sigma == pytest.approx(a2.details["sigma"], rel=1e-12)
    # the baseline spends nothing and adds no noise: no Δ or σ to show
    at.selectbox(key=S.MECHANISM).set_value("baseline").run()
    ok(at)
    assert "σ =" not in _banner(at) and "no noise" in _banner(at)


def test_the_kernel_page_shows_both_algorithms_and_says_which_one_the_release_page_runs(kernel_page):
    """Finding 6 on the Kernel page: its Δ and σ were Algorithm 1's only, without saying so."""
    from dpkme.release.charges import algorithm2_charge

    at = kernel_page
    ds = at.session_state[S.DATASET]
    assert as_float(metric(at, "Sensitivity Δ")) == pytest.approx(math.sqrt(2) / ds.n, rel=1e-3)   # Algorithm 1
    a2 = algorithm2_charge(n_private=ds.n, epsilon=1.0, delta=1e-6)
    assert as_float(metric(at, "Sensitivity Δ (Algorithm 2)")) == pytest.approx(2 / ds.n, rel=1e-3)
    assert as_float(metric(at, "Noise σ (Algorithm 2)")) == pytest.approx(a2.details["sigma"], rel=1e-3)
    text = " ".join(m.value for m in at.markdown) + " ".join(c.value for c in at.caption)
    assert "The Release page will run **Algorithm 1" in text
    at.session_state[S.MECHANISM] = "alg2"
    at.run()
    ok(at)
    text = " ".join(m.value for m in at.markdown) + " ".join(c.value for c in at.caption)
    assert "The Release page will run **Algorithm 2" in text


@pytest.mark.browser
@pytest.mark.slow
def test_one_epsilon_in_a_browser_across_the_toggle_and_the_pages(app_page, nav, expect_rerun, assert_no_exception):
    """Finding 5 in a real browser: the box starts at the slider's ε, keeps a typed ε across pages (no toggle
    callback on a page change), and switching back puts the slider on the nearest step."""
    import re

    from playwright.sync_api import expect

    page = app_page
    page.set_viewport_size({"width": 1400, "height": 900})
    nav(page, "Release")
    main = page.get_by_test_id("stMain")
    slider = main.get_by_role("slider").first
    for _ in range(2):                                   # 1 -> 1.5 -> 2
        with expect_rerun(page):
            slider.press("ArrowRight")
    expect(main.get_by_text(re.compile(r"ε = 2,")).first).to_be_visible()
    with expect_rerun(page):
        main.get_by_text("Type an exact ε instead").click()
    box = main.get_by_role("spinbutton", name="Exact ε")
    expect(box).to_have_value("2")
    with expect_rerun(page):
        box.fill("0.37")
        box.press("Enter")
    nav(page, "Kernel & privacy")
    expect(main.get_by_role("spinbutton", name="Exact ε")).to_have_value("0.37")
    nav(page, "Release")
    expect(main.get_by_text(re.compile(r"ε = 0\.37,")).first).to_be_visible()
    with expect_rerun(page):
        main.get_by_text("Type an exact ε instead").click()
    expect(main.get_by_text(re.compile(r"ε = 0\.3,")).first).to_be_visible()
    assert_no_exception(page)
