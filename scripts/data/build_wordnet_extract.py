"""Rebuild the shipped extract of WordNet 3.0's glosses and example sentences.

WordNet 3.0 (Princeton University; the WordNet 3.0 licence, permissive with its notice kept) ships in
the Debian package ``wordnet-base`` as ``/usr/share/wordnet/data.{noun,verb,adj,adv}``. Each synset's
gloss is a definition followed by quoted example sentences::

    ... | cause to lose air pressure or collapse by piercing; "puncture an air balloon"

This script writes ``book/attention_to_bert/data/wordnet/glosses.tsv.gz``: one line per synset, the
definition then its examples, separated by tabs, in the files' order (noun, verb, adj, adv), and
copies the licence beside it.

    apt-get install wordnet-base && python scripts/data/build_wordnet_extract.py [--source DIR]
"""

from __future__ import annotations

import argparse
import gzip
import re
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
TARGET = ROOT / "book" / "attention_to_bert" / "data" / "wordnet"
PARTS = ("noun", "verb", "adj", "adv")
QUOTED = re.compile(r'"([^"]+)"')


def synset_segments(line: str) -> list[str]:
    """The definition and the example sentences of one ``data.*`` line ([] for a header line)."""
    if line.startswith("  ") or "|" not in line:
        return []
    gloss = line.split("|", 1)[1].strip()
    examples = [" ".join(e.split()) for e in QUOTED.findall(gloss)]
    definition = " ".join(QUOTED.sub("", gloss).split()).strip(" ;")
    segments = [definition] if definition else []
    return segments + [e for e in examples if e]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--source", type=Path, default=Path("/usr/share/wordnet"))
    args = parser.parse_args()
    if not args.source.is_dir():
        raise SystemExit(
            f"--source: {args.source} is not a folder (apt-get install wordnet-base provides it)"
        )
    lines = []
    for part in PARTS:
        path = args.source / f"data.{part}"
        if not path.is_file():
            raise SystemExit(f"--source: {path} is missing")
        for line in path.read_text(encoding="latin-1").splitlines():
            segments = synset_segments(line)
            if segments:
                lines.append("\t".join(segments))
    TARGET.mkdir(parents=True, exist_ok=True)
    data = ("\n".join(lines) + "\n").encode("utf-8")
    with open(TARGET / "glosses.tsv.gz", "wb") as raw:
        with gzip.GzipFile(fileobj=raw, mode="wb", mtime=0, filename="") as file:
            file.write(data)
    licence = Path("/usr/share/doc/wordnet-base/copyright")
    if licence.is_file():
        text = licence.read_text(encoding="utf-8").split("Files: debian/*")[0]
        (TARGET / "LICENSE").write_text(text, encoding="utf-8")
    words = sum(len(line.replace("\t", " ").split()) for line in lines)
    print(f"{len(lines)} synsets, {words} words -> {TARGET / 'glosses.tsv.gz'}")


if __name__ == "__main__":
    main()
