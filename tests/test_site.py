"""The website builds from the stored notebook outputs with warnings treated as errors."""

import shutil
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]


@pytest.fixture(scope="session")
def built_site(tmp_path_factory) -> Path:
    """Build the site once per test session (with -W) into a temporary folder; return its html folder."""
    output = tmp_path_factory.mktemp("site")
    jupyter_book = shutil.which("jupyter-book", path=str(Path(sys.executable).parent)) or "jupyter-book"
    result = subprocess.run(
        [jupyter_book, "build", str(ROOT), "-W", "-n", "--keep-going", "--path-output", str(output)],
        capture_output=True,
        text=True,
        timeout=900,
    )
    assert result.returncode == 0, f"jupyter-book build -W failed:\n{result.stdout[-6000:]}\n{result.stderr[-4000:]}"
    return output / "_build" / "html"


def test_site_builds_cleanly_with_every_chapter(built_site):
    assert (built_site / "index.html").exists()
    for notebook in sorted((ROOT / "book").glob("*.ipynb")):
        page = built_site / "book" / f"{notebook.stem}.html"
        assert page.exists(), f"{page.name} missing from the built site"
    assert (built_site / "book" / "teaching.html").exists()
