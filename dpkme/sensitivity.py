r"""Sensitivities of kernel mean embeddings under an explicit neighbouring relation.

Neighbouring relations
----------------------
``"replace-one"`` (bounded DP, the paper's Definition 1): :math:`D \sim D'` if
they have the same size :math:`N` and differ in one row. :math:`N` is public.

``"add-remove"`` (unbounded DP): :math:`D'` is :math:`D` with one row added or
removed. The embedding is then normalised by a *public* size :math:`N`
(declared, not counted from the data), i.e. the released statistic is
:math:`\frac1N\sum_{x\in D} k(x,\cdot)`; its change is a single
:math:`k(x,\cdot)/N`.

RKHS sensitivity of the empirical KME (Lemma 13 of Balog et al. 2018, tightened)
----------------------------------------------------------------------------------
With :math:`k(x,x) \le a` for all x and :math:`k(x, x') \ge k_{\min}` for all x, x'
in the (declared) domain,

.. math::
    \|\hat\mu_D - \hat\mu_{D'}\|_{\mathcal H} = \frac1N\|k(x,\cdot) - k(x',\cdot)\|_{\mathcal H}
    = \frac1N\sqrt{k(x,x) + k(x',x') - 2k(x,x')} \le \frac{\sqrt{2a - 2k_{\min}}}{N}

under replace-one. For the non-negative kernels of :mod:`dpkme.kernels`
:math:`k_{\min}\ge 0`, so :math:`\Delta = \sqrt{2a}/N` (the paper's
triangle-inequality bound is :math:`2\sqrt a/N`, available as ``mode="paper"``).
On a declared box the minimum kernel value over the box gives a smaller
:math:`\Delta`. Under add/remove :math:`\Delta = \sqrt a/N`.

Projections (Algorithm 1) and random-feature maps with
:math:`\|\phi(x)\|_2 \le b` (Algorithm 2, Proposition 9) inherit these bounds:
a projection is 1-Lipschitz, and :math:`\|\phi(x) - \phi(x')\|_2 \le 2b`
(replace-one), :math:`\|\phi(x)\|_2 \le b` (add/remove).
"""

from __future__ import annotations

import math

from ._validation import check_delta, check_epsilon, check_in, check_positive_float, check_positive_int
from .kernels import Kernel

__all__ = ["NEIGHBOURING", "SENSITIVITY_MODES", "kme_sensitivity", "feature_mean_sensitivity", "check_private_kernel",
           "check_release_args"]

NEIGHBOURING = ("replace-one", "add-remove")
SENSITIVITY_MODES = ("tight", "paper")


def check_private_kernel(kernel) -> Kernel:
    """Refuse kernels that the privacy proofs do not cover (``k(x,x) > 1``)."""
    if not isinstance(kernel, Kernel):
        raise ValueError(f"kernel must be a dpkme Kernel, got {kernel!r}.")
    if kernel.diag_value > 1.0:
        raise ValueError(
            f"the privacy guarantee needs k(x, x) <= 1, but this kernel has k(x, x) = {kernel.diag_value}; "
            "use amplitude <= 1."
        )
    return kernel


def check_release_args(kernel, epsilon, delta, *, calibration: str, neighbouring: str,
                       sensitivity: str | None = None, calibrations=("analytic", "classic")) -> tuple[float, float]:
    """Preconditions shared by every Gaussian-noise release: returns validated ``(epsilon, delta)``.

    Refuses kernels with :math:`k(x,x) > 1`, :math:`\\varepsilon \\le 0`,
    :math:`\\delta \\notin (0, 1)`, and unknown calibration, neighbouring relation
    or sensitivity mode, each with a ValueError naming the value.
    """
    check_private_kernel(kernel)
    epsilon = check_epsilon(epsilon)
    delta = check_delta(delta)
    check_in(calibration, calibrations, name="calibration")
    check_in(neighbouring, NEIGHBOURING, name="neighbouring")
    if sensitivity is not None:
        check_in(sensitivity, SENSITIVITY_MODES, name="sensitivity")
    return epsilon, delta


def kme_sensitivity(
    *,
    n: int,
    kernel: Kernel,
    neighbouring: str = "replace-one",
    mode: str = "tight",
    domain: tuple | None = None,
) -> float:
    r"""L2 (RKHS-norm) sensitivity of :math:`\hat\mu_X = \frac1N\sum_n k(x_n, \cdot)`.

    Parameters
    ----------
    n : int
        Public dataset size :math:`N`.
    kernel : Kernel
        Must satisfy :math:`k(x,x) \le 1`.
    neighbouring : {"replace-one", "add-remove"}
    mode : {"tight", "paper"}
        ``"tight"``: :math:`\sqrt{2a - 2k_{\min}}/N` (replace-one) or
        :math:`\sqrt a/N` (add/remove). ``"paper"``: :math:`2\sqrt a/N`
        (Lemma 13 of Balog et al. 2018) regardless of the relation.
    domain : (lower, upper), optional
        A box declared by the user (public), used for :math:`k_{\min}`.

    Returns
    -------
    float
        :math:`\Delta_2`.
    """
    n = check_positive_int(n, name="n")
    check_private_kernel(kernel)
    check_in(neighbouring, NEIGHBOURING, name="neighbouring")
    check_in(mode, SENSITIVITY_MODES, name="mode")
    a = kernel.diag_value
    if mode == "paper":
        return 2.0 * math.sqrt(a) / n
    if neighbouring == "add-remove":
        return math.sqrt(a) / n
    k_min = 0.0 if kernel.nonnegative else -a
    if domain is not None:
        lower, upper = domain
        k_min = max(k_min, kernel.lower_bound_on_box(lower, upper))
    return math.sqrt(max(2.0 * a - 2.0 * k_min, 0.0)) / n


def feature_mean_sensitivity(*, n: int, norm_bound: float = 1.0, neighbouring: str = "replace-one") -> float:
    r"""L2 sensitivity of the mean feature vector :math:`\frac1N\sum_n\phi(x_n)`.

    With :math:`\|\phi(x)\|_2 \le b`: :math:`2b/N` under replace-one (Proposition 9
    of Balog et al. 2018, eq. 25-27) and :math:`b/N` under add/remove. Unlike the
    exact kernel, the random-feature kernel :math:`\phi(x)^\top\phi(x')` takes
    negative values (down to about :math:`-b^2` for far-apart points), so the
    :math:`\sqrt2` improvement of :func:`kme_sensitivity` does not carry over.
    """
    n = check_positive_int(n, name="n")
    b = check_positive_float(norm_bound, name="norm_bound")
    if b > 1.0 + 1e-9:
        raise ValueError(f"the privacy guarantee needs feature norms <= 1, got a bound of {b}.")
    check_in(neighbouring, NEIGHBOURING, name="neighbouring")
    return (2.0 * b if neighbouring == "replace-one" else b) / n
