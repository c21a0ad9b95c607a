"""The chapter 4 checkers accept right answers and name each typical wrong one."""

import math

import pytest
import torch
import torch.nn.functional as F

from attention_to_bert import checks
from attention_to_bert.attention import attention
from attention_to_bert.checks.ch04 import self_attention_cases
from attention_to_bert.positional import PositionalEncoding

# --- self-attention: right answers written the way a student might, and typical wrong ones ---


def right_with_package(x, w_q, w_k, w_v):
    return attention(x @ w_q, x @ w_k, x @ w_v)


def right_by_hand(x, w_q, w_k, w_v):
    query, key, value = x @ w_q, x @ w_k, x @ w_v
    weights = torch.softmax(query @ key.transpose(-2, -1) / math.sqrt(w_k.shape[1]), dim=-1)
    return weights @ value, weights


def right_with_einsum(x, w_q, w_k, w_v):
    query, key, value = x @ w_q, x @ w_k, x @ w_v
    scores = torch.einsum("bid,bjd->bij", query, key) / query.shape[-1] ** 0.5
    weights = scores.softmax(-1)
    return torch.einsum("bij,bjd->bid", weights, value), weights


def not_scaled(x, w_q, w_k, w_v):
    query, key, value = x @ w_q, x @ w_k, x @ w_v
    weights = torch.softmax(query @ key.transpose(-2, -1), dim=-1)
    return weights @ value, weights


def divided_by_d_k(x, w_q, w_k, w_v):
    query, key, value = x @ w_q, x @ w_k, x @ w_v
    weights = torch.softmax(query @ key.transpose(-2, -1) / w_k.shape[1], dim=-1)
    return weights @ value, weights


def divided_by_sqrt_d_model(x, w_q, w_k, w_v):
    query, key, value = x @ w_q, x @ w_k, x @ w_v
    weights = torch.softmax(query @ key.transpose(-2, -1) / math.sqrt(x.shape[-1]), dim=-1)
    return weights @ value, weights


def softmax_over_queries(x, w_q, w_k, w_v):
    query, key, value = x @ w_q, x @ w_k, x @ w_v
    weights = torch.softmax(query @ key.transpose(-2, -1) / math.sqrt(w_k.shape[1]), dim=1)
    return weights @ value, weights


def keys_times_queries(x, w_q, w_k, w_v):
    query, key, value = x @ w_q, x @ w_k, x @ w_v
    weights = torch.softmax(key @ query.transpose(-2, -1) / math.sqrt(w_k.shape[1]), dim=-1)
    return weights @ value, weights


def naive_exp(x, w_q, w_k, w_v):
    query, key, value = x @ w_q, x @ w_k, x @ w_v
    exps = torch.exp(query @ key.transpose(-2, -1) / math.sqrt(w_k.shape[1]))
    weights = exps / exps.sum(dim=-1, keepdim=True)
    return weights @ value, weights


def mixes_inputs_not_values(x, w_q, w_k, w_v):
    _, weights = right_by_hand(x, w_q, w_k, w_v)
    return weights @ x, weights


def output_only(x, w_q, w_k, w_v):
    return right_by_hand(x, w_q, w_k, w_v)[0]


def unbatched_only(x, w_q, w_k, w_v):
    query, key, value = x @ w_q, x @ w_k, x @ w_v
    weights = torch.softmax(query @ key.t() / math.sqrt(w_k.shape[1]), dim=-1)  # .t() refuses 3-D
    return weights @ value, weights


@pytest.mark.parametrize("candidate", [right_with_package, right_by_hand, right_with_einsum])
def test_self_attention_checker_accepts_right_answers(candidate, capsys):
    assert checks.self_attention(candidate) is True
    assert "✔ self_attention: passes all 3 test cases." in capsys.readouterr().out


def test_self_attention_checker_accepts_torch_reference(capsys):
    def with_torch(x, w_q, w_k, w_v):
        output = F.scaled_dot_product_attention(x @ w_q, x @ w_k, x @ w_v)
        return output, right_by_hand(x, w_q, w_k, w_v)[1]

    assert checks.self_attention(with_torch) is True


@pytest.mark.parametrize(
    ("candidate", "message"),
    [
        (not_scaled, "not scaled: divide the scores Q K^T by sqrt(d_k)"),
        (divided_by_d_k, "divided by d_k; divide by sqrt(d_k) instead"),
        (divided_by_sqrt_d_model, "divided by sqrt(d_model)"),
        (softmax_over_queries, "the rows do not sum to 1, the columns do"),
        (keys_times_queries, "transposed: row i must hold query i's weights"),
        (naive_exp, "with exp written out, subtract each row's maximum first"),
        (
            mixes_inputs_not_values,
            "the output mixes the inputs x, not the values V = x @ w_v",
        ),
        (output_only, "expected a pair (output, weights), got Tensor"),
        (unbatched_only, "raised RuntimeError"),
    ],
)
def test_self_attention_checker_names_the_mistake(candidate, message, capsys):
    assert checks.self_attention(candidate) is False
    output = capsys.readouterr().out
    assert "✘ self_attention" in output
    assert message in output


def test_self_attention_checker_reports_wrong_output_shape(capsys):
    def output_transposed(x, w_q, w_k, w_v):
        output, weights = right_by_hand(x, w_q, w_k, w_v)
        return output.transpose(-2, -1), weights

    assert checks.self_attention(output_transposed) is False
    assert "output: expected shape (2, 5, 6), got (2, 6, 5)" in capsys.readouterr().out


def right_with_linear_layers(x, w_q, w_k, w_v):
    # a student who prefers nn.Linear: its weight is (out, in), float32
    layers = []
    for w in (w_q, w_k, w_v):
        layer = torch.nn.Linear(w.shape[0], w.shape[1], bias=False)
        with torch.no_grad():
            layer.weight.copy_(w.T)
        layers.append(layer)
    query, key, value = (layer(x) for layer in layers)
    weights = torch.softmax(query @ key.mT / math.sqrt(query.shape[-1]), dim=-1)
    return weights @ value, weights.detach()


def test_self_attention_checker_feeds_float32_so_nn_linear_works(capsys):
    for _, inputs in self_attention_cases():
        assert all(t.dtype == torch.float32 for t in inputs)
    assert checks.self_attention(right_with_linear_layers) is True
    assert "✔ self_attention" in capsys.readouterr().out


def scales_w_q_in_place(x, w_q, w_k, w_v):
    w_q /= math.sqrt(w_q.shape[1])  # right weights, but the caller's w_q has changed
    query, key, value = x @ w_q, x @ w_k, x @ w_v
    weights = torch.softmax(query @ key.mT, dim=-1)
    return weights @ value, weights


def test_self_attention_checker_catches_an_in_place_edit(capsys):
    assert checks.self_attention(scales_w_q_in_place) is False
    output = capsys.readouterr().out
    assert "the input `w_q` was modified in place: work on a copy" in output
    assert "weights: " not in output  # the weights themselves were right


def test_self_attention_large_case_has_scores_in_the_thousands():
    description, (x, w_q, w_k, w_v) = self_attention_cases()[2]
    assert "scores in the thousands" in description
    scores = (x @ w_q) @ (x @ w_k).mT / math.sqrt(w_k.shape[1])
    assert 1_000 <= scores.abs().median().item() < 10_000
    assert torch.isinf(torch.exp(scores)).any()  # why the case is there


# --- sinusoidal positional encoding ---


def right_interleaved(max_len, d_model):
    position = torch.arange(max_len).float().unsqueeze(1)
    angle = position / 10000 ** (torch.arange(0, d_model, 2).float() / d_model)
    table = torch.zeros(max_len, d_model)
    table[:, 0::2] = torch.sin(angle)
    table[:, 1::2] = torch.cos(angle)
    return table


def right_with_loops(max_len, d_model):
    table = torch.zeros(max_len, d_model)
    for pos in range(max_len):
        for i in range(d_model // 2):
            table[pos, 2 * i] = math.sin(pos / 10000 ** (2 * i / d_model))
            table[pos, 2 * i + 1] = math.cos(pos / 10000 ** (2 * i / d_model))
    return table


def right_from_package(max_len, d_model):
    return PositionalEncoding(d_model, max_len=max_len).pe


def sin_cos_swapped(max_len, d_model):
    return (
        right_interleaved(max_len, d_model).view(max_len, -1, 2).flip(-1).reshape(max_len, d_model)
    )


def halves(max_len, d_model):
    table = right_interleaved(max_len, d_model)
    return torch.cat([table[:, 0::2], table[:, 1::2]], dim=-1)


def exponent_from_dimension_index(max_len, d_model):
    position = torch.arange(max_len).float().unsqueeze(1)
    angle = position / 10000 ** (torch.arange(d_model).float() / d_model)
    table = torch.sin(angle)
    table[:, 1::2] = torch.cos(angle[:, 1::2])
    return table


def base_1000(max_len, d_model):
    position = torch.arange(max_len).float().unsqueeze(1)
    angle = position / 1000 ** (torch.arange(0, d_model, 2).float() / d_model)
    return torch.stack([torch.sin(angle), torch.cos(angle)], dim=-1).reshape(max_len, d_model)


def with_batch_axis(max_len, d_model):
    return right_interleaved(max_len, d_model).unsqueeze(0)


def positions_from_one(max_len, d_model):
    return right_interleaved(max_len + 1, d_model)[1:]


@pytest.mark.parametrize("candidate", [right_interleaved, right_with_loops, right_from_package])
def test_positional_encoding_checker_accepts_right_answers(candidate, capsys):
    assert checks.positional_encoding(candidate) is True
    assert "✔ positional_encoding: passes all 3 test cases." in capsys.readouterr().out


@pytest.mark.parametrize(
    ("candidate", "message"),
    [
        (sin_cos_swapped, "sin and cos swapped"),
        (halves, "sines in the first half, cosines in the second"),
        (exponent_from_dimension_index, "the exponent uses the dimension index j"),
        (base_1000, "max_len=50, d_model=16: values differ from the expected ones"),
        (with_batch_axis, "expected shape (50, 16), got (1, 50, 16)"),
        (positions_from_one, "values differ"),
    ],
)
def test_positional_encoding_checker_names_the_mistake(candidate, message, capsys):
    assert checks.positional_encoding(candidate) is False
    output = capsys.readouterr().out
    assert "✘ positional_encoding" in output
    assert message in output


# --- a self-attention module with a padding mask and dropout (exercise 4.2) ---


class RightMasked(torch.nn.Module):
    def __init__(self, d_model, d_k, dropout=0.0):
        super().__init__()
        self.w_q = torch.nn.Linear(d_model, d_k, bias=False)
        self.w_k = torch.nn.Linear(d_model, d_k, bias=False)
        self.w_v = torch.nn.Linear(d_model, d_k, bias=False)
        self.dropout = dropout

    def scores(self, x, lengths):
        query, key = self.w_q(x), self.w_k(x)
        scores = query @ key.mT / math.sqrt(query.shape[-1])
        padded = torch.arange(x.shape[1])[None, :] >= lengths[:, None]
        return scores, padded[:, None, :]

    def forward(self, x, lengths):
        scores, padded = self.scores(x, lengths)
        weights = torch.softmax(scores.masked_fill(padded, float("-inf")), dim=-1)
        weights = F.dropout(weights, self.dropout, training=self.training)
        return weights @ self.w_v(x), weights


class RightWithTorchMask(RightMasked):
    def forward(self, x, lengths):
        scores, padded = self.scores(x, lengths)
        scores = scores + torch.zeros_like(scores).masked_fill(padded, -torch.inf)
        weights = F.dropout(scores.softmax(-1), self.dropout, self.training)
        return weights @ self.w_v(x), weights


class NoMask(RightMasked):
    def forward(self, x, lengths):
        scores, _ = self.scores(x, lengths)
        weights = torch.softmax(scores, dim=-1)
        return weights @ self.w_v(x), weights


class ZeroFilled(RightMasked):
    def forward(self, x, lengths):
        scores, padded = self.scores(x, lengths)
        weights = torch.softmax(scores.masked_fill(padded, 0.0), dim=-1)
        return weights @ self.w_v(x), weights


class DropoutAlways(RightMasked):
    def forward(self, x, lengths):
        scores, padded = self.scores(x, lengths)
        weights = torch.softmax(scores.masked_fill(padded, float("-inf")), dim=-1)
        weights = F.dropout(weights, self.dropout, training=True)
        return weights @ self.w_v(x), weights


class DropoutNever(RightMasked):
    def forward(self, x, lengths):
        self.training = False
        return super().forward(x, lengths)


class NoLinearLayers(torch.nn.Module):
    def __init__(self, d_model, d_k, dropout=0.0):
        super().__init__()
        self.w = torch.nn.Parameter(torch.randn(d_model, d_k))


@pytest.mark.parametrize("candidate", [RightMasked, RightWithTorchMask])
def test_masked_self_attention_checker_accepts_right_answers(candidate, capsys):
    assert checks.masked_self_attention(candidate) is True
    assert "✔ masked_self_attention" in capsys.readouterr().out


@pytest.mark.parametrize(
    ("candidate", "message"),
    [
        (NoMask, "masked (padded) positions get weight"),
        (ZeroFilled, "masked (padded) positions get weight"),
        (DropoutAlways, "eval mode: weights"),
        (DropoutNever, "training mode: dropout p=0.5"),
        (NoLinearLayers, "the module needs w_q, w_k, w_v"),
    ],
)
def test_masked_self_attention_checker_names_the_mistake(candidate, message, capsys):
    assert checks.masked_self_attention(candidate) is False
    output = capsys.readouterr().out
    assert "✘ masked_self_attention" in output and message in output


# --- the chapter's interleaved rotary embedding, a reference for the half-split tests ---


def right_rope(x, positions):
    d = x.shape[-1]
    angle = positions[:, None] * 10000 ** (-torch.arange(0, d, 2) / d)
    even, odd = x[..., 0::2], x[..., 1::2]
    out = torch.empty_like(x)
    out[..., 0::2] = even * angle.cos() - odd * angle.sin()
    out[..., 1::2] = even * angle.sin() + odd * angle.cos()
    return out


# --- RoPE in LLaMA's half-split form (exercise 4.3) ---


def right_half_rotate(x, positions):
    # Hugging Face's LLaMA: x * cos + rotate_half(x) * sin, each angle used twice
    d = x.shape[-1]
    inverse_frequency = 1.0 / 10000 ** (torch.arange(0, d, 2).float() / d)
    angle = positions.float()[:, None] * inverse_frequency
    cos, sin = torch.cat([angle, angle], -1).cos(), torch.cat([angle, angle], -1).sin()
    first, second = x[..., : d // 2], x[..., d // 2 :]
    return x * cos + torch.cat([-second, first], dim=-1) * sin


def right_half_loops(x, positions):
    d = x.shape[-1]
    out = x.clone()
    for row, p in enumerate(positions.tolist()):
        for j in range(d // 2):
            angle = p * 10000 ** (-2 * j / d)
            a, b = x[..., row, j], x[..., row, j + d // 2]
            out[..., row, j] = a * math.cos(angle) - b * math.sin(angle)
            out[..., row, j + d // 2] = a * math.sin(angle) + b * math.cos(angle)
    return out


def half_interleaved(x, positions):  # the chapter's pairs (2j, 2j + 1)
    return right_rope(x, positions)


def half_wrong_way(x, positions):
    return right_half_rotate(x, -positions)


def half_repeat_interleave(x, positions):
    d = x.shape[-1]
    angle = positions.float()[:, None] * 10000 ** (-torch.arange(0, d, 2).float() / d)
    angle = angle.repeat_interleave(2, dim=-1)
    first, second = x[..., : d // 2], x[..., d // 2 :]
    return x * angle.cos() + torch.cat([-second, first], dim=-1) * angle.sin()


def half_exponent_j(x, positions):
    d = x.shape[-1]
    angle = positions.float()[:, None] * 10000 ** (-torch.arange(d // 2).float() / d)
    angle = torch.cat([angle, angle], -1)
    first, second = x[..., : d // 2], x[..., d // 2 :]
    return x * angle.cos() + torch.cat([-second, first], dim=-1) * angle.sin()


def half_positions_ignored(x, positions):  # every vector turned as if at position 0..n-1
    return right_half_rotate(x, torch.arange(x.shape[-2]))


@pytest.mark.parametrize("candidate", [right_half_rotate, right_half_loops])
def test_rope_half_checker_accepts_right_answers(candidate, capsys):
    assert checks.rope_half(candidate) is True
    assert "✔ rope_half: passes all 2 test cases." in capsys.readouterr().out


@pytest.mark.parametrize(
    ("candidate", "message"),
    [
        (half_interleaved, "pairs (2j, 2j + 1): that is the chapter's rope"),
        (half_wrong_way, "turned the wrong way"),
        (half_repeat_interleave, "must share one angle"),
        (half_exponent_j, "the exponent uses 2j, not j"),
        (half_positions_ignored, "values differ"),
    ],
)
def test_rope_half_checker_names_the_mistake(candidate, message, capsys):
    assert checks.rope_half(candidate) is False
    output = capsys.readouterr().out
    assert "✘ rope_half" in output
    assert message in output


def test_rope_half_hidden_test_draws_other_sizes(capsys):
    from grading import fresh_inputs

    def fitted_to_visible_sizes(x, positions):
        if tuple(x.shape) not in {(5, 8), (2, 3, 12)}:
            return torch.zeros_like(x)
        return right_half_rotate(x, positions)

    with fresh_inputs(321):
        assert checks.rope_half(right_half_rotate) is True
        assert checks.rope_half(fitted_to_visible_sizes) is False
    output = capsys.readouterr().out
    assert "(5, 8)" not in output


def test_half_split_rope_is_the_interleaved_one_up_to_a_permutation():
    # The claim of exercise 4.3(a), independently of any checker: with the dimensions reordered
    # (the even ones first, then the odd ones), LLaMA's form is the chapter's form, and the
    # scores q . k do not change.
    generator = torch.Generator().manual_seed(0)
    q, k = torch.randn(2, 7, 10, generator=generator)
    positions = torch.arange(7)
    order = torch.cat([torch.arange(0, 10, 2), torch.arange(1, 10, 2)])
    torch.testing.assert_close(
        right_half_rotate(q[..., order], positions), right_rope(q, positions)[..., order]
    )
    scores_half = (
        right_half_rotate(q[..., order], positions) @ right_half_rotate(k[..., order], positions).mT
    )
    scores_interleaved = right_rope(q, positions) @ right_rope(k, positions).mT
    torch.testing.assert_close(scores_half, scores_interleaved, atol=1e-5, rtol=0)


# --- the window of offsets (exercise 4.4 (b)): right answers and typical wrong ones ---


def right_window_by_offsets(n, width):
    offsets = torch.arange(n)[None, :] - torch.arange(n)[:, None]
    return offsets.abs() > width


def right_window_by_bands(n, width):
    inside = torch.ones(n, n, dtype=torch.bool).triu(-width).tril(width)
    return ~inside


def right_window_by_loops(n, width):
    mask = torch.zeros(n, n, dtype=torch.bool)
    for i in range(n):
        for j in range(n):
            mask[i, j] = abs(i - j) > width
    return mask


def window_inverted(n, width):
    return ~right_window_by_offsets(n, width)


def window_off_by_one(n, width):
    offsets = torch.arange(n)[None, :] - torch.arange(n)[:, None]
    return offsets.abs() >= width


def window_left_only(n, width):
    offsets = torch.arange(n)[None, :] - torch.arange(n)[:, None]
    return offsets < -width


def window_additive(n, width):
    return torch.zeros(n, n).masked_fill(right_window_by_offsets(n, width), float("-inf"))


def window_stub(n, width):
    return None


@pytest.mark.parametrize(
    "candidate", [right_window_by_offsets, right_window_by_bands, right_window_by_loops]
)
def test_window_mask_checker_accepts_right_answers(candidate, capsys):
    assert checks.window_mask(candidate) is True
    assert "✔ window_mask: passes all 3 test cases." in capsys.readouterr().out


@pytest.mark.parametrize(
    ("candidate", "message"),
    [
        (window_inverted, "polarity inverted"),
        (window_off_by_one, "use >, not >="),
        (window_left_only, "only the left side is cut"),
        (window_additive, "return a bool mask"),
        (window_stub, "returned None"),
    ],
)
def test_window_mask_checker_names_the_mistake(candidate, message, capsys):
    assert checks.window_mask(candidate) is False
    output = capsys.readouterr().out
    assert "✘ window_mask" in output
    assert message in output
