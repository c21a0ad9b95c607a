"""Chapter 8's fine-tuning comparison on the UCI sentences (with ``experiments/ch08_finetune.py``, which
adds the book's encoders and the last layer's features): the MiniLM encoder, its static features.
The splits and training sets are ``data.sentiment``'s (``finetuning_splits``, ``training_set``)."""

from __future__ import annotations

import numpy as np
import torch

from attention_to_bert.bert import load_minilm
from attention_to_bert.validate import check_choice, check_instance, check_strings, check_tensor


class FeatureEncoder:
    """A BERT encoder of ``KINDS`` (all-MiniLM-L6-v2) and its tokenizer; ``FEATURES`` are the kinds of
    ``features`` it gives, one batch of ``texts`` at a time by ``_features``."""

    KINDS = ("minilm",)
    FEATURES = ("static",)

    def __init__(self, kind: str) -> None:
        check_choice("kind", kind, self.KINDS)
        self.kind = kind
        self.model, tokenizer = load_minilm("sdpa")
        self.tokenize = lambda texts: tokenizer(
            texts, padding=True, truncation=True, max_length=48, return_tensors="pt"
        )

    def _features(self, kind: str, texts: list[str]) -> torch.Tensor:
        batch = self.tokenize(texts)
        table = self.model.embeddings.word_embeddings
        mask = batch["attention_mask"].clone()
        mask[:, 0] = 0  # [CLS]
        mask[torch.arange(len(texts)), batch["attention_mask"].sum(1) - 1] = 0  # [SEP]
        return mean_pool(table(batch["input_ids"]), mask)


def mean_pool(hidden: torch.Tensor, mask: torch.Tensor) -> torch.Tensor:
    """The mean of ``hidden`` ``(batch, seq, size)`` over the positions where ``mask`` ``(batch,
    seq)`` is 1 (Hugging Face's attention_mask: 1 = real token, 0 = padding); a row with none gives
    0. A bool mask is refused: the book's bool masks hold True at padding, the opposite."""
    check_tensor("hidden", hidden, floating=True, dim=3, axes="(batch, seq, size)")
    check_tensor("mask", mask, shape=hidden.shape[:2], axes="(batch, seq)")
    if mask.dtype == torch.bool or ((mask != 0) & (mask != 1)).any():  # True = padding in the book
        raise ValueError(
            f"mask must be 0/1 (1 = real token; not bool), got {mask.unique().tolist()}"
        )
    weights = mask.unsqueeze(-1).to(hidden.dtype)
    return (hidden * weights).sum(1) / weights.sum(1).clamp_min(1.0)


@torch.no_grad()
def features(kind: str, encoder: FeatureEncoder, rows: list) -> np.ndarray:
    """The frozen ``encoder``'s features ``(len(rows), size)`` of ``(sentence, label)`` ``rows``:
    ``kind`` ``"static"``, the mean of the token table's rows (no [CLS]/[SEP]; 0 for an empty
    sentence), or another of ``encoder.FEATURES``."""
    check_instance("encoder", encoder, FeatureEncoder)
    check_choice("kind", kind, encoder.FEATURES)
    check_instance("rows", rows, list, "a list of (sentence, label) pairs")
    if not rows:
        raise ValueError("rows must hold at least one (sentence, label) pair, got none")
    check_strings(
        "rows' sentences", [row[0] if isinstance(row, tuple | list) else row for row in rows]
    )
    encoder.model.eval()
    texts = [s for s, _ in rows]
    batches = [texts[start : start + 64] for start in range(0, len(texts), 64)]
    return torch.cat([encoder._features(kind, batch) for batch in batches]).numpy()
