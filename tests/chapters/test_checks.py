"""Every exercise checker rejects the two answers a student starts from: an empty stub and a crash."""

import inspect
import re

import pytest
import torch

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


def in_place_masked_softmax(scores, mask):
    scores.masked_fill_(mask, float("-inf"))  # writes into the caller's scores
    return torch.softmax(scores, dim=-1).nan_to_num(0.0)


def in_place_scaled_dot_score(query, key):
    query /= query.shape[-1] ** 0.5  # the right score, but the caller's query is divided too
    return query @ key.transpose(-2, -1)


def in_place_split_heads(x, num_heads):
    batch, seq, d_model = x.shape
    heads = x.view(batch, seq, num_heads, d_model // num_heads).transpose(1, 2).clone()
    x.zero_()
    return heads


def in_place_cross_attention(a, memory, memory_key_padding_mask, w_q, w_k, w_v):
    query, key, value = a @ w_q, memory @ w_k, memory @ w_v
    scores = query @ key.transpose(-2, -1) / key.shape[-1] ** 0.5
    scores = scores.masked_fill(memory_key_padding_mask[:, None, :], float("-inf"))
    weights = torch.softmax(scores, dim=-1)
    a.zero_()  # the right answer, but the caller's decoder states are wiped
    return weights @ value, weights


@pytest.mark.parametrize(
    "checker, candidate, name",
    [
        (checks.masked_softmax, in_place_masked_softmax, "scores"),
        (checks.scaled_dot_score, in_place_scaled_dot_score, "query"),
        (checks.split_heads, in_place_split_heads, "x"),
        (checks.cross_attention, in_place_cross_attention, "a"),
    ],
    ids=lambda value: getattr(value, "__name__", value),
)
def test_every_checker_catches_an_input_modified_in_place(checker, candidate, name, capsys):
    assert checker(candidate) is False
    assert f"the input `{name}` was modified in place" in capsys.readouterr().out


def test_a_message_repeated_in_every_case_is_printed_once(capsys):
    def stub(scores, mask): ...

    assert checks.masked_softmax(stub) is False
    output = capsys.readouterr().out
    assert output.count("returned None") == 1 and re.search(r"in all \d+ cases", output)
    assert "1 problem(s) found" in output


def test_a_checker_leaves_the_global_random_state_alone():
    torch.manual_seed(123)
    state = torch.random.get_rng_state()
    checks.mlm_mask(lambda *args: None)  # the checker seeds its own draws
    assert torch.equal(torch.random.get_rng_state(), state)
