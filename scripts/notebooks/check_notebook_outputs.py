"""Check the stored outputs of the chapter notebooks, fast (nothing is executed).

    python scripts/notebooks/check_notebook_outputs.py [book/NN_name.ipynb ...]   # default: every chapter

A chapter is committed with the outputs of one clean run, top to bottom: code cells numbered 1, 2,
3, ... in order, kernelspec and language_info present, and no error, no stderr (warnings), no
absolute path of the writer's machine, no object repr (``<Figure ... at 0x...>``) in any output, and
no stream split over consecutive outputs (one box each on the website; `python
scripts/notebooks/execute_notebooks.py --merge-streams-only` merges them).
nbval then proves that the outputs reproduce; this is the quick check for pre-commit.
"""

from __future__ import annotations

import itertools
import re
import sys
from pathlib import Path

import nbformat

ROOT = Path(__file__).resolve().parents[2]
ABSOLUTE_PATH = re.compile(r"(?<![\w.:/])(/home/|/Users/|/work/|/tmp/|/root/|[A-Z]:\\\\)")
OBJECT_REPR = re.compile(r"<[\w.]+(?: [\w.]+)* at 0x[0-9a-fA-F]+>")


def output_text(output: dict) -> str:
    if output.get("output_type") == "stream":
        return output.get("text", "")
    data = output.get("data", {})
    return "".join(str(data.get(kind, "")) for kind in ("text/plain", "text/html", "text/markdown"))


def split_streams(notebook: nbformat.NotebookNode) -> list[str]:
    """Where a code cell stores two consecutive stream outputs of the same name."""
    found = []
    for index, cell in enumerate(notebook.cells):
        for first, second in itertools.pairwise(cell.get("outputs", [])):
            if first.output_type == second.output_type == "stream" and first.name == second.name:
                found.append(
                    f"cell {index}: two {first.name} outputs in a row ({second.text[:40]!r}); "
                    "merge them with `python scripts/notebooks/execute_notebooks.py --merge-streams-only`"
                )
    return found


def problems(path: Path) -> list[str]:
    """What is wrong with the stored outputs of the notebook at ``path``."""
    notebook = nbformat.read(path, as_version=4)
    found = [
        f"metadata.{key} is missing"
        for key in ("kernelspec", "language_info")
        if key not in notebook.metadata
    ]
    counts = []
    for index, cell in enumerate(notebook.cells):
        if cell.cell_type != "code":
            continue
        counts.append(cell.get("execution_count"))
        for output in cell.get("outputs", []):
            where = f"cell {index}"
            if output.get("output_type") == "error":
                found.append(f"{where}: an error is stored ({output.get('ename')})")
            elif output.get("output_type") == "stream" and output.get("name") == "stderr":
                found.append(f"{where}: stderr is stored: {output.get('text', '')[:80]!r}")
            text = output_text(output)
            if ABSOLUTE_PATH.search(text):
                found.append(
                    f"{where}: an absolute path is stored: {ABSOLUTE_PATH.search(text).group(0)!r}"
                )
            if OBJECT_REPR.search(text):
                found.append(
                    f"{where}: an object repr is stored: {OBJECT_REPR.search(text).group(0)!r}"
                )
    found += split_streams(notebook)
    if counts != list(range(1, len(counts) + 1)):
        found.append(
            "not executed once, top to bottom in a clean kernel (execution counts 1, 2, 3, ...)"
        )
    return [f"{path.name}: {problem}" for problem in found]


def main(argv: list[str] | None = None) -> int:
    paths = [Path(arg) for arg in (argv if argv is not None else sys.argv[1:])]
    book = ROOT / "book"
    paths = [p for p in paths if p.suffix == ".ipynb"] or [
        *sorted(book.glob("[0-9][0-9]_*.ipynb")),  # the lessons
        *sorted(book.glob("labs/[0-9][0-9]_*.ipynb")),  # their labs
    ]
    found = [problem for path in paths for problem in problems(path)]
    print("\n".join(found) or f"{len(paths)} notebook(s): stored outputs are clean")
    return 1 if found else 0


if __name__ == "__main__":
    sys.exit(main())
