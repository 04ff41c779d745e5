"""Data sets: synthetic generators and the bundled sample tables.

:mod:`~dpkme.datasets.generators`
    Generators of i.i.d. samples from known distributions (the paper's mixture of
    Gaussians, two moons, circles, blobs, spirals, ...) and the :data:`GENERATORS`
    registry that a user interface builds its forms from.
:mod:`~dpkme.datasets.samples`
    Small public tables shipped as package data (``dpkme/datasets/data/*.csv``, sources
    and licences in the ``README.md`` there): :data:`SAMPLES`, :class:`SampleInfo`,
    :func:`load_sample`, and for the mixed tables their declared schema, :func:`load_schema`.
:mod:`~dpkme.datasets.digits`
    The 8×8 handwritten digits (1797 images, compressed package data) for the DP generative
    models: :func:`load_digits`.

Public preprocessing (declared scaling, clipping, the public/private split) is in
:mod:`dpkme.preprocessing`; reading uploads and ``.npz`` files in :mod:`dpkme.io`.
"""

from .digits import DIGITS_FILE, DIGITS_INFO, load_digits
from .generators import (
    GENERATORS,
    MAX_GENERATED_VALUES,
    GeneratorSpec,
    ParamSpec,
    anisotropic_gaussian,
    concentric_circles,
    gaussian_blobs,
    generate,
    paper_mixture,
    spiral,
    student_t_cloud,
    two_moons,
    uniform_box,
)
from .samples import SAMPLE_DIR, SAMPLES, SampleInfo, load_sample, load_schema

__all__ = [
    "paper_mixture", "two_moons", "concentric_circles", "gaussian_blobs", "spiral", "uniform_box",
    "anisotropic_gaussian", "student_t_cloud", "GENERATORS", "GeneratorSpec", "ParamSpec", "generate",
    "MAX_GENERATED_VALUES",
    "SAMPLES", "SampleInfo", "load_sample", "load_schema", "SAMPLE_DIR",
    "DIGITS_FILE", "DIGITS_INFO", "load_digits",
]
