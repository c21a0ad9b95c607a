"""The website builds from the stored notebook outputs with warnings treated as errors."""

import pytest
from helpers import NOTEBOOKS, ROOT, WRITTEN_BY_COMMANDS

pytestmark = pytest.mark.slow  # skipped by `pytest -m "not slow"`

# `built_site` (the site built once per session with -W) lives in tests/conftest.py.


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
