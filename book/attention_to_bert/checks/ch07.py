"""The checkers of chapter 7: BERT's masking rule (80/10/10)."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import torch

from attention_to_bert.checks.checker import Checker, vary


def mlm_mask(candidate: Callable[..., Any]) -> bool:
    """Check ``candidate(input_ids, special_mask, mask_id, vocab_size) -> (corrupted_ids, labels)``: 15% of the
    non-special tokens are chosen, 80% -> ``mask_id``, 10% -> random id, 10% kept; ``labels`` = original or -100."""
    checker = Checker("mlm_mask")
    mask_id, (sequences, vocab_size, length) = 4, vary(200, 500, 500, spread=40)
    generator = torch.Generator().manual_seed(0)  # the inputs (hidden tests shift its seed)
    # the student's draws: reproducible, CPU state only (Checker.report restores it; CUDA untouched)
    torch.default_generator.manual_seed(0)
    ids = torch.randint(5, vocab_size, (sequences, length), generator=generator)
    positions = torch.arange(length).repeat(sequences, 1)
    special = (positions == 0) | (positions >= length - 50)  # [CLS]; [SEP] and padding
    case, pair = f"{sequences} sequences of {length} tokens", "(corrupted_ids, labels)"
    passed = ids.clone()
    result = checker.call(candidate, passed, special, mask_id, vocab_size, case=case, pair=pair)
    if result is None:
        return checker.report()
    want = (torch.long, tuple(ids.shape))
    for name, tensor in zip(("corrupted_ids", "labels"), result, strict=True):
        kind = type(tensor).__name__
        got = (tensor.dtype, tuple(tensor.shape)) if isinstance(tensor, torch.Tensor) else kind
        checker.expect(got == want, f"{name}: expected (dtype, shape) {want}, got {got}")
    if checker.problems:
        return checker.report()
    corrupted, labels = result
    chosen = labels != -100
    labelled = chosen[~special].float().mean().item()
    if labelled > 0.5:
        checker.expect(
            False,
            f"labels must be -100 where a token was not chosen: {labelled:.2f} of the ordinary "
            "tokens carry a label, expected about 0.15 (the loss reads only the chosen ones)",
        )
        return checker.report()
    checker.expect(
        not chosen[special].any() and torch.equal(corrupted[special], ids[special]),
        "special positions ([CLS], [SEP], padding) were chosen or changed: leave them alone",
    )
    checker.expect(
        torch.equal(labels[chosen], ids[chosen]),
        "labels must hold the ORIGINAL token at chosen positions (not the [MASK] or random id)",
    )
    checker.expect(
        torch.equal(corrupted[~chosen], ids[~chosen]),
        "tokens with label -100 were changed: label every chosen token (masked, randomised or "
        "kept) with its original id, and leave the others unchanged",
    )
    if checker.problems:
        return checker.report()
    rate = chosen.sum().item() / (~special).sum().item()
    masked = (corrupted[chosen] == mask_id).float().mean().item()
    kept = (corrupted[chosen] == ids[chosen]).float().mean().item()
    for share, expected, tolerance, what in (
        (rate, 0.15, 0.01, "of the non-special tokens were chosen"),
        (masked, 0.8, 0.03, "of the chosen tokens became [MASK]"),
        (1.0 - masked - kept, 0.1, 0.025, "of the chosen tokens got a random id"),
        (kept, 0.1, 0.025, "of the chosen tokens stayed unchanged"),
    ):
        message = f"{share:.3f} {what}, expected {expected}"
        checker.expect(abs(share - expected) < tolerance, message)
    replaced = corrupted[chosen & (corrupted != mask_id) & (corrupted != ids)]
    checker.expect(
        replaced.numel() == 0 or replaced.unique().numel() > 100,
        "the random replacements are not spread over the vocabulary: draw them uniformly",
    )
    again = checker.call(
        candidate, ids[:20], special[:20], mask_id, vocab_size, case="a second call"
    )
    checker.expect(
        again is None or not torch.equal(again[1], labels[:20]),
        "two calls chose the same positions: draw fresh random numbers on every call",
    )
    return checker.report()
