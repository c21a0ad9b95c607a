"""Chapter 8's fine-tuning comparison on the UCI sentences (with ``scripts/finetune_table.py``): the
splits (600 test, 283 validation, training sets drawn from the rest), the encoders, their features."""

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
from attention_to_bert.validate import (
    check_choice,
    check_instance,
    check_int,
    check_strings,
    check_tensor,
)

NUM_TEST = 600
NUM_VALIDATION = 283
KINDS = ("minilm", "book", "scratch")  # the encoders: all-MiniLM-L6-v2, ours, ours untrained
FEATURES = ("static", "frozen_mean", "frozen_cls")  # the features of a frozen encoder
CONTEXT = re.compile(r"\b(not|no|never|nothing|n't|but|although|however)\b|n't\b", re.IGNORECASE)


def splits() -> tuple[list, list, list]:
    """``(train_pool, validation, test)`` lists of ``(sentence, label)``."""
    pool, test = sentiment_split()
    return pool[:-NUM_VALIDATION], pool[-NUM_VALIDATION:], test[:NUM_TEST]


def training_set(pool: list, size: int, seed: int) -> list:
    """``size`` rows of ``pool`` drawn (without replacement) with ``seed``."""
    check_instance("pool", pool, list)
    check_int("size", size, 1, len(pool))
    check_int("seed", seed, minimum=0)
    rows = list(pool)
    random.Random(seed).shuffle(rows)
    return rows[:size]


class Encoder:
    """A BERT encoder of ``KINDS`` (all-MiniLM-L6-v2, the book's, or it untrained) and its tokenizer."""

    def __init__(self, kind: str) -> None:
        check_choice("kind", kind, KINDS)
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
        """The last layer ``(batch, seq, hidden)`` and the attention_mask (1 = real token)."""
        check_strings("texts", texts)
        batch = self.tokenize(texts)
        names = ("input_ids", "token_type_ids", "attention_mask")
        out = self.model(*(batch[name] for name in names), output_attentions=False)[0]
        return out, batch["attention_mask"]


def mean_pool(hidden: torch.Tensor, mask: torch.Tensor) -> torch.Tensor:
    """The mean of ``hidden`` ``(batch, seq, size)`` over the positions where ``mask`` ``(batch,
    seq)`` is 1 or True (Hugging Face's attention_mask: 1 = real token); a row with none gives 0."""
    check_tensor("hidden", hidden, floating=True, dim=3, axes="(batch, seq, size)")
    check_tensor("mask", mask, shape=hidden.shape[:2], axes="(batch, seq)")
    if ((mask != 0) & (mask != 1)).any():
        raise ValueError(f"mask must hold 0 and 1 (1 = real token), got {mask.unique().tolist()}")
    weights = mask.unsqueeze(-1).to(hidden.dtype)
    return (hidden * weights).sum(1) / weights.sum(1).clamp_min(1.0)


@torch.no_grad()
def features(kind: str, encoder: Encoder, rows: list) -> np.ndarray:
    """The frozen ``encoder``'s features ``(len(rows), size)`` of ``(sentence, label)`` ``rows``:
    ``kind`` ``"static"``, the mean of the token table's rows (no [CLS]/[SEP]; 0 for an empty
    sentence), ``"frozen_mean"``, the mean of the last layer, or ``"frozen_cls"``, its [CLS]."""
    check_choice("kind", kind, FEATURES)
    check_instance("encoder", encoder, Encoder)
    check_instance("rows", rows, list, "a list of (sentence, label) pairs")
    if not rows:
        raise ValueError("rows must hold at least one (sentence, label) pair, got none")
    check_strings(
        "rows' sentences", [row[0] if isinstance(row, tuple | list) else row for row in rows]
    )
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
