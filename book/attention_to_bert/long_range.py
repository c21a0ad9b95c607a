"""Chapter 6's long-range test: reverse a string of n letters (``data.reversal``), chapter 3's RNN
with attention (Adam at 1e-2, its tuned rate) against chapter 6's Transformer (Adam with the warm-up
schedule), each on fresh seeded batches of 32 for a budget of CPU seconds or a number of steps,
with cross-entropy and gradient clipping at norm 1.0. ``experiments/ch06_long_range.py`` runs it all."""

from __future__ import annotations

import time
from collections.abc import Callable

import torch
import torch.nn.functional as F
from torch import nn

from attention_to_bert import seq2seq, set_seed
from attention_to_bert.data import encode_pairs
from attention_to_bert.data.reversal import VOCAB, reversal_pairs
from attention_to_bert.translator import Seq2SeqTransformer, noam_schedule
from attention_to_bert.validate import check_instance, check_int, check_number

BATCH = 32
MODELS = ("rnn", "transformer")


def make_model(name: str, length: int) -> nn.Module:
    """The chapter's RNN with attention (``"rnn"``: additive score, 16-wide embeddings, 32 GRU units
    a direction) or Transformer (``"transformer"``: d_model 64, 4 heads, 2 + 2 layers, d_ff 128)."""
    check_int("length", length)
    if name == "rnn":
        return seq2seq.Seq2Seq(VOCAB, VOCAB, score="additive", embedding_size=16, hidden_size=32)
    if name == "transformer":
        sizes = {"d_model": 64, "num_heads": 4, "num_layers": 2, "d_ff": 128, "dropout": 0.0}
        return Seq2SeqTransformer(
            len(VOCAB), len(VOCAB), **sizes, max_len=length + 2, pad_id=VOCAB.pad_id
        )
    raise ValueError(f"name must be one of {MODELS}, got {name!r}")


def logits_of(model: nn.Module, source: torch.Tensor, target: torch.Tensor) -> torch.Tensor:
    """Teacher-forced logits (batch, n + 1, vocab) for ``target`` framed as <bos> ... <eos>."""
    what = "make_model('rnn' or 'transformer', ...)"
    check_instance("model", model, (seq2seq.Seq2Seq, Seq2SeqTransformer), what)
    if isinstance(model, seq2seq.Seq2Seq):
        lengths = torch.full((len(source),), source.shape[1])
        return model(source, lengths, target[:, :-1])[0]
    return model(source, target[:, :-1])[0]


def train_reversal(
    name: str,
    length: int,
    seed: int,
    seconds: float | None = None,
    steps: int | None = None,
    evaluate: Callable[[nn.Module], dict] | None = None,
) -> dict:
    """Train model ``name`` on fresh strings of ``length`` letters for ``seconds`` CPU seconds (one
    thread) or ``steps`` steps (exactly one of the two). Returns the losses, steps and CPU seconds,
    and what ``evaluate(model)`` returns (``experiments/ch06_long_range.py`` scores held-out strings)."""
    if (seconds is None) == (steps is None):
        raise ValueError("train_reversal needs seconds or steps (exactly one)")
    check_int("length", length)
    check_int("seed", seed, minimum=0)
    if evaluate is not None:
        check_instance("evaluate", evaluate, Callable, "a function: evaluate(model) -> dict")
    if seconds is not None:
        check_number("seconds", seconds, positive=True)
    else:
        check_int("steps", steps)
    set_seed(seed, num_threads=1)
    model = make_model(name, length)
    if name == "rnn":
        optimizer = torch.optim.Adam(model.parameters(), lr=1e-2)
        scheduler = None
    else:
        optimizer = torch.optim.Adam(model.parameters(), lr=1.0, betas=(0.9, 0.98), eps=1e-9)
        scheduler = torch.optim.lr_scheduler.LambdaLR(optimizer, noam_schedule(64, 50, 0.5))
    data = torch.Generator().manual_seed(1000 + seed)
    losses: list[float] = []
    spent = 0.0
    model.train()
    while (spent < seconds) if seconds is not None else (len(losses) < steps):
        start = time.process_time()
        source, _, target = encode_pairs(reversal_pairs(BATCH, length, data), VOCAB, VOCAB)
        optimizer.zero_grad()
        logits = logits_of(model, source, target)
        loss = F.cross_entropy(logits.flatten(0, 1), target[:, 1:].flatten())
        loss.backward()
        nn.utils.clip_grad_norm_(model.parameters(), max_norm=1.0)
        optimizer.step()
        if scheduler is not None:
            scheduler.step()
        spent += time.process_time() - start
        losses.append(round(loss.item(), 4))
    result = {
        "model": name,
        "length": length,
        "seed": seed,
        "steps": len(losses),
        "training_cpu_seconds": round(spent, 1),
        "parameters": sum(p.numel() for p in model.parameters()),
        "last_losses_mean": round(sum(losses[-20:]) / len(losses[-20:]), 4),
        "losses": losses,
    }
    return result if evaluate is None else result | evaluate(model)
