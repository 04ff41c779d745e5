"""sample_data/: the example files the docs walk through are what make_visits.py writes, and the walk works."""

from __future__ import annotations

import importlib.util
import json
from pathlib import Path

import pandas as pd
import pytest

from dpkme.cli import main
from dpkme.schema import TableSchema

SAMPLE = Path(__file__).resolve().parents[2] / "sample_data"


def _maker():
    spec = importlib.util.spec_from_file_location("make_visits", SAMPLE / "make_visits.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def test_the_files_are_what_the_script_writes():
    mk = _maker()
    for name, n, seed in (("visits.csv", 600, 20240101), ("visits_public.csv", 80, 20231231)):
        assert (SAMPLE / name).read_text() == mk.visits(n, seed=seed).to_csv(index=False), name
    assert json.loads((SAMPLE / "visits.schema.json").read_text()) == mk.SCHEMA


def test_the_declared_schema_accepts_the_table_with_its_gaps_only_where_declared():
    df = pd.read_csv(SAMPLE / "visits.csv")
    schema = TableSchema.from_json((SAMPLE / "visits.schema.json").read_text())
    assert [c.name for c in schema.columns] == list(df.columns)
    assert df.isna().sum().to_dict() == {c: (33 if c == "region" else 0) for c in df.columns}
    for col in schema.columns:
        if col.missing != "category":
            assert not df[col.name].isna().any(), col.name


def test_the_guides_commands_run_on_the_sample_files(tmp_path, monkeypatch, capsys):
    monkeypatch.chdir(SAMPLE.parent)
    guide = (SAMPLE.parent / "docs" / "user_guide" / "mixed_tables.md").read_text()
    for command in ("dpkme schema suggest sample_data/visits.csv --public sample_data/visits_public.csv",
                    "dpkme schema check sample_data/visits.csv --schema sample_data/visits.schema.json"):
        assert command in guide
    out = tmp_path / "my_schema.json"
    assert main(["schema", "suggest", "sample_data/visits.csv", "--public", "sample_data/visits_public.csv",
                 "--out", str(out)]) in (0, None)
    suggested = TableSchema.from_json(out.read_text())
    assert [c.name for c in suggested.columns] == list(pd.read_csv(SAMPLE / "visits.csv").columns)
    assert main(["schema", "check", "sample_data/visits.csv", "--schema", "sample_data/visits.schema.json"]) in (0, None)
    text = capsys.readouterr().out
    assert "33 missing" in text and "accepts the table" in text


@pytest.mark.parametrize("name", ["visits.csv", "visits_public.csv", "visits.schema.json", "make_visits.py"])
def test_the_readme_names_every_file(name):
    assert name in (SAMPLE / "README.md").read_text()
