r"""Random Fourier features with unit norm, and their streamed mean embedding.

For a translation-invariant kernel :math:`k(x,y) = a\,\kappa(x-y)` and
frequencies :math:`\omega_1,\dots,\omega_{J/2}` drawn from its spectral
measure (:meth:`dpkme.kernels.Kernel.sample_frequencies`), the paired map

.. math::
    \phi(x) = \sqrt{\frac{2a}{J}}\,\bigl[\cos(\omega_j^\top x),\ \sin(\omega_j^\top x)\bigr]_{j=1}^{J/2}
    \in \mathbb R^J

satisfies :math:`\phi(x)^\top\phi(y) = \frac{2a}{J}\sum_j \cos(\omega_j^\top(x-y))
\to k(x, y)` and :math:`\|\phi(x)\|_2^2 = a` **exactly for every x**, so
:math:`\|\phi(x)\|_2 \le 1` as Proposition 9 of Balog et al. (2018) requires
whenever :math:`a \le 1`. The common map :math:`\sqrt{2/J}\cos(\omega^\top x + b)`
has :math:`\|\phi(x)\|_2^2 = \frac2J\sum_j\cos^2(\cdot)`, which exceeds 1 for
some x (up to 2), so it breaks the sensitivity bound 2/N; it is provided only as
:class:`CosineBiasFeatures` for teaching and for the privacy audit.

The mean feature vector :math:`\hat\mu^\phi_X = \frac1N\sum_n\phi(x_n)` is
computed in blocks of rows (never an :math:`N\times J` matrix). The cosines and
sines may be evaluated in float32 (about 15x faster than float64 on this
hardware); every row is then renormalised in float64 to norm :math:`\sqrt a`
and accumulated in float64, so the unit-norm guarantee holds up to float64
rounding (``norm_bound`` below adds a margin of :math:`10^{-12}` for it).
"""

from __future__ import annotations

import math

import numpy as np

from .._blocked import block_ranges, parallel_map
from .._validation import check_array, check_in, check_positive_int, check_random_state
from .kernel import Kernel, check_magnitude

__all__ = ["RandomFourierFeatures", "CosineBiasFeatures"]

# Rows of X per block when streaming the feature mean (block = rows x J/2 floats).
_TARGET_BLOCK_ELEMENTS = 1 << 20


class RandomFourierFeatures:
    """Unit-norm paired cos/sin random Fourier features for a dpkme kernel.

    Parameters
    ----------
    kernel : Kernel
        Translation-invariant kernel from :mod:`dpkme.kernels`.
    n_components : int, default=1000
        Number of features :math:`J` (even; :math:`J/2` frequencies).
    random_state : None, int or numpy.random.Generator
        Source of the frequencies. The frequencies are drawn independently of
        any data, which is what makes the feature map public.
    dtype : {"float32", "float64"}, default="float32"
        Precision of the trigonometric evaluation in :meth:`mean_embedding` and
        :meth:`transform`; accumulation and renormalisation are float64.

    Attributes
    ----------
    frequencies_ : ndarray of shape (J/2, D)
        Set by :meth:`fit`.
    seed_ : int or None
        Seed used for the frequencies (``None`` if a Generator was passed).
    """

    def __init__(self, kernel: Kernel, *, n_components: int = 1000, random_state=None, dtype: str = "float32"):
        if not isinstance(kernel, Kernel):
            raise ValueError(f"kernel must be a dpkme Kernel, got {kernel!r}.")
        self.kernel = kernel
        self.n_components = check_positive_int(n_components, name="n_components", minimum=2)
        if self.n_components % 2:
            raise ValueError(
                f"n_components must be even (paired cos/sin features), got {n_components}."
            )
        self.random_state = random_state
        try:
            name = str(np.dtype(dtype)) if dtype is not None else "None"
        except TypeError:
            name = repr(dtype)
        self.dtype = check_in(name, {"float32", "float64"}, name="dtype")

    # ------------------------------------------------------------------ fit
    def fit(self, dim: int) -> RandomFourierFeatures:
        """Draw the frequencies for inputs of dimension ``dim``.

        Only the *dimension* is needed: passing data would invite
        data-dependent feature maps, so an int is required.
        """
        if not isinstance(dim, (int, np.integer)) or isinstance(dim, bool):
            raise ValueError(
                f"fit takes the input dimension as an int (the feature map must not depend on data), got {type(dim).__name__}."
            )
        dim = check_positive_int(dim, name="dim")
        rng, self.seed_ = check_random_state(self.random_state)
        self.frequencies_ = self.kernel.sample_frequencies(self.n_components // 2, dim, rng)
        self.n_features_in_ = dim
        return self

    def _check_fitted(self) -> None:
        if not hasattr(self, "frequencies_"):
            raise ValueError("RandomFourierFeatures is not fitted; call fit(dim) first.")

    @property
    def norm_bound(self) -> float:
        """Upper bound on :math:`\\|\\phi(x)\\|_2` used for sensitivities (sqrt(a) plus float64 margin)."""
        return math.sqrt(self.kernel.amplitude) * (1.0 + 1e-12)

    # ------------------------------------------------------------ transform
    def _block(self, Xb: np.ndarray, W: np.ndarray) -> np.ndarray:
        """Features of a block of rows, renormalised to norm sqrt(a) in float64."""
        if W.dtype == np.float32 and Xb.size and float(np.abs(Xb).max()) * self._w_l1 > 1e37:
            W = self.frequencies_  # the float32 angles would overflow: evaluate this block in float64
        arg = Xb.astype(W.dtype, copy=False) @ W.T
        c = np.cos(arg)
        s = np.sin(arg, out=arg)
        feats = np.concatenate([c, s], axis=1).astype(np.float64)
        norms = np.sqrt(np.einsum("ij,ij->i", feats, feats))
        feats *= (math.sqrt(self.kernel.amplitude) / norms)[:, None]
        return feats

    @property
    def _w_l1(self) -> float:
        """Largest L1 norm of a frequency: bounds |w.x| by max|x| times this."""
        return float(np.abs(self.frequencies_).sum(axis=1).max(initial=0.0))

    def _prepared_frequencies(self):
        W = self.frequencies_
        return W.astype(np.float32) if self.dtype == "float32" else W

    def transform(self, X) -> np.ndarray:
        """Feature matrix :math:`\\phi(X)` of shape ``(N, J)`` (use for modest N).

        Columns are ``[cos(W x), sin(W x)]``; every row has norm exactly
        ``sqrt(amplitude)`` up to float64 rounding.
        """
        self._check_fitted()
        X = check_magnitude(check_array(X, name="X", n_features=self.n_features_in_))
        W = self._prepared_frequencies()
        rows = block_ranges(X.shape[0], max(1, _TARGET_BLOCK_ELEMENTS // max(1, W.shape[0])))
        parts = parallel_map(lambda r: self._block(X[r[0]:r[1]], W), rows)
        return np.concatenate(parts, axis=0)

    def mean_embedding(self, X) -> np.ndarray:
        """Streamed :math:`\\frac1N\\sum_n \\phi(x_n)` (float64), memory O(J + block).

        This reads the private data; everything computed from it must be
        privatised before release (see :mod:`dpkme.release.random_features`).
        """
        self._check_fitted()
        X = check_magnitude(check_array(X, name="X", n_features=self.n_features_in_))
        W = self._prepared_frequencies()
        rows = block_ranges(X.shape[0], max(64, _TARGET_BLOCK_ELEMENTS // max(1, W.shape[0])))

        def work(r):
            return self._block(X[r[0]:r[1]], W).sum(axis=0)

        total = np.zeros(self.n_components)
        for part in parallel_map(work, rows):
            total += part
        return total / X.shape[0]

    def kernel_approximation(self, A, B=None) -> np.ndarray:
        """:math:`\\phi(A)\\phi(B)^\\top`, the random-feature kernel (for tests and plots)."""
        FA = self.transform(A)
        FB = FA if B is None else self.transform(B)
        return FA @ FB.T


class CosineBiasFeatures:
    r"""The common map :math:`\sqrt{2/J}\cos(\omega^\top x + b)` — **not** norm-bounded.

    :math:`\|\phi(x)\|_2^2 = \frac2J\sum_j\cos^2(\omega_j^\top x + b_j)` ranges
    over :math:`[0, 2]`, so the L2 sensitivity of the mean is up to
    :math:`2\sqrt2/N`, not the :math:`2/N` that Proposition 9 assumes. Kept for
    the privacy audit (a mechanism calibrated to 2/N with these features must be
    caught) and for teaching; never used by a release.

    Parameters
    ----------
    kernel : Kernel
        Translation-invariant kernel from :mod:`dpkme.kernels`; its amplitude
        :math:`a` scales the map to :math:`\sqrt{2a/J}\cos(\omega^\top x + b)`.
    n_components : int, default=1000
        Number of features :math:`J`, one frequency :math:`\omega_j` and one
        offset :math:`b_j \sim \mathcal U[0, 2\pi)` each (any :math:`J \ge 1`).
    random_state : None, int or numpy.random.Generator
        Source of the frequencies and offsets, drawn by :meth:`fit` independently
        of any data.

    Attributes
    ----------
    frequencies_ : ndarray of shape (J, D)
        Set by :meth:`fit`.
    offsets_ : ndarray of shape (J,)
        Phases :math:`b_j`, set by :meth:`fit`.
    seed_ : int or None
        Seed used (``None`` if a Generator was passed).

    Examples
    --------
    >>> import numpy as np
    >>> from dpkme.kernels import GaussianKernel
    >>> f = CosineBiasFeatures(GaussianKernel(lengthscale=1.0), n_components=100, random_state=0).fit(2)
    >>> norms = np.linalg.norm(f.transform(np.random.default_rng(1).normal(size=(500, 2))), axis=1)
    >>> bool(norms.max() > 1.0)          # the bound ||phi(x)|| <= 1 of Proposition 9 fails
    True
    """

    def __init__(self, kernel: Kernel, *, n_components: int = 1000, random_state=None):
        if not isinstance(kernel, Kernel):
            raise ValueError(f"kernel must be a dpkme Kernel, got {kernel!r}.")
        self.kernel = kernel
        self.n_components = check_positive_int(n_components, name="n_components")
        self.random_state = random_state

    def fit(self, dim: int) -> CosineBiasFeatures:
        dim = check_positive_int(dim, name="dim")
        rng, self.seed_ = check_random_state(self.random_state)
        self.frequencies_ = self.kernel.sample_frequencies(self.n_components, dim, rng)
        self.offsets_ = rng.uniform(0.0, 2.0 * np.pi, size=self.n_components)
        self.n_features_in_ = dim
        return self

    def transform(self, X) -> np.ndarray:
        if not hasattr(self, "frequencies_"):
            raise ValueError("CosineBiasFeatures is not fitted; call fit(dim) first.")
        X = check_magnitude(check_array(X, name="X", n_features=self.n_features_in_))
        return math.sqrt(2.0 * self.kernel.amplitude / self.n_components) * np.cos(
            X @ self.frequencies_.T + self.offsets_
        )

    def mean_embedding(self, X) -> np.ndarray:
        return self.transform(X).mean(axis=0)
