"""The chapter-3 data: human-written dates -> ISO dates, and their encoding."""

import datetime

import pytest
import torch

from attention_to_bert.data.dates import (
    DATE_FORMATS,
    DATE_SOURCE_CHARS,
    date_splits,
    encode_pairs,
    format_date,
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


def test_date_splits_are_seeded_and_every_target_is_the_iso_date_of_its_source():
    splits = date_splits(seed=3, num_train=400, num_test=100)
    again = date_splits(seed=3, num_train=400, num_test=100)
    assert splits.train == again.train and splits.test == again.test
    assert splits.train != date_splits(seed=4, num_train=400, num_test=100).train
    pairs = splits.train + splits.test
    assert len({target for _, target in pairs}) == 500  # distinct dates: no test date in training
    formats_seen = set()
    for source, target in pairs:
        date = datetime.date.fromisoformat(target)
        assert datetime.date(1950, 1, 1) <= date <= datetime.date(2049, 12, 31)
        matching = [name for name in DATE_FORMATS if format_date(date, name) == source]
        assert matching, source
        formats_seen.update(matching)
        assert set(source) <= set(DATE_SOURCE_CHARS)
    assert formats_seen == set(DATE_FORMATS)


def test_date_splits_vocabularies_and_arguments():
    splits = date_splits(seed=0, num_train=30, num_test=10)
    source_vocab, target_vocab = splits.source_vocab, splits.target_vocab
    assert source_vocab.pad_id == 0 and target_vocab.pad_id == 0
    assert BOS in target_vocab and EOS in target_vocab
    assert set(DATE_SOURCE_CHARS) <= set(source_vocab.stoi)
    with pytest.raises(ValueError, match="num_train must be >= 1, got 0"):
        date_splits(num_train=0)
    with pytest.raises(TypeError, match="num_test must be an int, got float"):
        date_splits(num_test=2.0)
    with pytest.raises(ValueError, match="at most 36525 distinct dates"):
        date_splits(num_train=36000, num_test=1000)
    default = date_splits()
    assert len(default.train) == 6000 and len(default.test) == 1000


def test_encode_pairs_pads_sources_and_frames_targets():
    splits = date_splits(num_train=1, num_test=1)
    source_vocab, target_vocab = splits.source_vocab, splits.target_vocab
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
    splits = date_splits(num_train=1, num_test=1)
    source_vocab, target_vocab = splits.source_vocab, splits.target_vocab
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
