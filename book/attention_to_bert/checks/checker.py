"""``Checker``: what every exercise checker is built on.

A checker (``checks.chNN``) runs the student's function on a few test cases through ``call``, records
what is wrong with ``expect`` and ``expect_close`` (an exception, a wrong shape, NaN, not normalised,
wrong values), and ends with ``report``, which prints the verdict and returns ``True`` or ``False``.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import torch


class Checker:
    """Collects the results of the test cases of one exercise and reports them."""

    def __init__(self, name: str) -> None:
        self.name = name
        self.problems: list[str] = []
        self.cases = 0

    def call(
        self,
        function: Callable[..., Any],
        *args: Any,
        case: str = "",
        pair: str = "",
        **kwargs: Any,
    ) -> Any:
        """Call the student's function; an exception, or no return value (a stub), is recorded as a problem.

        With ``pair`` (the names of its parts, such as ``"(context, weights)"``), a result that is not a
        pair is a problem too. Returns the result, or None when there is nothing to check further.
        """
        self.cases += 1
        try:
            result = function(*args, **kwargs)
        except Exception as error:  # the student's code may raise anything: report it, don't crash
            self.problems.append(f"{case or 'a test case'}: raised {type(error).__name__}: {error}")
            return None
        if result is None:
            self.problems.append(
                f"{case or 'a test case'}: returned None; return the result (is the function body still `...`?)"
            )
        elif pair and not (isinstance(result, tuple | list) and len(result) == 2):
            got = type(result).__name__
            self.problems.append(f"{case or 'a test case'}: expected a pair {pair}, got {got}")
            return None
        return result

    def expect(self, condition: bool, message: str) -> bool:
        """Record ``message`` as a problem unless ``condition`` holds."""
        if not condition:
            self.problems.append(message)
        return bool(condition)

    def expect_close(
        self,
        actual: Any,
        expected: torch.Tensor,
        what: str,
        *,
        atol: float = 1e-5,
        rtol: float = 1e-4,
    ) -> bool:
        """Check that ``actual`` is a tensor of ``expected``'s shape, free of NaN, and close to it."""
        if actual is None:
            return False
        if not isinstance(actual, torch.Tensor):
            return self.expect(
                False, f"{what}: expected a torch.Tensor, got {type(actual).__name__}"
            )
        if tuple(actual.shape) != tuple(expected.shape):
            return self.expect(
                False, f"{what}: expected shape {tuple(expected.shape)}, got {tuple(actual.shape)}"
            )
        actual = actual.detach().to(torch.float64)
        expected = expected.detach().to(torch.float64)
        if torch.isnan(actual).any() and not torch.isnan(expected).any():
            return self.expect(
                False, f"{what}: contains NaN (a fully masked row must give zeros, not NaN)"
            )
        difference = (actual - expected).abs().max().item() if actual.numel() else 0.0
        return self.expect(
            torch.allclose(actual, expected, atol=atol, rtol=rtol),
            f"{what}: values differ from the expected ones (largest difference {difference:.3g})",
        )

    def report(self) -> bool:
        """Print the verdict and return whether every case passed."""
        if not self.problems:
            print(f"✔ {self.name}: passes all {self.cases} test cases.")
            return True
        print(f"✘ {self.name}: {len(self.problems)} problem(s) found.")
        for problem in self.problems:
            print(f"  - {problem}")
        return False
