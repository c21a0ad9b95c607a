"""The shipped results of the book's longer runs, beside this module: ``experiments/NAME.py`` writes
``results/NAME.json`` and the chapter's lab reads it with one call, ``results.load("ch03_baselines")``,
through ``importlib.resources``, so that it works from a checkout, a wheel, or a notebook opened
alone (Colab, a hand-out)."""

from __future__ import annotations

import json
from importlib import resources
from typing import Any

from attention_to_bert.plotting import format_table as format_table  # re-exported for the chapters

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
