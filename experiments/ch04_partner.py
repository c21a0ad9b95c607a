"""Chapter 4's partner task: one self-attention layer against models with longer paths, over three seeds.

Each sequence holds 8 letters (of 20), each twice, in a random order; every token carries a random
digit; the target of each token is the digit of its partner (the other copy of its letter). The data
are the chapter's: 4000 training sequences (seed 1), 1000 test (seed 2), 1000 validation (seed 3).

Models (letter + digit embeddings of width 32 in every model):

- ``attention``: the chapter's ``PartnerFinder`` (no positions, one single-head self-attention
  layer, a linear read-out): any token reaches any other in one step.
- ``mlp``: the chapter's ``WholeSequenceMLP`` (all 16 tokens side by side, one hidden layer of 256):
  also one step from any token to any other, but no comparison shared between positions.
- ``bigru``: a bidirectional GRU like chapter 3's encoder (64 units a direction; chapter 3's had
  32), and a linear read-out per token: a signal travels up to 15 steps.
- ``cnn``: four convolutions of width 3 (64 channels, ReLU, residual), dilations 1, 2, 4, 8, so that
  every token sees all 16; a signal crosses the sequence in up to 4 layers.

Three ablations of the attention layer keep its embeddings, value projection and read-out (and its
lack of positions) and change only how the score ``e_ij`` of a pair is made:

- ``no_projection``: ``e_ij = x_i . x_j / sqrt(d)``, no ``W^Q``, ``W^K`` (the same vector asks and
  answers);
- ``pair_table``: ``e_ij = S[i, j]``, one learned number per pair of positions (no content);
- ``pair_bilinear``: ``e_ij = x_i^T W_ij x_j / sqrt(d)``, a comparison of the contents learned
  separately for each pair of positions (no projection shared by the pairs).

Every model trains as the chapter's does: AdamW (weight decay 0 unless swept), batches of 64, gradient
norm clipped at 1. Budgets:

- ``equal``: the attention model's data and steps, 2 epochs of the 4000 sequences (126 steps); each
  baseline at each of the rates 1e-3, 3e-3 and 1e-2 (the MLP also with weight decay 0 and 1), the
  attention model at its rate 1e-2, each ablation at each of the rates 1e-3, 3e-3 and 1e-2.
- ``long``: each baseline for 50 epochs (3150 steps, 25 times the attention model's) at the setting
  with the best validation accuracy after 10 epochs (same grid), on the fixed 4000 sequences; rows
  after 2, 10, 20 and 50 epochs.
- ``fresh``: the same 50 epochs and setting, but every epoch draws 4000 new sequences (200,000 in all),
  so nothing can be learned by heart.

Rows hold the accuracy per token on the training sequences (for ``fresh``: that epoch's), the
validation and the test sequences. Results go to ``results/ch04_partner.json``.

    python experiments/ch04_partner.py --models attention mlp bigru cnn --seeds 0 1 2
    python experiments/ch04_partner.py --models no_projection pair_table pair_bilinear
"""

from __future__ import annotations

import argparse
import functools
import random
import time
from pathlib import Path

import results_table
import torch
import torch.nn.functional as F
from torch import nn

from attention_to_bert import set_seed
from attention_to_bert.attention import attention

ROOT = Path(__file__).resolve().parents[1]

OUT = ROOT / "book" / "attention_to_bert" / "results" / "ch04_partner.json"
PAIRS, LETTERS, DIGITS = 8, 20, 10
LENGTH = 2 * PAIRS
LRS = (1e-3, 3e-3, 1e-2)
CHECKPOINTS = (2, 10, 20, 50)


def partner_sequences(
    num_sequences: int, num_pairs: int, num_symbols: int, num_digits: int, seed: int
):
    """The chapter's generator: (letters, digits, partners), each (num_sequences, 2 * num_pairs)."""
    rng = random.Random(seed)
    length = 2 * num_pairs
    letters = torch.empty(num_sequences, length, dtype=torch.long)
    partners = torch.empty(num_sequences, length, dtype=torch.long)
    digits = torch.empty(num_sequences, length, dtype=torch.long)
    for row in range(num_sequences):
        symbols = rng.sample(range(num_symbols), num_pairs)
        order = list(range(length))
        rng.shuffle(order)
        for k, symbol in enumerate(symbols):
            first, second = order[2 * k], order[2 * k + 1]
            letters[row, first] = letters[row, second] = symbol
            partners[row, first], partners[row, second] = second, first
        digits[row] = torch.tensor([rng.randrange(num_digits) for _ in range(length)])
    return letters, digits, partners


def task(count: int, seed: int) -> tuple[torch.Tensor, torch.Tensor, torch.Tensor]:
    """(letters, digits, targets) of ``count`` sequences drawn with ``seed``."""
    letters, digits, partners = partner_sequences(count, PAIRS, LETTERS, DIGITS, seed)
    return letters, digits, digits.gather(1, partners)


class PartnerFinder(nn.Module):
    """The chapter's model: embeddings (no positions) -> one self-attention layer -> a read-out."""

    def __init__(self, d_model: int = 32) -> None:
        super().__init__()
        self.letter_embedding = nn.Embedding(LETTERS, d_model)
        self.digit_embedding = nn.Embedding(DIGITS, d_model)
        self.w_q = nn.Linear(d_model, d_model, bias=False)
        self.w_k = nn.Linear(d_model, d_model, bias=False)
        self.w_v = nn.Linear(d_model, d_model, bias=False)
        self.classifier = nn.Linear(d_model, DIGITS)

    def forward(self, letters, digits):
        x = self.letter_embedding(letters) + self.digit_embedding(digits)
        output, weights = attention(self.w_q(x), self.w_k(x), self.w_v(x))
        return self.classifier(output), weights


class PairScoreAblation(nn.Module):
    """The chapter's layer with another score ``e_ij`` (``kind``): ``no_projection`` (x_i . x_j),
    ``pair_table`` (a learned number per pair of positions) or ``pair_bilinear`` (x_i^T W_ij x_j,
    a learned matrix per pair of positions); the values, read-out and embeddings are the layer's."""

    def __init__(self, kind: str, d_model: int = 32) -> None:
        super().__init__()
        self.kind = kind
        self.letter_embedding = nn.Embedding(LETTERS, d_model)
        self.digit_embedding = nn.Embedding(DIGITS, d_model)
        if kind == "pair_table":
            self.table = nn.Parameter(torch.zeros(LENGTH, LENGTH))
        elif kind == "pair_bilinear":
            start = torch.randn(LENGTH, LENGTH, d_model, d_model) / d_model**0.5
            self.pair_matrices = nn.Parameter(start)
        self.w_v = nn.Linear(d_model, d_model, bias=False)
        self.classifier = nn.Linear(d_model, DIGITS)

    def forward(self, letters, digits):
        x = self.letter_embedding(letters) + self.digit_embedding(digits)  # (b, n, d)
        if self.kind == "no_projection":
            scores = x @ x.mT / x.shape[-1] ** 0.5
        elif self.kind == "pair_table":
            scores = self.table.expand(x.shape[0], -1, -1)
        else:  # one matrix per (i, j): e_ij = x_i^T W_ij x_j
            scores = torch.einsum("bid,ijde,bje->bij", x, self.pair_matrices, x)
            scores = scores / x.shape[-1] ** 0.5
        weights = torch.softmax(scores, dim=-1)
        return self.classifier(weights @ self.w_v(x)), weights


class WholeSequenceMLP(nn.Module):
    """The chapter's MLP: all tokens' embeddings side by side -> 256 hidden -> 16 x 10 logits."""

    def __init__(self, d_model: int = 32, hidden: int = 256) -> None:
        super().__init__()
        self.letter_embedding = nn.Embedding(LETTERS, d_model)
        self.digit_embedding = nn.Embedding(DIGITS, d_model)
        self.mlp = nn.Sequential(
            nn.Flatten(),
            nn.Linear(LENGTH * d_model, hidden),
            nn.ReLU(),
            nn.Linear(hidden, LENGTH * DIGITS),
            nn.Unflatten(1, (LENGTH, DIGITS)),
        )

    def forward(self, letters, digits):
        x = self.letter_embedding(letters) + self.digit_embedding(digits)
        return self.mlp(x), None


class BiGRUTagger(nn.Module):
    """Chapter 3's encoder (a bidirectional GRU) with a read-out per token."""

    def __init__(self, d_model: int = 32, hidden: int = 64) -> None:
        super().__init__()
        self.letter_embedding = nn.Embedding(LETTERS, d_model)
        self.digit_embedding = nn.Embedding(DIGITS, d_model)
        self.rnn = nn.GRU(d_model, hidden, batch_first=True, bidirectional=True)
        self.classifier = nn.Linear(2 * hidden, DIGITS)

    def forward(self, letters, digits):
        x = self.letter_embedding(letters) + self.digit_embedding(digits)
        outputs, _ = self.rnn(x)
        return self.classifier(outputs), None


class DilatedCNN(nn.Module):
    """Four residual convolutions of width 3, dilations 1, 2, 4, 8: each token sees all 16."""

    def __init__(self, d_model: int = 32, channels: int = 64) -> None:
        super().__init__()
        self.letter_embedding = nn.Embedding(LETTERS, d_model)
        self.digit_embedding = nn.Embedding(DIGITS, d_model)
        self.inp = nn.Conv1d(d_model, channels, 1)
        self.convs = nn.ModuleList(
            nn.Conv1d(channels, channels, 3, padding=d, dilation=d) for d in (1, 2, 4, 8)
        )
        self.classifier = nn.Linear(channels, DIGITS)

    def forward(self, letters, digits):
        x = self.letter_embedding(letters) + self.digit_embedding(digits)
        h = self.inp(x.transpose(1, 2))
        for conv in self.convs:
            h = h + torch.relu(conv(h))
        return self.classifier(h.transpose(1, 2)), None


ABLATIONS = ("no_projection", "pair_table", "pair_bilinear")
MODELS = {
    "attention": PartnerFinder,
    **{kind: functools.partial(PairScoreAblation, kind) for kind in ABLATIONS},
    "mlp": WholeSequenceMLP,
    "bigru": BiGRUTagger,
    "cnn": DilatedCNN,
}


def accuracy(model: nn.Module, data) -> float:
    """Accuracy per token (the share of tokens whose partner's digit is predicted)."""
    letters, digits, targets = data
    model.eval()
    with torch.no_grad():
        logits, _ = model(letters, digits)
    return round((logits.argmax(-1) == targets).float().mean().item(), 4)


def run(
    name: str,
    lr: float,
    decay: float,
    epochs: int,
    seed: int,
    fresh: bool = False,
    checkpoints: tuple[int, ...] = (),
) -> list[dict]:
    """Train one model; a row after each epoch in ``checkpoints`` (and after the last)."""
    train_data = task(4000, 1)
    sets = {"validation": task(1000, 3), "test": task(1000, 2)}
    set_seed(seed, num_threads=1)
    model = MODELS[name]()
    optimizer = torch.optim.AdamW(model.parameters(), lr=lr, weight_decay=decay)
    generator = torch.Generator().manual_seed(seed)
    rows, start = [], time.process_time()
    for epoch in range(1, epochs + 1):
        data = task(4000, 1_000_000 * (seed + 1) + epoch) if fresh else train_data
        letters, digits, targets = data
        model.train()
        order = torch.randperm(len(letters), generator=generator)
        for begin in range(0, len(order), 64):
            index = order[begin : begin + 64]
            logits, _ = model(letters[index], digits[index])
            loss = F.cross_entropy(logits.flatten(0, 1), targets[index].flatten())
            optimizer.zero_grad()
            loss.backward()
            nn.utils.clip_grad_norm_(model.parameters(), 1.0)
            optimizer.step()
        if epoch in checkpoints or epoch == epochs:
            row = {
                "model": name,
                "data": "fresh" if fresh else "fixed",
                "lr": lr,
                "weight_decay": decay,
                "epochs": epoch,
                "steps": epoch * len(range(0, 4000, 64)),
                "seed": seed,
                "parameters": sum(p.numel() for p in model.parameters()),
                "training": accuracy(model, data),
            }
            row.update({k: accuracy(model, v) for k, v in sets.items()})
            row["cpu_seconds"] = round(time.process_time() - start, 1)
            rows.append(row)
    print(*(f"{k}={v}" for k, v in rows[-1].items()), flush=True)
    return rows


def model_rows(name: str, seed: int) -> list[dict]:
    """Every row of one model and seed."""
    if name == "attention":
        return run("attention", 1e-2, 0.0, 2, seed)
    if name in ABLATIONS:  # the equal budget only, at each rate
        return [dict(r, budget="equal") for lr in LRS for r in run(name, lr, 0.0, 2, seed)]
    grid = [(lr, decay) for lr in LRS for decay in ((0.0, 1.0) if name == "mlp" else (0.0,))]
    rows = []
    for lr, decay in grid:
        rows += [dict(r, budget="equal") for r in run(name, lr, decay, 2, seed)]
    sweep = [run(name, lr, decay, 10, seed)[0] for lr, decay in grid]
    best = max(sweep, key=lambda r: r["validation"])
    rows += [dict(r, budget="sweep10") for r in sweep]
    for fresh in (False, True):
        rows += [
            dict(r, budget="long")
            for r in run(name, best["lr"], best["weight_decay"], 50, seed, fresh, CHECKPOINTS)
        ]
    return rows


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--models", nargs="+", choices=tuple(MODELS), default=list(MODELS))
    parser.add_argument("--seeds", type=int, nargs="+", default=[0, 1, 2])
    parser.add_argument("--out", type=Path, default=OUT)
    parser.add_argument("--merge", type=Path, nargs="*", help="merge these files into --out")
    args = parser.parse_args(argv)
    sort_by = ("model", "seed", "data", "lr", "epochs")
    results_table.update(
        args.out, args.merge, "model", args.models, args.seeds, model_rows, sort_by
    )


if __name__ == "__main__":
    main()
