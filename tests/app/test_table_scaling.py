"""Safe defaults for a user's own numeric table (issue 16, finding 3), AppTest: per-column scaling suggested from
public information on the Data page, the warning for columns of very different scales, releases inside the
declared range, and M that follows the publishable rows."""

import numpy as np
import pytest

from tests.support.app import new_app, ok
from ui import state as S

PENGUINS = ["bill_length_mm", "bill_depth_mm", "flipper_length_mm", "body_mass_g"]
#: The declared bounds of the bundled penguins schema (from the data's documentation, not its rows).
LOWER = np.array([25.0, 10.0, 160.0, 2000.0])
UPPER = np.array([65.0, 25.0, 240.0, 7000.0])


def _penguins(pct: float = 0.0):
    """The Data page on the bundled penguins, numeric columns, original units, default settings (rows with
    missing cells dropped, as the page asks); ``pct`` % publishable rows declared public."""
    at = new_app().run()
    at.switch_page("pages/data.py").run()
    at.radio(key="data.source").set_value("sample").run()
    at.selectbox(key="data.sample").set_value("penguins").run()
    at.checkbox(key="data.drop_missing.penguins").check().run()
    if pct:
        at.slider(key="data.public_pct").set_value(pct).run()
        at.checkbox(key="data.public_declared").check().run()
    ok(at)
    return at


def _use(at):
    at.button(key="data.use").click().run()
    ok(at)
    return at.session_state[S.DATASET]


def _scaling_table(at):
    """The per-column scaling editor's table (its base frame in the session)."""
    assert "data.colscale_current" in at.session_state, "no per-column scaling table on the Data page"
    return at.session_state[at.session_state["data.colscale_current"]]


def test_penguins_default_is_a_per_column_scaling_from_the_declared_bounds():
    at = _penguins()
    assert at.radio(key="data.scaling.table").value == "columns"
    table = _scaling_table(at)
    assert list(table["column"]) == PENGUINS and set(table["source"]) == {"declared bounds"}
    assert np.allclose(table["centre"], (LOWER + UPPER) / 2) and np.allclose(table["scale"], (UPPER - LOWER) / 2)
    # columns of very different scales (grams vs millimetres): said on the page
    assert any("differ in scale" in i.value for i in at.info)
    ds = _use(at)
    assert ds.scaling is not None and ds.scaling.sources == ("declared bounds",) * 4
    assert np.allclose(ds.scaling.lower, LOWER) and np.allclose(ds.scaling.upper, UPPER)
    assert ds.point_domain is not None and not ds.q_note.startswith("a placeholder")
    assert ds.suggested_lengthscale == pytest.approx(1.0)          # 0.5·√D in declared units


def test_original_units_warn_about_columns_of_very_different_scales():
    at = _penguins()
    at.radio(key="data.scaling.table").set_value("none").run()
    ok(at)
    msgs = [w.value for w in at.warning if "differ in scale" in w.value]
    assert msgs and "body_mass_g" in msgs[0] and "bill_depth_mm" in msgs[0]


def _release(at, mechanism: str | None = None):
    at.switch_page("pages/release.py").run()
    ok(at)
    if mechanism:
        at.selectbox(key=S.MECHANISM).set_value(mechanism).run()
    at.button(key="rel.go").click().run()
    ok(at)
    return at.session_state[S.RELEASES][-1]


@pytest.mark.parametrize("mechanism", [None, "alg2"])
def test_a_default_release_of_penguins_lies_in_the_declared_range(mechanism):
    """Issue 16, finding 3: a release in original units put bill lengths at −251 mm; with the default
    per-column scaling every released point lies within the declared bounds of every column."""
    at = _penguins()
    ds = _use(at)
    rec = _release(at, mechanism)
    assert rec.private and rec.release.mechanism == ("algorithm2" if mechanism else "algorithm1")
    pts = ds.to_original_units(rec.release.points)
    assert pts.shape[1] == 4
    assert np.all(pts >= LOWER - 1e-9 * (UPPER - LOWER)) and np.all(pts <= UPPER + 1e-9 * (UPPER - LOWER))
    assert not any("placeholders" in w.value for w in at.warning)


def test_m_follows_the_publishable_rows():
    """Issue 16, finding 3: M stayed at 7 when 34 public rows became available."""
    at = _penguins(2.0)
    ds = _use(at)
    assert at.session_state[S.N_POINTS] == ds.n_public == 7
    at.slider(key="data.public_pct").set_value(10.0).run()
    ok(at)
    ds = _use(at)
    assert ds.n_public == 34 and at.session_state[S.N_POINTS] == 34
    # the publishable subset is a public source for the columns without declared bounds; bounds still come first
    assert set(_scaling_table(at)["source"]) == {"declared bounds"}


def test_without_public_rows_m_follows_the_librarys_rule():
    from dpkme.release.tabular import default_n_points

    at = _penguins()
    ds = _use(at)
    assert at.session_state[S.N_POINTS] == default_n_points(n_private=ds.n, epsilon=S.DEFAULT_EPSILON,
                                                            delta=S.DEFAULT_DELTA, mechanism="algorithm1")


def test_an_upload_without_public_information_asks_for_a_declaration_and_takes_it():
    at = new_app().run()
    at.switch_page("pages/data.py").run()
    at.radio(key="data.source").set_value("upload").run()
    rng = np.random.default_rng(0)
    rows = "".join(f"{170 + 10 * a:.1f},{70000 + 20000 * b:.0f}\n" for a, b in rng.normal(size=(80, 2)))
    at.file_uploader(key="data.upload").set_value(("people.csv", ("height,income\n" + rows).encode(),
                                                   "text/csv")).run()
    ok(at)
    assert any("Nothing public is known" in w.value for w in at.warning)
    table = _scaling_table(at)
    assert set(table["source"]) == {"nothing public: declare it"}
    ds = _use(at)
    assert ds.scaling is None                               # original units until the user declares
    # the owner is told (from the private rows, for their eyes) that the columns differ in scale
    assert any("differ in scale" in w.value and "for your eyes only" in w.value for w in at.warning)
    # the user declares both columns: the table is scaled with them and the source says so
    key = at.session_state["data.colscale_current"]
    df = table.copy()
    df["centre"], df["scale"] = [170.0, 70000.0], [20.0, 40000.0]
    at.session_state[key] = df
    at.run()
    ok(at)
    ds = _use(at)
    assert ds.scaling is not None and ds.scaling.sources == ("declared by you",) * 2
    assert np.allclose(ds.scaling.center, [170.0, 70000.0]) and ds.scaling.is_private


def test_a_non_positive_declared_scale_is_an_error():
    at = _penguins()
    table = _scaling_table(at).copy()
    table.loc[1, "scale"] = 0.0
    key = at.session_state["data.colscale_current"]
    at.session_state[key] = table
    at.run()
    assert not at.exception
    assert any("'bill_depth_mm' is 0" in e.value and "> 0" in e.value for e in at.error)


@pytest.mark.slow
@pytest.mark.parametrize("key", ["alg1-q", "alg2"])
def test_the_recipe_of_a_release_within_declared_bounds_reruns_inside_them(tmp_path, key):
    """The exported recipe re-runs a release whose points are drawn and kept within the declared bounds."""
    import pandas as pd

    from dpkme.kernels import GaussianKernel
    from dpkme.preprocessing import DeclaredScaling
    from tests.support.recipes import numeric_csv, numeric_dataset, record, run_script

    lower, upper = [20.0, 2000.0], [70.0, 7000.0]
    scaling = DeclaredScaling.from_box(lower=lower, upper=upper, columns=["bill_mm", "mass_g"])
    data = numeric_csv()
    ds = numeric_dataset(data, public_fraction=0.0, public_declared=False, scaling="columns",
                         declared_scaling=scaling.to_dict())
    assert ds.point_domain is not None
    params = ({"n_points": 20, "domain": True, "basis": "full", "weights": "simplex"} if key == "alg1-q" else
              {"n_points": 15, "n_features": 200, "solver": "pursuit-joint", "start": "q", "q_scale": ds.q_scale})
    rec = record(ds, key, params, kernel=GaussianKernel(lengthscale=1.0))
    meta = run_script(tmp_path, rec, ds, data)
    assert meta["differentially_private"] is True and meta["n_points"] == params["n_points"]
    out = pd.read_csv(tmp_path / "out.csv")
    pts = out[["bill_mm", "mass_g"]].to_numpy()
    assert np.all(pts >= np.array(lower) - 1e-6) and np.all(pts <= np.array(upper) + 1e-6)


def test_generated_data_can_be_scaled_per_column_from_the_publishable_subset():
    at = new_app().run()
    at.switch_page("pages/data.py").run()
    at.slider(key="data.public_pct").set_value(5.0).run()
    at.checkbox(key="data.public_declared").check().run()
    assert at.radio(key="data.scaling").value == "none"          # generated data keep their units by default
    at.radio(key="data.scaling").set_value("columns").run()
    ok(at)
    assert set(_scaling_table(at)["source"]) == {"publishable subset (public)"}
    ds = _use(at)
    assert ds.scaling is not None and ds.scaling.columns == ("x1", "x2")
    assert np.allclose(ds.public.mean(axis=0), 0, atol=1e-9)       # the public mean and std, as "Standardise"
    assert at.session_state[S.N_POINTS] == ds.n_public


def test_a_scaling_read_from_the_private_rows_makes_releases_not_private():
    """Only the library offers it (suggest_scaling(private_rows=...)); the app then says NOT private everywhere."""
    from dpkme.datasets import load_sample
    from dpkme.preprocessing import suggest_scaling
    from ui.datasets import build_dataset

    frame, _ = load_sample("iris")
    cols = ["sepal_length", "sepal_width"]
    sug = suggest_scaling(None, columns=cols, private_rows=frame[cols].to_numpy(float))
    spec = {"source": "sample", "sample": "iris", "columns": cols, "public_fraction": 0.0, "heldout_fraction": 0.0,
            "split_seed": 0, "scaling": "columns", "declared_scaling": sug.scaling.to_dict(), "box": None,
            "clip": False}
    ds = build_dataset(spec)
    assert any("PRIVATE" in n for n in ds.notes) and ds.guarantee().startswith("NOT differentially private")
    at = new_app()
    for key, value in {S.DATASET: ds, S.LENGTHSCALE: float(ds.suggested_lengthscale),
                       S.LENGTHSCALE_SOURCE: "suggested", S.Q_SCALE: float(ds.q_scale)}.items():
        at.session_state[key] = value
    at.run()
    at.switch_page("pages/release.py").run()
    assert not at.exception
    assert any("NOT differentially private" in e.value and "declared scaling" in e.value for e in at.error)


def test_a_suggestion_from_the_private_rows_is_on_request_and_flagged():
    at = new_app().run()
    at.switch_page("pages/data.py").run()
    at.radio(key="data.source").set_value("upload").run()
    rows = "".join(f"{170 + i % 30},{40000 + 900 * (i % 50)}\n" for i in range(80))
    at.file_uploader(key="data.upload").set_value(("people.csv", ("height,income\n" + rows).encode(),
                                                   "text/csv")).run()
    ok(at)
    at.checkbox(key="data.colscale_private").check().run()
    assert not at.exception and not at.error
    table = _scaling_table(at)
    assert all("PRIVATE" in s and "not private" in s for s in table["source"])
    assert any("read from the PRIVATE rows" in w.value for w in at.warning)
    ds = _use(at)
    assert ds.scaling.data_dependent == ("height", "income") and not ds.scaling.is_private
    assert ds.guarantee().startswith("NOT differentially private")
    # declaring the values (editing them) makes them public again
    df = table.copy()
    df["centre"], df["scale"] = [185.0, 60000.0], [15.0, 25000.0]
    at.session_state[at.session_state["data.colscale_current"]] = df
    at.run()
    ok(at)
    ds = _use(at)
    assert ds.scaling.is_private and ds.scaling.sources == ("declared by you",) * 2


# ---------------------------------------------------------------------- the other pages draw inside the bounds too
def _inside(ds, Z) -> None:
    """``Z`` (model units) lies within the declared bounds of every column (original units)."""
    pts = ds.to_original_units(np.asarray(Z, dtype=float))
    assert pts.ndim == 2 and pts.shape[1] == 4 and len(pts)
    tol = 1e-9 * (UPPER - LOWER)
    assert np.all(pts >= LOWER - tol) and np.all(pts <= UPPER + tol)


@pytest.mark.slow
def test_exponential_mechanism_candidates_lie_in_the_declared_range():
    """Issue 16, finding 3: the exact exponential mechanism's candidates were a grid over q's centre ± 2 spreads;
    with declared bounds on every column they are a grid over the bounds (or uniform draws within them)."""
    from ui.mechanisms.exponential import _exp_candidates

    at = _penguins()
    ds = _use(at)
    at.switch_page("pages/release.py").run()
    at.selectbox(key=S.MECHANISM).set_value("exponential").run()
    ok(at)
    radio = at.radio(key="rel.exp_cands")
    assert radio.value == "grid-box"                                  # no grid over q's centre ± 2 spreads
    assert radio.options == [radio.format_func("grid-box"), radio.format_func("domain")]
    at.button(key="rel.go").click().run()                             # 3⁴ = 81 candidates, M = 4
    ok(at)
    rec = at.session_state[S.RELEASES][-1]
    assert rec.private and rec.release.mechanism == "exponential"
    _inside(ds, rec.release.points)
    grid = _exp_candidates(ds, "grid-box", 3, 1)
    _inside(ds, grid)
    assert np.allclose(ds.to_original_units(grid).min(axis=0), LOWER)      # the grid spans the declared bounds
    assert np.allclose(ds.to_original_units(grid).max(axis=0), UPPER)
    assert "within the declared bounds" in radio.format_func("domain")   # or uniform draws within them
    _inside(ds, _exp_candidates(ds, "domain", 1, 30))


def test_the_gp_release_grid_lies_in_the_declared_range():
    """The GP release's public grid was q's centre ± 2 spreads; with declared bounds it spans them."""
    at = _penguins()
    ds = _use(at)
    at.switch_page("pages/release.py").run()
    at.selectbox(key=S.MECHANISM).set_value("gp").run()
    ok(at)
    radio = at.radio(key="rel.gp_region")
    assert radio.value == "box" and radio.options == [radio.format_func("box")]     # not q's box
    at.button(key="rel.go").click().run()
    ok(at)
    rec = at.session_state[S.RELEASES][-1]
    assert rec.kind == "function" and rec.private
    axes = rec.release.axes
    lo, hi = np.array([a.min() for a in axes]), np.array([a.max() for a in axes])
    _inside(ds, np.stack([lo, hi]))
    assert np.allclose(ds.to_original_units(np.stack([lo, hi])), np.stack([LOWER, UPPER]))


def test_the_curves_draw_algorithm_1s_points_within_the_declared_range(monkeypatch):
    """The Curves page drew Algorithm 1's points from q with one spread; with declared bounds they are uniform
    draws within them (the same public draw as the Release page's Algorithm 1)."""
    import dpkme.release.subspace as subspace
    from dpkme.schema import EmbeddedDomain

    drawn = []
    sample = EmbeddedDomain.sample

    def spy(self, n, rng):
        out = sample(self, n, rng)
        drawn.append(out)
        return out

    def from_q(*args, **kwargs):
        raise AssertionError("points drawn from q")

    monkeypatch.setattr(EmbeddedDomain, "sample", spy)
    monkeypatch.setattr(subspace, "draw_points_from_q", from_q)
    at = _penguins()
    ds = _use(at)
    at.switch_page("pages/curves.py").run()
    ok(at)
    assert at.radio(key="crv.kind").value == "q"
    assert "within the declared bounds" in at.radio(key="crv.kind").format_func("q")
    drawn.clear()
    at.button(key="crv.go").click().run()
    ok(at)
    assert drawn and drawn[-1].shape == (250, 4)
    _inside(ds, drawn[-1])
    t = at.session_state[S.CURVES]["table"]
    assert (t["method"] == "Algorithm 1").any() and np.isfinite(t["distance"]).all()
    # Algorithm 2's curves: only solvers that keep their points inside the bounds (alg2_curves(domain=...))
    at.multiselect(key="crv.mechs").set_value(["Algorithm 1", "Algorithm 2"]).run()
    ok(at)
    assert "preimage" not in at.selectbox(key="crv.solver").options
    assert any("within the declared bounds" in c.value for c in at.caption)


def test_the_clustering_page_starts_and_keeps_its_centres_within_the_declared_range():
    """The Clustering page started its centres from q (one spread); with declared bounds they are uniform draws
    within them, and the released centres' pre-images are searched inside them."""
    at = _penguins()
    ds = _use(at)
    at.switch_page("pages/clustering.py").run()
    ok(at)
    radio = at.radio(key="clu.init")
    assert radio.value == "box" and radio.options == [radio.format_func("box")]     # no draws from q
    at.button(key="clu.go").click().run()
    ok(at)
    res = at.session_state["clu.result"]["result"]
    _inside(ds, res.init_points)
    path = res.centre_path()
    _inside(ds, path[~np.isnan(path).any(axis=2)])


def test_a_clusterwise_release_of_penguins_lies_in_the_declared_range():
    """The Release page's cluster-wise release started from q and let its solvers roam; with declared bounds its
    centres start inside them and every released point stays inside them."""
    at = _penguins()
    ds = _use(at)
    at.switch_page("pages/release.py").run()
    at.selectbox(key=S.MECHANISM).set_value("clusterwise").run()
    ok(at)
    at.button(key="rel.go").click().run()
    ok(at)
    rec = at.session_state[S.RELEASES][-1]
    assert rec.private and rec.mechanism_key == "clusterwise"
    _inside(ds, rec.release.points)


def test_grids_over_the_publishable_rows_stay_within_the_declared_range():
    """With publishable rows, the exponential mechanism's grid over their range and the GP release's grid over it
    (widened by 10 %) are cut to the declared bounds; both stay the first choice only without bounds."""
    from ui.mechanisms.exponential import _exp_candidates
    from ui.mechanisms.gp import gp_grid

    at = _penguins(10.0)
    ds = _use(at)
    assert ds.n_public == 34 and ds.point_domain is not None
    _inside(ds, _exp_candidates(ds, "grid-public", 3, 1))
    axes = gp_grid(ds, "public", 4)
    _inside(ds, np.stack([[a.min() for a in axes], [a.max() for a in axes]]))
    at.switch_page("pages/release.py").run()
    at.selectbox(key=S.MECHANISM).set_value("gp").run()
    ok(at)
    radio = at.radio(key="rel.gp_region")
    assert radio.value == "box" and radio.options == [radio.format_func("box"), radio.format_func("public")]
