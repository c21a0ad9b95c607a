"""Figures a reader can move (chapters 1 and 4): what they compute, and their HTML (with
``javascript/figures.js`` read from the package, and a static picture of the first state for where
JavaScript does not run); ``show_query_figure`` and ``show_scaling_figure`` show them in a notebook.

* the query figure: keys and values as points in 2-D and a query the reader drags (mouse, touch or
  arrow keys); the weights are drawn as bars and the output as a point. ``query_weights`` computes
  the same weights with the package's ``attention``, to check the figure against the code.
* the scaling figure: one query against ten random keys, divided by sqrt(d_k) and not, side by side,
  and a slider for d_k (1 to 512): unscaled, the softmax saturates (``scaling_statistics``,
  ``scaling_spread``)."""

from __future__ import annotations

import base64
import hashlib
import html
import io
import json
import math
from collections.abc import Callable, Sequence
from importlib import resources

import matplotlib.pyplot as plt
import torch
from torch import Tensor

from attention_to_bert.attention import attention, dot_score, scaled_dot_score
from attention_to_bert.validate import (
    check_choice,
    check_int,
    check_number,
    check_strings,
    check_tensor,
)

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
    """``points`` as a float64 tensor ``(n, 2)``, checked."""
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


# The figures' HTML and static pictures ------------------------------------------------------


# the book's colours for the roles (as in its diagrams and figures.js): query orange, keys blue,
# values green, weights purple
FIGURE_COLOURS = {"query": "#c85a00", "key": "#1f5fa8", "value": "#23803a", "weight": "#6f3596"}


def query_figure_html(
    keys: Sequence[Sequence[float]] | torch.Tensor,
    labels: Sequence[str],
    query: Sequence[float] = (0.5, 0.5),
    values: Sequence[Sequence[float]] | torch.Tensor | None = None,
    score: str = "scaled_dot",
    temperature: float = 1.0,
    domain: tuple[float, float] = (-2.0, 2.0),
) -> str:
    """The HTML of the "drag the query" figure: keys (n, 2) with ``labels``, values (n, 2) (the keys
    if None), the query's start, the score and temperature, and the plotted square ``domain``."""
    keys_tensor = _points("keys", keys)
    values_tensor = keys_tensor if values is None else _points("values", values)
    if values_tensor.shape != keys_tensor.shape:
        raise ValueError(
            f"values must have the keys' shape {tuple(keys_tensor.shape)}, "
            f"got {tuple(values_tensor.shape)}"
        )
    if not isinstance(labels, list | tuple) or len(labels) != len(keys_tensor):
        raise ValueError(f"labels must be a list of {len(keys_tensor)} strings, one per key")
    check_strings("labels", labels)
    query_tensor = _points("query", [query])
    if not isinstance(domain, tuple | list) or len(domain) != 2:
        raise TypeError(f"domain must be a pair (low, high), got {domain!r}")
    for bound in domain:
        check_number("domain", bound)
    lo, hi = float(domain[0]), float(domain[1])
    if not lo < hi:
        raise ValueError(f"domain must have low < high, got {domain!r}")
    if not bool(((keys_tensor >= lo) & (keys_tensor <= hi)).all()):
        raise ValueError(f"every key must lie inside domain {domain}")
    weights = query_weights(keys_tensor, query_tensor, score, temperature)
    config = {"score": score, "temperature": float(temperature), "domain": [lo, hi]}
    config |= {"title": "Drag the query: the attention weights follow", "labels": list(labels)}
    config |= {"keys": _rounded(keys_tensor), "values": _rounded(values_tensor)}
    config["query"] = _rounded(query_tensor)[0]
    picture = _query_picture(keys_tensor, values_tensor, list(labels), query_tensor[0], weights)
    return _figure_html("query", config, picture)


def scaling_figure_html(num_keys: int = 10, seed: int = 1, start_size: int = 64) -> str:
    """The HTML of the "slide sqrt(d_k)" figure: one query, ``num_keys`` random keys (``seed``)."""
    check_int("num_keys", num_keys, minimum=2)
    check_int("seed", seed, minimum=0)
    check_choice("start_size", start_size, SCALING_SIZES)
    statistics = [
        (
            *scaling_statistics(num_keys, seed, start_size, s),
            scaling_spread(num_keys, seed, start_size, s),
        )
        for s in (True, False)
    ]
    config = {
        "title": "Slide d_k: unscaled dot products saturate the softmax",
        "sizes": list(SCALING_SIZES),
        "num_keys": num_keys,
        "seed": seed,
        "start_index": SCALING_SIZES.index(start_size),
    }
    return _figure_html("scaling", config, _scaling_picture(statistics, start_size))


def scaling_spread(num_keys: int, seed: int, size: int, scaled: bool) -> float:
    """The spread the scaling figure prints: the standard deviation of the scores over the keys."""
    query, keys, _ = scaling_draw(num_keys, seed, size)
    scores = keys @ query / (math.sqrt(size) if scaled else 1.0)
    return scores.std(unbiased=False).item()


def show_query_figure(*args, **kwargs) -> None:
    """Show ``query_figure_html(*args, **kwargs)`` in the notebook (with its static picture)."""
    _show(query_figure_html(*args, **kwargs), "drag the query")


def show_scaling_figure(*args, **kwargs) -> None:
    """Show ``scaling_figure_html(*args, **kwargs)`` in the notebook (with its static picture)."""
    _show(scaling_figure_html(*args, **kwargs), "slide d_k")


def _rounded(tensor: torch.Tensor) -> list:
    return [[round(float(x), 4) for x in row] for row in tensor.tolist()]


def _figure_html(kind: str, config: dict, picture: str) -> str:
    """A movable figure: its ``config`` for ``figures.js``, the script and ``picture``."""
    payload = json.dumps(config, sort_keys=True)
    safe_payload = payload.replace("</", "<\\/")
    figure_id = "atb-" + kind + "-" + hashlib.sha1(payload.encode()).hexdigest()[:10]
    script = resources.files("attention_to_bert.figures").joinpath("javascript/figures.js")
    code = script.read_text(encoding="utf-8").replace("</", "<\\/")
    alt = html.escape(config["title"] + " (a static picture: the live figure needs JavaScript)")
    return (
        f'<div class="atb-figure" id="{figure_id}" data-figure="{kind}">\n'
        f'<script type="application/json">{safe_payload}</script>\n'
        f'<img class="atb-static" alt="{alt}" style="max-width:100%" '
        f'src="data:image/png;base64,{picture}">\n'
        f"<script>\n{code}\n</script>\n</div>\n"
    )


def _show(figure_html: str, name: str) -> None:
    from IPython.display import display

    picture = figure_html.split('src="data:image/png;base64,', 1)[1].split('"', 1)[0]
    text = f"(a figure to move, {name}: drawn on the website, in JupyterLab and on Colab)"
    display({"text/html": figure_html, "image/png": picture, "text/plain": text}, raw=True)


def _png(fig) -> str:
    buffer = io.BytesIO()
    fig.savefig(buffer, format="png", dpi=90)
    plt.close(fig)
    return base64.b64encode(buffer.getvalue()).decode("ascii")


def _query_picture(
    keys: torch.Tensor,
    values: torch.Tensor,
    labels: list,
    query: torch.Tensor,
    weights: torch.Tensor,
) -> str:
    fig, (left, right) = plt.subplots(1, 2, figsize=(7.5, 3.2), layout="constrained")
    left.scatter(keys[:, 0], keys[:, 1], color=FIGURE_COLOURS["key"], label="keys")
    left.scatter(
        values[:, 0],
        values[:, 1],
        marker="D",
        facecolors="none",
        edgecolors=FIGURE_COLOURS["value"],
        label="values",
    )
    for (x, y), label in zip(keys.tolist(), labels, strict=True):
        left.annotate(label, (x, y), textcoords="offset points", xytext=(5, 5))
    output = weights @ values
    left.scatter([query[0]], [query[1]], color=FIGURE_COLOURS["query"], s=80, label="query")
    left.scatter([output[0]], [output[1]], color="#222222", marker="+", s=120, label="output")
    left.set_aspect("equal")
    left.legend(fontsize=7, loc="lower right")
    right.barh(range(len(labels)), weights.tolist(), color=FIGURE_COLOURS["weight"])
    right.set_yticks(range(len(labels)), labels)
    right.invert_yaxis()
    right.set_xlim(0, 1)
    right.set_xlabel("attention weight")
    return _png(fig)


def _scaling_picture(statistics: list, size: int) -> str:
    """``statistics``: ``scaling_statistics`` and ``scaling_spread`` with and without
    dividing by sqrt(d_k)."""
    num_keys = len(statistics[0][0])
    fig, axes = plt.subplots(1, 2, figsize=(7.5, 3.0), sharey=True, layout="constrained")
    for axis, scaled, (weights, largest, gradient, spread) in zip(
        axes, (True, False), statistics, strict=True
    ):
        axis.barh(range(num_keys), weights.tolist(), color=FIGURE_COLOURS["weight"])
        axis.axvline(1 / num_keys, color="k", linestyle=":")
        axis.set_xlim(0, 1)
        axis.set_title(
            f"d_k = {size}, {'divided by √d_k' if scaled else 'not divided'}\n"
            f"spread {spread:.2f}, largest {largest:.3f}, gradient {gradient:.3f}",
            fontsize=9,
        )
        axis.set_xlabel("attention weight")
    axes[0].set_yticks(range(num_keys), [f"k{i + 1}" for i in range(num_keys)])
    axes[0].invert_yaxis()
    return _png(fig)
