"""Chapter 2's multi-seed tables: attention against mean pooling in the hierarchical network.

The chapter (``book/02_han.ipynb``) trains seed 0 of each model live; this script runs mean
pooling's learning-rate grid and every seed, with the chapter's data, model and training loop
(repeated here; the chapter asserts that its live seed-0 runs agree with the shipped rows within
1 point). It writes ``data/results/ch02_han.json``:

- ``mean_lr``: mean pooling (eight epochs, seed 0) with each rate of ``LEARNING_RATES``, with and
  without the sentence GRU; ``mean_lr_chosen`` is the rate with the best *training* accuracy with
  the sentence GRU, used with and without it;
- ``seeds``: attention (six epochs, learning rate 0.03) and mean pooling (eight epochs, the chosen
  rate), with (``sentence_gru``) and without the sentence GRU, seeds 0, 1, 2: training, test and
  crowded-test accuracy.

    python scripts/han_table.py       # everything: 18 trainings, about 5 minutes on 2 idle cores
    python scripts/han_table.py --no-grid --variants flat --seeds 0 --out /tmp/part.json

A run with ``--out`` naming an existing file merges its seed rows into it. ``set_seed`` fixes two
threads, as in the chapter; the numbers agree exactly on one machine and to the last digits elsewhere.
"""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path

import torch
import torch.nn.functional as F
from safetensors import safe_open
from tokenizers import Tokenizer
from torch import nn

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "book"))

from attention_to_bert import set_seed  # noqa: E402
from attention_to_bert.bert import minilm_path  # noqa: E402
from attention_to_bert.data import make_documents, sentence_splits  # noqa: E402
from attention_to_bert.han import HierarchicalAttentionNetwork  # noqa: E402
from attention_to_bert.training import train  # noqa: E402

OUT = ROOT / "book" / "attention_to_bert" / "data" / "results" / "ch02_han.json"
MAX_TOKENS = 30
EPOCHS = 6  # attention
MEAN_EPOCHS = 8  # mean pooling: more steps, so that it fits its training set
BATCH_SIZE = 100
ATTENTION_LR = 0.03
LEARNING_RATES = (0.01, 0.03, 0.1)  # the grid of mean pooling
PAD = 0


class Data:
    """The chapter's documents as padded id grids, and MiniLM's static vectors of their tokens."""

    def __init__(self) -> None:
        train_sentences, test_sentences = sentence_splits(test_share=0.3, seed=0)
        documents = {
            "train": make_documents(train_sentences, 1000, seed=1),
            "test": make_documents(test_sentences, 600, seed=2),
            "crowded": make_documents(
                test_sentences, 300, min_sentences=12, max_sentences=16, seed=3
            ),
        }
        folder = minilm_path()
        tokenizer = Tokenizer.from_file(str(folder / "tokenizer.json"))
        tokenizer.no_padding()
        tokenizer.no_truncation()
        with safe_open(str(folder / "model.safetensors"), framework="pt") as file:
            table = file.get_tensor("embeddings.word_embeddings.weight")
        sentences = sorted(
            {s for side in (train_sentences, test_sentences) for k in side.values() for s, _ in k}
        )
        encodings = tokenizer.encode_batch(sentences, add_special_tokens=False)
        ids = {s: e.ids[:MAX_TOKENS] for s, e in zip(sentences, encodings, strict=True)}
        used = sorted({i for row in ids.values() for i in row})
        local = {minilm_id: row + 1 for row, minilm_id in enumerate(used)}
        self.vectors = torch.cat([torch.zeros(1, table.shape[1]), table[used]])
        self.batches = {name: self.encode(docs, ids, local) for name, docs in documents.items()}

    @staticmethod
    def encode(documents, ids, local) -> dict[str, torch.Tensor]:
        """The chapter's ``encode_documents``: word ids, word padding mask, labels."""
        max_sentences = max(len(d.sentences) for d in documents)
        max_words = max(len(ids[s]) for d in documents for s in d.sentences)
        word_ids = torch.full((len(documents), max_sentences, max_words), PAD, dtype=torch.long)
        for row, document in enumerate(documents):
            for column, sentence in enumerate(document.sentences):
                row_ids = [local[i] for i in ids[sentence]]
                word_ids[row, column, : len(row_ids)] = torch.tensor(row_ids)
        labels = torch.tensor([d.label for d in documents])
        return {"word_ids": word_ids, "mask": word_ids == PAD, "labels": labels}


class Unchanged(nn.Module):
    """In place of the sentence GRU: the sentence vectors pass unchanged."""

    def forward(self, inputs: torch.Tensor, padding_mask: torch.Tensor) -> torch.Tensor:
        return inputs


def make_model(data: Data, seed: int, sentence_gru: bool, pooling: str) -> nn.Module:
    """The chapter's ``make_model``: a HAN on MiniLM's frozen static vectors."""
    set_seed(seed)
    model = HierarchicalAttentionNetwork(
        len(data.vectors),
        num_classes=2,
        embedding_size=data.vectors.shape[1],
        hidden_size=16,
        attention_size=32,
        pad_id=PAD,
        pooling=pooling,
    )
    model.embedding = nn.Embedding.from_pretrained(data.vectors, freeze=True, padding_idx=PAD)
    if not sentence_gru:
        model.sentence_encoder = Unchanged()
    return model


def accuracy(model: nn.Module, batch: dict[str, torch.Tensor]) -> float:
    """The share of documents whose label the model predicts."""
    model.eval()
    with torch.no_grad():
        logits = model(batch["word_ids"], batch["mask"]).logits
    return (logits.argmax(-1) == batch["labels"]).float().mean().item()


def fit(
    model: nn.Module, data: Data, learning_rate: float, seed: int, epochs: int
) -> dict[str, float]:
    """The chapter's ``fit`` (Adam, batches drawn with ``seed``); the accuracies after training."""
    documents = data.batches["train"]
    order = torch.Generator().manual_seed(seed)

    def batches():
        shuffled = torch.randperm(len(documents["labels"]), generator=order)
        for index in shuffled.split(BATCH_SIZE):
            yield {name: tensor[index] for name, tensor in documents.items()}

    def loss_fn(model, batch):
        logits = model(batch["word_ids"], batch["mask"]).logits
        return F.cross_entropy(logits, batch["labels"])

    parameters = [p for p in model.parameters() if p.requires_grad]
    optimizer = torch.optim.Adam(parameters, lr=learning_rate)
    train(model, batches, loss_fn, optimizer, epochs=epochs)
    return {name: round(accuracy(model, batch), 4) for name, batch in data.batches.items()}


def run(seeds: list[int], variants: list[str], grid: bool, shipped: dict) -> dict:
    """The learning-rate grid of mean pooling (if ``grid``) and the seed rows of ``variants``."""
    data = Data()
    table: dict = {"batch_size": BATCH_SIZE, "attention_lr": ATTENTION_LR, "epochs": EPOCHS}
    table["mean_epochs"] = MEAN_EPOCHS
    if grid:
        table["mean_lr"] = []
        for sentence_gru in (True, False):
            for learning_rate in LEARNING_RATES:
                model = make_model(data, 0, sentence_gru, "mean")
                row = fit(model, data, learning_rate, seed=0, epochs=MEAN_EPOCHS)
                row.update(sentence_gru=sentence_gru, learning_rate=learning_rate)
                print(row, flush=True)
                table["mean_lr"].append(row)
    else:
        table["mean_lr"] = shipped["mean_lr"]
    # the rate that fits the training set best, with the sentence GRU; used with and without it
    rows = [r for r in table["mean_lr"] if r["sentence_gru"]]
    table["mean_lr_chosen"] = max(rows, key=lambda r: r["train"])["learning_rate"]
    table["seeds"] = []
    for variant in variants:
        for seed in seeds:
            for name, learning_rate, epochs in [
                ("attention", ATTENTION_LR, EPOCHS),
                ("mean", table["mean_lr_chosen"], MEAN_EPOCHS),
            ]:
                model = make_model(data, seed, variant == "gru", name)
                row = {"model": name, "sentence_gru": variant == "gru", "seed": seed}
                row.update(learning_rate=learning_rate, epochs=epochs)
                row.update(fit(model, data, learning_rate, seed, epochs))
                print(row, flush=True)
                table["seeds"].append(row)
    return table


def key(row: dict) -> tuple:
    return row["model"], row["sentence_gru"], row["seed"]


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--seeds", type=int, nargs="+", default=[0, 1, 2])
    parser.add_argument("--variants", nargs="+", choices=("flat", "gru"), default=["flat", "gru"])
    parser.add_argument(
        "--no-grid", action="store_true", help="take the grid from the shipped file"
    )
    parser.add_argument("--out", type=Path, default=OUT)
    args = parser.parse_args(argv)
    shipped = json.loads(OUT.read_text()) if OUT.is_file() else {}
    table = run(args.seeds, args.variants, grid=not args.no_grid, shipped=shipped)
    if args.out.is_file():  # a part: merge into what is there
        old = json.loads(args.out.read_text())
        new = {key(r) for r in table["seeds"]}
        table["seeds"] = [r for r in old.get("seeds", []) if key(r) not in new] + table["seeds"]
        table["seeds"].sort(key=lambda r: (not r["sentence_gru"], r["seed"], r["model"]))
    args.out.parent.mkdir(parents=True, exist_ok=True)
    args.out.write_text(json.dumps(table, indent=1) + "\n")


if __name__ == "__main__":
    main()
