"""Chapter 2's multi-seed tables: attention against pooling without attention in the hierarchical network.

The lesson (``book/02_han.ipynb``) draws its Figure 2.3 from these rows; its lab
(``book/labs/02_han_lab.ipynb``) reads every table and retrains seed 0 of attention and mean pooling
live. This script runs the learning-rate grids and every seed, with the chapter's data, model and
training loop (repeated here; the lab asserts that its live seed-0 runs agree with the shipped rows
within 1 point). It writes ``results/ch02_han.json``:

- ``mean_lr``: mean pooling (eight epochs, seed 0) with each rate of ``LEARNING_RATES``, with and
  without the sentence GRU; ``mean_lr_chosen`` is the rate with the best *training* accuracy with
  the sentence GRU, used with and without it;
- ``validation``: every model of ``VALIDATED`` trained on 800 documents made from 80 % of the
  training sentences, with each rate of ``LEARNING_RATES`` (seed 0), and its accuracy on 300
  validation documents made from the other 20 % after every epoch (``curve``);
  ``validation_chosen`` is each model's rate with the best validation accuracy at its own number of
  epochs (attention: six, the others: eight). The test documents play no part in it;
- ``seeds``: seeds 0, 1, 2 of each model, with (``sentence_gru``) and without the sentence GRU:
  training, test and crowded-test accuracy. ``attention`` (six epochs, learning rate 0.03, set by
  hand) and ``mean`` (eight epochs, ``mean_lr_chosen``) have the same pooling at both levels;
  ``attention-val`` is ``attention`` at the rate the validation split chose; ``max`` is the paper's
  HN-MAX (max pooling at both levels); ``att+mean`` has word attention and a sentence mean,
  ``mean+att`` a word mean and sentence attention (both without the sentence GRU only); and
  ``ceiling`` is the word level alone (no sentence GRU) trained and tested on each document's film
  sentence alone. All but ``attention`` and ``mean`` take their rate from ``validation_chosen``;
  ``max``, ``att+mean`` and ``mean+att`` train eight epochs, ``ceiling`` and ``attention-val``
  six. Rows of models with sentence weights also hold ``top`` and ``top_crowded``, the share of
  documents whose largest sentence weight is on the film sentence. The ``attention`` and ``mean``
  rows also hold ``probe``'s columns, measured on each trained model's own sentence states (the
  sentence GRU's outputs, or the sentence vectors where there is none): the weight on the film
  sentence, the off-topic states' votes, their cosine similarity to the film sentence's state, and
  the test accuracy with the sentence attention swapped for a plain mean.

    python experiments/ch02_han.py       # everything: 66 trainings, about 10 minutes on 2 idle cores
    python experiments/ch02_han.py --no-grid --no-validation --models max --variants flat --seeds 0 \\
        --out /tmp/part.json
    python experiments/ch02_han.py --no-grid --no-validation --models attention mean  # 12 rows, 6 min

The shipped validation, ``max``, ``att+mean``, ``mean+att``, ``ceiling`` and ``attention-val`` rows
were computed by this script's functions in parallel processes (two threads each) on a 16-core
machine with torch 2.11 (50 trainings in about 95 s); there the shipped ``attention`` and ``mean``
seed-0 rows without the sentence GRU came out within one test document of the shipped values.
The ``attention`` and ``mean`` rows (with ``probe``'s columns) were rerun with the second command
above on 2 busy cores with torch 2.13 in 5 min 48 s; every accuracy came out as shipped before.

A run with ``--out`` naming an existing file merges its seed rows into it (and keeps its grids when
``--no-grid`` or ``--no-validation`` skip them). ``set_seed`` fixes two threads, as in the chapter;
the numbers agree exactly on one machine and to the last digits elsewhere.
"""

from __future__ import annotations

import argparse
import json
import random
from pathlib import Path

import torch
import torch.nn.functional as F
from safetensors import safe_open
from tokenizers import Tokenizer
from torch import nn

from attention_to_bert import set_seed
from attention_to_bert.bert import minilm_path
from attention_to_bert.data import make_documents, sentence_splits
from attention_to_bert.han import HierarchicalAttentionNetwork, MeanPooling
from attention_to_bert.training import train

ROOT = Path(__file__).resolve().parents[1]

OUT = ROOT / "book" / "attention_to_bert" / "results" / "ch02_han.json"
MAX_TOKENS = 30
EPOCHS = 6  # attention
MEAN_EPOCHS = 8  # mean pooling: more steps, so that it fits its training set
BATCH_SIZE = 100
ATTENTION_LR = 0.03
LEARNING_RATES = (0.01, 0.03, 0.1)  # the grids
PAD = 0
# model -> (word pooling, sentence pooling); "ceiling" is "attention" on the film sentence alone
MODELS = {
    "attention": ("attention", "attention"),
    "mean": ("mean", "mean"),
    "max": ("max", "max"),
    "att+mean": ("attention", "mean"),
    "mean+att": ("mean", "attention"),
    "ceiling": ("attention", "attention"),
    "attention-val": ("attention", "attention"),  # at the rate the validation split chose
}
FLAT_ONLY = ("att+mean", "mean+att", "ceiling")  # run without the sentence GRU only
# (model, sentence_gru) pairs whose learning rate the validation split chooses
VALIDATED = [(m, True) for m in MODELS if m not in FLAT_ONLY] + [(m, False) for m in MODELS]
VALIDATED = [(m, gru) for m, gru in VALIDATED if m != "attention-val"]
SAME_AS_ATTENTION = ("ceiling", "attention-val")  # built as "attention"
PROBED = ("attention", "mean")  # rows that also hold ``probe``'s columns
VALIDATION_SHARE = 0.2  # of the training sentences, held out for the validation documents


class Data:
    """The chapter's documents as padded id grids, and MiniLM's static vectors of their tokens."""

    def __init__(self, validation: bool = False) -> None:
        train_sentences, test_sentences = sentence_splits(test_share=0.3, seed=0)
        if validation:  # the test sentences play no part: 80 % to train, 20 % to validate
            part, held_out = holdout(train_sentences, VALIDATION_SHARE, seed=4)
            documents = {
                "train": make_documents(part, 800, seed=1),
                "validation": make_documents(held_out, 300, seed=5),
            }
        else:
            documents = {
                "train": make_documents(train_sentences, 1000, seed=1),
                "test": make_documents(test_sentences, 600, seed=2),
                "crowded": make_documents(
                    test_sentences, 300, min_sentences=12, max_sentences=16, seed=3
                ),
            }
        self.documents = documents
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
        # the film sentence of each document alone: documents of one sentence (the ceiling)
        self.film_batches = {
            name: film_only(batch, documents[name]) for name, batch in self.batches.items()
        }

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


def holdout(sentences: dict, share: float, seed: int) -> tuple[dict, dict]:
    """Split ``{"film": [...], "other": [...]}`` into a part and a held-out ``share`` of each kind."""
    rng = random.Random(seed)
    part, held_out = {}, {}
    for kind, pairs in sentences.items():
        pairs = pairs[:]
        rng.shuffle(pairs)
        cut = round(share * len(pairs))
        held_out[kind], part[kind] = pairs[:cut], pairs[cut:]
    return part, held_out


def film_only(batch: dict[str, torch.Tensor], documents) -> dict[str, torch.Tensor]:
    """The batch cut to the film sentence of each document: ``(documents, 1, words)``."""
    rows = torch.arange(len(documents))
    deciding = torch.tensor([d.deciding for d in documents])
    word_ids = batch["word_ids"][rows, deciding][:, None, :]
    return {"word_ids": word_ids, "mask": word_ids == PAD, "labels": batch["labels"]}


def film_positions(documents) -> torch.Tensor:
    """Where the film sentence of each document is."""
    return torch.tensor([d.deciding for d in documents])


class MaxPooling(nn.Module):
    """HN-MAX's pooling: each feature's maximum over the unpadded states.

    Its ``weights`` are the share of features whose maximum sits at each position (they sum to 1);
    an all-padding row gives a zero vector and zero weights.
    """

    def forward(
        self, values: torch.Tensor, padding_mask: torch.Tensor
    ) -> tuple[torch.Tensor, torch.Tensor]:
        filled = values.masked_fill(padding_mask[..., None], float("-inf"))
        pooled, where = filled.max(dim=1)  # (batch, features)
        empty = padding_mask.all(dim=1)[:, None]
        pooled = pooled.masked_fill(empty, 0.0)
        weights = F.one_hot(where, values.shape[1]).to(values.dtype).mean(dim=1)
        return pooled, weights.masked_fill(empty, 0.0)


class Unchanged(nn.Module):
    """In place of the sentence GRU: the sentence vectors pass unchanged."""

    def forward(self, inputs: torch.Tensor, padding_mask: torch.Tensor) -> torch.Tensor:
        return inputs


def make_model(data: Data, seed: int, sentence_gru: bool, name: str) -> nn.Module:
    """The chapter's ``make_model``: a HAN on MiniLM's frozen static vectors, with the poolings of
    ``MODELS[name]`` (built as the package's ``pooling="attention"`` or ``"mean"`` model, whose
    parameter-free layers are then swapped, so ``attention`` and ``mean`` are the chapter's)."""
    set_seed(seed)
    word, sentence = MODELS[name]
    model = HierarchicalAttentionNetwork(
        len(data.vectors),
        num_classes=2,
        embedding_size=data.vectors.shape[1],
        hidden_size=16,
        attention_size=32,
        pad_id=PAD,
        pooling="attention" if "attention" in (word, sentence) else "mean",
    )
    model.embedding = nn.Embedding.from_pretrained(data.vectors, freeze=True, padding_idx=PAD)
    if not sentence_gru:
        model.sentence_encoder = Unchanged()
    layers = {"mean": MeanPooling, "max": MaxPooling}
    if word in layers:
        model.word_attention = layers[word]()
    if sentence in layers:
        model.sentence_attention = layers[sentence]()
    return model


def accuracy(model: nn.Module, batch: dict[str, torch.Tensor]) -> float:
    """The share of documents whose label the model predicts."""
    model.eval()
    with torch.no_grad():
        logits = model(batch["word_ids"], batch["mask"]).logits
    return (logits.argmax(-1) == batch["labels"]).float().mean().item()


def top_share(model: nn.Module, batch: dict[str, torch.Tensor], documents) -> float:
    """The share of documents whose largest sentence weight is on the film sentence."""
    model.eval()
    with torch.no_grad():
        weights = model(batch["word_ids"], batch["mask"]).sentence_weights
    return (weights.argmax(-1) == film_positions(documents)).float().mean().item()


def fit(
    model: nn.Module,
    data: Data,
    learning_rate: float,
    seed: int,
    epochs: int,
    film_only: bool = False,
    curve: list[float] | None = None,
) -> dict[str, float]:
    """The chapter's ``fit`` (Adam, batches drawn with ``seed``); the accuracies after training.

    ``film_only`` trains and tests on the film sentences alone; ``curve`` (a list) collects the
    validation accuracy after every epoch.
    """
    batches_of = data.film_batches if film_only else data.batches
    documents = batches_of["train"]
    order = torch.Generator().manual_seed(seed)

    def batches():
        shuffled = torch.randperm(len(documents["labels"]), generator=order)
        for index in shuffled.split(BATCH_SIZE):
            yield {name: tensor[index] for name, tensor in documents.items()}

    def loss_fn(model, batch):
        logits = model(batch["word_ids"], batch["mask"]).logits
        return F.cross_entropy(logits, batch["labels"])

    def evaluate(model):
        curve.append(round(accuracy(model, batches_of["validation"]), 4))
        return curve[-1]

    parameters = [p for p in model.parameters() if p.requires_grad]
    optimizer = torch.optim.Adam(parameters, lr=learning_rate)
    train(
        model,
        batches,
        loss_fn,
        optimizer,
        epochs=epochs,
        evaluate=None if curve is None else evaluate,
    )
    return {name: round(accuracy(model, batch), 4) for name, batch in batches_of.items()}


def epochs_of(name: str) -> int:
    """Six epochs for attention at both levels (and the ceiling), eight for the others."""
    return EPOCHS if name in ("attention", *SAME_AS_ATTENTION) else MEAN_EPOCHS


def validation_row(data: Data, name: str, sentence_gru: bool, learning_rate: float) -> dict:
    """One model and rate on the validation split (``data = Data(validation=True)``), seed 0."""
    model = make_model(data, 0, sentence_gru, "attention" if name in SAME_AS_ATTENTION else name)
    curve: list[float] = []
    fitted = fit(
        model, data, learning_rate, 0, MEAN_EPOCHS, film_only=name == "ceiling", curve=curve
    )
    row = {"model": name, "sentence_gru": sentence_gru, "learning_rate": learning_rate}
    row.update(train=fitted["train"], validation=curve[epochs_of(name) - 1], curve=curve)
    return row


def validate(table: dict) -> None:
    """Each model of ``VALIDATED`` with each learning rate, chosen on the validation documents."""
    data = Data(validation=True)
    table["validation"] = []
    for name, sentence_gru in VALIDATED:
        for learning_rate in LEARNING_RATES:
            row = validation_row(data, name, sentence_gru, learning_rate)
            print(row, flush=True)
            table["validation"].append(row)


def chosen_rates(table: dict) -> dict[str, float]:
    """``"model gru"`` or ``"model flat"`` -> the rate with the best validation accuracy."""
    chosen = {}
    for name, sentence_gru in VALIDATED:
        rows = [
            r
            for r in table["validation"]
            if r["model"] == name and r["sentence_gru"] == sentence_gru
        ]
        best = max(rows, key=lambda r: (r["validation"], -abs(r["learning_rate"] - ATTENTION_LR)))
        chosen[f"{name} {'gru' if sentence_gru else 'flat'}"] = best["learning_rate"]
    return chosen


def run(
    seeds: list[int],
    variants: list[str],
    grid: bool,
    shipped: dict,
    models: list[str] | None = None,
    validation: bool = True,
) -> dict:
    """The learning-rate grids (mean pooling's if ``grid``, the validation split's if
    ``validation``) and the seed rows of ``models`` (default: all) and ``variants``."""
    models = list(MODELS) if models is None else models
    table: dict = {"batch_size": BATCH_SIZE, "attention_lr": ATTENTION_LR, "epochs": EPOCHS}
    if validation:
        validate(table)
    else:
        table["validation"] = shipped["validation"]
    table["validation_chosen"] = chosen_rates(table)
    data = Data()
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
            for name in models:
                if variant == "gru" and name in FLAT_ONLY:
                    continue
                row = seed_row(data, table, name, variant == "gru", seed)
                print(row, flush=True)
                table["seeds"].append(row)
    return table


def seed_row(data: Data, table: dict, name: str, sentence_gru: bool, seed: int) -> dict:
    """One model and seed: its rate and epochs, and its accuracies (and ``top`` shares)."""
    if name == "attention":
        learning_rate = ATTENTION_LR
    elif name == "mean":
        learning_rate = table["mean_lr_chosen"]
    else:
        validated = "attention" if name == "attention-val" else name
        variant = "gru" if sentence_gru else "flat"
        learning_rate = table["validation_chosen"][f"{validated} {variant}"]
    epochs = epochs_of(name)
    model = make_model(data, seed, sentence_gru, "attention" if name in SAME_AS_ATTENTION else name)
    row = {"model": name, "sentence_gru": sentence_gru, "seed": seed}
    row.update(learning_rate=learning_rate, epochs=epochs)
    row.update(fit(model, data, learning_rate, seed, epochs, film_only=name == "ceiling"))
    if MODELS[name][1] != "mean" and name != "ceiling":  # it has sentence weights
        for column, split in (("top", "test"), ("top_crowded", "crowded")):
            row[column] = round(top_share(model, data.batches[split], data.documents[split]), 4)
    if name in PROBED:
        row.update(probe(model, data.batches["test"], data.documents["test"]))
    return row


def probe(model: nn.Module, batch: dict[str, torch.Tensor], documents) -> dict[str, float]:
    """What the sentence pooling sees, on the test documents: its sentence states (the sentence
    GRU's output, or the sentence vectors where there is none).

    - ``film_weight``: the mean weight on the film sentence (mean pooling: the mean of 1/L);
    - ``votes``: the share of off-topic states that, fed alone to the classifier, it reads as the
      document's label; ``votes_own``: as that sentence's own label;
    - ``similarity``: the mean cosine similarity of each off-topic state to its film sentence's;
    - ``uniform``: test accuracy with the sentence pooling replaced by a plain mean over the same
      states (no retraining; for mean pooling it is its test accuracy).
    """
    states: list[torch.Tensor] = []
    hook = model.sentence_encoder.register_forward_hook(
        lambda module, inputs, output: states.append(output)
    )
    model.eval()
    with torch.no_grad():
        output = model(batch["word_ids"], batch["mask"])
        hook.remove()
        votes = model.classifier(states[0]).argmax(-1)  # (documents, sentences)
        attention = model.sentence_attention
        model.sentence_attention = MeanPooling()
        uniform = model(batch["word_ids"], batch["mask"]).logits.argmax(-1)
        model.sentence_attention = attention
    film = film_positions(documents)
    rows = torch.arange(len(documents))
    film_states = states[0][rows, film]  # (documents, features)
    similarity = F.cosine_similarity(states[0], film_states[:, None], dim=-1)
    off_topic = ~batch["mask"].all(-1)  # real sentences ...
    off_topic[rows, film] = False  # ... other than the film sentence
    own = torch.zeros_like(off_topic, dtype=torch.long)
    for index, document in enumerate(documents):
        own[index, : len(document.sentences)] = torch.tensor(document.sentence_labels)
    document_label = batch["labels"][:, None].expand_as(votes)
    return {
        "film_weight": round(output.sentence_weights[rows, film].mean().item(), 4),
        "votes": round((votes == document_label)[off_topic].float().mean().item(), 4),
        "votes_own": round((votes == own)[off_topic].float().mean().item(), 4),
        "similarity": round(similarity[off_topic].mean().item(), 4),
        "uniform": round((uniform == batch["labels"]).float().mean().item(), 4),
    }


def key(row: dict) -> tuple:
    return row["model"], row["sentence_gru"], row["seed"]


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--seeds", type=int, nargs="+", default=[0, 1, 2])
    parser.add_argument("--variants", nargs="+", choices=("flat", "gru"), default=["flat", "gru"])
    parser.add_argument(
        "--no-grid", action="store_true", help="take the grid from the shipped file"
    )
    parser.add_argument(
        "--no-validation",
        action="store_true",
        help="take the validation grid from the shipped file",
    )
    parser.add_argument("--models", nargs="+", choices=tuple(MODELS), default=list(MODELS))
    parser.add_argument("--out", type=Path, default=OUT)
    args = parser.parse_args(argv)
    shipped = json.loads(OUT.read_text()) if OUT.is_file() else {}
    table = run(
        args.seeds,
        args.variants,
        grid=not args.no_grid,
        shipped=shipped,
        models=args.models,
        validation=not args.no_validation,
    )
    if args.out.is_file():  # a part: merge into what is there
        old = json.loads(args.out.read_text())
        new = {key(r) for r in table["seeds"]}
        table["seeds"] = [r for r in old.get("seeds", []) if key(r) not in new] + table["seeds"]
        order = list(MODELS)
        table["seeds"].sort(
            key=lambda r: (not r["sentence_gru"], r["seed"], order.index(r["model"]))
        )
    args.out.parent.mkdir(parents=True, exist_ok=True)
    args.out.write_text(json.dumps(table, indent=1) + "\n")


if __name__ == "__main__":
    main()
