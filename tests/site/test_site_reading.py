"""Every page of the website reads well wherever it is opened: no accessibility violation (axe-core,
WCAG 2.1 A and AA and axe's best practices, light and dark), no page that slides sideways on a phone,
no display formula cut at 1280 px, every image with a text alternative, and light pages.

The bytes each page loads, when opened (the budgets) and once read to the end (every lazy figure
loaded), are written to tests/artifacts/page-weight.json (the closing table).
"""

from __future__ import annotations

import json

import pytest
from helpers import ROOT
from test_browser import PAGES

pytestmark = pytest.mark.slow

ARTIFACTS = ROOT / "tests" / "artifacts"
AXE_TAGS = ["wcag2a", "wcag2aa", "wcag21a", "wcag21aa", "best-practice"]
# bytes a page loads when opened (uncompressed; figures further down load as the reader scrolls)
PAGE_BUDGET = 2_500_000  # every page, bertviz views included (measured: 2.42 MB, chapter 7)
NO_VIEW_BUDGET = 2_000_000  # a page with formulas and no bertviz view (measured: at most 1.88 MB)
NO_MATH_BUDGET = 850_000  # a page without formulas loads no MathJax: far less (measured: 0.77 MB)

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
READ_TO_THE_END = """async () => {
    for (let y = 0; y < document.body.scrollHeight; y += 600) {
        window.scrollTo(0, y);
        await new Promise(resolve => setTimeout(resolve, 40));
    }
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
        page.evaluate(READ_TO_THE_END)  # the figures further down load as the reader scrolls
        page.wait_for_timeout(500)
        read = page.evaluate(BYTES_LOADED)
    finally:
        context.close()
    assert cut == [], f"{path}: display formulas cut at 1280 px: {cut}"
    bare = [src for src, alt in images if not alt.strip() or alt.strip().endswith(".png")]
    assert bare == [], f"{path}: images without a text alternative: {bare[:5]}"
    ARTIFACTS.mkdir(exist_ok=True)
    table_path = ARTIFACTS / "page-weight.json"
    table = json.loads(table_path.read_text()) if table_path.exists() else {}
    table[path] = {"opened": loaded, "read_to_the_end": read}  # the second: for the record
    table_path.write_text(json.dumps(table, indent=1, sort_keys=True))
    budget = PAGE_BUDGET if has_view else NO_VIEW_BUDGET if has_math else NO_MATH_BUDGET
    assert loaded <= budget, f"{path} loads {loaded:,} bytes (budget {budget:,})"


# Points of the right-hand contents column, over the rows of each bertviz view, where the topmost
# element belongs to the view's output (it would hide the contents' entries there).
VIEW_OVER_CONTENTS = """async () => {
    const side = document.querySelector('.bd-sidebar-secondary');
    const shown = !!side && getComputedStyle(side).display !== 'none'
        && side.getBoundingClientRect().width > 100;
    const covered = [];
    for (const svg of document.querySelectorAll('div[id^="bertviz-"] #vis svg')) {
        svg.scrollIntoView({block: 'center'});
        await new Promise(resolve => setTimeout(resolve, 200));
        const view = svg.getBoundingClientRect(), column = side.getBoundingClientRect();
        const output = svg.closest('.cell_output') || svg;
        const top = Math.max(view.top, column.top, 0), bottom = Math.min(view.bottom, column.bottom, innerHeight);
        let points = 0;
        for (let y = top + 2; y < bottom - 2; y += 20) {
            for (let x = column.left + 2; x < column.right - 2; x += 20) {
                const hit = document.elementFromPoint(x, y);
                points += 1;
                if (hit && output.contains(hit)) { covered.push([Math.round(x), Math.round(y)]); }
            }
        }
        if (points === 0) { covered.push('the view and the contents column share no rows'); }
    }
    return {shown, covered: covered.slice(0, 5)};
}"""


@pytest.mark.parametrize("path", [p for p in PAGES if p.startswith("book/0")])
def test_no_bertviz_view_covers_the_contents_column_at_1280_px(browser, site_server, path):
    context, page = _page(browser, site_server, path, 1280)
    try:
        if not page.evaluate("() => !!document.querySelector('div[id^=\"bertviz-\"] #vis svg')"):
            pytest.skip(f"{path} holds no bertviz view")
        result = page.evaluate(VIEW_OVER_CONTENTS)
    finally:
        context.close()
    assert result["shown"], f"{path}: the right-hand contents column is not shown at 1280 px"
    assert result["covered"] == [], (
        f"{path}: a bertviz view covers the contents column at 1280 px: {result['covered']}"
    )


def test_the_icon_fonts_hold_every_icon_the_pages_show(built_site):
    """The site loads subsets of Font Awesome (book/_ext/offline_site.py): every ``fa-*`` icon its
    pages name, and every icon its style sheets draw (admonitions, ``--pst-icon-*``), has its glyph."""
    import re

    from fontTools.ttLib import TTFont

    css = (built_site / "_static" / "styles" / "pydata-sphinx-theme.css").read_text(
        encoding="utf-8"
    )
    sources = re.findall(r"src:url\(\.\./([^)]+)\) format\(\"woff\"\)", css)
    assert len(sources) == 3 and all(s.endswith("-subset.woff") for s in sources), sources
    glyphs = set()
    for source in sources:
        glyphs |= set(TTFont(built_site / "_static" / source).getBestCmap())
    rules = dict(
        (name, value)
        for selectors, value in re.findall(
            r'((?:\.fa-[a-z0-9-]+:before,?)+)\{content:"([^"]*)"\}', css
        )
        for name in re.findall(r"fa-[a-z0-9-]+", selectors)
    )
    MODIFIER = re.compile(r"fa-(?:solid|brands|regular|lg|fw|xs|sm|xl|\dx|spin|pulse)$")
    shown = set()
    for page in PAGES:
        html = (built_site / page).read_text(encoding="utf-8")
        for classes in re.findall(
            r'class="([^"]*\bfa(?:s|b|r|-solid|-brands|-regular)\b[^"]*)"', html
        ):
            shown |= {c for c in classes.split() if c.startswith("fa-") and not MODIFIER.match(c)}
    assert {"fa-github", "fa-magnifying-glass", "fa-bars"} <= shown, sorted(shown)
    unstyled = sorted(name for name in shown if name not in rules)
    assert unstyled == [], f"icons named in the pages without a CSS rule: {unstyled}"
    drawn = {name: rules[name] for name in shown} | dict(
        re.findall(r'--pst-icon-([a-z-]+):"([^"]*)"', css)
    )
    codepoint = lambda value: ord(value) if len(value) == 1 else int(value.strip("\\ "), 16)  # noqa: E731
    missing = sorted(name for name, value in drawn.items() if codepoint(value) not in glyphs)
    assert missing == [], f"icons without a glyph in the subset fonts: {missing}"
