"""Shared test set-up: a headless matplotlib, the network blocked, and the website built once."""

import functools
import http.server
import os
import shutil
import subprocess
import sys
import threading
from collections.abc import Iterator
from pathlib import Path

import matplotlib
import pytest

matplotlib.use("Agg")

from helpers import ROOT, WRITTEN_BY_COMMANDS

# The course machinery (grading.py, hidden_tests.py) lives beside scripts/course/make_course.py, which
# copies it into the course it writes; the checkers' and course tests import it from there.
sys.path.insert(0, str(ROOT / "scripts" / "course"))

CHROMIUM = Path(os.environ.get("BOOK_CHROMIUM", "/usr/bin/chromium"))
CHROMIUM_FLAGS = [
    "--headless",
    "--no-sandbox",
    "--disable-gpu",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
    "--no-first-run",
]
INSTALL_ADVICE = (
    "the browser checks of the website need Debian's Chromium at {path}: install it with "
    "`sudo apt-get install chromium` (Debian/Ubuntu) and `pip install -r requirements.txt` for Playwright "
    "(never `playwright install`), or point BOOK_CHROMIUM at a Chromium binary"
)

# The network guard is armed by the root conftest.py, for the tests and the notebooks alike.


@pytest.fixture(autouse=True)
def _restore_environment() -> Iterator[None]:
    """Undo any change a test (or a script it runs in-process) makes to os.environ: the notebooks
    checked later by nbval start kernels that inherit it (MPLBACKEND=Agg once hid their figures)."""
    saved = dict(os.environ)
    yield
    if dict(os.environ) != saved:
        os.environ.clear()
        os.environ.update(saved)


NOT_COPIED = [".git", "_build", ".venv", ".venv-*", "node_modules", "__pycache__", ".pytest_cache"]
NOT_COPIED += [".ruff_cache", "artifacts", "_work", *WRITTEN_BY_COMMANDS]


@pytest.fixture(scope="session")
def checkout_after_commands(tmp_path_factory) -> Path:
    """A copy of the checkout in which the README's commands that write into it have run: `pip
    wheel .`, `pip install .` (into a temporary target, not the venv), `make_course.py` and
    `student_edition.py` (default and `--output handout`). Offline: no build isolation, no index."""
    work = tmp_path_factory.mktemp("checkout")
    copy = work / "checkout"
    anywhere = shutil.ignore_patterns(*(n for n in NOT_COPIED if n not in WRITTEN_BY_COMMANDS))

    def ignore(folder: str, names: list[str]) -> set[str]:
        # what the commands write sits at the checkout's root (scripts/course/ is not the course)
        at_root = set(WRITTEN_BY_COMMANDS) & set(names) if Path(folder) == ROOT else set()
        return set(anywhere(folder, names)) | at_root

    shutil.copytree(ROOT, copy, ignore=ignore)
    pip = [sys.executable, "-m", "pip", "-q", "--disable-pip-version-check"]
    offline = ["--no-deps", "--no-build-isolation", "--no-index"]
    commands = [
        [*pip, "wheel", ".", *offline, "-w", str(work / "dist")],
        [*pip, "install", ".", *offline, "--target", str(work / "target")],
        [sys.executable, "scripts/course/make_course.py"],
        [sys.executable, "scripts/course/student_edition.py"],
        [sys.executable, "scripts/course/student_edition.py", "--output", "handout"],
    ]
    for command in commands:
        result = subprocess.run(command, cwd=copy, capture_output=True, text=True, timeout=600)
        assert result.returncode == 0, (
            f"{' '.join(command[-3:])} failed:\n{result.stdout[-3000:]}{result.stderr[-3000:]}"
        )
    return copy


@pytest.fixture(scope="session")
def built_site(tmp_path_factory, checkout_after_commands) -> Path:
    """Build the site once per test session (with -W) into a temporary folder; return its html folder.
    Built from a copy of the checkout in which the README's commands have written their folders
    (``checkout_after_commands``), so every site test also proves that the build ignores them."""
    output = tmp_path_factory.mktemp("site")
    jupyter_book = (
        shutil.which("jupyter-book", path=str(Path(sys.executable).parent)) or "jupyter-book"
    )
    result = subprocess.run(
        [
            jupyter_book,
            "build",
            str(checkout_after_commands),
            "-W",
            "-n",
            "--keep-going",
            "--path-output",
            str(output),
        ],
        capture_output=True,
        text=True,
        timeout=900,
    )
    assert result.returncode == 0, (
        f"jupyter-book build -W failed:\n{result.stdout[-6000:]}\n{result.stderr[-4000:]}"
    )
    return output / "_build" / "html"


class _QuietHandler(http.server.SimpleHTTPRequestHandler):
    """Serves the built site; remembers the paths it could not find instead of logging to stderr."""

    missing: list[str]

    def log_message(self, format: str, *args) -> None:  # noqa: A002 (the base class's name)
        pass

    def send_error(self, code: int, message: str | None = None, explain: str | None = None) -> None:
        if code == 404:
            self.missing.append(self.path)
        super().send_error(code, message, explain)


class SiteServer:
    """The built site served over HTTP on 127.0.0.1, as a reader's one-line local server would."""

    def __init__(self, root: Path) -> None:
        handler = type("Handler", (_QuietHandler,), {"missing": []})
        self.missing: list[str] = handler.missing
        self.root = root
        self._server = http.server.ThreadingHTTPServer(
            ("127.0.0.1", 0), functools.partial(handler, directory=str(root))
        )
        self.url = f"http://127.0.0.1:{self._server.server_address[1]}/"
        self._thread = threading.Thread(target=self._server.serve_forever, daemon=True)
        self._thread.start()

    def close(self) -> None:
        self._server.shutdown()
        self._server.server_close()


@pytest.fixture(scope="session")
def site_server(built_site) -> Iterator[SiteServer]:
    """The built site on http://127.0.0.1:<free port>/ for the whole session."""
    server = SiteServer(built_site)
    yield server
    server.close()


@pytest.fixture(scope="session")
def browser():
    """Debian's Chromium through Playwright for the session (skipped with install advice where missing)."""
    require = os.environ.get("BOOK_REQUIRE_BROWSER") == "1"
    try:
        from playwright.sync_api import sync_playwright
    except ImportError:
        if require:
            raise
        pytest.skip(INSTALL_ADVICE.format(path=CHROMIUM) + " (Playwright is not installed)")
    if not (CHROMIUM.exists() or shutil.which(str(CHROMIUM))):
        if require:
            pytest.fail(INSTALL_ADVICE.format(path=CHROMIUM))
        pytest.skip(INSTALL_ADVICE.format(path=CHROMIUM))
    playwright = sync_playwright().start()
    browser = playwright.chromium.launch(
        executable_path=str(CHROMIUM), args=CHROMIUM_FLAGS, headless=True
    )
    yield browser
    browser.close()
    playwright.stop()


@pytest.fixture(scope="session")
def alone(tmp_path_factory):
    """The package's wheel, installed into a temporary target, and the chapters run alone against it
    (tests/alone.py; each chapter runs at most once a session)."""
    from alone import Alone

    return Alone(tmp_path_factory.mktemp("alone"))
