"""Chapter 8's baselines without context: the same model's static vectors, and TF-IDF.

On the two tasks of ``experiments/ch08_thesis.py`` (``thesis``: a WordNet definition's lexicographer
file, 8 classes; ``sentiment``: the UCI review sentences), with the same splits, sizes and seeded
training draws (``ch08_thesis.training_set``), it fits two logistic regressions per cell:

- ``static``: the mean of the everyday checkpoint's *input* token embeddings over each text's pieces
  ([CLS], [SEP] and padding left out; ``classifier._static_vectors``), standardised;
- ``tfidf``: TF-IDF of the words and word pairs (fitted on the training draw).

Each cell's ``C`` is chosen on the validation split from that cell's own training draw (the first of
a tie). Every cell keeps its test predictions, so that two baselines can be compared with a paired
bootstrap over seeds *and* test sentences (``paired_bootstrap``). Writes
``book/attention_to_bert/results/ch08_static.json``. About 70 s on one CPU thread; on a busy
machine set ``OMP_NUM_THREADS=1`` (with 2 BLAS threads on 2 busy cores the same run took over
30 minutes):

    OMP_NUM_THREADS=1 python experiments/ch08_static.py [--seeds 10] [--tasks thesis sentiment]
"""

from __future__ import annotations

import argparse
import json
import time
from pathlib import Path

import numpy as np
import torch

from attention_to_bert.classifier import TFIDF_C, _choose_c, _load_encoder, _static_vectors

# the static rows' grid: the package's (classifier.STATIC_C) without 10, where L-BFGS on separable
# 256-wide features ran to its iteration cap for minutes a cell on a shared CPU
STATIC_C = (0.001, 0.01, 0.1, 1.0)

ROOT = Path(__file__).resolve().parents[1]
OUT = ROOT / "book" / "attention_to_bert" / "results" / "ch08_static.json"
SIZES = {"thesis": [4, 16, 64], "sentiment": [8, 32, 128, 500]}  # per class, as ch08_thesis.json


def load_splits(task: str) -> tuple[dict, int]:
    """``({"pool", "validation", "test"}, classes)`` of ``task``, as ``ch08_thesis.py`` draws them."""
    if task == "thesis":
        from attention_to_bert.data.everyday import THESIS_CLASSES, thesis_split

        return dict(thesis_split()), len(THESIS_CLASSES)
    from attention_to_bert.data.sentiment import finetuning_splits

    pool, validation, test = finetuning_splits()
    return {"pool": pool, "validation": validation, "test": test}, 2


def static_features(texts: list[str]) -> dict[str, np.ndarray]:
    """The static vector of each text (the everyday checkpoint's input embeddings, 64 pieces read)."""
    encoder, tokenizer = _load_encoder("book")
    tokenizer.model_max_length = 64
    special = [tokenizer.cls_token_id, tokenizer.sep_token_id, tokenizer.pad_token_id]
    vectors = []
    with torch.no_grad():
        for i in range(0, len(texts), 256):
            encoded = tokenizer(
                texts[i : i + 256], padding=True, truncation=True, return_tensors="pt"
            )
            vectors.append(_static_vectors(encoder, encoded, special))
    return dict(zip(texts, np.concatenate(vectors), strict=True))


def run_task(task: str, split: dict, seeds: int, training_set) -> list[dict]:
    from sklearn.feature_extraction.text import TfidfVectorizer
    from sklearn.linear_model import LogisticRegression
    from sklearn.pipeline import make_pipeline
    from sklearn.preprocessing import StandardScaler

    classes = len({label for _, label in split["pool"]})
    every = split["pool"] + split["validation"] + split["test"]
    vectors = static_features([t for t, _ in every])
    val_y = np.array([y for _, y in split["validation"]])
    test_y = np.array([y for _, y in split["test"]])
    cells = []
    for size in SIZES[task]:
        for seed in range(seeds):
            train = training_set(split["pool"], size, seed, classes)
            y = np.array([label for _, label in train])
            tfidf = TfidfVectorizer(ngram_range=(1, 2), sublinear_tf=True).fit(
                [t for t, _ in train]
            )

            def rows(part, kind, tfidf=tfidf):
                texts = [t for t, _ in part]
                return (
                    tfidf.transform(texts)
                    if kind == "tfidf"
                    else np.stack([vectors[t] for t in texts])
                )

            for kind, grid, make in (
                (
                    "static",
                    STATIC_C,
                    lambda c: make_pipeline(
                        StandardScaler(), LogisticRegression(C=c, max_iter=500)
                    ),
                ),
                ("tfidf", TFIDF_C, lambda c: LogisticRegression(C=c, max_iter=2000)),
            ):
                c, _, fitted = _choose_c(
                    make, grid, rows(train, kind), y, rows(split["validation"], kind), val_y
                )
                predicted = fitted.predict(rows(split["test"], kind))
                print(task, size, seed, kind, c, flush=True)
                cells.append(
                    {
                        "model": kind,
                        "size": size,
                        "seed": seed,
                        "C": c,
                        "score": round(float((predicted == test_y).mean()), 4),
                        "predicted": [int(p) for p in predicted],
                    }
                )
    return cells


def paired_bootstrap(
    a: dict[int, np.ndarray],
    b: dict[int, np.ndarray],
    truth: np.ndarray,
    draws: int = 2000,
    seed: int = 0,
) -> dict:
    """Mean accuracy difference a - b and a 95% percentile interval, resampling seeds and test
    sentences together (``a``, ``b``: seed -> predictions on the test set)."""
    rng = np.random.default_rng(seed)
    seeds = sorted(set(a) & set(b))
    right_a = np.stack([a[s] == truth for s in seeds]).astype(float)
    right_b = np.stack([b[s] == truth for s in seeds]).astype(float)
    gap = right_a - right_b  # seeds x sentences
    means = []
    for _ in range(draws):
        rows = rng.integers(0, len(seeds), len(seeds))
        cols = rng.integers(0, len(truth), len(truth))
        means.append(gap[np.ix_(rows, cols)].mean())
    low, high = np.percentile(means, [2.5, 97.5])
    return {
        "mean": round(float(gap.mean()), 4),
        "low": round(float(low), 4),
        "high": round(float(high), 4),
    }


def main(argv: list[str] | None = None) -> dict:
    import importlib.util

    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--seeds", type=int, default=10)
    parser.add_argument("--out", type=Path, default=OUT)
    parser.add_argument("--tasks", nargs="+", choices=list(SIZES), default=list(SIZES))
    args = parser.parse_args(argv)
    spec = importlib.util.spec_from_file_location(
        "ch08_thesis", ROOT / "experiments" / "ch08_thesis.py"
    )
    thesis = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(thesis)
    torch.manual_seed(0)
    started = time.perf_counter()
    result = {
        "sizes": SIZES,
        "seeds": args.seeds,
        "static_c": list(STATIC_C),
        "tfidf_c": list(TFIDF_C),
    }
    if args.out.exists():  # keep the other task's cells
        result = json.loads(args.out.read_text()) | result
    for task in args.tasks:
        split, _ = load_splits(task)
        cells = run_task(task, split, args.seeds, thesis.training_set)
        truth = np.array([y for _, y in split["test"]])
        means, differences = {}, {}
        for kind in ("static", "tfidf"):
            means[kind] = {
                str(s): round(
                    float(
                        np.mean([c["score"] for c in cells if (c["model"], c["size"]) == (kind, s)])
                    ),
                    4,
                )
                for s in SIZES[task]
            }
        for size in SIZES[task]:
            by = {
                kind: {
                    c["seed"]: np.array(c["predicted"])
                    for c in cells
                    if (c["model"], c["size"]) == (kind, size)
                }
                for kind in ("static", "tfidf")
            }
            differences[str(size)] = paired_bootstrap(by["static"], by["tfidf"], truth)
        result[task] = {"cells": cells, "means": means, "static-tfidf": differences}
        print(task, "done", round(time.perf_counter() - started), "s", flush=True)
    result["seconds"] = round(time.perf_counter() - started, 1)
    args.out.write_text(json.dumps(result) + "\n")
    print(json.dumps({t: result[t]["means"] for t in SIZES}, indent=1))
    return result


if __name__ == "__main__":
    main()
