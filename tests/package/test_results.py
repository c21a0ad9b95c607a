"""The results loader: every shipped file loads through importlib.resources, bad names are named."""

import json

import pytest
from helpers import ROOT

from attention_to_bert import results

FOLDER = ROOT / "book" / "attention_to_bert" / "results"


def test_names_are_the_shipped_files():
    assert results.names() == sorted(p.stem for p in FOLDER.glob("*.json"))
    assert len(results.names()) >= 5


@pytest.mark.parametrize("name", sorted(p.stem for p in FOLDER.glob("*.json")))
def test_load_equals_the_file(name):
    assert results.load(name) == json.loads((FOLDER / f"{name}.json").read_text())
    assert results.load(f"{name}.json") == results.load(name)


def test_no_chapter_reads_results_by_path():
    for notebook in sorted((ROOT / "book").glob("[0-9][0-9]_*.ipynb")):
        cells = json.loads(notebook.read_text())["cells"]
        code = "".join("".join(c["source"]) for c in cells if c["cell_type"] == "code")
        assert 'Path("results/' not in code, f"{notebook.name} reads a results file by path"


def test_bad_names():
    with pytest.raises(TypeError, match="name must be a str"):
        results.load(3)
    with pytest.raises(ValueError, match="name must be one of"):
        results.load("ch99_nothing")


def test_format_table_aligns_and_rounds():
    text = results.format_table([{"m": "a", "x": 0.12345}, {"m": "bb", "x": 1.0}], ["m", "x"])
    lines = text.splitlines()
    assert lines[1].split() == ["a", "0.123"] and lines[2].split() == ["bb", "1.000"]
    assert len({len(line) for line in lines}) == 1
    with pytest.raises(ValueError, match="headers"):
        results.format_table([{"m": 1}], ["m"], headers=["a", "b"])
