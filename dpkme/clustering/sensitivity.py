r"""Sensitivities of one noisy Lloyd step (cluster sizes and feature sums) and of the norm histogram.

Setting
-------
Centres :math:`c_1,\dots,c_k \in \mathbb R^J` are **public** (the data-independent
initialisation, or the noisy output of the previous iteration). A row is
assigned to :math:`a(x) = \arg\min_j \|z(x) - c_j\|_2^2`, which depends on
that row and the public centres only. One step releases

.. math::
    \hat n = n + \mathcal N(0, \sigma_n^2 I_k), \qquad
    \hat S = S + \mathcal N(0, \sigma_s^2 I_{k\times J}),

with :math:`n_i = |D_i|`, :math:`S_i = \sum_{x\in D_i} z(x)` and
:math:`\|z(x)\|_2 \le C` for every x.

Separate sensitivities
----------------------
*add/remove one row* (unbounded DP): the row enters or leaves exactly one
cluster, so :math:`\Delta_2(n) = 1` and :math:`\Delta_2(S) = \|z(x)\| \le C`.

*replace one row* :math:`x \to x'` (bounded DP, the paper's relation):

* different clusters :math:`a = a(x) \ne b = a(x')`: :math:`n` changes by
  :math:`-e_a + e_b` (L2 :math:`\sqrt2`) and :math:`S` by :math:`-z(x)` in row
  :math:`a` and :math:`+z(x')` in row :math:`b` (L2
  :math:`\sqrt{\|z(x)\|^2 + \|z(x')\|^2} \le \sqrt2 C`);
* same cluster: :math:`n` unchanged, :math:`S_a` changes by
  :math:`z(x') - z(x)`, of norm up to :math:`2C` (attained when
  :math:`z(x') = -z(x)`; for paired random Fourier features
  :math:`z(x)^\top z(x') = \frac{2a}J\sum_j\cos\omega_j^\top(x - x')` reaches
  :math:`-a` with a single frequency and comes close for many).

Hence :math:`\Delta_2(n) = \sqrt2` (as Acs et al. state) but
:math:`\Delta_2(S) = \max(\sqrt2 C, 2C) = 2C`, not the :math:`\sqrt2 C` of their
Section III-A: the same-cluster replacement is the worst case.

Joint release (the choice made here)
------------------------------------
Sizes and sums are one Gaussian mechanism on the rescaled vector
:math:`v = (n/\sigma_n,\ S/\sigma_s)` with unit noise (rescaling by public
constants is a bijection, so it changes nothing), whose sensitivity
:math:`\mu = \sup_{D\sim D'}\|v(D) - v(D')\|_2` is computed from the cases
above, **jointly**:

.. math::
    \text{add/remove:}\quad \mu^2 = \frac{1}{\sigma_n^2} + \frac{C^2}{\sigma_s^2},
    \qquad
    \text{replace-one:}\quad \mu^2 = \max\Bigl(\frac{2}{\sigma_n^2} + \frac{2C^2}{\sigma_s^2},\ \frac{4C^2}{\sigma_s^2}\Bigr).

(Under add/remove both worst cases happen for the same pair, so this equals
composing two Gaussian mechanisms. Under replace-one they never happen
together, and composing the two separately, :math:`2/\sigma_n^2 + 4C^2/\sigma_s^2`,
would over-charge: by a factor 1.5 in :math:`\mu^2` at :math:`\sigma_n = \sigma_s/C`.) The step is then a Gaussian mechanism with
noise multiplier :math:`1/\mu` at unit sensitivity, i.e. :math:`\mu`-GDP
(Dong, Roth & Su 2022), with Rényi DP :math:`\alpha\mu^2/2` (Mironov 2017), and
:math:`T` adaptively chosen steps (the centres of step t depend on the output of
step t-1) compose to :math:`\sqrt{\sum_t\mu_t^2}`-GDP exactly.

Under replace-one the count noise is *free* up to :math:`\sigma_n = \sigma_s/C`
(then both terms of the max are equal): the paper's choice
:math:`\sigma_n = \sqrt2\sigma_K,\ \sigma_s = \sqrt2\sigma_K C` sits exactly there.

Norm histogram (Algorithm 3)
----------------------------
Counts of rows per norm bin :math:`(C_{j-1}, C_j]`: one row changes one count by
1 under add/remove (:math:`\Delta_2 = 1`) and at most two counts by 1 under
replace-one (:math:`\Delta_2 = \sqrt2`, as the paper says); rows with norm above
:math:`C_{\max}` are in no bin, which can only lower these values. The noisy
arg-max is post-processing of the noisy histogram.
"""

from __future__ import annotations

import math

from .._validation import check_in, check_positive_float, check_positive_int
from ..privacy.sensitivity import NEIGHBOURING

__all__ = [
    "lloyd_sensitivities",
    "step_mu",
    "histogram_sensitivity",
    "noise_for_mu",
    "auto_count_share",
]


def lloyd_sensitivities(*, norm_bound: float = 1.0, neighbouring: str = "replace-one") -> dict:
    r"""L2 sensitivities of the cluster-size vector and the cluster-sum matrix of one Lloyd step.

    Each is computed separately (module docstring): add/remove gives
    :math:`\Delta_2(n) = 1`, :math:`\Delta_2(S) = C`; replace-one gives
    :math:`\Delta_2(n) = \sqrt2` and :math:`\Delta_2(S) = \max(\sqrt2 C, 2C) = 2C`.
    For the noise of a step use the joint :func:`step_mu` instead.

    Parameters
    ----------
    norm_bound : float, default=1.0
        :math:`C > 0`, the bound on :math:`\|z(x)\|_2` for every row (public;
        :math:`\sqrt a` for random Fourier features of amplitude :math:`a`).
    neighbouring : {"replace-one", "add-remove"}, default="replace-one"
        Neighbouring relation: replace one row (bounded DP, the paper's) or
        add/remove one row (unbounded DP).

    Returns
    -------
    dict
        ``counts``: :math:`\Delta_2(n)`; ``sums``: :math:`\Delta_2(S)`;
        ``sums_cross_cluster`` / ``sums_same_cluster``: the two replace-one cases
        (``None`` under add/remove); ``paper_counts`` / ``paper_sums``: the values
        stated by Acs et al. (:math:`\sqrt2`, :math:`\sqrt2 C`).

    Examples
    --------
    >>> s = lloyd_sensitivities(norm_bound=1.0)
    >>> s["sums"], s["sums_same_cluster"], round(s["paper_sums"], 4)
    (2.0, 2.0, 1.4142)
    >>> lloyd_sensitivities(norm_bound=0.5, neighbouring="add-remove")["sums"]
    0.5
    """
    C = check_positive_float(norm_bound, name="norm_bound")
    check_in(neighbouring, NEIGHBOURING, name="neighbouring")
    paper = {"paper_counts": math.sqrt(2.0), "paper_sums": math.sqrt(2.0) * C}
    if neighbouring == "add-remove":
        return {"counts": 1.0, "sums": C, "sums_cross_cluster": None, "sums_same_cluster": None, **paper}
    return {"counts": math.sqrt(2.0), "sums": 2.0 * C, "sums_cross_cluster": math.sqrt(2.0) * C,
            "sums_same_cluster": 2.0 * C, **paper}


def step_mu(*, sigma_count: float, sigma_sum: float, norm_bound: float = 1.0,
            neighbouring: str = "replace-one") -> float:
    r"""Sensitivity :math:`\mu` of one joint (sizes, sums) release in units of its noise (= 1 / noise multiplier).

    With :math:`r_1 = 1/\sigma_n` and :math:`r_2 = C/\sigma_s`,

    .. math::
        \text{add/remove:}\ \mu = \sqrt{r_1^2 + r_2^2},\qquad
        \text{replace-one:}\ \mu = \max\bigl(\sqrt2\sqrt{r_1^2 + r_2^2},\ 2r_2\bigr);

    see the module docstring for the derivation. The step is then
    :math:`\mu`-GDP (a Gaussian mechanism with noise multiplier :math:`1/\mu`).

    Parameters
    ----------
    sigma_count : float
        :math:`\sigma_n > 0`, standard deviation of the noise on each cluster size.
    sigma_sum : float
        :math:`\sigma_s > 0`, standard deviation of the noise on each coordinate
        of each cluster sum (absolute: :math:`C` times a plan's ``sum_multiplier``).
    norm_bound : float, default=1.0
        :math:`C > 0`, the bound on :math:`\|z(x)\|_2` (public).
    neighbouring : {"replace-one", "add-remove"}, default="replace-one"
        Neighbouring relation the sensitivity is computed for.

    Returns
    -------
    float
        :math:`\mu > 0` (dimensionless).

    Raises
    ------
    ValueError
        If a value is not positive, or the ratio of noise to bound makes
        :math:`\mu` overflow or underflow the float range.

    Examples
    --------
    At the paper's choice :math:`\sigma_n = \sigma_s/C` the count noise is free
    under replace-one (both terms of the max are equal):

    >>> step_mu(sigma_count=2.0, sigma_sum=2.0)
    1.0000000000000002
    >>> round(step_mu(sigma_count=2.0, sigma_sum=2.0, neighbouring="add-remove"), 6)
    0.707107
    """
    sn = check_positive_float(sigma_count, name="sigma_count")
    ss = check_positive_float(sigma_sum, name="sigma_sum")
    C = check_positive_float(norm_bound, name="norm_bound")
    check_in(neighbouring, NEIGHBOURING, name="neighbouring")
    # in terms of r1 = 1/sigma_n and r2 = C/sigma_s (hypot: no overflow of the squares)
    r1, r2 = 1.0 / sn, C / ss
    mu = math.hypot(r1, r2) if neighbouring == "add-remove" else max(math.sqrt(2.0) * math.hypot(r1, r2), 2.0 * r2)
    if not math.isfinite(mu) or not mu > 0:
        raise ValueError(f"sigma_count={sn!r}, sigma_sum={ss!r}, norm_bound={C!r} give mu={mu!r}: the noise is "
                         "out of the float range relative to the bound.")
    return mu


def histogram_sensitivity(neighbouring: str = "replace-one") -> float:
    r"""L2 sensitivity of a histogram of one value per row: 1 (add/remove) or :math:`\sqrt2` (replace-one).

    Adding or removing a row changes one bin by 1; replacing it moves it from
    one bin to another (two counts change by 1). Used for the norm histogram of
    Algorithm 3 (:func:`dpkme.clustering.norm.private_norm_bound`).

    Parameters
    ----------
    neighbouring : {"replace-one", "add-remove"}, default="replace-one"
        Neighbouring relation.

    Returns
    -------
    float
        :math:`\Delta_2` of the vector of bin counts.

    Examples
    --------
    >>> histogram_sensitivity("add-remove"), round(histogram_sensitivity("replace-one"), 6)
    (1.0, 1.414214)
    """
    check_in(neighbouring, NEIGHBOURING, name="neighbouring")
    return 1.0 if neighbouring == "add-remove" else math.sqrt(2.0)


def auto_count_share(neighbouring: str, n_features: int) -> float:
    r"""Default share of a step's :math:`\mu^2` spent on the sizes.

    * replace-one: 1/2, i.e. :math:`\sigma_n = \sigma_s/C`, where the count
      noise costs nothing extra (module docstring);
    * add/remove: :math:`1/(1 + 2\sqrt J)`. The centre error
      :math:`\hat S_i/\hat n_i - S_i/n_i \approx \xi_i/n_i - c_i\eta_i/n_i` has
      squared size :math:`(J\sigma_s^2 + \|c_i\|^2\sigma_n^2)/n_i^2`; minimising
      it subject to :math:`1/\sigma_n^2 + C^2/\sigma_s^2 = \mu^2` gives a share
      :math:`\|c_i\|/(\|c_i\| + C\sqrt J)`, evaluated at :math:`\|c_i\| = C/2`.

    Parameters
    ----------
    neighbouring : {"replace-one", "add-remove"}
        Neighbouring relation of the run.
    n_features : int
        :math:`J \ge 1`, the dimension of the feature map (used under add/remove only).

    Returns
    -------
    float
        Share :math:`s \in (0, 1)`, to pass as ``count_share`` to :func:`noise_for_mu`.

    Examples
    --------
    >>> auto_count_share("replace-one", 1000)
    0.5
    >>> round(auto_count_share("add-remove", 100), 6)   # 1 / (1 + 2 * 10)
    0.047619
    """
    check_in(neighbouring, NEIGHBOURING, name="neighbouring")
    J = check_positive_int(n_features, name="n_features")
    if neighbouring == "replace-one":
        return 0.5
    return 1.0 / (1.0 + 2.0 * math.sqrt(J))


def noise_for_mu(mu: float, *, norm_bound: float = 1.0, neighbouring: str = "replace-one",
                 count_share: float = 0.5) -> tuple[float, float]:
    r"""Noise standard deviations :math:`(\sigma_n, \sigma_s)` of one step with sensitivity ``mu``.

    ``count_share`` :math:`s\in(0,1)` fixes the ratio
    :math:`(1/\sigma_n^2) : (C^2/\sigma_s^2) = s : (1-s)`; the scale is then
    set so that :func:`step_mu` returns ``mu`` (up to rounding, which is toward
    more noise): with :math:`a = 1/\sigma_n^2`, :math:`b = C^2/\sigma_s^2` and
    :math:`a = \frac{s}{1-s}b`, add/remove needs :math:`a + b = \mu^2` and
    replace-one :math:`\max(2(a + b), 4b) = \mu^2`.

    Parameters
    ----------
    mu : float
        Target sensitivity :math:`\mu > 0` of the step in noise units
        (1 / noise multiplier), e.g. :math:`\mu_{\rm iter}` of a plan.
    norm_bound : float, default=1.0
        :math:`C > 0`, the bound on :math:`\|z(x)\|_2`; :math:`\sigma_s` scales with it.
    neighbouring : {"replace-one", "add-remove"}, default="replace-one"
        Neighbouring relation.
    count_share : float in (0, 1), default=0.5
        :math:`s`, the share of :math:`\mu^2` spent on the sizes
        (see :func:`auto_count_share`).

    Returns
    -------
    sigma_count : float
        :math:`\sigma_n`, noise std on each cluster size.
    sigma_sum : float
        :math:`\sigma_s`, noise std on each coordinate of each cluster sum.

    Raises
    ------
    ValueError
        If ``count_share`` is outside (0, 1), a value is not positive, or the
        noise would leave the float range.

    Examples
    --------
    >>> sn, ss = noise_for_mu(0.5)
    >>> round(sn, 6), round(ss, 6)
    (4.0, 4.0)
    >>> step_mu(sigma_count=sn, sigma_sum=ss) <= 0.5
    True
    """
    mu = check_positive_float(mu, name="mu")
    C = check_positive_float(norm_bound, name="norm_bound")
    check_in(neighbouring, NEIGHBOURING, name="neighbouring")
    s = check_positive_float(count_share, name="count_share")
    if not s < 1.0:
        raise ValueError(f"count_share must lie in (0, 1), got {count_share}.")
    r = s / (1.0 - s)  # a / b
    # sqrt(b) = mu / sqrt(...) and sqrt(a) = sqrt(r) sqrt(b), without squaring mu (no overflow)
    root_b = mu / math.sqrt(1.0 + r if neighbouring == "add-remove" else max(2.0 * (1.0 + r), 4.0))
    root_a = math.sqrt(r) * root_b
    sigma_count = 1.0 / root_a
    sigma_sum = C / root_b
    if not (math.isfinite(sigma_count) and math.isfinite(sigma_sum) and sigma_count > 0 and sigma_sum > 0):
        raise ValueError(f"mu={mu!r} with norm_bound={C!r} and count_share={s!r} gives noise "
                         f"({sigma_count!r}, {sigma_sum!r}) outside the float range.")
    for _ in range(60):  # rounding: make sure the realised mu is not above the requested one
        if step_mu(sigma_count=sigma_count, sigma_sum=sigma_sum, norm_bound=C, neighbouring=neighbouring) <= mu:
            break
        sigma_count *= 1.0 + 1e-15
        sigma_sum *= 1.0 + 1e-15
    return sigma_count, sigma_sum
