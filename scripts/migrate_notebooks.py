"""Rewrite the notebooks' call sites of package functions whose signature changed; idempotent.

    python scripts/migrate_notebooks.py [NOTEBOOK ...]   # default: every notebook in book/

Each rule is a regular expression applied to the notebook file's text (the JSON, so nothing else in
the file changes); a migrated notebook no longer matches, so running the script again, after a merge
for instance, changes nothing. It prints what it rewrote. Outputs are unchanged by these rewrites.
"""

from __future__ import annotations

import re
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]

RULES = [
    # EncoderLayer.forward takes torch's names, by keyword: src_mask and src_key_padding_mask
    # (it took key_padding_mask and attn_mask); our encoder layers are named *encoder_layer*.
    (
        re.compile(r"\b((?<!torch_)\w*encoder_layer\(\w+, )key_padding_mask="),
        r"\1src_key_padding_mask=",
    ),
    (
        re.compile(
            r"\b((?<!torch_)\w*encoder_layer\(\w+, (?:src_key_padding_mask=\w+, )?)attn_mask="
        ),
        r"\1src_mask=",
    ),
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


def main(arguments: list[str]) -> None:
    paths = [Path(a) for a in arguments] or sorted((ROOT / "book").glob("*.ipynb"))
    for path in paths:
        count = migrate(path)
        if count:
            print(f"{path.name}: {count} call site(s) rewritten")


if __name__ == "__main__":
    main(sys.argv[1:])
