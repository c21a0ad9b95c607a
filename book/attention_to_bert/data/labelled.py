"""Reading a reader's labelled CSV or TSV file for ``attention_to_bert.finetune``: every problem
named by its row or column, with what to do about it; the seeded, stratified split; the shipped
example file."""

from __future__ import annotations

import csv
import io
import os
import re
from dataclasses import dataclass
from importlib import resources
from pathlib import Path

import numpy as np

from attention_to_bert.validate import check_fraction, check_instance, check_int

SPLIT_NAMES = ("train", "validation", "test")
BINARY_STARTS = {  # what a file that is no CSV often is
    b"PK\x03\x04": "a ZIP archive (an Excel .xlsx or OpenDocument file is one)",
    b"\xd0\xcf\x11\xe0": "an old Excel (.xls) or Word file",
    b"%PDF": "a PDF",
    b"\x1f\x8b": "a gzip archive",
}
NUMBER = re.compile(r"[+-]?(\d+(\.\d*)?|\.\d+)([eE][+-]?\d+)?")


def example_path() -> Path:
    """The shipped example: 300 UCI review sentences labelled by where they were written (``film``,
    ``restaurant`` or ``product``), columns ``text`` and ``label`` (see ``data/finetune/README.md``)."""
    return Path(str(resources.files("attention_to_bert").joinpath("data/finetune/reviews.csv")))


@dataclass
class LabelledRows:
    """The rows of a labelled file: ``texts``, ``labels`` (strings as written, stripped), the
    spreadsheet ``row`` numbers (the header is row 1) and the ``classes`` in their sorted order."""

    texts: list[str]
    labels: list[str]
    rows: list[int]
    classes: list[str]
    columns: list[str]


def _rows_named(rows: list[int], limit: int = 5) -> str:
    shown = ", ".join(map(str, rows[:limit]))
    more = f" and {len(rows) - limit} more" if len(rows) > limit else ""
    return f"row{'s' if len(rows) > 1 else ''} {shown}{more}"


def _decode(path: Path, raw: bytes) -> str:
    for start, what in BINARY_STARTS.items():
        if raw.startswith(start):
            raise ValueError(
                f"{path} is not a CSV or TSV file: it looks like {what}. Save it as CSV "
                "(in Excel or LibreOffice: Save As, 'CSV UTF-8') and pass that file."
            )
    if b"\x00" in raw[:4096]:
        raise ValueError(
            f"{path} is not a text file (it holds zero bytes; UTF-16 text does too): save it as "
            "CSV UTF-8 and pass that file."
        )
    try:
        return raw.decode("utf-8-sig")
    except UnicodeDecodeError as error:
        line = raw[: error.start].count(b"\n") + 1
        column = error.start - (raw.rfind(b"\n", 0, error.start) + 1) + 1
        raise ValueError(
            f"{path} is not UTF-8: line {line}, byte {column} is 0x{raw[error.start]:02x}. "
            "Save the file as UTF-8 (in Excel: Save As, 'CSV UTF-8'; or "
            "iconv -f latin1 -t utf-8), then pass it again."
        ) from None


def _delimiter(path: Path, text: str) -> str:
    suffix = path.suffix.lower()
    first = text.lstrip()[:1]
    if first in ("{", "[") or suffix in (".json", ".jsonl"):
        raise ValueError(
            f"{path} is not a CSV or TSV file: it looks like JSON. Write one row per sentence "
            "with a header line, columns separated by commas (.csv) or tabs (.tsv)."
        )
    if suffix == ".csv":
        return ","
    if suffix in (".tsv", ".tab"):
        return "\t"
    header = text.splitlines()[0] if text.strip() else ""
    found = [d for d in ("\t", ",", ";") if d in header]
    if suffix not in ("", ".txt", ".dat") or not found:
        raise ValueError(
            f"{path} is not a CSV or TSV file (suffix {suffix or 'none'!r}, header "
            f"{header[:60]!r}): pass a .csv file (commas) or a .tsv file (tabs) with a header line."
        )
    return found[0]


def read_labelled(path: str | os.PathLike, text_column: str, label_column: str) -> LabelledRows:
    """Read and check a labelled CSV (commas) or TSV (tabs) file with a header line: every text a
    sentence with words, every label given, labels all numbers or all words, two classes or more."""
    check_instance("path", path, (str, os.PathLike), "a CSV or TSV file's path (str or Path)")
    check_instance("text_column", text_column, str, "a column name (str)")
    check_instance("label_column", label_column, str, "a column name (str)")
    path = Path(path)
    if not path.exists():
        raise FileNotFoundError(f"path: no such file: {path} (looked from {Path.cwd()})")
    if path.is_dir():
        raise ValueError(f"path: {path} is a folder; pass the CSV or TSV file inside it")
    text = _decode(path, path.read_bytes())
    if not text.strip():
        raise ValueError(f"{path} is empty: it needs a header line and one row per sentence")
    delimiter = _delimiter(path, text)
    records = list(csv.reader(io.StringIO(text, newline=""), delimiter=delimiter))
    kind = "TSV (tabs)" if delimiter == "\t" else "CSV (commas)"
    header = _header(path, records[0], kind, text_column, label_column)
    t, y = header.index(text_column), header.index(label_column)
    texts, labels, rows = [], [], []
    for number, record in enumerate(records[1:], start=2):
        if not any(cell.strip() for cell in record):
            continue  # a blank line
        if len(record) != len(header):
            raise ValueError(
                f"{path}: row {number} has {len(record)} fields, the header {len(header)} "
                f"(read as {kind}). Put quotes around a text that holds the separator."
            )
        texts.append(record[t].strip())
        labels.append(record[y].strip())
        rows.append(number)
    if not rows:
        raise ValueError(f"{path} has a header but no rows: add one row per sentence")
    _check_cells(path, texts, labels, rows, text_column, label_column)
    return LabelledRows(texts, labels, rows, _classes(labels), header)


def _header(path: Path, record: list[str], kind: str, text_column: str, label_column: str):
    """The header's column names, which must hold both columns."""
    header = [name.strip() for name in record]
    if len(header) < 2:
        raise ValueError(
            f"{path}: the header has one column only ({header[0]!r:.60}); read as {kind}. "
            "A text column and a label column are needed: check the separator."
        )
    for name, wanted in (("text_column", text_column), ("label_column", label_column)):
        if wanted not in header:
            raise ValueError(
                f"{name}: there is no column {wanted!r} in {path}; its columns are "
                f"{', '.join(map(repr, header))}. Pass one of them (--{name.replace('_', '-')})."
            )
    if text_column == label_column:
        raise ValueError(f"text_column and label_column are both {text_column!r}: pass two columns")
    return header


def _check_cells(path, texts, labels, rows, text_column, label_column) -> None:
    empty = [row for row, text in zip(rows, texts, strict=True) if not text]
    if empty:
        raise ValueError(
            f"{path}: column {text_column!r} is empty in {_rows_named(empty)}: "
            "write the sentence there or delete the row."
        )
    wordless = [
        (row, t) for row, t in zip(rows, texts, strict=True) if not any(map(str.isalpha, t))
    ]
    if wordless:
        seen = ", ".join(f"{t!r:.20}" for _, t in wordless[:3])
        raise ValueError(
            f"{path}: column {text_column!r} holds no words in {_rows_named([r for r, _ in wordless])}"
            f" ({seen}): is it the text column? Each row needs a sentence."
        )
    unlabelled = [row for row, label in zip(rows, labels, strict=True) if not label]
    if unlabelled:
        raise ValueError(
            f"{path}: column {label_column!r} is empty in {_rows_named(unlabelled)}: "
            "label every row or delete the unlabelled ones."
        )
    numbers = [bool(NUMBER.fullmatch(label)) for label in labels]
    if any(numbers) and not all(numbers):
        number = next(i for i, n in enumerate(numbers) if n)
        word = next(i for i, n in enumerate(numbers) if not n)
        raise ValueError(
            f"{path}: column {label_column!r} mixes numbers and words: row {rows[number]} has "
            f"{labels[number]!r}, row {rows[word]} has {labels[word]!r}. Use one kind of label "
            "for every row (all words, or all numbers)."
        )


def _classes(labels: list[str]) -> list[str]:
    names = set(labels)
    if all(NUMBER.fullmatch(label) for label in names):
        return sorted(names, key=lambda label: (float(label), label))
    return sorted(names)


def stratified_split(
    labels: list[str], seed: int = 0, validation: float = 0.2, test: float = 0.2
) -> list[str]:
    """Each row's split (``"train"``, ``"validation"`` or ``"test"``): within each class, shuffled
    with ``seed``, ``round(share * n)`` rows (at least one) to validation and to test, the rest to
    training. A class needs at least 3 rows."""
    check_int("seed", seed, minimum=0)
    check_fraction("validation", validation)
    check_fraction("test", test)
    if validation + test >= 1:
        raise ValueError(f"validation + test must be below 1, got {validation} + {test}")
    split = ["train"] * len(labels)
    generator = np.random.default_rng(seed)
    for name in _classes(labels):
        members = [i for i, label in enumerate(labels) if label == name]
        generator.shuffle(members)
        n_val = max(1, round(validation * len(members)))
        n_test = max(1, round(test * len(members)))
        if len(members) - n_val - n_test < 1:
            raise ValueError(f"class {name!r}: {len(members)} rows are too few to split")
        for i in members[:n_test]:
            split[i] = "test"
        for i in members[n_test : n_test + n_val]:
            split[i] = "validation"
    return split


def _check_classes(data: LabelledRows, path: Path, label_column: str) -> None:
    counts = {name: data.labels.count(name) for name in data.classes}
    if len(counts) < 2:
        ((name, count),) = counts.items()
        raise ValueError(
            f"{path}: column {label_column!r} has one class only ({name!r}, {count} rows): a "
            "classifier needs at least two. Add rows of another class, or check the column."
        )
    small = {name: count for name, count in counts.items() if count < 3}
    if small:
        name, count = next(iter(small.items()))
        rows = [r for r, label in zip(data.rows, data.labels, strict=True) if label == name]
        raise ValueError(
            f"{path}: class {name!r} has {count} row{'s' * (count > 1)} ({_rows_named(rows)}); the "
            "split needs at least 3 of each class (one each for training, validation and test). "
            f"Add rows of it, or merge it into another class. Classes: {counts}"
        )
