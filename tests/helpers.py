"""What the tests share: the repository's root, the chapter notebooks, and the helpers that compare
our modules with their ``torch.nn`` twins."""

import importlib.util
import sys
from pathlib import Path
from types import ModuleType

import torch
from torch import nn

ROOT = Path(__file__).resolve().parents[1]
CHAPTERS = sorted((ROOT / "book").glob("[0-9][0-9]_*.ipynb"))
"""The chapter notebooks, ``book/NN_name.ipynb``, in order (however many there are)."""


def load_script(path: str, name: str | None = None) -> ModuleType:
    """Import a script of the repository (``"scripts/han_table.py"``) as a module named ``name``
    (default: the file's stem)."""
    file = ROOT / path
    name = name or file.stem
    spec = importlib.util.spec_from_file_location(name, file)
    module = importlib.util.module_from_spec(spec)
    sys.modules[name] = module
    spec.loader.exec_module(module)
    return module


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
