"""Chapter 5's relation experiment: the runs the chapter quotes but does not train live.

Section 5.5 trains one small attention model per setting (``fit_reader``: 300 steps of 128 fresh
sequences, seeded, one thread). The chapter trains live only the runs it goes on to inspect; this
script runs the rest, with the chapter's own code (it executes the notebook's setup cell and the
cells that define ``make_batch`` and ``fit_reader``, so the two cannot drift apart), and writes
``results/ch05_relation_runs.json``:

- the learning-rate grid of the one-head model: four relations at 3e-3, 1e-2, 3e-2 and 1e-1; the
  fixed targets ("first", "last") and the moving targets ("previous", "next") at 3e-3, 1e-2, 3e-2;
- the one head on the moving targets at 3e-3 for 900 steps (3 times as many);
- the one head on each two-relation task at its tuned rate (best mean *training* accuracy of the
  grid) with data and model seeds 1 and 2.

Each run takes one to two seconds on one core.

With ``--layer`` it runs instead the section's second experiment, the model inside a real layer
(``layer=True``: a residual connection and a feed-forward network before the read-out), and writes
``results/ch05_layer_runs.json``:

- four heads at 1e-2, 300 steps, data and model seeds 0, 1 and 2 (the chapter trains seed 0 live);
- one head at 3e-3, 1e-2 and 3e-2, trained until its training accuracy plateaus
  (``until_plateau``: rounds of 300 steps until the mean training accuracy gains less than 0.005
  over three rounds, at most 6,000 steps), then at the best of them with seeds 1 and 2;
- the plain one head (no layer) at 1e-2 and 3e-2, also until it plateaus.

These take up to a minute each (about five minutes in all).

    python experiments/ch05_relation_runs.py             # every run (about a minute)
    python experiments/ch05_relation_runs.py --runs 1    # the first run only (what the test compares)
    python experiments/ch05_relation_runs.py --layer     # the runs inside a real layer
"""

from __future__ import annotations

import argparse
import contextlib
import io
import json
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
NOTEBOOK = ROOT / "book" / "05_multi_head_attention.ipynb"
OUT = ROOT / "book" / "attention_to_bert" / "results" / "ch05_relation_runs.json"
LAYER_OUT = OUT.with_name("ch05_layer_runs.json")
LAYER_GRID = (3e-3, 1e-2, 3e-2)

GRID = (3e-3, 1e-2, 3e-2, 1e-1)
PAIR_GRID = GRID[:3]  # the chapter drops 1e-1 for the two-relation tasks
RELATIONS = ["previous", "next", "first", "last"]
TASKS = {"fixed": ["first", "last"], "moving": ["previous", "next"]}


def chapter_code(notebook: Path = NOTEBOOK) -> dict:
    """The namespace after running the chapter's setup cell and the cells that define
    ``make_batch``, ``RelationReader`` and ``fit_reader`` (their printed output is discarded)."""
    if not notebook.is_file():
        raise FileNotFoundError(f"notebook: no file {notebook}")
    cells = [
        "".join(cell["source"])
        for cell in json.loads(notebook.read_text())["cells"]
        if cell["cell_type"] == "code"
    ]
    setup_end = next((i for i, source in enumerate(cells) if "set_seed(" in source), 0)
    wanted = cells[: setup_end + 1]  # the setup cells: the install guard, imports and set_seed
    for name in ("make_batch", "RelationReader", "fit_reader"):
        found = [
            source for source in cells if f"def {name}(" in source or f"class {name}(" in source
        ]
        if len(found) != 1:
            raise ValueError(
                f"notebook: expected one code cell defining {name}, found {len(found)}"
            )
        wanted += [source for source in found if source not in wanted]
    namespace: dict = {"__name__": "chapter5"}
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


def run(
    code: dict,
    relations: list[str],
    lr: float,
    seed: int,
    steps: int,
    heads: int = 1,
    layer: bool | None = None,
    until_plateau: bool = False,
) -> dict:
    """One run, as the JSON stores it (accuracies per relation, rounded to 4 digits). ``layer``
    None: the first experiment's model, stored without the layer keys."""
    options = {} if layer is None else {"layer": layer, "until_plateau": until_plateau}
    model, train, test = code["fit_reader"](heads, relations, lr, seed, steps=steps, **options)
    row = {
        "heads": heads,
        "relations": list(relations),
        "lr": lr,
        "seed": seed,
        "steps": steps,
        "train": [round(a, 4) for a in train.tolist()],
        "test": [round(a, 4) for a in test.tolist()],
    }
    if layer is not None:
        row.update(options, trained_steps=int(model.steps))
    return row


def layer_plan() -> list[dict | str]:
    """The runs of ``--layer`` in order, as keyword arguments of ``run``; "tuned seeds" stands for
    the one head's seeds 1 and 2 at the best rate of its plateau grid."""
    four = [dict(heads=4, lr=1e-2, seed=seed, layer=True) for seed in (0, 1, 2)]
    one = [dict(lr=lr, seed=0, layer=True, until_plateau=True) for lr in LAYER_GRID]
    plain = [dict(lr=lr, seed=0, layer=False, until_plateau=True) for lr in (1e-2, 3e-2)]
    return [*four, *one, "tuned seeds", *plain]


def main_layer(out: Path, limit: int | None) -> list[dict]:
    """Run ``layer_plan`` (the first ``limit`` runs) and write them to ``out``."""
    code = chapter_code()
    done: list[dict] = []
    for item in layer_plan():
        if item == "tuned seeds":
            grid = [r for r in done if r["heads"] == 1 and r["layer"]]
            best = max(grid, key=lambda r: sum(r["train"]) / len(r["train"]))["lr"]
            items = [dict(lr=best, seed=s, layer=True, until_plateau=True) for s in (1, 2)]
        else:
            items = [item]
        for options in items:
            done.append(run(code, RELATIONS, steps=300, **options))
            print(json.dumps(done[-1]), flush=True)
        if limit is not None and len(done) >= limit:
            done = done[:limit]
            break
    out.parent.mkdir(parents=True, exist_ok=True)
    out.write_text(json.dumps({"runs": done}, indent=1) + "\n")
    return done


def main(argv: list[str] | None = None) -> list[dict]:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--runs", type=int, default=None, help="stop after this many runs")
    parser.add_argument("--out", type=Path, default=None, help="default: the shipped file")
    parser.add_argument(
        "--layer", action="store_true", help="the runs inside a real layer (ch05_layer_runs)"
    )
    args = parser.parse_args(argv)
    if args.runs is not None and args.runs < 1:
        parser.error(f"--runs must be at least 1, got {args.runs}")
    if args.layer:
        return main_layer(args.out or LAYER_OUT, args.runs)
    args.out = args.out or OUT
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
