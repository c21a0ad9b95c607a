"""The code is clean: `ruff check` passes over the helper package, the tests, the scripts and the notebooks."""

import shutil
import subprocess
import sys
from pathlib import Path

from helpers import ROOT

RUFF = shutil.which("ruff", path=str(Path(sys.executable).parent)) or shutil.which("ruff") or "ruff"


def ruff(*args: str) -> subprocess.CompletedProcess:
    return subprocess.run([RUFF, *args], cwd=ROOT, capture_output=True, text=True, timeout=300)


def test_ruff_check_passes():
    result = ruff("check", "--no-cache", "--output-format", "concise", ".")
    assert result.returncode == 0, f"`ruff check .` found problems:\n{result.stdout}{result.stderr}"


def test_ruff_checks_the_package_the_tests_the_scripts_and_the_notebooks():
    checked = {
        Path(line).resolve()
        for line in ruff("check", "--no-cache", "--show-files", ".").stdout.split()
    }
    expected = [
        *(ROOT / "book" / "attention_to_bert").rglob("*.py"),
        *(ROOT / "book").glob("*.ipynb"),
        *(ROOT / "book" / "labs").glob("*.ipynb"),
        *(ROOT / "tests").rglob("*.py"),
        *(ROOT / "scripts").rglob("*.py"),
        *(ROOT / "experiments").glob("*.py"),
    ]
    assert expected
    missed = [str(path.relative_to(ROOT)) for path in expected if path.resolve() not in checked]
    assert not missed, f"ruff does not check {missed}"


def test_ruff_format_check_passes():
    """`ruff format` has been applied everywhere: package, tests, scripts (100 columns), notebooks (76)."""
    result = ruff("format", "--check", "--no-cache", ".")
    assert result.returncode == 0, f"run `ruff format .`:\n{result.stdout}{result.stderr}"


def test_a_too_complex_function_is_refused(tmp_path):
    """The McCabe limit of pyproject.toml (C90, max-complexity 12) is on: 13 branches fail."""
    branches = "".join(f"    if x == {i}:\n        return {i}\n" for i in range(13))
    (tmp_path / "too_complex.py").write_text(f"def f(x):\n{branches}    return -1\n")
    config = str(ROOT / "pyproject.toml")
    result = ruff("check", "--no-cache", "--config", config, str(tmp_path / "too_complex.py"))
    assert "C901" in result.stdout, result.stdout + result.stderr


def test_pre_commit_runs_ruff_and_the_notebook_output_check():
    config = (ROOT / ".pre-commit-config.yaml").read_text()
    for hook in (
        "ruff check",
        "ruff format --check",
        "scripts/notebooks/check_notebook_outputs.py",
    ):
        assert hook in config, hook
