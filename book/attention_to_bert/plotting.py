"""Attention heatmaps: one matrix, or a grid of heads, with the tokens on both axes; figures stored
with a text alternative (``describe_figure``). The figures a reader can move and the bertviz views
are in ``figures/``."""

from __future__ import annotations

from collections.abc import Sequence

import matplotlib.pyplot as plt
import numpy as np
import torch
from matplotlib.axes import Axes
from matplotlib.figure import Figure

from attention_to_bert.validate import check_instance, check_int


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
