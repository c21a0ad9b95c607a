"""WordNet 3.0's glosses and example sentences (Princeton University; WordNet 3.0 licence), shipped
as an extract: ``load_glosses()`` returns one list per synset, its definition then its examples;
``corpus_documents()`` is the corpus of chapter 8's first (dictionary) checkpoint.

See ``README.md`` and ``LICENSE`` beside this file; ``scripts/data/build_wordnet_extract.py`` rebuilt it
from the Debian package ``wordnet-base``.
"""

from __future__ import annotations

import gzip
from importlib import resources

from attention_to_bert.data.sentiment import pretraining_split

# package data, read through importlib.resources: the same call works from a checkout and from an
# installed wheel (a notebook opened alone on Colab or in a hand-out)
_FOLDER = resources.files(__name__)


def load_glosses() -> list[list[str]]:
    """Every synset's ``[definition, example, ...]`` (117,659 synsets), in WordNet's file order."""
    with (
        _FOLDER.joinpath("glosses.tsv.gz").open("rb") as raw,
        gzip.open(raw, "rt", encoding="utf-8") as file,
    ):
        return [line.rstrip("\n").split("\t") for line in file if line.strip()]


def corpus_documents() -> list[list[str]]:
    """The first checkpoint's corpus: each WordNet synset ``[definition, example, ...]`` is a
    document, then each UCI pool sentence (never a test one) is a one-sentence document."""
    pool, _ = pretraining_split()
    return load_glosses() + [[sentence] for sentence, _ in pool]
