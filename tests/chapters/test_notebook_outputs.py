"""scripts/notebooks/check_notebook_outputs.py (run by pre-commit) passes on the book and catches bad outputs."""

import importlib.util
import sys

import nbformat
from helpers import ROOT
from nbformat.v4 import new_code_cell, new_notebook, new_output

spec = importlib.util.spec_from_file_location(
    "check_notebook_outputs", ROOT / "scripts" / "notebooks" / "check_notebook_outputs.py"
)
checker = importlib.util.module_from_spec(spec)
sys.modules["check_notebook_outputs"] = checker
spec.loader.exec_module(checker)


def test_the_book_has_clean_stored_outputs(capsys):
    assert checker.main([]) == 0, capsys.readouterr().out


def test_each_kind_of_bad_output_is_named(tmp_path):
    notebook = new_notebook()
    notebook.metadata["kernelspec"] = {"name": "python3", "display_name": "Python 3"}
    notebook.metadata["language_info"] = {"name": "python"}
    outputs = [
        new_output("error", ename="ValueError", evalue="x", traceback=[]),
        new_output("stream", name="stderr", text="UserWarning: careful\n"),
        new_output("stream", name="stdout", text="saved to /home/me/book/x.png\n"),
        new_output("execute_result", {"text/plain": "<Figure size 640x480 at 0x7f3a>"}),
    ]
    notebook.cells = [
        new_code_cell("x", outputs=[o], execution_count=n)
        for n, o in zip([1, 2, 3, 5], outputs, strict=True)
    ]
    epochs = [new_output("stream", name="stdout", text=f"epoch {n}\n") for n in (1, 2)]
    notebook.cells.append(new_code_cell("train()", outputs=epochs, execution_count=6))
    path = tmp_path / "01_x.ipynb"
    nbformat.write(notebook, path)
    found = "\n".join(checker.problems(path))
    expectations = (
        "an error",
        "stderr",
        "absolute path",
        "object repr",
        "top to bottom",
        "in a row",
    )
    for expected in expectations:
        assert expected in found, found
