import pytest
import torch

from attention_to_bert.data.vocabulary import BOS, EOS, PAD, UNK, Vocabulary, pad_sequences


def test_vocabulary_round_trip_with_specials_first():
    vocab = Vocabulary("hello world".split() + ["hello"])
    assert vocab.itos[:4] == [PAD, UNK, BOS, EOS] and vocab.pad_id == 0
    assert len(vocab) == 6 and "world" in vocab
    ids = vocab.encode(["hello", "there", "world"], add_bos=True, add_eos=True)
    assert ids[0] == vocab.stoi[BOS] and ids[-1] == vocab.stoi[EOS] and ids[2] == vocab.stoi[UNK]
    assert vocab.decode(ids) == ["hello", "world"]  # <unk> is a special: dropped
    assert vocab.decode(ids, strip_specials=False)[0] == BOS
    assert vocab.decode([vocab.id("hello"), vocab.stoi[EOS], vocab.id("world")]) == ["hello"]


def test_pad_sequences_pads_right_and_checks_length():
    padded = pad_sequences([[1, 2, 3], [4]], pad_id=0)
    assert torch.equal(padded, torch.tensor([[1, 2, 3], [4, 0, 0]]))
    assert pad_sequences([[1]], length=3).shape == (1, 3)
    with pytest.raises(ValueError, match="shorter than the longest"):
        pad_sequences([[1, 2, 3]], length=2)
    with pytest.raises(ValueError, match="at least one"):
        pad_sequences([])
