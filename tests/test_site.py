"""The website builds from the stored notebook outputs with warnings treated as errors."""

import pytest
from helpers import CHAPTERS

pytestmark = pytest.mark.slow  # skipped by `pytest -m "not slow"`

# `built_site` (the site built once per session with -W) lives in tests/conftest.py.


def test_site_builds_cleanly_with_every_chapter(built_site):
    assert (built_site / "index.html").exists()
    for notebook in CHAPTERS:
        page = built_site / "book" / f"{notebook.stem}.html"
        assert page.exists(), f"{page.name} missing from the built site"
    assert (built_site / "book" / "teaching.html").exists()
