"""Every exercise checker rejects the two answers a student starts from: an empty stub and a crash."""

import inspect

import pytest

from attention_to_bert import checks
from attention_to_bert.checks import Checker

CHECKERS = [
    function
    for name, function in inspect.getmembers(checks, inspect.isfunction)
    if not name.startswith("_") and function.__module__.startswith(checks.__name__ + ".ch")
]


def test_there_are_checkers():
    assert len(CHECKERS) >= 3


@pytest.mark.parametrize("checker", CHECKERS, ids=lambda function: function.__name__)
def test_a_stub_that_returns_none_does_not_pass(checker, capsys):
    def stub(*args, **kwargs): ...  # your code here

    assert checker(stub) is False
    assert "returned None" in capsys.readouterr().out


@pytest.mark.parametrize("checker", CHECKERS, ids=lambda function: function.__name__)
def test_an_exception_is_reported_not_raised(checker, capsys):
    def broken(*args, **kwargs):
        raise RuntimeError("oops")

    assert checker(broken) is False
    assert "raised RuntimeError: oops" in capsys.readouterr().out


def test_checker_reports_each_problem(capsys):
    checker = Checker("demo")
    assert checker.call(lambda: 1, case="case 1") == 1
    assert checker.call(lambda: None, case="case 2") is None
    checker.expect(False, "case 3: wrong")
    assert checker.report() is False
    output = capsys.readouterr().out
    assert (
        "✘ demo: 2 problem(s) found." in output
        and "case 2: returned None" in output
        and "case 3: wrong" in output
    )
    assert Checker("fine").report() is True


def test_a_pair_with_a_missing_part_does_not_pass(capsys):
    def half_done(*args):
        return None, None

    assert checks.han_attention(half_done) is False
    assert "returned None" in capsys.readouterr().out
