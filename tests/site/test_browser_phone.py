"""The website on a 390-px phone, as a reader sees it in headless Debian Chromium (Playwright, touch).

* Every figure of every page (a notebook's plot, an architecture diagram) is readable: its smallest
  text is at least 9 CSS px tall (its font size on screen) as the page shows it, or else a tap opens
  it in the figure viewer (book/_static/figure-zoom.js) at a size where it is. The text's size is
  measured, not read from the page: an SVG's from its own glyphs (matplotlib writes each text as
  glyph paths scaled by its font size), a PNG's from its resolution (matplotlib records the dpi) and
  the smallest font the book's plotting code asks for (checked here too), times the scale at which
  the browser draws the file.
* The figures drawn live (chapter 1's movable query, chapter 4's slider) show their text at 9 px or
  more, and a finger that swipes over chapter 1's figure scrolls the page (the figure scrolls unless
  its handle is grabbed), while a finger on the handle moves the query and not the page.
* A chapter's title takes at most a sixth of the first phone screen.

Screenshots of each check go to tests/artifacts/screenshots/phone/. Every request that leaves the
machine is refused. The browser is the session's (tests/conftest.py): Debian's Chromium, never
`playwright install`.
"""

from __future__ import annotations

import ast
import re
import sys
from pathlib import Path
from urllib.parse import unquote, urlsplit

import nbformat
import pytest
from helpers import CHAPTERS, ROOT

pytestmark = pytest.mark.slow

sys.path.insert(0, str(ROOT / "book" / "_ext"))
import offline_site  # noqa: E402

PHONE = {"width": 390, "height": 844}
READABLE_PX = 9.0
SHOTS = ROOT / "tests" / "artifacts" / "screenshots" / "phone"
PLOTTING_CODE = [ROOT / "book" / "attention_to_bert" / "plotting.py"]

FIGURES = """() => [...document.querySelectorAll('article.bd-article img')]
    .filter(img => (img.closest('div.cell_output') || /_images\\//.test(img.getAttribute('src')))
                   && !img.closest('div.atb-figure') && !img.closest('div[id^="bertviz-"]'))
    .map((img, index) => { img.setAttribute('data-phone-test', String(index));
        return {index, src: new URL(img.getAttribute('src'), document.baseURI).href,
                natural: img.naturalWidth, shown: img.getBoundingClientRect().width}; })"""
LOAD_ALL = """async () => { const images = [...document.images];
    images.forEach(img => { img.loading = 'eager'; });
    await Promise.all(images.map(img => img.complete ? null : new Promise(resolve => {
        img.addEventListener('load', resolve); img.addEventListener('error', resolve); })));
    return images.length; }"""
LIVE_TEXT = """() => [...document.querySelectorAll('div.atb-figure svg text')].map(t => ({
    text: t.textContent, px: parseFloat(t.getAttribute('font-size')) * t.getScreenCTM().a }))"""


def pages(site: Path) -> list[str]:
    return sorted(p.relative_to(site).as_posix() for p in (site / "book").rglob("*.html"))


@pytest.fixture(scope="module")
def phone(browser):
    context = browser.new_context(viewport=PHONE, is_mobile=True, has_touch=True)
    context.route(lambda url: url.startswith(("http:", "https:")), lambda r: r.abort())
    context.set_default_timeout(60_000)
    yield context
    context.close()


def text_px_at_natural_size(site: Path, url: str) -> float:
    """The smallest text of a figure file of the site (its file: URL), in CSS px at its natural
    size."""
    file = Path(unquote(urlsplit(url).path))
    assert site.resolve() in file.resolve().parents, f"{url} is not a file of the site"
    if file.suffix == ".svg":
        size = offline_site.svg_text_px(file.read_text(encoding="utf-8"))
        assert size is not None, f"{url}: no text found in the drawing"
        return size
    from PIL import Image

    with Image.open(file) as image:
        dpi = image.info.get("dpi")
    assert dpi, f"{url}: the PNG does not record its resolution (dpi)"
    return offline_site.FIGURE_FONT_FLOOR_PT * float(dpi[0]) / 72


def font_sizes_asked_for(source: str) -> list[float]:
    """Every literal font size (points) a piece of plotting code asks for: ``fontsize=8``,
    ``labelsize=7`` (keyword arguments with a number)."""
    sizes = []
    for node in ast.walk(ast.parse(source)):
        if isinstance(node, ast.keyword) and node.arg in ("fontsize", "labelsize"):
            if isinstance(node.value, ast.Constant) and isinstance(node.value.value, int | float):
                sizes.append(float(node.value.value))
    return sizes


def test_the_plots_ask_for_no_font_under_the_floor_the_viewer_assumes():
    """The PNGs' text size is the book's smallest font at the file's dpi: no plot asks for less."""
    small = []
    sources = [path.read_text() for path in PLOTTING_CODE]
    for notebook in CHAPTERS:
        cells = nbformat.read(notebook, as_version=4).cells
        sources += [c.source for c in cells if c.cell_type == "code" and "plt." in c.source]
    for source in sources:
        try:
            sizes = font_sizes_asked_for(source)
        except SyntaxError:  # a cell with IPython magics: read its numbers directly
            sizes = [float(m[1]) for m in re.finditer(r"\b(?:fontsize|labelsize)=(\d+)", source)]
        small += [s for s in sizes if 0 < s < offline_site.FIGURE_FONT_FLOOR_PT and s > 1]
    assert small == [], f"plots ask for fonts under {offline_site.FIGURE_FONT_FLOOR_PT} pt: {small}"
    # and the floor is what the test of this module assumes: readable at 100 dpi, one image pixel
    # to one CSS px (the viewer's size)
    assert offline_site.FIGURE_FONT_FLOOR_PT * 100 / 72 >= READABLE_PX


def test_the_svg_text_size_is_read_from_the_drawing(tmp_path):
    """svg_text_px finds a 9-pt label of a matplotlib SVG: 12 CSS px at its natural size."""
    import matplotlib.pyplot as plt

    fig, ax = plt.subplots(figsize=(4, 2))
    ax.axis("off")
    ax.text(0.1, 0.5, "keys", fontsize=9)
    ax.text(0.5, 0.5, "values", fontsize=14)
    fig.savefig(tmp_path / "drawing.svg")
    plt.close(fig)
    size = offline_site.svg_text_px((tmp_path / "drawing.svg").read_text())
    assert size == pytest.approx(12.0, abs=0.01)


def test_every_figure_is_readable_on_a_phone_directly_or_in_the_viewer(phone, built_site):
    SHOTS.mkdir(parents=True, exist_ok=True)
    problems, checked, opened = [], 0, 0
    for page_path in pages(built_site):
        page = phone.new_page()
        page.goto((built_site / page_path).as_uri(), wait_until="load")
        page.evaluate(LOAD_ALL)
        for figure in page.evaluate(FIGURES):
            checked += 1
            natural_px = text_px_at_natural_size(built_site, figure["src"])
            name = f"{page_path} {Path(figure['src']).name}"
            if figure["natural"] == 0:
                problems.append(f"{name}: did not load")
                continue
            direct = natural_px * figure["shown"] / figure["natural"]
            if direct >= READABLE_PX:
                continue
            image = page.locator(f'img[data-phone-test="{figure["index"]}"]')
            image.scroll_into_view_if_needed()
            image.tap()
            viewer = page.locator("div.figure-viewer")
            viewer.wait_for(state="visible")
            shown = page.evaluate(
                "() => document.querySelector('div.figure-viewer img').getBoundingClientRect()"
            )
            in_viewer = natural_px * shown["width"] / figure["natural"]
            if opened < 3 or Path(figure["src"]).suffix == ".svg":
                page.screenshot(path=str(SHOTS / f"{Path(figure['src']).stem}-viewer.png"))
            opened += 1
            if in_viewer < READABLE_PX:
                problems.append(
                    f"{name}: text {direct:.1f} px on the page, {in_viewer:.1f} px in the viewer"
                )
            page.keyboard.press("Escape")
            viewer.wait_for(state="hidden")
        page.close()
    assert checked >= 40, f"only {checked} figures found: check the test"
    assert opened > 0, "no figure needed the viewer: check the test"
    assert problems == [], "\n".join(problems)


@pytest.mark.parametrize(
    ("chapter", "kind"), [("01_attention", "query"), ("04_self_attention", "scaling")]
)
def test_the_live_figures_show_their_text_at_9_px(phone, built_site, chapter, kind):
    page = phone.new_page()
    page.goto((built_site / "book" / f"{chapter}.html").as_uri(), wait_until="load")
    figure = page.locator(f'div.atb-figure[data-figure="{kind}"] svg').first
    figure.wait_for()
    texts = page.evaluate(LIVE_TEXT)
    assert texts, f"{chapter}: the {kind} figure drew no text"
    small = [t for t in texts if t["px"] < READABLE_PX]
    assert small == [], f"{chapter}: text under {READABLE_PX} px: {small[:5]}"
    width = page.evaluate("() => document.documentElement.scrollWidth")
    assert width <= PHONE["width"], f"{chapter}: the page is {width} px wide"
    figure.scroll_into_view_if_needed()
    SHOTS.mkdir(parents=True, exist_ok=True)
    figure.screenshot(path=str(SHOTS / f"{chapter}-{kind}.png"))
    page.close()


def _swipe(cdp, x: float, start_y: float, end_y: float, steps: int = 12) -> None:
    """A finger put down at (x, start_y), moved to (x, end_y) and lifted (CDP touch events, which
    go through the browser's gesture handling as a real finger's do)."""
    cdp.send(
        "Input.dispatchTouchEvent", {"type": "touchStart", "touchPoints": [{"x": x, "y": start_y}]}
    )
    for step in range(1, steps + 1):
        y = start_y + (end_y - start_y) * step / steps
        cdp.send(
            "Input.dispatchTouchEvent", {"type": "touchMove", "touchPoints": [{"x": x, "y": y}]}
        )
    cdp.send("Input.dispatchTouchEvent", {"type": "touchEnd", "touchPoints": []})


STATE = """() => ({scroll: window.scrollY,
    query: document.querySelector('div.atb-figure[data-figure="query"]').getAttribute('data-query')})"""


def test_a_phone_scrolls_past_the_movable_figure_unless_the_handle_is_grabbed(phone, built_site):
    page = phone.new_page()
    page.goto((built_site / "book" / "01_attention.html").as_uri(), wait_until="load")
    plot = page.locator('div.atb-figure[data-figure="query"] rect.atb-plot')
    plot.wait_for()
    cdp = page.context.new_cdp_session(page)
    # a swipe up that starts on the plot scrolls the page, and leaves the query where it was
    page.evaluate("() => document.querySelector('rect.atb-plot').scrollIntoView({block: 'center'})")
    page.wait_for_timeout(300)
    box = plot.bounding_box()
    before = page.evaluate(STATE)
    _swipe(cdp, box["x"] + box["width"] / 2, box["y"] + box["height"] * 0.8, box["y"] - 150)
    page.wait_for_timeout(1500)
    after = page.evaluate(STATE)
    assert after["scroll"] > before["scroll"] + 100, (
        f"a swipe over the figure did not scroll the page: {before} -> {after}"
    )
    assert after["query"] == before["query"], "a swipe over the figure moved the query"
    # a finger on the handle drags the query, and the page stays put
    page.evaluate(
        "() => document.querySelector('circle.atb-query').scrollIntoView({block: 'center'})"
    )
    page.wait_for_timeout(500)
    handle = page.locator("circle.atb-query").bounding_box()
    x, y = handle["x"] + handle["width"] / 2, handle["y"] + handle["height"] / 2
    before = page.evaluate(STATE)
    _swipe(cdp, x, y, y + 60)
    page.wait_for_timeout(800)
    after = page.evaluate(STATE)
    assert after["query"] != before["query"], "a finger on the handle did not move the query"
    assert abs(after["scroll"] - before["scroll"]) < 2, (
        f"dragging the handle scrolled the page: {before} -> {after}"
    )
    SHOTS.mkdir(parents=True, exist_ok=True)
    page.screenshot(path=str(SHOTS / "01_attention-query-dragged.png"))
    page.close()


@pytest.mark.parametrize("chapter", [path.stem for path in CHAPTERS])
def test_a_chapter_title_leaves_the_first_phone_screen_to_the_text(phone, built_site, chapter):
    page = phone.new_page()
    page.goto((built_site / "book" / f"{chapter}.html").as_uri(), wait_until="load")
    title = page.locator("article.bd-article h1").first.bounding_box()
    assert title["height"] <= PHONE["height"] / 6, (
        f"{chapter}: the title is {title['height']:.0f} px tall on a {PHONE['height']}-px screen"
    )
    page.close()
