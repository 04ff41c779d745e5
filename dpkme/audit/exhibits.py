r"""Exhibits of published sensitivity bounds that fail, and the curves drawn from an audit's result.

The app's Privacy audit page shows these; they are plain computations (numpy/scipy), kept here so that
they can be tested and reused without a user interface.

Exhibits (each takes a bound used in published code or papers, finds neighbouring datasets on which the true
change is larger, and computes the :math:`\varepsilon` really achieved at the claimed one):

* :func:`feature_norm_exhibit` -- the map :math:`\sqrt{2/J}\cos(\omega^\top x + b)` has
  :math:`\|\phi(x)\|^2 \in [0, 2]`, not :math:`\le 1` as Algorithm 2's proof (Proposition 9) needs;
* :func:`perturbed_statistic_exhibit` -- Raj et al.'s perturbed two-sample statistic with its published
  sensitivity bound (:func:`dpkme.two_sample.audit.statistic_sensitivity_counterexample`);
* :func:`l1_dimension_exhibit` -- the L1 sensitivity :math:`2/\sqrt N` of the code released with Balog et al.
  (2018), which ignores the dimension: the true one is :math:`2\sqrt d/N`.

Curves of a :class:`~dpkme.audit.AuditResult` (:func:`privacy_loss_densities`, :func:`epsilon_delta_curves`):
the privacy-loss histograms as densities with the analytic Gaussian privacy-loss densities, and the
:math:`\varepsilon(\delta)` curves (claimed, exact for the pair, the runs' plug-in estimate, the audited lower
bounds) restricted to their plottable points.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np

from ..kernels.random_features import CosineBiasFeatures, RandomFourierFeatures
from ..privacy.calibration import calibrate_gaussian, gaussian_epsilon, l1_from_l2_sensitivity

__all__ = [
    "FeatureNormExhibit",
    "feature_norm_exhibit",
    "perturbed_statistic_exhibit",
    "l1_dimension_exhibit",
    "L1_EXHIBIT_CASES",
    "histogram_density",
    "finite_curve",
    "privacy_loss_densities",
    "epsilon_delta_curves",
]


# ---------------------------------------------------------------------- 1. feature norms
@dataclass(frozen=True)
class FeatureNormExhibit:
    r"""Result of :func:`feature_norm_exhibit`.

    Parameters
    ----------
    squared_norms : ndarray of shape (n_probes,)
        :math:`\|\phi(x)\|^2` of the cos-with-bias map :math:`\sqrt{2/J}\cos(\omega^\top x + b)` at every
        probe point, in :math:`[0, 2]`.
    largest_norm : float
        The largest :math:`\|\phi(x)\|` found (Proposition 9's proof assumes 1; up to :math:`\sqrt2`).
    paired_deviation : float
        :math:`\max|\|\psi(x)\|^2 - 1|` of dpkme's paired cos/sin features on the same probes (rounding
        only: their norm is exactly 1).
    epsilon_add_remove : float
        The :math:`\varepsilon` really achieved under add/remove neighbours at the claimed δ (noise
        calibrated to :math:`1/N`, the mean moves by :math:`\|\phi(x)\|/N`).
    pair_distance : float
        The largest :math:`\|\phi(x) - \phi(x')\|` found against the worst probe (the claim under
        replace-one is 2).
    epsilon_replace_one : float
        The :math:`\varepsilon` achieved on that pair at the claimed δ (noise calibrated to :math:`2/N`).
    """

    squared_norms: np.ndarray
    largest_norm: float
    paired_deviation: float
    epsilon_add_remove: float
    pair_distance: float
    epsilon_replace_one: float


def feature_norm_exhibit(kernel, *, public, n: int, epsilon: float, delta: float, n_features: int,
                         n_probes: int = 20000, margin: float = 3.0, random_state: int = 0) -> FeatureNormExhibit:
    r"""Random features whose norm can exceed 1: the :math:`\varepsilon` really achieved at a claimed one.

    Probe points are drawn uniformly from the box around the **public** points ``public`` (shape ``(m, d)``)
    widened by ``margin`` kernel lengthscales on each side: large norms are attained somewhere, not necessarily
    in the data, and an attacker chooses the bad pair. Both feature maps use ``random_state`` for their
    frequencies; the probes use ``numpy.random.default_rng(random_state)``.

    Add/remove neighbours: the mean feature vector of ``n`` rows moves by :math:`\|\phi(x)\|/N` when the row
    :math:`x` is added; the noise calibrated to the claimed :math:`1/N` (:func:`dpkme.privacy.calibration.calibrate_gaussian`)
    then gives :math:`\varepsilon' =` :func:`~dpkme.privacy.calibration.gaussian_epsilon` at sensitivity
    :math:`\max\|\phi(x)\|/N`. Replace-one: the claimed :math:`2/N` against the largest
    :math:`\|\phi(x)-\phi(x')\|/N` found (a worse pair may exist).

    Parameters
    ----------
    kernel : Kernel
        A translation-invariant kernel with a ``lengthscale`` (e.g. :class:`dpkme.kernels.GaussianKernel`),
        whose random features are built.
    public : array-like of shape (m, d)
        Public points; they fix the input dimension :math:`d` and the probe box (never private data).
    n : int
        Number of private rows :math:`N` the claim is calibrated for (at least 1).
    epsilon, delta : float
        The claimed :math:`(\varepsilon, \delta)`.
    n_features : int
        Number of random features :math:`J` (at least 1; the paired map uses :math:`J` rounded up to even).
    n_probes : int
        Number of probe points (default 20 000).
    margin : float
        Widening of the probe box on each side, in kernel length scales (default 3).
    random_state : int
        Seed of both feature maps and of the probes (default 0: reproducible).

    Returns
    -------
    FeatureNormExhibit
        The norms found and the :math:`\varepsilon` really achieved under both neighbouring relations.

    Examples
    --------
    Four cos-with-bias features in 2-D: a probe of norm about 1.4 turns a claimed ε = 1 into about 1.46
    under add/remove neighbours, while the paired features keep norm 1:

    >>> import numpy as np
    >>> from dpkme.audit import feature_norm_exhibit
    >>> from dpkme.kernels import GaussianKernel
    >>> ex = feature_norm_exhibit(GaussianKernel(lengthscale=1.0), public=np.zeros((1, 2)), n=100,
    ...                           epsilon=1.0, delta=1e-5, n_features=4, n_probes=2000)
    >>> ex.largest_norm > 1.3, ex.epsilon_add_remove > 1.4, ex.paired_deviation < 1e-12
    (True, True, True)
    """
    public = np.atleast_2d(np.asarray(public, dtype=np.float64))
    if public.ndim != 2 or public.shape[0] < 1:
        raise ValueError(f"public must be a non-empty (m, d) array of public points; got shape {public.shape}.")
    n_features = int(n_features)
    if n_features < 1:
        raise ValueError(f"n_features must be at least 1; got {n_features}.")
    if not int(n) >= 1:
        raise ValueError(f"n must be at least 1; got {n}.")
    dim = public.shape[1]
    ls = float(kernel.lengthscale)
    box_lo, box_hi = public.min(axis=0) - margin * ls, public.max(axis=0) + margin * ls
    probe = np.random.default_rng(random_state).uniform(box_lo, box_hi, size=(int(n_probes), dim))
    cos_map = CosineBiasFeatures(kernel, n_components=n_features, random_state=random_state).fit(dim)
    rff = RandomFourierFeatures(kernel, n_components=n_features + (n_features % 2), random_state=random_state,
                                dtype="float64").fit(dim)
    F = cos_map.transform(probe)
    n_cos = np.einsum("ij,ij->i", F, F)
    R = rff.transform(probe)
    n_rff = np.einsum("ij,ij->i", R, R)
    i_max = int(np.argmax(n_cos))
    gap = np.sqrt(np.einsum("ij,ij->i", F - F[i_max], F - F[i_max]))   # ‖φ(x) − φ(x′)‖ for the worst x found
    b = math.sqrt(float(n_cos.max()))
    n = int(n)
    cal = calibrate_gaussian(epsilon=epsilon, delta=delta, sensitivity=1.0 / n)
    true_eps = gaussian_epsilon(sigma=cal.sigma, delta=delta, sensitivity=b / n)
    pair = float(gap.max())
    cal_r = calibrate_gaussian(epsilon=epsilon, delta=delta, sensitivity=2.0 / n)
    true_eps_r = gaussian_epsilon(sigma=cal_r.sigma, delta=delta, sensitivity=max(pair, 1e-300) / n)
    return FeatureNormExhibit(squared_norms=n_cos, largest_norm=b, paired_deviation=float(np.abs(n_rff - 1).max()),
                              epsilon_add_remove=float(true_eps), pair_distance=pair,
                              epsilon_replace_one=float(true_eps_r))


# ---------------------------------------------------------------------- 2. the perturbed test statistic
def perturbed_statistic_exhibit(*, n: int, n_features: int, epsilon: float, delta: float) -> dict:
    r"""Raj et al.'s perturbed test statistic: the published bound, the change on two neighbours, the true ε.

    :func:`dpkme.two_sample.audit.statistic_sensitivity_counterexample` builds the neighbours (``n`` pairs,
    ``n_features`` test locations); the noise calibrated to the published bound then gives
    :math:`\varepsilon' =` :func:`~dpkme.privacy.calibration.gaussian_epsilon` at the actual change (``inf`` when the
    change is so much larger that no finite ε holds).

    Parameters
    ----------
    n : int
        Number of sample pairs (at least 3).
    n_features : int
        Number of test locations :math:`J`.
    epsilon, delta : float
        The claimed :math:`(\varepsilon, \delta)` of the perturbed statistic.

    Returns
    -------
    dict
        The counterexample's dict (``"Z"``, ``"Z_neighbour"``, ``"statistic"``, ``"statistic_neighbour"``,
        ``"change"``, ``"published_bound"``, ``"ratio"`` = change / bound, ``"kappa"``, ...) plus
        ``"epsilon_achieved"``: the ε really achieved at ``delta``.

    Examples
    --------
    >>> from dpkme.audit import perturbed_statistic_exhibit
    >>> cx = perturbed_statistic_exhibit(n=100, n_features=5, epsilon=1.0, delta=1e-5)
    >>> cx["ratio"] > 100, cx["epsilon_achieved"] > 1000
    (True, True)
    """
    from ..two_sample.audit import statistic_sensitivity_counterexample

    cx = dict(statistic_sensitivity_counterexample(n=n, n_features=n_features))
    cal = calibrate_gaussian(epsilon=epsilon, delta=delta, sensitivity=cx["published_bound"])
    cx["epsilon_achieved"] = float(gaussian_epsilon(sigma=cal.sigma, delta=delta, sensitivity=cx["change"]))
    return cx


# ---------------------------------------------------------------------- 3. an L1 sensitivity that ignores d
#: (N, d) cases of the exhibit besides the user's own N (with d = 1000).
L1_EXHIBIT_CASES = ((100_000, 10_000), (1_000, 10_000), (100, 10_000))


def l1_dimension_exhibit(*, epsilon: float, n: int, cases=L1_EXHIBIT_CASES, own_dim: int = 1000) -> list[dict]:
    r"""The L1 sensitivity :math:`2/\sqrt N` (ignores :math:`d`) against the correct :math:`2\sqrt d/N`.

    One row per ``(N, d)`` of ``cases`` and one for ``(n, own_dim)``: ``"N"``, ``"d"``, ``"correct 2√d/N"``
    (:func:`dpkme.privacy.calibration.l1_from_l2_sensitivity` of :math:`2/N`), ``"code's 2/√N"``, ``"ε really achieved
    (claimed ε)"`` -- the Laplace mechanism with scale :math:`\Delta_1/\varepsilon` is
    :math:`(\Delta_{1,\rm true}/b)`-DP, so the achieved ε scales with the ratio of the true to the assumed
    sensitivity when the assumed one is too small -- and ``"private?"``.

    Parameters
    ----------
    epsilon : float
        The claimed ε of the Laplace mechanism.
    n : int
        The user's own number of rows :math:`N`.
    cases : sequence of (int, int)
        ``(N, d)`` rows shown before the user's own (default :data:`L1_EXHIBIT_CASES`).
    own_dim : int
        Dimension :math:`d` of the user's own row (default 1000).

    Returns
    -------
    list of dict
        One row per case, the user's own last, with the keys above.

    Examples
    --------
    :math:`2/\sqrt N` is :math:`\sqrt{N/d}` times too small when :math:`d > N`:

    >>> from dpkme.audit import l1_dimension_exhibit
    >>> rows = l1_dimension_exhibit(epsilon=1.0, n=100, cases=(), own_dim=400)
    >>> rows[0]["ε really achieved (claimed ε)"], rows[0]["private?"]
    (2.0, 'no')
    """
    rows = []
    for N_, d_ in [*cases, (int(n), int(own_dim))]:
        correct = l1_from_l2_sensitivity(2.0 / N_, d_)
        used = 2.0 / math.sqrt(N_)
        rows.append({"N": N_, "d": d_, "correct 2√d/N": correct, "code's 2/√N": used,
                     "ε really achieved (claimed ε)": epsilon * correct / used if used < correct else epsilon,
                     "private?": "no" if used < correct else "yes (loose)"})
    return rows


# ---------------------------------------------------------------------- curves of an audit result
def histogram_density(counts, edges) -> np.ndarray:
    """Counts on bins ``edges`` as a density (integrates to 1); all zeros stay zeros.

    Parameters
    ----------
    counts : array-like of shape (B,)
        Non-negative counts per bin.
    edges : array-like of shape (B + 1,)
        Increasing bin edges.

    Returns
    -------
    ndarray of shape (B,)
        ``counts / (counts.sum() * widths)``, or ``counts`` (as floats) when they sum to 0.

    Examples
    --------
    >>> from dpkme.audit.exhibits import histogram_density
    >>> histogram_density([1, 3], [0.0, 0.5, 1.0])
    array([0.5, 1.5])
    """
    counts = np.asarray(counts, dtype=float)
    total = counts.sum()
    return counts / (total * np.diff(np.asarray(edges, dtype=float))) if total > 0 else counts


def finite_curve(x, y) -> tuple[np.ndarray, np.ndarray]:
    """The points of a curve ε(δ) that a log-δ axis can show: finite, with 0 < δ < 1.

    Parameters
    ----------
    x : array-like of shape (G,)
        δ values.
    y : array-like of shape (G,)
        ε values.

    Returns
    -------
    x, y : ndarray of shape (G',)
        The points with both coordinates finite and :math:`0 < x < 1`, in their original order.

    Examples
    --------
    >>> import numpy as np
    >>> from dpkme.audit.exhibits import finite_curve
    >>> finite_curve([0.0, 1e-3, 0.5, 1.0], [1.0, 2.0, np.inf, 3.0])
    (array([0.001]), array([2.]))
    """
    x, y = np.asarray(x, dtype=float), np.asarray(y, dtype=float)
    keep = np.isfinite(x) & np.isfinite(y) & (x > 0) & (x < 1)
    return x[keep], y[keep]


def privacy_loss_densities(result, *, n_points: int = 400) -> dict:
    r"""The privacy-loss distribution of an audit as densities on common bins, for a plot.

    Parameters
    ----------
    result : AuditResult
        An audit (its :attr:`~dpkme.audit.AuditResult.privacy_loss` histogram is used).
    n_points : int
        Number of points of the analytic densities (default 400).

    Returns
    -------
    dict
        ``{"edges", "centres", "widths", "density_d", "density_neighbour", "analytic"}``: the bins and the
        two histograms as densities (:func:`histogram_density`). ``"analytic"`` is ``None`` or
        ``{"x", "mean", "std", "pdf_d", "pdf_neighbour"}``: the exact Gaussian privacy-loss densities
        :math:`\mathcal N(\mu^2/2, \mu^2)` on :math:`D` and :math:`\mathcal N(-\mu^2/2, \mu^2)` on :math:`D'`,
        on ``n_points`` points covering the bins and :math:`\pm(m + 4s)`.
    """
    pl = result.privacy_loss
    edges = np.asarray(pl.edges, dtype=float)
    out = {"edges": edges, "centres": 0.5 * (edges[1:] + edges[:-1]), "widths": np.diff(edges),
           "density_d": histogram_density(pl.counts_d, edges),
           "density_neighbour": histogram_density(pl.counts_neighbour, edges), "analytic": None}
    if pl.analytic_mean is not None and pl.analytic_std is not None and pl.analytic_std > 0:
        m, s = float(pl.analytic_mean), float(pl.analytic_std)
        lo, hi = min(edges[0], -m - 4 * s), max(edges[-1], m + 4 * s)
        x = np.linspace(lo, hi, n_points)

        def pdf(mean):
            return np.exp(-0.5 * ((x - mean) / s) ** 2) / (s * math.sqrt(2 * math.pi))

        out["analytic"] = {"x": x, "mean": m, "std": s, "pdf_d": pdf(m), "pdf_neighbour": pdf(-m)}
    return out


def epsilon_delta_curves(result, *, n_grid: int = 200, cut_off: float = 3.0) -> dict:
    r"""The ε(δ) curves of an audit, restricted to what a log-δ axis shows (:func:`finite_curve`).

    Keys (each an ``(x, y)`` pair of arrays, possibly empty): ``"claimed"`` (the calibration's worst case),
    ``"pair"`` (the exact curve of the audited pair), ``"plug_in"`` (the runs' plug-in estimate
    :math:`\delta(\varepsilon) = \mathbb E_D[(1 - e^{\varepsilon - L})_+]` on ``n_grid`` values of
    :math:`\varepsilon \in [0, \max L]`: an estimate, not a bound) and ``"lower_bounds"`` (the audited bounds).
    ``"pair_max"``: the largest ε of the pair's curve (``None`` without one); ``"top"``: the largest ε worth
    showing -- the claim, the claimed curve and the bounds, and the pair's curve unless it exceeds
    ``cut_off`` times that (then ``"pair_cut_off"`` is True: the mechanism is far from its claim).

    Parameters
    ----------
    result : AuditResult
        An audit.
    n_grid : int
        Number of ε values of the plug-in curve (default 200).
    cut_off : float
        The pair's curve is left out of ``"top"`` when its largest ε exceeds ``cut_off`` times the
        other curves' (default 3).

    Returns
    -------
    dict
        ``{"claimed", "pair", "plug_in", "lower_bounds", "pair_max", "top", "pair_cut_off"}`` as above;
        each curve is a ``(deltas, epsilons)`` pair of arrays.
    """
    empty = (np.zeros(0), np.zeros(0))
    curves = {"claimed": empty, "pair": empty, "plug_in": empty, "lower_bounds": empty}
    tops, pair_max = [float(result.claimed_epsilon)], None
    a = result.analytic
    if a is not None:
        curves["claimed"] = finite_curve(a.deltas, a.epsilon_claimed)
        if curves["claimed"][0].size:
            tops.append(float(curves["claimed"][1].max()))
        curves["pair"] = finite_curve(a.deltas, a.epsilon_pair)
        if curves["pair"][0].size:
            pair_max = float(curves["pair"][1].max())
    pl = result.privacy_loss
    L = np.asarray(pl.loss_d, dtype=float)
    L = L[np.isfinite(L)]
    if L.size and L.max() > 0:
        grid = np.linspace(0.0, float(L.max()), n_grid)
        curves["plug_in"] = finite_curve(pl.empirical_delta(grid), grid)
    curves["lower_bounds"] = finite_curve(result.lower_bounds["deltas"], result.lower_bounds["epsilons"])
    if curves["lower_bounds"][0].size:
        tops.append(float(curves["lower_bounds"][1].max()))
    top = max(tops)
    cut = False
    if pair_max is not None and pair_max <= cut_off * top:
        top = max(top, pair_max)
    elif pair_max is not None:
        cut = True
    return {**curves, "pair_max": pair_max, "top": top, "pair_cut_off": cut}
