"""The code is clean: `ruff check` passes over the helper package, the tests, the scripts and the notebooks."""

import shutil
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
RUFF = shutil.which("ruff", path=str(Path(sys.executable).parent)) or shutil.which("ruff") or "ruff"


def ruff(*args: str) -> subprocess.CompletedProcess:
    return subprocess.run([RUFF, *args], cwd=ROOT, capture_output=True, text=True, timeout=300)


def test_ruff_check_passes():
    result = ruff("check", "--no-cache", "--output-format", "concise", ".")
    assert result.returncode == 0, f"`ruff check .` found problems:\n{result.stdout}{result.stderr}"


def test_ruff_checks_the_package_the_tests_the_scripts_and_the_notebooks():
    checked = {Path(line).resolve() for line in ruff("check", "--no-cache", "--show-files", ".").stdout.split()}
    expected = [
        *(ROOT / "book" / "attention_to_bert").glob("*.py"),
        *(ROOT / "book").glob("*.ipynb"),
        *(ROOT / "tests").glob("*.py"),
        *(ROOT / "scripts").glob("*.py"),
    ]
    assert expected
    missed = [str(path.relative_to(ROOT)) for path in expected if path.resolve() not in checked]
    assert not missed, f"ruff does not check {missed}"
