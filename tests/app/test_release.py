"""Release page (AppTest): every registered mechanism releases, metrics and plots appear, the ledger is
charged (or not), the budget is enforced, noise sources, replay and repeat draws."""

import numpy as np
import pytest

from tests.support.app import as_float, decode, errors, metric, ok, plotly_figures, public_app
from ui import state as S
from ui.export import RECIPE_MECHANISMS
from ui.mechanisms import REGISTRY


@pytest.fixture
def release_page():
    """The Release page on the default data with a declared-public 5 % subset."""
    at = public_app().run()
    at.switch_page("pages/release.py").run()
    ok(at)
    return at


def _replay_mode(at, seed=0):
    at.radio(key=S.NOISE_SOURCE).set_value("seeded").run()
    at.number_input(key=S.SEED).set_value(seed).run()
    return at


def _release(at):
    at.button(key="rel.go").click().run()
    return at


def _ledger(at):
    ds = at.session_state[S.DATASET]
    return at.session_state[S.LEDGERS][ds.data_key]


def test_default_release_is_algorithm1_with_the_publishable_subset(release_page):
    at = release_page
    assert at.selectbox(key=S.MECHANISM).value == "alg1-public"
    assert any("No release" in i.value for i in at.info)
    _release(at)
    ok(at)
    rec = at.session_state[S.RELEASES][-1]
    r = rec.release
    # a real release by default: OS-entropy noise, no seed, labelled private
    assert r.mechanism == "algorithm1" and r.n_points == 200 and r.seed is None and r.noise_source == "os-entropy"
    assert rec.private and r.metadata()["differentially_private"] is True
    # the metric shows 3 significant digits: within half a unit of the third digit (≤ 5e-3 relative)
    assert as_float(metric(at, "RKHS distance of this release")) == pytest.approx(rec.metrics["distance"], rel=5e-3)
    assert rec.metrics["projection"] <= rec.metrics["distance"]          # noise only adds error
    assert metric(at, "Seed") == "not recorded"
    # ledger: one Gaussian charge at (1, 1e-6)
    led = _ledger(at)
    assert len(led) == 1 and led.charges[0].epsilon == 1.0 and led.charges[0].delta == 1e-6
    # the scatter shows the 200 synthetic points with their weights as colours
    fig = plotly_figures(at)[0]
    synth = [t for t in fig["data"] if t["name"].startswith("synthetic")]
    weights = np.concatenate([decode(t["marker"]["color"]) for t in synth])
    assert sorted(weights) == pytest.approx(sorted(r.weights))
    # probability weights by default (issue 16); the paper's signed weights are drawn as diamonds when negative
    assert r.params["weights"] == "simplex" and (r.weights >= 0).all() and r.weights.sum() == pytest.approx(1.0)
    # heat-maps: private KME, released, difference on a 60 x 60 grid
    heat = plotly_figures(at)[1]
    assert [t["type"] for t in heat["data"][:3]] == ["heatmap"] * 3
    assert len(at.get("download_button")) == 5          # + N synthetic rows and the recipe (script, notebook)


def test_changing_epsilon_changes_the_release(release_page):
    at = release_page
    _release(at)
    first = at.session_state[S.RELEASES][-1]
    at.session_state[S.EPS] = 0.1
    at.session_state[S.SEED] = 0
    at.run()
    _release(at)
    ok(at)
    second = at.session_state[S.RELEASES][-1]
    assert second.release.epsilon == 0.1
    assert second.release.sigma == pytest.approx(10 * first.release.sigma, rel=0.2)
    assert second.metrics["distance"] > first.metrics["distance"]


@pytest.mark.parametrize("key", sorted(k for k in REGISTRY if not REGISTRY[k].background))
def test_every_registered_mechanism_releases(release_page, key):
    """Every mechanism that runs in the page; the background (table) release: tests/app/test_adaptive_release.py."""
    at = release_page
    at.selectbox(key=S.MECHANISM).set_value(key).run()
    ok(at)
    if key == "alg2":
        at.number_input(key=S.N_POINTS).set_value(50).run()
    _release(at)
    ok(at)
    rec = at.session_state[S.RELEASES][-1]
    assert rec.mechanism_key == key and rec.kind == REGISTRY[key].output
    if rec.kind == "points":
        assert np.isfinite(rec.metrics["distance"])
        # points + weights, parameters, N synthetic rows; the recipe (script, notebook) where one can be made
        keys = {b.key for b in at.get("download_button")}
        recipe = {"rel.dl_recipe_py", "rel.dl_recipe_nb"} if key in RECIPE_MECHANISMS else set()
        assert keys == {"rel.dl_csv", "rel.dl_json", "rel.dl_rows"} | recipe
    else:                                   # a function on a grid: L2 errors, no RKHS distance
        assert 0 < rec.metrics["l2"] < rec.metrics["truth_l2"]
        assert metric(at, "RKHS distance") == "∞"
        assert len(at.get("download_button")) == 2
    led = _ledger(at)
    if REGISTRY[key].spends_budget:
        assert len(led) == 1
        assert rec.release.epsilon == pytest.approx(1.0, rel=1e-9)
    else:
        assert len(led) == 0 and rec.release.epsilon == 0


def test_budget_is_enforced(release_page):
    at = release_page
    at.session_state[S.BUDGET_EPS] = 1.2
    at.run()
    _release(at)
    ok(at)
    _release(at)                       # two ε = 1 releases: basic 2, RDP 1.39, PLD 1.28 at δ = 1e-5 -- all > 1.2
    assert "beyond your budget" in errors(at)
    assert len(at.session_state[S.RELEASES]) == 1
    at.checkbox(key="gate.allow_over.release.0").check().run()   # the Release page's own permission, for one run
    _release(at)
    assert len(at.session_state[S.RELEASES]) == 2
    assert any("Budget exceeded" in w.value for w in at.warning)
    _release(at)                       # the permission was used up by that run: refused again
    assert "beyond your budget" in errors(at)
    assert len(at.session_state[S.RELEASES]) == 2


def test_os_entropy_releases_record_no_seed_and_cannot_be_replayed(release_page):
    at = release_page
    at.radio(key=S.NOISE_SOURCE).set_value("os-entropy").run()
    _release(at)
    ok(at)
    r = at.session_state[S.RELEASES][-1].release
    assert r.noise_source == "os-entropy" and r.seed is None
    assert metric(at, "Seed") == "not recorded"


def test_replay_of_a_seeded_release_is_identical(release_page):
    at = _replay_mode(release_page)
    _release(at)
    rec = at.session_state[S.RELEASES][-1]
    assert rec.release.seed == 0 and not rec.private                 # replay mode: a demo, not private
    assert "replayable demo" in errors(at)
    assert at.session_state[S.SEED] == 1                              # the next release gets fresh noise
    at.button(key="rel.replay").click().run()
    assert not at.exception
    assert any("Identical" in s.value for s in at.success)
    assert len(_ledger(at)) == 0       # a demo is never charged as a private release
    assert at.session_state[S.NONPRIVATE][rec.data_key] == 1


def test_seeds_are_never_reused_in_a_session(release_page):
    """Red team (issue 13): two releases sharing a seed reveal the private coordinates
    (α = (σ₂β₁ − σ₁β₂)/(σ₂ − σ₁)). Asking for seed 0 twice gives seeds 0 and then 1."""
    at = _replay_mode(release_page, seed=0)
    _release(at)
    _replay_mode(at, seed=0)
    assert at.number_input(key=S.SEED).value == 1                    # seed 0 is taken: the widget moves on
    _release(at)
    seeds = [r.release.seed for r in at.session_state[S.RELEASES]]
    assert seeds == [0, 1]


def test_three_releases_at_three_epsilons_share_no_noise(release_page):
    """Red team (issue 13): with shared noise, the weights of releases at different ε are collinear
    (w_ε = w_exact + (σ_ε/σ₁)·(noise term)); real releases must not be."""
    at = release_page
    at.selectbox(key=S.MECHANISM).set_value("alg1-public").run()
    at.number_input(key=S.N_POINTS).set_value(40).run()
    weights = []
    for eps in (0.5, 1.0, 2.0):
        at.session_state[S.EPS] = eps
        at.run()
        _release(at)
        ok(at)
        r = at.session_state[S.RELEASES][-1].release
        assert r.seed is None and r.metadata()["differentially_private"] is True
        weights.append(r.weights)
    W = np.stack(weights)
    # collinear would mean the differences w_2 - w_1 and w_3 - w_1 are parallel
    d1, d2 = W[1] - W[0], W[2] - W[0]
    cos = abs(d1 @ d2) / (np.linalg.norm(d1) * np.linalg.norm(d2))
    # shared noise makes them collinear to rounding (cos = 1 - O(1e-12)); independent noise never comes close
    # (|cos| is about 0.87 on average here: both differences contain the ε = 0.5 noise, the largest)
    assert cos < 1 - 1e-6


def test_repeat_draws_overlay_and_one_charge_with_count(release_page):
    at = release_page
    at.selectbox(key=S.MECHANISM).set_value("alg1-public").run()
    _release(at)                                           # the results section (and the button) appear
    at.number_input(key=S.N_REPEATS).set_value(3).run()
    at.button(key="rel.repeat").click().run()
    ok(at)
    rep = at.session_state[S.REPEAT_DRAWS]
    assert len(rep["releases"]) == 3 and rep["seeds"] == [None] * 3     # real releases: no seeds recorded
    w = [x.weights for x in rep["releases"]]
    assert not np.allclose(w[0], w[1]) and not np.allclose(w[1], w[2])   # fresh noise for every draw
    led = _ledger(at)
    assert len(led) == 2 and led.charges[1].count == 3
    lines = {t["name"] for f in plotly_figures(at) for t in f["data"] if t.get("name", "").startswith("draw")}
    assert len(lines) == 3


def test_private_lengthscale_makes_the_release_not_private(release_page):
    at = release_page
    at.session_state[S.LENGTHSCALE_SOURCE] = "private-data"
    at.run()
    assert "NOT differentially private" in errors(at)
    _release(at)
    rec = at.session_state[S.RELEASES][-1]
    assert not rec.private and rec.charge is None
    assert rec.release.params["private"] is False                     # the release's own metadata says so
    assert "median heuristic" in rec.release.params["privacy_leaks"][0]
    assert len(_ledger(at)) == 0                           # never added to the ledger as private
    assert at.session_state[S.NONPRIVATE][rec.data_key] == 1


def test_q_points_mechanism_uses_the_declared_spread(release_page):
    at = release_page
    at.selectbox(key=S.MECHANISM).set_value("alg1-q").run()
    at.number_input(key=S.Q_SCALE).set_value(250.0).run()
    at.number_input(key=S.N_POINTS).set_value(100).run()
    _release(at)
    ok(at)
    r = at.session_state[S.RELEASES][-1].release
    assert r.params["q_scale"] == 250.0 and r.n_points == 100 and r.params["points_source"] == "q"


@pytest.mark.skipif("gp" not in REGISTRY, reason="dpkme.release.gp not in this checkout")
def test_gp_function_release_is_compared_on_its_grid_and_exports_no_private_values(release_page):
    import io
    import json

    import pandas as pd

    from ui.export import function_csv, function_json

    at = release_page
    _release(at)                                            # Algorithm 1 first, for the comparison
    at.selectbox(key=S.MECHANISM).set_value("gp").run()
    _release(at)
    ok(at)
    rec = at.session_state[S.RELEASES][-1]
    assert rec.kind == "function" and rec.release.values.shape == (40, 40)
    assert "points_l2" in rec.metrics
    metric(at, "Latest points release")
    ds = at.session_state[S.DATASET]
    df = pd.read_csv(io.BytesIO(function_csv(rec, ds)))
    assert list(df.columns) == ["x1", "x2", "value"] and len(df) == 1600
    assert np.allclose(df["value"], rec.release.values.reshape(-1))
    meta = json.loads(function_json(rec, ds))
    assert meta["mechanism"] == "gp-release" and "true_values" not in json.dumps(meta)
    led = _ledger(at)
    assert len(led) == 2


@pytest.mark.skipif("exponential" not in REGISTRY, reason="dpkme.release.exponential not in this checkout")
def test_exponential_mechanism_teaches_the_count_explains_exact_sampling_and_records_its_own_charge(release_page):
    from dpkme.release.exponential import DEFAULT_MAX_DATABASES, count_multisets

    at = release_page
    at.selectbox(key=S.MECHANISM).set_value("exponential").run()
    ok(at)
    # before any run: the count for the current setting, and its combinatorial growth on a log axis
    assert any(f"{count_multisets(36, 4):,} candidate databases" in c.value for c in at.caption)
    counts = plotly_figures(at)[0]
    assert counts["layout"]["yaxis"]["type"] == "log"
    ys = [decode(t["y"]) for t in counts["data"] if t["name"].startswith("|G| = ")]
    assert all(np.all(np.diff(y) > 0) for y in ys) and max(y.max() for y in ys) > 1e3 * DEFAULT_MAX_DATABASES
    assert any("approximate sampler" in e.label for e in at.expander)
    at.number_input(key="rel.exp_m").set_value(2).run()
    assert any(f"{count_multisets(36, 2):,} candidate databases" in c.value for c in at.caption)
    _release(at)
    ok(at)
    rec = at.session_state[S.RELEASES][-1]
    assert rec.release.delta == 0 and rec.release.params["m"] == 2
    # owner's view: the drawn database's distance, never exported
    assert as_float(metric(at, "Distance of the drawn database")) == pytest.approx(rec.metrics["distance"], rel=2e-3)
    assert as_float(metric(at, "Best of all databases")) <= as_float(metric(at, "Average database")) + 1e-12
    assert "exp_distance" not in rec.release.params
    c = _ledger(at).charges[0]
    assert c.mechanism == "exponential" and c.delta == 0 and c.details["n_candidates"] == 36
    assert c.details["neighbouring"] == "replace-one" and c.details["parts"] == (S.PART_PRIVATE,)


@pytest.mark.skipif("gp" not in REGISTRY, reason="dpkme.release.gp not in this checkout")
def test_gp_release_explains_it_is_not_in_the_rkhs_and_labels_the_owners_view(release_page):
    at = release_page
    at.selectbox(key=S.MECHANISM).set_value("gp").run()
    _release(at)
    ok(at)
    assert any("is not in the RKHS" in m.value for m in at.markdown)
    assert any("Owner's view" in w.value for w in at.warning)
    metric(at, "L² error on the grid (owner's view)")
    c = _ledger(at).charges[0]
    assert c.details["mechanism"] == "gp-release" and c.details["n_points"] == 1600


@pytest.mark.skipif("clusterwise" not in REGISTRY, reason="dpkme.clustering not in this checkout")
def test_clusterwise_release_explains_noisy_sums_and_shows_its_clusters(release_page):
    at = release_page
    at.selectbox(key=S.MECHANISM).set_value("clusterwise").run()
    text = REGISTRY["clusterwise"].explain
    assert "noisy sum" in text and "replace-one" in text and "**two** clusters change" in text
    at.number_input(key=S.N_POINTS).set_value(50).run()
    _release(at)
    ok(at)
    comps = next(d.value for d in at.dataframe if "noisy size (released)" in d.value.columns)
    assert 1 <= len(comps) <= 5 and comps["mixture weight"].sum() == pytest.approx(1.0)
    assert _ledger(at).charges[0].details["parts"] == (S.PART_PRIVATE,)


def test_size_guard_asks_before_a_long_release(release_page):
    """A release whose evaluation needs ~10¹⁰ kernel values (N = 200 000) is not started without consent."""
    import dataclasses

    at = release_page
    ds = at.session_state[S.DATASET]
    big = dataclasses.replace(ds, X=np.tile(ds.X, (200_000 // ds.n + 1, 1))[:200_000], key=ds.key + "-big")
    at.session_state[S.DATASET] = big
    at.run()
    ok(at)
    assert any("Large computation" in w.value for w in at.warning)
    assert at.button(key="rel.go").disabled
    boxes = [c for c in at.checkbox if c.key.startswith("rel.size.confirm.")]
    assert len(boxes) == 1 and "Run it anyway" in boxes[0].label
    boxes[0].check().run()
    ok(at)
    assert not at.button(key="rel.go").disabled
    # a different size asks again (the confirmation is tied to the predicted sizes)
    at.number_input(key=S.N_POINTS).set_value(100).run()
    assert at.button(key="rel.go").disabled
    assert not at.session_state[S.RELEASES]          # nothing ran


def test_small_releases_show_their_predicted_cost_without_asking(release_page):
    at = release_page
    assert any(c.value.startswith("Predicted: about") for c in at.caption)
    assert not any("Large computation" in w.value for w in at.warning)
    assert not at.button(key="rel.go").disabled


@pytest.mark.parametrize("key", ["alg1-q", "alg1-public"])
def test_opendp_sampler_is_offered_for_algorithm1_and_gives_a_real_release(release_page, key):
    """Issue 13: OpenDP's vetted samplers as an option for single releases; numpy's caveat is stated otherwise."""
    at = release_page
    at.selectbox(key=S.MECHANISM).set_value(key).run()
    at.number_input(key=S.N_POINTS).set_value(30).run()
    assert any("OpenDP" in o for o in at.radio(key=S.NOISE_SOURCE).options)
    assert any("Mironov 2012" in c.value for c in at.caption)
    at.radio(key=S.NOISE_SOURCE).set_value("opendp").run()
    _release(at)
    ok(at)
    rec = at.session_state[S.RELEASES][-1]
    assert rec.release.noise_source == "opendp" and rec.release.seed is None and rec.private
    assert rec.release.metadata()["differentially_private"] is True
    assert len(_ledger(at)) == 1


def test_placeholder_units_are_named_on_the_release_page():
    """Issue 16, finding 3: a table in its own units with no publishable rows and no declared range gave nonsense
    (q = N(0, I) far from the data) without a word on the Release page."""
    from tests.support.app import new_app
    from ui.datasets import build_dataset

    at = new_app()
    spec = {"source": "sample", "sample": "iris", "columns": None, "public_fraction": 0.0, "heldout_fraction": 0.1,
            "split_seed": 0, "scaling": "none", "box": None, "clip": False}
    ds = build_dataset(spec)
    for key, value in {S.DATASET: ds, S.LENGTHSCALE: float(ds.suggested_lengthscale),
                       S.LENGTHSCALE_SOURCE: "suggested", S.Q_SCALE: float(ds.q_scale)}.items():
        at.session_state[key] = value
    at.run()
    at.switch_page("pages/release.py").run()
    assert not at.exception
    assert any("placeholders" in w.value for w in at.warning)
    # with a declared range (scaling from the box) the warning goes
    spec.update(scaling="box", box=([4.0, 2.0, 1.0, 0.0], [8.0, 4.5, 7.0, 2.5]))
    ds = build_dataset(spec)
    at.session_state[S.DATASET] = ds
    at.run()
    assert not any("placeholders" in w.value for w in at.warning)
