"""Multi-head attention (chapter 5): masks, splitting into heads, and ``MultiHeadAttention``.

- ``causal_mask``, ``padding_mask_from_ids``: boolean masks, ``True`` = "may not attend".
- ``split_heads`` / ``merge_heads``: ``(batch, seq, d_model)`` <-> ``(batch, heads, seq, head_dim)``;
  BERT (``bert.py``) uses the same two.
- ``MultiHeadAttention``: equal to ``torch.nn.MultiheadAttention(batch_first=True)`` after
  ``from_torch``, except that a fully masked query row gives zero weights and a zero output instead
  of NaN (it uses ``attention.masked_softmax``). Only torch's stacked ``in_proj_weight``
  ``[W_q; W_k; W_v]`` is split into our ``q_proj``, ``k_proj``, ``v_proj``.
"""

from __future__ import annotations

import torch
import torch.nn.functional as F
from torch import nn

from attention_to_bert.attention import masked_softmax
from attention_to_bert.validate import (
    check_fraction,
    check_int,
    check_mask,
    check_tensor,
    check_token_ids,
)


def causal_mask(size: int, device: torch.device | str | None = None) -> torch.Tensor:
    """A ``(size, size)`` bool mask, ``True`` above the diagonal: position i may not attend to j > i."""
    check_int("size", size)
    return torch.ones(size, size, dtype=torch.bool, device=device).triu(diagonal=1)


def padding_mask_from_ids(token_ids: torch.Tensor, pad_id: int = 0) -> torch.Tensor:
    """A ``(batch, seq)`` bool mask, ``True`` where ``token_ids`` is padding: the key_padding_mask to pass."""
    check_token_ids("token_ids", token_ids)
    return token_ids == pad_id


def split_heads(x: torch.Tensor, num_heads: int) -> torch.Tensor:
    """``(batch, seq, d_model)`` -> ``(batch, heads, seq, d_model // heads)``: head h gets features h*d..(h+1)*d."""
    if x.dim() != 3:
        raise ValueError(f"split_heads expects (batch, seq, d_model), got shape {tuple(x.shape)}")
    batch, seq, d_model = x.shape
    if d_model % num_heads != 0:
        raise ValueError(f"d_model={d_model} is not divisible by num_heads={num_heads}")
    return x.view(batch, seq, num_heads, d_model // num_heads).transpose(1, 2)


def merge_heads(x: torch.Tensor) -> torch.Tensor:
    """``(batch, heads, seq, head_dim)`` -> ``(batch, seq, heads * head_dim)``: the inverse of ``split_heads``."""
    if x.dim() != 4:
        raise ValueError(
            f"merge_heads expects (batch, heads, seq, head_dim), got shape {tuple(x.shape)}"
        )
    batch, heads, seq, head_dim = x.shape
    return x.transpose(1, 2).reshape(batch, seq, heads * head_dim)


_MASK_HINT = "use causal_mask(size) or padding_mask_from_ids(token_ids)"


class MultiHeadAttention(nn.Module):
    """Multi-head scaled dot-product attention, batch-first, like ``nn.MultiheadAttention(batch_first=True)``.

    ``forward(query, key, value, key_padding_mask=None, attn_mask=None) -> (output, weights)``

    - ``query`` ``(batch, query_len, d_model)``; ``key``, ``value`` ``(batch, key_len, d_model)``.
    - ``key_padding_mask``: bool ``(batch, key_len)``, ``True`` marks padding keys.
    - ``attn_mask``: bool, ``True`` = may not attend, of shape ``(query_len, key_len)`` (same for all),
      ``(batch, query_len, key_len)`` (per example), ``(batch * heads, query_len, key_len)`` (torch's per-head
      layout) or ``(batch, heads, query_len, key_len)``.
    - ``output`` ``(batch, query_len, d_model)``; ``weights`` ``(batch, heads, query_len, key_len)``, the per-head
      weights actually used (after dropout, as torch returns them).

    A query row whose keys are all masked gets zero weights and a zero output row (torch gives NaN).
    """

    def __init__(
        self, d_model: int, num_heads: int, dropout: float = 0.0, bias: bool = True
    ) -> None:
        super().__init__()
        check_int("num_heads", num_heads)
        if d_model % num_heads != 0:
            raise ValueError(
                f"d_model={d_model} must be divisible by num_heads={num_heads} (each head gets d_model // num_heads "
                f"features); try num_heads in {[h for h in range(1, d_model + 1) if d_model % h == 0][:8]}"
            )
        check_fraction("dropout", dropout)
        self.d_model, self.num_heads, self.head_dim = d_model, num_heads, d_model // num_heads
        self.dropout = dropout
        self.q_proj = nn.Linear(d_model, d_model, bias=bias)
        self.k_proj = nn.Linear(d_model, d_model, bias=bias)
        self.v_proj = nn.Linear(d_model, d_model, bias=bias)
        self.out_proj = nn.Linear(d_model, d_model, bias=bias)
        for projection in (self.q_proj, self.k_proj, self.v_proj):
            nn.init.xavier_uniform_(projection.weight)
            if bias:
                nn.init.zeros_(projection.bias)
        if bias:
            nn.init.zeros_(self.out_proj.bias)

    def extra_repr(self) -> str:
        return f"d_model={self.d_model}, num_heads={self.num_heads}, dropout={self.dropout}"

    def _check_inputs(self, query, key, value) -> None:
        for name, tensor in (("query", query), ("key", key), ("value", value)):
            check_tensor(
                name, tensor, floating=True, dim=3, axes=f"(batch, seq, d_model={self.d_model})"
            )
            if tensor.shape[-1] != self.d_model:
                raise ValueError(
                    f"{name}'s last dimension must be d_model={self.d_model}, got {tensor.shape[-1]}"
                )
        if not query.shape[0] == key.shape[0] == value.shape[0]:
            raise ValueError(
                "query, key and value must have the same batch size, "
                f"got {query.shape[0]}, {key.shape[0]}, {value.shape[0]}"
            )
        if key.shape[1] != value.shape[1]:
            raise ValueError(
                f"key and value must have the same length, got {key.shape[1]} and {value.shape[1]}"
            )

    def combined_mask(
        self, batch: int, query_len: int, key_len: int, key_padding_mask=None, attn_mask=None
    ):
        """Both masks merged into one bool mask broadcastable to ``(batch, heads, query_len, key_len)``, or None."""
        mask = None
        if key_padding_mask is not None:
            check_mask("key_padding_mask", key_padding_mask, hint=_MASK_HINT)
            if tuple(key_padding_mask.shape) != (batch, key_len):
                raise ValueError(
                    f"key_padding_mask must have shape (batch, key_len) = {(batch, key_len)}, "
                    f"got {tuple(key_padding_mask.shape)}"
                )
            mask = key_padding_mask[:, None, None, :]
        if attn_mask is not None:
            check_mask("attn_mask", attn_mask, hint=_MASK_HINT)
            heads, shape = self.num_heads, tuple(attn_mask.shape)
            if shape == (query_len, key_len):
                attn_mask = attn_mask[None, None]
            elif shape == (batch, query_len, key_len):
                attn_mask = attn_mask[:, None]
            elif shape == (batch * heads, query_len, key_len):
                attn_mask = attn_mask.view(batch, heads, query_len, key_len)
            elif shape != (batch, heads, query_len, key_len):
                raise ValueError(
                    f"attn_mask must have shape (query_len, key_len) = {(query_len, key_len)}, "
                    f"(batch, query_len, key_len) = {(batch, query_len, key_len)}, "
                    f"(batch * heads, query_len, key_len) = {(batch * heads, query_len, key_len)} or "
                    f"(batch, heads, query_len, key_len) = {(batch, heads, query_len, key_len)}, got {shape}"
                )
            mask = attn_mask if mask is None else mask | attn_mask
        return mask

    def _projected_self_attention_inputs(
        self, x: torch.Tensor
    ) -> tuple[torch.Tensor, torch.Tensor, torch.Tensor]:
        """``q_proj(x), k_proj(x), v_proj(x)`` in one matrix product with the three weights stacked.

        The same numbers as three separate products, but faster (one larger product, and one gradient for ``x``
        in the backward pass instead of three to add up).
        """
        weight = torch.cat([self.q_proj.weight, self.k_proj.weight, self.v_proj.weight])
        bias = (
            None
            if self.q_proj.bias is None
            else torch.cat([self.q_proj.bias, self.k_proj.bias, self.v_proj.bias])
        )
        return F.linear(x, weight, bias).chunk(3, dim=-1)

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
        mask = self.combined_mask(batch, query_len, key_len, key_padding_mask, attn_mask)
        # self-attention: one (d_model -> 3 d_model) product, as torch does
        if query is key and key is value:
            q, k, v = self._projected_self_attention_inputs(query)
        else:
            q, k, v = self.q_proj(query), self.k_proj(key), self.v_proj(value)
        q = split_heads(q, self.num_heads)  # (batch, heads, query_len, head_dim)
        k = split_heads(k, self.num_heads)  # (batch, heads, key_len, head_dim)
        v = split_heads(v, self.num_heads)
        # (batch, heads, query_len, key_len)
        scores = (q * self.head_dim**-0.5) @ k.transpose(-2, -1)
        weights = masked_softmax(scores, mask)  # a fully masked row gets zero weights, not NaN
        weights = F.dropout(weights, p=self.dropout, training=self.training)
        context = weights @ v  # (batch, heads, query_len, head_dim)
        output = self.out_proj(merge_heads(context))
        # a query that may attend to nothing outputs zeros (not the out_proj bias)
        if mask is not None:
            fully_masked = mask.all(dim=-1).all(dim=1).expand(batch, query_len)
            output = output.masked_fill(fully_masked[..., None], 0.0)
        return output, weights

    @torch.no_grad()
    def copy_from_torch(self, m: nn.MultiheadAttention) -> MultiHeadAttention:
        """Copy the weights of ``m`` into this module (torch's ``in_proj_weight`` is ``[W_q; W_k; W_v]``)."""
        if not isinstance(m, nn.MultiheadAttention):
            raise TypeError(f"expected an nn.MultiheadAttention, got {type(m).__name__}")
        if (m.embed_dim, m.num_heads) != (self.d_model, self.num_heads):
            raise ValueError(
                f"shape mismatch: ours has d_model={self.d_model}, num_heads={self.num_heads}; "
                f"torch's has embed_dim={m.embed_dim}, num_heads={m.num_heads}"
            )
        if not m._qkv_same_embed_dim or m.bias_k is not None or m.add_zero_attn:
            raise ValueError(
                "only nn.MultiheadAttention without kdim/vdim, add_bias_kv or add_zero_attn can be copied"
            )
        has_bias = m.in_proj_bias is not None
        if has_bias != (self.q_proj.bias is not None):
            raise ValueError(
                f"bias mismatch: torch's module has bias={has_bias}, ours has bias={not has_bias}"
            )
        for index, projection in enumerate((self.q_proj, self.k_proj, self.v_proj)):
            rows = slice(index * self.d_model, (index + 1) * self.d_model)
            projection.weight.copy_(m.in_proj_weight[rows])
            if has_bias:
                projection.bias.copy_(m.in_proj_bias[rows])
        self.out_proj.weight.copy_(m.out_proj.weight)
        if has_bias:
            self.out_proj.bias.copy_(m.out_proj.bias)
        return self

    @classmethod
    def from_torch(cls, m: nn.MultiheadAttention) -> MultiHeadAttention:
        """A new ``MultiHeadAttention`` with the weights (and dropout) of ``m``.

        Our module is batch-first: compare it with ``nn.MultiheadAttention(batch_first=True)`` (the weights do
        not depend on ``batch_first``, only the input layout does).
        """
        if not isinstance(m, nn.MultiheadAttention):
            raise TypeError(f"expected an nn.MultiheadAttention, got {type(m).__name__}")
        if not m._qkv_same_embed_dim:
            raise ValueError(
                "only nn.MultiheadAttention without kdim/vdim (keys, values of width d_model) is copied"
            )
        ours = cls(m.embed_dim, m.num_heads, dropout=m.dropout, bias=m.in_proj_bias is not None)
        ours = ours.to(device=m.in_proj_weight.device, dtype=m.in_proj_weight.dtype)
        return ours.copy_from_torch(m).train(m.training)
