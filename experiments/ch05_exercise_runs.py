"""Chapter 5's Exercise 5.8, run once so that its folded rubric quotes measured numbers: the lesson's
bare model (``fit_reader``, 300 steps, seed 0, rate 1e-2, the chapter's own code through
``ch05_relation_runs.chapter_code``), writes ``results/ch05_exercise_runs.json``:

- (b) heads too narrow: 16 and 32 heads of d_model = 32 (2 and 1 dimensions each), four relations;
- (a) more relations than heads: two more fixed targets, the second and the second-to-last
  position, with 4 and 8 heads.

Four runs of 5 to 20 seconds each.

    python experiments/ch05_exercise_runs.py
"""

from __future__ import annotations

import argparse
import importlib.util
import json
from pathlib import Path

import torch

ROOT = Path(__file__).resolve().parents[1]
OUT = ROOT / "book" / "attention_to_bert" / "results" / "ch05_exercise_runs.json"
EXTRA = ["second", "second to last"]


def seed_runs():
    """experiments/ch05_seed_runs.py as a module: its ``sibling`` and ``write``."""
    path = Path(__file__).with_name("ch05_seed_runs.py")
    spec = importlib.util.spec_from_file_location("ch05_seed_runs", path)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def add_fixed_targets(code: dict) -> None:
    """Give the chapter's task the second and the second-to-last position as two more relations
    (what the exercise asks the reader to do in a new cell)."""
    length = code["LENGTH"]
    positions = torch.arange(length)
    extra = torch.stack([torch.ones_like(positions), torch.full_like(positions, length - 2)])
    code["RELATIONS"].extend(EXTRA)  # the list the chapter's functions read
    code["TARGETS"] = torch.cat([code["TARGETS"], extra])
    code["VALID"] = (code["TARGETS"] >= 0) & (code["TARGETS"] < length)
    test = code["make_batch"](1000, torch.Generator().manual_seed(123))  # as the chapter's
    code["test_digits"], code["test_labels"] = test


def run(code: dict, heads: int) -> dict:
    model, train, test = code["fit_reader"](heads, list(code["RELATIONS"]), lr=1e-2)
    return {
        "heads": heads,
        "relations": list(code["RELATIONS"]),
        "lr": 1e-2,
        "seed": 0,
        "steps": 300,
        "train": [round(a, 4) for a in train.tolist()],
        "test": [round(a, 4) for a in test.tolist()],
    }


def main(argv: list[str] | None = None) -> list[dict]:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--out", type=Path, default=OUT, help="default: the shipped file")
    args = parser.parse_args(argv)
    helpers = seed_runs()
    code = helpers.sibling().chapter_code()
    done = []
    for heads in (16, 32, 4, 8):
        if heads == 4:  # then the six relations
            add_fixed_targets(code)
        done.append(run(code, heads))
        print(json.dumps(done[-1]), flush=True)
    return helpers.write(args.out, done)


if __name__ == "__main__":
    main()
