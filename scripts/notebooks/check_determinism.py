"""Run each chapter notebook twice in fresh kernels and check that the checked outputs are identical.

    python scripts/notebooks/check_determinism.py                         # every book/*.ipynb
    python scripts/notebooks/check_determinism.py book/01_attention.ipynb
    python scripts/notebooks/check_determinism.py --images                # also compare the PNG figures

"Checked outputs" are the ones nbval compares (tests/sanitize.cfg applied; cells marked
`# NBVAL_IGNORE_OUTPUT` or `# NBVAL_SKIP` left out; PNG/JPEG figures only with --images). nbval proves
that a fresh run reproduces the stored outputs; this proves that two fresh runs on the same machine
agree with each other, so nothing in a chapter depends on luck (an unseeded generator, thread timing,
a dictionary order). Runs offline, like the tests. CI runs it through tests/chapters/test_determinism.py
(BOOK_CHECK_DETERMINISM=1); it takes about twice the time of executing the notebooks.
"""

from __future__ import annotations

import argparse
import copy
import difflib
import json
import os
import re
import sys
import time
from collections import defaultdict
from pathlib import Path

import nbformat
from nbclient import NotebookClient
from nbval.plugin import (
    coalesce_streams,
    find_comment_markers,
    find_metadata_tags,
    get_sanitize_patterns,
)

ROOT = Path(__file__).resolve().parents[2]
SANITIZE_FILE = ROOT / "tests" / "sanitize.cfg"
sys.path.insert(0, str(ROOT / "tests" / "network_guard"))
import book_network_guard  # noqa: E402
from execute_notebooks import QUIET_ENV  # noqa: E402

# nbval's strict mode leaves these out of the comparison (image/png and image/jpeg unless --images)
NOT_COMPARED = {
    "metadata",
    "traceback",
    "prompt_number",
    "output_type",
    "name",
    "execution_count",
    "application/vnd.jupyter.widget-view+json",
}
IMAGES = {"image/png", "image/jpeg"}


def sanitize_patterns(path: Path = SANITIZE_FILE) -> list[tuple[str, str]]:
    return get_sanitize_patterns(path.read_text()) if path.exists() else []


def is_checked(cell) -> bool:
    """Whether nbval compares this code cell's outputs."""
    markers = dict(find_metadata_tags(cell.metadata))
    markers.update(dict(find_comment_markers(cell.source)))
    return markers.get("check", True) and not markers.get("skip", False)


def _flatten_output(output: dict, flat: dict[str, list], skip: set, sanitize) -> None:
    """Add one output's compared values to ``flat``, keyed as nbval compares them."""
    for key, value in output.items():
        if key == "data":
            for mime, data in value.items():
                if mime not in skip:
                    flat[mime].append(sanitize("".join(data) if isinstance(data, list) else data))
        elif output.get("output_type") == "stream" and key == "text":
            flat[f"stream:{output['name']}"].append(sanitize(value))
        elif key not in skip:
            flat[key].append(sanitize(value))


def checked_outputs(
    notebook, patterns: list[tuple[str, str]], images: bool = False
) -> dict[int, dict]:
    """Cell index -> {key: [sanitized values]} for every checked code cell, flattened as nbval does."""

    def sanitize(value):
        if not isinstance(value, str):
            return value
        for regex, replace in patterns:
            value = re.sub(regex, replace, value)
        return value

    skip = NOT_COMPARED if images else NOT_COMPARED | IMAGES
    result = {}
    for index, cell in enumerate(notebook.cells):
        if cell.cell_type != "code" or not is_checked(cell):
            continue
        flat: dict[str, list] = defaultdict(list)
        for output in coalesce_streams(copy.deepcopy(cell.get("outputs", []))):
            _flatten_output(output, flat, skip, sanitize)
        result[index] = dict(flat)
    return result


def differences(first: dict[int, dict], second: dict[int, dict], notebook) -> list[str]:
    """Readable differences between two runs' checked outputs."""
    found = []
    for index in sorted(set(first) | set(second)):
        a, b = first.get(index, {}), second.get(index, {})
        if a == b:
            continue
        source = notebook.cells[index].source.strip().splitlines()
        heading = f"cell {index} ({source[0][:60] if source else 'empty'}):"
        a_text = json.dumps(a, indent=1, sort_keys=True).splitlines()
        b_text = json.dumps(b, indent=1, sort_keys=True).splitlines()
        diff = list(
            difflib.unified_diff(a_text, b_text, "first run", "second run", lineterm="", n=1)
        )
        found.append(heading + "\n" + "\n".join(line[:200] for line in diff[:40]))
    return found


def execute(path: Path, timeout: int = 900, cpu: str | None = None):
    """A fresh kernel runs the notebook top to bottom in its folder; return the executed notebook.
    ``cpu`` (``"avx2"``, ``"default"``, ...) sets the kernel's ``ATEN_CPU_CAPABILITY``: torch's
    kernels of another CPU family."""
    notebook = nbformat.read(path, as_version=4)
    where = {"metadata": {"path": str(path.parent)}}
    client = NotebookClient(notebook, timeout=timeout, kernel_name="python3", resources=where)
    if cpu:
        client.execute(env={**os.environ, "ATEN_CPU_CAPABILITY": cpu})
    else:
        client.execute()
    return notebook


def check_notebook(path: Path, images: bool = False, timeout: int = 900) -> list[str]:
    """Run the notebook twice; return the differences in its checked outputs (empty when identical)."""
    patterns = sanitize_patterns()
    first = execute(path, timeout)
    second = execute(path, timeout)
    return differences(
        checked_outputs(first, patterns, images), checked_outputs(second, patterns, images), first
    )


def offline_environment() -> None:
    """The environment of the tests: quiet, offline, and the network blocked in every kernel."""
    os.environ.update(QUIET_ENV)
    book_network_guard.activate()


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument(
        "notebooks", nargs="*", type=Path, help="notebooks to run (default: book/*.ipynb)"
    )
    parser.add_argument("--images", action="store_true", help="compare PNG/JPEG figures too")
    parser.add_argument("--timeout", type=int, default=900, help="seconds allowed per cell")
    args = parser.parse_args(argv)
    offline_environment()
    notebooks = args.notebooks or sorted((ROOT / "book").glob("*.ipynb"))
    failed = 0
    for path in notebooks:
        start = time.perf_counter()
        found = check_notebook(path.resolve(), images=args.images, timeout=args.timeout)
        verdict = "identical" if not found else f"{len(found)} cells differ"
        print(f"{path.name:40s} {time.perf_counter() - start:7.1f} s  {verdict}", flush=True)
        for text in found:
            print("  " + text.replace("\n", "\n  "))
        failed += bool(found)
    print(
        f"{len(notebooks) - failed} of {len(notebooks)} notebooks gave identical checked outputs twice"
    )
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
