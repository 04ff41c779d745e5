r"""Synthetic data sets: generators of i.i.d. samples from known distributions.

Every generator draws an i.i.d. sample of ``n`` points in :math:`\mathbb R^D`
from a known distribution and returns a C-contiguous ``float64`` array
``(n, D)`` (and, with ``return_labels=True``, an ``int64`` label vector, e.g.
the mixture component of every point). They take ``random_state`` (``None``,
an int seed or a :class:`numpy.random.Generator`; see
:func:`dpkme._validation.check_random_state`) and never touch numpy's global
random state. :data:`GENERATORS` describes every generator (label,
description, parameters with defaults and bounds) so that a user interface can
build a generic form:

>>> spec = GENERATORS["two_moons"]
>>> X = spec(n=500, random_state=0)           # or spec(**spec.defaults, random_state=0)
>>> X.shape
(500, 2)

The paper's data set is :func:`paper_mixture` (Balog, Tolstikhin & Schölkopf,
ICML 2018, Appendix B). Public preprocessing (declared scaling, clipping, the
public/private split) is in :mod:`dpkme.preprocessing`.
"""

from __future__ import annotations

import math
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

import numpy as np

from .._validation import _short, check_positive_float, check_positive_int, check_random_state

__all__ = [
    "paper_mixture",
    "two_moons",
    "concentric_circles",
    "gaussian_blobs",
    "spiral",
    "uniform_box",
    "anisotropic_gaussian",
    "student_t_cloud",
    "GENERATORS",
    "GeneratorSpec",
    "ParamSpec",
    "generate",
    "MAX_GENERATED_VALUES",
]

#: Largest ``n * dim`` a generator will produce (5e7 float64 values = 400 MB).
#: A guard against a mistyped sample size freezing the machine, not a
#: statistical limit; generate in chunks with different seeds if you need more.
MAX_GENERATED_VALUES = 50_000_000

#: Upper bound accepted for ``dim`` by generators that take a dimension.
MAX_DIM = 1_000


# ----------------------------------------------------------------------------
# helpers
# ----------------------------------------------------------------------------
def _check_size(n, dim) -> tuple[int, int]:
    n = check_positive_int(n, name="n", minimum=1)
    dim = check_positive_int(dim, name="dim", minimum=1, maximum=MAX_DIM)
    if n * dim > MAX_GENERATED_VALUES:
        raise ValueError(
            f"n * dim = {n} * {dim} = {n * dim} values exceeds the limit of "
            f"{MAX_GENERATED_VALUES} (MAX_GENERATED_VALUES); use a smaller n."
        )
    return n, dim


def _check_nonneg(value, name: str) -> float:
    return check_positive_float(value, name=name, allow_zero=True)


def _finish(X: np.ndarray, labels: np.ndarray, rng: np.random.Generator, return_labels: bool, *, shuffle: bool):
    """Optionally shuffle rows (so labels are not sorted) and package the output."""
    if shuffle:
        perm = rng.permutation(X.shape[0])
        X, labels = X[perm], labels[perm]
    X = np.ascontiguousarray(X, dtype=np.float64)
    if return_labels:
        return X, np.asarray(labels, dtype=np.int64)
    return X


def _balanced_labels(n: int, k: int) -> np.ndarray:
    """``n`` labels in ``0..k-1`` with counts differing by at most one (unshuffled)."""
    return np.arange(n, dtype=np.int64) % k


# ----------------------------------------------------------------------------
# the paper's mixture of Gaussians
# ----------------------------------------------------------------------------
#: Parameters of the authors' generator (github.com/matejbalog/RKHS-private-database,
#: ``src/data.py``, function ``generate_data_mixture_of_Gaussians``).
PAPER_MIXTURE_PARAMS = {
    "n_components": 10,
    "means_center": 100.0,  # mean of the component means, per coordinate
    "means_std": 200.0,  # std (not variance) of the component means
    "points_std": 30.0,  # std (not variance) of the points around their mean
}


def paper_mixture(
    n: int = 2000,
    dim: int = 2,
    *,
    n_components: int = 10,
    random_state=None,
    return_labels: bool = False,
    legacy: bool = False,
    sample_random_state=None,
):
    r"""The mixture of Gaussians of Balog et al. (2018), Appendix B.

    The generative process of the authors' released code:

    1. component means :math:`\mu_c \sim \mathcal N(100\cdot\mathbf 1,\ 200^2 I_D)`,
       :math:`c = 1, \dots, C` (``C = n_components``, 10 in the paper);
    2. mixing weights :math:`\pi_c \propto 1/c`, i.e. :math:`\propto 1, \frac12,
       \dots, \frac1{10}`;
    3. each point draws its component :math:`c_n \sim \pi` and then
       :math:`x_n \sim \mathcal N(\mu_{c_n},\ 30^2 I_D)`.

    .. note:: **Paper text vs. code.** Appendix B says "covariance 200 I" for the
       means and "covariance 30 I" for the points. The authors' code
       (``src/data.py``: ``sigma_means = 200.0``, ``sigma_data = 30.0`` passed as
       ``scale=`` to ``np.random.normal``) and the data files behind the paper's
       figures use these numbers as **standard deviations**, i.e. covariances
       :math:`200^2 I` and :math:`30^2 I`. This function follows the code: the
       released ``mixture_of_Gaussians_N100000_D{2,5}.npz`` have per-coordinate
       standard deviations of about 130-270, whereas the literal text would give
       about 14.

    Parameters
    ----------
    n : int, default=2000
        Number of points (the paper uses 100 000).
    dim : int, default=2
        Dimension D (the paper uses 2 and 5).
    n_components : int, default=10
        Number of mixture components C; weights are proportional to ``1/c``.
    random_state : None, int or numpy.random.Generator
        Source of randomness (see :func:`dpkme._validation.check_random_state`).
    return_labels : bool, default=False
        Also return the component index (0-based; component 0 has the largest
        weight) of every point.
    legacy : bool, default=False
        Use numpy's legacy Mersenne-Twister stream (a private
        ``numpy.random.RandomState(seed)``, never the global state) with the
        authors' order of draws. ``paper_mixture(100_000, D, random_state=0,
        legacy=True)`` reproduces the paper's data file for D = 2 and D = 5 to
        within floating-point rounding (about 1e-13). Requires an int seed.
    sample_random_state : None, int or numpy.random.Generator, default=None
        Source of the rows' randomness (components and points, steps 2-3) when given; the mixture itself (the
        component means, step 1) still comes from ``random_state``. So
        ``paper_mixture(n, random_state=s, sample_random_state=t)`` is a fresh sample of the **same** mixture as
        ``paper_mixture(n, random_state=s)`` -- e.g. simulated planning data that shares no row with the data --
        where another ``random_state`` would move the means. Not with ``legacy=True``.

    Returns
    -------
    X : ndarray of shape (n, dim), float64
    labels : ndarray of shape (n,), int64
        Only if ``return_labels``.

    Notes
    -----
    Points are *not* shuffled after generation (the component labels are
    already i.i.d.), exactly as in the authors' code.
    """
    n, dim = _check_size(n, dim)
    C = check_positive_int(n_components, name="n_components", minimum=1, maximum=10_000)
    p = PAPER_MIXTURE_PARAMS
    weights = 1.0 / np.arange(1, C + 1)
    weights /= weights.sum()
    if legacy and sample_random_state is not None:
        raise ValueError("sample_random_state is not available with legacy=True (the authors' single stream).")
    if legacy:
        if isinstance(random_state, (bool, np.bool_)) or not isinstance(random_state, (int, np.integer)):
            raise ValueError(
                "legacy=True reproduces the authors' numpy.random.seed(seed) stream and needs an int "
                f"random_state (the paper's files use 0), got {_short(random_state)}."
            )
        if not 0 <= int(random_state) < 2**32:
            raise ValueError(f"legacy=True needs 0 <= random_state < 2**32, got {random_state}.")
        rs = np.random.RandomState(int(random_state))
        means = rs.normal(loc=p["means_center"] * np.ones(dim), scale=p["means_std"], size=(C, dim))
        labels = rs.choice(C, size=n, p=weights)
        # The authors draw one point at a time with rs.normal(loc=mu, scale=30); the
        # legacy stream produces the same normals when drawn in one (n, dim) block.
        X = means[labels] + p["points_std"] * rs.standard_normal(size=(n, dim))
    else:
        rng, _ = check_random_state(random_state)
        means = rng.normal(loc=p["means_center"], scale=p["means_std"], size=(C, dim))
        if sample_random_state is not None:
            rng, _ = check_random_state(sample_random_state)
        labels = rng.choice(C, size=n, p=weights)
        X = means[labels] + p["points_std"] * rng.standard_normal(size=(n, dim))
    return _finish(X, labels, None, return_labels, shuffle=False)


# ----------------------------------------------------------------------------
# classic 2-D shapes and simple distributions
# ----------------------------------------------------------------------------
def two_moons(
    n: int = 2000,
    *,
    noise: float = 0.1,
    scale: float = 1.0,
    random_state=None,
    return_labels: bool = False,
):
    r"""Two interleaving half circles in 2-D.

    The upper moon is :math:`(\cos t, \sin t)`, the lower one
    :math:`(1 - \cos t,\ \tfrac12 - \sin t)`, with :math:`t \sim U[0, \pi]`
    drawn independently for every point (unlike scikit-learn's ``make_moons``,
    which uses an evenly spaced grid, so that the sample is i.i.d.). Gaussian
    noise of standard deviation ``noise`` is added, then everything is
    multiplied by ``scale``.

    Parameters
    ----------
    n : int, default=2000
        Number of points; the moons get ``ceil(n/2)`` and ``floor(n/2)`` points.
    noise : float, default=0.1
        Standard deviation of the isotropic Gaussian noise (before scaling).
    scale : float, default=1.0
        Overall scale factor (> 0).
    random_state, return_labels
        As in :func:`paper_mixture`; labels are 0 (upper) and 1 (lower moon).

    Returns
    -------
    X : ndarray (n, 2), labels : ndarray (n,) if ``return_labels``
    """
    n, _ = _check_size(n, 2)
    noise = _check_nonneg(noise, "noise")
    scale = check_positive_float(scale, name="scale")
    rng, _ = check_random_state(random_state)
    labels = _balanced_labels(n, 2)
    t = rng.uniform(0.0, math.pi, size=n)
    X = np.where(
        (labels == 0)[:, None],
        np.column_stack([np.cos(t), np.sin(t)]),
        np.column_stack([1.0 - np.cos(t), 0.5 - np.sin(t)]),
    )
    X = scale * (X + noise * rng.standard_normal((n, 2)))
    return _finish(X, labels, rng, return_labels, shuffle=True)


def concentric_circles(
    n: int = 2000,
    *,
    factor: float = 0.5,
    noise: float = 0.05,
    scale: float = 1.0,
    random_state=None,
    return_labels: bool = False,
):
    r"""Two concentric rings in 2-D: radius ``scale`` (label 0) and ``factor * scale`` (label 1).

    Angles are i.i.d. :math:`U[0, 2\pi)`; isotropic Gaussian noise of standard
    deviation ``noise`` is added before scaling.

    Parameters
    ----------
    n : int, default=2000
        Number of points, split as evenly as possible between the rings.
    factor : float, default=0.5
        Ratio of inner to outer radius, ``0 < factor < 1``.
    noise : float, default=0.05
        Noise standard deviation (in units of the outer radius).
    scale : float, default=1.0
        Outer radius.
    random_state, return_labels
        As in :func:`paper_mixture`.
    """
    n, _ = _check_size(n, 2)
    factor = check_positive_float(factor, name="factor")
    if not factor < 1:
        raise ValueError(f"factor must satisfy 0 < factor < 1 (inner/outer radius), got {factor}.")
    noise = _check_nonneg(noise, "noise")
    scale = check_positive_float(scale, name="scale")
    rng, _ = check_random_state(random_state)
    labels = _balanced_labels(n, 2)
    t = rng.uniform(0.0, 2.0 * math.pi, size=n)
    radius = np.where(labels == 0, 1.0, factor)
    X = radius[:, None] * np.column_stack([np.cos(t), np.sin(t)])
    X = scale * (X + noise * rng.standard_normal((n, 2)))
    return _finish(X, labels, rng, return_labels, shuffle=True)


def gaussian_blobs(
    n: int = 2000,
    dim: int = 2,
    *,
    n_centers: int = 3,
    cluster_std: float = 1.0,
    box_half_width: float = 10.0,
    random_state=None,
    return_labels: bool = False,
    sample_random_state=None,
):
    r"""Isotropic Gaussian blobs with equal weights and random centres.

    Centres are drawn uniformly from the cube :math:`[-b, b]^D`
    (``b = box_half_width``); each point picks a centre uniformly at random
    (i.i.d.) and adds :math:`\mathcal N(0, \sigma^2 I_D)` noise with
    :math:`\sigma` = ``cluster_std``.

    Parameters
    ----------
    n, dim : int
        Number of points and dimension.
    n_centers : int, default=3
        Number of blobs.
    cluster_std : float, default=1.0
        Within-blob standard deviation (> 0).
    box_half_width : float, default=10.0
        Centres lie in ``[-box_half_width, box_half_width]^dim``.
    random_state, return_labels
        As in :func:`paper_mixture`; labels are blob indices.
    sample_random_state : None, int or numpy.random.Generator, default=None
        Source of the rows' randomness when given (the centres still come from ``random_state``): a fresh
        sample of the same blobs, as in :func:`paper_mixture`.
    """
    n, dim = _check_size(n, dim)
    k = check_positive_int(n_centers, name="n_centers", minimum=1, maximum=10_000)
    sd = check_positive_float(cluster_std, name="cluster_std")
    b = check_positive_float(box_half_width, name="box_half_width")
    rng, _ = check_random_state(random_state)
    centers = rng.uniform(-b, b, size=(k, dim))
    if sample_random_state is not None:
        rng, _ = check_random_state(sample_random_state)
    labels = rng.integers(0, k, size=n)
    X = centers[labels] + sd * rng.standard_normal((n, dim))
    return _finish(X, labels, rng, return_labels, shuffle=False)


def spiral(
    n: int = 2000,
    *,
    n_arms: int = 2,
    turns: float = 1.5,
    noise: float = 0.03,
    scale: float = 1.0,
    random_state=None,
    return_labels: bool = False,
):
    r"""Interleaved Archimedean spirals in 2-D (one arm: a 2-D "swiss roll").

    Arm :math:`k` is the curve :math:`r\,(\cos(2\pi T r + 2\pi k/K),\ \sin(2\pi T r
    + 2\pi k/K))` for radius :math:`r \sim U[0.05, 1]`, with ``T = turns`` and
    ``K = n_arms``; isotropic Gaussian noise of standard deviation ``noise`` is
    added, then everything is multiplied by ``scale``.

    Parameters
    ----------
    n : int, default=2000
        Number of points, split as evenly as possible between the arms.
    n_arms : int, default=2
        Number of arms (1 gives a single swiss-roll-like spiral).
    turns : float, default=1.5
        Number of full turns of each arm.
    noise : float, default=0.03
        Noise standard deviation (in units of the outer radius).
    scale : float, default=1.0
        Outer radius.
    random_state, return_labels
        As in :func:`paper_mixture`; labels are arm indices.
    """
    n, _ = _check_size(n, 2)
    K = check_positive_int(n_arms, name="n_arms", minimum=1, maximum=20)
    T = check_positive_float(turns, name="turns")
    noise = _check_nonneg(noise, "noise")
    scale = check_positive_float(scale, name="scale")
    rng, _ = check_random_state(random_state)
    labels = _balanced_labels(n, K)
    r = rng.uniform(0.05, 1.0, size=n)
    angle = 2.0 * math.pi * (T * r + labels / K)
    X = r[:, None] * np.column_stack([np.cos(angle), np.sin(angle)])
    X = scale * (X + noise * rng.standard_normal((n, 2)))
    return _finish(X, labels, rng, return_labels, shuffle=True)


def uniform_box(
    n: int = 2000,
    dim: int = 2,
    *,
    low: float = -1.0,
    high: float = 1.0,
    random_state=None,
    return_labels: bool = False,
):
    """Uniform distribution on the cube ``[low, high]^dim``.

    Parameters
    ----------
    n, dim : int
        Number of points and dimension.
    low, high : float
        The cube's bounds, ``low < high``.
    random_state : None, int or numpy.random.Generator
        As in :func:`paper_mixture`.
    return_labels : bool, default=False
        Also return all-zero labels (one class), so that every generator supports the flag.

    Returns
    -------
    X : ndarray (n, dim), labels : ndarray (n,) if ``return_labels``
    """
    n, dim = _check_size(n, dim)
    lo = _finite_scalar(low, "low")
    hi = _finite_scalar(high, "high")
    if not lo < hi:
        raise ValueError(f"need low < high, got low={lo}, high={hi}.")
    rng, _ = check_random_state(random_state)
    X = rng.uniform(lo, hi, size=(n, dim))
    return _finish(X, np.zeros(n, dtype=np.int64), rng, return_labels, shuffle=False)


def anisotropic_gaussian(
    n: int = 2000,
    dim: int = 2,
    *,
    major_std: float = 3.0,
    minor_std: float = 0.5,
    angle_deg: float = 30.0,
    random_state=None,
    return_labels: bool = False,
):
    r"""An elongated (anisotropic) centred Gaussian.

    The covariance has standard deviation ``major_std`` along the direction at
    angle ``angle_deg`` (counter-clockwise from the first axis) in the plane of
    the first two coordinates, and ``minor_std`` along every other principal
    direction: :math:`\Sigma = R\,\mathrm{diag}(s_1^2, s_2^2, \dots, s_2^2)\,R^\top`
    with :math:`R` the rotation by ``angle_deg`` in coordinates 1-2. For
    ``dim=1`` only ``major_std`` is used.

    Parameters
    ----------
    n, dim : int
        Number of points and dimension.
    major_std, minor_std : float
        Standard deviations along the long axis and along every other principal axis (> 0).
    angle_deg : float, default=30.0
        Rotation of the long axis in the plane of the first two coordinates, in degrees.
    random_state : None, int or numpy.random.Generator
        As in :func:`paper_mixture`.
    return_labels : bool, default=False
        Also return all-zero labels (one class).

    Returns
    -------
    X : ndarray (n, dim), labels : ndarray (n,) if ``return_labels``
    """
    n, dim = _check_size(n, dim)
    s1 = check_positive_float(major_std, name="major_std")
    s2 = check_positive_float(minor_std, name="minor_std")
    theta = math.radians(_finite_scalar(angle_deg, "angle_deg"))
    rng, _ = check_random_state(random_state)
    stds = np.full(dim, s2)
    stds[0] = s1
    Z = rng.standard_normal((n, dim)) * stds
    if dim >= 2:
        c, s = math.cos(theta), math.sin(theta)
        x0, x1 = Z[:, 0].copy(), Z[:, 1].copy()
        Z[:, 0] = c * x0 - s * x1
        Z[:, 1] = s * x0 + c * x1
    return _finish(Z, np.zeros(n, dtype=np.int64), rng, return_labels, shuffle=False)


def student_t_cloud(
    n: int = 2000,
    dim: int = 2,
    *,
    df: float = 3.0,
    scale: float = 1.0,
    random_state=None,
    return_labels: bool = False,
):
    r"""A heavy-tailed multivariate Student-t cloud centred at 0.

    :math:`x = s\, z / \sqrt{g/\nu}` with :math:`z \sim \mathcal N(0, I_D)` and
    :math:`g \sim \chi^2_\nu` independent (``s = scale``, ``nu = df``). For
    ``df <= 2`` the variance is infinite; the tails make it a good test of
    clipping to a declared box (:func:`clip_to_box`).

    Parameters
    ----------
    n, dim : int
        Number of points and dimension.
    df : float, default=3.0
        Degrees of freedom :math:`\nu` (> 0; smaller means heavier tails).
    scale : float, default=1.0
        Scale :math:`s` (> 0).
    random_state : None, int or numpy.random.Generator
        As in :func:`paper_mixture`.
    return_labels : bool, default=False
        Also return all-zero labels (one class).

    Returns
    -------
    X : ndarray (n, dim), labels : ndarray (n,) if ``return_labels``
    """
    n, dim = _check_size(n, dim)
    nu = check_positive_float(df, name="df")
    s = check_positive_float(scale, name="scale")
    rng, _ = check_random_state(random_state)
    z = rng.standard_normal((n, dim))
    g = rng.chisquare(nu, size=n)
    # chi-square draws can underflow to 0 for tiny df; keep the result finite.
    g = np.maximum(g, np.finfo(np.float64).tiny)
    X = s * z / np.sqrt(g / nu)[:, None]
    X = np.clip(X, -np.finfo(np.float64).max, np.finfo(np.float64).max)
    return _finish(X, np.zeros(n, dtype=np.int64), rng, return_labels, shuffle=False)


def _finite_scalar(value, name: str) -> float:
    if isinstance(value, (bool, np.bool_)) or not isinstance(value, (int, float, np.integer, np.floating)):
        raise ValueError(f"{name} must be a real number, got {_short(value)}.")
    v = float(value)
    if not math.isfinite(v):
        raise ValueError(f"{name} must be finite, got {_short(value)}.")
    return v


# ----------------------------------------------------------------------------
# registry
# ----------------------------------------------------------------------------
@dataclass(frozen=True)
class ParamSpec:
    """One numeric parameter of a generator, for building a form.

    Parameters
    ----------
    name : str
        Keyword argument name.
    label : str
        Human-readable label.
    kind : {"int", "float"}
        Type of the value.
    default : int or float
        Default value.
    minimum, maximum : int or float or None
        Bounds suggested for a widget (the function validates its own input).
    help : str
        One-sentence explanation.
    """

    name: str
    label: str
    kind: str
    default: float | int
    minimum: float | int | None = None
    maximum: float | int | None = None
    help: str = ""


@dataclass(frozen=True)
class GeneratorSpec:
    """A generator with the metadata a user interface needs.

    Calling the spec calls the function: ``GENERATORS["spiral"](n=300,
    random_state=1)``. Every function accepts ``random_state`` and
    ``return_labels`` in addition to :attr:`params`.

    Parameters
    ----------
    name : str
        Registry key.
    label : str
        Short human-readable name.
    description : str
        One or two sentences for a help text.
    function : callable
        The generator.
    params : tuple of ParamSpec
        All parameters other than ``random_state``/``return_labels`` (``n`` and,
        where meaningful, ``dim`` come first).
    fixed_dim : int or None
        Output dimension if fixed (2 for the planar shapes), else ``None``
        (``dim`` is then a parameter).
    has_labels : bool
        Whether ``return_labels=True`` gives meaningful (more than one) classes.
    reference : str
        Where the distribution comes from (a paper, a code file), if anywhere.
    """

    name: str
    label: str
    description: str
    function: Callable[..., Any]
    params: tuple[ParamSpec, ...]
    fixed_dim: int | None = None
    has_labels: bool = False
    reference: str = ""

    @property
    def defaults(self) -> dict[str, Any]:
        """``{param name: default}`` for every parameter."""
        return {p.name: p.default for p in self.params}

    def __call__(self, **kwargs):
        return self.function(**kwargs)


_N = ParamSpec("n", "Number of points", "int", 2000, 10, 200_000, "Size N of the (private) data set.")


def _dim(default: int = 2) -> ParamSpec:
    return ParamSpec("dim", "Dimension", "int", default, 1, 50, "Number of coordinates D of every point.")


GENERATORS: dict[str, GeneratorSpec] = {
    spec.name: spec
    for spec in (
        GeneratorSpec(
            "paper_mixture",
            "Paper: mixture of 10 Gaussians",
            "The synthetic data of Balog et al. (2018, App. B): 10 spherical Gaussians (std 30) with "
            "weights proportional to 1, 1/2, ..., 1/10 and means drawn from N(100, 200^2) per coordinate.",
            paper_mixture,
            (
                _N,
                _dim(2),
                ParamSpec("n_components", "Components", "int", 10, 1, 50, "Number of mixture components."),
            ),
            has_labels=True,
            reference="Balog, Tolstikhin, Schölkopf (ICML 2018), Appendix B; authors' src/data.py.",
        ),
        GeneratorSpec(
            "two_moons",
            "Two moons",
            "Two interleaving half circles in the plane with Gaussian noise.",
            two_moons,
            (
                _N,
                ParamSpec("noise", "Noise std", "float", 0.1, 0.0, 1.0, "Standard deviation of the added noise."),
                ParamSpec("scale", "Scale", "float", 1.0, 0.01, 1000.0, "Overall scale factor."),
            ),
            fixed_dim=2,
            has_labels=True,
        ),
        GeneratorSpec(
            "concentric_circles",
            "Concentric rings",
            "Two noisy concentric circles in the plane; their means coincide, so only a characteristic "
            "kernel tells them apart.",
            concentric_circles,
            (
                _N,
                ParamSpec("factor", "Inner/outer radius", "float", 0.5, 0.05, 0.95, "Ratio of the radii."),
                ParamSpec("noise", "Noise std", "float", 0.05, 0.0, 1.0, "Standard deviation of the added noise."),
                ParamSpec("scale", "Outer radius", "float", 1.0, 0.01, 1000.0, "Radius of the outer ring."),
            ),
            fixed_dim=2,
            has_labels=True,
        ),
        GeneratorSpec(
            "gaussian_blobs",
            "Gaussian blobs",
            "Equally weighted isotropic Gaussian clusters with centres drawn uniformly from a cube.",
            gaussian_blobs,
            (
                _N,
                _dim(2),
                ParamSpec("n_centers", "Clusters", "int", 3, 1, 50, "Number of blobs."),
                ParamSpec("cluster_std", "Cluster std", "float", 1.0, 0.01, 100.0, "Within-cluster std."),
                ParamSpec(
                    "box_half_width", "Centre box half-width", "float", 10.0, 0.1, 1000.0,
                    "Centres lie in [-b, b]^D.",
                ),
            ),
            has_labels=True,
        ),
        GeneratorSpec(
            "spiral",
            "Spiral / swiss roll",
            "Interleaved noisy spiral arms in the plane (one arm is a 2-D swiss roll).",
            spiral,
            (
                _N,
                ParamSpec("n_arms", "Arms", "int", 2, 1, 20, "Number of spiral arms."),
                ParamSpec("turns", "Turns", "float", 1.5, 0.25, 5.0, "Full turns of each arm."),
                ParamSpec("noise", "Noise std", "float", 0.03, 0.0, 0.5, "Standard deviation of the added noise."),
                ParamSpec("scale", "Outer radius", "float", 1.0, 0.01, 1000.0, "Overall scale factor."),
            ),
            fixed_dim=2,
            has_labels=True,
        ),
        GeneratorSpec(
            "uniform_box",
            "Uniform square / cube",
            "Points uniform on the cube [low, high]^D.",
            uniform_box,
            (
                _N,
                _dim(2),
                ParamSpec("low", "Lower bound", "float", -1.0, -1000.0, 1000.0, "Lower end of every coordinate."),
                ParamSpec("high", "Upper bound", "float", 1.0, -1000.0, 1000.0, "Upper end of every coordinate."),
            ),
        ),
        GeneratorSpec(
            "anisotropic_gaussian",
            "Elongated Gaussian",
            "A centred Gaussian stretched along one direction and rotated in the first two coordinates.",
            anisotropic_gaussian,
            (
                _N,
                _dim(2),
                ParamSpec("major_std", "Major-axis std", "float", 3.0, 0.01, 1000.0, "Std along the long axis."),
                ParamSpec("minor_std", "Minor-axis std", "float", 0.5, 0.01, 1000.0, "Std along the other axes."),
                ParamSpec("angle_deg", "Angle (degrees)", "float", 30.0, -180.0, 180.0, "Rotation of the long axis."),
            ),
        ),
        GeneratorSpec(
            "student_t_cloud",
            "Heavy-tailed (Student-t) cloud",
            "A multivariate Student-t sample: mostly a tight cloud with a few far outliers; try clipping "
            "it to a declared box.",
            student_t_cloud,
            (
                _N,
                _dim(2),
                ParamSpec("df", "Degrees of freedom", "float", 3.0, 0.5, 100.0, "Smaller means heavier tails."),
                ParamSpec("scale", "Scale", "float", 1.0, 0.01, 1000.0, "Scale of the cloud."),
            ),
        ),
    )
}


def generate(name: str, *, random_state=None, return_labels: bool = False, **params):
    """Call the generator registered as ``name`` with its defaults overridden by ``params``.

    Parameters
    ----------
    name : str
        A key of :data:`GENERATORS`.
    random_state : None, int or numpy.random.Generator
        As in :func:`paper_mixture`.
    return_labels : bool, default=False
        Also return the labels.
    **params
        Parameters of the generator (see its :class:`GeneratorSpec`).

    Returns
    -------
    X : ndarray (n, D), labels : ndarray (n,) if ``return_labels``

    Raises
    ------
    ValueError
        An unknown name or parameter (the message lists the valid ones).
    """
    if name not in GENERATORS:
        raise ValueError(f"unknown generator {name!r}; choose one of {sorted(GENERATORS)}.")
    spec = GENERATORS[name]
    unknown = set(params) - set(spec.defaults)
    if unknown:
        raise ValueError(
            f"generator {name!r} has no parameter(s) {sorted(unknown)}; its parameters are {list(spec.defaults)}."
        )
    kwargs = {**spec.defaults, **params}
    return spec.function(**kwargs, random_state=random_state, return_labels=return_labels)
