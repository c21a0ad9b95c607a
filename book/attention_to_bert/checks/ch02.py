"""The checkers of chapter 2: HAN's attention layer (context vector as the query)."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import torch

from attention_to_bert.checks.ch01 import EMPTY_ROW_NAN
from attention_to_bert.checks.checker import Checker, reference_softmax, vary


def han_attention(candidate: Callable[..., Any]) -> bool:
    """Check ``candidate(values, padding_mask, weight, bias, context) -> (pooled, weights)``: weights =
    masked softmax of tanh(W h_i + b) · context (0 on padding), pooled = Σ_i weights_i h_i.

    The inputs are float32, the dtype of ``nn.Linear`` and of the chapter's models, so an answer built
    from torch modules runs as it is; an input changed in place is reported."""
    checker = Checker("han_attention")
    generator = torch.Generator().manual_seed(2)
    cases = [  # (case, lengths, feature size, attention size): sizes grow in a hidden test
        ("no padding", [*vary(5)] * 3, *vary(6, 4)),
        ("sentences of different lengths", [*vary(5), 3, 1], *vary(6, 4)),
        ("a fully padded row (a padded sentence)", [*vary(4), 0, 2], *vary(6, 4)),
    ]
    for case, lengths, features, size in cases:
        padding_mask = torch.arange(max(lengths)) >= torch.tensor(lengths)[:, None]
        values = torch.randn(*padding_mask.shape, features, generator=generator)
        values = values.masked_fill(padding_mask.unsqueeze(-1), 0.0)
        weight = torch.randn(size, features, generator=generator)
        bias = torch.randn(size, generator=generator)
        context = 2 * torch.randn(size, generator=generator)  # a peaked softmax
        arguments = (values, padding_mask, weight, bias, context)
        pair = "(pooled, weights)"
        passed = [argument.clone() for argument in arguments]
        result = checker.call(candidate, *passed, case=case, pair=pair)
        pooled, weights = result or (None, None)  # None: nothing to check
        # the expected answer in float64, from the same float32 inputs
        keys = values.double() @ weight.double().T + bias.double()
        expected = reference_softmax(torch.tanh(keys) @ context.double(), padding_mask)
        without_tanh = reference_softmax(keys @ context.double(), padding_mask)
        tanh = [(without_tanh, "they match keys without the tanh: u_i = tanh(W h_i + b)")]
        if checker.compare(weights, expected, f"{case}: weights", tanh, masked=padding_mask):
            pooled_what = f"{case}: pooled (the weighted sum of the values h_i, not of the keys)"
            checker.compare(
                pooled, (expected.unsqueeze(-1) * values.double()).sum(dim=-2), pooled_what
            )
    if not checker.problems:
        _gradient(checker, candidate, arguments)  # the last case: a fully padded sentence
    return checker.report()


def _gradient(checker: Checker, candidate: Callable[..., Any], arguments: tuple) -> None:
    """No gradient may be NaN, even through a fully padded sentence."""
    case = "the gradient through a fully padded sentence"
    leaves = [t.clone().requires_grad_(t.is_floating_point()) for t in arguments]
    result = checker.call(candidate, *leaves, case=case, pair="(pooled, weights)")
    if result is None or not isinstance(result[0], torch.Tensor) or not result[0].requires_grad:
        checker.expect(result is None, f"{case}: pooled does not depend on the inputs (detached?)")
        return
    differentiable = [leaf for leaf in leaves if leaf.requires_grad]
    probe = torch.linspace(-1.0, 1.0, result[0].numel()).reshape(result[0].shape)
    try:
        gradients = torch.autograd.grad(
            (result[0] * probe).sum(), differentiable, allow_unused=True
        )
    except Exception as error:  # report, don't crash
        checker.expect(False, f"{case}: no gradient flows back: {error}")
        return
    names = ("values", "weight", "bias", "context")
    for name, gradient in zip(names, gradients, strict=True):
        if gradient is not None and gradient.isnan().any():
            checker.expect(False, f"{case}: the gradient of the {name} {EMPTY_ROW_NAN}")
            return


def delete_tokens(candidate: Callable[..., Any]) -> bool:
    """Check ``candidate(word_ids, rows, columns, pad_id) -> word_ids``: in each document ``d`` of a
    ``(documents, sentences, words)`` grid, token ``columns[d]`` of sentence ``rows[d]`` is deleted;
    the tokens after it move one place left and the sentence ends in one more ``pad_id``; every other
    sentence is unchanged, and so is the input."""
    checker = Checker("delete_tokens")
    generator = torch.Generator().manual_seed(3)
    cases = [  # (case, documents, sentences, words, pad_id): sizes grow in a hidden test
        ("one document", *vary(1, 3, 6), 0),
        ("several documents", *vary(4, 3, 7), 0),
        ("a sentence that fills its row", *vary(3, 2, 5), 0),
        ("another padding id", *vary(3, 3, 6), 9),
    ]
    for case, documents, sentences, words, pad_id in cases:
        lengths = torch.randint(2, words + 1, (documents, sentences), generator=generator)
        if case == "a sentence that fills its row":
            lengths[:] = words
        word_ids = torch.randint(10, 60, (documents, sentences, words), generator=generator)
        word_ids = word_ids.masked_fill(torch.arange(words) >= lengths[..., None], pad_id)
        rows = torch.randint(0, sentences, (documents,), generator=generator)
        real = lengths[torch.arange(documents), rows]
        columns = (torch.rand(documents, generator=generator) * real).long()
        columns[0] = real[0] - 1  # the last real token of the first document
        result = checker.call(candidate, word_ids.clone(), rows, columns, pad_id, case=case)
        expected = word_ids.clone()
        blanked = word_ids.clone()  # the usual mistake: the token padded out, not deleted
        for d, (row, column) in enumerate(zip(rows.tolist(), columns.tolist(), strict=True)):
            kept = torch.cat([word_ids[d, row, :column], word_ids[d, row, column + 1 :]])
            expected[d, row] = torch.cat([kept, torch.tensor([pad_id])])
            blanked[d, row, column] = pad_id
        if not isinstance(result, torch.Tensor) or result.shape != expected.shape:
            shape = tuple(result.shape) if isinstance(result, torch.Tensor) else type(result)
            checker.expect(
                result is None,
                f"{case}: expected a tensor of shape {tuple(expected.shape)}, got {shape}",
            )
            continue
        if torch.equal(result, blanked) and not torch.equal(blanked, expected):
            checker.expect(
                False,
                f"{case}: the token was replaced by padding, not deleted: the tokens after it move "
                "one place left and the padding goes at the end",
            )
            continue
        others = torch.ones(documents, sentences, dtype=torch.bool)
        others[torch.arange(documents), rows] = False
        if not torch.equal(result[others], word_ids[others]):
            checker.expect(
                False, f"{case}: other sentences changed: delete in sentence rows[d] only"
            )
            continue
        checker.expect(
            torch.equal(result, expected),
            f"{case}: the sentence rows[d] is not the sentence without its token columns[d], "
            f"ending in {pad_id} (pad_id)",
        )
    return checker.report()


def deciding_sentence_loss(candidate: Callable[..., Any]) -> bool:
    """Check ``candidate(sentence_weights, deciding) -> loss``: the mean over documents of
    ``-log(max(sentence_weights[d, deciding[d]], 1e-8))``, a scalar tensor through which gradients
    flow back to the weights."""
    checker = Checker("deciding_sentence_loss")
    generator = torch.Generator().manual_seed(4)
    cases = [  # (case, documents, sentences): sizes grow in a hidden test
        ("several documents", *vary(5, 4)),
        ("a document of two sentences", *vary(1, 2)),
        ("a weight that underflowed to 0", *vary(3, 4)),
    ]
    for case, documents, sentences in cases:
        lengths = torch.randint(1, sentences + 1, (documents,), generator=generator)
        padding = torch.arange(sentences) >= lengths[:, None]
        scores = 3 * torch.randn(documents, sentences, generator=generator)
        weights = torch.softmax(scores.masked_fill(padding, float("-inf")), dim=-1)
        deciding = (torch.rand(documents, generator=generator) * lengths).long()
        if case == "a weight that underflowed to 0":
            lengths[0] = max(sentences, 2)
            weights[0] = torch.zeros(sentences)
            weights[0, (deciding[0] + 1) % sentences] = 1.0  # all on another sentence
        leaf = weights.clone().requires_grad_(True)
        result = checker.call(candidate, leaf, deciding, case=case)
        picked = weights.double()[torch.arange(documents), deciding]
        expected = -picked.clamp_min(1e-8).log().mean()
        mistakes = [
            (-picked.clamp_min(1e-8).log().sum(), "summed over documents: take the mean"),
            (picked.clamp_min(1e-8).log().mean(), "the sign: the loss is minus the log"),
            (
                -weights.double().max(-1).values.log().mean(),
                "it uses the largest weight, not deciding",
            ),
        ]
        if not checker.compare(result, expected, f"{case}: loss", mistakes, atol=1e-4):
            continue
        if not checker.expect(
            result.requires_grad, f"{case}: the loss does not depend on the weights (detached?)"
        ):
            continue
        (gradient,) = torch.autograd.grad(result, leaf)
        checker.expect(bool(torch.isfinite(gradient).all()), f"{case}: the gradient is not finite")
    return checker.report()


def similarity_to_row(candidate: Callable[..., Any]) -> bool:
    """Check ``candidate(states, padding_mask, rows) -> similarity``: for each document ``d`` of a
    ``(documents, sentences, features)`` batch, the mean cosine similarity of its other real
    (unpadded) sentence states to ``states[d, rows[d]]``, a tensor of shape ``(documents,)``. Every
    document has at least two real sentences; padded states hold noise, so they must be masked."""
    checker = Checker("similarity_to_row")
    generator = torch.Generator().manual_seed(5)
    cases = [  # (case, lengths, features): sizes grow in a hidden test
        ("no padding", [*vary(4)] * 3, *vary(6)),
        ("documents of different lengths", [*vary(5), 3, 2], *vary(6)),
        ("one long document", [*vary(7)], *vary(5)),
    ]
    for case, lengths, features in cases:
        length = torch.tensor(lengths)
        padding_mask = torch.arange(max(lengths)) >= length[:, None]
        states = torch.randn(*padding_mask.shape, features, generator=generator)
        states = states + torch.randn(features, generator=generator)  # alike: cosines away from 0
        rows = (torch.rand(len(lengths), generator=generator) * length).long()
        result = checker.call(candidate, states.clone(), padding_mask, rows, case=case)
        x = states.double()
        target = x[torch.arange(len(lengths)), rows].unsqueeze(1)
        cosine = torch.nn.functional.cosine_similarity(x, target, dim=-1)
        others = ~padding_mask
        others[torch.arange(len(lengths)), rows] = False
        expected = (cosine * others).sum(-1) / others.sum(-1)
        real = (~padding_mask).double()
        mistakes = [
            (
                (cosine * real).sum(-1) / real.sum(-1),
                "it counts the row's own state (cosine 1): average over the *other* sentences",
            ),
            (
                cosine.masked_fill(~others & ~padding_mask, 0.0).sum(-1) / (max(lengths) - 1),
                "it averages over padded sentences too: mask them with padding_mask",
            ),
            (
                ((x * target).sum(-1) * others).sum(-1) / others.sum(-1),
                "a dot product, not the cosine: divide by both lengths",
            ),
        ]
        checker.compare(result, expected, f"{case}: similarity", mistakes)
    return checker.report()
