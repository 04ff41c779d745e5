r"""DP-SGD for k models at once (one per cluster): Poisson sampling, per-example clipping, Gaussian noise.

One step (:meth:`DPSGD.step`), for every row :math:`i` of the table independently included with
probability :math:`q` (Poisson sampling, the public rate :math:`q = L/N`):

1. per-example gradients :math:`g_i = \nabla_\theta \mathcal L(\theta_{c_i}, x_i)` of the model of the
   row's cluster :math:`c_i` (vectorised over the batch, see below);
2. global L2 clipping over all parameters of that model:
   :math:`\bar g_i = g_i\min(1, C_g/\|g_i\|_2)`;
3. per-cluster sums :math:`S_s = \sum_{i: c_i = s}\bar g_i`, plus :math:`\mathcal N(0,\sigma^2C^2I)`
   on every coordinate of every :math:`S_s` (clusters that got no row are noised too);
4. :math:`\tilde g_s = \tilde S_s / \max(1, q\hat n_s)` (the expected batch of cluster :math:`s`,
   from its released noisy size :math:`\hat n_s`: public), and an ``optax`` update of every model.

**Neighbouring relation**: add/remove one row. A row enters one cluster's sum with norm at most
:math:`C`, so the noised vector :math:`(S_1,\dots,S_k)` has L2 sensitivity :math:`C` and one step is
the Poisson-subsampled Gaussian mechanism with noise multiplier :math:`\sigma`
(:mod:`dpkme.generative.accounting`).

**A noisy loss for free.** Progress displays want a loss, but the loss on the private batch is a
function of the private data. Each example contributes, next to its clipped gradient, the
coordinate :math:`\gamma C\,\mathrm{clip}(\mathcal L_i, -B, B)/B` (:math:`\gamma` = ``loss_share``,
:math:`B` = ``loss_bound``), and the gradient is clipped to :math:`C_g = C\sqrt{1-\gamma^2}`; the
joint vector has norm :math:`\le C`, so the noisy loss sum rides in the same Gaussian mechanism at no
extra privacy cost. The reported loss is its noisy sum rescaled, over the public expected batch
:math:`qN` (``expected_batch``: :math:`N` the declared size, never the actual row count, which is
private under add/remove). ``loss_share=0`` turns it off (no loss reported, full clip norm for the gradient).

**Shapes.** XLA compiles one step for fixed padded shapes: ``capacity`` slots per cluster
(default :math:`L_s + 4\sqrt{L_s} + 8` rounded up to a grid of steps of about 19 %, :math:`L_s` the
largest public expected cluster batch :math:`q\hat n_s`) with a 0/1 mask, all clusters processed together by
``jax.vmap``. A Poisson draw larger than the capacity (probability about :math:`3\cdot10^{-5}`
per cluster and step at the default) is processed in several padded rounds whose clipped sums are
added before the noise: never truncated. The capacity is a function of public numbers only; the
number of rounds depends on the draw (hence on the private cluster sizes) but only changes how the
same sum is computed, not the output's distribution: it is visible through **timing** only (an extra
round costs one more compiled call), which dpkme does not hide; wall-clock time is left out of
exported results by default.

**Per-example gradients without a loop.** Each model provides ``clip_terms``: the per-example
gradient norms and clipped sums of a batch. The VAE computes them from one forward and one backward
pass (for a dense layer, example :math:`i`'s weight gradient is the outer product
:math:`a_i^\top\delta_i`, whose norm is :math:`\|a_i\|\|\delta_i\|`; Goodfellow 2015), which
equals ``jax.vmap(jax.grad(loss))`` (tested) at a fraction of the cost; the RBM materialises
its small per-example CD-k directions with ``jax.vmap``. Gradients are clipped to
:math:`C(1-10^{-4})` (:data:`CLIP_MARGIN`) so that float32 rounding of the norms cannot exceed
:math:`C`. The norms are elementwise float32; the clipped sums (matrix products) are computed at
``"highest"`` matmul precision in a private run, whatever the platform's default (TF32 on recent
NVIDIA GPUs and bfloat16 on TPU round each example's share by up to about :math:`10^{-3}` or
more, ten times the margin).

**Randomness.** Which rows are sampled (numpy) and the Gaussian noise and per-example model
randomness (JAX keys with 64 bits of state each step) are drawn from the caller's numpy Generator;
nothing of it is stored. The noise is generated in float32 (the computation's precision); a
floating-point attack on the low bits of Gaussian samples (cf. Mironov 2012 for Laplace) is not
addressed.

**What touches the data.** The private table is copied to the device once, when the trainer is
built; afterwards it is read only inside the jit-compiled step (:meth:`DPSGD.step`), whose only
outputs are the updated parameters and optimiser state (functions of the noised sums) and the
noisy loss. The non-private twin (``private=False``) skips clipping and noise and is labelled so
everywhere; it computes the batch gradient directly (``jax.grad`` of the summed loss), which is what
the throughput benchmark compares DP-SGD with.
"""

from __future__ import annotations

import math
from collections import OrderedDict
from typing import Any

import numpy as np

from .._validation import check_positive_float, check_positive_int

__all__ = ["CLIP_MARGIN", "DPSGD", "default_capacity", "poisson_batches"]


def default_capacity(batch_size: int) -> int:
    r"""Padded batch capacity for an expected batch :math:`L`: :math:`L + 4\sqrt L + 8`, rounded up to a multiple of 8.

    Parameters
    ----------
    batch_size : int
        Expected batch size :math:`L \ge 1`.

    Returns
    -------
    int

    Examples
    --------
    >>> default_capacity(256), default_capacity(1)
    (328, 16)
    """
    L = check_positive_int(batch_size, name="batch_size")
    return int(8 * math.ceil((L + 4.0 * math.sqrt(L) + 8.0) / 8.0))


def _bucket(capacity: int) -> int:
    r"""Round a capacity up to the grid 8, 16, 24, 32, 40, 48, 56, 64, 80, 96, 112, 128, 160, 184, 216, 256, 312,
    368, ... (multiples of 8 near :math:`8\cdot 2^{j/4}`: steps of about 19 %), so that runs whose noisy cluster
    sizes differ a little share one compiled step."""
    j = 0
    while True:
        c = 8 * math.ceil(2.0 ** (j / 4.0))
        c = 8 * math.ceil(c / 8.0)
        if c >= capacity:
            return int(c)
        j += 1


def poisson_batches(members, sampling_rate: float, capacity: int, rng: np.random.Generator):
    r"""One Poisson sample of the table at rate :math:`q`, split by cluster into padded chunks.

    Every row is included independently with probability :math:`q` (one uniform draw per row of the
    table, whatever its cluster); the included rows of cluster :math:`s` fill row :math:`s` of
    ``ceil(max_s n_s / capacity)`` rounds of ``capacity`` slots (at least one round), the unused
    slots padded with index 0 and mask 0. Nothing is dropped.

    Parameters
    ----------
    members : list of ndarray
        Row indices of each cluster (disjoint). One uniform is drawn for every index up to the
        largest one, so the draw for a row does not depend on how the rows are split.
    sampling_rate : float
        :math:`q \in (0, 1]`.
    capacity : int
        Slots per cluster and round.
    rng : numpy.random.Generator
        Source of the sampling randomness.

    Returns
    -------
    idx : ndarray of shape (rounds, k, capacity), int32
        Row indices (0 in padding slots).
    mask : ndarray of shape (rounds, k, capacity), float32
        1 for a sampled row, 0 for padding.

    Examples
    --------
    >>> members = [np.array([0, 2, 4, 6, 8]), np.array([1, 3])]
    >>> idx, mask = poisson_batches(members, 1.0, 3, np.random.default_rng(0))
    >>> idx.shape, idx[:, 0].tolist(), mask[:, 1].tolist()
    ((2, 2, 3), [[0, 2, 4], [6, 8, 0]], [[1.0, 1.0, 0.0], [0.0, 0.0, 0.0]])
    """
    cap = check_positive_int(capacity, name="capacity")
    n_rows = 1 + max((int(np.max(m)) for m in members if len(m)), default=-1)
    keep = rng.random(n_rows) < float(sampling_rate)
    sel = [np.asarray(m)[keep[np.asarray(m, dtype=np.int64)]] if len(m) else np.zeros(0, np.int64) for m in members]
    rounds = max(1, max(-(-len(x) // cap) for x in sel))
    idx = np.zeros((rounds, len(members), cap), np.int32)
    mask = np.zeros((rounds, len(members), cap), np.float32)
    for s, rows in enumerate(sel):
        for j in range(rounds):
            part = rows[j * cap:(j + 1) * cap]
            idx[j, s, : part.size] = part
            mask[j, s, : part.size] = 1.0
    return idx, mask


#: Compiled step functions, shared by trainers of the same architecture, number of models, privacy and
#: optimiser object (the numbers -- clip norm, noise, divisors -- are arguments, so a new epsilon or clip
#: norm reuses the compilation). A few entries, least recently used dropped.
_COMPILED: OrderedDict = OrderedDict()
_COMPILED_MAX = 8


def _compiled(model, k: int, private: bool, optimizer):
    """The jit-compiled ``(accumulate, apply, fused)`` of one configuration (cached)."""
    key = (model, int(k), bool(private), id(optimizer))
    hit = _COMPILED.get(key)
    if hit is not None and hit[0] is optimizer:
        _COMPILED.move_to_end(key)
        return hit[1]
    import jax
    import jax.numpy as jnp
    import optax

    def one_cluster(params_s, x, mask, keys, c):
        sq, losses, weighted_sum = model.clip_terms(params_s, x, keys)
        if private:
            scale = jnp.minimum(1.0, c["c_grad"] / jnp.maximum(jnp.sqrt(jnp.maximum(sq, 0.0)), 1e-30)) * mask
            lossc = c["c_loss"] * jnp.clip(losses, -c["loss_bound"], c["loss_bound"]) / c["loss_bound"] * mask
            # the clipped sum at full float32 precision, whatever the platform's default: TF32 (recent NVIDIA
            # GPUs) or bfloat16 (TPU) products would let one example's share exceed c_grad by up to ~1e-3,
            # ten times CLIP_MARGIN (the norms above are elementwise float32)
            with jax.default_matmul_precision("highest"):
                summed = weighted_sum(scale)
        else:
            scale, lossc = mask, losses * mask
            summed = weighted_sum(scale)
        return summed, jnp.sum(lossc)

    def accumulate(params, data, idx, mask, key, c):
        x = data[idx]                                   # (k, cap, n_inputs): read inside the step only
        keys = jax.random.split(key, idx.shape[0] * idx.shape[1]).reshape(idx.shape)
        return jax.vmap(one_cluster, in_axes=(0, 0, 0, 0, None))(params, x, mask, keys, c)

    def apply(params, opt_state, sums, loss_sums, n_real, key, c):
        leaves, treedef = jax.tree_util.tree_flatten(sums)
        if private:
            nkeys = jax.random.split(key, len(leaves) + 1)
            leaves = [l + c["noise_sd"] * jax.random.normal(kk, l.shape, l.dtype) for l, kk in zip(leaves, nkeys[1:])]
            loss_sums = loss_sums + c["noise_sd"] * jax.random.normal(nkeys[0], loss_sums.shape, loss_sums.dtype)
        div = c["divisors"]
        grads = jax.tree_util.tree_unflatten(treedef, [l / div.reshape((-1,) + (1,) * (l.ndim - 1)) for l in leaves])
        updates, opt_state = optimizer.update(grads, opt_state, params)
        params = optax.apply_updates(params, updates)
        if private:
            scale = c["loss_bound"] / jnp.where(c["c_loss"] > 0, c["c_loss"], jnp.nan) / c["expected_batch"]
            loss = jnp.sum(loss_sums) * scale
        else:
            loss = jnp.sum(loss_sums) / jnp.maximum(n_real, 1.0)
        return params, opt_state, loss

    def fused(params, opt_state, data, idx, mask, key, c):
        k1, k2 = jax.random.split(key)
        sums, ls = accumulate(params, data, idx, mask, k1, c)
        return apply(params, opt_state, sums, ls, jnp.sum(mask), k2, c)

    fns = (jax.jit(accumulate), jax.jit(apply), jax.jit(fused))
    _COMPILED[key] = (optimizer, fns)
    while len(_COMPILED) > _COMPILED_MAX:
        _COMPILED.popitem(last=False)
    return fns


def _key_from(rng: np.random.Generator):
    import jax
    import jax.numpy as jnp

    return jax.random.wrap_key_data(jnp.asarray(rng.integers(0, 2**32, size=2, dtype=np.uint32)))


#: Relative safety margin on the clip norm: per-example norms are computed in float32 (relative error
#: about 1e-6), so gradients are clipped to C * (1 - CLIP_MARGIN) and the clipped norm never exceeds C.
CLIP_MARGIN = 1e-4


class DPSGD:
    r"""DP-SGD (or its non-private twin) for ``k`` stacked models of one architecture.

    Parameters
    ----------
    model : VAE or RBM
        The architecture (:class:`~dpkme.generative.VAE`, :class:`~dpkme.generative.RBM`); it
        provides ``clip_terms(params, X, keys)`` (per-example squared norms, losses, weighted sums).
    params : pytree
        Initial parameters of the ``k`` models, stacked on a leading axis of length ``k``.
    data : array (N, n_inputs)
        The private records (features scaled to [0, 1], one-hot labels). Copied to the device here;
        not read again except inside the compiled step.
    clusters : array (N,) of int
        Cluster (model) of every row, in ``range(k)``. Private (not released); used to route
        sampled rows to their model.
    sampling_rate : float
        :math:`q \in (0, 1]`.
    clip_norm : float
        :math:`C > 0`.
    noise_multiplier : float
        :math:`\sigma \ge 0` (ignored when ``private`` is False).
    optimizer : optax.GradientTransformation
        E.g. ``optax.adam(1e-3)``; applied to the stacked parameters (elementwise optimisers treat
        the models independently).
    divisors : array (k,)
        Public expected batch of each model, :math:`\max(1, q\hat n_s)`: the noisy gradient sum is
        divided by it, and the padded capacity is sized from its maximum.
    rng : numpy.random.Generator
        Source of the sampling, the noise and the per-example model randomness.
    private : bool, default=True
        False: the non-private twin (no clipping, no noise).
    capacity : int, optional
        Padded slots per cluster (default :func:`default_capacity` of ``max(divisors)``, rounded up to
        a grid with steps of about 19 % so that similar runs reuse one compiled step).
    loss_bound : float, default=100.0
        :math:`B`: per-example losses are clipped to :math:`[-B, B]` for the noisy loss.
    loss_share : float in [0, 1), default=0.25
        :math:`\gamma`: share of the clip norm carried by the noisy loss (0: no loss reported).
    expected_batch : float, optional
        Public expected batch :math:`qN` (:math:`N` the **declared** table size, i.e. the batch size
        :math:`L`) that the noisy loss sum is divided by; default: the sum of ``divisors`` (public).
        Never the actual row count, which is private under add/remove.

    Attributes
    ----------
    params : pytree
        Current stacked parameters.
    steps_done : int
        Steps run so far.
    n_models : int
        ``k``.

    Examples
    --------
    >>> import optax
    >>> import jax
    >>> from dpkme.generative import RBM
    >>> rbm = RBM(n_features=3, n_hidden=2)
    >>> params = jax.tree_util.tree_map(lambda p: p[None], rbm.init(jax.random.key(0)))
    >>> X = np.random.default_rng(0).random((50, 3))
    >>> tr = DPSGD(model=rbm, params=params, data=X, clusters=np.zeros(50, int), sampling_rate=0.2,
    ...            clip_norm=1.0, noise_multiplier=1.0, optimizer=optax.sgd(0.01), divisors=[10.0],
    ...            rng=np.random.default_rng(1))
    >>> loss = tr.step()
    >>> tr.steps_done, bool(np.isfinite(loss))
    (1, True)
    """

    def __init__(self, *, model, params, data, clusters, sampling_rate: float, clip_norm: float,
                 noise_multiplier: float, optimizer, divisors, rng: np.random.Generator, private: bool = True,
                 capacity: int | None = None, loss_bound: float = 100.0, loss_share: float = 0.25,
                 expected_batch: float | None = None):
        import jax
        import jax.numpy as jnp

        self.model = model
        self.private = bool(private)
        self.clip_norm = check_positive_float(clip_norm, name="clip_norm")
        self.noise_multiplier = check_positive_float(noise_multiplier, name="noise_multiplier", allow_zero=True)
        self.sampling_rate = check_positive_float(sampling_rate, name="sampling_rate")
        if self.sampling_rate > 1.0:
            raise ValueError(f"sampling_rate must lie in (0, 1], got {sampling_rate!r}.")
        self.loss_bound = check_positive_float(loss_bound, name="loss_bound")
        self.loss_share = check_positive_float(loss_share, name="loss_share", allow_zero=True)
        if not self.loss_share < 1.0:
            raise ValueError(f"loss_share must lie in [0, 1), got {loss_share!r}.")
        if not isinstance(rng, np.random.Generator):
            raise ValueError(f"rng must be a numpy Generator, got {type(rng).__name__}.")
        self._rng = rng
        leaves = jax.tree_util.tree_leaves(params)
        self.n_models = int(leaves[0].shape[0])
        div = np.asarray(divisors, dtype=np.float64).reshape(-1)
        if div.shape != (self.n_models,) or not np.all(div > 0):
            raise ValueError(f"divisors must be {self.n_models} positive numbers, got {divisors!r}.")
        cl = np.asarray(clusters).reshape(-1)
        data_np = np.asarray(data, dtype=np.float32)
        if data_np.ndim != 2 or data_np.shape[0] != cl.shape[0]:
            raise ValueError(f"data ({data_np.shape}) and clusters ({cl.shape}) must have one row per record.")
        if cl.size and (cl.min() < 0 or cl.max() >= self.n_models):
            raise ValueError(f"clusters must lie in range({self.n_models}).")
        self.n_rows = int(data_np.shape[0])
        # The one read of the private table: a device copy, used only inside the compiled step.
        self._data = jnp.asarray(data_np)
        del data_np
        self._members = [np.flatnonzero(cl == s) for s in range(self.n_models)]
        self.capacity = (_bucket(default_capacity(int(math.ceil(float(div.max()))))) if capacity is None
                         else check_positive_int(capacity, name="capacity"))
        self.params = params
        self.optimizer = optimizer
        self.opt_state = jax.jit(optimizer.init)(params)
        self.steps_done = 0
        self._divisors = jnp.asarray(div.astype(np.float32))
        # the noisy loss's normaliser: public (the declared expected batch, or the public divisors), never
        # q times the actual row count, which is private under add/remove
        self._expected_batch = (float(div.sum()) if expected_batch is None
                                else check_positive_float(expected_batch, name="expected_batch"))
        self._build()

    # ------------------------------------------------------------------ compiled functions
    def _build(self) -> None:
        import jax.numpy as jnp

        gamma = self.loss_share if self.private else 0.0
        C = self.clip_norm
        self._consts = {
            "c_grad": jnp.float32(C * math.sqrt(1.0 - gamma**2) * (1.0 - CLIP_MARGIN)),
            "c_loss": jnp.float32(gamma * C * (1.0 - CLIP_MARGIN)),
            "loss_bound": jnp.float32(self.loss_bound),
            "noise_sd": jnp.float32(self.noise_multiplier * C if self.private else 0.0),
            "divisors": self._divisors,
            "expected_batch": jnp.float32(self._expected_batch),
        }
        self._accumulate_c, self._apply_c, self._fused_c = _compiled(self.model, self.n_models, self.private,
                                                                      self.optimizer)

    def _accumulate(self, params, data, idx, mask, key):
        return self._accumulate_c(params, data, idx, mask, key, self._consts)

    def _apply(self, params, opt_state, sums, loss_sums, n_real, key):
        return self._apply_c(params, opt_state, sums, loss_sums, n_real, key, self._consts)

    def _fused(self, params, opt_state, data, idx, mask, key):
        return self._fused_c(params, opt_state, data, idx, mask, key, self._consts)

    # ------------------------------------------------------------------ steps
    def step(self) -> float:
        """Run one (DP-)SGD step on a fresh Poisson sample; returns the (noisy, if private) loss.

        Returns
        -------
        float
            The step's loss estimate (NaN when ``loss_share`` is 0 in a private run).
        """
        import jax
        import jax.numpy as jnp

        idx, mask = poisson_batches(self._members, self.sampling_rate, self.capacity, self._rng)
        key = _key_from(self._rng)
        if idx.shape[0] == 1:
            self.params, self.opt_state, loss = self._fused(self.params, self.opt_state, self._data,
                                                            jnp.asarray(idx[0]), jnp.asarray(mask[0]), key)
        else:       # a draw larger than the capacity: several padded rounds, summed before the noise
            keys = jax.random.split(key, idx.shape[0] + 1)
            sums, ls = None, None
            for j in range(idx.shape[0]):
                s, l_ = self._accumulate(self.params, self._data, jnp.asarray(idx[j]), jnp.asarray(mask[j]),
                                         keys[j + 1])
                sums = s if sums is None else jax.tree_util.tree_map(jnp.add, sums, s)
                ls = l_ if ls is None else ls + l_
            self.params, self.opt_state, loss = self._apply(self.params, self.opt_state, sums, ls,
                                                            jnp.float32(mask.sum()), keys[0])
        self.steps_done += 1
        return float(loss)

    def export_params(self) -> Any:
        """The stacked parameters as numpy arrays (host copies), same structure.

        Returns
        -------
        pytree of ndarray
        """
        import jax

        return jax.tree_util.tree_map(lambda p: np.asarray(p), self.params)
