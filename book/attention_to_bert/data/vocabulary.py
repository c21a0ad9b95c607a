"""The vocabulary and the padding shared by the data sets."""

from __future__ import annotations

from collections.abc import Iterable, Sequence

import torch

from attention_to_bert.validate import check_instance, check_int, check_strings

PAD, UNK, BOS, EOS = "<pad>", "<unk>", "<bos>", "<eos>"
SPECIALS = (PAD, UNK, BOS, EOS)


class Vocabulary:
    """A two-way map between tokens (strings; a string gives its characters) and integer ids; the
    special tokens come first (``<pad>`` is 0)."""

    def __init__(self, tokens: Iterable[str]) -> None:
        tokens = list(tokens) if isinstance(tokens, Iterable) else tokens
        check_strings("tokens", tokens)
        self.itos: list[str] = [*SPECIALS, *sorted(set(tokens) - set(SPECIALS))]
        self.stoi: dict[str, int] = {token: index for index, token in enumerate(self.itos)}

    def __len__(self) -> int:
        return len(self.itos)

    def __contains__(self, token: str) -> bool:
        return token in self.stoi

    def __repr__(self) -> str:
        return f"Vocabulary({len(self)} tokens)"

    @property
    def pad_id(self) -> int:
        return self.stoi[PAD]

    def id(self, token: str) -> int:
        """The id of ``token``; unknown tokens map to ``<unk>``."""
        check_instance("token", token, str)
        return self.stoi.get(token, self.stoi[UNK])

    def encode(
        self, tokens: Iterable[str], add_bos: bool = False, add_eos: bool = False
    ) -> list[int]:
        """Token ids of ``tokens``, optionally framed by ``<bos>`` and ``<eos>``."""
        check_instance("tokens", tokens, Iterable, "an iterable of str")
        ids = [self.id(token) for token in tokens]
        if add_bos:
            ids.insert(0, self.stoi[BOS])
        if add_eos:
            ids.append(self.stoi[EOS])
        return ids

    def decode(self, ids: Iterable[int], strip_specials: bool = True) -> list[str]:
        """Tokens of ``ids``; stops at ``<eos>`` and drops special tokens unless ``strip_specials`` is False."""
        if isinstance(ids, torch.Tensor) and ids.dim() > 1:
            raise ValueError(f"ids must be one sequence (1-D), got shape {tuple(ids.shape)}")
        tokens = []
        for index in ids:
            token = self.itos[_token_id("ids", index, len(self))]
            if strip_specials and token == EOS:
                break
            if strip_specials and token in SPECIALS:
                continue
            tokens.append(token)
        return tokens


def _token_id(name: str, value: object, size: int) -> int:
    """``value`` as a token id in ``0 .. size - 1``: an integer (Python, NumPy or a 1-element tensor)."""
    if isinstance(value, torch.Tensor) and value.numel() == 1:
        value = value.item()  # a float stays a float, refused below
    if isinstance(value, bool) or not hasattr(value, "__index__"):
        raise TypeError(f"{name} must hold integer token ids, got {type(value).__name__} {value!r}")
    if not 0 <= int(value) < size:
        raise ValueError(f"{name} must hold token ids in [0, {size}), got {int(value)}")
    return int(value)


def pad_sequences(
    sequences: Sequence[Sequence[int]], pad_id: int = 0, length: int | None = None
) -> torch.Tensor:
    """Stack id lists into a ``(batch, length)`` long tensor, padding on the right with ``pad_id``."""
    if not sequences:
        raise ValueError("sequences must hold at least one sequence, got none")
    check_int("pad_id", pad_id, minimum=0)
    if length is not None:
        check_int("length", length, minimum=0)
    for sequence in sequences:
        for value in sequence:
            _token_id("sequences", value, 2**63)
    longest = max(len(sequence) for sequence in sequences)
    length = longest if length is None else length
    if length < longest:
        raise ValueError(f"length={length} is shorter than the longest sequence ({longest})")
    padded = torch.full((len(sequences), length), pad_id, dtype=torch.long)
    for row, sequence in enumerate(sequences):
        padded[row, : len(sequence)] = torch.as_tensor(list(sequence), dtype=torch.long)
    return padded
