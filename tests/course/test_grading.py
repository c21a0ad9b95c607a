"""Grading helpers: the package's own answer blocked for student code only; hidden fresh inputs."""

import importlib

import course_answers
import pytest
import torch
from grading import (
    SOLVED_BY,
    PackageAnswerBlocked,
    fresh_inputs,
    package_answer_blocked,
    solving_objects,
)

from attention_to_bert import checks, masks, multihead, transformer
from attention_to_bert.attention import attention
from attention_to_bert.han import ContextAttention
from attention_to_bert.positional import PositionalEncoding
from attention_to_bert.pretraining import mask_tokens


def right_causal_mask(size):
    return torch.ones(size, size, dtype=torch.bool).triu(1)


def test_student_code_calling_the_package_answer_is_refused_and_reported(capsys):
    imported = masks.causal_mask
    namespace = {"causal_mask": imported}
    with package_answer_blocked("causal_mask", namespace):
        with pytest.raises(PackageAnswerBlocked, match="asks you to write it yourself"):
            namespace["causal_mask"](3)
        assert checks.causal_mask(lambda size: masks.causal_mask(size)) is False
        assert checks.causal_mask(right_causal_mask) is True
    assert "graded work may not call" in capsys.readouterr().out
    assert namespace["causal_mask"] is imported and masks.causal_mask is imported
    assert torch.equal(masks.causal_mask(3), right_causal_mask(3))


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
        (lambda: fresh_inputs(0), ValueError, "seed must be a positive int"),
        (lambda: fresh_inputs(True), ValueError, "seed must be"),
    ],
)
def test_bad_arguments_name_themselves(call, error, message):
    with pytest.raises(error, match=message):
        with call():
            pass


def _cross_attention(a, memory, padded, w_q, w_k, w_v):  # 6.2 with the package's attention()
    return attention(a @ w_q, memory @ w_k, memory @ w_v, mask=padded[:, None, :])


def _self_attention(x, w_q, w_k, w_v):  # 4.2 with attention()
    return attention(x @ w_q, x @ w_k, x @ w_v)


def _positional_encoding(max_len, d_model):  # 4.3 with PositionalEncoding(d, n).pe
    return PositionalEncoding(d_model, max_len).pe


def _mlm_mask(ids, special, mask_id, vocab_size):  # 7.2 with the very function asked for
    return mask_tokens(ids, special, mask_id, vocab_size, torch.default_generator)


def _han_attention(values, padding_mask, weight, bias, context):  # 2.2 with ContextAttention
    layer = ContextAttention(weight.shape[1], weight.shape[0])
    with torch.no_grad():
        layer.key_projection.weight.copy_(weight)
        layer.key_projection.bias.copy_(bias)
        layer.context.copy_(context)
    return layer(values, padding_mask)


PACKAGE_ANSWERS = {
    "cross_attention": _cross_attention,
    "self_attention": _self_attention,
    "positional_encoding": _positional_encoding,
    "mlm_mask": _mlm_mask,
    "han_attention": _han_attention,
}


@pytest.mark.parametrize("name", sorted(PACKAGE_ANSWERS))
def test_an_answer_built_from_the_package_passes_ungraded_and_gets_nothing_graded(name, capsys):
    check = getattr(checks, name)
    assert check(PACKAGE_ANSWERS[name]) is True  # the package really solves it
    with package_answer_blocked(name, globals()):  # a notebook passes its globals()
        assert check(PACKAGE_ANSWERS[name]) is False
    assert "graded work may not call the book's own" in capsys.readouterr().out


@pytest.mark.parametrize(
    ("name", "path"),
    [
        (name, path)
        for name, paths in SOLVED_BY.items()
        for path in paths
        if hasattr(checks, name)  # a line may come before its checker's branch is merged
    ],
)
def test_every_mapped_package_object_submitted_gets_nothing(name, path, capsys):
    (real,) = [obj for p, obj in solving_objects(name) if p == path]
    module, _, attribute = path.rpartition(".")
    module = importlib.import_module(f"attention_to_bert.{module}")
    check = getattr(checks, name)
    namespace = {"my_answer": real}
    with package_answer_blocked(name, namespace):
        assert check(namespace["my_answer"]) is False  # the object itself, as the answer
        # called by the student's function, through the module
        assert check(lambda *args: getattr(module, attribute)(*args)) is False
    assert "graded work may not call the book's own" in capsys.readouterr().out
    assert namespace["my_answer"] is real


def test_every_checker_has_a_line_in_the_map():
    names = {name for name in dir(checks) if callable(getattr(checks, name)) and name[0].islower()}
    assert names <= set(SOLVED_BY), "add the new checker to grading.SOLVED_BY"
    with pytest.raises(ValueError, match="no entry for checker 'nope' in grading.SOLVED_BY"):
        solving_objects("nope")


def test_package_code_still_uses_a_blocked_class_and_it_is_restored():
    original = multihead.MultiHeadAttention.forward
    with package_answer_blocked("multi_head_attention", {}):
        layer = transformer.EncoderLayer(8, 2, 16)  # builds a MultiHeadAttention inside
        layer(torch.zeros(1, 3, 8))  # runs
        with pytest.raises(PackageAnswerBlocked):
            multihead.MultiHeadAttention(8, 2)
    assert multihead.MultiHeadAttention.forward is original
    assert multihead.MultiHeadAttention(8, 2)(*[torch.zeros(1, 3, 8)] * 3)[0].shape == (1, 3, 8)


def test_hidden_inputs_vary_shapes(capsys):
    def hard_coded(model, batch, mask_id, generator, probability, nsp):  # 8.2, vocabulary of 40
        inputs, labels = mask_tokens(
            batch["input_ids"], batch["special"], mask_id, 40, generator, probability
        )
        chosen = labels != -100
        mlm, next_logits = model(inputs, batch["token_type_ids"], batch["attention_mask"], chosen)
        loss = torch.nn.functional.cross_entropy(mlm, labels[chosen])
        if nsp:
            loss = loss + torch.nn.functional.cross_entropy(next_logits, batch["nsp_labels"])
        return loss

    assert checks.pretraining_loss(hard_coded) is False  # the second model's vocabulary is 57
    assert "pass model.bert.config.vocab_size" in capsys.readouterr().out
    with fresh_inputs(12345):
        assert checks.pretraining_loss(hard_coded) is False
    assert "raised ValueError" in capsys.readouterr().out

    visible = {(6, 8, 64, 1, 4): 24576, (6, 2, 64, 4096, 4): 25165824}
    visible |= {(32, 8, 128, 8192, 2): 1073741824, (1, 1, 1, 1, 1): 2}
    assert checks.kv_cache_bytes(lambda *numbers: visible.get(numbers, 0)) is True  # 5.2 (b)
    with fresh_inputs(12345):
        assert checks.kv_cache_bytes(lambda *numbers: visible.get(numbers, 0)) is False


@pytest.mark.parametrize("name", sorted(course_answers.PACKAGE))
def test_the_course_tests_package_answers_are_blocked(name, capsys):
    namespace = {"torch": torch, "checks": checks}
    exec(course_answers.PACKAGE[name].format(f="my_answer"), namespace)
    check = getattr(checks, name)
    if name != "multi_head_attention":  # a fresh layer's random weights: wrong anyway
        assert check(namespace["my_answer"]) is True
    with package_answer_blocked(name, namespace):
        assert check(namespace["my_answer"]) is False
    assert "graded work may not call the book's own" in capsys.readouterr().out


@pytest.mark.parametrize("name", sorted(course_answers.WRONG))
def test_the_course_tests_wrong_answers_fail(name):
    """Each fails the visible test, or (fitted to the visible cases) the hidden one."""
    namespace = {"torch": torch, "checks": checks}
    exec(course_answers.WRONG[name].format(f="my_answer"), namespace)
    if getattr(checks, name)(namespace["my_answer"]):
        assert name == "kv_cache_bytes"  # a lookup table of the visible cases
        with fresh_inputs(4242):
            assert getattr(checks, name)(namespace["my_answer"]) is False


def test_feedback_leaves_the_hidden_tests_out():
    import nbformat
    from hidden_tests import HideHiddenTests

    source = "visible()\n### BEGIN HIDDEN TESTS\nhidden_test('x', f, globals(), 123)\n### END HIDDEN TESTS"
    cell = nbformat.v4.new_code_cell(source)
    cell.metadata["nbgrader"] = {"grade": True}
    cell.outputs = [
        nbformat.v4.new_output(
            "error", ename="AssertionError", evalue="x: fails", traceback=["hidden_test(123)"]
        )
    ]
    cell, _ = HideHiddenTests().preprocess_cell(cell, {}, 0)
    assert cell.source == "visible()"
    assert cell.outputs[0]["traceback"] == ["AssertionError: x: fails"]


@pytest.mark.parametrize("name", sorted(set(course_answers.PACKAGE) - {"multi_head_attention"}))
def test_hidden_cases_are_new_and_a_right_answer_still_passes_them(name, capsys):
    namespace = {"torch": torch, "checks": checks}
    exec(course_answers.PACKAGE[name].format(f="right"), namespace)
    seen = {"visible": [], "hidden": []}

    def recording(where):
        def shape(a):  # a tensor's shape, a dict of tensors' shapes (a batch), or the value
            if isinstance(a, dict):
                return {key: shape(value) for key, value in a.items()}
            return tuple(a.shape) if isinstance(a, torch.Tensor) else a

        def answer(*args):
            sizes = [shape(a) for a in args]
            seen[where].append([size for size in sizes if isinstance(size, tuple | int | dict)])
            return namespace["right"](*args)

        return answer

    check = getattr(checks, name)
    assert check(recording("visible")) is True
    with fresh_inputs(987654):
        assert check(recording("hidden")) is True, capsys.readouterr().out
    assert seen["visible"] != seen["hidden"]  # sizes vary, not only values


def _book_solutions():
    import re

    import nbformat
    from helpers import CHAPTERS

    for path in CHAPTERS:
        for cell in nbformat.read(path, as_version=4).cells:
            tags = cell.metadata.get("tags", [])
            if "solution" in tags and "# BEGIN SOLUTION" in cell.source:
                call = re.search(r"_ = checks\.(\w+)\((\w+)\)", cell.source)
                yield pytest.param(cell.source, call[0], call[1], call[2], id=call[1])


@pytest.mark.parametrize(("source", "call", "name", "answer"), list(_book_solutions()))
def test_the_books_solutions_pass_graded_and_hidden_with_the_package_blocked(
    source, call, name, answer, capsys
):
    import math

    from torch import nn
    from torch.nn import functional

    from attention_to_bert import pretraining
    from attention_to_bert.masks import masked_softmax
    from attention_to_bert.multihead import merge_heads, split_heads
    from attention_to_bert.transformer import DecoderLayer, EncoderLayer

    # what the chapters' setup cells import, which the solutions use
    namespace = {"torch": torch, "math": math, "checks": checks, "masked_softmax": masked_softmax}
    namespace |= {"nn": nn, "F": functional, "split_heads": split_heads, "merge_heads": merge_heads}
    namespace |= {"pretraining": pretraining, "EncoderLayer": EncoderLayer}  # chapter 6's page
    namespace["DecoderLayer"] = DecoderLayer  # chapter 6's page too
    exec(source.replace(call, ""), namespace)
    with package_answer_blocked(name, namespace):
        assert getattr(checks, name)(namespace[answer]) is True
        for seed in (17, 123456789):
            with fresh_inputs(seed):
                assert getattr(checks, name)(namespace[answer]) is True, capsys.readouterr().out
