"""An RNN encoder–decoder with attention (Bahdanau et al., 2015; Luong et al., 2015), and without it.
The encoder is a bidirectional GRU; its outputs ``h_1 .. h_S`` (one vector per source token) are the
keys and the values of the attention, untransformed. At decoder step ``t`` the previous decoder state
``s_{t-1}`` is the query; the context ``c_t = sum_j alpha_{t,j} h_j`` and the previous output token
feed the GRU that computes the new state ``s_t``, and the output layer reads ``[s_t; c_t; e(y_{t-1})]``::

    alpha_t = softmax_j score(s_{t-1}, h_j)          (padded source positions get weight 0)
    c_t     = sum_j alpha_{t,j} h_j
    s_t     = GRU([e(y_{t-1}); c_t], s_{t-1})
    p(y_t)  = softmax(W_o [s_t; c_t; e(y_{t-1})])

``score`` is ``"additive"`` (Bahdanau), ``"dot"`` or ``"general"`` (Luong), or ``None``: no attention,
the context is then the same fixed vector at every step, the encoder's final states (Cho et al., 2014).
Chapter 3 trains it on dates; chapter 6 trains it again to compare with the Transformer."""

from __future__ import annotations

import time
from collections.abc import Callable, Sequence

import torch
import torch.nn.functional as F
from torch import Tensor, nn

from attention_to_bert.attention import AdditiveScore, GeneralScore, dot_score
from attention_to_bert.data.dates import encode_pairs
from attention_to_bert.data.vocabulary import BOS, EOS, Vocabulary
from attention_to_bert.masks import _masked_softmax, _padding_mask, weighted_sum
from attention_to_bert.training import train
from attention_to_bert.validate import (
    check_choice,
    check_instance,
    check_int,
    check_ints,
    check_number,
    check_strings,
    check_tensor,
    check_token_ids,
)

SCORES = ("additive", "dot", "general", None)  # a Seq2Seq's attention scores; None: no attention


class Encoder(nn.Module):
    """Bidirectional GRU over the source tokens: outputs ``(batch, source_len, 2 * hidden_size)``.
    Padded positions are skipped (packed sequences), so the backward GRU starts at each source's last
    real token and the outputs at padded positions are zero. ``final`` ``(batch, 2 * hidden_size)``
    concatenates the last forward state and the last backward state (the one at the first token)."""

    def __init__(
        self, vocab_size: int, embedding_size: int, hidden_size: int, pad_id: int = 0
    ) -> None:
        super().__init__()
        check_ints(vocab_size=vocab_size, embedding_size=embedding_size, hidden_size=hidden_size)
        check_int("pad_id", pad_id, 0, vocab_size - 1)
        self.hidden_size, self.pad_id = hidden_size, pad_id
        self.embedding = nn.Embedding(vocab_size, embedding_size, padding_idx=pad_id)
        self.rnn = nn.GRU(embedding_size, hidden_size, batch_first=True, bidirectional=True)

    def forward(self, source: Tensor, lengths: Tensor) -> tuple[Tensor, Tensor]:
        # source: (batch, source_len) ids, lengths: (batch,), checked by Seq2Seq.encode
        packed = nn.utils.rnn.pack_padded_sequence(
            self.embedding(source), lengths.cpu(), batch_first=True, enforce_sorted=False
        )
        packed_outputs, final = self.rnn(packed)  # final: (2, batch, hidden), forward then backward
        outputs, _ = nn.utils.rnn.pad_packed_sequence(
            packed_outputs, batch_first=True, total_length=source.shape[1]
        )
        return outputs, torch.cat([final[0], final[1]], dim=-1)


class Decoder(nn.Module):
    """A GRU decoder that attends over the encoder outputs at every step (or, with ``score=None``, does not).
    ``step`` computes one output distribution; ``forward`` runs all steps with teacher forcing; it and
    :func:`greedy_decode` project the keys once per sentence (:meth:`project_keys`) for every step."""

    def __init__(
        self,
        vocab_size: int,
        embedding_size: int,
        hidden_size: int,
        encoder_size: int,
        score: str | None = "additive",
    ) -> None:
        super().__init__()
        check_ints(vocab_size=vocab_size, embedding_size=embedding_size)
        check_ints(hidden_size=hidden_size, encoder_size=encoder_size)
        check_choice("score", score, SCORES)
        if score == "dot" and hidden_size != encoder_size:
            raise ValueError(
                f"the dot score needs hidden_size == encoder_size, got {hidden_size}, {encoder_size}"
            )
        self.hidden_size = hidden_size
        self.score: nn.Module | Callable[[Tensor, Tensor], Tensor] | None = None
        if score == "additive":
            self.score = AdditiveScore(hidden_size, encoder_size, hidden_size)
        elif score == "general":
            self.score = GeneralScore(hidden_size, encoder_size)
        elif score == "dot":
            self.score = dot_score
        self.embedding = nn.Embedding(vocab_size, embedding_size)
        self.init_state = nn.Linear(encoder_size, hidden_size)
        self.cell = nn.GRUCell(embedding_size + encoder_size, hidden_size)
        self.output = nn.Linear(hidden_size + encoder_size + embedding_size, vocab_size)

    def start(self, encoder_final: Tensor) -> Tensor:
        """The first decoder state ``s_0 = tanh(W_init h_final + b_init)``: ``(batch, H) -> (batch, hidden)``."""
        return torch.tanh(self.init_state(encoder_final))

    def project_keys(self, encoder_outputs: Tensor) -> Tensor:
        """The keys as the score meets them: ``W_k h_j`` (additive), ``W h_j`` (general) or ``h_j``:
        ``(batch, S, H) -> (batch, S, key_size)``."""
        if isinstance(self.score, nn.Module):
            return self.score.key_projection(encoder_outputs)
        return encoder_outputs

    def _score(self, query: Tensor, keys: Tensor) -> Tensor:  # score(query, h_j), keys projected
        if isinstance(self.score, nn.Module):
            return self.score.score_projected(query, keys)
        return query @ keys.transpose(-2, -1)  # the dot score, unchecked: a step's helper

    def context(
        self,
        state: Tensor,
        encoder_outputs: Tensor,
        encoder_final: Tensor,
        source_mask: Tensor,
        keys: Tensor | None = None,
    ) -> tuple[Tensor, Tensor | None]:
        """The context ``c_t`` ``(batch, encoder_size)`` for query ``state`` ``(batch, hidden)`` and
        its weights ``(batch, source_len)``; ``encoder_outputs`` ``(batch, S, H)``, ``encoder_final``
        ``(batch, H)``, ``source_mask`` ``(batch, S)`` True at padding; ``keys``:
        ``project_keys(encoder_outputs)`` if not given. A step's helper: ``Seq2Seq`` checks."""
        if self.score is None:
            return encoder_final, None
        keys = self.project_keys(encoder_outputs) if keys is None else keys
        # the one query s_{t-1} (batch, 1, hidden); attention's steps, unchecked (Seq2Seq checked)
        mask = source_mask.unsqueeze(1)  # (batch, 1, S)
        weights = _masked_softmax(self._score(state.unsqueeze(1), keys), mask)  # alpha_t
        return weighted_sum(weights, encoder_outputs, mask).squeeze(1), weights.squeeze(1)

    def step(
        self,
        previous_token: Tensor,
        state: Tensor,
        encoder_outputs: Tensor,
        encoder_final: Tensor,
        source_mask: Tensor,
        keys: Tensor | None = None,
    ) -> tuple[Tensor, Tensor, Tensor | None]:
        """One decoder step, ``previous_token`` ``(batch,)`` and the rest as ``context``'s: the logits
        ``(batch, vocab)``, the new state and the weights. A step's helper: ``Seq2Seq`` checks."""
        embedded = self.embedding(previous_token)  # (batch, embedding_size)
        context, weights = self.context(state, encoder_outputs, encoder_final, source_mask, keys)
        state = self.cell(torch.cat([embedded, context], dim=-1), state)
        return self.output(torch.cat([state, context, embedded], dim=-1)), state, weights

    def forward(
        self, target_in: Tensor, encoder_outputs: Tensor, encoder_final: Tensor, source_mask: Tensor
    ) -> tuple[Tensor, Tensor | None]:
        """Teacher forcing (``source_mask``: True = padding): step ``t`` reads the true ``target_in[:, t]``;
        logits ``(batch, T, vocab)`` and weights ``(batch, T, source_len)`` (``None`` without attention);
        the rest as ``context``'s. ``Seq2Seq.forward`` checks."""
        # ``step`` T times, arranged for speed: keys projected and embeddings looked up once, and the
        # output layer, which does not feed back into the recurrence, applied to all steps at the end.
        keys = self.project_keys(encoder_outputs)
        state = self.start(encoder_final)
        embedded = self.embedding(target_in)  # (batch, T, embedding_size)
        states, contexts, all_weights = [], [], []
        for t in range(target_in.shape[1]):  # the recurrence, as in ``step``
            context, weights = self.context(
                state, encoder_outputs, encoder_final, source_mask, keys
            )
            state = self.cell(torch.cat([embedded[:, t], context], dim=-1), state)
            states.append(state)
            contexts.append(context)
            all_weights.append(weights)
        outputs = torch.cat([torch.stack(states, 1), torch.stack(contexts, 1), embedded], dim=-1)
        return self.output(outputs), None if self.score is None else torch.stack(all_weights, dim=1)


class Seq2Seq(nn.Module):
    """Encoder–decoder for character sequences. ``score``: ``"additive"``, ``"dot"``, ``"general"`` or ``None``.
    The encoder GRU has ``hidden_size`` units per direction, the decoder ``2 * hidden_size`` (so that the
    dot score can compare its state with the encoder outputs directly)."""

    def __init__(
        self,
        source_vocab: Vocabulary,
        target_vocab: Vocabulary,
        *,
        score: str | None = "additive",
        embedding_size: int = 32,
        hidden_size: int = 64,
    ) -> None:
        super().__init__()
        check_instance("source_vocab", source_vocab, Vocabulary)
        check_instance("target_vocab", target_vocab, Vocabulary)
        if BOS not in target_vocab or EOS not in target_vocab:
            raise ValueError(f"target_vocab must contain {BOS} and {EOS}")
        self.source_vocab, self.target_vocab = source_vocab, target_vocab
        self.bos_id, self.eos_id = target_vocab.stoi[BOS], target_vocab.stoi[EOS]
        self.pad_id = target_vocab.pad_id
        self.encoder = Encoder(
            len(source_vocab), embedding_size, hidden_size, pad_id=source_vocab.pad_id
        )
        self.decoder = Decoder(
            len(target_vocab), embedding_size, 2 * hidden_size, 2 * hidden_size, score
        )

    def encode(self, source: Tensor, lengths: Tensor) -> tuple[Tensor, Tensor, Tensor]:
        """Encoder outputs ``(batch, S, 2H)``, final state ``(batch, 2H)``, mask ``(batch, S)``, True = padding."""
        check_token_ids("source", source, len(self.source_vocab), axes="(batch, source_len)")
        check_tensor("lengths", lengths, dtype=torch.long, shape=source.shape[:1], axes="(batch,)")
        if lengths.numel() and (int(lengths.min()) < 1 or int(lengths.max()) > source.shape[1]):
            raise ValueError(
                f"lengths must lie in 1..{source.shape[1]} (the source length), got {lengths.tolist()}"
            )
        # (batch, S), True = padding
        mask = _padding_mask(lengths.to(source.device), source.shape[1])
        if (mask & (source != self.encoder.pad_id)).any():
            raise ValueError("lengths must count every token: a source has tokens after its length")
        outputs, final = self.encoder(source, lengths)
        return outputs, final, mask

    def forward(
        self, source: Tensor, lengths: Tensor, target_in: Tensor
    ) -> tuple[Tensor, Tensor | None]:
        """Teacher-forced logits ``(batch, T, target_vocab)`` and attention weights ``(batch, T, S)`` (or None)."""
        outputs, final, mask = self.encode(source, lengths)
        check_token_ids("target_in", target_in, len(self.target_vocab), "(batch, T)")
        if target_in.shape[1] == 0 or len(target_in) != len(source):
            raise ValueError(
                f"target_in must have {len(source)} rows, >= 1 step, got {tuple(target_in.shape)}"
            )
        return self.decoder(target_in, outputs, final, mask)


@torch.no_grad()
def greedy_decode(
    model: Seq2Seq, source: Tensor, max_length: int = 20
) -> tuple[Tensor, Tensor | None]:
    """Decode greedily until every row has made ``<eos>``; ``source`` ``(batch, source_len)`` padded on
    the right. Returns the ids ``(batch, steps <= max_length)`` (``<eos>`` included, then ``<pad>``)
    and the weights ``(batch, steps, source_len)`` (``None`` without attention)."""
    check_instance("model", model, Seq2Seq)
    check_token_ids("source", source, len(model.source_vocab))
    check_int("max_length", max_length)
    if source.shape[0] == 0:  # no sentence: no tokens, no weights
        weights = source.new_zeros(0, 0, source.shape[1], dtype=model.decoder.output.weight.dtype)
        return source.new_zeros(0, 0), None if model.decoder.score is None else weights
    was_training = model.training
    model.eval()
    try:
        lengths = (source != model.source_vocab.pad_id).sum(dim=1)
        outputs, final, mask = model.encode(source, lengths)
        decoder = model.decoder
        keys = decoder.project_keys(outputs)
        state = decoder.start(final)
        token = torch.full((source.shape[0],), model.bos_id, dtype=torch.long, device=source.device)
        finished = torch.zeros(source.shape[0], dtype=torch.bool, device=source.device)
        tokens, all_weights = [], []
        for _ in range(max_length):
            logits, state, weights = decoder.step(token, state, outputs, final, mask, keys)
            token = logits.argmax(dim=-1).masked_fill(finished, model.pad_id)
            tokens.append(token)
            if weights is not None:
                all_weights.append(weights.masked_fill(finished.unsqueeze(1), 0.0))
            finished = finished | (token == model.eos_id)
            if finished.all():
                break
        return torch.stack(tokens, dim=1), (
            torch.stack(all_weights, dim=1) if all_weights else None
        )
    finally:
        model.train(was_training)  # even if decoding raised


def exact_match(predicted: Sequence[str], expected: Sequence[str]) -> float:
    """The fraction of predictions equal to the expected string, character for character."""
    check_strings("predicted", predicted)
    check_strings("expected", expected)
    if len(predicted) != len(expected) or not expected:
        raise ValueError(
            f"need two equally long, non-empty lists, got {len(predicted)} and {len(expected)} items"
        )
    return sum(p == e for p, e in zip(predicted, expected, strict=True)) / len(expected)


def translate(model: Seq2Seq, sources: Sequence[str], batch_size: int = 1000) -> list[str]:
    """Greedy translations of the strings ``sources`` (characters in, characters out), decoded
    ``batch_size`` at a time. Each stops at ``<eos>`` or after ``len(source) + 2`` tokens, so it
    does not depend on the other sources or on ``batch_size``."""
    check_instance("model", model, Seq2Seq)
    check_strings("sources", sources)
    check_int("batch_size", batch_size)
    device = next(model.parameters()).device
    results: list[str] = []
    for begin in range(0, len(sources), batch_size):
        chunk = list(sources[begin : begin + batch_size])
        source, lengths, _ = encode_pairs(
            [(s, "") for s in chunk], model.source_vocab, model.target_vocab
        )
        tokens, _ = greedy_decode(model, source.to(device), int(lengths.max()) + 2)
        for row, length in zip(tokens.tolist(), lengths.tolist(), strict=True):
            results.append("".join(model.target_vocab.decode(row[: length + 2])))
    return results


def fit(
    model: Seq2Seq,
    pairs: Sequence[tuple[str, str]],
    *,
    epochs: int = 10,
    batch_size: int = 128,
    lr: float = 3e-3,
    seed: int = 0,
    log_every: int = 0,
    evaluate: Callable[[Seq2Seq], float] | None = None,
) -> tuple[list[float], float]:
    """Train ``model`` with teacher forcing on (source, target) string pairs with Adam, each epoch
    in a new seeded order, in batches trimmed to their longest source; ``training.train`` does the
    steps (eval mode at the end; ``evaluate`` printed as it logs). Returns (losses, seconds)."""
    check_ints(epochs=epochs, batch_size=batch_size)
    check_int("seed", seed, minimum=0)
    check_number("lr", lr, positive=True)
    device = next(model.parameters()).device
    source, lengths, target = encode_pairs(pairs, model.source_vocab, model.target_vocab)
    generator = torch.Generator().manual_seed(seed)

    def batches():
        order = torch.randperm(len(pairs), generator=generator)
        for begin in range(0, len(order), batch_size):
            index = order[begin : begin + batch_size]
            longest = int(lengths[index].max())
            target_len = int((target[index] != model.pad_id).sum(1).max())
            batch = (source[index, :longest], lengths[index], target[index, :target_len])
            yield tuple(tensor.to(device) for tensor in batch)

    def loss_fn(model, batch):
        batch_source, batch_lengths, batch_target = batch
        logits, _ = model(batch_source, batch_lengths, batch_target[:, :-1])
        # mean cross-entropy of the predicted tokens, <pad> positions ignored
        return F.cross_entropy(
            logits.flatten(0, 1), batch_target[:, 1:].flatten(), ignore_index=model.pad_id
        )

    optimizer = torch.optim.Adam(model.parameters(), lr=lr)
    start = time.perf_counter()
    losses = train(
        model, batches, loss_fn, optimizer, epochs=epochs, log_every=log_every, evaluate=evaluate
    )
    return losses, time.perf_counter() - start
