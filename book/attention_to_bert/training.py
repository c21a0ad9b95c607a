"""Seeding and a short, plain training loop."""

from __future__ import annotations

import os
import random
import time
from collections.abc import Callable, Iterable
from typing import Any

import numpy as np
import torch
from torch import nn

from attention_to_bert.validate import check_instance, check_int, check_number


def set_seed(seed: int = 0, num_threads: int | None = 2) -> None:
    """Seed Python, NumPy and PyTorch, and fix PyTorch's CPU thread count (fewer if the machine has
    fewer cores; ``None`` leaves it alone), which changes how floating-point sums are split."""
    check_int("seed", seed, minimum=0)
    random.seed(seed)
    np.random.seed(seed)
    torch.manual_seed(seed)
    if num_threads is not None:
        check_int("num_threads", num_threads)
        torch.set_num_threads(min(num_threads, os.cpu_count() or 1))


def train(
    model: nn.Module,
    batches: Callable[[], Iterable[Any]],
    loss_fn: Callable[[nn.Module, Any], torch.Tensor],
    optimizer: torch.optim.Optimizer,
    *,
    epochs: int = 1,
    clip_grad_norm: float | None = 1.0,
    log_every: int = 0,
    evaluate: Callable[[nn.Module], float] | None = None,
) -> list[float]:
    """Train ``model`` and return the loss of every step; it ends in eval mode, even if a step raises.
    ``batches()`` yields an epoch's batches; ``loss_fn(model, batch)`` returns a batch's loss. Every
    ``log_every`` steps (0: each epoch) it prints epoch, step, mean loss, ``evaluate(model)``, seconds.
    Gradients are clipped to norm ``clip_grad_norm`` (None: not clipped); a NaN or infinite loss
    stops training with a ValueError (lower the learning rate), before it reaches the weights."""
    check_instance("model", model, nn.Module)
    check_instance("batches", batches, Callable, "a function that returns batches (lambda: rows)")
    check_instance("loss_fn", loss_fn, Callable, "a function: loss_fn(model, batch) -> loss")
    check_instance("optimizer", optimizer, torch.optim.Optimizer, "a torch.optim optimizer")
    check_int("epochs", epochs)
    check_int("log_every", log_every, minimum=0)
    if clip_grad_norm is not None:
        check_number("clip_grad_norm", clip_grad_norm, positive=True)
    if evaluate is not None:
        check_instance("evaluate", evaluate, Callable, "a function: evaluate(model) -> a number")
    losses: list[float] = []
    start = time.perf_counter()

    def log(epoch: int, since: int) -> None:  # the mean loss of the steps from ``since`` on
        recent = losses[since:]
        line = f"epoch {epoch:3d}  step {len(losses):5d}  loss {sum(recent) / len(recent):.4f}"
        if evaluate is not None:
            model.eval()
            with torch.no_grad():
                line += f"  eval {evaluate(model):.4f}"
            model.train()
        print(f"{line}  {time.perf_counter() - start:6.1f}s", flush=True)

    try:
        for epoch in range(1, epochs + 1):
            model.train()
            since = len(losses)  # the first step of the epoch not logged yet
            for batch in batches():
                optimizer.zero_grad(set_to_none=True)
                loss = loss_fn(model, batch)
                if not (isinstance(loss, torch.Tensor) and loss.numel() == 1):
                    raise TypeError(f"loss_fn must return a 1-element tensor, got {loss!r}")
                if not torch.isfinite(loss):
                    step = f"epoch {epoch}, step {len(losses) + 1}"
                    raise ValueError(f"loss_fn returned {loss.item()} at {step}: lower the lr")
                loss.backward()
                if clip_grad_norm is not None:
                    nn.utils.clip_grad_norm_(model.parameters(), clip_grad_norm)
                optimizer.step()
                losses.append(loss.item())
                if log_every and len(losses) % log_every == 0:
                    log(epoch, since)
                    since = len(losses)
            if not log_every and len(losses) > since:
                log(epoch, since)
    finally:
        model.eval()
    return losses


def count_parameters(model: nn.Module) -> int:
    """The number of trainable parameters of ``model``."""
    check_instance("model", model, nn.Module)
    return sum(p.numel() for p in model.parameters() if p.requires_grad)
