"""Measure exercise 8.4's solution: the random-weights twin on 1,000 sentences, trained for ten
epochs' worth of steps (``fine_tune(..., fit=1.01, max_epochs=10)`` of ``scripts/finetune_table.py``)
at its table rate, seeds 0-2. Merges ``exercise_8_4`` into ``data/results/ch08_finetune.json``.

    python scripts/exercise_8_4.py
"""

from __future__ import annotations

import json
import sys
from pathlib import Path

import torch

sys.path.insert(0, str(Path(__file__).resolve().parent))
from finetune_table import OUT, accuracy, fine_tune  # noqa: E402

from attention_to_bert.data.sentiment import finetuning_splits, training_set  # noqa: E402


def main() -> dict:
    torch.set_num_threads(1)
    pool, _, test = finetuning_splits()
    table = json.loads(OUT.read_text())
    lr = next(r["lr"] for r in table["rows"] if r["model"] == "scratch")
    runs = []
    for seed in range(3):
        rows = training_set(pool, 1000, seed)
        encoder, head, loss, steps = fine_tune("scratch", rows, lr, seed, fit=1.01, max_epochs=10)
        runs.append(
            {
                "seed": seed,
                "lr": lr,
                "steps": steps,
                "train_accuracy": round(accuracy(encoder, head, rows[:256])[0], 4),
                "test_accuracy": round(accuracy(encoder, head, test)[0], 4),
                "final_loss": round(loss, 4),
            }
        )
        print(runs[-1], flush=True)
    table = json.loads(OUT.read_text())
    table["exercise_8_4"] = runs
    OUT.write_text(json.dumps(table, indent=1) + "\n")
    return table


if __name__ == "__main__":
    main()
