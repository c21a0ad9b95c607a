"""The checkers of chapter 2: HAN's attention layer (context vector as the query)."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import torch

from attention_to_bert.checks.checker import Checker


def _reference_han_attention(
    values: torch.Tensor,
    padding_mask: torch.Tensor,
    weight: torch.Tensor,
    bias: torch.Tensor,
    context: torch.Tensor,
) -> tuple[torch.Tensor, torch.Tensor]:
    keys = torch.tanh(values @ weight.T + bias)
    scores = (keys @ context).masked_fill(padding_mask, torch.finfo(values.dtype).min)
    weights = torch.softmax(scores, dim=-1).masked_fill(padding_mask, 0.0)
    return (weights.unsqueeze(-1) * values).sum(dim=-2), weights


def han_attention(candidate: Callable[..., Any]) -> bool:
    """Check ``candidate(values, padding_mask, weight, bias, context) -> (pooled, weights)``.

    ``values`` ``(batch, length, d)`` are the GRU states h_i, ``padding_mask`` ``(batch, length)`` is True
    at padding, ``weight`` ``(a, d)`` and ``bias`` ``(a,)`` make the keys u_i = tanh(W h_i + b), and
    ``context`` ``(a,)`` is the query u. Expected: weights ``(batch, length)`` = masked softmax of
    u_i . u (zeros on padding and on fully padded rows), pooled ``(batch, d)`` = sum_i weights_i h_i.
    """
    checker = Checker("han_attention")
    generator = torch.Generator().manual_seed(2)
    cases = [
        ("no padding", [5, 5, 5]),
        ("sentences of different lengths", [5, 3, 1]),
        ("a fully padded row (a padded sentence)", [4, 0, 2]),
    ]
    for case, lengths in cases:
        batch, length, size, attention_size = len(lengths), max(lengths), 6, 4
        values = torch.randn(batch, length, size, generator=generator, dtype=torch.float64)
        padding_mask = torch.arange(length) >= torch.tensor(lengths)[:, None]
        values = values.masked_fill(padding_mask.unsqueeze(-1), 0.0)
        weight = torch.randn(attention_size, size, generator=generator, dtype=torch.float64)
        bias = torch.randn(attention_size, generator=generator, dtype=torch.float64)
        context = 2 * torch.randn(attention_size, generator=generator, dtype=torch.float64)
        arguments = (values, padding_mask, weight, bias, context)
        clones = (a.clone() for a in arguments)
        result = checker.call(candidate, *clones, case=case, pair="(pooled, weights)")
        if result is None:
            continue
        pooled, weights = result
        expected_pooled, expected_weights = _reference_han_attention(*arguments)
        if (
            isinstance(weights, torch.Tensor)
            and tuple(weights.shape) == (batch, length)
            and weights.is_floating_point()
        ):
            weights = weights.detach().double()
            if torch.isnan(weights).any():
                checker.expect(
                    False,
                    f"{case}: the weights contain NaN; a fully padded row must get zeros "
                    f"(mask with a large negative number, or zero the row after the softmax)",
                )
                continue
            if padding_mask.any() and weights[padding_mask].abs().max() > 1e-6:
                checker.expect(
                    False,
                    f"{case}: padded positions get weight up to "
                    f"{weights[padding_mask].abs().max().item():.3g}; they must get exactly 0",
                )
                continue
            sums = weights.sum(-1)
            real = torch.tensor(lengths) > 0
            if not torch.allclose(sums[real], torch.ones_like(sums[real])):
                checker.expect(
                    False,
                    f"{case}: the weights of a row do not sum to 1 (got "
                    f"{[round(v, 3) for v in sums.tolist()]}); take the softmax over the positions",
                )
                continue
            scores_without_tanh = ((values @ weight.T + bias) @ context).masked_fill(
                padding_mask, -1e30
            )
            without_tanh = torch.softmax(scores_without_tanh, -1).masked_fill(padding_mask, 0.0)
            wrong = not torch.allclose(weights, expected_weights, atol=1e-5)
            if wrong and torch.allclose(weights, without_tanh, atol=1e-5):
                checker.expect(
                    False,
                    f"{case}: the weights match keys without the tanh; the keys are u_i = tanh(W h_i + b)",
                )
                continue
        if not checker.expect_close(weights, expected_weights, f"{case}: weights"):
            continue
        checker.expect_close(
            pooled,
            expected_pooled,
            f"{case}: pooled (the weighted sum of the values h_i, not of the keys)",
        )
    return checker.report()
