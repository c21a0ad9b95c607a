"""BERT's pre-training (masked language model with the 80/10/10 rule, next-sentence prediction) and
fine-tuning (a classifier on the pooled [CLS] vector)."""

from __future__ import annotations

import copy

import torch
import torch.nn.functional as F
from torch import nn

from attention_to_bert.bert.model import (
    ACTIVATIONS,
    IGNORE_INDEX,
    BertConfig,
    BertModel,
    init_weights,
)
from attention_to_bert.validate import (
    check_fraction,
    check_int,
    check_mask,
    check_tensor,
)

# --- Pre-training: masked language model (80/10/10) and next-sentence prediction ---


def mask_tokens(
    input_ids: torch.Tensor,
    special_mask: torch.Tensor,
    *,
    mask_id: int,
    vocab_size: int,
    mask_prob: float = 0.15,
    generator: torch.Generator | None = None,
) -> tuple[torch.Tensor, torch.Tensor]:
    """BERT's masking for the masked-LM objective; returns ``(corrupted_ids, labels)``.

    Each position that is not special (``special_mask`` False: not [CLS], [SEP] or padding) is chosen
    with probability ``mask_prob``. A chosen token is replaced by ``mask_id`` 80% of the time, by a
    token drawn uniformly from ``range(vocab_size)`` 10% of the time, and left as it is 10% of the
    time. ``labels`` hold the original id at chosen positions and ``IGNORE_INDEX`` (-100) elsewhere,
    so the loss is computed on the chosen positions only. The input is not modified.
    """
    check_tensor("input_ids", input_ids, dtype=torch.long)
    check_mask(
        "special_mask", special_mask, tuple(input_ids.shape), "True at [CLS], [SEP], padding"
    )
    check_fraction("mask_prob", mask_prob, closed=True)
    if not 0 <= mask_id < vocab_size:
        raise ValueError(f"mask_id must lie in [0, vocab_size={vocab_size}), got {mask_id}")
    device = input_ids.device

    def uniform() -> torch.Tensor:
        return torch.rand(input_ids.shape, generator=generator, device=device)

    chosen = (uniform() < mask_prob) & ~special_mask
    labels = input_ids.masked_fill(~chosen, IGNORE_INDEX)
    action = (
        uniform()
    )  # one draw decides what happens to a chosen token: [0, .8) mask, [.8, .9) random
    to_mask = chosen & (action < 0.8)
    to_random = chosen & (action >= 0.8) & (action < 0.9)
    random_ids = torch.randint(vocab_size, input_ids.shape, generator=generator, device=device)
    corrupted = input_ids.masked_fill(to_mask, mask_id)
    corrupted = torch.where(to_random, random_ids, corrupted)
    return corrupted, labels


class BertPredictionHeadTransform(nn.Module):
    def __init__(self, config: BertConfig) -> None:
        super().__init__()
        self.dense = nn.Linear(config.hidden_size, config.hidden_size)
        self.transform_act_fn = ACTIVATIONS[config.hidden_act]()
        self.LayerNorm = nn.LayerNorm(config.hidden_size, eps=config.layer_norm_eps)

    def forward(self, hidden: torch.Tensor) -> torch.Tensor:
        return self.LayerNorm(self.transform_act_fn(self.dense(hidden)))


class BertLMPredictionHead(nn.Module):
    """Masked-LM head: transform, then score every word with the (tied) input embedding matrix."""

    def __init__(self, config: BertConfig, word_embeddings: nn.Embedding) -> None:
        super().__init__()
        self.transform = BertPredictionHeadTransform(config)
        self.decoder = nn.Linear(config.hidden_size, config.vocab_size, bias=False)
        self.decoder.weight = word_embeddings.weight  # tied: the same matrix reads words in and out
        self.bias = nn.Parameter(torch.zeros(config.vocab_size))

    def forward(self, hidden: torch.Tensor) -> torch.Tensor:
        return self.decoder(self.transform(hidden)) + self.bias


class BertPreTrainingHeads(nn.Module):
    def __init__(self, config: BertConfig, word_embeddings: nn.Embedding) -> None:
        super().__init__()
        self.predictions = BertLMPredictionHead(config, word_embeddings)
        self.seq_relationship = nn.Linear(config.hidden_size, 2)  # 0: B follows A, 1: B is random


class BertForPreTraining(nn.Module):
    """A ``BertModel`` (``.bert``) with the two pre-training heads (``.cls``)."""

    def __init__(self, config: BertConfig) -> None:
        super().__init__()
        self.bert = BertModel(config)
        self.cls = BertPreTrainingHeads(config, self.bert.embeddings.word_embeddings)
        init_weights(self.cls.predictions.transform.dense, config.initializer_range)
        init_weights(self.cls.seq_relationship, config.initializer_range)

    def forward(
        self,
        input_ids: torch.Tensor,
        token_type_ids: torch.Tensor | None = None,
        attention_mask: torch.Tensor | None = None,
        predict_at: torch.Tensor | None = None,
    ) -> tuple[torch.Tensor, torch.Tensor]:
        """Return masked-LM logits ``(batch, seq, vocab)`` and next-sentence logits ``(batch, 2)``.

        ``predict_at`` (bool, ``(batch, seq)``, e.g. ``labels != -100``) scores only those positions
        and returns MLM logits of shape ``(positions, vocab)``: the same numbers, far less work.
        """
        hidden, _ = self.bert(input_ids, token_type_ids, attention_mask, output_attentions=False)
        if predict_at is not None:
            if predict_at.shape != input_ids.shape or predict_at.dtype != torch.bool:
                raise ValueError(
                    f"predict_at must be a bool tensor of shape {tuple(input_ids.shape)}, "
                    f"got {predict_at.dtype} {tuple(predict_at.shape)}"
                )
            mlm_logits = self.cls.predictions(hidden[predict_at])
        else:
            mlm_logits = self.cls.predictions(hidden)
        return mlm_logits, self.cls.seq_relationship(self.bert.pooler(hidden))


def pretraining_loss(
    mlm_logits: torch.Tensor,
    nsp_logits: torch.Tensor,
    mlm_labels: torch.Tensor,
    nsp_labels: torch.Tensor,
) -> tuple[torch.Tensor, torch.Tensor]:
    """Cross-entropy of the masked tokens (labels -100 are skipped) and of the next-sentence labels.

    ``mlm_logits`` are ``(batch, seq, vocab)`` with labels ``(batch, seq)``, or ``(positions, vocab)``
    with the labels of those positions."""
    mlm = F.cross_entropy(
        mlm_logits.reshape(-1, mlm_logits.shape[-1]),
        mlm_labels.flatten(),
        ignore_index=IGNORE_INDEX,
    )
    nsp = F.cross_entropy(nsp_logits, nsp_labels)
    return mlm, nsp


# --- Fine-tuning: a classifier on the pooled [CLS] vector ---


class BertForSequenceClassification(nn.Module):
    """``BertModel`` (``.bert``) + dropout + a linear ``classifier`` on the pooled [CLS] vector."""

    def __init__(self, config: BertConfig, num_labels: int, dropout: float | None = None) -> None:
        super().__init__()
        check_int("num_labels", num_labels, minimum=2)
        self.bert = BertModel(config)
        self.dropout = nn.Dropout(config.hidden_dropout_prob if dropout is None else dropout)
        self.classifier = nn.Linear(config.hidden_size, num_labels)
        init_weights(self.classifier, config.initializer_range)

    @classmethod
    def from_encoder(cls, encoder: BertModel, num_labels: int, dropout: float | None = None):
        """A classifier whose encoder starts as a copy of a (pre-trained) ``encoder``."""
        model = cls(encoder.config, num_labels, dropout)
        model.bert = copy.deepcopy(encoder)
        return model

    def forward(
        self,
        input_ids: torch.Tensor,
        token_type_ids: torch.Tensor | None = None,
        attention_mask: torch.Tensor | None = None,
    ) -> torch.Tensor:
        """Return class logits ``(batch, num_labels)``."""
        hidden, _ = self.bert(input_ids, token_type_ids, attention_mask, output_attentions=False)
        return self.classifier(self.dropout(self.bert.pooler(hidden)))
