"""Every chapter, lesson and lab, runs where a reader opens it: copied alone into an empty folder, with the helper
package installed from its wheel (not editable) and nothing of the checkout on the path, as on Colab
or from a download (tests/alone.py). Everything a chapter reads comes from the installed package, and
every picture travels inside the notebook.

The chapters' runs are shared with tests/chapters/test_determinism.py (its second run of each chapter), so CI
executes no chapter more often than before.
"""

from __future__ import annotations

import ast
import os
import re

import nbformat
import pytest
from alone import BOOK, package_files, wheel_files
from helpers import NOTEBOOKS

MARKDOWN_IMAGE = re.compile(r"!\[[^\]]*\]\(\s*<?(?P<url>[^)\s>]+)")
HTML_IMAGE = re.compile(r"<img\b[^>]*\bsrc\s*=\s*[\"'](?P<url>[^\"']+)", re.I)
MUST_SHIP = [
    "attention_to_bert/data/cloze.tsv",
    "attention_to_bert/results/ch02_han.json",
    "attention_to_bert/data/sentiment/imdb.tsv",
    "attention_to_bert/data/sentiment/LICENSE",
    "attention_to_bert/data/wordnet/glosses.tsv.gz",
    "attention_to_bert/data/wordnet/LICENSE",
    "attention_to_bert/figures/javascript/d3/d3.min.js",
    "attention_to_bert/figures/javascript/figures.js",
    "attention_to_bert/pretrained/model.safetensors",
    "attention_to_bert/pretrained/tokenizer.json",
]


def images(cell: nbformat.NotebookNode) -> list[str]:
    """The address of every image of a Markdown cell (Markdown and HTML forms)."""
    return [
        m["url"] for pattern in (MARKDOWN_IMAGE, HTML_IMAGE) for m in pattern.finditer(cell.source)
    ]


@pytest.mark.parametrize("chapter", NOTEBOOKS, ids=lambda path: path.stem)
def test_every_image_of_a_chapter_travels_with_it(chapter):
    """A cell attachment, a data URI or an https URL: never a path beside the notebook, which Colab
    and a downloaded notebook do not have (run `python scripts/notebooks/format_notebooks.py`)."""
    problems = []
    for index, cell in enumerate(nbformat.read(chapter, as_version=4).cells):
        if cell.cell_type != "markdown":
            continue
        for url in images(cell):
            if url.startswith("attachment:"):
                if url.removeprefix("attachment:") not in cell.get("attachments", {}):
                    problems.append(f"cell {index}: {url} is not attached to the cell")
            elif not url.startswith(("data:image/", "https://")):
                problems.append(f"cell {index}: {url[:80]}")
    assert not problems, (
        f"{chapter.name}: images that stay behind when the notebook travels "
        "(run `python scripts/notebooks/format_notebooks.py`):\n" + "\n".join(problems)
    )


@pytest.mark.slow
def test_the_wheel_holds_every_file_of_the_package(alone):
    shipped = wheel_files(alone.wheel)
    assert [name for name in MUST_SHIP if name not in shipped] == []
    missing = sorted(set(package_files()) - set(shipped))
    assert not missing, f"files of book/attention_to_bert missing from the wheel: {missing}"
    extra = sorted(set(shipped) - set(package_files()))
    assert not extra, f"files in the wheel that the package folder lacks: {extra}"


@pytest.mark.slow
@pytest.mark.parametrize("chapter", NOTEBOOKS, ids=lambda path: path.stem)
def test_a_chapter_opened_alone_runs_from_the_installed_wheel(alone, chapter):
    notebook, printed = alone.run(chapter)  # nbclient raises on the first failing cell
    package, path = printed.splitlines()
    assert package.startswith(str(alone.target) + os.sep), (
        f"{chapter.name} imported attention_to_bert from {package}, not from the installed wheel"
    )
    assert os.path.realpath(BOOK) not in {
        os.path.realpath(p or ".") for p in ast.literal_eval(path)
    }
    errors = [
        o for cell in notebook.cells for o in cell.get("outputs", []) if o.output_type == "error"
    ]
    assert errors == []
