r"""Sensitivities of the released moments of the two-sample tests, derived for replace-one.

Notation. A public feature map :math:`\phi:\mathbb R^d\to\mathbb R^J`
(:mod:`dpkme.two_sample.features`) with

.. math::
    B = \sup_{x,x'}\|\phi(x)-\phi(x')\|_2, \qquad
    R = \sup_{x,x'}\|\phi(x)\phi(x)^\top - \phi(x')\phi(x')^\top\|_F .

ME (kernel values in :math:`[0,a]`): :math:`B = a\sqrt J`, :math:`R = a^2J`.
SCF (:math:`J_f` frequencies, :math:`J = 2J_f`): :math:`B = 2\sqrt{J_f}`,
:math:`R = \sqrt2 J_f`. Unit-norm RFF: :math:`B = 2\sqrt a`, :math:`R=\sqrt2 a`.

In the issue's language ("features bounded by :math:`\kappa` per coordinate")
we set :math:`\kappa = B/\sqrt J`, a bound on the *root-mean-square*
coordinate of a paired difference :math:`z = \phi(x)-\phi(y)`
(:math:`\|z\|_2\le\kappa\sqrt J`). ME: :math:`\kappa = a` (every coordinate of z
lies in :math:`[-a, a]`); SCF: :math:`\kappa = \sqrt2` -- a coordinate of z can
reach 2, but the norm bound is what matters and it is
:math:`2\sqrt{J_f} = \sqrt2\sqrt J`.

The released quantities are always the mean and the **second moment**
(:math:`\Lambda = \frac1n\sum_i z_iz_i^\top`); the covariance
:math:`\Lambda - ww^\top` is computed from the privatised pair (post-processing).
The second moment is released as a symmetric matrix through the
Frobenius-isometric vectorisation (diagonal, and :math:`\sqrt2\times` the strict
upper triangle), so its L2 sensitivity is the Frobenius sensitivity, and the
noise matrix has :math:`\mathcal N(0,\sigma^2)` on the diagonal and
:math:`\mathcal N(0,\sigma^2/2)` off it (see
:func:`dpkme.two_sample.statistic.symmetric_noise`). The usual Analyze-Gauss
release (noise :math:`\sigma` on every upper-triangular entry) has the same
sensitivity bound but twice the off-diagonal noise variance.

1. Paired design, one individual = one pair (``unit="pair"``)
-------------------------------------------------------------
Rows are :math:`z_i = \phi(x_i)-\phi(y_i)`; neighbouring data sets replace one
pair :math:`(x_i, y_i)` (one row of z), n public. The set
:math:`\mathcal Z = \{\phi(x)-\phi(y)\}` lies in the ball of radius B and is
symmetric (swap x and y), so

* mean :math:`w = \frac1n\sum z_i`:
  :math:`\Delta_w = \sup\|z-z'\|_2/n \le 2B/n`
  (attained in the limit by :math:`z' = -z` with :math:`\|z\| \to B`);
* second moment:
  :math:`\|zz^\top - z'z'^\top\|_F^2 = \|z\|^4 + \|z'\|^4 - 2(z^\top z')^2 \le 2B^4`,
  so :math:`\Delta_\Lambda \le \sqrt2 B^2/n` (attained by orthogonal z, z' of
  norm B; for ME with clustered locations by the sign vectors of a Hadamard
  pair).

With :math:`B = \kappa\sqrt J` these are the generic :math:`2\kappa\sqrt J/n` and
:math:`\sqrt2\kappa^2J/n`. The paper (Raj et al. 2019, Thm 4 and its code)
uses :math:`\kappa\sqrt J/n` for the mean -- the add/remove value, half the
replace-one one -- and :math:`\kappa^2J/(n-1)` for the second moment,
dropping the :math:`\sqrt2`; both are too small for replace-one.

2. Paired design, one individual = one row of X *or* Y (``unit="row"``)
-----------------------------------------------------------------------
When the people in X and in Y are different (each individual contributes one
row to one of the samples, and the pairing is by index), replacing one
individual changes only :math:`x_i` (or only :math:`y_i`), so
:math:`z_i - z_i' = \phi(x_i) - \phi(x_i')` and

* :math:`\Delta_w = B/n` (half of the pair value);
* second moment: with :math:`z, \tilde z` in the ball of radius B and
  :math:`\|z-\tilde z\|\le B`, write :math:`p=\|z\|^2`, :math:`q=\|\tilde z\|^2`;
  the constraint forces :math:`z^\top\tilde z \ge (p+q-B^2)/2`, so
  :math:`\|zz^\top-\tilde z\tilde z^\top\|_F^2 \le p^2+q^2-(p+q-B^2)_+^2/2`, which
  increases in p and q (its p-derivative is :math:`p - q + B^2 \ge 0`) and is
  largest at :math:`p=q=B^2`: :math:`\tfrac32B^4`. Hence
  :math:`\Delta_\Lambda \le \sqrt{3/2}\,B^2/n` (z and :math:`\tilde z` at 60°).

3. Two samples held separately (no trusted entity, and "test my release")
-------------------------------------------------------------------------
Each holder releases the mean :math:`\mu = \frac1{n_h}\sum\phi(x_i)` and the
second moment :math:`\frac1{n_h}\sum\phi(x_i)\phi(x_i)^\top` of its own sample;
replacing one of its rows gives :math:`\Delta_\mu = B/n_h` and
:math:`\Delta_\Lambda = R/n_h`. An individual belongs to one holder only, so the
two holders' releases compose in parallel: the pair of releases is
:math:`(\varepsilon,\delta)`-DP for the union when each is.

4. The perturbed statistic (audit exhibit only)
-----------------------------------------------
:func:`published_statistic_sensitivity` is the bound of Raj et al. (2019,
App. B, eq. 15) for :math:`s_n = n\,w^\top(\Sigma_n+\gamma_nI)^{-1}w`. It does not
hold: see :mod:`dpkme.two_sample.audit` for a pair of neighbouring data sets
whose statistics differ by orders of magnitude more.
"""

from __future__ import annotations

import math

from .._validation import check_in, check_positive_float, check_positive_int

__all__ = [
    "UNITS",
    "paired_mean_sensitivity",
    "paired_second_moment_sensitivity",
    "sample_mean_sensitivity",
    "sample_second_moment_sensitivity",
    "published_statistic_sensitivity",
]

UNITS = ("pair", "row")


def paired_mean_sensitivity(*, n, diff_bound, unit: str = "pair") -> float:
    r"""L2 sensitivity of :math:`w = \frac1n\sum_i z_i`: :math:`2B/n` (``unit="pair"``) or :math:`B/n` (``"row"``).

    Replace-one sensitivity of the mean of the paired differences
    :math:`z_i = \phi(x_i)-\phi(y_i)` (sections 1 and 2 of the module docstring).

    Parameters
    ----------
    n : int
        Number of pairs (public, >= 1).
    diff_bound : float
        :math:`B = \sup_{x,x'}\|\phi(x)-\phi(x')\|_2 > 0` of the feature map
        (:math:`a\sqrt J` for ME, :math:`2\sqrt{J_f}` for SCF).
    unit : {"pair", "row"}, default "pair"
        The unit of privacy: one pair :math:`(x_i, y_i)` is one individual
        (``"pair"``), or each individual is one row of X *or* of Y (``"row"``).

    Returns
    -------
    float
        :math:`\Delta_w`.

    Raises
    ------
    ValueError
        If ``n`` is not a positive integer, ``diff_bound`` not a positive float or
        ``unit`` not in :data:`UNITS`.

    Examples
    --------
    >>> from dpkme.two_sample.sensitivity import paired_mean_sensitivity
    >>> paired_mean_sensitivity(n=100, diff_bound=2.0)
    0.04
    >>> paired_mean_sensitivity(n=100, diff_bound=2.0, unit="row")
    0.02
    """
    n = check_positive_int(n, name="n")
    B = check_positive_float(diff_bound, name="diff_bound")
    check_in(unit, UNITS, name="unit")
    return (2.0 if unit == "pair" else 1.0) * B / n


def paired_second_moment_sensitivity(*, n, diff_bound, unit: str = "pair") -> float:
    r"""Frobenius sensitivity of :math:`\frac1n\sum_i z_iz_i^\top`: :math:`\sqrt2B^2/n` (pair) or :math:`\sqrt{3/2}B^2/n` (row).

    Replace-one sensitivity of the second moment :math:`\Lambda` of the paired
    differences (sections 1 and 2 of the module docstring); it is the L2
    sensitivity of the Frobenius-isometric vectorisation in which :math:`\Lambda`
    is released.

    Parameters
    ----------
    n : int
        Number of pairs (public, >= 1).
    diff_bound : float
        :math:`B = \sup_{x,x'}\|\phi(x)-\phi(x')\|_2 > 0` of the feature map.
    unit : {"pair", "row"}, default "pair"
        The unit of privacy, as in :func:`paired_mean_sensitivity`.

    Returns
    -------
    float
        :math:`\Delta_\Lambda`.

    Raises
    ------
    ValueError
        If ``n`` is not a positive integer, ``diff_bound`` not a positive float or
        ``unit`` not in :data:`UNITS`.

    Examples
    --------
    >>> from dpkme.two_sample.sensitivity import paired_second_moment_sensitivity
    >>> round(paired_second_moment_sensitivity(n=100, diff_bound=2.0), 6)   # sqrt(2) * 4 / 100
    0.056569
    """
    n = check_positive_int(n, name="n")
    B = check_positive_float(diff_bound, name="diff_bound")
    check_in(unit, UNITS, name="unit")
    return math.sqrt(2.0 if unit == "pair" else 1.5) * B * B / n


def sample_mean_sensitivity(*, n, diff_bound) -> float:
    r"""L2 sensitivity of one sample's feature mean :math:`\frac1n\sum\phi(x_i)`: :math:`B/n`.

    Replace-one sensitivity for a holder that releases the moments of its own
    sample (section 3 of the module docstring).

    Parameters
    ----------
    n : int
        Size of the holder's sample (public, >= 1).
    diff_bound : float
        :math:`B = \sup_{x,x'}\|\phi(x)-\phi(x')\|_2 > 0` of the feature map.

    Returns
    -------
    float
        :math:`\Delta_\mu = B/n`.

    Raises
    ------
    ValueError
        If ``n`` is not a positive integer or ``diff_bound`` not a positive float.

    Examples
    --------
    >>> from dpkme.two_sample.sensitivity import sample_mean_sensitivity
    >>> sample_mean_sensitivity(n=50, diff_bound=2.0)
    0.04
    """
    n = check_positive_int(n, name="n")
    return check_positive_float(diff_bound, name="diff_bound") / n


def sample_second_moment_sensitivity(*, n, outer_diff_bound) -> float:
    r"""Frobenius sensitivity of one sample's :math:`\frac1n\sum\phi(x_i)\phi(x_i)^\top`: :math:`R/n`.

    Replace-one sensitivity for a holder that releases the second moment of its
    own sample (section 3 of the module docstring).

    Parameters
    ----------
    n : int
        Size of the holder's sample (public, >= 1).
    outer_diff_bound : float
        :math:`R = \sup_{x,x'}\|\phi(x)\phi(x)^\top - \phi(x')\phi(x')^\top\|_F > 0`
        of the feature map (:math:`a^2J` for ME, :math:`\sqrt2J_f` for SCF).

    Returns
    -------
    float
        :math:`\Delta_\Lambda = R/n`.

    Raises
    ------
    ValueError
        If ``n`` is not a positive integer or ``outer_diff_bound`` not a positive float.

    Examples
    --------
    >>> from dpkme.two_sample.sensitivity import sample_second_moment_sensitivity
    >>> sample_second_moment_sensitivity(n=50, outer_diff_bound=4.0)
    0.08
    """
    n = check_positive_int(n, name="n")
    return check_positive_float(outer_diff_bound, name="outer_diff_bound") / n


def published_statistic_sensitivity(*, n, n_features, kappa=1.0, gamma) -> float:
    r"""The (invalid) bound of Raj et al. (2019, eq. 15) on the change of :math:`s_n`.

    .. math:: \frac{4\kappa^2 J\sqrt J}{n\gamma_n}\Big(1 + \frac{\kappa^2J}{n-1}\Big)

    Provided for the privacy audit only (:mod:`dpkme.two_sample.audit`); it
    underestimates the true sensitivity by orders of magnitude.

    Parameters
    ----------
    n : int
        Number of pairs (>= 2).
    n_features : int
        :math:`J`, the number of features (>= 1).
    kappa : float, default 1.0
        :math:`\kappa > 0`, the paper's per-coordinate bound on the features.
    gamma : float
        :math:`\gamma_n > 0`, the regularisation of :math:`s_n`.

    Returns
    -------
    float
        The claimed (not valid) sensitivity of :math:`s_n`.

    Raises
    ------
    ValueError
        If ``n < 2``, ``n_features < 1`` or ``kappa``/``gamma`` are not positive floats.

    Examples
    --------
    >>> from dpkme.two_sample.sensitivity import published_statistic_sensitivity
    >>> round(published_statistic_sensitivity(n=1001, n_features=4, gamma=0.1), 6)
    0.320959
    """
    n = check_positive_int(n, name="n", minimum=2)
    J = check_positive_int(n_features, name="n_features")
    kappa = check_positive_float(kappa, name="kappa")
    gamma = check_positive_float(gamma, name="gamma")
    return 4.0 * kappa**2 * J * math.sqrt(J) / (n * gamma) * (1.0 + kappa**2 * J / (n - 1.0))
