"""The checkers of chapter 4: self-attention and the sinusoidal positional encoding."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import torch

from attention_to_bert.checks.checker import Checker


def _reference_self_attention(
    x: torch.Tensor, w_q: torch.Tensor, w_k: torch.Tensor, w_v: torch.Tensor
) -> tuple[torch.Tensor, torch.Tensor]:
    x, w_q, w_k, w_v = (t.double() for t in (x, w_q, w_k, w_v))
    query, key, value = x @ w_q, x @ w_k, x @ w_v
    weights = torch.softmax(query @ key.transpose(-2, -1) / w_q.shape[-1] ** 0.5, dim=-1)
    return weights @ value, weights


def self_attention(candidate: Callable[..., Any]) -> bool:
    """Check ``candidate(x, w_q, w_k, w_v) -> (output, weights)``, single-head self-attention.

    ``x`` is ``(batch, n, d_model)``, ``w_q`` and ``w_k`` are ``(d_model, d_k)``, ``w_v`` is
    ``(d_model, d_v)``; the answer is ``output`` ``(batch, n, d_v)`` and ``weights`` ``(batch, n, n)``
    with ``weights = softmax(Q K^T / sqrt(d_k))`` row by row and ``output = weights V``.
    """
    checker = Checker("self_attention")
    generator = torch.Generator().manual_seed(4)
    cases = [
        ("a batch of 2 sequences of 5 tokens, d_model=8, d_k=4, d_v=6", (2, 5, 8), 4, 6, 1.0),
        ("one sequence of 3 tokens, d_model=6, d_k=12, d_v=6", (1, 3, 6), 12, 6, 1.0),
        ("large inputs (scores in the hundreds), d_model=8, d_k=2, d_v=3", (2, 4, 8), 2, 3, 6.0),
    ]
    for case, x_shape, d_k, d_v, size in cases:
        d_model = x_shape[-1]
        x = size * torch.randn(*x_shape, generator=generator)
        w_q, w_k = (size * torch.randn(d_model, d_k, generator=generator) for _ in range(2))
        w_v = torch.randn(d_model, d_v, generator=generator)
        arguments = (x.clone(), w_q.clone(), w_k.clone(), w_v.clone())
        result = checker.call(candidate, *arguments, case=case, pair="(output, weights)")
        if result is None:
            continue
        output, weights = result
        expected_output, expected_weights = _reference_self_attention(x, w_q, w_k, w_v)
        if _diagnose_self_attention_weights(checker, weights, x, w_q, w_k, expected_weights, case):
            if (
                isinstance(output, torch.Tensor)
                and output.shape == x.shape
                and torch.allclose(
                    output.detach().double(), expected_weights @ x.double(), atol=1e-4
                )
            ):
                checker.expect(
                    False,
                    f"{case}: the output mixes the inputs x; it must mix the values V = x @ w_v",
                )
                continue
            checker.expect_close(output, expected_output, f"{case}: output", atol=1e-4)
    return checker.report()


def _diagnose_self_attention_weights(
    checker: Checker,
    weights: Any,
    x: torch.Tensor,
    w_q: torch.Tensor,
    w_k: torch.Tensor,
    expected: torch.Tensor,
    case: str,
) -> bool:
    """Name the first typical mistake in the attention weights; return True when they are right."""
    if not isinstance(weights, torch.Tensor) or tuple(weights.shape) != tuple(expected.shape):
        return checker.expect_close(weights, expected, f"{case}: weights")
    value = weights.detach().double()
    if not torch.isfinite(value).all():
        return checker.expect(
            False,
            f"{case}: NaN or inf in the weights; subtract each row's maximum before exp (or use torch.softmax)",
        )
    if not torch.allclose(value.sum(dim=-1), torch.ones_like(value[..., 0]), atol=1e-4):
        if torch.allclose(value.sum(dim=-2), torch.ones_like(value[..., 0]), atol=1e-4):
            return checker.expect(
                False,
                f"{case}: the columns sum to 1, not the rows: take the softmax over the last dimension (keys)",
            )
        return checker.expect(False, f"{case}: the rows of the weights do not sum to 1")
    query, key = x.double() @ w_q.double(), x.double() @ w_k.double()
    scores = query @ key.transpose(-2, -1)
    d_k, d_model = w_q.shape[-1], x.shape[-1]
    mistakes = [
        (scores, "not scaled: divide the scores Q K^T by sqrt(d_k)"),
        (scores / d_k, "divided by d_k; divide by sqrt(d_k) instead"),
        (
            scores / d_model**0.5,
            "divided by sqrt(d_model); d_k is the size of the queries and keys (w_q's columns)",
        ),
        (
            scores.transpose(-2, -1) / d_k**0.5,
            "transposed: row i must hold query i's weights over the keys (K Q^T?)",
        ),
    ]
    for wrong_scores, message in mistakes:
        wrong = torch.softmax(wrong_scores, dim=-1)
        if not torch.allclose(wrong, expected, atol=1e-4) and torch.allclose(
            value, wrong, atol=1e-4
        ):
            return checker.expect(False, f"{case}: {message}")
    return checker.expect_close(weights, expected, f"{case}: weights", atol=1e-4)


def _reference_positional_encoding(
    max_len: int,
    d_model: int,
    *,
    swap: bool = False,
    halves: bool = False,
    exponent_from_dimension: bool = False,
) -> torch.Tensor:
    """The sinusoidal table in float64; the keyword arguments build the typical wrong variants."""
    position = torch.arange(max_len, dtype=torch.float64)[:, None]
    pair = torch.arange(0, d_model, 2, dtype=torch.float64)  # 2i
    angle = position / 10000.0 ** (pair / d_model)
    sines, cosines = torch.sin(angle), torch.cos(angle[:, : d_model // 2])
    if exponent_from_dimension:  # pos / 10000^(j / d) with j the dimension index, odd j too
        odd = torch.arange(1, d_model, 2, dtype=torch.float64)
        cosines = torch.cos(position / 10000.0 ** (odd / d_model))
    if swap:
        sines, cosines = torch.cos(angle), torch.sin(angle[:, : d_model // 2])
    if halves:
        return torch.cat([sines, cosines], dim=-1)
    table = torch.zeros(max_len, d_model, dtype=torch.float64)
    table[:, 0::2], table[:, 1::2] = sines, cosines
    return table


def positional_encoding(candidate: Callable[[int, int], torch.Tensor]) -> bool:
    """Check ``candidate(max_len, d_model)``: the ``(max_len, d_model)`` sinusoidal table of Vaswani et al.

    ``PE[pos, 2i] = sin(pos / 10000^(2i / d_model))`` and ``PE[pos, 2i + 1] = cos(pos / 10000^(2i / d_model))``.
    """
    checker = Checker("positional_encoding")
    mistakes = [
        (
            {"swap": True},
            "sin and cos swapped: even dimensions 2i take the sine, odd dimensions 2i+1 the cosine",
        ),
        (
            {"halves": True},
            "sines in the first half and cosines in the second: some libraries do that, but the paper (and this "
            "book) interleave them: sin in the even dimensions, cos in the odd ones",
        ),
        (
            {"exponent_from_dimension": True},
            "the exponent uses the dimension index j; use 2i / d_model with i = j // 2, so that the sine and the "
            "cosine of a pair share one frequency",
        ),
    ]
    for max_len, d_model in [(50, 16), (7, 6), (1, 4)]:
        case = f"max_len={max_len}, d_model={d_model}"
        actual = checker.call(candidate, max_len, d_model, case=case)
        if actual is None:
            continue
        expected = _reference_positional_encoding(max_len, d_model)
        if (
            isinstance(actual, torch.Tensor)
            and actual.shape == expected.shape
            and torch.isfinite(actual).all()
        ):
            value = actual.detach().double()
            for variant, message in mistakes:
                wrong = _reference_positional_encoding(max_len, d_model, **variant)
                if not torch.allclose(wrong, expected, atol=1e-4) and torch.allclose(
                    value, wrong, atol=1e-4
                ):
                    checker.expect(False, f"{case}: {message}")
                    break
            else:
                checker.expect_close(actual, expected, case, atol=1e-4)
        else:
            checker.expect_close(actual, expected, case, atol=1e-4)
    return checker.report()
