"""Pre-training the book's own small BERT (chapter 8): a WordPiece vocabulary, the masked-LM head tied
to the token table, the next-sentence head on the pooled [CLS] (the pair sampler is ``data.pairs``), and the loader of
the checkpoints that ``scripts/data/pretrain_bert.py`` writes. Asking the model lives in ``mlm``."""

from __future__ import annotations

import json
from collections import OrderedDict
from dataclasses import fields
from importlib import resources
from pathlib import Path
from typing import Any

import torch
import torch.nn.functional as F
from torch import nn

from attention_to_bert.bert import BertConfig, BertModel, init_weights
from attention_to_bert.data.vocabulary import pad_sequences
from attention_to_bert.validate import (
    check_fraction,
    check_instance,
    check_int,
    check_mask,
    check_strings,
    check_token_ids,
)

try:
    from importlib.resources.abc import Traversable
except ImportError:  # Python 3.10
    from importlib.abc import Traversable

# The shipped checkpoint, read through importlib.resources (from a checkout or a wheel); PRETRAINED is
# where scripts/data/pretrain_bert.py writes it in a checkout.
SHIPPED = resources.files("attention_to_bert").joinpath("pretrained")
PRETRAINED = Path(__file__).resolve().parent / "pretrained"
DICTIONARY = Path(__file__).resolve().parent / "pretrained_dictionary"  # the first, WordNet only
SPECIAL_TOKENS = ("[PAD]", "[UNK]", "[CLS]", "[SEP]", "[MASK]")
IGNORE = -100  # the label of a position the loss skips (torch's cross_entropy ignore_index)


def train_wordpiece(texts: list[str], vocab_size: int = 8000) -> Any:
    """A lower-casing WordPiece tokenizer (``tokenizers.Tokenizer``) trained on ``texts``."""
    from tokenizers import BertWordPieceTokenizer

    check_strings("texts", texts)
    check_int("vocab_size", vocab_size, minimum=len(SPECIAL_TOKENS) + 1)
    tokenizer = BertWordPieceTokenizer(lowercase=True, strip_accents=True)
    tokenizer.train_from_iterator(
        texts, vocab_size=vocab_size, min_frequency=2, special_tokens=list(SPECIAL_TOKENS)
    )
    return tokenizer._tokenizer  # the plain Tokenizer: saves and loads as tokenizer.json


class BertForPreTraining(nn.Module):
    """``BertModel`` plus BERT's two pre-training heads, named like Hugging Face's:
    ``cls.predictions``, dense + GELU + LayerNorm, then scores against the token table (tied weights)
    plus a bias: masked-LM logits; ``cls.seq_relationship``, a linear layer on the pooled [CLS]:
    next-sentence logits (class 0 = B follows A, class 1 = B is a random sentence)."""

    def __init__(self, config: BertConfig) -> None:
        super().__init__()
        self.bert = BertModel(config)
        size = config.hidden_size
        transform = nn.Sequential(
            OrderedDict(
                dense=nn.Linear(size, size),
                transform_act_fn=nn.GELU(),
                LayerNorm=nn.LayerNorm(size, eps=config.layer_norm_eps),
            )
        )
        self.cls = nn.Module()
        self.cls.predictions = nn.Module()
        self.cls.predictions.transform = transform
        self.cls.predictions.bias = nn.Parameter(torch.zeros(config.vocab_size))
        self.cls.seq_relationship = nn.Linear(size, 2)
        self.cls.apply(lambda module: init_weights(module, config.initializer_range))

    def forward(
        self,
        input_ids: torch.Tensor,
        token_type_ids: torch.Tensor | None = None,
        attention_mask: torch.Tensor | None = None,
        positions: torch.Tensor | None = None,
    ) -> tuple[torch.Tensor, torch.Tensor]:
        """Return ``(mlm_logits, nsp_logits)``. With ``positions`` (bool, the shape of
        ``input_ids``) the vocabulary scores are computed only there, ``(num_true, vocab)``: the
        cheap way, as only masked positions enter the loss; without, ``(batch, seq, vocab)``.
        ``attention_mask`` is Hugging Face's (1 = real token), as ``BertModel``'s."""
        hidden = self.bert(input_ids, token_type_ids, attention_mask, output_attentions=False)[0]
        if positions is not None:
            check_mask("positions", positions, tuple(input_ids.shape), "True = score it")
        selected = hidden if positions is None else hidden[positions]
        table = self.bert.embeddings.word_embeddings.weight
        mlm = self.cls.predictions.transform(selected) @ table.T + self.cls.predictions.bias
        pooled = self.bert.pooler(hidden[:, 0])
        return mlm, self.cls.seq_relationship(pooled)


def encode_texts(tokenizer: Any, texts: list[str], max_length: int) -> torch.Tensor:
    """``[CLS] text [SEP]`` of each text as WordPiece ids, cut to ``max_length`` tokens and padded
    with 0 ([PAD]) to the longest: ``(len(texts), longest)``."""
    check_strings("texts", texts)
    check_int("max_length", max_length, minimum=2)  # room for [CLS] and [SEP]
    cls_id, sep_id = tokenizer.token_to_id("[CLS]"), tokenizer.token_to_id("[SEP]")
    encoded = tokenizer.encode_batch(texts, add_special_tokens=False)
    return pad_sequences([[cls_id, *e.ids[: max_length - 2], sep_id] for e in encoded])


def mask_tokens(
    input_ids: torch.Tensor,
    special: torch.Tensor,
    mask_id: int,
    vocab_size: int,
    generator: torch.Generator,
    probability: float = 0.15,
) -> tuple[torch.Tensor, torch.Tensor]:
    """BERT's masking: choose each non-special token with ``probability``; of those, 80% become
    [MASK], 10% a random token, 10% stay. Returns ``(inputs, labels)``, labels -100 where a token
    was not chosen. ``input_ids`` is not modified. ``special`` (the shape of ``input_ids``) is True
    where a token may not be chosen ([CLS], [SEP], padding)."""
    check_int("vocab_size", vocab_size, minimum=len(SPECIAL_TOKENS) + 1)
    check_token_ids("input_ids", input_ids, vocab_size)
    check_mask("special", special, tuple(input_ids.shape), "True = never chosen")
    check_int("mask_id", mask_id, 0, vocab_size - 1)
    check_fraction("probability", probability, one=True)
    shape, device = input_ids.shape, input_ids.device
    chosen = (torch.rand(shape, generator=generator, device=device) < probability) & ~special
    labels = torch.where(chosen, input_ids, torch.full_like(input_ids, IGNORE))
    roll = torch.rand(shape, generator=generator, device=device)
    randoms = torch.randint(
        len(SPECIAL_TOKENS), vocab_size, shape, generator=generator, device=device
    )
    inputs = torch.where(chosen & (roll < 0.8), torch.full_like(input_ids, mask_id), input_ids)
    inputs = torch.where(chosen & (roll >= 0.8) & (roll < 0.9), randoms, inputs)
    return inputs, labels


def pretraining_losses(
    model: BertForPreTraining, batch: dict[str, torch.Tensor], mask_id: int, generator
) -> tuple[torch.Tensor, torch.Tensor, torch.Tensor, torch.Tensor]:
    """Mask a batch: ``(mlm_loss, nsp_loss, mlm_correct, nsp_correct)``, the last two the counts of
    right top-1 guesses (tensors). A batch with no masked token has an MLM loss of 0, not NaN."""
    check_instance("model", getattr(model, "module", model), BertForPreTraining)  # or in DDP
    keys = ("input_ids", "token_type_ids", "attention_mask", "special", "nsp_labels")
    check_instance("batch", batch, dict, "a dict such as PairSampler.batch(size)")
    if not set(keys) <= set(batch):
        raise ValueError(f"batch must have the keys {keys}, got {tuple(batch)}")
    vocab_size = getattr(model, "module", model).bert.config.vocab_size  # DDP: pretrain_bert.py
    inputs, labels = mask_tokens(
        batch["input_ids"], batch["special"], mask_id, vocab_size, generator
    )
    positions = labels != IGNORE
    mlm, nsp = model(inputs, batch["token_type_ids"], batch["attention_mask"], positions)
    targets = labels[positions]
    mlm_loss = F.cross_entropy(mlm, targets) if len(targets) else mlm.sum() * 0
    nsp_labels = batch["nsp_labels"]
    has_pair = nsp_labels != IGNORE
    nsp_loss = (
        F.cross_entropy(nsp[has_pair], nsp_labels[has_pair]) if has_pair.any() else nsp.sum() * 0
    )
    mlm_correct = (mlm.argmax(-1) == targets).sum()
    nsp_correct = (nsp[has_pair].argmax(-1) == nsp_labels[has_pair]).sum()
    return mlm_loss, nsp_loss, mlm_correct, nsp_correct


@torch.no_grad()
def says_next(
    model: BertForPreTraining, tokenizer: Any, pairs: list[tuple[str, str]], cut: int = 22
) -> float:
    """The share of ``(A, B)`` text pairs that ``model``'s NSP head calls "B follows A" (class 0).
    Each pair is encoded as ``[CLS] A [SEP] B [SEP]`` (A cut to ``cut`` pieces, B to ``cut + 1``),
    padded, with segment 1 from B on; no position is asked for vocabulary scores."""
    check_instance("model", model, BertForPreTraining)
    if not pairs:
        raise ValueError("pairs must hold at least one (A, B) pair, got none")
    check_strings("pairs", [text for pair in pairs for text in pair])
    check_int("cut", cut, minimum=1)
    cls_id, sep_id = tokenizer.token_to_id("[CLS]"), tokenizer.token_to_id("[SEP]")
    rows, types = [], []
    for a, b in pairs:
        a_ids = tokenizer.encode(a, add_special_tokens=False).ids[:cut]
        b_ids = tokenizer.encode(b, add_special_tokens=False).ids[: cut + 1]
        rows.append([cls_id, *a_ids, sep_id, *b_ids, sep_id])
        types.append([0] * (len(a_ids) + 2) + [1] * (len(b_ids) + 1))
    ids, segments = pad_sequences(rows), pad_sequences(types)
    nothing = torch.zeros_like(ids, dtype=torch.bool)  # no MLM question
    was_training = model.training
    _, nsp = model.eval()(ids, segments, (ids != 0).long(), nothing)
    model.train(was_training)  # the model's mode as it came
    return (nsp.argmax(-1) == 0).float().mean().item()


def load_tokenizer(folder: Path | str | Traversable = SHIPPED) -> Any:
    """The book's WordPiece tokenizer (``tokenizers.Tokenizer``) from ``folder`` (default: shipped)."""
    from tokenizers import Tokenizer

    return Tokenizer.from_str(_written(folder, "tokenizer.json").read_text(encoding="utf-8"))


def _written(folder: Path | str | Traversable, name: str) -> Traversable:
    """``folder/name``, which must exist (the pre-training script writes it)."""
    if isinstance(folder, str):
        folder = Path(folder)
    check_instance("folder", folder, Traversable, "a path")
    path = folder.joinpath(name)
    if not path.is_file():
        raise FileNotFoundError(
            f"folder: {path} is missing (python scripts/data/pretrain_bert.py writes it)"
        )
    return path


def load_pretrained(
    folder: Path | str | Traversable = SHIPPED,
) -> tuple[BertForPreTraining, Any, dict]:
    """``(model, tokenizer, info)``: the book's pre-trained BERT with both heads from ``folder`` (the
    shipped checkpoint by default), in eval mode; ``info``: the rest of ``config.json`` (steps, losses)."""
    from safetensors.torch import load as load_weights

    weights = _written(folder, "model.safetensors").read_bytes()
    info = json.loads(_written(folder, "config.json").read_text(encoding="utf-8"))
    known = {field.name for field in fields(BertConfig)}
    config = BertConfig(**{k: v for k, v in info.pop("config").items() if k in known})
    model = BertForPreTraining(config)
    model.load_state_dict(load_weights(weights), strict=True)
    return model.eval(), load_tokenizer(folder), info


def unigram_counts(documents: list[list[list[int]]], vocab_size: int) -> torch.Tensor:
    """How often each token id occurs in the (encoded) corpus: the unigram baseline's model."""
    check_int("vocab_size", vocab_size)
    ids = [token for doc in documents for sentence in doc for token in sentence]
    if not all(type(token) is int for token in ids):
        raise TypeError("documents must be lists of sentences of int token ids")
    ids = torch.tensor(ids, dtype=torch.long)
    check_token_ids("documents", ids, vocab_size, axes="(tokens)")
    return torch.bincount(ids, minlength=vocab_size)
