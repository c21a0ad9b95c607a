"""Chapter 8's classifiers, in one place. For ``attention_to_bert.finetune``: Hugging Face's
``BertForSequenceClassification`` on our ``BertModel``, the encoders it starts from (the book's
everyday checkpoint or MiniLM), chapter 8.7's fine-tuning recipe, and the two baselines (TF-IDF and
static vectors, logistic regression). For the fine-tuning comparison on the UCI sentences (with
``experiments/ch08_finetune.py``, which adds the book's encoders and the last layer's features; its
splits are ``data.sentiment``'s): ``FeatureEncoder``, the frozen MiniLM encoder (``seq2seq.Encoder``
is the RNN's), ``mean_pool`` and its static ``features``."""

from __future__ import annotations

import copy
import math
from typing import Any

import numpy as np
import torch
import torch.nn.functional as F
from torch import nn

from attention_to_bert.bert import BertModel, init_weights, load_minilm
from attention_to_bert.validate import (
    check_choice,
    check_instance,
    check_int,
    check_strings,
    check_tensor,
)

TFIDF_C = (0.3, 1.0, 3.0, 10.0, 30.0, 100.0)
STATIC_C = (0.001, 0.01, 0.1, 1.0, 10.0)


class SequenceClassifier(nn.Module):
    """Hugging Face's ``BertForSequenceClassification`` on our ``BertModel``, with its names:
    ``bert``, then dropout and ``classifier`` (a linear layer) on the pooled [CLS]."""

    def __init__(self, bert: BertModel, num_labels: int) -> None:
        super().__init__()
        check_instance("bert", bert, BertModel)
        check_int("num_labels", num_labels, minimum=2)
        self.bert = bert
        self.dropout = nn.Dropout(bert.config.hidden_dropout_prob)
        self.classifier = nn.Linear(bert.config.hidden_size, num_labels)
        init_weights(self.classifier, bert.config.initializer_range)

    def forward(
        self,
        input_ids: torch.Tensor,
        token_type_ids: torch.Tensor | None = None,
        attention_mask: torch.Tensor | None = None,
    ) -> torch.Tensor:
        """The logits ``(batch, num_labels)``."""
        pooled = self.bert(input_ids, token_type_ids, attention_mask, output_attentions=False)
        return self.classifier(self.dropout(pooled.pooler_output))


def _load_encoder(model: str) -> tuple[BertModel, Any]:
    """``(encoder, tokenizer)``: the book's everyday checkpoint (``pretraining.load_pretrained()``)
    or all-MiniLM-L6-v2, dropout 0.1, and a Hugging Face tokenizer that adds [CLS] and [SEP]."""
    from attention_to_bert.bert import BertConfig

    if model == "book":
        from tokenizers.processors import TemplateProcessing
        from transformers import PreTrainedTokenizerFast

        from attention_to_bert.pretraining import load_pretrained

        pretrained, raw, _ = load_pretrained()
        encoder = pretrained.bert
        cls_id, sep_id = raw.token_to_id("[CLS]"), raw.token_to_id("[SEP]")
        raw.post_processor = TemplateProcessing(  # [CLS] text [SEP], as pre-training read it
            single="[CLS] $A [SEP]",
            pair="[CLS] $A [SEP] $B:1 [SEP]:1",
            special_tokens=[("[CLS]", cls_id), ("[SEP]", sep_id)],
        )
        tokenizer = PreTrainedTokenizerFast(
            tokenizer_object=raw,
            unk_token="[UNK]",
            pad_token="[PAD]",
            cls_token="[CLS]",
            sep_token="[SEP]",
            mask_token="[MASK]",
        )
    else:
        encoder, tokenizer = load_minilm()
    values = vars(encoder.config) | {
        "hidden_dropout_prob": 0.1,
        "attention_probs_dropout_prob": 0.1,
        "attn_implementation": "sdpa",  # the fused kernel, unless the weights are asked for
    }
    fresh = BertModel(BertConfig(**values))
    fresh.load_state_dict(encoder.state_dict())
    return fresh, tokenizer


def _encode(tokenizer: Any, texts: list[str], max_length: int) -> dict[str, torch.Tensor]:
    return tokenizer(
        texts, padding=True, truncation=True, max_length=max_length, return_tensors="pt"
    )


def _batches(encoded: dict, order: list[int], size: int):
    """Batches of ``encoded`` rows in ``order``, trimmed to their longest row."""
    for start in range(0, len(order), size):
        chosen = torch.tensor(order[start : start + size])
        mask = encoded["attention_mask"][chosen]
        width = int(mask.sum(1).max())
        yield chosen, encoded["input_ids"][chosen, :width], mask[:, :width]


@torch.no_grad()
def _predict_ids(classifier: SequenceClassifier, encoded: dict, batch_size: int = 64) -> np.ndarray:
    """The logits of every row of ``encoded`` (rows batched by length: no prediction changes)."""
    classifier.eval()
    lengths = encoded["attention_mask"].sum(1).tolist()
    order = sorted(range(len(lengths)), key=lengths.__getitem__)
    out = torch.zeros(len(lengths), classifier.classifier.out_features)
    for chosen, ids, mask in _batches(encoded, order, batch_size):
        out[chosen] = classifier(ids, None, mask)
    return out.numpy()


def _fine_tune(
    encoder: BertModel,
    num_labels: int,
    encoded: dict,
    targets: torch.Tensor,
    lr: float,
    seed: int,
    epochs: int = 10,
    min_steps: int = 100,
    batch_size: int = 16,
    progress: Any = None,
) -> SequenceClassifier:
    """A copy of ``encoder`` fine-tuned with a new classifier: AdamW (weight decay 0.01 on the
    matrices), linear warm-up over 10% of the steps to ``lr``, then linear decay to 0."""
    torch.manual_seed(seed)
    classifier = SequenceClassifier(copy.deepcopy(encoder), num_labels)
    count = len(targets)
    size = min(batch_size, count)
    per_epoch = math.ceil(count / size)
    steps = max(min_steps, epochs * per_epoch)
    decay = [p for p in classifier.parameters() if p.ndim > 1]
    rest = [p for p in classifier.parameters() if p.ndim <= 1]
    optimizer = torch.optim.AdamW(
        [{"params": decay, "weight_decay": 0.01}, {"params": rest, "weight_decay": 0.0}], lr=lr
    )
    warm = max(1, steps // 10)
    schedule = torch.optim.lr_scheduler.LambdaLR(
        optimizer, lambda s: (s + 1) / warm if s < warm else (steps - s) / (steps - warm)
    )
    generator = torch.Generator().manual_seed(seed)
    classifier.train()
    for step in range(steps):
        if step % per_epoch == 0:
            order = torch.randperm(count, generator=generator).tolist()
        start = (step % per_epoch) * size
        _, ids, mask = next(_batches(encoded, order[start : start + size], size))
        chosen = torch.tensor(order[start : start + size])
        loss = F.cross_entropy(classifier(ids, None, mask), targets[chosen])
        optimizer.zero_grad()
        loss.backward()
        optimizer.step()
        schedule.step()
        if progress is not None:
            progress.update(1)
    return classifier.eval()


def _fine_tune_steps(
    rows: int, epochs: int = 10, min_steps: int = 100, batch_size: int = 16
) -> int:
    """The number of steps ``_fine_tune`` takes on ``rows`` training rows."""
    return max(min_steps, epochs * math.ceil(rows / min(batch_size, rows)))


@torch.no_grad()
def _static_vectors(encoder: BertModel, encoded: dict, special_ids: list[int]) -> np.ndarray:
    """The mean of the input token embeddings of each row, [CLS], [SEP] and padding left out."""
    ids = encoded["input_ids"]
    keep = encoded["attention_mask"].bool() & ~torch.isin(ids, torch.tensor(special_ids))
    table = encoder.embeddings.word_embeddings(ids)
    weights = keep.unsqueeze(-1).to(table.dtype)
    return ((table * weights).sum(1) / weights.sum(1).clamp_min(1.0)).numpy()


def _choose_c(make, grid, x_train, y_train, x_val, y_val) -> tuple[float, dict, Any]:
    """The ``C`` of ``grid`` whose model scores best on validation (the first of a tie)."""
    scores, fitted = {}, {}
    for c in grid:
        fitted[c] = make(c).fit(x_train, y_train)
        scores[c] = float(fitted[c].score(x_val, y_val))
    best = max(grid, key=scores.__getitem__)
    return best, scores, fitted[best]


def _baselines(
    texts: list[str], targets: np.ndarray, split: np.ndarray, vectors: np.ndarray
) -> dict[str, dict]:
    """TF-IDF and static vectors, each with logistic regression, ``C`` chosen on validation: their
    predictions for every row, the ``C`` and the validation accuracy of each ``C``."""
    from sklearn.feature_extraction.text import TfidfVectorizer
    from sklearn.linear_model import LogisticRegression
    from sklearn.pipeline import make_pipeline
    from sklearn.preprocessing import StandardScaler

    train, val = split == "train", split == "validation"
    vectorizer = TfidfVectorizer(ngram_range=(1, 2), sublinear_tf=True)
    vectorizer.fit([t for t, keep in zip(texts, train, strict=True) if keep])
    x_all = vectorizer.transform(texts)
    results = {}
    for name, grid, x, make in (
        ("tfidf", TFIDF_C, x_all, lambda c: LogisticRegression(C=c, max_iter=2000)),
        (
            "static",
            STATIC_C,
            vectors,
            lambda c: make_pipeline(StandardScaler(), LogisticRegression(C=c, max_iter=2000)),
        ),
    ):
        c, scores, fitted = _choose_c(make, grid, x[train], targets[train], x[val], targets[val])
        results[name] = {"C": c, "validation": scores, "predicted": fitted.predict(x)}
    return results


class FeatureEncoder:
    """A BERT encoder of ``KINDS`` (all-MiniLM-L6-v2) and its tokenizer; ``FEATURES`` are the kinds of
    ``features`` it gives, one batch of ``texts`` at a time by ``_features``."""

    KINDS = ("minilm",)
    FEATURES = ("static",)

    def __init__(self, kind: str) -> None:
        check_choice("kind", kind, self.KINDS)
        self.kind = kind
        self.model, tokenizer = load_minilm("sdpa")
        self.tokenize = lambda texts: tokenizer(
            texts, padding=True, truncation=True, max_length=48, return_tensors="pt"
        )

    def _features(self, kind: str, texts: list[str]) -> torch.Tensor:
        batch = self.tokenize(texts)
        table = self.model.embeddings.word_embeddings
        mask = batch["attention_mask"].clone()
        mask[:, 0] = 0  # [CLS]
        mask[torch.arange(len(texts)), batch["attention_mask"].sum(1) - 1] = 0  # [SEP]
        return mean_pool(table(batch["input_ids"]), mask)


def mean_pool(hidden: torch.Tensor, mask: torch.Tensor) -> torch.Tensor:
    """The mean of ``hidden`` ``(batch, seq, size)`` over the positions where ``mask`` ``(batch,
    seq)`` is 1 (Hugging Face's attention_mask: 1 = real token, 0 = padding); a row with none gives
    0. A bool mask is refused: the book's bool masks hold True at padding, the opposite."""
    check_tensor("hidden", hidden, floating=True, dim=3, axes="(batch, seq, size)")
    check_tensor("mask", mask, shape=hidden.shape[:2], axes="(batch, seq)")
    if mask.dtype == torch.bool or ((mask != 0) & (mask != 1)).any():  # True = padding in the book
        raise ValueError(
            f"mask must be 0/1 (1 = real token; not bool), got {mask.unique().tolist()}"
        )
    weights = mask.unsqueeze(-1).to(hidden.dtype)
    return (hidden * weights).sum(1) / weights.sum(1).clamp_min(1.0)


@torch.no_grad()
def features(kind: str, encoder: FeatureEncoder, rows: list) -> np.ndarray:
    """The frozen ``encoder``'s features ``(len(rows), size)`` of ``(sentence, label)`` ``rows``:
    ``kind`` ``"static"``, the mean of the token table's rows (no [CLS]/[SEP]; 0 for an empty
    sentence), or another of ``encoder.FEATURES``."""
    check_instance("encoder", encoder, FeatureEncoder)
    check_choice("kind", kind, encoder.FEATURES)
    check_instance("rows", rows, list, "a list of (sentence, label) pairs")
    if not rows:
        raise ValueError("rows must hold at least one (sentence, label) pair, got none")
    check_strings(
        "rows' sentences", [row[0] if isinstance(row, tuple | list) else row for row in rows]
    )
    encoder.model.eval()
    texts = [s for s, _ in rows]
    batches = [texts[start : start + 64] for start in range(0, len(texts), 64)]
    return torch.cat([encoder._features(kind, batch) for batch in batches]).numpy()
