"""Hierarchical Attention Network (Yang et al., NAACL 2016) for document classification (chapter 2).
A GRU reads each sentence and attention pools its words into a sentence vector; a second GRU and
attention pool the sentences into the document vector, which a linear layer classifies. Padded words
and sentences get weight exactly 0 and are never read (packed sequences), wherever they are."""

from __future__ import annotations

import torch
from torch import Tensor, nn
from torch.nn.utils.rnn import pack_padded_sequence, pad_packed_sequence

from attention_to_bert.attention import AdditiveScore, _unchecked, dot_score
from attention_to_bert.masks import _masked_softmax, weighted_sum
from attention_to_bert.outputs import HANOutput
from attention_to_bert.validate import (
    check_choice,
    check_int,
    check_ints,
    check_mask,
    check_tensor,
    check_token_ids,
)

SCORES = ("dot", "additive")  # the scores of the attention layers, named as in seq2seq.SCORES
POOLINGS = ("attention", "mean")


def _check_padded(name: str, x: Tensor, mask: Tensor, weight: Tensor | None = None) -> None:
    """``x`` (batch, length, features), floating (of the dtype and input size of ``weight``, a
    ``(out, in)`` matrix); ``mask`` (batch, length), True = padding."""
    check_tensor(name, x, floating=True, dim=3, axes="(batch, length, features)")
    if weight is not None:
        size = (*x.shape[:2], weight.shape[-1])
        check_tensor(name, x, floating=weight.dtype, shape=size, axes="(batch, length, features)")
    check_mask("padding_mask", mask, tuple(x.shape[:2]), "True = padding")


class BiGRUEncoder(nn.Module):
    """A bidirectional GRU over padded sequences: ``(batch, length, input_size) -> (batch, length, 2 * hidden_size)``.
    ``forward(inputs, padding_mask)`` (True = padding): the real elements are packed in their order,
    wherever the padding is, so the GRUs read only them; padded positions of the output are 0, and
    a sequence of length 0 (all padding) gives zeros."""

    checks = True  # a reader's call checks; False inside HierarchicalAttentionNetwork

    def __init__(self, input_size: int, hidden_size: int) -> None:
        super().__init__()
        check_ints(input_size=input_size, hidden_size=hidden_size)
        self.gru = nn.GRU(input_size, hidden_size, batch_first=True, bidirectional=True)
        self.output_size = 2 * hidden_size

    def forward(self, inputs: Tensor, padding_mask: Tensor) -> Tensor:
        if self.checks:
            _check_padded("inputs", inputs, padding_mask, self.gru.weight_ih_l0)
        # inputs (batch, length, input_size), padding_mask (batch, length), True = padding
        lengths = (~padding_mask).sum(dim=1)
        # the real elements first, in their order (the identity if the padding is at the end)
        order = torch.argsort(padding_mask.to(torch.uint8), dim=1, stable=True)
        inputs = inputs.gather(1, order[..., None].expand_as(inputs))
        states = inputs.new_zeros(*inputs.shape[:2], self.output_size)
        present = lengths > 0  # pack_padded_sequence refuses empty sequences: leave them at zero
        if present.any():
            packed = pack_padded_sequence(
                inputs[present], lengths[present].cpu(), batch_first=True, enforce_sorted=False
            )
            packed_states, _ = self.gru(packed)
            length = inputs.shape[1]
            states[present] = pad_packed_sequence(packed_states, True, total_length=length)[0]
        # each state back to the position of its element
        return torch.zeros_like(states).scatter(1, order[..., None].expand_as(states), states)


class ContextAttention(nn.Module):
    """HAN's attention: a learned context vector ``u`` (the query) scores the keys ``u_i`` of the states.
    ``forward(values, padding_mask)``: ``(batch, length, input_size)`` and ``(batch, length)`` (True =
    padding) -> ``(pooled, weights)``, ``(batch, input_size)`` and ``(batch, length)``. ``score="dot"``
    is the paper's ``u_i . u``, ``"additive"`` is ``v^T tanh(W_q u + W_k u_i)`` (``AdditiveScore``)."""

    checks = True  # a reader's call checks; False inside HierarchicalAttentionNetwork

    def __init__(self, input_size: int, attention_size: int, score: str = "dot") -> None:
        super().__init__()
        check_ints(input_size=input_size, attention_size=attention_size)
        check_choice("score", score, SCORES)
        self.key_projection = nn.Linear(input_size, attention_size)  # u_i = tanh(W h_i + b)
        self.context = nn.Parameter(torch.randn(attention_size) / attention_size**0.5)  # query u
        self.score_name = score
        size = attention_size
        self.score = dot_score if score == "dot" else AdditiveScore(size, size, size)

    def forward(self, values: Tensor, padding_mask: Tensor) -> tuple[Tensor, Tensor]:
        if self.checks:
            _check_padded("values", values, padding_mask, self.key_projection.weight)
        # chapter 1's attention, its steps unchecked: values (batch, length, input_size)
        query = self.context.expand(values.shape[0], 1, -1)  # one query u: (batch, 1, attention)
        keys = torch.tanh(self.key_projection(values))  # u_i: (batch, length, attention)
        mask = padding_mask[:, None, :]  # (batch, 1, length), True = padding
        weights = _masked_softmax((_unchecked(self.score) or self.score)(query, keys), mask)
        pooled = weighted_sum(weights, values, mask)  # (batch, 1, input_size)
        return pooled.squeeze(1), weights.squeeze(1)

    def extra_repr(self) -> str:
        return f"score={self.score_name!r}"


class MeanPooling(nn.Module):
    """The baseline without attention: the plain mean of the unpadded states (uniform weights);
    ``forward(values, padding_mask)`` as ``ContextAttention``'s (True = padding)."""

    checks = True  # a reader's call checks; False inside HierarchicalAttentionNetwork

    def forward(self, values: Tensor, padding_mask: Tensor) -> tuple[Tensor, Tensor]:
        if self.checks:
            _check_padded("values", values, padding_mask)
        # values (batch, length, size), padding_mask (batch, length) -> (batch, size), (batch, length)
        present = (~padding_mask).to(values.dtype)
        weights = present / present.sum(dim=1, keepdim=True).clamp_min(1.0)  # all padding: 0
        return (weights.unsqueeze(-1) * values).sum(dim=1), weights


class HierarchicalAttentionNetwork(nn.Module):
    """Word encoder -> word attention -> sentence encoder -> sentence attention -> classifier:
    ``forward(word_ids, word_padding_mask=None)``, ``word_ids`` ``(documents, sentences, words)``, gives
    a ``HANOutput``; ``word_padding_mask`` is True at padding (default: ``word_ids == pad_id``), and a
    sentence of padding is padding. ``pooling="mean"``: the plain mean instead of attention (baseline)."""

    def __init__(
        self,
        vocab_size: int,
        num_classes: int = 2,
        embedding_size: int = 32,
        hidden_size: int = 32,
        attention_size: int = 32,
        score: str = "dot",
        pooling: str = "attention",
        pad_id: int = 0,
    ) -> None:
        super().__init__()
        check_choice("pooling", pooling, POOLINGS)
        check_choice("score", score, SCORES)
        check_ints(vocab_size=vocab_size, num_classes=num_classes, embedding_size=embedding_size)
        check_ints(hidden_size=hidden_size, attention_size=attention_size)
        check_int("pad_id", pad_id, 0, vocab_size - 1)
        self.pad_id = pad_id
        self.embedding = nn.Embedding(vocab_size, embedding_size, padding_idx=pad_id)
        self.word_encoder = BiGRUEncoder(embedding_size, hidden_size)
        self.sentence_encoder = BiGRUEncoder(2 * hidden_size, hidden_size)
        if pooling == "attention":
            self.word_attention = ContextAttention(2 * hidden_size, attention_size, score)
            self.sentence_attention = ContextAttention(2 * hidden_size, attention_size, score)
        else:
            self.word_attention, self.sentence_attention = MeanPooling(), MeanPooling()
        self.classifier = nn.Linear(2 * hidden_size, num_classes)
        for name in ("word_encoder", "word_attention", "sentence_encoder", "sentence_attention"):
            getattr(self, name).checks = False  # forward checks once: word_ids and the mask

    def forward(self, word_ids: Tensor, word_padding_mask: Tensor | None = None) -> HANOutput:
        vocab_size = self.embedding.num_embeddings
        check_token_ids("word_ids", word_ids, vocab_size, axes="(documents, sentences, words)")
        if word_ids.shape[1] == 0 or word_ids.shape[2] == 0:
            raise ValueError(f"word_ids must hold words, got shape {tuple(word_ids.shape)}")
        if word_padding_mask is None:
            word_padding_mask = word_ids == self.pad_id  # masks.padding_mask_from_ids, unchecked
        check_mask("word_padding_mask", word_padding_mask, tuple(word_ids.shape), "True = padding")
        documents, sentences, words = word_ids.shape
        sentence_padding_mask = word_padding_mask.all(dim=-1)  # (documents, sentences)

        # Word level: every sentence of every document is one sequence.
        flat_mask = word_padding_mask.reshape(documents * sentences, words)
        word_states = self.word_encoder(
            self.embedding(word_ids.reshape(documents * sentences, words)), flat_mask
        )
        sentence_vectors, word_weights = self.word_attention(word_states, flat_mask)

        # Sentence level: every document is one sequence of sentence vectors.
        size = self.classifier.in_features
        sentence_vectors = sentence_vectors.reshape(documents, sentences, size)
        sentence_states = self.sentence_encoder(sentence_vectors, sentence_padding_mask)
        document_vectors, sentence_weights = self.sentence_attention(
            sentence_states, sentence_padding_mask
        )
        word_weights = word_weights.reshape(documents, sentences, words)
        return HANOutput(self.classifier(document_vectors), sentence_weights, word_weights)
