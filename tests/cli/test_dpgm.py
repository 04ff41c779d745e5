"""``dpkme dpgm``: DPGM from the command line (tiny settings): model JSON with the guarantee and no seed, labelled
rows, progress on stderr, refused inputs exit 2 with a one-line message."""

import json

import numpy as np
import pandas as pd
import pytest

from dpkme.cli import main

TINY = ["--k", "2", "--epochs", "1", "--batch-size", "16", "--hidden", "8", "--latent-dim", "2", "--kmeans-iter", "2"]


@pytest.fixture
def table(tmp_path):
    rng = np.random.default_rng(0)
    X = np.concatenate([rng.normal(3, 0.5, (40, 2)), rng.normal(7, 0.5, (40, 2))])
    df = pd.DataFrame(X, columns=["a", "b"])
    df["y"] = ["low"] * 40 + ["high"] * 40
    path = tmp_path / "private.csv"
    df.to_csv(path, index=False)
    return path


def _args(table, tmp_path, *extra):
    return ["dpgm", str(table), "--columns", "a,b", "--bounds=0:10", "--label", "y", "--classes", "low,high", "--n", "80",
            "--epsilon", "2", "--delta", "1e-5", "--out-model", str(tmp_path / "model.json"),
            "--out-rows", str(tmp_path / "rows.csv"), *TINY, *extra]


@pytest.mark.slow
def test_dpgm_writes_the_models_and_labelled_rows(table, tmp_path, capsys):
    assert main(_args(table, tmp_path, "--n-rows", "25")) == 0
    err = capsys.readouterr().err
    assert "step" in err and "100.0%" in err and "differentially private" in err       # progress on stderr
    d = json.loads((tmp_path / "model.json").read_text())
    assert d["kind"] == "dpgm" and d["k"] == 2 and d["differentially_private"] is True
    assert d["seed"] is None and "guarantee_in_words" in d and "seconds" not in d     # no timing side channel
    assert d["privacy"]["epsilon"] <= 2.0 + 1e-9 and d["privacy"]["neighbouring"] == "add-remove"
    assert d["label_classes"] == ["low", "high"] and d["columns"] == ["a", "b"]
    rows = pd.read_csv(tmp_path / "rows.csv")
    assert list(rows.columns) == ["a", "b", "y"] and len(rows) == 25
    assert set(rows["y"]) <= {"low", "high"}
    assert rows[["a", "b"]].to_numpy().min() >= 0 and rows[["a", "b"]].to_numpy().max() <= 10
    # the model file is a release a third party can sample from
    from dpkme.generative import DPGMResult

    assert DPGMResult.from_dict(d).sample(4, rng=0).shape == (4, 2)


@pytest.mark.slow
def test_partition_by_labels_writes_one_model_per_class(table, tmp_path):
    assert main(_args(table, tmp_path, "--partition", "labels", "--quiet")) == 0
    d = json.loads((tmp_path / "model.json").read_text())
    assert d["k"] == 2 and d["config"]["partition"] == "labels" and d["plan"]["kmeans"] is None
    assert d["differentially_private"] is True and "seconds" not in d
    rows = pd.read_csv(tmp_path / "rows.csv")
    assert set(rows["y"]) <= {"low", "high"} and len(rows) == 80


@pytest.mark.slow
def test_seeded_run_is_labelled_a_demo(table, tmp_path):
    assert main(_args(table, tmp_path, "--seed", "3", "--quiet")) == 0
    d = json.loads((tmp_path / "model.json").read_text())
    assert d["differentially_private"] is False and "NOT" in d["guarantee_in_words"]


@pytest.mark.parametrize("change, message", [
    (lambda a: [x for x in a if x not in ("--n", "80")], "declare --n"),
    (lambda a: [x if x != "--bounds=0:10" else "--bounds=0-10" for x in a], "LO:HI"),
    (lambda a: [x for x in a if x not in ("--classes", "low,high")], "--classes"),
    (lambda a: [*a, "--dataset", "digits"], "not both"),
    (lambda a: [x if x != "a,b" else "a,zz" for x in a], "not in"),
])
def test_refused_inputs_exit_2_with_one_line(table, tmp_path, capsys, change, message):
    assert main(change(_args(table, tmp_path))) == 2
    err = capsys.readouterr().err.strip()
    assert err.startswith("error: ") and message in err and "\n" not in err
    assert not (tmp_path / "model.json").exists()


def test_outputs_never_overwrite_the_table_or_go_to_missing_folders(table, tmp_path, capsys):
    args = _args(table, tmp_path)
    args[args.index("--out-rows") + 1] = str(table)
    assert main(args) == 2 and "never overwritten" in capsys.readouterr().err
    args = _args(table, tmp_path)
    args[args.index("--out-model") + 1] = str(tmp_path / "nope" / "m.json")
    assert main(args) == 2 and "does not exist" in capsys.readouterr().err


def test_parser_knows_the_subcommand():
    from dpkme.cli import build_parser

    a = build_parser().parse_args(["dpgm", "--dataset", "digits", "--epsilon", "1", "--delta", "1e-5",
                                   "--out-model", "m.json"])
    assert (a.command, a.k, a.model, a.epochs, a.out_rows) == ("dpgm", 5, "vae", 3, None)
