"""One output per stream per cell (one box on the website, not one per print).

scripts/notebooks/execute_notebooks.py merges consecutive stream outputs of one name when it stores a notebook;
`python scripts/notebooks/execute_notebooks.py --merge-streams-only` does it for stored notebooks without a run.
That the stored notebooks have no split stream is checked with their other stored-output rules by
scripts/notebooks/check_notebook_outputs.py (tests/chapters/test_notebook_outputs.py, and pre-commit).
"""

import sys

import nbformat
from helpers import ROOT
from nbformat.v4 import new_code_cell, new_notebook, new_output

sys.path.insert(0, str(ROOT / "scripts" / "notebooks"))
import execute_notebooks  # noqa: E402
from check_notebook_outputs import split_streams  # noqa: E402


def test_merging_joins_consecutive_streams_of_one_name_only():
    figure = new_output("display_data", data={"text/plain": "<Figure>"})
    notebook = new_notebook()
    notebook.cells = [
        new_code_cell(
            "train()",
            outputs=[
                new_output("stream", name="stdout", text="epoch 1\n"),
                new_output("stream", name="stdout", text="epoch 2\n"),
                new_output("stream", name="stderr", text="warning\n"),
                new_output("stream", name="stdout", text="epoch 3\n"),
                new_output("stream", name="stdout", text="done\n"),
                figure,
                new_output("stream", name="stdout", text="after the figure\n"),
            ],
        )
    ]
    assert len(split_streams(notebook)) == 2
    assert execute_notebooks.merge_streams(notebook) == 2
    outputs = notebook.cells[0].outputs
    assert [(o.output_type, o.get("name"), o.get("text")) for o in outputs] == [
        ("stream", "stdout", "epoch 1\nepoch 2\n"),
        ("stream", "stderr", "warning\n"),
        ("stream", "stdout", "epoch 3\ndone\n"),
        ("display_data", None, None),
        ("stream", "stdout", "after the figure\n"),
    ]
    assert not split_streams(notebook)
    assert execute_notebooks.merge_streams(notebook) == 0


def test_merging_stored_notebooks_runs_nothing_and_rewrites_only_when_needed(tmp_path):
    notebook = new_notebook()
    notebook.cells = [
        new_code_cell(
            "raise SystemExit('never run')",
            outputs=[
                new_output("stream", name="stdout", text="a\n"),
                new_output("stream", name="stdout", text="b\n"),
            ],
        )
    ]
    path = tmp_path / "stored.ipynb"
    nbformat.write(notebook, path)
    assert execute_notebooks.main(["--merge-streams-only", str(path)]) == 0
    stored = nbformat.read(path, as_version=4)
    assert [o.text for o in stored.cells[0].outputs] == ["a\nb\n"]
    before = path.stat().st_mtime_ns
    assert execute_notebooks.merge_stored_streams(path) == 0
    assert path.stat().st_mtime_ns == before
