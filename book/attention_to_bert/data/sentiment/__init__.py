"""The UCI "Sentiment Labelled Sentences" (Kotzias et al., 2015; CC BY 4.0), shipped as an extract.

``load_sentences("imdb")`` returns ``(sentence, label)`` pairs, label 1 = positive, 0 = negative.
Chapter 8's splits: ``pretraining_split()`` holds out test sentences that no checkpoint reads (the
dictionary checkpoint reads the pool's text, never its labels; the everyday one no UCI sentence);
``finetuning_splits()`` and ``training_set`` are the fine-tuning comparison's. See ``README.md`` and
``LICENSE`` beside this file; ``scripts/data/build_sentiment_extract.py`` rebuilt it.
"""

from __future__ import annotations

import random
import re
from importlib import resources

from attention_to_bert.validate import check_instance, check_int

SOURCES = ("imdb", "yelp", "amazon")
FINETUNING_TEST = 600  # the first 600 of pretraining_split()'s 1,000 test sentences
FINETUNING_VALIDATION = 283  # the last 283 of its pool
# the "hard" sentences of chapter 8: negation or contrast, whose label needs the context
NEGATION_OR_CONTRAST = re.compile(
    r"\b(not|no|never|nothing|n't|but|although|however)\b|n't\b", re.IGNORECASE
)
_FOLDER = resources.files(__name__)  # package data: works from a checkout and from a wheel


def load_sentences(source: str, unique: bool = True) -> list[tuple[str, int]]:
    """The labelled sentences of ``source`` ("imdb", "yelp" or "amazon"), in the file's order.

    With ``unique`` (the default) a sentence that occurs again is dropped, so that splits of the list
    never put the same sentence on both sides.
    """
    if not isinstance(source, str):
        raise TypeError(f"source must be a str, one of {SOURCES}; got {type(source).__name__}")
    if source not in SOURCES:
        raise ValueError(f"source must be one of {SOURCES}; got {source!r}")
    if not isinstance(unique, bool):
        raise TypeError(f"unique must be a bool; got {type(unique).__name__}")
    pairs, seen = [], set()
    for line in _FOLDER.joinpath(f"{source}.tsv").read_text(encoding="utf-8").splitlines():
        label, sentence = line.split("\t", 1)
        if unique and sentence in seen:
            continue
        seen.add(sentence)
        pairs.append((sentence, int(label)))
    return pairs


def pretraining_split(num_test: int = 1000, seed: int = 0) -> tuple[list, list]:
    """The UCI sentences of all three sources, shuffled with ``seed``: ``(pool, test)``, where the
        first ``num_test`` are held out. The dictionary checkpoint's pre-training reads only the pool's
    text (never its labels)."""
    check_int("seed", seed, minimum=0)
    pairs = [pair for source in SOURCES for pair in load_sentences(source)]
    check_int("num_test", num_test, 0, len(pairs) - 1)
    random.Random(seed).shuffle(pairs)
    return pairs[num_test:], pairs[:num_test]


def finetuning_splits() -> tuple[list, list, list]:
    """Chapter 8's fine-tuning comparison: ``(train_pool, validation, test)`` lists of ``(sentence,
    label)``, all from ``pretraining_split()``: its pool split in two, and the first 600 of its test ones."""
    pool, test = pretraining_split()
    return pool[:-FINETUNING_VALIDATION], pool[-FINETUNING_VALIDATION:], test[:FINETUNING_TEST]


def training_set(pool: list, size: int, seed: int) -> list:
    """``size`` rows of ``pool`` drawn (without replacement) with ``seed``."""
    check_instance("pool", pool, list)
    check_int("size", size, 1, len(pool))
    check_int("seed", seed, minimum=0)
    rows = list(pool)
    random.Random(seed).shuffle(rows)
    return rows[:size]
