"""Point the book at a GitHub repository: the one setting behind every link to it.

    python scripts/repository/set_repository.py OWNER/NAME   # in a fork: ... me/book

The repository URL lives in `_config.yml` (`repository: url:`), which the website's launch buttons
(Colab, Binder), repository and issue buttons follow. Each notebook's setup cell installs the helper
package from the same URL on Colab; this script rewrites both, so a fork's site and Colab links point
at the fork. The Pages workflow runs it with the repository it runs in (`${{ github.repository }}`).

The notebooks also link to the book's other pages by their address on the published site
(`https://OWNER.github.io/NAME/book/notation.html#...`, written by `scripts/notebooks/format_notebooks.py`, so
that the links work on Colab and in a downloaded notebook): this script moves those to the new
repository's site too (`published_site`), in every notebook under `book/`.
"""

from __future__ import annotations

import argparse
import re
import sys
from pathlib import Path

import nbformat

ROOT = Path(__file__).resolve().parents[2]
CONFIG_URL = re.compile(r"(?m)^(repository:\n(?:[ \t]+.*\n)*?[ \t]+url:[ \t]*)(\S+)")
NOTEBOOK_URL = re.compile(r'(REPOSITORY = ")(https://github\.com/[^"]+)(")')
NAME = re.compile(r"[A-Za-z0-9_.-]+/[A-Za-z0-9_.-]+")
GITHUB_REPOSITORY = re.compile(
    r"https://github\.com/(?P<owner>[\w.-]+)/(?P<name>[\w.-]+?)(?:\.git)?/?$"
)


def published_site(repository_url: str) -> str:
    """The address of the repository's GitHub Pages site, ending in `/`:
    `https://github.com/OWNER/NAME` -> `https://owner.github.io/NAME/` (the site of a repository
    named `OWNER.github.io` is at the root). Its one home: `book/_ext/offline_site.py` and
    `scripts/notebooks/format_notebooks.py` import it."""
    match = GITHUB_REPOSITORY.match(repository_url)
    if not match:
        raise ValueError(f"expected a https://github.com/OWNER/NAME URL, got {repository_url!r}")
    owner, name = match["owner"].lower(), match["name"]
    if name.lower() == f"{owner}.github.io":
        return f"https://{owner}.github.io/"
    return f"https://{owner}.github.io/{name}/"


def configured_url(root: Path = ROOT) -> str:
    """The repository URL of `_config.yml`."""
    match = CONFIG_URL.search((root / "_config.yml").read_text())
    if not match:
        raise ValueError("_config.yml has no `repository: url:` setting")
    return match.group(2)


def notebooks(root: Path = ROOT) -> list[Path]:
    """The book's notebooks: the lessons, then their labs."""
    book = root / "book"
    return sorted(book.glob("[0-9][0-9]_*.ipynb")) + sorted(book.glob("labs/[0-9][0-9]_*.ipynb"))


def notebook_urls(root: Path = ROOT) -> dict[str, list[str]]:
    """The repository URLs named in each notebook's code cells."""
    urls = {}
    for path in notebooks(root):
        cells = nbformat.read(path, as_version=4).cells
        sources = [cell.source for cell in cells if cell.cell_type == "code"]
        urls[path.name] = [
            match.group(2) for source in sources for match in NOTEBOOK_URL.finditer(source)
        ]
    return urls


def set_repository(name: str, root: Path = ROOT) -> str:
    """Set the repository to `https://github.com/{name}` everywhere; return the URL."""
    if not NAME.fullmatch(name):
        raise ValueError(f"expected OWNER/NAME, got {name!r}")
    url = f"https://github.com/{name}"
    old_site, new_site = published_site(configured_url(root)), published_site(url)
    config = root / "_config.yml"
    text, count = CONFIG_URL.subn(lambda match: match.group(1) + url, config.read_text())
    if count != 1:
        raise ValueError("_config.yml has no `repository: url:` setting")
    config.write_text(text)
    for path in notebooks(root):
        notebook = nbformat.read(path, as_version=4)
        found = 0
        for cell in notebook.cells:
            if cell.cell_type == "code":
                cell.source, count = NOTEBOOK_URL.subn(rf"\g<1>{url}\g<3>", cell.source)
                found += count
        if not found:
            raise ValueError(
                f'{path.name}: no `REPOSITORY = "https://github.com/..."` in its setup cell'
            )
        nbformat.write(notebook, path)
    for path in sorted((root / "book").rglob("*.ipynb")):
        if ".ipynb_checkpoints" in path.parts:
            continue
        notebook = nbformat.read(path, as_version=4)
        moved = False
        for cell in notebook.cells:
            if cell.cell_type == "markdown" and old_site in cell.source:
                cell.source = cell.source.replace(old_site, new_site)
                moved = True
        if moved:
            nbformat.write(notebook, path)
    return url


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("name", help="the GitHub repository, OWNER/NAME")
    args = parser.parse_args(argv)
    print(set_repository(args.name))
    return 0


if __name__ == "__main__":
    sys.exit(main())
