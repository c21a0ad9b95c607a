"""Chapter 4: a toy task whose self-attention map is meaningful."""

from __future__ import annotations

import random

import torch

from attention_to_bert.validate import check_int

PARTNER_SYMBOLS = "ABCDEFGHIJKLMNOPQRSTUVWXYZ"


def partner_sequences(
    num_sequences: int,
    num_pairs: int = 5,
    num_symbols: int = 16,
    num_digits: int = 10,
    seed: int = 0,
) -> tuple[torch.Tensor, torch.Tensor, torch.Tensor]:
    """Sequences of letter-digit tokens in which every letter appears exactly twice ("find your partner").

    Each sequence holds ``num_pairs`` different letters (ids ``0 .. num_symbols - 1``, drawn without
    replacement), each twice, in a random order, so it has ``2 * num_pairs`` tokens; every token also
    carries a random digit (``0 .. num_digits - 1``, independent of everything else). Returns
    ``(letters, digits, partners)``, long tensors of shape ``(num_sequences, 2 * num_pairs)``:
    ``partners[b, i]`` is the position of the other copy of ``letters[b, i]``, so the digit carried by
    token i's partner is ``digits.gather(1, partners)[b, i]``. Letter ``s`` prints as ``PARTNER_SYMBOLS[s]``.
    """
    for name, value in (
        ("num_sequences", num_sequences),
        ("num_pairs", num_pairs),
        ("num_digits", num_digits),
    ):
        check_int(name, value)
    check_int("num_symbols", num_symbols, minimum=num_pairs)
    if num_symbols > len(PARTNER_SYMBOLS):
        raise ValueError(
            f"num_symbols must be between num_pairs ({num_pairs}) and {len(PARTNER_SYMBOLS)}, got {num_symbols}"
        )
    rng = random.Random(seed)
    length = 2 * num_pairs
    letters = torch.empty(num_sequences, length, dtype=torch.long)
    partners = torch.empty(num_sequences, length, dtype=torch.long)
    digits = torch.empty(num_sequences, length, dtype=torch.long)
    for row in range(num_sequences):
        symbols = rng.sample(range(num_symbols), num_pairs)
        order = list(range(length))
        rng.shuffle(order)  # positions order[2k] and order[2k + 1] hold letter k
        for k, symbol in enumerate(symbols):
            first, second = order[2 * k], order[2 * k + 1]
            letters[row, first] = letters[row, second] = symbol
            partners[row, first], partners[row, second] = second, first
        digits[row] = torch.tensor([rng.randrange(num_digits) for _ in range(length)])
    return letters, digits, partners
