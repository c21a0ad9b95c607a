"""``Checker``: ``call`` the student's function per case, ``compare`` results, ``report`` the verdict."""

from __future__ import annotations

import inspect
import random
from collections import defaultdict
from collections.abc import Callable, Sequence
from typing import Any

import numpy as np
import torch
from torch import Tensor

Mistakes = Sequence[tuple[Tensor, str]]
_hidden_seed: int | None = (
    None  # set by the course's grading.fresh_inputs (scripts/course/): the hidden tests' seed
)


def set_hidden_seed(seed: int | None) -> int | None:
    """Make ``vary`` change sizes with ``seed`` (None: sizes as written); return the previous seed."""
    global _hidden_seed
    previous, _hidden_seed = _hidden_seed, seed
    return previous


def vary(*sizes: int, spread: int = 3) -> tuple[int, ...]:
    """``sizes`` as written; in a hidden test (``fresh_inputs`` of ``scripts/course/grading.py``), each grown by 1 to
    ``spread`` with the secret seed, so an answer fitted to the visible shapes fails."""
    if _hidden_seed is None:
        return sizes
    draw = random.Random(f"{_hidden_seed}:{sizes}")
    return tuple(size + draw.randint(1, spread) for size in sizes)


def reference_softmax(scores: Tensor, mask: Tensor) -> Tensor:
    """The masked softmax over the last dimension in float64 (True = may not attend; all-zero rows)."""
    weights = torch.softmax(scores.double().masked_fill(mask, float("-inf")), dim=-1)
    return torch.nan_to_num(weights, nan=0.0)  # a fully masked row: 0/0 -> 0


class Checker:
    """Collects the results of the test cases of one exercise and reports them. It leaves the global
    random state as it found it (``report`` restores it), whatever the checker and the student draw."""

    def __init__(self, name: str) -> None:
        self.name = name
        self.problems: list[str] = []
        self.cases = 0
        self._cases_by_message: dict[str, list[str]] = defaultdict(list)  # what ``call`` found
        self._entries: list[
            tuple[str, str]
        ] = []  # (case, message) of each problem; case "" if none
        self._random_state = torch.random.get_rng_state()

    def call(self, function: Callable[..., Any], *args: Any, case: str, pair: str = "") -> Any:
        """Call the student's function; an exception, None (a stub), an input modified in place or,
        with ``pair`` (such as ``"(context, weights)"``), no pair is a problem. Returns the result,
        or None if unusable."""
        self.cases += 1
        before = [_copy(arg) for arg in args]
        try:
            result = function(*args)
        except Exception as error:  # the student's code may raise anything: report, don't crash
            hint = ""
            if isinstance(error, NameError):  # a stub leaves names undefined
                hint = " (is the body still `...`? write the code that defines it)"
            return self._problem(case, f"raised {type(error).__name__}: {error}{hint}")
        for index, (arg, copy) in enumerate(zip(args, before, strict=True)):
            if copy is not None and not _same(arg, copy):
                name = _argument_name(function, index)
                self._problem(
                    case, f"the input `{name}` was modified in place: work on a copy (clone)"
                )
        if pair and isinstance(result, tuple | list) and any(part is None for part in result):
            result = None  # a part of the pair is missing, as from a stub
        if result is None:
            self._problem(case, "returned None (a missing return, or a body still `...`?)")
        elif pair and not (isinstance(result, tuple | list) and len(result) == 2):
            return self._problem(case, f"expected a pair {pair}, got {type(result).__name__}")
        return result

    def _problem(self, case: str, message: str) -> None:
        self.problems.append(f"{case}: {message}")
        self._entries.append((case, message))
        self._cases_by_message[message].append(case)

    def expect(self, condition: bool, message: str) -> bool:
        """Record ``message`` as a problem unless ``condition`` holds."""
        if not condition:
            self.problems.append(message)
            self._entries.append(("", message))
        return bool(condition)

    def expect_value_error(self, attempt: Callable[[], Any], case: str, argument: str) -> None:
        """One case: ``attempt()`` must raise a ``ValueError`` whose message names ``argument``."""
        self.cases += 1
        try:
            attempt()
        except ValueError as error:
            self.expect(
                argument in str(error), f"{case}: the ValueError should name `{argument}`: {error}"
            )
        except Exception as error:  # the student's code may raise anything
            self.expect(False, f"{case}: raised {type(error).__name__}, expected a ValueError")
        else:
            self.expect(False, f"{case}: expected a ValueError naming `{argument}`, got a result")

    def compare(
        self,
        actual: Any,
        expected: Tensor,
        case: str,
        mistakes: Mistakes = (),
        atol: float = 1e-5,
        masked: Tensor | None = None,
        masked_name: str = "masked (padded) positions",
    ) -> bool:
        """Check that ``actual`` is a tensor of ``expected``'s shape, free of NaN and close to it; if
        not, name the first of ``mistakes`` (wrong answer, message) it matches or, with ``masked``
        (True = may not attend), an attention-weight mistake: weight where masked (the positions
        called ``masked_name``), NaN, row sums."""
        if actual is None:  # already reported by call
            return False
        problem = _mismatch(actual, expected, mistakes, atol)
        if problem and masked is not None:
            masked = masked.expand(expected.shape)
            problem = _weights_problem(actual, masked, masked_name) or problem
        return self.expect(problem is None, f"{case}: {problem}")

    def report(self) -> bool:
        """Print the verdict and return whether every case passed; a message that ``call`` found in
        several cases is printed once ("returned None ... in all 4 cases")."""
        torch.random.set_rng_state(self._random_state)
        lines = []
        for problem, (case, message) in zip(self.problems, self._entries, strict=True):
            cases = self._cases_by_message.get(message, []) if case else []
            if len(cases) < 2:
                lines.append(problem)
            elif case == cases[0]:
                count = f"all {len(cases)}" if len(cases) == self.cases else len(cases)
                lines.append(f"{message} in {count} cases")
        if not self.problems:
            print(f"✔ {self.name}: passes all {self.cases} test cases.")
        else:
            print(f"✘ {self.name}: {len(lines)} problem(s) found.")
            print("\n".join(f"  - {line}" for line in lines))
        return not self.problems


def _copy(value: Any) -> Tensor | np.ndarray | dict | None:
    """A copy of a tensor or array argument (or of a dict of them), to see afterwards whether the
    student changed it."""
    if isinstance(value, dict):
        return {key: _copy(item) for key, item in value.items()}
    if isinstance(value, Tensor):
        return value.detach().clone()
    return value.copy() if isinstance(value, np.ndarray) else None


def _same(value: Any, copy: Tensor | np.ndarray | dict) -> bool:
    if isinstance(copy, dict):
        pairs = [(value.get(key), item) for key, item in copy.items() if item is not None]
        return isinstance(value, dict) and all(_same(*pair) for pair in pairs)
    value = value.detach().cpu().numpy() if isinstance(value, Tensor) else value
    copy = copy.cpu().numpy() if isinstance(copy, Tensor) else copy
    return value.dtype == copy.dtype and np.array_equal(
        value, copy, equal_nan=value.dtype.kind in "fc"
    )


def _argument_name(function: Callable[..., Any], index: int) -> str:
    """The name of the ``index``-th positional parameter of ``function`` (a module's: of its
    ``forward``; ``argument 2`` if unknown or a ``*args``)."""
    if isinstance(function, torch.nn.Module):
        function = function.forward
    try:
        signature = inspect.signature(function)
        name = list(signature.bind_partial(*range(index + 1)).arguments)[index]
    except (TypeError, ValueError, IndexError):
        return f"argument {index + 1}"
    if signature.parameters[name].kind is inspect.Parameter.VAR_POSITIONAL:
        return f"argument {index + 1}"
    return name


def close(actual: Any, expected: Tensor, atol: float = 1e-5, equal_nan: bool = False) -> bool:
    """Whether ``actual`` is a tensor of ``expected``'s shape and close to it (in float64)."""
    if not isinstance(actual, Tensor) or actual.shape != expected.shape:
        return False
    actual, expected = actual.detach().double(), expected.detach().double()
    return torch.allclose(actual, expected, atol=atol, rtol=1e-4, equal_nan=equal_nan)


def _mismatch(actual: Any, expected: Tensor, mistakes: Mistakes, atol: float) -> str | None:
    if not isinstance(actual, Tensor):
        return f"expected a torch.Tensor, got {type(actual).__name__}"
    if close(actual, expected, atol):
        return None
    for wrong, message in mistakes:
        if close(actual, wrong, atol) and not close(wrong, expected, atol):
            return message
    if actual.shape != expected.shape:
        return f"expected shape {tuple(expected.shape)}, got {tuple(actual.shape)}"
    if torch.isnan(actual).any():
        return "contains NaN"
    difference = (actual.detach().double() - expected.double()).abs().max().item()
    return f"values differ from the expected ones (largest difference {difference:.3g})"


def _weights_problem(
    weights: Any, masked: Tensor, masked_name: str = "masked (padded) positions"
) -> str | None:
    if not isinstance(weights, Tensor) or weights.shape != masked.shape:
        return None
    weights, empty = weights.detach().double(), masked.all(dim=-1)
    if not torch.isfinite(weights[empty]).all():
        return "a fully masked row gives NaN, not zeros (mask with a large negative number)"
    if not torch.isfinite(weights).all():
        return (
            "NaN or inf in the weights: with torch.softmax, check its dim (over the keys, dim=-1) "
            "and what the mask fills; with exp written out, subtract each row's maximum first"
        )
    peak = weights[masked].abs().max().item() if masked.any() else 0.0
    free = ~masked & ~empty.unsqueeze(-1)
    if peak > 1e-6 and free.any() and weights[free].abs().max() < 1e-6:
        return "mask polarity inverted: weight goes where the mask is True (True = may not attend)"
    if peak > 1e-6:
        return f"{masked_name} get weight up to {peak:.3g}; they must get exactly 0"
    rows, columns = weights.sum(dim=-1)[~empty], weights.sum(dim=-2)
    if torch.allclose(rows, torch.ones_like(rows), atol=1e-4):
        return None
    if torch.allclose(columns, torch.ones_like(columns), atol=1e-4):
        return "the rows do not sum to 1, the columns do: take the softmax over the last dimension"
    return "the weights of a row (the last dimension) do not sum to 1"
