"""Chapter 3's baselines over three seeds: the seq2seq with attention against the same model without it.

Two tasks, both as in the chapter (same data, sizes and recipes; one thread, seeded):

- ``dates``: ``date_splits(seed=0)`` (6000 training, 1000 held-out dates) and 500 validation dates in
  neither split. Batches of 256. The attention models (``additive``, ``dot``, ``general``) train 96
  steps at the rate 0.01; the model without attention (``none``) trains 96 steps at each of 0.01,
  0.03 and 0.1, and then, at the rate with the best validation exact match for that seed, 288 steps
  (rows at 192 and 288 steps; its first 96 steps are those of the sweep). Every row holds the exact
  match on the first 1000 training dates, the validation dates and the held-out dates.
- ``digits``: reversing digit strings of length 4 to 16 (3000 training strings; validation and
  held-out strings that are not training strings). Batches of 128. With attention (``additive``): 144
  steps at 0.01; without: 144 steps at each of 0.003, 0.01 and 0.03, then 2880 steps at the rate with
  the best validation exact match (until the training fit levels off; rows at 288, 432, 720, 1440,
  2160 and 2880). Every row holds the exact match on the first 1000 training strings, on the
  validation strings and on the held-out strings, and on the held-out strings of each length.

A run of seed ``s`` calls ``set_seed(s, num_threads=1)`` before building the model and passes
``seed=s`` to ``fit`` (the order of the batches). ``cpu_seconds`` is the training's CPU time without
the evaluations. Results are written to ``results/ch03_baselines.json``; the chapter retrains
seed 0 of some rows live and asserts that it agrees with this file.

    python experiments/ch03_baselines.py                  # both tasks, seeds 0 1 2
    python experiments/ch03_baselines.py --tasks digits --seeds 0

The shipped file was computed on a shared 2-core machine in several processes at once (one per task
and seed; the dates' runs split further by rate, with the same ``date_run`` calls) and merged, so its
``cpu_seconds`` are those of a busy machine: compare them with each other, not with other machines.
A full run takes about 12 CPU minutes. The file also records the torch version and the date of its
latest run (in the shipped file: the digits rows, 2026-12-03; the dates rows are from an earlier run
of the same code).
"""

from __future__ import annotations

import argparse
import contextlib
import datetime
import functools
import io
import json
import random
import time
from pathlib import Path

import torch

from attention_to_bert import set_seed
from attention_to_bert.data import (
    DATE_FORMATS,
    Vocabulary,
    date_splits,
    format_date,
)
from attention_to_bert.seq2seq import Seq2Seq, fit, translate

ROOT = Path(__file__).resolve().parents[1]

OUT = ROOT / "book" / "attention_to_bert" / "results" / "ch03_baselines.json"
DATE_LRS = (0.01, 0.03, 0.1)
DIGIT_LRS = (0.003, 0.01, 0.03)
DIGIT_LENGTHS = range(4, 16 + 1)
DIGIT_LONG_STEPS = 2880
DIGIT_LONG_ROWS = (288, 432, 720, 1440, 2160, 2880)


def validation_dates(splits) -> list[tuple[str, str]]:
    """500 dates in neither the training nor the held-out split (the chapter's recipe)."""
    taken = {target for _, target in splits.train + splits.test}
    rng = random.Random(1)
    first_day = datetime.date(1950, 1, 1)
    span = (datetime.date(2049, 12, 31) - first_day).days + 1
    pairs: list[tuple[str, str]] = []
    while len(pairs) < 500:
        day = first_day + datetime.timedelta(days=rng.randrange(span))
        if day.isoformat() not in taken:
            taken.add(day.isoformat())
            style = rng.choice(list(DATE_FORMATS))
            pairs.append((format_date(day, style), day.isoformat()))
    return pairs


def reversed_digits(
    count: int, min_length: int, max_length: int, seed: int
) -> list[tuple[str, str]]:
    """Pairs (digit string, its reverse), lengths uniform in the range (the chapter's recipe)."""
    rng = random.Random(seed)
    pairs = []
    for _ in range(count):
        length = rng.randint(min_length, max_length)
        digits = "".join(rng.choice("0123456789") for _ in range(length))
        pairs.append((digits, digits[::-1]))
    return pairs


@functools.cache
def digit_data() -> tuple[list, list, list]:
    """Training, validation and held-out digit strings (no validation or held-out string is trained on)."""
    train = reversed_digits(3000, 4, 16, seed=1)
    seen = {source for source, _ in train}
    test = [pair for pair in reversed_digits(2000, 4, 16, seed=2) if pair[0] not in seen]
    valid = [pair for pair in reversed_digits(500, 4, 16, seed=3) if pair[0] not in seen]
    return train, valid, test


def matches(model: Seq2Seq, pairs: list[tuple[str, str]]) -> list[bool]:
    """For each pair: is the greedy translation of the source exactly the target?"""
    predicted = translate(model, [source for source, _ in pairs])
    return [p == t for p, (_, t) in zip(predicted, pairs, strict=True)]


def train_rows(
    task: str,
    score: str | None,
    lr: float,
    steps: int,
    seed: int,
    pairs: list[tuple[str, str]],
    vocabs: tuple[Vocabulary, Vocabulary],
    measure,
    every: int,
    batch_size: int,
    keep: tuple[int, ...] | None = None,
) -> list[dict]:
    """Train one model for ``steps`` steps and return a row every ``every`` steps (``measure`` scores).

    With ``keep``, only the rows at those steps are measured and returned.
    """
    epochs = steps // -(-len(pairs) // batch_size)
    if epochs * -(-len(pairs) // batch_size) != steps:
        raise ValueError(
            f"{steps} steps are not whole epochs of {len(pairs)} pairs in batches of {batch_size}"
        )
    set_seed(seed, num_threads=1)
    model = Seq2Seq(*vocabs, score=score, embedding_size=16, hidden_size=32)
    rows: list[dict] = []
    evaluation = [0.0]
    start = time.process_time()

    calls = [0]

    def checkpoint(candidate: Seq2Seq) -> float:
        begin = time.process_time()
        calls[0] += 1
        row = {"task": task, "score": score or "none", "lr": lr, "steps": every * calls[0]}
        if keep is not None and row["steps"] not in keep:
            return float("nan")
        row.update(seed=seed, **measure(candidate))
        row["cpu_seconds"] = round(begin - start - evaluation[0], 1)
        rows.append(row)
        evaluation[0] += time.process_time() - begin
        return row["training"]

    with contextlib.redirect_stdout(io.StringIO()):  # fit's log
        fit(
            model,
            pairs,
            epochs=epochs,
            batch_size=batch_size,
            lr=lr,
            seed=seed,
            log_every=every,
            evaluate=checkpoint,
        )
    print(*(f"{k}={v}" for k, v in rows[-1].items() if k != "by_length"), flush=True)
    return rows


@functools.cache
def _date_task():
    splits = date_splits(seed=0)
    sets = {
        "training": splits.train[:1000],
        "validation": validation_dates(splits),
        "held_out": splits.test,
    }
    return splits, sets


def date_run(score: str | None, lr: float, steps: int, seed: int) -> list[dict]:
    """A dates model trained ``steps`` steps (batches of 256): one row every 96 steps."""
    splits, sets = _date_task()

    def measure(model: Seq2Seq) -> dict:
        scores = {name: matches(model, pairs) for name, pairs in sets.items()}
        return {name: round(sum(m) / len(m), 4) for name, m in scores.items()}

    vocabs = (splits.source_vocab, splits.target_vocab)
    return train_rows("dates", score, lr, steps, seed, splits.train, vocabs, measure, 96, 256)


def digit_run(
    score: str | None, lr: float, steps: int, seed: int, keep: tuple[int, ...] | None = None
) -> list[dict]:
    """A digit-reversing model trained ``steps`` steps (batches of 128): one row every 144 steps
    (only at the steps in ``keep`` if given)."""
    train, valid, test = digit_data()
    digits = Vocabulary("0123456789")
    lengths = [len(source) for source, _ in test]

    def measure(model: Seq2Seq) -> dict:
        correct = matches(model, test)
        by_length = {}
        for n in DIGIT_LENGTHS:
            hits = [c for c, length in zip(correct, lengths, strict=True) if length == n]
            by_length[str(n)] = round(sum(hits) / len(hits), 4)
        scores = {
            name: matches(model, pairs)
            for name, pairs in (("training", train[:1000]), ("validation", valid))
        }
        result = {name: round(sum(m) / len(m), 4) for name, m in scores.items()}
        return {**result, "held_out": round(sum(correct) / len(correct), 4), "by_length": by_length}

    vocabs = (digits, digits)
    return train_rows("digits", score, lr, steps, seed, train, vocabs, measure, 144, 128, keep)


def date_rows(seeds: list[int]) -> list[dict]:
    """Every dates row of the given seeds."""
    rows = []
    for seed in seeds:
        for score in ("additive", "dot", "general"):
            rows += date_run(score, 0.01, 96, seed)
        sweep = [row for lr in DATE_LRS for row in date_run(None, lr, 96, seed)]
        best = max(sweep, key=lambda row: row["validation"])
        long_run = date_run(None, best["lr"], 288, seed)
        check_prefix(long_run[0], best)
        rows += sweep + long_run[1:]
    return rows


def digit_rows(seeds: list[int]) -> list[dict]:
    """Every digits row of the given seeds."""
    rows = []
    for seed in seeds:
        rows += digit_run("additive", 0.01, 144, seed)
        sweep = [row for lr in DIGIT_LRS for row in digit_run(None, lr, 144, seed)]
        best = max(sweep, key=lambda row: row["validation"])
        long_run = digit_run(None, best["lr"], DIGIT_LONG_STEPS, seed, keep=(144, *DIGIT_LONG_ROWS))
        check_prefix(long_run[0], best)
        rows += sweep + long_run[1:]
    return rows


def check_prefix(first: dict, swept: dict) -> None:
    """The long run's first checkpoint must repeat the sweep's row (same seed, rate and batches)."""
    keys = ("training", "validation", "held_out")
    if any(first[k] != swept[k] for k in keys):
        raise RuntimeError(f"the long run does not repeat the sweep: {first} vs {swept}")


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument(
        "--tasks", nargs="+", choices=("dates", "digits"), default=["dates", "digits"]
    )
    parser.add_argument("--seeds", type=int, nargs="+", default=[0, 1, 2])
    parser.add_argument("--out", type=Path, default=OUT)
    args = parser.parse_args(argv)
    table = json.loads(args.out.read_text()) if args.out.is_file() else {"rows": []}
    table["torch"] = torch.__version__
    table["date"] = datetime.date.today().isoformat()
    for task in args.tasks:
        rows = (date_rows if task == "dates" else digit_rows)(args.seeds)
        done = {(r["task"], r["seed"]) for r in rows}
        table["rows"] = [r for r in table["rows"] if (r["task"], r["seed"]) not in done] + rows
        table["rows"].sort(key=lambda r: (r["task"], r["seed"]))
        args.out.parent.mkdir(parents=True, exist_ok=True)
        args.out.write_text(json.dumps(table, indent=1) + "\n")


if __name__ == "__main__":
    main()
