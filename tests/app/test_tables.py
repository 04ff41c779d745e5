"""Mixed tables in the app (issue 15): the Data page's schema editor, schema datasets, the Release page's owner's
view and downloads, the Third-party use page's statistics -- on the bundled penguins table (declared schema) and
on an uploaded CSV with missing values and a date column (AppTest); plus one browser test of the whole path."""

from __future__ import annotations

import io
import json
import re
from pathlib import Path
from types import SimpleNamespace

import numpy as np
import pandas as pd
import pytest

from dpkme.datasets import load_schema
from tests.support.app import decode, errors, new_app, ok, plotly_figures
from tests.support.app_tables import MIXED_SCHEMA, in_declared_domain, mixed_csv, schema_mode, use
from ui import datasets as D
from ui import export as E
from ui import state as S
from ui import tables as T
from ui.views.data_schema_editor import editor_key, state_key

PENGUINS = "sample:penguins"


def upload(at, data: bytes, name: str = "visits.csv"):
    at.switch_page("pages/data.py").run()
    at.radio(key="data.source").set_value("upload").run()
    at.file_uploader(key="data.upload").set_value((name, data, "text/csv")).run()
    at.radio(key="data.mode").set_value("schema").run()
    return at


def upload_key(at) -> str:
    return "upload:" + at.session_state[S.UPLOAD]["hash"]


def edit(at, src: str, edits: dict):
    """Apply cell edits ``{column: {field: value}}`` to the schema editor (AppTest seeds the edit state)."""
    state = at.session_state[state_key(src)]
    base = state["base"]
    rows = {int(base.index[base["column"] == c][0]): v for c, v in edits.items()}
    at.session_state[editor_key(src, state["version"])] = {"edited_rows": rows, "added_rows": [], "deleted_rows": []}
    return at.run()


def load_schema_file(at, src: str, schema: dict, name: str = "schema.json"):
    at.file_uploader(key=f"data.schema_upload.{src}").set_value((name, json.dumps(schema).encode(),
                                                                   "application/json")).run()
    return at


def candidate(at):
    return at.session_state["data._candidate"]


def frame_of(at, index_name: str, column: str | None = None, columns_name: str | None = None) -> pd.DataFrame:
    """The shown table whose index is named ``index_name`` (and that has ``column`` / whose columns are named
    ``columns_name``)."""
    for d in at.dataframe:
        v = d.value
        if v.index.name == index_name and (column is None or column in v.columns) and (
                columns_name is None or v.columns.name == columns_name):
            return v
    raise AssertionError(f"no table indexed by {index_name!r}")


def warnings_text(at) -> str:
    return " | ".join(w.value for w in at.warning)


# ---------------------------------------------------------------------- Data page: penguins
@pytest.fixture
def penguins_page():
    at = schema_mode(new_app().run())
    ok(at)
    return at


def test_penguins_in_schema_mode_starts_from_the_bundled_declared_schema(penguins_page):
    at = penguins_page
    assert len(at.data_editor) == 1
    rows = at.session_state[state_key(PENGUINS)]["base"]
    assert list(rows["column"]) == list(load_schema("penguins").names)
    assert rows["declared"].all() and rows["use"].all()
    assert "bundled" in at.session_state[state_key(PENGUINS)]["origin"]
    assert "read from the private rows" not in warnings_text(at)
    # the plain-words explanation with the kernel's formula
    assert any("What is a schema" in e.label for e in at.expander)
    assert any("\\kappa_c^{[x_c \\ne y_c]}" in m.value for m in at.markdown)
    use(at)
    ok(at)
    ds = at.session_state[S.DATASET]
    schema = load_schema("penguins")
    assert ds.is_table and ds.schema == schema and ds.dim == schema.dim == 22
    assert ds.n + ds.n_heldout == 344 and ds.n_public == 0
    assert schema.domain.contains(ds.X).all() and schema.domain.contains(ds.heldout).all()
    assert np.array_equal(ds.X, schema.encode(ds.decode(ds.X)))          # the rows are the encoded table
    assert ds.suggested_lengthscale == 1.0 and at.session_state[S.LENGTHSCALE] == 1.0
    assert ds.preprocessing_record()["schema"] == schema.to_dict()
    # preview: the private rows in their own columns and types; the owner's preprocessing counts
    assert any(list(d.value.columns) == list(schema.names) for d in at.dataframe)
    assert any("owner only" in e.label for e in at.expander)


def test_schema_edits_change_the_dataset_and_survive_leaving_the_page(penguins_page):
    at = edit(penguins_page, PENGUINS, {"body_mass_g": {"upper": "8000"}, "year": {"use": False}})
    ok(at)
    schema = candidate(at).schema
    assert "year" not in schema.names and schema["body_mass_g"].upper == 8000.0
    assert candidate(at).dim == 21
    at.switch_page("pages/kernel.py").run()
    at.switch_page("pages/data.py").run()
    ok(at)
    assert candidate(at).schema == schema                       # the edited rows came back with the page
    assert at.radio(key="data.mode").value == "schema"


def test_schema_json_round_trip_download_and_upload(penguins_page):
    at = penguins_page
    schema = load_schema("penguins")
    text = T.schema_json_bytes(schema)                        # what the download button carries
    assert json.loads(text)["format"] == "dpkme.table_schema"
    assert type(schema).from_json(text) == schema
    assert any(b.label.startswith("Download the schema") for b in at.get("download_button"))
    changed = json.loads(text)
    for c in changed["columns"]:
        if c["name"] == "island":
            c["similarity"] = 0.3
        if c["name"] == "body_mass_g":
            c["lengthscale"] = 0.1
    load_schema_file(at, PENGUINS, changed)
    ok(at)
    got = candidate(at).schema
    assert got == type(schema).from_dict(changed)
    assert got.similarity("island") == 0.3 and got.lengthscale("body_mass_g") == 0.1
    assert "uploaded file" in at.session_state[state_key(PENGUINS)]["origin"]
    # and the editor's rows give the same JSON back
    again = T.schema_from_editor(at.session_state[state_key(PENGUINS)]["base"], original=got)
    assert again.to_dict() == got.to_dict()
    # 'Reset the schema' goes back to the bundled declaration
    at.button(key=f"data.schema_reset.{PENGUINS}").click().run()
    ok(at)
    assert candidate(at).schema == schema


def test_an_unknown_category_is_an_error_naming_it(penguins_page):
    at = penguins_page
    bad = load_schema("penguins").to_dict()
    bad["columns"][0]["categories"] = ["Adelie", "Gentoo"]          # Chinstrap is not declared
    load_schema_file(at, PENGUINS, bad)
    assert not at.exception
    msg = errors(at)
    assert "species" in msg and "Chinstrap" in msg and "declared categories" in msg
    assert candidate(at) is None and not any(b.key == "data.use" for b in at.button)


def test_cells_the_schema_cannot_take_are_errors_naming_them(penguins_page):
    at = edit(penguins_page, PENGUINS, {"bill_length_mm": {"lower": "abc"}})
    assert not at.exception
    assert "bill_length_mm" in errors(at) and "'abc' is not a number" in errors(at)
    at = edit(at, PENGUINS, {"island": {"categories": ""}})
    assert "island" in errors(at) and "categories" in errors(at)
    at = edit(at, PENGUINS, {"year": {"lower": "2010"}})
    assert "year" in errors(at) and "lower must be below upper" in errors(at)


# ---------------------------------------------------------------------- Release and Use pages: penguins
@pytest.fixture(scope="module")
def released():
    at = use(schema_mode(new_app().run()))
    at.switch_page("pages/release.py").run()
    ok(at)
    assert at.selectbox(key=S.MECHANISM).value == "adaptive"    # the default for a table (issue 25)
    at.selectbox(key=S.MECHANISM).set_value("alg2").run()       # these tests read Algorithm 2's weighted rows
    at.button(key="rel.go").click().run()
    ok(at)
    return at


def test_a_table_release_is_private_and_lies_in_the_declared_domain(released):
    at = released
    ds = at.session_state[S.DATASET]
    rec = at.session_state[S.RELEASES][-1]
    assert rec.private and rec.release.seed is None and rec.release.metadata()["differentially_private"] is True
    assert ds.schema.domain.contains(rec.release.points).all()
    assert rec.release.params.get("domain") == "declared"
    led = at.session_state[S.LEDGERS][ds.data_key]
    assert len(led) == 1 and led.charges[0].epsilon == 1.0
    # the weighted table, in the original columns and types
    shown = next(d.value for d in at.dataframe if "weight" in d.value.columns)
    assert list(shown.columns) == [*ds.schema.names, "weight"] and len(shown) == rec.release.n_points


def test_marginals_and_associations_are_drawn(released):
    at = released
    ds = at.session_state[S.DATASET]
    figs = plotly_figures(at)
    titles = [f["layout"].get("title", {}).get("text", "") for f in figs]
    for c in ds.schema.columns:
        assert f"{c.name} ({c.kind})" in titles, c.name
    assert any(t.startswith("Associations") for t in titles)
    assert any("Owner's view" in w.value for w in at.warning)
    # species: the private bars are the private rows' shares; release and resampled rows are proportions too
    fig = figs[titles.index("species (categorical)")]
    traces = {t["name"]: t for t in fig["data"]}
    assert set(traces) == {"private rows", "release (weighted)", "resampled rows"}
    private = ds.decode(ds.X)["species"].value_counts(normalize=True)
    got = dict(zip(traces["private rows"]["x"], decode(traces["private rows"]["y"])))
    for k, v in private.items():
        assert got[k] == pytest.approx(v, abs=1e-12)
    for t in traces.values():
        assert float(np.sum(decode(t["y"]))) == pytest.approx(1.0, abs=1e-9)
    # numeric columns: bins on the declared range
    mass = figs[titles.index("body_mass_g (continuous)")]["data"][0]
    x = decode(mass["x"]).astype(float)
    assert x.min() > 2000 and x.max() < 7000 and x.size == 30


def test_download_builders_give_the_declared_types_and_domain(released):
    at = released
    ds = at.session_state[S.DATASET]
    rec = at.session_state[S.RELEASES][-1]
    labels = [b.label for b in at.get("download_button")]
    assert any(lbl.startswith("CSV: weighted rows") for lbl in labels)
    assert any(re.match(r"CSV: [\d,]+ synthetic rows", lbl) for lbl in labels)
    assert any(lbl.startswith("JSON: parameters + schema") for lbl in labels)
    # the weighted rows
    weighted = pd.read_csv(io.BytesIO(E.table_release_csv(rec, ds)))
    assert list(weighted.columns) == [*ds.schema.names, "weight"] and len(weighted) == rec.release.n_points
    in_declared_domain(weighted, ds.schema)
    assert np.allclose(weighted["weight"], rec.release.weights)
    assert (weighted["body_mass_g"].dropna() == weighted["body_mass_g"].dropna().round(0)).all()
    assert (weighted["bill_length_mm"].dropna() == weighted["bill_length_mm"].dropna().round(1)).all()
    assert pd.api.types.is_integer_dtype(weighted["year"])
    # N unweighted synthetic rows (post-processing), the same rows the marginals show
    rows = E.synthetic_rows(rec, ds, ds.n)
    assert len(rows) == ds.n and list(rows.columns) == list(ds.schema.names)
    in_declared_domain(rows, ds.schema)
    assert rows.drop_duplicates().shape[0] > rec.release.n_points          # spread within the kernel's scale
    parsed = pd.read_csv(io.BytesIO(E.synthetic_csv(rows)))
    in_declared_domain(parsed, ds.schema)
    # the JSON: the privacy claim without a seed, and the schema that decodes the rows
    meta = json.loads(E.table_json(rec, ds))
    assert meta["differentially_private"] is True and meta["seed"] is None
    assert meta["kind"] == "table" and meta["schema"] == ds.schema.to_dict()
    assert meta["csv_columns"] == list(weighted.columns)
    assert "n_clipped" not in json.dumps(meta) and "clipped" not in json.dumps(meta["preprocessing"])


def test_the_use_page_shows_a_third_partys_numbers_next_to_the_truth(released):
    at = released
    at.switch_page("pages/use.py").run()
    ok(at)
    ds = at.session_state[S.DATASET]
    rec = at.session_state[S.RELEASES][-1]
    private = ds.decode(ds.X)
    heads = [h.value for h in at.subheader]
    for h in ("Categories: counts and proportions", "Cross-tabulation", "Means by group",
              "Means and standard deviations"):
        assert h in heads, h
    released_rows = E.table_release(rec, ds).table()
    w = rec.release.weights / rec.release.weights.sum()              # the page's default: self-normalised
    # counts and proportions of species
    sp = frame_of(at, "species", "estimated proportion")
    truth = private["species"].value_counts(normalize=True)
    for k, v in truth.items():
        assert sp.loc[k, "true proportion"] == pytest.approx(v)
        assert sp.loc[k, "true count"] == pytest.approx(v * ds.n)
    est = pd.Series(w).groupby(released_rows["species"].to_numpy()).sum()
    for k, v in est.items():
        assert sp.loc[k, "estimated proportion"] == pytest.approx(v)
    assert sp["estimated proportion"].sum() == pytest.approx(1.0)
    assert np.allclose(sp["error"], sp["estimated proportion"] - sp["true proportion"])
    # the cross-tabulation of species × island (the defaults), true shares
    xt_est, xt = [d.value for d in at.dataframe if d.value.index.name == "species"
                  and d.value.columns.name == "island"]
    ct = pd.crosstab(private["species"], private["island"], normalize="all")
    assert np.allclose(xt.loc[ct.index, ct.columns].to_numpy(), ct.to_numpy())
    assert xt_est.to_numpy().sum() == pytest.approx(1.0)
    # mean of the first numeric column by species
    gm = next(d.value for d in at.dataframe if "estimated mean" in d.value.columns).set_index("species")
    true_means = private.groupby("species")["bill_length_mm"].mean()
    for k, v in true_means.items():
        assert gm.loc[k, "true mean"] == pytest.approx(v)
    x = released_rows["bill_length_mm"].to_numpy(dtype=float)
    for k in gm.index:                                                # what a recipient computes: Σ w x / Σ w
        sel = (released_rows["species"] == k).to_numpy() & ~np.isnan(x)
        assert gm.loc[k, "estimated mean"] == pytest.approx((w[sel] @ x[sel]) / w[sel].sum())
    assert gm["estimated mean"].between(25, 65).all()                # inside the declared range
    # numeric means and SDs
    mom = frame_of(at, "column", "estimated SD")
    assert mom.loc["body_mass_g", "true mean"] == pytest.approx(private["body_mass_g"].mean())
    assert mom.loc["body_mass_g", "true SD"] == pytest.approx(private["body_mass_g"].std(ddof=0))
    m = released_rows["body_mass_g"].to_numpy(dtype=float)
    ok_m = ~np.isnan(m)
    assert mom.loc["body_mass_g", "estimated mean"] == pytest.approx((w[ok_m] @ m[ok_m]) / w[ok_m].sum())
    assert 2000 <= mom.loc["body_mass_g", "estimated mean"] <= 7000
    # the MMD comparison with held-out rows still works on the embedded rows
    assert "Two-sample comparison with held-out data (MMD)" in heads


# ---------------------------------------------------------------------- uploads: missing values, a date column
@pytest.fixture
def uploaded():
    at = upload(new_app().run(), mixed_csv())
    ok(at)
    return at


def test_an_uploaded_mixed_table_with_private_suggestions_is_flagged_then_declared(uploaded):
    at = uploaded
    src = upload_key(at)
    # no publishable subset: the suggestions read the private rows -- said so, and releases are NOT private
    assert "read from the private rows" in warnings_text(at)
    schema = candidate(at).schema
    assert [c.kind for c in schema.columns] == ["datetime", "integer", "continuous", "categorical", "boolean"]
    assert {"visit", "age", "income", "region"} <= set(schema.data_dependent)
    use(at)
    at.switch_page("pages/release.py").run()
    at.selectbox(key=S.MECHANISM).set_value("alg2").run()   # Algorithm 2 (a table's default: adaptive)
    assert "NOT differentially private" in errors(at)
    at.button(key="rel.go").click().run()
    assert not at.exception
    rec = at.session_state[S.RELEASES][-1]
    ds = at.session_state[S.DATASET]
    assert not rec.private and rec.charge is None
    meta = json.loads(E.table_json(rec, ds))
    assert meta["differentially_private"] is False and "private rows" in meta["warning"]
    # decoded rows in the original types: a date column, missing incomes and regions
    rows = E.synthetic_rows(rec, ds, 500)
    assert pd.api.types.is_datetime64_any_dtype(rows["visit"]) and pd.api.types.is_integer_dtype(rows["age"])
    in_declared_domain(rows, ds.schema)
    parsed = pd.read_csv(io.BytesIO(E.synthetic_csv(rows)), parse_dates=["visit"])
    visits = parsed["visit"].dropna()
    assert len(visits) and visits.between(pd.Timestamp(schema["visit"].lower), pd.Timestamp(schema["visit"].upper)).all()
    # a tick alone does not declare a value read off the private rows (issue 24, finding 6a): bounds, category
    # lists and levels stay flagged until the owner types a value from public knowledge
    at.switch_page("pages/data.py").run()
    at = edit(at, src, {c: {"declared": True} for c in schema.data_dependent})
    ok(at)
    still = dict(candidate(at).schema.data_dependent_fields)
    assert {"visit", "age", "income", "region"} <= set(still)
    assert all(set(f) <= {"lower", "upper", "categories", "values"} for f in still.values())
    # re-declare every column from the code book -> no warning, and a release is private again
    book = {c["name"]: c for c in MIXED_SCHEMA["columns"]}
    edits = {c: {"declared": True} for c in schema.data_dependent}
    for c in ("visit", "age", "income"):
        edits[c].update(lower=str(book[c]["lower"]), upper=str(book[c]["upper"]))
    edits["visit"]["lower"] = "2020-01-01"         # the code book's 2021-01-01 is also the private minimum here
    edits["region"]["categories"] = "|".join(book["region"]["categories"] + ["other"])
    at = edit(at, src, edits)
    ok(at)
    assert candidate(at).schema.data_dependent == ()
    assert "read from the private rows" not in warnings_text(at)
    use(at)
    at.switch_page("pages/release.py").run()
    at.selectbox(key=S.MECHANISM).set_value("alg2").run()   # Algorithm 2 (a table's default: adaptive)
    ok(at)
    at.button(key="rel.go").click().run()
    ok(at)
    assert at.session_state[S.RELEASES][-1].private


def test_an_uploaded_declared_schema_gives_a_private_release_with_dates_and_missing_values(uploaded):
    at = load_schema_file(uploaded, upload_key(uploaded), MIXED_SCHEMA)
    ok(at)
    assert candidate(at).schema.to_dict() == MIXED_SCHEMA
    use(at)
    ds = at.session_state[S.DATASET]
    assert ds.is_table and ds.data_key == upload_key(at)
    at.switch_page("pages/release.py").run()
    at.selectbox(key=S.MECHANISM).set_value("alg2").run()   # Algorithm 2 (a table's default: adaptive)
    at.button(key="rel.go").click().run()
    ok(at)
    rec = at.session_state[S.RELEASES][-1]
    assert rec.private
    weighted = pd.read_csv(io.BytesIO(E.table_release_csv(rec, ds)), parse_dates=["visit"])
    in_declared_domain(weighted, ds.schema)
    titles = [f["layout"].get("title", {}).get("text", "") for f in plotly_figures(at)]
    assert "visit (datetime)" in titles and "income (continuous)" in titles and "region (categorical)" in titles
    region = plotly_figures(at)[titles.index("region (categorical)")]["data"][0]
    assert "(missing)" in list(region["x"])                      # missing values as their own bar
    at.switch_page("pages/use.py").run()
    ok(at)
    private = ds.decode(ds.X)
    reg = frame_of(at, "region", "estimated proportion")
    assert reg.loc["(missing)", "true proportion"] == pytest.approx(private["region"].isna().mean())
    mom = frame_of(at, "column", "estimated SD")
    assert mom.loc["age", "true mean"] == pytest.approx(private["age"].mean())


def test_the_upload_and_its_schema_survive_leaving_the_page(uploaded):
    at = uploaded
    src = upload_key(at)
    at = edit(at, src, {"age": {"lower": "18", "upper": "99", "declared": True}})
    ok(at)
    at.switch_page("pages/release.py").run()
    at.switch_page("pages/data.py").run()
    ok(at)
    assert at.session_state[S.UPLOAD]["hash"] in src
    schema = candidate(at).schema
    assert (schema["age"].lower, schema["age"].upper) == (18, 99) and "age" not in schema.data_dependent


def test_text_in_a_numeric_column_is_an_error_naming_it():
    at = upload(new_app().run(), mixed_csv(bad_income="lots"))
    src = upload_key(at)
    state = at.session_state[state_key(src)]
    assert "income" in state["excluded"]              # text among numbers: too many distinct values for categories
    assert any("'income' was not suggested" in c.value for c in at.caption)
    at = load_schema_file(at, src, MIXED_SCHEMA)                              # declared continuous
    assert not at.exception
    assert "income" in errors(at) and "lots" in errors(at)
    assert candidate(at) is None


def test_private_discovery_is_charged_to_the_ledger_and_declares_the_values():
    # 600 rows: every region has ~125 private rows, far above the threshold τ ≈ 32 of ε = 1, δ = 1e-6 (noise σ ≈ 6)
    at = upload(new_app().run(), mixed_csv(600))
    src = upload_key(at)
    at.multiselect(key=f"data.disc_cols.{src}").set_value(["age", "region"]).run()
    at.select_slider(key="data.disc_eps").set_value(1.0).run()
    at.text_input(key=f"data.disc_lo.{src}.age").set_value("0").run()
    at.text_input(key=f"data.disc_hi.{src}.age").set_value("120").run()
    at.button(key=f"data.disc_go.{src}").click().run()
    ok(at)
    led = at.session_state[S.LEDGERS][src]
    assert [c.mechanism for c in led.charges] == ["exponential", "approx-dp"]
    assert all(c.details.get("parts") == (S.PART_PRIVATE,) for c in led.charges)
    schema = candidate(at).schema
    # the released bounds and categories are public now, but the rest of each row (its kind, read from the
    # dtype the CSV reader inferred from the private cells; its missing-value policy) is not: the rows stay
    # undeclared until the owner confirms them from public knowledge (review finding C4)
    assert "age" in schema.data_dependent and "region" in schema.data_dependent
    at = edit(at, src, {"age": {"declared": True}, "region": {"declared": True}})
    schema = candidate(at).schema
    assert "age" not in schema.data_dependent and "region" not in schema.data_dependent
    # DP quantiles (1 %, 99 %) of ages uniform on 18-89: an output below 45 / above 60 has ≥ 100 rows on the wrong
    # side, probability < e^-20 under the exponential mechanism at ε/2 = 0.5 per quantile
    assert 0 <= schema["age"].lower < 45 and 60 < schema["age"].upper <= 120
    assert set(schema["region"].categories) == {"east", "north", "south", "west"}
    assert any("charged to the ledger" in c.value for c in at.caption)


def test_the_coarse_range_of_a_discovery_is_never_prefilled_from_the_private_rows():
    """Review finding C3: the coarse range was pre-filled from a suggestion read off the private rows, so the
    private quantile search depended on the private maximum (infinite ε); a declared row may pre-fill it."""
    at = upload(new_app().run(), mixed_csv())
    src = upload_key(at)
    assert "age" in candidate(at).schema.data_dependent
    at.multiselect(key=f"data.disc_cols.{src}").set_value(["age"]).run()
    assert at.text_input(key=f"data.disc_lo.{src}.age").value == ""
    assert at.text_input(key=f"data.disc_hi.{src}.age").value == ""


def test_dates_for_private_discovery_are_read_cell_by_cell_with_the_declared_format():
    """Review finding C2: pandas guessed one date format from the first cell of the private column, so one row
    could change how every other row's date was read (or drop them all as unreadable)."""
    first = pd.Series(["13/04/2020"] + ["2020-04-03"] * 5)
    other = pd.Series(["2020-04-13"] + ["2020-04-03"] * 5)
    spec = SimpleNamespace(kind="datetime", date_format="ISO8601")
    a, b = T.as_numbers(first, "datetime", spec=spec), T.as_numbers(other, "datetime", spec=spec)
    assert np.isnan(a[0]) and np.array_equal(a[1:], b[1:]) and not np.isnan(a[1:]).any()


# ---------------------------------------------------------------------- mechanisms and the Kernel page
def test_mechanisms_on_a_table_stay_in_the_domain_or_explain_why_not():
    from ui.mechanisms import REGISTRY
    from ui.mechanisms.spec import RunContext

    spec = {"source": "sample", "sample": "penguins", "schema": load_schema("penguins").to_dict(),
            "public_fraction": 0.1, "public_declared": True, "heldout_fraction": 0.1, "split_seed": 0}
    ds = D.build_dataset(spec)
    assert ds.n_public == 34 and ds.schema.domain.contains(ds.public).all()
    for key in ("clusterwise", "gp"):
        assert "mixed tables" in REGISTRY[key].requires(ds)
    for key in ("baseline", "alg1-public", "alg1-q", "alg2", "exponential"):
        assert REGISTRY[key].requires(ds) is None
    ctx = RunContext(ds=ds, kernel=ds.schema.kernel(), epsilon=1.0, delta=1e-6, calibration="analytic",
                     sensitivity_mode="tight", random_state=3, noise_source="seeded")
    rel = REGISTRY["alg1-q"].run(ctx, {"n_points": 50, "domain": True, "basis": "full", "weights": "simplex"})
    assert rel.n_points == 50 and ds.schema.domain.contains(rel.points).all()
    from ui.mechanisms.exponential import _exp_candidates

    G = _exp_candidates(ds, "domain", 1, 20)
    assert G.shape == (20, ds.dim) and ds.schema.domain.contains(G).all()


def test_the_kernel_page_says_where_the_per_column_scales_are():
    at = use(schema_mode(new_app().run()))
    at.switch_page("pages/kernel.py").run()
    ok(at)
    assert any("declared **in the schema**" in i.value for i in at.info)


# ---------------------------------------------------------------------- the browser
@pytest.mark.browser
@pytest.mark.slow
def test_browser_penguins_schema_release_marginals_and_synthetic_rows(app_page, nav, expect_rerun,
                                                                      assert_no_exception):
    from playwright.sync_api import expect

    from tests.support.browser import click_button, main, pick_radio

    page = app_page
    page.set_viewport_size({"width": 1400, "height": 900})
    nav(page, "Data")
    pick_radio(page, "Bundled real data", expect_rerun)
    main(page).get_by_test_id("stSelectbox").first.click()
    with expect_rerun(page):
        page.get_by_role("option", name=re.compile("Palmer penguins")).click()
    pick_radio(page, "Mixed table with a declared schema", expect_rerun)
    expect(main(page).get_by_text("Schema: what every column may hold")).to_be_visible()
    expect(main(page).get_by_test_id("stDataFrame").first).to_be_visible()
    assert_no_exception(page)
    click_button(page, "Use this dataset", expect_rerun)
    expect(main(page).get_by_text(re.compile(r"In use: Palmer penguins.*declared schema"))).to_be_visible()

    nav(page, "Release")
    click_button(page, "Release", expect_rerun)     # the default for a table: the adaptive release, in the background
    expect(main(page).get_by_text("Private vs released, column by column — owner's view")).to_be_visible(
        timeout=240_000)
    charts = main(page).get_by_test_id("stPlotlyChart")
    expect(charts.filter(has_text="species (categorical)")).to_be_visible()
    expect(charts.filter(has_text="body_mass_g (continuous)")).to_be_visible()
    expect(charts.filter(has_text="Associations")).to_be_visible()
    assert_no_exception(page)

    with page.expect_download() as dl:
        main(page).get_by_test_id("stDownloadButton").filter(has_text="synthetic rows").get_by_role("button").click()
    rows = pd.read_csv(Path(dl.value.path()))
    assert dl.value.suggested_filename.endswith("_rows.csv")
    schema = load_schema("penguins")
    assert list(rows.columns) == list(schema.names) and len(rows) > 250
    in_declared_domain(rows, schema)
    with page.expect_download() as dl:
        main(page).get_by_test_id("stDownloadButton").filter(has_text="JSON").get_by_role("button").click()
    meta = json.loads(Path(dl.value.path()).read_text())
    assert meta["differentially_private"] is True and meta["seed"] is None and meta["schema"] == schema.to_dict()


@pytest.mark.parametrize("name", ["penguins", "seattle_weather"])
def test_the_editor_rows_of_a_bundled_schema_give_it_back(name):
    """Editor rows -> schema is the identity on the bundled declarations (fields the editor hides included)."""
    from dpkme.datasets import load_sample

    schema = load_schema(name)
    frame, _ = load_sample(name)
    rows = T.editor_frame(schema, frame.columns)
    assert list(rows.columns) == list(T.EDITOR_COLUMNS) and rows["use"].sum() == len(schema.columns)
    assert T.schema_from_editor(rows, original=schema) == schema
    assert T.schema_from_json_bytes(T.schema_json_bytes(schema)) == schema


def test_every_private_computation_on_a_data_dependent_schema_says_it_is_not_private(uploaded):
    """The one guard (ui.noise.privacy_problems) covers the schema: the two-sample page flagged nothing before."""
    at = uploaded
    assert candidate(at).schema.data_dependent
    use(at)
    at.switch_page("pages/release.py").run()
    at.selectbox(key=S.MECHANISM).set_value("alg2").run()   # Algorithm 2 (a table's default: adaptive)
    at.button(key="rel.go").click().run()
    assert not at.exception
    at.switch_page("pages/twosample.py").run()
    assert not at.exception
    assert "read from the private rows" in errors(at)


def test_a_date_format_read_from_the_private_rows_is_not_declared_by_ticking_the_row():
    """Review finding C1: the editor does not show every field; one it did not show (the date format, picked by
    looking at the private cells) was silently declared with the row, and published in a 'private' release."""
    from dpkme.schema import ColumnSpec, TableSchema

    original = TableSchema([ColumnSpec("visit", "datetime", lower="2020-01-01", upper="2022-12-31",
                                       date_format="%d/%m/%Y")],
                           data_dependent={"visit": ["kind", "lower", "upper", "date_format"]})
    rows = T.editor_frame(original, ["visit"], data_dependent=original.data_dependent)
    assert "date_format" in rows.columns and rows.loc[0, "date_format"] == "%d/%m/%Y"
    rows.loc[0, "declared"] = True                 # the owner declares the row he sees
    declared = T.schema_from_editor(rows, original=original)
    assert declared["visit"].date_format == "%d/%m/%Y"                                   # shown, so declared ...
    # ... but a tick alone does not declare the bounds read off the private rows (issue 24, finding 6a)
    assert set(dict(declared.data_dependent_fields)["visit"]) == {"lower", "upper"}
    hidden = rows.drop(columns=["date_format"])    # an editor that does not show the field ...
    still = T.schema_from_editor(hidden, original=original)
    assert still.data_dependent_fields == {"visit": frozenset({"date_format", "lower", "upper"})}   # ... keeps its flag


def test_suggestions_from_a_publishable_subset_are_undeclared_when_that_subset_changes(uploaded):
    """Review finding M1: suggestions read from publishable rows stayed 'declared' after the subset was changed
    to rows that are private now (e.g. back to 0 %), so a rare category of a now-private row was published."""
    at = uploaded
    src = upload_key(at)
    at.slider(key="data.public_pct").set_value(20.0).run()
    at.checkbox(key="data.public_declared").check().run()
    at.button(key=f"data.schema_reset.{src}").click().run()          # suggestions from the publishable rows
    ok(at)
    assert not candidate(at).schema.data_dependent
    at.slider(key="data.public_pct").set_value(0.0).run()
    assert not at.exception
    assert set(candidate(at).schema.data_dependent) == set(candidate(at).schema.names)
    assert "re-declare" in " ".join(c.value for c in at.caption) or "declare each row again" in " ".join(
        c.value for c in at.caption)


def test_a_private_discovery_locks_the_publishable_subset_and_is_charged_first():
    """Review finding M2: a first discovery did not lock the publishable subset (rows it read as private could
    then be published) and was charged only after the rows were read."""
    at = upload(new_app().run(), mixed_csv(600))
    src = upload_key(at)
    at.multiselect(key=f"data.disc_cols.{src}").set_value(["region"]).run()
    at.select_slider(key="data.disc_eps").set_value(1.0).run()
    at.button(key=f"data.disc_go.{src}").click().run()
    ok(at)
    assert src in at.session_state[S.LOCKED_PUBLIC]
    at.slider(key="data.public_pct").set_value(10.0).run()
    at.checkbox(key="data.public_declared").check().run()
    assert "cannot be used" in errors(at) or "locked" in errors(at).lower()


# ---------------------------------------------------------------------- issue 16 walk: findings 6, 10 and 11
def test_the_release_banner_of_a_table_shows_algorithm_2s_sensitivity_and_the_recorded_sigma(released):
    """Finding 6: the banner said Δ = √2/N while the table's default, Algorithm 2, uses 2/N (JSON σ 0.0273)."""
    at = released
    at.switch_page("pages/release.py").run()           # the fixture is shared: another test may have left the page
    ok(at)
    ds = at.session_state[S.DATASET]
    rec = at.session_state[S.RELEASES][-1]
    banner = next(i.value for i in at.info if i.value.startswith("Kernel **"))
    meta = json.loads(E.table_json(rec, ds))
    assert "Algorithm 2" in banner and "Δ = 2/N" in banner and "√2" not in banner
    assert f"σ = {rec.release.sigma:.3g}" in banner
    assert meta["sigma"] == rec.release.sigma and meta["sensitivity"] == pytest.approx(2 / ds.n, rel=1e-12)


def test_true_counts_on_the_use_page_are_whole_numbers(released):
    """Finding 11: true counts were shown as "136.000"."""
    at = released
    at.switch_page("pages/use.py").run()
    ok(at)
    sp = frame_of(at, "species", "estimated proportion")
    assert pd.api.types.is_integer_dtype(sp["true count"])
    private = at.session_state[S.DATASET].decode(at.session_state[S.DATASET].X)
    assert sp["true count"].to_dict() == private["species"].value_counts().to_dict()


def test_released_dates_show_as_dates_and_booleans_say_how_they_come_back(uploaded):
    """Finding 11: the released table showed "2020-04-06 00:00:00" for a date. Finding 10: a boolean column
    comes back as True/False whatever the file wrote: the page says so and how to keep the file's labels."""
    at = load_schema_file(uploaded, upload_key(uploaded), MIXED_SCHEMA)
    use(at)
    at.switch_page("pages/release.py").run()
    at.selectbox(key=S.MECHANISM).set_value("alg2").run()   # Algorithm 2 (a table's default: adaptive)
    at.button(key="rel.go").click().run()
    ok(at)
    table = next(d for d in at.dataframe if "weight" in d.value.columns)
    config = json.loads(table.proto.columns)
    assert "visit" in config and "YYYY-MM-DD" in json.dumps(config["visit"]) and "HH" not in json.dumps(config["visit"])
    captions = " ".join(c.value for c in at.caption)
    assert "'smoker'" in captions and "True/False" in captions and "categorical" in captions


def test_the_kernel_page_writes_the_mixed_kernel_without_missing_glyphs():
    """Finding 11: "Π꜀ κ꜀^[x꜀ ≠ y꜀]" showed boxes for the subscript letters; the formula is LaTeX now."""
    at = use(schema_mode(new_app().run()))
    at.switch_page("pages/kernel.py").run()
    ok(at)
    info = next(i.value for i in at.info if "declared **in the schema**" in i.value)   # the additive kernel (default)
    assert not set(info) & set("꜀ⱼₙ"), info
    assert r"\sum_t w_t" in info
    at.radio(key=S.TABLE_KERNEL).set_value("product").run()                            # the product kernel
    ok(at)
    info = next(i.value for i in at.info if "declared **in the schema**" in i.value)
    assert not set(info) & set("꜀ⱼₙ"), info
    assert r"\prod_c \kappa_c^{[x_c \neq y_c]}" in info


def test_the_editor_shows_and_edits_the_levels_of_a_numeric_column():
    """Issue 15: a numeric column's declared levels (``values``) are a comma-separated cell of the editor."""
    from dpkme.schema import ColumnSpec, TableSchema

    schema = TableSchema([ColumnSpec("age", "continuous", lower=17.5, upper=42, values=[17.5, 22, 27, 32, 37, 42]),
                          ColumnSpec("kids", "integer", lower=0, upper=6)])
    rows = T.editor_frame(schema, ["age", "kids"])
    assert rows.loc[0, "values"] == "17.5, 22, 27, 32, 37, 42" and rows.loc[1, "values"] == ""
    assert T.schema_from_editor(rows, original=schema) == schema
    rows.loc[1, "values"] = "0, 1, 2, 3, 4, 6"
    edited = T.schema_from_editor(rows, original=schema)
    assert edited["kids"].values == (0, 1, 2, 3, 4, 6) and edited["age"].values == schema["age"].values
    rows.loc[0, "values"] = ""
    assert T.schema_from_editor(rows, original=schema)["age"].values is None
    rows.loc[1, "values"] = "0, one, 2"
    with pytest.raises(ValueError, match=r"column 'kids': the level 'one' in 'values' is not a number"):
        T.schema_from_editor(rows, original=schema)
    rows.loc[1, "values"] = "0, 9"
    with pytest.raises(ValueError, match=r"values \[9.0\] of column \"kids\" lie outside its declared bounds"):
        T.schema_from_editor(rows, original=schema)


def test_the_table_view_resamples_at_the_library_default_spread():
    """Issue 15: the owner's view and the downloads use TableRelease.default_spread unless another is chosen."""
    from ui import table_views as V

    tr = SimpleNamespace(default_spread=0.0123)
    assert V.SPREADS[0] == V.DEFAULT_SPREAD and V.spread_value(V.DEFAULT_SPREAD, tr) == 0.0123
    assert V.spread_value(0.5, tr) == 0.5 and V.spread_value(0.0, tr) == 0.0
