"""The install resolves to a CPU build of torch on Linux, macOS and Windows, and never replaces one."""

import re

import pytest
import tomllib
from helpers import ROOT
from packaging.requirements import Requirement
from packaging.version import Version

CPU_INDEX = "https://download.pytorch.org/whl/cpu"
PLATFORMS = {  # the marker environment of each platform that matters, Python 3.11
    "linux": {"sys_platform": "linux", "platform_system": "Linux"},
    "darwin": {"sys_platform": "darwin", "platform_system": "Darwin"},
    "win32": {"sys_platform": "win32", "platform_system": "Windows"},
}


def requirements() -> list[Requirement]:
    lines = (ROOT / "requirements.txt").read_text().splitlines()
    kept = [line.split(" #")[0].strip() for line in lines]
    return [Requirement(line) for line in kept if line and not line.startswith(("#", "-"))]


def torch_for(platform: str) -> list[Requirement]:
    environment = {"python_version": "3.11", "python_full_version": "3.11.7"}
    environment |= PLATFORMS[platform]
    return [
        r
        for r in requirements()
        if r.name == "torch" and (r.marker is None or r.marker.evaluate(environment))
    ]


@pytest.mark.parametrize("platform", PLATFORMS)
def test_exactly_one_torch_pin_applies_on_each_platform(platform):
    (torch,) = torch_for(platform)
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


def test_every_other_requirement_is_pinned():
    loose = [str(r) for r in requirements() if not str(r.specifier).startswith("==")]
    assert loose == []


def test_readme_install_command_names_the_cpu_index():
    readme = (ROOT / "README.md").read_text()
    commands = re.findall(r"pip install -r requirements\.txt[^\n`]*", readme)
    assert commands and all(CPU_INDEX in command for command in commands)


def test_the_package_never_replaces_an_installed_torch():
    # Colab has its own (CUDA) torch: the package and its extras must accept any recent torch.
    project = tomllib.loads((ROOT / "pyproject.toml").read_text())["project"]
    dependencies = project["dependencies"] + sum(project["optional-dependencies"].values(), [])
    (torch,) = [Requirement(d) for d in dependencies if Requirement(d).name == "torch"]
    for installed in ["2.1.0", "2.9.1+cu126", "2.13.0+cpu", "2.14.1+cu130", "3.0.0"]:
        assert torch.specifier.contains(installed, prereleases=True), installed


def test_binder_installs_the_book_requirements_with_the_cpu_index():
    lines = (ROOT / "binder" / "requirements.txt").read_text().splitlines()
    assert f"--extra-index-url {CPU_INDEX}" in lines and "-r ../requirements.txt" in lines
