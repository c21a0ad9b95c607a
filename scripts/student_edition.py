"""Write the student edition of the book: the notebooks with their solutions taken out.

    python scripts/student_edition.py                 # writes student/ (notebooks + helper package)
    python scripts/student_edition.py --output handout --clear-outputs

In each chapter notebook (see CONTRIBUTING.md for the form the chapters follow):
- markdown cells tagged ``solution`` (the folded written solutions) are removed;
- in code cells tagged ``solution``, the lines between ``# BEGIN SOLUTION`` and ``# END SOLUTION``
  become a ``...`` stub at the same indentation, the cell is unfolded (``hide-input`` dropped) and its
  outputs cleared, so the student sees the function to write and the checker call that tests it;
- code cells tagged ``solution`` without markers are removed.
The helper package and book/images/ (figures and diagrams the notebooks show) are copied beside the
notebooks, so the folder can be handed out as it is. The helper package holds the reference
implementations of most coding exercises (see the teaching guide, book/teaching.md, for graded work).
An exercise cell calls its checker as `_ = checks.x(my_x)`, so "Run all" never stops at a stub.
"""

from __future__ import annotations

import argparse
import re
import shutil
import sys
from pathlib import Path

import nbformat

ROOT = Path(__file__).resolve().parents[1]
BEGIN = re.compile(r"^(?P<indent>[ \t]*)# BEGIN SOLUTION[ \t]*$")
END = re.compile(r"^[ \t]*# END SOLUTION[ \t]*$")
STUB = "...  # your code here"


def stub_solution(source: str) -> str:
    """Replace every ``# BEGIN SOLUTION`` ... ``# END SOLUTION`` block of ``source`` with a ``...`` stub."""
    lines, kept, inside = source.splitlines(), [], False
    for number, line in enumerate(lines, start=1):
        begin = BEGIN.match(line)
        if begin:
            if inside:
                raise ValueError(f"line {number}: '# BEGIN SOLUTION' inside another solution block")
            inside = True
            kept.append(begin.group("indent") + STUB)
        elif END.match(line):
            if not inside:
                raise ValueError(
                    f"line {number}: '# END SOLUTION' without a '# BEGIN SOLUTION' before it"
                )
            inside = False
        elif not inside:
            kept.append(line)
    if inside:
        raise ValueError("a '# BEGIN SOLUTION' block is never closed by '# END SOLUTION'")
    return "\n".join(kept)


def student_notebook(
    notebook: nbformat.NotebookNode, clear_outputs: bool = False
) -> nbformat.NotebookNode:
    """Return a copy of ``notebook`` with its solutions removed or stubbed."""
    student = nbformat.from_dict(notebook)
    cells = []
    for cell in student.cells:
        tags = cell.get("metadata", {}).get("tags", [])
        if "solution" in tags:
            if cell.cell_type != "code" or not any(
                BEGIN.match(line) for line in cell.source.splitlines()
            ):
                continue
            cell.source = stub_solution(cell.source)
            cell.metadata["tags"] = [
                tag for tag in tags if tag not in ("hide-input", "solution")
            ] + ["exercise-stub"]
            cell.outputs, cell.execution_count = [], None
        elif clear_outputs and cell.cell_type == "code":
            cell.outputs, cell.execution_count = [], None
        cells.append(cell)
    student.cells = cells
    return student


def write_student_edition(
    book: Path = ROOT / "book", output: Path = ROOT / "student", clear_outputs: bool = False
) -> list[Path]:
    """Write the student notebooks and a copy of the helper package into ``output``; return the notebooks."""
    notebooks = sorted(book.glob("*.ipynb"))
    if not notebooks:
        raise ValueError(f"no notebooks found in {book}")
    output.mkdir(parents=True, exist_ok=True)
    written = []
    for path in notebooks:
        student = student_notebook(nbformat.read(path, as_version=4), clear_outputs=clear_outputs)
        target = output / path.name
        nbformat.write(student, target)
        written.append(target)
    for folder in ("attention_to_bert", "images"):  # the package; the figures the notebooks show
        if not (book / folder).is_dir():
            continue
        if (output / folder).exists():
            shutil.rmtree(output / folder)
        ignore = shutil.ignore_patterns("__pycache__")
        shutil.copytree(book / folder, output / folder, ignore=ignore)
    return written


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument(
        "--output", type=Path, default=ROOT / "student", help="folder to write (default: student/)"
    )
    parser.add_argument(
        "--clear-outputs", action="store_true", help="also clear the outputs of every code cell"
    )
    args = parser.parse_args(argv)
    for path in write_student_edition(output=args.output, clear_outputs=args.clear_outputs):
        print(path)
    return 0


if __name__ == "__main__":
    sys.exit(main())
