"""Chapter 6's control runs, full length: the Transformer with one thing of its recipe changed.

Each run trains the chapter's model with the chapter's own code for the chapter's 5 epochs (470 steps
of 64 dates, seed 0, one thread), changing one thing: ``no_warmup`` holds the rate at the schedule's
peak for the first 50 steps (then the same 1/sqrt(step) decay), ``no_smoothing`` sets the label
smoothing to 0. The warm-up experiment's pre-LN arms put each LayerNorm before its sub-layer
(``nn.Transformer(norm_first=True)``, behind the chapter model's embeddings and generator):
``pre_ln`` with the chapter's schedule, ``pre_ln_no_warmup`` with ``no_warmup``'s. Further
controls: ``constant_peak`` (the rate held at the schedule's peak,
8.84e-3, all along), ``constant_1e-3``, ``one_layer`` (``num_layers=1``) and ``dropout_0.1``. The code is not copied:
the script executes the chapter's cells that define the data, ``greedy_decode`` and
``train_transformer`` (found by their first lines), so the runs are the chapter's.
The chapter re-runs the first steps of each run live and asserts that its losses agree with these.
Other seeds: ``--seed 1`` (and 2) re-runs the warm-up experiment's four arms (``chapter``, the
chapter's own recipe, then ``no_warmup``, ``pre_ln``, ``pre_ln_no_warmup``) with that seed for both
the weights and the batches' order; they go under ``"seeds"`` -> ``"1"`` in the same file (the top
level holds seed 0's runs; the chapter's own seed-0 run is the lesson's live one).
Results go to ``results/ch06_controls.json`` (``--runs`` runs a part; ``--out`` elsewhere;
``--steps N`` stops each run after N steps and records only the losses, as the test does).

    python experiments/ch06_controls.py

Each run took about 30 to 40 CPU seconds on a shared 2-core machine. The first two ran in parallel,
one process each (``--out`` to two files), and were merged into one file; so were the later ones
(``pre_ln``, ``pre_ln_no_warmup`` and ``constant_peak`` in one process, the other three in one each). Each full run
records the scorer, the torch version and the date it was made, and the averaged weights' test
cross-entropy without smoothing (``test_cross_entropy``). The file was first written when the chapter
scored by greedy decoding and comparing strings (commit b44873d); re-run with the one-pass scorer, its
losses and every accuracy in it came out the same.
"""

from __future__ import annotations

import argparse
import contextlib
import io
import json
import time
import warnings
from pathlib import Path

import nbformat
import torch
from torch import nn

ROOT = Path(__file__).resolve().parents[1]
BOOK = ROOT / "book"
CHAPTER = BOOK / "06_transformer.ipynb"
OUT = BOOK / "attention_to_bert" / "results" / "ch06_controls.json"
SCORER = (
    "exact_match: one teacher-forced pass, argmax right at every target position"
    " (equal to greedy decoding; the chapter checks it on all 1000 test dates)"
)
# a line (the first, or one after the cell's imports) of each chapter cell the runs need after
# the setup cells (the install guard, then the imports and set_seed), in chapter order
CELLS = (
    "# chapter 5's attention; the stack of 6.4",  # what the layers need
    "# folded: chapter 4's positions, and checks of sizes and ids",  # what the model imports
    "# attention_to_bert/translator.py: Seq2SeqTransformer",  # the model, on the page
    "splits = date_splits(seed=0)",  # the data
    "def attend(",  # greedy decoding with a KV cache
    "# folded: make_transformer, batches",  # the model, batches, loss, scorers
    "# make_transformer, batches, loss_fn, exact_match: folded in 6.5",  # train_transformer
)


def chapter_namespace() -> dict:
    """Execute the chapter's cells that define the data and the training function."""
    cells = [c.source for c in nbformat.read(CHAPTER, as_version=4).cells if c.cell_type == "code"]
    namespace: dict = {"__name__": "chapter06"}
    import matplotlib

    # the cells' figures are drawn off screen; this process only (an environment variable would
    # reach every kernel started after it, e.g. the notebooks pytest checks next)
    matplotlib.use("Agg")
    setup_end = next((i for i, source in enumerate(cells) if "set_seed(" in source), 0)
    chosen = cells[: setup_end + 1]  # the setup cells: the install guard, imports and set_seed
    for first in CELLS:
        # the cell with a line starting so (imports may come first)
        found = [source for source in cells if source.startswith(first) or f"\n{first}" in source]
        if len(found) != 1:
            raise ValueError(f"expected one chapter cell starting {first!r}, found {len(found)}")
        chosen += found
    for source in chosen:
        with contextlib.redirect_stdout(io.StringIO()):  # the cells' own printing
            exec(compile(source, str(CHAPTER), "exec"), namespace)  # noqa: S102
    return namespace


def no_warmup_rate(step: int) -> float:
    """The chapter's schedule with its first 50 steps raised to the peak."""
    return 0.5 * 64**-0.5 * max(step, 50) ** -0.5


PEAK = 0.5 * 64**-0.5 * 50**-0.5  # the chapter's schedule at its peak, step 50
RUNS = (
    "no_warmup",
    "no_smoothing",
    "pre_ln",
    "pre_ln_no_warmup",
    "constant_peak",
    "constant_1e-3",
    "one_layer",
    "dropout_0.1",
)
# the warm-up experiment's arms, re-run with other seeds (``--seed``)
SEEDED_RUNS = ("chapter", "no_warmup", "pre_ln", "pre_ln_no_warmup")


class PreLNCore(nn.Module):
    """``nn.Transformer(norm_first=True)`` behind the ``encode``/``decode`` of the package's
    ``Transformer`` (which is post-LN only), so that ``Seq2SeqTransformer`` can run it. It returns
    no attention weights (empty lists)."""

    def __init__(self, d_model: int, num_heads: int, num_layers: int, d_ff: int) -> None:
        super().__init__()
        with warnings.catch_warnings():  # "enable_nested_tensor is True, but ... norm_first"
            warnings.simplefilter("ignore", UserWarning)
            self.core = nn.Transformer(
                d_model, num_heads, num_layers, num_layers, d_ff, dropout=0.0,
                batch_first=True, norm_first=True,
            )  # fmt: skip

    def encode(self, src, *, src_key_padding_mask=None):
        return self.core.encoder(src, src_key_padding_mask=src_key_padding_mask), []

    def decode(self, tgt, memory, **masks):
        return self.core.decoder(tgt, memory, **masks), [], []


def pre_ln(make_transformer):
    """The chapter's ``make_transformer``, with its post-LN core swapped for a pre-LN one."""

    def make(**options):
        model = make_transformer(**options)
        model.transformer = PreLNCore(64, 4, options.get("num_layers", 2), 128)
        return model

    return make


@torch.no_grad()
def greedy_no_cache(model: nn.Module, source: torch.Tensor, max_length: int) -> torch.Tensor:
    """Greedy decoding by re-running the decoder on the whole prefix (the chapter's
    ``greedy_decode_no_cache``): token ids (batch, steps), each row cut after its ``<eos>``."""
    model.eval()
    memory, _ = model.encode(source)
    prefix = torch.full((len(source), 1), model.bos_id)
    for _ in range(max_length):
        logits, _, _ = model.decode(prefix, memory, source)
        prefix = torch.cat([prefix, logits[:, -1:].argmax(dim=-1)], dim=1)
        if (prefix == model.eos_id).any(dim=1).all():
            break
    written = prefix[:, 1:]
    is_eos = (written == model.eos_id).long()
    after_eos = is_eos.cumsum(dim=1) - is_eos > 0
    return written.masked_fill(after_eos, model.pad_id)  # <pad> after <eos>


def recipe(name: str, chapter: dict) -> tuple:
    """The schedule, label smoothing and model options of run ``name``."""
    if name not in RUNS + SEEDED_RUNS:
        raise ValueError(f"run must be one of {RUNS} (e.g. 'no_warmup'), got {name!r}")
    ours = chapter["noam_schedule"](64, 50, factor=0.5)
    recipes = {
        "chapter": (ours, 0.1, {}),
        "no_warmup": (no_warmup_rate, 0.1, {}),
        "no_smoothing": (ours, 0.0, {}),
        "pre_ln": (ours, 0.1, {}),
        "pre_ln_no_warmup": (no_warmup_rate, 0.1, {}),
        "constant_peak": (lambda step: PEAK, 0.1, {}),
        "constant_1e-3": (lambda step: 1e-3, 0.1, {}),
        "one_layer": (ours, 0.1, {"num_layers": 1}),
        "dropout_0.1": (ours, 0.1, {"dropout": 0.1}),
    }
    return recipes[name]


def run(name: str, chapter: dict, steps: int | None = None, seed: int = 0) -> dict:
    """One control run, as the chapter's ``train_transformer`` does it (with ``seed``)."""
    schedule, label_smoothing, options = recipe(name, chapter)
    train = chapter["train_transformer"]
    original = chapter["make_transformer"]
    if name.startswith("pre_ln"):  # train_transformer builds its model with this name
        chapter["make_transformer"] = pre_ln(original)
    try:
        if steps is not None:
            losses = train(
                schedule, label_smoothing=label_smoothing, steps=steps, seed=seed, **options
            )
            return {"losses": [round(loss, 5) for loss in losses]}
        start = time.process_time()
        log = io.StringIO()
        with contextlib.redirect_stdout(log):
            model, losses, seconds, last, averaged = train(
                schedule, label_smoothing=label_smoothing, seed=seed, **options
            )
    finally:
        chapter["make_transformer"] = original
    print(log.getvalue(), end="")
    epoch_accuracy = [
        float(line.split("dates)")[1].split()[0]) for line in log.getvalue().splitlines()
    ]
    result = {
        "losses": [round(loss, 5) for loss in losses],
        "epoch_accuracy_200": epoch_accuracy,
        "last_accuracy": last,
        "averaged_accuracy": averaged,
        "training_cpu_seconds": round(seconds, 1),
        "run_cpu_seconds": round(time.process_time() - start, 1),
    }
    # the averaged weights' test cross-entropy without smoothing (log perplexity)
    result["test_cross_entropy"] = round(chapter["test_cross_entropy"](model), 5)
    if name in ("no_warmup", "pre_ln_no_warmup", "constant_peak"):
        # the chapter's cached decoding reads the package's layers; the pre-LN core has none
        greedy = greedy_no_cache if name.startswith("pre_ln") else chapter["greedy_decode"]
        answers = greedy(model, chapter["test_source"], max_length=12)
        result["distinct_answers"] = len({tuple(row) for row in answers.tolist()})
    return result


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--runs", nargs="+", choices=RUNS + SEEDED_RUNS, default=None)
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--steps", type=int, default=None)
    parser.add_argument("--out", type=Path, default=OUT)
    args = parser.parse_args(argv)
    chapter = chapter_namespace()
    table = json.loads(args.out.read_text()) if args.out.is_file() else {}
    if args.runs is None:
        args.runs = list(RUNS if args.seed == 0 else SEEDED_RUNS)
    for name in args.runs:
        # seed 0 at the top level, other seeds under "seeds"
        place = (
            table
            if args.seed == 0
            else table.setdefault("seeds", {}).setdefault(str(args.seed), {})
        )
        place[name] = run(name, chapter, args.steps, args.seed)
        table["seed"], table["threads"] = 0, 1
        if args.steps is None:
            place[name]["scorer"] = SCORER
            place[name]["torch"] = torch.__version__
            place[name]["date"] = time.strftime("%Y-%m-%d", time.gmtime())
        args.out.parent.mkdir(parents=True, exist_ok=True)
        args.out.write_text(json.dumps(table, indent=1) + "\n")


if __name__ == "__main__":
    main()
