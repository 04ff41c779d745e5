"""DP review of the adaptive KME table release (dpkme/release/adaptive.py, dpkme/release/fit.py).

Claims checked (each a test that holds; the review's three findings failed on the code it read and were fixed:
a caller's Generator is labelled not private (``noise_source``), under add-remove the empty table releases
like its one-row neighbour, and ``zcdp_rho`` keeps a 1e-12 margin so its conversion holds in exact arithmetic):

* every query's per-row feature vector is nonnegative and sums to 1 for *any* row the private pass can see
  (out-of-range and infinite numbers, missing values, undeclared categories, arbitrary finite embedded rows), so
  the L2 / L1 sensitivities of the docstring's table hold (replace-one sqrt2/N, 2/N; add-remove 1/N, 1/N);
* the noise and the selection the oracle *actually* uses (captured calls, not the log) add up, in exact
  arithmetic, to at most rho, and rho + 2 sqrt(rho ln 1/delta) <= epsilon, for every annealing pattern, number of
  rounds, relation and budget; the score sensitivity handed to the exponential mechanism is 2/N or 1/N;
* the selection's probabilities on neighbouring tables differ by at most e^{eps_t} (exact softmax), and the
  Gumbel report-noisy-max draws follow that softmax (seeded draws, measured distribution);
* the private data reach the output only through the oracle: with the oracle's answers replayed, two different
  tables (also N and N+1 rows under add-remove with a declared N) give the same JSON; landmarks, candidates,
  rounds and charge come from public inputs; a real release records no seed, no timing and uses fresh entropy.

The fit (JAX) is post-processing; most tests replace it by a tiny stand-in so the file stays fast (it never
touches the private rows: only the noisy measurements and public quantities reach it in either case).
"""

from __future__ import annotations

import itertools
import json
import math
from decimal import Decimal, getcontext
from fractions import Fraction

import numpy as np
import pandas as pd
import pytest

from dpkme.release import adaptive
from dpkme.release.adaptive import adaptive_release, adaptive_release_charge, zcdp_epsilon, zcdp_rho
from dpkme.release.fit import RelaxedDomain, kernel_features
from dpkme.schema import ColumnSpec, TableSchema
from tests.support.adaptive import FAST, _schema, _StubFit, _table


def _hostile() -> pd.DataFrame:
    """Rows no honest encoder input would hold: infinities, huge and out-of-range numbers, missing values,
    undeclared categories and a non-boolean in a boolean column."""
    return pd.DataFrame({
        "x": [np.inf, -np.inf, 1e308, np.nan, -5.0, 3.3, 10.0, 0.0],
        "c": ["a", "zz", None, "b", "c", 7, "a", "b"],
        "k": [-100, 100, np.nan, 2.6, 0, 5, 3, 1],
        "b": [True, False, None, True, "maybe", False, True, False],
        "y": [5, -5, 0.3, 0.999, -1, 1, 0.0, -0.5],
    })


def _row_features(dom: RelaxedDomain, Z: np.ndarray, subsets) -> list[np.ndarray]:
    """Per row and subset, phi_r(x) computed by the release's own private-pass code (accumulate over one row)."""
    out = []
    for i in range(Z.shape[0]):
        sums = [np.zeros(dom.query_size(s)) for s in subsets]
        dom.accumulate(dom.hard_states(Z[i:i + 1]), subsets, sums)
        out.append(sums)
    return out


@pytest.fixture()
def stub(monkeypatch):
    monkeypatch.setattr(adaptive, "RelaxedFit", _StubFit)
    monkeypatch.setattr(_StubFit, "mode", "always")
    return _StubFit


@pytest.fixture()
def capture(monkeypatch):
    """Record every call the release makes to the private oracle (what is really spent)."""
    calls: list[tuple] = []
    trues: list[list[np.ndarray]] = []

    class Capture(adaptive._Oracle):
        def __init__(self, true, rng):
            trues.append([np.array(t) for t in true])
            super().__init__(true, rng)

        def select(self, model, biases, epsilon, sensitivity):
            k = super().select(model, biases, epsilon, sensitivity)
            calls.append(("select", float(epsilon), float(sensitivity), k))
            return k

        def measure(self, index, sigma):
            calls.append(("measure", float(sigma), int(index)))
            return super().measure(index, sigma)

    monkeypatch.setattr(adaptive, "_Oracle", Capture)
    return calls, trues


# --------------------------------------------------------------------------- sensitivities
def test_every_feature_vector_sums_to_one_on_hostile_rows():
    # Claim (module docstrings): every phi_r(x) is nonnegative and sums to 1, whatever the row; clipping,
    # missing values and undeclared categories included, so the table of sensitivities holds.
    schema = _schema()
    Z = schema.encode(_hostile())
    for lm in [(32, 16, 6), (3, 3, 3), (7, 5, 4)]:
        dom = RelaxedDomain(schema, lm)
        subsets = [tuple(s) for k in (1, 2, 3) for s in itertools.combinations(range(len(schema)), k)]
        feats = _row_features(dom, Z, subsets)
        for i, row in enumerate(feats):
            for s, phi in zip(subsets, row):
                assert (phi >= 0).all() and abs(phi.sum() - 1.0) < 1e-12, (lm, i, s)
                tiny = phi[(phi > 0) & (phi < np.finfo(float).tiny)]
                assert tiny.size == 0, "subnormal features (a timing side channel in BLAS)"
        for a, b in itertools.combinations(range(len(feats)), 2):
            for _s, u, v in zip(subsets, feats[a], feats[b]):
                d = u - v
                assert math.sqrt(d @ d) <= math.sqrt(2.0) + 1e-12 and np.abs(d).sum() <= 2.0 + 1e-12
                assert math.sqrt(u @ u) <= 1.0 + 1e-12                 # add-remove: ||phi||_2 <= 1


def test_a_row_is_encoded_on_its_own():
    # The sensitivity argument needs phi(x) to depend on x alone: encoding a block of rows must give each row
    # the embedding it gets alone (no dtype or format inference across the rows of a block).
    schema = TableSchema([*_schema().columns, ColumnSpec("d", "datetime", lower="2000-01-01", upper="2020-12-31",
                                                         date_format="%Y-%m-%d", missing="category")])
    df = _hostile()
    df["d"] = ["2001-02-03", "1990-01-01", None, "2030-05-05", "NA", "2010-10-10", "2000-01-01", "2020-12-31"]
    Z = schema.encode(df)
    for i in range(len(df)):
        np.testing.assert_array_equal(Z[i], schema.encode(df.iloc[i:i + 1])[0])
    mixed = pd.DataFrame({"x": [1.5, "2.5"], "c": ["a", "b"], "k": [1, "4"], "b": [True, "False"],
                          "y": [0.1, "0.2"], "d": ["2001-01-01", "2002-02-02"]})
    Zm = schema.encode(mixed)
    for i in range(2):
        np.testing.assert_array_equal(Zm[i], schema.encode(mixed.iloc[i:i + 1])[0])


def test_arbitrary_finite_encoded_rows_are_clipped_into_the_domain():
    # The encoded-array entry point: any finite row (huge values, non one-hot groups) must still give
    # features in the simplex, since the release takes such arrays directly.
    schema = _schema()
    dom = RelaxedDomain(schema, (9, 5, 4))
    g = np.random.default_rng(0)
    Z = np.concatenate([g.normal(0, 1e6, (20, schema.dim)), g.uniform(-3, 3, (20, schema.dim)),
                        np.zeros((1, schema.dim)), np.full((1, schema.dim), -1e300)])
    subsets = [(0,), (1,), (2,), (4,), (0, 1), (0, 4), (1, 2, 3), (0, 1, 4)]
    for row in _row_features(dom, Z, subsets):
        for s, phi in zip(subsets, row):
            assert np.isfinite(phi).all() and (phi >= 0).all() and abs(phi.sum() - 1.0) < 1e-12, s


def test_kernel_features_never_subnormal_and_sum_to_one():
    z = np.concatenate([np.linspace(0, 1, 2001), [0.0, 1.0, 1e-300, 1 - 1e-16]])
    for m in (3, 4, 6, 16, 32):
        phi = kernel_features(z, m, np)
        assert (phi >= 0).all() and np.allclose(phi.sum(axis=1), 1.0, atol=1e-14, rtol=0)
        assert not ((phi > 0) & (phi < np.finfo(float).tiny)).any()


@pytest.mark.parametrize("neighbouring", ["replace-one", "add-remove"])
def test_true_answers_of_neighbours_differ_by_the_stated_sensitivity(stub, capture, neighbouring):
    # Through the real private pass (captured true answers of every candidate), on neighbouring tables with a
    # worst-case changed row.
    _, trues = capture
    schema = _schema()
    N = 8
    D = _hostile()
    if neighbouring == "replace-one":
        Dp = D.copy()
        Dp.iloc[0] = [0.0, "b", 5, None, 1.0]               # a row unlike the one it replaces
        tables, l2, l1 = (D, Dp), math.sqrt(2.0) / N, 2.0 / N
    else:
        Dp = D.iloc[:-1]                                      # one row removed; N declared
        tables, l2, l1 = (D, Dp), 1.0 / N, 1.0 / N
    for t in tables:
        adaptive_release(t, schema=schema, epsilon=2.0, delta=1e-6, random_state=1, neighbouring=neighbouring,
                         n_private=None if neighbouring == "replace-one" else N, **FAST)
    a, b = trues
    assert len(a) == len(b) and len(a) > len(schema)
    for u, v in zip(a, b):
        d = u - v
        assert math.sqrt(d @ d) <= l2 * (1 + 1e-9) and np.abs(d).sum() <= l1 * (1 + 1e-9)
    if neighbouring == "add-remove":                    # divided by the declared N, not the row count
        assert all(abs(t.sum() - (N - 1) / N) < 1e-12 for t in b)


# --------------------------------------------------------------------------- accounting
def _exact_conversion_ok(rho: Fraction, epsilon: float, delta: float) -> bool:
    getcontext().prec = 60
    r = Decimal(rho.numerator) / Decimal(rho.denominator)
    L = (Decimal(1) / Decimal(delta)).ln()
    return r + 2 * (r * L).sqrt() <= Decimal(epsilon)


@pytest.mark.parametrize("mode", ["always", "never", "random"])
@pytest.mark.parametrize("neighbouring", ["replace-one", "add-remove"])
def test_spent_rho_from_the_oracle_calls_is_within_budget(stub, capture, monkeypatch, mode, neighbouring):
    # What the oracle really receives (sigma of every measurement, epsilon and sensitivity of every selection),
    # recomputed with the true sensitivities and summed exactly, stays within rho for every annealing pattern,
    # rounds and budget; and the charge (known before reading rows) equals the one returned.
    calls, _ = capture
    monkeypatch.setattr(_StubFit, "mode", mode)
    schema = _schema()
    p = len(schema)
    N = 40
    Z = schema.encode(_table(N, 0))
    for eps, delta in [(0.05, 1e-9), (1.0, 1e-6), (8.0, 1e-5), (40.0, 1e-3)]:
        for T in (p + 1, p + 3, None, 4 * p + 1):
            calls.clear()
            before = adaptive_release_charge(schema=schema, n_private=N, epsilon=eps, delta=delta,
                                             neighbouring=neighbouring, rounds=T)
            rel = adaptive_release(Z, schema=schema, epsilon=eps, delta=delta, rounds=T, random_state=3,
                                   neighbouring=neighbouring, n_private=N, **FAST)
            l2 = (math.sqrt(2.0) if neighbouring == "replace-one" else 1.0) / N
            score = (2.0 if neighbouring == "replace-one" else 1.0) / N
            rho = Fraction(0)
            for c in calls:
                if c[0] == "measure":
                    rho += Fraction(l2) ** 2 / (2 * Fraction(c[1]) ** 2)
                else:
                    assert c[2] == pytest.approx(score, rel=1e-15)      # the score's sensitivity
                    rho += Fraction(c[1]) ** 2 / 8
            target = before.details["rho"]
            assert rho <= Fraction(target), (eps, delta, T, mode)
            assert _exact_conversion_ok(rho, eps, delta)
            assert float(rho) >= target * (1 - 1e-9)                    # the last round spends the rest
            assert float(rho) == pytest.approx(rel.charge.details["rho_spent"], rel=1e-12)
            n_meas = sum(c[0] == "measure" for c in calls)
            assert n_meas == len(rel.rounds) == len(rel.measurements) >= p + 1
            assert [c[1] for c in calls if c[0] == "measure"] == [r["sigma"] for r in rel.rounds]
            after = rel.charge
            assert (after.epsilon, after.delta, after.mechanism) == (before.epsilon, before.delta, before.mechanism)
            assert {k: v for k, v in after.details.items() if k not in ("parts_itemised", "rho_spent")} \
                == before.details


@pytest.mark.parametrize("eps,delta", [(1e-3, 1e-12), (0.1, 1e-9), (3.0, 0.5), (1e3, 1e-6)])
def test_zcdp_rho_float_conversion_is_conservative_and_tight(eps, delta):
    rho = zcdp_rho(eps, delta)
    assert zcdp_epsilon(rho, delta) <= eps
    assert zcdp_epsilon(rho * (1 + 1e-9), delta) > eps              # and not wastefully low
    # the release itself spends at most rho * (1 - 1e-12): exact conversion of that is within epsilon
    assert _exact_conversion_ok(Fraction(rho) * (1 - Fraction(1, 10 ** 12)), eps, delta)


def test_zcdp_rho_is_conservative_in_exact_arithmetic():
    pairs = [(e, d) for e in (0.01, 0.1, 0.3, 0.5, 1, 2, 3, 5, 8, 10, 20)
             for d in (1e-3, 1e-5, 1e-6, 1e-8, 1e-9, 1e-12)]
    bad = [(e, d) for e, d in pairs if not _exact_conversion_ok(Fraction(zcdp_rho(e, d)), e, d)]
    assert not bad


# --------------------------------------------------------------------------- selection and measurement
def test_selection_probabilities_of_neighbours_are_within_e_to_the_eps(stub, capture):
    # Exact softmax of the exponential mechanism on worst-case neighbours (replace-one), with a model that is
    # not the truth; and the Gumbel report-noisy-max has that softmax as its distribution (seeded draws).
    _, trues = capture
    schema = _schema()
    N = 8
    D = _hostile()
    Dp = D.copy()
    Dp.iloc[3] = [9.9, None, 0, False, -1.0]
    for t in (D, Dp):
        adaptive_release(t, schema=schema, epsilon=2.0, delta=1e-6, random_state=1, **FAST)
    a, b = trues
    g = np.random.default_rng(7)
    model = [np.abs(g.normal(0, 1, t.size)) / t.size for t in a]
    biases = np.array([0.01 * t.size ** 0.5 for t in a])
    sens = 2.0 / N
    for eps_t in (0.3, 1.0, 2.5):
        logp = []
        for true in (a, b):
            q = np.array([np.abs(t - m).sum() for t, m in zip(true, model)]) - biases
            s = eps_t * q / (2 * sens)
            logp.append(s - np.logaddexp.reduce(s))
        assert np.max(np.abs(logp[0] - logp[1])) <= eps_t + 1e-9
    # the Gumbel draw realises exactly the softmax
    eps_t = 1.0
    oracle = adaptive._Oracle(a, np.random.default_rng(2024))
    n = 6000
    ks = np.bincount([oracle.select(model, biases, eps_t, sens) for _ in range(n)], minlength=len(a))
    q = np.array([np.abs(t - m).sum() for t, m in zip(a, model)]) - biases
    s = eps_t * q / (2 * sens)
    p = np.exp(s - np.logaddexp.reduce(s))
    se = np.sqrt(p * (1 - p) / n)
    assert np.all(np.abs(ks / n - p) <= 5 * se + 2e-3)


def test_measurement_noise_is_gaussian_with_the_recorded_sigma():
    true = [np.array([0.25, 0.75, 0.0])]
    oracle = adaptive._Oracle(true, np.random.default_rng(5))
    sigma = 0.07
    y = np.stack([oracle.measure(0, sigma) for _ in range(20000)])
    assert np.allclose(y.mean(axis=0), true[0], atol=5 * sigma / math.sqrt(20000))
    assert np.allclose(y.std(axis=0), sigma, rtol=0.03)


# --------------------------------------------------------------------------- only privatised statistics reach out
@pytest.mark.parametrize("neighbouring", ["replace-one", "add-remove"])
def test_output_depends_on_rows_only_through_the_oracle(stub, monkeypatch, neighbouring):
    # Record what the oracle returned for one table, replay it for a different one: the whole JSON (landmarks,
    # candidates, rounds, sigma, charge, n_private) and the rows must be identical. Under add-remove the tables
    # have N and N + 1 rows with N declared.
    monkeypatch.setattr(_StubFit, "mode", "random")
    schema = _schema()
    N = 30
    record: list = []
    replay: list = []

    class Rec(adaptive._Oracle):
        def select(self, *a):
            k = super().select(*a)
            record.append(k)
            return k

        def measure(self, *a):
            y = super().measure(*a)
            record.append(y)
            return y

    class Rep(adaptive._Oracle):
        def select(self, *a):
            return replay.pop(0)

        def measure(self, *a):
            return replay.pop(0)

    other = _table(N + (neighbouring == "add-remove"), 99)
    kw = dict(schema=schema, epsilon=1.5, delta=1e-6, random_state=4, neighbouring=neighbouring,
              n_private=N if neighbouring == "add-remove" else None, **FAST)
    monkeypatch.setattr(adaptive, "_Oracle", Rec)
    r1 = adaptive_release(_table(N, 1), **kw)
    replay[:] = record
    monkeypatch.setattr(adaptive, "_Oracle", Rep)
    r2 = adaptive_release(other, **kw)
    assert not replay
    assert r1.to_json() == r2.to_json()
    pd.testing.assert_frame_equal(r1.rows, r2.rows)
    assert r2.metadata()["n_private"] == N


def test_real_release_has_fresh_entropy_no_seed_and_no_timing(stub, monkeypatch):
    schema = _schema()
    seen = []
    orig = adaptive.spawn_streams

    def spy(rng, n, *, fresh=False):
        seen.append(fresh)
        return orig(rng, n, fresh=fresh)

    monkeypatch.setattr(adaptive, "spawn_streams", spy)
    Z = schema.encode(_table(30, 2))
    rel = adaptive_release(Z, schema=schema, epsilon=1.0, delta=1e-6, **FAST)
    assert seen == [True]
    meta = rel.metadata()
    text = json.dumps(meta, default=str).lower()
    assert rel.seed is None and "seed" not in text and meta["differentially_private"] is True
    for word in ("time", "second", "elapsed", "duration"):
        assert word not in text
    # a seeded demo replays and says it is not private
    demo = adaptive_release(Z, schema=schema, epsilon=1.0, delta=1e-6, random_state=5, **FAST)
    assert seen == [True, False]
    dm = demo.metadata()
    assert dm["differentially_private"] is False and dm["seed"] == 5 and "seed_warning" in dm
    zero = adaptive_release(Z, schema=schema, epsilon=1.0, delta=1e-6, random_state=0, **FAST)   # 0 is a seed too
    assert zero.metadata()["differentially_private"] is False and zero.metadata()["seed"] == 0


def test_generator_random_state_is_not_labelled_private(stub, capture):
    _calls, _ = capture
    schema = _schema()
    Z = schema.encode(_table(30, 3))
    rels = []
    for _ in range(2):
        rels.append(adaptive_release(Z, schema=schema, epsilon=1.0, delta=1e-6,
                                     random_state=np.random.default_rng(0), **FAST))
    a, b = rels
    assert all(np.array_equal(u["value"], v["value"]) for u, v in zip(a.measurements, b.measurements))  # replayable
    assert a.differentially_private is False
    assert a.metadata()["differentially_private"] is False


@pytest.mark.parametrize("encoded", [False, True])
def test_add_remove_accepts_the_empty_neighbour(stub, encoded):
    schema = _schema()
    one = _table(1, 5)
    empty = one.iloc[:0]
    kw = dict(schema=schema, epsilon=1.0, delta=1e-6, neighbouring="add-remove", n_private=50, random_state=0,
              **FAST)
    adaptive_release(schema.encode(one) if encoded else one, **kw)            # the one-row neighbour releases
    rel = adaptive_release(np.zeros((0, schema.dim)) if encoded else empty, **kw)
    assert rel.metadata()["n_private"] == 50
