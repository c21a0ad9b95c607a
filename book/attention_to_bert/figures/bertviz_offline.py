"""bertviz views that draw with no internet, in JupyterLab and on the book's website.

bertviz's views load require.js, d3 and jQuery from a CDN, so offline they draw nothing. These
wrappers drop the CDN script from bertviz's HTML, ship our copies of d3 and jQuery
(``attention_to_bert/figures/javascript``) in the output and run bertviz's code on them with no require.js.
They round the attention weights, which bertviz writes into the page as text."""

from __future__ import annotations

import re
from collections.abc import Callable, Sequence
from importlib import resources
from typing import Any

import bertviz
import torch
from IPython.display import display

from attention_to_bert.validate import check_instance, check_int

JAVASCRIPT = resources.files("attention_to_bert.figures").joinpath("javascript")  # package data
LIBRARIES = {"d3": "d3/d3.min.js", "jQuery": "jquery/jquery.min.js"}
ATTENTION_ARGUMENTS = ("attention", "encoder_attention", "decoder_attention", "cross_attention")
CDN_REQUIRE = re.compile(
    r"<script src=\"https://cdnjs\.cloudflare\.com/[^\"]*require[^\"]*\"></script>"
)
VIEW_SCRIPT = '<script type="text/javascript">'
# bertviz's script calls require.config(...) and requirejs(["jquery", "d3"], callback): answer both
# with the libraries already on the page, so that no loader (and no network) is needed
LOCAL_REQUIRE = """({config() {}}, (names, callback) => callback(
    ...names.map((name) => ({jquery: window.jQuery, d3: window.d3})[name])));"""


def libraries_script() -> str:
    """A ``<script>`` that defines ``window.d3`` and ``window.jQuery`` unless the page has them."""
    parts = [
        f"if (!window.{name}) {{\n{JAVASCRIPT.joinpath(path).read_text(encoding='utf-8')}\n}}"
        for name, path in LIBRARIES.items()
    ]
    body = "\n".join(parts).replace("</", "<\\/")  # nothing may end the <script> element early
    # define, module and exports hidden: each library sets its window global, even beside an AMD loader
    wrapped = f"(function (define, module, exports) {{\n{body}\n}}).call(window);"
    return f'<script data-bertviz-libraries="d3 jquery">\n{wrapped}\n</script>\n'


def view_html(view: Callable[..., Any], *args: Any, decimals: int | None = 3, **kwargs: Any) -> str:
    """The HTML of a bertviz ``view`` (``bertviz.head_view`` or ``model_view``) that works offline."""
    check_instance("view", view, Callable, "a bertviz view such as bertviz.head_view")
    if decimals is not None:
        check_int("decimals", decimals, minimum=0)
    _attention_sets(args, kwargs)  # checked before bertviz reads them
    if decimals is not None:
        kwargs = {
            k: _rounded(v, decimals) if k in ATTENTION_ARGUMENTS else v for k, v in kwargs.items()
        }
        args = (_rounded(args[0], decimals), *args[1:]) if args else args
    html = CDN_REQUIRE.sub("", view(*args, html_action="return", **kwargs).data)
    start, end = html.index(VIEW_SCRIPT), html.rindex("</script>")
    script = f"(function (require, requirejs) {{\n{html[start + len(VIEW_SCRIPT) : end]}\n}}){LOCAL_REQUIRE}"
    return f"{html[:start]}{libraries_script()}<script>\n{script}\n</script>\n"


def head_view(
    *args: Any,
    decimals: int | None = 3,
    picture_layers: Sequence[int] | None = None,
    picture_heads: Sequence[int] | None = None,
    **kwargs: Any,
) -> None:
    """Show ``bertviz.head_view(*args, **kwargs)`` offline, the weights rounded to ``decimals``.

    ``picture_layers``, ``picture_heads`` (optional): the layers and heads the static picture (for
    print) draws, when it should show fewer than the interactive view, so that its panels stay large
    enough to read.
    """
    _show(bertviz.head_view, args, kwargs, decimals, picture_layers, picture_heads)


def model_view(*args: Any, decimals: int | None = 3, **kwargs: Any) -> None:
    """Show ``bertviz.model_view(*args, **kwargs)`` offline, the weights rounded to ``decimals``."""
    _show(bertviz.model_view, args, kwargs, decimals)


def _rounded(layers: Sequence[Any] | None, decimals: int) -> list[Any] | None:
    """Round in float64: float32 numbers print long decimal expansions even when rounded."""
    return None if layers is None else [layer.double().round(decimals=decimals) for layer in layers]


def _show(
    view: Callable[..., Any],
    args: tuple,
    kwargs: dict,
    decimals: int | None,
    picture_layers: Sequence[int] | None = None,
    picture_heads: Sequence[int] | None = None,
) -> None:
    html = view_html(view, *args, decimals=decimals, **kwargs)
    kind = view.__name__.replace("_", " ")  # "head view", "model view"
    text = f"(a bertviz {kind}, drawn in JupyterLab and on the website)"
    # the printed book has no JavaScript: it shows the same attention as a static picture
    if picture_layers is not None:
        kwargs = kwargs | {"include_layers": list(picture_layers)}
    if picture_heads is not None:
        kwargs = kwargs | {"include_heads": list(picture_heads)}
    png = static_picture(*args, **kwargs)
    display({"text/html": html, "image/png": png, "text/plain": text}, raw=True)


def _attention_sets(args: tuple, kwargs: dict) -> list[tuple[str, Any, list, list]]:
    """(name, per-layer attention, query tokens, key tokens) of each attention a view shows, each
    layer's attention checked: ``(1, heads, queries, keys)``, a row per query token."""
    named = dict(zip(("attention", "tokens"), args, strict=False)) | kwargs
    if named.get("attention") is not None:
        tokens = list(named.get("tokens") or [])
        sets = [("", named["attention"], tokens, tokens)]
        return [_checked(*entry, "attention") for entry in sets]
    source, target = (
        list(named.get("encoder_tokens") or []),
        list(named.get("decoder_tokens") or []),
    )
    sets = [
        ("encoder", named.get("encoder_attention"), source, source),
        ("decoder", named.get("decoder_attention"), target, target),
        ("cross", named.get("cross_attention"), target, source),
    ]
    sets = [entry for entry in sets if entry[1] is not None]
    if not sets:
        raise TypeError(
            "attention (or encoder_attention, decoder_attention, cross_attention) needed"
        )
    return [_checked(*entry, f"{entry[0]}_attention") for entry in sets]


def _checked(name: str, layers: Any, queries: list, keys: list, argument: str) -> tuple:
    """``layers``: a non-empty list of tensors ``(1, heads, len(queries), len(keys))``."""
    if not isinstance(layers, list | tuple) or not layers:
        raise TypeError(f"{argument} must be a non-empty list (a layer each) of tensors")
    shape = (1, "heads", len(queries), len(keys))
    for layer in layers:
        if not isinstance(layer, torch.Tensor) or layer.dim() != 4:
            raise TypeError(f"{argument} must hold tensors of shape {shape}, got {layer!r:.60}")
        if layer.shape[0] != 1 or tuple(layer.shape[2:]) != shape[2:]:
            raise ValueError(
                f"{argument} must hold tensors of shape {shape} (a row per query token, a column "
                f"per key token), got {tuple(layer.shape)}: pass the tokens the model read"
            )
    return name, layers, queries, keys


def static_picture(*args: Any, **kwargs: Any) -> str:
    """A PNG (base64) of the attention a bertviz view shows: a row per layer, a heatmap per head."""
    import base64
    import io

    import matplotlib.pyplot as plt

    layers = kwargs.get("include_layers")
    heads = kwargs.get("include_heads")
    rows = []
    for name, attention, queries, keys in _attention_sets(args, kwargs):
        for index, count, argument in ((layers, len(attention), "include_layers"),
                                       (heads, attention[0].shape[1], "include_heads")):  # fmt: skip
            if index is not None and not all(-count <= i < count for i in index):
                raise ValueError(f"{argument} must lie in [0, {count}), got {list(index)}")
        for layer in layers if layers is not None else range(len(attention)):
            weights = attention[layer][0].detach().float().cpu().numpy()
            shown = heads if heads is not None else range(weights.shape[0])
            rows.append(
                (f"{name} layer {layer}".strip(), [weights[h] for h in shown], shown, queries, keys)
            )
    ncols = max(len(row[1]) for row in rows)
    # a dozen panels or fewer: twice as large, with readable labels
    size, font = (2.6, 8) if len(rows) * ncols <= 12 else (1.3, 5)
    fig, axes = plt.subplots(
        len(rows), ncols, figsize=(size * ncols + 0.8, size * len(rows) + 0.4), squeeze=False
    )
    for axes_row, (label, maps, shown, queries, keys) in zip(axes, rows, strict=True):
        for axis, weights, head in zip(axes_row, maps, shown, strict=False):
            axis.imshow(weights, cmap="viridis", vmin=0.0, vmax=1.0)
            axis.set_title(f"{label}, head {head}", fontsize=font)
            axis.set_xticks(range(len(keys)), keys, rotation=90, fontsize=font - 1)
            axis.set_yticks(range(len(queries)), queries, fontsize=font - 1)
        for axis in axes_row[len(maps) :]:
            axis.axis("off")
    fig.tight_layout()
    buffer = io.BytesIO()
    fig.savefig(buffer, format="png", dpi=150)
    plt.close(fig)
    return base64.b64encode(buffer.getvalue()).decode("ascii")
