"""Masks, in one place: bool tensors where **True means "may not attend"** (torch's convention).
Padding and causal masks, Hugging Face's ``attention_mask`` (1 = real token) converted, masks merged
once per stack, and what masking gives: weight 0, nothing of a padded key in the output (not even a
NaN), zeros for a query that may attend to nothing. A ``_name`` twin is a function unchecked."""

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
    return _padding_mask(lengths, max_length)


def _padding_mask(lengths: Tensor, max_length: int) -> Tensor:
    """``padding_mask`` unchecked: ``(batch,)`` lengths -> ``(batch, max_length)``, True = padding."""
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
    check_tensor("input_ids", input_ids, dim=2, axes="(batch, seq)")
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
    heads, ...)`` or broadcastable to ``(batch, heads, ...)``: one mask broadcastable to ``(batch,
    heads, q, k)``, or None. The one place where a stack's masks are checked."""
    mask = None
    if key_padding_mask is not None:
        shape, axes = (batch, key_len), "(batch, key_len)"
        check_mask(
            "key_padding_mask", key_padding_mask, shape, hint=_HINT, device=device, axes=axes
        )
        mask = key_padding_mask[:, None, None, :]
    if attn_mask is not None:
        check_mask("attn_mask", attn_mask, hint=_HINT, device=device)
        full, got = (batch, heads, query_len, key_len), tuple(attn_mask.shape)
        if got == full[2:]:  # (query_len, key_len): the same for every sequence and head
            attn_mask = attn_mask[None, None]
        elif got == (batch * heads, *full[2:]):  # torch's layout: sequence-major, then head
            attn_mask = attn_mask.view(full)
        elif attn_mask.dim() == 3:  # (batch, query_len, key_len): the same for every head
            attn_mask = attn_mask[:, None]
        if attn_mask.dim() != 4 or _broadcast(attn_mask.shape, full) != full:
            raise ValueError(
                f"attn_mask must have shape (query_len, key_len) = {full[2:]}, (batch, query_len, "
                f"key_len) = {(batch, *full[2:])}, (batch * heads, query_len, key_len) = "
                f"{(batch * heads, *full[2:])} or (batch, heads, query_len, key_len) = {full}, "
                f"got {got}"
            )
        mask = attn_mask if mask is None else mask | attn_mask
    return mask


def masked_softmax(scores: Tensor, mask: Tensor | None = None) -> Tensor:
    """Softmax over the last dimension of ``scores``; where ``mask`` (broadcastable) is True the
    weight is exactly 0, and a fully masked row gets all-zero weights (no NaN, not in the gradient).
    A score of -inf counts as masked too (torch's softmax gives NaN for a row of -inf)."""
    check_tensor("scores", scores, floating=True, min_dim=1)
    _check_mask_fits(mask, scores)
    return _masked_softmax(scores, mask)


def _check_mask_fits(mask: Tensor | None, scores: Tensor) -> None:
    """None, or a bool mask on the device of ``scores`` that broadcasts to their shape."""
    if mask is None:
        return
    check_mask("mask", mask, device=scores.device)
    if _broadcast(mask.shape, scores.shape) != scores.shape:
        hint = ""
        if mask.dim() == 2 and scores.dim() == 3 and mask.shape[-1] == scores.shape[-1]:
            hint = "; a per-key padding mask of shape (batch, n_k) needs a query axis: mask[:, None, :]"
        raise ValueError(
            f"mask of shape {tuple(mask.shape)} cannot be broadcast to scores of shape "
            f"{tuple(scores.shape)}{hint}"
        )


def _masked_softmax(scores: Tensor, mask: Tensor | None) -> Tensor:
    """``masked_softmax`` unchecked, for a layer whose forward checked scores and mask once."""
    blocked = scores == float("-inf") if mask is None else mask | (scores == float("-inf"))
    # the smallest float instead of -inf: a fully masked row gives a uniform row (not NaN), which the
    # final masked_fill sets to zero; masked_fill also blocks the gradient of the masked scores
    weights = torch.softmax(scores.masked_fill(blocked, torch.finfo(scores.dtype).min), dim=-1)
    return weights.masked_fill(blocked, 0.0)


def weighted_sum(weights: Tensor, value: Tensor, mask: Tensor | None = None) -> Tensor:
    """``weights @ value``: ``(..., n_q, n_k) @ (..., n_k, d_v) -> (..., n_q, d_v)``, in which a key
    masked for every query (padding; ``mask`` True = may not attend, broadcastable to ``weights``)
    contributes nothing, not even a NaN value (0 x NaN would be NaN): its value row is zeroed first."""
    if mask is not None:  # (..., 1, n_k) -> (..., n_k, 1): the keys no query may attend to
        padded_keys = mask.all(dim=-2, keepdim=True) if mask.dim() > 1 else mask[None]
        value = torch.where(padded_keys.transpose(-1, -2), 0.0, value)
    return weights @ value


def attends_to_nothing(mask: Tensor) -> Tensor:
    """The queries (rows) whose keys are all masked (``mask``: True = may not attend),
    ``(..., n_q, 1)``: their output is set to 0."""
    return mask.all(dim=-1, keepdim=True)


def _broadcast(*shapes: torch.Size) -> tuple[int, ...] | None:
    """The shape ``shapes`` broadcast to, or None if they do not."""
    try:
        return torch.broadcast_shapes(*shapes)
    except RuntimeError:
        return None
