"""Copy the package's model code into the chapter cells that show it (the package is the source).

A chapter shows the model it is about in visible cells, each marked on its first line as the source
of a package module's definitions::

    # attention_to_bert/bert.py: BertOutput, BertLayer

This script rewrites the rest of each marked cell from the module: the named classes and functions,
in the order named, re-wrapped to the notebooks' 76 columns (docstrings and comments re-flowed, then
``ruff format``). ``tests/chapters/test_ch06_model_on_page.py`` (chapter 6: transformer.py's
``EncoderLayer``, ``DecoderLayer``, translator.py's ``Seq2SeqTransformer``) and
``tests/chapters/test_ch07_model_on_page.py`` (chapter 7: bert.py) check that each cell and its module
define the same code (the same syntax tree, docstrings compared word by word). Run it after
changing a module:

    python scripts/notebooks/sync_model_cells.py book/06_transformer.ipynb book/07_bert.ipynb
    python scripts/notebooks/sync_model_cells.py --check book/06_transformer.ipynb  # exit 1 if out of date
"""

from __future__ import annotations

import argparse
import ast
import io
import re
import subprocess
import sys
import textwrap
import tokenize
from pathlib import Path

import nbformat

ROOT = Path(__file__).resolve().parents[2]
PACKAGE = ROOT / "book"
WIDTH = 76
MARKER = re.compile(r"^# (?P<module>attention_to_bert/[\w/]+\.py): (?P<names>\w+(?:, \w+)*)\s*$")


def marked_cells(notebook: nbformat.NotebookNode) -> list[tuple[int, str, list[str]]]:
    """``(index, module path, names)`` of each code cell whose first line is a source marker."""
    found = []
    for index, cell in enumerate(notebook.cells):
        if cell.cell_type != "code" or not cell.source:
            continue
        match = MARKER.match(cell.source.splitlines()[0])
        if match:
            found.append((index, match["module"], match["names"].split(", ")))
    return found


def definitions(source: str) -> dict[str, ast.AST]:
    """The top-level classes and functions of ``source``, by name."""
    tree = ast.parse(source)
    kinds = (ast.ClassDef, ast.FunctionDef, ast.AsyncFunctionDef)
    return {node.name: node for node in tree.body if isinstance(node, kinds)}


def _docstring_nodes(tree: ast.AST) -> list[ast.Constant]:
    kinds = (ast.ClassDef, ast.FunctionDef, ast.AsyncFunctionDef, ast.Module)
    found = []
    for node in ast.walk(tree):
        if isinstance(node, kinds) and node.body and isinstance(node.body[0], ast.Expr):
            value = node.body[0].value
            if isinstance(value, ast.Constant) and isinstance(value.value, str):
                found.append(value)
    return found


def _rewrap_docstrings(source: str) -> str:
    """Each docstring re-flowed to ``WIDTH`` columns (its words unchanged)."""
    lines = source.splitlines()
    for node in sorted(_docstring_nodes(ast.parse(source)), key=lambda n: -n.lineno):
        indent = " " * node.col_offset
        words = " ".join(node.value.split())
        one_line = f'{indent}"""{words}"""'
        if len(one_line) <= WIDTH:
            new = [one_line]
        else:  # room for the quotes on the first and on the last line
            wrapped = textwrap.wrap(words, WIDTH - len(indent) - 3, break_on_hyphens=False)
            new = [f'{indent}"""{wrapped[0]}'] + [indent + part for part in wrapped[1:]]
            if len(new[-1]) + 3 <= WIDTH:
                new[-1] += '"""'
            else:
                new.append(f'{indent}"""')
        lines[node.lineno - 1 : node.end_lineno] = new
    return "\n".join(lines) + "\n"


def _rewrap_comments(source: str) -> str:
    """Comments re-flowed to ``WIDTH`` columns; a trailing comment on a long line moves above it."""
    comments = {}
    for token in tokenize.generate_tokens(io.StringIO(source).readline):
        if token.type == tokenize.COMMENT:
            comments[token.start[0]] = token.start[1]
    out = []
    for number, line in enumerate(source.splitlines(), start=1):
        if number not in comments or len(line) <= WIDTH:
            out.append(line)
            continue
        column = comments[number]
        code, text = line[:column].rstrip(), line[column:].lstrip("# ").rstrip()
        indent = " " * (len(line) - len(line.lstrip()))
        wrapped = textwrap.wrap(text, WIDTH - len(indent) - 2)
        out += [f"{indent}# {part}" for part in wrapped]
        if code.strip():
            out.append(code)
    return "\n".join(out) + "\n"


def cell_source(module: str, names: list[str]) -> str:
    """The marked cell's text for ``names`` of ``module`` (before ``ruff format``)."""
    source = (PACKAGE / module).read_text(encoding="utf-8")
    found = definitions(source)
    missing = [name for name in names if name not in found]
    if missing:
        raise ValueError(f"{module} defines no {', '.join(missing)}")
    parts = [ast.get_source_segment(source, found[name], padded=True) for name in names]
    body = "\n\n\n".join(_rewrap_comments(_rewrap_docstrings(part)).rstrip() for part in parts)
    return f"# {module}: {', '.join(names)}\n{body}\n"


def ruff_format(code: str) -> str:
    """``code`` formatted as the notebooks are (book/ruff.toml: 76 columns)."""
    result = subprocess.run(
        [sys.executable, "-m", "ruff", "format", "--config", str(PACKAGE / "ruff.toml"), "-"],
        input=code,
        capture_output=True,
        text=True,
        check=True,
    )
    lines = result.stdout.rstrip("\n").splitlines()
    # a string ruff cannot split (an error message) keeps its length, marked as allowed
    return "\n".join(
        line if len(line) <= WIDTH or "noqa" in line else f"{line}  # noqa: E501" for line in lines
    )


def sync(path: Path, check: bool = False) -> bool:
    """Rewrite (or with ``check`` only compare) the marked cells of ``path``; True if up to date."""
    notebook = nbformat.read(path, as_version=4)
    current = True
    for index, module, names in marked_cells(notebook):
        wanted = ruff_format(cell_source(module, names))
        if notebook.cells[index].source != wanted:
            current = False
            print(f"{path.name}: cell {index} ({module}: {', '.join(names)}) is out of date")
            notebook.cells[index].source = wanted
    if not current and not check:
        nbformat.write(notebook, path)
    return current


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("notebooks", nargs="+", type=Path)
    parser.add_argument("--check", action="store_true", help="compare only; exit 1 if out of date")
    args = parser.parse_args(argv)
    results = [sync(path, args.check) for path in args.notebooks]
    return 0 if all(results) or not args.check else 1


if __name__ == "__main__":
    sys.exit(main())
