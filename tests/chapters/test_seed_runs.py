"""experiments/ch05_seed_runs.py writes Figure 5.7's runs on three seeds: the shipped file holds the
runs it plans, and its first run, recomputed with the chapter's own code, equals the shipped row."""

import json

import pytest
import torch
from helpers import ROOT, load_script

SHIPPED = ROOT / "book" / "attention_to_bert" / "results" / "ch05_seed_runs.json"
TOLERANCE = 0.005  # as in test_relation_runs (the JSON is rounded to 4 digits)


def script():
    return load_script("experiments/ch05_seed_runs.py")


def test_the_shipped_file_holds_the_planned_runs():
    runs = json.loads(SHIPPED.read_text())["runs"]
    planned = script().plan()
    assert [(r["heads"], r["lr"], r["seed"]) for r in runs] == [
        (p["heads"], p["lr"], p["seed"]) for p in planned
    ]
    for r in runs:
        assert r["steps"] == r["trained_steps"] == 300 and r["layer"] is False
        assert len(r["train"]) == len(r["test"]) == 4
        assert all(0 <= a <= 1 for a in r["train"] + r["test"])


@pytest.mark.recomputes
def test_first_run_equals_the_shipped_row(tmp_path):
    threads = torch.get_num_threads()  # the chapter's code sets one thread
    try:
        out = tmp_path / "runs.json"
        [first] = script().main(["--runs", "1", "--out", str(out)])
    finally:
        torch.set_num_threads(threads)
    shipped = json.loads(SHIPPED.read_text())["runs"][0]
    for key in ("heads", "relations", "lr", "seed", "steps"):
        assert first[key] == shipped[key], key
    for key in ("train", "test"):
        gap = max(abs(a - b) for a, b in zip(first[key], shipped[key], strict=True))
        assert gap <= TOLERANCE, (key, first[key], shipped[key])


EXERCISE = ROOT / "book" / "attention_to_bert" / "results" / "ch05_exercise_runs.json"


def test_the_exercise_runs_hold_the_planned_settings():
    runs = json.loads(EXERCISE.read_text())["runs"]
    assert [(r["heads"], len(r["relations"])) for r in runs] == [(16, 4), (32, 4), (4, 6), (8, 6)]
    extra = load_script("experiments/ch05_exercise_runs.py").EXTRA
    for r in runs:
        assert (r["lr"], r["seed"], r["steps"]) == (1e-2, 0, 300)
        assert r["relations"][:4] == ["previous", "next", "first", "last"]
        assert r["relations"][4:] in ([], extra)
        assert len(r["train"]) == len(r["test"]) == len(r["relations"])
