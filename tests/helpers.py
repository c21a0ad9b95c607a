"""What the tests share: the repository's root, the chapter notebooks, and the helpers that compare
our modules with their ``torch.nn`` twins."""

import importlib.util
import re
import sys
from pathlib import Path
from types import ModuleType
from urllib.parse import urlsplit

import torch
from torch import nn

ROOT = Path(__file__).resolve().parents[1]
CHAPTERS = sorted((ROOT / "book").glob("[0-9][0-9]_*.ipynb"))
"""The lessons, ``book/NN_name.ipynb``, in order (however many there are): what a chapter teaches."""

LABS = sorted((ROOT / "book" / "labs").glob("[0-9][0-9]_*_lab.ipynb"))
"""The labs, ``book/labs/NN_name_lab.ipynb``: how we know what the chapter of the same number says."""

NOTEBOOKS = CHAPTERS + LABS
"""Every notebook of the book: the lessons, then the labs."""


def lab_of(lesson: Path) -> Path:
    """The lab of a lesson, ``book/labs/NN_name_lab.ipynb`` (which may not exist yet)."""
    return lesson.parent / "labs" / f"{lesson.stem}_lab.ipynb"


WRITTEN_BY_COMMANDS = [".build", "course", "handout", "student"]
"""What the README's commands write into a checkout: setuptools' ``.build/`` (``pip wheel .``, ``pip
install .``), the graded course and the hand-outs; the site build ignores them all (``_config.yml``'s
``exclude_patterns``; tests/site/test_site.py)."""

DIAGRAM_IMAGE = re.compile(
    r"(?:<!-- images/diagrams/(?P<marked>[\w-]+)\.svg -->\n?)?"
    r"!\[(?P<alt>[^\]]*)\]\((?:images/diagrams/(?P<path>[\w-]+)\.svg"
    r"|data:image/(?:png|svg\+xml);base64,[A-Za-z0-9+/=]*)\)"
)
"""A diagram in a chapter's Markdown: as an author writes it, ``![alt](images/diagrams/NAME.svg)``,
or as ``scripts/notebooks/format_notebooks.py`` stores it, ``<!-- images/diagrams/NAME.svg -->`` then
``![alt](data:image/png;base64,...)`` (the SVG's PNG twin)."""


def diagram_images(source: str) -> list[tuple[str | None, str]]:
    """``(NAME, alt text)`` of each diagram in a Markdown cell, in order (NAME None: a data URI
    that names no file)."""
    return [(m["path"] or m["marked"], m["alt"]) for m in DIAGRAM_IMAGE.finditer(source)]


def load_script(path: str, name: str | None = None) -> ModuleType:
    """Import a script of the repository (``"experiments/ch02_han.py"``) as a module named ``name``
    (default: the file's stem)."""
    file = ROOT / path
    name = name or file.stem
    if str(file.parent) not in sys.path:  # its neighbours, which it may import (results_table)
        sys.path.insert(0, str(file.parent))
    spec = importlib.util.spec_from_file_location(name, file)
    module = importlib.util.module_from_spec(spec)
    sys.modules[name] = module
    spec.loader.exec_module(module)
    return module


SEED_WIDTHS = 3.0
"""How many standard deviations of the shipped seeds a recomputed training run may stray."""
ROUNDING_FLOOR = 0.01
"""The least tolerance of a recomputed accuracy: a 2-4 digit number moved by rounding alone."""


def seed_tolerance(seed_values, floor: float = ROUNDING_FLOOR) -> float:
    """How far a recomputed training result may land from its shipped row: ``SEED_WIDTHS``
    standard deviations of the same result over the shipped seeds, at least ``floor``.

    On the machine that wrote a file the script recomputes its row exactly. Another CPU's kernels
    (AVX2, AVX-512, none: ``ATEN_CPU_CAPABILITY``) round in other last bits, and training amplifies
    them like a change of seed: 0.88 against 0.8583 for chapter 2's ceiling on an AVX2 machine. So a
    recomputed run is held to the spread its seeds show, not to the writer's machine."""
    values = [float(v) for v in seed_values]
    if len(values) < 2:
        raise ValueError(f"seed_values must hold at least 2 seeds' results, got {len(values)}")
    mean = sum(values) / len(values)
    deviation = (sum((v - mean) ** 2 for v in values) / (len(values) - 1)) ** 0.5
    return max(floor, SEED_WIDTHS * deviation)


ATOL, RTOL = 1e-5, 1e-4  # float32 against a torch.nn twin; measured differences are ~1e-7 to ~1e-6


def assert_close(actual: torch.Tensor, expected: torch.Tensor) -> None:
    torch.testing.assert_close(actual, expected, atol=ATOL, rtol=RTOL)


def random_padding(batch: int, length: int, generator: torch.Generator) -> torch.Tensor:
    """A key_padding_mask whose rows each keep at least one key."""
    lengths = torch.randint(1, length + 1, (batch,), generator=generator)
    return torch.arange(length)[None, :] >= lengths[:, None]


def record_torch_weights(module: nn.Module) -> list[torch.Tensor]:
    """Make every nn.MultiheadAttention inside ``module`` return per-head weights and record them in order."""
    recorded: list[torch.Tensor] = []

    def ask_for_weights(_module, args, kwargs):
        kwargs["need_weights"] = True
        kwargs["average_attn_weights"] = False
        return args, kwargs

    def keep(_module, _args, output):
        recorded.append(output[1])

    for sub in module.modules():
        if isinstance(sub, nn.MultiheadAttention):
            sub.register_forward_pre_hook(ask_for_weights, with_kwargs=True)
            sub.register_forward_hook(keep)
    return recorded


def is_local(url: str) -> bool:
    """Whether a request stays on this machine (the local server, file:, data:, about:); the
    browser checks of the site and of the bertviz views refuse every other."""
    return urlsplit(url).hostname in ("127.0.0.1", "localhost") or not url.startswith(
        ("http:", "https:")
    )
