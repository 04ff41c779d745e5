r"""Turn a weighted release into unweighted synthetic rows.

A weighted release :math:`\sum_m w_m k(z_m,\cdot)` with :math:`w \ge 0` is
(after normalisation) the KME of the discrete distribution
:math:`P(z_m) = w_m/\sum_k w_k`; drawing :math:`n` i.i.d. rows from it gives an
unweighted dataset whose empirical KME converges to it at rate
:math:`O_p(n^{-1/2})` (and whose sample means of any function converge to the
weighted means, within Monte-Carlo error :math:`\mathrm{sd}/\sqrt n`).

Negative weights have no such interpretation. ``negative="clip"`` (default)
samples proportionally to :math:`\max(w_m, 0)` — this drops the negative part
of the signed measure, which is reported in the returned info — and
``negative="refuse"`` raises a :class:`ValueError` instead. Resampling is
post-processing of the release and costs no privacy.
"""

from __future__ import annotations

import numpy as np

from .._validation import check_array, check_in, check_positive_int, check_random_state, check_weights

__all__ = ["resample"]


def resample(release, n: int, rng=None, *, negative: str = "clip", return_info: bool = False):
    r"""Draw ``n`` unweighted rows from a weighted release.

    Parameters
    ----------
    release : Release or tuple (points, weights)
        Any weighted release (:class:`dpkme.release.Release`) or a pair of
        arrays.
    n : int
        Number of rows to draw.
    rng : None, int or numpy.random.Generator
    negative : {"clip", "refuse"}
        Treatment of negative weights (see module docstring).
    return_info : bool
        Also return ``{"negative_mass", "positive_mass", "counts"}``.

    Returns
    -------
    rows : ndarray (n, D)
    info : dict (only with ``return_info=True``)

    Raises
    ------
    ValueError
        If no weight is positive, or a weight is negative and
        ``negative="refuse"``.
    """
    if isinstance(release, tuple):
        points, weights = release
    else:
        points, weights = release.points, release.weights
    points = check_array(points, name="points")
    weights = check_weights(weights, n=points.shape[0])
    n = check_positive_int(n, name="n")
    check_in(negative, ("clip", "refuse"), name="negative")
    gen, _ = check_random_state(rng)
    neg = float(-weights[weights < 0].sum())
    if neg > 0 and negative == "refuse":
        i = int(np.argmin(weights))
        raise ValueError(
            f"the release has negative weights (e.g. weights[{i}] = {weights[i]:.3g}, total {neg:.3g}); "
            "they cannot be sampled. Use negative='clip' to sample proportionally to max(w, 0), or a "
            "solver with simplex weights."
        )
    pos = np.maximum(weights, 0.0)
    total = float(pos.sum())
    if not total > 0:
        raise ValueError(f"no weight is positive (sum of positive parts = {total}); nothing to sample.")
    counts = gen.multinomial(n, pos / total)
    rows = np.repeat(points, counts, axis=0)
    rows = rows[gen.permutation(n)]
    if return_info:
        return rows, {"negative_mass": neg, "positive_mass": total, "counts": counts}
    return rows
