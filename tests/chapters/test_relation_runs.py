"""experiments/ch05_relation_runs.py writes the runs chapter 5 ships: its first run, recomputed with the
chapter's own code, equals the shipped file's first row, and the file holds the runs it plans."""

import json

import pytest
import torch
from helpers import ROOT, load_script

SHIPPED = ROOT / "book" / "attention_to_bert" / "results" / "ch05_relation_runs.json"
TOLERANCE = 0.005  # as in the chapter (the JSON is rounded to 4 digits: <= 5e-5 here)


def script():
    return load_script("experiments/ch05_relation_runs.py")


@pytest.fixture
def keep_threads():
    threads = torch.get_num_threads()  # the chapter's code sets one thread
    yield
    torch.set_num_threads(threads)


@pytest.mark.recomputes
def test_first_run_equals_the_shipped_row(tmp_path, keep_threads):
    out = tmp_path / "runs.json"
    [first] = script().main(["--runs", "1", "--out", str(out)])
    assert json.loads(out.read_text()) == {"runs": [first]}
    shipped = json.loads(SHIPPED.read_text())["runs"][0]
    for key in ("heads", "relations", "lr", "seed", "steps"):
        assert first[key] == shipped[key], key
    for key in ("train", "test"):
        gap = max(abs(a - b) for a, b in zip(first[key], shipped[key], strict=True))
        assert gap <= TOLERANCE, (key, first[key], shipped[key])


def test_the_shipped_file_holds_the_planned_runs():
    module = script()
    runs = json.loads(SHIPPED.read_text())["runs"]
    planned = [item for item in module.plan() if item != "tuned seeds"]
    settings = [(r["relations"], r["lr"], r["seed"], r["steps"]) for r in runs]
    assert settings[: len(planned)] == [tuple(item) for item in planned]
    # then two more seeds per two-relation task, at the rate of its grid with the best
    # mean training accuracy
    extra = runs[len(planned) :]
    assert [(r["relations"], r["seed"]) for r in extra] == [
        (relations, seed) for relations in module.TASKS.values() for seed in (1, 2)
    ]
    for r in extra:
        grid = [g for g in runs[: len(planned)] if g["relations"] == r["relations"]]
        grid = [g for g in grid if g["steps"] == 300]
        best = max(grid, key=lambda g: sum(g["train"]) / len(g["train"]))
        assert r["lr"] == best["lr"]
    for r in runs:
        assert r["heads"] == 1
        assert len(r["train"]) == len(r["test"]) == len(r["relations"])
        assert all(0 <= a <= 1 for a in r["train"] + r["test"])


def test_bad_arguments(tmp_path):
    module = script()
    with pytest.raises(SystemExit):
        module.main(["--runs", "0", "--out", str(tmp_path / "x.json")])
    with pytest.raises(FileNotFoundError, match="notebook"):
        module.chapter_code(tmp_path / "missing.ipynb")
    notebook = tmp_path / "empty.ipynb"
    notebook.write_text(json.dumps({"cells": [{"cell_type": "code", "source": "x = 1"}]}))
    with pytest.raises(ValueError, match="make_batch"):
        module.chapter_code(notebook)


LAYER_SHIPPED = SHIPPED.with_name("ch05_layer_runs.json")


@pytest.mark.recomputes
def test_first_layer_run_equals_the_shipped_row(tmp_path, keep_threads):
    out = tmp_path / "layer.json"
    [first] = script().main(["--layer", "--runs", "1", "--out", str(out)])
    shipped = json.loads(LAYER_SHIPPED.read_text())["runs"][0]
    for key in ("heads", "relations", "lr", "seed", "steps", "layer", "until_plateau"):
        assert first[key] == shipped[key], key
    for key in ("train", "test"):
        gap = max(abs(a - b) for a, b in zip(first[key], shipped[key], strict=True))
        assert gap <= TOLERANCE, (key, first[key], shipped[key])


def test_the_shipped_layer_file_holds_the_planned_runs():
    module = script()
    runs = json.loads(LAYER_SHIPPED.read_text())["runs"]
    planned = module.layer_plan()
    assert len(runs) == len(planned) + 1  # "tuned seeds" stands for two runs
    cut = planned.index("tuned seeds")
    for run, wanted in zip(runs[:cut], planned[:cut], strict=True):
        assert {key: run[key] for key in wanted} == wanted
        assert run["heads"] == wanted.get("heads", 1)
    grid = [r for r in runs[:cut] if r["heads"] == 1]
    best = max(grid, key=lambda r: sum(r["train"]) / len(r["train"]))
    assert [(r["lr"], r["seed"]) for r in runs[cut : cut + 2]] == [(best["lr"], 1), (best["lr"], 2)]
    for run, wanted in zip(runs[cut + 2 :], planned[cut + 1 :], strict=True):
        assert {key: run[key] for key in wanted} == wanted
    for r in runs:
        assert r["relations"] == module.RELATIONS and r["steps"] == 300
        assert r["trained_steps"] >= 300 and r["trained_steps"] % 300 == 0
        if not r["until_plateau"]:
            assert r["trained_steps"] == 300
        assert all(0 <= a <= 1 for a in r["train"] + r["test"])
