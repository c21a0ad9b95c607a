"""What a learner reads in each lesson: the prose and code in the reader's path, not folded away.

    python scripts/notebooks/reading_budget.py [book/NN_name.ipynb ...]   # default: every lesson and lab

Folded = Markdown inside ``<details>...</details>`` or a ``{dropdown}``/``{toggle}``, and code cells
tagged hide-cell / hide-input / remove-cell / remove-input or stored with ``jupyter.source_hidden``.
Per lesson it counts: the visible prose words, the paragraphs over ``PARAGRAPH`` words, the numbers
written in the visible prose (decimals such as 0.823, percentages, numbers of four or more digits
such as 1,000; inline maths and code spans are notation, not reported numbers), the visible code
lines, the visible ``assert`` lines, and the lines of the first *visible* code cell (the set-up a
reader meets before the first idea; the folded install guard before it does not count). Labs (any
notebook under a ``labs/`` folder) carry the evidence and are listed without a budget.
Exit status 1 if a lesson is over its budget (tests/chapters/test_reading_budget.py holds it in CI).
"""

from __future__ import annotations

import argparse
import json
import re
import sys
from dataclasses import dataclass
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
WORDS, PARAGRAPH, NUMBERS, CODE, ASSERTS, FIRST = 3000, 120, 25, 450, 3, 12
HIDE = {"hide-cell", "hide-input", "remove-cell", "remove-input"}
NUMBER = re.compile(r"(?<![\w.])(?:\d+\.\d+|\d+(?:\.\d+)?\s?%|\d{1,3}(?:,\d{3})+|\d{4,})(?![\w.])")
FOLDED_DIRECTIVE = re.compile(r"(`{3,}|:{3,})\{(dropdown|toggle|admonition)\}[^\n]*\n.*?\n\1", re.S)


@dataclass
class Reading:
    """What a reader meets in one notebook, outside the folds."""

    words: int = 0
    long_paragraphs: int = 0
    numbers: int = 0
    code_lines: int = 0
    asserts: int = 0
    first_code_lines: int = 0

    def over(self) -> list[str]:
        """The budget lines this lesson breaks (empty: within its budget)."""
        limits = [
            ("visible words", self.words, WORDS),
            (f"paragraphs over {PARAGRAPH} words", self.long_paragraphs, 0),
            ("numbers in the visible prose", self.numbers, NUMBERS),
            ("visible code lines", self.code_lines, CODE),
            ("visible assert lines", self.asserts, ASSERTS),
            ("lines of the first visible code cell", self.first_code_lines, FIRST),
        ]
        return [f"{name} {value} > {limit}" for name, value, limit in limits if value > limit]


def visible_markdown(source: str) -> str:
    """``source`` without its folds and display maths."""
    source = re.sub(r"<details.*?</details>", "", source, flags=re.S | re.I)

    def unfolded(match: re.Match) -> str:
        folded = match[2] in ("dropdown", "toggle") or ":class: dropdown" in match[0]
        return "" if folded else match[0]

    source = FOLDED_DIRECTIVE.sub(unfolded, source)
    return re.sub(r"\$\$.*?\$\$", " ", source, flags=re.S)


def hidden(cell: dict) -> bool:
    """Whether a code cell's source is folded away on the website and in JupyterLab."""
    metadata = cell.get("metadata", {})
    tags = set(metadata.get("tags", []))
    return bool(tags & HIDE) or metadata.get("jupyter", {}).get("source_hidden", False)


def measure(path: Path) -> Reading:
    """Count what a reader meets in the notebook at ``path``."""
    reading = Reading()
    first_seen = False
    for cell in json.loads(Path(path).read_text(encoding="utf-8"))["cells"]:
        source = "".join(cell["source"])
        if cell["cell_type"] == "markdown":
            for paragraph in re.split(r"\n\s*\n", visible_markdown(source)):
                paragraph = paragraph.strip()
                if not paragraph or paragraph.startswith(("#", "|", "```", "<", "![", ":::")):
                    continue
                prose = re.sub(r"\$[^$]*\$", " ", paragraph)  # inline maths is notation
                words = len(re.sub(r"[`*_\[\]()]", " ", paragraph).split())
                reading.words += words
                reading.long_paragraphs += words > PARAGRAPH
                reading.numbers += len(NUMBER.findall(re.sub(r"`[^`]*`", " ", prose)))
        elif cell["cell_type"] == "code" and source.strip() and not hidden(cell):
            lines = [
                line
                for line in source.splitlines()
                if line.strip() and not line.strip().startswith("#")
            ]
            if not first_seen:
                reading.first_code_lines, first_seen = len(lines), True
            reading.code_lines += len(lines)
            reading.asserts += sum(1 for line in lines if re.match(r"\s*assert\b", line))
    return reading


def is_lab(path: Path) -> bool:
    return "labs" in Path(path).parts


def report(path: Path) -> tuple[str, list[str]]:
    """One line about the notebook at ``path``, and what is over its budget (never for a lab)."""
    reading = measure(path)
    name = Path(path).stem
    if is_lab(path):
        line = (
            f"{name} (lab, no budget): words {reading.words}, numbers in prose "
            f"{reading.numbers}, code lines {reading.code_lines}"
        )
        return line, []
    line = (
        f"{name}: words {reading.words} (<= {WORDS}), paragraphs > {PARAGRAPH} words "
        f"{reading.long_paragraphs} (0), numbers in prose {reading.numbers} (<= {NUMBERS}), "
        f"code lines {reading.code_lines} (<= {CODE}), assert lines {reading.asserts} "
        f"(<= {ASSERTS}), first visible code cell {reading.first_code_lines} lines (<= {FIRST})"
    )
    return line, reading.over()


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("notebooks", nargs="*", type=Path, help="default: every lesson and lab")
    args = parser.parse_args(argv)
    book = ROOT / "book"
    paths = args.notebooks or [
        *sorted(book.glob("[0-9][0-9]_*.ipynb")),
        *sorted(book.glob("labs/[0-9][0-9]_*.ipynb")),
    ]
    missing = [str(path) for path in paths if not Path(path).is_file()]
    if missing:
        parser.error(f"notebooks: no such file {', '.join(missing)}")
    over = []
    for path in paths:
        line, problems = report(path)
        print(line)
        if problems:
            over.append(Path(path).stem)
    lessons = sum(not is_lab(path) for path in paths)
    print(f"lessons over the reading budget: {len(over)}/{lessons} {over}")
    return 1 if over else 0


if __name__ == "__main__":
    sys.exit(main())
