"""The chapter-3 checker accepts a right beam search and names the typical mistakes."""

import math

import torch

from attention_to_bert import checks

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
    assert "passes all 8 test cases" in capsys.readouterr().out


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
