"""The adaptive KME table release (dpkme.release.adaptive): charge, composition, post-processing, validity, utility.

The releases here use small, public settings (few rounds, few synthetic rows and Adam steps) so that the
module stays fast; none of them changes the privacy analysis.
"""

from __future__ import annotations

import itertools
import math

import numpy as np
import pandas as pd
import pytest

from dpkme.datasets import load_sample, load_schema
from dpkme.release import adaptive
from dpkme.release.adaptive import adaptive_release, adaptive_release_charge, zcdp_epsilon, zcdp_rho

EPS, DELTA = 3.0, 1e-6
FAST = dict(synthetic_rows=300, round_steps=30, final_steps=200, rounds=14)


@pytest.fixture(scope="module")
def penguins():
    df, _ = load_sample("penguins")
    return df, load_schema("penguins")


@pytest.fixture(scope="module")
def release(penguins):
    df, schema = penguins
    return adaptive_release(df, schema=schema, epsilon=EPS, delta=DELTA, random_state=11, **FAST)


def test_charge_known_before_reading_rows_equals_the_results(penguins, release):
    df, schema = penguins
    before = adaptive_release_charge(schema=schema, n_private=len(df), epsilon=EPS, delta=DELTA, rounds=14)
    after = release.charge
    assert (after.mechanism, after.epsilon, after.delta, after.relation) == \
        (before.mechanism, before.epsilon, before.delta, before.relation) == ("approx-dp", EPS, DELTA, "replace-one")
    planned = {k: v for k, v in after.details.items() if k not in ("parts_itemised", "rho_spent")}
    assert planned == before.details
    assert release.metadata()["mechanism"] == "adaptive-kme"


def test_composition_is_within_epsilon_delta(penguins, release):
    df, _ = penguins
    N = len(df)
    parts = release.charge.details["parts_itemised"]
    rho_total = release.charge.details["rho"]
    # the parts, recomputed from the recorded noise (independently of the budget bookkeeping)
    meas = [r for r in release.rounds]
    rho_from_noise = 0.0
    for r in meas:
        l2 = math.sqrt(2.0) / N        # every query: nonnegative features summing to 1 (cells or landmarks)
        rho_from_noise += l2 ** 2 / (2.0 * r["sigma"] ** 2)
        if r["step"] == "select":
            rho_from_noise += r["epsilon_select"] ** 2 / 8.0
    assert rho_from_noise == pytest.approx(math.fsum(p["rho"] for p in parts), rel=1e-9)
    assert rho_from_noise <= rho_total * (1 + 1e-9)
    assert len([p for p in parts if p["part"] == "measure"]) == len(release.rounds)
    # closed form (Bun & Steinke) and an independent accountant: rho-zCDP is the RDP curve of a Gaussian
    # mechanism with noise multiplier 1/sqrt(2 rho)
    assert rho_from_noise + 2 * math.sqrt(rho_from_noise * math.log(1 / DELTA)) <= EPS * (1 + 1e-9)
    import dp_accounting

    acc = dp_accounting.rdp.RdpAccountant()
    acc.compose(dp_accounting.GaussianDpEvent(noise_multiplier=1.0 / math.sqrt(2.0 * rho_total)))
    assert acc.get_epsilon(DELTA) <= EPS


@pytest.mark.parametrize("eps,delta", [(0.1, 1e-9), (1.0, 1e-6), (3.0, 1e-6), (20.0, 1e-3)])
def test_zcdp_calibration_is_conservative_and_tight(eps, delta):
    rho = zcdp_rho(eps, delta)
    assert zcdp_epsilon(rho, delta) <= eps
    assert zcdp_epsilon(rho * (1 + 1e-6), delta) > eps


def test_post_processing_same_measurements_give_identical_rows(penguins, monkeypatch):
    df, schema = penguins
    settings = dict(schema=schema, epsilon=EPS, delta=DELTA, random_state=3, synthetic_rows=200, round_steps=20,
                    final_steps=60, rounds=12)
    rel_a = adaptive_release(df, **settings)
    other = df.sample(frac=1.0, random_state=0).reset_index(drop=True)     # a different private table
    other["species"] = "Gentoo"
    other["bill_length_mm"] = 30.0
    other["year"] = 2009
    recorded = list(rel_a.measurements)

    class Replay(adaptive._Oracle):
        """Answers with table A's privatised values, whatever rows it was given."""

        def __init__(self, true, rng):
            self.i = 0

        def select(self, model, biases, epsilon, sensitivity):
            return recorded[self.i]["candidate"]

        def measure(self, index, sigma):
            m = recorded[self.i]
            assert m["candidate"] == index and m["sigma"] == sigma
            self.i += 1
            return m["value"]

    monkeypatch.setattr(adaptive, "_Oracle", Replay)
    rel_b = adaptive_release(other, **settings)
    pd.testing.assert_frame_equal(rel_a.rows, rel_b.rows)
    assert rel_a.rounds == rel_b.rounds


def test_rows_are_valid_under_the_schema(penguins, release):
    _df, schema = penguins
    rows = release.rows
    assert list(rows.columns) == list(schema.names) and len(rows) == FAST["synthetic_rows"]
    for spec in schema.columns:
        col = rows[spec.name]
        if spec.is_numeric:
            lo, hi = spec.bounds
            present = col.dropna()
            assert present.between(lo, hi).all(), spec.name
            if spec.missing != "category":
                assert col.notna().all(), spec.name
            if spec.kind == "integer":
                assert (present == np.round(present)).all()
        else:
            assert {v for v in col if not pd.isna(v)} <= set(spec.categories), spec.name
            if spec.missing != "category":
                assert col.notna().all(), spec.name
    report = schema.encode_report(rows).to_frame()   # nothing unknown, clipped or rounded by the schema
    assert (report[["unknown", "clipped_low", "clipped_high", "rounded"]] == 0).all().all(), report
    more = release.sample(50, rng=1)
    assert list(more.columns) == list(schema.names) and len(more) == 50
    assert (more.dtypes == rows.dtypes).all()


def _tv(a: pd.Series, b: pd.Series) -> float:
    p = a.astype(object).where(a.notna(), "<NA>").value_counts(normalize=True)
    q = b.astype(object).where(b.notna(), "<NA>").value_counts(normalize=True)
    return 0.5 * float(p.subtract(q, fill_value=0.0).abs().sum())


def test_utility_on_penguins_beats_uniform(penguins, release):
    # At eps = 3 (rho ~ 0.15, 14 rounds) a column's first measurement has noise sigma ~ 0.04 per cell of the
    # normalised counts: expected TV from the noise ~ 0.5 * sqrt(2/pi) * 0.04 * 3 = 0.05 for 3 levels, plus the
    # sampling of 300 decoded rows (~0.03). 0.12 is a loose bound; uniform rows are at 0.12-0.3.
    df, schema = penguins
    cats = [s.name for s in schema.columns if not s.is_numeric]
    tv = {c: _tv(df[c], release.rows[c]) for c in cats}
    rng = np.random.default_rng(0)
    uniform = {}
    for c in cats:
        levels = list(schema[c].levels)
        uniform[c] = _tv(df[c], pd.Series([levels[i] for i in rng.integers(0, len(levels), 5000)]))
    assert np.mean(list(tv.values())) < 0.12, tv
    assert np.mean(list(tv.values())) < 0.5 * np.mean(list(uniform.values())), (tv, uniform)
    # a continuous column: the median within a tenth of the declared range
    lo, hi = schema["flipper_length_mm"].bounds
    assert abs(release.rows["flipper_length_mm"].median() - df["flipper_length_mm"].median()) < 0.1 * (hi - lo)


def test_metadata_and_json(release):
    import json

    from dpkme.privacy.result import PrivateResult

    assert isinstance(release, PrivateResult)
    meta = json.loads(release.to_json())
    assert meta["charge"]["epsilon"] == EPS and "id" not in meta["charge"] and "created" not in meta["charge"]
    assert meta["epsilon"] == EPS and meta["delta"] == DELTA and meta["neighbouring"] == "replace-one"
    assert meta["rounds"][0]["step"] == "initial" and all("rho_measure" in r for r in meta["rounds"])
    assert meta["seed"] == 11 and meta["differentially_private"] is False     # a seeded demo says so


@pytest.mark.parametrize("kwargs,match", [
    (dict(epsilon=0.0), "epsilon"),
    (dict(epsilon=-1.0), "epsilon"),
    (dict(delta=0.0), "delta"),
    (dict(schema=None), "schema"),
    (dict(schema="penguins"), "schema"),
    (dict(rounds=3), "rounds=3"),
    (dict(workload=[("species", "nope")]), "nope"),
    (dict(neighbouring="add-remove"), "n_private"),
])
def test_bad_input_raises_value_error_naming_it(penguins, kwargs, match):
    df, schema = penguins
    args = dict(schema=schema, epsilon=1.0, delta=1e-6, random_state=0)
    args.update(kwargs)
    with pytest.raises(ValueError, match=match):
        adaptive_release(df, **args)


def test_real_release_under_add_remove_has_no_seed_and_is_private():
    from dpkme.schema import ColumnSpec, TableSchema

    schema = TableSchema([ColumnSpec("age", "integer", lower=18, upper=90),
                          ColumnSpec("smoker", "boolean")])
    df = pd.DataFrame({"age": [25, 40, 61, 33] * 50, "smoker": [True, False, False, True] * 50})
    rel = adaptive_release(df, schema=schema, epsilon=1.0, delta=1e-6, neighbouring="add-remove", n_private=200,
                           synthetic_rows=100, round_steps=5, final_steps=10, rounds=3)
    meta = rel.metadata()
    assert "seed" not in meta and "seed_warning" not in meta and meta["differentially_private"] is True
    assert rel.charge.relation.value == "add-remove" and meta["n_private"] == 200
    assert rel.rows["age"].between(18, 90).all() and len(rel.rows) == 100


def test_every_query_has_the_stated_sensitivity(penguins):
    # phi_r(x) is nonnegative and sums to 1 for every row, so two rows' features differ by at most sqrt(2) in L2
    # and 2 in L1 (the module docstring's table, times N); checked on all pairs of 60 real rows
    import itertools

    from dpkme.release.fit import RelaxedDomain

    df, schema = penguins
    dom = RelaxedDomain(schema, (32, 16, 6))
    states = dom.hard_states(schema.encode(df.iloc[:60]))
    for sub in [(2,), (0, 3), (2, 4), (0, 2, 6), (2, 3, 4)]:
        feats = [dom.hard_features(states, j, len(sub)) for j in sub]
        phi = feats[0]
        for f in feats[1:]:
            phi = (phi[:, :, None] * f[:, None, :]).reshape(phi.shape[0], -1)
        assert phi.shape[1] == dom.query_size(sub)
        assert (phi >= 0).all() and np.allclose(phi.sum(axis=1), 1.0, atol=1e-12)
        for a, b in itertools.combinations(range(len(phi)), 2):
            d = phi[a] - phi[b]
            assert np.sqrt(d @ d) <= math.sqrt(2.0) + 1e-12 and np.abs(d).sum() <= 2.0 + 1e-12


def test_private_pass_in_blocks_equals_one_pass(penguins, monkeypatch):
    # memory bounded in N: the rows are read in blocks; the true answers must not depend on the block size
    df, schema = penguins
    seen = []

    class Capture(adaptive._Oracle):
        def __init__(self, true, rng):
            seen.append([np.array(t) for t in true])
            super().__init__(true, rng)

    monkeypatch.setattr(adaptive, "_Oracle", Capture)
    settings = dict(schema=schema, epsilon=EPS, delta=DELTA, random_state=5, synthetic_rows=50, round_steps=1,
                    final_steps=1, rounds=9)
    adaptive_release(df, **settings)
    monkeypatch.setattr(adaptive, "BLOCK_ROWS", 37)
    adaptive_release(df, **settings)
    assert len(seen) == 2 and len(seen[0]) == len(seen[1])
    for a, b in zip(*seen):
        np.testing.assert_allclose(a, b, rtol=0, atol=1e-12)        # float64 sums of <= 344 terms in [0, 1]
    # every answer is a probability vector (features sum to 1 per row)
    assert all(abs(t.sum() - 1.0) < 1e-12 and (t >= 0).all() for t in seen[0])


def test_relaxed_answers_match_the_data_side_for_hard_rows(penguins):
    # the fit's (JAX, float32) features equal the data side's (numpy, float64) for rows whose relaxed state is
    # a point: a relaxed table set to real rows answers like those rows, within float32 precision
    from dpkme.release.fit import RelaxedDomain, RelaxedFit

    df, schema = penguins
    sub_df = df.iloc[:40].reset_index(drop=True)
    dom = RelaxedDomain(schema, (12, 5, 4))
    states = dom.hard_states(schema.encode(sub_df))
    fit = RelaxedFit(dom, len(sub_df), np.random.default_rng(0), slots3=1)
    for j, (col, st) in enumerate(zip(dom.columns, states)):
        if col.discrete:
            a = fit.disc.index(j)
            fit.params["L"][:, a, :col.n_levels] = np.where(np.eye(col.n_levels)[st[1]] > 0, 30.0, -30.0)
        else:
            b = fit.cont.index(j)
            fit.params["U"][:, b] = np.arcsin(2.0 * np.clip(st[1], 0.0, 1.0) - 1.0)
            if col.has_missing:
                fit.params["M"][:, b] = np.where(np.asarray(st[2])[:, None], [-30.0, 30.0], [30.0, -30.0])
    subsets = [(0,), (2,), (0, 2), (2, 3), (0, 2, 3), (2, 3, 4)]
    fit.add((0,), np.zeros(3), 1.0)                  # something to fit; 0 steps leave the rows as set
    fit.fit(0)
    sums = [np.zeros(dom.query_size(s)) for s in subsets]
    dom.accumulate(states, subsets, sums)
    for s, mine, true in zip(subsets, fit.answers(subsets), sums):
        np.testing.assert_allclose(mine, true / len(sub_df), atol=2e-5, err_msg=str(s))


def test_landmark_rule_is_public_and_bounded():
    from dpkme.release.adaptive import default_landmarks
    from dpkme.release.fit import LANDMARKS, RelaxedDomain

    assert default_landmarks(1e-9) == tuple(LANDMARKS)
    assert default_landmarks(10.0) == (3, 3, 3)
    m = [default_landmarks(s) for s in (0.2, 0.05, 0.01, 0.002)]
    assert all(a <= b for x, y in itertools.pairwise(m) for a, b in zip(x, y))     # less noise, finer features
    with pytest.raises(ValueError, match="landmarks"):
        RelaxedDomain(load_schema("penguins"), (32, 1, 8))


def test_a_stream_of_chunks_gives_the_true_answers_of_the_frame(penguins, monkeypatch):
    # bounded memory in N: an iterator of DataFrame chunks (pandas.read_csv(chunksize=...)) is read once, and
    # its true answers equal the whole frame's; N is declared up front (the charge is fixed before reading)
    df, schema = penguins
    seen = []

    class Capture(adaptive._Oracle):
        def __init__(self, true, rng):
            seen.append([np.array(t) for t in true])
            super().__init__(true, rng)

    monkeypatch.setattr(adaptive, "_Oracle", Capture)
    settings = dict(schema=schema, epsilon=EPS, delta=DELTA, random_state=5, synthetic_rows=50, round_steps=1,
                    final_steps=1, rounds=9)
    a = adaptive_release(df, **settings)
    b = adaptive_release((df.iloc[i:i + 100] for i in range(0, len(df), 100)), n_private=len(df), **settings)
    for x, y in zip(*seen):
        np.testing.assert_allclose(x, y, rtol=0, atol=1e-12)
    assert b.charge.epsilon == a.charge.epsilon and b.n_private == len(df)
    with pytest.raises(ValueError, match="n_private is required"):
        adaptive_release(iter([df]), **settings)
    with pytest.raises(ValueError, match="chunks held 344 rows"):
        adaptive_release(iter([df]), n_private=400, **settings)
    with pytest.raises(ValueError, match="DataFrames"):
        adaptive_release(iter([df.to_numpy()]), n_private=len(df), **settings)


def test_persistent_compilation_cache_is_private_and_can_be_turned_off(tmp_path, monkeypatch):
    from dpkme.release import fit

    monkeypatch.setattr(fit, "_configured_cache_dir", lambda: None)       # as in a process that set none
    calls = []
    import jax.experimental.compilation_cache.compilation_cache as cc

    monkeypatch.setattr(cc, "set_cache_dir", lambda path: calls.append(path))
    monkeypatch.setattr(cc, "reset_cache", lambda: None)
    for env, expected in (("off", None), (str(tmp_path / "c"), str(tmp_path / "c"))):
        fit.persistent_cache.cache_clear()
        monkeypatch.setenv(fit.CACHE_ENV, env)
        assert fit.persistent_cache() == expected
    assert calls == [str(tmp_path / "c")]
    assert (tmp_path / "c").stat().st_mode & 0o077 == 0                  # private to the user
    (tmp_path / "open").mkdir(mode=0o777)
    (tmp_path / "open").chmod(0o777)
    fit.persistent_cache.cache_clear()
    monkeypatch.setenv(fit.CACHE_ENV, str(tmp_path / "open"))
    assert fit.persistent_cache() is None                               # writable by others: not trusted
    fit.persistent_cache.cache_clear()
