"""How big each install is: the packages a requirements file brings and their size on disk.

    python scripts/repository/install_size.py                        # requirements-reader.txt and requirements.txt
    python scripts/repository/install_size.py requirements-reader.txt

Measured offline, in the environment that the full install (requirements.txt) made: the file's
requirements and everything they require (markers and extras evaluated for this machine), found in
the installed packages' metadata, each counted once, and the size of the files each installed
(its RECORD). pip and setuptools, which every virtual environment starts with, are not counted. The
README quotes these figures; tests/package/test_requirements.py checks that it quotes them right.
"""

from __future__ import annotations

import argparse
import sys
from importlib import metadata
from pathlib import Path

from packaging.markers import default_environment
from packaging.requirements import Requirement
from packaging.utils import canonicalize_name

ROOT = Path(__file__).resolve().parents[2]
FILES = ["requirements-reader.txt", "requirements.txt"]
SEEDED = {"pip", "setuptools"}  # in every new virtual environment before anything is installed


def requirements(path: Path) -> list[Requirement]:
    """The requirements of a requirements file, following ``-r`` includes; ``-e .`` is the book's
    package."""
    found = []
    for line in path.read_text().splitlines():
        line = line.split(" #")[0].strip()
        if not line or line.startswith("#") or line.startswith("--"):
            continue
        if line.startswith("-r "):
            found += requirements(path.parent / line[3:].strip())
        elif line.startswith("-e "):
            found.append(Requirement("attention-to-bert"))
        else:
            found.append(Requirement(line))
    return found


def closure(roots: list[Requirement]) -> dict[str, metadata.Distribution]:
    """Every installed distribution that ``roots`` need here, by canonical name."""
    environment = default_environment()
    found: dict[str, metadata.Distribution] = {}
    seen_extras: dict[str, set[str]] = {}
    stack = [(r, set(r.extras)) for r in roots]
    while stack:
        requirement, extras = stack.pop()
        if requirement.marker and not any(
            requirement.marker.evaluate({**environment, "extra": extra})
            for extra in (extras or {""}) | {""}
        ):
            continue
        name = canonicalize_name(requirement.name)
        if name in found and extras <= seen_extras[name]:
            continue
        try:
            distribution = found.get(name) or metadata.distribution(requirement.name)
        except metadata.PackageNotFoundError as error:
            raise SystemExit(
                f"{requirement.name} is not installed: run this in the full install "
                "(pip install -r requirements.txt)"
            ) from error
        found[name] = distribution
        seen_extras[name] = seen_extras.get(name, set()) | extras
        for text in distribution.requires or []:
            child = Requirement(text)
            if child.marker is None or any(
                child.marker.evaluate({**environment, "extra": extra})
                for extra in seen_extras[name] | {""}
            ):
                stack.append((Requirement(str(child).split(";")[0]), set(child.extras)))
    return {name: dist for name, dist in found.items() if name not in SEEDED}


def installed_bytes(distribution: metadata.Distribution) -> int:
    """The size of the files a distribution installed (its RECORD)."""
    total = 0
    for file in distribution.files or []:
        path = Path(str(file.locate()))
        if path.is_file():
            total += path.stat().st_size
    return total


def measure(path: Path) -> tuple[int, float]:
    """``(number of packages, megabytes on disk)`` of the install that ``path`` makes."""
    packages = closure(requirements(path))
    return len(packages), sum(installed_bytes(d) for d in packages.values()) / 1e6


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("files", nargs="*", type=Path, help=f"default: {' and '.join(FILES)}")
    args = parser.parse_args(argv)
    for path in args.files or [ROOT / name for name in FILES]:
        count, megabytes = measure(path)
        print(f"{path.name}: {count} packages, {megabytes:,.0f} MB installed")
    return 0


if __name__ == "__main__":
    sys.exit(main())
