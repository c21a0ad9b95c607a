"""Chapter 6: reverse a string of n random letters (``a``-``h``), the long-range task of
``attention_to_bert.long_range`` (fresh seeded strings, no fixed split)."""

from __future__ import annotations

import torch

from attention_to_bert.data.vocabulary import Vocabulary
from attention_to_bert.validate import check_instance, check_ints

LETTERS = "abcdefgh"
VOCAB = Vocabulary(LETTERS)


def reversal_pairs(count: int, length: int, generator: torch.Generator) -> list[tuple[str, str]]:
    """``count`` random strings of ``length`` letters (``a``-``h``) and their reversals."""
    check_ints(count=count, length=length)
    check_instance("generator", generator, torch._C.Generator, "a torch.Generator")
    ids = torch.randint(0, len(LETTERS), (count, length), generator=generator).tolist()
    strings = ["".join(LETTERS[i] for i in row) for row in ids]
    return [(s, s[::-1]) for s in strings]
