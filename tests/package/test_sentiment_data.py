"""The shipped UCI sentiment extract: complete, balanced, attributed, and loaded with clear errors."""

import pytest

from attention_to_bert.data.sentiment import _FOLDER, SOURCES, load_sentences


@pytest.mark.parametrize("source", SOURCES)
def test_each_source_has_500_sentences_of_each_label(source):
    pairs = load_sentences(source, unique=False)
    assert len(pairs) == 1000
    assert sum(label for _, label in pairs) == 500
    assert all(sentence == sentence.strip() and sentence for sentence, _ in pairs)


@pytest.mark.parametrize("source", SOURCES)
def test_unique_drops_repeats_only(source):
    everything = load_sentences(source, unique=False)
    unique = load_sentences(source)
    assert len({s for s, _ in unique}) == len(unique) == len({s for s, _ in everything})
    assert len(unique) < len(everything)  # each source repeats a few sentences


def test_licence_and_attribution_ship_beside_the_data():
    licence = (_FOLDER / "LICENSE").read_text()
    assert "CC BY 4.0" in licence and "Kotzias" in licence
    assert "build_sentiment_extract.py" in (_FOLDER / "README.md").read_text()


def test_bad_source_names_the_argument():
    with pytest.raises(ValueError, match="source must be one of"):
        load_sentences("twitter")
    with pytest.raises(TypeError, match="source must be a str"):
        load_sentences(3)
    with pytest.raises(TypeError, match="unique must be a bool"):
        load_sentences("imdb", unique="yes")
