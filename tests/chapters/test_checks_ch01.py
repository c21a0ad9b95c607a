"""The chapter 1 checkers accept right answers and name each typical wrong one."""

import math

import pytest
import torch
import torch.nn.functional as F

from attention_to_bert import checks
from attention_to_bert.attention import scaled_dot_score as package_scaled_dot_score
from attention_to_bert.masks import masked_softmax as package_masked_softmax

# --- masked softmax: one right answer written the way a student might, and typical wrong ones ---


def right_masked_softmax(scores, mask):
    filled = scores.masked_fill(mask, -1e9)
    return torch.softmax(filled, dim=-1) * ~mask


def nan_on_fully_masked_row(scores, mask):
    return torch.softmax(scores.masked_fill(mask, float("-inf")), dim=-1)


def nan_gradient(scores, mask):
    additive_mask = torch.zeros_like(scores).masked_fill(mask, float("-inf"))
    return torch.nan_to_num(torch.softmax(scores + additive_mask, dim=-1), nan=0.0)


def wrong_dimension(scores, mask):
    return torch.softmax(scores.masked_fill(mask, -1e9), dim=-2) * ~mask


def inverted_polarity(scores, mask):
    return right_masked_softmax(scores, ~mask)


def masked_scores_set_to_zero(scores, mask):
    return torch.softmax(scores.masked_fill(mask, 0.0), dim=-1)


def squeezed_shape(scores, mask):
    return right_masked_softmax(scores, mask).squeeze()


def exp_without_max(scores, mask):
    exps = torch.exp(scores.masked_fill(mask, float("-inf")))
    return exps / exps.sum(dim=-1, keepdim=True).clamp_min(1e-30)


def detached(scores, mask):
    return right_masked_softmax(scores.detach(), mask)


def raises(scores, mask):
    raise RuntimeError("not written yet")


def stub(*args): ...  # the student edition's stub: returns None


@pytest.mark.parametrize("candidate", [package_masked_softmax, right_masked_softmax])
def test_masked_softmax_checker_accepts_right_answers(candidate, capsys):
    assert checks.masked_softmax(candidate) is True
    assert "✔ masked_softmax: passes all 7 test cases." in capsys.readouterr().out


@pytest.mark.parametrize(
    ("candidate", "message"),
    [
        (nan_on_fully_masked_row, "a fully masked row gives NaN, not zeros"),
        (nan_gradient, "the gradient contains NaN"),
        (wrong_dimension, "the rows do not sum to 1, the columns do"),
        (inverted_polarity, "mask polarity inverted"),
        (masked_scores_set_to_zero, "masked (padded) positions get weight up to"),
        (squeezed_shape, "expected shape (2, 1, 5), got (2, 5)"),
        (exp_without_max, "subtract each row's maximum"),
        (detached, "no gradient flows back (do not detach)"),
        (raises, "raised RuntimeError: not written yet"),
        (stub, "returned None (a missing return"),
    ],
)
def test_masked_softmax_checker_names_the_mistake(candidate, message, capsys):
    assert checks.masked_softmax(candidate) is False
    output = capsys.readouterr().out
    assert "✘ masked_softmax" in output
    assert message in output


# --- scaled dot-product score ---


def right_scaled_dot_score(query, key):
    return query @ key.transpose(-2, -1) / math.sqrt(query.shape[-1])


def not_scaled(query, key):
    return query @ key.transpose(-2, -1)


def divided_by_d(query, key):
    return query @ key.transpose(-2, -1) / query.shape[-1]


def divided_by_number_of_keys(query, key):
    return query @ key.transpose(-2, -1) / math.sqrt(key.shape[-2])


def transposed(query, key):
    return key @ query.transpose(-2, -1) / math.sqrt(query.shape[-1])


def only_two_dimensional(query, key):
    return query @ key.t() / math.sqrt(query.shape[-1])  # .t() refuses batched (3-D) keys


@pytest.mark.parametrize("candidate", [package_scaled_dot_score, right_scaled_dot_score])
def test_scaled_dot_score_checker_accepts_right_answers(candidate, capsys):
    assert checks.scaled_dot_score(candidate) is True
    assert "✔ scaled_dot_score: passes all 3 test cases." in capsys.readouterr().out


@pytest.mark.parametrize(
    ("candidate", "message"),
    [
        (not_scaled, "not scaled: divide the dot products by sqrt(d)"),
        (divided_by_d, "divided by d; divide by sqrt(d) instead"),
        (divided_by_number_of_keys, "divided by sqrt(number of keys)"),
        (transposed, "transposed; the shape must be (..., n_q, n_k)"),
        (only_two_dimensional, "a batch: query (2, 3, 16) and key (2, 5, 16): raised RuntimeError"),
        (stub, "returned None (a missing return"),
    ],
)
def test_scaled_dot_score_checker_names_the_mistake(candidate, message, capsys):
    assert checks.scaled_dot_score(candidate) is False
    output = capsys.readouterr().out
    assert "✘ scaled_dot_score" in output
    assert message in output


# --- masked softmax: a max taken over the masked positions too (issue 29) ---


def max_over_masked_positions(scores, mask):
    largest = scores.max(dim=-1, keepdim=True).values  # includes the masked scores
    exps = torch.exp(scores - largest).masked_fill(mask, 0.0)
    return exps / exps.sum(dim=-1, keepdim=True).clamp_min(1e-30)


def in_place_fill(scores, mask):
    scores.masked_fill_(mask, -1e9)
    return torch.softmax(scores, dim=-1).masked_fill(mask, 0.0)


def test_masked_softmax_checker_names_a_max_over_masked_positions(capsys):
    assert checks.masked_softmax(max_over_masked_positions) is False
    output = capsys.readouterr().out
    assert "the maximum subtracted before exp was taken over the masked positions too" in output
    assert "do not sum to 1" not in output


def test_masked_softmax_checker_catches_an_in_place_edit(capsys):
    assert checks.masked_softmax(in_place_fill) is False
    output = capsys.readouterr().out
    assert output.count("the input `scores` was modified in place") == 1


def test_scaled_dot_score_checker_catches_an_in_place_edit(capsys):
    def scaled_in_place(query, key):
        query /= math.sqrt(query.shape[-1])
        return query @ key.transpose(-2, -1)

    assert checks.scaled_dot_score(scaled_in_place) is False
    assert "the input `query` was modified in place" in capsys.readouterr().out


# --- top-k attention (exercise 1.4) ---


def right_top_k_attention(query, key, value, k, mask):
    scores = query @ key.mT / math.sqrt(query.shape[-1])
    free = scores.masked_fill(mask, float("-inf"))
    kth = free.topk(min(k, scores.shape[-1]), dim=-1).values[..., -1:]
    weights = package_masked_softmax(scores, mask | (free < kth))
    return weights @ value, weights


def right_top_k_attention_by_scatter(query, key, value, k, mask):
    scores = (query @ key.mT / math.sqrt(query.shape[-1])).masked_fill(mask, -1e9)
    top = scores.topk(min(k, scores.shape[-1]), dim=-1)
    kept = torch.full_like(scores, -1e9).scatter(-1, top.indices, top.values)
    weights = torch.softmax(kept, dim=-1) * ~mask.expand_as(scores)
    return weights @ value, weights


def top_k_with(weights_of):
    """A candidate whose weights are weights_of(scores, k, mask), its output weights @ value."""

    def candidate(query, key, value, k, mask):
        scores = query @ key.mT / math.sqrt(query.shape[-1])
        weights = weights_of(scores, k, mask)
        return weights @ value, weights

    return candidate


def _drop(select, k, mask):
    select = select.masked_fill(mask, float("-inf"))
    kth = select.topk(min(k, select.shape[-1]), dim=-1).values[..., -1:]
    return mask | (select < kth)


@pytest.mark.parametrize("candidate", [right_top_k_attention, right_top_k_attention_by_scatter])
def test_top_k_attention_checker_accepts_right_answers(candidate, capsys):
    assert checks.top_k_attention(candidate) is True
    assert "✔ top_k_attention: passes all 4 test cases." in capsys.readouterr().out


def unscaled(query, key, value, k, mask):
    return right_top_k_attention(query * math.sqrt(query.shape[-1]), key, value, k, mask)


def summed_keys(query, key, value, k, mask):
    _, weights = right_top_k_attention(query, key, value, k, mask)
    return weights @ key, weights


@pytest.mark.parametrize(
    ("candidate", "message"),
    [
        (
            top_k_with(lambda s, k, m: package_masked_softmax(s, m) * ~_drop(s, k, m)),
            "the softmax ran over all keys and the others were zeroed afterwards",
        ),
        (unscaled, "not scaled"),
        (
            top_k_with(lambda s, k, m: package_masked_softmax(s, _drop(-s, k, m))),
            "kept the k smallest",
        ),
        (
            top_k_with(
                lambda s, k, m: package_masked_softmax(
                    s,
                    m | (s.masked_fill(m, -1e9) <= s.masked_fill(m, -1e9).topk(k).values[..., -1:]),
                )
            ),
            "kept k - 1 keys",
        ),
        (
            top_k_with(
                lambda s, k, m: package_masked_softmax(s, m | _drop(s, k, torch.zeros_like(m)))
            ),
            "the mask was ignored when choosing the k keys",
        ),
        (
            top_k_with(lambda s, k, m: package_masked_softmax(s, _drop(s, k, torch.zeros_like(m)))),
            "the mask was ignored: masked keys get weight",
        ),
        (top_k_with(lambda s, k, m: package_masked_softmax(s, m)), "all keys kept"),
        (
            top_k_with(
                lambda s, k, m: package_masked_softmax(
                    s,
                    m
                    | (
                        s.masked_fill(m, -1e9)
                        < s.masked_fill(m, -1e9).topk(k, dim=-2).values[..., -1:, :]
                    ),
                )
            ),
            "topk ran along the queries",
        ),
        (
            top_k_with(
                lambda s, k, m: torch.softmax(s.masked_fill(_drop(s, k, m), float("-inf")), -1)
            ),
            "a fully masked row gives NaN, not zeros",
        ),
        (summed_keys, "summed the keys, not the values"),
        (stub, "returned None (a missing return"),
    ],
)
def test_top_k_attention_checker_names_the_mistake(candidate, message, capsys):
    assert checks.top_k_attention(candidate) is False
    output = capsys.readouterr().out
    assert "✘ top_k_attention" in output
    assert message in output


# --- batched additive attention with a mask (exercise 1.2) ---


def right_additive_attention(query, key, value, mask, w_query, w_key, w_score):
    hidden = torch.tanh((query @ w_query.T).unsqueeze(-2) + (key @ w_key.T).unsqueeze(-3))
    weights = package_masked_softmax(hidden @ w_score, mask)
    return weights @ value, weights


def right_additive_attention_by_loops(query, key, value, mask, w_query, w_key, w_score):
    # the formula entry by entry, written independently of the package (mask by hand)
    batch = query.shape[:-2]
    flat_q = query.reshape(-1, *query.shape[-2:])
    flat_k = key.reshape(-1, *key.shape[-2:])
    flat_v = value.reshape(-1, *value.shape[-2:])
    full = mask.expand(*batch, query.shape[-2], key.shape[-2]).reshape(
        -1, query.shape[-2], key.shape[-2]
    )
    outputs, all_weights = [], []
    for q_b, k_b, v_b, m_b in zip(flat_q, flat_k, flat_v, full, strict=True):
        rows = []
        for j in range(q_b.shape[0]):
            scores = torch.stack(
                [
                    w_score @ torch.tanh(w_query @ q_b[j] + w_key @ k_b[i])
                    for i in range(k_b.shape[0])
                ]
            )
            free = ~m_b[j]
            row = torch.zeros_like(scores)
            if free.any():
                row[free] = torch.softmax(scores[free], dim=0)
            rows.append(row)
        weights = torch.stack(rows)
        all_weights.append(weights)
        outputs.append(weights @ v_b)
    shape = (*batch, query.shape[-2])
    return (
        torch.stack(outputs).reshape(*shape, value.shape[-1]),
        torch.stack(all_weights).reshape(*shape, key.shape[-2]),
    )


def additive_with(scores_of, mask_of=lambda m: m):
    def candidate(query, key, value, mask, w_query, w_key, w_score):
        pairs = (query @ w_query.T).unsqueeze(-2) + (key @ w_key.T).unsqueeze(-3)
        weights = package_masked_softmax(scores_of(pairs, w_score), mask_of(mask))
        return weights @ value, weights

    return candidate


@pytest.mark.parametrize("candidate", [right_additive_attention, right_additive_attention_by_loops])
def test_additive_attention_checker_accepts_right_answers(candidate, capsys):
    assert checks.additive_attention(candidate) is True
    assert "✔ additive_attention: passes all 3 test cases." in capsys.readouterr().out


@pytest.mark.parametrize(
    ("candidate", "message"),
    [
        (additive_with(lambda p, w: p @ w), "no tanh"),
        (additive_with(lambda p, w: torch.tanh(p).sum(dim=-1)), "hidden units were summed"),
        (
            additive_with(lambda p, w: torch.tanh(p) @ w, lambda m: torch.zeros_like(m)),
            "masked (padded) positions get weight",
        ),
        (additive_with(lambda p, w: torch.tanh(p) @ w, lambda m: ~m), "polarity inverted"),
        (
            lambda q, k, v, m, wq, wk, ws: (
                right_additive_attention(q, k, v, m, wq, wk, ws)[1] @ k,
                right_additive_attention(q, k, v, m, wq, wk, ws)[1],
            ),
            "summed the keys, not the values",
        ),
    ],
)
def test_additive_attention_checker_names_the_mistake(candidate, message, capsys):
    assert checks.additive_attention(candidate) is False
    output = capsys.readouterr().out
    assert "✘ additive_attention" in output and message in output, output


def test_additive_attention_checker_hidden_sizes_catch_a_fitted_answer(capsys):
    import grading

    def fitted(query, key, value, mask, w_query, w_key, w_score):  # only the visible 7 hidden units
        assert w_score.shape[0] == 7
        return right_additive_attention(query, key, value, mask, w_query, w_key, w_score)

    assert checks.additive_attention(fitted) is True
    with grading.fresh_inputs(12345):
        assert checks.additive_attention(fitted) is False
        assert checks.additive_attention(right_additive_attention) is True
    capsys.readouterr()


# --- the gradient of the output with respect to the query (exercise 1.3) ---


def right_query_gradient(query, keys, values):
    weights = torch.softmax(keys @ query, dim=0)
    output = weights @ values
    return (weights[:, None] * (values - output)).T @ keys


def right_query_gradient_by_sums(query, keys, values):
    # d output / d q = sum_i v_i (d a_i / d q), d a_i / d q = a_i (k_i - sum_j a_j k_j)
    weights = torch.softmax(keys @ query, dim=0)
    mean_key = weights @ keys
    return sum(torch.outer(values[i], weights[i] * (keys[i] - mean_key)) for i in range(len(keys)))


def test_query_gradient_checker_accepts_right_answers(capsys):
    for candidate in (right_query_gradient, right_query_gradient_by_sums):
        assert checks.query_gradient(candidate) is True
    assert "✔ query_gradient: passes all 3 test cases." in capsys.readouterr().out


@pytest.mark.parametrize(
    ("candidate", "message"),
    [
        (
            lambda q, k, v: (torch.softmax(k @ q, dim=0)[:, None] * v).T @ k,
            "the output was not subtracted",
        ),
        (lambda q, k, v: right_query_gradient(q, k, v).T, "transposed"),
        (
            lambda q, k, v: right_query_gradient(q, k, v) / math.sqrt(len(q)),
            "scaled by 1 / sqrt(d)",
        ),
        (lambda q, k, v: torch.zeros(v.shape[-1], k.shape[-1], dtype=q.dtype), "all zeros"),
        (lambda q, k, v: right_query_gradient(q, k, v) * 1.1, "values differ"),
    ],
)
def test_query_gradient_checker_names_the_mistake(candidate, message, capsys):
    assert checks.query_gradient(candidate) is False
    output = capsys.readouterr().out
    assert "✘ query_gradient" in output and message in output, output


# --- training the general score's W (exercise 1.6) ---


def right_train_attention(queries, keys, targets, steps, lr):
    # written independently: einsum scores and an explicit log-softmax loss
    weight = torch.zeros(queries.shape[-1], keys.shape[-1], requires_grad=True)
    optimizer = torch.optim.Adam([weight], lr=lr)
    for _ in range(steps):
        scores = torch.einsum("md,de,mne->mn", queries, weight, keys)
        loss = -torch.log_softmax(scores, dim=-1)[torch.arange(len(targets)), targets].mean()
        optimizer.zero_grad()
        loss.backward()
        optimizer.step()
    return weight.detach()


def right_train_attention_with_a_module(queries, keys, targets, steps, lr):
    # W as a bias-free nn.Linear(d_k, d_q) (its weight is (d_q, d_k)), started at zero
    projection = torch.nn.Linear(keys.shape[-1], queries.shape[-1], bias=False)
    torch.nn.init.zeros_(projection.weight)
    optimizer = torch.optim.Adam(projection.parameters(), lr=lr)
    for _ in range(steps):
        scores = (projection(keys) @ queries.unsqueeze(-1)).squeeze(-1)  # (m, n)
        loss = F.cross_entropy(scores, targets)
        optimizer.zero_grad()
        loss.backward()
        optimizer.step()
    return projection.weight.detach()


def _train_variant(sign=1.0, axis=-1, zero_grad=True, optimizer=torch.optim.Adam):
    def candidate(queries, keys, targets, steps, lr):
        weight = torch.zeros(queries.shape[-1], keys.shape[-1], requires_grad=True)
        step = optimizer([weight], lr=lr)
        for _ in range(steps):
            scores = torch.einsum("md,de,mne->mn", queries, weight, keys)
            log_weights = torch.log_softmax(scores, dim=axis)
            loss = -sign * log_weights[torch.arange(len(targets)), targets].mean()
            if zero_grad:
                step.zero_grad()
            loss.backward()
            step.step()
        return weight.detach()

    return candidate


def test_train_attention_checker_accepts_right_answers(capsys):
    for candidate in (right_train_attention, right_train_attention_with_a_module):
        assert checks.train_attention(candidate) is True
    assert "✔ train_attention: passes all 3 test cases." in capsys.readouterr().out


def test_train_attention_right_answer_learns_the_look_up(capsys):
    # the exercise's point, checked apart from the checker: after training, the weights of fresh
    # queries sit on the wanted key far more than the uniform 1/n of the start
    from attention_to_bert.checks.ch01 import _train_attention_cases

    case, inputs = _train_attention_cases()[0]
    trained = right_train_attention(**inputs | {"steps": 200})
    queries, keys, targets = inputs["queries"], inputs["keys"], inputs["targets"]
    weights = torch.softmax(torch.einsum("md,de,mne->mn", queries, trained, keys), dim=-1)
    on_target = weights[torch.arange(len(targets)), targets].mean().item()
    assert on_target > 0.6 > 1 / keys.shape[1], (case, on_target)


@pytest.mark.parametrize(
    ("candidate", "message"),
    [
        (lambda q, k, t, s, lr: torch.zeros(q.shape[-1], k.shape[-1]), "W did not move"),
        (lambda q, k, t, s, lr: right_train_attention(q, k, t, s, lr).T, "transposed"),
        (_train_variant(sign=-1.0), "W climbs the loss"),
        (_train_variant(axis=0), "the softmax runs over the queries"),
        (_train_variant(zero_grad=False), "optimizer.zero_grad()"),
        (_train_variant(optimizer=torch.optim.SGD), "plain SGD"),
        (lambda q, k, t, s, lr: right_train_attention(q, k, t, s + 5, lr), "values differ"),
        (lambda q, k, t, s, lr: right_train_attention(q, k, t, s, lr) + 0.1, "0 steps"),
    ],
)
def test_train_attention_checker_names_the_mistake(candidate, message, capsys):
    assert checks.train_attention(candidate) is False
    output = capsys.readouterr().out
    assert "✘ train_attention" in output and message in output, output


def test_train_attention_hidden_sizes_catch_a_fitted_answer(capsys):
    import grading

    from attention_to_bert.checks.ch01 import _train_attention_cases

    visible = {}
    for _, inputs in _train_attention_cases():
        queries = inputs["queries"]
        visible[len(queries), queries.shape[-1]] = right_train_attention(**inputs)

    def fitted(queries, keys, targets, steps, lr):  # a table of the visible answers
        if steps == 0:
            return torch.zeros(queries.shape[-1], keys.shape[-1])
        return visible[len(queries), queries.shape[-1]]

    assert checks.train_attention(fitted) is True
    with grading.fresh_inputs(12345):
        assert checks.train_attention(fitted) is False
        assert checks.train_attention(right_train_attention) is True
    capsys.readouterr()
