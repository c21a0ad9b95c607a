"""The chapter-3 checker accepts a right attention step and names the typical mistakes."""

import torch

from attention_to_bert import checks


def right(state, encoder_outputs, lengths):
    scores = torch.einsum("bd,bsd->bs", state, encoder_outputs)
    padded = torch.arange(encoder_outputs.shape[1]) >= lengths[:, None]
    weights = torch.softmax(scores.masked_fill(padded, float("-inf")), dim=-1)
    return (weights.unsqueeze(-1) * encoder_outputs).sum(1), weights


def no_mask(state, encoder_outputs, lengths):
    weights = torch.softmax(torch.einsum("bd,bsd->bs", state, encoder_outputs), dim=-1)
    return (weights.unsqueeze(-1) * encoder_outputs).sum(1), weights


def softmax_over_batch(state, encoder_outputs, lengths):
    scores = torch.einsum("bd,bsd->bs", state, encoder_outputs)
    padded = torch.arange(encoder_outputs.shape[1]) >= lengths[:, None]
    weights = torch.softmax(scores.masked_fill(padded, -1e9), dim=0).masked_fill(padded, 0.0)
    return (weights.unsqueeze(-1) * encoder_outputs).sum(1), weights


def context_not_summed(state, encoder_outputs, lengths):
    _, weights = right(state, encoder_outputs, lengths)
    return weights.unsqueeze(-1) * encoder_outputs, weights


def off_by_one_mask(state, encoder_outputs, lengths):
    scores = torch.einsum("bd,bsd->bs", state, encoder_outputs)
    padded = torch.arange(encoder_outputs.shape[1]) > lengths[:, None]
    weights = torch.softmax(scores.masked_fill(padded, float("-inf")), dim=-1)
    return (weights.unsqueeze(-1) * encoder_outputs).sum(1), weights


def scaled(state, encoder_outputs, lengths):
    return right(state / state.shape[-1] ** 0.5, encoder_outputs, lengths)


def raises(state, encoder_outputs, lengths):
    return state @ encoder_outputs  # wrong shapes: matmul error


def only_context(state, encoder_outputs, lengths):
    return right(state, encoder_outputs, lengths)[0]


def test_accepts_a_right_answer(capsys):
    assert checks.attention_step(right)
    assert "passes all 3 test cases" in capsys.readouterr().out


def test_catches_attention_on_padding(capsys):
    assert not checks.attention_step(no_mask)
    assert "masked (padded) positions get weight" in capsys.readouterr().out
    assert not checks.attention_step(off_by_one_mask)
    assert "masked (padded) positions get weight" in capsys.readouterr().out


def test_catches_a_softmax_over_the_wrong_axis(capsys):
    assert not checks.attention_step(softmax_over_batch)
    assert "do not sum to 1" in capsys.readouterr().out


def test_catches_wrong_context_and_wrong_values(capsys):
    assert not checks.attention_step(context_not_summed)
    out = capsys.readouterr().out
    assert "context: expected shape (3, 4), got (3, 5, 4)" in out
    assert not checks.attention_step(scaled)
    assert "weights: values differ" in capsys.readouterr().out


def test_reports_exceptions_and_wrong_return_types(capsys):
    assert not checks.attention_step(raises)
    assert "raised RuntimeError" in capsys.readouterr().out
    assert not checks.attention_step(only_context)
    assert "expected a pair (context, weights), got Tensor" in capsys.readouterr().out
