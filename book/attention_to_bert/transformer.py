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

from attention_to_bert.attention import check_positive_int

# --- Masks and head reshaping ---


def causal_mask(size: int, device: torch.device | str | None = None) -> torch.Tensor:
    """A ``(size, size)`` bool mask, ``True`` above the diagonal: position i may not attend to j > i."""
    if not isinstance(size, int) or isinstance(size, bool):
        raise TypeError(f"size must be an int, got {type(size).__name__}")
    if size < 1:
        raise ValueError(f"size must be >= 1, got {size}")
    return torch.ones(size, size, dtype=torch.bool, device=device).triu(diagonal=1)


def padding_mask_from_ids(token_ids: torch.Tensor, pad_id: int = 0) -> torch.Tensor:
    """A ``(batch, seq)`` bool mask, ``True`` where ``token_ids`` is padding: the key_padding_mask to pass."""
    if not isinstance(token_ids, torch.Tensor) or token_ids.dtype.is_floating_point:
        got = token_ids.dtype if isinstance(token_ids, torch.Tensor) else type(token_ids).__name__
        raise TypeError(f"token_ids must be an integer tensor, got {got}")
    if token_ids.dim() != 2:
        raise ValueError(f"token_ids must have shape (batch, seq), got {tuple(token_ids.shape)}")
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
        raise ValueError(f"merge_heads expects (batch, heads, seq, head_dim), got shape {tuple(x.shape)}")
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
        if d_model < 1 or max_len < 1:
            raise ValueError(f"d_model and max_len must be >= 1, got d_model={d_model}, max_len={max_len}")
        self.d_model, self.max_len = d_model, max_len
        position = torch.arange(max_len, dtype=torch.float32).unsqueeze(1)  # (max_len, 1)
        frequency = torch.exp(torch.arange(0, d_model, 2, dtype=torch.float32) * (-math.log(10000.0) / d_model))
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


def _check_bool_mask(mask: torch.Tensor, name: str) -> None:
    if not isinstance(mask, torch.Tensor):
        raise TypeError(f"{name} must be a bool tensor (True = may not attend), got {type(mask).__name__}")
    if mask.dtype != torch.bool:
        raise TypeError(
            f"{name} must be a bool tensor (True = may not attend), got dtype {mask.dtype}; "
            "use causal_mask(size) or padding_mask_from_ids(token_ids)"
        )


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
    With ``use_sdpa=True`` the forward calls ``F.scaled_dot_product_attention`` (faster, same result) and
    returns ``None`` for the weights.
    """

    def __init__(
        self, d_model: int, num_heads: int, dropout: float = 0.0, bias: bool = True, use_sdpa: bool = False
    ) -> None:
        super().__init__()
        check_positive_int("num_heads", num_heads)
        if d_model % num_heads != 0:
            raise ValueError(
                f"d_model={d_model} must be divisible by num_heads={num_heads} (each head gets d_model // num_heads "
                f"features); try num_heads in {[h for h in range(1, d_model + 1) if d_model % h == 0][:8]}"
            )
        if not 0.0 <= dropout < 1.0:
            raise ValueError(f"dropout must be in [0, 1), got {dropout}")
        self.d_model, self.num_heads, self.head_dim = d_model, num_heads, d_model // num_heads
        self.dropout, self.use_sdpa = dropout, use_sdpa
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
            if not isinstance(tensor, torch.Tensor):
                raise TypeError(f"{name} must be a torch.Tensor, got {type(tensor).__name__}")
            if not tensor.dtype.is_floating_point:
                raise TypeError(f"{name} must be a floating-point tensor, got {tensor.dtype} (embed token ids first)")
            if tensor.dim() != 3:
                raise ValueError(
                    f"{name} must have shape (batch, seq, d_model={self.d_model}), got {tuple(tensor.shape)}"
                )
            if tensor.shape[-1] != self.d_model:
                raise ValueError(f"{name}'s last dimension must be d_model={self.d_model}, got {tensor.shape[-1]}")
        if not query.shape[0] == key.shape[0] == value.shape[0]:
            raise ValueError(
                "query, key and value must have the same batch size, "
                f"got {query.shape[0]}, {key.shape[0]}, {value.shape[0]}"
            )
        if key.shape[1] != value.shape[1]:
            raise ValueError(f"key and value must have the same length, got {key.shape[1]} and {value.shape[1]}")

    def combined_mask(self, batch: int, query_len: int, key_len: int, key_padding_mask=None, attn_mask=None):
        """Both masks merged into one bool mask broadcastable to ``(batch, heads, query_len, key_len)``, or None."""
        mask = None
        if key_padding_mask is not None:
            _check_bool_mask(key_padding_mask, "key_padding_mask")
            if tuple(key_padding_mask.shape) != (batch, key_len):
                raise ValueError(
                    f"key_padding_mask must have shape (batch, key_len) = {(batch, key_len)}, "
                    f"got {tuple(key_padding_mask.shape)}"
                )
            mask = key_padding_mask[:, None, None, :]
        if attn_mask is not None:
            _check_bool_mask(attn_mask, "attn_mask")
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

    def _projected_self_attention_inputs(self, x: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor, torch.Tensor]:
        """``q_proj(x), k_proj(x), v_proj(x)`` in one matrix product with the three weights stacked.

        The same numbers as three separate products, but faster (one larger product, and one gradient for ``x``
        in the backward pass instead of three to add up).
        """
        weight = torch.cat([self.q_proj.weight, self.k_proj.weight, self.v_proj.weight])
        bias = None if self.q_proj.bias is None else torch.cat([self.q_proj.bias, self.k_proj.bias, self.v_proj.bias])
        return F.linear(x, weight, bias).chunk(3, dim=-1)

    def forward(
        self,
        query: torch.Tensor,
        key: torch.Tensor,
        value: torch.Tensor,
        key_padding_mask: torch.Tensor | None = None,
        attn_mask: torch.Tensor | None = None,
    ) -> tuple[torch.Tensor, torch.Tensor | None]:
        self._check_inputs(query, key, value)
        batch, query_len, key_len = query.shape[0], query.shape[1], key.shape[1]
        mask = self.combined_mask(batch, query_len, key_len, key_padding_mask, attn_mask)
        if query is key and key is value:  # self-attention: one (d_model -> 3 d_model) product, as torch does
            q, k, v = self._projected_self_attention_inputs(query)
        else:
            q, k, v = self.q_proj(query), self.k_proj(key), self.v_proj(value)
        q = split_heads(q, self.num_heads)  # (batch, heads, query_len, head_dim)
        k = split_heads(k, self.num_heads)  # (batch, heads, key_len, head_dim)
        v = split_heads(v, self.num_heads)
        dropout = self.dropout if self.training else 0.0
        weights = None
        if self.use_sdpa:
            additive = None
            if mask is not None:  # a finite "minus infinity": a fully masked row stays finite (zeroed below)
                additive = torch.zeros(mask.shape, dtype=q.dtype, device=q.device)
                additive = additive.masked_fill(mask, torch.finfo(q.dtype).min)
            context = F.scaled_dot_product_attention(q, k, v, attn_mask=additive, dropout_p=dropout)
        else:
            scores = (q * self.head_dim**-0.5) @ k.transpose(-2, -1)  # (batch, heads, query_len, key_len)
            if mask is not None:
                scores = scores.masked_fill(mask, torch.finfo(scores.dtype).min)
            weights = scores.softmax(dim=-1)
            if mask is not None:  # a fully masked row was uniform: make it zero (masked entries are exp(-inf) = 0)
                weights = weights.masked_fill(mask, 0.0)
            weights = F.dropout(weights, p=dropout, training=self.training)
            context = weights @ v  # (batch, heads, query_len, head_dim)
        if mask is not None and self.use_sdpa:
            context = context.masked_fill(mask.all(dim=-1, keepdim=True), 0.0)
        output = self.out_proj(merge_heads(context))
        if mask is not None:  # a query that may attend to nothing outputs zeros (not the out_proj bias)
            fully_masked = mask.all(dim=-1).all(dim=1).expand(batch, query_len)  # (batch, query_len)
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
            raise ValueError("only nn.MultiheadAttention without kdim/vdim, add_bias_kv or add_zero_attn can be copied")
        has_bias = m.in_proj_bias is not None
        if has_bias != (self.q_proj.bias is not None):
            raise ValueError(f"bias mismatch: torch's module has bias={has_bias}, ours has bias={not has_bias}")
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
            raise ValueError("only nn.MultiheadAttention without kdim/vdim (keys, values of width d_model) is copied")
        ours = cls(m.embed_dim, m.num_heads, dropout=m.dropout, bias=m.in_proj_bias is not None)
        ours = ours.to(device=m.in_proj_weight.device, dtype=m.in_proj_weight.dtype)
        return ours.copy_from_torch(m).train(m.training)


# --- Encoder and decoder layers (post-LN, as in the paper and torch.nn's default) ---


def _check_relu_post_ln(layer: nn.Module) -> None:
    if layer.norm_first:
        raise ValueError("only post-LN layers (norm_first=False) can be copied: ours follow the paper")
    if not (layer.activation is F.relu or isinstance(layer.activation, nn.ReLU)):
        raise ValueError(f"only ReLU layers can be copied, got activation {layer.activation}")


class EncoderLayer(nn.Module):
    """Self-attention -> Add & Norm -> feed-forward (ReLU) -> Add & Norm, like ``nn.TransformerEncoderLayer``.

    ``forward(x, key_padding_mask=None, attn_mask=None) -> (x, self_attention_weights)``.
    """

    def __init__(self, d_model: int, num_heads: int, d_ff: int, dropout: float = 0.0, layer_norm_eps: float = 1e-5):
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
        self, x: torch.Tensor, key_padding_mask: torch.Tensor | None = None, attn_mask: torch.Tensor | None = None
    ) -> tuple[torch.Tensor, torch.Tensor | None]:
        attended, weights = self.self_attn(x, x, x, key_padding_mask=key_padding_mask, attn_mask=attn_mask)
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
        ours = cls(layer.linear1.in_features, layer.self_attn.num_heads, layer.linear1.out_features,
                   dropout=layer.dropout.p, layer_norm_eps=layer.norm1.eps)
        ours = ours.to(layer.linear1.weight.device, layer.linear1.weight.dtype)
        return ours.copy_from_torch(layer).train(layer.training)


class DecoderLayer(nn.Module):
    """Masked self-attention -> Add & Norm -> cross-attention on ``memory`` -> Add & Norm -> FFN -> Add & Norm.

    Like ``nn.TransformerDecoderLayer``: the queries of the cross-attention (``multihead_attn``) come from the
    decoder, its keys and values from the encoder's output ``memory``.
    ``forward(x, memory, tgt_mask=None, tgt_key_padding_mask=None, memory_key_padding_mask=None, memory_mask=None)
    -> (x, self_weights, cross_weights)``. Pass ``tgt_mask=causal_mask(tgt_len)`` when training a decoder.
    """

    def __init__(self, d_model: int, num_heads: int, d_ff: int, dropout: float = 0.0, layer_norm_eps: float = 1e-5):
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
        attended, self_weights = self.self_attn(x, x, x, key_padding_mask=tgt_key_padding_mask, attn_mask=tgt_mask)
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
        ours = cls(layer.linear1.in_features, layer.self_attn.num_heads, layer.linear1.out_features,
                   dropout=layer.dropout.p, layer_norm_eps=layer.norm1.eps)
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
            EncoderLayer(d_model, num_heads, d_ff, dropout, layer_norm_eps) for _ in range(num_encoder_layers)
        )
        self.encoder_norm = nn.LayerNorm(d_model, eps=layer_norm_eps)
        self.decoder_layers = nn.ModuleList(
            DecoderLayer(d_model, num_heads, d_ff, dropout, layer_norm_eps) for _ in range(num_decoder_layers)
        )
        self.decoder_norm = nn.LayerNorm(d_model, eps=layer_norm_eps)
        for parameter in self.parameters():  # as nn.Transformer: Xavier-uniform for every matrix
            if parameter.dim() > 1:
                nn.init.xavier_uniform_(parameter)

    def encode(
        self, src: torch.Tensor, src_key_padding_mask: torch.Tensor | None = None, src_mask: torch.Tensor | None = None
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
        return output, {"encoder": encoder_weights, "decoder": decoder_weights, "cross": cross_weights}

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


# --- A translator built from the layers (chapter 6) ---

from collections.abc import Callable  # noqa: E402  (used by this section only)


class Seq2SeqTransformer(nn.Module):
    """A small sequence-to-sequence Transformer: token ids in, next-token logits out.

    Source and target tokens are embedded, scaled by √d_model and given positions
    (:class:`PositionalEncoding`); a :class:`Transformer` encodes the source and decodes the target
    under a causal mask; a linear *generator* turns each decoder output into logits over the target
    vocabulary (the softmax is left to the loss). Padding (``pad_id``) is masked out everywhere.
    """

    def __init__(
        self,
        src_vocab_size: int,
        tgt_vocab_size: int,
        d_model: int = 64,
        num_heads: int = 4,
        num_layers: int = 2,
        d_ff: int = 256,
        dropout: float = 0.1,
        max_len: int = 64,
        pad_id: int = 0,
    ) -> None:
        super().__init__()
        for name, value in (("src_vocab_size", src_vocab_size), ("tgt_vocab_size", tgt_vocab_size),
                            ("num_layers", num_layers), ("max_len", max_len)):
            check_positive_int(name, value)
        if not 0 <= pad_id < min(src_vocab_size, tgt_vocab_size):
            raise ValueError(f"pad_id must be a token id of both vocabularies, got {pad_id}")
        self.d_model = d_model
        self.pad_id = pad_id
        self.max_len = max_len
        self.src_embedding = nn.Embedding(src_vocab_size, d_model, padding_idx=pad_id)
        self.tgt_embedding = nn.Embedding(tgt_vocab_size, d_model, padding_idx=pad_id)
        self.positional_encoding = PositionalEncoding(d_model, max_len=max_len, dropout=dropout)
        self.transformer = Transformer(d_model, num_heads, num_layers, num_layers, d_ff, dropout)
        self.generator = nn.Linear(d_model, tgt_vocab_size)
        for embedding in (self.src_embedding, self.tgt_embedding):  # std d_model^-0.5: after the √d_model
            nn.init.normal_(embedding.weight, std=d_model**-0.5)  # scaling, entries of std 1, like the positions
            nn.init.zeros_(embedding.weight[pad_id])

    def _check_ids(self, ids: torch.Tensor, name: str, vocab_size: int) -> None:
        if not isinstance(ids, torch.Tensor) or ids.dtype != torch.long:
            got = ids.dtype if isinstance(ids, torch.Tensor) else type(ids).__name__
            raise TypeError(f"{name} must be a torch.long tensor of token ids, got {got}")
        if ids.dim() != 2:
            raise ValueError(f"{name} must have shape (batch, length), got {tuple(ids.shape)}")
        if ids.shape[1] > self.max_len:
            raise ValueError(f"{name} has length {ids.shape[1]}, longer than max_len={self.max_len}")
        if ids.numel() and (ids.min() < 0 or ids.max() >= vocab_size):
            raise ValueError(f"{name} holds ids outside 0..{vocab_size - 1}")

    def _embed(self, embedding: nn.Embedding, ids: torch.Tensor) -> torch.Tensor:
        return self.positional_encoding(embedding(ids) * math.sqrt(self.d_model))

    def encode(self, src_ids: torch.Tensor) -> tuple[torch.Tensor, list[torch.Tensor]]:
        """Encode ``src_ids`` (batch, src_len) into memory (batch, src_len, d_model) and attention weights."""
        self._check_ids(src_ids, "src_ids", self.src_embedding.num_embeddings)
        return self.transformer.encode(
            self._embed(self.src_embedding, src_ids), src_key_padding_mask=padding_mask_from_ids(src_ids, self.pad_id)
        )

    def decode(
        self, tgt_in_ids: torch.Tensor, memory: torch.Tensor, src_ids: torch.Tensor
    ) -> tuple[torch.Tensor, list[torch.Tensor], list[torch.Tensor]]:
        """Logits (batch, tgt_len, tgt_vocab) for the next token after each prefix of ``tgt_in_ids``.

        Also returns the decoder's masked self-attention and cross-attention weights, one per layer.
        """
        self._check_ids(tgt_in_ids, "tgt_in_ids", self.tgt_embedding.num_embeddings)
        length = tgt_in_ids.shape[1]
        output, self_weights, cross_weights = self.transformer.decode(
            self._embed(self.tgt_embedding, tgt_in_ids),
            memory,
            tgt_mask=causal_mask(length, device=tgt_in_ids.device),
            tgt_key_padding_mask=padding_mask_from_ids(tgt_in_ids, self.pad_id),
            memory_key_padding_mask=padding_mask_from_ids(src_ids, self.pad_id),
        )
        return self.generator(output), self_weights, cross_weights

    def forward(
        self, src_ids: torch.Tensor, tgt_in_ids: torch.Tensor
    ) -> tuple[torch.Tensor, dict[str, list[torch.Tensor]]]:
        """Return next-token logits (batch, tgt_len, tgt_vocab) and the attention weights of every layer.

        ``tgt_in_ids`` is the target shifted right (it starts with ``<bos>``); the attention dict has
        the keys ``"encoder"``, ``"decoder"`` and ``"cross"``, each a list of (batch, heads, q, k).
        """
        self._check_ids(src_ids, "src_ids", self.src_embedding.num_embeddings)
        self._check_ids(tgt_in_ids, "tgt_in_ids", self.tgt_embedding.num_embeddings)
        if src_ids.shape[0] != tgt_in_ids.shape[0]:
            raise ValueError(
                "src_ids and tgt_in_ids must have the same batch size, "
                f"got {src_ids.shape[0]} and {tgt_in_ids.shape[0]}"
            )
        memory, encoder_weights = self.encode(src_ids)
        logits, self_weights, cross_weights = self.decode(tgt_in_ids, memory, src_ids)
        return logits, {"encoder": encoder_weights, "decoder": self_weights, "cross": cross_weights}


@torch.no_grad()
def greedy_decode(
    model: Seq2SeqTransformer, src_ids: torch.Tensor, bos_id: int, eos_id: int, max_len: int
) -> torch.Tensor:
    """Translate a batch by always taking the most likely next token; returns (batch, steps) ids.

    The source is encoded once; the decoder is rerun on the growing prefix (no cache: simple, and
    fast enough for short outputs). The result starts after ``<bos>``, holds each sequence's
    ``<eos>``, and is padded with ``model.pad_id`` after it; decoding stops once every sequence has
    produced ``<eos>`` or after ``max_len`` tokens.
    """
    if max_len < 1:
        raise ValueError(f"max_len must be >= 1, got {max_len}")
    if max_len + 1 > model.max_len:
        raise ValueError(f"max_len + 1 must be <= the model's max_len={model.max_len}, got {max_len}")
    was_training = model.training
    model.eval()
    memory, _ = model.encode(src_ids)
    batch = src_ids.shape[0]
    prefix = torch.full((batch, 1), bos_id, dtype=torch.long, device=src_ids.device)
    finished = torch.zeros(batch, dtype=torch.bool, device=src_ids.device)
    for _ in range(max_len):
        logits, _, _ = model.decode(prefix, memory, src_ids)
        next_ids = logits[:, -1].argmax(dim=-1)
        next_ids = next_ids.masked_fill(finished, model.pad_id)
        prefix = torch.cat([prefix, next_ids[:, None]], dim=1)
        finished |= next_ids.eq(eos_id)
        if finished.all():
            break
    model.train(was_training)
    return prefix[:, 1:]


@torch.no_grad()
def beam_search(
    model: Seq2SeqTransformer,
    src_ids: torch.Tensor,
    bos_id: int,
    eos_id: int,
    max_len: int,
    beam_size: int = 4,
) -> list[tuple[list[int], float]]:
    """Translate ONE source sequence (shape (1, src_len)) keeping the ``beam_size`` best prefixes.

    Returns the finished hypotheses, best first, as ``(ids ending with <eos>, total log-probability)``
    (unfinished ones are included if none finished within ``max_len`` steps).
    """
    if src_ids.dim() != 2 or src_ids.shape[0] != 1:
        raise ValueError(
            f"beam_search translates one sequence: src_ids must have shape (1, src_len), got {tuple(src_ids.shape)}"
        )
    if beam_size < 1:
        raise ValueError(f"beam_size must be >= 1, got {beam_size}")
    if max_len < 1 or max_len + 1 > model.max_len:
        raise ValueError(f"max_len must be in 1..{model.max_len - 1}, got {max_len}")
    was_training = model.training
    model.eval()
    memory, _ = model.encode(src_ids)
    beams = torch.full((1, 1), bos_id, dtype=torch.long, device=src_ids.device)
    scores = torch.zeros(1, device=src_ids.device)
    finished: list[tuple[list[int], float]] = []
    for _ in range(max_len):
        count = beams.shape[0]
        logits, _, _ = model.decode(beams, memory.expand(count, -1, -1), src_ids.expand(count, -1))
        candidates = (scores[:, None] + logits[:, -1].log_softmax(dim=-1)).flatten()
        top_scores, top_indices = candidates.topk(min(beam_size, candidates.numel()))
        vocab = logits.shape[-1]
        beams = torch.cat([beams[top_indices // vocab], (top_indices % vocab)[:, None]], dim=1)
        ended = beams[:, -1].eq(eos_id)
        pairs = zip(beams[ended], top_scores[ended], strict=True)
        finished += [(beam[1:].tolist(), score.item()) for beam, score in pairs]
        beams, scores = beams[~ended], top_scores[~ended]
        if len(finished) >= beam_size or beams.shape[0] == 0:
            break
    if not finished:
        finished = [(beam[1:].tolist(), score.item()) for beam, score in zip(beams, scores, strict=True)]
    model.train(was_training)
    return sorted(finished, key=lambda hypothesis: hypothesis[1], reverse=True)


def noam_schedule(d_model: int, warmup_steps: int, factor: float = 1.0) -> Callable[[int], float]:
    """The learning rate of Vaswani et al. (2017), as a function of the step (1, 2, ...).

    ``lrate = factor · d_model^-0.5 · min(step^-0.5, step · warmup_steps^-1.5)``: it grows linearly
    for ``warmup_steps`` steps, peaks there, then decays like 1/√step. Step 0 is treated as step 1,
    so that it can be used with ``torch.optim.lr_scheduler.LambdaLR`` on an optimizer whose ``lr`` is 1.
    """
    check_positive_int("d_model", d_model)
    check_positive_int("warmup_steps", warmup_steps)
    if factor <= 0:
        raise ValueError(f"factor must be > 0, got {factor}")

    def rate(step: int) -> float:
        step = max(int(step), 1)
        return factor * d_model**-0.5 * min(step**-0.5, step * warmup_steps**-1.5)

    return rate
