"""DP k-means draws its published initial points and its privacy noise from independent fresh OS entropy.

Issue 24, finding 6c: the initial points (published with the result) and the noise must not come from one
OS seed split by ``Generator.spawn``: children of one 128-bit seed are statistically independent but not
cryptographically so, and the public draws are published. A real release (``random_state=None``) seeds every
stream with its own OS entropy (:func:`dpkme._validation.spawn_streams` with ``fresh=True``); a seeded replay
(``random_state=int``) stays derived from its seed and is labelled not private.
"""

from __future__ import annotations

import numpy as np
import pytest

from dpkme.clustering import clusterwise_release, dp_kernel_kmeans
from dpkme.clustering import kmeans as km
from dpkme.clustering import release as cw
from dpkme.kernels import GaussianKernel

X = np.concatenate([np.random.default_rng(0).normal(-2, 0.3, (40, 2)), np.random.default_rng(1).normal(2, 0.3, (40, 2))])
KW = dict(k=2, epsilon=2.0, delta=1e-6, n_iter=2, kernel=GaussianKernel(lengthscale=1.0), n_features=20,
          bounds=([-4, -4], [4, 4]), n_candidates=50)


def _spy(monkeypatch):
    """Record the generators the initial points and the noise are drawn from."""
    seen = {"init": [], "noise": []}
    init, noise = km.initial_points, km.gaussian_noise

    def spy_init(*a, rng, **kw):
        seen["init"].append(rng)
        return init(*a, rng=rng, **kw)

    def spy_noise(*a, rng, **kw):
        seen["noise"].append(rng)
        return noise(*a, rng=rng, **kw)

    monkeypatch.setattr(km, "initial_points", spy_init)
    monkeypatch.setattr(km, "gaussian_noise", spy_noise)
    monkeypatch.setattr(cw, "gaussian_noise", spy_noise)
    return seen


def _seed_seq(rng):
    return rng.bit_generator.seed_seq


@pytest.mark.parametrize("run", ["kmeans", "clusterwise"])
def test_a_real_run_draws_initial_points_and_noise_from_separate_os_entropy(monkeypatch, run):
    seen = _spy(monkeypatch)
    res = dp_kernel_kmeans(X, **KW) if run == "kmeans" else clusterwise_release(X, n_points=4, **KW).clustering
    assert res.noise_source == "os-entropy" and res.seed is None
    (r_init,) = seen["init"]
    noise = {id(r): r for r in seen["noise"]}
    assert noise and all(r is not r_init for r in noise.values())
    ss_init = _seed_seq(r_init)
    for r in noise.values():
        ss = _seed_seq(r)
        # not two children of one OS seed: each stream has its own entropy and is nobody's spawned child
        assert ss.entropy != ss_init.entropy
        assert ss.spawn_key == () and ss_init.spawn_key == ()


def test_a_seeded_replay_stays_derived_from_its_seed_and_is_not_private(monkeypatch):
    seen = _spy(monkeypatch)
    a = dp_kernel_kmeans(X, random_state=3, **KW)
    b = dp_kernel_kmeans(X, random_state=3, **KW)
    np.testing.assert_array_equal(a.init_points, b.init_points)
    np.testing.assert_array_equal(a.centres, b.centres)
    assert a.seed == 3 and a.noise_source == "seeded" and a.to_dict()["differentially_private"] is False
    assert _seed_seq(seen["init"][0]).entropy == _seed_seq(seen["noise"][0]).entropy == 3
