"""Chapter 8: which vector of the everyday model should a classifier read, ``[CLS]`` or the mean?

On the lexicographer task of ``experiments/ch08_thesis.py`` (8 classes of WordNet definitions,
the same splits, sizes and seeded training draws), the everyday checkpoint is frozen and three
vectors of its last layer are read, each with the thesis test's logistic regression
(``ch08_thesis.frozen``, standardised, its L2 penalty chosen on the validation split):

- ``mean``: the mean over the real tokens (the thesis figure's "frozen" row, and what the
  chapter's classifier reads);
- ``cls``: the last layer's vector at ``[CLS]``;
- ``pooler``: ``tanh(W h_[CLS] + b)``, the pooled vector that the NSP head was trained on.

Writes ``book/attention_to_bert/results/ch08_pooling.json``. About a minute on one CPU thread:

    OMP_NUM_THREADS=1 python experiments/ch08_pooling.py [--seeds 10]
"""

from __future__ import annotations

import argparse
import json
import sys
import time
from pathlib import Path

import torch

sys.path.insert(0, str(Path(__file__).resolve().parent))
import ch08_thesis as thesis  # noqa: E402

from attention_to_bert import pretraining  # noqa: E402
from attention_to_bert.classifier import mean_pool  # noqa: E402
from attention_to_bert.data.everyday import THESIS_CLASSES, thesis_split  # noqa: E402

ROOT = Path(__file__).resolve().parents[1]
OUT = ROOT / "book" / "attention_to_bert" / "results" / "ch08_pooling.json"
READS = ("mean", "cls", "pooler")


@torch.no_grad()
def vectors(texts: list[str]) -> dict[str, torch.Tensor]:
    """The three vectors of each text, read from the frozen everyday checkpoint."""
    model, tokenizer, _ = pretraining.load_pretrained()
    limit = model.bert.config.max_position_embeddings
    ids = pretraining.encode_texts(tokenizer, texts, limit)
    model.eval()
    out = {read: [] for read in READS}
    for start in range(0, len(ids), 256):
        x = thesis.trim(ids[start : start + 256])
        mask = (x != 0).long()
        output = model.bert(x, None, mask)
        hidden = output.last_hidden_state
        out["mean"].append(mean_pool(hidden, mask))
        out["cls"].append(hidden[:, 0])
        out["pooler"].append(output.pooler_output)  # tanh(W h_[CLS] + b), as the forward made it
    return {read: torch.cat(rows) for read, rows in out.items()}


def main(argv: list[str] | None = None) -> dict:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--seeds", type=int, default=10)
    parser.add_argument("--sizes", type=int, nargs="+", default=[4, 16, 64])
    parser.add_argument("--penalties", type=float, nargs="+", default=[1e-4, 1e-3, 1e-2, 1e-1])
    parser.add_argument("--out", type=Path, default=OUT)
    args = parser.parse_args(argv)
    torch.set_num_threads(1)
    torch.manual_seed(0)
    start = time.perf_counter()
    split = dict(thesis_split())
    split["all"] = split["pool"] + split["validation"] + split["test"]
    classes = len(THESIS_CLASSES)
    feats = vectors([text for text, _ in split["all"]])
    tune = thesis.training_set(split["pool"], 16, 0, classes)  # as ch08_thesis.py tunes
    result = {"sizes": args.sizes, "seeds": args.seeds, "penalty": {}, "cells": []}
    for read in READS:
        scores = {
            p: thesis.frozen(feats[read], split, tune, p, "validation")["score"]
            for p in args.penalties
        }
        penalty = max(args.penalties, key=lambda p: scores[p])
        result["penalty"][read] = penalty
        for size in args.sizes:
            for seed in range(args.seeds):
                train = thesis.training_set(split["pool"], size, seed, classes)
                cell = thesis.frozen(feats[read], split, train, penalty, "test")
                result["cells"].append(
                    {"read": read, "size": size, "seed": seed, "score": round(cell["score"], 4)}
                )
        print(read, penalty, round(time.perf_counter() - start, 1), flush=True)
    args.out.parent.mkdir(parents=True, exist_ok=True)
    args.out.write_text(json.dumps(result, indent=1) + "\n")
    return result


if __name__ == "__main__":
    main()
