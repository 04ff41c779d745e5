r"""Membership inference against a release: can an attacker tell whether one row is in the data?

The game
--------
An attacker knows every row of the private table except one, and two candidates for that row: the
**target** :math:`x` and a **replacement** :math:`x'`. So they know the two possible tables, :math:`D`
(with :math:`x`) and :math:`D'` (:math:`D` with :math:`x` replaced by :math:`x'`: the replace-one neighbour,
the library's default relation). They see one release, made from :math:`D` or from :math:`D'` with
probability ½ each, and guess "the target is in" or "it is out". Their **balanced accuracy** is

.. math::
    \mathrm{acc} = \tfrac12\bigl(\mathrm{TPR} + \mathrm{TNR}\bigr),\qquad
    \mathrm{TPR} = P[\text{guess in} \mid D],\quad \mathrm{TNR} = P[\text{guess out} \mid D'] ,

and guessing at random gives :math:`\tfrac12`. This is the strongest attacker differential privacy is
designed against (it knows everything but the one row), so what it cannot do, no attacker can.

The bound
---------
Let :math:`S` be the set of outputs on which the attacker guesses "in". If the release is
:math:`(\varepsilon,\delta)`-DP, then for this :math:`S` and for its complement

.. math::
    \mathrm{TPR} = P[M(D)\in S] \le e^{\varepsilon} P[M(D')\in S] + \delta
                 = e^{\varepsilon}(1 - \mathrm{TNR}) + \delta ,\\
    \mathrm{TNR} = P[M(D')\notin S] \le e^{\varepsilon} P[M(D)\notin S] + \delta
                 = e^{\varepsilon}(1 - \mathrm{TPR}) + \delta .

Adding the two, :math:`\mathrm{TPR} + \mathrm{TNR} \le e^{\varepsilon}(2 - \mathrm{TPR} - \mathrm{TNR}) + 2\delta`,
that is :math:`(1 + e^{\varepsilon})(\mathrm{TPR} + \mathrm{TNR}) \le 2e^{\varepsilon} + 2\delta`, so

.. math::
    \mathrm{acc} \le \frac{e^{\varepsilon} + \delta}{1 + e^{\varepsilon}}
    \qquad\Bigl(= \frac{e^{\varepsilon}}{1 + e^{\varepsilon}} \text{ for } \delta = 0\Bigr),

for every attacker, every pair of candidates and any amount of computation (:func:`membership_bound`).
At :math:`\varepsilon = 1` no attacker is right more than 73 % of the time; at :math:`\varepsilon = 0.1`,
52.5 %.

The optimal attack on a Gaussian release
----------------------------------------
Algorithm 1 and Algorithm 2 release :math:`f(\cdot) + \mathcal N(0, \sigma^2 I)` for a vector :math:`f`
(subspace coordinates, or the mean random-feature vector). With :math:`d = \|f(D) - f(D')\|_2` and
:math:`u = (f(D) - f(D'))/d`, the likelihood ratio of an output :math:`y` depends on :math:`y` only through

.. math::
    s = \Bigl\langle y - \tfrac12\bigl(f(D) + f(D')\bigr),\ u \Bigr\rangle
    \sim \mathcal N(\pm d/2,\ \sigma^2) \quad (+ \text{ on } D,\ - \text{ on } D') ,

and with equal priors the likelihood-ratio test "guess in iff :math:`s > 0`" maximises the balanced
accuracy (Neyman-Pearson). Its accuracy is exactly

.. math::
    \mathrm{acc}^\star = \Phi\Bigl(\frac{d}{2\sigma}\Bigr)

(:func:`gaussian_attack_accuracy`). On the worst-case pair :math:`d` equals the sensitivity :math:`\Delta`,
and :math:`\sigma = \sigma(\varepsilon, \delta)` is the calibrated noise: :math:`\Phi(\Delta/(2\sigma))` never
exceeds the bound above, because the mechanism is :math:`(\varepsilon,\delta)`-DP. As :math:`\varepsilon\to0`
the analytic calibration (Balle & Wang 2018) keeps :math:`2\Phi(\Delta/(2\sigma)) - 1 \le \delta`, so the
attack's accuracy tends to :math:`(1+\delta)/2` -- the bound itself at :math:`\varepsilon = 0`: chance.

The experiment
--------------
:func:`membership_attack` runs the library's own release (Algorithm 2's
:func:`~dpkme.release.random_features.privatise_feature_mean` with unit-norm paired features, or
Algorithm 1) ``runs`` times on :math:`D` and ``runs`` times on :math:`D'` for each :math:`\varepsilon` of a
grid, lets the attacker above guess each time, and reports the balanced accuracy with an exact confidence
interval: one-sided Clopper-Pearson bounds (:mod:`dpkme.audit.bounds`) on TPR and TNR at level
:math:`\alpha/4` each, so that the interval
:math:`[\tfrac12(\underline{\mathrm{TPR}} + \underline{\mathrm{TNR}}),\ \tfrac12(\overline{\mathrm{TPR}} +
\overline{\mathrm{TNR}})]` holds with probability at least :math:`1-\alpha` (union bound) at each
:math:`\varepsilon` separately. The attacker's threshold is fixed before any run (it is the midpoint of two
public vectors), so no selection has to be paid for.

The two tables are synthetic (the library builds them, with the row pair that moves the release the most);
the noise is seeded (the experiment needs reproducible draws, not secret ones). Nothing here touches
anyone's data, and nothing is charged to a privacy budget.

In plain words
--------------
Hide one person's row, release the data, and let a very well-informed attacker guess whether that person was
in it. With no privacy the attacker is always right; with :math:`\varepsilon = 0` they are right half of the
time, like tossing a coin. Differential privacy caps the attacker's success at
:math:`(e^{\varepsilon}+\delta)/(1+e^{\varepsilon})`, and for the Gaussian noise of these releases the best
attacker gets :math:`\Phi(\Delta/(2\sigma))` -- the experiment's dots fall on that curve, under the cap.

References
----------
L. Wasserman, S. Zhou. A statistical framework for differential privacy. JASA 2010 (hypothesis-testing view).

P. Kairouz, S. Oh, P. Viswanath. The composition theorem for differential privacy. ICML 2015.

B. Balle, Y.-X. Wang. Improving the Gaussian mechanism for differential privacy. ICML 2018.
"""

from __future__ import annotations

import time
import warnings
from dataclasses import dataclass, field

import numpy as np
from scipy.special import ndtr

from .._validation import check_array, check_delta, check_in, check_positive_float, check_positive_int
from ..kernels.kernel import GaussianKernel
from ..kernels.random_features import RandomFourierFeatures
from ..privacy.calibration import GAUSSIAN_METHODS, UnprovenCalibrationWarning, calibrate_gaussian
from ..reduced_set._common import Progress
from .bounds import clopper_pearson_lower, clopper_pearson_upper
from .mechanisms import MAX_RUNS, _public_seed, _seeds
from .neighbours import best_pair, rff_antipodal_pair

__all__ = [
    "MEMBERSHIP_MECHANISMS",
    "DEFAULT_ATTACK_EPSILONS",
    "MembershipAttack",
    "membership_bound",
    "gaussian_attack_accuracy",
    "membership_attack",
]

#: Releases the attack can be run against.
MEMBERSHIP_MECHANISMS = ("algorithm2", "algorithm1")
#: The default grid of ε (from nearly no information to a weak guarantee).
DEFAULT_ATTACK_EPSILONS = (0.05, 0.1, 0.25, 0.5, 1.0, 2.0, 4.0, 8.0)
_MAX_GRID = 50


def _check_epsilons(epsilons) -> np.ndarray:
    e = check_array(epsilons, name="epsilons", ndim=1)
    if e.size == 0 or e.size > _MAX_GRID:
        raise ValueError(f"epsilons must hold 1 to {_MAX_GRID} values, got {e.size}; pass a shorter grid.")
    if not np.all(e > 0):
        raise ValueError(f"every epsilon must be > 0, got {e.tolist()!r}; ε = 0 is no release at all.")
    return np.unique(e)


def membership_bound(epsilon, delta=0.0):
    r"""Largest balanced accuracy of any membership attacker against an :math:`(\varepsilon,\delta)`-DP release.

    .. math::
        \mathrm{acc} \le \frac{e^{\varepsilon} + \delta}{1 + e^{\varepsilon}} ,

    from :math:`\mathrm{TPR} \le e^{\varepsilon}\mathrm{FPR} + \delta` and its mirror
    :math:`\mathrm{TNR} \le e^{\varepsilon}(1-\mathrm{TPR}) + \delta` (derivation in the module docstring).
    Evaluated as :math:`(1 + \delta e^{-\varepsilon})/(1 + e^{-\varepsilon})`, which does not overflow.

    Parameters
    ----------
    epsilon : float or array-like of float
        :math:`\varepsilon \ge 0` (0 is allowed here: the bound is then :math:`(1+\delta)/2`).
    delta : float
        :math:`\delta \in [0, 1)` (default 0: pure DP, :math:`e^\varepsilon/(1+e^\varepsilon)`).

    Returns
    -------
    float or ndarray
        The bound in :math:`[\tfrac12, 1)`, a float for a scalar ``epsilon``.

    Examples
    --------
    >>> from dpkme.audit.membership import membership_bound
    >>> round(membership_bound(1.0), 4), round(membership_bound(0.0, 1e-5), 6)
    (0.7311, 0.500005)
    """
    dl = check_delta(delta, allow_zero=True)
    e = np.asarray(epsilon, dtype=np.float64)
    if e.size == 0 or not np.all(np.isfinite(e)) or np.any(e < 0):
        raise ValueError(f"epsilon must be finite and >= 0, got {epsilon!r}.")
    w = np.exp(-e)
    out = (1.0 + dl * w) / (1.0 + w)
    return float(out) if out.ndim == 0 else out


def gaussian_attack_accuracy(epsilon, *, delta, sensitivity, distance=None, calibration: str = "analytic"):
    r"""Exact balanced accuracy :math:`\Phi(d/(2\sigma))` of the optimal attack on a calibrated Gaussian release.

    :math:`\sigma = \sigma(\varepsilon, \delta, \Delta)` is the noise
    :func:`~dpkme.privacy.calibration.calibrate_gaussian` gives (the one the releases use), and :math:`d` the
    distance :math:`\|f(D) - f(D')\|_2` between the released statistics of the two tables: the sensitivity
    :math:`\Delta` on the worst-case pair (default), less on any other pair.

    Parameters
    ----------
    epsilon : float or array-like of float
        :math:`\varepsilon > 0` of the calibration.
    delta : float
        :math:`\delta \in (0, 1)` of the calibration.
    sensitivity : float
        L2 sensitivity :math:`\Delta > 0` the noise is calibrated to (e.g. :math:`2/N` for Algorithm 2).
    distance : float, optional
        :math:`d \ge 0` for the pair attacked (default: ``sensitivity``, the worst case).
    calibration : {"analytic", "classic"}
        The Gaussian calibration (default ``"analytic"``).

    Returns
    -------
    float or ndarray
        :math:`\Phi(d/(2\sigma))` in :math:`[\tfrac12, 1)`, a float for a scalar ``epsilon``.

    Examples
    --------
    >>> from dpkme.audit.membership import gaussian_attack_accuracy, membership_bound
    >>> acc = gaussian_attack_accuracy(1.0, delta=1e-5, sensitivity=0.02)
    >>> round(acc, 4), acc <= membership_bound(1.0, 1e-5)
    (0.5533, True)
    """
    sens = check_positive_float(sensitivity, name="sensitivity")
    d = sens if distance is None else check_positive_float(distance, name="distance", allow_zero=True)
    check_in(calibration, GAUSSIAN_METHODS, name="calibration")
    e = np.asarray(epsilon, dtype=np.float64)
    if e.size == 0 or not np.all(np.isfinite(e)) or np.any(e <= 0):
        raise ValueError(f"epsilon must be finite and > 0, got {epsilon!r}.")
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", UnprovenCalibrationWarning)
        sig = np.array([calibrate_gaussian(epsilon=float(v), delta=delta, sensitivity=sens, method=calibration).sigma
                        for v in e.ravel()]).reshape(e.shape)
    out = ndtr(d / (2.0 * sig))
    return float(out) if out.ndim == 0 else out


@dataclass(frozen=True)
class MembershipAttack:
    r"""Result of :func:`membership_attack`: the attacker's accuracy against ε, with the bound and the theory.

    Arrays are indexed like ``epsilons`` (ascending).

    Parameters
    ----------
    mechanism : str
        ``"algorithm2"`` or ``"algorithm1"``.
    epsilons : ndarray
        The grid of :math:`\varepsilon`.
    delta : float
        :math:`\delta` of every calibration.
    runs : int
        Releases per table and per :math:`\varepsilon`.
    alpha : float
        Miss probability of each confidence interval.
    n : int
        Rows of the two synthetic tables (public size :math:`N`).
    sensitivity : float
        L2 sensitivity :math:`\Delta` the noise is calibrated to.
    distance : float
        :math:`d = \|f(D) - f(D')\|_2` on the pair attacked (equal to :math:`\Delta` on Algorithm 2's worst-case
        pair; Algorithm 1 only releases a projection, so less there).
    sigmas : ndarray
        Calibrated noise :math:`\sigma(\varepsilon)`.
    true_positive_rate, true_negative_rate : ndarray
        Frequencies of "guess in" on :math:`D` and of "guess out" on :math:`D'`.
    accuracy : ndarray
        Empirical balanced accuracy :math:`\tfrac12(\mathrm{TPR} + \mathrm{TNR})`.
    accuracy_low, accuracy_high : ndarray
        Its confidence interval, valid with probability :math:`\ge 1-\alpha` at each :math:`\varepsilon`.
    exact_accuracy : ndarray
        :math:`\Phi(d/(2\sigma))`, the optimal attack's accuracy in closed form.
    bound : ndarray
        :math:`(e^\varepsilon + \delta)/(1 + e^\varepsilon)`, the most any attacker can reach.
    calibration : str
        ``"analytic"`` or ``"classic"``.
    neighbours : dict
        Plain description of the two tables (sizes, the target and its replacement).
    seconds : float
        Wall time of the experiment.
    params : dict
        Public settings of the release (features, points, length scale).

    Attributes
    ----------
    above_bound : ndarray of bool
        Where even the lower end of the interval exceeds the bound: a refutation of the claimed privacy (never
        expected for the library's releases).
    """

    mechanism: str
    epsilons: np.ndarray
    delta: float
    runs: int
    alpha: float
    n: int
    sensitivity: float
    distance: float
    sigmas: np.ndarray
    true_positive_rate: np.ndarray
    true_negative_rate: np.ndarray
    accuracy: np.ndarray
    accuracy_low: np.ndarray
    accuracy_high: np.ndarray
    exact_accuracy: np.ndarray
    bound: np.ndarray
    calibration: str = "analytic"
    neighbours: dict = field(default_factory=dict)
    seconds: float = 0.0
    params: dict = field(default_factory=dict)

    @property
    def above_bound(self) -> np.ndarray:
        r"""Boolean array: ``accuracy_low > bound`` (the DP claim refuted at that :math:`\varepsilon`)."""
        return self.accuracy_low > self.bound


# --------------------------------------------------------------------------- the two tables and the release
def _algorithm2_game(*, n, n_features, lengthscale, calibration, fseed):
    from ..release.random_features import privatise_feature_mean

    J = check_positive_int(n_features, name="n_features", minimum=2, maximum=4096)
    dim = max(1, J // 2)
    feats = RandomFourierFeatures(GaussianKernel(lengthscale=lengthscale), n_components=J, random_state=fseed,
                                  dtype="float64").fit(dim)
    x, xp = rff_antipodal_pair(feats)                 # phi(x') = -phi(x): the sensitivity 2/N is attained
    others = np.random.default_rng(fseed).normal(scale=lengthscale, size=(n - 1, dim))
    D = np.vstack([x[None, :], others])
    Dn = np.vstack([xp[None, :], others])
    md, mp = feats.mean_embedding(D), feats.mean_embedding(Dn)

    def release(A, eps, dl, seed):
        v, cal = privatise_feature_mean(A, feats, epsilon=eps, delta=dl, calibration=calibration,
                                        rng=np.random.default_rng(seed))
        return v, cal.sigma, cal.sensitivity

    return D, Dn, md, mp, release, {"n_features": J, "dim": dim, "lengthscale": lengthscale,
                                    "features": "paired cos/sin random Fourier features (unit norm)"}


def _algorithm1_game(*, n, n_points, lengthscale, calibration, fseed):
    from scipy.linalg import solve_triangular

    from ..release.subspace import SubspaceBasis, algorithm1

    kernel = GaussianKernel(lengthscale=lengthscale)
    M = check_positive_int(n_points, name="n_points", minimum=2, maximum=200)
    Z = np.linspace(-6.0, 6.0, M)[:, None] * lengthscale
    B = SubspaceBasis.fit(Z, kernel=kernel)
    L, acc = B.factor, B.accepted
    c = solve_triangular(L, kernel.cross(Z[acc], Z), lower=True)
    i, j, _ = best_pair(np.arange(M)[:, None].astype(float),
                        lambda a, b: float(np.linalg.norm(c[:, int(a[0])] - c[:, int(b[0])])))
    others = np.random.default_rng(fseed).normal(scale=2.0 * lengthscale, size=(n - 1, 1))
    D = np.vstack([Z[i][None, :], others])
    Dn = np.vstack([Z[j][None, :], others])
    md = B.coordinates(kernel.row_means(Z, D))
    mp = B.coordinates(kernel.row_means(Z, Dn))

    def release(A, eps, dl, seed):
        rel = algorithm1(A, Z, kernel=kernel, epsilon=eps, delta=dl, calibration=calibration, basis_cache=B,
                         random_state=seed)
        return L.T @ rel.weights[acc], rel.sigma, rel.sensitivity      # beta = L^T w_A = alpha + noise

    return D, Dn, md, mp, release, {"n_points": M, "basis_dim": int(B.dim), "lengthscale": lengthscale,
                                    "points": "evenly spaced on [-6, 6] length scales (public)"}


def membership_attack(*, epsilons=DEFAULT_ATTACK_EPSILONS, delta=1e-5, mechanism: str = "algorithm2",
                      n: int = 20, n_features: int = 8, n_points: int = 7, lengthscale: float = 1.0,
                      calibration: str = "analytic", runs: int = 1000, alpha: float = 0.05, random_state=0,
                      progress=None) -> MembershipAttack:
    r"""Run the optimal membership-inference attack on a release at each ε of a grid.

    For each :math:`\varepsilon`: ``runs`` releases of the table :math:`D` (with the target row) and ``runs``
    of :math:`D'` (the target replaced), each with fresh seeded noise; the attacker projects every release on
    :math:`u = (f(D) - f(D'))/\|f(D) - f(D')\|`, guesses "in" when the projection exceeds the midpoint of the
    two tables' statistics (the likelihood-ratio test, optimal here), and the balanced accuracy of the guesses
    is compared with :func:`membership_bound` and with the closed form :func:`gaussian_attack_accuracy`.
    Theory and the confidence interval are in the module docstring.

    * ``mechanism="algorithm2"``: :func:`~dpkme.release.random_features.privatise_feature_mean` (the private
      step of Algorithm 2; the rest is post-processing) with ``n_features`` unit-norm paired features; the
      target and its replacement have opposite feature vectors, so the pair moves the release by exactly the
      sensitivity :math:`2/N` and the attack reaches :math:`\Phi(\Delta/(2\sigma))`.
    * ``mechanism="algorithm1"``: :func:`~dpkme.release.subspace.algorithm1` with ``n_points`` public points;
      the attacker reads the subspace coordinates off the released weights. Only a projection of the
      embedding is released, so the pair moves it by less than :math:`\sqrt2/N` and the attack is weaker.

    Parameters
    ----------
    epsilons : array-like of float
        Grid of :math:`\varepsilon > 0`, 1 to 50 values (sorted and de-duplicated; default
        :data:`DEFAULT_ATTACK_EPSILONS`, 0.05 to 8).
    delta : float
        :math:`\delta \in (0, 1)` of every release (default :math:`10^{-5}`).
    mechanism : {"algorithm2", "algorithm1"}
        The release attacked (default ``"algorithm2"``).
    n : int
        Rows of each synthetic table, at least 2 (default 20): the target and ``n - 1`` other rows that both
        tables share.
    n_features : int
        Random features :math:`J` of Algorithm 2, 2 to 4096 (default 8; the input dimension is :math:`J/2`, so
        that the worst-case pair exists exactly).
    n_points : int
        Public points of Algorithm 1, 2 to 200 (default 7).
    lengthscale : float
        Length scale of the Gaussian kernel, > 0 (default 1).
    calibration : {"analytic", "classic"}
        Gaussian calibration of the release (default ``"analytic"``).
    runs : int
        Releases per table and per :math:`\varepsilon`, 10 to :data:`~dpkme.audit.mechanisms.MAX_RUNS`
        (default 1000; the time grows linearly: about 0.1 ms per release of Algorithm 2).
    alpha : float in (0, 1)
        Miss probability of each confidence interval (default 0.05).
    random_state : int, Generator or None
        Seed of the experiment (default 0: reproducible); every release gets its own seed derived from it,
        independent across :math:`\varepsilon`; ``None`` draws them from OS entropy.
    progress : callable, optional
        ``progress(fraction, message)``, increasing fractions ending at 1.0; raising from it cancels the run.

    Returns
    -------
    MembershipAttack
        Empirical accuracy with its interval, the exact accuracy :math:`\Phi(d/(2\sigma))` and the bound, per
        :math:`\varepsilon`.

    Raises
    ------
    ValueError
        On an invalid setting (the message names it).

    Examples
    --------
    >>> from dpkme.audit.membership import membership_attack
    >>> res = membership_attack(epsilons=[0.1, 4.0], runs=400, random_state=1)
    >>> [round(float(b), 3) for b in res.bound]
    [0.525, 0.982]
    >>> bool(((res.accuracy_low <= res.exact_accuracy) & (res.exact_accuracy <= res.accuracy_high)).all())
    True
    >>> bool(res.above_bound.any())
    False
    """
    t0 = time.perf_counter()
    eps_grid = _check_epsilons(epsilons)
    dl = check_delta(delta)
    check_in(mechanism, MEMBERSHIP_MECHANISMS, name="mechanism")
    check_in(calibration, GAUSSIAN_METHODS, name="calibration")
    n = check_positive_int(n, name="n", minimum=2)
    ls = check_positive_float(lengthscale, name="lengthscale")
    runs = check_positive_int(runs, name="runs", minimum=10, maximum=MAX_RUNS)
    a = check_positive_float(alpha, name="alpha")
    if not a < 1.0:
        raise ValueError(f"alpha must lie in (0, 1), got {alpha!r}.")
    reporter = Progress(progress)
    fseed = _public_seed(random_state)
    if mechanism == "algorithm2":
        D, Dn, md, mp, release, params = _algorithm2_game(n=n, n_features=n_features, lengthscale=ls,
                                                          calibration=calibration, fseed=fseed)
    else:
        D, Dn, md, mp, release, params = _algorithm1_game(n=n, n_points=n_points, lengthscale=ls,
                                                          calibration=calibration, fseed=fseed)
    diff = md - mp
    dist = float(np.linalg.norm(diff))
    if not dist > 0:  # pragma: no cover - the pairs above always differ
        raise ValueError("the two tables give the same statistic: there is nothing to attack.")
    u = diff / dist
    mid = float(0.5 * (md + mp) @ u)
    G = eps_grid.size
    seeds = _seeds(random_state, 2 * runs * G).reshape(G, 2, runs)
    sigmas, sens_used = np.empty(G), np.empty(G)
    hits = np.empty((G, 2), dtype=np.int64)      # [:, 0]: "in" on D (TP); [:, 1]: "out" on D' (TN)
    total = 2 * runs * G
    for g, eps in enumerate(eps_grid):
        with warnings.catch_warnings():
            if g:   # say it once: the classic calibration outside its theorem
                warnings.simplefilter("ignore", UnprovenCalibrationWarning)
            for which, table in enumerate((D, Dn)):
                correct = 0
                for r in range(runs):
                    v, sigma, sens = release(table, float(eps), dl, int(seeds[g, which, r]))
                    guess_in = float(v @ u) - mid > 0.0
                    correct += guess_in if which == 0 else not guess_in
                    k = (g * 2 + which) * runs + r
                    if k % 256 == 0:
                        reporter(k / total, f"ε = {eps:g}: release {k + 1:,} of {total:,}")
                hits[g, which] = correct
                sigmas[g], sens_used[g] = sigma, sens
    reporter.finish(f"{total:,} releases attacked")
    a4 = a / 4.0
    tpr, tnr = hits[:, 0] / runs, hits[:, 1] / runs
    low = 0.5 * (clopper_pearson_lower(hits[:, 0], runs, a4) + clopper_pearson_lower(hits[:, 1], runs, a4))
    high = 0.5 * (clopper_pearson_upper(hits[:, 0], runs, a4) + clopper_pearson_upper(hits[:, 1], runs, a4))
    exact = ndtr(dist / (2.0 * sigmas))
    return MembershipAttack(
        mechanism=mechanism, epsilons=eps_grid, delta=dl, runs=runs, alpha=a, n=n,
        sensitivity=float(sens_used[0]), distance=dist, sigmas=sigmas, true_positive_rate=tpr,
        true_negative_rate=tnr, accuracy=0.5 * (tpr + tnr), accuracy_low=np.atleast_1d(low),
        accuracy_high=np.atleast_1d(high), exact_accuracy=exact, bound=np.atleast_1d(membership_bound(eps_grid, dl)),
        calibration=calibration,
        neighbours={"n": n, "neighbouring": "replace-one", "target": D[0].tolist(), "replacement": Dn[0].tolist(),
                    "description": "synthetic tables that share all rows but the first; the first row is the "
                                   "target in D and its replacement in D′, chosen to move the release the most"},
        seconds=time.perf_counter() - t0, params=params)
