"""The Transformer of Vaswani et al. (2017), small and plain: batch-first, post-LN, ReLU.

Pieces, bottom up (chapters 5 and 6):

- ``PositionalEncoding`` (sinusoidal) and ``LearnedPositionalEncoding``: add position information.
- ``causal_mask``, ``padding_mask_from_ids``: boolean masks, ``True`` = "may not attend".
- ``split_heads`` / ``merge_heads``: ``(batch, seq, d_model)`` <-> ``(batch, heads, seq, head_dim)``.
- ``MultiHeadAttention``: equal to ``torch.nn.MultiheadAttention(batch_first=True)`` after ``from_torch``,
  except that a fully masked query row gives zero weights and a zero output instead of NaN.
- ``EncoderLayer``, ``DecoderLayer``, ``Transformer``: equal to their ``torch.nn`` twins (post-LN, ReLU)
  after ``from_torch``; every forward also returns the attention weights of each layer.

Submodules carry torch's names (``self_attn``, ``multihead_attn``, ``linear1``, ``linear2``, ``norm1``..``norm3``),
so that copying weights is a plain name map; only torch's stacked ``in_proj_weight`` ``[W_q; W_k; W_v]`` is split
into our ``q_proj``, ``k_proj``, ``v_proj``.
"""

from __future__ import annotations

import math

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

# --- Masks and head reshaping ---


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


# --- Positional encodings ---


def _check_sequence(x: torch.Tensor, d_model: int, max_len: int, who: str) -> None:
    if not isinstance(x, torch.Tensor) or x.dim() != 3:
        got = tuple(x.shape) if isinstance(x, torch.Tensor) else type(x).__name__
        raise ValueError(f"{who} expects x of shape (batch, seq, d_model={d_model}), got {got}")
    if x.shape[-1] != d_model:
        raise ValueError(f"{who}: x's last dimension must be d_model={d_model}, got {x.shape[-1]}")
    if x.shape[1] > max_len:
        raise ValueError(
            f"{who}: sequence length {x.shape[1]} exceeds max_len={max_len}; build it with a larger max_len"
        )


class PositionalEncoding(nn.Module):
    """Adds the sinusoidal encoding: PE[pos, 2i] = sin(pos / 10000^(2i/d)), PE[pos, 2i+1] = cos(...).

    The table is the buffer ``pe`` of shape ``(max_len, d_model)`` (not saved in the state dict: it is
    computed). ``forward(x)`` returns ``dropout(x + pe[:seq])`` for ``x`` of shape ``(batch, seq, d_model)``.
    """

    def __init__(self, d_model: int, max_len: int = 512, dropout: float = 0.0) -> None:
        super().__init__()
        check_int("d_model", d_model)
        check_int("max_len", max_len)
        self.d_model, self.max_len = d_model, max_len
        position = torch.arange(max_len, dtype=torch.float32).unsqueeze(1)  # (max_len, 1)
        frequency = torch.exp(
            torch.arange(0, d_model, 2, dtype=torch.float32) * (-math.log(10000.0) / d_model)
        )
        pe = torch.zeros(max_len, d_model)
        pe[:, 0::2] = torch.sin(position * frequency)
        pe[:, 1::2] = torch.cos(position * frequency[: d_model // 2])
        self.register_buffer("pe", pe, persistent=False)
        self.dropout = nn.Dropout(dropout)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        _check_sequence(x, self.d_model, self.max_len, type(self).__name__)
        return self.dropout(x + self.pe[: x.shape[1]])


class LearnedPositionalEncoding(nn.Module):
    """Adds a learned vector per position (an ``nn.Embedding(max_len, d_model)``), as BERT does."""

    def __init__(self, d_model: int, max_len: int = 512, dropout: float = 0.0) -> None:
        super().__init__()
        self.d_model, self.max_len = d_model, max_len
        self.embedding = nn.Embedding(max_len, d_model)
        self.dropout = nn.Dropout(dropout)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        _check_sequence(x, self.d_model, self.max_len, type(self).__name__)
        positions = torch.arange(x.shape[1], device=x.device)
        return self.dropout(x + self.embedding(positions))


# --- Multi-head attention ---


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
            check_mask("key_padding_mask", key_padding_mask, (batch, key_len))
            mask = key_padding_mask[:, None, None, :]
        if attn_mask is not None:
            check_mask("attn_mask", attn_mask)
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
        if (
            query is key and key is value
        ):  # self-attention: one (d_model -> 3 d_model) product, as torch does
            q, k, v = self._projected_self_attention_inputs(query)
        else:
            q, k, v = self.q_proj(query), self.k_proj(key), self.v_proj(value)
        q = split_heads(q, self.num_heads)  # (batch, heads, query_len, head_dim)
        k = split_heads(k, self.num_heads)  # (batch, heads, key_len, head_dim)
        v = split_heads(v, self.num_heads)
        scores = (q * self.head_dim**-0.5) @ k.transpose(
            -2, -1
        )  # (batch, heads, query_len, key_len)
        weights = masked_softmax(scores, mask)  # a fully masked row gets zero weights, not NaN
        weights = F.dropout(weights, p=self.dropout, training=self.training)
        context = weights @ v  # (batch, heads, query_len, head_dim)
        output = self.out_proj(merge_heads(context))
        if (
            mask is not None
        ):  # a query that may attend to nothing outputs zeros (not the out_proj bias)
            fully_masked = (
                mask.all(dim=-1).all(dim=1).expand(batch, query_len)
            )  # (batch, query_len)
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


# --- Encoder and decoder layers (post-LN, as in the paper and torch.nn's default) ---


def _check_relu_post_ln(layer: nn.Module) -> None:
    if layer.norm_first:
        raise ValueError(
            "only post-LN layers (norm_first=False) can be copied: ours follow the paper"
        )
    if not (layer.activation is F.relu or isinstance(layer.activation, nn.ReLU)):
        raise ValueError(f"only ReLU layers can be copied, got activation {layer.activation}")


class EncoderLayer(nn.Module):
    """Self-attention -> Add & Norm -> feed-forward (ReLU) -> Add & Norm, like ``nn.TransformerEncoderLayer``.

    ``forward(x, key_padding_mask=None, attn_mask=None) -> (x, self_attention_weights)``.
    """

    def __init__(
        self,
        d_model: int,
        num_heads: int,
        d_ff: int,
        dropout: float = 0.0,
        layer_norm_eps: float = 1e-5,
    ):
        super().__init__()
        self.self_attn = MultiHeadAttention(d_model, num_heads, dropout=dropout)
        self.linear1 = nn.Linear(d_model, d_ff)
        self.dropout = nn.Dropout(dropout)
        self.linear2 = nn.Linear(d_ff, d_model)
        self.norm1 = nn.LayerNorm(d_model, eps=layer_norm_eps)
        self.norm2 = nn.LayerNorm(d_model, eps=layer_norm_eps)
        self.dropout1 = nn.Dropout(dropout)
        self.dropout2 = nn.Dropout(dropout)

    def feed_forward(self, x: torch.Tensor) -> torch.Tensor:
        return self.linear2(self.dropout(F.relu(self.linear1(x))))

    def forward(
        self,
        x: torch.Tensor,
        key_padding_mask: torch.Tensor | None = None,
        attn_mask: torch.Tensor | None = None,
    ) -> tuple[torch.Tensor, torch.Tensor | None]:
        attended, weights = self.self_attn(
            x, x, x, key_padding_mask=key_padding_mask, attn_mask=attn_mask
        )
        x = self.norm1(x + self.dropout1(attended))
        x = self.norm2(x + self.dropout2(self.feed_forward(x)))
        return x, weights

    @torch.no_grad()
    def copy_from_torch(self, layer: nn.TransformerEncoderLayer) -> EncoderLayer:
        if not isinstance(layer, nn.TransformerEncoderLayer):
            raise TypeError(f"expected an nn.TransformerEncoderLayer, got {type(layer).__name__}")
        _check_relu_post_ln(layer)
        self.self_attn.copy_from_torch(layer.self_attn)
        for name in ("linear1", "linear2", "norm1", "norm2"):
            getattr(self, name).load_state_dict(getattr(layer, name).state_dict())
        return self

    @classmethod
    def from_torch(cls, layer: nn.TransformerEncoderLayer) -> EncoderLayer:
        """A new ``EncoderLayer`` with the weights of a post-LN, ReLU ``nn.TransformerEncoderLayer``."""
        if not isinstance(layer, nn.TransformerEncoderLayer):
            raise TypeError(f"expected an nn.TransformerEncoderLayer, got {type(layer).__name__}")
        ours = cls(
            layer.linear1.in_features,
            layer.self_attn.num_heads,
            layer.linear1.out_features,
            dropout=layer.dropout.p,
            layer_norm_eps=layer.norm1.eps,
        )
        ours = ours.to(layer.linear1.weight.device, layer.linear1.weight.dtype)
        return ours.copy_from_torch(layer).train(layer.training)


class DecoderLayer(nn.Module):
    """Masked self-attention -> Add & Norm -> cross-attention on ``memory`` -> Add & Norm -> FFN -> Add & Norm.

    Like ``nn.TransformerDecoderLayer``: the queries of the cross-attention (``multihead_attn``) come from the
    decoder, its keys and values from the encoder's output ``memory``.
    ``forward(x, memory, tgt_mask=None, tgt_key_padding_mask=None, memory_key_padding_mask=None, memory_mask=None)
    -> (x, self_weights, cross_weights)``. Pass ``tgt_mask=causal_mask(tgt_len)`` when training a decoder.
    """

    def __init__(
        self,
        d_model: int,
        num_heads: int,
        d_ff: int,
        dropout: float = 0.0,
        layer_norm_eps: float = 1e-5,
    ):
        super().__init__()
        self.self_attn = MultiHeadAttention(d_model, num_heads, dropout=dropout)
        self.multihead_attn = MultiHeadAttention(d_model, num_heads, dropout=dropout)
        self.linear1 = nn.Linear(d_model, d_ff)
        self.dropout = nn.Dropout(dropout)
        self.linear2 = nn.Linear(d_ff, d_model)
        self.norm1 = nn.LayerNorm(d_model, eps=layer_norm_eps)
        self.norm2 = nn.LayerNorm(d_model, eps=layer_norm_eps)
        self.norm3 = nn.LayerNorm(d_model, eps=layer_norm_eps)
        self.dropout1 = nn.Dropout(dropout)
        self.dropout2 = nn.Dropout(dropout)
        self.dropout3 = nn.Dropout(dropout)

    def feed_forward(self, x: torch.Tensor) -> torch.Tensor:
        return self.linear2(self.dropout(F.relu(self.linear1(x))))

    def forward(
        self,
        x: torch.Tensor,
        memory: torch.Tensor,
        tgt_mask: torch.Tensor | None = None,
        tgt_key_padding_mask: torch.Tensor | None = None,
        memory_key_padding_mask: torch.Tensor | None = None,
        memory_mask: torch.Tensor | None = None,
    ) -> tuple[torch.Tensor, torch.Tensor | None, torch.Tensor | None]:
        attended, self_weights = self.self_attn(
            x, x, x, key_padding_mask=tgt_key_padding_mask, attn_mask=tgt_mask
        )
        x = self.norm1(x + self.dropout1(attended))
        attended, cross_weights = self.multihead_attn(
            x, memory, memory, key_padding_mask=memory_key_padding_mask, attn_mask=memory_mask
        )
        x = self.norm2(x + self.dropout2(attended))
        x = self.norm3(x + self.dropout3(self.feed_forward(x)))
        return x, self_weights, cross_weights

    @torch.no_grad()
    def copy_from_torch(self, layer: nn.TransformerDecoderLayer) -> DecoderLayer:
        if not isinstance(layer, nn.TransformerDecoderLayer):
            raise TypeError(f"expected an nn.TransformerDecoderLayer, got {type(layer).__name__}")
        _check_relu_post_ln(layer)
        self.self_attn.copy_from_torch(layer.self_attn)
        self.multihead_attn.copy_from_torch(layer.multihead_attn)
        for name in ("linear1", "linear2", "norm1", "norm2", "norm3"):
            getattr(self, name).load_state_dict(getattr(layer, name).state_dict())
        return self

    @classmethod
    def from_torch(cls, layer: nn.TransformerDecoderLayer) -> DecoderLayer:
        """A new ``DecoderLayer`` with the weights of a post-LN, ReLU ``nn.TransformerDecoderLayer``."""
        if not isinstance(layer, nn.TransformerDecoderLayer):
            raise TypeError(f"expected an nn.TransformerDecoderLayer, got {type(layer).__name__}")
        ours = cls(
            layer.linear1.in_features,
            layer.self_attn.num_heads,
            layer.linear1.out_features,
            dropout=layer.dropout.p,
            layer_norm_eps=layer.norm1.eps,
        )
        ours = ours.to(layer.linear1.weight.device, layer.linear1.weight.dtype)
        return ours.copy_from_torch(layer).train(layer.training)


# --- The encoder-decoder Transformer ---


class Transformer(nn.Module):
    """Encoder stack + final LayerNorm, decoder stack + final LayerNorm, exactly like ``nn.Transformer``.

    Works on vectors ``(batch, seq, d_model)`` (add embeddings and positions outside, as torch does).
    ``forward(src, tgt, ...) -> (output, {"encoder": [...], "decoder": [...], "cross": [...]})`` where each
    list holds one ``(batch, heads, query_len, key_len)`` weight tensor per layer.
    """

    def __init__(
        self,
        d_model: int = 512,
        num_heads: int = 8,
        num_encoder_layers: int = 6,
        num_decoder_layers: int = 6,
        d_ff: int = 2048,
        dropout: float = 0.1,
        layer_norm_eps: float = 1e-5,
    ) -> None:
        super().__init__()
        self.d_model, self.num_heads = d_model, num_heads
        self.encoder_layers = nn.ModuleList(
            EncoderLayer(d_model, num_heads, d_ff, dropout, layer_norm_eps)
            for _ in range(num_encoder_layers)
        )
        self.encoder_norm = nn.LayerNorm(d_model, eps=layer_norm_eps)
        self.decoder_layers = nn.ModuleList(
            DecoderLayer(d_model, num_heads, d_ff, dropout, layer_norm_eps)
            for _ in range(num_decoder_layers)
        )
        self.decoder_norm = nn.LayerNorm(d_model, eps=layer_norm_eps)
        for parameter in self.parameters():  # as nn.Transformer: Xavier-uniform for every matrix
            if parameter.dim() > 1:
                nn.init.xavier_uniform_(parameter)

    def encode(
        self,
        src: torch.Tensor,
        src_key_padding_mask: torch.Tensor | None = None,
        src_mask: torch.Tensor | None = None,
    ) -> tuple[torch.Tensor, list[torch.Tensor | None]]:
        """Run the encoder: ``(memory, [self-attention weights of each layer])``."""
        weights = []
        x = src
        for layer in self.encoder_layers:
            x, layer_weights = layer(x, key_padding_mask=src_key_padding_mask, attn_mask=src_mask)
            weights.append(layer_weights)
        return self.encoder_norm(x), weights

    def decode(
        self,
        tgt: torch.Tensor,
        memory: torch.Tensor,
        tgt_mask: torch.Tensor | None = None,
        tgt_key_padding_mask: torch.Tensor | None = None,
        memory_key_padding_mask: torch.Tensor | None = None,
        memory_mask: torch.Tensor | None = None,
    ) -> tuple[torch.Tensor, list[torch.Tensor | None], list[torch.Tensor | None]]:
        """Run the decoder: ``(output, [self-attention weights], [cross-attention weights])``, one per layer."""
        self_weights, cross_weights = [], []
        x = tgt
        for layer in self.decoder_layers:
            x, layer_self, layer_cross = layer(
                x, memory, tgt_mask, tgt_key_padding_mask, memory_key_padding_mask, memory_mask
            )
            self_weights.append(layer_self)
            cross_weights.append(layer_cross)
        return self.decoder_norm(x), self_weights, cross_weights

    def forward(
        self,
        src: torch.Tensor,
        tgt: torch.Tensor,
        src_mask: torch.Tensor | None = None,
        tgt_mask: torch.Tensor | None = None,
        memory_mask: torch.Tensor | None = None,
        src_key_padding_mask: torch.Tensor | None = None,
        tgt_key_padding_mask: torch.Tensor | None = None,
        memory_key_padding_mask: torch.Tensor | None = None,
    ) -> tuple[torch.Tensor, dict[str, list[torch.Tensor | None]]]:
        """Same argument order as ``nn.Transformer.forward``; returns ``(output, weights dict)``."""
        memory, encoder_weights = self.encode(src, src_key_padding_mask, src_mask)
        output, decoder_weights, cross_weights = self.decode(
            tgt, memory, tgt_mask, tgt_key_padding_mask, memory_key_padding_mask, memory_mask
        )
        return output, {
            "encoder": encoder_weights,
            "decoder": decoder_weights,
            "cross": cross_weights,
        }

    @classmethod
    def from_torch(cls, m: nn.Transformer) -> Transformer:
        """A new ``Transformer`` with the weights of ``m`` (post-LN, ReLU): layer by layer, then the final norms."""
        if not isinstance(m, nn.Transformer):
            raise TypeError(f"expected an nn.Transformer, got {type(m).__name__}")
        first = m.encoder.layers[0]
        ours = cls(
            d_model=m.d_model,
            num_heads=m.nhead,
            num_encoder_layers=len(m.encoder.layers),
            num_decoder_layers=len(m.decoder.layers),
            d_ff=first.linear1.out_features,
            dropout=first.dropout.p,
            layer_norm_eps=first.norm1.eps,
        ).to(first.linear1.weight.device, first.linear1.weight.dtype)
        if m.encoder.norm is None or m.decoder.norm is None:
            raise ValueError("nn.Transformer without final encoder/decoder norms is not supported")
        with torch.no_grad():
            for our_layer, torch_layer in zip(ours.encoder_layers, m.encoder.layers, strict=True):
                our_layer.copy_from_torch(torch_layer)
            for our_layer, torch_layer in zip(ours.decoder_layers, m.decoder.layers, strict=True):
                our_layer.copy_from_torch(torch_layer)
            ours.encoder_norm.load_state_dict(m.encoder.norm.state_dict())
            ours.decoder_norm.load_state_dict(m.decoder.norm.state_dict())
        return ours.train(m.training)
