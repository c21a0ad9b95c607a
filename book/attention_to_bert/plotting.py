"""Attention heatmaps: one matrix, or a grid of heads, with the tokens on both axes; figures stored
with a text alternative; the figures a reader can move, ``show_query_figure`` and
``show_scaling_figure`` (their HTML and static pictures; ``interactive`` computes what they show)."""

from __future__ import annotations

import base64
import hashlib
import html
import io
import json
import math
from collections.abc import Sequence
from importlib import resources

import matplotlib.pyplot as plt
import numpy as np
import torch
from matplotlib.axes import Axes
from matplotlib.figure import Figure

from attention_to_bert.interactive import (
    SCALING_SIZES,
    _points,
    query_weights,
    scaling_draw,
    scaling_statistics,
)
from attention_to_bert.validate import (
    check_choice,
    check_instance,
    check_int,
    check_number,
    check_strings,
)


def _as_array(
    weights,
    axes: tuple[str, ...],
    x_labels: Sequence[str] | None,
    y_labels: Sequence[str] | None,
    caller: str,
) -> np.ndarray:
    """``weights`` as a float array with the named ``axes``; the labels must match its last two."""
    if isinstance(weights, torch.Tensor):
        weights = weights.detach().cpu().float().numpy()
    try:
        array = np.asarray(weights, dtype=float)
    except (TypeError, ValueError):
        raise TypeError(
            f"weights must be a tensor or array of numbers, got {weights!r:.80}"
        ) from None
    shape = f"({', '.join(axes)})"
    if array.ndim != len(axes) or 0 in array.shape[-2:]:
        raise ValueError(
            f"{caller} expects weights of shape {shape}, got shape {tuple(array.shape)} "
            "(at least one query and one key)"
        )
    if array.size and np.isnan(array).all():
        raise ValueError(f"weights are all NaN: nothing to draw ({caller}, shape {shape})")
    for labels, size, axis in ((x_labels, array.shape[-1], "x"), (y_labels, array.shape[-2], "y")):
        if isinstance(labels, str):  # "abc" would label three columns a, b, c
            raise TypeError(f"{axis}_labels must be a list of tokens, got a str: {labels!r:.40}")
        if labels is not None and len(labels) != size:
            raise ValueError(
                f"{axis}_labels has {len(labels)} labels but the matrix has {size} {axis} entries"
            )
    return array


def heatmap(
    weights,
    x_labels: Sequence[str] | None = None,
    y_labels: Sequence[str] | None = None,
    *,
    title: str | None = None,
    ax: Axes | None = None,
    cmap: str = "viridis",
    vmin: float | None = 0.0,
    vmax: float | None = None,
    colorbar: bool = True,
    annotate: bool = False,
    xlabel: str = "keys",
    ylabel: str = "queries",
) -> Axes:
    """Draw a 2-D matrix of attention weights: queries are rows (y), keys are columns (x).

    ``weights`` is a 2-D tensor or array; ``x_labels``/``y_labels`` name the columns/rows (tokens).
    ``annotate=True`` writes each value in its cell (for small matrices). Returns the Axes.
    """
    matrix = _as_array(weights, ("queries", "keys"), x_labels, y_labels, "heatmap")
    rows, cols = matrix.shape
    if ax is None:
        width = min(12.0, max(3.5, 0.45 * cols + 2.0))
        height = min(10.0, max(2.5, 0.4 * rows + 1.2))
        _, ax = plt.subplots(figsize=(width, height))
    image = ax.imshow(
        matrix, cmap=cmap, vmin=vmin, vmax=vmax, aspect="auto", interpolation="nearest"
    )
    if x_labels is not None:
        ax.set_xticks(
            range(cols), labels=[str(t) for t in x_labels], rotation=90 if cols > 6 else 0
        )
    if y_labels is not None:
        ax.set_yticks(range(rows), labels=[str(t) for t in y_labels])
    ax.set_xlabel(xlabel)
    ax.set_ylabel(ylabel)
    if title:
        ax.set_title(title)
    if annotate:
        middle = (np.nanmax(matrix) + np.nanmin(matrix)) / 2
        for i in range(rows):
            for j in range(cols):
                colour = "black" if matrix[i, j] > middle else "white"
                ax.text(
                    j, i, f"{matrix[i, j]:.2f}", ha="center", va="center", fontsize=8, color=colour
                )
    if colorbar:
        ax.figure.colorbar(image, ax=ax, fraction=0.046, pad=0.04)
    return ax


def head_grid(
    weights,
    x_labels: Sequence[str] | None = None,
    y_labels: Sequence[str] | None = None,
    *,
    ncols: int = 4,
    title: str | None = None,
    head_titles: Sequence[str] | None = None,
    cmap: str = "viridis",
    cell_size: float = 2.6,
) -> Figure:
    """Draw one heatmap per head from weights of shape ``(heads, queries, keys)``; returns the Figure.

    All heads share the colour scale 0..max so that they can be compared; one colour bar is drawn.
    """
    stack = _as_array(weights, ("heads", "queries", "keys"), x_labels, y_labels, "head_grid")
    check_int("ncols", ncols)
    heads, rows, cols = stack.shape
    if head_titles is not None and len(head_titles) != heads:
        raise ValueError(f"head_titles has {len(head_titles)} entries for {heads} heads")
    ncols = max(1, min(ncols, heads))  # no head: one empty panel
    nrows = max(1, -(-heads // ncols))
    fig, axes = plt.subplots(
        nrows,
        ncols,
        figsize=(cell_size * ncols + 1.0, cell_size * nrows + 0.6),
        squeeze=False,
        layout="constrained",
    )
    vmax = float(np.nanmax(stack)) if stack.size else 1.0
    image = None
    for index, ax in enumerate(axes.flat):
        if index >= heads:
            ax.axis("off")
            continue
        image = ax.imshow(
            stack[index], cmap=cmap, vmin=0.0, vmax=vmax, aspect="auto", interpolation="nearest"
        )
        ax.set_title(head_titles[index] if head_titles is not None else f"head {index}", fontsize=9)
        ax.set_xticks(
            range(cols), labels=[str(t) for t in x_labels] if x_labels is not None else []
        )
        ax.set_yticks(
            range(rows), labels=[str(t) for t in y_labels] if y_labels is not None else []
        )
        ax.tick_params(axis="x", labelrotation=90, labelsize=7)
        ax.tick_params(axis="y", labelsize=7)
        if index % ncols != 0:
            ax.set_yticklabels([])
    if image is not None:
        fig.colorbar(image, ax=axes, shrink=0.8, label="attention weight")
    if title:
        fig.suptitle(title)
    return fig


def describe_figure(fig: Figure) -> str:
    """A text alternative for ``fig``, from what it says of itself: the title, and for each panel its
    title, kind, axis labels, tick labels (the tokens of a heatmap) and legend."""
    check_instance("fig", fig, Figure, "a matplotlib Figure (plt.gcf() is the current one)")
    parts = [fig._suptitle.get_text()] if fig._suptitle is not None else []
    panels = [axis for axis in fig.axes if axis.get_label() != "<colorbar>" and axis.has_data()]
    for number, axis in enumerate(panels, start=1):
        kind = "heatmap" if axis.images else "bar chart" if axis.patches else "plot"
        head = f"Panel {number} of {len(panels)}, " if len(panels) > 1 else ""
        text = f"{head}{kind}" + (f" '{axis.get_title()}'" if axis.get_title() else "")
        for name, label, ticks in (
            ("x", axis.get_xlabel(), axis.get_xticklabels()),
            ("y", axis.get_ylabel(), axis.get_yticklabels()),
        ):
            words = [tick.get_text() for tick in ticks if tick.get_text()]
            shown = ", ".join(words[:12]) + (", ..." if len(words) > 12 else "")
            if label or (axis.images and shown):
                text += f"; {name} axis: {label or 'labels'}" + (
                    f" ({shown})" if axis.images else ""
                )
        legend = axis.get_legend()
        if legend is not None:
            text += "; lines: " + ", ".join(entry.get_text() for entry in legend.get_texts())
        parts.append(text)
    return ". ".join(part for part in parts if part) or "A figure"


def _png_with_description(fig: Figure) -> tuple[bytes, dict[str, str]]:
    from IPython.core.pylabtools import print_figure

    return print_figure(fig, "png", bbox_inches="tight"), {"alt": describe_figure(fig)}


def describe_figures_in_notebooks() -> None:
    """In a notebook, store each figure with its text alternative (output metadata ``alt``, which the
    website shows to screen readers); nothing happens outside IPython."""
    try:
        from IPython import get_ipython
    except ImportError:
        return
    shell = get_ipython()
    if shell is not None and hasattr(shell, "display_formatter"):
        plt._get_backend_mod()  # load the inline backend now: it registers its own PNG formatter
        shell.display_formatter.formatters["image/png"].for_type(Figure, _png_with_description)


# Figures a reader can move (``interactive`` computes what they show) ---------------------------


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
    """A figure of ``interactive``: its ``config`` for ``figures.js``, the script and ``picture``."""
    payload = json.dumps(config, sort_keys=True)
    safe_payload = payload.replace("</", "<\\/")
    figure_id = "atb-" + kind + "-" + hashlib.sha1(payload.encode()).hexdigest()[:10]
    script = resources.files("attention_to_bert").joinpath("javascript/figures/figures.js")
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
    """``statistics``: ``interactive.scaling_statistics`` and ``scaling_spread`` with and without
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
