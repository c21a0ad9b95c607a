"""Installing the helper package writes nothing beside the chapters: setuptools' egg-info and build
folder go to the hidden, git-ignored .build/ (pyproject.toml, ``tool.distutils``), not to
``book/attention_to_bert.egg-info`` (shown in JupyterLab's file browser next to the chapters) and
``build/``. Checked with the commands ``pip install -e .`` and ``pip install .`` run (``egg_info``,
``build_py``) in a copy of the repository's packaging files, with no network."""

from __future__ import annotations

import shutil
import subprocess
import sys
from pathlib import Path

import pytest
from helpers import ROOT


def test_setuptools_writes_its_egg_info_and_build_folder_under_dot_build(tmp_path: Path) -> None:
    for name in ["pyproject.toml", "README.md", "LICENSE", ".build/.gitignore"]:
        (tmp_path / name).parent.mkdir(parents=True, exist_ok=True)
        shutil.copyfile(ROOT / name, tmp_path / name)
    shutil.copytree(
        ROOT / "book" / "attention_to_bert",
        tmp_path / "book" / "attention_to_bert",
        ignore=shutil.ignore_patterns("__pycache__", "*.egg-info"),
    )
    result = subprocess.run(
        [
            sys.executable,
            "-c",
            "from setuptools import setup; setup()",
            "-q",
            "egg_info",
            "build_py",
        ],
        cwd=tmp_path,
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert result.returncode == 0, result.stderr[-3000:]
    assert list((tmp_path / "book").glob("*.egg-info")) == []
    assert not (tmp_path / "build").exists()
    assert (tmp_path / ".build" / "attention_to_bert.egg-info" / "PKG-INFO").is_file()
    assert (tmp_path / ".build" / "build" / "lib" / "attention_to_bert" / "__init__.py").is_file()


def test_git_ignores_what_an_install_writes_and_keeps_dot_build() -> None:
    if shutil.which("git") is None or not (ROOT / ".git").exists():
        pytest.skip("not a git checkout")
    written = [
        ".build/attention_to_bert.egg-info/PKG-INFO",
        ".build/build/lib/attention_to_bert/__init__.py",
        "book/attention_to_bert.egg-info/PKG-INFO",  # older setuptools, or an install made before
        "build/lib/attention_to_bert/__init__.py",
    ]
    for path in written:
        check = subprocess.run(["git", "-C", str(ROOT), "check-ignore", "-q", path], timeout=60)
        assert check.returncode == 0, f"git does not ignore {path}"
    tracked = subprocess.run(
        ["git", "-C", str(ROOT), "ls-files", "--error-unmatch", ".build/.gitignore"],
        capture_output=True,
        timeout=60,
    )
    assert tracked.returncode == 0, (
        ".build/.gitignore is not committed: a fresh clone lacks .build/"
    )


def test_the_readers_jupyterlab_lists_only_what_a_reader_opens() -> None:
    """`jupyter lab book/ --config=jupyter_lab_config.json` (the README's command) hides the
    website's machinery and the helper package from JupyterLab's file browser (jupyter_server's
    ``ContentsManager.hide_globs``: listings only; the files stay readable and importable), and keeps
    the globs jupyter_server hides by default."""
    import json
    from fnmatch import fnmatch

    from jupyter_server.services.contents.manager import ContentsManager

    config = json.loads((ROOT / "jupyter_lab_config.json").read_text())
    globs = config["ContentsManager"]["hide_globs"]
    assert set(ContentsManager().hide_globs) <= set(globs)
    shown = sorted(
        path.name
        for path in (ROOT / "book").iterdir()
        # hidden files (.ruff_cache, ...) are never listed: jupyter_server's allow_hidden is off
        if not path.name.startswith(".") and not any(fnmatch(path.name, glob) for glob in globs)
    )
    for machinery in ["_ext", "_static", "_latex", "attention_to_bert", "images"]:
        assert machinery not in shown, machinery
    lessons = [name for name in shown if name.endswith(".ipynb")]
    assert lessons == sorted(p.name for p in (ROOT / "book").glob("[0-9][0-9]_*.ipynb"))
    assert [name for name in shown if not name.endswith((".ipynb", ".md")) and name != "labs"] == []
    readme = (ROOT / "README.md").read_text()
    assert "jupyter lab book/ --config=jupyter_lab_config.json" in readme
