"""Chapter 5's headline comparison (Figure 5.7) over three seeds: the bare one-head model against
2, 4 and 8 heads of the same width, with the chapter's own code (``ch05_relation_runs.chapter_code``
runs the notebook's cells that define ``fit_reader``), and writes ``results/ch05_seed_runs.json``:

- 1 head at 1e-2 and 3e-2 (the two best rates of Lab 5.5's grid on seed 0), 2, 4 and 8 heads at
  1e-2, 300 steps each, data and model seeds 0, 1 and 2. Seed 0 repeats the runs the chapter
  trains live (the lab compares them); the lab picks the one head's rate per seed by its training
  accuracy (3e-2, best on seed 0, breaks down on seed 2).

15 runs of one to two seconds each on one quiet core (about three minutes on a busy one).

    python experiments/ch05_seed_runs.py             # every run
    python experiments/ch05_seed_runs.py --runs 1    # the first run only
"""

from __future__ import annotations

import argparse
import importlib.util
import json
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
OUT = ROOT / "book" / "attention_to_bert" / "results" / "ch05_seed_runs.json"
RATES = {1: (1e-2, 3e-2), 2: (1e-2,), 4: (1e-2,), 8: (1e-2,)}  # one head: Lab 5.5's best two
SEEDS = (0, 1, 2)


def sibling(name: str = "ch05_relation_runs"):
    """experiments/NAME.py as a module (by default the one with ``chapter_code`` and ``run``)."""
    path = Path(__file__).with_name(f"{name}.py")
    spec = importlib.util.spec_from_file_location(name, path)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def write(out: Path, done: list[dict]) -> list[dict]:
    """Write the runs to ``out`` as the shipped files hold them; return them."""
    out.parent.mkdir(parents=True, exist_ok=True)
    out.write_text(json.dumps({"runs": done}, indent=1) + "\n")
    return done


def plan() -> list[dict]:
    """The runs in order, as keyword arguments of ``ch05_relation_runs.run``."""
    return [
        dict(heads=h, lr=lr, seed=s, layer=False) for h in RATES for lr in RATES[h] for s in SEEDS
    ]


def main(argv: list[str] | None = None) -> list[dict]:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--runs", type=int, default=None, help="stop after this many runs")
    parser.add_argument("--out", type=Path, default=OUT, help="default: the shipped file")
    args = parser.parse_args(argv)
    if args.runs is not None and args.runs < 1:
        parser.error(f"--runs must be at least 1, got {args.runs}")
    module = sibling()
    code = module.chapter_code()
    done: list[dict] = []
    for options in plan()[: args.runs]:
        done.append(module.run(code, module.RELATIONS, steps=300, **options))
        print(json.dumps(done[-1]), flush=True)
    return write(args.out, done)


if __name__ == "__main__":
    main()
