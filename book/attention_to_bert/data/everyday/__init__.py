"""Chapter 8's everyday-English pre-training corpus and its held-out splits, fixed before any
pre-training.

``everyday.tsv.xz`` (built by ``scripts/data/build_everyday_corpus.py``; licences beside it): children's
stories, nine novels, a fifth of the World English Bible and chatterbot's conversations, one
paragraph a line. ``corpus_documents()`` adds WordNet's glosses and examples, each ending in a full
stop, and leaves out everything held out:

- the synsets of ``thesis_split()`` (the lexicographer-file classification of chapter 8), and any
  sentence equal to one of their definitions;
- every sentence that holds a cloze sentence of ``cloze_rows()`` or a UCI sentence;
- one document in a hundred, ``validation_documents()``: the held-out masked-LM text.
"""

from __future__ import annotations

import gzip
import lzma
import random
import re
from functools import cache
from pathlib import Path

_FOLDER = Path(__file__).resolve().parent
LEXNAMES = (
    "adj.all adj.pert adv.all noun.Tops noun.act noun.animal noun.artifact noun.attribute "
    "noun.body noun.cognition noun.communication noun.event noun.feeling noun.food noun.group "
    "noun.location noun.motive noun.object noun.person noun.phenomenon noun.plant noun.possession "
    "noun.process noun.quantity noun.relation noun.shape noun.state noun.substance noun.time "
    "verb.body verb.change verb.cognition verb.communication verb.competition verb.consumption "
    "verb.contact verb.creation verb.emotion verb.motion verb.perception verb.possession "
    "verb.social verb.stative verb.weather adj.ppl"
).split()
THESIS_CLASSES = (
    "noun.animal",
    "noun.plant",
    "noun.food",
    "noun.body",
    "noun.person",
    "noun.artifact",
    "verb.motion",
    "verb.communication",
)
GENUS = re.compile(r"(a |the )?(genus|family|order|class|subgenus|subfamily) of", re.I)
THESIS_SIZES = {"pool": 100, "validation": 40, "test": 100}  # synsets per class


def load_everyday() -> list[tuple[str, list[str]]]:
    """Every ``(source, sentences)`` document of ``everyday.tsv.xz`` (sources: children, novels,
    chat, bible)."""
    with lzma.open(_FOLDER / "everyday.tsv.xz", "rt", encoding="utf-8") as file:
        rows = [line.rstrip("\n").split("\t") for line in file if line.strip()]
    return [(row[0], row[1:]) for row in rows]


def load_lexfiles() -> list[str]:
    """Each WordNet synset's lexicographer file (``noun.animal``...), in ``load_glosses()``'s order."""
    with gzip.open(_FOLDER.parent / "wordnet" / "lexfiles.txt.gz", "rt") as file:
        return [LEXNAMES[int(line)] for line in file if line.strip()]


@cache
def thesis_split() -> dict[str, list[tuple[str, int]]]:
    """Chapter 8's thesis test: WordNet definitions labelled with their synset's lexicographer file,
    ``THESIS_CLASSES[label]``. Per class, 240 synsets drawn with seed 0 are held out of pre-training:
    100 form the training pool, 40 the validation and 100 the test split. Returns
    ``{"pool": [...], "validation": [...], "test": [...]}`` lists of ``(definition, label)``."""
    from attention_to_bert.data.wordnet import load_glosses

    glosses, lexfiles = load_glosses(), load_lexfiles()
    split: dict[str, list[tuple[str, int]]] = {name: [] for name in THESIS_SIZES}
    for label, name in enumerate(THESIS_CLASSES):
        synsets = [i for i, lexfile in enumerate(lexfiles) if lexfile == name]
        chosen = [i for i in synsets if len(glosses[i][0].split()) >= 4]
        chosen = [i for i in chosen if not GENUS.match(glosses[i][0])]
        random.Random(0).shuffle(chosen)
        start = 0
        for part, size in THESIS_SIZES.items():
            split[part] += [(glosses[i][0], label) for i in chosen[start : start + size]]
            start += size
    return split


def _held_out_synsets() -> set[int]:
    from attention_to_bert.data.wordnet import load_glosses

    held = {text for rows in thesis_split().values() for text, _ in rows}
    return {i for i, synset in enumerate(load_glosses()) if synset[0] in held}


def normalise(text: str) -> str:
    """Lower case, letters and digits only, single spaces: how held-out text is compared."""
    if not isinstance(text, str):
        raise TypeError(f"text must be a str, got {type(text).__name__}")
    return " ".join(re.sub(r"[^a-z0-9]+", " ", text.lower()).split())


def cloze_rows() -> list[tuple[str, str]]:
    """The 48 everyday cloze sentences (one ``[MASK]`` each) and their answers."""
    text = (_FOLDER.parent / "cloze.tsv").read_text(encoding="utf-8")
    return [tuple(line.split("\t")) for line in text.splitlines() if line.strip()]


class _Forbidden:
    """Finds, in a normalised sentence, a filled cloze sentence or a UCI sentence (normalised, of
    three words or more): each phrase is looked up by its first three words."""

    def __init__(self) -> None:
        from attention_to_bert.data.sentiment import SOURCES, load_sentences

        texts = [s.replace("[MASK]", w) for s, w in cloze_rows()]
        texts += [s for source in SOURCES for s, _ in load_sentences(source)]
        self.starts: dict[tuple[str, ...], list[list[str]]] = {}
        for text in texts:
            words = normalise(text).split()
            if len(words) >= 3:
                self.starts.setdefault(tuple(words[:3]), []).append(words)

    def search(self, sentence: str) -> bool:
        words = sentence.split()
        for i in range(len(words) - 2):
            for phrase in self.starts.get(tuple(words[i : i + 3]), ()):
                if words[i : i + len(phrase)] == phrase:
                    return True
        return False


def _full_stop(sentence: str) -> str:
    return sentence if sentence[-1] in ".!?" else sentence + " ."


@cache
def _documents() -> tuple[list[list[str]], list[list[str]]]:
    from attention_to_bert.data.wordnet import load_glosses

    held = _held_out_synsets()
    wordnet = [
        [_full_stop(s) for s in synset] for i, synset in enumerate(load_glosses()) if i not in held
    ]
    forbidden, thesis = _Forbidden(), {normalise(t) for r in thesis_split().values() for t, _ in r}
    documents = [
        kept
        for doc in [doc for _, doc in load_everyday()] + wordnet
        if (
            kept := [
                s for s in doc if (n := normalise(s)) not in thesis and not forbidden.search(n)
            ]
        )
    ]
    random.Random(0).shuffle(documents)
    return (
        [doc for i, doc in enumerate(documents) if i % 100],
        [doc for i, doc in enumerate(documents) if i % 100 == 0],
    )


def corpus_documents() -> list[list[str]]:
    """The pre-training documents (lists of sentences), shuffled with seed 0, held-out text left
    out (see the module's docstring)."""
    return _documents()[0]


def validation_documents() -> list[list[str]]:
    """One document in a hundred, never pre-trained on: the held-out masked-LM text."""
    return _documents()[1]
