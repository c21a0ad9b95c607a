"""WordNet 3.0's glosses and example sentences (Princeton University; WordNet 3.0 licence), shipped
as an extract: ``load_glosses()`` returns one list per synset, its definition then its examples.

See ``README.md`` and ``LICENSE`` beside this file; ``scripts/build_wordnet_extract.py`` rebuilt it
from the Debian package ``wordnet-base``.
"""

from __future__ import annotations

import gzip
from importlib import resources

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
