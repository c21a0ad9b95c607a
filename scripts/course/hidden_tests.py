"""nbgrader's hidden tests, kept hidden and quiet.

- ``HideHiddenTests`` (feedback): removes the hidden tests' source from each graded test cell and
  shortens that cell's traceback to its last line, so a student reads the verdict and the checker's
  message, never the hidden tests' code or secret seed.
- ``RestoreHiddenTests`` (autograde): puts the hidden tests back into an untampered test cell before
  nbgrader compares checksums, so grading logs no "Attribute 'checksum' ... has changed" warning for
  every test cell (nbgrader saves the checksum with the hidden tests, releases the cell without
  them); a cell the student did change is still reported and overwritten.

Used by the ``nbgrader_config.py`` that ``scripts/course/make_course.py`` writes, which copies this
file beside it (needs nbconvert, which nbgrader and JupyterLab install)."""

from __future__ import annotations

from typing import Any

from nbconvert.preprocessors import Preprocessor
from nbgrader.api import MissingEntry
from nbgrader.preprocessors import OverwriteCells
from traitlets import Bool

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

    enabled = Bool(True).tag(config=True)  # nbconvert's preprocessors are off unless enabled

    def preprocess_cell(self, cell: Any, resources: dict, index: int) -> tuple[Any, dict]:
        if cell.cell_type != "code" or not cell.metadata.get("nbgrader", {}).get("grade"):
            return cell, resources
        cell.source = without_hidden_tests(cell.source)
        for output in cell.get("outputs", []):
            if output.get("output_type") == "error":
                output["traceback"] = [f"{output.get('ename')}: {output.get('evalue')}"]
        return cell, resources


class RestoreHiddenTests(OverwriteCells):
    """``OverwriteCells`` that first restores the hidden tests of a test cell released untouched."""

    def preprocess_cell(self, cell: Any, resources: dict, index: int) -> tuple[Any, dict]:
        flags = cell.metadata.get("nbgrader", {})
        if cell.cell_type == "code" and flags.get("grade") and flags.get("grade_id"):
            try:
                source = self.gradebook.find_source_cell(
                    flags["grade_id"], self.notebook_id, self.assignment_id
                )
            except MissingEntry:
                source = None
            if source is not None and BEGIN in source.source:
                if without_hidden_tests(source.source).strip() == cell.source.strip():
                    cell.source = source.source
        return super().preprocess_cell(cell, resources, index)
