"""Chapter 2: documents of real review sentences, one of which (about a film) decides the label.

A document mixes one IMDb sentence, whose label is the document's, with sentences from Yelp and
Amazon reviews (restaurants, products) that carry their own, off-topic opinions. The sentences are
the UCI "Sentiment Labelled Sentences" (``data.sentiment``). ``sentence_splits`` splits the
sentences *before* any document is built, so a test document holds only held-out sentences.
"""

from __future__ import annotations

import random
from dataclasses import dataclass

from attention_to_bert.data.sentiment import load_sentences
from attention_to_bert.validate import check_int

DOCUMENT_LABELS = ("negative", "positive")  # the names of labels 0 and 1
Sentences = list[tuple[str, int]]  # (sentence, label) pairs


@dataclass(frozen=True)
class Document:
    """A document: its ``sentences``, its ``label`` (the film sentence's) and where the film sentence
    is (``deciding``); ``sentence_labels`` are every sentence's own labels."""

    sentences: tuple[str, ...]
    label: int
    deciding: int
    sentence_labels: tuple[int, ...]

    @property
    def label_name(self) -> str:
        return DOCUMENT_LABELS[self.label]


def _check_seed(seed: object) -> None:
    if not isinstance(seed, int) or isinstance(seed, bool):
        raise TypeError(f"seed must be an int, got {type(seed).__name__}")


def sentence_splits(
    test_share: float = 0.3, seed: int = 0
) -> tuple[dict[str, Sentences], dict[str, Sentences]]:
    """Split the film (IMDb) and the off-topic (Yelp + Amazon) sentences into training and test.

    Returns ``(train, test)``, each ``{"film": [...], "other": [...]}`` of ``(sentence, label)``;
    ``test_share`` of each kind is held out. No sentence is on both sides.
    """
    if not isinstance(test_share, int | float) or isinstance(test_share, bool):
        raise TypeError(f"test_share must be a number, got {type(test_share).__name__}")
    if not 0 < test_share < 1:
        raise ValueError(f"test_share must be in (0, 1), got {test_share}")
    _check_seed(seed)
    rng = random.Random(seed)
    train: dict[str, Sentences] = {}
    test: dict[str, Sentences] = {}
    films = load_sentences("imdb")
    seen = {sentence for sentence, _ in films}  # a sentence such as "I love it." can occur twice
    others = []
    for sentence, label in load_sentences("yelp") + load_sentences("amazon"):
        if sentence not in seen:
            seen.add(sentence)
            others.append((sentence, label))
    kinds = {"film": films, "other": others}
    for kind, pairs in kinds.items():
        pairs = pairs[:]
        rng.shuffle(pairs)
        held_out = round(test_share * len(pairs))
        test[kind], train[kind] = pairs[:held_out], pairs[held_out:]
    return train, test


def make_documents(
    sentences: dict[str, Sentences],
    count: int,
    min_sentences: int = 3,
    max_sentences: int = 5,
    seed: int = 0,
) -> list[Document]:
    """``count`` documents of ``min_sentences`` to ``max_sentences`` sentences drawn from
    ``sentences`` (``{"film": ..., "other": ...}``, as ``sentence_splits`` returns): one film
    sentence at a random place among off-topic ones, all different within a document."""
    if not isinstance(sentences, dict) or set(sentences) != {"film", "other"}:
        raise TypeError("sentences must be a dict with the keys 'film' and 'other'")
    check_int("count", count)
    check_int("min_sentences", min_sentences)
    check_int("max_sentences", max_sentences)
    if max_sentences < min_sentences:
        raise ValueError(
            f"max_sentences must be >= min_sentences ({min_sentences}), got {max_sentences}"
        )
    if not sentences["film"] or len(sentences["other"]) < max_sentences - 1:
        raise ValueError(
            f"need a film sentence and at least {max_sentences - 1} other sentences, got "
            f"{len(sentences['film'])} and {len(sentences['other'])}"
        )
    _check_seed(seed)
    rng = random.Random(seed)
    documents = []
    for _ in range(count):
        film = rng.choice(sentences["film"])
        others = rng.sample(sentences["other"], rng.randint(min_sentences, max_sentences) - 1)
        deciding = rng.randint(0, len(others))
        chosen = [*others[:deciding], film, *others[deciding:]]
        documents.append(
            Document(
                tuple(sentence for sentence, _ in chosen),
                film[1],
                deciding,
                tuple(label for _, label in chosen),
            )
        )
    return documents
