"""Chapter 2's documents: real sentences, split before documents are built, arguments checked."""

import pytest

from attention_to_bert.data.documents import DOCUMENT_LABELS, make_documents, sentence_splits
from attention_to_bert.data.sentiment import load_sentences


def test_splits_hold_out_sentences_that_never_occur_in_training():
    train, test = sentence_splits(test_share=0.3, seed=0)
    for kind in ("film", "other"):
        assert not {s for s, _ in train[kind]} & {s for s, _ in test[kind]}
        share = len(test[kind]) / (len(train[kind]) + len(test[kind]))
        assert abs(share - 0.3) < 0.01
    films = {s for s, _ in load_sentences("imdb")}
    assert {s for s, _ in train["film"] + test["film"]} == films
    assert not films & {s for s, _ in train["other"] + test["other"]}


def test_same_seed_same_split_and_documents_other_seed_other_ones():
    assert sentence_splits(seed=1) == sentence_splits(seed=1)
    assert sentence_splits(seed=1) != sentence_splits(seed=2)
    train, _ = sentence_splits()
    assert make_documents(train, 20, seed=3) == make_documents(train, 20, seed=3)
    assert make_documents(train, 20, seed=3) != make_documents(train, 20, seed=4)


def test_a_document_has_one_film_sentence_that_gives_its_label():
    train, test = sentence_splits()
    films = dict(test["film"])
    others = dict(test["other"])
    documents = make_documents(test, 300, min_sentences=2, max_sentences=6, seed=0)
    places = set()
    for document in documents:
        assert 2 <= len(document.sentences) <= 6
        assert len(set(document.sentences)) == len(document.sentences)
        film = document.sentences[document.deciding]
        assert films[film] == document.label
        assert document.label_name == DOCUMENT_LABELS[document.label]
        assert document.sentence_labels[document.deciding] == document.label
        for index, sentence in enumerate(document.sentences):
            if index != document.deciding:
                assert others[sentence] == document.sentence_labels[index]
        places.add(document.deciding)
    assert places == set(range(6))  # the film sentence can be anywhere
    assert {d.label for d in documents} == {0, 1}


@pytest.mark.parametrize(
    ("arguments", "error", "message"),
    [
        ({"count": -5}, ValueError, "count must be >= 1, got -5"),
        ({"count": 0}, ValueError, "count must be >= 1, got 0"),
        ({"count": 2.5}, TypeError, "count must be an int, got float"),
        ({"min_sentences": 0}, ValueError, "min_sentences must be >= 1"),
        ({"min_sentences": 4, "max_sentences": 3}, ValueError, "max_sentences must be >= min"),
        ({"max_sentences": 5000}, ValueError, "at least 4999 other sentences"),
        ({"seed": None}, TypeError, "seed must be an int, got NoneType"),
        ({"seed": "abc"}, TypeError, "seed must be an int, got str"),
        ({"sentences": [("a film", 1)]}, TypeError, "sentences must be a dict"),
    ],
)
def test_make_documents_names_the_bad_argument(arguments, error, message):
    train, _ = sentence_splits()
    call = {"sentences": train, "count": 10} | arguments
    with pytest.raises(error, match=message):
        make_documents(**call)


@pytest.mark.parametrize(
    ("arguments", "error", "message"),
    [
        ({"test_share": 0}, ValueError, r"test_share must be in \(0, 1\), got 0"),
        ({"test_share": 1.5}, ValueError, r"test_share must be in \(0, 1\), got 1.5"),
        ({"test_share": "0.3"}, TypeError, "test_share must be a number, got str"),
        ({"seed": 1.5}, TypeError, "seed must be an int, got float"),
    ],
)
def test_sentence_splits_names_the_bad_argument(arguments, error, message):
    with pytest.raises(error, match=message):
        sentence_splits(**arguments)
