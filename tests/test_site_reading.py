"""Every page of the website reads well wherever it is opened: no accessibility violation (axe-core,
WCAG 2.1 A and AA and axe's best practices, light and dark), no page that slides sideways on a phone,
no display formula cut at 1280 px, every image with a text alternative, and light pages.

The bytes each page loads are written to tests/artifacts/page-weight.json (the closing table).
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from test_browser import PAGES

pytestmark = pytest.mark.slow

ARTIFACTS = Path(__file__).resolve().parent / "artifacts"
AXE_TAGS = ["wcag2a", "wcag2aa", "wcag21a", "wcag21aa", "best-practice"]
PAGE_BUDGET = 2_500_000  # bytes a page may load, uncompressed
VIEW_BUDGET = (
    3_000_000  # a page with bertviz views (chapters 6, 7): d3, jQuery and the weights, inline
)
NO_MATH_BUDGET = 1_200_000  # a page without formulas loads no MathJax: far less

WIDE_ELEMENTS = """() => {
    const width = document.documentElement.clientWidth;
    return [...document.querySelectorAll('body *')]
        .filter(e => e.getBoundingClientRect().right > width + 1
            && getComputedStyle(e).position !== 'fixed'
            && !e.closest('[style*="overflow"], .highlight, .cell_output, .math, table, mjx-container'))
        .slice(0, 5)
        .map(e => `${e.tagName.toLowerCase()}.${e.className}`);
}"""
CUT_FORMULAS = """() => [...document.querySelectorAll('mjx-container[display="true"]')]
    .filter(formula => {
        const box = formula.closest('div.math') || formula;
        const scrolls = el => ['auto', 'scroll'].includes(getComputedStyle(el).overflowX);
        return formula.scrollWidth > box.clientWidth + 1 && !scrolls(box) && !scrolls(formula);
    })
    .map(formula => formula.textContent.slice(0, 60))"""
WAIT_FOR_MATHJAX = """async () => {
    if (window.MathJax && MathJax.startup && MathJax.startup.promise) { await MathJax.startup.promise; }
}"""
BYTES_LOADED = """() => performance.getEntriesByType('navigation')[0].decodedBodySize
    + performance.getEntriesByType('resource').reduce((sum, entry) => sum + entry.decodedBodySize, 0)"""


def _page(browser, site_server, path: str, width: int, scheme: str = "light"):
    context = browser.new_context(viewport={"width": width, "height": 900}, color_scheme=scheme)
    context.route(
        "**/*",
        lambda route: (
            route.continue_()
            if route.request.url.startswith(site_server.url)
            else route.abort("internetdisconnected")
        ),
    )
    page = context.new_page()
    page.goto(site_server.url + path, wait_until="load")
    page.wait_for_timeout(300)  # index.html forwards to the first page: let it arrive
    page.wait_for_load_state("load")
    page.evaluate(WAIT_FOR_MATHJAX)
    page.wait_for_timeout(500)  # the theme settles its colour scheme and sidebars
    return context, page


@pytest.mark.parametrize("scheme", ["light", "dark"])
@pytest.mark.parametrize("path", PAGES)
def test_no_accessibility_violation(browser, site_server, path, scheme):
    from axe_playwright_python.sync_playwright import Axe  # bundles axe-core: nothing is fetched

    context, page = _page(browser, site_server, path, 1280, scheme)
    try:
        result = Axe().run(page, options={"runOnly": {"type": "tag", "values": AXE_TAGS}})
    finally:
        context.close()
    violations = [
        f"{v['id']} ({v['impact']}): {[node['target'] for node in v['nodes'][:3]]}"
        for v in result.response["violations"]
    ]
    assert violations == [], f"{path} ({scheme}):\n" + "\n".join(violations)


@pytest.mark.parametrize("path", PAGES)
def test_a_phone_never_slides_the_page_sideways(browser, site_server, path):
    context, page = _page(browser, site_server, path, 390)
    try:
        widths = page.evaluate(
            "[document.documentElement.scrollWidth, document.documentElement.clientWidth]"
        )
        wide = page.evaluate(WIDE_ELEMENTS)
    finally:
        context.close()
    assert widths[0] <= widths[1], f"{path} is {widths[0]} px wide at 390 px: {wide}"


@pytest.mark.parametrize("path", PAGES)
def test_formulas_fit_or_scroll_in_their_box_and_images_say_what_they_show(
    browser, site_server, path
):
    context, page = _page(browser, site_server, path, 1280)
    try:
        cut = page.evaluate(CUT_FORMULAS)
        images = page.evaluate(
            "() => [...document.querySelectorAll('main img')].map(i => [i.src, i.alt])"
        )
        loaded = page.evaluate(BYTES_LOADED)
        has_math = page.evaluate("() => !!document.querySelector('.math')")
        has_view = page.evaluate("() => !!document.querySelector('div[id^=\"bertviz-\"]')")
    finally:
        context.close()
    assert cut == [], f"{path}: display formulas cut at 1280 px: {cut}"
    bare = [src for src, alt in images if not alt.strip() or alt.strip().endswith(".png")]
    assert bare == [], f"{path}: images without a text alternative: {bare[:5]}"
    ARTIFACTS.mkdir(exist_ok=True)
    table_path = ARTIFACTS / "page-weight.json"
    table = json.loads(table_path.read_text()) if table_path.exists() else {}
    table[path] = loaded
    table_path.write_text(json.dumps(table, indent=1, sort_keys=True))
    budget = VIEW_BUDGET if has_view else PAGE_BUDGET if has_math else NO_MATH_BUDGET
    assert loaded <= budget, f"{path} loads {loaded:,} bytes (budget {budget:,})"
