r"""Variational autoencoder with MLP encoder and decoder (Kingma & Welling 2014), for DP-SGD.

A record is :math:`x = (u, y)`: the feature block :math:`u \in [0,1]^{d}` (columns scaled to their
declared bounds, see :func:`~dpkme.generative.dpgm`) and, when the table has labels, a one-hot label
block :math:`y \in \{0,1\}^{c}`. The encoder maps :math:`x` through ReLU layers to
:math:`(\mu, \log s^2) \in \mathbb R^{2m}`; the decoder maps a latent :math:`z \in \mathbb R^m`
through ReLU layers to logits :math:`\ell \in \mathbb R^{d+c}`. The per-example loss is the
negative ELBO with one reparameterised sample :math:`z = \mu + s\odot\xi`, :math:`\xi\sim\mathcal N(0,I)`,

.. math::
    \mathcal L(x) = -\log p(u\mid z) - \log p(y\mid z)
    + \tfrac12\sum_j\bigl(\mu_j^2 + s_j^2 - \log s_j^2 - 1\bigr),

with

* ``likelihood="bernoulli"``: :math:`-\log p(u\mid z) = \sum_i \mathrm{softplus}(\ell_i) - u_i\ell_i`
  (cross-entropy with targets in [0, 1], e.g. pixel intensities :math:`v/16`);
* ``likelihood="gaussian"``: mean :math:`m = \mathrm{sigmoid}(\ell)` in the unit box and a learned
  per-column std :math:`\tau_i = 0.01 + \mathrm{softplus}(\rho_i)`,
  :math:`-\log p(u\mid z) = \sum_i \frac{(u_i-m_i)^2}{2\tau_i^2} + \log\tau_i + \frac12\log 2\pi`;
* labels: softmax cross-entropy on the label block.

Sampling (:meth:`VAE.sample`) draws :math:`z \sim \mathcal N(0, I)`, decodes it, returns the mean
intensity :math:`\mathrm{sigmoid}(\ell)` (Bernoulli) or :math:`m + \tau\odot\xi` clipped to [0, 1]
(Gaussian), and draws the label from the softmax. Everything here is a pure function of the
parameters and explicit JAX keys; JAX is imported lazily.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

from .._validation import check_in, check_positive_int

__all__ = ["LIKELIHOODS", "VAE"]

#: Likelihoods of the feature block.
LIKELIHOODS = ("bernoulli", "gaussian")


def _dense_init(key, n_in: int, n_out: int):
    import jax
    import jax.numpy as jnp

    w = jax.random.normal(key, (n_in, n_out), dtype=jnp.float32) * math.sqrt(2.0 / (n_in + n_out))
    return {"w": w, "b": jnp.zeros((n_out,), jnp.float32)}


def _mlp(layers, h):
    import jax

    for layer in layers:
        h = jax.nn.relu(h @ layer["w"] + layer["b"])
    return h


@dataclass(frozen=True)
class VAE:
    r"""An MLP variational autoencoder over records (features in [0, 1], optional one-hot label).

    Parameters
    ----------
    n_features : int
        :math:`d`, the number of feature columns (scaled to [0, 1]).
    n_classes : int, default=0
        :math:`c`, the number of label classes (0: no label block).
    hidden : tuple of int, default=(256,)
        Widths of the encoder's hidden layers; the decoder mirrors them.
    latent_dim : int, default=8
        :math:`m`, the latent dimension.
    likelihood : {"bernoulli", "gaussian"}, default="bernoulli"
        Likelihood of the feature block.

    Attributes
    ----------
    kind : str
        ``"vae"``.
    n_inputs : int
        :math:`d + c`.
    has_loss : bool
        True: the training gradient is the gradient of :meth:`loss`.

    Examples
    --------
    >>> import jax
    >>> vae = VAE(n_features=4, n_classes=2, hidden=(8,), latent_dim=2)
    >>> params = vae.init(jax.random.key(0))
    >>> float(vae.loss(params, jax.numpy.array([0.1, 0.9, 0.5, 0.0, 1.0, 0.0]), jax.random.key(1))) > 0
    True
    >>> u, y = vae.sample(params, jax.random.key(2), 3)
    >>> u.shape, y.shape
    ((3, 4), (3,))
    """

    n_features: int
    n_classes: int = 0
    hidden: tuple = (256,)
    latent_dim: int = 8
    likelihood: str = "bernoulli"

    kind = "vae"
    has_loss = True

    def __post_init__(self):
        check_positive_int(self.n_features, name="n_features")
        check_positive_int(self.n_classes, name="n_classes", minimum=0)
        check_positive_int(self.latent_dim, name="latent_dim")
        hid = tuple(self.hidden)
        if not hid:
            raise ValueError("hidden must list at least one layer width, e.g. hidden=(256,).")
        object.__setattr__(self, "hidden", tuple(check_positive_int(h, name="hidden width") for h in hid))
        check_in(self.likelihood, LIKELIHOODS, name="likelihood")

    @property
    def n_inputs(self) -> int:
        return self.n_features + self.n_classes

    def init(self, key):
        """Initial parameters of one model (Glorot-normal weights, zero biases) from a JAX key.

        Parameters
        ----------
        key : jax.Array
            A JAX PRNG key (public randomness: the initialisation is not private).

        Returns
        -------
        dict
            The parameter pytree.
        """
        import jax
        import jax.numpy as jnp

        sizes_in = (self.n_inputs, *self.hidden)
        sizes_dec = (self.latent_dim, *self.hidden[::-1])
        keys = jax.random.split(key, 2 * len(self.hidden) + 4)
        enc = [_dense_init(keys[i], sizes_in[i], sizes_in[i + 1]) for i in range(len(self.hidden))]
        dec = [_dense_init(keys[len(self.hidden) + i], sizes_dec[i], sizes_dec[i + 1]) for i in range(len(self.hidden))]
        j = 2 * len(self.hidden)
        params = {"enc": enc, "mu": _dense_init(keys[j], self.hidden[-1], self.latent_dim),
                  "logvar": _dense_init(keys[j + 1], self.hidden[-1], self.latent_dim), "dec": dec,
                  "out": _dense_init(keys[j + 2], self.hidden[0], self.n_inputs)}
        if self.likelihood == "gaussian":
            params["rho"] = jnp.full((self.n_features,), -1.0, jnp.float32)
        return params

    def _decode(self, params, z):
        h = _mlp(params["dec"], z)
        return h @ params["out"]["w"] + params["out"]["b"]

    def _tau(self, params):
        import jax

        return 0.01 + jax.nn.softplus(params["rho"])

    def _layers(self, params):
        """``(name, layer dict)`` of every dense layer, in forward order."""
        out = [(f"enc{i}", p) for i, p in enumerate(params["enc"])]
        out += [("mu", params["mu"]), ("logvar", params["logvar"])]
        out += [(f"dec{i}", p) for i, p in enumerate(params["dec"])]
        return [*out, ("out", params["out"])]

    def _forward(self, params, X, keys, taps=None):
        """Per-example losses of a batch ``X`` (B, n_inputs), and every dense layer's input.

        ``taps`` (optional) are zeros added to every layer's pre-activation (and to ``rho`` per
        example): their gradient is each example's backpropagated signal, from which per-example
        gradient norms and clipped sums follow without materialising per-example gradients.
        """
        import jax
        import jax.numpy as jnp

        def t(name):
            return 0.0 if taps is None else taps[name]

        acts = {}
        h = X
        for i, layer in enumerate(params["enc"]):
            acts[f"enc{i}"] = h
            h = jax.nn.relu(h @ layer["w"] + layer["b"] + t(f"enc{i}"))
        acts["mu"] = acts["logvar"] = h
        mu = h @ params["mu"]["w"] + params["mu"]["b"] + t("mu")
        logvar = jnp.clip(h @ params["logvar"]["w"] + params["logvar"]["b"] + t("logvar"), -12.0, 8.0)
        xi = jax.vmap(lambda kk: jax.random.normal(kk, (self.latent_dim,), mu.dtype))(keys)
        g = mu + jnp.exp(0.5 * logvar) * xi
        for i, layer in enumerate(params["dec"]):
            acts[f"dec{i}"] = g
            g = jax.nn.relu(g @ layer["w"] + layer["b"] + t(f"dec{i}"))
        acts["out"] = g
        logits = g @ params["out"]["w"] + params["out"]["b"] + t("out")
        d = self.n_features
        u, lu = X[:, :d], logits[:, :d]
        if self.likelihood == "bernoulli":
            rec = jnp.sum(jax.nn.softplus(lu) - u * lu, axis=1)
        else:
            tau = 0.01 + jax.nn.softplus(params["rho"] + t("rho"))
            m = jax.nn.sigmoid(lu)
            rec = jnp.sum(0.5 * ((u - m) / tau) ** 2 + jnp.log(tau) + 0.5 * math.log(2 * math.pi), axis=1)
        if self.n_classes:
            rec = rec - jnp.sum(X[:, d:] * jax.nn.log_softmax(logits[:, d:], axis=1), axis=1)
        kl = 0.5 * jnp.sum(mu**2 + jnp.exp(logvar) - logvar - 1.0, axis=1)
        return rec + kl, acts

    def loss(self, params, x, key):
        r"""Negative ELBO of one record :math:`x` (shape ``(n_inputs,)``) with one reparameterised sample.

        Parameters
        ----------
        params : dict
            Parameters of one model.
        x : jax.Array
            One record (features in [0, 1], then the one-hot label).
        key : jax.Array
            JAX key of the reparameterisation noise.

        Returns
        -------
        jax.Array
            Scalar loss (nats).
        """
        return self._forward(params, x[None, :], key[None])[0][0]

    def per_example(self, params, x, key):
        """Gradient of :meth:`loss` for one record, and the loss: ``(grads, loss)``.

        Parameters
        ----------
        params : dict
            Parameters of one model.
        x : jax.Array
            One record.
        key : jax.Array
            JAX key.

        Returns
        -------
        tuple
            ``(grads, loss)``, ``grads`` with the structure of ``params``.
        """
        import jax

        loss, grads = jax.value_and_grad(self.loss)(params, x, key)
        return grads, loss

    def clip_terms(self, params, X, keys):
        r"""Per-example gradient norms and a weighted-sum function for a batch, without per-example gradients.

        For a dense layer :math:`z_i = a_iW + b`, example :math:`i`'s gradient is
        :math:`(a_i^\top\delta_i, \delta_i)` with :math:`\delta_i = \partial\mathcal L_i/\partial z_i`, so
        :math:`\|g_i\|^2 = \sum_{\rm layers}(\|a_i\|^2 + 1)\|\delta_i\|^2` (+ the ``rho`` part) and
        :math:`\sum_i s_ig_i = (A^\top\mathrm{diag}(s)\Delta, s^\top\Delta)`: one forward and one backward
        pass for the whole batch (Goodfellow 2015's per-example norm trick).

        Parameters
        ----------
        params : dict
            Parameters of one model.
        X : jax.Array
            Batch of records, shape (B, n_inputs).
        keys : jax.Array
            One JAX key per record.

        Returns
        -------
        sq_norms : jax.Array
            (B,) squared L2 norms of the per-example gradients over all parameters (an example whose
            gradient is not finite gets norm 0, loss 0 and contributes nothing to weighted sums).
        losses : jax.Array
            (B,) per-example losses.
        weighted_sum : callable
            ``weighted_sum(s)`` is :math:`\sum_i s_ig_i` with the structure of ``params``.
        """
        import jax
        import jax.numpy as jnp

        B = X.shape[0]
        taps = {name: jnp.zeros((B, layer["b"].shape[0]), X.dtype) for name, layer in self._layers(params)}
        if self.likelihood == "gaussian":
            taps["rho"] = jnp.zeros((B, self.n_features), X.dtype)

        def total(tp):
            losses, acts = self._forward(params, X, keys, tp)
            return jnp.sum(losses), (losses, acts)

        deltas, (losses, acts) = jax.grad(total, has_aux=True)(taps)
        sq = jnp.zeros((B,), X.dtype)
        for name, _ in self._layers(params):
            sq = sq + (jnp.sum(acts[name] ** 2, axis=1) + 1.0) * jnp.sum(deltas[name] ** 2, axis=1)
        if self.likelihood == "gaussian":
            sq = sq + jnp.sum(deltas["rho"] ** 2, axis=1)
        # an example with a non-finite gradient contributes nothing (rather than turning the sum into NaN,
        # which would make the failure itself depend on that example)
        ok = jnp.isfinite(sq)
        sq = jnp.where(ok, sq, 0.0)
        losses = jnp.where(jnp.isfinite(losses), losses, 0.0)
        deltas = {name: jnp.where(ok[:, None], dl, 0.0) for name, dl in deltas.items()}
        acts = {name: jnp.where(ok[:, None], a, 0.0) for name, a in acts.items()}

        def dense(name, s):
            sd = deltas[name] * s[:, None]
            return {"w": acts[name].T @ sd, "b": jnp.sum(sd, axis=0)}

        def weighted_sum(s):
            out = {"enc": [dense(f"enc{i}", s) for i in range(len(params["enc"]))],
                   "mu": dense("mu", s), "logvar": dense("logvar", s),
                   "dec": [dense(f"dec{i}", s) for i in range(len(params["dec"]))], "out": dense("out", s)}
            if self.likelihood == "gaussian":
                out["rho"] = s @ deltas["rho"]
            return out

        return sq, losses, weighted_sum

    def sample(self, params, key, n: int):
        """Draw ``n`` synthetic records from one model.

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
            In [0, 1] (scale back to the declared bounds).
        labels : ndarray of shape (n,) or None
            Class indices, ``None`` without a label block.
        """
        import numpy as np

        u, labels = _vae_sample(self, params, key, int(n))
        return np.asarray(u, dtype=np.float64), (None if labels is None else np.asarray(labels, dtype=np.int64))

    def config(self) -> dict:
        """The public architecture, JSON-friendly."""
        return {"kind": self.kind, "n_features": self.n_features, "n_classes": self.n_classes,
                "hidden": list(self.hidden), "latent_dim": self.latent_dim, "likelihood": self.likelihood}


def _vae_sample_impl(model: VAE, params, key, n: int):
    import jax
    import jax.numpy as jnp

    k1, k2, k3 = jax.random.split(key, 3)
    z = jax.random.normal(k1, (n, model.latent_dim), jnp.float32)
    logits = model._decode(params, z)
    lu = logits[:, : model.n_features]
    if model.likelihood == "bernoulli":
        u = jax.nn.sigmoid(lu)
    else:
        u = jnp.clip(jax.nn.sigmoid(lu) + model._tau(params) * jax.random.normal(k2, lu.shape), 0.0, 1.0)
    labels = None
    if model.n_classes:
        labels = jax.random.categorical(k3, logits[:, model.n_features:], axis=-1)
    return u, labels


_VAE_SAMPLE = {}


def _vae_sample(model: VAE, params, key, n: int):
    """Compiled sampler: ``n`` padded to a few sizes (:mod:`dpkme.generative._sampling`), one compilation each."""
    import jax

    from ._sampling import padded_draw

    fn = _VAE_SAMPLE.get(model)
    if fn is None:
        fn = _VAE_SAMPLE[model] = jax.jit(_vae_sample_impl, static_argnums=(0, 3))
    return padded_draw(fn, model, params, key, n)
