"""The checkers of chapter 3: one attention step of the seq2seq decoder."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import torch

from attention_to_bert.checks.checker import Checker


def _reference_attention_step(
    state: torch.Tensor, encoder_outputs: torch.Tensor, lengths: torch.Tensor
) -> tuple[torch.Tensor, torch.Tensor]:
    scores = torch.einsum("bd,bsd->bs", state, encoder_outputs)
    padded = torch.arange(encoder_outputs.shape[1]) >= lengths[:, None]
    weights = torch.softmax(scores.masked_fill(padded, float("-inf")), dim=-1)
    return torch.einsum("bs,bsd->bd", weights, encoder_outputs), weights


def attention_step(candidate: Callable[[torch.Tensor, torch.Tensor, torch.Tensor], Any]) -> bool:
    """Check ``candidate(state, encoder_outputs, lengths) -> (context, weights)``, one decoder step of dot attention.

    ``state`` ``(batch, d)`` is the query s_{t-1}; ``encoder_outputs`` ``(batch, source_len, d)`` are keys and
    values; ``lengths`` ``(batch,)`` the real source lengths (the rest is padding). Expected: ``weights``
    ``(batch, source_len)`` = softmax over the real positions of s_{t-1} . h_j, exactly 0 on padding, and
    ``context`` ``(batch, d)`` = sum_j weights_j h_j.
    """
    checker = Checker("attention_step")
    generator = torch.Generator().manual_seed(3)
    cases = [
        ("3 sources of lengths 5, 2, 4 padded to 5", 3, 5, 4, [5, 2, 4]),
        ("2 sources without padding", 2, 4, 3, [4, 4]),
        ("a source of length 1 padded to 6", 1, 6, 2, [1]),
    ]
    for case, batch, source_len, size, lengths in cases:
        state = torch.randn(batch, size, generator=generator, dtype=torch.float64)
        outputs = torch.randn(batch, source_len, size, generator=generator, dtype=torch.float64)
        lengths_tensor = torch.tensor(lengths)
        for index, length in enumerate(lengths):
            outputs[index, length:] = 0.0  # like the encoder's outputs at padded positions
        arguments = (state.clone(), outputs.clone(), lengths_tensor.clone())
        result = checker.call(candidate, *arguments, case=case, pair="(context, weights)")
        if result is None:
            continue
        context, weights = result
        expected_context, expected_weights = _reference_attention_step(
            state, outputs, lengths_tensor
        )
        shaped = isinstance(weights, torch.Tensor) and tuple(weights.shape) == (batch, source_len)
        if shaped and weights.is_floating_point():
            weights = weights.detach().double()
            padded = torch.arange(source_len) >= lengths_tensor[:, None]
            if (
                padded.any()
                and not torch.isnan(weights).any()
                and weights[padded].abs().max() > 1e-6
            ):
                checker.expect(
                    False,
                    f"{case}: padded source positions get weight up to "
                    f"{weights[padded].abs().max().item():.3g}; they must get exactly 0 "
                    f"(mask the positions j >= length before the softmax)",
                )
                continue
            sums = weights.sum(-1)
            if not torch.isnan(weights).any() and not torch.allclose(sums, torch.ones_like(sums)):
                checker.expect(
                    False,
                    f"{case}: the weights of a source do not sum to 1 (got "
                    f"{[round(v, 3) for v in sums.tolist()]}); take the softmax over the source positions",
                )
                continue
        if not checker.expect_close(weights, expected_weights, f"{case}: weights"):
            continue
        checker.expect_close(context, expected_context, f"{case}: context")
    return checker.report()
