"""Sphinx extension that makes the book's website work with no internet at all.

Loaded by ``_config.yml`` (``sphinx.local_extensions``). It

* serves the JavaScript the pages need from the site itself (copied from the npm packages with their
  licences): MathJax (``book/_static/vendored``) through ``mathjax_path`` (set in ``_config.yml``),
  and, on pages that hold a bertviz view, d3 and jQuery (``book/attention_to_bert/figures/javascript``, the
  copies the helper package ships for JupyterLab) as ``_static/vendored/d3`` and ``…/jquery``;
* for views drawn by ``attention_to_bert.bertviz_offline`` (which carry d3 and jQuery inside the
  output, for JupyterLab), removes those inline copies: the page loads the site's file once instead;
* for views stored by bertviz itself, also loads require.js and a small AMD shim that registers d3
  and jQuery as modules, so that require.js never fetches bertviz's CDN copies, and removes the
  ``<script src="https://cdnjs…/require.min.js">`` tag that bertviz stores in the notebook output
  (the page already loads require.js; loading it twice is useless, and offline it fails);
* publishes the printed book with the site when ``BOOK_PDF`` names it (the Pages workflow builds it
  first): copied as ``book.pdf``, linked from every page's footer;
* keeps pages light: drops the theme's ``fontawesome.js`` (1.5 MB on every page; the theme's CSS
  already draws the same icons from Font Awesome's web fonts), serves subsets of those fonts with
  only the icons the site shows (and drops the CSS rules of the others), loads MathJax only on pages
  that hold math and the search index only on the search page, writes the bertviz views' weights
  as compact literals, and stores the PNG figures with a 256-colour palette;
* shows each architecture diagram from its SVG file: a chapter stores its diagrams as PNG data URIs
  (so that a notebook opened alone shows them; ``scripts/notebooks/format_notebooks.py``), and the site maps
  each back to ``book/images/diagrams/NAME.svg`` by its content (the PNG twin of that SVG), so
  pages show vectors and stay light, and the printed book gets the same vector files;
* prints the labs as appendices of the printed book (``\\appendix`` before the part "Labs");
* makes links that travel local again: a notebook links to the book's other pages by their
  published URL (``https://OWNER.github.io/NAME/book/notation.html#mask-conventions``, written by
  ``scripts/notebooks/format_notebooks.py``, so that a chapter opened alone on Colab or downloaded reaches
  them); each such link becomes the same cross-reference a relative Markdown link makes, so the
  built site (and the printed book) links inside itself and works offline;
* gives every figure what the figure viewer (``_static/figure-zoom.js``) needs to open it at a size
  where its text is legible: ``data-text-px``, the smallest text of the figure in CSS px at its
  natural size (an SVG diagram's from its glyphs, a PNG plot's from its resolution and the book's
  smallest font, ``FIGURE_FONT_FLOOR_PT``); and the site's root page a favicon link;
* writes each inline ``<script>`` once: Sphinx 7.4 adds inline scripts registered after the builder
  started (such as sphinx-thebe's ``const THEBE_JS_URL = …``) twice, and the second ``const``
  declaration is a page error ("Identifier 'THEBE_JS_URL' has already been declared").

The static folder is added when the builder starts (not listed in ``html_static_path`` of
``_config.yml``) because Jupyter Book injects every ``*.js`` found under the listed folders into
every page.
"""

from __future__ import annotations

import base64
import hashlib
import io
import json
import os
import re
import shutil
import sys
from pathlib import Path
from typing import Any

from docutils import nodes
from sphinx.application import Sphinx
from sphinx.transforms import SphinxTransform
from sphinx.util import logging

# the site's address has one home, the script that points the book at a repository (the notebooks'
# formatter reads it there too)
sys.path.insert(0, str(Path(__file__).resolve().parents[2] / "scripts" / "repository"))
from set_repository import published_site  # noqa: E402

logger = logging.getLogger(__name__)

STATIC_DIR = Path(__file__).resolve().parents[1] / "_static"
PACKAGE_JAVASCRIPT = (
    Path(__file__).resolve().parents[1] / "attention_to_bert" / "figures" / "javascript"
)

DIAGRAMS = Path(__file__).resolve().parents[1] / "images" / "diagrams"
# the smallest font the book's plots use (tick labels at 7 pt: chapter 4's vectors, chapter 2's
# bars); at 100 dpi 7 pt is 9.7 image pixels (tests/site/test_browser_phone.py checks the code for less)
FIGURE_FONT_FLOOR_PT = 7.0
PNG_DATA = "data:image/png;base64,"

# Loaded in this order after every other script of the page: d3 and jQuery must run before
# require.js exists (d3 would otherwise register itself as an anonymous AMD module, an error);
# the shim then names them "d3" and "jquery" for bertviz's require.js code.
BERTVIZ_LIBRARIES = ["vendored/d3/d3.min.js", "vendored/jquery/jquery.min.js"]
BERTVIZ_REQUIRE = ["vendored/requirejs/require.js", "bertviz-amd-shim.js"]
CDN_REQUIRE_TAG = re.compile(
    r"<script[^>]*\bsrc=[\"']https://cdnjs\.cloudflare\.com/ajax/libs/require\.js/[^\"']*[\"'][^>]*>\s*</script>"
)
USES_REQUIRE = re.compile(r"\b(?:require\.config|requirejs)\s*\(")
# the d3 and jQuery copies that attention_to_bert.figures.bertviz_offline puts in each view's output
INLINE_LIBRARIES = re.compile(r"<script data-bertviz-libraries[^>]*>.*?</script>\s*", re.S)


def add_static_dir(app: Sphinx) -> None:
    """Ship ``book/_static`` with the site (copied to ``_build/html/_static``)."""
    if STATIC_DIR.is_dir() and str(STATIC_DIR) not in app.config.html_static_path:
        app.config.html_static_path.append(str(STATIC_DIR))


def copy_package_javascript(app: Sphinx, exception: Exception | None) -> None:
    """Ship the helper package's d3 and jQuery as ``_static/vendored/d3`` and ``…/jquery``."""
    if exception is None and app.builder.format == "html" and PACKAGE_JAVASCRIPT.is_dir():
        shutil.copytree(
            PACKAGE_JAVASCRIPT, Path(app.outdir) / "_static" / "vendored", dirs_exist_ok=True
        )


def serve_bertviz_libraries(
    app: Sphinx, pagename: str, templatename: str, context: dict[str, Any], doctree: Any
) -> None:
    """On a page with bertviz views, load the site's libraries instead of the CDN's or inline copies."""
    body = context.get("body")
    if not isinstance(body, str):
        return
    helper_views = INLINE_LIBRARIES.search(body) is not None
    stock_views = CDN_REQUIRE_TAG.search(body) is not None or (
        USES_REQUIRE.search(body) and not helper_views
    )
    if not (helper_views or stock_views):
        return
    context["body"] = compact_view_data(CDN_REQUIRE_TAG.sub("", INLINE_LIBRARIES.sub("", body)))
    scripts = BERTVIZ_LIBRARIES + (BERTVIZ_REQUIRE if stock_views else [])
    for priority, script in enumerate(scripts, start=900):
        app.add_js_file(script, priority=priority)


VIEW_DATA = re.compile(r"\bconst params = (?=\{)")


def _javascript(value: Any) -> str:
    """``value`` (parsed JSON) as a JavaScript literal with no spaces and no leading zeros
    (``.149`` for ``0.149``): the same numbers and strings in fewer bytes."""
    if isinstance(value, dict):
        return "{" + ",".join(f"{json.dumps(k)}:{_javascript(v)}" for k, v in value.items()) + "}"
    if isinstance(value, list):
        return "[" + ",".join(_javascript(v) for v in value) + "]"
    text = json.dumps(value)
    if isinstance(value, float):
        if text.startswith("0."):
            return text[1:]
        if text.startswith("-0."):
            return "-" + text[2:]
    return text


def compact_view_data(body: str) -> str:
    """Write each bertviz view's attention weights (``const params = {…}``, JSON written by bertviz
    with a space after every comma and a zero before every point: 0.3 MB for chapter 7's model view)
    as a compact JavaScript literal with the same values."""
    decoder = json.JSONDecoder()
    pieces, start = [], 0
    for match in VIEW_DATA.finditer(body):
        if match.start() < start:
            continue
        try:
            data, end = decoder.raw_decode(body, match.end())
        except json.JSONDecodeError:
            continue  # not a JSON literal: leave it as it is
        pieces += [body[start : match.end()], _javascript(data)]
        start = end
    return "".join(pieces) + body[start:]


def write_each_script_once(
    app: Sphinx, pagename: str, templatename: str, context: dict[str, Any], doctree: Any
) -> None:
    """Drop repeated ``<script>`` entries (same file or same inline body) from the page."""
    scripts = context.get("script_files")
    if not isinstance(scripts, list):
        return
    seen: set[tuple[str, tuple[tuple[str, str], ...]]] = set()
    unique = []
    for script in scripts:
        filename = str(getattr(script, "filename", script) or "")
        attributes = getattr(script, "attributes", {}) or {}
        key = (filename, tuple(sorted((str(k), str(v)) for k, v in attributes.items())))
        if key not in seen:
            seen.add(key)
            unique.append(script)
    scripts[:] = unique


BERTVIZ_SELECT = re.compile(r'<select id="(?P<name>layer|filter|head)"(?![^>]*aria-label)')
SELECT_LABELS = {"layer": "Layer", "filter": "Attention shown", "head": "Head"}


def label_page(app: Sphinx, pagename: str, templatename: str, context: dict, doctree: Any) -> None:
    """The home page's title without the book's name repeated, and a label for each of bertviz's
    unlabelled ``<select>`` menus (screen readers name them; axe's rule ``select-name``)."""
    if pagename == app.config.root_doc:
        context["titlesuffix"] = ""
    if "body" in context:
        context["body"] = BERTVIZ_SELECT.sub(
            lambda m: f'{m[0]} aria-label="{SELECT_LABELS[m["name"]]}"', context["body"]
        )


def link_printed_book(app: Sphinx, config: Any) -> None:
    """With ``BOOK_PDF`` set to a built PDF, link ``book.pdf`` from the footer of every page."""
    if os.environ.get("BOOK_PDF"):
        options = config.html_theme_options
        link = '<a href="../book.pdf">The printable book (PDF)</a>'  # every page is under book/
        options["extra_footer"] = f"{options.get('extra_footer', '')}<p>{link}</p>"


def copy_printed_book(app: Sphinx, exception: Exception | None) -> None:
    """Ship the PDF named by ``BOOK_PDF`` as ``book.pdf`` at the site's root."""
    pdf = os.environ.get("BOOK_PDF")
    if exception is None and pdf and app.builder.format == "html":
        if not Path(pdf).is_file():
            raise FileNotFoundError(f"BOOK_PDF: no such file {pdf}; build it first (README)")
        shutil.copyfile(pdf, Path(app.outdir) / "book.pdf")


FONTAWESOME_SCRIPT = re.compile(
    r'<script[^>]*\bsrc="[^"]*scripts/fontawesome\.js[^"]*"[^>]*>\s*</script>\s*'
)
# the left sidebar's title and search sit outside any landmark (axe: "region"): make it one
SIDEBAR = re.compile(r'(<div [^>]*class="bd-sidebar-primary bd-sidebar")(?![^>]*\brole=)')
LANDMARK_SIDEBAR = r'\1 role="complementary" aria-label="Book"'
LAZY_IMAGE = re.compile(r"<img (?![^>]*\bloading=)")
MATHJAX_SCRIPT = re.compile(r'<script[^>]*\bsrc="[^"]*vendored/mathjax/[^"]*"[^>]*>\s*</script>\s*')


# pydata-sphinx-theme loads Sphinx's search tools and the whole search index (0.13 MB) on every page
# for its search-as-you-type option; with that option off, only search.html uses them
SEARCH_SCRIPTS = re.compile(
    r'<script src="[^"]*(?:_static/searchtools\.js|_static/language_data\.js|searchindex\.js)">'
    r"</script>\s*"
)


def slim_pages(app: Sphinx, exception: Exception | None) -> None:
    """Remove the Font Awesome script from every page, MathJax from pages without math and the search
    index from pages other than the search page; make the left sidebar a landmark; let images load
    as the reader scrolls to them; cut Font Awesome down to the icons the site shows."""
    if exception is not None or app.builder.format != "html":
        return
    search_as_you_type = str(
        app.config.html_theme_options.get("search_as_you_type", False)
    ).lower() in ("true", "1")
    for page in Path(app.outdir).rglob("*.html"):
        html = page.read_text(encoding="utf-8")
        slim = SIDEBAR.sub(LANDMARK_SIDEBAR, FONTAWESOME_SCRIPT.sub("", html))
        slim = LAZY_IMAGE.sub('<img loading="lazy" ', slim)  # figures load as the reader scrolls
        if 'class="math' not in slim:
            slim = MATHJAX_SCRIPT.sub("", slim)
        if not search_as_you_type and page.name != "search.html":
            slim = SEARCH_SCRIPTS.sub("", slim)
        slim = mark_figure_text(slim, page, Path(app.outdir))
        if page.parent == Path(app.outdir) and "<head" not in slim and 'rel="icon"' not in slim:
            # the root's redirect page: a 404 for /favicon.ico otherwise
            slim = ROOT_FAVICON + slim
        if slim != html:
            page.write_text(slim, encoding="utf-8")
    slim_font_awesome(Path(app.outdir))
    slim_images(Path(app.outdir))


def slim_images(site: Path) -> None:
    """Store the site's opaque PNG figures (the plots of the notebooks' outputs: 0.05-0.1 MB each) with
    a palette of 256 colours, the most a matplotlib plot here uses visibly (viridis has 256): about a
    third of the bytes, same pixel size. The notebooks keep their outputs as they are."""
    from PIL import Image  # a dependency of matplotlib

    for path in sorted((site / "_images").glob("*.png")):
        with Image.open(path) as image:
            if image.mode == "P":
                continue  # a palette already (or done by an earlier build)
            rgba = image.convert("RGBA")
            dpi = image.info.get("dpi")
        if rgba.getchannel("A").getextrema() != (255, 255):
            continue  # transparent: keep it as it is
        palette = rgba.convert("RGB").quantize(
            256, method=Image.Quantize.MEDIANCUT, dither=Image.Dither.NONE
        )
        buffer = io.BytesIO()
        palette.save(buffer, "PNG", optimize=True, **({"dpi": dpi} if dpi else {}))
        if buffer.tell() < path.stat().st_size:
            path.write_bytes(buffer.getvalue())


ROOT_FAVICON = '<link rel="icon" href="_static/favicon.svg" type="image/svg+xml" />\n'
FIGURE_IMAGE = re.compile(
    r'<img (?![^>]*\bdata-text-px=)(?P<attributes>[^>]*\bsrc="(?P<src>[^"]+)"[^>]*)>'
)
SVG_GLYPHS = re.compile(r"scale\((?P<scale>[0-9.]+) -(?P=scale)\)")
SVG_FONT_SIZE = re.compile(r'font-size[:=]\s*"?(?P<size>[0-9.]+)(?:px)?')
SVG_WIDTH = re.compile(r'<svg\b[^>]*?\bwidth="(?P<width>[0-9.]+)(?P<unit>pt|px)?"')
SVG_VIEWBOX = re.compile(r'<svg\b[^>]*?\bviewBox="[-0-9.]+ [-0-9.]+ (?P<width>[0-9.]+) [-0-9.]+"')
CSS_PX_PER = {"pt": 4 / 3, "px": 1.0, None: 1.0}


def svg_text_px(svg: str) -> float | None:
    """The smallest text of an SVG drawing in CSS px at its natural size: matplotlib writes each text
    as glyph paths scaled by ``scale(s -s)``, ``s`` the font size (in the drawing's units) / 100;
    ``font-size`` where the text is text. None where the drawing has no text."""
    sizes = [100 * float(m["scale"]) for m in SVG_GLYPHS.finditer(svg)]
    sizes += [float(m["size"]) for m in SVG_FONT_SIZE.finditer(svg)]
    width, viewbox = SVG_WIDTH.search(svg), SVG_VIEWBOX.search(svg)
    if not sizes:
        return None
    to_css = 1.0
    if width and viewbox and float(viewbox["width"]) > 0:
        to_css = float(width["width"]) * CSS_PX_PER[width["unit"]] / float(viewbox["width"])
    return min(sizes) * to_css


def png_text_px(path: Path) -> float:
    """The smallest text of a PNG plot in image pixels: the book's smallest font at the file's
    resolution (matplotlib records it; 72 dpi where it does not)."""
    from PIL import Image

    with Image.open(path) as image:
        dpi = image.info.get("dpi", (72, 72))[0]
    return FIGURE_FONT_FLOOR_PT * float(dpi) / 72


def mark_figure_text(html: str, page: Path, site: Path) -> str:
    """Add ``data-text-px`` to each figure of a page that is a file of the site's ``_images``."""

    def mark(match: re.Match) -> str:
        src = match["src"].split("#", 1)[0].split("?", 1)[0]
        if src.startswith(("data:", "http:", "https:")) or "_images/" not in src:
            return match[0]
        path = (page.parent / src).resolve()
        if not path.is_file() or site.resolve() not in path.parents:
            return match[0]
        if path.suffix == ".svg":
            size = svg_text_px(path.read_text(encoding="utf-8", errors="replace"))
        elif path.suffix == ".png":
            size = png_text_px(path)
        else:
            return match[0]
        if size is None:
            return match[0]
        return f'<img data-text-px="{size:.2f}" {match["attributes"]}>'

    return FIGURE_IMAGE.sub(mark, html)


THEME_CSS = Path("_static") / "styles" / "pydata-sphinx-theme.css"
WEBFONTS = "vendor/fontawesome/webfonts"
ICON_RULE = re.compile(r'((?:\.fa-[a-z0-9-]+:(?:before|after),?)+)\{content:"([^"]*)"\}')
ICON_CLASS = re.compile(r"\bfa-[a-z0-9-]+")
CSS_CONTENT = re.compile(r'(?:content|--pst-icon-[a-z-]+):\s*"([^"]*)"')
CSS_ESCAPE = re.compile(r"\\([0-9a-fA-F]{1,6}) ?")
FONT_SOURCE = re.compile(
    r"src:url\(\.\./" + WEBFONTS + r'/(?P<font>fa-[a-z]+-\d+)\.woff2\) format\("woff2"\),'
    r"url\(\.\./" + WEBFONTS + r'/(?P=font)\.ttf\) format\("truetype"\)'
)


def _css_text(value: str) -> str:
    """The characters of a CSS string such as ``\\f09b`` or ``\\30 ``."""
    return CSS_ESCAPE.sub(lambda m: chr(int(m[1], 16)), value)


def icon_classes(site: Path) -> set[str]:
    """The ``fa-*`` class names written in the built site's pages and scripts."""
    names: set[str] = set()
    for path in [*site.rglob("*.html"), *(site / "_static").rglob("*.js")]:
        names.update(ICON_CLASS.findall(path.read_text(encoding="utf-8", errors="replace")))
    return names


def _names_a_used_icon(selectors: str, names: set[str]) -> bool:
    """Whether a rule's selectors (``.fa-x:before,.fa-y:before``) name one of ``names``."""
    return any(selector[1:].split(":")[0] in names for selector in selectors.split(","))


def icon_codepoints(site: Path) -> set[int]:
    """The Font Awesome code points the built site can show: the ``fa-*`` classes written in its pages
    and scripts, and every icon its style sheets draw (``content:``, ``--pst-icon-*``)."""
    css = (site / THEME_CSS).read_text(encoding="utf-8")
    names = icon_classes(site)
    text = "".join(
        value for selectors, value in ICON_RULE.findall(css) if _names_a_used_icon(selectors, names)
    )
    for sheet in (site / "_static").rglob("*.css"):
        rules = ICON_RULE.sub("", sheet.read_text(encoding="utf-8", errors="replace"))
        text += "".join(CSS_CONTENT.findall(rules))
    return {ord(char) for char in _css_text(text)}


def slim_font_awesome(site: Path) -> None:
    """Keep only the icons the site shows: drop the theme's CSS rules for the other ~1,900 icons
    (86 KB) and load subsets of Font Awesome's fonts (a few KB instead of 0.27 MB per page)."""
    from fontTools import subset  # a dependency of matplotlib

    css_path = site / THEME_CSS
    if not css_path.is_file() or not FONT_SOURCE.search(css_path.read_text(encoding="utf-8")):
        return  # another theme, or already done
    keep = icon_codepoints(site)
    names = icon_classes(site)
    css = css_path.read_text(encoding="utf-8")
    css = ICON_RULE.sub(lambda rule: rule[0] if _names_a_used_icon(rule[1], names) else "", css)
    for font in sorted(set(m["font"] for m in FONT_SOURCE.finditer(css))):
        options = subset.Options(flavor="woff", ignore_missing_unicodes=True)
        options.layout_features = ["*"]
        subsetter = subset.Subsetter(options)
        full = subset.load_font(str(site / "_static" / WEBFONTS / f"{font}.ttf"), options)
        subsetter.populate(unicodes=keep)
        subsetter.subset(full)
        subset.save_font(full, str(site / "_static" / WEBFONTS / f"{font}-subset.woff"), options)
    css = FONT_SOURCE.sub(
        lambda m: f'src:url(../{WEBFONTS}/{m["font"]}-subset.woff) format("woff")', css
    )
    css_path.write_text(css, encoding="utf-8")


TEX_TOOLS = {"xelatex": "texlive-xetex", "latexmk": "latexmk", "rsvg-convert": "librsvg2-bin"}


LAB_CHAPTER = re.compile(r"^\\(?:part|chapter)\{(?:Labs|How we know: chapter)", re.M)


def labs_as_appendices(app: Sphinx, exception: Exception | None) -> None:
    """In the printed book, the labs ("How we know: chapter N", the part "Labs" of ``_toc.yml``)
    are appendices: ``\\appendix`` before the first of them (the builder has written the .tex file;
    latexmk compiles it afterwards)."""
    if exception is not None or app.builder.name != "latex":
        return
    for tex in Path(app.outdir).glob("*.tex"):
        text = tex.read_text(encoding="utf-8")
        first = LAB_CHAPTER.search(text)
        if first and "\\appendix" not in text:
            tex.write_text(text[: first.start()] + "\\appendix\n" + text[first.start() :])


def require_tex(app: Sphinx) -> None:
    """Stop a PDF build at once, saying what to install, where TeX Live or rsvg-convert is missing."""
    if app.builder.name != "latex":
        return
    missing = [tool for tool in TEX_TOOLS if shutil.which(tool) is None]
    if missing:
        raise RuntimeError(
            f"the printable book needs {', '.join(missing)}: on Debian/Ubuntu `apt-get install "
            "--no-install-recommends texlive-latex-recommended texlive-latex-extra "
            "texlive-fonts-recommended texlive-xetex texlive-plain-generic latexmk xindy "
            "fonts-freefont-otf librsvg2-bin` (about 450 MB; see the README)"
        )


class DiagramFiles(SphinxTransform):
    """An image stored as a PNG data URI whose content is one of ``book/images/diagrams/*.png``
    points at the SVG of the same name instead (see the module's docstring)."""

    default_priority = 100  # while reading, before Sphinx collects the images of the page

    def apply(self, **kwargs: Any) -> None:
        known = {
            hashlib.sha256(path.read_bytes()).hexdigest(): path.with_suffix(".svg")
            for path in DIAGRAMS.glob("*.png")
            if path.with_suffix(".svg").is_file()
        }
        folder = Path(self.env.doc2path(self.env.docname)).parent
        for node in self.document.findall(nodes.image):
            uri = node.get("uri", "")
            if not uri.startswith(PNG_DATA):
                continue
            digest = hashlib.sha256(base64.b64decode(uri[len(PNG_DATA) :])).hexdigest()
            if digest in known:
                node["uri"] = os.path.relpath(known[digest], folder).replace(os.sep, "/")


class LocalBookLinks(SphinxTransform):
    """A link to the published site's page of this book (``SITE/book/notation.html#anchor``)
    becomes the cross-reference that a relative Markdown link (``notation.md#anchor``) makes: the
    site links inside itself (see the module's docstring)."""

    default_priority = 100

    def apply(self, **kwargs: Any) -> None:
        from sphinx import addnodes

        options = self.config.html_theme_options or {}
        try:
            site = published_site(str(options.get("repository_url", "")))
        except ValueError:  # a repository not on GitHub: no published site to link back to
            return
        for node in list(self.document.findall(nodes.reference)):
            uri = node.get("refuri", "")
            if not uri.startswith(site):
                continue
            page, _, anchor = uri[len(site) :].partition("#")
            docname = page.removesuffix(".html")
            if not page.endswith(".html") or docname not in self.env.found_docs:
                logger.warning(
                    f"a link to the published site names no page of the book: {uri}",
                    location=node,
                )
                continue
            xref = addnodes.pending_xref(
                refdomain="doc",
                reftarget=docname,
                reftargetid=anchor or None,
                refdoc=self.env.docname,
                reftype="myst",
                refexplicit=True,
            )
            xref.source, xref.line = node.source, node.line
            inner = nodes.inline("", "", classes=["xref", "myst"])
            inner.extend(child.deepcopy() for child in node.children)
            xref.append(inner)
            node.replace_self(xref)


def setup(app: Sphinx) -> dict[str, Any]:
    app.add_transform(DiagramFiles)
    app.add_transform(LocalBookLinks)
    app.connect("builder-inited", require_tex)
    app.connect("build-finished", labs_as_appendices)
    app.connect("config-inited", link_printed_book)
    app.connect("html-page-context", label_page)
    app.connect("build-finished", slim_pages)
    app.connect("build-finished", copy_printed_book)
    app.connect("builder-inited", add_static_dir)
    app.add_css_file("book.css")  # book/_static/book.css: code-cell font size, bertviz view width
    app.add_js_file("math-scroll.js", loading_method="defer")  # wide formulas: keyboard-scrollable
    app.add_js_file("figure-zoom.js", loading_method="defer")  # the figure viewer (zoom, pan)
    app.connect("html-page-context", serve_bertviz_libraries)
    app.connect("build-finished", copy_package_javascript)
    # after every other handler has added its scripts
    app.connect("html-page-context", write_each_script_once, priority=999)
    return {"parallel_read_safe": True, "parallel_write_safe": True}
