"""The chapter 2 checker accepts a right HAN attention layer and names what is wrong with typical mistakes."""

import torch

from attention_to_bert import checks
from attention_to_bert.masks import masked_softmax


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


# Exercise 2.2: word-level erasure, ``delete_tokens(word_ids, rows, columns, pad_id)``


def deleted_right(word_ids, rows, columns, pad_id):
    """An independent answer: gather the tokens that stay, by index."""
    documents, _, words = word_ids.shape
    out = word_ids.clone()
    positions = torch.arange(words)[None, :].expand(documents, words)
    source = positions + (positions >= columns[:, None]).long()  # skip the deleted token
    index = torch.arange(documents)
    sentence = word_ids[index, rows]
    padded = torch.cat([sentence, torch.full((documents, 1), pad_id)], dim=1)
    out[index, rows] = padded.gather(1, source)
    return out


def test_delete_tokens_accepts_the_right_answer(capsys):
    assert checks.delete_tokens(deleted_right)
    assert "passes all 4 test cases" in capsys.readouterr().out


def test_delete_tokens_passes_on_other_sizes_and_values(capsys):
    from grading import fresh_inputs

    with fresh_inputs(777):
        assert checks.delete_tokens(deleted_right)


def test_delete_tokens_catches_padding_out_instead_of_deleting(capsys):
    def blanked(word_ids, rows, columns, pad_id):
        out = word_ids.clone()
        out[torch.arange(len(rows)), rows, columns] = pad_id
        return out

    assert not checks.delete_tokens(blanked)
    assert "replaced by padding, not deleted" in capsys.readouterr().out


def test_delete_tokens_catches_deleting_in_every_sentence(capsys):
    def every_sentence(word_ids, rows, columns, pad_id):
        out = word_ids.clone()
        for d, column in enumerate(columns.tolist()):
            rest = torch.cat(
                [word_ids[d, :, column + 1 :], torch.full_like(word_ids[d, :, :1], pad_id)], 1
            )
            out[d, :, column:] = rest
        return out

    assert not checks.delete_tokens(every_sentence)
    assert "other sentences changed" in capsys.readouterr().out


def test_delete_tokens_catches_a_roll_that_wraps_the_token_round(capsys):
    def rolled(word_ids, rows, columns, pad_id):
        out = word_ids.clone()
        for d, (row, column) in enumerate(zip(rows.tolist(), columns.tolist(), strict=True)):
            out[d, row, column:] = word_ids[d, row, column:].roll(-1)
        return out

    assert not checks.delete_tokens(rolled)
    assert "ending in" in capsys.readouterr().out


def test_delete_tokens_catches_a_hard_coded_padding_id(capsys):
    def pad_zero(word_ids, rows, columns, pad_id):
        return deleted_right(word_ids, rows, columns, 0)

    assert not checks.delete_tokens(pad_zero)
    assert "another padding id" in capsys.readouterr().out


def test_delete_tokens_catches_changing_the_input(capsys):
    def in_place(word_ids, rows, columns, pad_id):
        word_ids[:] = deleted_right(word_ids, rows, columns, pad_id)
        return word_ids

    assert not checks.delete_tokens(in_place)
    assert "modified in place" in capsys.readouterr().out


# Exercise 2.4: supervision on the deciding sentence, ``deciding_sentence_loss(weights, deciding)``


def loss_right(sentence_weights, deciding):
    """An independent answer: a one-hot mask picks each deciding weight."""
    one_hot = torch.nn.functional.one_hot(deciding, sentence_weights.shape[1]).bool()
    picked = sentence_weights.masked_select(one_hot)
    return -torch.log(torch.maximum(picked, torch.tensor(1e-8))).sum() / len(deciding)


def test_deciding_loss_accepts_the_right_answer(capsys):
    assert checks.deciding_sentence_loss(loss_right)
    assert "passes all 3 test cases" in capsys.readouterr().out


def test_deciding_loss_passes_on_other_sizes(capsys):
    from grading import fresh_inputs

    with fresh_inputs(555):
        assert checks.deciding_sentence_loss(loss_right)


def test_deciding_loss_catches_a_sum(capsys):
    def summed(sentence_weights, deciding):
        return loss_right(sentence_weights, deciding) * len(deciding)

    assert not checks.deciding_sentence_loss(summed)
    assert "take the mean" in capsys.readouterr().out


def test_deciding_loss_catches_the_sign(capsys):
    def plus(sentence_weights, deciding):
        return -loss_right(sentence_weights, deciding)

    assert not checks.deciding_sentence_loss(plus)
    assert "minus the log" in capsys.readouterr().out


def test_deciding_loss_catches_the_largest_weight(capsys):
    def largest(sentence_weights, deciding):
        return -sentence_weights.max(-1).values.log().mean()

    assert not checks.deciding_sentence_loss(largest)
    assert "largest weight" in capsys.readouterr().out


def test_deciding_loss_catches_a_missing_clamp(capsys):
    def unclamped(sentence_weights, deciding):
        picked = sentence_weights[torch.arange(len(deciding)), deciding]
        return -picked.log().mean()

    assert not checks.deciding_sentence_loss(unclamped)
    assert "underflowed to 0" in capsys.readouterr().out


def test_deciding_loss_catches_a_detached_loss(capsys):
    def detached(sentence_weights, deciding):
        return loss_right(sentence_weights.detach(), deciding)

    assert not checks.deciding_sentence_loss(detached)
    assert "detached" in capsys.readouterr().out


def similarity_right(states, padding_mask, rows):
    index = torch.arange(len(rows))
    target = states[index, rows].unsqueeze(1)
    cosine = torch.nn.functional.cosine_similarity(states, target, dim=-1)
    others = ~padding_mask
    others[index, rows] = False
    return (cosine * others).sum(-1) / others.sum(-1)


def test_similarity_accepts_the_right_answer(capsys):
    assert checks.similarity_to_row(similarity_right)
    assert "passes all 3 test cases" in capsys.readouterr().out


def test_similarity_passes_on_other_sizes(capsys):
    from grading import fresh_inputs

    with fresh_inputs(778):
        assert checks.similarity_to_row(similarity_right)


def test_similarity_catches_counting_the_rows_own_state(capsys):
    def with_itself(states, padding_mask, rows):
        target = states[torch.arange(len(rows)), rows].unsqueeze(1)
        cosine = torch.nn.functional.cosine_similarity(states, target, dim=-1)
        real = (~padding_mask).float()
        return (cosine * real).sum(-1) / real.sum(-1)

    assert not checks.similarity_to_row(with_itself)
    assert "counts the row's own state" in capsys.readouterr().out


def test_similarity_catches_ignoring_the_padding(capsys):
    def unmasked(states, padding_mask, rows):
        index = torch.arange(len(rows))
        target = states[index, rows].unsqueeze(1)
        cosine = torch.nn.functional.cosine_similarity(states, target, dim=-1)
        cosine[index, rows] = 0.0
        return cosine.sum(-1) / (states.shape[1] - 1)

    assert not checks.similarity_to_row(unmasked)
    assert "padded sentences too" in capsys.readouterr().out


def test_similarity_catches_a_dot_product(capsys):
    def dot(states, padding_mask, rows):
        index = torch.arange(len(rows))
        target = states[index, rows].unsqueeze(1)
        others = ~padding_mask
        others[index, rows] = False
        return ((states * target).sum(-1) * others).sum(-1) / others.sum(-1)

    assert not checks.similarity_to_row(dot)
    assert "a dot product, not the cosine" in capsys.readouterr().out


def test_similarity_catches_the_stub_and_a_mask_changed_in_place(capsys):
    assert not checks.similarity_to_row(lambda states, padding_mask, rows: None)
    assert "returned None" in capsys.readouterr().out

    def in_place(states, padding_mask, rows):
        padding_mask[torch.arange(len(rows)), rows] = True  # marks the row: a side effect
        return similarity_right(states, ~(~padding_mask), rows)

    assert not checks.similarity_to_row(in_place)
    assert "modified in place" in capsys.readouterr().out


def test_exercise_2_5s_broken_attention_is_caught_one_bug_at_a_time(capsys):
    """Exercise 2.5 is a debug task: the checker names the softmax's dimension first; with that
    fixed, the NaN of a fully padded sentence; with both fixed (as the folded solution does), it
    passes. The broken function is read from the lesson, so the test follows the text."""
    import json

    from helpers import ROOT

    cells = json.loads((ROOT / "book" / "02_han.ipynb").read_text(encoding="utf-8"))["cells"]
    (source,) = [
        "".join(cell["source"])
        for cell in cells
        if cell["cell_type"] == "code" and "def broken_han_attention(" in "".join(cell["source"])
    ]
    source = source.split("\n\n\n_ = checks")[0]  # the function, not its checker call
    assert 'float("-inf")' in source and "dim=0" in source, source

    def answer(text):
        namespace = {"torch": torch}
        exec(text, namespace)
        return namespace["broken_han_attention"]

    assert not checks.han_attention(answer(source))
    report = capsys.readouterr().out
    assert "take the softmax over the last dimension" in report
    assert "NaN" not in report  # the first bug hides the second
    one_fixed = source.replace("dim=0", "dim=-1")
    assert not checks.han_attention(answer(one_fixed))
    assert "a fully masked row gives NaN" in capsys.readouterr().out
    both_fixed = one_fixed.replace('float("-inf")', "-1e9").replace(
        "dim=-1)", "dim=-1) * ~padding_mask"
    )
    assert checks.han_attention(answer(both_fixed))
    assert "passes all 4 test cases" in capsys.readouterr().out
