"""Check the README's reader path end to end: a chapter run in JupyterLab from the reader's install.

Given a checkout whose virtual environment holds only the README's reader install
(``requirements-reader.txt``), this starts that environment's JupyterLab on the loopback, opens the
chapter in Debian's Chromium, runs every cell from JupyterLab's Run menu, saves, and reads the saved
notebook back: every code cell must have run, with no error output. It needs Playwright, which the
full install (``requirements.txt``) has, so run it with the full install's Python:

    git clone <repo> /tmp/fresh && cd /tmp/fresh && python3.11 -m venv .venv
    .venv/bin/pip install -r requirements-reader.txt --extra-index-url https://download.pytorch.org/whl/cpu
    python scripts/repository/reader_install_check.py /tmp/fresh [--chapter 01_attention.ipynb]

The checkout's notebook is overwritten with its run (use a throwaway clone). Prints one line per
finding and exits 1 if the chapter did not run cleanly.
"""

from __future__ import annotations

import argparse
import os
import secrets
import socket
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from urllib.request import urlopen

import nbformat
from playwright.sync_api import sync_playwright

CHROMIUM = "/usr/bin/chromium"


def free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return probe.getsockname()[1]


def start_lab(python: Path, root: Path, home: Path, port: int, token: str) -> subprocess.Popen:
    env = os.environ | {
        "JUPYTER_CONFIG_DIR": str(home / "config"),
        "JUPYTER_RUNTIME_DIR": str(home / "runtime"),
        "JUPYTERLAB_SETTINGS_DIR": str(home / "settings"),
        "JUPYTERLAB_WORKSPACES_DIR": str(home / "workspaces"),
        "PATH": f"{python.parent}{os.pathsep}{os.environ['PATH']}",
    }
    env.pop("PYTHONPATH", None)  # the reader's environment alone
    command = [
        str(python),
        "-m",
        "jupyterlab",
        "--no-browser",
        "--ServerApp.ip=127.0.0.1",
        "--ServerApp.allow_root=True",
        f"--ServerApp.port={port}",
        f"--IdentityProvider.token={token}",
        f"--ServerApp.root_dir={root}",
        "--LabApp.news_url=",
        "--LabApp.check_for_updates_class=jupyterlab.NeverCheckForUpdate",
    ]
    return subprocess.Popen(command, env=env, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)


def run_in_lab(url: str, cells: int, timeout_s: float) -> None:
    with sync_playwright() as playwright:
        browser = playwright.chromium.launch(
            executable_path=CHROMIUM, args=["--no-sandbox"], headless=True
        )
        page = browser.new_page(viewport={"width": 1280, "height": 900})
        page.goto(url, timeout=120_000)
        page.wait_for_function(
            "n => document.querySelectorAll('.jp-Notebook .jp-Cell').length >= n",
            arg=cells,
            timeout=120_000,
        )
        page.wait_for_selector(
            ".jp-Notebook-ExecutionIndicator[data-status='idle']", timeout=120_000
        )
        page.get_by_role("menuitem", name="Run", exact=True).click()
        page.get_by_text("Run All Cells", exact=True).click()
        time.sleep(5)
        page.wait_for_function(
            """() => document.querySelector(".jp-Notebook-ExecutionIndicator")
                ?.getAttribute("data-status") === "idle"
              && ![...document.querySelectorAll(".jp-InputPrompt")]
                   .some(prompt => prompt.textContent.includes("*"))""",
            timeout=timeout_s * 1000,
            polling=1000,
        )
        page.keyboard.press("Control+s")
        time.sleep(3)
        browser.close()


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("checkout", type=Path, help="a clone with the reader install in .venv/")
    parser.add_argument("--chapter", default="01_attention.ipynb")
    parser.add_argument("--timeout", type=float, default=900, help="seconds for Run All")
    args = parser.parse_args()
    python = args.checkout / ".venv" / "bin" / "python"
    notebook_path = args.checkout / "book" / args.chapter
    before = nbformat.read(notebook_path, as_version=4)
    for cell in before.cells:  # so that a cell that did not run shows as not run
        if cell.cell_type == "code":
            cell.outputs, cell.execution_count = [], None
    nbformat.write(before, notebook_path)
    port, token = free_port(), secrets.token_hex(16)
    started = time.monotonic()
    with tempfile.TemporaryDirectory() as home:
        server = start_lab(python, args.checkout / "book", Path(home), port, token)
        try:
            for _ in range(240):
                try:
                    with urlopen(f"http://127.0.0.1:{port}/api/status?token={token}", timeout=2):
                        break
                except OSError:
                    time.sleep(0.5)
            url = f"http://127.0.0.1:{port}/lab/tree/{args.chapter}?token={token}&reset"
            run_in_lab(url, len(before.cells), args.timeout)
        finally:
            server.terminate()
            server.wait(timeout=60)
    after = nbformat.read(notebook_path, as_version=4)
    code = [cell for cell in after.cells if cell.cell_type == "code"]
    not_run = [i for i, cell in enumerate(code) if cell.execution_count is None]
    errors = [
        f"{output.get('ename')}: {output.get('evalue')}"
        for cell in code
        for output in cell.outputs
        if output.output_type == "error"
    ]
    print(
        f"{args.chapter}: {len(code)} code cells, {len(code) - len(not_run)} ran in JupyterLab "
        f"({time.monotonic() - started:.0f} s with start-up), {len(errors)} errors"
    )
    for error in errors:
        print("  error:", error)
    if not_run:
        print("  code cells that did not run:", not_run)
    return 1 if errors or not_run else 0


if __name__ == "__main__":
    sys.exit(main())
