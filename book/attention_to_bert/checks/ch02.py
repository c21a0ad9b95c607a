"""The checkers of chapter 2: HAN's attention layer (context vector as the query)."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import torch

from attention_to_bert.checks.ch01 import EMPTY_ROW_NAN
from attention_to_bert.checks.checker import Checker, reference_softmax, vary


def han_attention(candidate: Callable[..., Any]) -> bool:
    """Check ``candidate(values, padding_mask, weight, bias, context) -> (pooled, weights)``: weights =
    masked softmax of tanh(W h_i + b) · context (0 on padding), pooled = Σ_i weights_i h_i.

    The inputs are float32, the dtype of ``nn.Linear`` and of the chapter's models, so an answer built
    from torch modules runs as it is; an input changed in place is reported."""
    checker = Checker("han_attention")
    generator = torch.Generator().manual_seed(2)
    cases = [  # (case, lengths, feature size, attention size): sizes grow in a hidden test
        ("no padding", [*vary(5)] * 3, *vary(6, 4)),
        ("sentences of different lengths", [*vary(5), 3, 1], *vary(6, 4)),
        ("a fully padded row (a padded sentence)", [*vary(4), 0, 2], *vary(6, 4)),
    ]
    for case, lengths, features, size in cases:
        padding_mask = torch.arange(max(lengths)) >= torch.tensor(lengths)[:, None]
        values = torch.randn(*padding_mask.shape, features, generator=generator)
        values = values.masked_fill(padding_mask.unsqueeze(-1), 0.0)
        weight = torch.randn(size, features, generator=generator)
        bias = torch.randn(size, generator=generator)
        context = 2 * torch.randn(size, generator=generator)  # a peaked softmax
        arguments = (values, padding_mask, weight, bias, context)
        pair = "(pooled, weights)"
        passed = [argument.clone() for argument in arguments]
        result = checker.call(candidate, *passed, case=case, pair=pair)
        pooled, weights = result or (None, None)  # None: nothing to check
        # the expected answer in float64, from the same float32 inputs
        keys = values.double() @ weight.double().T + bias.double()
        expected = reference_softmax(torch.tanh(keys) @ context.double(), padding_mask)
        without_tanh = reference_softmax(keys @ context.double(), padding_mask)
        tanh = [(without_tanh, "they match keys without the tanh: u_i = tanh(W h_i + b)")]
        if checker.compare(weights, expected, f"{case}: weights", tanh, masked=padding_mask):
            pooled_what = f"{case}: pooled (the weighted sum of the values h_i, not of the keys)"
            checker.compare(
                pooled, (expected.unsqueeze(-1) * values.double()).sum(dim=-2), pooled_what
            )
    if not checker.problems:
        _gradient(checker, candidate, arguments)  # the last case: a fully padded sentence
    return checker.report()


def _gradient(checker: Checker, candidate: Callable[..., Any], arguments: tuple) -> None:
    """No gradient may be NaN, even through a fully padded sentence."""
    case = "the gradient through a fully padded sentence"
    leaves = [t.clone().requires_grad_(t.is_floating_point()) for t in arguments]
    result = checker.call(candidate, *leaves, case=case, pair="(pooled, weights)")
    if result is None or not isinstance(result[0], torch.Tensor) or not result[0].requires_grad:
        checker.expect(result is None, f"{case}: pooled does not depend on the inputs (detached?)")
        return
    differentiable = [leaf for leaf in leaves if leaf.requires_grad]
    probe = torch.linspace(-1.0, 1.0, result[0].numel()).reshape(result[0].shape)
    try:
        gradients = torch.autograd.grad(
            (result[0] * probe).sum(), differentiable, allow_unused=True
        )
    except Exception as error:  # report, don't crash
        checker.expect(False, f"{case}: no gradient flows back: {error}")
        return
    names = ("values", "weight", "bias", "context")
    for name, gradient in zip(names, gradients, strict=True):
        if gradient is not None and gradient.isnan().any():
            checker.expect(False, f"{case}: the gradient of the {name} {EMPTY_ROW_NAN}")
            return
