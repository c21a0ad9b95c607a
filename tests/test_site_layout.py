"""The website's layout where a reader opens it: one search box, figures that open full size, aligned
printouts that scroll (not wrap) on a phone, no page that slides sideways, and every chapter's
sections numbered "N.1", "N.2" … in the page and in its contents (Chromium, every request that
leaves the machine refused)."""

from __future__ import annotations

import re

import pytest
from helpers import ROOT

pytestmark = pytest.mark.slow

CHAPTERS = sorted(p.stem for p in (ROOT / "book").glob("[0-9][0-9]_*.ipynb"))
LAPTOP = {"width": 1280, "height": 800}
PHONE = {"width": 390, "height": 844}

VISIBLE_SEARCH = """() => [...document.querySelectorAll(
    'input[type=search], .search-button, .search-button-field')].filter(e => {
        const box = e.getBoundingClientRect(), style = getComputedStyle(e);
        return box.width > 0 && box.height > 0 && style.visibility !== 'hidden';
    }).length"""


@pytest.fixture(scope="module")
def open_page(browser, built_site):
    contexts = {}

    def open_(page_name: str, viewport: dict):
        key = viewport["width"]
        if key not in contexts:
            context = browser.new_context(viewport=viewport)
            context.route(lambda url: url.startswith(("http:", "https:")), lambda r: r.abort())
            contexts[key] = context
        page = contexts[key].new_page()
        page.goto((built_site / "book" / f"{page_name}.html").as_uri())
        page.wait_for_load_state("load")
        return page

    yield open_
    for context in contexts.values():
        context.close()


@pytest.mark.parametrize("viewport", [LAPTOP, PHONE], ids=["laptop", "phone"])
def test_one_search_box(open_page, viewport):
    page = open_page("01_attention", viewport)
    assert page.evaluate(VISIBLE_SEARCH) == 1
    page.close()


@pytest.mark.parametrize("chapter", CHAPTERS)
def test_sections_are_numbered_by_their_chapter(open_page, chapter):
    number = int(chapter[:2])
    page = open_page(chapter, LAPTOP)
    headings = page.eval_on_selector_all(
        "article h2", "hs => hs.map(h => h.textContent.replace('#', '').trim())"
    )
    numbered = [h for h in headings if not re.match(r"(Exercises|Summary|References|Optional)", h)]
    assert numbered, f"{chapter} has no sections"
    wrong = [h for h in numbered if not re.match(rf"{number}\.\d+\s", h)]
    assert wrong == [], f"{chapter}: sections not numbered {number}.1, {number}.2, …: {wrong}"
    # the page's contents list shows the same numbers
    contents = page.eval_on_selector_all(
        ".toc-entry a", "links => links.map(a => a.textContent.trim())"
    )
    assert [c for c in contents if re.match(rf"{number}\.\d+\s", c)], contents[:5]
    page.close()


@pytest.mark.parametrize("chapter", CHAPTERS)
def test_on_a_phone_nothing_slides_sideways_and_printouts_scroll(open_page, chapter):
    page = open_page(chapter, PHONE)
    width = page.evaluate("() => document.documentElement.scrollWidth")
    assert width <= PHONE["width"], f"{chapter} is {width} px wide on a 390 px phone"
    printouts = page.eval_on_selector_all(
        "div.cell_output pre",
        """pres => pres.map(p => ({space: getComputedStyle(p).whiteSpace,
            overflow: getComputedStyle(p).overflowX, wide: p.scrollWidth > p.clientWidth + 1}))""",
    )
    assert printouts, f"{chapter} has no printed output"
    assert {p["space"] for p in printouts} == {"pre"}, "a printout wraps its lines apart"
    assert {p["overflow"] for p in printouts} <= {"auto", "scroll"}
    assert any(p["wide"] for p in printouts), "no printout is wider than a phone: check the test"
    page.close()


@pytest.mark.parametrize("chapter", ["02_han", "05_multi_head_attention"])
def test_a_tap_opens_a_figure_full_size(open_page, chapter):
    page = open_page(chapter, PHONE)
    figures = page.eval_on_selector_all(
        "div.cell_output a.figure-zoom > img",
        """images => images.map(i => ({href: i.parentElement.href, src: i.src,
            shown: i.getBoundingClientRect().width}))""",
    )
    assert figures, f"{chapter}: no figure is a link to itself"
    assert all(f["href"] == f["src"] for f in figures)
    first = page.locator("div.cell_output a.figure-zoom > img").first
    first.scroll_into_view_if_needed()
    natural = first.evaluate("i => i.decode().then(() => i.naturalWidth)")
    shown = first.evaluate("i => i.getBoundingClientRect().width")
    assert natural > shown, "on a phone the figure is squeezed: the full-size view is needed"
    with page.expect_navigation():
        first.click()
    assert page.url.endswith(".png")
    assert page.evaluate("() => document.images[0].naturalWidth") == natural
    page.close()


@pytest.mark.parametrize(
    ("chapter", "kind"), [("01_attention", "query"), ("04_self_attention", "scaling")]
)
def test_the_figures_to_move_draw_on_the_site_offline(open_page, chapter, kind):
    page = open_page(chapter, LAPTOP)
    errors = []
    page.on("pageerror", lambda error: errors.append(str(error)))
    figure = page.locator(f'div.atb-figure[data-figure="{kind}"]')
    assert figure.count() == 1, f"{chapter} has no {kind} figure"
    figure.locator("svg").first.wait_for()
    assert figure.get_attribute("data-drawn") == "1"
    assert figure.locator("img.atb-static").is_hidden()
    if kind == "query":
        before = figure.get_attribute("data-query")
        figure.locator("circle.atb-query").focus()
        page.keyboard.press("ArrowLeft")
        assert figure.get_attribute("data-query") != before
    else:
        assert float(figure.get_attribute("data-largest-unscaled")) > 0.5
    assert errors == []
    page.close()
