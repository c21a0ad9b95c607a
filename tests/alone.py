"""A chapter opened alone, as a reader gets it on Colab or as a download: the notebook in an empty
folder, the helper package installed from its wheel (not editable), nothing of the checkout on the
path. Used by tests/chapters/test_alone.py, and by tests/chapters/test_determinism.py, whose second run of each chapter
is this one (so CI executes no chapter more often than before).

The wheel is built from a copy of the packaging files (nothing is written into the checkout),
offline (``--no-build-isolation``: the venv's setuptools), and installed with ``pip --target`` into a
temporary folder. Each chapter's kernel gets that folder first on ``PYTHONPATH`` (the venv's
third-party packages stay, as on Colab); an IPython start-up file drops the checkout's ``book/``
folder, which an editable install (``-e .``) puts on ``sys.path``, so a file missing from the wheel
fails the chapter instead of being read from the checkout.
"""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
import zipfile
from pathlib import Path

import nbformat
from helpers import ROOT
from nbclient import NotebookClient
from nbformat.v4 import new_code_cell

BOOK = ROOT / "book"
ALONE_CPU = "BOOK_ALONE_CPU"
"""Where set (CI: ``avx2``), the chapters opened alone run with ``ATEN_CPU_CAPABILITY`` set to it:
the kernels of another CPU family, whose last bits differ from this machine's."""
PACKAGE = BOOK / "attention_to_bert"
NOT_SHIPPED = {"ruff.toml"}  # lint settings of the package's folder, not package data
PACKAGING = ["pyproject.toml", "README.md", "LICENSE", ".build/.gitignore"]
# the last cell appended to each copy: where the package came from, and the kernel's path
PROBE = (
    "import sys as _sys\n\nimport attention_to_bert as _package\n\n"
    "print(_package.__file__)\nprint(sorted(_sys.path))"
)
STARTUP = """\
# tests/alone.py: no folder but the target holds attention_to_bert (an editable install puts the
# checkout's book/ on sys.path, or an import hook on sys.meta_path)
import os as _os
import sys as _sys

_target = _os.path.realpath({target!r})


def _holds_package(entry):
    folder = _os.path.realpath(entry or ".")
    package = _os.path.join(folder, "attention_to_bert", "__init__.py")
    return folder != _target and _os.path.isfile(package)


_sys.path[:] = [entry for entry in _sys.path if not _holds_package(entry)]
_sys.meta_path[:] = [
    f for f in _sys.meta_path if "__editable__" not in getattr(f, "__module__", "")
]
"""


def package_files(package: Path = PACKAGE) -> list[str]:
    """The files of the package's folder that a wheel must hold, as wheel paths."""
    return sorted(
        "attention_to_bert/" + path.relative_to(package).as_posix()
        for path in package.rglob("*")
        if path.is_file()
        and "__pycache__" not in path.parts
        and path.suffix != ".pyc"
        and path.name not in NOT_SHIPPED
    )


def wheel_files(wheel: Path) -> list[str]:
    """The package's files inside ``wheel`` (not its dist-info)."""
    with zipfile.ZipFile(wheel) as archive:
        return sorted(n for n in archive.namelist() if n.startswith("attention_to_bert/"))


def build_wheel(folder: Path) -> Path:
    """Build the package's wheel from a copy of the packaging files; return its path."""
    source = folder / "source"
    for name in PACKAGING:
        (source / name).parent.mkdir(parents=True, exist_ok=True)
        shutil.copyfile(ROOT / name, source / name)
    shutil.copytree(
        PACKAGE,
        source / "book" / "attention_to_bert",
        ignore=shutil.ignore_patterns("__pycache__", "*.pyc", "*.egg-info"),
    )
    out = folder / "dist"
    pip = [sys.executable, "-m", "pip", "-q", "--disable-pip-version-check"]
    command = [*pip, "wheel", str(source), "--no-deps", "--no-build-isolation", "--no-index"]
    result = subprocess.run([*command, "-w", str(out)], capture_output=True, text=True, timeout=600)
    assert result.returncode == 0, (
        f"pip wheel failed:\n{result.stdout[-3000:]}{result.stderr[-3000:]}"
    )
    (wheel,) = out.glob("attention_to_bert-*.whl")
    return wheel


def install(wheel: Path, target: Path) -> Path:
    """``pip install --target`` the wheel (not editable, no dependencies); return the target."""
    pip = [sys.executable, "-m", "pip", "-q", "--disable-pip-version-check"]
    command = [*pip, "install", "--no-deps", "--no-index", "--target", str(target), str(wheel)]
    result = subprocess.run(command, capture_output=True, text=True, timeout=600)
    assert result.returncode == 0, (
        f"pip install failed:\n{result.stdout[-3000:]}{result.stderr[-3000:]}"
    )
    return target


class Alone:
    """The wheel, its installation and the chapters run alone against it (each run once)."""

    def __init__(self, folder: Path) -> None:
        self.folder = folder
        self.wheel = build_wheel(folder / "build")
        self.target = install(self.wheel, folder / "target")
        startup = folder / "ipython" / "profile_default" / "startup" / "00-alone.py"
        startup.parent.mkdir(parents=True)
        startup.write_text(STARTUP.format(target=str(self.target)))
        self.ipython_dir = startup.parents[2]
        self.runs: dict[str, tuple[nbformat.NotebookNode, str]] = {}

    def environment(self) -> dict[str, str]:
        """The kernel's environment: the target first on the path, the checkout's book/ off it
        (the network guard's folder stays: the kernel is offline, as in every test)."""
        env = dict(os.environ)
        kept = [
            p
            for p in env.get("PYTHONPATH", "").split(os.pathsep)
            if p and os.path.realpath(p) != os.path.realpath(BOOK)
        ]
        env["PYTHONPATH"] = os.pathsep.join([str(self.target), *kept])
        env["IPYTHONDIR"] = str(self.ipython_dir)
        other_cpu = os.environ.get(ALONE_CPU)
        if other_cpu:  # torch's kernels of another CPU family (read when torch starts)
            env["ATEN_CPU_CAPABILITY"] = other_cpu
        return env

    def run(self, chapter: Path, timeout: int = 900) -> tuple[nbformat.NotebookNode, str]:
        """Execute ``chapter`` copied alone into an empty folder; return the executed notebook
        (as stored: the probe cell removed) and what the probe printed."""
        if chapter.name not in self.runs:
            folder = self.folder / "chapters" / chapter.stem
            folder.mkdir(parents=True)
            copy = folder / chapter.name
            shutil.copyfile(chapter, copy)
            notebook = nbformat.read(copy, as_version=4)
            notebook.cells.append(new_code_cell(PROBE))
            client = NotebookClient(
                notebook,
                timeout=timeout,
                kernel_name="python3",
                resources={"metadata": {"path": str(folder)}},
            )
            client.execute(env=self.environment())
            probe = notebook.cells.pop()
            printed = "".join(o.get("text", "") for o in probe.outputs if o.output_type == "stream")
            self.runs[chapter.name] = (notebook, printed)
        return self.runs[chapter.name]
