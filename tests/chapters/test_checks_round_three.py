"""Issue #49: wrong answers a class wrote that passed a checker (and got full marks in the course),
or got a message that named another mistake; each is caught now, by the notebook's checker or by
the course's hidden test, with a message that says what the student did."""

import math
import sys

import course_answers
import grading
import nbformat
import numpy as np
import pytest
import torch
import torch.nn.functional as F
from helpers import ROOT
from torch import nn

from attention_to_bert import checks, pretraining
from attention_to_bert.checks import checker as checker_module
from attention_to_bert.masks import causal_mask, masked_softmax
from attention_to_bert.multihead import merge_heads, split_heads

sys.path.insert(0, str(ROOT / "scripts" / "course"))
import make_course  # noqa: E402

SEED = 4242  # a hidden test's secret, as make_course.py draws one


def fails(name, answer, capsys):
    """Run ``checks.name(answer)``; return (passed, printed)."""
    passed = getattr(checks, name)(answer)
    return passed, capsys.readouterr().out


def graded_marks(name, answer):
    """The marks the course's test cell gives: the visible graded test, then the hidden one."""
    namespace = {}
    try:
        grading.graded_test(name, answer, namespace)
        grading.hidden_test(name, answer, namespace, SEED)
    except AssertionError:
        return 0
    return 2


# --- 1.4 top-k: k larger than the number of keys keeps them all ---


def top_k_without_min(query, key, value, k, mask):
    scores = query @ key.mT / math.sqrt(query.shape[-1])
    free = scores.masked_fill(mask, float("-inf"))
    kth = free.topk(k, dim=-1).values[..., -1:]  # k > n_k: topk raises
    weights = masked_softmax(scores, mask | (free < kth))
    return weights @ value, weights


def test_1_4_k_larger_than_the_keys_is_tested_and_named(capsys):
    passed, out = fails("top_k_attention", top_k_without_min, capsys)
    assert not passed
    assert "k larger than the number of keys" in out and "min(k, n_k)" in out
    assert graded_marks("top_k_attention", top_k_without_min) == 0


# --- 3.2 beam search: finished outputs that stay in the beam ---


def course_wrong_answer(name):
    """The course's wrong answer for ``name`` (``tests/course_answers.py``), as a function."""
    namespace = {"torch": torch}
    exec(course_answers.WRONG[name].format(f="answer"), namespace)
    return namespace["answer"]


# finished outputs keep their place in the beam (taking a slot) and drop out when beam_size better
# prefixes come: only the final beam is searched (the course grades the same answer)
finished_stay_in_the_beam = course_wrong_answer("beam_search")


def test_3_2_finished_outputs_pushed_out_of_the_beam_fail_and_are_named(capsys):
    passed, out = fails("beam_search", finished_stay_in_the_beam, capsys)
    assert not passed
    assert "a finished output was pushed out of the beam" in out
    assert graded_marks("beam_search", finished_stay_in_the_beam) == 0


# --- 4.2 masked self-attention ---


class RightMasked(nn.Module):
    def __init__(self, d_model, d_k, dropout=0.0, bias=False):
        super().__init__()
        self.w_q = nn.Linear(d_model, d_k, bias=bias)
        self.w_k = nn.Linear(d_model, d_k, bias=bias)
        self.w_v = nn.Linear(d_model, d_k, bias=bias)
        self.dropout = dropout

    def weights(self, x, lengths, dim=-1):
        scores = self.w_q(x) @ self.w_k(x).mT / math.sqrt(self.w_q.out_features)
        padded = torch.arange(x.shape[1])[None, :] >= lengths[:, None]
        return torch.softmax(scores.masked_fill(padded[:, None, :], float("-inf")), dim=dim)

    def forward(self, x, lengths):
        weights = F.dropout(self.weights(x, lengths), self.dropout, training=self.training)
        return weights @ self.w_v(x), weights


class WithBias(RightMasked):
    def __init__(self, d_model, d_k, dropout=0.0):
        super().__init__(d_model, d_k, dropout, bias=True)


class ScalesXInPlace(RightMasked):
    def forward(self, x, lengths):
        x /= 2.0  # in place
        return super().forward(x * 2.0, lengths)


class DropoutInEval(RightMasked):
    def forward(self, x, lengths):
        weights = F.dropout(self.weights(x, lengths), self.dropout, training=True)
        return weights @ self.w_v(x), weights


class SoftmaxOverQueries(RightMasked):
    def forward(self, x, lengths):
        weights = F.dropout(self.weights(x, lengths, dim=-2), self.dropout, self.training)
        return weights @ self.w_v(x), weights


class Stub(nn.Module):  # the student edition's cell: the class body is `...`
    ...


@pytest.mark.parametrize(
    ("candidate", "message"),
    [
        (WithBias, "bias=False"),
        (ScalesXInPlace, "the input `x` was modified in place"),
        (DropoutInEval, "dropout in eval mode"),
        (SoftmaxOverQueries, "the softmax ran over the queries"),
        (Stub, "the class is still the stub"),
    ],
)
def test_4_2_wrong_modules_fail_with_a_message_that_names_the_mistake(candidate, message, capsys):
    passed, out = fails("masked_self_attention", candidate, capsys)
    assert not passed and message in out, out
    assert "the input `args` was modified" not in out
    assert "__init__() takes 1 positional argument" not in out
    assert graded_marks("masked_self_attention", candidate) == 0


def test_4_2_the_right_module_passes_in_the_notebook_and_the_course(capsys):
    assert checks.masked_self_attention(RightMasked) is True
    assert graded_marks("masked_self_attention", RightMasked) == 2


# --- 5.2 (b) the size of a KV cache ---

VISIBLE = {
    (6, 8, 64, 1, 4): 24576,
    (6, 2, 64, 4096, 4): 25165824,
    (32, 8, 128, 8192, 2): 1073741824,
    (1, 1, 1, 1, 1): 2,
}


def lookup_table(*arguments):
    return VISIBLE.get(arguments, 0)


def test_5_2_a_lookup_table_of_the_visible_cases_gets_no_marks(capsys):
    assert checks.kv_cache_bytes(lookup_table) is True  # what the notebook shows: the cases
    capsys.readouterr()
    with grading.fresh_inputs(SEED):
        assert checks.kv_cache_bytes(lookup_table) is False
    assert graded_marks("kv_cache_bytes", lookup_table) == 0


def test_5_2_forgotten_bytes_are_not_called_forgotten_values(capsys):
    passed, out = fails("kv_cache_bytes", lambda L, g, d, t, b: 2 * L * g * d * t, capsys)
    assert not passed and "multiply by bytes_per_number" in out
    assert "half the answer: the cache holds keys *and* values" not in out
    passed, out = fails("kv_cache_bytes", lambda L, g, d, t, b: L * g * d * t * b, capsys)
    assert not passed and "keys *and* values" in out
    assert "multiply by bytes_per_number" not in out


def test_5_2_every_checker_of_a_cell_is_graded():
    path = next((ROOT / "book").glob("05_*.ipynb"))
    _, graded = make_course.course_notebook(nbformat.read(path, as_version=4), "05", seed=1)
    assert {"grouped_query_attention", "kv_cache_bytes"} <= {e.checker for e in graded}


def test_5_2_a_causal_mask_is_not_called_padding(capsys):
    def future_leaks(q, k, v, attn_mask=None):  # the mask is ignored
        per_group = q.shape[1] // k.shape[1]
        k, v = k.repeat_interleave(per_group, 1), v.repeat_interleave(per_group, 1)
        weights = torch.softmax(q @ k.transpose(-2, -1) / q.shape[-1] ** 0.5, dim=-1)
        return weights @ v, weights

    passed, out = fails("grouped_query_attention", future_leaks, capsys)
    assert not passed and "padded" not in out and "future positions" in out


# --- 5.3 cached decoding ---


def full_pass_per_layer(layers, x):
    """No cache: each layer sees the whole sequence at once, under the causal mask."""
    h = x
    for layer in layers:
        h = h + layer(h, h, h, attn_mask=causal_mask(x.shape[1]))[0]
    return h


def full_pass_by_projections(layers, x):
    """No cache either, with the projections called by hand: each once per layer."""
    h = x
    for layer in layers:
        heads = layer.num_heads
        q = split_heads(layer.q_proj(h), heads)
        k, v = split_heads(layer.k_proj(h), heads), split_heads(layer.v_proj(h), heads)
        scores = q @ k.transpose(-2, -1) / layer.head_dim**0.5
        scores = scores.masked_fill(causal_mask(x.shape[1]), float("-inf"))
        h = h + layer.out_proj(merge_heads(torch.softmax(scores, dim=-1) @ v))
    return h


@pytest.mark.parametrize("wrong", [full_pass_per_layer, full_pass_by_projections])
def test_5_3_a_full_causal_pass_without_a_cache_fails(wrong, capsys):
    passed, out = fails("cached_decoding", wrong, capsys)
    assert not passed and "one position at a time" in out
    assert graded_marks("cached_decoding", wrong) == 0


def test_5_3_hidden_test_draws_other_sizes_with_its_own_generator(monkeypatch):
    seen = []

    def recording(layers, x):
        seen.append((len(layers), tuple(x.shape), layers[0].num_heads))
        return None

    reseeded = []
    monkeypatch.setattr(torch.cuda, "manual_seed_all", lambda seed: reseeded.append(seed))
    monkeypatch.setattr(torch.cuda, "manual_seed", lambda seed: reseeded.append(seed))
    monkeypatch.setattr(torch, "manual_seed", lambda seed: reseeded.append(seed))
    state = torch.random.get_rng_state()
    checks.cached_decoding(recording)
    visible = list(seen)
    seen.clear()
    with grading.fresh_inputs(SEED):
        checks.cached_decoding(recording)
    assert visible and not set(seen) & set(visible)
    assert reseeded == [] and torch.equal(torch.random.get_rng_state(), state)


@pytest.mark.parametrize("name", ["masked_self_attention", "cached_decoding"])
def test_the_checkers_leave_the_cpu_and_cuda_generators_alone(name, monkeypatch):
    reseeded = []
    monkeypatch.setattr(torch.cuda, "manual_seed_all", lambda seed: reseeded.append(seed))
    monkeypatch.setattr(torch.cuda, "manual_seed", lambda seed: reseeded.append(seed))
    torch.default_generator.manual_seed(321)
    state = torch.random.get_rng_state()
    getattr(checks, name)({"masked_self_attention": RightMasked}.get(name, full_pass_per_layer))
    assert reseeded == [] and torch.equal(torch.random.get_rng_state(), state)


# --- 8.2 the pre-training loss ---


def pretraining_answer(fixed_mask_id=None, vocab_size=None, reduction="mean", targets="labels"):
    def answer(model, batch, mask_id, generator, probability, nsp):
        vocab = vocab_size or model.bert.config.vocab_size
        inputs, labels = pretraining.mask_tokens(
            batch["input_ids"],
            batch["special"],
            fixed_mask_id or mask_id,
            vocab,
            generator,
            probability,
        )
        chosen = labels != -100
        mlm, nsp_logits = model(inputs, batch["token_type_ids"], batch["attention_mask"], chosen)
        wanted = inputs[chosen] if targets == "inputs" else labels[chosen]
        loss = F.cross_entropy(mlm, wanted, reduction=reduction)
        if nsp:
            nsp_labels = batch["nsp_labels"]
            if targets == "nsp_everywhere":  # a sentence alone counted as "is next"
                nsp_labels = nsp_labels.clamp_min(0)
            loss = loss + F.cross_entropy(nsp_logits, nsp_labels, reduction=reduction)
        return loss

    return answer


@pytest.mark.parametrize(
    ("wrong", "message"),
    [
        (pretraining_answer(fixed_mask_id=4), "[MASK] = 4, not the mask_id given"),
        (pretraining_answer(vocab_size=40), "model.bert.config.vocab_size"),
        (pretraining_answer(reduction="sum"), "reduction='sum'"),
        (pretraining_answer(targets="inputs"), "the targets are the masked inputs"),
        (pretraining_answer(targets="nsp_everywhere"), "a sentence alone"),
    ],
)
def test_8_2_wrong_losses_fail_and_are_named(wrong, message, capsys):
    passed, out = fails("pretraining_loss", wrong, capsys)
    assert not passed and message in out, out
    assert "the masks must be the ones" not in out
    assert graded_marks("pretraining_loss", wrong) == 0


def test_8_2_the_mask_id_changes_in_the_hidden_test():
    seen = []
    right = pretraining_answer()

    def recording(model, batch, mask_id, generator, probability, nsp):
        seen.append(mask_id)
        return right(model, batch, mask_id, generator, probability, nsp)

    assert checks.pretraining_loss(recording)
    visible = set(seen)
    seen.clear()
    with grading.fresh_inputs(SEED):
        assert checks.pretraining_loss(recording)
    assert len(visible) >= 2 and set(seen) - visible


def test_hidden_seed_is_restored():
    assert checker_module._hidden_seed is None


# --- every hidden test draws other inputs ---


def _fingerprint(value):
    """What a checker handed over, as a comparable value: shapes and sums of tensors, numbers, the
    shape of what a callable (a toy language model) returns, the sizes of modules."""
    if isinstance(value, torch.Tensor):
        return ("tensor", tuple(value.shape), round(float(value.detach().double().sum()), 6))
    if isinstance(value, np.ndarray):  # features and split names (Exercise 8.4's static baseline)
        return ("array", value.shape, value.dtype.str, hash(value.tobytes()))
    if isinstance(value, dict):
        return tuple(sorted((key, _fingerprint(item)) for key, item in value.items()))
    if isinstance(value, list | tuple):
        return tuple(_fingerprint(item) for item in value)
    if isinstance(value, nn.Module):
        return tuple(_fingerprint(p) for p in value.parameters())
    if callable(value):
        return ("callable", tuple(value([1]).shape))
    return value


@pytest.mark.parametrize("name", sorted(grading.SOLVED_BY))
def test_every_hidden_test_draws_other_inputs_than_the_visible_one(name):
    seen = []

    def record(*args):
        seen.append(_fingerprint(args))

    class Recorder(nn.Module):
        def __init__(self, *args):
            super().__init__()
            seen.append(_fingerprint(args))

        def forward(self, *args):
            record(*args)

    candidate = Recorder if name == "masked_self_attention" else record
    if name == "task_heads":  # three classes: their sizes are what the hidden test changes
        candidate = (Recorder, Recorder, Recorder)
    if name == "bert_by_hand":  # a pair of functions (Exercise 7.7)
        candidate = (record, record)
    getattr(checks, name)(candidate)
    visible = list(seen)
    seen.clear()
    with grading.fresh_inputs(SEED):
        getattr(checks, name)(candidate)
    assert visible and len(seen) == len(visible), name
    assert all(hidden != shown for hidden, shown in zip(seen, visible, strict=True)), name
