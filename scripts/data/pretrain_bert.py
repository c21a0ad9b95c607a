"""Pre-train the book's small BERT (masked LM + next-sentence prediction) on real English.

``--corpus everyday`` (the default): children's stories, novels, a fifth of a Bible, conversations
and WordNet's glosses with full stops (``attention_to_bert.data.everyday``), with its held-out
documents; ``--corpus dictionary``: the first checkpoint's text, WordNet 3.0's glosses and examples
plus the UCI training-pool sentences (``data.wordnet.corpus_documents``), one synset in a hundred held
out. Seeded and single-threaded by default, so the same arguments give the same weights on the same
machine. Writes ``tokenizer.json`` (trained first if missing), ``model.safetensors`` and
``config.json`` (with the loss log and the everyday cloze hits) into ``--out``, every
``--save-every`` steps and at the end.

On a GPU (``--device cuda``) it runs in bfloat16 autocast; ``--budget-seconds`` then replaces the
step count: the schedule follows the elapsed time and training stops when the time is spent.

    python scripts/data/pretrain_bert.py --out FOLDER          # pre-train from random weights
    python scripts/data/pretrain_bert.py --init FOLDER ...     # go on from FOLDER's weights
    python scripts/data/pretrain_bert.py --evaluate FILE.txt   # masked-token accuracy on a text file
    torchrun --standalone --nproc_per_node N scripts/data/pretrain_bert.py [--device cuda] ...

Under ``torchrun`` each of the N processes reads its own shard of the corpus (every N-th document),
draws ``--batch-size / N`` examples a step and is wrapped in ``DistributedDataParallel`` (NCCL on
GPUs, gloo on CPUs), which averages the gradients; rank 0 logs the ranks' mean losses and writes the
checkpoint, with ``replicas_max_difference`` (0.0: the ranks' weights are equal). ``--shards N`` in
one process takes the same steps (``tests/package/test_pretrain_ddp.py``); with one shard (the default) the
script behaves as before.

``--init`` starts from a checkpoint's weights, tokenizer and architecture with a fresh optimizer and
schedule; the new ``config.json`` keeps the earlier runs' recipes under ``history``. The shipped
checkpoint's three runs are listed in ``book/attention_to_bert/pretrained/README.md``.
"""

from __future__ import annotations

import argparse
import json
import math
import os
import time
from dataclasses import asdict, replace
from pathlib import Path
from typing import Any

import torch

from attention_to_bert.bert import BertConfig
from attention_to_bert.data import PairSampler, wordnet
from attention_to_bert.mlm import evaluate_mlm
from attention_to_bert.pretraining import (
    IGNORE,
    PRETRAINED,
    BertForPreTraining,
    load_pretrained,
    pretraining_losses,
    train_wordpiece,
    unigram_counts,
)
from attention_to_bert.training import set_seed
from attention_to_bert.validate import check_int

ROOT = Path(__file__).resolve().parents[2]


class PackedPairSampler:
    """``PairSampler``'s examples drawn with tensor operations, on any device: the corpus is packed
    into one token tensor. Two simplifications make it vectorised: A is drawn uniformly among the
    sentences (with a next one, for a pair), so long documents weigh more; a random B is any
    sentence of the corpus (of A's own document once in about 100,000 draws)."""

    def __init__(
        self,
        documents: list[list[list[int]]],
        cls_id: int,
        sep_id: int,
        max_length: int = 64,
        seed: int = 0,
        device: str | torch.device = "cpu",
    ) -> None:
        documents = PairSampler(documents, cls_id, sep_id, max_length, seed).documents  # checked
        sentences = [s for doc in documents for s in doc if s]
        if not sentences:
            raise ValueError("documents must hold at least one non-empty sentence, got none")
        has_next = [i + 1 < len(doc) for doc in documents for i, s in enumerate(doc) if s]
        lengths = torch.tensor([len(s) for s in sentences])
        self.tokens = torch.tensor([t for s in sentences for t in s], device=device)
        self.starts = (lengths.cumsum(0) - lengths).to(device)
        self.lengths = lengths.to(device)
        self.with_next = torch.tensor(has_next).nonzero()[:, 0].to(device)
        self.cls_id, self.sep_id, self.max_length = cls_id, sep_id, max_length
        self.generator = torch.Generator(device).manual_seed(seed)

    def _draw(self, high: int, size: int) -> torch.Tensor:
        return torch.randint(high, (size,), generator=self.generator, device=self.tokens.device)

    def batch(self, size: int) -> dict[str, torch.Tensor]:
        """Like ``PairSampler.batch``: input_ids, token_type_ids, attention_mask, special and
        nsp_labels, on the sampler's device, padded to ``max_length``."""
        check_int("size", size)
        count, device = len(self.lengths), self.tokens.device
        coin = torch.rand(2, size, generator=self.generator, device=device)
        pair = (coin[0] < 0.5) & (len(self.with_next) > 0)
        a = torch.where(
            pair,
            self.with_next[self._draw(max(1, len(self.with_next)), size)],
            self._draw(count, size),
        )
        other = pair & (coin[1] < 0.5)
        b = torch.where(other, self._draw(count, size), (a + 1).clamp(max=count - 1))
        room = torch.where(pair, self.max_length - 3, self.max_length - 2)
        len_b = torch.where(pair, self.lengths[b], 0)
        len_a = torch.minimum(self.lengths[a], torch.maximum(room // 2, room - len_b))
        len_b = torch.minimum(len_b, room - len_a)
        total = torch.where(pair, len_a + len_b + 3, len_a + 2)
        pos = torch.arange(self.max_length, device=device)[None]  # fixed width: no device sync
        in_a = (pos >= 1) & (pos <= len_a[:, None])
        in_b = pair[:, None] & (pos >= len_a[:, None] + 2) & (pos < (len_a + len_b + 2)[:, None])
        seps = (pos == len_a[:, None] + 1) | (pair[:, None] & (pos == (len_a + len_b + 2)[:, None]))
        last = len(self.tokens) - 1
        from_a = self.tokens[(self.starts[a, None] + pos - 1).clamp(0, last)]
        from_b = self.tokens[(self.starts[b, None] + pos - len_a[:, None] - 2).clamp(0, last)]
        ids = torch.where(in_a, from_a, torch.where(in_b, from_b, 0))
        ids = torch.where(seps, self.sep_id, ids)
        ids[:, 0] = self.cls_id
        real = pos < total[:, None]
        return dict(
            input_ids=ids,
            token_type_ids=(in_b | (seps & (pos > len_a[:, None] + 1))).long(),
            attention_mask=real.long(),
            special=~(in_a | in_b),
            nsp_labels=torch.where(pair, other.long(), IGNORE),
        )


def save_pretrained(
    model: BertForPreTraining, folder: Path, extra: dict[str, Any], half: bool = False
) -> None:
    """Write ``model.safetensors`` (without the tied decoder copy; float16 with ``half``) and
    ``config.json``."""
    from safetensors.torch import save_file

    folder.mkdir(parents=True, exist_ok=True)
    dtype = torch.float16 if half else torch.float32
    state = {
        name: t.detach().to("cpu", dtype).contiguous() for name, t in model.state_dict().items()
    }
    save_file(state, str(folder / "model.safetensors"))
    config = asdict(model.bert.config) | {"attn_implementation": "eager"}
    (folder / "config.json").write_text(json.dumps({"config": config} | extra, indent=1) + "\n")


def parse(argv: list[str] | None) -> argparse.Namespace:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--out", type=Path, default=PRETRAINED, help="checkpoint folder")
    parser.add_argument("--tokenizer", type=Path, help="tokenizer.json (default: OUT's; trained)")
    parser.add_argument("--init", type=Path, help="start from this checkpoint folder's weights")
    parser.add_argument("--evaluate", type=Path, help="plain-text file: print masked accuracy")
    parser.add_argument("--corpus", choices=("everyday", "dictionary"), default="everyday")
    parser.add_argument("--device", default="cpu", help="cpu or cuda (bfloat16 autocast)")
    parser.add_argument("--budget-seconds", type=float, help="train for this long (not --steps)")
    parser.add_argument("--dropout", type=float, default=0.0)
    parser.add_argument("--half", action="store_true", help="save the weights in float16")
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
    parser.add_argument(
        "--shards",
        type=int,
        default=1,
        help="one process: read the corpus as this many shards, a micro-batch each (what as many "
        "torchrun processes do); under torchrun the shards are the processes",
    )
    parser.add_argument("--save-every", type=int, default=250)
    parser.add_argument("--saves", type=int, default=8, help="with --budget-seconds: how many")
    parser.add_argument("--log-every", type=int, default=50)
    args = parser.parse_args(argv)
    sizes = ("steps", "batch_size", "max_length", "hidden", "layers", "heads", "vocab_size")
    for name in (*sizes, "shards"):
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


def corpus(args: argparse.Namespace) -> tuple[list[list[str]], list[str]]:
    """``--corpus``'s training documents and held-out sentences."""
    if args.corpus == "everyday":
        from attention_to_bert.data import everyday

        held = [doc[0] for doc in everyday.validation_documents()][:1000]
        return everyday.corpus_documents(), held
    documents = wordnet.corpus_documents()
    train_docs = [doc for i, doc in enumerate(documents) if i % 100]
    return train_docs, [doc[0] for i, doc in enumerate(documents) if i % 100 == 0][:600]


def cloze_rate(model: BertForPreTraining, tokenizer: Any) -> dict[str, float]:
    """Top-1 and top-5 hits on the 48 everyday cloze sentences (``data/cloze.tsv``)."""
    from attention_to_bert.data.everyday import cloze_rows
    from attention_to_bert.mlm import cloze_hits

    rows = cloze_hits(cloze_rows(), 5, model=model, tokenizer=tokenizer)
    return {
        "top1": sum(g[0] == answer for _, answer, g in rows) / len(rows),
        "top5": sum(answer in g for _, answer, g in rows) / len(rows),
    }


def tokenizer_for(args: argparse.Namespace, train_docs: list[list[str]]) -> Any:
    """``--tokenizer`` (or OUT's), else a new WordPiece vocabulary trained on the corpus."""
    path = args.tokenizer or args.out / "tokenizer.json"
    if args.tokenizer is not None and not path.is_file():
        raise SystemExit(f"--tokenizer: no such file: {path}")
    if path.is_file():
        from tokenizers import Tokenizer

        tokenizer = Tokenizer.from_file(str(path))
    else:
        tokenizer = train_wordpiece([s for doc in train_docs for s in doc], args.vocab_size)
    return tokenizer


def build_model(
    args: argparse.Namespace, vocab_size: int, start_from: BertForPreTraining | None
) -> BertForPreTraining:
    """A random model of the arguments' size, or ``--init``'s weights and architecture."""
    config = BertConfig(
        vocab_size=vocab_size,
        hidden_size=args.hidden,
        num_hidden_layers=args.layers,
        num_attention_heads=args.heads,
        intermediate_size=4 * args.hidden,
        hidden_dropout_prob=args.dropout,
        attention_probs_dropout_prob=args.dropout,
        max_position_embeddings=args.max_length,
        attn_implementation="sdpa",
    )
    model = BertForPreTraining(config)
    if start_from is not None:
        config = replace(start_from.bert.config, attn_implementation="sdpa")
        model = BertForPreTraining(config)
        model.load_state_dict(start_from.state_dict())
    return model


def run_info(args: argparse.Namespace, unigram: torch.Tensor, history: list) -> dict:
    """The recipe, corpus and unigram counts that ``config.json`` keeps."""
    return {
        "corpus": {
            "everyday": "everyday English (attention_to_bert.data.everyday) + WordNet glosses",
            "dictionary": "WordNet 3.0 glosses and examples + UCI sentiment pool sentences",
        }[args.corpus],
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


class Processes:
    """Where this process stands: under ``torchrun`` (``WORLD_SIZE`` > 1) one rank of several, each
    reading its own shard of the corpus and wrapped in ``DistributedDataParallel`` (gloo on CPUs,
    NCCL on GPUs); otherwise one process that reads ``--shards`` shards itself, one micro-batch
    each, and averages their gradients: the same step as that many ranks."""

    def __init__(self, args: argparse.Namespace) -> None:
        self.world = int(os.environ.get("WORLD_SIZE", "1"))
        self.rank = int(os.environ.get("RANK", "0"))
        self.distributed = self.world > 1
        self.device = torch.device(args.device)
        if self.distributed:
            import torch.distributed as dist

            if self.device.type == "cuda":
                self.device = torch.device("cuda", int(os.environ.get("LOCAL_RANK", "0")))
                torch.cuda.set_device(self.device)
            dist.init_process_group("nccl" if self.device.type == "cuda" else "gloo")
        self.shards = self.world if self.distributed else args.shards
        self.mine = [self.rank] if self.distributed else list(range(self.shards))
        if args.batch_size % self.shards:
            raise SystemExit(
                f"--batch-size ({args.batch_size}, the global batch) must be a multiple of the "
                f"number of shards ({self.shards})"
            )

    @property
    def main(self) -> bool:
        return self.rank == 0

    def agree(self, value: float) -> float:
        """Rank 0's ``value`` on every rank (elapsed time: the schedule must be the same)."""
        if not self.distributed:
            return value
        import torch.distributed as dist

        tensor = torch.tensor([value], dtype=torch.float64, device=self.device)
        dist.broadcast(tensor, 0)
        return float(tensor)

    def mean(self, tensor: torch.Tensor) -> torch.Tensor:
        """The mean over the ranks (the tensor itself in one process)."""
        if not self.distributed:
            return tensor
        import torch.distributed as dist

        tensor = tensor.to(self.device)
        dist.all_reduce(tensor)
        return tensor / self.world

    def replica_difference(self, model: torch.nn.Module) -> float:
        """The largest difference between the ranks' copies of any weight (0: all equal)."""
        if not self.distributed:
            return 0.0
        import torch.distributed as dist

        flat = torch.cat([p.detach().float().flatten() for p in model.parameters()])
        low, high = flat.clone(), flat.clone()
        dist.all_reduce(low, op=dist.ReduceOp.MIN)
        dist.all_reduce(high, op=dist.ReduceOp.MAX)
        return float((high - low).max())

    def barrier(self) -> None:
        if self.distributed:
            import torch.distributed as dist

            dist.barrier()

    def wrap(self, model: torch.nn.Module) -> torch.nn.Module:
        """``model`` in ``DistributedDataParallel`` under torchrun (it averages the gradients)."""
        if not self.distributed:
            return model
        from torch.nn.parallel import DistributedDataParallel

        ids = [self.device.index] if self.device.type == "cuda" else None
        return DistributedDataParallel(model, device_ids=ids)

    def close(self) -> None:
        if self.distributed:
            import torch.distributed as dist

            dist.destroy_process_group()


def samplers(args, encoded: list, vocab: dict, processes: Processes, device) -> dict:
    """One sampler per shard this process reads: shard ``r`` holds every ``shards``-th document
    from the ``r``-th, drawn with seed ``--seed + r`` (one shard: the whole corpus, ``--seed``)."""
    made = {}
    for r in processes.mine:
        shard = encoded[r :: processes.shards]
        seed = args.seed + r
        if args.corpus == "everyday":
            made[r] = PackedPairSampler(
                shard, vocab["[CLS]"], vocab["[SEP]"], args.max_length, seed, device
            )
        else:
            made[r] = PairSampler(shard, vocab["[CLS]"], vocab["[SEP]"], args.max_length, seed)
    return made


def shared_tokenizer(args: argparse.Namespace, train_docs: list, processes: Processes) -> Any:
    """``tokenizer_for``'s vocabulary, written to ``--out`` by rank 0 and read by the others."""
    if processes.main:
        tokenizer = tokenizer_for(args, train_docs)
        args.out.mkdir(parents=True, exist_ok=True)
        tokenizer.save(str(args.out / "tokenizer.json"))
    processes.barrier()  # the other ranks read the vocabulary rank 0 wrote
    if not processes.main:
        args.tokenizer = args.out / "tokenizer.json"
        tokenizer = tokenizer_for(args, train_docs)
    return tokenizer


def checkpoint(args, model, tokenizer, processes, evaluation, info, log, clock) -> None:
    """Rank 0 scores the held-out texts and the cloze sentences and saves; the ranks' weights are
    compared first (``replicas_max_difference``, 0.0 when they are equal)."""
    extra = {}
    if processes.shards > 1:
        extra = {"processes": processes.world, "shards": processes.shards}
    if processes.distributed:
        extra["replicas_max_difference"] = processes.replica_difference(model)
    if processes.main:
        # every question a [MASK] (run 1 of the shipped checkpoint predates this: 80/10/10)
        (held_out, unigram), (step, start) = evaluation, clock
        result = evaluate_mlm(model, tokenizer, held_out, unigram, seed=0)
        if not log or log[-1]["step"] != step:
            log.append({"step": step, "seconds": round(time.perf_counter() - start, 1)})
        log[-1]["held_out"] = {k: round(v, 4) for k, v in result.items()}
        log[-1]["cloze"] = cloze_rate(model, tokenizer)
        print("held-out", log[-1]["held_out"], "cloze", log[-1]["cloze"], flush=True)
        state = info | {"steps_done": step, "log": log} | extra
        save_pretrained(model, args.out, state, args.half)
    processes.barrier()


def pretrain(args: argparse.Namespace) -> dict:
    set_seed(args.seed, num_threads=args.threads)
    processes = Processes(args)
    device = processes.device
    train_docs, held_out = corpus(args)
    if not any(any(s.strip() for s in doc) for doc in train_docs):
        raise SystemExit("corpus: the corpus is empty")
    start_from, history = starting_point(args)
    tokenizer = shared_tokenizer(args, train_docs, processes)
    vocab = tokenizer.get_vocab()
    flat = iter(
        e.ids
        for e in tokenizer.encode_batch(
            [s for doc in train_docs for s in doc], add_special_tokens=False
        )
    )
    encoded = [[ids for ids in (next(flat) for _ in doc) if ids] for doc in train_docs]
    unigram = unigram_counts(encoded, len(vocab))
    shard_samplers = samplers(args, encoded, vocab, processes, device)
    model = build_model(args, len(vocab), start_from)
    model.to(device)
    trained = processes.wrap(model)
    cuda = device.type == "cuda"
    if cuda:
        torch.backends.cuda.matmul.allow_tf32 = True
    decay = [p for n, p in model.named_parameters() if p.ndim > 1]
    no_decay = [p for n, p in model.named_parameters() if p.ndim <= 1]
    optimizer = torch.optim.AdamW(
        [{"params": decay, "weight_decay": 0.01}, {"params": no_decay, "weight_decay": 0.0}],
        lr=args.lr,
        fused=cuda,
    )
    budget = args.budget_seconds

    def rate(k: float) -> float:  # linear warm-up, then cosine decay to a tenth (k: steps done)
        if k < args.warmup:
            return (k + 1) / args.warmup
        progress = (k - args.warmup) / max(1, args.steps - args.warmup)
        return 0.1 + 0.9 * 0.5 * (1 + math.cos(math.pi * min(1.0, progress)))

    generators = {r: torch.Generator(device).manual_seed(args.seed + r) for r in processes.mine}
    micro_batch = args.batch_size // processes.shards
    log, window, start, saves = [], [], time.perf_counter(), 1
    saves = 1
    info = run_info(args, unigram, history)
    step = 0
    while True:
        step += 1
        elapsed = processes.agree(time.perf_counter() - start)
        done_steps = elapsed / budget * args.steps if budget else step - 1  # time as steps
        for group in optimizer.param_groups:
            group["lr"] = args.lr * rate(done_steps)
        model.train()
        optimizer.zero_grad()
        for r in processes.mine:  # one shard under torchrun; --shards of them in one process
            batch = shard_samplers[r].batch(micro_batch)
            with torch.autocast(device.type, torch.bfloat16, enabled=cuda):
                mlm_loss, nsp_loss, mlm_correct, nsp_correct = pretraining_losses(
                    trained, batch, vocab["[MASK]"], generators[r]
                )
            # DDP averages the ranks' gradients; one process averages its shards' the same way
            ((mlm_loss + nsp_loss) / len(processes.mine)).backward()
            pairs = (batch["nsp_labels"] != -100).sum()
            window.append(
                torch.stack([x.detach().float() for x in (mlm_loss, nsp_loss, nsp_correct, pairs)])
            )
        torch.nn.utils.clip_grad_norm_(model.parameters(), 1.0)
        optimizer.step()
        finished = time.perf_counter() - start >= budget if budget else step == args.steps
        done = step == args.stop_after or bool(processes.agree(float(finished)))
        if step % args.log_every == 0 or done:
            mean = processes.mean(torch.stack(window).float()).cpu()
            row = {
                "step": step,
                "seconds": round(time.perf_counter() - start, 1),
                "mlm_loss": round(float(mean[:, 0].mean()), 4),
                "nsp_loss": round(float(mean[:, 1].mean()), 4),
                "nsp_accuracy": round(float(mean[:, 2].sum() / mean[:, 3].sum().clamp(min=1)), 4),
            }
            window = []
            log.append(row)
            if processes.main:
                print(row, flush=True)
        due = elapsed >= saves * budget / args.saves if budget else step % args.save_every == 0
        if due or done:
            saves += 1
            evaluation = (held_out, unigram)
            checkpoint(args, model, tokenizer, processes, evaluation, info, log, (step, start))
        if done:
            break
    processes.close()
    return {"log": log}


def main(argv: list[str] | None = None) -> dict:
    args = parse(argv)
    if args.evaluate is not None:
        return evaluate_file(args)
    return pretrain(args)


if __name__ == "__main__":
    main()
