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
def test_a_tap_opens_a_figure_in_the_viewer_and_escape_closes_it(open_page, chapter):
    """A figure is a link to itself (the bare image without JavaScript); a tap opens the figure
    viewer at least at the image's natural size, which Escape closes, giving the focus back."""
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
    url = page.url
    first.click()
    viewer = page.locator("div.figure-viewer")
    viewer.wait_for(state="visible")
    assert page.url.split("#")[0] == url.split("#")[0], "the tap left the page"
    in_viewer = page.evaluate(
        "() => document.querySelector('div.figure-viewer img').getBoundingClientRect().width"
    )
    assert in_viewer >= natural - 1, f"the viewer shows it {in_viewer:.0f} px wide of {natural}"
    box = page.evaluate(
        "() => document.querySelector('div.figure-viewer').getBoundingClientRect().toJSON()"
    )
    assert (box["width"], box["height"]) == (PHONE["width"], PHONE["height"]), box
    page.keyboard.press("Escape")
    viewer.wait_for(state="hidden")
    assert page.evaluate("() => document.activeElement.classList.contains('figure-zoom')")
    page.close()


def test_a_diagram_opens_in_the_viewer_too(open_page):
    page = open_page("05_multi_head_attention", PHONE)
    diagram = page.locator("img[src$='ch5_kv_sharing.svg']")
    diagram.scroll_into_view_if_needed()
    diagram.click()
    page.locator("div.figure-viewer").wait_for(state="visible")
    assert page.evaluate(
        "() => document.querySelector('div.figure-viewer img').src.endsWith('ch5_kv_sharing.svg')"
    )
    page.locator("div.figure-viewer button[data-zoom='close']").click()
    page.locator("div.figure-viewer").wait_for(state="hidden")
    page.close()


def test_no_empty_band_across_the_top_of_a_laptop_page(open_page):
    """The header holds only the search field hidden at this width: it is not drawn, and the
    page's content starts at the top of the window."""
    page = open_page("intro", LAPTOP)
    header = page.evaluate(
        "() => document.querySelector('header.bd-header').getBoundingClientRect().height"
    )
    top = page.evaluate("() => document.querySelector('.bd-main').getBoundingClientRect().top")
    assert header == 0 and top < 1, f"header {header} px, content from {top} px"
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
