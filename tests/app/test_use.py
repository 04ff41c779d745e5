"""Third-party use page (AppTest): eq. (4) estimates next to the private truth, boxes, MMD with held-out data."""

import numpy as np
import pytest

from tests.support.app import as_float, errors, metric, new_app, ok, plotly_figures, public_app
from ui import state as S


@pytest.fixture(scope="module")
def used():
    at = public_app().run()          # Algorithm 1 on declared-public points (the default data publishes none)
    at.switch_page("pages/release.py").run()
    at.radio(key=S.WEIGHTS).set_value("simplex").run()
    at.button(key="rel.go").click().run()
    ok(at)
    at.switch_page("pages/use.py").run()
    ok(at)
    return at


def test_without_a_release_the_page_explains_what_to_do():
    at = new_app().run()
    at.switch_page("pages/use.py").run()
    ok(at)
    assert any("release of this dataset yet" in i.value for i in at.info)


def test_means_from_the_release_are_close_to_the_private_means(used):
    tab = used.dataframe[0].value
    est, true = tab["estimate from release"].to_numpy(), tab["true private mean"].to_numpy()
    ds = used.session_state[S.DATASET]
    assert np.allclose(true, ds.X.mean(axis=0))
    assert np.all(np.abs(est - true) < 15)          # data spread ~ 200: within a few percent
    assert np.allclose(tab["error"], est - true)


def test_box_probability_estimate_and_truth(used):
    at = used
    p_true = as_float(metric(at, "True share"))
    p_est = as_float(metric(at, "Estimate from the release"))
    assert 0 < p_true < 1 and abs(p_est - p_true) < 0.2
    # a box containing everything: both are 1 (self-normalised probability weights)
    for key, v in (("use.box.x0", -1e4), ("use.box.x1", 1e4), ("use.box.y0", -1e4), ("use.box.y1", 1e4)):
        at.number_input(key=key).set_value(v).run()
    ok(at)
    assert as_float(metric(at, "True share")) == 1.0
    assert as_float(metric(at, "Estimate from the release")) == pytest.approx(1.0, abs=1e-3)


def test_an_inverted_box_is_an_error(used):
    at = used
    at.number_input(key="use.box.x0").set_value(50.0).run()
    at.number_input(key="use.box.x1").set_value(10.0).run()
    assert not at.exception and "larger than its 'from'" in errors(at)
    at.number_input(key="use.box.x1").set_value(100.0).run()
    ok(at)


def test_mmd_detects_a_shifted_population(used):
    at = used
    assert at.radio(key="use.mmd_src").value == "heldout"
    same = as_float(metric(at, "MMD(release, held-out)"))
    noise = as_float(metric(at, "Sampling noise"))
    at.radio(key="use.mmd_src").set_value("shifted").run()
    ok(at)
    shifted = as_float(metric(at, "MMD(release, held-out)"))
    assert same < 2 * noise < shifted
    assert any("looks different" in c.value for c in at.caption)


def test_probability_weights_turn_signed_weights_into_a_probability():
    at = public_app().run()
    at.switch_page("pages/release.py").run()
    at.radio(key=S.WEIGHTS).set_value("free").run()     # the paper's free (signed) weights (default: simplex)
    at.button(key="rel.go").click().run()
    at.switch_page("pages/use.py").run()
    ok(at)
    assert at.radio(key="use.weights").value == "normalised"
    at.radio(key="use.weights").set_value("projected").run()
    assert not at.exception
    p_est = as_float(metric(at, "Estimate from the release"))
    p_true = as_float(metric(at, "True share"))
    assert 0.0 <= p_est <= 1.0 and abs(p_est - p_true) < 0.15
    est = at.dataframe[0].value["estimate from release"].to_numpy()
    ds = at.session_state[S.DATASET]
    assert np.all(np.abs(est - ds.X.mean(axis=0)) < 15)


def test_coming_back_to_the_page_keeps_the_box_and_never_raises():
    """Regression (fuzzing): Use → any other page → Use raised KeyError 'use.box.x0' (Streamlit drops the state of
    widgets that were not drawn, while the box's initialisation marker stayed)."""
    at = new_app().run()
    at.switch_page("pages/release.py").run()
    at.button(key="rel.go").click().run()
    at.switch_page("pages/use.py").run()
    ok(at)
    at.number_input(key="use.box.x1").set_value(123.5).run()
    for page in ("pages/ledger.py", "pages/clustering.py", "pages/use.py"):
        at.switch_page(page).run()
        assert not at.exception, (page, [e.value for e in at.exception])
    ok(at)
    assert at.number_input(key="use.box.x1").value == 123.5       # the user's box survived the round trip
    metric(at, "Estimate from the release")


def _wine_release(scaling: str = "public"):
    """The wine table (13 numeric columns), standardised from a declared-public 10 % subset, one Alg. 2 release."""
    from ui.datasets import build_dataset

    at = new_app()
    spec = {"source": "sample", "sample": "wine", "columns": None, "public_fraction": 0.1, "public_declared": True,
            "heldout_fraction": 0.1, "split_seed": 0, "scaling": scaling, "box": None, "clip": False}
    ds = build_dataset(spec)
    for key, value in {S.DATASET: ds, S.LENGTHSCALE: float(ds.suggested_lengthscale),
                       S.LENGTHSCALE_SOURCE: "suggested", S.Q_SCALE: float(ds.q_scale)}.items():
        at.session_state[key] = value
    at.run()
    at.switch_page("pages/release.py").run()
    at.selectbox(key=S.MECHANISM).set_value("alg2").run()
    at.button(key="rel.go").click().run()
    ok(at)
    return at


def test_every_column_is_in_the_means_table_and_plots_name_the_units():
    """Issue 16, finding 5: the means table stopped at 8 columns; standardised plots bore raw column names."""
    at = _wine_release()
    ds = at.session_state[S.DATASET]
    assert ds.dim == 13
    titles = {f["layout"]["xaxis"]["title"]["text"] for f in plotly_figures(at) if "xaxis" in f["layout"]
              and "title" in f["layout"]["xaxis"]}
    titles.discard("weight w_m")                      # the weight histogram
    assert titles and all("scaled" in t for t in titles), titles
    at.switch_page("pages/use.py").run()
    ok(at)
    tab = at.dataframe[0].value
    assert list(tab["column"]) == [str(c) for c in ds.columns]
    # the Use page plots original units, on the private rows' range (not the synthetic points')
    fig = plotly_figures(at)[0]
    lo, hi = fig["layout"]["xaxis"]["range"]
    X = ds.to_original_units(ds.X)[:, 0]
    assert lo <= X.min() and hi >= X.max() and (hi - lo) < 1.5 * (X.max() - X.min())
