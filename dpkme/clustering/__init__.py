r"""Differentially private kernel k-means and cluster-wise release (Acs et al., Algorithms 2 and 3).

Source: G. Acs, L. Melis, C. Castelluccia, E. De Cristofaro, "Differentially
private mixture of generative neural networks" (Sections II-C, III-A, III-C,
III-D). Their pipeline clusters the data privately in a random-feature space,
then trains one generative model per cluster. Here the clustering is
implemented in full, and the per-cluster generator is the kernel release of
this library (Algorithm 2 of Balog et al.) instead of a neural network.

Modules
-------
:mod:`.sensitivity`
    Sensitivities of one noisy Lloyd step and of the norm histogram, for
    add/remove (1, C) and replace-one (:math:`\sqrt2`, 2C -- not the paper's
    :math:`\sqrt2 C`), joint analysis of sizes and sums.
:mod:`.accounting`
    :class:`PrivacyPlan` (noise of every step, calibration to a target
    :math:`(\varepsilon,\delta)`, ledger charges via :mod:`dpkme.privacy.accounting`),
    and the paper's moments accountant with its comparison.
:mod:`.norm`
    Algorithm 3: private norm bound (noisy mode of the norm histogram), for
    feature maps without an a-priori bound.
:mod:`.kmeans`
    :func:`dp_kernel_kmeans`, the non-private reference :func:`kernel_kmeans`.
:mod:`.preimage`
    Data-space representatives of feature-space centres.
:mod:`.release`
    :func:`clusterwise_release` (with the parallel-composition argument).
:mod:`.evaluation`
    ARI, purity, objective, accuracy-vs-epsilon curves, comparison with a
    single Algorithm-2 release (evaluation on private data: not DP).

Neural generators
-----------------
The paper's RBMs/VAEs trained with DP-SGD per cluster are :mod:`dpkme.generative`
(:func:`dpkme.generative.dpgm`): it runs :func:`dp_kernel_kmeans` under add/remove, assigns the
rows with :meth:`DPKMeansResult.assign` (local view), trains the k models with Poisson-sampled
DP-SGD at rate :math:`L/N` across the disjoint clusters, and composes the charges with
``dp_accounting`` (:mod:`dpkme.generative.accounting`).
"""

from .accounting import (
    ACCOUNTANTS,
    GaussianStep,
    PrivacyPlan,
    compare_with_paper,
    gaussian_log_moment,
    moments_epsilon,
    paper_epsilon,
    paper_log_moment,
    paper_plan,
    plan_from_noise,
    plan_kmeans,
)
from .evaluation import (
    AccuracyCurve,
    accuracy_curve,
    adjusted_rand_index,
    cluster_purity,
    compare_with_single_release,
    contingency_table,
    evaluate_clustering,
    partition_objective,
)
from .kmeans import (
    INIT_METHODS,
    DPKMeansResult,
    IterationRecord,
    PrivateLocalView,
    dp_kernel_kmeans,
    initial_points,
    kernel_kmeans,
)
from .norm import NormSelection, norm_histogram, private_norm_bound
from .preimage import centre_preimages
from .release import ClusterComponent, ClusterwiseRelease, allocate_points, clusterwise_release
from .sensitivity import auto_count_share, histogram_sensitivity, lloyd_sensitivities, noise_for_mu, step_mu

__all__ = [
    "ACCOUNTANTS", "GaussianStep", "PrivacyPlan", "compare_with_paper", "gaussian_log_moment", "moments_epsilon",
    "paper_epsilon", "paper_log_moment", "paper_plan", "plan_from_noise", "plan_kmeans",
    "AccuracyCurve", "accuracy_curve", "adjusted_rand_index", "cluster_purity", "compare_with_single_release",
    "contingency_table", "evaluate_clustering", "partition_objective",
    "INIT_METHODS", "DPKMeansResult", "IterationRecord", "PrivateLocalView", "dp_kernel_kmeans", "initial_points",
    "kernel_kmeans",
    "NormSelection", "norm_histogram", "private_norm_bound",
    "centre_preimages",
    "ClusterComponent", "ClusterwiseRelease", "allocate_points", "clusterwise_release",
    "auto_count_share", "histogram_sensitivity", "lloyd_sensitivities", "noise_for_mu", "step_mu",
]
