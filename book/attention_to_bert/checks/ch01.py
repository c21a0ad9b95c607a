"""The checkers of chapter 1: masked softmax and the scaled dot-product score."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import torch

from attention_to_bert.checks.checker import Checker


def _reference_masked_softmax(scores: torch.Tensor, mask: torch.Tensor) -> torch.Tensor:
    weights = torch.softmax(scores.double().masked_fill(mask, float("-inf")), dim=-1)
    return torch.nan_to_num(weights, nan=0.0)  # a fully masked row: 0/0 -> 0


def _diagnose_masked_softmax(
    checker: Checker, actual: Any, scores: torch.Tensor, mask: torch.Tensor, case: str
) -> None:
    """Name the first typical mistake visible in ``actual``; fall back to a plain value comparison."""
    expected = _reference_masked_softmax(scores, mask)
    if not isinstance(actual, torch.Tensor) or tuple(actual.shape) != tuple(expected.shape):
        checker.expect_close(actual, expected, case)
        return
    weights = actual.detach().double()
    masked = mask.expand_as(weights)
    fully_masked_rows = masked.all(dim=-1)
    if not torch.isfinite(weights).all():
        if (~torch.isfinite(weights))[fully_masked_rows].any():
            checker.expect(
                False, f"{case}: a fully masked row gives NaN; it must give all-zero weights"
            )
        else:
            checker.expect(
                False,
                f"{case}: NaN or inf in the weights; subtract each row's maximum before exp (or use torch.softmax)",
            )
        return
    weight_on_masked = weights[masked].abs().sum().item()
    if weight_on_masked > 1e-6:
        free = ~masked & ~fully_masked_rows.unsqueeze(-1)
        if free.any() and weights[free].abs().max() < 1e-6:
            checker.expect(
                False,
                f"{case}: mask polarity inverted: the weight goes where mask is True (True means 'may not attend')",
            )
        else:
            checker.expect(
                False, f"{case}: positions where mask is True get weight; they must get exactly 0"
            )
        return
    row_sums = weights.sum(dim=-1)[~fully_masked_rows]
    if not torch.allclose(row_sums, torch.ones_like(row_sums), atol=1e-4):
        column_sums = weights.sum(dim=-2)
        if weights.shape[-2] > 1 and torch.allclose(
            column_sums, torch.ones_like(column_sums), atol=1e-4
        ):
            checker.expect(
                False,
                f"{case}: normalised over the wrong dimension; each row (the last dimension) must sum to 1",
            )
        else:
            checker.expect(False, f"{case}: the weights of a row (last dimension) do not sum to 1")
        return
    checker.expect_close(actual, expected, case)


def masked_softmax(candidate: Callable[[torch.Tensor, torch.Tensor], torch.Tensor]) -> bool:
    """Check ``candidate(scores, mask)``, a softmax over the last dimension that ignores masked positions.

    ``mask`` is a bool tensor broadcastable to ``scores`` (True = may not attend). Expected: weight 0
    at masked positions, rows summing to 1, all-zero rows (no NaN, also in the gradient) where every
    position is masked, the shape of ``scores``.
    """
    checker = Checker("masked_softmax")
    generator = torch.Generator().manual_seed(1)
    scores = torch.randn(2, 3, 5, generator=generator)
    padding = torch.tensor([[False, False, False, True, True], [False, True, True, True, True]])
    with_empty_row = torch.rand(2, 3, 5, generator=generator) > 0.5
    with_empty_row[:, :, 0] = False
    with_empty_row[1, 2] = True  # query 2 of example 1 may attend to nothing
    cases = [
        ("no position masked", scores, torch.zeros(2, 3, 5, dtype=torch.bool)),
        (
            "a padding mask of shape (2, 1, 5) broadcast over the queries",
            scores,
            padding[:, None, :],
        ),
        ("a single query (scores of shape (2, 1, 5))", scores[:, :1], padding[:, None, :]),
        ("a fully masked row", scores, with_empty_row),
        ("large scores (up to about 1000)", 400 * scores, padding[:, None, :]),
    ]
    for case, case_scores, case_mask in cases:
        actual = checker.call(candidate, case_scores.clone(), case_mask.clone(), case=case)
        if actual is not None:
            _diagnose_masked_softmax(checker, actual, case_scores, case_mask, case)

    case = "the gradient through a fully masked row"
    leaf = scores.clone().requires_grad_()
    actual = checker.call(candidate, leaf, with_empty_row.clone(), case=case)
    if isinstance(actual, torch.Tensor) and actual.shape == scores.shape and actual.requires_grad:
        try:
            (actual * torch.arange(5.0)).sum().backward()
        except Exception as error:  # report, don't crash
            checker.expect(False, f"{case}: backward() raised {type(error).__name__}: {error}")
        else:
            checker.expect(
                leaf.grad is not None and not torch.isnan(leaf.grad).any(),
                f"{case}: the gradient contains NaN; a softmax over a row of -inf is NaN and zeroing it "
                "afterwards does not clean the gradient (fill masked scores with a large negative number)",
            )
    elif isinstance(actual, torch.Tensor) and actual.shape == scores.shape:
        checker.expect(
            False, f"{case}: the result does not carry a gradient (do not detach or rebuild it)"
        )
    return checker.report()


def scaled_dot_score(candidate: Callable[[torch.Tensor, torch.Tensor], torch.Tensor]) -> bool:
    """Check ``candidate(query, key)``: ``q · k / sqrt(d)`` for every query and key, shape ``(..., n_q, n_k)``."""
    checker = Checker("scaled_dot_score")
    generator = torch.Generator().manual_seed(2)
    cases = [
        ("query (3, 16) and key (5, 16)", (3, 16), (5, 16)),
        ("a batch: query (2, 3, 16) and key (2, 5, 16)", (2, 3, 16), (2, 5, 16)),
        ("one query (1, 9) against keys (4, 9)", (1, 9), (4, 9)),
    ]
    for case, query_shape, key_shape in cases:
        query = torch.randn(*query_shape, generator=generator)
        key = torch.randn(*key_shape, generator=generator)
        dot = query.double() @ key.double().transpose(-2, -1)
        d, n_k = query.shape[-1], key.shape[-2]
        actual = checker.call(candidate, query.clone(), key.clone(), case=case)
        if actual is None:
            continue
        if not isinstance(actual, torch.Tensor) or actual.shape != dot.shape:
            if isinstance(actual, torch.Tensor) and actual.shape == dot.transpose(-2, -1).shape:
                checker.expect(
                    False,
                    f"{case}: transposed; the shape must be (..., n_q, n_k), one row per query",
                )
            else:
                checker.expect_close(actual, dot, case)  # reports the wrong type or shape
            continue
        value = actual.detach().double()
        wrong_scalings = [
            (dot, "not scaled: divide the dot products by sqrt(d)"),
            (dot / d, "divided by d; divide by sqrt(d) instead"),
            (
                dot / n_k**0.5,
                "divided by the square root of the number of keys; d is the feature size",
            ),
        ]
        for wrong, message in wrong_scalings:
            if torch.allclose(value, wrong, atol=1e-4, rtol=1e-4):
                checker.expect(False, f"{case}: {message}")
                break
        else:
            checker.expect_close(actual, dot / d**0.5, case)
    return checker.report()
