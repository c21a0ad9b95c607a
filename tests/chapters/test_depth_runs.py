"""experiments/ch05_depth_runs.py writes chapter 5's deeper baseline (two layers of one head,
Lab 5.8): its first run, recomputed with the chapter's own code, equals the shipped file's first row,
and the file holds the runs it plans."""

import json

import pytest
import torch
from helpers import ROOT, load_script

SHIPPED = ROOT / "book" / "attention_to_bert" / "results" / "ch05_depth_runs.json"
TOLERANCE = 0.005  # the JSON is rounded to 4 digits: <= 5e-5 on the machine that wrote it


def script():
    return load_script("experiments/ch05_depth_runs.py")


@pytest.fixture
def keep_threads():
    threads = torch.get_num_threads()  # the chapter's code sets one thread
    yield
    torch.set_num_threads(threads)


def test_the_shipped_file_holds_the_planned_runs():
    module = script()
    runs = json.loads(SHIPPED.read_text())["runs"]
    grid = runs[: len(module.GRID)]
    assert [(r["lr"], r["seed"], r["until_plateau"]) for r in grid] == [
        (lr, 0, True) for lr in module.GRID
    ]
    best = max(grid, key=lambda r: sum(r["train"]) / len(r["train"]))["lr"]
    assert [(r["lr"], r["seed"], r["until_plateau"]) for r in runs[len(grid) :]] == [
        (best, 1, True),
        (best, 2, True),
        (best, 0, False),
    ]
    for r in runs:
        assert (r["layers"], r["heads"]) == (2, 1)
        assert len(r["train"]) == len(r["test"]) == len(r["relations"]) == 4
        assert all(0 <= a <= 1 for a in r["train"] + r["test"])
        assert r["trained_steps"] % 300 == 0
        assert r["until_plateau"] or r["trained_steps"] == 300


def test_bad_arguments(tmp_path):
    with pytest.raises(SystemExit):
        script().main(["--runs", "0", "--out", str(tmp_path / "x.json")])


@pytest.mark.recomputes
@pytest.mark.slow
def test_first_run_equals_the_shipped_row(tmp_path, keep_threads):
    out = tmp_path / "depth.json"
    [first] = script().main(["--runs", "1", "--out", str(out)])
    shipped = json.loads(SHIPPED.read_text())["runs"][0]
    for key in ("layers", "heads", "relations", "lr", "seed", "until_plateau", "parameters"):
        assert first[key] == shipped[key], key
    for key in ("train", "test"):
        gap = max(abs(a - b) for a, b in zip(first[key], shipped[key], strict=True))
        assert gap <= TOLERANCE, (key, first[key], shipped[key])
