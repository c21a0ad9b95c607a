"""The website as a reader sees it: every page opened in headless Debian Chromium (Playwright).

Each page is opened twice, served from 127.0.0.1 (and some a third time, as files):
* "online": a reader with internet. The CDN files bertviz and MathJax would ask for (require.js, d3,
  jQuery from cdnjs; MathJax from jsdelivr) are answered from the npm copies the site ships
  (book/_static/vendored), and the test checks that the pages ask for none of them (the site loads
  its own copies: no double loading).
* "offline": a computer lab with no outside network. Every request that leaves the local server is
  aborted.
* "file": the copied site opened by double-clicking (file:// URLs), every request refused; on the first
  page and on the pages with bertviz views.
In all: no console errors or page errors, every image loaded, all math rendered by MathJax, and every
bertviz view stored in a notebook drew its tokens, its right edge in view once its output box is scrolled
to the end (not under the margin, not cut off); served pages also have their table-of-contents links resolved.
Reading width: on every chapter page at 1280 x 800 (a common laptop), light and dark, no code cell
scrolls sideways and no cell shows a stream (a training log) split over several output boxes; outputs
that scroll sideways are reported (tests/artifacts/reading-width.json), not failed.
Screenshots go to tests/artifacts/screenshots/: the top of each chapter, and each bertviz view as drawn
online and offline.

Chromium comes from Debian (`apt-get install chromium`), never from `playwright install`; where it is
missing the checks are skipped with that advice (CI sets BOOK_REQUIRE_BROWSER=1 to fail instead).
"""

from __future__ import annotations

import json
import re
from collections import Counter
from dataclasses import dataclass, field
from functools import cache
from pathlib import Path
from urllib.parse import unquote, urlsplit

import nbformat
import pytest
import yaml
from helpers import ROOT, is_local

pytestmark = pytest.mark.slow  # skipped by `pytest -m "not slow"`

ARTIFACTS = ROOT / "tests" / "artifacts" / "screenshots"
VENDORED = ROOT / "book" / "_static" / "vendored"
PACKAGE_JAVASCRIPT = (
    ROOT / "book" / "attention_to_bert" / "figures" / "javascript"
)  # d3 and jQuery, also for JupyterLab
VIEWPORT = {"width": 1280, "height": 800}
# What the CDNs would answer a reader online, from the same npm packages the site ships.
CDN_COPIES = {
    "https://cdnjs.cloudflare.com/ajax/libs/require.js/2.3.6/require.min.js": VENDORED
    / "requirejs"
    / "require.js",
    "https://cdnjs.cloudflare.com/ajax/libs/d3/5.7.0/d3.min.js": PACKAGE_JAVASCRIPT
    / "d3"
    / "d3.min.js",
    "https://cdnjs.cloudflare.com/ajax/libs/jquery/2.0.0/jquery.min.js": PACKAGE_JAVASCRIPT
    / "jquery"
    / "jquery.min.js",
}
MATHJAX_CDN = re.compile(r"^https://cdn\.jsdelivr\.net/npm/mathjax@3[^/]*/es5/(?P<path>.+)$")


# ---------------------------------------------------------------------------------------------------
# The pages of the site and what each must show, derived from _toc.yml and the notebooks' outputs


def toc_documents() -> list[str]:
    """Documents of the book in _toc.yml order (e.g. "book/intro", "book/01_attention")."""
    toc = yaml.safe_load((ROOT / "_toc.yml").read_text())
    documents = [toc["root"]]

    def walk(node) -> None:
        if isinstance(node, dict):
            if "file" in node:
                documents.append(str(node["file"]))
            for value in node.values():
                walk(value)
        elif isinstance(node, list):
            for item in node:
                walk(item)

    walk(toc.get("parts", toc.get("chapters", [])))
    return [re.sub(r"\.(md|ipynb)$", "", d) for d in documents]


PAGES = ["index.html", *(f"{d}.html" for d in toc_documents()), "search.html", "genindex.html"]


@dataclass
class BertvizView:
    """A bertviz view stored in a notebook: its div id, kind and the tokens it must draw."""

    div_id: str
    kind: str  # "head" or "model"
    left_tokens: list[str] = field(default_factory=list)
    right_tokens: list[str] = field(default_factory=list)


def _output_texts(output) -> list[str]:
    texts = []
    for mime in ("text/html", "application/javascript"):
        value = output.get("data", {}).get(mime)
        if value:
            texts.append("".join(value) if isinstance(value, list) else value)
    return texts


def bertviz_views(notebook: Path) -> list[BertvizView]:
    """The bertviz views in a notebook's stored outputs (bertviz embeds `const params = {json}`)."""
    views = []
    decoder = json.JSONDecoder()
    for cell in nbformat.read(notebook, as_version=4).cells:
        tags = set(cell.get("metadata", {}).get("tags", []))
        if cell.cell_type != "code" or tags & {"remove-output", "remove-cell"}:
            continue
        for output in cell.get("outputs", []):
            for text in _output_texts(output):
                starts = [m.end() for m in re.finditer(r"const params\s*=\s*", text)]
                for index, start in enumerate(starts):
                    params, _ = decoder.raw_decode(text, start)
                    script = text[
                        start : starts[index + 1] if index + 1 < len(starts) else len(text)
                    ]
                    shown = params["attention"][int(params.get("default_filter", 0))]
                    views.append(
                        BertvizView(
                            div_id=params["root_div_id"],
                            kind="model" if "renderThumbnail" in script else "head",
                            left_tokens=list(shown["left_text"]),
                            right_tokens=list(shown["right_text"]),
                        )
                    )
    return views


def expected_views(page: str) -> list[BertvizView]:
    notebook = ROOT / page.replace(".html", ".ipynb")
    return bertviz_views(notebook) if notebook.exists() else []


@cache
def _ids_in(path: Path) -> frozenset[str]:
    return frozenset(re.findall(r"""\sid=["']([^"']+)["']""", path.read_text(encoding="utf-8")))


def is_chapter(page: str) -> bool:
    return re.fullmatch(r"book/\d\d_\w+\.html", page) is not None


# ---------------------------------------------------------------------------------------------------
# Checks of the built HTML that need no browser


def built_pages(site: Path) -> set[str]:
    skip = ("_static/", "_sources/", "_images/", "_sphinx_design_static/")
    return {
        p.relative_to(site).as_posix()
        for p in site.rglob("*.html")
        if not p.relative_to(site).as_posix().startswith(skip)
    }


def test_the_browser_checks_open_every_page_of_the_site(built_site):
    assert built_pages(built_site) == set(PAGES), (
        "pages built but not checked (or checked but not built)"
    )


def test_each_inline_script_is_written_once_and_the_launch_buttons_stay(built_site):
    """Stock Jupyter Book 1.0.4 writes `const THEBE_JS_URL = …` twice (a page error in every page)."""
    for page in PAGES:
        html = (built_site / page).read_text(encoding="utf-8")
        head = html.split("</head>", 1)[0]
        inline = [
            body
            for body in re.findall(r"<script(?:\s[^>]*)?>(.*?)</script>", head, flags=re.S)
            if body.strip()
        ]
        repeated = [body for body, count in Counter(inline).items() if count > 1]
        assert not repeated, f"{page}: inline scripts written more than once: {repeated}"
        assert html.count("const THEBE_JS_URL") <= 1, page
    # the launch buttons follow the one repository setting (_config.yml, scripts/repository/set_repository.py)
    config = yaml.safe_load((ROOT / "_config.yml").read_text())
    repository = config["repository"]["url"].removeprefix("https://github.com/")
    for page in filter(is_chapter, PAGES):
        html = (built_site / page).read_text(encoding="utf-8")
        notebook = page.replace(".html", ".ipynb")
        colab = "https://colab.research.google.com/github"
        binder = "https://mybinder.org/v2/gh"
        assert f"{colab}/{repository}/blob/main/{notebook}" in html, page
        assert f"{binder}/{repository}/main?urlpath=lab/tree/{notebook}" in html, page


def test_the_site_loads_no_script_or_style_from_outside(built_site):
    """Every script and stylesheet of every page is a file of the site itself."""
    for page in PAGES:
        html = (built_site / page).read_text(encoding="utf-8")
        remote = re.findall(
            r"""<(?:script|link)\b[^>]*\b(?:src|href)=["'](?:https?:)?//[^"']+["'][^>]*>""", html
        )
        remote = [tag for tag in remote if "<link" not in tag or "stylesheet" in tag]
        assert not remote, f"{page} loads from the internet: {remote}"


def test_pages_with_bertviz_views_load_d3_and_jquery_once_from_the_site(built_site):
    """The views' libraries come from the site, once a page: no CDN tag, no copy inside an output."""
    pages = [page for page in PAGES if expected_views(page)]
    assert pages, "no bertviz view in the notebooks: the chapters 6 and 7 views are gone"
    for page in pages:
        html = (built_site / page).read_text(encoding="utf-8")
        for library in ("vendored/d3/d3.min.js", "vendored/jquery/jquery.min.js"):
            assert (
                len(re.findall(rf"<script[^>]*src=[\"'][^\"']*{re.escape(library)}", html)) == 1
            ), (page, library)
        assert "data-bertviz-libraries" not in html, (
            f"{page} carries a copy of d3/jQuery inside an output"
        )
        assert "cdnjs.cloudflare.com/ajax/libs/require.js" not in html, page


def test_the_shipped_javascript_comes_with_its_licence(built_site):
    static = built_site / "_static" / "vendored"
    for library, script, licence in [
        ("requirejs", "require.js", "LICENSE"),
        ("d3", "d3.min.js", "LICENSE"),
        ("jquery", "jquery.min.js", "LICENSE.txt"),
        ("mathjax", "startup.js", "LICENSE"),
    ]:
        assert (static / library / script).stat().st_size > 10_000, library
        assert (static / library / licence).read_text().strip(), (
            f"{library} ships without its licence"
        )
    fonts = list((static / "mathjax" / "output" / "chtml" / "fonts" / "woff-v2").glob("*.woff"))
    assert len(fonts) >= 20, "MathJax's CHTML fonts are missing"


def test_bertviz_views_are_read_from_the_notebook_outputs(tmp_path):
    """The expectations of the browser check come from the stored outputs (so the check is honest)."""
    params = {
        "attention": [
            {"name": None, "attn": [[[[1.0]]]], "left_text": ["[CLS]"], "right_text": ["[CLS]"]}
        ],
        "default_filter": "0",
        "root_div_id": "bertviz-0123456789abcdef0123456789abcdef",
    }
    script = (
        "require.config({}); requirejs(['jquery', 'd3'], function ($, d3) { const params = "
        + json.dumps(params)
    )
    notebook = nbformat.v4.new_notebook()
    notebook.cells = [
        nbformat.v4.new_code_cell(
            "head_view(...)",
            outputs=[
                nbformat.v4.new_output(
                    "display_data", data={"application/javascript": script + "render()"}
                )
            ],
        ),
        nbformat.v4.new_code_cell(
            "model_view(...)",
            outputs=[
                nbformat.v4.new_output(
                    "display_data", data={"text/html": script + "renderThumbnail()"}
                )
            ],
        ),
    ]
    path = tmp_path / "views.ipynb"
    nbformat.write(notebook, path)
    views = bertviz_views(path)
    assert [(v.div_id, v.kind, v.left_tokens) for v in views] == [
        (params["root_div_id"], "head", ["[CLS]"]),
        (params["root_div_id"], "model", ["[CLS]"]),
    ]


# ---------------------------------------------------------------------------------------------------
# The browser


# `browser` (Debian's Chromium through Playwright, or a skip with install advice) is in tests/conftest.py.


@dataclass
class Traffic:
    """What a browser context asked for outside the local server."""

    cdn: list[str] = field(default_factory=list)
    aborted: list[str] = field(default_factory=list)


def _cdn_copy(url: str) -> Path | None:
    url = url.split("?", 1)[0]
    if url in CDN_COPIES:
        return CDN_COPIES[url]
    match = MATHJAX_CDN.match(url)
    if match:
        path = match["path"]
        # the site ships MathJax's loader and components; Sphinx's default URL names tex-mml-chtml.js
        local = (
            VENDORED / "mathjax" / ("startup.js" if re.fullmatch(r"tex-[\w-]+\.js", path) else path)
        )
        return local if local.is_file() else None
    return None


def _new_context(browser, mode: str, color_scheme: str = "light"):
    context = browser.new_context(viewport=VIEWPORT, color_scheme=color_scheme)
    traffic = Traffic()

    def handle(route) -> None:
        url = route.request.url
        copy = _cdn_copy(url) if mode == "online" else None
        if copy is not None:
            traffic.cdn.append(url)
            route.fulfill(path=str(copy))
        else:
            traffic.aborted.append(url)
            route.abort("internetdisconnected")

    context.route(
        lambda url: not is_local(url), handle
    )  # requests to the local server go through untouched
    context.set_default_timeout(
        60_000
    )  # generous: a loaded 2-core CI machine is slow to lay out long chapters
    context.set_default_navigation_timeout(120_000)
    return context, traffic


@pytest.fixture(scope="session")
def contexts(browser):
    made = {}

    def get(mode: str):
        if mode not in made:
            made[mode] = _new_context(browser, mode)
        return made[mode]

    yield get
    for context, _ in made.values():
        context.close()


# ---------------------------------------------------------------------------------------------------
# One page, checked as a reader sees it

WAIT_FOR_MATHJAX = """async () => {
    if (window.MathJax && MathJax.startup && MathJax.startup.promise) { await MathJax.startup.promise; }
}"""
LOAD_IMAGES = """async () => {
    const images = [...document.images];
    images.forEach(img => { img.loading = "eager"; });
    await Promise.all(images.map(img => img.complete ? null :
        new Promise(resolve => { img.addEventListener("load", resolve); img.addEventListener("error", resolve); })));
    return images.map(img => ({src: img.currentSrc || img.src, width: img.naturalWidth}));
}"""
MATH_STATE = """() => {
    const math = [...document.querySelectorAll("span.math, div.math")];
    return {
        math: math.length,
        unrendered: math.filter(m => !m.querySelector("mjx-container")).map(m => m.textContent.slice(0, 80)),
        containers: document.querySelectorAll("mjx-container").length,
        errors: [...document.querySelectorAll("mjx-merror")]
            .map(e => e.getAttribute("data-mjx-error") || e.textContent),
        mathjax: !!(window.MathJax && window.MathJax.version),
    };
}"""
TOC_LINKS = """() => [...document.querySelectorAll(
    "nav.bd-docs-nav a[href], .bd-toc-nav a[href], .prev-next-area a[href], .navbar-brand[href]")]
    .map(a => a.href)"""
# Is the right end of the view, its output box scrolled to the end, on screen and on top (not clipped)?
VIEW_RIGHT_EDGE = """(root) => {
    const svg = root.querySelector("#vis svg");
    svg.scrollIntoView({block: "start"});
    // a view wider than the column scrolls inside its output box: scroll that box to its right end
    const scrolls = e => e.scrollWidth > e.clientWidth + 1
        && ["auto", "scroll"].includes(getComputedStyle(e).overflowX);
    let scroller = svg.parentElement;
    while (scroller && scroller !== document.body && !scrolls(scroller)) {
        scroller = scroller.parentElement;
    }
    if (scroller && scroller !== document.body) { scroller.scrollLeft = scroller.scrollWidth; }
    const box = svg.getBoundingClientRect();
    const x = box.right - 4, y = Math.max(box.top, 0) + Math.min(box.height, innerHeight) / 2;
    const hit = document.elementFromPoint(x, y);
    const onTop = !!hit && (hit === svg || svg.contains(hit));
    return {right: box.right, width: box.width, viewport: innerWidth, onTop: onTop,
            hit: hit ? hit.tagName + "." + hit.getAttribute("class") : null};
}"""
CLICK_FIRST_THUMBNAIL = """(root) => {
    const background = root.querySelector("svg .attn_background");
    const rects = background.parentNode.querySelectorAll(":scope > rect");
    rects[rects.length - 1].dispatchEvent(new MouseEvent("click", {bubbles: true}));
}"""


def _broken_toc_links(links: list[str], site: Path, base: str) -> list[str]:
    broken = []
    for link in links:
        if not link.startswith(base):
            continue  # the repository and launch buttons lead outside the site
        parts = urlsplit(link)
        path = site / unquote(parts.path.lstrip("/"))
        if path.is_dir():
            path = path / "index.html"
        if not path.is_file():
            broken.append(f"{link} (no such page)")
        elif parts.fragment and unquote(parts.fragment) not in _ids_in(path):
            broken.append(f"{link} (no such anchor)")
    return broken


def _check_bertviz(page, view: BertvizView) -> list[str]:
    root = page.locator(f'div[id="{view.div_id}"][style]')
    if root.count() != 1:
        return [f"bertviz view {view.div_id} is not on the page"]
    texts = root.locator("#vis svg text")
    try:
        texts.first.wait_for(state="attached", timeout=15_000)
    except Exception:
        return [f"bertviz {view.kind} view {view.div_id} drew nothing"]
    edge = root.evaluate(VIEW_RIGHT_EDGE)
    if edge["right"] > edge["viewport"] or not edge["onTop"]:
        return [
            f"bertviz {view.kind} view {view.div_id} is cut at the right: its {edge['width']:.0f} px picture ends at "
            f"{edge['right']:.0f} px of {edge['viewport']} px, and {edge['hit']} is drawn over its right end"
        ]
    expected = Counter(view.left_tokens + view.right_tokens)
    if view.kind == "model":
        labels = set(texts.all_text_contents())
        if not {"Layers", "Heads"} <= labels:
            return [f"bertviz model view {view.div_id} lacks its axis labels: {sorted(labels)}"]
        root.evaluate(CLICK_FIRST_THUMBNAIL)
        texts = root.locator("#vis svg .detail text.token")
        texts.first.wait_for(state="attached", timeout=5_000)
    drawn = Counter(texts.all_text_contents())
    missing = expected - drawn
    if missing:
        return [
            f"bertviz {view.kind} view {view.div_id} did not draw the tokens {sorted(missing.elements())}"
        ]
    return []


def check_page(
    context, traffic: Traffic, base: str, page_path: str, mode: str, server=None
) -> list[str]:
    """Open one page as a reader would; return what is wrong with it (nothing, when all is well)."""
    cdn_before, aborted_before = len(traffic.cdn), len(traffic.aborted)
    missing_before = len(server.missing) if server else 0
    page = context.new_page()
    console_errors: list[str] = []
    page_errors: list[str] = []
    page.on(
        "console",
        lambda message: console_errors.append(message.text) if message.type == "error" else None,
    )
    page.on("pageerror", lambda error: page_errors.append(str(error)))
    problems: list[str] = []
    try:
        page.goto(base + page_path, wait_until="load")
        if page_path == "index.html":  # a redirect to the book's first page
            page.wait_for_url(f"**/{toc_documents()[0]}.html", wait_until="load")
        page.evaluate(WAIT_FOR_MATHJAX)

        images = page.evaluate(LOAD_IMAGES)
        problems += [f"image not loaded: {img['src']}" for img in images if img["width"] == 0]

        math = page.evaluate(MATH_STATE)
        if math["math"]:
            if not math["mathjax"]:
                problems.append(f"{math['math']} formulas but MathJax did not load")
            problems += [
                f"formula not rendered by MathJax: {text!r}" for text in math["unrendered"]
            ]
            problems += [f"MathJax error: {error}" for error in math["errors"]]

        if server:
            problems += _broken_toc_links(page.evaluate(TOC_LINKS), server.root, server.url)

        for number, view in enumerate(expected_views(page_path), start=1):
            view_problems = _check_bertviz(page, view)
            problems += view_problems
            if not view_problems and page.locator(f'div[id="{view.div_id}"][style]').is_visible():
                ARTIFACTS.mkdir(parents=True, exist_ok=True)
                shot = ARTIFACTS / f"{mode}-{Path(page_path).stem}-bertviz-{number}.png"
                page.locator(f'div[id="{view.div_id}"][style]').screenshot(path=str(shot))
        shown = page.locator('div[id^="bertviz-"][style]').count()
        if shown != len(expected_views(page_path)):
            problems.append(
                f"{shown} bertviz views on the page, {len(expected_views(page_path))} in the notebook"
            )

        if is_chapter(page_path) and mode == "online":
            # the top of the chapter as a reader first sees it (a full-page shot of a long chapter
            # costs seconds; the bertviz views have their own shots above)
            ARTIFACTS.mkdir(parents=True, exist_ok=True)
            page.screenshot(path=str(ARTIFACTS / f"{Path(page_path).stem}.png"))
    finally:
        page.close()

    problems += [f"console error: {text}" for text in console_errors]
    problems += [f"page error: {text}" for text in page_errors]
    if server:
        problems += [
            f"not found on the local server: {path}" for path in server.missing[missing_before:]
        ]
    if mode == "online":
        problems += [
            f"fetched from a CDN (the site should use its own copy): {u}"
            for u in traffic.cdn[cdn_before:]
        ]
    problems += [f"request outside the site: {url}" for url in traffic.aborted[aborted_before:]]
    return problems


@pytest.mark.parametrize("mode", ["online", "offline"])
@pytest.mark.parametrize("page_path", PAGES)
def test_page_works_in_the_browser(contexts, site_server, page_path, mode):
    context, traffic = contexts(mode)
    problems = check_page(context, traffic, site_server.url, page_path, mode, server=site_server)
    assert not problems, f"{page_path} ({mode}):\n" + "\n".join(problems)


def test_the_copied_site_works_opened_as_files_with_no_network(contexts, built_site):
    """A teacher's copy on a USB stick, opened by double-clicking: file:// URLs, every request refused.

    Checked on the first page and on every page with a bertviz view (the pages that need the most).
    """
    context, traffic = contexts("offline")
    pages = [PAGES[1], *(page for page in PAGES if expected_views(page))]
    base = built_site.resolve().as_uri() + "/"
    problems = []
    for page_path in pages:
        problems += [
            f"{page_path}: {text}" for text in check_page(context, traffic, base, page_path, "file")
        ]
    assert not problems, "\n".join(problems)


# ---------------------------------------------------------------------------------------------------
# Reading width: code cells fit the page, and a training log is one box

READING_WIDTH = """() => {
    const longest = pre => Math.max(...pre.textContent.split("\\n").map(line => line.length));
    const cut = pre => pre.scrollWidth > pre.clientWidth;
    const describe = pre => ({longest: longest(pre), scrollWidth: pre.scrollWidth, clientWidth: pre.clientWidth,
                              start: pre.textContent.trim().slice(0, 60)});
    const inputs = [...document.querySelectorAll("div.cell div.cell_input pre")];
    const outputs = [...document.querySelectorAll("div.cell div.cell_output pre")];
    const stream = box => box.classList.contains("output") &&
        (box.classList.contains("stream") || box.classList.contains("stderr"));
    const split = [];
    for (const area of document.querySelectorAll("div.cell div.cell_output")) {
        const boxes = [...area.children];
        for (let i = 1; i < boxes.length; i++) {
            if (stream(boxes[i - 1]) && stream(boxes[i]) &&
                boxes[i - 1].classList.contains("stderr") === boxes[i].classList.contains("stderr")) {
                split.push(boxes[i].textContent.trim().slice(0, 60));
            }
        }
    }
    const probe = document.createElement("span");
    probe.textContent = "0".repeat(100);
    inputs[0].appendChild(probe);
    const character = probe.getBoundingClientRect().width / 100;
    probe.remove();
    const style = getComputedStyle(inputs[0]);
    return {
        codeCells: inputs.length,
        codeBoxWidth: inputs[0].clientWidth,
        textWidth: inputs[0].clientWidth - parseFloat(style.paddingLeft) - parseFloat(style.paddingRight),
        characterWidth: character,
        cutInputs: inputs.filter(cut).map(describe),
        cutOutputs: outputs.filter(cut).map(describe),
        splitOutputs: split,
    };
}"""


def _record_reading_width(page_path: str, scheme: str, measured: dict) -> None:
    """Keep the measurements in tests/artifacts/reading-width.json (one entry per page and scheme)."""
    ARTIFACTS.parent.mkdir(parents=True, exist_ok=True)
    path = ARTIFACTS.parent / "reading-width.json"
    try:
        table = json.loads(path.read_text())
    except (FileNotFoundError, ValueError):
        table = {}
    table[f"{page_path} {scheme}"] = {
        "code cells": measured["codeCells"],
        "code box px": measured["codeBoxWidth"],
        "text px": measured["textWidth"],
        "character px": round(measured["characterWidth"], 2),
        "columns that fit": int(measured["textWidth"] // measured["characterWidth"]),
        "cut code cells": len(measured["cutInputs"]),
        "cut outputs": len(measured["cutOutputs"]),
        "split outputs": len(measured["splitOutputs"]),
    }
    path.write_text(json.dumps(table, indent=1, sort_keys=True))


@pytest.mark.parametrize("scheme", ["light", "dark"])
@pytest.mark.parametrize("page_path", [page for page in PAGES if is_chapter(page)])
def test_code_cells_fit_the_page_and_each_stream_is_one_box(
    browser, site_server, page_path, scheme
):
    """At 1280 px no code cell scrolls sideways (the notebooks' 76 columns fit with room to spare)."""
    context, _ = _new_context(browser, "offline", color_scheme=scheme)
    try:
        page = context.new_page()
        page.goto(site_server.url + page_path, wait_until="load")
        assert page.evaluate("document.documentElement.dataset.theme") == scheme
        measured = page.evaluate(READING_WIDTH)
    finally:
        context.close()
    _record_reading_width(page_path, scheme, measured)
    # the notebooks' limit (book/ruff.toml) must fit with a margin: 80 columns at this width
    assert measured["textWidth"] >= 80 * measured["characterWidth"], measured
    cut = [
        f"{c['longest']} characters, {c['scrollWidth']} > {c['clientWidth']} px: {c['start']!r}"
        for c in measured["cutInputs"]
    ]
    assert not cut, f"{page_path} ({scheme}): {len(cut)} code cells scroll sideways:\n" + "\n".join(
        cut
    )
    assert not measured["splitOutputs"], (
        f"{page_path}: a stream split over several boxes: {measured['splitOutputs']}"
    )
