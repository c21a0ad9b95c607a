"""Seeding, device choice and a short, plain training loop."""

from __future__ import annotations

import os
import random
import time
from collections.abc import Callable, Iterable
from typing import Any

import numpy as np
import torch
from torch import nn

from attention_to_bert.validate import check_int

DEFAULT_THREADS = 2


def set_seed(seed: int = 0, num_threads: int | None = DEFAULT_THREADS) -> None:
    """Seed Python, NumPy and PyTorch, and fix PyTorch's CPU thread count.

    The thread count changes floating-point results on the CPU (sums are split differently), so the
    book fixes it: ``num_threads`` threads, or fewer if the machine has fewer cores. Pass ``None`` to
    leave the thread count alone.
    """
    check_int("seed", seed, minimum=0)
    random.seed(seed)
    np.random.seed(seed)
    torch.manual_seed(seed)
    if num_threads is not None:
        check_int("num_threads", num_threads)
        torch.set_num_threads(min(num_threads, os.cpu_count() or 1))


def choose_device(prefer: str | None = None) -> torch.device:
    """Return the device to compute on: ``prefer`` if given, else CUDA when present, else the CPU.

    The environment variable ``ATTENTION_TO_BERT_DEVICE`` (for example ``cpu``) overrides the choice.
    """
    name = prefer or os.environ.get("ATTENTION_TO_BERT_DEVICE")
    if name:
        device = torch.device(name)
        if device.type == "cuda" and not torch.cuda.is_available():
            raise ValueError(f"device {name!r} was asked for, but CUDA is not available")
        return device
    return torch.device("cuda" if torch.cuda.is_available() else "cpu")


def train(
    model: nn.Module,
    batches: Callable[[], Iterable[Any]],
    loss_fn: Callable[[nn.Module, Any], torch.Tensor],
    optimizer: torch.optim.Optimizer,
    *,
    epochs: int = 1,
    scheduler: Any | None = None,
    clip_grad_norm: float | None = 1.0,
    log_every: int = 0,
    evaluate: Callable[[nn.Module], float] | None = None,
) -> list[float]:
    """Train ``model`` and return the loss of every step.

    ``batches()`` is called once per epoch and yields batches; ``loss_fn(model, batch)`` returns the
    scalar loss of one batch. Every ``log_every`` steps (0: only at the end of each epoch) one
    progress line is printed: epoch, step, mean loss since the last line, elapsed seconds, and
    ``evaluate(model)`` if given (for example held-out accuracy).
    """
    check_int("epochs", epochs)
    losses: list[float] = []
    start = time.perf_counter()
    step = 0
    for epoch in range(1, epochs + 1):
        model.train()
        since_log: list[float] = []
        for batch in batches():
            optimizer.zero_grad(set_to_none=True)
            loss = loss_fn(model, batch)
            loss.backward()
            if clip_grad_norm is not None:
                nn.utils.clip_grad_norm_(model.parameters(), clip_grad_norm)
            optimizer.step()
            if scheduler is not None:
                scheduler.step()
            step += 1
            losses.append(loss.item())
            since_log.append(losses[-1])
            if log_every and step % log_every == 0:
                _log(model, epoch, step, since_log, start, evaluate)
                since_log = []
        if not log_every and since_log:
            _log(model, epoch, step, since_log, start, evaluate)
    model.eval()
    return losses


def _log(model, epoch, step, since_log, start, evaluate) -> None:
    line = f"epoch {epoch:3d}  step {step:5d}  loss {sum(since_log) / len(since_log):.4f}"
    if evaluate is not None:
        was_training = model.training
        model.eval()
        with torch.no_grad():
            line += f"  eval {evaluate(model):.4f}"
        model.train(was_training)
    print(f"{line}  {time.perf_counter() - start:6.1f}s", flush=True)


def count_parameters(model: nn.Module) -> int:
    """The number of trainable parameters of ``model``."""
    return sum(p.numel() for p in model.parameters() if p.requires_grad)
