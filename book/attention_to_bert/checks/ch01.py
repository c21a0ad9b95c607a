"""The checkers of chapter 1: masked softmax, the scaled dot-product score, top-k attention, additive
attention, the gradient at the query, training the general score."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import torch
from torch import Tensor

from attention_to_bert.checks.checker import Checker, close, reference_softmax, vary


def _max_over_masked(actual: Any, scores: Tensor, mask: Tensor, expected: Tensor) -> bool:
    """True if ``actual`` is wrong only in rows whose largest score sits at a masked position."""
    if not isinstance(actual, Tensor) or actual.shape != expected.shape:
        return False
    mask = mask.expand(scores.shape)
    actual, expected = actual.detach().double(), expected.double()
    close = torch.isclose(actual, expected, atol=1e-5, rtol=1e-4) & torch.isfinite(actual)
    wrong_rows = ~close.all(dim=-1)
    masked_max = mask.gather(-1, scores.argmax(dim=-1, keepdim=True)).squeeze(-1)
    masked_max &= ~mask.all(dim=-1)  # a fully masked row has its own message
    underflow = (actual[wrong_rows].nan_to_num(0.0) == 0).all()  # no weight left anywhere
    return bool(wrong_rows.any()) and bool(masked_max[wrong_rows].all()) and bool(underflow)


def masked_softmax(candidate: Callable[[Tensor, Tensor], Tensor]) -> bool:
    """Check ``candidate(scores, mask)``: a softmax over the last dimension, 0 where the bool ``mask``
    (broadcast to ``scores``) is True, all-zero rows (no NaN, even in the gradient) where all are."""
    checker = Checker("masked_softmax")
    generator = torch.Generator().manual_seed(1)
    scores = torch.randn(2, 3, 5, generator=generator)
    padding = torch.tensor([[0, 0, 0, 1, 1], [0, 1, 1, 1, 1]], dtype=torch.bool)[:, None, :]
    with_empty_row = torch.rand(2, 3, 5, generator=generator) > 0.5
    with_empty_row[:, :, 0] = False
    with_empty_row[1, 2] = True  # query 2 of example 1 may attend to nothing
    cases = [
        ("no position masked", scores, torch.zeros(2, 3, 5, dtype=torch.bool)),
        ("a padding mask of shape (2, 1, 5) broadcast over the queries", scores, padding),
        ("a single query (scores of shape (2, 1, 5))", scores[:, :1], padding),
        ("a fully masked row", scores, with_empty_row),
        ("a masked position holds the largest score", scores.masked_fill(padding, 1e3), padding),
        ("large scores (up to about 1000)", 400 * scores, padding),
    ]
    max_over_masked = False
    for case, case_scores, mask in cases:
        actual = checker.call(candidate, case_scores.clone(), mask.clone(), case=case)
        expected = reference_softmax(case_scores, mask)
        if max_over_masked:  # the large scores fail for the same reason: said once
            continue
        probe = case.startswith("a masked position holds")
        if probe and _max_over_masked(actual, case_scores, mask, expected):
            max_over_masked = True
            checker.expect(
                False,
                f"{case}: wrong in the rows whose largest score is masked: the maximum subtracted "
                "before exp was taken over the masked positions too, so exp underflows to 0 at "
                "every free position (fill the masked scores first, then take the maximum)",
            )
            continue
        checker.compare(actual, expected, case, masked=mask)

    case = "the gradient through a fully masked row"
    leaf = scores.clone().requires_grad_()
    actual = checker.call(candidate, leaf, with_empty_row.clone(), case=case)
    if isinstance(actual, Tensor) and actual.shape == scores.shape:
        try:
            (gradient,) = torch.autograd.grad((actual * torch.arange(5.0)).sum(), leaf)
        except Exception as error:  # report, don't crash
            checker.expect(False, f"{case}: no gradient flows back (do not detach): {error}")
        else:
            checker.expect(
                not gradient.isnan().any(),
                f"{case}: the gradient contains NaN; a softmax over a row of -inf is NaN and zeroing it "
                "afterwards does not clean the gradient (fill masked scores with a large negative number)",
            )
    return checker.report()


def scaled_dot_score(candidate: Callable[[Tensor, Tensor], Tensor]) -> bool:
    """Check ``candidate(query, key)``: ``q · k / sqrt(d)`` for every query and key, shape ``(..., n_q, n_k)``."""
    checker = Checker("scaled_dot_score")
    generator = torch.Generator().manual_seed(2)
    cases = [
        ("query (3, 16) and key (5, 16)", (3, 16), (5, 16)),
        ("a batch: query (2, 3, 16) and key (2, 5, 16)", (2, 3, 16), (2, 5, 16)),
        ("one query (1, 9) against keys (4, 9)", (1, 9), (4, 9)),
    ]
    for case, query_shape, key_shape in cases:
        query = torch.randn(*query_shape, generator=generator)
        key = torch.randn(*key_shape, generator=generator)
        dot = query.double() @ key.double().mT
        d, n_k = query.shape[-1], key.shape[-2]
        mistakes = [
            (dot, "not scaled: divide the dot products by sqrt(d)"),
            (dot / d, "divided by d; divide by sqrt(d) instead"),
            (dot / n_k**0.5, "divided by sqrt(number of keys); d is the feature size"),
            (dot.mT / d**0.5, "transposed; the shape must be (..., n_q, n_k), one row per query"),
        ]
        actual = checker.call(candidate, query.clone(), key.clone(), case=case)
        checker.compare(actual, dot / d**0.5, case, mistakes)
    return checker.report()


EMPTY_ROW_NAN = (
    "contains NaN: a softmax over a row of -inf is NaN, and zeroing it afterwards (nan_to_num) "
    "does not clean the gradient; fill masked scores with a large negative number (as "
    "masked_softmax does)"
)


def _dropped(select: Tensor, k: int, mask: Tensor, strict: bool = True) -> Tensor:
    """True where a key is not among a row's ``k`` largest free entries of ``select`` (or masked).
    ``strict=False`` also drops the k-th largest itself (the ``>`` for ``>=`` slip)."""
    select = select.masked_fill(mask, float("-inf"))
    kth = select.topk(min(k, select.shape[-1]), dim=-1).values[..., -1:]
    return mask | (select < kth if strict else select <= kth)


def _top_k_cases() -> list[tuple[str, dict[str, Any]]]:
    """The cases of top-k attention: (description, inputs), built in float32; their sizes grow in a
    hidden test (``vary``)."""
    generator = torch.Generator().manual_seed(4)

    def randn(*shape: int) -> Tensor:
        return torch.randn(*shape, generator=generator)

    n_q, n_k, d, d_v = vary(3, 6, 4, 3)
    b_q, b_k, b_d, b_v = vary(3, 5, 8, 2)
    s_q, s_k = vary(4, 6)
    a_q, a_k, a_v = vary(2, 5, 3)
    padding = (torch.arange(b_k) >= torch.tensor([b_k, 2])[:, None])[:, None, :]
    square_mask = torch.zeros(s_q, s_k, dtype=torch.bool)
    square_mask[1] = True  # query 1 may attend to nothing
    square_mask[2, 0] = True
    return [
        (
            f"{n_q} queries, {n_k} keys, k = 2, no mask",
            {
                "query": 2 * randn(n_q, d),
                "key": randn(n_k, d),
                "value": randn(n_k, d_v),
                "k": 2,
                "mask": torch.zeros(n_q, n_k, dtype=torch.bool),
            },
        ),
        (
            "a batch with padding, k = 3 (the second example has only 2 real keys)",
            {
                "query": randn(2, b_q, b_d),
                "key": randn(2, b_k, b_d),
                "value": randn(2, b_k, b_v),
                "k": 3,
                "mask": padding,
            },
        ),
        (
            f"{s_q} queries, {s_k} keys, k = 1, one query fully masked",
            {
                "query": randn(s_q, 4),
                "key": randn(s_k, 4),
                "value": randn(s_k, 2),
                "k": 1,
                "mask": square_mask,
            },
        ),
        (
            f"k = {a_k + 2} larger than the {a_k} keys: all kept, ordinary scaled dot-product "
            "attention",
            {
                "query": randn(a_q, 5),
                "key": randn(a_k, 5),
                "value": randn(a_k, a_v),
                "k": a_k + 2,
                "mask": torch.zeros(a_q, a_k, dtype=torch.bool),
            },
        ),
    ]


def _top_k_mistakes(inputs: dict[str, Any]) -> tuple[Tensor, list[tuple[Tensor, str]]]:
    """The right weights (float64) and the weights of typical wrong answers, each with its message."""
    query, key = inputs["query"].double(), inputs["key"].double()
    k = inputs["k"]
    mask = inputs["mask"].expand(query.shape[:-1] + key.shape[-2:-1])
    d = query.shape[-1]
    scores = query @ key.mT / d**0.5
    dropped = _dropped(scores, k, mask)
    no_mask = torch.zeros_like(mask)
    ignored = _dropped(scores, k, no_mask)
    mistakes = [
        (
            reference_softmax(scores, mask) * ~dropped,
            "the weights of a row do not sum to 1: the softmax ran over all keys and the others "
            "were zeroed afterwards; drop (mask) the other keys first, then take the softmax",
        ),
        (
            reference_softmax(scores * d**0.5, mask | dropped),
            "not scaled: the score is q · k / sqrt(d)",
        ),
        (
            reference_softmax(scores, _dropped(-scores, k, mask)),
            "kept the k smallest scores; keep the largest (topk's default, largest=True)",
        ),
        (
            reference_softmax(scores, _dropped(scores, k, mask, strict=False)),
            "kept k - 1 keys: compare with the k-th largest score using >=, not >",
        ),
        (
            reference_softmax(scores, mask | ignored),
            "the mask was ignored when choosing the k keys: a masked key took one of the k places; "
            "fill the masked scores with -inf (or a large negative number) before topk",
        ),
        (reference_softmax(scores, ignored), "the mask was ignored: masked keys get weight"),
        (reference_softmax(scores, mask), "all keys kept: keep only each row's k largest scores"),
    ]
    if scores.shape[-2] >= k:  # only then can topk run along the queries' axis
        along_queries = scores.masked_fill(mask, float("-inf"))
        kth = along_queries.topk(k, dim=-2).values[..., -1:, :]
        mistakes.append(
            (
                reference_softmax(scores, mask | (along_queries < kth)),
                "topk ran along the queries (dim=-2); choose each query's k keys (dim=-1)",
            )
        )
    return reference_softmax(scores, dropped), mistakes


def top_k_attention(candidate: Callable[..., Any]) -> bool:
    """Check ``candidate(query, key, value, k, mask) -> (output, weights)``: scaled dot-product
    attention in which each query keeps only its ``k`` largest scores among the keys it may attend
    to (``mask`` True = may not attend); a row with fewer than ``k`` such keys keeps them all, a fully
    masked row gives zero weights."""
    checker = Checker("top_k_attention")
    for case, inputs in _top_k_cases():
        passed = [
            value.clone() if isinstance(value, Tensor) else value for value in inputs.values()
        ]
        raised = len(checker.problems)
        result = checker.call(candidate, *passed, case=case, pair="(output, weights)")
        too_many = inputs["k"] > inputs["key"].shape[-2]
        if result is None and too_many and "raised" in "".join(checker.problems[raised:]):
            checker.expect(
                False,
                f"{case}: with k larger than the number of keys, keep them all: "
                "topk(min(k, n_k)) (topk itself refuses k > n_k)",
            )
        if result is None:
            continue
        output, weights = result
        expected, mistakes = _top_k_mistakes(inputs)
        mask = inputs["mask"].expand(expected.shape)
        named = [message for wrong, message in mistakes if close(weights, wrong)]
        if named and not close(weights, expected):  # a named mistake says more than "rows sum"
            checker.expect(False, f"{case}, weights: {named[0]}")
            continue
        if not checker.compare(weights, expected, f"{case}, weights", masked=mask):
            continue
        value = inputs["value"].double()
        wrong_output = [(expected @ inputs["key"].double(), "summed the keys, not the values")]
        checker.compare(output, expected @ value, f"{case}, output", wrong_output)
    return checker.report()


# --- added for the lesson/lab chapter 1 (issue 46): batched additive attention, the query gradient ---


def _additive_cases() -> list[tuple[str, dict[str, Tensor]]]:
    """The cases of batched additive attention: (description, inputs) in float32; sizes grow in a
    hidden test (``vary``)."""
    generator = torch.Generator().manual_seed(5)

    def randn(*shape: int) -> Tensor:
        return torch.randn(*shape, generator=generator)

    n_q, n_k, d_q, d_k, d_v, h = vary(3, 5, 4, 6, 2, 7)
    b, b_q, b_k = 2, *vary(4, 5)
    lengths = torch.tensor([b_k, 2])
    padding = (torch.arange(b_k) >= lengths[:, None])[:, None, :]  # (2, 1, b_k)
    empty = torch.zeros(n_q, n_k, dtype=torch.bool)
    empty[1] = True  # query 1 may attend to nothing
    empty[0, n_k - 1] = True

    def weights_for(d_query: int, d_key: int) -> dict[str, Tensor]:
        return {
            "w_query": randn(h, d_query) / d_query**0.5,
            "w_key": randn(h, d_key) / d_key**0.5,
            "w_score": randn(h),
        }

    return [
        (
            f"{n_q} queries of size {d_q}, {n_k} keys of size {d_k}, hidden size {h}, no mask",
            {
                "query": randn(n_q, d_q),
                "key": randn(n_k, d_k),
                "value": randn(n_k, d_v),
                "mask": torch.zeros(n_q, n_k, dtype=torch.bool),
                **weights_for(d_q, d_k),
            },
        ),
        (
            f"a batch of {b} with padding, mask of shape ({b}, 1, {b_k})",
            {
                "query": randn(b, b_q, d_q),
                "key": randn(b, b_k, d_k),
                "value": randn(b, b_k, d_v),
                "mask": padding,
                **weights_for(d_q, d_k),
            },
        ),
        (
            "one query fully masked",
            {
                "query": randn(n_q, d_q),
                "key": randn(n_k, d_k),
                "value": randn(n_k, d_v),
                "mask": empty,
                **weights_for(d_q, d_k),
            },
        ),
    ]


def _additive_mistakes(inputs: dict[str, Tensor]) -> tuple[Tensor, list[tuple[Tensor, str]]]:
    """The right weights (float64) and the weights of typical wrong answers, each with its message."""
    query, key = inputs["query"].double(), inputs["key"].double()
    w_query, w_key = inputs["w_query"].double(), inputs["w_key"].double()
    w_score, mask = inputs["w_score"].double(), inputs["mask"]
    projected_query = query @ w_query.T  # (..., n_q, h)
    projected_key = key @ w_key.T  # (..., n_k, h)
    pairs = projected_query.unsqueeze(-2) + projected_key.unsqueeze(-3)  # (..., n_q, n_k, h)
    scores = torch.tanh(pairs) @ w_score
    full = mask.expand(scores.shape)
    mistakes = [
        (
            reference_softmax(pairs @ w_score, full),
            "no tanh: score = w_score · tanh(W_q q + W_k k)",
        ),
        (
            reference_softmax(torch.tanh(pairs).sum(dim=-1), full),
            "the hidden units were summed: weight them with w_score (a dot product over h)",
        ),
    ]  # a mask ignored or inverted: ``compare(masked=...)`` names those
    if scores.shape[-1] == scores.shape[-2]:
        along_queries = reference_softmax(scores.mT, full.mT).mT
        mistakes.append((along_queries, "softmax over the queries; take it over the keys (dim=-1)"))
    return reference_softmax(scores, full), mistakes


def additive_attention(candidate: Callable[..., Any]) -> bool:
    """Check ``candidate(query, key, value, mask, w_query, w_key, w_score) -> (output, weights)``:
    Bahdanau's additive score ``w_score · tanh(W_q q_j + W_k k_i)`` for every query and key of a
    batch, a masked softmax over the keys (``mask`` True = may not attend; a fully masked row gives
    zeros), and the weighted sum of the values."""
    checker = Checker("additive_attention")
    for case, inputs in _additive_cases():
        passed = [tensor.clone() for tensor in inputs.values()]
        result = checker.call(candidate, *passed, case=case, pair="(output, weights)")
        if result is None:
            continue
        output, weights = result
        expected, mistakes = _additive_mistakes(inputs)
        mask = inputs["mask"].expand(expected.shape)
        if not checker.compare(weights, expected, f"{case}, weights", mistakes, masked=mask):
            continue
        value = inputs["value"].double()
        wrong_output = [(expected @ inputs["key"].double(), "summed the keys, not the values")]
        checker.compare(output, expected @ value, f"{case}, output", wrong_output)
    return checker.report()


def _query_gradient_cases() -> list[tuple[str, dict[str, Any]]]:
    """Cases of the gradient of one query's output: (description, inputs); sizes grow in a hidden
    test."""
    generator = torch.Generator().manual_seed(6)

    def randn(*shape: int) -> Tensor:
        return torch.randn(*shape, generator=generator, dtype=torch.float64)

    n, d, d_v = vary(5, 4, 3)
    m, e, e_v = vary(7, 6, 2)
    return [
        (
            f"{n} keys of size {d}, values of size {d_v}",
            {"query": randn(d), "keys": randn(n, d), "values": randn(n, d_v)},
        ),
        (
            f"{m} keys of size {e}, values of size {e_v}",
            {"query": 0.5 * randn(e), "keys": randn(m, e), "values": randn(m, e_v)},
        ),
        (
            "long keys: one weight near 1, so the gradient nearly vanishes",
            {"query": 3 * randn(d), "keys": 3 * randn(n, d), "values": randn(n, d_v)},
        ),
    ]


def query_gradient(candidate: Callable[..., Any]) -> bool:
    """Check ``candidate(query, keys, values)``: the Jacobian ``d output / d query`` of dot-product
    attention for one query, shape ``(d_v, d)``, written without autograd:
    ``sum_i a_i (v_i - output) k_i^T``."""
    checker = Checker("query_gradient")
    for case, inputs in _query_gradient_cases():
        query, keys, values = inputs["query"], inputs["keys"], inputs["values"]
        weights = torch.softmax(keys @ query, dim=0)
        output = weights @ values
        expected = torch.autograd.functional.jacobian(
            lambda q, k=keys, v=values: torch.softmax(k @ q, dim=0) @ v, query
        )
        centred = values - output
        mistakes = [
            (
                (weights[:, None] * values).T @ keys,
                "the output was not subtracted: sum_i a_i (v_i - output) k_i^T (the softmax's "
                "weights sum to 1, so moving the query shifts weight from some values to others)",
            ),
            (
                ((weights[:, None] * centred).T @ keys).T,
                "transposed: the shape is (d_v, d), one row per output entry",
            ),
            (
                (weights[:, None] * centred).T @ (keys / len(query) ** 0.5),
                "scaled by 1 / sqrt(d): the score here is the plain dot product q · k",
            ),
            (
                torch.zeros_like(expected),
                "all zeros: that is the arg max's gradient, not the softmax's",
            ),
        ]
        actual = checker.call(candidate, query.clone(), keys.clone(), values.clone(), case=case)
        if isinstance(actual, Tensor) and actual.requires_grad:
            actual = actual.detach()
        checker.compare(actual, expected, case, mistakes, atol=1e-6)
    return checker.report()


def _trained_bilinear(
    queries: Tensor,
    keys: Tensor,
    targets: Tensor,
    steps: int,
    lr: float,
    optimizer: type[torch.optim.Optimizer] = torch.optim.Adam,
    sign: float = 1.0,
    zero_grad: bool = True,
    axis: int = -1,
) -> Tensor:
    """The exercise's recipe (full-batch Adam from W = 0 on the cross-entropy of the softmax over
    the keys), and the typical mistakes as its arguments."""
    weight = torch.zeros(queries.shape[-1], keys.shape[-1], requires_grad=True)
    step = optimizer([weight], lr=lr)
    for _ in range(steps):
        scores = ((queries @ weight).unsqueeze(1) @ keys.mT).squeeze(1)  # (m, n)
        log_weights = torch.log_softmax(scores, dim=axis)
        loss = sign * -log_weights.gather(1, targets[:, None]).mean()
        if zero_grad:
            step.zero_grad()
        loss.backward()
        step.step()
    return weight.detach()


def _train_attention_cases() -> list[tuple[str, dict[str, Any]]]:
    """Look-up tasks whose queries are the wanted key seen through a random matrix M (d_q, d_k),
    plus noise: the dot product cannot compare them, a learned W can. Sizes grow in a hidden test."""
    generator = torch.Generator().manual_seed(11)
    cases = []
    for m, n, d_q, d_k, steps in (vary(128, 6, 5, 4, 40), vary(96, 4, 3, 6, 25)):
        mixing = torch.randn(d_q, d_k, generator=generator) / d_k**0.5
        keys = torch.randn(m, n, d_k, generator=generator)
        keys = keys / keys.norm(dim=-1, keepdim=True)  # unit keys: no length bonus
        targets = torch.randint(n, (m,), generator=generator)
        queries = keys[torch.arange(m), targets] @ mixing.T
        queries = queries + 0.1 * torch.randn(m, d_q, generator=generator)
        inputs = {"queries": queries, "keys": keys, "targets": targets, "steps": steps, "lr": 0.1}
        cases.append((f"{m} queries of size {d_q}, {n} keys of size {d_k}, {steps} steps", inputs))
    return cases


def train_attention(candidate: Callable[..., Any]) -> bool:
    """Check ``candidate(queries, keys, targets, steps, lr)``: train the general score's ``W``
    (``d_q, d_k``) from zero with full-batch Adam so that ``softmax_i(q^T W k_i)`` puts its weight
    on the wanted key ``targets``; returns ``W``. Compared with the same recipe; ``steps=0`` must
    return the zero start."""
    checker = Checker("train_attention")
    for index, (case, inputs) in enumerate(_train_attention_cases()):
        queries, keys, targets = inputs["queries"], inputs["keys"], inputs["targets"]
        steps, lr = inputs["steps"], inputs["lr"]
        if index == 0:
            untrained = checker.call(
                candidate, queries.clone(), keys.clone(), targets.clone(), 0, lr, case="0 steps"
            )
            if isinstance(untrained, Tensor):
                untrained = untrained.detach()
            start = torch.zeros(queries.shape[-1], keys.shape[-1])
            checker.compare(
                untrained,
                start,
                "0 steps (W must start at zero: every weight 1/n)",
                [(start.T, "transposed: W has shape (d_q, d_k), so that q^T W k is a score")],
            )
        expected = _trained_bilinear(queries, keys, targets, steps, lr)
        mistakes = [
            (
                torch.zeros_like(expected),
                "W did not move: does it require a gradient, and is optimizer.step() called?",
            ),
            (expected.T, "transposed: W has shape (d_q, d_k), so that q^T W k is a score"),
            (
                _trained_bilinear(queries, keys, targets, steps, lr, sign=-1.0),
                "W climbs the loss: minimise the cross-entropy -log a_target (gradient descent)",
            ),
            (
                _trained_bilinear(queries, keys, targets, steps, lr, axis=0),
                "the softmax runs over the queries: it must run over the keys (the last axis)",
            ),
            (
                _trained_bilinear(queries, keys, targets, steps, lr, zero_grad=False),
                "the gradients pile up from step to step: call optimizer.zero_grad() each step",
            ),
            (
                _trained_bilinear(queries, keys, targets, steps, lr, optimizer=torch.optim.SGD),
                "plain SGD: the exercise asks for torch.optim.Adam at the learning rate lr",
            ),
        ]
        actual = checker.call(
            candidate, queries.clone(), keys.clone(), targets.clone(), steps, lr, case=case
        )
        if isinstance(actual, Tensor):
            actual = actual.detach()
        checker.compare(actual, expected, case, mistakes, atol=1e-3)
    return checker.report()
