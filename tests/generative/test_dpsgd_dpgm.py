"""DP-SGD and DPGM (dpkme.generative): clipping, noise, Poisson sampling, data access, models, results, export.

Tiny settings throughout (a few dozen rows, 8 hidden units); JAX compiles each architecture once per test.
"""

from __future__ import annotations

import json
import math

import numpy as np
import pytest

jax = pytest.importorskip("jax")
optax = pytest.importorskip("optax")
jnp = jax.numpy

from dpkme.datasets import DIGITS_INFO, load_digits  # noqa: E402
from dpkme.generative import (  # noqa: E402
    CLIP_MARGIN,
    DPSGD,
    RBM,
    VAE,
    DPGMResult,
    default_capacity,
    dpgm,
    encode_records,
    poisson_batches,
)


def _stack(model, k=1, seed=0):
    return jax.vmap(model.init)(jax.random.split(jax.random.key(seed), k))


def _records(n=40, d=4, seed=0, c=0):
    rng = np.random.default_rng(seed)
    U = rng.random((n, d))
    if c:
        U = np.concatenate([U, np.eye(c)[rng.integers(0, c, n)]], axis=1)
    return U.astype(np.float32)


# --------------------------------------------------------------------------- per-example gradients
@pytest.mark.parametrize("model", [
    pytest.param(VAE(n_features=5, n_classes=3, hidden=(7, 6), latent_dim=2, likelihood="gaussian"),
                 marks=pytest.mark.slow),
    pytest.param(VAE(n_features=5, hidden=(7,), latent_dim=2), marks=pytest.mark.slow),
    RBM(n_features=5, n_classes=3, n_hidden=4, cd_steps=2),
], ids=["vae-gaussian-labels", "vae-bernoulli", "rbm"])
def test_batched_clip_terms_equal_vmap_of_per_example_gradients(model):
    params = model.init(jax.random.key(0))
    X = jnp.asarray(_records(9, model.n_inputs))
    keys = jax.random.split(jax.random.key(1), 9)
    s = jnp.linspace(0.0, 1.0, 9)

    @jax.jit
    def both(params, X, keys):
        sq, losses, weighted_sum = model.clip_terms(params, X, keys)
        grads, ref_losses = jax.vmap(lambda x, k: model.per_example(params, x, k))(X, keys)
        ref_sq = sum(jnp.sum(g.reshape(9, -1) ** 2, axis=1) for g in jax.tree_util.tree_leaves(grads))
        ref = jax.tree_util.tree_map(lambda g: jnp.tensordot(s, g, axes=1), grads)
        return sq, losses, weighted_sum(s), ref_sq, ref_losses, ref

    sq, losses, got, ref_sq, ref_losses, ref = both(params, X, keys)
    np.testing.assert_allclose(np.asarray(sq), np.asarray(ref_sq), rtol=2e-5)        # float32 arithmetic
    np.testing.assert_allclose(np.asarray(losses), np.asarray(ref_losses), rtol=2e-5, atol=1e-5)
    got, ref = jax.tree_util.tree_leaves(got), jax.tree_util.tree_leaves(ref)
    for a, b in zip(got, ref):
        np.testing.assert_allclose(np.asarray(a), np.asarray(b), rtol=1e-4, atol=1e-5 * float(jnp.max(jnp.abs(b))))


_SGD: dict = {}


def _sgd(lr):
    """One optax.sgd object per learning rate: the compiled step is cached per optimizer object, so trainers of one
    architecture share one compilation (a fresh optax.sgd per trainer compiled the same step again)."""
    return _SGD.setdefault(lr, optax.sgd(lr))


def _trainer(model, X, *, clusters=None, k=1, sigma=1.0, clip=1.0, lr=1.0, q=1.0, private=True, seed=0,
             capacity=None, loss_share=0.25, divisors=None):
    return DPSGD(model=model, params=_stack(model, k), data=X,
                 clusters=np.zeros(len(X), int) if clusters is None else clusters, sampling_rate=q, clip_norm=clip,
                 noise_multiplier=sigma, optimizer=_sgd(lr), divisors=[1.0] * k if divisors is None else divisors,
                 rng=np.random.default_rng(seed), private=private, capacity=capacity, loss_share=loss_share)


def _norm(tree):
    return math.sqrt(sum(float(np.sum(np.asarray(x, np.float64) ** 2)) for x in jax.tree_util.tree_leaves(tree)))


def test_clipping_bound_holds_for_every_example():
    """The noiseless sum over one sampled example is that example's clipped gradient: norm <= C, = C when large."""
    vae = VAE(n_features=6, n_classes=2, hidden=(8,), latent_dim=2)
    X = _records(12, 6, c=2)
    tr = _trainer(vae, X, sigma=0.0, clip=0.05)
    key = jax.random.key(3)
    for i in range(12):
        idx = np.zeros((1, tr.capacity), np.int32)
        mask = np.zeros((1, tr.capacity), np.float32)
        idx[0, 0], mask[0, 0] = i, 1.0
        sums, loss_sums = tr._accumulate(tr.params, tr._data, jnp.asarray(idx), jnp.asarray(mask), key)
        joint = math.hypot(_norm(sums), float(loss_sums[0]))          # gradient part and noisy-loss coordinate
        assert joint <= 0.05 * (1 + 1e-6)
        assert _norm(sums) == pytest.approx(0.05 * math.sqrt(1 - 0.25**2) * (1 - CLIP_MARGIN), rel=1e-4)


def test_noise_has_the_calibrated_scale():
    """No rows sampled: the SGD(lr=1) update is minus the noise, N(0, (sigma C)^2) per coordinate."""
    rbm = RBM(n_features=30, n_hidden=60)
    tr = _trainer(rbm, _records(5, 30), sigma=1.7, clip=0.3, q=1e-12)
    before = tr.export_params()
    tr.step()
    diff = np.concatenate([np.ravel(b - a) for a, b in zip(jax.tree_util.tree_leaves(tr.export_params()),
                                                           jax.tree_util.tree_leaves(before))])
    n = diff.size                                             # 30*60 + 30 + 60 = 1890 coordinates
    target = 1.7 * 0.3
    assert abs(diff.mean()) < 5 * target / math.sqrt(n)
    assert abs(diff.std() / target - 1) < 5 / math.sqrt(2 * n)   # ~5 standard errors of the sample std


def test_poisson_batches_cover_the_sample_exactly_and_never_truncate():
    members = [np.arange(0, 100, 2), np.arange(1, 100, 2)]
    idx, mask = poisson_batches(members, 1.0, 8, np.random.default_rng(0))
    assert idx.shape == (7, 2, 8)                                   # 50 rows per cluster in rounds of 8
    for s in range(2):
        rows = idx[:, s][mask[:, s] == 1]
        assert sorted(rows.tolist()) == members[s].tolist()         # each row exactly once, in its cluster
    assert np.all(idx[mask == 0] == 0)
    # inclusion frequency ~ q, independently per row
    counts = np.zeros(100)
    rng = np.random.default_rng(1)
    for _ in range(400):
        idx, mask = poisson_batches(members, 0.2, 64, rng)
        np.add.at(counts, idx[mask == 1], 1)
    assert abs(counts.mean() / 400 - 0.2) < 5 * math.sqrt(0.2 * 0.8 / 40000)
    empty = poisson_batches([np.arange(3)], 1e-12, 4, np.random.default_rng(0))
    assert empty[0].shape == (1, 1, 4) and empty[1].sum() == 0
    assert default_capacity(64) == 104


@pytest.mark.slow
def test_a_draw_larger_than_the_capacity_is_processed_in_rounds():
    vae = VAE(n_features=3, hidden=(4,), latent_dim=2)
    X = _records(20, 3)
    tr = _trainer(vae, X, sigma=0.0, q=1.0, capacity=6)         # 20 rows > 6 slots: 4 rounds
    seen = []
    orig = tr._accumulate

    def spy(params, data, idx, mask, key):
        seen.append(np.asarray(mask).sum())
        return orig(params, data, idx, mask, key)

    tr._accumulate = spy
    loss = tr.step()
    assert seen == [6, 6, 6, 2] and math.isfinite(loss) and tr.steps_done == 1


class Sentinel:
    """A private table that records every read and refuses reads once locked."""

    def __init__(self, X):
        self._X = np.asarray(X)
        self.reads = 0
        self.locked = False

    def _read(self):
        if self.locked:
            raise AssertionError("the private table was read after training started")
        self.reads += 1
        return self._X

    def __array__(self, dtype=None, copy=None):
        X = self._read()
        return X if dtype is None else X.astype(dtype)

    def __len__(self):
        return len(self._read())

    @property
    def shape(self):
        return self._read().shape


@pytest.mark.slow
def test_sentinel_table_is_not_read_after_training_starts(tiny_run):
    """dpgm reads the table before training; from the first progress call on, any read raises (the module's
    private run trains on a Sentinel: the k-means, the training and every later use of the release)."""
    res, S, calls = tiny_run
    assert S.reads >= 1 and S.locked and calls[-1][0] == calls[-1][1] == res.steps_run
    res.sample(5, rng=0)
    json.dumps(res.to_dict())                                       # export reads nothing either


@pytest.mark.slow
def test_the_compiled_step_sees_the_data_only_through_clipped_gradients():
    """Neighbouring tables (one row changed to an outlier), same randomness, no noise: the updates differ
    by at most C (the clipped contribution plus the loss coordinate), however extreme the row."""
    vae = VAE(n_features=4, hidden=(8,), latent_dim=2, likelihood="gaussian")
    X = _records(10, 4)
    Y = X.copy()
    Y[3] = [1.0, 0.0, 1.0, 0.0]
    a = _trainer(vae, X, sigma=0.0, clip=0.2, seed=5)
    b = _trainer(vae, Y, sigma=0.0, clip=0.2, seed=5)
    a.step()
    b.step()
    delta = [np.asarray(p) - np.asarray(r) for p, r in zip(jax.tree_util.tree_leaves(a.params),
                                                           jax.tree_util.tree_leaves(b.params))]
    assert 0 < math.sqrt(sum(float(np.sum(d.astype(np.float64) ** 2)) for d in delta)) <= 0.2 * (1 + 1e-5)


def test_non_private_twin_neither_clips_nor_noises():
    vae = VAE(n_features=4, hidden=(8,), latent_dim=2)
    X = _records(10, 4)
    tr = _trainer(vae, X, private=False, sigma=5.0, clip=1e-6)
    idx = np.arange(10, dtype=np.int32)[None]
    sums, ls = tr._accumulate(tr.params, tr._data, jnp.asarray(idx), jnp.ones((1, 10), jnp.float32),
                              jax.random.key(0))
    assert _norm(sums) > 1e-3                                     # far above the (ignored) clip norm
    assert float(ls[0]) > 0


# --------------------------------------------------------------------------- models
def test_models_sample_records_in_the_unit_box_with_labels():
    for model in (VAE(n_features=3, n_classes=4, hidden=(5,), latent_dim=2, likelihood="gaussian"),
                  RBM(n_features=3, n_classes=4, n_hidden=5, n_gibbs=3)):   # as below: one compile
        u, y = model.sample(model.init(jax.random.key(0)), jax.random.key(1), 7)
        assert u.shape == (7, 3) and np.all((u >= 0) & (u <= 1))
        assert y.shape == (7,) and set(y.tolist()) <= set(range(4))


def test_samplers_compile_a_few_padded_sizes_and_slice():
    from dpkme.generative import _sampling
    from dpkme.generative.rbm import _RBM_SAMPLE
    from dpkme.generative.vae import _VAE_SAMPLE

    assert [_sampling.padded_size(m) for m in (0, 1, 8, 9, 100, 128, 129)] == [8, 8, 8, 16, 128, 128, 256]
    for model, cache in ((VAE(n_features=3, n_classes=4, hidden=(5,), latent_dim=2), _VAE_SAMPLE),
                         (RBM(n_features=3, n_classes=4, n_hidden=5, n_gibbs=3), _RBM_SAMPLE)):
        params = model.init(jax.random.key(0))
        u, y = model.sample(params, jax.random.key(0), 2)
        base = cache[model]._cache_size()        # JAX may share one cache between jit wrappers: count the growth
        for n in (1, 3, 5, 7, 8):                               # five sizes, one compiled size (8)
            u, y = model.sample(params, jax.random.key(n), n)
            assert u.shape == (n, 3) and y.shape == (n,)
        assert cache[model]._cache_size() == base
        for n in (9, 13, 16):
            assert model.sample(params, jax.random.key(n), n)[0].shape == (n, 3)
        assert cache[model]._cache_size() == base + 1
        # a draw above the chunk size is drawn in chunks of padded sizes, with different keys per chunk
        old = _sampling.SAMPLE_CHUNK
        try:
            _sampling.SAMPLE_CHUNK = 8
            u, y = model.sample(params, jax.random.key(0), 19)   # 8 + 8 + 3 (padded to 8)
        finally:
            _sampling.SAMPLE_CHUNK = old
        assert u.shape == (19, 3) and y.shape == (19,) and cache[model]._cache_size() == base + 1
        assert not np.allclose(u[:8], u[8:16])


def test_encode_records_scales_clips_and_one_hot_encodes():
    R = encode_records([[-1.0, 5.0], [20.0, 2.5]], bounds=([0, 0], [10, 5]), labels=[2, 0], n_classes=3)
    np.testing.assert_allclose(R, [[0, 1, 0, 0, 1], [1, 0.5, 1, 0, 0]])
    with pytest.raises(ValueError, match="range"):
        encode_records([[0.0]], bounds=(0, 1), labels=[3], n_classes=3)


# --------------------------------------------------------------------------- dpgm
@pytest.fixture(scope="module")
def blobs():
    rng = np.random.default_rng(0)
    X = np.concatenate([rng.normal(2, 0.5, (40, 3)), rng.normal(7, 0.5, (40, 3))])
    y = np.repeat([0, 1], 40)
    return X, y


@pytest.fixture(scope="module")
def tiny_run(blobs):
    """One private run (k-means, k = 2), asserted on by several tests: one calibration, one compilation. Its table
    is a Sentinel locked from the first progress call on."""
    X, y = blobs
    S = Sentinel(X)
    calls = []

    def progress(step, total, loss, eps):
        S.locked = True
        calls.append((step, total, loss, eps))

    res = dpgm(S, bounds=(0, 10), labels=y, n_classes=2, n_private=80, k=2, epochs=2, batch_size=16,
               hidden=(8,), latent_dim=2, epsilon=4.0, delta=1e-5, progress=progress)
    return res, S, calls


@pytest.fixture(scope="module")
def tiny_release(tiny_run):
    return tiny_run[0]


@pytest.mark.slow
def test_dpgm_release_samples_labelled_rows_within_bounds(tiny_release):
    res = tiny_release
    assert res.k == 2 and res.private and res.noise_source == "os-entropy"
    X, y, comp = res.sample_with_labels(50, rng=0)
    assert X.shape == (50, 3) and np.all((X >= 0) & (X <= 10))
    assert set(y.tolist()) <= {0, 1} and set(comp.tolist()) <= {0, 1}
    assert res.sample(4, rng=1).shape == (4, 3)
    np.testing.assert_array_equal(res.sample(6, rng=2), res.sample(6, rng=2))    # sampling is explicit in rng
    assert res.config["likelihood"] == "bernoulli"          # one shared declared range


@pytest.mark.slow
def test_dpgm_privacy_charge_and_export_without_seeds(tiny_release):
    res = tiny_release
    pr = res.privacy
    assert pr["epsilon"] <= 4.0 and pr["neighbouring"] == "add-remove"
    assert pr["epsilon_pld"] <= pr["epsilon_rdp"] and pr["epsilon_paper"] > 0
    assert pr["steps_run"] == pr["steps_planned"] == res.plan.steps
    c = res.charge
    assert c.mechanism == "approx-dp" and c.epsilon == pytest.approx(res.epsilon) and c.delta == 1e-5
    assert c.relation.value == "add-remove" and res.charge is c        # typed relation; computed once, one id
    d = res.to_dict()
    text = json.dumps(d)
    assert d["differentially_private"] is True

    def keys(o):
        if isinstance(o, dict):
            for k, v in o.items():
                yield k
                yield from keys(v)
        elif isinstance(o, list):
            for v in o:
                yield from keys(v)

    assert not any("seed" in k for k in keys(d)) and "seed" not in text
    back = DPGMResult.from_dict(json.loads(text))
    assert (back.charge.epsilon, back.charge.relation) == (c.epsilon, c.relation)   # the cost, read back
    np.testing.assert_allclose(back.sample(5, rng=3), res.sample(5, rng=3), rtol=1e-6)
    assert back.epsilon == pytest.approx(res.epsilon)
    # the run's wall-clock time (a weak timing side channel) is not in the release, and is optional on reading
    assert "seconds" not in d and back.seconds is None and res.seconds > 0
    assert DPGMResult.to_dict(res, include_timing=True)["seconds"] == pytest.approx(res.seconds)
    assert DPGMResult.from_dict(res.to_dict(include_timing=True)).seconds == pytest.approx(res.seconds)


@pytest.mark.slow
def test_seeded_twin_and_cancelled_runs_are_labelled(blobs):
    X, y = blobs
    # the settings of the by-label test below (one model per class, no k-means): one calibration, one compiled step
    common = dict(bounds=(0, 10), labels=y, n_classes=2, n_private=80, partition="labels", epochs=2, batch_size=16,
                  hidden=(8,), latent_dim=2)
    twin = dpgm(X, private=False, rng=0, **common)
    assert twin.plan is None and twin.to_dict()["differentially_private"] is False
    assert twin.charge is None                     # a non-private result carries no charge (PrivateResult)
    seeded = dpgm(X, epsilon=4.0, rng=0, **common)
    assert seeded.noise_source == "seeded" and seeded.to_dict()["differentially_private"] is False
    calls = []
    stopped = dpgm(X, epsilon=4.0, progress=lambda *a: calls.append(a) or len(calls) < 2, **common)
    assert stopped.cancelled and stopped.steps_run == 2 < stopped.plan.steps
    assert stopped.charge.epsilon == pytest.approx(stopped.plan.epsilon)     # the planned run is charged
    assert stopped.privacy["epsilon_run"] < stopped.privacy["epsilon"]


@pytest.mark.slow
def test_partition_by_labels_trains_one_model_per_class_and_labels_rows_by_model(blobs):
    X, y = blobs
    res = dpgm(X, bounds=(0, 10), labels=y, n_classes=2, n_private=80, partition="labels", k=5, epochs=2,
               batch_size=16, hidden=(8,), latent_dim=2, epsilon=4.0, delta=1e-5)
    assert res.k == 2 and res.config["partition"] == "labels" and res.model.n_classes == 0   # k follows the classes
    assert res.plan.kmeans is None and res.epsilon <= 4.0                  # no k-means: the budget is DP-SGD's
    np.testing.assert_allclose(res.weights, [0.5, 0.5])                    # public, nothing counted from the rows
    np.testing.assert_allclose(res.noisy_sizes, [40.0, 40.0])
    Xs, ys, comp = res.sample_with_labels(40, rng=0)
    np.testing.assert_array_equal(ys, comp)                                # model s generates class s
    assert Xs.shape == (40, 3) and np.all((Xs >= 0) & (Xs <= 10))
    back = DPGMResult.from_dict(json.loads(json.dumps(res.to_dict())))
    np.testing.assert_array_equal(back.sample_with_labels(40, rng=0)[1], ys)
    with pytest.raises(ValueError, match="partition='labels'"):
        dpgm(X, bounds=(0, 10), n_private=80, partition="labels", epsilon=1.0)
    with pytest.raises(ValueError, match="partition"):
        dpgm(X, bounds=(0, 10), labels=y, n_classes=2, n_private=80, partition="classes", epsilon=1.0)


@pytest.mark.slow
def test_dpgm_trains_rbms(blobs):
    X, y = blobs
    res = dpgm(X, bounds=(0, 10), labels=y, n_classes=2, n_private=80, k=1, model="rbm", n_hidden=6, epochs=1,
               batch_size=16, learning_rate=0.01, epsilon=2.0)
    Xs, ys, _ = res.sample_with_labels(5, rng=0)
    assert Xs.shape == (5, 3) and res.model_config["kind"] == "rbm" and ys.shape == (5,)


@pytest.mark.parametrize("kwargs, match", [
    (dict(epsilon=0.0), "epsilon"),
    (dict(k=0), "k"),
    (dict(clip_norm=0.0), "clip_norm"),
    (dict(clip_norm=-1.0), "clip_norm"),
    (dict(n_private=None), "n_private"),
    (dict(batch_size=500), "batch_size"),
    (dict(bounds=None), "bounds"),
    (dict(bounds=(1, 0)), "bounds"),
    (dict(labels=np.zeros(80, int), n_classes=None), "n_classes"),
    (dict(model="gan"), "model"),
    (dict(likelihood="poisson"), "likelihood"),
    (dict(learning_rate=0.0), "learning_rate"),
])
def test_dpgm_refuses_bad_values(blobs, kwargs, match):
    X, _ = blobs
    base = dict(bounds=(0, 10), n_private=80, k=2, epochs=1, batch_size=16, epsilon=1.0)
    with pytest.raises(ValueError, match=match):
        dpgm(X, **{**base, **kwargs})


def test_dpgm_refuses_nan(blobs):
    X, _ = blobs
    X = X.copy()
    X[3, 1] = np.nan
    with pytest.raises(ValueError, match="non-finite"):
        dpgm(X, bounds=(0, 10), n_private=80, epochs=1, batch_size=16)


# --------------------------------------------------------------------------- the bundled digits
def test_digits_are_bundled_with_their_licence():
    X, y = load_digits()
    assert X.shape == (1797, 64) and y.shape == (1797,) and X.min() == 0 and X.max() == 16
    assert np.bincount(y).min() >= 170
    assert "CC BY 4.0" in DIGITS_INFO["licence"] and "10.24432/C50P49" in DIGITS_INFO["citation"]
    df = load_digits(as_frame=True)
    assert list(df.columns[:2]) == ["pixel_0_0", "pixel_0_1"] and df.columns[-1] == "digit"
    from pathlib import Path

    import tomllib

    pyproject = tomllib.loads((Path(__file__).resolve().parents[2] / "pyproject.toml").read_text())
    assert "data/*.csv.gz" in pyproject["tool"]["setuptools"]["package-data"]["dpkme.datasets"]


# --------------------------------------------------------------------------- audit of one DP-SGD step
@pytest.mark.slow
def test_audit_passes_the_library_step_and_catches_a_step_without_clipping():
    from dpkme.audit import AuditSettings, audit_dpsgd

    ok = audit_dpsgd(settings=AuditSettings(runs=1500, alpha=1e-3, random_state=1))
    assert ok.passed and ok.epsilon_lower_bound < ok.claimed_epsilon
    assert ok.params["sum_shift"] <= ok.params["clip_norm"] * (1 + 1e-5) < ok.params["raw_canary_gradient_norm"]
    bad = audit_dpsgd(settings=AuditSettings(runs=1500, alpha=1e-3, random_state=1), variant="no-clip")
    assert bad.violation and bad.epsilon_lower_bound > bad.claimed_epsilon
    with pytest.raises(ValueError, match="variant"):
        audit_dpsgd(settings=AuditSettings(runs=20), variant="half-noise")


@pytest.mark.slow
def test_dpgm_on_a_bundled_table_uses_the_gaussian_likelihood():
    """Per-column declared bounds (a table in its own units): the auto rule picks the Gaussian likelihood."""
    from dpkme.datasets import load_sample

    df, info = load_sample("iris")
    X = df[list(info.numeric_columns)].to_numpy(dtype=float)
    species = sorted(df[info.label_column].unique())              # the declared classes (public)
    y = df[info.label_column].map({s: i for i, s in enumerate(species)}).to_numpy()
    bounds = ([4.0, 2.0, 1.0, 0.0], [8.0, 4.5, 7.0, 2.6])          # declared ranges in cm
    res = dpgm(X, bounds=bounds, labels=y, n_classes=3, n_private=150, k=1, epochs=2, batch_size=30, hidden=(8,),
               latent_dim=2, epsilon=3.0)
    assert res.config["likelihood"] == "gaussian" and "rho" in res.params
    Xs, ys, _ = res.sample_with_labels(20, rng=0)
    assert np.all((Xs >= bounds[0]) & (Xs <= bounds[1])) and set(ys.tolist()) <= {0, 1, 2}
