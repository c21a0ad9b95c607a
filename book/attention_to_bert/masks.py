"""Masks, in one place: bool tensors where **True means "may not attend"** (torch's convention).
Padding and causal masks, Hugging Face's ``attention_mask`` (1 = real token) converted, masks merged,
and what masking gives: weight 0, nothing in the output (not even a NaN), zeros for a query that may
attend to nothing. ``attention`` and ``multihead`` re-export the names chapters 1 and 5 import."""

from __future__ import annotations

import torch
from torch import Tensor

from attention_to_bert.validate import check_int, check_mask, check_tensor

_HINT = "use causal_mask(size) or padding_mask_from_ids(token_ids)"


def padding_mask(lengths: Tensor | list[int], max_length: int | None = None) -> Tensor:
    """Bool mask ``(batch, max_length)`` that is True at the padded positions (index >= length)."""
    try:
        lengths = torch.as_tensor(lengths)
    except (TypeError, ValueError, RuntimeError):
        raise TypeError(f"lengths must be a 1-D sequence of integers, got {lengths!r}") from None
    lengths = lengths.long() if lengths.numel() == 0 else lengths  # [] is a float tensor
    if lengths.dim() != 1 or lengths.dtype.is_floating_point or lengths.dtype == torch.bool:
        got = f"{lengths.dtype} of shape {tuple(lengths.shape)}"
        raise ValueError(f"lengths must be a 1-D sequence of integers, got {got}")
    if (lengths < 0).any():
        raise ValueError(f"lengths must be >= 0, got {lengths.tolist()}")
    longest = int(lengths.max()) if lengths.numel() else 0
    max_length = longest if max_length is None else max_length
    check_int("max_length", max_length, minimum=0)
    if max_length < longest:
        raise ValueError(f"max_length={max_length} is shorter than the longest length ({longest})")
    return torch.arange(max_length, device=lengths.device) >= lengths[:, None]


def padding_mask_from_ids(token_ids: Tensor, pad_id: int = 0) -> Tensor:
    """A bool mask of ``token_ids``' shape, True where it is ``pad_id``: the key_padding_mask."""
    check_tensor("token_ids", token_ids, dtype=torch.long, min_dim=1)
    check_int("pad_id", pad_id, minimum=0)
    return token_ids == pad_id


def causal_mask(size: int, device: torch.device | str | None = None) -> Tensor:
    """A ``(size, size)`` bool mask, True above the diagonal: position i may not attend to j > i."""
    check_int("size", size)
    return torch.ones(size, size, dtype=torch.bool, device=device).triu(diagonal=1)


def from_attention_mask(attention_mask: object, input_ids: Tensor) -> Tensor:
    """Hugging Face's ``attention_mask`` (1 = real token, 0 = padding; of ``input_ids``' shape) as a
    padding mask (True = padding). A bool mask or other values are refused: they are ambiguous."""
    conventions = "Hugging Face's attention_mask holds 1 for real tokens and 0 for padding; "
    conventions += "the bool masks of chapters 1-6 hold True for padding: pass (~mask).long()"
    check_tensor("attention_mask", attention_mask)
    if attention_mask.dtype == torch.bool:
        raise TypeError(f"attention_mask must hold 0 and 1, got a bool tensor. {conventions}")
    check_tensor("attention_mask", attention_mask, shape=input_ids.shape, axes="(batch, seq)")
    if ((attention_mask != 0) & (attention_mask != 1)).any():
        values = attention_mask.unique()[:6].tolist()
        raise ValueError(f"attention_mask must hold only 0 and 1, got {values}. {conventions}")
    return attention_mask == 0


def combine_masks(
    batch: int,
    query_len: int,
    key_len: int,
    heads: int = 1,
    *,
    key_padding_mask: Tensor | None = None,
    attn_mask: Tensor | None = None,
    device: torch.device | None = None,
) -> Tensor | None:
    """``key_padding_mask`` ``(batch, key_len)`` or'ed with ``attn_mask`` (both True = may not attend,
    on ``device`` if given) ``(query_len, key_len)``, ``(batch, query_len, key_len)``, ``(batch *
    heads, ...)`` or ``(batch, heads, ...)``: one mask broadcastable to ``(batch, heads, q, k)``, or None."""
    mask = None
    if key_padding_mask is not None:
        shape, axes = (batch, key_len), "(batch, key_len)"
        check_mask(
            "key_padding_mask", key_padding_mask, shape, hint=_HINT, device=device, axes=axes
        )
        mask = key_padding_mask[:, None, None, :]
    if attn_mask is not None:
        check_mask("attn_mask", attn_mask, hint=_HINT, device=device)
        layouts = {  # with one head, (batch * heads, ...) is (batch, ...)
            (query_len, key_len): lambda m: m[None, None],
            (batch, query_len, key_len): lambda m: m[:, None],
            (batch * heads, query_len, key_len): lambda m: m.view(batch, heads, query_len, key_len),
            (batch, heads, query_len, key_len): lambda m: m,
        }
        if tuple(attn_mask.shape) not in layouts:
            raise ValueError(
                f"attn_mask must have shape (query_len, key_len) = {(query_len, key_len)}, "
                f"(batch, query_len, key_len) = {(batch, query_len, key_len)}, "
                f"(batch * heads, query_len, key_len) = {(batch * heads, query_len, key_len)} or "
                f"(batch, heads, query_len, key_len) = {(batch, heads, query_len, key_len)}, "
                f"got {tuple(attn_mask.shape)}"
            )
        attn_mask = layouts[tuple(attn_mask.shape)](attn_mask)
        mask = attn_mask if mask is None else mask | attn_mask
    return mask


def masked_softmax(scores: Tensor, mask: Tensor | None = None) -> Tensor:
    """Softmax over the last dimension of ``scores``; where ``mask`` (broadcastable) is True the
    weight is exactly 0, and a fully masked row gets all-zero weights (no NaN, not in the gradient).
    A score of -inf counts as masked too (torch's softmax gives NaN for a row of -inf)."""
    check_tensor("scores", scores, floating=True, min_dim=1)
    minus_infinity = scores == float("-inf")
    if mask is None and not minus_infinity.any():
        return torch.softmax(scores, dim=-1)
    mask = minus_infinity if mask is None else _broadcast_mask(mask, scores) | minus_infinity
    # A large negative number instead of -inf: a fully masked row then gives a uniform row (not NaN),
    # which the final masked_fill sets to zero. masked_fill also blocks the gradient of masked scores.
    filled = scores.masked_fill(mask, torch.finfo(scores.dtype).min)
    return torch.softmax(filled, dim=-1).masked_fill(mask, 0.0)


def _broadcast_mask(mask: Tensor, scores: Tensor) -> Tensor:
    """``mask``, checked: a bool tensor on ``scores``' device that broadcasts to its shape."""
    check_mask("mask", mask, device=scores.device)
    try:
        broadcast = torch.broadcast_shapes(mask.shape, scores.shape)
    except RuntimeError:
        broadcast = None
    if broadcast != scores.shape:
        hint = ""
        if mask.dim() == 2 and scores.dim() == 3 and mask.shape[-1] == scores.shape[-1]:
            hint = "; a per-key padding mask of shape (batch, n_k) needs a query axis: mask[:, None, :]"
        raise ValueError(
            f"mask of shape {tuple(mask.shape)} cannot be broadcast to scores of shape "
            f"{tuple(scores.shape)}{hint}"
        )
    return mask


def weighted_sum(weights: Tensor, value: Tensor, mask: Tensor | None = None) -> Tensor:
    """``weights @ value``, ``(..., n_q, n_k) @ (..., n_k, d_v)``, in which a masked key contributes
    nothing, even a NaN or inf value (0 x NaN would be NaN): the slow exact sum is taken then.
    ``mask`` (True = may not attend) broadcasts to ``weights``."""
    check_tensor("weights", weights, floating=True, min_dim=2)
    check_tensor("value", value, floating=True, min_dim=2)  # (autocast mixes dtypes)
    if weights.shape[-1] != value.shape[-2]:
        raise ValueError(
            f"value must have weights' n_k={weights.shape[-1]} rows (second to last dimension), "
            f"got shape {tuple(value.shape)}"
        )
    if mask is not None:
        check_mask("mask", mask, device=weights.device)
    if mask is None or bool(torch.isfinite(value).all()):
        return weights @ value
    terms = weights.unsqueeze(-1) * value.unsqueeze(-3)  # (..., n_q, n_k, d_v)
    return terms.masked_fill(mask.unsqueeze(-1), 0.0).sum(dim=-2)


def attends_to_nothing(mask: Tensor) -> Tensor:
    """The queries (rows) whose keys are all masked (``mask``: True = may not attend),
    ``(..., n_q, 1)``: their output is set to 0."""
    check_mask("mask", mask)
    return mask.all(dim=-1, keepdim=True)
