"""Rewrite the notebooks' call sites of package functions whose signature changed; idempotent.

It also gives every chapter, right after its setup cell, the one-line note that ``set_seed`` fixes
torch's thread count (a chapter that already mentions the thread count there keeps its own words).

    python scripts/notebooks/migrate_notebooks.py [NOTEBOOK ...]   # default: every notebook in book/

Each rule is a regular expression applied to the notebook file's text (the JSON, so nothing else in
the file changes); a migrated notebook no longer matches, so running the script again, after a merge
for instance, changes nothing. It prints what it rewrote. Outputs are unchanged by these rewrites.
"""

from __future__ import annotations

import re
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]

RULES = [
    # issue 52's renames: long_range.train (beside training.train) is long_range.train_reversal,
    # finetuning.Encoder (beside seq2seq.Encoder) is classifier.FeatureEncoder (round 7 moved
    # finetuning.py into classifier.py, beside finetune.py's models). (Our layers now take
    # the stack's combined masks by name, layer(x, mask): a call by torch's keywords is rewritten by
    # hand, as chapter 6's were.)
    (re.compile(r"\blong_range\.train\("), "long_range.train_reversal("),
    (re.compile(r"\bfinetuning\.Encoder\("), "classifier.FeatureEncoder("),
]


def migrate(path: Path) -> int:
    """Apply every rule to ``path``; return the number of call sites rewritten."""
    text = path.read_text(encoding="utf-8")
    total = 0
    for pattern, replacement in RULES:
        text, count = pattern.subn(replacement, text)
        total += count
    if total:
        path.write_text(text, encoding="utf-8")
    return total


SEED_NOTE = (
    "(`set_seed` seeds Python, NumPy and torch and also fixes torch's thread count, because the "
    "number of\nthreads changes the last bits of float results.)"
)


def add_seed_note(path: Path) -> bool:
    """Insert ``SEED_NOTE`` after the setup cell (the first code cell calling ``set_seed``) unless
    the markdown cell that follows it already speaks of the thread count; True if inserted."""
    import nbformat

    notebook = nbformat.read(path, as_version=4)
    setup = next(
        (
            i
            for i, c in enumerate(notebook.cells)
            if c.cell_type == "code" and "set_seed(" in c.source
        ),
        None,
    )
    if setup is None:
        return False
    following = notebook.cells[setup + 1 : setup + 2]
    if following and following[0].cell_type == "markdown" and "thread count" in following[0].source:
        return False
    notebook.cells.insert(setup + 1, nbformat.v4.new_markdown_cell(SEED_NOTE))
    nbformat.write(notebook, path)
    return True


def main(arguments: list[str]) -> None:
    paths = [Path(a) for a in arguments] or sorted((ROOT / "book").glob("[0-9]*.ipynb"))
    for path in paths:
        count = migrate(path)
        if count:
            print(f"{path.name}: {count} call site(s) rewritten")
        if add_seed_note(path):
            print(f"{path.name}: the set_seed note added after the setup cell")


if __name__ == "__main__":
    main(sys.argv[1:])
