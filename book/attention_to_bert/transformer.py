"""The Transformer of Vaswani et al. (2017), small and plain: batch-first, post-LN, ReLU (chapter 6).

``EncoderLayer``, ``DecoderLayer`` and ``Transformer`` equal their ``torch.nn`` twins after
``from_torch``; every forward also returns the attention weights of each layer. Submodules carry
torch's names (``self_attn``, ``multihead_attn``, ``linear1``, ``linear2``, ``norm1``..``norm3``), so
that copying weights is a plain name map. The names DESIGN.md gives this module from earlier
chapters are importable from here too: ``PositionalEncoding`` (``positional.py``), and
``MultiHeadAttention`` and ``causal_mask`` (``multihead.py``).
"""

from __future__ import annotations

import torch
import torch.nn.functional as F
from torch import nn

from attention_to_bert.multihead import MultiHeadAttention, causal_mask
from attention_to_bert.positional import PositionalEncoding

__all__ = [
    "DecoderLayer",
    "EncoderLayer",
    "MultiHeadAttention",
    "PositionalEncoding",
    "Transformer",
    "causal_mask",
]


# --- Encoder and decoder layers (post-LN, as in the paper and torch.nn's default) ---


class _PostLNLayer(nn.Module):
    """What the encoder and decoder layers share: the feed-forward network, and copying the weights
    of their post-LN, ReLU ``torch.nn`` twin (``_twin``), whose submodule names they carry."""

    _twin: type[nn.Module]
    _attentions: tuple[str, ...]
    _copied: tuple[str, ...]

    def feed_forward(self, x: torch.Tensor) -> torch.Tensor:
        return self.linear2(self.dropout(F.relu(self.linear1(x))))

    @classmethod
    def _check_twin(cls, layer: nn.Module) -> None:
        if not isinstance(layer, cls._twin):
            raise TypeError(f"expected an nn.{cls._twin.__name__}, got {type(layer).__name__}")
        if layer.norm_first:
            raise ValueError(
                "only post-LN layers (norm_first=False) can be copied: ours follow the paper"
            )
        if not (layer.activation is F.relu or isinstance(layer.activation, nn.ReLU)):
            raise ValueError(f"only ReLU layers can be copied, got activation {layer.activation}")

    @torch.no_grad()
    def copy_from_torch(self, layer: nn.Module) -> _PostLNLayer:
        """Copy the weights of ``layer``, this layer's ``torch.nn`` twin, into this layer."""
        self._check_twin(layer)
        for name in self._attentions:
            getattr(self, name).copy_from_torch(getattr(layer, name))
        for name in self._copied:
            getattr(self, name).load_state_dict(getattr(layer, name).state_dict())
        return self

    @classmethod
    def from_torch(cls, layer: nn.Module) -> _PostLNLayer:
        """A new layer with the weights of a post-LN, ReLU ``torch.nn`` twin."""
        cls._check_twin(layer)
        sizes = (layer.linear1.in_features, layer.self_attn.num_heads, layer.linear1.out_features)
        ours = cls(*sizes, dropout=layer.dropout.p, layer_norm_eps=layer.norm1.eps)
        ours = ours.to(layer.linear1.weight.device, layer.linear1.weight.dtype)
        return ours.copy_from_torch(layer).train(layer.training)


class EncoderLayer(_PostLNLayer):
    """Self-attention -> Add & Norm -> feed-forward (ReLU) -> Add & Norm, like ``nn.TransformerEncoderLayer``.

    ``forward(x, key_padding_mask=None, attn_mask=None) -> (x, self_attention_weights)``.
    """

    _twin = nn.TransformerEncoderLayer
    _attentions = ("self_attn",)
    _copied = ("linear1", "linear2", "norm1", "norm2")

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


class DecoderLayer(_PostLNLayer):
    """Masked self-attention -> Add & Norm -> cross-attention on ``memory`` -> Add & Norm -> FFN -> Add & Norm.

    Like ``nn.TransformerDecoderLayer``: the queries of the cross-attention (``multihead_attn``) come from the
    decoder, its keys and values from the encoder's output ``memory``.
    ``forward(x, memory, tgt_mask=None, tgt_key_padding_mask=None, memory_key_padding_mask=None, memory_mask=None)
    -> (x, self_weights, cross_weights)``. Pass ``tgt_mask=causal_mask(tgt_len)`` when training a decoder.
    """

    _twin = nn.TransformerDecoderLayer
    _attentions = ("self_attn", "multihead_attn")
    _copied = ("linear1", "linear2", "norm1", "norm2", "norm3")

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
