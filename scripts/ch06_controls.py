"""Chapter 6's two control runs, full length: the Transformer without warm-up, without label smoothing.

Each run trains the chapter's model with the chapter's own code for the chapter's 5 epochs (470 steps
of 64 dates, seed 0, one thread), changing one thing: ``no_warmup`` holds the rate at the schedule's
peak for the first 50 steps (then the same 1/sqrt(step) decay), ``no_smoothing`` sets the label
smoothing to 0. The code is not copied: the script executes the chapter's cells that define the data,
``greedy_decode`` and ``train_transformer`` (found by their first lines), so the runs are the chapter's.
The chapter re-runs the first steps of each run live and asserts that its losses agree with these.
Results go to ``data/results/ch06_controls.json`` (``--runs`` runs a part; ``--out`` elsewhere;
``--steps N`` stops each run after N steps and records only the losses, as the test does).

    python scripts/ch06_controls.py

Each run took about 40 CPU seconds (34 of them training steps) on a shared 2-core machine; the two ran
in parallel, one process each (``--out`` to two files), and were merged into one file. Each full run
records the scorer, the torch version and the date it was made, and the averaged weights' test
cross-entropy without smoothing (``test_cross_entropy``). The file was first written when the chapter
scored by greedy decoding and comparing strings (commit b44873d); re-run with the one-pass scorer, its
losses and every accuracy in it came out the same.
"""

from __future__ import annotations

import argparse
import contextlib
import io
import json
import sys
import time
from pathlib import Path

import nbformat
import torch

ROOT = Path(__file__).resolve().parents[1]
BOOK = ROOT / "book"
CHAPTER = BOOK / "06_transformer.ipynb"
OUT = BOOK / "attention_to_bert" / "data" / "results" / "ch06_controls.json"
SCORER = (
    "exact_match: one teacher-forced pass, argmax right at every target position"
    " (equal to greedy decoding; the chapter checks it on all 1000 test dates)"
)
# the first line of each chapter cell the runs need after the setup cell (the first code cell:
# the install guard, imports, set_seed), in chapter order
CELLS = (
    "splits = date_splits(seed=0)",  # the data
    "@torch.no_grad()\ndef greedy_decode(",  # greedy decoding
    "def make_transformer(",  # the model, batches, loss, train_transformer
)


def chapter_namespace() -> dict:
    """Execute the chapter's cells that define the data and the training function."""
    cells = [c.source for c in nbformat.read(CHAPTER, as_version=4).cells if c.cell_type == "code"]
    namespace: dict = {"__name__": "chapter06"}
    sys.path.insert(0, str(BOOK))
    import matplotlib

    # the cells' figures are drawn off screen; this process only (an environment variable would
    # reach every kernel started after it, e.g. the notebooks pytest checks next)
    matplotlib.use("Agg")
    chosen = [cells[0]]  # the setup cell
    for first in CELLS:
        found = [source for source in cells if source.startswith(first)]
        if len(found) != 1:
            raise ValueError(f"expected one chapter cell starting {first!r}, found {len(found)}")
        chosen += found
    for source in chosen:
        with contextlib.redirect_stdout(io.StringIO()):  # the cells' own printing
            exec(compile(source, str(CHAPTER), "exec"), namespace)  # noqa: S102
    return namespace


def no_warmup_rate(step: int) -> float:
    """The chapter's schedule with its first 50 steps raised to the peak."""
    return 0.5 * 64**-0.5 * max(step, 50) ** -0.5


def run(name: str, chapter: dict, steps: int | None = None) -> dict:
    """One control run, as the chapter's ``train_transformer`` does it."""
    if name == "no_warmup":
        schedule, label_smoothing = no_warmup_rate, 0.1
    elif name == "no_smoothing":
        schedule, label_smoothing = chapter["noam_schedule"](64, 50, factor=0.5), 0.0
    else:
        raise ValueError(f"run must be 'no_warmup' or 'no_smoothing', got {name!r}")
    train = chapter["train_transformer"]
    if steps is not None:
        losses = train(schedule, label_smoothing=label_smoothing, steps=steps)
        return {"losses": [round(loss, 5) for loss in losses]}
    start = time.process_time()
    log = io.StringIO()
    with contextlib.redirect_stdout(log):
        model, losses, seconds, last, averaged = train(schedule, label_smoothing=label_smoothing)
    print(log.getvalue(), end="")
    epoch_accuracy = [
        float(line.split("dates)")[1].split()[0]) for line in log.getvalue().splitlines()
    ]
    result = {
        "losses": [round(loss, 5) for loss in losses],
        "epoch_accuracy_200": epoch_accuracy,
        "last_accuracy": last,
        "averaged_accuracy": averaged,
        "training_cpu_seconds": round(seconds, 1),
        "run_cpu_seconds": round(time.process_time() - start, 1),
    }
    # the averaged weights' test cross-entropy without smoothing (log perplexity)
    result["test_cross_entropy"] = round(chapter["test_cross_entropy"](model), 5)
    if name == "no_warmup":
        answers = chapter["greedy_decode"](model, chapter["test_source"], max_length=12)
        result["distinct_answers"] = len({tuple(row) for row in answers.tolist()})
    return result


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    names = ("no_warmup", "no_smoothing")
    parser.add_argument("--runs", nargs="+", choices=names, default=list(names))
    parser.add_argument("--steps", type=int, default=None)
    parser.add_argument("--out", type=Path, default=OUT)
    args = parser.parse_args(argv)
    chapter = chapter_namespace()
    table = json.loads(args.out.read_text()) if args.out.is_file() else {}
    for name in args.runs:
        table[name] = run(name, chapter, args.steps)
        table["seed"], table["threads"] = 0, 1
        if args.steps is None:
            table[name]["scorer"] = SCORER
            table[name]["torch"] = torch.__version__
            table[name]["date"] = time.strftime("%Y-%m-%d", time.gmtime())
        args.out.parent.mkdir(parents=True, exist_ok=True)
        args.out.write_text(json.dumps(table, indent=1) + "\n")


if __name__ == "__main__":
    main()
