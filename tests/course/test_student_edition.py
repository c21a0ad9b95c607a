import importlib.util
import os
import re

import nbformat
import pytest
from helpers import CHAPTERS, NOTEBOOKS, ROOT
from nbformat.v4 import new_code_cell, new_markdown_cell, new_notebook, new_output

spec = importlib.util.spec_from_file_location(
    "student_edition", ROOT / "scripts" / "course" / "student_edition.py"
)
student_edition = importlib.util.module_from_spec(spec)
spec.loader.exec_module(student_edition)

SOLUTION_CODE = """def my_softmax(scores):
    # BEGIN SOLUTION
    exp = scores.exp()
    return exp / exp.sum(-1, keepdim=True)
    # END SOLUTION


checks.softmax(my_softmax)"""


def make_chapter() -> nbformat.NotebookNode:
    notebook = new_notebook()
    notebook.cells = [
        new_markdown_cell("# A chapter"),
        new_code_cell(
            "x = 1", outputs=[new_output("execute_result", {"text/plain": "1"}, execution_count=1)]
        ),
        new_markdown_cell("### Exercise 1.1 (coding)", metadata={"tags": ["exercise"]}),
        new_code_cell(
            SOLUTION_CODE,
            metadata={"tags": ["solution", "hide-input"]},
            outputs=[new_output("stream", name="stdout", text="✔ passes")],
            execution_count=2,
        ),
        new_markdown_cell("```{dropdown} Solution\nBecause.\n```", metadata={"tags": ["solution"]}),
        new_code_cell("print('the answer')", metadata={"tags": ["solution"]}),
    ]
    return notebook


def test_student_notebook_stubs_code_and_removes_written_solutions():
    student = student_edition.student_notebook(make_chapter())
    sources = [cell.source for cell in student.cells]
    assert len(student.cells) == 4
    assert "Because." not in "".join(sources) and "the answer" not in "".join(sources)
    stub = student.cells[3]
    assert (
        stub.source
        == "def my_softmax(scores):\n    ...  # your code here\n\n\nchecks.softmax(my_softmax)"
    )
    assert stub.outputs == [] and stub.execution_count is None
    assert "hide-input" not in stub.metadata["tags"] and "solution" not in stub.metadata["tags"]
    assert student.cells[1].outputs, "outputs of ordinary cells are kept by default"
    cleared = student_edition.student_notebook(make_chapter(), clear_outputs=True)
    assert cleared.cells[1].outputs == []


@pytest.mark.parametrize(
    "source, message",
    [
        ("# BEGIN SOLUTION\nx = 1", "never closed"),
        ("x = 1\n# END SOLUTION", "without a '# BEGIN SOLUTION'"),
        ("# BEGIN SOLUTION\n# BEGIN SOLUTION\n# END SOLUTION", "inside another"),
    ],
)
def test_unbalanced_markers_are_reported(source, message):
    with pytest.raises(ValueError, match=message):
        student_edition.stub_solution(source)


def test_write_student_edition_copies_the_package_and_the_images(tmp_path):
    book = tmp_path / "book"
    (book / "attention_to_bert").mkdir(parents=True)
    (book / "attention_to_bert" / "__init__.py").write_text("")
    (book / "images" / "diagrams").mkdir(parents=True)
    (book / "images" / "diagrams" / "attention.svg").write_text("<svg/>")
    nbformat.write(make_chapter(), book / "01_x.ipynb")
    written = student_edition.write_student_edition(book, tmp_path / "student")
    assert [path.name for path in written] == ["01_x.ipynb"]
    assert (tmp_path / "student" / "attention_to_bert" / "__init__.py").exists()
    assert (tmp_path / "student" / "images" / "diagrams" / "attention.svg").read_text() == "<svg/>"
    text = (tmp_path / "student" / "01_x.ipynb").read_text()
    assert "exp.sum" not in text and "...  # your code here" in text


def test_the_real_book_has_no_solution_left_in_the_student_edition(tmp_path):
    written = student_edition.write_student_edition(output=tmp_path / "student")
    assert len(written) == len(NOTEBOOKS)  # the lessons, and their labs as they are
    for path in written:
        for cell in nbformat.read(path, as_version=4).cells:
            assert "solution" not in cell.metadata.get("tags", []), (
                f"{path.name} still holds a solution cell"
            )
            assert "# BEGIN SOLUTION" not in cell.source


def test_exercise_cells_never_stop_run_all_at_a_stub(tmp_path):
    """One convention: a coding exercise calls its checker as `_ = checks.x(...)`, never `assert`,
    so a stub's failed check prints its verdict and "Run all" goes on."""
    written = student_edition.write_student_edition(output=tmp_path / "student")
    stubs = [
        cell
        for path in written
        for cell in nbformat.read(path, as_version=4).cells
        if "exercise-stub" in cell.metadata.get("tags", [])
    ]
    assert stubs
    for cell in stubs:
        calls = [line for line in cell.source.splitlines() if "checks." in line]
        assert calls and all(line.startswith("_ = checks.") for line in calls), cell.source
    images = sorted(p.name for p in (ROOT / "book" / "images").rglob("*") if p.is_file())
    copied = sorted(p.name for p in (tmp_path / "student" / "images").rglob("*") if p.is_file())
    assert copied == images


def test_the_hand_out_installs_itself(tmp_path):
    from packaging.requirements import Requirement

    output = tmp_path / "student"
    student_edition.main(["--output", str(output), "--zip"])
    lines = (output / "requirements.txt").read_text().splitlines()
    pins = [Requirement(line) for line in lines if line and not line.startswith("#")]
    names = {pin.name for pin in pins}
    assert names == student_edition.STUDENT_PACKAGES
    assert all(str(pin.specifier).startswith("==") for pin in pins)
    assert "download.pytorch.org/whl/cpu" in lines[0]
    readme = (output / "README.md").read_text()
    for step in ("pip install -r requirements.txt", "jupyter lab", "Check an exercise"):
        assert step in readme
    assert (tmp_path / "student.zip").stat().st_size > 100_000


def test_student_requirements_refuse_a_missing_pin(tmp_path):
    partial = tmp_path / "requirements.txt"
    partial.write_text("numpy==2.4.6\n")
    with pytest.raises(ValueError, match="no pin for"):
        student_edition.student_requirements(partial)


def test_no_chapter_points_at_a_script_or_results_file_the_hand_out_lacks(tmp_path):
    written = student_edition.write_student_edition(output=tmp_path / "student")
    bare = re.compile(r"(?<![\w/])(scripts|results)/\w+\.(py|json)")
    for path in written:
        for cell in nbformat.read(path, as_version=4).cells:
            if "REPOSITORY = " in cell.source:
                continue
            for found in bare.finditer(cell.source):
                before = cell.source[max(0, found.start() - 60) : found.start()]
                after = cell.source[found.end() : found.end() + 80]
                pointed = "/blob/main/" in before or "data/" in before
                linked = after.startswith(("](", "`](")) or "clone of" in after
                assert pointed or linked, f"{path.name}: {before + found[0] + after!r}"
    for name in {found for path in written for found in _results_named(path)}:
        assert (tmp_path / "student" / "attention_to_bert" / "results" / name).is_file()


def _results_named(path):
    text = path.read_text()
    return set(re.findall(r"attention_to_bert/results/(ch\d\d_\w+\.json)", text))


def test_script_mentions_become_links_and_notes():
    url = "https://github.com/o/r"
    markdown = "made by `scripts/a.py`; run `python scripts/b.py --x` or scripts/c.py"
    linked = student_edition.link_scripts(markdown, url, markdown=True)
    assert "[`scripts/a.py`](https://github.com/o/r/blob/main/scripts/a.py)" in linked
    assert "`python scripts/b.py --x` (in a clone of the [book's repository](" in linked
    assert "[scripts/c.py](https://github.com/o/r/blob/main/scripts/c.py)" in linked
    code = "# as scripts/a.py computed (results/ch02_han.json)"
    assert student_edition.link_scripts(code, url, markdown=False) == (
        "# as https://github.com/o/r/blob/main/scripts/a.py computed "
        "(attention_to_bert/results/ch02_han.json)"
    )


# Running a chapter takes a minute or more: the cheapest run by default, every one with
# STUDENT_EDITION=all (each in its own process, so they may run side by side with pytest -n).
CHEAP = {"01_attention.ipynb"}


def _editions():
    every = os.environ.get("STUDENT_EDITION") == "all"
    for path in CHAPTERS:
        skip = path.name not in CHEAP and not every
        marks = [pytest.mark.skip(reason="STUDENT_EDITION=all runs it")] if skip else []
        yield pytest.param(path.name, marks=marks)


@pytest.mark.slow
@pytest.mark.parametrize("name", list(_editions()))
def test_a_chapter_of_the_student_edition_runs_top_to_bottom_with_its_stubs(tmp_path, name):
    """Run in the hand-out folder, with no PYTHONPATH: the kernel finds the copied package there."""
    from nbclient import NotebookClient

    output = tmp_path / "student"
    student_edition.write_student_edition(output=output, clear_outputs=True)
    notebook = nbformat.read(output / name, as_version=4)
    assert any("exercise-stub" in c.metadata.get("tags", []) for c in notebook.cells)
    environment = {key: value for key, value in os.environ.items() if key != "PYTHONPATH"}
    environment["OMP_NUM_THREADS"] = "2"
    check = "import attention_to_bert, pathlib\nprint(pathlib.Path(attention_to_bert.__file__))"
    notebook.cells.append(nbformat.v4.new_code_cell(check))
    client = NotebookClient(
        notebook, timeout=900, kernel_name="python3", resources={"metadata": {"path": output}}
    )
    client.execute(env=environment)  # raises CellExecutionError at the first failing cell
    where = notebook.cells[-1].outputs[0]["text"].strip()
    assert where == str(output.resolve() / "attention_to_bert" / "__init__.py")
