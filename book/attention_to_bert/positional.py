"""Positions for attention, which by itself ignores the order of its inputs (chapter 4)."""

from __future__ import annotations

import math

import torch
from torch import nn

from attention_to_bert.validate import check_fraction, check_ints, check_tensor


class PositionalEncoding(nn.Module):
    """Adds the sinusoidal encoding PE[pos, 2i] = sin(pos / 10000^(2i/d)), PE[pos, 2i+1] = cos(...):
    ``forward(x)`` returns ``dropout(x + pe[:seq])`` for ``x`` ``(batch, seq, d_model)``; the buffer
    ``pe``, ``(max_len, d_model)``, is computed, not saved in the state dict."""

    def __init__(self, d_model: int, max_len: int = 512, dropout: float = 0.0) -> None:
        super().__init__()
        check_ints(d_model=d_model, max_len=max_len)
        check_fraction("dropout", dropout)
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
        axes = f"(batch, seq, d_model={self.d_model})"
        check_tensor("PositionalEncoding's x", x, floating=True, dim=3, axes=axes)
        check_tensor("PositionalEncoding's x", x, shape=(*x.shape[:2], self.d_model), axes=axes)
        if x.shape[1] > self.max_len:
            raise ValueError(
                f"PositionalEncoding: sequence length {x.shape[1]} exceeds max_len={self.max_len}; "
                "build it with a larger max_len"
            )
        return self.dropout(x + self.pe[: x.shape[1]].to(x.dtype))  # float16 stays float16
