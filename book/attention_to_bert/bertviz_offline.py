"""bertviz views that draw with no internet, in JupyterLab and on the book's website.

bertviz's views load require.js, d3 and jQuery from a CDN, so offline they draw nothing. These
wrappers drop the CDN script from bertviz's HTML, ship our copies of d3 and jQuery
(``attention_to_bert/javascript``) in the output and run bertviz's code on them with no require.js.
They round the attention weights, which bertviz writes into the page as text."""

from __future__ import annotations

import re
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

import bertviz
from IPython.display import display

JAVASCRIPT = Path(__file__).resolve().parent / "javascript"
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
        f"if (!window.{name}) {{\n{(JAVASCRIPT / path).read_text()}\n}}"
        for name, path in LIBRARIES.items()
    ]
    body = "\n".join(parts).replace("</", "<\\/")  # nothing may end the <script> element early
    # define, module and exports hidden: each library sets its window global, even beside an AMD loader
    wrapped = f"(function (define, module, exports) {{\n{body}\n}}).call(window);"
    return f'<script data-bertviz-libraries="d3 jquery">\n{wrapped}\n</script>\n'


def view_html(view: Callable[..., Any], *args: Any, decimals: int | None = 3, **kwargs: Any) -> str:
    """The HTML of a bertviz ``view`` (``bertviz.head_view`` or ``model_view``) that works offline."""
    if decimals is not None:
        kwargs = {
            k: _rounded(v, decimals) if k in ATTENTION_ARGUMENTS else v for k, v in kwargs.items()
        }
        args = (_rounded(args[0], decimals), *args[1:]) if args else args
    html = CDN_REQUIRE.sub("", view(*args, html_action="return", **kwargs).data)
    start, end = html.index(VIEW_SCRIPT), html.rindex("</script>")
    script = f"(function (require, requirejs) {{\n{html[start + len(VIEW_SCRIPT) : end]}\n}}){LOCAL_REQUIRE}"
    return f"{html[:start]}{libraries_script()}<script>\n{script}\n</script>\n"


def head_view(*args: Any, decimals: int | None = 3, **kwargs: Any) -> None:
    """Show ``bertviz.head_view(*args, **kwargs)`` offline, the weights rounded to ``decimals``."""
    _show(bertviz.head_view, args, kwargs, decimals)


def model_view(*args: Any, decimals: int | None = 3, **kwargs: Any) -> None:
    """Show ``bertviz.model_view(*args, **kwargs)`` offline, the weights rounded to ``decimals``."""
    _show(bertviz.model_view, args, kwargs, decimals)


def _rounded(layers: Sequence[Any] | None, decimals: int) -> list[Any] | None:
    """Round in float64: float32 numbers print long decimal expansions even when rounded."""
    return None if layers is None else [layer.double().round(decimals=decimals) for layer in layers]


def _show(view: Callable[..., Any], args: tuple, kwargs: dict, decimals: int | None) -> None:
    html = view_html(view, *args, decimals=decimals, **kwargs)
    kind = view.__name__.replace("_", " ")  # "head view", "model view"
    text = f"(a bertviz {kind}, drawn in JupyterLab and on the website)"
    display({"text/html": html, "text/plain": text}, raw=True)
