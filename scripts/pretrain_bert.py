"""Pre-train the book's small BERT (masked LM + next-sentence prediction) on real English.

The corpus: WordNet 3.0's glosses and examples plus the UCI training-pool sentences
(``attention_to_bert.pretraining.corpus_documents``); one synset in a hundred is held out for
validation. Seeded and single-threaded by default, so the same arguments give the same weights on
the same machine. Writes ``tokenizer.json`` (trained first if missing), ``model.safetensors`` and
``config.json`` (with the loss log) into ``--out``, every ``--save-every`` steps and at the end.

    python scripts/pretrain_bert.py --out FOLDER          # pre-train from random weights
    python scripts/pretrain_bert.py --init FOLDER ...     # go on from FOLDER's weights
    python scripts/pretrain_bert.py --evaluate FILE.txt   # masked-token accuracy on a text file

``--init`` starts from a checkpoint's weights, tokenizer and architecture with a fresh optimizer and
schedule; the new ``config.json`` keeps the earlier runs' recipes under ``history``. The shipped
checkpoint's three runs are listed in ``book/attention_to_bert/pretrained/README.md``.
"""

from __future__ import annotations

import argparse
import json
import math
import sys
import time
from dataclasses import asdict, replace
from pathlib import Path
from typing import Any

import torch

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "book"))

from attention_to_bert.bert import BertConfig  # noqa: E402
from attention_to_bert.pretraining import (  # noqa: E402
    PRETRAINED,
    BertForPreTraining,
    PairSampler,
    corpus_documents,
    evaluate_mlm,
    load_pretrained,
    pretraining_losses,
    train_wordpiece,
    unigram_counts,
)
from attention_to_bert.training import set_seed  # noqa: E402


def save_pretrained(model: BertForPreTraining, folder: Path, extra: dict[str, Any]) -> None:
    """Write ``model.safetensors`` (without the tied decoder copy) and ``config.json``."""
    from safetensors.torch import save_file

    folder.mkdir(parents=True, exist_ok=True)
    state = {name: tensor.contiguous() for name, tensor in model.state_dict().items()}
    save_file(state, str(folder / "model.safetensors"))
    config = asdict(model.bert.config) | {"attn_implementation": "eager"}
    (folder / "config.json").write_text(json.dumps({"config": config} | extra, indent=1) + "\n")


def parse(argv: list[str] | None) -> argparse.Namespace:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--out", type=Path, default=PRETRAINED, help="checkpoint folder")
    parser.add_argument("--tokenizer", type=Path, help="tokenizer.json (default: OUT's; trained)")
    parser.add_argument("--init", type=Path, help="start from this checkpoint folder's weights")
    parser.add_argument("--evaluate", type=Path, help="plain-text file: print masked accuracy")
    parser.add_argument("--steps", type=int, default=2200)
    parser.add_argument("--batch-size", type=int, default=128)
    parser.add_argument("--max-length", type=int, default=48)
    parser.add_argument("--lr", type=float, default=1e-3)
    parser.add_argument("--warmup", type=int, default=200)
    parser.add_argument("--hidden", type=int, default=128)
    parser.add_argument("--layers", type=int, default=2)
    parser.add_argument("--heads", type=int, default=4)
    parser.add_argument("--vocab-size", type=int, default=8000)
    parser.add_argument(
        "--stop-after", type=int, help="stop after this many steps (the schedule keeps --steps)"
    )
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--threads", type=int, default=1)
    parser.add_argument("--save-every", type=int, default=250)
    parser.add_argument("--log-every", type=int, default=50)
    args = parser.parse_args(argv)
    for name in ("steps", "batch_size", "max_length", "hidden", "layers", "heads", "vocab_size"):
        if getattr(args, name) < 1:
            parser.error(
                f"--{name.replace('_', '-')} must be at least 1, got {getattr(args, name)}"
            )
    if args.max_length < 8:
        parser.error(f"--max-length must be at least 8, got {args.max_length}")
    return args


def evaluate_file(args: argparse.Namespace) -> dict[str, float]:
    """Masked-token accuracy of the checkpoint in ``--out`` on ``--evaluate``'s lines."""
    if not args.evaluate.is_file():
        raise SystemExit(f"--evaluate: no such file: {args.evaluate}")
    texts = [line for line in args.evaluate.read_text(encoding="utf-8").splitlines()]
    if not any(t.strip() for t in texts):
        raise SystemExit(f"--evaluate: {args.evaluate} holds no text (empty corpus)")
    try:
        model, tokenizer, info = load_pretrained(args.out)
    except FileNotFoundError as error:
        raise SystemExit(f"--out: {error}") from None
    unigram = torch.tensor(info["unigram_counts"])
    try:
        result = evaluate_mlm(model, tokenizer, texts, unigram, seed=args.seed)
    except ValueError as error:
        raise SystemExit(f"--evaluate: {error}") from None
    print(
        f"{result['masked']} tokens, each shown as [MASK]: top-1 {result['top1']:.3f} "
        f"(unigram {result['unigram_top1']:.3f}), top-5 {result['top5']:.3f} "
        f"(unigram {result['unigram_top5']:.3f})"
    )
    return result


def starting_point(args: argparse.Namespace) -> tuple[BertForPreTraining | None, list[dict]]:
    """``--init``'s model (or None) and the runs behind it; sets ``--tokenizer`` to its vocabulary."""
    if args.init is None:
        return None, []
    try:
        model, _, info = load_pretrained(args.init)
    except FileNotFoundError as error:
        raise SystemExit(f"--init: {error}") from None
    if args.tokenizer is None:
        args.tokenizer = args.init / "tokenizer.json"
    run = {"recipe": info["recipe"], "steps_done": info["steps_done"], "log": info["log"]}
    return model, info.get("history", []) + [run]


def pretrain(args: argparse.Namespace) -> dict:
    set_seed(args.seed, num_threads=args.threads)
    documents = corpus_documents()
    if not any(any(s.strip() for s in doc) for doc in documents):
        raise SystemExit("corpus: the corpus is empty")
    train_docs = [doc for i, doc in enumerate(documents) if i % 100]
    held_out = [doc[0] for i, doc in enumerate(documents) if i % 100 == 0][:600]
    start_from, history = starting_point(args)
    path = args.tokenizer or args.out / "tokenizer.json"
    if args.tokenizer is not None and not path.is_file():
        raise SystemExit(f"--tokenizer: no such file: {path}")
    if path.is_file():
        from tokenizers import Tokenizer

        tokenizer = Tokenizer.from_file(str(path))
    else:
        tokenizer = train_wordpiece([s for doc in train_docs for s in doc], args.vocab_size)
    args.out.mkdir(parents=True, exist_ok=True)
    tokenizer.save(str(args.out / "tokenizer.json"))
    vocab = tokenizer.get_vocab()
    encoded = [
        [e.ids for e in tokenizer.encode_batch(doc, add_special_tokens=False)] for doc in train_docs
    ]
    encoded = [[s for s in doc if s] for doc in encoded]
    unigram = unigram_counts(encoded, len(vocab))
    sampler = PairSampler(encoded, vocab["[CLS]"], vocab["[SEP]"], args.max_length, args.seed)
    config = BertConfig(
        vocab_size=len(vocab),
        hidden_size=args.hidden,
        num_hidden_layers=args.layers,
        num_attention_heads=args.heads,
        intermediate_size=4 * args.hidden,
        hidden_dropout_prob=0.0,
        attention_probs_dropout_prob=0.0,
        max_position_embeddings=args.max_length,
        attn_implementation="sdpa",
    )
    model = BertForPreTraining(config)
    if start_from is not None:
        config = replace(start_from.bert.config, attn_implementation="sdpa")
        model = BertForPreTraining(config)
        model.load_state_dict(start_from.state_dict())
    decay = [p for n, p in model.named_parameters() if p.ndim > 1]
    no_decay = [p for n, p in model.named_parameters() if p.ndim <= 1]
    optimizer = torch.optim.AdamW(
        [{"params": decay, "weight_decay": 0.01}, {"params": no_decay, "weight_decay": 0.0}],
        lr=args.lr,
    )

    def rate(step: int) -> float:  # linear warm-up, then cosine decay to a tenth
        if step < args.warmup:
            return (step + 1) / args.warmup
        progress = (step - args.warmup) / max(1, args.steps - args.warmup)
        return 0.1 + 0.9 * 0.5 * (1 + math.cos(math.pi * progress))

    scheduler = torch.optim.lr_scheduler.LambdaLR(optimizer, rate)
    generator = torch.Generator().manual_seed(args.seed)
    log, window, start = [], [], time.perf_counter()
    info = {
        "corpus": "WordNet 3.0 glosses and examples + UCI sentiment pool sentences",
        "recipe": {
            k: (
                v.resolve().relative_to(ROOT).as_posix()
                if v.resolve().is_relative_to(ROOT)
                else v.name
            )
            if isinstance(v, Path)
            else v
            for k, v in vars(args).items()
        },
        "unigram_counts": unigram.tolist(),
    } | ({"history": history} if history else {})
    for step in range(1, args.steps + 1):
        model.train()
        batch = sampler.batch(args.batch_size)
        mlm_loss, nsp_loss, mlm_correct, nsp_correct = pretraining_losses(
            model, batch, vocab["[MASK]"], generator
        )
        optimizer.zero_grad()
        (mlm_loss + nsp_loss).backward()
        torch.nn.utils.clip_grad_norm_(model.parameters(), 1.0)
        optimizer.step()
        scheduler.step()
        pairs = int((batch["nsp_labels"] != -100).sum())
        window.append((mlm_loss.item(), nsp_loss.item(), int(nsp_correct), pairs))
        if step % args.log_every == 0 or step in (args.steps, args.stop_after):
            row = {
                "step": step,
                "seconds": round(time.perf_counter() - start, 1),
                "mlm_loss": round(sum(w[0] for w in window) / len(window), 4),
                "nsp_loss": round(sum(w[1] for w in window) / len(window), 4),
                "nsp_accuracy": round(
                    sum(w[2] for w in window) / max(1, sum(w[3] for w in window)), 4
                ),
            }
            window = []
            log.append(row)
            print(row, flush=True)
        last = step == args.steps or step == args.stop_after
        if step % args.save_every == 0 or last:
            # every question a [MASK] (run 1 of the shipped checkpoint predates this: 80/10/10)
            result = evaluate_mlm(model, tokenizer, held_out, unigram, seed=0)
            log[-1]["held_out"] = {k: round(v, 4) for k, v in result.items()}
            print("held-out", log[-1]["held_out"], flush=True)
            save_pretrained(model, args.out, info | {"steps_done": step, "log": log})
        if step == args.stop_after:
            break
    return {"log": log}


def main(argv: list[str] | None = None) -> dict:
    args = parse(argv)
    if args.evaluate is not None:
        return evaluate_file(args)
    return pretrain(args)


if __name__ == "__main__":
    main()
