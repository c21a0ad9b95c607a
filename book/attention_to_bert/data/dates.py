"""Chapter 3: human-written dates -> ISO dates, character level (seq2seq; reused in chapter 6)."""

from __future__ import annotations

import datetime
import random
import string
from collections.abc import Callable, Sequence
from dataclasses import dataclass

import torch

from attention_to_bert.data.vocabulary import Vocabulary, pad_sequences
from attention_to_bert.validate import check_int, check_ints

_MONTHS = (
    "january",
    "february",
    "march",
    "april",
    "may",
    "june",
    "july",
    "august",
    "september",
    "october",
    "november",
    "december",
)
_WEEKDAYS = ("monday", "tuesday", "wednesday", "thursday", "friday", "saturday", "sunday")
_FIRST_DATE, _LAST_DATE = datetime.date(1950, 1, 1), datetime.date(2049, 12, 31)


def _ordinal(day: int) -> str:
    suffix = "th" if 11 <= day % 100 <= 13 else {1: "st", 2: "nd", 3: "rd"}.get(day % 10, "th")
    return f"{day}{suffix}"


# Each format writes a date the way people do (lower case, English names, no locale involved). Every
# format is unambiguous: the numeric ones differ by their separator (day.month.year, month/day/year).
DATE_FORMATS: dict[str, Callable[[datetime.date], str]] = {
    "25 jun 2009": lambda d: f"{d.day} {_MONTHS[d.month - 1][:3]} {d.year}",
    "25 june 2009": lambda d: f"{d.day} {_MONTHS[d.month - 1]} {d.year}",
    "thursday, 25 jun 2009": lambda d: (
        f"{_WEEKDAYS[d.weekday()]}, {d.day} {_MONTHS[d.month - 1][:3]} {d.year}"
    ),
    "thu 25 june 2009": lambda d: (
        f"{_WEEKDAYS[d.weekday()][:3]} {d.day} {_MONTHS[d.month - 1]} {d.year}"
    ),
    "june 25, 2009": lambda d: f"{_MONTHS[d.month - 1]} {d.day}, {d.year}",
    "jun 25 2009": lambda d: f"{_MONTHS[d.month - 1][:3]} {d.day} {d.year}",
    "thursday, june 25, 2009": lambda d: (
        f"{_WEEKDAYS[d.weekday()]}, {_MONTHS[d.month - 1]} {d.day}, {d.year}"
    ),
    "the 25th of june 2009": lambda d: f"the {_ordinal(d.day)} of {_MONTHS[d.month - 1]} {d.year}",
    "25.06.2009": lambda d: f"{d.day:02d}.{d.month:02d}.{d.year}",
    "06/25/2009": lambda d: f"{d.month:02d}/{d.day:02d}/{d.year}",
}
"""The date formats of the chapter-3 task, named by how 25 June 2009 (a Thursday) looks in each."""

DATE_SOURCE_CHARS = string.ascii_lowercase + string.digits + " ,./"
"""Every character a human-written date may contain (the source alphabet)."""
DATE_TARGET_CHARS = string.digits + "-"
"""Every character of an ISO date (the target alphabet)."""


def _pick_formats(formats: Sequence[str] | None) -> list[str]:
    names = list(DATE_FORMATS) if formats is None else list(formats)
    unknown = [name for name in names if name not in DATE_FORMATS]
    if unknown or not names:
        raise ValueError(
            f"formats must be a non-empty list of names from DATE_FORMATS {list(DATE_FORMATS)}, "
            f"got {names!r}"
        )
    return names


def format_date(date: datetime.date, style: str) -> str:
    """Write ``date`` in the human format named ``style`` (a key of ``DATE_FORMATS``)."""
    if style not in DATE_FORMATS:
        raise ValueError(f"style must be one of {list(DATE_FORMATS)}, got {style!r}")
    return DATE_FORMATS[style](date)


def _random_dates(count: int, rng: random.Random) -> list[datetime.date]:
    """``count`` distinct dates drawn uniformly from 1950-01-01 .. 2049-12-31."""
    span = (_LAST_DATE - _FIRST_DATE).days + 1
    if count > span:
        raise ValueError(f"at most {span} distinct dates exist in the range, asked for {count}")
    return [
        _FIRST_DATE + datetime.timedelta(days=offset) for offset in rng.sample(range(span), count)
    ]


def make_dates(
    num_examples: int, seed: int = 0, formats: Sequence[str] | None = None
) -> list[tuple[str, str]]:
    """``num_examples`` pairs (human date, ISO date) with distinct dates, e.g. ("thursday, 25 jun 2009", "2009-06-25").

    Dates are drawn uniformly from 1950–2049, each written in a format drawn uniformly from ``formats``
    (default: all of ``DATE_FORMATS``). The same ``seed`` gives the same pairs on every machine.
    """
    check_int("num_examples", num_examples)
    names = _pick_formats(formats)
    rng = random.Random(seed)
    return [
        (format_date(date, rng.choice(names)), date.isoformat())
        for date in _random_dates(num_examples, rng)
    ]


@dataclass(frozen=True)
class DateSplits:
    """The chapter-3 date task: train and test pairs (no date appears in both) and the two vocabularies."""

    train: list[tuple[str, str]]
    test: list[tuple[str, str]]
    source_vocab: Vocabulary
    target_vocab: Vocabulary


def date_vocabularies() -> tuple[Vocabulary, Vocabulary]:
    """The character vocabularies (source, target) of the date task; ``<pad>`` is id 0 in both."""
    return Vocabulary(DATE_SOURCE_CHARS), Vocabulary(DATE_TARGET_CHARS)


def date_splits(
    seed: int = 0, num_train: int = 6000, num_test: int = 1000, formats: Sequence[str] | None = None
) -> DateSplits:
    """The fixed train/test split of the date task used by chapters 3 and 6 (defaults: 6000 / 1000 pairs).

    All ``num_train + num_test`` dates are distinct, so no test date is seen in training in any format.
    """
    check_ints(num_train=num_train, num_test=num_test)
    pairs = make_dates(num_train + num_test, seed=seed, formats=formats)
    source_vocab, target_vocab = date_vocabularies()
    return DateSplits(pairs[:num_train], pairs[num_train:], source_vocab, target_vocab)


def make_digit_strings(
    num_examples: int, min_length: int, max_length: int, seed: int = 0, reverse: bool = True
) -> list[tuple[str, str]]:
    """Pairs (digit string, its reverse) — or a copy if ``reverse`` is False — with lengths uniform in
    ``min_length..max_length``: a task whose difficulty for a fixed-size memory grows with the length."""
    check_ints(num_examples=num_examples, min_length=min_length)
    check_int("max_length", max_length, minimum=min_length)
    rng = random.Random(seed)
    pairs = []
    for _ in range(num_examples):
        digits = "".join(
            rng.choice(string.digits) for _ in range(rng.randint(min_length, max_length))
        )
        pairs.append((digits, digits[::-1] if reverse else digits))
    return pairs


def encode_pairs(
    pairs: Sequence[tuple[str, str]], source_vocab: Vocabulary, target_vocab: Vocabulary
) -> tuple[torch.Tensor, torch.Tensor, torch.Tensor]:
    """Character ids of (source, target) string pairs, padded with ``<pad>`` (id 0) on the right.

    Returns ``source`` ``(batch, source_len)``, ``source_lengths`` ``(batch,)`` and ``target``
    ``(batch, target_len + 2)`` framed as ``<bos> ... <eos>`` (the decoder reads ``target[:, :-1]`` and
    is trained to predict ``target[:, 1:]``). Characters outside a vocabulary are an error.
    """
    if not pairs:
        raise ValueError("encode_pairs needs at least one (source, target) pair, got none")
    for vocab, side, index in ((source_vocab, "source", 0), (target_vocab, "target", 1)):
        unknown = sorted({char for pair in pairs for char in pair[index]} - set(vocab.stoi))
        if unknown:
            raise ValueError(
                f"{side} strings contain characters outside the {side} vocabulary: {unknown}"
            )
    sources = [source_vocab.encode(source) for source, _ in pairs]
    targets = [target_vocab.encode(target, add_bos=True, add_eos=True) for _, target in pairs]
    lengths = torch.tensor([len(ids) for ids in sources], dtype=torch.long)
    if (lengths == 0).any():
        raise ValueError("source strings must not be empty")
    return (
        pad_sequences(sources, source_vocab.pad_id),
        lengths,
        pad_sequences(targets, target_vocab.pad_id),
    )
