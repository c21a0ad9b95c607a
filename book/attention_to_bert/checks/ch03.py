"""The checkers of chapter 3: one attention step of the seq2seq decoder."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import torch

from attention_to_bert.checks.checker import Checker, reference_softmax


def attention_step(candidate: Callable[[torch.Tensor, torch.Tensor, torch.Tensor], Any]) -> bool:
    """Check ``candidate(state, encoder_outputs, lengths) -> (context, weights)``: weights = softmax of
    s · h_j over the first ``lengths`` positions (0 on the padding), context = Σ_j weights_j h_j."""
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
        padded = torch.arange(source_len) >= torch.tensor(lengths)[:, None]
        outputs = outputs.masked_fill(padded.unsqueeze(-1), 0.0)  # like the encoder's outputs
        arguments = (state.clone(), outputs.clone(), torch.tensor(lengths))
        result = checker.call(candidate, *arguments, case=case, pair="(context, weights)")
        context, weights = result or (None, None)  # None: nothing to check
        expected = reference_softmax(torch.einsum("bd,bsd->bs", state, outputs), padded)
        if checker.compare(weights, expected, f"{case}: weights", masked=padded):
            expected_context = torch.einsum("bs,bsd->bd", expected, outputs)
            checker.compare(context, expected_context, f"{case}: context")
    return checker.report()
