"""The Transformer of Vaswani et al. (2017), small and plain: batch-first, post-LN, ReLU (chapter 6).
``EncoderLayer``, ``DecoderLayer`` and ``Transformer`` equal their ``torch.nn`` twins after
``from_torch``, and return each layer's attention weights too. A stack takes torch's masks by
keyword, combines them once (``masks.combine_masks``) and passes each layer its masks by name
(True = may not attend, broadcastable to ``(batch, heads, queries, keys)``)."""

import torch.nn.functional as F
from torch import Tensor, nn

from attention_to_bert.masks import combine_masks
from attention_to_bert.multihead import MultiHeadAttention, copy_torch_weights
from attention_to_bert.outputs import TransformerOutput
from attention_to_bert.validate import check_instance, check_int, check_number, check_tensor

Mask = Tensor | None


class EncoderLayer(nn.Module):
    """Self-attention -> Add & Norm -> feed-forward (ReLU) -> Add & Norm,
    like ``nn.TransformerEncoderLayer`` (its submodules' names too):
    returns ``(x, weights)``."""

    def __init__(
        self,
        d_model: int,
        num_heads: int,
        d_ff: int,
        dropout: float = 0.0,
        layer_norm_eps: float = 1e-5,
    ) -> None:
        super().__init__()
        self.self_attn = MultiHeadAttention(d_model, num_heads, dropout)
        # the feed-forward network: linear1, ReLU, dropout, linear2
        self.linear1 = nn.Linear(d_model, d_ff)
        self.dropout = nn.Dropout(dropout)
        self.linear2 = nn.Linear(d_ff, d_model)
        # each sub-layer ends in dropout, then Add & Norm
        self.norm1 = nn.LayerNorm(d_model, eps=layer_norm_eps)
        self.dropout1 = nn.Dropout(dropout)
        self.norm2 = nn.LayerNorm(d_model, eps=layer_norm_eps)
        self.dropout2 = nn.Dropout(dropout)

    def feed_forward(self, x: Tensor) -> Tensor:
        return self.linear2(self.dropout(F.relu(self.linear1(x))))

    def forward(self, x: Tensor, mask: Mask = None) -> tuple[Tensor, Tensor]:
        # x: (batch, n, d_model); mask: True = may not attend,
        # broadcastable to (batch, heads, n, n)
        attended, weights = self.self_attn(x, x, x, attn_mask=mask)
        x = self.norm1(x + self.dropout1(attended))  # Add & Norm
        x = self.norm2(x + self.dropout2(self.feed_forward(x)))
        return x, weights  # weights: (batch, heads, n, n)

    @classmethod
    def from_torch(cls, layer: nn.TransformerEncoderLayer) -> "EncoderLayer":
        """A new layer with the weights, dropout, dtype and mode of a
        post-LN, ReLU twin."""
        return copy_layer_weights(cls, layer, nn.TransformerEncoderLayer)


class DecoderLayer(nn.Module):
    """Masked self-attention -> Add & Norm -> cross-attention (queries from
    the decoder, keys and values from ``memory``) -> Add & Norm ->
    feed-forward -> Add & Norm, like ``nn.TransformerDecoderLayer``:
    returns ``(x, self_weights, cross_weights)``."""

    def __init__(
        self,
        d_model: int,
        num_heads: int,
        d_ff: int,
        dropout: float = 0.0,
        layer_norm_eps: float = 1e-5,
    ) -> None:
        super().__init__()
        self.self_attn = MultiHeadAttention(d_model, num_heads, dropout)
        # cross-attention, named as in torch
        self.multihead_attn = MultiHeadAttention(d_model, num_heads, dropout)
        self.linear1 = nn.Linear(d_model, d_ff)
        self.dropout = nn.Dropout(dropout)
        self.linear2 = nn.Linear(d_ff, d_model)
        self.norm1 = nn.LayerNorm(d_model, eps=layer_norm_eps)
        self.dropout1 = nn.Dropout(dropout)
        self.norm2 = nn.LayerNorm(d_model, eps=layer_norm_eps)
        self.dropout2 = nn.Dropout(dropout)
        self.norm3 = nn.LayerNorm(d_model, eps=layer_norm_eps)
        self.dropout3 = nn.Dropout(dropout)

    def feed_forward(self, x: Tensor) -> Tensor:
        return self.linear2(self.dropout(F.relu(self.linear1(x))))

    def forward(
        self, x: Tensor, memory: Tensor, self_mask: Mask = None, memory_mask: Mask = None
    ) -> tuple[Tensor, Tensor, Tensor]:
        # x: (batch, m, d_model), memory: (batch, n, d_model); self_mask
        # broadcastable to (batch, heads, m, m), memory_mask to (..., m, n)
        attended, self_weights = self.self_attn(x, x, x, attn_mask=self_mask)
        x = self.norm1(x + self.dropout1(attended))
        attended, cross_weights = self.multihead_attn(x, memory, memory, attn_mask=memory_mask)
        x = self.norm2(x + self.dropout2(attended))
        x = self.norm3(x + self.dropout3(self.feed_forward(x)))
        return x, self_weights, cross_weights

    @classmethod
    def from_torch(cls, layer: nn.TransformerDecoderLayer) -> "DecoderLayer":
        """A new layer with the weights, dropout, dtype and mode of a
        post-LN, ReLU twin."""
        return copy_layer_weights(cls, layer, nn.TransformerDecoderLayer)


class Transformer(nn.Module):
    """Encoder stack + final LayerNorm, decoder stack + final LayerNorm, exactly like ``nn.Transformer``,
    on vectors ``(batch, seq, d_model)`` (embeddings and positions are added outside, as torch does).
    ``forward(src, tgt, *, src_mask, ...)``, torch's masks by keyword (True = may not attend), returns
    a ``TransformerOutput``: ``(output, attentions)``."""

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
        # the layers' sizes, checked here at the boundary (the layers on the page stay plain)
        check_int("d_ff", d_ff)
        check_number("layer_norm_eps", layer_norm_eps, positive=True)
        self.num_heads = num_heads
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
    ) -> tuple[Tensor, list[Tensor]]:
        """Run the encoder: ``(memory, [self-attention weights a layer])``."""
        check_tensor("src", src, floating=True, dim=3, axes="(batch, src_len, d_model)")
        mask = self._combine(src, src, src_key_padding_mask, src_mask)
        weights = []
        for layer in self.encoder_layers:
            src, layer_weights = layer(src, mask)
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
    ) -> tuple[Tensor, list[Tensor], list[Tensor]]:
        """Run the decoder: ``(output, [self-], [cross-attention weights a layer])``."""
        check_tensor("tgt", tgt, floating=True, dim=3, axes="(batch, tgt_len, d_model)")
        check_tensor("memory", memory, floating=True, dim=3, axes="(batch, src_len, d_model)")
        self_mask = self._combine(tgt, tgt, tgt_key_padding_mask, tgt_mask)
        memory_mask = self._combine(tgt, memory, memory_key_padding_mask, memory_mask)
        self_weights, cross_weights = [], []
        for layer in self.decoder_layers:
            tgt, layer_self, layer_cross = layer(tgt, memory, self_mask, memory_mask)
            self_weights.append(layer_self)
            cross_weights.append(layer_cross)
        return self.decoder_norm(tgt), self_weights, cross_weights

    def _combine(
        self, queries: Tensor, keys: Tensor, key_padding_mask: Mask, attn_mask: Mask
    ) -> Mask:
        """torch's two masks of one attention as one, ``(batch or 1, heads or 1, queries or 1, keys)``."""
        sizes = (len(queries), queries.shape[1], keys.shape[1], self.num_heads)  # (batch, q, k, h)
        return combine_masks(
            *sizes, device=queries.device, key_padding_mask=key_padding_mask, attn_mask=attn_mask
        )

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
        memory, encoder_weights = self.encode(
            src, src_mask=src_mask, src_key_padding_mask=src_key_padding_mask
        )
        output, decoder_weights, cross_weights = self.decode(
            tgt, memory, tgt_mask=tgt_mask, memory_mask=memory_mask, tgt_key_padding_mask=tgt_key_padding_mask,
            memory_key_padding_mask=memory_key_padding_mask,
        )  # fmt: skip
        return TransformerOutput(output, encoder_weights, decoder_weights, cross_weights)

    @classmethod
    def from_torch(cls, m: nn.Transformer) -> "Transformer":
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


def _check_post_ln_relu(layer: nn.Module) -> None:
    """Refuse a ``torch.nn`` layer that ours cannot copy: pre-LN, or not ReLU."""
    if layer.norm_first:
        raise ValueError("only post-LN layers (norm_first=False) can be copied, like ours")
    if not (layer.activation is F.relu or isinstance(layer.activation, nn.ReLU)):
        raise ValueError(f"only ReLU layers can be copied, got activation {layer.activation}")


def copy_layer_weights(cls: type[nn.Module], layer: nn.Module, twin: type[nn.Module]) -> nn.Module:
    """A new ``cls`` with the weights, dropout, dtype and mode of ``layer``, a post-LN, ReLU ``twin``."""
    check_instance("layer", layer, twin, f"an nn.{twin.__name__}")
    _check_post_ln_relu(layer)
    sizes = (layer.linear1.in_features, layer.self_attn.num_heads, layer.linear1.out_features)
    ours = cls(*sizes, dropout=layer.dropout.p, layer_norm_eps=layer.norm1.eps)
    return copy_torch_weights(ours, layer)
