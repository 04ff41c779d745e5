"""Power of the empirical audit (dpkme.audit.power): exactness, agreement with brute force, monotonicity, validity."""

import doctest
import itertools
import math

import numpy as np
import pytest

import dpkme.audit.power as power_module
from dpkme.audit import (
    CANDIDATES,
    AuditPower,
    AuditSettings,
    audit_gaussian,
    audit_power,
    audit_scores,
    runs_for_power,
)
from dpkme.audit.power import _cp_tables, _kmin, _select, _sorted_quantiles, _split_sizes

SQRT2 = math.sqrt(2.0)


def _noise(mechanism, rng, n):
    return rng.standard_normal(n) if mechanism == "gaussian" else rng.laplace(size=n)


def _scores(mechanism, shift, n, rng):
    return _noise(mechanism, rng, n) + shift, _noise(mechanism, rng, n)


# ---------------------------------------------------------------------------- the model is the audit
def test_the_docstring_examples_run():
    assert doctest.testmod(power_module, raise_on_error=False).failed == 0


def test_the_thresholds_are_numpys_quantiles_bit_for_bit():
    rng = np.random.default_rng(3)
    q = np.linspace(0.0, 1.0, 400)
    for n in (401, 1200, 1201, 6000):
        rows = np.sort(rng.standard_normal((5, n)), axis=1)
        assert np.array_equal(_sorted_quantiles(rows, q), np.quantile(rows, q, axis=1).T)


@pytest.mark.parametrize("mechanism,factor,runs", [
    ("gaussian", SQRT2, 300),     # 180 pooled selection values: every one is a candidate threshold
    ("gaussian", SQRT2, 2000),    # 1 200 pooled values: 400 quantiles
    ("gaussian", 1.0, 1500),
    ("laplace", SQRT2, 1000),
])
def test_the_modelled_decision_is_the_audits_decision(mechanism, factor, runs):
    """Same scores in, same event chosen and same verdict out as audit_scores (deterministic, 25 audits each)."""
    eps, delta, alpha = 2.0, (1e-2 if mechanism == "gaussian" else 0.0), 0.05
    p = audit_power(runs, mechanism=mechanism, epsilon=eps, delta=delta, alpha=alpha, factor=factor, replicates=10)
    shift = p.mu if mechanism == "gaussian" else factor * eps
    k, n_e = _split_sizes(runs, 0.3)
    sel = _cp_tables(k, alpha / 2)
    lower, upper = _cp_tables(n_e, alpha / 2)
    kmin = _kmin(lower, upper, eps, delta)
    rng = np.random.default_rng(7)
    verdicts = []
    for _ in range(25):
        sd, sp = _scores(mechanism, shift, runs, rng)
        res = audit_scores(sd, sp, epsilon=eps, delta=delta, alpha=alpha)
        t, j = _select(np.sort(sd[:k])[None], np.sort(sp[:k])[None], *sel, delta)
        assert t[0] == res.threshold
        assert CANDIDATES[int(j[0])] == (res.region, res.numerator)
        # the evaluation counts of the chosen event, and the kmin rule
        ed, ep = sd[k:], sp[k:]
        counts = {("s > t", "D"): ((ed > t[0]).sum(), (ep > t[0]).sum()),
                  ("s > t", "D'"): ((ep > t[0]).sum(), (ed > t[0]).sum()),
                  ("s <= t", "D"): ((ed <= t[0]).sum(), (ep <= t[0]).sum()),
                  ("s <= t", "D'"): ((ep <= t[0]).sum(), (ed <= t[0]).sum())}
        k_num, k_den = counts[(res.region, res.numerator)]
        assert (k_num >= kmin[k_den]) == res.violation
        verdicts.append(res.violation)
    if factor > 1 and runs >= 1000:
        assert any(verdicts)   # the comparison exercised both verdicts


def test_the_gaussian_model_is_the_half_noise_audits_scalar():
    """factor 2 (half the noise) gives exactly the mu and the pair epsilon of audit_gaussian(variant='half-noise')."""
    res = audit_gaussian(settings=AuditSettings(runs=10, epsilon=2.0, delta=1e-2), variant="half-noise")
    p = audit_power(1000, factor=2.0, epsilon=2.0, delta=1e-2, replicates=10)
    assert p.mu == pytest.approx(res.params["mu_pair"], rel=1e-12)
    assert p.true_epsilon == pytest.approx(res.pair_epsilon, rel=1e-9)
    correct = audit_power(1000, factor=1.0, replicates=10)
    assert correct.true_epsilon == pytest.approx(2.0, abs=1e-9)


# ---------------------------------------------------------------------------- against brute force
@pytest.mark.slow
@pytest.mark.parametrize("mechanism,factor,runs,audits", [
    ("gaussian", 2.0, 450, 600),     # power about 0.55, every pooled value a candidate
    ("gaussian", SQRT2, 1500, 400),  # power about 0.2, the 400-quantile grid
])
def test_power_agrees_with_brute_force_audits(mechanism, factor, runs, audits):
    """Whole audits (audit_scores on simulated scalars, fixed seed) refute as often as audit_power says.

    Tolerance: 4 combined standard errors (binomial of the brute force, Monte Carlo of audit_power); a correct
    power would fail this with probability about 6e-5 (normal approximation). The seeds are fixed, so the test is
    deterministic.
    """
    eps, delta, alpha = 2.0, 1e-2, 0.05
    p = audit_power(runs, mechanism=mechanism, epsilon=eps, delta=delta, alpha=alpha, factor=factor,
                    replicates=2000, random_state=11)
    rng = np.random.default_rng(12)
    hits = 0
    for _ in range(audits):
        sd, sp = _scores(mechanism, p.mu, runs, rng)
        hits += audit_scores(sd, sp, epsilon=eps, delta=delta, alpha=alpha).violation
    observed = hits / audits
    se = math.sqrt(p.power * (1 - p.power) / audits + p.standard_error ** 2)
    assert 0.1 < p.power < 0.9
    assert abs(observed - p.power) <= 4 * se, (observed, p.power, se)


# ---------------------------------------------------------------------------- properties
def test_the_review_numbers_at_the_pages_default_setting():
    """Gaussian mechanism, eps = 2, delta = 1e-2, 95 % confidence, sqrt(2) bug: about 1/3 at 2 000 runs, 98 % at 10 000."""
    few = audit_power(2000)
    many = audit_power(10000)
    assert abs(few.power - 1 / 3) < 0.05 and few.standard_error < 0.01
    assert abs(many.power - 0.98) < 0.015 and many.standard_error < 0.005
    assert isinstance(few, AuditPower) and float(few) == few.power
    assert few.summary()["runs"] == 2000


def test_power_increases_with_the_runs():
    powers = [audit_power(n, replicates=300).power for n in (500, 1000, 2000, 3000, 5000, 10000)]
    assert all(a < b for a, b in itertools.pairwise(powers)), powers
    assert powers[0] < 0.05 and powers[-1] > 0.95


@pytest.mark.parametrize("mechanism,runs", [("gaussian", 500), ("gaussian", 5000), ("laplace", 3000)])
def test_a_correct_mechanism_is_refuted_at_most_alpha_of_the_time(mechanism, runs):
    delta = 1e-2 if mechanism == "gaussian" else 0.0
    for alpha in (0.05, 0.2):
        p = audit_power(runs, mechanism=mechanism, delta=delta, alpha=alpha, factor=1.0, replicates=300)
        assert p.power <= alpha + 3 * p.standard_error
    # a mechanism with more noise than claimed is refuted even less often
    assert audit_power(runs, mechanism=mechanism, delta=delta, factor=0.7, replicates=300).power < 1e-3


def test_power_grows_with_the_size_of_the_bug():
    powers = [audit_power(2000, factor=c, replicates=300).power for c in (1.0, 1.2, SQRT2, 2.0)]
    assert all(a < b for a, b in itertools.pairwise(powers)), powers


def test_runs_for_power_is_consistent_with_audit_power():
    kw = dict(replicates=300, random_state=5)
    n90 = runs_for_power(0.9, **kw)
    n95 = runs_for_power(0.95, **kw)
    assert 4000 < n90 < n95 < 10000
    assert audit_power(n95, **kw).power >= 0.95
    assert audit_power(int(n95 * 0.9), **kw).power < 0.95      # within the resolution (2 %) of the smallest
    # a larger bug needs fewer runs; a start above the answer is searched downwards
    n_half = runs_for_power(0.95, factor=2.0, start=5000, **kw)
    assert n_half < 2000
    assert audit_power(n_half, factor=2.0, **kw).power >= 0.95


def test_runs_for_power_refuses_an_undetectable_bug():
    with pytest.raises(ValueError, match="max_runs"):
        runs_for_power(0.5, factor=1.0, max_runs=4000, replicates=50)


def test_results_are_reproducible_and_the_seed_matters():
    a = audit_power(2000, replicates=100, random_state=1)
    b = audit_power(2000, replicates=100, random_state=1)
    c = audit_power(2000, replicates=100, random_state=2)
    assert a == b and a.power != c.power


@pytest.mark.parametrize("kwargs,name", [
    (dict(runs=5), "runs"),
    (dict(runs=2000.5), "runs"),
    (dict(runs=2000, mechanism="exponential"), "mechanism"),
    (dict(runs=2000, epsilon=0.0), "epsilon"),
    (dict(runs=2000, delta=0.0), "delta"),           # the Gaussian mechanism needs delta > 0
    (dict(runs=2000, mechanism="laplace", delta=1.0), "delta"),
    (dict(runs=2000, alpha=1.0), "alpha"),
    (dict(runs=2000, factor=-1.0), "factor"),
    (dict(runs=2000, selection_fraction=1.0), "selection_fraction"),
    (dict(runs=2000, replicates=3), "replicates"),
    (dict(runs=2000, random_state=-1), "random_state"),
    (dict(runs=10, selection_fraction=0.01), "selection_fraction"),
])
def test_bad_inputs_are_named(kwargs, name):
    with pytest.raises(ValueError, match=name):
        audit_power(**kwargs)


@pytest.mark.parametrize("kwargs,name", [
    (dict(target=1.0), "target"),
    (dict(target=0.9, start=5), "start"),
    (dict(target=0.9, rtol=0.0), "rtol"),
    (dict(target=0.9, factor=0.0), "factor"),
])
def test_bad_search_inputs_are_named(kwargs, name):
    with pytest.raises(ValueError, match=name):
        runs_for_power(**kwargs)


# ---------------------------------------------------------------------------- README and benchmark
def test_readme_power_table_is_the_benchmarks_and_reproduces():
    """The audit page's power table (docs/audits.md) is what bench_audit.py --sections power-curve wrote; it recomputes."""
    import importlib.util
    import json
    from pathlib import Path

    root = Path(__file__).resolve().parents[2]
    spec = importlib.util.spec_from_file_location("bench_audit", root / "benchmarks" / "bench_audit.py")
    bench = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(bench)
    curve = json.loads((root / "benchmarks" / "results" / "audit.json").read_text())["power_curve"]
    readme = bench.README.read_text()   # docs/audits.md, where the tables moved from README.md in 0.5.0
    i, j = readme.index(bench.POWER_START) + len(bench.POWER_START), readme.index(bench.POWER_END)
    assert readme[i:j].strip() == "\n".join(bench.power_curve_lines(curve)).strip()
    assert [r["runs"] for r in curve["rows"]] == [1000, 2000, 5000, 10000, 20000]
    row = next(r for r in curve["rows"] if r["runs"] == 2000)
    again = audit_power(2000, factor=curve["factor"], replicates=curve["replicates"], random_state=0,
                        **curve["setting"])
    assert again.power == pytest.approx(row["power"], rel=1e-12)
