"""Issue #38: wrong answers that slipped through the checkers or got a misleading message, each
caught now with a message that names the mistake."""

import math

import torch

from attention_to_bert import checks
from attention_to_bert.checks import ch03
from attention_to_bert.checks.checker import Checker


def _additive_masked_softmax(scores, mask):  # -inf added, NaN zeroed afterwards
    scores = scores + torch.zeros_like(scores).masked_fill(mask, float("-inf"))
    return torch.softmax(scores, dim=-1).nan_to_num(0.0)


def test_2_2_an_additive_inf_and_nan_to_num_answer_fails_on_the_gradient(capsys):
    def han(values, padding_mask, weight, bias, context):
        weights = _additive_masked_softmax(
            torch.tanh(values @ weight.T + bias) @ context, padding_mask
        )
        return (weights.unsqueeze(-1) * values).sum(dim=1), weights

    assert checks.han_attention(han) is False
    assert "the gradient through a fully padded sentence" in capsys.readouterr().out


def _beam_search(steps):
    def search(next_log_probs, bos_id, eos_id, beam_size, max_length):
        beams, finished = [(0.0, [])], []
        for _ in steps(max_length):
            extensions = []
            for score, tokens in beams:
                log_p = next_log_probs([bos_id, *tokens])
                extensions += [(score + v, [*tokens, t]) for t, v in enumerate(log_p.tolist())]
            extensions.sort(key=lambda extension: extension[0], reverse=True)
            beams = []
            for score, tokens in extensions[:beam_size]:
                (finished if tokens[-1] == eos_id else beams).append((score, tokens))
            if not beams:
                break
        score, tokens = max(finished or beams, key=lambda output: output[0])
        return tokens, score

    return search


def test_3_2_max_length_minus_2_steps_fails_and_is_named(capsys):
    assert checks.beam_search(_beam_search(range)) is True
    capsys.readouterr()
    assert checks.beam_search(_beam_search(lambda n: range(n - 2))) is False
    out = capsys.readouterr().out
    assert "the search stopped after 4 steps: take up to max_length=6 steps" in out


def test_3_2_an_ignored_max_length_is_named_not_called_a_beam_problem(capsys):
    assert checks.beam_search(_beam_search(lambda n: range(50))) is False
    out = capsys.readouterr().out
    assert "but max_length=4: stop after max_length steps" in out
    assert "keep only beam_size" not in out
    assert ch03  # the toy model checks max_length itself


def _cross(dim=-1, mask_rows=False):
    def answer(a, memory, padded, w_q, w_k, w_v):
        q, k, v = a @ w_q, memory @ w_k, memory @ w_v
        scores = q @ k.transpose(1, 2) / math.sqrt(k.shape[-1])
        blocked = padded[:, :, None] if mask_rows else padded[:, None, :]
        weights = torch.softmax(scores.masked_fill(blocked, float("-inf")), dim=dim)
        return weights @ v, weights

    return answer


def test_6_2_torch_softmax_over_the_wrong_axis_is_named(capsys):
    assert checks.cross_attention(_cross(dim=1)) is False
    out = capsys.readouterr().out
    assert "the softmax runs over the queries (dim 1)" in out
    assert "with exp written out" not in out


def test_6_2_a_mask_on_the_wrong_side_is_named(capsys):
    assert checks.cross_attention(_cross(mask_rows=True)) is False
    out = capsys.readouterr().out
    assert "Is the mask on the wrong side?" in out
    assert "the mask blocks queries (rows), not keys" in out


def test_6_3_a_shape_mistake_says_shapes_not_equal_looking_values(capsys):
    def step(scores, log_probs, beam_size):
        vocab = log_probs.shape[-1]
        top, index = (scores[:, None] + log_probs).flatten().topk(beam_size)
        return top[None], (index // vocab)[None], (index % vocab)[None]

    assert checks.beam_step(step) is False
    out = capsys.readouterr().out
    assert "got [(1, 3), (1, 3), (1, 3)]" in out and "expected scores" not in out


def test_1_4_a_case_name_with_a_colon_prints_its_failure_once(capsys):
    checker = Checker("demo")
    for case in ("plain", "k=2: a tie", "k=9: more than the keys"):
        checker.call(lambda: None, case=case)
    checker.report()
    out = capsys.readouterr().out
    assert out.count("returned None") == 1 and "in all 3 cases" in out


def test_a_stub_that_leaves_a_name_undefined_gets_the_stub_hint(capsys):
    def stub(input_ids, special_mask, mask_id, vocab_size):
        ...  # your code here
        return corrupted, labels  # noqa: F821 (the stub's point)

    assert checks.mlm_mask(stub) is False
    assert "is the body still `...`?" in capsys.readouterr().out


def test_mlm_mask_leaves_the_cuda_generator_alone(monkeypatch):
    called = []
    monkeypatch.setattr(torch.cuda, "manual_seed_all", lambda seed: called.append(seed))
    monkeypatch.setattr(torch.cuda, "manual_seed", lambda seed: called.append(seed))
    state = torch.random.get_rng_state()
    checks.mlm_mask(lambda *args: None)
    assert called == [] and torch.equal(torch.random.get_rng_state(), state)
