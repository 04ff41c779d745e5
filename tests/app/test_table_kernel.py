"""The app's mixed-table releases use the library's table defaults (the browser walk's finding: the app released a
table with the product kernel and the generic Algorithm 2 settings while ``dpkme.release_table`` uses the additive
kernel, the table solver's options, J = DEFAULT_N_FEATURES and M = default_n_points).

The Kernel & privacy page offers the additive kernel (default) and the product kernel for a mixed table; the
Release page's Algorithm 2 on a table runs with ``release_table``'s preset and options
(:func:`dpkme.release.tabular.table_solver_options`); the kernel round-trips through every key and file (cache keys,
the release JSON, the recipe), the recipe replays the app's release exactly, and the charge is the same for both
kernels."""

from __future__ import annotations

import inspect
import json
import warnings

import numpy as np
import pytest

from dpkme.datasets import load_sample, load_schema
from dpkme.kernels import AdditiveKernel, GaussianKernel, kernel_from_dict
from dpkme.reduced_set import preset_options
from dpkme.release import algorithm2_charge
from dpkme.release.tabular import (
    DEFAULT_N_FEATURES,
    DEFAULT_TABLE_KERNEL,
    TABLE_REFIT,
    TABLE_REVIVE,
    default_n_points,
    release_table,
    table_solver_options,
)
from tests.support.app import new_app, ok
from tests.support.app_tables import in_declared_domain, schema_mode, use
from ui import compute as C
from ui import export as E
from ui import state as S
from ui.mechanisms import REGISTRY, RunContext
from ui.mechanisms import algorithm2 as A2


# ---------------------------------------------------------------------- the library's defaults, in one place
def test_the_apps_table_defaults_are_release_tables():
    assert S.DEFAULTS[S.TABLE_KERNEL] == DEFAULT_TABLE_KERNEL == "additive"
    assert A2.TABLE_PRESET == inspect.signature(release_table).parameters["preset"].default
    assert DEFAULT_N_FEATURES in A2.FEATURE_CHOICES
    opts = table_solver_options("pursuit-joint")
    assert opts == {"weights": "simplex", "revive": TABLE_REVIVE, "refit": TABLE_REFIT}
    assert opts["refit"] is not TABLE_REFIT                           # a new dict: callers may change theirs
    assert table_solver_options("pursuit-joint", weights="free").get("refit") is None
    assert table_solver_options("pursuit-joint", solver_options={"revive": None})["revive"] is None
    with pytest.raises(ValueError, match="solver_options must be a dict"):
        table_solver_options("pursuit-joint", solver_options=[("revive", None)])


def test_release_table_passes_the_options_of_table_solver_options():
    """The app calls table_solver_options; release_table must run with exactly those options (and its preset)."""
    df, _ = load_sample("penguins")
    schema = load_schema("penguins")
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        rel = release_table(df, schema=schema, epsilon=1.0, delta=1e-6, n_points=20, n_features=200,
                            random_state=3).release
    used = {k: v for k, v in rel.params["solver_options"].items() if k != "noise_sigma"}
    assert used == {**preset_options("pursuit-joint", A2.TABLE_PRESET), **table_solver_options("pursuit-joint")}
    assert rel.kernel == schema.kernel(kind="additive")


# ---------------------------------------------------------------------- keys, caches and the sensitivity
def test_the_additive_kernel_round_trips_through_every_key_and_keeps_the_charge():
    schema = load_schema("penguins")
    k = schema.kernel(kind="additive")
    assert isinstance(k, AdditiveKernel)
    kk = C.kernel_key(k)
    assert C._kernel(kk) == k and kernel_from_dict(json.loads(json.dumps(k.to_dict()))) == k
    assert kk != C.kernel_key(GaussianKernel(lengthscale=1.0))          # caches keyed by kernel keep them apart
    Z = schema.domain.sample(12, np.random.default_rng(0))
    B = C.basis(kk, C.array_key(Z), Z)                                  # the cached basis of Algorithm 1's points
    assert B.dim == 12
    # the app's calibration is the library's: k(x, x) = 1, k > 0 gives the product kernel's Δ and σ
    for mode in ("tight", "paper"):
        sa, ca, _ = C.calibration(344, k, eps=1.0, delta=1e-6, method="analytic", mode=mode)
        sg, cg, _ = C.calibration(344, GaussianKernel(lengthscale=1.0), eps=1.0, delta=1e-6, method="analytic",
                                  mode=mode)
        assert sa == sg and ca.sigma == cg.sigma
    t, numeric, categorical = C.table_kernel_profile(schema, k, size=5)
    assert t[0] == 0 and set(numeric) == {c.name for c in schema.columns if c.is_numeric}
    assert all(v[0] == pytest.approx(1.0, abs=1e-12) and np.all(np.diff(v) <= 1e-12) for v in numeric.values())
    assert set(categorical) == {"species", "island", "sex"} and all(0 < v < 1 for v in categorical.values())


def test_algorithm1_on_a_table_runs_with_the_additive_kernel_in_the_declared_domain():
    from ui import datasets as D

    spec = {"source": "sample", "sample": "penguins", "schema": load_schema("penguins").to_dict(),
            "public_fraction": 0.0, "heldout_fraction": 0.0, "split_seed": 0}
    ds = D.build_dataset(spec)
    k = ds.schema.kernel(kind="additive")
    ctx = RunContext(ds=ds, kernel=k, epsilon=1.0, delta=1e-6, calibration="analytic", sensitivity_mode="tight",
                     random_state=4, noise_source="seeded")
    rel = REGISTRY["alg1-q"].run(ctx, {"n_points": 40, "domain": True, "basis": "full", "weights": "simplex"})
    assert rel.kernel == k and rel.n_points == 40 and ds.schema.domain.contains(rel.points).all()


# ---------------------------------------------------------------------- the app: Kernel page and Release page
@pytest.fixture(scope="module")
def table_app():
    at = use(schema_mode(new_app().run()))
    ok(at)
    return at


def test_the_kernel_page_offers_the_additive_kernel_by_default_and_the_product_kernel(table_app):
    at = table_app
    at.switch_page("pages/kernel.py").run()
    ok(at)
    ds = at.session_state[S.DATASET]
    assert at.radio(key=S.TABLE_KERNEL).value == "additive"
    assert any("additive table kernel" in i.value and "declared **in the schema**" in i.value for i in at.info)
    assert not [n for n in at.number_input if n.key == S.LENGTHSCALE]       # no ℓ: the scales come from the schema
    with_kernel = [f for f in at.get("plotly_chart") if "one column differs" in json.dumps(f.proto.spec)]
    assert with_kernel                                                       # the per-column profile, not a radial one
    at.radio(key=S.TABLE_KERNEL).set_value("product").run()
    ok(at)
    assert at.number_input(key=S.LENGTHSCALE).value == pytest.approx(1.0)
    assert any("product kernel" in i.value for i in at.info)
    at.radio(key=S.TABLE_KERNEL).set_value("additive").run()
    ok(at)
    assert isinstance(ds.schema.kernel(kind="additive"), AdditiveKernel)


@pytest.mark.slow
def test_a_table_release_uses_the_librarys_kernel_solver_and_sizes_and_product_is_a_choice(table_app):
    at = table_app
    at.switch_page("pages/kernel.py").run()
    at.radio(key=S.TABLE_KERNEL).set_value("additive").run()
    at.switch_page("pages/release.py").run()
    at.selectbox(key=S.MECHANISM).set_value("alg2").run()   # Algorithm 2 (a table's default: adaptive)
    ok(at)
    ds = at.session_state[S.DATASET]
    assert at.selectbox(key=S.MECHANISM).value == "alg2"
    m = default_n_points(n_private=ds.n, epsilon=S.DEFAULT_EPSILON, delta=S.DEFAULT_DELTA)
    assert at.session_state[S.N_FEATURES] == DEFAULT_N_FEATURES and at.session_state[S.N_POINTS] == m
    assert any("additive table kernel" in i.value for i in at.info)
    at.button(key="rel.go").click().run()
    ok(at)
    rec = at.session_state[S.RELEASES][-1]
    assert rec.private and rec.release.kernel == ds.schema.kernel(kind="additive")
    assert rec.replay["params"]["preset"] == A2.TABLE_PRESET
    meta = json.loads(E.table_json(rec, ds))
    assert meta["kernel"]["name"] == "additive" and kernel_from_dict(meta["kernel"]) == rec.release.kernel
    opts = meta["params"]["solver_options"]
    assert opts["weights"] == "simplex" and opts["revive"] == TABLE_REVIVE and opts["refit"] == TABLE_REFIT
    assert meta["params"]["n_features"] == DEFAULT_N_FEATURES and meta["n_points"] == m
    assert meta["params"]["solver"] == "pursuit-joint"
    import io

    import pandas as pd

    weighted = pd.read_csv(io.BytesIO(E.table_release_csv(rec, ds)))
    in_declared_domain(weighted, ds.schema)
    assert ds.schema.domain.contains(rec.release.points).all()
    # the recipe re-runs it with release_table's kernel, preset and options
    recipe = E.recipe(rec, ds)
    assert recipe["kernel"] == rec.release.kernel.to_dict() and recipe["preset"] == A2.TABLE_PRESET
    assert recipe["solver_options"] == {"weights": "simplex", "revive": TABLE_REVIVE, "refit": TABLE_REFIT}
    # the product kernel is a choice on the Kernel page: the Gaussian kernel on the embedding, the same charge
    at.switch_page("pages/kernel.py").run()
    at.radio(key=S.TABLE_KERNEL).set_value("product").run()
    ok(at)
    at.switch_page("pages/release.py").run()
    at.selectbox(key=S.MECHANISM).set_value("alg2").run()   # Algorithm 2 (a table's default: adaptive)
    ok(at)
    assert not any("additive table kernel" in i.value for i in at.info)
    at.button(key="rel.go").click().run()
    ok(at)
    prod = at.session_state[S.RELEASES][-1]
    assert prod.release.kernel == GaussianKernel(lengthscale=1.0) == ds.schema.kernel()
    assert json.loads(E.table_json(prod, ds))["kernel"]["name"] == "gaussian"
    led = at.session_state[S.LEDGERS][ds.data_key]
    a, b = led.charges[-2], led.charges[-1]
    ref = algorithm2_charge(n_private=ds.n, epsilon=S.DEFAULT_EPSILON, delta=S.DEFAULT_DELTA)
    for c in (a, b):
        assert (c.epsilon, c.delta) == (ref.epsilon, ref.delta)
        assert c.noise_multiplier == pytest.approx(ref.noise_multiplier, rel=1e-12)
        assert c.details["sensitivity"] == pytest.approx(2 / ds.n, rel=1e-12)
    at.switch_page("pages/kernel.py").run()
    at.radio(key=S.TABLE_KERNEL).set_value("additive").run()   # the module's fixture is shared: leave the default


@pytest.mark.slow
def test_the_release_page_says_when_the_marginal_block_is_on_and_the_release_uses_it():
    """Penguins (344 rows): off at the default ε (a cell's noise above 2 % of the rows), on at ε = 20, where the
    app's release runs with release_table's marginal block (its params say so) at the same charge."""
    from dpkme.release.tabular import default_marginal_share

    at = use(schema_mode(new_app().run()))
    at.switch_page("pages/release.py").run()
    at.selectbox(key=S.MECHANISM).set_value("alg2").run()   # Algorithm 2 (a table's default: adaptive)
    ok(at)
    ds = at.session_state[S.DATASET]
    assert default_marginal_share(n_private=ds.n, epsilon=S.DEFAULT_EPSILON, delta=S.DEFAULT_DELTA,
                                  n_columns=len(ds.schema)) == 0.0
    assert any("Marginal block off" in c.value for c in at.caption)
    at.session_state[S.BUDGET_EPS] = 100.0
    at.session_state[S.EPS_TYPED] = True
    at.session_state[S.EPS_VALUE] = 20.0
    at.run()
    ok(at)
    assert any("Marginal block on" in c.value for c in at.caption)
    at.button(key="rel.go").click().run()
    ok(at)
    rec = at.session_state[S.RELEASES][-1]
    block = rec.release.params["marginals"]
    assert block["share"] == 0.3 and block["pairs"] and rec.private
    assert ds.schema.domain.contains(rec.release.points).all()
    charge = at.session_state[S.LEDGERS][ds.data_key].charges[-1]
    ref = algorithm2_charge(n_private=ds.n, epsilon=20.0, delta=S.DEFAULT_DELTA)
    assert (charge.epsilon, charge.delta) == (ref.epsilon, ref.delta)
    assert E.recipe(rec, ds)["marginal_share"] == 0.3
    # the Kernel & privacy page, with ε = 20 typed there, states the kernel features' own noise, σ √(J / (1 − h))
    at.switch_page("pages/kernel.py").run()
    at.toggle(key=S.EPS_TYPED).set_value(True).run()
    at.number_input(key=S.EPS_VALUE).set_value(20.0).run()
    ok(at)
    m = next(m for m in at.metric if m.label == "Noise norm on the kernel features")
    J = at.session_state[S.N_FEATURES]
    assert float(m.value) == pytest.approx(ref.details["sigma"] * (J / 0.7) ** 0.5, rel=1e-2)
