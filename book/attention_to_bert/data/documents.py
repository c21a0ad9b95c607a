"""Chapter 2: documents whose label is decided by a few known sentences and words (HAN)."""

from __future__ import annotations

import random
from collections.abc import Sequence
from dataclasses import dataclass

import torch

from attention_to_bert.data.vocabulary import Vocabulary
from attention_to_bert.validate import check_int

DOCUMENT_LABELS = ("negative", "positive")
"""Names of the document labels: label 0 is negative, label 1 is positive."""

# Sentiment words (they judge the movie and other things alike) and the negations that flip them:
# "never boring plot" is positive.
POSITIVE_WORDS = (
    *"good great excellent wonderful brilliant superb".split(),
    *"lovely charming fine terrific decent delightful".split(),
)
NEGATIVE_WORDS = (
    *"bad awful terrible boring dull weak".split(),
    *"poor dreadful messy bland horrible lousy".split(),
)
NEGATIONS = ("not", "never", "hardly")
_INTENSIFIERS = ("really", "very", "truly", "quite", "rather")
# What an opinion is about: the movie (it decides the label) or something else (it does not).
MOVIE_ASPECTS = (
    *"movie film plot acting story script".split(),
    *"ending cast dialogue soundtrack director camera".split(),
)
OFF_TOPIC_THINGS = (
    *"popcorn parking weather queue bus traffic".split(),
    *"coffee heating restaurant dinner hotel weekend".split(),
)
# Opinion frames: "{opinion}" is an optional intensifier or negation and a sentiment word, "{thing}" a noun.
# Short review notes ("honestly never boring plot"). The words before an opinion vary from frame to frame
# and also occur in filler ("in", "i", "we"), so no single word announces an opinion. (An earlier
# version put "a" before every opinion; word attention then often picked that article, whose
# backward GRU state has already read the opinion.)
_OPINION_FRAMES = (
    "{opinion} {thing} overall",
    "honestly {opinion} {thing}",
    "simply {opinion} {thing}",
    "in short {opinion} {thing}",
    "{opinion} {thing} for sure",
    "such {opinion} {thing}",
    "what {opinion} {thing} this time",
    "my verdict {opinion} {thing}",
    "all in all {opinion} {thing}",
    "just {opinion} {thing} really",
    "we saw {opinion} {thing}",
    "i found {opinion} {thing}",
)
# Neutral filler, built from parts: who, what, when.
_FILLER_WHO = (
    "we",
    "i",
    "my sister",
    "my brother",
    "my friend",
    "our neighbour",
    "my parents",
    "the kids",
    "a colleague",
    "my cousin",
)
_FILLER_WHAT = (
    "went to see it",
    "bought two tickets",
    "took the train",
    "talked about it",
    "read a review",
    "sat near the back",
    "arrived a bit late",
    "checked the times",
    "watched the trailer",
    "met some friends",
    "walked to the cinema",
    "found a seat",
    "stayed until the credits",
    "waited in the lobby",
    "drove into town",
)
_FILLER_WHEN = (
    "on friday",
    "last week",
    "after work",
    "in the evening",
    "on a sunday",
    "during the holidays",
    "before lunch",
    "at nine",
    "yesterday",
    "this month",
)


@dataclass(frozen=True)
class Document:
    """One generated review: sentences of lowercase words, its label and where the label is decided.

    ``label`` is 1 (positive) or 0 (negative), see ``DOCUMENT_LABELS``. ``deciding_sentences`` lists the
    indices of the sentences that give an opinion about the movie (they decide the label; all agree).
    ``deciding_words`` lists ``(sentence index, word index)`` of the words that carry the opinion in
    each deciding sentence: the negation if present, the sentiment word and the movie noun it judges
    ("never boring plot"). Other sentences are neutral filler or opinions about off-topic things
    ("a great dinner"), which do not count.
    """

    sentences: list[list[str]]
    label: int
    deciding_sentences: list[int]
    deciding_words: list[tuple[int, int]]

    @property
    def label_name(self) -> str:
        """``"positive"`` or ``"negative"``."""
        return DOCUMENT_LABELS[self.label]


def _opinion_sentence(
    rng: random.Random, positive: bool, on_topic: bool
) -> tuple[list[str], list[int]]:
    """An opinion of the given polarity about the movie or an off-topic thing; returns the words and the
    positions of its negation (if any), sentiment word and noun."""
    negated = rng.random() < 0.35
    # A negation flips the polarity: "never boring plot" is positive, "hardly good film" negative.
    word = rng.choice(POSITIVE_WORDS if positive != negated else NEGATIVE_WORDS)
    thing = rng.choice(MOVIE_ASPECTS if on_topic else OFF_TOPIC_THINGS)
    if negated:
        opinion = [rng.choice(NEGATIONS)]
    else:
        opinion = [rng.choice(_INTENSIFIERS)] if rng.random() < 0.3 else []
    frame = rng.choice(_OPINION_FRAMES).split()
    at = frame.index("{opinion}")
    words = frame[:at] + opinion + [word, thing] + frame[at + 2 :]
    first = at if negated else at + len(opinion)
    return words, list(range(first, at + len(opinion) + 2))


def _filler_sentence(rng: random.Random) -> list[str]:
    parts = [rng.choice(_FILLER_WHO), rng.choice(_FILLER_WHAT)]
    if rng.random() < 0.6:
        parts.append(rng.choice(_FILLER_WHEN))
    return " ".join(parts).split()


def make_documents(
    num_documents: int,
    seed: int,
    min_sentences: int = 4,
    max_sentences: int = 8,
    max_off_topic: int = 3,
) -> list[Document]:
    """Generate ``num_documents`` short movie reviews, half positive and half negative on average.

    Each review has ``min_sentences``..``max_sentences`` sentences of 3 to 9 words: one or two opinions
    about the movie (they decide the label and agree with each other; a third of them are negated, as
    in "honestly never boring plot"), up to ``max_off_topic`` opinions of random polarity about off-topic things
    ("simply lovely dinner": the same sentiment words, but they do not count) and neutral filler. The same
    ``seed`` gives the same documents.
    """
    check_int("num_documents", num_documents)
    check_int("seed", seed, minimum=0)
    if not 2 <= min_sentences <= max_sentences:
        raise ValueError(
            f"need 2 <= min_sentences <= max_sentences, got {min_sentences} and {max_sentences}"
        )
    check_int("max_off_topic", max_off_topic, minimum=0)
    rng = random.Random(seed)
    documents = []
    for _ in range(num_documents):
        label = rng.randrange(2)
        num_sentences = rng.randint(min_sentences, max_sentences)
        num_deciding = rng.choice((1, 1, 2))
        num_off_topic = min(rng.randint(0, max_off_topic), num_sentences - num_deciding)
        kinds = ["deciding"] * num_deciding + ["off_topic"] * num_off_topic
        kinds += ["filler"] * (num_sentences - len(kinds))
        rng.shuffle(kinds)
        sentences, deciding_sentences, deciding_words = [], [], []
        for index, kind in enumerate(kinds):
            if kind == "deciding":
                words, positions = _opinion_sentence(rng, positive=label == 1, on_topic=True)
                deciding_sentences.append(index)
                deciding_words.extend((index, position) for position in positions)
            elif kind == "off_topic":
                words, _ = _opinion_sentence(rng, positive=rng.random() < 0.5, on_topic=False)
            else:
                words = _filler_sentence(rng)
            sentences.append(words)
        documents.append(Document(sentences, label, deciding_sentences, deciding_words))
    return documents


def document_splits(
    seed: int = 0, num_train: int = 2000, num_test: int = 1000
) -> tuple[list[Document], list[Document]]:
    """The fixed train and test documents of chapter 2: ``(train, test)``.

    Both come from one call of ``make_documents(num_train + num_test, seed)``, so they never overlap
    in generation order; identical short documents can still occur in both, as in real corpora.
    """
    documents = make_documents(num_train + num_test, seed)
    return documents[:num_train], documents[num_train:]


def document_vocabulary() -> Vocabulary:
    """Every word the document generator can produce, plus the special tokens (``<pad>`` is id 0)."""
    words = set()
    for group in (
        POSITIVE_WORDS,
        NEGATIVE_WORDS,
        NEGATIONS,
        _INTENSIFIERS,
        MOVIE_ASPECTS,
        OFF_TOPIC_THINGS,
    ):
        words.update(group)
    for phrase in (*_OPINION_FRAMES, *_FILLER_WHO, *_FILLER_WHAT, *_FILLER_WHEN):
        words.update(word for word in phrase.split() if not word.startswith("{"))
    return Vocabulary(words)


@dataclass
class DocumentBatch:
    """Documents as padded tensors, as the hierarchical models read them.

    ``word_ids``: ``(documents, sentences, words)`` long tensor, ``pad_id`` at padded positions.
    ``word_padding_mask``: same shape, bool, True at padded words (a padded sentence is all True).
    ``sentence_padding_mask``: ``(documents, sentences)``, bool, True at padded sentences.
    ``labels``: ``(documents,)`` long tensor of 0/1 labels.
    """

    word_ids: torch.Tensor
    word_padding_mask: torch.Tensor
    sentence_padding_mask: torch.Tensor
    labels: torch.Tensor

    def __len__(self) -> int:
        return self.word_ids.shape[0]

    def __getitem__(self, index) -> DocumentBatch:
        """Select documents (an int, a slice, or an index tensor) and keep them batched."""
        if isinstance(index, int):
            index = slice(index, index + 1)
        return DocumentBatch(
            self.word_ids[index],
            self.word_padding_mask[index],
            self.sentence_padding_mask[index],
            self.labels[index],
        )


def encode_documents(
    documents: Sequence[Document],
    vocabulary: Vocabulary,
    max_sentences: int | None = None,
    max_words: int | None = None,
) -> DocumentBatch:
    """Turn documents into padded id tensors ``(documents, sentences, words)`` with padding masks.

    The sentence and word axes are as long as the longest document and sentence, or ``max_sentences``
    and ``max_words`` if given (a ValueError if some document does not fit).
    """
    if not documents:
        raise ValueError("encode_documents needs at least one document, got none")
    if not all(isinstance(document, Document) for document in documents):
        raise TypeError("encode_documents expects a sequence of Document objects")
    longest_document = max(len(document.sentences) for document in documents)
    longest_sentence = max(
        len(sentence) for document in documents for sentence in document.sentences
    )
    num_sentences = longest_document if max_sentences is None else max_sentences
    num_words = longest_sentence if max_words is None else max_words
    if num_sentences < longest_document:
        raise ValueError(
            f"max_sentences={max_sentences} is less than the longest document ({longest_document})"
        )
    if num_words < longest_sentence:
        raise ValueError(
            f"max_words={max_words} is less than the longest sentence ({longest_sentence})"
        )
    word_ids = torch.full(
        (len(documents), num_sentences, num_words), vocabulary.pad_id, dtype=torch.long
    )
    for row, document in enumerate(documents):
        for column, sentence in enumerate(document.sentences):
            word_ids[row, column, : len(sentence)] = torch.tensor(
                vocabulary.encode(sentence), dtype=torch.long
            )
    word_padding_mask = word_ids == vocabulary.pad_id
    labels = torch.tensor([document.label for document in documents], dtype=torch.long)
    return DocumentBatch(word_ids, word_padding_mask, word_padding_mask.all(dim=-1), labels)
