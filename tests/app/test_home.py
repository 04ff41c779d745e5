"""Home page (AppTest): defaults run cleanly; the one-click paper example produces a release with metrics."""

from tests.support.app import as_float, metric, new_app, ok, plotly_figures
from ui import state as S


def test_home_runs_with_the_default_dataset_and_shows_the_template_figure(app_test):
    at = app_test.run()
    ok(at)
    assert "kernel mean embeddings" in at.title[0].value
    ds = at.session_state[S.DATASET]
    assert ds.name.startswith("Paper: mixture") and ds.dim == 2
    figs = plotly_figures(at)
    assert figs, "the three-step template figure is missing"
    titles = [a["text"] for a in figs[0]["layout"]["annotations"]]
    assert any("estimate" in t for t in titles) and any("privatise" in t for t in titles) \
        and any("represent" in t for t in titles)
    # the sidebar shows the current data and the (empty) budget
    side = " ".join(c.value for c in at.sidebar.caption)
    assert "N = " in side and "nothing charged: no private release yet" in side


def test_paper_example_button_runs_algorithm1_and_records_it():
    at = new_app().run()
    at.button(key="home.example").click().run()
    ok(at)
    dist = as_float(metric(at, "RKHS distance"))
    base = as_float(metric(at, "Uniform baseline"))
    assert 0 < dist < base, (dist, base)   # Algorithm 1 beats the uniform baseline at ε = 1 (as in Figure 1)
    recs = at.session_state[S.RELEASES]
    assert len(recs) == 1 and recs[0].release.mechanism == "algorithm1"
    # a real release (issue 13: it used seed 0, the same noise as the Release page's first release)
    assert recs[0].release.seed is None and recs[0].release.noise_source == "os-entropy"
    assert recs[0].private and recs[0].release.n_points == 200
    assert recs[0].release.epsilon == 1.0 and recs[0].release.delta == 1e-6
    ds = at.session_state[S.DATASET]
    assert ds.n + ds.n_public + ds.n_heldout == 10_000
    assert len(at.session_state[S.LEDGERS][ds.data_key]) == 1
    assert any("closer" in s.value for s in at.success)
    # the page's plot shows the released points
    assert len(plotly_figures(at)) == 2
