"""The website builds from the stored notebook outputs with warnings treated as errors."""

import re

import pytest
from helpers import CHAPTERS, NOTEBOOKS, ROOT, WRITTEN_BY_COMMANDS, load_script

pytestmark = pytest.mark.slow  # skipped by `pytest -m "not slow"`

# `built_site` (the site built once per session with -W) lives in tests/conftest.py.

_repository = load_script("scripts/repository/set_repository.py")
published_site, configured_url = _repository.published_site, _repository.configured_url


def test_site_builds_cleanly_with_every_chapter(built_site):
    assert (built_site / "index.html").exists()
    for notebook in NOTEBOOKS:  # every lesson and lab
        page = built_site / notebook.relative_to(ROOT).with_suffix(".html")
        assert page.exists(), f"{page.name} missing from the built site"
    assert (built_site / "book" / "teaching.html").exists()


def test_the_site_ignores_what_the_readmes_commands_write(checkout_after_commands, built_site):
    """`pip wheel .`, `pip install .`, make_course.py and student_edition.py wrote their folders into
    the checkout the site was built from; -W passed, and none of them became a page."""
    for folder in WRITTEN_BY_COMMANDS:
        assert (checkout_after_commands / folder).is_dir(), f"{folder}/ was not written"
    assert (checkout_after_commands / ".build" / "build" / "lib" / "attention_to_bert").is_dir()
    pages = {path.relative_to(built_site).parts[0] for path in built_site.rglob("*.html")}
    assert pages.isdisjoint(WRITTEN_BY_COMMANDS), pages & set(WRITTEN_BY_COMMANDS)


def test_the_root_page_names_the_favicon_the_site_ships(built_site):
    """index.html (a redirect to the intro) links the favicon: no 404 for /favicon.ico."""
    html = (built_site / "index.html").read_text(encoding="utf-8")
    link = re.search(r'<link rel="icon" href="(?P<href>[^"]+)"', html)
    assert link, "index.html has no favicon link"
    assert (built_site / link["href"]).is_file(), link["href"]


def test_the_chapter_map_numbers_each_chapter_once(built_site):
    html = (built_site / "book" / "intro.html").read_text(encoding="utf-8")
    cells = re.findall(r"<td><p>(.*?)</p></td>", html, re.S)
    titles = [re.sub(r"<[^>]+>", "", cell).strip() for cell in cells]
    chapters = [t for t in titles if re.match(r"(\d+\.\s*)?Chapter \d", t)]
    assert len(chapters) == len(CHAPTERS), titles[:12]
    assert [t for t in chapters if re.match(r"\d+\.", t)] == [], chapters


def test_links_to_the_published_site_become_links_inside_the_site(built_site):
    """The notebooks link to the book's pages by their published address (scripts/notebooks/format_notebooks.py,
    so that a chapter opened alone reaches them); the built site links to its own pages instead."""
    site = published_site(configured_url())
    stored = [path.name for path in CHAPTERS if site + "book/notation.html" in path.read_text()]
    assert {"01_attention.ipynb", "05_multi_head_attention.ipynb"} <= set(stored), stored
    for page in built_site.rglob("*.html"):
        assert site not in page.read_text(encoding="utf-8"), f"{page.name} links to {site}"
    html = (built_site / "book" / "05_multi_head_attention.html").read_text(encoding="utf-8")
    targets = re.findall(r'<a class="reference internal" href="(notation\.html#[^"]+)"', html)
    assert targets, "chapter 5 does not link to the notation page's mask conventions"
    notation = (built_site / "book" / "notation.html").read_text(encoding="utf-8")
    for target in targets:
        anchor = target.split("#", 1)[1]
        assert f'id="{anchor}"' in notation, f"notation.html has no #{anchor}"
        section = notation.split(f'id="{anchor}"', 1)[1][:600]
        assert "Mask conventions" in section, f"#{anchor} is not the mask conventions section"


def test_the_training_losses_of_chapter_8_are_shown_not_folded(built_site):
    # the shipped run's two-panel curves live in Lab 8.2 (the lesson, section 8.4, draws its MLM loss)
    html = (built_site / "book" / "labs" / "08_pretraining_lab.html").read_text(encoding="utf-8")
    image = html.index("training losses (means over 50 steps)")
    cell = html.rindex('<div class="cell', 0, image)
    classes = html[cell : html.index(">", cell)]
    assert "tag_hide-cell" not in classes and "tag_hide-output" not in classes, classes
