"""The checkers of chapter 4: self-attention and the sinusoidal positional encoding."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import torch

from attention_to_bert.checks.checker import Checker, vary


def self_attention_cases() -> list[tuple[str, tuple[torch.Tensor, ...]]]:
    """The test cases of ``self_attention``: (description, (x, w_q, w_k, w_v)), all float32, the dtype
    of an ``nn.Linear``, so that a student may use one."""
    generator = torch.Generator().manual_seed(4)
    shapes = [
        ("a batch of 2 sequences of 5 tokens, d_model=8, d_k=4, d_v=6", (2, 5, 8), 4, 6, 1.0),
        ("one sequence of 3 tokens, d_model=6, d_k=12, d_v=6", (1, 3, 6), 12, 6, 1.0),
        # scaled scores with a median size of about 8,600: exp() overflows without the max trick
        ("large inputs (scores in the thousands), d_model=8, d_k=2, d_v=3", (2, 4, 8), 2, 3, 6.0),
    ]
    cases = []
    for case, x_shape, d_k, d_v, size in shapes:
        sizes = vary(*x_shape, d_k, d_v)  # other sizes in a hidden test
        if sizes != (*x_shape, d_k, d_v):
            *x_shape, d_k, d_v = sizes
            large = "large inputs (scores in the thousands), " if size > 1 else ""
            case = f"{large}x of shape {tuple(x_shape)}, d_k={d_k}, d_v={d_v}"
        x = size * torch.randn(*x_shape, generator=generator)
        w_q, w_k = (size * torch.randn(x_shape[-1], d_k, generator=generator) for _ in range(2))
        w_v = torch.randn(x_shape[-1], d_v, generator=generator)
        cases.append((case, (x, w_q, w_k, w_v)))
    return cases


def self_attention(candidate: Callable[..., Any]) -> bool:
    """Check ``candidate(x, w_q, w_k, w_v) -> (output, weights)``: with Q, K, V = x w_q, x w_k, x w_v,
    weights = softmax(Q K^T / sqrt(d_k)) over the keys and output = weights V."""
    checker = Checker("self_attention")
    for case, inputs in self_attention_cases():
        passed = tuple(t.clone() for t in inputs)
        result = checker.call(candidate, *passed, case=case, pair="(output, weights)")
        output, weights = result or (None, None)  # None: nothing to check
        x, w_q, w_k, w_v = (t.double() for t in inputs)
        d_k = w_k.shape[-1]
        scores = (x @ w_q) @ (x @ w_k).mT
        expected = torch.softmax(scores / d_k**0.5, dim=-1)
        wrong_scores = [
            (scores, "not scaled: divide the scores Q K^T by sqrt(d_k)"),
            (scores / d_k, "divided by d_k; divide by sqrt(d_k) instead"),
            (scores / x.shape[-1] ** 0.5, "divided by sqrt(d_model); d_k is the size of a query"),
            (scores.mT / d_k**0.5, "transposed: row i must hold query i's weights (K Q^T?)"),
        ]
        mistakes = [(torch.softmax(wrong, dim=-1), message) for wrong, message in wrong_scores]
        masked = torch.tensor(False)  # nothing
        if checker.compare(weights, expected, f"{case}: weights", mistakes, 1e-4, masked):
            mixes_x = [(expected @ x, "the output mixes the inputs x, not the values V = x @ w_v")]
            checker.compare(output, expected @ x @ w_v, f"{case}: output", mixes_x, 1e-4)
    return checker.report()


def positional_encoding(candidate: Callable[[int, int], torch.Tensor]) -> bool:
    """Check ``candidate(max_len, d_model)``: PE[pos, 2i] = sin(pos / 10000^(2i/d_model)), PE[pos, 2i+1] = cos(same)."""
    checker = Checker("positional_encoding")
    for max_len, half in [(50, 8), (7, 3), (1, 2)]:
        max_len, half = vary(max_len, half)
        d_model = 2 * half
        case = f"max_len={max_len}, d_model={d_model}"
        position, j = torch.arange(max_len, dtype=torch.float64)[:, None], torch.arange(d_model)
        even = j % 2 == 0
        angle = position / 10000.0 ** ((j - j % 2) / d_model)  # 2i / d_model, shared by a pair
        by_index = position / 10000.0 ** (j / d_model)
        expected = torch.where(even, angle.sin(), angle.cos())
        swapped = torch.where(even, angle.cos(), angle.sin())
        by_j = torch.where(even, by_index.sin(), by_index.cos())
        halves = torch.cat([expected[:, even], expected[:, ~even]], dim=-1)
        mistakes = [
            (swapped, "sin and cos swapped: dimensions 2i take the sine, 2i+1 the cosine"),
            (halves, "sines in the first half, cosines in the second; the paper interleaves them"),
            (by_j, "the exponent uses the dimension index j; use 2i / d_model with i = j // 2"),
        ]
        actual = checker.call(candidate, max_len, d_model, case=case)
        checker.compare(actual, expected, case, mistakes, atol=1e-4)
    return checker.report()
