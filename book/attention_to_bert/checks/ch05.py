"""The checkers of chapter 5: splitting into heads and the causal mask."""

from __future__ import annotations

from collections.abc import Callable

import torch

from attention_to_bert.checks.checker import Checker


def split_heads(candidate: Callable[[torch.Tensor, int], torch.Tensor]) -> bool:
    """Check ``candidate(x, num_heads)``: ``(batch, seq, d_model)`` -> ``(batch, heads, seq, d_model // heads)``.

    Head ``h`` must get the consecutive features ``h * head_dim .. (h + 1) * head_dim`` of every position.
    """
    checker = Checker("split_heads")
    generator = torch.Generator().manual_seed(5)
    cases = [((2, 5, 12), 3), ((1, 4, 8), 2), ((3, 6, 16), 4), ((2, 3, 8), 1)]
    for shape, heads in cases:
        batch, seq, d_model = shape
        head_dim = d_model // heads
        case = f"x of shape {shape}, num_heads={heads}"
        x = torch.randn(*shape, generator=generator)
        expected = x.view(batch, seq, heads, head_dim).transpose(1, 2)
        actual = checker.call(candidate, x.clone(), heads, case=case)
        if actual is None:
            continue
        if (
            isinstance(actual, torch.Tensor)
            and tuple(actual.shape) == (batch, seq, heads, head_dim)
            and seq != heads
        ):
            checker.expect(
                False,
                f"{case}: got shape (batch, seq, heads, head_dim); swap the seq and heads axes (transpose(1, 2))",
            )
            continue
        if isinstance(actual, torch.Tensor) and actual.shape == expected.shape and heads > 1:
            value = actual.detach()
            if torch.equal(value, x.reshape(batch, heads, seq, head_dim)):
                checker.expect(
                    False,
                    f"{case}: reshaped straight to (batch, heads, seq, head_dim), which mixes up positions; "
                    "view as (batch, seq, heads, head_dim) first, then transpose(1, 2)",
                )
                continue
            if torch.equal(value, x.view(batch, seq, head_dim, heads).permute(0, 3, 1, 2)):
                checker.expect(
                    False,
                    f"{case}: each head took every heads-th feature; head h must take the consecutive "
                    "features h * head_dim .. (h + 1) * head_dim",
                )
                continue
        checker.expect_close(actual, expected, case, atol=0.0, rtol=0.0)
    return checker.report()


def causal_mask(candidate: Callable[[int], torch.Tensor]) -> bool:
    """Check ``candidate(size)``: a bool ``(size, size)`` mask, True where position i may not attend to j (j > i)."""
    checker = Checker("causal_mask")
    for size in (1, 4, 7):
        case = f"size={size}"
        expected = torch.ones(size, size, dtype=torch.bool).triu(diagonal=1)
        actual = checker.call(candidate, size, case=case)
        if actual is None:
            continue
        if not isinstance(actual, torch.Tensor) or tuple(actual.shape) != (size, size):
            checker.expect_close(actual, expected, case)  # names the wrong type or shape
            continue
        if actual.dtype != torch.bool:
            if actual.is_floating_point() and torch.isinf(actual).any():
                message = (
                    "an additive float mask (0 / -inf); return a bool mask, True = may not attend"
                )
            else:
                message = (
                    f"dtype {actual.dtype}; the mask must be a bool tensor (True = may not attend)"
                )
            checker.expect(False, f"{case}: {message}")
            continue
        wrong_masks = [
            (
                ~expected,
                "polarity inverted: True must mean 'may NOT attend', i.e. the future above the diagonal",
            ),
            (
                torch.ones(size, size, dtype=torch.bool).triu(),
                "the diagonal is masked too: a position may attend to itself (otherwise row 0 sees nothing)",
            ),
            (
                expected.T,
                "the past is masked instead of the future: query i may not see keys j > i",
            ),
        ]
        for wrong, message in wrong_masks:
            if size > 1 and torch.equal(actual, wrong):
                checker.expect(False, f"{case}: {message}")
                break
        else:
            checker.expect(
                torch.equal(actual, expected),
                f"{case}: wrong mask; expected True exactly above the diagonal (j > i), got {actual.int().tolist()}",
            )
    return checker.report()
