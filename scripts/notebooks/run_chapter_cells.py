"""Run a chapter's code cells in order in one IPython shell, as Jupyter would, without Jupyter.

For machines that have a Python with torch but no Jupyter kernel (a rented GPU machine standing in
for Colab): each code cell runs in turn; the first error stops the run (``--keep-going`` records
every failing cell and goes on, so a later fragile check shows too). Prints one line
``SUMMARY {json}`` (cells run, errors, seconds, CUDA memory used) and exits 1 on any error.

    MPLBACKEND=Agg python scripts/notebooks/run_chapter_cells.py book/06_transformer.ipynb [--keep-going]
"""

from __future__ import annotations

import argparse
import json
import os
import sys
import time
from pathlib import Path


def run(path: Path, keep_going: bool = False) -> dict:
    """Run ``path``'s code cells from its own folder; return the summary."""
    from IPython.core.interactiveshell import InteractiveShell

    notebook = json.loads(path.read_text())
    here = Path.cwd()
    os.chdir(path.resolve().parent)
    shell = InteractiveShell.instance()
    start, ran, errors = time.perf_counter(), 0, []
    try:
        for index, cell in enumerate(notebook["cells"]):
            if cell["cell_type"] != "code":
                continue
            result = shell.run_cell("".join(cell["source"]), store_history=True)
            ran += 1
            if not result.success:
                failure = result.error_in_exec or result.error_before_exec
                errors.append(f"cell {index}: {type(failure).__name__}: {str(failure)[:400]}")
                if not keep_going:
                    break
    finally:
        os.chdir(here)
    import torch

    return {
        "chapter": path.name,
        "code_cells_run": ran,
        "code_cells": sum(c["cell_type"] == "code" for c in notebook["cells"]),
        "errors": errors,
        "seconds": round(time.perf_counter() - start, 1),
        "cuda_max_memory_mb": round(torch.cuda.max_memory_allocated() / 2**20, 1)
        if torch.cuda.is_available()
        else None,
    }


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("notebook", type=Path)
    parser.add_argument("--keep-going", action="store_true", help="run on after a failing cell")
    args = parser.parse_args(argv)
    os.environ.setdefault("MPLBACKEND", "Agg")
    summary = run(args.notebook, args.keep_going)
    print("SUMMARY " + json.dumps(summary), flush=True)
    return 1 if summary["errors"] else 0


if __name__ == "__main__":
    sys.exit(main())
