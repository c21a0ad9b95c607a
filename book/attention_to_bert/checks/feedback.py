"""The nbgrader feedback pages without the hidden tests: ``HideHiddenTests`` removes their source
from each graded test cell and shortens that cell's traceback to its last line, so a student reads
the verdict and the checker's message, never the hidden tests' code or secret seed.

Used by the ``nbgrader_config.py`` that ``scripts/make_course.py`` writes (needs nbconvert, which
nbgrader and JupyterLab install)."""

from __future__ import annotations

from typing import Any

from nbconvert.preprocessors import Preprocessor

BEGIN, END = "### BEGIN HIDDEN TESTS", "### END HIDDEN TESTS"


def without_hidden_tests(source: str) -> str:
    """``source`` without the lines from ``### BEGIN HIDDEN TESTS`` to ``### END HIDDEN TESTS``."""
    kept, inside = [], False
    for line in source.splitlines():
        if BEGIN in line:
            inside = True
        elif END in line:
            inside = False
        elif not inside:
            kept.append(line)
    return "\n".join(kept)


class HideHiddenTests(Preprocessor):
    """Leave out the hidden tests of graded cells: their source, and the lines of code a traceback
    quotes (the error's name and message stay)."""

    def preprocess_cell(self, cell: Any, resources: dict, index: int) -> tuple[Any, dict]:
        if cell.cell_type != "code" or not cell.metadata.get("nbgrader", {}).get("grade"):
            return cell, resources
        cell.source = without_hidden_tests(cell.source)
        for output in cell.get("outputs", []):
            if output.get("output_type") == "error":
                output["traceback"] = [f"{output.get('ename')}: {output.get('evalue')}"]
        return cell, resources
