"""Attention as a weight distribution (chapter 1): score functions and attention pooling.
Shapes: a query is ``(..., n_q, d_q)``, keys ``(..., n_k, d_k)``, values ``(..., n_k, d_v)``. A score
function returns ``(..., n_q, n_k)``, the (masked) softmax over the last dimension turns each row into
weights that sum to one, and the output is the weighted sum of the values, ``(..., n_q, d_v)``."""

from __future__ import annotations

import math
from collections.abc import Callable

import torch
from torch import Tensor, nn

from attention_to_bert.masks import _broadcast, _check_mask_fits, _masked_softmax, weighted_sum
from attention_to_bert.validate import check_instance, check_ints, check_same, check_tensor


def _check_tensors(**tensors: Tensor) -> None:
    """Floating-point tensors of one dtype, of 2 or more dimensions, whose batch dimensions (all but
    the last two) broadcast."""
    dtype = getattr(next(iter(tensors.values())), "dtype", True)  # the first one's
    for name, tensor in tensors.items():
        check_tensor(name, tensor, floating=dtype, min_dim=2)
    if _broadcast(*(tensor.shape[:-2] for tensor in tensors.values())) is None:
        shapes = " and ".join(f"{name} {tuple(tensor.shape)}" for name, tensor in tensors.items())
        raise ValueError(f"batch dimensions (all but the last two) of {shapes} do not broadcast")


def _check_query_key(
    query: Tensor, key: Tensor, score: nn.Module | None = None, tensors: bool = True
) -> None:
    """query ``(..., n_q, d_q)`` and key ``(..., n_k, d_k)`` as ``_check_tensors`` wants them (unless
    ``tensors`` is False), of one size d >= 1, or of the learned ``score``'s sizes and dtype."""
    if tensors:
        _check_tensors(query=query, key=key)
    if score is not None:
        check_tensor("query", query, floating=score.key_projection.weight.dtype)
    got = f"got query {tuple(query.shape)} and key {tuple(key.shape)}"
    if query.shape[-1] == 0 or key.shape[-1] == 0:
        raise ValueError(f"query and key must have at least one feature (last dimension), {got}")
    if score is None and query.shape[-1] != key.shape[-1]:
        raise ValueError(f"query and key must have the same feature size d (last dimension), {got}")
    if score is not None and (query.shape[-1], key.shape[-1]) != (score.query_size, score.key_size):
        raise ValueError(
            f"{type(score).__name__}({score.extra_repr()}) expects query (..., n_q, {score.query_size}) "
            f"and key (..., n_k, {score.key_size}), {got}"
        )


def _dot_score(query: Tensor, key: Tensor) -> Tensor:
    return query @ key.transpose(-2, -1)  # (..., n_q, d) @ (..., d, n_k) -> (..., n_q, n_k)


def _scaled_dot_score(query: Tensor, key: Tensor) -> Tensor:
    return query @ key.transpose(-2, -1) / math.sqrt(query.shape[-1])  # (..., n_q, n_k)


def dot_score(query: Tensor, key: Tensor) -> Tensor:
    """Dot-product score ``q · k`` for every query and key: ``(..., n_q, d), (..., n_k, d) -> (..., n_q, n_k)``."""
    _check_query_key(query, key)
    return _dot_score(query, key)


def scaled_dot_score(query: Tensor, key: Tensor) -> Tensor:
    """Scaled dot-product score ``q · k / sqrt(d)`` (Vaswani et al., 2017)."""
    _check_query_key(query, key)
    return _scaled_dot_score(query, key)


class GeneralScore(nn.Module):
    """Bilinear ("general") score ``q^T W k`` with a learned ``W`` (Luong et al., 2015).
    ``W`` ``(query_size, key_size)`` is ``self.key_projection``, a bias-free ``nn.Linear(key_size,
    query_size)``, so the score is ``q · (W k)``, and query and key may have different sizes."""

    def __init__(self, query_size: int, key_size: int) -> None:
        super().__init__()
        check_ints(query_size=query_size, key_size=key_size)
        self.query_size, self.key_size = query_size, key_size
        self.key_projection = nn.Linear(key_size, query_size, bias=False)

    def forward(self, query: Tensor, key: Tensor) -> Tensor:
        _check_query_key(query, key, self)
        return self.score_projected(query, self.key_projection(key))

    def score_projected(self, query: Tensor, projected_key: Tensor) -> Tensor:
        """The score from keys already projected, ``W k`` ``(..., n_k, query_size)``: a decoder
        projects them once a sentence, then scores them at every step (unchecked: a step's helper)."""
        return query @ projected_key.transpose(-2, -1)

    def extra_repr(self) -> str:
        return f"query_size={self.query_size}, key_size={self.key_size}"


class AdditiveScore(nn.Module):
    """Additive (MLP) score ``v^T tanh(W_q q + W_k k)`` (Bahdanau et al., 2015): a network of
    ``hidden_size`` units scores each (query, key) pair (of any sizes), through a ``(..., n_q, n_k,
    hidden_size)`` tensor, so it costs more memory than a dot product."""

    def __init__(self, query_size: int, key_size: int, hidden_size: int) -> None:
        super().__init__()
        check_ints(query_size=query_size, key_size=key_size, hidden_size=hidden_size)
        self.query_size, self.key_size, self.hidden_size = query_size, key_size, hidden_size
        self.query_projection = nn.Linear(query_size, hidden_size, bias=False)
        self.key_projection = nn.Linear(key_size, hidden_size, bias=False)
        self.v = nn.Linear(hidden_size, 1, bias=False)

    def forward(self, query: Tensor, key: Tensor) -> Tensor:
        _check_query_key(query, key, self)
        return self.score_projected(query, self.key_projection(key))

    def score_projected(self, query: Tensor, projected_key: Tensor) -> Tensor:
        """The score from keys already projected, ``W_k k`` ``(..., n_k, hidden_size)``: a decoder
        projects them once a sentence, then scores them at every step (unchecked: a step's helper)."""
        # (..., n_q, 1, h) + (..., 1, n_k, h) -> (..., n_q, n_k, h) -> (..., n_q, n_k)
        hidden = torch.tanh(
            self.query_projection(query).unsqueeze(-2) + projected_key.unsqueeze(-3)
        )
        return self.v(hidden).squeeze(-1)

    def extra_repr(self) -> str:
        return f"query_size={self.query_size}, key_size={self.key_size}, hidden_size={self.hidden_size}"


def _unchecked(score: Callable[[Tensor, Tensor], Tensor]) -> Callable | None:
    """The book's ``score`` without its checks (``attention`` checks once), or None (a reader's)."""
    if type(score) in (GeneralScore, AdditiveScore):  # their forward, unchecked
        return lambda query, key: score.score_projected(query, score.key_projection(key))
    return {dot_score: _dot_score, scaled_dot_score: _scaled_dot_score}.get(score)


def attention(
    query: Tensor,
    key: Tensor,
    value: Tensor,
    mask: Tensor | None = None,
    score: Callable[[Tensor, Tensor], Tensor] = scaled_dot_score,
) -> tuple[Tensor, Tensor]:
    """Attention pooling: ``(output, weights)``, the values weighted by the softmax of
    ``score(query, key)``; ``mask`` (True = may not attend) broadcasts to ``(..., n_q, n_k)``. Rows of
    ``weights`` sum to 1 (0 if fully masked); a masked key never reaches the output."""
    _check_tensors(query=query, key=key, value=value)
    check_same("number of positions n_k (dim -2)", key=key.shape[-2], value=value.shape[-2])
    check_instance("score", score, Callable, "callable as score(query, key)")
    unchecked = _unchecked(score)
    if unchecked is not None:  # the book's score: query and key checked here, once
        _check_query_key(query, key, score if isinstance(score, nn.Module) else None, tensors=False)
        scores = unchecked(query, key)
    else:  # a score of the reader's: its result checked
        scores = score(query, key)
        expected = (*_broadcast(query.shape[:-2], key.shape[:-2]), query.shape[-2], key.shape[-2])
        if tuple(scores.shape) != expected:
            raise ValueError(
                f"score(query, key) must return shape {expected} (..., n_q, n_k), got {tuple(scores.shape)}"
            )
    _check_mask_fits(mask, scores)
    weights = _masked_softmax(scores, mask)
    return weighted_sum(weights, value, mask), weights
