"""The chapter 2 checker accepts a right HAN attention layer and names what is wrong with typical mistakes."""

import torch

from attention_to_bert import checks
from attention_to_bert.attention import masked_softmax


def right(values, padding_mask, weight, bias, context):
    keys = torch.tanh(values @ weight.T + bias)
    weights = masked_softmax(keys @ context, padding_mask)
    return (weights.unsqueeze(-1) * values).sum(-2), weights


def test_accepts_the_right_answer(capsys):
    assert checks.han_attention(right)
    assert "passes all 4 test cases" in capsys.readouterr().out


def test_accepts_the_packages_context_attention(capsys):
    from attention_to_bert.han import ContextAttention

    def with_module(values, padding_mask, weight, bias, context):
        layer = ContextAttention(values.shape[-1], weight.shape[0])
        with torch.no_grad():
            layer.key_projection.weight.copy_(weight)
            layer.key_projection.bias.copy_(bias)
            layer.context.copy_(context)
        return layer(values, padding_mask)

    assert checks.han_attention(with_module)


def test_catches_ignoring_the_mask(capsys):
    def no_mask(values, padding_mask, weight, bias, context):
        weights = torch.softmax(torch.tanh(values @ weight.T + bias) @ context, -1)
        return (weights.unsqueeze(-1) * values).sum(-2), weights

    assert not checks.han_attention(no_mask)
    assert "masked (padded) positions get weight" in capsys.readouterr().out


def test_catches_nan_on_a_fully_padded_row(capsys):
    def minus_infinity(values, padding_mask, weight, bias, context):
        scores = (torch.tanh(values @ weight.T + bias) @ context).masked_fill(
            padding_mask, float("-inf")
        )
        weights = torch.softmax(scores, -1)
        return (weights.unsqueeze(-1) * values).sum(-2), weights

    assert not checks.han_attention(minus_infinity)
    assert "a fully masked row gives NaN" in capsys.readouterr().out


def test_catches_missing_tanh(capsys):
    def linear_keys(values, padding_mask, weight, bias, context):
        weights = masked_softmax((values @ weight.T + bias) @ context, padding_mask)
        return (weights.unsqueeze(-1) * values).sum(-2), weights

    assert not checks.han_attention(linear_keys)
    assert "without the tanh" in capsys.readouterr().out


def test_catches_softmax_over_the_wrong_axis(capsys):
    def wrong_axis(values, padding_mask, weight, bias, context):
        scores = (torch.tanh(values @ weight.T + bias) @ context).masked_fill(padding_mask, -1e9)
        weights = torch.softmax(scores, 0).masked_fill(padding_mask, 0.0)
        return (weights.unsqueeze(-1) * values).sum(-2), weights

    assert not checks.han_attention(wrong_axis)
    assert "do not sum to 1" in capsys.readouterr().out


def test_catches_pooling_the_keys_and_a_wrong_return(capsys):
    def pools_keys(values, padding_mask, weight, bias, context):
        keys = torch.tanh(values @ weight.T + bias)
        weights = masked_softmax(keys @ context, padding_mask)
        return (weights.unsqueeze(-1) * keys).sum(-2), weights

    assert not checks.han_attention(pools_keys)
    assert "pooled" in capsys.readouterr().out
    assert not checks.han_attention(lambda *args: right(*args)[1])
    assert "expected a pair" in capsys.readouterr().out


def test_catches_the_student_stub_that_returns_none(capsys):
    def stub(values, padding_mask, weight, bias, context): ...

    assert not checks.han_attention(stub)
    assert "returned None" in capsys.readouterr().out


def test_accepts_an_answer_built_from_nn_linear(capsys):
    """The inputs are float32, so a student's nn.Linear runs (float64 inputs gave a raw dtype error)."""

    def with_linear(values, padding_mask, weight, bias, context):
        projection = torch.nn.Linear(weight.shape[1], weight.shape[0])
        with torch.no_grad():
            projection.weight.copy_(weight)
            projection.bias.copy_(bias)
        weights = masked_softmax(torch.tanh(projection(values)) @ context, padding_mask)
        return (weights.unsqueeze(-1) * values).sum(-2), weights

    assert checks.han_attention(with_linear)
    assert "passes all 4 test cases" in capsys.readouterr().out


def test_catches_an_input_modified_in_place(capsys):
    def in_place(values, padding_mask, weight, bias, context):
        pooled, weights = right(values, padding_mask, weight, bias, context)
        values.zero_()  # e.g. a masked_fill_ on the student's inputs
        return pooled, weights

    assert not checks.han_attention(in_place)
    assert "the input `values` was modified in place" in capsys.readouterr().out
