"""Every chapter reads cleanly where readers run it: opened in a real JupyterLab (started here, on the
loopback only) in Debian's Chromium, no website-only markup shows as raw text and no solution is open.

Plain JupyterLab renders Markdown as CommonMark, as Colab and the classic notebook do, so what passes
here also reads cleanly there: solutions are HTML ``<details>``, citations are text, cross-references
are Markdown links (``scripts/notebooks/format_notebooks.py``).
"""

from __future__ import annotations

import contextlib
import os
import secrets
import socket
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path
from urllib.request import urlopen

import nbformat
import pytest
from helpers import ROOT

CHAPTERS = sorted((ROOT / "book").glob("[0-9][0-9]_*.ipynb"))
RAW_MARKUP = ["{dropdown}", "{footcite", "{footbibliography}", "{doc}", "{ref}", "{numref}", "```{"]

pytestmark = pytest.mark.slow


def _free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return probe.getsockname()[1]


@contextlib.contextmanager
def jupyterlab(root: Path, home: Path) -> Iterator[str]:
    """A JupyterLab serving ``root``, with its own settings folders under ``home``; its URL with the
    token, ``{name}`` standing for the notebook."""
    port, token = _free_port(), secrets.token_hex(16)
    env = os.environ | {
        "JUPYTER_CONFIG_DIR": str(home / "config"),
        "JUPYTER_RUNTIME_DIR": str(home / "runtime"),
        "JUPYTERLAB_SETTINGS_DIR": str(home / "settings"),
        "JUPYTERLAB_WORKSPACES_DIR": str(home / "workspaces"),
    }
    command = [
        sys.executable,
        "-m",
        "jupyterlab",
        "--no-browser",
        "--ServerApp.ip=127.0.0.1",
        "--ServerApp.allow_root=True",  # CI runs as root
        f"--ServerApp.port={port}",
        f"--IdentityProvider.token={token}",
        f"--ServerApp.root_dir={root}",
        "--LabApp.news_url=",
        "--LabApp.check_for_updates_class=jupyterlab.NeverCheckForUpdate",
    ]
    server = subprocess.Popen(
        command, env=env, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL
    )
    base = f"http://127.0.0.1:{port}"
    try:
        for _ in range(240):
            try:
                with urlopen(f"{base}/api/status?token={token}", timeout=2):
                    break
            except OSError:
                time.sleep(0.5)
        else:
            pytest.fail("JupyterLab did not start within 2 minutes")
        yield f"{base}/lab/tree/{{name}}?token={token}&reset"
    finally:
        server.terminate()
        try:
            server.wait(timeout=30)
        except subprocess.TimeoutExpired:  # still shutting a kernel down: stop it
            server.kill()
            server.wait(timeout=30)


@pytest.fixture(scope="module")
def lab(tmp_path_factory) -> Iterator[str]:
    """A JupyterLab serving book/, with its own settings folders; its URL with the token."""
    with jupyterlab(ROOT / "book", tmp_path_factory.mktemp("jupyter")) as url:
        yield url


def written_solutions(path: Path) -> int:
    notebook = nbformat.read(path, as_version=4)
    return sum(
        "solution" in cell.metadata.get("tags", []) and cell.cell_type == "markdown"
        for cell in notebook.cells
    )


@pytest.mark.parametrize("chapter", CHAPTERS, ids=lambda path: path.stem)
def test_the_chapter_reads_cleanly_in_jupyterlab(browser, lab, chapter):
    page = browser.new_page(viewport={"width": 1280, "height": 900})
    try:
        page.goto(lab.format(name=chapter.name), timeout=120_000)
        page.wait_for_selector(".jp-Notebook .jp-RenderedMarkdown", timeout=120_000)
        page.wait_for_function(
            "n => document.querySelectorAll('.jp-Notebook .jp-Cell').length >= n",
            arg=len(nbformat.read(chapter, as_version=4).cells),
            timeout=120_000,
        )
        rendered = page.evaluate(
            """() => [...document.querySelectorAll('.jp-Notebook .jp-RenderedMarkdown')]
                .map(cell => cell.textContent).join('\\n')"""
        )
        raw = [marker for marker in RAW_MARKUP if marker in rendered]
        assert raw == [], f"{chapter.name}: raw website markup in JupyterLab: {raw}"
        folded = page.locator(".jp-Notebook details").count()
        assert folded >= written_solutions(chapter), f"{chapter.name}: solutions not folded"
        assert page.locator(".jp-Notebook details[open]").count() == 0
        code = page.evaluate(
            """() => [...document.querySelectorAll('.jp-Notebook .jp-InputArea-editor')]
                .map(editor => editor.textContent).join('\\n')"""
        )
        assert "# BEGIN SOLUTION" not in code, f"{chapter.name}: a code solution is open"
    finally:
        page.close()


def test_a_diagram_stored_inside_the_notebook_shows_in_jupyterlab(browser, tmp_path):
    """A chapter opened alone has no images/ folder beside it: its diagrams are data URIs
    (scripts/notebooks/format_notebooks.py), which JupyterLab's Markdown renderer must show."""
    sys.path.insert(0, str(ROOT / "scripts" / "notebooks"))
    import format_notebooks

    folder = tmp_path / "alone"
    folder.mkdir()
    svg = sorted((ROOT / "book" / "images" / "diagrams").glob("*.svg"))[0]
    text = format_notebooks.embed_diagrams(
        f"# A diagram\n\n![The diagram](images/diagrams/{svg.name})"
    )
    assert "](data:image/png;base64," in text
    notebook = nbformat.v4.new_notebook(cells=[nbformat.v4.new_markdown_cell(text)])
    nbformat.write(notebook, folder / "alone.ipynb")
    with jupyterlab(folder, tmp_path / "jupyter") as url:
        page = browser.new_page(viewport={"width": 1280, "height": 900})
        try:
            page.goto(url.format(name="alone.ipynb"), timeout=120_000)
            image = page.locator(".jp-RenderedMarkdown img").first
            image.wait_for(timeout=120_000)
            page.wait_for_function(
                "img => img.complete && img.naturalWidth > 0", arg=image.element_handle()
            )
            assert image.get_attribute("alt") == "The diagram"
            assert image.bounding_box()["width"] > 300
        finally:
            page.close()
