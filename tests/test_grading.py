"""Grading helpers: the package's own answer blocked for student code only; hidden fresh inputs."""

import pytest
import torch

from attention_to_bert import checks, multihead
from attention_to_bert.checks.grading import (
    PackageAnswerBlocked,
    fresh_inputs,
    package_answer_blocked,
)


def right_causal_mask(size):
    return torch.ones(size, size, dtype=torch.bool).triu(1)


def test_student_code_calling_the_package_answer_is_refused_and_reported(capsys):
    imported = multihead.causal_mask
    namespace = {"causal_mask": imported}
    with package_answer_blocked("causal_mask", namespace):
        with pytest.raises(PackageAnswerBlocked, match="write `causal_mask` yourself"):
            namespace["causal_mask"](3)
        assert checks.causal_mask(lambda size: multihead.causal_mask(size)) is False
        assert checks.causal_mask(right_causal_mask) is True
    assert "graded work may not call" in capsys.readouterr().out
    assert namespace["causal_mask"] is imported and multihead.causal_mask is imported
    assert torch.equal(multihead.causal_mask(3), right_causal_mask(3))


def test_the_block_is_lifted_after_an_error():
    with pytest.raises(KeyError), package_answer_blocked("split_heads", {}):
        raise KeyError("boom")
    assert multihead.split_heads(torch.zeros(1, 2, 4), 2).shape == (1, 2, 2, 2)


def test_fresh_inputs_change_the_random_cases_and_restore_torch():
    original = torch.Generator
    before = torch.randn(3, generator=torch.Generator().manual_seed(1))
    with fresh_inputs(1000):
        during = torch.randn(3, generator=torch.Generator().manual_seed(1))
    assert torch.Generator is original
    assert not torch.equal(before, during)
    assert torch.equal(during, torch.randn(3, generator=torch.Generator().manual_seed(1001)))


def test_a_hard_coded_answer_fails_the_hidden_cases(capsys):
    generator = torch.Generator().manual_seed(2)
    key = torch.randn(3, 16, generator=generator), torch.randn(5, 16, generator=generator)
    memorised = (key[0] @ key[1].T) / 4.0  # the visible first case's answer, whatever comes in

    def hard_coded(query, key):
        return memorised if query.shape == (3, 16) else query @ key.mT / query.shape[-1] ** 0.5

    assert checks.scaled_dot_score(hard_coded) is True
    with fresh_inputs(1000):
        assert checks.scaled_dot_score(hard_coded) is False


@pytest.mark.parametrize(
    ("call", "error", "message"),
    [
        (lambda: package_answer_blocked("not a name", {}), ValueError, "name must be"),
        (lambda: package_answer_blocked("x", None), TypeError, "namespace must be"),
        (lambda: fresh_inputs(0), ValueError, "seed_offset must be a positive int"),
        (lambda: fresh_inputs(True), ValueError, "seed_offset must be"),
    ],
)
def test_bad_arguments_name_themselves(call, error, message):
    with pytest.raises(error, match=message):
        with call():
            pass
