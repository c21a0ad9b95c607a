"""Generated data sets and vocabularies, all seeded; nothing is downloaded.

One section per chapter that needs data. Every generator takes a ``seed`` and returns the same data
for the same seed on every machine (it uses its own ``random.Random(seed)``, not global state).
"""

from __future__ import annotations

import datetime
import math
import random
import string
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass

import torch

from attention_to_bert.attention import check_positive_int

PAD, UNK, BOS, EOS = "<pad>", "<unk>", "<bos>", "<eos>"


class Vocabulary:
    """A two-way map between tokens and integer ids; the special tokens come first (``<pad>`` is 0)."""

    def __init__(self, tokens: Iterable[str], specials: Sequence[str] = (PAD, UNK, BOS, EOS)) -> None:
        self.itos: list[str] = list(dict.fromkeys([*specials, *sorted(set(tokens) - set(specials))]))
        self.stoi: dict[str, int] = {token: index for index, token in enumerate(self.itos)}
        self.specials = tuple(specials)

    def __len__(self) -> int:
        return len(self.itos)

    def __contains__(self, token: str) -> bool:
        return token in self.stoi

    def __repr__(self) -> str:
        return f"Vocabulary({len(self)} tokens)"

    @property
    def pad_id(self) -> int:
        return self.stoi[PAD]

    def id(self, token: str) -> int:
        """The id of ``token``; unknown tokens map to ``<unk>`` (an error if there is none)."""
        if token in self.stoi:
            return self.stoi[token]
        if UNK in self.stoi:
            return self.stoi[UNK]
        raise KeyError(f"token {token!r} is not in the vocabulary and it has no {UNK} token")

    def encode(self, tokens: Iterable[str], add_bos: bool = False, add_eos: bool = False) -> list[int]:
        """Token ids of ``tokens``, optionally framed by ``<bos>`` and ``<eos>``."""
        ids = [self.id(token) for token in tokens]
        if add_bos:
            ids.insert(0, self.stoi[BOS])
        if add_eos:
            ids.append(self.stoi[EOS])
        return ids

    def decode(self, ids: Iterable[int], strip_specials: bool = True) -> list[str]:
        """Tokens of ``ids``; stops at ``<eos>`` and drops special tokens unless ``strip_specials`` is False."""
        tokens = []
        for index in ids:
            token = self.itos[int(index)]
            if strip_specials and token == EOS:
                break
            if strip_specials and token in self.specials:
                continue
            tokens.append(token)
        return tokens


def pad_sequences(sequences: Sequence[Sequence[int]], pad_id: int = 0, length: int | None = None) -> torch.Tensor:
    """Stack id lists into a ``(batch, length)`` long tensor, padding on the right with ``pad_id``."""
    if not sequences:
        raise ValueError("pad_sequences needs at least one sequence, got none")
    longest = max(len(sequence) for sequence in sequences)
    length = longest if length is None else length
    if length < longest:
        raise ValueError(f"length={length} is shorter than the longest sequence ({longest})")
    padded = torch.full((len(sequences), length), pad_id, dtype=torch.long)
    for row, sequence in enumerate(sequences):
        padded[row, : len(sequence)] = torch.as_tensor(list(sequence), dtype=torch.long)
    return padded


# --- Chapter 1: a noisy 1-D function for attention pooling (Nadaraya–Watson) ---


def regression_function(x: torch.Tensor) -> torch.Tensor:
    """The smooth function behind chapter 1's regression data: ``f(x) = 2 sin(x) + x^0.8``."""
    return 2 * torch.sin(x) + x.clamp_min(0) ** 0.8


@dataclass(frozen=True)
class RegressionData:
    """Noisy training pairs ``(x_train, y_train)`` and noise-free test pairs ``(x_test, y_test)``, 1-D float tensors."""

    x_train: torch.Tensor
    y_train: torch.Tensor
    x_test: torch.Tensor
    y_test: torch.Tensor


def regression_data(
    num_train: int = 50, num_test: int = 50, noise: float = 0.5, high: float = 5.0, seed: int = 0
) -> RegressionData:
    """Points of ``f(x) = 2 sin(x) + x^0.8`` on ``[0, high]`` for attention pooling (Nadaraya–Watson).

    Training inputs are ``num_train`` sorted uniform draws with Gaussian noise of standard deviation
    ``noise`` added to their targets; test inputs are ``num_test`` evenly spaced points with the
    noise-free targets. Computed in Python floats, so the data are the same on every machine.
    """
    if num_train < 1 or num_test < 2:
        raise ValueError(f"need num_train >= 1 and num_test >= 2, got {num_train} and {num_test}")
    if noise < 0 or high <= 0:
        raise ValueError(f"noise must be >= 0 and high > 0, got noise={noise} and high={high}")
    rng = random.Random(seed)
    x_train = sorted(rng.uniform(0.0, high) for _ in range(num_train))
    y_train = [2 * math.sin(x) + x**0.8 + rng.gauss(0.0, noise) for x in x_train]
    x_test = [high * index / (num_test - 1) for index in range(num_test)]
    y_test = [2 * math.sin(x) + x**0.8 for x in x_test]
    return RegressionData(*(torch.tensor(values, dtype=torch.float32) for values in (x_train, y_train, x_test, y_test)))

# --- Chapter 2: documents whose label is decided by a few known sentences and words (HAN) ---

DOCUMENT_LABELS = ("negative", "positive")
"""Names of the document labels: label 0 is negative, label 1 is positive."""

# Sentiment words (they judge the movie and other things alike) and the negations that flip them:
# "never boring plot" is positive.
POSITIVE_WORDS = (
    "good", "great", "excellent", "wonderful", "brilliant", "superb",
    "lovely", "charming", "fine", "terrific", "decent", "delightful",
)
NEGATIVE_WORDS = (
    "bad", "awful", "terrible", "boring", "dull", "weak",
    "poor", "dreadful", "messy", "bland", "horrible", "lousy",
)
NEGATIONS = ("not", "never", "hardly")
_INTENSIFIERS = ("really", "very", "truly", "quite", "rather")
# What an opinion is about: the movie (it decides the label) or something else (it does not).
MOVIE_ASPECTS = (
    "movie", "film", "plot", "acting", "story", "script",
    "ending", "cast", "dialogue", "soundtrack", "director", "camera",
)
OFF_TOPIC_THINGS = (
    "popcorn", "parking", "weather", "queue", "bus", "traffic",
    "coffee", "heating", "restaurant", "dinner", "hotel", "weekend",
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
    "we", "i", "my sister", "my brother", "my friend", "our neighbour",
    "my parents", "the kids", "a colleague", "my cousin",
)
_FILLER_WHAT = (
    "went to see it", "bought two tickets", "took the train", "talked about it",
    "read a review", "sat near the back", "arrived a bit late", "checked the times",
    "watched the trailer", "met some friends", "walked to the cinema", "found a seat",
    "stayed until the credits", "waited in the lobby", "drove into town",
)
_FILLER_WHEN = (
    "on friday", "last week", "after work", "in the evening", "on a sunday",
    "during the holidays", "before lunch", "at nine", "yesterday", "this month",
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
    def text(self) -> str:
        """The document as plain text, one sentence after another, each ending with a full stop."""
        return " ".join(" ".join(sentence) + " ." for sentence in self.sentences)

    @property
    def label_name(self) -> str:
        """``"positive"`` or ``"negative"``."""
        return DOCUMENT_LABELS[self.label]


def _opinion_sentence(rng: random.Random, positive: bool, on_topic: bool) -> tuple[list[str], list[int]]:
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
    num_documents: int, seed: int, min_sentences: int = 4, max_sentences: int = 8, max_off_topic: int = 3
) -> list[Document]:
    """Generate ``num_documents`` short movie reviews, half positive and half negative on average.

    Each review has ``min_sentences``..``max_sentences`` sentences of 3 to 9 words: one or two opinions
    about the movie (they decide the label and agree with each other; a third of them are negated, as
    in "honestly never boring plot"), up to ``max_off_topic`` opinions of random polarity about off-topic things
    ("simply lovely dinner": the same sentiment words, but they do not count) and neutral filler. The same
    ``seed`` gives the same documents.
    """
    check_positive_int("num_documents", num_documents)
    if not isinstance(seed, int):
        raise TypeError(f"seed must be an int, got {type(seed).__name__}")
    if not 2 <= min_sentences <= max_sentences:
        raise ValueError(f"need 2 <= min_sentences <= max_sentences, got {min_sentences} and {max_sentences}")
    if not isinstance(max_off_topic, int) or max_off_topic < 0:
        raise ValueError(f"max_off_topic must be an int >= 0, got {max_off_topic!r}")
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
    """The fixed train and test documents of chapter 2 (chapter 7 reuses them): ``(train, test)``.

    Both come from one call of ``make_documents(num_train + num_test, seed)``, so they never overlap
    in generation order; identical short documents can still occur in both, as in real corpora.
    """
    documents = make_documents(num_train + num_test, seed)
    return documents[:num_train], documents[num_train:]


def document_vocabulary() -> Vocabulary:
    """Every word the document generator can produce, plus the special tokens (``<pad>`` is id 0)."""
    words = set()
    for group in (POSITIVE_WORDS, NEGATIVE_WORDS, NEGATIONS, _INTENSIFIERS, MOVIE_ASPECTS, OFF_TOPIC_THINGS):
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
            self.word_ids[index], self.word_padding_mask[index], self.sentence_padding_mask[index], self.labels[index]
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
    longest_sentence = max(len(sentence) for document in documents for sentence in document.sentences)
    num_sentences = longest_document if max_sentences is None else max_sentences
    num_words = longest_sentence if max_words is None else max_words
    if num_sentences < longest_document:
        raise ValueError(f"max_sentences={max_sentences} is less than the longest document ({longest_document})")
    if num_words < longest_sentence:
        raise ValueError(f"max_words={max_words} is less than the longest sentence ({longest_sentence})")
    word_ids = torch.full((len(documents), num_sentences, num_words), vocabulary.pad_id, dtype=torch.long)
    for row, document in enumerate(documents):
        for column, sentence in enumerate(document.sentences):
            word_ids[row, column, : len(sentence)] = torch.tensor(vocabulary.encode(sentence), dtype=torch.long)
    word_padding_mask = word_ids == vocabulary.pad_id
    labels = torch.tensor([document.label for document in documents], dtype=torch.long)
    return DocumentBatch(word_ids, word_padding_mask, word_padding_mask.all(dim=-1), labels)


# --- Chapter 3: human-written dates -> ISO dates, character level (seq2seq; reused in chapter 6) ---

_MONTHS = ("january", "february", "march", "april", "may", "june", "july", "august", "september", "october",
           "november", "december")
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
    "thursday, 25 jun 2009": lambda d: f"{_WEEKDAYS[d.weekday()]}, {d.day} {_MONTHS[d.month - 1][:3]} {d.year}",
    "thu 25 june 2009": lambda d: f"{_WEEKDAYS[d.weekday()][:3]} {d.day} {_MONTHS[d.month - 1]} {d.year}",
    "june 25, 2009": lambda d: f"{_MONTHS[d.month - 1]} {d.day}, {d.year}",
    "jun 25 2009": lambda d: f"{_MONTHS[d.month - 1][:3]} {d.day} {d.year}",
    "thursday, june 25, 2009": lambda d: f"{_WEEKDAYS[d.weekday()]}, {_MONTHS[d.month - 1]} {d.day}, {d.year}",
    "the 25th of june 2009": lambda d: f"the {_ordinal(d.day)} of {_MONTHS[d.month - 1]} {d.year}",
    "25.06.2009": lambda d: f"{d.day:02d}.{d.month:02d}.{d.year}",
    "06/25/2009": lambda d: f"{d.month:02d}/{d.day:02d}/{d.year}",
}
"""The date formats of the chapter-3 task, named by how 25 June 2009 (a Thursday) looks in each."""

DATE_SOURCE_CHARS = string.ascii_lowercase + string.digits + " ,./"
"""Every character a human-written date may contain (the source alphabet)."""
DATE_TARGET_CHARS = string.digits + "-"
"""Every character of an ISO date (the target alphabet)."""


def _check_count(name: str, value: int, minimum: int = 1) -> None:
    if not isinstance(value, int) or isinstance(value, bool):
        raise TypeError(f"{name} must be an int, got {type(value).__name__}")
    if value < minimum:
        raise ValueError(f"{name} must be >= {minimum}, got {value}")


def _pick_formats(formats: Sequence[str] | None) -> list[str]:
    names = list(DATE_FORMATS) if formats is None else list(formats)
    unknown = [name for name in names if name not in DATE_FORMATS]
    if unknown or not names:
        raise ValueError(f"formats must be a non-empty list of names from DATE_FORMATS {list(DATE_FORMATS)}, "
                         f"got {names!r}")
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
    return [_FIRST_DATE + datetime.timedelta(days=offset) for offset in rng.sample(range(span), count)]


def make_dates(num_examples: int, seed: int = 0, formats: Sequence[str] | None = None) -> list[tuple[str, str]]:
    """``num_examples`` pairs (human date, ISO date) with distinct dates, e.g. ("thursday, 25 jun 2009", "2009-06-25").

    Dates are drawn uniformly from 1950–2049, each written in a format drawn uniformly from ``formats``
    (default: all of ``DATE_FORMATS``). The same ``seed`` gives the same pairs on every machine.
    """
    _check_count("num_examples", num_examples)
    names = _pick_formats(formats)
    rng = random.Random(seed)
    return [(format_date(date, rng.choice(names)), date.isoformat()) for date in _random_dates(num_examples, rng)]


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


def date_splits(seed: int = 0, num_train: int = 6000, num_test: int = 1000,
                formats: Sequence[str] | None = None) -> DateSplits:
    """The fixed train/test split of the date task used by chapters 3 and 6 (defaults: 6000 / 1000 pairs).

    All ``num_train + num_test`` dates are distinct, so no test date is seen in training in any format.
    """
    _check_count("num_train", num_train)
    _check_count("num_test", num_test)
    pairs = make_dates(num_train + num_test, seed=seed, formats=formats)
    source_vocab, target_vocab = date_vocabularies()
    return DateSplits(pairs[:num_train], pairs[num_train:], source_vocab, target_vocab)


def make_digit_strings(num_examples: int, min_length: int, max_length: int, seed: int = 0,
                       reverse: bool = True) -> list[tuple[str, str]]:
    """Pairs (digit string, its reverse) — or a copy if ``reverse`` is False — with lengths uniform in
    ``min_length..max_length``: a task whose difficulty for a fixed-size memory grows with the length."""
    _check_count("num_examples", num_examples)
    _check_count("min_length", min_length)
    _check_count("max_length", max_length, minimum=min_length)
    rng = random.Random(seed)
    pairs = []
    for _ in range(num_examples):
        digits = "".join(rng.choice(string.digits) for _ in range(rng.randint(min_length, max_length)))
        pairs.append((digits, digits[::-1] if reverse else digits))
    return pairs


def encode_pairs(pairs: Sequence[tuple[str, str]], source_vocab: Vocabulary,
                 target_vocab: Vocabulary) -> tuple[torch.Tensor, torch.Tensor, torch.Tensor]:
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
            raise ValueError(f"{side} strings contain characters outside the {side} vocabulary: {unknown}")
    sources = [source_vocab.encode(source) for source, _ in pairs]
    targets = [target_vocab.encode(target, add_bos=True, add_eos=True) for _, target in pairs]
    lengths = torch.tensor([len(ids) for ids in sources], dtype=torch.long)
    if (lengths == 0).any():
        raise ValueError("source strings must not be empty")
    return (pad_sequences(sources, source_vocab.pad_id), lengths, pad_sequences(targets, target_vocab.pad_id))


# --- Chapter 4: a toy task whose self-attention map is meaningful ---

PARTNER_SYMBOLS = "ABCDEFGHIJKLMNOPQRSTUVWXYZ"


def partner_sequences(
    num_sequences: int, num_pairs: int = 5, num_symbols: int = 16, num_digits: int = 10, seed: int = 0
) -> tuple[torch.Tensor, torch.Tensor, torch.Tensor]:
    """Sequences of letter-digit tokens in which every letter appears exactly twice ("find your partner").

    Each sequence holds ``num_pairs`` different letters (ids ``0 .. num_symbols - 1``, drawn without
    replacement), each twice, in a random order, so it has ``2 * num_pairs`` tokens; every token also
    carries a random digit (``0 .. num_digits - 1``, independent of everything else). Returns
    ``(letters, digits, partners)``, long tensors of shape ``(num_sequences, 2 * num_pairs)``:
    ``partners[b, i]`` is the position of the other copy of ``letters[b, i]``, so the digit carried by
    token i's partner is ``digits.gather(1, partners)[b, i]``. Letter ``s`` prints as ``PARTNER_SYMBOLS[s]``.
    """
    counts = (("num_sequences", num_sequences), ("num_pairs", num_pairs), ("num_symbols", num_symbols),
              ("num_digits", num_digits))
    for name, value in counts:
        if not isinstance(value, int) or isinstance(value, bool):
            raise TypeError(f"{name} must be an int, got {type(value).__name__}")
    for name, value in (("num_sequences", num_sequences), ("num_pairs", num_pairs), ("num_digits", num_digits)):
        if value < 1:
            raise ValueError(f"{name} must be >= 1, got {value}")
    if not num_pairs <= num_symbols <= len(PARTNER_SYMBOLS):
        raise ValueError(
            f"num_symbols must be between num_pairs ({num_pairs}) and {len(PARTNER_SYMBOLS)}, got {num_symbols}"
        )
    rng = random.Random(seed)
    length = 2 * num_pairs
    letters = torch.empty(num_sequences, length, dtype=torch.long)
    partners = torch.empty(num_sequences, length, dtype=torch.long)
    digits = torch.empty(num_sequences, length, dtype=torch.long)
    for row in range(num_sequences):
        symbols = rng.sample(range(num_symbols), num_pairs)
        order = list(range(length))
        rng.shuffle(order)  # positions order[2k] and order[2k + 1] hold letter k
        for k, symbol in enumerate(symbols):
            first, second = order[2 * k], order[2 * k + 1]
            letters[row, first] = letters[row, second] = symbol
            partners[row, first], partners[row, second] = second, first
        digits[row] = torch.tensor([rng.randrange(num_digits) for _ in range(length)])
    return letters, digits, partners


# --- Chapter 7: a small corpus for masked-LM and next-sentence pre-training ---

BERT_PAD, BERT_UNK, BERT_CLS, BERT_SEP, BERT_MASK = "[PAD]", "[UNK]", "[CLS]", "[SEP]", "[MASK]"
BERT_SPECIALS = (BERT_PAD, BERT_UNK, BERT_CLS, BERT_SEP, BERT_MASK)
"""BERT's special tokens, in the order of their ids (``[PAD]`` is 0, as in BERT's own vocabulary)."""

# Six little worlds. A story stays in one world; its sentences are chained: the object of a sentence
# (or its subject, after an intransitive verb) is the subject of the next one.
_STORY_WORLDS = {
    "farm": dict(nouns=("farmer", "cow", "horse", "goat", "hen", "pig"),
                 verbs=("feed", "chase", "watch", "follow", "wash"),
                 intransitive=("sleep", "eat", "run", "wait"), adjectives=("old", "brown", "muddy", "lazy"),
                 places=("barn", "field", "yard")),
    "sea": dict(nouns=("sailor", "seal", "crab", "whale", "gull", "captain"),
                 verbs=("catch", "pull", "find", "hold", "greet"),
                intransitive=("swim", "float", "sing", "rest"), adjectives=("wet", "blue", "tired", "small"),
                places=("harbour", "bay", "ship")),
    "school": dict(nouns=("teacher", "student", "pupil", "friend", "parent", "tutor"),
                 verbs=("help", "teach", "call", "meet", "praise"),
                   intransitive=("read", "write", "listen", "laugh"), adjectives=("young", "clever", "quiet", "busy"),
                   places=("classroom", "library", "hall")),
    "city": dict(nouns=("driver", "merchant", "tourist", "cyclist", "mayor", "guard"),
                 verbs=("visit", "pass", "hire", "stop", "thank"),
                 intransitive=("shop", "walk", "drive", "wander"), adjectives=("rich", "loud", "famous", "early"),
                 places=("market", "station", "street")),
    "forest": dict(nouns=("hunter", "bear", "rabbit", "owl", "fox", "squirrel"),
                 verbs=("track", "hear", "scare", "spot", "trap"),
                   intransitive=("hide", "climb", "howl", "hunt"), adjectives=("wild", "grey", "silent", "hungry"),
                   places=("forest", "cave", "valley")),
    "kitchen": dict(nouns=("chef", "waiter", "guest", "diner", "baker", "host"),
                 verbs=("serve", "taste", "bring", "invite", "please"),
                    intransitive=("cook", "bake", "dine", "smile"), adjectives=("hot", "sweet", "polite", "happy"),
                    places=("kitchen", "restaurant", "cafe")),
}
STORY_WORLDS = tuple(_STORY_WORLDS)
_SINGULAR_DETERMINERS = ("the", "this", "that", "one")
_PLURAL_DETERMINERS = ("the", "these", "those", "some")


def _with_s(word: str) -> str:
    """Plural of a noun / third person singular of a verb: fox -> foxes, watch -> watches, cow -> cows."""
    return word + ("es" if word.endswith(("s", "sh", "ch", "x")) else "s")


def _noun_phrase(rng: random.Random, world: dict, noun: str, plural: bool) -> list[str]:
    determiner = rng.choice(_PLURAL_DETERMINERS if plural else _SINGULAR_DETERMINERS)
    adjective = [rng.choice(world["adjectives"])] if rng.random() < 0.3 else []
    return [determiner, *adjective, _with_s(noun) if plural else noun]


def make_stories(
    num_stories: int, seed: int = 0, min_sentences: int = 3, max_sentences: int = 6
) -> list[list[list[str]]]:
    """Generate short stories: lists of sentences, each a list of lowercase words ending with ``"."``.

    A story picks one of ``STORY_WORLDS`` and chains its sentences: "the farmer feeds some cows ."
    is followed by a sentence about the cows ("these cows sleep in the barn ."). Verbs agree in number
    with their subject (the cow sleeps, the cows sleep), so a masked verb or noun can be recovered from
    the words on *both* sides of it, and whether sentence B follows sentence A can be told from the
    world and the chain — what masked-LM and next-sentence pre-training need.
    """
    check_positive_int("num_stories", num_stories)
    if not 2 <= min_sentences <= max_sentences:
        raise ValueError(f"need 2 <= min_sentences <= max_sentences, got {min_sentences} and {max_sentences}")
    rng = random.Random(seed)
    stories = []
    for _ in range(num_stories):
        world = _STORY_WORLDS[rng.choice(STORY_WORLDS)]
        subject, plural = rng.choice(world["nouns"]), rng.random() < 0.5
        sentences = []
        for _ in range(rng.randint(min_sentences, max_sentences)):
            words = _noun_phrase(rng, world, subject, plural)
            if rng.random() < 0.6:  # transitive: the object becomes the next subject
                verb = rng.choice(world["verbs"])
                obj = rng.choice([noun for noun in world["nouns"] if noun != subject])
                obj_plural = rng.random() < 0.5
                words += [verb if plural else _with_s(verb), *_noun_phrase(rng, world, obj, obj_plural)]
                subject, plural = obj, obj_plural
            else:
                verb = rng.choice(world["intransitive"])
                words += [verb if plural else _with_s(verb), "in", "the", rng.choice(world["places"])]
            sentences.append([*words, "."])
        stories.append(sentences)
    return stories


def pretraining_corpus(num_stories: int = 3000, num_reviews: int = 1500, seed: int = 0) -> list[list[list[str]]]:
    """The unlabelled text BERT is pre-trained on in chapter 7: stories, then movie reviews.

    The reviews come from chapter 2's generator (``make_documents``) with a seed of their own, their
    labels thrown away and a ``"."`` closing each sentence, so the pre-trained model has read the
    kind of text it is later fine-tuned on — as real BERT read Wikipedia before its downstream tasks.
    """
    stories = make_stories(num_stories, seed=seed)
    reviews = [[[*sentence, "."] for sentence in document.sentences]
               for document in (make_documents(num_reviews, seed=seed + 7_000_000) if num_reviews else [])]
    return stories + reviews


def pretraining_vocabulary() -> Vocabulary:
    """Every word of the stories and of chapter 2's reviews, ``"."``, and ``BERT_SPECIALS`` first."""
    words = {".", "in", *_SINGULAR_DETERMINERS, *_PLURAL_DETERMINERS}
    for world in _STORY_WORLDS.values():
        words.update(world["adjectives"], world["places"])
        for noun in world["nouns"]:
            words.update((noun, _with_s(noun)))
        for verb in (*world["verbs"], *world["intransitive"]):
            words.update((verb, _with_s(verb)))
    words.update(word for word in document_vocabulary().itos if not word.startswith("<"))
    return Vocabulary(words, specials=BERT_SPECIALS)


@dataclass(frozen=True)
class SentencePair:
    """Two sentences and the next-sentence label: 0 if ``second`` follows ``first``, 1 if it is random."""

    first: list[str]
    second: list[str]
    is_random_next: int


def make_sentence_pairs(documents: Sequence[Sequence[Sequence[str]]], seed: int = 0) -> list[SentencePair]:
    """Next-sentence prediction data: every pair of consecutive sentences of each document; with
    probability 1/2 the second sentence is replaced by a sentence of another, random document."""
    if len(documents) < 2:
        raise ValueError(f"need at least two documents to draw random sentences from, got {len(documents)}")
    rng = random.Random(seed)
    pairs = []
    for index, document in enumerate(documents):
        for first, second in zip(document[:-1], document[1:], strict=True):
            if rng.random() < 0.5:
                pairs.append(SentencePair(list(first), list(second), 0))
            else:
                other = rng.randrange(len(documents) - 1)
                other += other >= index  # any document but this one
                pairs.append(SentencePair(list(first), list(rng.choice(documents[other])), 1))
    return pairs


@dataclass
class BertBatch:
    """Token ids ``(batch, seq)`` of ``[CLS] A [SEP] (B [SEP])``, segment ids, padding mask, labels."""

    input_ids: torch.Tensor
    token_type_ids: torch.Tensor
    attention_mask: torch.Tensor
    labels: torch.Tensor

    def __len__(self) -> int:
        return self.input_ids.shape[0]

    def __getitem__(self, index) -> BertBatch:
        if isinstance(index, int):
            index = slice(index, index + 1)
        return BertBatch(self.input_ids[index], self.token_type_ids[index], self.attention_mask[index],
                         self.labels[index])


def encode_for_bert(
    firsts: Sequence[Sequence[str]],
    vocabulary: Vocabulary,
    seconds: Sequence[Sequence[str]] | None = None,
    labels: Sequence[int] | None = None,
    length: int | None = None,
) -> BertBatch:
    """Encode texts (or pairs) as BERT reads them: ``[CLS] first [SEP]`` or ``[CLS] first [SEP] second [SEP]``.

    Segment ids are 0 up to and including the first ``[SEP]``, then 1; ``attention_mask`` is 1 on real
    tokens and 0 on padding. ``labels`` (e.g. next-sentence or class labels) default to zeros.
    """
    if not firsts:
        raise ValueError("encode_for_bert needs at least one text, got none")
    if seconds is not None and len(seconds) != len(firsts):
        raise ValueError(f"got {len(firsts)} first texts but {len(seconds)} second texts")
    if labels is not None and len(labels) != len(firsts):
        raise ValueError(f"got {len(firsts)} texts but {len(labels)} labels")
    if not all(token in vocabulary for token in BERT_SPECIALS[:4]):
        raise ValueError(
            f"the vocabulary lacks BERT's special tokens {BERT_SPECIALS[:4]}: use pretraining_vocabulary()"
        )
    cls_id, sep_id = vocabulary.id(BERT_CLS), vocabulary.id(BERT_SEP)
    sequences, segments = [], []
    for row, first in enumerate(firsts):
        ids = [cls_id, *vocabulary.encode(first), sep_id]
        types = [0] * len(ids)
        if seconds is not None:
            second = [*vocabulary.encode(seconds[row]), sep_id]
            ids, types = ids + second, types + [1] * len(second)
        sequences.append(ids)
        segments.append(types)
    input_ids = pad_sequences(sequences, vocabulary.id(BERT_PAD), length)
    token_type_ids = pad_sequences(segments, 0, input_ids.shape[1])
    attention_mask = pad_sequences([[1] * len(ids) for ids in sequences], 0, input_ids.shape[1])
    label_tensor = torch.tensor(list(labels) if labels is not None else [0] * len(firsts), dtype=torch.long)
    return BertBatch(input_ids, token_type_ids, attention_mask, label_tensor)


def encode_sentence_pairs(
    pairs: Sequence[SentencePair], vocabulary: Vocabulary, length: int | None = None
) -> BertBatch:
    """``encode_for_bert`` of next-sentence pairs; ``labels`` are the next-sentence labels."""
    return encode_for_bert([pair.first for pair in pairs], vocabulary, [pair.second for pair in pairs],
                           [pair.is_random_next for pair in pairs], length)


def encode_documents_for_bert(
    documents: Sequence[Document], vocabulary: Vocabulary, length: int | None = None
) -> BertBatch:
    """Chapter 2's documents as single BERT sequences ``[CLS] s1 . s2 . ... [SEP]``, labels = sentiment."""
    texts = [[word for sentence in document.sentences for word in (*sentence, ".")] for document in documents]
    return encode_for_bert(texts, vocabulary, labels=[document.label for document in documents], length=length)
