"""The package's bad-input audit, ``scripts/bad_inputs.py``, as tests: every bad call raises a
TypeError or ValueError whose message names the argument, every valid one (an empty batch, a NaN at
a masked key, a model's mode after an error, ...) gets the right answer."""

import sys

import pytest
from helpers import ROOT

sys.path.insert(0, str(ROOT / "scripts"))
import bad_inputs  # noqa: E402


@pytest.mark.parametrize(
    "kind, argument, call",
    [case[1:] for case in bad_inputs.CASES],
    ids=[case[0] for case in bad_inputs.CASES],
)
def test_bad_input_gets_a_clear_error_and_valid_input_the_right_answer(kind, argument, call):
    category, detail = bad_inputs.classify(kind, argument, call)
    assert category == ("clear error" if kind == "bad" else "ok"), detail
