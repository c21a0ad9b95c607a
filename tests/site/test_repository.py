"""One setting names the book's GitHub repository: `_config.yml` and every notebook's Colab cell agree,
and scripts/repository/set_repository.py moves them all at once (as the Pages workflow does in a fork)."""

import importlib.util
import shutil
import sys

import pytest
from helpers import NOTEBOOKS, ROOT

spec = importlib.util.spec_from_file_location(
    "set_repository", ROOT / "scripts" / "repository" / "set_repository.py"
)
set_repository = importlib.util.module_from_spec(spec)
sys.modules["set_repository"] = set_repository
spec.loader.exec_module(set_repository)


def test_every_notebook_installs_from_the_configured_repository():
    url = set_repository.configured_url()
    assert url.startswith("https://github.com/")
    urls = set_repository.notebook_urls()
    assert len(urls) == len(NOTEBOOKS)  # every lesson and lab
    assert all(found == [url] for found in urls.values()), urls


@pytest.fixture
def copy_of_the_book(tmp_path):
    shutil.copy(ROOT / "_config.yml", tmp_path / "_config.yml")
    for path in NOTEBOOKS:
        target = tmp_path / path.relative_to(ROOT)
        target.parent.mkdir(parents=True, exist_ok=True)
        shutil.copy(path, target)
    return tmp_path


def test_set_repository_moves_the_config_and_every_colab_cell(copy_of_the_book):
    url = set_repository.set_repository("someone/a-fork", root=copy_of_the_book)
    assert url == "https://github.com/someone/a-fork"
    assert set_repository.configured_url(copy_of_the_book) == url
    assert all(found == [url] for found in set_repository.notebook_urls(copy_of_the_book).values())
    config = (copy_of_the_book / "_config.yml").read_text()
    assert config.count(url) == 1 and "branch: main" in config


def test_set_repository_moves_the_links_to_the_published_site(copy_of_the_book):
    old = set_repository.published_site(set_repository.configured_url(copy_of_the_book))
    stored = {
        path.name: path.read_text().count(old)
        for path in (copy_of_the_book / "book").glob("*.ipynb")
    }
    assert sum(stored.values()) >= 4, stored  # chapters 1, 5 and 6 link to the notation page
    set_repository.set_repository("someone/a-fork", root=copy_of_the_book)
    new = "https://someone.github.io/a-fork/"
    for path in (copy_of_the_book / "book").glob("*.ipynb"):
        text = path.read_text()
        assert old not in text and text.count(new) == stored[path.name], path.name


def test_the_published_site_of_a_repository():
    assert (
        set_repository.published_site("https://github.com/From-Attention-to-BERT/book")
        == "https://from-attention-to-bert.github.io/book/"
    )
    assert set_repository.published_site("https://github.com/me/me.github.io") == (
        "https://me.github.io/"
    )
    with pytest.raises(ValueError, match="github.com/OWNER/NAME"):
        set_repository.published_site("https://gitlab.com/me/book")


def test_set_repository_refuses_a_name_that_is_not_owner_slash_name(copy_of_the_book):
    with pytest.raises(ValueError, match="OWNER/NAME"):
        set_repository.set_repository("https://github.com/x/y", root=copy_of_the_book)


def test_the_pages_workflow_sets_the_repository_it_runs_in():
    workflow = (ROOT / ".github" / "workflows" / "pages.yml").read_text()
    assert "python scripts/repository/set_repository.py ${{ github.repository }}" in workflow
    assert workflow.index("set_repository.py") < workflow.index("jupyter-book build")


def test_ci_runs_on_push_and_pull_request():
    workflow = (ROOT / ".github" / "workflows" / "ci.yml").read_text()
    assert "push:" in workflow and "pull_request:" in workflow and ".ci/run" in workflow
