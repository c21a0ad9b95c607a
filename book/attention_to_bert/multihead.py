"""Multi-head attention (chapter 5): ``split_heads`` and ``merge_heads`` (checked; the layer calls
their ``_`` twins), ``MultiHeadAttention`` (``forward`` checks, ``_attend`` not), ``copy_torch_weights``."""

from __future__ import annotations

import re

import torch
import torch.nn.functional as F
from torch import nn

from attention_to_bert.masks import _masked_softmax, attends_to_nothing, combine_masks, weighted_sum
from attention_to_bert.validate import (
    check_device,
    check_divisible,
    check_fraction,
    check_instance,
    check_int,
    check_ints,
    check_same,
    check_tensor,
)


def split_heads(x: torch.Tensor, num_heads: int) -> torch.Tensor:
    """``(batch, seq, d_model)`` -> ``(batch, heads, seq, d_model // heads)``: head h gets features h*d..(h+1)*d."""
    check_tensor("x", x, dim=3, axes="(batch, seq, d_model)")
    check_int("num_heads", num_heads)
    check_divisible("d_model", x.shape[-1], "num_heads", num_heads)
    return _split_heads(x, num_heads)


def merge_heads(x: torch.Tensor) -> torch.Tensor:
    """``(batch, heads, seq, head_dim)`` -> ``(batch, seq, heads * head_dim)``: the inverse of ``split_heads``."""
    check_tensor("x", x, dim=4, axes="(batch, heads, seq, head_dim)")
    return _merge_heads(x)


def _split_heads(x: torch.Tensor, num_heads: int) -> torch.Tensor:  # split_heads, unchecked
    return x.unflatten(-1, (num_heads, -1)).transpose(1, 2)  # (batch, heads, seq, head_dim)


def _merge_heads(x: torch.Tensor) -> torch.Tensor:  # merge_heads, unchecked
    return x.transpose(1, 2).flatten(2)  # (batch, seq, heads, head_dim) -> (batch, seq, d_model)


class MultiHeadAttention(nn.Module):
    """Multi-head scaled dot-product attention, like ``nn.MultiheadAttention(batch_first=True)``.
    ``forward(query, key, value, key_padding_mask=None, attn_mask=None) -> (output, weights)``, with
    the masks of ``masks.combine_masks`` (True = may not attend); ``weights`` ``(batch, heads,
    query_len, key_len)`` as used (after dropout). A query that may attend to nothing gets zero
    weights and output (not NaN)."""

    def __init__(
        self, d_model: int, num_heads: int, dropout: float = 0.0, bias: bool = True
    ) -> None:
        super().__init__()
        check_ints(d_model=d_model, num_heads=num_heads)
        check_divisible("d_model", d_model, "num_heads", num_heads)
        check_fraction("dropout", dropout)
        self.d_model, self.num_heads, self.head_dim = d_model, num_heads, d_model // num_heads
        self.dropout = dropout
        self.q_proj, self.k_proj, self.v_proj, self.out_proj = (
            nn.Linear(d_model, d_model, bias=bias) for _ in range(4)
        )
        for projection in (self.q_proj, self.k_proj, self.v_proj):
            nn.init.xavier_uniform_(projection.weight)
            if bias:
                nn.init.zeros_(projection.bias)
        if bias:
            nn.init.zeros_(self.out_proj.bias)

    def extra_repr(self) -> str:
        return f"d_model={self.d_model}, num_heads={self.num_heads}, dropout={self.dropout}"

    def _check_inputs(self, query, key, value) -> None:
        axes = f"(batch, seq, d_model={self.d_model})"
        for name, tensor in (("query", query), ("key", key), ("value", value)):
            check_tensor(name, tensor, floating=self.q_proj.weight.dtype, dim=3, axes=axes)
            if tensor.shape[-1] != self.d_model:
                raise ValueError(
                    f"{name}'s last dimension must be d_model={self.d_model}, got {tensor.shape[-1]}"
                )
        check_same("batch size", query=len(query), key=len(key), value=len(value))
        check_same("length", key=key.shape[1], value=value.shape[1])
        check_device("query", query, self)

    def forward(
        self,
        query: torch.Tensor,
        key: torch.Tensor,
        value: torch.Tensor,
        key_padding_mask: torch.Tensor | None = None,
        attn_mask: torch.Tensor | None = None,
    ) -> tuple[torch.Tensor, torch.Tensor]:
        self._check_inputs(query, key, value)
        batch, query_len, key_len = query.shape[0], query.shape[1], key.shape[1]
        mask = combine_masks(  # (batch, 1 or heads, 1 or query_len, key_len), or None
            batch, query_len, key_len, self.num_heads, device=query.device,
            key_padding_mask=key_padding_mask, attn_mask=attn_mask,
        )  # fmt: skip
        return self._attend(query, key, value, mask)

    def _attend(
        self, query: torch.Tensor, key: torch.Tensor, value: torch.Tensor, mask: torch.Tensor | None
    ) -> tuple[torch.Tensor, torch.Tensor]:
        """``forward`` unchecked, for a stack that checked its inputs and combined its masks once
        (``masks.combine_masks``): query ``(batch, query_len, d_model)``, key and value ``(batch,
        key_len, d_model)``, mask broadcastable to ``(batch, heads, query_len, key_len)`` or None."""
        if mask is not None:  # (..., query_len, key_len) -> (batch or 1, heads or 1, ...)
            mask = mask[(None,) * (4 - mask.dim())]
        if query is key and key is value:
            # self-attention: the three weights stacked, one (d_model -> 3 d_model) product as in
            # torch; the same numbers, but faster (and in the backward pass one gradient for x)
            projections = (self.q_proj, self.k_proj, self.v_proj)
            weight = torch.cat([projection.weight for projection in projections])
            bias = None if self.q_proj.bias is None else torch.cat([p.bias for p in projections])
            q, k, v = F.linear(query, weight, bias).chunk(3, dim=-1)
        else:
            q, k, v = self.q_proj(query), self.k_proj(key), self.v_proj(value)
        # (batch, len, d_model) -> (batch, heads, len, head_dim)
        q, k, v = (_split_heads(x, self.num_heads) for x in (q, k, v))
        # (batch, heads, query_len, key_len)
        scores = (q * self.head_dim**-0.5) @ k.transpose(-2, -1)
        weights = _masked_softmax(scores, mask)  # a fully masked row gets zero weights, not NaN
        weights = F.dropout(weights, p=self.dropout, training=self.training)
        # (batch, heads, query_len, head_dim) -> (batch, query_len, d_model)
        output = self.out_proj(_merge_heads(weighted_sum(weights, v, mask)))
        # a query that may attend to nothing (all keys masked, or no key at all) outputs zeros
        if key.shape[1] == 0:
            output = torch.zeros_like(output)
        elif mask is not None:
            output = output.masked_fill(attends_to_nothing(mask).all(dim=1), 0.0)
        return output, weights

    @classmethod
    def from_torch(cls, m: nn.MultiheadAttention) -> MultiHeadAttention:
        """A copy of ``m`` (weights, dropout, dtype, mode), to compare with it at ``batch_first=True``."""
        check_instance("m", m, nn.MultiheadAttention, "an nn.MultiheadAttention")
        if not m._qkv_same_embed_dim or m.bias_k is not None or m.add_zero_attn:
            raise ValueError(
                "only nn.MultiheadAttention without kdim/vdim, add_bias_kv or add_zero_attn can be copied"
            )
        ours = cls(m.embed_dim, m.num_heads, dropout=m.dropout, bias=m.in_proj_bias is not None)
        return copy_torch_weights(ours, m)


def copy_torch_weights(ours: nn.Module, twin: nn.Module) -> nn.Module:
    """``ours`` with the weights, dtype, device and mode of ``twin``, its ``torch.nn`` twin, whose names
    ours carry but for the two renamings below; strict loading checks every name and shape."""
    state = {}
    for name, tensor in twin.state_dict().items():
        # nn.Transformer's encoder.layers.0..., encoder.norm... are our encoder_layers.0..., encoder_norm...
        name = re.sub(r"^(encoder|decoder)\.(layers|norm)\.", r"\1_\2.", name)
        # torch's stacked in_proj [W_q; W_k; W_v] (weight or bias) is our q_proj, k_proj, v_proj
        if "in_proj_" in name:
            for part, letter in zip(tensor.chunk(3), "qkv", strict=True):
                state[name.replace("in_proj_", f"{letter}_proj.")] = part
        else:
            state[name] = tensor
    ours = ours.to(next(twin.parameters()))  # the twin's dtype and device
    try:
        ours.load_state_dict(state, strict=True)
    except RuntimeError as error:
        raise ValueError(f"twin must be the torch.nn twin of ours, got {error}") from None
    return ours.train(twin.training)
