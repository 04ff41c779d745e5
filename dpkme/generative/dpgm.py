r"""DPGM (Acs et al., Algorithm 1): private kernel k-means, then one DP-SGD-trained generative model per cluster.

:func:`dpgm` runs the whole pipeline and returns a :class:`DPGMResult`, whose released product is the
:math:`k` trained models (parameters and public configuration) and the clusters' noisy sizes, from
which anyone samples synthetic rows (:meth:`DPGMResult.sample`, post-processing: no privacy cost).

Pipeline
--------
1. **Records.** Each row's features are scaled to [0, 1] with the **declared** ``bounds`` (values
   outside are clipped); with ``labels`` (and the declared ``n_classes``) a one-hot label block is
   appended, so generated rows carry labels.
2. **Clustering** (:math:`k > 1`): :func:`dpkme.clustering.dp_kernel_kmeans` on the records, with the
   k-means plan of :func:`~dpkme.generative.accounting.plan_dpgm` (``kmeans_share`` of the budget,
   add/remove). Every row is then assigned to its nearest released centre (the private local view:
   used for training, never released).
3. **Training**: :class:`~dpkme.generative.dpsgd.DPSGD` trains the :math:`k` models together,
   :math:`T_S` = ``epochs`` :math:`\times\lceil N/L\rceil` steps, one Poisson sample of the table at
   rate :math:`q = L/N` per step (why not the paper's one-cluster-per-step schedule:
   :mod:`dpkme.generative.accounting`).
4. **Accounting**: ``dp_accounting`` (PLD and RDP) of the k-means Gaussian steps composed with the
   :math:`T_S` subsampled Gaussian steps, next to the paper's Theorem 4.

Public inputs
-------------
Everything that shapes the run is public and fixed before the data are read: ``bounds``,
``n_classes``, ``n_private``, ``k``, the architecture, ``epochs``, ``batch_size``, ``clip_norm``,
``learning_rate``, the likelihood rule, the kernel. There is no early stopping or model selection on
the private loss: the loss shown during training is the **noisy** loss carried inside the DP-SGD
Gaussian mechanism (:mod:`dpkme.generative.dpsgd`), and the number of steps is fixed.

Cancellation and what is charged
--------------------------------
``progress(step, total, loss, epsilon)`` is called during training; returning ``False`` stops it.
:attr:`DPGMResult.charge` is always the **planned** charge (all :math:`T_S` steps): a stopping
decision may depend on the released noisy losses, and stopping at a data-dependent time is covered
by the fixed-horizon guarantee (the stopped run is a post-processing of the full run's transcript)
but not by the cost of the steps that happened to run. ``privacy["epsilon_run"]`` reports the cost of
the steps actually run, labelled as valid only if the number of steps had been fixed in advance.

One model per class (``partition="labels"``)
---------------------------------------------
With labelled rows, the rows can be split by their **own** label instead of by the private k-means:
model :math:`s` is trained on the rows of class :math:`s` (features only) and every row it generates
carries label :math:`s`, so labels and features agree by construction. The privacy argument is the
one of the k-means split (each row feeds exactly one model's clipped gradient, chosen from the row
itself), with no k-means to pay for: the whole budget goes to DP-SGD. The mixture weights and the
per-model divisors are **public**: the declared classes are taken as equally likely (:math:`1/c`
each, expected batch :math:`L/c` per model), nothing is counted from the rows; a table whose classes
are far from balanced gets generated labels in the wrong proportions (but each with features of its
own class). With few rows per class and noisy gradients, each model learns little more than its
class's typical record -- which is what a classifier trained on the generated rows needs.

Settings for small ε (issue 26)
-------------------------------
The signal of one DP-SGD step for model :math:`s` is the sum of about :math:`qn_s` clipped gradients (norm up to
:math:`C` each); its noise has std :math:`\sigma C` on every parameter. At a fixed :math:`\varepsilon`,
:math:`\sigma` grows roughly like :math:`\sqrt{T_S}` (exactly so for :math:`q = 1`, the Gaussian mechanism
composed under zCDP) and shrinks slowly as :math:`q` falls, while a step's signal grows like :math:`q`. So at small
:math:`\varepsilon` and with few rows per model, the rules that hold for any data are: large batches
(``batch_size`` a large share of ``n_private``, up to all of it: :math:`q = 1`, DP gradient descent), few steps
(10--20) with a larger learning rate, and a small model (few parameters for the noise to spread over; for the VAE a
narrow hidden layer and a 1-dimensional latent). On the bundled digits (1,438 private rows), one model per class with
``batch_size=1024``, ``epochs=8`` (16 steps), ``hidden=(16,)``, ``latent_dim=1``, ``learning_rate=0.1`` gives digits
that a classifier trained on real held-out digits assigns to their model's class about 90 % of the time at
:math:`\varepsilon = 1`, :math:`\delta = 10^{-6}` (:func:`~dpkme.generative.class_agreement`;
``benchmarks/results/dpgm_quality.md``), where 240 steps at ``batch_size=256`` with a VAE 32/4 gave grey static.

Likelihood rule (``likelihood="auto"``)
---------------------------------------
Decided from the declared bounds only, never from the values: Bernoulli (cross-entropy on
intensities in [0, 1], e.g. digits' pixel/16) when all columns share one declared range (an image or
a block of counts on one scale), Gaussian (with a learned per-column std, mean in the box) otherwise
(tabular columns with their own units).
"""

from __future__ import annotations

import functools
import json
import math
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from .._validation import (
    check_array,
    check_delta,
    check_epsilon,
    check_in,
    check_positive_float,
    check_positive_int,
    noise_rng,
    spawn_streams,
)
from ..privacy.accounting import PrivacyCharge
from ..privacy.result import charge_record
from .accounting import ACCOUNTANTS, NEIGHBOURING, DPGMPlan, plan_dpgm, steps_per_epoch
from .rbm import RBM
from .vae import LIKELIHOODS, VAE

__all__ = ["MODELS", "PARTITIONS", "DPGMResult", "dpgm", "encode_records", "model_from_config"]

#: Generative models :func:`dpgm` trains.
MODELS = ("vae", "rbm")
#: How :func:`dpgm` splits the rows between its models: private k-means (the paper), or the rows' own labels.
PARTITIONS = ("kmeans", "labels")


@functools.lru_cache(maxsize=16)
def _optimizer(model: str, learning_rate: float):
    """Adam (VAE) or SGD (RBM); one object per setting, so that repeated runs reuse the compiled step."""
    import optax

    return optax.adam(learning_rate) if model == "vae" else optax.sgd(learning_rate)


@functools.lru_cache(maxsize=16)
def _stacked_init(net):
    """``jax.jit(jax.vmap(net.init))``, one per architecture (a frozen dataclass): repeated runs of one architecture
    (the app's Train, a CLI session, the tests) reuse its compilation instead of compiling it again."""
    import jax

    return jax.jit(jax.vmap(net.init))


def model_from_config(config: dict):
    """Rebuild a :class:`~dpkme.generative.VAE` or :class:`~dpkme.generative.RBM` from its ``config()``.

    Parameters
    ----------
    config : dict
        The public architecture (``kind`` and the constructor's arguments).

    Returns
    -------
    VAE or RBM

    Raises
    ------
    ValueError
        For an unknown ``kind``.

    Examples
    --------
    >>> model_from_config(VAE(n_features=3, hidden=(4,), latent_dim=2).config())
    VAE(n_features=3, n_classes=0, hidden=(4,), latent_dim=2, likelihood='bernoulli')
    """
    cfg = dict(config)
    kind = cfg.pop("kind", None)
    if kind == "vae":
        cfg["hidden"] = tuple(cfg.get("hidden", (256,)))
        return VAE(**cfg)
    if kind == "rbm":
        return RBM(**cfg)
    raise ValueError(f"unknown model kind {kind!r}; expected one of {MODELS}.")


def _check_bounds(bounds, d: int):
    if bounds is None:
        raise ValueError("bounds are required: declare (lower, upper) of every column (public, not read off X), "
                         "e.g. bounds=(0, 16) for the digits.")
    try:
        lo, hi = bounds
    except (TypeError, ValueError):
        raise ValueError(
            f"bounds must be a pair (lower, upper) of numbers or length-{d} arrays, got {bounds!r}.") from None
    lo = np.broadcast_to(np.asarray(lo, dtype=np.float64), (d,)).copy()
    hi = np.broadcast_to(np.asarray(hi, dtype=np.float64), (d,)).copy()
    if not (np.isfinite(lo).all() and np.isfinite(hi).all()) or np.any(hi <= lo):
        raise ValueError("bounds must be finite with lower < upper in every column; got lower="
                         f"{lo.tolist()[:5]}..., upper={hi.tolist()[:5]}...")
    return lo, hi


def encode_records(X, *, bounds, labels=None, n_classes: int = 0) -> np.ndarray:
    r"""The records the models see: features scaled to [0, 1] by the declared bounds, then one-hot labels.

    :math:`u_{ij} = \mathrm{clip}((x_{ij} - l_j)/(h_j - l_j), 0, 1)`.

    Parameters
    ----------
    X : array (N, d)
        Feature columns (finite numbers).
    bounds : (lower, upper)
        Declared bounds: numbers or length-d arrays with lower < upper.
    labels : array (N,) of int, optional
        Class indices in ``range(n_classes)``.
    n_classes : int, default=0
        Declared number of classes (required with ``labels``).

    Returns
    -------
    ndarray of shape (N, d + n_classes), float32

    Raises
    ------
    ValueError
        On non-finite values, bad bounds, or labels outside ``range(n_classes)``.

    Examples
    --------
    >>> encode_records([[0.0, 8.0], [16.0, 4.0]], bounds=(0, 16), labels=[1, 0], n_classes=2)
    array([[0.  , 0.5 , 0.  , 1.  ],
           [1.  , 0.25, 1.  , 0.  ]], dtype=float32)
    """
    X = check_array(X, name="X")
    lo, hi = _check_bounds(bounds, X.shape[1])
    U = np.clip((X - lo) / (hi - lo), 0.0, 1.0)
    if labels is None:
        return U.astype(np.float32)
    c = check_positive_int(n_classes, name="n_classes")
    y = np.asarray(labels)
    if y.shape != (X.shape[0],):
        raise ValueError(f"labels must have one entry per row ({X.shape[0]}), got shape {y.shape}.")
    if not np.issubdtype(y.dtype, np.integer):
        if not np.all(np.isfinite(y.astype(np.float64))) or np.any(y != np.round(y)):
            raise ValueError("labels must be integer class indices (encode category names first).")
        y = y.astype(np.int64)
    if y.size and (y.min() < 0 or y.max() >= c):
        raise ValueError(f"labels must lie in range(n_classes={c}); found {int(y.min())}..{int(y.max())}.")
    return np.concatenate([U, np.eye(c)[y]], axis=1).astype(np.float32)


@dataclass
class DPGMResult:
    r"""The released product of :func:`dpgm`: k trained generative models, their weights, the privacy spent.

    Built by :func:`dpgm` (or :meth:`from_dict`), not by hand. Holds nothing computed from the private
    rows other than through the privatised statistics (noisy k-means, noisy gradients and losses),
    and no seed or noise state.

    Parameters
    ----------
    model_config : dict
        The public architecture (:func:`model_from_config`).
    params : pytree of ndarray
        Parameters of the k models, stacked on a leading axis of length k.
    weights : ndarray (k,)
        Mixture weights of the clusters: noisy sizes clipped at 0, normalised (uniform if all are 0).
    noisy_sizes : ndarray (k,)
        The noisy cluster sizes released by the k-means (``[N]``, the public size, for k = 1; the
        public :math:`N/c` per class with ``partition="labels"``).
    bounds : tuple of ndarray
        Declared (lower, upper) of the feature columns.
    n_classes : int
        Declared number of label classes (0: no labels).
    plan : DPGMPlan or None
        Noise and accounting (``None`` for the non-private twin).
    steps_run : int
        SGD steps actually run (less than planned if cancelled).
    private : bool
        False for the non-private twin (**not** a private release).
    noise_source : str
        ``"os-entropy"``, ``"seeded"``, ``"generator"`` (:func:`dpkme._validation.noise_rng`) or
        ``"none (non-private)"``.
    loss_history : ndarray
        The loss reported at every step: noisy (private run; part of the DP output) or exact
        (non-private twin).
    config : dict
        Public run parameters (k, epochs, batch_size, clip_norm, learning_rate, ...).
    seconds : float or None, default=None
        Wall-clock time of the run, for the operator's screen; ``None`` when read back from an export
        (:meth:`to_dict` leaves it out unless asked: a run's duration can depend on the data, a weak
        timing side channel in a download).
    cancelled : bool, default=False
        Whether training was stopped by the progress callback.
    charge : PrivacyCharge or None, default=None
        The ledger charge of the **planned** run (see the module docstring), computed once by :func:`dpgm`
        from its plan before training; ``None`` for the non-private twin. Exported by :meth:`to_dict` (its
        public record, without id and creation time) and read back by :meth:`from_dict` (same cost, new id).

    Attributes
    ----------
    k : int
        Number of models.
    model : VAE or RBM
        The architecture.
    epsilon, delta : float
        The charged (planned) privacy; ``inf`` and 0 for the non-private twin.
    epsilon_rdp, epsilon_pld, epsilon_paper : float
        The planned run's :math:`\varepsilon` by each accountant and by the paper's formula.
    """

    model_config: dict
    params: Any
    weights: np.ndarray
    noisy_sizes: np.ndarray
    bounds: tuple
    n_classes: int
    plan: DPGMPlan | None
    steps_run: int
    private: bool
    noise_source: str
    loss_history: np.ndarray
    config: dict
    seconds: float | None = None
    cancelled: bool = False
    charge: PrivacyCharge | None = None
    _model: Any = field(default=None, init=False, repr=False)

    #: ``params`` holds the models' weights, not release metadata: a not-private mark never goes into it (the
    #: app labels a not-private run in its files with :func:`ui.export.privacy_fields`).
    PARAMS_ARE_METADATA = False

    # ------------------------------------------------------------------ basic properties
    @property
    def k(self) -> int:
        return int(np.asarray(self.weights).shape[0])

    @property
    def model(self):
        if self._model is None:
            self._model = model_from_config(self.model_config)
        return self._model

    @property
    def epsilon(self) -> float:
        return math.inf if self.plan is None else float(self.plan.epsilon)

    @property
    def delta(self) -> float:
        return 0.0 if self.plan is None else float(self.plan.delta)

    @property
    def epsilon_rdp(self) -> float:
        return math.inf if self.plan is None else float(self.plan.epsilon_rdp)

    @property
    def epsilon_pld(self) -> float:
        return math.inf if self.plan is None else float(self.plan.epsilon_pld)

    @property
    def epsilon_paper(self) -> float:
        return math.inf if self.plan is None else float(self.plan.epsilon_paper)

    # ------------------------------------------------------------------ privacy
    @property
    def privacy(self) -> dict:
        """Privacy summary: charged (planned) epsilon and delta, by accountant, and the cost of the steps run."""
        if self.plan is None:
            return {"private": False, "epsilon": math.inf, "delta": 0.0, "neighbouring": None,
                    "note": "non-private twin: no clipping, no noise; not a private release."}
        p = self.plan
        run = p.epsilon_at(steps=self.steps_run) if self.steps_run < p.steps else p.epsilon
        return {
            "private": True, "neighbouring": NEIGHBOURING, "accountant": p.accountant,
            "epsilon": p.epsilon, "delta": p.delta, "epsilon_rdp": p.epsilon_rdp, "epsilon_pld": p.epsilon_pld,
            "epsilon_paper": p.epsilon_paper, "target_epsilon": p.target_epsilon,
            "noise_multiplier": p.noise_multiplier, "sampling_rate": p.sampling_rate,
            "steps_planned": p.steps, "steps_run": self.steps_run, "epsilon_run": run,
            "epsilon_run_note": ("cost of the steps actually run; a valid guarantee only if their number was fixed "
                                 "in advance. The charge is the planned run."),
            "kmeans_mu_total": None if p.kmeans is None else p.kmeans.mu_total,
        }

    # ------------------------------------------------------------------ sampling
    def _draw(self, n: int, rng):
        from .dpsgd import _key_from

        n = check_positive_int(n, name="n", minimum=0)
        gen, _, _ = noise_rng(rng)
        w = np.asarray(self.weights, dtype=np.float64)
        comp = gen.choice(self.k, size=n, p=w / w.sum()) if n else np.zeros(0, np.int64)
        d = len(self.bounds[0])
        U = np.zeros((n, d))
        y = np.zeros(n, np.int64) if self.n_classes else None
        import jax

        by_label = self.config.get("partition") == "labels"      # model s generates class s
        for s in range(self.k):
            m = int(np.sum(comp == s))
            if m == 0:
                continue
            p_s = jax.tree_util.tree_map(lambda a, s=s: a[s], self.params)
            u, lab = self.model.sample(p_s, _key_from(gen), m)   # padded to a few compiled sizes inside
            U[comp == s] = u
            if y is not None:
                y[comp == s] = s if by_label else lab
        lo, hi = (np.asarray(b, dtype=np.float64) for b in self.bounds)
        return lo + (hi - lo) * U, y, comp

    def sample(self, n: int, *, rng=None) -> np.ndarray:
        """``n`` synthetic rows (features in the declared units): cluster by :attr:`weights`, then its model.

        Post-processing of the released models: no privacy cost.

        Parameters
        ----------
        n : int
            Number of rows.
        rng : None, int or numpy.random.Generator
            Randomness of the draw (``None``: OS entropy).

        Returns
        -------
        ndarray of shape (n, d)
        """
        return self._draw(n, rng)[0]

    def sample_with_labels(self, n: int, *, rng=None):
        """``n`` synthetic rows with their labels and the cluster each came from.

        Parameters
        ----------
        n : int
            Number of rows.
        rng : None, int or numpy.random.Generator
            Randomness of the draw (``None``: OS entropy).

        Returns
        -------
        X : ndarray of shape (n, d)
            Features in the declared units.
        labels : ndarray of shape (n,) or None
            Class indices (``None`` without labels).
        clusters : ndarray of shape (n,)
            Index of the model that generated each row.
        """
        return self._draw(n, rng)

    # ------------------------------------------------------------------ export
    def to_dict(self, *, include_timing: bool = False) -> dict:
        """The released product, JSON-friendly: model parameters, public configuration, weights, privacy.

        Never contains a seed or noise state; ``differentially_private`` is False for the non-private
        twin and for seeded runs (:func:`dpkme.privacy.leaks.privacy_claim`).

        Parameters
        ----------
        include_timing : bool, default=False
            Add ``seconds``, the run's wall-clock time. Off by default: the time can depend on the
            private rows (e.g. through the clusters' sizes), so a file meant for release leaves it out;
            turn it on only for local logs and benchmarks.

        Returns
        -------
        dict
        """
        from types import SimpleNamespace

        from ..privacy.leaks import privacy_claim

        claim = privacy_claim(SimpleNamespace(noise_source=self.noise_source, epsilon=self.epsilon, params={},
                                              private=True)) if self.private else {
            "differentially_private": False, "not_private_because": ["non-private twin (no clipping, no noise)"]}
        out = {
            "kind": "dpgm", "model": dict(self.model_config), "k": self.k,
            "params": _tolist(self.params), "weights": np.asarray(self.weights).tolist(),
            "noisy_sizes": np.asarray(self.noisy_sizes).tolist(),
            "bounds": [np.asarray(b).tolist() for b in self.bounds], "n_classes": self.n_classes,
            "config": dict(self.config), "plan": None if self.plan is None else self.plan.to_dict(),
            "privacy": self.privacy, "steps_run": self.steps_run, "cancelled": self.cancelled,
            "private": self.private, "noise_source": self.noise_source,
            "loss_history": np.asarray(self.loss_history).tolist(), **claim,
            "charge": charge_record(self.charge),
        }
        if include_timing:
            out["seconds"] = None if self.seconds is None else float(self.seconds)
        return out

    @classmethod
    def from_dict(cls, d: dict) -> DPGMResult:
        """Rebuild a result from :meth:`to_dict` (for sampling; the plan's epsilons are recomputed on demand).

        Parameters
        ----------
        d : dict
            Output of :meth:`to_dict` (``seconds`` is optional and is read when present).

        Returns
        -------
        DPGMResult
        """
        from ..clustering.accounting import plan_from_noise

        if not isinstance(d, dict) or d.get("kind") != "dpgm":
            raise ValueError("this is not a DPGM export (expected a dict with kind='dpgm').")
        plan = None
        if d.get("plan"):
            p = d["plan"]
            km = None
            if p.get("kmeans"):
                kp = p["kmeans"]
                lloyd = next(s for s in kp["steps"] if s["kind"] == "lloyd")
                km = plan_from_noise(n_iter=lloyd["count"], sigma_count=lloyd["sigma_count"],
                                     sum_multiplier=lloyd["sum_noise_multiplier"], delta=kp["delta"],
                                     neighbouring=kp["neighbouring"], accountant=kp["accountant"])
            plan = DPGMPlan(p["noise_multiplier"], p["sampling_rate"], p["steps"], p["delta"], km,
                            p["target_epsilon"], p["accountant"])
        if d.get("charge") is not None:
            charge = PrivacyCharge.from_record(d["charge"])
        else:   # an export from before results carried their charge: the planned run's, as a new charge
            charge = None if plan is None else plan.charge()
        model = model_from_config(d["model"])
        params = _fromlist(d["params"])
        return cls(model_config=model.config(), params=params, weights=np.asarray(d["weights"]),
                   noisy_sizes=np.asarray(d["noisy_sizes"]), bounds=tuple(np.asarray(b) for b in d["bounds"]),
                   n_classes=int(d["n_classes"]), plan=plan, steps_run=int(d["steps_run"]),
                   private=bool(d["private"]), noise_source=str(d["noise_source"]),
                   loss_history=np.asarray(d["loss_history"], dtype=np.float64), config=dict(d["config"]),
                   seconds=None if d.get("seconds") is None else float(d["seconds"]),
                   cancelled=bool(d.get("cancelled", False)), charge=charge)

    def metadata(self) -> dict:
        """The released product (:meth:`to_dict` without the run time), with the record of :attr:`charge`.

        Returns
        -------
        dict
        """
        return self.to_dict()

    def to_json(self) -> str:
        """:meth:`metadata` as JSON text (model parameters included; never a seed or a run time).

        Returns
        -------
        str
        """
        return json.dumps(self.metadata(), allow_nan=True)


def _tolist(tree):
    if isinstance(tree, dict):
        return {k: _tolist(v) for k, v in tree.items()}
    if isinstance(tree, (list, tuple)):
        return [_tolist(v) for v in tree]
    return {"__array__": np.asarray(tree, dtype=np.float64).tolist()}


def _fromlist(tree):
    if isinstance(tree, dict):
        if set(tree) == {"__array__"}:
            return np.asarray(tree["__array__"], dtype=np.float32)
        return {k: _fromlist(v) for k, v in tree.items()}
    if isinstance(tree, list):
        return [_fromlist(v) for v in tree]
    raise ValueError("malformed parameter export.")


def dpgm(
    X,
    *,
    bounds,
    labels=None,
    n_classes: int | None = None,
    n_private: int | None = None,
    k: int = 5,
    partition: str = "kmeans",
    model: str = "vae",
    epochs: int = 5,
    batch_size: int = 64,
    clip_norm: float = 1.0,
    learning_rate: float = 1e-3,
    hidden: tuple = (256,),
    latent_dim: int = 8,
    n_hidden: int = 64,
    cd_steps: int = 1,
    likelihood: str = "auto",
    epsilon: float | None = 1.0,
    delta: float = 1e-5,
    noise_multiplier: float | None = None,
    kmeans_share: float = 0.2,
    kmeans_iter: int = 5,
    kernel=None,
    n_features: int = 200,
    kmeans_options: dict | None = None,
    accountant: str = "pld",
    loss_bound: float | None = None,
    loss_share: float = 0.25,
    private: bool = True,
    rng=None,
    progress: Callable[[int, int, float, float], object] | None = None,
) -> DPGMResult:
    r"""DPGM: private kernel k-means, then one DP-SGD-trained VAE or RBM per cluster (Acs et al., Algorithm 1).

    Guarantee: :math:`(\varepsilon,\delta)`-DP under add/remove of one row (:attr:`DPGMResult.charge`)
    for everything in the result, provided the inputs listed as public in
    :mod:`dpkme.generative.dpgm` are. Non-private twin (``private=False``): no clipping, no noise, no
    charge, labelled ``differentially_private: False`` everywhere, for comparison only.

    Parameters
    ----------
    X : array (N, d)
        The private feature columns (finite numbers).
    bounds : (lower, upper)
        Declared bounds of the columns (numbers or length-d arrays); values outside are clipped.
    labels : array (N,) of int, optional
        Class labels of the rows (part of the record: generated rows carry labels).
    n_classes : int, optional
        Declared number of classes (required with ``labels``; not counted from them).
    n_private : int, optional
        Declared public size :math:`N` of the table (required for a private run: under add/remove
        the row count is not public); the sampling rate is :math:`q = L/N`. Default for the twin:
        the row count.
    k : int, default=5
        Number of clusters and models (1: no clustering). Ignored with ``partition="labels"``
        (one model per declared class).
    partition : {"kmeans", "labels"}, default="kmeans"
        How rows are split between the models: the private k-means (the paper), or each row's own
        label (requires ``labels``; one model per class, generated labels agree with their features
        by construction, the whole budget goes to DP-SGD, public equal class weights: module
        docstring).
    model : {"vae", "rbm"}, default="vae"
        The generative model.
    epochs : int, default=5
        Training epochs; :math:`T_S` = ``epochs`` :math:`\times\lceil N/L\rceil` steps.
    batch_size : int, default=64
        Expected batch size :math:`L`.
    clip_norm : float, default=1.0
        :math:`C`, the per-example gradient clip norm.
    learning_rate : float, default=1e-3
        Adam's learning rate (VAE); plain SGD's for the RBM (the paper's 0.01 is a good choice there).
    hidden : tuple of int, default=(256,)
        VAE hidden widths (encoder; the decoder mirrors them).
    latent_dim : int, default=8
        VAE latent dimension.
    n_hidden : int, default=64
        RBM hidden units.
    cd_steps : int, default=1
        RBM's :math:`k` in CD-k.
    likelihood : {"auto", "bernoulli", "gaussian"}, default="auto"
        VAE likelihood of the features (``"auto"``: the rule in the module docstring).
    epsilon : float or None, default=1.0
        Total target :math:`\varepsilon` (k-means and SGD); ``None`` only with ``noise_multiplier``
        and ``k=1``.
    delta : float, default=1e-5
        Total :math:`\delta`.
    noise_multiplier : float, optional
        SGD noise :math:`\sigma` given directly instead of calibrated to ``epsilon``.
    kmeans_share : float in (0, 1), default=0.2
        Share of :math:`(\varepsilon,\delta)` planned for the clustering.
    kmeans_iter : int, default=5
        :math:`T_K`, noisy Lloyd iterations.
    kernel : Kernel, optional
        Kernel of the clustering on the [0, 1]-scaled records (default: Gaussian with lengthscale
        :math:`\sqrt{d + c}/4`, a public function of the dimension).
    n_features : int, default=200
        Random Fourier features of the clustering.
    kmeans_options : dict, optional
        Further keyword arguments of :func:`dpkme.clustering.dp_kernel_kmeans` (e.g. ``init`` and
        ``public_data`` for a public initialisation, in the [0, 1]-scaled record space).
    accountant : {"pld", "rdp"}, default="pld"
        Accountant of the calibration and of the charge.
    loss_bound : float, optional
        :math:`B` of the noisy loss: per-example losses are clipped to :math:`[-B, B]` for it
        (default: :math:`d + c + 10` nats).
    loss_share : float in [0, 1), default=0.25
        Share of the clip norm carried by the noisy loss (:mod:`dpkme.generative.dpsgd`).
    private : bool, default=True
        False: the non-private twin.
    rng : None, int or numpy.random.Generator
        ``None``: OS entropy, nothing recorded (a real release). An int makes the run replayable (a
        demo: ``differentially_private`` is then False).
    progress : callable, optional
        ``progress(step, total, loss, epsilon)`` after training steps (at most about 200 calls):
        ``loss`` the mean noisy loss of the last epoch's steps (:attr:`DPGMResult.loss_history`
        has every step's), ``epsilon`` the RDP cost of the steps so far. Return ``False`` to stop
        training (the charge stays the planned one).

    Returns
    -------
    DPGMResult

    Raises
    ------
    ValueError
        On invalid values (:math:`\varepsilon \le 0`, :math:`k < 1`, clip :math:`\le 0`, NaN in X,
        labels without ``n_classes``, a missing ``n_private``, ...), each naming the value.

    Examples
    --------
    A tiny run on two blobs (seeded: a replayable demo, not a private release). Not run as a doctest
    (JAX compilation takes several seconds; ``tests/generative/test_dpsgd_dpgm.py`` runs the same calls):

    >>> rng = np.random.default_rng(0)
    >>> X = np.concatenate([rng.normal(0.3, 0.05, (60, 2)), rng.normal(0.7, 0.05, (60, 2))])
    >>> res = dpgm(X, bounds=(0, 1), n_private=120, k=2, epochs=2, batch_size=20, hidden=(8,),
    ...            latent_dim=2, epsilon=2.0, rng=0)                                # doctest: +SKIP
    >>> res.k, res.sample(5, rng=1).shape, bool(res.epsilon <= 2.0)                 # doctest: +SKIP
    (2, (5, 2), True)
    >>> res.to_dict()["differentially_private"]       # seeded: a demo              # doctest: +SKIP
    False
    """
    t0 = time.perf_counter()
    import jax

    Xa = check_array(X, name="X")
    N_rows, d = Xa.shape
    k = check_positive_int(k, name="k")
    check_in(model, MODELS, name="model")
    check_in(partition, PARTITIONS, name="partition")
    check_in(likelihood, ("auto", *LIKELIHOODS), name="likelihood")
    check_in(accountant, ACCOUNTANTS, name="accountant")
    epochs = check_positive_int(epochs, name="epochs")
    L = check_positive_int(batch_size, name="batch_size")
    clip_norm = check_positive_float(clip_norm, name="clip_norm")
    learning_rate = check_positive_float(learning_rate, name="learning_rate")
    delta = check_delta(delta)
    if epsilon is not None:
        epsilon = check_epsilon(epsilon)
    if labels is not None and n_classes is None:
        raise ValueError("labels need the declared n_classes (public; not counted from the labels).")
    if partition == "labels" and labels is None:
        raise ValueError("partition='labels' splits the rows by their labels: pass labels and n_classes, or use "
                         "partition='kmeans'.")
    c = 0 if labels is None else check_positive_int(n_classes, name="n_classes")
    lo, hi = _check_bounds(bounds, d)
    R = encode_records(Xa, bounds=(lo, hi), labels=labels, n_classes=c)
    by_label = partition == "labels"
    if by_label:                       # the label chooses the model; the models see the features only
        label_of = np.argmax(R[:, d:], axis=1) if N_rows else np.zeros(0, np.int64)
        R = np.ascontiguousarray(R[:, :d])
        k = c
    private = bool(private)
    if private:
        if n_private is None:
            raise ValueError("declare n_private, the public size of the table (under add/remove the row count is "
                             "not public; the sampling rate is batch_size / n_private).")
        N = check_positive_int(n_private, name="n_private")
    else:
        N = N_rows if n_private is None else check_positive_int(n_private, name="n_private")
    if L > N:
        raise ValueError(f"batch_size={L} exceeds the table size {N}; choose batch_size <= {N}.")
    if likelihood == "auto":
        likelihood = "bernoulli" if (np.all(lo == lo[0]) and np.all(hi == hi[0])) else "gaussian"
    c_model = 0 if by_label else c
    D = d + c_model
    net = (VAE(n_features=d, n_classes=c_model, hidden=tuple(hidden), latent_dim=latent_dim, likelihood=likelihood)
           if model == "vae" else RBM(n_features=d, n_classes=c_model, n_hidden=n_hidden, cd_steps=cd_steps))
    lb = check_positive_float(D + 10.0 if loss_bound is None else loss_bound, name="loss_bound")

    gen, _seed, source = noise_rng(rng)
    public_rng, noise_stream = spawn_streams(gen, 2, fresh=(rng is None))
    q = L / N
    if private:
        plan = plan_dpgm(epsilon=epsilon, delta=delta, n_private=N, batch_size=L, epochs=epochs,
                         k=1 if by_label else k,
                         kmeans_iter=kmeans_iter, kmeans_share=kmeans_share, noise_multiplier=noise_multiplier,
                         accountant=accountant)
        T = plan.steps
        charge = plan.charge()   # the planned run, computed once before any noise is drawn
    else:
        plan, charge = None, None
        T = epochs * steps_per_epoch(q)

    # ---- clustering (private kernel k-means; the assignment of the rows is the local view)
    if by_label:
        clusters = label_of.astype(np.int64)
        sizes = np.full(k, N / k)                       # public: declared size, classes taken as equally likely
    elif k > 1:
        from ..clustering import dp_kernel_kmeans, kernel_kmeans
        from ..kernels import GaussianKernel

        kern = kernel if kernel is not None else GaussianKernel(lengthscale=math.sqrt(D) / 4.0)
        opts = {"init": "box", "bounds": (np.zeros(D), np.ones(D)), "preimages": "none"}
        opts.update(kmeans_options or {})
        if private:
            km = dp_kernel_kmeans(R, k=k, plan=plan.kmeans, kernel=kern, n_features=n_features,
                                  random_state=noise_stream, **opts)
        else:
            km = kernel_kmeans(R, k=k, n_iter=kmeans_iter, kernel=kern, n_features=n_features,
                               random_state=noise_stream, **opts)
        clusters = km.assign(R)
        sizes = np.asarray(km.noisy_counts, dtype=np.float64)
    else:
        clusters = np.zeros(N_rows, np.int64)
        sizes = np.array([float(N)])
    pos = np.maximum(sizes, 0.0)
    weights = pos / pos.sum() if pos.sum() > 0 else np.full(k, 1.0 / k)

    # ---- models and training
    init_keys = jax.random.split(jax.random.wrap_key_data(
        jax.numpy.asarray(public_rng.integers(0, 2**32, size=2, dtype=np.uint32))), k)
    params = _stacked_init(net)(init_keys)
    opt = _optimizer(model, learning_rate)
    from .dpsgd import DPSGD

    trainer = DPSGD(model=net, params=params, data=R, clusters=clusters, sampling_rate=q, clip_norm=clip_norm,
                    noise_multiplier=plan.noise_multiplier if private else 0.0, optimizer=opt,
                    divisors=np.maximum(q * np.maximum(sizes, 0.0), 1.0), rng=noise_stream, private=private,
                    loss_bound=lb, loss_share=loss_share,
                    expected_batch=float(L))   # qN with the declared N: public, the reported loss's divisor
    del R
    every = max(1, T // 200)
    window = steps_per_epoch(q)
    losses = []
    cancelled = False
    for t in range(1, T + 1):
        losses.append(trainer.step())
        if progress is not None and (t % every == 0 or t == T):
            eps_now = float(plan.rdp_epsilon_after(t)) if private else math.inf
            if progress(t, T, float(np.mean(losses[-window:])), eps_now) is False:
                cancelled = t < T
                break
    steps_run = trainer.steps_done
    config = {"k": k, "partition": partition, "model": model, "epochs": epochs, "batch_size": L, "n_private": N,
              "clip_norm": clip_norm,
              "learning_rate": learning_rate, "optimizer": "adam" if model == "vae" else "sgd",
              "likelihood": likelihood if model == "vae" else "bernoulli", "kmeans_iter": kmeans_iter,
              "kmeans_share": kmeans_share if k > 1 and not by_label else None,
              "n_features": n_features if k > 1 and not by_label else None,
              "kernel": None if (k == 1 or by_label) else repr(kern), "loss_bound": lb, "loss_share": loss_share,
              "capacity": trainer.capacity}
    return DPGMResult(model_config=net.config(), params=trainer.export_params(), weights=weights, noisy_sizes=sizes,
                      bounds=(lo, hi), n_classes=c, plan=plan, steps_run=steps_run, private=private,
                      noise_source=source if private else "none (non-private)",
                      loss_history=np.asarray(losses, dtype=np.float64), config=config,
                      seconds=time.perf_counter() - t0, cancelled=cancelled, charge=charge)
