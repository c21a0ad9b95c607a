"""Smoke tests of the benchmark script's helpers (benchmarks/run.py): tables, timing, results.md blocks.

No timing is asserted here (timings depend on the machine); the script itself is run by hand, see the README.
"""

import os
from pathlib import Path

import pytest
import torch
from helpers import ROOT, load_script


@pytest.fixture(scope="module")
def run():
    return load_script("benchmarks/run.py", "benchmarks_run")


def test_markdown_table(run):
    table = run.markdown_table(["a", "b"], [[1, "x"], [2.5, "y"]])
    assert table.splitlines() == ["| a | b |", "|---|---|", "| 1 | x |", "| 2.5 | y |"]


def test_markdown_table_rejects_a_short_row(run):
    with pytest.raises(ValueError, match="2 cells"):
        run.markdown_table(["a", "b"], [[1]])


def test_compare_times_every_function_and_calls_it(run):
    calls = {"fast": 0, "slow": 0}

    def fast():
        calls["fast"] += 1

    def slow():
        calls["slow"] += 1
        sum(range(2000))

    times = run.compare({"fast": fast, "slow": slow}, torch.device("cpu"), rounds=2, budget=0.002)
    assert set(times) == {"fast", "slow"}
    assert all(t > 0 for t in times.values())
    assert (
        calls["fast"] >= 4 and calls["slow"] >= 4
    )  # warm-up, probe, and at least one call per round


@pytest.mark.parametrize(
    "arguments, message", [({"functions": {}}, "at least one"), ({"rounds": 0}, "rounds")]
)
def test_compare_rejects_bad_arguments(run, arguments, message):
    kwargs = {"functions": {"f": lambda: None}, "device": torch.device("cpu"), **arguments}
    with pytest.raises(ValueError, match=message):
        run.compare(**kwargs)


def test_attention_flops(run):
    # (2, 3, 4): Q K^T is 2 * 3 * 3 dot products of length 4, and so is weights @ V; 2 FLOPs a multiply-add
    assert run.attention_flops(2, 3, 4) == 2 * (2 * 3 * 3 * 4) * 2


def test_notebook_table_reports_failures_and_the_total(run):
    timings = [
        ("01_a", 10.0, ""),
        ("02_b", None, "CellExecutionError after 3 s"),
        ("03_c", 100.0, ""),
    ]
    table = run.notebook_table(timings)
    lines = table.splitlines()
    assert "| 01_a | 10.0 | yes |" in lines[2]
    assert "failed" in lines[3] and "CellExecutionError" in lines[3]
    assert "| 03_c | 100.0 | **no** |" in lines[4]
    assert lines[5].startswith("| **whole book** | **110.0** | failed")


def test_results_blocks_round_trip_and_keep_unmeasured_sections(run, tmp_path):
    path = tmp_path / "results.md"
    run.write_results(path, "header line", {"mha": "## MHA\n\n| a |\n|---|"})
    blocks = run.read_blocks(path.read_text())
    assert blocks["header"] == "header line"
    assert blocks["mha"] == "## MHA\n\n| a |\n|---|"
    assert (
        "Not measured yet" in blocks["site"]
    )  # every section has its markers, for the book's includes
    assert set(blocks) == {"header", *run.SECTIONS}


def test_committed_results_have_every_section(run):
    blocks = run.read_blocks((ROOT / "benchmarks" / "results.md").read_text())
    assert set(run.SECTIONS) <= set(blocks)


def test_bench_mha_on_a_tiny_shape(run):
    text = run.bench_mha(torch.device("cpu"), rounds=1, shapes=[(2, 4, 8, 2)], plot=False)
    row = [line for line in text.splitlines() if line.startswith("| 2×4×8")][0]
    cells = [cell.strip() for cell in row.strip("|").split("|")]
    assert cells[3].endswith("×") and float(cells[3][:-1]) > 0
    assert float(cells[5]) < 1e-5  # same weights, same outputs


def test_a_failing_notebook_is_a_row_not_a_crash(run, tmp_path):
    import nbformat

    notebook = nbformat.v4.new_notebook(
        cells=[nbformat.v4.new_code_cell("raise RuntimeError('broken chapter')")]
    )
    notebook.metadata["kernelspec"] = {
        "name": "python3",
        "display_name": "Python 3 (ipykernel)",
        "language": "python",
    }
    path = tmp_path / "99_broken.ipynb"
    nbformat.write(notebook, path)
    text = run.bench_notebooks(plot=False, notebooks=[path])
    row = [line for line in text.splitlines() if line.startswith("| 99_broken")][0]
    assert "failed" in row and "RuntimeError" in row  # the error the cell raised


def test_choose_device_defaults_to_cuda_or_cpu(run):
    expected = "cuda" if torch.cuda.is_available() else "cpu"
    assert run.choose_device().type == expected
    assert run.choose_device("cpu").type == "cpu"


@pytest.mark.skipif(torch.cuda.is_available(), reason="needs a machine without CUDA")
@pytest.mark.parametrize("name", ["cuda", "mps"])
def test_choose_device_refuses_a_missing_device(run, name):
    if (
        name == "cuda"
        and torch.cuda.is_available()
        or name == "mps"
        and torch.backends.mps.is_available()
    ):
        pytest.skip(f"this machine has {name}")
    with pytest.raises(ValueError, match=f"prefer='{name}' was asked for, but this machine has no"):
        run.choose_device(name)


def test_choose_device_names_a_bad_name(run):
    with pytest.raises(ValueError, match="prefer must be a device name"):
        run.choose_device("gpu")
    with pytest.raises(TypeError, match="prefer must be a device name"):
        run.choose_device(0)


def test_a_lesson_opened_alone_runs_on_two_cores_with_a_readers_environment(
    run, tmp_path, monkeypatch
):
    """bench_alone runs the lesson copied into an empty folder, in a kernel pinned to at most two
    cores that has none of the suite's settings (OMP_WAIT_POLICY among them); a row per lesson."""
    import json

    import nbformat

    monkeypatch.setenv("OMP_WAIT_POLICY", "PASSIVE")
    seen = tmp_path / "seen.json"
    source = (
        "import json, os, pathlib\n"
        "cores = len(os.sched_getaffinity(0)) if hasattr(os, 'sched_getaffinity') else None\n"
        f"pathlib.Path({str(seen)!r}).write_text(json.dumps({{'policy': "
        "os.environ.get('OMP_WAIT_POLICY'), 'cores': cores, 'folder': os.getcwd()}))"
    )
    notebook = nbformat.v4.new_notebook(cells=[nbformat.v4.new_code_cell(source)])
    notebook.metadata["kernelspec"] = {
        "name": "python3",
        "display_name": "Python 3",
        "language": "python",
    }
    path = tmp_path / "98_probe.ipynb"
    nbformat.write(notebook, path)
    cores_before = os.sched_getaffinity(0) if hasattr(os, "sched_getaffinity") else None
    text = run.bench_alone(notebooks=[path])
    row = [line for line in text.splitlines() if line.startswith("| 98_probe")][0]
    assert float(row.split("|")[2]) > 0, row
    kernel = json.loads(seen.read_text())
    assert kernel["policy"] is None, "the kernel inherited the suite's OMP_WAIT_POLICY"
    assert kernel["cores"] is None or kernel["cores"] <= 2, kernel
    assert Path(kernel["folder"]) != path.parent, "the lesson ran beside its checkout, not alone"
    assert os.environ["OMP_WAIT_POLICY"] == "PASSIVE"  # the benchmark's own environment is back
    if cores_before is not None:
        assert os.sched_getaffinity(0) == cores_before
