"""The chapter-3 data: human-written dates -> ISO dates, digit strings, and their encoding."""

import datetime

import pytest
import torch

from attention_to_bert.data.dates import (
    DATE_FORMATS,
    DATE_SOURCE_CHARS,
    date_splits,
    date_vocabularies,
    encode_pairs,
    format_date,
    make_dates,
    make_digit_strings,
)
from attention_to_bert.data.vocabulary import BOS, EOS, PAD


def test_every_format_is_named_by_how_it_writes_25_june_2009():
    thursday = datetime.date(2009, 6, 25)
    assert thursday.weekday() == 3
    for name in DATE_FORMATS:
        assert format_date(thursday, name) == name
    assert (
        format_date(datetime.date(2001, 3, 2), "the 25th of june 2009") == "the 2nd of march 2001"
    )
    assert (
        format_date(datetime.date(2001, 3, 13), "the 25th of june 2009") == "the 13th of march 2001"
    )
    assert format_date(datetime.date(2001, 3, 2), "25.06.2009") == "02.03.2001"
    with pytest.raises(ValueError, match="style must be one of"):
        format_date(thursday, "2009-06-25")


def test_make_dates_is_seeded_and_every_target_is_the_iso_date_of_its_source():
    pairs = make_dates(500, seed=3)
    assert pairs == make_dates(500, seed=3)
    assert pairs != make_dates(500, seed=4)
    assert len({target for _, target in pairs}) == 500  # distinct dates
    formats_seen = set()
    for source, target in pairs:
        date = datetime.date.fromisoformat(target)
        assert datetime.date(1950, 1, 1) <= date <= datetime.date(2049, 12, 31)
        matching = [name for name in DATE_FORMATS if format_date(date, name) == source]
        assert matching, source
        formats_seen.update(matching)
        assert set(source) <= set(DATE_SOURCE_CHARS)
    assert formats_seen == set(DATE_FORMATS)


def test_make_dates_can_restrict_the_formats_and_checks_its_arguments():
    pairs = make_dates(50, seed=0, formats=["25.06.2009"])
    assert all(source[2] == "." and source[5] == "." for source, _ in pairs)
    with pytest.raises(ValueError, match="formats must be a non-empty list"):
        make_dates(5, formats=["someday"])
    with pytest.raises(ValueError, match="formats must be a non-empty list"):
        make_dates(5, formats=[])
    with pytest.raises(ValueError, match="num_examples must be >= 1, got 0"):
        make_dates(0)
    with pytest.raises(TypeError, match="num_examples must be an int, got float"):
        make_dates(2.0)


def test_date_splits_are_fixed_and_share_no_date():
    splits = date_splits(seed=0, num_train=300, num_test=100)
    assert len(splits.train) == 300 and len(splits.test) == 100
    assert {t for _, t in splits.train}.isdisjoint({t for _, t in splits.test})
    again = date_splits(seed=0, num_train=300, num_test=100)
    assert splits.train == again.train and splits.test == again.test
    source_vocab, target_vocab = date_vocabularies()
    assert (
        splits.source_vocab.itos == source_vocab.itos
        and splits.target_vocab.itos == target_vocab.itos
    )
    assert (
        source_vocab.pad_id == 0
        and target_vocab.pad_id == 0
        and BOS in target_vocab
        and EOS in target_vocab
    )
    default = date_splits()
    assert len(default.train) == 6000 and len(default.test) == 1000


def test_encode_pairs_pads_sources_and_frames_targets():
    source_vocab, target_vocab = date_vocabularies()
    pairs = [
        ("3 jun 2004", "2004-06-03"),
        ("10.03.2037", "2037-03-10"),
        ("sunday, july 8, 2035", "2035-07-08"),
    ]
    source, lengths, target = encode_pairs(pairs, source_vocab, target_vocab)
    assert source.shape == (3, 20) and source.dtype == torch.long
    assert lengths.tolist() == [10, 10, 20]
    assert (source[0, 10:] == source_vocab.pad_id).all() and (
        source[0, :10] != source_vocab.pad_id
    ).all()
    assert "".join(source_vocab.decode(source[2])) == "sunday, july 8, 2035"
    assert target.shape == (3, 12)
    assert (target[:, 0] == target_vocab.stoi[BOS]).all() and (
        target[:, -1] == target_vocab.stoi[EOS]
    ).all()
    assert "".join(target_vocab.decode(target[1])) == "2037-03-10"
    assert target_vocab.itos[0] == PAD


def test_encode_pairs_refuses_unknown_characters_and_empty_input():
    source_vocab, target_vocab = date_vocabularies()
    with pytest.raises(
        ValueError,
        match=r"source strings contain characters outside the source vocabulary: \['J'\]",
    ):
        encode_pairs([("June 5, 2001", "2001-06-05")], source_vocab, target_vocab)
    with pytest.raises(ValueError, match="target strings contain characters outside"):
        encode_pairs([("june 5, 2001", "2001/06/05")], source_vocab, target_vocab)
    with pytest.raises(ValueError, match="at least one"):
        encode_pairs([], source_vocab, target_vocab)
    with pytest.raises(ValueError, match="must not be empty"):
        encode_pairs([("", "2001-06-05")], source_vocab, target_vocab)


def test_digit_strings_reverse_or_copy_within_the_length_range():
    pairs = make_digit_strings(300, 5, 9, seed=1)
    assert pairs == make_digit_strings(300, 5, 9, seed=1)
    assert {len(source) for source, _ in pairs} == {5, 6, 7, 8, 9}
    assert all(target == source[::-1] and source.isdigit() for source, target in pairs)
    assert all(s == t for s, t in make_digit_strings(20, 3, 4, reverse=False))
    with pytest.raises(ValueError, match="max_length must be >= 5, got 4"):
        make_digit_strings(10, 5, 4)
