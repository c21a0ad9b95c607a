"""The printed book: `jupyter-book build . --builder pdflatex` gives a PDF with every chapter a chapter,
in order, every diagram, and no character missing from the fonts.

Needs Debian's TeX Live (see the README); skipped with a message where xelatex is missing, unless
BOOK_REQUIRE_PDF=1 (as in CI).
"""

import os
import re
import shutil
import subprocess
from pathlib import Path

import nbformat
import pytest
from helpers import LABS, ROOT

CHAPTERS = sorted((ROOT / "book").glob("[0-9][0-9]_*.ipynb"))
DIAGRAM = re.compile(r"images/diagrams/(?P<name>[\w-]+)\.svg")


def chapter_title(path: Path) -> str:
    for cell in nbformat.read(path, as_version=4).cells:
        for line in cell.source.splitlines():
            if line.startswith("# "):
                return line[2:].strip()
    raise AssertionError(f"{path.name} has no title")


@pytest.fixture(scope="module")
def latex(tmp_path_factory) -> Path:
    missing = [tool for tool in ("xelatex", "latexmk", "rsvg-convert") if not shutil.which(tool)]
    if missing:
        if os.environ.get("BOOK_REQUIRE_PDF") == "1":
            pytest.fail(f"the PDF build needs {missing}: see the README (Debian TeX Live)")
        pytest.skip(f"no {', '.join(missing)}: install Debian's TeX Live to build the PDF")
    output = tmp_path_factory.mktemp("pdf")
    command = ["jupyter-book", "build", str(ROOT), "--builder", "pdflatex", "--path-output"]
    result = subprocess.run([*command, str(output)], capture_output=True, text=True, timeout=1200)
    assert result.returncode == 0, result.stdout[-4000:] + result.stderr[-2000:]
    return output / "_build" / "latex"


@pytest.mark.slow
def test_the_pdf_is_built_with_every_character(latex):
    assert (latex / "book.pdf").stat().st_size > 1_000_000
    log = (latex / "book.log").read_text(errors="replace")
    pages = int(re.search(r"Output written on book\.pdf \((\d+) pages", log)[1])
    assert pages > 100
    assert re.findall(r"Missing character[^\n]*", log) == []


@pytest.mark.slow
def test_each_chapter_is_a_chapter_in_order(latex):
    tex = (latex / "book.tex").read_text()
    chapters = re.findall(r"\\chapter\{(.*)\}", tex)
    titles = [chapter_title(path) for path in CHAPTERS]
    assert len(titles) >= 7
    printed = [title.replace(r"\sphinxhyphen{}", "-") for title in chapters[: len(titles)]]
    assert printed == [title.replace("$", "") for title in titles]


@pytest.mark.slow
def test_the_labs_are_appendices_after_every_chapter(latex):
    tex = (latex / "book.tex").read_text()
    if not LABS:
        pytest.skip("no lab yet (book/labs/NN_name_lab.ipynb)")
    printed = {
        m[1].replace(r"\sphinxhyphen{}", "-"): m.start()
        for m in re.finditer(r"\\chapter\{(.*)\}", tex)
    }
    lessons = [printed[chapter_title(path).replace("$", "")] for path in CHAPTERS]
    labs = [printed[chapter_title(path).replace("$", "")] for path in LABS]
    appendix = tex.index("\\appendix")
    assert max(lessons) < appendix < min(labs), "the labs follow \\appendix, after the chapters"
    assert labs == sorted(labs)


@pytest.mark.slow
def test_every_diagram_is_in_the_pdf_as_vectors(latex):
    tex = (latex / "book.tex").read_text()
    diagrams = {m["name"] for path in CHAPTERS for m in DIAGRAM.finditer(path.read_text())}
    assert diagrams
    for name in sorted(diagrams):
        assert f"{{{{{name}}}.pdf}}" in tex, name  # \sphinxincludegraphics{{name}.pdf}
        assert (latex / f"{name}.pdf").stat().st_size > 1_000, name


def test_a_pdf_build_without_tex_says_what_to_install(monkeypatch):
    import importlib.util
    from types import SimpleNamespace

    spec = importlib.util.spec_from_file_location(
        "offline_site", ROOT / "book/_ext/offline_site.py"
    )
    offline_site = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(offline_site)
    monkeypatch.setattr(offline_site.shutil, "which", lambda tool: None)
    latex = SimpleNamespace(builder=SimpleNamespace(name="latex"))
    with pytest.raises(RuntimeError, match="needs xelatex, latexmk, rsvg-convert.*texlive-xetex"):
        offline_site.require_tex(latex)
    offline_site.require_tex(SimpleNamespace(builder=SimpleNamespace(name="html")))  # no TeX needed


@pytest.mark.slow
def test_headings_are_numbered_once(latex):
    # the chapters number their own headings ("7.1 …"): LaTeX must add no number of its own, in the
    # headings, the contents or the running footers ("1.2 1.2 Query, key, value" before)
    toc = (latex / "book.toc").read_text(errors="replace")
    assert r"\contentsline {chapter}" in toc
    assert r"\numberline" not in toc, re.findall(r"\\numberline \{[^}]*\}[^\n]{0,40}", toc)[:5]
