"""Mixed tables on Dask (issue 27) through the one orchestration core (issue 28): the same release as in memory for
the same seed (marginal block included), the declared schema applied per partition with its cell counts as
owner-only partial sums, a refused cell never in a message, and the in-memory paths sharing the core."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest

pytest.importorskip("dask")
pytest.importorskip("distributed")

import dpkme.distributed as dist
from dpkme.kernels import GaussianKernel
from dpkme.release import algorithm1, algorithm2
from dpkme.release.tabular import release_table
from dpkme.schema import ColumnSpec, TableSchema

SCHEMA = TableSchema([ColumnSpec("age", "integer", lower=18, upper=90),
                      ColumnSpec("income", "continuous", lower=0, upper=200_000, missing="category"),
                      ColumnSpec("region", "categorical", categories=["n", "s", "e", "w"]),
                      ColumnSpec("smoker", "boolean")])
# a small, fast release that still runs the marginal block and its weight re-fit
KW = dict(schema=SCHEMA, epsilon=1.0, delta=1e-6, n_points=20, n_features=200, random_state=3, preset="interactive",
          marginal_share=0.3, solver_options={"refit": {"pool_size": 500, "max_iter": 20}})


def _table(n=1200, seed=0):
    rng = np.random.default_rng(seed)
    df = pd.DataFrame({"age": rng.integers(18, 90, n), "income": rng.gamma(2.0, 20_000.0, n),
                       "region": rng.choice(["n", "s", "e", "w"], n), "smoker": rng.random(n) < 0.3,
                       "notes": "free text"})          # an undeclared column is never read
    df.loc[rng.choice(n, n // 10, replace=False), "income"] = np.nan
    df.loc[rng.choice(n, 7, replace=False), "income"] = 250_000.0   # clipped by the declared bound
    return df


def _same(a, b):
    """The same release up to float64 rounding of the additions in another order (float32 features: the
    partial sums round differently; the weight re-fit carries that to about 1e-7 of a weight)."""
    assert a.release.sigma == b.release.sigma and a.release.n_private == b.release.n_private
    np.testing.assert_allclose(a.points, b.points, rtol=0, atol=1e-9)
    np.testing.assert_allclose(a.weights, b.weights, rtol=0, atol=1e-6)
    ca, cb = a.release.charge, b.release.charge
    assert (ca.mechanism, ca.epsilon, ca.delta, ca.noise_multiplier) == (cb.mechanism, cb.epsilon, cb.delta,
                                                                         cb.noise_multiplier)


@pytest.fixture(scope="module")
def files(tmp_path_factory):
    df = _table()
    d = tmp_path_factory.mktemp("table")
    df.to_parquet(d / "t.parquet", row_group_size=400)
    df.to_csv(d / "t.csv", index=False)
    return df, d, release_table(df, **KW)


@pytest.mark.parametrize("kind", ["pandas", "parquet", "dask-dataframe"])
def test_a_table_released_partition_by_partition_is_the_in_memory_release(files, kind):
    import dask.dataframe as dd

    df, d, ref = files
    data = {"pandas": df, "parquet": d / "t.parquet", "dask-dataframe": dd.from_pandas(df, npartitions=3)}[kind]
    counts = {}
    rel = dist.release_table(data, partition_rows=500, report=counts.update, **KW)
    _same(rel, ref)
    assert ref.release.params["marginals"]["share"] == 0.3 == rel.release.params["marginals"]["share"]
    assert rel.release.params["source"]["origin"] == kind and rel.release.params["n_policy"] == "public"
    assert rel.release.params["table"] == ref.release.params["table"]
    # the owner-only cell counts are the sums of the partitions' and equal the whole table's encode report
    assert counts == SCHEMA.encode_report(df).counts
    assert counts["income"]["missing"] == int(df["income"].isna().sum()) > 0
    assert counts["income"]["clipped_high"] == int((df["income"] > 200_000).sum()) > 0
    assert "clipped_high" not in rel.to_json()                         # never part of the release


def test_a_csv_table_and_algorithm1_give_the_in_memory_release(files):
    df, d, _ = files
    kw = {**KW, "mechanism": "algorithm1", "solver_options": None, "marginal_share": None}
    _same(dist.release_table(str(d / "t.csv"), **kw), release_table(df, **kw))


def test_a_refused_cell_names_its_column_and_partition_never_the_cell():
    df = _table(300)
    df["age"] = df["age"].astype(object)
    df.loc[250, "age"] = "secret-age-4711"
    with pytest.raises(ValueError, match=r"column 'age' of partition 2; the encoder's message is not shown") as info:
        dist.release_table(df, partition_rows=100, **KW)
    assert "4711" not in str(info.value) and "secret" not in str(info.value)
    with pytest.raises(ValueError, match="secret-age-4711"):       # the owner's own in-memory check shows it
        SCHEMA.encode(df)


def test_add_remove_needs_a_declared_size_and_counts_no_rows_before_refusing(monkeypatch):
    def no_count(*a, **k):
        raise AssertionError("rows counted")

    monkeypatch.setattr(dist.release, "count_rows", no_count)
    with pytest.raises(ValueError, match=r"under add-remove the row count .* not read silently"):
        dist.release_table(_table(200), neighbouring="add-remove", **KW)
    rel = dist.release_table(_table(200), neighbouring="add-remove", n_private=250, **KW)   # no count: declared
    assert rel.release.n_private == 250 and rel.release.params["n_policy"] == "declared"


# --------------------------------------------------------------------------- the core the two paths share
def test_the_in_memory_and_distributed_releases_run_one_orchestration(monkeypatch):
    import dpkme.release.random_features as rf
    import dpkme.release.subspace as sub

    seen = []
    for module, name in ((rf, "run_algorithm2"), (sub, "run_algorithm1")):
        original = getattr(module, name)

        def spy(rows, *args, _original=original, _name=name, **kwargs):
            seen.append((_name, type(rows).__name__))
            return _original(rows, *args, **kwargs)

        monkeypatch.setattr(module, name, spy)
    monkeypatch.setattr(dist.release, "run_algorithm2", rf.run_algorithm2)
    monkeypatch.setattr(dist.release, "run_algorithm1", sub.run_algorithm1)
    X = np.random.default_rng(0).uniform(size=(300, 2))
    k = dict(kernel=GaussianKernel(lengthscale=0.5), epsilon=1.0, delta=1e-6, random_state=1)
    algorithm2(X, n_points=5, n_features=100, preset="interactive", **k)
    dist.algorithm2(X, n_points=5, n_features=100, preset="interactive", **k)
    algorithm1(X, n_points=10, q_scale=1.0, **k)
    dist.algorithm1(X, n_points=10, q_scale=1.0, **k)
    assert seen == [("run_algorithm2", "ndarray"), ("run_algorithm2", "function"),
                    ("run_algorithm1", "InMemoryRows"), ("run_algorithm1", "DaskRows")]


@pytest.mark.parametrize("fn", ["algorithm2", "algorithm1"])
def test_the_in_memory_releases_release_the_empty_table_under_add_remove_like_the_distributed_ones(fn):
    # under add/remove the empty table is a neighbour of every one-row table: a refusal would tell them apart
    k = dict(kernel=GaussianKernel(lengthscale=0.5), epsilon=1.0, delta=1e-6, random_state=1,
             neighbouring="add-remove", n_private=50)
    k.update(dict(n_points=5, n_features=100, preset="interactive") if fn == "algorithm2" else
             dict(n_points=10, q_scale=1.0))
    mem = {"algorithm2": algorithm2, "algorithm1": algorithm1}[fn](np.zeros((0, 2)), **k)
    dsk = getattr(dist, fn)(np.zeros((0, 2)), **k)
    assert mem.n_private == dsk.n_private == 50 and np.all(np.isfinite(mem.weights))
    np.testing.assert_allclose(mem.weights, dsk.weights, atol=1e-9)
    with pytest.raises(ValueError, match=r"no rows|at least 1 row"):       # replace-one: N is public, 0 is refused
        {"algorithm2": algorithm2, "algorithm1": algorithm1}[fn](np.zeros((0, 2)), **{**k, "neighbouring":
                                                                                      "replace-one", "n_private": None})


# --------------------------------------------------------------------------- a real cluster and the CLI
@pytest.fixture(scope="module")
def cluster():
    from distributed import Client, LocalCluster

    with LocalCluster(n_workers=2, threads_per_worker=1, processes=True, dashboard_address=None) as lc, \
            Client(lc, set_as_default=False) as client:
        yield client


@pytest.mark.slow
def test_a_two_process_local_cluster_and_the_cli_give_the_in_memory_table_release(files, cluster, tmp_path):
    from dpkme.cli import main

    _df, d, ref = files
    _same(dist.release_table(d / "t.parquet", client=cluster, **KW), ref)
    schema_path = tmp_path / "s.json"
    schema_path.write_text(SCHEMA.to_json())
    args = ["release-table", str(d / "t.parquet"), "--schema", str(schema_path), "--epsilon", "1", "--delta", "1e-6",
            "--seed", "3", "--points", "20", "--features", "200", "--preset", "interactive", "--marginal-share", "0",
            "--quiet"]
    assert main([*args, "--out", str(tmp_path / "mem.csv")]) == 0
    assert main([*args, "--out", str(tmp_path / "dask.csv"), "--scheduler", cluster.scheduler.address]) == 0
    a, b = pd.read_csv(tmp_path / "mem.csv"), pd.read_csv(tmp_path / "dask.csv")
    pd.testing.assert_frame_equal(a.drop(columns="weight"), b.drop(columns="weight"))
    np.testing.assert_allclose(a["weight"], b["weight"], atol=1e-6)


def test_the_cli_takes_workers_or_a_scheduler_not_both(tmp_path, capsys):
    from dpkme.cli import build_parser, main

    args = build_parser().parse_args(["release-table", "t.parquet", "--schema", "s.json", "--epsilon", "1",
                                      "--delta", "1e-6", "--workers", "2"])
    assert args.workers == 2 and args.scheduler is None
    schema_path = tmp_path / "s.json"
    schema_path.write_text(SCHEMA.to_json())
    _table(50).to_parquet(tmp_path / "t.parquet")
    assert main(["release-table", str(tmp_path / "t.parquet"), "--schema", str(schema_path), "--epsilon", "1",
                 "--delta", "1e-6", "--workers", "2", "--scheduler", "tcp://127.0.0.1:1", "--quiet"]) == 2
    assert "give --scheduler ADDRESS or --workers K, not both" in capsys.readouterr().err


def test_the_partitions_of_an_in_memory_table_have_random_task_keys():
    # a task key derived from the rows (Dask's default hash) is a fingerprint of the private table, shown to
    # every client of a shared scheduler; only the public schema and feature maps are hashed into keys
    df = _table(100)
    a, b = (dist.open_table_source(df, schema=SCHEMA, partition_rows=40) for _ in range(2))
    assert a.n_partitions == 3 and a.dim == SCHEMA.dim and a.public_record()["encoding"] == "declared table schema"
    assert not {p.key for p in a.partitions} & {p.key for p in b.partitions}
