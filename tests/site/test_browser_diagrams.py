"""The architecture diagrams on the website, as a reader sees them in headless Debian Chromium (Playwright).

On every chapter page of the built site: each diagram the chapter's notebook shows is on the page, with its alt
text, and loaded (complete, naturalWidth > 0). Checked three ways:
* "online": served from 127.0.0.1, the browser's requests left alone;
* "offline": served from 127.0.0.1, every request that leaves the local server aborted;
* "file": the copied site opened from disk (file:// URLs), every outside request aborted.
And once in the dark theme: a diagram keeps its light background there (readable on the dark page).

The browser is the session's (the `browser` fixture of tests/conftest.py): Debian's Chromium, never
`playwright install`; where it is missing the checks are skipped with advice, or fail when
BOOK_REQUIRE_BROWSER=1 (as in CI).
"""

from __future__ import annotations

import io
from pathlib import Path

import nbformat
import pytest
from helpers import CHAPTERS, ROOT, diagram_images, is_local

pytestmark = pytest.mark.slow  # skipped by `pytest -m "not slow"`

DIAGRAMS = ROOT / "book" / "images" / "diagrams"

DIAGRAM_IMAGES = """async (names) => {
    const images = [...document.images].filter(img => {
        const path = new URL(img.currentSrc || img.src, document.baseURI).pathname;
        return names.includes(path.split("/").pop());
    });
    images.forEach(img => { img.loading = "eager"; });
    await Promise.all(images.map(img => img.complete ? null : new Promise(resolve => {
        img.addEventListener("load", resolve); img.addEventListener("error", resolve); })));
    return images.map(img => ({
        name: new URL(img.currentSrc || img.src, document.baseURI).pathname.split("/").pop(),
        complete: img.complete, width: img.naturalWidth, alt: img.alt || "",
        shown: img.getBoundingClientRect().width,
    }));
}"""


def expected_diagrams(notebook: Path) -> list[str]:
    """The SVG file names a chapter's notebook shows, in order."""
    names = []
    for cell in nbformat.read(notebook, as_version=4).cells:
        if cell.cell_type == "markdown":
            names += [f"{name}.svg" for name, _alt in diagram_images(cell.source)]
    return names


def chapter_pages() -> dict[str, list[str]]:
    return {f"book/{notebook.stem}.html": expected_diagrams(notebook) for notebook in CHAPTERS}


def browse(browser, base: str, mode: str, dark_page: str | None = None) -> dict:
    """Open each chapter page; return, per page, the diagram images found and the requests aborted."""
    pages = chapter_pages()
    names = sorted(p.name for p in DIAGRAMS.glob("*.svg"))
    report: dict = {"pages": {}, "aborted": [], "dark": None}
    context = browser.new_context(viewport={"width": 1280, "height": 900})
    context.set_default_timeout(60_000)
    context.set_default_navigation_timeout(120_000)
    if mode != "online":

        def refuse(route) -> None:
            report["aborted"].append(route.request.url)
            route.abort("internetdisconnected")

        context.route(lambda url: not is_local(url), refuse)
    for page_path in pages:
        page = context.new_page()
        try:
            page.goto(base + page_path, wait_until="load")
            report["pages"][page_path] = page.evaluate(DIAGRAM_IMAGES, names)
        finally:
            page.close()
    context.close()
    if dark_page:
        context = browser.new_context(viewport={"width": 1280, "height": 900}, color_scheme="dark")
        if mode != "online":
            context.route(
                lambda url: not is_local(url),
                lambda route: route.abort("internetdisconnected"),
            )
        page = context.new_page()
        page.goto(base + dark_page, wait_until="load")
        page.evaluate(DIAGRAM_IMAGES, names)
        theme = page.evaluate("() => document.documentElement.dataset.theme")
        image = page.locator(f"img[src$='/{pages[dark_page][0]}']").first
        image.scroll_into_view_if_needed()
        shot = image.screenshot()
        body = page.evaluate("() => getComputedStyle(document.body).backgroundColor")
        report["dark"] = {"theme": theme, "body": body, "png": shot}
        context.close()
    return report


def _mean_brightness(png: bytes) -> float:
    import matplotlib.image

    pixels = matplotlib.image.imread(io.BytesIO(png), format="png")
    return float(pixels[..., :3].mean())


# ---------------------------------------------------------------------------------------------------
# The tests


def diagram_problems(report: dict) -> list[str]:
    problems = []
    for page_path, expected in chapter_pages().items():
        found = report["pages"].get(page_path, [])
        if not found:
            problems.append(f"{page_path}: no diagram on the page")
        if sorted(img["name"] for img in found) != sorted(expected):
            problems.append(
                f"{page_path}: diagrams {[i['name'] for i in found]}, the notebook shows {expected}"
            )
        for img in found:
            if not img["complete"] or img["width"] == 0:
                problems.append(f"{page_path}: {img['name']} did not load (a broken image)")
            if not img["alt"].strip():
                problems.append(f"{page_path}: {img['name']} has no alt text")
            if img["shown"] < 300:
                problems.append(
                    f"{page_path}: {img['name']} is drawn only {img['shown']:.0f} px wide"
                )
    return problems


def test_every_chapter_has_a_diagram_to_check():
    pages = chapter_pages()
    assert len(pages) == len(CHAPTERS) and all(pages.values()), pages


@pytest.mark.parametrize("mode", ["online", "offline"])
def test_every_diagram_loads_on_every_chapter_page(browser, site_server, mode):
    report = browse(
        browser,
        site_server.url,
        mode,
        dark_page="book/04_self_attention.html" if mode == "offline" else None,
    )
    problems = diagram_problems(report)
    problems += [
        f"not found on the local server: {path}"
        for path in site_server.missing
        if "diagram" in path
    ]
    assert not problems, f"({mode})\n" + "\n".join(problems)
    assert sum(len(found) for found in report["pages"].values()) >= 12
    if report["dark"]:
        dark = report["dark"]
        assert dark["theme"] == "dark", (
            f"the page did not switch to the dark theme: {dark['theme']}"
        )
        assert _mean_brightness(dark["png"]) > 0.75, (
            "the diagram is not on a light background in the dark theme"
        )


def test_every_diagram_loads_in_the_copied_site_opened_as_files(browser, built_site):
    report = browse(browser, built_site.resolve().as_uri() + "/", "file")
    problems = diagram_problems(report)
    assert not problems, "(file)\n" + "\n".join(problems)
