"""Each notebook gives the same checked outputs when run twice (scripts/notebooks/check_determinism.py).

Running the whole book twice takes about twice the notebooks' time, so the full check runs where
BOOK_CHECK_DETERMINISM=1 (CI sets it) and is skipped otherwise; the comparison itself is tested here
always. The second run is the chapter opened alone against the installed wheel (tests/alone.py,
shared with tests/chapters/test_alone.py), so one run proves both and CI executes no chapter more often;
`python scripts/notebooks/check_determinism.py` runs a chapter twice in place.

The two runs may use torch's kernels of other CPU families (``ATEN_CPU_CAPABILITY``, read when torch
starts): ``BOOK_DETERMINISM_CPU`` for the run in place, ``BOOK_ALONE_CPU`` for the run alone. CI sets
``default`` and ``avx2``, so each chapter also runs as on a CPU without AVX and on an AVX2 one, and
each run's checked outputs must equal the stored ones (as under nbval) as well as each other: the
chapter reproduces on other CPUs at no extra run.
"""

import os
import sys
from types import SimpleNamespace

import nbformat
import pytest
from alone import ALONE_CPU, Alone
from helpers import NOTEBOOKS, ROOT
from nbformat.v4 import new_code_cell, new_notebook, new_output

sys.path.insert(0, str(ROOT / "scripts" / "notebooks"))
import check_determinism  # noqa: E402

pytestmark = pytest.mark.slow  # skipped by `pytest -m "not slow"`

PATTERNS = check_determinism.sanitize_patterns()
FIRST_CPU = os.environ.get("BOOK_DETERMINISM_CPU") or None  # None: this machine's kernels


def stream(text: str):
    return new_output("stream", name="stdout", text=text)


def run(*cells_outputs):
    notebook = new_notebook()
    notebook.cells = [new_code_cell(source, outputs=outputs) for source, outputs in cells_outputs]
    return notebook


def compare(first, second, images=False):
    a = check_determinism.checked_outputs(first, PATTERNS, images)
    b = check_determinism.checked_outputs(second, PATTERNS, images)
    return check_determinism.differences(a, b, first)


def test_a_changed_printed_number_is_a_difference():
    first = run(("print(loss)", [stream("loss 0.123\n")]))
    second = run(("print(loss)", [stream("loss 0.124\n")]))
    found = compare(first, second)
    assert len(found) == 1 and "cell 0 (print(loss))" in found[0] and "0.124" in found[0]


def test_ignored_and_skipped_cells_are_not_compared():
    for marker in ("# NBVAL_IGNORE_OUTPUT", "# NBVAL_SKIP"):
        first = run((f"{marker}\ntrain()", [stream("took 1.0 s\n")]))
        second = run((f"{marker}\ntrain()", [stream("took 2.5 s\n")]))
        assert compare(first, second) == []
    tagged = new_code_cell(
        "train()", outputs=[stream("a\n")], metadata={"tags": ["nbval-ignore-output"]}
    )
    other = new_code_cell(
        "train()", outputs=[stream("b\n")], metadata={"tags": ["nbval-ignore-output"]}
    )
    first, second = new_notebook(cells=[tagged]), new_notebook(cells=[other])
    assert compare(first, second) == []


def test_sanitized_parts_and_split_streams_are_not_differences():
    first = run(("f", [stream("<Thing at 0x7f00aa>\n"), stream("done\n")]))
    second = run(("f", [stream("<Thing at 0x7f99bb>\ndone\n")]))
    assert compare(first, second) == []


def test_figures_are_compared_only_on_request():
    first = run(
        (
            "plot()",
            [new_output("display_data", data={"image/png": "AAAA", "text/plain": "<Figure>"})],
        )
    )
    second = run(
        (
            "plot()",
            [new_output("display_data", data={"image/png": "BBBB", "text/plain": "<Figure>"})],
        )
    )
    assert compare(first, second) == []
    assert len(compare(first, second, images=True)) == 1


def test_each_run_uses_the_cpu_kernels_asked_for(tmp_path, monkeypatch):
    notebook = run(("import torch\nprint(torch.backends.cpu.get_cpu_capability())", []))
    path = tmp_path / "capability.ipynb"
    nbformat.write(notebook, path)
    ran = check_determinism.execute(path, cpu="default")
    assert ran.cells[0].outputs[0]["text"].strip() == "DEFAULT"
    monkeypatch.setenv(ALONE_CPU, "avx2")
    kernel = Alone.environment(SimpleNamespace(target=tmp_path, ipython_dir=tmp_path))
    assert kernel["ATEN_CPU_CAPABILITY"] == "avx2"


def test_the_notebooks_are_found():
    assert NOTEBOOKS, "no notebooks under book/"
    for path in NOTEBOOKS:
        assert nbformat.read(path, as_version=4).cells


@pytest.mark.skipif(
    os.environ.get("BOOK_CHECK_DETERMINISM") != "1",
    reason="runs every notebook twice (minutes): set BOOK_CHECK_DETERMINISM=1 (CI does) "
    "or run `python scripts/notebooks/check_determinism.py`",
)
@pytest.mark.parametrize("notebook", NOTEBOOKS, ids=[p.stem for p in NOTEBOOKS])
def test_a_notebook_gives_the_same_checked_outputs_twice(notebook, alone):
    first = check_determinism.execute(notebook, cpu=FIRST_CPU)
    second, _ = alone.run(notebook)  # the same chapter, alone, from the installed wheel
    runs = {
        "stored": nbformat.read(notebook, as_version=4),
        f"in place (ATEN_CPU_CAPABILITY={FIRST_CPU or 'unset'})": first,
        f"alone (ATEN_CPU_CAPABILITY={os.environ.get(ALONE_CPU) or 'unset'})": second,
    }
    outputs = {name: check_determinism.checked_outputs(ran, PATTERNS) for name, ran in runs.items()}
    names = list(runs)
    found = []
    for a, b in ((names[1], names[2]), (names[0], names[1]), (names[0], names[2])):
        for text in check_determinism.differences(outputs[a], outputs[b], first):
            found.append(f"{a} -> {b}: {text}")
    assert not found, f"{notebook.name} differs between its runs:\n" + "\n".join(found)
