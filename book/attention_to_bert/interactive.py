"""Figures a reader can move (chapters 1 and 4): what they compute. ``plotting`` draws them
(``show_query_figure``, ``show_scaling_figure``: the HTML, with ``javascript/figures/figures.js``
read from the package, and a static picture of the first state for where JavaScript does not run).

* the query figure: keys and values as points in 2-D and a query the reader drags (mouse, touch or
  arrow keys); the weights are drawn as bars and the output as a point. ``query_weights`` computes
  the same weights with the package's ``attention``, to check the figure against the code.
* the scaling figure: one query against ten random keys, divided by sqrt(d_k) and not, side by side,
  and a slider for d_k (1 to 512): unscaled, the softmax saturates (``scaling_statistics``)."""

from __future__ import annotations

import math
from collections.abc import Callable, Sequence

import torch
from torch import Tensor

from attention_to_bert.attention import attention, dot_score, scaled_dot_score
from attention_to_bert.validate import check_choice, check_int, check_number, check_tensor

SCORES = ("dot", "scaled_dot", "negative_distance")
SCALING_SIZES = tuple(2**i for i in range(10))  # d_k = 1, 2, 4, ..., 512


def negative_distance_score(query: Tensor, key: Tensor) -> Tensor:
    """Chapter 1's distance score ``-||q - k||^2 / 2``, ``(..., n_q, n_k)``: nearer keys score higher."""
    check_tensor("query", query, floating=True, min_dim=2)
    check_tensor("key", key, floating=query.dtype, min_dim=2)
    return -0.5 * torch.cdist(query, key).square()


def score_function(score: str, temperature: float = 1.0) -> Callable[[Tensor, Tensor], Tensor]:
    """The figure's score ``score`` (one of ``SCORES``) divided by ``temperature``, for ``attention``."""
    check_choice("score", score, SCORES)
    check_number("temperature", temperature, positive=True)
    base = {"dot": dot_score, "scaled_dot": scaled_dot_score}.get(score, negative_distance_score)
    return lambda query, key: base(query, key) / temperature


def query_weights(
    keys: Sequence[Sequence[float]] | Tensor,
    query: Sequence[float] | Tensor,
    score: str = "scaled_dot",
    temperature: float = 1.0,
) -> Tensor:
    """The weights the "drag the query" figure draws for ``query``, computed with ``attention``."""
    keys_tensor = _points("keys", keys)
    query_tensor = _points(
        "query", [query] if not isinstance(query, Tensor) else query.reshape(1, -1)
    )
    _, weights = attention(
        query_tensor, keys_tensor, keys_tensor, score=score_function(score, temperature)
    )
    return weights[0]


def scaling_draw(num_keys: int, seed: int, size: int = SCALING_SIZES[-1]) -> tuple[Tensor, ...]:
    """The figure's random query ``(size,)``, keys ``(num_keys, size)`` and upstream gradient
    ``(num_keys,)``: the same numbers as its JavaScript (mulberry32 and Box-Muller), in float64."""
    check_int("num_keys", num_keys)
    check_int("seed", seed, minimum=0)
    check_int("size", size, 1, SCALING_SIZES[-1])
    state = seed & 0xFFFFFFFF

    def uniform() -> float:
        nonlocal state
        state = (state + 0x6D2B79F5) & 0xFFFFFFFF
        t = state
        t = _imul(t ^ (t >> 15), t | 1)
        t ^= (t + _imul(t ^ (t >> 7), t | 61)) & 0xFFFFFFFF
        return ((t ^ (t >> 14)) & 0xFFFFFFFF) / 4294967296

    def normal() -> float:
        u, v = 1 - uniform(), uniform()
        return math.sqrt(-2 * math.log(u)) * math.cos(2 * math.pi * v)

    largest = SCALING_SIZES[-1]
    query = [normal() for _ in range(largest)]
    keys = [[normal() for _ in range(largest)] for _ in range(num_keys)]
    upstream = [normal() for _ in range(num_keys)]
    as_tensor = lambda x: torch.tensor(x, dtype=torch.float64)  # noqa: E731
    return as_tensor(query)[:size], as_tensor(keys)[:, :size], as_tensor(upstream)


def scaling_statistics(
    num_keys: int, seed: int, size: int, scaled: bool
) -> tuple[Tensor, float, float]:
    """(weights, largest weight, gradient norm at the scores) the scaling figure shows."""
    query, keys, upstream = scaling_draw(num_keys, seed, size)
    scores = (keys @ query / (math.sqrt(size) if scaled else 1.0)).requires_grad_()
    weights = torch.softmax(scores, dim=-1)
    (weights * upstream).sum().backward()
    return weights.detach(), weights.max().item(), scores.grad.norm().item()


def _imul(a: int, b: int) -> int:
    """JavaScript's ``Math.imul`` on unsigned 32-bit values, as an unsigned 32-bit result."""
    return (a * b) & 0xFFFFFFFF


def _points(name: str, points) -> Tensor:
    """``points`` as a float64 tensor ``(n, 2)``, checked (``plotting``'s figures use it too)."""
    try:
        tensor = torch.as_tensor(points, dtype=torch.float64)
    except (TypeError, ValueError, RuntimeError) as error:
        raise TypeError(
            f"{name} must be numbers of shape (n, 2), got {type(points).__name__}"
        ) from error
    if tensor.dim() != 2 or tensor.shape[1] != 2 or tensor.shape[0] == 0:
        raise ValueError(f"{name} must have shape (n, 2) with n >= 1, got {tuple(tensor.shape)}")
    if not bool(torch.isfinite(tensor).all()):
        raise ValueError(f"{name} must be finite numbers")
    return tensor
