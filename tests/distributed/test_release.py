"""dpkme.distributed: out-of-core / distributed releases equal the in-memory ones, check the declared box,
never read the data after the noise, and make the row count's policy explicit (issue 18, parts 1-2)."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest

pytest.importorskip("dask")
pytest.importorskip("distributed")

import dask
import dask.array as da

import dpkme.distributed as dist
from dpkme.kernels import GaussianKernel
from dpkme.release import algorithm1, algorithm2

K = GaussianKernel(lengthscale=1.0)
COLS = ["a", "b", "c"]
BOX = (-4.0, 4.0)


def _data(n=3000, seed=0):
    return np.clip(np.random.default_rng(seed).normal(size=(n, 3)), *BOX)


def _frame(X):
    df = pd.DataFrame(X, columns=COLS)
    df["label"] = "text"           # an undeclared, non-numeric column is never read
    return df


def _alg2_kwargs(**kw):
    return dict(kernel=K, epsilon=1.0, delta=1e-6, n_points=8, n_features=200, random_state=7,
                preset="interactive", **kw)


def _alg1_kwargs(**kw):
    return dict(kernel=K, epsilon=1.0, delta=1e-6, n_points=40, q_scale=2.0, random_state=7, basis="auto", **kw)


def _same(a, b, rtol=1e-9):
    """Same release up to float64 rounding of the additions (the sums are added in another order)."""
    assert a.sigma == pytest.approx(b.sigma, rel=1e-12)
    assert a.n_private == b.n_private
    np.testing.assert_allclose(a.points, b.points, rtol=rtol, atol=1e-9)
    np.testing.assert_allclose(a.weights, b.weights, rtol=rtol, atol=1e-9)


@pytest.fixture(scope="module")
def files(tmp_path_factory):
    X = _data()
    d = tmp_path_factory.mktemp("dist")
    _frame(X).to_parquet(d / "data.parquet", row_group_size=700)
    _frame(X).to_csv(d / "data.csv", index=False)
    return X, d


# --------------------------------------------------------------------------- identical releases
@pytest.mark.parametrize("kind", ["numpy", "pandas", "dask", "parquet", "csv"])
def test_algorithm2_equals_the_in_memory_release(files, kind):
    X, d = files
    data = {"numpy": lambda: dist.open_source(X, partition_rows=500), "pandas": lambda: _frame(X),
            "dask": lambda: da.from_array(X, chunks=(900, 3)), "parquet": lambda: d / "data.parquet",
            "csv": lambda: str(d / "data.csv")}[kind]()
    cols = COLS if kind in ("pandas", "parquet", "csv") else None
    ref = algorithm2(X, **_alg2_kwargs())
    if kind == "numpy":
        rel = dist.algorithm2(data, **_alg2_kwargs())
    else:
        rel = dist.algorithm2(data, columns=cols, bounds=BOX, **_alg2_kwargs())
    _same(rel, ref)
    assert rel.params["n_policy"] == "public" and rel.params["source"]["origin"] == kind.replace("dask", "dask-array")


@pytest.mark.parametrize("kind", ["numpy", "parquet", "csv"])
def test_algorithm1_equals_the_in_memory_release_with_the_box_as_its_domain(files, kind):
    X, d = files
    data = {"numpy": X, "parquet": d / "data.parquet", "csv": d / "data.csv"}[kind]
    ref = algorithm1(X, domain=BOX, **_alg1_kwargs())
    rel = dist.algorithm1(data, columns=None if kind == "numpy" else COLS, bounds=BOX, **_alg1_kwargs())
    _same(rel, ref)
    assert rel.sensitivity == ref.sensitivity and rel.params["domain"] == ref.params["domain"]


def test_partial_sums_equal_the_in_memory_statistics(files):
    from dpkme.clustering._features import FeatureBlocks, lloyd_pass
    from dpkme.kernels.random_features import RandomFourierFeatures

    X, d = files
    rff = RandomFourierFeatures(K, n_components=64, random_state=1).fit(3)
    s = dist.feature_sums(d / "data.parquet", rff, columns=COLS)
    assert s.count == X.shape[0] and s.n_partitions == 5
    np.testing.assert_allclose(s.total / s.count, rff.mean_embedding(X), rtol=1e-12, atol=1e-14)
    Z = np.random.default_rng(2).normal(size=(17, 3))
    r = dist.kernel_row_sums(X, Z, kernel=K)
    np.testing.assert_allclose(r.total / r.count, K.row_means(Z, X), rtol=1e-12, atol=1e-15)
    fb = FeatureBlocks(rff)
    centres = rff.transform(Z[:4])
    counts, sums, n = dist.cluster_sums(dist.open_source(X, partition_rows=600), fb, centres)
    ref = lloyd_pass(fb, X, centres, sums=True)
    assert n == X.shape[0]
    np.testing.assert_array_equal(counts, ref["counts"])
    np.testing.assert_allclose(sums, ref["sums"], rtol=1e-12, atol=1e-12)


# --------------------------------------------------------------------------- a real cluster
@pytest.fixture(scope="module")
def cluster():
    from distributed import Client, LocalCluster

    with LocalCluster(n_workers=2, threads_per_worker=1, processes=True, dashboard_address=None) as lc, \
            Client(lc, set_as_default=False) as client:   # other tests keep the local scheduler
        yield client


@pytest.mark.slow
def test_a_local_cluster_of_two_processes_gives_the_in_memory_releases(files, cluster):
    X, d = files
    seen = []
    rel2 = dist.algorithm2(d / "data.parquet", columns=COLS, bounds=BOX, client=cluster,
                           progress=lambda f, m: seen.append(f), **_alg2_kwargs())
    _same(rel2, algorithm2(X, **_alg2_kwargs()))
    assert seen == sorted(seen) and seen[-1] == 1.0 and len(seen) >= 3
    rel1 = dist.algorithm1(str(d / "data.csv"), columns=COLS, bounds=BOX, client=cluster.scheduler.address,
                           **_alg1_kwargs())                        # a scheduler address: a client for the call
    _same(rel1, algorithm1(X, domain=BOX, **_alg1_kwargs()))
    with pytest.raises(ValueError, match=r"column 'b'.*above its upper"):   # the check runs on the workers
        dist.algorithm2(d / "data.parquet", columns=COLS, bounds=([-5, -5, -5], [5, 1, 5]), client=cluster,
                        **_alg2_kwargs())


# --------------------------------------------------------------------------- the declared box
def test_a_value_outside_the_box_names_the_column_not_the_value():
    X = _data(200)
    X[150, 2] = 123.456
    with pytest.raises(ValueError, match=r"column 'x3': 1 row\(s\) of partition 1 lie above") as info:
        dist.algorithm2(dist.open_source(X, bounds=BOX, partition_rows=100), **_alg2_kwargs())
    assert "123" not in str(info.value)
    X[10, 0] = np.nan
    with pytest.raises(ValueError, match="column 'x1' has 1 missing or non-finite"):
        dist.feature_sums(dist.open_source(X, partition_rows=100), _rff())


def test_clip_is_on_request_only_and_recorded():
    X = _data(300)
    X[5] = [9.0, -9.0, 0.0]
    rel = dist.algorithm1(X, bounds=BOX, clip=True, **_alg1_kwargs())
    ref = algorithm1(X, domain=BOX, clip=True, **_alg1_kwargs())
    _same(rel, ref)
    assert rel.params["clip"] is True and rel.params["source"]["clip"] is True
    with pytest.raises(ValueError, match="clip=True needs declared bounds"):
        dist.open_source(X, clip=True)


def test_declared_columns_and_bad_inputs_are_refused(files, tmp_path):
    X, d = files
    with pytest.raises(ValueError, match=r"no column\(s\) \['z'\]"):
        dist.open_source(d / "data.parquet", columns=["a", "z"])
    with pytest.raises(ValueError, match="column 'label' is not numeric"):
        dist.feature_sums(_frame(X), _rff(), columns=["a", "label", "b"])
    with pytest.raises(ValueError, match="not found"):
        dist.open_source(tmp_path / "missing.parquet")
    with pytest.raises(ValueError, match="client must be None"):
        dist.kernel_row_sums(X, X[:3], kernel=K, client=42)


def test_a_reader_error_never_quotes_a_cell(tmp_path):
    X = _data(400)
    df = _frame(X).astype({"b": object})
    df.loc[250, "b"] = "secret-cell-42"
    df.to_csv(tmp_path / "d.csv", index=False)
    for run in (lambda: dist.feature_sums(tmp_path / "d.csv", _rff(), columns=COLS),
                lambda: dist.open_source(tmp_path / "d.csv", columns=COLS).to_dask_array()):
        with pytest.raises(ValueError, match="reading the data failed") as info:
            run()
        assert "secret" not in str(info.value) and "42" not in str(info.value)


def _rff():
    from dpkme.kernels.random_features import RandomFourierFeatures

    return RandomFourierFeatures(K, n_components=20, random_state=0).fit(3)


# --------------------------------------------------------------------------- the data is not read after the noise
class _Locked(Exception):
    pass


def test_post_processing_never_reads_the_data(monkeypatch):
    import dpkme.privacy.calibration as cal

    X = _data(1200)
    state = {"locked": False, "reads": 0}

    def read(i):
        if state["locked"]:
            raise _Locked("a partition was read after the noise was added")
        state["reads"] += 1
        return X[i * 300:(i + 1) * 300]

    arr = da.concatenate([da.from_delayed(dask.delayed(read, pure=False)(i), shape=(300, 3), dtype=float)
                          for i in range(4)])
    original = cal.add_gaussian_noise

    def noise_then_lock(*args, **kwargs):
        out = original(*args, **kwargs)
        state["locked"] = True
        return out

    monkeypatch.setattr(cal, "add_gaussian_noise", noise_then_lock)
    for fn, kw in ((dist.algorithm2, _alg2_kwargs()), (dist.algorithm1, _alg1_kwargs())):
        state.update(locked=False, reads=0)
        rel = fn(dist.open_source(arr, bounds=BOX), **kw)
        assert state["locked"] and state["reads"] == 4 and np.all(np.isfinite(rel.weights))
        with pytest.raises(_Locked):                      # the lock is real: a read now fails
            arr.sum().compute()


# --------------------------------------------------------------------------- the row count's policy
def test_n_policy_public_declared_and_refusals():
    X = _data(500)
    with pytest.raises(ValueError, match=r"under add-remove the row count .* not read silently"):
        dist.algorithm2(X, neighbouring="add-remove", **_alg2_kwargs())
    with pytest.raises(ValueError, match="n_private='private' is for add-remove"):
        dist.algorithm2(X, n_private="private", **_alg2_kwargs())
    with pytest.raises(ValueError, match="n_private"):                 # replace-one: a declared N must be the count
        dist.algorithm2(X, n_private=499, **_alg2_kwargs())
    rel = dist.algorithm2(X, neighbouring="add-remove", n_private=1000, **_alg2_kwargs())
    _same(rel, algorithm2(X, neighbouring="add-remove", n_private=1000, **_alg2_kwargs()))
    assert rel.params["n_policy"] == "declared" and rel.n_private == 1000
    assert dist.algorithm1(X, **_alg1_kwargs()).params["n_policy"] == "public"


def test_private_count_spends_a_declared_share_and_reports_the_composed_charge():
    from dpkme.privacy.accounting import basic_composition

    X = _data(2000)
    rel = dist.algorithm2(X, neighbouring="add-remove", n_private="private", count_share=0.2, **_alg2_kwargs())
    assert rel.params["n_policy"] == "private"
    assert rel.params["count_epsilon"] == pytest.approx(0.2) and rel.params["sum_epsilon"] == pytest.approx(0.8)
    assert abs(rel.n_private - 2000) < 200                             # Laplace(1/0.2): within 40 scales
    charge = rel.charge
    assert charge.mechanism == "approx-dp" and basic_composition([charge]) == (1.0, 1e-6)
    assert rel.epsilon == 1.0 and rel.metadata()["differentially_private"] is False   # seeded demo
    rel1 = dist.algorithm1(X, neighbouring="add-remove", n_private="private", **_alg1_kwargs())
    assert rel1.params["count_epsilon"] == pytest.approx(0.1)
    # the sum's noise is calibrated at (0.9 eps, delta) for sensitivity sqrt(a) = 1, then divided by N~
    from dpkme.privacy.calibration import calibrate_gaussian

    sigma_sum = calibrate_gaussian(epsilon=0.9, delta=1e-6, sensitivity=1.0).sigma
    assert rel1.sigma * max(rel1.n_private, 1) == pytest.approx(sigma_sum, rel=0.01)
    with pytest.raises(ValueError, match="count_share must be a number in"):
        dist.algorithm1(X, neighbouring="add-remove", n_private="private", count_share=1.5, **_alg1_kwargs())


# --------------------------------------------------------------------------- review (issue 18): attacks
def _csv_with_secret_cells(path, n=3000):
    df = _frame(_data(n)).astype({"b": object})
    df.loc[5, "b"] = "secret-cell-987654"          # inside the sample a reader parses when the file is opened
    df.loc[n - 100, "b"] = "secret-cell-987655"    # in a later block
    df.to_csv(path, index=False)
    return path


def test_a_csv_cell_reaches_no_message_of_any_task_nor_of_opening(tmp_path):
    # the attack: opening a CSV parsed a sample on the client (its error quoted the cell), and a Dask worker
    # logs the exception of every failed task ("Compute Failed"), so every task that parses the bytes must
    # fail with a message that quotes nothing
    path = _csv_with_secret_cells(tmp_path / "d.csv")
    src = dist.open_source(path, columns=COLS, csv_blocksize=20_000)   # opening parses the header only
    assert src.n_partitions > 3
    failures = 0
    for part in src.partitions:                       # each partition's own tasks, as a worker runs them
        try:
            dask.compute(part, scheduler="sync")
        except Exception as exc:                      # any failure: its message is what a log shows
            failures += 1
            assert "secret" not in str(exc) and "98765" not in str(exc), str(exc)
            assert isinstance(exc, ValueError)
    assert failures == 2
    with pytest.raises(ValueError, match=r"not shown.*partition \d+|partition \d+ of the CSV\); .*not shown") as info:
        dist.feature_sums(src, _rff())                # the first block to fail, whichever thread ran it
    assert "98765" not in str(info.value)


def test_csv_partitions_read_every_row_once_with_and_without_blocks(tmp_path, files):
    X, d = files
    df = _frame(X)
    df.to_csv(tmp_path / "d.csv.gz", index=False)
    (tmp_path / "d.tsv").write_text(df.to_csv(index=False, sep="\t"))
    for path, kw in ((d / "data.csv", {"csv_blocksize": 7_000}), (tmp_path / "d.csv.gz", {}),
                     (tmp_path / "d.tsv", {"csv_blocksize": 5_000})):
        src = dist.open_source(path, columns=["c", "a"], **kw)
        got = np.vstack([dist.sources.load_partition(p, i, columns=src.columns)
                         for i, p in enumerate(dask.compute(*src.partitions, scheduler="sync"))])
        np.testing.assert_array_equal(got, X[:, [2, 0]])


@pytest.mark.slow
def test_a_worker_logs_no_csv_cell(tmp_path, cluster):
    path = _csv_with_secret_cells(tmp_path / "d.csv", n=6000)
    with pytest.raises(ValueError, match="not shown"):
        dist.feature_sums(dist.open_source(path, columns=COLS, csv_blocksize=30_000), _rff(), client=cluster)
    logs = cluster.get_worker_logs()
    assert "98765" not in str(logs)


@pytest.mark.parametrize("n_private", [50, "private"])
def test_an_empty_table_is_released_under_add_remove(tmp_path, n_private):
    # the attack: under add/remove the empty table is a neighbour of every one-row table; refusing it (an
    # error instead of a release) tells the two apart with certainty
    pd.DataFrame({c: np.zeros(0) for c in COLS}).to_parquet(tmp_path / "e.parquet")
    for fn, kw in ((dist.algorithm2, _alg2_kwargs()), (dist.algorithm1, _alg1_kwargs())):
        for data in (tmp_path / "e.parquet", np.zeros((0, 3))):
            rel = fn(data, columns=COLS if not isinstance(data, np.ndarray) else None, bounds=BOX,
                     neighbouring="add-remove", n_private=n_private, **kw)
            assert rel.n_private >= 1 and np.all(np.isfinite(rel.weights))
    with pytest.raises(ValueError, match="no rows"):                 # replace-one: N is public, 0 is refused
        dist.algorithm2(tmp_path / "e.parquet", columns=COLS, bounds=BOX, **_alg2_kwargs())


def test_the_count_and_sum_shares_never_exceed_epsilon_in_floating_point():
    from dpkme.release.core import split_epsilon as _split_epsilon

    rng = np.random.default_rng(0)
    for eps, share in zip(rng.uniform(0.01, 10, 2000), rng.uniform(0.001, 0.999, 2000)):
        eps_n, eps_s, scale = _split_epsilon(float(eps), float(share))
        assert eps_n > 0 and eps_s > 0 and eps_n + eps_s <= eps
        assert scale * eps_n >= 1.0                                   # Laplace scale rounded up: 1/eps_n or more


def test_a_publishable_subset_is_checked_against_the_public_size_not_the_count():
    # the attack: under add/remove comparing M with the true count refuses or not depending on the count
    X, Z = _data(30), _data(40, seed=1)
    kw = dict(kernel=K, epsilon=1.0, delta=1e-6, random_state=7, points_are_sample=True, neighbouring="add-remove")
    rel = dist.algorithm1(X, Z, n_private=100, **kw)                 # 40 <= the declared 100: released
    assert rel.n_private == 100
    with pytest.raises(ValueError, match=r"M=40.*N=35"):
        dist.algorithm1(_data(300), Z, n_private=35, **kw)         # refused by the declared N, whatever the count


def test_the_noise_is_drawn_once_per_release(monkeypatch):
    import dpkme.privacy.calibration as cal

    calls = {"gauss": 0, "laplace": 0}
    gauss, lap = cal.add_gaussian_noise, cal.laplace_noise

    def count(name, fn):
        def wrapped(*args, **kwargs):
            calls[name] += 1
            return fn(*args, **kwargs)
        return wrapped

    monkeypatch.setattr(cal, "add_gaussian_noise", count("gauss", gauss))
    monkeypatch.setattr(cal, "laplace_noise", count("laplace", lap))
    X = dist.open_source(_data(1000), bounds=BOX, partition_rows=300)     # 4 partitions, noised once
    for fn, kw in ((dist.algorithm2, _alg2_kwargs()), (dist.algorithm1, _alg1_kwargs())):
        for extra, n_lap in (({}, 0), ({"neighbouring": "add-remove", "n_private": "private"}, 1)):
            calls.update(gauss=0, laplace=0)
            fn(X, **kw, **extra)
            assert calls == {"gauss": 1, "laplace": n_lap}


def test_task_keys_are_no_fingerprint_of_in_memory_rows():
    # the attack: Dask names a task by a hash of its inputs; for in-memory rows that is a hash of the private
    # data, which the scheduler shows to every client of a shared cluster and a worker writes into its log
    # ("Compute Failed  Key: ..."): knowing every row but one, a guess of the last row is confirmed by
    # recomputing the key. The keys must be random, not a function of the rows.
    X = _data(500)
    for make in (lambda: dist.open_source(X, partition_rows=200), lambda: dist.open_source(_frame(X), columns=COLS)):
        first, second = ({str(p.key) for p in make().partitions} for _ in range(2))
        assert not first & second


def test_a_csv_line_with_more_or_fewer_fields_than_the_header_is_refused(tmp_path):
    # a line with an extra field was read silently with its fields shifted (the parser drops what usecols
    # does not name): one row would not be the row the owner wrote
    lines = ["a,b,c,label"] + [f"{i % 3 / 10},{i % 5 / 10},0.5,x" for i in range(2000)]
    for bad in ("0.1,0.2,0.3,x,EXTRA-987654", "0.1,0.2"):
        rows = list(lines)
        rows[1500] = bad
        (tmp_path / "d.csv").write_text("\n".join(rows) + "\n")
        with pytest.raises(ValueError, match="every line has the header's fields") as info:
            dist.feature_sums(dist.open_source(tmp_path / "d.csv", columns=COLS, csv_blocksize=5_000), _rff())
        assert "987654" not in str(info.value)
