"""The shipped results of the book's longer runs, beside this module: ``experiments/NAME.py`` writes
``results/NAME.json`` and the chapter's lab reads it with one call, ``results.load("ch03_baselines")``,
through ``importlib.resources``, so that it works from a checkout, a wheel, or a notebook opened
alone (Colab, a hand-out); ``format_table`` prints them as plain text. No plotting library is imported
to read them."""

from __future__ import annotations

import json
from importlib import resources
from typing import Any

PACKAGE = "attention_to_bert.results"


def names() -> list[str]:
    """The names of the shipped results files, without ``.json``: ``["ch02_han", ...]``."""
    folder = resources.files(PACKAGE)
    return sorted(p.name[: -len(".json")] for p in folder.iterdir() if p.name.endswith(".json"))


def load(name: str) -> dict[str, Any]:
    """The shipped results file ``name`` (for example ``"ch02_han"``), parsed from JSON."""
    if not isinstance(name, str):
        raise TypeError(f"name must be a str such as 'ch02_han', got {type(name).__name__}")
    known = names()
    stem = name[: -len(".json")] if name.endswith(".json") else name
    if stem not in known:
        raise ValueError(f"name must be one of {known}, got {name!r}")
    text = resources.files(PACKAGE).joinpath(f"{stem}.json").read_text(encoding="utf-8")
    return json.loads(text)


def format_table(
    rows: list[dict], columns: list[str], *, digits: int = 3, headers: list[str] | None = None
) -> str:
    """A plain-text table of ``rows`` (dicts) in ``columns``; floats rounded to ``digits``."""
    if not isinstance(rows, list) or not all(isinstance(r, dict) for r in rows):
        raise TypeError("rows must be a list of dicts, one a row")
    if not isinstance(columns, list) or not all(isinstance(c, str) for c in columns) or not columns:
        raise TypeError("columns must be a non-empty list of str (the keys to print)")
    if headers is not None and (not isinstance(headers, list) or len(headers) != len(columns)):
        raise ValueError(f"headers must be a list of {len(columns)} str, one per column")

    def cell(value: Any) -> str:
        if isinstance(value, float):
            return f"{value:.{digits}f}"
        return "" if value is None else str(value)

    table = [headers or columns] + [[cell(row.get(c)) for c in columns] for row in rows]
    widths = [max(len(str(line[i])) for line in table) for i in range(len(columns))]
    lines = [
        "  ".join(str(v).rjust(w) for v, w in zip(line, widths, strict=True)) for line in table
    ]
    return "\n".join(lines)
