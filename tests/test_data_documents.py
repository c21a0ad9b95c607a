"""Chapter 2's document generator: seeded, and labelled by the sentences and words it says decide."""

import pytest

from attention_to_bert.data.documents import (
    DOCUMENT_LABELS,
    MOVIE_ASPECTS,
    NEGATIONS,
    NEGATIVE_WORDS,
    OFF_TOPIC_THINGS,
    POSITIVE_WORDS,
    Document,
    document_splits,
    document_vocabulary,
    make_documents,
)


def test_same_seed_same_documents_other_seed_other_documents():
    assert make_documents(20, seed=3) == make_documents(20, seed=3)
    assert make_documents(20, seed=3) != make_documents(20, seed=4)


def test_documents_have_the_promised_shape():
    documents = make_documents(300, seed=0)
    for document in documents:
        assert 4 <= len(document.sentences) <= 8
        assert all(3 <= len(sentence) <= 9 for sentence in document.sentences)
        assert 1 <= len(document.deciding_sentences) <= 2
        assert document.label in (0, 1) and document.label_name == DOCUMENT_LABELS[document.label]
        assert {sentence for sentence, _ in document.deciding_words} == set(
            document.deciding_sentences
        )
    share_positive = sum(document.label for document in documents) / len(documents)
    assert 0.4 < share_positive < 0.6


def _polarity(document: Document, sentence_index: int) -> int:
    """Recompute a deciding sentence's polarity from its deciding words: sentiment word, flipped by a negation."""
    words = [document.sentences[s][w] for s, w in document.deciding_words if s == sentence_index]
    sentiment = [word for word in words if word in POSITIVE_WORDS or word in NEGATIVE_WORDS]
    negated = any(word in NEGATIONS for word in words)
    assert len(sentiment) == 1 and len(words) == 2 + negated and words[-1] in MOVIE_ASPECTS
    assert not any(word in OFF_TOPIC_THINGS for word in document.sentences[sentence_index])
    return int((sentiment[0] in POSITIVE_WORDS) != negated)


def test_the_deciding_words_decide_the_label():
    documents = make_documents(500, seed=1)
    for document in documents:
        assert all(_polarity(document, s) == document.label for s in document.deciding_sentences)
    negated = sum(
        any(doc.sentences[s][w] in NEGATIONS for s, w in doc.deciding_words) for doc in documents
    )
    assert negated > 100  # negation is common enough that a bag of words cannot read the label off


def test_off_topic_opinions_carry_no_signal_so_bag_of_words_is_fooled():
    # The same sentiment words outside the deciding sentences agree with the label only by chance.
    agree = total = 0
    for document in make_documents(1000, seed=2):
        for index, sentence in enumerate(document.sentences):
            if index in document.deciding_sentences:
                continue
            assert not any(word in MOVIE_ASPECTS for word in sentence)
            for word in sentence:
                if word in POSITIVE_WORDS or word in NEGATIVE_WORDS:
                    total += 1
                    agree += (word in POSITIVE_WORDS) == (document.label == 1)
    assert total > 500 and 0.45 < agree / total < 0.55


def test_splits_are_fixed_and_sized():
    train, test = document_splits(seed=0)
    assert len(train) == 2000 and len(test) == 1000
    assert document_splits(seed=0) == (train, test)
    small_train, small_test = document_splits(seed=0, num_train=10, num_test=5)
    assert small_train == train[:10] and len(small_test) == 5


def test_vocabulary_covers_every_generated_word():
    vocabulary = document_vocabulary()
    assert vocabulary.pad_id == 0
    for document in make_documents(500, seed=5):
        assert all(word in vocabulary for sentence in document.sentences for word in sentence)


def test_make_documents_rejects_bad_arguments():
    with pytest.raises(ValueError, match="num_documents must be >= 1"):
        make_documents(0, seed=0)
    with pytest.raises(TypeError, match="seed must be an int"):
        make_documents(5, seed="0")
    with pytest.raises(ValueError, match="min_sentences <= max_sentences"):
        make_documents(5, seed=0, min_sentences=6, max_sentences=5)
    with pytest.raises(ValueError, match="max_off_topic must be >= 0"):
        make_documents(5, seed=0, max_off_topic=-1)


def test_longer_and_crowded_documents_keep_their_promises():
    for document in make_documents(100, seed=3, min_sentences=12, max_sentences=16):
        assert 12 <= len(document.sentences) <= 16 and 1 <= len(document.deciding_sentences) <= 2
    crowded = make_documents(200, seed=4, min_sentences=8, max_sentences=8, max_off_topic=6)
    assert all(len(document.sentences) == 8 for document in crowded)
    off_topic = [
        sum(any(word in OFF_TOPIC_THINGS for word in sentence) for sentence in document.sentences)
        for document in crowded
    ]
    assert max(off_topic) == 6 and sum(off_topic) / len(off_topic) > 2.5
