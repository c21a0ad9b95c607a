"""Draw the book's architecture diagrams as SVG files in book/images/diagrams/, each with a PNG twin.

    python scripts/diagrams/draw_diagrams.py            # write book/images/diagrams/*.svg and *.png
    python scripts/diagrams/draw_diagrams.py --png DIR  # also write PNG previews into DIR (to look at them)
    python scripts/diagrams/draw_diagrams.py --out DIR  # write them elsewhere (tests/chapters/test_diagrams.py)

The website and the printed book show the SVG (vectors). The PNG twin (at PNG_DPI) is what travels
inside the notebooks (scripts/notebooks/format_notebooks.py stores it as a data URI): Markdown renderers refuse
SVG data URIs as unsafe (markdown-it, which Jupyter Book uses, among them), PNG ones they all show.

This file is the editable source of the diagrams; the SVGs are its output and are committed so that the
website and JupyterLab show them without running anything. tests/chapters/test_diagrams.py redraws them and
checks that the committed files are byte for byte what this script draws.

Choices, so that every machine draws the same bytes and every browser shows the same picture:
* matplotlib (already a dependency of the book) with mathtext, so the labels use the chapters' own
  symbols ($\\mathbf{q}$, $W^Q$, $u_w$, ...) without a LaTeX installation;
* text converted to outlines (svg.fonttype "path"): the SVG needs no font on the reader's machine, so it
  looks the same on the website, offline, and in JupyterLab; only matplotlib's bundled fonts are used
  (DejaVu Sans and Computer Modern for the math), never the system's;
* a fixed hash salt and no date in the metadata, so the output does not change from run to run;
* an opaque white rounded background, so the diagrams stay readable in the website's dark theme.
Colours follow one key in every chapter: query orange, keys blue, values green, attention weights
purple, results yellow, operations grey.
"""

from __future__ import annotations

import argparse
import math
from collections.abc import Callable, Sequence
from pathlib import Path

import matplotlib

matplotlib.use("Agg")

import matplotlib.pyplot as plt  # noqa: E402
import numpy as np  # noqa: E402
from matplotlib import font_manager  # noqa: E402
from matplotlib.patches import Circle, FancyArrowPatch, FancyBboxPatch, Rectangle  # noqa: E402

ROOT = Path(__file__).resolve().parents[2]
OUTPUT = ROOT / "book" / "images" / "diagrams"

# (fill, edge) for each role; the same in every diagram
ROLES = {
    "query": ("#fde0c5", "#c85a00"),
    "key": ("#d4e4f7", "#1f5fa8"),
    "value": ("#d5f0d5", "#23803a"),
    "weight": ("#eadcf5", "#6f3596"),
    "result": ("#fff2b3", "#9a7b00"),
    "op": ("#eeeeee", "#555555"),
    "input": ("#ffffff", "#333333"),
    "attention": ("#fde9d2", "#b0621a"),
    "ffn": ("#dcecf7", "#3d6f94"),
    "norm": ("#f7f3c6", "#8a8030"),
    "embed": ("#f9dada", "#a04848"),
    "masked": ("#c9c9c9", "#7a7a7a"),
}
INK = "#222222"
MUTED = "#666666"
FONT = 12


def _use_bundled_fonts() -> None:
    """Draw with matplotlib's own fonts only, so the glyph outlines do not depend on the machine."""
    bundled = Path(matplotlib.get_data_path()) / "fonts"
    manager = font_manager.fontManager
    manager.ttflist = [f for f in manager.ttflist if Path(f.fname).is_relative_to(bundled)]
    manager.afmlist = [f for f in manager.afmlist if Path(f.fname).is_relative_to(bundled)]
    manager._findfont_cached.cache_clear()  # noqa: SLF001 (forget fonts found in the full list)


STYLE = {
    "svg.fonttype": "path",
    "svg.hashsalt": "from-attention-to-bert",
    "svg.image_inline": True,
    "font.family": "DejaVu Sans",
    "font.size": FONT,
    "mathtext.fontset": "cm",
    "path.simplify": False,
    "axes.unicode_minus": True,
}


class Canvas:
    """A figure whose data units are inches: (0, 0) bottom left, (width, height) top right."""

    def __init__(self, width: float, height: float) -> None:
        self.fig = plt.figure(figsize=(width, height))
        self.fig.patch.set_alpha(0.0)
        self.ax = self.fig.add_axes((0, 0, 1, 1))
        self.ax.set_xlim(0, width)
        self.ax.set_ylim(0, height)
        self.ax.set_axis_off()
        self.width, self.height = width, height
        self.ax.add_patch(
            FancyBboxPatch(
                (0.04, 0.04),
                width - 0.08,
                height - 0.08,
                boxstyle="round,pad=0,rounding_size=0.15",
                facecolor="white",
                edgecolor="#cccccc",
                linewidth=0.8,
                zorder=0,
            )
        )

    def box(
        self,
        x: float,
        y: float,
        w: float,
        h: float,
        text: str = "",
        role: str = "op",
        size: float = FONT,
        rounding: float = 0.08,
        lw: float = 1.3,
        dashed: bool = False,
        **text_options,
    ) -> tuple[float, float, float, float]:
        """A rounded box centred at (x, y); returns (x, y, w, h)."""
        fill, edge = ROLES[role]
        self.ax.add_patch(
            FancyBboxPatch(
                (x - w / 2, y - h / 2),
                w,
                h,
                boxstyle=f"round,pad=0,rounding_size={rounding}",
                facecolor=fill,
                edgecolor=edge,
                linewidth=lw,
                linestyle="--" if dashed else "-",
                zorder=2,
            )
        )
        if text:
            self.text(x, y, text, size=size, **text_options)
        return (x, y, w, h)

    def rect(
        self, x0: float, y0: float, w: float, h: float, role: str = "op", lw: float = 1.0, **options
    ) -> None:
        """A plain rectangle with its lower left corner at (x0, y0)."""
        fill, edge = ROLES[role]
        options.setdefault("zorder", 2)
        options.setdefault("facecolor", fill)
        self.ax.add_patch(Rectangle((x0, y0), w, h, edgecolor=edge, linewidth=lw, **options))

    def circle(
        self, x: float, y: float, r: float, text: str = "", role: str = "op", size: float = FONT
    ) -> None:
        fill, edge = ROLES[role]
        self.ax.add_patch(
            Circle((x, y), r, facecolor=fill, edgecolor=edge, linewidth=1.3, zorder=2)
        )
        if text:
            self.text(x, y, text, size=size)

    def text(
        self, x: float, y: float, s: str, size: float = FONT, color: str = INK, **options
    ) -> None:
        options.setdefault("ha", "center")
        options.setdefault("va", "center")
        options.setdefault("zorder", 4)
        self.ax.text(x, y, s, fontsize=size, color=color, **options)

    def arrow(
        self,
        start: tuple[float, float],
        end: tuple[float, float],
        color: str = INK,
        lw: float = 1.3,
        label: str = "",
        label_offset: tuple[float, float] = (0.0, 0.0),
        label_size: float = FONT - 1,
        label_color: str | None = None,
        style: str = "-|>",
        connection: str = "arc3",
        dashed: bool = False,
        **label_options,
    ) -> None:
        """An arrow from start to end, with an optional label beside its middle (offset in inches)."""
        self.ax.add_patch(
            FancyArrowPatch(
                start,
                end,
                arrowstyle=style,
                mutation_scale=13,
                color=color,
                linewidth=lw,
                shrinkA=0,
                shrinkB=0,
                connectionstyle=connection,
                linestyle="--" if dashed else "-",
                zorder=3,
            )
        )
        if label:
            mx, my = (
                (start[0] + end[0]) / 2 + label_offset[0],
                (start[1] + end[1]) / 2 + label_offset[1],
            )
            label_options.setdefault(
                "bbox", {"facecolor": "white", "edgecolor": "none", "pad": 1.0}
            )
            self.text(mx, my, label, size=label_size, color=label_color or color, **label_options)

    def line(
        self, xs: Sequence[float], ys: Sequence[float], color: str = INK, lw: float = 1.3, **options
    ) -> None:
        options.setdefault("zorder", 3)
        self.ax.plot(xs, ys, color=color, linewidth=lw, solid_capstyle="butt", **options)


def edge(role: str) -> str:
    return ROLES[role][1]


def softmax(x: np.ndarray) -> np.ndarray:
    e = np.exp(x - x.max())
    return e / e.sum()


# ---------------------------------------------------------------------------------------------------
# Chapter 1


def ch1_attention_lookup() -> Canvas:
    """Attention in three steps: score the query against every key, softmax, weighted sum of values."""
    c = Canvas(9.6, 4.7)
    rows = {"1": 3.45, "2": 2.6, "n": 0.9}
    weights = {"1": 0.15, "2": 0.62, "n": 0.1}
    xq, xk, xe, xs, xa, xv, xsum, xo = 0.75, 2.35, 3.55, 4.55, 5.65, 7.0, 8.05, 8.95
    top = 4.25
    for x, title, role in [
        (xq, "query", "query"),
        (xk, "keys", "key"),
        (xe, "scores", "op"),
        (xa, "weights", "weight"),
        (xv, "values", "value"),
        (xo, "output", "result"),
    ]:
        c.text(x, top, title, color=edge(role), size=FONT, fontweight="bold")
    c.box(xq, 2.2, 0.7, 0.6, r"$\mathbf{q}$", "query", size=16)
    for i, y in rows.items():
        c.arrow((xq + 0.35, 2.2), (xk - 0.42, y), color=edge("query"))
        c.box(xk, y, 0.8, 0.5, rf"$\mathbf{{k}}_{i}$", "key", size=15)
        c.arrow((xk + 0.4, y), (xe - 0.38, y))
        c.text(xe, y, rf"$e_{i}$", size=15)
        c.arrow((xe + 0.3, y), (xs - 0.25, y))
        bar = weights[i] * 1.3
        c.rect(xa - 0.45, y - 0.14, bar, 0.28, "weight")
        c.text(xa - 0.45 + bar + 0.05, y, rf"$a_{i}$", size=15, ha="left")
        c.text(xa + 0.78, y, r"$\times$", size=14)
        c.box(xv, y, 0.75, 0.5, rf"$\mathbf{{v}}_{i}$", "value", size=15)
        c.arrow((xv + 0.38, y), (xsum - 0.24, 2.2 + (y - 2.2) * 0.15), color=edge("value"))
    for x in (xk, xe, xa - 0.3, xv):
        c.text(x, 1.75, r"$\vdots$", size=15, color=MUTED)
    c.text(xq, 1.55, "what we\nlook for", size=FONT - 2, color=MUTED)
    c.text(xk, 0.38, r"$i = 1, \dots, n$", size=FONT, color=MUTED)
    c.text(
        (xq + xk) / 2 - 0.05,
        3.75,
        r"$\mathrm{score}(\mathbf{q}, \mathbf{k}_i)$",
        size=FONT,
        color=edge("query"),
    )
    # the softmax spans every row: it normalises over i
    c.box(xs, 2.175, 0.5, 3.1, "", "op")
    c.text(xs, 2.175, r"softmax over $i$", size=FONT - 1, rotation=90)
    for y in rows.values():
        c.arrow((xs + 0.25, y), (xa - 0.5, y))
    c.text(xa + 0.1, 0.38, r"$a_i \geq 0,\ \Sigma_i\, a_i = 1$", size=FONT, color=edge("weight"))
    c.circle(xsum, 2.2, 0.24, r"$\Sigma$", "op", size=15)
    c.arrow((xsum + 0.24, 2.2), (xo - 0.42, 2.2))
    c.box(xo, 2.2, 0.84, 0.55, r"$\Sigma_i\, a_i \mathbf{v}_i$", "result", size=14)
    c.text(xo, 1.55, "one vector,\nany $n$", size=FONT - 2, color=MUTED)
    return c


def ch1_hard_soft_lookup() -> Canvas:
    """The hard look-up (arg max: the best key's value) next to attention's soft one (a blend)."""
    entries = ["cat", "bird", "bicycle", "car"]
    keys = np.array([[1.0, 1.0, 0.0], [1.0, 0.0, 0.0], [0.0, 0.0, 0.0], [0.0, 0.0, 1.0]])
    values = np.array([[4.0, 0.0], [2.0, 0.0], [0.0, 2.0], [0.0, 4.0]])
    query = np.array([1.0, 1.0, 0.0])  # "a furry animal"
    scores = keys @ query
    hard = np.eye(len(entries))[scores.argmax()]
    soft = softmax(scores)
    c = Canvas(10.8, 5.0)
    panels = [
        (0.2, "hard look-up: the best key (arg max)", hard, "value of the best key"),
        (5.5, "soft look-up: attention (softmax)", soft, r"$\Sigma_i\, a_i \mathbf{v}_i$ ="),
    ]
    out_y = 0.62
    for x0, title, weights, result in panels:
        c.text(x0 + 2.5, 4.6, title, size=FONT + 1, fontweight="bold")
        c.box(
            x0 + 0.68, 2.35, 1.3, 0.75, "query\n\u201ca furry animal\u201d", "query", size=FONT - 1
        )
        c.text(x0 + 0.7, 1.65, r"$\mathbf{q} = (1, 1, 0)$", size=FONT, color=edge("query"))
        c.text(x0 + 1.95, 4.1, "key", color=edge("key"), size=FONT - 1, fontweight="bold")
        c.text(x0 + 3.05, 4.1, "weight", color=edge("weight"), size=FONT - 1, fontweight="bold")
        c.text(
            x0 + 4.2,
            4.1,
            "value\n(legs, wheels)",
            color=edge("value"),
            size=FONT - 1,
            fontweight="bold",
        )
        rows = [3.45 - 0.66 * i for i in range(len(entries))]
        for name, key, value, w, y in zip(entries, keys, values, weights, rows, strict=True):
            c.arrow((x0 + 1.33, 2.35), (x0 + 1.47, y), color=edge("query"), lw=1.0)
            shown_key = "(" + ", ".join(f"{k:.0f}" for k in key) + ")"
            c.box(x0 + 1.95, y, 0.95, 0.56, f"{name}\n{shown_key}", "key", size=FONT - 2)
            c.rect(x0 + 2.55, y - 0.14, max(0.7 * w, 0.02), 0.28, "weight")
            c.text(
                x0 + 2.55 + 0.7 * w + 0.06,
                y,
                f"{w:.2f}",
                size=FONT - 2,
                ha="left",
                color=edge("weight"),
            )
            c.box(
                x0 + 4.2, y, 0.85, 0.45, f"({value[0]:.0f}, {value[1]:.0f})", "value", size=FONT - 1
            )
            if w > 0:  # a line from each value that takes part, as thick as its weight
                c.line([x0 + 4.625, x0 + 4.85], [y, y], color=edge("value"), lw=0.6 + 2.4 * w)
        top = max(y for y, w in zip(rows, weights, strict=True) if w > 0)
        c.line([x0 + 4.85, x0 + 4.85], [top, out_y], color=edge("value"), lw=1.3)
        c.arrow((x0 + 4.85, out_y), (x0 + 4.65, out_y), color=edge("value"))
        out = weights @ values
        shown = (
            f"({out[0]:.0f}, {out[1]:.0f})"
            if weights.max() == 1
            else f"({out[0]:.2f}, {out[1]:.2f})"
        )
        c.box(x0 + 4.05, out_y, 1.2, 0.5, shown, "result", size=FONT)
        c.text(x0 + 3.35, out_y, result, size=FONT - 1, ha="right")
    c.line([5.3, 5.3], [0.35, 4.4], color="#bbbbbb", lw=1.0)
    c.text(2.7, 0.2, "returns one entry's value exactly", size=FONT - 2, color=MUTED)
    c.text(8.0, 0.2, "returns a blend of every value", size=FONT - 2, color=MUTED)
    return c


# ---------------------------------------------------------------------------------------------------
# Chapter 2


def _panel(
    c: Canvas, x0: float, y0: float, w: float, h: float, title: str, corner: str = "bottom right"
) -> None:
    c.ax.add_patch(
        FancyBboxPatch(
            (x0, y0),
            w,
            h,
            boxstyle="round,pad=0,rounding_size=0.12",
            facecolor="#f7f7f7",
            edgecolor="#bbbbbb",
            linewidth=1.0,
            zorder=1,
        )
    )
    y = y0 + 0.22 if corner.startswith("bottom") else y0 + h - 0.22
    x, ha = (x0 + w - 0.15, "right") if corner.endswith("right") else (x0 + 0.15, "left")
    c.text(x, y, title, size=FONT - 1, color=MUTED, ha=ha, fontstyle="italic")


def _attention_level(
    c: Canvas,
    columns: dict[str, float],
    y_gru: float,
    gru_label: str,
    value: Callable[[str], str],
    key: Callable[[str], str],
    query: str,
    query_note: str,
    score: str,
    weights: dict[str, float],
    key_formula: str,
    score_formula: str,
) -> float:
    """One level of HAN: GRU states (values), keys, attention with a learned query; returns the top y."""
    xs = [x for x in columns.values()]
    left, right = min(xs) - 0.55, max(xs) + 0.55
    # the bidirectional GRU: a forward chain (top, left to right) and a backward one (bottom)
    c.box((left + right) / 2, y_gru, right - left, 0.5, "", "op")
    for x, x_next in zip(xs, xs[1:], strict=False):
        c.arrow((x + 0.22, y_gru + 0.11), (x_next - 0.22, y_gru + 0.11), lw=1.0)
        c.arrow((x_next - 0.22, y_gru - 0.11), (x + 0.22, y_gru - 0.11), lw=1.0)
    c.text(right + 0.12, y_gru + 0.11, gru_label, size=FONT - 1, ha="left")
    c.text(
        right + 0.12,
        y_gru - 0.14,
        "top: forward, bottom: backward;\neach state joins both",
        size=FONT - 2,
        color=MUTED,
        ha="left",
    )
    y_h, y_u, y_att = y_gru + 0.85, y_gru + 1.65, y_gru + 2.55
    for name, x in columns.items():
        if name == "dots":
            for y in (y_h, y_u):
                c.text(x, y, r"$\cdots$", size=15, color=MUTED)
            continue
        c.arrow((x, y_gru + 0.25), (x, y_h - 0.22))
        c.box(x, y_h, 0.82, 0.44, value(name), "value", size=14)
        c.arrow((x - 0.2, y_h + 0.22), (x - 0.2, y_u - 0.2), color=edge("key"))
        c.box(x - 0.2, y_u, 0.62, 0.4, key(name), "key", size=14)
        c.arrow((x - 0.2, y_u + 0.2), (x - 0.2, y_att - 0.3), color=edge("key"))
        c.arrow((x + 0.3, y_h + 0.22), (x + 0.3, y_att - 0.3), color=edge("value"))
    c.text(right + 0.12, y_h, "values", size=FONT - 1, color=edge("value"), ha="left")
    c.text(right + 0.12, y_u, "keys " + key_formula, size=FONT - 1, color=edge("key"), ha="left")
    # attention: a box holding the weights as bars, the learned query coming in from the right
    c.box((left + right) / 2, y_att, right - left, 0.6, "", "op")
    for name, x in columns.items():
        if name == "dots":
            c.text(x, y_att, r"$\cdots$", size=15, color=MUTED)
            continue
        height = 0.45 * weights[name]
        c.rect(x - 0.12, y_att - 0.24, 0.24, height, "weight")
        c.text(x + 0.2, y_att - 0.1, score.format(name), size=12, color=edge("weight"), ha="left")
    xq = right + 1.75
    c.box(xq, y_att, 0.75, 0.5, query, "query", size=15)
    c.text(xq, y_att - 0.55, query_note, size=FONT - 2, color=edge("query"))
    c.arrow(
        (xq - 0.38, y_att),
        (right, y_att),
        color=edge("query"),
        label=score_formula,
        label_offset=(0, 0.22),
        label_size=13,
        bbox={"facecolor": "#f7f7f7", "edgecolor": "none", "pad": 1.0},
    )
    return y_att + 0.3


def ch2_han() -> Canvas:
    """The hierarchical attention network, bottom to top, in the chapter's symbols."""
    c = Canvas(9.4, 10.35)
    words = {"1": 1.2, "2": 2.45, "dots": 3.55, "T": 4.65}
    sentences = {"1": 1.2, "i": 2.45, "dots": 3.55, "L": 4.65}
    y_w, y_s = 0.75, 5.3
    _panel(c, 0.25, 0.25, 8.9, 4.3, "word level: each sentence $i$ of the document")
    _panel(c, 0.25, y_s - 0.5, 8.9, 4.3, "sentence level: the document")
    for name, x in words.items():
        if name == "dots":
            c.text(x, y_w, r"$\cdots$", size=15, color=MUTED)
            continue
        c.box(x, y_w, 0.82, 0.44, rf"$w_{{i{name}}}$", "input", size=14)
        c.arrow((x, y_w + 0.22), (x, y_w + 0.52))
    top = _attention_level(
        c,
        words,
        y_w + 0.77,
        "bidirectional word GRU",
        lambda t: rf"$h_{{i{t}}}$",
        lambda t: rf"$u_{{i{t}}}$",
        r"$u_w$",
        "the query: a learned context vector,\n\u201cwhich word is informative?\u201d",
        r"$\alpha_{{i{}}}$",
        {"1": 0.25, "2": 0.95, "T": 0.4},
        r"$u_{it} = \tanh(W_w h_{it} + b_w)$",
        r"score $u_{it}^\top u_w$",
    )
    c.arrow((2.45, top), (2.45, y_s - 0.22))
    c.text(
        2.65, (top + y_s) / 2 - 0.1, r"$s_i = \Sigma_t\, \alpha_{it} h_{it}$", size=14, ha="left"
    )
    for name, x in sentences.items():
        if name == "dots":
            c.text(x, y_s, r"$\cdots$", size=15, color=MUTED)
            continue
        c.box(x, y_s, 0.82, 0.44, rf"$s_{name}$", "result" if name == "i" else "input", size=14)
        c.arrow((x, y_s + 0.22), (x, y_s + 0.52))
    top2 = _attention_level(
        c,
        sentences,
        y_s + 0.77,
        "bidirectional sentence GRU",
        lambda i: rf"$h_{i}$",
        lambda i: rf"$u_{i}$",
        r"$u_s$",
        "the query: a learned context vector,\n\u201cwhich sentence is informative?\u201d",
        r"$\alpha_{}$",
        {"1": 0.3, "i": 0.9, "L": 0.35},
        r"$u_i = \tanh(W_s h_i + b_s)$",
        r"score $u_i^\top u_s$",
    )
    y_v = top2 + 0.7
    c.arrow((2.45, top2), (2.45, y_v - 0.25))
    c.box(2.45, y_v, 1.9, 0.5, r"$v = \Sigma_i\, \alpha_i h_i$", "result", size=14)
    c.arrow((3.4, y_v), (4.75, y_v))
    c.box(6.2, y_v, 2.9, 0.5, r"$p = \mathrm{softmax}(W_c v + b_c)$", "op", size=14)
    c.text(6.2, y_v - 0.45, "classifier: positive or negative", size=FONT - 2, color=MUTED)
    c.text(0.45, y_v, "document\nvector", size=FONT - 2, color=MUTED, ha="left")
    return c


# ---------------------------------------------------------------------------------------------------
# Chapter 3


def _split_box(
    c: Canvas, x: float, y: float, w: float, h: float, text: str, size: float = 14
) -> None:
    """A box that is both a key (blue outline) and a value (green fill).

    Not split in two halves: h_j = [forward; backward] would read as one half per direction.
    """
    c.ax.add_patch(
        FancyBboxPatch(
            (x - w / 2, y - h / 2),
            w,
            h,
            boxstyle="round,pad=0,rounding_size=0.02",
            facecolor=ROLES["value"][0],
            edgecolor=edge("key"),
            linewidth=2.6,
            zorder=3,
        )
    )
    c.text(x, y, text, size=size)


def ch3_decoder_step() -> Canvas:
    """One decoding step t: s_{t-1} queries the encoder outputs h_j, the context c_t feeds the new state."""
    c = Canvas(12.6, 7.9)
    # the encoder runs once per sentence (bottom left); everything in the L-shaped panel around it
    # is decoding step t, recomputed at every step
    _panel(c, 0.25, 0.25, 7.0, 2.65, "encoder: runs once per sentence", corner="bottom left")
    top, split, right = 7.65, 3.1, 7.45
    xs = [0.25, 12.35, 12.35, right, right, 0.25, 0.25]
    ys = [top, top, 0.25, 0.25, split, split, top]
    c.ax.fill(xs, ys, facecolor="#f7f7f7", edgecolor="#bbbbbb", linewidth=1.0, zorder=1)
    c.text(
        0.4,
        top - 0.22,
        "decoder, step $t$: recomputed at every step",
        size=FONT - 1,
        color=MUTED,
        ha="left",
        fontstyle="italic",
    )
    columns = {"1": 1.1, "2": 2.3, "dots": 3.4, "S": 4.5}
    y_x, y_gru, y_h = 0.8, 1.55, 2.4
    y_b, y_e, y_soft, y_a, y_c = 3.35, 4.0, 4.75, 5.4, 6.4
    c.box(2.8, y_gru, 4.3, 0.46, "bidirectional GRU", "op", size=FONT - 1)
    c.box(2.8, y_soft, 4.3, 0.46, r"softmax over the source positions $j$", "op", size=FONT - 1)
    for name, x in columns.items():
        if name == "dots":
            for y in (y_x, y_h, y_e, y_a):
                c.text(x, y, r"$\cdots$", size=15, color=MUTED)
            continue
        c.box(x, y_x, 0.7, 0.42, rf"$x_{name}$", "input", size=14)
        c.arrow((x, y_x + 0.21), (x, y_gru - 0.23))
        c.arrow((x, y_gru + 0.23), (x, y_h - 0.22))
        _split_box(c, x, y_h, 0.8, 0.44, rf"$\mathbf{{h}}_{name}$")
        c.arrow((x - 0.2, y_h + 0.22), (x - 0.2, y_e - 0.28), color=edge("key"))
        c.circle(x - 0.2, y_e, 0.28, "", "op")
        c.text(x - 0.2, y_e, rf"$e_{{t,{name}}}$", size=11)
        c.arrow((x - 0.7, y_b), (x - 0.42, y_e - 0.18), color=edge("query"), lw=1.2)
        c.arrow((x - 0.2, y_e + 0.28), (x - 0.2, y_soft - 0.23))
        c.arrow((x - 0.2, y_soft + 0.23), (x - 0.2, y_a - 0.22))
        c.rect(x - 0.32, y_a - 0.2, 0.24, 0.4 * {"1": 0.2, "2": 0.9, "S": 0.3}[name], "weight")
        c.text(
            x - 0.04,
            y_a - 0.05,
            rf"$\alpha_{{t,{name}}}$",
            size=12,
            color=edge("weight"),
            ha="left",
        )
        # the value path: h_j goes up to the weighted sum
        c.line([x + 0.3, x + 0.3], [y_h + 0.22, y_c - 0.5], color=edge("value"), lw=1.1)
        c.arrow(
            (x + 0.3, y_c - 0.5), (2.8 + (x - 2.8) * 0.3, y_c - 0.25), color=edge("value"), lw=1.1
        )
    c.text(5.0, y_h + 0.12, "keys = values:", size=FONT - 1, ha="left")
    c.text(5.0, y_h - 0.2, r"the outputs $\mathbf{h}_j$", size=FONT - 1, ha="left")
    c.box(2.8, y_c, 2.3, 0.5, r"$\mathbf{c}_t = \Sigma_j\, \alpha_{t,j} \mathbf{h}_j$", "result")
    c.text(2.8, y_c + 0.45, "the context of step $t$", size=FONT - 2, color=MUTED)
    # s_0, once per sentence, from the final states of the two directions
    c.arrow((4.95, y_gru), (5.25, y_gru))
    s_0 = (
        r"$\mathbf{s}_0 = \tanh(\mathbf{W}_{\mathrm{init}}\mathbf{h}_{\mathrm{final}}"
        r" + \mathbf{b}_{\mathrm{init}})$"
    )
    c.box(6.2, y_gru, 1.9, 0.46, s_0, "query", size=9)
    c.text(6.2, y_gru - 0.45, "final states: the first\ndecoder state", size=FONT - 3, color=MUTED)
    # the decoder
    xd = 9.9
    y_gru_d, y_st, y_out, y_y = 4.75, 5.55, 6.4, 7.1
    xs_prev, xe = xd - 0.9, xd + 1.0
    c.box(xs_prev, y_b, 0.9, 0.46, r"$\mathbf{s}_{t-1}$", "query", size=14)
    c.text(xs_prev + 0.55, y_b, "the query", size=FONT - 2, color=edge("query"), ha="left")
    c.line([xs_prev - 0.45, 0.4], [y_b, y_b], color=edge("query"), lw=1.3, zorder=1.5)
    c.text(
        5.95,
        y_b + 0.22,
        r"$e_{t,j} = \mathrm{score}(\mathbf{s}_{t-1}, \mathbf{h}_j)$",
        size=12,
        color=edge("query"),
        bbox={"facecolor": "#f7f7f7", "edgecolor": "none", "pad": 1.0},
    )
    c.arrow(
        (7.15, y_gru),
        (xs_prev, y_b - 0.23),
        color=edge("query"),
        dashed=True,
        connection="angle,angleA=0,angleB=90,rad=0",
    )
    c.text(8.3, y_gru + 0.15, "at $t = 1$", size=FONT - 2, color=edge("query"))
    c.box(xe, 0.8, 0.95, 0.46, r"$y_{t-1}$", "input", size=14)
    c.text(xe, 0.4, "previous character", size=FONT - 2, color=MUTED)
    c.arrow((xe, 1.03), (xe, 1.72))
    c.box(xe, 1.95, 0.95, 0.46, r"$\mathbf{E}'y_{t-1}$", "op", size=13)
    c.box(xd, y_gru_d, 2.6, 0.5, "decoder GRU", "op", size=FONT)
    c.arrow((xs_prev, y_b + 0.23), (xs_prev, y_gru_d - 0.25), color=edge("query"))
    c.arrow((xe, 2.18), (xe, y_gru_d - 0.25))
    # c_t feeds the GRU and the output layer
    c.arrow((3.95, y_c), (xd - 1.9, y_out), color=edge("result"))
    c.arrow(
        (7.0, y_c),
        (xd - 1.3, y_gru_d),
        color=edge("result"),
        connection="angle,angleA=-90,angleB=0,rad=0",
    )
    c.text(6.4, y_c + 0.22, r"$\mathbf{c}_t$", size=15, color=edge("result"))
    c.arrow((xd, y_gru_d + 0.25), (xd, y_st - 0.22))
    c.box(xd, y_st, 0.8, 0.44, r"$\mathbf{s}_t$", "query", size=14)
    c.text(
        xd + 0.5, y_st, "the query of\nstep $t + 1$", size=FONT - 2, color=edge("query"), ha="left"
    )
    c.arrow((xd, y_st + 0.22), (xd, y_out - 0.25))
    # E'y_{t-1} feeds the output layer too
    c.line([xe + 0.48, 12.05, 12.05], [1.95, 1.95, y_out], color=INK)
    c.arrow((12.05, y_out), (xd + 1.9, y_out))
    c.box(
        xd,
        y_out,
        3.8,
        0.5,
        r"$\mathrm{softmax}(\mathbf{W}_o[\mathbf{s}_t; \mathbf{c}_t; \mathbf{E}'y_{t-1}] + \mathbf{b}_o)$",
        "op",
        size=12,
    )
    c.arrow((xd, y_out + 0.25), (xd, y_y - 0.2))
    c.text(xd, y_y + 0.05, r"next character $y_t$", size=FONT)
    return c


def ch3_without_attention() -> Canvas:
    """The encoder-decoder without attention: one fixed vector, h_final, feeds every decoder step."""
    c = Canvas(11.5, 6.1)
    _panel(c, 0.25, 0.25, 7.3, 2.55, "encoder: runs once per sentence", corner="bottom left")
    columns = {"1": 1.1, "2": 2.3, "dots": 3.4, "S": 4.5}
    y_x, y_gru, y_h = 0.8, 1.55, 2.4
    c.box(2.8, y_gru, 4.3, 0.46, "bidirectional GRU", "op", size=FONT - 1)
    for name, x in columns.items():
        if name == "dots":
            for y in (y_x, y_h):
                c.text(x, y, r"$\cdots$", size=15, color=MUTED)
            continue
        c.box(x, y_x, 0.7, 0.42, rf"$x_{name}$", "input", size=14)
        c.arrow((x, y_x + 0.21), (x, y_gru - 0.23))
        c.arrow((x, y_gru + 0.23), (x, y_h - 0.22), color=MUTED, dashed=True)
        c.box(x, y_h, 0.8, 0.44, rf"$\mathbf{{h}}_{name}$", "masked", size=14, dashed=True)
    c.text(5.0, y_h + 0.12, "outputs $\\mathbf{h}_j$:", size=FONT - 1, ha="left", color=MUTED)
    c.text(5.0, y_h - 0.2, "read by no one", size=FONT - 1, ha="left", color=MUTED)
    # the final states, the only way out of the encoder
    c.arrow((4.95, y_gru), (5.75, y_gru))
    c.box(6.5, y_gru, 1.5, 0.5, r"$\mathbf{h}_{\mathrm{final}}$", "result", size=14)
    c.text(6.5, y_gru - 0.5, "final states", size=FONT - 2, color=MUTED)
    # the same context c at every decoder step
    y_bus, y_dec, y_out = 3.45, 4.5, 5.55
    steps = {"1": 2.2, "2": 5.0, "3": 7.8}
    c.line([6.5, 6.5], [y_gru + 0.25, y_bus], color=edge("result"), lw=1.6)
    c.line([1.2, 9.0], [y_bus, y_bus], color=edge("result"), lw=1.6)
    c.text(
        9.15,
        y_bus,
        "the same context $\\mathbf{c} = \\mathbf{h}_{\\mathrm{final}}$\nat every step",
        size=FONT - 2,
        color=edge("result"),
        ha="left",
    )
    previous = {"1": r"$\langle\mathrm{bos}\rangle$", "2": r"$y_1$", "3": r"$y_2$"}
    for t, x in steps.items():
        c.box(x, y_dec, 1.5, 0.5, "decoder GRU", "op", size=FONT - 1)
        c.arrow((x - 0.35, y_bus), (x - 0.35, y_dec - 0.25), color=edge("result"), lw=1.4)
        c.box(x + 0.45, y_bus - 0.4, 0.7, 0.36, previous[t], "input", size=12)
        c.arrow((x + 0.45, y_bus - 0.22), (x + 0.45, y_dec - 0.25))
        c.arrow((x, y_dec + 0.25), (x, y_out - 0.2))
        c.text(x, y_out, rf"$y_{t}$", size=15)
        c.text(x - 0.85, y_dec + 0.38, rf"$t = {t}$", size=FONT - 2, color=MUTED)
    c.text(0.4, y_dec + 0.05, r"$\mathbf{s}_0$", size=14, color=edge("query"))
    c.arrow((0.7, y_dec), (steps["1"] - 0.75, y_dec), color=edge("query"))
    for a, b in (("1", "2"), ("2", "3")):
        c.arrow(
            (steps[a] + 0.75, y_dec),
            (steps[b] - 0.75, y_dec),
            color=edge("query"),
            label=rf"$\mathbf{{s}}_{a}$",
            label_offset=(0, 0.2),
        )
    c.arrow((steps["3"] + 0.75, y_dec), (9.4, y_dec), color=edge("query"))
    c.text(9.55, y_dec, r"$\cdots$", size=15, color=MUTED, ha="left")
    c.text(
        0.4,
        y_dec - 0.4,
        r"($\mathbf{s}_0$ from $\mathbf{h}_{\mathrm{final}}$)",
        size=FONT - 3,
        color=MUTED,
        ha="left",
    )
    return c


# ---------------------------------------------------------------------------------------------------
# Chapter 4


def _matrix(
    c: Canvas,
    x: float,
    y: float,
    w: float,
    h: float,
    label: str,
    role: str,
    shape: str,
    size: float = 16,
    shape_below: bool = True,
) -> None:
    """A matrix drawn to scale (rows = positions), its symbol inside and its shape below (or above)."""
    c.rect(x - w / 2, y - h / 2, w, h, role, lw=1.3)
    c.text(x, y, label, size=size)
    c.text(
        x, y - h / 2 - 0.2 if shape_below else y + h / 2 + 0.2, shape, size=FONT - 1, color=MUTED
    )


def ch4_self_attention() -> Canvas:
    """Self-attention as matrices, with every shape written beside its arrow."""
    c = Canvas(10.6, 5.0)
    n = 1.3  # the height of n rows
    shape = {"label_size": 13, "label_color": INK}
    _matrix(c, 0.95, 2.55, 1.1, n, r"$X$", "input", r"$n \times d_{\mathrm{model}}$")
    c.text(0.95, 3.45, "the words", size=FONT - 1, color=MUTED)
    ys = {"Q": 4.05, "K": 2.55, "V": 1.05}
    roles = {"Q": "query", "K": "key", "V": "value"}
    for name, y in ys.items():
        c.arrow(
            (1.5, 2.55 + (y - 2.55) * 0.25),
            (2.95, y),
            color=edge(roles[name]),
            label=rf"$W^{name}$",
            label_size=15,
            label_offset=(-0.05, 0.2),
        )
        _matrix(c, 3.3, y, 0.6, n * 0.8, rf"${name}$", roles[name], "", size=16)
    c.text(
        0.35,
        0.32,
        r"$W^Q, W^K\!: d_{\mathrm{model}} \times d_k \qquad W^V\!: d_{\mathrm{model}} \times d_v$",
        size=FONT,
        color=MUTED,
        ha="left",
    )
    # scores
    c.box(5.15, 3.3, 1.55, 0.75, r"$\dfrac{QK^\top}{\sqrt{d_k}}$", "op", size=15)
    c.arrow(
        (3.6, 4.05),
        (4.37, 3.45),
        color=edge("query"),
        label=r"$n \times d_k$",
        label_offset=(0.15, 0.22),
        **shape,
    )
    c.arrow(
        (3.6, 2.55),
        (4.37, 3.15),
        color=edge("key"),
        label=r"$K^\top\!: d_k \times n$",
        label_offset=(0.25, -0.28),
        **shape,
    )
    c.arrow((5.92, 3.3), (6.62, 3.3), label=r"$n \times n$", label_offset=(0, 0.25), **shape)
    c.box(7.4, 3.3, 1.55, 0.6, "softmax\nover each row", "op", size=FONT - 1)
    c.arrow((8.17, 3.3), (8.7, 3.3))
    _matrix(c, 9.35, 3.3, n, n, r"$A$", "weight", "", shape_below=False)
    c.text(9.35, 4.25, r"the weights $\alpha_{ij}$", size=FONT, color=edge("weight"))
    # weighted sum of the values
    c.box(7.4, 1.05, 0.9, 0.6, r"$A\,V$", "op", size=15)
    c.arrow(
        (9.35, 2.65),
        (7.85, 1.3),
        color=edge("weight"),
        label=r"$n \times n$",
        label_offset=(0.3, 0.12),
        **shape,
    )
    c.arrow(
        (3.6, 1.05),
        (6.95, 1.05),
        color=edge("value"),
        label=r"$n \times d_v$",
        label_offset=(0.0, 0.22),
        **shape,
    )
    c.arrow((7.85, 1.05), (8.95, 1.05), label=r"$n \times d_v$", label_offset=(0.0, 0.22), **shape)
    _matrix(c, 9.35, 1.05, 0.6, n * 0.8, r"$Z$", "result", "", size=16)
    c.text(10.2, 1.05, "one\nvector\nper\nword", size=FONT - 2, color=MUTED)
    return c


def ch4_positional_curves() -> Canvas:
    """A few dimensions of the sinusoidal positional encoding drawn as curves over the positions."""
    d_model, positions = 64, np.arange(100)
    c = Canvas(9.6, 5.6)
    dims = [(0, "sin"), (1, "cos"), (16, "sin"), (40, "sin")]
    axes_height, top = 1.02, 5.05
    for k, (dim, fn) in enumerate(dims):
        i = dim // 2
        omega = 1.0 / 10000 ** (2 * i / d_model)
        values = np.sin(positions * omega) if fn == "sin" else np.cos(positions * omega)
        y0 = top - (k + 1) * (axes_height + 0.12)
        ax = c.fig.add_axes((3.25 / c.width, y0 / c.height, 6.05 / c.width, axes_height / c.height))
        ax.set_facecolor("white")
        fine = np.linspace(0, 99, 991)
        curve = np.sin(fine * omega) if fn == "sin" else np.cos(fine * omega)
        ax.plot(fine, curve, color=edge("key"), lw=1.2)
        ax.plot(positions, values, "o", color=edge("key"), markersize=2.4)
        ax.axhline(0, color="#bbbbbb", lw=0.8)
        ax.set_xlim(-1, 100)
        ax.set_ylim(-1.25, 1.25)
        ax.set_yticks([-1, 0, 1])
        ax.tick_params(labelsize=FONT - 3)
        for side in ("top", "right"):
            ax.spines[side].set_visible(False)
        if k < len(dims) - 1:
            ax.set_xticklabels([])
        else:
            ax.set_xlabel(r"position $pos$", fontsize=FONT - 1)
        period = 2 * math.pi / omega
        label = rf"dimension {dim}: $\{fn}(\omega_{{{i}}}\, pos)$"
        turn = f"{period:.1f}" if period < 100 else f"{period:,.0f}"
        note = rf"$\omega_{{{i}}} = {omega:.3g}$:" + f"\none turn in {turn} positions"
        c.text(0.3, y0 + axes_height * 0.7, label, size=FONT, ha="left")
        c.text(0.3, y0 + axes_height * 0.3, note, size=FONT - 2, ha="left", color=MUTED)
    c.text(
        c.width / 2,
        top + 0.25,
        r"$PE_{(pos,\,2\ell)} = \sin(\omega_\ell\, pos)$,  $PE_{(pos,\,2\ell+1)} = \cos(\omega_\ell\, pos)$,  "
        r"$\omega_\ell = 1/10000^{2\ell/d_{\mathrm{model}}}$,  $d_{\mathrm{model}} = 64$",
        size=FONT,
    )
    return c


# ---------------------------------------------------------------------------------------------------
# Chapter 5


def _stack(
    c: Canvas,
    x: float,
    y: float,
    w: float,
    h: float,
    text: str,
    role: str,
    copies: int = 4,
    size: float = FONT,
) -> None:
    """h copies of a box, drawn as a stack of cards (the paper's picture of parallel heads)."""
    for k in range(copies - 1, 0, -1):
        c.box(x + 0.09 * k, y + 0.09 * k, w, h, "", role, lw=1.0)
    c.box(x, y, w, h, text, role, size=size)


def ch5_multi_head() -> Canvas:
    """Multi-head attention: h projections, h attentions in parallel, concatenation, W^O."""
    c = Canvas(10.6, 6.6)
    _panel(c, 0.25, 0.25, 5.6, 6.1, "the layer")
    xs = {"Q": 1.3, "K": 2.95, "V": 4.6}
    roles = {"Q": "query", "K": "key", "V": "value"}
    inputs = {"Q": r"$X_q$", "K": r"$X_{kv}$", "V": r"$X_{kv}$"}
    rows = {"Q": "m", "K": "n", "V": "n"}
    widths = {"Q": "d_k", "K": "d_k", "V": "d_v"}
    for name, x in xs.items():
        c.box(x, 0.75, 0.7, 0.45, inputs[name], roles[name], size=15)
        c.arrow(
            (x, 0.98),
            (x, 1.5),
            label=rf"${rows[name]} \times d_{{\mathrm{{model}}}}$",
            label_offset=(0.0, 0.0),
            label_size=11,
        )
        _stack(c, x - 0.12, 1.85, 1.25, 0.55, rf"$W_i^{name}$", roles[name], size=14)
        c.arrow(
            (x + 0.02, 2.4),
            (x - 0.12 + (2.95 - x) * 0.45, 3.0),
            color=edge(roles[name]),
            label=rf"${rows[name]} \times {widths[name]}$",
            label_size=11,
            label_offset=(0.0, 0.0),
        )
    c.text(5.6, 1.75, r"$\times h$", size=FONT, color=MUTED)
    _stack(
        c,
        2.85,
        3.3,
        4.1,
        0.6,
        r"$\mathrm{head}_i = \mathrm{softmax}(X_q W_i^Q (X_{kv} W_i^K)^\top"
        r" / \sqrt{d_k})\, X_{kv} W_i^V$",
        "weight",
        size=11,
    )
    c.text(5.5, 3.85, r"$\times h$", size=FONT, color=edge("weight"))
    c.arrow(
        (2.85, 3.6),
        (2.85, 4.3),
        label=r"$h$ times $m \times d_v$",
        label_size=11,
        label_offset=(0.75, 0.0),
    )
    c.box(
        2.85,
        4.55,
        4.1,
        0.5,
        r"$\mathrm{Concat}(\mathrm{head}_0, \dots, \mathrm{head}_{h-1})$",
        "op",
        size=13,
    )
    c.arrow(
        (2.85, 4.8),
        (2.85, 5.15),
        label=r"$m \times h d_v$",
        label_size=11,
        label_offset=(0.55, 0.0),
    )
    c.box(2.85, 5.4, 1.5, 0.5, r"$W^O$", "op", size=15)
    c.arrow(
        (2.85, 5.65),
        (2.85, 6.2),
        label=r"$m \times d_{\mathrm{model}}$",
        label_size=11,
        label_offset=(0.7, 0.0),
    )
    # the split, on the right
    _panel(c, 6.05, 0.25, 4.3, 6.1, "splitting into heads costs no parameters", corner="top left")
    x0, width, top = 6.5, 3.4, 5.3
    c.text(8.2, top + 0.42, r"$XW^Q$:  $n \times d_{\mathrm{model}}$", size=FONT)
    colours = ["#fde0c5", "#fbcfa3", "#f8bd82", "#f5ab62"]
    for k in range(4):
        c.rect(x0 + k * width / 4, top - 1.7, width / 4, 1.7, "query", lw=1.0, facecolor=colours[k])
        c.text(
            x0 + (k + 0.5) * width / 4,
            top - 0.85,
            rf"$XW_{k}^Q$" if k < 3 else r"$XW_{h-1}^Q$",
            size=13,
        )
        c.text(
            x0 + (k + 0.5) * width / 4,
            top + 0.12,
            f"head {k}" if k < 3 else "head $h-1$",
            size=FONT - 2,
            color=MUTED,
        )
    c.text(x0 + width / 8, top - 1.92, r"$d_k$", size=FONT - 1, color=MUTED)
    c.text(x0 - 0.17, top - 0.85, r"$n$", size=FONT, color=MUTED)
    c.text(8.2, 2.95, r"$d_k = d_v = d_{\mathrm{model}} / h$", size=FONT + 1)
    c.text(8.2, 2.3, r"$W^Q = [\,W_0^Q \mid W_1^Q \mid \cdots \mid W_{h-1}^Q\,]$", size=FONT)
    c.text(8.2, 1.65, r"$W^Q, W^K, W^V, W^O$: $4\, d_{\mathrm{model}}^2$ numbers", size=FONT - 1)
    c.text(8.2, 1.25, r"whatever $h$ is", size=FONT - 1)
    c.text(8.2, 0.65, "drawn here with 4 heads", size=FONT - 2, color=MUTED)
    return c


def ch5_split_heads() -> Canvas:
    """The batched form's reshape: n x d_model -> n x h x d_k -> h x n x d_k -> (attention) -> concat."""
    c = Canvas(10.6, 4.6)
    colours = ["#fde0c5", "#fbcfa3", "#f8bd82", "#f5ab62"]
    n_rows, top = 5, 3.45  # positions drawn, the top edge of every tensor
    cell_h = 0.3  # one position's row
    height = n_rows * cell_h

    def grid(x0: float, widths: list[float], gap: float, shades: list[str]) -> None:
        """n rows of h coloured column groups, `gap` apart."""
        x = x0
        for w, shade in zip(widths, shades, strict=True):
            for r in range(n_rows):
                y = top - (r + 1) * cell_h
                c.rect(x, y, w, cell_h, "query", lw=0.6, facecolor=shade)
            x += w + gap

    def caption(x: float, code: str, shape: str) -> None:
        c.text(x, top + 0.55, code, size=FONT - 1, family="DejaVu Sans Mono")
        c.text(x, top + 0.22, shape, size=FONT - 1, color=MUTED)

    # 1. all heads side by side
    x1, group = 0.45, 0.36
    grid(x1, [group] * 4, 0.0, colours)
    caption(x1 + 2 * group, "x @ W_q", r"$n \times d_{\mathrm{model}}$")
    c.text(x1 - 0.15, top - height / 2, r"$n$", size=FONT, color=MUTED)
    c.text(x1 + group / 2, top - height - 0.2, r"$d_k$", size=FONT - 1, color=MUTED)
    c.arrow((x1 + 4 * group + 0.12, top - height / 2), (x1 + 4 * group + 0.62, top - height / 2))
    # 2. the last axis split into h groups of d_k (the same numbers)
    x2 = x1 + 4 * group + 0.8
    grid(x2, [group] * 4, 0.08, colours)
    caption(x2 + 2 * group + 0.12, ".view(n, h, d_k)", r"$n \times h \times d_k$")
    for k in range(4):
        c.text(
            x2 + k * (group + 0.08) + group / 2,
            top - height - 0.2,
            str(k) if k < 3 else r"$h{-}1$",
            size=FONT - 2,
            color=MUTED,
        )
    x3 = x2 + 4 * group + 0.24 + 0.18
    c.arrow((x3, top - height / 2), (x3 + 0.5, top - height / 2))
    # 3. the head axis in front: a batch of h matrices n x d_k
    x4 = x3 + 0.75
    for k in range(3, -1, -1):  # back to front
        dx, dy = 0.3 * k, 0.2 * k
        for r in range(n_rows):
            c.rect(
                x4 + dx,
                top - (r + 1) * cell_h + dy - 0.75,
                group,
                cell_h,
                "query",
                lw=0.6,
                facecolor=colours[k],
            )
        c.text(
            x4 + dx + group / 2,
            top - 0.75 + dy + 0.1,
            str(k) if k < 3 else r"$h{-}1$",
            size=FONT - 3,
            color=MUTED,
        )
    caption(x4 + 0.65, ".transpose(0, 1)", r"$h \times n \times d_k$")
    c.text(x4 + 0.65, 0.95, "a batch of $h$ matrices,", size=FONT - 2, color=MUTED)
    c.text(x4 + 0.65, 0.7, "one $n \\times d_k$ per head", size=FONT - 2, color=MUTED)
    x5 = x4 + 1.65
    c.arrow(
        (x5, top - height / 2),
        (x5 + 1.3, top - height / 2),
        label="attention,\nper head",
        label_size=FONT - 2,
        label_offset=(0.0, 0.45),
    )
    # 4. back: transpose again and merge the last two axes = Concat
    x6 = x5 + 1.5
    grid(x6, [group] * 4, 0.0, colours)
    c.text(x6 + 2 * group, top + 0.85, ".transpose(0, 1)", size=FONT - 1, family="DejaVu Sans Mono")
    caption(x6 + 2 * group, ".reshape(n, d_model)", r"$n \times d_{\mathrm{model}}$")
    c.text(
        x6 + 2 * group,
        top - height - 0.22,
        r"$= \mathrm{Concat}(\mathrm{head}_0, \dots, \mathrm{head}_{h-1})$",
        size=FONT - 1,
    )
    c.text(
        5.3,
        0.3,
        "drawn for one sequence with 4 heads; the code's first axis is the batch: .view(batch, n, h, d_k),"
        " .transpose(1, 2)",
        size=FONT - 3,
        color=MUTED,
    )
    return c


def _grid(
    c: Canvas,
    x0: float,
    y0: float,
    cell: float,
    rows: list[str],
    cols: list[str],
    masked: Callable[[int, int], bool],
) -> None:
    """An n x n grid of (query, key) pairs: rows are queries, columns keys; masked cells grey."""
    n_r, n_c = len(rows), len(cols)
    for i in range(n_r):
        for j in range(n_c):
            m = masked(i, j)
            c.rect(
                x0 + j * cell,
                y0 + (n_r - 1 - i) * cell,
                cell,
                cell,
                "masked" if m else "input",
                lw=0.8,
            )
            if m:
                c.text(
                    x0 + (j + 0.5) * cell,
                    y0 + (n_r - 0.5 - i) * cell,
                    r"$-\infty$",
                    size=9,
                    color="#444444",
                )
    for i, r in enumerate(rows):
        c.text(x0 - 0.08, y0 + (n_r - 0.5 - i) * cell, r, size=FONT - 2, ha="right")
    for j, k in enumerate(cols):
        c.text(
            x0 + (j + 0.5) * cell - 0.05,
            y0 + n_r * cell + 0.08,
            k,
            size=FONT - 2,
            rotation=60,
            ha="left",
            va="bottom",
            rotation_mode="anchor",
        )


def ch5_padding_mask() -> Canvas:
    """The key padding mask of the chapter's batch, as two grids of (query, key) pairs."""
    c = Canvas(10.4, 5.7)
    first = ["the", "cat", "sat", "on", "the", "mat"]
    second = ["dogs", "bark", "<pad>", "<pad>", "<pad>", "<pad>"]
    cell, y0 = 0.45, 1.45
    for x0, words, title in [
        (2.05, first, "sentence 1: no padding"),
        (7.05, second, "sentence 2: padded to 6"),
    ]:
        pad = [w == "<pad>" for w in words]
        _grid(c, x0, y0, cell, words, words, lambda i, j, pad=pad: pad[j])
        c.text(x0 + 3 * cell, 5.25, title, size=FONT, fontweight="bold")
        y_m = y0 - 0.6
        for j, p in enumerate(pad):
            c.rect(x0 + j * cell, y_m, cell, 0.32, "masked" if p else "input", lw=0.8)
            c.text(x0 + (j + 0.5) * cell, y_m + 0.16, "T" if p else "F", size=FONT - 2)
        c.text(
            x0 - 0.08,
            y_m + 0.16,
            "key_padding_mask",
            size=FONT - 3,
            ha="right",
            family="DejaVu Sans Mono",
        )
    c.text(
        5.2,
        0.35,
        r"rows: queries, columns: keys.  Grey: masked (True): the score becomes $-\infty$, "
        "the weight 0.",
        size=FONT - 1,
        color=INK,
    )
    return c


def ch5_causal_mask() -> Canvas:
    """The causal mask: query i may look at keys j <= i only."""
    c = Canvas(6.4, 4.9)
    n, cell = 6, 0.55
    labels = [str(k) for k in range(n)]
    x0, y0 = 1.4, 0.85
    _grid(c, x0, y0, cell, labels, labels, lambda i, j: j > i)
    c.text(x0 + n * cell / 2, y0 - 0.3, r"masked where $j > i$ (above the diagonal)", size=FONT - 1)
    c.text(x0 - 0.55, y0 + n * cell / 2, r"query position $i$", size=FONT - 1, rotation=90)
    c.text(x0 + n * cell / 2, y0 + n * cell + 0.5, r"key position $j$", size=FONT - 1)
    c.text(
        x0 + n * cell + 0.25,
        y0 + n * cell - 0.6 * cell,
        "row 0 sees\nonly itself",
        size=FONT - 2,
        ha="left",
        color=MUTED,
    )
    c.text(
        x0 + n * cell + 0.25,
        y0 + 0.5 * cell,
        "the last row\nsees everything",
        size=FONT - 2,
        ha="left",
        color=MUTED,
    )
    return c


# ---------------------------------------------------------------------------------------------------
# Chapter 6


def ch5_kv_sharing() -> Canvas:
    """Multi-head, grouped-query and multi-query attention: which key/value head each query head
    reads, and what the cache keeps per token and layer."""
    c = Canvas(11.4, 3.9)
    panels = [
        ("multi-head attention", 8, "8 key/value heads"),
        ("grouped-query attention", 2, "2 key/value heads"),
        ("multi-query attention", 1, "1 key/value head"),
    ]
    width = 3.6
    for p, (title, kv_heads, cached) in enumerate(panels):
        x0 = 0.3 + p * (width + 0.1)
        c.text(x0 + width / 2, 3.55, title, size=FONT)
        qs = [x0 + 0.25 + k * (width - 0.5) / 7 for k in range(8)]
        for k, x in enumerate(qs):
            c.box(x, 2.85, 0.36, 0.36, rf"$q_{k}$", "query", size=FONT - 3)
        kvs = [
            x0
            + width / 2
            + (j - (kv_heads - 1) / 2)
            * (width - 0.5)
            / 7
            * (8 / kv_heads)
            * (1 if kv_heads > 1 else 0)
            for j in range(kv_heads)
        ]
        for j, x in enumerate(kvs):
            c.box(x, 1.55, 0.36, 0.36, rf"$k_{j}$", "key", size=FONT - 3)
            c.box(x, 1.1, 0.36, 0.36, rf"$v_{j}$", "value", size=FONT - 3)
        per = 8 // kv_heads
        for k, x in enumerate(qs):
            c.line([x, kvs[k // per]], [2.66, 1.74], color=MUTED, lw=1.0)
        c.text(x0 + width / 2, 0.55, f"cache: {cached}", size=FONT - 2)
        c.text(
            x0 + width / 2,
            0.25,
            "a token and layer" if p == 0 else f"{8 // kv_heads} times smaller",
            size=FONT - 2,
            color=MUTED,
        )
    return c


def ch5_kv_cache() -> Canvas:
    """A KV cache growing: at each step one new key and value join the cache, and the new query
    attends to all of them."""
    tokens = ["the", "cat", "sat", "on"]
    c = Canvas(9.6, 4.9)
    c.text(1.0, 4.5, "step", size=FONT - 1, color=MUTED)
    c.text(2.35, 4.5, "new query", size=FONT - 1, color=MUTED)
    c.text(6.0, 4.5, "the cache: keys (top), values (bottom)", size=FONT - 1, color=MUTED)
    for t in range(len(tokens)):
        y = 3.8 - t * 1.05
        c.text(1.0, y, f"{t + 1}: \u201c{tokens[t]}\u201d", size=FONT - 1)
        c.box(2.35, y, 0.55, 0.4, rf"$q_{t + 1}$", "query", size=FONT - 2)
        for j in range(t + 1):
            x = 3.8 + j * 0.85
            new = j == t
            c.box(
                x,
                y + 0.21,
                0.62,
                0.36,
                rf"$k_{j + 1}$",
                "key",
                size=FONT - 3,
                lw=2.4 if new else 1.0,
            )
            c.box(
                x,
                y - 0.21,
                0.62,
                0.36,
                rf"$v_{j + 1}$",
                "value",
                size=FONT - 3,
                lw=2.4 if new else 1.0,
            )
        c.arrow((2.65, y), (3.8 - 0.36, y))
        c.text(
            3.8 + (t + 1) * 0.85 + 0.2,
            y,
            "bold: new, projected\nonly at this step"
            if t == 0
            else f"{t} kept + 1 new:\n$q_{t + 1}$ attends to all {t + 1}",
            size=FONT - 3,
            color=MUTED,
            ha="left",
        )
    return c


def ch6_transformer() -> Canvas:
    """The Transformer: N encoder layers, N decoder layers, in the chapter's symbols."""
    c = Canvas(9.6, 11.3)
    w = 2.9
    xe, xd = 2.7, 7.0

    def sub(x, y, text, role, h=0.55, size=FONT):
        return c.box(x, y, w, h, text, role, size=size)

    def residual(x, y_from, y_to, side=-1):
        # side -1: on the left of the layer (encoder); +1: on the right (decoder), which
        # leaves the decoder's left side free for the memory's keys and values
        outside = x + side * (w / 2 + 0.3)
        c.line([x, outside, outside], [y_from, y_from, y_to], color="#888888", lw=1.1)
        c.arrow((outside, y_to), (x + side * w / 2, y_to), color="#888888", lw=1.1)

    def qkv(x, y_from, y_to, roles=("query", "key", "value")):
        for dx, role in zip((-0.9, 0.0, 0.9), roles, strict=True):
            c.line([x, x + dx], [y_from, y_from + 0.12], color=edge(role), lw=1.2)
            c.arrow((x + dx, y_from + 0.12), (x + dx, y_to), color=edge(role), lw=1.2)

    for x, title, h in [(xe, "encoder layer", 4.0), (xd, "decoder layer", 5.95)]:
        c.ax.add_patch(
            FancyBboxPatch(
                (x - w / 2 - 0.45, 2.95),
                w + 0.9,
                h,
                boxstyle="round,pad=0,rounding_size=0.15",
                facecolor="#f5f5f5",
                edgecolor="#888888",
                linewidth=1.2,
                zorder=1,
            )
        )
        c.text(
            x - w / 2 - 0.4, 2.78, title, size=FONT - 1, color=MUTED, ha="left", fontstyle="italic"
        )
    c.text(xe - w / 2 - 0.6, 5.0, r"$N\times$", size=FONT + 3, ha="right", fontweight="bold")
    c.text(xd + w / 2 + 0.55, 6.0, r"$\times N$", size=FONT + 3, ha="left", fontweight="bold")
    # inputs
    for x, name, sym, tokens in [
        (xe, "source characters", r"$x$", "25 jun 2009"),
        (xd, "target, shifted right", r"$t$", "<bos>2009-06-25"),
    ]:
        c.text(x, 0.35, f"{name}: \u201c{tokens}\u201d", size=FONT - 2, color=MUTED)
        c.arrow((x, 0.52), (x, 0.85))
        sub(x, 1.1, r"embedding $\times \sqrt{d_{\mathrm{model}}}$", "embed", h=0.5, size=FONT - 1)
        c.arrow((x, 1.35), (x, 1.72))
        c.circle(x, 1.95, 0.22, "+", "op", size=15)
        c.text(x + 0.35, 1.95, "positional\nencoding", size=FONT - 2, ha="left", color=MUTED)
        c.arrow(
            (x, 2.17), (x, 3.05), label=sym, label_size=15, label_offset=(0.25, -0.15), bbox=None
        )
    # the encoder layer
    y0 = 3.05
    qkv(xe, y0, 3.6)
    sub(xe, 3.85, r"multi-head self-attention $(x, x, x)$", "attention", size=FONT - 1)
    c.arrow((xe, 4.125), (xe, 4.45))
    sub(xe, 4.65, "Add & Norm", "norm", h=0.4)
    residual(xe, 3.35, 4.65)
    c.arrow((xe, 4.85), (xe, 5.45), label=r"$z$", label_size=15, label_offset=(0.2, 0), bbox=None)
    sub(xe, 5.72, r"feed-forward $\max(0, zW_1 + b_1)W_2 + b_2$", "ffn", size=FONT - 2.5)
    c.arrow((xe, 6.0), (xe, 6.3))
    sub(xe, 6.5, "Add & Norm", "norm", h=0.4)
    residual(xe, 5.2, 6.5)
    c.arrow((xe, 6.7), (xe, 7.3), label=r"$y$", label_size=15, label_offset=(0.2, -0.1), bbox=None)
    # the final LayerNorm of the encoder stack, then the memory
    sub(xe, 7.5, "LayerNorm (after the $N$ layers)", "norm", h=0.4, size=FONT - 1)
    c.arrow((xe, 7.7), (xe, 8.05))
    c.box(xe, 8.3, 2.0, 0.5, r"memory $m$", "result", size=FONT)
    c.text(
        xe,
        8.85,
        "output of the encoder stack\n(used by every decoder layer)",
        size=FONT - 2,
        color=MUTED,
    )
    # the decoder layer; its residual connections run on the right
    qkv(xd, y0, 3.6)
    sub(
        xd,
        3.85,
        "masked multi-head self-attention\n" + r"$(t, t, t)$: position $i$ sees $j \leq i$",
        "attention",
        size=FONT - 2,
        h=0.6,
    )
    c.arrow((xd, 4.125), (xd, 4.45))
    sub(xd, 4.65, "Add & Norm", "norm", h=0.4)
    residual(xd, 3.35, 4.65, side=1)
    c.arrow(
        (xd, 4.85),
        (xd, 5.95),
        color=edge("query"),
        label=r"$a$ (query)",
        label_size=13,
        label_offset=(0.45, -0.1),
        bbox={"facecolor": "#f5f5f5", "edgecolor": "none", "pad": 0.5},
    )
    sub(xd, 6.22, r"multi-head cross-attention $(a, m, m)$", "attention", size=FONT - 1)
    # keys and values from the memory, entering on the left: the line never meets the query
    c.line([xe + 1.0, 5.0, 5.0], [8.3, 8.3, 5.55], color="#555555", lw=1.3)
    c.line([5.0, xd - 0.6], [5.55, 5.55], color="#555555", lw=1.3)
    c.arrow((xd - 1.2, 5.55), (xd - 1.2, 5.95), color=edge("key"))
    c.arrow((xd - 0.6, 5.55), (xd - 0.6, 5.95), color=edge("value"))
    c.text(5.8, 5.3, "keys and values", size=FONT - 2, color=INK)
    c.arrow((xd, 6.5), (xd, 6.85))
    sub(xd, 7.05, "Add & Norm", "norm", h=0.4)
    residual(xd, 5.15, 7.05, side=1)
    c.arrow((xd, 7.25), (xd, 7.6), label=r"$b$", label_size=15, label_offset=(-0.2, 0), bbox=None)
    sub(xd, 7.87, r"feed-forward", "ffn", size=FONT - 1)
    c.arrow((xd, 8.15), (xd, 8.45))
    sub(xd, 8.65, "Add & Norm", "norm", h=0.4)
    residual(xd, 7.43, 8.65, side=1)
    c.arrow((xd, 8.85), (xd, 9.3), label=r"$y$", label_size=15, label_offset=(0.2, 0.05), bbox=None)
    # the final LayerNorm of the decoder stack, then the generator
    sub(xd, 9.5, "LayerNorm (after the $N$ layers)", "norm", h=0.4, size=FONT - 1)
    c.arrow((xd, 9.7), (xd, 9.95))
    sub(xd, 10.17, "linear, then softmax", "op", h=0.45, size=FONT - 1)
    c.arrow((xd, 10.4), (xd, 10.7))
    c.text(xd, 10.92, "probabilities of the next character", size=FONT - 1)
    return c


# ---------------------------------------------------------------------------------------------------
# Chapter 7

BERT_TOKENS = [
    "[CLS]",
    "the",
    "cat",
    "sat",
    "on",
    "the",
    "mat",
    ".",
    "[SEP]",
    "it",
    "was",
    "pu",
    "##rring",
    "content",
    "##edly",
    ".",
    "[SEP]",
]


def _tt(token: str) -> str:
    """A WordPiece token in typewriter type (mathtext cannot put # inside \\mathtt)."""
    rest = token.lstrip("#")
    return "$" + r"\#" * (len(token) - len(rest)) + r"\mathtt{" + rest + "}$"


def ch7_bert_input() -> Canvas:
    """BERT's input: the sum of token, segment and position embeddings, then LayerNorm."""
    tokens = BERT_TOKENS
    segments = [0] * 9 + [1] * 8
    row = 0.34
    c = Canvas(9.2, 1.45 + row * len(tokens) + 0.35)
    top = c.height - 1.05
    columns = {"i": 0.45, "token": 1.4, "tok": 2.95, "seg": 4.6, "pos": 6.0, "e": 8.55}
    for key, title, role in [
        ("i", r"$i$", "input"),
        ("token", "WordPiece\ntoken $x_i$", "input"),
        ("tok", "token\nembedding", "embed"),
        ("seg", "segment\nembedding", "ffn"),
        ("pos", "position\nembedding", "norm"),
        ("e", "input\nvector", "result"),
    ]:
        c.text(
            columns[key],
            top + 0.45,
            title,
            size=FONT - 1,
            color=edge(role) if role != "input" else INK,
            fontweight="bold",
        )
    for i, (token, seg) in enumerate(zip(tokens, segments, strict=True)):
        y = top - (i + 0.5) * row
        c.text(columns["i"], y, str(i), size=FONT - 2, color=MUTED)
        c.text(columns["token"], y, _tt(token), size=FONT - 1)
        c.box(
            columns["tok"],
            y,
            1.35,
            row - 0.06,
            r"$\mathbf{W}^{\mathrm{tok}}_{" + _tt(token)[1:-1] + "}$",
            "embed",
            size=FONT - 2,
            rounding=0.04,
            lw=1.0,
        )
        c.text((columns["tok"] + columns["seg"]) / 2 + 0.05, y, "+", size=FONT)
        c.box(
            columns["seg"],
            y,
            0.95,
            row - 0.06,
            r"$\mathbf{W}^{\mathrm{seg}}_{" + "AB"[seg] + "}$",
            "ffn",
            size=FONT - 2,
            rounding=0.04,
            lw=1.0,
        )
        c.text((columns["seg"] + columns["pos"]) / 2, y, "+", size=FONT)
        c.box(
            columns["pos"],
            y,
            0.95,
            row - 0.06,
            r"$\mathbf{W}^{\mathrm{pos}}_{" + str(i) + "}$",
            "norm",
            size=FONT - 2,
            rounding=0.04,
            lw=1.0,
        )
        c.box(
            columns["e"],
            y,
            0.7,
            row - 0.06,
            rf"$\mathbf{{e}}_{{{i}}}$",
            "result",
            size=FONT - 2,
            rounding=0.04,
            lw=1.0,
        )
    mid = top - len(tokens) * row / 2
    c.box(7.3, mid, 0.55, len(tokens) * row, "", "op")
    c.text(7.3, mid, "LayerNorm of the sum, at each position", size=FONT - 1, rotation=90)
    c.arrow((6.5, mid), (7.0, mid))
    c.arrow((7.58, mid), (8.18, mid))
    y_ab = top - 9 * row
    c.line([0.25, 6.55], [y_ab, y_ab], color=MUTED, lw=1.0, linestyle="--")
    c.text(
        3.75,
        0.4,
        "segment A: [CLS] to the first [SEP];  segment B: the rest",
        size=FONT - 2,
        color=MUTED,
    )
    return c


def ch7_pretraining() -> Canvas:
    """BERT's two pre-training heads: masked language modelling and next-sentence prediction."""
    c = Canvas(10.4, 6.2)
    tokens = ["[CLS]", "the", "[MASK]", "sat", "[SEP]", "it", "[MASK]", "[SEP]"]
    originals = {2: "cat", 6: "purred"}
    xs = [0.95 + 1.2 * k for k in range(len(tokens))]
    for k, (x, token) in enumerate(zip(xs, tokens, strict=True)):
        c.box(
            x,
            0.75,
            1.0,
            0.42,
            _tt(token),
            "masked" if token == "[MASK]" else "input",
            size=FONT - 1,
        )
        c.arrow((x, 0.96), (x, 1.3))
        if k in originals:
            c.text(x, 0.3, f"was \u201c{originals[k]}\u201d", size=FONT - 2, color=MUTED)
        c.arrow((x, 3.15), (x, 3.55))
        label = r"$\mathbf{h}_{\mathtt{[CLS]}}$" if k == 0 else rf"$\mathbf{{h}}_{{{k}}}$"
        c.box(
            x, 3.8, 0.95, 0.46, label, "result" if k == 0 or k in originals else "input", size=FONT
        )
    c.box(5.15, 1.55, 9.4, 0.46, "embeddings: token + segment + position", "embed", size=FONT - 1)
    c.arrow((5.15, 1.78), (5.15, 2.1))
    c.box(5.15, 2.62, 9.4, 1.0, "", "attention")
    c.text(5.15, 2.78, r"BERT encoder: $L$ post-LN Transformer encoder layers (GELU)", size=FONT)
    c.text(5.15, 2.42, "no causal mask: every token sees both sides", size=FONT - 2, color=MUTED)
    # NSP head on [CLS]
    c.arrow((xs[0], 4.03), (xs[0], 4.55))
    c.box(
        xs[0] + 0.55,
        4.95,
        2.05,
        0.75,
        "NSP head\n" + r"$\tanh(\mathbf{W}\mathbf{h}_{\mathtt{[CLS]}} + \mathbf{b})$" + ", linear",
        "op",
        size=FONT - 2,
    )
    c.arrow((xs[0] + 0.55, 5.33), (xs[0] + 0.55, 5.6))
    c.text(xs[0] + 0.55, 5.8, "IsNext / NotNext", size=FONT - 1)
    # MLM head on the masked positions
    for k in originals:
        c.arrow((xs[k], 4.03), (xs[k], 4.55))
    c.box(
        (xs[2] + xs[6]) / 2,
        4.95,
        5.4,
        0.75,
        "MLM head, at the chosen positions only\n"
        + r"$\mathrm{softmax}(\mathbf{W}^{\mathrm{tok}} g(\mathbf{h}_i) + \mathbf{b})$"
        + "  (the input embedding matrix, tied)",
        "op",
        size=FONT - 2,
    )
    for k, word in originals.items():
        c.arrow((xs[k], 5.33), (xs[k], 5.6))
        c.text(xs[k], 5.8, f"\u201c{word}\u201d?", size=FONT - 1)
    return c


def ch7_thesis() -> Canvas:
    """BERT's thesis: pre-train one encoder once on unlabelled text, then fine-tune a copy per task."""
    c = Canvas(10.4, 4.6)
    # left: pre-training
    c.text(2.55, 4.2, "1. pre-training (once, expensive)", size=FONT + 1)
    c.box(
        2.55,
        0.75,
        4.3,
        0.62,
        "unlabelled text: books, Wikipedia\n(3.3 billion words)",
        "input",
        size=FONT - 2,
    )
    c.arrow((2.55, 1.07), (2.55, 1.45))
    c.box(2.55, 1.95, 4.3, 0.9, "", "attention")
    c.text(2.55, 2.1, "BERT encoder", size=FONT)
    c.text(2.55, 1.78, "starts from random weights", size=FONT - 2, color=MUTED)
    c.arrow((2.55, 2.4), (2.55, 2.8))
    c.box(
        2.55,
        3.2,
        4.3,
        0.72,
        "MLM + NSP heads\n(predict hidden words, next sentence?)",
        "op",
        size=FONT - 2,
    )
    # the arrow: copy the weights
    c.arrow((4.85, 1.95), (5.95, 1.95), lw=2.2, label="copy the\nweights", label_offset=(0, 0.42))
    # right: fine-tuning
    c.text(7.95, 4.2, "2. fine-tuning (per task, cheap)", size=FONT + 1)
    c.box(
        7.95,
        0.75,
        4.3,
        0.62,
        "labelled examples of one task\n(e.g. sentences with a label)",
        "input",
        size=FONT - 2,
    )
    c.arrow((7.95, 1.07), (7.95, 1.45))
    c.box(7.95, 1.95, 4.3, 0.9, "", "attention")
    c.text(7.95, 2.1, "the same BERT encoder", size=FONT)
    c.text(7.95, 1.78, "starts from the pre-trained weights", size=FONT - 2, color=MUTED)
    c.arrow((7.95, 2.4), (7.95, 2.8))
    c.box(
        7.95,
        3.2,
        4.3,
        0.72,
        "a new, small task head\nall weights trained a few epochs",
        "result",
        size=FONT - 2,
        lw=2.2,
    )
    return c


def ch7_task_heads() -> Canvas:
    """BERT's four task heads on one encoder: [CLS] for (pair) classification, every token for
    tagging, start and end scores for spans. Two panels a row, so that the labels stay readable on a
    phone."""
    width, height = 4.6, 4.9  # one panel
    c = Canvas(2 * width + 0.4, 2 * height + 0.3)
    panels = [
        ("sentence classification", ["[CLS]", "great", "phone", "[SEP]"], [0], "positive"),
        ("sentence-pair classification", ["[CLS]", "A", "[SEP]", "B", "[SEP]"], [0], "entails"),
        ("token tagging", ["[CLS]", "Ann", "met", "Bo", "[SEP]"], [1, 2, 3], "PER O PER"),
        (
            "span extraction",
            ["[CLS]", "Q", "[SEP]", "p1", "p2", "p3", "[SEP]"],
            [3, 4, 5],
            "start p2, end p3",
        ),
    ]
    for k, (title, tokens, read, out) in enumerate(panels):
        x0 = 0.2 + (k % 2) * width
        y0 = 0.15 + (1 - k // 2) * height  # the bottom of the panel
        xc = x0 + width / 2
        c.text(xc, y0 + 4.55, title, size=FONT + 3, weight="bold")
        step = (width - 0.3) / len(tokens)
        xs = [x0 + 0.15 + step * (j + 0.5) for j in range(len(tokens))]
        for x, token in zip(xs, tokens, strict=True):
            c.box(
                x,
                y0 + 0.45,
                step - 0.06,
                0.48,
                _tt(token) if token.startswith("[") else token,
                "input",
                size=FONT if len(tokens) < 7 else FONT - 1,
            )
        c.box(xc, y0 + 1.5, width - 0.3, 0.8, "", "attention")
        c.text(xc, y0 + 1.5, "BERT encoder (pre-trained)", size=FONT + 1)
        c.arrow((xc, y0 + 0.69), (xc, y0 + 1.1))
        c.arrow((xc, y0 + 1.9), (xc, y0 + 2.3))
        for j, x in enumerate(xs):
            c.box(
                x,
                y0 + 2.55,
                step - 0.06,
                0.48,
                r"$\mathbf{h}$",
                "result" if j in read else "input",
                size=FONT + 2,
            )
            if j in read:
                c.arrow((x, y0 + 2.79), (xc if len(read) == 1 else x, y0 + 3.2))
        head = {
            0: "linear on $\\mathbf{h}_{\\mathtt{[CLS]}}$",
            1: "linear on $\\mathbf{h}_{\\mathtt{[CLS]}}$",
            2: "linear on every $\\mathbf{h}_i$",
            3: "$\\mathbf{s}^\\top\\mathbf{h}_i$, $\\mathbf{e}^\\top\\mathbf{h}_j$",
        }[k]
        c.box(xc, y0 + 3.48, width - 0.3, 0.56, head, "op", size=FONT + 2, lw=2.0)
        c.arrow((xc, y0 + 3.76), (xc, y0 + 4.0))
        c.text(xc, y0 + 4.17, out, size=FONT + 2, color="#7a5c00")
    return c


def ch8_finetuning() -> Canvas:
    """Fine-tuning: the mean of the output vectors, one new linear layer, every weight trained."""
    c = Canvas(10.2, 5.3)
    tokens = ["[CLS]", "a", "hen", "that", "lays", "eggs", "[SEP]"]
    xs = [1.1 + 1.33 * k for k in range(len(tokens))]
    for k, (x, token) in enumerate(zip(xs, tokens, strict=True)):
        c.box(x, 0.7, 1.12, 0.42, _tt(token), "input", size=FONT - 1)
        c.arrow((x, 0.91), (x, 1.3))
        c.arrow((x, 2.55), (x, 2.95))
        c.box(x, 3.2, 0.95, 0.46, rf"$\mathbf{{h}}_{{{k}}}$", "input", size=FONT)
        c.arrow((x, 3.43), (x, 3.72))
    c.text(
        5.1,
        0.22,
        "one WordNet definition (section 8.6's task), one sequence",
        size=FONT - 2,
        color=MUTED,
    )
    c.box(5.1, 1.9, 9.4, 1.1, "", "attention")
    c.text(5.1, 2.08, "pre-trained BERT (embeddings and encoder)", size=FONT)
    c.text(
        5.1,
        1.72,
        "starts from the pre-trained weights; every weight is trained, with a small learning rate",
        size=FONT - 2,
        color=MUTED,
    )
    c.box(
        5.1,
        3.98,
        8.9,
        0.42,
        "mean of the output vectors (padding excluded)",
        "result",
        size=FONT - 2,
    )
    c.arrow((5.1, 4.19), (5.1, 4.52))
    c.box(5.1, 4.78, 2.1, 0.5, "new linear layer", "op", size=FONT - 1, lw=2.2)
    c.arrow((6.15, 4.78), (6.75, 4.78))
    c.text(8.0, 4.78, "8 scores: noun.animal, ...", size=FONT - 1)
    c.text(2.5, 4.78, "the only new weights", size=FONT - 2, color=INK)
    return c


def ch8_pretraining() -> Canvas:
    """Pre-training: a sentence pair, BERT's 80/10/10 masking, the encoder, two heads, two losses."""
    c = Canvas(10.9, 7.0)
    tokens = ["[CLS]", "a", "hen", "lays", "eggs", "[SEP]", "she", "sat", "[SEP]"]
    shown = {2: "[MASK]", 4: "car", 7: "sat"}
    rule = {2: "80%: [MASK]", 4: "10%: random", 7: "10%: kept"}
    xs = [0.95 + 1.12 * k for k in range(len(tokens))]
    c.text(
        5.45,
        0.22,
        "a pair: A, then B (its next sentence, or a random one); 15% of its pieces chosen for the MLM",
        size=FONT - 2,
        color=MUTED,
    )
    for k, (x, token) in enumerate(zip(xs, tokens, strict=True)):
        c.box(x, 0.65, 1.0, 0.42, _tt(token), "input", size=FONT - 1)
        c.arrow((x, 0.86), (x, 1.55))
        masked = shown.get(k, token)
        role = "masked" if k in shown else "input"
        c.box(x, 1.8, 1.0, 0.42, _tt(masked), role, size=FONT - 1)
        if k in rule:
            c.text(
                x,
                1.2,
                rule[k],
                size=FONT - 3,
                color=MUTED,
                bbox={"facecolor": "white", "edgecolor": "none", "pad": 0.5},
            )
        c.arrow((x, 2.01), (x, 2.35))
        c.arrow((x, 3.35), (x, 3.65))
        label = r"$\mathbf{h}_{\mathtt{[CLS]}}$" if k == 0 else rf"$\mathbf{{h}}_{{{k}}}$"
        c.box(x, 3.9, 0.9, 0.46, label, "result" if k == 0 or k in shown else "input", size=FONT)
    c.box(5.43, 2.85, 9.9, 1.0, "", "attention")
    c.text(5.43, 3.03, "BERT encoder (embeddings, then the layers)", size=FONT)
    c.text(
        5.43,
        2.67,
        "no causal mask: every piece sees both sides",
        size=FONT - 2,
        color=MUTED,
    )
    # NSP head on [CLS]
    c.arrow((xs[0], 4.13), (xs[0], 4.6))
    c.box(xs[0] + 0.55, 5.0, 2.1, 0.75, "NSP head\npooled [CLS], 2 scores", "op", size=FONT - 2)
    c.arrow((xs[0] + 0.55, 5.38), (xs[0] + 0.55, 5.75))
    c.box(xs[0] + 0.55, 6.0, 2.3, 0.46, "NSP loss: B follows A?", "weight", size=FONT - 2)
    # MLM head on the chosen positions
    for k in shown:
        c.arrow((xs[k], 4.13), (xs[k], 4.6))
    c.box(
        (xs[2] + xs[7]) / 2,
        5.0,
        6.3,
        0.75,
        "MLM head, at the chosen positions only\nscores every piece of the vocabulary",
        "op",
        size=FONT - 2,
    )
    for k, word in ((2, "hen"), (4, "eggs"), (7, "sat")):
        c.arrow((xs[k], 5.38), (xs[k], 5.75))
        c.text(xs[k], 5.98, f"\u201c{word}\u201d?", size=FONT - 1)
    c.text(
        (xs[2] + xs[7]) / 2, 6.4, "MLM loss: cross-entropy of the original pieces", size=FONT - 2
    )
    c.text(5.43, 6.75, "training loss = MLM loss + NSP loss", size=FONT - 1, weight="bold")
    return c


DIAGRAMS: dict[str, Callable[[], Canvas]] = {
    "ch1_attention_lookup": ch1_attention_lookup,
    "ch1_hard_soft_lookup": ch1_hard_soft_lookup,
    "ch2_han": ch2_han,
    "ch3_decoder_step": ch3_decoder_step,
    "ch3_without_attention": ch3_without_attention,
    "ch4_self_attention": ch4_self_attention,
    "ch4_positional_curves": ch4_positional_curves,
    "ch5_multi_head": ch5_multi_head,
    "ch5_split_heads": ch5_split_heads,
    "ch5_padding_mask": ch5_padding_mask,
    "ch5_causal_mask": ch5_causal_mask,
    "ch5_kv_cache": ch5_kv_cache,
    "ch5_kv_sharing": ch5_kv_sharing,
    "ch6_transformer": ch6_transformer,
    "ch7_thesis": ch7_thesis,
    "ch7_bert_input": ch7_bert_input,
    "ch7_pretraining": ch7_pretraining,
    "ch7_task_heads": ch7_task_heads,
    "ch8_pretraining": ch8_pretraining,
    "ch8_finetuning": ch8_finetuning,
}


PNG_DPI = 110  # about 1,000 to 1,400 pixels wide: sharp at a notebook's width, about 100 KB each


def draw(out: Path, png: Path | None = None, names: Sequence[str] | None = None) -> list[Path]:
    """Draw the diagrams into `out`, SVG and PNG twin (and PNG previews into `png`); return the SVG
    paths written."""
    _use_bundled_fonts()
    written = []
    with plt.rc_context(STYLE):
        for name, make in DIAGRAMS.items():
            if names and name not in names:
                continue
            canvas = make()
            out.mkdir(parents=True, exist_ok=True)
            path = out / f"{name}.svg"
            canvas.fig.savefig(path, format="svg", metadata={"Date": None}, transparent=True)
            twin = path.with_suffix(".png")
            canvas.fig.savefig(twin, format="png", dpi=PNG_DPI, transparent=True)
            if png is not None:
                png.mkdir(parents=True, exist_ok=True)
                canvas.fig.savefig(png / f"{name}.png", format="png", dpi=110, transparent=True)
            plt.close(canvas.fig)
            written.append(path)
    return written


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--out", type=Path, default=OUTPUT, help="folder for the SVG and PNG files")
    parser.add_argument(
        "--png", type=Path, default=None, help="also write PNG previews into this folder"
    )
    parser.add_argument("names", nargs="*", help="draw only these diagrams (default: all)")
    args = parser.parse_args()
    for path in draw(args.out, args.png, args.names):
        print(path.relative_to(ROOT) if path.is_relative_to(ROOT) else path)


if __name__ == "__main__":
    main()
