"""The chapter 5 checkers accept right answers and name each typical wrong one."""

import pytest
import torch
from grading import fresh_inputs

from attention_to_bert import checks
from attention_to_bert.masks import causal_mask as package_causal_mask
from attention_to_bert.multihead import MultiHeadAttention
from attention_to_bert.multihead import split_heads as package_split_heads

# --- split_heads ---


def right_split_heads(x, num_heads):
    batch, seq, d_model = x.shape
    return x.reshape(batch, seq, num_heads, d_model // num_heads).permute(0, 2, 1, 3)


def no_transpose(x, num_heads):
    batch, seq, d_model = x.shape
    return x.view(batch, seq, num_heads, d_model // num_heads)


def straight_reshape(x, num_heads):
    batch, seq, d_model = x.shape
    return x.reshape(batch, num_heads, seq, d_model // num_heads)


def strided_heads(x, num_heads):
    batch, seq, d_model = x.shape
    return x.view(batch, seq, d_model // num_heads, num_heads).permute(0, 3, 1, 2)


def heads_and_features_swapped(x, num_heads):
    batch, seq, d_model = x.shape
    return x.view(batch, seq, num_heads, d_model // num_heads).transpose(1, 3)


def crashes(x, num_heads):
    raise RuntimeError("shape '[2, 5, 4]' is invalid")


@pytest.mark.parametrize("solution", [right_split_heads, package_split_heads])
def test_split_heads_checker_accepts_right_answers(solution, capsys):
    assert checks.split_heads(solution) is True
    assert "passes all 4 test cases" in capsys.readouterr().out


@pytest.mark.parametrize(
    "wrong, message",
    [
        (no_transpose, "swap the seq and heads axes"),
        (straight_reshape, "mixes up positions"),
        (strided_heads, "every heads-th feature"),
        (heads_and_features_swapped, "expected shape"),
        (crashes, "raised RuntimeError"),
    ],
)
def test_split_heads_checker_names_typical_mistakes(wrong, message, capsys):
    assert checks.split_heads(wrong) is False
    output = capsys.readouterr().out
    assert "✘ split_heads" in output and message in output


# --- causal_mask ---


def right_causal_mask(size):
    positions = torch.arange(size)
    return positions[None, :] > positions[:, None]


def inverted(size):
    return torch.ones(size, size, dtype=torch.bool).tril()


def diagonal_masked(size):
    return torch.ones(size, size, dtype=torch.bool).triu()


def past_masked(size):
    return torch.ones(size, size, dtype=torch.bool).tril(diagonal=-1)


def additive_float(size):
    return torch.full((size, size), float("-inf")).triu(diagonal=1)


def integer_mask(size):
    return torch.ones(size, size, dtype=torch.long).triu(diagonal=1)


def wrong_shape(size):
    return torch.ones(size, dtype=torch.bool)


def nothing_masked(size):
    return torch.zeros(size, size, dtype=torch.bool)


@pytest.mark.parametrize("solution", [right_causal_mask, package_causal_mask])
def test_causal_mask_checker_accepts_right_answers(solution, capsys):
    assert checks.causal_mask(solution) is True
    assert "passes all 3 test cases" in capsys.readouterr().out


@pytest.mark.parametrize(
    "wrong, message",
    [
        (inverted, "polarity inverted"),
        (diagonal_masked, "the diagonal is masked too"),
        (past_masked, "the past is masked instead of the future"),
        (additive_float, "dtype torch.float32; return a bool mask"),
        (integer_mask, "dtype torch.int64"),
        (wrong_shape, "expected shape (4, 4)"),
        (nothing_masked, "True must mark j > i"),
    ],
)
def test_causal_mask_checker_names_typical_mistakes(wrong, message, capsys):
    assert checks.causal_mask(wrong) is False
    output = capsys.readouterr().out
    assert "✘ causal_mask" in output and message in output


def test_causal_mask_checker_names_a_masked_diagonal_at_size_1(capsys):
    assert checks.causal_mask(diagonal_masked) is False
    output = capsys.readouterr().out
    assert "size=1" in output and "the only entry, the diagonal, must be False" in output
    assert "values differ" not in output


# --- multi_head_attention ---


def right_multi_head(query, key, value, params, num_heads, key_padding_mask, attn_mask, **wrong):
    batch, m, d_model = query.shape
    d_k = d_model // num_heads

    def project(x, name):
        y = x @ params[f"W_{name}"] + params[f"b_{name}"]
        if wrong.get("reshape"):
            return y.reshape(batch, num_heads, x.shape[1], d_k)
        return y.view(batch, x.shape[1], num_heads, d_k).transpose(1, 2)

    q, k, v = project(query, "q"), project(key, "k"), project(value, "v")
    scale = 1.0 if wrong.get("unscaled") else d_model**0.5 if wrong.get("by_d_model") else d_k**0.5
    scores = q @ k.transpose(-2, -1) / scale
    if key_padding_mask is not None and not wrong.get("no_padding"):
        padding = key_padding_mask[:, None, :, None] if wrong.get("rows") else key_padding_mask
        padding = padding if wrong.get("rows") else padding[:, None, None, :]
        if wrong.get("inverted"):
            padding = ~padding
        scores = scores.masked_fill(padding, float("-inf"))
    if attn_mask is not None:
        attn = ~attn_mask if wrong.get("inverted") else attn_mask
        scores = scores.masked_fill(attn, float("-inf"))
    weights = torch.softmax(scores, dim=-2 if wrong.get("dim") else -1)
    heads = weights @ v
    merged = (heads if wrong.get("no_back") else heads.transpose(1, 2)).reshape(batch, m, d_model)
    return merged @ params["W_o"] + params["b_o"], weights


def package_multi_head(query, key, value, params, num_heads, key_padding_mask, attn_mask):
    d_model = query.shape[-1]
    layer = MultiHeadAttention(d_model, num_heads)
    with torch.no_grad():
        for name in "qkvo":
            projection = getattr(layer, f"{name}_proj" if name != "o" else "out_proj")
            projection.weight.copy_(params[f"W_{name}"].T)
            projection.bias.copy_(params[f"b_{name}"])
    return layer(query, key, value, key_padding_mask=key_padding_mask, attn_mask=attn_mask)


def in_place(query, key, value, params, num_heads, key_padding_mask, attn_mask):
    params["W_q"] /= 1.0 + 0.0 * params["W_q"].sum()  # harmless value, but writes into the input
    query.mul_(1.0)
    query[0, 0, 0] += 1.0
    query[0, 0, 0] -= 1.0 - 1e-3
    return right_multi_head(query, key, value, params, num_heads, key_padding_mask, attn_mask)


@pytest.mark.parametrize("solution", [right_multi_head, package_multi_head])
def test_multi_head_checker_accepts_right_answers(solution, capsys):
    assert checks.multi_head_attention(solution) is True
    assert "passes all 4 test cases" in capsys.readouterr().out


@pytest.mark.parametrize(
    "wrong, message",
    [
        ({"unscaled": True}, "the scores are not scaled"),
        ({"by_d_model": True}, "divided by sqrt(d_model)"),
        ({"inverted": True}, "mask polarity inverted"),
        ({"no_padding": True}, "the key_padding_mask is not applied"),
        ({"rows": True}, "hides queries (rows)"),
        ({"dim": True}, "the softmax is taken over the queries"),
        ({"reshape": True}, "a direct reshape"),
        ({"no_back": True}, "without moving the head axis back"),
    ],
)
def test_multi_head_checker_names_typical_mistakes(wrong, message, capsys):
    def candidate(*args):
        return right_multi_head(*args, **wrong)

    assert checks.multi_head_attention(candidate) is False
    output = capsys.readouterr().out
    assert "✘ multi_head_attention" in output and message in output


def no_attn_mask(query, key, value, params, num_heads, key_padding_mask, attn_mask):
    return right_multi_head(query, key, value, params, num_heads, key_padding_mask, None)


def no_output_projection(query, key, value, params, num_heads, key_padding_mask, attn_mask):
    output, weights = right_multi_head(
        query, key, value, params, num_heads, key_padding_mask, attn_mask
    )
    return (output - params["b_o"]) @ torch.linalg.inv(params["W_o"]), weights


def no_biases(query, key, value, params, num_heads, key_padding_mask, attn_mask):
    zero = {name: torch.zeros_like(t) if name.startswith("b") else t for name, t in params.items()}
    return right_multi_head(query, key, value, zero, num_heads, key_padding_mask, attn_mask)


def transposed(query, key, value, params, num_heads, key_padding_mask, attn_mask):
    flipped = {name: t.T if name.startswith("W") else t for name, t in params.items()}
    return right_multi_head(query, key, value, flipped, num_heads, key_padding_mask, attn_mask)


def stub(query, key, value, params, num_heads, key_padding_mask, attn_mask):
    return None


def output_only(query, key, value, params, num_heads, key_padding_mask, attn_mask):
    return right_multi_head(query, key, value, params, num_heads, key_padding_mask, attn_mask)[0]


@pytest.mark.parametrize(
    "wrong, message",
    [
        (no_attn_mask, "the attn_mask is not applied"),
        (no_output_projection, "the output projection (@ W_o + b_o) is missing"),
        (no_biases, "the biases b_q, b_k, b_v, b_o are missing"),
        (transposed, "the weights are used transposed"),
        (in_place, "the input `query` was modified in place"),
        (stub, "returned None"),
        (output_only, "expected a pair (output, weights)"),
    ],
)
def test_multi_head_checker_names_other_mistakes(wrong, message, capsys):
    assert checks.multi_head_attention(wrong) is False
    output = capsys.readouterr().out
    assert "✘ multi_head_attention" in output and message in output


def test_multi_head_checker_catches_params_edited_in_place(capsys):
    def scales_params(query, key, value, params, num_heads, key_padding_mask, attn_mask):
        params["W_o"] *= 2.0
        return right_multi_head(query, key, value, params, num_heads, key_padding_mask, attn_mask)

    assert checks.multi_head_attention(scales_params) is False
    assert "the input `params` was modified in place" in capsys.readouterr().out


# --- grouped_query_attention, kv_cache_bytes, cached_decoding ---


def right_grouped(q, k, v, attn_mask=None):
    per_group = q.shape[1] // k.shape[1]
    k, v = k.repeat_interleave(per_group, 1), v.repeat_interleave(per_group, 1)
    scores = q @ k.transpose(-2, -1) / q.shape[-1] ** 0.5
    if attn_mask is not None:
        scores = scores.masked_fill(attn_mask, float("-inf"))
    weights = torch.softmax(scores, dim=-1)
    return weights @ v, weights


def tiled_groups(q, k, v, attn_mask=None):
    per_group = q.shape[1] // k.shape[1]
    return right_grouped(q, k.repeat(1, per_group, 1, 1), v.repeat(1, per_group, 1, 1), attn_mask)


def unscaled_grouped(q, k, v, attn_mask=None):
    return right_grouped(q * q.shape[-1] ** 0.5, k, v, attn_mask)


def test_grouped_query_attention_checker_accepts_a_right_answer(capsys):
    assert checks.grouped_query_attention(right_grouped) is True
    assert "passes all 4 test cases" in capsys.readouterr().out


@pytest.mark.parametrize(
    "wrong, message",
    [
        (tiled_groups, "repeat_interleave"),
        (unscaled_grouped, "not scaled"),
        (lambda q, k, v, m: None, "returned None"),
    ],
)
def test_grouped_query_attention_checker_names_typical_mistakes(wrong, message, capsys):
    assert checks.grouped_query_attention(wrong) is False
    assert message in capsys.readouterr().out


def test_kv_cache_bytes_checker(capsys):
    assert checks.kv_cache_bytes(lambda L, g, d, t, b: 2 * L * g * d * t * b) is True
    assert checks.kv_cache_bytes(lambda L, g, d, t, b: L * g * d * t * b) is False
    assert "keys *and* values" in capsys.readouterr().out
    assert checks.kv_cache_bytes(lambda L, g, d, t, b: 2 * L * g * d * t) is False
    assert "bytes_per_number" in capsys.readouterr().out


def cached_stack(layers, x):
    caches = [([], []) for _ in layers]
    outputs = []
    for t in range(x.shape[1]):
        h = x[:, t : t + 1]
        for layer, (keys, values) in zip(layers, caches, strict=True):
            keys.append(package_split_heads(layer.k_proj(h), layer.num_heads))
            values.append(package_split_heads(layer.v_proj(h), layer.num_heads))
            q = package_split_heads(layer.q_proj(h), layer.num_heads)
            k, v = torch.cat(keys, dim=2), torch.cat(values, dim=2)
            weights = torch.softmax(q @ k.transpose(-2, -1) / layer.head_dim**0.5, dim=-1)
            merged = (weights @ v).transpose(1, 2).flatten(2)
            h = h + layer.out_proj(merged)
        outputs.append(h)
    return torch.cat(outputs, dim=1)


def recomputed_stack(layers, x):
    outputs = []
    for t in range(x.shape[1]):
        h = x[:, : t + 1]
        for layer in layers:
            h = h + layer(h, h, h, attn_mask=package_causal_mask(t + 1))[0]
        outputs.append(h[:, -1:])
    return torch.cat(outputs, dim=1)


def no_residual_stack(layers, x):
    h = x
    for layer in layers:
        h = layer(h, h, h, attn_mask=package_causal_mask(x.shape[1]))[0]
    return h


def test_cached_decoding_checker_accepts_a_cache_per_layer(capsys):
    assert checks.cached_decoding(cached_stack) is True
    assert "passes all 3 test cases" in capsys.readouterr().out


@pytest.mark.parametrize(
    "wrong, message",
    [
        (recomputed_stack, "project only the newest position"),
        (no_residual_stack, "the residual is missing"),
        (lambda layers, x: None, "returned None"),
    ],
)
def test_cached_decoding_checker_names_typical_mistakes(wrong, message, capsys):
    assert checks.cached_decoding(wrong) is False
    assert message in capsys.readouterr().out


# --- head_importance (exercise 5.7) ---


def _importance_by_hook(attention, x, loss_fn):
    """An independent right answer: a gate on out_proj's input, one value per head's block of
    columns, through the package's own forward."""
    gates = torch.ones(attention.num_heads, requires_grad=True)

    def gate(module, inputs):
        return (inputs[0] * gates.repeat_interleave(attention.head_dim),)

    handle = attention.out_proj.register_forward_pre_hook(gate)
    try:
        output, _ = attention(x, x, x)
    finally:
        handle.remove()
    (gradient,) = torch.autograd.grad(loss_fn(output), gates)
    return gradient.abs()


def test_head_importance_accepts_a_right_answer_on_visible_and_hidden_cases(capsys):
    assert checks.head_importance(_importance_by_hook) is True
    with fresh_inputs(31337):
        assert checks.head_importance(_importance_by_hook) is True
    assert "✔ head_importance" in capsys.readouterr().out


def test_head_importance_names_the_signed_gradient(capsys):
    def signed(attention, x, loss_fn):
        gates = torch.ones(attention.num_heads, requires_grad=True)
        handle = attention.out_proj.register_forward_pre_hook(
            lambda m, i: (i[0] * gates.repeat_interleave(attention.head_dim),)
        )
        output, _ = attention(x, x, x)
        handle.remove()
        return torch.autograd.grad(loss_fn(output), gates)[0]

    assert checks.head_importance(signed) is False
    assert "the sign is kept" in capsys.readouterr().out


def test_head_importance_names_the_ablation(capsys):
    def ablation(attention, x, loss_fn):
        scores = []
        with torch.no_grad():
            full = loss_fn(attention(x, x, x)[0])
            for h in range(attention.num_heads):
                keep = torch.ones(attention.num_heads)
                keep[h] = 0
                handle = attention.out_proj.register_forward_pre_hook(
                    lambda m, i, keep=keep: (i[0] * keep.repeat_interleave(attention.head_dim),)
                )
                scores.append((full - loss_fn(attention(x, x, x)[0])).abs())
                handle.remove()
        return torch.stack(scores)

    assert checks.head_importance(ablation) is False
    assert "switched off" in capsys.readouterr().out


def test_head_importance_catches_a_per_example_score_and_a_stub(capsys):
    def per_example(attention, x, loss_fn):
        return _importance_by_hook(attention, x, loss_fn).expand(x.shape[0], -1)

    assert checks.head_importance(per_example) is False
    assert checks.head_importance(lambda attention, x, loss_fn: None) is False
    assert "returned None" in capsys.readouterr().out


# --- multi_head_cross_attention ---


def right_cross(query, memory, params, num_heads, mask, **wrong):
    batch, m, d_model = query.shape
    d_k = d_model // num_heads

    def project(x, name):
        y = x @ params[f"W_{name}"] + params[f"b_{name}"]
        return y.view(batch, x.shape[1], num_heads, d_k).transpose(1, 2)

    q, k, v = project(query, "q"), project(memory, "k"), project(memory, "v")
    scale = 1.0 if wrong.get("unscaled") else d_k**0.5
    scores = q @ k.transpose(-2, -1) / scale
    if not wrong.get("no_mask"):
        blocked = ~mask if wrong.get("inverted") else mask
        scores = scores.masked_fill(blocked[:, None], torch.finfo(scores.dtype).min)
    weights = torch.softmax(scores, dim=-2 if wrong.get("dim") else -1)
    heads = (weights @ v).transpose(1, 2).reshape(batch, m, d_model)
    if wrong.get("no_out_proj"):
        return heads, weights
    return heads @ params["W_o"] + params["b_o"], weights


def package_cross(query, memory, params, num_heads, mask):
    layer = MultiHeadAttention(query.shape[-1], num_heads)
    with torch.no_grad():
        for name in "qkvo":
            projection = getattr(layer, f"{name}_proj" if name != "o" else "out_proj")
            projection.weight.copy_(params[f"W_{name}"].T)
            projection.bias.copy_(params[f"b_{name}"])
    return layer(query, memory, memory, attn_mask=mask)


@pytest.mark.parametrize("solution", [right_cross, package_cross])
def test_cross_attention_checker_accepts_right_answers(solution, capsys):
    assert checks.multi_head_cross_attention(solution) is True
    assert "passes all 4 test cases" in capsys.readouterr().out


@pytest.mark.parametrize(
    "wrong, message",
    [
        ({"unscaled": True}, "the scores are not scaled"),
        ({"no_mask": True}, "the mask is not applied"),
        ({"inverted": True}, "mask polarity inverted"),
        ({"dim": True}, "the softmax is taken over the queries"),
        ({"no_out_proj": True}, "the output projection (@ W_o + b_o) is missing"),
    ],
)
def test_cross_attention_checker_names_typical_mistakes(wrong, message, capsys):
    def candidate(*args):
        return right_cross(*args, **wrong)

    assert checks.multi_head_cross_attention(candidate) is False
    output = capsys.readouterr().out
    assert "✘ multi_head_cross_attention" in output and message in output


def test_cross_attention_checker_rejects_a_mask_shared_by_the_sequences(capsys):
    def first_sequence_mask(query, memory, params, num_heads, mask):
        return right_cross(query, memory, params, num_heads, mask[:1].expand_as(mask))

    def stub(query, memory, params, num_heads, mask): ...

    assert checks.multi_head_cross_attention(first_sequence_mask) is False
    assert "masked keys get weight" in capsys.readouterr().out
    assert checks.multi_head_cross_attention(stub) is False
    assert "returned None" in capsys.readouterr().out
