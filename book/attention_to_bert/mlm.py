"""Masked-LM inference with the book's own BERT (chapter 8), in one place: ``fill_mask`` answers a
sentence with ``[MASK]`` in it, ``evaluate_mlm`` scores held-out text. Both wrap the text as
``[CLS] text [SEP]``, exactly as pre-training did (``pretraining.encode_texts``), and both read the
scores of ``masked_scores``, which never proposes a special token."""

from __future__ import annotations

import math
from pathlib import Path
from typing import Any

import torch

from attention_to_bert.pretraining import (
    IGNORE,
    PRETRAINED,
    SPECIAL_TOKENS,
    BertForPreTraining,
    encode_texts,
    load_pretrained,
    mask_tokens,
)
from attention_to_bert.validate import check_int, check_ints, check_strings, check_tensor

_LOADED: dict[str, tuple[BertForPreTraining, Any]] = {}


@torch.no_grad()
def masked_scores(
    model: BertForPreTraining, inputs: torch.Tensor, positions: torch.Tensor
) -> torch.Tensor:
    """The vocabulary scores at ``positions`` (bool, True = score it), ``(num_true, vocab)``, on the
    CPU; padding (id 0) is masked out, special tokens score ``-inf``."""
    model.eval()
    device = next(model.parameters(), inputs).device
    inputs, positions = inputs.to(device), positions.to(device)
    logits, _ = model(inputs, None, (inputs != 0).long(), positions)
    logits = logits.float().cpu()
    logits[:, : len(SPECIAL_TOKENS)] = -math.inf
    return logits


def fill_mask(
    text: str,
    top_k: int = 5,
    model: BertForPreTraining | None = None,
    tokenizer: Any = None,
    folder: Path | str = PRETRAINED,
) -> list[list[str]]:
    """For each [MASK] in ``text``, the ``top_k`` pieces the model finds likeliest there, best
    first. The model is the book's pre-trained BERT in ``folder`` (loaded once), or ``model`` with
    its ``tokenizer`` (give both): ``fill_mask("the children [MASK] to school every morning .")``."""
    if not isinstance(text, str):
        raise TypeError(f"text must be a str, got {type(text).__name__}")
    if "[MASK]" not in text:  # an empty text too
        raise ValueError(f"text must contain [MASK] (upper case, in brackets), got {text!r}")
    if (model is None) != (tokenizer is None):
        raise ValueError("model and tokenizer must be given together, got only one of them")
    if model is None:
        key = str(Path(folder).resolve())
        if key not in _LOADED:
            _LOADED[key] = load_pretrained(folder)[:2]
        model, tokenizer = _LOADED[key]
    check_int("top_k", top_k, 1, model.bert.config.vocab_size - len(SPECIAL_TOKENS))
    limit = model.bert.config.max_position_embeddings
    length = len(tokenizer.encode(text, add_special_tokens=False).ids) + 2
    if length > limit:
        raise ValueError(f"text is {length} tokens long with [CLS] and [SEP]; at most {limit}")
    inputs = encode_texts(tokenizer, [text], limit)
    best = masked_scores(model, inputs, inputs == tokenizer.token_to_id("[MASK]")).topk(top_k)
    return [[tokenizer.id_to_token(int(i)) for i in row] for row in best.indices]


@torch.no_grad()
def evaluate_mlm(
    model: BertForPreTraining,
    tokenizer: Any,
    texts: list[str],
    unigram: torch.Tensor,
    seed: int = 0,
    batch_size: int = 64,
    max_length: int = 64,
    bert_rule: bool = False,
) -> dict[str, float]:
    """Mask 15% of the tokens of each text (seeded) by [MASK]: the model's top-1 and top-5 accuracy
    on them, the unigram baseline's (the corpus's most frequent tokens), and the number masked. With
    ``bert_rule=True`` the chosen tokens follow training's 80/10/10 rule instead, so 10% of the
    questions show their own answer (the model can copy it): an easier, inflated score."""
    check_strings("texts", texts)
    check_ints(batch_size=batch_size, max_length=max_length)
    texts = [t for t in texts if t.strip()]
    if not texts:
        raise ValueError("texts must hold at least one non-empty text, got none")
    vocab = tokenizer.get_vocab()
    check_tensor("unigram", unigram, shape=(len(vocab),), axes="(vocab_size,)")
    cls_id, sep_id, mask_id = vocab["[CLS]"], vocab["[SEP]"], vocab["[MASK]"]
    max_length = min(max_length, model.bert.config.max_position_embeddings)
    generator = torch.Generator().manual_seed(seed)
    best5 = unigram.clone()
    best5[: len(SPECIAL_TOKENS)] = -1
    best5 = best5.topk(5).indices
    hits = {"top1": 0, "top5": 0, "unigram_top1": 0, "unigram_top5": 0}
    total = 0
    for start in range(0, len(texts), batch_size):
        ids = encode_texts(tokenizer, texts[start : start + batch_size], max_length)
        special = (ids == 0) | (ids == cls_id) | (ids == sep_id)
        inputs, labels = mask_tokens(ids, special, mask_id, len(vocab), generator)
        positions = labels != IGNORE
        if not bert_rule:
            inputs = torch.where(positions, torch.full_like(ids, mask_id), ids)
        top5 = masked_scores(model, inputs, positions).topk(5).indices
        targets = labels[positions]
        hits["top1"] += int((top5[:, 0] == targets).sum())
        hits["top5"] += int((top5 == targets[:, None]).any(-1).sum())
        hits["unigram_top1"] += int((targets == best5[0]).sum())
        hits["unigram_top5"] += int((targets[:, None] == best5).any(-1).sum())
        total += len(targets)
    if total == 0:
        raise ValueError("texts: no token was masked (texts too short); give more text")
    return {key: value / total for key, value in hits.items()} | {"masked": total}


def cloze_hits(
    rows: list[tuple[str, str]], top_k: int = 5, **model: Any
) -> list[tuple[str, str, list[str]]]:
    """``(sentence, answer, guesses)`` for cloze ``rows`` of ``(sentence with one [MASK],
    answer)``: the ``top_k`` guesses of ``fill_mask`` (``model``: its keyword arguments)."""
    return [(s, answer, fill_mask(s, top_k, **model)[0]) for s, answer in rows]
