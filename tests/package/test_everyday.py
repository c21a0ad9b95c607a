"""Chapter 8's everyday-English corpus: licences beside the text, the Bible capped, and no held-out
sentence (cloze, UCI, thesis test, masked-LM validation) in the pre-training text."""

from pathlib import Path

import pytest

from attention_to_bert.data import everyday
from attention_to_bert.data.everyday import normalise

FOLDER = Path(everyday.__file__).parent


@pytest.fixture(scope="module")
def corpus() -> str:
    sentences = [s for doc in everyday.corpus_documents() for s in doc]
    return "\n".join(" " + normalise(s) + " " for s in sentences)


def test_every_source_has_its_licence_beside_the_text():
    sources = {source for source, _ in everyday.load_everyday()}
    assert sources == {"children", "novels", "chat", "bible"}
    for name in ("gutenberg", "janeaustenr", "web", "chatterbot"):
        assert (FOLDER / f"LICENSE.{name}").stat().st_size > 500


def test_every_sentence_ends_in_a_full_stop_and_the_bible_is_capped():
    documents = everyday.corpus_documents()
    assert all(s[-1] in ".!?\"')]" for doc in documents for s in doc)
    words = {}
    for source, doc in everyday.load_everyday():
        words[source] = words.get(source, 0) + sum(len(s.split()) for s in doc)
    total = sum(len(s.split()) for doc in documents for s in doc)
    assert 3_000_000 < total and words["bible"] / total < 0.21


def test_no_cloze_or_uci_sentence_is_in_the_pre_training_text(corpus):
    from attention_to_bert.data.sentiment import SOURCES, load_sentences

    cloze = [s.replace("[MASK]", w) for s, w in everyday.cloze_rows()]
    assert len(cloze) == 48
    for text in cloze + [s for source in SOURCES for s, _ in load_sentences(source)]:
        if len(normalise(text).split()) >= 3:
            assert f" {normalise(text)} " not in corpus, text


def test_the_held_out_texts_are_never_pre_trained_on(corpus):
    split = everyday.thesis_split()
    assert [len(split[p]) for p in ("pool", "validation", "test")] == [800, 320, 800]
    texts = [t for rows in split.values() for t, _ in rows]
    assert len(set(texts)) > 0.99 * len(texts)
    sentences = set(corpus.split("\n"))
    assert not any(f" {normalise(t)} " in sentences for t in texts)
    validation = {s for doc in everyday.validation_documents() for s in doc}
    assert len(validation) > 1000
    assert sum(f" {normalise(s)} " in sentences for s in validation) < 0.02 * len(validation)
