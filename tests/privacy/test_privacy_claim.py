"""Red team (issue 13), library level: a file that says ``"differentially_private": true`` never holds what
would regenerate its noise. Seeded results are replayable demos and say so; real ones carry no seed."""

from __future__ import annotations

import json

import numpy as np
import pytest

from dpkme.clustering import dp_kernel_kmeans
from dpkme.kernels.kernel import GaussianKernel
from dpkme.privacy.leaks import privacy_claim
from dpkme.release.gp import gp_release
from dpkme.release.random_features import algorithm2
from dpkme.release.subspace import algorithm1

X = np.random.default_rng(0).normal(size=(300, 2))
KERNEL = GaussianKernel(lengthscale=1.0)


def _releases(random_state):
    yield "algorithm1", algorithm1(X, None, kernel=KERNEL, epsilon=1.0, delta=1e-6, n_points=20, q_scale=2.0,
                                   random_state=random_state).metadata()
    yield "algorithm2", algorithm2(X, kernel=KERNEL, epsilon=1.0, delta=1e-6, n_points=10, n_features=200,
                                   random_state=random_state).metadata()
    yield "gp", gp_release(X, kernel=KERNEL, epsilon=1.0, delta=1e-6, grid=[np.linspace(-3, 3, 8)] * 2,
                           random_state=random_state).metadata()
    yield "kmeans", dp_kernel_kmeans(X, k=2, epsilon=1.0, delta=1e-6, n_iter=2, kernel=KERNEL, n_features=100,
                                     bounds=([-4.0, -4.0], [4.0, 4.0]),
                                     random_state=random_state).to_dict(include_history=False)


@pytest.mark.parametrize("random_state", [None, 7, np.random.default_rng(3)], ids=["os-entropy", "seed", "generator"])
def test_a_file_that_claims_privacy_never_holds_a_seed(random_state):
    for name, meta in _releases(random_state):
        text = json.dumps(meta, default=str)
        assert "differentially_private" in meta, name
        if meta["differentially_private"]:
            assert meta["seed"] is None and meta["noise_source"] in ("os-entropy", "opendp"), name
        if isinstance(random_state, int):
            assert meta["differentially_private"] is False and meta["seed"] == 7, name
            assert any("replayable demo" in r for r in meta["not_private_because"]), name
        if random_state is None:
            assert meta["differentially_private"] is True, (name, meta.get("not_private_because"))
        assert '"seed": 7' not in text or not meta["differentially_private"]


def test_privacy_claim_refuses_leaky_or_infinite_releases():
    from types import SimpleNamespace

    leaky = SimpleNamespace(noise_source="os-entropy", epsilon=1.0,
                            params={"private": False, "privacy_leaks": ["lengthscale from the private rows"]})
    claim = privacy_claim(leaky)
    assert claim["differentially_private"] is False and claim["not_private_because"] == ["lengthscale from the private rows"]
    assert privacy_claim(SimpleNamespace(noise_source="os-entropy", epsilon=float("inf"), params={}))[
        "differentially_private"] is False


def test_published_metadata_holds_no_run_times():
    """A run time is a side channel (code paths depend on the private rows): the owner sees it, files do not."""
    import numpy as np

    import dpkme

    X = np.random.default_rng(1).normal(size=(200, 2))
    rel = dpkme.algorithm2(X, kernel=dpkme.GaussianKernel(lengthscale=1.0), epsilon=1.0, delta=1e-6, n_points=5,
                           n_features=200)
    assert rel.seconds > 0 and "solver_seconds" in rel.params
    text = rel.to_json()
    assert "seconds" not in text


def test_a_real_releases_public_and_noise_streams_have_separate_entropy():
    """Review (minor): spawned children of one 128-bit OS seed are not cryptographically independent, and the
    public stream's draws are published; a real release seeds each stream from its own OS entropy."""
    import numpy as np

    from dpkme._validation import spawn_streams

    streams = spawn_streams(np.random.default_rng(), 3, fresh=True)
    seqs = [g.bit_generator.seed_seq for g in streams]
    assert len({s.entropy for s in seqs}) == 3 and all(s.spawn_key == () for s in seqs)
    # a seeded demo still replays: children of its seed
    a = spawn_streams(np.random.default_rng(5), 2)
    b = spawn_streams(np.random.default_rng(5), 2)
    assert a[1].random() == b[1].random()
