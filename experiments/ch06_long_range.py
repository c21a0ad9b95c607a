"""Chapter 6's long-range test: reverse a string of n letters, RNN with attention against Transformer.

Runs ``attention_to_bert.long_range`` (the task, the two models and their recipes are described
there): for each length n and seed, each model trains on fresh random strings for the same budget
of CPU seconds on one thread (equal training compute, measured as chapter 6 measures it), then is
scored on 200 held-out strings of the same length: greedy decoding, the share of letters right in
place and of strings right in full; and by teacher forcing, the share of letters right. Results go
to ``results/ch06_long_range.json``; the chapter re-runs the first steps of each model live
and checks them against the shipped losses.

    python experiments/ch06_long_range.py                       # n = 64 and 128, seeds 0 and 1
    python experiments/ch06_long_range.py --lengths 64 --seeds 0 --seconds 5 --out /tmp/x.json
    python experiments/ch06_long_range.py --merge a.json b.json  # join runs made in parallel

The shipped file: seeds 0 and 1 ran in parallel (one process each, ``--seeds 0`` and ``--seeds 1``
with ``--out``), on a 2-core machine shared with other jobs, then were joined with ``--merge``. A
budget of 60 CPU seconds for each model and length took about 10 CPU minutes in all (8 runs,
scoring included: greedy decoding of the Transformer at n = 128, without a cache, took 50 s a run).
"""

from __future__ import annotations

import argparse
import json
import time
from pathlib import Path

import torch
from torch import nn

from attention_to_bert import long_range, seq2seq
from attention_to_bert.data import encode_pairs, reversal

ROOT = Path(__file__).resolve().parents[1]
OUT = ROOT / "book" / "attention_to_bert" / "results" / "ch06_long_range.json"

TEST = 200


@torch.no_grad()
def greedy(model: nn.Module, source: torch.Tensor, steps: int) -> torch.Tensor:
    """Greedy outputs (batch, steps) of either model (the Transformer: no cache, prefix re-run)."""
    if isinstance(model, seq2seq.Seq2Seq):
        return seq2seq.greedy_decode(model, source, max_length=steps)[0]
    memory, _ = model.encode(source)
    prefix = torch.full((len(source), 1), model.bos_id)
    for _ in range(steps):
        logits, _, _ = model.decode(prefix, memory, source)
        prefix = torch.cat([prefix, logits[:, -1:].argmax(-1)], dim=1)
    return prefix[:, 1:]


def score(model: nn.Module, test: list[tuple[str, str]]) -> dict:
    """Greedy letter accuracy and exact match, and teacher-forced letter accuracy, on ``test``;
    also the greedy letter accuracy in each quarter of the output (first letters written first)."""
    model.eval()
    source, _, target = encode_pairs(test, reversal.VOCAB, reversal.VOCAB)
    expected = target[:, 1:]  # the letters, then <eos>
    with torch.no_grad():
        forced = long_range.logits_of(model, source, target).argmax(-1)
    written = greedy(model, source, expected.shape[1])
    width = min(written.shape[1], expected.shape[1])
    letters = expected.shape[1] - 1  # <eos> left out of the letter accuracy
    right = written[:, :width] == expected[:, :width]
    if width < expected.shape[1]:  # stopped early: the rest counts as wrong
        right = torch.cat([right, torch.zeros(len(right), expected.shape[1] - width).bool()], 1)
    model.train()
    return {
        "greedy_letter_accuracy": round(right[:, :letters].float().mean().item(), 4),
        "exact_match": round(right.all(dim=1).float().mean().item(), 4),
        "forced_letter_accuracy": round((forced == expected)[:, :letters].float().mean().item(), 4),
        "greedy_by_quarter": [
            round(q.float().mean().item(), 4) for q in right[:, :letters].chunk(4, dim=1)
        ],
    }


def scored(test: list[tuple[str, str]]):
    """The ``evaluate`` of ``long_range.train_reversal``: ``score`` on ``test``, and its CPU seconds."""

    def evaluate(model: nn.Module) -> dict:
        start = time.process_time()
        scores = score(model, test)
        return scores | {"scoring_cpu_seconds": round(time.process_time() - start, 1)}

    return evaluate


def run_all(lengths: list[int], seeds: list[int], models: list[str], seconds: float) -> list:
    """Every (length, seed, model) run, each printed as it ends."""
    runs = []
    for length in lengths:
        test = reversal.reversal_pairs(TEST, length, torch.Generator().manual_seed(10**6 + length))
        for seed in seeds:
            for name in models:
                result = long_range.train_reversal(
                    name, length, seed, seconds=seconds, evaluate=scored(test)
                )
                print(
                    f"{name:11} n={length:3d} seed {seed}: {result['steps']:4d} steps,",
                    f"loss {result['last_losses_mean']:.3f}, greedy letters",
                    f"{result['greedy_letter_accuracy']:.3f}, exact {result['exact_match']:.3f},",
                    f"forced letters {result['forced_letter_accuracy']:.3f}",
                    flush=True,
                )
                runs.append(result)
    return runs


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--lengths", nargs="+", type=int, default=[64, 128])
    parser.add_argument("--seeds", nargs="+", type=int, default=[0, 1])
    parser.add_argument(
        "--models", nargs="+", choices=long_range.MODELS, default=list(long_range.MODELS)
    )
    parser.add_argument("--seconds", type=float, default=60.0, help="CPU seconds of training")
    parser.add_argument("--merge", nargs="+", type=Path, help="join these files' runs instead")
    parser.add_argument("--out", type=Path, default=OUT)
    args = parser.parse_args(argv)
    if args.merge:
        tables = [json.loads(path.read_text()) for path in args.merge]
        table = tables[0] | {"runs": [run for t in tables for run in t["runs"]]}
        table["runs"].sort(
            key=lambda r: (r["length"], r["seed"], long_range.MODELS.index(r["model"]))
        )
    else:
        table = {
            "task": f"reverse a string of n random letters ({reversal.LETTERS})",
            "batch": long_range.BATCH,
            "test_strings": TEST,
            "training_cpu_seconds_budget": args.seconds,
            "threads": 1,
            "torch": torch.__version__,
            "date": time.strftime("%Y-%m-%d", time.gmtime()),
            "runs": run_all(args.lengths, args.seeds, args.models, args.seconds),
        }
    args.out.parent.mkdir(parents=True, exist_ok=True)
    args.out.write_text(json.dumps(table, indent=1) + "\n")


if __name__ == "__main__":
    main()
