"""The Transformer of Vaswani et al. (2017), small and plain: batch-first, post-LN, ReLU (chapter 6).
``EncoderLayer``, ``DecoderLayer`` and ``Transformer`` equal their ``torch.nn`` twins after
``from_torch``; every forward also returns the attention weights of each layer. Every mask is a bool
tensor, True = may not attend (torch's convention), with the shapes of ``masks.combine_masks``."""

from __future__ import annotations

import torch.nn.functional as F
from torch import Tensor, nn

from attention_to_bert.multihead import MultiHeadAttention, copy_torch_weights
from attention_to_bert.multihead import causal_mask as causal_mask  # re-exported for chapter 6
from attention_to_bert.outputs import TransformerOutput
from attention_to_bert.positional import PositionalEncoding as PositionalEncoding  # re-exported
from attention_to_bert.validate import check_instance, check_int, check_number, check_tensor

Mask = Tensor | None


def _check_post_ln_relu(layer: nn.Module) -> None:
    """Refuse a ``torch.nn`` layer that ours cannot copy: pre-LN, or not ReLU."""
    if layer.norm_first:
        raise ValueError("only post-LN layers (norm_first=False) can be copied, like ours")
    if not (layer.activation is F.relu or isinstance(layer.activation, nn.ReLU)):
        raise ValueError(f"only ReLU layers can be copied, got activation {layer.activation}")


class _PostLNLayer(nn.Module):
    """What the encoder and decoder layers share: their submodules, with the names of their post-LN,
    ReLU ``torch.nn`` twin (``_twin``), the feed-forward network, and ``from_torch``. Each sublayer
    (self-attention, the decoder's cross-attention, feed-forward) ends in dropout, Add & Norm."""

    _twin: type[nn.Module]
    _cross_attention: bool  # the decoder's: multihead_attn, norm3, dropout3

    def __init__(
        self,
        d_model: int,
        num_heads: int,
        d_ff: int,
        dropout: float = 0.0,
        layer_norm_eps: float = 1e-5,
    ) -> None:
        super().__init__()
        check_int("d_ff", d_ff)
        check_number("layer_norm_eps", layer_norm_eps, positive=True)
        self.self_attn = MultiHeadAttention(d_model, num_heads, dropout=dropout)
        if self._cross_attention:  # queries from the decoder, keys and values from the encoder
            self.multihead_attn = MultiHeadAttention(d_model, num_heads, dropout=dropout)
        self.linear1 = nn.Linear(d_model, d_ff)
        self.dropout = nn.Dropout(dropout)
        self.linear2 = nn.Linear(d_ff, d_model)
        self.norm1 = nn.LayerNorm(d_model, eps=layer_norm_eps)
        self.dropout1 = nn.Dropout(dropout)
        self.norm2 = nn.LayerNorm(d_model, eps=layer_norm_eps)
        self.dropout2 = nn.Dropout(dropout)
        if self._cross_attention:
            self.norm3 = nn.LayerNorm(d_model, eps=layer_norm_eps)
            self.dropout3 = nn.Dropout(dropout)

    def feed_forward(self, x: Tensor) -> Tensor:
        return self.linear2(self.dropout(F.relu(self.linear1(x))))

    @classmethod
    def from_torch(cls, layer: nn.Module) -> _PostLNLayer:
        """A new layer with the weights, dropout, dtype and mode of a post-LN, ReLU ``torch.nn`` twin."""
        check_instance("layer", layer, cls._twin, f"an nn.{cls._twin.__name__}")
        _check_post_ln_relu(layer)
        sizes = (layer.linear1.in_features, layer.self_attn.num_heads, layer.linear1.out_features)
        ours = cls(*sizes, dropout=layer.dropout.p, layer_norm_eps=layer.norm1.eps)
        return copy_torch_weights(ours, layer)


class EncoderLayer(_PostLNLayer):
    """Self-attention -> Add & Norm -> feed-forward (ReLU) -> Add & Norm, like ``nn.TransformerEncoderLayer``;
    ``forward(src, *, src_mask=None, src_key_padding_mask=None)`` (True = may not attend): ``(x, weights)``."""

    _twin = nn.TransformerEncoderLayer
    _cross_attention = False

    def forward(
        self, src: Tensor, *, src_mask: Mask = None, src_key_padding_mask: Mask = None
    ) -> tuple[Tensor, Tensor | None]:
        x, masks = src, {"key_padding_mask": src_key_padding_mask, "attn_mask": src_mask}
        attended, weights = self.self_attn(x, x, x, **masks)
        x = self.norm1(x + self.dropout1(attended))
        x = self.norm2(x + self.dropout2(self.feed_forward(x)))
        return x, weights


class DecoderLayer(_PostLNLayer):
    """Masked self-attention -> Add & Norm -> cross-attention (queries from the decoder, keys and
    values from ``memory``) -> Add & Norm -> FFN -> Add & Norm, like ``nn.TransformerDecoderLayer``:
    ``(x, self_weights, cross_weights)``; pass ``tgt_mask=causal_mask(tgt_len)`` (True = may not attend)."""

    _twin = nn.TransformerDecoderLayer
    _cross_attention = True

    def forward(
        self,
        tgt: Tensor,
        memory: Tensor,
        *,
        tgt_mask: Mask = None,
        memory_mask: Mask = None,
        tgt_key_padding_mask: Mask = None,
        memory_key_padding_mask: Mask = None,
    ) -> tuple[Tensor, Tensor | None, Tensor | None]:
        x, masks = tgt, {"key_padding_mask": tgt_key_padding_mask, "attn_mask": tgt_mask}
        attended, self_weights = self.self_attn(x, x, x, **masks)
        x = self.norm1(x + self.dropout1(attended))
        attended, cross_weights = self.multihead_attn(
            x, memory, memory, key_padding_mask=memory_key_padding_mask, attn_mask=memory_mask
        )
        x = self.norm2(x + self.dropout2(attended))
        x = self.norm3(x + self.dropout3(self.feed_forward(x)))
        return x, self_weights, cross_weights


class Transformer(nn.Module):
    """Encoder stack + final LayerNorm, decoder stack + final LayerNorm, exactly like ``nn.Transformer``,
    on vectors ``(batch, seq, d_model)`` (embeddings and positions are added outside, as torch does).
    ``forward(src, tgt, *, src_mask, ...)`` (True = may not attend) returns ``(output, attentions)``."""

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
        check_int("num_encoder_layers", num_encoder_layers, minimum=0)
        check_int("num_decoder_layers", num_decoder_layers, minimum=0)
        sizes = (d_model, num_heads, d_ff, dropout, layer_norm_eps)
        self.encoder_layers = nn.ModuleList(EncoderLayer(*sizes) for _ in range(num_encoder_layers))
        self.encoder_norm = nn.LayerNorm(d_model, eps=layer_norm_eps)
        self.decoder_layers = nn.ModuleList(DecoderLayer(*sizes) for _ in range(num_decoder_layers))
        self.decoder_norm = nn.LayerNorm(d_model, eps=layer_norm_eps)
        for parameter in self.parameters():  # as nn.Transformer: Xavier-uniform for every matrix
            if parameter.dim() > 1:
                nn.init.xavier_uniform_(parameter)

    def encode(
        self, src: Tensor, *, src_mask: Mask = None, src_key_padding_mask: Mask = None
    ) -> tuple[Tensor, list[Tensor | None]]:
        """Run the encoder (masks: True = may not attend): ``(memory, [self-attention weights a layer])``."""
        check_tensor("src", src, floating=True, dim=3, axes="(batch, src_len, d_model)")
        weights, masks = [], {"src_mask": src_mask, "src_key_padding_mask": src_key_padding_mask}
        for layer in self.encoder_layers:
            src, layer_weights = layer(src, **masks)
            weights.append(layer_weights)
        return self.encoder_norm(src), weights

    def decode(
        self,
        tgt: Tensor,
        memory: Tensor,
        *,
        tgt_mask: Mask = None,
        memory_mask: Mask = None,
        tgt_key_padding_mask: Mask = None,
        memory_key_padding_mask: Mask = None,
    ) -> tuple[Tensor, list[Tensor | None], list[Tensor | None]]:
        """Run the decoder (masks: True = may not attend): ``(output, [self-], [cross-attention weights])``."""
        check_tensor("tgt", tgt, floating=True, dim=3, axes="(batch, tgt_len, d_model)")
        check_tensor("memory", memory, floating=True, dim=3, axes="(batch, src_len, d_model)")
        self_weights, cross_weights = [], []
        masks = {"tgt_mask": tgt_mask, "memory_mask": memory_mask}
        masks |= {"tgt_key_padding_mask": tgt_key_padding_mask}
        masks |= {"memory_key_padding_mask": memory_key_padding_mask}
        for layer in self.decoder_layers:
            tgt, layer_self, layer_cross = layer(tgt, memory, **masks)
            self_weights.append(layer_self)
            cross_weights.append(layer_cross)
        return self.decoder_norm(tgt), self_weights, cross_weights

    def forward(
        self,
        src: Tensor,
        tgt: Tensor,
        *,
        src_mask: Mask = None,
        tgt_mask: Mask = None,
        memory_mask: Mask = None,
        src_key_padding_mask: Mask = None,
        tgt_key_padding_mask: Mask = None,
        memory_key_padding_mask: Mask = None,
    ) -> TransformerOutput:
        """The masks of ``nn.Transformer.forward``, by keyword."""
        masks = {"src_mask": src_mask, "src_key_padding_mask": src_key_padding_mask}
        memory, encoder_weights = self.encode(src, **masks)
        masks = {"tgt_mask": tgt_mask, "memory_mask": memory_mask}
        masks |= {"tgt_key_padding_mask": tgt_key_padding_mask}
        masks |= {"memory_key_padding_mask": memory_key_padding_mask}
        output, decoder_weights, cross_weights = self.decode(tgt, memory, **masks)
        return TransformerOutput(output, encoder_weights, decoder_weights, cross_weights)

    @classmethod
    def from_torch(cls, m: nn.Transformer) -> Transformer:
        """A new ``Transformer`` with the weights, dropout, dtype and mode of ``m`` (post-LN, ReLU)."""
        check_instance("m", m, nn.Transformer, "an nn.Transformer")
        if m.encoder.norm is None or m.decoder.norm is None:
            raise ValueError("nn.Transformer without final encoder/decoder norms is not supported")
        for layer in (*m.encoder.layers, *m.decoder.layers):
            _check_post_ln_relu(layer)
        first = m.encoder.layers[0]
        layers = (len(m.encoder.layers), len(m.decoder.layers), first.linear1.out_features)
        ours = cls(m.d_model, m.nhead, *layers, first.dropout.p, first.norm1.eps)
        return copy_torch_weights(ours, m)
