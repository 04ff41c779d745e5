"""Privacy review of DPGM's DP-SGD (issue 17 review): attack tests on the mechanism, not on utility.

Each test states the property a DP-SGD step must have under add/remove of one row and tries to break
it: a row that contributes nothing must change nothing (no data-dependent normalisation), a row's
whole contribution (all k models and the noisy-loss coordinate) is at most C and confined to its
cluster's model, the clipped sums are computed at full float32 precision whatever the platform's
default matmul precision (TF32 on recent NVIDIA GPUs, bfloat16 on TPU), and the audit sees the
default configuration (loss coordinate included).
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np
import pytest

jax = pytest.importorskip("jax")
optax = pytest.importorskip("optax")
jnp = jax.numpy

from dpkme.generative import DPSGD, RBM, VAE  # noqa: E402


@dataclass(frozen=True)
class Linear:
    r"""A stub architecture: loss :math:`\langle w, x\rangle`, gradient :math:`x` (deterministic, exact norms)."""

    n_inputs: int

    kind = "stub"
    has_loss = True

    def init(self, key):
        return {"w": jnp.ones((self.n_inputs,), jnp.float32)}

    def clip_terms(self, params, X, keys):
        sq = jnp.sum(X**2, axis=1)
        losses = X @ params["w"]

        def weighted_sum(s):
            return {"w": s @ X}

        return sq, losses, weighted_sum


def _stack(model, k=1, seed=0):
    return jax.vmap(model.init)(jax.random.split(jax.random.key(seed), k))


def _trainer(model, X, *, k=1, clusters=None, sigma=0.0, clip=1.0, q=1.0, capacity=None, loss_share=0.25,
             divisors=None, seed=0):
    return DPSGD(model=model, params=_stack(model, k), data=X,
                 clusters=np.zeros(len(X), int) if clusters is None else clusters, sampling_rate=q, clip_norm=clip,
                 noise_multiplier=sigma, optimizer=optax.sgd(1.0), divisors=[1.0] * k if divisors is None else divisors,
                 rng=np.random.default_rng(seed), capacity=capacity, loss_share=loss_share)


def _flat(tree):
    return np.concatenate([np.ravel(np.asarray(x, np.float64)) for x in jax.tree_util.tree_leaves(tree)])


# --------------------------------------------------------------------------- no data-dependent normalisation
def test_a_row_that_contributes_nothing_changes_no_output():
    """Add/remove: D' = D + a row with zero gradient and zero loss. Without noise, every output of the step
    (parameters and the reported noisy loss) must be identical. Attack on the loss normaliser: dividing the
    noisy loss sum by q times the *actual* row count would tell N from N + 1 (the row count is private
    under add/remove; only the declared N, hence q and the expected batch, are public)."""
    stub = Linear(3)
    X = np.random.default_rng(0).random((10, 3)).astype(np.float32)
    Xp = np.concatenate([X, np.zeros((1, 3), np.float32)])          # the added row: contributes exactly 0
    outs = []
    for data in (X, Xp):
        tr = _trainer(stub, data, clip=100.0, q=1.0, capacity=16, divisors=[10.0])
        loss = tr.step()
        outs.append((_flat(tr.params), loss))
    np.testing.assert_array_equal(outs[0][0], outs[1][0])
    assert outs[0][1] == outs[1][1]


def test_the_loss_normaliser_is_the_declared_expected_batch():
    """The reported loss is the noisy loss sum over a public number: ``expected_batch`` when given, else the
    sum of the public divisors; never a function of the row count."""
    stub = Linear(2)
    X = np.full((4, 2), 0.5, np.float32)                            # loss 1.0 per row, gradient norm 0.71
    tr = DPSGD(model=stub, params=_stack(stub), data=X, clusters=np.zeros(4, int), sampling_rate=1.0, clip_norm=10.0,
               noise_multiplier=0.0, optimizer=optax.sgd(0.0), divisors=[4.0], rng=np.random.default_rng(0),
               capacity=8, expected_batch=8.0, loss_bound=100.0)
    assert tr.step() == pytest.approx(4 * 1.0 / 8.0, rel=1e-5)      # 4 rows of loss 1 over the declared 8
    tr = _trainer(stub, X, clip=10.0, capacity=8, divisors=[5.0])
    assert tr.step() == pytest.approx(4 * 1.0 / 5.0, rel=1e-5)      # default: the sum of the divisors
    with pytest.raises(ValueError, match="expected_batch"):
        DPSGD(model=stub, params=_stack(stub), data=X, clusters=np.zeros(4, int), sampling_rate=1.0, clip_norm=1.0,
              noise_multiplier=0.0, optimizer=optax.sgd(0.0), divisors=[1.0], rng=np.random.default_rng(0),
              expected_batch=0.0)


# --------------------------------------------------------------------------- full-precision clipped sums
def _dot_generals(jaxpr):
    for eqn in jaxpr.eqns:
        if eqn.primitive.name == "dot_general":
            yield eqn
        for v in eqn.params.values():
            for sub in (v if isinstance(v, (list, tuple)) else [v]):
                inner = getattr(sub, "jaxpr", None)
                if inner is not None:
                    yield from _dot_generals(getattr(inner, "jaxpr", inner))


@pytest.mark.parametrize("model", [
    pytest.param(VAE(n_features=5, n_classes=3, hidden=(7, 6), latent_dim=2, likelihood="gaussian"),
                 marks=pytest.mark.slow),
    RBM(n_features=5, n_classes=3, n_hidden=9, cd_steps=2),
], ids=["vae", "rbm"])
def test_clipped_sums_are_computed_at_full_float32_precision(model):
    """Clipping bounds each example's contribution only if the weighted sum is computed as precisely as the
    norms. The norms are elementwise float32; the sum is a matrix product, which JAX runs in TF32 on recent
    NVIDIA GPUs (10-bit mantissa: relative error ~1e-3, ten times CLIP_MARGIN) and in bfloat16 on TPU by
    default. The products that form the clipped sums must carry HIGHEST precision, whatever the ambient
    default (set to bfloat16 here; CPU ignores it at run time, so the jaxpr is inspected)."""
    k = 2
    X = np.random.default_rng(0).random((12, model.n_inputs)).astype(np.float32)
    tr = _trainer(model, X, k=k, clusters=np.arange(12) % k, capacity=24)
    shapes = {tuple(leaf.shape) for leaf in jax.tree_util.tree_leaves(tr.params)}
    idx = jnp.zeros((k, tr.capacity), jnp.int32)
    mask = jnp.ones((k, tr.capacity), jnp.float32)
    with jax.default_matmul_precision("bfloat16"):
        jpr = jax.make_jaxpr(lambda p, d, i, m, key: tr._accumulate(p, d, i, m, key))(
            tr.params, tr._data, idx, mask, jax.random.key(0))
    sums = [e for e in _dot_generals(jpr.jaxpr) if tuple(e.outvars[0].aval.shape) in shapes]
    assert sums, "no parameter-shaped matrix product found: the check would be vacuous"
    highest = (jax.lax.Precision.HIGHEST, jax.lax.Precision.HIGHEST)
    assert all(e.params["precision"] == highest for e in sums), [e.params["precision"] for e in sums]


# --------------------------------------------------------------------------- a row's whole contribution
@pytest.mark.slow
@pytest.mark.parametrize("model", [
    VAE(n_features=4, n_classes=2, hidden=(8,), latent_dim=2, likelihood="gaussian"),
    RBM(n_features=4, n_classes=2, n_hidden=5, cd_steps=2),
], ids=["vae", "rbm"])
def test_an_added_row_moves_only_its_clusters_model_and_by_at_most_C(model):
    """k = 3 models; D' = D + an extreme row of cluster 1; the same per-example randomness for the rows of D
    (it depends on the slot only, as in the audit). Over all k models' sums and the k loss coordinates,
    ||out(D') - out(D)|| <= C, and the models of clusters 0 and 2 receive exactly the same sum."""
    k, n, C = 3, 12, 0.05
    rng = np.random.default_rng(1)
    X = rng.random((n, model.n_inputs)).astype(np.float32)
    outlier = np.zeros((1, model.n_inputs), np.float32)
    outlier[0, 0] = outlier[0, -1] = 1.0
    clusters = np.concatenate([np.arange(n) % k, [1]])
    tr = _trainer(model, np.concatenate([X, outlier]), k=k, clusters=clusters, clip=C, capacity=16)
    idx = np.zeros((k, tr.capacity), np.int32)
    mask = np.zeros((k, tr.capacity), np.float32)
    for s in range(k):
        rows = np.flatnonzero(clusters == s)
        idx[s, : rows.size], mask[s, : rows.size] = rows, 1.0
    mask_d = mask.copy()
    mask_d[1, np.flatnonzero(clusters == 1).size - 1] = 0.0          # "D": the added row's slot masked out
    key = jax.random.key(7)
    (s_p, l_p), (s_d, l_d) = (tr._accumulate(tr.params, tr._data, jnp.asarray(idx), jnp.asarray(m), key)
                              for m in (mask, mask_d))
    per_model = [np.concatenate([np.ravel(np.asarray(a, np.float64)[s] - np.asarray(b, np.float64)[s])
                                 for a, b in zip(jax.tree_util.tree_leaves(s_p), jax.tree_util.tree_leaves(s_d))])
                 for s in range(k)]
    assert np.all(per_model[0] == 0) and np.all(per_model[2] == 0)
    dl = np.asarray(l_p, np.float64) - np.asarray(l_d, np.float64)
    assert dl[0] == 0 and dl[2] == 0
    joint = math.hypot(float(np.linalg.norm(per_model[1])), float(dl[1]))
    assert 0.5 * C < joint <= C * (1 + 1e-5)                         # the outlier is clipped, not dropped


# --------------------------------------------------------------------------- the audit sees the default step
def test_audit_refuses_a_bad_loss_share():
    from dpkme.audit import AuditSettings, audit_dpsgd

    with pytest.raises(ValueError, match="loss_share"):
        audit_dpsgd(settings=AuditSettings(runs=20), loss_share=1.0)


@pytest.mark.slow
def test_audit_covers_the_noisy_loss_coordinate_by_default():
    """The library's default step releases a noisy loss next to the noisy gradients (share 0.25 of C); the
    audit projects both (the shift it measures includes the loss coordinate) and still passes."""
    from dpkme.audit import AuditSettings, audit_dpsgd

    res = audit_dpsgd(settings=AuditSettings(runs=400, alpha=1e-3, random_state=2))
    assert res.params["loss_share"] == 0.25 and "loss" in res.scalar
    assert res.params["sum_shift"] <= res.params["clip_norm"] * (1 + 1e-5)
    assert res.passed


# --------------------------------------------------------------------------- the noise: per model, per coordinate
@pytest.mark.slow
def test_every_model_and_loss_coordinate_gets_its_own_noise_of_std_sigma_C():
    """No row sampled: the SGD(lr=1) update of each of the k models is minus its own N(0, (sigma C)^2 I), independent
    between models (shared noise would let S_s - S_t be read without noise), and the reported loss is the sum of
    k independent N(0, (sigma C)^2) loss coordinates over the public rescaling."""
    k, sigma, C, B = 3, 1.3, 0.4, 50.0
    rbm = RBM(n_features=20, n_hidden=30)
    X = np.random.default_rng(0).random((6, 20)).astype(np.float32)
    tr = DPSGD(model=rbm, params=_stack(rbm, k), data=X, clusters=np.arange(6) % k, sampling_rate=1e-12, clip_norm=C,
               noise_multiplier=sigma, optimizer=optax.sgd(1.0), divisors=[1.0] * k, rng=np.random.default_rng(3),
               loss_bound=B, expected_batch=2.0)
    before = tr.export_params()
    losses = [tr.step()]
    after = tr.export_params()
    per_model = np.stack([np.concatenate([np.ravel(b[s] - a[s]) for a, b in zip(jax.tree_util.tree_leaves(after),
                                                                                 jax.tree_util.tree_leaves(before))])
                          for s in range(k)]).astype(np.float64)
    n = per_model.shape[1]                                           # 20*30 + 20 + 30 = 650 per model
    for s in range(k):
        assert abs(per_model[s].std() / (sigma * C) - 1) < 5 / math.sqrt(2 * n)
    corr = np.corrcoef(per_model)
    assert np.all(np.abs(corr[np.triu_indices(k, 1)]) < 5 / math.sqrt(n))
    losses += [tr.step() for _ in range(299)]
    c_loss = 0.25 * C * (1 - 1e-4)
    target = math.sqrt(k) * sigma * C * B / c_loss / 2.0             # sd of the reported loss with nothing sampled
    assert abs(np.std(losses) / target - 1) < 5 / math.sqrt(2 * len(losses))
