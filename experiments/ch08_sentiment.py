"""Chapter 8's sentiment table: the thesis test's recipe on the UCI review sentences, writing
``results/ch08_sentiment.json``. The models, the recipe and the options are those of
``ch08_thesis.py --task sentiment`` (its docstring lists them); this script is that call, so that each
shipped results file has one script of the same name.

    python experiments/ch08_sentiment.py --minilm DIR [--kinds ...] [--out FILE] [--merge A B ...]
"""

from __future__ import annotations

import sys

from ch08_thesis import main as thesis


def main(argv: list[str] | None = None) -> dict:
    return thesis(["--task", "sentiment", *(sys.argv[1:] if argv is None else argv)])


if __name__ == "__main__":
    main()
