"""Build the example file of ``attention_to_bert.finetune``: ``data/finetune/reviews.csv``.

300 of the UCI review sentences the package ships (``data/sentiment/``, CC BY 4.0), 100 from each
source, drawn with seed 0, labelled by where they were written: ``film`` (IMDb), ``restaurant``
(Yelp) or ``product`` (Amazon). A task the book does not teach, with word labels and three classes,
small enough to fine-tune in about a minute on 2 CPU cores.

    python scripts/data/build_finetune_example.py [--out FILE]
"""

from __future__ import annotations

import argparse
import csv
import io
import random
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]

from attention_to_bert.data.sentiment import load_sentences  # noqa: E402

OUT = ROOT / "book" / "attention_to_bert" / "data" / "finetune" / "reviews.csv"
LABELS = {"imdb": "film", "yelp": "restaurant", "amazon": "product"}
PER_SOURCE = 100


def example_csv() -> str:
    """The file's text: a header, then the rows shuffled with seed 0."""
    rows = []
    for source, label in LABELS.items():
        sentences = [s for s, _ in load_sentences(source)]
        rows += [(s, label) for s in random.Random(0).sample(sentences, PER_SOURCE)]
    random.Random(0).shuffle(rows)
    buffer = io.StringIO(newline="")
    writer = csv.writer(buffer, lineterminator="\n")
    writer.writerow(["text", "label"])
    writer.writerows(rows)
    return buffer.getvalue()


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--out", type=Path, default=OUT)
    args = parser.parse_args(argv)
    args.out.parent.mkdir(parents=True, exist_ok=True)
    args.out.write_text(example_csv(), encoding="utf-8")


if __name__ == "__main__":
    main()
