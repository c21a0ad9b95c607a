"""Execute chapter notebooks top to bottom in a clean kernel and store their outputs in place.

    python scripts/execute_notebooks.py                  # every book/*.ipynb
    python scripts/execute_notebooks.py book/01_attention.ipynb
    python scripts/execute_notebooks.py --check book/01_attention.ipynb   # run, but do not save

Runs with the same environment as the tests (offline, no progress bars), in the notebook's folder,
and prints the wall time of each notebook. Authors run this before committing a notebook.
"""

from __future__ import annotations

import argparse
import os
import sys
import time
from pathlib import Path

import nbformat
from nbclient import NotebookClient

ROOT = Path(__file__).resolve().parents[1]
QUIET_ENV = {
    "HF_HUB_OFFLINE": "1",
    "TRANSFORMERS_OFFLINE": "1",
    "HF_HUB_DISABLE_PROGRESS_BARS": "1",
    "HF_HUB_DISABLE_TELEMETRY": "1",
    "TQDM_DISABLE": "1",
    "PYDEVD_DISABLE_FILE_VALIDATION": "1",
    # idle OpenMP threads sleep instead of spinning: on a busy machine spinning makes tiny models crawl
    "OMP_WAIT_POLICY": "PASSIVE",
}


def execute(path: Path, save: bool = True, timeout: int = 900) -> float:
    """Run one notebook in a fresh kernel; store outputs unless ``save`` is False; return seconds."""
    notebook = nbformat.read(path, as_version=4)
    client = NotebookClient(
        notebook,
        timeout=timeout,
        kernel_name="python3",
        resources={"metadata": {"path": str(path.parent)}},
    )
    start = time.perf_counter()
    client.execute()
    seconds = time.perf_counter() - start
    if save:
        nbformat.write(notebook, path)
    return seconds


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("notebooks", nargs="*", type=Path, help="notebooks to run (default: book/*.ipynb)")
    parser.add_argument("--check", action="store_true", help="run without saving the outputs")
    parser.add_argument("--timeout", type=int, default=900, help="seconds allowed per cell")
    args = parser.parse_args(argv)
    os.environ.update(QUIET_ENV)
    notebooks = args.notebooks or sorted((ROOT / "book").glob("*.ipynb"))
    total = 0.0
    for path in notebooks:
        seconds = execute(path.resolve(), save=not args.check, timeout=args.timeout)
        total += seconds
        print(f"{path.name:40s} {seconds:7.1f} s", flush=True)
    print(f"{'total':40s} {total:7.1f} s")
    return 0


if __name__ == "__main__":
    sys.exit(main())
