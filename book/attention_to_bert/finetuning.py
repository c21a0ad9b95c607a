"""Chapter 8's fine-tuning comparison on the UCI sentences, shared by ``scripts/finetune_table.py``
(which computes the whole table) and the chapter (which re-runs one cell of it).

Splits: 600 held-out test sentences, a validation split of 283 pool sentences (learning rates and C
are chosen there), and training sets of 16 to 1,000 sentences drawn from the rest with each seed.
Every fine-tuned model: mean-pooled last layer + a linear layer, AdamW (weight decay 0.01), batch 16,
dropout 0.1, at least 30 steps and at least 2 epochs, its learning rate from its grid.
"""

from __future__ import annotations

import math
import random
import re
import time

import numpy as np
import torch
import torch.nn.functional as F
from torch import nn

from attention_to_bert.bert import BertConfig, load_minilm
from attention_to_bert.pretraining import BertForPreTraining, load_pretrained, sentiment_split

SIZES = (16, 64, 256, 1000)
NUM_TEST = 600
NUM_VALIDATION = 283
GRIDS = {"minilm": (1e-4,), "book": (3e-4, 1e-3, 3e-3), "scratch": (3e-4, 1e-3, 3e-3)}
CONTEXT = re.compile(r"\b(not|no|never|nothing|n't|but|although|however)\b|n't\b", re.IGNORECASE)


def splits() -> tuple[list, list, list]:
    """``(train_pool, validation, test)`` lists of ``(sentence, label)``."""
    pool, test = sentiment_split()
    return pool[:-NUM_VALIDATION], pool[-NUM_VALIDATION:], test[:NUM_TEST]


def training_set(pool: list, size: int, seed: int) -> list:
    rows = list(pool)
    random.Random(seed).shuffle(rows)
    return rows[:size]


class Encoder:
    """A BERT encoder and its tokenizer behind one ``encode(sentences)`` -> padded tensors."""

    def __init__(self, kind: str) -> None:
        self.kind = kind
        if kind == "minilm":
            self.model, tokenizer = load_minilm("sdpa")
            self.tokenize = lambda texts: tokenizer(
                texts, padding=True, truncation=True, max_length=48, return_tensors="pt"
            )
        else:
            pretrained, tokenizer, _ = load_pretrained()
            config = pretrained.bert.config
            if kind == "scratch":
                pretrained = BertForPreTraining(BertConfig(**vars(config)))
            self.model = pretrained.bert
            self.model.config.attn_implementation = "sdpa"
            for layer in self.model.encoder.layer:
                layer.attention.self.use_sdpa = True
            vocab = tokenizer.get_vocab()
            cls_id, sep_id = vocab["[CLS]"], vocab["[SEP]"]
            limit = config.max_position_embeddings

            def tokenize(texts):
                rows = [
                    [cls_id, *e.ids[: limit - 2], sep_id]
                    for e in tokenizer.encode_batch(texts, add_special_tokens=False)
                ]
                ids = torch.zeros(len(rows), max(map(len, rows)), dtype=torch.long)
                for i, row in enumerate(rows):
                    ids[i, : len(row)] = torch.tensor(row)
                return {
                    "input_ids": ids,
                    "token_type_ids": torch.zeros_like(ids),
                    "attention_mask": (ids != 0).long(),
                }

            self.tokenize = tokenize

    def hidden(self, texts: list[str]) -> tuple[torch.Tensor, torch.Tensor]:
        batch = self.tokenize(texts)
        out = self.model(
            batch["input_ids"],
            batch["token_type_ids"],
            batch["attention_mask"],
            output_attentions=False,
        )[0]
        return out, batch["attention_mask"]


def mean_pool(hidden: torch.Tensor, mask: torch.Tensor) -> torch.Tensor:
    weights = mask.unsqueeze(-1).to(hidden.dtype)
    return (hidden * weights).sum(1) / weights.sum(1)


@torch.no_grad()
def accuracy(encoder: Encoder, head: nn.Module, rows: list) -> tuple[float, list[bool]]:
    """The share of ``rows`` the fine-tuned model labels right, and right/wrong per row (the rows
    are batched by length, which changes no prediction but saves the padding)."""
    encoder.model.eval()
    order = sorted(range(len(rows)), key=lambda i: len(rows[i][0]))
    right = [False] * len(rows)
    for start in range(0, len(rows), 64):
        chunk = order[start : start + 64]
        hidden, mask = encoder.hidden([rows[i][0] for i in chunk])
        guess = head(mean_pool(hidden, mask)).argmax(-1)
        for i, g in zip(chunk, guess.tolist(), strict=True):
            right[i] = g == rows[i][1]
    return sum(right) / len(right), right


def fine_tune(kind: str, rows: list, lr: float, seed: int) -> tuple[Encoder, nn.Module, float]:
    """Fine-tune a fresh ``kind`` encoder + linear head on ``rows``; return them and the loss."""
    torch.manual_seed(seed)
    encoder = Encoder(kind)
    for module in encoder.model.modules():
        if isinstance(module, nn.Dropout):
            module.p = 0.1
    head = nn.Linear(encoder.model.config.hidden_size, 2)
    params = list(encoder.model.parameters()) + list(head.parameters())
    optimizer = torch.optim.AdamW(params, lr=lr, weight_decay=0.01)
    steps = max(30, math.ceil(2 * len(rows) / 16))
    order, rng, loss = [], random.Random(seed), None
    encoder.model.train()
    for _ in range(steps):
        if len(order) < 16:
            more = list(range(len(rows)))
            rng.shuffle(more)
            order += more
        batch, order = [rows[i] for i in order[:16]], order[16:]
        hidden, mask = encoder.hidden([s for s, _ in batch])
        loss = F.cross_entropy(head(mean_pool(hidden, mask)), torch.tensor([y for _, y in batch]))
        optimizer.zero_grad()
        loss.backward()
        optimizer.step()
    return encoder, head, float(loss.detach())


@torch.no_grad()
def features(kind: str, encoder: Encoder, rows: list) -> np.ndarray:
    out = []
    encoder.model.eval()
    for start in range(0, len(rows), 64):
        texts = [s for s, _ in rows[start : start + 64]]
        if kind == "static":
            batch = encoder.tokenize(texts)
            table = encoder.model.embeddings.word_embeddings
            mask = batch["attention_mask"].clone()
            mask[:, 0] = 0  # [CLS]
            mask[torch.arange(len(texts)), batch["attention_mask"].sum(1) - 1] = 0  # [SEP]
            out.append(mean_pool(table(batch["input_ids"]), mask))
        else:
            hidden, mask = encoder.hidden(texts)
            out.append(mean_pool(hidden, mask) if kind == "frozen_mean" else hidden[:, 0])
    return torch.cat(out).numpy()


def linear_rows(kind: str, pool: list, validation: list, test: list, seeds: list[int]) -> list:
    from sklearn.linear_model import LogisticRegression
    from sklearn.pipeline import make_pipeline
    from sklearn.preprocessing import StandardScaler

    encoder = Encoder("minilm")
    cache = {}
    every = pool + validation + test
    matrix = features(kind, encoder, every)
    for (sentence, _), row in zip(every, matrix, strict=True):
        cache[sentence] = row
    labels = lambda rows: np.array([y for _, y in rows])  # noqa: E731
    stack = lambda rows: np.stack([cache[s] for s, _ in rows])  # noqa: E731

    def fit(rows, c):
        model = make_pipeline(StandardScaler(), LogisticRegression(C=c, max_iter=2000))
        return model.fit(stack(rows), labels(rows))

    tune = training_set(pool, 256, 0)
    grid = (0.01, 0.1, 1.0)
    best_c = max(grid, key=lambda c: fit(tune, c).score(stack(validation), labels(validation)))
    results = []
    for size in SIZES:
        for seed in seeds:
            rows = training_set(pool, size, seed)
            model = fit(rows, best_c)
            right = model.predict(stack(test)) == labels(test)
            results.append(
                record(
                    kind,
                    size,
                    seed,
                    model.score(stack(rows), labels(rows)),
                    right.tolist(),
                    test,
                    {"C": best_c},
                )
            )
            print(results[-1], flush=True)
    return results


def record(kind, size, seed, train_accuracy, right, test, extra) -> dict:
    context = [r for r, (s, _) in zip(right, test, strict=True) if CONTEXT.search(s)]
    return {
        "model": kind,
        "size": size,
        "seed": seed,
        "train_accuracy": round(float(train_accuracy), 4),
        "test_accuracy": round(sum(right) / len(right), 4),
        "context_accuracy": round(sum(context) / len(context), 4),
        "context_count": len(context),
    } | extra


def finetune_rows(kind: str, pool: list, validation: list, test: list, seeds: list[int]) -> list:
    tune = training_set(pool, 256, 0)
    scores = {}
    for lr in GRIDS[kind]:
        if len(GRIDS[kind]) == 1:
            break
        encoder, head, _ = fine_tune(kind, tune, lr, 0)
        scores[lr] = accuracy(encoder, head, validation)[0]
        print(kind, "lr", lr, "validation", round(scores[lr], 4), flush=True)
    lr = max(scores, key=scores.get) if scores else GRIDS[kind][0]
    results = []
    for size in SIZES:
        for seed in seeds:
            rows = training_set(pool, size, seed)
            start = time.perf_counter()
            encoder, head, loss = fine_tune(kind, rows, lr, seed)
            train_accuracy = accuracy(encoder, head, rows[:256])[0]
            _, right = accuracy(encoder, head, test)
            extra = {
                "lr": lr,
                "final_loss": round(loss, 4),
                "seconds": round(time.perf_counter() - start, 1),
                "validation": {str(k): round(v, 4) for k, v in scores.items()},
            }
            results.append(record(kind, size, seed, train_accuracy, right, test, extra))
            print(results[-1], flush=True)
    return results
