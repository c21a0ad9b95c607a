"""Chapter 5's runs inside a real layer (a residual connection and a feed-forward network before the
read-out): writes ``results/ch05_layer_runs.json``. The recipe and the runs are those of
``ch05_relation_runs.py --layer`` (its docstring lists them); this script is that call, so that each
shipped results file has one script of the same name.

    python experiments/ch05_layer_runs.py [--runs N] [--out FILE]
"""

from __future__ import annotations

import sys

from ch05_relation_runs import main as relation_runs


def main(argv: list[str] | None = None) -> list[dict]:
    return relation_runs(["--layer", *(sys.argv[1:] if argv is None else argv)])


if __name__ == "__main__":
    main()
