"""The chapter 1 checkers accept right answers and name each typical wrong one."""

import math

import pytest
import torch

from attention_to_bert import checks
from attention_to_bert.attention import masked_softmax as package_masked_softmax
from attention_to_bert.attention import scaled_dot_score as package_scaled_dot_score

# --- masked softmax: one right answer written the way a student might, and typical wrong ones ---


def right_masked_softmax(scores, mask):
    filled = scores.masked_fill(mask, -1e9)
    return torch.softmax(filled, dim=-1) * ~mask


def nan_on_fully_masked_row(scores, mask):
    return torch.softmax(scores.masked_fill(mask, float("-inf")), dim=-1)


def nan_gradient(scores, mask):
    additive_mask = torch.zeros_like(scores).masked_fill(mask, float("-inf"))
    return torch.nan_to_num(torch.softmax(scores + additive_mask, dim=-1), nan=0.0)


def wrong_dimension(scores, mask):
    return torch.softmax(scores.masked_fill(mask, -1e9), dim=-2) * ~mask


def inverted_polarity(scores, mask):
    return right_masked_softmax(scores, ~mask)


def masked_scores_set_to_zero(scores, mask):
    return torch.softmax(scores.masked_fill(mask, 0.0), dim=-1)


def squeezed_shape(scores, mask):
    return right_masked_softmax(scores, mask).squeeze()


def exp_without_max(scores, mask):
    exps = torch.exp(scores.masked_fill(mask, float("-inf")))
    return exps / exps.sum(dim=-1, keepdim=True).clamp_min(1e-30)


def detached(scores, mask):
    return right_masked_softmax(scores.detach(), mask)


def raises(scores, mask):
    raise RuntimeError("not written yet")


def stub(*args): ...  # the student edition's stub: returns None


@pytest.mark.parametrize("candidate", [package_masked_softmax, right_masked_softmax])
def test_masked_softmax_checker_accepts_right_answers(candidate, capsys):
    assert checks.masked_softmax(candidate) is True
    assert "✔ masked_softmax: passes all 6 test cases." in capsys.readouterr().out


@pytest.mark.parametrize(
    ("candidate", "message"),
    [
        (nan_on_fully_masked_row, "a fully masked row gives NaN, not zeros"),
        (nan_gradient, "the gradient contains NaN"),
        (wrong_dimension, "the rows do not sum to 1, the columns do"),
        (inverted_polarity, "mask polarity inverted"),
        (masked_scores_set_to_zero, "masked (padded) positions get weight up to"),
        (squeezed_shape, "expected shape (2, 1, 5), got (2, 5)"),
        (exp_without_max, "subtract each row's maximum"),
        (detached, "no gradient flows back (do not detach)"),
        (raises, "raised RuntimeError: not written yet"),
        (stub, "returned None (a missing return"),
    ],
)
def test_masked_softmax_checker_names_the_mistake(candidate, message, capsys):
    assert checks.masked_softmax(candidate) is False
    output = capsys.readouterr().out
    assert "✘ masked_softmax" in output
    assert message in output


# --- scaled dot-product score ---


def right_scaled_dot_score(query, key):
    return query @ key.transpose(-2, -1) / math.sqrt(query.shape[-1])


def not_scaled(query, key):
    return query @ key.transpose(-2, -1)


def divided_by_d(query, key):
    return query @ key.transpose(-2, -1) / query.shape[-1]


def divided_by_number_of_keys(query, key):
    return query @ key.transpose(-2, -1) / math.sqrt(key.shape[-2])


def transposed(query, key):
    return key @ query.transpose(-2, -1) / math.sqrt(query.shape[-1])


def only_two_dimensional(query, key):
    return query @ key.t() / math.sqrt(query.shape[-1])  # .t() refuses batched (3-D) keys


@pytest.mark.parametrize("candidate", [package_scaled_dot_score, right_scaled_dot_score])
def test_scaled_dot_score_checker_accepts_right_answers(candidate, capsys):
    assert checks.scaled_dot_score(candidate) is True
    assert "✔ scaled_dot_score: passes all 3 test cases." in capsys.readouterr().out


@pytest.mark.parametrize(
    ("candidate", "message"),
    [
        (not_scaled, "not scaled: divide the dot products by sqrt(d)"),
        (divided_by_d, "divided by d; divide by sqrt(d) instead"),
        (divided_by_number_of_keys, "divided by sqrt(number of keys)"),
        (transposed, "transposed; the shape must be (..., n_q, n_k)"),
        (only_two_dimensional, "a batch: query (2, 3, 16) and key (2, 5, 16): raised RuntimeError"),
        (stub, "returned None (a missing return"),
    ],
)
def test_scaled_dot_score_checker_names_the_mistake(candidate, message, capsys):
    assert checks.scaled_dot_score(candidate) is False
    output = capsys.readouterr().out
    assert "✘ scaled_dot_score" in output
    assert message in output
