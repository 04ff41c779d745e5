r"""Kernels: the positive-definite kernels, their exact sums, and unit-norm random features.

:mod:`~dpkme.kernels.kernel`
    :class:`Kernel` and the translation-invariant kernels (Gaussian, Laplacian,
    Matérn, inverse multiquadric) with blocked exact kernel sums;
    :func:`make_kernel`, :func:`kernel_from_dict`.
:mod:`~dpkme.kernels.additive`
    :class:`AdditiveKernel` (a weighted sum of Gaussian kernels on coordinate blocks, e.g. the columns and
    pairs of columns of a declared table) and :func:`table_kernel` (its public defaults on a schema).
:mod:`~dpkme.kernels.spectral`
    Exact Gaussian-kernel sums in one or two dimensions through the spectrum.
:mod:`~dpkme.kernels.engine`
    The fused JAX/XLA engine for the exact kernel sums of the kernels above (float64, every core, a GPU when
    present); ``DPKME_KERNEL_ENGINE=numpy`` selects the blocked numpy path instead.
:mod:`~dpkme.kernels.random_features`
    :class:`RandomFourierFeatures` (unit norm, as the privacy proofs assume) and
    :class:`CosineBiasFeatures` (the common map, for teaching and audits only).
"""

from .additive import AdditiveKernel, table_kernel
from .kernel import (
    KERNELS,
    LENGTHSCALE_RANGE,
    MAX_ABS_COORDINATE,
    GaussianKernel,
    InverseMultiquadricKernel,
    Kernel,
    LaplacianKernel,
    MaternKernel,
    check_magnitude,
    kernel_from_dict,
    make_kernel,
)
from .random_features import CosineBiasFeatures, RandomFourierFeatures

__all__ = [
    "Kernel", "GaussianKernel", "LaplacianKernel", "MaternKernel", "InverseMultiquadricKernel", "make_kernel",
    "kernel_from_dict", "KERNELS", "MAX_ABS_COORDINATE", "LENGTHSCALE_RANGE", "check_magnitude",
    "RandomFourierFeatures", "CosineBiasFeatures", "AdditiveKernel", "table_kernel",
]
