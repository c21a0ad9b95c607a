"""The nbgrader course made from the book: the real cycle, offline, in a temporary course folder.

A right submission gets full marks, a typical wrong one loses that exercise's points with the
checker's message in its feedback, and one that calls the book's own implementation gets no points
for that exercise; grades.csv holds those numbers.
"""

import copy
import csv
import html
import re
import shutil
import subprocess
import sys
from pathlib import Path

import nbformat
import pytest
from helpers import ROOT

sys.path.insert(0, str(ROOT / "scripts"))
import make_course  # noqa: E402

CHAPTER = "05"  # a quick chapter with a causal-mask exercise
WRONG = """def my_causal_mask(size):
    return torch.ones(size, size, dtype=torch.bool).tril(-1)  # the past, not the future

_ = checks.causal_mask(my_causal_mask)"""
CHEAT = """from attention_to_bert.multihead import causal_mask as book_mask

def my_causal_mask(size):
    return book_mask(size)

_ = checks.causal_mask(my_causal_mask)"""


def nbgrader(course: Path, *args: str) -> None:
    command = [sys.executable, "-m", "nbgrader", *args]
    result = subprocess.run(command, cwd=course, capture_output=True, text=True, timeout=900)
    assert result.returncode == 0, result.stderr[-3000:]


def submit(course: Path, student: str, replace: dict[str, str]) -> None:
    """A student's notebook: the released one with every answer filled in (by ``replace`` first)."""
    (path,) = (course / "source" / f"ch{CHAPTER}").glob("*.ipynb")
    source = nbformat.read(path, as_version=4)
    answers = {
        cell.metadata["nbgrader"]["grade_id"]: cell.source
        for cell in source.cells
        if cell.metadata.get("nbgrader", {}).get("solution")
    }
    released = course / "release" / f"ch{CHAPTER}"
    notebook = copy.deepcopy(nbformat.read(released / path.name, as_version=4))
    for cell in notebook.cells:
        grade_id = cell.metadata.get("nbgrader", {}).get("grade_id")
        if grade_id in answers:
            cell.source = replace.get(grade_id, answers[grade_id])
    folder = course / "submitted" / student / f"ch{CHAPTER}"
    shutil.copytree(released, folder)
    nbformat.write(notebook, folder / path.name)


def feedback_text(course: Path, student: str) -> str:
    (page,) = (course / "feedback" / student / f"ch{CHAPTER}").glob("*.html")
    return html.unescape(re.sub(r"<[^>]+>", "", page.read_text()))


@pytest.mark.slow
def test_the_graded_cycle_gives_full_partial_and_no_marks(tmp_path):
    pytest.importorskip("nbgrader")
    course = tmp_path / "course"
    graded = make_course.write_course(course, [CHAPTER])
    (mask_exercise,) = [e for e in graded if e.checker == "causal_mask"]
    solution_id = f"ch{CHAPTER}_{mask_exercise.number.replace('.', '_')}_solution"
    nbgrader(course, "generate_assignment", f"ch{CHAPTER}", "--force")
    released = next((course / "release" / f"ch{CHAPTER}").glob("*.ipynb")).read_text()
    assert "BEGIN SOLUTION" not in released and "HIDDEN TESTS" not in released
    assert "torch.ones(size, size, dtype=torch.bool).triu(1)" not in released

    submit(course, "right", {})
    submit(course, "wrong", {solution_id: WRONG})
    submit(course, "cheat", {solution_id: CHEAT})
    nbgrader(course, "autograde", f"ch{CHAPTER}")
    nbgrader(course, "generate_feedback", f"ch{CHAPTER}")
    nbgrader(course, "export")

    with open(course / "grades.csv") as file:
        grades = {row["student_id"]: row for row in csv.DictReader(file)}
    full = make_course.POINTS * len(graded)
    assert {row["max_score"] for row in grades.values()} == {f"{full:.1f}"}
    assert float(grades["right"]["score"]) == full
    assert float(grades["wrong"]["score"]) == full - make_course.POINTS
    assert float(grades["cheat"]["score"]) == full - make_course.POINTS
    assert "the past is masked instead of the future" in feedback_text(course, "wrong")
    assert "graded work may not call the book's own" in feedback_text(course, "cheat")


def test_every_chapter_becomes_an_assignment_with_graded_tests():
    for chapter, path in make_course.chapter_notebooks().items():
        notebook, graded = make_course.course_notebook(nbformat.read(path, as_version=4), chapter)
        tests = [c for c in notebook.cells if c.metadata.get("nbgrader", {}).get("grade")]
        assert len(tests) == len(graded) >= 1, path.name
        for cell, exercise in zip(tests, graded, strict=True):
            assert f'package_answer_blocked("{exercise.checker}"' in cell.source
            assert "### BEGIN HIDDEN TESTS" in cell.source
            assert cell.metadata["nbgrader"]["points"] == make_course.POINTS
        text = [c for c in notebook.cells if c.cell_type == "markdown"]
        assert all(c.metadata["nbgrader"]["locked"] for c in text if "nbgrader" in c.metadata)
        assert not any(c.outputs for c in notebook.cells if c.cell_type == "code")


def test_unknown_chapter_and_notebook_without_exercises_are_clear_errors():
    with pytest.raises(ValueError, match="chapters: unknown chapter 42"):
        make_course.chapter_notebooks(["42"])
    bare = nbformat.v4.new_notebook(cells=[nbformat.v4.new_markdown_cell("# Nothing")])
    with pytest.raises(ValueError, match="no coding exercise"):
        make_course.course_notebook(bare, "09")
    with pytest.raises(SystemExit):
        make_course.main(["--chapters", "42", "--list"])


def test_a_missing_nbgrader_says_what_to_install(monkeypatch, tmp_path, capsys):
    real = make_course.importlib.util.find_spec
    monkeypatch.setattr(
        make_course.importlib.util,
        "find_spec",
        lambda name: None if name == "nbgrader" else real(name),
    )
    with pytest.raises(SystemExit):
        make_course.main(["--output", str(tmp_path / "course")])
    assert "pip install nbgrader==0.9.6" in capsys.readouterr().err
    assert not (tmp_path / "course").exists()
