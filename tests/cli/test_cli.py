"""``python -m dpkme``: the stable command-line interface other tools call."""

import json
import subprocess
import sys
from pathlib import Path

import numpy as np
import pandas as pd
import pytest

from dpkme.privacy.calibration import calibrate_gaussian

ROOT = Path(__file__).resolve().parents[2]


def run(*args):
    return subprocess.run([sys.executable, "-m", "dpkme", *args], cwd=ROOT, capture_output=True, text=True,
                          timeout=300)


@pytest.mark.parametrize("method", ["analytic", "classic"])
def test_sigma_last_line_is_the_number(method):
    out = run("sigma", "--epsilon", "0.5", "--delta", "1e-6", "--sensitivity", "2e-5", "--calibration", method)
    assert out.returncode == 0, out.stderr
    value = float(out.stdout.strip().splitlines()[-1])
    assert value == calibrate_gaussian(epsilon=0.5, delta=1e-6, sensitivity=2e-5, method=method).sigma


def test_sigma_refuses_invalid_and_failing_calibrations():
    bad = run("sigma", "--epsilon", "0", "--delta", "1e-6", "--sensitivity", "1")
    assert bad.returncode == 2 and "epsilon" in bad.stderr
    fails = run("sigma", "--epsilon", "10", "--delta", "1e-5", "--sensitivity", "1", "--calibration", "classic")
    assert fails.returncode == 2 and "true delta=2.27e-05" in fails.stderr


def test_reproduce_fig1_writes_the_json_contract(tmp_path):
    from dpkme.datasets import paper_mixture

    data = tmp_path / "mix.npz"
    np.savez(data, X_private=paper_mixture(2000, 2, random_state=1))
    out = tmp_path / "f1.json"
    res = run("reproduce", "fig1", "--data", str(data), "--out", str(out), "--max-m", "200", "--quiet")
    assert res.returncode == 0, res.stderr
    r = json.loads(out.read_text())
    for key in ("M", "epsilons", "delta", "baseline", "projection", "alg1", "seconds"):
        assert key in r
    assert r["epsilons"] == [0.01, 0.1, 1.0] and r["delta"] == 1e-6 and r["M"][-1] == 200
    auto = tmp_path / "f1a.json"
    res = run("reproduce", "fig1", "--data", str(data), "--out", str(auto), "--max-m", "50", "--basis", "auto",
              "--calibration", "analytic", "--sensitivity", "tight", "--epsilons", "0.5", "--quiet")
    assert res.returncode == 0, res.stderr
    assert json.loads(auto.read_text())["basis"] == "auto"


def test_reproduce_reports_missing_data_cleanly(tmp_path):
    res = run("reproduce", "fig1", "--data", str(tmp_path / "nope.npz"), "--out", str(tmp_path / "o.json"))
    assert res.returncode == 2 and "not found" in res.stderr and "Traceback" not in res.stderr


# --------------------------------------------------------------------------- mixed tables: schema and release-table
def _penguins():
    from dpkme.datasets import load_sample

    df, info = load_sample("penguins")
    return df, str(info.path), str(info.schema_path)


def _call(capsys, *args):
    """``main(argv)`` in-process: (exit status, stdout, stderr)."""
    from dpkme.cli import main

    code = main(list(args))
    out = capsys.readouterr()
    return code, out.out, out.err


def test_schema_suggest_warns_when_it_reads_the_private_rows_and_the_json_records_it(tmp_path, capsys):
    from dpkme.schema import TableSchema

    df, table, _ = _penguins()
    code, out, err = _call(capsys, "schema", "suggest", table)
    assert code == 0, err
    assert "WARNING" in err and "PRIVATE ROWS" in err and "data_dependent" in err
    schema = TableSchema.from_json(out)                      # stdout is the JSON alone
    assert set(schema.data_dependent) == set(df.columns)
    assert schema["species"].categories == ("Adelie", "Chinstrap", "Gentoo")
    # from public rows (here: a public sample with the same columns): no warning, nothing flagged, written to --out
    public = tmp_path / "public.csv"
    df.sample(40, random_state=0).to_csv(public, index=False)
    dest = tmp_path / "schema.json"
    code, out, err = _call(capsys, "schema", "suggest", table, "--public", str(public), "--out", str(dest))
    assert code == 0, err
    assert out == "" and "WARNING" not in err and "PRIVATE" not in err
    assert not TableSchema.from_json(dest.read_text()).data_dependent
    assert sorted(p.name for p in tmp_path.iterdir()) == ["public.csv", "schema.json"]


def test_schema_check_prints_the_owner_only_report_and_refuses_unknown_categories(tmp_path, capsys):
    df, table, schema = _penguins()
    code, out, err = _call(capsys, "schema", "check", table, "--schema", schema)
    assert code == 0, err
    assert out.startswith("OWNER ONLY - NOT FOR PUBLICATION")
    assert '"sex": 11 missing (of 344 rows)' in out and "OK: the schema accepts the table" in out
    # an undeclared category in a column with missing="error" (Parquet input): counted, then refused in one line
    bad = df.copy()
    bad.loc[5, "species"] = "Emperor"
    path = tmp_path / "bad.parquet"
    bad.to_parquet(path)
    code, out, err = _call(capsys, "schema", "check", str(path), "--schema", schema)
    assert code == 2 and "OK:" not in out
    lines = err.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith("error: ") and '"species"' in lines[0] and "'Emperor'" in lines[0]
    species = [line for line in out.splitlines() if line.startswith("species")]
    assert species and species[0].split()[1:3] == ["0", "1"]       # missing 0, unknown 1
    # a malformed schema: a categorical column without its category list
    broken = tmp_path / "broken.json"
    broken.write_text(json.dumps({"format": "dpkme.table_schema", "version": 1,
                                  "columns": [{"name": "species", "kind": "categorical"}]}))
    res = run("schema", "check", table, "--schema", str(broken))
    assert res.returncode == 2 and "Traceback" not in res.stderr
    assert res.stderr.count("\n") == 1 and "broken.json" in res.stderr and '"species"' in res.stderr


def test_release_table_writes_the_release_its_metadata_without_a_seed_and_synthetic_rows(tmp_path):
    from dpkme.datasets import load_schema

    _, table, schema_path = _penguins()
    schema = load_schema("penguins")
    out = tmp_path / "release.csv"
    res = run("release-table", table, "--schema", schema_path, "--epsilon", "1", "--delta", "1e-6", "--points", "40",
              "--features", "500", "--preset", "interactive", "--rows", "200", "--out", str(out), "--quiet")
    assert res.returncode == 0, res.stderr
    assert sorted(p.name for p in tmp_path.iterdir()) == ["release.csv", "release.json", "release_rows.csv"]
    assert res.stdout == ""
    meta = json.loads((tmp_path / "release.json").read_text())
    # a real release: labelled private, and no seed anywhere (anyone with a seed could remove the noise)
    assert meta["differentially_private"] is True and meta["seed"] is None and meta["noise_source"] == "os-entropy"
    assert "seed_warning" not in meta and "status" not in meta and "guarantee" in meta
    assert meta["kind"] == "table" and meta["schema"] == schema.to_dict() and meta["n_points"] == 40
    assert meta["synthetic_rows"]["csv"] == "release_rows.csv" and meta["synthetic_rows"]["n"] == 200
    weighted = pd.read_csv(out)
    assert list(weighted.columns) == [*schema.names, "weight"] == meta["csv_columns"] and len(weighted) == 40
    assert np.isclose(weighted["weight"].sum(), 1.0, atol=1e-6)     # simplex weights, written with full precision
    rows = pd.read_csv(tmp_path / "release_rows.csv")
    assert list(rows.columns) == list(schema.names) and len(rows) == 200
    for frame in (weighted, rows):                                   # valid rows, rounded to each column's precision
        assert set(frame["species"]) <= {"Adelie", "Chinstrap", "Gentoo"}
        assert frame["year"].between(2007, 2009).all() and (frame["year"] % 1 == 0).all()
        mass = frame["body_mass_g"].dropna()
        assert mass.between(2000, 7000).all() and (mass == mass.round(0)).all()
        bill = frame["bill_length_mm"].dropna()
        assert (np.abs(bill * 10 - np.round(bill * 10)) < 1e-6).all()


def test_release_table_seed_is_a_labelled_replay_and_bad_inputs_write_nothing(tmp_path, capsys):
    _, table, schema = _penguins()
    args = ["release-table", table, "--schema", schema, "--epsilon", "1", "--delta", "1e-6", "--mechanism", "alg1",
            "--points", "30", "--seed", "7", "--quiet"]
    code, first, err = _call(capsys, *args)                          # no --out: the CSV on stdout, no file written
    assert code == 0 and "NOT differentially private" in err
    code, _, _ = _call(capsys, *args, "--rows", "20", "--out", str(tmp_path / "demo.csv"))
    assert code == 0
    assert (tmp_path / "demo.csv").read_text() == first              # the seed replays the release exactly
    meta = json.loads((tmp_path / "demo.json").read_text())
    assert meta["seed"] == 7 and meta["differentially_private"] is False
    assert meta["status"] == "replayable demo, not private" and meta["mechanism"] == "algorithm1"
    before = sorted(p.name for p in tmp_path.iterdir())
    refused = {
        "--rows": [*args[:-3], "--rows", "5"],
        "private table": [*args[:-3], "--out", table],
        "does not exist": [*args[:-3], "--out", str(tmp_path / "nowhere" / "r.csv")],
        "missing.csv": ["release-table", str(tmp_path / "missing.csv"), "--schema", schema, "--epsilon", "1",
                        "--delta", "1e-6", "--out", str(tmp_path / "r.csv")],
        "delta": [*args[:4], "--epsilon", "1", "--delta", "2", "--out", str(tmp_path / "r.csv")],
    }
    for needle, argv in refused.items():
        code, out, err = _call(capsys, *argv)
        assert code == 2 and out == "" and needle in err and err.count("\n") == 1, (needle, err)
    assert sorted(p.name for p in tmp_path.iterdir()) == before


def test_release_table_marginal_share_option(tmp_path, capsys):
    _, table, schema = _penguins()
    out = tmp_path / "r.csv"
    code, _, err = _call(capsys, "release-table", table, "--schema", schema, "--epsilon", "1", "--delta", "1e-6",
                         "--points", "20", "--features", "300", "--preset", "interactive", "--marginal-share", "0.3",
                         "--out", str(out), "--quiet")
    assert code == 0, err
    meta = json.loads(out.with_suffix(".json").read_text())
    assert meta["params"]["marginals"]["share"] == 0.3 and meta["differentially_private"] is True
    for bad in ("1.5", "half"):                                       # argparse: usage error, exit status 2
        with pytest.raises(SystemExit) as exit_info:
            _call(capsys, "release-table", table, "--schema", schema, "--epsilon", "1", "--delta", "1e-6",
                  "--marginal-share", bad, "--quiet")
        err = capsys.readouterr().err
        assert exit_info.value.code == 2 and "--marginal-share" in err and bad in err
    code, _, err = _call(capsys, "release-table", table, "--schema", schema, "--epsilon", "1", "--delta", "1e-6",
                         "--mechanism", "alg1", "--points", "20", "--marginal-share", "0.3", "--quiet")
    assert code == 2 and "marginal_share=0.3 needs" in err and "Traceback" not in err
