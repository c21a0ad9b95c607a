"""A small Transformer translator (chapter 6): token ids in, next-token logits out, and the warm-up
learning-rate schedule of Vaswani et al. (2017), and one step of beam search. Chapter 6 decodes with
it (greedy and beam search)."""

from __future__ import annotations

import math
from collections.abc import Callable

import torch
from torch import Tensor, nn

from attention_to_bert.data.vocabulary import BOS, EOS, PAD, Vocabulary
from attention_to_bert.masks import causal_mask
from attention_to_bert.outputs import Seq2SeqTransformerOutput
from attention_to_bert.positional import PositionalEncoding
from attention_to_bert.transformer import Transformer
from attention_to_bert.validate import (
    check_device,
    check_ints,
    check_number,
    check_same,
    check_tensor,
    check_token_ids,
)

# where data.Vocabulary puts <pad>, <bos> and <eos>
PAD_ID, BOS_ID, EOS_ID = (Vocabulary([]).stoi[token] for token in (PAD, BOS, EOS))


class Seq2SeqTransformer(nn.Module):
    """Token ids in, next-token logits out: embeddings scaled by √d_model plus positions, a
    :class:`Transformer`, a linear generator (the softmax is left to the loss). Padding (``pad_id``)
    is masked everywhere; ``bos_id`` and ``eos_id`` start and end an output. The defaults are the
    sizes chapter 6 trains."""

    def __init__(
        self,
        src_vocab_size: int,
        tgt_vocab_size: int,
        d_model: int = 64,
        num_heads: int = 4,
        num_layers: int = 2,
        d_ff: int = 128,
        dropout: float = 0.0,
        max_len: int = 64,
        pad_id: int = PAD_ID,
        bos_id: int = BOS_ID,
        eos_id: int = EOS_ID,
    ) -> None:
        super().__init__()
        ids = (pad_id, bos_id, eos_id)
        sizes = (src_vocab_size, tgt_vocab_size, d_model, num_layers)
        check_sizes(*sizes, max_len, *ids)  # clear errors, off the page
        self.d_model, self.max_len = d_model, max_len
        self.pad_id, self.bos_id, self.eos_id = pad_id, bos_id, eos_id
        self.src_embedding = nn.Embedding(src_vocab_size, d_model, pad_id)
        self.tgt_embedding = nn.Embedding(tgt_vocab_size, d_model, pad_id)
        self.positional_encoding = PositionalEncoding(d_model, max_len, dropout)
        self.transformer = Transformer(d_model, num_heads, num_layers, num_layers, d_ff, dropout)
        self.generator = nn.Linear(d_model, tgt_vocab_size)
        # std d_model^-0.5: after the √d_model scaling, std 1, near the positions' RMS 1/√2
        for embedding in (self.src_embedding, self.tgt_embedding):
            nn.init.normal_(embedding.weight, std=d_model**-0.5)
            nn.init.zeros_(embedding.weight[pad_id])

    def _embed(self, embedding: nn.Embedding, ids: Tensor) -> Tensor:
        # ids (batch, len) -> vectors (batch, len, d_model)
        x = embedding(ids) * math.sqrt(self.d_model)
        return self.positional_encoding(x)  # positions added

    def encode(self, src_ids: Tensor):
        """Memory (batch, src_len, d_model) and each layer's weights."""
        _check_inputs(self, src_ids)  # clear errors, off the page
        x = self._embed(self.src_embedding, src_ids)
        padding = src_ids == self.pad_id  # (batch, src_len), True = <pad>
        return self.transformer.encode(x, src_key_padding_mask=padding)

    def decode(self, tgt_in_ids: Tensor, memory: Tensor, src_ids: Tensor):
        """Logits (batch, tgt_len, tgt_vocab) for the token after each prefix
        of ``tgt_in_ids``, and each layer's self- and cross-attention
        weights; ``src_ids`` gives the source's padding."""
        _check_inputs(self, src_ids, tgt_in_ids, memory)  # off the page
        t = self._embed(self.tgt_embedding, tgt_in_ids)
        output, self_weights, cross_weights = self.transformer.decode(
            t,
            memory,
            tgt_mask=causal_mask(t.shape[1], device=t.device),  # no peeking
            tgt_key_padding_mask=tgt_in_ids == self.pad_id,
            memory_key_padding_mask=src_ids == self.pad_id,
        )
        return self.generator(output), self_weights, cross_weights

    def forward(self, src_ids: Tensor, tgt_in_ids: Tensor) -> Seq2SeqTransformerOutput:
        """Logits for ``tgt_in_ids`` (the target shifted right, ``<bos>``
        first) and the weights: unpacks as ``(logits, attentions)``."""
        memory, encoder_weights = self.encode(src_ids)
        logits, self_weights, cross_weights = self.decode(tgt_in_ids, memory, src_ids)
        return Seq2SeqTransformerOutput(logits, encoder_weights, self_weights, cross_weights)


def _check_inputs(model, src_ids: Tensor, tgt_in_ids: Tensor | None = None, memory=None) -> None:
    """The arguments of ``encode`` (``src_ids``) or ``decode`` (all three), checked at once:
    token ids of the right vocabulary, device and length, and a memory that fits them."""
    check_ids(model, src_ids, "src_ids")
    if tgt_in_ids is not None or memory is not None:
        source_padding(model, tgt_in_ids, memory, src_ids, None)


def check_sizes(
    src_vocab_size, tgt_vocab_size, d_model, num_layers, max_len, pad_id, bos_id, eos_id
) -> None:
    """The sizes and special ids of a ``Seq2SeqTransformer``, checked (ValueError, TypeError)."""
    check_ints(src_vocab_size=src_vocab_size, tgt_vocab_size=tgt_vocab_size)
    check_ints(d_model=d_model, num_layers=num_layers, max_len=max_len)
    special_ids = {"pad_id": pad_id, "bos_id": bos_id, "eos_id": eos_id}
    check_ints(0, min(src_vocab_size, tgt_vocab_size) - 1, **special_ids)  # ids of both
    if len(set(special_ids.values())) < 3:
        raise ValueError(
            f"pad_id, bos_id and eos_id must be three different ids, got {special_ids}"
        )


def check_ids(model: Seq2SeqTransformer, ids: torch.Tensor, name: str) -> None:
    """Token ids ``(batch, length)`` of the model's source (``name`` starting with ``src``) or target
    vocabulary, on the model's device, 1 to max_len long."""
    embedding = model.src_embedding if name.startswith("src") else model.tgt_embedding
    vocab_size = embedding.num_embeddings
    check_token_ids(name, ids, vocab_size, axes="(batch, length)")
    check_device(name, ids, model)
    if not 1 <= ids.shape[1] <= model.max_len:
        what = "longer than" if ids.shape[1] else "no token; at least one, at most"
        raise ValueError(f"{name} has length {ids.shape[1]}, {what} max_len={model.max_len}")


def source_padding(
    model: Seq2SeqTransformer,
    tgt_in_ids: torch.Tensor,
    memory: torch.Tensor,
    src_ids: torch.Tensor | None,
    memory_key_padding_mask: torch.Tensor | None,
) -> torch.Tensor:
    """The source's padding for ``decode`` (True = padding), given or built from ``src_ids``
    (exactly one of them), checked against ``memory`` and ``tgt_in_ids`` (checked too)."""
    check_ids(model, tgt_in_ids, "tgt_in_ids")
    if (src_ids is None) == (memory_key_padding_mask is None):
        raise TypeError("decode needs src_ids or memory_key_padding_mask (exactly one)")
    check_tensor("memory", memory, floating=True, dim=3, axes="(batch, src_len, d_model)")
    if memory_key_padding_mask is None:
        check_ids(model, src_ids, "src_ids")
        memory_key_padding_mask = src_ids == model.pad_id  # (batch, src_len)
    mask, axes = memory_key_padding_mask, "(batch, src_len), True = padding"
    check_tensor(
        "memory_key_padding_mask", mask, dtype=torch.bool, shape=memory.shape[:2], axes=axes
    )
    check_same("batch size", memory=len(memory), tgt_in_ids=len(tgt_in_ids))
    return memory_key_padding_mask


def noam_schedule(d_model: int, warmup_steps: int, factor: float = 1.0) -> Callable[[int], float]:
    """The learning rate of Vaswani et al. (2017) at a step (1, 2, ...): ``lrate = factor · d_model^-0.5
    · min(step^-0.5, step · warmup_steps^-1.5)`` grows linearly for ``warmup_steps`` steps, then decays
    like 1/√step. Step 0 counts as step 1, for ``LambdaLR`` on an optimizer whose ``lr`` is 1."""
    check_ints(d_model=d_model, warmup_steps=warmup_steps)
    check_number("factor", factor, positive=True)

    def rate(step: int) -> float:
        check_ints(minimum=0, step=step)
        step = max(step, 1)
        return factor * d_model**-0.5 * min(step**-0.5, step * warmup_steps**-1.5)

    return rate


def beam_step(
    scores: torch.Tensor, log_probs: torch.Tensor, beam_size: int
) -> tuple[torch.Tensor, torch.Tensor, torch.Tensor]:
    """One step of beam search: of every prefix (total log-probability ``scores``, ``(beams,)``)
    extended by every token (``log_probs``, ``(beams, vocab)``), the ``beam_size`` best, best first,
    as ``(scores, beam_ids, token_ids)``."""
    check_tensor("log_probs", log_probs, floating=True, dim=2)
    beams, vocab = log_probs.shape
    check_tensor("scores", scores, floating=True, shape=(beams,))
    check_ints(beam_size=beam_size)
    candidates = (scores[:, None] + log_probs).flatten()
    top_scores, index = candidates.topk(min(beam_size, candidates.numel()))
    return top_scores, index // vocab, index % vocab
