"""Execute chapter notebooks top to bottom in a clean kernel and store their outputs in place.

    python scripts/notebooks/execute_notebooks.py                  # every book/*.ipynb
    python scripts/notebooks/execute_notebooks.py book/01_attention.ipynb
    python scripts/notebooks/execute_notebooks.py --check book/01_attention.ipynb   # run, but do not save
    python scripts/notebooks/execute_notebooks.py --merge-streams-only              # no run: merge stored streams

Runs with the same environment as the tests (offline, no progress bars), in the notebook's folder,
and prints the wall time of each notebook. Authors run this before committing a notebook.

Consecutive stream outputs of one name (stdout or stderr) are merged into one before saving: a
training loop that prints once per epoch stores one output, which the website shows as one box
instead of one box per print. nbval compares streams merged anyway, so this changes no comparison.
"""

from __future__ import annotations

import argparse
import os
import sys
import time
from pathlib import Path

import nbformat
from format_notebooks import format_notebook  # scripts/ is on sys.path when run as a script
from nbclient import NotebookClient

ROOT = Path(__file__).resolve().parents[2]
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


def merge_streams(notebook: nbformat.NotebookNode) -> int:
    """Merge consecutive stream outputs of the same name in every code cell; return how many merged."""
    merged = 0
    for cell in notebook.cells:
        outputs = []
        for output in cell.get("outputs", []):
            previous = outputs[-1] if outputs else None
            if (
                output.output_type == "stream"
                and previous is not None
                and previous.output_type == "stream"
                and previous.name == output.name
            ):
                previous.text = "".join(previous.text) + "".join(output.text)
                merged += 1
            else:
                outputs.append(output)
        if cell.cell_type == "code":
            cell.outputs = outputs
    return merged


def merge_stored_streams(path: Path) -> int:
    """Merge the stored stream outputs of one notebook in place (no run); return how many merged."""
    notebook = nbformat.read(path, as_version=4)
    merged = merge_streams(notebook)
    if merged:
        nbformat.write(notebook, path)
    return merged


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
        merge_streams(notebook)
        format_notebook(
            notebook, path.parent
        )  # no timestamps, nbval tags, folds that work anywhere
        nbformat.write(notebook, path)
    return seconds


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument(
        "notebooks", nargs="*", type=Path, help="notebooks to run (default: book/*.ipynb)"
    )
    parser.add_argument("--check", action="store_true", help="run without saving the outputs")
    parser.add_argument(
        "--merge-streams-only",
        action="store_true",
        help="run nothing: merge consecutive stream outputs of the stored notebooks in place",
    )
    parser.add_argument("--timeout", type=int, default=900, help="seconds allowed per cell")
    args = parser.parse_args(argv)
    os.environ.update(QUIET_ENV)
    notebooks = args.notebooks or [
        *sorted((ROOT / "book").glob("*.ipynb")),  # the lessons
        *sorted((ROOT / "book" / "labs").glob("*.ipynb")),  # their labs
    ]
    if args.merge_streams_only:
        for path in notebooks:
            print(
                f"{path.name:40s} {merge_stored_streams(path):4d} stream outputs merged", flush=True
            )
        return 0
    total = 0.0
    for path in notebooks:
        seconds = execute(path.resolve(), save=not args.check, timeout=args.timeout)
        total += seconds
        print(f"{path.name:40s} {seconds:7.1f} s", flush=True)
    print(f"{'total':40s} {total:7.1f} s")
    return 0


if __name__ == "__main__":
    sys.exit(main())
