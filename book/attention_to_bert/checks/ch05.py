"""The checkers of chapter 5: splitting into heads and the causal mask."""

from __future__ import annotations

from collections.abc import Callable

import torch

from attention_to_bert.checks.checker import Checker


def split_heads(candidate: Callable[[torch.Tensor, int], torch.Tensor]) -> bool:
    """Check ``candidate(x, num_heads)``: (batch, seq, d_model) -> (batch, heads, seq, head_dim), a block per head."""
    checker = Checker("split_heads")
    generator = torch.Generator().manual_seed(5)
    for shape, heads in [((2, 5, 12), 3), ((1, 4, 8), 2), ((3, 6, 16), 4), ((2, 3, 8), 1)]:
        batch, seq, d_model = shape
        head_dim = d_model // heads
        case = f"x of shape {shape}, num_heads={heads}"
        x = torch.randn(*shape, generator=generator)
        by_position = x.view(batch, seq, heads, head_dim)
        straight = x.reshape(batch, heads, seq, head_dim)
        strided = x.view(batch, seq, head_dim, heads).permute(0, 3, 1, 2)
        mistakes = [
            (by_position, "not transposed: swap the seq and heads axes (transpose(1, 2))"),
            (straight, "a direct reshape to (batch, heads, seq, head_dim) mixes up positions"),
            (strided, "each head took every heads-th feature, not head_dim consecutive ones"),
        ]
        actual = checker.call(candidate, x.clone(), heads, case=case)
        checker.compare(actual, by_position.transpose(1, 2), case, mistakes)
    return checker.report()


def causal_mask(candidate: Callable[[int], torch.Tensor]) -> bool:
    """Check ``candidate(size)``: a bool ``(size, size)`` mask, True where position i may not attend to j (j > i)."""
    checker = Checker("causal_mask")
    for size in (1, 4, 7):
        case = f"size={size} (True must mark j > i, above the diagonal)"
        expected = torch.ones(size, size, dtype=torch.bool).triu(diagonal=1)
        with_diagonal = torch.ones(size, size, dtype=torch.bool).triu()
        mistakes = [
            (~expected, "polarity inverted: True must mean 'may NOT attend', i.e. the future"),
            (with_diagonal, "the diagonal is masked too: a position may attend to itself"),
            (
                expected.T,
                "the past is masked instead of the future: query i may not see keys j > i",
            ),
        ]
        actual = checker.call(candidate, size, case=case)
        if isinstance(actual, torch.Tensor) and actual.dtype != torch.bool:
            message = "return a bool mask (True = may not attend), not an additive 0 / -inf one"
            checker.expect(False, f"{case}: dtype {actual.dtype}; {message}")
        else:
            checker.compare(actual, expected, case, mistakes if size > 1 else [])
    return checker.report()
