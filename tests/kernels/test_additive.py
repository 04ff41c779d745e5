"""The additive (sum) kernel on coordinate blocks and its table defaults (dpkme.kernels.additive, issue 15).

Brute force against the formula, the kernel's invariants (k(x, x) = a, 0 < k <= a, PSD Gram), its random
features (mixture spectral measure, unit norm), the KME sensitivity on neighbouring mixed tables, the JSON
round trip, and a table release with it (in the declared domain, same charge, audited private step).
"""

from __future__ import annotations

import itertools
import json
import math

import numpy as np
import pandas as pd
import pytest

import dpkme.audit.mechanisms as audit_mechanisms
from dpkme.audit import AuditSettings
from dpkme.audit.neighbours import rff_antipodal_pair
from dpkme.kernels import AdditiveKernel, GaussianKernel, RandomFourierFeatures, kernel_from_dict, table_kernel
from dpkme.kernels.additive import DEFAULT_GROUP_WEIGHTS
from dpkme.privacy.sensitivity import check_release_args, kme_sensitivity
from dpkme.release import Release
from dpkme.release.tabular import (
    DEFAULT_ADDITIVE_SPREAD,
    DEFAULT_SPREAD,
    DEFAULT_TABLE_KERNEL,
    SPREAD_PER_NOISE,
    _coordinate_units,
    release_table,
)
from dpkme.schema import ColumnSpec, TableSchema

RNG = np.random.default_rng(20261126)


def _kernel(amplitude=0.7):
    # overlapping blocks, a coordinate in three terms, unequal weights and scales
    return AdditiveKernel(dim=5, blocks=[[0], [1, 2], [2, 3, 4], [0, 1, 2, 3, 4], [4]],
                          weights=[1.0, 2.0, 0.5, 3.0, 1.5], scales=[2.5, 0.7, 1.3, 0.4, 6.0], amplitude=amplitude)


def _formula(kernel, P, Q):
    """k(p, q) = a sum_t w_t exp(-c_t^2 |p_S - q_S|^2 / 2), one pair at a time."""
    out = np.empty((P.shape[0], Q.shape[0]))
    for i, p in enumerate(P):
        for j, q in enumerate(Q):
            out[i, j] = kernel.amplitude * sum(
                w * math.exp(-0.5 * c * c * sum((p[d] - q[d]) ** 2 for d in b))
                for w, b, c in zip(kernel.weights, kernel.blocks, kernel.scales))
    return out


def _schema():
    return TableSchema([
        ColumnSpec("age", "integer", lower=18, upper=90),
        ColumnSpec("income", "continuous", lower=0, upper=200, missing="category"),
        ColumnSpec("smoker", "boolean"),
        ColumnSpec("region", "categorical", categories=["north", "south", "east", "west"]),
        ColumnSpec("visit", "datetime", lower="2020-01-01", upper="2020-12-31"),
    ])


def _table(n, rng):
    return pd.DataFrame({
        "age": rng.integers(18, 91, n),
        "income": np.where(rng.random(n) < 0.1, np.nan, rng.gamma(4.0, 12.0, n).clip(0, 200)),
        "smoker": rng.random(n) < 0.3,
        "region": rng.choice(["north", "south", "east", "west"], n, p=[0.4, 0.3, 0.2, 0.1]),
        "visit": pd.Timestamp("2020-01-01") + pd.to_timedelta(rng.integers(0, 366, n), unit="D"),
    })


# --------------------------------------------------------------------------- the kernel against its formula
def test_cross_equals_the_formula():
    k = _kernel()
    A, B = RNG.normal(size=(40, 5)) * 1.5, RNG.normal(size=(30, 5)) + 0.5
    # float64 exps of exactly computed squared distances: a few ulps per term
    np.testing.assert_allclose(k(A, B), _formula(k, A, B), rtol=1e-13, atol=1e-16)
    np.testing.assert_allclose(k.weights.sum(), 1.0, rtol=1e-15)


def test_gram_diagonal_bounds_and_psd():
    k = _kernel()
    Z = RNG.normal(size=(120, 5))
    K = k.gram(Z)
    assert np.array_equal(K, K.T) and np.all(np.diag(K) == k.amplitude)
    assert k.diag_value == k.amplitude and k.nonnegative
    assert K.min() > 0 and K.max() <= k.amplitude
    # PSD: eigenvalues >= -(rounding of a 120 x 120 matrix with entries <= 1)
    assert np.linalg.eigvalsh(K).min() >= -1e-12


def test_blocked_sums_match_the_dense_matrix():
    k = _kernel(amplitude=1.0)
    Z, X = RNG.normal(size=(70, 5)), RNG.normal(size=(3000, 5))  # 3000 columns: evaluated in row chunks
    K = _formula(k, Z[:5], X[:40])
    np.testing.assert_allclose(k(Z[:5], X[:40]), K, rtol=1e-13, atol=1e-16)
    dense = k.cross(Z, X)
    np.testing.assert_allclose(k.row_means(Z, X), dense.mean(axis=1), rtol=1e-12)
    np.testing.assert_allclose(k.mean_gram(Z, X), dense.mean(), rtol=1e-12)
    np.testing.assert_allclose(k.mean_gram(Z), k.gram(Z).mean(), rtol=1e-12)


def test_product_term_alone_is_the_gaussian_kernel():
    k = AdditiveKernel(dim=3, blocks=[[0, 1, 2]], scales=0.5)
    A = RNG.normal(size=(20, 3))
    np.testing.assert_allclose(k(A), GaussianKernel(lengthscale=2.0)(A), rtol=1e-13, atol=1e-16)


def test_lower_bound_on_box_is_the_minimum_over_the_box():
    k = _kernel()
    lo, hi = np.array([0.0, -1.0, 0.0, 0.5, -2.0]), np.array([1.0, 1.0, 0.3, 2.0, 0.0])
    bound = k.lower_bound_on_box(lo, hi)
    pts = RNG.uniform(lo, hi, size=(400, 5))
    assert k(pts, pts).min() >= bound - 1e-15
    assert k(lo[None], hi[None])[0, 0] == pytest.approx(bound, rel=1e-13)   # attained at opposite corners


# --------------------------------------------------------------------------- random features
def test_frequencies_come_from_the_mixture():
    k = _kernel()
    W = k.sample_frequencies(20000, 5, np.random.default_rng(0))
    support = [tuple(np.flatnonzero(row)) for row in W]
    counts = np.array([sum(s == b for s in support) for b in k.blocks])
    # each row is supported on one term's block; multinomial counts within 5 standard deviations
    assert counts.sum() == W.shape[0]
    sd = np.sqrt(W.shape[0] * k.weights * (1 - k.weights))
    assert np.all(np.abs(counts - W.shape[0] * k.weights) < 5 * sd)
    # the one-column term with scale 6 on coordinate 4: N(0, 36)
    col4 = W[[s == (4,) for s in support], 4]
    assert col4.std() == pytest.approx(6.0, rel=0.05)


@pytest.mark.parametrize("J", [400, 40000])
def test_random_features_approximate_the_kernel(J):
    """Unit-norm paired features; each entry is a mean of J/2 cosines in [-1, 1], so by Hoeffding and a union
    bound over the 820 distinct entries the error exceeds sqrt(4 ln(2 * 820 / 1e-6) / J) ~ 9.4/sqrt(J) with
    probability below 1e-6 (fixed seed)."""
    k = _kernel(amplitude=1.0)
    X = RNG.normal(size=(40, 5))
    feats = RandomFourierFeatures(k, n_components=J, random_state=1, dtype="float64").fit(5)
    F = feats.transform(X)
    np.testing.assert_allclose(np.linalg.norm(F, axis=1), 1.0, rtol=1e-12)
    err = np.abs(F @ F.T - k.gram(X)).max()
    assert err < math.sqrt(4 * math.log(2 * 820 / 1e-6) / J)


# --------------------------------------------------------------------------- privacy
def test_kme_sensitivity_by_brute_force_on_neighbouring_mixed_tables():
    schema = _schema()
    k = schema.kernel(kind="additive")
    N = 25
    D = schema.encode(_table(N, np.random.default_rng(3)))
    dom = schema.domain
    candidates = np.vstack([dom.sample(300, np.random.default_rng(4)), dom.lower[None], dom.upper[None]])
    candidates = dom.project(candidates)
    tight = kme_sensitivity(n=N, kernel=k)
    assert tight == pytest.approx(math.sqrt(2.0) / N) and tight <= 2.0 / N
    assert kme_sensitivity(n=N, kernel=k, mode="paper") == pytest.approx(2.0 / N)
    assert kme_sensitivity(n=N, kernel=k, neighbouring="add-remove") == pytest.approx(1.0 / N)
    worst = 0.0
    for i, z in itertools.product(range(0, N, 6), candidates[::7]):
        Dn = D.copy()
        Dn[i] = z
        # ||mu_D - mu_D'||^2 from the kernel sums of the two whole tables
        d2 = k.mean_gram(D) + k.mean_gram(Dn) - 2.0 * k.mean_gram(D, Dn)
        worst = max(worst, math.sqrt(max(d2, 0.0)))
    assert 0 < worst <= tight * (1 + 1e-9)
    # add-remove with the public N: the change is k(x, .)/N of norm sqrt(k(x, x))/N = 1/N
    Dp = np.vstack([D, candidates[:1]])
    d2 = (Dp.shape[0] ** 2 * k.mean_gram(Dp) + N**2 * k.mean_gram(D) - 2 * N * Dp.shape[0] * k.mean_gram(D, Dp)) / N**2
    assert math.sqrt(d2) == pytest.approx(1.0 / N, rel=1e-9)
    # on the declared (embedded) box: the exact minimum of the kernel there
    box = (dom.lower, dom.upper)
    assert kme_sensitivity(n=N, kernel=k, domain=box) >= worst * (1 - 1e-12)


def test_release_preconditions_and_refusals():
    k = _kernel(amplitude=1.0)
    assert check_release_args(k, 1.0, 1e-6, calibration="analytic", neighbouring="replace-one") == (1.0, 1e-6)
    with pytest.raises(ValueError, match="k\\(x, x\\) <= 1"):
        check_release_args(_kernel(amplitude=1.5), 1.0, 1e-6, calibration="analytic", neighbouring="replace-one")
    with pytest.raises(ValueError, match="not a function of the distance"):
        k.value_at_distance(1.0)
    with pytest.raises(ValueError, match="5-dimensional"):
        k(np.zeros((2, 4)))
    with pytest.raises(ValueError, match="dim=3"):
        k.sample_frequencies(10, 3, np.random.default_rng(0))
    with pytest.raises(ValueError, match="belong to no term"):
        AdditiveKernel(dim=3, blocks=[[0], [1]])
    with pytest.raises(ValueError, match=r"outside 0..2"):
        AdditiveKernel(dim=3, blocks=[[0, 3]])
    with pytest.raises(ValueError, match="weights\\[1\\]"):
        AdditiveKernel(dim=2, blocks=[[0], [1]], weights=[1.0, -1.0])
    with pytest.raises(ValueError, match="2 entries but there are 3 terms"):
        AdditiveKernel(dim=2, blocks=[[0], [1], [0, 1]], scales=[1.0, 2.0])


# --------------------------------------------------------------------------- serialisation
def test_json_round_trip():
    for k in (_kernel(), _schema().kernel(kind="additive")):
        back = kernel_from_dict(json.loads(json.dumps(k.to_dict())))
        assert back == k and hash(back) == hash(k)
        A = RNG.normal(size=(6, k.dim))
        assert np.array_equal(back(A), k(A))


# --------------------------------------------------------------------------- table defaults
def test_table_kernel_terms_follow_the_public_rule():
    schema = _schema()
    p, dom = len(schema), schema.domain
    k = table_kernel(schema, column_resolution=0.1, pair_resolution=0.25)
    assert k.dim == schema.dim and k.n_terms == p + p * (p - 1) // 2 + 1
    base = math.sqrt(p / 6.0)
    assert k.scales[0] == pytest.approx(base / 0.1) and k.scales[p] == pytest.approx(base / 0.25)
    assert k.scales[-1] == 1.0 and k.blocks[-1] == tuple(range(schema.dim))
    assert k.blocks[1] == tuple(range(dom.blocks["income"].start, dom.blocks["income"].stop))
    np.testing.assert_allclose([k.weights[:p].sum(), k.weights[p:-1].sum(), k.weights[-1]], DEFAULT_GROUP_WEIGHTS)
    np.testing.assert_allclose(k.weights[:p], DEFAULT_GROUP_WEIGHTS[0] / p)          # split evenly in the group
    # a continuous column at its default scale has length scale f = 0.1 of its range in its own term
    enc = schema.encode(pd.DataFrame({"age": [30, 30], "income": [50.0, 70.0], "smoker": [True, True],
                                      "region": ["north", "north"], "visit": ["2020-03-01"] * 2}))
    def term(t, x, y):
        d = x[list(k.blocks[t])] - y[list(k.blocks[t])]
        return math.exp(-0.5 * k.scales[t] ** 2 * float(d @ d))

    assert term(1, enc[0], enc[1]) == pytest.approx(math.exp(-0.5 * (20 / 200 / 0.1) ** 2), rel=1e-12)
    # categorical factor of a term with scale c: kappa ** (c^2)
    kappa = schema.similarity("region")
    a, b = enc[0].copy(), enc[0].copy()
    sl = dom.blocks["region"]
    b[sl] = a[sl][::-1]
    assert term(3, a, b) == pytest.approx(kappa ** (k.scales[3] ** 2), rel=1e-9)
    # options and refusals
    assert table_kernel(schema, kind="product") == GaussianKernel(lengthscale=1.0) == schema.kernel()
    assert table_kernel(schema, pairs="none").n_terms == p + 1
    assert table_kernel(schema, pairs=[("age", "region")], product_term=False).labels == (
        "age", "income", "smoker", "region", "visit", "age × region")
    assert table_kernel(schema, max_pairs=4).labels[p:p + 4] == (
        "age × income", "income × smoker", "smoker × region", "region × visit")   # neighbours first
    with pytest.raises(ValueError, match="'salary' is not in the schema"):
        table_kernel(schema, pairs=[("age", "salary")])
    with pytest.raises(ValueError, match="kind"):
        table_kernel(schema, kind="sum")
    with pytest.raises(ValueError, match="no options"):
        schema.kernel(pair_resolution=0.2)


# --------------------------------------------------------------------------- releases
FAST = dict(n_features=400, n_points=60, solver_options={"pool_size": 1500, "max_iter": 25})


def test_release_table_with_the_additive_kernel():
    schema = _schema()
    df = _table(300, np.random.default_rng(5))
    rel = release_table(df, schema=schema, epsilon=1.0, delta=1e-6, kernel="additive", random_state=2, **FAST)
    prod = release_table(df, schema=schema, epsilon=1.0, delta=1e-6, kernel="product", random_state=2, **FAST)
    default = release_table(df, schema=schema, epsilon=1.0, delta=1e-6, random_state=2, **FAST)
    assert DEFAULT_TABLE_KERNEL == "additive" and default.release.kernel == rel.release.kernel
    np.testing.assert_array_equal(default.points, rel.points)
    assert isinstance(rel.release.kernel, AdditiveKernel) and rel.release.kernel == schema.kernel(kind="additive")
    assert rel.release.params["table"]["kernel"] == "additive" and prod.release.params["table"]["kernel"] == "product"
    meta = rel.metadata()
    assert meta["kernel"]["name"] == "additive" and meta["kernel"]["labels"][-1] == "all columns"
    # same sensitivity, same noise, same charge as the product kernel
    assert rel.release.sensitivity == prod.release.sensitivity == pytest.approx(2.0 / 300)
    assert rel.release.sigma == prod.release.sigma
    assert bool(schema.domain.contains(rel.points).all())
    rows = rel.sample(500, 0, spread=0.5, categorical="smooth")
    assert bool(schema.domain.contains(schema.encode(rows)).all())
    # default spread: min(DEFAULT_ADDITIVE_SPREAD, SPREAD_PER_NOISE * sigma * sqrt(J)) finest-term units
    # (additive), DEFAULT_SPREAD (product)
    expected = min(DEFAULT_ADDITIVE_SPREAD, SPREAD_PER_NOISE * rel.release.sigma * math.sqrt(FAST["n_features"]))
    assert rel.default_spread == pytest.approx(expected, rel=1e-12) and prod.default_spread == DEFAULT_SPREAD
    pd.testing.assert_frame_equal(rel.sample(200, 1), rel.sample(200, 1, spread=rel.default_spread))
    pd.testing.assert_frame_equal(prod.sample(200, 1), prod.sample(200, 1, spread=DEFAULT_SPREAD))
    # the release (kernel included) survives its JSON form
    back = Release.from_json(rel.release.to_json())
    assert back.kernel == rel.release.kernel
    # a custom kernel is recorded as such; a kernel of the wrong dimension is refused
    custom = schema.kernel(kind="additive", pair_resolution=0.5)
    rel_c = release_table(df, schema=schema, epsilon=1.0, delta=1e-6, kernel=custom, random_state=2, **FAST)
    assert rel_c.release.params["table"]["kernel"] == "custom" and rel_c.release.kernel == custom
    with pytest.raises(ValueError, match="defined on 5 coordinates"):
        release_table(df, schema=schema, epsilon=1.0, delta=1e-6, kernel=_kernel(amplitude=1.0), **FAST)
    with pytest.raises(ValueError, match="kernel"):
        release_table(df, schema=schema, epsilon=1.0, delta=1e-6, kernel="sum", **FAST)


def test_default_spread_grows_with_the_public_noise_level_and_is_capped():
    """min(DEFAULT_ADDITIVE_SPREAD, SPREAD_PER_NOISE * sigma * sqrt(J)): public, larger for noisier releases."""
    schema = _schema()
    df = _table(300, np.random.default_rng(7))
    spreads = {}
    for eps in (0.3, 3.0, 30.0):
        rel = release_table(df, schema=schema, epsilon=eps, delta=1e-6, random_state=4, **FAST)
        # the noise of the kernel block (sigma / sqrt(1 - h) where the marginal block is on, at eps = 30)
        sigma = (rel.release.params.get("marginals") or {}).get("kernel_block_sigma", rel.release.sigma)
        nu = sigma * math.sqrt(FAST["n_features"])
        assert rel.default_spread == pytest.approx(min(DEFAULT_ADDITIVE_SPREAD, SPREAD_PER_NOISE * nu), rel=1e-12)
        spreads[eps] = rel.default_spread
    assert spreads[0.3] == DEFAULT_ADDITIVE_SPREAD                     # N = 300, epsilon = 0.3: capped
    assert spreads[0.3] > spreads[3.0] > spreads[30.0] > 0
    # the rule reads only public parameters: the same for another table of the same size
    other = release_table(_table(300, np.random.default_rng(8)), schema=schema, epsilon=3.0, delta=1e-6,
                          random_state=5, **FAST)
    assert other.default_spread == spreads[3.0]


def test_algorithm1_table_release_with_the_additive_kernel():
    """Algorithm 1 evaluates the kernel exactly (Gram, row means); its sensitivity is the product kernel's."""
    schema = _schema()
    df = _table(200, np.random.default_rng(6))
    rel = release_table(df, schema=schema, epsilon=1.0, delta=1e-6, mechanism="algorithm1", kernel="additive",
                        n_points=40, random_state=3)
    prod = release_table(df, schema=schema, epsilon=1.0, delta=1e-6, mechanism="algorithm1", n_points=40,
                         random_state=3, kernel="product")
    assert rel.release.sensitivity == prod.release.sensitivity == pytest.approx(math.sqrt(2.0) / 200)
    nu = rel.release.sigma * math.sqrt(rel.release.params["basis_dim"])   # the noise lives in the basis coordinates
    assert rel.default_spread == pytest.approx(min(DEFAULT_ADDITIVE_SPREAD, SPREAD_PER_NOISE * nu), rel=1e-12)
    assert bool(schema.domain.contains(rel.points).all()) and rel.weights.sum() == pytest.approx(1.0)


def test_spread_uses_the_finest_term():
    schema = _schema()
    k = schema.kernel(kind="additive")
    units = _coordinate_units(k, schema.dim)
    np.testing.assert_allclose(units, 1.0 / k.scales[0])          # every coordinate is in a one-column term
    np.testing.assert_array_equal(_coordinate_units(schema.kernel(), schema.dim), np.ones(schema.dim))
    coarse = schema.kernel(kind="additive", group_weights=(0.0, 1.0, 1.0))   # no one-column terms
    np.testing.assert_allclose(_coordinate_units(coarse, schema.dim), 1.0 / coarse.scales[0])


def test_the_private_step_with_additive_features_passes_the_audit(monkeypatch):
    """Algorithm 2's private step with the additive kernel's features (the audit's own Gaussian kernel swapped
    for it): the antipodal pair attains the sensitivity 2/N, and ε_lb <= ε (false failure <= alpha = 1e-3)."""
    kernel = AdditiveKernel(dim=4, blocks=[[0], [1], [2, 3], [0, 1, 2, 3]], weights=[1, 1, 1, 2],
                            scales=[3.0, 3.0, 1.5, 1.0])
    monkeypatch.setattr(audit_mechanisms, "GaussianKernel", lambda lengthscale: kernel)
    feats = RandomFourierFeatures(kernel, n_components=8, random_state=audit_mechanisms._public_seed(11),
                                  dtype="float64").fit(4)
    x, xp = rff_antipodal_pair(feats)
    D = np.tile(x, (5, 1))
    Dn = D.copy()
    Dn[0] = xp
    res = audit_mechanisms.audit_algorithm2(settings=AuditSettings(runs=1500, alpha=1e-3, random_state=11),
                                            X=D, X_neighbour=Dn)
    assert res.params["features"] == "RandomFourierFeatures"
    assert res.params["pair_difference"] == pytest.approx(2.0 / 5, rel=1e-9)   # the sensitivity is attained
    assert res.passed and res.epsilon_lower_bound <= res.claimed_epsilon, res.summary()
