"""Property-based robustness tests (Hypothesis) for the public entry points of dpkme.

The contract under test (issue #8, "robustness"): for **any** input -- arrays
of any shape and dtype (ints, float16/32/64, bool, complex, strings, objects),
NaN, ±inf, huge values (±1e308), subnormals, empty and 0-d or 3-d arrays,
hostile scalars (None, strings, booleans, NaN, huge or negative numbers) and
random bytes for the loaders -- a public function either

* raises ``ValueError`` with a non-empty message (``_rejects``), or
* returns a result that passes the property checks of that function (finite,
  right shape, within its mathematical range: "never a silent wrong answer").

Any other exception fails the test, and so does a ``RuntimeWarning`` from
dpkme (``pytest.ini`` turns those into errors: overflow, invalid values).

Profiles: ``DPKME_HYPOTHESIS_PROFILE=dpkme-ci`` (default; the whole file in
well under 60 s on the 2-core CI machine) or ``dpkme-thorough`` (10x the
examples, for occasional deeper runs). No example database is written.
"""

from __future__ import annotations

import io
import json
import math
import os
import warnings

import numpy as np
import pandas as pd
import pytest
from hypothesis import HealthCheck, assume, event, given, settings
from hypothesis import strategies as st
from hypothesis.extra import numpy as hnp

settings.register_profile(
    "dpkme-ci", max_examples=30, deadline=None, database=None, derandomize=True,
    suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large, HealthCheck.filter_too_much],
)
settings.register_profile(
    "dpkme-thorough", max_examples=300, deadline=None, database=None,
    suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large, HealthCheck.filter_too_much],
)
PROFILE = settings.get_profile(os.environ.get("DPKME_HYPOTHESIS_PROFILE", "dpkme-ci"))


def examples(fraction: float = 1.0) -> settings:
    """The active profile with ``fraction`` of its examples (slow entry points get fewer)."""
    return settings(PROFILE, max_examples=max(5, int(PROFILE.max_examples * fraction)))


# --------------------------------------------------------------------------- strategies
SPECIAL_FLOATS = [0.0, -0.0, 1.0, -1.0, 0.5, 1e-300, 5e-324, 1e300, 1e308, -1e308, math.nan, math.inf, -math.inf]
any_float = st.one_of(st.floats(allow_nan=True, allow_infinity=True), st.sampled_from(SPECIAL_FLOATS))
hostile_scalar = st.one_of(
    any_float,
    st.integers(-(10**30), 10**30),
    st.booleans(),
    st.none(),
    st.text(max_size=4),
    st.complex_numbers(allow_nan=True),
    st.sampled_from([np.float32(1.5), np.int64(3), np.float64(np.nan), np.bool_(True), np.uint8(7), [1.0], (2,), {}]),
)
positive_float = st.one_of(st.floats(min_value=1e-6, max_value=1e6), st.sampled_from([1e-300, 1e300, 5e-324]))


def mostly(valid, hostile=hostile_scalar):
    """Valid values three times as often as hostile ones, so that both paths are exercised.

    (``st.one_of`` would flatten the many branches of ``hostile`` and pick it most of the time.)
    """
    return st.integers(0, 3).flatmap(lambda i: hostile if i == 0 else valid)


EPS = mostly(st.floats(0.05, 20.0))
DELTA = mostly(st.sampled_from([1e-8, 1e-5, 1e-3, 0.05, 0.5]))
POS = mostly(st.floats(1e-3, 1e3))


#: hostile values for size-like parameters (never a plausible-but-huge size that would just take long)
BAD_SIZES = st.sampled_from([0, -1, 2.5, None, "3", math.nan, math.inf, True, 10**40, [3], np.float64(-2.0)])


def ints(lo, hi):
    """Sizes: ints in [lo, hi] three times as often as hostile values."""
    return mostly(st.integers(lo, hi), BAD_SIZES)


NUMERIC_DTYPES = [np.float64, np.float32, np.float16, np.int64, np.int8, np.uint8]
ALL_DTYPES = [*NUMERIC_DTYPES, np.bool_, np.complex128]


def _elements(dtype):
    dt = np.dtype(dtype)
    if dt.kind == "f":
        return st.floats(allow_nan=True, allow_infinity=True, width=8 * dt.itemsize)
    if dt.kind == "c":
        return st.complex_numbers(allow_nan=True, allow_infinity=True, width=8 * dt.itemsize)
    if dt.kind == "b":
        return st.booleans()
    info = np.iinfo(dt)
    return st.integers(int(info.min), int(info.max))


@st.composite
def hostile_arrays(draw, max_dims: int = 3, max_side: int = 6):
    """Arrays of any shape/dtype, ragged lists, strings, objects, None."""
    kind = draw(st.sampled_from(["numeric", "numeric", "numeric", "text", "object", "ragged", "scalar", "none"]))
    shape = draw(hnp.array_shapes(min_dims=0, max_dims=max_dims, min_side=0, max_side=max_side))
    if kind == "numeric":
        dtype = draw(st.sampled_from(ALL_DTYPES))
        return draw(hnp.arrays(dtype, shape, elements=_elements(dtype)))
    if kind == "text":
        return np.full(shape, draw(st.text(max_size=3)), dtype=object).astype(str)
    if kind == "object":
        return np.full(shape, draw(st.sampled_from([None, "a", 1.0, [1]])), dtype=object)
    if kind == "ragged":
        return [[1.0, 2.0], [3.0]]
    if kind == "scalar":
        return draw(hostile_scalar)
    return None


@st.composite
def float_matrices(draw, min_rows=1, max_rows=6, min_cols=1, max_cols=3, hostile: bool = True, n_cols=None):
    """2-D float64 arrays; with ``hostile`` their values include NaN, inf, huge and subnormal numbers."""
    rows = draw(st.integers(min_rows, max_rows))
    cols = n_cols if n_cols is not None else draw(st.integers(min_cols, max_cols))
    if hostile and draw(st.integers(0, 3)) == 0:  # a quarter of the matrices carry hostile values
        elems = st.one_of(st.floats(-10, 10), any_float, st.floats(allow_nan=False, allow_infinity=False))
    else:
        elems = st.floats(-10, 10)
    return draw(hnp.arrays(np.float64, (rows, cols), elements=elems))


def _rejects(fn, *args, **kwargs):
    """Call ``fn``; return ``(True, result)``, or ``(False, exc)`` for a ValueError with a message.

    Any other exception propagates (and fails the test), and so does a RuntimeWarning (overflow, invalid
    value, ...) wherever it is raised, numpy's internals included: pytest.ini only escalates those attributed
    to dpkme itself, and an overflow inside e.g. ``np.median`` is just as much a numerical bug.
    """
    name = getattr(fn, "__name__", type(fn).__name__)
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("error", RuntimeWarning)
            out = fn(*args, **kwargs)
    except ValueError as exc:
        assert str(exc).strip(), f"{name} raised a ValueError without a message"
        event(f"{name}: ValueError")
        return False, exc
    event(f"{name}: result")
    return True, out


def _finite(x) -> bool:
    return bool(np.all(np.isfinite(np.asarray(x, dtype=np.float64))))


# --------------------------------------------------------------------------- validation
from dpkme import _validation as V  # noqa: E402


@examples(3)
@given(hostile_arrays(), st.sampled_from([1, 2]))
def test_check_array(x, ndim):
    ok, out = _rejects(V.check_array, x, ndim=ndim)
    if ok:
        assert out.dtype == np.float64 and out.ndim == ndim and out.flags.c_contiguous and _finite(out)
        assert out.shape[0] >= 1 and np.array_equal(out, np.asarray(x, dtype=np.float64))


@examples(2)
@given(hostile_scalar)
def test_scalar_checks(v):
    ok, e = _rejects(V.check_epsilon, v)
    if ok:
        assert math.isfinite(e) and e > 0
    ok, d = _rejects(V.check_delta, v)
    if ok:
        assert 0 < d < 1
    ok, i = _rejects(V.check_positive_int, v, name="n")
    if ok:
        assert isinstance(i, int) and i >= 1
    ok, f = _rejects(V.check_positive_float, v, name="x", allow_zero=True)
    if ok:
        assert math.isfinite(f) and f >= 0
    ok, r = _rejects(V.check_random_state, v)
    if ok:
        assert isinstance(r[0], np.random.Generator)
    ok, r = _rejects(V.noise_rng, v)
    if ok:
        assert r[2] in ("seeded", "os-entropy", "generator") and (r[1] is None) == (r[2] != "seeded")


# --------------------------------------------------------------------------- kernels
from dpkme.kernels.kernel import Kernel, kernel_from_dict, make_kernel  # noqa: E402

kernel_names = st.sampled_from(["gaussian", "laplacian", "matern", "imq", "matern12", "matern32", "matern52", "rbf"])


@st.composite
def valid_kernels(draw):
    name = draw(kernel_names)
    return make_kernel(name, lengthscale=draw(st.floats(0.05, 20.0)), amplitude=draw(st.floats(0.1, 1.0)))


@examples()
@given(mostly(kernel_names, st.one_of(st.text(max_size=6), hostile_scalar)), POS, mostly(st.floats(0.01, 1.0)))
def test_make_kernel(name, lengthscale, amplitude):
    ok, k = _rejects(make_kernel, name, lengthscale=lengthscale, amplitude=amplitude)
    if ok:
        assert isinstance(k, Kernel) and math.isfinite(k.lengthscale) and k.lengthscale > 0
        assert math.isfinite(k.amplitude) and k.amplitude > 0
        assert kernel_from_dict(k.to_dict()) == k


@examples(3)
@given(valid_kernels(), float_matrices(), st.one_of(st.none(), float_matrices()))
def test_kernel_matrices(k, A, B):
    ok, K = _rejects(k, A, B)
    if not ok:
        return
    B_ = A if B is None else B
    assert K.shape == (A.shape[0], B_.shape[0]) and _finite(K)
    assert np.all(K >= 0) and np.all(K <= k.amplitude * (1 + 1e-12))
    if B is None:
        assert np.allclose(K, K.T) and np.allclose(np.diag(K), k.amplitude)
    ok, rm = _rejects(k.row_means, A, B_)
    if ok:
        assert rm.shape == (A.shape[0],) and _finite(rm) and np.allclose(rm, K.mean(axis=1), atol=1e-9)
    ok, mg = _rejects(k.mean_gram, A)
    if ok:
        assert 0 <= mg <= k.amplitude * (1 + 1e-12)


@examples()
@given(valid_kernels(), hostile_arrays(max_dims=2))
def test_kernel_value_at_distance(k, r):
    ok, v = _rejects(k.value_at_distance, r)
    if ok:
        assert _finite(v) and np.all(v >= 0) and np.all(v <= k.amplitude * (1 + 1e-12))


@examples()
@given(valid_kernels(), ints(1, 50), ints(1, 5))
def test_sample_frequencies(k, n, dim):
    ok, W = _rejects(k.sample_frequencies, n, dim, np.random.default_rng(0))
    if ok:
        assume(W.size < 10**6)
        assert W.shape == (int(n), int(dim)) and _finite(W)


@examples()
@given(st.dictionaries(st.sampled_from(["name", "lengthscale", "gamma", "amplitude", "nu", "beta", "x"]),
                       st.one_of(kernel_names, hostile_scalar), max_size=5))
def test_kernel_from_dict(spec):
    ok, k = _rejects(kernel_from_dict, spec)
    if ok:
        assert isinstance(k, Kernel)


# --------------------------------------------------------------------------- features
from dpkme.kernels.random_features import CosineBiasFeatures, RandomFourierFeatures  # noqa: E402


@examples()
@given(valid_kernels(), ints(1, 40), ints(1, 4), mostly(st.sampled_from(["float32", "float64"]),
       st.sampled_from(["int8", None, 3])))
def test_random_fourier_features(k, J, dim, dtype):
    ok, f = _rejects(lambda: RandomFourierFeatures(k, n_components=J, random_state=0, dtype=dtype).fit(dim))
    if not ok:
        return
    assume(f.n_components * f.n_features_in_ <= 10**5)
    X = np.random.default_rng(0).normal(size=(3, f.n_features_in_)) * 5
    F = f.transform(X)
    assert F.shape == (3, f.n_components) and np.allclose(np.linalg.norm(F, axis=1), math.sqrt(k.amplitude))
    assert np.allclose(f.mean_embedding(X), F.mean(axis=0), atol=1e-6)


@examples(2)
@given(float_matrices(max_cols=3))
def test_features_on_hostile_rows(X):
    k = make_kernel("gaussian", lengthscale=1.0)
    f = RandomFourierFeatures(k, n_components=6, random_state=0, dtype="float64").fit(X.shape[1])
    ok, F = _rejects(f.transform, X)
    if ok:
        # huge coordinates: the angle is meaningless but the norm guarantee must hold (or a ValueError)
        assert _finite(F) and np.allclose(np.linalg.norm(F, axis=1), 1.0)
    ok, m = _rejects(f.mean_embedding, X)
    if ok:
        assert _finite(m) and np.linalg.norm(m) <= 1.0 + 1e-9
    c = CosineBiasFeatures(k, n_components=4, random_state=0).fit(X.shape[1])
    ok, C = _rejects(c.transform, X)
    if ok:
        assert _finite(C) and np.all(np.linalg.norm(C, axis=1) <= math.sqrt(2) + 1e-9)


# --------------------------------------------------------------------------- sensitivity and mechanisms
from dpkme.privacy import calibration as M  # noqa: E402
from dpkme.privacy.sensitivity import feature_mean_sensitivity, kme_sensitivity  # noqa: E402


@examples(2)
@given(ints(1, 10**6), valid_kernels(), mostly(st.sampled_from(["replace-one", "add-remove"]), st.sampled_from(["x", None])),
       mostly(st.sampled_from(["tight", "paper"]), st.just(1)))
def test_kme_sensitivity(n, k, rel, mode):
    ok, s = _rejects(kme_sensitivity, n=n, kernel=k, neighbouring=rel, mode=mode)
    if ok:
        assert math.isfinite(s) and 0 < s <= 2 * math.sqrt(k.amplitude) / int(n) * (1 + 1e-12)
    ok, s = _rejects(feature_mean_sensitivity, n=n, norm_bound=k.amplitude, neighbouring=rel)
    if ok:
        assert math.isfinite(s) and s > 0


@examples(4)
@given(EPS, DELTA, POS)
def test_gaussian_calibrations(eps, delta, sens):
    ok, cal = _rejects(M.calibrate_gaussian, epsilon=eps, delta=delta, sensitivity=sens)
    if ok:
        assert math.isfinite(cal.sigma) and cal.sigma > 0
        # the returned noise really satisfies the exact Balle-Wang condition
        assert M.gaussian_delta(sigma=cal.sigma, epsilon=cal.epsilon, sensitivity=cal.sensitivity) <= cal.delta
        ok2, e2 = _rejects(M.gaussian_epsilon, sigma=cal.sigma, delta=cal.delta, sensitivity=cal.sensitivity)
        if ok2:
            # gaussian_epsilon rounds up (bisection to a relative 1e-13, at most ~1e-120 absolute near 0); at
            # absurd epsilons (~1e17) the cancellation in Δ/2σ - εσ/Δ limits it to ~1e-8 relative, on the
            # conservative (larger epsilon) side
            assert e2 <= cal.epsilon * (1 + 1e-6) + 1e-12
    ok, s = _rejects(M.classic_sigma, epsilon=eps, delta=delta, sensitivity=sens)
    if ok:
        assert math.isfinite(s) and s > 0
    ok, d = _rejects(M.gaussian_delta, sigma=sens, epsilon=eps, sensitivity=delta)
    if ok:
        assert 0 <= d <= 1
    ok, e = _rejects(M.gaussian_epsilon, sigma=sens, delta=delta, sensitivity=eps)
    if ok:
        assert e >= 0


@examples(2)
@given(EPS, POS, ints(1, 10**4))
def test_laplace_and_l1(eps, l1, dim):
    ok, cal = _rejects(M.calibrate_laplace, epsilon=eps, l1_sensitivity=l1)
    if ok:
        assert math.isfinite(cal.scale) and cal.scale > 0
    ok, v = _rejects(M.l1_from_l2_sensitivity, l1, dim)
    if ok:
        assert math.isfinite(v) and v > 0


@examples(2)
@given(st.one_of(ints(0, 20), st.tuples(ints(0, 5), ints(0, 5))), mostly(st.floats(0, 1e3)))
def test_noise_samplers(shape, scale):
    rng = np.random.default_rng(0)
    for fn, kw in ((M.gaussian_noise, "sigma"), (M.laplace_noise, "scale")):
        ok, z = _rejects(fn, shape, rng=rng, **{kw: scale})
        if ok:
            assume(z.size < 10**6)
            assert _finite(z)


# --------------------------------------------------------------------------- accounting
from dpkme.privacy import accounting as A  # noqa: E402


@examples(2)
@given(st.sampled_from(["gaussian", "laplace", "exponential", "approx-dp", "x", None]), EPS,
       st.one_of(st.just(0.0), DELTA), st.one_of(st.none(), POS), ints(1, 100))
def test_privacy_charge(mechanism, eps, delta, z, count):
    ok, c = _rejects(A.PrivacyCharge, "c", mechanism, eps, delta, noise_multiplier=z, count=count)
    if not ok:
        return
    assert math.isfinite(c.epsilon) and c.epsilon > 0 and 0 <= c.delta < 1 and c.count >= 1
    for fn in (A.basic_composition, lambda cs: A.rdp_epsilon(cs, delta=1e-5), lambda cs: A.pld_epsilon(cs, delta=1e-5)):
        ok2, tot = _rejects(fn, [c])
        if ok2:
            tot = tot[0] if isinstance(tot, tuple) else tot
            # composing one charge never reports less than... its own epsilon at a delta >= its own
            assert tot >= 0 and not math.isnan(tot)


@examples(0.5)
@given(mostly(st.floats(0.05, 1e9)), DELTA)
def test_ledger_totals(eps, delta):
    led = A.BudgetLedger(epsilon_budget=2.0, delta_budget=1e-4)
    ok, c = _rejects(A.laplace_charge, "l", epsilon=eps)
    if ok:
        led.add(c)
        ok2, t = _rejects(led.totals, delta=delta)
        if ok2:
            assert t["basic"][0] == pytest.approx(c.epsilon * c.count)


# --------------------------------------------------------------------------- releases
from dpkme.release.result import Release  # noqa: E402
from dpkme.release.subspace import algorithm1, project_weights, uniform_baseline  # noqa: E402

GAUSS = make_kernel("gaussian", lengthscale=1.0)


def _check_release(rel):
    assert isinstance(rel, Release) and _finite(rel.points) and _finite(rel.weights)
    assert rel.weights.shape == (rel.points.shape[0],)
    json.loads(rel.to_json())  # exportable


@examples(2)
@given(float_matrices(min_rows=1, max_rows=5, max_cols=2), st.one_of(st.none(), float_matrices(max_rows=4, n_cols=2)),
       EPS, DELTA)
def test_algorithm1_hostile(X, Z, eps, delta):
    if Z is not None and Z.shape[1] != X.shape[1]:
        Z = None
    kw = dict(n_points=3, q_scale=1.0) if Z is None else {}
    ok, rel = _rejects(algorithm1, X, Z, kernel=GAUSS, epsilon=eps, delta=delta, random_state=0, **kw)
    if ok:
        _check_release(rel)
        assert rel.sigma > 0 and rel.epsilon == float(eps)


@examples()
@given(float_matrices(max_rows=4, max_cols=2, hostile=False), ints(1, 6), POS,
       st.sampled_from(["free", "simplex", "l1"]))
def test_algorithm1_parameters(X, n_points, q_scale, weights):
    ok, rel = _rejects(algorithm1, X, kernel=GAUSS, epsilon=1.0, delta=1e-5, n_points=n_points, q_scale=q_scale,
                       weights=weights, random_state=0)
    if ok:
        _check_release(rel)
        if weights == "simplex":
            assert np.all(rel.weights >= -1e-12) and rel.weights.sum() == pytest.approx(1.0, abs=1e-6)


@examples()
@given(float_matrices(max_rows=4, max_cols=2))
def test_uniform_baseline_and_projection(Z):
    ok, rel = _rejects(uniform_baseline, Z, kernel=GAUSS)
    if ok:
        _check_release(rel)
        ok, K = _rejects(GAUSS.gram, rel.points)
        if ok:
            u = project_weights(np.linspace(-1, 2, rel.n_points), K)
            assert np.all(u >= -1e-12) and u.sum() == pytest.approx(1.0)


@examples()
@given(mostly(hnp.arrays(np.float64, (3, 2), elements=st.floats(-5, 5)), hostile_arrays(max_dims=2)),
       mostly(hnp.arrays(np.float64, 3, elements=st.floats(-1, 1)), hostile_arrays(max_dims=2)))
def test_release_construction(points, weights):
    ok, rel = _rejects(Release, points=points, weights=weights, mechanism="x", epsilon=1.0, delta=0.0, sigma=0.0,
                       sensitivity=0.0, neighbouring="replace-one", calibration="none", kernel=GAUSS, seed=None,
                       n_private=1)
    if ok:
        _check_release(rel)


@examples(2)
def _release_json(seed: int) -> str:
    X = np.random.default_rng(seed).normal(size=(6, 2))
    return algorithm1(X, X[:3], kernel=GAUSS, epsilon=1.0, delta=1e-5, random_state=seed).to_json()


def _mutate_json(text: str, key: str, value) -> str:
    d = json.loads(text)
    d[key] = value
    return json.dumps(d)


@given(st.one_of(st.integers(0, 3).map(_release_json),
                 st.builds(_mutate_json, st.integers(0, 3).map(_release_json),
                           st.sampled_from(["points", "weights", "epsilon", "delta", "kernel", "n_private", "seed",
                                            "params", "sigma"]),
                           st.one_of(st.none(), st.floats(allow_nan=False), st.text(max_size=3), st.just([[1.0, 2.0]]),
                                     st.just({"name": "laplacian", "lengthscale": 2.0}), st.integers(-5, 5))),
                 st.text(max_size=200), st.builds(json.dumps, st.dictionaries(
    st.sampled_from(["points", "weights", "mechanism", "epsilon", "kernel", "delta", "x"]),
    st.one_of(hostile_scalar.filter(lambda v: not isinstance(v, (complex, np.generic))), st.just([[1.0]]),
              st.just({"name": "gaussian", "lengthscale": 1.0})), max_size=7))))
def test_release_from_json(text):
    ok, rel = _rejects(Release.from_json, text)
    if ok:
        _check_release(rel)


# --------------------------------------------------------------------------- Algorithm 2
from dpkme.release.random_features import algorithm2, privatise_feature_mean  # noqa: E402


@examples(0.5)
@given(float_matrices(max_rows=4, n_cols=2), EPS, ints(1, 4), mostly(st.sampled_from([2, 8, 20])))
def test_algorithm2_hostile(X, eps, n_points, n_features):
    ok, rel = _rejects(algorithm2, X, kernel=GAUSS, epsilon=eps, delta=1e-5, n_points=n_points,
                       n_features=n_features, solver="pursuit", q_scale=1.0, random_state=0,
                       solver_options={"pool_size": 20})
    if ok:
        assume(rel.n_points <= 50)
        _check_release(rel)


@examples()
@given(float_matrices(max_rows=4, n_cols=2), st.one_of(st.none(), ints(1, 10)), st.sampled_from(["replace-one", "add-remove"]))
def test_privatise_feature_mean(X, n_private, rel):
    f = RandomFourierFeatures(GAUSS, n_components=8, random_state=0).fit(2)
    ok, out = _rejects(privatise_feature_mean, X, f, epsilon=1.0, delta=1e-5, neighbouring=rel,
                       rng=np.random.default_rng(0), n_private=n_private)
    if ok:
        mu, cal = out
        assert mu.shape == (8,) and _finite(mu) and cal.sigma > 0


# --------------------------------------------------------------------------- exponential mechanism
from dpkme.release import exponential as EXP  # noqa: E402


@examples()
@given(ints(1, 10**6), ints(1, 100))
def test_count_and_largest_m(n, m):
    ok, c = _rejects(EXP.count_multisets, n, m)
    if ok:
        assert c == math.comb(int(n) + int(m) - 1, int(m))
    ok, lm = _rejects(EXP.largest_m, n)
    if ok:
        assert 0 <= lm <= EXP.MAX_M


@examples()
@given(mostly(st.just([-1.0, 0.0]), hostile_arrays(max_dims=2)), mostly(st.just([1.0, 2.0]), hostile_arrays(max_dims=2)),
       ints(1, 30))
def test_grid_candidates(lower, upper, ppa):
    ok, G = _rejects(EXP.grid_candidates, lower, upper, ppa)
    if ok:
        assert G.ndim == 2 and _finite(G) and G.shape[0] <= EXP.MAX_GRID_CANDIDATES
        lo, hi = np.atleast_1d(np.asarray(lower, float)), np.atleast_1d(np.asarray(upper, float))
        assert np.all(G >= lo - 1e-9 * np.abs(lo)) and np.all(G <= hi + 1e-9 * np.abs(hi))


@examples(0.7)
@given(float_matrices(max_rows=4, n_cols=1), float_matrices(max_rows=4, n_cols=1), ints(1, 3), EPS)
def test_exponential_mechanism(X, G, m, eps):
    ok, rel = _rejects(EXP.exponential_mechanism, X, G, kernel=GAUSS, epsilon=eps, m=m, random_state=0)
    if ok:
        _check_release(rel)
        assert rel.weights.sum() == pytest.approx(1.0) and rel.delta == 0.0
        p, ms = EXP.exponential_probabilities(X, G, kernel=GAUSS, m=rel.params["m"], epsilon=float(eps))
        assert _finite(p) and p.sum() == pytest.approx(1.0) and ms.shape == (p.shape[0], rel.params["m"])


@examples()
@given(ints(0, 100), ints(1, 20), ints(1, 4))
def test_multiset_from_rank(rank, n, m):
    ok, r = _rejects(EXP.multiset_from_rank, rank, n, m)
    if ok:
        assert r.shape == (int(m),) and np.all(np.diff(r) >= 0) and r.min() >= 0 and r.max() < int(n)


# --------------------------------------------------------------------------- GP release
from dpkme.release import gp as GP  # noqa: E402


@examples(0.7)
@given(float_matrices(max_rows=4, n_cols=1), EPS, DELTA,
       st.sampled_from(["kme", "kde", "x"]), st.sampled_from(["analytic", "hall"]))
def test_gp_release_on_query_points(X, eps, delta, norm, cal):
    P = np.linspace(-2, 2, 4)[:, None]
    ok, rel = _rejects(GP.gp_release, X, kernel=GAUSS, epsilon=eps, delta=delta, query_points=P,
                       normalisation=norm, calibration=cal, random_state=0)
    if ok:
        assert rel.values.shape == (4,) and _finite(rel.values) and rel.scale > 0
        json.loads(rel.to_json())


@examples()
@given(mostly(st.just([-1.0, 0.0]), hostile_arrays(max_dims=1)), mostly(st.just([1.0, 3.0]), hostile_arrays(max_dims=1)),
       ints(2, 30))
def test_grid_axes(lower, upper, ppa):
    ok, axes = _rejects(GP.grid_axes, lower, upper, ppa)
    if ok:
        assert all(_finite(a) and np.all(np.diff(a) > 0) for a in axes)
        assume(math.prod(a.shape[0] for a in axes) <= 10**5)
        w = GP.trapezoid_weights(axes)
        assert _finite(w) and np.all(w >= 0)


@examples()
@given(mostly(hnp.arrays(np.float64, 3, elements=st.floats(-5, 5)), hostile_arrays(max_dims=1)),
       mostly(st.just(np.eye(3) + 0.5), hostile_arrays(max_dims=2)))
def test_mahalanobis_sensitivity(h, K):
    ok, v = _rejects(GP.mahalanobis_sensitivity, h, K)
    if ok:
        assert math.isfinite(v) and v >= 0


@examples()
@given(ints(1, 10**6), ints(1, 1000), DELTA)
def test_gp_sensitivity_and_hall(n, dim, delta):
    ok, s = _rejects(GP.gp_sensitivity, n=n, kernel=GAUSS, dim=dim, normalisation="kde")
    if ok:
        assert math.isfinite(s) and s > 0
    ok, c = _rejects(GP.hall_constant, delta)
    if ok:
        assert math.isfinite(c) and c > 0


# --------------------------------------------------------------------------- metrics
from dpkme import metrics as MET  # noqa: E402


@examples(2)
@given(float_matrices(max_rows=5, n_cols=2), float_matrices(max_rows=5, n_cols=2),
       mostly(hnp.arrays(np.float64, st.integers(1, 5), elements=st.floats(-1, 1)), hostile_arrays(max_dims=1)),
       st.booleans())
def test_mmd_and_rkhs_distance(X, Y, w, unbiased):
    ok, d = _rejects(MET.mmd, X, Y, kernel=GAUSS, unbiased=unbiased)
    if ok:
        assert math.isfinite(d) and (unbiased or d >= 0)
    ok, r = _rejects(MET.rkhs_distance, X, Y, w, kernel=GAUSS)
    if ok:
        assert math.isfinite(r) and r >= 0


# --------------------------------------------------------------------------- io
from dpkme import io as IO  # noqa: E402

table_text = st.lists(
    st.lists(st.one_of(st.sampled_from(["1", "2.5", "-3e2", "", "NA", "nan", "inf", "x", "1,5", '"a,b"', "1e400",
                                        "True", " 7 "]), st.text(max_size=3)), min_size=1, max_size=4),
    min_size=1, max_size=6,
).map(lambda rows: "\n".join(st_join(r) for r in rows))


def st_join(row):
    return st_sep[0].join(row)


st_sep = [","]


@examples(3)
@given(st.one_of(st.binary(max_size=300), table_text.map(str.encode)),
       st.sampled_from(["data.csv", "data.tsv", "x.txt", "d.parquet", "d.xlsx", "noext", ""]))
def test_load_table_and_numeric_matrix(data, filename):
    ok, df = _rejects(IO.load_table, data, filename=filename)
    if not ok:
        return
    assert isinstance(df, pd.DataFrame) and df.shape[0] >= IO.MIN_ROWS and df.shape[1] <= IO.MAX_COLUMNS
    cols = IO.numeric_columns(df)
    ok, out = _rejects(IO.numeric_matrix, df, cols or None)
    if ok:
        X = out[0] if isinstance(out, tuple) else out
        assert X.dtype == np.float64 and X.ndim == 2 and _finite(X)
    ok, summ = _rejects(IO.nonprivate_summary, df)
    if ok:
        assert isinstance(summ, pd.DataFrame)


def _npz_bytes(arr) -> bytes:
    buf = io.BytesIO()
    np.savez(buf, X_private=arr)
    return buf.getvalue()


@examples()
@given(st.one_of(st.binary(max_size=200), hostile_arrays().filter(lambda a: isinstance(a, np.ndarray) and
                                                                   a.dtype != object).map(_npz_bytes)))
def test_load_npz_random_bytes(data):
    ok, X = _rejects(IO.load_npz, data)
    if ok:
        assert X.ndim == 2 and _finite(X)


# --------------------------------------------------------------------------- datasets, preprocessing
from dpkme import datasets as DATA  # noqa: E402
from dpkme import preprocessing as PRE  # noqa: E402


@examples(3)
@given(st.sampled_from(sorted(DATA.GENERATORS)), st.data())
def test_generators(name, data):
    spec = DATA.GENERATORS[name]
    keys = data.draw(st.lists(st.sampled_from(list(spec.defaults)), max_size=3, unique=True))
    params = {k: data.draw(hostile_scalar) for k in keys}
    ok, X = _rejects(DATA.generate, name, random_state=0, **params)
    if ok:
        assume(X.size <= 10**6)
        assert X.ndim == 2 and X.dtype == np.float64 and _finite(X) and X.shape[0] >= 1


@examples(2)
@given(float_matrices(max_rows=4, max_cols=2), mostly(st.floats(-5, 0.9)), POS)
def test_declared_scaling_and_clipping(X, center, scale):
    ok, s = _rejects(PRE.DeclaredScaling, center=center, scale=scale)
    if ok:
        ok2, Y = _rejects(s.apply, X)
        if ok2:
            assert _finite(Y) and Y.shape == X.shape
    ok, out = _rejects(PRE.clip_to_box, X, center, scale)
    if ok:
        Xc, k = out
        assert _finite(Xc) and Xc.shape == X.shape and 0 <= k <= X.size
    ok, out = _rejects(PRE.public_private_split, X, public_fraction=center, random_state=0)
    if ok:
        pub, priv, _idx = out
        assert pub.shape[0] + priv.shape[0] == X.shape[0] and pub.shape[0] >= 1 and priv.shape[0] >= 1


# --------------------------------------------------------------------------- clustering
from dpkme import clustering as CL  # noqa: E402


@examples()
@given(EPS, DELTA, ints(0, 20), mostly(st.sampled_from(["replace-one", "add-remove"]), st.just("x")),
       st.one_of(st.none(), mostly(st.floats(0.05, 0.95))))
def test_plan_kmeans(eps, delta, n_iter, rel, share):
    ok, plan = _rejects(CL.plan_kmeans, epsilon=eps, delta=delta, n_iter=n_iter, neighbouring=rel,
                        n_features=50, count_share=share)
    if ok:
        step = plan.step("lloyd")
        assert step.mu > 0 and math.isfinite(step.sigma_count) and step.sigma_count > 0
        # the plan is calibrated: its total epsilon at its delta does not exceed the target (PLD rounding aside)
        assert plan.epsilon() <= float(eps) * (1 + 1e-6) + 1e-9


@examples(0.5)
@given(float_matrices(max_rows=6, n_cols=2), ints(1, 4), EPS)
def test_dp_kernel_kmeans_hostile(X, k, eps):
    ok, res = _rejects(CL.dp_kernel_kmeans, X, k=k, epsilon=eps, delta=1e-5, n_iter=2, kernel=GAUSS, n_features=20,
                       bounds=([-3, -3], [3, 3]), preimages="final", n_candidates=20, random_state=0)
    if ok:
        assert _finite(res.centres) and _finite(res.noisy_counts) and res.centres.shape == (int(k), 20)
        assert np.all(np.linalg.norm(res.centres, axis=1) <= res.norm_bound * (1 + 1e-9))
        assert _finite(res.preimages)


@examples()
@given(mostly(hnp.arrays(np.int64, 6, elements=st.integers(0, 3)), hostile_arrays(max_dims=2)),
       mostly(hnp.arrays(np.int64, 6, elements=st.integers(0, 3)), hostile_arrays(max_dims=2)))
def test_cluster_scores(a, b):
    ok, ari = _rejects(CL.adjusted_rand_index, a, b)
    if ok:
        assert math.isfinite(ari) and ari <= 1 + 1e-12
    ok, pur = _rejects(CL.cluster_purity, a, b)
    if ok:
        assert 0 <= pur <= 1


@examples()
@given(ints(1, 100), mostly(hnp.arrays(np.float64, st.integers(0, 5), elements=st.floats(0, 10)),
       hostile_arrays(max_dims=2)))
def test_allocate_points(n, w):
    ok, alloc = _rejects(CL.allocate_points, n, w)
    if ok:
        # no components: nothing to allocate (the function's documented convention)
        assert alloc.dtype.kind == "i" and np.all(alloc >= 1) and (alloc.sum() == int(n) or alloc.size == 0)


@examples()
@given(POS, POS, st.sampled_from(["replace-one", "add-remove", None]))
def test_lloyd_sensitivities(sn, ss, rel):
    ok, mu = _rejects(CL.step_mu, sigma_count=sn, sigma_sum=ss, neighbouring=rel)
    if ok:
        assert math.isfinite(mu) and mu > 0
        ok2, sig = _rejects(CL.noise_for_mu, mu, neighbouring=rel)
        if ok2:
            assert CL.step_mu(sigma_count=sig[0], sigma_sum=sig[1], neighbouring=rel) <= mu * (1 + 1e-12)


# --------------------------------------------------------------------------- two-sample tests
from dpkme import two_sample as TS  # noqa: E402
from dpkme.two_sample.audit import paper_statistic  # noqa: E402


@examples()
@given(st.sampled_from(["me", "scf", "rff", "x"]), st.one_of(st.none(), float_matrices(max_rows=6, n_cols=2)),
       ints(1, 12), mostly(st.one_of(st.none(), st.floats(0.1, 5))))
def test_make_features(kind, public, n_features, lengthscale):
    ok, f = _rejects(TS.make_features, kind, dim=2, public_sample=public, n_features=n_features,
                     lengthscale=lengthscale, random_state=0)
    if ok:
        assume(f.n_features <= 1000)
        Z = f.transform(np.random.default_rng(0).normal(size=(3, 2)))
        assert Z.shape == (3, f.n_features) and _finite(Z) and math.isfinite(f.diff_bound) and f.diff_bound > 0


@examples(0.5)
@given(float_matrices(min_rows=1, max_rows=5, n_cols=2), st.one_of(st.none(), float_matrices(max_rows=5, n_cols=2)),
       EPS, st.sampled_from(["tcmc", "nte", "nonprivate", "x"]))
def test_two_sample_tests(X, Y, eps, method):
    if Y is None:  # paired samples of equal size (the valid case for tcmc)
        Y = X[::-1] + 0.5
    f = TS.make_features("me", locations=np.array([[0.0, 0.0], [1.0, 1.0]]), lengthscale=1.0)
    kw = {} if method == "nonprivate" else {"epsilon": eps, "delta": 1e-5, "random_state": 0, "n_null": 99}
    ok, res = _rejects(TS.run_test, X, Y, method=method, features=f, **kw)
    if ok:
        assert math.isfinite(res.statistic) and 0 <= res.p_value <= 1 and 0 <= res.naive_p_value <= 1


@examples()
@given(float_matrices(max_rows=5, max_cols=3), POS)
def test_paper_statistic(Z, gamma):
    ok, s = _rejects(paper_statistic, Z, gamma)
    if ok:
        assert math.isfinite(s)


# --------------------------------------------------------------------------- audit and guards
from dpkme import audit as AUD  # noqa: E402
from dpkme import cost as COST  # noqa: E402
from dpkme.privacy import bandwidth as BW  # noqa: E402
from dpkme.privacy import leaks as LK  # noqa: E402


@examples(2)
@given(mostly(hnp.arrays(np.float64, st.integers(2, 50), elements=st.floats(-3, 3)), hostile_arrays(max_dims=2)),
       mostly(hnp.arrays(np.float64, st.integers(2, 50), elements=st.floats(-3, 3)), hostile_arrays(max_dims=2)),
       EPS, st.one_of(st.just(0.0), DELTA), mostly(st.floats(1e-4, 0.5)))
def test_audit_scores_hostile(sd, sp, eps, delta, alpha):
    ok, res = _rejects(AUD.audit_scores, sd, sp, epsilon=eps, delta=delta, alpha=alpha)
    if ok:
        assert math.isfinite(res.epsilon_lower_bound) and res.epsilon_lower_bound >= 0
        assert 0 <= res.q_upper <= 1 and 0 <= res.p_lower <= 1


@examples(2)
@given(ints(0, 100), ints(1, 100), mostly(st.floats(1e-6, 0.5)))
def test_clopper_pearson_hostile(k, n, alpha):
    ok, u = _rejects(AUD.clopper_pearson_upper, k, n, alpha)
    if ok:
        ok2, lo = _rejects(AUD.clopper_pearson_lower, k, n, alpha)
        # the bounds are vectorised: a list such as n=[3] is a valid (1-element) input
        p_hat = np.asarray(k, dtype=float) / np.asarray(n, dtype=float)
        assert ok2 and np.all((0 <= lo) & (lo <= p_hat) & (p_hat <= u) & (u <= 1))


@examples(0.5)
@given(st.sampled_from(sorted(AUD.AUDITS)), EPS, ints(10, 30))
def test_audit_functions_hostile(name, eps, runs):
    ok, res = _rejects(AUD.run_audit, name, settings=AUD.AuditSettings(epsilon=eps, runs=runs))
    if ok:
        assert res.runs == int(runs) and math.isfinite(res.epsilon_lower_bound)


@examples(2)
@given(st.sampled_from(COST.COST_MECHANISMS), st.dictionaries(
    st.sampled_from(["n", "n_points", "dim", "m", "n_candidates", "k", "n_features", "n_iter", "runs", "audit",
                     "n_query", "grid_shape", "weights", "solver", "n_null", "grid_size", "pairs", "preset"]),
    st.one_of(hostile_scalar, st.sampled_from(["gaussian", "simplex", "preimage", "all", "interactive"]),
              st.tuples(st.integers(-2, 5000), st.integers(-2, 5000))), max_size=6))
def test_estimate_cost_hostile(mechanism, params):
    ok, est = _rejects(COST.estimate_cost, mechanism, **params)
    if ok:
        assert math.isfinite(est.seconds) and est.seconds > 0 and math.isfinite(est.nbytes) and est.nbytes > 0
        assert isinstance(est.needs_confirmation, bool)


@examples()
@given(float_matrices(min_rows=1, max_rows=8, max_cols=2), mostly(st.just([0.1, 1.0, 10.0]), hostile_arrays(max_dims=1)),
       EPS)
def test_private_lengthscale_hostile(X, grid, eps):
    ok, c = _rejects(BW.private_lengthscale, X, grid=grid, epsilon=eps, random_state=0)
    if ok:
        assert c.lengthscale in c.grid and math.isfinite(c.lengthscale) and c.lengthscale > 0
        p = c.probabilities()
        assert _finite(p) and p.sum() == pytest.approx(1.0)


@examples()
@given(float_matrices(min_rows=1, max_rows=6, max_cols=2), POS, mostly(st.floats(-5, 5)), POS)
def test_find_data_dependent_inputs_hostile(X, ell, center, scale):
    ok, found = _rejects(LK.find_data_dependent_inputs, X, lengthscale=ell, center=center, scale=scale)
    if ok:
        assert all(isinstance(r, LK.LeakRecord) for r in found)
