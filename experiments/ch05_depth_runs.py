"""Chapter 5's deeper baseline: two layers of one head against one layer of four heads.

The lesson's rival to four heads is one head of the same width in one layer. A reader may object that
one head could do the four relations in two steps, if it had two layers. This script trains that
model: the lesson's ``RelationReader`` with ``layer=True`` (a residual connection, post-LN and a
feed-forward network of width 128 after the attention), stacked twice, each layer with **one** head of
32 (``TwoLayerReader``), with the lesson's own loop (``fit_reader``, executed from the notebook as
``ch05_relation_runs.py`` does). It writes ``results/ch05_depth_runs.json``:

- two layers of one head at 3e-3, 1e-2 and 3e-2, each trained until its training accuracy plateaus
  (rounds of 300 steps until the mean training accuracy gains less than 0.005 over three rounds, at
  most 6,000 steps), seed 0;
- at the best of them (by mean *training* accuracy), seeds 1 and 2, and seed 0 for the four heads'
  budget, 300 steps.

The four heads in one layer, for comparison, are ``ch05_layer_runs.json``'s (1.00 on every relation
in 300 steps, three seeds). Each run takes up to about a minute on one core.

    python experiments/ch05_depth_runs.py             # every run
    python experiments/ch05_depth_runs.py --runs 1    # the first run only (what the test compares)
"""

from __future__ import annotations

import argparse
import json
from pathlib import Path

from ch05_relation_runs import RELATIONS, chapter_code

OUT = Path(__file__).resolve().parents[1] / "book" / "attention_to_bert" / "results"
OUT = OUT / "ch05_depth_runs.json"
GRID = (3e-3, 1e-2, 3e-2)


def two_layer_reader(code: dict) -> type:
    """The lesson's ``RelationReader`` (``layer=True``) with a second layer of the same form."""
    base = code["RelationReader"]
    nn = code["nn"]
    vocab_size = code["VOCAB_SIZE"]
    attention_class = code["MultiHeadAttention"]

    class TwoLayerReader(base):
        def __init__(self, num_heads, relations=RELATIONS, d_model=32, layer=True):
            super().__init__(num_heads, relations, d_model, layer=True)
            self.attention_2 = attention_class(d_model, num_heads)
            self.norm_3 = nn.LayerNorm(d_model)
            self.feed_forward_2 = nn.Sequential(
                nn.Linear(d_model, 4 * d_model), nn.ReLU(), nn.Linear(4 * d_model, d_model)
            )
            self.norm_4 = nn.LayerNorm(d_model)

        def forward(self, digits):
            x = self.position(self.embed(digits))
            attended, _ = self.attention(x, x, x)
            h = self.norm_1(x + attended)
            h = self.norm_2(h + self.feed_forward(h))
            attended, weights = self.attention_2(h, h, h)
            h = self.norm_3(h + attended)
            h = self.norm_4(h + self.feed_forward_2(h))
            logits = self.readout(h).view(*h.shape[:2], len(self.columns), vocab_size)
            return logits, weights

    return TwoLayerReader


def run(code: dict, lr: float, seed: int, until_plateau: bool = True) -> dict:
    """One run of two layers of one head (until it plateaus, or 300 steps), as the JSON stores it."""
    code["RelationReader"] = two_layer_reader(code)  # what fit_reader builds
    model, train, test = code["fit_reader"](1, RELATIONS, lr, seed, until_plateau=until_plateau)
    return {
        "layers": 2,
        "heads": 1,
        "relations": list(RELATIONS),
        "lr": lr,
        "seed": seed,
        "until_plateau": until_plateau,
        "train": [round(a, 4) for a in train.tolist()],
        "test": [round(a, 4) for a in test.tolist()],
        "trained_steps": int(model.steps),
        "parameters": sum(p.numel() for p in model.parameters()),
    }


def main(argv: list[str] | None = None) -> list[dict]:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--runs", type=int, default=None, help="stop after this many runs")
    parser.add_argument("--out", type=Path, default=OUT, help="default: the shipped file")
    args = parser.parse_args(argv)
    if args.runs is not None and args.runs < 1:
        parser.error(f"--runs must be at least 1, got {args.runs}")
    code = chapter_code()
    done: list[dict] = []
    plan = [(lr, 0) for lr in GRID] + ["tuned seeds"]
    for item in plan:
        if item == "tuned seeds":
            best = max(done, key=lambda r: sum(r["train"]) / len(r["train"]))["lr"]
            items = [(best, 1, True), (best, 2, True), (best, 0, False)]
        else:
            items = [(*item, True)]
        for lr, seed, until_plateau in items:
            done.append(run(code, lr, seed, until_plateau))
            print(json.dumps(done[-1]), flush=True)
        if args.runs is not None and len(done) >= args.runs:
            done = done[: args.runs]
            break
    args.out.parent.mkdir(parents=True, exist_ok=True)
    args.out.write_text(json.dumps({"runs": done}, indent=1) + "\n")
    return done


if __name__ == "__main__":
    main()
