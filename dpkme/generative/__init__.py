r"""DP generative models per cluster (DPGM; Acs et al., "Differentially private mixture of generative neural networks").

Private kernel k-means (:mod:`dpkme.clustering`) partitions the table; one generative network per
cluster -- a VAE or an RBM -- is trained with differentially private SGD (JAX + optax, per-example
clipping, Gaussian noise, Poisson subsampling); the privacy of the k-means steps and of all SGD steps
is composed with Google's ``dp_accounting`` (RDP and PLD), next to the paper's moments-accountant
formula. The released product is the k trained models, from which anyone samples synthetic rows.

Modules
-------
:mod:`.dpgm`
    :func:`dpgm` (the entry point) and :class:`DPGMResult` (models, weights, privacy, sampling, export).
:mod:`.dpsgd`
    :class:`DPSGD`: the compiled DP-SGD step for k stacked models; :func:`poisson_batches`.
:mod:`.accounting`
    :func:`plan_dpgm`, :class:`DPGMPlan`, :func:`dpgm_epsilon`, :func:`calibrate_noise_multiplier`,
    the paper's Theorem 4 (:func:`paper_dpgm_epsilon`), :func:`epsilon_vs_epochs` (its Figure 2), and
    the analysis of the paper's cluster-selection schedule (:func:`cluster_selection_rdp`).
:mod:`.vae`, :mod:`.rbm`
    The models (:class:`VAE`, :class:`RBM`).
:mod:`.quality`
    :func:`class_agreement`: how recognisable generated rows are (a classifier trained on real labelled rows,
    scored on the rows each class's model drew; an owner-side evaluation, not a release).

JAX is imported only when a model is built or trained (``import dpkme.generative`` stays light).
The 8×8 digits for these models: :func:`dpkme.datasets.load_digits`.

Examples
--------
>>> from dpkme.generative import plan_dpgm
>>> plan = plan_dpgm(epsilon=1.0, delta=1e-5, n_private=1797, batch_size=64, epochs=3, k=5)
>>> plan.steps, plan.epsilon <= 1.0, plan.epsilon_rdp >= plan.epsilon_pld
(87, True, True)
"""

from .accounting import (
    ACCOUNTANTS,
    NEIGHBOURING,
    PAPER_LAMBDAS,
    DPGMPlan,
    calibrate_noise_multiplier,
    cluster_selection_rdp,
    dpgm_epsilon,
    dpgm_event,
    dpsgd_event,
    epsilon_vs_epochs,
    paper_dpgm_epsilon,
    plan_dpgm,
    steps_per_epoch,
    subsampled_gaussian_log_moment,
)
from .dpgm import MODELS, PARTITIONS, DPGMResult, dpgm, encode_records, model_from_config
from .dpsgd import CLIP_MARGIN, DPSGD, default_capacity, poisson_batches
from .quality import ClassAgreement, SoftmaxClassifier, class_agreement, fit_softmax_classifier
from .rbm import RBM
from .vae import LIKELIHOODS, VAE

__all__ = [
    "ACCOUNTANTS", "NEIGHBOURING", "PAPER_LAMBDAS", "DPGMPlan", "calibrate_noise_multiplier", "cluster_selection_rdp",
    "dpgm_epsilon", "dpgm_event", "dpsgd_event", "epsilon_vs_epochs", "paper_dpgm_epsilon", "plan_dpgm",
    "steps_per_epoch", "subsampled_gaussian_log_moment",
    "MODELS", "PARTITIONS", "DPGMResult", "dpgm", "encode_records", "model_from_config",
    "CLIP_MARGIN", "DPSGD", "default_capacity", "poisson_batches",
    "RBM", "VAE", "LIKELIHOODS",
    "ClassAgreement", "SoftmaxClassifier", "class_agreement", "fit_softmax_classifier",
]
