"""Chapter 8's fine-tuning comparison on the UCI sentences: the splits, the encoders and their
features, shared by ``scripts/finetune_table.py`` (which fine-tunes and computes the whole table) and
the chapter (which re-runs the static-vector cells of it).

Splits: 600 held-out test sentences, a validation split of 283 pool sentences (learning rates and C
are chosen there), and training sets of 16 to 1,000 sentences drawn from the rest with each seed.
Every fine-tuned model: mean-pooled last layer + a linear layer, AdamW (weight decay 0.01), batch 16,
dropout 0.1, at least 30 steps and at least 2 epochs, its learning rate from its grid.
"""

from __future__ import annotations

import random
import re

import numpy as np
import torch

from attention_to_bert.bert import BertConfig, load_minilm
from attention_to_bert.pretraining import (
    DICTIONARY,
    BertForPreTraining,
    encode_texts,
    load_pretrained,
    sentiment_split,
)

NUM_TEST = 600
NUM_VALIDATION = 283
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
            pretrained, tokenizer, _ = load_pretrained(DICTIONARY)  # the table's model
            config = pretrained.bert.config
            if kind == "scratch":
                pretrained = BertForPreTraining(BertConfig(**vars(config)))
            self.model = pretrained.bert
            self.model.config.attn_implementation = "sdpa"
            for layer in self.model.encoder.layer:
                layer.attention.self.use_sdpa = True

            def tokenize(texts):
                ids = encode_texts(tokenizer, texts, config.max_position_embeddings)
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
