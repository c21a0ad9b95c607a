"""The architecture diagrams: the committed SVGs are what scripts/diagrams/draw_diagrams.py draws, they render the same
everywhere, and every chapter shows and cites its own.

The site's browser check of the diagrams is in tests/site/test_browser_diagrams.py.
"""

from __future__ import annotations

import re
import subprocess
import sys
from pathlib import Path

import nbformat
import pytest
from helpers import CHAPTERS, DIAGRAM_IMAGE, ROOT

DIAGRAMS = ROOT / "book" / "images" / "diagrams"
SCRIPT = ROOT / "scripts" / "diagrams" / "draw_diagrams.py"

CAPTION = re.compile(r"\*\*Figure (?P<number>\d+\.\d+)\.\*\*\s+\S")


def committed() -> dict[str, bytes]:
    return {path.name: path.read_bytes() for path in sorted(DIAGRAMS.glob("*.svg"))}


def figure_cells(notebook: Path) -> list[tuple[str, str, str, str]]:
    """(name, alt text, figure number, cell text) of each diagram shown in a notebook, in order."""
    found = []
    for cell in nbformat.read(notebook, as_version=4).cells:
        if cell.cell_type != "markdown":
            continue
        for match in DIAGRAM_IMAGE.finditer(cell.source):
            caption = CAPTION.search(cell.source, match.end())
            name = match["path"] or match["marked"] or "(a data URI that names no file)"
            found.append((name, match["alt"], caption["number"] if caption else "", cell.source))
    return found


def test_the_committed_diagrams_are_what_the_script_draws(tmp_path):
    """Byte for byte: redraw every diagram in a fresh process and compare with the files in the repository."""
    result = subprocess.run(
        [sys.executable, str(SCRIPT), "--out", str(tmp_path)],
        capture_output=True,
        text=True,
        timeout=300,
        cwd=ROOT,
    )
    assert result.returncode == 0, result.stderr[-3000:]
    drawn = {path.name: path.read_bytes() for path in sorted(tmp_path.glob("*.svg"))}
    assert len(drawn) >= 12
    assert sorted(drawn) == sorted(committed()), (
        "diagram files drawn by the script and committed differ"
    )
    stale = [name for name in drawn if drawn[name] != committed()[name]]
    assert not stale, (
        f"{stale} differ from what the script draws: run `python scripts/diagrams/draw_diagrams.py` and commit"
    )
    # each SVG has its PNG twin (what travels inside the notebooks), with the same pixels as drawn
    # (compared as pixels: PNG compression may differ between zlib builds)
    import matplotlib.image
    import numpy as np

    for name in drawn:
        twin = Path(name).with_suffix(".png").name
        assert (DIAGRAMS / twin).is_file(), (
            f"{twin} is missing: run `python scripts/diagrams/draw_diagrams.py`"
        )
        fresh = matplotlib.image.imread(tmp_path / twin)
        kept = matplotlib.image.imread(DIAGRAMS / twin)
        assert fresh.shape == kept.shape and np.array_equal(fresh, kept), (
            f"{twin} differs from what the script draws: run `python scripts/diagrams/draw_diagrams.py`"
        )


@pytest.mark.parametrize("name", sorted(committed()))
def test_a_diagram_needs_no_font_and_nothing_from_outside(name):
    """Text is drawn as outlines (no font is looked up by the browser), and the picture has its own opaque
    white background, so it reads the same in the light and the dark theme, online or not."""
    svg = committed()[name].decode("utf-8")
    assert "<text" not in svg and "font-family" not in svg, "text must be converted to paths"
    assert not re.search(r"""(?:href|src)=["'](?:https?:)?//""", svg), (
        "the SVG must not load anything"
    )
    assert "<image" not in svg, "no embedded bitmaps: the diagrams are vector drawings"
    assert "<dc:date>" not in svg, "a date in the metadata would change the file at every run"
    # the first drawn shape is the white rounded background that covers the picture
    first_fill = re.search(r"<path[^>]*style=\"fill: (#[0-9a-f]{6})", svg)
    assert first_fill and first_fill[1] == "#ffffff", (
        "the first shape should be the opaque white background"
    )


def test_every_chapter_shows_its_own_diagrams_numbered_and_cited():
    """Each chapter shows at least one diagram; each figure has alt text, a caption `**Figure C.N.**`
    numbered in order within its chapter (figures drawn by code may take numbers in between), and
    the text refers to it as "Figure C.N"."""
    assert len(CHAPTERS) >= 7
    shown = []
    for notebook in CHAPTERS:
        chapter = int(notebook.name[:2])
        figures = figure_cells(notebook)
        assert figures, f"{notebook.name} shows no diagram"
        text = "\n".join(
            c.source
            for c in nbformat.read(notebook, as_version=4).cells
            if c.cell_type == "markdown"
        )
        previous = 0
        for name, alt, number, _cell in figures:
            assert name.startswith(f"ch{chapter}_"), (
                f"{notebook.name} shows another chapter's diagram {name}"
            )
            assert len(alt.split()) >= 8, f"{name}: the alt text should describe the picture"
            # in order within the chapter; a figure drawn by code may hold a number in between
            chapter_part, _, k = number.partition(".")
            assert chapter_part == str(chapter) and k.isdigit() and int(k) > previous, (
                f"{name}: caption number {number!r}, expected {chapter}.N with N > {previous}"
            )
            previous = int(k)
            without_caption = text.replace(f"**Figure {number}.**", "")
            assert re.search(rf"Figure {re.escape(number)}(?!\d)", without_caption), (
                f"the text never cites {number}"
            )
            assert (DIAGRAMS / f"{name}.svg").is_file(), (
                f"{notebook.name} shows a missing file {name}.svg"
            )
        shown += [name for name, *_ in figures]
    assert len(shown) == len(set(shown)), "a diagram is shown twice"
    assert sorted(f"{name}.svg" for name in shown) == sorted(committed()), (
        "every diagram is shown in its chapter"
    )


def test_the_figure_cells_are_markdown_that_jupyterlab_renders():
    """Plain Markdown images (not a MyST directive, which JupyterLab shows as raw text): as an author
    writes them, paths relative to the notebook, or as scripts/notebooks/format_notebooks.py stores them, data
    URIs that travel with the notebook (Colab, a download; tests/chapters/test_alone.py requires these)."""
    for notebook in CHAPTERS:
        for _name, _alt, _number, cell in figure_cells(notebook):
            assert "```{figure}" not in cell and ":::" not in cell
            assert "](images/diagrams/" in cell or "](data:image/png;base64," in cell
