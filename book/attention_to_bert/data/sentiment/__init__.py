"""The UCI "Sentiment Labelled Sentences" (Kotzias et al., 2015; CC BY 4.0), shipped as an extract.

``load_sentences("imdb")`` returns ``(sentence, label)`` pairs, label 1 = positive, 0 = negative.
See ``README.md`` and ``LICENSE`` beside this file; ``scripts/build_sentiment_extract.py`` rebuilt it.
"""

from __future__ import annotations

from importlib import resources

SOURCES = ("imdb", "yelp", "amazon")
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
