"""The checkers of chapter 8: masked-LM scores only where a token was chosen."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import torch

from attention_to_bert.checks.checker import Checker, vary


def masked_scores(candidate: Callable[..., Any]) -> bool:
    """Check ``candidate(hidden, labels, table, bias) -> (scores, targets)``: the vocabulary scores
    ``h_i W_tok^T + b`` at the positions whose label is not -100 only, ``(num_chosen, vocab)``, and
    the labels there, ``(num_chosen,)``; no input modified."""
    checker = Checker("masked_scores")
    generator = torch.Generator().manual_seed(0)
    batch, length, width, vocab = vary(3, 9, 8, 40)
    hidden = torch.randn(batch, length, width, generator=generator)
    table = torch.randn(vocab, width, generator=generator)
    bias = torch.randn(vocab, generator=generator)
    labels = torch.full((batch, length), -100)
    chosen = torch.rand(batch, length, generator=generator) < 0.3
    chosen[0, 1] = True
    labels[chosen] = torch.randint(5, vocab, (int(chosen.sum()),), generator=generator)
    inputs = [tensor.clone() for tensor in (hidden, labels, table, bias)]
    result = checker.call(
        candidate,
        *inputs,
        case=f"{batch} sequences of {length} positions",
        pair="(scores, targets)",
    )
    if result is None:
        return checker.report()
    scores, targets = result
    every = hidden @ table.T + bias
    checker.compare(
        scores,
        every[chosen],
        "scores",
        mistakes=[
            (every, "scores at every position: keep only the rows where labels != -100"),
            (every[~chosen], "scores at the positions NOT chosen: keep labels != -100"),
            ((hidden @ table.T)[chosen], "the bias b is missing"),
        ],
    )
    if checker.compare(
        targets,
        labels[chosen],
        "targets",
        mistakes=[(labels, "targets must be the labels at the chosen positions only")],
    ):
        checker.expect(
            targets.dtype == labels.dtype,
            f"targets: dtype {targets.dtype}, expected {labels.dtype} (the token ids as they are "
            "in labels: cross_entropy takes class ids as integers)",
        )
    return checker.report()
