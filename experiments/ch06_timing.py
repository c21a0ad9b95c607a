"""Chapter 6's timing sweep: one training step of the RNNs and the Transformer against the length n.

One training step (forward and backward, no update) of three untrained models on the same batch of
64 random sequences, source and target n tokens each: chapter 3's RNN with attention with its
additive score and with the dot score (no parameters in the score: each decoder step is one batched
matrix product with the encoder states), and chapter 6's Transformer. One thread, CPU seconds
(``time.process_time``), ``--repeats`` timed steps per model and length after one warm-up step,
the three models taking turns within each repeat so that a busy spell on the machine hits all three.
The chapter quotes the fastest step of each (the one least disturbed by other programs) and the
median. Results go to ``results/ch06_timing.json``.

    python experiments/ch06_timing.py                 # n = 8 ... 256, 9 repeats (about 3 CPU minutes)
    python experiments/ch06_timing.py --lengths 8 16 --repeats 2 --out /tmp/timing.json
"""

from __future__ import annotations

import argparse
import json
import platform
import statistics
import time
from pathlib import Path

import torch
import torch.nn.functional as F

from attention_to_bert import seq2seq, set_seed
from attention_to_bert.data import date_splits
from attention_to_bert.translator import Seq2SeqTransformer

ROOT = Path(__file__).resolve().parents[1]
OUT = ROOT / "book" / "attention_to_bert" / "results" / "ch06_timing.json"

MODELS = ("rnn_additive", "rnn_dot", "transformer")


def make_models(max_len: int) -> dict:
    """The three models, untrained (a step's time does not depend on the weights)."""
    splits = date_splits(seed=0)
    source_vocab, target_vocab = splits.source_vocab, splits.target_vocab
    models = {
        f"rnn_{score}": seq2seq.Seq2Seq(
            source_vocab, target_vocab, score=score, embedding_size=16, hidden_size=32
        )
        for score in ("additive", "dot")
    }
    models["transformer"] = Seq2SeqTransformer(
        len(source_vocab), len(target_vocab), d_model=64, num_heads=4, num_layers=2, d_ff=128,
        dropout=0.0, max_len=max_len, pad_id=target_vocab.pad_id,
    )  # fmt: skip
    return models


def step(model, source: torch.Tensor, target: torch.Tensor) -> None:
    """Forward and backward on one batch (plain cross-entropy), no update."""
    if isinstance(model, seq2seq.Seq2Seq):
        lengths = torch.full((len(source),), source.shape[1])
        logits, _ = model(source, lengths, target[:, :-1])
    else:
        logits, _ = model(source, target[:, :-1])
    F.cross_entropy(logits.flatten(0, 1), target[:, 1:].flatten()).backward()
    model.zero_grad()


def sweep(lengths: list[int], repeats: int) -> dict:
    """Fastest and median CPU seconds of one step, per model and length."""
    set_seed(0, num_threads=1)
    models = make_models(max(lengths) + 2)
    random_ids = torch.Generator().manual_seed(0)
    table: dict = {name: {"fastest": [], "median": []} for name in MODELS}
    for length in lengths:
        source = torch.randint(4, 40, (64, length), generator=random_ids)
        target = torch.randint(4, 15, (64, length + 1), generator=random_ids)
        times: dict = {name: [] for name in MODELS}
        for name in MODELS:  # one warm-up step each
            step(models[name], source, target)
        for _ in range(repeats):
            for name in MODELS:
                start = time.process_time()
                step(models[name], source, target)
                times[name].append(time.process_time() - start)
        for name in MODELS:
            table[name]["fastest"].append(round(min(times[name]), 5))
            table[name]["median"].append(round(statistics.median(times[name]), 5))
        print(
            f"n={length:4d}",
            "  ".join(f"{name} {1000 * min(times[name]):7.1f} ms" for name in MODELS),
            flush=True,
        )
    return table


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--lengths", nargs="+", type=int, default=[8, 16, 32, 64, 128, 256])
    parser.add_argument("--repeats", type=int, default=9)
    parser.add_argument("--out", type=Path, default=OUT)
    args = parser.parse_args(argv)
    table = {
        "lengths": args.lengths,
        "batch": 64,
        "repeats": args.repeats,
        "threads": 1,
        "clock": "time.process_time (CPU seconds) of one forward + backward step",
        "machine": platform.machine(),
        "torch": torch.__version__,
        "date": time.strftime("%Y-%m-%d", time.gmtime()),
        "seconds": sweep(args.lengths, args.repeats),
    }
    args.out.parent.mkdir(parents=True, exist_ok=True)
    args.out.write_text(json.dumps(table, indent=1) + "\n")


if __name__ == "__main__":
    main()
