"""The nbgrader course made from the book: the real cycle, offline, in a temporary course folder.

For each chapter with a coding exercise: a right submission gets full marks, one with a typical wrong
answer to every exercise (tests/course_answers.py) gets none, and one that answers with the package's
own solution (grading.SOLVED_BY) gets none for those exercises; the feedback pages never show the
hidden tests. COURSE_CHAPTERS=all runs every chapter, COURSE_CHAPTERS=02,08 those listed; by
default the cheapest ones run.
"""

import copy
import csv
import html
import os
import re
import shutil
import subprocess
import sys
from pathlib import Path

import nbformat
import pytest
from helpers import ROOT

sys.path.insert(0, str(ROOT / "scripts" / "course"))
import course_answers  # noqa: E402
import make_course  # noqa: E402
from grading import SOLVED_BY  # noqa: E402

# Every chapter with a coding exercise; the cheapest run in the default suite, the rest with
# COURSE_CHAPTERS=all (each run executes the chapter four times under nbgrader: minutes of CPU).
CHEAP = {"01", "05"}
CHAPTERS = sorted(make_course.chapter_notebooks())


def nbgrader(course: Path, *args: str) -> str:
    command = [sys.executable, "-m", "nbgrader", *args]
    result = subprocess.run(command, cwd=course, capture_output=True, text=True, timeout=1800)
    assert result.returncode == 0, result.stderr[-3000:]
    return result.stdout + result.stderr


def book_solutions(course: Path, chapter: str) -> dict[str, str]:
    """The book's solution cells of a chapter by grade id."""
    (path,) = (course / "source" / f"ch{chapter}").glob("*.ipynb")
    source = nbformat.read(path, as_version=4)
    return {
        cell.metadata["nbgrader"]["grade_id"]: cell.source
        for cell in source.cells
        if cell.metadata.get("nbgrader", {}).get("solution")
    }


def submit(course: Path, chapter: str, student: str, answers: dict[str, str]) -> None:
    """A student's notebook: the released one with every answer filled in (``answers`` by grade id,
    else the book's solution)."""
    (path,) = (course / "source" / f"ch{chapter}").glob("*.ipynb")
    solutions = book_solutions(course, chapter)
    released = course / "release" / f"ch{chapter}"
    notebook = copy.deepcopy(nbformat.read(released / path.name, as_version=4))
    for cell in notebook.cells:
        grade_id = cell.metadata.get("nbgrader", {}).get("grade_id")
        if grade_id in solutions:
            cell.source = answers.get(grade_id, solutions[grade_id])
    folder = course / "submitted" / student / f"ch{chapter}"
    shutil.copytree(released, folder)
    nbformat.write(notebook, folder / path.name)


def feedback_text(course: Path, chapter: str, student: str) -> str:
    (page,) = (course / "feedback" / student / f"ch{chapter}").glob("*.html")
    return html.unescape(re.sub(r"<[^>]+>", "", page.read_text()))


def _chapters():
    chosen = os.environ.get("COURSE_CHAPTERS", "")
    listed = {f"{int(c):02d}" for c in chosen.split(",") if c.strip().isdigit()}
    for chapter in CHAPTERS:
        skip = chapter not in (listed or CHEAP) and chosen != "all"
        reason = "COURSE_CHAPTERS=all (or a list such as 02,08) runs it"
        marks = [pytest.mark.skip(reason=reason)] if skip else []
        yield pytest.param(chapter, marks=marks)


def _shows_hidden_seed(text: str, chapter: str) -> bool:
    """Whether the hidden tests' seed (4242 + chapter) appears as a number of its own: not inside a
    checksum or another number (a bare substring test failed whenever a hex checksum held it)."""
    return re.search(rf"(?<![\w.]){4242 + int(chapter)}(?![\w.])", text) is not None


@pytest.mark.slow
@pytest.mark.parametrize("chapter", list(_chapters()))
def test_the_graded_cycle_gives_full_marks_to_right_and_none_to_wrong_or_package(tmp_path, chapter):
    pytest.importorskip("nbgrader")
    course = tmp_path / "course"
    graded = make_course.write_course(course, [chapter], seed=4242)
    nbgrader(course, "generate_assignment", f"ch{chapter}", "--force")
    released = next((course / "release" / f"ch{chapter}").glob("*.ipynb")).read_text()
    assert "BEGIN SOLUTION" not in released and "HIDDEN TESTS" not in released
    assert "hidden_test" not in released and not _shows_hidden_seed(released, chapter)
    assert (course / "release" / f"ch{chapter}" / "attention_to_bert" / "checks").is_dir()

    def ids(exercise):
        return f"ch{chapter}_{exercise.number.replace('.', '_')}_solution"

    cells = {}  # solution cell -> its exercises (a cell may call several checkers: all graded)
    for exercise in graded:
        cells.setdefault(ids(exercise), []).append(exercise)
    wrong_answers = [
        course_answers.answer(course_answers.WRONG, e.checker, e.answer) for e in graded
    ]
    assert all(wrong_answers), "tests/course_answers.py: add a wrong answer for each exercise"
    wrong = {
        cell: "\n\n\n".join(
            course_answers.answer(course_answers.WRONG, e.checker, e.answer) for e in exercises
        )
        for cell, exercises in cells.items()
    }
    solutions = book_solutions(course, chapter)
    package = {}
    for cell, exercises in cells.items():  # the package's answer where it has one, else the book's
        answers = [
            course_answers.answer(course_answers.PACKAGE, e.checker, e.answer)
            for e in exercises
            if SOLVED_BY[e.checker]
        ]
        if answers:
            book = [solutions[cell]] if len(answers) < len(exercises) else []
            package[cell] = "\n\n\n".join(book + answers)
    submit(course, chapter, "right", {})
    submit(course, chapter, "wrong", wrong)
    submit(course, chapter, "package", package)
    log = nbgrader(course, "autograde", f"ch{chapter}")
    assert "Attribute 'checksum'" not in log and "has changed" not in log, log[-2000:]
    nbgrader(course, "generate_feedback", f"ch{chapter}")
    nbgrader(course, "export")

    with open(course / "grades.csv") as file:
        grades = {row["student_id"]: float(row["score"]) for row in csv.DictReader(file)}
    full = make_course.POINTS * len(graded)
    no_package_answer = make_course.POINTS * sum(not SOLVED_BY[e.checker] for e in graded)
    assert grades == {"right": full, "wrong": 0.0, "package": no_package_answer}
    if package:
        text = feedback_text(course, chapter, "package")
        assert "graded work may not call the book's own" in text
    for student in ("right", "wrong", "package"):
        text = feedback_text(course, chapter, student)
        assert "HIDDEN TESTS" not in text and "hidden_test" not in text and "_grading" in text
        assert not _shows_hidden_seed(text, chapter)


def test_every_chapter_becomes_an_assignment_with_graded_tests():
    for chapter, path in make_course.chapter_notebooks().items():
        notebook, graded = make_course.course_notebook(nbformat.read(path, as_version=4), chapter)
        tests = [c for c in notebook.cells if c.metadata.get("nbgrader", {}).get("grade")]
        assert len(tests) == len(graded) >= 1, path.name
        for cell, exercise in zip(tests, graded, strict=True):
            assert f"_grading.graded_test({exercise.checker!r}" in cell.source
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
