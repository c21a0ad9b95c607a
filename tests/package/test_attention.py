"""Tests of attention.py: values against torch references, shapes, masks, and clear errors on bad input."""

import math

import pytest
import torch
import torch.nn.functional as F
from torch import nn

from attention_to_bert.attention import (
    AdditiveScore,
    GeneralScore,
    attention,
    dot_score,
    scaled_dot_score,
)
from attention_to_bert.masks import masked_softmax, padding_mask


@pytest.fixture
def generator():
    return torch.Generator().manual_seed(0)


def randn(*shape, generator, dtype=torch.float64):
    return torch.randn(*shape, generator=generator, dtype=dtype)


def randn_many(generator, *shapes):
    return tuple(randn(*shape, generator=generator) for shape in shapes)


# --- masked_softmax ---


def test_masked_softmax_without_mask_is_softmax(generator):
    scores = randn(2, 3, 5, generator=generator)
    torch.testing.assert_close(masked_softmax(scores), torch.softmax(scores, dim=-1))


def test_masked_softmax_matches_minus_infinity_reference_and_zeroes_masked(generator):
    scores = randn(2, 3, 5, generator=generator)
    mask = torch.rand(2, 3, 5, generator=generator) > 0.6
    mask[..., 0] = False  # at least one free key per row, so the -inf reference has no NaN
    expected = torch.softmax(scores.masked_fill(mask, float("-inf")), dim=-1)
    weights = masked_softmax(scores, mask)
    torch.testing.assert_close(weights, expected)
    assert (weights[mask] == 0).all()
    torch.testing.assert_close(weights.sum(-1), torch.ones(2, 3, dtype=torch.float64))


def test_masked_softmax_broadcasts_a_key_padding_mask(generator):
    scores = randn(2, 3, 4, generator=generator)
    mask = padding_mask([4, 2])[:, None, :]  # (2, 1, 4): same keys hidden for every query
    weights = masked_softmax(scores, mask)
    assert weights.shape == (2, 3, 4)
    assert (weights[1, :, 2:] == 0).all()
    torch.testing.assert_close(weights[1, :, :2], torch.softmax(scores[1, :, :2], dim=-1))


def test_fully_masked_row_gives_zeros_and_no_nan_gradient(generator):
    scores = randn(2, 4, generator=generator, dtype=torch.float32).requires_grad_()
    mask = torch.tensor([[True, True, True, True], [False, True, False, True]])
    weights = masked_softmax(scores, mask)
    assert torch.equal(weights[0], torch.zeros(4))
    assert torch.isclose(weights[1].sum(), torch.tensor(1.0))
    (weights * torch.arange(4.0)).sum().backward()
    assert not torch.isnan(scores.grad).any()
    assert torch.equal(scores.grad[0], torch.zeros(4))
    assert (scores.grad[1, [1, 3]] == 0).all()


@pytest.mark.parametrize("dtype", [torch.float16, torch.bfloat16, torch.float32, torch.float64])
def test_masked_softmax_works_in_every_float_dtype(dtype):
    scores = torch.tensor([[1.0, 2.0, 3.0], [0.5, 0.5, 0.5]], dtype=dtype)
    mask = torch.tensor([[False, True, False], [True, True, True]])
    weights = masked_softmax(scores, mask)
    assert weights.dtype == dtype and not torch.isnan(weights).any()
    assert weights[1].abs().sum() == 0 and weights[0, 1] == 0


def test_masked_softmax_rejects_bad_input():
    scores = torch.zeros(2, 5)
    with pytest.raises(TypeError, match="scores must be a torch.Tensor, got list"):
        masked_softmax([[0.0, 1.0]])
    with pytest.raises(TypeError, match="floating-point tensor, got torch.int64"):
        masked_softmax(torch.zeros(2, 5, dtype=torch.long))
    with pytest.raises(
        TypeError,
        match=r"mask must be a bool tensor \(True = may not attend\), got torch.int64",
    ):
        masked_softmax(scores, torch.zeros(2, 5, dtype=torch.long))
    with pytest.raises(TypeError, match="mask must be a bool tensor"):
        masked_softmax(scores, [[True] * 5] * 2)
    with pytest.raises(
        ValueError, match=r"mask of shape \(2, 4\) cannot be broadcast to scores of shape \(2, 5\)"
    ):
        masked_softmax(scores, torch.zeros(2, 4, dtype=torch.bool))
    # a mask may not make the result bigger than the scores
    with pytest.raises(ValueError, match=r"mask of shape \(3, 2, 5\) cannot be broadcast"):
        masked_softmax(scores, torch.zeros(3, 2, 5, dtype=torch.bool))
    # the common slip: a (batch, n_k) padding mask against (batch, n_q, n_k) scores gets a hint
    with pytest.raises(ValueError, match=r"mask\[:, None, :\]"):
        masked_softmax(torch.zeros(2, 3, 5), torch.zeros(2, 5, dtype=torch.bool))


def test_padding_mask():
    assert torch.equal(
        padding_mask([2, 0, 3]), torch.tensor([[0, 0, 1], [1, 1, 1], [0, 0, 0]]).bool()
    )
    assert padding_mask(torch.tensor([1]), max_length=4).shape == (1, 4)
    with pytest.raises(ValueError, match="shorter than the longest"):
        padding_mask([3], max_length=2)
    with pytest.raises(ValueError, match=">= 0"):
        padding_mask([-1])
    with pytest.raises(ValueError, match="1-D sequence of integers"):
        padding_mask([1.5])


# --- score functions ---


def test_dot_and_scaled_dot_scores(generator):
    query, key = randn(2, 3, 4, generator=generator), randn(2, 5, 4, generator=generator)
    expected = torch.einsum("bqd,bkd->bqk", query, key)
    torch.testing.assert_close(dot_score(query, key), expected)
    torch.testing.assert_close(scaled_dot_score(query, key), expected / 2.0)
    # one query against a batch of keys broadcasts over the batch dimension
    assert dot_score(query[0], key).shape == (2, 3, 5)


def test_general_score_matches_nn_bilinear(generator):
    torch.manual_seed(0)
    score = GeneralScore(query_size=3, key_size=4).double()
    bilinear = nn.Bilinear(3, 4, 1, bias=False).double()
    with torch.no_grad():
        bilinear.weight.copy_(score.key_projection.weight[None])
    query, key = randn(2, 6, 3, generator=generator), randn(2, 5, 4, generator=generator)
    expected = bilinear(
        query[:, :, None, :].expand(2, 6, 5, 3), key[:, None, :, :].expand(2, 6, 5, 4)
    ).squeeze(-1)
    torch.testing.assert_close(score(query, key), expected)
    assert sum(p.numel() for p in score.parameters()) == 12


def test_additive_score_matches_the_formula_loop(generator):
    torch.manual_seed(0)
    score = AdditiveScore(query_size=3, key_size=4, hidden_size=8).double()
    query, key = randn(2, 3, generator=generator), randn(5, 4, generator=generator)
    w_q, w_k, v = score.query_projection.weight, score.key_projection.weight, score.v.weight[0]
    w_q, w_k, v = w_q.detach(), w_k.detach(), v.detach()
    expected = torch.tensor(
        [
            [float(v @ torch.tanh(w_q @ query[i] + w_k @ key[j])) for j in range(5)]
            for i in range(2)
        ],
        dtype=torch.float64,
    )
    torch.testing.assert_close(score(query, key), expected)
    assert sum(p.numel() for p in score.parameters()) == 3 * 8 + 4 * 8 + 8


@pytest.mark.parametrize("function", [dot_score, scaled_dot_score])
def test_score_functions_reject_mismatched_sizes(function):
    with pytest.raises(ValueError, match=r"query \(3, 4\) and key \(5, 6\)"):
        function(torch.zeros(3, 4), torch.zeros(5, 6))
    with pytest.raises(ValueError, match=r"at least 2 dimensions, got shape \(4,\)"):
        function(torch.zeros(4), torch.zeros(5, 4))
    with pytest.raises(ValueError, match="batch dimensions"):
        function(torch.zeros(2, 3, 4), torch.zeros(3, 5, 4))
    with pytest.raises(TypeError, match="query must be a floating-point tensor"):
        function(torch.zeros(3, 4, dtype=torch.long), torch.zeros(5, 4))


def test_learned_scores_reject_wrong_sizes():
    with pytest.raises(
        ValueError,
        match=r"GeneralScore\(query_size=3, key_size=4\) expects .* got query \(2, 5\) and key \(6, 4\)",
    ):
        GeneralScore(3, 4)(torch.zeros(2, 5), torch.zeros(6, 4))
    with pytest.raises(
        ValueError,
        match=r"AdditiveScore\(query_size=3, key_size=4, hidden_size=8\) expects "
        r".* got query \(2, 3\) and key \(6, 3\)",
    ):
        AdditiveScore(3, 4, 8)(torch.zeros(2, 3), torch.zeros(6, 3))
    with pytest.raises(ValueError, match="hidden_size must be >= 1, got 0"):
        AdditiveScore(3, 4, 0)


# --- attention ---


def test_attention_matches_torch_scaled_dot_product_attention(generator):
    query = randn(2, 3, 4, generator=generator)
    key, value = randn(2, 5, 4, generator=generator), randn(2, 5, 6, generator=generator)
    mask = padding_mask([5, 3])[:, None, :]
    output, weights = attention(query, key, value, mask)
    expected = F.scaled_dot_product_attention(
        query, key, value, attn_mask=~mask
    )  # torch: True = may attend
    torch.testing.assert_close(output, expected)
    assert weights.shape == (2, 3, 5) and output.shape == (2, 3, 6)
    torch.testing.assert_close(weights.sum(-1), torch.ones(2, 3, dtype=torch.float64))


def test_attention_with_a_loop_over_keys(generator):
    query, key, value = randn_many(generator, (1, 3), (4, 3), (4, 2))
    output, weights = attention(query, key, value, score=dot_score)
    scores = [float(query[0] @ key[i]) for i in range(4)]
    a = [math.exp(s) / sum(math.exp(t) for t in scores) for s in scores]
    expected = sum(a[i] * value[i] for i in range(4))
    torch.testing.assert_close(output[0], expected)
    torch.testing.assert_close(weights[0], torch.tensor(a, dtype=torch.float64))


def test_attention_accepts_learned_scores_of_other_sizes(generator):
    query, key, value = randn_many(generator, (2, 3), (5, 4), (5, 7))
    for score in (GeneralScore(3, 4).double(), AdditiveScore(3, 4, 6).double()):
        output, weights = attention(query, key, value, score=score)
        assert output.shape == (2, 7) and weights.shape == (2, 5)


def test_attention_fully_masked_query_outputs_zeros(generator):
    query, key, value = randn_many(generator, (2, 3), (4, 3), (4, 2))
    mask = torch.tensor([[False, False, True, True], [True, True, True, True]])
    output, weights = attention(query, key, value, mask)
    assert torch.equal(output[1], torch.zeros(2, dtype=torch.float64))
    assert torch.equal(weights[1], torch.zeros(4, dtype=torch.float64))


def test_attention_rejects_bad_input():
    q, k, v = torch.zeros(2, 3), torch.zeros(4, 3), torch.zeros(4, 5)
    with pytest.raises(
        ValueError, match=r"same number of positions n_k \(dim -2\), got key 4, value 6"
    ):
        attention(q, k, torch.zeros(6, 5))
    with pytest.raises(ValueError, match=r"query \(2, 3\) and key \(4, 2\)"):
        attention(q, torch.zeros(4, 2), v)
    with pytest.raises(
        ValueError, match=r"mask of shape \(2, 3\) cannot be broadcast to scores of shape \(2, 4\)"
    ):
        attention(q, k, v, mask=torch.zeros(2, 3, dtype=torch.bool))
    with pytest.raises(TypeError, match="mask must be a bool tensor"):
        attention(q, k, v, mask=torch.zeros(2, 4))
    with pytest.raises(TypeError, match="value must be a torch.Tensor"):
        attention(q, k, [[0.0]])
    with pytest.raises(TypeError, match="score must be callable"):
        attention(q, k, v, score="dot")
    with pytest.raises(ValueError, match=r"score\(query, key\) must return shape \(2, 4\)"):
        attention(q, k, v, score=lambda query, key: query.sum(-1))
    with pytest.raises(ValueError, match="batch dimensions"):
        attention(torch.zeros(2, 2, 3), torch.zeros(3, 4, 3), torch.zeros(3, 4, 5))
