r"""Audit of one DP-SGD step (:mod:`dpkme.generative.dpsgd`): a canary row, its noisy gradient, a Clopper-Pearson bound.

The audited mechanism is the library's own compiled DP-SGD step (:class:`~dpkme.generative.DPSGD`: its
per-example gradients, clipping and per-cluster sums, then its Gaussian noise and optimiser update)
on a small VAE, with sampling rate :math:`q = 1` (every row in the batch: the step is then a Gaussian
mechanism with noise multiplier :math:`\sigma`, whose exact privacy curve is known; subsampling only
amplifies it and is audited by the accounting tests).

* Pair (add/remove): :math:`D` = ``n`` ordinary records, :math:`D' = D \cup \{x^\star\}` with a
  **canary** :math:`x^\star` whose gradient is far larger than the clip norm :math:`C` (an extreme
  record and a small :math:`C`).
* The per-example model randomness (the VAE's reparameterisation draw) is fixed and shared by both
  datasets (it is independent of the data; the guarantee holds conditionally on it), so the
  noiseless clipped sums :math:`S_D, S_{D'}` are fixed vectors and only the Gaussian noise varies.
* Released vector: the update (SGD, learning rate 1, divisor 1, so the update is
  :math:`-(S + \text{noise})`) **and** the noisy loss the step reports (the loss coordinate rides in the
  same clipped, noised vector with share ``loss_share``, the library's default 0.25; its noisy sum is
  recovered from the reported loss by the public rescaling). Scalar: that vector projected on
  :math:`u = (S_{D'} - S_D)/\|S_{D'} - S_D\|` (:math:`S` now the gradient sums and the loss
  coordinate together), a sufficient statistic: :math:`\mathcal N(S\cdot u, (\sigma C)^2)`.
* Claim: :math:`\sigma` is Balle & Wang's analytic calibration of :math:`(\varepsilon,\delta)` at unit
  sensitivity, i.e. the step claims :math:`(\varepsilon,\delta)` for sensitivity :math:`C`.

Variants: ``"correct"`` (the library's step: :math:`\|S_{D'} - S_D\| \le C`, the audit passes) and
``"no-clip"`` (the same step with clipping disabled but the noise still calibrated to :math:`C`: the
canary moves the sum by its raw gradient norm, many times :math:`C`, and the audit refutes the claim).
"""

from __future__ import annotations

import math
import time

import numpy as np

from .._validation import check_in, check_positive_int
from ..privacy.calibration import analytic_sigma
from .bounds import AuditResult
from .mechanisms import _check_common, _finish_gaussian, _seeds
from .settings import AuditSettings, _unpack

__all__ = ["DPSGD_VARIANTS", "audit_dpsgd"]

#: Variants of :func:`audit_dpsgd`.
DPSGD_VARIANTS = ("correct", "no-clip")


def audit_dpsgd(*, settings: AuditSettings | None = None, variant: str = "correct", n: int = 8,
                clip_norm: float = 0.05, loss_share: float = 0.25) -> AuditResult:
    r"""Audit one step of the library's DP-SGD on a canary pair (add/remove), or its unclipped variant.

    Parameters
    ----------
    settings : AuditSettings, optional
        The claim, the runs, the test and the seed, shared by every audit (:class:`AuditSettings`);
        fields left unset take this audit's defaults: ε = 2, δ = 1e-2 (the claim of one step), 2000 runs. The
        runs' noise keys and the public model initialisation are derived from the seed; ``progress`` is called at
        0, 0.5 and 1 (the runs are vectorised).
    variant : {"correct", "no-clip"}
        ``"no-clip"`` disables the per-example clipping (**not private**) and must be caught.
    n : int
        Ordinary rows of :math:`D`, at least 1 (default 8); :math:`D'` adds the canary.
    clip_norm : float
        :math:`C` (default 0.05: well below the canary's raw gradient norm).
    loss_share : float in [0, 1)
        Share of :math:`C` carried by the step's noisy-loss coordinate (default 0.25, the library's
        default), audited together with the gradient sums; 0 audits the gradient sums alone.

    Returns
    -------
    AuditResult
        As for the other audits (:func:`~dpkme.audit.run_audit`); ``params`` holds the raw (unclipped)
        canary gradient norm and :math:`\|S_{D'} - S_D\|`.

    Raises
    ------
    ValueError
        On an invalid value.

    Examples
    --------
    Not run as a doctest (JAX compilation takes a few seconds; ``tests/generative/test_dpsgd_dpgm.py`` runs it):

    >>> from dpkme.audit import AuditSettings
    >>> settings = AuditSettings(runs=300, random_state=0)
    >>> audit_dpsgd(settings=settings).passed                          # doctest: +SKIP
    True
    >>> audit_dpsgd(settings=settings, variant="no-clip").violation    # doctest: +SKIP
    True
    """
    epsilon, delta, runs, alpha, selection, selection_fraction, random_state, progress = _unpack(
        settings, audit="dpsgd")
    import jax
    import jax.numpy as jnp
    import optax

    from ..generative import DPSGD, VAE

    t0 = time.perf_counter()
    eps, dl, runs, alpha = _check_common(epsilon, delta, runs, alpha)
    check_in(variant, DPSGD_VARIANTS, name="variant")
    n = check_positive_int(n, name="n")
    C = float(clip_norm)
    if not (C > 0 and math.isfinite(C)):
        raise ValueError(f"clip_norm must be a finite number > 0, got {clip_norm!r}.")
    ls = float(loss_share)
    if not (0.0 <= ls < 1.0):
        raise ValueError(f"loss_share must lie in [0, 1), got {loss_share!r}.")
    sigma = analytic_sigma(epsilon=eps, delta=dl, sensitivity=1.0)     # noise multiplier of the claim
    d = 4
    public = np.random.default_rng(int(_seeds(random_state, 1, stream=1)[0]))
    ordinary = (0.4 + 0.2 * public.random((n, d))).astype(np.float32)
    canary = np.array([[1.0, 0.0, 1.0, 0.0]], np.float32)               # far from the ordinary rows
    Dn = np.concatenate([ordinary, canary])             # D is its first n rows
    vae = VAE(n_features=d, hidden=(8,), latent_dim=2, likelihood="gaussian")
    params = jax.jit(jax.vmap(vae.init))(jax.random.split(jax.random.key(int(public.integers(0, 2**31))), 1))

    def trainer(X, clip):
        return DPSGD(model=vae, params=params, data=X, clusters=np.zeros(len(X), int), sampling_rate=1.0,
                     clip_norm=clip, noise_multiplier=sigma, optimizer=optax.sgd(1.0), divisors=[1.0],
                     rng=np.random.default_rng(0), capacity=n + 1, loss_share=ls, expected_batch=1.0)

    mech_clip = C if variant == "correct" else 1e12        # "no-clip": clipping disabled, noise still for C
    key = jax.random.key(int(public.integers(0, 2**31)))    # shared model randomness (data-independent)

    # one trainer on D' = D + canary (slot n); "running on D" masks the canary's slot out
    mech = trainer(Dn, mech_clip)

    def clipped_sum(rows):
        idx = np.arange(n + 1, dtype=np.int32)[None]
        mask = (np.arange(n + 1) < rows).astype(np.float32)[None]
        # per-example randomness depends on the slot only: the ordinary rows get the same draws in D and D'
        return mech._accumulate(mech.params, mech._data, jnp.asarray(idx), jnp.asarray(mask), key)

    def flat(tree):
        return np.concatenate([np.ravel(np.asarray(x, np.float64)) for x in jax.tree_util.tree_leaves(tree)])

    (S_d, L_d), (S_p, L_p) = clipped_sum(n), clipped_sum(n + 1)
    f_d, f_p = flat(S_d), flat(S_p)
    if ls > 0:          # the loss coordinate is part of the released vector
        f_d, f_p = np.append(f_d, float(L_d[0])), np.append(f_p, float(L_p[0]))
    diff = f_p - f_d
    shift = float(np.linalg.norm(diff))
    if not shift > 0:
        raise ValueError("the canary does not change the clipped sum; the pair is useless.")  # pragma: no cover
    u = diff / shift
    slot_key = jax.random.split(key, n + 1)[n]
    raw_grad, _ = jax.jit(vae.per_example)(jax.tree_util.tree_map(lambda a: a[0], params), jnp.asarray(canary[0]),
                                           slot_key)
    raw_norm = float(np.linalg.norm(flat(raw_grad)))
    noise_tr = mech if variant == "correct" else trainer(Dn, C)      # its _apply adds N(0, (sigma C)^2)
    opt_state = noise_tr.opt_state
    m_d, m_p = float(f_d @ u), float(f_p @ u)
    # the step reports loss = (loss sum + noise) * loss_bound / c_loss / expected_batch: undo the public rescaling
    cs = noise_tr._consts
    loss_to_sum = float(cs["c_loss"]) * float(cs["expected_batch"]) / float(cs["loss_bound"])
    u_loss = float(u[-1]) if ls > 0 else 0.0

    # every run is the library's noise-and-update function (vmapped over the runs' keys)
    apply_many = jax.jit(jax.vmap(lambda S, L, k: noise_tr._apply(params, opt_state, S, L, jnp.float32(1.0), k),
                                  in_axes=(None, None, 0)))
    seeds = _seeds(random_state, 2 * runs)
    n_par = sum(x.size for x in jax.tree_util.tree_leaves(params))
    u_tree = jax.tree_util.tree_unflatten(jax.tree_util.tree_structure(params), [
        jnp.asarray(a) for a in np.split(u[:n_par], np.cumsum([x.size for x in jax.tree_util.tree_leaves(params)])[:-1])])
    u_tree = jax.tree_util.tree_map(lambda a, ref: a.reshape(ref.shape).astype(ref.dtype), u_tree, params)
    out = []
    for which, (S, L) in enumerate(((S_d, L_d), (S_p, L_p))):
        if progress is not None:
            name = "D" if which == 0 else "D'"
            progress(which / 2.0, f"DP-SGD step ({variant}): {runs:,} runs on {name}")
        keys = jax.vmap(jax.random.key)(jnp.asarray(seeds[which * runs:(which + 1) * runs] % 2**31, jnp.uint32))
        new, _, loss = apply_many(S, L, keys)
        proj = sum(jnp.sum((p0l[None] - nl).reshape(runs, -1) * ul.reshape(1, -1), axis=1)
                   for p0l, nl, ul in zip(jax.tree_util.tree_leaves(params), jax.tree_util.tree_leaves(new),
                                          jax.tree_util.tree_leaves(u_tree)))
        proj = np.asarray(proj, np.float64)
        if ls > 0:
            proj = proj + np.asarray(loss, np.float64) * loss_to_sum * u_loss
        out.append(proj)                                        # = (S + noise) . u, run by run
    if progress is not None:
        progress(1.0, f"DP-SGD step ({variant}): {2 * runs:,} runs done")
    sd, sp = out
    if not (np.isfinite(sd).all() and np.isfinite(sp).all()):
        raise ValueError("DP-SGD audit: a run produced a non-finite scalar.")  # pragma: no cover
    noise_sd = sigma * C
    return _finish_gaussian(
        sd, sp, m_d=m_d, m_p=m_p, sigma=noise_sd, mu_pair=shift / noise_sd, mu_claimed=1.0 / sigma, eps=eps,
        delta=dl, alpha=alpha, selection=selection, selection_fraction=selection_fraction, name="dpsgd",
        variant=variant, neighbouring="add-remove",
        neighbours={"n": n, "n_neighbour": n + 1, "dim": d, "neighbouring": "add-remove", "pair": "canary",
                    "canary": canary[0].tolist()},
        t0=t0, scalar=("noisy gradient sum and noisy loss coordinate projected on the canary's clipped contribution"
                       if ls > 0 else "noisy gradient sum projected on the canary's clipped gradient"),
        label="DP-SGD step (per-example clipping + Gaussian noise)",
        params={"n": n, "clip_norm": C, "noise_multiplier": sigma, "sum_shift": shift, "loss_share": ls,
                "raw_canary_gradient_norm": raw_norm, "sampling_rate": 1.0})
