"""Attention heatmaps: one matrix, or a grid of heads, with the tokens on both axes."""

from __future__ import annotations

from collections.abc import Sequence

import matplotlib.pyplot as plt
import numpy as np
import torch
from matplotlib.axes import Axes
from matplotlib.figure import Figure


def _as_matrix(weights) -> np.ndarray:
    if isinstance(weights, torch.Tensor):
        weights = weights.detach().cpu().float().numpy()
    return np.asarray(weights, dtype=float)


def _check_labels(labels: Sequence[str] | None, size: int, axis: str) -> None:
    if labels is not None and len(labels) != size:
        raise ValueError(
            f"{axis}_labels has {len(labels)} labels but the matrix has {size} {axis} entries"
        )


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
    matrix = _as_matrix(weights)
    if matrix.ndim != 2:
        raise ValueError(
            f"heatmap expects a 2-D matrix (queries, keys), got shape {tuple(matrix.shape)}"
        )
    rows, cols = matrix.shape
    _check_labels(x_labels, cols, "x")
    _check_labels(y_labels, rows, "y")
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
    stack = _as_matrix(weights)
    if stack.ndim != 3:
        raise ValueError(
            f"head_grid expects weights of shape (heads, queries, keys), got {tuple(stack.shape)}"
        )
    if ncols < 1:
        raise ValueError(f"ncols must be >= 1, got {ncols}")
    heads, rows, cols = stack.shape
    _check_labels(x_labels, cols, "x")
    _check_labels(y_labels, rows, "y")
    if head_titles is not None and len(head_titles) != heads:
        raise ValueError(f"head_titles has {len(head_titles)} entries for {heads} heads")
    ncols = min(ncols, heads)
    nrows = -(-heads // ncols)
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


def document_attention(
    sentences: Sequence[Sequence[str]],
    sentence_weights,
    word_weights,
    *,
    title: str | None = None,
    ax: Axes | None = None,
    scale_words_by_sentence: bool = True,
    outline: Sequence[tuple[int, int]] = (),
    fontsize: float = 10.0,
) -> Axes:
    """Draw a document as text, the way the HAN paper shows attention (Yang et al., 2016, figure 5).

    Each sentence is one line: a red bar on the left shows its sentence weight, and each word's
    background is blue with a strength given by its word weight. With ``scale_words_by_sentence``
    the word weights are multiplied by the square root of their sentence weight (as in the paper), so
    that important words in unimportant sentences stay pale. ``sentence_weights`` has one entry per
    sentence (extra padded entries are ignored) and ``word_weights`` one row per sentence.
    ``outline`` lists ``(sentence, word)`` positions to frame in orange (for example the words known to
    decide the label). Returns the Axes.
    """
    sentence_array = _as_matrix(sentence_weights).reshape(-1)
    word_array = _as_matrix(word_weights)
    if word_array.ndim != 2:
        raise ValueError(
            f"word_weights must be 2-D (sentences, words), got shape {tuple(word_array.shape)}"
        )
    if len(sentence_array) < len(sentences) or word_array.shape[0] < len(sentences):
        raise ValueError(
            f"{len(sentences)} sentences need at least {len(sentences)} sentence weights and word-weight rows, "
            f"got {len(sentence_array)} and {word_array.shape[0]}"
        )
    longest = max((len(sentence) for sentence in sentences), default=0)
    if word_array.shape[1] < longest:
        raise ValueError(
            f"word_weights has {word_array.shape[1]} columns but a sentence has {longest} words"
        )
    scale = np.sqrt(sentence_array[: len(sentences), None]) if scale_words_by_sentence else 1.0
    shown = word_array[: len(sentences)] * scale
    top = float(shown.max()) if shown.size and shown.max() > 0 else 1.0
    if ax is None:
        characters = max(
            (sum(len(word) + 2 for word in sentence) for sentence in sentences), default=1
        )
        width = 1.6 + characters * 0.62 * fontsize / 72
        _, ax = plt.subplots(figsize=(min(16.0, width), 0.4 * len(sentences) + 0.7))
    bar_width = 0.1  # the sentence-weight bars take the left tenth of the axes
    row_height = 1.0 / max(len(sentences), 1)
    words_cmap, bars_cmap = plt.get_cmap("Blues"), plt.get_cmap("Reds")
    framed = {tuple(position) for position in outline}
    for row, sentence in enumerate(sentences):
        y = 1.0 - (row + 0.5) * row_height
        weight = float(sentence_array[row])
        bar = plt.Rectangle((0.0, y - 0.3 * row_height), bar_width * weight, 0.6 * row_height)
        bar.set_color(bars_cmap(0.25 + 0.7 * weight))
        ax.add_patch(bar)
        ax.text(
            bar_width * weight + 0.004,
            y,
            f"{weight:.2f}",
            va="center",
            fontsize=0.7 * fontsize,
            color="0.35",
        )
        previous = None
        for column, word in enumerate(sentence):
            strength = float(shown[row, column]) / top
            box = {
                "boxstyle": "round,pad=0.2",
                "facecolor": words_cmap(0.85 * strength),
                "edgecolor": "darkorange" if (row, column) in framed else "none",
                "linewidth": 1.5,
            }
            style = {"va": "center", "ha": "left", "fontsize": fontsize, "bbox": box}
            style["color"] = "white" if strength > 0.6 else "black"
            if (
                previous is None
            ):  # the first word sits right of the bars, the next ones after the previous word
                previous = ax.text(bar_width + 0.03, y, word, **style)
            else:
                gap = (0.55 * fontsize, 0)  # points between the boxes of neighbouring words
                previous = ax.annotate(
                    word,
                    xy=(1, 0.5),
                    xycoords=previous,
                    xytext=gap,
                    textcoords="offset points",
                    **style,
                )
    ax.set_xlim(0, 1)
    ax.set_ylim(0, 1)
    ax.axis("off")
    if title:
        ax.set_title(title, fontsize=fontsize, loc="left")
    return ax
