"""Frequency samplers of the additive kernel's random features (dpkme.kernels.additive, issue 15).

``AdditiveKernel(frequencies="stratified")`` gives each term its share of the frequencies (systematic rounding
of n w_t), stratified normal quantiles on one-coordinate blocks and orthogonal random features on larger
ones; ``"iid"`` is the earlier multinomial sampler. Checked: exact counts per term, unbiased counts and kernel
estimates (simulation), marginals N(0, c^2 I), orthogonality, unit norm, a lower kernel-approximation error
than i.i.d. at the same J over many seeds, the JSON round trip, and that "iid" reproduces the old draws.
"""

from __future__ import annotations

import math

import numpy as np
import pytest
from scipy import stats

from dpkme.kernels import AdditiveKernel, RandomFourierFeatures, kernel_from_dict, table_kernel
from dpkme.kernels.additive import FREQUENCY_SAMPLERS, _standard_normal_rows
from dpkme.schema import ColumnSpec, TableSchema


def _kernel(frequencies="stratified"):
    # one-coordinate terms, a 2-D and a 3-D block, the whole row; unequal weights and scales
    return AdditiveKernel(dim=5, blocks=[[0], [1], [4], [1, 2], [2, 3, 4], [0, 1, 2, 3, 4]],
                          weights=[1.0, 1.0, 0.5, 2.0, 1.5, 3.0], scales=[6.0, 5.0, 4.0, 2.0, 1.5, 0.8],
                          frequencies=frequencies)


def _support_counts(k, W):
    return np.array([_row_mask(k, W, t).sum() for t in range(k.n_terms)])


def _approx(W, X):
    """The equal-weight paired cos/sin estimate (1/n) sum_i cos(w_i^T (x - y)) for all pairs of rows of X."""
    A = X @ W.T
    Phi = np.hstack([np.cos(A), np.sin(A)]) / math.sqrt(W.shape[0])
    return Phi @ Phi.T


def _schema():
    return TableSchema([ColumnSpec("x", "continuous", lower=0, upper=1),
                        ColumnSpec("c", "categorical", categories=["a", "b", "c"]),
                        ColumnSpec("y", "integer", lower=0, upper=10),
                        ColumnSpec("z", "continuous", lower=-5, upper=5)])


# --------------------------------------------------------------------------- counts per term
@pytest.mark.parametrize("n", [37, 500, 4001])
def test_counts_per_term_are_the_rounded_shares(n):
    k = _kernel()
    for seed in range(20):
        counts = k.term_counts(n, rng=np.random.default_rng(seed))
        share = n * k.weights
        assert counts.sum() == n
        assert np.all((counts == np.floor(share)) | (counts == np.ceil(share)))
        # sample_frequencies spends the same U first: its rows carry exactly these counts
        W = k.sample_frequencies(n, 5, np.random.default_rng(seed))
        assert np.array_equal(_support_counts(k, W), counts)


def test_counts_are_exact_when_the_shares_are_integers():
    k = _kernel()   # weights sum to 9: n = 900 gives integer shares
    for seed in range(10):
        assert k.term_counts(900, rng=np.random.default_rng(seed)).tolist() == [100, 100, 50, 200, 150, 300]


def test_counts_are_unbiased():
    """E n_t = n w_t: each count is floor or ceil of its share, so its sd is <= 1/2 and the mean of 4000 draws
    is within 0.5 * 5 / sqrt(4000) = 0.04 of n w_t (5 standard deviations)."""
    k = _kernel()
    n = 101   # shares 11.2, 11.2, 5.6, 22.4, 16.8, 33.7: all fractional
    rng = np.random.default_rng(3)
    mean = np.mean([k.term_counts(n, rng=rng) for _ in range(4000)], axis=0)
    assert np.allclose(mean, n * k.weights, atol=0.04)


def test_every_term_of_a_table_kernel_gets_frequencies():
    k = table_kernel(_schema())
    counts = k.term_counts(1000, rng=np.random.default_rng(0))
    assert counts.min() >= 1 and counts.sum() == 1000
    assert np.all(np.abs(counts - 1000 * k.weights) < 1)


# --------------------------------------------------------------------------- the frequencies themselves
def test_one_coordinate_terms_are_stratified_normal_quantiles():
    """Term 0 (scale 6) gets 1000 * 1/9 = 111 or 112 frequencies, one per stratum of Phi: their quantile
    ranks Phi(w / 6) fall one in each interval [i/n_t, (i+1)/n_t)."""
    k = _kernel()
    W = k.sample_frequencies(1000, 5, np.random.default_rng(1))
    w0 = W[_row_mask(k, W, 0), 0]
    ranks = np.sort(stats.norm.cdf(w0 / 6.0))
    n_t = w0.size
    assert np.array_equal(np.floor(ranks * n_t), np.arange(n_t))


def _row_mask(k, W, t):
    b = list(k.blocks[t])
    others = np.setdiff1d(np.arange(W.shape[1]), b)
    return np.all(W[:, b] != 0, axis=1) & np.all(W[:, others] == 0, axis=1)


def test_frequencies_are_normal_given_their_term():
    """Pooled over seeds, every term's frequencies pass a KS test against N(0, c^2) per coordinate (and the
    squared norms against c^2 chi^2_d) at level 1e-4, a fixed set of seeds."""
    k = _kernel()
    W = np.vstack([k.sample_frequencies(300, 5, np.random.default_rng(s)) for s in range(40)])
    for t, (b, c) in enumerate(zip(k.blocks, k.scales)):
        rows = W[_row_mask(k, W, t)][:, list(b)]
        for j in range(len(b)):
            assert stats.kstest(rows[:, j] / c, "norm").pvalue > 1e-4
        assert stats.kstest((rows**2).sum(axis=1) / c**2, stats.chi2(len(b)).cdf).pvalue > 1e-4


def test_orthogonal_rows_within_each_group():
    rng = np.random.default_rng(2)
    R = _standard_normal_rows(10, 3, rng)     # groups of 3, 3, 3, then 1
    for i0 in range(0, 9, 3):
        G = R[i0:i0 + 3] @ R[i0:i0 + 3].T
        off = G - np.diag(np.diag(G))
        assert np.abs(off).max() < 1e-12 * np.abs(np.diag(G)).max()
    assert _standard_normal_rows(7, 1, rng).shape == (7, 1)


def test_unbiased_kernel_estimate_by_simulation():
    """E[phi(x)^T phi(y)] = k(x, y) for the unit-norm paired features of n = 12 frequencies (fewer than twice
    the number of terms: the rounding matters). Mean of 3000 seeds within 5 standard errors."""
    k = _kernel()
    rng = np.random.default_rng(4)
    X = rng.uniform(-0.5, 0.5, size=(6, 5))
    K = k(X, X)
    est = np.array([_approx(k.sample_frequencies(12, 5, np.random.default_rng(s)), X) for s in range(3000)])
    se = est.std(axis=0) / math.sqrt(est.shape[0])
    assert np.all(np.abs(est.mean(axis=0) - K) <= 5 * se + 1e-12)


@pytest.mark.parametrize("frequencies", FREQUENCY_SAMPLERS)
def test_features_have_unit_norm(frequencies):
    k = table_kernel(_schema())
    k = AdditiveKernel(**{**k.get_params(), "frequencies": frequencies})
    X = np.random.default_rng(5).uniform(-1, 1, size=(50, k.dim))
    Phi = RandomFourierFeatures(k, n_components=400, random_state=0, dtype="float64").fit(k.dim).transform(X)
    assert np.allclose(np.linalg.norm(Phi, axis=1), 1.0, atol=1e-12)


def test_lower_approximation_error_than_iid():
    """Mean squared error of the J = 400 kernel approximation on 40 points, over 60 seeds per sampler: the
    stratified sampler's mean is below 0.8 x the i.i.d. one (measured about 0.5) and it wins on most seeds."""
    iid, strat = _kernel("iid"), _kernel("stratified")
    X = np.random.default_rng(6).uniform(-1, 1, size=(40, 5))
    K = iid(X, X)

    def mse(k, seed):
        return float(np.mean((_approx(k.sample_frequencies(200, 5, np.random.default_rng(seed)), X) - K) ** 2))

    e_iid = np.array([mse(iid, s) for s in range(60)])
    e_strat = np.array([mse(strat, s) for s in range(1000, 1060)])
    assert e_strat.mean() < 0.8 * e_iid.mean()
    assert stats.mannwhitneyu(e_strat, e_iid, alternative="less").pvalue < 1e-4


# --------------------------------------------------------------------------- the option
def test_iid_reproduces_the_earlier_sampler():
    k = _kernel("iid")
    W = k.sample_frequencies(300, 5, np.random.default_rng(7))
    rng = np.random.default_rng(7)   # the sampler before the option existed, verbatim
    terms = rng.choice(k.n_terms, size=300, p=k.weights)
    old = np.zeros((300, 5))
    for t, (b, c) in enumerate(zip(k.blocks, k.scales)):
        rows = np.flatnonzero(terms == t)
        if rows.size:
            old[np.ix_(rows, np.asarray(b))] = rng.standard_normal((rows.size, len(b))) * c
    assert np.array_equal(W, old)


@pytest.mark.parametrize("frequencies", FREQUENCY_SAMPLERS)
def test_recorded_and_round_tripped(frequencies):
    k = _kernel(frequencies)
    assert k.get_params()["frequencies"] == frequencies
    spec = k.to_dict()
    assert spec["frequencies"] == frequencies
    back = kernel_from_dict(spec)
    assert back == k and back.frequencies == frequencies
    assert back != _kernel("iid" if frequencies == "stratified" else "stratified")
    W1 = back.sample_frequencies(50, 5, np.random.default_rng(8))
    assert np.array_equal(W1, k.sample_frequencies(50, 5, np.random.default_rng(8)))


def test_a_record_without_the_key_is_the_earlier_sampler():
    spec = _kernel("iid").to_dict()
    del spec["frequencies"]
    assert kernel_from_dict(spec).frequencies == "iid"


def test_bad_sampler_is_refused():
    with pytest.raises(ValueError, match="frequencies"):
        _kernel("sobol")


# --------------------------------------------------------------------------- the public rule for J
def test_default_n_features_follows_the_noise_level():
    from dpkme.release.tabular import N_FEATURES_RANGE, _noise_sigma, default_n_features

    lo, hi = N_FEATURES_RANGE
    assert default_n_features(n_private=300, epsilon=1.0, delta=1e-6) == lo
    assert default_n_features(n_private=10**7, epsilon=10.0, delta=1e-6) == hi
    js = [default_n_features(n_private=16152, epsilon=e, delta=1e-6, maximum=10**6) for e in (0.3, 1.0, 2.0, 3.0)]
    assert js == sorted(js) and all(j % 2 == 0 for j in js)
    sigma = _noise_sigma(n_private=16152, epsilon=3.0, delta=1e-6, mechanism="algorithm2", calibration="analytic",
                         neighbouring="replace-one")
    assert abs(js[-1] - 1.0 / sigma) <= 2          # J = 1/sigma, rounded up to even
    assert default_n_features(n_private=16152, epsilon=1.0, delta=1e-6, minimum=100, maximum=100) == 100
    with pytest.raises(ValueError, match="maximum"):
        default_n_features(n_private=100, epsilon=1.0, delta=1e-6, minimum=10, maximum=5)

