"""``scripts/notebooks/run_chapter_cells.py``: it runs a notebook's code cells in order in one namespace, stops
at the first error (or records every one with ``--keep-going``), and says so in its exit status."""

import json
import subprocess
import sys

from helpers import ROOT

SCRIPT = ROOT / "scripts" / "notebooks" / "run_chapter_cells.py"


def notebook(tmp_path, *sources):
    cells = [{"cell_type": "markdown", "metadata": {}, "source": ["# a chapter"]}]
    cells += [
        {"cell_type": "code", "metadata": {}, "outputs": [], "source": [s], "execution_count": None}
        for s in sources
    ]
    path = tmp_path / "chapter.ipynb"
    path.write_text(
        json.dumps({"cells": cells, "metadata": {}, "nbformat": 4, "nbformat_minor": 5})
    )
    return path


def summary(path, *flags):
    done = subprocess.run(
        [sys.executable, str(SCRIPT), str(path), *flags], capture_output=True, text=True
    )
    line = next(row for row in done.stdout.splitlines() if row.startswith("SUMMARY "))
    return done.returncode, json.loads(line.removeprefix("SUMMARY "))


def test_cells_share_one_namespace_and_a_clean_run_exits_0(tmp_path):
    code, result = summary(notebook(tmp_path, "x = 2", "assert x * 3 == 6"))
    assert code == 0 and result["errors"] == [] and result["code_cells_run"] == 2


def test_the_first_error_stops_the_run_unless_keep_going(tmp_path):
    path = notebook(tmp_path, "assert 1 == 2, 'first'", "y = 1", "assert y == 2, 'second'")
    code, result = summary(path)
    assert code == 1 and result["code_cells_run"] == 1
    assert result["errors"] == ["cell 1: AssertionError: first"]
    code, result = summary(path, "--keep-going")
    assert code == 1 and result["code_cells_run"] == 3
    assert [e.split(":")[0] for e in result["errors"]] == ["cell 1", "cell 3"]
