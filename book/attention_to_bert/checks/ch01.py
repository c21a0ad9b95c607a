"""The checkers of chapter 1: masked softmax and the scaled dot-product score."""

from __future__ import annotations

from collections.abc import Callable

import torch

from attention_to_bert.checks.checker import Checker, reference_softmax


def masked_softmax(candidate: Callable[[torch.Tensor, torch.Tensor], torch.Tensor]) -> bool:
    """Check ``candidate(scores, mask)``: a softmax over the last dimension, 0 where the bool ``mask``
    (broadcast to ``scores``) is True, all-zero rows (no NaN, even in the gradient) where all are."""
    checker = Checker("masked_softmax")
    generator = torch.Generator().manual_seed(1)
    scores = torch.randn(2, 3, 5, generator=generator)
    padding = torch.tensor([[0, 0, 0, 1, 1], [0, 1, 1, 1, 1]], dtype=torch.bool)[:, None, :]
    with_empty_row = torch.rand(2, 3, 5, generator=generator) > 0.5
    with_empty_row[:, :, 0] = False
    with_empty_row[1, 2] = True  # query 2 of example 1 may attend to nothing
    cases = [
        ("no position masked", scores, torch.zeros(2, 3, 5, dtype=torch.bool)),
        ("a padding mask of shape (2, 1, 5) broadcast over the queries", scores, padding),
        ("a single query (scores of shape (2, 1, 5))", scores[:, :1], padding),
        ("a fully masked row", scores, with_empty_row),
        ("large scores (up to about 1000)", 400 * scores, padding),
    ]
    for case, case_scores, mask in cases:
        actual = checker.call(candidate, case_scores.clone(), mask.clone(), case=case)
        checker.compare(actual, reference_softmax(case_scores, mask), case, masked=mask)

    case = "the gradient through a fully masked row"
    leaf = scores.clone().requires_grad_()
    actual = checker.call(candidate, leaf, with_empty_row.clone(), case=case)
    if isinstance(actual, torch.Tensor) and actual.shape == scores.shape:
        try:
            (gradient,) = torch.autograd.grad((actual * torch.arange(5.0)).sum(), leaf)
        except Exception as error:  # report, don't crash
            checker.expect(False, f"{case}: no gradient flows back (do not detach): {error}")
        else:
            checker.expect(
                not gradient.isnan().any(),
                f"{case}: the gradient contains NaN; a softmax over a row of -inf is NaN and zeroing it "
                "afterwards does not clean the gradient (fill masked scores with a large negative number)",
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
        dot = query.double() @ key.double().mT
        d, n_k = query.shape[-1], key.shape[-2]
        mistakes = [
            (dot, "not scaled: divide the dot products by sqrt(d)"),
            (dot / d, "divided by d; divide by sqrt(d) instead"),
            (dot / n_k**0.5, "divided by sqrt(number of keys); d is the feature size"),
            (dot.mT / d**0.5, "transposed; the shape must be (..., n_q, n_k), one row per query"),
        ]
        actual = checker.call(candidate, query.clone(), key.clone(), case=case)
        checker.compare(actual, dot / d**0.5, case, mistakes)
    return checker.report()
