"""Chapter 5's relation experiment: the runs the chapter quotes but does not train live.

Section 5.5 trains one small attention model per setting (``fit_reader``: 300 steps of 128 fresh
sequences, seeded, one thread). The chapter trains live only the runs it goes on to inspect; this
script runs the rest, with the chapter's own code (it executes the notebook's setup cell and the
cells that define ``make_batch`` and ``fit_reader``, so the two cannot drift apart), and writes
``data/results/ch05_relation_runs.json``:

- the learning-rate grid of the one-head model: four relations at 3e-3, 1e-2, 3e-2 and 1e-1; the
  fixed targets ("first", "last") and the moving targets ("previous", "next") at 3e-3, 1e-2, 3e-2;
- the one head on the moving targets at 3e-3 for 900 steps (3 times as many);
- the one head on each two-relation task at its tuned rate (best mean *training* accuracy of the
  grid) with data and model seeds 1 and 2.

Each run takes one to two seconds on one core.

    python scripts/relation_runs.py             # every run (about a minute)
    python scripts/relation_runs.py --runs 1    # the first run only (what the test compares)
"""

from __future__ import annotations

import argparse
import contextlib
import io
import json
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
NOTEBOOK = ROOT / "book" / "05_multi_head_attention.ipynb"
OUT = ROOT / "book" / "attention_to_bert" / "data" / "results" / "ch05_relation_runs.json"

GRID = (3e-3, 1e-2, 3e-2, 1e-1)
PAIR_GRID = GRID[:3]  # the chapter drops 1e-1 for the two-relation tasks
RELATIONS = ["previous", "next", "first", "last"]
TASKS = {"fixed": ["first", "last"], "moving": ["previous", "next"]}


def chapter_code(notebook: Path = NOTEBOOK) -> dict:
    """The namespace after running the chapter's setup cell and the cells that define
    ``make_batch`` and ``fit_reader`` (their printed output is discarded)."""
    if not notebook.is_file():
        raise FileNotFoundError(f"notebook: no file {notebook}")
    cells = [
        "".join(cell["source"])
        for cell in json.loads(notebook.read_text())["cells"]
        if cell["cell_type"] == "code"
    ]
    wanted = [cells[0]]  # the setup cell: imports and set_seed
    for name in ("make_batch", "fit_reader"):
        found = [source for source in cells if f"def {name}(" in source]
        if len(found) != 1:
            raise ValueError(
                f"notebook: expected one code cell defining {name}, found {len(found)}"
            )
        wanted += [source for source in found if source not in wanted]
    namespace: dict = {"__name__": "chapter5"}
    if str(ROOT / "book") not in sys.path:
        sys.path.insert(0, str(ROOT / "book"))
    with contextlib.redirect_stdout(io.StringIO()):
        for source in wanted:
            exec(compile(source, str(notebook), "exec"), namespace)  # noqa: S102
    return namespace


def plan() -> list[tuple[list[str], float, int, int] | str]:
    """The runs in order, as (relations, lr, seed, steps) of the one-head model; the string
    "tuned seeds" stands for the seeds-1-and-2 runs, whose rates depend on the grid's results."""
    runs: list = [(RELATIONS, lr, 0, 300) for lr in GRID]
    runs += [(relations, lr, 0, 300) for relations in TASKS.values() for lr in PAIR_GRID]
    runs.append((TASKS["moving"], PAIR_GRID[0], 0, 900))
    runs.append("tuned seeds")
    return runs


def run(code: dict, relations: list[str], lr: float, seed: int, steps: int) -> dict:
    """One one-head run, as the JSON stores it (accuracies per relation, rounded to 4 digits)."""
    _, train, test = code["fit_reader"](1, relations, lr, seed, steps=steps)
    return {
        "heads": 1,
        "relations": list(relations),
        "lr": lr,
        "seed": seed,
        "steps": steps,
        "train": [round(a, 4) for a in train.tolist()],
        "test": [round(a, 4) for a in test.tolist()],
    }


def main(argv: list[str] | None = None) -> list[dict]:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--runs", type=int, default=None, help="stop after this many runs")
    parser.add_argument("--out", type=Path, default=OUT)
    args = parser.parse_args(argv)
    if args.runs is not None and args.runs < 1:
        parser.error(f"--runs must be at least 1, got {args.runs}")
    code = chapter_code()
    done: list[dict] = []
    for item in plan():
        if item == "tuned seeds":
            for relations in TASKS.values():
                grid = [r for r in done if r["relations"] == relations and r["steps"] == 300]
                best = max(grid, key=lambda r: sum(r["train"]) / len(r["train"]))["lr"]
                for seed in (1, 2):
                    done.append(run(code, relations, best, seed, 300))
                    print(json.dumps(done[-1]), flush=True)
        else:
            done.append(run(code, *item))
            print(json.dumps(done[-1]), flush=True)
        if args.runs is not None and len(done) >= args.runs:
            done = done[: args.runs]
            break
    args.out.parent.mkdir(parents=True, exist_ok=True)
    args.out.write_text(json.dumps({"runs": done}, indent=1) + "\n")
    return done


if __name__ == "__main__":
    main()
