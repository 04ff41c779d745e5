r"""Bernoulli–Bernoulli restricted Boltzmann machine trained by contrastive divergence (CD-k), for DP-SGD.

Visible units :math:`v \in [0,1]^{V}` (the record: features scaled to [0, 1], then the one-hot
label), hidden units :math:`h \in \{0,1\}^{H}`, energy :math:`E(v,h) = -b^\top v - c^\top h - v^\top W h`
(Hinton 2002; Acs et al. Section II-A). The per-example CD-k "gradient" of the negative
log-likelihood is

.. math::
    g(v_0) = -\bigl(v_0\,\hat h_0^\top - v_k\,\hat h_k^\top,\; v_0 - v_k,\; \hat h_0 - \hat h_k\bigr)
    \quad\text{for}\ (W, b, c),

with :math:`\hat h = \mathrm{sigmoid}(c + W^\top v)` and :math:`v_k` the visible sample after
:math:`k` Gibbs steps started at :math:`v_0` (the data itself is used as the visible probabilities
of the positive phase, as usual for grey levels). It is not the gradient of a loss, so DP-SGD clips
and noises it directly, exactly like a loss gradient: each example's vector is clipped to norm
:math:`C` and the sum gets :math:`\mathcal N(0,\sigma^2C^2)` noise. The reported per-example loss is
the reconstruction cross-entropy of :math:`v_0` against the first reconstruction's probabilities.

Sampling (:meth:`RBM.sample`) runs ``n_gibbs`` Gibbs steps from uniform random visible units and
returns the last visible probabilities; the label is drawn from the label units' probabilities,
normalised. Initialisation as in the paper: :math:`W \sim \mathcal N(0, 0.01^2)`, zero biases.
"""

from __future__ import annotations

from dataclasses import dataclass

from .._validation import check_positive_int

__all__ = ["RBM"]


@dataclass(frozen=True)
class RBM:
    r"""A Bernoulli–Bernoulli RBM over records (features in [0, 1], optional one-hot label).

    Parameters
    ----------
    n_features : int
        Number of feature columns (scaled to [0, 1]).
    n_classes : int, default=0
        Number of label classes (0: no label units).
    n_hidden : int, default=64
        :math:`H`, hidden units.
    cd_steps : int, default=1
        :math:`k` of CD-k.
    n_gibbs : int, default=200
        Gibbs steps when sampling.

    Attributes
    ----------
    kind : str
        ``"rbm"``.
    n_inputs : int
        Visible units, ``n_features + n_classes``.
    has_loss : bool
        False: the training direction is the CD-k estimate, not a loss gradient.

    Examples
    --------
    >>> import jax
    >>> rbm = RBM(n_features=4, n_classes=2, n_hidden=3)
    >>> params = rbm.init(jax.random.key(0))
    >>> grads, loss = rbm.per_example(params, jax.numpy.array([0.1, 0.9, 0.5, 0.0, 1.0, 0.0]), jax.random.key(1))
    >>> grads["w"].shape, float(loss) > 0
    ((6, 3), True)
    """

    n_features: int
    n_classes: int = 0
    n_hidden: int = 64
    cd_steps: int = 1
    n_gibbs: int = 200

    kind = "rbm"
    has_loss = False

    def __post_init__(self):
        check_positive_int(self.n_features, name="n_features")
        check_positive_int(self.n_classes, name="n_classes", minimum=0)
        check_positive_int(self.n_hidden, name="n_hidden")
        check_positive_int(self.cd_steps, name="cd_steps")
        check_positive_int(self.n_gibbs, name="n_gibbs")

    @property
    def n_inputs(self) -> int:
        return self.n_features + self.n_classes

    def init(self, key):
        """Initial parameters (:math:`W \\sim \\mathcal N(0, 0.01^2)`, zero biases) from a JAX key.

        Parameters
        ----------
        key : jax.Array
            A JAX PRNG key (public randomness).

        Returns
        -------
        dict
            ``{"w": (V, H), "b": (V,), "c": (H,)}``.
        """
        import jax
        import jax.numpy as jnp

        return {"w": 0.01 * jax.random.normal(key, (self.n_inputs, self.n_hidden), jnp.float32),
                "b": jnp.zeros((self.n_inputs,), jnp.float32), "c": jnp.zeros((self.n_hidden,), jnp.float32)}

    def per_example(self, params, x, key):
        """CD-k direction for one record and its reconstruction cross-entropy: ``(grads, loss)``.

        Parameters
        ----------
        params : dict
            Parameters of one model.
        x : jax.Array
            One record (visible probabilities).
        key : jax.Array
            JAX key of the Gibbs chain.

        Returns
        -------
        tuple
            ``(grads, loss)``, ``grads`` with the structure of ``params`` (descent direction).
        """
        import jax.numpy as jnp

        (ph0, v, ph), loss = self.per_example_phases(params, x, key)
        grads = {"w": -(jnp.outer(x, ph0) - jnp.outer(v, ph)), "b": -(x - v), "c": -(ph0 - ph)}
        return grads, loss

    def clip_terms(self, params, X, keys):
        r"""Per-example CD-k norms and a weighted-sum function for a batch.

        The per-example directions are small (:math:`V H + V + H` numbers), so they are
        materialised (``jax.vmap`` of :meth:`per_example`) and their norms computed exactly
        (a closed form of the difference of two outer products would cancel in floating point).

        Parameters
        ----------
        params : dict
            Parameters of one model.
        X : jax.Array
            Batch of records, shape (B, n_inputs).
        keys : jax.Array
            One JAX key per record (its Gibbs chain; the same chain as :meth:`per_example`).

        Returns
        -------
        sq_norms : jax.Array
            (B,) squared L2 norms of the per-example directions over all parameters.
        losses : jax.Array
            (B,) reconstruction cross-entropies.
        weighted_sum : callable
            ``weighted_sum(s)`` is :math:`\sum_i s_ig_i` with the structure of ``params``.
        """
        import jax
        import jax.numpy as jnp

        grads, losses = jax.vmap(lambda x, kk: self.per_example(params, x, kk))(X, keys)
        sq = sum(jnp.sum(g.reshape(g.shape[0], -1) ** 2, axis=1) for g in jax.tree_util.tree_leaves(grads))

        def weighted_sum(s):
            return jax.tree_util.tree_map(lambda g: jnp.tensordot(s, g, axes=1), grads)

        return sq, losses, weighted_sum

    def per_example_phases(self, params, x, key):
        """The two phases of CD-k for one record: ``((h0_prob, v_k, hk_prob), loss)``.

        Parameters
        ----------
        params : dict
            Parameters of one model.
        x : jax.Array
            One record (visible probabilities).
        key : jax.Array
            JAX key of the Gibbs chain.

        Returns
        -------
        tuple
            ``((h0_prob, v_k, hk_prob), loss)``.
        """
        import jax
        import jax.numpy as jnp

        w, b, c = params["w"], params["b"], params["c"]
        keys = jax.random.split(key, 2 * self.cd_steps + 1)
        ph0 = jax.nn.sigmoid(c + x @ w)
        h = jax.random.bernoulli(keys[0], ph0).astype(jnp.float32)
        v, ph, first_logits = x, ph0, None
        for i in range(self.cd_steps):
            logits = b + w @ h
            if first_logits is None:
                first_logits = logits
            v = jax.random.bernoulli(keys[2 * i + 1], jax.nn.sigmoid(logits)).astype(jnp.float32)
            ph = jax.nn.sigmoid(c + v @ w)
            h = jax.random.bernoulli(keys[2 * i + 2], ph).astype(jnp.float32)
        loss = jnp.sum(jax.nn.softplus(first_logits) - x * first_logits)
        return (ph0, v, ph), loss

    def sample(self, params, key, n: int):
        """Draw ``n`` synthetic records by Gibbs sampling (``n_gibbs`` steps from uniform noise).

        Parameters
        ----------
        params : dict
            Parameters of one model.
        key : jax.Array
            JAX key.
        n : int
            Number of records (drawn at a padded size and sliced, so that few sizes are compiled:
            :mod:`dpkme.generative._sampling`).

        Returns
        -------
        features : ndarray of shape (n, n_features)
            Visible probabilities in [0, 1] (scale back to the declared bounds).
        labels : ndarray of shape (n,) or None
            Class indices, ``None`` without label units.
        """
        import numpy as np

        pv, labels = _rbm_sample(self, params, key, int(n))
        return (np.asarray(pv, dtype=np.float64),
                None if labels is None else np.asarray(labels, dtype=np.int64))

    def config(self) -> dict:
        """The public architecture, JSON-friendly."""
        return {"kind": self.kind, "n_features": self.n_features, "n_classes": self.n_classes,
                "n_hidden": self.n_hidden, "cd_steps": self.cd_steps, "n_gibbs": self.n_gibbs}


def _rbm_sample_impl(model: RBM, params, key, n: int):
    import jax
    import jax.numpy as jnp

    w, b, c = params["w"], params["b"], params["c"]
    k0, kl, kc = jax.random.split(key, 3)
    v0 = jax.random.bernoulli(k0, 0.5, (n, model.n_inputs)).astype(jnp.float32)

    def body(carry, k):
        v, _ = carry
        k1, k2 = jax.random.split(k)
        h = jax.random.bernoulli(k1, jax.nn.sigmoid(c + v @ w)).astype(jnp.float32)
        pv = jax.nn.sigmoid(b + h @ w.T)
        return (jax.random.bernoulli(k2, pv).astype(jnp.float32), pv), None

    (_, pv), _ = jax.lax.scan(body, (v0, v0), jax.random.split(kc, model.n_gibbs))
    labels = None
    if model.n_classes:
        p = pv[:, model.n_features:] + 1e-6
        labels = jax.random.categorical(kl, jnp.log(p / p.sum(axis=1, keepdims=True)), axis=-1)
    return pv[:, : model.n_features], labels


_RBM_SAMPLE = {}


def _rbm_sample(model: RBM, params, key, n: int):
    """Compiled sampler: ``n`` padded to a few sizes (:mod:`dpkme.generative._sampling`), one compilation each."""
    import jax

    from ._sampling import padded_draw

    fn = _RBM_SAMPLE.get(model)
    if fn is None:
        fn = _RBM_SAMPLE[model] = jax.jit(_rbm_sample_impl, static_argnums=(0, 3))
    return padded_draw(fn, model, params, key, n)
