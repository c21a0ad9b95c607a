"""A small Transformer translator (chapter 6): token ids in, next-token logits out; greedy decoding,
beam search and the warm-up learning-rate schedule of Vaswani et al. (2017)."""

from __future__ import annotations

import math
from collections.abc import Callable

import torch
from torch import nn

from attention_to_bert.data.vocabulary import BOS, EOS, PAD, Vocabulary
from attention_to_bert.multihead import causal_mask, padding_mask_from_ids
from attention_to_bert.positional import PositionalEncoding
from attention_to_bert.transformer import Transformer
from attention_to_bert.validate import check_int, check_ints, check_token_ids

_SPECIAL_IDS = Vocabulary([]).stoi  # where data.Vocabulary puts <pad>, <bos> and <eos>


class Seq2SeqTransformer(nn.Module):
    """A small sequence-to-sequence Transformer: token ids in, next-token logits out.

    Source and target tokens are embedded, scaled by √d_model and given positions
    (:class:`PositionalEncoding`); a :class:`Transformer` encodes the source and decodes the target
    under a causal mask; a linear *generator* turns each decoder output into logits over the target
    vocabulary (the softmax is left to the loss). Padding (``pad_id``) is masked out everywhere;
    ``bos_id`` and ``eos_id`` (those of ``data.Vocabulary`` by default) start and end an output.
    """

    def __init__(
        self,
        src_vocab_size: int,
        tgt_vocab_size: int,
        d_model: int = 64,
        num_heads: int = 4,
        num_layers: int = 2,
        d_ff: int = 256,
        dropout: float = 0.1,
        max_len: int = 64,
        pad_id: int = _SPECIAL_IDS[PAD],
        bos_id: int = _SPECIAL_IDS[BOS],
        eos_id: int = _SPECIAL_IDS[EOS],
    ) -> None:
        super().__init__()
        check_ints(src_vocab_size=src_vocab_size, tgt_vocab_size=tgt_vocab_size)
        check_ints(num_layers=num_layers, max_len=max_len)
        special_ids = {"pad_id": pad_id, "bos_id": bos_id, "eos_id": eos_id}
        check_ints(minimum=0, **special_ids)
        for name, value in special_ids.items():
            if value >= min(src_vocab_size, tgt_vocab_size):
                raise ValueError(f"{name} must be a token id of both vocabularies, got {value}")
        self.d_model, self.max_len = d_model, max_len
        self.pad_id, self.bos_id, self.eos_id = pad_id, bos_id, eos_id
        self.src_embedding = nn.Embedding(src_vocab_size, d_model, padding_idx=pad_id)
        self.tgt_embedding = nn.Embedding(tgt_vocab_size, d_model, padding_idx=pad_id)
        self.positional_encoding = PositionalEncoding(d_model, max_len=max_len, dropout=dropout)
        self.transformer = Transformer(d_model, num_heads, num_layers, num_layers, d_ff, dropout)
        self.generator = nn.Linear(d_model, tgt_vocab_size)
        # std d_model^-0.5: after the √d_model scaling, entries of std 1, like the positions
        for embedding in (self.src_embedding, self.tgt_embedding):
            nn.init.normal_(embedding.weight, std=d_model**-0.5)
            nn.init.zeros_(embedding.weight[pad_id])

    def _check_ids(self, ids: torch.Tensor, name: str, vocab_size: int) -> None:
        check_token_ids(name, ids, vocab_size, axes="(batch, length)")
        if ids.shape[1] > self.max_len:
            raise ValueError(
                f"{name} has length {ids.shape[1]}, longer than max_len={self.max_len}"
            )

    def _embed(self, embedding: nn.Embedding, ids: torch.Tensor) -> torch.Tensor:
        return self.positional_encoding(embedding(ids) * math.sqrt(self.d_model))

    def encode(self, src_ids: torch.Tensor) -> tuple[torch.Tensor, list[torch.Tensor]]:
        """Encode ``src_ids`` (batch, src_len) into memory (batch, src_len, d_model) and attention weights."""
        self._check_ids(src_ids, "src_ids", self.src_embedding.num_embeddings)
        return self.transformer.encode(
            self._embed(self.src_embedding, src_ids),
            src_key_padding_mask=padding_mask_from_ids(src_ids, self.pad_id),
        )

    def decode(
        self, tgt_in_ids: torch.Tensor, memory: torch.Tensor, src_ids: torch.Tensor
    ) -> tuple[torch.Tensor, list[torch.Tensor], list[torch.Tensor]]:
        """Logits (batch, tgt_len, tgt_vocab) for the next token after each prefix of ``tgt_in_ids``.

        Also returns the decoder's masked self-attention and cross-attention weights, one per layer.
        """
        self._check_ids(tgt_in_ids, "tgt_in_ids", self.tgt_embedding.num_embeddings)
        length = tgt_in_ids.shape[1]
        output, self_weights, cross_weights = self.transformer.decode(
            self._embed(self.tgt_embedding, tgt_in_ids),
            memory,
            tgt_mask=causal_mask(length, device=tgt_in_ids.device),
            tgt_key_padding_mask=padding_mask_from_ids(tgt_in_ids, self.pad_id),
            memory_key_padding_mask=padding_mask_from_ids(src_ids, self.pad_id),
        )
        return self.generator(output), self_weights, cross_weights

    def forward(
        self, src_ids: torch.Tensor, tgt_in_ids: torch.Tensor
    ) -> tuple[torch.Tensor, dict[str, list[torch.Tensor]]]:
        """Return next-token logits (batch, tgt_len, tgt_vocab) and the attention weights of every layer.

        ``tgt_in_ids`` is the target shifted right (it starts with ``<bos>``); the attention dict has
        the keys ``"encoder"``, ``"decoder"`` and ``"cross"``, each a list of (batch, heads, q, k).
        """
        self._check_ids(src_ids, "src_ids", self.src_embedding.num_embeddings)
        if src_ids.shape[0] != tgt_in_ids.shape[0]:
            raise ValueError(
                "src_ids and tgt_in_ids must have the same batch size, "
                f"got {src_ids.shape[0]} and {tgt_in_ids.shape[0]}"
            )
        memory, encoder_weights = self.encode(src_ids)
        logits, self_weights, cross_weights = self.decode(tgt_in_ids, memory, src_ids)
        return logits, {"encoder": encoder_weights, "decoder": self_weights, "cross": cross_weights}


def _check_max_length(model: Seq2SeqTransformer, max_length: int) -> None:
    check_int("max_length", max_length)
    if max_length + 1 > model.max_len:
        raise ValueError(
            f"max_length + 1 must be <= the model's max_len={model.max_len}, got {max_length}"
        )


@torch.no_grad()
def greedy_decode(
    model: Seq2SeqTransformer, source: torch.Tensor, max_length: int = 20
) -> tuple[torch.Tensor, torch.Tensor | None]:
    """Decode greedily: at each step feed back the most likely token, until every row has made ``<eos>``.

    The same signature as ``seq2seq.greedy_decode``. Returns the token ids ``(batch, steps)``
    (``<eos>`` included; after it, ``model.pad_id``), with ``steps <= max_length``, and the last
    decoder layer's cross-attention weights ``(batch, heads, steps, source_len)`` (``None`` if the
    model returns none): row t is the query that chose token t. The source is encoded once; the
    decoder reruns on the growing prefix (no cache: simple, and fast enough for short outputs).
    """
    _check_max_length(model, max_length)
    was_training = model.training
    model.eval()
    memory, _ = model.encode(source)
    batch = source.shape[0]
    prefix = torch.full((batch, 1), model.bos_id, dtype=torch.long, device=source.device)
    finished = torch.zeros(batch, dtype=torch.bool, device=source.device)
    for _ in range(max_length):
        logits, _, cross_weights = model.decode(prefix, memory, source)
        next_ids = logits[:, -1].argmax(dim=-1).masked_fill(finished, model.pad_id)
        prefix = torch.cat([prefix, next_ids[:, None]], dim=1)
        finished |= next_ids.eq(model.eos_id)
        if finished.all():
            break
    model.train(was_training)
    return prefix[:, 1:], (cross_weights[-1] if cross_weights else None)


@torch.no_grad()
def beam_search(
    model: Seq2SeqTransformer, source: torch.Tensor, max_length: int = 20, beam_size: int = 4
) -> list[tuple[list[int], float]]:
    """Translate ONE source sequence (shape (1, src_len)) keeping the ``beam_size`` best prefixes.

    Returns the finished hypotheses, best first, as ``(ids ending with <eos>, total log-probability)``
    (unfinished ones are included if none finished within ``max_length`` steps).
    """
    if source.dim() != 2 or source.shape[0] != 1:
        raise ValueError(
            f"beam_search translates one sequence: source must have shape (1, src_len), got {tuple(source.shape)}"
        )
    check_int("beam_size", beam_size)
    _check_max_length(model, max_length)
    was_training = model.training
    model.eval()
    memory, _ = model.encode(source)
    beams = torch.full((1, 1), model.bos_id, dtype=torch.long, device=source.device)
    scores = torch.zeros(1, device=source.device)
    finished: list[tuple[list[int], float]] = []
    for _ in range(max_length):
        count = beams.shape[0]
        logits, _, _ = model.decode(beams, memory.expand(count, -1, -1), source.expand(count, -1))
        candidates = (scores[:, None] + logits[:, -1].log_softmax(dim=-1)).flatten()
        top_scores, top_indices = candidates.topk(min(beam_size, candidates.numel()))
        vocab = logits.shape[-1]
        beams = torch.cat([beams[top_indices // vocab], (top_indices % vocab)[:, None]], dim=1)
        ended = beams[:, -1].eq(model.eos_id)
        pairs = zip(beams[ended], top_scores[ended], strict=True)
        finished += [(beam[1:].tolist(), score.item()) for beam, score in pairs]
        beams, scores = beams[~ended], top_scores[~ended]
        if len(finished) >= beam_size or beams.shape[0] == 0:
            break
    if not finished:
        finished = [
            (beam[1:].tolist(), score.item()) for beam, score in zip(beams, scores, strict=True)
        ]
    model.train(was_training)
    return sorted(finished, key=lambda hypothesis: hypothesis[1], reverse=True)


def noam_schedule(d_model: int, warmup_steps: int, factor: float = 1.0) -> Callable[[int], float]:
    """The learning rate of Vaswani et al. (2017), as a function of the step (1, 2, ...).

    ``lrate = factor · d_model^-0.5 · min(step^-0.5, step · warmup_steps^-1.5)``: it grows linearly
    for ``warmup_steps`` steps, peaks there, then decays like 1/√step. Step 0 is treated as step 1,
    so that it can be used with ``torch.optim.lr_scheduler.LambdaLR`` on an optimizer whose ``lr`` is 1.
    """
    check_ints(d_model=d_model, warmup_steps=warmup_steps)
    if factor <= 0:
        raise ValueError(f"factor must be > 0, got {factor}")

    def rate(step: int) -> float:
        step = max(int(step), 1)
        return factor * d_model**-0.5 * min(step**-0.5, step * warmup_steps**-1.5)

    return rate
