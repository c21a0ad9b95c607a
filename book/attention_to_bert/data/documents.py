"""Chapter 2: documents whose label is decided by a few known sentences and words (HAN)."""

from __future__ import annotations

import random
from dataclasses import dataclass

from attention_to_bert.data.vocabulary import Vocabulary
from attention_to_bert.validate import check_int

DOCUMENT_LABELS = ("negative", "positive")  # the names of labels 0 and 1

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
# Short review notes ("honestly never boring plot"). The words before an opinion vary and also occur
# in filler ("in", "i", "we"), so that no single word announces an opinion (when "a" stood before every
# opinion, word attention often picked it: its backward GRU state has already read the opinion).
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
    *"we, i, my sister, my brother, my friend, our neighbour, my parents, the kids".split(", "),
    *"a colleague, my cousin".split(", "),
)
_FILLER_WHAT = (
    *"went to see it, bought two tickets, took the train, talked about it".split(", "),
    *"read a review, sat near the back, arrived a bit late, checked the times".split(", "),
    *"watched the trailer, met some friends, walked to the cinema, found a seat".split(", "),
    *"stayed until the credits, waited in the lobby, drove into town".split(", "),
)
_FILLER_WHEN = (
    *"on friday, last week, after work, in the evening, on a sunday".split(", "),
    *"during the holidays, before lunch, at nine, yesterday, this month".split(", "),
)


@dataclass(frozen=True)
class Document:
    """One generated review: sentences of lowercase words, its label and where the label is decided.

    ``label`` is 1 (positive) or 0 (negative). ``deciding_sentences``: the indices of the sentences
    that judge the movie (they decide the label and agree). ``deciding_words``: the ``(sentence,
    word)`` positions of the negation (if any), the sentiment word and the movie noun in each of them
    ("never boring plot"). Other sentences are filler or opinions about off-topic things.
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
    """Generate ``num_documents`` short movie reviews, about half positive (same ``seed``, same reviews).

    Each has ``min_sentences``..``max_sentences`` sentences of 3 to 9 words: one or two opinions about
    the movie (they decide the label; about a third are negated: "honestly never boring plot"), up to
    ``max_off_topic`` opinions of random polarity about off-topic things ("simply lovely dinner": the
    same sentiment words, which do not count) and neutral filler.
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
    groups = (POSITIVE_WORDS, NEGATIVE_WORDS, NEGATIONS, _INTENSIFIERS, MOVIE_ASPECTS)
    groups += (OFF_TOPIC_THINGS, _OPINION_FRAMES, _FILLER_WHO, _FILLER_WHAT, _FILLER_WHEN)
    words = {word for group in groups for phrase in group for word in phrase.split()}
    return Vocabulary(word for word in words if not word.startswith("{"))
