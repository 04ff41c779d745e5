"""DP red-team review of session 31's adaptive-release library changes (streamed chunks with a declared N, the
JAX persistent compilation cache): each test is an attack that fails if the property it names is broken.

* The charge is fixed before any private row is read, also for a stream of chunks (the first row read comes
  after the charge is computed).
* A stream is read once: every row reaches the private pass exactly once, and the iterator is not re-read.
* Under add-remove a stream of N + 1 rows (or none) with N declared releases exactly what a stream of N rows
  would with the same oracle answers (replayed): nothing counts the rows, and no count of them is published (the
  JSON equals the N-row stream's).
* The persistent compilation cache (``DPKME_JAX_CACHE``) holds nothing derived from the private rows or the
  noise: no private value, no true answer, no noisy measurement (checked on the bytes of every cache file written
  by a seeded release in a fresh process, with every compilation cached).
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import textwrap
from pathlib import Path

import numpy as np
import pandas as pd
import pytest

from dpkme.release import adaptive
from dpkme.release.adaptive import adaptive_release
from dpkme.release.fit import RelaxedDomain
from tests.support.adaptive import FAST, _schema, _StubFit, _table

REPO = Path(__file__).resolve().parents[2]


@pytest.fixture()
def stub(monkeypatch):
    monkeypatch.setattr(adaptive, "RelaxedFit", _StubFit)
    monkeypatch.setattr(_StubFit, "mode", "random")
    return _StubFit


def _chunks(df: pd.DataFrame, size: int, log: list | None = None):
    for start in range(0, len(df), size):
        if log is not None:
            log.append(("chunk", start))
        yield df.iloc[start:start + size]


@pytest.mark.parametrize("neighbouring", ["replace-one", "add-remove"])
def test_the_charge_is_fixed_before_any_streamed_row_is_read(stub, monkeypatch, neighbouring):
    events: list = []
    real_charge = adaptive.adaptive_release_charge
    real_states = RelaxedDomain.hard_states

    def charge(**kw):
        events.append(("charge", kw["n_private"]))
        return real_charge(**kw)

    def states(self, Z):
        events.append(("read", int(np.asarray(Z).shape[0])))
        return real_states(self, Z)

    monkeypatch.setattr(adaptive, "adaptive_release_charge", charge)
    monkeypatch.setattr(RelaxedDomain, "hard_states", states)
    df = _table(40, 1)
    adaptive_release(_chunks(df, 7, events), schema=_schema(), epsilon=1.0, delta=1e-6, n_private=40,
                     neighbouring=neighbouring, random_state=0, **FAST)
    assert events[0] == ("charge", 40), events[:3]           # before the first chunk is even asked for
    reads = [e for e in events if e[0] == "read"]
    assert sum(n for _, n in reads) == 40                    # every row once
    assert [e for e in events if e[0] == "chunk"] == [("chunk", s) for s in range(0, 40, 7)]   # one pass


def test_a_stream_is_read_once_and_not_rewound(stub):
    class Once:
        """An iterator of chunks that refuses a second pass (a file read once, a network stream)."""

        def __init__(self, df):
            self.df, self.used = df, False

        def __iter__(self):
            return self

        def __next__(self):
            if self.used:
                raise StopIteration
            self.used = True
            return self.df

    rel = adaptive_release(Once(_table(30, 2)), schema=_schema(), epsilon=1.0, delta=1e-6, n_private=30,
                           random_state=0, **FAST)
    assert rel.n_private == 30


@pytest.mark.parametrize("other_rows", [31, 0])
def test_add_remove_streams_release_through_the_oracle_only_and_never_count_rows(stub, monkeypatch, other_rows):
    # neighbours under add-remove with N declared: N rows vs N + 1 rows (and the empty stream, a neighbour chain's
    # end): with the oracle's answers replayed, the whole JSON and the rows are identical, and N + 1 appears nowhere
    N = 30
    record: list = []
    replay: list = []

    class Rec(adaptive._Oracle):
        def select(self, *a):
            k = super().select(*a)
            record.append(k)
            return k

        def measure(self, *a):
            y = super().measure(*a)
            record.append(y)
            return y

    class Rep(adaptive._Oracle):
        def select(self, *a):
            return replay.pop(0)

        def measure(self, *a):
            return replay.pop(0)

    kw = dict(schema=_schema(), epsilon=1.5, delta=1e-6, random_state=4, neighbouring="add-remove", n_private=N,
              **FAST)
    monkeypatch.setattr(adaptive, "_Oracle", Rec)
    r1 = adaptive_release(_chunks(_table(N, 1), 8), **kw)
    replay[:] = record
    monkeypatch.setattr(adaptive, "_Oracle", Rep)
    r2 = adaptive_release(_chunks(_table(other_rows, 99), 8), **kw)
    assert not replay
    assert r1.to_json() == r2.to_json()
    pd.testing.assert_frame_equal(r1.rows, r2.rows)
    meta = r2.metadata()
    assert meta["n_private"] == N and r2.charge.details["n_private"] == N


_CACHE_SCRIPT = textwrap.dedent(r"""
    import json, sys
    import numpy as np, pandas as pd
    from dpkme.release import adaptive
    from dpkme.schema import ColumnSpec, TableSchema

    SENTINEL = 7.123456789012345                 # every private x: its bytes must never reach the cache
    schema = TableSchema([ColumnSpec("x", "continuous", lower=0, upper=10),
                          ColumnSpec("c", "categorical", categories=["a", "b", "c"]),
                          ColumnSpec("y", "continuous", lower=-1, upper=1)])
    n = 60
    df = pd.DataFrame({"x": np.full(n, SENTINEL), "c": ["a", "b", "c"] * (n // 3),
                       "y": np.linspace(-0.987654321, 0.876543219, n)})
    trues, measured = [], []

    class Spy(adaptive._Oracle):
        def __init__(self, true, rng):
            trues.extend(np.array(t) for t in true)
            super().__init__(true, rng)

        def measure(self, index, sigma):
            y = super().measure(index, sigma)
            measured.append(np.array(y))
            return y

    adaptive._Oracle = Spy
    rel = adaptive.adaptive_release(df, schema=schema, epsilon=2.0, delta=1e-6, random_state=123456789,
                                    synthetic_rows=24, rounds=5, round_steps=2, final_steps=2)
    import jax, jax.numpy as jnp
    CANARY = np.random.default_rng(7).random(40).astype(np.float32)      # the scan's positive control
    jax.jit(lambda a: jnp.sin(a) * CANARY)(jnp.ones(40)).block_until_ready()
    out = {"canary": CANARY.tolist(), "sentinel": SENTINEL, "ys": df["y"].tolist(),
           "trues": [t.tolist() for t in trues if t.size >= 3],
           "measured": [m.tolist() for m in measured if m.size >= 3]}
    json.dump(out, open(sys.argv[1], "w"))
""")


def _entry(raw: bytes) -> bytes:
    """A cache file's executable as JAX wrote it (compressed with zstd or zlib), and the raw bytes too."""
    try:
        from jax._src.compilation_cache import decompress_executable

        return raw + decompress_executable(raw)
    except Exception:                  # another JAX version or format: fall back to zlib, then the raw bytes
        import zlib

        try:
            return raw + zlib.decompress(raw)
        except zlib.error:
            return raw


def test_the_persistent_compilation_cache_holds_nothing_from_the_private_rows_or_the_noise(tmp_path):
    cache = tmp_path / "jax-cache"
    env = {**os.environ, "DPKME_JAX_CACHE": str(cache), "PYTHONPATH": str(REPO),
           "JAX_PERSISTENT_CACHE_MIN_COMPILE_TIME_SECS": "0", "JAX_PERSISTENT_CACHE_MIN_ENTRY_SIZE_BYTES": "0"}
    env.pop("JAX_COMPILATION_CACHE_DIR", None)
    facts = tmp_path / "facts.json"
    script = tmp_path / "release.py"
    script.write_text(_CACHE_SCRIPT)
    subprocess.run([sys.executable, str(script), str(facts)], env=env, check=True, cwd=tmp_path, timeout=900)
    files = [p for p in cache.rglob("*") if p.is_file()]
    assert files, "the release cached no compilation: the check below would be vacuous"
    blob = b"".join(_entry(p.read_bytes()) for p in files)
    f = json.loads(facts.read_text())
    assert f["trues"] and f["measured"]
    # positive control: a constant closed over by a jitted function IS in the (decompressed) cache, so the scan
    # below would see private bytes baked into the fit's compiled program
    assert np.asarray(f["canary"], dtype=np.float32).tobytes() in blob
    patterns = {"a private value": [np.float64(f["sentinel"]).tobytes()]}
    patterns["a private value"] += [np.float64(v).tobytes() for v in f["ys"] if abs(v) > 0.01]
    for name, vectors in (("a true answer", f["trues"]), ("a noisy measurement", f["measured"])):
        patterns[name] = [np.asarray(v, dtype=dt).tobytes() for v in vectors for dt in (np.float64, np.float32)]
    for name, pats in patterns.items():
        hits = [p for p in pats if p in blob]
        assert not hits, f"{name} is in the persistent compilation cache ({len(hits)} patterns)"
