"""Chapter 3's controls (``results/ch03_controls.json``, from ``experiments/ch03_controls.py``).

The fast test checks that the file is complete and follows its recipe; the slow one re-runs a
cheap row (hidden size 64, rate 0.01, 144 steps, seed 0) and compares it with the file.
"""

import pytest
from helpers import load_script as load_experiment
from helpers import seed_tolerance

from attention_to_bert import results

SEEDS = (0, 1, 2)


def load_script():
    return load_experiment("experiments/ch03_controls.py")


def test_controls_are_complete_and_follow_their_recipe():
    rows = results.load("ch03_controls")["rows"]
    for seed in SEEDS:
        mine = [r for r in rows if r["seed"] == seed]
        fresh = [r["steps"] for r in mine if r["job"] == "fresh" and r["score"] == "none"]
        assert fresh == [144, 432, 1440, 2880]
        assert [r["steps"] for r in mine if r["job"] == "fresh" and r["score"] == "additive"] == [
            144
        ]
        sweep = [r for r in mine if r["job"] == "hidden64" and r.get("sweep")]
        assert sorted(r["lr"] for r in sweep) == [0.003, 0.01, 0.03]
        best = max(sweep, key=lambda r: r["validation"])
        long_run = [r for r in mine if r["job"] == "hidden64" and not r.get("sweep")]
        assert [r["steps"] for r in long_run] == [432, 1440, 2880]
        assert all(r["lr"] == best["lr"] and r["hidden"] == 64 for r in long_run)
        dates = [r["steps"] for r in mine if r["job"] == "dates_steps"]
        assert dates == [24, 48, 72, 96]
        for row in mine:
            for key in ("training", "validation", "held_out"):
                assert 0.0 <= row[key] <= 1.0


@pytest.mark.slow
@pytest.mark.recomputes
def test_first_hidden64_row_reruns():
    """Re-run the 144-step sweep row at 0.01 (seed 0). The shipped file was computed with torch 2.11
    on another machine: a rerun here agrees only within a few hundredths."""
    script = load_script()
    (row,) = script.hidden64_run(0.01, 144, 0)
    seeds = [
        r
        for r in results.load("ch03_controls")["rows"]
        if (r["job"], r["lr"], r["steps"]) == ("hidden64", 0.01, 144)
    ]
    assert sorted(r["seed"] for r in seeds) == list(SEEDS)
    (shipped,) = [r for r in seeds if r["seed"] == 0]
    # another machine or torch version trains another model, as a change of seed does: held to
    # the spread of the shipped seeds
    for key in ("training", "validation", "held_out"):
        assert abs(row[key] - shipped[key]) <= seed_tolerance(r[key] for r in seeds), key
