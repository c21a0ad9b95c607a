"""Chapter 7's fine-tuning table: what pre-training buys on real labelled sentences.

The UCI sentences (``attention_to_bert.pretraining.sentiment_split``): 600 held-out test sentences,
a validation split of 283 pool sentences (learning rates and C are chosen there), and training sets of
16, 64, 256 and 1,000 sentences drawn from the rest of the pool with each seed. Models:

- ``minilm``: all-MiniLM-L6-v2 fine-tuned (mean-pooled last layer + a linear layer);
- ``book``: the book's pre-trained small BERT (``pretrained/``) fine-tuned, the same way;
- ``scratch``: the same architecture from random weights, the same way, its learning rate tuned;
- ``static``: the mean of MiniLM's input (token) embeddings + logistic regression;
- ``frozen_mean`` / ``frozen_cls``: MiniLM's last layer, mean-pooled / at [CLS], frozen, + logistic
  regression.

Every fine-tuned model: AdamW (weight decay 0.01), batch 16, dropout 0.1, at least 30 steps and at
least 2 epochs, the learning rate picked on the validation split at 256 sentences (seed 0) from the
model's grid; its training accuracy is reported. Single-threaded and seeded. Results merge into
``book/results/ch08_finetune.json`` (``--models`` and ``--seeds`` run a part; ``--out`` elsewhere).

    python scripts/finetune_table.py --models minilm static frozen_mean frozen_cls
    python scripts/finetune_table.py --models book scratch

The shipped file was computed in parts on a shared 2-core machine (one process per model, MiniLM one
process per seed) and merged; fine-tuning MiniLM on 1,000 sentences did not finish there and is absent
(the chapter prints n/a). A MiniLM cell took about 25 minutes of wall time under that load.
"""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path

import torch

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "book"))

from attention_to_bert.finetuning import (  # noqa: E402
    GRIDS,
    finetune_rows,
    linear_rows,
    splits,
)

OUT = ROOT / "book" / "results" / "ch08_finetune.json"


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    kinds = ("minilm", "book", "scratch", "static", "frozen_mean", "frozen_cls")
    parser.add_argument("--models", nargs="+", choices=kinds, default=list(kinds))
    parser.add_argument("--seeds", type=int, nargs="+", default=[0, 1, 2])
    parser.add_argument("--out", type=Path, default=OUT)
    args = parser.parse_args(argv)
    torch.set_num_threads(1)
    pool, validation, test = splits()
    table = json.loads(args.out.read_text()) if args.out.is_file() else {"rows": []}
    for kind in args.models:
        if kind in GRIDS:
            rows = finetune_rows(kind, pool, validation, test, args.seeds)
        else:
            rows = linear_rows(kind, pool, validation, test, args.seeds)
        table["rows"] = [r for r in table["rows"] if r["model"] != kind] + rows
        table["test_size"] = len(test)
        table["pool_size"] = len(pool)
        args.out.parent.mkdir(parents=True, exist_ok=True)
        args.out.write_text(json.dumps(table, indent=1) + "\n")


if __name__ == "__main__":
    main()
