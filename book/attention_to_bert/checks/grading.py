"""Graded runs of the checkers (the nbgrader course of ``scripts/make_course.py``).

``package_answer_blocked("causal_mask", globals())`` blocks the book's own implementation of the very
function an exercise asks for, so a student cannot pass by calling it; ``fresh_inputs(seed_offset)``
makes a checker draw new random cases (the hidden tests students never saw).
"""

from __future__ import annotations

import contextlib
import importlib
import pkgutil
import sys
from collections.abc import Callable, Iterator, MutableMapping
from typing import Any

import torch

PACKAGE = "attention_to_bert"


class PackageAnswerBlocked(RuntimeError):
    """Raised when graded work calls the package's own answer to the exercise being graded."""


def _from_package(frame_globals: dict) -> bool:
    module = frame_globals.get("__name__", "")
    return module == PACKAGE or module.startswith(PACKAGE + ".")


def _blocked(real: Callable[..., Any], name: str) -> Callable[..., Any]:
    def guard(*args: Any, **kwargs: Any) -> Any:
        if _from_package(sys._getframe(1).f_globals):  # a checker's reference, or package code
            return real(*args, **kwargs)
        raise PackageAnswerBlocked(
            f"this exercise asks you to write `{name}` yourself; graded work may not call the "
            f"book's own `{real.__module__}.{name}`"
        )

    return guard


def _package_modules() -> list[Any]:
    package = importlib.import_module(PACKAGE)
    names = [info.name for info in pkgutil.walk_packages(package.__path__, PACKAGE + ".")]
    return [importlib.import_module(name) for name in names if ".checks" not in name]


@contextlib.contextmanager
def package_answer_blocked(name: str, namespace: MutableMapping[str, Any]) -> Iterator[None]:
    """Within the block, the package's functions called ``name`` raise when student code calls them,
    also through names the notebook imported (``namespace``, the notebook's ``globals()``)."""
    if not isinstance(name, str) or not name.isidentifier():
        raise ValueError(f"name must be a function name such as 'causal_mask'; got {name!r}")
    if not isinstance(namespace, MutableMapping):
        raise TypeError(
            f"namespace must be a dict such as globals(); got {type(namespace).__name__}"
        )
    patches = []  # (owner, attribute, real) to restore
    for module in _package_modules():
        real = vars(module).get(name)
        if callable(real):
            patches.append((vars(module), name, real))
    reals = {id(real) for _, _, real in patches}
    for key, value in list(namespace.items()):
        if id(value) in reals:
            patches.append((namespace, key, value))
    try:
        for owner, attribute, real in patches:
            owner[attribute] = _blocked(real, name)
        yield
    finally:
        for owner, attribute, real in patches:
            owner[attribute] = real


@contextlib.contextmanager
def fresh_inputs(seed_offset: int) -> Iterator[None]:
    """Within the block, every ``torch.Generator().manual_seed(s)`` seeds ``s + seed_offset``: a
    checker then draws other random cases than the ones students could see."""
    if isinstance(seed_offset, bool) or not isinstance(seed_offset, int) or seed_offset <= 0:
        raise ValueError(f"seed_offset must be a positive int; got {seed_offset!r}")
    original = torch.Generator

    class ShiftedGenerator(original):  # type: ignore[misc, valid-type]
        def manual_seed(self, seed: int) -> torch.Generator:
            return super().manual_seed(seed + seed_offset)

    torch.Generator = ShiftedGenerator
    try:
        yield
    finally:
        torch.Generator = original
