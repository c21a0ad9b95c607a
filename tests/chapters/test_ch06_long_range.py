"""Chapter 6's long-range test (``attention_to_bert.long_range`` on ``data.reversal``'s strings,
``experiments/ch06_long_range.py``) and its timing sweep (``experiments/ch06_timing.py``): the shipped
files, and their first steps re-run."""

import json

import pytest
import torch
from helpers import ROOT, load_script

from attention_to_bert import long_range
from attention_to_bert.data import reversal

RESULTS = ROOT / "book" / "attention_to_bert" / "results"


def test_reversal_pairs_are_reversed_and_seeded():
    pairs = reversal.reversal_pairs(3, 10, torch.Generator().manual_seed(0))
    again = reversal.reversal_pairs(3, 10, torch.Generator().manual_seed(0))
    assert pairs == again and len(pairs) == 3
    for source, target in pairs:
        assert len(source) == 10 and target == source[::-1]
        assert set(source) <= set(reversal.LETTERS)


@pytest.mark.parametrize(
    ("call", "error", "match"),
    [
        (lambda: reversal.reversal_pairs(0, 5, torch.Generator()), ValueError, "count"),
        (lambda: reversal.reversal_pairs(2, 5, 0), TypeError, "generator"),
        (lambda: long_range.make_model("lstm", 8), ValueError, "name"),
        (lambda: long_range.train_reversal("rnn", 8, 0), ValueError, "seconds or steps"),
        (
            lambda: long_range.train_reversal("rnn", 8, 0, seconds=1.0, steps=2),
            ValueError,
            "exactly",
        ),
    ],
)
def test_bad_inputs_are_named(call, error, match):
    with pytest.raises(error, match=match):
        call()


@pytest.mark.recomputes
@pytest.mark.parametrize("name", long_range.MODELS)
def test_a_short_run_is_scored_and_its_first_steps_are_the_shipped_ones(name):
    script = load_script("experiments/ch06_long_range.py")
    test = reversal.reversal_pairs(4, 64, torch.Generator().manual_seed(1))
    result = long_range.train_reversal(name, 64, 0, steps=3, evaluate=script.scored(test))
    assert result["steps"] == 3 and len(result["losses"]) == 3
    for key in ("greedy_letter_accuracy", "exact_match", "forced_letter_accuracy"):
        assert 0 <= result[key] <= 1
    assert len(result["greedy_by_quarter"]) == 4
    shipped = json.loads((RESULTS / "ch06_long_range.json").read_text())
    run = next(r for r in shipped["runs"] if (r["model"], r["length"], r["seed"]) == (name, 64, 0))
    gaps = [abs(a - b) for a, b in zip(result["losses"], run["losses"], strict=False)]
    assert max(gaps) < 0.01, gaps


def test_shipped_long_range_file_holds_both_models_at_each_length():
    table = json.loads((RESULTS / "ch06_long_range.json").read_text())
    assert table["threads"] == 1 and table["training_cpu_seconds_budget"] > 0
    lengths = {run["length"] for run in table["runs"]}
    assert {64, 128} <= lengths
    for length in lengths:
        models = {run["model"] for run in table["runs"] if run["length"] == length}
        assert models == set(long_range.MODELS)
    for run in table["runs"]:
        assert run["training_cpu_seconds"] >= table["training_cpu_seconds_budget"]
        assert run["steps"] == len(run["losses"])


def test_the_scripts_write_their_files(tmp_path):
    long_script = load_script("experiments/ch06_long_range.py")
    out = tmp_path / "long.json"
    long_script.main(["--lengths", "8", "--seeds", "0", "--seconds", "0.2", "--out", str(out)])
    merged = tmp_path / "merged.json"
    long_script.main(["--merge", str(out), str(out), "--out", str(merged)])
    assert len(json.loads(merged.read_text())["runs"]) == 4
    timing_script = load_script("experiments/ch06_timing.py")
    out = tmp_path / "timing.json"
    timing_script.main(["--lengths", "4", "8", "--repeats", "1", "--out", str(out)])
    table = json.loads(out.read_text())
    assert set(table["seconds"]) == {"rnn_additive", "rnn_dot", "transformer"}
    assert all(len(t["fastest"]) == 2 for t in table["seconds"].values())


def test_shipped_timing_file_holds_the_three_models():
    table = json.loads((RESULTS / "ch06_timing.json").read_text())
    assert table["threads"] == 1 and table["repeats"] >= 5
    for times in table["seconds"].values():
        assert len(times["fastest"]) == len(times["median"]) == len(table["lengths"])
        assert all(f <= m for f, m in zip(times["fastest"], times["median"], strict=True))
