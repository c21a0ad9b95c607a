"""The results table that several scripts keep (``{"rows": [...], "torch": ..., "date": ...}``):
load it, add or join rows, stamp it and write it back. Imported by ``ch04_partner.py`` and
``ch03_controls.py``; not a script itself."""

from __future__ import annotations

import datetime
import json
from collections.abc import Callable, Iterable
from pathlib import Path
from typing import Any

import torch


def update(
    out: Path,
    merge: list[Path] | None,
    key: str,
    names: Iterable[str],
    seeds: Iterable[int],
    rows_of: Callable[[str, int], list[dict[str, Any]]],
    sort_by: tuple[str, ...],
) -> None:
    """Update the table in ``out`` (a new one if missing). With ``merge``: append those files' rows
    and take their torch version and date. Otherwise: for each name and seed, replace the rows
    whose (``key``, ``"seed"``) are (name, seed) by ``rows_of(name, seed)``, stamped with this
    torch version and today's date. Then sort the rows by the columns ``sort_by`` and write ``out``."""
    table = json.loads(out.read_text()) if out.is_file() else {"rows": []}
    if merge:
        for path in merge:
            other = json.loads(path.read_text())
            table["rows"] += other["rows"]
            table["torch"], table["date"] = other["torch"], other["date"]
    else:
        table["torch"] = torch.__version__
        table["date"] = datetime.date.today().isoformat()
        for name in names:
            for seed in seeds:
                rows = rows_of(name, seed)
                table["rows"] = [
                    r for r in table["rows"] if (r[key], r["seed"]) != (name, seed)
                ] + rows
    table["rows"].sort(key=lambda row: tuple(row[column] for column in sort_by))
    out.parent.mkdir(parents=True, exist_ok=True)
    out.write_text(json.dumps(table, indent=1) + "\n")
