"""The chapter-3 checker accepts a right attention step and names the typical mistakes."""

import math

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


# Exercise 3.2: beam search. A right answer and typical wrong ones.


def extend(next_log_probs, bos_id, beams, variant):
    """Every extension (total log-probability, tokens) of every prefix in the beam."""
    candidates = []
    for score, tokens in beams:
        log_p = next_log_probs([bos_id, *tokens])
        if variant == "in place":
            log_p += score
            total = log_p
        else:
            total = score + log_p
        candidates += [(value, [*tokens, token]) for token, value in enumerate(total.tolist())]
    return sorted(candidates, key=lambda c: -c[0])


def beam(next_log_probs, bos_id, eos_id, beam_size, max_length, *, variant=""):
    beams, finished = [(0.0, [])], []
    keep = {"greedy": 1, "all": None}.get(variant, beam_size)
    for _ in range(max_length):
        candidates = extend(next_log_probs, bos_id, beams, variant)
        candidates = [c for c in candidates if c[0] > float("-inf")][:keep]
        if variant == "first finished" and any(t[-1] == eos_id for _, t in candidates):
            return next((t, s) for s, t in candidates if t[-1] == eos_id)
        done = variant != "extend finished"
        finished += [(s, t) for s, t in candidates if t[-1] == eos_id and done]
        beams = [(s, t) for s, t in candidates if t[-1] != eos_id or not done]
        if not beams:
            break
    if variant == "normalised":
        finished = [(score / len(tokens), tokens) for score, tokens in finished]
    score, tokens = max(finished or beams, key=lambda c: c[0])
    score = math.exp(score) if variant == "probability" else score
    tokens = {"no eos": tokens[:-1], "with bos": [bos_id, *tokens]}.get(variant, tokens)
    return tokens, score


def beam_with(variant):
    return lambda *args: beam(*args, variant=variant)


def test_beam_search_accepts_a_right_answer(capsys):
    assert checks.beam_search(beam)
    assert "passes all 6 test cases" in capsys.readouterr().out


def test_beam_search_accepts_tensors_and_tensor_prefixes(capsys):
    def with_tensors(next_log_probs, bos_id, eos_id, beam_size, max_length):
        def as_tensor(prefix):
            return next_log_probs(torch.tensor(prefix))

        tokens, score = beam(as_tensor, bos_id, eos_id, beam_size, max_length)
        return torch.tensor(tokens), torch.tensor(score)

    assert checks.beam_search(with_tensors)


def test_beam_search_names_greedy_and_exhaustive_search(capsys):
    assert not checks.beam_search(beam_with("greedy"))
    assert "that is the greedy output" in capsys.readouterr().out
    assert not checks.beam_search(beam_with("all"))
    assert "that is the exhaustive search's answer" in capsys.readouterr().out


def test_beam_search_names_finishing_mistakes(capsys):
    assert not checks.beam_search(beam_with("first finished"))
    out = capsys.readouterr().out
    assert "a poor output finishes first" in out and "finished earlier" in out
    assert not checks.beam_search(beam_with("extend finished"))
    assert "asked next_log_probs to continue the finished" in capsys.readouterr().out


def test_beam_search_names_output_format_mistakes(capsys):
    assert not checks.beam_search(beam_with("no eos"))
    assert "include the final <eos>" in capsys.readouterr().out
    assert not checks.beam_search(beam_with("with bos"))
    assert "not <bos> itself" in capsys.readouterr().out
    assert not checks.beam_search(beam_with("probability"))
    assert "a probability: return its log" in capsys.readouterr().out
    assert not checks.beam_search(beam_with("normalised"))
    assert "divided by the length" in capsys.readouterr().out


def test_beam_search_detects_an_in_place_edit(capsys):
    assert not checks.beam_search(beam_with("in place"))
    assert "changed in place" in capsys.readouterr().out


def test_beam_search_reports_stubs(capsys):
    def stub(next_log_probs, bos_id, eos_id, beam_size, max_length): ...

    assert not checks.beam_search(stub)
    assert "returned None" in capsys.readouterr().out
