"""The chapter 5 checkers accept right answers and name each typical wrong one."""

import pytest
import torch

from attention_to_bert import checks
from attention_to_bert.multihead import causal_mask as package_causal_mask
from attention_to_bert.multihead import split_heads as package_split_heads

# --- split_heads ---


def right_split_heads(x, num_heads):
    batch, seq, d_model = x.shape
    return x.reshape(batch, seq, num_heads, d_model // num_heads).permute(0, 2, 1, 3)


def no_transpose(x, num_heads):
    batch, seq, d_model = x.shape
    return x.view(batch, seq, num_heads, d_model // num_heads)


def straight_reshape(x, num_heads):
    batch, seq, d_model = x.shape
    return x.reshape(batch, num_heads, seq, d_model // num_heads)


def strided_heads(x, num_heads):
    batch, seq, d_model = x.shape
    return x.view(batch, seq, d_model // num_heads, num_heads).permute(0, 3, 1, 2)


def heads_and_features_swapped(x, num_heads):
    batch, seq, d_model = x.shape
    return x.view(batch, seq, num_heads, d_model // num_heads).transpose(1, 3)


def crashes(x, num_heads):
    raise RuntimeError("shape '[2, 5, 4]' is invalid")


@pytest.mark.parametrize("solution", [right_split_heads, package_split_heads])
def test_split_heads_checker_accepts_right_answers(solution, capsys):
    assert checks.split_heads(solution) is True
    assert "passes all 4 test cases" in capsys.readouterr().out


@pytest.mark.parametrize(
    "wrong, message",
    [
        (no_transpose, "swap the seq and heads axes"),
        (straight_reshape, "mixes up positions"),
        (strided_heads, "every heads-th feature"),
        (heads_and_features_swapped, "expected shape"),
        (crashes, "raised RuntimeError"),
    ],
)
def test_split_heads_checker_names_typical_mistakes(wrong, message, capsys):
    assert checks.split_heads(wrong) is False
    output = capsys.readouterr().out
    assert "✘ split_heads" in output and message in output


# --- causal_mask ---


def right_causal_mask(size):
    positions = torch.arange(size)
    return positions[None, :] > positions[:, None]


def inverted(size):
    return torch.ones(size, size, dtype=torch.bool).tril()


def diagonal_masked(size):
    return torch.ones(size, size, dtype=torch.bool).triu()


def past_masked(size):
    return torch.ones(size, size, dtype=torch.bool).tril(diagonal=-1)


def additive_float(size):
    return torch.full((size, size), float("-inf")).triu(diagonal=1)


def integer_mask(size):
    return torch.ones(size, size, dtype=torch.long).triu(diagonal=1)


def wrong_shape(size):
    return torch.ones(size, dtype=torch.bool)


def nothing_masked(size):
    return torch.zeros(size, size, dtype=torch.bool)


@pytest.mark.parametrize("solution", [right_causal_mask, package_causal_mask])
def test_causal_mask_checker_accepts_right_answers(solution, capsys):
    assert checks.causal_mask(solution) is True
    assert "passes all 3 test cases" in capsys.readouterr().out


@pytest.mark.parametrize(
    "wrong, message",
    [
        (inverted, "polarity inverted"),
        (diagonal_masked, "the diagonal is masked too"),
        (past_masked, "the past is masked instead of the future"),
        (additive_float, "dtype torch.float32; return a bool mask"),
        (integer_mask, "dtype torch.int64"),
        (wrong_shape, "expected shape (4, 4)"),
        (nothing_masked, "True must mark j > i"),
    ],
)
def test_causal_mask_checker_names_typical_mistakes(wrong, message, capsys):
    assert checks.causal_mask(wrong) is False
    output = capsys.readouterr().out
    assert "✘ causal_mask" in output and message in output
