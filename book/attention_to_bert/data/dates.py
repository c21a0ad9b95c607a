"""Chapter 3: human-written dates -> ISO dates, character level (seq2seq; reused in chapter 6)."""

from __future__ import annotations

import datetime
import random
import string
from collections.abc import Sequence
from dataclasses import dataclass

import torch

from attention_to_bert.data.vocabulary import Vocabulary, pad_sequences
from attention_to_bert.validate import check_instance, check_ints

_MONTHS = (
    "january february march april may june july august september october november december"
).split()
_WEEKDAYS = "monday tuesday wednesday thursday friday saturday sunday".split()
_FIRST_DATE, _LAST_DATE = datetime.date(1950, 1, 1), datetime.date(2049, 12, 31)

# Each format writes a date the way people do (lower case, English names, no locale involved). Every
# format is unambiguous: the numeric ones differ by their separator (day.month.year, month/day/year).
DATE_FORMATS: dict[str, str] = {
    "25 jun 2009": "{d.day} {mon} {d.year}",
    "25 june 2009": "{d.day} {month} {d.year}",
    "thursday, 25 jun 2009": "{weekday}, {d.day} {mon} {d.year}",
    "thu 25 june 2009": "{wkd} {d.day} {month} {d.year}",
    "june 25, 2009": "{month} {d.day}, {d.year}",
    "jun 25 2009": "{mon} {d.day} {d.year}",
    "thursday, june 25, 2009": "{weekday}, {month} {d.day}, {d.year}",
    "the 25th of june 2009": "the {nth} of {month} {d.year}",
    "25.06.2009": "{d.day:02d}.{d.month:02d}.{d.year}",
    "06/25/2009": "{d.month:02d}/{d.day:02d}/{d.year}",
}
"""The date formats of the chapter-3 task (``str.format`` templates), named by how 25 June 2009 (a
Thursday) looks in each."""

DATE_SOURCE_CHARS = string.ascii_lowercase + string.digits + " ,./"
"""Every character a human-written date may contain (the source alphabet)."""
DATE_TARGET_CHARS = string.digits + "-"
"""Every character of an ISO date (the target alphabet)."""


def format_date(date: datetime.date, style: str) -> str:
    """Write ``date`` in the human format named ``style`` (a key of ``DATE_FORMATS``)."""
    if not isinstance(date, datetime.date):
        raise TypeError(f"date must be a datetime.date, got {type(date).__name__}")
    if style not in DATE_FORMATS:
        raise ValueError(f"style must be one of {list(DATE_FORMATS)}, got {style!r}")
    month, weekday, day = _MONTHS[date.month - 1], _WEEKDAYS[date.weekday()], date.day
    suffix = "th" if 11 <= day % 100 <= 13 else {1: "st", 2: "nd", 3: "rd"}.get(day % 10, "th")
    return DATE_FORMATS[style].format(
        d=date, month=month, mon=month[:3], weekday=weekday, wkd=weekday[:3], nth=f"{day}{suffix}"
    )


@dataclass(frozen=True)
class DateSplits:
    """The chapter-3 date task: train and test pairs (no date appears in both) and the two vocabularies."""

    train: list[tuple[str, str]]
    test: list[tuple[str, str]]
    source_vocab: Vocabulary
    target_vocab: Vocabulary


def date_splits(seed: int = 0, num_train: int = 6000, num_test: int = 1000) -> DateSplits:
    """The fixed train/test split of the date task used by chapters 3 and 6: pairs (human date, ISO date).

    ``num_train + num_test`` distinct dates are drawn uniformly from 1950–2049, so no test date is
    seen in training in any format; each is written in a format drawn uniformly from ``DATE_FORMATS``.
    The same ``seed`` gives the same pairs on every machine. The character vocabularies (source,
    target) have ``<pad>`` as id 0.
    """
    check_ints(num_train=num_train, num_test=num_test)
    check_ints(minimum=0, seed=seed)
    span = (_LAST_DATE - _FIRST_DATE).days + 1
    if num_train + num_test > span:
        raise ValueError(
            f"at most {span} distinct dates exist in the range, asked for {num_train + num_test}"
        )
    rng = random.Random(seed)
    offsets = rng.sample(range(span), num_train + num_test)
    dates = [_FIRST_DATE + datetime.timedelta(days=offset) for offset in offsets]
    names = list(DATE_FORMATS)
    pairs = [(format_date(date, rng.choice(names)), date.isoformat()) for date in dates]
    vocabs = Vocabulary(DATE_SOURCE_CHARS), Vocabulary(DATE_TARGET_CHARS)
    return DateSplits(pairs[:num_train], pairs[num_train:], *vocabs)


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
    for pair in pairs:
        if (
            not isinstance(pair, tuple | list)
            or len(pair) != 2
            or not all(isinstance(s, str) for s in pair)
        ):
            raise TypeError(f"pairs must hold (source, target) pairs of strings, got {pair!r}")
    for name, vocab in (("source_vocab", source_vocab), ("target_vocab", target_vocab)):
        check_instance(name, vocab, Vocabulary)
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
